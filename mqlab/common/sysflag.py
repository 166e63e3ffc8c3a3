"""The three families of sys-flag bits: message, pull request and topic.

Mirrors ``MessageSysFlag``, ``PullSysFlag`` and ``TopicSysFlag`` (common/sysflag,
RocketMQ 4.9.3); docs/reference.md §4.3 (message bits, stored at offset 36 of a commit-log entry),
§2.2 (the pull request's ``sysFlag`` header) and §7.3 (topic bits).

What this module owns: bit values and the small set/test/clear helpers RocketMQ has.
What it must not know: who sets the bits. The codec sets the two IPv6 host bits, the
producer sets COMPRESSED and the transaction type, the broker sets MULTI_TAGS; the
push consumer builds the pull flag and the broker reads it (mechanisms.md "The consumer's pull loop", ``pullKernelImpl``).
"""

from __future__ import annotations

__all__ = ["MessageSysFlag", "PullSysFlag", "TopicSysFlag"]


class MessageSysFlag:
    """Bits of a message's ``sysFlag``. Mirrors ``MessageSysFlag``; docs/reference.md §4.3."""

    COMPRESSED_FLAG = 0x1
    MULTI_TAGS_FLAG = 0x1 << 1
    TRANSACTION_NOT_TYPE = 0
    TRANSACTION_PREPARED_TYPE = 0x1 << 2
    TRANSACTION_COMMIT_TYPE = 0x2 << 2
    TRANSACTION_ROLLBACK_TYPE = 0x3 << 2
    BORNHOST_V6_FLAG = 0x1 << 4
    STOREHOSTADDRESS_V6_FLAG = 0x1 << 5

    @staticmethod
    def get_transaction_value(flag: int) -> int:
        """Bits 2–3: 0 NOT_TYPE, 4 PREPARED, 8 COMMIT, 12 ROLLBACK.

        Mirrors ``MessageSysFlag#getTransactionValue``.
        """
        return flag & MessageSysFlag.TRANSACTION_ROLLBACK_TYPE

    @staticmethod
    def reset_transaction_value(flag: int, type_: int) -> int:
        """Replace the transaction type bits. Mirrors ``MessageSysFlag#resetTransactionValue``."""
        return (flag & ~MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) | type_

    @staticmethod
    def clear_compressed_flag(flag: int) -> int:
        """Mirrors ``MessageSysFlag#clearCompressedFlag``."""
        return flag & ~MessageSysFlag.COMPRESSED_FLAG


class PullSysFlag:
    """Bits of a PULL_MESSAGE request's ``sysFlag`` header. Mirrors ``PullSysFlag``.

    Java keeps the constants private as ``FLAG_*``; mqlab exposes them under those names
    and, for brevity, without the prefix (``COMMIT_OFFSET`` ...).
    """

    FLAG_COMMIT_OFFSET = 0x1
    FLAG_SUSPEND = 0x1 << 1
    FLAG_SUBSCRIPTION = 0x1 << 2
    FLAG_CLASS_FILTER = 0x1 << 3
    FLAG_LITE_PULL_MESSAGE = 0x1 << 4

    COMMIT_OFFSET = FLAG_COMMIT_OFFSET
    SUSPEND = FLAG_SUSPEND
    SUBSCRIPTION = FLAG_SUBSCRIPTION
    CLASS_FILTER = FLAG_CLASS_FILTER
    LITE_PULL = FLAG_LITE_PULL_MESSAGE

    @staticmethod
    def build_sys_flag(
        commit_offset: bool,
        suspend: bool,
        subscription: bool,
        class_filter: bool,
        lite_pull: bool = False,
    ) -> int:
        """OR together the requested bits.

        Mirrors ``PullSysFlag#buildSysFlag`` (both overloads); mechanisms.md "The consumer's pull loop" (``pullMessage``
        builds it from commitOffsetEnable, suspend=true, subExpression != null,
        classFilterMode).
        """
        flag = 0
        if commit_offset:
            flag |= PullSysFlag.FLAG_COMMIT_OFFSET
        if suspend:
            flag |= PullSysFlag.FLAG_SUSPEND
        if subscription:
            flag |= PullSysFlag.FLAG_SUBSCRIPTION
        if class_filter:
            flag |= PullSysFlag.FLAG_CLASS_FILTER
        if lite_pull:
            flag |= PullSysFlag.FLAG_LITE_PULL_MESSAGE
        return flag

    @staticmethod
    def clear_commit_offset_flag(sys_flag: int) -> int:
        """Mirrors ``PullSysFlag#clearCommitOffsetFlag`` (used when pulling from a slave)."""
        return sys_flag & ~PullSysFlag.FLAG_COMMIT_OFFSET

    @staticmethod
    def has_commit_offset_flag(sys_flag: int) -> bool:
        return (sys_flag & PullSysFlag.FLAG_COMMIT_OFFSET) == PullSysFlag.FLAG_COMMIT_OFFSET

    @staticmethod
    def has_suspend_flag(sys_flag: int) -> bool:
        return (sys_flag & PullSysFlag.FLAG_SUSPEND) == PullSysFlag.FLAG_SUSPEND

    @staticmethod
    def has_subscription_flag(sys_flag: int) -> bool:
        return (sys_flag & PullSysFlag.FLAG_SUBSCRIPTION) == PullSysFlag.FLAG_SUBSCRIPTION

    @staticmethod
    def has_class_filter_flag(sys_flag: int) -> bool:
        return (sys_flag & PullSysFlag.FLAG_CLASS_FILTER) == PullSysFlag.FLAG_CLASS_FILTER

    @staticmethod
    def has_lite_pull_flag(sys_flag: int) -> bool:
        return (sys_flag & PullSysFlag.FLAG_LITE_PULL_MESSAGE) == PullSysFlag.FLAG_LITE_PULL_MESSAGE


class TopicSysFlag:
    """Bits of ``TopicConfig.topicSysFlag``. Mirrors ``TopicSysFlag``; docs/reference.md §7.3."""

    FLAG_UNIT = 0x1 << 0
    FLAG_UNIT_SUB = 0x1 << 1

    @staticmethod
    def build_sys_flag(unit: bool, has_unit_sub: bool) -> int:
        """Mirrors ``TopicSysFlag#buildSysFlag``."""
        flag = 0
        if unit:
            flag |= TopicSysFlag.FLAG_UNIT
        if has_unit_sub:
            flag |= TopicSysFlag.FLAG_UNIT_SUB
        return flag

    @staticmethod
    def set_unit_flag(sys_flag: int) -> int:
        return sys_flag | TopicSysFlag.FLAG_UNIT

    @staticmethod
    def clear_unit_flag(sys_flag: int) -> int:
        return sys_flag & ~TopicSysFlag.FLAG_UNIT

    @staticmethod
    def has_unit_flag(sys_flag: int) -> bool:
        return (sys_flag & TopicSysFlag.FLAG_UNIT) == TopicSysFlag.FLAG_UNIT

    @staticmethod
    def set_unit_sub_flag(sys_flag: int) -> int:
        return sys_flag | TopicSysFlag.FLAG_UNIT_SUB

    @staticmethod
    def clear_unit_sub_flag(sys_flag: int) -> int:
        return sys_flag & ~TopicSysFlag.FLAG_UNIT_SUB

    @staticmethod
    def has_unit_sub_flag(sys_flag: int) -> bool:
        return (sys_flag & TopicSysFlag.FLAG_UNIT_SUB) == TopicSysFlag.FLAG_UNIT_SUB
