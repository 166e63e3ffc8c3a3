"""mqlab.explore.snapshot: runs forked from the cluster at its arm point give the records
of runs that build the cluster, for every ready-made scenario and mutant."""

from __future__ import annotations

import os

import pytest
from test_explore import MUTANTS, TABLES, _bounds

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


@pytest.mark.parametrize("name", sorted(TABLES))
def test_forked_search_gives_the_built_table(name):
    xs = get_scenario(name)
    res = exhaustive(xs, _bounds(xs), snapshot=True)
    table, stats = TABLES[name]
    assert res.table() == table
    assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == stats


@pytest.mark.parametrize(("name", "mut", "new_class", "schedule"), MUTANTS)
def test_forked_search_catches_the_mutant_the_same(name, mut, new_class, schedule):
    xs = get_scenario(name)
    with mutant(mut):
        built = exhaustive(xs, _bounds(xs), shrink_outcomes=False)
        forked = exhaustive(xs, _bounds(xs), shrink_outcomes=False, snapshot=True)
    assert forked.table() == built.table()
    assert (forked.runs, forked.states, forked.distinct) == (built.runs, built.states,
                                                              built.distinct)  # fmt: skip
    assert new_class in forked.outcomes()


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
        assert replay(xs, "", snapshots=snaps).outcome == "dup:crash=3"
        with mutant("offset_before_consume"):
            assert replay(xs, "", snapshots=snaps).outcome == "lost=1"
        assert replay(xs, "", snapshots=snaps).outcome == "dup:crash=3"
        assert (snaps.builds, snaps.forks) == (3, 3)


def test_a_schedule_error_in_the_child_is_raised_here():
    xs = get_scenario("async_flush_power_cut")
    with Snapshots() as snaps, pytest.raises(ScheduleError, match=r"choice 0: o5 but only 1"):
        replay(xs, "o5", snapshots=snaps)


def test_without_fork_the_runs_build_the_cluster(monkeypatch):
    monkeypatch.setenv("MQLAB_EXPLORE_FORK", "0")
    xs = get_scenario("consumer_crash")
    with Snapshots() as snaps:
        assert replay(xs, "", snapshots=snaps).outcome == "dup:crash=3"
        assert (snaps.builds, snaps.forks) == (0, 0)
