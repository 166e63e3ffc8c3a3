"""The message index (IndexService / IndexFile): layout, slots, chains, queries, recovery.

Exact numbers: hash codes and slots were printed by JDK 17 (``String#hashCode``,
``Math.abs``, ``% 5000``); sizes from IndexHeader (40), hash slots (4) and entries (20).
"""

from __future__ import annotations

import os
import shutil
import struct

from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import make_msg

from mqlab.common.filter_api import ascii_hash, java_string_hash, string_hash_code
from mqlab.store import DefaultMessageStore, MessageStoreConfig
from mqlab.store.index import IndexFile, index_key_hash
from mqlab.store.mapped_file import MappedFile


def _put(store, now, keys=None, uniq=None, topic="TopicTest", sys_flag=0):
    props = {}
    if keys is not None:
        props["KEYS"] = keys
    if uniq is not None:
        props["UNIQ_KEY"] = uniq
    r = store.put_message(make_msg(topic=topic, properties=props, sys_flag=sys_flag), now)
    store.do_reput()
    return r.append_message_result.wrote_offset


def _hash_loop(s: str) -> int:
    """``String#hashCode`` as Java's loop computes it, signed."""
    raw = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(raw), 2):
        h = (31 * h + int.from_bytes(raw[i : i + 2], "big")) & 0xFFFF_FFFF
    return h - 2**32 if h & 0x8000_0000 else h


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(alphabet=st.characters(max_codepoint=127), max_size=600), st.text()))
def test_the_key_hash_is_the_per_char_string_hashcode(key):
    """The C-level ASCII path (two base-31 ``int`` parses) gives ``String#hashCode`` as
    Java's per-char loop computes it, for every key: empty, past 512 chars, non-ASCII."""
    h = _hash_loop(key)
    assert string_hash_code(key) == java_string_hash(key) == h
    if key.isascii():
        assert ascii_hash(key.encode("ascii")) == h & 0xFFFF_FFFF
    assert index_key_hash(key) == (0 if h == -(2**31) else abs(h))


def test_a_key_longer_than_int_parses_takes_the_loop():
    """``int`` parses at most 4,300 digits by default: a 5,000-char key takes the loop."""
    key = "k" * 4999 + "x"
    assert string_hash_code(key) == _hash_loop(key)


def test_key_hash_and_slot_positions_are_javas(tmp_path):
    """abs(String#hashCode) % hashSlotNum; Integer.MIN_VALUE's abs is taken as 0."""
    assert index_key_hash("TopicTest#k1") == 2746024
    assert index_key_hash("TopicTest#order-7") == 1829193418  # hashCode -1829193418
    assert index_key_hash("polygenelubricants") == 0  # hashCode Integer.MIN_VALUE
    mf = MappedFile.create(str(tmp_path / "0"), IndexFile.file_size(5000, 20000))
    f = IndexFile(mf, 5000, 20000)
    assert IndexFile.file_size(5000, 20000) == 420_040
    assert f.slot_position("TopicTest#k1") == 40 + 1024 * 4
    assert f.slot_position("TopicTest#k2") == 40 + 1025 * 4
    assert f.slot_position("TopicTest#order-7") == 40 + 3418 * 4
    assert f.slot_position("polygenelubricants") == 40


def test_entries_chain_per_slot_and_header_counts(new_store):
    """Each key is an entry (keyHash, phyOffset, timeDiff, prevIndex) linked to the slot's
    previous newest; header counts: entries + 1, slots used."""
    store = new_store(max_hash_slot_num=2, max_index_num=100)
    o1 = _put(store, 10_000, keys="k1 k2", uniq="U1")
    o2 = _put(store, 12_500, keys="k1")
    o3 = _put(store, 14_999, keys=" k1  ")  # empty parts of KEYS are skipped
    [f] = store.index_service.index_file_list
    h = f.index_header
    # entries 1..6: U1, k1, k2 (msg 1), k1 (msg 2), k1 (msg 3) -> 5 entries, count 6
    assert h.index_count == 6 and h.hash_slot_count == 2
    assert (h.begin_timestamp, h.end_timestamp) == (10_000, 14_999)
    assert (h.begin_phy_offset, h.end_phy_offset) == (o1, o3)
    k1 = index_key_hash("TopicTest#k1")  # 2746024: slot 0 of 2
    k2 = index_key_hash("TopicTest#k2")  # 2746025: slot 1
    u1 = index_key_hash("TopicTest#U1")
    assert (k1 % 2, k2 % 2) == (0, 1)
    assert f.read_entry(1) == (u1, o1, 0, 0)
    assert f.read_entry(2) == (k1, o1, 0, 1 if u1 % 2 == 0 else 0)
    assert f.read_entry(4) == (k1, o2, 2, 2)  # 2.5 s after the begin: timeDiff 2
    assert f.read_entry(5) == (k1, o3, 4, 4)  # 4.999 s: whole seconds
    assert f.read_slot("TopicTest#k1") == 5
    # the header bytes in the map; the file is created (sparse) at its full size
    assert os.path.getsize(f.file_name) == 40 + 2 * 4 + 100 * 20
    assert f.mapped_file.wrote_position == 40 + 2 * 4 + 6 * 20  # entries 0..5
    assert struct.unpack_from(">qqqqii", f.mapped_file.mm, 0) == (10_000, 14_999, o1, o3, 2, 6)


def test_query_by_key_returns_every_message_oldest_first(new_store):
    """query_message: all entries of topic#key, sorted by offset, as raw stored entries."""
    store = new_store()
    offsets = [_put(store, 1000 + i, keys=f"order-{i % 2} all") for i in range(5)]
    other = _put(store, 2000, keys="all", topic="Other")
    r = store.query_message("TopicTest", "order-0", 32, 0, 2**63 - 1)
    assert [store.look_message_by_offset(o).store_timestamp for o in offsets] == [
        1000,
        1001,
        1002,
        1003,
        1004,
    ]
    assert [bytes(b) for b in r.message_buffers] == [
        store.select_one_message_by_offset(o) for o in (offsets[0], offsets[2], offsets[4])
    ]
    assert (r.index_last_update_timestamp, r.index_last_update_phyoffset) == (2000, other)
    assert len(store.query_message("TopicTest", "all", 32, 0, 2**63 - 1).message_buffers) == 5
    assert len(store.query_message("TopicTest", "all", 3, 0, 2**63 - 1).message_buffers) == 3
    assert len(store.query_message("Other", "all", 32, 0, 2**63 - 1).message_buffers) == 1
    # time range: [1001, 1003] (entries keep whole seconds after the begin, 1000: all 0 s)
    assert store.query_message("TopicTest", "order-0", 32, 5000, 9000).message_buffers == []


def test_same_hash_keys_are_not_told_apart(new_store):
    """ "Aa" and "BB" share String#hashCode (2112): a lookup returns both, as in Java."""
    store = new_store()
    a = _put(store, 1000, keys="Aa")
    b = _put(store, 1001, keys="BB")
    r = store.query_message("TopicTest", "Aa", 32, 0, 2**63 - 1)
    assert [bytes(x) for x in r.message_buffers] == [
        store.select_one_message_by_offset(a),
        store.select_one_message_by_offset(b),
    ]


def test_full_file_rolls_to_the_next_and_queries_span_files(new_store):
    """indexNum 4 → 3 entries per file; the next file starts at the previous end."""
    store = new_store(max_hash_slot_num=8, max_index_num=4)
    offs = [_put(store, 60_000 + 1000 * i, keys="k") for i in range(7)]
    files = store.index_service.index_file_list
    assert [f.index_header.index_count for f in files] == [4, 4, 2]
    assert [os.path.basename(f.file_name) for f in files] == [
        "19700101000100000",
        "19700101000103000",
        "19700101000106000",
    ]
    h = files[1].index_header
    assert (h.begin_timestamp, h.begin_phy_offset) == (63_000, offs[3])  # its first entry
    assert os.path.getsize(files[0].file_name) == 40 + 8 * 4 + 4 * 20  # flushed when full
    r = store.query_message("TopicTest", "k", 32, 0, 2**63 - 1)
    assert [bytes(x) for x in r.message_buffers] == [
        store.select_one_message_by_offset(o) for o in offs
    ]
    assert (r.index_last_update_timestamp, r.index_last_update_phyoffset) == (66_000, offs[6])
    # Java's quirk, kept: a continuing file's first entry takes its timeDiff against the
    # previous file's end (62 000 → 1 s), then the header's begin becomes its own store
    # time (63 000), so that entry reads back as 64 000.
    assert files[1].read_entry(1)[2] == 1 and files[1].read_entry(2)[2] == 1
    r = store.query_message("TopicTest", "k", 32, 64_000, 2**63 - 1)
    got = [bytes(x) for x in r.message_buffers]
    assert got == [store.select_one_message_by_offset(o) for o in offs[3:]]  # 63 000 included
    # files are walked newest first and the walk stops at one that begins before `begin`
    r = store.query_message("TopicTest", "k", 32, 66_000, 2**63 - 1)
    assert [bytes(x) for x in r.message_buffers] == [store.select_one_message_by_offset(offs[6])]


def test_rolled_back_and_disabled_are_not_indexed(new_store):
    """TRANSACTION_ROLLBACK_TYPE entries are skipped; messageIndexEnable=false builds none."""
    store = new_store()
    _put(store, 1000, keys="k", sys_flag=0x3 << 2)
    assert store.index_service.index_file_list[0].index_header.index_count == 1
    off = new_store(store_path_root_dir=store.root_dir + "-off", message_index_enable=False)
    _put(off, 1000, keys="k")
    assert off.index_service.index_file_list == []
    assert not os.path.exists(os.path.join(off.root_dir, "index"))


def test_index_survives_restart_and_is_not_rebuilt_twice(tmp_path):
    """A kill drops the (not full) file and indexes the last commit-log file again; a
    normal restart reloads the files, and the reput skips entries before the file's
    endPhyOffset (Java's ``<``: the one at it is indexed again)."""
    root = str(tmp_path / "s")
    store = DefaultMessageStore(MessageStoreConfig(store_path_root_dir=root))
    assert store.load()
    offs = [_put(store, 1000 + i, keys="k") for i in range(3)]
    store.kill()
    again = DefaultMessageStore(MessageStoreConfig(store_path_root_dir=root))
    assert again.load() and again.last_shutdown_normal is False
    [f] = again.index_service.index_file_list
    assert again.index_service.destroyed_on_recovery == ["19700101000001000"]
    assert again.index_service.reindexed_on_recovery == 3
    assert f.index_header.index_count == 4
    assert again.index_service.query_offset("TopicTest", "k", 32, 0, 2**62).phy_offsets == [
        offs[2],
        offs[1],
        offs[0],
    ]  # newest first: the chain from the slot backwards
    # drop the consume queues: recovery re-dispatches every entry
    again.shutdown()
    shutil.rmtree(os.path.join(root, "consumequeue"))
    third = DefaultMessageStore(MessageStoreConfig(store_path_root_dir=root))
    assert third.load()
    f = third.index_service.index_file_list[0]
    assert f.index_header.index_count == 5  # only the entry at endPhyOffset came again
    assert f.read_entry(4)[1] == offs[2]
    r = third.query_message("TopicTest", "k", 32, 0, 2**63 - 1)
    want = [third.select_one_message_by_offset(o) for o in (*offs, offs[2])]
    assert [bytes(x) for x in r.message_buffers] == want
    third.shutdown()


def test_abnormal_exit_drops_files_after_the_last_full_one_and_reindexes(tmp_path):
    """After a kill, files ending after the last full file's end (Java: the checkpoint's
    indexMsgTimestamp) are deleted; the last commit-log file is indexed again."""
    root = str(tmp_path / "s")

    def open_store():
        st = DefaultMessageStore(
            MessageStoreConfig(
                store_path_root_dir=root, mapped_file_size_commit_log=1000,
                max_hash_slot_num=8, max_index_num=4,
            )
        )  # fmt: skip
        assert st.load()
        return st

    store = open_store()
    offs = [_put(store, 1000 * (i + 1), keys="k") for i in range(9)]  # 9 × 130-byte entries
    names = [os.path.basename(f.file_name) for f in store.index_service.index_file_list]
    assert [f.index_header.index_count for f in store.index_service.index_file_list] == [4, 4, 4]
    # 7 entries in file 0 (0..910), the rest from 1000 on (a 90-byte blank ends file 0)
    assert offs == [0, 130, 260, 390, 520, 650, 780, 1000, 1130]
    store.kill()
    again = open_store()
    svc = again.index_service
    # all three files are full (count 4 = indexNum): none ends after the last full one;
    # the last commit-log file (1000, 1130) goes to the index again: a new file (named by
    # the first entry's time, as Java creates it before the skip), 1000 skipped, 1130 again
    assert svc.destroyed_on_recovery == [] and svc.reindexed_on_recovery == 2
    assert [os.path.basename(f.file_name) for f in svc.index_file_list] == [
        *names,
        "19700101000008000",
    ]
    again.put_message(make_msg(properties={"KEYS": "k"}), 10_000)
    again.do_reput()
    again.kill()
    third = open_store()
    svc = third.index_service
    assert svc.destroyed_on_recovery == ["19700101000008000"]  # the 4th file, not full
    # the last commit-log file (1000, 1130, 1260) is dispatched to the index again; the new
    # file starts at the 3rd file's end (1130): 1000 is skipped, 1130 comes twice (``<``)
    assert svc.reindexed_on_recovery == 3
    f = svc.index_file_list[-1]
    assert [f.read_entry(n)[1] for n in range(1, f.index_header.index_count)] == [1130, 1260]
    r = third.query_message("TopicTest", "k", 64, 0, 2**63 - 1)
    got = [bytes(b) for b in r.message_buffers]  # sorted by offset: 1130 twice
    assert got == [third.select_one_message_by_offset(o) for o in sorted((*offs, 1130, 1260))]
    third.shutdown()


def test_power_cut_loses_the_unforced_index_file_and_recovery_rebuilds_it(tmp_path):
    """A power cut: the current index file was never forced, so it comes back as zeros
    (an empty file) and the recovered entries are indexed into it again."""
    root = str(tmp_path / "s")
    store = DefaultMessageStore(MessageStoreConfig(store_path_root_dir=root))
    assert store.load()
    offs = [_put(store, 1000 + i, keys="k") for i in range(3)]
    store.power_cut(lost_tail_bytes=0)  # the kernel had written the commit log back
    [f] = store.index_service.index_file_list
    assert f.index_header.index_count == 4  # the in-memory header; the map is zeros now
    assert struct.unpack_from(">qqqqii", f.mapped_file.mm, 0) == (0, 0, 0, 0, 0, 0)
    store.unmap()
    again = DefaultMessageStore(MessageStoreConfig(store_path_root_dir=root))
    assert again.load()
    svc = again.index_service
    assert svc.destroyed_on_recovery == []  # endTimestamp 0 is not after the checkpoint
    # the consume queues lost their unforced units too, so the reput starts at 0 and
    # indexes every entry itself (nothing before it for the recovery pass to do)
    assert svc.reindexed_on_recovery == 0 and again.reput_from_offset == again.get_max_phy_offset()
    assert svc.index_file_list[0].index_header.index_count == 4
    r = again.query_message("TopicTest", "k", 32, 0, 2**63 - 1)
    assert [bytes(b) for b in r.message_buffers] == [
        again.select_one_message_by_offset(o) for o in offs
    ]
    again.shutdown()
