"""Benchmark: one sweep run sequentially and on Spark ``local[2]``; wall time and runs/s.

Mirrors no RocketMQ class. ``python -m mqlab.experiments.bench [--runs 200]`` builds a
sweep of ``--runs`` runs (a crash scenario × persist_first false/true × runs/2 seeds, about
0.15 s of CPU each), runs it with ``run_sequential`` and then twice with
``run_sweep_spark`` on a fresh ``local[2]`` session, checks that every run gave the same
metrics rows, and prints wall times, runs/s and the speed-up (target ≥ 1.8× on 2 cores).
``speedup`` compares the warm Spark sweep (Python workers already up) with the sequential
one; ``speedup_cold`` includes starting the workers and importing mqlab in them, and
``speedup_cold_with_session_start`` the JVM start as well. Each Spark time covers
shipping configs, running, persisting and collecting the metrics. The figures are only as
quiet as the machine: ``load_average_1m`` says how busy it was.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from mqlab.experiments.sweep import Sweep

__all__ = ["bench_sweep", "run_bench", "main"]


def bench_sweep(runs: int = 200) -> Sweep:
    """The benchmark sweep: ``runs`` runs (rounded down to an even number, at least 2)."""
    seeds = max(1, runs // 2)
    return Sweep.from_dict({
        "sweep": "bench",
        "scenario": {
            "name": "bench", "duration_ms": 8000, "drain_ms": 4000,
            "topics": [{"name": "TopicTest", "queues": 4}],
            "producers": [{"topic": "TopicTest", "rate_per_s": 20, "arrival": "poisson"}],
            "consumers": [{"topic": "TopicTest", "count": 2, "consume_time_ms": 10}],
            "faults": [{"at_ms": 4000, "jitter_ms": 2000, "action": "kill_consumer",
                        "target": "consumer-1"}],
        },
        "grid": {"persist_first": {"path": "faults.0.persist_first", "values": [False, True]}},
        "seeds": seeds,
        "events": 1,
    })  # fmt: skip


def run_bench(
    runs: int = 200, *, master: str = "local[2]", progress: bool = True
) -> dict[str, Any]:
    """Run the benchmark; return the figures."""
    import pandas.testing as pdt

    from mqlab.experiments.parquet import sort_metrics
    from mqlab.experiments.runners import run_sequential
    from mqlab.experiments.spark import get_session, run_sweep_spark

    sweep = bench_sweep(runs)
    n = len(sweep.configs())
    t0 = time.perf_counter()
    seq = run_sequential(sweep, progress=progress)
    t_seq = time.perf_counter() - t0
    t0 = time.perf_counter()
    spark = get_session(master, app_name="mqlab-bench")
    t_session = time.perf_counter() - t0
    times = []
    for _ in range(2):  # cold (Python workers start, import mqlab), then warm
        t0 = time.perf_counter()
        result = run_sweep_spark(sweep, spark)
        metrics = sort_metrics(result.metrics.toPandas())
        times.append(time.perf_counter() - t0)
        pdt.assert_frame_equal(seq.metrics, metrics)
        result.unpersist()
    cold, warm = times
    cores = spark.sparkContext.defaultParallelism
    spark.stop()
    return {
        "runs": n,
        "events_kept": int(len(seq.events)),
        "cpus": os.cpu_count(),
        "spark_master": master,
        "spark_parallelism": cores,
        "sequential_s": round(t_seq, 2),
        "spark_session_start_s": round(t_session, 2),
        "spark_cold_s": round(cold, 2),
        "spark_warm_s": round(warm, 2),
        "sequential_runs_per_s": round(n / t_seq, 2),
        "spark_cold_runs_per_s": round(n / cold, 2),
        "spark_warm_runs_per_s": round(n / warm, 2),
        "speedup": round(t_seq / warm, 2),
        "speedup_cold": round(t_seq / cold, 2),
        "speedup_cold_with_session_start": round(t_seq / (cold + t_session), 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "identical_metrics": True,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mqlab.experiments.bench", description=__doc__)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    figures = run_bench(args.runs, master=args.master, progress=not args.no_progress)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        width = max(len(k) for k in figures)
        for k, v in figures.items():
            print(f"{k:<{width}}  {v}")
        verdict = "meets" if figures["speedup"] >= 1.8 else "misses"
        print(f"speed-up {figures['speedup']}× {verdict} the 1.8× target on 2 cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
