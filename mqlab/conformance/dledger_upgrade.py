"""Conformance rows for upgrading a broker to a DLedger group: what the group answers about
the messages its old commit log holds and the ones it takes after, asked of a real 4.9.3
group and of mqlab's.

Not a RocketMQ class: a conformance scenario for the path 4.9.3's docs/en/dledger/
deploy_guide.md calls "Upgrade old cluster": stop the broker, copy its store (commit log,
consume queues, config) to three machines, start each with ``enableDLegerCommitLog=true``.
``DLedgerCommitLog#recover`` then finds no DLedger data file, recovers the old log as a
``CommitLog`` does, writes a blank at its last file's write position, and starts DLedger's
first data file where that file ends (``dividedCommitlogOffset``). Reads below that offset go
to the old log (``getData``, ``getMessage``); entries, and so new messages, come after it.

The sides are those of :mod:`mqlab.conformance.dledger_rows` (``broker-a``, nodes ``n0`` to
``n2``, ``preferredLeaderId=n0``, 1 KiB files), started as one plain broker first (node
``old``): a real 4.9.3 broker in one JVM with its name server, and ``python -m mqlab serve``.
Steps (each request a row):

1. on ``old``: the topic, seven messages to queue 0 (about 190 bytes each: the old log fills
   its first 1 KiB file and goes on in the second, so ``dividedCommitlogOffset`` is 2048), and
   a consumer offset of 2;
2. ``upgrade``: the broker stopped (SIGTERM: a graceful shutdown, which writes
   ``consumerOffset.json``), its store copied to ``n0``, ``n1`` and ``n2``, the group started
   on the copies; ``lead n0`` waits for the name server to list the leader at brokerId 0;
3. on the leader: the queue's min and max offset and the consumer offset as before; a pull of
   the old messages; two sends (the first to queue 0 at queue offset 7, its msgId's offset
   past the divide, 2048 + 48); a pull across the divide (queue offsets 5 to 7: two old
   messages and the new one in one answer);
4. once the followers have the new message (``wait_replicated``): a follower's max offset,
   its consumer offset (2, from the copied ``consumerOffset.json``) and its pull of the old
   messages.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqlab.conformance.dledger_rows import (
    BROKER,
    CLUSTER,
    NODES,
    PROPERTIES,
    MqlabDLedgerSide,
    RealDLedgerSide,
    dledger_sides,
)
from mqlab.conformance.scenario import Scenario, SideAction, Step
from mqlab.conformance.scenarios.common import pull, query_offset, send_v2, update_offset

__all__ = [
    "DIVIDED",
    "GROUP",
    "GROUP_DOC",
    "MqlabUpgradeSide",
    "OLD_MESSAGES",
    "RealUpgradeSide",
    "SCENARIO",
    "TOPIC",
    "run_upgrade_rows",
]

TOPIC = "cf_dledger_upgrade"
GROUP = "cf_dledger_upgrade_cg"
PRODUCER = "cf_dledger_upgrade_pg"
#: the messages the old broker takes, all to queue 0
OLD_MESSAGES = 7
#: where the old log ends and DLedger's entries begin: two 1 KiB commit-log files
DIVIDED = 2048
GROUP_DOC = (
    "A broker upgraded to a DLedger group (4.9.3's deploy guide): its store copied to three "
    "nodes; the old messages' offsets and pulls, new sends after the divide, a pull across it."
)


def _to(step: Step, node: str) -> Step:
    return dataclasses.replace(step, to=node)


def _send(name: str, node: str, queue_id: int, n: int, note: str = "",
          expect: int | None = None) -> Step:  # fmt: skip
    return _to(send_v2(name, TOPIC, queue_id, b"up-%d" % n, n=900 + n, group=PRODUCER,
                       note=note, expect=expect), node)  # fmt: skip


def _offsets(name: str, code: str, node: str, note: str = "") -> Step:
    return Step(name, code, {"topic": TOPIC, "queueId": "0"}, to=node, note=note)


SCENARIO = Scenario("dledger-upgrade", "dledger_upgrade", [
    Step("create_old", "UPDATE_AND_CREATE_TOPIC", {
        "topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4",
        "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
    }, to="old", note="the broker before the upgrade"),
    *(_send(f"send_old_{i}", "old", 0, i, expect=0) for i in range(OLD_MESSAGES)),
    _to(update_offset("commit_old", GROUP, TOPIC, 0, 2), "old"),
    SideAction("upgrade", "upgrade", (), "stopped, its store copied to n0, n1 and n2, the "
               "group started with enableDLegerCommitLog=true"),
    SideAction("lead_n0", "lead", ("n0",), "n0 at brokerId 0, n1 at 2, n2 at 3"),
    _offsets("min_offset_leader", "GET_MIN_OFFSET", "n0"),
    _offsets("max_offset_leader", "GET_MAX_OFFSET", "n0", "the old consume queue"),
    _to(query_offset("offset_leader", GROUP, TOPIC, 0), "n0"),
    pull("pull_old_leader", GROUP, TOPIC, 0, 0, to="n0",
         note="read from the old commit log, below dividedCommitlogOffset"),
    _send("send_new_q0", "n0", 0, 10, "queue offset 7; the entry at the divide", 0),
    _send("send_new_q1", "n0", 1, 11, expect=0),
    pull("pull_across", GROUP, TOPIC, 0, 5, to="n0",
         note="two old messages and the new one, from both logs"),
    SideAction("replicated", "wait_replicated", (OLD_MESSAGES + 1, 2),
               "each follower's queue 0 holds the new message"),
    _offsets("max_offset_follower", "GET_MAX_OFFSET", "n1"),
    _to(query_offset("offset_follower", GROUP, TOPIC, 0), "n1"),
    pull("pull_old_follower", GROUP, TOPIC, 0, 0, to="n1",
         note="a follower serves the old messages too"),
], doc="A broker's store upgraded to a DLedger group: the old log and DLedger's "
       "(mqlab/conformance/dledger_upgrade.py).")  # fmt: skip


class _Upgrade:
    """What both sides share: node ``old`` is the plain broker until :meth:`upgrade` stops it
    (``_stop_and_copy``) and starts the group on the copies; :meth:`stop` stops whichever
    runs."""

    topic = TOPIC
    consumer_group = GROUP
    plain: Any = None
    node_addrs: dict[str, str]

    def _stop_and_copy(self) -> None:
        raise NotImplementedError

    def upgrade(self) -> None:
        addr = self.node_addrs["old"]
        self._stop_and_copy()
        super().start()  # type: ignore[misc]  # the group's side
        self.node_addrs = {"old": addr, **self.node_addrs}

    def stop(self) -> None:
        try:
            super().stop()  # type: ignore[misc]
        finally:
            if self.plain is not None:
                self.plain.stop()
                self.plain = None


class RealUpgradeSide(_Upgrade, RealDLedgerSide):
    """A real 4.9.3 broker (its own name server, one JVM), then the group on its store."""

    def start(self) -> None:
        from mqlab.conformance.dledger_group import DLEDGER_JVM_OPTIONS
        from mqlab.conformance.real_cluster import RealCluster

        self.plain = RealCluster(
            self.workdir / "real" / "n0", PROPERTIES, broker_name=BROKER, cluster=CLUSTER,
            jvm_options=[*DLEDGER_JVM_OPTIONS, *(self.jvm_options or [])],
        ).start()  # fmt: skip
        self.namesrv_addr = self.plain.namesrv_addr
        self.node_addrs = {"old": self.plain.broker_addr}

    def _stop_and_copy(self) -> None:
        """SIGTERM (a graceful shutdown); n0's store copied to n1 and n2."""
        self.plain.stop()
        store = self.workdir / "real" / "n0" / "store"
        for node in NODES[1:]:
            shutil.copytree(store, self.workdir / "real" / node / "store")


class MqlabUpgradeSide(_Upgrade, MqlabDLedgerSide):
    """``python -m mqlab serve`` with one broker, then ``--dledger-brokers 3`` on its store."""

    def start(self) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        self.plain = ServerThread(ServeConfig(
            namesrv_port=0, broker_port=0, store=str(self.workdir / "mqlab-old"),
            run_id="conformance-dledger-upgrade", properties=dict(PROPERTIES),
            trace_level="off", loop=self.loop,
        ))  # fmt: skip
        self.namesrv_addr = self.plain.namesrv_addr
        self.node_addrs = {"old": self.plain.call(lambda s: s.brokers[0].broker_addr)}

    def _stop_and_copy(self) -> None:
        """The server stopped (gracefully); the broker's store copied to ``broker-a-n<i>``."""
        self.plain.stop()
        self.plain = None
        old = self.workdir / "mqlab-old" / BROKER
        for node in NODES:
            shutil.copytree(old, self.workdir / "mqlab" / f"{BROKER}-{node}")


def run_upgrade_rows(
    out: Callable[[str], None] = print, *, workdir: Path | None = None, log=None
) -> tuple[Any, list[str]]:
    """Start both brokers, run :data:`SCENARIO` (the upgrade in it), stop everything; the
    engine's ``Run`` and the sides' notes (waits that gave up)."""
    from mqlab.conformance.engine import run_scenarios

    sides = (RealUpgradeSide, MqlabUpgradeSide)
    with dledger_sides(workdir, out, sides=sides, what="dledger upgrade") as (real, mq):
        result = run_scenarios([SCENARIO], real, mq, log=log)
        return result, real.notes + mq.notes
