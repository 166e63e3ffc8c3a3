"""Topic name rules and the built-in system topics.

Mirrors ``org.apache.rocketmq.common.topic.TopicValidator`` (common/topic, RocketMQ
4.9.3); docs/reference.md §7.1 and §7.3, mechanisms.md "msgCheck" (``msgCheck``: topic name rules, not-allowed
system topics).

What this module owns: the legal-character table, the 127-char limit, the system-topic
and not-allowed-send sets, and the exact remarks. What it must not know: responses.
Java writes the code and remark into a ``RemotingCommand``; here the checks *return*
``(ok, code, remark)`` and the processor copies them into its response.

Java adds the broker's cluster name, broker name and ``<cluster>_REPLY_TOPIC`` to a
static system-topic set at start-up. mqlab has no module-level mutable state, so those
names travel as the ``extra`` argument of :func:`is_system_topic` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mqlab.common.util_all import is_blank

__all__ = [
    "TopicValidator",
    "AUTO_CREATE_TOPIC_KEY_TOPIC",
    "RMQ_SYS_SCHEDULE_TOPIC",
    "RMQ_SYS_BENCHMARK_TOPIC",
    "RMQ_SYS_TRANS_HALF_TOPIC",
    "RMQ_SYS_TRACE_TOPIC",
    "RMQ_SYS_TRANS_OP_HALF_TOPIC",
    "RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC",
    "RMQ_SYS_SELF_TEST_TOPIC",
    "RMQ_SYS_OFFSET_MOVED_EVENT",
    "SYSTEM_TOPIC_PREFIX",
    "TOPIC_MAX_LENGTH",
    "SYSTEM_TOPIC_SET",
    "NOT_ALLOWED_SEND_TOPIC_SET",
    "REMARK_TOPIC_BLANK",
    "REMARK_TOPIC_ILLEGAL_CHARACTERS",
    "REMARK_TOPIC_TOO_LONG",
    "is_topic_or_group_illegal",
    "validate_topic",
    "is_system_topic",
    "system_topic_conflict_remark",
    "is_not_allowed_send_topic",
    "not_allowed_send_remark",
]

# ResponseCode numbers (remoting/protocol): written as ints so this module does not
# depend on mqlab.remoting (docs/reference.md §3: SUCCESS 0, SYSTEM_ERROR 1, NO_PERMISSION 16).
_SUCCESS = 0
_SYSTEM_ERROR = 1
_NO_PERMISSION = 16

#: Created at the broker when ``autoCreateTopicEnable``; the template for auto-created topics.
AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
RMQ_SYS_SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
RMQ_SYS_BENCHMARK_TOPIC = "BenchmarkTest"
RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
RMQ_SYS_TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RMQ_SYS_SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
RMQ_SYS_OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"

SYSTEM_TOPIC_PREFIX = "rmq_sys_"
TOPIC_MAX_LENGTH = 127

#: ``TopicValidator.SYSTEM_TOPIC_SET`` as filled by its static initialiser.
SYSTEM_TOPIC_SET: frozenset[str] = frozenset(
    {
        AUTO_CREATE_TOPIC_KEY_TOPIC,
        RMQ_SYS_SCHEDULE_TOPIC,
        RMQ_SYS_BENCHMARK_TOPIC,
        RMQ_SYS_TRANS_HALF_TOPIC,
        RMQ_SYS_TRACE_TOPIC,
        RMQ_SYS_TRANS_OP_HALF_TOPIC,
        RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
        RMQ_SYS_SELF_TEST_TOPIC,
        RMQ_SYS_OFFSET_MOVED_EVENT,
    }
)
#: Topics a client may not send to (docs/reference.md §7.1).
NOT_ALLOWED_SEND_TOPIC_SET: frozenset[str] = frozenset({RMQ_SYS_SCHEDULE_TOPIC})

REMARK_TOPIC_BLANK = "The specified topic is blank."
REMARK_TOPIC_ILLEGAL_CHARACTERS = (
    "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
)
REMARK_TOPIC_TOO_LONG = "The specified topic is longer than topic max length."

# Java checks each char against a 128-entry bitmap (VALID_CHAR_BIT_MAP); any char
# >= 128 is illegal. The explicit ASCII ranges below accept exactly the same chars.
_LEGAL = re.compile(r"[%|a-zA-Z0-9_-]*")


def is_topic_or_group_illegal(s: str) -> bool:
    """True if ``s`` has a char outside ``%``, ``|``, ``-``, ``_``, ``0-9``, ``A-Z``, ``a-z``.

    Mirrors ``TopicValidator#isTopicOrGroupIllegal`` (common/topic, RocketMQ 4.9.3);
    docs/reference.md §7.1. The empty string is *not* illegal (blankness is checked separately).
    """
    return _LEGAL.fullmatch(s) is None


def validate_topic(topic: str | None) -> tuple[bool, int, str | None]:
    """Check a topic name the way the broker does before sending or creating.

    Mirrors ``TopicValidator#validateTopic`` (common/topic, RocketMQ 4.9.3); docs/reference.md §7.1,
    mechanisms.md "msgCheck" (``msgCheck``). Order: blank, illegal characters, longer than 127.

    Returns:
        ``(True, 0, None)`` if the topic is valid, else ``(False, 1, remark)`` with
        SYSTEM_ERROR (1) and RocketMQ's remark (Java leaves the response untouched on
        success; 0 is SUCCESS).
    """
    if is_blank(topic):
        return False, _SYSTEM_ERROR, REMARK_TOPIC_BLANK
    assert topic is not None, "is_blank covers None"
    if is_topic_or_group_illegal(topic):
        return False, _SYSTEM_ERROR, REMARK_TOPIC_ILLEGAL_CHARACTERS
    if len(topic) > TOPIC_MAX_LENGTH:
        return False, _SYSTEM_ERROR, REMARK_TOPIC_TOO_LONG
    return True, _SUCCESS, None


def is_system_topic(topic: str, extra: Iterable[str] = ()) -> bool:
    """True for a built-in system topic, a ``rmq_sys_`` topic, or one of ``extra``.

    Mirrors ``TopicValidator#isSystemTopic(String)``; docs/reference.md §7.1. Pass the broker's
    cluster name, broker name and ``<cluster>_REPLY_TOPIC`` as ``extra`` (what Java's
    ``addSystemTopic`` adds at runtime).
    """
    if topic in SYSTEM_TOPIC_SET or topic.startswith(SYSTEM_TOPIC_PREFIX):
        return True
    return topic in extra


def system_topic_conflict_remark(topic: str) -> str:
    """SYSTEM_ERROR remark for creating/deleting a system topic (``isSystemTopic(t, resp)``)."""
    return f"The topic[{topic}] is conflict with system topic."


def is_not_allowed_send_topic(topic: str) -> bool:
    """True for ``SCHEDULE_TOPIC_XXXX``. Mirrors ``TopicValidator#isNotAllowedSendTopic``."""
    return topic in NOT_ALLOWED_SEND_TOPIC_SET


def not_allowed_send_remark(topic: str) -> str:
    """NO_PERMISSION (16) remark: ``Sending message to topic[<t>] is forbidden.``; docs/reference.md §7.1."""
    return f"Sending message to topic[{topic}] is forbidden."


class TopicValidator:
    """The module's names gathered under Java's class name, for ``TopicValidator.x`` call sites.

    Mirrors ``TopicValidator`` (common/topic, RocketMQ 4.9.3): same constants, same checks.
    """

    AUTO_CREATE_TOPIC_KEY_TOPIC = AUTO_CREATE_TOPIC_KEY_TOPIC
    RMQ_SYS_SCHEDULE_TOPIC = RMQ_SYS_SCHEDULE_TOPIC
    RMQ_SYS_BENCHMARK_TOPIC = RMQ_SYS_BENCHMARK_TOPIC
    RMQ_SYS_TRANS_HALF_TOPIC = RMQ_SYS_TRANS_HALF_TOPIC
    RMQ_SYS_TRACE_TOPIC = RMQ_SYS_TRACE_TOPIC
    RMQ_SYS_TRANS_OP_HALF_TOPIC = RMQ_SYS_TRANS_OP_HALF_TOPIC
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC
    RMQ_SYS_SELF_TEST_TOPIC = RMQ_SYS_SELF_TEST_TOPIC
    RMQ_SYS_OFFSET_MOVED_EVENT = RMQ_SYS_OFFSET_MOVED_EVENT
    SYSTEM_TOPIC_PREFIX = SYSTEM_TOPIC_PREFIX
    TOPIC_MAX_LENGTH = TOPIC_MAX_LENGTH
    SYSTEM_TOPIC_SET = SYSTEM_TOPIC_SET
    NOT_ALLOWED_SEND_TOPIC_SET = NOT_ALLOWED_SEND_TOPIC_SET

    is_topic_or_group_illegal = staticmethod(is_topic_or_group_illegal)
    validate_topic = staticmethod(validate_topic)
    is_system_topic = staticmethod(is_system_topic)
    system_topic_conflict_remark = staticmethod(system_topic_conflict_remark)
    is_not_allowed_send_topic = staticmethod(is_not_allowed_send_topic)
    not_allowed_send_remark = staticmethod(not_allowed_send_remark)
