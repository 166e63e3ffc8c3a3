"""A node's files on a real disk: write-through, and recovery as DLedgerMmapFileStore#recover
does it (DLedger 0.2.3); ``mqlab.dledger.dledger_files``."""

from __future__ import annotations

from pathlib import Path

from test_dledger_mmap_file_store import PEERS, REAL_DATA, REAL_INDEX

from mqlab.dledger import dledger_entry_coder as coder
from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.dledger_files import FileDisk
from mqlab.dledger.dledger_mmap_file_store import DLedgerMmapFileStore
from mqlab.dledger.member_state import MemberState

FIRST = "00000000000000000000"


def open_store(base: Path, self_id: str = "n0", **config):
    cfg = DLedgerConfig(self_id=self_id, peers=PEERS, store_base_dir=str(base), **config)
    ms = MemberState(cfg, FileDisk())
    return ms, DLedgerMmapFileStore(cfg, ms, on_disk=True)


def node_dir(base: Path, self_id: str = "n0") -> Path:
    return base / f"dledger-{self_id}"


def two_entries(base: Path):
    """0.2.3's two entries in term 2 ("hello" at 0, "hi" at 53), as the real node wrote them."""
    ms, store = open_store(base)
    ms.next_term()
    ms.next_term()  # term 2, persisted in currterm
    ms.change_to_leader(2)
    store.append_as_leader(DLedgerEntry(body=b"hello"))
    store.append_as_leader(DLedgerEntry(body=b"hi"))
    return ms, store


def test_appends_are_written_through_to_0_2_3s_files(tmp_path):
    _, store = two_entries(tmp_path)
    d = node_dir(tmp_path)
    assert (d / "data" / FIRST).read_bytes() == REAL_DATA
    assert (d / "index" / FIRST).read_bytes() == REAL_INDEX
    assert (d / "currterm").read_text() == "voteLeader=\ncurrTerm=2\n"
    store.close_files()


def test_a_new_store_on_the_files_recovers_the_log_and_the_checkpoint(tmp_path):
    """Rebuilt on the same directory (a process killed and started again): ledger end 1 in
    term 2, both entries' bytes; the committed index is -1 without a checkpoint, and 1
    (committedPos 103) with the one written after the commit."""
    ms, store = two_entries(tmp_path)
    before = [coder.encode(e) for e in store.entries()]
    store.close_files()
    ms2, again = open_store(tmp_path)
    assert ms2.curr_term == 2
    assert (again.ledger_begin_index, again.ledger_end_index, again.ledger_end_term) == (0, 1, 2)
    assert (ms2.ledger_end_index, ms2.ledger_end_term) == (1, 2)
    assert [coder.encode(e) for e in again.entries()] == before
    assert (bytes(again.data), bytes(again.index)) == (REAL_DATA, REAL_INDEX)
    assert again.committed_index == -1
    again.update_committed_index(2, 1)
    again.persist_check_point()
    assert (node_dir(tmp_path) / "checkpoint").read_text() == "committedIndex=1\nendIndex=1\n"
    again.close_files()
    _, third = open_store(tmp_path)
    assert (third.committed_index, third.committed_pos) == (1, 103)
    third.close_files()


def test_recovery_reads_0_2_3s_zero_padded_files_and_cuts_them(tmp_path):
    """0.2.3's files are mappedFileSize long, zeros after the written part: the walk stops at
    the first zero magic and both files are cut to 103 and 64 bytes."""
    d = node_dir(tmp_path)
    (d / "data").mkdir(parents=True)
    (d / "index").mkdir()
    (d / "data" / FIRST).write_bytes(REAL_DATA + bytes(4096))
    (d / "index" / FIRST).write_bytes(REAL_INDEX + bytes(4096))
    _, store = open_store(tmp_path)
    assert (store.ledger_end_index, store.ledger_end_term) == (1, 2)
    assert [e.body for e in store.entries()] == [b"hello", b"hi"]
    assert (d / "data" / FIRST).stat().st_size == 103
    assert (d / "index" / FIRST).stat().st_size == 64
    store.close_files()


def test_a_half_written_entry_is_cut_and_a_missing_index_rebuilt(tmp_path):
    """A third entry cut short after 20 bytes (a crash mid-write) is dropped; an index file
    that lost its records is rebuilt from the entries (``needWriteIndex``), byte for byte."""
    third = coder.encode(DLedgerEntry(magic=1, index=2, term=2, pos=103, body=b"lost"))
    d = node_dir(tmp_path)
    (d / "data").mkdir(parents=True)
    (d / "index").mkdir()
    (d / "data" / FIRST).write_bytes(REAL_DATA + third[:20])
    (d / "index" / FIRST).write_bytes(b"")
    _, store = open_store(tmp_path)
    assert store.ledger_end_index == 1
    assert (d / "data" / FIRST).read_bytes() == REAL_DATA
    assert (d / "index" / FIRST).read_bytes() == REAL_INDEX
    store.close_files()


def test_a_truncate_is_written_through(tmp_path):
    """A follower's diverged tail replaced by the leader's entry: the files equal the memory."""
    ms, store = two_entries(tmp_path)
    ms.curr_term = 3
    ms.change_to_leader(3)
    store.append_as_leader(DLedgerEntry(body=b"diverged"))
    ms.change_to_follower(3, "n1")
    leader_entry = coder.decode(
        coder.encode(DLedgerEntry(magic=1, index=2, term=3, pos=103, body=b"leader's"))
    )
    assert store.truncate(leader_entry, 3, "n1") == 2
    d = node_dir(tmp_path)
    assert (d / "data" / FIRST).read_bytes() == bytes(store.data)
    assert (d / "index" / FIRST).read_bytes() == bytes(store.index)
    store.cut_to(0)  # a power cut's loss, written through too
    assert (d / "data" / FIRST).read_bytes() == REAL_DATA[:53]
    assert len((d / "index" / FIRST).read_bytes()) == 32
    store.close_files()


def test_data_files_after_the_first_are_written_recovered_and_cut(tmp_path):
    """224-byte data files: three 108-byte entries fill file 0 (the last 8 bytes a blank)
    and start file 224. A new store on the files walks past the blank to entry 2; a cut back
    to entry 0 deletes file 224 and shortens file 0."""
    ms, store = open_store(tmp_path, mapped_file_size_for_entry_data=224)
    ms.change_to_leader(0)
    for i in range(3):
        store.append_as_leader(DLedgerEntry(body=bytes([i]) * 60))
    data = node_dir(tmp_path) / "data"
    second = data / "00000000000000000224"
    assert (data / FIRST).read_bytes() == bytes(store.data[:224])
    assert second.read_bytes() == bytes(store.data[224:])
    written = bytes(store.data)
    store.close_files()
    _, again = open_store(tmp_path, mapped_file_size_for_entry_data=224)
    assert (again.ledger_end_index, bytes(again.data)) == (2, written)
    assert [e.pos for e in again.entries()] == [0, 108, 224]
    again.cut_to(0)
    assert not second.exists() and (data / FIRST).read_bytes() == written[:108]
    again.close_files()
