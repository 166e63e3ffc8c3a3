"""What a push consumer's user code sees: listeners, their contexts and their answers.

Mirrors ``MessageListenerConcurrently``, ``MessageListenerOrderly``,
``ConsumeConcurrentlyStatus``, ``ConsumeOrderlyStatus``, ``ConsumeConcurrentlyContext``,
``ConsumeOrderlyContext`` (client/consumer/listener) and ``ConsumeReturnType``
(client/consumer/listener, RocketMQ 4.9.3); mechanisms.md "Consumption" "ConsumeRequest" span 61–99, docs/reference.md §10.15,
§10.16.

What this module owns: the statuses a listener returns, the per-call context it may change
(``ack_index``, ``delay_level_when_next_consume``, ``auto_commit``,
``suspend_current_queue_time_millis``), and the one place where a listener is called, so that
an exception or a ``None`` answer becomes RECONSUME_LATER (concurrently) or
SUSPEND_CURRENT_QUEUE_A_MOMENT (orderly) exactly as the Java consume services do.

A listener is either a plain callable ``listener(msgs, context) -> status`` or an object with
``consume_message(msgs, context)``. mqlab adds one thing Java does not need: how long the call
"takes" in virtual time, ``consume_time_ms`` — an int, or a callable ``(msgs) -> int`` — read
from the listener (or handed in by a scenario). The modelled consume pool keeps a worker busy
for that long before the result is processed.

What it must not know: pools, process queues, offsets or brokers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from mqlab.common.message import MessageExt, MessageQueue

__all__ = [
    "ACK_INDEX_ALL",
    "ConsumeConcurrentlyStatus",
    "ConsumeOrderlyStatus",
    "ConsumeReturnType",
    "ConsumeConcurrentlyContext",
    "ConsumeOrderlyContext",
    "MessageListenerConcurrently",
    "MessageListenerOrderly",
    "ListenerOutcome",
    "call_listener",
    "consume_time_of",
]

#: ``ConsumeConcurrentlyContext.ackIndex`` starts at ``Integer.MAX_VALUE``: "all acked".
ACK_INDEX_ALL = 2**31 - 1


class ConsumeConcurrentlyStatus(Enum):
    """What a concurrent listener answers. Mirrors ``ConsumeConcurrentlyStatus``."""

    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"


class ConsumeOrderlyStatus(Enum):
    """What an orderly listener answers. Mirrors ``ConsumeOrderlyStatus``.

    ``ROLLBACK`` and ``COMMIT`` are deprecated in 4.9.3 (only meaningful with
    ``auto_commit = False``).
    """

    SUCCESS = "SUCCESS"
    ROLLBACK = "ROLLBACK"
    COMMIT = "COMMIT"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"


class ConsumeReturnType(Enum):
    """How a consume call ended, as hooks and traces report it. Mirrors ``ConsumeReturnType``."""

    SUCCESS = "SUCCESS"
    TIME_OUT = "TIME_OUT"
    EXCEPTION = "EXCEPTION"
    RETURNNULL = "RETURNNULL"
    FAILED = "FAILED"


@dataclass(slots=True)
class ConsumeConcurrentlyContext:
    """Per-call context of a concurrent listener. Mirrors ``ConsumeConcurrentlyContext``.

    Attributes:
        message_queue: the queue the batch came from.
        delay_level_when_next_consume: 0 lets the broker choose (3 + reconsumeTimes);
            > 0 a fixed delay level; < 0 straight to the DLQ (docs/reference.md §10.7).
        ack_index: on CONSUME_SUCCESS, messages ``0..ack_index`` are acked and the rest
            are sent back; defaults to "all".
    """

    message_queue: MessageQueue
    delay_level_when_next_consume: int = 0
    ack_index: int = ACK_INDEX_ALL


@dataclass(slots=True)
class ConsumeOrderlyContext:
    """Per-call context of an orderly listener. Mirrors ``ConsumeOrderlyContext``.

    Attributes:
        message_queue: the queue the batch came from.
        auto_commit: commit the offset after SUCCESS (default True).
        suspend_current_queue_time_millis: −1 uses the consumer's
            ``suspend_current_queue_time_millis`` (1000 ms).
    """

    message_queue: MessageQueue
    auto_commit: bool = True
    suspend_current_queue_time_millis: int = -1


@runtime_checkable
class MessageListenerConcurrently(Protocol):
    """An object listener for concurrent consumption. Mirrors ``MessageListenerConcurrently``."""

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus: ...


@runtime_checkable
class MessageListenerOrderly(Protocol):
    """An object listener for orderly consumption. Mirrors ``MessageListenerOrderly``."""

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeOrderlyContext
    ) -> ConsumeOrderlyStatus: ...


@dataclass(frozen=True, slots=True)
class ListenerOutcome:
    """The result of one listener call, after Java's null/exception rules.

    Attributes:
        status: the status the consume service acts on.
        return_type: ``ConsumeReturnType`` name (EXCEPTION, RETURNNULL, FAILED, SUCCESS).
        error: ``repr`` of the exception the listener raised, if any.
    """

    status: Any
    return_type: ConsumeReturnType
    error: str | None = None


def _consume_fn(listener: Any) -> Callable[..., Any]:
    fn = getattr(listener, "consume_message", None)
    if fn is not None and callable(fn):
        return fn
    if callable(listener):
        return listener
    raise TypeError(
        f"listener must be callable or have consume_message(msgs, context), got {listener!r}"
    )


def call_listener(
    listener: Any, msgs: Sequence[MessageExt], context: Any, *, orderly: bool
) -> ListenerOutcome:
    """Call the user's listener the way the consume services do.

    Mirrors the try/catch around ``listener.consumeMessage`` in
    ``ConsumeMessageConcurrentlyService.ConsumeRequest#run`` and
    ``ConsumeMessageOrderlyService.ConsumeRequest#run`` (client/impl/consumer, RocketMQ 4.9.3);
    mechanisms.md "Consumption" "ConsumeRequest" span 61–99. The listener gets an unmodifiable view: a tuple
    turned into a fresh list, so removing from it cannot touch the consume request.

    Args:
        listener: a callable or an object with ``consume_message``.
        msgs: the batch.
        context: a ``ConsumeConcurrentlyContext`` or ``ConsumeOrderlyContext``.
        orderly: which status enum applies.

    Returns:
        The outcome: an exception or ``None`` becomes RECONSUME_LATER (concurrently) or
        SUSPEND_CURRENT_QUEUE_A_MOMENT (orderly), with return type EXCEPTION / RETURNNULL.
    """
    later = (
        ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
        if orderly
        else ConsumeConcurrentlyStatus.RECONSUME_LATER
    )
    expected = ConsumeOrderlyStatus if orderly else ConsumeConcurrentlyStatus
    try:
        status = _consume_fn(listener)(list(msgs), context)
    except Exception as e:  # noqa: BLE001 — Java catches Throwable here
        return ListenerOutcome(later, ConsumeReturnType.EXCEPTION, repr(e))
    if status is None:
        return ListenerOutcome(later, ConsumeReturnType.RETURNNULL)
    if not isinstance(status, expected):
        # A wrong type is a programming error; Java would not compile it. Say so loudly.
        raise TypeError(f"listener returned {status!r}; expected a {expected.__name__} member")
    # NOTE: performance — one shared (frozen) outcome per status: building one per call
    # was ~0.6 µs per consumed message. The common answer is found by identity (an enum
    # member hashes in Python).
    if status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS:
        return _CONSUME_SUCCESS_OUTCOME
    return _STATUS_OUTCOMES[status]


def _outcome_of(status: Any) -> ListenerOutcome:
    """RECONSUME_LATER / SUSPEND_CURRENT_QUEUE_A_MOMENT are FAILED, the rest SUCCESS."""
    if status in (ConsumeConcurrentlyStatus.RECONSUME_LATER,
                  ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT):  # fmt: skip
        return ListenerOutcome(status, ConsumeReturnType.FAILED)
    return ListenerOutcome(status, ConsumeReturnType.SUCCESS)


#: The outcome of each status a listener may return (see ``call_listener``).
_STATUS_OUTCOMES: dict[Any, ListenerOutcome] = {
    status: _outcome_of(status)
    for statuses in (ConsumeConcurrentlyStatus, ConsumeOrderlyStatus)
    for status in statuses
}
_CONSUME_SUCCESS_OUTCOME = _STATUS_OUTCOMES[ConsumeConcurrentlyStatus.CONSUME_SUCCESS]


def consume_time_of(listener: Any, msgs: Sequence[MessageExt], default: Any = 0) -> int:
    """How many virtual ms a listener call takes (mqlab's model of consumption time).

    The listener's ``consume_time_ms`` attribute wins; otherwise ``default`` (a scenario's
    setting on the consumer). Either may be an int or a callable ``(msgs) -> int``.

    Raises:
        ValueError: the time is negative.
    """
    spec = getattr(listener, "consume_time_ms", None)
    if spec is None:
        spec = default
    value = spec(list(msgs)) if callable(spec) else spec
    value = int(value or 0)
    if value < 0:
        raise ValueError(f"consume_time_ms must be >= 0, got {value}")
    return value
