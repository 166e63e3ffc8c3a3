"""The Java client through a DLedger leader kill, on mqlab's group and on the real one.

Not a RocketMQ class: the interop harness for issue 26 item 3 ("the Java client producing
and consuming through a leader kill on a group of each kind; every acknowledged message is
consumed, on both"), as ``ha_scenarios`` is for the master+slave group. A group is a name
server and three brokers of ``broker-a`` on ``DLedgerCommitLog`` (nodes ``n0``..``n2``):

- mqlab: ``python -m mqlab serve --dledger-brokers 3`` on an event-loop thread
  (``ServerThread``); the leader is killed with ``MqlabServer.stop_broker(node,
  graceful=False)``: its broker and its DLedger node stop at once, their connections abort;
- real: ``RealDLedgerGroup``, a 4.9.3 name server and three DLedger brokers, one JVM each;
  the leader's JVM is killed with SIGKILL.

:func:`run_dledger_failover` runs ``JavaScenarios#dledgerFailover``:

1. the group's start returns once the name server lists a brokerId 0 (the leader's broker,
   its log applied: ``DLedgerRoleChangeHandler``);
2. the Java producer sends :data:`BEFORE` messages (auto-created topic, from TBW102); a push
   consumer (a new group, from the first offset) starts after the first and consumes from
   then on, through the rest; the kill waits until it has consumed at least
   :data:`CONSUMED_BEFORE_KILL`;
3. ``kill-leader``: the harness kills the node listed at brokerId 0 and returns once the
   name server has dropped its address (its connection closed);
4. the producer sends :data:`AFTER` more, each tried again a second after a failure until a
   broker answers (its route polled every second): the first go to the dead master and fail,
   then the new leader's broker is brokerId 0 and answers; the consumer's pulls move there too;
5. a batch of :data:`BATCH` to the new master (``DefaultMQProducer#send(Collection)``, one
   SEND_BATCH_MESSAGE: an entry a message, ``DLedgerCommitLog#asyncPutMessages``);
6. the consumer goes on until it has every SEND_OK'd one; :func:`check` requires every send
   (the batch one of them, with an offset msgId for each message) SEND_OK and every one of
   the 36 messages consumed.

7. :func:`run_dledger_client`: DLedger 0.2.3's own ``DLedgerClient`` (``JavaScenarios``
   ``dledger-client``), given every node's DLedger address, the dead one included, asks
   METADATA to find the new leader and GETs entry 0 from it and an index past the log;
   :func:`check_client` requires entry 0 (the first message, index 0 at position 0) and
   INDEX_OUT_OF_RANGE (410) naming that leader.

A failed try may still have been stored (a timeout after the append), so a message may be
consumed twice or without its acknowledgement; and the consumer's offsets, committed to the
dead master, are older (or none) on the new one, so it may consume some again: recorded
(``duplicates``, ``consumedNotAcked``), not required.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mqlab.conformance.wire import wait_until

__all__ = ["AFTER", "BATCH", "BEFORE", "CONSUMED_BEFORE_KILL", "MqlabDLedgerBrokers", "RealDLedgerBrokers", "check",
           "check_client", "run_dledger_client", "run_dledger_failover", "summary"]  # fmt: skip

BEFORE = 16
AFTER = 16
#: the batch sent to the new master after them (``JavaScenarios#dledgerFailover``)
BATCH = 4
#: the consumer has taken at least this many (from the first master) before the kill
CONSUMED_BEFORE_KILL = 4
BROKER_NAME = "broker-a"
PREFIX = "IJ_"


def _broker_addrs(namesrv_addr: str) -> dict[int, str]:
    from mqlab.conformance.wire import broker_addr_table

    return broker_addr_table(namesrv_addr, BROKER_NAME)


class MqlabDLedgerBrokers:
    """``serve --dledger-brokers 3`` on loopback ports the OS picks (step 1)."""

    kind = "mqlab"

    def __init__(self, workdir: Path) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        self.srv = ServerThread(ServeConfig(
            namesrv_port=0, broker_port=0, dledger_port=0, dledger_brokers=3,
            store=str(Path(workdir) / "store"), run_id="interop-dledger",
        ))  # fmt: skip
        self.namesrv_addr = self.srv.namesrv_addr
        #: ``dLegerPeers``, as every node of the group has it
        self.dledger_peers: str = self.srv.call(
            lambda s: s.brokers[0].message_store_config.d_leger_peers
        )
        self.killed: list[str] = []
        self.killed_addrs: list[str] = []
        try:
            wait_until(lambda: 0 in _broker_addrs(self.namesrv_addr), 30, "a brokerId 0")
        except BaseException:
            self.srv.stop()
            raise

    def leader(self) -> str | None:
        """The DLedger self id of the node whose broker is brokerId 0."""
        addr = _broker_addrs(self.namesrv_addr).get(0)
        return self.srv.call(lambda s: next(
            (b.message_store_config.d_leger_self_id for b in s.brokers if b.broker_addr == addr),
            None,
        ))  # fmt: skip

    def kill_leader(self) -> str:
        """Kill the node whose broker is brokerId 0 (step 3); its node name."""
        addr = _broker_addrs(self.namesrv_addr)[0]
        node = self.srv.call(lambda s: next(b.name for b in s.brokers if b.broker_addr == addr))
        self.srv.submit(self.srv.server.stop_broker(node, graceful=False))
        self.killed.append(node)
        self.killed_addrs.append(addr)
        wait_until(lambda: addr not in _broker_addrs(self.namesrv_addr).values(), 30,
                   "the name server to drop the killed master")  # fmt: skip
        return node

    def close(self) -> None:
        self.srv.stop()


class RealDLedgerBrokers:
    """``RealDLedgerGroup`` of ``broker-a``: a 4.9.3 name server and three DLedger brokers."""

    kind = "real"

    def __init__(self, workdir: Path) -> None:
        from mqlab.conformance.dledger_group import RealDLedgerGroup

        self.group = RealDLedgerGroup(Path(workdir) / "real", broker_name=BROKER_NAME,
                                      cluster="DefaultCluster").start()  # fmt: skip
        self.namesrv_addr = self.group.namesrv_addr
        self.dledger_peers = ";".join(f"{i}-{self.group.dledger_addr(i)}" for i in self.group.ids)
        self.killed: list[str] = []
        self.killed_addrs: list[str] = []

    def leader(self) -> str | None:
        return self.group.leader()

    def kill_leader(self) -> str:
        leader = self.group.leader()
        if leader is None:
            raise RuntimeError("the name server lists no brokerId 0")
        addr = self.group.nodes[leader].broker_addr
        self.group.kill(leader)
        self.killed.append(leader)
        self.killed_addrs.append(addr)
        wait_until(lambda: addr not in _broker_addrs(self.namesrv_addr).values(), 60,
                   "the name server to drop the killed master")  # fmt: skip
        return leader

    def close(self) -> None:
        self.group.stop()


def run_dledger_failover(group: Any, workdir: Path) -> dict:
    """Steps 2-5 against ``group``; the Java scenario's result, with the killed node and the
    brokerId 0 after the failover (``newMaster``)."""
    from mqlab.interop.java_client import run_java_interactive

    r = run_java_interactive(
        "dledger-failover", group.namesrv_addr, PREFIX, Path(workdir),
        {"kill-leader": lambda event: group.kill_leader()}, timeout_s=420,
    )  # fmt: skip
    r["killed"] = list(group.killed)
    r["killedAddrs"] = list(group.killed_addrs)
    r["newMaster"] = _broker_addrs(group.namesrv_addr).get(0)
    return r


def run_dledger_client(group: Any, workdir: Path) -> dict:
    """Step 6: ``DLedgerClient``'s GET 0 and GET past the log against ``group``, and which
    node leads it (``leader``: the broker listed at brokerId 0)."""
    from mqlab.interop.java_client import run_java_scenario

    r = run_java_scenario(
        "dledger-client", group.namesrv_addr, PREFIX, Path(workdir), timeout_s=120,
        env={"MQLAB_DLEDGER_GROUP": BROKER_NAME, "MQLAB_DLEDGER_PEERS": group.dledger_peers},
    )  # fmt: skip
    r["leader"] = group.leader()
    return r


def check_client(r: dict) -> list[str]:
    """What ``DLedgerClient`` must get from either group (step 6)."""
    problems = []
    first, past = r["get0"], r["getPast"]
    got = [(e["index"], e["pos"], e["magic"], e["channel"]) for e in first["entries"]]
    if (first["code"], got) != (200, [(0, 0, 1, 0)]):
        problems.append(f"GET 0: {first}")
    if (past["code"], past["entries"], past["leaderId"]) != (410, [], r["leader"]):
        problems.append(f"GET past the log: {past}, leader {r['leader']}")
    return problems


def check(r: dict) -> list[str]:
    """What must hold on either group: every send answered SEND_OK, every one consumed."""
    problems = []
    statuses = [s["status"] for s in r["sends"]]
    if statuses != ["SEND_OK"] * (BEFORE + AFTER + 1):
        problems.append(f"sends: {statuses}")
    elif r["sends"][-1].get("offsetMsgIds") != BATCH:
        problems.append(f"the batch's answer: {r['sends'][-1]}")
    want = [f"dl-{i}" for i in range(BEFORE + AFTER)] + [f"dl-batch-{i}" for i in range(BATCH)]
    if r["acked"] != want:
        problems.append(f"acknowledged: {r['acked']}")
    if r["missing"]:
        problems.append(f"acknowledged but not consumed: {r['missing']}")
    if r["consumedBeforeKill"] < CONSUMED_BEFORE_KILL:
        problems.append(f"consumed before the kill: {r['consumedBeforeKill']}")
    if len(r["killed"]) != 1 or r["newMaster"] in (None, *r["killedAddrs"]):
        problems.append(f"killed {r['killed']}, brokerId 0 after: {r['newMaster']}")
    return problems


def summary(kind: str, r: dict) -> str:
    """One line: the counts a run produced."""
    return (f"{kind}: {len(r['sends'])} sends, {r['consumedBeforeKill']} consumed before the kill, {len(r['acked'])} SEND_OK, "
            f"{len(r['failedTries'])} failed tries, {len(set(r['consumed']) & set(r['acked']))} "
            f"acknowledged consumed, {len(r['missing'])} missing, {r['duplicates']} duplicates, "
            f"{len(r['consumedNotAcked'])} consumed unacknowledged; killed {r['killed']}")  # fmt: skip
