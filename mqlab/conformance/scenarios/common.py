"""Builders for the requests scenarios use, with the Java client's header names and defaults.

They only fill in ``Step`` fields; a scenario stays a readable list of requests.
"""

from __future__ import annotations

import json

from mqlab.conformance.scenario import Step, props

__all__ = [
    "BORN", "SETTLE_MS", "delivered_after", "send_v1", "send_v2", "send_batch", "pull", "route", "broker_config",
    "heartbeat", "query_offset", "update_offset", "uniq",
]  # fmt: skip

#: Before the first read after sends: both brokers dispatch to the consume queue a moment
#: after answering the send (ReputMessageService), so a read right away may race it.
SETTLE_MS = 200


def delivered_after(level: int) -> int:
    """How long to wait after a send with delay ``level`` (level n = n s, see
    ``sides.DELAY_LEVELS``) until both brokers have put it back into its topic: the
    schedule service polls each level every 100 ms. A scenario that causes a delayed
    write must wait for it before it ends; else the re-put lands among a later
    scenario's writes at a moment that differs by side, and every later commit-log
    offset differs."""
    return level * 1000 + 1000


#: A fixed born timestamp, so BORNTIMESTAMP compares exactly.
BORN = "1764150000000"

#: PullSysFlag bits (common/sysflag/PullSysFlag, 4.9.3).
FLAG_COMMIT_OFFSET, FLAG_SUSPEND, FLAG_SUBSCRIPTION = 0x1, 0x2, 0x4


def uniq(n: int) -> str:
    """A fixed UNIQ_KEY (32 hex digits, the shape ``MessageClientIDSetter`` makes)."""
    return f"7F00000100002A9F0000000000{n:06X}"


def _props(tags: str | None, keys: str | None, extra: dict[str, str] | None, n: int) -> str:
    kv: dict[str, str] = {}
    if keys is not None:
        kv["KEYS"] = keys
    kv["UNIQ_KEY"] = uniq(n)
    kv["WAIT"] = "true"
    if tags is not None:
        kv["TAGS"] = tags
    kv.update(extra or {})
    return props(**kv)


def send_v1(name: str, topic: str, queue_id: int = 0, body: bytes = b"hello", *, n: int = 0,
            tags: str | None = "TagA", keys: str | None = None,
            extra: dict[str, str] | None = None, group: str = "cf_producer",
            queue_nums: int = 4, default_topic: str = "TBW102", note: str = "",
            expect: int | None = None, wait_ms: int = 0, **header: str) -> Step:  # fmt: skip
    """SEND_MESSAGE (10): ``SendMessageRequestHeader`` with its long field names."""
    h = {
        "producerGroup": group, "topic": topic, "defaultTopic": default_topic,
        "defaultTopicQueueNums": str(queue_nums), "queueId": str(queue_id), "sysFlag": "0",
        "bornTimestamp": BORN, "flag": "0", "properties": _props(tags, keys, extra, n),
        "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
    }  # fmt: skip
    h.update(header)
    return Step(name, "SEND_MESSAGE", h, body, note=note, expect=expect, wait_ms=wait_ms)


def send_v2(name: str, topic: str, queue_id: int = 0, body: bytes = b"hello", *, n: int = 0,
            tags: str | None = "TagA", keys: str | None = None,
            extra: dict[str, str] | None = None, group: str = "cf_producer",
            queue_nums: int = 4, default_topic: str = "TBW102", note: str = "",
            raw_props: str | None = None, expect: int | None = None, wait_ms: int = 0,
            **header: str) -> Step:  # fmt: skip
    """SEND_MESSAGE_V2 (310): ``SendMessageRequestHeaderV2``, one-letter names a..m."""
    h = {
        "a": group, "b": topic, "c": default_topic, "d": str(queue_nums), "e": str(queue_id),
        "f": "0", "g": BORN, "h": "0",
        "i": raw_props if raw_props is not None else _props(tags, keys, extra, n),
        "j": "0", "k": "false", "m": "false",
    }  # fmt: skip
    h.update(header)
    return Step(name, "SEND_MESSAGE_V2", h, body, note=note, expect=expect, wait_ms=wait_ms)


def send_batch(name: str, topic: str, queue_id: int, body: bytes, *, note: str = "",
               group: str = "cf_producer", expect: int | None = None,
               **header: str) -> Step:  # fmt: skip
    """SEND_BATCH_MESSAGE (320): a V2 header with ``m`` (batch) true, the batch body."""
    h = {
        "a": group, "b": topic, "c": "TBW102", "d": "4", "e": str(queue_id), "f": "0",
        "g": BORN, "h": "0", "i": props(WAIT="true"), "j": "0", "k": "false", "m": "true",
    }  # fmt: skip
    h.update(header)
    return Step(name, "SEND_BATCH_MESSAGE", h, body, note=note, expect=expect)


def pull(name: str, group: str, topic: str, queue_id: int, offset: int | str, *,
         sub: str | None = "*", expression_type: str | None = "TAG",
         sys_flag: int | None = None,
         max_nums: int = 32, commit_offset: int = 0, suspend_ms: int = 0,
         sub_version: int | str = 0, note: str = "", **kw) -> Step:  # fmt: skip
    """PULL_MESSAGE (11) as ``PullAPIWrapper#pullKernelImpl`` builds it; ``sub`` None =
    no FLAG_SUBSCRIPTION (the broker then looks the subscription up from heartbeats)."""
    if sys_flag is None:
        sys_flag = FLAG_SUBSCRIPTION if sub is not None else 0
        if commit_offset:
            sys_flag |= FLAG_COMMIT_OFFSET
        if suspend_ms:
            sys_flag |= FLAG_SUSPEND
    h = {
        "consumerGroup": group, "topic": topic, "queueId": str(queue_id),
        "queueOffset": str(offset), "maxMsgNums": str(max_nums), "sysFlag": str(sys_flag),
        "commitOffset": str(commit_offset), "suspendTimeoutMillis": str(suspend_ms),
        "subVersion": str(sub_version),
    }  # fmt: skip
    if expression_type is not None:
        h["expressionType"] = expression_type
    if sub is not None:
        h["subscription"] = sub
    return Step(name, "PULL_MESSAGE", h, note=note, **kw)


def route(name: str, topic: str, *, wait_ms: int = 0, note: str = "") -> Step:
    """GET_ROUTEINFO_BY_TOPIC (105) to the name server."""
    return Step(name, "GET_ROUTEINFO_BY_TOPIC", {"topic": topic}, to="namesrv",
                wait_ms=wait_ms, note=note)  # fmt: skip


def broker_config(name: str, note: str = "", **kv: str) -> Step:
    """UPDATE_BROKER_CONFIG (25): a ``java.util.Properties`` text body."""
    body = "".join(f"{k}={v}\n" for k, v in kv.items())
    return Step(name, "UPDATE_BROKER_CONFIG", {}, body, note=note)


def heartbeat(name: str, client_id: str, group: str, topic: str, sub: str = "*", *,
              sub_version: int = 100, expression_type: str = "TAG",
              tags: list[str] | None = None, codes: list[int] | None = None,
              message_model: str = "CLUSTERING") -> Step:  # fmt: skip
    """HEART_BEAT (34) with one push consumer subscribed to ``topic``."""
    if tags is None:
        tags = [] if sub == "*" else [t.strip() for t in sub.split("||")]
    if codes is None:
        from mqlab.common.filter_api import java_string_hash

        codes = [java_string_hash(t) for t in tags]
    body = {
        "clientID": client_id,
        "consumerDataSet": [{
            "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "consumeType": "CONSUME_PASSIVELY",
            "groupName": group, "messageModel": message_model,
            "subscriptionDataSet": [{
                "classFilterMode": False, "codeSet": codes, "expressionType": expression_type,
                "subString": sub, "subVersion": sub_version, "tagsSet": tags, "topic": topic,
            }],
            "unitMode": False,
        }],
        "producerDataSet": [],
    }  # fmt: skip
    return Step(name, "HEART_BEAT", {}, json.dumps(body, separators=(",", ":")))


def query_offset(name: str, group: str, topic: str, queue_id: int, note: str = "",
                 wait_ms: int = 0) -> Step:  # fmt: skip
    """QUERY_CONSUMER_OFFSET (14)."""
    return Step(name, "QUERY_CONSUMER_OFFSET",
                {"consumerGroup": group, "topic": topic, "queueId": str(queue_id)},
                note=note, wait_ms=wait_ms)  # fmt: skip


def update_offset(name: str, group: str, topic: str, queue_id: int, offset: int,
                  note: str = "") -> Step:  # fmt: skip
    """UPDATE_CONSUMER_OFFSET (15)."""
    return Step(name, "UPDATE_CONSUMER_OFFSET",
                {"consumerGroup": group, "topic": topic, "queueId": str(queue_id),
                 "commitOffset": str(offset)}, note=note)  # fmt: skip
