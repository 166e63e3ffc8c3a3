"""The push consumer's pull loop: checks, flow control, PULL_MESSAGE, and what each result does.

Mirrors ``DefaultMQPushConsumerImpl#pullMessage`` and its anonymous ``PullCallback``,
``#correctTagsOffset``, ``#executePullRequestImmediately`` / ``#executePullRequestLater`` /
``#executeTaskLater`` (client/impl/consumer/DefaultMQPushConsumerImpl.java, RocketMQ 4.9.3);
mechanisms.md "The consumer's pull loop" steps 2–2.6, mechanisms.md "The consumer's pull loop" "DefaultMQPushConsumerImpl#pullMessage"; docs/reference.md §9 (constants),
§10.14.

The pull loop for one queue::

    PullMessageService.run ─► pull_message(pr) ─► checks (dropped, state, paused,
      flow control: count / size / span, orderly lock, subscription) ─► PULL_MESSAGE
      ─► PullCallback: FOUND → put in ProcessQueue, submit to the consume service, pull again
                       NO_NEW_MSG / NO_MATCHED_MSG → correct offset, pull again
                       OFFSET_ILLEGAL → drop the queue, fix the offset 10 s later
                       exception → pull again after pull_time_delay_mills_when_exception

Each pull is a generator task (the RPC, and for an orderly queue's first locked pull the
offset look-up, are Java's blocking calls). Every check and every status is one trace event
with a sentence in ``text`` (component ``DefaultMQPushConsumerImpl.pullMessage``, step = the
mechanisms.md "The consumer's pull loop" step: "2" checks, "2.1" flow control and a missing subscription, "2.3" orderly
lock, "2.5" the request, "2.6" the callback).

``PullMessageMixin`` is a part of ``DefaultMQPushConsumerImpl`` (it reads the consumer's
settings, offset store, rebalance impl, consume service and counters); it is a separate
module only to keep one mechanism per module.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mqlab.client.consumer.consumer_enums import MessageModel, ServiceState, message_model_of
from mqlab.client.consumer.pull_api_wrapper import PullResult, PullStatus
from mqlab.client.consumer.pull_request import PullRequest
from mqlab.client.consumer.rebalance_impl import NETWORK_ERRORS
from mqlab.client.producer.send_future import CommunicationMode
from mqlab.common.filter_api import SubscriptionData
from mqlab.common.message import MessageQueue
from mqlab.common.sysflag import PullSysFlag
from mqlab.runtime.task import spawn
from mqlab.trace.events import Kind

__all__ = [
    "PullMessageMixin",
    "PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION",
    "PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL",
    "PULL_TIME_DELAY_MILLS_WHEN_SUSPEND",
    "BROKER_SUSPEND_MAX_TIME_MILLIS",
    "CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND",
    "OFFSET_ILLEGAL_FIX_DELAY",
]

Gen = Generator[Any, Any, Any]
PULL = "DefaultMQPushConsumerImpl.pullMessage"

# docs/reference.md §9 "Internal constants" (Java's names and spellings)
#: DefaultMQPushConsumerImpl's field initialiser; its constructor overwrites it with
#: ClientConfig#pullTimeDelayMillsWhenException (1000 ms) — see DefaultMQPushConsumer.
PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION = 3000
PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL = 50
PULL_TIME_DELAY_MILLS_WHEN_SUSPEND = 1000
BROKER_SUSPEND_MAX_TIME_MILLIS = 1000 * 15
CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND = 1000 * 30
#: executeTaskLater delay of the OFFSET_ILLEGAL fix-up.
OFFSET_ILLEGAL_FIX_DELAY = 10_000


def _mq_text(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


class PullMessageMixin:
    """``DefaultMQPushConsumerImpl#pullMessage`` and its ``PullCallback``.

    Expects the host class to provide ``ctx``, ``mq_client_factory``,
    ``default_mq_push_consumer``, ``service_state``, ``pause``, ``consume_orderly``,
    ``rebalance_impl``, ``offset_store``, ``pull_api_wrapper``, ``consume_message_service``,
    ``pull_time_delay_mills_when_exception``, ``stats``, ``_emit`` and ``_task_failed``.
    """

    # -- PullMessageService plumbing ---------------------------------------------------------------
    def execute_pull_request_immediately(self, pull_request: PullRequest) -> None:
        self.mq_client_factory.pull_message_service.execute_pull_request_immediately(pull_request)

    def execute_pull_request_later(self, pull_request: PullRequest, time_delay: int) -> None:
        self.mq_client_factory.pull_message_service.execute_pull_request_later(
            pull_request, time_delay
        )

    def execute_task_later(self, task: Any, time_delay: int, key: str) -> None:
        self.mq_client_factory.pull_message_service.execute_task_later(task, time_delay, key)

    def pull_message(self, pull_request: PullRequest) -> None:
        """Check, then send one PULL_MESSAGE for the request (a task).

        Mirrors DefaultMQPushConsumerImpl#pullMessage (client/impl/consumer, RocketMQ 4.9.3);
        mechanisms.md "The consumer's pull loop" steps 2–2.6; docs/reference.md §10.14.
        """
        spawn(self.ctx, self._pull_message(pull_request),
              name=f"{PULL} {pull_request.message_queue}", on_done=self._task_failed)  # fmt: skip

    def _later(self, pr: PullRequest, delay: int, step: str, why: str, **fields: Any) -> None:
        self.execute_pull_request_later(pr, delay)
        self._emit(PULL, step, mq=str(pr.message_queue), delay_ms=delay,
                   text=f"{why} → pull {_mq_text(pr.message_queue)} again in {delay} ms",
                   **fields)  # fmt: skip

    def _pull_message(self, pr: PullRequest) -> Gen:
        dpc = self.default_mq_push_consumer
        pq = pr.process_queue
        mq = pr.message_queue
        # step 2 (mechanisms.md "The consumer's pull loop"): a dropped queue's request is discarded
        if pq.dropped:
            self._emit(PULL, "2", mq=str(mq), text=f"the pull request[{pr}] is dropped")
            return
        pq.last_pull_timestamp = self.ctx.now_ms
        if self.service_state is not ServiceState.RUNNING:
            self._later(pr, self.pull_time_delay_mills_when_exception, "2",
                        f"consumer state {self.service_state.value} not RUNNING")  # fmt: skip
            return
        if self.pause:
            self._later(pr, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND, "2", "consumer was paused")
            return
        # step 2.1 (mechanisms.md "The consumer's pull loop"): flow control by cached count, size and span
        cached_count = pq.msg_count
        cached_mib = pq.cached_msg_size_in_mib
        if cached_count > dpc.pull_threshold_for_queue:
            self.stats.queue_flow_control_times += 1
            self.stats.flow_control["count"] += 1
            self._later(pr, PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL, "2.1",
                        f"flow control: {cached_count} cached > pullThresholdForQueue "
                        f"{dpc.pull_threshold_for_queue}", flow_control="count", cached=cached_count,
                        threshold=dpc.pull_threshold_for_queue)  # fmt: skip
            return
        if cached_mib > dpc.pull_threshold_size_for_queue:
            self.stats.queue_flow_control_times += 1
            self.stats.flow_control["size"] += 1
            self._later(pr, PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL, "2.1",
                        f"flow control: {cached_mib} MiB cached > pullThresholdSizeForQueue "
                        f"{dpc.pull_threshold_size_for_queue} MiB", flow_control="size",
                        cached=cached_mib, threshold=dpc.pull_threshold_size_for_queue)  # fmt: skip
            return
        if not self.consume_orderly:
            span = pq.get_max_span()
            if span > dpc.consume_concurrently_max_span:
                self.stats.queue_max_span_flow_control_times += 1
                self.stats.flow_control["span"] += 1
                self._later(pr, PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL, "2.1",
                            f"flow control: span {span} > consumeConcurrentlyMaxSpan "
                            f"{dpc.consume_concurrently_max_span}", flow_control="span", cached=span,
                            threshold=dpc.consume_concurrently_max_span)  # fmt: skip
                return
        else:
            # step 2.3 (mechanisms.md "The consumer's pull loop"): orderly pulls only under the broker lock
            if not pq.locked:
                self._later(pr, self.pull_time_delay_mills_when_exception, "2.3",
                            "pull message later because not locked in broker")  # fmt: skip
                return
            if not pr.previously_locked:
                try:
                    offset = yield from self.rebalance_impl.compute_pull_from_where_with_exception(
                        mq
                    )
                except NETWORK_ERRORS as e:
                    self._later(pr, self.pull_time_delay_mills_when_exception, "2.3",
                                f"failed to compute pull offset: {e}")  # fmt: skip
                    return
                broker_busy = offset < pr.next_offset
                self._emit(PULL, "2.3", mq=str(mq), offset=offset, old=pr.next_offset,
                           broker_busy=broker_busy,
                           text=f"the first pull of {_mq_text(mq)} under the lock: fix the "
                           f"offset from the store, {pr.next_offset} → {offset}")  # fmt: skip
                pr.previously_locked = True
                pr.next_offset = offset
                if pq.dropped:
                    return
        # step 2.1 (mechanisms.md "The consumer's pull loop"): no subscription → pullTimeDelayMillsWhenException
        sd = self.rebalance_impl.subscription_inner.get(mq.topic)
        if sd is None:
            self._later(pr, self.pull_time_delay_mills_when_exception, "2.1",
                        "find the consumer's subscription failed")  # fmt: skip
            return
        yield from self._send_pull(pr, sd)

    def _send_pull(self, pr: PullRequest, sd: SubscriptionData) -> Gen:
        """Steps 2.4–2.6: the request, then the callback for its result."""
        from mqlab.client.consumer.offset_store import ReadOffsetType

        dpc = self.default_mq_push_consumer
        mq = pr.message_queue
        begin = self.ctx.now_ms
        commit_offset_enable = False
        commit_offset_value = 0
        if message_model_of(dpc.message_model) is MessageModel.CLUSTERING:
            commit_offset_value = yield from self.offset_store.read_offset(
                mq, ReadOffsetType.READ_FROM_MEMORY
            )
            commit_offset_enable = commit_offset_value > 0
        sub_expression = None
        class_filter = sd.class_filter_mode
        if dpc.post_subscription_when_pull and not class_filter:
            sub_expression = sd.sub_string
        sys_flag = PullSysFlag.build_sys_flag(
            commit_offset_enable, True, sub_expression is not None, class_filter
        )
        # step 2.5 (mechanisms.md "The consumer's pull loop"): PULL_MESSAGE, suspended up to 15 s at the broker, 30 s timeout
        self.stats.pulls_issued += 1
        if self.tracer.enabled:  # NOTE: performance — no event text when tracing is off
            self._emit(
                PULL, "2.5", mq=str(mq), offset=pr.next_offset, sys_flag=sys_flag,
                commit_offset=commit_offset_value, max_nums=dpc.pull_batch_size,
                text=f"pull {_mq_text(mq)} from offset {pr.next_offset} (up to "
                f"{dpc.pull_batch_size}, sysFlag {sys_flag}, commitOffset {commit_offset_value})",
            )  # fmt: skip
        try:
            result = yield from self.pull_api_wrapper.pull_kernel_impl(
                mq, sub_expression, sd.expression_type, sd.sub_version, pr.next_offset,
                dpc.pull_batch_size, sys_flag, commit_offset_value,
                BROKER_SUSPEND_MAX_TIME_MILLIS, CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND,
                CommunicationMode.ASYNC,
            )  # fmt: skip
        except NETWORK_ERRORS as e:
            # PullCallback#onException (and pullKernelImpl's own throws)
            self.stats.count_pull("EXCEPTION")
            delay = self.pull_time_delay_mills_when_exception
            self.execute_pull_request_later(pr, delay)
            self._emit(PULL, "2.6", Kind.ERROR, mq=str(mq), status="EXCEPTION", error=str(e),
                       delay_ms=delay,
                       text=f"pull {_mq_text(mq)} failed ({type(e).__name__}: {e}) → again in "
                       f"{delay} ms")  # fmt: skip
            return
        self.on_pull_success(pr, sd, result, begin)

    def on_pull_success(
        self, pr: PullRequest, sd: SubscriptionData, pull_result: PullResult, begin: int
    ) -> None:
        """What each pull status does.

        Mirrors PullCallback#onSuccess in DefaultMQPushConsumerImpl#pullMessage (RocketMQ
        4.9.3); mechanisms.md "The consumer's pull loop" step 2.6; docs/reference.md §10.14.
        """
        dpc = self.default_mq_push_consumer
        mq = pr.message_queue
        pq = pr.process_queue
        pull_result = self.pull_api_wrapper.process_pull_result(mq, pull_result, sd)
        status = pull_result.pull_status
        self.stats.count_pull(status.name)
        prev_request_offset = pr.next_offset
        if status is PullStatus.FOUND:
            pr.next_offset = pull_result.next_begin_offset
            msgs = pull_result.msg_found_list
            if not msgs:
                self._emit(PULL, "2.6", mq=str(mq), status=status.name, found=0,
                           next_offset=pr.next_offset,
                           text=f"FOUND on {_mq_text(mq)} but nothing left after the tag "
                           f"filter → pull again from {pr.next_offset}")  # fmt: skip
                self.execute_pull_request_immediately(pr)
                return
            first_msg_offset = msgs[0].queue_offset
            dispatch_to_consume = pq.put_message(msgs)
            if self.tracer.enabled:  # NOTE: performance — no event text when tracing is off
                self._emit(
                    PULL, "2.6", mq=str(mq), status=status.name, found=len(msgs),
                    first=first_msg_offset, last=msgs[-1].queue_offset,
                    next_offset=pr.next_offset, cached=pq.msg_count,
                    rt_ms=self.ctx.now_ms - begin,
                    text=f"FOUND {len(msgs)} on {_mq_text(mq)} (offsets {first_msg_offset}.."
                    f"{msgs[-1].queue_offset}); {pq.msg_count} cached; submit to consume, "
                    f"next pull from {pr.next_offset}",
                )  # fmt: skip
            self.consume_message_service.submit_consume_request(msgs, pq, mq, dispatch_to_consume)
            if dpc.pull_interval > 0:
                self.execute_pull_request_later(pr, dpc.pull_interval)
            else:
                self.execute_pull_request_immediately(pr)
            if pull_result.next_begin_offset < prev_request_offset or (
                first_msg_offset < prev_request_offset
            ):
                self._emit(PULL, "2.6", Kind.ERROR, mq=str(mq),
                           text="[BUG] pull message result maybe data wrong")  # fmt: skip
        elif status in (PullStatus.NO_NEW_MSG, PullStatus.NO_MATCHED_MSG):
            pr.next_offset = pull_result.next_begin_offset
            corrected = self.correct_tags_offset(pr)
            self._emit(
                PULL, "2.6", mq=str(mq), status=status.name, next_offset=pr.next_offset,
                corrected=corrected,
                text=f"{status.name} on {_mq_text(mq)}: next offset {pr.next_offset}"
                + (", nothing cached so the consume offset follows" if corrected else "")
                + ", pull again",
            )  # fmt: skip
            self.execute_pull_request_immediately(pr)
        elif status is PullStatus.OFFSET_ILLEGAL:
            pr.next_offset = pull_result.next_begin_offset
            pq.dropped = True
            self._emit(
                PULL, "2.6", Kind.ERROR, mq=str(mq), status=status.name,
                next_offset=pr.next_offset,
                text=f"OFFSET_ILLEGAL on {_mq_text(mq)}: drop the queue; in "
                f"{OFFSET_ILLEGAL_FIX_DELAY} ms store offset {pr.next_offset} and remove it",
            )  # fmt: skip
            self.execute_task_later(
                lambda: self._fix_offset(pr), OFFSET_ILLEGAL_FIX_DELAY, f"{pr.consumer_group}@{mq}"
            )

    def _fix_offset(self, pr: PullRequest) -> None:
        """The OFFSET_ILLEGAL task: store the broker's offset, persist, drop the queue."""
        mq = pr.message_queue
        self.offset_store.update_offset(mq, pr.next_offset, False)
        self.offset_store.persist(mq)
        self.rebalance_impl.remove_process_queue(mq)
        self._emit(PULL, "2.6", mq=str(mq), offset=pr.next_offset,
                   text=f"fix the pull request offset of {_mq_text(mq)} to {pr.next_offset}")  # fmt: skip

    def correct_tags_offset(self, pull_request: PullRequest) -> bool:
        """Nothing cached: the consume offset may follow the pull offset.

        Mirrors DefaultMQPushConsumerImpl#correctTagsOffset (mechanisms.md "The consumer's pull loop" span 258–261).
        """
        if pull_request.process_queue.msg_count == 0:
            self.offset_store.update_offset(
                pull_request.message_queue, pull_request.next_offset, True
            )
            return True
        return False
