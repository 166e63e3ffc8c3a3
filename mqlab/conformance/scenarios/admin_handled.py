"""The admin and name-server requests mqlab already answered but no row sent before.

Three mechanisms, one group each:

* ``message-query``: the index (``IndexService``) answering QUERY_MESSAGE (12) by key and
  by unique key, and VIEW_MESSAGE_BY_ID (33) reading one entry at a commit-log offset
  (``QueryMessageProcessor``, broker, rocketmq-all-4.9.3);
* ``consumer-admin``: what ``AdminBrokerProcessor`` tells mqadmin about consumers and
  producers: GET_CONSUMER_CONNECTION_LIST (203), GET_PRODUCER_CONNECTION_LIST (204),
  GET_CONSUME_STATS (208), QUERY_TOPIC_CONSUME_BY_WHO (300), GET_ALL_CONSUMER_OFFSET (43),
  INVOKE_BROKER_TO_RESET_OFFSET (222, ``Broker2Client#resetOffset``), and the broker's own
  state: GET_BROKER_CONFIG (26), GET_BROKER_RUNTIME_INFO (28), GET_ALL_DELAY_OFFSET (45);
* ``namesrv-registration``: a second, made-up broker registering with the name server
  (REGISTER_BROKER 103, QUERY_DATA_VERSION 322, UNREGISTER_BROKER 104), the permission
  switches (WIPE/ADD_WRITE_PERM_OF_BROKER 205/327), the topic lists built from the
  registrations (GET_TOPICS_BY_CLUSTER 224, GET_SYSTEM_TOPIC_LIST_FROM_NS 304, the unit
  lists 311/312/313) and the name server's own config (UPDATE/GET_NAMESRV_CONFIG 318/319)
  (``DefaultRequestProcessor``, namesrv, rocketmq-all-4.9.3).
"""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step, json_body
from mqlab.conformance.scenarios.common import SETTLE_MS, heartbeat, route, send_v2, uniq

__all__ = ["SCENARIOS", "GROUPS"]

GROUPS: dict[str, str] = {
    "message-query": "QUERY_MESSAGE (12) by key and unique key from the index, "
    "VIEW_MESSAGE_BY_ID (33) at a commit-log offset.",
    "consumer-admin": "What mqadmin reads about clients and the broker: consumer and producer "
    "connections, consume stats, consume-by-who, all consumer / delay offsets, reset offset, "
    "broker config and runtime info.",
    "namesrv-registration": "A made-up broker registering, its data version, write permission "
    "wiped and added back, topic lists by cluster, system and unit topics, unregistering; "
    "the name server's config.",
}

Q = "cf_query"
C = "cf_cadm"
CG = "cf_cadm_g"
PG = "cf_cadm_pg"
#: Longs a query spans: everything ever stored (no clock in the request).
ALL_TIME = {"beginTimestamp": "0", "endTimestamp": "9223372036854775807"}


def _create(name: str, topic: str, queues: int = 2) -> Step:
    return Step(name, "UPDATE_AND_CREATE_TOPIC", {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": str(queues),
        "writeQueueNums": str(queues), "perm": "6", "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": "0", "order": "false",
    }, expect=0)  # fmt: skip


def _query(name: str, key: str, max_num: int = 32, unique: bool = False, note: str = "") -> Step:
    h = {"topic": Q, "key": key, "maxNum": str(max_num), **ALL_TIME}
    if unique:
        h["_UNIQUE_KEY_QUERY"] = "true"
    return Step(name, "QUERY_MESSAGE", h, body_kind="messages", note=note, wait_ms=0)


MESSAGE_QUERY = Scenario(
    "message-query",
    "query-message-by-key",
    [
        _create("create", Q),
        send_v2("send_a", Q, 0, b"query-a", n=3001, keys="order-1 common", expect=0),
        send_v2("send_b", Q, 1, b"query-b", n=3002, keys="order-2 common", expect=0),
        send_v2("send_c", Q, 0, b"query-c", n=3003, keys="order-1", expect=0),
        Step(
            "by_key",
            "QUERY_MESSAGE",
            {"topic": Q, "key": "order-1", "maxNum": "32", **ALL_TIME},
            body_kind="messages",
            wait_ms=SETTLE_MS,
            note="two messages carry key order-1",
        ),  # fmt: skip
        _query("by_common_key", "common", note="a key shared by two messages"),
        _query("by_key_max_1", "order-1", max_num=1, note="maxNum 1"),
        _query("by_missing_key", "nosuch", note="no message: QUERY_NOT_FOUND (22)"),
        _query("by_unique_key", uniq(3002), unique=True, note="the UNIQ_KEY index entry"),
        Step(
            "by_key_other_topic",
            "QUERY_MESSAGE",
            {"topic": "cf_query_none", "key": "order-1", "maxNum": "32", **ALL_TIME},
            body_kind="messages",
        ),  # fmt: skip
        Step(
            "view_a",
            "VIEW_MESSAGE_BY_ID",
            {"offset": "${send_a.msgId|offset}"},
            body_kind="messages",
            note="the stored entry at send_a's offset",
        ),  # fmt: skip
        Step(
            "view_c",
            "VIEW_MESSAGE_BY_ID",
            {"offset": "${send_c.msgId|offset}"},
            body_kind="messages",
        ),  # fmt: skip
        Step(
            "view_bad_offset",
            "VIEW_MESSAGE_BY_ID",
            {"offset": "999999999"},
            note="no entry there: SYSTEM_ERROR",
        ),  # fmt: skip
    ],
    doc="Messages found through the index by key, by unique key, with maxNum, and one entry "
    "read at its commit-log offset.",
)


def _producer_heartbeat(name: str, client_id: str, group: str) -> Step:
    body = {"clientID": client_id, "consumerDataSet": [],
            "producerDataSet": [{"groupName": group}]}  # fmt: skip
    return Step(name, "HEART_BEAT", {}, json_body(body))


CONSUMER_ADMIN = Scenario(
    "consumer-admin",
    "connections-stats-and-offsets",
    [
        _create("create", C),
        send_v2("send_0", C, 0, b"cadm-0", n=3101, expect=0),
        send_v2("send_1", C, 0, b"cadm-1", n=3102, expect=0),
        send_v2("send_2", C, 1, b"cadm-2", n=3103, expect=0),
        Step(
            "consumers_offline",
            "GET_CONSUMER_CONNECTION_LIST",
            {"consumerGroup": CG},
            note="nobody online: CONSUMER_NOT_ONLINE (206)",
        ),  # fmt: skip
        Step("producers_offline", "GET_PRODUCER_CONNECTION_LIST", {"producerGroup": PG}),
        Step(
            "reset_offline",
            "INVOKE_BROKER_TO_RESET_OFFSET",
            {"topic": C, "group": CG, "timestamp": "-1", "isForce": "true"},
            note="no consumer online",
        ),  # fmt: skip
        Step(
            "reset_unknown_topic",
            "INVOKE_BROKER_TO_RESET_OFFSET",
            {"topic": "cf_cadm_none", "group": CG, "timestamp": "-1", "isForce": "true"},
        ),
        heartbeat("hb_consumer", "127.0.0.1@cadm", CG, C),
        _producer_heartbeat("hb_producer", "127.0.0.1@cadm-p", PG),
        Step("consumers", "GET_CONSUMER_CONNECTION_LIST", {"consumerGroup": CG}),
        Step("producers", "GET_PRODUCER_CONNECTION_LIST", {"producerGroup": PG}),
        Step(
            "update_q0",
            "UPDATE_CONSUMER_OFFSET",
            {"consumerGroup": CG, "topic": C, "queueId": "0", "commitOffset": "1"},
        ),
        Step(
            "consume_stats",
            "GET_CONSUME_STATS",
            {"consumerGroup": CG, "topic": C},
            wait_ms=SETTLE_MS,
            note="q0 consumed up to 1 of 2, q1 0 of 1",
        ),  # fmt: skip
        Step("consume_stats_all", "GET_CONSUME_STATS", {"consumerGroup": CG}),
        Step("consume_stats_unknown", "GET_CONSUME_STATS", {"consumerGroup": "cf_cadm_nog"}),
        Step("consume_by_who", "QUERY_TOPIC_CONSUME_BY_WHO", {"topic": C}),
        Step("consume_by_who_none", "QUERY_TOPIC_CONSUME_BY_WHO", {"topic": "cf_cadm_none"}),
        Step("all_consumer_offsets", "GET_ALL_CONSUMER_OFFSET", {}),
        Step(
            "reset_to_max",
            "INVOKE_BROKER_TO_RESET_OFFSET",
            {"topic": C, "group": CG, "timestamp": "-1", "isForce": "true"},
            note="timestamp -1: every queue's max offset, told to the online client",
        ),
        Step(
            "reset_not_forced",
            "INVOKE_BROKER_TO_RESET_OFFSET",
            {"topic": C, "group": CG, "timestamp": "0", "isForce": "false"},
            note="not forced: an earlier offset keeps the consumer's",
        ),  # fmt: skip
        Step(
            "offset_after_reset",
            "QUERY_CONSUMER_OFFSET",
            {"consumerGroup": CG, "topic": C, "queueId": "0"},
        ),  # fmt: skip
        Step(
            "unregister", "UNREGISTER_CLIENT", {"clientID": "127.0.0.1@cadm", "consumerGroup": CG}
        ),  # fmt: skip
        Step(
            "unregister_p",
            "UNREGISTER_CLIENT",
            {"clientID": "127.0.0.1@cadm-p", "producerGroup": PG},
        ),  # fmt: skip
        Step("delay_offsets", "GET_ALL_DELAY_OFFSET", {}),
        Step("broker_config", "GET_BROKER_CONFIG", {}, body_kind="properties"),
        Step("runtime_info", "GET_BROKER_RUNTIME_INFO", {}),
    ],
    doc="Consumer and producer connections before and after heartbeats, consume stats, "
    "consume-by-who, every consumer and delay offset, reset offset (offline, unknown topic, "
    "forced to max, not forced), the broker's config and runtime info.",
)

FAKE = {
    "brokerName": "cf-fake-broker",
    "brokerAddr": "127.0.0.1:1",
    "clusterName": "cf_fake_cluster",
}
FAKE_VERSION = {"counter": 3, "timestamp": 1764150000000}


def _topic(name: str, sys_flag: int) -> dict:
    return {"order": False, "perm": 6, "readQueueNums": 2, "topicFilterType": "SINGLE_TAG",
            "topicName": name, "topicSysFlag": sys_flag, "writeQueueNums": 2}  # fmt: skip


#: TopicSysFlag (common/sysflag, 4.9.3): FLAG_UNIT = 1, FLAG_UNIT_SUB = 2.
FAKE_TOPICS = {"cf_fake_plain": 0, "cf_fake_unit": 1, "cf_fake_unit_sub": 2, "cf_fake_both": 3}


def _register(name: str, version: dict = FAKE_VERSION) -> Step:
    body = {
        "filterServerList": [],
        "topicConfigSerializeWrapper": {
            "dataVersion": version,
            "topicConfigTable": {t: _topic(t, f) for t, f in FAKE_TOPICS.items()},
        },
    }
    return Step(name, "REGISTER_BROKER", {**FAKE, "brokerId": "0", "haServerAddr": "127.0.0.1:2",
                "compressed": "false", "bodyCrc32": "0"}, json_body(body), to="namesrv",
                expect=0)  # fmt: skip


def _ns(name: str, code: str, header: dict | None = None, body: bytes | str | None = None,
        note: str = "", kind: str = "auto") -> Step:  # fmt: skip
    return Step(name, code, header or {}, body, to="namesrv", note=note, body_kind=kind)


_BROKER_KEY = {k: FAKE[k] for k in ("brokerName", "brokerAddr", "clusterName")}

NAMESRV_REGISTRATION = Scenario(
    "namesrv-registration",
    "fake-broker",
    [
        _ns("system_topics_before", "GET_SYSTEM_TOPIC_LIST_FROM_NS"),
        _register("register"),
        route("route_unit", "cf_fake_unit"),
        _ns(
            "data_version_same",
            "QUERY_DATA_VERSION",
            {**_BROKER_KEY, "brokerId": "0"},
            json_body(FAKE_VERSION),
            note="the version it registered: changed false",
        ),
        _ns(
            "data_version_newer",
            "QUERY_DATA_VERSION",
            {**_BROKER_KEY, "brokerId": "0"},
            json_body({"counter": 4, "timestamp": 1764150000000}),
            note="changed true",
        ),
        _ns("topics_by_cluster", "GET_TOPICS_BY_CLUSTER", {"cluster": "cf_fake_cluster"}),
        _ns("system_topics", "GET_SYSTEM_TOPIC_LIST_FROM_NS"),
        _ns("unit_topics", "GET_UNIT_TOPIC_LIST"),
        _ns("has_unit_sub", "GET_HAS_UNIT_SUB_TOPIC_LIST"),
        _ns("has_unit_sub_ununit", "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST"),
        _ns(
            "wipe",
            "WIPE_WRITE_PERM_OF_BROKER",
            {"brokerName": FAKE["brokerName"]},
            note="wipeTopicCount: its four topics",
        ),  # fmt: skip
        route("route_wiped", "cf_fake_plain"),
        _ns("wipe_unknown", "WIPE_WRITE_PERM_OF_BROKER", {"brokerName": "cf-no-broker"}),
        _ns("add", "ADD_WRITE_PERM_OF_BROKER", {"brokerName": FAKE["brokerName"]}),
        route("route_added", "cf_fake_plain"),
        _ns("unregister", "UNREGISTER_BROKER", {**_BROKER_KEY, "brokerId": "0"}),
        route("route_gone", "cf_fake_plain", note="TOPIC_NOT_EXIST (17)"),
        _ns("topics_by_cluster_gone", "GET_TOPICS_BY_CLUSTER", {"cluster": "cf_fake_cluster"}),
        _ns(
            "data_version_gone",
            "QUERY_DATA_VERSION",
            {**_BROKER_KEY, "brokerId": "0"},
            json_body(FAKE_VERSION),
            note="not registered: changed true",
        ),
    ],
    doc="A made-up broker (its own cluster, four topics with unit flags) registers, is asked "
    "for its data version, loses and regains write permission, and unregisters; the topic "
    "lists the name server builds from registrations.",
)

NAMESRV_CONFIG = Scenario(
    "namesrv-registration",
    "namesrv-config",
    [
        _ns("get", "GET_NAMESRV_CONFIG", kind="properties"),
        _ns("update", "UPDATE_NAMESRV_CONFIG", body="orderMessageEnable=true\n"),
        _ns("get_updated", "GET_NAMESRV_CONFIG", kind="properties"),
        _ns("update_back", "UPDATE_NAMESRV_CONFIG", body="orderMessageEnable=false\n"),
        _ns("update_no_body", "UPDATE_NAMESRV_CONFIG"),
    ],
    doc="The name server's NamesrvConfig and NettyServerConfig as properties text, one "
    "setting changed and changed back.",
)

SCENARIOS = [MESSAGE_QUERY, CONSUMER_ADMIN, NAMESRV_REGISTRATION, NAMESRV_CONFIG]
