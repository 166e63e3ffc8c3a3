"""``python -m mqlab experiment …``: run a scenario or sweep spec and write Parquet.

Mirrors no RocketMQ class. Commands::

    python -m mqlab experiment run SPEC.yaml --out DIR [--runner sequential|pool|spark]
        [--workers N] [--master URL] [--seeds N] [--events all|none|N] [--no-progress]
    python -m mqlab experiment list SPEC.yaml        # the runs a spec expands to

``SPEC`` is a scenario or a sweep (``mqlab.experiments.sweep``). The output directory
gets ``metrics/`` and ``events/`` (Parquet partitioned by grid point) and ``sweep.json``
holding the exact command line and the mqlab version (``mqlab.experiments.parquet``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from mqlab.experiments.ship import ExecutorEnvironmentError
from mqlab.experiments.spark import SparkConfigurationError
from mqlab.experiments.sweep import Sweep, load_sweep

__all__ = ["main", "command_line"]


def command_line(argv: list[str]) -> str:
    """The reproducible command for a manifest: ``python -m mqlab experiment …``."""
    return "python -m mqlab experiment " + " ".join(shlex.quote(a) for a in argv)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mqlab experiment",
                                description="Run mqlab scenarios and sweeps.")  # fmt: skip
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a spec and write Parquet (metrics, events)")
    r.add_argument("spec", help="a scenario or sweep spec (.yaml/.yml/.json)")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--runner", choices=("sequential", "pool", "spark"), default="sequential")
    r.add_argument("--workers", type=int, default=None, help="pool: processes (default: CPUs)")
    r.add_argument(
        "--master",
        default=None,
        help="spark: master URL (default MQLAB_SPARK_MASTER / SPARK_REMOTE / local[*])",
    )
    r.add_argument("--seeds", type=int, default=None, help="only the first N seeds of the spec")
    r.add_argument(
        "--events",
        default=None,
        help="keep traces: all, none, or N (the first N seeds of each point)",
    )
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    ls = sub.add_parser("list", help="list the runs a spec expands to")
    ls.add_argument("spec")
    return p


def _adjust(sweep: Sweep, args: argparse.Namespace) -> Sweep:
    if args.seeds is not None:
        sweep = sweep.limit_seeds(args.seeds)
    if args.events is not None:
        events = int(args.events) if args.events.isdigit() else args.events
        sweep = Sweep(sweep.scenario, sweep.grid, sweep.seeds, sweep.name, events)
    return sweep


def _run_local(sweep: Sweep, args: argparse.Namespace):
    if args.runner == "pool":
        from mqlab.experiments.runners import run_process_pool

        return run_process_pool(sweep, max_workers=args.workers, progress=not args.no_progress)
    from mqlab.experiments.runners import run_sequential

    return run_sequential(sweep, progress=not args.no_progress)


def _run_spark(sweep: Sweep, args: argparse.Namespace, argv: list[str]) -> str:
    """Run on Spark and write; Ctrl-C cancels the sweep's jobs, then stops the session."""
    from mqlab.experiments.spark import get_session, is_connect, run_sweep_spark

    spark = get_session(args.master)
    try:
        where = "Spark Connect" if is_connect(spark) else spark.sparkContext.master
        print(f"running {len(sweep.configs())} run(s) of {sweep.name} on {where} …",
              file=sys.stderr)  # fmt: skip
        result = run_sweep_spark(sweep, spark, progress=not args.no_progress)
        return result.write(args.out, command=command_line(argv))
    except KeyboardInterrupt:
        print("mqlab experiment: cancelled the sweep's Spark jobs", file=sys.stderr)
        raise
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    try:
        sweep = load_sweep(args.spec)
        if args.command == "list":
            for c in sweep.configs():
                print(c.run_id, dict(c.params))
            return 0
        sweep = _adjust(sweep, args)
    except (OSError, ValueError, TypeError) as e:
        print(f"mqlab experiment: {e}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    n = len(sweep.configs())
    try:
        if args.runner == "spark":
            out = _run_spark(sweep, args, argv)
        else:
            out = _run_local(sweep, args).write(args.out, command=command_line(argv))
    except KeyboardInterrupt:
        print(f"mqlab experiment: interrupted; {sweep.name} was not written", file=sys.stderr)
        return 130
    except ExecutorEnvironmentError as e:  # the executors lack a package the runs need
        print(f"mqlab experiment: {e}", file=sys.stderr)
        return 1
    except SparkConfigurationError as e:  # e.g. yarn without HADOOP_CONF_DIR
        print(f"mqlab experiment: {e}", file=sys.stderr)
        return 2
    took = time.perf_counter() - started
    print(f"{n} run(s) of {sweep.name} in {took:.1f} s → {out}/metrics, {out}/events")
    return 0
