"""Orderly consumption: one consumer per queue (broker lock), one batch at a time, in order.

Mirrors ``ConsumeMessageOrderlyService`` (client/impl/consumer, RocketMQ 4.9.3) and the
orderly parts of ``RebalanceImpl`` (``lock`` / ``lockAll``); docs/reference.md §10.16, §9
(``suspendCurrentQueueTimeMillis`` 1000, ``MAX_TIME_CONSUME_CONTINUOUSLY`` 60 000,
``REBALANCE_LOCK_INTERVAL`` 20 000, ``REBALANCE_LOCK_MAX_LIVE_TIME`` 30 000, broker lock
expiry 60 000).

Order needs three locks in Java, and mqlab keeps each:

* the **broker lock** (LOCK_BATCH_MQ): in clustering mode only the consumer holding a queue's
  lock on the broker may consume it. ``lockMQPeriodically`` renews every lock after 1 s and
  then every 20 s (``ConsumeMessageOrderlyService.lockMQPeriodically``); the broker forgets a
  lock not renewed for 60 s, the client stops trusting its own after 30 s;
* the **message-queue lock** (``MessageQueueLock``): one consume request per queue at a time.
  A request that finds its queue busy waits, holding its worker, until the first one ends
  (Java's thread blocks on ``synchronized``);
* the **consume lock** (``pq.getConsumeLock()``) held during the listener call, which a
  rebalance checks before giving the queue (and its broker lock) away.

A request loops: take ``consumeMessageBatchMaxSize`` messages in offset order, call the
listener, and on SUCCESS commit (the offset after the batch); on
SUSPEND_CURRENT_QUEUE_A_MOMENT put the batch back and retry the *queue* after
``suspendCurrentQueueTimeMillis`` — later messages of the queue wait, which is what keeps the
order across a failure. A message whose reconsume count reaches ``maxReconsumeTimes``
(Integer.MAX_VALUE unless set) goes to ``%RETRY%<group>`` (and from there, the broker's DLQ)
through the inner producer.

What it must not know: pulling (the pull loop only pulls a locked queue), allocation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from typing import Any

from mqlab.client.consumer.consume_pool import ConsumeThreadPool, thread_prefix, timer_key_prefix
from mqlab.client.consumer.consumer_enums import MessageModel, message_model_of
from mqlab.client.consumer.listener import (
    ConsumeOrderlyContext,
    ConsumeOrderlyStatus,
    call_listener,
    consume_time_of,
)
from mqlab.client.process_queue import REBALANCE_LOCK_INTERVAL, ProcessQueue
from mqlab.common import message_const as mc
from mqlab.common import mutants as _mutants
from mqlab.common.message import Message, MessageExt, MessageQueue
from mqlab.common.mix_all import get_retry_topic
from mqlab.runtime.task import Sleep, spawn
from mqlab.trace.events import Kind

__all__ = [
    "ConsumeMessageOrderlyService",
    "OrderlyConsumeRequest",
    "MAX_TIME_CONSUME_CONTINUOUSLY",
    "ORDERLY_MAX_RECONSUME_TIMES",
]

Gen = Generator[Any, Any, Any]
C = "ConsumeMessageOrderlyService"
#: Consume one queue at most this long in one go, then yield for 10 ms (docs/reference.md §9).
MAX_TIME_CONSUME_CONTINUOUSLY = 60_000
#: maxReconsumeTimes −1 means Integer.MAX_VALUE for orderly consumption.
ORDERLY_MAX_RECONSUME_TIMES = 2**31 - 1
#: The first lockMQPeriodically runs 1 s after start.
LOCK_MQ_FIRST_DELAY = 1000


def _mq_text(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


class OrderlyConsumeRequest:
    """ "Consume this queue": Mirrors ``ConsumeMessageOrderlyService.ConsumeRequest``."""

    __slots__ = ("process_queue", "message_queue")

    def __init__(self, process_queue: ProcessQueue, message_queue: MessageQueue) -> None:
        self.process_queue = process_queue
        self.message_queue = message_queue

    def __repr__(self) -> str:
        return f"OrderlyConsumeRequest({_mq_text(self.message_queue)})"


class ConsumeMessageOrderlyService:
    """Mirrors ``ConsumeMessageOrderlyService`` (client/impl/consumer, RocketMQ 4.9.3).

    Args:
        default_mq_push_consumer_impl: the consumer.
        message_listener: the orderly listener (callable or ``consume_message``).
    """

    def __init__(self, default_mq_push_consumer_impl: Any, message_listener: Any) -> None:
        self.default_mq_push_consumer_impl = default_mq_push_consumer_impl
        self.default_mq_push_consumer = default_mq_push_consumer_impl.default_mq_push_consumer
        self.message_listener = message_listener
        self.consumer_group = self.default_mq_push_consumer.consumer_group
        dpc = self.default_mq_push_consumer
        self.consume_executor = ConsumeThreadPool(
            default_mq_push_consumer_impl.ctx, thread_prefix(self.consumer_group),
            dpc.consume_thread_min, dpc.consume_thread_max, C + ".ConsumeRequest.run",
            timer_key_prefix(self.consumer_group),
        )  # fmt: skip
        self.stopped = False
        self._later_seq = 0  # numbers the delayed tasks: one timer key each (see _later_key)
        #: MessageQueueLock: the request consuming each queue, and who waits for it.
        self.mq_lock_holder: dict[MessageQueue, OrderlyConsumeRequest] = {}
        self.mq_lock_waiters: dict[MessageQueue, deque[tuple[OrderlyConsumeRequest, str]]] = {}
        #: pq.getConsumeLock(): held during a listener call.
        self.consume_locked: dict[MessageQueue, ProcessQueue] = {}
        #: The workbench's log of listener calls: ``[begin ms, end ms (None while it runs),
        #: queue, worker]``, so that a checker sees two calls of one queue at once
        #: (``mqlab.explore.outcome``: ``concurrent``).
        self.listener_calls: list[list[Any]] = []

    @property
    def ctx(self):
        return self.default_mq_push_consumer_impl.ctx

    def _clustering(self) -> bool:
        return (
            message_model_of(self.default_mq_push_consumer.message_model) is MessageModel.CLUSTERING
        )

    def _emit(self, component: str, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        tracer = self.default_mq_push_consumer_impl.tracer
        if tracer.enabled:
            tracer.emit(component, step, kind, group=self.consumer_group, **fields)

    def _tracing(self) -> bool:
        """Is the trace on? (NOTE: performance — the per-message events' text is only built
        when it is, as in ConsumeMessageConcurrentlyService.)"""
        return self.default_mq_push_consumer_impl.tracer.enabled

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Clustering: renew the broker locks after 1 s, then every 20 s.

        Mirrors ConsumeMessageOrderlyService#start (RocketMQ 4.9.3); docs/reference.md §10.16.
        """
        if self._clustering():
            self.ctx.set_timer(
                C + ".lockMQPeriodically", LOCK_MQ_FIRST_DELAY, self.lock_mq_periodically,
                key=self.consumer_group, period_ms=REBALANCE_LOCK_INTERVAL, daemon=True,
            )  # fmt: skip

    def shutdown(self, await_terminate_millis: int = 0) -> None:
        """Stop, drop queued requests, give the broker locks back. Mirrors #shutdown."""
        self.stopped = True
        self.ctx.cancel_timer(C + ".lockMQPeriodically", self.consumer_group)
        self.consume_executor.shutdown()
        if self._clustering():
            ri = self.default_mq_push_consumer_impl.rebalance_impl
            spawn(self.ctx, ri.unlock_all(False), name=C + ".unlockAllMQ")

    def lock_mq_periodically(self) -> None:
        """Mirrors ConsumeMessageOrderlyService#lockMQPeriodically → RebalanceImpl#lockAll."""
        if not self.stopped:
            ri = self.default_mq_push_consumer_impl.rebalance_impl
            spawn(self.ctx, ri.lock_all(), name=C + ".lockMQPeriodically")

    def is_consume_locked(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """True while a listener call of this queue runs (``pq.getConsumeLock()`` is held)."""
        return self.consume_locked.get(mq) is pq

    # -- submission ----------------------------------------------------------------------------------
    def submit_consume_request(
        self,
        msgs: list[MessageExt] | None,
        process_queue: ProcessQueue,
        message_queue: MessageQueue,
        dispatch_to_consume: bool,
    ) -> None:
        """Start consuming the queue unless a request already does (``dispatchToConsume``).

        Mirrors ConsumeMessageOrderlyService#submitConsumeRequest (RocketMQ 4.9.3).
        """
        if not dispatch_to_consume:
            return
        request = OrderlyConsumeRequest(process_queue, message_queue)
        self.consume_executor.submit(lambda worker: self._run(request, worker))

    def submit_consume_request_later(
        self, process_queue: ProcessQueue, message_queue: MessageQueue, suspend_time_millis: int
    ) -> None:
        """Consume the queue again after ``suspend_time_millis`` (−1 → the setting; 10..30000).

        Mirrors ConsumeMessageOrderlyService#submitConsumeRequestLater (RocketMQ 4.9.3).
        """
        time_millis = suspend_time_millis
        if time_millis == -1:
            time_millis = self.default_mq_push_consumer.suspend_current_queue_time_millis
        time_millis = min(max(time_millis, 10), 30000)
        if self.stopped:
            return
        self.ctx.set_timer(
            C + ".submitConsumeRequestLater", time_millis,
            lambda: self.submit_consume_request(None, process_queue, message_queue, True),
            key=self._later_key(message_queue), daemon=True,
        )  # fmt: skip

    def _later_key(self, mq: MessageQueue) -> str:
        """``<group>@<mq>#<n>``: each Java ``schedule()`` is its own task, which no later one
        replaces — of this group or of another group on the client instance."""
        self._later_seq += 1
        return f"{self.consumer_group}@{mq}#{self._later_seq}"

    def try_lock_later_and_reconsume(
        self, mq: MessageQueue, process_queue: ProcessQueue, delay_mills: int
    ) -> None:
        """After ``delay_mills``: lock the queue on the broker, then consume in 10 ms (or 3 s).

        Mirrors ConsumeMessageOrderlyService#tryLockLaterAndReconsume (RocketMQ 4.9.3).
        """
        if self.stopped:
            return

        def fire() -> None:
            spawn(self.ctx, self._try_lock(mq, process_queue), name=C + ".lockOneMQ")

        self.ctx.set_timer(
            C + ".tryLockLaterAndReconsume", delay_mills, fire, key=self._later_key(mq), daemon=True
        )

    def _try_lock(self, mq: MessageQueue, pq: ProcessQueue) -> Gen:
        ok = yield from self.lock_one_mq(mq)
        self.submit_consume_request_later(pq, mq, 10 if ok else 3000)

    def lock_one_mq(self, mq: MessageQueue) -> Gen:
        """Mirrors ConsumeMessageOrderlyService#lockOneMQ → RebalanceImpl#lock."""
        if self.stopped:
            return False
        return (yield from self.default_mq_push_consumer_impl.rebalance_impl.lock(mq))

    # -- ConsumeRequest#run --------------------------------------------------------------------------
    def _run(self, request: OrderlyConsumeRequest, worker: str) -> None:
        if request.process_queue.dropped:
            self.consume_executor.release(worker)
            return
        mq = request.message_queue
        if mq in self.mq_lock_holder:  # synchronized (objLock): wait for the current request
            self.mq_lock_waiters.setdefault(mq, deque()).append((request, worker))
            return
        self._start_locked(request, worker)

    def _start_locked(self, request: OrderlyConsumeRequest, worker: str) -> None:
        self.mq_lock_holder[request.message_queue] = request
        spawn(
            self.ctx, self._consume(request, worker), name=f"{C}.ConsumeRequest {worker}",
            on_done=lambda task: self._done(task, request, worker),
        )  # fmt: skip

    def _done(self, task: Any, request: OrderlyConsumeRequest, worker: str) -> None:
        mq = request.message_queue
        self.mq_lock_holder.pop(mq, None)
        self.consume_locked.pop(mq, None)
        waiters = self.mq_lock_waiters.get(mq)
        self.consume_executor.release(worker)
        if waiters:
            nxt, nxt_worker = waiters.popleft()
            if not waiters:
                del self.mq_lock_waiters[mq]
            self._start_locked(nxt, nxt_worker)
        if task.error is not None:
            raise task.error

    def _consume(self, request: OrderlyConsumeRequest, worker: str) -> Gen:
        """Consume one queue in order while allowed.

        Mirrors ConsumeMessageOrderlyService.ConsumeRequest#run (RocketMQ 4.9.3); docs/reference.md §10.16.
        """
        impl = self.default_mq_push_consumer_impl
        dpc = self.default_mq_push_consumer
        pq = request.process_queue
        mq = request.message_queue
        clustering = self._clustering()
        if not (not clustering or (pq.locked and not pq.is_lock_expired(self.ctx.now_ms))) and (
            "orderly_lock_unchecked" not in _mutants.ACTIVE
        ):
            if pq.dropped:
                return
            self._emit(C + ".ConsumeRequest.run", "lock", mq=str(mq), worker=worker,
                       text=f"{_mq_text(mq)} not locked (or lock expired): lock it in 100 ms")  # fmt: skip
            self.try_lock_later_and_reconsume(mq, pq, 100)
            return
        begin = self.ctx.now_ms
        continue_consume = True
        while continue_consume:
            now = self.ctx.now_ms
            if pq.dropped:
                self._emit(C + ".ConsumeRequest.run", "dropped", mq=str(mq),
                           text=f"the message queue {_mq_text(mq)} is dropped: stop consuming")  # fmt: skip
                break
            if (
                clustering
                and (not pq.locked or pq.is_lock_expired(now))
                and ("orderly_lock_unchecked" not in _mutants.ACTIVE)
            ):
                self._emit(C + ".ConsumeRequest.run", "lock", mq=str(mq), worker=worker,
                           text=f"{_mq_text(mq)} lost its lock: lock it again in 10 ms")  # fmt: skip
                self.try_lock_later_and_reconsume(mq, pq, 10)
                break
            if now - begin > MAX_TIME_CONSUME_CONTINUOUSLY:
                self.submit_consume_request_later(pq, mq, 10)
                break
            msgs = pq.take_messages(dpc.consume_message_batch_max_size, now)
            impl.reset_retry_and_namespace(msgs, self.consumer_group)
            if not msgs:
                continue_consume = False
                break
            context = ConsumeOrderlyContext(mq)
            self.consume_locked[mq] = pq  # pq.getConsumeLock().lock()
            if pq.dropped:
                self.consume_locked.pop(mq, None)
                break
            call = [self.ctx.now_ms, None, mq, worker]
            self.listener_calls.append(call)
            outcome = call_listener(self.message_listener, msgs, context, orderly=True)
            consume_ms = consume_time_of(self.message_listener, msgs, dpc.consume_time_ms)
            status: ConsumeOrderlyStatus = outcome.status
            impl.record_consumed(msgs, mq, status.value, worker)
            if self._tracing():
                self._emit(
                    C + ".ConsumeRequest.run", "consume", mq=str(mq), worker=worker,
                    offsets=[m.queue_offset for m in msgs],
                    reconsume_times=[m.reconsume_times for m in msgs], status=status.value,
                    return_type=outcome.return_type.value, error=outcome.error,
                    consume_ms=consume_ms,
                    text=f"orderly: {worker} consumes {_mq_text(mq)} offsets "
                    f"{[m.queue_offset for m in msgs]} → {status.value}"
                    + (f" ({outcome.error})" if outcome.error else "")
                    + (f", takes {consume_ms} ms" if consume_ms else ""),
                )  # fmt: skip
            if consume_ms > 0:
                yield Sleep(consume_ms)
            call[1] = self.ctx.now_ms
            self.consume_locked.pop(mq, None)  # pq.getConsumeLock().unlock()
            continue_consume = yield from self.process_consume_result(
                msgs, status, context, request
            )

    def process_consume_result(
        self,
        msgs: list[MessageExt],
        status: ConsumeOrderlyStatus,
        context: ConsumeOrderlyContext,
        request: OrderlyConsumeRequest,
    ) -> Gen:
        """Commit, or put the batch back and suspend the queue; return "go on consuming".

        Mirrors ConsumeMessageOrderlyService#processConsumeResult (RocketMQ 4.9.3); docs/reference.md
        §10.16.
        """
        impl = self.default_mq_push_consumer_impl
        pq = request.process_queue
        mq = request.message_queue
        continue_consume = True
        commit_offset = -1
        suspended = False
        if status in (ConsumeOrderlyStatus.COMMIT, ConsumeOrderlyStatus.ROLLBACK) and (
            context.auto_commit
        ):
            self._emit(C + ".processConsumeResult", "illegal", Kind.ERROR, mq=str(mq),
                       status=status.value,
                       text=f"the message queue consume result is illegal ({status.value} with "
                       "autoCommit), we think you want to ack these message")  # fmt: skip
        if status is ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT:
            impl.stats.consume_failed += len(msgs)
            if (yield from self.check_reconsume_times(msgs)):
                pq.make_message_to_consume_again(msgs)
                self.submit_consume_request_later(pq, mq, context.suspend_current_queue_time_millis)
                continue_consume = False
                suspended = True
            elif context.auto_commit:
                commit_offset = pq.commit()
        elif context.auto_commit:  # SUCCESS, and the deprecated COMMIT / ROLLBACK
            commit_offset = pq.commit()
            impl.stats.consume_ok += len(msgs)
        elif status is ConsumeOrderlyStatus.SUCCESS:
            impl.stats.consume_ok += len(msgs)
        elif status is ConsumeOrderlyStatus.COMMIT:
            commit_offset = pq.commit()
        else:  # ROLLBACK without autoCommit
            pq.rollback()
            self.submit_consume_request_later(pq, mq, context.suspend_current_queue_time_millis)
            continue_consume = False
            suspended = True
        if commit_offset >= 0 and not pq.dropped:
            impl.offset_store.update_offset(mq, commit_offset, False)
        if not self._tracing():
            return continue_consume
        delay = context.suspend_current_queue_time_millis
        if delay == -1:
            delay = self.default_mq_push_consumer.suspend_current_queue_time_millis
        self._emit(
            C + ".processConsumeResult", "result", mq=str(mq), status=status.value,
            offsets=[m.queue_offset for m in msgs], commit_offset=commit_offset,
            suspended=suspended,
            text=(
                f"{status.value}: put {_mq_text(mq)} offsets {[m.queue_offset for m in msgs]} "
                f"back, consume the queue again in {min(max(delay, 10), 30000)} ms"
                if suspended
                else f"{status.value}: commit {_mq_text(mq)} up to offset {commit_offset}"
            ),
        )  # fmt: skip
        return continue_consume

    def max_reconsume_times(self) -> int:
        """−1 → Integer.MAX_VALUE. Mirrors ConsumeMessageOrderlyService#getMaxReconsumeTimes."""
        value = self.default_mq_push_consumer.max_reconsume_times
        return ORDERLY_MAX_RECONSUME_TIMES if value == -1 else value

    def check_reconsume_times(self, msgs: list[MessageExt]) -> Gen:
        """True = suspend (retry here); messages over the limit go to ``%RETRY%`` instead.

        Mirrors ConsumeMessageOrderlyService#checkReconsumeTimes (RocketMQ 4.9.3).
        """
        suspend = False
        for msg in msgs:
            if msg.reconsume_times >= self.max_reconsume_times():
                msg.put_property(mc.PROPERTY_RECONSUME_TIME, str(msg.reconsume_times))
                if not (yield from self.send_message_back(msg)):
                    suspend = True
                    msg.reconsume_times += 1
            else:
                suspend = True
                msg.reconsume_times += 1
        return suspend

    def send_message_back(self, msg: MessageExt) -> Gen:
        """Re-send an exhausted message to ``%RETRY%<group>`` through the inner producer.

        Mirrors ConsumeMessageOrderlyService#sendMessageBack (RocketMQ 4.9.3): the broker
        then puts it in ``%DLQ%<group>`` (reconsume count ≥ max).
        """
        impl = self.default_mq_push_consumer_impl
        new_msg = Message(get_retry_topic(self.consumer_group), msg.body)
        origin = msg.get_property(mc.PROPERTY_ORIGIN_MESSAGE_ID)
        new_msg.flag = msg.flag
        new_msg.properties = dict(msg.properties)
        new_msg.put_property(mc.PROPERTY_ORIGIN_MESSAGE_ID, origin or msg.client_msg_id())
        new_msg.put_property(mc.PROPERTY_RETRY_TOPIC, msg.topic)
        new_msg.put_property(mc.PROPERTY_RECONSUME_TIME, str(msg.reconsume_times))
        new_msg.put_property(mc.PROPERTY_MAX_RECONSUME_TIMES, str(self.max_reconsume_times()))
        new_msg.clear_property(mc.PROPERTY_TRANSACTION_PREPARED)
        new_msg.delay_time_level = 3 + msg.reconsume_times
        try:
            yield from impl.send_by_inner_producer(new_msg)
        except Exception as e:  # noqa: BLE001 — Java: catch (Exception) → false
            impl.stats.send_back_failed += 1
            self._emit(C + ".sendMessageBack", "send", Kind.ERROR, error=repr(e),
                       text=f"sendMessageBack exception: {e}")  # fmt: skip
            return False
        impl.stats.send_back_ok += 1
        self._emit(C + ".sendMessageBack", "send", queue_offset=msg.queue_offset,
                   reconsume_times=msg.reconsume_times,
                   text=f"offset {msg.queue_offset} reached maxReconsumeTimes "
                   f"{self.max_reconsume_times()}: sent to {new_msg.topic}")  # fmt: skip
        return True
