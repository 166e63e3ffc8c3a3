"""Admin and name server: topics created, listed, described and deleted; cluster info;
the KV config; an unknown request code."""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import SETTLE_MS, route, send_v2

__all__ = ["SCENARIOS"]

T = "cf_adm"


def _create(name: str, topic: str, *, read: int = 4, write: int = 4, perm: int = 6,
            note: str = "", **extra: str) -> Step:  # fmt: skip
    return Step(name, "UPDATE_AND_CREATE_TOPIC", {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": str(read),
        "writeQueueNums": str(write), "perm": str(perm), "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": "0", "order": "false", **extra,
    }, note=note)  # fmt: skip


def _ns(name: str, code: str, note: str = "", wait_ms: int = 0, **header: str) -> Step:
    return Step(name, code, header, to="namesrv", note=note, wait_ms=wait_ms)


SCENARIOS = [
    Scenario(
        "admin-namesrv",
        "topics",
        [
            _create("create", T),
            _create("create_bad_name", "cf adm bad", note="a space: SYSTEM_ERROR"),
            _create("create_system", "SCHEDULE_TOPIC_XXXX", note="a system topic"),
            _create("create_8_2", f"{T}_82", read=8, write=2, perm=4),
            route("route", T, wait_ms=300),
            route("route_8_2", f"{T}_82"),
            send_v2("send", T, 0, b"adm", n=1100, expect=0),
            Step("stats", "GET_TOPIC_STATS_INFO", {"topic": T}, wait_ms=SETTLE_MS),
            Step("stats_unknown", "GET_TOPIC_STATS_INFO", {"topic": "cf_adm_nosuch"}),
            Step("all_topic_config", "GET_ALL_TOPIC_CONFIG", {}),
            _ns("topic_list", "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"),
            _ns("cluster_info", "GET_BROKER_CLUSTER_INFO"),
            Step("delete_in_broker", "DELETE_TOPIC_IN_BROKER", {"topic": f"{T}_82"}),
            _ns("delete_in_namesrv", "DELETE_TOPIC_IN_NAMESRV", topic=f"{T}_82"),
            route("route_deleted", f"{T}_82", note="gone: TOPIC_NOT_EXIST (17)"),
        ],
        doc="UPDATE_AND_CREATE_TOPIC, GET_ROUTEINFO_BY_TOPIC, GET_TOPIC_STATS_INFO, "
        "GET_ALL_TOPIC_CONFIG, the name server's topic list and cluster info, deletion.",
    ),
    Scenario(
        "admin-namesrv",
        "kv-config",
        [
            _ns("put", "PUT_KV_CONFIG", namespace="CF_NS", key="k1", value="v1"),
            _ns("put_2", "PUT_KV_CONFIG", namespace="CF_NS", key="k2", value="v2"),
            _ns("get", "GET_KV_CONFIG", namespace="CF_NS", key="k1"),
            _ns("get_missing", "GET_KV_CONFIG", namespace="CF_NS", key="nope"),
            _ns("list", "GET_KVLIST_BY_NAMESPACE", namespace="CF_NS"),
            _ns("list_missing", "GET_KVLIST_BY_NAMESPACE", namespace="CF_NO_NS"),
            _ns("delete", "DELETE_KV_CONFIG", namespace="CF_NS", key="k1"),
            _ns("get_deleted", "GET_KV_CONFIG", namespace="CF_NS", key="k1"),
        ],
        doc="The name server's KV config: PUT/GET/DELETE_KV_CONFIG, GET_KVLIST_BY_NAMESPACE.",
    ),
    Scenario(
        "admin-namesrv",
        "unknown-code",
        [
            Step("broker_9999", 9999, {}),
            Step(
                "namesrv_9999",
                9999,
                {},
                to="namesrv",
                timeout_s=2,
                note="no answer: DefaultRequestProcessor returns null for an unknown code",
            ),
        ],
        doc="An unknown request code: the broker answers REQUEST_CODE_NOT_SUPPORTED (3) with "
        "Java's remark; the name server does not answer at all (the caller times out).",
    ),
]
