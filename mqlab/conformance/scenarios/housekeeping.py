"""Clients' housekeeping: heartbeats, the consumer list, unregistering, CHECK_CLIENT_CONFIG,
and the orderly consumers' queue locks (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ)."""

from __future__ import annotations

import json

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import heartbeat, send_v2

__all__ = ["SCENARIOS"]

T = "cf_hk"
G = "cf_hk_group"
C1, C2 = "127.0.0.1@cf_hk_1", "127.0.0.1@cf_hk_2"


def _json(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _lock_body(client: str, queues: list[int]) -> str:
    return _json({
        "clientId": client, "consumerGroup": G,
        "mqSet": [{"brokerName": "broker-a", "queueId": q, "topic": T} for q in queues],
    })  # fmt: skip


def _check_config(name: str, sub: str, expression_type: str, note: str = "") -> Step:
    body = {"clientId": C1, "group": G, "subscriptionData": {
        "classFilterMode": False, "codeSet": [], "expressionType": expression_type,
        "subString": sub, "subVersion": 1, "tagsSet": [], "topic": T,
    }}  # fmt: skip
    return Step(name, "CHECK_CLIENT_CONFIG", {}, _json(body), note=note)


SCENARIOS = [
    Scenario(
        "client-housekeeping",
        "heartbeat-and-consumer-list",
        [
            send_v2("create", T, 0, b"hk", n=900, expect=0),
            Step(
                "list_before",
                "GET_CONSUMER_LIST_BY_GROUP",
                {"consumerGroup": G},
                note="no consumer of this group yet",
            ),
            heartbeat("heartbeat", C1, G, T, "TagA || TagB"),
            Step("list_after", "GET_CONSUMER_LIST_BY_GROUP", {"consumerGroup": G}),
            Step(
                "retry_route",
                "GET_ROUTEINFO_BY_TOPIC",
                {"topic": f"%RETRY%{G}"},
                to="namesrv",
                wait_ms=300,
                note="the heartbeat created the group's %RETRY% topic",
            ),
            heartbeat("heartbeat_same_channel", C2, G, T, "*"),
            Step(
                "list_replaced",
                "GET_CONSUMER_LIST_BY_GROUP",
                {"consumerGroup": G},
                note="one channel, one client: the second id replaces the first",
            ),
            Step(
                "unregister",
                "UNREGISTER_CLIENT",
                {"clientID": C2, "consumerGroup": G, "producerGroup": None},
            ),
            Step("list_unregistered", "GET_CONSUMER_LIST_BY_GROUP", {"consumerGroup": G}),
            Step("unregister_again", "UNREGISTER_CLIENT", {"clientID": C2, "consumerGroup": G}),
        ],
        doc="HEART_BEAT registers a consumer per channel, GET_CONSUMER_LIST_BY_GROUP lists it, "
        "UNREGISTER_CLIENT removes it.",
    ),
    Scenario(
        "client-housekeeping",
        "unregister-empty-group",
        [
            Step(
                "unregister_producer",
                "UNREGISTER_CLIENT",
                {"clientID": C1, "producerGroup": f"{G}_pg"},
                note="a Java producer: no consumerGroup field",
            ),
            Step(
                "unregister_producer_cpp",
                "UNREGISTER_CLIENT",
                {"clientID": C1, "producerGroup": f"{G}_pg", "consumerGroup": ""},
                note='the C++ client\'s producer: consumerGroup ""',
            ),
            Step(
                "all_groups",
                "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
                {},
                note='findSubscriptionGroupConfig("") auto-created a group named ""',
            ),
        ],
        doc="UNREGISTER_CLIENT looks up every group that is not null: an empty consumerGroup "
        '(as the C++ client sends) auto-creates a subscription group named "".',
    ),
    Scenario(
        "client-housekeeping",
        "check-client-config",
        [
            _check_config("tag", "TagA || TagB", "TAG"),
            _check_config("sql_ok", "a > 5 AND b = 'x'", "SQL92"),
            _check_config("sql_bad", "a >>> 5", "SQL92", note="SUBSCRIPTION_PARSE_FAILED"),
            _check_config(
                "sql_eof", "a >", "SQL92", note="JavaCC places <EOF> on the last character read"
            ),
            _check_config("sql_empty", "", "SQL92", note="an empty selector: <EOF> at 0, 0"),
            _check_config(
                "sql_keyword",
                "a and between 2 and 10",
                "SQL92",
                note="a keyword token: its kind and its text",
            ),
            _check_config(
                "sql_lexical", "a = 1 # b", "SQL92", note="no token starts with '#': TokenMgrError"
            ),
            _check_config(
                "sql_lexical_last",
                "a = 1 #",
                "SQL92",
                note="the same character last: JavaCC's look past it meets <EOF>",
            ),
            _check_config(
                "sql_open_string", "a = 'open", "SQL92", note="an unterminated string literal"
            ),
            _check_config(
                "unknown_type",
                "a",
                "XPATH",
                note="no FilterSpi registered for the type: a NullPointerException's message",
            ),
        ],
        doc="CHECK_CLIENT_CONFIG compiles the subscription as the broker would.",
    ),
    Scenario(
        "client-housekeeping",
        "queue-locks",
        [
            send_v2("create", T, 1, b"hk-lock", n=901, expect=0),
            Step("lock_c1", "LOCK_BATCH_MQ", {}, _lock_body(C1, [0, 1])),
            Step(
                "lock_c2_taken",
                "LOCK_BATCH_MQ",
                {},
                _lock_body(C2, [1, 2]),
                note="queue 1 is c1's: only queue 2 is granted",
            ),
            Step("relock_c1", "LOCK_BATCH_MQ", {}, _lock_body(C1, [0, 1])),
            Step("unlock_c1", "UNLOCK_BATCH_MQ", {}, _lock_body(C1, [1])),
            Step("lock_c2_free", "LOCK_BATCH_MQ", {}, _lock_body(C2, [1])),
            Step("unlock_not_owner", "UNLOCK_BATCH_MQ", {}, _lock_body(C1, [2])),
            Step("lock_c1_after", "LOCK_BATCH_MQ", {}, _lock_body(C1, [0, 1, 2])),
        ],
        doc="RebalanceLockManager: a queue locked by one client is not granted to another "
        "until it is unlocked (or the lock expires after 60 s).",
    ),
]
