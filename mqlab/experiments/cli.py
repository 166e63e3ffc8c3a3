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
    if args.runner == "spark":
        from mqlab.experiments.spark import get_session, run_sweep_spark

        print(f"running {n} run(s) of {sweep.name} on Spark …", file=sys.stderr)
        result = run_sweep_spark(sweep, get_session(args.master))
    elif args.runner == "pool":
        from mqlab.experiments.runners import run_process_pool

        result = run_process_pool(sweep, max_workers=args.workers, progress=not args.no_progress)
    else:
        from mqlab.experiments.runners import run_sequential

        result = run_sequential(sweep, progress=not args.no_progress)
    out = result.write(args.out, command=command_line(argv))
    took = time.perf_counter() - started
    print(f"{n} run(s) of {sweep.name} in {took:.1f} s → {out}/metrics, {out}/events")
    return 0
