"""The consume thread pool, modelled: N workers, one FIFO queue, virtual time per task.

Mirrors the ``ThreadPoolExecutor`` that ``ConsumeMessageConcurrentlyService`` and
``ConsumeMessageOrderlyService`` build (client/impl/consumer, RocketMQ 4.9.3):
``new ThreadPoolExecutor(consumeThreadMin, consumeThreadMax, 60 s, new LinkedBlockingQueue(),
new ThreadFactoryImpl("ConsumeMessageThread_<group>_"))``; docs/reference.md §9, §10.15.

Java's executor adds a thread per submitted task until ``corePoolSize`` threads exist, then
queues. It would only grow past the core size when the queue is full — and a
``LinkedBlockingQueue`` without a bound is never full. So the pool never grows past
``consumeThreadMin``; ``consumeThreadMax`` is inert in 4.9.3 (docs/reference.md §9). This model keeps
exactly that: at most ``core_pool_size`` workers, the rest waits in FIFO order.

A worker is a name (``ConsumeMessageThread_<group>_<n>``, n from 1, as ``ThreadFactoryImpl``
numbers threads). A task starts on a timer named by the owning service (one per worker, keyed
by the worker's name), so starting is asynchronous like ``executor.submit``. Two groups whose
first 100 characters agree name their threads alike (Java too), so their timer keys start
with the whole group (:func:`timer_key_prefix`): one pool's start never replaces another's.
The task calls
:meth:`ConsumeThreadPool.release` when it is done (after its modelled consume time and result
processing), and the next queued task starts on that worker. An idle worker waiting longest
takes the next task (``LinkedBlockingQueue#take`` wakes waiters in order).

What it must not know: messages, listeners, offsets. It owns workers, the queue and counts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial

from mqlab.runtime.context import NodeContext

__all__ = ["ConsumeThreadPool", "thread_prefix", "timer_key_prefix"]

_GROUP_NAME_MAX_IN_PREFIX = 100


def thread_prefix(consumer_group: str) -> str:
    """``ConsumeMessageThread_<group (first 100 chars)>_`` (docs/reference.md §11)."""
    return f"ConsumeMessageThread_{consumer_group[:_GROUP_NAME_MAX_IN_PREFIX]}_"


def timer_key_prefix(consumer_group: str) -> str:
    """What the start timers' keys add before the worker name: nothing when the thread name
    holds the whole group, else ``<group>/`` (the thread names of two groups could collide)."""
    return "" if len(consumer_group) <= _GROUP_NAME_MAX_IN_PREFIX else f"{consumer_group}/"


Task = Callable[[str], None]


class ConsumeThreadPool:
    """A fixed pool of modelled consume threads.

    Args:
        ctx: the client instance's context (timers).
        prefix: thread name prefix (see :func:`thread_prefix`).
        core_pool_size: ``consumeThreadMin``.
        maximum_pool_size: ``consumeThreadMax`` (kept for display; never reached).
        start_timer_name: the timer a task starts on, e.g.
            ``"ConsumeMessageConcurrentlyService.ConsumeRequest.run"``.
        timer_key_prefix: put before the worker name in the start timer's key (see
            :func:`timer_key_prefix`).
    """

    def __init__(
        self,
        ctx: NodeContext,
        prefix: str,
        core_pool_size: int,
        maximum_pool_size: int,
        start_timer_name: str,
        timer_key_prefix: str = "",
    ) -> None:
        if core_pool_size < 1:
            raise ValueError(f"core_pool_size must be >= 1, got {core_pool_size}")
        self.ctx = ctx
        self.prefix = prefix
        self.core_pool_size = core_pool_size
        self.maximum_pool_size = maximum_pool_size
        self.start_timer_name = start_timer_name
        self.timer_key_prefix = timer_key_prefix
        self.workers: list[str] = []
        self.busy: dict[str, bool] = {}
        self._idle: deque[str] = deque()
        self.queue: deque[Task] = deque()
        self.completed_task_count = 0
        self.task_count = 0
        self.largest_pool_size = 0
        self.is_shutdown = False
        self._thread_index = 0  # ThreadFactoryImpl#threadIndex

    # -- inspection ------------------------------------------------------------------------------
    @property
    def pool_size(self) -> int:
        return len(self.workers)

    @property
    def active_count(self) -> int:
        return sum(1 for w in self.workers if self.busy[w])

    @property
    def queue_size(self) -> int:
        return len(self.queue)

    def __repr__(self) -> str:
        return (
            f"ConsumeThreadPool({self.prefix}*, core={self.core_pool_size}, "
            f"active={self.active_count}, queued={self.queue_size}, "
            f"completed={self.completed_task_count})"
        )

    # -- executor ----------------------------------------------------------------------------------
    def submit(self, task: Task) -> bool:
        """``ThreadPoolExecutor#execute``: a new worker below core size, else a free one, else queue.

        Returns:
            False when the pool is shut down (Java: ``RejectedExecutionException``).
        """
        if self.is_shutdown:
            return False
        self.task_count += 1
        if len(self.workers) < self.core_pool_size:
            self._start(self._new_worker(), task)
        elif self._idle:
            self._start(self._idle.popleft(), task)
        else:
            self.queue.append(task)
        return True

    def release(self, worker: str) -> None:
        """The task on ``worker`` finished: take the next queued task or go idle."""
        assert self.busy.get(worker), f"release of a worker that is not busy: {worker}"
        self.busy[worker] = False
        self.completed_task_count += 1
        if self.queue and not self.is_shutdown:
            self._start(worker, self.queue.popleft())
        elif len(self.workers) <= self.core_pool_size:
            self._idle.append(worker)
        else:  # the core size was lowered: the surplus worker exits
            self.workers.remove(worker)
            del self.busy[worker]

    def _new_worker(self) -> str:
        self._thread_index += 1
        worker = f"{self.prefix}{self._thread_index}"
        self.workers.append(worker)
        self.busy[worker] = False
        self.largest_pool_size = max(self.largest_pool_size, len(self.workers))
        return worker

    def _start(self, worker: str, task: Task) -> None:
        self.busy[worker] = True
        self.ctx.set_timer(
            self.start_timer_name, 0, partial(task, worker), key=self.timer_key_prefix + worker
        )

    def set_core_pool_size(self, core_pool_size: int) -> None:
        """``ThreadPoolExecutor#setCorePoolSize``: more workers start on queued tasks at once."""
        if core_pool_size < 1:
            raise ValueError(f"core_pool_size must be >= 1, got {core_pool_size}")
        self.core_pool_size = core_pool_size
        while self.queue and len(self.workers) < core_pool_size:
            self._start(self._new_worker(), self.queue.popleft())

    def shutdown(self) -> int:
        """``ThreadUtils.shutdownGracefully(executor, 0)`` → ``shutdownNow``: drop queued tasks.

        Tasks already running finish their current step. Returns how many were dropped.
        """
        self.is_shutdown = True
        dropped = len(self.queue)
        self.queue.clear()
        return dropped
