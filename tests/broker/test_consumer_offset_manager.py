"""Tests for mqlab.broker.consumer_offset_manager (mechanisms.md "Pull processing" step 11; docs/reference.md §10.4 commit/query,
§7.4 consumerOffset.json with unquoted Integer keys and the .bak fallback)."""

from __future__ import annotations

from mqlab.broker.consumer_offset_manager import ConsumerOffsetManager

PRETTY = (
    "{\n"
    '\t"offsetTable":{\n'
    '\t\t"%RETRY%group1@group1":{0:3\n'
    "\t\t},\n"
    '\t\t"TopicTest@group1":{0:120,1:118,2:119,3:121\n'
    "\t\t}\n"
    "\t}\n"
    "}"
)
COMPACT = (
    '{"offsetTable":{"%RETRY%group1@group1":{0:3},"TopicTest@group1":{0:120,1:118,2:119,3:121}}}'
)


def filled(config_dir=None) -> ConsumerOffsetManager:
    com = ConsumerOffsetManager(config_dir)
    for qid, off in ((3, 121), (1, 118), (0, 120), (2, 119)):
        com.commit_offset("10.0.0.5:51000", "group1", "TopicTest", qid, off)
    com.commit_offset("10.0.0.5:51000", "group1", "%RETRY%group1", 0, 3)
    return com


def test_commit_and_query():
    """commitOffset stores under "topic@group"; queryOffset returns it, −1 when absent (docs/reference.md §10.4)."""
    com = filled()
    assert com.offset_table["TopicTest@group1"] == {3: 121, 1: 118, 0: 120, 2: 119}
    assert com.query_offset("group1", "TopicTest", 1) == 118
    assert com.query_offset("group1", "TopicTest", 9) == -1
    assert com.query_offset("other", "TopicTest", 0) == -1
    assert com.query_offset_table("group1", "TopicTest") == {3: 121, 1: 118, 0: 120, 2: 119}
    assert com.query_offset_table("group1", "Nope") is None


def test_commit_is_a_plain_overwrite():
    """A smaller offset overwrites a larger one (Java only logs [NOTIFYME]); docs/reference.md §10.4."""
    com = filled()
    com.commit_offset("h", "group1", "TopicTest", 0, 5)
    assert com.query_offset("group1", "TopicTest", 0) == 5


def test_encode_compact_exact_bytes():
    """Compact JSON has unquoted int queue-id keys, keys sorted (docs/reference.md §7.4)."""
    assert filled().encode() == COMPACT


def test_encode_pretty_exact_bytes(tmp_path):
    """Pretty JSON is fastjson 1.2.x's: Integer-keyed maps on one line, their '}' on the next;
    persist() writes exactly that."""
    com = filled(tmp_path)
    assert com.encode(True) == PRETTY
    com.persist()
    assert (tmp_path / "consumerOffset.json").read_text() == PRETTY


def test_encode_empty_table():
    """No offsets: {"offsetTable":{}} compact, the same object on three lines pretty."""
    com = ConsumerOffsetManager()
    assert com.encode() == '{"offsetTable":{}}'
    assert com.encode(True) == '{\n\t"offsetTable":{}\n}'


def test_load_round_trip(tmp_path):
    """persist() then load() in a new manager restores the table with int keys."""
    filled(tmp_path).persist()
    com = ConsumerOffsetManager(tmp_path)
    assert com.load()
    assert com.offset_table == filled().offset_table
    assert all(isinstance(q, int) for t in com.offset_table.values() for q in t)


def test_decode_accepts_java_and_quoted_forms():
    """decode reads a Java broker's file (unquoted keys) and a standard-JSON variant."""
    com = ConsumerOffsetManager()
    com.decode('{"offsetTable":{"T@g":{0:7,1:8}}}')
    assert com.offset_table == {"T@g": {0: 7, 1: 8}}
    com.decode('{"offsetTable":{"T@g":{"2":9}}}')
    assert com.offset_table == {"T@g": {2: 9}}


def test_bak_fallback_when_main_file_corrupt(tmp_path):
    """A corrupt consumerOffset.json is ignored and consumerOffset.json.bak (the previous
    persist) is loaded instead (ConfigManager#loadBak, docs/reference.md §7.4)."""
    com = ConsumerOffsetManager(tmp_path)
    com.commit_offset("h", "g", "T", 0, 10)
    com.persist()
    com.commit_offset("h", "g", "T", 0, 20)
    com.persist()
    assert (
        tmp_path / "consumerOffset.json.bak"
    ).read_text() == '{\n\t"offsetTable":{\n\t\t"T@g":{0:10\n\t\t}\n\t}\n}'
    (tmp_path / "consumerOffset.json").write_text('{"offsetTable":{"T@g":{0:')
    restored = ConsumerOffsetManager(tmp_path)
    assert restored.load()
    assert restored.query_offset("g", "T", 0) == 10


def test_bak_fallback_when_main_file_empty(tmp_path):
    """An empty main file also falls back to the .bak."""
    (tmp_path / "consumerOffset.json").write_text("")
    (tmp_path / "consumerOffset.json.bak").write_text('{"offsetTable":{"T@g":{3:33}}}')
    com = ConsumerOffsetManager(tmp_path)
    assert com.load()
    assert com.offset_table == {"T@g": {3: 33}}


def test_load_fails_when_both_files_corrupt(tmp_path):
    """Corrupt main and corrupt .bak: load() is False and the table stays empty."""
    (tmp_path / "consumerOffset.json").write_text("{")
    (tmp_path / "consumerOffset.json.bak").write_text("{")
    com = ConsumerOffsetManager(tmp_path)
    assert com.load() is False
    assert com.offset_table == {}


def test_missing_files_and_in_memory_manager(tmp_path):
    """No file yet → load() True with an empty table; config_dir None → persist/load do nothing."""
    assert ConsumerOffsetManager(tmp_path).load()
    com = filled(None)
    com.persist()
    assert com.load()
    assert list(tmp_path.iterdir()) == []


def test_which_topic_and_group_queries():
    """whichTopicByConsumer / whichGroupByTopic split "topic@group" keys; results sorted."""
    com = filled()
    com.commit_offset("h", "group2", "TopicTest", 0, 1)
    assert com.which_topic_by_consumer("group1") == ["%RETRY%group1", "TopicTest"]
    assert com.which_group_by_topic("TopicTest") == ["group1", "group2"]
    assert com.which_group_by_topic("Nope") == []


def test_clone_and_remove_offset():
    """cloneOffset copies one topic's offsets; removeOffset drops only exact-group keys."""
    com = filled()
    com.commit_offset("h", "group10", "TopicTest", 0, 1)
    com.clone_offset("group1", "group2", "TopicTest")
    assert com.offset_table["TopicTest@group2"] == com.offset_table["TopicTest@group1"]
    assert com.offset_table["TopicTest@group2"] is not com.offset_table["TopicTest@group1"]
    assert com.remove_offset("group1") == ["TopicTest@group1", "%RETRY%group1@group1"]
    assert sorted(com.offset_table) == ["TopicTest@group10", "TopicTest@group2"]


def test_scan_unsubscribed_topic():
    """scanUnsubscribedTopic drops (topic, group) with no subscription whose offsets are all
    ≤ the store's min offset; subscribed or still-ahead entries stay."""
    com = ConsumerOffsetManager()
    com.commit_offset("h", "g", "Old", 0, 5)
    com.commit_offset("h", "g", "Ahead", 0, 50)
    com.commit_offset("h", "g", "Subscribed", 0, 1)
    subscribed = {("g", "Subscribed")}
    removed = com.scan_unsubscribed_topic(
        lambda group, topic: object() if (group, topic) in subscribed else None,
        lambda topic, qid: 10,
    )
    assert removed == ["Old@g"]
    assert sorted(com.offset_table) == ["Ahead@g", "Subscribed@g"]
