"""Sweeps on a local Spark session (mqlab.experiments.spark, .aggregate on Spark DataFrames)."""

import pandas.testing as pdt
import pytest

from mqlab.experiments.aggregate import confidence_intervals, distribution, paired_comparison
from mqlab.experiments.parquet import read_events, read_metrics
from mqlab.experiments.runners import run_process_pool, run_sequential
from mqlab.experiments.spark import run_sweep_spark
from mqlab.experiments.sweep import load_sweep

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPEC = {
    "sweep": "twenty",
    "scenario": {"name": "twenty", "duration_ms": 2000, "drain_ms": 1000, "warmup_ms": 1000,
                 "producers": [{"rate_per_s": 10, "arrival": "poisson"}],
                 "consumers": [{"count": 2, "consume_time_ms": 5}],
                 "faults": [{"at_ms": 500, "jitter_ms": 1000, "action": "kill_consumer",
                             "target": "consumer-1"}]},
    "grid": {"persist_first": {"path": "faults.0.persist_first", "values": [False, True]}},
    "seeds": 10,
    "events": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def sweep():
    return load_sweep(SPEC)


@pytest.fixture(scope="module")
def sequential(sweep):
    return run_sequential(sweep, progress=False)


@pytest.fixture(scope="module")
def on_spark(spark, sweep):
    result = run_sweep_spark(sweep, spark)
    yield result
    result.unpersist()


def test_twenty_run_sweep_end_to_end(on_spark, tmp_path):
    """20 runs as Spark tasks: 20 metrics rows, events of seed 0 of both points, written as
    Parquet partitioned by point and read back unchanged."""
    assert on_spark.metrics.count() == 20
    assert sorted(r.run_id for r in on_spark.events.select("run_id").distinct().collect()) == [
        "twenty-p000-s0", "twenty-p001-s0"]  # fmt: skip
    out = on_spark.write(tmp_path / "spark-out", command="test")
    parts = [p.name for p in (tmp_path / "spark-out" / "metrics").iterdir() if p.is_dir()]
    assert sorted(parts) == ["point=p000", "point=p001"]
    assert (tmp_path / "spark-out" / "sweep.json").exists() and out == str(tmp_path / "spark-out")
    metrics, events = on_spark.to_pandas()
    pdt.assert_frame_equal(read_metrics(tmp_path / "spark-out"), metrics)
    pdt.assert_frame_equal(read_events(tmp_path / "spark-out"), events)


def test_sequential_pool_and_spark_rows_are_identical(on_spark, sequential, sweep, spark):
    """Same seeds, same rows: sequential, process pool, Spark mapPartitions and mapInArrow."""
    metrics, events = on_spark.to_pandas()
    pdt.assert_frame_equal(metrics, sequential.metrics)
    pdt.assert_frame_equal(events, sequential.events)
    pool = run_process_pool(sweep, max_workers=2, progress=False)
    pdt.assert_frame_equal(pool.metrics, sequential.metrics)
    rdd = run_sweep_spark(sweep, spark, method="rdd", slices=3)
    try:
        pdt.assert_frame_equal(rdd.to_pandas()[0], sequential.metrics)
        pdt.assert_frame_equal(rdd.to_pandas()[1], sequential.events)
    finally:
        rdd.unpersist()


def test_spark_aggregations_match_pandas(on_spark, sequential):
    """distribution, confidence_intervals and paired_comparison give pandas' numbers."""
    for fn, args in ((distribution, ("deliveries", "persist_first")),
                     (confidence_intervals, ("deliveries", "persist_first")),
                     (confidence_intervals, (["deliveries", "duplicates"], "persist_first")),
                     (paired_comparison, ("persist_first", False, True, "deliveries"))):  # fmt: skip
        lazy = fn(on_spark.metrics, *args, as_spark=True)
        assert type(lazy).__module__.startswith("pyspark.")
        got = fn(on_spark.metrics, *args)  # collected: the same code reads both paths
        want = fn(sequential.metrics, *args)
        pdt.assert_frame_equal(got, want, check_dtype=False, check_exact=False, rtol=1e-9)
        pdt.assert_frame_equal(lazy.toPandas(), want, check_dtype=False, check_exact=False,
                               rtol=1e-9)  # fmt: skip


def test_unknown_method_is_refused(spark, sweep):
    """method must be 'rdd' or 'arrow'."""
    with pytest.raises(ValueError, match="method must be 'rdd' or 'arrow'"):
        run_sweep_spark(sweep, spark, method="pandas")


def test_interrupt_cancels_the_sweep_and_keeps_the_session(spark):
    """A kernel interrupt (SIGINT in the main thread) during run_sweep_spark: KeyboardInterrupt,
    the sweep's job group is cancelled (no active job left), and the session still works."""
    import _thread
    import threading
    import time
    from pathlib import Path

    slow = load_sweep(
        Path(__file__).resolve().parents[2] / "datasets/specs/crash_offset_persist.yaml"
    )
    tracker = spark.sparkContext.statusTracker()

    def interrupt_when_running():
        deadline = time.monotonic() + 120
        while not tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        _thread.interrupt_main()  # what Jupyter's "Interrupt kernel" does: SIGINT

    threading.Thread(target=interrupt_when_running, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run_sweep_spark(slow, spark, progress=False)
    deadline = time.monotonic() + 60
    while tracker.getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list(tracker.getActiveJobsIds()) == []
    assert spark.range(3).count() == 3
