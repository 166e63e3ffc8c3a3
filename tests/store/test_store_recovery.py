"""Recovery on load(): commit-log validation and truncation, consume-queue repair, reput.

docs/reference.md §4.1 ("Recovery/reput validates: magic, CRC (optional), and TOTALSIZE"), §6, §10.3;
§11 (DefaultMessageStoreTest: recover keeps max phy and CQ offsets).
"""

from __future__ import annotations

import os
import shutil

from store_helpers import STORE_HOST, RecordingTracer, make_msg, put_many

from mqlab.common.message_decoder import decodes
from mqlab.store import DefaultMessageStore, GetMessageStatus, MessageStoreConfig

ENTRY = 114  # "msg-<i>" bodies (i < 10) in TopicTest with TAGS=TagA


def _bodies(store, topic="TopicTest", queue_id=0):
    r = store.get_message("g", topic, queue_id, 0, 1000, None)
    if r.status is not GetMessageStatus.FOUND:
        return []
    return [m.body for m in decodes(r.body())]


def _commit_log_file(tmp_path, name="00000000000000000000"):
    return tmp_path / "store" / "commitlog" / name


def test_restart_keeps_every_message(new_store, tmp_path):
    """Shutdown + load: same max phy offset, queue offsets, topic_queue_table and bodies;
    the next put continues the queue (docs/reference.md §11 recover test)."""
    small = {"mapped_file_size_commit_log": 4 * ENTRY + 8}
    store = new_store(**small)
    for i in range(10):
        store.put_message(make_msg(queue_id=i % 2, body=b"msg-%d" % i), 1000 + i)
    store.do_reput()
    max_phy = store.get_max_phy_offset()
    assert len(store.commit_log_files()) == 3
    store.shutdown()
    assert not os.path.exists(tmp_path / "store" / "abort")
    again = new_store(**small)
    assert again.last_shutdown_normal is True
    assert os.path.exists(tmp_path / "store" / "abort")
    assert again.get_max_phy_offset() == max_phy
    assert again.commit_log.topic_queue_table == {"TopicTest-0": 5, "TopicTest-1": 5}
    assert _bodies(again, queue_id=0) == [b"msg-0", b"msg-2", b"msg-4", b"msg-6", b"msg-8"]
    assert _bodies(again, queue_id=1) == [b"msg-1", b"msg-3", b"msg-5", b"msg-7", b"msg-9"]
    r = again.put_message(make_msg(queue_id=1), 2000)
    assert r.append_message_result.logics_offset == 5


def test_torn_tail_is_cut_at_the_last_whole_entry(new_store, tmp_path):
    """Entry 4 torn inside the preallocated file (its bytes from 50 on are zeros): recovery
    keeps entries 0–3, zeroes the file from 456 on, drops the consume-queue unit of entry 4
    and traces both."""
    store = new_store()
    put_many(store, 5)
    store.shutdown()
    path = _commit_log_file(tmp_path)
    with open(path, "r+b") as f:
        f.seek(4 * ENTRY + 50)
        f.write(bytes(ENTRY - 50))
    tracer = RecordingTracer()
    again = new_store(tracer=tracer)
    assert again.get_max_phy_offset() == 4 * ENTRY
    with open(path, "rb") as f:
        f.seek(4 * ENTRY)
        assert f.read(ENTRY) == bytes(ENTRY)
    assert again.get_max_offset_in_queue("TopicTest", 0) == 4
    assert _bodies(again) == [b"msg-0", b"msg-1", b"msg-2", b"msg-3"]
    (cut,) = tracer.of("CommitLog.recoverNormally")
    # byte 49 of the entry is the last non-zero one kept (BORNHOST 127.0.0.1: 0x7f 00 00 01)
    assert (cut["process_offset"], cut["dropped_bytes"]) == (456, 52 - 3)
    assert cut["reason"] == "torn entry at 456: declares 114 bytes, only zeros from byte 49 on"
    (cq_cut,) = tracer.of("ConsumeQueue.truncateDirtyLogicFiles")
    assert (cq_cut["removed_units"], cq_cut["max_offset"]) == (1, 4)
    r = again.put_message(make_msg(), 5000)
    assert (r.append_message_result.logics_offset, r.append_message_result.wrote_offset) == (4, 456)


def test_flipped_crc_byte_in_the_last_entry_is_cut(new_store, tmp_path):
    """BODYCRC (bytes 8–11) of the last entry flipped: with checkCRCOnRecover (default)
    that entry is dropped, every earlier one stays (docs/reference.md §4.1, §8.2)."""
    store = new_store()
    put_many(store, 5)
    store.shutdown()
    path = _commit_log_file(tmp_path)
    data = bytearray(path.read_bytes())
    data[4 * ENTRY + 8] ^= 0xFF
    path.write_bytes(bytes(data))
    tracer = RecordingTracer()
    again = new_store(tracer=tracer)
    assert again.get_max_phy_offset() == 4 * ENTRY
    assert _bodies(again) == [b"msg-0", b"msg-1", b"msg-2", b"msg-3"]
    assert "CRC" in tracer.of("CommitLog.recoverNormally")[0]["reason"]


def test_flipped_crc_is_kept_when_crc_checking_is_off(new_store, tmp_path):
    """checkCRCOnRecover false: the same flipped CRC passes recovery (docs/reference.md §8.2)."""
    store = new_store()
    put_many(store, 5)
    store.shutdown()
    path = _commit_log_file(tmp_path)
    data = bytearray(path.read_bytes())
    data[4 * ENTRY + 8] ^= 0xFF
    path.write_bytes(bytes(data))
    again = new_store(check_crc_on_recover=False)
    assert again.get_max_phy_offset() == 5 * ENTRY


def test_garbage_after_the_last_entry_is_cut(new_store, tmp_path):
    """Bytes appended after the last entry (bad magic) are dropped on disk too."""
    store = new_store()
    put_many(store, 5)
    store.shutdown()
    path = _commit_log_file(tmp_path)
    with open(path, "r+b") as f:
        f.seek(5 * ENTRY)
        f.write(b"\xde\xad\xbe\xef" * 40)
    tracer = RecordingTracer()
    again = new_store(tracer=tracer)
    assert again.get_max_phy_offset() == 5 * ENTRY
    with open(path, "rb") as f:
        f.seek(5 * ENTRY)
        assert f.read(160) == bytes(160)
    assert len(_bodies(again)) == 5
    (cut,) = tracer.of("CommitLog.recoverNormally")
    assert "illegal magic code" in cut["reason"]
    assert cut["dropped_bytes"] == 160


def test_a_torn_last_file_after_a_roll_over(new_store, tmp_path):
    """With 4 entries per file, cutting the third file's second entry keeps 9 messages."""
    small = {"mapped_file_size_commit_log": 4 * ENTRY + 8}
    store = new_store(**small)
    put_many(store, 10)
    store.shutdown()
    third = _commit_log_file(tmp_path, f"{2 * (4 * ENTRY + 8):020d}")
    os.truncate(third, ENTRY + 10)
    again = new_store(**small)
    assert again.get_max_offset_in_queue("TopicTest", 0) == 9
    assert _bodies(again)[-1] == b"msg-8"


def test_deleted_consume_queue_is_rebuilt_from_the_commit_log(new_store, tmp_path):
    """Deleting the consumequeue dir: reput starts at the commit log's min offset and
    rebuilds identical units (DefaultMessageStore#start)."""
    store = new_store()
    for i in range(6):
        store.put_message(make_msg(queue_id=i % 3, tags="TagB"), 1000 + i)
    store.do_reput()
    units = {q: list(store.iter_consume_queue_units("TopicTest", q)) for q in range(3)}
    store.shutdown()
    shutil.rmtree(tmp_path / "store" / "consumequeue")
    again = new_store()
    assert {q: list(again.iter_consume_queue_units("TopicTest", q)) for q in range(3)} == units
    assert units[0][0][3] == 2598920


def test_deleted_single_queue_file_is_rebuilt(new_store, tmp_path):
    """One queue, its CQ file deleted: rebuilt on restart."""
    store = new_store()
    put_many(store, 4)
    store.shutdown()
    os.remove(tmp_path / "store" / "consumequeue" / "TopicTest" / "0" / ("0" * 20))
    again = new_store()
    assert again.get_max_offset_in_queue("TopicTest", 0) == 4
    assert _bodies(again) == [b"msg-0", b"msg-1", b"msg-2", b"msg-3"]


def test_deleted_queue_is_not_rebuilt_when_another_queue_covers_later_entries(new_store, tmp_path):
    """RocketMQ's rule: reput starts at the *highest* offset any queue covers, so a queue
    whose files were deleted is not rebuilt while another queue indexes later entries
    (delete the whole consumequeue dir instead)."""
    store = new_store()
    store.put_message(make_msg(queue_id=0), 1)
    store.put_message(make_msg(queue_id=1), 2)
    store.do_reput()
    store.shutdown()
    shutil.rmtree(tmp_path / "store" / "consumequeue" / "TopicTest" / "0")
    again = new_store()
    assert again.reput_from_offset == 2 * 123
    assert again.get_max_offset_in_queue("TopicTest", 0) == 0
    assert again.get_max_offset_in_queue("TopicTest", 1) == 1


def test_unflushed_data_survives_the_process_dying(tmp_path):
    """ASYNC_FLUSH: a put below the 4-page flush threshold is not forced, but it is in the
    mapped file's pages (the OS page cache): a store dropped without shutdown keeps it, and
    the abort file marks an abnormal exit."""
    cfg = MessageStoreConfig(store_path_root_dir=str(tmp_path / "store"))
    dead = DefaultMessageStore(cfg, store_host=STORE_HOST)
    assert dead.load()
    dead.put_message(make_msg(), 1)
    dead.do_reput()
    assert dead.commit_log.mapped_file_queue.flushed_where == 0
    dead.commit_log.mapped_file_queue.close()  # the process dies: nothing is flushed
    del dead
    again = DefaultMessageStore(
        MessageStoreConfig(store_path_root_dir=str(tmp_path / "store")), store_host=STORE_HOST
    )
    assert again.load()
    assert again.last_shutdown_normal is False
    assert again.get_max_phy_offset() == 123
    assert again.get_max_offset_in_queue("TopicTest", 0) == 1
    again.shutdown()


def test_flushed_data_survives_the_process_dying(tmp_path):
    """After flush() (RocketMQ's flush service) the data survives an abnormal exit."""
    cfg = MessageStoreConfig(store_path_root_dir=str(tmp_path / "store"))
    dead = DefaultMessageStore(cfg, store_host=STORE_HOST)
    assert dead.load()
    put_many(dead, 3)
    dead.flush()
    dead.commit_log.mapped_file_queue.close()
    del dead
    again = DefaultMessageStore(
        MessageStoreConfig(store_path_root_dir=str(tmp_path / "store")), store_host=STORE_HOST
    )
    assert again.load()
    assert again.last_shutdown_normal is False
    assert _bodies(again) == [b"msg-0", b"msg-1", b"msg-2"]
    again.shutdown()


def test_kill_keeps_the_page_cache_and_the_abort_file_and_persists_nothing(tmp_path):
    """kill() (SIGKILL): the written bytes survive (the kernel writes the page cache back),
    nothing of shutdown runs — the abort file stays, the delay offsets are not persisted, the
    undispatched entry is not reput — so the next load is abnormal and reput rebuilds it."""
    cfg = MessageStoreConfig(store_path_root_dir=str(tmp_path / "store"))
    dead = DefaultMessageStore(cfg, store_host=STORE_HOST)
    assert dead.load()
    dead.schedule_message_service.start(0)
    put_many(dead, 2)
    dead.put_message(make_msg(body=b"msg-2"), 1002)  # stored, not yet dispatched
    dead.schedule_message_service.update_offset(3, 7)
    dead.kill()
    assert dead.is_shutdown
    assert os.path.exists(tmp_path / "store" / "abort")
    assert not os.path.exists(tmp_path / "store" / "config" / "delayOffset.json")
    assert dead.commit_log.mapped_file_queue.flushed_where == 0  # nothing was forced
    again = DefaultMessageStore(
        MessageStoreConfig(store_path_root_dir=str(tmp_path / "store")), store_host=STORE_HOST
    )
    assert again.load()
    assert again.last_shutdown_normal is False
    assert again.schedule_message_service.offset_table == {}
    assert _bodies(again) == [b"msg-0", b"msg-1", b"msg-2"]
    again.shutdown()


def test_no_commit_log_files_means_no_consume_queues(new_store, tmp_path):
    """Every commit-log file gone: the consume queues are destroyed too
    (CommitLog#recoverNormally → destroyLogics)."""
    store = new_store()
    put_many(store, 3)
    store.shutdown()
    shutil.rmtree(tmp_path / "store" / "commitlog")
    again = new_store()
    assert again.get_max_offset_in_queue("TopicTest", 0) == 0
    assert not os.path.exists(tmp_path / "store" / "consumequeue" / "TopicTest")


def test_load_refuses_a_file_longer_than_the_mapped_size(tmp_path):
    """A commit-log file longer than mappedFileSizeCommitLog fails load() (RocketMQ:
    "length not matched message store config value")."""
    root = tmp_path / "store"
    os.makedirs(root / "commitlog")
    (root / "commitlog" / ("0" * 20)).write_bytes(b"\0" * 300)
    store = DefaultMessageStore(
        MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=200)
    )
    assert store.load() is False
    assert store.put_message(make_msg(), 1).put_message_status.name == "SERVICE_NOT_AVAILABLE"


def test_torn_consume_queue_tail_is_rebuilt_by_reput(new_store, tmp_path):
    """A CQ file cut mid-unit (50 bytes = 2.5 units) recovers 2 units; reput starts at
    their max physical offset and rebuilds units 2–4 from the commit log."""
    store = new_store()
    put_many(store, 5)
    units = list(store.iter_consume_queue_units("TopicTest", 0))
    store.shutdown()
    os.truncate(tmp_path / "store" / "consumequeue" / "TopicTest" / "0" / ("0" * 20), 50)
    tracer = RecordingTracer()
    again = new_store(tracer=tracer)
    assert list(again.iter_consume_queue_units("TopicTest", 0)) == units
    (rep,) = tracer.of("DefaultMessageStore.recover")
    assert (rep["reput_from_offset"], rep["rebuilt_units"]) == (2 * ENTRY, 3)
