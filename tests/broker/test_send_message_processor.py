"""SEND_MESSAGE(_V2) through the real codec and transport (mechanisms.md "Send", docs/reference.md §10.6)."""

from mqlab.common.message_decoder import decodes
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.headers import GetRouteInfoRequestHeader

FAQ_TOPIC = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


def test_auto_create_topic_from_tbw102_has_4_queues_perm_6(cluster):
    """An unknown topic is created from TBW102 with min(4, 8) = 4 queues and perm 6 (RW)."""
    c = cluster()
    r = c.send("TopicTest", b"hi")
    assert r.code == ResponseCode.SUCCESS
    assert (r.ext("queueId"), r.ext("queueOffset")) == ("0", "0")
    assert r.ext("MSG_REGION") == "DefaultRegion" and r.ext("TRACE_ON") == "true"
    tc = c.broker.topic_config_manager.select_topic_config("TopicTest")
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (4, 4, 6)
    # The broker re-registered: the name server routes the new topic (4 queues, perm 6).
    route = c.call(
        "127.0.0.1:9876",
        RequestCode.GET_ROUTEINFO_BY_TOPIC,
        GetRouteInfoRequestHeader(topic="TopicTest").to_ext_fields(),
    )
    assert route.code == ResponseCode.SUCCESS
    assert (
        b'"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4' in route.response.body
    )


def test_auto_create_off_gives_topic_not_exist(cluster):
    """autoCreateTopicEnable=false → TOPIC_NOT_EXIST (17) with RocketMQ's remark."""
    c = cluster(auto_create_topic_enable=False)
    r = c.send("TopicTest")
    assert r.code == ResponseCode.TOPIC_NOT_EXIST == 17
    assert r.remark == "topic[TopicTest] not exist, apply first please!" + FAQ_TOPIC


def test_illegal_topic_names_get_system_error(cluster):
    """`a/b`, a space, 128 chars → SYSTEM_ERROR (1) with the validator's remark; % and | are legal."""
    c = cluster()
    illegal = "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    for bad in ("a/b", "a b"):
        r = c.send(bad)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, illegal)
    r = c.send("x" * 128)
    assert (r.code, r.remark) == (1, "The specified topic is longer than topic max length.")
    assert c.send("x" * 127).code == ResponseCode.SUCCESS
    assert c.send("a%b|c").code == ResponseCode.SUCCESS


def test_schedule_topic_is_not_allowed(cluster):
    """SCHEDULE_TOPIC_XXXX → NO_PERMISSION (16)."""
    c = cluster()
    r = c.send("SCHEDULE_TOPIC_XXXX")
    assert (r.code, r.remark) == (16, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.")


def test_queue_id_out_of_range(cluster):
    """queueId 8 on a 4-queue topic → SYSTEM_ERROR with TopicConfig#toString in the remark."""
    c = cluster()
    c.send("TopicTest")
    r = c.send("TopicTest", queue_id=8)
    assert r.code == ResponseCode.SYSTEM_ERROR
    assert r.remark.startswith(
        "request queueId[8] is illegal, TopicConfig [topicName=TopicTest, readQueueNums=4, "
        "writeQueueNums=4, perm=RW-, topicFilterType=SINGLE_TAG, topicSysFlag=0, order=false] "
        "Producer: 127.0.0.1:"
    )


def test_stored_bytes_omit_wait_and_add_cluster(cluster):
    """The stored properties drop WAIT (9 bytes saved) and add CLUSTER=DefaultCluster."""
    c = cluster()
    c.send("TopicTest", b"body", tags="TagA")
    p = c.pull("TopicTest")
    [m] = decodes(p.response.body)
    assert m.properties == {"TAGS": "TagA", "CLUSTER": "DefaultCluster"}
    assert (m.body, m.queue_offset, m.commit_log_offset) == (b"body", 0, 0)
    # messageProperties2String iterates the HashMap: CLUSTER's bucket (12) before TAGS' (14)
    [(_, _, raw)] = c.broker.message_store.iter_commit_log_entries()
    assert raw.endswith(b"\x00\x20CLUSTER\x01DefaultCluster\x02TAGS\x01TagA")


def test_stored_properties_keep_the_table_size_wait_had(cluster):
    """12 client properties + CLUSTER: origProps.remove(WAIT) leaves the HashMap's table at
    32 buckets, so the 12 stored pairs come in that order (as a JVM prints it), not in the
    16-bucket order 12 keys would have (SendMessageProcessor.java:296-303)."""
    c = cluster()
    user = {f"k{i}": f"v{i}" for i in range(1, 9)}
    c.send("TopicTest", tags="TagA", props={"KEYS": "order-1", "UNIQ_KEY": "U", **user})
    [(_, _, raw)] = c.broker.message_store.iter_commit_log_entries()
    stored = "".join(f"{k}\x01{v}\x02" for k, v in user.items())
    stored += "KEYS\x01order-1\x02UNIQ_KEY\x01U\x02CLUSTER\x01DefaultCluster\x02TAGS\x01TagA"
    assert raw.endswith(len(stored).to_bytes(2, "big") + stored.encode())


def test_put_message_status_to_response_code(cluster):
    """Each store status becomes RocketMQ's response code and remark (docs/reference.md §10.6 step 10)."""
    c = cluster()
    store = c.broker.message_store
    illegal = (
        "the message is illegal, maybe msg body or properties length not matched. msg body "
        "length limit 128k, msg properties length limit 32k."
    )
    r = c.send("T1", b"x" * (4 * 1024 * 1024))
    assert (r.code, r.remark) == (ResponseCode.MESSAGE_ILLEGAL, illegal)
    store.os_page_cache_busy = True
    r = c.send("T1", b"x")
    assert (r.code, r.remark) == (1, "[PC_SYNCHRONIZED]broker busy, start flow control for a while")
    store.os_page_cache_busy = False
    store.writeable = False
    r = c.send("T1", b"x")
    assert r.code == ResponseCode.SERVICE_NOT_AVAILABLE == 14
    assert r.remark == (
        "service not available now. It may be caused by one of the following reasons: the "
        "broker's disk is full [CL:  0.00 CQ:  0.00 INDEX:  0.00], messages are put to the "
        "slave, message store has been shut down, etc."
    )
    store.disk_used_ratio = 0.93  # SendMessageProcessor#diskUtil, "%5.2f"
    assert "[CL:  0.93 CQ:  0.93 INDEX:  0.93]" in c.send("T1", b"x").remark
    store.writeable = True
    assert c.send("T1", b"x").code == ResponseCode.SUCCESS


def test_send_back_goes_to_retry_topic_with_delay_level_3(cluster):
    """CONSUMER_SEND_MSG_BACK: %RETRY%group, DELAY = 3 + reconsumeTimes, reconsumeTimes + 1."""
    c = cluster()
    c.send("TopicTest", b"fail me", tags="TagA")
    r = c.call(
        c.broker.broker_addr,
        RequestCode.CONSUMER_SEND_MSG_BACK,
        {"offset": "0", "group": "CG", "delayLevel": "0", "originTopic": "TopicTest"},
    )
    assert r.code == ResponseCode.SUCCESS
    store = c.broker.message_store
    # Parked in SCHEDULE_TOPIC_XXXX queue 2 (level 3 = 10 s) with REAL_TOPIC = %RETRY%CG.
    assert store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 2) == 1
    assert store.get_max_offset_in_queue("%RETRY%CG", 0) == 0
    c.d.advance(11_000)
    assert store.get_max_offset_in_queue("%RETRY%CG", 0) == 1
    p = c.pull("%RETRY%CG", offset=0)
    [m] = decodes(p.response.body)
    assert m.reconsume_times == 1
    assert m.properties["RETRY_TOPIC"] == "TopicTest"
    assert m.properties["DELAY"] == "3"
    assert m.properties["ORIGIN_MESSAGE_ID"]


def test_send_to_retry_topic_at_16_goes_to_dlq(cluster):
    """handleRetryAndDLQ: reconsumeTimes 16 ≥ retryMaxTimes 16 → %DLQ%group (1 queue, perm 6)."""
    c = cluster()
    assert c.send("%RETRY%CG", b"x", reconsume_times=15).code == ResponseCode.SUCCESS
    assert c.broker.message_store.get_max_offset_in_queue("%RETRY%CG", 0) == 1
    assert c.send("%RETRY%CG", b"y", reconsume_times=16).code == ResponseCode.SUCCESS
    assert c.broker.message_store.get_max_offset_in_queue("%DLQ%CG", 0) == 1
    tc = c.broker.topic_config_manager.select_topic_config("%DLQ%CG")
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (1, 1, 6)


def test_send_back_of_a_16_times_reconsumed_message_goes_to_dlq(cluster):
    """CONSUMER_SEND_MSG_BACK: reconsumeTimes 15 → retry at level 18; 16 → %DLQ%CG at once."""
    c = cluster()
    store = c.broker.message_store
    c.send("TopicTest", b"r15", reconsume_times=15)  # commit-log offset 0
    second = store.get_max_phy_offset()
    c.send("TopicTest", b"r16", reconsume_times=16)
    back = {"group": "CG", "delayLevel": "0"}
    r = c.call(c.broker.broker_addr, RequestCode.CONSUMER_SEND_MSG_BACK, {"offset": "0", **back})
    assert r.code == ResponseCode.SUCCESS
    assert store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 17) == 1  # level 3 + 15 = 18
    r = c.call(
        c.broker.broker_addr, RequestCode.CONSUMER_SEND_MSG_BACK, {"offset": str(second), **back}
    )
    assert r.code == ResponseCode.SUCCESS
    assert store.get_max_offset_in_queue("%DLQ%CG", 0) == 1
    [m] = decodes(c.pull("%DLQ%CG", group="DLQREADER", sys_flag=4).response.body)
    assert (m.body, m.reconsume_times, m.properties["RETRY_TOPIC"]) == (b"r16", 17, "TopicTest")


def test_send_back_unknown_offset(cluster):
    """A commit-log offset that holds no message → SYSTEM_ERROR 'look message by offset failed'."""
    c = cluster()
    r = c.call(
        c.broker.broker_addr,
        RequestCode.CONSUMER_SEND_MSG_BACK,
        {"offset": "999", "group": "CG", "delayLevel": "0"},
    )
    assert (r.code, r.remark) == (1, "look message by offset failed, 999")


def test_v2_missing_field_is_system_error(cluster):
    """SEND_MESSAGE_V2 without field 'b' → SYSTEM_ERROR; the exception leaves before
    preSend, so no MSG_REGION / TRACE_ON. The remark is RemotingHelper#exceptionSimpleDesc
    of the RemotingCommandException thrown by AbstractSendMessageProcessor#checkNotNull:
    the exception, then its first stack frame (the real 4.9.3 broker's answer)."""
    c = cluster()
    r = c.call(c.broker.broker_addr, RequestCode.SEND_MESSAGE_V2, {"a": "PG"}, b"x")
    assert (r.code, r.response.ext_fields) == (1, {})
    assert r.remark == (
        "org.apache.rocketmq.remoting.exception.RemotingCommandException: the custom field "
        "<b> is null, org.apache.rocketmq.broker.processor.AbstractSendMessageProcessor."
        "checkNotNull(AbstractSendMessageProcessor.java:375)"
    )
    r = c.call(c.broker.broker_addr, RequestCode.SEND_BATCH_MESSAGE, None, b"x")
    assert r.remark == (
        "org.apache.rocketmq.remoting.exception.RemotingCommandException: the ext fields is "
        "null, org.apache.rocketmq.broker.processor.AbstractSendMessageProcessor."
        "decodeSendMessageHeaderV2(AbstractSendMessageProcessor.java:311)"
    )


def test_two_brokers_auto_create_pitfall(cluster):
    """mechanisms.md "Send" §2.1.3: the first send creates the topic on one broker only; its route converges."""
    c = cluster(brokers=2)
    r = c.send("NewTopic", broker=c.brokers[0])
    assert r.code == ResponseCode.SUCCESS
    route = c.call("127.0.0.1:9876", RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "NewTopic"})
    body = route.response.body.decode()
    assert '"brokerName":"broker-a"' in body and '"brokerName":"broker-b"' not in body
    assert c.brokers[1].topic_config_manager.select_topic_config("NewTopic") is None


def test_batch_stores_own_properties_then_the_batch_properties(cluster):
    """SEND_BATCH_MESSAGE: each entry stores its own properties + \\u0002 + the batch's (docs/reference.md §4.6)."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import decode_stored_message, encode_batch_body

    c = cluster()
    c.send("TopicTest")  # create the topic
    msgs = [Message("TopicTest", f"b{i}", tags="TagA", properties={"k": str(i)}) for i in range(3)]
    ext = {"a": "PG", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "1", "f": "0", "g": "0",
           "h": "0", "i": "WAIT\x01true", "m": "true"}  # fmt: skip
    r = c.call(c.broker.broker_addr, RequestCode.SEND_BATCH_MESSAGE, ext, encode_batch_body(msgs))
    assert (r.code, r.ext("queueId"), r.ext("queueOffset")) == (0, "1", "0")
    entries = [raw for _, _, raw in c.broker.message_store.iter_commit_log_entries()][1:]
    stored = [decode_stored_message(raw) for raw in entries]
    assert [(m.queue_id, m.queue_offset, m.body) for m in stored] == [
        (1, 0, b"b0"), (1, 1, b"b1"), (1, 2, b"b2")]  # fmt: skip
    own = "k\x010\x02WAIT\x01true\x02TAGS\x01TagA"  # both parts in HashMap order
    raw_props = entries[0][-len(own) - len("\x02CLUSTER\x01DefaultCluster\x02WAIT\x01true") :]
    assert raw_props.decode() == own + "\x02CLUSTER\x01DefaultCluster\x02WAIT\x01true"
    assert stored[0].properties == {
        "k": "0",
        "TAGS": "TagA",
        "WAIT": "true",
        "CLUSTER": "DefaultCluster",
    }


def _batch_ext(topic="TopicTest", props="WAIT\x01true", batch="true"):
    return {"a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0",
            "h": "0", "i": props, "m": batch}  # fmt: skip


def test_batch_delay_is_read_from_the_header_only(cluster):
    """asyncSendBatchMessage: DELAY in the header's properties → MESSAGE_ILLEGAL
    (CommitLog.java:749); DELAY inside one message of the body is stored as a property."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import encode_batch_body

    c = cluster()
    body = encode_batch_body(
        [Message("TopicTest", b"a", properties={"DELAY": "3"}), Message("TopicTest", b"b")]
    )
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext(props="DELAY\x013"), body)
    assert r.code == ResponseCode.MESSAGE_ILLEGAL
    assert r.remark.startswith("the message is illegal")
    r = c.call(addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext(), body)
    assert (r.code, r.ext("queueOffset")) == (ResponseCode.SUCCESS, "0")
    [m0, m1] = decodes(c.pull("TopicTest").response.body)
    assert m0.properties == {"DELAY": "3", "WAIT": "true", "CLUSTER": "DefaultCluster"}
    assert c.broker.message_store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 2) == 0


def test_batch_wait_is_read_from_the_header_only(cluster):
    """SYNC_FLUSH, flush slower than 5 s: a message's own WAIT=false does not stop the batch
    from waiting (messageExtBatch.isWaitStoreMsgOK(), CommitLog.java:834) → FLUSH_DISK_TIMEOUT."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import encode_batch_body

    c = cluster()
    c.broker.message_store_config.flush_disk_type = "SYNC_FLUSH"
    c.broker.message_store.fault_flush_delay_ms = 10_000
    body = encode_batch_body([Message("TopicTest", b"a", properties={"WAIT": "false"})])
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext(props=""), body)
    assert r.code == ResponseCode.FLUSH_DISK_TIMEOUT
    r = c.call(addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext(props="WAIT\x01false"), body)
    assert r.code == ResponseCode.SUCCESS


def test_batch_over_max_message_size(cluster):
    """Body > maxMessageSize → MESSAGE_ILLEGAL (checkMessages); body within it but stored
    entries over it → the encoder's RuntimeException → SYSTEM_ERROR with
    exceptionSimpleDesc, no extFields (NettyRemotingAbstract#processRequestCommand)."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import encode_batch_body

    c = cluster()
    c.broker.message_store_config.max_message_size = 1000
    addr = c.broker.broker_addr
    three = encode_batch_body([Message("TopicTest", b"x" * 250) for _ in range(3)])
    assert len(three) == 843  # 3 × (20 + 250 + 2 + len("WAIT\x01true"))
    r = c.call(addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext(), three)
    assert (r.code, r.remark, r.response.ext_fields) == (
        ResponseCode.SYSTEM_ERROR,
        "java.lang.RuntimeException: message size exceeded, "
        "org.apache.rocketmq.store.CommitLog$MessageExtEncoder.encode(CommitLog.java:1655)",
        {},
    )
    four = encode_batch_body([Message("TopicTest", b"x" * 250) for _ in range(4)])
    r = c.call(addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext(), four)
    assert r.code == ResponseCode.MESSAGE_ILLEGAL
    assert r.remark.startswith("the message is illegal")


def test_batch_to_a_retry_topic_is_stored(cluster):
    """4.9.3 has no "batch request does not support retry group" check (that is 5.x):
    a batch to %RETRY%CG is stored like any other."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import encode_batch_body

    c = cluster()
    body = encode_batch_body([Message("%RETRY%CG", b"a"), Message("%RETRY%CG", b"b")])
    r = c.call(c.broker.broker_addr, RequestCode.SEND_BATCH_MESSAGE, _batch_ext("%RETRY%CG"), body)
    assert (r.code, r.ext("queueOffset")) == (ResponseCode.SUCCESS, "0")
    assert c.broker.message_store.get_max_offset_in_queue("%RETRY%CG", 0) == 2


def test_send_batch_code_with_batch_false_is_one_message(cluster):
    """asyncProcessRequest looks at requestHeader.isBatch() only: code 320 with m=false
    stores the whole body as one message."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import encode_batch_body

    c = cluster()
    body = encode_batch_body([Message("TopicTest", b"a"), Message("TopicTest", b"b")])
    ext = _batch_ext(batch="false")
    r = c.call(c.broker.broker_addr, RequestCode.SEND_BATCH_MESSAGE, ext, body)
    assert (r.code, r.ext("queueOffset")) == (ResponseCode.SUCCESS, "0")
    [m] = decodes(c.pull("TopicTest").response.body)
    assert m.body == body


def test_transaction_half_message_keeps_wait(cluster):
    """parseHalfMessageInner recomputes the properties string from the map, which holds
    WAIT again: the half message stores WAIT=true (SendMessageProcessor.java:310)."""
    c = cluster()
    r = c.send("TopicTest", b"half", tags="T", props={"TRAN_MSG": "true", "PGROUP": "PG"})
    assert r.code == ResponseCode.SUCCESS
    m = c.broker.message_store.look_message_by_offset(0)
    assert m.topic == "RMQ_SYS_TRANS_HALF_TOPIC"
    assert m.properties == {
        "TRAN_MSG": "true", "PGROUP": "PG", "TAGS": "T", "CLUSTER": "DefaultCluster",
        "WAIT": "true", "REAL_TOPIC": "TopicTest", "REAL_QID": "0",
    }  # fmt: skip


def test_send_back_to_dlq_stores_wait_false_and_no_region(cluster):
    """asyncConsumerSendMsgBack: setWaitStoreMsgOK(false) before the properties string is
    built, so the DLQ entry stores WAIT=false; its responses come from
    createResponseCommand(null): no MSG_REGION / TRACE_ON (docs/reference.md §10.7 step 9)."""
    c = cluster()
    c.send("TopicTest", b"x", tags="TagA", reconsume_times=16)
    back = {"offset": "0", "group": "CG", "delayLevel": "0"}
    r = c.call(c.broker.broker_addr, RequestCode.CONSUMER_SEND_MSG_BACK, back)
    assert (r.code, r.remark, r.response.ext_fields) == (ResponseCode.SUCCESS, None, {})
    [m] = decodes(c.pull("%DLQ%CG", group="DLQREADER", sys_flag=4).response.body)
    assert m.properties == {
        "TAGS": "TagA", "CLUSTER": "DefaultCluster", "RETRY_TOPIC": "TopicTest",
        "WAIT": "false", "DELAY": "0", "ORIGIN_MESSAGE_ID": "7F00000100002A9F0000000000000000",
    }  # fmt: skip
    c.broker.broker_config.broker_permission = 4
    r = c.call(c.broker.broker_addr, RequestCode.CONSUMER_SEND_MSG_BACK, back)
    assert (r.code, r.remark, r.response.ext_fields) == (
        ResponseCode.NO_PERMISSION,
        "the broker[127.0.0.1] sending message is forbidden",
        {},
    )


def test_batch_without_body_is_the_stores_null_pointer(cluster):
    """SEND_BATCH_MESSAGE with no body: MessageExtBatch#getBody() is null and
    DefaultMessageStore#checkMessages reads its length (DefaultMessageStore.java:390): the
    remoting layer answers SYSTEM_ERROR with exceptionSimpleDesc of the
    NullPointerException (JDK 8's text; JDK 14+ adds a message, see the conformance rule
    jdk-exception-text)."""
    from mqlab.common.message_decoder import message_properties_to_string

    c = cluster()
    ext = {"a": "PG", "b": "BatchT", "c": "TBW102", "d": "4", "e": "0", "f": "0",
           "g": "0", "h": "0", "i": message_properties_to_string({"WAIT": "true"}),
           "m": "true"}  # fmt: skip
    r = c.call(c.broker.broker_addr, RequestCode.SEND_BATCH_MESSAGE, ext, None)
    assert (r.code, r.remark) == (
        1,
        "java.lang.NullPointerException, org.apache.rocketmq.store.DefaultMessageStore."
        "checkMessages(DefaultMessageStore.java:390)",
    )
    assert c.broker.message_store.get_max_offset_in_queue("BatchT", 0) == 0
