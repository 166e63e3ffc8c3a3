"""NamesrvController through the simulation driver, with broker_outer_api requests.

docs/reference.md §2.1/§2.2 (codes, headers), §2.5/§2.6 (bodies), §9 (expiry), §10.17, §11
(DefaultRequestProcessorTest), docs/cpp-client.md "Response header rules" (extFields on
every reply); mechanisms.md "Topic auto-creation" (registerBrokerAll after auto-creating a topic).
"""

import pytest

from mqlab.broker.broker_outer_api import (
    MQBrokerException,
    build_query_data_version_request,
    build_register_broker_request,
    build_unregister_broker_request,
    encode_register_broker_body,
    parse_query_data_version_response,
    parse_register_broker_response,
)
from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.common.util_all import crc32
from mqlab.namesrv import NamesrvConfig, NamesrvController
from mqlab.namesrv.namesrv_controller import SCAN_NOT_ACTIVE_BROKER_TIMER
from mqlab.namesrv.route_info_manager import RegisterBrokerResult
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver

NAMESRV = "127.0.0.1:9876"
ROUTE_BODY = (
    b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a",'
    b'"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":'
    b'"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}'
)
FAQ = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


class Caller(Node):
    """Sends requests to the name server and records (t_ms, response)."""

    def __init__(self, name, address):
        super().__init__(name, address)
        self.responses = []
        self.closed = []

    def send(self, request):
        self.ctx.invoke_async(
            NAMESRV, request, 3000, lambda r, e: self.responses.append((self.ctx.now_ms, r or e))
        )

    def channel_inactive(self, channel):
        self.closed.append(self.ctx.now_ms)


class FakeBroker(Caller):
    """Registers with requests built by broker_outer_api."""

    def __init__(self, name="broker-a", address="127.0.0.1:10911", broker_id=0):
        super().__init__(name, address)
        self.broker_id = broker_id

    def register(self, topics=None, counter=1, compressed=False, **kw):
        req = self.build(topics, counter, compressed, **kw)
        self.send(req)
        return req

    def build(self, topics=None, counter=1, compressed=False, **kw):
        topics = topics if topics is not None else {"TopicTest": TopicConfig("TopicTest", 4, 4)}
        req = build_register_broker_request(
            cluster_name="DefaultCluster", broker_addr=self.address, broker_name=kw.get("bn", "broker-a"),
            broker_id=self.broker_id, ha_server_addr=kw.get("ha", "127.0.0.1:10912"),
            topic_config_table=topics, data_version=DataVersion(1_650_000_000_000, counter),
            compressed=compressed,
        )  # fmt: skip
        return req


def setup(config=None):
    d = SimDriver(seed=7)
    ns = NamesrvController(config)
    broker, client = FakeBroker(), Caller("client", "127.0.0.2:0")
    for node in (ns, broker, client):
        d.add_node(node)
    return d, ns, broker, client


def ask(d, client, code, ext=None, body=None):
    """Send one request from ``client`` and return its response."""
    client.send(RemotingCommand.create_request(code, ext, body))
    d.run_until_idle()
    return client.responses[-1][1]


def route(d, client, topic="TopicTest"):
    return ask(d, client, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})


def test_scan_timer_first_after_5s_then_every_10s():
    """NamesrvController#initialize: scanNotActiveBroker at 5 s, then every 10 s (docs/reference.md §9)."""
    d, _, _, _ = setup()
    [t] = [p for p in d.next_timers() if p.name == SCAN_NOT_ACTIVE_BROKER_TIMER]
    assert (t.due_ms, t.daemon, t.periodic) == (5_000, True, True)
    d.advance(5_000)
    [t] = [p for p in d.next_timers() if p.name == SCAN_NOT_ACTIVE_BROKER_TIMER]
    assert t.due_ms == 15_000


def test_register_then_route_exact_body():
    """REGISTER_BROKER then GET_ROUTEINFO_BY_TOPIC: SUCCESS, extFields {}, docs/reference.md §2.5 bytes."""
    d, _, broker, client = setup()
    broker.register()
    d.run_until_idle()
    t, reg = broker.responses[0]
    assert (t, reg.code, reg.ext_fields, reg.body) == (2, ResponseCode.SUCCESS, {}, None)
    assert parse_register_broker_response(reg) == RegisterBrokerResult(None, None, None)
    resp = route(d, client)
    assert (resp.code, resp.ext_fields, resp.remark, resp.body) == (0, {}, None, ROUTE_BODY)


def test_route_topic_not_exist_remark():
    """Unknown topic → TOPIC_NOT_EXIST (17) with the FAQUrl.suggestTodo suffix."""
    d, _, _, client = setup()
    resp = route(d, client, "Nope")
    assert resp.code == ResponseCode.TOPIC_NOT_EXIST == 17
    assert resp.remark == "No topic route info in name server for the topic: Nope" + FAQ
    assert resp.ext_fields == {}


def test_unregister_broker_removes_route():
    """UNREGISTER_BROKER (104) → SUCCESS, and the topic has no route any more."""
    d, _, broker, client = setup()
    broker.register()
    d.run_until_idle()
    broker.send(
        build_unregister_broker_request(
            cluster_name="DefaultCluster",
            broker_addr=broker.address,
            broker_name="broker-a",
            broker_id=0,
        )  # fmt: skip
    )
    d.run_until_idle()
    assert broker.responses[-1][1].code == ResponseCode.SUCCESS
    assert route(d, client).code == ResponseCode.TOPIC_NOT_EXIST


def test_broker_expires_on_first_scan_after_120s():
    """Registered at t=1 (1 ms latency): alive at 124999, gone by the scan at t=125000."""
    d, ns, broker, client = setup()
    broker.register()
    d.run_until_idle()
    assert ns.route_info_manager.broker_live_table["127.0.0.1:10911"].last_update_timestamp == 1
    d.advance(124_999 - d.now)
    assert d.now == 124_999
    assert "127.0.0.1:10911" in ns.route_info_manager.broker_live_table
    events = d.advance(1)
    assert "127.0.0.1:10911" not in ns.route_info_manager.broker_live_table
    scan = [e for e in events if e.component == "RouteInfoManager.scanNotActiveBroker"]
    assert [(e.t_ms, e.step, e.kind) for e in scan] == [
        (125_000, "expired", "step"),
        (125_000, "scan", "timer"),
    ]
    assert scan[0].fields["broker_addr"] == "127.0.0.1:10911"
    assert scan[1].fields == {"live": 0, "expired": ["127.0.0.1:10911"]}
    assert broker.closed == [125_000]  # the name server closed the broker's channel
    assert route(d, client).code == ResponseCode.TOPIC_NOT_EXIST


def test_reregistration_keeps_broker_alive():
    """A broker re-registering every 30 s never expires."""
    d, ns, broker, _ = setup()
    for _ in range(10):
        broker.register()
        d.advance(30_000)
    assert d.now == 300_000
    assert (
        ns.route_info_manager.broker_live_table["127.0.0.1:10911"].last_update_timestamp == 270_001
    )


def test_broker_connection_close_removes_it_at_once():
    """Stopping the broker closes its connection → onChannelDestroy (BrokerHousekeepingService)."""
    d, ns, broker, client = setup()
    broker.register()
    d.run_until_idle()
    d.stop_node("broker-a")
    d.run_until_idle()
    assert ns.route_info_manager.broker_addr_table == {}
    assert route(d, client).code == ResponseCode.TOPIC_NOT_EXIST


def test_two_brokers_route_sorted_by_broker_name():
    """broker-b registering first still gives QueueDatas [broker-a, broker-b]."""
    d, _, broker_a, client = setup()
    broker_b = FakeBroker("broker-b", "127.0.0.3:10911")
    d.add_node(broker_b)
    broker_b.register(bn="broker-b")
    d.run_until_idle()
    broker_a.register()
    d.run_until_idle()
    body = route(d, client).body
    assert body.index(b'"brokerName":"broker-a","perm"') < body.index(
        b'"brokerName":"broker-b","perm"'
    )
    assert body.count(b'"perm":6') == 2


def test_crc_mismatch_is_system_error():
    """A wrong non-zero bodyCrc32 → SYSTEM_ERROR "crc32 not match"; nothing registered."""
    d, ns, broker, _ = setup()
    req = build_register_broker_request(
        cluster_name="DefaultCluster", broker_addr=broker.address, broker_name="broker-a",
        broker_id=0, ha_server_addr=None, topic_config_table={}, data_version=DataVersion(0, 1),
    )  # fmt: skip
    assert int(req.ext_fields["bodyCrc32"]) == crc32(req.body)
    req.ext_fields["bodyCrc32"] = str(crc32(req.body) ^ 1)
    broker.send(req)
    d.run_until_idle()
    resp = broker.responses[0][1]
    assert (resp.code, resp.remark, resp.ext_fields) == (1, "crc32 not match", {})
    assert ns.route_info_manager.broker_addr_table == {}
    with pytest.raises(MQBrokerException, match="CODE: 1  DESC: crc32 not match"):
        parse_register_broker_response(resp)


def test_zero_crc_is_not_checked():
    """bodyCrc32 0 skips the check (DefaultRequestProcessor#checksum)."""
    d, ns, broker, _ = setup()
    req = broker.build()
    req.ext_fields["bodyCrc32"] = "0"
    req.body = req.body.replace(b'"readQueueNums":4', b'"readQueueNums":2')
    broker.send(req)
    d.run_until_idle()
    assert broker.responses[0][1].code == ResponseCode.SUCCESS
    assert ns.route_info_manager.topic_queue_table["TopicTest"]["broker-a"].read_queue_nums == 2


def test_register_without_body_slave_id_2333():
    """DefaultRequestProcessorTest: bodiless register of id 2333 → brokerAddrs {2333: addr}."""
    d, ns, _, client = setup()
    ext = {
        "brokerName": "broker", "brokerAddr": "10.10.1.1", "clusterName": "cluster",
        "haServerAddr": "10.10.2.1", "brokerId": "2333",
    }  # fmt: skip
    resp = ask(d, client, RequestCode.REGISTER_BROKER, ext)
    assert (resp.code, resp.remark) == (0, None)
    assert ns.route_info_manager.broker_addr_table["broker"].broker_addrs == {2333: "10.10.1.1"}


def test_slave_learns_master_in_reply_header():
    """A slave's reply header carries the master's haServerAddr and masterAddr (§2.2)."""
    d, _, master, _ = setup()
    slave = FakeBroker("broker-a-s", "127.0.0.4:10911", broker_id=1)
    d.add_node(slave)
    master.register(ha="127.0.0.1:10912")
    d.run_until_idle()
    slave.register(ha="127.0.0.4:10912")
    d.run_until_idle()
    resp = slave.responses[0][1]
    assert resp.ext_fields == {"haServerAddr": "127.0.0.1:10912", "masterAddr": "127.0.0.1:10911"}
    result = parse_register_broker_response(resp)
    assert (result.master_addr, result.ha_server_addr) == ("127.0.0.1:10911", "127.0.0.1:10912")


def test_compressed_registration():
    """compressed=true bodies (zlib, TopicConfig#encode text) register the same topics."""
    d, _, broker, client = setup()
    req = broker.register(compressed=True)
    assert req.ext_fields["compressed"] == "true" and req.body[:1] == b"\x78"
    d.run_until_idle()
    assert route(d, client).body == ROUTE_BODY


def test_register_body_fastjson_shape():
    """RegisterBrokerBody JSON of docs/reference.md §2.6 / §7.4, keys sorted."""
    body = encode_register_broker_body(
        {"TopicTest": TopicConfig("TopicTest", 4, 4)}, DataVersion(1_650_000_000_000, 3)
    )
    assert body == (
        b'{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,'
        b'"timestamp":1650000000000},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,'
        b'"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest",'
        b'"topicSysFlag":0,"writeQueueNums":4}}}}'
    )


def test_build_register_request_argument_checks():
    """A broker id below -1 (-1: a DLedger broker before its role change) or a
    non-TopicConfig table value is API misuse."""
    with pytest.raises(ValueError, match="broker_id must be >= -1"):
        build_register_broker_request(
            cluster_name="c", broker_addr="a", broker_name="b", broker_id=-2,
            ha_server_addr=None, topic_config_table={}, data_version=DataVersion(),
        )  # fmt: skip
    with pytest.raises(TypeError, match="topic_config_table"):
        encode_register_broker_body({"T": {"perm": 6}}, DataVersion())


def test_old_broker_version_sends_bare_topic_wrapper():
    """A broker older than V3_0_11 (version < 37) sends TopicConfigSerializeWrapper JSON."""
    d, _, broker, client = setup()
    req = broker.build()
    req.version = 36
    req.body = (
        b'{"dataVersion":{"counter":1,"timestamp":0},"topicConfigTable":{"TopicTest":'
        b'{"perm":6,"readQueueNums":4,"topicName":"TopicTest","writeQueueNums":4}}}'
    )
    req.ext_fields["bodyCrc32"] = str(crc32(req.body))
    broker.send(req)
    d.run_until_idle()
    assert route(d, client).body == ROUTE_BODY


def test_kv_config_put_get_delete():
    """DefaultRequestProcessorTest KV vectors; missing key → QUERY_NOT_FOUND (22) remark."""
    d, ns, _, client = setup()
    put = ask(
        d,
        client,
        RequestCode.PUT_KV_CONFIG,
        {"namespace": "namespace", "key": "key", "value": "value"},
    )
    assert (put.code, put.remark, put.ext_fields) == (0, None, {})
    assert ns.kv_config_manager.get_kv_config("namespace", "key") == "value"
    got = ask(d, client, RequestCode.GET_KV_CONFIG, {"namespace": "namespace", "key": "key"})
    assert (got.code, got.remark, got.ext_fields) == (0, None, {"value": "value"})
    deleted = ask(d, client, RequestCode.DELETE_KV_CONFIG, {"namespace": "namespace", "key": "key"})
    assert (deleted.code, deleted.remark) == (0, None)
    missing = ask(d, client, RequestCode.GET_KV_CONFIG, {"namespace": "namespace", "key": "key"})
    assert missing.code == ResponseCode.QUERY_NOT_FOUND == 22
    assert missing.remark == "No config item, Namespace: namespace Key: key"
    assert missing.ext_fields == {}


def test_kv_put_without_key_is_system_error():
    """PUT_KV_CONFIG without namespace or key → SYSTEM_ERROR "namespace or key is null"."""
    d, _, _, client = setup()
    resp = ask(d, client, RequestCode.PUT_KV_CONFIG, {"namespace": "ns"})
    assert (resp.code, resp.remark) == (1, "namespace or key is null")


def test_kv_list_by_namespace():
    """GET_KVLIST_BY_NAMESPACE (219): QUERY_NOT_FOUND, then a KVTable body."""
    d, _, _, client = setup()
    ext = {"namespace": "default-namespace-1"}
    miss = ask(d, client, RequestCode.GET_KVLIST_BY_NAMESPACE, ext)
    assert (miss.code, miss.remark) == (22, "No config item, Namespace: default-namespace-1")
    ask(d, client, RequestCode.PUT_KV_CONFIG, {**ext, "key": "key", "value": "value"})
    hit = ask(d, client, RequestCode.GET_KVLIST_BY_NAMESPACE, ext)
    assert (hit.code, hit.body) == (0, b'{"table":{"key":"value"}}')


def test_kv_remarks_print_null_for_missing_header_fields():
    """DefaultRequestProcessor#getKVConfig / #getKVListByNamespace (~183, ~466): Java concatenates
    a null String as "null" (the @CFNotNull failure is only logged by decodeCommandCustomHeader)."""
    d, _, _, client = setup()
    kv = ask(d, client, RequestCode.GET_KV_CONFIG, {})
    assert (kv.code, kv.remark) == (22, "No config item, Namespace: null Key: null")
    kv = ask(d, client, RequestCode.GET_KV_CONFIG, {"key": "k"})
    assert (kv.code, kv.remark) == (22, "No config item, Namespace: null Key: k")
    kvlist = ask(d, client, RequestCode.GET_KVLIST_BY_NAMESPACE, {})
    assert (kvlist.code, kvlist.remark) == (22, "No config item, Namespace: null")


def test_order_topic_config_in_register_reply_and_route():
    """ORDER_TOPIC_CONFIG: KVTable in the register reply; orderTopicConf when enabled."""
    d, _, broker, client = setup(NamesrvConfig(order_message_enable=True))
    kv = {"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest", "value": "broker-a:4"}
    ask(d, client, RequestCode.PUT_KV_CONFIG, kv)
    broker.register()
    d.run_until_idle()
    result = parse_register_broker_response(broker.responses[0][1])
    assert result.kv_table == {"TopicTest": "broker-a:4"}
    assert b'"orderTopicConf":"broker-a:4"' in route(d, client).body


def test_wipe_and_add_write_perm_requests():
    """WIPE_WRITE_PERM (205) → perm 4, wipeTopicCount; ADD_WRITE_PERM (327) → perm 6."""
    d, _, broker, client = setup()
    broker.register()
    d.run_until_idle()
    wipe = ask(d, client, RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
    assert (wipe.code, wipe.ext_fields) == (0, {"wipeTopicCount": "1"})
    assert route(d, client).body == ROUTE_BODY.replace(b'"perm":6', b'"perm":4')
    add = ask(d, client, RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
    assert (add.code, add.ext_fields) == (0, {"addTopicCount": "1"})
    assert route(d, client).body == ROUTE_BODY


def test_cluster_info_and_topic_lists():
    """GET_BROKER_CLUSTER_INFO (106), GET_ALL_TOPIC_LIST (206), GET_TOPICS_BY_CLUSTER (224)."""
    d, _, broker, client = setup()
    broker.register()
    d.run_until_idle()
    info = ask(d, client, RequestCode.GET_BROKER_CLUSTER_INFO)
    assert info.body == (
        b'{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911"},'
        b'"brokerName":"broker-a","cluster":"DefaultCluster"}},'
        b'"clusterAddrTable":{"DefaultCluster":["broker-a"]}}'
    )
    topics = ask(d, client, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    assert (topics.code, topics.body) == (0, b'{"topicList":["TopicTest"]}')
    by_cluster = ask(d, client, RequestCode.GET_TOPICS_BY_CLUSTER, {"cluster": "DefaultCluster"})
    assert by_cluster.body == b'{"topicList":["TopicTest"]}'
    unknown = ask(d, client, RequestCode.GET_TOPICS_BY_CLUSTER, {"cluster": "default-cluster"})
    assert (unknown.code, unknown.body) == (0, b'{"topicList":[]}')


def test_system_topic_list_from_ns():
    """GET_SYSTEM_TOPIC_LIST_FROM_NS (304): TopicList of the cluster and broker names with a
    brokerAddr (DefaultRequestProcessor#getSystemTopicListFromNs); none registered → no addr."""
    d, _, broker, client = setup()
    empty = ask(d, client, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS)
    assert (empty.code, empty.remark, empty.ext_fields, empty.body) == (
        0,
        None,
        {},
        b'{"topicList":[]}',
    )
    broker.register()
    d.run_until_idle()
    resp = ask(d, client, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS)
    assert (resp.code, resp.remark, resp.body) == (
        0,
        None,
        # the HashSet's order, as the real 4.9.3 name server answers (conformance row
        # namesrv-registration fake-broker/system_topics_before)
        b'{"brokerAddr":"127.0.0.1:10911","topicList":["broker-a","DefaultCluster"]}',
    )


def test_unit_topic_lists():
    """GET_UNIT_TOPIC_LIST (311), GET_HAS_UNIT_SUB_TOPIC_LIST (312),
    GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313): TopicList bodies by the topics' topicSysFlag."""
    d, _, broker, client = setup()
    topics = {
        n: TopicConfig(n, 4, 4, topic_sys_flag=f)
        for n, f in (("N", 0), ("U", 1), ("S", 2), ("US", 3))
    }
    broker.register(topics)
    d.run_until_idle()
    bodies = [
        ask(d, client, code)
        for code in (
            RequestCode.GET_UNIT_TOPIC_LIST,
            RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST,
            RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST,
        )
    ]
    assert [(r.code, r.remark, r.body) for r in bodies] == [
        (0, None, b'{"topicList":["U","US"]}'),
        (0, None, b'{"topicList":["S","US"]}'),
        (0, None, b'{"topicList":["S"]}'),
    ]


def test_delete_topic_in_namesrv():
    """DELETE_TOPIC_IN_NAMESRV (216) drops the topic's route."""
    d, _, broker, client = setup()
    broker.register()
    d.run_until_idle()
    assert ask(d, client, RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": "TopicTest"}).code == 0
    assert route(d, client).code == ResponseCode.TOPIC_NOT_EXIST


def test_query_data_version():
    """QUERY_DATA_VERSION (322): unchanged → changed=false and the broker is kept alive."""
    d, ns, broker, _ = setup()
    broker.register(counter=3)
    d.advance(100_000)
    same = DataVersion(1_650_000_000_000, 3)
    args = dict(cluster_name="DefaultCluster", broker_addr=broker.address, broker_name="broker-a")
    broker.send(build_query_data_version_request(**args, broker_id=0, data_version=same))
    d.run_until_idle()
    resp = broker.responses[-1][1]
    assert resp.ext_fields == {"changed": "false"}
    assert resp.body == b'{"counter":3,"timestamp":1650000000000}'
    assert parse_query_data_version_response(resp, same) is False
    assert parse_query_data_version_response(resp, DataVersion(1_650_000_000_000, 4)) is True
    live = ns.route_info_manager.broker_live_table[broker.address]
    assert live.last_update_timestamp == 100_001


def test_unknown_code_is_not_answered():
    """An unknown code gets no answer at all: DefaultRequestProcessor#processRequest's
    ``default`` falls through to ``return null`` and NettyRemotingAbstract writes nothing
    for a null response (the caller times out). The next request is answered as usual."""
    d, _, _, client = setup()
    client.send(RemotingCommand.create_request(999))
    d.run_until_idle()
    assert client.responses == []
    resp = ask(d, client, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    assert (len(client.responses), resp.code, resp.ext_fields) == (1, 0, {})


def test_bad_header_number_is_system_error():
    """A brokerId that is not a number → SYSTEM_ERROR with the decoder's message."""
    d, _, _, client = setup()
    ext = {"brokerName": "b", "brokerAddr": "a", "clusterName": "c", "brokerId": "x"}
    resp = ask(d, client, RequestCode.REGISTER_BROKER, ext)
    assert resp.code == ResponseCode.SYSTEM_ERROR and "brokerId" in resp.remark


def test_missing_mandatory_header_field_is_system_error():
    """REGISTER_BROKER without brokerName → SYSTEM_ERROR naming the field; nothing stored."""
    d, ns, _, client = setup()
    ext = {"brokerAddr": "a", "clusterName": "c", "brokerId": "0"}
    resp = ask(d, client, RequestCode.REGISTER_BROKER, ext)
    assert (resp.code, resp.remark) == (1, "the custom field <brokerName> is null")
    assert ns.route_info_manager.cluster_addr_table == {}


def test_inspect_routes_and_trace():
    """inspect_routes() gives plain dicts; registerBroker emits a trace event."""
    d, ns, broker, _ = setup()
    broker.register()
    events = d.run_until_idle()
    snap = ns.inspect_routes()
    assert snap["broker_addr_table"] == {
        "broker-a": {
            "brokerAddrs": {0: "127.0.0.1:10911"},
            "brokerName": "broker-a",
            "cluster": "DefaultCluster",
        }
    }
    assert snap["kv_config_table"] == {}
    [ev] = [e for e in events if e.component == "RouteInfoManager.registerBroker"]
    assert (ev.t_ms, ev.node, ev.step, ev.fields["new_topics"]) == (
        1,
        "namesrv",
        "register",
        ["TopicTest"],
    )


def test_kv_config_persisted_and_reloaded(tmp_path):
    """With kv_config_path set, puts are written as {"configTable":…} and loaded on start."""
    path = tmp_path / "namesrv" / "kvConfig.json"
    d, _, _, client = setup(NamesrvConfig(kv_config_path=str(path)))
    ask(d, client, RequestCode.PUT_KV_CONFIG, {"namespace": "ns", "key": "k", "value": "v"})
    assert path.read_text() == '{"configTable":{"ns":{"k":"v"}}}'
    d2 = SimDriver(seed=7)
    ns2 = NamesrvController(NamesrvConfig(kv_config_path=str(path)))
    d2.add_node(ns2)
    assert ns2.kv_config_manager.get_kv_config("ns", "k") == "v"


#: JDK 17's Properties order (JavaProperties), as the real 4.9.3 name server lists it
#: (conformance row namesrv-registration namesrv-config/get).
DEFAULT_CONFIG_TEXT = (
    b"serverSocketBacklog=1024\nwriteBufferHighWaterMark=0\nserverWorkerThreads=8\n"
    b"serverSelectorThreads=3\nserverChannelMaxIdleTimeSeconds=120\nwriteBufferLowWaterMark=0\n"
    b"serverSocketRcvBufSize=0\nserverAsyncSemaphoreValue=64\nclusterTest=false\n"
    b"orderMessageEnable=false\nserverSocketSndBufSize=0\nserverOnewaySemaphoreValue=256\n"
    b"serverCallbackExecutorThreads=0\nlistenPort=9876\nproductEnvName=center\n"
    b"useEpollNativeSelector=false\nserverPooledByteBufAllocatorEnable=true\n"
)


def test_get_namesrv_config_body():
    """GET_NAMESRV_CONFIG (319): NamesrvConfig + NettyServerConfig as "key=value\\n" text
    (Configuration#getAllConfigsFormatString); null fields (rocketmqHome, the two paths) left out."""
    d, _, _, client = setup()
    resp = ask(d, client, RequestCode.GET_NAMESRV_CONFIG)
    assert (resp.code, resp.remark, resp.ext_fields, resp.body) == (
        0,
        None,
        {},
        DEFAULT_CONFIG_TEXT,
    )


def test_update_namesrv_config_then_get():
    """UPDATE_NAMESRV_CONFIG (318): SUCCESS; known fields change, unknown keys are dropped, an
    unparsable int is ignored, non-ASCII comes back as ISO-8859-1 mojibake; the new
    orderMessageEnable is used by the next GET_ROUTEINFO_BY_TOPIC."""
    d, ns, broker, client = setup()
    body = "orderMessageEnable=true\nlistenPort=x\nproductEnvName=é\nnope=1\n".encode()
    resp = ask(d, client, RequestCode.UPDATE_NAMESRV_CONFIG, body=body)
    assert (resp.code, resp.remark, resp.ext_fields, resp.body) == (0, None, {}, None)
    assert ns.namesrv_config.order_message_enable is True
    got = ask(d, client, RequestCode.GET_NAMESRV_CONFIG).body
    assert got == DEFAULT_CONFIG_TEXT.replace(
        b"orderMessageEnable=false", b"orderMessageEnable=true"
    ).replace(b"productEnvName=center", "productEnvName=Ã©".encode())
    ask(
        d,
        client,
        RequestCode.PUT_KV_CONFIG,
        {"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest", "value": "broker-a:4"},
    )
    broker.register()
    d.run_until_idle()
    assert b'"orderTopicConf":"broker-a:4"' in route(d, client).body


def test_update_namesrv_config_without_body_or_bad_escape():
    """No body → SUCCESS, nothing changes; a body Properties#load refuses (malformed \\uxxxx)
    → SYSTEM_ERROR "string2Properties error" (DefaultRequestProcessor#updateConfig)."""
    d, _, _, client = setup()
    assert ask(d, client, RequestCode.UPDATE_NAMESRV_CONFIG).code == 0
    bad = ask(d, client, RequestCode.UPDATE_NAMESRV_CONFIG, body=b"clusterTest=true\nx=\\u12zz\n")
    assert (bad.code, bad.remark) == (1, "string2Properties error")
    assert ask(d, client, RequestCode.GET_NAMESRV_CONFIG).body == DEFAULT_CONFIG_TEXT


def test_update_namesrv_config_paths_accepted_but_no_file_written(tmp_path):
    """4.9.3 refuses no key: kvConfigPath / configStorePath are set (GET shows them); mqlab
    then writes no file from a request (Java would persist both there)."""
    d, ns, _, client = setup()
    kv, store = tmp_path / "kv.json", tmp_path / "namesrv.properties"
    body = f"kvConfigPath={kv}\nconfigStorePath={store}\n".encode()
    assert ask(d, client, RequestCode.UPDATE_NAMESRV_CONFIG, body=body).code == 0
    assert (ns.namesrv_config.kv_config_path, ns.namesrv_config.config_store_path) == (
        str(kv),
        str(store),
    )
    got = ask(d, client, RequestCode.GET_NAMESRV_CONFIG).body.decode()
    assert f"configStorePath={store}\n" in got and f"kvConfigPath={kv}\n" in got
    ask(d, client, RequestCode.PUT_KV_CONFIG, {"namespace": "n", "key": "k", "value": "v"})
    assert list(tmp_path.iterdir()) == []


def test_listen_port_follows_the_address():
    """NettyServerConfig.listenPort: the controller's port (NamesrvStartup sets 9876)."""
    ns = NamesrvController(address="127.0.0.1:19876")
    assert ns.configuration.all_configs.get("listenPort") == "19876"
