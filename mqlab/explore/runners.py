"""Where a search's runs execute: in this process, a process pool, or Spark tasks.

Mirrors no RocketMQ class. ``mqlab.explore.search.exhaustive`` hands a *mapper* each
level's work items (schedule prefixes) in ``sort_key`` order and reads the records back
in the same order, so the outcome table never depends on which worker ran what:

- ``sequential``: one item after the other, here;
- ``pool``: a ``multiprocessing`` pool forked per level: its workers inherit the visited
  table as the level starts (copy-on-write), so their runs stop at states expanded
  before, as sequential runs do (a run may go on past a state another item of the same
  level expands first: the search prunes it when it reads the record, at the same
  point). Items go one at a time (a run is ~30 ms: no chunking needed), results come
  back in order (``imap``) while the others run; levels under ``_MIN_PER_WORKER`` items
  per worker run here;
- ``spark``: each level's items split into tasks (``mapInArrow`` over ``spark.range``, as
  ``mqlab.experiments.spark`` runs a sweep; the visited table travels with them), records
  collected in order; small levels run on the driver, as the pool's do.

Every runner reads the same records in the same order: the table *and* the figures (runs,
states, distinct, pruned) are the sequential search's.

Why not hand each task a whole subtree (prefixes enumerated on the driver, subtrees
searched apart, outcomes merged)? The subtrees of a scenario's schedules meet in the same
states all the time (a rebalance one event earlier or later), and a task cannot prune on
what another task saw: at consumer_join depth 12 the split search ran 1040 runs where the
sequential one runs 653 (16-160 prefixes handed out), so 2 cores could give at most
x1.26; it also reaches the least schedule of a class by other paths, so its table's
shortest schedules differ from the sequential one's (``ok``: ``d2 l1 l1 d5 l1`` against
``l1 d1 l1 d6 l1``, both valid, at depth 10).

A search can be cancelled (``cancel``); what was read so far is the table, marked
incomplete.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from mqlab.explore.engine import Bounds, RunRecord
from mqlab.explore.search import Item, SearchResult, exhaustive, run_item

if TYPE_CHECKING:
    from mqlab.explore.scenarios import ExploreScenario

__all__ = ["RUNNERS", "explore"]

RUNNERS = ("sequential", "pool", "spark")

_CACHE: dict = {}
#: The visited table as a level starts, inherited by the pool's forked workers.
_VISITED: dict = {}
#: A level with fewer items per worker than this runs here (forking costs more).
_MIN_PER_WORKER = 4


def _worker_run(xs: ExploreScenario, bounds: Bounds, item: Item) -> RunRecord:
    return run_item(xs, bounds, item, _CACHE, _VISITED)


def _learn(rec: RunRecord) -> RunRecord:
    """Note a worker's outcome here, so that the next level's workers (forked, or sent
    the cache) classify that final state without computing it again (a third of a run)."""
    if rec.outcome is not None:
        _CACHE.setdefault(rec.final_digest, (rec.outcome, rec.counts))
    return rec


def _arrow_tasks(blob: bytes, items: list[Item], tasks: int):
    """``mapInArrow`` body: task ``i`` runs ``items[i::tasks]`` and yields (index, pickled
    record) rows, a batch per task (the items travel inside the function; no shuffle)."""

    def run(batches):
        import pickle

        import pyarrow as pa

        from mqlab.explore import mutants

        xs, bounds, visited, active, cache = pickle.loads(blob)
        mutants.ACTIVE.clear()
        mutants.ACTIVE.update(active)  # the driver's planted bugs, if any
        schema = pa.schema([pa.field("i", pa.int64()), pa.field("rec", pa.binary())])
        for batch in batches:
            for task in batch.column("id").to_pylist():
                rows = [{"i": i, "rec": pickle.dumps(run_item(xs, bounds, items[i], cache,
                                                              visited))}
                        for i in range(task, len(items), tasks)]  # fmt: skip
                yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return run


def _spark_mapper(spark):
    """A mapper running each level's items as Spark tasks (``mapInArrow`` over
    ``spark.range``, as ``mqlab.experiments.spark`` runs a sweep), records back in order."""
    import pickle

    from mqlab.experiments.spark import default_tasks

    cores = default_tasks(spark)

    def mapper(
        xs: ExploreScenario, bounds: Bounds, items: list[Item], visited: dict
    ) -> Iterator[RunRecord]:
        if len(items) < _MIN_PER_WORKER * cores:  # a small level: a job costs more
            yield from (run_item(xs, bounds, it, _CACHE, visited) for it in items)
            return
        # a few tasks per core, so that a core done early takes another
        n = max(1, min(2 * cores, len(items) // _MIN_PER_WORKER))
        from mqlab.explore.mutants import active

        # tasks stop at states already expanded, and plant the driver's mutants
        blob = pickle.dumps((xs, bounds, visited, active(), _CACHE))
        rows = spark.range(0, n, 1, n).mapInArrow(
            _arrow_tasks(blob, items, n), "i long, rec binary"
        )
        out = {r["i"]: r["rec"] for r in rows.collect()}
        for i in range(len(items)):
            yield _learn(pickle.loads(out[i]))

    return mapper


def warm_spark(spark) -> None:
    """Import the explorer in every Python worker of ``spark`` (one task per core): the
    first search's first level otherwise waits for it (~1.5 s; ``bench explore`` warms the
    session before its clock, as it starts the JVM)."""
    from mqlab.experiments.spark import default_tasks

    def run(batches):
        import pyarrow as pa

        import mqlab.explore.search  # noqa: F401

        for batch in batches:
            yield pa.RecordBatch.from_pylist(
                [{"id": i} for i in batch.column("id").to_pylist()],
                schema=pa.schema([pa.field("id", pa.int64())]),
            )

    n = default_tasks(spark)
    spark.range(0, n, 1, n).mapInArrow(run, "id long").collect()


def _ships(spark) -> bool:
    """Executors off this machine need mqlab shipped (local sessions import it here)."""
    try:
        master = spark.sparkContext.master
    except Exception:  # Spark Connect: no sparkContext; ship as sweeps do
        return True
    return not master.startswith("local")


def explore(
    xs: ExploreScenario | str, bounds: Bounds | None = None, *, runner: str = "sequential", workers: int | None = None,
    progress: bool = False, cancel: Callable[[], bool] | None = None, shrink_outcomes: bool = True,
    spark=None,
) -> SearchResult:  # fmt: skip
    """The exhaustive search of ``xs`` (a scenario or its name) within ``bounds`` (default:
    the scenario's own) on ``runner`` (``spark``: a session; default
    ``mqlab.experiments.spark.get_session()``)."""
    if isinstance(xs, str):
        from mqlab.explore.scenarios import get_scenario

        xs = get_scenario(xs)
    if bounds is None:
        bounds = Bounds(depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {list(RUNNERS)}, got {runner!r}")
    kw = dict(progress=progress, cancel=cancel, shrink_outcomes=shrink_outcomes)
    if runner == "sequential":
        return exhaustive(xs, bounds, **kw)
    if runner == "spark":
        from mqlab.experiments.spark import get_session

        spark = spark or get_session()
        if _ships(spark):
            from mqlab.experiments.ship import ship

            ship(spark)
        return exhaustive(xs, bounds, mapper=_spark_mapper(spark), **kw)
    n = workers or os.cpu_count() or 2
    ctx = multiprocessing.get_context("fork")

    def mapper(xs_, b_, items, visited):
        # a pool per level, forked now: its workers see the visited table as the level
        # starts (copy-on-write) and stop at states in it, as a sequential run would
        global _VISITED
        if len(items) < _MIN_PER_WORKER * n:  # a small level: forking costs more
            yield from (run_item(xs_, b_, it, _CACHE, visited) for it in items)
            return
        _VISITED = visited
        try:
            with ctx.Pool(n) as pool:
                for rec in pool.imap(partial(_worker_run, xs_, b_), items):
                    yield _learn(rec)
        finally:
            _VISITED = {}

    return exhaustive(xs, bounds, mapper=mapper, **kw)
