"""The explorer on DLedger schedules (``mqlab.explore.dledger``): each ready-made scenario's
class table at its own bounds, and each planted DLedger mutant caught, with its shortest
schedule. The safety keys (two_leaders, leader_missing, lost, diverged) appear only with a
mutant."""

from __future__ import annotations

import pytest

from mqlab.explore import mutants
from mqlab.explore.dledger import DLEDGER_KEYS
from mqlab.explore.engine import Bounds, run_schedule
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import SCENARIOS, get_scenario
from mqlab.explore.schedule import ScheduleError

SAFETY = {"two_leaders", "leader_missing", "lost", "diverged"}


def _keys(outcome: str) -> set[str]:
    return set() if outcome == "ok" else {p.split("=")[0] for p in outcome.split()}


def _table(res) -> dict[str, str]:
    return {o: str(s) or "(default)" for o, _, s, _ in res.table()}


#: each scenario's classes and shortest schedules at its own bounds, and the runs
TABLES = [
    ("dledger_leader_killed",
     {"ok": "(default)", "unacked=1": "d10 F:kill(leader)",
      "unacked=1 truncated=1": "F:kill(leader)"}, 291),
    ("dledger_leader_isolated",
     {"ok": "(default)", "unacked=1": "d10 F:isolate(leader)",
      "unacked=1 truncated=1": "F:isolate(leader)"}, 275),
    ("dledger_split_vote", {"ok": "(default)", "split=1": "d1 l1"}, 32),
]  # fmt: skip


def test_every_dledger_scenario_has_a_table():
    assert sorted(n for n in SCENARIOS if n.startswith("dledger_")) == sorted(t[0] for t in TABLES)


@pytest.mark.parametrize(("name", "table", "runs"), TABLES)
def test_scenario_classes(name, table, runs):
    xs = get_scenario(name)
    res = explore(xs)
    assert _table(res) == table
    assert res.runs == runs
    found = set().union(*(_keys(o) for o in res.outcomes()))
    assert found <= xs.allowed
    assert xs.expected <= found
    assert not found & SAFETY


@pytest.mark.parametrize(
    ("mutant", "name", "bounds", "outcome", "shortest"),
    [
        ("dledger_minority_quorum", "dledger_leader_killed", "depth=3",
         "lost=1 leader_missing=1 diverged=1 truncated=1", "d1 F:kill(leader)"),
        ("dledger_truncate_skipped", "dledger_leader_killed", "depth=3",
         "diverged=1 unacked=1", "F:kill(leader)"),
        ("dledger_vote_twice", "dledger_split_vote", "depth=2", "two_leaders=1", ""),
    ],
)  # fmt: skip
def test_mutant_caught(mutant, name, bounds, outcome, shortest):
    xs = get_scenario(name)
    b = Bounds.parse(bounds, depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)
    with mutants.mutant(mutant):
        res = explore(xs, b)
        bad = {o: str(s) for o, _, s, _ in res.table() if _keys(o) & SAFETY}
        assert bad == {outcome: shortest or "(default)"}
        assert run_schedule(xs, shortest, b).outcome == outcome  # the schedule replays it
    assert run_schedule(xs, shortest, b).outcome != outcome  # and only with the mutant


def test_leader_killed_counts():
    """The default run, and the kill before the push: the entry only the dead leader had is
    cut when it comes back (n1 leads term 2 and wrote b at index 0)."""
    xs = get_scenario("dledger_leader_killed")
    b = Bounds(depth=0, faults=1)
    seen = {}

    def keep(run):
        seen["logs"] = {i: run.group.log(i) for i in run.group.ids}
        seen["leaders"] = dict(run.watch.leaders)

    rec = run_schedule(xs, "F:kill(leader)", b, on_lab=keep)
    assert rec.counts == dict.fromkeys(DLEDGER_KEYS, 0) | {"unacked": 1, "truncated": 1}
    assert seen["logs"] == {i: [(0, 2, b"b")] for i in ("n0", "n1", "n2")}
    assert seen["leaders"] == {1: {"n2"}, 2: {"n1"}}
    rec = run_schedule(xs, "", b, on_lab=keep)
    assert rec.outcome == "ok"
    assert seen["logs"]["n0"] == [(0, 1, b"a"), (1, 1, b"b")]


def test_bad_fault_name():
    xs = get_scenario("dledger_leader_killed")
    with pytest.raises(ScheduleError, match="unknown DLedger fault"):
        run_schedule(xs, "F:explode(n0)", Bounds(depth=0, faults=1))


def test_digest_is_the_state_not_the_object():
    """Two runs of one schedule end in the same digest (no object ids in it), a different
    end state gives another, and the split needs n1's term-2 VoteRequest slow."""
    xs = get_scenario("dledger_split_vote")
    b = Bounds(depth=3, latencies=(1, 500))
    one = run_schedule(xs, "d1 l1", b)
    two = run_schedule(xs, "d1 l1", b)
    assert one.final_digest == two.final_digest
    assert (one.outcome, run_schedule(xs, "", b).outcome) == ("split=1", "ok")
    assert run_schedule(xs, "", b).final_digest != one.final_digest
    rec = run_schedule(xs, "", b, record=True)
    assert [p.kind for p in rec.points] == ["o", "l", "l"]  # the two ticks at 2730, then
    assert rec.points[1].labels == ["n1->n0 1 ms", "n1->n0 500 ms"]  # n1's VoteRequest
