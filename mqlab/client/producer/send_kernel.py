"""The producer's last mile: one message to one queue, and the orderly and batch paths.

Mirrors ``DefaultMQProducerImpl#sendKernelImpl``, ``#tryToCompressMessage``,
``#sendSelectImpl`` and ``DefaultMQProducer#batch`` (client/impl/producer and
client/producer, RocketMQ 4.9.3); docs/reference.md §2.2 "Client specifics" (UNIQ_KEY, compression,
TRAN_MSG, %RETRY% headers), §4.3 (zlib level 5 from 4096 bytes), §10.6 (batches).

A mixin of ``DefaultMQProducerImpl`` (``default_mq_producer_impl``), which supplies
``instance``, ``default_mq_producer``, ``try_to_find_topic_publish_info``,
``send_default_impl`` and the state check. Split off to keep each module one mechanism:
that module chooses queues and retries, this one builds and sends a single request.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from mqlab.client.exception import (
    ClientErrorCode,
    MQClientException,
    RemotingTooMuchRequestException,
)
from mqlab.client.producer.message_batch import MessageBatch
from mqlab.client.producer.message_queue_selector import MessageQueueSelector
from mqlab.client.producer.send_future import AsyncSendError, CommunicationMode
from mqlab.client.producer.topic_publish_info import TopicPublishInfo
from mqlab.client.producer.validators import Validators
from mqlab.common import message_const as mc
from mqlab.common.faq_url import NAME_SERVER_ADDR_NOT_EXIST_URL, suggest_todo
from mqlab.common.message import Message, MessageQueue
from mqlab.common.message_decoder import message_properties_to_string
from mqlab.common.mix_all import RETRY_GROUP_TOPIC_PREFIX, broker_vip_channel
from mqlab.common.sysflag import MessageSysFlag
from mqlab.common.util_all import compress
from mqlab.remoting.headers import SendMessageRequestHeader

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer import DefaultMQProducer

__all__ = ["SendKernelImpl"]

Gen = Generator[Any, Any, Any]
C = "DefaultMQProducerImpl"


class SendKernelImpl:
    """``sendKernelImpl``, ``sendSelectImpl`` and batching, mixed into DefaultMQProducerImpl."""

    instance: MQClientInstance
    default_mq_producer: DefaultMQProducer
    zip_compress_level: int

    if TYPE_CHECKING:  # provided by DefaultMQProducerImpl

        def try_to_find_topic_publish_info(self, topic: str) -> Gen: ...
        def send_default_impl(
            self, msg: Message, mode: CommunicationMode, timeout_ms: int
        ) -> Gen: ...
        def _make_sure_state_ok(self) -> None: ...
        def is_unit_mode(self) -> bool: ...

    def _validate_name_server_setting(self) -> None:
        if not self.instance.mq_client_api_impl.get_name_server_address_list():
            raise MQClientException(
                -1,
                f"No name server address, please set it."
                f"{suggest_todo(NAME_SERVER_ADDR_NOT_EXIST_URL)}",
            ).set_response_code(ClientErrorCode.NO_NAME_SERVER_EXCEPTION)

    # -- sendKernelImpl ----------------------------------------------------------------------------
    def send_kernel_impl(
        self,
        msg: Message,
        mq: MessageQueue,
        mode: CommunicationMode,
        tp_info: TopicPublishInfo | None,
        timeout_ms: int,
    ) -> Gen:
        """Send ``msg`` to ``mq``: UNIQ_KEY, compression, header, then the RPC.

        Mirrors ``DefaultMQProducerImpl#sendKernelImpl`` (client/impl/producer, RocketMQ
        4.9.3); docs/reference.md §2.2 "Client specifics": UNIQ_KEY (not for batches, whose messages
        have one each), zlib level 5 from ``compress_msg_body_over_howmuch`` (4096) bytes
        with sysFlag COMPRESSED (never for batches), TRAN_MSG → TRANSACTION_PREPARED, and
        for ``%RETRY%`` topics RECONSUME_TIME / MAX_RECONSUME_TIMES moved to header j / l
        (the properties string, built first, still carries them, as in Java). The body is
        restored after the call.

        Raises:
            MQClientException: the broker's address is unknown even after a route refresh.
        """
        inst = self.instance
        producer = self.default_mq_producer
        ctx = inst.ctx
        begin = ctx.now_ms
        broker_addr = inst.find_broker_address_in_publish(mq.broker_name)
        if broker_addr is None:
            yield from self.try_to_find_topic_publish_info(mq.topic)
            broker_addr = inst.find_broker_address_in_publish(mq.broker_name)
        if broker_addr is None:
            raise MQClientException(-1, f"The broker[{mq.broker_name}] not exist")
        broker_addr = broker_vip_channel(producer.send_message_with_vip_channel, broker_addr)
        prev_body = msg.body
        try:
            if not isinstance(msg, MessageBatch):
                inst.message_client_id_setter.set_uniq_id(msg, ctx.now_ms)
            sys_flag = 0
            compressed = self.try_to_compress_message(msg)
            if compressed:
                sys_flag |= MessageSysFlag.COMPRESSED_FLAG
            if (msg.get_property(mc.PROPERTY_TRANSACTION_PREPARED) or "").lower() == "true":
                sys_flag |= MessageSysFlag.TRANSACTION_PREPARED_TYPE
            properties = message_properties_to_string(msg.properties)
            reconsume_times = 0
            max_reconsume_times = None
            if msg.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                rt = msg.get_property(mc.PROPERTY_RECONSUME_TIME)
                if rt is not None:
                    reconsume_times = int(rt)
                    msg.clear_property(mc.PROPERTY_RECONSUME_TIME)
                mrt = msg.get_property(mc.PROPERTY_MAX_RECONSUME_TIMES)
                if mrt is not None:
                    max_reconsume_times = int(mrt)
                    msg.clear_property(mc.PROPERTY_MAX_RECONSUME_TIMES)
            header = SendMessageRequestHeader(
                producer_group=producer.producer_group, topic=msg.topic,
                default_topic=producer.create_topic_key,
                default_topic_queue_nums=producer.default_topic_queue_nums,
                queue_id=mq.queue_id, sys_flag=sys_flag, born_timestamp=ctx.now_ms,
                flag=msg.flag, properties=properties, reconsume_times=reconsume_times,
                unit_mode=self.is_unit_mode(), max_reconsume_times=max_reconsume_times,
                batch=isinstance(msg, MessageBatch),
            )  # fmt: skip
            if inst.tracer.enabled:
                uniq = msg.get_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
                inst.tracer.emit(
                    C + ".sendKernelImpl", "send", mode=mode.name, mq=str(mq), addr=broker_addr,
                    sys_flag=sys_flag, compressed=compressed, body_bytes=len(msg.body),
                    uniq_key=uniq,
                    text=f"{mode.name} send to {broker_addr} ({mq.broker_name} queue "
                    f"{mq.queue_id}), {len(msg.body)} body bytes"
                    + (" (zlib-compressed)" if compressed else ""),
                )  # fmt: skip
            api = inst.mq_client_api_impl
            cost = ctx.now_ms - begin
            if timeout_ms < cost:
                raise RemotingTooMuchRequestException("sendKernelImpl call timeout")
            if mode is CommunicationMode.ASYNC:
                try:
                    return (
                        yield from api.send_message_async(
                            broker_addr,
                            mq.broker_name,
                            msg,
                            header,
                            timeout_ms - cost,
                            tp_info,
                            self,
                            producer.retry_times_when_send_async_failed,
                        )  # fmt: skip
                    )
                except Exception as e:
                    raise AsyncSendError(e) from e
            if mode is CommunicationMode.ONEWAY:
                api.send_message_oneway(broker_addr, msg, header)
                return None
            return (
                yield from api.send_message(
                    broker_addr, mq.broker_name, msg, header, timeout_ms - cost
                )
            )
        finally:
            msg.body = prev_body

    def try_to_compress_message(self, msg: Message) -> bool:
        """zlib the body in place when it reaches the threshold (never for batches).

        Mirrors ``DefaultMQProducerImpl#tryToCompressMessage``; docs/reference.md §4.3.
        """
        if isinstance(msg, MessageBatch):
            return False
        body = msg.body
        if (
            body is not None
            and len(body) >= self.default_mq_producer.compress_msg_body_over_howmuch
        ):
            msg.body = compress(body, self.zip_compress_level)
            return True
        return False

    # -- sendSelectImpl ----------------------------------------------------------------------------
    def send_select_impl(
        self,
        msg: Message,
        selector: MessageQueueSelector,
        arg: Any,
        mode: CommunicationMode,
        timeout_ms: int,
    ) -> Gen:
        """Send to the queue the selector picks (orderly messages); no retry.

        Mirrors ``DefaultMQProducerImpl#sendSelectImpl`` (client/impl/producer, RocketMQ
        4.9.3).

        Raises:
            MQClientException: the selector raised or returned None, or no route.
        """
        ctx = self.instance.ctx
        begin = ctx.now_ms
        self._make_sure_state_ok()
        Validators.check_message(msg, self.default_mq_producer.max_message_size)
        tp_info = yield from self.try_to_find_topic_publish_info(msg.topic)
        if tp_info is not None and tp_info.ok():
            queues = list(tp_info.message_queue_list)
            try:
                mq = selector.select(queues, msg, arg)
            except Exception as e:
                raise MQClientException(-1, "select message queue threw exception.") from e
            cost = ctx.now_ms - begin
            if timeout_ms < cost:
                raise RemotingTooMuchRequestException("sendSelectImpl call timeout")
            if mq is None:
                raise MQClientException(-1, "select message queue return null.")
            if self.instance.tracer.enabled:
                self.instance.tracer.emit(
                    C + ".sendSelectImpl", "select", mq=str(mq), arg=repr(arg),
                    selector=type(selector).__name__,
                    text=f"{type(selector).__name__} picked {mq.broker_name} queue "
                    f"{mq.queue_id} for arg {arg!r}",
                )  # fmt: skip
            return (yield from self.send_kernel_impl(msg, mq, mode, None, timeout_ms - cost))
        self._validate_name_server_setting()
        raise MQClientException(-1, f"No route info for this topic, {msg.topic}")

    # -- batches ----------------------------------------------------------------------------------
    def batch(self, msgs: list[Message]) -> MessageBatch:
        """Check the messages, give each a UNIQ_KEY, encode the batch body.

        Mirrors ``DefaultMQProducer#batch`` (client/producer, RocketMQ 4.9.3).

        Raises:
            MQClientException: "Failed to initiate the MessageBatch" (the cause attached).
        """
        try:
            batch = MessageBatch.generate_from_list(msgs)
            setter = self.instance.message_client_id_setter
            max_size = self.default_mq_producer.max_message_size
            now = self.instance.ctx.now_ms
            # NOTE: performance — the messages share one topic (generate_from_list checked),
            # so its rules are checked on the first message only: the same outcome, ~1 µs
            # less per message.
            check = Validators.check_message
            for m in batch:
                check(m, max_size)
                check = Validators.check_message_body
                setter.set_uniq_id(m, now)
            batch.body = batch.encode()
        except Exception as e:
            raise MQClientException(-1, "Failed to initiate the MessageBatch") from e
        return batch

    def _send_batch(self, msgs: list[Message], mode: CommunicationMode, timeout_ms: int) -> Gen:
        batch = self.batch(msgs)
        return (yield from self.send_default_impl(batch, mode, timeout_ms))
