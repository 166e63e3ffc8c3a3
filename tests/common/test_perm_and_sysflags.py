"""Tests for mqlab.common.perm_name and mqlab.common.sysflag (PullSysFlagTest; docs/reference.md §4.3, §7.2)."""

from __future__ import annotations

from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import MessageSysFlag, PullSysFlag, TopicSysFlag


def test_perm_bits():
    """PRIORITY 8, READ 4, WRITE 2, INHERIT 1 (docs/reference.md §7.2)."""
    assert (PermName.PERM_PRIORITY, PermName.PERM_READ, PermName.PERM_WRITE) == (8, 4, 2)
    assert PermName.PERM_INHERIT == 1


def test_perm2string():
    """6 → RW-, 7 → RWX, 4 → R--, 2 → -W-, 0 → --- (PermName#perm2String)."""
    assert PermName.perm2string(6) == "RW-"
    assert PermName.perm2string(7) == "RWX"
    assert PermName.perm2string(4) == "R--"
    assert PermName.perm2string(2) == "-W-"
    assert PermName.perm2string(0) == "---"
    assert PermName.perm2string(8) == "---"


def test_perm_predicates():
    """Readable/writeable/inherited test single bits (wipeWritePerm 6 → 4 is read-only)."""
    assert PermName.is_readable(6) and PermName.is_writeable(6) and not PermName.is_inherited(6)
    assert PermName.is_readable(4) and not PermName.is_writeable(4)
    assert PermName.is_inherited(7)
    assert (7 & ~PermName.PERM_INHERIT) == 6


def test_message_sys_flag_values():
    """COMPRESSED 1, MULTI_TAGS 2, transaction 0/4/8/12, BORNHOST_V6 16, STOREHOST_V6 32 (§4.3)."""
    f = MessageSysFlag
    assert (f.COMPRESSED_FLAG, f.MULTI_TAGS_FLAG) == (1, 2)
    assert (f.TRANSACTION_NOT_TYPE, f.TRANSACTION_PREPARED_TYPE) == (0, 4)
    assert (f.TRANSACTION_COMMIT_TYPE, f.TRANSACTION_ROLLBACK_TYPE) == (8, 12)
    assert (f.BORNHOST_V6_FLAG, f.STOREHOSTADDRESS_V6_FLAG) == (16, 32)


def test_transaction_value_get_and_reset():
    """getTransactionValue = flag & 0xC; reset replaces only those bits (MessageSysFlag)."""
    assert MessageSysFlag.get_transaction_value(0x30 | 0x4 | 0x1) == 0x4
    flag = MessageSysFlag.reset_transaction_value(
        0x31 | 0x4, MessageSysFlag.TRANSACTION_COMMIT_TYPE
    )
    assert flag == 0x31 | 0x8
    assert MessageSysFlag.clear_compressed_flag(0x5) == 0x4


def test_pull_sys_flag_build():
    """commitOffset, suspend, subscription → 7; class filter 8; lite pull 0x10 (mechanisms.md "The consumer's pull loop")."""
    assert PullSysFlag.build_sys_flag(True, True, True, False) == 7
    assert PullSysFlag.build_sys_flag(False, True, False, False) == 2
    assert PullSysFlag.build_sys_flag(False, False, False, True) == 8
    assert (PullSysFlag.COMMIT_OFFSET, PullSysFlag.SUSPEND, PullSysFlag.SUBSCRIPTION) == (1, 2, 4)
    assert (PullSysFlag.CLASS_FILTER, PullSysFlag.LITE_PULL) == (8, 0x10)


def test_pull_sys_flag_lite_pull():
    """buildSysFlag(..., litePull=True) has the lite-pull flag, False does not (PullSysFlagTest)."""
    assert PullSysFlag.has_lite_pull_flag(
        PullSysFlag.build_sys_flag(False, False, False, False, True)
    )
    assert not PullSysFlag.has_lite_pull_flag(
        PullSysFlag.build_sys_flag(False, False, False, False, False)
    )


def test_pull_sys_flag_predicates_and_clear():
    """has_* test one bit each; clearCommitOffsetFlag drops bit 0 only."""
    flag = PullSysFlag.build_sys_flag(True, True, True, True)
    assert flag == 15
    assert PullSysFlag.has_commit_offset_flag(flag) and PullSysFlag.has_suspend_flag(flag)
    assert PullSysFlag.has_subscription_flag(flag) and PullSysFlag.has_class_filter_flag(flag)
    cleared = PullSysFlag.clear_commit_offset_flag(flag)
    assert cleared == 14 and not PullSysFlag.has_commit_offset_flag(cleared)


def test_topic_sys_flag():
    """FLAG_UNIT 1, FLAG_UNIT_SUB 2, with set/clear/has (TopicSysFlag, docs/reference.md §7.3)."""
    assert TopicSysFlag.build_sys_flag(True, True) == 3
    assert TopicSysFlag.build_sys_flag(False, True) == 2
    assert TopicSysFlag.has_unit_flag(TopicSysFlag.set_unit_flag(0))
    assert TopicSysFlag.clear_unit_flag(3) == 2
    assert TopicSysFlag.has_unit_sub_flag(TopicSysFlag.set_unit_sub_flag(0))
    assert TopicSysFlag.clear_unit_sub_flag(3) == 1
    assert not TopicSysFlag.has_unit_sub_flag(1)
