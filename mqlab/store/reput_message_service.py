"""ReputMessageService: turn newly appended commit-log entries into consume-queue units
(and index entries: the store's dispatchers).

Mirrors ``DefaultMessageStore.ReputMessageService#doReput`` / ``#behind`` (store,
RocketMQ 4.9.3); docs/reference.md §10.3 (reput and the arriving listener), §4.1 (blank marker).

What this module owns: ``reput_from_offset``, the next commit-log byte to dispatch, and
the walk from there to the end of the log: read each entry
(``CommitLog#dispatch_request_at``: ``checkMessageAndReturnSize``'s answer, taken from the
append record for entries this process wrote), hand it to the store's dispatchers, and
tell the arriving listener (the broker's long polling) unless the broker is a SLAVE.
What it must not know: time. RocketMQ runs this every 1 ms on its own thread; mqlab's
owner calls ``do_reput()`` (the broker schedules it right after each put).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.common.message_decoder import BLANK_MAGIC_CODE
from mqlab.store.config import BrokerRole
from mqlab.store.status import DispatchRequest

if TYPE_CHECKING:
    from mqlab.store.default_message_store import DefaultMessageStore

__all__ = ["ReputMessageService"]

_SLAVE = BrokerRole.SLAVE
#: checkMessageAndReturnSize's answer to an entry it cannot read whole
_INCOMPLETE = DispatchRequest(-1, False)
_BLANK_MAGIC = BLANK_MAGIC_CODE.to_bytes(4, "big", signed=True)
#: ``MmapFileList.BLANK_MAGIC_CODE`` (-1) where a DLedger data file's blank starts: the rest
#: of the file is empty, which ``DLedgerCommitLog#checkMessageAndReturnSize`` answers size 0
_DLEDGER_BLANK = b"\xff\xff\xff\xff"
C_REPUT = "ReputMessageService.doReput"


class ReputMessageService:
    """Mirrors ``DefaultMessageStore.ReputMessageService`` (store, RocketMQ 4.9.3)."""

    __slots__ = ("store", "reput_from_offset")

    def __init__(self, store: DefaultMessageStore) -> None:
        self.store = store
        #: ReputMessageService#reputFromOffset: the next commit-log byte to dispatch.
        self.reput_from_offset = 0

    def behind(self) -> int:
        """Commit-log bytes not dispatched yet. Mirrors ``ReputMessageService#behind``."""
        return self.store.commit_log.get_max_offset() - self.reput_from_offset

    def do_reput(self) -> int:
        """Dispatch every commit-log entry written since the last pass.

        Mirrors ``ReputMessageService#doReput`` (store, RocketMQ 4.9.3); docs/reference.md §10.3:
        parse each entry from ``reput_from_offset`` (blank marker → next file), build
        its consume-queue unit (NOT_TYPE / COMMIT only), then, unless SLAVE, call the
        arriving listener with ``(topic, queueId, queueOffset + 1, tagsCode, storeTime,
        None, properties)``; on a SLAVE, count the entry in ``StoreStatsService``'s put
        counters of its topic (``getSinglePutMessageTopicTimesTotal(topic).add(1)``, the
        size counter ``.add(msgSize)``): a slave's runtime info shows replicated messages as
        puts.

        Returns:
            The number of entries dispatched.
        """
        store = self.store
        commit_log = store.commit_log
        min_offset = commit_log.get_min_offset()
        if self.reput_from_offset < min_offset:
            self.reput_from_offset = min_offset
        listener = store.message_arriving_listener
        # a slave counts what it dispatches as puts (by topic: times, size), since no send
        # reaches its store (found by the conformance row slave-answers/runtime_slave)
        slave_stats = None
        if store.message_store_config.broker_role == _SLAVE:
            listener = None
            slave_stats = store.store_stats_service
        tracer = store.tracer
        traced = tracer is not None and tracer.enabled
        do_dispatch = store.do_dispatch
        read = commit_log.dispatch_request_at
        count = 0
        last_store_timestamp = None
        do_next = True
        while do_next and self.reput_from_offset < commit_log.get_max_offset():
            data = commit_log.get_data(self.reput_from_offset)
            if data is None:
                break
            mf, pos, end = data
            buf = mf.mm
            file_from = mf.file_from_offset
            while pos < end:
                # NOTE: performance: the per-entry loop; one read, one unit append.
                if pos + 8 > end or (
                    pos + int.from_bytes(buf[pos : pos + 4], "big") > end
                    and buf[pos + 4 : pos + 8] != _BLANK_MAGIC
                    and buf[pos : pos + 4] != _DLEDGER_BLANK
                ):
                    # the entry is not all there yet: a slave's commit log mid-transfer (an
                    # HA block ends inside a message). Java reads a slice that ends at the
                    # written position, so checkMessageAndReturnSize runs past its limit and
                    # answers size -1 (found by replicating 1.6 MB on the net driver)
                    req = _INCOMPLETE
                else:
                    req = read(buf, pos, file_from + pos)
                size = req.msg_size
                # a DLedger entry: the message plus its 48-byte entry header (bufferSize)
                step = size if req.buffer_size == -1 else req.buffer_size
                if req.success:
                    if size > 0:
                        do_dispatch(req)
                        if slave_stats is not None:
                            slave_stats.on_put(req.topic, 1, size)
                        if listener is not None:
                            listener(
                                req.topic,
                                req.queue_id,
                                req.consume_queue_offset + 1,
                                req.tags_code,
                                req.store_timestamp,
                                req.bit_map,
                                req.properties_map,
                            )
                        if traced:
                            tracer.emit(
                                C_REPUT,
                                "dispatch",
                                topic=req.topic,
                                queue_id=req.queue_id,
                                queue_offset=req.consume_queue_offset,
                                commit_log_offset=req.commit_log_offset,
                                size=size,
                                tags_code=req.tags_code,
                            )
                        self.reput_from_offset += step
                        pos += step
                        count += 1
                        last_store_timestamp = req.store_timestamp
                    else:  # blank marker: the rest of this file is empty
                        self.reput_from_offset = commit_log.roll_next_file(self.reput_from_offset)
                        break
                elif size > 0:  # "[BUG]read total count not equals msg total size."
                    self.reput_from_offset += step
                    pos += step
                else:
                    do_next = False
                    if slave_stats is not None:
                        # a slave (brokerId != 0) waits: the rest of the entry is on its way
                        break
                    # a master skips the rest of the readable data ("[BUG]dispatch message to
                    # consume queue error"), as 4.9.3 does when brokerId is MASTER_ID
                    if traced:
                        tracer.emit(
                            C_REPUT,
                            "error",
                            "error",
                            commit_log_offset=self.reput_from_offset,
                            text="unreadable entry; skipping the rest of the file's data",
                        )
                    self.reput_from_offset += end - pos
                    break
        if last_store_timestamp is not None:
            store.flush_consume_queue_service(last_store_timestamp)
        return count
