"""The scenario listener: a ``MessageListenerConcurrently`` that fails on purpose, reproducibly.

Mirrors ``MessageListenerConcurrently#consumeMessage`` (client/consumer/listener, RocketMQ
4.9.3): it answers CONSUME_SUCCESS, or RECONSUME_LATER for a batch holding a message it
decides to fail (mechanisms.md "Consumption" "ConsumeMessageConcurrentlyService": the batch goes back through
``sendMessageBack`` and returns from ``%RETRY%<group>`` after delay level 3 + reconsumeTimes).

The decision is a hash of (run seed, group, message id, reconsume times) compared with
``failure_rate``: the same seed fails the same deliveries in every process and runner, and
a retry is an independent draw. How long a call takes is the consumer's
``consume_time_ms`` setting, not this object's business.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

__all__ = ["ScenarioListener", "fails"]


def fails(seed: int, group: str, msg_id: str, reconsume_times: int, failure_rate: float) -> bool:
    """Whether this delivery fails: sha256 of the identifiers, as a fraction, < rate."""
    if failure_rate <= 0.0:
        return False
    digest = hashlib.sha256(f"{seed}|{group}|{msg_id}|{reconsume_times}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < failure_rate


@dataclass(frozen=True, slots=True)
class ScenarioListener:
    """``listener(msgs, context) -> ConsumeConcurrentlyStatus`` with seeded failures."""

    seed: int
    group: str
    failure_rate: float = 0.0

    def __call__(self, msgs: list[Any], context: Any) -> Any:
        from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus

        for m in msgs:
            if fails(
                self.seed, self.group, m.client_msg_id(), m.reconsume_times, self.failure_rate
            ):
                return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS
