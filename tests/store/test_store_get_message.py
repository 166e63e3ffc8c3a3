"""DefaultMessageStore#getMessage, status by status, with nextBeginOffset.

mechanisms.md "DefaultMessageStore#getMessage" (``DefaultMessageStore#getMessage``), mechanisms.md "Pull processing" step 9; docs/reference.md §10.1, §11
(DefaultMessageStoreTest.testPullSize).
"""

from __future__ import annotations

import os

from store_helpers import (
    RecordingTracer,
    RejectAll,
    RejectByCommitLog,
    TagCodeFilter,
    entry_size,
    make_msg,
    put_many,
)

from mqlab.common.message_decoder import decodes
from mqlab.store import BrokerRole, GetMessageStatus

H = 72 * 60 * 60 * 1000  # file_reserved_time 72 h in ms

# 32-byte bodies: every entry is 91 + 32 + 9 ("TopicTest") + 9 ("TAGS\1TagA") = 141 bytes.
BODY = b"x" * 32
ENTRY = 141
# Four entries per commit-log file (4 × 141 + the 8 bytes always kept for the blank
# marker) and four units per consume-queue file.
SMALL = {
    "mapped_file_size_commit_log": 4 * ENTRY + 8,
    "mapped_file_size_consume_queue": 4 * 20,
}


def test_entry_size_of_the_fixture_message():
    """A 32-byte body in TopicTest with TAGS=TagA is stored in 141 bytes (docs/reference.md §4.1)."""
    assert entry_size(make_msg(body=BODY)) == ENTRY


def test_no_message_in_queue_on_an_empty_queue(new_store):
    """max == 0 → NO_MESSAGE_IN_QUEUE, next = correct(offset, 0) = 0 (docs/reference.md §10.1 step 3)."""
    store = new_store()
    for offset in (0, 5):
        r = store.get_message("g", "TopicTest", 0, offset, 32, None)
        assert r.status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
        assert (r.next_begin_offset, r.min_offset, r.max_offset) == (0, 0, 0)
        assert r.message_buffers == []


def test_unknown_topic_is_an_empty_queue_not_no_matched_logic_queue(new_store):
    """findConsumeQueue creates missing queues, so an unknown topic answers
    NO_MESSAGE_IN_QUEUE (next 0), never NO_MATCHED_LOGIC_QUEUE (docs/reference.md §6, §10.1)."""
    store = new_store()
    r = store.get_message("g", "NoSuchTopic", 7, 3, 32, None)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0)
    assert 7 in store.consume_queue_table["NoSuchTopic"]


def test_found_returns_stored_entries_and_next_begin_offset(new_store):
    """FOUND: 4 of 10 messages from offset 3; next = 3 + 4 = 7, min 0, max 10 (mechanisms.md "DefaultMessageStore#getMessage")."""
    store = new_store()
    put_many(store, 10)
    r = store.get_message("g", "TopicTest", 0, 3, 4, None)
    assert r.status is GetMessageStatus.FOUND
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (7, 0, 10)
    assert r.message_queue_offsets == [3, 4, 5, 6]
    assert r.message_count == 4
    msgs = decodes(r.body())
    assert [m.body for m in msgs] == [b"msg-3", b"msg-4", b"msg-5", b"msg-6"]
    assert [m.queue_offset for m in msgs] == [3, 4, 5, 6]
    assert r.buffer_total_size == sum(m.store_size for m in msgs)


def test_offset_overflow_one_keeps_the_offset(new_store):
    """offset == max → OFFSET_OVERFLOW_ONE, next = offset (docs/reference.md §10.1 step 3)."""
    store = new_store()
    put_many(store, 10)
    r = store.get_message("g", "TopicTest", 0, 10, 32, None)
    assert r.status is GetMessageStatus.OFFSET_OVERFLOW_ONE
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (10, 0, 10)


def test_offset_overflow_badly_with_min_zero_goes_back_to_zero(new_store):
    """offset > max with min 0 → OFFSET_OVERFLOW_BADLY, next = 0, not max (docs/reference.md §10.1)."""
    store = new_store()
    put_many(store, 10)
    r = store.get_message("g", "TopicTest", 0, 15, 32, None)
    assert r.status is GetMessageStatus.OFFSET_OVERFLOW_BADLY
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (0, 0, 10)


def test_message_was_removing_then_offset_too_small_after_expiry(new_store):
    """Commit-log files deleted, consume queue not yet cleaned → MESSAGE_WAS_REMOVING with
    next = offset + units of that CQ file; after CleanConsumeQueueService min = 8 →
    OFFSET_TOO_SMALL next = 8 and OFFSET_OVERFLOW_BADLY next = max (docs/reference.md §10.1)."""
    store = new_store(**SMALL)
    put_many(store, 12, body=BODY)
    assert [f[1] for f in store.commit_log_files()] == [0, 572, 1144]
    # CleanCommitLogService: files 0 and 572 are 72 h old; the last file is never deleted.
    assert store.delete_expired_commit_log_files(1000 + H) == 2
    assert store.get_min_phy_offset() == 1144
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.status is GetMessageStatus.MESSAGE_WAS_REMOVING
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (4, 0, 12)
    r = store.get_message("g", "TopicTest", 0, 4, 32, None)
    assert r.status is GetMessageStatus.MESSAGE_WAS_REMOVING
    assert r.next_begin_offset == 8
    r = store.get_message("g", "TopicTest", 0, 8, 32, None)
    assert r.status is GetMessageStatus.FOUND
    assert (r.next_begin_offset, r.message_count) == (12, 4)
    # CleanConsumeQueueService: CQ files whose last unit points below 1144 go away.
    assert store.delete_expired_consume_queue_files() == 2
    assert store.get_min_offset_in_queue("TopicTest", 0) == 8
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.status is GetMessageStatus.OFFSET_TOO_SMALL
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (8, 8, 12)
    r = store.get_message("g", "TopicTest", 0, 20, 32, None)
    assert r.status is GetMessageStatus.OFFSET_OVERFLOW_BADLY
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (12, 8, 12)
    assert store.get_earliest_message_time("TopicTest", 0) == 1000


def test_offset_found_null_when_a_consume_queue_file_is_missing(new_store, tmp_path):
    """No CQ file holds the offset → OFFSET_FOUND_NULL, next = first offset of the next
    CQ file (ConsumeQueue#rollNextFile: 5 + 4 − 5 % 4 = 8) (docs/reference.md §10.1 step 4)."""
    store = new_store(mapped_file_size_consume_queue=4 * 20)
    put_many(store, 12)
    store.shutdown()
    os.remove(tmp_path / "store" / "consumequeue" / "TopicTest" / "0" / "00000000000000000080")
    store = new_store(mapped_file_size_consume_queue=4 * 20)
    r = store.get_message("g", "TopicTest", 0, 5, 32, None)
    assert r.status is GetMessageStatus.OFFSET_FOUND_NULL
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (8, 0, 12)


def test_no_matched_message_when_the_filter_rejects_everything(new_store):
    """All units filtered → NO_MATCHED_MESSAGE, next = offset + units examined (2 + 8)."""
    store = new_store()
    put_many(store, 10)
    r = store.get_message("g", "TopicTest", 0, 2, 32, RejectAll())
    assert r.status is GetMessageStatus.NO_MATCHED_MESSAGE
    assert (r.next_begin_offset, r.message_count) == (10, 0)
    r = store.get_message("g", "TopicTest", 0, 2, 32, RejectByCommitLog())
    assert r.status is GetMessageStatus.NO_MATCHED_MESSAGE
    assert r.next_begin_offset == 10


def test_filter_scan_stops_after_16000_bytes_of_units(new_store):
    """At most max(16000, maxMsgNums × 20) bytes of units are examined: 800 units with
    maxMsgNums 32, all 1000 with maxMsgNums 1000 (docs/reference.md §10.1 step 4)."""
    store = new_store()
    put_many(store, 1000)
    r = store.get_message("g", "TopicTest", 0, 0, 32, RejectAll())
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MATCHED_MESSAGE, 800)
    r = store.get_message("g", "TopicTest", 0, 0, 1000, RejectAll())
    assert r.next_begin_offset == 1000


def test_tag_filter_skips_units_and_counts_them_in_next_offset(new_store):
    """TagB (code 2598920) matches offsets 1, 3, 5; the unit after the third match stops
    the batch, so next = 6 (docs/reference.md §6 tags code, §10.1 steps 4d–4h)."""
    store = new_store()
    for i in range(10):
        store.put_message(make_msg(body=b"m%d" % i, tags="TagA" if i % 2 == 0 else "TagB"), 1)
    store.do_reput()
    r = store.get_message("g", "TopicTest", 0, 0, 3, TagCodeFilter(2598920))
    assert r.status is GetMessageStatus.FOUND
    assert r.message_queue_offsets == [1, 3, 5]
    assert r.next_begin_offset == 6


def test_pull_size(new_store):
    """DefaultMessageStoreTest.testPullSize: 32 messages, maxMsgNums 32 / 20 / 10 →
    32 / 20 / 10 buffers (docs/reference.md §11)."""
    store = new_store()
    put_many(store, 32)
    for max_nums in (32, 20, 10):
        r = store.get_message("g", "TopicTest", 0, 0, max_nums, None)
        assert len(r.message_buffers) == max_nums
        assert r.next_begin_offset == max_nums


def test_batch_stops_at_32_messages_in_memory(new_store):
    """maxTransferCountOnMessageInMemory: 32 messages even if 100 are asked for."""
    store = new_store()
    put_many(store, 40)
    r = store.get_message("g", "TopicTest", 0, 0, 100, None)
    assert (r.message_count, r.next_begin_offset) == (32, 32)


def test_batch_stops_at_256_kib_in_memory(new_store):
    """maxTransferBytesOnMessageInMemory 262,144: two 100,109-byte entries fit, a third
    would not (docs/reference.md §10.1 isTheBatchFull)."""
    store = new_store()
    put_many(store, 3, body=b"b" * 100_000)
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.buffer_total_size == 2 * 100_109
    assert (r.message_count, r.next_begin_offset) == (2, 2)


def test_first_message_is_returned_even_if_larger_than_the_byte_limit(new_store):
    """isTheBatchFull is false while nothing is taken: a 300,109-byte entry comes back
    alone, next = offset + 1 (docs/reference.md §10.1)."""
    store = new_store()
    put_many(store, 2, body=b"b" * 300_000)
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.status is GetMessageStatus.FOUND
    assert (r.message_count, r.buffer_total_size, r.next_begin_offset) == (1, 300_109, 1)


def test_in_disk_limits_with_the_physical_memory_knob(new_store):
    """With total_physical_memory_size 1000 (40 % = 400 bytes) old entries are "on disk":
    8 messages per batch and suggestPullingFromSlave (docs/reference.md §10.1 steps 4c, 4)."""
    store = new_store(total_physical_memory_size=1000)
    put_many(store, 20, body=BODY)
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert (r.message_count, r.next_begin_offset) == (8, 8)
    assert r.suggest_pulling_from_slave is True
    assert store.check_in_disk_by_consume_offset("TopicTest", 0, 0) is True
    assert store.check_in_disk_by_consume_offset("TopicTest", 0, 19) is False


def test_check_in_disk_is_false_by_default(new_store):
    """mqlab treats everything as in memory unless the knob is set (docs/reference.md §12)."""
    store = new_store()
    put_many(store, 3)
    assert store.check_in_disk_by_consume_offset("TopicTest", 0, 0) is False
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.suggest_pulling_from_slave is False


def test_is_the_batch_full_rules(new_store):
    """isTheBatchFull: first message always fits; then maxMsgNums, 256 KiB / 32 in
    memory, 64 KiB / 8 on disk (docs/reference.md §10.1)."""
    store = new_store()
    full = store.is_the_batch_full
    assert full(10**7, 1, 0, 0, False) is False
    assert full(100, 2, 100, 2, False) is True
    assert full(1, 100, 262_144, 1, False) is True
    assert full(1, 100, 262_143, 31, False) is False
    assert full(1, 100, 100, 32, False) is True
    assert full(1, 100, 65_536, 1, True) is True
    assert full(1, 100, 100, 8, True) is True
    assert full(1, 100, 100, 7, True) is False


def test_slave_keeps_the_requested_offset(new_store):
    """nextOffsetCorrection on a SLAVE with offsetCheckInSlave false returns the old
    offset; with offsetCheckInSlave true it corrects (docs/reference.md §10.1)."""
    store = new_store()
    put_many(store, 10)
    cfg = store.message_store_config
    cfg.broker_role = BrokerRole.SLAVE
    r = store.get_message("g", "TopicTest", 0, 15, 32, None)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.OFFSET_OVERFLOW_BADLY, 15)
    r = store.get_message("g", "TopicTest", 1, 5, 32, None)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 5)
    cfg.offset_check_in_slave = True
    r = store.get_message("g", "TopicTest", 0, 15, 32, None)
    assert r.next_begin_offset == 0
    r = store.get_message("g", "TopicTest", 1, 5, 32, None)
    assert r.next_begin_offset == 0
    cfg.broker_role = BrokerRole.ASYNC_MASTER


def test_get_message_returns_none_when_shut_down_or_unreadable(new_store):
    """Shut down or not readable → None (broker: SYSTEM_ERROR "store getMessage return
    null", mechanisms.md "Pull processing" step 10)."""
    store = new_store()
    put_many(store, 1)
    store.readable = False
    assert store.get_message("g", "TopicTest", 0, 0, 32, None) is None
    store.readable = True
    store.shutdown()
    assert store.get_message("g", "TopicTest", 0, 0, 32, None) is None


def test_get_message_never_crosses_a_consume_queue_file(new_store):
    """The scan reads to the end of the CQ file holding the offset only: from 3 with
    4-unit files → offsets 3 only, next 4 (docs/reference.md §10.1 step 4)."""
    store = new_store(mapped_file_size_consume_queue=4 * 20)
    put_many(store, 12)
    r = store.get_message("g", "TopicTest", 0, 3, 32, None)
    assert r.message_queue_offsets == [3]
    assert r.next_begin_offset == 4


def test_get_message_emits_one_trace_event_per_decision(new_store):
    """Tracing: one "DefaultMessageStore.getMessage" event with status / next / min / max;
    a disabled tracer records nothing (docs/design.md §3)."""
    tracer = RecordingTracer()
    store = new_store(tracer=tracer)
    put_many(store, 3)
    tracer.events.clear()
    store.get_message("g", "TopicTest", 0, 3, 32, None)
    store.get_message("g", "TopicTest", 0, 0, 32, None)
    events = tracer.of("DefaultMessageStore.getMessage")
    assert [(e["step"], e["status"], e["next_begin_offset"]) for e in events] == [
        ("3", "OFFSET_OVERFLOW_ONE", 3),
        ("4", "FOUND", 3),
    ]
    assert (events[1]["min_offset"], events[1]["max_offset"]) == (0, 3)
    tracer.enabled = False
    tracer.events.clear()
    store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert tracer.events == []
