"""Where a search's runs execute: in this process, a process pool, or Spark tasks.

Mirrors no RocketMQ class. ``mqlab.explore.search.exhaustive`` hands a *mapper* each
level's work items (schedule prefixes) in ``sort_key`` order and reads the records back
in the same order, so the outcome table never depends on which worker ran what:

- ``sequential``: one item after the other, here;
- ``pool``: a ``multiprocessing`` pool forked per level: its workers inherit the visited
  table, so their runs stop at states expanded before, as sequential runs do; during the
  level they also share the states they pass (a ``Manager`` dict) and stop on those. That
  is only a hint: a record stopped on a state that its place in the reading order does not
  confirm is run again in the search (``SearchResult.reruns``). Items go in chunks,
  results come back in order (``imap``); levels under 4 items per worker run here;
- ``spark``: each level's items split by prefix into tasks (``mapInArrow`` over
  ``spark.range``, as ``mqlab.experiments.spark`` runs a sweep; the visited table travels
  with them), records collected in order.

A search can be cancelled (``cancel``); what was read so far is the table, marked
incomplete.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from mqlab.explore.engine import Bounds, RunRecord
from mqlab.explore.search import Item, SearchResult, exhaustive, run_item

if TYPE_CHECKING:
    from mqlab.explore.scenarios import ExploreScenario

__all__ = ["RUNNERS", "explore"]

RUNNERS = ("sequential", "pool", "spark")

_CACHE: dict = {}
#: The visited table as a level starts, inherited by the pool's forked workers.
_VISITED: dict = {}


_SHARED: Any = None


def _worker_run(xs: ExploreScenario, bounds: Bounds, item: Item) -> RunRecord:
    return run_item(xs, bounds, item, _CACHE, _VISITED, _SHARED)


def _arrow_tasks(blob: bytes, items: list[Item], tasks: int):
    """``mapInArrow`` body: task ``i`` runs ``items[i::tasks]`` and yields (index, pickled
    record) rows (the items travel inside the function; no shuffle)."""

    def run(batches):
        import pickle

        import pyarrow as pa

        from mqlab.explore import mutants

        xs, bounds, visited, active = pickle.loads(blob)
        mutants.ACTIVE.clear()
        mutants.ACTIVE.update(active)  # the driver's planted bugs, if any
        schema = pa.schema([pa.field("i", pa.int64()), pa.field("rec", pa.binary())])
        for batch in batches:
            for task in batch.column("id").to_pylist():
                for i in range(task, len(items), tasks):
                    rec = run_item(xs, bounds, items[i], _CACHE, visited)
                    yield pa.RecordBatch.from_pylist(
                        [{"i": i, "rec": pickle.dumps(rec)}], schema=schema
                    )

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
        n = max(1, min(cores, len(items)))
        from mqlab.explore.mutants import active

        # tasks stop at states already expanded, and plant the driver's mutants
        blob = pickle.dumps((xs, bounds, visited, active()))
        rows = spark.range(0, n, 1, n).mapInArrow(
            _arrow_tasks(blob, items, n), "i long, rec binary"
        )
        out = {r["i"]: r["rec"] for r in rows.collect()}
        for i in range(len(items)):
            yield pickle.loads(out[i])

    return mapper


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
    manager = ctx.Manager()

    def mapper(xs_, b_, items, visited):
        # a pool per level, forked now: its workers see the visited table as the level
        # starts (copy-on-write) and stop at states in it, as a sequential run would; and
        # they share what they see during the level (a hint, checked when read)
        global _VISITED, _SHARED
        if len(items) < 4 * n:  # a small level: forking costs more than it gives
            yield from (run_item(xs_, b_, it, _CACHE, visited) for it in items)
            return
        _VISITED, _SHARED = visited, manager.dict()
        try:
            with ctx.Pool(min(n, len(items))) as pool:
                chunk = max(1, len(items) // (4 * n))
                yield from pool.imap(partial(_worker_run, xs_, b_), items, chunksize=chunk)
        finally:
            _VISITED, _SHARED = {}, None

    try:
        return exhaustive(xs, bounds, mapper=mapper, **kw)
    finally:
        manager.shutdown()
