"""Tests for mqlab.broker.filter (ExpressionMessageFilter, ExpressionForRetryMessageFilter,
ConsumerFilterManager, PullAPIWrapper's tag re-filter; mechanisms.md "Pull processing" steps 6–8, mechanisms.md "Long polling",
mechanisms.md "Rebalancing"; docs/reference.md §10.1, §10.3, §10.14)."""

from __future__ import annotations

import json

import pytest

from mqlab.broker.filter import (
    MS_24_HOUR,
    ConsumerFilterData,
    ConsumerFilterManager,
    ExpressionForRetryMessageFilter,
    ExpressionMessageFilter,
    filter_messages_by_tags,
)
from mqlab.common.filter_api import FilterAPI, SubscriptionData, java_string_hash
from mqlab.common.message import MessageExt
from mqlab.common.message_decoder import encode_stored_message
from mqlab.store.message_filter import MessageFilter

TAG_A, TAG_B = 2598919, 2598920  # docs/reference.md §6: "TagA".hashCode(), "TagB".hashCode()


def tag_filter(sub: str, topic: str = "T") -> ExpressionMessageFilter:
    return ExpressionMessageFilter(FilterAPI.build_subscription_data(topic, sub), None, None)


def sql_filter(
    expression: str, *, cls: type[ExpressionMessageFilter] = ExpressionMessageFilter
) -> ExpressionMessageFilter:
    sd = FilterAPI.build_subscription_data("T", expression, "SQL92", 7)
    data = ConsumerFilterManager.build("T", "G", expression, "SQL92", 7, now_ms=1000)
    assert data is not None
    return cls(sd, data, ConsumerFilterManager())


def stored(topic: str = "T", **props: str) -> bytes:
    return encode_stored_message(MessageExt(topic=topic, body=b"x", properties=dict(props)))


# --- TAG by consume queue -------------------------------------------------------------------
def test_filters_implement_store_protocol() -> None:
    """Both filters satisfy mqlab.store.message_filter.MessageFilter (mechanisms.md "Pull processing" step 8)."""
    assert isinstance(tag_filter("TagA"), MessageFilter)
    assert isinstance(sql_filter("a > 1", cls=ExpressionForRetryMessageFilter), MessageFilter)


def test_tag_code_matched() -> None:
    """docs/reference.md §10.1: a "TagA" subscription matches CQ tags code 2598919 and not TagB's 2598920."""
    f = tag_filter("TagA")
    assert java_string_hash("TagA") == TAG_A
    assert f.is_matched_by_consume_queue(TAG_A) is True
    assert f.is_matched_by_consume_queue(TAG_B) is False
    assert f.is_matched_by_consume_queue(0) is False  # an untagged message's code is 0


def test_or_tags_match_each_code() -> None:
    """mechanisms.md "Rebalancing": "TagA || TagB" puts both hash codes in codeSet."""
    f = tag_filter("TagA || TagB")
    assert f.is_matched_by_consume_queue(TAG_A) and f.is_matched_by_consume_queue(TAG_B)
    assert f.is_matched_by_consume_queue(2598921) is False  # TagC


@pytest.mark.parametrize("code", [TAG_A, TAG_B, 0, -1797390410])
def test_star_matches_everything(code: int) -> None:
    """docs/reference.md §10.1: subString "*" matches any tags code."""
    assert tag_filter("*").is_matched_by_consume_queue(code) is True


def test_null_tags_code_matches() -> None:
    """mechanisms.md "Long polling" / docs/reference.md §10.3: the hold-service check passes tagsCode null → match."""
    f = tag_filter("TagA")
    assert f.is_matched_by_consume_queue(None) is True
    assert f.is_matched_by_consume_queue(None, None) is True


def test_tags_code_is_cut_to_int() -> None:
    """Java checks codeSet.contains(tagsCode.intValue()): only the low 32 bits count."""
    f = tag_filter("TagNeg")
    assert java_string_hash("TagNeg") == -1797390410
    assert f.is_matched_by_consume_queue(-1797390410) is True
    assert f.is_matched_by_consume_queue(2497576886) is True  # same low 32 bits, unsigned
    assert f.is_matched_by_consume_queue(TAG_A + (1 << 32)) is False


def test_no_subscription_or_class_filter_matches() -> None:
    """docs/reference.md §10.1: no subscription → match; classFilterMode → match (both checks)."""
    f = ExpressionMessageFilter(None, None, None)
    assert f.is_matched_by_consume_queue(TAG_B) and f.is_matched_by_commit_log(None, {})
    sd = FilterAPI.build_subscription_data("T", "TagA")
    sd.class_filter_mode = True
    g = ExpressionMessageFilter(sd, None, None)
    assert g.is_matched_by_consume_queue(TAG_B) and g.is_matched_by_commit_log(None, {})


def test_tag_commit_log_always_matches() -> None:
    """docs/reference.md §10.1: the commit-log check always matches for TAG type."""
    f = tag_filter("TagA")
    assert f.is_matched_by_commit_log(stored(TAGS="TagB"), None) is True
    assert f.is_matched_by_commit_log(None, {"TAGS": "TagB"}) is True


# --- SQL92 ----------------------------------------------------------------------------------
def test_sql92_consume_queue_check_passes_without_bloom() -> None:
    """SQL92 CQ check: no bloom filter data → match, whatever the tags code."""
    f = sql_filter("a > 5")
    assert f.bloom_data_valid is False
    assert f.is_matched_by_consume_queue(TAG_B) is True
    assert f.is_matched_by_consume_queue(None) is True


@pytest.mark.parametrize(
    ("props", "expected"),
    [({"a": "6"}, True), ({"a": "5"}, False), ({}, False), ({"a": "six"}, False)],
)
def test_sql92_by_commit_log_properties(props: dict[str, str], expected: bool) -> None:
    """mechanisms.md "Long polling": notifyMessageArriving re-checks by properties; null or an error → no match."""
    assert sql_filter("a > 5").is_matched_by_commit_log(None, props) is expected


def test_sql92_by_commit_log_decodes_stored_entry() -> None:
    """docs/reference.md §10.1 step 4g: getMessage passes the stored entry; properties are decoded from it."""
    f = sql_filter("TAGS IN ('TagA', 'TagC') AND region = 'eu'")
    assert f.is_matched_by_commit_log(stored(TAGS="TagA", region="eu"), None) is True
    assert f.is_matched_by_commit_log(stored(TAGS="TagB", region="eu"), None) is False
    assert f.is_matched_by_commit_log(memoryview(stored(TAGS="TagC", region="eu")), None) is True
    # given properties win over the buffer
    assert f.is_matched_by_commit_log(stored(TAGS="TagB"), {"TAGS": "TagA", "region": "eu"})


def test_sql92_without_filter_data_matches() -> None:
    """ "no expression": SQL92 subscription without compiled filter data → match."""
    sd = FilterAPI.build_subscription_data("T", "a > 5", "SQL92")
    f = ExpressionMessageFilter(sd, None, ConsumerFilterManager())
    assert f.is_matched_by_commit_log(None, {"a": "1"}) is True


def test_hold_service_two_step_check() -> None:
    """mechanisms.md "Long polling" step 2: CQ(tagsCode) then, if properties given, commit log(properties)."""
    f = sql_filter("a = 'x'")
    for props, expected in (({"a": "x"}, True), ({"a": "y"}, False)):
        match = f.is_matched_by_consume_queue(TAG_A, None)
        if match and props is not None:
            match = f.is_matched_by_commit_log(None, props)
        assert match is expected


# --- ConsumerFilterManager.build / register -------------------------------------------------
def test_build_tag_type_is_none() -> None:
    """mechanisms.md "Pull processing" step 6: ConsumerFilterManager.build returns null for TAG (and null/"" type)."""
    for type_ in ("TAG", None, ""):
        assert ConsumerFilterManager.build("T", "G", "TagA", type_, 1) is None


def test_build_sql92() -> None:
    """build compiles the expression and stamps born time, version; no bloom data."""
    data = ConsumerFilterManager.build("T", "G", "a > 5", "SQL92", 42, now_ms=1000)
    assert data is not None
    assert (data.topic, data.consumer_group, data.expression_type) == ("T", "G", "SQL92")
    assert (data.born_time, data.dead_time, data.client_version) == (1000, 0, 42)
    assert data.compiled is data.compiled_expression
    assert data.compiled_expression is not None and data.compiled_expression({"a": "6"})
    assert data.is_dead() is False and data.is_msg_in_live(1001) and not data.is_msg_in_live(1000)


def test_build_parse_error_is_none() -> None:
    """build logs "parse error" and returns null for an expression that does not compile."""
    assert ConsumerFilterManager.build("T", "G", "a >", "SQL92", 1) is None
    assert ConsumerFilterManager.build("T", "G", "a > 1", "GROOVY", 1) is None


def test_register_get_and_versions() -> None:
    """register keeps data per (topic, group); only a newer clientVersion replaces it."""
    m = ConsumerFilterManager()
    assert m.register("T", "G", "a > 1", "SQL92", 10, now_ms=100) is True
    assert m.get("T", "G").expression == "a > 1"
    assert m.register("T", "G", "a > 2", "SQL92", 9, now_ms=200) is False  # older version
    assert m.get("T", "G").expression == "a > 1"
    assert m.register("T", "G", "a > 2", "SQL92", 11, now_ms=300) is True
    assert (m.get("T", "G").expression, m.get("T", "G").born_time) == ("a > 2", 300)
    assert m.register("T", "G", "a > 2", "SQL92", 12, now_ms=400) is True  # same: version only
    assert (m.get("T", "G").client_version, m.get("T", "G").born_time) == (12, 300)
    assert m.get("T", "other") is None and m.get("U", "G") is None


def test_register_ignores_tag_and_empty() -> None:
    """register returns false for TAG type or an empty expression."""
    m = ConsumerFilterManager()
    assert m.register("T", "G", "TagA", "TAG", 1, now_ms=1) is False
    assert m.register("T", "G", "", "SQL92", 1, now_ms=1) is False
    assert m.get_by_topic("T") is None


def test_register_bad_new_expression_removes_old() -> None:
    """A changed expression that does not compile drops the old data (client then fails)."""
    m = ConsumerFilterManager()
    m.register("T", "G", "a > 1", "SQL92", 1, now_ms=1)
    assert m.register("T", "G", "a >", "SQL92", 2, now_ms=2) is False
    assert m.get("T", "G") is None


def test_unregister_marks_dead_and_same_version_revives() -> None:
    """unRegister sets deadTime; a same-version heartbeat re-alives (deadTime = 0)."""
    m = ConsumerFilterManager(clock=lambda: 500)
    m.register("T", "G", "a > 1", "SQL92", 1, now_ms=100)
    m.unregister("G")
    assert (m.get("T", "G").dead_time, m.get("T", "G").is_dead()) == (500, True)
    assert m.register("T", "G", "a > 1", "SQL92", 1, now_ms=600) is True
    assert (m.get("T", "G").dead_time, m.get("T", "G").is_dead()) == (0, False)


def test_register_group_kills_dropped_topics() -> None:
    """register(group, subList) marks the group's data on unsubscribed topics dead."""
    m = ConsumerFilterManager()
    m.register("T1", "G", "a > 1", "SQL92", 1, now_ms=100)
    m.register("T2", "G", "b > 1", "SQL92", 1, now_ms=100)
    sub = FilterAPI.build_subscription_data("T1", "a > 1", "SQL92", 2)
    m.register_group("G", [sub], now_ms=200)
    assert m.get("T1", "G").client_version == 2 and not m.get("T1", "G").is_dead()
    assert m.get("T2", "G").dead_time == 200
    assert [d.topic for d in m.get_by_group("G")] == ["T1", "T2"]


def test_clean_drops_long_dead_data() -> None:
    """clean removes data dead for >= 24 h (filterDataCleanTimeSpan), then empty topics."""
    m = ConsumerFilterManager()
    m.register("T", "G", "a > 1", "SQL92", 1, now_ms=100)
    m.un_register("G", now_ms=1000)
    m.clean(now_ms=1000 + MS_24_HOUR - 1)
    assert m.get("T", "G") is not None
    m.clean(now_ms=1000 + MS_24_HOUR)
    assert m.get("T", "G") is None and m.filter_data_by_topic == {}


def test_encode_decode_round_trip(tmp_path) -> None:
    """consumerFilter.json: fastjson keys, no compiled expression; load recompiles, marks dead."""
    m = ConsumerFilterManager()
    m.register("T", "G", "a > 1", "SQL92", 7, now_ms=100_000)
    doc = json.loads(m.encode(now_ms=200_000))
    assert doc == {
        "filterDataByTopic": {
            "T": {
                "groupFilterData": {
                    "G": {
                        "bornTime": 100_000,
                        "clientVersion": 7,
                        "consumerGroup": "G",
                        "dead": False,
                        "deadTime": 0,
                        "expression": "a > 1",
                        "expressionType": "SQL92",
                        "topic": "T",
                    }
                },
                "topic": "T",
            }
        }
    }
    path = ConsumerFilterManager.config_file_path(tmp_path)
    assert path == tmp_path / "config" / "consumerFilter.json"
    m.persist(path, now_ms=200_000)
    loaded = ConsumerFilterManager()
    assert loaded.load(path, now_ms=300_000) is True
    data = loaded.get("T", "G")
    assert data.dead_time == 270_000  # now - 30 s: "all consumers are dead when load"
    assert data.compiled_expression is not None and data.compiled_expression({"a": "2"})


# --- retry topics ---------------------------------------------------------------------------
def retry_setup(
    expression: str = "a > 5",
) -> tuple[SubscriptionData, ConsumerFilterManager]:
    m = ConsumerFilterManager()
    m.register("T", "G", expression, "SQL92", 1, now_ms=1)
    return FilterAPI.build_subscription_data("%RETRY%G", "*"), m


@pytest.mark.parametrize(("a", "expected"), [("6", True), ("3", False)])
def test_retry_filter_uses_original_topic_sql92(a: str, expected: bool) -> None:
    """filterSupportRetry: a %RETRY%G message is judged by G's SQL92 data for RETRY_TOPIC."""
    sd, m = retry_setup()
    f = ExpressionForRetryMessageFilter(sd, None, m)
    assert f.is_matched_by_consume_queue(TAG_A) is True  # inherited: "*" TAG
    assert f.is_matched_by_commit_log(None, {"RETRY_TOPIC": "T", "a": a}) is expected
    assert f.is_matched_by_commit_log(stored("%RETRY%G", RETRY_TOPIC="T", a=a), None) is expected


def test_plain_filter_passes_retry_messages() -> None:
    """Without filterSupportRetry the retry subscription is TAG "*": everything passes."""
    sd, m = retry_setup()
    f = ExpressionMessageFilter(sd, None, m)
    assert f.is_matched_by_commit_log(None, {"RETRY_TOPIC": "T", "a": "3"}) is True


def test_retry_filter_without_original_filter_data_matches() -> None:
    """No SQL92 data for (RETRY_TOPIC, group) — a TAG consumer — or no RETRY_TOPIC → match."""
    sd, m = retry_setup()
    f = ExpressionForRetryMessageFilter(sd, None, m)
    assert f.is_matched_by_commit_log(None, {"RETRY_TOPIC": "Other", "a": "3"}) is True
    assert f.is_matched_by_commit_log(None, {"a": "3"}) is True


def test_retry_filter_on_normal_topic_is_plain() -> None:
    """For a non-retry topic the retry filter behaves as ExpressionMessageFilter."""
    tag = FilterAPI.build_subscription_data("T", "TagA")
    assert ExpressionForRetryMessageFilter(tag, None, None).is_matched_by_commit_log(None, {})
    f = sql_filter("a > 5", cls=ExpressionForRetryMessageFilter)
    assert f.is_matched_by_commit_log(None, {"a": "6"}) is True
    assert f.is_matched_by_commit_log(None, {"a": "4"}) is False


# --- client-side tag re-filter --------------------------------------------------------------
def msg(tags: str | None, offset: int) -> MessageExt:
    props = {} if tags is None else {"TAGS": tags}
    return MessageExt(topic="T", properties=props, queue_offset=offset)


def test_client_refilter_drops_hash_collisions_and_untagged() -> None:
    """docs/reference.md §10.14: "Aa" and "BB" share hash 2112, so the broker passes both; the client
    keeps only exact tag strings and drops messages without TAGS."""
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    sd = FilterAPI.build_subscription_data("T", "Aa")
    broker = ExpressionMessageFilter(sd, None, None)
    assert broker.is_matched_by_consume_queue(java_string_hash("BB")) is True
    msgs = [msg("Aa", 0), msg("BB", 1), msg(None, 2), msg("Aa", 3), msg("aa", 4)]
    assert [m.queue_offset for m in filter_messages_by_tags(msgs, sd)] == [0, 3]


def test_client_refilter_star_and_class_filter_keep_all() -> None:
    """Empty tagsSet ("*") or classFilterMode: no re-filter, order kept."""
    msgs = [msg("Aa", 0), msg(None, 1)]
    assert filter_messages_by_tags(msgs, FilterAPI.build_subscription_data("T", "*")) == msgs
    sd = FilterAPI.build_subscription_data("T", "Aa")
    sd.class_filter_mode = True
    assert filter_messages_by_tags(iter(msgs), sd) == msgs


def test_client_refilter_multiple_tags() -> None:
    """mechanisms.md "Rebalancing": "TagA || TagB" keeps either tag exactly."""
    sd = FilterAPI.build_subscription_data("T", "TagA || TagB")
    msgs = [msg("TagB", 0), msg("TagC", 1), msg("TagA", 2)]
    assert [m.tags for m in filter_messages_by_tags(msgs, sd)] == ["TagB", "TagA"]


def test_consumer_filter_data_is_dead_formula() -> None:
    """isDead is deadTime >= bornTime: alive when dead_time 0 < born_time."""
    d = ConsumerFilterData("G", "T", "a > 1", "SQL92", born_time=10)
    assert d.is_dead() is False and d.how_long_after_death(50) == -1
    d.dead_time = 20
    assert d.is_dead() is True and d.how_long_after_death(50) == 30
