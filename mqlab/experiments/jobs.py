"""A Spark action with a progress bar that Ctrl-C (or a kernel interrupt) cancels.

Mirrors no RocketMQ class. ``run_job(spark, action, …)`` runs ``action`` (e.g. the
``count()`` that executes a sweep's runs) in a helper thread under its own job group
(``SparkContext.setJobGroup(…, interruptOnCancel=True)``) on a classic session, or its own
operation tag (``spark.addTag``) on Spark Connect. The calling thread waits, polling the
job's progress four times a second into a ``tqdm.auto`` bar (a widget in Jupyter, text on
a terminal): on a classic session from ``statusTracker()``, on Connect from the progress
the server streams (``registerProgressHandler``). Progress counts the finished tasks of
the stage that runs the sweep (``tasks`` of them) and shows them as runs.

Because the calling thread only waits, a ``KeyboardInterrupt`` reaches it at once. It
then cancels the job group (``cancelJobGroup``) or interrupts the tag (``interruptTag``),
waits up to ``cancel_timeout_s`` for the helper thread to return, and re-raises the
``KeyboardInterrupt``: the sweep's tasks are killed on the executors, nothing else of the
session is touched, and the session stays usable.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["run_job"]

T = TypeVar("T")


def _classic_done(sc: Any, group: str, tasks: int) -> int:
    """Finished tasks of the job group's stages that have ``tasks`` tasks."""
    tracker = sc.statusTracker()
    done = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job is not None else ():
            stage = tracker.getStageInfo(stage_id)
            if stage is not None and stage.numTasks == tasks:
                done += stage.numCompletedTasks
    return done


class _ConnectProgress:
    """A Spark Connect progress handler remembering the finished tasks of the run stage."""

    def __init__(self, tasks: int) -> None:
        self.tasks = tasks
        self.by_stage: dict[int, int] = {}

    def __call__(self, stages, inflight_tasks, operation_id, done) -> None:
        for s in stages or ():
            if s.num_tasks == self.tasks:
                self.by_stage[s.stage_id] = s.num_completed_tasks

    def done(self) -> int:
        return sum(self.by_stage.values())


def run_job(spark: Any, action: Callable[[], T], *, runs: int, tasks: int, desc: str,
            progress: bool = True, cancel_timeout_s: float = 30.0) -> T:  # fmt: skip
    """Run ``action()`` as a cancellable Spark job group; show its tasks as ``runs`` runs.

    Args:
        spark: the session ``action`` uses.
        action: a callable that runs Spark jobs (e.g. ``df.count``).
        runs: what the bar counts to.
        tasks: how many tasks the stage that does the work has (the bar moves by
            ``runs / tasks`` as each finishes).
        desc: the bar's label (and the job group's description).
        progress: show the bar.
        cancel_timeout_s: how long to wait for cancelled jobs to return.

    Returns:
        ``action()``'s value.

    Raises:
        KeyboardInterrupt: after cancelling the jobs, if interrupted.
    """
    from pyspark import InheritableThread
    from tqdm.auto import tqdm

    from mqlab.experiments.spark import is_connect

    connect = is_connect(spark)
    group = f"mqlab-{uuid.uuid4().hex[:12]}"
    box: dict[str, Any] = {}
    finished = threading.Event()
    handler = _ConnectProgress(tasks) if connect else None

    def target() -> None:
        try:
            if connect:
                spark.addTag(group)
            else:
                spark.sparkContext.setJobGroup(group, desc, interruptOnCancel=True)
            box["value"] = action()
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            finished.set()

    polled = [0]  # classic: finished tasks, read by a poller thread (never this one)

    def poll() -> None:
        while not finished.wait(0.25):
            try:
                polled[0] = _classic_done(spark.sparkContext, group, tasks)
            except Exception:  # the session stopping under us: the bar just stops moving
                return

    if handler is not None:
        spark.registerProgressHandler(handler)
    # classic: a pinned JVM thread carries the job group; Connect: the tag is thread-local
    thread = threading.Thread(target=target, daemon=True) if connect else InheritableThread(
        target, daemon=True)  # fmt: skip
    bar = tqdm(total=runs, desc=desc, unit="run", disable=not progress)
    try:
        thread.start()
        if progress and handler is None:
            threading.Thread(target=poll, daemon=True).start()
        # This thread only waits (no Py4J or gRPC call), so Ctrl-C lands here at once.
        while not finished.wait(0.25):
            done = handler.done() if handler is not None else polled[0]
            shown = runs * min(done, tasks) // tasks
            if shown > bar.n:
                bar.update(shown - bar.n)
        if "error" in box:
            raise box["error"]
        bar.update(runs - bar.n)
        return box["value"]
    except KeyboardInterrupt:
        if connect:
            spark.interruptTag(group)
        else:
            spark.sparkContext.cancelJobGroup(group)
        finished.wait(cancel_timeout_s)
        raise
    finally:
        bar.close()
        if handler is not None:
            spark.removeProgressHandler(handler)
