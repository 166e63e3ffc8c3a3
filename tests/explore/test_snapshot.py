"""mqlab.explore.snapshot: runs forked from the cluster at its arm point give the records
of runs that build the cluster, for every ready-made scenario and mutant."""

from __future__ import annotations

import os

import pytest
from test_explore import MUTANTS, TABLES, _bounds

from mqlab.explore.engine import run_schedule
from mqlab.explore.mutants import mutant
from mqlab.explore.scenarios import get_scenario
from mqlab.explore.schedule import ScheduleError
from mqlab.explore.search import exhaustive, replay
from mqlab.explore.snapshot import Snapshots, fork_available

pytestmark = pytest.mark.slow


def _no_children() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture(autouse=True)
def _clean(tmp_path, monkeypatch):
    # every store in a private directory: nothing may be left there, nor a child process
    from mqlab.explore import engine

    monkeypatch.setattr(engine, "_fast_tmp", lambda: str(tmp_path))
    yield
    assert os.listdir(tmp_path) == []
    assert _no_children()


def test_fork_is_available_here():
    # the test machine has fork and fallocate: the comparisons below compare something
    assert fork_available()


#: scenarios that restart a broker after their arm point: the child replaces store files
#: that the parent maps, so the snapshot is dropped after each run (``mqlab.explore.
#: snapshot``, step 3) and each run builds again (the records are still equal)
REBUILT = {"master_returns"}


def _records_equal(xs, schedules: list[str]) -> None:
    """Each schedule's record (choices, every choice point with its options and state
    digest, the outcome and its counts, the final digest, events run), built and forked."""
    bounds = _bounds(xs)
    with Snapshots() as snaps:
        for s in schedules:
            built = run_schedule(xs, s, bounds, record=True)
            forked = run_schedule(xs, s, bounds, record=True, snapshots=snaps)
            assert forked == built, s
        builds = len(schedules) if xs.name in REBUILT else 1
        assert (snaps.builds, snaps.forks) == (builds, len(schedules))


@pytest.mark.parametrize("name", sorted(TABLES))
def test_forked_runs_give_the_built_records(name):
    xs = get_scenario(name)
    table, _ = TABLES[name]
    _records_equal(xs, ["", "d1", *(s for _, _, s, _ in table if s != "(default)")])


@pytest.mark.parametrize(("name", "mut", "new_class", "schedule"), MUTANTS)
def test_forked_runs_give_the_built_records_under_a_mutant(name, mut, new_class, schedule):
    xs = get_scenario(name)
    with mutant(mut):
        _records_equal(xs, ["", "d1", schedule.replace("(default)", "")])
        with Snapshots() as snaps:
            assert replay(xs, schedule, snapshots=snaps).outcome == new_class


@pytest.mark.parametrize("name", ["consumer_join", "async_flush_power_cut"])
def test_forked_search_gives_the_pinned_table(name):
    # many runs from one snapshot, power cuts and restarts reloading the restored store
    xs = get_scenario(name)
    res = exhaustive(xs, _bounds(xs), snapshot=True)
    table, stats = TABLES[name]
    assert res.table() == table
    assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == stats


def test_a_snapshot_serves_many_runs_and_records_are_identical():
    xs = get_scenario("consumer_join")
    with Snapshots() as snaps:
        for s in ("", "d5 l1", "l1 d1 l1 l1 d2 l1", "l1"):
            built = replay(xs, s)
            forked = replay(xs, s, snapshots=snaps)
            assert (forked.choices, forked.outcome, forked.counts, forked.final_digest,
                    forked.events) == (built.choices, built.outcome, built.counts,
                                       built.final_digest, built.events)  # fmt: skip
        assert (snaps.builds, snaps.forks) == (1, 4)


def test_a_mutant_switched_on_builds_a_new_snapshot():
    xs = get_scenario("consumer_crash")
    with Snapshots() as snaps:
        assert replay(xs, "", snapshots=snaps).outcome == "dup:crash=2"
        with mutant("offset_before_consume"):
            assert replay(xs, "F:kill(consumer-1)", snapshots=snaps).outcome == "lost=1"
        assert replay(xs, "", snapshots=snaps).outcome == "dup:crash=2"
        assert (snaps.builds, snaps.forks) == (3, 3)


def test_a_schedule_error_in_the_child_is_raised_here():
    xs = get_scenario("async_flush_power_cut")
    with Snapshots() as snaps, pytest.raises(ScheduleError, match=r"choice 0: o5 but only 1"):
        replay(xs, "o5", snapshots=snaps)


def test_without_fork_the_runs_build_the_cluster(monkeypatch):
    monkeypatch.setenv("MQLAB_EXPLORE_FORK", "0")
    xs = get_scenario("consumer_crash")
    with Snapshots() as snaps:
        assert replay(xs, "", snapshots=snaps).outcome == "dup:crash=2"
        assert (snaps.builds, snaps.forks) == (0, 0)
