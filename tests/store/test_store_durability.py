"""The two faults: a process kill loses nothing written (the page cache outlives the
process), a power cut loses what no flush (msync) covered and may tear the last entry.

Store files are real mmaps created at the mapped size (sparse); see mqlab/store/mapped_file.py.
"""

from __future__ import annotations

import os
import sys

import pytest
from store_helpers import STORE_HOST, RecordingTracer, make_msg

from mqlab.common.message_decoder import decodes
from mqlab.store import DefaultMessageStore, GetMessageStatus, MessageStoreConfig

BODY = b"x" * 1000
ENTRY = 1109  # 1000-byte body in TopicTest with TAGS=TagA: 91 + 1000 + 9 + 9
#: Puts 100 ms apart from t=1000: FlushRealTimeService passes run at puts 0, 5, 10, 15
#: (every 500 ms); the first with 4 dirty pages is at put 15 (16 entries, 17,744 bytes).
FLUSHED = 16


def _open(root, **config) -> DefaultMessageStore:
    store = DefaultMessageStore(
        MessageStoreConfig(store_path_root_dir=str(root), **config), store_host=STORE_HOST
    )
    assert store.load()
    return store


def _put(store, n, first=0):
    """``n`` puts into queues 0/1 alternately, put ``i`` at t = 1000 + 100·i; the
    (commit-log offset, queue, queue offset) of each acknowledged one."""
    acked = []
    for i in range(first, first + n):
        r = store.put_message(make_msg(queue_id=i % 2, body=BODY), 1000 + 100 * i)
        assert r.is_ok()
        amr = r.append_message_result
        acked.append((amr.wrote_offset, i % 2, amr.logics_offset))
    store.do_reput()
    return acked


def _readable(store):
    """(commit-log offset, queue, queue offset) of every message a consumer can pull."""
    got = []
    for q in (0, 1):
        r = store.get_message("g", "TopicTest", q, 0, 1000, None)
        if r.status is GetMessageStatus.FOUND:
            got += [(m.commit_log_offset, q, m.queue_offset) for m in decodes(r.body())]
    return sorted(got)


def test_the_flush_service_runs_every_500_ms_and_forces_4_dirty_pages(tmp_path):
    """ASYNC_FLUSH (FlushRealTimeService): passes at t=1000, 1500, 2000 find fewer than 4
    dirty pages; the pass at 2500 (put 15) forces 16 entries (17,744 bytes); the next pass is
    not due before 3000, finds 1 dirty page, and the thorough pass (10 s after
    lastFlushTimestamp 0) forces everything."""
    store = _open(tmp_path / "s")
    mfq = store.commit_log.mapped_file_queue
    _put(store, 15)
    assert mfq.flushed_where == 0
    _put(store, 1, 15)
    assert mfq.flushed_where == FLUSHED * ENTRY == 17_744
    _put(store, 4, 16)
    assert (mfq.get_max_offset(), mfq.flushed_where) == (20 * ENTRY, 16 * ENTRY)
    cl = store.commit_log
    assert cl.flush_real_time_service(2999) is False  # 499 ms after the last pass
    assert cl.flush_real_time_service(3000) is True
    assert mfq.flushed_where == 16 * ENTRY  # 22,180 // 4096 - 17,744 // 4096 = 1 page
    assert cl.flush_real_time_service(10_000) is True
    assert mfq.flushed_where == 20 * ENTRY
    store.shutdown()


def test_background_sync_takes_the_periodic_forces_and_a_sync_flush_stays_inline(tmp_path):
    """With ``background_sync`` set (``mqlab serve``: FileSyncer's thread), the ASYNC_FLUSH
    pass at put 15 and the consume-queue pass hand their files over instead of forcing them
    on the caller's thread. The flushed positions move only when a sync reports back (as
    4.9.3 sets ``flushedPosition`` after ``force()``): to the 16 entries the pass handed
    over, though 17 are written by then. A SYNC_FLUSH put still forces inline: its answer
    waits for the force, as GroupCommitService's does."""
    handed: list[tuple[str, object]] = []
    store = _open(tmp_path / "s")
    store.background_sync = lambda path, done: handed.append((path, done))
    _put(store, 16)
    mfq = store.commit_log.mapped_file_queue
    commit_log_file = mfq.mapped_files[0].file_name
    assert [h[0] for h in handed] == [commit_log_file]
    assert (mfq.flushed_where, mfq.mapped_files[0].flushed_position) == (0, 0)
    _put(store, 1, 16)  # written while the sync runs; the next pass is not due
    assert len(handed) == 1
    handed.pop()[1]()  # the sync returns
    assert mfq.flushed_where == mfq.mapped_files[0].flushed_position == FLUSHED * ENTRY
    assert store.flush_consume_queue_service(100_000) is True  # thorough: every queue
    cqs = store.all_consume_queues()
    assert sorted(h[0] for h in handed) == sorted(
        cq.mapped_file_queue.mapped_files[0].file_name for cq in cqs
    )
    assert [cq.mapped_file_queue.flushed_where for cq in cqs] == [0, 0]
    for _, done in handed:
        done()
    assert sorted(cq.mapped_file_queue.flushed_where for cq in cqs) == [8 * 20, 9 * 20]
    store.shutdown()
    sync = _open(tmp_path / "t", flush_disk_type="SYNC_FLUSH")
    handed.clear()
    sync.background_sync = lambda path, done: handed.append((path, done))
    _put(sync, 3)
    assert sync.commit_log.mapped_file_queue.flushed_where == 3 * ENTRY
    assert [h for h in handed if "commitlog" in h[0]] == []
    sync.shutdown()


def test_a_late_background_sync_never_moves_a_position_back(tmp_path):
    """A background sync that reports after an inline force (a shutdown's) went further
    leaves the positions where the force put them."""
    handed: list[tuple[str, object]] = []
    store = _open(tmp_path / "s")
    store.background_sync = lambda path, done: handed.append((path, done))
    _put(store, 20)
    mfq = store.commit_log.mapped_file_queue
    store.background_sync = None
    store.commit_log.flush_real_time_service(10_000)  # thorough, inline: all 20
    assert mfq.flushed_where == 20 * ENTRY
    for _, done in handed:
        done()
    assert (mfq.flushed_where, mfq.mapped_files[0].flushed_position) == (20 * ENTRY, 20 * ENTRY)
    store.shutdown()


@pytest.mark.parametrize("flush_disk_type", ["ASYNC_FLUSH", "SYNC_FLUSH"])
def test_a_kill_loses_nothing_acknowledged(tmp_path, flush_disk_type):
    """20 acknowledged puts (ASYNC_FLUSH: only 16 forced), kill, restart: all 20 readable at
    the same commit-log and queue offsets; the next put continues at queue offset 10."""
    store = _open(tmp_path / "s", flush_disk_type=flush_disk_type)
    acked = _put(store, 20)
    flushed = store.commit_log.mapped_file_queue.flushed_where
    assert flushed == (FLUSHED if flush_disk_type == "ASYNC_FLUSH" else 20) * ENTRY
    store.kill()
    store.unmap()
    again = _open(tmp_path / "s", flush_disk_type=flush_disk_type)
    assert again.last_shutdown_normal is False
    assert again.get_max_phy_offset() == 20 * ENTRY
    assert _readable(again) == sorted(acked)
    r = again.put_message(make_msg(queue_id=0, body=BODY), 5000)
    assert (r.append_message_result.wrote_offset, r.append_message_result.logics_offset) == (
        20 * ENTRY,
        10,
    )
    again.shutdown()


def test_a_power_cut_keeps_exactly_the_flushed_entries(tmp_path):
    """ASYNC_FLUSH, 20 acknowledged, 16 forced: a power cut keeps the 16; the consume queues
    (never forced: below 2 dirty pages) are rebuilt from the commit log, and queue offsets
    continue from what survived."""
    tracer = RecordingTracer()
    store = _open(tmp_path / "s")
    store.tracer = tracer
    acked = _put(store, 20)
    info = store.power_cut()
    assert info == {
        "commit_log_wrote": 20 * ENTRY,
        "commit_log_flushed": 16 * ENTRY,
        "commit_log_kept": 16 * ENTRY,
        "consume_queue_lost_bytes": 20 * 20,  # 20 units, none forced (below 2 pages)
    }
    (ev,) = tracer.of("DefaultMessageStore.powerCut")
    assert (ev["step"], ev["kind"]) == ("power_cut", "fault")
    assert os.path.exists(tmp_path / "s" / "abort")
    store.unmap()
    again = _open(tmp_path / "s")
    assert again.last_shutdown_normal is False
    assert again.get_max_phy_offset() == 16 * ENTRY
    assert _readable(again) == sorted(acked[:16])
    assert again.commit_log.topic_queue_table == {"TopicTest-0": 8, "TopicTest-1": 8}
    again.shutdown()


def test_a_power_cut_with_a_torn_tail_keeps_the_whole_entries(tmp_path):
    """The kernel had written back all but the last 1,609 bytes: entries 16–17 survive
    although never forced, entry 18 is torn (its first 609 bytes on disk: CRC fails) and
    cut, entry 19 is lost; 18 complete messages remain."""
    store = _open(tmp_path / "s")
    acked = _put(store, 20)
    info = store.power_cut(lost_tail_bytes=ENTRY + 500)
    assert info["commit_log_kept"] == 20 * ENTRY - ENTRY - 500 == 18 * ENTRY + 609
    store.unmap()
    tracer = RecordingTracer()
    again = DefaultMessageStore(
        MessageStoreConfig(store_path_root_dir=str(tmp_path / "s")),
        store_host=STORE_HOST,
        tracer=tracer,
    )
    assert again.load()
    assert again.get_max_phy_offset() == 18 * ENTRY
    assert _readable(again) == sorted(acked[:18])
    (cut,) = tracer.of("CommitLog.recoverNormally")
    assert (cut["process_offset"], cut["dropped_bytes"]) == (18 * ENTRY, 609)
    assert cut["reason"] == (
        f"torn entry at {18 * ENTRY}: declares {ENTRY} bytes, only zeros from byte 609 on"
    )
    again.shutdown()


def test_a_power_cut_never_loses_flushed_bytes_and_sync_flush_loses_nothing(tmp_path):
    """lost_tail_bytes larger than the unflushed tail stops at the flushed position; with
    SYNC_FLUSH every acknowledged put was forced, so a power cut keeps all of them."""
    store = _open(tmp_path / "a")
    _put(store, 20)
    assert store.power_cut(lost_tail_bytes=10**9)["commit_log_kept"] == 16 * ENTRY
    store.unmap()
    sync = _open(tmp_path / "b", flush_disk_type="SYNC_FLUSH")
    acked = _put(sync, 3)
    assert sync.power_cut()["commit_log_kept"] == 3 * ENTRY
    sync.unmap()
    again = _open(tmp_path / "b", flush_disk_type="SYNC_FLUSH")
    assert _readable(again) == acked
    again.shutdown()
    with pytest.raises(ValueError, match="lost_tail_bytes"):
        again.power_cut(lost_tail_bytes=-1)


def test_a_power_cut_lets_a_due_flush_pass_run_first(tmp_path):
    """power_cut(now_ms=10_000): the flush service's thorough pass (due 10 s after
    lastFlushTimestamp 0) runs before the power goes, so all 20 entries survive; the consume
    queues' pass (2 dirty pages needed, thorough only after 60 s) forces nothing."""
    store = _open(tmp_path / "s")
    _put(store, 20)
    info = store.power_cut(10_000)
    assert (info["commit_log_flushed"], info["commit_log_kept"]) == (20 * ENTRY, 20 * ENTRY)
    assert info["consume_queue_lost_bytes"] == 20 * 20
    store.unmap()
    again = _open(tmp_path / "s")
    assert again.get_max_offset_in_queue("TopicTest", 0) == 10
    again.shutdown()


def test_files_are_sparse_and_unmapped_on_shutdown(tmp_path):
    """A 16 MiB commit-log file and a 6,000,000-byte consume-queue file are created at full
    length but hold only the written blocks; shutdown unmaps them (no file handles left)."""
    fd_dir = "/proc/self/fd"
    before = len(os.listdir(fd_dir)) if os.path.isdir(fd_dir) else None
    store = _open(tmp_path / "s")
    _put(store, 2)
    cl = tmp_path / "s" / "commitlog" / ("0" * 20)
    cq = tmp_path / "s" / "consumequeue" / "TopicTest" / "0" / ("0" * 20)
    assert (os.path.getsize(cl), os.path.getsize(cq)) == (16 * 1024 * 1024, 6_000_000)
    if sys.platform.startswith("linux"):
        assert os.stat(cl).st_blocks * 512 <= 64 * 1024  # sparse: not zero-filled
    store.shutdown()
    assert all(mf.mm.closed for mf in store.commit_log.mapped_file_queue.mapped_files)
    if before is not None:
        assert len(os.listdir(fd_dir)) == before


def test_delay_offsets_fall_back_to_bak_when_the_file_is_torn(tmp_path):
    """delayOffset.json written twice (the first kept as .bak), then torn: the restarted
    store loads the .bak's offsets (ConfigManager#loadBak)."""
    store = _open(tmp_path / "s")
    for i in range(6):
        store.put_message(make_msg(properties={"DELAY": "1"}), 1000 + i)
    store.do_reput()
    assert store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 0) == 6
    sms = store.schedule_message_service
    sms.update_offset(1, 3)
    sms.persist()
    sms.update_offset(1, 5)
    sms.persist()
    store.shutdown()
    path = tmp_path / "s" / "config" / "delayOffset.json"
    path.write_text('{"offsetTable":{1:', encoding="utf-8")
    again = _open(tmp_path / "s")
    assert again.schedule_message_service.offset_table == {1: 3}
    again.shutdown()
