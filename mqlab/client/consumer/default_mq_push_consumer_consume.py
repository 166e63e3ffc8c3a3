"""What the consume services ask of the push consumer: send-back, retry topics, the log.

Mirrors ``DefaultMQPushConsumerImpl#sendMessageBack``, ``#getMaxReconsumeTimes`` and
``#resetRetryAndNamespace`` (client/impl/consumer/DefaultMQPushConsumerImpl.java, RocketMQ
4.9.3); mechanisms.md "Consumption" "DefaultMQPushConsumerImpl#sendMessageBack" span 4–25 (the broker first,
the inner producer as the fallback); docs/reference.md §10.7 (CONSUMER_SEND_MSG_BACK and the client
fallback), §10.15.

It also holds what mqlab adds for the workbench: ``ConsumedRecord`` (one line of the
consumed log per message handed to a listener) and ``PushConsumerStats`` (Java keeps some of
these in ``ConsumerStatsManager``).

``ConsumeSupportMixin`` is a part of ``DefaultMQPushConsumerImpl`` (it reads the consumer's
client instance, group, settings and tracer); it is a separate module only to keep one
mechanism per module.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from mqlab.client.consumer.rebalance_impl import NETWORK_ERRORS
from mqlab.client.exception import MQClientException
from mqlab.common import message_const as mc
from mqlab.common.frozen_init import fast_frozen_init
from mqlab.common.message import Message, MessageExt, MessageQueue
from mqlab.common.mix_all import get_retry_topic
from mqlab.trace.events import Kind

__all__ = [
    "ConsumeSupportMixin",
    "ConsumedRecord",
    "PushConsumerStats",
    "SEND_MESSAGE_BACK_TIMEOUT",
    "DEFAULT_MAX_RECONSUME_TIMES",
]

Gen = Generator[Any, Any, Any]
C = "DefaultMQPushConsumerImpl"

# docs/reference.md §9 "Internal constants" (Java's names and spellings)
#: consumerSendMessageBack RPC timeout.
SEND_MESSAGE_BACK_TIMEOUT = 5000
#: maxReconsumeTimes −1 means 16 for concurrent consumption.
DEFAULT_MAX_RECONSUME_TIMES = 16


@fast_frozen_init
@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    """One message handed to the listener (the workbench's "consumed" log).

    Attributes:
        t_ms: when the listener was called.
        mq: the queue it was pulled from (a ``%RETRY%`` queue for redeliveries).
        queue_offset: its offset in that queue.
        msg_id: the client message id (``UNIQ_KEY``): the same across redeliveries.
        reconsume_times: 0 on first delivery, n on the n-th retry.
        topic: the topic the listener saw (the original topic for retries).
        status: the listener's answer (after Java's null/exception rules).
        worker: the consume thread.
    """

    t_ms: int
    mq: MessageQueue
    queue_offset: int
    msg_id: str
    reconsume_times: int
    topic: str
    status: str
    worker: str


@dataclass(slots=True)
class PushConsumerStats:
    """Counters of one push consumer (Java keeps some in ``ConsumerStatsManager``).

    Attributes:
        pulls_issued: PULL_MESSAGE requests sent.
        pulls: pull results by status (``FOUND`` ... ``OFFSET_ILLEGAL``, ``EXCEPTION``).
        flow_control: flow-control episodes by kind (``count``, ``size``, ``span``).
        queue_flow_control_times: Java's counter for count and size.
        queue_max_span_flow_control_times: Java's counter for span.
        consume_ok / consume_failed: messages acked / not acked by the listener.
        send_back_ok / send_back_failed: CONSUMER_SEND_MSG_BACK outcomes (with fallback).
        results_dropped: consume results ignored because the queue was dropped meanwhile.
    """

    pulls_issued: int = 0
    pulls: dict[str, int] = field(default_factory=dict)
    flow_control: dict[str, int] = field(default_factory=lambda: {"count": 0, "size": 0, "span": 0})
    queue_flow_control_times: int = 0
    queue_max_span_flow_control_times: int = 0
    consume_ok: int = 0
    consume_failed: int = 0
    send_back_ok: int = 0
    send_back_failed: int = 0
    results_dropped: int = 0

    def count_pull(self, status: str) -> None:
        self.pulls[status] = self.pulls.get(status, 0) + 1


def _mq_text(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


class ConsumeSupportMixin:
    """``sendMessageBack`` and friends of ``DefaultMQPushConsumerImpl``.

    Expects the host class to provide ``mq_client_factory``, ``default_mq_push_consumer``,
    ``group_name()``, ``ctx``, ``consumed`` and ``_emit``.
    """

    def reset_retry_and_namespace(self, msgs: list[MessageExt], consumer_group: str) -> None:
        """Show a retried message with its original topic.

        Mirrors DefaultMQPushConsumerImpl#resetRetryAndNamespace (docs/reference.md §10.7): if
        RETRY_TOPIC is set and the topic is ``%RETRY%<group>``, topic := RETRY_TOPIC.
        """
        group_topic = get_retry_topic(consumer_group)
        for msg in msgs:
            retry_topic = msg.get_property(mc.PROPERTY_RETRY_TOPIC)
            if retry_topic is not None and msg.topic == group_topic:
                msg.topic = retry_topic

    def max_reconsume_times(self) -> int:
        """−1 → 16. Mirrors DefaultMQPushConsumerImpl#getMaxReconsumeTimes."""
        value = self.default_mq_push_consumer.max_reconsume_times
        return DEFAULT_MAX_RECONSUME_TIMES if value == -1 else value

    def send_message_back(self, msg: MessageExt, delay_level: int, broker_name: str | None) -> Gen:
        """CONSUMER_SEND_MSG_BACK to the queue's broker; on failure re-send via the inner producer.

        Mirrors DefaultMQPushConsumerImpl#sendMessageBack (client/impl/consumer, RocketMQ
        4.9.3); mechanisms.md "Consumption" "sendMessageBack" span 4–25; docs/reference.md §10.7 (broker side and the
        client fallback).

        Raises:
            Exception: the fallback send failed too (the caller counts it as not sent back).
        """
        factory = self.mq_client_factory
        group = self.group_name()
        addr = (
            factory.find_broker_address_in_publish(broker_name)
            if broker_name is not None
            else msg.store_host
        )
        try:
            if addr is None:
                raise MQClientException(-1, f"The broker[{broker_name}] not exist")
            # emitted when the request leaves, so the trace reads cause before effect (the
            # broker's "send back … delay level" comes a hop later); a failure follows as 10-25
            self._emit(C + ".sendMessageBack", "4-8", topic=msg.topic, queue_offset=msg.queue_offset,
                       reconsume_times=msg.reconsume_times, delay_level=delay_level, addr=addr,
                       text=f"send back {msg.client_msg_id()} (reconsumeTimes "
                       f"{msg.reconsume_times}, delayLevel {delay_level}) to {addr}")  # fmt: skip
            yield from factory.mq_client_api_impl.consumer_send_message_back(
                addr, msg, group, delay_level, SEND_MESSAGE_BACK_TIMEOUT, self.max_reconsume_times()
            )
        except NETWORK_ERRORS as e:
            self._emit(C + ".sendMessageBack", "10-25", Kind.ERROR, error=str(e),
                       text=f"sendMessageBack failed ({e}); re-send through the inner producer")  # fmt: skip
            new_msg = Message(get_retry_topic(group), msg.body)
            origin = msg.get_property(mc.PROPERTY_ORIGIN_MESSAGE_ID)
            new_msg.flag = msg.flag
            new_msg.properties = dict(msg.properties)
            new_msg.put_property(mc.PROPERTY_ORIGIN_MESSAGE_ID, origin or msg.client_msg_id())
            new_msg.put_property(mc.PROPERTY_RETRY_TOPIC, msg.topic)
            new_msg.put_property(mc.PROPERTY_RECONSUME_TIME, str(msg.reconsume_times + 1))
            new_msg.put_property(mc.PROPERTY_MAX_RECONSUME_TIMES, str(self.max_reconsume_times()))
            new_msg.clear_property(mc.PROPERTY_TRANSACTION_PREPARED)
            new_msg.delay_time_level = 3 + msg.reconsume_times
            yield from self.send_by_inner_producer(new_msg)

    def send_by_inner_producer(self, msg: Message) -> Gen:
        """``mQClientFactory.getDefaultMQProducer().send(msg)`` (synchronous send)."""
        from mqlab.client.producer.default_mq_producer_impl import CommunicationMode

        producer = self.mq_client_factory.default_mq_producer
        timeout = getattr(producer, "send_msg_timeout", 3000)
        return (
            yield from producer.default_mq_producer_impl.send_default_impl(
                msg, CommunicationMode.SYNC, timeout
            )
        )

    def record_consumed(
        self, msgs: list[MessageExt], mq: MessageQueue, status: str, worker: str
    ) -> None:
        """Append the workbench's consumed-log records for one listener call."""
        now = self.ctx.now_ms
        for msg in msgs:
            self.consumed.append(
                ConsumedRecord(
                    now,
                    mq,
                    msg.queue_offset,
                    msg.client_msg_id(),
                    msg.reconsume_times,
                    msg.topic,
                    status,
                    worker,
                )  # fmt: skip
            )
