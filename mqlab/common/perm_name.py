"""Topic and broker permission bits.

Mirrors ``org.apache.rocketmq.common.constant.PermName`` (common/constant, RocketMQ
4.9.3); docs/reference.md §7.2 and §7.3.

What this module owns: the four bits and their ``"RWX"`` rendering. What it must not
know: which topic or broker carries a given ``perm``; the topic config manager, the send
and pull processors and the name server route table all test the same bits here.
A topic is created with ``PERM_READ | PERM_WRITE`` (6); ``TBW102`` carries
``PERM_INHERIT`` too (7), and a topic auto-created from it drops that bit again.
"""

from __future__ import annotations

__all__ = ["PermName"]


class PermName:
    """Permission bits and tests. Mirrors ``PermName`` (common/constant, RocketMQ 4.9.3)."""

    PERM_PRIORITY = 0x1 << 3
    PERM_READ = 0x1 << 2
    PERM_WRITE = 0x1 << 1
    PERM_INHERIT = 0x1

    @staticmethod
    def perm2string(perm: int) -> str:
        """``"RWX"`` with ``-`` for missing bits: 6 → ``"RW-"``, 7 → ``"RWX"``.

        Mirrors ``PermName#perm2String``; docs/reference.md §7.2 (X stands for inherit). The
        priority bit is not rendered.
        """
        return (
            ("R" if perm & PermName.PERM_READ else "-")
            + ("W" if perm & PermName.PERM_WRITE else "-")
            + ("X" if perm & PermName.PERM_INHERIT else "-")
        )

    @staticmethod
    def is_readable(perm: int) -> bool:
        """Mirrors ``PermName#isReadable``."""
        return (perm & PermName.PERM_READ) == PermName.PERM_READ

    @staticmethod
    def is_writeable(perm: int) -> bool:
        """Mirrors ``PermName#isWriteable`` (RocketMQ's spelling)."""
        return (perm & PermName.PERM_WRITE) == PermName.PERM_WRITE

    @staticmethod
    def is_inherited(perm: int) -> bool:
        """Mirrors ``PermName#isInherited``."""
        return (perm & PermName.PERM_INHERIT) == PermName.PERM_INHERIT
