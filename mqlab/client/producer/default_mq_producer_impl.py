"""The producer engine: find the route, pick a queue, send, retry.

Mirrors ``DefaultMQProducerImpl`` (client/impl/producer/DefaultMQProducerImpl.java,
RocketMQ 4.9.3): ``start`` / ``shutdown``, the public send calls, ``sendDefaultImpl``
(route, queue choice, retries) and ``tryToFindTopicPublishInfo`` (the TBW102 fallback
that makes auto-creation happen); docs/reference.md §2.5 (client use of routes), §2.7 (producer
retries and retry codes), §8.4 (defaults). ``sendKernelImpl`` (UNIQ_KEY, compression, the
request header), ``sendSelectImpl`` and batching are in ``send_kernel``, mixed in.

Sans-IO: ``send`` does not block. It starts a task on the client instance and returns a
``SendFuture`` that completes in virtual time (``future.done``, ``.result``, ``.error``,
``.get()``). With ``callback(result, error)`` the send is Java's asynchronous send: one
attempt plus ``retry_times_when_send_async_failed`` resends on *transport* errors only.
Without it, it is Java's synchronous send: ``1 + retry_times_when_send_failed`` attempts,
retrying transport errors and the response codes of ``retry_response_codes``, each retry
on a queue of another broker when there is one. ``send_oneway`` writes and forgets.
Transactions (``sendMessageInTransaction``, ``endTransaction``, ``checkTransactionState``)
are in ``transaction_listener``, mixed in.

What it owns: ``topic_publish_info_table`` and the send state machine. What it must not
know: how routes are fetched (``MQClientInstance``) or how bytes are framed
(``MQClientAPIImpl``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING, Any

from mqlab.client.exception import (
    ClientErrorCode,
    MQBrokerException,
    MQClientException,
    RemotingTooMuchRequestException,
)
from mqlab.client.producer.message_queue_selector import MessageQueueSelector
from mqlab.client.producer.send_future import (
    AsyncSendError,
    CommunicationMode,
    SendCallback,
    SendFuture,
    ServiceState,
)
from mqlab.client.producer.send_kernel import SendKernelImpl
from mqlab.client.producer.send_result import SendResult, SendStatus
from mqlab.client.producer.topic_publish_info import TopicPublishInfo
from mqlab.client.producer.transaction_listener import TransactionProducerImpl
from mqlab.client.producer.validators import Validators
from mqlab.common.faq_url import (
    CLIENT_SERVICE_NOT_OK,
    GROUP_NAME_DUPLICATE_URL,
    NO_TOPIC_ROUTE_INFO,
    SEND_MSG_FAILED,
    suggest_todo,
)
from mqlab.common.message import Message, MessageQueue
from mqlab.common.mix_all import DEFAULT_PRODUCER_GROUP
from mqlab.runtime.context import (
    RemotingConnectException,
    RemotingException,
    RemotingTimeoutException,
)
from mqlab.runtime.task import Task, spawn
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer import DefaultMQProducer

__all__ = [
    "CommunicationMode",
    "ServiceState",
    "SendCallback",
    "SendFuture",
    "DefaultMQProducerImpl",
]

Gen = Generator[Any, Any, Any]
C = "DefaultMQProducerImpl"


class DefaultMQProducerImpl(SendKernelImpl, TransactionProducerImpl):
    """The engine of one producer group on one client instance.

    Args:
        default_mq_producer: the configuration facade (``DefaultMQProducer``).
        instance: the client instance it sends through.
    """

    def __init__(self, default_mq_producer: DefaultMQProducer, instance: MQClientInstance) -> None:
        self.default_mq_producer = default_mq_producer
        self.instance = instance
        self.topic_publish_info_table: dict[str, TopicPublishInfo] = {}
        self.service_state = ServiceState.CREATE_JUST
        self.zip_compress_level = 5  # -Drocketmq.message.compressLevel

    @property
    def group(self) -> str:
        return self.default_mq_producer.producer_group

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self, register: bool = True) -> None:
        """Check the group, register on the instance, keep TBW102 in the publish table.

        Mirrors ``DefaultMQProducerImpl#start(boolean)`` (client/impl/producer, RocketMQ
        4.9.3); ends with a heartbeat to every known broker. ``register=False`` is the
        instance's inner producer (``CLIENT_INNER_PRODUCER``), which the instance lists
        itself.

        Raises:
            MQClientException: bad group name, group ``DEFAULT_PRODUCER``, group already
                registered on this instance, or started twice.
        """
        if self.service_state is not ServiceState.CREATE_JUST:
            raise MQClientException(
                -1,
                f"The producer service state not OK, maybe started once, "
                f"{self.service_state.name}{suggest_todo(CLIENT_SERVICE_NOT_OK)}",
            )
        self.service_state = ServiceState.START_FAILED
        self._check_config()
        if register and not self.instance.register_producer(self.group, self):
            self.service_state = ServiceState.CREATE_JUST
            raise MQClientException(
                -1,
                f"The producer group[{self.group}] has been created before, specify another "
                f"name please.{suggest_todo(GROUP_NAME_DUPLICATE_URL)}",
            )
        self.topic_publish_info_table[self.default_mq_producer.create_topic_key] = (
            TopicPublishInfo()
        )
        self.service_state = ServiceState.RUNNING
        if register:  # RequestFutureHolder.getInstance().startScheduledTask(this)
            from mqlab.client.producer.request_response import holder_of

            holder_of(self.instance).start_scheduled_task(self)
        if register:
            tracer = self.instance.tracer if self.instance.attached else None
            if tracer is not None and tracer.enabled:
                tracer.emit(C, "start", Kind.STATE, group=self.group,
                            text=f"producer {self.group} started")  # fmt: skip
            self.instance.send_heartbeat_to_all_broker_with_lock()

    def _check_config(self) -> None:
        """Mirrors ``DefaultMQProducerImpl#checkConfig``."""
        Validators.check_group(self.group)
        if self.group == DEFAULT_PRODUCER_GROUP:
            raise MQClientException(
                -1,
                f"producerGroup can not equal {DEFAULT_PRODUCER_GROUP}, please specify "
                "another one.",
            )

    def shutdown(self) -> Task | None:
        """Unregister the group (UNREGISTER_CLIENT to every broker). Mirrors ``#shutdown``.

        Java's call blocks until every broker has answered the unregister (or timed out);
        here the producer is shut down at once and the unregister runs as a task, which
        is returned (None: nothing to unregister). A client instance's own stop waits for
        it instead (``shutdown_steps``).
        """
        if self.service_state is not ServiceState.RUNNING:
            return None
        task = None
        instance = self.instance
        if instance.select_producer(self.group) is self:
            if instance.attached:
                task = spawn(instance.ctx, instance.unregister_producer(self.group),
                             name=C + ".shutdown", on_done=instance._done(C + ".shutdown"))  # fmt: skip
            else:  # no driver yet: the group leaves the table, nothing is sent
                instance.producer_table.pop(self.group, None)
        self._shut_down()
        return task

    def shutdown_steps(self) -> Gen:
        """``#shutdown`` in Java's order, waiting as Java's call blocks: the unregister
        (each broker's answer in turn), then the request-reply holder, then the state."""
        if self.service_state is not ServiceState.RUNNING:
            return
        if self.instance.select_producer(self.group) is self:
            yield from self.instance.unregister_producer(self.group)
        self._shut_down()

    def _shut_down(self) -> None:
        if self.service_state is ServiceState.RUNNING:
            from mqlab.client.producer.request_response import holder_of

            holder_of(self.instance).shutdown(self)
            self.service_state = ServiceState.SHUTDOWN_ALREADY

    def _make_sure_state_ok(self) -> None:
        if self.service_state is not ServiceState.RUNNING:
            raise MQClientException(
                -1,
                f"The producer service state not OK, {self.service_state.name}"
                f"{suggest_todo(CLIENT_SERVICE_NOT_OK)}",
            )

    # -- MQProducerInner ------------------------------------------------------------------------
    def get_publish_topic_list(self) -> list[str]:
        """Topics in the publish table (always TBW102). Mirrors ``#getPublishTopicList``."""
        return sorted(self.topic_publish_info_table)

    def is_publish_topic_need_update(self, topic: str) -> bool:
        """No queues known for ``topic``. Mirrors ``#isPublishTopicNeedUpdate``."""
        prev = self.topic_publish_info_table.get(topic)
        return prev is None or not prev.ok()

    def update_topic_publish_info(self, topic: str, info: TopicPublishInfo) -> None:
        """Replace the topic's publish info. Mirrors ``#updateTopicPublishInfo``."""
        if topic is not None and info is not None:
            self.topic_publish_info_table[topic] = info

    def is_unit_mode(self) -> bool:
        return self.instance.client_config.unit_mode

    # -- public send API (sans-IO) -----------------------------------------------------------------
    def send(
        self,
        msg: Message,
        *,
        timeout_ms: int | None = None,
        callback: SendCallback | None = None,
    ) -> SendFuture:
        """Send ``msg``: synchronous semantics without ``callback``, asynchronous with it.

        Mirrors ``DefaultMQProducerImpl#send(Message, long)`` (SYNC) and
        ``#send(Message, SendCallback, long)`` (ASYNC) → ``#sendDefaultImpl``.
        """
        _check_message_type(msg)
        mode = CommunicationMode.SYNC if callback is None else CommunicationMode.ASYNC
        gen = self.send_default_impl(msg, mode, self._timeout(timeout_ms))
        return self._start(gen, mode, callback, "send")

    def send_oneway(self, msg: Message) -> SendFuture:
        """Write ``msg`` once, never wait for a reply. Mirrors ``#sendOneway(Message)``.

        The future completes (with result None) once the request is written.
        """
        _check_message_type(msg)
        gen = self.send_default_impl(
            msg, CommunicationMode.ONEWAY, self.default_mq_producer.send_msg_timeout
        )
        return self._start(gen, CommunicationMode.ONEWAY, None, "sendOneway")

    def send_orderly(
        self,
        msg: Message,
        selector: MessageQueueSelector,
        arg: Any,
        *,
        timeout_ms: int | None = None,
        callback: SendCallback | None = None,
    ) -> SendFuture:
        """Send to the queue ``selector.select(queues, msg, arg)`` picks; no retry.

        Mirrors ``DefaultMQProducerImpl#send(Message, MessageQueueSelector, Object, ...)``
        → ``#sendSelectImpl``.
        """
        _check_message_type(msg)
        if not hasattr(selector, "select"):
            raise TypeError(f"selector must have a select(mqs, msg, arg) method, got {selector!r}")
        mode = CommunicationMode.SYNC if callback is None else CommunicationMode.ASYNC
        gen = self.send_select_impl(msg, selector, arg, mode, self._timeout(timeout_ms))
        return self._start(gen, mode, callback, "sendSelect")

    def send_batch(
        self,
        msgs: Iterable[Message],
        *,
        timeout_ms: int | None = None,
        callback: SendCallback | None = None,
    ) -> SendFuture:
        """Send several messages of one topic as one SEND_BATCH_MESSAGE.

        Mirrors ``DefaultMQProducer#send(Collection<Message>)`` → ``#batch`` → ``#send``.
        """
        msgs = list(msgs)
        for m in msgs:
            _check_message_type(m)
        mode = CommunicationMode.SYNC if callback is None else CommunicationMode.ASYNC
        gen = self._send_batch(msgs, mode, self._timeout(timeout_ms))
        return self._start(gen, mode, callback, "sendBatch")

    def request(self, msg: Message, *, timeout_ms: int | None = None, callback: Any = None):
        """Send a request message and wait for its reply (sync: no callback; else a
        ``RequestCallback``). Mirrors ``#request(Message, long)`` and
        ``#request(Message, RequestCallback, long)``; see ``request_response``."""
        from mqlab.client.producer.request_response import request

        _check_message_type(msg)
        self._make_sure_state_ok()
        return request(self, msg, self._timeout(timeout_ms), callback)

    def _timeout(self, timeout_ms: int | None) -> int:
        if timeout_ms is None:
            return self.default_mq_producer.send_msg_timeout
        if timeout_ms <= 0:
            raise ValueError(f"timeout_ms must be > 0, got {timeout_ms}")
        return int(timeout_ms)

    def _start(
        self, gen: Gen, mode: CommunicationMode, callback: SendCallback | None, what: str
    ) -> SendFuture:
        if not self.instance.attached:
            raise RuntimeError(
                f"{self.instance!r} is not on a driver yet: add it with driver.add_node(instance)"
            )
        future = SendFuture(mode)
        tracer = self.instance.tracer

        def on_done(task: Task) -> None:
            error = task.error
            if isinstance(error, AsyncSendError):
                error = error.cause
            future.done, future.result, future.error = True, task.result, error
            if tracer.enabled:
                r = task.result
                if error is not None:
                    text = f"{what} failed: {error}"
                elif r is None:
                    text = f"{what}: written (no reply expected)"
                else:
                    mq = r.message_queue
                    text = (f"{what}: {r.send_status.name} to {mq.broker_name} queue "
                            f"{mq.queue_id} at offset {r.queue_offset}")  # fmt: skip
                tracer.emit(
                    C + "." + what, "result", Kind.ERROR if error else Kind.STEP,
                    mode=mode.name, status=None if r is None else r.send_status.name,
                    mq=None if r is None else str(r.message_queue),
                    queue_offset=None if r is None else r.queue_offset,
                    msg_id=None if r is None else r.msg_id,
                    error=None if error is None else str(error), text=text,
                )  # fmt: skip
            if callback is not None:
                callback(future.result, future.error)  # type: ignore[arg-type]

        future.task = spawn(
            self.instance.ctx, gen, name=f"{C}.{what} {self.group}", on_done=on_done
        )
        return future

    # -- routes and queues -------------------------------------------------------------------------
    def try_to_find_topic_publish_info(self, topic: str) -> Gen:
        """The topic's publish info: cached, else from the name server, else TBW102's route.

        Mirrors ``DefaultMQProducerImpl#tryToFindTopicPublishInfo`` (client/impl/producer,
        RocketMQ 4.9.3); docs/reference.md §2.5 "Client use". An unknown topic first gets an empty
        entry (so the periodic refresh asks for it from now on), then the name server is
        asked for it (TOPIC_NOT_EXIST for a new topic), then for the default topic's route
        with the queue numbers capped at ``default_topic_queue_nums``.
        """
        inst = self.instance
        tracer = inst.tracer
        comp = C + ".tryToFindTopicPublishInfo"
        info = self.topic_publish_info_table.get(topic)
        if info is None or not info.ok():
            self.topic_publish_info_table.setdefault(topic, TopicPublishInfo())
            if tracer.enabled:
                tracer.emit(comp, "route", topic=topic,
                            text=f"no queues known for {topic}: ask the name server")  # fmt: skip
            yield from inst.update_topic_route_info_from_name_server(topic)
            info = self.topic_publish_info_table[topic]
        if info.have_topic_router_info or info.ok():
            return info
        key = self.default_mq_producer.create_topic_key
        if tracer.enabled:
            tracer.emit(
                comp, "default route", topic=topic, default_topic=key,
                text=f"{topic} has no route: borrow {key}'s route (≤ "
                f"{self.default_mq_producer.default_topic_queue_nums} queues per broker); "
                "the broker will create the topic on the first send",
            )  # fmt: skip
        yield from inst.update_topic_route_info_from_name_server(
            topic, True, self.default_mq_producer
        )
        return self.topic_publish_info_table[topic]

    def select_one_message_queue(
        self, tp_info: TopicPublishInfo, last_broker_name: str | None
    ) -> MessageQueue:
        """Round-robin, avoiding the last broker on a retry.

        Mirrors ``DefaultMQProducerImpl#selectOneMessageQueue`` → ``MQFaultStrategy`` with
        ``sendLatencyFaultEnable`` false (the default; latency fault tolerance is not
        modelled).
        """
        return tp_info.select_one_message_queue(last_broker_name)

    # -- sendDefaultImpl ---------------------------------------------------------------------------
    def send_default_impl(self, msg: Message, mode: CommunicationMode, timeout_ms: int) -> Gen:
        """Route, choose a queue, send; retry (SYNC) on another broker.

        Mirrors ``DefaultMQProducerImpl#sendDefaultImpl`` (client/impl/producer, RocketMQ
        4.9.3); docs/reference.md §2.7 (sync: 1 + retryTimesWhenSendFailed attempts; retry on transport
        errors and on TOPIC_NOT_EXIST, SERVICE_NOT_AVAILABLE, SYSTEM_ERROR, NO_PERMISSION,
        NO_BUYER_ID, NOT_IN_CURRENT_UNIT; other codes are thrown at once).

        Raises:
            MQClientException: validation, no route ("No route info of this topic"), or
                every attempt failed ("Send [n] times, still failed ...", with the last
                broker's code or a ``ClientErrorCode``).
            MQBrokerException: a code that is not retried.
            RemotingTooMuchRequestException: the time budget ran out between attempts.
        """
        producer = self.default_mq_producer
        self._make_sure_state_ok()
        Validators.check_message(msg, producer.max_message_size)
        ctx = self.instance.ctx
        tracer = self.instance.tracer
        begin_first = ctx.now_ms
        tp_info = yield from self.try_to_find_topic_publish_info(msg.topic)
        if tp_info is not None and tp_info.ok():
            call_timeout = False
            mq: MessageQueue | None = None
            exception: BaseException | None = None
            send_result: SendResult | None = None
            times_total = (
                1 + producer.retry_times_when_send_failed if mode is CommunicationMode.SYNC else 1
            )
            brokers_sent: list[str] = []
            times = 0
            while times < times_total:
                last_broker_name = None if mq is None else mq.broker_name
                mq = self.select_one_message_queue(tp_info, last_broker_name)
                brokers_sent.append(mq.broker_name)
                cost = ctx.now_ms - begin_first
                # Java: `timeout < costTime`. NOTE: a timed-out Java attempt returns after
                # the timeout *plus* some processing time, so costTime > timeout as a rule,
                # and Java does not resend on a used-up budget. When its clock reads the
                # timeout to the millisecond it does: an attempt with 0 ms left, often still
                # written to the other broker, which stores the message though the send fails
                # (5 of 60 failed sends, 3 stored: mechanisms.md "HA replication",
                # tests/conformance/test_producer_machine_down_vs_real.py).
                # Virtual time has no such overhead (the timeout fires at exactly begin +
                # timeout), so a budget used up exactly counts as used up here: the common case.
                if timeout_ms <= cost:
                    call_timeout = True
                    break
                if tracer.enabled:
                    avoid = f", avoiding {last_broker_name}" if last_broker_name else ""
                    tracer.emit(
                        C + ".sendDefaultImpl", "selectOneMessageQueue", mq=str(mq),
                        attempt=times + 1, attempts=times_total, avoid=last_broker_name,
                        cursor=tp_info.send_which_queue.value,
                        text=f"attempt {times + 1}/{times_total}: {mq.broker_name} queue "
                        f"{mq.queue_id}{avoid}",
                    )  # fmt: skip
                try:
                    send_result = yield from self.send_kernel_impl(
                        msg, mq, mode, tp_info, timeout_ms - cost
                    )
                    if mode is not CommunicationMode.SYNC:
                        return send_result
                    if (
                        send_result.send_status is not SendStatus.SEND_OK
                        and producer.retry_another_broker_when_not_store_ok
                    ):
                        times += 1
                        continue
                    return send_result
                except AsyncSendError:
                    raise
                except (RemotingException, MQClientException) as e:
                    exception = e
                    self._trace_attempt_failed(mq, times, times_total, e, retry=True)
                    times += 1
                    continue
                except MQBrokerException as e:
                    exception = e
                    retry = e.response_code in producer.retry_response_codes
                    self._trace_attempt_failed(mq, times, times_total, e, retry=retry)
                    times += 1
                    if retry:
                        continue
                    if send_result is not None:
                        return send_result
                    raise
            if send_result is not None:
                return send_result
            sent = brokers_sent + ["null"] * (times_total - len(brokers_sent))
            info = (
                f"Send [{times}] times, still failed, cost [{ctx.now_ms - begin_first}]ms, "
                f"Topic: {msg.topic}, BrokersSent: [{', '.join(sent)}]"
                f"{suggest_todo(SEND_MSG_FAILED)}"
            )
            if call_timeout:
                raise RemotingTooMuchRequestException("sendDefaultImpl call timeout")
            code = -1
            if isinstance(exception, MQBrokerException):
                code = exception.response_code
            elif isinstance(exception, RemotingConnectException):
                code = ClientErrorCode.CONNECT_BROKER_EXCEPTION
            elif isinstance(exception, RemotingTimeoutException):
                code = ClientErrorCode.ACCESS_BROKER_TIMEOUT
            elif isinstance(exception, MQClientException):
                code = ClientErrorCode.BROKER_NOT_EXIST_EXCEPTION
            # MQClientException(info, exception).setResponseCode(...): no "CODE:" prefix
            raise MQClientException(-1, info).set_response_code(code) from exception
        self._validate_name_server_setting()
        raise MQClientException(
            -1, f"No route info of this topic: {msg.topic}{suggest_todo(NO_TOPIC_ROUTE_INFO)}"
        ).set_response_code(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION)

    def _trace_attempt_failed(
        self, mq: MessageQueue, times: int, total: int, e: BaseException, *, retry: bool
    ) -> None:
        tracer = self.instance.tracer
        if tracer.enabled:
            again = retry and times + 1 < total
            tracer.emit(
                C + ".sendDefaultImpl", "exception", Kind.STEP, mq=str(mq), attempt=times + 1,
                error=str(e), code=getattr(e, "response_code", None), retry=again,
                text=f"attempt {times + 1}/{total} on {mq.broker_name} failed: {e}"
                + ("; resend at once" if again else ""),
            )  # fmt: skip


def _check_message_type(msg: Any) -> None:
    if not isinstance(msg, Message):
        raise TypeError(f"msg must be a mqlab Message, got {type(msg).__name__}")
