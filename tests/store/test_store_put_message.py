"""DefaultMessageStore#putMessage / #putMessages: every PutMessageStatus the store can give.

docs/reference.md §10.6 steps 8–10, §4.1, §4.5; §11 (BatchPutMessageTest, SendMessageProcessorTest).
"""

from __future__ import annotations

import os
import struct

import pytest
from store_helpers import STORE_HOST, make_msg, put_many

from mqlab.common.message_decoder import MESSAGE_MAGIC_CODE, create_message_id, decodes
from mqlab.common.sysflag import MessageSysFlag
from mqlab.store import (
    BrokerRole,
    DefaultMessageStore,
    GetMessageStatus,
    MessageStoreConfig,
    PutMessageStatus,
)
from mqlab.store.commit_log import StoreRuntimeException


def test_put_ok_assigns_queue_offsets_per_queue_and_offset_msg_ids(new_store):
    """PUT_OK: queue offsets count per "topic-queueId" from 0; the msg id is store host +
    commit-log offset in hex: 127.0.0.1:10911 at 0 → 7F00000100002A9F0000000000000000."""
    store = new_store()
    r0 = store.put_message(make_msg(queue_id=0), 1000)
    r1 = store.put_message(make_msg(queue_id=1), 1001)
    r2 = store.put_message(make_msg(queue_id=0), 1002)
    assert [r.put_message_status for r in (r0, r1, r2)] == [PutMessageStatus.PUT_OK] * 3
    assert all(r.is_ok() for r in (r0, r1, r2))
    a0, a1, a2 = (r.append_message_result for r in (r0, r1, r2))
    assert [a.logics_offset for a in (a0, a1, a2)] == [0, 0, 1]
    assert [a.wrote_offset for a in (a0, a1, a2)] == [0, 123, 246]
    assert a0.wrote_bytes == 123  # 91 + 14 ("Hello RocketMQ") + 9 ("TopicTest") + 9 ("TAGS\1TagA")
    assert a0.msg_id == "7F00000100002A9F0000000000000000"
    assert a2.msg_id == create_message_id(STORE_HOST, 246)
    assert a2.store_timestamp == 1002
    assert store.commit_log.topic_queue_table == {"TopicTest-0": 2, "TopicTest-1": 1}


def test_service_not_available(new_store, tmp_path):
    """Not loaded, not writeable, SLAVE, or shut down → SERVICE_NOT_AVAILABLE (docs/reference.md §10.6
    step 8)."""
    unloaded = DefaultMessageStore(MessageStoreConfig(store_path_root_dir=str(tmp_path / "u")))
    assert unloaded.put_message(make_msg(), 1).put_message_status is (
        PutMessageStatus.SERVICE_NOT_AVAILABLE
    )
    store = new_store()
    store.writeable = False
    assert store.put_message(make_msg(), 1).put_message_status is (
        PutMessageStatus.SERVICE_NOT_AVAILABLE
    )
    store.writeable = True
    store.message_store_config.broker_role = BrokerRole.SLAVE
    r = store.put_message(make_msg(), 1)
    assert r.put_message_status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert r.append_message_result is None and not r.is_ok()
    store.message_store_config.broker_role = BrokerRole.ASYNC_MASTER
    store.shutdown()
    assert store.put_message(make_msg(), 1).put_message_status is (
        PutMessageStatus.SERVICE_NOT_AVAILABLE
    )


def test_os_pagecache_busy(new_store):
    """The injected page-cache-busy flag → OS_PAGECACHE_BUSY (docs/reference.md §10.6 step 8)."""
    store = new_store()
    store.os_page_cache_busy = True
    assert store.put_message(make_msg(), 1).put_message_status is PutMessageStatus.OS_PAGECACHE_BUSY


def test_message_illegal_topic_and_properties_length(new_store):
    """Topic of 128 chars or a properties string of 32,768 chars → MESSAGE_ILLEGAL; 127 chars
    is fine (DefaultMessageStore#checkMessage, docs/reference.md §10.6 step 8)."""
    store = new_store()
    assert store.put_message(make_msg(topic="T" * 128), 1).put_message_status is (
        PutMessageStatus.MESSAGE_ILLEGAL
    )
    assert store.put_message(make_msg(topic="T" * 127), 1).put_message_status is (
        PutMessageStatus.PUT_OK
    )
    msg = make_msg(tags=None, properties={"a": "x" * 32766})
    assert len(msg.properties_string) == 32768
    assert store.put_message(msg, 1).put_message_status is PutMessageStatus.MESSAGE_ILLEGAL


def test_properties_size_exceeded_counts_utf8_bytes(new_store):
    """11,002 chars but 33,002 UTF-8 bytes of properties → PROPERTIES_SIZE_EXCEEDED
    (CommitLog.MessageExtEncoder, docs/reference.md §10.6 step 8)."""
    store = new_store()
    msg = make_msg(tags=None, properties={"a": "中" * 11000})
    assert len(msg.properties_string) == 11002
    assert store.put_message(msg, 1).put_message_status is (
        PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
    )


def test_message_illegal_when_the_entry_exceeds_max_message_size(new_store):
    """An entry of exactly 4,194,304 bytes is stored; one byte more → MESSAGE_ILLEGAL."""
    store = new_store()
    overhead = 91 + 9 + 9
    ok = store.put_message(make_msg(body=b"b" * (4_194_304 - overhead)), 1)
    assert ok.put_message_status is PutMessageStatus.PUT_OK
    assert ok.append_message_result.wrote_bytes == 4_194_304
    bad = store.put_message(make_msg(body=b"b" * (4_194_304 - overhead + 1)), 1)
    assert bad.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL


def test_message_illegal_when_the_entry_cannot_fit_a_whole_commit_log_file(new_store):
    """mqlab addition for tiny segments: entry + 8 > file size → MESSAGE_ILLEGAL (a
    192-byte entry fits a 200-byte file, a 193-byte one never could)."""
    store = new_store(mapped_file_size_commit_log=200)
    ok = store.put_message(make_msg(body=b"b" * (192 - 109)), 1)
    assert ok.put_message_status is PutMessageStatus.PUT_OK
    bad = store.put_message(make_msg(body=b"b" * (193 - 109)), 1)
    assert bad.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL


def test_create_mapedfile_failed_when_the_file_cannot_be_created(new_store, tmp_path):
    """OSError creating the commit-log file → CREATE_MAPEDFILE_FAILED; once the obstacle is
    gone the next put succeeds (docs/reference.md §10.6 step 10)."""
    store = new_store()
    first = tmp_path / "store" / "commitlog" / "00000000000000000000"
    os.makedirs(first)
    r = store.put_message(make_msg(), 1)
    assert r.put_message_status is PutMessageStatus.CREATE_MAPEDFILE_FAILED
    os.rmdir(first)
    assert store.put_message(make_msg(), 1).put_message_status is PutMessageStatus.PUT_OK


def test_flush_disk_timeout_with_sync_flush_still_stores(new_store, tmp_path):
    """SYNC_FLUSH with an injected flush delay above syncFlushTimeout (5000) →
    FLUSH_DISK_TIMEOUT, but the message is stored and flushed (is_ok)."""
    store = new_store(flush_disk_type="SYNC_FLUSH")
    mfq = store.commit_log.mapped_file_queue
    assert store.put_message(make_msg(), 1).put_message_status is PutMessageStatus.PUT_OK
    assert mfq.flushed_where == 123  # SYNC_FLUSH: forced to disk before answering
    store.fault_flush_delay_ms = 5000
    assert store.put_message(make_msg(), 2).put_message_status is PutMessageStatus.PUT_OK
    store.fault_flush_delay_ms = 5001
    r = store.put_message(make_msg(), 3)
    assert r.put_message_status is PutMessageStatus.FLUSH_DISK_TIMEOUT
    assert r.is_ok()
    assert mfq.flushed_where == 3 * 123
    no_wait = store.put_message(make_msg(properties={"WAIT": "false"}), 4)
    assert no_wait.put_message_status is PutMessageStatus.PUT_OK
    store.do_reput()
    assert store.get_max_offset_in_queue("TopicTest", 0) == 4


def test_async_flush_writes_the_page_cache_now_and_forces_later(new_store, tmp_path):
    """ASYNC_FLUSH: a put is in the file's pages (the OS page cache) at once — another
    reader of the file sees it — but forced to disk only by flush() (below 4 dirty pages)."""
    store = new_store()
    path = tmp_path / "store" / "commitlog" / "00000000000000000000"
    store.put_message(make_msg(), 1)
    assert os.path.getsize(path) == 16 * 1024 * 1024  # preallocated (sparse)
    with open(path, "rb") as f:
        assert struct.unpack(">ii", f.read(8)) == (123, MESSAGE_MAGIC_CODE)
    mfq = store.commit_log.mapped_file_queue
    assert (mfq.get_max_offset(), mfq.flushed_where) == (123, 0)
    assert store.flush() == 123
    assert mfq.mapped_files[0].flushed_position == 123


def test_slave_not_available_on_sync_master_without_a_slave(new_store):
    """SYNC_MASTER with no HA connection: SLAVE_NOT_AVAILABLE, the message stored;
    WAIT=false skips the wait (docs/reference.md §10.6 step 10; the waits themselves:
    tests/store/ha)."""
    store = new_store(broker_role="SYNC_MASTER")
    r = store.put_message(make_msg(), 1)
    assert r.put_message_status is PutMessageStatus.SLAVE_NOT_AVAILABLE
    assert r.is_ok() and r.replica_request is None
    r = store.put_message(make_msg(properties={"WAIT": "false"}), 1)
    assert r.put_message_status is PutMessageStatus.PUT_OK
    store.do_reput()
    assert store.get_max_offset_in_queue("TopicTest", 0) == 2


def test_replication_status_wins_over_flush_status(new_store):
    """SYNC_FLUSH + SYNC_MASTER, both failing: the replica status is applied last."""
    store = new_store(broker_role="SYNC_MASTER", flush_disk_type="SYNC_FLUSH")
    store.fault_flush_delay_ms = 6000
    r = store.put_message(make_msg(), 1)
    assert r.put_message_status is PutMessageStatus.SLAVE_NOT_AVAILABLE


def test_prepared_message_gets_queue_offset_zero_and_no_unit(new_store):
    """PREPARED: QUEUEOFFSET 0, the queue counter does not move, no consume-queue unit
    (docs/reference.md §6, §10.6 step 9)."""
    store = new_store()
    put_many(store, 2)
    r = store.put_message(make_msg(sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE), 5)
    assert r.put_message_status is PutMessageStatus.PUT_OK
    assert r.append_message_result.logics_offset == 0
    assert store.commit_log.topic_queue_table["TopicTest-0"] == 2
    r = store.put_message(make_msg(body=b"after"), 6)
    assert r.append_message_result.logics_offset == 2
    assert store.do_reput() == 2
    assert store.get_max_offset_in_queue("TopicTest", 0) == 3
    g = store.get_message("g", "TopicTest", 0, 2, 32, None)
    assert [m.body for m in decodes(g.body())] == [b"after"]


NFE_SOON = (
    'java.lang.NumberFormatException: For input string: "soon", '
    "java.lang.NumberFormatException.forInputString(NumberFormatException.java:65)"
)


def test_unparsable_delay_level_throws_number_format(new_store):
    """DELAY that is not an int: Message#getDelayTimeLevel's Integer.parseInt throws and
    nothing in the store or the processor catches it; the remoting layer answers
    SYSTEM_ERROR with exceptionSimpleDesc (JDK 8's frame). The real 4.9.3 broker does
    exactly that (found by the conformance harness); mqlab used to say MESSAGE_ILLEGAL."""
    store = new_store()
    with pytest.raises(StoreRuntimeException) as e:
        store.put_message(make_msg(properties={"DELAY": "soon"}), 1)
    assert str(e.value) == NFE_SOON
    with pytest.raises(StoreRuntimeException, match='For input string: " 3"'):
        store.put_message(make_msg(properties={"DELAY": " 3"}), 1)  # parseInt takes no blanks
    with pytest.raises(StoreRuntimeException) as e:
        store.put_messages([make_msg()], 1, batch_properties={"DELAY": "soon"})
    assert str(e.value) == NFE_SOON
    assert store.put_message(make_msg(properties={"DELAY": "+0"}), 1).put_message_status is (
        PutMessageStatus.PUT_OK
    )


def test_batch_put_assigns_consecutive_queue_offsets(new_store):
    """BatchPutMessageTest: a batch of 5 after one single message gets queue offsets 1..5
    and a comma-joined msg id of 5 offset ids (docs/reference.md §10.6 "Batch")."""
    store = new_store()
    store.put_message(make_msg(body=b"single"), 1)
    batch = [make_msg(body=b"b%d" % i) for i in range(5)]
    r = store.put_messages(batch, 2)
    amr = r.append_message_result
    assert r.put_message_status is PutMessageStatus.PUT_OK
    assert (amr.logics_offset, amr.msg_num, amr.wrote_offset) == (1, 5, 115)
    assert [m.queue_offset for m in batch] == [1, 2, 3, 4, 5]
    ids = amr.msg_id.split(",")
    assert ids == [create_message_id(STORE_HOST, m.commit_log_offset) for m in batch]
    store.do_reput()
    g = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert g.status is GetMessageStatus.FOUND
    assert [m.body for m in decodes(g.body())] == [b"single", b"b0", b"b1", b"b2", b"b3", b"b4"]
    assert [m.queue_offset for m in decodes(g.body())] == [0, 1, 2, 3, 4, 5]


def test_batch_rejects_delay_transactions_and_mixed_queues(new_store):
    """CommitLog#asyncPutMessages: the batch's own DELAY > 0 or a transaction type →
    MESSAGE_ILLEGAL (DELAY 0 is fine); mixing queues is API misuse (ValueError)."""
    store = new_store()
    r = store.put_messages([make_msg()], 1, batch_properties={"DELAY": "2"})
    assert r.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL
    r = store.put_messages([make_msg()], 1, batch_properties={"DELAY": "0"})
    assert r.put_message_status is PutMessageStatus.PUT_OK
    prepared = make_msg(sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE)
    assert store.put_messages([prepared], 1).put_message_status is (
        PutMessageStatus.MESSAGE_ILLEGAL
    )
    with pytest.raises(ValueError, match="one topic and queue id"):
        store.put_messages([make_msg(queue_id=0), make_msg(queue_id=1)], 1)
    # no messages = a batch whose body is null: checkMessages' NullPointerException
    with pytest.raises(StoreRuntimeException, match="checkMessages"):
        store.put_messages([], 1)


def test_batch_delay_inside_one_message_is_a_plain_property(new_store):
    """Java reads messageExtBatch.getDelayTimeLevel() (CommitLog.java:749), the batch's own
    map: a DELAY inside one message is stored as is, in the batch's queue, not parked."""
    store = new_store()
    r = store.put_messages([make_msg(), make_msg(properties={"DELAY": "2"})], 1)
    assert r.put_message_status is PutMessageStatus.PUT_OK
    store.do_reput()
    assert store.get_max_offset_in_queue("TopicTest", 0) == 2
    assert store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 1) == 0
    g = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert [m.properties for m in decodes(g.body())] == [
        {"TAGS": "TagA"}, {"TAGS": "TagA", "DELAY": "2"}]  # fmt: skip


def test_batch_wait_is_the_batchs_own(new_store):
    """SYNC_FLUSH with a flush slower than syncFlushTimeout: the batch waits unless its own
    WAIT is false (messageExtBatch.isWaitStoreMsgOK(), CommitLog.java:834); a message's
    WAIT=false does not change that."""
    store = new_store(flush_disk_type="SYNC_FLUSH")
    store.fault_flush_delay_ms = 5001
    r = store.put_messages([make_msg(properties={"WAIT": "false"})], 1)
    assert r.put_message_status is PutMessageStatus.FLUSH_DISK_TIMEOUT
    r = store.put_messages([make_msg()], 2, batch_properties={"WAIT": "false"})
    assert r.put_message_status is PutMessageStatus.PUT_OK


def test_batch_larger_than_max_message_size_is_illegal(new_store):
    """checkMessages: the client's batch body over max_message_size (4 MiB) → MESSAGE_ILLEGAL;
    without ``body_length`` it is 22 + body + properties per message."""
    store = new_store()
    msgs = [make_msg(body=b"b" * 1_500_000) for _ in range(3)]
    assert store.put_messages(msgs, 1).put_message_status is PutMessageStatus.MESSAGE_ILLEGAL
    r = store.put_messages([make_msg()], 1, body_length=4 * 1024 * 1024 + 1)
    assert r.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL


def test_batch_encoder_throws_message_size_exceeded(new_store):
    """A body within max_message_size whose stored entries are not: Java's batch encoder
    throws RuntimeException("message size exceeded") (CommitLog.java:1649 for one entry,
    1655 for the running total); the message carries exceptionSimpleDesc's text."""
    store = new_store(max_message_size=1000)
    three = [make_msg(tags=None, body=b"x" * 250) for _ in range(3)]  # body 3 × 272 = 816
    with pytest.raises(StoreRuntimeException) as e:
        store.put_messages(three, 1)
    assert str(e.value) == (
        "java.lang.RuntimeException: message size exceeded, "
        "org.apache.rocketmq.store.CommitLog$MessageExtEncoder.encode(CommitLog.java:1655)"
    )
    with pytest.raises(StoreRuntimeException, match=r"CommitLog\.java:1649\)$"):
        store.put_messages([make_msg(tags=None, body=b"x" * 950)], 1, body_length=972)
    assert store.get_max_phy_offset() == 0


def test_store_host_defaults_to_the_stores_address(new_store):
    """A message whose store host is the model default 127.0.0.1:0 gets the store's."""
    store = new_store()
    msg = make_msg()
    msg.store_host = "127.0.0.1:0"
    r = store.put_message(msg, 1)
    assert r.append_message_result.msg_id == "7F00000100002A9F0000000000000000"


def test_lengths_are_counted_like_java_strings(new_store):
    """checkMessage counts UTF-16 units (an emoji is 2), the encoder counts UTF-8 bytes
    (an emoji is 4): 8,200 emoji → PROPERTIES_SIZE_EXCEEDED; 16,400 → MESSAGE_ILLEGAL."""
    store = new_store()
    r = store.put_message(make_msg(tags=None, properties={"a": "\U0001f600" * 8200}), 1)
    assert r.put_message_status is PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
    r = store.put_message(make_msg(tags=None, properties={"a": "\U0001f600" * 16400}), 1)
    assert r.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL


def test_load_twice_is_api_misuse(new_store):
    """A store object loads once; a restart builds a new object on the same directory."""
    store = new_store()
    with pytest.raises(ValueError, match="load"):
        store.load()


def test_put_message_failed_times_counts_only_puts_that_reached_the_commit_log(new_store):
    """StoreStatsService#putMessageFailedTimes: asyncPutMessage returns checkStoreStatus and
    checkMessage refusals before the thenAccept that counts failures; a MESSAGE_ILLEGAL from
    the commit log's size check counts (the real 4.9.3 broker counted 1 where mqlab had 4)."""
    store = new_store()
    stats = store.store_stats_service
    assert store.put_message(make_msg(topic="T" * 128), 1).put_message_status is (
        PutMessageStatus.MESSAGE_ILLEGAL
    )
    store.os_page_cache_busy = True
    store.put_message(make_msg(), 1)
    store.os_page_cache_busy = False
    assert stats.put_message_failed_times == 0
    bad = store.put_message(make_msg(body=b"b" * 4_194_304), 1)
    assert bad.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL
    assert stats.put_message_failed_times == 1
