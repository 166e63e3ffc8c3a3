"""Fixed-size store files named by their start offset, with an in-memory mirror.

Mirrors ``MappedFile`` and ``MappedFileQueue`` (store, RocketMQ 4.9.3); facts §4.1
(blank end-of-file marker) and §6 (file names, sizes).

RocketMQ memory-maps each file (1 GiB for the commit log, 6,000,000 bytes for a consume
queue) and lets the OS page cache hold it; a flush service forces dirty pages to disk.
mqlab keeps the same split with plain Python:

* the **mirror** is an anonymous ``mmap`` of the file's full size (zero pages cost no
  memory until written, and it never moves, so read-only ``memoryview`` slices handed
  to pull responses stay valid). Every read comes from the mirror, as from the page
  cache;
* the **file** on disk holds what has been flushed: ``flush`` writes the range
  ``[flushed_position, wrote_position)`` with ``os.pwrite``. Files are not preallocated:
  a file is as long as its flushed data, and a full commit-log file is exactly
  ``mapped_file_size`` long because the blank marker's padding is flushed too. Data
  written but not flushed is lost if the process dies without ``flush`` (a power cut
  on a real broker; recovery then truncates to what reached the disk). The commit
  log keeps its active file open between flushes; consume queues reopen per flush.

What this module owns: positions (wrote / flushed), file creation, loading, truncation
and deletion, and the offset → file arithmetic of ``MappedFileQueue``. What it must not
know: entry formats (the commit log and consume queue interpret the bytes) and time
(``last_modified_ms`` is stamped by the caller with the simulated time of the write, so
expiry decisions are deterministic; RocketMQ uses the OS file mtime).

Deviation, documented: RocketMQ refuses to load a file whose length differs from the
mapped size; mqlab accepts shorter files (they are simply not full: the active file, or
a torn one that recovery then truncates) and refuses longer ones.
"""

from __future__ import annotations

import mmap
import os

from mqlab.common.util_all import offset_to_file_name

__all__ = ["MappedFile", "MappedFileQueue", "OS_PAGE_SIZE"]

#: MappedFile.OS_PAGE_SIZE: the unit of the "flush least pages" rule.
OS_PAGE_SIZE = 1024 * 4


class MappedFile:
    """One store file and its in-memory mirror.

    Mirrors ``MappedFile`` (store, RocketMQ 4.9.3). ``view`` is a read-only memoryview
    over the whole mirror; ``view[a:b]`` is what ``selectMappedBuffer`` returns.
    """

    __slots__ = (
        "file_name",
        "file_from_offset",
        "file_size",
        "mm",
        "view",
        "wrote_position",
        "flushed_position",
        "first_create_in_queue",
        "last_modified_ms",
        "available",
        "disk_length",
        "keep_fd_open",
        "_fd",
        "_positions_from_load",
    )

    def __init__(self, file_name: str, file_size: int) -> None:
        self.file_name = file_name
        self.file_from_offset = int(os.path.basename(file_name))
        self.file_size = file_size
        self.mm = mmap.mmap(-1, file_size)
        self.view = memoryview(self.mm).toreadonly()
        self.wrote_position = 0
        self.flushed_position = 0
        self.first_create_in_queue = False
        self.last_modified_ms = 0
        self.available = True
        self.disk_length = 0
        #: keep the file open between flushes (the commit log's active file); consume
        #: queues reopen per flush so a broker with many queues stays under fd limits.
        self.keep_fd_open = False
        self._fd: int | None = None
        #: load() sets the positions to the full size (as RocketMQ does) although only
        #: ``disk_length`` bytes hold data; truncate_to needs to know.
        self._positions_from_load = False

    # -- construction -------------------------------------------------------------------
    @classmethod
    def create(cls, file_name: str, file_size: int) -> MappedFile:
        """A new empty file (created on disk now, as RocketMQ's constructor does).

        Raises:
            OSError: the file cannot be created (the caller answers
                CREATE_MAPEDFILE_FAILED).
        """
        fd = os.open(file_name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.close(fd)
        return cls(file_name, file_size)

    @classmethod
    def load(cls, file_name: str, file_size: int) -> MappedFile:
        """An existing file read into the mirror; positions are set to the full size,
        as ``MappedFileQueue#load`` does, until recovery truncates them.

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is longer than ``file_size``.
        """
        length = os.path.getsize(file_name)
        if length > file_size:
            raise ValueError(
                f"{file_name} is {length} bytes, longer than the mapped file size {file_size}"
            )
        mf = cls(file_name, file_size)
        if length:
            with open(file_name, "rb") as f, memoryview(mf.mm) as mv:
                n = f.readinto(mv[:length])
            assert n == length, f"short read of {file_name}: {n} of {length}"
        mf.disk_length = length
        mf.wrote_position = file_size
        mf.flushed_position = file_size
        mf._positions_from_load = True
        return mf

    # -- writing --------------------------------------------------------------------------
    def is_full(self) -> bool:
        return self.wrote_position == self.file_size

    def append_message(self, data: bytes | bytearray | memoryview) -> bool:
        """Copy ``data`` at the write position. Mirrors ``MappedFile#appendMessage(byte[])``.

        Returns:
            False (and writes nothing) if it does not fit.
        """
        pos = self.wrote_position
        end = pos + len(data)
        if end > self.file_size:
            return False
        self.mm[pos:end] = data
        self.wrote_position = end
        return True

    def is_able_to_flush(self, flush_least_pages: int) -> bool:
        """Mirrors ``MappedFile#isAbleToFlush``: full, or at least N dirty pages (N > 0),
        or anything dirty (N == 0)."""
        flush = self.flushed_position
        write = self.wrote_position
        if self.is_full():
            return write > flush
        if flush_least_pages > 0:
            return (write // OS_PAGE_SIZE) - (flush // OS_PAGE_SIZE) >= flush_least_pages
        return write > flush

    def flush(self, flush_least_pages: int = 0, *, sync: bool = False) -> int:
        """Write the dirty range to disk. Mirrors ``MappedFile#flush``.

        ``sync`` also fsyncs (``MappedByteBuffer#force``): SYNC_FLUSH acknowledges a send
        only once its bytes are on the disk, not just in the OS page cache.

        Returns:
            The flushed position.

        Raises:
            OSError: the file cannot be written.
        """
        if not self.available or not self.is_able_to_flush(flush_least_pages):
            return self.flushed_position
        start = self.flushed_position
        end = self.wrote_position
        # NOTE: performance: reopening the file costs ~15 µs per flush on a VM; the
        # commit log keeps its active file open until it is full and flushed.
        fd = self._fd
        if fd is None:
            fd = os.open(self.file_name, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            data = self.view[start:end]
            while data:
                n = os.pwrite(fd, data, start)
                start += n
                data = data[n:]
            if sync:
                os.fsync(fd)
        finally:
            if self.keep_fd_open and end < self.file_size:
                self._fd = fd
            else:
                self._fd = None
                os.close(fd)
        self.flushed_position = end
        if end > self.disk_length:
            self.disk_length = end
        return end

    def close(self) -> None:
        """Close the file handle kept between flushes, if any."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    # -- reading --------------------------------------------------------------------------
    def select_mapped_buffer(self, pos: int, size: int) -> memoryview | None:
        """``size`` bytes at ``pos`` if they have been written, else None.

        Mirrors ``MappedFile#selectMappedBuffer(int, int)``.
        """
        if pos >= 0 and pos + size <= self.wrote_position:
            return self.view[pos : pos + size]
        return None

    def select_mapped_buffer_to_end(self, pos: int) -> memoryview | None:
        """From ``pos`` to the write position, or None if ``pos`` is not before it.

        Mirrors ``MappedFile#selectMappedBuffer(int)``.
        """
        if 0 <= pos < self.wrote_position:
            return self.view[pos : self.wrote_position]
        return None

    # -- recovery and deletion ------------------------------------------------------------
    def truncate_to(self, pos: int) -> None:
        """Forget everything from ``pos`` on: zero the mirror and cut the file on disk.

        Mirrors the position resets of ``MappedFileQueue#truncateDirtyFiles`` /
        ``ConsumeQueue#truncateDirtyLogicFiles``. RocketMQ only moves the positions;
        mqlab also zeroes the stale bytes so that a later, shorter write can never make
        an old entry behind it look valid again.

        Raises:
            OSError: the file on disk cannot be truncated.
        """
        # NOTE: performance: zero only what may hold data (touching a whole 6 MB
        # consume-queue mirror would make every loaded queue cost its full size in RAM).
        if self._positions_from_load:
            end = self.disk_length
            self._positions_from_load = False
        else:
            end = max(self.wrote_position, self.disk_length)
        end = min(end, self.file_size)
        if end > pos:
            self.mm[pos:end] = bytes(end - pos)
        if self.disk_length > pos:
            os.truncate(self.file_name, pos)
            self.disk_length = pos
        self.wrote_position = pos
        self.flushed_position = pos

    def destroy(self) -> bool:
        """Delete the file. Mirrors ``MappedFile#destroy`` (the mirror is dropped when the
        last pull result that still views it is gone)."""
        self.available = False
        self.close()
        try:
            os.remove(self.file_name)
        except FileNotFoundError:
            pass
        return True

    def __repr__(self) -> str:
        return (
            f"MappedFile({os.path.basename(self.file_name)}, wrote={self.wrote_position}, "
            f"flushed={self.flushed_position}, size={self.file_size})"
        )


class MappedFileQueue:
    """The files of one commit log or one consume queue, in offset order.

    Mirrors ``MappedFileQueue`` (store, RocketMQ 4.9.3). ``mapped_files`` is a plain
    list (files only ever join at the end and leave at the front or the back).
    """

    __slots__ = (
        "store_path",
        "mapped_file_size",
        "mapped_files",
        "flushed_where",
        "keep_fd_open",
    )

    def __init__(
        self, store_path: str, mapped_file_size: int, *, keep_fd_open: bool = False
    ) -> None:
        self.store_path = store_path
        self.mapped_file_size = mapped_file_size
        self.mapped_files: list[MappedFile] = []
        self.flushed_where = 0
        self.keep_fd_open = keep_fd_open

    def load(self) -> bool:
        """Open every file of the directory, in name order.

        Mirrors ``MappedFileQueue#load``. Names that are not 20-digit offsets are
        ignored. Returns False (RocketMQ's "load failed") if a file is longer than the
        mapped size or its name is not a multiple of it.
        """
        if not os.path.isdir(self.store_path):
            return True
        names = sorted(n for n in os.listdir(self.store_path) if len(n) == 20 and n.isdigit())
        for name in names:
            path = os.path.join(self.store_path, name)
            if not os.path.isfile(path) or int(name) % self.mapped_file_size:
                return False
            try:
                mf = MappedFile.load(path, self.mapped_file_size)
            except (OSError, ValueError):
                return False
            mf.keep_fd_open = self.keep_fd_open
            self.mapped_files.append(mf)
        return True

    # -- lookup ---------------------------------------------------------------------------
    def get_first_mapped_file(self) -> MappedFile | None:
        return self.mapped_files[0] if self.mapped_files else None

    def get_last_mapped_file(self) -> MappedFile | None:
        return self.mapped_files[-1] if self.mapped_files else None

    def get_last_mapped_file_or_create(self, start_offset: int) -> MappedFile:
        """The last file, or a new one if there is none or the last is full.

        Mirrors ``MappedFileQueue#getLastMappedFile(long startOffset, true)``.

        Raises:
            OSError: the new file cannot be created.
        """
        last = self.mapped_files[-1] if self.mapped_files else None
        if last is None:
            create_offset = start_offset - (start_offset % self.mapped_file_size)
        elif last.is_full():
            create_offset = last.file_from_offset + self.mapped_file_size
        else:
            return last
        os.makedirs(self.store_path, exist_ok=True)
        path = os.path.join(self.store_path, offset_to_file_name(create_offset))
        mf = MappedFile.create(path, self.mapped_file_size)
        mf.keep_fd_open = self.keep_fd_open
        if not self.mapped_files:
            mf.first_create_in_queue = True
        self.mapped_files.append(mf)
        return mf

    def find_mapped_file_by_offset(
        self, offset: int, return_first_on_not_found: bool = False
    ) -> MappedFile | None:
        """The file holding byte ``offset``.

        Mirrors ``MappedFileQueue#findMappedFileByOffset``: index arithmetic first, then
        a scan (files may be missing in the middle), else the first file if asked.
        """
        mfs = self.mapped_files
        if not mfs:
            return None
        size = self.mapped_file_size
        first = mfs[0]
        last = mfs[-1]
        if offset < first.file_from_offset or offset >= last.file_from_offset + size:
            return first if return_first_on_not_found else None
        index = offset // size - first.file_from_offset // size
        if 0 <= index < len(mfs):
            mf = mfs[index]
            if mf.file_from_offset <= offset < mf.file_from_offset + size:
                return mf
        for mf in mfs:
            if mf.file_from_offset <= offset < mf.file_from_offset + size:
                return mf
        return first if return_first_on_not_found else None

    def get_mapped_file_by_time(self, timestamp: int) -> MappedFile | None:
        """The first file last written at or after ``timestamp``, else the last file.

        Mirrors ``MappedFileQueue#getMappedFileByTime`` (``last_modified_ms`` stands for
        the file's mtime).
        """
        for mf in self.mapped_files:
            if mf.last_modified_ms >= timestamp:
                return mf
        return self.mapped_files[-1] if self.mapped_files else None

    def get_min_offset(self) -> int:
        """Mirrors ``MappedFileQueue#getMinOffset``: first file's start, -1 if none."""
        return self.mapped_files[0].file_from_offset if self.mapped_files else -1

    def get_max_offset(self) -> int:
        """Mirrors ``MappedFileQueue#getMaxOffset``: last file's start + write position."""
        if not self.mapped_files:
            return 0
        last = self.mapped_files[-1]
        return last.file_from_offset + last.wrote_position

    def remain_how_many_data_to_flush(self) -> int:
        return self.get_max_offset() - self.flushed_where

    # -- flushing -------------------------------------------------------------------------
    def flush(self, flush_least_pages: int = 0, *, sync: bool = False) -> bool:
        """Flush from ``flushed_where`` on (``sync``: fsync too). Mirrors ``MappedFileQueue#flush``, except that
        it carries on into the next file when one is completely flushed (RocketMQ's
        flush thread simply runs again).

        Returns:
            True if nothing was left to flush.

        Raises:
            OSError: a file cannot be written.
        """
        before = self.flushed_where
        while True:
            mf = self.find_mapped_file_by_offset(self.flushed_where, self.flushed_where == 0)
            if mf is None:
                break
            pos = mf.flush(flush_least_pages, sync=sync)
            self.flushed_where = mf.file_from_offset + pos
            if pos < self.mapped_file_size or mf is self.mapped_files[-1]:
                break
        return self.flushed_where == before

    # -- recovery and deletion ------------------------------------------------------------
    def truncate_dirty_files(self, offset: int) -> list[str]:
        """Cut the file holding ``offset`` there and delete every file after it.

        Mirrors ``MappedFileQueue#truncateDirtyFiles``.

        Returns:
            The names of the deleted files.
        """
        removed: list[MappedFile] = []
        for mf in self.mapped_files:
            tail = mf.file_from_offset + self.mapped_file_size
            if tail > offset:
                if offset >= mf.file_from_offset:
                    mf.truncate_to(offset % self.mapped_file_size)
                else:
                    mf.destroy()
                    removed.append(mf)
        for mf in removed:
            self.mapped_files.remove(mf)
        return [os.path.basename(mf.file_name) for mf in removed]

    def delete_last_mapped_file(self) -> None:
        """Mirrors ``MappedFileQueue#deleteLastMappedFile``."""
        if self.mapped_files:
            self.mapped_files.pop().destroy()

    def delete_expired_file_by_time(
        self, expired_time_ms: int, now_ms: int, clean_immediately: bool
    ) -> list[MappedFile]:
        """Delete leading files whose last write is ``expired_time_ms`` old (never the last).

        Mirrors ``MappedFileQueue#deleteExpiredFileByTime``: stops at the first file
        that is still live ("avoid deleting files in the middle").
        """
        deleted: list[MappedFile] = []
        for mf in self.mapped_files[:-1]:
            if now_ms >= mf.last_modified_ms + expired_time_ms or clean_immediately:
                mf.destroy()
                deleted.append(mf)
            else:
                break
        del self.mapped_files[: len(deleted)]
        return deleted

    def delete_expired_file_by_offset(self, offset: int, unit_size: int) -> list[MappedFile]:
        """Delete leading consume-queue files whose last unit points below ``offset``.

        Mirrors ``MappedFileQueue#deleteExpiredFileByOffset`` (never the last file).
        """
        from mqlab.store.consume_queue import CQ_UNIT  # local: avoid an import cycle

        deleted: list[MappedFile] = []
        for mf in self.mapped_files[:-1]:
            last_unit = self.mapped_file_size - unit_size
            if last_unit + unit_size <= mf.wrote_position:
                max_offset_in_logic_queue = CQ_UNIT.unpack_from(mf.mm, last_unit)[0]
                destroy = max_offset_in_logic_queue < offset
            elif not mf.available:
                destroy = True
            else:
                break
            if not destroy:
                break
            mf.destroy()
            deleted.append(mf)
        del self.mapped_files[: len(deleted)]
        return deleted

    def close(self) -> None:
        """Close every file handle kept open between flushes (shutdown)."""
        for mf in self.mapped_files:
            mf.close()

    def destroy(self) -> None:
        """Delete every file. Mirrors ``MappedFileQueue#destroy``."""
        for mf in self.mapped_files:
            mf.destroy()
        self.mapped_files.clear()
        self.flushed_where = 0
