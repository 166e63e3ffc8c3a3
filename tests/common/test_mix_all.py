"""Tests for mqlab.common.mix_all (MixAllTest; docs/reference.md §1, §7.3)."""

from __future__ import annotations

from mqlab.common import mix_all


def test_broker_vip_channel():
    """brokerVIPChannel(true, "127.0.0.1:10911") = "127.0.0.1:10909"; false keeps it (MixAllTest)."""
    assert mix_all.broker_vip_channel(True, "127.0.0.1:10911") == "127.0.0.1:10909"
    assert mix_all.broker_vip_channel(False, "127.0.0.1:10911") == "127.0.0.1:10911"


def test_compare_and_increase_only():
    """5 → 6 is true and sets 6; then 4 is false and leaves 6 (testCompareAndIncreaseOnly)."""
    table = {"k": 5}
    assert mix_all.compare_and_increase_only(table, "k", 6) is True
    assert table["k"] == 6
    assert mix_all.compare_and_increase_only(table, "k", 4) is False
    assert table["k"] == 6
    assert mix_all.compare_and_increase_only(table, "k", 6) is False
    assert mix_all.compare_and_increase_only(table, "new", 3) is True and table["new"] == 3


def test_is_lmq():
    """None and "lmq" are not LMQ; "%LMQ%queue123" and "%LMQ%GID_TEST" are (testIsLmq)."""
    assert not mix_all.is_lmq(None)
    assert not mix_all.is_lmq("lmq")
    assert mix_all.is_lmq("%LMQ%queue123")
    assert mix_all.is_lmq("%LMQ%GID_TEST")


def test_retry_dlq_and_reply_topics():
    """%RETRY%<g>, %DLQ%<g>, <cluster>_REPLY_TOPIC (docs/reference.md §7.3)."""
    assert mix_all.get_retry_topic("g1") == "%RETRY%g1"
    assert mix_all.get_dlq_topic("g1") == "%DLQ%g1"
    assert mix_all.get_reply_topic("DefaultCluster") == "DefaultCluster_REPLY_TOPIC"
    assert mix_all.is_retry_topic("%RETRY%g1") and not mix_all.is_retry_topic("%DLQ%g1")
    assert mix_all.is_dlq_topic("%DLQ%g1")


def test_group_constants():
    """Reserved groups, sys-group prefix and MASTER_ID are RocketMQ's (docs/reference.md §7.3)."""
    assert mix_all.is_sys_consumer_group("CID_RMQ_SYS_TRANS")
    assert not mix_all.is_sys_consumer_group("group1")
    assert mix_all.CLIENT_INNER_PRODUCER_GROUP == "CLIENT_INNER_PRODUCER"
    assert mix_all.DEFAULT_CONSUMER_GROUP == "DEFAULT_CONSUMER"
    assert mix_all.TOOLS_CONSUMER_GROUP == "TOOLS_CONSUMER"
    assert mix_all.MONITOR_CONSUMER_GROUP == "__MONITOR_CONSUMER"
    assert len(mix_all.RESERVED_GROUPS) == 13
    assert mix_all.RESERVED_GROUPS[-1] == mix_all.CID_SYS_RMQ_TRANS == "CID_RMQ_SYS_TRANS"
    assert mix_all.MASTER_ID == 0
    assert mix_all.DEFAULT_TOPIC == "TBW102"
    assert mix_all.LMQ_PREFIX == "%LMQ%"
