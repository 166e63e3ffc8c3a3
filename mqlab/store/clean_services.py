"""Expired-file cleaning: old commit-log files, then the consume-queue files indexing them.

Mirrors ``DefaultMessageStore.CleanCommitLogService`` and
``DefaultMessageStore.CleanConsumeQueueService`` (store, RocketMQ 4.9.3); docs/reference.md §8.2
(``fileReservedTime`` 72 h). Together they are how a queue's min offset grows above 0,
which is what makes ``getMessage`` answer OFFSET_TOO_SMALL (and, in the window between
the two passes, MESSAGE_WAS_REMOVING) (docs/reference.md §10.1).

What this module owns: one pass of each service. What it must not know: clocks and
schedules. RocketMQ runs both every 10 s (``cleanResourceInterval``) and deletes commit-
log files only at ``deleteWhen`` (04 o'clock), when the disk is too full, or on a manual
request; mqlab leaves the "when" to its owner, and a file's age is measured from the
simulated time of its last write (``MappedFile.last_modified_ms``), not the OS mtime.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mqlab.store.default_message_store import DefaultMessageStore

__all__ = ["CleanCommitLogService", "CleanConsumeQueueService"]


class CleanCommitLogService:
    """Mirrors ``DefaultMessageStore.CleanCommitLogService`` (store, RocketMQ 4.9.3)."""

    __slots__ = ("store",)

    def __init__(self, store: DefaultMessageStore) -> None:
        self.store = store

    def delete_expired_files(self, now_ms: int, clean_immediately: bool = False) -> int:
        """Delete leading commit-log files last written ``file_reserved_time`` hours before
        ``now_ms`` (all but the current file if ``clean_immediately``); stop at the first
        live file. Mirrors ``CleanCommitLogService#deleteExpiredFiles``.

        Returns:
            The number of files deleted.
        """
        store = self.store
        expired_ms = store.message_store_config.file_reserved_time * 60 * 60 * 1000
        deleted = store.commit_log.delete_expired_file(expired_ms, now_ms, clean_immediately)
        tracer = store.tracer
        if deleted and tracer is not None and tracer.enabled:
            tracer.emit(
                "CleanCommitLogService.deleteExpiredFiles",
                "delete",
                files=[os.path.basename(mf.file_name) for mf in deleted],
                min_phy_offset=store.get_min_phy_offset(),
            )
        return len(deleted)


class CleanConsumeQueueService:
    """Mirrors ``DefaultMessageStore.CleanConsumeQueueService`` (store, RocketMQ 4.9.3)."""

    __slots__ = ("store", "last_physical_min_offset")

    def __init__(self, store: DefaultMessageStore) -> None:
        self.store = store
        self.last_physical_min_offset = 0

    def delete_expired_files(self) -> int:
        """If the commit log's min offset moved: delete leading consume-queue files whose
        last unit points below it, and move each queue's min offset to its first live
        unit; then delete leading index files that end below it. Mirrors
        ``CleanConsumeQueueService#deleteExpiredFiles`` (and ``ConsumeQueue#deleteExpiredFile``
        / ``#correctMinOffset``, ``IndexService#deleteExpiredFile``).

        Returns:
            The number of files deleted.
        """
        store = self.store
        min_offset = store.commit_log.get_min_offset()
        if min_offset <= self.last_physical_min_offset:
            return 0
        self.last_physical_min_offset = min_offset
        tracer = store.tracer
        traced = tracer is not None and tracer.enabled
        deleted = 0
        for cq in store.all_consume_queues():
            n = cq.delete_expired_file(min_offset)
            deleted += n
            if traced:
                tracer.emit(
                    "CleanConsumeQueueService.deleteExpiredFiles",
                    "delete",
                    topic=cq.topic,
                    queue_id=cq.queue_id,
                    deleted_files=n,
                    min_offset=cq.get_min_offset_in_queue(),
                )
        # DefaultMessageStore.this.indexService.deleteExpiredFile(minOffset)
        index_deleted = store.index_service.delete_expired_file(min_offset)
        if index_deleted and traced:
            tracer.emit("IndexService.deleteExpiredFile", "delete", deleted_files=index_deleted,
                        min_offset=min_offset)  # fmt: skip
        return deleted
