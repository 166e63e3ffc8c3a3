"""``DefaultMessageStore#getMessage``: read one batch of one queue for a pull.

Mirrors ``DefaultMessageStore#getMessage``, ``#isTheBatchFull``,
``#nextOffsetCorrection``, ``#checkInDiskByCommitOffset`` and
``#checkInDiskByConsumeOffset`` (store, RocketMQ 4.9.3); mechanisms.md "DefaultMessageStore#getMessage" (``getMessage`` status
by status with ``nextBeginOffset``), mechanisms.md "Pull processing" step 9; docs/reference.md §10.1.

What this module owns: the offset decision of step 3 (empty queue, too small, overflow
by one, overflow badly) and the unit scan of step 4 (batch limits, filters, removed
entries, the 16,000-byte scan window, ``nextBeginOffset`` = offset + units examined).
What it must not know: response codes (the pull processor maps the status, docs/reference.md §10.2
step 11) and time.

``GetMessageMixin`` is one mechanism of ``DefaultMessageStore`` split out of the Java
class (docs/design.md §6.1); it reads the store's config, commit log, consume queues and tracer.
Everything counts as "in memory" unless ``total_physical_memory_size`` is configured
(docs/reference.md §12: the RAM heuristic depends on the host).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqlab.store.config import BrokerRole
from mqlab.store.consume_queue import CQ_STORE_UNIT_SIZE, CQ_UNIT
from mqlab.store.message_filter import MessageFilter
from mqlab.store.status import GetMessageResult, GetMessageStatus

if TYPE_CHECKING:
    from mqlab.store.commit_log import CommitLog
    from mqlab.store.config import MessageStoreConfig
    from mqlab.store.consume_queue import ConsumeQueue

__all__ = ["GetMessageMixin"]

# NOTE: performance: enum members read through the class cost ~70 ns in CPython 3.11.
_FOUND = GetMessageStatus.FOUND
_NO_MATCHED_MESSAGE = GetMessageStatus.NO_MATCHED_MESSAGE
_MESSAGE_WAS_REMOVING = GetMessageStatus.MESSAGE_WAS_REMOVING
_SLAVE = BrokerRole.SLAVE

C_GET = "DefaultMessageStore.getMessage"


class GetMessageMixin:
    """The ``getMessage`` half of ``DefaultMessageStore`` (see the module essay)."""

    # provided by DefaultMessageStore
    message_store_config: MessageStoreConfig
    commit_log: CommitLog
    is_shutdown: bool
    readable: bool
    tracer: Any

    def find_consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        raise NotImplementedError

    def _traced(self) -> bool:
        raise NotImplementedError

    def next_offset_correction(self, old_offset: int, new_offset: int) -> int:
        """``new_offset``, unless this is a SLAVE without ``offset_check_in_slave``.

        Mirrors ``DefaultMessageStore#nextOffsetCorrection``; docs/reference.md §10.1.
        """
        cfg = self.message_store_config
        if cfg.broker_role != _SLAVE or cfg.offset_check_in_slave:
            return new_offset
        return old_offset

    def check_in_disk_by_commit_offset(self, offset_py: int, max_offset_py: int) -> bool:
        """Mirrors ``DefaultMessageStore#checkInDiskByCommitOffset``: further behind the end
        than ``accessMessageInMemoryMaxRatio`` % of RAM. Always False unless
        ``total_physical_memory_size`` is configured (mqlab knob)."""
        ram = self.message_store_config.total_physical_memory_size
        if ram is None:
            return False
        memory = ram * self.message_store_config.access_message_in_memory_max_ratio // 100
        return (max_offset_py - offset_py) > memory

    def is_the_batch_full(
        self,
        size_py: int,
        max_msg_nums: int,
        buffer_total: int,
        message_total: int,
        is_in_disk: bool,
    ) -> bool:
        """Mirrors ``DefaultMessageStore#isTheBatchFull``; docs/reference.md §10.1: the first message
        is always taken; then stop at ``max_msg_nums``, or at 32 messages / 256 KiB in
        memory (8 / 64 KiB on disk)."""
        if buffer_total == 0 or message_total == 0:
            return False
        if max_msg_nums <= message_total:
            return True
        cfg = self.message_store_config
        if is_in_disk:
            if buffer_total + size_py > cfg.max_transfer_bytes_on_message_in_disk:
                return True
            if message_total > cfg.max_transfer_count_on_message_in_disk - 1:
                return True
        else:
            if buffer_total + size_py > cfg.max_transfer_bytes_on_message_in_memory:
                return True
            if message_total > cfg.max_transfer_count_on_message_in_memory - 1:
                return True
        return False

    def get_message(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_msg_nums: int,
        message_filter: MessageFilter | None,
    ) -> GetMessageResult | None:
        """Read up to ``max_msg_nums`` messages of one queue from ``offset``.

        Mirrors ``DefaultMessageStore#getMessage`` (store, RocketMQ 4.9.3); mechanisms.md "DefaultMessageStore#getMessage";
        docs/reference.md §10.1:

        1. shut down or not readable → None;
        2. defaults NO_MESSAGE_IN_QUEUE, next = offset; min / max of the queue;
        3. max == 0 → NO_MESSAGE_IN_QUEUE, next = correct(offset, 0); offset < min →
           OFFSET_TOO_SMALL, next = correct(offset, min); offset == max →
           OFFSET_OVERFLOW_ONE, next = offset; offset > max → OFFSET_OVERFLOW_BADLY,
           next = correct(offset, 0 if min == 0 else max);
        4. else scan the units from ``offset`` to the end of that consume-queue file
           (none → OFFSET_FOUND_NULL, next = correct(offset, start of the next file)):
           batch full → stop; filtered out → NO_MATCHED_MESSAGE unless something was
           found; commit-log entry gone → MESSAGE_WAS_REMOVING (and skip to the next
           commit-log file); else add it, FOUND. next = offset + units examined.

        ``correct`` is :meth:`next_offset_correction`. Returned buffers are read-only
        views of the stored entries. NO_MATCHED_LOGIC_QUEUE is never answered: as in
        RocketMQ, ``findConsumeQueue`` creates a missing queue, which is then empty.
        """
        # step 1 (mechanisms.md "Pull processing" step 10 answers SYSTEM_ERROR for None)
        traced = self._traced()
        if self.is_shutdown or not self.readable:
            if traced:
                self.tracer.emit(C_GET, "1", status=None, text="store shut down or not readable")
            return None
        # step 2
        status = GetMessageStatus.NO_MESSAGE_IN_QUEUE
        next_begin_offset = offset
        get_result = GetMessageResult()
        commit_log = self.commit_log
        max_offset_py = commit_log.get_max_offset()
        cq = self.find_consume_queue(topic, queue_id)
        min_offset = cq.min_logic_offset // CQ_STORE_UNIT_SIZE
        max_offset = cq.get_max_offset_in_queue()
        step = "3"
        # step 3
        if max_offset == 0:
            status = GetMessageStatus.NO_MESSAGE_IN_QUEUE
            next_begin_offset = self.next_offset_correction(offset, 0)
        elif offset < min_offset:
            status = GetMessageStatus.OFFSET_TOO_SMALL
            next_begin_offset = self.next_offset_correction(offset, min_offset)
        elif offset == max_offset:
            status = GetMessageStatus.OFFSET_OVERFLOW_ONE
            next_begin_offset = self.next_offset_correction(offset, offset)
        elif offset > max_offset:
            status = GetMessageStatus.OFFSET_OVERFLOW_BADLY
            if min_offset == 0:
                next_begin_offset = self.next_offset_correction(offset, min_offset)
            else:
                next_begin_offset = self.next_offset_correction(offset, max_offset)
        else:
            # step 4
            step = "4"
            buffer_cq = cq.get_index_buffer(offset)
            if buffer_cq is None:
                status = GetMessageStatus.OFFSET_FOUND_NULL
                next_begin_offset = self.next_offset_correction(offset, cq.roll_next_file(offset))
            else:
                status, examined, max_phy_offset_pulling = self._scan(
                    buffer_cq, offset, max_msg_nums, message_filter, get_result, max_offset_py
                )
                next_begin_offset = offset + examined
                # suggestPullingFromSlave: the last unit read lies outside the RAM window
                get_result.suggest_pulling_from_slave = self.check_in_disk_by_commit_offset(
                    max_phy_offset_pulling, max_offset_py
                )
        get_result.status = status
        get_result.next_begin_offset = next_begin_offset
        get_result.max_offset = max_offset
        get_result.min_offset = min_offset
        if traced:
            self.tracer.emit(
                C_GET,
                step,
                group=group,
                topic=topic,
                queue_id=queue_id,
                offset=offset,
                status=status.name,
                next_begin_offset=next_begin_offset,
                min_offset=min_offset,
                max_offset=max_offset,
                message_count=get_result.message_count,
                buffer_total_size=get_result.buffer_total_size,
            )
        stats = self.store_stats_service
        if status is _FOUND:  # StoreStatsService#getGetMessageTransferedMsgCount
            stats.get_message_transfered_msg_count += get_result.message_count
            stats.get_message_times_total_found += 1  # getGetMessageTimesTotalFound
        else:
            stats.get_message_times_total_miss += 1  # getGetMessageTimesTotalMiss
        return get_result

    def _scan(
        self,
        buffer_cq: tuple[Any, int, int],
        offset: int,
        max_msg_nums: int,
        message_filter: MessageFilter | None,
        get_result: GetMessageResult,
        max_offset_py: int,
    ) -> tuple[GetMessageStatus, int, int]:
        """Step 4 of ``getMessage``: the unit loop.

        Returns:
            (status, units examined, the last commit-log offset looked at).
        """
        # NOTE: performance: the pull hot path. Limits are read into locals, the batch
        # test is inlined (``is_the_batch_full`` is the readable version), buffers are
        # views, no object is built per unit, and ``CommitLog#getMessage`` is inlined
        # with its file lookup done once per commit-log file (~0.25 µs per unit).
        mf, start, end = buffer_cq
        cfg = self.message_store_config
        mem_bytes = cfg.max_transfer_bytes_on_message_in_memory
        mem_count = cfg.max_transfer_count_on_message_in_memory - 1
        ram = cfg.total_physical_memory_size
        commit_log = self.commit_log
        file_holding = commit_log.file_holding
        file_size = commit_log.mapped_file_size
        # the commit-log file of the previous unit, and its range [cl_from, cl_end)
        cl_file = None
        cl_from = 0
        cl_end = -1
        unpack = CQ_UNIT.unpack_from
        mm = mf.mm
        buffers = get_result.message_buffers
        queue_offsets = get_result.message_queue_offsets
        status = _NO_MATCHED_MESSAGE
        total = 0
        count = 0
        next_phy_file_start = -1
        have_next_phy = False
        max_phy_offset_pulling = 0
        limit = min(end - start, max(16000, max_msg_nums * CQ_STORE_UNIT_SIZE))
        examined_bytes = limit
        by_cq = message_filter.is_matched_by_consume_queue if message_filter else None
        by_cl = message_filter.is_matched_by_commit_log if message_filter else None
        for i in range(0, limit, CQ_STORE_UNIT_SIZE):
            offset_py, size_py, tags_code = unpack(mm, start + i)  # step 4a
            max_phy_offset_pulling = offset_py
            if have_next_phy and offset_py < next_phy_file_start:  # step 4b
                continue
            if total and count:  # step 4c/4d: isTheBatchFull
                if max_msg_nums <= count:
                    examined_bytes = i
                    break
                if ram is not None and self.check_in_disk_by_commit_offset(
                    offset_py, max_offset_py
                ):
                    if self.is_the_batch_full(size_py, max_msg_nums, total, count, True):
                        examined_bytes = i
                        break
                elif total + size_py > mem_bytes or count > mem_count:
                    examined_bytes = i
                    break
            if by_cq is not None and not by_cq(tags_code, None):  # step 4e
                if total == 0:
                    status = _NO_MATCHED_MESSAGE
                continue
            # step 4f: CommitLog#getMessage, with the file lookup done once per file
            if not cl_from <= offset_py < cl_end:
                cl_file = file_holding(offset_py)
                if cl_file is None:
                    cl_from, cl_end = 0, -1
                else:
                    cl_from = cl_file.file_from_offset
                    cl_end = cl_from + file_size
            select = None
            if cl_file is not None:
                p = offset_py - cl_from
                if p + size_py <= cl_file.wrote_position and cl_file.available:
                    select = cl_file.view[p : p + size_py]
            if select is None:
                if total == 0:
                    status = _MESSAGE_WAS_REMOVING
                next_phy_file_start = commit_log.roll_next_file(offset_py)
                have_next_phy = True
                continue
            if by_cl is not None and not by_cl(select, None):  # step 4g
                if total == 0:
                    status = _NO_MATCHED_MESSAGE
                continue
            buffers.append(select)  # step 4h
            queue_offsets.append(offset + i // CQ_STORE_UNIT_SIZE)
            total += size_py
            count += 1
            status = _FOUND
            have_next_phy = False
        get_result.buffer_total_size = total
        get_result.message_count = count
        return status, examined_bytes // CQ_STORE_UNIT_SIZE, max_phy_offset_pulling

    def check_in_disk_by_consume_offset(
        self, topic: str, queue_id: int, consume_offset: int
    ) -> bool:
        """Whether the message at ``consume_offset`` is "on disk" (behind the RAM window).

        Mirrors ``DefaultMessageStore#checkInDiskByConsumeOffset``. Always False by
        default: mqlab treats everything as in memory unless
        ``total_physical_memory_size`` is configured.
        """
        unit = self.find_consume_queue(topic, queue_id).get_unit(consume_offset)
        if unit is None:
            return False
        return self.check_in_disk_by_commit_offset(unit[0], self.commit_log.get_max_offset())
