"""``python -m mqlab bench explore``: how fast schedule exploration runs.

Prints, for one scenario (default ``consumer_join``, the lesson's):

1. one run split into its phases (CPU ms, mean of ``--runs`` replays of the default
   schedule, through the engine's own steps, so a DLedger group is timed as well):
   building the cluster and playing it to the arm point, the explored rest, classifying
   the outcome, tearing the store down; and schedules per second per core. Building to
   the arm point is what a snapshot/fork of the cluster would save per run;
2. the exhaustive search at the scenario's bounds on each runner asked for (``--runners
   sequential,pool,spark``): wall seconds, CPU seconds of the whole process tree (this
   process, pool workers, Spark's JVM and Python workers: ``psutil``), runs, runs/s, and
   the speed-up over sequential; every runner's table and figures must be the sequential
   one's (checked, printed); then the *ceiling*: the sequential search run in as many
   independent processes at once as there are workers, its throughput against one alone
   (what the machine gives right now). Every runner searches once at depth <= 6 before
   the clock (imports, the pool, Spark's Python workers); ``--repeat N`` takes the runners
   in turn N times: each line's speed-up is over the same round's first runner (the runs
   next to each other in time: this machine's speed drifts by 20% over minutes), and the
   summary gives the best walls and the median of the rounds' speed-ups. ``--speedup``: consumer_join
   at depth 13 (~18 s sequential), sequential, pool of 2 and Spark ``local[2]``, twice,
   the load average printed;
3. with ``--por``, the search without the partial-order reduction: runs and states.

``--phases``: the phases of 1. for every ready-made scenario (``--scenarios``), with the
build's share of a run and the most a free snapshot of the arm point would give (a run
without its build): x1.1 for a DLedger group, whose time goes after the arm point, up to
x4 where consumers start before it.

``--reach``: per ready-made scenario (``--scenarios``), in one run, side by side: the
systematic search at its reach bounds (``REACH_BOUNDS``, else the scenario's own), ``--walks``
random walks and ``--pct`` PCT runs (depth ``--pct-depth``), both within 40 choice
points, all three on ``--runner`` (``--workers``); for each, the runs, wall and CPU
seconds, schedules per second per core (runs over CPU seconds: a search's or the walks'
shrinking is in its CPU, not in its runs), and every class with the wall second it was
first found at; then the classes the walks or PCT found that the search did not
(``missed``).
"""

from __future__ import annotations

import argparse
import time

__all__ = ["main"]


def _phases(xs, n: int) -> dict[str, float]:
    """Mean CPU ms per phase of ``n`` default runs, each through the engine's own steps
    (``mqlab.explore.engine``: ``_build_to_arm``, ``_run_from_arm``, the teardown of
    ``_run_schedule``), with the collector set as ``run_schedule`` sets it."""
    from mqlab.explore.engine import _freeze_imports
    from mqlab.runtime.sim import _fewer_gc_passes

    tot = dict.fromkeys(PHASES, 0.0)
    for _ in range(n):
        with _fewer_gc_passes():  # as ``run_schedule`` runs it
            _one_run(xs, tot, n)
        _freeze_imports()
    return tot


#: A run's phases, as ``_phases`` splits it.
PHASES = ("build_to_arm", "explored_part", "outcome", "teardown")


def _one_run(xs, tot: dict[str, float], n: int):
    """One default run of ``xs``, each phase's CPU ms / ``n`` added to ``tot``: building
    and playing the cluster to the arm point; the rest (the chooser armed, every default
    taken), with the state digest; classifying the outcome; closing the lab and removing
    its store. The outcome is what the run computed, timed again on the finished lab (a
    classification only reads it) and taken out of the rest. Returns the run's record: the
    very run ``replay(xs, "")`` makes."""
    import shutil

    from mqlab.explore.engine import Bounds, _build_to_arm, _run_from_arm
    from mqlab.explore.outcome import outcome_counts
    from mqlab.explore.schedule import Schedule

    clock = time.process_time
    classified = [0.0]

    def on_lab(lab) -> None:
        t = clock()
        own = getattr(lab, "explore_outcome", None)
        if own is not None:  # a DLedger group classifies itself
            own(pre.ctx.sends)
        else:
            outcome_counts(lab, pre.ctx.sends)
        classified[0] = clock() - t

    t0 = clock()
    pre = _build_to_arm(xs)
    t1 = clock()
    try:
        rec = _run_from_arm(xs, pre, Schedule.parse(""), Bounds(depth=0), record=False,
                            sleep=frozenset(), sleep_at=-1, outcome_cache=None, pick=None,
                            visited=None, on_lab=on_lab)  # fmt: skip
    finally:
        t2 = clock()
        pre.lab.close()
        shutil.rmtree(pre.tmp, ignore_errors=True)
        t3 = clock()
    rest = t2 - t1 - 2 * classified[0]  # on_lab's own classification is not the run's
    for k, d in zip(PHASES, (t1 - t0, rest, classified[0], t3 - t2), strict=True):
        tot[k] += d * 1000 / n
    return rec


def _phases_table(a) -> int:
    """``--phases``: per ready-made scenario (``--scenarios``), a run's phases, and what a
    snapshot of the arm point could give at most: a run without its build."""
    from mqlab.explore.scenarios import SCENARIOS, get_scenario
    from mqlab.explore.search import replay

    names = [x for x in a.scenarios.split(",") if x] or sorted(SCENARIOS)
    print(f"one run, CPU ms (mean of {a.runs} default runs; a free arm-point snapshot would "
          f"leave the rest)")  # fmt: skip
    print(f"{'scenario':<26} " + " ".join(f"{k:>13}" for k in PHASES)
          + f" {'total':>7} {'build share':>11} {'at most':>8}")  # fmt: skip
    for name in names:
        xs = get_scenario(name)
        replay(xs, "")  # its lazy imports, before the clock
        ph = _phases(xs, a.runs)
        total = sum(ph.values())
        rest = total - ph["build_to_arm"]
        print(f"{name:<26} " + " ".join(f"{v:13.1f}" for v in ph.values())
              + f" {total:7.1f} {ph['build_to_arm'] / total:11.0%} "
              f"{'x' + format(total / rest, '.2f'):>8}")  # fmt: skip
    return 0


def _per_core(xs, n: int) -> tuple[float, float, float, float]:
    """Schedules per CPU second of ``n`` replays, building the cluster each time and forking
    it from a snapshot at the arm point (``mqlab.explore.snapshot``), interleaved; and the
    page faults per replay of each (a forked child's are its copy-on-write copies)."""
    import os
    import resource

    from mqlab.explore.search import replay
    from mqlab.explore.snapshot import Snapshots, fork_available

    def cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def faults() -> int:
        return sum(resource.getrusage(w).ru_minflt
                   for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))  # fmt: skip

    spent = [0.0, 0.0]
    faulted = [0, 0]
    with Snapshots() as snaps:
        if not fork_available():
            print("(fork unavailable here: the forked figure is the built one)")
        replay(xs, "", snapshots=snaps)
        for _ in range(n):
            for k, s in enumerate((None, snaps)):
                c, f = cpu(), faults()
                replay(xs, "", snapshots=s)
                spent[k] += cpu() - c
                faulted[k] += faults() - f
    return n / spent[0], n / spent[1], faulted[0] / n, faulted[1] / n


def _tree_cpu() -> float:
    """CPU seconds of this process and every live or reaped descendant (psutil)."""
    import os

    import psutil

    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in psutil.Process().children(recursive=True):
        try:
            c = child.cpu_times()
            total += c.user + c.system + c.children_user + c.children_system
        except psutil.Error:
            pass
    return total


def _warm_session(runners: list[str], workers: int):
    """A ``local[workers]`` session with its Python workers warm, if ``spark`` is among the
    runners (started before any clock: a JVM); else None."""
    if "spark" not in runners:
        return None
    from mqlab.experiments.spark import get_session
    from mqlab.explore.runners import warm_spark

    spark = get_session(f"local[{workers}]")
    warm_spark(spark)
    return spark


def _all(a) -> int:
    """``--all``: per ready-made scenario at its own bounds, the search's figures, the runs
    and states without the reduction, the outcome classes with their counts, and the wall
    seconds of each runner (every table checked equal to the sequential one)."""
    import os
    from dataclasses import replace

    from mqlab.explore.engine import Bounds
    from mqlab.explore.runners import explore
    from mqlab.explore.scenarios import SCENARIOS

    runners = [r for r in a.runners.split(",") if r]
    spark = _warm_session(runners, a.workers)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| scenario | bounds | runs | states visited | distinct | pruned | asleep | "
          "without POR: runs / states | outcome classes (distinct final states) | "
          + " | ".join(f"{r} s" for r in runners) + " |")  # fmt: skip
    print("|" + "---|" * (9 + len(runners)))
    for name in sorted(SCENARIOS):
        xs = SCENARIOS[name]
        bounds = Bounds(depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)
        walls, first = [], None
        for runner in runners:
            t = time.perf_counter()
            res = explore(xs, bounds, runner=runner, workers=a.workers, spark=spark)
            walls.append(time.perf_counter() - t)
            figures = (res.table(), res.runs, res.states, res.distinct, res.pruned)
            first = first or (res, figures)
            if figures != first[1]:
                print(f"| {name} | {runner} DIFFERS from {runners[0]} |")
                return 1
        res = first[0]
        off = explore(xs, replace(bounds, por=False), shrink_outcomes=False)
        classes = ", ".join(f"`{o}` {n}" for o, n in res.outcomes().items())
        print(f"| {name} | `{bounds}` | {res.runs} | {res.states} | {res.distinct} | "
              f"{res.pruned} | {res.redundant} | {off.runs} / {off.states} | {classes} | "
              + " | ".join(f"{w:.1f}" for w in walls) + " |")  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


#: The systematic search's bounds for ``--reach``, where the scenario's own are not enough
#: to find what the walks find: consumer_join's "two messages delivered twice" needs
#: consumer-2's connections slow for tens of ms (two ``L1`` moves; ``sticky=2``: a latency
#: move always keeps its connection slow, 1 040 runs where ``sticky=1`` takes 2 814).
#: orderly_slow_listener's ``ok`` is one slow frame 26 points in (47 runs at the walks'
#: depth; at any depth 416); retry_rebalance's two classes the walks found are one move
#: 17 points in and two within 15 (269 runs; ``mqlab.explore.scenarios`` says why).
#: async_master_lost's and sync_master_lost's ``pending`` is the master's machine lost 6
#: and 10 points in, once the slave has the message: nothing tells consumer-1, which waits
#: on the dead master past the run's end (PCT found it; depth 5 cannot): the loss placed
#: anywhere in the walks' 40 points, with at most one move beside it (210 and 232 runs).
REACH_BOUNDS = {
    "async_master_lost": "deviations=1,depth=40",
    "consumer_join": "deviations=2,sticky=2",
    "orderly_slow_listener": "deviations=1,depth=40",
    "retry_rebalance": "deviations=2,depth=24",
    "sync_master_lost": "deviations=1,depth=40",
}
#: The walks' and PCT's depth in ``--reach`` (the issue's "random walks of depth 40").
REACH_WALK_DEPTH = 40


def _reach(a) -> int:
    """``--reach``: classes found against wall time, search, walks and PCT (module doc)."""
    import os
    from functools import partial

    from mqlab.explore.engine import Bounds
    from mqlab.explore.runners import explore, walks
    from mqlab.explore.scenarios import SCENARIOS
    from mqlab.explore.search import replay

    def cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    names = [n for n in a.scenarios.split(",") if n] or sorted(SCENARIOS)
    for n in names:
        if n not in SCENARIOS:
            print(f"mqlab bench explore: no scenario {n!r}; known: {sorted(SCENARIOS)}")
            return 2
    replay(SCENARIOS[names[0]], "")  # warm imports
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| scenario | method | runs | wall s | CPU s | schedules/s/core | classes (first found, "
          "wall s) | missed |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    missed_any = False
    for name in names:
        xs = SCENARIOS[name]
        base = dict(depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)
        bounds = Bounds.parse(REACH_BOUNDS.get(name, ""), **base)
        walk_b = Bounds(**{**base, "depth": REACH_WALK_DEPTH})
        rows = []
        on = dict(runner=a.runner, workers=a.workers)
        for method, run in (
            (f"search `{bounds}`", partial(explore, xs, bounds, runner=a.runner,
                                           workers=a.workers)),
            (f"{a.walks} walks", partial(walks, xs, walk_b, range(a.walks), **on)),
            (f"{a.pct} PCT d={a.pct_depth}",
             partial(walks, xs, walk_b, range(a.pct), pct_depth=a.pct_depth, **on)),
        ):  # fmt: skip
            t, c = time.perf_counter(), cpu()
            res = run()
            rows.append((method, res, time.perf_counter() - t, cpu() - c))
        found = set(rows[0][1].outcomes())
        for method, res, wall, spent in rows:
            classes = ", ".join(f"`{r.outcome}` {r.found_s:.1f}" for r in res.rows)
            missed = sorted(set(res.outcomes()) - found) if res is not rows[0][1] else []
            missed_any = missed_any or bool(missed)
            print(f"| {name} | {method} | {res.runs} | {wall:.1f} | {spent:.1f} | "
                  f"{res.runs / max(spent, 1e-9):.1f} | {classes} | "
                  f"{', '.join(f'`{m}`' for m in missed) or '-'} |")  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if missed_any else 0


def main(argv: list[str] | None = None) -> int:
    from mqlab.explore.engine import Bounds
    from mqlab.explore.runners import explore
    from mqlab.explore.scenarios import SCENARIOS, get_scenario
    from mqlab.explore.search import replay

    p = argparse.ArgumentParser(
        prog="python -m mqlab bench explore", description=__doc__.split("\n")[0]
    )
    p.add_argument("--scenario", default="consumer_join", choices=sorted(SCENARIOS))
    p.add_argument("--runs", type=int, default=20, help="replays timed for the phases")
    p.add_argument(
        "--runners", default="sequential,pool", help="comma-separated: sequential,pool,spark"
    )
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--por", action="store_true", help="also search without the reduction")
    p.add_argument("--bounds", default="", help="as python -m mqlab explore --bounds")
    p.add_argument("--repeat", type=int, default=1,
                   help="searches per runner, taken in turn; the speed-up is of the best walls")  # fmt: skip
    p.add_argument("--speedup", action="store_true",
                   help="consumer_join depth=13 on sequential,pool,spark (local[2]), 2 workers, "
                        "--repeat 2")  # fmt: skip
    p.add_argument("--all", action="store_true",
                   help="every ready-made scenario at its own bounds: figures, classes and "
                        "seconds on each of --runners (a Markdown table)")  # fmt: skip
    p.add_argument("--reach", action="store_true",
                   help="per scenario: classes against wall time for the search, walks and PCT")  # fmt: skip
    p.add_argument("--phases", action="store_true",
                   help="per scenario: a run's phases, the build's share, and the most a "
                   "free snapshot at the arm point would give")  # fmt: skip
    p.add_argument("--scenarios", default="",
                   help="--reach, --phases: comma-separated (default: all)")  # fmt: skip
    p.add_argument("--walks", type=int, default=300, help="--reach: random walks (default 300)")
    p.add_argument("--pct", type=int, default=300, help="--reach: PCT runs (default 300)")
    p.add_argument("--pct-depth", type=int, default=3, help="--reach: PCT's depth (default 3)")
    p.add_argument("--runner", default="sequential",
                   help="--reach: the runner of the search, the walks and PCT")  # fmt: skip
    a = p.parse_args(argv)
    if a.reach:
        return _reach(a)
    if a.phases:
        return _phases_table(a)
    if a.all:
        return _all(a)
    if a.speedup:
        a.scenario, a.runners, a.workers = "consumer_join", "sequential,pool,spark", 2
        a.bounds = a.bounds or "depth=13"
        a.repeat = max(a.repeat, 2)
    xs = get_scenario(a.scenario)
    bounds = Bounds.parse(a.bounds, depth=xs.depth, faults=xs.fault_budget,
                          window_ms=xs.window_ms)  # fmt: skip
    print(f"mqlab bench explore: {xs.name} ({xs.text}); bounds {bounds}")
    replay(xs, "")  # warm imports
    ph = _phases(xs, a.runs)
    total = sum(ph.values())
    print(f"one run, CPU ms (mean of {a.runs}): " + ", ".join(f"{k} {v:.1f}" for k, v in ph.items())
          + f"; total {total:.1f}")  # fmt: skip
    print(f"schedules per second per core: {1000 / total:.1f}; a snapshot at the arm point "
          f"would save at most {ph['build_to_arm'] / total:.0%} of a run")  # fmt: skip
    built, forked, built_faults, forked_faults = _per_core(xs, a.runs)
    print(f"replays, schedules per second per core (CPU, children included): built "
          f"{built:.1f}, forked from the arm-point snapshot {forked:.1f} "
          f"(x{forked / built:.2f}); page faults per replay: built {built_faults:.0f}, "
          f"forked {forked_faults:.0f} (a child's copy-on-write copies)")  # fmt: skip
    base = None
    runners = [r for r in a.runners.split(",") if r]
    spark = _warm_session(runners, a.workers)
    import os

    for runner in runners:  # every runner warm before the clock: imports, pool, workers
        explore(xs, Bounds(depth=min(bounds.depth, 6)), runner=runner, workers=a.workers,
                spark=spark, shrink_outcomes=False)  # fmt: skip
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    best: dict[str, float] = {}
    ratios: dict[str, list[float]] = {r: [] for r in runners}
    for rep in range(a.repeat):
        first = None  # this round's first runner's wall: a round's runners ran side by side
        for runner in runners:
            t, c = time.perf_counter(), _tree_cpu()
            res = explore(xs, bounds, runner=runner, workers=a.workers, spark=spark)
            wall, cpu = time.perf_counter() - t, _tree_cpu() - c
            best[runner] = min(best.get(runner, wall), wall)
            first = first or wall
            ratios[runner].append(first / wall)
            figures = (res.table(), res.runs, res.states, res.distinct, res.pruned)
            if base is None:
                base = (wall, figures)
            same = "same table and figures" if figures == base[1] else "DIFFERS"
            print(f"{runner:<10} {wall:6.1f} s  CPU {cpu:6.1f} s  runs {res.runs}  "
                  f"{res.runs / wall:5.1f} runs/s  speed-up x{first / wall:.2f}  "
                  f"{same}  (states {res.states}, distinct {res.distinct}, "
                  f"classes {len(res.rows)})" + (f"  [round {rep + 1}]" if a.repeat > 1 else ""))  # fmt: skip
    if a.repeat > 1:
        import statistics

        print(f"best of {a.repeat}: " + ", ".join(
            f"{r} {best[r]:.1f} s x{best[runners[0]] / best[r]:.2f}" for r in runners))  # fmt: skip
        print(f"speed-up within a round, median of {a.repeat}: " + ", ".join(
            f"{r} x{statistics.median(ratios[r]):.2f}" for r in runners[1:]))  # fmt: skip
    if base is not None and a.workers > 1:
        # the machine's own ceiling now: the same search in ``workers`` independent
        # processes at once, against one alone (a loaded or shared machine shows here)
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        t = time.perf_counter()
        procs = [ctx.Process(target=explore, args=(xs, bounds)) for _ in range(a.workers)]
        for pr in procs:
            pr.start()
        for pr in procs:
            pr.join()
        wall = time.perf_counter() - t
        print(f"ceiling: {a.workers} sequential searches in {a.workers} processes at once "
              f"took {wall:.1f} s: x{a.workers * best[runners[0]] / wall:.2f} the throughput of one")  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.por:
        from dataclasses import replace

        off = explore(xs, replace(bounds, por=False), shrink_outcomes=False)
        print(f"without POR: runs {off.runs}, states {off.states}, distinct {off.distinct}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
