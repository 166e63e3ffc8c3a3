"""Where a search's runs execute: in this process, a process pool, or Spark tasks.

Mirrors no RocketMQ class. ``mqlab.explore.search.exhaustive`` hands a *mapper* each
level's work items (schedule prefixes) in ``sort_key`` order and reads the records back
in the same order, so the outcome table never depends on which worker ran what:

- ``sequential``: one item after the other, here;
- ``pool``: a ``multiprocessing`` pool (fork), items in chunks, results in order
  (``imap``); each worker keeps its own outcome cache;
- ``spark``: each level's items split by prefix into tasks (``mqlab.experiments.spark``'s
  session), records collected in order.

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


def _worker_run(xs: ExploreScenario, bounds: Bounds, item: Item) -> RunRecord:
    return run_item(xs, bounds, item, _CACHE)


def _spark_mapper(xs: ExploreScenario, bounds: Bounds, items: list[Item]) -> Iterator[RunRecord]:
    import pickle

    from mqlab.experiments.spark import get_session

    spark = get_session()
    sc = spark.sparkContext
    blob = pickle.dumps((xs, bounds))
    n = max(1, min(len(items), sc.defaultParallelism * 2))

    def task(part):
        import pickle as p

        x, b = p.loads(blob)
        for i, it in part:
            yield i, p.dumps(run_item(x, b, it, _CACHE))

    rdd = sc.parallelize(list(enumerate(items)), n).mapPartitions(task)
    out = dict(rdd.collect())
    for i in range(len(items)):
        yield pickle.loads(out[i])


def explore(
    xs: ExploreScenario, bounds: Bounds, *, runner: str = "sequential", workers: int | None = None,
    progress: bool = False, cancel: Callable[[], bool] | None = None, shrink_outcomes: bool = True,
) -> SearchResult:  # fmt: skip
    """The exhaustive search of ``xs`` within ``bounds`` on ``runner``."""
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {list(RUNNERS)}, got {runner!r}")
    kw = dict(progress=progress, cancel=cancel, shrink_outcomes=shrink_outcomes)
    if runner == "sequential":
        return exhaustive(xs, bounds, **kw)
    if runner == "spark":
        return exhaustive(xs, bounds, mapper=_spark_mapper, **kw)
    n = workers or os.cpu_count() or 2
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(n) as pool:

        def mapper(xs_, b_, items):
            chunk = max(1, len(items) // (4 * n))
            return pool.imap(partial(_worker_run, xs_, b_), items, chunksize=chunk)

        return exhaustive(xs, bounds, mapper=mapper, **kw)
