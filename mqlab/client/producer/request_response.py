"""Request-reply: a producer sends a request message and waits for the reply message.

Mirrors ``DefaultMQProducerImpl#request`` (sync and ``RequestCallback`` forms),
``RequestResponseFuture``, ``RequestFutureHolder`` (its table and ``scanExpiredRequest``),
``RequestCallback``, ``RequestTimeoutException`` and ``CorrelationIdUtil`` (client,
RocketMQ 4.9.3). The replier's side is ``mqlab.client.message_util.create_reply_message``;
the broker's is ``mqlab.broker.reply_message_processor``; the reply arrives as
PUSH_REPLY_MESSAGE_TO_CLIENT (326) at ``ClientRemotingProcessor#receiveReplyMessage``.

Numbered steps of ``request`` (trace events of ``DefaultMQProducerImpl.request``):

1. ``prepareSendRequest``: the message gets CORRELATION_ID (a random UUID),
   REPLY_TO_CLIENT (this client's id) and TTL (the timeout); a topic without a route in
   the client's table is looked up first and a heartbeat goes to every broker, so that
   the broker can find this client's channel when the reply comes.
2. A ``RequestResponseFuture`` enters the table under the correlation id.
3. The message goes out as an ASYNC send (``timeout - cost``); its outcome sets
   ``sendRequestOk`` (and, on failure, the cause).
4. The reply (step 4 of the holder, below) completes the future: the sync form returns
   the message, the callback form calls ``on_success``.
5. No reply: the sync form fails at exactly ``begin + timeout``
   (``waitResponseMessage(timeout - cost)``): RequestTimeoutException 10006 "send request
   message to <T> OK, but wait reply message timeout, <T> ms." when the send went out,
   else MQClientException "send request message to <T> fail" caused by the send error.
   The callback form gets ``on_exception`` from ``scanExpiredRequest``: it runs 3 s after
   the first producer of the client started, then every 1 s, and expires a request once
   ``now - begin > timeout`` (RequestTimeoutException 10006 "request timeout, no reply
   message."); a failed send calls ``on_exception`` at once (``requestFail``).

One table per ``MQClientInstance`` (Java's holder is one per JVM, and a JVM usually has one
client instance).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mqlab.client.exception import ClientErrorCode, MQClientException, _coded_text
from mqlab.client.producer.send_future import AsyncSendError, CommunicationMode
from mqlab.common import message_const as mc
from mqlab.common.message import Message
from mqlab.runtime.task import Task, spawn
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer_impl import DefaultMQProducerImpl

__all__ = [
    "RequestCallback",
    "RequestFutureHolder",
    "RequestResponseFuture",
    "RequestTimeoutException",
    "create_correlation_id",
    "request",
    "SCAN_INITIAL_DELAY_MS",
    "SCAN_PERIOD_MS",
]

C = "DefaultMQProducerImpl.request"
#: ``RequestFutureHolder#startScheduledTask``: ``scheduleAtFixedRate(..., 3000, 1000)``.
SCAN_INITIAL_DELAY_MS = 3000
SCAN_PERIOD_MS = 1000


class RequestTimeoutException(Exception):
    """Mirrors ``RequestTimeoutException(int, String)``: "CODE: 10006  DESC: ..."."""

    def __init__(self, code: int, message: str) -> None:
        self.response_code = int(code)
        self.error_message = message
        super().__init__(_coded_text(code, message))


class RequestCallback(Protocol):
    """Mirrors ``RequestCallback``: exactly one of the two is called, once."""

    def on_success(self, message: Message) -> None: ...
    def on_exception(self, e: BaseException) -> None: ...


def create_correlation_id(rng: Any) -> str:
    """``CorrelationIdUtil#createCorrelationId``: ``UUID.randomUUID().toString()``."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class RequestResponseFuture:
    """One request in flight. Mirrors ``RequestResponseFuture`` (client/producer).

    Also the handle the sync form of ``request`` returns: ``done``, ``result`` (the reply
    message), ``error``, ``get()``.
    """

    __slots__ = (
        "correlation_id", "request_callback", "begin_timestamp", "timeout_millis",
        "response_msg", "send_request_ok", "cause", "done", "result", "error",
        "_on_response",
    )  # fmt: skip

    def __init__(
        self,
        correlation_id: str,
        timeout_millis: int,
        request_callback: RequestCallback | None,
        begin_timestamp: int,
    ) -> None:
        self.correlation_id = correlation_id
        self.request_callback = request_callback
        self.begin_timestamp = begin_timestamp
        self.timeout_millis = timeout_millis
        self.response_msg: Message | None = None
        self.send_request_ok = True
        self.cause: BaseException | None = None
        self.done = False
        self.result: Message | None = None
        self.error: BaseException | None = None
        self._on_response: Callable[[], None] | None = None  # the sync form's latch

    def is_timeout(self, now_ms: int) -> bool:
        """``System.currentTimeMillis() - beginTimestamp > timeoutMillis``."""
        return now_ms - self.begin_timestamp > self.timeout_millis

    def put_response_message(self, msg: Message | None) -> None:
        """Mirrors ``#putResponseMessage``: set the reply and count the latch down."""
        self.response_msg = msg
        if self._on_response is not None:
            self._on_response()

    def execute_request_callback(self) -> None:
        """Mirrors ``#executeRequestCallback``."""
        cb = self.request_callback
        if cb is None:
            return
        if self.send_request_ok and self.cause is None:
            self.done, self.result = True, self.response_msg
            cb.on_success(self.response_msg)
        else:
            self.done, self.error = True, self.cause
            cb.on_exception(self.cause)

    def get(self) -> Message | None:
        """The reply, or raise the error. Raises RuntimeError while not done."""
        if not self.done:
            raise RuntimeError("the request has not completed yet: step or advance the driver")
        if self.error is not None:
            raise self.error
        return self.result

    def __repr__(self) -> str:
        state = "pending" if not self.done else ("error" if self.error else "done")
        return f"RequestResponseFuture({self.correlation_id}, {state})"


class RequestFutureHolder:
    """The client's table of requests in flight and the scan that expires them.

    Mirrors ``RequestFutureHolder`` (client/producer, RocketMQ 4.9.3): the table, the
    producers using it, ``scanExpiredRequest`` every 1 s after 3 s (timer
    ``RequestHouseKeepingService.scanExpiredRequest``), stopped with the last producer.
    """

    TIMER = "RequestHouseKeepingService.scanExpiredRequest"

    def __init__(self, instance: MQClientInstance) -> None:
        self.instance = instance
        self.request_future_table: dict[str, RequestResponseFuture] = {}
        self.producer_set: set[int] = set()
        #: when the scan was started (Java: ``scheduleAtFixedRate(..., 3000, 1000)`` from here)
        self.started_at: int | None = None

    # NOTE: performance — Java's scan runs every second for the life of the producer. A scan
    # of an empty table changes nothing, so mqlab arms the scan only while requests are in
    # flight, on the same ticks (started_at + 3000 + k * 1000): expiries happen at exactly
    # the virtual ms they would, and an idle producer costs no event per second.

    def start_scheduled_task(self, producer: DefaultMQProducerImpl) -> None:
        """Mirrors ``#startScheduledTask``: the first producer starts the scan."""
        self.producer_set.add(id(producer))
        if self.started_at is None and self.instance.attached:
            self.started_at = self.instance.ctx.now_ms

    def on_instance_start(self) -> None:
        """Producers started before the instance was on a driver: start the scan now."""
        if self.producer_set and self.started_at is None:
            self.started_at = self.instance.ctx.now_ms

    def shutdown(self, producer: DefaultMQProducerImpl) -> None:
        """Mirrors ``#shutdown``: the last producer stops the scan."""
        self.producer_set.discard(id(producer))
        if not self.producer_set and self.started_at is not None:
            self.started_at = None
            if self.instance.attached:
                self.instance.ctx.cancel_timer(self.TIMER)

    def put(self, rf: RequestResponseFuture) -> None:
        """A request enters the table; the scan is armed for its next tick."""
        self.request_future_table[rf.correlation_id] = rf
        ctx = self.instance.ctx
        if self.started_at is None or ctx.has_timer(self.TIMER):
            return
        first = self.started_at + SCAN_INITIAL_DELAY_MS
        now = ctx.now_ms
        delay = first - now if now <= first else (SCAN_PERIOD_MS - (now - first)) % SCAN_PERIOD_MS
        ctx.set_timer(self.TIMER, delay, self.scan_expired_request, daemon=True)

    def scan_expired_request(self) -> None:
        """Mirrors ``#scanExpiredRequest``: remove the expired futures, then call each
        one's callback with RequestTimeoutException "request timeout, no reply message."."""
        now = self.instance.ctx.now_ms
        expired = [rf for rf in self.request_future_table.values() if rf.is_timeout(now)]
        for rf in expired:
            del self.request_future_table[rf.correlation_id]
        tracer = self.instance.tracer
        for rf in expired:
            if tracer.enabled:
                tracer.emit(C, "5", Kind.ERROR, correlation_id=rf.correlation_id,
                            age_ms=now - rf.begin_timestamp, timeout_ms=rf.timeout_millis,
                            text=f"remove timeout request, CorrelationId={rf.correlation_id}")  # fmt: skip
            rf.cause = RequestTimeoutException(
                ClientErrorCode.REQUEST_TIMEOUT_EXCEPTION, "request timeout, no reply message."
            )
            rf.execute_request_callback()
        if self.request_future_table and self.started_at is not None:  # the next tick
            self.instance.ctx.set_timer(
                self.TIMER, SCAN_PERIOD_MS, self.scan_expired_request, daemon=True
            )

    def process_reply_message(self, reply: Message) -> bool:
        """Mirrors ``ClientRemotingProcessor#processReplyMessage``: hand the reply to its
        future (sync: completes it; callback: ``on_success``). False if none matches."""
        correlation_id = reply.get_property(mc.PROPERTY_CORRELATION_ID)
        rf = self.request_future_table.get(correlation_id)
        tracer = self.instance.tracer
        if rf is None:
            if tracer.enabled:
                tracer.emit(C, "4", Kind.ERROR, correlation_id=correlation_id,
                            text="receive reply message, but not matched any request, "
                            f"CorrelationId: {correlation_id}")  # fmt: skip
            return False
        if tracer.enabled:
            tracer.emit(C, "4", correlation_id=correlation_id,
                        rtt_ms=self.instance.ctx.now_ms - rf.begin_timestamp,
                        text=f"reply for {correlation_id} after "
                        f"{self.instance.ctx.now_ms - rf.begin_timestamp} ms")  # fmt: skip
        rf.put_response_message(reply)
        self.request_future_table.pop(correlation_id, None)
        if rf.request_callback is not None:
            rf.done, rf.result = True, reply
            rf.request_callback.on_success(reply)
        return True


def holder_of(instance: MQClientInstance) -> RequestFutureHolder:
    """The instance's ``RequestFutureHolder`` (created on first use)."""
    holder = getattr(instance, "request_future_holder", None)
    if holder is None:
        holder = instance.request_future_holder = RequestFutureHolder(instance)
    return holder


def request(
    impl: DefaultMQProducerImpl,
    msg: Message,
    timeout_ms: int,
    callback: RequestCallback | None,
) -> RequestResponseFuture:
    """``DefaultMQProducerImpl#request(Message, long)`` (no callback) and
    ``#request(Message, RequestCallback, long)``; steps in the module docstring."""
    inst = impl.instance
    if not inst.attached:
        raise RuntimeError(
            f"{inst!r} is not on a driver yet: add it with driver.add_node(instance)"
        )
    if callback is not None and not (
        hasattr(callback, "on_success") and hasattr(callback, "on_exception")
    ):
        raise TypeError("callback must have on_success(msg) and on_exception(e) methods")
    ctx = inst.ctx
    tracer = inst.tracer
    holder = holder_of(inst)
    begin = ctx.now_ms
    # step 1: prepareSendRequest (the properties; the route and heartbeat in the task)
    correlation_id = create_correlation_id(ctx.rng("CorrelationIdUtil"))
    msg.put_property(mc.PROPERTY_CORRELATION_ID, correlation_id)
    msg.put_property(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT, inst.client_id)
    msg.put_property(mc.PROPERTY_MESSAGE_TTL, str(timeout_ms))
    # step 2: the future in the table
    rf = RequestResponseFuture(correlation_id, timeout_ms, callback, begin)
    holder.put(rf)
    if tracer.enabled:
        tracer.emit(C, "2", correlation_id=correlation_id, topic=msg.topic,
                    timeout_ms=timeout_ms, form="sync" if callback is None else "callback",
                    text=f"request {correlation_id} to {msg.topic}, timeout {timeout_ms} ms")  # fmt: skip

    def send() -> Any:
        if msg.topic not in inst.topic_route_table:
            yield from impl.try_to_find_topic_publish_info(msg.topic)
            inst.send_heartbeat_to_all_broker_with_lock()
        cost = ctx.now_ms - begin
        # step 3: the ASYNC send
        return (yield from impl.send_default_impl(msg, CommunicationMode.ASYNC, timeout_ms - cost))

    def sent(task: Task) -> None:
        error = task.error
        if isinstance(error, AsyncSendError):
            error = error.cause
        if tracer.enabled:
            tracer.emit(C, "3", Kind.ERROR if error else Kind.STEP, correlation_id=correlation_id,
                        ok=error is None, error=None if error is None else str(error),
                        text=f"request {correlation_id} sent" if error is None
                        else f"request {correlation_id} not sent: {error}")  # fmt: skip
        if error is None:
            rf.send_request_ok = True
            return
        rf.cause = error
        if callback is None:  # the sync form: putResponseMessage(null) ends the wait
            rf.send_request_ok = False
            rf.put_response_message(None)
        else:  # requestFail
            if holder.request_future_table.pop(correlation_id, None) is not None:
                rf.send_request_ok = False
                rf.put_response_message(None)
                rf.execute_request_callback()

    if callback is None:
        timer_key = correlation_id

        def wait_over() -> None:  # waitResponse: the latch counted down, or the time is up
            if rf.done:
                return
            ctx.cancel_timer("RequestResponseFuture.waitResponseMessage", timer_key)
            holder.request_future_table.pop(correlation_id, None)  # the finally block
            rf.done = True
            if rf.response_msg is not None:
                rf.result = rf.response_msg
            elif rf.send_request_ok:
                rf.error = RequestTimeoutException(
                    ClientErrorCode.REQUEST_TIMEOUT_EXCEPTION,
                    f"send request message to <{msg.topic}> OK, but wait reply message "
                    f"timeout, {timeout_ms} ms.",
                )
            else:
                err = MQClientException(-1, f"send request message to <{msg.topic}> fail")
                err.__cause__ = rf.cause
                rf.error = err
            if tracer.enabled and rf.error is not None:
                tracer.emit(C, "5", Kind.ERROR, correlation_id=correlation_id,
                            error=str(rf.error), text=f"request {correlation_id}: {rf.error}")  # fmt: skip

        rf._on_response = wait_over
        ctx.set_timer("RequestResponseFuture.waitResponseMessage", timeout_ms, wait_over,
                      key=timer_key)  # fmt: skip
    spawn(ctx, send(), name=f"{C} {impl.group}", on_done=sent)
    return rf
