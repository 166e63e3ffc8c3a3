"""ConsumeQueue: 20-byte units, file names, offsets, time search, idempotent rebuild.

docs/reference.md §6 (unit layout, tags codes, paths, min/max offsets, getOffsetInQueueByTime), §10.3
(reput), §11 (ConsumeQueueTest, DefaultMessageStoreTest).
"""

from __future__ import annotations

import struct

from store_helpers import RecordingTracer, make_msg, put_many

from mqlab.store import BrokerRole
from mqlab.store.consume_queue import ConsumeQueue


def test_unit_bytes_and_tags_codes(new_store, tmp_path):
    """A unit is commit-log offset (int64), size (int32), tags code (int64), big-endian,
    in consumequeue/TopicTest/0/00000000000000000000; TagA 2598919, TagB 2598920,
    no TAGS → 0 (docs/reference.md §6)."""
    store = new_store()
    for tags in ("TagA", "TagB", None):
        store.put_message(make_msg(tags=tags), 1)
    store.do_reput()
    store.flush()
    path = tmp_path / "store" / "consumequeue" / "TopicTest" / "0" / "00000000000000000000"
    raw = path.read_bytes()
    assert len(raw) == 6_000_000  # created at mappedFileSizeConsumeQueue (sparse)
    assert raw[60:] == bytes(6_000_000 - 60)
    units = [struct.unpack(">qiq", raw[i : i + 20]) for i in range(0, 60, 20)]
    assert units == [(0, 123, 2598919), (123, 123, 2598920), (246, 114, 0)]
    assert list(store.iter_consume_queue_units("TopicTest", 0)) == [
        (0, 0, 123, 2598919),
        (1, 123, 123, 2598920),
        (2, 246, 114, 0),
    ]


def test_consume_queue_files_roll_over_by_unit_count(new_store, tmp_path):
    """4-unit files: 10 units → files 0, 80, 160 (20-digit byte offsets); max offset 10."""
    store = new_store(mapped_file_size_consume_queue=80)
    put_many(store, 10)
    store.flush()
    qdir = tmp_path / "store" / "consumequeue" / "TopicTest" / "0"
    assert sorted(p.name for p in qdir.iterdir()) == [
        "00000000000000000000",
        "00000000000000000080",
        "00000000000000000160",
    ]
    assert [p.stat().st_size for p in sorted(qdir.iterdir())] == [80, 80, 80]
    cq = store.find_consume_queue("TopicTest", 0)
    assert [mf.wrote_position for mf in cq.mapped_file_queue.mapped_files] == [80, 80, 40]
    assert store.get_max_offset_in_queue("TopicTest", 0) == 10
    assert store.get_min_offset_in_queue("TopicTest", 0) == 0


def test_consume_queue_file_size_is_rounded_up_to_whole_units(new_store):
    """mappedFileSizeConsumeQueue 50 is read as 60 (3 units) (docs/reference.md §6)."""
    store = new_store(mapped_file_size_consume_queue=50)
    assert store.message_store_config.get_mapped_file_size_consume_queue() == 60
    put_many(store, 4)
    cq = store.find_consume_queue("TopicTest", 0)
    assert [mf.file_from_offset for mf in cq.mapped_file_queue.mapped_files] == [0, 60]


def test_unknown_queue_behaves_as_empty(new_store):
    """A queue that does not exist: min = max = 0, store time −1, by-time 0, commit-log
    offset 0 (docs/reference.md §6, DefaultMessageStoreTest)."""
    store = new_store()
    put_many(store, 3)
    assert store.get_max_offset_in_queue("NoSuchTopic", 3) == 0
    assert store.get_min_offset_in_queue("NoSuchTopic", 3) == 0
    assert store.get_earliest_message_time("NoSuchTopic", 3) == -1
    assert store.get_message_store_timestamp("NoSuchTopic", 3, 0) == -1
    assert store.get_offset_in_queue_by_time("NoSuchTopic", 3, 1000) == 0
    assert store.get_commit_log_offset_in_queue("NoSuchTopic", 3, 0) == 0


def test_lookups_by_consume_queue_offset(new_store):
    """Store time and commit-log offset of a unit; earliest message time of the queue."""
    store = new_store()
    put_many(store, 3, start_ms=5000, step_ms=10)
    assert store.get_message_store_timestamp("TopicTest", 0, 2) == 5020
    assert store.get_earliest_message_time("TopicTest", 0) == 5000
    assert store.get_commit_log_offset_in_queue("TopicTest", 0, 1) == 114
    assert store.get_message_store_timestamp("TopicTest", 0, 3) == -1


def test_get_offset_in_queue_by_time(new_store):
    """Binary search by store time: exact → that unit; between → the nearer (tie → the
    lower); all below → max − 1; all above → 0 (docs/reference.md §6, ConsumeQueue#getOffsetInQueueByTime)."""
    store = new_store()
    put_many(store, 10, start_ms=1000, step_ms=1000)  # store times 1000, 2000, …, 10000
    by_time = store.get_offset_in_queue_by_time
    assert by_time("TopicTest", 0, 3000) == 2
    assert by_time("TopicTest", 0, 3400) == 2
    assert by_time("TopicTest", 0, 3600) == 3
    assert by_time("TopicTest", 0, 3500) == 2
    assert by_time("TopicTest", 0, 99_999) == 9
    assert by_time("TopicTest", 0, 1) == 0


def test_get_offset_in_queue_by_time_picks_the_file_by_last_write(new_store):
    """With several CQ files the search runs in the first file last written at or after
    the time: 4-unit files, time 6000 → file 80, offset 5."""
    store = new_store(mapped_file_size_consume_queue=80)
    put_many(store, 10, start_ms=1000, step_ms=1000)
    assert store.get_offset_in_queue_by_time("TopicTest", 0, 6000) == 5
    assert store.get_offset_in_queue_by_time("TopicTest", 0, 9500) == 8


def test_get_offset_in_queue_by_time_with_every_unit_below_the_commit_log_min(tmp_path):
    """Every unit points below the commit log's min offset: no store time is read, the
    offset stays -1, and Java's truncating (fileFromOffset - 1) / 20 answers 0 in the first
    file (Python's floor division gave -1) and the previous file's last unit in a later one."""
    cq = ConsumeQueue("TopicTest", 0, str(tmp_path / "cq"), 60)
    for i in range(6):  # two files of 3 units
        assert cq.put_message_position_info(1000 + 100 * i, 100, 0, i, 5000 + i)
    first, later = cq.mapped_file_queue.mapped_files
    first.last_modified_ms, later.last_modified_ms = 100, 200

    def never(phy: int, size: int) -> int:
        raise AssertionError("no store time is read below the commit log's min")

    assert cq.get_offset_in_queue_by_time(50, never, 10_000) == 0
    assert cq.get_offset_in_queue_by_time(150, never, 10_000) == 2


def test_rebuilding_a_consume_queue_is_idempotent(new_store):
    """ConsumeQueueTest: dispatching the same entries again changes nothing (units at or
    below maxPhysicOffset are skipped)."""
    store = new_store()
    put_many(store, 5)
    before = list(store.iter_consume_queue_units("TopicTest", 0))
    store.reput_from_offset = 0
    assert store.do_reput() == 5
    assert list(store.iter_consume_queue_units("TopicTest", 0)) == before


def test_reput_calls_the_arriving_listener_unless_slave(new_store):
    """ReputMessageService calls arriving(topic, queueId, queueOffset + 1, tagsCode,
    storeTime, bitMap, properties) for every dispatched entry, except on a SLAVE
    (docs/reference.md §10.3)."""
    calls = []
    store = new_store(arriving_listener=lambda *a: calls.append(a))
    store.put_message(make_msg(queue_id=2, properties={"KEYS": "k"}), 1234)
    assert store.dispatch_behind_bytes() == 130
    assert store.do_reput() == 1
    assert store.dispatch_behind_bytes() == 0
    assert calls == [("TopicTest", 2, 1, 2598919, 1234, None, {"TAGS": "TagA", "KEYS": "k"})]
    store.put_message(make_msg(), 1)
    store.message_store_config.broker_role = BrokerRole.SLAVE
    assert store.do_reput() == 1
    assert len(calls) == 1
    store.message_store_config.broker_role = BrokerRole.ASYNC_MASTER


def test_reput_traces_each_dispatch(new_store):
    """One "ReputMessageService.doReput" dispatch event per entry."""
    tracer = RecordingTracer()
    store = new_store(tracer=tracer)
    put_many(store, 2)
    events = tracer.of("ReputMessageService.doReput")
    assert [(e["queue_offset"], e["commit_log_offset"]) for e in events] == [(0, 0), (1, 114)]


def test_consume_queue_first_file_for_a_later_offset_is_pre_filled(tmp_path):
    """A queue whose first file starts above offset 0 gets blank units up to it and its
    min offset there (ConsumeQueue#fillPreBlank)."""
    cq = ConsumeQueue("T", 0, str(tmp_path), 80)
    assert cq.put_message_position_info(1000, 100, 7, 5, 1)
    assert cq.get_min_offset_in_queue() == 5
    assert cq.get_max_offset_in_queue() == 6
    assert cq.get_unit(4) is None
    assert cq.get_unit(5) == (1000, 100, 7)
    first = cq.mapped_file_queue.mapped_files[0]
    assert first.file_from_offset == 80
    assert struct.unpack(">qiq", first.mm[0:20]) == (0, 0x7FFFFFFF, 0)


def test_clean_unused_topic_destroys_queues_of_unlisted_topics(new_store, tmp_path):
    """DefaultMessageStore#cleanUnusedTopic: queues of topics not listed are destroyed
    (files gone, topicQueueTable entry removed → next offset 0); SCHEDULE_TOPIC_XXXX and
    %LMQ% topics stay; the commit log keeps its entries."""
    store = new_store()
    for topic in ("Keep", "Gone", "%LMQ%x"):
        store.put_message(make_msg(topic=topic), 1)
    store.put_message(make_msg(properties={"DELAY": "1"}), 2)
    store.do_reput()
    store.flush()
    cq_dir = tmp_path / "store" / "consumequeue"
    assert sorted(p.name for p in cq_dir.iterdir()) == [
        "%LMQ%x", "Gone", "Keep", "SCHEDULE_TOPIC_XXXX"]  # fmt: skip
    assert store.clean_unused_topic(["Keep"]) == 0
    assert sorted(store.consume_queue_table) == ["%LMQ%x", "Keep", "SCHEDULE_TOPIC_XXXX"]
    assert list((cq_dir / "Gone" / "0").iterdir()) == []
    assert "Gone-0" not in store.commit_log.topic_queue_table
    assert store.put_message(make_msg(topic="Gone"), 3).append_message_result.logics_offset == 0
    assert store.put_message(make_msg(topic="Keep"), 4).append_message_result.logics_offset == 1
    assert len(list(store.iter_commit_log_entries())) == 6
