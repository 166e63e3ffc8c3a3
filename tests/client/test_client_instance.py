"""MQClientInstance: client id, routes, broker lookup, heartbeats, scheduled tasks.

docs/reference.md §2.3 (heartbeat), §2.5 (route → queues), §2.7 (startup traffic), §8.4, §9 (timings);
MQClientInstance (client/impl/factory, RocketMQ 4.9.3).
"""

from __future__ import annotations

from types import SimpleNamespace

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.client.client_config import ClientConfig
from mqlab.client.mq_client_instance import (
    FindBrokerResult,
    MQClientInstance,
    topic_route_data_to_topic_publish_info,
    topic_route_data_to_topic_subscribe_info,
)
from mqlab.client.producer import DefaultMQProducer
from mqlab.common.filter_api import FilterAPI
from mqlab.common.message import Message, MessageQueue
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.bodies import BrokerData, QueueData, TopicRouteData
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Channel, Node
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import spawn
from mqlab.store.config import MessageStoreConfig

NAMESRV = "127.0.0.1:9876"
A = "127.0.0.1:10911"
B = "127.0.0.1:10921"


class FakeConsumer:
    """The MQConsumerInner surface the instance uses, counting the calls."""

    def __init__(self, group, topics=("T",)):
        self.group = group
        self.subs = [FilterAPI.build_subscription_data(t, "*", sub_version=1) for t in topics]
        self.subscribe_info = {}
        self.rebalances = self.persists = self.shutdowns = 0

    def group_name(self):
        return self.group

    def message_model(self):
        return "CLUSTERING"

    def consume_type(self):
        return "CONSUME_PASSIVELY"

    def consume_from_where(self):
        return "CONSUME_FROM_LAST_OFFSET"

    def subscriptions(self):
        return self.subs

    def do_rebalance(self):
        self.rebalances += 1

    def persist_consumer_offset(self):
        self.persists += 1

    def update_topic_subscribe_info(self, topic, mqs):
        self.subscribe_info[topic] = mqs

    def is_subscribe_topic_need_update(self, topic):
        return topic not in self.subscribe_info

    def is_unit_mode(self):
        return False

    def shutdown(self):
        self.shutdowns += 1


class FakeServer(Node):
    def __init__(self, name, address):
        super().__init__(name, address)
        self.requests = []

    def process_request(self, channel, request):
        self.requests.append(request)
        return RemotingCommand.create_response(0, None, {})


def spy(node, d):
    """Record (time, request, response) of every request ``node`` handles."""
    seen = []
    orig = node.process_request

    def wrapped(channel, request):
        response = orig(channel, request)
        seen.append((d.now, request, response))
        return response

    node.process_request = wrapped
    return seen


def make_cluster(tmp_path, brokers=1):
    d = SimDriver(seed=3)
    ns = NamesrvController()
    d.add_node(ns)
    bs = []
    for i in range(brokers):
        letter = "ab"[i]
        cfg = BrokerConfig(broker_name=f"broker-{letter}", listen_port=10911 + 10 * i)
        b = BrokerController(cfg, MessageStoreConfig(store_path_root_dir=str(tmp_path / letter)))
        d.add_node(b)
        bs.append(b)
    d.run_until_idle()
    return SimpleNamespace(d=d, ns=ns, brokers=bs)


def route(*qds, brokers=None, order_conf=None):
    bds = brokers or tuple(
        BrokerData(
            cluster="DefaultCluster",
            broker_name=q.broker_name,
            broker_addrs={0: f"addr-{q.broker_name}"},
        )
        for q in qds
    )
    return TopicRouteData(
        queue_datas=tuple(qds), broker_datas=tuple(bds), order_topic_conf=order_conf
    )


def qd(name, w=4, r=4, perm=6):
    return QueueData(broker_name=name, read_queue_nums=r, write_queue_nums=w, perm=perm)


# -- identity ----------------------------------------------------------------------------------------


def test_client_id_is_ip_at_instance_name():
    """clientId = <clientIP>@<instanceName>[@<unitName>]; "DEFAULT" becomes the node name (docs/reference.md §8.4)."""
    assert MQClientInstance(name="consumer-1").client_id == "127.0.0.1@consumer-1"
    cfg = ClientConfig(client_ip="10.0.0.5", instance_name="1234#5678", unit_name="u1")
    inst = MQClientInstance(cfg, name="c")
    assert inst.client_id == "10.0.0.5@1234#5678@u1"
    assert cfg.instance_name == "1234#5678"  # the caller's config is not modified


def test_client_config_defaults():
    """ClientConfig defaults: poll 30 s, heartbeat 30 s, persist 5 s, API timeout 3 s (docs/reference.md §8.4)."""
    cfg = ClientConfig()
    assert (cfg.poll_name_server_interval, cfg.heartbeat_broker_interval,
            cfg.persist_consumer_offset_interval, cfg.pull_time_delay_mills_when_exception,
            cfg.mq_client_api_timeout, cfg.vip_channel_enabled, cfg.instance_name) == (
        30000, 30000, 5000, 1000, 3000, False, "DEFAULT")  # fmt: skip


# -- route conversion ------------------------------------------------------------------------------


def test_publish_info_sorted_by_broker_writable_with_master_only():
    """Publish queues: QueueDatas sorted by broker name, writable, whose broker has a master (docs/reference.md §2.5)."""
    r = route(
        qd("broker-b", w=2), qd("broker-a", w=3), qd("broker-c", perm=4), qd("broker-d"),
        brokers=(
            BrokerData(cluster="C", broker_name="broker-a", broker_addrs={0: A}),
            BrokerData(cluster="C", broker_name="broker-b", broker_addrs={0: B}),
            BrokerData(cluster="C", broker_name="broker-c", broker_addrs={0: "c"}),
            BrokerData(cluster="C", broker_name="broker-d", broker_addrs={1: "d-slave"}),
        ),
    )  # fmt: skip
    info = topic_route_data_to_topic_publish_info("T", r)
    assert [(m.broker_name, m.queue_id) for m in info.message_queue_list] == [
        ("broker-a", 0), ("broker-a", 1), ("broker-a", 2), ("broker-b", 0), ("broker-b", 1)
    ]  # fmt: skip
    assert info.order_topic is False and info.get_queue_id_by_broker("broker-b") == 2


def test_publish_info_from_order_topic_conf():
    """orderTopicConf "broker-b:2;broker-a:1" wins and marks the topic ordered."""
    info = topic_route_data_to_topic_publish_info(
        "T", route(qd("broker-a"), order_conf="broker-b:2;broker-a:1")
    )
    assert [(m.broker_name, m.queue_id) for m in info.message_queue_list] == [
        ("broker-b", 0), ("broker-b", 1), ("broker-a", 0)
    ]  # fmt: skip
    assert info.order_topic is True


def test_subscribe_info_is_every_readable_queue():
    """Subscribe queues: 0..readQueueNums−1 of every readable QueueData (write-only skipped)."""
    mqs = topic_route_data_to_topic_subscribe_info(
        "T", route(qd("broker-a", r=2), qd("broker-b", perm=2))
    )
    assert sorted(mqs) == [MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)]


# -- broker lookup --------------------------------------------------------------------------------


def test_find_broker_address_in_subscribe():
    """Exact id; a missing slave id falls back to id+1; otherwise any node unless only_this_broker."""
    inst = MQClientInstance(name="c")
    inst.broker_addr_table["b"] = {0: "m", 2: "s2"}
    inst.broker_version_table["b"] = {"m": 399}
    assert inst.find_broker_address_in_subscribe("b", 0, True) == FindBrokerResult("m", False, 399)
    assert inst.find_broker_address_in_subscribe("b", 1, True) == FindBrokerResult("s2", True, 0)
    assert inst.find_broker_address_in_subscribe("b", 5, True) is None
    assert inst.find_broker_address_in_subscribe("b", 5, False) == FindBrokerResult("m", False, 399)
    assert inst.find_broker_address_in_subscribe("x", 0, False) is None
    assert inst.find_broker_address_in_publish("b") == "m"
    assert inst.find_broker_address_in_publish("x") is None


def test_clean_offline_broker_forgets_addresses_without_route():
    """cleanOfflineBroker keeps only addresses some route still lists."""
    d = SimDriver(seed=1)
    inst = MQClientInstance(name="c")
    d.add_node(inst)
    inst.topic_route_table["T"] = route(
        qd("broker-a"),
        brokers=(BrokerData(cluster="C", broker_name="broker-a", broker_addrs={0: A}),),
    )
    inst.broker_addr_table.update({"broker-a": {0: A, 1: "gone"}, "broker-z": {0: "z"}})
    inst.clean_offline_broker()
    assert inst.broker_addr_table == {"broker-a": {0: A}}


# -- scheduled tasks against a real cluster ---------------------------------------------------------


def test_route_refresh_every_30s(tmp_path):
    """updateTopicRouteInfoFromNameServer: first after 10 ms, then every 30 s; a producer always asks for TBW102 (§2.7.6)."""
    c = make_cluster(tmp_path)
    seen = spy(c.ns, c.d)
    inst = MQClientInstance(name="p")
    c.d.add_node(inst)
    t0 = c.d.now
    DefaultMQProducer("PG", inst).start()
    c.d.advance(95_000)
    lookups = [
        (t - t0, q.ext_fields["topic"])
        for t, q, _ in seen
        if q.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
    ]
    assert lookups == [(11, "TBW102"), (30_011, "TBW102"), (60_011, "TBW102"), (90_011, "TBW102")]


def test_route_refresh_covers_every_published_topic(tmp_path):
    """After sending to T the periodic refresh asks for T and TBW102 each round."""
    c = make_cluster(tmp_path)
    inst = MQClientInstance(name="p")
    c.d.add_node(inst)
    producer = DefaultMQProducer("PG", inst)
    producer.start()
    producer.send(Message("T", b"x"))
    c.d.run_until_idle()
    seen = spy(c.ns, c.d)
    c.d.advance(60_000)
    topics = [
        q.ext_fields["topic"] for _, q, _ in seen if q.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
    ]
    assert topics == ["T", "TBW102", "T", "TBW102"]


def test_heartbeat_every_30s_first_after_1s(tmp_path):
    """sendHeartbeatToAllBroker: first 1 s after start, then every 30 s (docs/reference.md §9): 4 in 95 s."""
    c = make_cluster(tmp_path)
    seen = spy(c.brokers[0], c.d)
    inst = MQClientInstance(name="p")
    c.d.add_node(inst)
    t0 = c.d.now
    DefaultMQProducer("PG", inst).start()
    c.d.advance(95_000)
    beats = [t - t0 for t, q, _ in seen if q.code == RequestCode.HEART_BEAT]
    assert beats == [1001, 31_001, 61_001, 91_001]
    body = next(q.body for _, q, _ in seen if q.code == RequestCode.HEART_BEAT)
    assert (
        body
        == b'{"clientID":"127.0.0.1@p","consumerDataSet":[],"producerDataSet":[{"groupName":"PG"}]}'
    )
    assert inst.broker_version_table == {"broker-a": {A: 399}}


def test_heartbeat_with_consumer_lists_inner_producer_and_registers_the_group(tmp_path):
    """With a consumer the heartbeat lists its ConsumerData and CLIENT_INNER_PRODUCER (docs/reference.md §2.3)."""
    c = make_cluster(tmp_path)
    inst = MQClientInstance(name="c1")
    c.d.add_node(inst)
    consumer = FakeConsumer("CG")
    assert inst.register_consumer("CG", consumer) is True
    assert inst.register_consumer("CG", FakeConsumer("CG")) is False
    hb = inst.prepare_heartbeat_data().to_json_dict()
    assert hb["producerDataSet"] == [{"groupName": "CLIENT_INNER_PRODUCER"}]
    (cd,) = hb["consumerDataSet"]
    assert (cd["groupName"], cd["consumeType"], cd["messageModel"], cd["consumeFromWhere"]) == (
        "CG", "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET")  # fmt: skip
    assert (
        cd["subscriptionDataSet"][0]["topic"] == "T"
        and cd["subscriptionDataSet"][0]["subString"] == "*"
    )
    c.d.advance(2000)
    group = c.brokers[0].consumer_manager.get_consumer_group_info("CG")
    assert group is not None and group.get_all_client_id() == ["127.0.0.1@c1"]
    # the route of T does not exist; TBW102 (inner producer) gave the broker address
    assert inst.broker_addresses() == [A]


def test_heartbeat_goes_to_slaves_only_with_consumers():
    """Only masters get heartbeats from a producer-only client; with consumers every node does (docs/reference.md §2.3)."""
    d = SimDriver(seed=1)
    master, slave = FakeServer("m", "127.0.0.1:10911"), FakeServer("s", "127.0.0.1:10912")
    d.add_node(master)
    d.add_node(slave)
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="c")
    d.add_node(inst)
    DefaultMQProducer("PG", inst).start()
    inst.broker_addr_table["broker-a"] = {0: master.address, 1: slave.address}
    inst.send_heartbeat_to_all_broker_with_lock()
    d.run_until_idle()
    assert (len(master.requests), len(slave.requests)) == (1, 0)
    inst.register_consumer("CG", FakeConsumer("CG"))
    inst.send_heartbeat_to_all_broker_with_lock()
    d.run_until_idle()
    assert (len(master.requests), len(slave.requests)) == (2, 1)


def test_route_update_reaches_consumers(tmp_path):
    """A changed route gives every consumer the topic's readable queues (updateTopicSubscribeInfo)."""
    c = make_cluster(tmp_path)
    b = c.brokers[0]
    from mqlab.common.topic_config import TopicConfig

    b.topic_config_manager.update_topic_config(
        TopicConfig("T", read_queue_nums=4, write_queue_nums=4), c.d.now
    )
    b.register_broker_all()
    c.d.run_until_idle()
    inst = MQClientInstance(name="c1")
    c.d.add_node(inst)
    consumer = FakeConsumer("CG")
    inst.register_consumer("CG", consumer)
    c.d.advance(100)
    assert sorted(consumer.subscribe_info["T"]) == [
        MessageQueue("T", "broker-a", i) for i in range(4)
    ]
    assert inst.find_broker_addr_by_topic("T") == A
    t = spawn(inst.ctx, inst.find_consumer_id_list("T", "CG"), on_done=lambda t: None)
    c.d.advance(2000)  # the heartbeat at +1 s registers the group
    t = spawn(inst.ctx, inst.find_consumer_id_list("T", "CG"), on_done=lambda t: None)
    c.d.run_until_idle()
    assert t.result == ["127.0.0.1@c1"]


def test_persist_all_consumer_offset_every_5s_first_after_10s(tmp_path):
    """persistAllConsumerOffset: first at 10 s, then every 5 s (docs/reference.md §9): 3 calls in 21 s."""
    c = make_cluster(tmp_path)
    inst = MQClientInstance(name="c1")
    c.d.add_node(inst)
    consumer = FakeConsumer("CG")
    inst.register_consumer("CG", consumer)
    c.d.advance(9_999)
    assert consumer.persists == 0
    c.d.advance(11_001)
    assert consumer.persists == 3


def test_notify_consumer_ids_changed_rebalances_at_once():
    """NOTIFY_CONSUMER_IDS_CHANGED → no reply, RebalanceService woken → doRebalance now (docs/reference.md §10.5)."""
    d = SimDriver(seed=1)
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="c1")
    d.add_node(inst)
    consumer = FakeConsumer("CG")
    inst.register_consumer("CG", consumer)
    request = RemotingCommand.create_request(
        RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": "CG"}
    )
    channel = Channel(1, "127.0.0.1:50001", A, "broker-a")
    assert inst.process_request(channel, request) is None
    d.advance(0)  # the woken RebalanceService.run is due now
    assert consumer.rebalances == 1
    other = inst.process_request(
        channel, RemotingCommand.create_request(RequestCode.PULL_MESSAGE, {})
    )
    assert other.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED == 3


def test_stop_shuts_consumers_down_and_unregisters_producers(tmp_path):
    """A graceful stop calls each consumer's shutdown and sends UNREGISTER_CLIENT for each
    producer, then, as MQClientInstance#shutdown shuts its inner producer down, for
    CLIENT_INNER_PRODUCER; the brokers' producer tables keep neither group.

    MQClientInstance#unregisterClient sends to one broker address after the other, each
    ``invokeSync`` (1 ms a hop here): broker-a hears PG at 2003 and broker-b only after
    broker-a's answer, at 2005; CLIENT_INNER_PRODUCER follows broker-b's answer; the node
    stops (its connections close) only after the last answer, at 2010."""
    c = make_cluster(tmp_path, brokers=2)
    inst = MQClientInstance(name="c1")
    c.d.add_node(inst)
    consumer = FakeConsumer("CG")
    inst.register_consumer("CG", consumer)
    producer = DefaultMQProducer("PG", inst)
    producer.start()
    c.d.advance(2000)
    assert sorted(inst.broker_addr_table) == ["broker-a", "broker-b"]
    events = []
    c.d.recorder.subscribe(lambda e: events.append(e))
    c.d.stop_node("c1")
    assert consumer.shutdowns == 1
    assert "PG" not in inst.producer_table
    unreg = [e for e in events if e.component == "MQClientInstance.unregisterClient"]
    assert [(e.t_ms, e.fields["producer_group"]) for e in unreg] == [(2002, "PG")]
    assert inst.running  # the stop waits for the answers
    c.d.advance(100)
    unreg = [e for e in events if e.component == "MQClientInstance.unregisterClient"]
    assert [(e.t_ms, e.fields["producer_group"]) for e in unreg] == [
        (2002, "PG"), (2006, "CLIENT_INNER_PRODUCER")
    ]  # fmt: skip
    received = [(e.t_ms, e.node, e.fields["group"]) for e in events
                if e.component == "ProducerManager.unregisterProducer"]  # fmt: skip
    assert received == [
        (2003, "broker-a", "PG"), (2005, "broker-b", "PG"),
        (2007, "broker-a", "CLIENT_INNER_PRODUCER"), (2009, "broker-b", "CLIENT_INNER_PRODUCER"),
    ]  # fmt: skip
    stops = [e.t_ms for e in events if e.component == "SimDriver" and e.step == "stop"]
    assert stops == [2010]
    assert not inst.running


def test_unregister_goes_on_past_a_broker_that_is_down(tmp_path):
    """A broker process killed (its port refuses connections): its UNREGISTER_CLIENT fails
    at once (traced, as Java logs a warning: ``RemotingConnectException``) and the next
    address still gets its own, for PG and then for CLIENT_INNER_PRODUCER; the node stops
    after the last answer."""
    c = make_cluster(tmp_path, brokers=2)
    inst = MQClientInstance(name="c1")
    c.d.add_node(inst)
    producer = DefaultMQProducer("PG", inst)
    producer.start()
    c.d.advance(2000)
    c.d.stop_node("broker-a", graceful=False)
    events = []
    c.d.recorder.subscribe(lambda e: events.append(e))
    c.d.stop_node("c1")
    c.d.advance(10_000)
    failed = [(e.t_ms, e.fields["broker"]) for e in events
              if e.component == "MQClientInstance.unregisterClient" and e.step == "failed"]  # fmt: skip
    received = [(e.t_ms, e.node, e.fields["producer_group"]) for e in events
                if e.component == "ClientManageProcessor.unregisterClient"]  # fmt: skip
    stops = [e.t_ms for e in events if e.component == "SimDriver" and e.step == "stop"]
    errors = {e.fields["error"] for e in events if e.step == "failed"}
    assert failed == [(2002, "broker-a"), (2004, "broker-a")]
    assert errors == {"RemotingConnectException('connect to 127.0.0.1:10911 failed')"}
    assert received == [(2003, "broker-b", "PG"), (2005, "broker-b", "CLIENT_INNER_PRODUCER")]
    assert stops == [2006]
