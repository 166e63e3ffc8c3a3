"""Offsets: consumer offsets (query/update, the new-group rule) and the queue offsets a
client asks for (max, min, by timestamp, earliest store time)."""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import SETTLE_MS, query_offset, send_v2, update_offset

__all__ = ["SCENARIOS"]

T = "cf_off"
G = "cf_off_group"


def _q(name: str, code: str, topic: str, queue_id: int, **extra: str) -> Step:
    return Step(name, code, {"topic": topic, "queueId": str(queue_id), **extra})


SCENARIOS = [
    Scenario(
        "offsets",
        "queue-offsets",
        [
            _q("max_unknown_topic", "GET_MAX_OFFSET", "cf_off_nosuch", 0),
            _q("min_unknown_topic", "GET_MIN_OFFSET", "cf_off_nosuch", 0),
            _q("earliest_unknown_topic", "GET_EARLIEST_MSG_STORETIME", "cf_off_nosuch", 0),
            _q(
                "search_unknown_topic",
                "SEARCH_OFFSET_BY_TIMESTAMP",
                "cf_off_nosuch",
                0,
                timestamp="0",
            ),
            *[send_v2(f"send_{i}", T, 0, f"m{i}".encode(), n=500 + i, expect=0) for i in range(3)],
            send_v2("send_q1", T, 1, b"q1", n=510, expect=0),
            Step("max_q0", "GET_MAX_OFFSET", {"topic": T, "queueId": "0"}, wait_ms=SETTLE_MS),
            _q("max_q1", "GET_MAX_OFFSET", T, 1),
            _q("max_q2_empty", "GET_MAX_OFFSET", T, 2),
            _q("max_q9_no_queue", "GET_MAX_OFFSET", T, 9),
            _q("min_q0", "GET_MIN_OFFSET", T, 0),
            _q("min_q2_empty", "GET_MIN_OFFSET", T, 2),
            _q("earliest_q0", "GET_EARLIEST_MSG_STORETIME", T, 0),
            _q("earliest_q2_empty", "GET_EARLIEST_MSG_STORETIME", T, 2),
            _q("search_ts_0", "SEARCH_OFFSET_BY_TIMESTAMP", T, 0, timestamp="0"),
            _q("search_ts_future", "SEARCH_OFFSET_BY_TIMESTAMP", T, 0, timestamp="${now+600000}"),
            _q(
                "search_ts_past_hour",
                "SEARCH_OFFSET_BY_TIMESTAMP",
                T,
                0,
                timestamp="${now-3600000}",
            ),
            _q("search_ts_empty_queue", "SEARCH_OFFSET_BY_TIMESTAMP", T, 2, timestamp="${now}"),
            Step("max_missing_queue_id", "GET_MAX_OFFSET", {"topic": T}),
        ],
        doc="GET_MAX_OFFSET, GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, "
        "GET_EARLIEST_MSG_STORETIME on known, empty and unknown queues.",
    ),
    Scenario(
        "offsets",
        "consumer-offsets",
        [
            query_offset(
                "new_group_unknown_topic",
                G,
                "cf_off_nosuch",
                0,
                note="no offset, no queue: QUERY_NOT_FOUND (22)",
            ),
            send_v2("send", "cf_off_c", 0, b"x", n=520, expect=0),
            query_offset(
                "new_group_first_file",
                G,
                "cf_off_c",
                0,
                note="new-group rule: minOffset 0 and message 0 in memory: offset 0",
                wait_ms=SETTLE_MS,
            ),
            query_offset("new_group_empty_queue", G, "cf_off_c", 3),
            update_offset("update_1", G, "cf_off_c", 0, 1),
            query_offset("after_update_1", G, "cf_off_c", 0),
            update_offset("update_back_0", G, "cf_off_c", 0, 0),
            query_offset("after_update_0", G, "cf_off_c", 0),
            update_offset("update_beyond_max", G, "cf_off_c", 0, 99),
            query_offset("after_beyond_max", G, "cf_off_c", 0),
            update_offset("update_unknown_topic", G, "cf_off_nosuch2", 0, 5),
            query_offset("after_unknown_topic", G, "cf_off_nosuch2", 0),
            update_offset("update_negative", G, "cf_off_c", 1, -1),
            query_offset("after_negative", G, "cf_off_c", 1),
            Step(
                "query_missing_group",
                "QUERY_CONSUMER_OFFSET",
                {"topic": "cf_off_c", "queueId": "0"},
            ),  # fmt: skip
            Step(
                "update_missing_offset",
                "UPDATE_CONSUMER_OFFSET",
                {"consumerGroup": G, "topic": "cf_off_c", "queueId": "0"},
            ),  # fmt: skip
        ],
        doc="QUERY_CONSUMER_OFFSET with the new-group rule, UPDATE_CONSUMER_OFFSET.",
    ),
    Scenario(
        "offsets",
        "search-by-time",
        [
            send_v2("m0", "cf_off_time", 0, b"m0", n=530, expect=0),
            send_v2("m1", "cf_off_time", 0, b"m1", n=531, wait_ms=400, expect=0),
            Step(
                "before_all",
                "SEARCH_OFFSET_BY_TIMESTAMP",
                {"topic": "cf_off_time", "queueId": "0", "timestamp": "${now-1000}"},
                wait_ms=400,
            ),  # fmt: skip
            Step(
                "between",
                "SEARCH_OFFSET_BY_TIMESTAMP",
                {"topic": "cf_off_time", "queueId": "0", "timestamp": "${now-600}"},
            ),  # fmt: skip
            Step(
                "after_all",
                "SEARCH_OFFSET_BY_TIMESTAMP",
                {"topic": "cf_off_time", "queueId": "0", "timestamp": "${now-200}"},
            ),  # fmt: skip
            Step(
                "earliest", "GET_EARLIEST_MSG_STORETIME", {"topic": "cf_off_time", "queueId": "0"}
            ),  # fmt: skip
            update_offset("retry_topic_offset", G, "%RETRY%" + G, 0, 3),
            query_offset("retry_topic_query", G, "%RETRY%" + G, 0),
            query_offset("other_group_same_queue", "cf_off_other", "cf_off_time", 0),
        ],
        doc="SEARCH_OFFSET_BY_TIMESTAMP before, between and after two messages 400 ms "
        "apart; offsets of a %RETRY% topic.",
    ),
]
