"""Tests for mqlab.common.topic_validator (TopicValidatorTest; docs/reference.md §7.1)."""

from __future__ import annotations

import pytest

from mqlab.common import topic_validator as tv


def test_blank_topic():
    """ "" and whitespace are SYSTEM_ERROR "The specified topic is blank." (docs/reference.md §7.1)."""
    for t in ("", "   ", None, "\t\n"):
        assert tv.validate_topic(t) == (False, 1, "The specified topic is blank.")


def test_illegal_characters():
    """ "../TopicTest", "a/b", "a b" and non-ASCII are illegal-character errors (docs/reference.md §7.1)."""
    remark = "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    for t in ("../TopicTest", "a/b", "a b", "topic.1", "主题", "Topic\u00e9"):
        assert tv.validate_topic(t) == (False, 1, remark)


def test_too_long_1280_chars():
    """generateString(128) (1280 chars) is "longer than topic max length." (TopicValidatorTest)."""
    assert tv.validate_topic("0123456789" * 128) == (
        False,
        1,
        "The specified topic is longer than topic max length.",
    )


def test_length_boundary_127_128():
    """127 chars pass, 128 fail (TOPIC_MAX_LENGTH = 127)."""
    assert tv.TOPIC_MAX_LENGTH == 127
    assert tv.validate_topic("a" * 127) == (True, 0, None)
    assert tv.validate_topic("a" * 128)[0] is False


@pytest.mark.parametrize("topic", ["TestTopic", "%RETRY%g1", "a|b", "A-Z_0-9", "%DLQ%g"])
def test_legal_topics_pass(topic: str):
    """`%`, `|`, `-`, `_`, digits and ASCII letters are legal (regex ^[%|a-zA-Z0-9_-]+$)."""
    assert tv.validate_topic(topic) == (True, 0, None)


def test_is_topic_or_group_illegal_char_table():
    """Exactly the 66 chars of the bitmap are legal among the first 256 code points."""
    legal = [chr(i) for i in range(256) if not tv.is_topic_or_group_illegal(chr(i))]
    assert len(legal) == 66
    assert set("%|-_") <= set(legal)
    assert not tv.is_topic_or_group_illegal("")


def test_is_system_topic():
    """Built-in system topics and the rmq_sys_ prefix are system topics (testIsSystemTopic)."""
    for t in tv.SYSTEM_TOPIC_SET:
        assert tv.is_system_topic(t)
    assert len(tv.SYSTEM_TOPIC_SET) == 9
    assert tv.is_system_topic("rmq_sys__test")
    assert not tv.is_system_topic("test_not_system_topic")


def test_is_system_topic_extra_runtime_names():
    """Cluster/broker names and the reply topic count when passed as extra (addSystemTopic)."""
    extra = ("DefaultCluster", "broker-a", "DefaultCluster_REPLY_TOPIC")
    assert tv.is_system_topic("broker-a", extra)
    assert not tv.is_system_topic("broker-a")
    assert tv.system_topic_conflict_remark("TBW102") == (
        "The topic[TBW102] is conflict with system topic."
    )


def test_not_allowed_send_topic():
    """SCHEDULE_TOPIC_XXXX is forbidden with NO_PERMISSION's remark (testIsNotAllowedSendTopic)."""
    assert tv.is_not_allowed_send_topic("SCHEDULE_TOPIC_XXXX")
    assert not tv.is_not_allowed_send_topic("test_allowed_send_topic")
    assert tv.not_allowed_send_remark("SCHEDULE_TOPIC_XXXX") == (
        "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."
    )


def test_builtin_topic_names():
    """Built-in topic names are RocketMQ 4.9.3's (docs/reference.md §7.1, §7.3)."""
    assert tv.AUTO_CREATE_TOPIC_KEY_TOPIC == "TBW102"
    assert tv.RMQ_SYS_SCHEDULE_TOPIC == "SCHEDULE_TOPIC_XXXX"
    assert tv.RMQ_SYS_BENCHMARK_TOPIC == "BenchmarkTest"
    assert tv.RMQ_SYS_OFFSET_MOVED_EVENT == "OFFSET_MOVED_EVENT"
    assert tv.RMQ_SYS_SELF_TEST_TOPIC == "SELF_TEST_TOPIC"
    assert tv.RMQ_SYS_TRACE_TOPIC == "RMQ_SYS_TRACE_TOPIC"
    assert tv.SYSTEM_TOPIC_PREFIX == "rmq_sys_"


def test_topic_validator_class_namespace():
    """TopicValidator.x call sites reach the same constants and checks as the module."""
    assert tv.TopicValidator.validate_topic("TestTopic") == (True, 0, None)
    assert tv.TopicValidator.RMQ_SYS_OFFSET_MOVED_EVENT == "OFFSET_MOVED_EVENT"
    assert tv.TopicValidator.TOPIC_MAX_LENGTH == 127
    assert tv.TopicValidator.is_not_allowed_send_topic("SCHEDULE_TOPIC_XXXX")
