"""``python -m mqlab explore SCENARIO [--bounds …] [--runner sequential|pool|spark]``.

Prints the outcome table (outcome, count of distinct final states, depth, shortest
schedule), then runs, states visited, distinct states, how the table grew level by level
(runs and classes against the moves of the level; for walks, the walk that found each
class) and whether the last levels added nothing, and, with ``--compare-por``, the
same search without the partial-order reduction and the reduction it gave. ``--replay``
runs one schedule and prints its outcome; ``--walks N`` does N random walks instead of
the exhaustive search, ``--pct N`` N PCT runs (``--pct-depth d``: d - 1 change points,
``mqlab.explore.search.PCT``), each seeded 0 … N-1: the same seeds, the same table, on
every ``--runner`` (a pool's or Spark's workers run them, the driver reads them in seed
order and shrinks what they found); both print each class's schedule shrunk, and the walk
that first found it. A shrunk schedule of two moves or more is then searched for one with
fewer (``mqlab.explore.search.shortest``, at most ``SHORTEST_RUNS`` runs a class); a class
whose search ran out of runs is marked ``*`` (its schedule is then not shown to be the
shortest). Ctrl-C stops a search: the table so far is printed, marked incomplete.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["main", "stop_on_sigint"]


def main(argv: list[str]) -> int:
    from mqlab.explore.engine import Bounds
    from mqlab.explore.runners import RUNNERS, explore
    from mqlab.explore.scenarios import SCENARIOS, get_scenario

    p = argparse.ArgumentParser(prog="python -m mqlab explore", description=__doc__.split("\n")[0])
    p.add_argument("scenario", nargs="?", help=f"one of {sorted(SCENARIOS)}")
    p.add_argument(
        "--bounds",
        default="",
        help="depth=N|any,deviations=K,faults=N,window=MS,latencies=1/5,sticky=0/1/2,"
        "por=0/1,runs=N (deviations=K alone: at most K moves anywhere in the run, fewest "
        "first; sticky=1: a latency move may keep a connection slow from there on, L<i>; "
        "sticky=2: latency moves only do that)",
    )
    p.add_argument("--runner", default="sequential", choices=RUNNERS)
    p.add_argument("--workers", type=int, default=None, help="pool processes (default: cores)")
    p.add_argument(
        "--mutant", action="append", default=[], help="plant a bug (mqlab.explore.mutants)"
    )
    p.add_argument("--compare-por", action="store_true", help="also search without the reduction")
    p.add_argument("--replay", metavar="SCHEDULE", help="run one schedule and print its outcome")
    p.add_argument("--walks", type=int, default=0, help="N random walks instead of the search")
    p.add_argument(
        "--pct",
        type=int,
        default=0,
        metavar="N",
        help="N PCT runs instead of the search (Burckhardt et al., ASPLOS 2010)",
    )
    p.add_argument(
        "--pct-depth",
        type=int,
        default=3,
        metavar="D",
        help="PCT's bug depth: D - 1 priority change points a run (default 3)",
    )
    p.add_argument("--list", action="store_true", help="list the scenarios")
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    if a.list or not a.scenario:
        for name, xs in sorted(SCENARIOS.items()):
            print(f"{name:<24} {xs.text}")
        return 0 if a.list else 2
    try:
        xs = get_scenario(a.scenario)
        bounds = Bounds.parse(a.bounds, depth=xs.depth, faults=xs.fault_budget,
                              window_ms=xs.window_ms)  # fmt: skip
    except ValueError as e:
        print(f"mqlab explore: {e}", file=sys.stderr)
        return 2
    if a.walks < 0 or a.pct < 0 or a.pct_depth < 1:
        print("mqlab explore: --walks and --pct must be >= 0, --pct-depth >= 1", file=sys.stderr)
        return 2
    if a.walks and a.pct:
        print("mqlab explore: --walks or --pct, not both in one run", file=sys.stderr)
        return 2
    from mqlab.explore.mutants import mutant

    with mutant(*a.mutant):
        if a.replay is not None:
            from mqlab.explore.schedule import ScheduleError
            from mqlab.explore.search import replay

            try:
                rec = replay(xs, a.replay, bounds)
            except ScheduleError as e:
                print(f"mqlab explore: {e}", file=sys.stderr)
                return 2
            print(f"{rec.outcome}  ({rec.events} events, schedule {rec.schedule})")
            return 0
        if a.walks or a.pct:
            from mqlab.explore.runners import walks

            res = walks(xs, bounds, range(a.walks or a.pct), runner=a.runner, workers=a.workers,
                        pct_depth=0 if a.walks else a.pct_depth,
                        progress=not a.no_progress)  # fmt: skip
            if a.pct:
                print(f"PCT, depth {a.pct_depth}, bounds {bounds}, {res.seconds:.1f} s")
            print(res.format(growth=True))
            return 0
        stop = {"now": False}
        t0 = time.perf_counter()
        with stop_on_sigint(stop):
            res = explore(xs, bounds, runner=a.runner, workers=a.workers,
                          progress=not a.no_progress, cancel=lambda: stop["now"])  # fmt: skip
        print(f"scenario {xs.name}: {xs.text}")
        print(f"bounds {bounds}, runner {a.runner}, {time.perf_counter() - t0:.1f} s")
        print(res.format(growth=True))
        if a.compare_por and bounds.por:
            off = explore(xs, Bounds(**{**_fields(bounds), "por": False}), runner=a.runner,
                          workers=a.workers, progress=False, shrink_outcomes=False)  # fmt: skip
            same = off.outcomes() == res.outcomes()
            print(f"without POR: runs {off.runs}, states visited {off.states}, distinct "
                  f"{off.distinct}; reduction: runs x{off.runs / max(1, res.runs):.2f}, states "
                  f"x{off.states / max(1, res.states):.2f}; same outcomes: {same}")  # fmt: skip
    return 0


@contextlib.contextmanager
def stop_on_sigint(stop: dict) -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt as usual and also sets ``stop["now"]``, which the
    search reads before each record (``cancel``).

    CPython swallows a KeyboardInterrupt that lands in a finalizer (it prints "Exception
    ignored in ..."): a run's suspended generator tasks are closed when the collector frees
    its lab, so a Ctrl-C at that moment went unseen and the search ran on to its end.
    Outside the main thread (where Python allows no handler) it changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        stop["now"] = True
        signal.default_int_handler(signum, frame)

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _fields(b) -> dict:
    from dataclasses import fields

    return {f.name: getattr(b, f.name) for f in fields(b)}
