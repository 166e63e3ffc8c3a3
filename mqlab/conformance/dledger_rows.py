"""Conformance rows across a DLedger leadership change: what the brokers and the name server
answer before and after the leader is killed, asked of a real 4.9.3 group and of mqlab's.

Not a RocketMQ class: a conformance scenario (issue 26, "conformance rows for what the
brokers answer across a leadership change") whose sides are DLedger broker groups of
``broker-a`` (cluster ``DefaultCluster``, nodes ``n0``..``n2``):

- real: :class:`~mqlab.conformance.dledger_group.RealDLedgerGroup`, a 4.9.3 name server and
  three brokers with ``enableDLegerCommitLog=true``, one JVM each (the leader's killed with
  SIGKILL);
- mqlab: ``python -m mqlab serve --dledger-brokers 3`` on an event-loop thread (the leader's
  broker and DLedger node stopped at once, ``MqlabServer.stop_broker(graceful=False)``).

Both get ``preferredLeaderId=n0`` (``MessageStoreConfig``, handed to
``DLedgerConfig#setPreferredLeaderId``): a leader other than ``n0`` hands over to it
(``DLedgerServer#checkPreferredLeader``), so on both sides the same node leads and every
follower ``n<i>`` is listed at brokerId ``i + 1`` (``DLedgerCommitLog#getId``): the
answers can be compared node for node. Steps (each request a row):

1. ``lead n0``: wait until the name server lists ``n0`` at brokerId 0 and the followers at
   2 and 3; the topic is created on every node (UPDATE_AND_CREATE_TOPIC, as ``mqadmin
   updateTopic -b`` does), three messages are sent to the leader, one to a follower (a
   SLAVE: SERVICE_NOT_AVAILABLE); batches (``DLedgerCommitLog#asyncPutMessages``): three
   messages to the leader, two to a follower, one with DELAY in the batch's properties, one
   whose stored message is over ``maxMessageSize`` though its batch body is not, and a pull
   of the three; GET_BROKER_CLUSTER_INFO and GET_ROUTEINFO_BY_TOPIC are asked, a consumer
   offset is committed on the leader;
2. ``replicated``: wait until each follower's consume queue holds the message and its
   SlaveSynchronize (every 10 s, ``BrokerController#handleSlaveSynchronize``) has copied the
   offset; then the followers are asked (GET_MAX_OFFSET, QUERY_CONSUMER_OFFSET, PULL);
3. ``kill n0``: its JVM / node killed; returns once the name server has dropped it. Then,
   before a new leader is listed: a send to the dead address (no process listens), the
   cluster info and route without a brokerId 0, a send to a follower;
4. ``lead n1``: whichever of ``n1``/``n2`` won, a LEADERSHIP_TRANSFER to ``n1`` if needed
   (as ``DLedgerClient#leadershipTransfer`` sends it); then the new master is asked for the
   data written before the change (GET_MAX_OFFSET, QUERY_CONSUMER_OFFSET, PULL, the
   batch's PULL), takes three sends and a batch, the follower refuses one, and the name
   server's cluster info and route list ``n1`` at 0.

Addresses are compared through the ``dledger-node-address`` rule (``compare.RULES``): each
side's node ``n<i>`` listens on its own free port, so ``<n0>``, ``<n1>``, ``<n2>`` replace
them, as ``broker-address`` does for one broker.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mqlab.conformance.scenario import Scenario, SideAction, Step, batch, props
from mqlab.conformance.scenarios.common import (
    pull,
    query_offset,
    route,
    send_batch,
    send_v2,
    uniq,
    update_offset,
)
from mqlab.conformance.wire import broker_addr_table, call_sync, wait_until

__all__ = [
    "BROKER",
    "GROUP",
    "GROUP_DOC",
    "MqlabDLedgerSide",
    "PREFERRED",
    "RealDLedgerSide",
    "SCENARIO",
    "TOPIC",
    "dledger_sides",
    "run_dledger_rows",
    "run_rows",
]

BROKER = "broker-a"
CLUSTER = "DefaultCluster"
NODES = ("n0", "n1", "n2")
#: ``preferredLeaderId``: the first leader on both sides
PREFERRED = "n0"
TOPIC = "cf_dledger_failover"
GROUP = "cf_dledger_cg"
PRODUCER = "cf_dledger_pg"
#: the report's line for the group
GROUP_DOC = (
    "A DLedger group of three brokers around a leader kill: sends and batches to the "
    "leader, a follower and the dead address, cluster info and route before, during and "
    "after, the new master's offsets and pulls of data written before."
)
#: ``maxMessageSize`` both groups get (below the data file size, as the runner requires)
MAX_MESSAGE_SIZE = 900
#: the broker properties both groups get; 1 KiB data files (``mappedFileSizeCommitLog``, which
#: 4.9.3 gives DLedger's ``mappedFileSizeForEntryData``), so that the log fills several and
#: each entry that does not fit goes to the next after a blank (``MmapFileList#preAppend``):
#: the msgIds then compare the positions on both sides
PROPERTIES = {
    "preferredLeaderId": PREFERRED,
    "mappedFileSizeCommitLog": "1024",
    "maxMessageSize": str(MAX_MESSAGE_SIZE),
}
#: how long a wait may take: a real node's SlaveSynchronize learns its master's address
#: from a registration (10 s after its start, then every 30 s) and copies every 10 s
WAIT_S = 90.0


def _to(step: Step, node: str) -> Step:
    return dataclasses.replace(step, to=node)


def _create_topic(name: str, node: str) -> Step:
    return Step(name, "UPDATE_AND_CREATE_TOPIC", {
        "topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4",
        "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
    }, to=node, note=f"on {node}, as mqadmin updateTopic -b does")  # fmt: skip


def _send(name: str, node: str, queue_id: int, n: int, note: str = "",
          expect: int | None = None) -> Step:  # fmt: skip
    """SEND_MESSAGE_V2 of ``dl-<n>``; ``expect``: the code the real broker must answer."""
    return _to(send_v2(name, TOPIC, queue_id, b"dl-%d" % n, n=700 + n, group=PRODUCER,
                       note=note, expect=expect), node)  # fmt: skip


def _batch(name: str, node: str, queue_id: int, ns: tuple[int, ...], note: str = "",
           expect: int | None = None, **header: str) -> Step:  # fmt: skip
    """SEND_BATCH_MESSAGE of ``dl-<n>`` for each n, their own properties a UNIQ_KEY and TAGS
    (the batch's, in the header: WAIT; the broker adds CLUSTER)."""
    body = batch(*((TOPIC, b"dl-%d" % n, {"UNIQ_KEY": uniq(700 + n), "TAGS": "TagB"})
                   for n in ns))  # fmt: skip
    return _to(send_batch(name, TOPIC, queue_id, body, group=PRODUCER, note=note,
                          expect=expect, **header), node)  # fmt: skip


#: the batch body (863 bytes) under ``maxMessageSize``, the stored message (951) over it
_TOO_BIG = batch((TOPIC, b"x" * 800, {"UNIQ_KEY": uniq(799)}))

#: SendMessageProcessor#sendMessage: a SLAVE answers SERVICE_NOT_AVAILABLE (14)
SLAVE_REFUSES = 14


def _max_offset(name: str, node: str, queue_id: int = 0, note: str = "") -> Step:
    return Step(name, "GET_MAX_OFFSET", {"topic": TOPIC, "queueId": str(queue_id)}, to=node,
                note=note)  # fmt: skip


def _cluster_info(name: str, note: str) -> Step:
    return Step(name, "GET_BROKER_CLUSTER_INFO", to="namesrv", note=note)


SCENARIO = Scenario("dledger-failover", "dledger_leader_killed", [
    SideAction("lead_n0", "lead", ("n0",), "n0 at brokerId 0, n1 at 2, n2 at 3"),
    _create_topic("create_n0", "n0"),
    _create_topic("create_n1", "n1"),
    _create_topic("create_n2", "n2"),
    _send("send_leader_q0", "n0", 0, 0, "SEND_OK once a majority holds the entry", 0),
    _send("send_leader_q1", "n0", 1, 1, expect=0),
    _send("send_leader_q2", "n0", 2, 2, expect=0),
    _send("send_follower", "n1", 0, 3, "a follower's broker is a SLAVE", SLAVE_REFUSES),
    _batch("batch_leader_q3", "n0", 3, (20, 21, 22),
           "an entry a message, acknowledged with the last; three msgIds", 0),
    _batch("batch_follower", "n1", 3, (23, 24), "a SLAVE refuses a batch too", SLAVE_REFUSES),
    _batch("batch_delayed", "n0", 3, (25,), "DELAY among the batch's own properties",
           i=props(WAIT="true", DELAY="2")),
    _to(send_batch("batch_too_big", TOPIC, 3, _TOO_BIG, group=PRODUCER,
                   note="the body passes checkMessages, the stored message is over "
                        "maxMessageSize: the serializer's RuntimeException"), "n0"),  # fmt: skip
    pull("pull_batch_leader", GROUP, TOPIC, 3, 0, to="n0",
         note="each stored with its own properties only: no CLUSTER, no WAIT"),
    _cluster_info("cluster_before", "brokerId 0 the leader, n<i> at i + 1"),
    route("route_before", TOPIC),
    update_offset("commit_offset", GROUP, TOPIC, 0, 1),
    _to(query_offset("offset_leader", GROUP, TOPIC, 0), "n0"),
    SideAction("replicated", "wait_replicated", (1, 1),
               "each follower's queue 0 holds 1 message, its SlaveSynchronize copied offset 1"),
    _max_offset("max_offset_follower", "n1"),
    _to(query_offset("offset_follower", GROUP, TOPIC, 0), "n1"),
    pull("pull_follower", GROUP, TOPIC, 0, 0, to="n1",
         note="a follower serves pulls; suggestWhichBrokerId 0"),
    SideAction("kill_n0", "kill", ("n0",), "SIGKILL; the name server drops it",
               reconnect=("n0",)),
    _send("send_dead_leader", "n0", 0, 4, "no process listens there"),
    _cluster_info("cluster_no_master", "no brokerId 0 until a new leader applies its log"),
    route("route_no_master", TOPIC),
    _send("send_follower_no_master", "n1", 0, 5, "still a SLAVE while the group elects",
          SLAVE_REFUSES),
    SideAction("lead_n1", "lead", ("n1",), "n1 at brokerId 0, n2 at 3 (n2 hands over if it won)"),
    _max_offset("max_offset_new_leader", "n1", note="queue 0 as before the change"),
    _to(query_offset("offset_new_leader", GROUP, TOPIC, 0), "n1"),
    pull("pull_new_leader", GROUP, TOPIC, 0, 0, to="n1", note="the message written before"),
    pull("pull_batch_new_leader", GROUP, TOPIC, 3, 0, to="n1",
         note="the batch written before, at the same offsets"),
    _send("send_new_leader_q0", "n1", 0, 6, expect=0),
    _send("send_new_leader_q1", "n1", 1, 7, expect=0),
    _send("send_new_leader_q3", "n1", 3, 8, "after the batch", expect=0),
    _batch("batch_new_leader_q2", "n1", 2, (26, 27), expect=0),
    _send("send_survivor", "n2", 0, 9, "the other follower is still a SLAVE", SLAVE_REFUSES),
    _max_offset("max_offset_after", "n1"),
    _cluster_info("cluster_after", "n1 at brokerId 0, n2 at 3; n0 gone"),
    route("route_after", TOPIC),
    _send("send_dead_again", "n0", 1, 10),
], doc="A DLedger group of three brokers: answers before, during and after its leader is "
       "killed (mqlab/conformance/dledger_rows.py).")  # fmt: skip


# -- the sides -----------------------------------------------------------------------------


class _DLedgerSide:
    """What both sides share: the node addresses, the waits, the transfer."""

    name = ""
    slave_addr = ""
    acl_addr = ""
    acl_namesrv_addr = ""
    #: what :meth:`wait_replicated` asks the followers about
    topic = TOPIC
    consumer_group = GROUP

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir)
        self.namesrv_addr = ""
        #: node self id -> its broker's address
        self.node_addrs: dict[str, str] = {}
        #: node self id -> its DLedger RPC address
        self.dledger_addrs: dict[str, str] = {}
        self.killed: set[str] = set()
        #: what a wait saw when it gave up (the rows then show the difference)
        self.notes: list[str] = []

    # the engine's Side protocol
    @property
    def broker_addr(self) -> str:
        return self.node_addrs.get(PREFERRED, "")

    @property
    def store_dir(self) -> Path:
        return self.workdir

    def flush(self) -> None:
        """Nothing to flush: these rows read no store files."""

    def addr(self, node: str) -> str:
        return self.node_addrs[node]

    # -- waits --------------------------------------------------------------------------
    def table(self) -> dict[int, str]:
        return broker_addr_table(self.namesrv_addr, BROKER)

    def _want(self, leader: str) -> dict[int, str]:
        return {
            (0 if i == leader else int(i[1:]) + 1): a
            for i, a in self.node_addrs.items()
            if i in NODES and i not in self.killed
        }

    def lead(self, node: str) -> None:
        """Until the name server lists ``node`` at brokerId 0 and every other running node at
        its own id; a LEADERSHIP_TRANSFER to ``node`` when another leads (again, until one is
        accepted)."""
        by_addr = {a: i for i, a in self.node_addrs.items()}
        want = self._want(node)

        def done() -> bool:
            table = self.table()
            if table == want:
                return True
            leader = by_addr.get(table.get(0, ""))
            if leader is not None and leader != node and leader not in self.killed:
                self._transfer(leader, node)
            return False

        wait_until(done, WAIT_S, f"{self.name}: {node} at brokerId 0, the others at theirs",
                   pause_s=0.5)  # fmt: skip

    def _transfer(self, leader: str, to: str) -> None:
        """LEADERSHIP_TRANSFER to the leader's DLedger port; its term first, from the
        EXPIRED_TERM answer to a heartbeat of term -1 (``DLedgerServer#handleHeartBeat``)."""
        from mqlab.conformance.dledger_mixed import transfer_leadership
        from mqlab.dledger.protocol import DLedgerRequestCode, HeartBeatRequest, HeartBeatResponse
        from mqlab.dledger.rpc_body import from_body, to_body
        from mqlab.remoting.command import RemotingCommand

        addr = self.dledger_addrs[leader]
        other = next(i for i in NODES if i != leader)
        beat = RemotingCommand.create_request(DLedgerRequestCode.HEART_BEAT, body=to_body(
            HeartBeatRequest(group=BROKER, remote_id=leader, local_id=other, leader_id=other,
                             term=-1)))  # fmt: skip
        try:
            term = from_body(HeartBeatResponse, call_sync(addr, beat, timeout=10).body).term
            transfer_leadership(addr, BROKER, leader, to, term)
        except (OSError, TimeoutError):
            pass  # the leader changed meanwhile: the next look at the name server says

    def wait_replicated(self, max_offset: int, offset: int) -> None:
        """Until every running follower answers GET_MAX_OFFSET ``max_offset`` and
        QUERY_CONSUMER_OFFSET ``offset`` for queue 0; what they answered last goes to
        :attr:`notes` if that does not happen within :data:`WAIT_S`."""
        from mqlab.remoting.codes import RequestCode
        from mqlab.remoting.command import RemotingCommand

        last: dict[str, tuple[str | None, str | None]] = {}

        def ask(addr: str, code: int, ext: dict[str, str]) -> str | None:
            try:
                resp = call_sync(addr, RemotingCommand.create_request(code, ext), timeout=10)
            except (OSError, TimeoutError):
                return None
            return resp.ext("offset") if resp.code == 0 else None

        def done() -> bool:
            table = self.table()
            for i, a in self.node_addrs.items():
                if i not in NODES or i in self.killed or table.get(0) == a:
                    continue
                q = {"topic": self.topic, "queueId": "0"}
                cq = {**q, "consumerGroup": self.consumer_group}
                last[i] = (ask(a, RequestCode.GET_MAX_OFFSET, q),
                           ask(a, RequestCode.QUERY_CONSUMER_OFFSET, cq))  # fmt: skip
            return bool(last) and all(v == (str(max_offset), str(offset)) for v in last.values())

        try:
            wait_until(done, WAIT_S, "the followers", pause_s=0.5)
        except TimeoutError:
            self.notes.append(f"{self.name}: after {WAIT_S:g} s the followers' (max offset, "
                              f"consumer offset) of queue 0 were {last}, not "
                              f"({max_offset}, {offset})")  # fmt: skip

    def kill(self, node: str) -> None:
        """Kill ``node`` (:meth:`_kill`); returns once the name server has dropped it."""
        addr = self.node_addrs[node]
        self._kill(node)
        self.killed.add(node)
        wait_until(lambda: addr not in self.table().values(), WAIT_S,
                   f"{self.name}: the name server to drop {node}", pause_s=0.05)  # fmt: skip

    def _kill(self, node: str) -> None:
        raise NotImplementedError


class RealDLedgerSide(_DLedgerSide):
    """A real 4.9.3 DLedger group (:class:`RealDLedgerGroup`, four JVMs)."""

    name = "real"

    def __init__(self, workdir: Path, jvm_options: list[str] | None = None) -> None:
        super().__init__(workdir)
        self.jvm_options = jvm_options
        self.group: Any = None

    def start(self) -> None:
        from mqlab.conformance.dledger_group import RealDLedgerGroup

        self.group = RealDLedgerGroup(
            self.workdir / "real", broker_name=BROKER, cluster=CLUSTER,
            broker_properties=PROPERTIES, jvm_options=self.jvm_options,
        ).start()  # fmt: skip
        self.namesrv_addr = self.group.namesrv_addr
        self.node_addrs = {i: n.broker_addr for i, n in self.group.nodes.items()}
        self.dledger_addrs = {i: self.group.dledger_addr(i) for i in self.group.ids}

    def _kill(self, node: str) -> None:
        self.group.kill(node)

    def cpu_seconds(self) -> float:
        """CPU time of every JVM of the group (name server and nodes), from ``/proc``."""
        import os

        total = 0.0
        jvms = [self.group.namesrv, *self.group.nodes.values()]
        for jvm in jvms:
            if jvm is not None and jvm.pid is not None:
                try:
                    stat = Path(f"/proc/{jvm.pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def stop(self) -> None:
        if self.group is not None:
            self.group.stop()
            self.group = None


class MqlabDLedgerSide(_DLedgerSide):
    """``mqlab serve --dledger-brokers 3`` on an event-loop thread of this process."""

    name = "mqlab"

    def __init__(self, workdir: Path, *, loop: str = "asyncio") -> None:
        super().__init__(workdir)
        self.loop = loop
        self.srv: Any = None

    def start(self) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        self.srv = ServerThread(ServeConfig(
            namesrv_port=0, broker_port=0, dledger_port=0, dledger_brokers=len(NODES),
            store=str(self.workdir / "mqlab"), run_id="conformance-dledger",
            properties=dict(PROPERTIES), trace_level="off", loop=self.loop,
        ))  # fmt: skip
        self.namesrv_addr = self.srv.namesrv_addr
        brokers = self.srv.call(lambda s: [
            (b.message_store_config.d_leger_self_id, b.broker_addr,
             b.message_store_config.d_leger_peers) for b in s.brokers
        ])  # fmt: skip
        self.node_addrs = {i: a for i, a, _ in brokers}
        peers = brokers[0][2]
        self.dledger_addrs = dict(p.split("-", 1) for p in peers.split(";"))
        wait_until(lambda: 0 in self.table(), WAIT_S, "mqlab: a brokerId 0", pause_s=0.2)

    def _kill(self, node: str) -> None:
        self.srv.submit(self.srv.server.stop_broker(f"{BROKER}-{node}", graceful=False))

    def run_on_loop(self, fn: Callable[[], Any]) -> Any:
        return self.srv.call(lambda _server: fn())

    def cpu_seconds(self) -> float:
        """CPU time of the event-loop thread (name server, brokers, DLedger nodes)."""
        return float(self.run_on_loop(time.thread_time))

    def stop(self) -> None:
        if self.srv is not None:
            self.srv.stop()
            self.srv = None


@contextmanager
def dledger_sides(
    workdir: Path | None = None,
    out: Callable[[str], None] = print,
    *,
    sides: tuple[type, type] = (RealDLedgerSide, MqlabDLedgerSide),
    what: str = "dledger rows",
) -> Iterator[tuple[Any, Any]]:
    """Both sides started (the real one first, then mqlab's), stopped on exit: by default
    the two groups; ``sides`` other classes of the same start/stop (``dledger_upgrade``)."""
    work = Path(workdir or tempfile.mkdtemp(prefix=f"mqlab-{what.replace(' ', '-')}-"))
    real, mq = sides[0](work), sides[1](work)
    try:
        t0 = time.monotonic()
        real.start()
        mq.start()
        out(f"{what}: started in {time.monotonic() - t0:.0f} s (real namesrv "
            f"{real.namesrv_addr}, mqlab namesrv {mq.namesrv_addr})")  # fmt: skip
        yield real, mq
    finally:
        try:
            mq.stop()
        finally:
            real.stop()
            if workdir is None:
                shutil.rmtree(work, ignore_errors=True)


def run_rows(real: RealDLedgerSide, mq: MqlabDLedgerSide, *, log=None) -> tuple[Any, list[str]]:
    """:data:`SCENARIO` on both started groups; the engine's ``Run`` (its rows) and the
    sides' notes (waits that gave up). Leaves ``n0`` killed and ``n1`` leading."""
    from mqlab.conformance.engine import run_scenarios

    result = run_scenarios([SCENARIO], real, mq, log=log)
    return result, real.notes + mq.notes


def run_dledger_rows(out: Callable[[str], None] = print, *, log=None) -> tuple[Any, list[str]]:
    """Start both groups, :func:`run_rows`, stop them."""
    with dledger_sides(out=out) as (real, mq):
        return run_rows(real, mq, log=log)
