"""Broker settings, subscription-group settings, and the load/persist base of config files.

Mirrors ``BrokerConfig`` (common), ``SubscriptionGroupConfig`` (common/subscription),
``ConfigManager`` (common) and the file helpers ``MixAll#string2File`` /
``MixAll#file2String`` / ``MixAll#properties2Object`` (common), RocketMQ 4.9.3;
docs/reference.md §8.1 (BrokerConfig defaults), §8.3 (SubscriptionGroupConfig), §7.4 (persisted JSON
and the ``.bak`` fallback).

What this module owns: the field names (RocketMQ's, in snake_case) and their defaults,
the ``broker.properties`` reader, and the ``ConfigManager`` base (its files are written and
read back by ``mqlab.common.mix_all_files``: ``.tmp``, previous content to ``.bak``,
rename; main file, else ``.bak``). What it must not
know: what the tables in those files mean (the topic, subscription-group and offset
managers encode and decode them) or when they are flushed (the broker controller's
timers call ``persist``).

Deliberate differences from Java, all for a reproducible lab:

* ``broker_name`` defaults to ``"broker-a"`` (Java: the host name) and ``broker_ip1`` /
  ``broker_ip2`` to ``"127.0.0.1"`` (Java: the first site-local address).
* ``name_server_addr`` (Java ``namesrvAddr``, read from the environment) defaults to
  ``"127.0.0.1:9876"``.
* ``listen_port`` (10911) lives here; in Java it is ``NettyServerConfig#listenPort``,
  which ``BrokerStartup`` sets to 10911.
* Thread-pool sizes that Java derives from the CPU count are computed for 4 CPUs. They
  are accepted from ``broker.properties`` but nothing in mqlab uses them.
* ``from_properties`` rejects unknown keys and malformed numbers/booleans with a
  ``ValueError`` naming the key; Java's ``properties2Object`` ignores both silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from mqlab.common.mix_all import MASTER_ID
from mqlab.common.mix_all_files import config_manager_load, file2string, string2file
from mqlab.common.perm_name import PermName
from mqlab.common.properties import load_properties
from mqlab.common.topic_validator import RMQ_SYS_TRACE_TOPIC

__all__ = [
    "BrokerConfig",
    "SubscriptionGroupConfig",
    "ConfigManager",
    "parse_properties",
    "from_properties",
    "string2file",
    "file2string",
]

# Java derives these from Runtime.availableProcessors(); mqlab fixes the host at 4 CPUs.
_CPUS = 4


@dataclass(slots=True)
class BrokerConfig:
    """Everything a broker reads from ``broker.properties``.

    Mirrors ``BrokerConfig`` (common, RocketMQ 4.9.3); docs/reference.md §8.1. Field order follows
    the Java declaration. Mutable: the admin ``UPDATE_BROKER_CONFIG`` request and the lab
    widgets change settings on a running broker.
    """

    rocketmq_home: str | None = None
    name_server_addr: str | None = "127.0.0.1:9876"
    broker_ip1: str = "127.0.0.1"
    broker_ip2: str = "127.0.0.1"
    listen_port: int = 10911
    broker_name: str = "broker-a"
    broker_cluster_name: str = "DefaultCluster"
    broker_id: int = MASTER_ID
    broker_permission: int = PermName.PERM_READ | PermName.PERM_WRITE
    default_topic_queue_nums: int = 8
    auto_create_topic_enable: bool = True
    cluster_topic_enable: bool = True
    broker_topic_enable: bool = True
    auto_create_subscription_group: bool = True
    message_store_plug_in: str = ""
    msg_trace_topic_name: str = RMQ_SYS_TRACE_TOPIC
    trace_topic_enable: bool = False
    send_message_thread_pool_nums: int = min(_CPUS, 4)
    put_message_future_thread_pool_nums: int = min(_CPUS, 4)
    pull_message_thread_pool_nums: int = 16 + _CPUS * 2
    process_reply_message_thread_pool_nums: int = 16 + _CPUS * 2
    query_message_thread_pool_nums: int = 8 + _CPUS
    admin_broker_thread_pool_nums: int = 16
    client_manage_thread_pool_nums: int = 32
    consumer_manage_thread_pool_nums: int = 32
    heartbeat_thread_pool_nums: int = min(32, _CPUS)
    end_transaction_thread_pool_nums: int = max(8 + _CPUS * 2, min(_CPUS, 4) * 4)
    flush_consumer_offset_interval: int = 1000 * 5
    flush_consumer_offset_history_interval: int = 1000 * 60
    reject_transaction_message: bool = False
    fetch_namesrv_addr_by_address_server: bool = False
    send_thread_pool_queue_capacity: int = 10000
    put_thread_pool_queue_capacity: int = 10000
    pull_thread_pool_queue_capacity: int = 100000
    reply_thread_pool_queue_capacity: int = 10000
    query_thread_pool_queue_capacity: int = 20000
    client_manager_thread_pool_queue_capacity: int = 1000000
    consumer_manager_thread_pool_queue_capacity: int = 1000000
    heartbeat_thread_pool_queue_capacity: int = 50000
    end_transaction_pool_queue_capacity: int = 100000
    filter_server_nums: int = 0
    long_polling_enable: bool = True
    short_polling_time_mills: int = 1000
    notify_consumer_ids_changed_enable: bool = True
    high_speed_mode: bool = False
    commercial_enable: bool = True
    commercial_timer_count: int = 1
    commercial_trans_count: int = 1
    commercial_big_count: int = 1
    commercial_base_count: int = 1
    transfer_msg_by_heap: bool = True
    max_delay_time: int = 40
    region_id: str = "DefaultRegion"
    register_broker_timeout_mills: int = 6000
    slave_read_enable: bool = False
    disable_consume_if_consumer_read_slowly: bool = False
    consumer_fallbehind_threshold: int = 1024 * 1024 * 1024 * 16
    broker_fast_failure_enable: bool = True
    wait_time_mills_in_send_queue: int = 200
    wait_time_mills_in_pull_queue: int = 5 * 1000
    wait_time_mills_in_heartbeat_queue: int = 31 * 1000
    wait_time_mills_in_transaction_queue: int = 3 * 1000
    start_accept_send_request_time_stamp: int = 0
    trace_on: bool = True
    enable_calc_filter_bit_map: bool = False
    expect_consumer_num_use_filter: int = 32
    max_error_rate_of_bloom_filter: int = 20
    filter_data_clean_time_span: int = 24 * 3600 * 1000
    filter_support_retry: bool = False
    enable_property_filter: bool = False
    compressed_register: bool = False
    force_register: bool = True
    #: Clamped to [10 000, 60 000] by ``BrokerController`` when the timer is armed.
    register_name_server_period: int = 1000 * 30
    transaction_time_out: int = 6 * 1000
    transaction_check_max: int = 15
    transaction_check_interval: int = 60 * 1000
    acl_enable: bool = False
    store_reply_message_enable: bool = True
    enable_detail_stat: bool = True
    auto_delete_unused_stats: bool = False
    isolate_log_enable: bool = False

    @property
    def broker_addr(self) -> str:
        """``brokerIP1:listenPort``, the address the broker registers and stamps as store host."""
        return f"{self.broker_ip1}:{self.listen_port}"

    @property
    def namesrv_addr(self) -> str | None:
        """RocketMQ's spelling of :attr:`name_server_addr` (``BrokerConfig#getNamesrvAddr``)."""
        return self.name_server_addr

    @namesrv_addr.setter
    def namesrv_addr(self, value: str | None) -> None:
        self.name_server_addr = value

    @classmethod
    def from_properties(cls, text: str, *, ignore_keys: Iterable[str] = ()) -> BrokerConfig:
        """Build a config from the text of a RocketMQ ``broker.properties`` file.

        Mirrors ``BrokerStartup#createBrokerController`` reading ``-c broker.conf`` with
        ``MixAll#properties2Object`` (common, RocketMQ 4.9.3); docs/reference.md §8.1. Keys are the
        Java property names (``brokerName``, ``brokerIP1``, ``namesrvAddr``,
        ``listenPort``, ``autoCreateTopicEnable`` ...). Values are typed by the field's
        default: ints parse as Java ``Long.parseLong``, booleans accept ``true``/``false``
        in any case, strings are taken as written.

        Args:
            text: the file's content (Java ``Properties`` syntax, see :func:`parse_properties`).
            ignore_keys: keys that belong to another config object (``MessageStoreConfig``
                keys such as ``brokerRole``, ``flushDiskType``, ``deleteWhen``), skipped
                here so the caller can read them from the same file.

        Raises:
            ValueError: a key that is neither a BrokerConfig field nor in ``ignore_keys``,
                or a value that does not parse as the field's type; the message names
                the key.
        """
        skip = frozenset(ignore_keys)
        by_key = _property_key_table()
        values: dict[str, Any] = {}
        for key, raw in parse_properties(text).items():
            if key in skip:
                continue
            name = by_key.get(key)
            if name is None:
                raise ValueError(f"unknown broker.properties key {key!r}")
            values[name] = _convert(key, raw, _DEFAULTS[name])
        return cls(**values)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# Property names whose Java spelling is not the plain camelCase of the field name.
_KEY_EXCEPTIONS = {
    "broker_ip1": "brokerIP1",
    "broker_ip2": "brokerIP2",
    "name_server_addr": "namesrvAddr",
}
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(BrokerConfig)}


def _property_key_table() -> dict[str, str]:
    """Java property name → field name, e.g. ``"shortPollingTimeMills"`` → ``short_polling_time_mills``."""
    return {_KEY_EXCEPTIONS.get(n, _camel(n)): n for n in _DEFAULTS}


def _convert(key: str, raw: str, default: Any) -> Any:
    value = raw.strip()
    if isinstance(default, bool):
        if value.lower() == "true":
            return True
        if value.lower() == "false":
            return False
        raise ValueError(f"broker.properties key {key!r}: expected true/false, got {raw!r}")
    if isinstance(default, int):
        try:
            return int(value, 10)
        except ValueError:
            raise ValueError(
                f"broker.properties key {key!r}: expected an integer, got {raw!r}"
            ) from None
    return raw


def from_properties(text: str, *, ignore_keys: Iterable[str] = ()) -> BrokerConfig:
    """Module-level spelling of :meth:`BrokerConfig.from_properties`."""
    return BrokerConfig.from_properties(text, ignore_keys=ignore_keys)


def parse_properties(text: str) -> dict[str, str]:
    """Read a ``broker.properties`` text as Java's ``Properties#load`` does, keys in file order.

    Comment lines (``#``, ``!``), blank lines, ``=``/``:``/whitespace separators, backslash
    continuations and escapes; a later duplicate key wins (``mqlab.common.properties``).

    Raises:
        ValueError: a malformed ``\\uXXXX`` escape.
    """
    return load_properties(text)


@dataclass(slots=True)
class SubscriptionGroupConfig:
    """A consumer group's settings on one broker.

    Mirrors ``SubscriptionGroupConfig`` (common/subscription, RocketMQ 4.9.3); docs/reference.md §8.3:
    consume enabled, consume-from-min enabled, broadcast enabled, 1 retry queue, 16 retries
    before the DLQ, broker id 0, slow-consumer broker 1, notify on consumer-id changes.
    Mutable: ``disableConsume`` and the admin update request edit it in place.
    """

    group_name: str | None = None
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = MASTER_ID
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True

    def to_json_dict(self) -> dict[str, Any]:
        """The fastjson bean, keys sorted, ``groupName`` left out when ``None``; docs/reference.md §7.4::

        {"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,
         "consumeFromMinEnable":true,"groupName":"group1",
         "notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,
         "whichBrokerWhenConsumeSlowly":1}
        """
        d: dict[str, Any] = {
            "brokerId": self.broker_id,
            "consumeBroadcastEnable": self.consume_broadcast_enable,
            "consumeEnable": self.consume_enable,
            "consumeFromMinEnable": self.consume_from_min_enable,
        }
        if self.group_name is not None:
            d["groupName"] = self.group_name
        d["notifyConsumerIdsChangedEnable"] = self.notify_consumer_ids_changed_enable
        d["retryMaxTimes"] = self.retry_max_times
        d["retryQueueNums"] = self.retry_queue_nums
        d["whichBrokerWhenConsumeSlowly"] = self.which_broker_when_consume_slowly
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> SubscriptionGroupConfig:
        """Read the bean; absent keys keep the defaults, unknown keys are ignored (fastjson)."""
        name = d.get("groupName")
        return cls(
            group_name=None if name is None else str(name),
            consume_enable=bool(d.get("consumeEnable", True)),
            consume_from_min_enable=bool(d.get("consumeFromMinEnable", True)),
            consume_broadcast_enable=bool(d.get("consumeBroadcastEnable", True)),
            retry_queue_nums=int(d.get("retryQueueNums", 1)),
            retry_max_times=int(d.get("retryMaxTimes", 16)),
            broker_id=int(d.get("brokerId", MASTER_ID)),
            which_broker_when_consume_slowly=int(d.get("whichBrokerWhenConsumeSlowly", 1)),
            notify_consumer_ids_changed_enable=bool(d.get("notifyConsumerIdsChangedEnable", True)),
        )


# ---------------------------------------------------------------------------------------
# Config files
# ---------------------------------------------------------------------------------------


class ConfigManager:
    """Base of the broker's JSON-file-backed tables: load with ``.bak`` fallback, persist.

    Mirrors ``ConfigManager`` (common, RocketMQ 4.9.3); docs/reference.md §7.4 ("loading falls back to
    ``<file>.bak`` if the main file is empty or fails to parse"). Subclasses supply
    :meth:`encode`, :meth:`decode` and :meth:`config_file_path`; a path of ``None`` means
    an in-memory broker, for which ``load`` and ``persist`` do nothing.
    """

    __slots__ = ()

    def encode(self, pretty_format: bool = False) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def decode(self, json_string: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def config_file_path(self) -> Path | None:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def decode_versioned_table(
        json_string: str, table_key: str, from_json: Any, file_label: str
    ) -> tuple[dict[str, Any], Any]:
        """Parse ``{"dataVersion": {...}, "<table_key>": {name: {...}}}`` (topics.json,
        subscriptionGroup.json): the loaded entries and the file's DataVersion.

        Raises:
            ValueError: the text is not such an object.
        """
        from mqlab.common.topic_config import DataVersion
        from mqlab.remoting import fastjson

        obj = fastjson.loads(json_string)
        if not isinstance(obj, dict):
            raise ValueError(f"{file_label}: expected a JSON object")
        table = obj.get(table_key) or {}
        if not isinstance(table, dict):
            raise ValueError(f"{file_label}: {table_key} must be an object")
        loaded = {str(k): from_json(v) for k, v in table.items()}
        return loaded, DataVersion.from_json_dict(obj.get("dataVersion") or {})

    def load(self) -> bool:
        """Read the file into memory; on an empty or unreadable file read ``<file>.bak``.

        Mirrors ``ConfigManager#load`` / ``#loadBak``. A missing file (and missing
        ``.bak``) is not an error: the broker starts with its built-in tables.

        Returns:
            False only when the main file failed and the ``.bak`` failed too.
        """
        path = self.config_file_path()
        if path is None:
            return True
        return config_manager_load(path, self.decode)

    def persist(self) -> None:
        """Write the pretty JSON to the file (old content kept in ``.bak``).

        Mirrors ``ConfigManager#persist`` (``encode(true)`` then ``MixAll#string2File``).
        """
        path = self.config_file_path()
        if path is None:
            return
        string2file(self.encode(True), path)
