"""Tests for mqlab.common.filter_api (FilterAPITest, SubscriptionDataTest; docs/reference.md §2.3, §6)."""

from __future__ import annotations

import json

import pytest

from mqlab.common.filter_api import (
    ExpressionType,
    FilterAPI,
    SubscriptionData,
    java_string_hash,
    tags_string_to_tags_code,
)

HASHES = [
    ("TagA", 2598919),
    ("TagB", 2598920),
    ("TagC", 2598921),
    ("*", 42),
    ("a", 97),
    ("TAG1", 2567159),
    ("Tag2", 2598904),
    ("tag3", 3552217),
    ("中文", 646394),
    ("", 0),
]


@pytest.mark.parametrize(("s", "h"), HASHES)
def test_java_string_hash_vectors(s: str, h: int):
    """Java String#hashCode vectors checked with Java (docs/reference.md §6)."""
    assert java_string_hash(s) == h


def test_java_string_hash_wraps_signed_and_uses_surrogates():
    """Overflow wraps to signed 32-bit; non-BMP chars hash as two UTF-16 units (docs/reference.md §0)."""
    assert java_string_hash("polygenelubricants") == -2147483648
    assert java_string_hash("DefaultCluster") == java_string_hash("DefaultCluster")
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00


def test_tags_code():
    """TAGS code is the hash, 0 when no tags (MessageExtBrokerInner#tagsString2tagsCode, §6)."""
    assert tags_string_to_tags_code("TagA") == 2598919
    assert tags_string_to_tags_code(None) == 0
    assert tags_string_to_tags_code("") == 0


def test_build_subscription_data_three_tags():
    """ "TAG1 || Tag2 || tag3" → tags {TAG1, Tag2, tag3}, subString unchanged (FilterAPITest)."""
    sd = FilterAPI.build_subscription_data("FooBar", "TAG1 || Tag2 || tag3")
    assert sd.topic == "FooBar"
    assert sd.sub_string == "TAG1 || Tag2 || tag3"
    assert sd.tags_set == ["TAG1", "Tag2", "tag3"]
    assert sd.code_set == [2567159, 2598904, 3552217]
    assert sd.expression_type == "TAG"


def test_build_tag_some_exactly_a_b():
    """FilterAPI.build("TOPIC", "A || B", TAG) → tags exactly [A, B] (testBuildTagSome)."""
    sd = FilterAPI.build_subscription_data("TOPIC", "A || B", ExpressionType.TAG)
    assert sd.tags_set == ["A", "B"]
    assert ExpressionType.is_tag_type(sd.expression_type)


@pytest.mark.parametrize("sub", [None, "", "*"])
def test_sub_all(sub: str | None):
    """None, "" and "*" subscribe to all: subString "*", no tags or codes (docs/reference.md §2.3)."""
    sd = FilterAPI.build_subscription_data("T", sub)
    assert sd.sub_string == "*"
    assert sd.tags_set == [] and sd.code_set == []


def test_tag_parsing_skips_empty_and_dedups():
    """Empty parts are skipped; repeated tags appear once (HashSet semantics, mechanisms.md "Rebalancing")."""
    sd = FilterAPI.build_subscription_data("T", "TagA||  || TagB ||TagA||")
    assert sd.tags_set == ["TagA", "TagB"]
    assert sd.code_set == [2598919, 2598920]


def test_only_separators_is_split_error():
    """ "||" splits to nothing in Java (trailing empties dropped) → "subString split error"."""
    with pytest.raises(ValueError, match="subString split error"):
        FilterAPI.build_subscription_data("T", "||")


def test_trim_is_java_trim():
    """Tags are trimmed of chars <= U+0020 only, like String#trim (U+3000 stays)."""
    sd = FilterAPI.build_subscription_data("T", "\tTagA\x00 || \u3000TagB")
    assert sd.tags_set == ["TagA", "\u3000TagB"]


def test_sql92_keeps_expression():
    """SQL92 "a is not null" keeps the expression and type, no tags (testBuildSQL)."""
    sd = FilterAPI.build_subscription_data("TOPIC", "a is not null", ExpressionType.SQL92)
    assert sd.expression_type == "SQL92"
    assert sd.sub_string == "a is not null"
    assert sd.tags_set == [] and sd.code_set == []


def test_sql92_null_expression_raises():
    """SQL92 with a null expression raises ValueError (IllegalArgumentException in Java)."""
    with pytest.raises(ValueError, match="Expression can't be null! SQL92"):
        FilterAPI.build_subscription_data("TOPIC", None, ExpressionType.SQL92)


def test_is_tag_type():
    """None, "" and "TAG" are tag types; "SQL92" is not (ExpressionType#isTagType)."""
    assert ExpressionType.is_tag_type(None)
    assert ExpressionType.is_tag_type("")
    assert ExpressionType.is_tag_type("TAG")
    assert not ExpressionType.is_tag_type("SQL92")


def test_heartbeat_json_shape():
    """to_json_dict is the fastjson bean of docs/reference.md §2.3, keys sorted."""
    sd = FilterAPI.build_subscription_data("TopicTest", "TagA", sub_version=1650000000000)
    assert json.dumps(sd.to_json_dict(), separators=(",", ":"), ensure_ascii=False) == (
        '{"classFilterMode":false,"codeSet":[2598919],"expressionType":"TAG",'
        '"subString":"TagA","subVersion":1650000000000,"tagsSet":["TagA"],"topic":"TopicTest"}'
    )
    retry = FilterAPI.build_subscription_data("%RETRY%g1", "*", sub_version=7).to_json_dict()
    assert retry["codeSet"] == [] and retry["tagsSet"] == [] and retry["subString"] == "*"


def test_json_round_trip_and_set_equality():
    """from_json_dict(to_json_dict) is equal; tag order does not matter (SubscriptionDataTest)."""
    sd = SubscriptionData("TOPICA", "*", ["TAGA", "TAGB", "TAG3"], [1, 2, 3], sub_version=5)
    again = SubscriptionData.from_json_dict(json.loads(json.dumps(sd.to_json_dict())))
    assert again == sd
    shuffled = SubscriptionData("TOPICA", "*", ["TAG3", "TAGA", "TAGB"], [3, 2, 1], sub_version=5)
    assert shuffled == sd
    assert SubscriptionData("TOPICA", "*", sub_version=6) != SubscriptionData("TOPICA", "*")


def test_defaults_and_compare_to():
    """Defaults: TAG, not class-filter mode, empty sets; order by topic@subString (testCompareTo)."""
    sd = SubscriptionData("TOPICA", "*")
    assert sd.expression_type == "TAG" and sd.class_filter_mode is False
    assert sd.tags_set == [] and sd.code_set == []
    assert sd < SubscriptionData("TOPICBA", "*")
    assert SubscriptionData.SUB_ALL == "*"
