"""The client's pull loop driver: one FIFO of pull requests, served one at a time.

Mirrors ``PullMessageService`` (client/impl/consumer/PullMessageService.java, RocketMQ 4.9.3);
mechanisms.md "The consumer's pull loop" steps 1–3 and "PullMessageService#run", mechanisms.md "The consumer's pull loop" "PullMessageService";
docs/reference.md §10.14.

Java runs one service thread per ``MQClientInstance`` that blocks on
``pullRequestQueue.take()`` and calls ``DefaultMQPushConsumerImpl#pullMessage`` for each
request, plus a single-thread scheduler for "later" work. Here:

* ``pull_request_queue`` is the ``LinkedBlockingQueue`` (a deque, FIFO);
* ``execute_pull_request_immediately`` appends and arms the timer ``PullMessageService.run``
  (0 ms) if it is not armed; each firing takes exactly one request (so ``step()`` shows one
  pull at a time) and re-arms while requests remain;
* ``execute_pull_request_later`` is a timer ``PullMessageService.executePullRequestLater``
  that puts the request back after the delay (50 ms flow control, 1000 ms paused, the
  exception delay, ``pullInterval``). These timers are *daemon*: a paused consumer retries
  forever, and ``run_until_idle`` must still return;
* ``execute_task_later`` is the scheduler's ``schedule(Runnable)`` (the OFFSET_ILLEGAL fix-up).

Each Java ``schedule()`` is a task of its own that nothing replaces, while arming a timer
whose ``(node, name, key)`` is pending replaces it. The instance's consumer groups share this
service, so each later timer gets its own key: ``<group>@<mq>#<n>``, n counting this
service's scheduled tasks.

A request whose process queue is already dropped is not re-armed for later: Java would
schedule it and then discard it in ``pullMessage`` ("the pull request is dropped"); skipping
the timer spares that no-op.

What it must not know: flow control, brokers, offsets (that is ``DefaultMQPushConsumerImpl``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mqlab.client.consumer.pull_request import PullRequest
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.runtime.context import NodeContext

__all__ = ["PullMessageService"]

C = "PullMessageService"
RUN_TIMER = "PullMessageService.run"
LATER_TIMER = "PullMessageService.executePullRequestLater"
TASK_LATER_TIMER = "PullMessageService.executeTaskLater"


class PullMessageService:
    """Mirrors ``PullMessageService`` (client/impl/consumer, RocketMQ 4.9.3).

    Args:
        mq_client_factory: the owning ``MQClientInstance`` (its ``ctx``, ``tracer`` and
            ``consumer_table`` are read when needed, so the service may be built before the
            instance joins a driver).
    """

    def __init__(self, mq_client_factory: Any) -> None:
        self.mq_client_factory = mq_client_factory
        self.pull_request_queue: deque[PullRequest] = deque()
        self.stopped = True
        self.pulls_taken = 0
        self._later_seq = 0  # numbers the scheduled tasks: one timer key each

    @property
    def ctx(self) -> NodeContext:
        return self.mq_client_factory.ctx

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """``ServiceThread#start``: serve whatever was queued before the start."""
        self.stopped = False
        if self.pull_request_queue:
            self._arm()

    def shutdown(self) -> None:
        """``PullMessageService#shutdown``: stop taking requests; drop later timers."""
        self.stopped = True
        self.ctx.cancel_timer(RUN_TIMER)

    def is_stopped(self) -> bool:
        return self.stopped

    # -- the queue ---------------------------------------------------------------------------------
    def execute_pull_request_immediately(self, pull_request: PullRequest) -> None:
        """Put a request on ``pullRequestQueue``.

        Mirrors PullMessageService#executePullRequestImmediately (RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop"
        step 1 ("放入 pullRequestQueue").
        """
        self.pull_request_queue.append(pull_request)
        tracer = self.mq_client_factory.tracer
        if tracer.enabled:
            mq = pull_request.message_queue
            tracer.emit(
                C + ".executePullRequestImmediately", "1", mq=str(mq),
                next_offset=pull_request.next_offset, queued=len(self.pull_request_queue),
                text=f"queue pull request for {mq.topic}/{mq.broker_name}/{mq.queue_id} "
                f"at offset {pull_request.next_offset}",
            )  # fmt: skip
        if not self.stopped:
            self._arm()

    def execute_pull_request_later(self, pull_request: PullRequest, time_delay: int) -> None:
        """Put a request back after ``time_delay`` ms.

        Mirrors PullMessageService#executePullRequestLater (RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop" step 2.1
        ("50 毫秒以后再拉取"). Timer ``PullMessageService.executePullRequestLater`` keyed by
        ``<group>@<mq>#<n>``, daemon.
        """
        if self.stopped:
            return
        if pull_request.process_queue.dropped:
            return  # see the module essay: Java would discard it when it fires
        self.ctx.set_timer(
            LATER_TIMER, int(time_delay),
            lambda: self.execute_pull_request_immediately(pull_request),
            key=self._task_key(f"{pull_request.consumer_group}@{pull_request.message_queue}"),
            daemon=True,
        )  # fmt: skip

    def execute_task_later(self, task: Callable[[], None], time_delay: int, key: str) -> None:
        """Run ``task`` after ``time_delay`` ms on the service's scheduler.

        Mirrors PullMessageService#executeTaskLater (RocketMQ 4.9.3); used for the
        OFFSET_ILLEGAL fix-up 10 000 ms later (mechanisms.md "The consumer's pull loop" "OFFSET_ILLEGAL"). ``key`` names the
        task in ``next_timers()``; the timer's key is ``<key>#<n>``.
        """
        if self.stopped:
            return
        self.ctx.set_timer(TASK_LATER_TIMER, int(time_delay), task, key=self._task_key(key))

    def _task_key(self, label: str) -> str:
        """A key no pending timer has: every Java ``schedule()`` is its own task."""
        self._later_seq += 1
        return f"{label}#{self._later_seq}"

    # -- the service loop --------------------------------------------------------------------------
    def _arm(self) -> None:
        if not self.ctx.has_timer(RUN_TIMER):
            self.ctx.set_timer(RUN_TIMER, 0, self.run)

    def run(self) -> None:
        """Take one request and pull for it; re-arm while requests remain.

        Mirrors PullMessageService#run (RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop" step 3 ("take") — one loop
        iteration per timer firing.
        """
        if self.stopped or not self.pull_request_queue:
            return
        pull_request = self.pull_request_queue.popleft()
        self.pulls_taken += 1
        self.pull_message(pull_request)
        if self.pull_request_queue and not self.stopped:
            self._arm()

    def pull_message(self, pull_request: PullRequest) -> None:
        """Hand the request to its group's consumer.

        Mirrors PullMessageService#pullMessage (RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop" step 3
        ("selectConsumer": one consumer per group per client instance).
        """
        consumer = self.mq_client_factory.consumer_table.get(pull_request.consumer_group)
        pull = getattr(consumer, "pull_message", None)
        if pull is None:
            tracer = self.mq_client_factory.tracer
            if tracer.enabled:
                tracer.emit(
                    C + ".pullMessage", "3", Kind.ERROR, group=pull_request.consumer_group,
                    text=f"No matched consumer for the PullRequest {pull_request}, drop it",
                )  # fmt: skip
            return
        pull(pull_request)
