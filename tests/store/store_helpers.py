"""Helpers for the store tests: a message factory, fake tracer and filters, put_many."""

from __future__ import annotations

from typing import Any

from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import calc_msg_length, message_properties_to_string
from mqlab.store import DefaultMessageStore

STORE_HOST = "127.0.0.1:10911"
BORN_HOST = "127.0.0.1:5555"


class RecordingTracer:
    """A fake tracer: ``enabled`` plus an ``emit`` that keeps every event."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.events: list[dict[str, Any]] = []

    def emit(self, component: str, step: str, kind: str = "step", **fields: Any) -> None:
        self.events.append({"component": component, "step": step, "kind": kind, **fields})

    def of(self, component: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["component"] == component]


class RejectAll:
    """A MessageFilter that matches nothing (by consume queue)."""

    def is_matched_by_consume_queue(self, tags_code, cq_ext_unit=None) -> bool:
        return False

    def is_matched_by_commit_log(self, msg_buffer, properties) -> bool:
        return True


class RejectByCommitLog:
    """A MessageFilter that passes the consume-queue check and rejects the entry."""

    def is_matched_by_consume_queue(self, tags_code, cq_ext_unit=None) -> bool:
        return True

    def is_matched_by_commit_log(self, msg_buffer, properties) -> bool:
        return False


class TagCodeFilter:
    """A MessageFilter matching a set of tag hash codes, like ExpressionMessageFilter."""

    def __init__(self, *codes: int) -> None:
        self.codes = set(codes)

    def is_matched_by_consume_queue(self, tags_code, cq_ext_unit=None) -> bool:
        return tags_code is None or tags_code in self.codes

    def is_matched_by_commit_log(self, msg_buffer, properties) -> bool:
        return True


def make_msg(
    topic: str = "TopicTest",
    queue_id: int = 0,
    body: bytes = b"Hello RocketMQ",
    tags: str | None = "TagA",
    properties: dict[str, str] | None = None,
    sys_flag: int = 0,
) -> MessageExtBrokerInner:
    """A message as the send processor hands it to the store (properties string set)."""
    props: dict[str, str] = {}
    if tags is not None:
        props["TAGS"] = tags
    if properties:
        props.update(properties)
    return MessageExtBrokerInner(
        topic=topic,
        queue_id=queue_id,
        body=body,
        properties=props,
        properties_string=message_properties_to_string(props),
        sys_flag=sys_flag,
        born_timestamp=1,
        born_host=BORN_HOST,
        store_host=STORE_HOST,
    )


def entry_size(msg: MessageExtBrokerInner) -> int:
    """The stored size of ``msg`` (IPv4 hosts)."""
    return calc_msg_length(
        0,
        len(msg.body),
        len(msg.topic.encode()),
        len(msg.properties_string.encode()),
    )


def put_many(
    store: DefaultMessageStore,
    n: int,
    *,
    start_ms: int = 1000,
    step_ms: int = 0,
    body: bytes | None = None,
    **kw: Any,
) -> list[Any]:
    """Put ``n`` messages (bodies ``b"msg-<i>"`` unless given) and dispatch them."""
    results = []
    for i in range(n):
        msg = make_msg(body=body if body is not None else b"msg-%d" % i, **kw)
        results.append(store.put_message(msg, start_ms + i * step_ms))
    store.do_reput()
    return results
