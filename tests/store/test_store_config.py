"""MessageStoreConfig: defaults against MessageStoreConfig.java at rocketmq-all-4.9.3.

docs/reference.md §8.2; the mqlab teaching defaults (root dir, commit-log path, 16 MiB files,
total_physical_memory_size, the index file's slot and entry counts) are documented in the
module essay.
"""

from __future__ import annotations

import dataclasses

from mqlab.store import MessageStoreConfig
from mqlab.store.config import BrokerRole, FlushDiskType

#: Every field mqlab keeps, with MessageStoreConfig.java's initializer (4.9.3).
JAVA_DEFAULTS = {
    "mapped_file_size_consume_queue": 300_000 * 20,
    "max_message_size": 4 * 1024 * 1024,
    "message_delay_level": "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
    "flush_delay_offset_interval": 10_000,
    "enable_schedule_async_deliver": False,
    "schedule_async_deliver_max_pending_limit": 2000,
    "max_transfer_bytes_on_message_in_memory": 256 * 1024,
    "max_transfer_count_on_message_in_memory": 32,
    "max_transfer_bytes_on_message_in_disk": 64 * 1024,
    "max_transfer_count_on_message_in_disk": 8,
    "access_message_in_memory_max_ratio": 40,
    "disk_fall_recorded": True,
    "flush_disk_type": FlushDiskType.ASYNC_FLUSH,
    "sync_flush_timeout": 5000,
    "flush_interval_commit_log": 500,
    "flush_commit_log_least_pages": 4,
    "flush_commit_log_thorough_interval": 10_000,
    "flush_interval_consume_queue": 1000,
    "flush_consume_queue_least_pages": 2,
    "flush_consume_queue_thorough_interval": 60_000,
    "commit_interval_commit_log": 200,
    "commit_commit_log_least_pages": 4,
    "flush_commit_log_timed": True,  # MessageStoreConfig.java:68
    "use_reentrant_lock_when_put_message": True,  # MessageStoreConfig.java:64
    "os_page_cache_busy_time_out_mills": 1000,
    "transient_store_pool_enable": False,
    "transient_store_pool_size": 5,
    "broker_role": BrokerRole.ASYNC_MASTER,
    "ha_listen_port": 10912,
    "ha_send_heartbeat_interval": 5000,
    "ha_housekeeping_interval": 20000,
    "ha_transfer_batch_size": 32768,
    "ha_master_address": None,
    "ha_slave_fallbehind_max": 268435456,
    "slave_timeout": 3000,
    "offset_check_in_slave": False,
    "duplication_enable": False,
    "check_crc_on_recover": True,
    "file_reserved_time": 72,
    "delete_when": "04",
    "disk_max_used_space_ratio": 75,
    "clean_resource_interval": 10_000,
    "delete_commit_log_files_interval": 100,
    "delete_consume_queue_files_interval": 100,
    "destroy_maped_file_interval_forcibly": 120_000,
    "clean_file_forcibly_enable": True,
    "message_index_enable": True,
    "max_msgs_num_batch": 64,
    "default_query_max_num": 32,
    "enable_consume_queue_ext": False,
    # MessageStoreConfig.java:152-159, DLedger
    "enable_d_leger_commit_log": False,
    "d_leger_group": None,
    "d_leger_peers": None,
    "d_leger_self_id": None,
    "preferred_leader_id": None,
    "is_enable_batch_push": False,
}

#: mqlab's documented teaching defaults (module essay).
MQLAB_DEFAULTS = {
    "store_path_root_dir": None,
    "store_path_commit_log": None,
    "mapped_file_size_commit_log": 16 * 1024 * 1024,
    "total_physical_memory_size": None,
    # index files of 420,040 bytes (Java: 5,000,000 slots and 20,000,000 entries)
    "max_hash_slot_num": 5_000,
    "max_index_num": 20_000,
}


def test_every_default_is_java_or_a_documented_teaching_default():
    """Each field's default equals MessageStoreConfig.java's, or is one of the four
    teaching defaults (now six); no field is left unchecked."""
    cfg = MessageStoreConfig()
    names = [f.name for f in dataclasses.fields(MessageStoreConfig)]
    assert sorted(names) == sorted({**JAVA_DEFAULTS, **MQLAB_DEFAULTS})
    assert {n: getattr(cfg, n) for n in JAVA_DEFAULTS} == JAVA_DEFAULTS
    assert {n: getattr(cfg, n) for n in MQLAB_DEFAULTS} == MQLAB_DEFAULTS


def test_commit_log_path_defaults_under_the_root_dir(tmp_path):
    """mqlab: no commit-log path → <root>/commitlog; a set path is returned as is."""
    root = str(tmp_path)
    assert MessageStoreConfig(store_path_root_dir=root).get_store_path_commit_log() == str(
        tmp_path / "commitlog"
    )
    cfg = MessageStoreConfig(store_path_root_dir=root, store_path_commit_log="/elsewhere")
    assert cfg.get_store_path_commit_log() == "/elsewhere"
