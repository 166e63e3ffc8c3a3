"""GET/UPDATE_BROKER_CONFIG, GET_BROKER_RUNTIME_INFO and the stats/connection queries."""

import hashlib

from broker_cluster import Cluster
from test_client_and_admin import heartbeat

from mqlab.broker.broker_configuration import _UNMODELLED_STORE_DEFAULTS
from mqlab.common.properties import load_properties
from mqlab.remoting.bodies import ConsumerData, HeartbeatData, ProducerData
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.fastjson import loads

#: The key order a JDK 17 broker writes for mqlab's defaults: checked once against JDK 17
#: by replaying the same four setProperty sequences and merges in Java (same text).
FIRST_KEYS = ("shortPollingTimeMills,serverSocketBacklog,clientWorkerThreads,"
              "clientAsyncSemaphoreValue,channelNotActiveInterval,enableConsumeQueueExt,"
              "clientSocketSndBufSize,haHousekeepingInterval,consumerManageThreadPoolNums,"
              "transactionCheckInterval,storePathRootDir,autoCreateTopicEnable")  # fmt: skip
ALL_KEYS_MD5 = "4fd9bbefe6552d866fbe3da84f38c710"  # md5 of "key\n" per line, in order


def _config(c):
    r = c.call(c.broker.broker_addr, RequestCode.GET_BROKER_CONFIG)
    assert r.code == ResponseCode.SUCCESS
    return r.response.body.decode(), r.response.ext("version")


def test_get_broker_config_is_the_four_objects_in_jdk17_properties_order(cluster):
    """GET_BROKER_CONFIG (26): 176 key=value lines, Java's key set and order, + version."""
    c = cluster()
    text, version = _config(c)
    lines = text.splitlines()
    keys = [line.split("=", 1)[0] for line in lines]
    assert len(lines) == 176 and text.endswith("\n")
    assert ",".join(keys[:12]) == FIRST_KEYS
    assert hashlib.md5("".join(k + "\n" for k in keys).encode()).hexdigest() == ALL_KEYS_MD5
    props = load_properties(text)
    assert props["listenPort"] == "10911"  # NettyServerConfig, the broker's port
    assert props["brokerIP1"] == "127.0.0.1" and props["namesrvAddr"] == "127.0.0.1:9876"
    assert props["brokerRole"] == "ASYNC_MASTER" and props["flushDiskType"] == "ASYNC_FLUSH"
    assert props["useTLS"] == "false" and props["clientOnewaySemaphoreValue"] == "65535"
    assert props["haTransferBatchSize"] == "32768"  # unmodelled: Java's default
    assert props["storePathCommitLog"] == str(c.broker.store_dir / "commitlog")
    # null fields are left out, as object2Properties does
    assert "rocketmqHome" not in props and "haMasterAddress" not in props
    assert "dLegerGroup" not in props and "totalPhysicalMemorySize" not in props
    assert version == '{"counter":0,"timestamp":0}'


def test_update_broker_config_sets_fields_skips_what_java_skips(cluster):
    """UPDATE_BROKER_CONFIG (25): ints/booleans/strings set, enum names through their
    String setters (checked on a 4.9.3 broker: brokerRole=SLAVE sticks), bad values skipped."""
    c = cluster()
    addr = c.broker.broker_addr
    c.d.advance(500)
    body = (
        b"flushConsumerOffsetInterval=7000\nlongPollingEnable=FALSE\nbrokerRole=SLAVE\n"
        b"defaultQueryMaxNum=12x\nhaTransferBatchSize=5\nnoSuchKey=1\nflushDiskType=sync\n"
    )
    r = c.call(addr, RequestCode.UPDATE_BROKER_CONFIG, None, body)
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    cfg = c.broker.broker_config
    assert (cfg.flush_consumer_offset_interval, cfg.long_polling_enable) == (7000, False)
    assert c.broker.message_store_config.broker_role.name == "SLAVE"
    assert c.broker.message_store_config.flush_disk_type.name == "ASYNC_FLUSH"  # valueOf("sync")
    assert c.broker.message_store_config.default_query_max_num == 32
    text, version = _config(c)
    props = load_properties(text)
    assert props["flushConsumerOffsetInterval"] == "7000"
    assert props["brokerRole"] == "SLAVE"
    assert props["flushDiskType"] == "ASYNC_FLUSH"  # the object's value merged back in
    assert props["defaultQueryMaxNum"] == "32"
    assert props["haTransferBatchSize"] == "5" and "noSuchKey" not in props
    assert version == '{"counter":1,"timestamp":503}'
    # a modelled field since HA replication (mqlab.store.ha): the store's config holds it
    assert c.broker.message_store_config.ha_transfer_batch_size == 5
    assert "haTransferBatchSize" not in _UNMODELLED_STORE_DEFAULTS
    # no body: nothing changes, SUCCESS
    assert c.call(addr, RequestCode.UPDATE_BROKER_CONFIG).code == ResponseCode.SUCCESS
    assert _config(c)[1] == '{"counter":1,"timestamp":503}'


def test_update_broker_permission_reregisters(cluster):
    """brokerPermission: the topic data version moves on and the broker re-registers."""
    c = cluster()
    before = (c.broker.register_count, c.broker.topic_config_manager.data_version.counter)
    r = c.call(c.broker.broker_addr, RequestCode.UPDATE_BROKER_CONFIG, None, b"brokerPermission=4")
    assert r.code == ResponseCode.SUCCESS and c.broker.broker_config.broker_permission == 4
    after = (c.broker.register_count, c.broker.topic_config_manager.data_version.counter)
    assert after == (before[0] + 1, before[1] + 1)


RUNTIME_KEYS = {
    "bootTimestamp", "runtime", "putMessageEntireTimeMax", "putMessageTimesTotal",
    "putMessageFailedTimes", "putMessageSizeTotal", "putMessageDistributeTime",
    "putMessageAverageSize", "dispatchMaxBuffer", "getMessageEntireTimeMax", "putTps",
    "getFoundTps", "getMissTps", "getTotalTps", "getTransferedTps", "commitLogDiskRatio",
    "consumeQueueDiskRatio", "commitLogMinOffset", "commitLogMaxOffset", "brokerVersionDesc",
    "brokerVersion", "msgPutTotalYesterdayMorning", "msgPutTotalTodayMorning",
    "msgPutTotalTodayNow", "msgGetTotalYesterdayMorning", "msgGetTotalTodayMorning",
    "msgGetTotalTodayNow", "sendThreadPoolQueueSize", "sendThreadPoolQueueCapacity",
    "pullThreadPoolQueueSize", "pullThreadPoolQueueCapacity", "queryThreadPoolQueueSize",
    "queryThreadPoolQueueCapacity", "EndTransactionQueueSize",
    "EndTransactionThreadPoolQueueCapacity", "dispatchBehindBytes", "pageCacheLockTimeMills",
    "sendThreadPoolQueueHeadWaitTimeMills", "pullThreadPoolQueueHeadWaitTimeMills",
    "queryThreadPoolQueueHeadWaitTimeMills", "earliestMessageTimeStamp",
    "startAcceptSendRequestTimeStamp", "remainTransientStoreBufferNumbs",
    "remainHowManyDataToFlush", "commitLogDirCapacity",
}  # fmt: skip


def test_broker_runtime_info_counts_puts_and_gets(cluster, tmp_path):
    """GET_BROKER_RUNTIME_INFO (28): KVTable with prepareRuntimeInfo's keys, exact counters."""
    c = cluster()
    c.d.advance(61_000)
    for _ in range(3):
        c.send("TopicTest")  # 127 bytes each
    c.pull("TopicTest", max_msgs=2)
    r = c.call(c.broker.broker_addr, RequestCode.GET_BROKER_RUNTIME_INFO)
    assert r.code == ResponseCode.SUCCESS
    table = loads(r.response.body.decode())["table"]
    path = str(c.broker.store_dir / "commitlog")
    assert set(table) == RUNTIME_KEYS | {f"commitLogDiskRatio_{path}"}
    assert (table["putMessageTimesTotal"], table["msgPutTotalTodayNow"]) == ("3", "3")
    assert (table["putMessageSizeTotal"], table["putMessageAverageSize"]) == ("381", "127.0")
    assert (table["commitLogMinOffset"], table["commitLogMaxOffset"]) == ("0", "381")
    assert table["msgGetTotalTodayNow"] == "2" and table["putMessageFailedTimes"] == "0"
    assert table["runtime"] == "[ 0 days, 0 hours, 1 minutes, 1 seconds ]"
    assert (table["brokerVersionDesc"], table["brokerVersion"]) == ("V4_9_3", "399")
    # pickupStoreTimestamp(minPhyOffset, 2 * maxMessageSize): 381 written bytes are
    # fewer than 8 MiB, so 4.9.3 answers -1 (checked against the real broker)
    assert table["earliestMessageTimeStamp"] == "-1"
    assert table["remainTransientStoreBufferNumbs"] == "2147483647"
    assert table["sendThreadPoolQueueCapacity"] == "10000"
    # 61 one-second samples so far (StoreStatsService#run): the 10 and 60 s figures, not 600.
    # The gets are the transaction check's at 60 s (TransactionalMessageServiceImpl#check: one
    # getMessage of the op queue, one of the half queue, both missing); every getMessage
    # counts, found or not, as in DefaultMessageStore#getMessage
    assert table["putTps"] == "0.0 0.0 "
    assert table["getTotalTps"] == "0.2 0.03333333333333333 0.0"
    # no messages: putMessageTimesTotal is 1 (Java: totalTimes 0 → 1), average 0.0
    fresh = Cluster(tmp_path / "fresh")
    t = loads(fresh.call(fresh.broker.broker_addr, 28).response.body.decode())["table"]
    assert (t["putMessageTimesTotal"], t["putMessageAverageSize"]) == ("1", "0.0")
    assert t["earliestMessageTimeStamp"] == "-1"
    assert t["commitLogMinOffset"] == str(fresh.broker.message_store.get_min_phy_offset())


def test_earliest_message_time_once_8_mib_follow_the_first_entry(cluster):
    """earliestMessageTimeStamp: the first entry's store time once the commit-log file holds
    2 * maxMessageSize (8 MiB) from it (MappedFile#selectMappedBuffer), -1 before."""
    c = cluster()
    c.d.advance(1000)

    def earliest():
        r = c.call(c.broker.broker_addr, RequestCode.GET_BROKER_RUNTIME_INFO)
        return loads(r.response.body.decode())["table"]["earliestMessageTimeStamp"]

    body = b"x" * (1024 * 1024)
    for _ in range(7):
        c.send("TopicBig", body=body)
    assert c.broker.message_store.get_max_phy_offset() < 8 * 1024 * 1024
    assert earliest() == "-1"
    c.send("TopicBig", body=body)
    assert c.broker.message_store.get_max_phy_offset() >= 8 * 1024 * 1024
    first = c.broker.message_store.look_message_by_offset(0).store_timestamp
    assert earliest() == str(first) and 1000 <= first < 1010


def test_topic_stats_and_consume_stats(cluster):
    """GET_TOPIC_STATS_INFO (202) and GET_CONSUME_STATS (208): offsets and store times."""
    c = cluster()
    c.d.advance(1000)
    for q in (0, 0, 1):
        c.send("TopicTest", queue_id=q)
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.GET_TOPIC_STATS_INFO, {"topic": "TopicTest"})
    table = {
        k.to_dict()["queueId"]: v for k, v in loads(r.response.body.decode())["offsetTable"].items()
    }
    store = c.broker.message_store

    def stored(q, o):
        unit = store.find_consume_queue("TopicTest", q).get_unit(o)
        return store.look_message_by_offset(unit[0], unit[1]).store_timestamp

    assert 1000 < stored(0, 0) < stored(0, 1) < stored(1, 0)
    assert table == {
        0: {"lastUpdateTimestamp": stored(0, 1), "maxOffset": 2, "minOffset": 0},
        1: {"lastUpdateTimestamp": stored(1, 0), "maxOffset": 1, "minOffset": 0},
        2: {"lastUpdateTimestamp": 0, "maxOffset": 0, "minOffset": 0},
        3: {"lastUpdateTimestamp": 0, "maxOffset": 0, "minOffset": 0},
    }
    r = c.call(addr, RequestCode.GET_TOPIC_STATS_INFO, {"topic": "Nope"})
    assert (r.code, r.remark) == (ResponseCode.TOPIC_NOT_EXIST, "topic[Nope] not exist")
    c.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET,
           {"consumerGroup": "CG", "topic": "TopicTest", "queueId": "0", "commitOffset": "1"})  # fmt: skip
    r = c.call(addr, RequestCode.GET_CONSUME_STATS, {"consumerGroup": "CG"})
    body = loads(r.response.body.decode())
    assert body["consumeTps"] == 0.0
    stats = {k.to_dict()["queueId"]: v for k, v in body["offsetTable"].items()}
    assert stats[0] == {"brokerOffset": 2, "consumerOffset": 1, "lastTimestamp": stored(0, 0)}
    assert stats[1] == {"brokerOffset": 1, "consumerOffset": 0, "lastTimestamp": 0}
    assert len(stats) == 4
    # HashMap<MessageQueue, ...> order on the wire: queue 3, 2, 1, 0 for these hashes
    assert r.response.body.decode().index('"queueId":3') < r.response.body.decode().index(
        '"queueId":0'
    )


def test_consumer_and_producer_connections(cluster):
    """GET_CONSUMER_CONNECTION_LIST (203) and GET_PRODUCER_CONNECTION_LIST (204)."""
    c = cluster()
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": "CG"})
    assert (r.code, r.remark) == (
        ResponseCode.CONSUMER_NOT_ONLINE,
        "the consumer group[CG] not online",
    )
    heartbeat(c, c.client, "127.0.0.1@c1")
    r = c.call(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": "CG"})
    body = loads(r.response.body.decode())
    assert [x["clientId"] for x in body["connectionSet"]] == ["127.0.0.1@c1"]
    assert body["connectionSet"][0]["language"] == "JAVA"
    assert (body["consumeType"], body["messageModel"]) == ("CONSUME_PASSIVELY", "CLUSTERING")
    assert list(body["subscriptionTable"]) == ["TopicTest"]
    r = c.call(addr, RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": "PG"})
    assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the producer group[PG] not exist")
    hb = HeartbeatData(client_id="127.0.0.1@p1", producer_data_set=(ProducerData(group_name="PG"),))
    c.call(addr, RequestCode.HEART_BEAT, None, hb.encode())
    r = c.call(addr, RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": "PG"})
    conns = loads(r.response.body.decode())["connectionSet"]
    assert [(x["clientId"], x["language"]) for x in conns] == [("127.0.0.1@p1", "JAVA")]


def _query(c, key, max_num="32", begin="0", end=str(2**63 - 1), unique=False, topic="TopicTest"):
    ext = {"topic": topic, "key": key, "maxNum": max_num, "beginTimestamp": begin,
           "endTimestamp": end}  # fmt: skip
    if unique:
        ext["_UNIQUE_KEY_QUERY"] = "true"
    return c.call(c.broker.broker_addr, RequestCode.QUERY_MESSAGE, ext)


def test_query_message_by_key_answers_the_stored_entries(cluster):
    """QUERY_MESSAGE (12): the entries under topic#key concatenated oldest first, with the
    index's last update; none → QUERY_NOT_FOUND (22)."""
    from mqlab.common.message_decoder import decodes as decode_messages

    c = cluster()
    for i in range(4):
        props = {"KEYS": f"order-{i % 2} all", "UNIQ_KEY": f"7F0000010000{i:020X}"}
        c.send("TopicTest", body=f"m{i}".encode(), props=props)
    store = c.broker.message_store
    r = _query(c, "order-1")
    assert r.code == ResponseCode.SUCCESS and r.remark is None
    msgs = decode_messages(r.response.body)
    assert [m.body for m in msgs] == [b"m1", b"m3"]
    last = store.index_service.index_file_list[-1].index_header
    assert r.ext("indexLastUpdateTimestamp") == str(last.end_timestamp)
    assert r.ext("indexLastUpdatePhyoffset") == str(msgs[-1].commit_log_offset)
    # maxNum 3 of 4: the chain is walked newest first, then sorted (as a 4.9.3 broker does)
    assert [m.body for m in decode_messages(_query(c, "all", max_num="3").response.body)] == [
        b"m1",
        b"m2",
        b"m3",
    ]
    r = _query(c, "nope")
    assert (r.code, r.remark) == (
        ResponseCode.QUERY_NOT_FOUND,
        "can not find message, maybe time range not correct",
    )
    # queryMessage copies the index's last update only from a lookup that found offsets
    assert (r.ext("indexLastUpdateTimestamp"), r.ext("indexLastUpdatePhyoffset")) == ("0", "0")
    # by unique key (queryMsgByUniqueKey): maxNum becomes defaultQueryMaxNum (32)
    uniq = msgs[0].properties["UNIQ_KEY"]
    r = _query(c, uniq, max_num="0", unique=True)
    assert [m.body for m in decode_messages(r.response.body)] == [b"m1"]
    assert _query(c, uniq, max_num="0").code == ResponseCode.QUERY_NOT_FOUND  # maxNum 0
    r = c.call(c.broker.broker_addr, RequestCode.QUERY_MESSAGE, {"topic": "TopicTest"})
    assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <key> is null")


def test_view_message_by_id_is_the_raw_entry(cluster):
    """VIEW_MESSAGE_BY_ID (33): the stored entry at the offset; else SYSTEM_ERROR."""
    c = cluster()
    c.send("TopicTest", body=b"x")
    c.send("TopicTest", body=b"y")
    store = c.broker.message_store
    second = store.find_consume_queue("TopicTest", 0).get_unit(1)[0]
    r = c.call(c.broker.broker_addr, RequestCode.VIEW_MESSAGE_BY_ID, {"offset": str(second)})
    assert r.code == ResponseCode.SUCCESS and r.response.body == store.select_one_message_by_offset(
        second
    )
    r = c.call(c.broker.broker_addr, RequestCode.VIEW_MESSAGE_BY_ID, {"offset": "99999"})
    assert (r.code, r.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "can not find message by the offset, 99999",
    )


def _hb(c, client, client_id, version):
    body = HeartbeatData(
        client_id=client_id,
        consumer_data_set=(
            ConsumerData(group_name="CG", consume_type="CONSUME_PASSIVELY",
                         message_model="CLUSTERING", consume_from_where="CONSUME_FROM_LAST_OFFSET",
                         subscription_data_set=()),
        ),
    ).encode()  # fmt: skip
    client.send(c.broker.broker_addr, RequestCode.HEART_BEAT, None, body, version=version)
    c.d.run_until_idle()


def _reset(c, timestamp, force="true", group="CG", topic="TopicTest", language="JAVA"):
    ext = {"topic": topic, "group": group, "timestamp": str(timestamp), "isForce": force}
    call = c.client.send(c.broker.broker_addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext,
                         language=language)  # fmt: skip
    c.d.run_until_idle()
    return call


def _offsets(body):
    return {k.to_dict()["queueId"]: v for k, v in loads(body.decode())["offsetTable"].items()}


def test_invoke_broker_to_reset_offset(cluster):
    """INVOKE_BROKER_TO_RESET_OFFSET (222): offsets by time per write queue, isForce rule,
    RESET_CONSUMER_CLIENT_OFFSET (220) oneway to each consumer, the table in the reply."""
    c = cluster()
    addr = c.broker.broker_addr
    c.d.advance(1000)
    for q in (0, 0, 0, 1):
        c.send("TopicTest", queue_id=q)
    c.d.advance(5000)
    t = c.d.now
    c.send("TopicTest", queue_id=0)
    for q, off in ((0, 4), (1, 1), (2, 0), (3, 0)):
        c.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET,
               {"consumerGroup": "CG", "topic": "TopicTest", "queueId": str(q), "commitOffset": str(off)})  # fmt: skip
    r = _reset(c, t)
    assert (r.code, r.remark) == (
        ResponseCode.CONSUMER_NOT_ONLINE,
        f"Consumer not online, so can not reset offset, Group: CG Topic: TopicTest Timestamp: {t}",
    )
    _hb(c, c.client, "127.0.0.1@c1", version=399)
    n = len(c.client.inbound)
    r = _reset(c, t)
    # a 4.9.3 broker answers SUCCESS with createResponseCommand's remark still in place
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, "not set any response code")
    # by time (ConsumeQueue#getOffsetInQueueByTime: the unit stored nearest to t):
    # queue 0 → 3 (stored at t), queue 1 → 0 (its only message, before t), empty → 0
    assert _offsets(r.response.body) == {0: 3, 1: 0, 2: 0, 3: 0}
    [note] = c.client.inbound[n:]
    assert note.request.code == RequestCode.RESET_CONSUMER_CLIENT_OFFSET and note.request.is_oneway
    assert list(note.request.ext_fields.items()) == [  # HashMap order, as a 4.9.3 broker
        ("topic", "TopicTest"),
        ("isForce", "false"),
        ("group", "CG"),
        ("timestamp", str(t)),
    ]
    assert _offsets(note.request.body) == {0: 3, 1: 0, 2: 0, 3: 0}
    # not forced: only offsets below the committed one move; -1 = the max offset
    assert _offsets(_reset(c, t, force="false").response.body) == {0: 3, 1: 0, 2: 0, 3: 0}
    assert _offsets(_reset(c, -1, force="false").response.body) == {0: 4, 1: 1, 2: 0, 3: 0}
    assert _offsets(_reset(c, -1).response.body) == {0: 4, 1: 1, 2: 0, 3: 0}
    # the broker's own offsets do not move: the clients commit the reset
    assert c.broker.consumer_offset_manager.query_offset("CG", "TopicTest", 0) == 4
    # a CPP caller gets ResetOffsetBodyForC to its consumers: a list of MessageQueueForC
    n = len(c.client.inbound)
    assert _reset(c, t, language="CPP").code == ResponseCode.SUCCESS
    body = loads(c.client.inbound[n].request.body.decode())
    pairs = sorted((e["queueId"], e["offset"]) for e in body["offsetTable"])
    assert pairs == [(0, 3), (1, 0), (2, 0), (3, 0)]
    assert sorted(body["offsetTable"][0]) == ["brokerName", "offset", "queueId", "topic"]
    r = _reset(c, t, group="NoOffsets")
    assert (r.code, r.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "THe consumer group <NoOffsets> not exist",
    )
    r = _reset(c, t, topic="Nope")
    assert (r.code, r.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "[reset-offset] reset offset failed, no topic in this broker. topic=Nope",
    )


def test_query_topic_consume_by_who(cluster):
    """QUERY_TOPIC_CONSUME_BY_WHO (300): subscribed groups plus groups with offsets."""
    c = cluster()
    addr = c.broker.broker_addr
    heartbeat(c, c.client, "127.0.0.1@c1")  # CG subscribes TopicTest
    c.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET,
           {"consumerGroup": "Old", "topic": "TopicTest", "queueId": "0", "commitOffset": "0"})  # fmt: skip
    r = c.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": "TopicTest"})
    assert sorted(loads(r.response.body.decode())["groupList"]) == ["CG", "Old"]
    r = c.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": "None"})
    assert loads(r.response.body.decode()) == {"groupList": []}


def test_store_stats_tps_over_10_60_600_one_second_samples(cluster):
    """StoreStatsService: 20 puts and 4 pulls (2 found, 2 missed) between two samples."""
    c = cluster()
    c.d.advance(5_500 - c.d.now)  # samples at 1 s, 2 s ... (wait 1 s, then sample)
    for _ in range(20):
        c.send("TopicTps")
    for offset in (0, 10, 20, 20):
        assert c.pull("TopicTps", offset=offset, max_msgs=10, sys_flag=4).code in (0, 19, 20)
    addr = c.broker.broker_addr

    def table():
        r = c.call(addr, RequestCode.GET_BROKER_RUNTIME_INFO)
        return loads(r.response.body.decode())["table"]

    t = table()  # 5 samples: no 10 s figure yet
    assert (t["putTps"], t["getFoundTps"], t["getTotalTps"]) == ("  ", "  ", "0.0 0.0 0.0")
    c.d.advance(15_900 - c.d.now)  # 15 samples: the last 10 hold the 20 puts
    t = table()
    assert t["putTps"] == "2.0  "  # 20 puts over 10 s
    assert t["getFoundTps"] == "0.2  " and t["getMissTps"] == "0.2  "
    assert t["getTotalTps"] == "0.4 0.0 0.0"
    assert t["getTransferedTps"] == "2.0  "  # 10 + 10 messages handed out
    c.d.advance(65_900 - c.d.now)  # 65 samples: out of the 10 s window, in the 60 s one
    t = table()
    assert t["putTps"] == "0.0 0.3333333333333333 "


def test_a_dledger_brokers_runtime_info_keys_its_disk_ratio_by_the_dledger_data_path():
    """On DLedger the commit log's files are the node's DLedger data files, and
    ``DefaultMessageStore#getStorePathPhysic`` says so: the key is
    ``commitLogDiskRatio_<storeBaseDir>/dledger-<selfId>/data``, as a real 4.9.3 DLedger
    broker writes it (``<store>/dledger-n0/data``, 2026-11-30); otherwise the same keys."""
    from mqlab.lab import Lab

    with Lab(seed=5, dledger=3) as lab:
        lab.run_until_idle(max_ms=30_000)
        assert len(lab.brokers) == 3
        for b in lab.brokers:
            call = lab.request(b.name, "GET_BROKER_RUNTIME_INFO")
            table = loads(call.response.body.decode())["table"]
            store = b.message_store
            data = store.commit_log.dledger_server.config.get_data_store_path()
            assert data.endswith(f"/dledger-{store.message_store_config.d_leger_self_id}/data")
            assert store.get_store_path_physic() == data
            assert f"commitLogDiskRatio_{data}" in table
            assert not any(k.endswith("/commitlog") for k in table), sorted(table)
