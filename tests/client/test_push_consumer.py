"""DefaultMQPushConsumer end to end: settings, subscribe, filters, start, offsets, from-where.

Also home of ``ConsumerCluster``, the name server + broker(s) + producer + push consumers
harness the other consumer test files import (pytest puts ``tests/client`` on ``sys.path``).
"""

from __future__ import annotations

import json

import pytest

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer, MessageSelector
from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus
from mqlab.client.exception import MQClientException
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.client.producer.default_mq_producer import DefaultMQProducer
from mqlab.common.message import Message, MessageQueue
from mqlab.common.topic_config import TopicConfig
from mqlab.common.util_all import time_millis_to_human_string3
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.runtime.sim import SimDriver
from mqlab.store.config import MessageStoreConfig
from mqlab.trace.events import TraceLevel

OK = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER


class QueueSelector:
    """Send to queue ``arg`` (an int) of the topic."""

    def select(self, mqs, msg, arg):
        return mqs[arg]


class ConsumerCluster:
    """A name server, brokers broker-a.., one producer "PG" and push consumers on a SimDriver."""

    def __init__(self, tmp_path, *, brokers=1, seed=1, trace_level=TraceLevel.STEPS,
                 broker_kw=None, store_kw=None, topics=("T",), queues=4):  # fmt: skip
        self.tmp_path = tmp_path
        self.d = SimDriver(seed=seed, trace_level=trace_level)
        self.d.add_node(NamesrvController())
        self.brokers = []
        for i in range(brokers):
            letter = chr(ord("a") + i)
            cfg = BrokerConfig(
                broker_name=f"broker-{letter}", listen_port=10911 + 10 * i, **(broker_kw or {})
            )
            store = MessageStoreConfig(
                store_path_root_dir=str(tmp_path / f"store-{letter}"), **(store_kw or {})
            )
            b = BrokerController(cfg, store)
            self.d.add_node(b)
            self.brokers.append(b)
        for topic in topics:
            self.create_topic(topic, queues)
        self.d.advance(100)
        self.producer_instance = MQClientInstance(ClientConfig(), name="producer")
        self.d.add_node(self.producer_instance)
        self.producer = DefaultMQProducer("PG", self.producer_instance)
        self.producer.start()
        self.consumers: list[DefaultMQPushConsumer] = []

    def create_topic(self, topic, queues=4):
        """What ``mqadmin updateTopic`` does: the topic on every broker, re-registered."""
        for b in self.brokers:
            tc = TopicConfig(topic, read_queue_nums=queues, write_queue_nums=queues)
            b.topic_config_manager.update_topic_config(tc, self.d.now)
            b.register_broker_all()

    @property
    def broker(self) -> BrokerController:
        return self.brokers[0]

    def send(self, topic="T", body=b"m", *, tags=None, keys=None, queue_id=None, props=None):
        msg = Message(topic, body, tags=tags, keys=keys, properties=props)
        if queue_id is None:
            return self.producer.send(msg)
        return self.producer.send_orderly(msg, QueueSelector(), queue_id)

    def send_and_wait(self, *args, **kw):
        fut = self.send(*args, **kw)
        self.d.run_until_idle()
        return fut.get()

    def consumer(self, name, *, group="CG", topic="T", expression="*", expression_type="TAG",
                 listener=None, orderly=False, start=True, **settings) -> DefaultMQPushConsumer:  # fmt: skip
        inst = MQClientInstance(
            ClientConfig(local_offset_store_dir=str(self.tmp_path / "offsets")), name=name
        )
        self.d.add_node(inst)
        c = DefaultMQPushConsumer(group, inst, **settings)
        c.subscribe(topic, expression, expression_type)
        if listener is None:
            status = ConsumeOrderlyStatus.SUCCESS if orderly else OK
            listener = lambda msgs, ctx: status  # noqa: E731
        if orderly:
            c.register_message_listener_orderly(listener)
        else:
            c.register_message_listener(listener)
        if start:
            c.start()
        self.consumers.append(c)
        return c

    def shared_consumers(self, groups, *, name="shared", **settings):
        """One (not started) push consumer per group, all on one MQClientInstance ``name``."""
        inst = MQClientInstance(
            ClientConfig(local_offset_store_dir=str(self.tmp_path / "offsets")), name=name
        )
        self.d.add_node(inst)
        return {g: DefaultMQPushConsumer(g, inst, **settings) for g in groups}

    def events(self, *, node=None, component=None, step=None):
        return self.d.recorder.select(node=node, component=component, step=step)


def new_consumer(**settings):
    """A consumer on an instance that is not on a driver (for configuration checks)."""
    inst = MQClientInstance(ClientConfig(), name="cfg")
    c = DefaultMQPushConsumer("CG", inst, **settings)
    c.subscribe("T", "*")
    c.register_message_listener(lambda msgs, ctx: OK)
    return c


# -- settings (docs/reference.md §9, §11 DefaultMQPushConsumerTest) ------------------------------------------


def test_defaults_are_rocketmq_4_9_3():
    """Every §9 default: 20/20 threads, span 2000, 1000 msgs / 100 MiB, batch 1, pull 32, ..."""
    c = new_consumer()
    assert (c.message_model, c.consume_from_where) == ("CLUSTERING", "CONSUME_FROM_LAST_OFFSET")
    assert (c.consume_thread_min, c.consume_thread_max) == (20, 20)
    assert c.consume_concurrently_max_span == 2000
    assert (c.pull_threshold_for_queue, c.pull_threshold_size_for_queue) == (1000, 100)
    assert (c.pull_threshold_for_topic, c.pull_threshold_size_for_topic) == (-1, -1)
    assert (c.pull_interval, c.consume_message_batch_max_size, c.pull_batch_size) == (0, 1, 32)
    assert (c.max_reconsume_times, c.suspend_current_queue_time_millis) == (-1, 1000)
    assert (c.consume_timeout, c.adjust_thread_pool_nums_threshold) == (15, 100000)
    assert c.post_subscription_when_pull is False and c.unit_mode is False
    assert c.allocate_message_queue_strategy.get_name() == "AVG"
    # now − 30 min at t=0 (UTC): consumeTimestamp default
    assert c.consume_timestamp == "19691231233000"
    # ClientConfig#pullTimeDelayMillsWhenException, copied by the impl's constructor
    assert c.default_mq_push_consumer_impl.pull_time_delay_mills_when_exception == 1000


def test_unknown_setting_is_a_type_error():
    """A misspelt setting names itself (API misuse → TypeError)."""
    with pytest.raises(TypeError, match="pull_treshold_for_queue"):
        new_consumer(pull_treshold_for_queue=5)


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("pull_threshold_for_queue", 65536, "pullThresholdForQueue Out of range [1, 65535]"),
        ("pull_threshold_for_queue", 0, "pullThresholdForQueue Out of range [1, 65535]"),
        ("pull_threshold_for_topic", 6553501, "pullThresholdForTopic Out of range [1, 6553500]"),
        ("pull_threshold_size_for_queue", 1025, "pullThresholdSizeForQueue Out of range [1, 1024]"),
        ("pull_threshold_size_for_topic", 102401,
         "pullThresholdSizeForTopic Out of range [1, 102400]"),
        ("consume_thread_min", 0, "consumeThreadMin Out of range [1, 1000]"),
        ("consume_thread_max", 1001, "consumeThreadMax Out of range [1, 1000]"),
        ("consume_concurrently_max_span", 65536,
         "consumeConcurrentlyMaxSpan Out of range [1, 65535]"),
        ("pull_interval", 65536, "pullInterval Out of range [0, 65535]"),
        ("consume_message_batch_max_size", 1025, "consumeMessageBatchMaxSize Out of range [1, 1024]"),
        ("pull_batch_size", 0, "pullBatchSize Out of range [1, 1024]"),
        ("consume_timestamp", "2022", "consumeTimestamp is invalid, the valid format is "
         "yyyyMMddHHmmss,but received 2022"),
    ],
)  # fmt: skip
def test_check_config_messages(setting, value, message):
    """checkConfig rejects out-of-range settings with RocketMQ's text (docs/reference.md §9, §11)."""
    c = new_consumer(**{setting: value})
    with pytest.raises(MQClientException) as e:
        c.check_config()
    assert message in str(e.value)
    assert e.value.response_code == -1


def test_check_config_group_and_listener_and_thread_order():
    """DEFAULT_CONSUMER is reserved; a listener is required; min ≤ max threads (no FAQ hint)."""
    inst = MQClientInstance(ClientConfig(), name="cfg")
    c = DefaultMQPushConsumer("DEFAULT_CONSUMER", inst)
    c.register_message_listener(lambda m, x: OK)
    with pytest.raises(MQClientException, match="consumerGroup can not equal DEFAULT_CONSUMER"):
        c.check_config()
    c = DefaultMQPushConsumer("CG", inst)
    with pytest.raises(MQClientException, match="messageListener is null"):
        c.check_config()
    c = new_consumer(consume_thread_min=30)
    with pytest.raises(MQClientException) as e:
        c.check_config()
    assert str(e.value) == (
        "consumeThreadMin (30) is larger than consumeThreadMax (20)"
        "\nFor more information, please visit the url, http://rocketmq.apache.org/docs/faq/"
    )
    c = DefaultMQPushConsumer("bad group!", inst)
    c.register_message_listener(lambda m, x: OK)
    with pytest.raises(MQClientException, match=r"contains illegal characters"):
        c.check_config()


# -- start and subscriptions ---------------------------------------------------------------------


def test_clustering_subscribes_its_retry_topic_broadcasting_does_not(tmp_path):
    """copySubscription adds %RETRY%<group> with "*" only in clustering mode (docs/reference.md §10.11)."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("c1", group="G1")
    c2 = cl.consumer("c2", group="G2", message_model="BROADCASTING")
    subs1 = {sd.topic: sd.sub_string for sd in c1.default_mq_push_consumer_impl.subscriptions()}
    subs2 = {sd.topic: sd.sub_string for sd in c2.default_mq_push_consumer_impl.subscriptions()}
    assert subs1 == {"T": "*", "%RETRY%G1": "*"}
    assert subs2 == {"T": "*"}


def test_start_twice_and_duplicate_group_are_refused(tmp_path):
    """A started consumer cannot start again; a second consumer of a group on one client fails."""
    cl = ConsumerCluster(tmp_path)
    c = cl.consumer("c1")
    with pytest.raises(MQClientException, match="maybe started once, RUNNING"):
        c.start()
    inst = c.default_mq_push_consumer_impl.mq_client_factory
    other = DefaultMQPushConsumer("CG", inst)
    other.subscribe("T", "*")
    other.register_message_listener(lambda m, x: OK)
    with pytest.raises(
        MQClientException, match=r"The consumer group\[CG\] has been created before"
    ):
        other.start()
    assert other.default_mq_push_consumer_impl.service_state.value == "CREATE_JUST"


def test_start_needs_a_running_instance():
    """Starting on an instance that no driver runs is API misuse."""
    c = new_consumer()
    with pytest.raises(ValueError, match="must be added to a running driver"):
        c.start()


def test_tag_expression_delivers_only_listed_tags(tmp_path):
    """ "TagA || TagB": the broker filters by hash code, the client by string; TagC never arrives."""
    cl = ConsumerCluster(tmp_path)
    for tag in ["TagA", "TagB", "TagC", "TagA"]:
        cl.send_and_wait(body=tag.encode(), tags=tag)
    seen = []

    def listener(msgs, ctx):
        seen.extend(m.tags for m in msgs)
        return OK

    c = cl.consumer("c1", expression="TagA || TagB", listener=listener)
    sd = c.default_mq_push_consumer_impl.rebalance_impl.subscription_inner["T"]
    assert sd.tags_set == ["TagA", "TagB"] and sd.code_set == [2598919, 2598920]
    cl.d.advance(3000)
    assert sorted(seen) == ["TagA", "TagA", "TagB"]


def test_sql92_needs_enable_property_filter(tmp_path):
    """SQL92 against a default broker: CHECK_CLIENT_CONFIG fails (SYSTEM_ERROR 1) and no message."""
    cl = ConsumerCluster(tmp_path)
    cl.send_and_wait(body=b"x", props={"a": "7"})
    c = cl.consumer("c1", expression="a > 5", expression_type="SQL92")
    cl.d.advance(3000)
    err = c.default_mq_push_consumer_impl.check_client_error
    assert err is not None and err.response_code == 1
    assert "does not support consumer to filter message by SQL92" in str(err)
    assert c.consumed == []
    assert c.stats.pulls.get("EXCEPTION", 0) >= 1


def test_check_client_in_broker_transport_failure_text(tmp_path):
    """CHECK_CLIENT_CONFIG cannot reach the broker: MQClientInstance#checkClientInBroker's
    wrapped MQClientException (code -1, the cause kept), Java's text word for word."""
    cl = ConsumerCluster(tmp_path)
    c = cl.consumer("c1", expression="a > 5", expression_type="SQL92", start=False)
    cl.d.set_link("c1", "broker-a", down=True)  # the name server still routes to broker-a
    c.start()
    cl.d.advance(3000)
    (e,) = cl.events(node="c1", component="DefaultMQPushConsumerImpl.checkClientInBroker")
    assert e.t_ms == 104  # after the two route look-ups; the connect fails at once
    err = c.default_mq_push_consumer_impl.check_client_error
    assert err.response_code == -1
    assert err.error_message == (
        "Check client in broker error, maybe because you use SQL92 to filter message, but "
        "server has not been upgraded to support!This error would not affect the launch of "
        "consumer, but may has impact on message receiving if you have use the new features "
        "which are not supported by server, please check the log!"
    )
    # getMessage() went through FAQUrl#attachDefaultURL (no "\nSee " tip in the text)
    assert str(err) == err.error_message + (
        "\nFor more information, please visit the url, http://rocketmq.apache.org/docs/faq/"
    )
    assert repr(err.__cause__) == "RemotingConnectException('connect to 127.0.0.1:10911 failed')"


def test_check_client_in_broker_checks_every_consumer_and_stops_at_the_first_failure(tmp_path):
    """checkClientInBroker walks the instance's whole consumerTable: a TAG consumer started
    after a refused SQL92 group gets that group's failure; one CHECK_CLIENT_CONFIG per start,
    since the first failure ends the check (MQClientInstance.java:430-466)."""
    cl = ConsumerCluster(tmp_path)
    consumers = cl.shared_consumers(["GA", "GB"])
    consumers["GA"].subscribe("T", MessageSelector.by_sql("a > 5"))
    consumers["GA"].subscribe("U", MessageSelector.by_sql("b > 5"))
    consumers["GB"].subscribe("T", "*")
    for c in consumers.values():
        c.register_message_listener(lambda msgs, ctx: OK)
    consumers["GA"].start()
    cl.d.advance(3000)
    consumers["GB"].start()
    cl.d.advance(3000)
    refused = "The broker does not support consumer to filter message by SQL92"
    for g in ("GA", "GB"):
        err = consumers[g].default_mq_push_consumer_impl.check_client_error
        assert (err.response_code, err.error_message) == (1, refused), g
    checks = cl.events(node="shared", component="DefaultMQPushConsumerImpl.checkClientInBroker")
    assert [(e.fields["group"], e.fields["checked_group"], e.fields["topic"]) for e in checks] == [
        ("GA", "GA", "T"), ("GB", "GA", "T"),
    ]  # fmt: skip


def test_sql92_with_property_filter_selects_by_property(tmp_path):
    """enablePropertyFilter=true: "a > 5" delivers a=7 and a=9 and never a=1 (push only)."""
    cl = ConsumerCluster(tmp_path, broker_kw={"enable_property_filter": True})
    for a in ["7", "1", "9"]:
        cl.send_and_wait(body=a.encode(), props={"a": a})
    seen = []

    def listener(msgs, ctx):
        seen.extend(m.body for m in msgs)
        return OK

    c = cl.consumer("c1", expression=MessageSelector.by_sql("a > 5"), listener=listener)
    cl.d.advance(3000)
    assert c.default_mq_push_consumer_impl.check_client_error is None
    assert sorted(seen) == [b"7", b"9"]


def test_listener_object_with_consume_time(tmp_path):
    """An object listener with ``consume_time_ms`` keeps a worker busy for that long."""
    cl = ConsumerCluster(tmp_path)

    class Slow:
        consume_time_ms = 250

        def __init__(self):
            self.calls = []

        def consume_message(self, msgs, context):
            self.calls.append(cl.d.now)
            return OK

    listener = Slow()
    c = cl.consumer("c1", listener=listener, consume_thread_min=1, consume_thread_max=1)
    cl.d.advance(2000)
    for _ in range(3):
        cl.send(body=b"s", queue_id=0)
    cl.d.advance(2000)
    first = listener.calls[0]
    assert [t - first for t in listener.calls] == [0, 250, 500]
    assert c.default_mq_push_consumer_impl.consume_message_service.consume_executor.pool_size == 1


def test_suspend_retries_pulls_every_1000_ms_and_resume_consumes(tmp_path):
    """Paused: pulls come back every PULL_TIME_DELAY_MILLS_WHEN_SUSPEND (1000 ms); resume."""
    cl = ConsumerCluster(tmp_path)
    c = cl.consumer("c1")
    cl.d.advance(2000)
    c.suspend()
    cl.send_and_wait(body=b"p", queue_id=0)  # wakes the parked pull: consumed, then paused
    mark = len(cl.d.recorder.events)
    cl.d.advance(3000)
    paused = [e for e in cl.d.recorder.events[mark:]
              if e.component == "DefaultMQPushConsumerImpl.pullMessage"
              and "paused" in e.fields.get("text", "")]  # fmt: skip
    per_queue = [e.t_ms for e in paused if e.fields["mq"].endswith("queueId=0]")]
    assert len(per_queue) >= 2 and {
        b - a for a, b in zip(per_queue, per_queue[1:], strict=False)
    } == {1000}
    cl.send(body=b"after", queue_id=0)
    cl.d.advance(2000)
    assert len(c.consumed) == 1  # still paused
    c.resume()
    cl.d.advance(2000)
    assert len(c.consumed) == 2


# -- offsets ---------------------------------------------------------------------------------------


def _paused_groups(tmp_path, groups):
    cl = ConsumerCluster(tmp_path, queues=1)
    consumers = cl.shared_consumers(groups)
    seen = {g: [] for g in groups}
    for g, c in consumers.items():
        c.subscribe("T", "*")
        c.register_message_listener(
            lambda msgs, ctx, g=g: seen[g].extend((cl.d.now, m.body) for m in msgs) or OK
        )
        c.start()
    cl.d.advance(3000)
    for c in consumers.values():
        c.suspend()
    cl.d.advance(40_000)  # each group re-arms its pull request every 1000 ms
    for c in consumers.values():
        c.resume()
    cl.d.advance(1000)
    for i in range(3):
        cl.send_and_wait(body=f"m{i}".encode())
    cl.d.advance(20_000)
    return seen, {g: c.stats.pulls_issued for g, c in consumers.items()}


def test_paused_groups_on_one_instance_keep_their_own_later_pulls(tmp_path):
    """Two paused groups on one client instance, one queue: each group's
    executePullRequestLater is its own task (Java's schedule()), so after resume both pull and
    consume at the times one group alone does."""
    alone = _paused_groups(tmp_path / "alone", ["GA"])
    both = _paused_groups(tmp_path / "both", ["GA", "GB"])
    expected = [(44104, b"m0"), (44107, b"m1"), (44110, b"m2")]
    assert alone == ({"GA": expected}, {"GA": 9})
    assert both == ({"GA": expected, "GB": expected}, {"GA": 9, "GB": 9})


def test_broadcasting_offsets_persist_to_local_file(tmp_path):
    """BROADCASTING: every consumer gets every message; offsets go to <dir>/<cid>/<group>/offsets.json."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("c1", message_model="BROADCASTING")
    c2 = cl.consumer("c2", message_model="BROADCASTING")
    cl.d.advance(2000)
    for i in range(4):
        cl.send(body=f"b{i}".encode(), queue_id=i % 2)
    cl.d.advance(12_000)  # persistAllConsumerOffset: first after 10 s, then every 5 s
    assert len(c1.consumed) == 4 and len(c2.consumed) == 4
    path = tmp_path / "offsets" / "127.0.0.1@c1" / "CG" / "offsets.json"
    assert path.exists()
    text = path.read_text()
    assert '"offsetTable"' in text
    store = c1.default_mq_push_consumer_impl.offset_store
    assert type(store).__name__ == "LocalFileOffsetStore"
    offsets = {mq.queue_id: o for mq, o in store.offset_table.items() if mq.topic == "T"}
    assert offsets == {0: 2, 1: 2}  # queues 2 and 3: their pulls are still parked (15 s)
    # the file holds the same numbers
    reread = type(store)(store.instance, "CG", str(tmp_path / "offsets"))
    reread.load()
    assert {mq.queue_id: o for mq, o in reread.offset_table.items()} == offsets


def _from_where_cluster(tmp_path):
    # total_physical_memory_size tiny: queue offset 0 is "in disk", so QUERY_CONSUMER_OFFSET of a
    # new group answers QUERY_NOT_FOUND and consumeFromWhere decides (docs/reference.md §10.4).
    cl = ConsumerCluster(tmp_path, store_kw={"total_physical_memory_size": 1})
    for i in range(3):
        cl.send_and_wait(body=f"old{i}".encode(), queue_id=0)
    cl.d.advance(60_000 - cl.d.now)
    for i in range(3):
        cl.send_and_wait(body=f"new{i}".encode(), queue_id=0)
    return cl


@pytest.mark.parametrize(
    ("where", "expected_offsets"),
    [
        ("CONSUME_FROM_FIRST_OFFSET", [0, 1, 2, 3, 4, 5, 6]),
        ("CONSUME_FROM_LAST_OFFSET", [6]),
        ("CONSUME_FROM_TIMESTAMP", [3, 4, 5, 6]),
    ],
)
def test_consume_from_where_starts_where_rocketmq_starts(tmp_path, where, expected_offsets):
    """No broker offset: FIRST → 0, LAST → max offset, TIMESTAMP → searchOffset (docs/reference.md §10.11)."""
    cl = _from_where_cluster(tmp_path)
    # 19700101000050 = 50 000 ms: nearest stored message is the first "new" one (offset 3)
    c = cl.consumer("c1", consume_from_where=where,
                    consume_timestamp=time_millis_to_human_string3(50_000))  # fmt: skip
    cl.d.advance(3000)
    cl.send(body=b"later", queue_id=0)
    cl.d.advance(3000)
    got = [r.queue_offset for r in c.consumed if r.mq == MessageQueue("T", "broker-a", 0)]
    assert got == expected_offsets
    step3 = [e for e in cl.events(node="c1", component="RebalancePushImpl.computePullFromWhere")
             if e.fields["mq"].endswith("topic=T, brokerName=broker-a, queueId=0]")]  # fmt: skip
    assert step3[0].fields["last_offset"] == -1
    assert step3[0].fields["result"] == expected_offsets[0]


def test_stored_offset_wins_over_consume_from_where(tmp_path):
    """A group with a committed offset resumes there whatever consumeFromWhere says."""
    cl = _from_where_cluster(tmp_path)
    c = cl.consumer("c1", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    cl.d.advance(15_000)  # consumed 0..5 and committed (persist every 5 s)
    c.shutdown()
    cl.d.advance(1000)
    c2 = cl.consumer("c2", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    cl.d.advance(3000)
    assert [r.queue_offset for r in c2.consumed] == []
    cl.send(body=b"x", queue_id=0)
    cl.d.advance(2000)
    assert [r.queue_offset for r in c2.consumed] == [6]


def test_heartbeat_json_names_the_group(tmp_path):
    """The heartbeat carries the consumer data: CONSUME_PASSIVELY, CLUSTERING, both subscriptions."""
    cl = ConsumerCluster(tmp_path)
    c = cl.consumer("c1", expression="TagA")
    hb = c.default_mq_push_consumer_impl.mq_client_factory.prepare_heartbeat_data()
    d = json.loads(hb.encode())
    (cd,) = d["consumerDataSet"]
    assert cd["consumeType"] == "CONSUME_PASSIVELY" and cd["messageModel"] == "CLUSTERING"
    assert [s["topic"] for s in cd["subscriptionDataSet"]] == ["%RETRY%CG", "T"]
    assert cd["subscriptionDataSet"][1]["codeSet"] == [2598919]


# -- the pull callback (mechanisms.md "The consumer's pull loop" step 2.6) ---------------------------------------------------------


def test_no_matched_msg_moves_the_consume_offset(tmp_path):
    """Only TagB in queue 0, subscribed TagA: NO_MATCHED_MSG → correctTagsOffset → offset 3."""
    cl = ConsumerCluster(tmp_path)
    for _ in range(3):
        cl.send_and_wait(body=b"b", tags="TagB", queue_id=0)
    c = cl.consumer("c1", expression="TagA")
    cl.d.advance(3000)
    assert c.consumed == []
    assert c.stats.pulls.get("NO_MATCHED_MSG", 0) >= 1
    store = c.default_mq_push_consumer_impl.offset_store
    assert store.read_offset_from_memory(MessageQueue("T", "broker-a", 0)) == 3
    (e,) = [e for e in cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage",
                                 step="2.6") if e.fields.get("status") == "NO_MATCHED_MSG"][:1]  # fmt: skip
    assert e.fields["corrected"] is True and e.fields["next_offset"] == 3


def test_offset_illegal_drops_the_queue_and_fixes_the_offset_10_s_later(tmp_path):
    """Stored offset 100 > max 2: OFFSET_ILLEGAL → dropped; 10 s later offset 0 stored; re-added."""
    cl = ConsumerCluster(tmp_path)
    for i in range(2):
        cl.send_and_wait(body=f"o{i}".encode(), queue_id=0)
    cl.broker.consumer_offset_manager.commit_offset("test", "CG", "T", 0, 100)
    c = cl.consumer("c1")
    cl.d.advance(500)
    illegal = [e for e in cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage",
                                    step="2.6") if e.fields.get("status") == "OFFSET_ILLEGAL"]  # fmt: skip
    assert len(illegal) == 1 and illegal[0].fields["next_offset"] == 0
    mq0 = MessageQueue("T", "broker-a", 0)
    pq = c.process_queue_table[mq0]
    assert pq.dropped
    (t,) = [t for t in cl.d.next_timers() if t.name == "PullMessageService.executeTaskLater"]
    assert t.due_ms == illegal[0].t_ms + 10_000 and t.key == f"CG@{mq0}#1"
    cl.d.advance(t.due_ms - cl.d.now)
    assert mq0 not in c.process_queue_table
    cl.d.advance(1)  # the oneway UPDATE_CONSUMER_OFFSET reaches the broker
    assert cl.broker.consumer_offset_manager.query_offset("CG", "T", 0) == 0
    cl.d.advance(20_000)  # the next RebalanceService round re-adds the queue at offset 0
    assert [r.queue_offset for r in c.consumed if r.mq == mq0] == [0, 1]


def test_pull_exception_retries_after_pull_time_delay_mills_when_exception(tmp_path):
    """The broker is killed while the pull is parked there: the FIN does not fail the pull
    (tests/conformance/test_broker_kill_vs_real.py), which waits out its 30 s timeout plus
    scanResponseTable's second; from then on every pull is refused and comes back 1000 ms
    later (4.9.3 default)."""
    cl = ConsumerCluster(tmp_path)
    c = cl.consumer("c1")
    cl.d.advance(3000)
    mq = str(MessageQueue("T", "broker-a", 0))
    sent = [e.t_ms for e in cl.events(node="c1", component="PullAPIWrapper.pullKernelImpl")
            if f"T@{mq.rsplit('=', 1)[1][:-1]}" in e.describe()]  # fmt: skip
    cl.d.stop_node("broker-a", graceful=False)
    cl.d.advance(35_000)
    failures = [e.t_ms for e in cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage",
                                          step="2.6")
                if e.fields.get("status") == "EXCEPTION" and e.fields["mq"] == mq]  # fmt: skip
    assert failures[0] == sent[-1] + 30_000 + 1000
    assert len(failures) >= 3
    assert {b - a for a, b in zip(failures[1:], failures[2:], strict=False)} == {1000}
    assert c.stats.pulls["EXCEPTION"] >= 3


def test_lost_pull_times_out_when_the_scan_finds_it_then_pulls_again_1000_ms_later(tmp_path):
    """Pull replies are lost: the async pull (30 s) is given up by scanResponseTable at 31 s,
    PullCallback#onException → executePullRequestLater(1000): pulls go out 32 s apart."""
    cl = ConsumerCluster(tmp_path)
    cl.consumer("c1")
    cl.d.advance(3000)  # the first pull of queue 0 went out at 114 ms and is parked
    cl.d.set_link("broker-a", "c1", drop_rate=1.0)  # requests arrive, replies are lost
    cl.d.advance(97_000)
    mq0 = str(MessageQueue("T", "broker-a", 0))
    events = cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage")
    issued = [e.t_ms for e in events if e.step == "2.5" and e.fields["mq"] == mq0]
    failed = [e for e in events if e.step == "2.6" and e.fields.get("status") == "EXCEPTION"
              and e.fields["mq"] == mq0]  # fmt: skip
    assert issued == [114, 32_114, 64_114, 96_114]
    assert [f.t_ms for f in failed] == [31_114, 63_114, 95_114]
    error = failed[0].fields["error"]
    assert error.startswith("wait response from 127.0.0.1:10911 timeout :30000ms")


def test_client_config_pull_time_delay_mills_when_exception_reaches_the_push_consumer():
    """DefaultMQPushConsumerImpl's constructor copies ClientConfig#pullTimeDelayMillsWhenException
    over its own 3000 (DefaultMQPushConsumerImpl.java:118): the client config's value is used."""
    inst = MQClientInstance(ClientConfig(pull_time_delay_mills_when_exception=2500), name="cfg")
    c = DefaultMQPushConsumer("CG", inst)
    assert c.pull_time_delay_mills_when_exception == 2500
    assert c.default_mq_push_consumer_impl.pull_time_delay_mills_when_exception == 2500


def test_shutdown_hands_the_queues_to_the_other_consumer(tmp_path):
    """c1 shuts down (offsets committed, UNREGISTER_CLIENT): c2 rebalances to all 4 queues."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("c1")
    c2 = cl.consumer("c2")
    cl.d.advance(3000)
    assert len([m for m in c2.process_queue_table if m.topic == "T"]) == 2
    c1.shutdown()
    cl.d.advance(1000)
    assert sorted(m.queue_id for m in c2.process_queue_table if m.topic == "T") == [0, 1, 2, 3]
    assert c1.default_mq_push_consumer_impl.service_state.value == "SHUTDOWN_ALREADY"


def _scenario(tmp_path):
    cl = ConsumerCluster(tmp_path, seed=7)
    cl.consumer("c1", consume_time_ms=lambda msgs: 3 * (msgs[0].queue_offset + 1))
    cl.consumer("c2", listener=lambda msgs, ctx: LATER if msgs[0].reconsume_times == 0 else OK)
    cl.d.advance(2000)
    for i in range(12):
        cl.send(body=f"d{i}".encode(), tags="TagA" if i % 2 else "TagB")
    cl.d.advance(40_000)
    return cl.d.recorder.to_jsonl()


def test_same_seed_same_trace_bytes(tmp_path):
    """Two runs of one consumer scenario with the same seed give byte-identical traces."""
    a = _scenario(tmp_path / "a")
    b = _scenario(tmp_path / "b")
    assert a == b and len(a) > 10_000


def test_pull_interval_spaces_the_pulls_after_found(tmp_path):
    """pullInterval 500: after a FOUND the next pull of the queue goes out 500 ms later."""
    cl = ConsumerCluster(tmp_path)
    cl.consumer("c1", pull_interval=500)
    cl.d.advance(2000)
    cl.send(body=b"i", queue_id=0)
    cl.d.advance(2000)
    q0 = str(MessageQueue("T", "broker-a", 0))
    pulls = cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage")
    found = next(e for e in pulls if e.step == "2.6" and e.fields.get("status") == "FOUND")
    after = [e for e in pulls if e.step == "2.5" and e.fields["mq"] == q0 and e.t_ms >= found.t_ms]
    assert after[0].t_ms - found.t_ms == 500
