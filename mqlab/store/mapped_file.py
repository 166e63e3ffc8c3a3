"""Fixed-size store files named by their start offset, each a memory-mapped file.

Mirrors ``MappedFile`` and ``MappedFileQueue`` (store, RocketMQ 4.9.3); docs/reference.md §4.1
(blank end-of-file marker) and §6 (file names, sizes).

As in RocketMQ, a store file is created at its full size (``RandomAccessFile`` +
``FileChannel#map``; here ``os.ftruncate`` + ``mmap``, so the file is sparse: no byte is
zero-filled) and mapped ``MAP_SHARED``:

* a **write** copies into the map, so the bytes are in the OS page cache at once: a
  process that dies (SIGKILL) loses nothing it wrote; the kernel writes dirty pages back
  on its own;
* a **flush** (``MappedByteBuffer#force``) is ``mmap.flush`` (``msync``) of the dirty
  range; ``flushed_position`` is the write position that force covered. Only an OS crash
  or a power cut loses what lies beyond it (``revert_to_disk`` models that);
* a **read** is a slice of the map (``view``, a read-only ``memoryview``): pull results
  hand those slices out without copying.

Positions: ``wrote_position`` (bytes appended), ``committed_position`` (equal to it: mqlab
has no transient store pool, so ``MappedFile#commit`` has nothing to move) and
``flushed_position`` (bytes forced).

What this module owns: positions, file creation, mapping, loading, truncation, deletion,
the power-cut model, and the offset → file arithmetic of ``MappedFileQueue``. What it must
not know: entry formats (the commit log and consume queue interpret the bytes) and time
(``last_modified_ms`` is stamped by the caller with the simulated time of the write, so
expiry decisions are deterministic; RocketMQ uses the OS file mtime).

Deviations, documented:

* RocketMQ refuses to load a file whose length differs from the mapped size; mqlab
  extends a shorter file (with zeros, sparse) and refuses a longer one. A short file is
  then read exactly as RocketMQ would read a preallocated file with a torn tail.
* Recovery's truncation also zeroes the bytes after the cut (RocketMQ only moves the
  positions), so a later, shorter write can never make a stale entry behind it look valid
  again, and it forces those zeros to disk.
* The power-cut model (``revert_to_disk``) relies on every write landing at or after
  ``flushed_position`` (files are append-only) and on the disk holding zeros after it
  (new files are sparse; truncation forces its zeros): what the disk holds is then the map
  up to ``flushed_position`` and zeros after it. A store loaded after a kill treats what it
  loads as on disk (the previous process's dirty pages are not tracked).
"""

from __future__ import annotations

import errno
import mmap
import os
from collections.abc import Callable
from functools import partial

from mqlab.common.util_all import offset_to_file_name

__all__ = ["MappedFile", "MappedFileQueue", "OS_PAGE_SIZE"]

#: MappedFile.OS_PAGE_SIZE: the unit of the "flush least pages" rule.
OS_PAGE_SIZE = 1024 * 4
#: ``mmap.flush`` needs an offset aligned to this (the page size; Windows: 64 KiB).
_FLUSH_ALIGN = mmap.ALLOCATIONGRANULARITY
_O_BINARY = getattr(os, "O_BINARY", 0)
_ZERO_PAGE = bytes(OS_PAGE_SIZE)
#: ``MappedFileQueue.flush``'s ``background``: ``(file_name, done)``, ``done()`` after the sync.
Background = Callable[[str, Callable[[], None]], None]


def _data_end(fd: int, length: int) -> int:
    """Where the file's last data extent ends: after it the file is a hole (zeros).

    ``SEEK_DATA`` / ``SEEK_HOLE`` where the OS has them; elsewhere (or where the file
    system refuses them) the whole length counts as data.
    """
    seek_data = getattr(os, "SEEK_DATA", None)
    seek_hole = getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        return length
    end = 0
    offset = 0
    while offset < length:
        try:
            data = os.lseek(fd, offset, seek_data)
        except OSError as e:
            if e.errno == errno.ENXIO:  # no data at or after ``offset``
                break
            return length
        offset = end = os.lseek(fd, data, seek_hole)
    return min(end, length)


def _map(fd: int, size: int) -> mmap.mmap:
    """A shared, writable map of the whole file (``FileChannel#map(READ_WRITE, 0, size)``)."""
    return mmap.mmap(fd, size, access=mmap.ACCESS_WRITE)


class MappedFile:
    """One store file, memory-mapped.

    Mirrors ``MappedFile`` (store, RocketMQ 4.9.3). ``mm`` is the map (``MappedByteBuffer``);
    ``view`` is a read-only memoryview over all of it, and ``view[a:b]`` is what
    ``selectMappedBuffer`` returns.
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
        "dirty_end",
        "_from_load",
    )

    def __init__(self, file_name: str, file_size: int, mm: mmap.mmap, dirty_end: int) -> None:
        self.file_name = file_name
        self.file_from_offset = int(os.path.basename(file_name))
        self.file_size = file_size
        self.mm = mm
        self.view = memoryview(mm).toreadonly()
        self.wrote_position = 0
        self.flushed_position = 0
        self.first_create_in_queue = False
        self.last_modified_ms = 0
        self.available = True
        #: how far the file may hold non-zero bytes besides ``[0, wrote_position)``: a
        #: loaded file's last data extent, or what a truncation left. Truncation and
        #: ``revert_to_disk`` zero up to ``max(dirty_end, wrote_position)``.
        self.dirty_end = dirty_end
        #: load() sets the positions to the full size (as RocketMQ does) although only
        #: ``dirty_end`` bytes may hold data; the first truncation needs to know.
        self._from_load = False

    # -- construction -------------------------------------------------------------------
    @classmethod
    def create(cls, file_name: str, file_size: int) -> MappedFile:
        """A new file of ``file_size`` bytes (sparse), mapped. Mirrors the ``MappedFile``
        constructor (``RandomAccessFile`` + ``FileChannel#map``).

        Raises:
            OSError: the file cannot be created or mapped (the caller answers
                CREATE_MAPEDFILE_FAILED).
        """
        fd = os.open(file_name, os.O_RDWR | os.O_CREAT | os.O_TRUNC | _O_BINARY, 0o644)
        try:
            os.ftruncate(fd, file_size)
            mm = _map(fd, file_size)
        finally:
            os.close(fd)
        return cls(file_name, file_size, mm, 0)

    @classmethod
    def load(cls, file_name: str, file_size: int) -> MappedFile:
        """An existing file, mapped; positions are set to the full size, as
        ``MappedFileQueue#load`` does, until recovery truncates them.

        A shorter file is first extended to ``file_size`` with zeros (module essay).

        Raises:
            OSError: the file cannot be opened or mapped.
            ValueError: the file is longer than ``file_size``.
        """
        fd = os.open(file_name, os.O_RDWR | _O_BINARY)
        try:
            length = os.fstat(fd).st_size
            if length > file_size:
                raise ValueError(
                    f"{file_name} is {length} bytes, longer than the mapped file size {file_size}"
                )
            if length < file_size:
                os.ftruncate(fd, file_size)
            dirty_end = _data_end(fd, length)
            mm = _map(fd, file_size)
        finally:
            os.close(fd)
        mf = cls(file_name, file_size, mm, dirty_end)
        mf.wrote_position = file_size
        mf.flushed_position = file_size
        mf._from_load = True
        return mf

    # -- writing --------------------------------------------------------------------------
    @property
    def committed_position(self) -> int:
        """``MappedFile#committedPosition``: without a transient store pool it is the
        write position (``commit`` has nothing to move)."""
        return self.wrote_position

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

    def flush(self, flush_least_pages: int = 0) -> int:
        """Force the dirty range to disk. Mirrors ``MappedFile#flush``
        (``MappedByteBuffer#force``: ``msync`` of the pages between the flushed and the
        write position). ``MappedFileQueue.flush`` with ``background`` hands the force to
        another thread instead (``mqlab serve``).

        Returns:
            The flushed position.

        Raises:
            OSError: the pages cannot be written.
        """
        if not self.available or not self.is_able_to_flush(flush_least_pages):
            return self.flushed_position
        value = self.wrote_position
        start = self.flushed_position - self.flushed_position % _FLUSH_ALIGN
        self.mm.flush(start, value - start)
        self.flushed_position = value
        return value

    def close(self) -> None:
        """Unmap (the process ends: ``shutdown``, a kill, a power cut). Idempotent.

        The map is released at once unless a pull result still holds a slice of it; then
        it goes when the last slice does.
        """
        self.available = False
        try:
            self.view.release()
            self.mm.close()
        except BufferError:
            pass  # a slice handed out is still alive; unmapped when it is collected

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

    # -- recovery, faults and deletion ----------------------------------------------------
    def _high_water(self) -> int:
        """The end of what may be non-zero (positions set by load() do not count)."""
        if self._from_load:
            return min(self.dirty_end, self.file_size)
        return min(max(self.dirty_end, self.wrote_position), self.file_size)

    def data_length(self) -> int:
        """One past the file's last non-zero byte (0 for a file of zeros): where its data
        ends, for recovery's trace."""
        end = self._high_water()
        mm = self.mm
        while end > 0:
            start = end - 1 - (end - 1) % OS_PAGE_SIZE
            chunk = mm[start:end].rstrip(b"\0")
            if chunk:
                return start + len(chunk)
            end = start
        return 0

    def _zero(self, start: int, end: int) -> int:
        """Zero the non-zero pages of ``[start, end)`` (untouched hole pages stay holes).

        Returns:
            How many bytes were zeroed.
        """
        mm = self.mm
        zeroed = 0
        pos = start
        while pos < end:
            stop = min(end, pos - pos % OS_PAGE_SIZE + OS_PAGE_SIZE)
            n = stop - pos
            if mm[pos:stop] != _ZERO_PAGE[:n]:
                mm[pos:stop] = _ZERO_PAGE[:n]
                zeroed += n
            pos = stop
        return zeroed

    def truncate_to(self, pos: int) -> None:
        """Forget everything from ``pos`` on: zero it in the map and force the zeros.

        Mirrors the position resets of ``MappedFileQueue#truncateDirtyFiles`` /
        ``ConsumeQueue#truncateDirtyLogicFiles`` (and the zeroing of the module essay).

        Raises:
            OSError: the zeros cannot be forced to disk.
        """
        end = self._high_water()
        self._from_load = False
        if end > pos and self._zero(pos, end):
            start = pos - pos % _FLUSH_ALIGN
            self.mm.flush(start, end - start)
        self.dirty_end = pos
        self.wrote_position = pos
        self.flushed_position = pos

    def revert_to_disk(self, keep: int | None = None) -> int:
        """A power cut: the page cache is lost, so the file goes back to what the disk
        holds — the bytes up to ``flushed_position`` (what force covered), zeros after.

        ``keep`` (at least ``flushed_position``) models pages the kernel had already
        written back on its own: bytes before it survive too, bytes from it on are lost.

        Returns:
            The number of bytes written but lost (from ``max(flushed, keep)`` to the write
            position).
        """
        cut = self.flushed_position if keep is None else max(keep, self.flushed_position)
        cut = min(cut, self.file_size)
        lost = max(0, self.wrote_position - cut)
        if lost:
            end = self._high_water()
            if end > cut:
                self._zero(cut, end)
            self.dirty_end = min(self.dirty_end, cut)
            self.wrote_position = cut
        self.flushed_position = min(self.flushed_position, cut)
        return lost

    def destroy(self) -> bool:
        """Unmap and delete the file. Mirrors ``MappedFile#destroy``."""
        self.close()
        try:
            os.remove(self.file_name)
        except FileNotFoundError:
            pass
        except PermissionError:  # Windows: a slice handed out still maps it
            return False
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

    __slots__ = ("store_path", "mapped_file_size", "mapped_files", "flushed_where")

    def __init__(self, store_path: str, mapped_file_size: int) -> None:
        self.store_path = store_path
        self.mapped_file_size = mapped_file_size
        self.mapped_files: list[MappedFile] = []
        self.flushed_where = 0

    def load(self) -> bool:
        """Open every file of the directory, in name order.

        Mirrors ``MappedFileQueue#load``. Names that are not 20-digit offsets are
        ignored. Returns False (RocketMQ's "load failed") if a file is longer than the
        mapped size or its name is not a multiple of it; the files mapped so far are
        unmapped again.
        """
        if not os.path.isdir(self.store_path):
            return True
        names = sorted(n for n in os.listdir(self.store_path) if len(n) == 20 and n.isdigit())
        for name in names:
            path = os.path.join(self.store_path, name)
            if not os.path.isfile(path) or int(name) % self.mapped_file_size:
                self.close()
                return False
            try:
                mf = MappedFile.load(path, self.mapped_file_size)
            except (OSError, ValueError):
                self.close()
                return False
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
    def flush(self, flush_least_pages: int = 0, background: Background | None = None) -> bool:
        """Force from ``flushed_where`` on. Mirrors ``MappedFileQueue#flush``, except that
        it carries on into the next file when one is completely flushed (RocketMQ's
        flush thread simply runs again).

        ``background`` (``DefaultMessageStore.background_sync``, set by ``mqlab serve``:
        ``mqlab.runtime.file_sync.FileSyncer.submit``) hands each file to force to another
        thread instead, as 4.9.3's flush services force from their own threads:
        ``background(file_name, done)``, and ``done()`` runs on the caller's thread once the
        file's sync returned. Only then do the file's ``flushed_position`` and
        ``flushed_where`` move (``MappedFile#flush`` sets ``flushedPosition`` after
        ``force()``), so neither ever covers bytes that are not yet on disk. A full file is
        handed over and the pass goes on to the next one.

        Returns:
            True if nothing was left to flush (with ``background``: nothing was handed over).

        Raises:
            OSError: a file cannot be written.
        """
        if background is not None:
            return self._hand_over(flush_least_pages, background)
        before = self.flushed_where
        while True:
            mf = self.find_mapped_file_by_offset(self.flushed_where, self.flushed_where == 0)
            if mf is None:
                break
            pos = mf.flush(flush_least_pages)
            self.flushed_where = mf.file_from_offset + pos
            if pos < self.mapped_file_size or mf is self.mapped_files[-1]:
                break
        return self.flushed_where == before

    def _hand_over(self, flush_least_pages: int, background: Background) -> bool:
        offset = self.flushed_where
        handed = False
        while True:
            mf = self.find_mapped_file_by_offset(offset, offset == 0)
            if mf is None:
                break
            if mf.available and mf.is_able_to_flush(flush_least_pages):
                background(mf.file_name, partial(self._synced, mf, mf.wrote_position))
                handed = True
            if not mf.is_full() or mf is self.mapped_files[-1]:
                break
            offset = mf.file_from_offset + self.mapped_file_size
        return not handed

    def _synced(self, mf: MappedFile, position: int) -> None:
        """A background sync of ``mf`` covered ``position``: move the flushed positions,
        ``flushed_where`` only across files synced to their end."""
        if mf.available and position > mf.flushed_position:
            mf.flushed_position = position
        while True:
            cur = self.find_mapped_file_by_offset(self.flushed_where, self.flushed_where == 0)
            if cur is None:
                return
            where = cur.file_from_offset + cur.flushed_position
            if where > self.flushed_where:
                self.flushed_where = where
            if cur.flushed_position < self.mapped_file_size or cur is self.mapped_files[-1]:
                return

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
        """Unmap every file (the process ends). Idempotent."""
        for mf in self.mapped_files:
            mf.close()

    def revert_to_disk(self, keep_offset: int | None = None) -> int:
        """A power cut: every file goes back to what its disk holds (``MappedFile#revert_to_disk``).

        ``keep_offset``: the kernel had written back everything before this queue offset
        (bytes already flushed survive whatever it says).

        Returns:
            The bytes written but lost, over all files.
        """
        lost = 0
        for mf in self.mapped_files:
            keep = None if keep_offset is None else max(0, keep_offset - mf.file_from_offset)
            lost += mf.revert_to_disk(keep)
        self.flushed_where = min(self.flushed_where, self.get_max_offset())
        return lost

    def destroy(self) -> None:
        """Delete every file. Mirrors ``MappedFileQueue#destroy``."""
        for mf in self.mapped_files:
            mf.destroy()
        self.mapped_files.clear()
        self.flushed_where = 0
