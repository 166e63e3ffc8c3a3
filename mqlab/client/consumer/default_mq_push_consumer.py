"""The push consumer an application writes against: settings, subscribe, listen, start.

Mirrors ``DefaultMQPushConsumer`` (client/consumer/DefaultMQPushConsumer.java, RocketMQ 4.9.3);
mechanisms.md "Rebalancing" (subscribe, registerMessageListener); docs/reference.md §9 (every setting,
its default and its valid range).

This class holds the configuration (Java's fields, in snake_case, with Java's defaults) and
delegates every action to ``DefaultMQPushConsumerImpl``. Unlike Java, the client instance is
passed in: a consumer lives on an ``MQClientInstance`` node that a driver runs, and several
consumers (of different groups) may share it, as they share one ``MQClientInstance`` per JVM
in Java.

mqlab additions, for the workbench:

* ``consume_time_ms`` — how long one listener call takes in virtual time (an int or a
  callable ``(msgs) -> int``; a listener's own ``consume_time_ms`` wins);
* inspection: ``process_queue_table``, ``consumed`` (one record per message handed to the
  listener), ``stats`` (flow control episodes by kind, pulls by status, send-backs),
  ``allocation`` (this consumer's queues per topic).

Java's ``pullTimeDelayMillsWhenException`` comes from ``ClientConfig`` (1000 ms in 4.9.3):
``DefaultMQPushConsumerImpl``'s constructor copies it over its own field initialiser
(3000 ms), so 1000 ms is what a 4.9.3 consumer waits after a failed pull.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mqlab.client.allocate import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy
from mqlab.client.consumer.consumer_enums import ConsumeFromWhere, MessageModel
from mqlab.common.filter_api import ExpressionType
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.common.util_all import time_millis_to_human_string3

if TYPE_CHECKING:
    from mqlab.client.consumer.default_mq_push_consumer_impl import (
        ConsumedRecord,
        DefaultMQPushConsumerImpl,
        PushConsumerStats,
    )
    from mqlab.client.process_queue import ProcessQueue
    from mqlab.runtime.task import Task

__all__ = ["DefaultMQPushConsumer", "MessageSelector"]

#: consumeTimestamp default: half an hour before the consumer was built.
_CONSUME_TIMESTAMP_BACK_MS = 30 * 60 * 1000


class MessageSelector:
    """An expression and its type. Mirrors ``MessageSelector`` (client/consumer)."""

    __slots__ = ("expression_type", "expression")

    def __init__(self, expression_type: str, expression: str) -> None:
        self.expression_type = expression_type
        self.expression = expression

    @classmethod
    def by_sql(cls, sql: str) -> MessageSelector:
        """``MessageSelector#bySql``: a SQL92 expression on message properties."""
        return cls(ExpressionType.SQL92, sql)

    @classmethod
    def by_tag(cls, tag: str) -> MessageSelector:
        """``MessageSelector#byTag``: ``"*"`` or ``"TagA || TagB"``."""
        return cls(ExpressionType.TAG, tag)

    def __repr__(self) -> str:
        return f"MessageSelector({self.expression_type}, {self.expression!r})"


class DefaultMQPushConsumer:
    """A push consumer of one group on one client instance.

    Mirrors ``DefaultMQPushConsumer`` (client/consumer, RocketMQ 4.9.3); docs/reference.md §9.

    Args:
        consumer_group: the group (checked at ``start``).
        instance: the ``MQClientInstance`` the consumer runs on (added to a driver).
        rpc_hook: an ``RPCHook`` (``AclClientRPCHook``), as Java's constructor takes it.
        **settings: any field below by its snake_case name.

    Raises:
        TypeError: an unknown setting.
        ValueError: ``message_model`` / ``consume_from_where`` not one of Java's names.
    """

    def __init__(
        self, consumer_group: str, instance: Any, *, rpc_hook: Any = None, **settings: Any
    ) -> None:
        self.consumer_group = consumer_group
        #: Java's ``DefaultMQPushConsumer(consumerGroup, rpcHook, ...)``: registered on the instance, so every
        #: request it sends passes the hook (``MQClientInstance.register_rpc_hook``)
        self.rpc_hook = rpc_hook
        if rpc_hook is not None:
            instance.register_rpc_hook(rpc_hook)
        self.message_model: str = MessageModel.CLUSTERING.value
        self.consume_from_where: str = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET.value
        now = instance.ctx.now_ms if getattr(instance, "ctx", None) is not None else 0
        self.consume_timestamp: str = time_millis_to_human_string3(now - _CONSUME_TIMESTAMP_BACK_MS)
        self.allocate_message_queue_strategy: AllocateMessageQueueStrategy | None = (
            AllocateMessageQueueAveragely()
        )
        self.subscription: dict[str, str] = {}
        self.message_listener: Any = None
        self.offset_store: Any = None
        self.consume_thread_min = 20
        self.consume_thread_max = 20
        self.adjust_thread_pool_nums_threshold = 100_000
        self.consume_concurrently_max_span = 2000
        self.pull_threshold_for_queue = 1000
        self.pull_threshold_size_for_queue = 100  # MiB
        self.pull_threshold_for_topic = -1
        self.pull_threshold_size_for_topic = -1  # MiB
        self.pull_interval = 0
        self.consume_message_batch_max_size = 1
        self.pull_batch_size = 32
        self.post_subscription_when_pull = False
        self.unit_mode = False
        self.max_reconsume_times = -1
        self.suspend_current_queue_time_millis = 1000
        self.consume_timeout = 15  # minutes
        self.await_termination_millis_when_shutdown = 0
        cfg = getattr(instance, "client_config", None)
        #: ClientConfig#pullTimeDelayMillsWhenException (1000 ms), copied by the impl.
        self.pull_time_delay_mills_when_exception: int = (
            cfg.pull_time_delay_mills_when_exception if cfg is not None else 1000
        )
        #: LocalFileOffsetStore base directory (None → the client config's, then Java's).
        self.local_offset_store_dir: str | None = (
            cfg.local_offset_store_dir if cfg is not None else None
        )
        #: mqlab: virtual ms one listener call takes (int or ``(msgs) -> int``).
        self.consume_time_ms: int | Callable[[list[MessageExt]], int] = 0
        for name, value in settings.items():
            if name.startswith("_") or not hasattr(self, name):
                raise TypeError(f"DefaultMQPushConsumer has no setting {name!r}")
            setattr(self, name, value)
        MessageModel(self.message_model)  # ValueError names the bad value
        ConsumeFromWhere(self.consume_from_where)
        from mqlab.client.consumer.default_mq_push_consumer_impl import DefaultMQPushConsumerImpl

        self.default_mq_push_consumer_impl: DefaultMQPushConsumerImpl = DefaultMQPushConsumerImpl(
            self, instance
        )

    def __repr__(self) -> str:
        impl = self.default_mq_push_consumer_impl
        return (
            f"DefaultMQPushConsumer({self.consumer_group!r}, {self.message_model}, "
            f"{impl.service_state.value}, queues={len(impl.rebalance_impl.process_queue_table)})"
        )

    # -- subscribe and listen ---------------------------------------------------------------------
    def subscribe(
        self,
        topic: str,
        expression: str | MessageSelector | None = "*",
        expression_type: str = ExpressionType.TAG,
    ) -> None:
        """Subscribe ``topic`` with a tag expression (``*``, ``TagA || TagB``) or SQL92.

        Mirrors DefaultMQPushConsumer#subscribe(String, String) and
        #subscribe(String, MessageSelector) (RocketMQ 4.9.3); mechanisms.md "Rebalancing" "subscribe".

        Raises:
            MQClientException: "subscription exception" (an unparsable expression).
        """
        if isinstance(expression, MessageSelector):
            expression_type, expression = expression.expression_type, expression.expression
        self.default_mq_push_consumer_impl.subscribe(topic, expression, expression_type)

    def unsubscribe(self, topic: str) -> None:
        """Mirrors DefaultMQPushConsumer#unsubscribe: the next rebalance drops its queues."""
        self.default_mq_push_consumer_impl.unsubscribe(topic)

    def register_message_listener(self, listener: Any) -> None:
        """Consume concurrently with ``listener(msgs, context) -> ConsumeConcurrentlyStatus``.

        Mirrors DefaultMQPushConsumer#registerMessageListener(MessageListenerConcurrently).
        """
        self.message_listener = listener
        self.default_mq_push_consumer_impl.register_message_listener(listener, orderly=False)

    def register_message_listener_orderly(self, listener: Any) -> None:
        """Consume orderly with ``listener(msgs, context) -> ConsumeOrderlyStatus``.

        Mirrors DefaultMQPushConsumer#registerMessageListener(MessageListenerOrderly).
        """
        self.message_listener = listener
        self.default_mq_push_consumer_impl.register_message_listener(listener, orderly=True)

    # -- lifecycle --------------------------------------------------------------------------------
    def check_config(self) -> None:
        """Validate the settings as ``start`` does. Mirrors DefaultMQPushConsumerImpl#checkConfig.

        Raises:
            MQClientException: with RocketMQ's message (docs/reference.md §9, §11).
        """
        self.default_mq_push_consumer_impl.check_config()

    def start(self) -> None:
        """Mirrors DefaultMQPushConsumer#start → DefaultMQPushConsumerImpl#start."""
        self.default_mq_push_consumer_impl.start()

    def shutdown(self) -> Task | None:
        """Mirrors DefaultMQPushConsumer#shutdown; the task of DefaultMQPushConsumerImpl#shutdown."""
        return self.default_mq_push_consumer_impl.shutdown()

    def suspend(self) -> None:
        """Pause pulling (pulls retry every 1000 ms). Mirrors DefaultMQPushConsumer#suspend."""
        self.default_mq_push_consumer_impl.suspend()

    def resume(self) -> None:
        """Pull again and rebalance. Mirrors DefaultMQPushConsumer#resume."""
        self.default_mq_push_consumer_impl.resume()

    def update_core_pool_size(self, core_pool_size: int) -> None:
        """Mirrors DefaultMQPushConsumer#updateCorePoolSize."""
        self.default_mq_push_consumer_impl.update_core_pool_size(core_pool_size)

    # -- inspection (the workbench reads these) ----------------------------------------------------
    @property
    def process_queue_table(self) -> dict[MessageQueue, ProcessQueue]:
        """The queues this consumer pulls now, each with its ProcessQueue."""
        return self.default_mq_push_consumer_impl.rebalance_impl.process_queue_table

    @property
    def consumed(self) -> list[ConsumedRecord]:
        """Every message handed to the listener, in order (t_ms, mq, offset, id, reconsume)."""
        return self.default_mq_push_consumer_impl.consumed

    @property
    def stats(self) -> PushConsumerStats:
        """Counters: flow control by kind, pulls by status, consume results, send-backs."""
        return self.default_mq_push_consumer_impl.stats

    @property
    def allocation(self) -> dict[str, list[MessageQueue]]:
        """This consumer's queues per topic after the last rebalance (sorted)."""
        return self.default_mq_push_consumer_impl.rebalance_impl.allocation_table

    @property
    def client_id(self) -> str:
        return self.default_mq_push_consumer_impl.mq_client_factory.client_id
