"""mqlab.explore on Spark: each level's schedule prefixes as tasks, the same table."""

from __future__ import annotations

import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_spark_gives_the_sequential_table(spark):
    xs = get_scenario("consumer_crash")
    bounds = Bounds(depth=xs.depth, faults=xs.fault_budget)
    seq = explore(xs, bounds)
    on_spark = explore(xs, bounds, runner="spark", spark=spark)
    assert on_spark.table() == seq.table() == [("dup:crash=3", 1, "(default)", 0)]
    assert (on_spark.runs, on_spark.states, on_spark.distinct) == (
        seq.runs,
        seq.states,
        seq.distinct,
    )


def test_spark_tasks_plant_the_drivers_mutant(spark):
    from mqlab.explore.mutants import mutant

    xs = get_scenario("consumer_crash")
    with mutant("offset_before_consume"):
        res = explore(xs, Bounds(depth=xs.depth), runner="spark", spark=spark)
    assert res.table() == [("lost=1", 1, "(default)", 0)]
