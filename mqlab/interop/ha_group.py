"""The master+slave group the HA interop scenarios share, on each target.

One group per target, started by the first HA scenario (``Target.group()``) and stopped with
the target: a SYNC_MASTER ``broker-a`` (brokerId 0) and its SLAVE (brokerId 1), with their
own name server, beside the target's single broker that every other scenario uses.

- mqlab: ``python -m mqlab serve --slaves 1 --broker-role SYNC_MASTER`` on an event-loop
  thread (``ServerThread``); the master node is stopped and restarted with
  ``MqlabServer.stop_broker`` / ``restart_broker``.
- real: ``RealCluster`` (brokerRole SYNC_MASTER) and ``start_slave()`` in the same JVM; the
  master is stopped and restarted with its ``stop-master`` / ``start-master`` commands.

Either way, ``stop_master()`` returns once the name server has dropped the master; the
group's start and ``start_master()`` return once the name server routes to the master *and*
the slave acknowledges what it is sent (``wait_slave_acks``): a slave's ``HAClient``
reconnects every 5 s and reports its offset (letting the master push) only
``haSendHeartbeatInterval`` (5 s) after connecting, so a SYNC_MASTER send soon after a
(re)connection waits ``syncFlushTimeout`` (5 s) and answers FLUSH_SLAVE_TIMEOUT on both
brokers. Waiting for a probe's SEND_OK makes the scenarios' sends independent of that race.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

from mqlab.common.message_decoder import message_properties_to_string
from mqlab.conformance.wire import call_sync
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads as fastjson_loads
from mqlab.remoting.headers import SendMessageRequestHeader, send_message_header_v2_to_ext_fields

__all__ = ["HaGroup", "MqlabGroup", "RealGroup", "open_group"]

BROKER_NAME = "broker-a"
ROLE = "SYNC_MASTER"
#: the topic of the harness's probe sends (no scenario reads it)
PROBE_TOPIC = "IH_Probe"


class HaGroup(Protocol):
    kind: str
    namesrv_addr: str
    master_addr: str
    slave_addr: str
    master_ha_port: int

    def stop_master(self) -> None: ...

    def start_master(self) -> None: ...

    def close(self) -> None: ...


def _wait(cond, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


def registered(namesrv_addr: str, broker_id: int) -> str | None:
    """The address the name server has for ``broker-a``'s ``broker_id`` (GET_BROKER_CLUSTER_INFO)."""
    resp = call_sync(
        namesrv_addr, RemotingCommand.create_request(RequestCode.GET_BROKER_CLUSTER_INFO)
    )
    info = fastjson_loads(resp.body.decode())
    data = (info.get("brokerAddrTable") or {}).get(BROKER_NAME)
    return None if data is None else data["brokerAddrs"].get(broker_id)


def knows_topic(broker_addr: str, topic: str) -> bool:
    """The broker's topic table (GET_ALL_TOPIC_CONFIG) holds ``topic``: a slave has it once
    its SlaveSynchronize (every 10 s) copied it from the master."""
    resp = call_sync(broker_addr, RemotingCommand.create_request(RequestCode.GET_ALL_TOPIC_CONFIG))
    if resp.code != 0 or not resp.body:
        return False
    table = fastjson_loads(resp.body.decode()).get("topicConfigTable") or {}
    return topic in table


def probe_send(master_addr: str) -> int:
    """One SEND_MESSAGE_V2 to ``PROBE_TOPIC`` (auto-created from TBW102); the response code:
    0 SEND_OK, 12 FLUSH_SLAVE_TIMEOUT, 11 SLAVE_NOT_AVAILABLE (SYNC_MASTER's answers)."""
    header = SendMessageRequestHeader(
        producer_group="IH_probe", topic=PROBE_TOPIC, default_topic="TBW102",
        default_topic_queue_nums=4, queue_id=0, sys_flag=0,
        born_timestamp=int(time.time() * 1000), flag=0,
        properties=message_properties_to_string({"WAIT": "true"}),
        reconsume_times=0, max_reconsume_times=16,
    )  # fmt: skip
    req = RemotingCommand.create_request(
        RequestCode.SEND_MESSAGE_V2, send_message_header_v2_to_ext_fields(header), b"probe"
    )
    return call_sync(master_addr, req, timeout=15).code


def ha_link_up(ha_port: int) -> bool:
    """Some TCP connection on this machine is established to local port ``ha_port`` (a
    slave's HAClient connected to the master's HA port): ``/proc/net/tcp``, Linux."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(path).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "01" and int(f[1].rsplit(":", 1)[1], 16) == ha_port:  # ESTABLISHED
                return True
    return False


class _Common:
    kind: str
    namesrv_addr: str
    master_addr: str
    slave_addr: str
    master_ha_port: int

    def _after_stop(self) -> None:
        _wait(lambda: registered(self.namesrv_addr, 0) is None, 30,
              "the name server to drop the stopped master")  # fmt: skip

    def _after_start(self) -> None:
        _wait(lambda: registered(self.namesrv_addr, 0) == self.master_addr, 30,
              "the restarted master to register")  # fmt: skip
        self.wait_slave_acks()

    def wait_slave_acks(self, timeout_s: float = 60) -> None:
        """Probe sends to the master until one is SEND_OK: the slave is connected, has
        reported, and acknowledges within syncFlushTimeout."""
        _wait(lambda: ha_link_up(self.master_ha_port), timeout_s, "the slave's HA connection")
        _wait(lambda: probe_send(self.master_addr) == 0, timeout_s,
              "a SEND_OK from the master (its slave acknowledging)")  # fmt: skip

    def wait_slave_knows(self, topic: str, timeout_s: float = 30) -> None:
        _wait(lambda: knows_topic(self.slave_addr, topic), timeout_s,
              f"the slave's SlaveSynchronize to copy {topic}")  # fmt: skip


class MqlabGroup(_Common):
    """``mqlab serve --slaves 1 --broker-role SYNC_MASTER`` on an event-loop thread."""

    kind = "mqlab"

    def __init__(self, workdir: Path) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        self._server = ServerThread(
            ServeConfig(
                namesrv_port=0, broker_port=0, store=str(workdir / "store"), slaves=1,
                broker_role=ROLE, trace_level="off",
            )
        )  # fmt: skip
        self.namesrv_addr = self._server.namesrv_addr
        addrs = self._server.server.broker_addrs
        self.master_addr, self.slave_addr = addrs[BROKER_NAME], addrs[f"{BROKER_NAME}-s1"]
        self.master_ha_port = int(self.master_addr.rsplit(":", 1)[1]) + 1
        try:
            self.wait_slave_acks()
        except BaseException:
            self._server.stop()
            raise

    def stop_master(self) -> None:
        self._server.submit(self._server.server.stop_broker(BROKER_NAME))
        self._after_stop()

    def start_master(self) -> None:
        self._server.submit(self._server.server.restart_broker(BROKER_NAME))
        self._after_start()

    def close(self) -> None:
        self._server.stop()


class RealGroup(_Common):
    """A real 4.9.3 SYNC_MASTER and its slave (``RealCluster`` and ``start_slave``)."""

    kind = "real"

    def __init__(self, workdir: Path) -> None:
        from mqlab.conformance.real_cluster import RealCluster

        self._cluster = RealCluster(workdir, {"brokerRole": ROLE}).start()
        try:
            slave = self._cluster.start_slave()
            self.namesrv_addr = self._cluster.namesrv_addr
            self.master_addr, self.slave_addr = self._cluster.broker_addr, slave.broker_addr
            self.master_ha_port = self._cluster.ha_port
            self.wait_slave_acks()
        except BaseException:
            self._cluster.stop()
            raise

    def stop_master(self) -> None:
        self._cluster.stop_master()
        self._after_stop()

    def start_master(self) -> None:
        self._cluster.start_master()
        self._after_start()

    def close(self) -> None:
        self._cluster.stop()


def open_group(kind: str, workdir: Path) -> HaGroup:
    """Start the group of target ``kind`` ("mqlab" or "real") in ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    if kind == "mqlab":
        return MqlabGroup(workdir)
    if kind == "real":
        return RealGroup(workdir)
    raise ValueError(f"unknown target {kind!r} (mqlab, real)")
