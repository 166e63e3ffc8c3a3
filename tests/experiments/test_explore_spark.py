"""mqlab.explore on Spark: each level's schedule prefixes as tasks, the same table and
figures as the sequential search (levels under 4 items per core run on the driver, so
consumer_join at depth 8, whose levels reach 20 items, is what sends work to the tasks),
with the tasks claiming items and reading the journal (a local session) or striped (the
way executors on other machines run)."""

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
    df = on_spark.spark_frame(spark)
    assert df.columns == ["outcome", "count", "shortest_schedule", "depth"]
    assert [tuple(r) for r in df.orderBy("outcome").collect()] == on_spark.table()


def test_spark_tasks_plant_the_drivers_mutant(spark):
    from mqlab.explore.mutants import mutant

    xs = get_scenario("consumer_join")
    with mutant("dropped_pq_consumed"):
        res = explore(xs, Bounds(depth=xs.depth), runner="spark", spark=spark,
                      shrink_outcomes=False)  # fmt: skip
    assert "dup:rebalance=2 overlap=1" in res.outcomes()


def test_spark_without_the_journal_gives_the_same_table(spark):
    # executors on other machines cannot read the journal: striped tasks, the table as the
    # level starts (forced here on a local session)
    from mqlab.explore.engine import _fast_tmp
    from mqlab.explore.journal import Journal
    from mqlab.explore.runners import _SparkMapper
    from mqlab.explore.search import exhaustive

    xs = get_scenario("consumer_join")
    with Journal(_fast_tmp()) as j:
        res = exhaustive(xs, Bounds(depth=xs.depth), mapper=_SparkMapper(spark, j, claiming=False),
                         journal=j, shrink_outcomes=False)  # fmt: skip
    assert res.outcomes() == {"dup:rebalance=1": 4, "dup:rebalance=1 overlap=1": 11, "ok": 2}
    assert (res.runs, res.states, res.distinct, res.pruned) == (76, 97, 72, 22)


def test_a_failing_spark_task_is_raised_not_waited_for(spark):
    import os
    import pickle

    from mqlab.explore.engine import _fast_tmp
    from mqlab.explore.journal import Journal
    from mqlab.explore.runners import _SparkLocal
    from mqlab.explore.schedule import Choice
    from mqlab.explore.search import Item

    xs = get_scenario("consumer_join")
    items = [Item(()), Item((Choice("o", 9),))]  # the second cannot run: its point is a latency
    blob = pickle.dumps((xs, Bounds(depth=4), frozenset(), items))
    with Journal(_fast_tmp()) as j:
        local = _SparkLocal(spark, 2, j)
        try:
            with pytest.raises(
                Exception, match="choice 0 is a latency point, the schedule says o9"
            ):
                list(local.records(blob, len(items)))
        finally:
            local.close()
    assert not os.path.exists(local.levels)


def test_walks_on_spark_give_the_table_run_here_gives(spark):
    # each walk an item of one level, claimed by the session's tasks, read in seed order
    from mqlab.explore.runners import walks
    from mqlab.explore.search import random_walks

    xs = get_scenario("consumer_join")
    b = Bounds(depth=40)
    here = random_walks(xs, b, range(8), shrink_outcomes=False)
    there = walks(xs, b, range(8), runner="spark", spark=spark, shrink_outcomes=False)
    rows = [(r.outcome, r.count, r.runs, str(r.schedule), r.found_at) for r in there.rows]
    assert rows == [(r.outcome, r.count, r.runs, str(r.schedule), r.found_at) for r in here.rows]
    assert (there.runs, there.states, there.distinct) == (8, here.states, here.distinct)
    assert sum(r.runs for r in there.rows) == 8
