"""The log: DLedgerMmapFileStore's appends, truncate, get and committed index (DLedger 0.2.3)."""

from __future__ import annotations

import pytest

from mqlab.dledger import dledger_entry_coder as coder
from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.dledger_mmap_file_store import DLedgerMmapFileStore
from mqlab.dledger.exception import DLedgerException
from mqlab.dledger.member_state import MemberState, Role
from mqlab.dledger.protocol import DLedgerResponseCode as R

PEERS = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"


def make(self_id="n0", **config):
    ms = MemberState(DLedgerConfig(self_id=self_id, peers=PEERS, **config))
    return ms, DLedgerMmapFileStore(ms.dledger_config, ms)


def leader(term=1, self_id="n0"):
    ms, store = make(self_id)
    ms.curr_term = term
    ms.change_to_leader(term)
    return ms, store


def code_of(fn) -> R:
    with pytest.raises(DLedgerException) as e:
        fn()
    return e.value.code


def test_append_as_leader_sets_index_term_pos_and_writes_both_files():
    """Entries 0, 1 at positions 0 and 53 (48 + 5 bytes), index records at 0 and 32."""
    ms, store = leader(term=2)
    e0 = store.append_as_leader(DLedgerEntry(body=b"hello"))
    e1 = store.append_as_leader(DLedgerEntry(body=b"hi"))
    assert (e0.index, e0.term, e0.pos, e0.size, e0.magic) == (0, 2, 0, 53, 1)
    assert (e1.index, e1.term, e1.pos, e1.size) == (1, 2, 53, 50)
    assert bytes(store.data) == coder.encode(e0) + coder.encode(e1)
    assert len(store.data) == 103
    assert bytes(store.index) == coder.encode_index(0, 53, 1, 0, 2) + coder.encode_index(
        53, 50, 1, 1, 2
    )
    assert (store.ledger_begin_index, store.ledger_end_index, store.ledger_end_term) == (0, 1, 2)
    assert (ms.ledger_end_index, ms.ledger_end_term) == (1, 2)
    assert store.get(1) == e1 and store.get(1).body == b"hi"


def test_only_a_leader_appends_and_get_checks_the_range():
    """NOT_LEADER (404) on a follower; get(-1) and get past the end: INDEX_OUT_OF_RANGE (410)."""
    ms, store = make()
    assert code_of(lambda: store.append_as_leader(DLedgerEntry(body=b"x"))) == R.NOT_LEADER
    assert code_of(lambda: store.get(0)) == R.INDEX_OUT_OF_RANGE
    ms.change_to_leader(0)
    ms.transferee = "n1"
    assert code_of(lambda: store.append_as_leader(DLedgerEntry(body=b"x"))) == R.LEADER_TRANSFERRING


def test_append_as_follower_checks_index_term_leader_and_position():
    """A follower appends index end+1 only (408), for its term (407) and leader (409), at the
    leader's position (414, and nothing is kept)."""
    _, lstore = leader(term=1, self_id="n1")
    e0 = lstore.append_as_leader(DLedgerEntry(body=b"abc"))
    e1 = lstore.append_as_leader(DLedgerEntry(body=b"de"))
    ms, store = make("n0")
    ms.curr_term = 1
    ms.change_to_follower(1, "n1")
    assert code_of(lambda: store.append_as_follower(e1, 1, "n1")) == R.INCONSISTENT_INDEX
    assert code_of(lambda: store.append_as_follower(e0, 2, "n1")) == R.INCONSISTENT_TERM
    assert code_of(lambda: store.append_as_follower(e0, 1, "n2")) == R.INCONSISTENT_LEADER
    assert code_of(lambda: store.append_as_follower(e0.with_(pos=7), 1, "n1")) == R.DISK_ERROR
    assert len(store.data) == 0 and store.ledger_end_index == -1
    store.append_as_follower(e0, 1, "n1")
    store.append_as_follower(e1, 1, "n1")
    assert store.data == lstore.data and store.index == lstore.index


def test_truncate_replaces_a_diverged_suffix():
    """truncate(e) cuts at e's position and writes e there: the log ends at e, byte-equal to
    the leader's; an equal entry already there is kept and only what follows goes."""
    _, lstore = leader(term=1, self_id="n1")
    lead = [lstore.append_as_leader(DLedgerEntry(body=b"L%d" % i)) for i in range(2)]
    ms, store = make("n0")
    ms.curr_term = 1
    ms.change_to_leader(1)
    store.append_as_leader(DLedgerEntry(body=b"L0"))  # the same entry 0
    ms.curr_term = 1
    for i in range(3):
        store.append_as_leader(DLedgerEntry(body=b"X%d" % i))  # a diverged tail 1..3
    assert store.ledger_end_index == 3
    ms.change_to_follower(1, "n1")
    assert store.truncate(lead[1], 1, "n1") == 1
    assert (store.ledger_end_index, store.ledger_end_term) == (1, 1)
    assert store.data == lstore.data and store.index == lstore.index
    # an equal entry: cut after it
    assert store.truncate(lead[0], 1, "n1") == 0
    assert bytes(store.data) == coder.encode(lead[0]) and len(store.index) == 32
    assert code_of(lambda: store.truncate(lead[0], 2, "n1")) == R.INCONSISTENT_TERM


def test_update_committed_index_moves_forward_within_the_log():
    """Only forward, never past the ledger end, not for an older term; committedPos is the
    end of the committed entry."""
    ms, store = leader(term=3)
    for body in (b"a", b"bb", b"ccc"):
        store.append_as_leader(DLedgerEntry(body=body))
    store.update_committed_index(3, 1)
    assert (store.committed_index, store.committed_pos) == (1, 49 + 50)
    store.update_committed_index(3, 0)
    assert store.committed_index == 1
    store.update_committed_index(2, 2)
    assert store.committed_index == 1
    store.update_committed_index(3, 9)
    assert (store.committed_index, store.committed_pos) == (2, 49 + 50 + 51)


def test_files_are_named_as_0_2_3_names_them():
    """data/00000000000000000000, index/00000000000000000000 and the checkpoint text
    (committedIndex then endIndex, as Java 17's Properties iterates them)."""
    ms, store = leader(term=1)
    store.append_as_leader(DLedgerEntry(body=b"z"))
    store.update_committed_index(1, 0)
    files = store.files()
    assert sorted(files) == [
        "checkpoint",
        "data/00000000000000000000",
        "index/00000000000000000000",
    ]
    assert files["checkpoint"] == b"committedIndex=0\nendIndex=0\n"
    assert len(files["data/00000000000000000000"]) == 49
    assert ms.role == Role.LEADER


#: The first bytes of the data and index files DLedger 0.2.3's DLedgerMmapFileStore wrote for
#: appendAsLeader("hello"), appendAsLeader("hi") in term 2 (jshell on dledger-0.2.3.jar, 4 KiB
#: files; the rest of each file is zeros); updateCommittedIndex(2, 1) gave committedPos 103.
REAL_DATA = bytes.fromhex(
    "00000001000000350000000000000000000000000000000200000000000000000000000000000000"
    "000000000000000568656c6c6f00000001000000320000000000000001000000000000000200000000"
    "00000035000000000000000000000000000000026869"
)
REAL_INDEX = bytes.fromhex(
    "0000000100000000000000000000003500000000000000000000000000000002"
    "0000000100000000000000350000003200000000000000010000000000000002"
)


def test_the_files_hold_what_0_2_3_writes():
    """Data and index bytes equal 0.2.3's own files for the same appends; committedPos 103."""
    _, store = leader(term=2)
    store.append_as_leader(DLedgerEntry(body=b"hello"))
    store.append_as_leader(DLedgerEntry(body=b"hi"))
    store.update_committed_index(2, 1)
    files = store.files()
    assert files["data/00000000000000000000"] == REAL_DATA
    assert files["index/00000000000000000000"] == REAL_INDEX
    assert (store.committed_index, store.committed_pos) == (1, 103)


def test_an_entry_that_does_not_fit_goes_to_the_next_file_after_a_blank():
    """224-byte data files, 108-byte entries (60-byte bodies): entry 1 fits with exactly the
    8 bytes ``preAppend`` wants to spare (108 + 8 = 116 = the rest), entry 2 does not: the
    last 8 bytes become a blank (magic -1, length 8) and entry 2 starts file 224. A follower
    appending the same entries puts them at the same positions, blank and all. An entry
    longer than a file is DISK_ERROR."""
    ms, store = make(mapped_file_size_for_entry_data=224)
    ms.curr_term = 1
    ms.change_to_leader(1)
    entries = [store.append_as_leader(DLedgerEntry(body=bytes([i]) * 60)) for i in range(3)]
    assert [(e.pos, e.size) for e in entries] == [(0, 108), (108, 108), (224, 108)]
    assert bytes(store.data[216:224]) == b"\xff\xff\xff\xff\x00\x00\x00\x08"
    assert len(store.data) == 332
    assert [store.get(i).body for i in range(3)] == [bytes([i]) * 60 for i in range(3)]
    assert sorted(store.files()) == ["checkpoint", "data/00000000000000000000",
                                     "data/00000000000000000224", "index/00000000000000000000"]  # fmt: skip
    assert store.files()["data/00000000000000000224"] == coder.encode(entries[2])
    fms, follower = make("n1", mapped_file_size_for_entry_data=224)
    fms.curr_term = 1
    fms.change_to_follower(1, "n0")
    for e in entries:
        follower.append_as_follower(coder.decode(coder.encode(e)), 1, "n0")
    assert bytes(follower.data) == bytes(store.data)
    assert code_of(lambda: store.append_as_leader(DLedgerEntry(body=bytes(177)))) == R.DISK_ERROR
