"""IndexService: build the message index from dispatched entries and answer key lookups.

Mirrors ``IndexService`` and ``QueryOffsetResult`` (store/index, RocketMQ 4.9.3), with
``DefaultMessageStore.CommitLogDispatcherBuildIndex`` (the reput dispatcher that calls
``build_index`` when ``messageIndexEnable``) and ``DefaultMessageStore#queryMessage`` in
the store.

What it indexes (``buildIndex``): for each dispatched entry that is not a rolled-back
transaction and lies at or after the current file's ``endPhyOffset`` (an entry dispatched
twice, e.g. again after a restart, is not indexed twice), the key ``topic#UNIQ_KEY`` (the
client's message id) and ``topic#k`` for each non-empty ``k`` of the KEYS property split
on spaces, in that order, each as one entry. Files live in ``<store root>/index``, one
after another; a full file is flushed and the next one starts where it ended.

What mqlab changes, on purpose:

* File names: Java names a new file by the wall clock (``yyyyMMddHHmmssSSS``, local time);
  mqlab by the store time of the entry that opened it, in UTC, one millisecond later if a
  file of that name exists already, so runs are reproducible.
* Sizes: ``MessageStoreConfig``'s mqlab defaults are 5,000 slots and 20,000 entries per
  file (420,040 bytes), a thousandth of Java's (420,000,040 bytes per file).
* Recovery: files are loaded in name order with their headers. After an abnormal exit,
  Java destroys each file whose ``endTimestamp`` is after the checkpoint's
  ``indexMsgTimestamp`` (the end time of the last file that filled up and was flushed;
  ``destroy_after_checkpoint``), and ``CommitLog#recoverAbnormally`` re-dispatches the
  commit log from its checkpoint file on, which indexes those entries again. mqlab has no
  checkpoint file: it takes ``indexMsgTimestamp`` from the last full index file, and
  re-indexes from the start of the last commit-log file (where Java's recovery usually
  starts, its checkpoint being flushed every second); entries of older commit-log files
  that the deleted files held are gone from the index, as in Java. Entries are never
  indexed twice: ``buildIndex`` skips an entry before the current file's ``endPhyOffset``
  (Java's ``<``: the entry at that offset is indexed again).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from mqlab.common.sysflag import MessageSysFlag
from mqlab.common.util_all import time_millis_to_human_string
from mqlab.store.index.index_file import IndexFile
from mqlab.store.mapped_file import MappedFile

__all__ = ["IndexService", "QueryMessageResult", "QueryOffsetResult"]

_ROLLBACK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE


@dataclass(slots=True)
class QueryOffsetResult:
    """Mirrors ``QueryOffsetResult``: matching commit-log offsets, newest file first, and
    the last file's end time and offset."""

    phy_offsets: list[int] = field(default_factory=list)
    index_last_update_timestamp: int = 0
    index_last_update_phyoffset: int = 0


@dataclass(slots=True)
class QueryMessageResult:
    """Mirrors ``QueryMessageResult`` (store): the stored entries found, oldest first."""

    message_buffers: list[bytes] = field(default_factory=list)
    index_last_update_timestamp: int = 0
    index_last_update_phyoffset: int = 0

    @property
    def buffer_total_size(self) -> int:
        return sum(len(b) for b in self.message_buffers)


def build_key(topic: str, key: str) -> str:
    """``IndexService#buildKey``: ``topic#key``."""
    return f"{topic}#{key}"


class IndexService:
    """Mirrors ``IndexService`` (store/index, RocketMQ 4.9.3); see the module notes.

    Args:
        store_path: the index directory (``StorePathConfigHelper#getStorePathIndex``).
        hash_slot_num: ``maxHashSlotNum``.
        index_num: ``maxIndexNum``.
        max_msgs_num_batch: ``maxMsgsNumBatch`` (a query returns at most this many).
    """

    def __init__(
        self, store_path: str, hash_slot_num: int, index_num: int, max_msgs_num_batch: int = 64
    ) -> None:
        self.store_path = store_path
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.max_msgs_num_batch = max_msgs_num_batch
        self.index_file_list: list[IndexFile] = []
        #: RunningFlags#makeIndexFileError: a file could not be created.
        self.index_file_error = False
        #: After an abnormal exit: the files deleted and the entries indexed again.
        self.destroyed_on_recovery: list[str] = []
        self.reindexed_on_recovery = 0
        self._file_size = IndexFile.file_size(hash_slot_num, index_num)

    def load(self, last_exit_ok: bool) -> bool:
        """Open every file in name order and read its header. Mirrors ``IndexService#load``
        (see the module notes for the abnormal-exit difference).

        Returns:
            False when a file cannot be read (or is larger than the configured size).
        """
        if not os.path.isdir(self.store_path):
            return True
        for name in sorted(os.listdir(self.store_path)):
            path = os.path.join(self.store_path, name)
            if not name.isdigit() or not os.path.isfile(path):
                continue  # Java: NumberFormatException, skipped
            try:
                mf = MappedFile.load(path, self._file_size)
            except (OSError, ValueError):
                return False
            f = IndexFile(mf, self.hash_slot_num, self.index_num)
            f.load()
            self.index_file_list.append(f)
        return True

    def destroy_after_checkpoint(self) -> list[str]:
        """After an abnormal exit: delete the files that end after the last full one.

        Mirrors the ``!lastExitOK`` branch of ``IndexService#load``: Java destroys every
        file whose ``endTimestamp`` is after ``StoreCheckpoint#getIndexMsgTimestamp``,
        which is the end time of the last file that filled up (``IndexService#flush``
        records it then; 0 if none did). mqlab has no checkpoint file and computes that
        time from the files themselves.

        Returns:
            The names of the files deleted.
        """
        full = [f for f in self.index_file_list if f.is_write_full()]
        index_msg_timestamp = full[-1].index_header.end_timestamp if full else 0
        doomed = [f for f in self.index_file_list
                  if f.index_header.end_timestamp > index_msg_timestamp]  # fmt: skip
        for f in doomed:
            f.destroy()
            self.index_file_list.remove(f)
        return [os.path.basename(f.file_name) for f in doomed]

    # -- building ------------------------------------------------------------------------
    def build_index(
        self,
        topic: str,
        commit_log_offset: int,
        store_timestamp: int,
        sys_flag: int,
        keys: str | None,
        uniq_key: str | None,
    ) -> None:
        """Index one dispatched entry. Mirrors ``IndexService#buildIndex``.

        An index file that cannot be created stops the entry's indexing (Java retries
        three times, then ``makeIndexFileError``); ``index_file_error`` records it.
        """
        index_file = self.get_and_create_last_index_file(store_timestamp)
        if index_file is None:
            return
        if commit_log_offset < index_file.index_header.end_phy_offset:
            return
        if sys_flag & _ROLLBACK == _ROLLBACK:
            return
        if uniq_key is not None:
            index_file = self._put_key(
                index_file, build_key(topic, uniq_key), commit_log_offset, store_timestamp
            )
            if index_file is None:
                return
        if keys:
            for key in keys.split(" "):  # MessageConst.KEY_SEPARATOR
                if key:
                    index_file = self._put_key(
                        index_file, build_key(topic, key), commit_log_offset, store_timestamp
                    )
                    if index_file is None:
                        return

    def _put_key(
        self, index_file: IndexFile | None, key: str, phy_offset: int, ts: int
    ) -> IndexFile | None:
        """Mirrors ``IndexService#putKey``: a full file → the next one, then put there."""
        while index_file is not None and not index_file.put_key(key, phy_offset, ts):
            index_file = self.get_and_create_last_index_file(ts)
        return index_file

    def get_and_create_last_index_file(self, now_ms: int) -> IndexFile | None:
        """The last file if it is not full, else a new one after it (the full one is
        flushed). Mirrors ``IndexService#getAndCreateLastIndexFile``."""
        prev = self.index_file_list[-1] if self.index_file_list else None
        if prev is not None and not prev.is_write_full():
            return prev
        end_phy_offset = prev.index_header.end_phy_offset if prev is not None else 0
        end_timestamp = prev.index_header.end_timestamp if prev is not None else 0
        os.makedirs(self.store_path, exist_ok=True)
        t = now_ms
        names = {os.path.basename(f.file_name) for f in self.index_file_list}
        while time_millis_to_human_string(t) in names:
            t += 1
        path = os.path.join(self.store_path, time_millis_to_human_string(t))
        try:
            mf = MappedFile.create(path, self._file_size)
        except OSError:
            self.index_file_error = True
            return None
        f = IndexFile(mf, self.hash_slot_num, self.index_num, end_phy_offset, end_timestamp)
        self.index_file_list.append(f)
        if prev is not None:
            prev.flush()  # Java: a FlushIndexFileThread for the previous file
        return f

    # -- querying ------------------------------------------------------------------------
    def query_offset(
        self, topic: str, key: str, max_num: int, begin: int, end: int
    ) -> QueryOffsetResult:
        """Offsets of ``topic#key``'s entries stored in [begin, end], newest files first.

        Mirrors ``IndexService#queryOffset``: at most ``min(max_num, maxMsgsNumBatch)``;
        stops at the first file that begins before ``begin``.
        """
        result = QueryOffsetResult()
        max_num = min(max_num, self.max_msgs_num_batch)
        files = self.index_file_list
        for i in range(len(files), 0, -1):
            f = files[i - 1]
            if i == len(files):
                result.index_last_update_timestamp = f.index_header.end_timestamp
                result.index_last_update_phyoffset = f.index_header.end_phy_offset
            if f.is_time_matched(begin, end):
                f.select_phy_offset(result.phy_offsets, build_key(topic, key), max_num, begin, end)
            if f.index_header.begin_timestamp < begin:
                break
            if len(result.phy_offsets) >= max_num:
                break
        return result

    # -- files ---------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every file out (mqlab: stands for the page cache reaching the disk)."""
        for f in self.index_file_list:
            f.flush()

    def delete_expired_file(self, offset: int) -> int:
        """Delete leading files that end before commit-log ``offset``, never the last one.

        Mirrors ``IndexService#deleteExpiredFile(long)``.

        Returns:
            The number of files deleted.
        """
        files = self.index_file_list
        if not files or files[0].index_header.end_phy_offset >= offset:
            return 0
        doomed = []
        for f in files[:-1]:
            if f.index_header.end_phy_offset < offset:
                doomed.append(f)
            else:
                break
        for f in doomed:
            f.destroy()
            files.remove(f)
        return len(doomed)

    def close(self) -> None:
        """Unmap every file (the process is gone). Idempotent."""
        for f in self.index_file_list:
            f.mapped_file.close()

    def revert_to_disk(self) -> int:
        """A power cut: each file goes back to what its last force covered.

        Returns:
            The bytes lost (written after the files' last force).
        """
        return sum(f.mapped_file.revert_to_disk() for f in self.index_file_list)

    def destroy(self) -> None:
        """Delete every file. Mirrors ``IndexService#destroy``."""
        for f in self.index_file_list:
            f.destroy()
        self.index_file_list.clear()
