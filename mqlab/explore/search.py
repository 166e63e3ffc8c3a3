"""Exhaustive search, random walks, replay and shrinking over a scenario's schedules.

Mirrors no RocketMQ class. The exhaustive search is stateful and bounded:

1. Work items are schedule prefixes; each runs to the end of the scenario
   (``run_schedule``), noting its choice points up to ``bounds.depth`` (with a deviation
   bound, ``deviations=K``, and no depth bound: every choice point of the run).
2. Items are taken *level by level*, a level being (faults, non-default choices): each
   child adds one non-default choice or one fault, so it lands on a higher level. Within
   a level, items are run in ``Schedule.sort_key`` order, and their records are read in
   that order, whichever worker ran them: the pool and Spark runners give exactly the
   sequential table.
   With ``deviations=K`` a level of more than K moves gets no items: the search is
   delay-bounded (Emmi, Qadeer and Rakamarić, POPL 2011), a move anywhere in the run
   costing one, the schedules with fewest moves first.
3. Reading a record, each noted point is a *state visited*. A state whose digest an
   earlier record reached with at least as much depth, moves and fault budget left, and
   no more events asleep, is pruned: the rest of the run adds nothing (the run's own
   earlier points do not count: a digest can repeat within one run). Otherwise its
   alternatives become items (sleep sets: ``mqlab.explore.engine``).
   A run whose sleep set leaves only a fault at a point past its prefix takes it: its
   schedule is then a level higher than its item. It is read only up to that point, and
   its prefix through the fault becomes an item of that level (``SearchResult.deferred``):
   read earlier, its later states pruned a lesser schedule of the same class
   (consumer_crash: ``d2 o1 F:kill`` hid ``d2 F:kill``).
4. A run that is not pruned ends in an outcome (``mqlab.explore.outcome``). Per outcome:
   the distinct final states reached, the runs, and the least schedule by ``sort_key``,
   shrunk at the end (``shrink``: faults dropped, then choices set back to their default,
   one at a time, while the outcome stays).

5. Each level closes with a ``Growth`` row: its runs, the runs and classes so far, the
   classes it added. ``SearchResult.saturation`` says when the last ``QUIET_LEVELS`` or
   more complete levels in a row added nothing: the table is then likely complete for
   that kind of choice, and proven complete only within the bounds.

Random walks pick uniformly at each free choice point, swarm style: each walk leaves out
faults or order choices at random (Groce et al., ISSTA 2012). Each class a walk or PCT
run finds is shrunk twice. Delta debugging (``shrink``) gives a schedule from which no
single move can go, which may not have the fewest moves (orderly_slow_listener's ``ok``:
four, where one does it). A schedule of k >= 2 moves is then searched for one with fewer
(``shortest``): this exhaustive search at most k - 1 moves, fewest first, stopping after
the first level that reaches the class (``exhaustive(target=…)``), within
``SHORTEST_RUNS`` runs; out of runs, the table marks the class.

PCT runs (``pct_runs``; Burckhardt, Kothari, Musuvathi and Nagarakatte, ASPLOS 2010)
follow random priorities instead, with few random changes, read for a cluster of nodes
(``PCT``): each node gets a random priority when first seen; an order point runs the
event of the enabled node of highest priority; ``depth - 1`` change points are drawn
among the run's first ``k`` choice points (``k``: the default run's points within
``bounds.depth``). At the j-th one, the node about to act (the event's node; a frame's
sender) drops to priority j, below every node's first one, and from then on it is
*slow*: every frame it sends or receives takes the latency set's longest latency (a
change point on a scenario with faults injects one of its faults instead, half the
time). A class that needs ``depth - 1`` such changes at the right points is found by a
run with probability at least 1/(n k^(depth-1)) for n nodes, the paper's bound read
for these steps.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqlab.explore.engine import Bounds, RunRecord, covered, run_schedule
from mqlab.explore.journal import Journal
from mqlab.explore.schedule import DEFAULT, Choice, Schedule, ScheduleError
from mqlab.explore.snapshot import Snapshots

if TYPE_CHECKING:
    from mqlab.explore.scenarios import ExploreScenario

#: What runs a level's items and yields their records in item order (``exhaustive``'s
#: ``mapper``; ``mqlab.explore.runners``).
Mapper = Callable[["ExploreScenario", Bounds, list["Item"], dict], Iterable[RunRecord]]

__all__ = ["OutcomeRow", "SearchResult", "Growth", "exhaustive", "random_walks", "replay",
           "shrink", "shortest", "Item", "run_item", "QUIET_LEVELS", "PCT", "pct_runs"]  # fmt: skip

#: Levels in a row that added no class before a search says its table looks saturated.
QUIET_LEVELS = 2
#: Replays a walk's class may spend on shrinking (``shrink``).
SHRINK_REPLAYS = 400
#: Runs a walk's class may spend searching for a schedule with fewer moves (``shortest``).
SHORTEST_RUNS = 400
#: ``OutcomeRow.shortest``: what the search for fewer moves did (``shortest``)
SHORTEST_NOTES = {
    "": "not searched (one move or none, or shrinking off)",
    "fewer": "a deviation search found fewer moves: its least schedule",
    "fewest": "a deviation search ruled out fewer moves: delta debugging's schedule kept",
    "part": "a deviation search found fewer moves, every lesser level searched, in a level "
    "it ran out of runs in: the fewest moves, not shown to be the least of them",
    "budget": "the search for fewer moves ran out of runs: delta debugging's schedule kept",
}


@dataclass(frozen=True, slots=True)
class Item:
    """One unit of work: run ``prefix`` (sleep set ``sleep`` after point ``sleep_at``); or,
    with ``sample``, one random walk or PCT run (``_sample_guide``): what lets every
    runner run walks as it runs a search's level."""

    prefix: tuple[Choice, ...]
    sleep: frozenset[int] = frozenset()
    sleep_at: int = -1
    #: ``("walk", seed)`` or ``("pct", seed, depth, k, faults)``; ``()``: run ``prefix``
    sample: tuple = ()

    def key(self) -> tuple:
        return Schedule(self.prefix).sort_key()

    def level(self) -> tuple[int, int]:
        s = Schedule(self.prefix)
        return (s.faults, s.moves)


@dataclass(slots=True)
class OutcomeRow:
    outcome: str
    count: int  # distinct final states
    runs: int
    schedule: Schedule
    counts: dict[str, int] = field(default_factory=dict)
    found_at: int = 0  # the run (or walk) that first reached the class, from 1
    found_s: float = 0.0  # seconds from the search's start to that run's record
    #: a walk's class: how its schedule was made shortest (``shortest``); "" not tried
    shortest: str = ""

    @property
    def depth(self) -> int:
        return self.schedule.depth


@dataclass(frozen=True, slots=True)
class Growth:
    """How the table grew over one level of a search (``faults``, ``moves``) or one stretch
    of random walks: the runs in it, the runs and classes so far, the classes it added."""

    faults: int
    moves: int
    runs: int
    total_runs: int
    classes: int
    new: tuple[str, ...]
    seconds: float
    complete: bool = True  # False: max_runs or a cancel stopped this level part-way

    @property
    def level(self) -> str:
        return f"{self.moves}" if not self.faults else f"{self.moves}+{self.faults}F"


@dataclass(slots=True)
class SearchResult:
    """An outcome table and the search's figures."""

    scenario: str
    bounds: Bounds
    rows: list[OutcomeRow]
    runs: int = 0
    states: int = 0  # states visited (choice points read)
    distinct: int = 0
    pruned: int = 0
    redundant: int = 0  # runs stopped by the sleep sets
    reruns: int = 0  # runs a mapper stopped at a state this reading order does not prune
    deferred: int = 0  # runs whose sleep set left only a fault: run again at their level
    seconds: float = 0.0
    complete: bool = True  # False: max_runs or a cancel stopped it
    #: how the table grew, level by level (a search) or walk by walk (random walks)
    growth: list[Growth] = field(default_factory=list)
    walks: bool = False

    @property
    def quiet(self) -> int:
        """Complete levels in a row at the end that added no class (``QUIET_LEVELS``)."""
        n = 0
        for g in reversed(self.growth):
            if not g.complete:
                continue
            if g.new:
                break
            n += 1
        return n

    def growth_table(self) -> list[tuple[str, int, int, int, str]]:
        """(level, runs in it, runs so far, classes so far, classes it added) rows."""
        return [(g.level, g.runs, g.total_runs, g.classes, " | ".join(g.new)) for g in self.growth]

    def saturation(self) -> str:
        """One line: whether the last levels added nothing (a sign the table is complete
        for the search's kind of choices, not a proof beyond its bounds)."""
        if self.walks:
            last = max((g.total_runs for g in self.growth if g.new), default=0)
            if last == self.runs:
                return f"the last walk ({last}) added a class: more walks may add more"
            return (f"last new class at walk {last} of {self.runs}: {self.runs - last} walks in a "
                    "row added nothing")  # fmt: skip
        q = self.quiet
        if self.complete and q == 0:
            return "the last level added a class: a higher bound may add more"
        if q >= QUIET_LEVELS:
            return (f"saturated: the last {q} levels in a row added no class (complete only "
                    "within these bounds)")  # fmt: skip
        return f"the last {q} level(s) added no class" + ("" if self.complete else
                                                           " (search stopped part-way)")  # fmt: skip

    def table(self) -> list[tuple[str, int, str, int]]:
        """(outcome, count, shortest schedule, depth) rows, sorted by outcome."""
        return [(r.outcome, r.count, str(r.schedule), r.depth) for r in self.rows]

    def outcomes(self) -> dict[str, int]:
        return {r.outcome: r.count for r in self.rows}

    def frame(self):
        """The table as a pandas DataFrame: outcome, count, shortest_schedule, depth."""
        import pandas as pd

        return pd.DataFrame(
            self.table(), columns=["outcome", "count", "shortest_schedule", "depth"]
        )

    def spark_frame(self, spark=None):
        """The table as a Spark DataFrame (the same columns; ``spark``: a session, default
        ``mqlab.experiments.spark.get_session()``), to join or union with other searches'."""
        if spark is None:
            from mqlab.experiments.spark import get_session

            spark = get_session()
        schema = "outcome string, count long, shortest_schedule string, depth long"
        return spark.createDataFrame(self.table(), schema)

    def format(self, growth: bool = False) -> str:
        """The table and the figures; ``growth``: then the growth table and the saturation
        line (``format_growth``)."""
        w = max([len(r.outcome) for r in self.rows] + [7])
        lines = [f"{'outcome':<{w}}  count  depth  shortest schedule"]
        for (o, n, s, d), r in zip(self.table(), self.rows, strict=True):
            mark = "  *" if r.shortest in ("part", "budget") else ""
            lines.append(f"{o:<{w}}  {n:>5}  {d:>5}  {s}{mark}")
        if any(r.shortest in ("part", "budget") for r in self.rows):
            lines.append("* the search for fewer moves ran out of runs: not shown to be the "
                         "shortest")  # fmt: skip
        lines.append(
            f"runs {self.runs}, states visited {self.states}, distinct {self.distinct}, "
            f"pruned {self.pruned}, asleep {self.redundant}"
            + ("" if self.complete else " (incomplete)")
        )
        if growth and self.growth:
            lines.append(self.format_growth())
        return "\n".join(lines)

    def format_growth(self) -> str:
        """The growth table (runs against the bound, classes against runs) and the
        saturation line."""
        found = {r.outcome: r.found_at for r in self.rows}

        def at(o: str) -> str:
            return f"{o} (run {found[o]})" if found.get(o) else o

        if self.walks:
            lines = ["   walk  classes    at s  new"]
            for g in self.growth:
                lines.append(f"{g.total_runs:>7}  {g.classes:>7}  {g.seconds:>6.1f}  "
                             f"{' | '.join(g.new)}")  # fmt: skip
        else:
            lines = [f"{'moves':>7}  runs  so far  classes  {'s':>6}  new"]
            for g in self.growth:
                mark = "" if g.complete else " (part)"
                lines.append(f"{g.level:>7}  {g.runs:>4}  {g.total_runs:>5}  {g.classes:>7}  "
                             f"{g.seconds:>6.1f}  {' | '.join(map(at, g.new)) or '-'}{mark}")  # fmt: skip
        lines.append(self.saturation())
        return "\n".join(lines)


def run_item(
    xs: ExploreScenario, bounds: Bounds, item: Item, cache: dict | None = None,
    visited: dict | None = None, snapshots: Snapshots | None = None,
) -> RunRecord:  # fmt: skip
    """Run one work item (what every runner calls); ``visited``: stop at a state in it (not
    for a sampled run: a walk is never cut short); ``snapshots``: fork the run from the
    cluster at its arm point (``mqlab.explore.snapshot``)."""
    if item.sample:
        return run_schedule(xs, Schedule(), bounds, record=True, outcome_cache=cache,
                            **_sample_guide(xs, item.sample))  # fmt: skip
    return run_schedule(xs, Schedule(item.prefix), bounds, record=True, sleep=item.sleep,
                        sleep_at=item.sleep_at, outcome_cache=cache, visited=visited,
                        snapshots=snapshots)  # fmt: skip


def _independent(a: str, b: str, links: frozenset) -> bool:
    return a != b and a not in ("", "lab", "sim") and b not in ("", "lab", "sim") and \
        frozenset((a, b)) not in links  # fmt: skip


def _children(rec: RunRecord, p: Any) -> list[Item]:
    prefix = tuple(rec.choices[: p.index])
    out = []
    before: list[tuple[int, str]] = []
    for k, opt in enumerate(p.options):
        if p.kind == "o" and opt.kind != "F":
            j = 0 if opt.kind == "d" else int(opt.value)
            seq, node = p.seqs[j], p.nodes[j]
        if k == p.chosen:
            if p.kind == "o" and opt.kind != "F":
                before.append((seq, node))
            continue
        if opt.kind != "F" and p.moves_left <= 0:  # the deviation bound: no move left here
            continue
        if opt.kind == "F":
            sleep: frozenset[int] = frozenset()
        elif p.kind == "o":
            asleep = set(p.sleep) | set(before)
            sleep = frozenset(s for s, n in asleep if _independent(n, node, rec.links))
            before.append((seq, node))
        else:
            sleep = frozenset(s for s, _ in p.sleep)
        out.append(Item(prefix + (opt,), sleep, p.index))
    return out


def _forced_fault(item: Item, rec: RunRecord) -> int | None:
    """The first of ``rec``'s points past ``item``'s prefix where it took a fault (every
    event asleep; a search's run takes the first option otherwise), or None."""
    for k, p in enumerate(rec.points):
        taken = p.options[p.chosen] if p.chosen < len(p.options) else None
        if p.index >= len(item.prefix) and taken is not None and taken.kind == "F":
            return k
    return None


def _first_covered(rec: RunRecord, visited: dict, bounds: Bounds) -> int:
    """The first of ``rec``'s points that ``visited`` covers (``len(rec.points)``: none)."""
    for k, p in enumerate(rec.points):
        if covered(visited.get(p.digest), bounds.depth - p.index, p.moves_left, p.faults_left,
                   p.sleep_key):  # fmt: skip
            return k
    return len(rec.points)


def _prunes(rec: RunRecord, visited: dict, bounds: Bounds) -> bool:
    """Whether reading ``rec`` now prunes it at one of its points."""
    return _first_covered(rec, visited, bounds) < len(rec.points)


def _map_sequential(xs, bounds, items, cache, visited, snapshots=None):
    for it in items:
        yield run_item(xs, bounds, it, cache, visited, snapshots=snapshots)


def exhaustive(
    xs: ExploreScenario, bounds: Bounds, *,
    mapper: Mapper | None = None, progress: bool = False, shrink_outcomes: bool = True, cancel: Callable[[], bool] | None = None,
    snapshot: bool = False, journal: Journal | None = None, target: str | None = None,
) -> SearchResult:  # fmt: skip
    """Every outcome reachable within ``bounds`` (see the module docstring).

    ``mapper(xs, bounds, items, visited)`` runs a level's items and yields their records
    in order; it may let runs stop at states in ``visited`` (the table as the level
    starts, or later): such a run is pruned when read anyway, at that point or before.
    ``snapshot``: runs here fork from the cluster at its arm point
    (``mqlab.explore.snapshot``) instead of building it (the same table; off by default:
    a child's copy-on-write faults cost what the build saves, ``mqlab.explore.snapshot``). ``journal``: every state expanded and
    outcome classified is written there as each record is read, for the mapper's workers
    (``mqlab.explore.journal``). ``target``: stop after the first level that reaches this
    class (its row then holds that level's least schedule of it; the search is marked
    incomplete if levels were left; in a level cut by ``bounds.max_runs``, stop at its
    first record of the class): ``shortest`` uses it. ``cancel()`` is read before each
    level and each record: true stops the search as Ctrl-C does (the table so far, marked
    incomplete; ``mqlab.explore.cli.stop_on_sigint``).
    """
    with Snapshots() if snapshot else contextlib.nullcontext() as snaps:
        return _exhaustive(xs, bounds, mapper, progress, shrink_outcomes, cancel, snaps, journal,
                           target)  # fmt: skip


def _exhaustive(
    xs, bounds, mapper, progress, shrink_outcomes, cancel, snaps, journal=None, target=None
) -> SearchResult:
    t0 = time.perf_counter()
    cache: dict = {}
    visited: dict[str, list[tuple[int, int, frozenset]]] = {}
    if mapper is None:
        # runs stop early at states expanded before: the records read the same

        def mapper(xs_, b_, items_, visited_):  # noqa: E306
            return _map_sequential(xs_, b_, items_, cache, visited_, snaps)

    frontier: dict[tuple[int, int], list[Item]] = {(0, 0): [Item(())]}
    distinct: set[str] = set()
    best: dict[str, tuple[tuple, Schedule, dict]] = {}
    finals: dict[str, set[str]] = {}
    runs_by: dict[str, int] = {}
    first: dict[str, int] = {}
    first_s: dict[str, float] = {}
    res = SearchResult(xs.name, bounds, [])
    bar = _bar(progress, xs.name)
    opened = None

    def read_up_to(rec, stop: int) -> None:
        """Count the run's states up to point ``stop``; the points before it are expanded
        (visited, journaled) and their children go to the frontier."""
        for p in rec.points[: stop + 1]:
            res.states += 1
            distinct.add(p.digest)
        for p in rec.points[:stop]:
            entry = p.entry(bounds.depth)
            visited.setdefault(p.digest, []).append(entry)
            if journal is not None:
                journal.visited(p.digest, entry)
            for child in _children(rec, p):
                frontier.setdefault(child.level(), []).append(child)

    try:
        while frontier:
            if res.runs >= bounds.max_runs or (cancel is not None and cancel()):
                res.complete = False
                break
            level = min(frontier)
            items = sorted(frontier.pop(level), key=Item.key)
            if len(items) > bounds.max_runs - res.runs:
                items = items[: bounds.max_runs - res.runs]
                res.complete = False
            opened = (level, res.runs, set(best), time.perf_counter())
            for item, rec in zip(items, mapper(xs, bounds, items, visited), strict=True):
                if cancel is not None and cancel():  # Ctrl-C, even one a finalizer swallowed
                    raise KeyboardInterrupt
                res.runs += 1
                if bar is not None:
                    bar.update(1)
                if rec.pruned and not _prunes(rec, visited, bounds):
                    # a mapper let the run stop at a state that this reading order does
                    # not prune (it cannot with the runners here): run it against the table
                    res.reruns += 1
                    rec = run_item(xs, bounds, item, cache, visited, snapshots=snaps)
                # pruned at the first point an earlier record covers; not by the run's own
                # points: its digest may repeat (an event that changes nothing it covers)
                cut = _first_covered(rec, visited, bounds)
                forced = _forced_fault(item, rec)
                if forced is not None and forced < cut:
                    # every event asleep, a fault left: the run took the fault, a level
                    # higher than its item's. Read up to there; the rest runs at its level
                    # (as a new item), so that a class's first record stays its least
                    res.deferred += 1
                    read_up_to(rec, forced)
                    later = Item(tuple(rec.choices[: rec.points[forced].index + 1]), item.sleep,
                                 item.sleep_at)  # fmt: skip
                    frontier.setdefault(later.level(), []).append(later)
                    if journal is not None:
                        journal.flush()
                    continue
                pruned = cut < len(rec.points)
                if pruned:
                    res.pruned += 1
                read_up_to(rec, cut)
                if journal is not None:
                    if rec.outcome is not None:
                        journal.outcome(rec.final_digest, (rec.outcome, rec.counts))
                    journal.flush()
                if pruned:
                    continue
                if rec.pruned:  # stopped at a state pruned above (it cannot get here)
                    raise AssertionError("a run stopped at a state the search did not prune")
                if rec.redundant:
                    res.redundant += 1
                    continue
                o = rec.outcome or "?"
                finals.setdefault(o, set()).add(rec.final_digest)
                runs_by[o] = runs_by.get(o, 0) + 1
                if o not in first:
                    first[o] = res.runs
                    first_s[o] = time.perf_counter() - t0
                s = rec.schedule
                k = s.sort_key()
                if o not in best or k < best[o][0]:
                    best[o] = (k, s, rec.counts or {})
                if o == target and not res.complete:
                    # a level cut by max_runs: the rest of its runs cannot show its least
                    # either; runs come in sort_key order, so its first find is kept
                    break
            _close_level(res, opened, best, res.complete)
            opened = None
            if target is not None and target in best:  # the first level that reaches it
                if frontier:
                    res.complete = False
                break
    except KeyboardInterrupt:  # cancelled (Ctrl-C): the table so far, marked incomplete
        res.complete = False
        shrink_outcomes = False
        if opened is not None:
            _close_level(res, opened, best, False)
    if bar is not None:
        bar.close()
    for o in sorted(best):
        s = best[o][1]
        if shrink_outcomes:
            s = shrink(xs, s, o, bounds, snapshots=snaps)
        res.rows.append(OutcomeRow(o, len(finals[o]), runs_by[o], s, best[o][2], first[o],
                                   first_s[o]))  # fmt: skip
    res.distinct = len(distinct)
    res.seconds = time.perf_counter() - t0
    return res


def _close_level(res: SearchResult, opened: tuple, best: dict, complete: bool) -> None:
    (faults, moves), runs0, before, t0 = opened
    new = tuple(sorted(set(best) - before))
    res.growth.append(Growth(faults, moves, res.runs - runs0, res.runs, len(best), new,
                             time.perf_counter() - t0, complete))  # fmt: skip


def _bar(progress: bool, name: str):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(desc=f"explore {name}", unit="run")


def replay(
    xs: ExploreScenario, schedule: Schedule | str, bounds: Bounds | None = None, **kw: Any
) -> RunRecord:
    """Run one schedule exactly (no search), as ``python -m mqlab explore NAME --replay
    SCHEDULE`` does: without ``bounds``, under the scenario's own reorder window (a
    schedule's choices index the candidates inside that window)."""
    b = bounds or Bounds(depth=0, window_ms=getattr(xs, "window_ms", 0))
    return run_schedule(
        xs, schedule, Bounds(depth=0, window_ms=b.window_ms, latencies=b.latencies), **kw
    )


def _outcome_of(xs, s: Schedule, bounds: Bounds, snapshots=None) -> str | None:
    try:
        return replay(xs, s, bounds, snapshots=snapshots).outcome
    except ScheduleError:
        return None


def shrink(
    xs: ExploreScenario, schedule: Schedule, outcome: str, bounds: Bounds,
    snapshots: Snapshots | None = None, *, slide: bool = False, max_replays: int | None = None,
) -> Schedule:  # fmt: skip
    """A least schedule (by ``sort_key``) still giving ``outcome``, by delta debugging:
    drop each fault, set each choice back to its default, turn a connection kept slow
    (``L<i>``) into one slow frame (``l<i>``), take order index 1 for a larger one, one
    at a time, until nothing helps (Zeller & Hildebrandt 2002, one-minimal). An ``l<i>``
    makes the link's later frames choice points again, so the later choices may now
    fall elsewhere: the replay decides.

    ``slide``: also move each fault or move to an earlier choice point that takes the
    default, other choices kept (Hypothesis-style: fewer moves first, then a shorter
    schedule): a walk's move made late, where an earlier one does the same, comes to the
    earliest place it still gives ``outcome`` (``d9 l1`` → ``d5 l1``). ``max_replays``:
    stop trying after this many replays (the schedule so far is returned: it replays)."""
    cur = schedule.trimmed()
    replays = 0
    improved = True
    while improved:
        improved = False
        ch = list(cur.choices)
        cands: list[Schedule] = []
        for i, c in enumerate(ch):
            if c.kind == "F":
                cands.append(Schedule(tuple(ch[:i] + ch[i + 1 :])).trimmed())
        for i, c in enumerate(ch):
            if not c.is_default and c.kind != "F":
                cands.append(Schedule(tuple(ch[:i] + [DEFAULT] + ch[i + 1 :])).trimmed())
            if c.kind == "o" and int(c.value) > 1:
                cands.append(Schedule(tuple(ch[:i] + [Choice("o", 1)] + ch[i + 1 :])).trimmed())
            if c.kind == "L":  # the connection slow for this frame only (``l<i>``)
                cands.append(
                    Schedule(tuple(ch[:i] + [Choice("l", c.value)] + ch[i + 1 :])).trimmed()
                )
        if slide:
            cands += _slides(ch)
        key = cur.sort_key()
        for s in sorted(set(cands), key=Schedule.sort_key):
            if s.sort_key() >= key:
                continue
            if max_replays is not None and replays >= max_replays:
                return cur
            replays += 1
            if _outcome_of(xs, s, bounds, snapshots) == outcome:
                cur = s
                improved = True
                break
    return cur


def _slides(ch: list[Choice]) -> list[Schedule]:
    """``ch`` with one of its non-default choices moved to an earlier default point (a
    fault is inserted there instead: it takes no point of its own)."""
    out = []
    for i, c in enumerate(ch):
        if c.is_default:
            continue
        rest = ch[:i] + ch[i + 1 :] if c.kind == "F" else ch[:i] + [DEFAULT] + ch[i + 1 :]
        for j in range(i):
            if c.kind == "F":
                out.append(Schedule(tuple(rest[:j] + [c] + rest[j:])).trimmed())
            elif ch[j].is_default:
                out.append(Schedule(tuple(rest[:j] + [c] + rest[j + 1 :])).trimmed())
    return out


def shortest(
    xs: ExploreScenario, schedule: Schedule, outcome: str, bounds: Bounds, *,
    max_runs: int = SHORTEST_RUNS, shrink_replays: int | None = SHRINK_REPLAYS,
) -> tuple[Schedule, str]:  # fmt: skip
    """A schedule with fewer moves than ``schedule`` (k moves, k >= 2, one-minimal from
    ``shrink``) that still gives ``outcome``, and how it was got (``SHORTEST_NOTES``).

    Delta debugging drops one move at a time, so it stops where no single move can go,
    which may be far from the fewest (orderly_slow_listener's ``ok``: 4 moves, where one
    does it). This runs the exhaustive search (its reduction included) with at most k - 1
    moves, ``schedule``'s faults and ``bounds``' depth, level by level, fewest first, and
    stops after the first level that reaches ``outcome``: that level's least schedule of
    it, shrunk as the search shrinks its own ("fewer"). No level reaches it: ``schedule``
    has the fewest moves within these bounds, and is kept ("fewest"). ``max_runs`` runs
    spent first: ``schedule`` is kept ("budget"), or, if the level the budget cut reaches
    the class, its first schedule of it is taken there and then ("part": fewest moves, as
    every lesser level was searched; runs come in ``sort_key`` order, so most likely the
    least of them).
    """
    s = schedule.trimmed()
    if s.moves < 2:
        return s, ""
    b = Bounds(depth=bounds.depth, faults=s.faults, window_ms=bounds.window_ms,
               latencies=bounds.latencies, por=True, max_runs=max_runs,
               deviations=s.moves - 1, sticky=bounds.sticky)  # fmt: skip
    res = exhaustive(xs, b, shrink_outcomes=False, target=outcome)
    row = next((r for r in res.rows if r.outcome == outcome), None)
    if row is None:
        return s, ("fewest" if res.complete else "budget")
    found = shrink(xs, row.schedule, outcome, bounds, max_replays=shrink_replays)
    whole = bool(res.growth) and res.growth[-1].complete and outcome in res.growth[-1].new
    return found, ("fewer" if whole else "part")


def random_walks(
    xs: ExploreScenario, bounds: Bounds, seeds: Iterable[int], *, shrink_outcomes: bool = True,
    progress: bool = False, shrink_replays: int | None = SHRINK_REPLAYS,
    shortest_runs: int = SHORTEST_RUNS, mapper: Mapper | None = None,
) -> SearchResult:  # fmt: skip
    """One run per seed, each choice point within ``bounds.depth`` picked at random; each
    class's least schedule is then shrunk (``shrink``, sliding moves earlier too, at most
    ``shrink_replays`` replays a class): a schedule that replays to the class. One of two
    moves or more is then searched for fewer (``shortest``, at most ``shortest_runs``
    runs a class; 0: not searched); ``OutcomeRow.shortest`` says what that gave.
    ``mapper``: runs the walks (``mqlab.explore.runners.walks``: a pool or Spark), the
    records read in seed order, so the table is the one run here gives."""
    return _sampled(xs, bounds, seeds, lambda seed: ("walk", seed), shrink_outcomes, progress,
                    shrink_replays, shortest_runs, mapper)  # fmt: skip


def _walk(xs: ExploreScenario, seed: int) -> dict:
    """A random walk's ``pick``: uniform over the free choices, swarm style (the module
    docstring), from a stream named by the scenario and the seed alone."""
    rng = random.Random(f"explore/{xs.name}/{seed}")
    no_faults = rng.random() < 0.5
    no_order = rng.random() < 0.25

    def pick(options: list[Choice], rng=rng, nf=no_faults, no=no_order) -> int:
        ok = [i for i, c in enumerate(options)
              if not (nf and c.kind == "F") and not (no and c.kind == "o")]  # fmt: skip
        return rng.choice(ok) if ok else 0

    return {"pick": pick}


def _sample_guide(xs: ExploreScenario, sample: tuple) -> dict:
    """``run_schedule``'s ``pick`` or ``guide`` for an ``Item.sample``."""
    kind, seed, *rest = sample
    if kind == "walk":
        return _walk(xs, seed)
    if kind == "pct":
        depth, k, faults = rest
        return {"guide": PCT(random.Random(f"pct/{xs.name}/{depth}/{seed}"), depth, k, faults)}
    raise ValueError(f"unknown sampled run {sample!r}")


class PCT:
    """One PCT run's priorities and change points (see the module docstring): the
    ``guide`` of ``mqlab.explore.engine.Chooser``."""

    def __init__(self, rng: random.Random, depth: int, k: int, faults: bool = False) -> None:
        self.rng = rng
        self.depth = depth
        self.faults = faults
        points = rng.sample(range(max(k, 0)), min(max(depth - 1, 0), max(k, 0)))
        #: choice point -> j (the j-th change point, from 1)
        self.change = {p: j for j, p in enumerate(sorted(points), 1)}
        self.priority: dict[str, float] = {}
        self.slow: set[str] = set()

    def _prio(self, node: str) -> float:
        if node not in self.priority:  # the first priorities: above every change's
            self.priority[node] = self.depth + self.rng.random()
        return self.priority[node]

    def _top(self, nodes: list[str]) -> int:
        best = 0
        for j, n in enumerate(nodes):
            if self._prio(n) > self._prio(nodes[best]):
                best = j
        return best

    def order(self, i: int, nodes: list[str], options: list[Choice]) -> int:
        if not nodes:
            return 0
        k = self._top(nodes)
        j = self.change.get(i)
        if j is not None:
            if self.faults and len(options) > len(nodes) and self.rng.random() < 0.5:
                return len(nodes) + self.rng.randrange(len(options) - len(nodes))
            self.priority[nodes[k]] = j
            self.slow.add(nodes[k])
            k = self._top(nodes)
        return k

    def latency(self, i: int, sender: str, receiver: str, options: list[Choice]) -> int:
        self._prio(sender)
        self._prio(receiver)
        j = self.change.get(i)
        if j is not None:
            self.priority[sender] = j
            self.slow.add(sender)
        if sender in self.slow or receiver in self.slow:
            return max(k for k, c in enumerate(options) if c.kind in ("l", "d"))
        return 0


def pct_runs(
    xs: ExploreScenario, bounds: Bounds, seeds: Iterable[int], *, depth: int = 3,
    shrink_outcomes: bool = True, progress: bool = False,
    shrink_replays: int | None = SHRINK_REPLAYS, shortest_runs: int = SHORTEST_RUNS,
    mapper: Mapper | None = None,
) -> SearchResult:  # fmt: skip
    """One PCT run per seed (``PCT``: bug depth ``depth``, change points among the default
    run's first ``bounds.depth`` choice points); each class's least schedule shrunk, and
    searched for fewer moves, as ``random_walks`` does (``mapper`` too)."""
    if depth < 1:
        raise ValueError(f"PCT depth must be >= 1, got {depth}")
    b = Bounds(depth=bounds.depth, faults=bounds.faults, window_ms=bounds.window_ms,
               latencies=bounds.latencies, por=False)  # fmt: skip
    k = min(bounds.depth, len(run_schedule(xs, Schedule(), b, record=True).points))
    faults = bool(xs.faults) and bounds.faults > 0

    return _sampled(xs, bounds, seeds, lambda seed: ("pct", seed, depth, k, faults),
                    shrink_outcomes, progress, shrink_replays, shortest_runs, mapper)  # fmt: skip


def _sampled(
    xs: ExploreScenario, bounds: Bounds, seeds: Iterable[int], sample: Callable[[int], tuple],
    shrink_outcomes: bool, progress: bool, shrink_replays: int | None, shortest_runs: int = 0,
    mapper: Mapper | None = None,
) -> SearchResult:  # fmt: skip
    """Runs one schedule per seed, ``sample(seed)`` saying how (``Item.sample``), here or
    on ``mapper`` (records in seed order either way); the table, classes against runs,
    each class's least schedule shrunk (and searched for fewer moves: ``shortest``)."""
    t0 = time.perf_counter()
    res = SearchResult(xs.name, bounds, [], walks=True)
    best: dict[str, tuple[tuple, Schedule, dict]] = {}
    finals: dict[str, set[str]] = {}
    runs_by: dict[str, int] = {}
    first: dict[str, int] = {}
    first_s: dict[str, float] = {}
    cache: dict = {}
    distinct: set[str] = set()
    bar = _bar(progress, xs.name)
    # ``sticky``: a walk may keep a connection slow (``L<i>``) where the bounds offer it
    nobudget = Bounds(depth=bounds.depth, faults=bounds.faults, window_ms=bounds.window_ms,
                      latencies=bounds.latencies, por=False, sticky=bounds.sticky)  # fmt: skip
    if mapper is None:
        recs: Iterable[RunRecord] = (
            run_item(xs, nobudget, Item((), sample=sample(seed)), cache) for seed in seeds
        )
    else:
        recs = mapper(xs, nobudget, [Item((), sample=sample(seed)) for seed in seeds], {})
    for rec in recs:
        res.runs += 1
        if bar is not None:
            bar.update(1)
        res.states += len(rec.points)
        distinct.update(p.digest for p in rec.points)
        o = rec.outcome or "?"
        finals.setdefault(o, set()).add(rec.final_digest)
        runs_by[o] = runs_by.get(o, 0) + 1
        if o not in first:
            first[o] = res.runs
            first_s[o] = time.perf_counter() - t0
        s = rec.schedule
        if o not in best:
            res.growth.append(Growth(0, 0, 1, res.runs, len(best) + 1, (o,),
                                     time.perf_counter() - t0))  # fmt: skip
        if o not in best or s.sort_key() < best[o][0]:
            best[o] = (s.sort_key(), s, rec.counts or {})
    if bar is not None:
        bar.close()
    for o in sorted(best):
        s = best[o][1]
        note = ""
        if shrink_outcomes:
            s = shrink(xs, s, o, bounds, slide=True, max_replays=shrink_replays)
            if shortest_runs > 0:
                s, note = shortest(xs, s, o, bounds, max_runs=shortest_runs,
                                   shrink_replays=shrink_replays)  # fmt: skip
        res.rows.append(OutcomeRow(o, len(finals[o]), runs_by[o], s, best[o][2], first[o],
                                   first_s[o], note))  # fmt: skip
    res.distinct = len(distinct)
    res.seconds = time.perf_counter() - t0
    return res
