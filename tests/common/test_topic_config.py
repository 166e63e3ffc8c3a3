"""Tests for mqlab.common.topic_config (DataVersionTest; docs/reference.md §7.3, §7.4)."""

from __future__ import annotations

import json

import pytest

from mqlab.common.topic_config import (
    DataVersion,
    TopicConfig,
    TopicFilterType,
    parse_topic_filter_type,
)


def test_topic_config_defaults():
    """16/16 queues, perm 6, SINGLE_TAG, sys flag 0, not ordered (docs/reference.md §7.3)."""
    tc = TopicConfig("T")
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (16, 16, 6)
    assert tc.topic_filter_type == "SINGLE_TAG" == TopicFilterType.SINGLE_TAG
    assert (tc.topic_sys_flag, tc.order) == (0, False)


def test_topic_config_json_matches_topics_json():
    """to_json_dict is the topics.json bean with sorted keys (docs/reference.md §7.4 example)."""
    tc = TopicConfig("TopicTest", 4, 4)
    assert json.dumps(tc.to_json_dict(), separators=(",", ":")) == (
        '{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG",'
        '"topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}'
    )
    assert list(tc.to_json_dict()) == sorted(tc.to_json_dict())


def test_topic_config_from_json_round_trip_and_defaults():
    """from_json_dict inverts to_json_dict, keeps defaults for absent keys, ignores unknown ones."""
    tc = TopicConfig("TBW102", 8, 8, 7, TopicFilterType.MULTI_TAG, 1, True)
    assert TopicConfig.from_json_dict(tc.to_json_dict()) == tc
    partial = TopicConfig.from_json_dict({"topicName": "X", "perm": 4, "future": 1})
    assert partial == TopicConfig("X", perm=4)
    with pytest.raises(ValueError, match="topicName"):
        TopicConfig.from_json_dict({"perm": 6})


def test_topic_config_string_forms():
    """toString renders perm as RWX; encode/decode use 5 space-separated fields (TopicConfig)."""
    tc = TopicConfig("TBW102", 8, 8, 7)
    assert str(tc) == (
        "TopicConfig [topicName=TBW102, readQueueNums=8, writeQueueNums=8, perm=RWX, "
        "topicFilterType=SINGLE_TAG, topicSysFlag=0, order=false]"
    )
    assert tc.encode() == "TBW102 8 8 7 SINGLE_TAG"
    assert TopicConfig.decode("TBW102 8 8 7 SINGLE_TAG") == tc
    assert TopicConfig.decode("TBW102 8 8") is None


def test_parse_topic_filter_type():
    """MULTI_TAGS_FLAG (2) in the message sys flag means MULTI_TAG (MessageExt#parseTopicFilterType)."""
    assert parse_topic_filter_type(2) is TopicFilterType.MULTI_TAG
    assert parse_topic_filter_type(0x31) is TopicFilterType.SINGLE_TAG


def test_data_version_equality():
    """Equal by timestamp and counter; a different counter is unequal (DataVersionTest)."""
    a = DataVersion(timestamp=1650000000000)
    assert a == DataVersion(timestamp=1650000000000)
    assert a != DataVersion(timestamp=1650000000000, counter=1)
    assert a != DataVersion(timestamp=1650000000001)


def test_data_version_next_version_and_json():
    """nextVersion stamps now and adds 1; JSON is {"counter","timestamp"} (docs/reference.md §7.4)."""
    dv = DataVersion(timestamp=1, counter=4)
    dv.next_version(1650000000000)
    assert (dv.timestamp, dv.counter) == (1650000000000, 5)
    assert json.dumps(dv.to_json_dict(), separators=(",", ":")) == (
        '{"counter":5,"timestamp":1650000000000}'
    )
    assert DataVersion.from_json_dict(dv.to_json_dict()) == dv
    other = DataVersion()
    other.assign_new_one(dv)
    assert other == dv
    assert str(dv) == "DataVersion[timestamp=1650000000000, counter=5]"
