"""The pull consumer engine: start, check, pull at an offset, offsets, queue look-ups.

Mirrors ``DefaultMQPullConsumerImpl`` (client/impl/consumer/DefaultMQPullConsumerImpl.java,
RocketMQ 4.9.3): ``start`` / ``shutdown`` / ``checkConfig``, ``pullSyncImpl`` /
``pullAsyncImpl`` (one PULL_MESSAGE, SUBSCRIPTION flag, SUSPEND only when blocking),
``subscriptionAutomatically``, ``fetchSubscribeMessageQueues`` /
``fetchMessageQueuesInBalance``, ``updateConsumeOffset`` / ``fetchConsumeOffset``,
``sendMessageBack`` and the ``MQConsumerInner`` methods; mechanisms.md "The consumer's pull loop" ("PullAPIWrapper#
pullKernelImpl" serves both consumers), mechanisms.md "Rebalancing" (``RebalancePullImpl``); docs/reference.md §2.2, §10.12.

Sans-IO: what needs the network returns a ``ConsumerFuture`` (defined here) completed in
virtual time; argument and state errors raise ``MQClientException`` at once, as Java checks
them before any I/O.

What it must not know: the facade's conveniences (``DefaultMQPullConsumer``), consumption.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from mqlab.client.consumer.consumer_enums import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    ServiceState,
)
from mqlab.client.consumer.default_mq_push_consumer import MessageSelector
from mqlab.client.consumer.mq_admin_impl import MQAdminImpl
from mqlab.client.consumer.pull_api_wrapper import PullAPIWrapper
from mqlab.client.consumer.rebalance_impl import NETWORK_ERRORS
from mqlab.client.consumer.rebalance_pull_impl import RebalancePullImpl
from mqlab.client.exception import MQClientException
from mqlab.client.producer.send_future import CommunicationMode
from mqlab.client.producer.validators import Validators
from mqlab.common import message_const as mc
from mqlab.common.faq_url import (
    CLIENT_PARAMETER_CHECK_URL,
    CLIENT_SERVICE_NOT_OK,
    GROUP_NAME_DUPLICATE_URL,
    suggest_todo,
)
from mqlab.common.filter_api import ExpressionType, FilterAPI, SubscriptionData
from mqlab.common.message import Message, MessageExt, MessageQueue
from mqlab.common.mix_all import DEFAULT_CONSUMER_GROUP, get_retry_topic
from mqlab.common.sysflag import PullSysFlag
from mqlab.runtime.task import Task, spawn
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.consumer.default_mq_pull_consumer import DefaultMQPullConsumer

__all__ = ["DefaultMQPullConsumerImpl", "ConsumerFuture"]

Gen = Generator[Any, Any, Any]
C = "DefaultMQPullConsumerImpl"


class ConsumerFuture:
    """A consumer call in flight; completes in virtual time (like the producer's SendFuture).

    Attributes:
        done: finished (successfully or not).
        result: the value (a ``PullResult``, an offset, a set of queues ...).
        error: the exception Java would have thrown / passed to ``onException``.
    """

    __slots__ = ("done", "result", "error", "task", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.task: Task | None = None

    def get(self) -> Any:
        """The result, or raise the error.

        Raises:
            RuntimeError: not done yet (step or advance the driver first).
        """
        if not self.done:
            raise RuntimeError(f"{self.name} has not completed yet: step or advance the driver")
        if self.error is not None:
            raise self.error
        return self.result

    def __repr__(self) -> str:
        state = "pending" if not self.done else ("error" if self.error else "done")
        return f"ConsumerFuture({self.name}, {state}, result={self.result}, error={self.error!r})"


class DefaultMQPullConsumerImpl:
    """Mirrors ``DefaultMQPullConsumerImpl`` (client/impl/consumer, RocketMQ 4.9.3)."""

    def __init__(self, default_mq_pull_consumer: DefaultMQPullConsumer, mq_client_factory: Any):
        self.default_mq_pull_consumer = default_mq_pull_consumer
        self.mq_client_factory = mq_client_factory
        d = default_mq_pull_consumer
        self.rebalance_impl = RebalancePullImpl(
            self, d.consumer_group, d.message_model, d.allocate_message_queue_strategy,
            mq_client_factory,
        )  # fmt: skip
        self.mq_admin_impl = MQAdminImpl(mq_client_factory)
        self.service_state = ServiceState.CREATE_JUST
        self.pull_api_wrapper: PullAPIWrapper | None = None
        self.offset_store: Any = None

    @property
    def ctx(self):
        return self.mq_client_factory.ctx

    def _emit(self, method: str, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        tracer = self.mq_client_factory.tracer
        if tracer.enabled:
            tracer.emit(f"{C}.{method}", step, kind, group=self.group_name(), **fields)

    # -- MQConsumerInner -------------------------------------------------------------------------
    def group_name(self) -> str:
        return self.default_mq_pull_consumer.consumer_group

    def message_model(self) -> str:
        return MessageModel(self.default_mq_pull_consumer.message_model).value

    def consume_type(self) -> str:
        return ConsumeType.CONSUME_ACTIVELY.value

    def consume_from_where(self) -> str:
        return ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET.value

    def subscriptions(self) -> list[SubscriptionData]:
        """``*`` for each registered topic, subVersion 0. Mirrors #subscriptions."""
        result = []
        for topic in sorted(self.default_mq_pull_consumer.register_topics):
            sd = FilterAPI.build_subscription_data(topic, SubscriptionData.SUB_ALL)
            sd.sub_version = 0
            result.append(sd)
        return result

    def is_unit_mode(self) -> bool:
        return bool(self.default_mq_pull_consumer.unit_mode)

    def do_rebalance(self) -> None:
        self.rebalance_impl.do_rebalance(False)

    def persist_consumer_offset(self) -> None:
        """Persist the offsets of the allocated queues. Mirrors #persistConsumerOffset."""
        if self.service_state is ServiceState.RUNNING:
            self.offset_store.persist_all(set(self.rebalance_impl.process_queue_table))

    def update_topic_subscribe_info(self, topic: str, info: set[MessageQueue]) -> None:
        if topic in self.rebalance_impl.subscription_inner:
            self.rebalance_impl.topic_subscribe_info_table[topic] = set(info)

    def is_subscribe_topic_need_update(self, topic: str) -> bool:
        ri = self.rebalance_impl
        return topic in ri.subscription_inner and topic not in ri.topic_subscribe_info_table

    def shutdown(self) -> Task | None:
        """Mirrors DefaultMQPullConsumerImpl#shutdown, as a task (``shutdown_steps``).

        Java's call blocks until the offsets are committed (a route refresh first when the
        route has no master) and every broker has answered UNREGISTER_CLIENT. None: not
        running.
        """
        if self.service_state is not ServiceState.RUNNING:
            return None
        return spawn(self.ctx, self.shutdown_steps(), name=C + ".shutdown",
                     on_done=self.mq_client_factory._done(C + ".shutdown"))  # fmt: skip

    def shutdown_steps(self) -> Gen:
        """``persistConsumerOffset`` (each queue in turn, waiting), then ``unregisterConsumer``."""
        if self.service_state is not ServiceState.RUNNING:
            return
        yield from self.offset_store.persist_all_blocking(
            set(self.rebalance_impl.process_queue_table)
        )
        yield from self.mq_client_factory.unregister_consumer(self.group_name())
        self.service_state = ServiceState.SHUTDOWN_ALREADY

    # -- start ------------------------------------------------------------------------------------
    def check_config(self) -> None:
        """Mirrors DefaultMQPullConsumerImpl#checkConfig (RocketMQ 4.9.3)."""
        d = self.default_mq_pull_consumer
        hint = suggest_todo(CLIENT_PARAMETER_CHECK_URL)
        Validators.check_group(d.consumer_group)
        if d.consumer_group == DEFAULT_CONSUMER_GROUP:
            raise MQClientException(
                -1,
                f"consumerGroup can not equal {DEFAULT_CONSUMER_GROUP}, please specify another "
                f"one.{hint}",
            )
        if d.message_model is None:
            raise MQClientException(-1, "messageModel is null" + hint)
        if d.allocate_message_queue_strategy is None:
            raise MQClientException(-1, "allocateMessageQueueStrategy is null" + hint)
        if d.consumer_timeout_millis_when_suspend < d.broker_suspend_max_time_millis:
            raise MQClientException(
                -1,
                "Long polling mode, the consumer consumerTimeoutMillisWhenSuspend must greater "
                "than brokerSuspendMaxTimeMillis" + hint,
            )

    def start(self) -> None:
        """Mirrors DefaultMQPullConsumerImpl#start (RocketMQ 4.9.3).

        Raises:
            MQClientException: bad settings, group taken, or started twice.
            ValueError: the client instance is not on a running driver.
        """
        from mqlab.client.consumer.offset_store import LocalFileOffsetStore, RemoteBrokerOffsetStore

        d = self.default_mq_pull_consumer
        factory = self.mq_client_factory
        if self.service_state is not ServiceState.CREATE_JUST:
            raise MQClientException(
                -1,
                "The PullConsumer service state not OK, maybe started once, "
                f"{self.service_state.value}{suggest_todo(CLIENT_SERVICE_NOT_OK)}",
            )
        if getattr(factory, "ctx", None) is None or not factory.running:
            raise ValueError(
                f"instance {factory!r} must be added to a running driver before start()"
            )
        self.service_state = ServiceState.START_FAILED
        self.check_config()
        for topic in sorted(d.register_topics):  # copySubscription
            self.rebalance_impl.subscription_inner[topic] = FilterAPI.build_subscription_data(
                topic, SubscriptionData.SUB_ALL, None, self.ctx.now_ms
            )
        ri = self.rebalance_impl
        ri.consumer_group = d.consumer_group
        ri.message_model = MessageModel(d.message_model)
        ri.allocate_message_queue_strategy = d.allocate_message_queue_strategy
        self.pull_api_wrapper = PullAPIWrapper(factory, d.consumer_group, self.is_unit_mode())
        if d.offset_store is not None:
            self.offset_store = d.offset_store
        elif MessageModel(d.message_model) is MessageModel.BROADCASTING:
            self.offset_store = LocalFileOffsetStore(
                factory, d.consumer_group, d.local_offset_store_dir
            )
        else:
            self.offset_store = RemoteBrokerOffsetStore(factory, d.consumer_group)
        d.offset_store = self.offset_store
        self.offset_store.load()
        if not factory.register_consumer(d.consumer_group, self):
            self.service_state = ServiceState.CREATE_JUST
            raise MQClientException(
                -1,
                f"The consumer group[{d.consumer_group}] has been created before, specify "
                f"another name please.{suggest_todo(GROUP_NAME_DUPLICATE_URL)}",
            )
        self.service_state = ServiceState.RUNNING
        self._emit("start", "start", Kind.STATE, register_topics=sorted(d.register_topics),
                   text=f"pull consumer {d.consumer_group} started on {factory.client_id}")  # fmt: skip
        factory.send_heartbeat_to_all_broker_with_lock()

    def _is_running(self) -> None:
        if self.service_state is not ServiceState.RUNNING:
            raise MQClientException(
                -1,
                f"The consumer is not in running status, {self.service_state.value}"
                f"{suggest_todo(CLIENT_SERVICE_NOT_OK)}",
            )

    def _future(self, name: str, gen: Gen, callback: Any = None) -> ConsumerFuture:
        fut = ConsumerFuture(name)

        def on_done(task: Task) -> None:
            fut.done = True
            fut.result = task.result
            fut.error = task.error
            if callback is not None:
                callback(task.result if task.error is None else None, task.error)

        fut.task = spawn(self.ctx, gen, name=f"{C}.{name}", on_done=on_done)
        return fut

    # -- queues and offsets ---------------------------------------------------------------------
    def fetch_subscribe_message_queues(self, topic: str) -> ConsumerFuture:
        """Mirrors DefaultMQPullConsumerImpl#fetchSubscribeMessageQueues."""
        self._is_running()

        def gen() -> Gen:
            result = self.rebalance_impl.topic_subscribe_info_table.get(topic)
            if result is None:
                result = yield from self.mq_admin_impl.fetch_subscribe_message_queues(topic)
            return set(result)

        return self._future("fetchSubscribeMessageQueues", gen())

    def fetch_message_queues_in_balance(self, topic: str) -> set[MessageQueue]:
        """Mirrors DefaultMQPullConsumerImpl#fetchMessageQueuesInBalance.

        Raises:
            ValueError: ``topic`` is None ("topic is null").
        """
        self._is_running()
        if topic is None:
            raise ValueError("topic is null")
        return {mq for mq in self.rebalance_impl.process_queue_table if mq.topic == topic}

    def update_consume_offset(self, mq: MessageQueue, offset: int) -> None:
        """Mirrors DefaultMQPullConsumerImpl#updateConsumeOffset (memory, overwrite)."""
        self._is_running()
        self.offset_store.update_offset(mq, offset, False)
        self._emit("updateConsumeOffset", "offset", mq=str(mq), offset=offset,
                   text=f"consume offset of {mq} := {offset} (memory; persisted every 5 s "
                   "while the queue is allocated)")  # fmt: skip

    def fetch_consume_offset(self, mq: MessageQueue, from_store: bool) -> ConsumerFuture:
        """Mirrors DefaultMQPullConsumerImpl#fetchConsumeOffset."""
        from mqlab.client.consumer.offset_store import ReadOffsetType

        self._is_running()
        kind = (
            ReadOffsetType.READ_FROM_STORE if from_store else ReadOffsetType.MEMORY_FIRST_THEN_STORE
        )
        return self._future("fetchConsumeOffset", self.offset_store.read_offset(mq, kind))

    def admin(self, method: str, mq: MessageQueue, *args: Any) -> ConsumerFuture:
        """``maxOffset`` / ``minOffset`` / ``searchOffset`` / ``earliestMsgStoreTime``."""
        self._is_running()
        return self._future(method, getattr(self.mq_admin_impl, method)(mq, *args))

    # -- pull -----------------------------------------------------------------------------------------
    def _subscription_data(
        self, mq: MessageQueue | None, sub_expression: str | MessageSelector | None
    ) -> SubscriptionData:
        """Mirrors DefaultMQPullConsumerImpl#getSubscriptionData (both overloads)."""
        if mq is None:
            raise MQClientException(-1, "mq is null")
        try:
            if isinstance(sub_expression, MessageSelector):
                return FilterAPI.build_subscription_data(
                    mq.topic, sub_expression.expression, sub_expression.expression_type,
                    self.ctx.now_ms,
                )  # fmt: skip
            return FilterAPI.build_subscription_data(mq.topic, sub_expression)
        except ValueError as e:
            raise MQClientException(-1, "parse subscription error") from e

    def pull(
        self,
        mq: MessageQueue,
        sub_expression: str | MessageSelector | None,
        offset: int,
        max_nums: int,
        *,
        block: bool,
        timeout: int | None,
        callback: Any = None,
    ) -> ConsumerFuture:
        """Validate now, pull in virtual time.

        Mirrors DefaultMQPullConsumerImpl#pullSyncImpl / #pullAsyncImpl (RocketMQ 4.9.3):
        sysFlag = SUBSCRIPTION (+ SUSPEND when blocking), no commit offset, timeout
        ``consumer_pull_timeout_millis`` (blocking: ``consumer_timeout_millis_when_suspend``).

        Raises:
            MQClientException: not running, "mq is null", "offset < 0", "maxNums <= 0",
                "parse subscription error".
        """
        d = self.default_mq_pull_consumer
        sd = self._subscription_data(mq, sub_expression)
        self._is_running()
        if offset < 0:
            raise MQClientException(-1, "offset < 0")
        if max_nums <= 0:
            raise MQClientException(-1, "maxNums <= 0")
        self.subscription_automatically(mq.topic)
        sys_flag = PullSysFlag.build_sys_flag(False, block, True, False)
        timeout_millis = (
            d.consumer_timeout_millis_when_suspend
            if block
            else (timeout if timeout is not None else d.consumer_pull_timeout_millis)
        )
        is_tag = ExpressionType.is_tag_type(sd.expression_type)
        self._emit(
            "pull", "pull", mq=str(mq), offset=offset, max_nums=max_nums, sys_flag=sys_flag,
            expression=sd.sub_string, expression_type=sd.expression_type, block=block,
            text=f"pull {mq.topic}/{mq.broker_name}/{mq.queue_id} at offset {offset} (up to "
            f"{max_nums}, {sd.expression_type} {sd.sub_string!r}"
            + (", block if not found" if block else "") + ")",
        )  # fmt: skip

        def gen() -> Gen:
            result = yield from self.pull_api_wrapper.pull_kernel_impl(
                mq, sd.sub_string, sd.expression_type, 0 if is_tag else sd.sub_version, offset,
                max_nums, sys_flag, 0, d.broker_suspend_max_time_millis, timeout_millis,
                CommunicationMode.SYNC if callback is None else CommunicationMode.ASYNC,
            )  # fmt: skip
            return self.pull_api_wrapper.process_pull_result(mq, result, sd)

        return self._future("pull", gen(), callback)

    def subscription_automatically(self, topic: str) -> None:
        """Mirrors DefaultMQPullConsumerImpl#subscriptionAutomatically."""
        if topic not in self.rebalance_impl.subscription_inner:
            self.rebalance_impl.subscription_inner[topic] = FilterAPI.build_subscription_data(
                topic, SubscriptionData.SUB_ALL
            )

    def send_message_back(
        self, msg: MessageExt, delay_level: int, broker_name: str | None
    ) -> ConsumerFuture:
        """CONSUMER_SEND_MSG_BACK (3000 ms); on failure re-send through the inner producer.

        Mirrors DefaultMQPullConsumerImpl#sendMessageBack (RocketMQ 4.9.3): maxReconsumeTimes
        is the setting (16); the fallback message goes to ``%RETRY%<group>`` with
        RECONSUME_TIME + 1 and DELAY 3 + reconsumeTimes, as the push consumer's does.
        """
        self._is_running()
        factory = self.mq_client_factory
        d = self.default_mq_pull_consumer

        def gen() -> Gen:
            addr = (
                factory.find_broker_address_in_publish(broker_name)
                if broker_name is not None
                else msg.store_host
            )
            try:
                if addr is None:
                    raise MQClientException(-1, f"The broker[{broker_name}] not exist")
                yield from factory.mq_client_api_impl.consumer_send_message_back(
                    addr, msg, d.consumer_group, delay_level, 3000, d.max_reconsume_times
                )
            except NETWORK_ERRORS:
                new_msg = Message(get_retry_topic(d.consumer_group), msg.body)
                new_msg.flag = msg.flag
                new_msg.properties = dict(msg.properties)
                origin = msg.get_property(mc.PROPERTY_ORIGIN_MESSAGE_ID)
                new_msg.put_property(mc.PROPERTY_ORIGIN_MESSAGE_ID, origin or msg.client_msg_id())
                new_msg.put_property(mc.PROPERTY_RETRY_TOPIC, msg.topic)
                new_msg.put_property(mc.PROPERTY_RECONSUME_TIME, str(msg.reconsume_times + 1))
                new_msg.put_property(mc.PROPERTY_MAX_RECONSUME_TIMES, str(d.max_reconsume_times))
                new_msg.delay_time_level = 3 + msg.reconsume_times
                producer = factory.default_mq_producer
                yield from producer.default_mq_producer_impl.send_default_impl(
                    new_msg, CommunicationMode.SYNC, producer.send_msg_timeout
                )

        return self._future("sendMessageBack", gen())
