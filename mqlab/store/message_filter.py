"""The filter ``getMessage`` asks before returning a message.

Mirrors the ``MessageFilter`` interface (store, RocketMQ 4.9.3); docs/reference.md §10.1 steps 4e
and 4g. The store calls ``is_matched_by_consume_queue`` with the 20-byte unit's tags
code before reading the commit log, and ``is_matched_by_commit_log`` with the raw
stored entry afterwards (only SQL92 filters look at it).

What this module owns: the two method signatures. What it must not know: subscriptions.
The broker's ``ExpressionMessageFilter`` (tag codes, SQL92) implements the protocol;
tests use small fakes.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["MessageFilter"]


@runtime_checkable
class MessageFilter(Protocol):
    """Mirrors ``org.apache.rocketmq.store.MessageFilter``."""

    def is_matched_by_consume_queue(self, tags_code: int | None, cq_ext_unit: Any = None) -> bool:
        """Match by the consume-queue unit: ``tags_code`` is the unit's tags code
        (``None`` when unknown, which matches); ``cq_ext_unit`` is always ``None`` in
        mqlab (no consume-queue extension files)."""
        ...

    def is_matched_by_commit_log(
        self, msg_buffer: bytes | memoryview | None, properties: dict[str, str] | None
    ) -> bool:
        """Match by the stored entry (``getMessage`` passes the raw entry and ``None``)
        or by a properties map (long polling passes ``None`` and the properties)."""
        ...
