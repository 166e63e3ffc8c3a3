"""Retry: CONSUMER_SEND_MSG_BACK to %RETRY%, to %DLQ% (maxReconsumeTimes reached, or a
negative delay level), and scheduled delivery on a short ``messageDelayLevel``
(level n = n s here)."""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import SETTLE_MS, pull, route, send_v2, uniq

__all__ = ["SCENARIOS"]

T = "cf_rt"
G = "cf_rt_group"


def _back(name: str, send: str, n: int, *, delay: int = 0, max_times: int = 16,
          group: str = G, offset: str | None = None, note: str = "",
          wait_ms: int = 0, expect: int | None = None) -> Step:  # fmt: skip
    """CONSUMER_SEND_MSG_BACK as MQClientAPIImpl#consumerSendMessageBack builds it: the
    message's commit-log offset (from step ``send``'s offsetMsgId) and, as originMsgId,
    ``msg.getMsgId()``, which for a pulled message is its UNIQ_KEY (MessageClientExt),
    here ``uniq(n)`` of the send."""
    return Step(name, "CONSUMER_SEND_MSG_BACK", {
        "offset": offset or f"${{{send}.msgId|offset}}", "group": group,
        "delayLevel": str(delay), "originMsgId": uniq(n), "originTopic": T,
        "unitMode": "false", "maxReconsumeTimes": str(max_times),
    }, note=note, wait_ms=wait_ms, expect=expect)  # fmt: skip


SCENARIOS = [
    Scenario(
        "retry",
        "send-back-to-retry",
        [
            send_v2("send", T, 0, b"retry-me", n=1000, expect=0),
            _back(
                "back",
                "send",
                1000,
                wait_ms=SETTLE_MS,
                note="delay level 3 + reconsumeTimes: parked in SCHEDULE_TOPIC_XXXX",
            ),
            route("retry_route", f"%RETRY%{G}", wait_ms=300),
            pull("retry_before", G, f"%RETRY%{G}", 0, 0, note="not delivered yet (level 3 = 3 s)"),
            pull(
                "retry_after",
                G,
                f"%RETRY%{G}",
                0,
                0,
                wait_ms=3800,
                note="after 3 s: the message, reconsumeTimes 1, RETRY_TOPIC",
            ),
            _back(
                "back_unknown_offset",
                "send",
                1000,
                offset="123456789",
                note="no message there: SYSTEM_ERROR",
            ),
            _back(
                "back_no_group",
                "send",
                1000,
                group="cf_rt_nosuch_%",
                expect=0,
                note="an unknown group whose name is no valid topic name: 4.9.3 checks "
                "neither, auto-creates the group and %RETRY%cf_rt_nosuch_% and stores it",
            ),
        ],
        doc="A consumer's send-back goes to %RETRY%group through the delay level "
        "3 + reconsumeTimes.",
    ),
    Scenario(
        "retry",
        "send-back-to-dlq",
        [
            send_v2("send", T, 1, b"dead", n=1001, expect=0),
            _back(
                "back_max_0",
                "send",
                1001,
                max_times=0,
                wait_ms=SETTLE_MS,
                note="reconsumeTimes 0 >= maxReconsumeTimes 0: %DLQ%",
            ),
            route("dlq_route", f"%DLQ%{G}", wait_ms=300),
            pull(
                "dlq_pull",
                G,
                f"%DLQ%{G}",
                0,
                0,
                wait_ms=SETTLE_MS,
                note="the DLQ topic is write-only",
            ),
            Step("dlq_max", "GET_MAX_OFFSET", {"topic": f"%DLQ%{G}", "queueId": "0"}),
            send_v2("send2", T, 1, b"dead-2", n=1002, expect=0),
            _back(
                "back_negative_level",
                "send2",
                1002,
                delay=-1,
                wait_ms=SETTLE_MS,
                note="delayLevel -1: straight to %DLQ%",
            ),
            Step(
                "dlq_max_2",
                "GET_MAX_OFFSET",
                {"topic": f"%DLQ%{G}", "queueId": "0"},
                wait_ms=SETTLE_MS,
            ),
        ],
        doc="Past maxReconsumeTimes, or with a negative delay level, the message goes to "
        "%DLQ%group (one queue, perm write-only).",
    ),
    Scenario(
        "retry",
        "scheduled-delivery",
        [
            send_v2("send", "cf_sched", 0, b"later", n=1010, extra={"DELAY": "2"}, expect=0),
            Step(
                "max_now",
                "GET_MAX_OFFSET",
                {"topic": "cf_sched", "queueId": "0"},
                wait_ms=SETTLE_MS,
                note="parked in SCHEDULE_TOPIC_XXXX queue 1",
            ),
            Step("sched_max", "GET_MAX_OFFSET", {"topic": "SCHEDULE_TOPIC_XXXX", "queueId": "1"}),
            Step(
                "max_later",
                "GET_MAX_OFFSET",
                {"topic": "cf_sched", "queueId": "0"},
                wait_ms=2800,
                note="delivered after level 2 (2 s)",
            ),
            pull("pull_later", "cf_sched_group", "cf_sched", 0, 0),
        ],
        doc="A message with DELAY=2 waits in SCHEDULE_TOPIC_XXXX, then ScheduleMessageService "
        "puts it back on its topic with REAL_TOPIC/REAL_QID.",
    ),
]
