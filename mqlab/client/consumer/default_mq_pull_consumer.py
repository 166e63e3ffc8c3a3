"""The pull consumer: the application picks queues, pulls at offsets, and keeps offsets itself.

Mirrors ``DefaultMQPullConsumer`` (client/consumer) and ``DefaultMQPullConsumerImpl``
(client/impl/consumer), RocketMQ 4.9.3; mechanisms.md "Rebalancing" "PullConsumer" (``RebalancePullImpl``) and
mechanisms.md "The consumer's pull loop" ("PullAPIWrapper#pullKernelImpl" serves both consumers); docs/reference.md §2.2 (PullSysFlag),
§10.12 (offset stores), §10.14.

A pull consumer has no pull loop and no consume service. The application:

1. ``fetch_subscribe_message_queues(topic)`` — the topic's readable queues (from the name
   server), or ``fetch_message_queues_in_balance(topic)`` — this consumer's share when the
   topic is in ``register_topics`` (then ``RebalancePullImpl`` allocates like a push
   consumer, every 20 s, and calls ``message_queue_listener``);
2. ``pull(mq, "TagA || TagB", offset, max_nums)`` — one PULL_MESSAGE without long polling
   (``pull_block_if_not_found`` parks at the broker for ``broker_suspend_max_time_millis``);
3. ``update_consume_offset(mq, next_offset)`` — remember where it got to; the client
   instance persists the offsets of the *allocated* queues every 5 s (a queue never
   allocated through ``register_topics`` is only written by ``update_consume_offset_to_broker``),
   and ``fetch_consume_offset(mq, from_store)`` reads them back.

Filtering: a ``str`` expression is a tag expression, as Java's ``pull(mq, String, ...)``
builds it with ``FilterAPI.buildSubscriptionData``; a ``MessageSelector.by_sql`` pull is sent
as SQL92 and is refused by a broker without ``enablePropertyFilter`` (the 4.9.3 default):
SYSTEM_ERROR "The broker does not support consumer to filter message by SQL92".

Sans-IO: a call that needs the network returns a ``ConsumerFuture`` completed in virtual time
(``done``, ``result``, ``error``, ``get()``; optional ``callback(result, error)``, Java's
``PullCallback``). Argument errors raise ``MQClientException`` at once, as Java does before
any I/O. This module is the settings facade; the engine is ``default_mq_pull_consumer_impl``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mqlab.client.allocate import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy
from mqlab.client.consumer.consumer_enums import MessageModel
from mqlab.client.consumer.default_mq_pull_consumer_impl import (
    ConsumerFuture,
    DefaultMQPullConsumerImpl,
)
from mqlab.client.consumer.default_mq_push_consumer import MessageSelector
from mqlab.client.consumer.pull_api_wrapper import PullResult
from mqlab.common.message import MessageExt, MessageQueue

if TYPE_CHECKING:
    from mqlab.runtime.task import Task

__all__ = ["DefaultMQPullConsumer", "ConsumerFuture"]


class DefaultMQPullConsumer:
    """A pull consumer of one group on one client instance.

    Mirrors ``DefaultMQPullConsumer`` (client/consumer, RocketMQ 4.9.3).

    Args:
        consumer_group: the group.
        instance: the ``MQClientInstance`` (added to a driver).
        rpc_hook: an ``RPCHook`` (``AclClientRPCHook``), as Java's constructor takes it.
        **settings: any field below by its snake_case name.

    Raises:
        TypeError: an unknown setting.
    """

    def __init__(
        self, consumer_group: str, instance: Any, *, rpc_hook: Any = None, **settings: Any
    ) -> None:
        self.consumer_group = consumer_group
        #: Java's ``DefaultMQPullConsumer(consumerGroup, rpcHook, ...)``: registered on the instance, so every
        #: request it sends passes the hook (``MQClientInstance.register_rpc_hook``)
        self.rpc_hook = rpc_hook
        if rpc_hook is not None:
            instance.register_rpc_hook(rpc_hook)
        self.broker_suspend_max_time_millis = 1000 * 20
        self.consumer_timeout_millis_when_suspend = 1000 * 30
        self.consumer_pull_timeout_millis = 1000 * 10
        self.message_model: str = MessageModel.CLUSTERING.value
        self.message_queue_listener: Any = None
        self.offset_store: Any = None
        self.register_topics: set[str] = set()
        self.allocate_message_queue_strategy: AllocateMessageQueueStrategy | None = (
            AllocateMessageQueueAveragely()
        )
        self.unit_mode = False
        self.max_reconsume_times = 16
        cfg = getattr(instance, "client_config", None)
        self.local_offset_store_dir: str | None = (
            cfg.local_offset_store_dir if cfg is not None else None
        )
        for name, value in settings.items():
            if name.startswith("_") or not hasattr(self, name):
                raise TypeError(f"DefaultMQPullConsumer has no setting {name!r}")
            setattr(self, name, value)
        MessageModel(self.message_model)
        self.default_mq_pull_consumer_impl = DefaultMQPullConsumerImpl(self, instance)

    def __repr__(self) -> str:
        return (
            f"DefaultMQPullConsumer({self.consumer_group!r}, "
            f"{self.default_mq_pull_consumer_impl.service_state.value})"
        )

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Mirrors DefaultMQPullConsumer#start."""
        self.default_mq_pull_consumer_impl.start()

    def shutdown(self) -> Task | None:
        """Mirrors DefaultMQPullConsumer#shutdown; the task of DefaultMQPullConsumerImpl#shutdown."""
        return self.default_mq_pull_consumer_impl.shutdown()

    def register_message_queue_listener(self, topic: str, listener: Any) -> None:
        """Rebalance ``topic`` for this group; call ``listener(topic, mq_all, mq_divided)``.

        Mirrors DefaultMQPullConsumer#registerMessageQueueListener.
        """
        self.register_topics.add(topic)
        if listener is not None:
            self.message_queue_listener = listener

    # -- queues and offsets ----------------------------------------------------------------------
    def fetch_subscribe_message_queues(self, topic: str) -> ConsumerFuture:
        """The readable queues of ``topic``. Mirrors #fetchSubscribeMessageQueues."""
        return self.default_mq_pull_consumer_impl.fetch_subscribe_message_queues(topic)

    def fetch_message_queues_in_balance(self, topic: str) -> set[MessageQueue]:
        """This consumer's allocated queues of ``topic``. Mirrors #fetchMessageQueuesInBalance."""
        return self.default_mq_pull_consumer_impl.fetch_message_queues_in_balance(topic)

    def update_consume_offset(self, mq: MessageQueue, offset: int) -> None:
        """Remember ``offset`` (in memory; persisted later). Mirrors #updateConsumeOffset."""
        self.default_mq_pull_consumer_impl.update_consume_offset(mq, offset)

    def fetch_consume_offset(self, mq: MessageQueue, from_store: bool) -> ConsumerFuture:
        """The stored offset (−1 none, −2 unreachable). Mirrors #fetchConsumeOffset."""
        return self.default_mq_pull_consumer_impl.fetch_consume_offset(mq, from_store)

    def max_offset(self, mq: MessageQueue) -> ConsumerFuture:
        return self.default_mq_pull_consumer_impl.admin("max_offset", mq)

    def min_offset(self, mq: MessageQueue) -> ConsumerFuture:
        return self.default_mq_pull_consumer_impl.admin("min_offset", mq)

    def search_offset(self, mq: MessageQueue, timestamp: int) -> ConsumerFuture:
        return self.default_mq_pull_consumer_impl.admin("search_offset", mq, timestamp)

    def earliest_msg_store_time(self, mq: MessageQueue) -> ConsumerFuture:
        return self.default_mq_pull_consumer_impl.admin("earliest_msg_store_time", mq)

    # -- pulling -----------------------------------------------------------------------------------
    def pull(
        self,
        mq: MessageQueue,
        sub_expression: str | MessageSelector | None,
        offset: int,
        max_nums: int,
        timeout: int | None = None,
        callback: Callable[[PullResult | None, BaseException | None], None] | None = None,
    ) -> ConsumerFuture:
        """One PULL_MESSAGE at ``offset`` (no long polling). Mirrors DefaultMQPullConsumer#pull."""
        return self.default_mq_pull_consumer_impl.pull(
            mq, sub_expression, offset, max_nums, block=False, timeout=timeout, callback=callback
        )

    def pull_block_if_not_found(
        self,
        mq: MessageQueue,
        sub_expression: str | MessageSelector | None,
        offset: int,
        max_nums: int,
        callback: Callable[[PullResult | None, BaseException | None], None] | None = None,
    ) -> ConsumerFuture:
        """Like ``pull`` but parked at the broker until a message arrives or 20 s pass.

        Mirrors DefaultMQPullConsumer#pullBlockIfNotFound.
        """
        return self.default_mq_pull_consumer_impl.pull(
            mq, sub_expression, offset, max_nums, block=True, timeout=None, callback=callback
        )

    def send_message_back(
        self, msg: MessageExt, delay_level: int, broker_name: str | None = None
    ) -> ConsumerFuture:
        """CONSUMER_SEND_MSG_BACK for a message the application failed to process."""
        return self.default_mq_pull_consumer_impl.send_message_back(msg, delay_level, broker_name)
