"""The Lab: one simulated RocketMQ cluster a learner can build, poke, rewind and compare.

``Lab(seed=…, brokers=…)`` builds a name server and brokers on a ``SimDriver``. It
owns the driver's clock, the seeded RNG streams, every node and the trace; there
are no globals, so two labs in one notebook never disturb each other.

Time only moves when the learner says so: ``step()`` runs one event, ``advance(ms)``
runs everything due in the next ``ms`` (inclusive), ``run_until_idle()`` runs until only
background timers are left. ``next_timers()`` / ``timers()`` show what will happen next.

Every state-changing call is journaled, so ``fork(step=N)`` can rebuild the lab from its
constructor arguments and replay the journal up to the N-th event (``lab.events_run``);
``checkpoint()`` returns the current N. ``diff(other)`` aligns two labs' traces and says
where they diverge. Listeners passed to consumers are replayed as the same objects, so a
listener that keeps state outside the lab will see the calls twice — keep state in the
lab (e.g. read ``consumed`` logs) when you fork.

Inspectors (``topics()``, ``queues()``, ``consume_queue()``, ``commit_log()``,
``held_pulls()``, ``consumer_offsets()``, ``timers()``) return pandas frames; see
``mqlab.lab.inspect``.

Broker groups: ``Lab(brokers=2, slaves=1, broker_role="SYNC_MASTER")`` gives each broker
name a master (brokerId 0, node ``broker-a``) and slaves (brokerId 1 and 2, nodes
``broker-a-s1`` / ``broker-a-s2``), each a node of its own with its own store directory and
address, on one cluster. ``lab.broker("broker-a")`` is the master,
``lab.broker("broker-a", broker_id=1)`` (or ``lab.broker("broker-a-s1")``) a slave. The
machine faults (``kill``, ``power_cut``, ``lose``) act on one node; the link faults
(``cut_link`` / ``heal_link`` between two nodes, ``lag_slave``) on the replication between a
master and a slave. ``FAULTS`` lists them all for ``fault(kind, node)`` and the panel.

DLedger groups: ``Lab(dledger=3)`` (or 5) makes each broker name a Raft group of brokers
``broker-a-n0`` … whose commit logs are ``DLedgerCommitLog`` over DLedger nodes
``dledger-a-n0`` …; the elected leader's broker becomes the master (brokerId 0). The machine
faults take a broker and its DLedger node together; ``partition``, ``heal`` and
``slow_link`` act on the DLedger links. See ``mqlab.lab.dledger_lab``.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.lab import inspect as _inspect
from mqlab.lab.clients import ClientsMixin
from mqlab.lab.dledger_lab import DLEDGER_SIZES, DLedgerMixin
from mqlab.lab.journal import journaled
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode
from mqlab.runtime.raw_client import Call, RawClient
from mqlab.runtime.sim import SimDriver
from mqlab.store.config import MessageStoreConfig
from mqlab.trace.events import Kind, TraceEvent, TraceLevel
from mqlab.trace.recorder import TraceRecorder

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FAULTS", "Lab", "NAMESRV_ADDR"]

NAMESRV_ADDR = "127.0.0.1:9876"
BROKER_PORT_BASE = 10911
#: A slave's listen port is its master's plus this times its brokerId (broker-a-s1 on
#: 127.0.0.1:11911): the masters' ports (10911, 10921, …) and HA ports (+1) stay free.
SLAVE_PORT_STEP = 1000
BROKER_ROLES = ("ASYNC_MASTER", "SYNC_MASTER")
#: The machine and link faults a lesson or the panel can apply (``Lab.fault``), with what
#: each does, in the words the panel shows.
FAULTS: dict[str, str] = {
    "kill": "kill the broker's process (SIGKILL): the OS page cache keeps what it wrote",
    "power_cut": "cut the machine's power: the store keeps only what its last flush covered, "
    "and no peer is told (no FIN): their requests to it time out",
    "lose": "lose the machine for good: its store directory is gone, and no peer is told",
    "restart": "restart the broker on its store directory (after any of the above)",
    "cut_link": "cut the link between a slave and its master, both directions",
    "partition": "cut that link silently: each side finds out only after 20 s of silence",
    "heal_link": "bring the link between a slave and its master back up",
    "lag_slave": "add latency on the master -> slave link (the slave lags)",
}


#: Journaled calls that only run events, one by one, until something holds (``DLedgerMixin``);
#: a replay runs the same number of events instead of calling them.
STEPPERS = ("run_until_elected", "run_until_vote", "run_until_master")


class Lab(ClientsMixin, DLedgerMixin):
    """A simulated RocketMQ cluster: one name server, N brokers, and the clients you add.

    Args:
        seed: every random choice (queue picks, link jitter, ...) derives from it.
        brokers: how many brokers (broker-a on 127.0.0.1:10911, broker-b on :10921, ...).
        slaves: 0, 1 or 2 slaves per broker name (brokerId 1 on port +1000, 2 on +2000).
        broker_role: the masters' ``brokerRole``, ``"ASYNC_MASTER"`` (default) or
            ``"SYNC_MASTER"``; slaves are ``"SLAVE"``.
        run_id: the trace's ``run_id`` (default ``f"seed-{seed}"``).
        trace_level: ``"off"``, ``"steps"`` (default) or ``"frames"`` (or a ``TraceLevel``).
        latency_ms: one-way latency of every link (default 1 ms).
        store_dir: where brokers keep their files (default: a temp dir removed on close).
        delay_levels: RocketMQ's ``messageDelayLevel`` string, e.g. ``"1s 5s 10s"``.
        broker: ``BrokerConfig`` field overrides for every broker, e.g.
            ``{"long_polling_enable": False, "auto_create_topic_enable": False}``.
        store: ``MessageStoreConfig`` field overrides for every broker.
        rocketmq_home: where brokers with ``broker={"acl_enable": True}`` read their ACL
            files (``<dir>/conf/plain_acl.yml``, ``<dir>/conf/acl/``): a 4.9.3 broker's
            ``rocketmq.home.dir``. None: no ACL file (only white lists admit anyone).
        dledger: 0 (default) or 3 or 5: each broker name is a DLedger group of that many
            brokers (``enableDLegerCommitLog=true``; no ``slaves`` then); the constructor
            runs until each group's leader is registered as brokerId 0.
        dledger_config: ``DLedgerConfig`` field overrides for every DLedger node, e.g.
            ``{"heart_beat_time_interval_ms": 1000, "max_vote_interval_ms": 2000}``, over
            what each node takes from its broker's ``store`` keys (``preferred_leader_id``,
            ``mapped_file_size_commit_log`` as the data file size), as in 4.9.3.

    Raises:
        ValueError: a bad argument (named in the message).
    """

    def __init__(
        self,
        seed: int = 0,
        brokers: int = 1,
        *,
        slaves: int = 0,
        broker_role: str | None = None,
        run_id: str | None = None,
        trace_level: str | TraceLevel = "steps",
        latency_ms: int = 1,
        store_dir: str | Path | None = None,
        delay_levels: str | None = None,
        broker: dict[str, Any] | None = None,
        store: dict[str, Any] | None = None,
        rocketmq_home: str | Path | None = None,
        dledger: int = 0,
        dledger_config: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        if not isinstance(brokers, int) or not 1 <= brokers <= 26:
            raise ValueError(f"brokers must be an int from 1 to 26, got {brokers!r}")
        if not isinstance(slaves, int) or isinstance(slaves, bool) or not 0 <= slaves <= 2:
            raise ValueError(f"slaves must be 0, 1 or 2, got {slaves!r}")
        if broker_role is not None and broker_role not in BROKER_ROLES:
            raise ValueError(
                f"broker_role must be one of {list(BROKER_ROLES)}, got {broker_role!r}"
            )
        if dledger not in (0, *DLEDGER_SIZES) or isinstance(dledger, bool):
            raise ValueError(f"dledger must be 0 (no DLedger) or a group size of "
                             f"{' or '.join(map(str, DLEDGER_SIZES))}, got {dledger!r}")  # fmt: skip
        if dledger_config and not dledger:
            raise ValueError("dledger_config needs a DLedger group: pass dledger=3 or 5")
        if dledger and (slaves or broker_role is not None):
            raise ValueError("a DLedger group elects its master and makes the others slaves: "
                             "leave out slaves and broker_role with dledger")  # fmt: skip
        level = _trace_level(trace_level)
        self._init_kwargs = dict(
            seed=seed, brokers=brokers, slaves=slaves, broker_role=broker_role, run_id=run_id,
            trace_level=level, latency_ms=latency_ms, store_dir=None, delay_levels=delay_levels,
            broker=broker, store=store, rocketmq_home=rocketmq_home, dledger=dledger,
            dledger_config=dledger_config,
        )  # fmt: skip
        self.dledger = dledger
        self._init_dledger(dledger_config)
        self.slaves = slaves
        self.broker_role = broker_role
        self.seed = seed
        self.driver = SimDriver(
            seed=seed, run_id=run_id or f"seed-{seed}", trace_level=level, latency_ms=latency_ms
        )
        if store_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="mqlab-lab-")
            self.store_dir = Path(self._tmp)
            self._finalizer = weakref.finalize(self, shutil.rmtree, self._tmp, ignore_errors=True)
        else:
            self._tmp = None
            self.store_dir = Path(store_dir)
            self._finalizer = None
        self.rocketmq_home = None if rocketmq_home is None else str(rocketmq_home)
        self._broker_overrides = dict(broker or {})
        self._store_overrides = dict(store or {})
        if delay_levels is not None:
            self._store_overrides["message_delay_level"] = delay_levels
        self._journal: list[tuple[str, tuple, dict, int]] = []
        self._replaying = False
        self._counters: dict[str, int] = {}
        self.namesrv = NamesrvController()
        self.driver.add_node(self.namesrv)
        self.brokers: list[BrokerController] = []
        for i in range(brokers):
            letter = chr(ord("a") + i)
            if dledger:
                for k in range(dledger):
                    # a DLedger node's broker: ports as a slave's, K for its brokerId
                    node = f"broker-{letter}-n{k}"
                    self._add_dledger_node(letter, k, *self._broker_configs(letter, k, node=node))
                continue
            for broker_id in range(slaves + 1):
                self._add_broker(letter, broker_id)
        self._raw: RawClient | None = None
        self._init_clients()
        self.driver.run_until_idle()
        was, self._replaying = self._replaying, True  # part of the constructor, not journaled
        try:
            for i in range(brokers if dledger else 0):
                self.run_until_master(f"broker-{chr(ord('a') + i)}")
        finally:
            self._replaying = was

    # -- construction helpers ----------------------------------------------------------------
    @staticmethod
    def _node_name(letter: str, broker_id: int = 0) -> str:
        return f"broker-{letter}" if broker_id == 0 else f"broker-{letter}-s{broker_id}"

    def _broker_configs(
        self, letter: str, broker_id: int = 0, *, node: str | None = None
    ) -> tuple[BrokerConfig, MessageStoreConfig]:
        """The configs of broker ``letter``'s node ``broker_id`` (``node``: a DLedger node's
        broker, named so, whose role its election decides)."""
        i = ord(letter) - ord("a")
        port = BROKER_PORT_BASE + 10 * i + SLAVE_PORT_STEP * broker_id
        broker_fields = {
            "broker_name": f"broker-{letter}", "listen_port": port,
            "name_server_addr": NAMESRV_ADDR, **self._broker_overrides, "broker_id": broker_id,
        }  # fmt: skip
        # BrokerStartup#createBrokerController: haListenPort = listenPort + 1
        store_fields = {
            "store_path_root_dir": str(self.store_dir / (node or self._node_name(letter, broker_id))),
            "ha_listen_port": port + 1, **self._store_overrides,
        }  # fmt: skip
        if node is not None:
            pass
        elif broker_id != 0:
            store_fields["broker_role"] = "SLAVE"
        elif self.broker_role is not None:
            store_fields["broker_role"] = self.broker_role
        try:
            bcfg = BrokerConfig(**broker_fields)
            scfg = MessageStoreConfig(**store_fields)
        except TypeError as e:
            raise ValueError(f"unknown broker or store setting: {e}") from None
        return bcfg, scfg

    def _add_broker(self, letter: str, broker_id: int = 0) -> BrokerController:
        bcfg, scfg = self._broker_configs(letter, broker_id)
        b = BrokerController(
            bcfg, scfg, name=self._node_name(letter, broker_id),
            rocketmq_home_dir=self.rocketmq_home,
        )  # fmt: skip
        self.driver.add_node(b)
        self.brokers.append(b)
        return b

    def _next_name(self, kind: str) -> str:
        n = self._counters.get(kind, 0) + 1
        self._counters[kind] = n
        return f"{kind}-{n}"

    def close(self) -> None:
        """Stop every node and remove the lab's temp store directory."""
        for name in list(self.driver.nodes):
            self.driver.stop_node(name, graceful=False)
        for b in self.brokers:
            if b.message_store is not None:
                b.message_store.shutdown()
                b.message_store.unmap()  # a killed store's maps stay open until now
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- live servers (issue 6) -----------------------------------------------------------------
    @staticmethod
    def serve(**config: Any):
        """Run a real name server + broker(s) on 127.0.0.1 in this process and return a
        ``LiveLab`` with the same inspectors and timeline on the live nodes
        (see ``mqlab.lab.attach``; config as ``python -m mqlab serve``)."""
        from mqlab.lab.attach import serve

        return serve(**config)

    @staticmethod
    def attach(trace_file: str | Path):
        """Follow the trace file a ``python -m mqlab serve --trace FILE`` writes."""
        from mqlab.lab.attach import attach

        return attach(trace_file)

    # -- nodes -------------------------------------------------------------------------------
    def broker(self, name: str = "broker-a", broker_id: int | None = None) -> BrokerController:
        """The broker node ``name`` ("broker-a", "broker-a-s1", …), or of broker name
        ``name`` the node with ``broker_id`` (default 0: the master). In a DLedger lab a
        DLedger node's name or selfId (``"n1"``) names its broker."""
        name = self._machine(name)
        if broker_id is None:
            for b in self.brokers:
                if b.name == name:
                    return b
            broker_id = 0
        if not isinstance(broker_id, int) or isinstance(broker_id, bool) or broker_id < 0:
            raise ValueError(f"broker_id must be an int >= 0, got {broker_id!r}")
        # a DLedger group's dead old master keeps brokerId 0: the running one comes first
        for b in sorted(self.brokers, key=lambda b: not b.running):
            if b.broker_config.broker_name == name and b.broker_config.broker_id == broker_id:
                return b
        raise ValueError(
            f"no broker named {name!r} with broker_id {broker_id}; "
            f"brokers: {[b.name for b in self.brokers]}"
        )

    @property
    def raw(self) -> RawClient:
        """A raw client node for hand-made requests (lesson 03 pulls one queue by hand)."""
        if self._raw is None:
            self._raw = RawClient("raw-client")
            self.driver.add_node(self._raw)
        return self._raw

    # -- time ------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        """Virtual time in ms."""
        return self.driver.now

    @property
    def events_run(self) -> int:
        """How many events have run: the step number ``fork(step=…)`` takes."""
        return self.driver.events_run

    @property
    def trace(self) -> TraceRecorder:
        return self.driver.recorder

    @journaled
    def step(self) -> list[TraceEvent]:
        """Run exactly one event; return the trace events it produced."""
        return self.driver.step()

    @journaled
    def advance(self, ms: int) -> list[TraceEvent]:
        """Run everything due in the next ``ms`` milliseconds (inclusive)."""
        if not isinstance(ms, int) or ms < 0:
            raise ValueError(f"advance() takes a whole number of ms >= 0, got {ms!r}")
        return self.driver.advance(ms)

    @journaled
    def run_until_idle(self, max_ms: int | None = None) -> list[TraceEvent]:
        """Run until only background timers (services, parked pulls) are pending; in a
        DLedger lab, also until no leader holds an append for its quorum."""
        return self._settle(max_ms=max_ms)

    @journaled
    def advance_to_next_timer(self) -> list[TraceEvent]:
        """Move time to the next pending timer and run what is due then.

        The statistics samplings (every second) are not "the next timer": they run on the
        way, as everything due does."""
        nxt = self.driver.next_timers(1, include_bookkeeping=False)
        if not nxt:
            return []
        return self.driver.advance(nxt[0].due_ms - self.now)

    def next_timers(
        self, limit: int | None = 10, *, include_frames: bool = True,
        include_bookkeeping: bool = False,
    ):  # fmt: skip
        """What happens next, soonest first. The statistics samplings (``StoreStatsService``
        every second, ``BrokerStatsManager``) are left out unless ``include_bookkeeping``."""
        return self.driver.next_timers(
            limit, include_frames=include_frames, include_bookkeeping=include_bookkeeping
        )

    # -- raw requests ------------------------------------------------------------------------
    @journaled
    def request(
        self, broker: str, code: int | str, ext_fields: dict[str, Any] | None = None,
        body: bytes | None = None, *, run: bool = True,
    ) -> Call:  # fmt: skip
        """Send one hand-made request to a broker (or "namesrv") and, by default, run until idle."""
        if isinstance(code, str):
            try:
                code = RequestCode[code]
            except KeyError:
                raise ValueError(f"unknown request code {code!r}") from None
        addr = NAMESRV_ADDR if broker == "namesrv" else self.broker(broker).broker_addr
        ext = None if ext_fields is None else {k: str(v) for k, v in ext_fields.items()}
        call = self.raw.send(addr, int(code), ext, body)
        if run and not self._replaying:  # a replay moves time through the journal's counts
            self._settle()
        return call

    @journaled
    def set_broker_config(self, broker: str | None = None, **fields: Any) -> None:
        """Change BrokerConfig fields at run time (every broker, or one), e.g.
        ``long_polling_enable=False``. The broker reads them on its next use, as Java does."""
        targets = self.brokers if broker is None else [self.broker(broker)]
        for b in targets:
            for k, v in fields.items():
                if not hasattr(b.broker_config, k):
                    raise ValueError(f"BrokerConfig has no field {k!r}")
                setattr(b.broker_config, k, v)
        self.driver._tracer.emit(
            "Lab", "set_broker_config", Kind.STATE, broker=broker or "all",
            text=f"broker config on {broker or 'all brokers'}: "
            + ", ".join(f"{k}={v}" for k, v in sorted(fields.items())),
            **{k: v for k, v in fields.items() if isinstance(v, bool | int | str)},
        )  # fmt: skip

    @journaled
    def set_store_config(self, broker: str | None = None, **fields: Any) -> None:
        """Change MessageStoreConfig fields at run time (every broker node, or one), e.g.
        ``total_physical_memory_size=64 * 1024`` so that a master suggests its slave for
        pulls far behind the end (mechanisms.md "The slave as a broker"). The store reads
        them on its next use. ``broker_role`` is not one of them: a node's role is fixed.

        Raises:
            ValueError: an unknown field, or ``broker_role``.
        """
        if "broker_role" in fields:
            raise ValueError("broker_role cannot change at run time; build the Lab with it")
        targets = self.brokers if broker is None else [self.broker(broker)]
        for b in targets:
            for k in fields:
                if not hasattr(b.message_store_config, k):
                    raise ValueError(f"MessageStoreConfig has no field {k!r}")
        for b in targets:
            for k, v in fields.items():
                setattr(b.message_store_config, k, v)
        self.driver._tracer.emit(
            "Lab", "set_store_config", Kind.STATE, broker=broker or "all",
            text=f"store config on {broker or 'all brokers'}: "
            + ", ".join(f"{k}={v}" for k, v in sorted(fields.items())),
            **{k: v for k, v in fields.items() if isinstance(v, bool | int | str)},
        )  # fmt: skip

    # -- faults ------------------------------------------------------------------------------
    @journaled
    def set_link(self, src: str, dst: str, **settings: Any) -> None:
        """Change how frames travel from node ``src`` to node ``dst``.

        Settings: ``latency_ms``, ``jitter_ms``, ``drop_rate`` (0..1), ``down`` (bool).
        """
        for name in (src, dst):
            self.driver.node(name)
        if "drop_rate" in settings and not 0 <= settings["drop_rate"] <= 1:
            raise ValueError(f"drop_rate must be between 0 and 1, got {settings['drop_rate']!r}")
        self.driver.set_link(src, dst, **settings)

    def _link_pair(self, a: str, b: str) -> None:
        for name in (a, b):
            if not isinstance(name, str):
                raise ValueError(f"a link joins two node names, got {name!r}")
            self.driver.node(name)
        if a == b:
            raise ValueError(f"a link joins two different nodes, got {a!r} twice")

    @journaled
    def cut_link(self, a: str, b: str, *, silent: bool = False) -> None:
        """Cut the link between nodes ``a`` and ``b`` in both directions: frames and stream
        bytes between them do not pass. Links to other nodes (the name server, clients) stay up.

        ``silent=False`` (a reset reaches both sides, as when a host answers "unreachable"):
        the streams between them end at once on both sides: a master drops its HA
        connection to the slave, so a SYNC_MASTER answers SLAVE_NOT_AVAILABLE; the slave's
        HAClient retries every 5 s and fails until :meth:`heal_link`.
        ``silent=True`` (a partition no packet crosses): nothing tells either side; the
        master keeps its HA connection until its read service hears nothing for
        ``haHousekeepingInterval`` (20 000 ms), so meanwhile a SYNC_MASTER's sends wait
        ``slaveTimeout`` (3000 ms) and answer FLUSH_SLAVE_TIMEOUT, and only then
        SLAVE_NOT_AVAILABLE. A remoting request on a connection already open waits out its
        timeout, and a new connect fails after ``connectTimeoutMillis`` (3000 ms), not at
        once. Nothing sent across a partition is lost: the sender's kernel retransmits it
        200, 400, 800 ms ... after the first send, and the first retransmission after
        :meth:`heal_link` delivers it, in order, to whatever end is still open: the slave's
        old HA connection takes the master's pushes, then its close (``LinkConfig.silent``).

        Raises:
            ValueError: an unknown node, or ``a == b``.
        """
        self._link_pair(a, b)
        if not isinstance(silent, bool):
            raise ValueError(f"silent must be True or False, got {silent!r}")
        self.driver.set_link(a, b, down=True, silent=silent)
        self.driver.set_link(b, a, down=True, silent=silent)
        self.driver._tracer.emit(
            "Lab", "cut_link", Kind.FAULT, a=a, b=b, silent=silent,
            text=f"link {a} <-> {b} cut" + (" silently (a partition)" if silent else ""),
        )  # fmt: skip

    @journaled
    def heal_link(self, a: str, b: str) -> None:
        """Bring the link between ``a`` and ``b`` back up in both directions (its latency
        setting stays). A slave reconnects on its HAClient's next turn and reports where it
        is, and the master pushes it the rest (mechanisms.md "HA replication").

        Raises:
            ValueError: an unknown node, or ``a == b``.
        """
        self._link_pair(a, b)
        self.driver.set_link(a, b, down=False, silent=False)
        self.driver.set_link(b, a, down=False, silent=False)
        self.driver._tracer.emit(
            "Lab", "heal_link", Kind.FAULT, a=a, b=b, text=f"link {a} <-> {b} up again",
        )  # fmt: skip

    def master_of(self, slave: str) -> str:
        """The node name of slave ``slave``'s master (same broker name, brokerId 0).

        Raises:
            ValueError: ``slave`` is not a slave node of this lab.
        """
        b = self.broker(slave)
        if b.broker_config.broker_id == 0:
            raise ValueError(f"{slave!r} is a master (brokerId 0), not a slave; "
                             f"slaves: {self._slave_names()}")  # fmt: skip
        return self.broker(b.broker_config.broker_name, broker_id=0).name

    def _slave_names(self) -> list[str]:
        return [b.name for b in self.brokers if b.broker_config.broker_id != 0]

    @journaled
    def lag_slave(self, slave: str, latency_ms: int | None) -> None:
        """Make slave ``slave`` lag: every frame and stream byte from its master to it
        takes ``latency_ms`` (one way; its reports back travel as before), so the master's
        pushes, and the reports that move ``push2SlaveMaxOffset``, come that much later. With
        more than ``slaveTimeout`` (3000 ms) a SYNC_MASTER's sends answer
        FLUSH_SLAVE_TIMEOUT. ``None`` puts the link back to the lab's latency.

        Raises:
            ValueError: ``slave`` is not a slave node, or a latency that is not a whole
                number of ms >= 0.
        """
        if latency_ms is not None and (
            not isinstance(latency_ms, int) or isinstance(latency_ms, bool) or latency_ms < 0
        ):
            raise ValueError(f"latency_ms must be a whole number of ms >= 0 or None, "
                             f"got {latency_ms!r}")  # fmt: skip
        master = self.master_of(slave)
        self.driver.set_link(master, slave, latency_ms=latency_ms)
        self.driver._tracer.emit(
            "Lab", "lag_slave", Kind.FAULT, master=master, slave=slave,
            latency_ms=-1 if latency_ms is None else latency_ms,
            text=f"{master} -> {slave} takes "
            + (f"{latency_ms} ms" if latency_ms is not None else "the lab's latency again"),
        )  # fmt: skip

    def fault(self, kind: str, node: str, **params: Any) -> Any:
        """Apply one fault of the menu ``FAULTS`` to ``node`` (the panel's fault row).

        ``"kill"``, ``"power_cut"``, ``"lose"``: :meth:`kill`, :meth:`power_cut`,
        :meth:`lose` of ``node``; ``"restart"``: :meth:`restart_broker` (``params`` passed
        on); ``"cut_link"`` / ``"heal_link"``: between slave ``node`` and its master
        (``"partition"``: ``cut_link(..., silent=True)``);
        ``"lag_slave"``: :meth:`lag_slave` (``latency_ms`` in ``params``).

        In a DLedger lab the link faults act on DLedger links, as its nodes replicate there:
        ``"cut_link"`` and ``"partition"`` cut ``node`` off from the rest of its group
        (:meth:`partition`), ``"heal_link"`` heals the group (:meth:`heal`), ``"lag_slave"``
        slows the link between the leader and ``node`` (:meth:`slow_link`).

        Raises:
            ValueError: an unknown fault (the message lists the menu), or what the fault
                itself refuses.
        """
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; faults: {list(FAULTS)}")
        if self.dledger and kind in ("cut_link", "partition", "heal_link", "lag_slave"):
            return self._dledger_link_fault(kind, node, **params)
        if kind in ("cut_link", "heal_link"):
            master = self.master_of(node)
            return getattr(self, kind)(master, node, **params)
        if kind == "partition":
            return self.cut_link(self.master_of(node), node, silent=True, **params)
        if kind == "restart":
            return self.restart_broker(node, **params)
        return getattr(self, kind)(node, **params)

    @journaled
    def kill(self, node: str) -> None:
        """Kill a node (SIGKILL): no shutdown, no offset persist. A broker's written bytes
        survive in the OS page cache, flushed or not (see :meth:`power_cut` for a fault
        that loses them). A DLedger broker's DLedger node (one JVM) dies with it; ``node``
        may name either, or its selfId (``"n1"``)."""
        self._kill(node)

    def _kill(self, node: str) -> None:
        """SIGKILL: the node runs none of its shutdown; a broker's store keeps everything
        its mapped files (the page cache) hold, and its ``abort`` file stays. A DLedger
        broker's node dies with it (one JVM); its log stays."""
        node = self._machine(node)
        self.driver.stop_node(node, graceful=False)
        self._dledger_stop(node)
        for b in self.brokers:
            if b.name == node and b.message_store is not None:
                b.message_store.kill()

    @journaled
    def power_cut(self, node: str, *, lost_tail_bytes: int | None = None) -> dict[str, int]:
        """Cut the power of a broker's machine (or crash its OS): the process dies as in
        :meth:`kill`, and the OS page cache is lost with it, so the store keeps only what
        its last flush (``msync``) covered.

        Unlike a kill, no kernel is left to close the broker's connections: its peers are
        told nothing. The name server keeps routing to it until 120 s pass without a
        registration (``RouteInfoManager#scanNotActiveBroker``), clients' requests to it
        wait out their timeouts, and a new connect waits out ``connectTimeoutMillis`` (3 s).
        Restarted (:meth:`restart_broker`), its kernel answers each peer's next segment on
        an old connection with a reset, and the peer connects again
        (``mqlab.runtime.sim.SimDriver._machine_up``).

        ``lost_tail_bytes``: the kernel had written back all but the commit log's last
        ``lost_tail_bytes`` bytes before the cut (a torn tail); None: nothing beyond the
        flushed position survives. See ``DefaultMessageStore.power_cut``.

        Returns:
            What the store lost (``DefaultMessageStore.power_cut``); for a DLedger broker
            also ``dledger_ledger_end_index_before``/``_after`` and ``dledger_lost_entries``:
            its DLedger node loses the entries its last 10 ms flush pass did not cover
            (``mqlab.lab.dledger_lab.dledger_power_cut``).

        Raises:
            ValueError: ``node`` is not a broker, or a negative ``lost_tail_bytes``.
        """
        return self._power_cut(node, lost_tail_bytes)

    def _power_cut(self, node: str, lost_tail_bytes: int | None) -> dict[str, int]:
        b = self.broker(self._machine(node))
        if lost_tail_bytes is not None and (
            not isinstance(lost_tail_bytes, int) or lost_tail_bytes < 0
        ):
            raise ValueError(
                f"lost_tail_bytes must be a whole number >= 0, got {lost_tail_bytes!r}"
            )
        self.driver.stop_node(b.name, graceful=False, fault="power_cut")
        lost = self._dledger_stop(b.name, power_cut=True)
        if b.message_store is None:
            return lost
        return {**b.message_store.power_cut(self.now, lost_tail_bytes=lost_tail_bytes),
                **{f"dledger_{k}": v for k, v in lost.items()}}  # fmt: skip

    @journaled
    def lose(self, node: str) -> None:
        """Lose a broker's machine for good: the process dies as in :meth:`power_cut` (no
        peer is told), and the disk goes with it (the node's store directory is removed).
        ``restart_broker``
        then starts a replacement machine on the same address with an empty store. A
        DLedger broker's node goes too: its log and its ``currterm`` file (term and vote)
        are gone, and the replacement starts in term 0 with no vote and an empty log.

        Raises:
            ValueError: ``node`` is not a broker.
        """
        b = self.broker(self._machine(node))
        self.driver.stop_node(b.name, graceful=False, fault="lost")
        self._dledger_lose(b.name)
        if b.message_store is not None:
            b.message_store.kill()
            b.message_store.unmap()
        shutil.rmtree(b.store_dir, ignore_errors=True)
        self.driver._tracer.emit(
            "Lab", "lose", Kind.FAULT, broker=b.name,
            text=f"{b.name}'s machine is lost: its store directory is gone",
        )  # fmt: skip

    @journaled
    def stop(self, node: str) -> None:
        """Stop a node gracefully (it persists and unregisters first)."""
        self.driver.stop_node(node, graceful=True)

    @journaled
    def restart_broker(
        self,
        name: str = "broker-a",
        *,
        graceful: bool | None = None,
        power_cut: bool = False,
        lost_tail_bytes: int | None = None,
    ) -> BrokerController:
        """Stop a broker (gracefully, by a kill or by a power cut) and start a new one on
        the same store directory.

        ``graceful`` (the default unless ``power_cut``): ``BrokerController#shutdown``
        runs (offsets and delay offsets persisted, store flushed, ``abort`` file removed)
        and the new store recovers normally. ``graceful=False``: the broker is killed
        (see :meth:`kill`): nothing written is lost, the ``abort`` file stays, so the new
        store takes the abnormal-recovery path (``last_shutdown_normal`` False).
        ``power_cut=True``: see :meth:`power_cut` (``lost_tail_bytes`` passed on);
        unflushed bytes are lost, then the same abnormal recovery. A DLedger broker's node
        stops and starts with it, on its log and ``currterm`` file.

        Raises:
            ValueError: ``graceful=True`` with ``power_cut=True``, or ``lost_tail_bytes``
                without ``power_cut``.
        """
        if power_cut and graceful:
            raise ValueError("a power cut is not graceful: pass graceful=False or leave it out")
        if lost_tail_bytes is not None and not power_cut:
            raise ValueError("lost_tail_bytes needs power_cut=True")
        if graceful is None:
            graceful = not power_cut
        old = self.broker(self._machine(name))
        was_down = not old.running  # killed, cut or lost before
        if power_cut:
            self._power_cut(old.name, lost_tail_bytes)
            how = "power cut"
        elif graceful:
            self.driver.stop_node(old.name, graceful=True)
            how = "graceful"
        else:
            self._kill(old.name)
            how = "kill"
        if was_down:
            how = "it was down"
        self.driver.remove_node(old.name)
        if old.message_store is not None:
            old.message_store.unmap()
        if old.dledger_server is not None:  # one JVM: the DLedger node stops and starts too
            self._dledger_stop(old.name)
            self._dledger_start(old.name)
        new = BrokerController(
            old.broker_config, old.message_store_config, name=old.name,
            rocketmq_home_dir=old.rocketmq_home_dir, dledger_server=old.dledger_server,
        )  # fmt: skip
        fields: dict[str, Any] = {"broker": old.name, "graceful": graceful}
        if power_cut:
            fields["power_cut"] = True
        self.driver._tracer.emit(
            "Lab", "restart", Kind.FAULT, **fields,
            text=f"restart {old.name} ({how}) on its store directory",
        )  # fmt: skip
        self.driver.add_node(new)
        self.brokers[self.brokers.index(old)] = new
        return new

    # -- inspectors --------------------------------------------------------------------------
    def topics(self, *, include_system: bool = False) -> pd.DataFrame:
        return _inspect.topics(self.brokers, include_system=include_system)

    def queues(self, topic: str | None = None) -> pd.DataFrame:
        return _inspect.queues(self.brokers, topic)

    def consume_queue(self, topic: str, queue_id: int, broker: str = "broker-a") -> pd.DataFrame:
        return _inspect.consume_queue(self.broker(broker), topic, queue_id)

    def commit_log(self, broker: str = "broker-a", *, raw: bool = False, limit: int | None = None):
        """A broker's commit log, decoded; a DLedger broker's is its node's DLedger log
        (``dledger_entries``: with each entry's index, term and whether it is committed)."""
        b = self.broker(self._machine(broker))
        if b.dledger_server is not None:
            df = self.dledger_entries(b.name, raw=raw)
            return df if limit is None else df.head(limit)
        return _inspect.commit_log(b, raw=raw, limit=limit)

    def commit_logs(self, name: str = "broker-a") -> pd.DataFrame:
        """The commit logs of broker name ``name``'s master and slaves side by side: one row
        per master entry, one column per node (True: the same bytes there, False: other
        bytes, None: not there); ``attrs["replicated_offset"]`` marks how far every slave
        holds the master's bytes. See ``mqlab.lab.inspect.commit_logs_side_by_side``."""
        group = sorted(
            (b for b in self.brokers if b.broker_config.broker_name == name),
            key=lambda b: b.broker_config.broker_id,
        )
        if not group or group[0].broker_config.broker_id != 0:
            raise ValueError(f"no broker name {name!r} with a master; brokers: "
                             f"{[b.name for b in self.brokers]}")  # fmt: skip
        return _inspect.commit_logs_side_by_side(group)

    def index_files(self, broker: str = "broker-a") -> pd.DataFrame:
        """The broker's index files (``store/index``) and their header counts."""
        return _inspect.index_files(self.broker(broker))

    def index_entries(self, broker: str = "broker-a") -> pd.DataFrame:
        """Every index entry: key hash, slot, commit-log offset, timeDiff, prevIndex."""
        return _inspect.index_entries(self.broker(broker))

    def held_pulls(self) -> pd.DataFrame:
        return _inspect.held_pulls(self.brokers)

    def consumer_offsets(self) -> pd.DataFrame:
        return _inspect.consumer_offsets(self.brokers)

    def timers(
        self, limit: int | None = None, *, include_frames: bool = True,
        include_bookkeeping: bool = False,
    ) -> pd.DataFrame:  # fmt: skip
        """Pending timers as a frame (without the statistics samplings by default)."""
        return _inspect.timers(
            self.driver, limit=limit, include_frames=include_frames,
            include_bookkeeping=include_bookkeeping,
        )  # fmt: skip

    def events(self, **select: Any) -> pd.DataFrame:
        """The trace as a frame (optionally only events matching component/step/node/kind)."""
        import pandas as pd

        evs = self.trace.select(**select) if select else self.trace.events
        df = pd.DataFrame([e.to_row() for e in evs], columns=list(_inspect_columns()))
        df["text"] = [e.fields.get("text", "") for e in evs]
        return df

    def log(self, *, since_ms: int | None = None, limit: int | None = 40, **select: Any) -> None:
        """Print trace events in words, one per line (pandas would cut the text column).

        ``select`` filters like ``events()`` (component=…, step=…, node=…, kind=…).
        """
        evs = self.trace.select(**select) if select else self.trace.events
        if since_ms is not None:
            evs = [e for e in evs if e.t_ms >= since_ms]
        if limit is not None and len(evs) > limit:
            print(f"... {len(evs) - limit} earlier event(s) not shown")
            evs = evs[-limit:]
        for e in evs:
            print(e.describe())

    # -- time travel --------------------------------------------------------------------------
    def checkpoint(self) -> int:
        """The current step number, to ``fork`` from later."""
        return self.driver.events_run

    def fork(self, step: int | None = None) -> Lab:
        """A new lab replayed from the same seed up to event ``step`` (default: now)."""
        target = self.driver.events_run if step is None else step
        if not isinstance(target, int) or not 0 <= target <= self.driver.events_run:
            raise ValueError(
                f"step must be between 0 and {self.driver.events_run} (events run so far), got {step!r}"
            )
        other = Lab(**self._init_kwargs)
        other._replay(self._journal, target)
        return other

    def _replay(self, journal: list[tuple[str, tuple, dict, int]], target: int) -> None:
        self._replaying = True
        try:
            for name, args, kwargs, at in journal:
                if at > target:
                    break
                self._run_until_event(at)
                if name in ("step", "advance", "run_until_idle", "advance_to_next_timer"):
                    self._budgeted(name, args, kwargs, target)
                    if self.driver.events_run >= target:
                        break
                elif name in STEPPERS:
                    pass  # they only run events: the next call's count (or target) replays them
                else:
                    getattr(self, name)(*args, **kwargs)
                self._journal.append((name, args, kwargs, at))
            self._run_until_event(target)
        finally:
            self._replaying = False

    def _run_until_event(self, n: int) -> None:
        while self.driver.events_run < n and self.driver.scheduler.peek() is not None:
            self.driver.step()

    def _budgeted(self, name: str, args: tuple, kwargs: dict, target: int) -> None:
        """Replay a time-moving call, stopping at event ``target``."""
        d = self.driver
        if name == "step":
            if d.events_run < target:
                d.step()
            return
        if name == "advance":
            end = d.now + (args[0] if args else kwargs["ms"])
        elif name == "advance_to_next_timer":
            nxt = d.next_timers(1, include_bookkeeping=False)
            end = nxt[0].due_ms if nxt else d.now
        else:
            end = None
        while d.events_run < target:
            t = d.scheduler.peek()
            if t is None or (end is not None and t.due > end):
                break
            if end is None and not d.scheduler.has_foreground:
                break
            d.step()
        if end is not None and d.events_run < target and end > d.now:
            d.scheduler.now = end

    def diff(self, other: Lab, *, context: int = 3) -> pd.DataFrame:
        """Align two labs' traces by ``seq``; rows around the first divergence.

        The frame has ``seq`` and, for each side, ``t_ms``/``node``/``component``/``step``/
        ``text``; ``same`` says whether the events match. ``attrs["diverges_at"]`` holds
        the first differing seq (None if the shorter trace is a prefix of the longer).
        """
        import pandas as pd

        a, b = self.trace.events, other.trace.events
        first = None
        for i in range(min(len(a), len(b))):
            if _key(a[i]) != _key(b[i]):
                first = i
                break
        if first is None and len(a) != len(b):
            first = min(len(a), len(b))
        lo = 0 if first is None else max(0, first - context)
        hi = min(len(a), len(b)) if first is None else first + context + 1
        rows = []
        for i in range(lo, min(hi, max(len(a), len(b)))):
            ea = a[i] if i < len(a) else None
            eb = b[i] if i < len(b) else None
            rows.append({
                "seq": i,
                "same": ea is not None and eb is not None and _key(ea) == _key(eb),
                **_side("a", ea), **_side("b", eb),
            })  # fmt: skip
        df = pd.DataFrame(rows)
        df.attrs["diverges_at"] = first
        return df


def _key(e: TraceEvent) -> tuple:
    return (e.t_ms, e.node, e.component, e.step, e.kind, e.to_row()["fields"])


def _side(prefix: str, e: TraceEvent | None) -> dict[str, Any]:
    if e is None:
        return {f"{prefix}_t_ms": None, f"{prefix}_node": None, f"{prefix}_event": None}
    return {
        f"{prefix}_t_ms": e.t_ms,
        f"{prefix}_node": e.node,
        f"{prefix}_event": f"{e.component} {e.step}: {e.fields.get('text', '')}".strip(),
    }


def _inspect_columns() -> tuple[str, ...]:
    from mqlab.trace.events import COLUMNS

    return COLUMNS


def _trace_level(level: str | TraceLevel) -> TraceLevel:
    if isinstance(level, TraceLevel):
        return level
    names = {"off": TraceLevel.OFF, "steps": TraceLevel.STEPS, "frames": TraceLevel.FRAMES}
    try:
        return names[str(level).lower()]
    except KeyError:
        raise ValueError(f"trace_level must be one of {sorted(names)}, got {level!r}") from None
