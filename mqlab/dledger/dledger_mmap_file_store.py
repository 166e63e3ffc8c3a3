"""DLedger's log: entries in data bytes, 32-byte records in index bytes.

Mirrors ``DLedgerMmapFileStore#appendAsLeader``, ``#appendAsFollower``, ``#truncate``,
``#get``, ``#getEntryPosAndSize``, ``#updateCommittedIndex`` and ``#persistCheckPoint``
(store/file, DLedger 0.2.3); mechanisms.md "DLedger replication" steps 1, 6 and 8.

What it owns: the data bytes (entries back to back from position 0, as the first data file
``00000000000000000000`` holds them), the index bytes (entry ``i``'s record at ``i * 32``),
``ledger_begin_index``, ``ledger_end_index``, ``ledger_end_term``, ``committed_index`` and
``committed_pos``. Every change of the ledger end is reported to ``MemberState``
(``updateLedgerEndIndexAndTerm``), which votes with it.

Here the bytes are held in memory (the node keeps them across a kill, as a disk would); the
file names and contents are :meth:`files`. With ``on_disk=True`` (``serve``'s nodes) every
change is also written through to the data and index files under the config's store paths,
and a new store recovers from them (``DLedgerMmapFileStore#recover``, ``mqlab.dledger.dledger_files``). A data file is 1 GiB by default
(``mappedFileSizeForEntryData``; a 4.9.3 broker gives it its ``mappedFileSizeCommitLog``). An
entry that does not fit in the rest of a file with 8 bytes to spare goes to the start of the
next one, and the rest is a blank: magic -1, its length, zeros (``MmapFileList#preAppend``,
``MIN_BLANK_LEN``), on the leader and on each follower alike, so an entry's position is the
same everywhere. An entry longer than a file is DISK_ERROR. The clean service is not
modelled.

The checks are 0.2.3's, with its codes: a leader appends (NOT_LEADER, LEADER_TRANSFERRING), a
follower appends the next index only (INCONSISTENT_INDEX) for its term and leader
(INCONSISTENT_TERM, INCONSISTENT_LEADER), and the entry lands at the position the leader gave
it (DISK_ERROR otherwise). ``get`` outside ``[ledgerBeginIndex, ledgerEndIndex]`` raises
INDEX_OUT_OF_RANGE or INDEX_LESS_THAN_LOCAL_BEGIN.
"""

from __future__ import annotations

import struct
from collections.abc import MutableMapping

from mqlab.dledger import dledger_entry_coder as coder
from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import BODY_OFFSET, DLedgerEntry
from mqlab.dledger.dledger_files import BLANK_MAGIC_CODE, StoreFiles, recover_entries
from mqlab.dledger.exception import DLedgerException, check
from mqlab.dledger.member_state import MemberState
from mqlab.dledger.protocol import DLedgerResponseCode

__all__ = [
    "DLedgerMmapFileStore",
    "MAGIC_1",
    "CURRENT_MAGIC",
    "INDEX_UNIT_SIZE",
    "offset2file_name",
]

MAGIC_1 = 1
CURRENT_MAGIC = MAGIC_1
INDEX_UNIT_SIZE = 32
CHECK_POINT_FILE = "checkpoint"
#: ``MmapFileList.MIN_BLANK_LEN``: what an entry must leave free at a data file's end
MIN_BLANK_LEN = 8
_BLANK = struct.Struct(">ii")

R = DLedgerResponseCode


def offset2file_name(offset: int) -> str:
    """``DLedgerUtils#offset2FileName``: 20 digits, zero-padded."""
    return f"{offset:020d}"


class DLedgerMmapFileStore:
    """Mirrors ``DLedgerMmapFileStore`` (DLedger 0.2.3). See the module essay."""

    def __init__(
        self,
        config: DLedgerConfig,
        member_state: MemberState,
        *,
        on_disk: bool = False,
        disk: MutableMapping[str, str] | None = None,
    ) -> None:
        self.dledger_config = config
        self.member_state = member_state
        #: where ``checkpoint`` is written when not ``on_disk``: the node's simulated disk
        #: (the dict that also holds ``currterm``); None: nowhere (a bare store)
        self.disk = disk
        #: the data bytes from :attr:`data_start` on: entry positions are ``data_start +``
        #: their place in it
        self.data = bytearray()
        #: the first data file's position (``MmapFileList#getMinOffset``): 0, or on a
        #: broker's log over an old commit log, where that log ends
        #: (``DLedgerCommitLog``'s ``dividedCommitlogOffset``, :meth:`create_first_file`)
        self.data_start = 0
        #: whether a data file exists (``getMappedFiles().size() > 0``): created by the first
        #: append or by :meth:`create_first_file`, found by :meth:`recover`
        self.has_data_files = False
        self.index = bytearray()
        self.ledger_begin_index = -1
        self.ledger_end_index = -1
        self.ledger_end_term = -1
        self.committed_index = -1
        self.committed_pos = -1
        #: ``DLedgerMmapFileStore#addAppendHook``: each is called as ``hook(entry, data,
        #: BODY_OFFSET)`` with the leader's encoded entry (a bytearray it may patch) before
        #: it is written; 4.9.3's ``DLedgerCommitLog`` patches the message's physical offset.
        self.append_hooks: list = []
        #: mqlab: called with no argument after ``committed_pos`` moved. 4.9.3's reput
        #: thread polls ``getMaxOffset`` every 1 ms; a simulated store is woken instead.
        self.commit_listeners: list = []
        #: mqlab: the node's clock (its server sets it on start); each index record's write
        #: time goes to ``write_ms`` (index -> ms), which a power cut reads (what the flush
        #: pass every ``flushFileInterval`` had covered, ``mqlab.lab.dledger_lab``).
        self.clock = None
        self.write_ms: dict[int, int] = {}
        #: ``on_disk``: the data and index files, written through (``dledger_files``)
        self.store_files: StoreFiles | None = None
        if on_disk:
            self.store_files = StoreFiles(
                config.get_data_store_path(), config.get_index_store_path(),
                config.mapped_file_size_for_entry_data,
            )  # fmt: skip
            self.recover()

    # -- files on disk (on_disk=True) ---------------------------------------------------------
    @property
    def check_point_path(self) -> str:
        return f"{self.dledger_config.get_default_path()}/{CHECK_POINT_FILE}"

    def recover(self) -> None:
        """``DLedgerMmapFileStore#recover`` from the files (``dledger_files`` steps 3 and 4):
        the entries that read back whole, the index rebuilt where it disagrees, both files
        cut to them, the ledger end from the last entry, the committed index from
        ``checkpoint`` (at most the ledger end)."""
        files = self.store_files
        assert files is not None
        start, data, index = files.read()
        size = self.dledger_config.mapped_file_size_for_entry_data
        end, index, last_index, last_term, _first = recover_entries(
            data, index, CURRENT_MAGIC, size, start
        )
        self.data_start = start
        self.has_data_files = bool(files.data_files())
        self.data = bytearray(data[: end - start])
        self.index = bytearray(index)
        if self.has_data_files:
            files.sync_data(self.data, end, start)
        files.sync_index(self.index, 0)
        self.ledger_end_index, self.ledger_end_term = last_index, last_term
        if last_index != -1:
            self._revise_ledger_begin_index()
        self._update_ledger_end_index_and_term()
        self.recover_committed_index()

    def load_check_point(self) -> int | None:
        """``DLedgerMmapFileStore#loadCheckPoint``: the ``committedIndex`` the ``checkpoint``
        file holds, None when there is no file or no such key."""
        if self.store_files is not None:
            try:
                with open(self.check_point_path, encoding="utf-8") as f:
                    text = f.read()
            except FileNotFoundError:
                return None
        elif self.disk is not None and self.check_point_path in self.disk:
            text = self.disk[self.check_point_path]
        else:
            return None
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "committedIndex" and value.strip():
                return int(value.strip())
        return None

    def recover_committed_index(self) -> None:
        """The end of ``DLedgerMmapFileStore#recover``: the committed index read back from
        ``checkpoint`` through ``updateCommittedIndex`` (so at most the ledger end, and
        nothing when the log is empty or the file says -1)."""
        value = self.load_check_point()
        if value is not None:
            self.update_committed_index(self.member_state.curr_term, value)

    def persist_check_point(self) -> None:
        """``DLedgerMmapFileStore#persistCheckPoint``: the ``checkpoint`` file, through a
        temp file as ``IOUtils#string2File`` (``on_disk``), else on the simulated disk."""
        if self.store_files is not None:
            from mqlab.dledger.dledger_files import FileDisk

            FileDisk()[self.check_point_path] = self.checkpoint_text()
        elif self.disk is not None:
            self.disk[self.check_point_path] = self.checkpoint_text()

    def close_files(self) -> None:
        if self.store_files is not None:
            self.store_files.close()

    def _sync_data(self, from_pos: int) -> None:
        if self.store_files is not None:
            self.store_files.sync_data(self.data, from_pos, self.data_start)

    @property
    def end_pos(self) -> int:
        """Where the data ends (``MmapFileList#getMaxWrotePosition``)."""
        return self.data_start + len(self.data)

    def create_first_file(self, offset: int) -> None:
        """``MmapFileList#getLastMappedFile(startOffset)`` with no data file: the first one
        starts at ``offset`` (on the file-size grid), empty. ``DLedgerCommitLog`` calls it
        at the end of an old commit log, so that entries follow the old messages."""
        if self.has_data_files:
            return
        size = self.dledger_config.mapped_file_size_for_entry_data
        self.data_start = offset - offset % size
        self.has_data_files = True
        self._sync_data(self.data_start)

    def _sync_index(self, from_pos: int) -> None:
        if self.store_files is not None:
            self.store_files.sync_index(self.index, from_pos)

    # -- appends ------------------------------------------------------------------------------
    def _pre_append(self, length: int) -> int:
        """``MmapFileList#preAppend(len, useBlank=true)``: where ``length`` bytes will land.

        If they and 8 more bytes (``MIN_BLANK_LEN``) do not fit in the rest of the last file,
        the rest becomes a blank (magic -1, its length, zeros) and they start the next file.
        Raises DISK_ERROR for more than a file holds (``appendMessage`` fails after the
        blank, which stays)."""
        pos = self.end_pos
        self.has_data_files = True
        file_size = self.dledger_config.mapped_file_size_for_entry_data
        rest = file_size - pos % file_size
        if rest < file_size and length + MIN_BLANK_LEN > rest:
            self.data += _BLANK.pack(BLANK_MAGIC_CODE, rest) + bytes(rest - _BLANK.size)
            self._sync_data(pos)
            pos += rest
        if length > file_size:
            raise DLedgerException(
                R.DISK_ERROR, f"entry of {length} bytes is longer than a data file ({file_size})"
            )
        return pos

    def _append_data(self, data: bytes) -> int:
        """``MmapFileList#append(data)``: ``preAppend``, then the bytes; where they landed."""
        pos = self._pre_append(len(data))
        self.data += data
        self._sync_data(pos)
        return pos

    def _append_index(self, record: bytes) -> int:
        pos = len(self.index)
        self.index += record
        self._sync_index(pos)
        if self.clock is not None:
            self.write_ms[pos // INDEX_UNIT_SIZE] = self.clock()
        return pos

    def cut_to(self, index: int) -> None:
        """mqlab: lose every entry after ``index`` (-1: all), as a power cut loses the pages
        no flush reached: the data and index bytes end after entry ``index``, the ledger end
        moves back to it and the committed index no further (0.2.3's recovery reads the
        files back the same way, ``DLedgerMmapFileStore#recover``)."""
        if index >= self.ledger_end_index:
            return
        if index < 0 or index < self.ledger_begin_index:
            del self.data[:]
            del self.index[:]
            self.ledger_begin_index = self.ledger_end_index = self.ledger_end_term = -1
            self.committed_index = self.committed_pos = -1
        else:
            entry = self.get(index)
            del self.data[entry.pos + entry.size - self.data_start :]
            del self.index[(index + 1) * INDEX_UNIT_SIZE :]
            self.ledger_end_index, self.ledger_end_term = index, entry.term
            if self.committed_index > index:
                self.committed_index, self.committed_pos = index, entry.pos + entry.size
        for i in [i for i in self.write_ms if i > index]:
            del self.write_ms[i]
        self._sync_data(self.end_pos)
        self._sync_index(len(self.index))
        self._update_ledger_end_index_and_term()

    def append_as_leader(self, entry: DLedgerEntry) -> DLedgerEntry:
        """Append a new entry at the next index, in the leader's term (step 1).

        ``DLedgerMmapFileStore#appendAsLeader``: index := ledgerEnd + 1, term := currTerm,
        magic := 1, pos := where ``preAppend`` puts it (after a blank: the next file's start);
        then the hooks, the bytes and the index record.
        """
        ms = self.member_state
        check(ms.is_leader(), R.NOT_LEADER)
        check(ms.transferee is None, R.LEADER_TRANSFERRING)
        next_index = self.ledger_end_index + 1
        size = entry.compute_size_in_bytes()
        entry = entry.with_(
            index=next_index, term=ms.curr_term, magic=CURRENT_MAGIC,
            pos=self._pre_append(size), size=size,
        )  # fmt: skip
        data = coder.encode(entry)
        if self.append_hooks:  # appendAsLeader: each AppendHook on the encoded buffer
            buf = bytearray(data)
            for hook in self.append_hooks:
                hook(entry, buf, BODY_OFFSET)
            data = bytes(buf)
            entry = entry.with_(body=data[BODY_OFFSET:])
        data_pos = self._append_data(data)
        check(data_pos == entry.pos, R.DISK_ERROR)
        index_pos = self._append_index(
            coder.encode_index(data_pos, len(data), CURRENT_MAGIC, next_index, ms.curr_term)
        )
        check(index_pos == next_index * INDEX_UNIT_SIZE, R.DISK_ERROR)
        self.ledger_end_index += 1
        self.ledger_end_term = ms.curr_term
        if self.ledger_begin_index == -1:
            self.ledger_begin_index = self.ledger_end_index
        self._update_ledger_end_index_and_term()
        return entry

    def append_as_follower(
        self, entry: DLedgerEntry, leader_term: int, leader_id: str
    ) -> DLedgerEntry:
        """Append the leader's entry at the same index and position (step 6).

        ``DLedgerMmapFileStore#appendAsFollower``.
        """
        ms = self.member_state
        check(ms.is_follower(), R.NOT_FOLLOWER, f"role={ms.role.name}")
        check(self.ledger_end_index + 1 == entry.index, R.INCONSISTENT_INDEX)
        check(leader_term == ms.curr_term, R.INCONSISTENT_TERM)
        check(leader_id == ms.leader_id, R.INCONSISTENT_LEADER)
        data = coder.encode(entry)
        data_pos = self._append_data(data)
        if data_pos != entry.pos:
            # the Java check fails after the write; keep the log whole
            del self.data[data_pos - self.data_start :]
            self._sync_data(data_pos)
            raise DLedgerException(R.DISK_ERROR, f"{data_pos} != {entry.pos}")
        index_pos = self._append_index(
            coder.encode_index(data_pos, len(data), entry.magic, entry.index, entry.term)
        )
        check(index_pos == entry.index * INDEX_UNIT_SIZE, R.DISK_ERROR)
        self.ledger_end_term = entry.term
        self.ledger_end_index = entry.index
        if self.ledger_begin_index == -1:
            self.ledger_begin_index = self.ledger_end_index
        self._update_ledger_end_index_and_term()
        return entry.with_(size=len(data))

    def truncate(self, entry: DLedgerEntry, leader_term: int, leader_id: str) -> int:
        """Cut the log after ``entry`` and make ``entry`` its last one (step 8).

        ``DLedgerMmapFileStore#truncate``: if the same entry is already there the data is cut
        after it, else at its position and the leader's entry is written there; the index is
        cut at ``entry.index * 32`` and its record rewritten. Returns the new end index.
        """
        ms = self.member_state
        check(ms.is_follower(), R.NOT_FOLLOWER, f"role={ms.role.name}")
        check(
            leader_term == ms.curr_term,
            R.INCONSISTENT_TERM,
            f"term {leader_term} != {ms.curr_term}",
        )
        check(
            leader_id == ms.leader_id,
            R.INCONSISTENT_LEADER,
            f"leaderId {leader_id} != {ms.leader_id}",
        )
        data = coder.encode(entry)
        try:
            existed = entry == self.get(entry.index)
        except DLedgerException:
            existed = False
        truncate_pos = entry.pos + entry.size if existed else entry.pos
        self._truncate_offset(truncate_pos)
        if self.end_pos != truncate_pos:
            # MmapFileList#rebuildWithPos: every data file goes, and the data starts again
            # at truncatePos (a follower whose log began elsewhere: another divide of an old
            # commit log, or none)
            self.data = bytearray()
            self.data_start = truncate_pos
            self.has_data_files = True
        self._sync_data(truncate_pos)
        if not existed:
            data_pos = self._append_data(data)
            check(data_pos == entry.pos, R.DISK_ERROR, f"{data_pos} != {entry.pos}")
        index_from = min(len(self.index), entry.index * INDEX_UNIT_SIZE)
        del self.index[entry.index * INDEX_UNIT_SIZE :]
        if len(self.index) < entry.index * INDEX_UNIT_SIZE:  # MmapFileList#rebuildWithPos
            self.index += bytes(entry.index * INDEX_UNIT_SIZE - len(self.index))
        self._sync_index(index_from)
        self._append_index(
            coder.encode_index(entry.pos, len(data), entry.magic, entry.index, entry.term)
        )
        self.ledger_end_term = entry.term
        self.ledger_end_index = entry.index
        self._revise_ledger_begin_index()
        self._update_ledger_end_index_and_term()
        return entry.index

    def _truncate_offset(self, pos: int) -> None:
        """``MmapFileList#truncateOffset(pos)``: the data ends at ``pos`` when a file holds
        it (a position past the written end of the last file moves its end there, over
        zeros); every file after it, or every file when ``pos`` is before the first, goes."""
        size = self.dledger_config.mapped_file_size_for_entry_data
        ds = self.data_start
        if pos < ds:
            del self.data[:]
        elif pos <= self.end_pos:
            del self.data[pos - ds :]
        elif self.has_data_files:
            end = self.end_pos
            last = (end - 1) // size * size if end > ds else ds - ds % size  # the last file
            if pos < last + size:
                self.data += bytes(pos - end)

    def _revise_ledger_begin_index(self) -> None:
        """``reviseLedgerBeginIndex``: the first entry of the first data file."""
        if len(self.data) >= BODY_OFFSET:
            self.ledger_begin_index = coder.decode(self.data, read_body=False).index

    def _update_ledger_end_index_and_term(self) -> None:
        self.member_state.update_ledger_index_and_term(self.ledger_end_index, self.ledger_end_term)

    # -- reads --------------------------------------------------------------------------------
    def index_check(self, index: int) -> None:
        """``DLedgerMmapFileStore#indexCheck``."""
        check(index >= 0, R.INDEX_OUT_OF_RANGE, f"{index} should gt 0")
        check(index >= self.ledger_begin_index, R.INDEX_LESS_THAN_LOCAL_BEGIN,
              f"{index} should be gt {self.ledger_begin_index}")  # fmt: skip
        check(index <= self.ledger_end_index, R.INDEX_OUT_OF_RANGE,
              f"{index} should between {self.ledger_begin_index}-{self.ledger_end_index}")  # fmt: skip

    def get_entry_pos_and_size(self, index: int) -> tuple[int, int]:
        """``DLedgerMmapFileStore#getEntryPosAndSize`` from the index record."""
        self.index_check(index)
        _magic, pos, size, _i, _t = coder.decode_index(self.index[index * INDEX_UNIT_SIZE :])
        return pos, size

    def get(self, index: int) -> DLedgerEntry:
        """``DLedgerMmapFileStore#get``: the index record, then the entry's bytes."""
        pos, size = self.get_entry_pos_and_size(index)
        at = pos - self.data_start
        entry = coder.decode(memoryview(self.data)[at : at + size])
        check(pos == entry.pos, R.DISK_ERROR, f"{pos} != {entry.pos}")
        return entry

    def entries(self) -> list[DLedgerEntry]:
        """Every entry from the begin index to the end index."""
        if self.ledger_end_index < 0:
            return []
        return [self.get(i) for i in range(self.ledger_begin_index, self.ledger_end_index + 1)]

    # -- the committed index ------------------------------------------------------------------
    def update_committed_index(self, term: int, new_committed_index: int) -> None:
        """``DLedgerMmapFileStore#updateCommittedIndex``: move forward only, never past the
        ledger end, and only for the current term."""
        if (
            new_committed_index == -1
            or self.ledger_end_index == -1
            or term < self.member_state.curr_term
            or new_committed_index == self.committed_index
        ):
            return
        if (
            new_committed_index < self.committed_index
            or new_committed_index < self.ledger_begin_index
        ):
            return
        new_committed_index = min(new_committed_index, self.ledger_end_index)
        pos, size = self.get_entry_pos_and_size(new_committed_index)
        self.committed_index = new_committed_index
        self.committed_pos = pos + size
        for listener in self.commit_listeners:
            listener()

    # -- files --------------------------------------------------------------------------------
    def checkpoint_text(self) -> str:
        """The ``checkpoint`` file (``persistCheckPoint``), in Java 17's Properties order."""
        return f"committedIndex={self.committed_index}\nendIndex={self.ledger_end_index}\n"

    def files(self) -> dict[str, bytes]:
        """The store's files as 0.2.3 names them, relative to ``dledger-<selfId>``: each data
        file (``mappedFileSizeForEntryData`` of the data, named by its first position), the
        index file and the checkpoint. The last data file and the index are their written
        part: 0.2.3's files are ``mappedFileSize`` long, zeros after it."""
        out: dict[str, bytes] = {}
        size = self.dledger_config.mapped_file_size_for_entry_data
        ds = self.data_start
        end = max(self.end_pos, ds + 1 if self.has_data_files else ds)  # an empty first file
        for start in range(ds, end, size):
            out[f"data/{offset2file_name(start)}"] = bytes(self.data[start - ds :][:size])
        if self.index:
            out[f"index/{offset2file_name(0)}"] = bytes(self.index)
        out[CHECK_POINT_FILE] = self.checkpoint_text().encode()
        return out
