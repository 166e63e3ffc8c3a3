"""The leader-loss sweep on Spark: the runs as Spark tasks and the aggregation in Spark SQL
give the same rows and the same table as pandas (mqlab.experiments.leader_loss)."""

import pandas.testing as pdt
import pytest

from mqlab.experiments import leader_loss as L

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_spark_table_equals_the_pandas_table(spark):
    """Spark SQL's exact percentile and pandas' quantile agree on every cell of the shipped
    dataset, to the bit."""
    on_spark = L.summary(L.spark_runs(spark))
    pdt.assert_frame_equal(on_spark, L.summary(L.load_runs()), check_exact=True)
    row = on_spark[(on_spark["poll_ms"] == 1000) & (on_spark["heartbeat_ms"] == 2000) & (on_spark["min_vote_ms"] == 300)
                   & (on_spark["kill_phase_pct"] == 5)].iloc[0]  # fmt: skip
    assert (row["unavailability_p50_ms"], row["unavailability_p90_ms"], row["lost"]) == (
        6679.0, 6919.0, 0)  # fmt: skip


def test_runs_as_spark_tasks_give_the_sequential_rows(spark):
    """Three points as three Spark tasks (embedded, local[2]): identical send and run rows."""
    pts = [L.Point(2000, 300, 1000, 5, seed=0), L.Point(1000, 1000, 3000, 50, seed=2),
           L.Point(2000, 300, 1000, 95, seed=1, poll_ms=30_000)]  # fmt: skip
    sends, runs = L.run_sweep_spark(spark, pts)
    seq_sends, seq_runs = L.run_sweep(pts)
    pdt.assert_frame_equal(sends, seq_sends)
    pdt.assert_frame_equal(runs, seq_runs)
    assert runs["lost"].tolist() == [0, 0, 0]
