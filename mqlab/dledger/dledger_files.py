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
2. ``StoreFiles``: the data file ``data/00000000000000000000`` and the index file
   ``index/00000000000000000000``, written through at every change of the store's bytes (an
   append, a truncate, a power cut's loss). The OS holds the bytes once ``write`` returns, so
   a killed process loses nothing, as 0.2.3's mmap'd pages survive a killed JVM. A file is its
   written part, not 0.2.3's full ``mappedFileSize`` of zeros after it;
3. ``recover``: read both back and walk the entries from position 0 as ``#recover`` does:
   each entry's header must hold a known magic, ``pos`` equal to where it lies, ``bodySize +
   48 == size``, the next index and no smaller term; the walk ends at the first that does not
   (zeros past the written part, a half-written entry). Where the index record disagrees with
   the entry, the index is rebuilt from the entries (``needWriteIndex``). Both files are cut
   to what was read; ``ledgerEndIndex``/``ledgerEndTerm`` are the last entry's;
4. the committed index comes back from ``checkpoint`` (``committedIndex=``), capped at the
   ledger end (``updateCommittedIndex`` in the current term); the file is written every
   ``checkPointInterval`` (3 000 ms) and at a graceful stop, so a kill may leave an older one.

One data file and one index file: an entry that would cross the first data file's end is
refused (the store's DISK_ERROR), as in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path

from mqlab.dledger.dledger_entry import BODY_OFFSET, HEADER_SIZE

__all__ = ["FileDisk", "StoreFiles", "FIRST_FILE", "recover_entries"]

#: ``DLedgerUtils#offset2FileName(0)``: the first data and index file
FIRST_FILE = "0" * 20
_INDEX_UNIT = 32


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
    """The data and index files of one node, written through (see the module essay)."""

    def __init__(self, data_dir: str, index_dir: str) -> None:
        self.data_path = Path(data_dir) / FIRST_FILE
        self.index_path = Path(index_dir) / FIRST_FILE
        for p in (self.data_path, self.index_path):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.touch(exist_ok=True)
        # unbuffered: every write is the OS's at once (a killed process loses none of it)
        self._data = open(self.data_path, "r+b", buffering=0)  # noqa: SIM115
        self._index = open(self.index_path, "r+b", buffering=0)  # noqa: SIM115

    def read(self) -> tuple[bytes, bytes]:
        """The two files' bytes, as ``MmapFileList#load`` maps them."""
        return self.data_path.read_bytes(), self.index_path.read_bytes()

    def sync_data(self, buf: bytes | bytearray, from_pos: int) -> None:
        """Make the data file equal ``buf``, which changed at ``from_pos`` or after."""
        self._write(self._data, buf, from_pos)

    def sync_index(self, buf: bytes | bytearray, from_pos: int) -> None:
        self._write(self._index, buf, from_pos)

    @staticmethod
    def _write(f, buf: bytes | bytearray, from_pos: int) -> None:
        f.seek(from_pos)
        f.write(memoryview(buf)[from_pos:])
        f.truncate(len(buf))

    def close(self) -> None:
        self._data.close()
        self._index.close()


def recover_entries(data: bytes, index: bytes, magic_max: int) -> tuple[int, bytes, int, int, int]:
    """``DLedgerMmapFileStore#recover`` over one data file and one index file.

    Returns:
        ``(process_offset, index_bytes, last_index, last_term, first_index)``: the data's
        valid length, the index bytes to keep (rebuilt where they disagreed), and the last and
        first entry's index and term (-1 when there is none).
    """
    import struct

    header = struct.Struct(">iiqqqiiii")
    record = struct.Struct(">iqiqq")
    pos = 0
    last_index = last_term = first_index = -1
    need_write_index = False
    out_index = bytearray()
    while pos + BODY_OFFSET <= len(data):
        magic, size, entry_index, entry_term, entry_pos, _c, _cc, _bc, body_size = (
            header.unpack_from(data, pos)
        )
        if not (
            1 <= magic <= magic_max
            and entry_pos == pos
            and body_size + BODY_OFFSET == size
            and size > HEADER_SIZE
            and pos + size <= len(data)
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
