"""mqlab.explore on Spark: each level's schedule prefixes as tasks, the same table and
figures as the sequential search (levels under 4 items per core run on the driver, so
consumer_join at depth 8, whose levels reach 20 items, is what sends work to the tasks)."""

from __future__ import annotations

import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_spark_gives_the_sequential_table(spark):
    # the sequential table of consumer_join at its bounds is pinned in tests/explore
    xs = get_scenario("consumer_join")
    on_spark = explore(xs, Bounds(depth=xs.depth), runner="spark", spark=spark)
    assert on_spark.table() == [
        ("dup:rebalance=1", 4, "d5 l1", 6),
        ("dup:rebalance=1 overlap=1", 11, "(default)", 0),
        ("ok", 2, "l1 d1 l1 l1 d2 l1", 7),
    ]
    figures = (on_spark.runs, on_spark.states, on_spark.distinct, on_spark.pruned)
    assert figures == (76, 97, 72, 22)


def test_spark_tasks_plant_the_drivers_mutant(spark):
    from mqlab.explore.mutants import mutant

    xs = get_scenario("consumer_join")
    with mutant("dropped_pq_consumed"):
        res = explore(xs, Bounds(depth=xs.depth), runner="spark", spark=spark,
                      shrink_outcomes=False)  # fmt: skip
    assert "dup:rebalance=2 overlap=1" in res.outcomes()
