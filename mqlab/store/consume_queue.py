"""One consume queue: the 20-byte index of one (topic, queue id) into the commit log.

Mirrors ``ConsumeQueue`` (store, RocketMQ 4.9.3); docs/reference.md §6, §10.1 step 4.

A unit is ``commit-log offset (int64) | entry size (int32) | tags code (int64)``,
big-endian; unit ``n`` (the message with logical offset ``n``) sits at byte ``20·n``,
in the file ``consumequeue/<topic>/<queueId>/<20-digit start byte offset>``. The tags
code is Java's ``String#hashCode`` of TAGS (``TagA`` → 2598919), or, in
``SCHEDULE_TOPIC_XXXX``, the delivery timestamp.

What this module owns: unit bytes, min / max logical offsets, the reads ``getMessage``
needs (``get_index_buffer``: from an offset to the end of *that* file's written part,
never crossing into the next file), the time search, and its own recovery and
truncation. What it must not know: the commit-log format. Store timestamps are looked
up through a function the store passes in.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator

from mqlab.store.mapped_file import Background, MappedFile, MappedFileQueue

__all__ = ["ConsumeQueue", "CQ_STORE_UNIT_SIZE", "CQ_UNIT"]

#: ConsumeQueue.CQ_STORE_UNIT_SIZE (docs/reference.md §6).
CQ_STORE_UNIT_SIZE = 20
#: NOTE: performance: one precompiled Struct packs / unpacks a whole unit.
CQ_UNIT = struct.Struct(">qiq")
#: fillPreBlank's filler unit: offset 0, size Integer.MAX_VALUE, tags code 0.
_PRE_BLANK_UNIT = CQ_UNIT.pack(0, 0x7FFFFFFF, 0)


class ConsumeQueue:
    """Mirrors ``ConsumeQueue`` (store, RocketMQ 4.9.3).

    ``max_physic_offset`` is the end (offset + size) of the last indexed entry, -1 for an
    empty queue; ``min_logic_offset`` is a *byte* offset (min offset × 20).
    """

    __slots__ = (
        "topic",
        "queue_id",
        "store_path",
        "mapped_file_size",
        "mapped_file_queue",
        "max_physic_offset",
        "min_logic_offset",
    )

    def __init__(self, topic: str, queue_id: int, store_path: str, mapped_file_size: int) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.store_path = store_path
        self.mapped_file_size = mapped_file_size
        queue_dir = os.path.join(store_path, topic, str(queue_id))
        self.mapped_file_queue = MappedFileQueue(queue_dir, mapped_file_size)
        self.max_physic_offset = -1
        self.min_logic_offset = 0

    def load(self) -> bool:
        """Mirrors ``ConsumeQueue#load``."""
        return self.mapped_file_queue.load()

    def recover(self) -> int:
        """Find the end of the valid units, from the third-last file on.

        Mirrors ``ConsumeQueue#recover``: a unit is valid if offset ≥ 0 and size > 0;
        the first invalid unit ends the queue and everything after it is truncated.

        Returns:
            The byte offset (in the queue) where the valid units end.
        """
        mfs = self.mapped_file_queue.mapped_files
        if not mfs:
            return 0
        index = max(0, len(mfs) - 3)
        size = self.mapped_file_size
        mf = mfs[index]
        process_offset = mf.file_from_offset
        mapped_file_offset = 0
        unpack = CQ_UNIT.unpack_from
        while True:
            mapped_file_offset = 0
            for i in range(0, size, CQ_STORE_UNIT_SIZE):
                offset, sz, _tags = unpack(mf.mm, i)
                if offset >= 0 and sz > 0:
                    mapped_file_offset = i + CQ_STORE_UNIT_SIZE
                    self.max_physic_offset = offset + sz
                else:
                    break
            if mapped_file_offset == size:
                index += 1
                if index >= len(mfs):
                    break
                mf = mfs[index]
                process_offset = mf.file_from_offset
            else:
                break
        process_offset += mapped_file_offset
        self.mapped_file_queue.flushed_where = process_offset
        self.mapped_file_queue.truncate_dirty_files(process_offset)
        return process_offset

    # -- dispatch (CommitLogDispatcherBuildConsumeQueue) ----------------------------------
    def put_message_position_info(
        self, offset: int, size: int, tags_code: int, cq_offset: int, store_timestamp: int
    ) -> bool:
        """Append the unit of logical offset ``cq_offset``.

        Mirrors ``ConsumeQueue#putMessagePositionInfo``: an entry at or below
        ``max_physic_offset`` was already indexed (rebuilding is idempotent); a first
        file created for a non-zero offset is filled with blank units up to it and the
        queue's min offset starts there; an offset already written is skipped.

        Returns:
            True if the unit is indexed (now or before).

        Raises:
            OSError: a new consume-queue file cannot be created.
        """
        if offset + size <= self.max_physic_offset:
            return True
        expect_logic_offset = cq_offset * CQ_STORE_UNIT_SIZE
        mfq = self.mapped_file_queue
        # NOTE: performance: getLastMappedFile's common case (a last file with room)
        # inlined; ~0.15 µs per dispatched entry.
        mfs = mfq.mapped_files
        mf = mfs[-1] if mfs else None
        if mf is None or mf.wrote_position == mf.file_size:
            mf = mfq.get_last_mapped_file_or_create(expect_logic_offset)
        if mf.first_create_in_queue and cq_offset != 0 and mf.wrote_position == 0:
            self.min_logic_offset = expect_logic_offset
            mfq.flushed_where = expect_logic_offset
            self._fill_pre_blank(mf, expect_logic_offset)
        if cq_offset != 0:
            current_logic_offset = mf.wrote_position + mf.file_from_offset
            if expect_logic_offset < current_logic_offset:
                return True  # "Build consume queue repeatedly"
            # RocketMQ only logs "[BUG]logic queue order maybe wrong" when they differ.
        self.max_physic_offset = offset + size
        # NOTE: performance: pack straight into the map (no 20-byte temp object).
        pos = mf.wrote_position
        CQ_UNIT.pack_into(mf.mm, pos, offset, size, tags_code)
        pos += CQ_STORE_UNIT_SIZE
        mf.wrote_position = pos
        mf.last_modified_ms = store_timestamp
        return True

    def _fill_pre_blank(self, mf: MappedFile, until_where: int) -> None:
        """Mirrors ``ConsumeQueue#fillPreBlank``."""
        until = until_where % self.mapped_file_size
        for _ in range(0, until, CQ_STORE_UNIT_SIZE):
            mf.append_message(_PRE_BLANK_UNIT)

    # -- reads ----------------------------------------------------------------------------
    def get_index_buffer(self, start_index: int) -> tuple[MappedFile, int, int] | None:
        """``(file, start byte, end byte)`` of the units from ``start_index`` to the end of
        the written part of the file holding it; None if there is no such unit.

        Mirrors ``ConsumeQueue#getIndexBuffer`` (a ``SelectMappedBufferResult``; mqlab
        returns the bounds and the caller unpacks from ``file.mm``).
        """
        offset = start_index * CQ_STORE_UNIT_SIZE
        if offset >= self.min_logic_offset:
            mf = self.mapped_file_queue.find_mapped_file_by_offset(offset)
            if mf is not None and mf.available:  # unmapped (store down): like a failed hold()
                pos = offset % self.mapped_file_size
                if 0 <= pos < mf.wrote_position:
                    return mf, pos, mf.wrote_position
        return None

    def get_unit(self, index: int) -> tuple[int, int, int] | None:
        """``(commit-log offset, size, tags code)`` of logical offset ``index``, or None."""
        buf = self.get_index_buffer(index)
        if buf is None:
            return None
        mf, pos, _end = buf
        return CQ_UNIT.unpack_from(mf.mm, pos)

    def get_last_offset(self) -> int:
        """End (offset + size) of the last unit of the last file, -1 if there is none.

        Mirrors ``ConsumeQueue#getLastOffset`` (store, RocketMQ 4.9.3): from the last
        written unit, read on while units hold ``offset >= 0`` and ``size > 0`` (a
        pre-blank filler unit counts: offset 0, size ``Integer.MAX_VALUE``).
        """
        last = -1
        mf = self.mapped_file_queue.get_last_mapped_file()
        if mf is None or not mf.available:
            return last
        pos = max(0, mf.wrote_position - CQ_STORE_UNIT_SIZE)
        while pos + CQ_STORE_UNIT_SIZE <= self.mapped_file_size:
            offset, size, _tags = CQ_UNIT.unpack_from(mf.mm, pos)
            if offset < 0 or size <= 0:
                break
            last = offset + size
            pos += CQ_STORE_UNIT_SIZE
        return last

    def roll_next_file(self, index: int) -> int:
        """The first logical offset of the next file. Mirrors ``ConsumeQueue#rollNextFile``."""
        total_units_in_file = self.mapped_file_size // CQ_STORE_UNIT_SIZE
        return index + total_units_in_file - index % total_units_in_file

    def get_min_offset_in_queue(self) -> int:
        """Mirrors ``ConsumeQueue#getMinOffsetInQueue``."""
        return self.min_logic_offset // CQ_STORE_UNIT_SIZE

    def get_max_offset_in_queue(self) -> int:
        """The next logical offset to be written (0 for an empty queue).

        Mirrors ``ConsumeQueue#getMaxOffsetInQueue``; docs/reference.md §6.
        """
        return self.mapped_file_queue.get_max_offset() // CQ_STORE_UNIT_SIZE

    def get_message_total_in_queue(self) -> int:
        return self.get_max_offset_in_queue() - self.get_min_offset_in_queue()

    def get_offset_in_queue_by_time(
        self,
        timestamp: int,
        store_time_lookup: Callable[[int, int], int],
        min_physic_offset: int,
    ) -> int:
        """The logical offset of the message stored at (or nearest to) ``timestamp``.

        Mirrors ``ConsumeQueue#getOffsetInQueueByTime``; docs/reference.md §6: pick the first file
        last written at or after ``timestamp`` (else the last), then binary-search its
        units by store time: exact match → that unit; otherwise the nearer of the last
        unit below and the first above (a tie goes to the one below); all below → the
        last unit; all above → the first. Units pointing below ``min_physic_offset`` are
        skipped. A failed store-time lookup (-1) gives 0.

        Args:
            timestamp: ms since the epoch (simulated time).
            store_time_lookup: ``(commit-log offset, size) → store timestamp or -1``.
            min_physic_offset: the commit log's min offset.
        """
        mf = self.mapped_file_queue.get_mapped_file_by_time(timestamp)
        if mf is None or mf.wrote_position <= 0:
            return 0
        unit = CQ_STORE_UNIT_SIZE
        low = (
            self.min_logic_offset - mf.file_from_offset
            if self.min_logic_offset > mf.file_from_offset
            else 0
        )
        high = mf.wrote_position - unit
        target_offset = left_offset = right_offset = -1
        left_index_value = right_index_value = -1
        while high >= low:
            mid_offset = (low + high) // (2 * unit) * unit
            phy_offset, size, _tags = CQ_UNIT.unpack_from(mf.mm, mid_offset)
            if phy_offset < min_physic_offset:
                low = mid_offset + unit
                left_offset = mid_offset
                continue
            store_time = store_time_lookup(phy_offset, size)
            if store_time < 0:
                return 0
            if store_time == timestamp:
                target_offset = mid_offset
                break
            if store_time > timestamp:
                high = mid_offset - unit
                right_offset = mid_offset
                right_index_value = store_time
            else:
                low = mid_offset + unit
                left_offset = mid_offset
                left_index_value = store_time
        if target_offset != -1:
            offset = target_offset
        elif left_index_value == -1:
            offset = right_offset
        elif right_index_value == -1:
            offset = left_offset
        else:
            offset = (
                right_offset
                if abs(timestamp - left_index_value) > abs(timestamp - right_index_value)
                else left_offset
            )
        # Java's long division truncates toward zero: with every unit below the commit log's
        # min (offset -1) the first file answers 0, a later one its previous file's last unit
        total = mf.file_from_offset + offset
        return total // unit if total >= 0 else -(-total // unit)

    def iter_units(self, start_index: int | None = None) -> Iterator[tuple[int, int, int, int]]:
        """``(logical offset, commit-log offset, size, tags code)`` of every written unit
        from ``start_index`` (default: the min offset). For the lab's inspectors."""
        index = self.get_min_offset_in_queue() if start_index is None else start_index
        max_offset = self.get_max_offset_in_queue()
        while index < max_offset:
            buf = self.get_index_buffer(index)
            if buf is None:
                index = self.roll_next_file(index)
                continue
            mf, pos, end = buf
            for p in range(pos, end, CQ_STORE_UNIT_SIZE):
                phy, size, tags = CQ_UNIT.unpack_from(mf.mm, p)
                yield index, phy, size, tags
                index += 1

    # -- truncation and expiry ------------------------------------------------------------
    def truncate_dirty_logic_files(self, phy_offset: int) -> int:
        """Drop every unit pointing at or beyond commit-log offset ``phy_offset``.

        Mirrors ``ConsumeQueue#truncateDirtyLogicFiles``: walk back from the last file;
        a file whose first unit is already dirty is deleted.

        Returns:
            The number of units removed.
        """
        before = self.get_max_offset_in_queue()
        size = self.mapped_file_size
        self.max_physic_offset = phy_offset
        mfq = self.mapped_file_queue
        while True:
            mf = mfq.get_last_mapped_file()
            if mf is None:
                break
            limit = min(mf.wrote_position, size)
            keep = 0
            deleted = False
            for i in range(0, size, CQ_STORE_UNIT_SIZE):
                if i >= limit:
                    break
                offset, sz, _tags = CQ_UNIT.unpack_from(mf.mm, i)
                if i == 0:
                    if offset >= phy_offset:
                        mfq.delete_last_mapped_file()
                        deleted = True
                        break
                    keep = CQ_STORE_UNIT_SIZE
                    self.max_physic_offset = offset + sz
                elif offset >= 0 and sz > 0:
                    if offset >= phy_offset:
                        break
                    keep = i + CQ_STORE_UNIT_SIZE
                    self.max_physic_offset = offset + sz
                else:
                    break
            if deleted:
                continue
            mf.truncate_to(keep)
            if mfq.flushed_where > mf.file_from_offset + keep:
                mfq.flushed_where = mf.file_from_offset + keep
            break
        return before - self.get_max_offset_in_queue()

    def delete_expired_file(self, min_commit_log_offset: int) -> int:
        """Delete leading files that only index expired entries, then correct the min.

        Mirrors ``ConsumeQueue#deleteExpiredFile``.

        Returns:
            The number of files deleted.
        """
        deleted = self.mapped_file_queue.delete_expired_file_by_offset(
            min_commit_log_offset, CQ_STORE_UNIT_SIZE
        )
        self.correct_min_offset(min_commit_log_offset)
        return len(deleted)

    def correct_min_offset(self, phy_min_offset: int) -> None:
        """The min offset becomes the first unit (of the first file) pointing at or after
        ``phy_min_offset``. Mirrors ``ConsumeQueue#correctMinOffset``."""
        mf = self.mapped_file_queue.get_first_mapped_file()
        if mf is None:
            return
        for i in range(0, mf.wrote_position, CQ_STORE_UNIT_SIZE):
            offset_py = CQ_UNIT.unpack_from(mf.mm, i)[0]
            if offset_py >= phy_min_offset:
                self.min_logic_offset = mf.file_from_offset + i
                break

    def flush(self, flush_least_pages: int = 0, background: Background | None = None) -> bool:
        """Mirrors ``ConsumeQueue#flush`` (``background``: see ``MappedFileQueue.flush``)."""
        return self.mapped_file_queue.flush(flush_least_pages, background)

    def destroy(self) -> None:
        """Delete every file. Mirrors ``ConsumeQueue#destroy``."""
        self.max_physic_offset = -1
        self.min_logic_offset = 0
        self.mapped_file_queue.destroy()

    def __repr__(self) -> str:
        return (
            f"ConsumeQueue(topic={self.topic!r}, queue_id={self.queue_id}, "
            f"min={self.get_min_offset_in_queue()}, max={self.get_max_offset_in_queue()})"
        )
