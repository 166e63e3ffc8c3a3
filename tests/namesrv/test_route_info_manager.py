"""RouteInfoManager: registration, routes, write perms, expiry (docs/reference.md §2.5, §9, §10.17, §11)."""

from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.namesrv.route_info_manager import (
    BROKER_CHANNEL_EXPIRED_TIME,
    RegisterBrokerResult,
    RouteInfoManager,
    TopicConfigSerializeWrapper,
    encode_topic_list,
)
from mqlab.runtime.context import Channel

ADDR_A = "127.0.0.1:10911"
ADDR_B = "127.0.0.2:10911"
ADDR_A_SLAVE = "127.0.0.3:10911"


class FakeTracer:
    """Records ``emit`` calls as (component, step, fields)."""

    enabled = True

    def __init__(self):
        self.events = []

    def emit(self, component, step, kind="step", **fields):
        self.events.append((component, step, fields))


def wrapper(counter=1, **topics):
    """A TopicConfigSerializeWrapper; topics given as name=(read, write, perm)."""
    table = {name: TopicConfig(name, r, w, p) for name, (r, w, p) in topics.items()}
    return TopicConfigSerializeWrapper(table, DataVersion(1_650_000_000_000, counter))


def register(rim, name="broker-a", addr=ADDR_A, broker_id=0, w=None, now=0, channel=None, **kw):
    return rim.register_broker(
        kw.get("cluster", "DefaultCluster"), addr, name, broker_id, kw.get("ha", "ha:" + addr),
        w if w is not None else wrapper(TopicTest=(4, 4, 6)), kw.get("filters"), channel, now,
    )  # fmt: skip


def test_pickup_topic_route_data_unknown_topic_is_none():
    """An unknown topic has no route (RouteInfoManagerTest#testPickupTopicRouteData)."""
    assert RouteInfoManager().pickup_topic_route_data("unit-test") is None


def test_register_master_route_bytes():
    """A master's topic gives the fastjson route of docs/reference.md §2.5, brokerAddrs key unquoted."""
    rim = RouteInfoManager()
    assert register(rim) == RegisterBrokerResult(None, None)
    assert rim.pickup_topic_route_data("TopicTest").encode() == (
        b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a",'
        b'"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":'
        b'"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}'
    )


def test_two_brokers_same_topic_sorted_by_broker_name():
    """broker-b registering first still yields QueueDatas and BrokerDatas in name order a, b."""
    rim = RouteInfoManager()
    register(rim, "broker-b", ADDR_B, w=wrapper(TopicTest=(8, 8, 6)))
    register(rim, "broker-a", ADDR_A)
    route = rim.pickup_topic_route_data("TopicTest")
    assert [(q.broker_name, q.write_queue_nums) for q in route.queue_datas] == [
        ("broker-a", 4),
        ("broker-b", 8),
    ]
    assert [b.broker_name for b in route.broker_datas] == ["broker-a", "broker-b"]


def test_same_data_version_does_not_update_queue_data():
    """A re-registration with an equal DataVersion leaves the QueueData alone (§10.17)."""
    rim = RouteInfoManager()
    register(rim, w=wrapper(1, TopicTest=(4, 4, 6)))
    register(rim, w=wrapper(1, TopicTest=(16, 16, 6)))
    assert rim.pickup_topic_route_data("TopicTest").queue_datas[0].write_queue_nums == 4
    register(rim, w=wrapper(2, TopicTest=(16, 16, 6)))
    assert rim.pickup_topic_route_data("TopicTest").queue_datas[0].write_queue_nums == 16


def test_slave_topics_ignored_and_master_addresses_returned():
    """A slave (id 1) adds only its address and learns the master's addr and HA addr."""
    rim = RouteInfoManager()
    register(rim, ha="127.0.0.1:10912")
    result = register(rim, addr=ADDR_A_SLAVE, broker_id=1, w=wrapper(5, Other=(2, 2, 6)))
    assert result == RegisterBrokerResult("127.0.0.1:10912", ADDR_A)
    assert rim.pickup_topic_route_data("Other") is None
    assert rim.broker_addr_table["broker-a"].broker_addrs == {0: ADDR_A, 1: ADDR_A_SLAVE}


def test_slave_switched_to_master_keeps_one_record_per_address():
    """The same ip:port registered as id 0 after id 1 is removed under id 1 (4.9.3)."""
    rim = RouteInfoManager()
    register(rim, addr=ADDR_A_SLAVE, broker_id=1)
    register(rim, addr=ADDR_A_SLAVE, broker_id=0)
    assert rim.broker_addr_table["broker-a"].broker_addrs == {0: ADDR_A_SLAVE}


def test_wipe_then_add_write_perm():
    """wipeWritePerm → perm 4 (R); addWritePerm → perm 6 (RW) (RouteInfoManagerTest)."""
    rim = RouteInfoManager()
    register(rim, w=wrapper(TopicTest=(4, 4, 6), TBW102=(8, 8, 7)))
    assert rim.wipe_write_perm_of_broker_by_lock("broker-a") == 2
    perms = {t: rim.pickup_topic_route_data(t).queue_datas[0].perm for t in ("TopicTest", "TBW102")}
    assert perms == {"TopicTest": 4, "TBW102": 5}
    assert rim.add_write_perm_of_broker_by_lock("broker-a") == 2
    perms = {t: rim.pickup_topic_route_data(t).queue_datas[0].perm for t in ("TopicTest", "TBW102")}
    assert perms == {"TopicTest": 6, "TBW102": 6}
    assert rim.wipe_write_perm_of_broker_by_lock("no-such-broker") == 0


def test_unregister_master_removes_topics_and_cluster():
    """Unregistering the last address drops the brokerName, its cluster and its topics."""
    rim = RouteInfoManager()
    register(rim)
    register(rim, "broker-b", ADDR_B, w=wrapper(TopicTest=(4, 4, 6), OnlyB=(1, 1, 6)))
    rim.unregister_broker("DefaultCluster", ADDR_B, "broker-b", 0)
    assert rim.get_all_topic_list() == ["TopicTest"]
    assert [q.broker_name for q in rim.pickup_topic_route_data("TopicTest").queue_datas] == [
        "broker-a"
    ]
    assert rim.cluster_addr_table == {"DefaultCluster": {"broker-a"}}
    assert ADDR_B not in rim.broker_live_table


def test_unregister_slave_keeps_topics():
    """Removing a slave address keeps the brokerName and its QueueData."""
    rim = RouteInfoManager()
    register(rim)
    register(rim, addr=ADDR_A_SLAVE, broker_id=1)
    rim.unregister_broker("DefaultCluster", ADDR_A_SLAVE, "broker-a", 1)
    assert rim.broker_addr_table["broker-a"].broker_addrs == {0: ADDR_A}
    assert rim.pickup_topic_route_data("TopicTest") is not None


def test_scan_not_active_broker_120s_strict():
    """Registered at t=1000: alive at 121000 (not <), expired at 121001 (docs/reference.md §9)."""
    rim = RouteInfoManager()
    register(rim, now=1000)
    assert BROKER_CHANNEL_EXPIRED_TIME == 120_000
    assert rim.scan_not_active_broker(121_000) == []
    assert rim.scan_not_active_broker(121_001) == [(ADDR_A, None)]
    assert rim.pickup_topic_route_data("TopicTest") is None
    assert rim.broker_addr_table == {} and rim.cluster_addr_table == {}


def test_on_channel_destroy_finds_broker_by_channel():
    """A closed channel is matched in brokerLiveTable and the broker is cleaned up."""
    rim = RouteInfoManager()
    ch = Channel(7, "127.0.0.1:9876", "127.0.0.1:50001", "broker-a")
    register(rim, channel=ch)
    register(rim, "broker-b", ADDR_B)
    assert rim.on_channel_destroy("127.0.0.1:50001", ch) == ADDR_A
    assert sorted(rim.broker_addr_table) == ["broker-b"]
    other = Channel(9, "127.0.0.1:9876", "127.0.0.9:50009", "client")
    assert rim.on_channel_destroy("127.0.0.9:50009", other) is None


def test_filter_servers_in_route():
    """A broker's filter servers appear under its address in filterServerTable."""
    rim = RouteInfoManager()
    register(rim, filters=["127.0.0.1:30000"])
    route = rim.pickup_topic_route_data("TopicTest")
    assert route.filter_server_table == {ADDR_A: ["127.0.0.1:30000"]}
    register(rim, filters=[])
    assert rim.filter_server_table == {}


def test_cluster_info_and_topic_lists():
    """ClusterInfo body (docs/reference.md §2.6), topics by cluster, [] for an unknown cluster."""
    rim = RouteInfoManager()
    register(rim, "broker-b", ADDR_B, w=wrapper(B=(1, 1, 6)))
    register(rim, "broker-a", ADDR_A, w=wrapper(A=(1, 1, 6)))
    register(rim, "broker-c", "127.0.0.4:10911", w=wrapper(C=(1, 1, 6)), cluster="Other")
    assert rim.get_all_cluster_info().encode() == (
        b'{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911"},'
        b'"brokerName":"broker-a","cluster":"DefaultCluster"},"broker-b":{"brokerAddrs":'
        b'{0:"127.0.0.2:10911"},"brokerName":"broker-b","cluster":"DefaultCluster"},'
        b'"broker-c":{"brokerAddrs":{0:"127.0.0.4:10911"},"brokerName":"broker-c",'
        b'"cluster":"Other"}},"clusterAddrTable":{"DefaultCluster":["broker-a","broker-b"],'
        b'"Other":["broker-c"]}}'
    )
    assert rim.get_topics_by_cluster("DefaultCluster") == ["A", "B"]
    assert rim.get_topics_by_cluster("nope") == []
    assert encode_topic_list(rim.get_all_topic_list()) == b'{"topicList":["A","B","C"]}'


def test_topic_list_in_java_hash_set_order():
    """GET_ALL_TOPIC_LIST_FROM_NAMESERVER's ``TopicList#topicList`` is a HashSet: the
    order below is what a real 4.9.3 name server answered for these 18 topics (the
    conformance run's admin-namesrv/topics/topic_list step), not alphabetical."""
    java = ["cf_lp", "%RETRY%cf_hk_group", "BenchmarkTest", "OFFSET_MOVED_EVENT", "TBW102",
            "SELF_TEST_TOPIC", "DefaultCluster", "SCHEDULE_TOPIC_XXXX", "cf_adm_82",
            "DefaultCluster_REPLY_TOPIC", "cf_sched", "cf_adm", "broker-a", "%DLQ%cf_rt_group",
            "cf_rt", "%RETRY%cf_rt_nosuch_%", "cf_hk", "%RETRY%cf_rt_group"]  # fmt: skip
    rim = RouteInfoManager()
    register(rim, w=wrapper(**{t: (1, 1, 6) for t in sorted(java)}))
    assert rim.get_all_topic_list() == java
    assert rim.get_topics_by_cluster("DefaultCluster") == java
    body = encode_topic_list(rim.get_all_topic_list())
    assert body == ('{"topicList":["' + '","'.join(java) + '"]}').encode()


def test_auto_created_topic_routes_to_one_broker_only():
    """mechanisms.md "Topic auto-creation": the broker that auto-creates a topic re-registers; the route has only it."""
    rim = RouteInfoManager()
    register(rim, "broker-a", ADDR_A, w=wrapper(1, TBW102=(8, 8, 7)))
    register(rim, "broker-b", ADDR_B, w=wrapper(1, TBW102=(8, 8, 7)))
    rim.tracer = tracer = FakeTracer()
    register(rim, "broker-a", ADDR_A, w=wrapper(2, TBW102=(8, 8, 7), NewTopic=(4, 4, 6)))
    route = rim.pickup_topic_route_data("NewTopic")
    assert [q.broker_name for q in route.queue_datas] == ["broker-a"]
    assert [b.broker_name for b in route.broker_datas] == ["broker-a"]
    [(component, step, fields)] = tracer.events
    assert (component, step) == ("RouteInfoManager.registerBroker", "refresh")
    assert fields["new_topics"] == ["NewTopic"] and fields["changed_topics"] == []


def test_query_data_version_and_keepalive():
    """isBrokerTopicConfigChanged compares DataVersions; the timestamp refresh keeps it alive."""
    rim = RouteInfoManager()
    register(rim, w=wrapper(3, T=(1, 1, 6)), now=0)
    same = DataVersion(1_650_000_000_000, 3)
    assert rim.is_broker_topic_config_changed(ADDR_A, same) is False
    assert rim.is_broker_topic_config_changed(ADDR_A, DataVersion(1_650_000_000_000, 4)) is True
    assert rim.is_broker_topic_config_changed(ADDR_B, same) is True
    rim.update_broker_info_update_timestamp(ADDR_A, 100_000)
    assert rim.scan_not_active_broker(200_000) == []
    assert rim.query_broker_topic_config(ADDR_A) == same


def test_snapshot_plain_dicts():
    """snapshot() gives sorted plain dicts of the five tables."""
    rim = RouteInfoManager()
    register(rim, now=42)
    snap = rim.snapshot()
    assert snap["topic_queue_table"] == {
        "TopicTest": [
            {
                "brokerName": "broker-a",
                "perm": 6,
                "readQueueNums": 4,
                "topicSysFlag": 0,
                "writeQueueNums": 4,
            }
        ]
    }
    assert snap["cluster_addr_table"] == {"DefaultCluster": ["broker-a"]}
    assert snap["broker_live_table"][ADDR_A]["last_update_timestamp"] == 42
    assert snap["broker_live_table"][ADDR_A]["data_version"] == {
        "counter": 1,
        "timestamp": 1_650_000_000_000,
    }


def test_system_topic_list_is_cluster_and_broker_names():
    """RouteInfoManager#getSystemTopicList: cluster names + brokerNames; none registered → no addr."""
    rim = RouteInfoManager()
    assert rim.get_system_topic_list() == ([], None)
    register(rim)
    register(rim, "broker-b", ADDR_B, cluster="OtherCluster")
    topics, _ = rim.get_system_topic_list()
    # Java's HashSet order (TopicList#topicList), as the real 4.9.3 name server answers
    assert topics == ["OtherCluster", "broker-b", "broker-a", "DefaultCluster"]  # checked in jshell


def test_system_topic_list_broker_addr_follows_java_hash_map_order():
    """brokerAddr: first BrokerData of brokerAddrTable (HashMap(128)), first id of its brokerAddrs
    (HashMap<Long,String>), in Java iteration order. Checked with a JDK: HashMap(128) iterates
    broker-d (bucket 70), broker-b (88), broker-c (89), broker-a (91); ids 1 then 16 iterate 16, 1."""
    rim = RouteInfoManager()
    register(rim, "broker-a", ADDR_A)
    register(rim, "broker-b", ADDR_B)
    assert rim.get_system_topic_list()[1] == ADDR_B
    rim = RouteInfoManager()
    register(rim, "broker-a", ADDR_A, broker_id=1)
    register(rim, "broker-a", ADDR_A_SLAVE, broker_id=16)
    assert rim.get_system_topic_list()[1] == ADDR_A_SLAVE


def flagged(counter=1, **topics):
    """A wrapper whose topics are given as name=topicSysFlag (4 queues, perm 6)."""
    table = {n: TopicConfig(n, 4, 4, 6, topic_sys_flag=f) for n, f in topics.items()}
    return TopicConfigSerializeWrapper(table, DataVersion(1_650_000_000_000, counter))


def test_unit_topic_lists_by_topic_sys_flag():
    """getUnitTopics (FLAG_UNIT 1), getHasUnitSubTopicList (FLAG_UNIT_SUB 2),
    getHasUnitSubUnUnitTopicList (2 without 1)."""
    rim = RouteInfoManager()
    register(rim, w=flagged(N=0, U=1, S=2, US=3))
    assert rim.get_unit_topics() == ["U", "US"]
    assert rim.get_has_unit_sub_topic_list() == ["S", "US"]
    assert rim.get_has_unit_sub_un_unit_topic_list() == ["S"]


def test_unit_topic_lists_read_the_first_queue_data_only():
    """Java tests queueDatas.get(0); createAndUpdateQueueData moves a changed QueueData to the end."""
    rim = RouteInfoManager()
    register(rim, "broker-a", ADDR_A, w=flagged(T=0))
    register(rim, "broker-b", ADDR_B, w=flagged(T=1))
    assert rim.get_unit_topics() == []  # broker-a's QueueData is first
    register(rim, "broker-a", ADDR_A, w=flagged(counter=2, T=2))  # changed: removed, appended
    assert list(rim.topic_queue_table["T"]) == ["broker-b", "broker-a"]
    assert rim.get_unit_topics() == ["T"]
    assert rim.get_has_unit_sub_topic_list() == []


def test_slave_registered_before_its_master_learns_nothing_until_the_next_round():
    """No master under the broker name: the slave's result is empty; once the master has
    registered, the slave's next registration carries its addresses (RouteInfoManager#registerBroker)."""
    rim = RouteInfoManager()
    assert register(rim, addr=ADDR_A_SLAVE, broker_id=1) == RegisterBrokerResult()
    register(rim, ha="127.0.0.1:10912")
    assert register(rim, addr=ADDR_A_SLAVE, broker_id=1) == RegisterBrokerResult(
        "127.0.0.1:10912", ADDR_A
    )


def test_master_channel_destroyed_keeps_the_queues_for_the_slave():
    """The master's connection closes: its address goes, the slave's stays, and so do the
    broker name's QueueData (consumers keep the queues, producers see no master)."""
    rim = RouteInfoManager()
    master_channel = Channel(1, ADDR_A, "127.0.0.1:50001", "broker-a")
    register(rim, channel=master_channel)
    register(rim, addr=ADDR_A_SLAVE, broker_id=1)
    assert rim.on_channel_destroy("127.0.0.1:50001", master_channel) == ADDR_A
    route = rim.pickup_topic_route_data("TopicTest")
    assert [(q.broker_name, q.read_queue_nums) for q in route.queue_datas] == [("broker-a", 4)]
    assert [b.broker_addrs for b in route.broker_datas] == [{1: ADDR_A_SLAVE}]
    # a slave that registers now learns no master
    assert register(rim, addr=ADDR_A_SLAVE, broker_id=1) == RegisterBrokerResult()
    # the slave's close too: the broker name and its topics are gone
    assert rim.on_channel_destroy(ADDR_A_SLAVE, None) == ADDR_A_SLAVE
    assert rim.pickup_topic_route_data("TopicTest") is None
