"""Heartbeats, consumer lists, NOTIFY_CONSUMER_IDS_CHANGED, locks, offset queries, roles."""

from mqlab.common.message import MessageQueue
from mqlab.remoting.bodies import (
    ConsumerData,
    GetConsumerListByGroupResponseBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
)
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.fastjson import loads_json_body
from mqlab.runtime.raw_client import RawClient


def heartbeat(c, client, client_id, group="CG", topics=("TopicTest",)):
    subs = tuple(
        {"classFilterMode": False, "codeSet": [], "expressionType": "TAG", "subString": "*",
         "subVersion": 0, "tagsSet": [], "topic": t}
        for t in topics
    )  # fmt: skip
    body = HeartbeatData(
        client_id=client_id,
        consumer_data_set=(
            ConsumerData(
                group_name=group,
                consume_type="CONSUME_PASSIVELY",
                message_model="CLUSTERING",
                consume_from_where="CONSUME_FROM_LAST_OFFSET",
                subscription_data_set=subs,
            ),
        ),  # fmt: skip
    ).encode()
    call = client.send(c.broker.broker_addr, RequestCode.HEART_BEAT, None, body)
    c.d.run_until_idle()
    return call


def test_heartbeat_registers_group_and_creates_retry_topic(cluster):
    """HEART_BEAT: group auto-created, %RETRY%CG created with 1 queue perm 6, consumer listed."""
    c = cluster()
    assert heartbeat(c, c.client, "127.0.0.1@c1").code == ResponseCode.SUCCESS
    tc = c.broker.topic_config_manager.select_topic_config("%RETRY%CG")
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (1, 1, 6)
    r = c.call(
        c.broker.broker_addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "CG"}
    )
    assert GetConsumerListByGroupResponseBody.decode(r.response.body).consumer_id_list == (
        "127.0.0.1@c1",
    )
    r = c.call(
        c.broker.broker_addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "none"}
    )
    assert (r.code, r.remark) == (1, "no consumer for this group, none")


def test_second_consumer_triggers_notify_to_both(cluster):
    """A new channel in the group → NOTIFY_CONSUMER_IDS_CHANGED (40, oneway) to every channel."""
    c = cluster()
    other = RawClient("client-2")
    c.d.add_node(other)
    heartbeat(c, c.client, "127.0.0.1@c1")
    assert [i.request.code for i in c.client.inbound] == [40]  # its own join is a change too
    heartbeat(c, other, "127.0.0.1@c2")
    assert [i.request.code for i in c.client.inbound] == [40, 40]
    assert [i.request.code for i in other.inbound] == [40]
    note = c.client.inbound[-1]
    assert note.request.is_oneway and note.request.ext("consumerGroup") == "CG"
    # A repeated heartbeat from a known channel changes nothing: no new notification.
    heartbeat(c, other, "127.0.0.1@c2")
    assert len(other.inbound) == 1


def test_unregister_notifies_the_rest(cluster):
    """UNREGISTER_CLIENT removes the consumer; the remaining one is notified."""
    c = cluster()
    other = RawClient("client-2")
    c.d.add_node(other)
    heartbeat(c, c.client, "127.0.0.1@c1")
    heartbeat(c, other, "127.0.0.1@c2")
    n = len(c.client.inbound)
    other.send(
        c.broker.broker_addr,
        RequestCode.UNREGISTER_CLIENT,
        {"clientID": "127.0.0.1@c2", "consumerGroup": "CG"},
    )
    c.d.run_until_idle()
    assert len(c.client.inbound) == n + 1
    r = c.call(
        c.broker.broker_addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "CG"}
    )
    assert GetConsumerListByGroupResponseBody.decode(r.response.body).consumer_id_list == (
        "127.0.0.1@c1",
    )


def test_unregister_with_empty_consumer_group_creates_group_named_empty(cluster):
    """UNREGISTER_CLIENT of a C++ producer (consumerGroup ""): 4.9.3 only checks for null,
    so findSubscriptionGroupConfig("") auto-creates a subscription group "" (the real broker
    shows it in exportMetadata); an absent consumerGroup creates none."""
    c = cluster()
    groups = c.broker.subscription_group_manager.subscription_group_table
    before = set(groups)
    r = c.call(
        c.broker.broker_addr,
        RequestCode.UNREGISTER_CLIENT,
        {"clientID": "127.0.0.1@cpp", "producerGroup": "PG"},
    )
    assert (r.code, set(groups)) == (ResponseCode.SUCCESS, before)
    r = c.call(
        c.broker.broker_addr,
        RequestCode.UNREGISTER_CLIENT,
        {"clientID": "127.0.0.1@cpp", "producerGroup": "PG", "consumerGroup": ""},
    )
    assert (r.code, set(groups) - before) == (ResponseCode.SUCCESS, {""})
    assert groups[""].retry_max_times == 16 and groups[""].consume_enable is True
    assert c.broker.topic_config_manager.select_topic_config("%RETRY%") is None


def test_channel_expires_after_120s_without_heartbeat(cluster):
    """A consumer silent for > 120 s is dropped by the 10 s housekeeping scan."""
    c = cluster()
    heartbeat(c, c.client, "127.0.0.1@c1")
    c.d.advance(120_000)
    assert c.broker.consumer_manager.get_consumer_group_info("CG") is not None
    c.d.advance(10_000)
    assert c.broker.consumer_manager.get_consumer_group_info("CG") is None


def test_lock_batch_mq_owner_and_expiry(cluster):
    """LOCK_BATCH_MQ: the first client gets the queues; another gets none until 60 s pass."""
    c = cluster()
    other = RawClient("client-2")
    c.d.add_node(other)
    mqs = tuple(MessageQueue("TopicTest", "broker-a", q) for q in range(2))

    def lock(client, cid):
        body = LockBatchRequestBody(consumer_group="CG", client_id=cid, mq_set=mqs).encode()
        call = client.send(c.broker.broker_addr, RequestCode.LOCK_BATCH_MQ, None, body)
        c.d.run_until_idle()
        return LockBatchResponseBody.decode(call.response.body).lock_ok_mq_set

    assert lock(c.client, "c1") == mqs
    assert lock(other, "c2") == ()
    c.d.advance(60_001)
    assert lock(other, "c2") == mqs


def test_offset_queries(cluster):
    """GET_MAX_OFFSET / GET_MIN_OFFSET / GET_EARLIEST_MSG_STORETIME / SEARCH_OFFSET_BY_TIMESTAMP."""
    c = cluster()
    times = []
    for i in range(3):
        c.d.advance(1000)
        times.append(c.d.now + 1)  # stored when the request arrives, 1 ms later
        c.send("TopicTest", f"m{i}".encode())
    addr = c.broker.broker_addr
    q = {"topic": "TopicTest", "queueId": "0"}
    assert c.call(addr, RequestCode.GET_MAX_OFFSET, q).ext("offset") == "3"
    assert c.call(addr, RequestCode.GET_MIN_OFFSET, q).ext("offset") == "0"
    assert c.call(addr, RequestCode.GET_EARLIEST_MSG_STORETIME, q).ext("timestamp") == str(times[0])
    r = c.call(addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, {**q, "timestamp": str(times[1])})
    assert r.ext("offset") == "1"


def test_rejected_transaction_message(cluster):
    """TRAN_MSG=true with rejectTransactionMessage → NO_PERMISSION (mechanisms.md "Send" step 4)."""
    c = cluster(reject_transaction_message=True)
    r = c.send("TopicTest", props={"TRAN_MSG": "true"})
    assert (r.code, r.remark) == (
        16,
        "the broker[127.0.0.1] sending transaction message is forbidden",
    )


def test_transaction_half_message_is_not_consumable(cluster):
    """A prepared message is parked in RMQ_SYS_TRANS_HALF_TOPIC, not in the real topic."""
    c = cluster()
    c.send("TopicTest", b"plain")
    r = c.send("TopicTest", b"half", props={"TRAN_MSG": "true"})
    assert r.code == ResponseCode.SUCCESS
    store = c.broker.message_store
    assert store.get_max_offset_in_queue("TopicTest", 0) == 1
    assert store.get_max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0) == 1


def test_slave_does_not_commit_and_redirects_offset_moved(cluster):
    """On a SLAVE: no offset commit (step 11); OFFSET_MOVED becomes PULL_RETRY_IMMEDIATELY."""
    c = cluster()
    c.send("TopicTest")
    c.broker.message_store_config.broker_role = "SLAVE"
    c.pull("TopicTest", sys_flag=7, commit_offset=1)
    assert c.broker.consumer_offset_manager.query_offset("CG", "TopicTest", 0) == -1
    p = c.pull("TopicTest", offset=9, sys_flag=4)
    assert (p.code, p.remark) == (ResponseCode.PULL_RETRY_IMMEDIATELY, "OFFSET_OVERFLOW_BADLY")
    # nextOffsetCorrection keeps the request offset on a slave (offsetCheckInSlave false).
    assert p.ext("nextBeginOffset") == "9"


def test_unknown_request_code(cluster):
    """An unknown code → REQUEST_CODE_NOT_SUPPORTED (3) with RocketMQ's remark."""
    c = cluster()
    r = c.call(c.broker.broker_addr, 9999)
    assert (r.code, r.remark) == (3, " request type 9999 not supported")


def test_update_broker_config_changes_settings_at_runtime(cluster):
    """UPDATE_BROKER_CONFIG (25): a Properties body set onto the broker's configs (the
    real 4.9.3 broker answers SUCCESS with no remark; unknown keys are ignored)."""
    c = cluster()
    addr = c.broker.broker_addr
    body = b"autoCreateTopicEnable=false\nenablePropertyFilter=true\nnoSuchKey=1\n"
    r = c.call(addr, RequestCode.UPDATE_BROKER_CONFIG, None, body)
    assert (r.code, r.remark) == (0, None)
    cfg = c.broker.broker_config
    assert (cfg.auto_create_topic_enable, cfg.enable_property_filter) == (False, True)
    # MixAll#properties2Object: Boolean.parseBoolean, so anything but "true" is false;
    # a value that does not parse as the field's int is skipped.
    r = c.call(addr, RequestCode.UPDATE_BROKER_CONFIG, None,
               b"enablePropertyFilter=yes\ndefaultTopicQueueNums=x\nmaxMessageSize=1024\n")  # fmt: skip
    assert r.code == 0
    assert (cfg.enable_property_filter, cfg.default_topic_queue_nums) == (False, 8)
    assert c.broker.message_store_config.max_message_size == 1024
    # brokerPermission: a new data version and a re-registration with the name server
    before = c.broker.topic_config_manager.data_version.counter
    r = c.call(addr, RequestCode.UPDATE_BROKER_CONFIG, None, b"brokerPermission=4\n")
    assert r.code == 0 and cfg.broker_permission == 4
    assert c.broker.topic_config_manager.data_version.counter == before + 1
    # no body: nothing to do, still SUCCESS
    assert c.call(addr, RequestCode.UPDATE_BROKER_CONFIG).code == 0


def test_read_only_broker_registers_every_topic_with_the_broker_permission(cluster):
    """BrokerController#registerBrokerAll: when brokerPermission is not read+write, each
    topic goes to the name server as new TopicConfig(name, r, w, brokerPermission): the
    route then shows perm 4 (read only), as the real 4.9.3 name server answers."""
    c = cluster()
    addr = c.broker.broker_addr
    c.send("TopicTest", b"x")
    r = c.call(addr, RequestCode.UPDATE_BROKER_CONFIG, None, b"brokerPermission=4\n")
    assert r.code == 0
    route = c.call("127.0.0.1:9876", RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicTest"})
    assert route.code == 0
    queue_data = loads_json_body(route.response.body)["queueDatas"][0]
    assert (queue_data["perm"], queue_data["readQueueNums"]) == (4, 4)
    # the broker's own table keeps the topic's perm
    assert c.broker.topic_config_manager.select_topic_config("TopicTest").perm == 6


def test_missing_mandatory_fields_are_refused_and_tables_stay_clean(cluster):
    """A header without a @CFNotNull field → SYSTEM_ERROR; no None topic/group gets created."""
    c = cluster()
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.PULL_MESSAGE)
    assert (r.code, r.remark) == (1, "the custom field <consumerGroup> is null")
    r = c.call(addr, RequestCode.GET_MAX_OFFSET, {"queueId": "0"})
    assert (r.code, r.remark) == (1, "the custom field <topic> is null")
    assert None not in c.broker.message_store.consume_queue_table
    assert None not in c.broker.subscription_group_manager.subscription_group_table
    c.d.stop_node(c.broker.name)  # a graceful stop persists everything without error


def _create_topic_ext(topic, **kw):
    ext = {"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4",
           "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}  # fmt: skip
    ext.update(kw)
    return ext


def test_delete_topic_validates_and_cleans_unused_consume_queues(cluster):
    """AdminBrokerProcessor#deleteTopic: validateTopic and isSystemTopic → SYSTEM_ERROR with
    their remarks (a missing topic reads as blank); then deleteTopicConfig +
    cleanUnusedTopic (queues destroyed, offsets restart at 0), and no re-registration."""
    c = cluster()
    addr = c.broker.broker_addr
    store = c.broker.message_store
    c.send("TopicTest", b"x")
    c.send("TopicTest", b"y")
    r = c.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "a/b"})
    assert (r.code, r.remark) == (
        1, "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")  # fmt: skip
    r = c.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, {})
    assert (r.code, r.remark) == (1, "The specified topic is blank.")
    r = c.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "SCHEDULE_TOPIC_XXXX"})
    assert (r.code, r.remark) == (
        1,
        "The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.",
    )
    registered = c.broker.register_count
    r = c.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "TopicTest"})
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
    assert c.broker.register_count == registered
    assert c.broker.topic_config_manager.select_topic_config("TopicTest") is None
    assert "TopicTest" not in store.consume_queue_table
    assert store.get_max_offset_in_queue("TopicTest", 0) == 0
    assert c.send("TopicTest", b"z").ext("queueOffset") == "0"


def test_update_and_create_topic_ignores_order_and_checks_filter_type(cluster):
    """updateAndCreateTopic never reads `order` (new TopicConfig(topic)); an unknown
    topicFilterType fails CreateTopicRequestHeader#checkFields → SYSTEM_ERROR."""
    c = cluster()
    addr = c.broker.broker_addr
    tcm = c.broker.topic_config_manager
    r = c.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, _create_topic_ext("OrdT", order="true"))
    # createResponseCommand(null) starts as SYSTEM_ERROR "not set any response code" and
    # the success path sets only the code: the real 4.9.3 broker answers SUCCESS with
    # that remark (found by the conformance harness).
    assert (r.code, r.remark) == (ResponseCode.SUCCESS, "not set any response code")
    assert tcm.select_topic_config("OrdT").order is False
    r = c.call(
        addr, RequestCode.UPDATE_AND_CREATE_TOPIC, _create_topic_ext("T2", topicFilterType="BOGUS")
    )
    assert (r.code, r.remark) == (1, "topicFilterType = [BOGUS] value invalid")
    assert tcm.select_topic_config("T2") is None
    ext = _create_topic_ext("T3")
    del ext["order"]  # Java's header decoding only logs a missing @CFNotNull field
    assert c.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, ext).code == ResponseCode.SUCCESS


def test_order_comes_from_the_name_servers_order_topic_config(cluster):
    """doRegisterBrokerAll(checkOrderConfig=true) → updateOrderTopicConfig(kvTable): the
    registration after UPDATE_AND_CREATE_TOPIC marks the name server's order topics."""
    c = cluster()
    kv = {"namespace": "ORDER_TOPIC_CONFIG", "key": "OrdT", "value": "broker-a:4"}
    assert c.call("127.0.0.1:9876", RequestCode.PUT_KV_CONFIG, kv).code == ResponseCode.SUCCESS
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, _create_topic_ext("OrdT"))
    assert r.code == ResponseCode.SUCCESS
    assert c.broker.topic_config_manager.select_topic_config("OrdT").order is True
    assert c.broker.topic_config_manager.is_order_topic("OrdT")


def test_check_client_config_remarks(cluster):
    """checkClientConfig (property filter on): TAG → SUCCESS; a compile failure →
    SUBSCRIPTION_PARSE_FAILED with MQFilterException#getMessage (the cause's toString);
    an unknown type or no subString → NullPointerException, remark null."""
    import json

    c = cluster(enable_property_filter=True)

    def check(expression_type, sub_string):
        sd = {"topic": "T", "subString": sub_string, "expressionType": expression_type}
        body = json.dumps({"clientId": "c", "group": "CG", "subscriptionData": sd}).encode()
        r = c.call(c.broker.broker_addr, RequestCode.CHECK_CLIENT_CONFIG, None, body)
        return r.code, r.remark

    assert check("TAG", "x") == (ResponseCode.SUCCESS, None)
    assert check("SQL92", "a > 1") == (ResponseCode.SUCCESS, None)
    code, remark = check("SQL92", "a >")
    assert code == ResponseCode.SUBSCRIPTION_PARSE_FAILED == 23
    assert remark.startswith(
        'org.apache.rocketmq.filter.parser.ParseException: Encountered "<EOF>" at line 1, '
        "column 3.\nWas expecting one of:\n"
    )
    assert check("SQL92", "")[1].startswith(
        'org.apache.rocketmq.filter.parser.ParseException: Encountered "<EOF>" at line 0, column 0.'
    )
    assert check("SQL92", "a > 'x'") == (
        23, "java.lang.RuntimeException: Value ''x'' cannot be compared. (at line 1, column 3, "
        "offset 2)")  # fmt: skip
    assert check("FOO", "a > 1") == (23, None)
    assert check("SQL92", None) == (23, None)


def test_update_and_create_topic_answers_once_the_name_server_routes_it(cluster):
    """AdminBrokerProcessor#updateAndCreateTopic calls registerIncrementBrokerData, whose
    BrokerOuterAPI#registerBrokerAll waits (CountDownLatch) for the name servers before the
    response is written: when the answer arrives, a client asking for the route finds the
    topic. Found by the interop tier: answered first, a Java producer asked too early, fell
    back to TBW102 and auto-created the topic on another broker."""
    c = cluster()
    rim = c.namesrv.route_info_manager
    c.d.set_link(c.broker.name, c.namesrv.name, latency_ms=50)  # a far name server
    call = c.client.send(
        c.broker.broker_addr, RequestCode.UPDATE_AND_CREATE_TOPIC, _create_topic_ext("Routed")
    )
    seen: list[bool] = []
    while not call.done:
        c.d.step()
        if call.done:
            seen.append("Routed" in rim.topic_queue_table)
    assert (call.code, seen) == (ResponseCode.SUCCESS, [True])


def _create_and_wait(c, topic, tables=()):
    """Send UPDATE_AND_CREATE_TOPIC, step until answered: (code, remark, ms it took, and for
    each route table given, whether it held the topic when the answer arrived)."""
    call = c.client.send(
        c.broker.broker_addr, RequestCode.UPDATE_AND_CREATE_TOPIC, _create_topic_ext(topic)
    )
    while not call.done:
        c.d.step()
    seen = [topic in t.topic_queue_table for t in tables]
    return call.code, call.remark, call.done_at - call.sent_at, seen


def test_update_and_create_topic_waits_for_every_name_server(cluster):
    """BrokerOuterAPI#registerBrokerAll sends REGISTER_BROKER (invokeSync, not oneway: the
    increment is doRegisterBrokerAll(true, false, ...)) to each name server in parallel and
    waits on one CountDownLatch for all of them: with name servers 1 ms and 50 ms away the
    answer leaves after the slower one's reply, 1 + 2 x 50 + 1 ms after the request."""
    from mqlab.namesrv.namesrv_controller import NamesrvController

    c = cluster(name_server_addr="127.0.0.1:9876;127.0.0.1:9877")
    far = NamesrvController(name="namesrv-2", address="127.0.0.1:9877")
    c.d.add_node(far)
    c.d.set_link(c.broker.name, far.name, latency_ms=50)
    c.d.set_link(far.name, c.broker.name, latency_ms=50)
    tables = (c.namesrv.route_info_manager, far.route_info_manager)
    assert _create_and_wait(c, "Both", tables) == (
        ResponseCode.SUCCESS, "not set any response code", 102, [True, True])  # fmt: skip


def test_update_and_create_topic_answers_success_when_registration_fails(cluster):
    """A registration that fails or times out is caught and logged in
    BrokerOuterAPI#registerBrokerAll (the latch counts it down; await gives up after
    registerBrokerTimeoutMills, 6 000 ms): AdminBrokerProcessor#updateAndCreateTopic still
    answers SUCCESS. An unreachable name server fails at once (connect refused); a silent
    one holds the answer for the whole timeout."""
    c = cluster(name_server_addr="127.0.0.1:9876;127.0.0.1:9999")  # nothing on 9999
    rim = c.namesrv.route_info_manager
    ok = (ResponseCode.SUCCESS, "not set any response code")
    assert _create_and_wait(c, "OneDown", [rim]) == (*ok, 4, [True])  # 1 + 2 x 1 + 1 ms
    c.d.set_link(c.broker.name, c.namesrv.name, drop_rate=1.0)  # REGISTER_BROKER lost
    assert _create_and_wait(c, "Silent", [rim]) == (*ok, 1 + 6000 + 1, [False])
