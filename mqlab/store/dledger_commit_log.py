"""The commit log as DLedger entries: a message is the body of one entry of a Raft log.

Mirrors ``DLedgerCommitLog`` (store/dledger, RocketMQ 4.9.3): ``asyncPutMessage``,
``getMaxOffset`` / ``getConfirmOffset``, ``getData``, ``getMessage`` and
``checkMessageAndReturnSize``; ``DefaultMessageStore``'s constructor picks it when
``enableDLegerCommitLog`` is true (``MessageStoreConfig.enable_d_leger_commit_log``).
mechanisms.md "DLedger commit log" (the steps below); the append and the quorum ack are
mechanisms.md "DLedger replication" steps 1 and 10.

What this module owns: the wiring between the store and the node's ``DLedgerServer``
(``mqlab.dledger``). The server is built from the store config (``dLegerGroup``,
``dLegerPeers``, ``dLegerSelfId``, the data file size from ``mappedFileSizeCommitLog``), or
given (``DefaultMessageStore(..., dledger_server=...)``: a node of a ``DLedgerGroup`` on the
simulation driver). What it must not know: elections and pushes (the server's), consume
queues (the reput builds them from what this log says is readable).

The put path, in the order of ``DLedgerCommitLog#asyncPutMessage``:

1. ``setMessageInfo``: store timestamp, body CRC, the delay rewrite (as ``CommitLog``'s);
2. ``MessageSerializer#serialize``: the commit-log entry's bytes; properties over 32767
   bytes or an entry over ``maxMessageSize`` → MESSAGE_ILLEGAL (no
   PROPERTIES_SIZE_EXCEEDED here, unlike ``CommitLog``);
3. the queue offset from ``topicQueueTable`` (``getQueueOffsetByKey``) patched into the
   bytes, and an ``AppendEntryRequest`` with them as body to ``DLedgerServer#handleAppend``.
   The leader's store writes the entry, and its append hook (the lambda 4.9.3 gives
   ``DLedgerMmapFileStore#addAppendHook``) patches the message's PHYSICALOFFSET to the
   entry's ``pos + BODY_OFFSET`` (48): the first message of a fresh group is at 0x30;
4. an append that did not happen (not the leader, a leadership transfer, too many pending:
   ``AppendFuture.pos == -1``) → OS_PAGECACHE_BUSY at once, as 4.9.3 answers it: the send
   processor turns it into SYSTEM_ERROR "[PC_SYNCHRONIZED]broker busy, ...";
5. else PUT_OK with ``wroteOffset = pos + 48``, the msgId made from it, and
   ``topicQueueTable`` moved on (NOT_TYPE / COMMIT), before the quorum answers;
6. the quorum's answer (``DLedgerEntryPusher``'s ``AppendFuture``) decides the status:
   SUCCESS → PUT_OK; INCONSISTENT_LEADER, NOT_LEADER, LEADER_NOT_READY, DISK_FULL →
   SERVICE_NOT_AVAILABLE; WAIT_QUORUM_ACK_TIMEOUT, LEADER_PENDING_FULL →
   OS_PAGECACHE_BUSY; any other code → UNKNOWN_ERROR. Here the put result carries the wait
   as ``replica_request`` (``DLedgerAppendWait``), as a SYNC_MASTER put carries its
   ``GroupCommitRequest``: the send processor answers when it completes (its status
   replaces the provisional PUT_OK).

Reads: the readable end (``getMaxOffset``, and ``getConfirmOffset`` which returns it) is
DLedger's ``committedPos``, the end of the last committed entry (0 before any commit), on
the leader and on every follower. So the reput dispatches an entry into the consume queues
and the index only once it is committed. The reput reads from an entry's position
(``getData``: up to ``committedPos``), skips its 48-byte header, parses the message
(``checkMessageAndReturnSize``) and moves on by the message size + 48 (``bufferSize``);
the consume queue unit holds ``pos + 48`` and the message size. Each move of the committed
end wakes the store's reput (``reput_wakeup``: the broker's reput timer), on every node.
``getMessage(offset,
size)`` reads the data files directly (not bounded by the committed end, as in 4.9.3).

The mixed log: a node started over an old commit log (``recover_normally``) begins DLedger's
data at ``dividedCommitlogOffset``, the end of the old log's last file; reads below it go to the
old log. Not modelled: the disk cleaning. The role switch and ``recoverTopicQueueTable`` on a new leader are
``mqlab.broker.dledger_role_change_handler``'s.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from mqlab.common import message_const as mc
from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import (
    BLANK_MAGIC_CODE,
    MESSAGE_MAGIC_CODE,
    create_message_id,
    encode_stored_message,
    string_to_message_properties,
)
from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import BODY_OFFSET, DLedgerEntry
from mqlab.dledger.dledger_server import DLedgerServer
from mqlab.dledger.exception import JavaRuntimeException
from mqlab.dledger.protocol import (
    AppendEntryRequest,
    AppendEntryResponse,
    BatchAppendEntryRequest,
    DLedgerResponseCode,
)
from mqlab.dledger.service_thread import TimeoutFuture
from mqlab.store.commit_log import CommitLog, StoreRuntimeException, _delay_time_level
from mqlab.store.status import (
    AppendMessageResult,
    AppendMessageStatus,
    DispatchRequest,
    PutMessageResult,
    PutMessageStatus,
)

if TYPE_CHECKING:
    from mqlab.store.config import MessageStoreConfig
    from mqlab.store.default_message_store import DefaultMessageStore

__all__ = [
    "DLedgerCommitLog",
    "DLedgerAppendWait",
    "status_of",
    "MMAP_BLANK_MAGIC_CODE",
    "dledger_config_from",
]

C = "DLedgerCommitLog.asyncPutMessage"
CB = "DLedgerCommitLog.asyncPutMessages"
#: what the remoting layer answers for the batch serializer's RuntimeException (the line)
_SIZE_EXCEEDED = (
    "java.lang.RuntimeException: message size exceeded, org.apache.rocketmq.store.dledger."
    "DLedgerCommitLog$MessageSerializer.serialize(DLedgerCommitLog.java:%d)"
)
R = DLedgerResponseCode
#: ``MmapFileList.BLANK_MAGIC_CODE`` (DLedger 0.2.3): the padding at a data file's end.
MMAP_BLANK_MAGIC_CODE = -1
#: ``MessageDecoder.PHY_POS_POSITION``: where a stored message keeps its physical offset.
PHY_POS_POSITION = 4 + 4 + 4 + 4 + 4 + 8
_QUEUE_OFFSET_POSITION = 20
_I64 = struct.Struct(">q")
_I32x2 = struct.Struct(">ii")
_TRAN_MASK = 0x0C
_NOT_TYPE = 0
_COMMIT = 0x08
_MAX_PROPERTIES = 32767

_STATUS = {
    R.SUCCESS: PutMessageStatus.PUT_OK,
    R.INCONSISTENT_LEADER: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    R.NOT_LEADER: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    R.LEADER_NOT_READY: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    R.DISK_FULL: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    # "Do not return flush_slave_timeout to the client, for the ons client will ignore it."
    R.WAIT_QUORUM_ACK_TIMEOUT: PutMessageStatus.OS_PAGECACHE_BUSY,
    R.LEADER_PENDING_FULL: PutMessageStatus.OS_PAGECACHE_BUSY,
}


def status_of(code: int) -> PutMessageStatus:
    """Step 6: the ``PutMessageStatus`` 4.9.3 gives a DLedger response code."""
    try:
        return _STATUS.get(R(code), PutMessageStatus.UNKNOWN_ERROR)
    except ValueError:
        return PutMessageStatus.UNKNOWN_ERROR


class DLedgerAppendWait:
    """A put waiting for DLedger's quorum: the ``AppendFuture`` seen as the put's
    ``replica_request`` (``on_done(callback(status))``, as ``GroupCommitRequest``)."""

    __slots__ = ("future", "pos")

    def __init__(self, future: TimeoutFuture) -> None:
        self.future = future
        self.pos = future.pos

    @property
    def done(self) -> bool:
        return self.future.done

    @property
    def status(self) -> PutMessageStatus | None:
        if not self.future.done:
            return None
        return status_of(self.future.value.code)

    def on_done(self, callback) -> None:
        self.future.when_complete(lambda resp: callback(status_of(resp.code)))


class _View:
    """The committed bytes from one offset: what the reput reads (``getData``)."""

    __slots__ = ("mm", "file_from_offset")

    def __init__(self, mm: bytes, file_from_offset: int) -> None:
        self.mm = mm
        self.file_from_offset = file_from_offset


class _DataFile:
    """One DLedger data file's written bytes, with the ``MappedFile`` attributes the pull
    path reads: ``view[a:b]`` is a copy of those bytes of the file (a view of the store's
    bytearray would stop it from growing).

    NOTE: performance: only the slices the pull takes are copied. A snapshot of the whole
    file per pull grew with the log (``bench real --group dledger``, 4 threads: 2.2 ms a
    pull under cProfile after 2,800 messages, the loop's fifth cost)."""

    __slots__ = ("view", "file_from_offset", "wrote_position", "available")

    def __init__(
        self, data: bytearray, file_from_offset: int, file_size: int, data_start: int = 0
    ) -> None:
        self.view = _Slices(data, file_from_offset - data_start)
        self.file_from_offset = file_from_offset
        self.wrote_position = min(data_start + len(data) - file_from_offset, file_size)
        self.available = True


class _Slices:
    """``[a:b]`` → a read-only copy of ``data[base + a : base + b]``."""

    __slots__ = ("data", "base")

    def __init__(self, data: bytearray, base: int) -> None:
        self.data = data
        self.base = base

    def __getitem__(self, s: slice) -> memoryview:
        base = self.base
        return memoryview(bytes(self.data[base + s.start : base + s.stop]))


def _ours(hook: object) -> bool:
    """Whether ``hook`` is a method of a ``DLedgerCommitLog`` (or the append hook)."""
    return isinstance(getattr(hook, "__self__", None), DLedgerCommitLog) or (
        getattr(hook, "__func__", hook) is DLedgerCommitLog._append_hook
    )


def dledger_config_of(store: DefaultMessageStore) -> DLedgerConfig:
    """``DLedgerCommitLog``'s constructor: the DLedger config from the store config.

    Raises:
        ValueError: ``dLegerGroup``, ``dLegerPeers`` or ``dLegerSelfId`` is not set.
    """
    cfg = store.message_store_config
    missing = [
        k for k, v in (("dLegerGroup", cfg.d_leger_group), ("dLegerPeers", cfg.d_leger_peers),
                       ("dLegerSelfId", cfg.d_leger_self_id)) if not v
    ]  # fmt: skip
    if missing:
        raise ValueError(f"enableDLegerCommitLog=true needs {', '.join(missing)}")
    return dledger_config_from(cfg, store.root_dir)


def dledger_config_from(cfg: MessageStoreConfig, store_base_dir: str) -> DLedgerConfig:
    """The settings of ``DLedgerCommitLog``'s constructor from a store config: group
    (DLedger's default when unset), selfId, peers, the data files' size
    (``mappedFileSizeCommitLog``), the clean service's, ``preferredLeaderId`` and
    ``enableBatchPush``; the node's files under ``store_base_dir``."""
    return DLedgerConfig(
        group=cfg.d_leger_group or DLedgerConfig.group, self_id=cfg.d_leger_self_id,
        peers=cfg.d_leger_peers, store_base_dir=store_base_dir,
        mapped_file_size_for_entry_data=cfg.mapped_file_size_commit_log,
        enable_disk_force_clean=cfg.clean_file_forcibly_enable,
        delete_when=cfg.delete_when, file_reserved_hours=cfg.file_reserved_time + 1,
        preferred_leader_ids=cfg.preferred_leader_id,
        is_enable_batch_push=cfg.is_enable_batch_push,
    )  # fmt: skip


class DLedgerCommitLog(CommitLog):
    """Mirrors ``DLedgerCommitLog`` (store/dledger, RocketMQ 4.9.3). See the module essay.

    Args:
        store: the owning store.
        server: the node's ``DLedgerServer`` (default: built from the store config; the
            owner adds it to its driver).
    """

    #: step 6 counts a put by topic (``getSinglePutMessageTopicTimesTotal``) on PUT_OK only
    counts_own_puts = True

    def __init__(self, store: DefaultMessageStore, server: DLedgerServer | None = None) -> None:
        super().__init__(store)
        if server is None:
            server = DLedgerServer(dledger_config_of(store))
        self.dledger_server = server
        self.dledger_config = server.config
        #: ``id``: ``selfId``'s number + 1 (n0 → 1).
        self.id = int(server.config.self_id[1:]) + 1
        #: ``dividedCommitlogOffset``: where an old commit log ends and DLedger's entries
        #: begin (the end of the old log's last file); -1 without an old log
        self.divided_commitlog_offset = -1
        #: ``isInrecoveringOldCommitlog``: the old log is parsed as a ``CommitLog``'s
        self._in_recovering_old = False
        # a store re-made on the same node (a broker restart) replaces the old one's hooks
        dstore = server.store
        dstore.append_hooks[:] = [h for h in dstore.append_hooks if not _ours(h)]
        dstore.commit_listeners[:] = [h for h in dstore.commit_listeners if not _ours(h)]
        dstore.append_hooks.append(self._append_hook)
        dstore.commit_listeners.append(self._committed)

    def _committed(self) -> None:
        """DLedger committed more: wake the reput (``ReputMessageService`` polls every 1 ms)."""
        wakeup = self.store.reput_wakeup
        if wakeup is not None:
            wakeup()

    @property
    def dledger_file_store(self):
        """``dLedgerFileStore`` (the server's store, which a restart keeps)."""
        return self.dledger_server.store

    @staticmethod
    def _append_hook(entry: DLedgerEntry, buf: bytearray, body_offset: int) -> None:
        """The AppendHook: PHYSICALOFFSET := the entry's pos + BODY_OFFSET (step 3).

        4.9.3 moves the buffer to the field and puts a long there. A body too short to be
        a message (a DLedger client's APPEND to a broker's node, say) makes the buffer
        throw before anything is stored: the position past the limit (a body under 28
        bytes), or the long past it (28 to 35); the client is answered SYSTEM_ERROR with
        the exception (a real node, JDK 17, 2026-11-30). A longer body is stored, and the
        dispatch skips it (``CommitLog#checkMessageAndReturnSize``).
        """
        assert body_offset == BODY_OFFSET
        at = body_offset + PHY_POS_POSITION
        if at > len(buf):
            raise JavaRuntimeException(
                f"java.lang.IllegalArgumentException: newPosition > limit: ({at} > {len(buf)}), "
                "java.base/java.nio.Buffer.createPositionException(Buffer.java:341)"
            )
        if at + _I64.size > len(buf):
            raise JavaRuntimeException(
                "java.nio.BufferOverflowException, java.base/java.nio.Buffer.nextPutIndex"
                "(Buffer.java:730)"
            )
        _I64.pack_into(buf, at, entry.pos + body_offset)

    # -- the readable end -----------------------------------------------------------------------
    def get_max_offset(self) -> int:
        """``getMaxOffset``: DLedger's committed position; before any commit, the first data
        file's start if that is past 0 (over an old commit log: the old messages are
        readable), else 0."""
        store = self.dledger_file_store
        if store.committed_pos > 0:
            return store.committed_pos
        if store.has_data_files and store.data_start > 0:
            return store.data_start
        return 0

    def get_confirm_offset(self) -> int:
        """``getConfirmOffset``: ``getMaxOffset``."""
        return self.get_max_offset()

    def get_min_offset(self) -> int:
        """``getMinOffset``: the old commit log's first file while there is one, else the
        first data file's start (files are not deleted here)."""
        if self.mapped_file_queue.mapped_files:
            return self.mapped_file_queue.get_min_offset()
        return self.dledger_file_store.data_start

    def load(self) -> bool:
        """``load``: ``CommitLog#load``, the old commit log's files (none on a new node)."""
        return super().load()

    def recover_normally(self, max_phy_offset_of_consume_queue: int) -> int:
        """``DLedgerCommitLog#recover`` (4.9.3 calls it for a normal and an abnormal exit).

        With DLedger data files: ``dividedCommitlogOffset`` is the first one's start, and
        the consume queues beyond DLedger's written end are truncated. The old commit log
        is not walked again.

        Without (the first start of a node, maybe over an old commit log, "upgrade old
        cluster" in 4.9.3's docs/en/dledger/deploy_guide.md): the old log is recovered as a
        ``CommitLog`` (``CommitLog#recoverNormally``: with no file at all, the consume
        queues are destroyed); if it has a file, a blank (its length, magic
        ``BLANK_MAGIC_CODE``) is written at the last file's write position unless one is
        there, the file counts as full, and DLedger's first data file starts where it
        ends, at ``dividedCommitlogOffset``. Entries follow the old messages, and reads
        below that offset go to the old log (``getData``, ``getMessage``)."""
        store = self.dledger_file_store
        if store.has_data_files:
            self.divided_commitlog_offset = store.data_start
            max_phy_offset = store.end_pos
            if max_phy_offset_of_consume_queue >= max_phy_offset:
                self.store.truncate_dirty_logic_files(max_phy_offset)
            return max_phy_offset
        self._in_recovering_old = True
        try:
            super().recover_normally(max_phy_offset_of_consume_queue)
        finally:
            self._in_recovering_old = False
        mf = self.mapped_file_queue.get_last_mapped_file()
        if mf is None:
            return 0
        pos = mf.wrote_position
        if pos + 8 <= mf.file_size:
            magic = _I32x2.unpack_from(mf.mm, pos)[1]
            if magic != BLANK_MAGIC_CODE:  # "Recover old commitlog found a illegal magic code"
                _I32x2.pack_into(mf.mm, pos, mf.file_size - pos, BLANK_MAGIC_CODE)
                mf.mm.flush()
        mf.wrote_position = mf.file_size
        mf.flushed_position = mf.file_size
        self.divided_commitlog_offset = mf.file_from_offset + mf.file_size
        store.create_first_file(self.divided_commitlog_offset)
        if self.store.tracer is not None and self.store.tracer.enabled:
            self.store.tracer.emit(
                "DLedgerCommitLog.recover", "divided", "state",
                divided_commitlog_offset=self.divided_commitlog_offset,
                old_wrote_position=mf.file_from_offset + pos,
            )  # fmt: skip
        return self.divided_commitlog_offset

    # -- put ------------------------------------------------------------------------------------
    def put_message(self, msg: MessageExtBrokerInner, now_ms: int) -> PutMessageResult:
        """Append one message as a DLedger entry; see the module essay for the steps.

        Mirrors ``DLedgerCommitLog#asyncPutMessage`` (RocketMQ 4.9.3).

        Raises:
            RuntimeError: the node's ``DLedgerServer`` is not running (never added to a
                driver, or stopped).
        """
        server = self._running_server()
        tracer = self.store.tracer
        traced = tracer is not None and tracer.enabled
        # step 1: setMessageInfo
        msg.store_timestamp = now_ms
        tran_type = msg.sys_flag & _TRAN_MASK
        if tran_type == _NOT_TYPE or tran_type == _COMMIT:
            delay = msg.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL)
            if delay:
                level = _delay_time_level(delay)
                if level > 0:
                    self._rewrite_delay(msg, level)
        # step 2: MessageSerializer#serialize
        props = msg.properties_string or ""
        if len(props.encode("utf-8")) > _MAX_PROPERTIES:
            return PutMessageResult(
                PutMessageStatus.MESSAGE_ILLEGAL,
                AppendMessageResult(AppendMessageStatus.PROPERTIES_SIZE_EXCEEDED),
            )
        # step 3: the queue offset (getQueueOffsetByKey), then the entry
        key = f"{msg.topic}-{msg.queue_id}"
        queue_offset = self.topic_queue_table.setdefault(key, 0)
        if tran_type != _NOT_TYPE and tran_type != _COMMIT:
            queue_offset = 0
        msg.queue_offset = queue_offset
        msg.commit_log_offset = 0  # the append hook writes pos + 48
        data = encode_stored_message(msg)
        if len(data) > self.message_store_config.max_message_size:
            return PutMessageResult(
                PutMessageStatus.MESSAGE_ILLEGAL,
                AppendMessageResult(AppendMessageStatus.MESSAGE_SIZE_EXCEEDED),
            )
        ms = server.member_state
        future = server.handle_append(
            AppendEntryRequest(group=ms.group, remote_id=ms.self_id, body=data)
        )
        # step 4: no append
        if future.pos == -1:
            return self._not_appended(C, future)
        # step 5: PUT_OK at pos + 48, before the quorum
        wrote_offset = future.pos + BODY_OFFSET
        msg.commit_log_offset = wrote_offset
        amr = AppendMessageResult(
            AppendMessageStatus.PUT_OK, wrote_offset, len(data),
            create_message_id(msg.store_host, wrote_offset), now_ms, queue_offset,
        )  # fmt: skip
        if tran_type == _NOT_TYPE or tran_type == _COMMIT:
            self.topic_queue_table[key] = queue_offset + 1
        if traced:
            tracer.emit(C, "5", pos=future.pos, wrote_offset=wrote_offset, size=len(data),
                        queue_offset=queue_offset, topic=msg.topic, queue_id=msg.queue_id)  # fmt: skip
        return self._wait_for_quorum(C, future, amr, msg.topic)

    def _running_server(self) -> DLedgerServer:
        """The node's ``DLedgerServer``, which must be running on a driver.

        Raises:
            RuntimeError: it was never added to a driver, or it stopped.
        """
        server = self.dledger_server
        if not server.running:
            raise RuntimeError(
                f"DLedger node {server.config.self_id} is not running on a driver: "
                "add its DLedgerServer to the driver (4.9.3 starts it with the store)"
            )
        return server

    def _not_appended(self, component: str, future: TimeoutFuture) -> PutMessageResult:
        """Step 4: ``handleAppend`` appended nothing (``pos == -1``): OS_PAGECACHE_BUSY at once."""
        tracer = self.store.tracer
        if tracer is not None and tracer.enabled:
            code = future.value.code if future.done else None
            tracer.emit(component, "4", status="OS_PAGECACHE_BUSY",
                        code=None if code is None else R(code).name)  # fmt: skip
        return PutMessageResult(
            PutMessageStatus.OS_PAGECACHE_BUSY,
            AppendMessageResult(AppendMessageStatus.UNKNOWN_ERROR),
        )

    def _wait_for_quorum(
        self, component: str, future: TimeoutFuture, amr: AppendMessageResult, topic: str
    ) -> PutMessageResult:
        """Step 6: the put's result, PUT_OK for now, waiting on the quorum's answer
        (``dledgerFuture.thenApply``); PUT_OK puts are counted by topic then."""
        result = PutMessageResult(PutMessageStatus.PUT_OK, amr)
        tracer = self.store.tracer
        traced = tracer is not None and tracer.enabled
        stats = self.store.store_stats_service

        def answered(resp: AppendEntryResponse) -> None:
            status = status_of(resp.code)
            if status is PutMessageStatus.PUT_OK:  # the statistics of thenApply
                stats.on_put(topic, amr.msg_num, amr.wrote_bytes)
            if traced:
                tracer.emit(component, "6", code=R(resp.code).name, status=status.name,
                            wrote_offset=amr.wrote_offset)  # fmt: skip

        wait = DLedgerAppendWait(future)
        future.when_complete(answered)
        if future.done:
            result.put_message_status = wait.status  # type: ignore[assignment]
        else:
            result.replica_request = wait
        return result

    def put_messages(
        self,
        msgs: list[MessageExtBrokerInner],
        now_ms: int,
        batch_properties: dict[str, str] | None = None,
        own_properties: list[str] | None = None,
    ) -> PutMessageResult:
        """Append a batch, each message an entry of its own; the quorum answers for the last.

        Mirrors ``DLedgerCommitLog#asyncPutMessages`` and
        ``MessageSerializer#serialize(MessageExtBatch)`` (store/dledger, RocketMQ 4.9.3);
        mechanisms.md "DLedger commit log", batch steps 1–6 (trace component
        ``DLedgerCommitLog.asyncPutMessages``):

        1. only NOT_TYPE, and no DELAY among the batch's own properties (else
           MESSAGE_ILLEGAL, no append result); the batch's store timestamp;
        2. each message's commit-log bytes, with **its own properties only**: unlike
           ``CommitLog``'s encoder, DLedger's does not append the batch's (the request
           header's, CLUSTER), so no batched message stored on DLedger carries CLUSTER.
           A message, or the running total, over ``maxMessageSize`` throws
           ``RuntimeException("message size exceeded")`` (lines 908 and 914), which the
           broker answers SYSTEM_ERROR with that exception;
        3. consecutive queue offsets from ``topicQueueTable`` go into the bytes, and one
           ``BatchAppendEntryRequest`` appends them as consecutive entries (each through
           the append hook: PHYSICALOFFSET = its pos + 48);
        4. no append (``pos == -1``) → OS_PAGECACHE_BUSY at once;
        5. the msgId of every entry (``pos + 48``), comma-joined; wroteOffset the first's,
           wroteBytes the total, msgNum the count; ``topicQueueTable`` moves on by it;
        6. the quorum's answer on the last entry decides for the whole batch, as for one
           message (statistics: msgNum puts).

        Args:
            msgs: the batch's messages, one topic and queue id; their ``properties_string``
                is what ``CommitLog`` would store (own + batch), and becomes what this
                stores.
            now_ms: the store timestamp.
            batch_properties: the ``MessageExtBatch``'s own map (DELAY is read there).
            own_properties: each message's own properties string, as the batch body holds
                it; None: each ``properties_string``.

        Raises:
            StoreRuntimeException: "message size exceeded" (step 2), or the
                NumberFormatException of a DELAY that is not a number.
            RuntimeError: the node's ``DLedgerServer`` is not running.
        """
        server = self._running_server()
        tracer = self.store.tracer
        traced = tracer is not None and tracer.enabled
        # step 1
        first = msgs[0]
        topic, queue_id = first.topic, first.queue_id
        delay = (batch_properties or {}).get(mc.PROPERTY_DELAY_TIME_LEVEL)
        if first.sys_flag & _TRAN_MASK != _NOT_TYPE or (delay and _delay_time_level(delay) > 0):
            if traced:
                tracer.emit(CB, "1", status="MESSAGE_ILLEGAL",
                            text="a transactional or delayed batch")  # fmt: skip
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL)
        # step 2: MessageSerializer#serialize(MessageExtBatch)
        if own_properties is None:
            own_properties = [m.properties_string or "" for m in msgs]
        max_size = self.message_store_config.max_message_size
        entries: list[bytearray] = []
        total = 0
        for m, props in zip(msgs, own_properties, strict=True):
            if m.properties_string != props:
                m.properties_string = props
                m.properties = string_to_message_properties(props)
            m.store_timestamp = now_ms
            m.queue_offset = 0
            m.commit_log_offset = 0
            data = encode_stored_message(m)
            if len(data) > max_size:
                raise StoreRuntimeException("message size exceeded", 0, text=_SIZE_EXCEEDED % 908)
            total += len(data)
            if total > max_size:
                raise StoreRuntimeException("message size exceeded", 0, text=_SIZE_EXCEEDED % 914)
            entries.append(bytearray(data))
        # step 3: consecutive queue offsets, then one BatchAppendEntryRequest
        key = f"{topic}-{queue_id}"
        queue_offset = self.topic_queue_table.setdefault(key, 0)
        for i, data in enumerate(entries):
            _I64.pack_into(data, _QUEUE_OFFSET_POSITION, queue_offset + i)
        ms = server.member_state
        future = server.handle_append(BatchAppendEntryRequest(
            group=ms.group, remote_id=ms.self_id, batch_msgs=tuple(bytes(d) for d in entries),
        ))  # fmt: skip
        # step 4: no append
        if future.pos == -1:
            return self._not_appended(CB, future)
        # step 5: every entry's msgId; the queue moves on by the batch
        positions: list[int] = future.positions  # type: ignore[attr-defined]
        offsets = [
            (m.store_host, pos + BODY_OFFSET) for m, pos in zip(msgs, positions, strict=True)
        ]
        for i, (m, (_, wrote_offset)) in enumerate(zip(msgs, offsets, strict=True)):
            m.queue_offset = queue_offset + i
            m.commit_log_offset = wrote_offset
        amr = AppendMessageResult(
            AppendMessageStatus.PUT_OK, offsets[0][1], total,
            lambda: ",".join(create_message_id(h, o) for h, o in offsets), now_ms, queue_offset,
            msg_num=len(positions),
        )  # fmt: skip
        self.topic_queue_table[key] = queue_offset + len(positions)
        if traced:
            tracer.emit(CB, "5", positions=list(positions), wrote_offset=offsets[0][1],
                        size=total, queue_offset=queue_offset, msg_num=len(positions),
                        topic=topic, queue_id=queue_id)  # fmt: skip
        return self._wait_for_quorum(CB, future, amr, topic)

    def append_data(self, start_offset: int, data: bytes) -> bool:
        """``appendData``: a DLedger commit log is never fed by HA."""
        raise RuntimeError("a DLedger commit log grows by DLedger's push, not by HA")

    # -- reads ----------------------------------------------------------------------------------
    def get_data(self, offset: int) -> tuple[_View, int, int] | None:  # type: ignore[override]
        """``getData``: below ``dividedCommitlogOffset`` the old commit log's; else the
        committed bytes from ``offset`` (None at or past ``committedPos``)."""
        if offset < self.divided_commitlog_offset:
            return super().get_data(offset)  # type: ignore[return-value]
        store = self.dledger_file_store
        if offset >= store.committed_pos:
            return None
        ds = store.data_start
        if offset < ds:
            if offset != 0 or not store.has_data_files:
                return None
            # findMappedFileByOffset(0, returnFirstOnNotFound): the first data file from its
            # start (a node whose log began past 0 without an old log; the reput moves on
            # to the result's start offset, as 4.9.3's does)
            first = ds - ds % self.dledger_config.mapped_file_size_for_entry_data
            mm = bytes(ds - first) + bytes(store.data[: store.committed_pos - ds])
            return _View(mm, first), 0, len(mm)
        view = _View(bytes(store.data[offset - ds : store.committed_pos - ds]), offset)
        return view, 0, len(view.mm)

    def get_message(self, offset: int, size: int) -> memoryview | None:
        """``getMessage``: below ``dividedCommitlogOffset`` the old commit log's; else
        ``size`` bytes of the data files at ``offset``, or None."""
        if offset < self.divided_commitlog_offset:
            return super().get_message(offset, size)
        store = self.dledger_file_store
        at = offset - store.data_start
        if at < 0 or at + size > len(store.data):
            return None
        return memoryview(bytes(store.data[at : at + size]))

    def file_holding(self, offset: int) -> _DataFile | None:  # type: ignore[override]
        """The file holding ``offset`` as the pull path reads it: below
        ``dividedCommitlogOffset`` the old commit log's, else a data file, up to what is
        written now (``MmapFileList#findMappedFileByOffset``)."""
        if offset < self.divided_commitlog_offset:
            return super().file_holding(offset)  # type: ignore[return-value]
        size = self.mapped_file_size
        store = self.dledger_file_store
        start = offset - offset % size
        if start < store.data_start or start >= store.end_pos:
            return None
        return _DataFile(store.data, start, size, store.data_start)

    def roll_next_file(self, offset: int) -> int:
        size = self.dledger_config.mapped_file_size_for_entry_data
        return offset + size - offset % size

    def check_message_and_return_size(
        self, buf: object, pos: int, check_crc: bool, read_body: bool = True
    ) -> DispatchRequest:
        """``DLedgerCommitLog#checkMessageAndReturnSize``: an old commit-log entry is
        parsed as such; DLedger's blank → size 0; else skip the 48-byte header, parse the
        message, and ``bufferSize`` := its size + 48."""
        if self._in_recovering_old:
            return super().check_message_and_return_size(buf, pos, check_crc, read_body)
        try:
            magic, magic_old = _I32x2.unpack_from(buf, pos)  # type: ignore[arg-type]
            if magic_old in (BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE):
                return super().check_message_and_return_size(buf, pos, check_crc, read_body)
            if magic == MMAP_BLANK_MAGIC_CODE:
                return DispatchRequest(0, True)
            req = super().check_message_and_return_size(
                buf, pos + BODY_OFFSET, check_crc, read_body
            )
            if req.success or req.msg_size > 0:
                req.buffer_size = req.msg_size + BODY_OFFSET
            return req
        except (struct.error, IndexError, ValueError):
            return DispatchRequest(-1, False)

    def dispatch_request_at(self, buf: object, pos: int, phy_offset: int) -> DispatchRequest:
        """The reput's read: always parsed (no append record on a DLedger log)."""
        return self.check_message_and_return_size(buf, pos, False, False)
