"""AdminBrokerProcessor's group, filter-server, housekeeping, offset, consume-queue and ACL
codes on the simulation driver (the answers a 4.9.3 broker gives: see the admin-broker
conformance group)."""

from broker_cluster import Cluster
from test_client_and_admin import heartbeat

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.subscription_group_manager import PRE_CREATED_GROUPS
from mqlab.common.filter_api import java_string_hash
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.fastjson import dumps, loads
from mqlab.runtime.raw_client import RawClient
from mqlab.store.config import MessageStoreConfig

R = RequestCode


def _json(call):
    return loads(call.response.body.decode())


def _commit(c, group, topic, queue_id, offset):
    ext = {"consumerGroup": group, "topic": topic, "queueId": str(queue_id),
           "commitOffset": str(offset)}  # fmt: skip
    assert c.call(c.broker.broker_addr, R.UPDATE_CONSUMER_OFFSET, ext).code == 0


def _create_topic(c, topic, queues=4):
    ext = {"topic": topic, "defaultTopic": "TBW102", "readQueueNums": str(queues),
           "writeQueueNums": str(queues), "perm": "6", "topicFilterType": "SINGLE_TAG"}  # fmt: skip
    assert c.call(c.broker.broker_addr, R.UPDATE_AND_CREATE_TOPIC, ext).code == 0


def _group_config(group):
    return dumps({"groupName": group, "retryMaxTimes": 3}).encode()


def test_get_all_subscription_group_config(cluster):
    """201: SubscriptionGroupManager#encode: the seven pre-created groups and the version."""
    c = cluster()
    addr = c.broker.broker_addr
    r = c.call(addr, R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    body = _json(r)
    assert sorted(body["subscriptionGroupTable"]) == sorted(PRE_CREATED_GROUPS)
    assert len(PRE_CREATED_GROUPS) == 7
    assert body["dataVersion"]["counter"] == 0
    assert body["subscriptionGroupTable"]["TOOLS_CONSUMER"] == {
        "brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True,
        "consumeFromMinEnable": True, "groupName": "TOOLS_CONSUMER",
        "notifyConsumerIdsChangedEnable": True, "retryMaxTimes": 16, "retryQueueNums": 1,
        "whichBrokerWhenConsumeSlowly": 1,
    }  # fmt: skip
    c.d.advance(250)
    c.call(addr, R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, _group_config("G1"))
    body = _json(c.call(addr, R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG))
    assert len(body["subscriptionGroupTable"]) == 8
    assert body["subscriptionGroupTable"]["G1"]["retryMaxTimes"] == 3
    version = c.broker.subscription_group_manager.data_version
    assert body["dataVersion"] == {"counter": 1, "timestamp": version.timestamp}
    assert 250 < version.timestamp <= c.d.now  # stamped when the update arrived


def test_delete_subscription_group_keeps_or_removes_offsets(cluster):
    """207: the config goes; removeOffset=true also drops the group's offsets on every
    topic; an unknown group is SUCCESS too; no groupName is refused."""
    c = cluster()
    addr = c.broker.broker_addr
    sgm, com = c.broker.subscription_group_manager, c.broker.consumer_offset_manager
    c.call(addr, R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, _group_config("G1"))
    for topic, q, off in (("T1", 0, 5), ("T1", 1, 6), ("T2", 0, 7)):
        _commit(c, "G1", topic, q, off)
    _commit(c, "G11", "T1", 0, 9)  # "G1" is in "T1@G11" too: only exact groups go
    r = c.call(addr, R.DELETE_SUBSCRIPTIONGROUP, {"groupName": "G1"})
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert "G1" not in sgm.subscription_group_table
    assert sgm.data_version.counter == 2
    assert com.query_offset("G1", "T1", 1) == 6  # offsets stay without removeOffset
    c.call(addr, R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, _group_config("G1"))
    r = c.call(addr, R.DELETE_SUBSCRIPTIONGROUP, {"groupName": "G1", "removeOffset": "TRUE"})
    assert r.code == ResponseCode.SUCCESS
    assert sorted(com.offset_table) == ["T1@G11"]
    r = c.call(addr, R.DELETE_SUBSCRIPTIONGROUP, {"groupName": "nosuch", "removeOffset": "true"})
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert sgm.data_version.counter == 4  # a miss does not bump
    r = c.call(addr, R.DELETE_SUBSCRIPTIONGROUP, {})
    assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <groupName> is null")


def test_register_filter_server_is_registered_until_idle(cluster):
    """301: the broker's id and name back; the address rides on REGISTER_BROKER into the
    name server's filterServerTable; 30 s without renewal drop it and close the channel."""
    c = cluster()
    addr = c.broker.broker_addr
    r = c.call(addr, R.REGISTER_FILTER_SERVER, {"filterServerAddr": "127.0.0.1:10099"})
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert r.response.ext_fields == {"brokerId": "0", "brokerName": "broker-a"}
    # a renewal from the same channel keeps the first address
    c.call(addr, R.REGISTER_FILTER_SERVER, {"filterServerAddr": "127.0.0.1:1"})
    fsm = c.broker.filter_server_manager
    assert fsm.build_new_filter_server_list() == ["127.0.0.1:10099"]
    c.broker.register_broker_all()
    c.d.run_until_idle()
    table = c.namesrv.route_info_manager.filter_server_table
    assert table == {addr: ["127.0.0.1:10099"]}
    r = c.call(c.namesrv.address, R.GET_ROUTEINFO_BY_TOPIC, {"topic": "TBW102"})
    assert _json(r)["filterServerTable"] == {addr: ["127.0.0.1:10099"]}
    # scanNotActiveChannel every 10 s: > 30 s idle → removed, channel closed
    c.d.advance(40_001)
    assert fsm.filter_server_table == {}
    c.broker.register_broker_all()
    c.d.run_until_idle()
    assert c.namesrv.route_info_manager.filter_server_table == {}
    r = c.call(addr, R.REGISTER_FILTER_SERVER, {})
    assert (r.code, r.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "the custom field <filterServerAddr> is null",
    )


def test_query_consume_time_span(cluster):
    """303: per write queue the first/last store times, the last consumed one and the
    delay of the next one; -1 where there is no message; TOPIC_NOT_EXIST otherwise."""
    c = cluster()
    addr = c.broker.broker_addr
    _create_topic(c, "TS", 2)
    c.d.advance(1000)
    c.send("TS", queue_id=0)
    c.d.advance(1000)
    c.send("TS", queue_id=0)
    store = c.broker.message_store
    t0 = store.get_message_store_timestamp("TS", 0, 0)
    t1 = store.get_message_store_timestamp("TS", 0, 1)
    assert 1000 < t0 < t1 - 1000
    _commit(c, "G", "TS", 0, 1)
    _commit(c, "G", "TS", 1, 0)  # caught up on the empty queue: delay 0
    c.d.advance(500)
    r = c.call(addr, R.QUERY_CONSUME_TIME_SPAN, {"topic": "TS", "group": "G"})
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    spans = _json(r)["consumeTimeSpanSet"]
    assert spans[0]["messageQueue"] == {"brokerName": "broker-a", "queueId": 0, "topic": "TS"}
    assert {k: spans[0][k] for k in ("minTimeStamp", "maxTimeStamp", "consumeTimeStamp")} == {
        "minTimeStamp": t0, "maxTimeStamp": t1, "consumeTimeStamp": t0,
    }  # fmt: skip
    # the next message to consume is t1's; the broker's now is the arrival (1 ms latency)
    assert spans[0]["delayTime"] == r.sent_at + 1 - t1
    assert spans[1] == {
        "consumeTimeStamp": -1, "consumeTimeStampStr": "1969-12-31#23:59:59:999",
        "delayTime": 0, "maxTimeStamp": -1, "maxTimeStampStr": "1969-12-31#23:59:59:999",
        "messageQueue": {"brokerName": "broker-a", "queueId": 1, "topic": "TS"},
        "minTimeStamp": -1, "minTimeStampStr": "1969-12-31#23:59:59:999",
    }  # fmt: skip
    assert spans[0]["minTimeStampStr"] == f"1970-01-01#00:00:0{t0 // 1000}:{t0 % 1000:03d}"
    # a group without offsets: consume time = first message's, delay = now - (-1)
    r = c.call(addr, R.QUERY_CONSUME_TIME_SPAN, {"topic": "TS", "group": "Other"})
    spans = _json(r)["consumeTimeSpanSet"]
    assert (spans[0]["consumeTimeStamp"], spans[0]["delayTime"]) == (t0, r.sent_at + 1 + 1)
    r = c.call(addr, R.QUERY_CONSUME_TIME_SPAN, {"topic": "Nope", "group": "G"})
    assert (r.code, r.remark) == (ResponseCode.TOPIC_NOT_EXIST, "topic[Nope] not exist")


def test_system_topic_list_from_broker_in_hash_set_order(cluster):
    """305: the order a 4.9.3 broker (DefaultCluster, broker-a, TBW102 on) answered."""
    c = cluster()
    r = c.call(c.broker.broker_addr, R.GET_SYSTEM_TOPIC_LIST_FROM_BROKER)
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert _json(r)["topicList"] == [
        "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC",
        "DefaultCluster_REPLY_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC", "BenchmarkTest",
        "TRANS_CHECK_MAX_TIME_TOPIC", "OFFSET_MOVED_EVENT", "TBW102", "broker-a",
        "SELF_TEST_TOPIC", "DefaultCluster",
    ]  # fmt: skip
    # trace topic on, TBW102 off: 11 topics (TBW102 stays: it is in the static set)
    c2 = Cluster(c.tmp_path / "c2", trace_topic_enable=True, auto_create_topic_enable=False)
    topics = _json(c2.call(c2.broker.broker_addr, R.GET_SYSTEM_TOPIC_LIST_FROM_BROKER))
    assert len(topics["topicList"]) == 12 and "RMQ_SYS_TRACE_TOPIC" in topics["topicList"]


def _small_store_cluster(tmp_path):
    """A cluster whose broker has 1 KiB commit-log files."""
    c = Cluster(tmp_path, brokers=0)
    store = MessageStoreConfig(
        store_path_root_dir=str(tmp_path / "store-a"), mapped_file_size_commit_log=1024
    )
    b = BrokerController(None, store)
    c.d.add_node(b)
    c.brokers.append(b)
    c.d.run_until_idle()
    return c


def test_clean_expired_consume_queue(tmp_path):
    """306: a queue whose last unit lies before the commit log's first file is destroyed
    (a topic left without queues goes too); queues still pointing at live entries stay."""
    c = _small_store_cluster(tmp_path)
    store = c.broker.message_store
    for _ in range(4):
        c.send("Old", body=b"x" * 300)
    for _ in range(2):
        c.send("New", body=b"y" * 300)
    files = [f[1] for f in store.commit_log_files()]
    assert len(files) >= 3
    last_old = store.find_consume_queue("Old", 0).get_last_offset()
    deleted = store.delete_expired_commit_log_files(c.d.now, clean_immediately=True)
    assert deleted == len(files) - 1
    assert store.get_min_phy_offset() == files[-1]
    assert last_old <= files[-1]  # every Old entry was in a deleted file
    new_units = list(store.iter_consume_queue_units("New", 0))
    r = c.call(c.broker.broker_addr, R.CLEAN_EXPIRED_CONSUMEQUEUE)
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert "Old" not in store.consume_queue_table
    assert "Old-0" not in store.commit_log.topic_queue_table
    # New's last unit ends past the first live offset: kept, units unchanged
    assert list(store.iter_consume_queue_units("New", 0)) == new_units


def test_clean_unused_topic(cluster):
    """316: the consume queues of a topic without config go; configured ones stay."""
    c = cluster()
    store = c.broker.message_store
    c.send("TopicTest")
    store.find_consume_queue("Ghost", 3)  # a lookup creates an empty in-memory queue
    r = c.call(c.broker.broker_addr, R.CLEAN_UNUSED_TOPIC)
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert store.get_consume_queue("Ghost", 3) is None
    assert store.get_consume_queue("TopicTest", 0).get_max_offset_in_queue() == 1


def test_query_correction_offset_drops_filter_groups(cluster):
    """308: the smallest offset per queue over all groups; 4.9.3's filterGroups remove
    those groups' offsets from the broker; the compare group is looked up as
    compareGroup@topic."""
    c = cluster()
    addr = c.broker.broker_addr
    for _ in range(3):
        c.send("TC", queue_id=0)
    _commit(c, "GA", "TC", 0, 3)
    _commit(c, "GB", "TC", 0, 1)
    _commit(c, "GB", "TC", 1, 0)
    _commit(c, "GB", "Other", 0, 4)
    r = c.call(addr, R.QUERY_CORRECTION_OFFSET, {"topic": "TC", "compareGroup": "GA"})
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert r.response.body == b'{"correctionOffsets":{0:1,1:0}}'
    ext = {"topic": "TC", "compareGroup": "GA", "filterGroups": "GB"}
    r = c.call(addr, R.QUERY_CORRECTION_OFFSET, ext)
    assert r.response.body == b'{"correctionOffsets":{0:3}}'
    com = c.broker.consumer_offset_manager
    assert (com.query_offset("GB", "TC", 0), com.query_offset("GB", "Other", 0)) == (-1, -1)
    # "compareGroup@topic": an offset table of group TC on topic GA → MAX where larger
    _commit(c, "TC", "GA", 0, 2)
    r = c.call(addr, R.QUERY_CORRECTION_OFFSET, {"topic": "TC", "compareGroup": "GA"})
    assert r.response.body == b'{"correctionOffsets":{0:9223372036854775807}}'


def test_clone_group_offset(cluster):
    """314: copied per topic; skipped for a topic without config or one the online source
    group does not subscribe to (unless offline); no topic → nothing (Java clones the
    header's null topic)."""
    c = cluster()
    addr = c.broker.broker_addr
    com = c.broker.consumer_offset_manager
    _create_topic(c, "TA", 2)
    _create_topic(c, "TB", 1)
    _commit(c, "SRC", "TA", 0, 5)
    _commit(c, "SRC", "TA", 1, 7)
    _commit(c, "SRC", "Gone", 0, 1)  # no topic config

    def clone(dest, topic, offline="false"):
        ext = {"srcGroup": "SRC", "destGroup": dest, "topic": topic, "offline": offline}
        r = c.call(addr, R.CLONE_GROUP_OFFSET, {k: v for k, v in ext.items() if v is not None})
        assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)

    clone("D1", "TA")
    assert com.query_offset_table("D1", "TA") == {0: 5, 1: 7}
    clone("D2", None)
    clone("D3", "Gone")
    assert [k for k in com.offset_table if "@D" in k] == ["TA@D1"]
    client = RawClient("consumer")
    c.d.add_node(client)
    heartbeat(c, client, "c1@1", group="SRC", topics=("TB",))
    clone("D4", "TA")  # SRC online, subscribed to TB only: skipped
    assert com.query_offset_table("D4", "TA") is None
    clone("D5", "TA", "true")
    assert com.query_offset_table("D5", "TA") == {0: 5, 1: 7}


def test_query_consume_queue(cluster):
    """321: raw units from an index; remarks for a missing queue or index; the group's
    subscription and filter data."""
    c = cluster()
    addr = c.broker.broker_addr
    _create_topic(c, "TQ", 2)
    c.send("TQ", body=b"a", tags="TagA")
    c.send("TQ", body=b"bb", tags="TagB")
    c.send("TQ", body=b"ccc")
    units = list(c.broker.message_store.iter_consume_queue_units("TQ", 0))
    assert [u[0] for u in units] == [0, 1, 2]

    def cq(queue_id=0, index=0, count=10, group=None):
        ext = {"topic": "TQ", "queueId": str(queue_id), "index": str(index), "count": str(count)}
        if group:
            ext["consumerGroup"] = group
        return c.call(addr, R.QUERY_CONSUME_QUEUE, ext)

    r = cq()
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, "not set any response code")
    body = _json(r)
    assert body == {
        "maxQueueIndex": 3, "minQueueIndex": 0,
        "queueData": [{"eval": False, "physicOffset": phy, "physicSize": size, "tagsCode": tags}
                      for _, phy, size, tags in units],
    }  # fmt: skip
    assert [u["tagsCode"] for u in body["queueData"]] == [
        java_string_hash("TagA"),
        java_string_hash("TagB"),
        0,
    ]
    assert _json(cq(index=1, count=1))["queueData"][0]["physicOffset"] == units[1][1]
    assert _json(cq(count=0))["queueData"] == []
    r = cq(index=3)
    assert (r.code, r.remark, r.response.body) == (
        ResponseCode.SUCCESS, "Index 3 of 0@TQ is not exist!", None
    )  # fmt: skip
    r = cq(queue_id=1)
    assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "1@TQ is not exist!")
    body = _json(cq(count=1, group="CG"))
    assert body["filterData"] == "CG@TQ is not online!" and "subscriptionData" not in body
    client = RawClient("consumer")
    c.d.add_node(client)
    heartbeat(c, client, "c1@1", group="CG", topics=("TQ",))
    body = _json(cq(count=1, group="CG"))
    assert body["filterData"] == "null"
    assert body["subscriptionData"]["topic"] == "TQ"
    assert body["subscriptionData"]["subString"] == "*"


def test_acl_codes_with_acl_off(cluster):
    """50, 51, 53: their *_FAILED code with no remark (JDK 8's NullPointerException
    message); 52 and 54 get no answer at all (the caller times out)."""
    c = cluster()
    addr = c.broker.broker_addr
    for code, failed in ((R.UPDATE_AND_CREATE_ACL_CONFIG, 209), (R.DELETE_ACL_CONFIG, 210),
                         (R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, 211)):  # fmt: skip
        r = c.call(addr, code, {"accessKey": "ak", "globalWhiteAddrs": "10.*"})
        assert (r.code, r.remark) == (failed, None)
    for code in (R.GET_BROKER_CLUSTER_ACL_INFO, R.GET_BROKER_CLUSTER_ACL_CONFIG):
        call = c.client.send(addr, code, None, None, timeout_ms=3000)
        c.d.run_until_idle()
        assert (call.response, call.error) == (None, None)  # nothing came back
        c.d.advance(3001)
        assert call.response is None
        assert type(call.error).__name__ == "RemotingTimeoutException"


def test_half_topic_created_one_check_interval_after_start(cluster):
    """TransactionalMessageCheckService's first check (60 s after start) creates
    RMQ_SYS_TRANS_HALF_TOPIC 1/1 perm 6 and re-registers: 8 built-in topics, then 9 (a
    4.9.3 broker does the same; mqadmin wipeWritePerm then counts 9)."""
    c = cluster()
    tcm = c.broker.topic_config_manager
    assert len(tcm.topic_config_table) == 8
    assert "RMQ_SYS_TRANS_HALF_TOPIC" not in tcm.topic_config_table
    c.d.advance(59_000)
    assert len(tcm.topic_config_table) == 8
    c.d.advance(1_000)
    tc = tcm.topic_config_table["RMQ_SYS_TRANS_HALF_TOPIC"]
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (1, 1, 6)
    assert (len(tcm.topic_config_table), tcm.data_version.counter) == (9, 1)
    r = c.call(c.namesrv.address, R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
    assert (r.code, r.ext("wipeTopicCount")) == (0, "9")
    c.d.advance(60_000)  # later checks find it: nothing changes
    assert (len(tcm.topic_config_table), tcm.data_version.counter) == (9, 1)


def test_query_consume_queue_sql92_filter_data(cluster):
    """321 for a SQL92 group: filterData is the group's ConsumerFilterData, pretty-printed
    (bornTime = the heartbeat's arrival; the bloom filter bits of "SG#TQ"; the compiled
    expression is not written)."""
    from mqlab.remoting.bodies import ConsumerData, HeartbeatData

    c = cluster(enable_property_filter=True)
    addr = c.broker.broker_addr
    c.send("TQ", body=b"a")
    client = RawClient("consumer")
    c.d.add_node(client)
    sub = {"classFilterMode": False, "codeSet": [], "expressionType": "SQL92",
           "subString": "a > 5", "subVersion": 7, "tagsSet": [], "topic": "TQ"}  # fmt: skip
    body = HeartbeatData(client_id="c1@1", consumer_data_set=(ConsumerData(
        group_name="SG", consume_type="CONSUME_PASSIVELY", message_model="CLUSTERING",
        consume_from_where="CONSUME_FROM_LAST_OFFSET", subscription_data_set=(sub,)),
    )).encode()  # fmt: skip
    hb = client.send(addr, R.HEART_BEAT, None, body)
    c.d.run_until_idle()
    assert hb.code == 0
    ext = {"topic": "TQ", "queueId": "0", "index": "0", "count": "1", "consumerGroup": "SG"}
    got = _json(c.call(addr, R.QUERY_CONSUME_QUEUE, ext))
    born = c.broker.consumer_filter_manager.get("TQ", "SG").born_time
    assert born > 0
    assert got["filterData"] == (
        '{\n\t"bloomFilterData":{\n\t\t"bitNum":112,\n\t\t"bitPos":[59,93,15]\n\t},'
        f'\n\t"bornTime":{born},\n\t"clientVersion":7,\n\t"consumerGroup":"SG",\n\t"dead":false,'
        '\n\t"deadTime":0,\n\t"expression":"a > 5",\n\t"expressionType":"SQL92",'
        '\n\t"topic":"TQ"\n}'
    )
    assert got["subscriptionData"]["expressionType"] == "SQL92"
