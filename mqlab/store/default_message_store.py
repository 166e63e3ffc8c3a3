"""The message store: lifecycle and recovery, put, dispatch, lookups.

Mirrors ``DefaultMessageStore`` (store, RocketMQ 4.9.3), split by mechanism (docs/design.md
§6.1): ``getMessage`` lives in ``get_message.py`` (mixed in), ``ReputMessageService``
in ``reput_message_service.py``, the two cleaning services in ``clean_services.py``;
this module keeps ``load`` / ``recover`` / ``shutdown``, ``asyncPutMessage(s)`` with
their store checks, ``doDispatch`` (``CommitLogDispatcherBuildConsumeQueue``, then
``CommitLogDispatcherBuildIndex`` into ``index.IndexService``), ``findConsumeQueue``,
``queryMessage`` (by key, through the index) and the offset / time / message lookups.
The put and get counters of ``StoreStatsService`` are in ``store_stats_service``. mechanisms.md "DefaultMessageStore#getMessage"
(``getMessage``), mechanisms.md "Pull processing" step 9; docs/reference.md §4, §6, §10.1, §10.3, §10.6 step 8.

What this module owns: the consume-queue table (``topic`` → ``queueId`` →
``ConsumeQueue``, created on first lookup, as ``findConsumeQueue`` does), the reput
position, the running flags and the fault-injection switches below, and the order of
recovery. What it must not know: time and scheduling. Every method that needs time
takes ``now_ms``; the store owns no timer. Its owner (the broker) runs, on the
simulation scheduler: ``do_reput()`` (ReputMessageService, "every 1 ms"), the schedule
service's ``execute_on_time_up(level, now_ms)`` and ``persist()``, and optionally
``flush()`` / ``clean_files_periodically(now_ms)``. It does do file IO: real files in
RocketMQ's layout under ``store_path_root_dir``.

``load()`` = RocketMQ's ``load()`` + ``start()``: recover the consume queues, then the
commit log (cut at the first invalid entry; units pointing at or beyond the new end are
dropped), then reput from the highest commit-log offset any consume queue covers
(missing units are rebuilt; note RocketMQ's rule: a queue whose files were deleted is
only rebuilt if no other queue covers later entries, so delete the whole
``consumequeue`` dir to rebuild everything), then rebuild ``topic_queue_table`` from the
queues' max offsets. mqlab has no checkpoint file, so an abnormal shutdown (the
``abort`` file left behind: a ``kill()`` or ``power_cut()``, not a ``shutdown()``) is
recovered like a normal one; ``last_shutdown_normal`` records which it was. RocketMQ's
``recoverAbnormally`` instead walks forward from the newest file whose first message is
older than the checkpoint, re-dispatching every entry; it cuts at the same first invalid
entry.

The two crash faults (the store files are memory-mapped, see ``mapped_file``):

* ``kill()`` — the process dies (SIGKILL); the OS page cache survives, so every byte
  written is kept, flushed or not;
* ``power_cut(now_ms, lost_tail_bytes=None)`` — the machine goes down with its page cache;
  each file keeps what its last flush (``msync``) covered, optionally with a torn
  commit-log tail. The flush services run inline in store time
  (``run_flush_services``; ``CommitLog#flush_real_time_service``,
  ``flush_consume_queue_service``).

Fault injection (plain attributes, for lessons and tests):

* ``writeable`` / ``readable`` — RocketMQ's RunningFlags; not writeable →
  SERVICE_NOT_AVAILABLE, not readable → ``get_message`` returns None;
* ``os_page_cache_busy`` — OS_PAGECACHE_BUSY (RocketMQ: put lock held > 1 s);
* ``fault_flush_delay_ms`` — with SYNC_FLUSH, a value above ``sync_flush_timeout``
  gives FLUSH_DISK_TIMEOUT (the message is stored);
* ``disk_used_ratio`` (default 0.0) — the used fraction of the one simulated disk
  that holds every store path, as ``UtilAll#getDiskPartitionSpaceUsedPercent``
  returns it (0.0–1.0). mqlab never measures the real disk (runs must not depend on
  it); only the broker's SERVICE_NOT_AVAILABLE remark shows it.

Replication is no switch: ``ha_service`` (``mqlab.store.ha``;
mechanisms.md "HA replication") is the store's one part on timers and streams, started by the
broker with its node's context (``start_ha``). SYNC_MASTER answers SLAVE_NOT_AVAILABLE
or FLUSH_SLAVE_TIMEOUT from what real slaves report; faults act on the link and the
machines (a cut link, a killed slave, a slow link). A slave's store learns its master's
HA address through ``update_ha_master_address`` and grows by ``append_to_commit_log``.

Everything counts as "in memory" unless ``total_physical_memory_size`` is configured,
so ``check_in_disk_by_consume_offset`` is False by default.
"""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from mqlab.common.message import MessageExt, MessageExtBrokerInner
from mqlab.common.message_decoder import (
    BLANK_MAGIC_CODE,
    MESSAGE_MAGIC_CODE,
    MessageDecodeError,
    decode_stored_message,
)
from mqlab.common.mix_all import is_lmq
from mqlab.common.sysflag import MessageSysFlag
from mqlab.common.topic_validator import RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC
from mqlab.store.clean_services import CleanCommitLogService, CleanConsumeQueueService
from mqlab.store.commit_log import CommitLog, StoreRuntimeException
from mqlab.store.config import (
    BrokerRole,
    FlushDiskType,
    MessageStoreConfig,
    StorePathConfigHelper,
)
from mqlab.store.consume_queue import CQ_STORE_UNIT_SIZE, CQ_UNIT, ConsumeQueue
from mqlab.store.get_message import GetMessageMixin
from mqlab.store.ha.ha_service import HAService
from mqlab.store.index import IndexService, QueryMessageResult
from mqlab.store.mapped_file import Background
from mqlab.store.reput_message_service import ReputMessageService
from mqlab.store.schedule.schedule_message_service import ScheduleMessageService
from mqlab.store.status import DispatchRequest, PutMessageResult, PutMessageStatus
from mqlab.store.store_stats_service import StoreStatsService

__all__ = ["DefaultMessageStore", "MessageArrivingListener"]

#: ``MessageArrivingListener#arriving(topic, queueId, logicOffset + 1, tagsCode,
#: msgStoreTime, filterBitMap, properties)``.
MessageArrivingListener = Callable[[str, int, int, int, int, Any, "dict[str, str] | None"], None]

_NOT_TYPE = MessageSysFlag.TRANSACTION_NOT_TYPE
_COMMIT = MessageSysFlag.TRANSACTION_COMMIT_TYPE
_TRAN_MASK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
_MAX_TOPIC = 127
_MAX_PROPERTIES = 32767

# NOTE: performance: enum members read through the class cost ~70 ns in CPython 3.11.
_PUT_OK = PutMessageStatus.PUT_OK
_SLAVE = BrokerRole.SLAVE

_I32 = struct.Struct(">i")
_I32x2 = struct.Struct(">ii")

C_PUT = "DefaultMessageStore.putMessage"


def _java_length(s: str) -> int:
    """Java ``String#length``: UTF-16 code units (a char above U+FFFF counts twice)."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2


C_RECOVER = "DefaultMessageStore.recover"


class DefaultMessageStore(GetMessageMixin):
    """Mirrors ``DefaultMessageStore`` (store, RocketMQ 4.9.3). See the module essay.

    Args:
        config: the store settings; ``store_path_root_dir`` must be set.
        store_host: ``"ip:port"`` of the broker; stamped on messages whose
            ``store_host`` is still the model's default ``"127.0.0.1:0"``.
        tracer: anything with ``enabled`` and ``emit(component, step, kind, **fields)``.
        arriving_listener: ``MessageArrivingListener#arriving`` (the broker's long
            polling); called by ``do_reput`` for every dispatched entry unless SLAVE.
        dledger_server: with ``enable_d_leger_commit_log``, the node's ``DLedgerServer``
            (default: ``DLedgerCommitLog`` builds one from ``d_leger_*``).

    Raises:
        ValueError: ``config.store_path_root_dir`` is not set.
    """

    def __init__(
        self,
        config: MessageStoreConfig,
        *,
        store_host: str = "127.0.0.1:10911",
        tracer: Any = None,
        arriving_listener: MessageArrivingListener | None = None,
        dledger_server: Any = None,
    ) -> None:
        if not isinstance(config, MessageStoreConfig):
            raise TypeError(f"config must be a MessageStoreConfig, got {type(config).__name__}")
        self.message_store_config = config
        self.root_dir = config.require_root_dir()
        self.store_host = store_host
        self.tracer = tracer
        self.message_arriving_listener = arriving_listener
        self.consume_queue_table: dict[str, dict[int, ConsumeQueue]] = {}
        self.schedule_message_service = ScheduleMessageService(self)
        # DefaultMessageStore's constructor: enableDLegerCommitLog picks DLedgerCommitLog
        if config.enable_d_leger_commit_log:
            from mqlab.store.dledger_commit_log import DLedgerCommitLog

            self.commit_log: CommitLog = DLedgerCommitLog(self, dledger_server)
        else:
            if dledger_server is not None:
                raise ValueError("dledger_server given but enableDLegerCommitLog is false")
            self.commit_log = CommitLog(self)
        self.reput_message_service = ReputMessageService(self)
        self.clean_commit_log_service = CleanCommitLogService(self)
        self.clean_consume_queue_service = CleanConsumeQueueService(self)
        self.store_stats_service = StoreStatsService()
        self.ha_service = HAService(self)
        #: called after replicated bytes were appended (``ReputMessageService#wakeup``);
        #: the broker sets it to its reput timer
        self.reput_wakeup: Callable[[], None] | None = None
        #: where the periodic flush passes (``CommitLog.flush_real_time_service``,
        #: ``flush_consume_queue_service``) hand their forces: None (the simulation, the
        #: default) forces inline; ``mqlab serve`` sets a thread's ``FileSyncer.submit``, as
        #: 4.9.3's FlushRealTimeService and FlushConsumeQueueService force from their own
        #: threads; the flushed positions move when a sync returns
        #: (``MappedFileQueue.flush``). A SYNC_FLUSH put, a shutdown and a power cut still
        #: force inline.
        self.background_sync: Background | None = None
        #: the broker's BrokerStatsManager (DefaultMessageStore's constructor argument in
        #: 4.9.3): the schedule service counts its deliveries there; None in a bare store
        self.broker_stats_manager = None
        self.index_service = IndexService(
            StorePathConfigHelper.get_store_path_index(self.root_dir),
            config.max_hash_slot_num,
            config.max_index_num,
            config.max_msgs_num_batch,
        )
        #: DefaultMessageStore#shutdown: true until load() succeeds, as in Java.
        self.is_shutdown = True
        self.last_shutdown_normal: bool | None = None
        self._load_called = False
        # RunningFlags and fault injection (module essay)
        self.writeable = True
        self.readable = True
        self.os_page_cache_busy = False
        self.fault_flush_delay_ms = 0
        self.disk_used_ratio = 0.0
        #: The master's HA address (``ip:haListenPort``) a slave learned from its
        #: registration (``update_ha_master_address``); None on a master.
        self.ha_master_address: str | None = None
        self._cq_store_path = StorePathConfigHelper.get_store_path_consume_queue(self.root_dir)
        self._cq_file_size = config.get_mapped_file_size_consume_queue()
        #: FlushConsumeQueueService: when its loop last ran and last flushed thoroughly.
        self._cq_flush_run_ms = -(1 << 62)
        self._cq_flush_thorough_ms = 0

    def _traced(self) -> bool:
        t = self.tracer
        return t is not None and t.enabled

    # ==================================================================================
    # lifecycle
    # ==================================================================================
    def load(self) -> bool:
        """Open the files, recover, catch up the consume queues, start accepting.

        Mirrors ``DefaultMessageStore#load`` + ``#recover`` + ``#start`` (store,
        RocketMQ 4.9.3); see the module essay for the order.

        Returns:
            False if a store file cannot be loaded (longer than the configured mapped
            size, or named off the file-size grid) or ``delayOffset.json`` and its
            ``.bak`` are both unreadable; the store then stays shut down.

        Raises:
            ValueError: ``load()`` was already called on this object (to restart, build
                a new ``DefaultMessageStore`` on the same directory).
        """
        if self._load_called:
            raise ValueError("load() was already called; build a new DefaultMessageStore")
        self._load_called = True
        os.makedirs(self.root_dir, exist_ok=True)
        abort_file = StorePathConfigHelper.get_abort_file(self.root_dir)
        last_exit_ok = not os.path.exists(abort_file)
        self.last_shutdown_normal = last_exit_ok
        ok = self.commit_log.load() and self._load_consume_queue()
        ok = ok and self.index_service.load(last_exit_ok)
        if ok:
            self._recover(last_exit_ok)
            ok = self.schedule_message_service.load()
        if ok:
            with open(abort_file, "wb"):
                pass
            self.is_shutdown = False
        if self._traced():
            self.tracer.emit(
                "DefaultMessageStore.load",
                "load",
                "state",
                ok=ok,
                last_shutdown_normal=last_exit_ok,
                min_phy_offset=self.get_min_phy_offset(),
                max_phy_offset=self.get_max_phy_offset(),
                reput_from_offset=self.reput_from_offset,
            )
        return ok

    def _load_consume_queue(self) -> bool:
        """Mirrors ``DefaultMessageStore#loadConsumeQueue``: one queue per
        ``consumequeue/<topic>/<queueId>`` directory."""
        path = self._cq_store_path
        if not os.path.isdir(path):
            return True
        for topic in sorted(os.listdir(path)):
            topic_dir = os.path.join(path, topic)
            if not os.path.isdir(topic_dir):
                continue
            for qid_name in sorted(os.listdir(topic_dir)):
                try:
                    queue_id = int(qid_name)
                except ValueError:
                    continue
                cq = ConsumeQueue(topic, queue_id, path, self._cq_file_size)
                self.consume_queue_table.setdefault(topic, {})[queue_id] = cq
                if not cq.load():
                    return False
        return True

    def _recover(self, last_exit_ok: bool) -> None:
        """Consume queues, then the commit log, then reput and the queue-offset table.

        Mirrors ``DefaultMessageStore#recover`` and the reput start of ``#start``.
        """
        max_phy_offset_of_consume_queue = -1
        for cq in self.all_consume_queues():
            cq.recover()
            if cq.max_physic_offset > max_phy_offset_of_consume_queue:
                max_phy_offset_of_consume_queue = cq.max_physic_offset
        # mqlab: no checkpoint file, so recoverAbnormally is recoverNormally (essay).
        self.commit_log.recover_normally(max_phy_offset_of_consume_queue)
        # DefaultMessageStore#start: reput from the highest offset the queues cover.
        min_offset = self.commit_log.get_min_offset()
        max_physical_pos_in_logic_queue = min_offset
        for cq in self.all_consume_queues():
            if cq.max_physic_offset > max_physical_pos_in_logic_queue:
                max_physical_pos_in_logic_queue = cq.max_physic_offset
        if max_physical_pos_in_logic_queue < 0:
            max_physical_pos_in_logic_queue = 0
        if max_physical_pos_in_logic_queue < min_offset:
            max_physical_pos_in_logic_queue = min_offset
        self.reput_from_offset = max_physical_pos_in_logic_queue
        if not last_exit_ok:
            self._recover_index_abnormally(max_physical_pos_in_logic_queue)
        rebuilt = self.do_reput()
        self.recover_topic_queue_table()
        for cq in self.all_consume_queues():
            for mf in cq.mapped_file_queue.mapped_files:
                if mf.last_modified_ms == 0 and mf.wrote_position >= CQ_STORE_UNIT_SIZE:
                    last = mf.wrote_position - CQ_STORE_UNIT_SIZE
                    phy, size, _tags = CQ_UNIT.unpack_from(mf.mm, last)
                    mf.last_modified_ms = max(0, self.commit_log.pickup_store_timestamp(phy, size))
        if self._traced():
            self.tracer.emit(
                C_RECOVER,
                "reput",
                last_shutdown_normal=last_exit_ok,
                reput_from_offset=max_physical_pos_in_logic_queue,
                rebuilt_units=rebuilt,
                max_phy_offset=self.get_max_phy_offset(),
            )

    def _recover_index_abnormally(self, stop: int) -> None:
        """The index after an abnormal exit (``index.index_service`` essay): drop the files
        newer than the last full one, then index the last commit-log file's entries again
        up to ``stop``, where the reput takes over (``CommitLog#recoverAbnormally``
        re-dispatches from its checkpoint file; ``buildIndex`` skips what a file already
        covers)."""
        svc = self.index_service
        svc.destroyed_on_recovery = svc.destroy_after_checkpoint()
        last = self.commit_log.mapped_file_queue.get_last_mapped_file()
        if last is None:
            return
        if not self.message_store_config.message_index_enable:
            return
        buf, base, pos = last.mm, last.file_from_offset, 0
        while pos < last.wrote_position and base + pos < stop:
            req = self.commit_log.check_message_and_return_size(buf, pos, False, False)
            if not req.success or req.msg_size <= 0:
                break  # the blank end-of-file marker, or the end of valid data
            svc.build_index(req.topic, base + pos, req.store_timestamp, req.sys_flag,
                            req.keys, req.uniq_key)  # fmt: skip
            svc.reindexed_on_recovery += 1
            pos += req.msg_size

    def recover_topic_queue_table(self) -> None:
        """``topic_queue_table`` := every queue's max offset; correct the min offsets.

        Mirrors ``DefaultMessageStore#recoverTopicQueueTable``.
        """
        table: dict[str, int] = {}
        min_phy_offset = self.commit_log.get_min_offset()
        for cq in self.all_consume_queues():
            table[f"{cq.topic}-{cq.queue_id}"] = cq.get_max_offset_in_queue()
            cq.correct_min_offset(min_phy_offset)
        self.commit_log.topic_queue_table = table

    def truncate_dirty_logic_files(self, phy_offset: int) -> None:
        """Mirrors ``DefaultMessageStore#truncateDirtyLogicFiles``."""
        for cq in self.all_consume_queues():
            removed = cq.truncate_dirty_logic_files(phy_offset)
            if removed and self._traced():
                self.tracer.emit(
                    "ConsumeQueue.truncateDirtyLogicFiles",
                    "truncate",
                    topic=cq.topic,
                    queue_id=cq.queue_id,
                    phy_offset=phy_offset,
                    removed_units=removed,
                    max_offset=cq.get_max_offset_in_queue(),
                )

    def destroy_logics(self) -> None:
        """Delete every consume queue. Mirrors ``DefaultMessageStore#destroyLogics``
        (recovery found no commit-log file at all)."""
        for cq in self.all_consume_queues():
            cq.destroy()
        self.consume_queue_table.clear()
        if os.path.isdir(self._cq_store_path):
            shutil.rmtree(self._cq_store_path, ignore_errors=True)

    def shutdown(self) -> None:
        """Stop: finish dispatching, persist delay offsets, flush, remove the abort file.

        Mirrors ``DefaultMessageStore#shutdown`` (and its ``MappedFile#cleanup``: every
        file is unmapped).
        """
        if self.is_shutdown:
            return
        self.ha_service.shutdown()
        self.do_reput()
        self.schedule_message_service.shutdown()
        self.is_shutdown = True
        self.flush()
        self.unmap()
        if self.writeable and self.dispatch_behind_bytes() == 0:
            try:
                os.remove(StorePathConfigHelper.get_abort_file(self.root_dir))
            except FileNotFoundError:
                pass
        if self._traced():
            self.tracer.emit(
                "DefaultMessageStore.shutdown",
                "shutdown",
                "state",
                max_phy_offset=self.get_max_phy_offset(),
            )

    def kill(self) -> None:
        """The broker process is killed (SIGKILL): none of ``shutdown``'s steps run.

        Every byte written into the mapped files is already in the OS page cache, which
        outlives the process (the kernel writes it back), so nothing is lost, flushed or
        not. Nothing else happens: no flush, no reput catch-up (recovery rebuilds the
        missing units), no delay-offset persist (``delayOffset.json`` keeps what the 10 s
        timer last wrote), and the ``abort`` file stays, so the next ``load`` sees an
        abnormal exit (``DefaultMessageStore#load``: ``lastExitOK = !isTempFileExist()``).
        The maps stay readable for inspection, as the page cache does, until ``unmap()``.
        Idempotent.
        """
        if self.is_shutdown:
            return
        self.is_shutdown = True

    def power_cut(
        self, now_ms: int | None = None, *, lost_tail_bytes: int | None = None
    ) -> dict[str, int]:
        """The machine loses power (or the OS crashes): the process dies *and* the OS page
        cache is lost.

        What survives of each mapped file is what its disk holds: the bytes up to its
        flushed position (``MappedByteBuffer#force``), zeros after it (mqlab's model,
        see ``mapped_file``). ``lost_tail_bytes`` models the kernel's own write-back
        before the cut: everything written to the commit log except its last
        ``lost_tail_bytes`` had reached the disk, so the last entry may be **torn** (its
        head on disk, its tail zeros); flushed bytes are never lost. The consume queues
        lose everything after their flushed positions (recovery rebuilds those units from
        the commit log). As with ``kill``, nothing of ``shutdown`` runs and the ``abort``
        file stays. The config files (``MixAll#string2File``) are kept as last written.
        The maps stay readable (now holding what the disk holds) until ``unmap()``.

        ``now_ms``: when the power goes; the flush services get their last pass first if
        one is due then (``CommitLog#flush_real_time_service``,
        ``flush_consume_queue_service``).

        Returns:
            ``commit_log_wrote`` and ``commit_log_flushed`` (offsets before the cut),
            ``commit_log_kept`` (the offset up to which bytes survive) and
            ``consume_queue_lost_bytes``; empty if the store was already down (a killed
            process's pages count as written back: the model forgets which were dirty).

        Raises:
            ValueError: ``lost_tail_bytes`` is negative.
        """
        if lost_tail_bytes is not None and lost_tail_bytes < 0:
            raise ValueError(f"lost_tail_bytes must be >= 0, got {lost_tail_bytes!r}")
        if self.is_shutdown:
            return {}
        if now_ms is not None:
            self.run_flush_services(now_ms)  # their last pass, if one is due
        self.is_shutdown = True
        mfq = self.commit_log.mapped_file_queue
        wrote = mfq.get_max_offset()
        flushed = min(mfq.flushed_where, wrote)
        keep = None if lost_tail_bytes is None else max(flushed, wrote - lost_tail_bytes)
        mfq.revert_to_disk(keep)
        cq_lost = 0
        for cq in self.all_consume_queues():
            cq_lost += cq.mapped_file_queue.revert_to_disk()
        # index files: what their last force covered (the current one is forced only when
        # full); recovery then drops and rebuilds it (_recover_index_abnormally)
        self.index_service.revert_to_disk()
        info = {
            "commit_log_wrote": wrote,
            "commit_log_flushed": flushed,
            "commit_log_kept": mfq.get_max_offset(),
            "consume_queue_lost_bytes": cq_lost,
        }
        if self._traced():
            self.tracer.emit(
                "DefaultMessageStore.powerCut",
                "power_cut",
                "fault",
                **info,
                text=(
                    f"power cut: the page cache is lost; the commit log keeps "
                    f"{info['commit_log_kept']} of {wrote} bytes written "
                    f"({flushed} flushed), the consume queues lose {cq_lost} bytes"
                ),
            )
        return info

    def unmap(self) -> None:
        """Unmap every commit-log, consume-queue and index file (``MappedFile#cleanup``): the
        process is gone. ``shutdown`` does it; after ``kill`` / ``power_cut`` the owner
        does (the Lab on restart and close). Reading the store afterwards is an error.
        Idempotent."""
        self.commit_log.mapped_file_queue.close()
        for cq in self.all_consume_queues():
            cq.mapped_file_queue.close()
        self.index_service.close()

    def run_flush_services(self, now_ms: int) -> None:
        """A pass of each flush service that is due at ``now_ms``: ``FlushRealTimeService``
        (ASYNC_FLUSH; SYNC_FLUSH forces in the put path) and ``FlushConsumeQueueService``.
        ``mqlab serve`` calls it on a timer; nothing happens once the store is down."""
        if self.is_shutdown:
            return
        if self.message_store_config.flush_disk_type != FlushDiskType.SYNC_FLUSH:
            self.commit_log.flush_real_time_service(now_ms)
        self.flush_consume_queue_service(now_ms)

    def flush_consume_queue_service(self, now_ms: int) -> bool:
        """One pass of ``DefaultMessageStore.FlushConsumeQueueService#doFlush``, if due.

        RocketMQ's thread waits ``flushIntervalConsumeQueue`` (1 s) between passes; each
        pass forces every consume queue holding at least ``flushConsumeQueueLeastPages``
        (2) dirty pages, or everything once ``flushConsumeQueueThoroughInterval`` (60 s)
        has passed. mqlab runs the pass inline, in store time: after a reput pass (with the
        last dispatched entry's store time) and before a power cut. Units lost to a power
        cut are rebuilt from the commit log by recovery.

        Returns:
            True if the pass ran.
        """
        cfg = self.message_store_config
        if now_ms - self._cq_flush_run_ms < cfg.flush_interval_consume_queue:
            return False
        self._cq_flush_run_ms = now_ms
        least = cfg.flush_consume_queue_least_pages
        if now_ms >= self._cq_flush_thorough_ms + cfg.flush_consume_queue_thorough_interval:
            self._cq_flush_thorough_ms = now_ms
            least = 0
        background = self.background_sync
        for qmap in self.consume_queue_table.values():
            for cq in qmap.values():
                cq.flush(least, background)
        return True

    def flush(self) -> int:
        """Force the commit log and every consume queue to disk (``msync``).

        Stands for RocketMQ's flush services (``FlushRealTimeService``,
        ``FlushConsumeQueueService``) run to completion.

        Returns:
            The commit log's flushed-where offset.
        """
        where = self.commit_log.flush()
        for cq in self.all_consume_queues():
            cq.flush(0)
        self.index_service.flush()
        return where

    # ==================================================================================
    # put (docs/reference.md §10.6 step 8)
    # ==================================================================================
    def _check_store_status(self) -> PutMessageStatus:
        """Mirrors ``DefaultMessageStore#checkStoreStatus``."""
        if self.is_shutdown:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if self.message_store_config.broker_role == BrokerRole.SLAVE:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if not self.writeable:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        if self.os_page_cache_busy:
            return PutMessageStatus.OS_PAGECACHE_BUSY
        return PutMessageStatus.PUT_OK

    @staticmethod
    def _check_message(msg: MessageExtBrokerInner) -> PutMessageStatus:
        """Mirrors ``DefaultMessageStore#checkMessage``: topic longer than 127 or
        properties string longer than 32767 (Java ``String#length``, UTF-16 units) →
        MESSAGE_ILLEGAL. mqlab also rejects a topic over 127 UTF-8 bytes, since its
        length is stored in one signed byte."""
        topic = msg.topic
        if not topic.isascii():
            if _java_length(topic) > _MAX_TOPIC or len(topic.encode()) > _MAX_TOPIC:
                return PutMessageStatus.MESSAGE_ILLEGAL
        elif len(topic) > _MAX_TOPIC:
            return PutMessageStatus.MESSAGE_ILLEGAL
        props = msg.properties_string
        if props and len(props) > _MAX_PROPERTIES // 2 and _java_length(props) > _MAX_PROPERTIES:
            return PutMessageStatus.MESSAGE_ILLEGAL
        return _PUT_OK

    def put_message(self, msg: MessageExtBrokerInner, now_ms: int) -> PutMessageResult:
        """Store one message.

        Mirrors ``DefaultMessageStore#asyncPutMessage`` (store, RocketMQ 4.9.3), run to
        completion; docs/reference.md §10.6 steps 8–9. Checks in order: shut down / SLAVE / not
        writeable → SERVICE_NOT_AVAILABLE; page cache busy → OS_PAGECACHE_BUSY; topic or
        properties string too long → MESSAGE_ILLEGAL; then ``CommitLog#put_message``
        (delay rewrite, PROPERTIES_SIZE_EXCEEDED, MESSAGE_ILLEGAL for size,
        CREATE_MAPEDFILE_FAILED, FLUSH_DISK_TIMEOUT, SLAVE_NOT_AVAILABLE,
        FLUSH_SLAVE_TIMEOUT).

        Args:
            msg: the message; ``store_host`` should be the broker's address.
            now_ms: the store timestamp.
        """
        # NOTE: performance: the all-clear case of both checks costs a few attribute reads.
        if (
            self.is_shutdown
            or not self.writeable
            or self.os_page_cache_busy
            or self.message_store_config.broker_role == _SLAVE
        ):
            status = self._check_store_status()
        elif (
            msg.topic.isascii()
            and len(msg.topic) <= _MAX_TOPIC
            and len(msg.properties_string or "") <= _MAX_PROPERTIES // 2
        ):
            status = _PUT_OK  # checkMessage, short ASCII case inlined
        else:
            status = self._check_message(msg)
        if status is not _PUT_OK:
            # returned before the commit log: StoreStatsService counts no failed put
            result = PutMessageResult(status)
        else:
            if msg.store_host == "127.0.0.1:0":
                msg.store_host = self.store_host
            result = self.commit_log.put_message(msg, now_ms)
            self._count_put(msg.topic, result, 1)
            if self.ha_service.connection_list:  # the write services poll for new data
                self.ha_service.notify_appended()
        tracer = self.tracer
        if tracer is not None and tracer.enabled:
            amr = result.append_message_result
            self.tracer.emit(
                C_PUT,
                "8" if amr is None else "9",
                status=result.put_message_status.name,
                topic=msg.topic,
                queue_id=msg.queue_id,
                queue_offset=amr.logics_offset if amr is not None else None,
                commit_log_offset=amr.wrote_offset if amr is not None else None,
                size=amr.wrote_bytes if amr is not None else None,
            )
        return result

    def put_messages(
        self,
        msgs: list[MessageExtBrokerInner],
        now_ms: int,
        *,
        batch_properties: dict[str, str] | None = None,
        body_length: int | None = None,
        own_properties: list[str] | None = None,
    ) -> PutMessageResult:
        """Store a batch (one topic, one queue) with consecutive queue offsets.

        Mirrors ``DefaultMessageStore#asyncPutMessages`` (store, RocketMQ 4.9.3):
        ``checkStoreStatus``, then ``checkMessages`` (topic longer than 127, or the
        client's batch body longer than ``max_message_size`` → MESSAGE_ILLEGAL; no
        per-message properties check), then ``CommitLog#put_messages``.

        Args:
            msgs: the entries (see ``CommitLog#put_messages``).
            now_ms: the store timestamp.
            batch_properties: the batch's own properties (request header + CLUSTER).
            body_length: the length of the request body the batch was decoded from;
                None: as if each message's stored properties were its own (20 + body
                + 2 + properties bytes per message, the batch body format).
            own_properties: each message's own properties string, as the batch body
                holds it (``DLedgerCommitLog`` stores these alone); None: each
                ``properties_string``.

        Raises:
            StoreRuntimeException: ``msgs`` is empty (Java: a batch whose body is null,
                a NullPointerException in ``checkMessages``); see ``CommitLog#put_messages``.
            ValueError: ``msgs`` mixes topics / queue ids.
        """
        status = self._check_store_status()
        if status is PutMessageStatus.PUT_OK:
            if not msgs:
                # a batch without a body: checkMessages reads getBody().length of null
                raise StoreRuntimeException.null_pointer(
                    "DefaultMessageStore.checkMessages(DefaultMessageStore.java:390)"
                )
            # checkMessages
            if body_length is None:
                body_length = sum(
                    22 + len(m.body or b"") + len((m.properties_string or "").encode())
                    for m in msgs
                )
            topic = msgs[0].topic  # mqlab also counts UTF-8 bytes, as in _check_message
            if _java_length(topic) > _MAX_TOPIC or len(topic.encode()) > _MAX_TOPIC:
                status = PutMessageStatus.MESSAGE_ILLEGAL
            elif body_length > self.message_store_config.max_message_size:
                status = PutMessageStatus.MESSAGE_ILLEGAL
        if status is not PutMessageStatus.PUT_OK:
            result = PutMessageResult(status)  # not counted as a failed put (see put_message)
        else:
            for m in msgs:
                if m.store_host == "127.0.0.1:0":
                    m.store_host = self.store_host
            result = self.commit_log.put_messages(msgs, now_ms, batch_properties, own_properties)
            self._count_put(msgs[0].topic, result, len(msgs))
            if self.ha_service.connection_list:
                self.ha_service.notify_appended()
        if self._traced():
            amr = result.append_message_result
            self.tracer.emit(
                "DefaultMessageStore.putMessages",
                "8" if amr is None else "9",
                status=result.put_message_status.name,
                topic=msgs[0].topic,
                queue_id=msgs[0].queue_id,
                msg_num=len(msgs),
                queue_offset=amr.logics_offset if amr is not None else None,
                commit_log_offset=amr.wrote_offset if amr is not None else None,
            )
        return result

    # ==================================================================================
    # HA replication (mqlab.store.ha)
    # ==================================================================================
    def start_ha(self, ctx: Any, listen_addr: str) -> None:
        """Start the HA service on the node's context: accept slaves on ``listen_addr``, and on
        a SLAVE run the client towards ``ha_master_address`` once it is known.

        Mirrors the ``haService.start()`` of ``DefaultMessageStore#start``. A configured
        ``haMasterAddress`` is set before this by the broker, as ``BrokerController#initialize``
        does, so the client's first turn connects at once.
        """
        self.ha_service.start(ctx, listen_addr)

    def update_ha_master_address(self, addr: str | None) -> None:
        """The master's HA address (``ip:port``), from the slave's registration.

        Mirrors ``DefaultMessageStore#updateHaMasterAddress`` → ``HAClient#updateMasterAddress``
        (None, as Java's null, leaves the client without an address: it connects nowhere).

        Raises:
            TypeError: ``addr`` is neither a string nor None.
        """
        if addr is not None and not isinstance(addr, str):
            raise TypeError(f"addr must be an 'ip:port' string or None, got {addr!r}")
        if self._traced() and addr != self.ha_master_address:
            self.tracer.emit(
                "DefaultMessageStore.updateHaMasterAddress", "update", "state",
                old=self.ha_master_address, new=addr,
                text=f"HA master address {self.ha_master_address} -> {addr}",
            )  # fmt: skip
        self.ha_master_address = addr
        self.ha_service.update_master_address(addr)

    def get_commit_log_data(self, offset: int):
        """``(file, start, end)`` of the commit log from ``offset`` to its file's written end,
        or None. Mirrors ``DefaultMessageStore#getCommitLogData`` (None once shut down)."""
        if self.is_shutdown:
            return None
        return self.commit_log.get_data(offset)

    def append_to_commit_log(self, start_offset: int, data: bytes) -> bool:
        """Append replicated bytes and wake the reput. Mirrors
        ``DefaultMessageStore#appendToCommitLog`` (False once shut down)."""
        if self.is_shutdown:
            return False
        result = self.commit_log.append_data(start_offset, data)
        if result and self.reput_wakeup is not None:
            self.reput_wakeup()
        return result

    def slave_fall_behind_much(self) -> int:
        """How far the slaves' reports are behind the commit log's end. Mirrors
        ``DefaultMessageStore#slaveFallBehindMuch``."""
        return self.commit_log.get_max_offset() - self.ha_service.push2_slave_max_offset

    def _count_put(self, topic: str, result: PutMessageResult, msg_num: int) -> None:
        """``StoreStatsService``'s put counters: OK puts by topic, else a failed put.

        Only for puts that reached the commit log: ``asyncPutMessage(s)`` returns the
        ``checkStoreStatus`` / ``checkMessage(s)`` refusals before the ``thenAccept`` that
        counts ``putMessageFailedTimes`` (DefaultMessageStore, rocketmq-all-4.9.3; found
        by the conformance row ``connections-stats-and-offsets/runtime_info``).
        """
        amr = result.append_message_result
        if result.is_ok() and amr is not None:
            if self.commit_log.counts_own_puts:
                return  # DLedgerCommitLog counts a put once the quorum made it PUT_OK
            self.store_stats_service.on_put(topic, msg_num, amr.wrote_bytes)
        else:
            self.store_stats_service.put_message_failed_times += 1

    # ==================================================================================
    # reput (ReputMessageService) and dispatch
    # ==================================================================================
    @property
    def reput_from_offset(self) -> int:
        """``ReputMessageService#reputFromOffset``: the next commit-log byte to dispatch."""
        return self.reput_message_service.reput_from_offset

    @reput_from_offset.setter
    def reput_from_offset(self, offset: int) -> None:
        self.reput_message_service.reput_from_offset = offset

    def do_reput(self) -> int:
        """One pass of ``ReputMessageService#doReput``; see ``reput_message_service``.

        Returns:
            The number of entries dispatched.
        """
        return self.reput_message_service.do_reput()

    def do_dispatch(self, req: DispatchRequest) -> None:
        """Run the dispatchers in Java's order: ``CommitLogDispatcherBuildConsumeQueue``
        (NOT_TYPE and COMMIT only), then ``CommitLogDispatcherBuildIndex`` (when
        ``messageIndexEnable``). Mirrors ``DefaultMessageStore#doDispatch``.

        The index step is not traced on its own: the reput's ``dispatch`` event stands for
        both dispatchers (the Lab's ``inspect_index`` shows the index files).
        """
        self._build_consume_queue(req)
        if self.message_store_config.message_index_enable:
            self.index_service.build_index(
                req.topic, req.commit_log_offset, req.store_timestamp, req.sys_flag,
                req.keys, req.uniq_key,
            )  # fmt: skip

    def _build_consume_queue(self, req: DispatchRequest) -> None:
        """``CommitLogDispatcherBuildConsumeQueue#dispatch``."""
        tran_type = req.sys_flag & _TRAN_MASK
        if tran_type == _NOT_TYPE or tran_type == _COMMIT:
            # NOTE: performance: findConsumeQueue's hit inlined (~0.1 µs per entry).
            qmap = self.consume_queue_table.get(req.topic)
            cq = None if qmap is None else qmap.get(req.queue_id)
            if cq is None:
                cq = self.find_consume_queue(req.topic, req.queue_id)
            try:
                cq.put_message_position_info(
                    req.commit_log_offset,
                    req.msg_size,
                    req.tags_code,
                    req.consume_queue_offset,
                    req.store_timestamp,
                )
            except OSError as e:
                # RunningFlags#makeLogicsQueueError: the store stops accepting writes.
                self.writeable = False
                if self._traced():
                    self.tracer.emit(
                        "ConsumeQueue.putMessagePositionInfoWrapper",
                        "error",
                        "error",
                        topic=req.topic,
                        queue_id=req.queue_id,
                        text=f"consume queue can not write: {e}",
                    )

    def dispatch_behind_bytes(self) -> int:
        """Commit-log bytes not dispatched yet. Mirrors ``DefaultMessageStore#dispatchBehindBytes``."""
        return self.reput_message_service.behind()

    # ==================================================================================
    # consume queues and lookups (getMessage itself: get_message.GetMessageMixin)
    # ==================================================================================
    def find_consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        """The queue's ``ConsumeQueue``, created (in memory only) on first lookup.

        Mirrors ``DefaultMessageStore#findConsumeQueue``; docs/reference.md §6.
        """
        qmap = self.consume_queue_table.get(topic)
        if qmap is None:
            qmap = self.consume_queue_table[topic] = {}
        cq = qmap.get(queue_id)
        if cq is None:
            cq = ConsumeQueue(topic, queue_id, self._cq_store_path, self._cq_file_size)
            qmap[queue_id] = cq
        return cq

    # ==================================================================================
    # offsets and lookups
    # ==================================================================================
    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """Mirrors ``DefaultMessageStore#getMaxOffsetInQueue`` (0 for an unknown queue)."""
        return self.find_consume_queue(topic, queue_id).get_max_offset_in_queue()

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """Mirrors ``DefaultMessageStore#getMinOffsetInQueue`` (0 for an unknown queue)."""
        return self.find_consume_queue(topic, queue_id).get_min_offset_in_queue()

    def get_commit_log_offset_in_queue(
        self, topic: str, queue_id: int, consume_queue_offset: int
    ) -> int:
        """The commit-log offset of a unit, 0 if there is none.

        Mirrors ``DefaultMessageStore#getCommitLogOffsetInQueue``.
        """
        unit = self.find_consume_queue(topic, queue_id).get_unit(consume_queue_offset)
        return 0 if unit is None else unit[0]

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """Mirrors ``DefaultMessageStore#getOffsetInQueueByTime``; docs/reference.md §6."""
        cq = self.find_consume_queue(topic, queue_id)
        return cq.get_offset_in_queue_by_time(
            timestamp, self.commit_log.pickup_store_timestamp, self.get_min_phy_offset()
        )

    def _get_store_time(self, unit: tuple[int, int, int] | None) -> int:
        """Mirrors ``DefaultMessageStore#getStoreTime``: -1 when anything is missing."""
        if unit is None:
            return -1
        return self.commit_log.pickup_store_timestamp(unit[0], unit[1])

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        """Store time of the queue's first message, -1 if none.

        Mirrors ``DefaultMessageStore#getEarliestMessageTime(topic, queueId)``.
        """
        cq = self.find_consume_queue(topic, queue_id)
        return self._get_store_time(cq.get_unit(cq.get_min_offset_in_queue()))

    def get_message_store_timestamp(
        self, topic: str, queue_id: int, consume_queue_offset: int
    ) -> int:
        """Store time of one message, -1 if none.

        Mirrors ``DefaultMessageStore#getMessageStoreTimeStamp``.
        """
        cq = self.find_consume_queue(topic, queue_id)
        return self._get_store_time(cq.get_unit(consume_queue_offset))

    def get_max_phy_offset(self) -> int:
        """Mirrors ``DefaultMessageStore#getMaxPhyOffset``."""
        return self.commit_log.get_max_offset()

    def get_store_path_physic(self) -> str:
        """Where the commit log's files are: on DLedger, the node's data directory
        (``DLedgerConfig#getDataStorePath``: ``<storeBaseDir>/dledger-<selfId>/data``), else
        ``storePathCommitLog``. Mirrors ``DefaultMessageStore#getStorePathPhysic``."""
        dledger_server = getattr(self.commit_log, "dledger_server", None)
        if self.message_store_config.enable_d_leger_commit_log and dledger_server is not None:
            return dledger_server.config.get_data_store_path()
        return self.message_store_config.get_store_path_commit_log()

    def get_min_phy_offset(self) -> int:
        """Mirrors ``DefaultMessageStore#getMinPhyOffset`` (-1 with no commit-log file)."""
        return self.commit_log.get_min_offset()

    def select_one_message_by_offset(self, commit_log_offset: int) -> bytes | None:
        """The raw stored entry at ``commit_log_offset``, or None.

        Mirrors ``DefaultMessageStore#selectOneMessageByOffset(long)``.
        """
        head = self.commit_log.get_message(commit_log_offset, 4)
        if head is None:
            return None
        size = _I32.unpack_from(head)[0]
        if size <= 0:
            return None
        entry = self.commit_log.get_message(commit_log_offset, size)
        return None if entry is None else bytes(entry)

    def look_message_by_offset(
        self, commit_log_offset: int, size: int | None = None
    ) -> MessageExt | None:
        """The decoded message at ``commit_log_offset`` (body kept compressed), or None.

        Mirrors ``DefaultMessageStore#lookMessageByOffset(long)`` and ``(long, int)``.
        """
        if size is None:
            head = self.commit_log.get_message(commit_log_offset, 4)
            if head is None:
                return None
            size = _I32.unpack_from(head)[0]
        if size <= 0:
            return None
        entry = self.commit_log.get_message(commit_log_offset, size)
        if entry is None:
            return None
        try:
            return decode_stored_message(entry, 0, read_body=True, inflate=False)
        except MessageDecodeError:
            return None

    def query_message(
        self, topic: str, key: str, max_num: int, begin: int, end: int
    ) -> QueryMessageResult:
        """The stored entries indexed under ``topic#key`` with store times in [begin, end].

        Mirrors ``DefaultMessageStore#queryMessage`` (store, RocketMQ 4.9.3): up to three
        index lookups; each sorts the offsets it found (oldest first) and reads each entry
        (``lookMessageByOffset``, then the raw entry); when a lookup found offsets but no
        entry could be read, the next one searches again up to the store time of the first
        offset it tried. Entries whose bytes are gone (a deleted file) are skipped.
        """
        result = QueryMessageResult()
        last_query_msg_time = end
        for _ in range(3):
            found = self.index_service.query_offset(topic, key, max_num, begin, last_query_msg_time)
            if not found.phy_offsets:
                break
            found.phy_offsets.sort()
            result.index_last_update_phyoffset = found.index_last_update_phyoffset
            result.index_last_update_timestamp = found.index_last_update_timestamp
            for m, offset in enumerate(found.phy_offsets):
                msg = self.look_message_by_offset(offset)
                if msg is None:
                    continue  # Java: NullPointerException, caught and logged
                if m == 0:
                    last_query_msg_time = msg.store_timestamp
                raw = self.select_one_message_by_offset(offset)
                if raw is not None:
                    result.message_buffers.append(raw)
            if result.buffer_total_size > 0 or last_query_msg_time < begin:
                break
        return result

    # ==================================================================================
    # cleaning (clean_services)
    # ==================================================================================
    def delete_expired_commit_log_files(
        self, now_ms: int, *, clean_immediately: bool = False
    ) -> int:
        """One pass of ``CleanCommitLogService``: delete commit-log files last written
        ``file_reserved_time`` hours ago (never the current one).

        Returns:
            The number of files deleted.
        """
        return self.clean_commit_log_service.delete_expired_files(now_ms, clean_immediately)

    def delete_expired_consume_queue_files(self) -> int:
        """One pass of ``CleanConsumeQueueService``: drop consume-queue files that only
        index deleted entries and correct every queue's min offset.

        Returns:
            The number of files deleted.
        """
        return self.clean_consume_queue_service.delete_expired_files()

    def clean_files_periodically(self, now_ms: int) -> None:
        """Both passes, as RocketMQ's 10 s ``cleanFilesPeriodically`` task runs them."""
        self.delete_expired_commit_log_files(now_ms)
        self.delete_expired_consume_queue_files()

    def clean_unused_topic(self, topics: Iterable[str]) -> int:
        """Destroy the consume queues of every topic not in ``topics``.

        Mirrors ``DefaultMessageStore#cleanUnusedTopic`` (store, RocketMQ 4.9.3), called
        by DELETE_TOPIC_IN_BROKER with the topics still configured. SCHEDULE_TOPIC_XXXX,
        RMQ_SYS_TRANS_OP_HALF_TOPIC and ``%LMQ%`` topics are kept. Each destroyed queue
        is also dropped from the commit log's ``topic_queue_table``
        (``removeQueueFromTopicQueueTable``), so a topic created again starts at queue
        offset 0. The commit-log entries stay.

        Returns:
            0, as Java does.
        """
        keep = set(topics)
        for topic in sorted(self.consume_queue_table):
            if topic in keep or topic in (RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC):
                continue
            if is_lmq(topic):
                continue
            self._destroy_topic_queues(topic, self.consume_queue_table.pop(topic).values())
        return 0

    def clean_expired_consumer_queue(self) -> None:
        """Destroy every consume queue whose last unit points below the commit log's
        first offset (its messages are all gone), and drop a topic left without queues.

        Mirrors ``DefaultMessageStore#cleanExpiredConsumerQueue`` (store, RocketMQ
        4.9.3), called by CLEAN_EXPIRED_CONSUMEQUEUE (``mqadmin cleanExpiredCQ``).
        SCHEDULE_TOPIC_XXXX is skipped; a queue without units (last offset -1) is kept
        ("maybe ConsumeQueue was created just now"). Each destroyed queue also leaves the
        commit log's ``topic_queue_table``. Topics in table order (Java: hash order).
        """
        min_commit_log_offset = self.commit_log.get_min_offset()
        for topic in list(self.consume_queue_table):
            if topic == RMQ_SYS_SCHEDULE_TOPIC:
                continue
            qmap = self.consume_queue_table[topic]
            for queue_id, cq in list(qmap.items()):
                last = cq.get_last_offset()
                if last != -1 and last < min_commit_log_offset:
                    del qmap[queue_id]
                    self._destroy_topic_queues(topic, [cq], "cleanExpiredConsumerQueue")
            if not qmap:
                del self.consume_queue_table[topic]

    def get_consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        """The queue if it exists (loaded or looked up before), else None; unlike
        :meth:`find_consume_queue` it creates nothing.

        Mirrors ``DefaultMessageStore#getConsumeQueue``.
        """
        qmap = self.consume_queue_table.get(topic)
        return None if qmap is None else qmap.get(queue_id)

    def clean_unused_lmq_topic(self, topic: str) -> None:
        """Destroy queue 0 of an ``%LMQ%`` topic. Mirrors ``DefaultMessageStore#cleanUnusedLmqTopic``."""
        qmap = self.consume_queue_table.pop(topic, None)
        if qmap is not None and 0 in qmap:
            self._destroy_topic_queues(topic, [qmap[0]])

    def _destroy_topic_queues(
        self, topic: str, queues: Iterable[ConsumeQueue], method: str = "cleanUnusedTopic"
    ) -> None:
        ids = []
        for cq in sorted(queues, key=lambda q: q.queue_id):
            cq.destroy()
            ids.append(cq.queue_id)
            # CommitLog#removeQueueFromTopicQueueTable
            self.commit_log.topic_queue_table.pop(f"{topic}-{cq.queue_id}", None)
        if self._traced():
            self.tracer.emit(
                f"DefaultMessageStore.{method}", "destroy", topic=topic, queues=ids,
                text=f"consume queue(s) {ids} of {topic} destroyed",
            )  # fmt: skip

    # ==================================================================================
    # inspection helpers (for the lab)
    # ==================================================================================
    def all_consume_queues(self) -> list[ConsumeQueue]:
        """Every consume queue, sorted by topic then queue id."""
        return [
            self.consume_queue_table[t][q]
            for t in sorted(self.consume_queue_table)
            for q in sorted(self.consume_queue_table[t])
        ]

    def iter_consume_queue_units(
        self, topic: str, queue_id: int
    ) -> Iterator[tuple[int, int, int, int]]:
        """``(logical offset, commit-log offset, size, tags code)`` of every unit."""
        qmap = self.consume_queue_table.get(topic)
        if qmap is None or queue_id not in qmap:
            return iter(())
        return qmap[queue_id].iter_units()

    def iter_commit_log_entries(
        self, *, include_blank: bool = False
    ) -> Iterator[tuple[int, int, bytes]]:
        """``(commit-log offset, size, raw bytes)`` of every entry, in order; with
        ``include_blank`` also the 8-byte end-of-file markers (size = the padding)."""
        for mf in list(self.commit_log.mapped_file_queue.mapped_files):
            pos = 0
            while pos + 8 <= mf.wrote_position:
                total, magic = _I32x2.unpack_from(mf.mm, pos)
                if magic == BLANK_MAGIC_CODE:
                    if include_blank:
                        yield mf.file_from_offset + pos, total, bytes(mf.view[pos : pos + 8])
                    break
                if magic != MESSAGE_MAGIC_CODE or total <= 0:
                    break
                yield mf.file_from_offset + pos, total, bytes(mf.view[pos : pos + total])
                pos += total

    def commit_log_files(self) -> list[tuple[str, int, int]]:
        """``(file name, start offset, write position)`` of every commit-log file."""
        return [
            (os.path.basename(mf.file_name), mf.file_from_offset, mf.wrote_position)
            for mf in self.commit_log.mapped_file_queue.mapped_files
        ]
