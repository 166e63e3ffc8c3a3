"""Raft's safety properties (Ongaro and Ousterhout 2014, Figure 3), checked on seeded runs
with kills, restarts and partitions.

One test per property, each naming the DLedger 0.2.3 code that provides it. (Seed 0 of the
five-node runs never fails over in its ten rounds; seeds 1 and 2 do, and the first test checks
that each run changes leader.) A run appends
through whoever leads, and between appends a seeded choice kills the leader, restarts the
dead, cuts the leader off with a minority, heals, or waits; at most a minority is down.
"""

from __future__ import annotations

import random

import pytest

from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.protocol import DLedgerResponseCode as R

E = "DLedgerLeaderElector"
ACTIONS = (
    ["kill_leader"] * 2 + ["partition"] * 2 + ["restart"] * 2 + ["kill_follower", "heal", "wait"]
)
RUNS = [(3, seed) for seed in range(4)] + [(5, seed) for seed in (1, 2)]


class Run:
    """One seeded run, with what the properties need recorded as it goes."""

    def __init__(self, n: int, seed: int, rounds: int = 10) -> None:
        self.g = g = DLedgerGroup(n, seed=seed)
        self.rng = random.Random(f"chaos/{n}/{seed}")
        self.acked: list[tuple[int, int, bytes]] = []  # (index, term, body), at ack time
        self.completeness_violations: list[str] = []
        self.snapshots: list[dict[str, list]] = []
        g.trace.subscribe(self._on_event)
        g.run_until(lambda: g.leader() is not None, 30_000)
        for k in range(rounds):
            self._round(k)
        g.heal()
        for node_id in g.ids:
            if not g.server(node_id).running:
                g.restart(node_id)
        g.advance(20_000)
        self.snapshots.append(self._snapshot())

    def _on_event(self, e) -> None:
        if e.component == E and e.step == "6":  # a new leader: its log has every acked entry
            log = set(self.g.log(e.node))
            missing = [a for a in self.acked if a not in log]
            if missing:
                self.completeness_violations.append(f"{e.node} term {e.fields['term']}: {missing}")

    def _snapshot(self) -> dict[str, list]:
        return {i: (self.g.log(i), self.g.server(i).store.committed_index) for i in self.g.ids}

    def _round(self, k: int) -> None:
        g, rng = self.g, self.rng
        leader = g.leader()
        if leader is not None:
            for j in range(rng.randint(1, 3)):
                body = b"r%d-%d" % (k, j)
                f = g.append(body, leader)
                f.when_complete(
                    lambda resp, body=body: (
                        self.acked.append((resp.index, resp.term, body))
                        if resp.code == R.SUCCESS
                        else None
                    )
                )
        g.advance(rng.randint(5, 300))
        down = [i for i in g.ids if not g.server(i).running]
        action = rng.choice(ACTIONS)
        leader = g.leader()
        wait = rng.randint(500, 3000)
        if action in ("kill_leader", "partition"):
            wait = rng.randint(6000, 9000)  # long enough, often, for a new election
        if action == "kill_leader" and leader and len(down) < len(g.ids) // 2:
            g.kill(leader)
        elif action == "kill_follower" and len(down) < len(g.ids) // 2:
            g.kill(rng.choice([i for i in g.running() if i != leader]))
        elif action == "restart" and down:
            g.restart(rng.choice(down))
        elif action == "partition" and leader:
            others = [i for i in g.ids if i != leader]
            g.heal()
            g.partition([leader] + rng.sample(others, (len(g.ids) - 1) // 2 - rng.randint(0, 1)))
        elif action == "heal":
            g.heal()
        g.advance(wait)
        self.snapshots.append(self._snapshot())


pytestmark = pytest.mark.slow  # six runs, ~40 000-70 000 events each: ~15 s


@pytest.fixture(scope="module")
def runs() -> dict[tuple[int, int], Run]:
    return {key: Run(*key) for key in RUNS}


def test_the_runs_elect_and_fail_over(runs):
    """The runs exercise the properties: several leaders and terms each, and acked entries."""
    for key, run in runs.items():
        terms = {e.fields["term"] for e in run.g.trace.select(component=E, step="6")}
        assert len(terms) >= 2, key
        assert len(run.acked) >= 5, key


def test_election_safety(runs):
    """At most one leader per term: a vote per term is persisted before it is given.
    Reference: DLedgerLeaderElector#handleVote (REJECT_ALREADY_VOTED), MemberState#setCurrVoteFor."""
    for key, run in runs.items():
        leaders: dict[int, set[str]] = {}
        for e in run.g.trace.select(component=E, step="6"):
            leaders.setdefault(e.fields["term"], set()).add(e.node)
        assert {t: n for t, n in leaders.items() if len(n) > 1} == {}, key


def test_log_matching(runs):
    """Two logs with an entry of the same index and term are equal up to it, at every
    snapshot. Reference: EntryDispatcher#doCompare / #doTruncate, appendAsFollower's index check."""
    for key, run in runs.items():
        for snap in run.snapshots:
            logs = [log for log, _ in snap.values()]
            for a in logs:
                for b in logs:
                    for i in range(min(len(a), len(b))):
                        if a[i][:2] == b[i][:2]:
                            assert a[: i + 1] == b[: i + 1], (key, i)


def test_leader_completeness(runs):
    """Every acknowledged entry is in the log of every leader elected after it: a vote goes
    only to a log at least as up to date. Reference: DLedgerLeaderElector#handleVote
    (REJECT_EXPIRED_LEDGER_TERM, REJECT_SMALL_LEDGER_END_INDEX)."""
    for key, run in runs.items():
        assert run.completeness_violations == [], key


def test_state_machine_safety(runs):
    """Committed prefixes agree on every node at every snapshot, and at the end every node
    holds every acknowledged entry. Reference: QuorumAckChecker#doWork,
    DLedgerMmapFileStore#updateCommittedIndex."""
    for key, run in runs.items():
        for snap in run.snapshots:
            for log_a, ca in snap.values():
                for log_b, cb in snap.values():
                    upto = min(ca, cb) + 1
                    assert log_a[:upto] == log_b[:upto], key
        final = run.snapshots[-1]
        for log, _ in final.values():
            assert set(run.acked) <= set(log), key
