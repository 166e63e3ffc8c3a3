"""mqlab.explore.outcome: the explorer's plain-Python counts (``delivery_counts``) are the
lessons' pandas checkers' counts (``checker_counts``) on every ready-made broker scenario's
default run, its pinned tables' schedules, random walks, and every planted mutant's run."""

from __future__ import annotations

import random

import pytest
from test_explore import MUTANTS, TABLES, _bounds

from mqlab.explore.engine import Bounds, run_schedule
from mqlab.explore.mutants import mutant
from mqlab.explore.outcome import checker_counts, delivery_counts
from mqlab.explore.scenarios import SCENARIOS, get_scenario

pytestmark = pytest.mark.slow

#: the scenarios that build a broker Lab (a DLedger scenario classifies its own runs)
BROKER = sorted(n for n, xs in SCENARIOS.items() if not hasattr(xs, "build_to_arm"))


def _compare(xs, schedule: str = "", bounds: Bounds | None = None, pick=None) -> dict:
    """Run ``schedule``; on its finished lab, the fast counts must be the checkers'. Returns
    the counts (to show the comparison met non-zero ones)."""
    seen: dict = {}

    def check(lab) -> None:
        fast = delivery_counts(lab)
        assert fast == checker_counts(lab), (xs.name, schedule)
        seen.update(fast)

    run_schedule(xs, schedule, bounds or _bounds(xs), record=pick is not None, pick=pick,
                 on_lab=check)  # fmt: skip
    assert seen, "the run was not classified"
    return seen


def test_every_broker_scenario_is_covered():
    # the comparison below reaches every scenario with a pinned table, and more
    assert set(TABLES) <= set(BROKER)
    assert len(BROKER) >= 10


@pytest.mark.parametrize("name", BROKER)
def test_fast_counts_are_the_checkers_counts(name):
    xs = get_scenario(name)
    table = TABLES.get(name, ([], None))[0]
    schedules = ["", "d1", *(s for _, _, s, _ in table if s != "(default)")]
    totals: dict[str, int] = {}
    for s in schedules:
        for k, v in _compare(xs, s).items():
            totals[k] = totals.get(k, 0) + v
    rng = random.Random(f"outcome-fast {name}")
    for _ in range(2):  # random walks within 40 choice points
        walk = Bounds(depth=40, faults=xs.fault_budget, window_ms=xs.window_ms)
        for k, v in _compare(xs, "", walk, pick=lambda opts: rng.randrange(len(opts))).items():
            totals[k] = totals.get(k, 0) + v
    if name in ("consumer_join", "retry_rebalance", "consumer_join_at_persist"):
        assert totals["dup:rebalance"] > 0 and totals["overlap"] > 0  # compared non-zero counts


@pytest.mark.parametrize(("name", "mut", "new_class", "schedule"), MUTANTS)
def test_fast_counts_under_a_mutant(name, mut, new_class, schedule):
    xs = get_scenario(name)
    with mutant(mut):
        _compare(xs, schedule.replace("(default)", ""))
