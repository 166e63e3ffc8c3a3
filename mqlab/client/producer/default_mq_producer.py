"""The producer a user holds: RocketMQ's configuration fields plus the send calls.

Mirrors ``DefaultMQProducer`` (client/producer/DefaultMQProducer.java, RocketMQ 4.9.3);
docs/reference.md §8.4 (defaults) and §2.7 (retry codes). Every call is delegated to its
``DefaultMQProducerImpl``; field names are Java's in snake_case.

Sans-IO usage (on a simulation driver)::

    producer = DefaultMQProducer("PG", instance)     # instance: an MQClientInstance node
    producer.start()
    future = producer.send(Message("TopicTest", b"hello", tags="TagA"))
    driver.run_until_idle()
    future.get()          # SendResult [sendStatus=SEND_OK, ...]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqlab.client.producer.default_mq_producer_impl import (
    DefaultMQProducerImpl,
    SendCallback,
    SendFuture,
)
from mqlab.client.producer.message_queue_selector import MessageQueueSelector
from mqlab.common.message import Message
from mqlab.common.topic_validator import AUTO_CREATE_TOPIC_KEY_TOPIC
from mqlab.remoting.codes import ResponseCode

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.request_response import RequestResponseFuture
    from mqlab.runtime.task import Task

__all__ = ["DefaultMQProducer", "DEFAULT_RETRY_RESPONSE_CODES"]

#: ``DefaultMQProducer#retryResponseCodes`` (docs/reference.md §2.7).
DEFAULT_RETRY_RESPONSE_CODES = frozenset(
    {
        ResponseCode.TOPIC_NOT_EXIST,
        ResponseCode.SERVICE_NOT_AVAILABLE,
        ResponseCode.SYSTEM_ERROR,
        ResponseCode.NO_PERMISSION,
        ResponseCode.NO_BUYER_ID,
        ResponseCode.NOT_IN_CURRENT_UNIT,
    }
)


@dataclass(slots=True, eq=False)
class DefaultMQProducer:
    """A producer group on a client instance. Mirrors ``DefaultMQProducer`` (docs/reference.md §8.4).

    Args:
        producer_group: the group name (validated on ``start``).
        instance: the ``MQClientInstance`` node it sends through.
        rpc_hook: an ``RPCHook`` such as ``AclClientRPCHook(SessionCredentials(ak, sk))``, as
            Java's ``DefaultMQProducer(producerGroup, rpcHook)`` takes it: registered on the
            instance, so every request the instance sends is signed
            (``MQClientInstance.register_rpc_hook``).
    """

    producer_group: str
    instance: MQClientInstance = field(repr=False)
    create_topic_key: str = AUTO_CREATE_TOPIC_KEY_TOPIC  # "TBW102"
    default_topic_queue_nums: int = 4
    send_msg_timeout: int = 3000
    compress_msg_body_over_howmuch: int = 4096
    retry_times_when_send_failed: int = 2
    retry_times_when_send_async_failed: int = 2
    retry_another_broker_when_not_store_ok: bool = False
    max_message_size: int = 4 * 1024 * 1024
    send_message_with_vip_channel: bool = False  # ClientConfig#isVipChannelEnabled
    retry_response_codes: set[int] = field(
        default_factory=lambda: set(DEFAULT_RETRY_RESPONSE_CODES)
    )
    rpc_hook: Any = field(default=None, repr=False)
    default_mq_producer_impl: DefaultMQProducerImpl = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.producer_group, str):
            raise TypeError(
                f"producer_group must be a str, got {type(self.producer_group).__name__}"
            )
        if self.rpc_hook is not None:
            self.instance.register_rpc_hook(self.rpc_hook)
        self.default_mq_producer_impl = DefaultMQProducerImpl(self, self.instance)

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Register on the instance. Mirrors ``DefaultMQProducer#start``."""
        self.default_mq_producer_impl.start()

    def shutdown(self) -> Task | None:
        """Unregister (UNREGISTER_CLIENT). Mirrors ``DefaultMQProducer#shutdown``; returns
        the unregister's task (see ``DefaultMQProducerImpl.shutdown``)."""
        return self.default_mq_producer_impl.shutdown()

    def add_retry_response_code(self, response_code: int) -> None:
        """Mirrors ``DefaultMQProducer#addRetryResponseCode``."""
        self.retry_response_codes.add(int(response_code))

    # -- sending ----------------------------------------------------------------------------------
    def send(
        self, msg: Message, *, timeout_ms: int | None = None, callback: SendCallback | None = None
    ) -> SendFuture:
        """Sync send (no callback) or async send (``callback(result, error)``)."""
        return self.default_mq_producer_impl.send(msg, timeout_ms=timeout_ms, callback=callback)

    def send_oneway(self, msg: Message) -> SendFuture:
        """Oneway send. Mirrors ``DefaultMQProducer#sendOneway(Message)``."""
        return self.default_mq_producer_impl.send_oneway(msg)

    def send_orderly(
        self,
        msg: Message,
        selector: MessageQueueSelector,
        arg: Any,
        *,
        timeout_ms: int | None = None,
        callback: SendCallback | None = None,
    ) -> SendFuture:
        """Send to the queue ``selector`` picks. Mirrors ``#send(Message, selector, arg)``."""
        return self.default_mq_producer_impl.send_orderly(
            msg, selector, arg, timeout_ms=timeout_ms, callback=callback
        )

    def send_batch(
        self,
        msgs: Iterable[Message],
        *,
        timeout_ms: int | None = None,
        callback: SendCallback | None = None,
    ) -> SendFuture:
        """One SEND_BATCH_MESSAGE. Mirrors ``DefaultMQProducer#send(Collection<Message>)``."""
        return self.default_mq_producer_impl.send_batch(
            msgs, timeout_ms=timeout_ms, callback=callback
        )

    # -- request-reply ----------------------------------------------------------------------------
    def request(
        self, msg: Message, *, timeout_ms: int | None = None, callback: Any = None
    ) -> RequestResponseFuture:
        """Send ``msg`` as a request and wait for the reply message.

        Mirrors ``DefaultMQProducer#request(Message, long)`` (no ``callback``: the
        returned future's ``get()`` is the reply, or RequestTimeoutException after
        ``timeout_ms``) and ``#request(Message, RequestCallback, long)`` (``callback``
        has ``on_success(msg)`` and ``on_exception(e)``). The replier answers with
        ``mqlab.client.message_util.create_reply_message``.
        """
        return self.default_mq_producer_impl.request(msg, timeout_ms=timeout_ms, callback=callback)
