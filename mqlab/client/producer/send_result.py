"""What a send returns: the status the broker answered and where the message went.

Mirrors ``SendStatus`` and ``SendResult`` (client/producer, RocketMQ 4.9.3); docs/reference.md §3
("client mapping of send results": 0 → SEND_OK, 10 → FLUSH_DISK_TIMEOUT,
11 → SLAVE_NOT_AVAILABLE, 12 → FLUSH_SLAVE_TIMEOUT) and §4.5 (``msg_id`` is the client's
``UNIQ_KEY``, ``offset_msg_id`` the broker's store-host + commit-log-offset id).

Plain data: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from mqlab.common.message import MessageQueue

__all__ = ["SendStatus", "SendResult"]


class SendStatus(Enum):
    """Mirrors ``SendStatus``: every value means "the broker stored it" (maybe not durably)."""

    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"


@dataclass(frozen=True, slots=True, kw_only=True)
class SendResult:
    """One successful send. Mirrors ``SendResult`` (client/producer, RocketMQ 4.9.3).

    ``msg_id`` is the ``UNIQ_KEY`` (batches: comma-joined), ``offset_msg_id`` the broker's
    ``msgId`` response field, ``queue_offset`` the consume-queue offset of the (first)
    message, ``region_id`` / ``trace_on`` the broker's ``MSG_REGION`` / ``TRACE_ON``.
    """

    send_status: SendStatus
    msg_id: str | None
    message_queue: MessageQueue
    queue_offset: int
    offset_msg_id: str | None = None
    transaction_id: str | None = None
    region_id: str = "DefaultRegion"
    trace_on: bool = True

    def __str__(self) -> str:
        """Java's ``SendResult#toString``."""
        return (
            f"SendResult [sendStatus={self.send_status.name}, msgId={self.msg_id}, "
            f"offsetMsgId={self.offset_msg_id}, messageQueue={self.message_queue}, "
            f"queueOffset={self.queue_offset}]"
        )
