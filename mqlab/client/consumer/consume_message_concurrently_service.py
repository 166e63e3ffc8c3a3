"""Concurrent consumption: batches on a pool, ack index, send-back, local retry, expiry.

Mirrors ``ConsumeMessageConcurrentlyService`` (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Consumption"
"ConsumeMessageConcurrentlyService#submitConsumeRequest" (lines 16–47), "ConsumeRequest"
(lines 24–117), "#processConsumeResult" (lines 8–69), "#cleanExpireMsg"; docs/reference.md §10.15,
§10.7 (what the broker does with a sent-back message), §9.

The flow of one pulled batch::

    submit_consume_request ─► split into chunks of consumeMessageBatchMaxSize (1)
      ─► each chunk waits for a worker of the modelled pool (consumeThreadMin workers)
      ─► ConsumeRequest: dropped? → skip; reset retry topic; stamp CONSUME_START_TIME;
         call the listener (exception / None → RECONSUME_LATER); hold the worker for the
         modelled consume time
      ─► processConsumeResult: CONSUME_SUCCESS acks 0..ackIndex; RECONSUME_LATER acks none;
         clustering sends every un-acked message back (delayLevelWhenNextConsume; the
         broker picks 3 + reconsumeTimes, i.e. 10 s, 30 s, 1 min …, and moves it to
         %DLQ%<group> after 16 retries); a failed send-back is re-consumed locally after
         5 s with reconsumeTimes + 1; broadcasting only drops failures;
         then the ProcessQueue gives the offset to commit (its smallest cached offset).

A consume request is a generator task on a worker; the send-backs are RPCs, so the worker
stays busy until they are answered, as Java's consume thread blocks on them. Timers:
``ConsumeMessageConcurrentlyService.ConsumeRequest.run`` (a worker starts, keyed by worker),
``ConsumeMessageConcurrentlyService.submitConsumeRequestLater`` (5 s, daemon; keyed
``<group>@<mq>#<n>``, n counting this service's re-submissions, so that no re-submission
replaces another — of this group or of another group on the client instance: each Java
``schedule()`` is its own task) and ``ProcessQueue.cleanExpiredMsg`` (every ``consumeTimeout``
minutes, daemon).

What it must not know: pulling and rebalancing.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any

from mqlab.client.consumer.consume_pool import ConsumeThreadPool, thread_prefix, timer_key_prefix
from mqlab.client.consumer.consumer_enums import MessageModel, message_model_of
from mqlab.client.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeReturnType,
    call_listener,
    consume_time_of,
)
from mqlab.client.process_queue import ProcessQueue
from mqlab.common import message_const as mc
from mqlab.common import mutants as _mutants
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.runtime.task import Sleep, spawn
from mqlab.trace.events import Kind

__all__ = ["ConsumeMessageConcurrentlyService", "ConsumeRequest", "SUBMIT_LATER_DELAY"]

Gen = Generator[Any, Any, Any]
C = "ConsumeMessageConcurrentlyService"
#: Re-submit delay after a failed send-back or a rejected submission (docs/reference.md §9).
SUBMIT_LATER_DELAY = 5000
BROADCASTING = MessageModel.BROADCASTING
#: ProcessQueue#cleanExpiredMsg sends an expired message back with this delay level.
EXPIRED_DELAY_LEVEL = 3


def _mq_text(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


class ConsumeRequest:
    """A chunk of one queue's messages waiting for, or running on, a consume thread.

    Mirrors ``ConsumeMessageConcurrentlyService.ConsumeRequest`` (RocketMQ 4.9.3).
    """

    __slots__ = ("msgs", "process_queue", "message_queue")

    def __init__(self, msgs: list[MessageExt], process_queue: ProcessQueue, mq: MessageQueue):
        self.msgs = list(msgs)
        self.process_queue = process_queue
        self.message_queue = mq

    def __repr__(self) -> str:
        offs = [m.queue_offset for m in self.msgs]
        return f"ConsumeRequest({_mq_text(self.message_queue)}, offsets={offs})"


class ConsumeMessageConcurrentlyService:
    """Mirrors ``ConsumeMessageConcurrentlyService`` (client/impl/consumer, RocketMQ 4.9.3).

    Args:
        default_mq_push_consumer_impl: the consumer.
        message_listener: the concurrent listener (callable or ``consume_message``).
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
        self._later_seq = 0  # numbers submitConsumeRequestLater's tasks: one timer key each

    @property
    def ctx(self):
        return self.default_mq_push_consumer_impl.ctx

    def _emit(self, component: str, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        tracer = self.default_mq_push_consumer_impl.tracer
        if tracer.enabled:
            tracer.emit(component, step, kind, group=self.consumer_group, **fields)

    def _tracing(self) -> bool:
        """Is the trace on? Hot paths ask first, so that tracing off builds no event text.

        NOTE: performance — per consumed message the two events' fields (offset lists, the
        sentence in ``text``) cost several µs to build, which tracing off threw away.
        """
        return self.default_mq_push_consumer_impl.tracer.enabled

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Schedule ``cleanExpireMsg`` every ``consumeTimeout`` minutes (first after one period).

        Mirrors ConsumeMessageConcurrentlyService#start (RocketMQ 4.9.3); docs/reference.md §9.
        """
        period = int(self.default_mq_push_consumer.consume_timeout) * 60 * 1000
        self.ctx.set_timer(
            "ProcessQueue.cleanExpiredMsg", period, self.clean_expire_msg, key=self.consumer_group,
            period_ms=period, daemon=True,
        )  # fmt: skip

    def shutdown(self, await_terminate_millis: int = 0) -> None:
        """Drop queued requests and stop the timers. Mirrors #shutdown."""
        self.stopped = True
        self.consume_executor.shutdown()
        self.ctx.cancel_timer("ProcessQueue.cleanExpiredMsg", self.consumer_group)

    def is_consume_locked(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """Concurrent consumption never holds a queue's consume lock."""
        return False

    # -- submission -------------------------------------------------------------------------------
    def submit_consume_request(
        self,
        msgs: list[MessageExt],
        process_queue: ProcessQueue,
        message_queue: MessageQueue,
        dispatch_to_consume: bool,
    ) -> None:
        """Split a pulled batch into requests of ``consumeMessageBatchMaxSize`` and submit them.

        Mirrors ConsumeMessageConcurrentlyService#submitConsumeRequest (RocketMQ 4.9.3); seed
        004 lines 16–22 (one request) and 23–47 (split); docs/reference.md §10.15.
        ``dispatch_to_consume`` only matters for orderly consumption.
        """
        if msgs and "offset_before_consume" in _mutants.ACTIVE:  # mqlab.common.mutants
            self.default_mq_push_consumer_impl.offset_store.update_offset(
                message_queue, msgs[-1].queue_offset + 1, False
            )
        batch = self.default_mq_push_consumer.consume_message_batch_max_size
        chunks = [msgs[i : i + batch] for i in range(0, len(msgs), batch)] or [[]]
        step = "16-22" if len(chunks) == 1 else "23-47"
        pool = self.consume_executor
        for i, chunk in enumerate(chunks):
            request = ConsumeRequest(chunk, process_queue, message_queue)
            if not pool.submit(partial(self._run, request)):  # run(worker) on a worker
                # mechanisms.md "Consumption" span 39-44: rejected → this chunk and the rest, 5 s later
                rest = [m for c in chunks[i:] for m in c]
                self.submit_consume_request_later(rest, process_queue, message_queue)
                break
        if not self._tracing():
            return
        self._emit(
            C + ".submitConsumeRequest", step, mq=str(message_queue), msgs=len(msgs),
            requests=len(chunks), active=pool.active_count, queued=pool.queue_size,
            text=f"{len(msgs)} message(s) of {_mq_text(message_queue)} → {len(chunks)} consume "
            f"request(s) of ≤ {batch}; {pool.active_count}/{pool.core_pool_size} threads busy, "
            f"{pool.queue_size} request(s) waiting",
        )  # fmt: skip

    def submit_consume_request_later(
        self, msgs: list[MessageExt], process_queue: ProcessQueue, message_queue: MessageQueue
    ) -> None:
        """Re-submit ``msgs`` after 5000 ms (failed send-back or rejection).

        Mirrors ConsumeMessageConcurrentlyService#submitConsumeRequestLater (mechanisms.md "Consumption" line
        54–59). Keyed ``<group>@<mq>#<n>``: no pending re-submission replaces another.
        """
        if self.stopped or not msgs:
            return
        self._later_seq += 1
        self.ctx.set_timer(
            C + ".submitConsumeRequestLater", SUBMIT_LATER_DELAY,
            lambda: self.submit_consume_request(msgs, process_queue, message_queue, True),
            key=f"{self.consumer_group}@{message_queue}#{self._later_seq}", daemon=True,
        )  # fmt: skip

    # -- ConsumeRequest#run ----------------------------------------------------------------------
    def _run(self, request: ConsumeRequest, worker: str) -> None:
        spawn(
            self.ctx, self._consume(request, worker), name=f"{C}.ConsumeRequest {worker}",
            on_done=partial(self._done, worker=worker),
        )  # fmt: skip

    def _done(self, task: Any, worker: str) -> None:
        self.consume_executor.release(worker)
        if task.error is not None:
            raise task.error

    def _consume(self, request: ConsumeRequest, worker: str) -> Gen:
        """One consume request on ``worker``.

        Mirrors ConsumeMessageConcurrentlyService.ConsumeRequest#run (RocketMQ 4.9.3); mechanisms.md "Consumption"
        "ConsumeRequest" lines 24–117.
        """
        impl = self.default_mq_push_consumer_impl
        dpc = self.default_mq_push_consumer
        pq = request.process_queue
        mq = request.message_queue
        msgs = request.msgs
        # mechanisms.md "Consumption" span 24-28: a dropped queue's messages are not consumed
        if pq.dropped and "dropped_pq_consumed" not in _mutants.ACTIVE:
            self._emit(C + ".ConsumeRequest.run", "24-28", mq=str(mq), worker=worker,
                       text=f"{_mq_text(mq)} is dropped: do not consume {len(msgs)} message(s)")  # fmt: skip
            return
        context = ConsumeConcurrentlyContext(mq)
        # mechanisms.md "Consumption" span 51: a retried message shows its original topic
        impl.reset_retry_and_namespace(msgs, self.consumer_group)
        # mechanisms.md "Consumption" span 53-58: stamp the consume start time (cleanExpiredMsg reads it)
        begin = str(self.ctx.now_ms)
        for msg in msgs:
            msg.properties[mc.PROPERTY_CONSUME_START_TIMESTAMP] = begin
        # mechanisms.md "Consumption" span 61: the listener; lines 92-99: exception / null → RECONSUME_LATER
        outcome = call_listener(self.message_listener, msgs, context, orderly=False)
        consume_ms = (
            consume_time_of(self.message_listener, msgs, dpc.consume_time_ms) if msgs else 0
        )
        status = outcome.status
        impl.record_consumed(msgs, mq, status.value, worker)
        if self._tracing():
            offsets = [m.queue_offset for m in msgs]
            reconsume_times = [m.reconsume_times for m in msgs]
            status_name = status.value
            return_type_name = outcome.return_type.value
            self._emit(
                C + ".ConsumeRequest.run", "61", mq=str(mq), worker=worker, offsets=offsets,
                reconsume_times=reconsume_times, status=status_name,
                return_type=return_type_name, error=outcome.error, consume_ms=consume_ms,
                text=f"{worker} consumes {_mq_text(mq)} offsets {offsets} "
                f"(reconsumeTimes {reconsume_times}) → {status_name}"
                + (f" ({return_type_name}: {outcome.error})" if outcome.error else "")
                + (f", takes {consume_ms} ms" if consume_ms else ""),
            )  # fmt: skip
        if consume_ms > 0:
            yield Sleep(consume_ms)
        return_type = outcome.return_type
        if consume_ms >= int(dpc.consume_timeout) * 60 * 1000 and outcome.error is None:
            # mechanisms.md "Consumption" span 71-85 (hooks only)
            return_type = ConsumeReturnType.TIME_OUT
        # mechanisms.md "Consumption" span 112-117: a queue dropped meanwhile ignores the result
        if pq.dropped:
            impl.stats.results_dropped += len(msgs)
            self._emit(C + ".ConsumeRequest.run", "112-117", Kind.ERROR, mq=str(mq),
                       offsets=[m.queue_offset for m in msgs], return_type=return_type.value,
                       text=f"{_mq_text(mq)} was dropped while consuming: result ignored, "
                       "the offset is not committed (the new owner consumes again)")  # fmt: skip
            return
        yield from self.process_consume_result(status, context, request)

    def process_consume_result(
        self,
        status: ConsumeConcurrentlyStatus,
        context: ConsumeConcurrentlyContext,
        request: ConsumeRequest,
    ) -> Gen:
        """Ack, send back, retry locally, commit the offset.

        Mirrors ConsumeMessageConcurrentlyService#processConsumeResult (RocketMQ 4.9.3); seed
        004 lines 8–69; docs/reference.md §10.15.
        """
        impl = self.default_mq_push_consumer_impl
        msgs = request.msgs
        mq = request.message_queue
        pq = request.process_queue
        # mechanisms.md "Consumption" span 8-10
        if not msgs:
            return
        # mechanisms.md "Consumption" span 12-32: how many are acked
        ack_index = context.ack_index
        if status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS:
            if ack_index >= len(msgs):
                ack_index = len(msgs) - 1
            impl.stats.consume_ok += ack_index + 1
            impl.stats.consume_failed += len(msgs) - (ack_index + 1)
        else:
            ack_index = -1
            impl.stats.consume_failed += len(msgs)
        failed = msgs[ack_index + 1 :]
        if message_model_of(self.default_mq_push_consumer.message_model) is BROADCASTING:
            # mechanisms.md "Consumption" span 36-41: broadcasting drops what failed
            for msg in failed:
                self._emit(C + ".processConsumeResult", "36-41", Kind.ERROR, mq=str(mq),
                           queue_offset=msg.queue_offset,
                           text=f"BROADCASTING, the message consume failed, drop it: "
                           f"{_mq_text(mq)} offset {msg.queue_offset}")  # fmt: skip
        else:
            # mechanisms.md "Consumption" span 42-60: clustering sends each failed message back to the broker
            msg_back_failed: list[MessageExt] = []
            for msg in failed:
                ok = yield from self.send_message_back(msg, context)
                if not ok:
                    msg.reconsume_times += 1
                    msg_back_failed.append(msg)
            if msg_back_failed:
                # mechanisms.md "Consumption" span 54-59: keep them here and consume them again in 5 s
                failed_ids = {id(m) for m in msg_back_failed}
                request.msgs = msgs = [m for m in msgs if id(m) not in failed_ids]
                self.submit_consume_request_later(msg_back_failed, pq, mq)
                self._emit(C + ".processConsumeResult", "54-59", Kind.ERROR, mq=str(mq),
                           offsets=[m.queue_offset for m in msg_back_failed],
                           text=f"send-back failed for {len(msg_back_failed)} message(s) of "
                           f"{_mq_text(mq)}: consume them here again in {SUBMIT_LATER_DELAY} ms")  # fmt: skip
        # mechanisms.md "Consumption" span 65-69: remove what is done; commit the smallest offset still cached
        offset = pq.remove_message(msgs, self.ctx.now_ms)
        if offset >= 0 and not pq.dropped:
            impl.offset_store.update_offset(mq, offset, True)
        if not self._tracing():
            return
        status_name = status.value
        self._emit(
            C + ".processConsumeResult", "65-69", mq=str(mq), status=status_name,
            ack_index=ack_index, removed=[m.queue_offset for m in msgs], commit_offset=offset,
            cached=pq.msg_count,
            text=f"{status_name} on {_mq_text(mq)}: ackIndex {ack_index}; "
            f"{len(msgs)} removed from the process queue, consume offset → {offset}",
        )  # fmt: skip

    def send_message_back(self, msg: MessageExt, context: ConsumeConcurrentlyContext) -> Gen:
        """True if the broker (or the inner producer) took the message back.

        Mirrors ConsumeMessageConcurrentlyService#sendMessageBack (RocketMQ 4.9.3).
        """
        impl = self.default_mq_push_consumer_impl
        try:
            yield from impl.send_message_back(
                msg, context.delay_level_when_next_consume, context.message_queue.broker_name
            )
        except Exception as e:  # noqa: BLE001 — Java: catch (Exception) → false
            impl.stats.send_back_failed += 1
            self._emit(C + ".sendMessageBack", "43-52", Kind.ERROR, error=repr(e),
                       queue_offset=msg.queue_offset,
                       text=f"sendMessageBack exception for offset {msg.queue_offset}: {e}")  # fmt: skip
            return False
        impl.stats.send_back_ok += 1
        return True

    # -- expiry --------------------------------------------------------------------------------
    def clean_expire_msg(self) -> None:
        """Send back messages whose consumption started more than ``consumeTimeout`` ago.

        Mirrors ConsumeMessageConcurrentlyService#cleanExpireMsg → ProcessQueue#cleanExpiredMsg
        (RocketMQ 4.9.3); mechanisms.md "Consumption" "cleanExpireMsg" / "ProcessQueue#cleanExpiredMsg"; docs/reference.md
        §10.13. A task: queue after queue, message after message, each send-back waited for
        (Java's scheduler thread blocks on it); a failed one leaves the message cached.
        """
        spawn(self.ctx, self._clean_expire_msg(), name=f"{C}.cleanExpireMsg")

    def _clean_expire_msg(self) -> Gen:
        timeout = int(self.default_mq_push_consumer.consume_timeout)
        table = self.default_mq_push_consumer_impl.rebalance_impl.process_queue_table
        for mq, pq in list(table.items()):
            n = yield from pq.clean_expired_msg(
                lambda: self.ctx.now_ms, timeout,
                lambda msg, delay_level, mq=mq: self._send_back_expired(msg, delay_level, mq),
            )  # fmt: skip
            if n:
                self._emit("ProcessQueue.cleanExpiredMsg", "29", mq=str(mq), sent_back=n,
                           text=f"{n} message(s) of {_mq_text(mq)} consumed for more than "
                           f"{timeout} min: sent back with delay level {EXPIRED_DELAY_LEVEL}")  # fmt: skip

    def _send_back_expired(self, msg: MessageExt, delay_level: int, mq: MessageQueue) -> Gen:
        """``pushConsumer.sendMessageBack(msg, 3)``; False where Java throws."""
        impl = self.default_mq_push_consumer_impl
        try:
            # DefaultMQPushConsumer#sendMessageBack(msg, 3): no broker name → the store host
            yield from impl.send_message_back(msg, delay_level, None)
        except Exception as e:  # noqa: BLE001 — Java logs "send expired msg exception"
            self._emit("ProcessQueue.cleanExpiredMsg", "29", Kind.ERROR, mq=str(mq),
                       queue_offset=msg.queue_offset, error=repr(e),
                       text=f"send expired msg exception: {e}")  # fmt: skip
            return False
        return True
