"""Well-known names and tiny helpers RocketMQ keeps in ``MixAll``.

Mirrors ``org.apache.rocketmq.common.MixAll`` (common, RocketMQ 4.9.3); docs/reference.md §1 (VIP
channel), §7.3 (prefixes, reserved groups, MASTER_ID) and §11 (``MixAllTest``).

What this module owns: group and topic-prefix constants, retry/DLQ/reply topic names and
``compareAndIncreaseOnly``. What it must not know: files, environment variables, the
local host or the JVM pid; ``MixAll``'s file helpers (``string2File``, ``file2String``) live
in ``mix_all_files``, and ``getLocalInetAddress`` belongs to the drivers.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TypeVar

__all__ = [
    "DEFAULT_TOPIC",
    "DEFAULT_PRODUCER_GROUP",
    "DEFAULT_CONSUMER_GROUP",
    "TOOLS_CONSUMER_GROUP",
    "SCHEDULE_CONSUMER_GROUP",
    "FILTERSRV_CONSUMER_GROUP",
    "MONITOR_CONSUMER_GROUP",
    "CLIENT_INNER_PRODUCER_GROUP",
    "SELF_TEST_PRODUCER_GROUP",
    "SELF_TEST_CONSUMER_GROUP",
    "ONS_HTTP_PROXY_GROUP",
    "CID_ONSAPI_PERMISSION_GROUP",
    "CID_ONSAPI_OWNER_GROUP",
    "CID_ONSAPI_PULL_GROUP",
    "CID_RMQ_SYS_PREFIX",
    "CID_SYS_RMQ_TRANS",
    "RESERVED_GROUPS",
    "MASTER_ID",
    "RETRY_GROUP_TOPIC_PREFIX",
    "DLQ_GROUP_TOPIC_PREFIX",
    "REPLY_TOPIC_POSTFIX",
    "LMQ_PREFIX",
    "MULTI_DISPATCH_QUEUE_SPLITTER",
    "DEFAULT_TRACE_REGION_ID",
    "UNIQUE_MSG_QUERY_FLAG",
    "REPLY_MESSAGE_FLAG",
    "MESSAGE_COMPRESS_LEVEL",
    "get_retry_topic",
    "get_dlq_topic",
    "get_reply_topic",
    "is_retry_topic",
    "is_dlq_topic",
    "is_sys_consumer_group",
    "is_lmq",
    "broker_vip_channel",
    "compare_and_increase_only",
]

#: The auto-create template topic. 4.9.3 spells it ``TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC``
#: (``MixAll.DEFAULT_TOPIC`` in older releases); same value, kept here for old call sites.
DEFAULT_TOPIC = "TBW102"

DEFAULT_PRODUCER_GROUP = "DEFAULT_PRODUCER"
#: A push consumer refuses to start with this group (docs/reference.md §7.3).
DEFAULT_CONSUMER_GROUP = "DEFAULT_CONSUMER"
TOOLS_CONSUMER_GROUP = "TOOLS_CONSUMER"
SCHEDULE_CONSUMER_GROUP = "SCHEDULE_CONSUMER"
FILTERSRV_CONSUMER_GROUP = "FILTERSRV_CONSUMER"
MONITOR_CONSUMER_GROUP = "__MONITOR_CONSUMER"
#: The producer group every MQClientInstance owns (listed in heartbeats, docs/reference.md §2.3).
CLIENT_INNER_PRODUCER_GROUP = "CLIENT_INNER_PRODUCER"
SELF_TEST_PRODUCER_GROUP = "SELF_TEST_P_GROUP"
SELF_TEST_CONSUMER_GROUP = "SELF_TEST_C_GROUP"
ONS_HTTP_PROXY_GROUP = "CID_ONS-HTTP-PROXY"
CID_ONSAPI_PERMISSION_GROUP = "CID_ONSAPI_PERMISSION"
CID_ONSAPI_OWNER_GROUP = "CID_ONSAPI_OWNER"
CID_ONSAPI_PULL_GROUP = "CID_ONSAPI_PULL"
#: The transaction check service's group (``MixAll.CID_SYS_RMQ_TRANS``).
CID_SYS_RMQ_TRANS = "CID_RMQ_SYS_TRANS"
CID_RMQ_SYS_PREFIX = "CID_RMQ_SYS_"

#: The group names docs/reference.md §7.3 lists as reserved, in ``MixAll``'s declaration order
#: (``DefaultMQAdminExtImpl.SYSTEM_GROUP_SET``).
RESERVED_GROUPS: tuple[str, ...] = (
    DEFAULT_PRODUCER_GROUP,
    DEFAULT_CONSUMER_GROUP,
    TOOLS_CONSUMER_GROUP,
    FILTERSRV_CONSUMER_GROUP,
    MONITOR_CONSUMER_GROUP,
    CLIENT_INNER_PRODUCER_GROUP,
    SELF_TEST_PRODUCER_GROUP,
    SELF_TEST_CONSUMER_GROUP,
    ONS_HTTP_PROXY_GROUP,
    CID_ONSAPI_PERMISSION_GROUP,
    CID_ONSAPI_OWNER_GROUP,
    CID_ONSAPI_PULL_GROUP,
    CID_SYS_RMQ_TRANS,
)

#: Broker id of a master; slaves have ids > 0 (docs/reference.md §2.5).
MASTER_ID = 0
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"
LMQ_PREFIX = "%LMQ%"
MULTI_DISPATCH_QUEUE_SPLITTER = ","
#: The ``MSG_REGION`` a broker adds to send responses (docs/reference.md §1.8).
DEFAULT_TRACE_REGION_ID = "DefaultRegion"
UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"
REPLY_MESSAGE_FLAG = "reply"
#: System property name for the producer's compress level (default 5, docs/reference.md §4.3).
MESSAGE_COMPRESS_LEVEL = "rocketmq.message.compressLevel"

K = TypeVar("K")


def get_retry_topic(consumer_group: str) -> str:
    """``%RETRY%<group>``. Mirrors ``MixAll#getRetryTopic``; docs/reference.md §7.3."""
    return RETRY_GROUP_TOPIC_PREFIX + consumer_group


def get_dlq_topic(consumer_group: str) -> str:
    """``%DLQ%<group>``. Mirrors ``MixAll#getDLQTopic``; docs/reference.md §7.3."""
    return DLQ_GROUP_TOPIC_PREFIX + consumer_group


def get_reply_topic(cluster_name: str) -> str:
    """``<cluster>_REPLY_TOPIC``. Mirrors ``MixAll#getReplyTopic``; docs/reference.md §7.3."""
    return cluster_name + "_" + REPLY_TOPIC_POSTFIX


def is_retry_topic(topic: str) -> bool:
    """``topic.startsWith(MixAll.RETRY_GROUP_TOPIC_PREFIX)``, the test RocketMQ writes inline."""
    return topic.startswith(RETRY_GROUP_TOPIC_PREFIX)


def is_dlq_topic(topic: str) -> bool:
    """``topic.startsWith(MixAll.DLQ_GROUP_TOPIC_PREFIX)``, the test RocketMQ writes inline."""
    return topic.startswith(DLQ_GROUP_TOPIC_PREFIX)


def is_sys_consumer_group(consumer_group: str) -> bool:
    """True for ``CID_RMQ_SYS_*``. Mirrors ``MixAll#isSysConsumerGroup``."""
    return consumer_group.startswith(CID_RMQ_SYS_PREFIX)


def is_lmq(lmq_meta_data: str | None) -> bool:
    """True for ``%LMQ%*``, false for ``None``. Mirrors ``MixAll#isLmq``; ``MixAllTest``."""
    return lmq_meta_data is not None and lmq_meta_data.startswith(LMQ_PREFIX)


def broker_vip_channel(is_change: bool, broker_addr: str) -> str:
    """The VIP ("fast") channel address: port − 2 when ``is_change``.

    Mirrors ``MixAll#brokerVIPChannel`` (common, RocketMQ 4.9.3); docs/reference.md §1
    (``"127.0.0.1:10911"`` → ``"127.0.0.1:10909"``).

    Raises:
        ValueError: ``broker_addr`` has no ``:port`` part.
    """
    if not is_change:
        return broker_addr
    ip, sep, port = broker_addr.rpartition(":")
    if not sep:
        raise ValueError(f"broker_addr must be 'ip:port', got {broker_addr!r}")
    return f"{ip}:{int(port) - 2}"


def compare_and_increase_only(table: MutableMapping[K, int], key: K, value: int) -> bool:
    """Raise ``table[key]`` to ``value`` if that is larger; report whether it changed.

    Mirrors ``MixAll#compareAndIncreaseOnly(AtomicLong, long)`` (common, RocketMQ 4.9.3),
    with the ``AtomicLong`` replaced by one slot of a table (the core is single
    threaded, so no CAS loop is needed). ``MixAllTest``: 5 → 6 is true, then 6 → 4 is
    false and leaves 6. A missing key counts as "no value yet": it is set and the
    call returns true.
    """
    prev = table.get(key)
    if prev is None or value > prev:
        table[key] = value
        return True
    return False
