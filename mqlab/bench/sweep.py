"""Benchmark: one sweep run sequentially and on Spark four ways, side by side in one run.

Mirrors no RocketMQ class. ``python -m mqlab.bench.sweep [--runs 200]`` builds a
sweep of ``--runs`` runs (a crash scenario × persist_first false/true × runs/2 seeds, about
0.13 s of CPU each; ``--events`` says whose traces are kept: the first N seeds of each
point, default 1, or ``all``) and runs it, one after another in this process:

1. ``sequential``: ``run_sequential`` (the baseline; its process CPU time too);
2. ``pool``: ``run_process_pool`` with 2 processes, no Spark: what plain parallelism gives
   on this machine, the reference for Spark's own overhead;
3. ``local``: ``run_sweep_spark`` on a fresh ``local[2]`` session;
4. ``standalone``: on a ``LocalCluster`` (a master and 2 workers × 1 core on 127.0.0.1,
   ``mqlab.experiments.cluster``), mqlab shipped to the executors;
5. ``connect``: through a Spark Connect server on that cluster (``SPARK_REMOTE`` style);
6. ``sequential`` again, so that a change of machine load shows.

Each Spark mode runs the sweep twice on one session: ``cold`` (executors and Python workers
start, mqlab is shipped and imported) and ``warm``. Each time covers shipping configs,
running, persisting and collecting the metrics, which must equal the sequential runner's.
``speedup`` compares a warm Spark sweep with the mean of the two sequential ones,
``speedup_cold`` a cold one, ``speedup_cold_with_session_start`` adds the session start.
The target is 1.8× on 2 cores. The figures are only as quiet as the machine:
``load_average_1m`` is read after each measurement (the machine has ``cpus`` cores), and
``cpu_s`` is the CPU time this process and all its descendants (JVMs, executors, Python
workers) used meanwhile, which other users of the machine change much less than wall time: with two idle
cores a mode's wall time cannot beat ``cpu_s / 2``, so ``cpu_bound_speedup`` (``cpus`` ×
the sequential CPU time / the warm sweep's) is the speed-up the mode would reach if it
had every core to itself all the time, and the difference from ``speedup`` is waiting.
``--modes`` picks a subset.
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


def bench_sweep(runs: int = 200, events: int | str = 1) -> Sweep:
    """The benchmark sweep: ``runs`` runs (rounded down to an even number, at least 2);
    ``events``: keep the traces of the first N seeds of each point, ``"all"`` or ``"none"``."""
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
        "events": events,
    })  # fmt: skip


MODES = ("sequential", "pool", "local", "standalone", "connect")


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def tree_cpu_s() -> float | None:
    """CPU seconds used so far by this process and every process below it (Linux ``/proc``):
    the Spark JVMs, executors and Python workers this benchmark starts included."""
    proc = "/proc"
    if not os.path.isdir(proc):
        return None
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(name)
        children.setdefault(int(fields[1]), []).append(pid)
        ticks[pid] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return round(total / os.sysconf("SC_CLK_TCK"), 2)


def _cpu_since(start: float | None) -> float | None:
    now = tree_cpu_s()
    return None if start is None or now is None else round(now - start, 2)


def _spark_mode(sweep: Sweep, reference: Any, make_session, *, progress: bool) -> dict[str, Any]:
    """Session start, then a cold and a warm sweep on it; metrics checked against ``reference``."""
    import pandas.testing as pdt

    from mqlab.experiments.parquet import sort_metrics
    from mqlab.experiments.spark import run_sweep_spark

    t0 = time.perf_counter()
    spark = make_session()
    out: dict[str, Any] = {"session_start_s": round(time.perf_counter() - t0, 2)}
    try:
        for label in ("cold", "warm"):
            t0, c0 = time.perf_counter(), tree_cpu_s()
            result = run_sweep_spark(sweep, spark, progress=progress)
            metrics = sort_metrics(result.metrics.toPandas())
            out[f"{label}_s"] = round(time.perf_counter() - t0, 2)
            out[f"{label}_cpu_s"] = _cpu_since(c0)
            out[f"{label}_load_average_1m"] = _load()
            pdt.assert_frame_equal(reference, metrics)
            result.unpersist()
    finally:
        spark.stop()
    return out


def run_bench(runs: int = 200, *, modes: tuple[str, ...] = MODES, progress: bool = True,
              events: int | str = 1) -> dict[str, Any]:  # fmt: skip
    """Run the benchmark in ``modes`` (sequential always); return the figures."""
    import pandas.testing as pdt

    from mqlab.experiments.runners import run_process_pool, run_sequential
    from mqlab.experiments.spark import get_session

    sweep = bench_sweep(runs, events)
    n = len(sweep.configs())
    figures: dict[str, Any] = {
        "runs": n,
        "cpus": os.cpu_count(),
        "load_average_1m_at_start": _load(),
    }

    def sequential(key: str):
        t0, c0 = time.perf_counter(), tree_cpu_s()
        result = run_sequential(sweep, progress=progress)
        figures[key] = {"wall_s": round(time.perf_counter() - t0, 2), "cpu_s": _cpu_since(c0),
                        "load_average_1m": _load()}  # fmt: skip
        return result

    seq = sequential("sequential")
    figures["events_kept"] = int(len(seq.events))
    cluster = server = None
    if "pool" in modes:
        t0, c0 = time.perf_counter(), tree_cpu_s()
        pool = run_process_pool(sweep, max_workers=2, progress=progress,
                                chunksize=max(1, n // 8))  # fmt: skip
        figures["pool ×2 processes"] = {
            "wall_s": round(time.perf_counter() - t0, 2), "cpu_s": _cpu_since(c0),
            "load_average_1m": _load()}  # fmt: skip
        pdt.assert_frame_equal(seq.metrics, pool.metrics)
    try:
        if "local" in modes:
            figures["local[2]"] = _spark_mode(
                sweep, seq.metrics, lambda: get_session("local[2]", app_name="mqlab-bench"),
                progress=progress)  # fmt: skip
        if "standalone" in modes or "connect" in modes:
            from mqlab.experiments.cluster import ConnectServer, LocalCluster

            t0 = time.perf_counter()
            cluster = LocalCluster(workers=2, cores=1).start()
            figures["cluster_start_s"] = round(time.perf_counter() - t0, 2)
            conf = {k: v for k, v in cluster.spark_defaults().items()
                    if k != "spark.driver.memory"}  # fmt: skip
            if "standalone" in modes:
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                figures["standalone 2×1 core"] = _spark_mode(
                    sweep, seq.metrics,
                    lambda: get_session(cluster.url, app_name="mqlab-bench", config=conf),
                    progress=progress)  # fmt: skip
            if "connect" in modes:
                t0 = time.perf_counter()
                server = ConnectServer(cluster.url, sys.executable, root=cluster.root).start()
                figures["connect_server_start_s"] = round(time.perf_counter() - t0, 2)
                figures["connect (on the cluster)"] = _spark_mode(
                    sweep, seq.metrics, lambda: get_session(server.url, app_name="mqlab-bench"),
                    progress=progress)  # fmt: skip
    finally:
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.stop()
    sequential("sequential_again")
    base = (figures["sequential"]["wall_s"] + figures["sequential_again"]["wall_s"]) / 2
    figures["sequential_mean_s"] = round(base, 2)
    seq_cpu = [figures[k]["cpu_s"] for k in ("sequential", "sequential_again")]
    cpu_base = None if None in seq_cpu else sum(seq_cpu) / 2
    cpus = os.cpu_count() or 1
    pool_figures = figures.get("pool ×2 processes")
    if pool_figures:
        pool_figures["speedup"] = round(base / pool_figures["wall_s"], 2)
        if cpu_base and pool_figures["cpu_s"]:
            pool_figures["cpu_bound_speedup"] = round(cpus * cpu_base / pool_figures["cpu_s"], 2)
    for f in figures.values():
        if isinstance(f, dict) and "warm_s" in f:
            if cpu_base and f["warm_cpu_s"]:
                f["cpu_bound_speedup"] = round(cpus * cpu_base / f["warm_cpu_s"], 2)
            f["speedup"] = round(base / f["warm_s"], 2)
            f["speedup_cold"] = round(base / f["cold_s"], 2)
            f["speedup_cold_with_session_start"] = round(
                base / (f["cold_s"] + f["session_start_s"]), 2)  # fmt: skip
    figures["identical_metrics"] = True
    return figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mqlab.bench.sweep", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--modes", default=",".join(MODES),
                   help=f"comma-separated subset of {','.join(MODES)}")  # fmt: skip
    p.add_argument(
        "--events",
        default="1",
        help="keep the traces of the first N seeds of each point, or 'all'/'none'",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    unknown = set(modes) - set(MODES)
    if unknown:
        p.error(f"unknown mode(s) {sorted(unknown)}; known: {', '.join(MODES)}")
    events = args.events if args.events in ("all", "none") else int(args.events)
    figures = run_bench(args.runs, modes=modes, progress=not args.no_progress, events=events)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for key, value in figures.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"    {k:<34} {v}")
        else:
            print(f"{key:<38} {value}")
    for key, f in figures.items():
        if isinstance(f, dict) and "speedup" in f:
            if "warm_s" not in f:
                print(f"{key}: speed-up {f['speedup']}× (no Spark)")
                continue
            verdict = "meets" if f["speedup"] >= 1.8 else "misses"
            print(f"{key}: speed-up {f['speedup']}× warm, {f['speedup_cold']}× cold "
                  f"({verdict} the 1.8× target on 2 cores; "
                  f"{f.get('cpu_bound_speedup')}× if CPU-bound)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
