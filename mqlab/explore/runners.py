"""Where a search's runs execute: in this process, a process pool, or Spark tasks.

Mirrors no RocketMQ class. ``mqlab.explore.search.exhaustive`` hands a *mapper* each
level's work items (schedule prefixes) in ``sort_key`` order and reads the records back
in the same order, so the outcome table never depends on which worker ran what:

- ``sequential``: one item after the other, here;
- ``pool``: a ``multiprocessing`` pool (forked once, at the first level of two items or
  more); each worker *claims* the level's items in order and leaves their records as
  files the driver reads in order as they land (``mqlab.explore.spool``). Each worker
  reads the search's visited table *live* from its journal (``mqlab.explore.journal``): a
  run stops at a state that an item before it expanded, even one read a moment ago, as
  the sequential run does;
- ``spark``: on a local session, one job for the whole search, one task per core, each
  serving every level (``_SparkLocal``): it claims items (``_claim_level``) as the pool's
  workers do. With executors on other machines, each level of at least
  ``_MIN_PER_WORKER`` items a core is a job of its own: the items split into stripes, the
  table as the level starts travels with them, and the records are collected; smaller
  levels run on the driver.

Every runner reads the same records in the same order: the table *and* the figures (runs,
states, distinct, pruned) are the sequential search's.

Random walks and PCT runs (``walks``) go through the same mappers: each walk is an item
of one level (``Item.sample``: its seed), run by whichever worker claims it, never cut
short by the visited table; the driver reads the records in seed order and shrinks each
class's least schedule here, so the table is the one ``random_walks`` gives in one
process.

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

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from mqlab.explore.engine import Bounds, RunRecord, _fast_tmp
from mqlab.explore.journal import Journal, LiveVisited
from mqlab.explore.search import (
    Item,
    SearchResult,
    exhaustive,
    pct_runs,
    random_walks,
    run_item,
)
from mqlab.explore.tmpdirs import owner_tag, sweep

if TYPE_CHECKING:
    from mqlab.explore.scenarios import ExploreScenario

__all__ = ["RUNNERS", "explore", "walks"]

RUNNERS = ("sequential", "pool", "spark")

_CACHE: dict = {}
#: A worker's live tables (``mqlab.explore.journal``), by journal path: a pool worker, or a
#: reused Spark Python worker, keeps its table from one level to the next.
_LIVE_BY_PATH: dict[str, LiveVisited] = {}
#: A level with fewer items per worker than this runs here (a job or a task costs more).
_MIN_PER_WORKER = 4
#: Tasks per core of a Spark level, so that a core done early takes another.
_TASKS_PER_CORE = 4


def _learn(rec: RunRecord) -> RunRecord:
    """Note a worker's outcome here, so that a small level run here classifies that final
    state without computing it again (a third of a run)."""
    if rec.outcome is not None:
        _CACHE.setdefault(rec.final_digest, (rec.outcome, rec.counts))
    return rec


def _worker_live(path: str) -> LiveVisited:
    """A worker's visited table (and outcome cache, ``.cache``), read live from the
    search's journal at ``path``. A worker keeps its table from one level to the next and
    only reads the frames written since."""
    live = _LIVE_BY_PATH.get(path)
    if live is None:
        live = LiveVisited.open({}, path, 0, {})
        if live is None:
            raise RuntimeError(f"explore: this worker cannot read the search's journal {path}")
        for old in _LIVE_BY_PATH.values():  # an earlier search's
            old.close()
        _LIVE_BY_PATH.clear()
        _LIVE_BY_PATH[path] = live
    return live


def _claim_level(blob: bytes, journal: str, spool: str) -> int:
    """A worker's part of a level (a pool task, or a Spark task on this machine): claim
    items of ``spool`` in order and run them against the journal's live table
    (``mqlab.explore.spool.claim``)."""
    import pickle

    from mqlab.explore.spool import claim

    xs, bounds, items = _unpack(blob)
    live = _worker_live(journal)
    return claim(spool, len(items),
                 lambda i: pickle.dumps(run_item(xs, bounds, items[i], live.cache, live)))  # fmt: skip


def _unpack(blob: bytes) -> tuple:
    """A level's ``(xs, bounds, mutants, items)`` in a worker: plant the driver's mutants
    (its planted bugs, if any) and give ``(xs, bounds, items)``."""
    import pickle

    from mqlab.explore import mutants

    xs, bounds, active, items = pickle.loads(blob)
    mutants.ACTIVE.clear()
    mutants.ACTIVE.update(active)
    return xs, bounds, items


def _spark_task(blob: bytes, visited_blob: bytes, tasks: int):
    """Task ``t`` of a level on executors elsewhere runs ``items[t::tasks]`` against the
    table sent as the level started, and gives ``(index, pickled record)``."""

    def records(t: int):
        import pickle

        xs, bounds, items = _unpack(blob)
        visited, cache = pickle.loads(visited_blob)
        for i in range(t, len(items), tasks):
            yield i, pickle.dumps(run_item(xs, bounds, items[i], cache, visited))

    return records


def _arrow_tasks(run):
    """``mapInArrow`` body over ``spark.range(tasks)`` (a Spark Connect session has no RDDs):
    each task's rows ``(i, rec)`` as one batch."""

    def body(batches):
        import pyarrow as pa

        schema = pa.schema([pa.field("i", pa.int64()), pa.field("rec", pa.binary())])
        for batch in batches:
            for t in batch.column("id").to_pylist():
                rows = [{"i": i, "rec": rec} for i, rec in run(t)]
                yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return body


def _serve(levels: str, journal: str) -> int:
    """A local session's Spark task for a whole search: serve its levels
    (``mqlab.explore.spool.serve_levels``), claiming items of each as the pool's workers do."""
    import pickle

    from mqlab.explore.spool import serve_levels

    def work(data: bytes) -> None:
        blob, spool = pickle.loads(data)
        _claim_level(blob, journal, spool)

    return serve_levels(levels, work)


class _SparkLocal:
    """A local session's levels: one Spark job for the whole search, started at its first
    level of two items or more, one task per core, each serving every level (``_serve``):
    a level costs no job of its own (a job costs ~0.05-0.1 s; consumer_join depth 13 has 9
    levels). Records come back through each level's spool, read as they land."""

    def __init__(self, spark, cores: int, journal: Journal) -> None:
        import tempfile

        self.spark = spark
        self.cores = cores
        self.journal = journal
        self.levels = tempfile.mkdtemp(
            prefix=f"mqlab-explore-levels-{owner_tag()}-", dir=_fast_tmp()
        )
        self.sent = 0
        self.thread = None
        self.ended: dict = {}

    def _start(self) -> None:
        import threading

        levels, journal, n = self.levels, self.journal.path, self.cores

        def job() -> None:
            try:
                rdd = self.spark.sparkContext.parallelize(range(n), n)
                self.ended["done"] = rdd.mapPartitions(
                    lambda _: [_serve(levels, journal)]
                ).collect()
            except BaseException as e:  # noqa: BLE001 (raised in the reading thread)
                self.ended["error"] = e

        self.thread = threading.Thread(target=job, name="mqlab-explore-spark", daemon=True)
        self.thread.start()

    def records(self, blob: bytes, count: int) -> Iterator[bytes]:
        import pickle

        from mqlab.explore.spool import Spool

        if self.thread is None:
            self._start()
        assert self.thread is not None
        spool = Spool(_fast_tmp())
        try:
            level = os.path.join(self.levels, f"{self.sent}.level")
            with open(level + ".part", "wb") as f:
                f.write(pickle.dumps((blob, spool.path)))
            os.rename(level + ".part", level)
            self.sent += 1
            yield from spool.records(count, self.thread.is_alive, lambda: self.ended.get("error"))
        finally:
            spool.close()  # a task still on an item of it leaves it when it is done

    def close(self) -> None:
        import shutil

        with open(os.path.join(self.levels, "done"), "w"):
            pass
        if self.thread is not None:
            self.thread.join()
        shutil.rmtree(self.levels, ignore_errors=True)


class _SparkMapper:
    """A mapper running each level's items as Spark tasks, records back in item order.

    - A local session (its Python workers on this machine): one job for the search
      (``_SparkLocal``), one task per core claiming each level's items in order and
      reading the search's journal live, as the pool's workers do; the driver reads each
      record as it lands;
    - executors elsewhere: the level's items split into ``_TASKS_PER_CORE`` tasks a core
      (task ``t`` runs items ``t, t + n, …``), the visited table as the level starts sent
      with them, records collected: an RDD job, or on Spark Connect ``mapInArrow`` over
      ``spark.range``, as ``mqlab.experiments.spark`` runs a sweep.

    ``claiming``: force one way or the other (default: claiming where it can). A context
    manager: leaving it ends the local session's job.
    """

    def __init__(self, spark, journal: Journal | None, claiming: bool | None = None) -> None:
        from mqlab.experiments.spark import default_tasks, is_connect

        self.spark = spark
        self.connect = is_connect(spark)
        self.cores = max(1, default_tasks(spark) // 4)  # a sweep's default is 4 tasks a core
        if claiming is None:
            claiming = not _ships(spark) and not self.connect
        self.local = _SparkLocal(spark, self.cores, journal) if claiming and journal else None

    def __call__(
        self, xs: ExploreScenario, bounds: Bounds, items: list[Item], visited: dict
    ) -> Iterator[RunRecord]:
        import pickle

        from mqlab.explore.mutants import active

        small = 2 if self.local else _MIN_PER_WORKER * self.cores  # a job costs more
        if len(items) < small:
            yield from (run_item(xs, bounds, it, _CACHE, visited) for it in items)
            return
        if self.local is not None:
            blob = pickle.dumps((xs, bounds, active(), items))
            for data in self.local.records(blob, len(items)):
                yield _learn(pickle.loads(data))
            return
        n = max(1, min(_TASKS_PER_CORE * self.cores, len(items) // _MIN_PER_WORKER))
        blob = pickle.dumps((xs, bounds, active(), items))
        run = _spark_task(blob, pickle.dumps((visited, _CACHE)), n)
        if self.connect:
            df = self.spark.range(0, n, 1, n).mapInArrow(_arrow_tasks(run), "i long, rec binary")
            out = {r["i"]: r["rec"] for r in df.collect()}
        else:
            rdd = self.spark.sparkContext.parallelize(range(n), n)
            out = dict(rdd.mapPartitionsWithIndex(lambda t, _: run(t)).collect())
        for i in range(len(items)):
            yield _learn(pickle.loads(out[i]))

    def __enter__(self) -> _SparkMapper:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.local is not None:
            self.local.close()


def warm_spark(spark) -> None:
    """Import what a run needs in every Python worker of ``spark`` (one task per core): the
    first search's first level otherwise waits for it (~1 s a worker; ``bench explore``
    warms the session before its clock, as it starts the JVM)."""
    from mqlab.experiments.spark import default_tasks

    def run(t, _):
        import mqlab.experiments.run  # noqa: F401
        import mqlab.explore.outcome  # noqa: F401
        import mqlab.explore.search  # noqa: F401

        yield t

    n = default_tasks(spark)
    spark.sparkContext.parallelize(range(n), n).mapPartitionsWithIndex(run).collect()


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
    xs, bounds = _scenario_and_bounds(xs, bounds, runner)
    kw = dict(progress=progress, cancel=cancel, shrink_outcomes=shrink_outcomes)
    with _mapper(runner, workers, spark) as (mapper, journal):
        return exhaustive(xs, bounds, mapper=mapper, journal=journal, **kw)


def walks(
    xs: ExploreScenario | str, bounds: Bounds | None, seeds: Iterable[int], *,
    runner: str = "sequential", workers: int | None = None, spark=None, pct_depth: int = 0,
    **kw,
) -> SearchResult:  # fmt: skip
    """``random_walks`` of ``xs``, one per seed, on ``runner`` as ``explore`` runs a search
    (each walk an item of one level: ``Item.sample``), or ``pct_runs`` of depth
    ``pct_depth`` when it is not 0. The same table on every runner: the records are read in
    seed order (its first-found times aside, which are the wall clock's). ``kw``: the
    other keyword arguments of ``random_walks`` / ``pct_runs``."""
    xs, bounds = _scenario_and_bounds(xs, bounds, runner)
    with _mapper(runner, workers, spark) as (mapper, _):
        if pct_depth:
            return pct_runs(xs, bounds, seeds, depth=pct_depth, mapper=mapper, **kw)
        return random_walks(xs, bounds, seeds, mapper=mapper, **kw)


def _scenario_and_bounds(
    xs: ExploreScenario | str, bounds: Bounds | None, runner: str
) -> tuple[ExploreScenario, Bounds]:
    if isinstance(xs, str):
        from mqlab.explore.scenarios import get_scenario

        xs = get_scenario(xs)
    if bounds is None:
        bounds = Bounds(depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {list(RUNNERS)}, got {runner!r}")
    sweep(_fast_tmp())  # scratch files of searches killed before they could remove them
    return xs, bounds


@contextlib.contextmanager
def _mapper(runner: str, workers: int | None, spark) -> Iterator[tuple]:
    """``(mapper, journal)`` for ``runner``: ``(None, None)`` runs here; a pool or Spark
    mapper with the journal its workers read (``spark``: a session; default
    ``mqlab.experiments.spark.get_session()``)."""
    if runner == "sequential":
        yield None, None
        return
    with Journal(_fast_tmp()) as journal:
        if runner == "spark":
            from mqlab.experiments.spark import get_session

            spark = spark or get_session()
            if _ships(spark):
                from mqlab.experiments.ship import ship

                ship(spark)
            with _SparkMapper(spark, journal) as mapper:
                yield mapper, journal
        else:
            with _PoolMapper(workers or os.cpu_count() or 2, journal) as mapper:
                yield mapper, journal


class _PoolMapper:
    """A mapper running each level's items in one ``multiprocessing`` pool (forked at the
    first level of two items or more, kept for the search): each worker runs
    ``_claim_level``, taking items in order and reading the search's journal live; records
    come back as files, read in order as they land (``mqlab.explore.spool``). A level of
    one item runs here."""

    def __init__(self, workers: int, journal: Journal) -> None:
        self.workers = workers
        self.journal = journal
        self.pool = None

    def __call__(self, xs, bounds, items, visited):
        import pickle

        from mqlab.explore.mutants import active
        from mqlab.explore.spool import Spool

        if len(items) < 2:  # nothing to run side by side
            yield from (run_item(xs, bounds, it, _CACHE, visited) for it in items)
            return
        if self.pool is None:
            self.pool = multiprocessing.get_context("fork").Pool(self.workers)
        blob = pickle.dumps((xs, bounds, active(), items))
        spool = Spool(_fast_tmp())
        tasks = [self.pool.apply_async(_claim_level, (blob, self.journal.path, spool.path))
                 for _ in range(self.workers)]  # fmt: skip

        def error() -> BaseException | None:
            for t in tasks:
                if t.ready() and not t.successful():
                    try:
                        t.get()
                    except BaseException as e:  # noqa: BLE001 (raised by the reader)
                        return e
            return None

        try:
            for data in spool.records(len(items), lambda: not all(t.ready() for t in tasks),
                                      error):  # fmt: skip
                yield _learn(pickle.loads(data))
        finally:
            spool.stop()
            for t in tasks:  # each finishes the item it runs; a worker killed by a Ctrl-C
                t.wait(5)  # never answers (the pool replaces it): do not wait for it
            spool.close()

    def __enter__(self) -> _PoolMapper:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
