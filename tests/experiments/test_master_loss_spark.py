"""The master-loss sweep on Spark: the runs as Spark tasks and the aggregation in Spark SQL
give the same rows and the same table as pandas (mqlab.experiments.master_loss)."""

import pandas.testing as pdt
import pytest

from mqlab.experiments import master_loss as M

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_spark_table_equals_the_pandas_table(spark):
    """Spark SQL's exact percentile and pandas' quantile agree on every row of the shipped
    dataset (the table the issue's closing note quotes)."""
    on_spark = M.summary(M.spark_sends(spark))
    pdt.assert_frame_equal(on_spark, M.summary(M.load_sends()), check_exact=True)
    row = on_spark[(on_spark["role"] == "SYNC_MASTER") & (on_spark["lose_after"] == 25)].iloc[0]
    assert (row["latency_p50_ms"], row["latency_p99_ms"], row["acked_lost"]) == (8.0, 11.26, 0)


def test_runs_as_spark_tasks_give_the_sequential_rows(spark):
    """Four points as four Spark tasks: identical send and run rows."""
    pts = [M.Point(r, "ASYNC_FLUSH", 25, seed=0) for r in M.ROLES] + [
        M.Point(r, "SYNC_FLUSH", 75, seed=1) for r in M.ROLES]  # fmt: skip
    sends, runs = M.run_sweep_spark(spark, pts)
    seq_sends, seq_runs = M.run_sweep(pts)
    pdt.assert_frame_equal(sends, seq_sends)
    pdt.assert_frame_equal(runs, seq_runs)
    assert runs["acked_lost"].tolist() == [5, 0, 5, 0]
