"""Stored bytes: the same send sequence, then both commit logs and consume queues read
from disk and compared entry by entry (every field of the 4.9.3 layout)."""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, StoredCheck, batch
from mqlab.conformance.scenarios.common import send_batch, send_v1, send_v2, uniq

__all__ = ["SCENARIOS"]

T = "cf_stored"

SCENARIOS = [
    Scenario(
        "stored-bytes",
        "commit-log-and-consume-queue",
        [
            send_v1("v1", T, 0, b"stored-1", n=600, expect=0, keys="key-1"),
            send_v2("v2_tags_keys", T, 1, b"stored-2", n=601, expect=0, tags="TagX", keys="k1 k2"),
            send_v2(
                "v2_no_tags", T, 2, "stored-3 \u00e9\u6f22".encode(), n=602, expect=0, tags=None
            ),
            send_v2(
                "v2_user_props",
                T,
                3,
                b"stored-4",
                n=603,
                extra={"color": "red", "a": "1", "zeta": "\u00fc"},
            ),
            send_v2("v2_flag_reconsume", T, 0, b"stored-5", n=604, expect=0, h="7", j="2"),
            send_v2("v2_wait_false", T, 1, b"stored-6", n=605, expect=0, extra={"WAIT": "false"}),
            send_batch(
                "batch",
                T,
                2,
                batch(
                    (T, b"batch-1", {"UNIQ_KEY": uniq(610), "TAGS": "TagB"}),
                    (T, b"batch-2", {"UNIQ_KEY": uniq(611), "KEYS": "bk"}),
                ),
            ),
            send_v2(
                "v2_delay_1",
                T,
                3,
                b"stored-delayed",
                n=606,
                extra={"DELAY": "1"},
                note="delay level 1: SCHEDULE_TOPIC_XXXX, then re-put to the topic after 1 s",
            ),
            send_v2("v2_empty_body", T, 0, b"", n=607, expect=0),
            send_v2("v2_big_body", T, 1, bytes(range(256)) * 40, n=608, expect=0),
            send_v2("v2_retry_topic", "%RETRY%cf_stored_g", 0, b"retry", n=609, expect=0, j="1"),
            StoredCheck(
                "store",
                (T, "SCHEDULE_TOPIC_XXXX", "%RETRY%cf_stored_g"),
                wait_ms=2500,
                note="after the delayed message came back",
            ),
        ],
        doc="Commit-log entries (all fields) and consume-queue units after the same sends.",
    ),
]
