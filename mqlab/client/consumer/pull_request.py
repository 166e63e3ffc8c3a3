"""The push consumer's pull request: one per allocated queue, travelling round the pull loop.

Mirrors ``PullRequest`` (client/impl/consumer/PullRequest.java, RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop"
"消息拉取流程" steps 1–2 (rebalance builds a PullRequest around a ProcessQueue and puts it on
``pullRequestQueue``), docs/reference.md §10.11, §10.14.

A pull request is the token that keeps a queue's pull loop alive: PullMessageService takes it,
``DefaultMQPushConsumerImpl#pullMessage`` sends one PULL_MESSAGE for it, and the pull callback
puts it back (at once, or later). ``next_offset`` is the queue offset of the next pull.
``previously_locked`` is the orderly consumer's "first pull after the broker lock" flag (the
offset is then re-read from the offset store).

Equality and hashing are Java's: by consumer group and message queue only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mqlab.client.process_queue import ProcessQueue
from mqlab.common.message import MessageQueue

__all__ = ["PullRequest"]


@dataclass(slots=True, eq=False)
class PullRequest:
    """Mirrors ``PullRequest`` (client/impl/consumer, RocketMQ 4.9.3).

    Attributes:
        consumer_group: the group the request belongs to (selects the consumer).
        message_queue: the queue to pull.
        process_queue: the queue's buffer on this consumer.
        next_offset: the queue offset the next pull starts at.
        previously_locked: orderly only; set after the first pull under the broker lock.
    """

    consumer_group: str
    message_queue: MessageQueue
    process_queue: ProcessQueue = field(repr=False)
    next_offset: int
    previously_locked: bool = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PullRequest):
            return NotImplemented
        return (
            self.consumer_group == other.consumer_group
            and self.message_queue == other.message_queue
        )

    def __hash__(self) -> int:
        return hash((self.consumer_group, self.message_queue))

    def __str__(self) -> str:
        """Java's ``toString``."""
        return (
            f"PullRequest [consumerGroup={self.consumer_group}, messageQueue={self.message_queue}, "
            f"nextOffset={self.next_offset}]"
        )
