"""A DLedger node's files on a real disk: ``currterm``, the data and index files, ``checkpoint``.

Mirrors what ``DLedgerMmapFileStore#startup`` (``load`` + ``recover``), ``#persistCheckPoint``
and ``MemberState#persistTerm`` (through ``IOUtils#string2File``) do with the node's directory
``<storeBaseDir>/dledger-<selfId>`` (DLedger 0.2.3); mechanisms.md "DLedger replication"
(recovery).

The simulation keeps a node's bytes in memory across a kill (``DLedgerServer.disk`` and the
store's ``data``/``index``). A process (``python -m mqlab serve``) loses its memory, so its
nodes write through to files and read them back on start:

1. ``FileDisk``: the node's ``disk`` mapping (path → text) on the filesystem; each write goes
   to ``<path>.tmp`` and replaces the file (``IOUtils#string2File``);
2. ``StoreFiles``: the data files ``data/<offset>`` (``mappedFileSizeForEntryData`` each,
   named by their first position: ``00000000000000000000``, then the file size, ...) and the
   index file ``index/00000000000000000000``, written through at every change of the store's
   bytes (an append, a truncate, a power cut's loss). The OS holds the bytes once ``write``
   returns, so a killed process loses nothing, as 0.2.3's mmap'd pages survive a killed JVM.
   The last data file is its written part, not 0.2.3's full ``mappedFileSize`` of zeros after
   it; a data file before it is full, its end a blank (``MmapFileList#preAppend``);
3. ``recover``: read them back and walk the entries from position 0 as ``#recover`` does:
   a blank (magic -1) moves on to the next data file; each entry's header must hold a known
   magic, ``pos`` equal to where it lies, ``bodySize + 48 == size``, the next index and no
   smaller term; the walk ends at the first that does not (zeros past the written part, a
   half-written entry). Where the index record disagrees with the entry, the index is
   rebuilt from the entries (``needWriteIndex``). The files are cut to what was read;
   ``ledgerEndIndex``/``ledgerEndTerm`` are the last entry's;
4. the committed index comes back from ``checkpoint`` (``committedIndex=``), capped at the
   ledger end (``updateCommittedIndex`` in the current term); the file is written every
   ``checkPointInterval`` (3 000 ms) and at a graceful stop, so a kill may leave an older one.

One index file (0.2.3's holds 5,242,880 records, ``mappedFileSizeForEntryIndex``): a log
longer than that is not modelled.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from mqlab.dledger.dledger_entry import BODY_OFFSET, HEADER_SIZE

__all__ = ["FileDisk", "StoreFiles", "FIRST_FILE", "recover_entries", "BLANK_MAGIC_CODE"]

#: ``DLedgerUtils#offset2FileName(0)``: the first data and index file
FIRST_FILE = "0" * 20
_INDEX_UNIT = 32
#: ``MmapFileList.BLANK_MAGIC_CODE``: the magic of the blank that ends a full data file
BLANK_MAGIC_CODE = -1


class FileDisk(MutableMapping[str, str]):
    """The node's ``disk`` on the filesystem: keys are file paths, values their text."""

    def __getitem__(self, path: str) -> str:
        try:
            return Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KeyError(path) from None

    def __setitem__(self, path: str, text: str) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)

    def __delitem__(self, path: str) -> None:
        try:
            Path(path).unlink()
        except FileNotFoundError:
            raise KeyError(path) from None

    def __iter__(self) -> Iterator[str]:  # not needed by the nodes; nothing to list
        return iter(())

    def __len__(self) -> int:
        return 0


class StoreFiles:
    """The data and index files of one node, written through (see the module essay).

    Args:
        data_dir: the data files' directory.
        index_dir: the index file's directory.
        data_file_size: ``mappedFileSizeForEntryData``: the data bytes at ``[k * size,
            (k + 1) * size)`` are file ``data/<k * size>``.
    """

    def __init__(self, data_dir: str, index_dir: str, data_file_size: int = 1 << 30) -> None:
        self.data_dir = Path(data_dir)
        self.data_file_size = data_file_size
        self.index_path = Path(index_dir) / FIRST_FILE
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        self.index_path.touch(exist_ok=True)
        # the data files are opened as they are written (the first append, or the first
        # file of a log over an old commit log: ``DLedgerMmapFileStore.create_first_file``)
        self._data: dict[int, Any] = {}
        #: the data's length at the last sync (None: not synced yet, so the files on disk
        #: may hold more than the store keeps)
        self._known_end: int | None = None
        self._index = open(self.index_path, "r+b", buffering=0)  # noqa: SIM115

    def data_files(self) -> list[Path]:
        """The data files in position order, as ``MmapFileList#load`` lists them."""
        return sorted(
            (p for p in self.data_dir.iterdir() if p.name.isdigit() and len(p.name) == 20),
            key=lambda p: int(p.name),
        )

    def read(self) -> tuple[int, bytes, bytes]:
        """The first data file's position (0 when there is none), the data files' bytes one
        after the other from it (up to the first that is not where the one before it ends),
        and the index file's."""
        files = self.data_files()
        start = int(files[0].name) if files else 0
        data = bytearray()
        for p in files:
            if int(p.name) != start + len(data):
                break
            data += p.read_bytes()
        return start, bytes(data), self.index_path.read_bytes()

    def sync_data(self, buf: bytes | bytearray, from_pos: int, start: int = 0) -> None:
        """Make the data files equal ``buf``, the data from position ``start`` (a data
        file's first) on, which changed at position ``from_pos`` or after: each file from
        the one holding ``from_pos`` written, the last cut to its part, and any after it
        deleted (a truncate back into an earlier file)."""
        size = self.data_file_size
        end = start + len(buf)
        first = start // size
        last = max(first, (end - 1) // size)
        if self._known_end is None or end < self._known_end:  # shrank: later files go
            for k in [k for k in self._data if k > last]:
                self._data.pop(k).close()
            for p in self.data_files():
                if int(p.name) // size > last:
                    p.unlink()
        self._known_end = end
        view = memoryview(buf)
        for k in range(max(first, min(from_pos // size, last)), last + 1):
            f = self._data.get(k)
            if f is None:
                path = self.data_dir / f"{k * size:020d}"
                path.touch(exist_ok=True)
                f = self._data[k] = open(path, "r+b", buffering=0)  # noqa: SIM115
            at = max(from_pos, k * size)
            f.seek(at - k * size)
            f.write(view[at - start : min(end, (k + 1) * size) - start])
            f.truncate(max(0, min(end, (k + 1) * size) - k * size))

    def sync_index(self, buf: bytes | bytearray, from_pos: int) -> None:
        self._index.seek(from_pos)
        self._index.write(memoryview(buf)[from_pos:])
        self._index.truncate(len(buf))

    def close(self) -> None:
        for f in self._data.values():
            f.close()
        self._data.clear()
        self._index.close()


def recover_entries(
    data: bytes, index: bytes, magic_max: int, data_file_size: int = 1 << 30, start: int = 0
) -> tuple[int, bytes, int, int, int]:
    """``DLedgerMmapFileStore#recover`` over the data files (one after the other in ``data``
    from position ``start``, ``data_file_size`` each) and one index file: a blank moves on to
    the next data file.

    Returns:
        ``(process_offset, index_bytes, last_index, last_term, first_index)``: the position
        where the valid data ends, the index bytes to keep (rebuilt where they disagreed), and
        the last and first entry's index and term (-1 when there is none).
    """
    import struct

    header = struct.Struct(">iiqqqiiii")
    record = struct.Struct(">iqiqq")
    pos = start  # a position; its byte is data[pos - start]
    limit = start + len(data)
    last_index = last_term = first_index = -1
    need_write_index = False
    out_index = bytearray()
    while pos + BODY_OFFSET <= limit:
        if struct.unpack_from(">i", data, pos - start)[0] == BLANK_MAGIC_CODE:
            pos = (pos // data_file_size + 1) * data_file_size  # the next file, if any
            continue
        magic, size, entry_index, entry_term, entry_pos, _c, _cc, _bc, body_size = (
            header.unpack_from(data, pos - start)
        )
        if not (
            1 <= magic <= magic_max
            and entry_pos == pos
            and body_size + BODY_OFFSET == size
            and size > HEADER_SIZE
            and pos + size <= limit
            and (last_index == -1 or entry_index == last_index + 1)
            and entry_term >= last_term
        ):
            break  # "Recover data file to the end of ..."
        rec = record.pack(magic, pos, size, entry_index, entry_term)
        at = entry_index * _INDEX_UNIT
        if not need_write_index and index[at : at + _INDEX_UNIT] != rec:
            need_write_index = True  # "Compare data to index failed": rebuild from here
            out_index = bytearray(index[:at])
            if len(out_index) < at:  # MmapFileList#rebuildWithPos
                out_index += bytes(at - len(out_index))
        if need_write_index:
            out_index += rec
        if first_index == -1:
            first_index = entry_index
        last_index, last_term = entry_index, entry_term
        pos += size
    end = (last_index + 1) * _INDEX_UNIT if last_index != -1 else 0
    kept = bytes(out_index) if need_write_index else index[:end]
    return pos, kept[:end], last_index, last_term, first_index
