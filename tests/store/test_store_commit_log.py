"""CommitLog: file roll-over with the blank marker, lookups by physical offset.

docs/reference.md §4.1 (layout, blank marker 0xCBD43194), §6 (file names), §11
(DefaultMessageStoreTest lookMessageByOffset).
"""

from __future__ import annotations

import struct

from store_helpers import RecordingTracer, make_msg, put_many

from mqlab.common.message_decoder import BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, decodes
from mqlab.store import GetMessageStatus

ENTRY = 141  # 32-byte body in TopicTest with TAGS=TagA
BODY = b"x" * 32


def test_roll_over_writes_a_blank_marker_and_starts_the_next_file(new_store, tmp_path):
    """File size 3 × 141 + 20: after 3 entries 20 bytes remain, 141 + 8 > 20, so an 8-byte
    marker TOTALSIZE=20, MAGIC=0xCBD43194 fills the file and the 4th entry starts file
    00000000000000000443 (docs/reference.md §4.1)."""
    tracer = RecordingTracer()
    size = 3 * ENTRY + 20
    store = new_store(mapped_file_size_commit_log=size, tracer=tracer)
    results = put_many(store, 4, body=BODY)
    assert [r.append_message_result.wrote_offset for r in results] == [0, 141, 282, 443]
    store.flush()
    cdir = tmp_path / "store" / "commitlog"
    assert sorted(p.name for p in cdir.iterdir()) == [
        "00000000000000000000",
        "00000000000000000443",
    ]
    first = (cdir / "00000000000000000000").read_bytes()
    assert len(first) == size  # every file is created at the mapped size
    assert struct.unpack(">ii", first[423:431]) == (20, BLANK_MAGIC_CODE)
    assert BLANK_MAGIC_CODE == -875286124
    assert struct.unpack(">ii", first[0:8]) == (ENTRY, MESSAGE_MAGIC_CODE)
    second = (cdir / "00000000000000000443").read_bytes()
    assert len(second) == size  # preallocated: the entry, then zeros
    assert struct.unpack(">ii", second[0:8]) == (ENTRY, MESSAGE_MAGIC_CODE)
    assert second[ENTRY:] == bytes(size - ENTRY)
    roll = tracer.of("CommitLog.doAppend")
    assert [(e["step"], e["blank_bytes"], e["next_file_offset"]) for e in roll] == [
        ("END_OF_FILE", 20, 443)
    ]
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.status is GetMessageStatus.FOUND
    assert [m.commit_log_offset for m in decodes(r.body())] == [0, 141, 282, 443]
    entries = list(store.iter_commit_log_entries(include_blank=True))
    assert [(o, n) for o, n, _ in entries] == [
        (0, 141),
        (141, 141),
        (282, 141),
        (423, 20),
        (443, 141),
    ]


def test_entry_that_leaves_exactly_eight_bytes_still_fits(new_store):
    """The rule is entry + 8 > remaining: 3 entries in a 3 × 141 + 8 file, then an 8-byte
    marker (END_FILE_MIN_BLANK_LENGTH)."""
    store = new_store(mapped_file_size_commit_log=3 * ENTRY + 8)
    results = put_many(store, 4, body=BODY)
    assert [r.append_message_result.wrote_offset for r in results] == [0, 141, 282, 431]


def test_look_message_by_offset_first_last_and_out_of_range(new_store):
    """lookMessageByOffset: the first and last entries decode (body kept as stored);
    the max offset and beyond give None (DefaultMessageStoreTest)."""
    store = new_store()
    results = put_many(store, 5)
    first = store.look_message_by_offset(0)
    assert (first.body, first.queue_offset, first.commit_log_offset) == (b"msg-0", 0, 0)
    assert first.msg_id == "7F00000100002A9F0000000000000000"
    last_offset = results[-1].append_message_result.wrote_offset
    last = store.look_message_by_offset(last_offset)
    assert (last.body, last.queue_offset) == (b"msg-4", 4)
    assert last.properties == {"TAGS": "TagA"}
    assert store.look_message_by_offset(store.get_max_phy_offset()) is None
    assert store.look_message_by_offset(10**9) is None
    assert store.look_message_by_offset(last_offset, 114).body == b"msg-4"


def test_select_one_message_by_offset_returns_the_raw_entry(new_store):
    """selectOneMessageByOffset: the stored bytes (TOTALSIZE first), None past the end."""
    store = new_store()
    put_many(store, 2)
    raw = store.select_one_message_by_offset(114)
    assert isinstance(raw, bytes) and len(raw) == 114
    assert struct.unpack(">ii", raw[:8]) == (114, MESSAGE_MAGIC_CODE)
    assert struct.unpack(">qq", raw[20:36]) == (1, 114)  # QUEUEOFFSET, PHYSICALOFFSET
    assert store.select_one_message_by_offset(228) is None


def test_min_and_max_phy_offset(new_store):
    """getMinPhyOffset is −1 with no file, else the first file's start; max is the next
    byte to write."""
    store = new_store()
    assert (store.get_min_phy_offset(), store.get_max_phy_offset()) == (-1, 0)
    put_many(store, 2)
    assert (store.get_min_phy_offset(), store.get_max_phy_offset()) == (0, 228)


def test_store_timestamp_is_now_ms(new_store):
    """The store timestamp is the put's now_ms (docs/reference.md §10.6 step 9)."""
    store = new_store()
    store.put_message(make_msg(), 424242)
    assert store.look_message_by_offset(0).store_timestamp == 424242
    assert store.commit_log.pickup_store_timestamp(0, 123) == 424242
