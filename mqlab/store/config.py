"""The message store's settings: where files live, how big they are, how fast they flush.

Mirrors ``MessageStoreConfig``, ``BrokerRole`` and ``FlushDiskType`` (store/config,
RocketMQ 4.9.3) and the path rules of ``StorePathConfigHelper``; docs/reference.md §8.2 and §6.

What this module owns: field names (RocketMQ's, in snake_case) and defaults. What it
must not know: anything about the files themselves; ``DefaultMessageStore`` reads these.

Teaching defaults that differ from RocketMQ (each field's comment says so):

* ``store_path_root_dir`` is ``None``: the owner (the Lab, a test) passes a directory,
  usually a temp dir, instead of ``~/store``. ``store_path_commit_log`` left ``None``
  then means ``<root>/commitlog``; RocketMQ's default is a fixed ``~/store/commitlog``
  that does not follow ``storePathRootDir``.
* ``mapped_file_size_commit_log`` is 16 MiB instead of 1 GiB, so a lesson can watch a
  file roll over; it may be set down to a few KiB.
* ``total_physical_memory_size`` is an mqlab knob: ``None`` (default) treats every
  message as "in memory" (docs/reference.md §12: the RAM heuristic is host dependent). Set it to a
  byte count to bring back RocketMQ's in-disk batch limits (8 messages / 64 KiB) and
  ``suggestPullingFromSlave`` for messages further than 40 % of it behind the end.
* ``max_hash_slot_num`` / ``max_index_num`` are 5,000 / 20,000 instead of 5,000,000 /
  20,000,000: an index file (``store/index``) is 420,040 bytes instead of 420,000,040, so
  each test broker does not write hundreds of megabytes, and a lesson can fill one.

Fields RocketMQ has but mqlab does not use (transient store pool, HA ports, ...) are
kept with their defaults so a learner finds every name of §8.2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["BrokerRole", "FlushDiskType", "MessageStoreConfig", "StorePathConfigHelper"]


class BrokerRole(StrEnum):
    """Mirrors ``BrokerRole`` (store/config): a master (async or sync replication) or a slave."""

    ASYNC_MASTER = "ASYNC_MASTER"
    SYNC_MASTER = "SYNC_MASTER"
    SLAVE = "SLAVE"


class FlushDiskType(StrEnum):
    """Mirrors ``FlushDiskType`` (store/config): flush in the background or before answering."""

    SYNC_FLUSH = "SYNC_FLUSH"
    ASYNC_FLUSH = "ASYNC_FLUSH"


#: ConsumeQueue.CQ_STORE_UNIT_SIZE: one consume-queue unit (docs/reference.md §6).
_CQ_STORE_UNIT_SIZE = 20


@dataclass(slots=True, kw_only=True)
class MessageStoreConfig:
    """Settings of one ``DefaultMessageStore``.

    Mirrors ``MessageStoreConfig`` (store/config, RocketMQ 4.9.3); docs/reference.md §8.2. Field
    names are RocketMQ's in snake_case (``mappedFileSizeCommitLog`` →
    ``mapped_file_size_commit_log``). ``broker_role`` and ``flush_disk_type`` accept the
    enum or its name.

    Raises:
        ValueError: a role / flush type name RocketMQ does not have, or a file size < 64.
    """

    # -- paths ------------------------------------------------------------------------
    #: mqlab: None → the owner passes a directory (RocketMQ: ``~/store``).
    store_path_root_dir: str | None = None
    #: mqlab: None → ``<root>/commitlog``, read when the store opens. RocketMQ's default
    #: is a fixed ``~/store/commitlog`` (a field initializer that does not follow
    #: ``storePathRootDir``), and ``getStorePathCommitLog()`` returns the field as is.
    store_path_commit_log: str | None = None

    # -- file sizes -------------------------------------------------------------------
    #: mqlab teaching default 16 MiB (RocketMQ 1,073,741,824 = 1 GiB).
    mapped_file_size_commit_log: int = 16 * 1024 * 1024
    #: 300,000 units × 20 bytes, RocketMQ's; rounded up to a multiple of 20 when read.
    mapped_file_size_consume_queue: int = 300_000 * _CQ_STORE_UNIT_SIZE
    max_message_size: int = 1024 * 1024 * 4

    # -- delay levels (ScheduleMessageService) ----------------------------------------
    message_delay_level: str = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
    flush_delay_offset_interval: int = 1000 * 10
    enable_schedule_async_deliver: bool = False
    schedule_async_deliver_max_pending_limit: int = 2000

    # -- getMessage batch limits (isTheBatchFull) -------------------------------------
    max_transfer_bytes_on_message_in_memory: int = 1024 * 256
    max_transfer_count_on_message_in_memory: int = 32
    max_transfer_bytes_on_message_in_disk: int = 1024 * 64
    max_transfer_count_on_message_in_disk: int = 8
    access_message_in_memory_max_ratio: int = 40
    #: mqlab: None → everything counts as in memory (see the module essay).
    total_physical_memory_size: int | None = None
    disk_fall_recorded: bool = True

    # -- flushing ---------------------------------------------------------------------
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    sync_flush_timeout: int = 1000 * 5
    flush_interval_commit_log: int = 500
    flush_commit_log_least_pages: int = 4
    flush_commit_log_thorough_interval: int = 1000 * 10
    flush_interval_consume_queue: int = 1000
    flush_consume_queue_least_pages: int = 2
    flush_consume_queue_thorough_interval: int = 1000 * 60
    commit_interval_commit_log: int = 200
    commit_commit_log_least_pages: int = 4
    flush_commit_log_timed: bool = True
    use_reentrant_lock_when_put_message: bool = True
    os_page_cache_busy_time_out_mills: int = 1000
    transient_store_pool_enable: bool = False
    transient_store_pool_size: int = 5

    # -- roles and replication --------------------------------------------------------
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    #: a broker sets it to its listen port + 1 (BrokerStartup#createBrokerController)
    ha_listen_port: int = 10912
    ha_send_heartbeat_interval: int = 1000 * 5
    ha_housekeeping_interval: int = 1000 * 20
    ha_transfer_batch_size: int = 1024 * 32
    #: a SLAVE's master HA address from its config (``haMasterAddress``); None: from registration
    ha_master_address: str | None = None
    ha_slave_fallbehind_max: int = 1024 * 1024 * 256
    slave_timeout: int = 3000
    offset_check_in_slave: bool = False
    duplication_enable: bool = False

    # -- DLedger (mqlab.store.dledger_commit_log) ---------------------------------------
    #: ``enableDLegerCommitLog``: the store's commit log is a ``DLedgerCommitLog``.
    enable_d_leger_commit_log: bool = False
    #: ``dLegerGroup`` / ``dLegerPeers`` / ``dLegerSelfId``: null in 4.9.3; the DLedger
    #: config's ``group``, ``peers`` (``"n0-127.0.0.1:40911;n1-..."``) and ``selfId``.
    d_leger_group: str | None = None
    d_leger_peers: str | None = None
    d_leger_self_id: str | None = None
    #: ``preferredLeaderId``: DLedger's ``preferredLeaderIds``.
    preferred_leader_id: str | None = None
    #: ``isEnableBatchPush``: DLedger's ``isEnableBatchPush``.
    is_enable_batch_push: bool = False

    # -- recovery ---------------------------------------------------------------------
    check_crc_on_recover: bool = True

    # -- cleaning (CleanCommitLogService / CleanConsumeQueueService) ------------------
    #: hours a commit-log file is kept after its last write.
    file_reserved_time: int = 72
    delete_when: str = "04"
    disk_max_used_space_ratio: int = 75
    clean_resource_interval: int = 10000
    delete_commit_log_files_interval: int = 100
    delete_consume_queue_files_interval: int = 100
    destroy_maped_file_interval_forcibly: int = 1000 * 120  # (sic) destroyMapedFile...
    clean_file_forcibly_enable: bool = True

    # -- index (IndexService) and queries ---------------------------------------------
    message_index_enable: bool = True
    #: mqlab teaching default 5,000 (RocketMQ 5,000,000): an index file of 5,000 slots and
    #: 20,000 entries is 420,040 bytes; RocketMQ's is 420,000,040.
    max_hash_slot_num: int = 5_000
    #: mqlab teaching default 20,000 (RocketMQ 5,000,000 * 4).
    max_index_num: int = 5_000 * 4
    max_msgs_num_batch: int = 64
    default_query_max_num: int = 32
    enable_consume_queue_ext: bool = False

    def __post_init__(self) -> None:
        try:
            self.broker_role = BrokerRole(self.broker_role)
        except ValueError:
            raise ValueError(
                f"broker_role must be one of {[r.value for r in BrokerRole]}, "
                f"got {self.broker_role!r}"
            ) from None
        try:
            self.flush_disk_type = FlushDiskType(self.flush_disk_type)
        except ValueError:
            raise ValueError(
                f"flush_disk_type must be one of {[t.value for t in FlushDiskType]}, "
                f"got {self.flush_disk_type!r}"
            ) from None
        if self.mapped_file_size_commit_log < 64:
            raise ValueError(
                f"mapped_file_size_commit_log must be >= 64, got {self.mapped_file_size_commit_log}"
            )
        if self.mapped_file_size_consume_queue < _CQ_STORE_UNIT_SIZE:
            raise ValueError(
                "mapped_file_size_consume_queue must be >= 20, "
                f"got {self.mapped_file_size_consume_queue}"
            )

    def get_mapped_file_size_consume_queue(self) -> int:
        """The CQ file size rounded up to whole 20-byte units.

        Mirrors ``MessageStoreConfig#getMappedFileSizeConsumeQueue``; docs/reference.md §6.
        """
        units = -(-self.mapped_file_size_consume_queue // _CQ_STORE_UNIT_SIZE)
        return units * _CQ_STORE_UNIT_SIZE

    def get_store_path_commit_log(self) -> str:
        """``store_path_commit_log`` or, mqlab's default, ``<root>/commitlog``.

        Mirrors ``MessageStoreConfig#getStorePathCommitLog``, which returns the field;
        RocketMQ's field defaults to ``~/store/commitlog`` whatever ``storePathRootDir``.

        Raises:
            ValueError: neither the commit-log path nor ``store_path_root_dir`` is set.
        """
        if self.store_path_commit_log:
            return self.store_path_commit_log
        return os.path.join(self.require_root_dir(), "commitlog")

    def require_root_dir(self) -> str:
        """``store_path_root_dir``, which mqlab needs the owner to set.

        Raises:
            ValueError: it is ``None``.
        """
        if not self.store_path_root_dir:
            raise ValueError("store_path_root_dir must be set (pass a directory, e.g. a temp dir)")
        return self.store_path_root_dir


class StorePathConfigHelper:
    """Where each store file lives under the root dir.

    Mirrors ``StorePathConfigHelper`` (store/config, RocketMQ 4.9.3); docs/reference.md §6.
    """

    @staticmethod
    def get_store_path_consume_queue(root_dir: str) -> str:
        return os.path.join(root_dir, "consumequeue")

    @staticmethod
    def get_store_path_index(root_dir: str) -> str:
        return os.path.join(root_dir, "index")

    @staticmethod
    def get_store_checkpoint(root_dir: str) -> str:
        return os.path.join(root_dir, "checkpoint")

    @staticmethod
    def get_abort_file(root_dir: str) -> str:
        return os.path.join(root_dir, "abort")

    @staticmethod
    def get_delay_offset_store_path(root_dir: str) -> str:
        return os.path.join(root_dir, "config", "delayOffset.json")
