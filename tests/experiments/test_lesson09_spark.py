"""Lesson 09 on the Spark path: the explorer and exercise 09.4 as the notebook runs them.

Issue 13, defect 2: with Spark, ``aggregate.paired_comparison`` gave a Spark DataFrame and the
answer line ``float(cmp["mean_diff"].iloc[0])`` failed. The aggregates now return pandas on
both paths; these tests run the learner's lines on Spark and compare with pandas.
"""

import pandas.testing as pdt
import pytest

from mqlab.experiments import Param, Sweep, aggregate
from mqlab.lab.check import check
from mqlab.lab.lessons import lesson09 as L

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SEED = 7


def test_exercise_09_4_answer_line_on_spark(spark):
    """The worked answer with L.run_sweep(sweep, spark): a float, and the check accepts it."""
    sweep = Sweep(L.batch_scenario(SEED),
                  grid=(Param("batch", "consumers.0.pull_batch_size", (1, 32)),),
                  seeds=(SEED, SEED + 1, SEED + 2), events="none")  # fmt: skip
    batch = L.run_sweep(sweep, spark, slices=1)
    assert aggregate.is_spark(batch)
    cmp = aggregate.paired_comparison(batch, "batch", 1, 32, "pulls_issued")
    answer = round(float(cmp["mean_diff"].iloc[0]), 1)
    assert check("09.4", answer, seed=SEED)
    on_pandas = aggregate.paired_comparison(L.run_sweep(sweep), "batch", 1, 32, "pulls_issued")
    pdt.assert_frame_equal(cmp, on_pandas, check_dtype=False, check_exact=False, rtol=1e-9)


def test_explorer_aggregates_on_spark(spark):
    """The explorer over Spark tables: the same summary as over pandas, for two metrics."""
    on_spark, on_pandas = L.explorer(spark, SEED), L.explorer(None, SEED)
    assert aggregate.is_spark(on_spark.table())
    for metric in ("pulls_issued", "latency_p50_ms"):
        on_spark.metric.value = metric
        on_pandas.metric.value = metric
        pdt.assert_frame_equal(on_spark.summary, on_pandas.summary, check_dtype=False,
                               check_exact=False, rtol=1e-9)  # fmt: skip
