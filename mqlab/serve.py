"""``python -m mqlab serve``: a name server and brokers on real sockets, for real clients.

Mirrors ``NamesrvStartup`` and ``BrokerStartup`` (namesrv, broker; RocketMQ 4.9.3): build
the configs (command line over ``broker.properties`` over defaults), start a name server
and N brokers on the asyncio driver (``mqlab.runtime.net``), and on SIGINT/SIGTERM shut
them down gracefully (``BrokerController#shutdown``: consumer offsets, topics and
subscription groups persisted, delay offsets persisted, the store flushed).

Layout and ports:

* the name server listens on ``--namesrv-port`` (9876); broker ``i`` (0-based) is named
  ``broker-a``, ``broker-b``, … and listens on ``--broker-port + 10*i`` (10911, 10921, …);
  port 0 lets the OS choose (tests use it; the printed lines give the real ports);
* broker ``i`` keeps its files under ``<store>/<broker name>/`` (``commitlog/``,
  ``consumequeue/``, ``config/topics.json``, ``config/consumerOffset.json``, …). Without
  ``--store`` a fresh temp dir is used and printed; pass it back to restart on it;
* broker groups (``--slaves N``, 0 to 2): each broker name gets a master (brokerId 0, its
  ``--broker-role`` ASYNC_MASTER or SYNC_MASTER, node ``broker-a``) and N slaves (brokerId
  1 and 2, role SLAVE, nodes ``broker-a-s1``, ``broker-a-s2``), as ``Lab(slaves=N)`` builds
  them: slave ``j`` listens on the master's port + ``1000*j`` (11911, 12911), each node's HA
  service on its own port + 1 (``haListenPort = listenPort + 1``, BrokerStartup), each node's
  files under ``<store>/<node>/``. The slaves learn the master's HA address from their
  registration (``RegisterBrokerResult#haServerAddr``, mechanisms.md "The slave as a broker");
* one broker of a group on its own: ``--broker-role SLAVE --broker-id 1`` (a slave; its
  master's HA address from ``--ha-master-address`` or from the name server it registers
  with, ``--namesrv-addr`` to join another process's name server, which then runs none
  here). The role and brokerId checks are BrokerStartup's (a SLAVE needs brokerId > 0;
  where 4.9.3 silently makes a master's brokerId 0, ``serve`` refuses another one);
* only 127.0.0.1 unless ``--host`` says otherwise, the HA ports too. Brokers advertise (register, and stamp
  on stored messages) ``brokerIP1`` from ``--config`` if given, else the ``--host``
  address, or for a wildcard (``0.0.0.0``) this host's outgoing address. Another address
  with ``aclEnable=false`` (4.9.3's default) logs a warning: anyone who reaches the ports
  may then send, consume and change the brokers' topics, groups, offsets and config; a
  name server there gets one in any case (it has no ACL, in 4.9.3 neither);
* ACL: ``aclEnable=true`` (``--config`` or ``properties``) turns on 4.9.3's plain ACL
  (``mqlab.acl``); the brokers read ``<home>/conf/plain_acl.yml`` and ``<home>/conf/acl/``,
  ``<home>`` being ``--rocketmq-home``, else the env ``ROCKETMQ_HOME``, as a 4.9.3 broker
  reads ``rocketmq.home.dir``, else ``ROCKETMQ_HOME`` (never the config's ``rocketmqHome``).

* DLedger mode (``--dledger-peers`` or ``--dledger-nodes``): no name server and no broker,
  only DLedger 0.2.3 nodes (``mqlab.dledger``, as DLedger's own ``DLedger`` main runs one),
  each listening on its address in the peers. ``--dledger-peers`` takes 4.9.3's
  ``dLegerPeers`` string, ``--dledger-self-id`` (``dLegerSelfId``) the one node run here, or
  without it every node of the peers runs in this process; ``--dledger-group``
  (``dLegerGroup``, default ``default``) names the group. ``--dledger-nodes N`` builds the
  peers ``n0``... on ``--host`` ports ``--dledger-port + i`` (40911...). With ``--store DIR``
  (``storeBaseDir``) each node keeps its log in 0.2.3's files under ``DIR/dledger-<selfId>/``
  and recovers from them when it starts again; without it the log is held in memory. The
  broker flags do not go with this mode.

* a DLedger broker group (``--dledger-brokers N``, 1-9): a name server and N brokers of one
  brokerName (``brokerName`` from ``--config``, else ``broker-a``) on ``DLedgerCommitLog``,
  as 4.9.3's ``conf/dledger/broker-n<i>.conf`` set them up: node ``i`` is ``<name>-n<i>``
  with ``enableDLegerCommitLog=true``, ``dLegerGroup=<name>``, ``dLegerSelfId=n<i>`` and
  ``dLegerPeers=n0-<host>:P0;...`` (``P_i = --dledger-port + i``, 40911...; 0: the OS picks),
  its broker on ``--broker-port + 10*i``, its files under ``<store>/<node>/``. Each starts
  with brokerId -1 (``BrokerStartup``); ``DLedgerRoleChangeHandler`` makes the elected
  leader's broker the master (brokerId 0) and each follower a SLAVE (brokerId ``i + 1``),
  each registering then. A ``--config`` with ``enableDLegerCommitLog=true`` and its own
  ``dLegerPeers``/``dLegerSelfId`` runs that one node of a group here (the others elsewhere).
  Each node keeps its DLedger log in 0.2.3's files under ``<store>/<node>/dledger-n<i>/``
  (``data/``, ``index/``, ``checkpoint``, ``currterm``), written through as it changes, and
  recovers from them when it starts (``DLedgerMmapFileStore#recover``): a node killed and
  restarted (``restart_broker``), or a new ``serve`` on the same ``--store`` and ports,
  comes back with its entries.

Live-only services the simulation does not need: ``FlushRealTimeService.run`` (every
``flushIntervalCommitLog`` = 500 ms: a pass of the flush services, which force the commit
log and consume queues to disk with ``msync``, see
``DefaultMessageStore.run_flush_services``; the store files are memory-mapped, so every
acknowledged message is in the OS page cache already and a killed server loses none of
them in either flush mode — only an OS crash or power cut loses what the last force did
not cover) and the trace sink (``--trace FILE``: one JSON line per event, flushed every
200 ms). ``--delay-levels`` replaces ``messageDelayLevel`` (units s/m/h/d), e.g.
``"1s 1s 2s"`` makes the first retry (level 3) come back after 2 s.

Resource limits: ``--write-buffer-high-water-mark BYTES`` (default 16 MiB, 0 = none)
closes a connection whose peer does not read its responses once that many bytes wait in
its write buffer (``mqlab.runtime.net``), so a client that floods requests and never
reads cannot make the server buffer without bound; every other connection is served on.
Idle connections cost a file descriptor each: ``serve`` raises its soft ``RLIMIT_NOFILE``
to the hard limit at start (as RocketMQ's start scripts ask for ``ulimit -n 655350``).

This module assembles and runs; it owns no protocol logic.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import socket
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mqlab.broker.broker_configuration import NettyClientConfig
from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig, parse_properties
from mqlab.dledger.dledger_config import DLedgerConfig, parse_peers
from mqlab.dledger.dledger_server import DLedgerServer
from mqlab.dledger.net_group import NetDLedgerNodes, loopback_peers
from mqlab.namesrv.configuration import NettyServerConfig
from mqlab.namesrv.namesrv_controller import NamesrvConfig, NamesrvController
from mqlab.runtime.file_sync import FileSyncer
from mqlab.runtime.net import (
    LOOPS,
    WRITE_BUFFER_HIGH_WATER_MARK,
    LoopThread,
    NetDriver,
    bind_broker_socket,
    bind_socket,
    local_ip,
    loop_name,
    run_until_signalled,
    wait_for,
)
from mqlab.store.config import MessageStoreConfig
from mqlab.store.dledger_commit_log import dledger_config_from
from mqlab.trace.events import TraceEvent, TraceLevel

__all__ = [
    "ServeConfig", "MqlabServer", "ServerThread", "check_group_flags", "check_dledger_flags",
    "check_dledger_broker_flags",
    "exposure_warning",
    "load_properties", "main",
]  # fmt: skip

log = logging.getLogger(__name__)

FLUSH_TIMER = "FlushRealTimeService.run"
#: ``--dledger-port``: the first node's DLedger port in ``--dledger-nodes`` mode (as
#: ``mqlab.dledger.group``'s simulated groups number theirs).
DLEDGER_PORT = 40911
TRACE_FLUSH_TIMER = "TraceSink.flush"
TRACE_FLUSH_MS = 200


@dataclass(slots=True)
class ServeConfig:
    """What ``python -m mqlab serve`` takes on its command line.

    ``broker_port`` None means: ``listenPort`` from ``config`` if it has one, else 10911.
    """

    host: str = "127.0.0.1"
    namesrv_port: int = 9876
    broker_port: int | None = None
    brokers: int = 1
    store: str | None = None
    config: str | None = None
    delay_levels: str | None = None
    trace: str | None = None
    trace_level: str = "steps"
    run_id: str = "serve"
    #: close a connection with more than this many unread response bytes buffered (0 = no limit)
    write_buffer_high_water_mark: int = WRITE_BUFFER_HIGH_WATER_MARK
    #: extra ``broker.properties`` keys applied after the file (tests, notebooks).
    properties: dict[str, str] = field(default_factory=dict)
    #: ``brokerRole`` of the brokers started (the masters with ``slaves``); None: the
    #: config file's, else ASYNC_MASTER.
    broker_role: str | None = None
    #: ``brokerId``; None: the config file's, else 0 (a SLAVE needs one > 0).
    broker_id: int | None = None
    #: a SLAVE's ``haMasterAddress`` (``ip:port`` of its master's HA service); None: the
    #: config file's, else the address its registration result carries.
    ha_master_address: str | None = None
    #: slaves per broker name (0-2), started with their masters in this process.
    slaves: int = 0
    #: register with this name server (``ip:port``) and run none here.
    namesrv_addr: str | None = None
    #: where the brokers' ACL files are, ``<dir>/conf/plain_acl.yml`` and ``<dir>/conf/acl/``
    #: (Java's ``rocketmq.home.dir``); None: the env ``ROCKETMQ_HOME``. Read only with
    #: ``aclEnable=true`` (``properties={"aclEnable": "true"}`` or in ``broker.properties``).
    rocketmq_home: str | None = None
    #: DLedger mode (no name server, no broker): the Raft group's name (4.9.3's
    #: ``dLegerGroup``; DLedgerConfig's default ``default``).
    dledger_group: str | None = None
    #: DLedger mode: every node of the group, ``n0-127.0.0.1:40911;n1-127.0.0.1:40912``
    #: (``dLegerPeers``); the nodes run here listen on their own address in it.
    dledger_peers: str | None = None
    #: DLedger mode: the one node of ``dledger_peers`` run here (``dLegerSelfId``); None:
    #: every node of the group, in this process.
    dledger_self_id: str | None = None
    #: DLedger mode without ``dledger_peers``: a group of this many nodes ``n0``, ``n1``...,
    #: all here, on ``host`` ports ``dledger_port + i`` (0: ports the OS picks).
    dledger_nodes: int = 0
    dledger_port: int = DLEDGER_PORT
    #: the event loop: ``asyncio`` (the tested default), ``uvloop`` (the uvloop extra) or
    #: ``auto`` (uvloop when installed); see ``mqlab.runtime.net.new_event_loop``.
    loop: str = "asyncio"
    #: a DLedger broker group: a name server and this many brokers of one brokerName on
    #: ``DLedgerCommitLog`` (0: none), DLedger node ``n<i>`` on ``dledger_port + i``.
    dledger_brokers: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.brokers <= 26:
            raise ValueError(f"brokers must be between 1 and 26, got {self.brokers}")
        check_group_flags(self)
        check_dledger_flags(self)
        check_dledger_broker_flags(self)
        for name in ("namesrv_port", "broker_port", "dledger_port"):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= 65535:
                raise ValueError(f"{name} must be a TCP port (0-65535), got {v}")
        if self.write_buffer_high_water_mark < 0:
            raise ValueError(
                "write_buffer_high_water_mark must be >= 0 (0 = no limit), "
                f"got {self.write_buffer_high_water_mark}"
            )
        if self.loop not in LOOPS:
            raise ValueError(f"loop must be one of {', '.join(LOOPS)}, got {self.loop!r}")
        if self.trace_level.upper() not in TraceLevel.__members__:
            raise ValueError(
                f"trace_level must be one of {[m.lower() for m in TraceLevel.__members__]}, "
                f"got {self.trace_level!r}"
            )


BROKER_ROLES = ("ASYNC_MASTER", "SYNC_MASTER", "SLAVE")
MAX_SLAVES = 2
#: A slave's listen port is its master's plus this times its brokerId (as ``Lab``).
SLAVE_PORT_STEP = 1000


def _check_addr(name: str, addr: str) -> None:
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) <= 65535:
        raise ValueError(f"{name} must be host:port (e.g. 127.0.0.1:10912), got {addr!r}")


def check_group_flags(cfg: ServeConfig) -> None:
    """The role, brokerId and group flags, checked together before anything binds.

    Mirrors the checks of ``BrokerStartup#createBrokerController`` (4.9.3): a SLAVE's
    ``brokerId`` must be > 0 ("Slave's brokerId must be > 0", exit -3). Where 4.9.3 sets a
    master's ``brokerId`` to 0 whatever was given, this refuses another one.

    Raises:
        ValueError: which flags do not go together, and why.
    """
    role = cfg.broker_role
    if role is not None and role not in BROKER_ROLES:
        raise ValueError(f"broker_role must be one of {list(BROKER_ROLES)}, got {role!r}")
    if isinstance(cfg.slaves, bool) or not 0 <= cfg.slaves <= MAX_SLAVES:
        raise ValueError(f"slaves must be between 0 and {MAX_SLAVES}, got {cfg.slaves!r}")
    if cfg.broker_id is not None and cfg.broker_id < 0:
        raise ValueError(f"broker_id must be >= 0, got {cfg.broker_id}")
    if role == "SLAVE" and cfg.broker_id == 0:
        raise ValueError(
            "a SLAVE's brokerId must be > 0 (BrokerStartup: \"Slave's brokerId must be > 0\"); "
            "brokerId 0 is the master: pass --broker-id 1 or 2"
        )
    if role in ("ASYNC_MASTER", "SYNC_MASTER") and cfg.broker_id not in (None, 0):
        raise ValueError(
            f"a master's brokerId is 0 (BrokerStartup sets it so), got --broker-id "
            f"{cfg.broker_id} with {role}: leave --broker-id out, or use --broker-role SLAVE"
        )
    if cfg.slaves:
        if role == "SLAVE":
            raise ValueError(
                "--slaves starts a master and its slaves: the master's --broker-role is "
                "ASYNC_MASTER or SYNC_MASTER, not SLAVE"
            )
        if cfg.broker_id not in (None, 0):
            raise ValueError(
                f"--slaves gives the master brokerId 0 and its slaves 1..{cfg.slaves}: "
                f"leave --broker-id out (got {cfg.broker_id})"
            )
        if cfg.ha_master_address is not None:
            raise ValueError(
                "--ha-master-address is for a lone SLAVE; the slaves of --slaves learn "
                "their master's HA address from their registration"
            )
    if cfg.ha_master_address is not None:
        _check_addr("ha_master_address", cfg.ha_master_address)
        if role in ("ASYNC_MASTER", "SYNC_MASTER"):
            raise ValueError(
                f"--ha-master-address is where a SLAVE replicates from; a {role} has none"
            )
        if cfg.brokers > 1:
            raise ValueError(
                f"--ha-master-address names one master: it cannot go with --brokers {cfg.brokers}"
            )
    if cfg.namesrv_addr is not None:
        _check_addr("namesrv_addr", cfg.namesrv_addr)


def check_dledger_broker_flags(cfg: ServeConfig) -> None:
    """``--dledger-brokers``: a count of 1-9, one brokerName whose roles DLedger decides.

    Raises:
        ValueError: which flags do not go with it, and why.
    """
    n = cfg.dledger_brokers
    if isinstance(n, bool) or not 0 <= n <= 9:
        raise ValueError(f"dledger_brokers must be between 0 and 9, got {n!r}")
    if not n:
        return
    given = [flag for flag, on in (
        ("--brokers", cfg.brokers != 1), ("--slaves", cfg.slaves != 0),
        ("--broker-role", cfg.broker_role is not None), ("--broker-id", cfg.broker_id is not None),
        ("--ha-master-address", cfg.ha_master_address is not None),
        ("--dledger-peers", cfg.dledger_peers is not None), ("--dledger-nodes", cfg.dledger_nodes != 0),
    ) if on]  # fmt: skip
    if given:
        raise ValueError(
            f"--dledger-brokers runs one brokerName whose master DLedger elects (brokerId 0 "
            f"for the leader, i + 1 for follower n<i>): {', '.join(given)} cannot go with it"
        )


def dledger_mode(cfg: ServeConfig) -> bool:
    """Whether ``cfg`` asks for DLedger nodes (and no name server or broker)."""
    return cfg.dledger_peers is not None or cfg.dledger_nodes > 0


def check_dledger_flags(cfg: ServeConfig) -> None:
    """The DLedger flags, checked together before anything binds.

    ``--dledger-peers`` names the group (``dLegerPeers``, parsed as ``MemberState`` does);
    ``--dledger-self-id`` one of its nodes, or none for all of them; ``--dledger-nodes N``
    builds the peers instead. The broker flags do not go with them: this mode runs DLedger
    nodes only, as DLedger 0.2.3's own ``DLedger`` main does.

    Raises:
        ValueError: which flags do not go together, and why.
    """
    if isinstance(cfg.dledger_nodes, bool) or not 0 <= cfg.dledger_nodes <= 9:
        raise ValueError(f"dledger_nodes must be between 0 and 9, got {cfg.dledger_nodes!r}")
    if not dledger_mode(cfg):
        for flag, value in (("--dledger-group", cfg.dledger_group),
                            ("--dledger-self-id", cfg.dledger_self_id)):  # fmt: skip
            if value is not None:
                raise ValueError(f"{flag} needs --dledger-peers or --dledger-nodes")
        return
    if cfg.dledger_peers is not None and cfg.dledger_nodes:
        raise ValueError("--dledger-peers names the nodes; --dledger-nodes builds them: give one")
    if cfg.dledger_nodes and cfg.dledger_self_id is not None:
        raise ValueError("--dledger-nodes runs every node here; --dledger-self-id picks one "
                         "of --dledger-peers")  # fmt: skip
    if cfg.dledger_peers is not None:
        peers = parse_peers(cfg.dledger_peers)
        if cfg.dledger_self_id is not None and cfg.dledger_self_id not in peers:
            raise ValueError(
                f"--dledger-self-id {cfg.dledger_self_id!r} is not among the peers {list(peers)}"
            )
        here = [cfg.dledger_self_id] if cfg.dledger_self_id is not None else list(peers)
        for node_id in here:
            _check_addr(f"the address of {node_id}", peers[node_id])
            host = peers[node_id].rpartition(":")[0]
            if host != cfg.host:
                raise ValueError(
                    f"{node_id} would listen on {peers[node_id]}, not on --host {cfg.host}: "
                    f"give it a {cfg.host} address in --dledger-peers (or another --host)"
                )
    given = [flag for flag, on in (
        ("--brokers", cfg.brokers != 1), ("--slaves", cfg.slaves != 0),
        ("--broker-role", cfg.broker_role is not None), ("--broker-id", cfg.broker_id is not None),
        ("--ha-master-address", cfg.ha_master_address is not None),
        ("--namesrv-addr", cfg.namesrv_addr is not None), ("--config", cfg.config is not None),
    ) if on]  # fmt: skip
    if given:
        raise ValueError(
            f"DLedger mode runs DLedger nodes only (no name server, no broker): "
            f"{', '.join(given)} cannot go with it"
        )


def _check_role(node: str, bc: BrokerConfig, sc: MessageStoreConfig) -> None:
    """The same BrokerStartup checks on what the flags and the config file give together."""
    if sc.broker_role == "SLAVE" and bc.broker_id <= 0:
        raise ValueError(
            f"{node}: a SLAVE's brokerId must be > 0 (BrokerStartup: \"Slave's brokerId must "
            f'be > 0"), got {bc.broker_id}: pass --broker-id 1 or set brokerId'
        )
    if sc.broker_role != "SLAVE" and bc.broker_id != 0:
        raise ValueError(
            f"{node}: a master's brokerId is 0 (BrokerStartup sets it so), got "
            f"brokerId={bc.broker_id} with brokerRole={sc.broker_role}"
        )


# -- broker.properties -----------------------------------------------------------------------
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _store_key_table() -> dict[str, dataclasses.Field]:
    return {_camel(f.name): f for f in dataclasses.fields(MessageStoreConfig)}


def _convert_store_value(key: str, raw: str, f: dataclasses.Field) -> Any:
    value = raw.strip()
    kind = str(f.type)
    if "bool" in kind:
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ValueError(f"broker.properties key {key!r}: expected true/false, got {raw!r}")
    if "int" in kind:
        try:
            return int(value, 10)
        except ValueError:
            raise ValueError(
                f"broker.properties key {key!r}: expected an integer, got {raw!r}"
            ) from None
    return value


def load_properties(text: str) -> tuple[BrokerConfig, dict[str, Any], set[str]]:
    """Split a ``broker.properties`` text into a ``BrokerConfig`` and store settings.

    Mirrors ``BrokerStartup#createBrokerController`` (``properties2Object`` into
    ``BrokerConfig`` and ``MessageStoreConfig`` from the same file).

    Returns:
        ``(broker config, {MessageStoreConfig field: value}, the BrokerConfig keys given)``.

    Raises:
        ValueError: a key of neither config, or a value that does not parse (the
            message names the key).
    """
    props = parse_properties(text)
    store_keys = _store_key_table()
    store_values = {
        store_keys[k].name: _convert_store_value(k, v, store_keys[k])
        for k, v in props.items()
        if k in store_keys
    }
    netty_keys = {*_netty_key_table(NettyServerConfig), *_netty_key_table(NettyClientConfig)}
    broker_config = BrokerConfig.from_properties(text, ignore_keys={*store_keys, *netty_keys})
    return broker_config, store_values, {k for k in props if k not in store_keys}


def _netty_key_table(cls: type) -> dict[str, dataclasses.Field]:
    """Java name → field of a Netty config, ``listenPort`` aside (``BrokerConfig``'s here)."""
    return {_camel(f.name): f for f in dataclasses.fields(cls) if f.name != "listen_port"}


def load_netty_properties(text: str) -> tuple[NettyServerConfig, NettyClientConfig]:
    """The ``NettyServerConfig`` and ``NettyClientConfig`` a ``broker.properties`` text gives.

    Mirrors ``BrokerStartup#createBrokerController``'s ``properties2Object`` of the same
    file into both (a key both have, ``writeBufferHighWaterMark``, sets both).

    Raises:
        ValueError: a value that does not parse (the message names the key).
    """
    props = parse_properties(text)
    out = []
    for cls in (NettyServerConfig, NettyClientConfig):
        keys = _netty_key_table(cls)
        out.append(cls(**{
            keys[k].name: _convert_store_value(k, v, keys[k]) for k, v in props.items() if k in keys
        }))  # fmt: skip
    return out[0], out[1]


def _properties_text(props: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())


class _TraceSink:
    """Writes every trace event as one JSON line; the file is flushed every 200 ms."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self.dirty = False

    def __call__(self, event: TraceEvent) -> None:
        self.file.write(event.to_json() + "\n")
        self.dirty = True

    def flush(self) -> None:
        if self.dirty and not self.file.closed:
            self.file.flush()
            self.dirty = False

    def close(self) -> None:
        if not self.file.closed:
            self.file.flush()
            self.file.close()


class MqlabServer:
    """A name server and ``config.brokers`` brokers on one ``NetDriver``.

    ``await start()`` binds every port first (so port 0 works and the brokers know their
    real address), then starts the name server and the brokers; ``await stop()`` stops
    them gracefully (brokers first). Must be used on the driver's event loop.
    """

    def __init__(self, config: ServeConfig | None = None) -> None:
        self.config = config or ServeConfig()
        self.driver: NetDriver | None = None
        self.namesrv: NamesrvController | None = None
        self.namesrv_address: str | None = None
        self.brokers: list[BrokerController] = []
        self.store_root: Path | None = None
        #: the brokers' properties text (``--config`` and ``--property``), for their Netty configs
        self._netty_text = ""
        self._sink: _TraceSink | None = None
        self._unsubscribe: Any = None
        #: DLedger mode: the nodes run here
        self.dledger: NetDLedgerNodes | None = None
        #: DLedger brokers: each broker node's DLedgerServer, by broker node name
        self.dledger_servers: dict[str, DLedgerServer] = {}
        #: DLedger brokers with ``--dledger-port 0``: the nodes' bound sockets, by self id
        self._dledger_socks: dict[str, socket.socket] = {}
        #: the thread the brokers' periodic flush passes force their files on
        #: (``DefaultMessageStore.background_sync``); started with the first broker
        self.file_syncer: FileSyncer | None = None

    @property
    def namesrv_addr(self) -> str:
        """The name server's address: the one run here, or ``--namesrv-addr``."""
        assert self.namesrv_address is not None, "server not started"
        return self.namesrv_address

    @property
    def broker_addrs(self) -> dict[str, str]:
        """Each broker node's address by node name (a master's is its broker name,
        ``broker-a``; a slave's ``broker-a-s1``)."""
        return {b.name: b.broker_addr for b in self.brokers}

    def broker(self, name: str = "broker-a", broker_id: int | None = None) -> BrokerController:
        """The broker node ``name`` ("broker-a", "broker-a-s1"), or of broker name ``name``
        the node with ``broker_id``."""
        for b in self.brokers:
            if broker_id is None and b.name == name:
                return b
            if (b.broker_config.broker_name, b.broker_config.broker_id) == (name, broker_id):
                return b
        which = name if broker_id is None else f"{name} with broker_id {broker_id}"
        raise ValueError(f"no broker {which}; brokers: {sorted(self.broker_addrs)}")

    def _advertised_host(self, base: BrokerConfig, given: set[str]) -> str:
        host = self.config.host
        if "brokerIP1" in given:
            return base.broker_ip1
        if host in ("0.0.0.0", "::", ""):
            return local_ip()
        return host

    def _broker_configs(self) -> list[tuple[str, BrokerConfig, MessageStoreConfig]]:
        """``(node name, broker config, store config)`` of every broker node to start, each
        broker name's master before its slaves (mastering the route before they register)."""
        cfg = self.config
        text = ""
        if cfg.config:
            text = Path(cfg.config).read_text(encoding="utf-8")
        text += _properties_text(cfg.properties)
        base, store_values, given = load_properties(text)
        load_netty_properties(text)  # a bad Netty value fails here, before anything binds
        self._netty_text = text
        if cfg.delay_levels is not None:
            store_values["message_delay_level"] = cfg.delay_levels
        if cfg.broker_role is not None:
            store_values["broker_role"] = cfg.broker_role
        if cfg.ha_master_address is not None:
            store_values["ha_master_address"] = cfg.ha_master_address
        if cfg.broker_id is not None:
            base = dataclasses.replace(base, broker_id=cfg.broker_id)
        port0 = cfg.broker_port
        if port0 is None:
            port0 = base.listen_port if "listenPort" in given else 10911
        self.store_root = Path(cfg.store or tempfile.mkdtemp(prefix="mqlab-serve-"))
        host = self._advertised_host(base, given)
        # the HA service listens on brokerIP2 (mechanisms.md "HA replication"): the same
        # host as the rest unless the config names one
        ip2 = base.broker_ip2 if "brokerIP2" in given else host
        if cfg.dledger_brokers:
            return self._dledger_broker_configs(base, store_values, given, port0, host, ip2)
        if store_values.get("enable_d_leger_commit_log"):
            self._check_dledger_node(store_values)
        nodes = 1 + cfg.slaves
        out = []
        for i in range(cfg.brokers):
            name = base.broker_name if cfg.brokers == 1 and "brokerName" in given else None
            name = name or f"broker-{chr(ord('a') + i)}"
            for j in range(nodes):
                bc = dataclasses.replace(
                    base, broker_name=name, broker_ip1=host, broker_ip2=ip2,
                    listen_port=port0 + 10 * i + SLAVE_PORT_STEP * j if port0 else 0,
                )  # fmt: skip
                sv = dict(store_values)
                if cfg.slaves:
                    bc.broker_id = j
                    if j:
                        sv["broker_role"] = "SLAVE"
                sc = MessageStoreConfig(**sv)
                node = name if bc.broker_id == 0 else f"{name}-s{bc.broker_id}"
                if cfg.brokers > 1 or nodes > 1 or "store_path_root_dir" not in sv:
                    sc.store_path_root_dir = str(self.store_root / node)
                if not sc.enable_d_leger_commit_log:
                    _check_role(node, bc, sc)
                if cfg.ha_master_address is not None and sc.broker_role != "SLAVE":
                    raise ValueError(
                        f"--ha-master-address is where a SLAVE replicates from; {node}'s "
                        f"brokerRole is {sc.broker_role}: add --broker-role SLAVE --broker-id 1"
                    )
                out.append((node, bc, sc))
        return out

    def _dledger_broker_configs(
        self,
        base: BrokerConfig,
        store_values: dict[str, Any],
        given: set[str],
        port0: int,
        host: str,
        ip2: str,
    ) -> list[tuple[str, BrokerConfig, MessageStoreConfig]]:
        """``--dledger-brokers N``: node ``<name>-n<i>`` with 4.9.3's DLedger keys (the
        module essay); with ``--dledger-port 0`` the DLedger sockets are bound here."""
        cfg = self.config
        n = cfg.dledger_brokers
        name = base.broker_name if "brokerName" in given else "broker-a"
        assert self.store_root is not None
        if cfg.dledger_port == 0:
            peers, self._dledger_socks = loopback_peers(n, host)
        else:
            peers = ";".join(f"n{i}-{host}:{cfg.dledger_port + i}" for i in range(n))
        out = []
        for i in range(n):
            node = f"{name}-n{i}"
            bc = dataclasses.replace(
                base, broker_name=name, broker_ip1=host, broker_ip2=ip2,
                listen_port=port0 + 10 * i if port0 else 0,
            )  # fmt: skip
            sc = MessageStoreConfig(**{
                **store_values, "enable_d_leger_commit_log": True, "d_leger_group": name,
                "d_leger_peers": peers, "d_leger_self_id": f"n{i}",
                "store_path_root_dir": str(self.store_root / node),
            })  # fmt: skip
            out.append((node, bc, sc))
        return out

    def _check_dledger_node(self, store_values: dict[str, Any]) -> None:
        """A ``--config`` with ``enableDLegerCommitLog=true``: one node of a group, here."""
        cfg = self.config
        if cfg.brokers != 1 or cfg.slaves:
            raise ValueError("enableDLegerCommitLog=true in --config runs one DLedger node: "
                             "use --dledger-brokers N for a group here")  # fmt: skip
        peers = store_values.get("d_leger_peers")
        self_id = store_values.get("d_leger_self_id")
        if not peers or not self_id:
            raise ValueError("enableDLegerCommitLog=true needs dLegerPeers and dLegerSelfId")
        if self_id not in parse_peers(peers):
            raise ValueError(f"dLegerSelfId {self_id!r} is not among dLegerPeers {peers!r}")

    def _dledger_server_for(self, sc: MessageStoreConfig) -> tuple[DLedgerServer, socket.socket]:
        """A DLedger broker's node, as ``DLedgerCommitLog``'s constructor configures it
        (``dledger_config_from``: group, selfId, peers, data files of
        ``mappedFileSizeCommitLog``, ``preferredLeaderId``; its files under
        ``storePathRootDir``/``dledger-<selfId>``, recovered from them if there are any), and
        its bound socket."""
        assert sc.d_leger_peers is not None and sc.d_leger_self_id is not None
        self_id = sc.d_leger_self_id
        server = DLedgerServer(dledger_config_from(sc, str(sc.store_path_root_dir)), on_disk=True)
        sock = self._dledger_socks.pop(self_id, None)
        if sock is None:
            h, port = parse_peers(sc.d_leger_peers)[self_id].rsplit(":", 1)
            sock = bind_socket(h, int(port))
        return server, sock

    @property
    def rocketmq_home_dir(self) -> str | None:
        """The brokers' ``rocketmq.home.dir``: ``rocketmq_home``, else ``ROCKETMQ_HOME``."""
        if self.config.rocketmq_home is not None:
            return self.config.rocketmq_home
        return os.environ.get("ROCKETMQ_HOME")

    async def start(self) -> None:
        """Bind, then start the name server and every broker.

        Raises:
            OSError: a port is taken; nothing keeps running then.
            ValueError: a bad ``--config`` key or value, or ACL files that do not load.
        """
        cfg = self.config
        if dledger_mode(cfg):
            await self._start_dledger()
            return
        broker_cfgs = self._broker_configs()
        warning = exposure_warning(cfg.host, [bc for _, bc, _ in broker_cfgs],
                                   namesrv=cfg.namesrv_addr is None)  # fmt: skip
        if warning is not None:
            log.warning(warning)
        bind_host = cfg.host
        socks = []
        try:
            ns_sock = None
            if cfg.namesrv_addr is None:
                ns_sock = bind_socket(bind_host, cfg.namesrv_port)
                socks.append(ns_sock)
            for _, bc, sc in broker_cfgs:
                s = bind_broker_socket(bind_host, bc.listen_port)
                socks.append(s)
                bc.listen_port = s.getsockname()[1]
                # BrokerStartup#createBrokerController (4.9.3) sets haListenPort to
                # listenPort + 1 after reading the config (what GET_BROKER_CONFIG shows and
                # REGISTER_BROKER's haServerAddr names)
                sc.ha_listen_port = bc.listen_port + 1
        except OSError:
            for s in socks:
                s.close()
            raise
        level = TraceLevel[cfg.trace_level.upper()]
        self.driver = driver = NetDriver(
            run_id=cfg.run_id, trace_level=level,
            write_buffer_high_water_mark=cfg.write_buffer_high_water_mark,
        )  # fmt: skip
        log.info("event loop: %s", loop_name(driver.loop))
        if cfg.trace:
            self._sink = _TraceSink(cfg.trace)
            self._unsubscribe = driver.recorder.subscribe(self._sink)
        broker_socks = socks
        if ns_sock is not None:
            ns_port = ns_sock.getsockname()[1]
            ns_host = broker_cfgs[0][1].broker_ip1
            # Where a 4.9.3 name server keeps its KV table and config file (NamesrvConfig's
            # kvConfigPath / configStorePath; Java's default is ~/namesrv/): beside the stores.
            ns_dir = self.store_root / "namesrv"
            ns_cfg = NamesrvConfig(
                kv_config_path=str(ns_dir / "kvConfig.json"),
                config_store_path=str(ns_dir / "namesrv.properties"),
            )
            self.namesrv = NamesrvController(ns_cfg, address=f"{ns_host}:{ns_port}")
            ctx = await driver.add_node(self.namesrv, sock=ns_sock)
            broker_socks = socks[1:]
            self.namesrv_address = self.namesrv.address
        else:
            self.namesrv_address = cfg.namesrv_addr
        dledger_nodes = []
        try:
            for node, _, sc in broker_cfgs:
                if sc.enable_d_leger_commit_log:
                    server, dsock = self._dledger_server_for(sc)
                    self.dledger_servers[node] = server
                    dledger_nodes.append((server, dsock))
        except OSError:
            for _, s in dledger_nodes:
                s.close()
            for s in broker_socks:
                s.close()
            raise
        for (node, bc, sc), sock in zip(broker_cfgs, broker_socks, strict=True):
            bc.name_server_addr = self.namesrv_address
            netty_server, netty_client = load_netty_properties(self._netty_text)
            broker = BrokerController(bc, sc, name=node, rocketmq_home_dir=self.rocketmq_home_dir,
                                      dledger_server=self.dledger_servers.get(node),
                                      netty_server_config=netty_server,
                                      netty_client_config=netty_client)  # fmt: skip
            ha_ports = {c.listen_port + 1 for _, c, _ in broker_cfgs}
            vip = (
                () if bc.listen_port - 2 in ha_ports else self._bind_vip(bind_host, bc.listen_port)
            )
            bctx = await driver.add_node(broker, sock=sock, extra_socks=vip)
            self._sync_in_background(broker)  # its store exists once it started
            interval = sc.flush_interval_commit_log
            bctx.set_timer(
                FLUSH_TIMER, interval, self._flusher(broker), period_ms=interval, daemon=True
            )
            if self._sink is not None and len(self.brokers) == 0 and self.namesrv is None:
                ctx = bctx
            self.brokers.append(broker)
        # the DLedger nodes after their brokers, as 4.9.3 orders it: BrokerController#initialize
        # adds the DLedgerRoleChangeHandler, then the store's start starts the node
        # (DLedgerCommitLog#start), so its first role change is handled; every node is added
        # before the loop runs a timer of any (NetDLedgerNodes#start)
        await asyncio.gather(*(driver.add_node(s, sock=k) for s, k in dledger_nodes))
        if self._sink is not None:
            ctx.set_timer(
                TRACE_FLUSH_TIMER, TRACE_FLUSH_MS, self._sink.flush, period_ms=TRACE_FLUSH_MS,
                daemon=True,
            )  # fmt: skip
        if self.namesrv is None:
            return
        # "ready" means routable: wait for every broker's first REGISTER_BROKER to land
        # (a slave's: its registration result named the master's HA address, if it is up)
        # (a DLedger broker registers once its node's role is decided: an election first)
        live = self.namesrv.route_info_manager.broker_live_table
        wait_ms = 15000 if self.dledger_servers else 5000
        if not await wait_for(lambda: all(b.broker_addr in live for b in self.brokers), wait_ms):
            log.warning("not every broker registered with the name server within %d s",
                        wait_ms // 1000)  # fmt: skip

    def _dledger_sockets(self) -> tuple[str, dict[str, socket.socket]]:
        """The group's peers and a bound socket for each node run here."""
        cfg = self.config
        if cfg.dledger_peers is None:
            if cfg.dledger_port == 0:
                return loopback_peers(cfg.dledger_nodes, cfg.host)
            peers = ";".join(
                f"n{i}-{cfg.host}:{cfg.dledger_port + i}" for i in range(cfg.dledger_nodes)
            )
        else:
            peers = cfg.dledger_peers
        addrs = parse_peers(peers)
        here = [cfg.dledger_self_id] if cfg.dledger_self_id is not None else list(addrs)
        socks: dict[str, socket.socket] = {}
        try:
            for node_id in here:
                host, port = addrs[node_id].rsplit(":", 1)
                socks[node_id] = bind_socket(host, int(port))
        except OSError:
            for s in socks.values():
                s.close()
            raise
        return peers, socks

    async def _start_dledger(self) -> None:
        """DLedger mode: bind each node's address, then start the nodes
        (``DLedgerServer#startup``) on one driver."""
        cfg = self.config
        if not (cfg.host == "localhost" or cfg.host == "::1" or cfg.host.startswith("127.")):
            log.warning(
                "DLedger nodes listening on %s: DLedger's RPC has no ACL (0.2.3's neither), so "
                "anyone who can reach these ports can append entries, vote and transfer the "
                "leadership. Bind 127.0.0.1.", cfg.host or "*",
            )  # fmt: skip
        peers, socks = self._dledger_sockets()
        level = TraceLevel[cfg.trace_level.upper()]
        self.driver = driver = NetDriver(
            run_id=cfg.run_id, trace_level=level,
            write_buffer_high_water_mark=cfg.write_buffer_high_water_mark,
        )  # fmt: skip
        if cfg.trace:
            self._sink = _TraceSink(cfg.trace)
            self._unsubscribe = driver.recorder.subscribe(self._sink)
        dcfg = DLedgerConfig(group=cfg.dledger_group or DLedgerConfig.group, peers=peers,
                             self_id=next(iter(socks)))  # fmt: skip
        if cfg.store is not None:  # storeBaseDir: each node's files under dledger-<selfId>
            dcfg = dcfg.with_(store_base_dir=str(Path(cfg.store)))
        self.dledger = NetDLedgerNodes(driver, dcfg, list(socks), socks,
                                       on_disk=cfg.store is not None)  # fmt: skip
        await self.dledger.start()
        if self._sink is not None:
            first = self.dledger.ids[0]
            driver.contexts[first].set_timer(
                TRACE_FLUSH_TIMER, TRACE_FLUSH_MS, self._sink.flush, period_ms=TRACE_FLUSH_MS,
                daemon=True,
            )  # fmt: skip

    async def stop_broker(self, node: str, *, graceful: bool = True) -> None:
        """Stop one broker node (``graceful``: persist and flush first, as
        ``BrokerController#shutdown``; else a kill); the rest keep running. Its connections
        close, so the name server drops it from the route."""
        assert self.driver is not None, "server not started"
        await self.driver.stop_node(self.broker(node).name, graceful=graceful)
        server = self.dledger_servers.get(node)
        if server is not None:
            # the broker's DLedger node goes with it (one process in 4.9.3)
            await self.driver.stop_node(server.name, graceful=graceful)

    async def restart_broker(self, node: str) -> BrokerController:
        """Start a stopped broker node again: a new ``BrokerController`` on the same
        configs, store directory and ports (its VIP channel too); it recovers its store,
        registers again, and a master's slaves reconnect to its HA port. A DLedger broker's
        node is rebuilt from its files too, and joins its group again as a CANDIDATE.

        Raises:
            ValueError: no such node, or it is still running.
            OSError: its port is taken now.
        """
        driver = self.driver
        assert driver is not None, "server not started"
        old = self.broker(node)
        if old.running:
            raise ValueError(f"{node} is running: stop it first")
        bc, sc = old.broker_config, old.message_store_config
        sock = bind_socket(self.config.host, bc.listen_port)  # first: a taken port changes nothing
        old_dledger = self.dledger_servers.get(node)
        dledger = dsock = None
        if old_dledger is not None:
            # the DLedger node too (one JVM in 4.9.3): a new DLedgerServer recovers its log
            # from its files (DLedgerMmapFileStore#recover) and listens on its address again
            try:
                h, port = old_dledger.address.rsplit(":", 1)
                dsock = bind_socket(h, int(port))
            except OSError:
                sock.close()
                raise
            await driver.remove_node(old_dledger.name)
            old_dledger.store.close_files()
            dledger = DLedgerServer(old_dledger.config, name=old_dledger.name, on_disk=True)
            self.dledger_servers[node] = dledger
        await driver.remove_node(old.name)
        if old.message_store is not None:
            old.message_store.unmap()
        ha_ports = {b.broker_config.listen_port + 1 for b in self.brokers}
        vip = (
            ()
            if bc.listen_port - 2 in ha_ports
            else self._bind_vip(self.config.host, bc.listen_port)
        )
        new = BrokerController(bc, sc, name=old.name, rocketmq_home_dir=old.rocketmq_home_dir,
                               dledger_server=dledger,
                               netty_server_config=old.netty_server_config,
                               netty_client_config=old.netty_client_config)  # fmt: skip
        bctx = await driver.add_node(new, sock=sock, extra_socks=vip)
        self._sync_in_background(new)
        interval = sc.flush_interval_commit_log
        bctx.set_timer(FLUSH_TIMER, interval, self._flusher(new), period_ms=interval, daemon=True)
        self.brokers[self.brokers.index(old)] = new
        if dledger is not None:  # after its broker, as at start
            await driver.add_node(dledger, sock=dsock)
        return new

    @staticmethod
    def _bind_vip(host: str, listen_port: int) -> tuple[socket.socket, ...]:
        """The broker's VIP channel, ``listenPort - 2`` (``BrokerController#initialize``'s
        fastRemotingServer): a 4.9.3 slave's SlaveSynchronize sends its requests there
        (``MixAll#brokerVIPChannel(true, masterAddr)``). Best effort: a taken port leaves
        the broker without it (a warning), where 4.9.3 would not start."""
        try:
            return (bind_socket(host, listen_port - 2),)
        except OSError as e:
            log.warning("VIP channel %s:%d not bound (%s): a real 4.9.3 slave of this broker "
                        "cannot run SlaveSynchronize", host, listen_port - 2, e)  # fmt: skip
            return ()

    def _sync_in_background(self, broker: BrokerController) -> None:
        """The broker's periodic flush passes force on ``file_syncer``'s thread (see
        ``mqlab.runtime.file_sync``), not on the event loop's."""
        if broker.message_store is None:
            return
        if self.file_syncer is None:  # its syncs report back on this loop's thread
            self.file_syncer = FileSyncer(post=asyncio.get_running_loop().call_soon_threadsafe)
        broker.message_store.background_sync = self.file_syncer.submit

    @staticmethod
    def _flusher(broker: BrokerController):
        def flush() -> None:
            if broker.message_store is not None:
                broker.message_store.run_flush_services(broker.ctx.now_ms)

        return flush

    async def stop(self) -> None:
        """Graceful shutdown: brokers (persist, flush), then the name server."""
        driver = self.driver
        if driver is None:
            return
        if self.dledger is not None:
            await self.dledger.stop()
        for b in reversed(self.brokers):
            await driver.stop_node(b.name)
            server = self.dledger_servers.get(b.name)
            if server is not None:
                await driver.stop_node(server.name)
                server.store.close_files()
        for s in self._dledger_socks.values():
            s.close()
        if self.namesrv is not None:
            await driver.stop_node(self.namesrv.name)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._sink is not None:
            self._sink.close()
        if self.file_syncer is not None:
            self.file_syncer.close()
            self.file_syncer = None

    def describe(self) -> list[str]:
        """The lines ``serve`` prints once it listens."""
        if self.dledger is not None:
            group = self.dledger.servers[self.dledger.ids[0]].config.group
            lines = [f"mqlab serve: dledger group {group} peers {self.dledger.peers}"]
            lines += [
                f"mqlab serve: dledger node {i} {s.address} (selfId {i})"
                for i, s in self.dledger.servers.items()
            ]
        elif self.namesrv is not None:
            lines = [f"mqlab serve: name server {self.namesrv_addr}"]
        else:
            lines = [f"mqlab serve: name server {self.namesrv_addr} (not run here)"]
        for b in self.brokers:
            sc = b.message_store_config
            if b.name in self.dledger_servers:
                d = self.dledger_servers[b.name]
                lines.append(
                    f"mqlab serve: {b.name} {b.broker_addr} DLedger {sc.d_leger_self_id} "
                    f"{d.address} (group {sc.d_leger_group}; brokerId 0 once it leads) "
                    f"store {sc.store_path_root_dir}"
                )
                continue
            role = f"{sc.broker_role} (brokerId {b.broker_config.broker_id}, HA {b.ha_server_addr}"
            if b.is_slave:
                master = b.message_store.ha_master_address if b.message_store else None
                role += ", replicates from " + (
                    master or "the HA address its registration will name"
                )
            lines.append(
                f"mqlab serve: {b.name} {b.broker_addr} {role}) store {sc.store_path_root_dir}"
            )
        if self.config.trace:
            lines.append(f"mqlab serve: trace ({self.config.trace_level}) -> {self.config.trace}")
        lines.append("mqlab serve: ready (Ctrl-C to stop)")
        return lines


class ServerThread:
    """A ``MqlabServer`` on its own event-loop thread (tests, benchmarks, notebooks).

    ``call(fn)`` runs ``fn(server)`` on the loop's thread, the only safe way to look at
    the nodes while clients are connected.

    ``start_timeout`` bounds the start (a guard against a hang, not a deadline): the start
    itself waits up to 15 s for a DLedger group's registrations, and on a loaded machine
    opening the stores and binding the ports took longer than the 30 s the other calls are
    given (dry run AQ of session 23: load 38 on 2 cores while four JVMs started).
    """

    #: the start's bound, in seconds (see the class docstring)
    START_TIMEOUT_S = 120.0

    def __init__(
        self, config: ServeConfig | None = None, *, start_timeout: float = START_TIMEOUT_S
    ) -> None:
        self.server = MqlabServer(config)
        self._loop = LoopThread("mqlab-serve", loop=self.server.config.loop)
        try:
            self._loop.submit(self.server.start(), start_timeout)
        except BaseException:
            self._loop.close()
            raise

    @property
    def namesrv_addr(self) -> str:
        return self.server.namesrv_addr

    def call(self, fn, timeout: float = 30.0):
        return self._loop.call(lambda: fn(self.server), timeout)

    def submit(self, coro, timeout: float = 30.0):
        """Run the coroutine ``coro`` (e.g. ``server.restart_broker(node)``) on the loop; its
        result."""
        return self._loop.submit(coro, timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful shutdown (as on SIGTERM); does nothing the second time."""
        if self._loop.loop.is_closed():
            return
        try:
            self._loop.submit(self.server.stop(), timeout)
        finally:
            self._loop.close()

    def __enter__(self) -> ServerThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit; the (soft, hard) now in force.

    Every connection is a file descriptor, and a common soft default (1024) would stop
    ``serve`` accepting well before a thousand clients. None where the ``resource``
    module does not exist (Windows).
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    inf = resource.RLIM_INFINITY
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != inf and (hard == inf or soft < hard):
        target = hard if hard != inf else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            log.warning("could not raise the open-files limit from %s to %s", soft, target)
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def exposure_warning(
    host: str, broker_configs: list[BrokerConfig], *, namesrv: bool = False
) -> str | None:
    """The warning for a server listening beyond loopback, or None.

    It names the risk: brokers with ``aclEnable=false`` take any request from anyone who
    reaches them; a name server (``namesrv``: this serve runs one) has no ACL at all, in
    4.9.3 as here, so anyone may change its routes, KV config and config (mqlab starts no
    process and writes no file outside its store from a request, unlike 4.9.3:
    CVE-2023-33246, CVE-2023-37582).
    """
    if host == "localhost" or host == "::1" or host.startswith("127."):
        return None
    open_ = [bc.broker_name for bc in broker_configs if not bc.acl_enable]
    parts = []
    if open_:
        parts.append(
            f"listening on {host or '*'} with aclEnable=false ({', '.join(sorted(set(open_)))}): "
            "anyone who can reach these ports can send and consume on every topic, and change "
            "topics, groups, offsets and the broker config, without credentials. Bind "
            "127.0.0.1, or set aclEnable=true with <rocketmq home>/conf/plain_acl.yml."
        )
    if namesrv:
        parts.append(
            f"the name server listens on {host or '*'} and has no ACL (4.9.3's has none "
            "either): anyone who can reach its port can register or wipe brokers, delete "
            "topic routes, and change its KV and config (UPDATE_NAMESRV_CONFIG)."
        )
    return " ".join(parts) or None


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab serve",
        description="Run a RocketMQ-compatible name server and broker(s) on real sockets, "
        "or the nodes of a DLedger group (--dledger-peers, --dledger-nodes).",
    )
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    ap.add_argument("--namesrv-port", type=int, default=9876, help="name server port (9876)")
    ap.add_argument(
        "--broker-port", type=int, default=None,
        help="first broker's port (10911; broker i listens on port + 10*i; 0 = any)",
    )  # fmt: skip
    ap.add_argument("--brokers", type=int, default=1, help="number of brokers (1)")
    ap.add_argument(
        "--slaves", type=int, default=0, metavar="N",
        help="start each broker as a group: a master and N slaves (0-2) in this process, "
        "slave j on the master's port + 1000*j (0)",
    )  # fmt: skip
    ap.add_argument(
        "--broker-role", default=None, choices=list(BROKER_ROLES),
        help="brokerRole (the config file's, else ASYNC_MASTER); with --slaves, the master's",
    )  # fmt: skip
    ap.add_argument(
        "--broker-id", type=int, default=None,
        help="brokerId (the config file's, else 0; a SLAVE needs 1 or more)",
    )  # fmt: skip
    ap.add_argument(
        "--ha-master-address", default=None, metavar="HOST:PORT",
        help="a SLAVE's master HA address (default: the one its registration returns)",
    )  # fmt: skip
    ap.add_argument(
        "--namesrv-addr", default=None, metavar="HOST:PORT",
        help="register with this name server and run none here",
    )  # fmt: skip
    ap.add_argument("--store", default=None, help="store directory (default: a new temp dir)")
    ap.add_argument("--config", default=None, help="a RocketMQ broker.properties file")
    ap.add_argument(
        "--rocketmq-home", default=None, metavar="DIR",
        help="where aclEnable=true reads conf/plain_acl.yml and conf/acl/ (default: $ROCKETMQ_HOME)",
    )  # fmt: skip
    ap.add_argument(
        "--delay-levels", default=None,
        help='messageDelayLevel, e.g. "1s 1s 2s" (default "1s 5s 10s 30s 1m ... 2h")',
    )  # fmt: skip
    ap.add_argument("--trace", default=None, help="append trace events as JSON lines to FILE")
    ap.add_argument(
        "--trace-level", default="steps", choices=["off", "steps", "frames"],
        help="how much to trace (steps)",
    )  # fmt: skip
    ap.add_argument(
        "--write-buffer-high-water-mark", type=int, default=WRITE_BUFFER_HIGH_WATER_MARK,
        metavar="BYTES",
        help="close a connection once this many response bytes wait unread (16 MiB; 0 = no limit)",
    )  # fmt: skip
    ap.add_argument(
        "--dledger-peers", default=None, metavar="PEERS",
        help='run DLedger nodes instead (no name server, no broker): the group, as '
        'dLegerPeers, e.g. "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"',
    )  # fmt: skip
    ap.add_argument(
        "--dledger-self-id", default=None, metavar="ID",
        help="dLegerSelfId: run this node of --dledger-peers (default: every node, here)",
    )  # fmt: skip
    ap.add_argument(
        "--dledger-group", default=None, metavar="NAME",
        help="dLegerGroup: the DLedger group's name (default: default)",
    )  # fmt: skip
    ap.add_argument(
        "--dledger-nodes", type=int, default=0, metavar="N",
        help="run a DLedger group of N nodes n0..n(N-1) here, on --host ports "
        "--dledger-port + i (0: none)",
    )  # fmt: skip
    ap.add_argument(
        "--dledger-port", type=int, default=DLEDGER_PORT,
        help=f"first node's port with --dledger-nodes or --dledger-brokers ({DLEDGER_PORT}; "
        "0 = any)",
    )  # fmt: skip
    ap.add_argument(
        "--dledger-brokers", type=int, default=0, metavar="N",
        help="run a name server and a DLedger broker group: N brokers of one brokerName on "
        "DLedgerCommitLog (enableDLegerCommitLog, dLegerGroup, dLegerPeers n0..., dLegerSelfId), "
        "the elected leader the master (0: none)",
    )  # fmt: skip
    ap.add_argument(
        "--loop", default="asyncio", choices=list(LOOPS),
        help="event loop: asyncio (default), uvloop (pip install 'mqlab[uvloop]'), "
        "auto (uvloop when installed)",
    )  # fmt: skip
    ap.add_argument("--log-level", default="INFO", help="Python logging level (INFO)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        config = ServeConfig(
            host=args.host, namesrv_port=args.namesrv_port, broker_port=args.broker_port,
            brokers=args.brokers, store=args.store, config=args.config,
            delay_levels=args.delay_levels, trace=args.trace, trace_level=args.trace_level,
            run_id=f"serve-{os.getpid()}",
            write_buffer_high_water_mark=args.write_buffer_high_water_mark,
            slaves=args.slaves, broker_role=args.broker_role, broker_id=args.broker_id,
            ha_master_address=args.ha_master_address, namesrv_addr=args.namesrv_addr,
            rocketmq_home=args.rocketmq_home, dledger_group=args.dledger_group,
            dledger_peers=args.dledger_peers, dledger_self_id=args.dledger_self_id,
            dledger_nodes=args.dledger_nodes, dledger_port=args.dledger_port,
            loop=args.loop,
            dledger_brokers=args.dledger_brokers,
        )  # fmt: skip
    except ValueError as e:
        print(f"mqlab serve: {e}", file=sys.stderr)
        return 2
    raise_open_files_limit()
    server = MqlabServer(config)

    async def start() -> None:
        await server.start()
        for line in server.describe():
            print(line, flush=True)

    try:
        run_until_signalled(start, server.stop, loop=config.loop)
    except (OSError, ValueError) as e:
        print(f"mqlab serve: {e}", file=sys.stderr)
        return 1
    print("mqlab serve: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
