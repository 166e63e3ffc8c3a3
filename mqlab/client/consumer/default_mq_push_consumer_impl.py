"""The push consumer engine: start, subscribe, checks, send-back, the MQConsumerInner face.

Mirrors ``DefaultMQPushConsumerImpl`` (client/impl/consumer/DefaultMQPushConsumerImpl.java,
RocketMQ 4.9.3): ``start`` / ``shutdown`` / ``checkConfig`` / ``copySubscription``,
``subscribe``, ``sendMessageBack``, ``resetRetryAndNamespace`` and the ``MQConsumerInner``
methods the client instance calls (``groupName``, ``subscriptions``, ``doRebalance``,
``persistConsumerOffset``, ``updateTopicSubscribeInfo`` ...); mechanisms.md "Consumption",
"sendMessageBack"; docs/reference.md §9 (settings), §2.7 (what a push consumer sends at start), §10.7.
The pull loop (``pullMessage`` + ``PullCallback``, mechanisms.md "The consumer's pull loop") is split out into
``default_mq_push_consumer_pull`` and the consume-side helpers (``sendMessageBack``, the
consumed log, counters) into ``default_mq_push_consumer_consume`` (docs/design.md §6.1).

``start`` builds what the settings ask for (offset store: remote for clustering, a local file
for broadcasting; concurrent or orderly consume service), registers the group on the client
instance, then — as one task, in Java's order — refreshes the routes of every subscribed
topic, checks SQL92 subscriptions with the broker (CHECK_CLIENT_CONFIG), heartbeats and wakes
the rebalance service.

What it must not know: how queues are allocated (``RebalancePushImpl``), how messages are
consumed (the consume services), the wire (``PullAPIWrapper``, ``MQClientAPIImpl``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from mqlab.client.consumer.consumer_enums import ConsumeType, MessageModel, ServiceState
from mqlab.client.consumer.default_mq_push_consumer_consume import (
    DEFAULT_MAX_RECONSUME_TIMES,
    SEND_MESSAGE_BACK_TIMEOUT,
    ConsumedRecord,
    ConsumeSupportMixin,
    PushConsumerStats,
)
from mqlab.client.consumer.default_mq_push_consumer_pull import (
    BROKER_SUSPEND_MAX_TIME_MILLIS,
    CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND,
    OFFSET_ILLEGAL_FIX_DELAY,
    PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION,
    PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL,
    PULL_TIME_DELAY_MILLS_WHEN_SUSPEND,
    PullMessageMixin,
)
from mqlab.client.consumer.mq_admin_impl import MQAdminImpl
from mqlab.client.consumer.pull_api_wrapper import PullAPIWrapper
from mqlab.client.consumer.rebalance_impl import NETWORK_ERRORS, parse_consume_timestamp
from mqlab.client.consumer.rebalance_push_impl import RebalancePushImpl
from mqlab.client.exception import MQClientException
from mqlab.client.producer.validators import Validators
from mqlab.common.faq_url import (
    CLIENT_PARAMETER_CHECK_URL,
    CLIENT_SERVICE_NOT_OK,
    GROUP_NAME_DUPLICATE_URL,
    suggest_todo,
)
from mqlab.common.filter_api import ExpressionType, FilterAPI, SubscriptionData
from mqlab.common.message import MessageQueue
from mqlab.common.mix_all import DEFAULT_CONSUMER_GROUP, get_retry_topic, is_retry_topic
from mqlab.runtime.task import Task, spawn
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer

__all__ = [
    "DefaultMQPushConsumerImpl",
    "ServiceState",
    "ConsumedRecord",
    "PushConsumerStats",
    "PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION",
    "PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL",
    "PULL_TIME_DELAY_MILLS_WHEN_SUSPEND",
    "BROKER_SUSPEND_MAX_TIME_MILLIS",
    "CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND",
    "OFFSET_ILLEGAL_FIX_DELAY",
    "SEND_MESSAGE_BACK_TIMEOUT",
    "DEFAULT_MAX_RECONSUME_TIMES",
]

Gen = Generator[Any, Any, Any]
C = "DefaultMQPushConsumerImpl"


class DefaultMQPushConsumerImpl(PullMessageMixin, ConsumeSupportMixin):
    """Mirrors ``DefaultMQPushConsumerImpl`` (client/impl/consumer, RocketMQ 4.9.3).

    The pull loop (``pullMessage`` and its ``PullCallback``) is ``PullMessageMixin``
    (``default_mq_push_consumer_pull``); ``sendMessageBack`` and the consumed log are
    ``ConsumeSupportMixin`` (``default_mq_push_consumer_consume``).

    Args:
        default_mq_push_consumer: the facade holding the settings.
        mq_client_factory: the ``MQClientInstance`` the consumer runs on.
    """

    def __init__(self, default_mq_push_consumer: DefaultMQPushConsumer, mq_client_factory: Any):
        self.default_mq_push_consumer = default_mq_push_consumer
        self.mq_client_factory = mq_client_factory
        dpc = default_mq_push_consumer
        self.rebalance_impl = RebalancePushImpl(
            self, dpc.consumer_group, dpc.message_model, dpc.allocate_message_queue_strategy,
            mq_client_factory,
        )  # fmt: skip
        self.mq_admin_impl = MQAdminImpl(mq_client_factory)
        self.service_state = ServiceState.CREATE_JUST
        self.shutdown_task: Task | None = None
        self.pull_api_wrapper: PullAPIWrapper | None = None
        self.pause = False
        self.consume_orderly = False
        self.message_listener_inner: Any = None
        self._listener_orderly: bool | None = None
        self.offset_store: Any = None
        self.consume_message_service: Any = None
        self.pull_time_delay_mills_when_exception = dpc.pull_time_delay_mills_when_exception
        self.stats = PushConsumerStats()
        self.consumed: list[ConsumedRecord] = []
        #: ``consumerStartTimestamp``: Java's field initializer (construction time);
        #: ConsumerRunningInfo's PROP_CONSUMER_START_TIMESTAMP.
        self.consumer_start_timestamp: int = (
            mq_client_factory.ctx.now_ms if getattr(mq_client_factory, "attached", False) else 0
        )
        #: The SQL92 check at start (CHECK_CLIENT_CONFIG) failed: Java's start() throws it.
        self.check_client_error: MQClientException | None = None

    # -- context ---------------------------------------------------------------------------------
    @property
    def ctx(self):
        return self.mq_client_factory.ctx

    @property
    def tracer(self):
        return self.mq_client_factory.tracer

    def _emit(self, component: str, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        if getattr(self.mq_client_factory, "ctx", None) is None:
            return  # not on a driver yet (subscribe before the instance is added)
        tracer = self.tracer
        if tracer.enabled:
            tracer.emit(component, step, kind, group=self.group_name(), **fields)

    # -- MQConsumerInner --------------------------------------------------------------------------
    def group_name(self) -> str:
        return self.default_mq_push_consumer.consumer_group

    def message_model(self) -> str:
        return MessageModel(self.default_mq_push_consumer.message_model).value

    def consume_type(self) -> str:
        return ConsumeType.CONSUME_PASSIVELY.value

    def consume_from_where(self) -> str:
        return str(self.default_mq_push_consumer.consume_from_where)

    def subscriptions(self) -> list[SubscriptionData]:
        return list(self.rebalance_impl.subscription_inner.values())

    def is_unit_mode(self) -> bool:
        return bool(self.default_mq_push_consumer.unit_mode)

    def do_rebalance(self) -> None:
        """Mirrors DefaultMQPushConsumerImpl#doRebalance: not while paused (mechanisms.md "Rebalancing" span 2)."""
        if not self.pause:
            self.rebalance_impl.do_rebalance(self.consume_orderly)

    def persist_consumer_offset(self) -> None:
        """Commit the offsets of the queues this consumer holds. Mirrors #persistConsumerOffset."""
        if self.service_state is not ServiceState.RUNNING:
            return
        self.offset_store.persist_all(set(self.rebalance_impl.process_queue_table))

    def update_topic_subscribe_info(self, topic: str, info: set[MessageQueue]) -> None:
        """Mirrors DefaultMQPushConsumerImpl#updateTopicSubscribeInfo."""
        if topic in self.rebalance_impl.subscription_inner:
            self.rebalance_impl.topic_subscribe_info_table[topic] = set(info)

    def is_subscribe_topic_need_update(self, topic: str) -> bool:
        """Mirrors DefaultMQPushConsumerImpl#isSubscribeTopicNeedUpdate."""
        ri = self.rebalance_impl
        return topic in ri.subscription_inner and topic not in ri.topic_subscribe_info_table

    # -- configuration ----------------------------------------------------------------------------
    def register_message_listener(self, listener: Any, *, orderly: bool) -> None:
        """Mirrors DefaultMQPushConsumerImpl#registerMessageListener."""
        self.message_listener_inner = listener
        self._listener_orderly = orderly

    def subscribe(self, topic: str, sub_expression: str | None, expression_type: str) -> None:
        """Add or replace the subscription of ``topic``; heartbeat if running.

        Mirrors DefaultMQPushConsumerImpl#subscribe (RocketMQ 4.9.3); mechanisms.md "Rebalancing" "subscribe"
        lines 3–10 (FilterAPI.buildSubscriptionData, then a heartbeat).

        Raises:
            MQClientException: "subscription exception".
        """
        try:
            sd = FilterAPI.build_subscription_data(
                topic, sub_expression, expression_type, self._now()
            )
        except ValueError as e:
            raise MQClientException(-1, "subscription exception") from e
        self.rebalance_impl.subscription_inner[topic] = sd
        self._emit(C + ".subscribe", "3-6", topic=topic, expression=sd.sub_string,
                   expression_type=sd.expression_type, tags=list(sd.tags_set),
                   codes=list(sd.code_set),
                   text=f"subscribe {topic} with {sd.expression_type} {sd.sub_string!r}"
                   + (f": tags {list(sd.tags_set)}, hash codes {list(sd.code_set)}"
                      if sd.tags_set else ""))  # fmt: skip
        if self.service_state is ServiceState.RUNNING:
            # mechanisms.md "Rebalancing" span 7-10: tell the brokers through a heartbeat
            self.mq_client_factory.send_heartbeat_to_all_broker_with_lock()

    def unsubscribe(self, topic: str) -> None:
        """Mirrors DefaultMQPushConsumerImpl#unsubscribe."""
        self.rebalance_impl.subscription_inner.pop(topic, None)

    def _now(self) -> int:
        ctx = getattr(self.mq_client_factory, "ctx", None)
        return ctx.now_ms if ctx is not None else 0

    def check_config(self) -> None:
        """Validate every setting with RocketMQ's messages.

        Mirrors DefaultMQPushConsumerImpl#checkConfig (client/impl/consumer, RocketMQ 4.9.3);
        docs/reference.md §9 (ranges), §11 (DefaultMQPushConsumerTest).

        Raises:
            MQClientException: code −1 and Java's text (plus the FAQ hint).
        """
        dpc = self.default_mq_push_consumer
        hint = suggest_todo(CLIENT_PARAMETER_CHECK_URL)

        def fail(text: str, with_hint: bool = True) -> None:
            raise MQClientException(-1, text + (hint if with_hint else ""))

        Validators.check_group(dpc.consumer_group)
        if dpc.consumer_group is None:
            fail("consumerGroup is null")
        if dpc.consumer_group == DEFAULT_CONSUMER_GROUP:
            fail(
                f"consumerGroup can not equal {DEFAULT_CONSUMER_GROUP}, please specify another one."
            )
        if dpc.message_model is None:
            fail("messageModel is null")
        if dpc.consume_from_where is None:
            fail("consumeFromWhere is null")
        try:
            parse_consume_timestamp(dpc.consume_timestamp)
        except ValueError:
            fail(
                "consumeTimestamp is invalid, the valid format is yyyyMMddHHmmss,but received "
                f"{dpc.consume_timestamp} "
            )
        if dpc.allocate_message_queue_strategy is None:
            fail("allocateMessageQueueStrategy is null")
        if dpc.subscription is None:
            fail("subscription is null")
        if dpc.message_listener is None:
            fail("messageListener is null")
        listener = dpc.message_listener
        if not (callable(listener) or callable(getattr(listener, "consume_message", None))):
            fail(
                "messageListener must be instanceof MessageListenerOrderly or "
                "MessageListenerConcurrently"
            )
        if not 1 <= dpc.consume_thread_min <= 1000:
            fail("consumeThreadMin Out of range [1, 1000]")
        if not 1 <= dpc.consume_thread_max <= 1000:
            fail("consumeThreadMax Out of range [1, 1000]")
        if dpc.consume_thread_min > dpc.consume_thread_max:
            fail(
                f"consumeThreadMin ({dpc.consume_thread_min}) is larger than consumeThreadMax "
                f"({dpc.consume_thread_max})",
                with_hint=False,
            )
        if not 1 <= dpc.consume_concurrently_max_span <= 65535:
            fail("consumeConcurrentlyMaxSpan Out of range [1, 65535]")
        if not 1 <= dpc.pull_threshold_for_queue <= 65535:
            fail("pullThresholdForQueue Out of range [1, 65535]")
        if dpc.pull_threshold_for_topic != -1 and not 1 <= dpc.pull_threshold_for_topic <= 6553500:
            fail("pullThresholdForTopic Out of range [1, 6553500]")
        if not 1 <= dpc.pull_threshold_size_for_queue <= 1024:
            fail("pullThresholdSizeForQueue Out of range [1, 1024]")
        if dpc.pull_threshold_size_for_topic != -1 and not (
            1 <= dpc.pull_threshold_size_for_topic <= 102400
        ):
            fail("pullThresholdSizeForTopic Out of range [1, 102400]")
        if not 0 <= dpc.pull_interval <= 65535:
            fail("pullInterval Out of range [0, 65535]")
        if not 1 <= dpc.consume_message_batch_max_size <= 1024:
            fail("consumeMessageBatchMaxSize Out of range [1, 1024]")
        if not 1 <= dpc.pull_batch_size <= 1024:
            fail("pullBatchSize Out of range [1, 1024]")

    def copy_subscription(self) -> None:
        """Subscriptions from the settings map, the listener, and ``%RETRY%<group>``.

        Mirrors DefaultMQPushConsumerImpl#copySubscription (RocketMQ 4.9.3): a clustering
        consumer also subscribes its retry topic with ``*`` (docs/reference.md §10.11).
        """
        dpc = self.default_mq_push_consumer
        now = self._now()
        try:
            for topic, sub_string in (dpc.subscription or {}).items():
                sd = FilterAPI.build_subscription_data(topic, sub_string, ExpressionType.TAG, now)
                self.rebalance_impl.subscription_inner[topic] = sd
        except ValueError as e:
            raise MQClientException(-1, "subscription exception") from e
        if self.message_listener_inner is None:
            self.message_listener_inner = dpc.message_listener
        if MessageModel(dpc.message_model) is MessageModel.CLUSTERING:
            retry_topic = get_retry_topic(dpc.consumer_group)
            self.rebalance_impl.subscription_inner[retry_topic] = FilterAPI.build_subscription_data(
                retry_topic, SubscriptionData.SUB_ALL, None, now
            )

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        """Build the offset store and consume service, register, then route → heartbeat → rebalance.

        Mirrors DefaultMQPushConsumerImpl#start (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md
        §2.7 (what a Java push consumer sends at start). The client instance must already be
        on a driver (its ``on_start`` is Java's ``mQClientFactory.start()``). The route
        look-ups, the SQL92 check (CHECK_CLIENT_CONFIG), the heartbeat and the first
        rebalance run in that order as one task, as Java runs them after ``start``'s switch.

        Raises:
            MQClientException: bad settings, a group already on this client, or started twice.
            ValueError: the client instance is not on a running driver.
        """
        from mqlab.client.consumer.offset_store import LocalFileOffsetStore, RemoteBrokerOffsetStore

        dpc = self.default_mq_push_consumer
        factory = self.mq_client_factory
        if self.service_state is not ServiceState.CREATE_JUST:
            raise MQClientException(
                -1,
                "The PushConsumer service state not OK, maybe started once, "
                f"{self.service_state.value}{suggest_todo(CLIENT_SERVICE_NOT_OK)}",
            )
        if getattr(factory, "ctx", None) is None or not factory.running:
            raise ValueError(
                f"instance {factory!r} must be added to a running driver before start()"
            )
        self.service_state = ServiceState.START_FAILED
        self.check_config()
        self.copy_subscription()
        ri = self.rebalance_impl
        ri.consumer_group = dpc.consumer_group
        ri.message_model = MessageModel(dpc.message_model)
        ri.allocate_message_queue_strategy = dpc.allocate_message_queue_strategy
        self.pull_api_wrapper = PullAPIWrapper(factory, dpc.consumer_group, self.is_unit_mode())
        if dpc.offset_store is not None:
            self.offset_store = dpc.offset_store
        elif MessageModel(dpc.message_model) is MessageModel.BROADCASTING:
            self.offset_store = LocalFileOffsetStore(
                factory, dpc.consumer_group, dpc.local_offset_store_dir
            )
        else:
            self.offset_store = RemoteBrokerOffsetStore(factory, dpc.consumer_group)
        dpc.offset_store = self.offset_store
        self.offset_store.load()
        orderly = bool(self._listener_orderly)
        if orderly:
            from mqlab.client.consumer.consume_message_orderly_service import (
                ConsumeMessageOrderlyService,
            )

            self.consume_orderly = True
            self.consume_message_service = ConsumeMessageOrderlyService(
                self, self.message_listener_inner
            )
        else:
            from mqlab.client.consumer.consume_message_concurrently_service import (
                ConsumeMessageConcurrentlyService,
            )

            self.consume_orderly = False
            self.consume_message_service = ConsumeMessageConcurrentlyService(
                self, self.message_listener_inner
            )
        self.consume_message_service.start()
        if not factory.register_consumer(dpc.consumer_group, self):
            self.service_state = ServiceState.CREATE_JUST
            self.consume_message_service.shutdown(dpc.await_termination_millis_when_shutdown)
            raise MQClientException(
                -1,
                f"The consumer group[{dpc.consumer_group}] has been created before, specify "
                f"another name please.{suggest_todo(GROUP_NAME_DUPLICATE_URL)}",
            )
        self.service_state = ServiceState.RUNNING
        self._emit(
            C + ".start", "start", Kind.STATE, message_model=self.message_model(),
            consume_orderly=orderly, subscriptions=sorted(ri.subscription_inner),
            text=f"push consumer {dpc.consumer_group} started ({self.message_model()}, "
            f"{'orderly' if orderly else 'concurrently'}) on {factory.client_id}",
        )  # fmt: skip
        spawn(self.ctx, self._after_start(), name=C + ".start", on_done=self._task_failed)

    def _after_start(self) -> Gen:
        """Java's tail of ``start``: routes, checkClientInBroker, heartbeat, rebalance now."""
        factory = self.mq_client_factory
        # updateTopicSubscribeInfoWhenSubscriptionChanged
        for topic in list(self.rebalance_impl.subscription_inner):
            try:
                yield from factory.update_topic_route_info_from_name_server(topic)
            except NETWORK_ERRORS as e:
                self._emit(C + ".start", "route", Kind.ERROR, topic=topic, error=str(e))
        yield from self.check_client_in_broker()
        factory.send_heartbeat_to_all_broker_with_lock()
        factory.rebalance_immediately()

    def check_client_in_broker(self) -> Gen:
        """CHECK_CLIENT_CONFIG for each SQL92 subscription of every consumer on the instance.

        Mirrors MQClientInstance#checkClientInBroker (client/impl/factory, RocketMQ 4.9.3);
        docs/reference.md §2.7 step 2. Java checks the whole ``consumerTable`` (so a consumer's start also
        reports another group's refused subscription), stops at the first failure, and stops
        altogether at a consumer without subscriptions (``return``, MQClientInstance.java:437).
        Java's ``start()`` throws the failure after the consumer is already running; here it
        is kept in ``check_client_error`` and traced.
        """
        from mqlab.remoting.codes import RequestCode, ResponseCode
        from mqlab.remoting.command import RemotingCommand
        from mqlab.remoting.fastjson import dumps
        from mqlab.runtime.task import Rpc

        factory = self.mq_client_factory
        for group, consumer in sorted(factory.consumer_table.items()):
            subscription_inner = consumer.subscriptions()
            if not subscription_inner:
                return
            for sd in subscription_inner:
                if ExpressionType.is_tag_type(sd.expression_type):
                    continue
                addr = factory.find_broker_addr_by_topic(sd.topic)
                if addr is None:
                    continue
                body = dumps({"clientId": factory.client_id, "group": group,
                              "subscriptionData": sd.to_json_dict()}).encode()  # fmt: skip
                request = RemotingCommand.create_request(
                    RequestCode.CHECK_CLIENT_CONFIG, None, body
                )
                try:
                    response = yield Rpc(addr, request, factory.client_config.mq_client_api_timeout)
                except NETWORK_ERRORS as e:
                    error = MQClientException(
                        -1,
                        "Check client in broker error, maybe because you use "
                        f"{sd.expression_type} to filter message, but server has not been "
                        "upgraded to support!This error would not affect the launch of consumer, "
                        "but may has impact on message receiving if you have use the new "
                        "features which are not supported by server, please check the log!",
                    )
                    error.__cause__ = e
                else:
                    if response.code == ResponseCode.SUCCESS:
                        continue
                    error = MQClientException(response.code, response.remark or "")
                self.check_client_error = error
                self._emit(C + ".checkClientInBroker", "check", Kind.ERROR, topic=sd.topic,
                           checked_group=group, code=error.response_code, error=str(error),
                           cause=None if error.__cause__ is None else str(error.__cause__),
                           text=f"CHECK_CLIENT_CONFIG of group {group}'s {sd.expression_type} "
                           f"{sd.sub_string!r} on {addr} failed: {error}")  # fmt: skip
                return

    def _task_failed(self, task: Any) -> None:
        if task.error is not None:
            raise task.error

    def shutdown(self) -> Task | None:
        """Stop consuming, commit offsets, unregister from the brokers.

        Mirrors DefaultMQPushConsumerImpl#shutdown (client/impl/consumer, RocketMQ 4.9.3),
        run as a task (``shutdown_steps``): Java's call blocks until the offsets are
        committed (a route refresh first when the route has no master) and every broker
        has answered UNREGISTER_CLIENT. Returns the task, or None when the consumer is not
        running.
        The client instance keeps running (other clients may share it); stop its node to
        stop it.
        """
        if self.service_state is not ServiceState.RUNNING:
            return None
        if self.shutdown_task is None or self.shutdown_task.done:
            self.shutdown_task = spawn(
                self.ctx, self.shutdown_steps(), name=C + ".shutdown",
                on_done=self._shutdown_failed,
            )  # fmt: skip
        return self.shutdown_task

    def shutdown_steps(self) -> Gen:
        """The steps of ``#shutdown``, in Java's order; ``yield from`` it to wait for them.

        1. the consume service stops (queued consume requests dropped);
        2. ``persistConsumerOffset``: each held queue's offset committed in turn
           (``RemoteBrokerOffsetStore#persistAll``, waiting for any route refresh);
        3. ``unregisterConsumer``: UNREGISTER_CLIENT to every broker node of the route,
           one after the other, each answer awaited;
        4. the rebalance forgets its queues, and the state is SHUTDOWN_ALREADY.
        """
        if self.service_state is not ServiceState.RUNNING:
            return
        dpc = self.default_mq_push_consumer
        self.consume_message_service.shutdown(dpc.await_termination_millis_when_shutdown)
        yield from self.offset_store.persist_all_blocking(
            set(self.rebalance_impl.process_queue_table)
        )
        yield from self.mq_client_factory.unregister_consumer(dpc.consumer_group)
        self.rebalance_impl.destroy()
        self.service_state = ServiceState.SHUTDOWN_ALREADY
        self._emit(C + ".shutdown", "shutdown", Kind.STATE,
                   text=f"push consumer {dpc.consumer_group} shut down")  # fmt: skip

    def _shutdown_failed(self, task: Task) -> None:
        if task.error is not None:
            self._emit(C + ".shutdown", "exception", Kind.ERROR, error=repr(task.error),
                       text=f"shutdown of {self.default_mq_push_consumer.consumer_group} "
                       f"failed: {task.error}")  # fmt: skip

    def suspend(self) -> None:
        """Mirrors DefaultMQPushConsumerImpl#suspend."""
        self.pause = True
        self._emit(C + ".suspend", "suspend", Kind.STATE, text="consumer paused")

    def resume(self) -> None:
        """Mirrors DefaultMQPushConsumerImpl#resume."""
        self.pause = False
        self.do_rebalance()
        self._emit(C + ".resume", "resume", Kind.STATE, text="consumer resumed")

    def update_core_pool_size(self, core_pool_size: int) -> None:
        """Mirrors ConsumeMessage*Service#updateCorePoolSize (0 < n < consumeThreadMax)."""
        if 0 < core_pool_size < self.default_mq_push_consumer.consume_thread_max:
            self.consume_message_service.consume_executor.set_core_pool_size(core_pool_size)

    # -- look-ups ----------------------------------------------------------------------------------
    def fetch_subscribe_message_queues(self, topic: str) -> Gen:
        """The readable queues of ``topic`` (cached, else from the name server).

        Mirrors DefaultMQPushConsumerImpl#fetchSubscribeMessageQueues.
        """
        result = self.rebalance_impl.topic_subscribe_info_table.get(topic)
        if result is None:
            yield from self.mq_client_factory.update_topic_route_info_from_name_server(topic)
            result = self.rebalance_impl.topic_subscribe_info_table.get(topic)
        if result is None:
            raise MQClientException(-1, f"The topic[{topic}] not exist")
        return set(result)

    def is_retry(self, mq: MessageQueue) -> bool:
        return is_retry_topic(mq.topic)
