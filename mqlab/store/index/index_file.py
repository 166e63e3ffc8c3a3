"""One index file: a 40-byte header, a table of hash slots, then linked index entries.

Mirrors ``IndexHeader`` and ``IndexFile`` (store/index, RocketMQ 4.9.3). The layout, all
big-endian::

    header   (40 B)  beginTimestamp:8 endTimestamp:8 beginPhyOffset:8 endPhyOffset:8
                     hashSlotCount:4 indexCount:4
    slots    (hashSlotNum × 4 B)   the number of the newest entry whose key falls in
                                   the slot (0: empty)
    entries  (indexNum × 20 B)     keyHash:4 phyOffset:8 timeDiff:4 prevIndex:4

A key's slot is ``abs(key.hashCode()) % hashSlotNum`` (``String#hashCode``; ``abs`` of
``Integer.MIN_VALUE`` stays negative and is taken as 0). ``putKey`` writes entry number
``indexCount`` (which starts at 1: entry 0 is never used, so 0 can mean "none"), links it
to the slot's previous newest entry through ``prevIndex``, and points the slot at it. So
each slot heads a chain, newest first, of every key that hashed there; a lookup walks the
chain and keeps entries whose full ``keyHash`` matches (two keys with the same hash are
not told apart here; Java's ``queryMessage`` does not check the key either).
``timeDiff`` is the entry's store time minus the header's ``beginTimestamp``, in whole
seconds (0 while the header has no begin time; clamped to 0..Integer.MAX_VALUE).

A file is full when ``indexCount`` reaches ``indexNum`` (it holds ``indexNum - 1``
entries). Its header begin fields are set by the first entry, or, for a file that follows
a full one, start at that file's end time and offset.

Files: the file is a ``MappedFile`` (its map ``mm`` takes the scattered writes: header,
slots, entries; ``wrote_position`` follows the end of the last entry). An index file is
written at positions below its end, so ``flush`` forces it from byte 0 to the end of its
last entry. Java forces an index file when it fills up (and mqlab also at shutdown); a kill
loses nothing (the page cache), a power cut loses what the last force did not cover
(``IndexService.revert_to_disk``), and recovery then drops and rebuilds as Java does.
"""

from __future__ import annotations

import struct

from mqlab.common.filter_api import string_hash_code
from mqlab.store.mapped_file import MappedFile

__all__ = [
    "HASH_SLOT_SIZE",
    "INDEX_HEADER_SIZE",
    "INDEX_SIZE",
    "IndexFile",
    "IndexHeader",
    "index_key_hash",
]

#: IndexHeader.INDEX_HEADER_SIZE
INDEX_HEADER_SIZE = 40
#: IndexFile.hashSlotSize
HASH_SLOT_SIZE = 4
#: IndexFile.indexSize
INDEX_SIZE = 20
#: IndexFile.invalidIndex
INVALID_INDEX = 0
_INT_MAX = 2**31 - 1

_HEADER = struct.Struct(">qqqqii")
_SLOT = struct.Struct(">i")
_ENTRY = struct.Struct(">iqii")


def index_key_hash(key: str) -> int:
    """``IndexFile#indexKeyHashMethod``: ``Math.abs(key.hashCode())``, 0 if still negative.

    Every stored message indexes one or more ``topic#key`` strings; an ASCII key is
    hashed in C (``filter_api.ascii_hash``, 0.7 µs for a 49-char key).
    """
    h = abs(string_hash_code(key))
    return 0 if h > _INT_MAX else h


class IndexHeader:
    """The header fields, mirrored into the first 40 bytes. Mirrors ``IndexHeader``."""

    __slots__ = (
        "_mm",
        "begin_timestamp",
        "end_timestamp",
        "begin_phy_offset",
        "end_phy_offset",
        "hash_slot_count",
        "index_count",
    )

    def __init__(self, mm) -> None:  # noqa: ANN001 - a writable buffer (the file's mirror)
        self._mm = mm
        self.begin_timestamp = 0
        self.end_timestamp = 0
        self.begin_phy_offset = 0
        self.end_phy_offset = 0
        self.hash_slot_count = 0
        self.index_count = 1

    def load(self) -> None:
        """Read the fields back from the file. Mirrors ``IndexHeader#load`` (a count ≤ 0
        reads as 1)."""
        (self.begin_timestamp, self.end_timestamp, self.begin_phy_offset, self.end_phy_offset,
         self.hash_slot_count, self.index_count) = _HEADER.unpack_from(self._mm, 0)  # fmt: skip
        if self.index_count <= 0:
            self.index_count = 1

    def update_byte_buffer(self) -> None:
        """Write every field. Mirrors ``IndexHeader#updateByteBuffer``."""
        _HEADER.pack_into(
            self._mm, 0, self.begin_timestamp, self.end_timestamp, self.begin_phy_offset,
            self.end_phy_offset, self.hash_slot_count, self.index_count,
        )  # fmt: skip


class IndexFile:
    """Mirrors ``IndexFile`` (store/index, RocketMQ 4.9.3); see the module notes.

    Args:
        mapped_file: the file (``MappedFile.create`` for a new one, ``.load`` to reopen).
        hash_slot_num: ``maxHashSlotNum``.
        index_num: ``maxIndexNum``.
        end_phy_offset: a new file's begin/end offset (the previous file's end), or 0.
        end_timestamp: a new file's begin/end time (the previous file's end), or 0.
    """

    __slots__ = ("mapped_file", "hash_slot_num", "index_num", "index_header")

    def __init__(
        self,
        mapped_file: MappedFile,
        hash_slot_num: int,
        index_num: int,
        end_phy_offset: int = 0,
        end_timestamp: int = 0,
    ) -> None:
        self.mapped_file = mapped_file
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.index_header = IndexHeader(mapped_file.mm)
        h = self.index_header
        if end_phy_offset > 0:
            h.begin_phy_offset = h.end_phy_offset = end_phy_offset
        if end_timestamp > 0:
            h.begin_timestamp = h.end_timestamp = end_timestamp
        if end_phy_offset > 0 or end_timestamp > 0:
            h.update_byte_buffer()

    @staticmethod
    def file_size(hash_slot_num: int, index_num: int) -> int:
        """``fileTotalSize``: header + slots + entries."""
        return INDEX_HEADER_SIZE + hash_slot_num * HASH_SLOT_SIZE + index_num * INDEX_SIZE

    @property
    def file_name(self) -> str:
        return self.mapped_file.file_name

    def load(self) -> None:
        """Mirrors ``IndexFile#load``: read the header."""
        self.index_header.load()

    def _entries_at(self) -> int:
        return INDEX_HEADER_SIZE + self.hash_slot_num * HASH_SLOT_SIZE

    def used_end(self) -> int:
        """The byte after the last entry written."""
        return self._entries_at() + self.index_header.index_count * INDEX_SIZE

    def flush(self) -> None:
        """Mirrors ``IndexFile#flush``: header fields to the buffer, then to disk (from
        byte 0: slots and header were written in place)."""
        self.index_header.update_byte_buffer()
        mf = self.mapped_file
        mf.flushed_position = 0
        mf.wrote_position = self.used_end()
        mf.flush()

    def is_write_full(self) -> bool:
        """Mirrors ``IndexFile#isWriteFull``: ``indexCount >= indexNum``."""
        return self.index_header.index_count >= self.index_num

    def destroy(self) -> bool:
        """Mirrors ``IndexFile#destroy``: delete the file."""
        return self.mapped_file.destroy()

    def slot_position(self, key: str) -> int:
        """Byte position of ``key``'s hash slot: 40 + (hash % hashSlotNum) × 4."""
        return INDEX_HEADER_SIZE + index_key_hash(key) % self.hash_slot_num * HASH_SLOT_SIZE

    def put_key(self, key: str, phy_offset: int, store_timestamp: int) -> bool:
        """Add one entry for ``key``. Mirrors ``IndexFile#putKey``.

        Returns:
            False when the file is full (the service then opens the next one).
        """
        h = self.index_header
        if h.index_count >= self.index_num:
            return False
        mm = self.mapped_file.mm
        key_hash = index_key_hash(key)
        abs_slot_pos = INDEX_HEADER_SIZE + key_hash % self.hash_slot_num * HASH_SLOT_SIZE
        slot_value = _SLOT.unpack_from(mm, abs_slot_pos)[0]
        if slot_value <= INVALID_INDEX or slot_value > h.index_count:
            slot_value = INVALID_INDEX
        if h.begin_timestamp <= 0:
            time_diff = 0
        else:
            diff = store_timestamp - h.begin_timestamp
            time_diff = 0 if diff < 0 else min(diff // 1000, _INT_MAX)  # whole seconds
        abs_index_pos = self._entries_at() + h.index_count * INDEX_SIZE
        _ENTRY.pack_into(mm, abs_index_pos, key_hash, phy_offset, time_diff, slot_value)
        _SLOT.pack_into(mm, abs_slot_pos, h.index_count)
        self.mapped_file.wrote_position = abs_index_pos + INDEX_SIZE  # what a power cut loses
        if h.index_count <= 1:
            h.begin_phy_offset = phy_offset
            h.begin_timestamp = store_timestamp
        if slot_value == INVALID_INDEX:
            h.hash_slot_count += 1
        h.index_count += 1
        h.end_phy_offset = phy_offset
        h.end_timestamp = store_timestamp
        h.update_byte_buffer()  # Java's setters write each field into the map at once
        return True

    def is_time_matched(self, begin: int, end: int) -> bool:
        """Mirrors ``IndexFile#isTimeMatched``: [begin, end] overlaps the file's times."""
        b, e = self.index_header.begin_timestamp, self.index_header.end_timestamp
        return (begin < b and end > e) or (b <= begin <= e) or (b <= end <= e)

    def select_phy_offset(
        self, phy_offsets: list[int], key: str, max_num: int, begin: int, end: int
    ) -> None:
        """Append to ``phy_offsets`` the offsets of ``key``'s entries stored in [begin, end],
        newest first, walking the slot's chain. Mirrors ``IndexFile#selectPhyOffset``."""
        h = self.index_header
        mm = self.mapped_file.mm
        key_hash = index_key_hash(key)
        abs_slot_pos = INDEX_HEADER_SIZE + key_hash % self.hash_slot_num * HASH_SLOT_SIZE
        slot_value = _SLOT.unpack_from(mm, abs_slot_pos)[0]
        if slot_value <= INVALID_INDEX or slot_value > h.index_count or h.index_count <= 1:
            return
        entries_at = self._entries_at()
        next_index = slot_value
        while len(phy_offsets) < max_num:
            key_hash_read, phy_offset_read, time_diff, prev_index = _ENTRY.unpack_from(
                mm, entries_at + next_index * INDEX_SIZE
            )
            if time_diff < 0:
                break
            time_read = h.begin_timestamp + time_diff * 1000
            if key_hash == key_hash_read and begin <= time_read <= end:
                phy_offsets.append(phy_offset_read)
            if (
                prev_index <= INVALID_INDEX
                or prev_index > h.index_count
                or prev_index == next_index
                or time_read < begin
            ):
                break
            next_index = prev_index

    def read_entry(self, number: int) -> tuple[int, int, int, int]:
        """Entry ``number`` as ``(keyHash, phyOffset, timeDiff, prevIndex)`` (inspection)."""
        return _ENTRY.unpack_from(self.mapped_file.mm, self._entries_at() + number * INDEX_SIZE)

    def read_slot(self, key: str) -> int:
        """The entry number ``key``'s slot points at, 0 if empty (inspection)."""
        return _SLOT.unpack_from(self.mapped_file.mm, self.slot_position(key))[0]

    def __repr__(self) -> str:
        h = self.index_header
        return (
            f"IndexFile({self.file_name!r}, entries={h.index_count - 1}, "
            f"slots_used={h.hash_slot_count}, phy={h.begin_phy_offset}..{h.end_phy_offset})"
        )
