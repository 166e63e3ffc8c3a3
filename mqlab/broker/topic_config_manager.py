"""The broker's topic table: built-in topics, auto-creation on send, topics.json.

Mirrors ``TopicConfigManager`` (broker/topic, RocketMQ 4.9.3); mechanisms.md "msgCheck" (``msgCheck``:
topic lookup, ``createTopicInSendMessageMethod`` from ``TBW102``, retry-topic creation,
why ``autoCreateTopicEnable`` should be off in production); docs/reference.md §7.3 (built-in topics,
auto-created topics), §7.4 (topics.json).

What this module owns: ``topic_config_table`` (topic → :class:`TopicConfig`), its
``data_version`` and the file ``<config_dir>/topics.json``. What it must not know: name
servers, sockets and clocks. Java calls ``brokerController.registerBrokerAll`` after a
creation; here the manager calls the ``on_topic_created`` hook and the broker controller
re-registers. Time arrives as ``now_ms`` (it stamps ``data_version``).

Java adds the broker's own system topics (cluster name, broker name, reply topic ...) to
the static ``TopicValidator`` set; mqlab has no module-level state, so the manager keeps
them in :attr:`TopicConfigManager.system_topic_set` and answers :meth:`is_system_topic`.
The file lists topics sorted by name (Java writes ``ConcurrentHashMap`` order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mqlab.broker.config import BrokerConfig, ConfigManager
from mqlab.common.mix_all import get_reply_topic
from mqlab.common.perm_name import PermName
from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.common.topic_validator import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    RMQ_SYS_BENCHMARK_TOPIC,
    RMQ_SYS_OFFSET_MOVED_EVENT,
    RMQ_SYS_SCHEDULE_TOPIC,
    RMQ_SYS_SELF_TEST_TOPIC,
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
    is_system_topic,
)
from mqlab.remoting import fastjson
from mqlab.trace.events import Kind

__all__ = ["TopicConfigManager", "SCHEDULE_TOPIC_QUEUE_NUM", "TOPICS_JSON"]

#: ``TopicConfigManager.SCHEDULE_TOPIC_QUEUE_NUM``: one queue per delay level (docs/reference.md §7.3).
SCHEDULE_TOPIC_QUEUE_NUM = 18
#: File name under the broker's config directory (``BrokerPathConfigHelper#getTopicConfigPath``).
TOPICS_JSON = "topics.json"

_RW = PermName.PERM_READ | PermName.PERM_WRITE
_CREATE_IN_SEND = "TopicConfigManager.createTopicInSendMessageMethod"


class TopicConfigManager(ConfigManager):
    """Topic table of one broker.

    Attributes:
        topic_config_table: topic name → config, in creation order.
        data_version: bumped (``next_version(now_ms)``) on every change; the name server
            compares it to decide whether a registration carries news.
        on_topic_created: called with the new config after each creation (Java:
            ``registerBrokerAll(false, true, true)``); ``None`` to skip.
    """

    __slots__ = (
        "broker_config",
        "config_dir",
        "topic_config_table",
        "data_version",
        "on_topic_created",
        "system_topic_set",
        "_tracer",
    )

    def __init__(
        self,
        broker_config: BrokerConfig,
        config_dir: Path | None,
        *,
        tracer: Any = None,
        now_ms: int = 0,
    ) -> None:
        """Create the built-in topics.

        Mirrors ``TopicConfigManager(BrokerController)`` (broker/topic, RocketMQ 4.9.3);
        docs/reference.md §7.3: SELF_TEST_TOPIC 1/1, TBW102 8/8 perm 7 (only with
        ``autoCreateTopicEnable``), BenchmarkTest 1024/1024, ``<cluster>`` 16/16 and
        ``<brokerName>`` 1/1 (perm INHERIT, plus RW when the cluster/broker topic switch
        is on), OFFSET_MOVED_EVENT 1/1, SCHEDULE_TOPIC_XXXX 18/18, the trace topic 1/1
        (only with ``traceTopicEnable``), ``<cluster>_REPLY_TOPIC`` 1/1; the rest perm 6.
        """
        self.broker_config = broker_config
        self.config_dir = config_dir
        self.topic_config_table: dict[str, TopicConfig] = {}
        self.data_version = DataVersion(timestamp=now_ms)
        self.on_topic_created: Callable[[TopicConfig], None] | None = None
        self._tracer = tracer
        bc = broker_config
        system: list[str] = []

        def builtin(topic: str, queue_nums: int, perm: int = _RW) -> None:
            self.topic_config_table[topic] = TopicConfig(topic, queue_nums, queue_nums, perm)
            system.append(topic)

        builtin(RMQ_SYS_SELF_TEST_TOPIC, 1)
        if bc.auto_create_topic_enable:
            builtin(
                AUTO_CREATE_TOPIC_KEY_TOPIC,
                bc.default_topic_queue_nums,
                PermName.PERM_INHERIT | _RW,
            )
        builtin(RMQ_SYS_BENCHMARK_TOPIC, 1024)
        builtin(
            bc.broker_cluster_name,
            16,  # TopicConfig's default queue count: Java does not set it here
            PermName.PERM_INHERIT | (_RW if bc.cluster_topic_enable else 0),
        )
        builtin(bc.broker_name, 1, PermName.PERM_INHERIT | (_RW if bc.broker_topic_enable else 0))
        builtin(RMQ_SYS_OFFSET_MOVED_EVENT, 1)
        builtin(RMQ_SYS_SCHEDULE_TOPIC, SCHEDULE_TOPIC_QUEUE_NUM)
        if bc.trace_topic_enable:
            builtin(bc.msg_trace_topic_name, 1)
        builtin(get_reply_topic(bc.broker_cluster_name), 1)
        #: The runtime additions Java makes with ``TopicValidator.addSystemTopic``.
        self.system_topic_set: frozenset[str] = frozenset(system)

    # -- queries ---------------------------------------------------------------------------

    def select_topic_config(self, topic: str) -> TopicConfig | None:
        """The topic's config or ``None``. Mirrors ``TopicConfigManager#selectTopicConfig``;
        mechanisms.md "msgCheck" (``msgCheck`` step 4), mechanisms.md "Pull processing" step 4."""
        return self.topic_config_table.get(topic)

    def is_system_topic(self, topic: str) -> bool:
        """``TopicValidator#isSystemTopic`` including this broker's runtime additions
        (cluster name, broker name, ``<cluster>_REPLY_TOPIC``, trace topic); docs/reference.md §7.1."""
        return is_system_topic(topic, self.system_topic_set)

    def is_order_topic(self, topic: str) -> bool:
        """True if the topic exists and is ordered. Mirrors ``TopicConfigManager#isOrderTopic``;
        mechanisms.md "msgCheck" (``msgCheck`` step 1: a read-only broker rejects only order topics)."""
        tc = self.topic_config_table.get(topic)
        return tc is not None and tc.order

    # -- creation --------------------------------------------------------------------------

    def create_topic_in_send_message_method(
        self,
        topic: str,
        default_topic: str,
        remote_address: str,
        client_default_topic_queue_nums: int,
        topic_sys_flag: int,
        now_ms: int,
    ) -> TopicConfig | None:
        """Create a topic unknown to this broker from the producer's template topic.

        Mirrors ``TopicConfigManager#createTopicInSendMessageMethod`` (broker/topic,
        RocketMQ 4.9.3); mechanisms.md "msgCheck"; docs/reference.md §7.3 (4 queues, perm 6 from
        TBW102 8/8 perm 7).

        Args:
            topic: the topic the producer sent to.
            default_topic: the producer's ``createTopicKey`` (``TBW102``).
            remote_address: the producer's address (trace only).
            client_default_topic_queue_nums: the producer's ``defaultTopicQueueNums`` (4).
            topic_sys_flag: unit flags from the send header.
            now_ms: stamps the data version.

        Returns:
            The existing or new config, or ``None`` when the template is missing or
            lacks the INHERIT bit (the trace event says which).
        """
        # step 1 (mechanisms.md "msgCheck"): under the lock, look again; another send may have won.
        existing = self.topic_config_table.get(topic)
        if existing is not None:
            return existing
        # step 2: the template topic (TBW102: 8 queues, perm 7 = RWX).
        default_tc = self.topic_config_table.get(default_topic)
        if default_tc is None:
            self._emit(
                _CREATE_IN_SEND,
                "2",
                Kind.STEP,
                topic=topic,
                default_topic=default_topic,
                producer=remote_address,
                created=False,
                reason="default topic not exist",
            )
            return None
        # step 3: TBW102 with autoCreateTopicEnable off loses INHERIT, in place (as Java).
        if (
            default_topic == AUTO_CREATE_TOPIC_KEY_TOPIC
            and not self.broker_config.auto_create_topic_enable
        ):
            default_tc.perm = _RW
            self._emit(
                _CREATE_IN_SEND,
                "3",
                topic=default_topic,
                perm=_RW,
                reason="autoCreateTopicEnable=false",
            )
        # step 4: inherit queue count and perm (minus INHERIT) and filter type.
        if not PermName.is_inherited(default_tc.perm):
            self._emit(
                _CREATE_IN_SEND,
                "4",
                Kind.STEP,
                topic=topic,
                default_topic=default_topic,
                default_perm=default_tc.perm,
                producer=remote_address,
                created=False,
                reason="default topic has no inherit perm",
            )
            return None
        queue_nums = max(0, min(client_default_topic_queue_nums, default_tc.write_queue_nums))
        tc = TopicConfig(
            topic,
            read_queue_nums=queue_nums,
            write_queue_nums=queue_nums,
            perm=default_tc.perm & ~PermName.PERM_INHERIT,
            topic_filter_type=default_tc.topic_filter_type,
            topic_sys_flag=topic_sys_flag,
        )
        # step 5: publish, bump the data version, persist topics.json.
        self._put_new(tc, now_ms)
        self._emit(
            _CREATE_IN_SEND,
            "5",
            topic=topic,
            default_topic=default_topic,
            producer=remote_address,
            created=True,
            read_queue_nums=queue_nums,
            write_queue_nums=queue_nums,
            perm=tc.perm,
            topic_filter_type=str(tc.topic_filter_type),
            data_version=self.data_version.counter,
        )
        # step 6: re-register with the name server so routes show the new topic.
        self._notify_created(tc)
        return tc

    def create_topic_in_send_message_back_method(
        self,
        topic: str,
        client_default_topic_queue_nums: int,
        perm: int,
        topic_sys_flag: int,
        now_ms: int,
    ) -> TopicConfig:
        """Create a retry or DLQ topic (no template) if missing.

        Mirrors ``TopicConfigManager#createTopicInSendMessageBackMethod`` (broker/topic,
        RocketMQ 4.9.3); mechanisms.md "msgCheck" (retry topic: 1 queue, RW); docs/reference.md §7.3
        (``%RETRY%<group>`` with retryQueueNums queues, ``%DLQ%<group>`` 1 queue perm 6).
        """
        existing = self.topic_config_table.get(topic)
        if existing is not None:
            return existing
        tc = TopicConfig(
            topic,
            read_queue_nums=client_default_topic_queue_nums,
            write_queue_nums=client_default_topic_queue_nums,
            perm=perm,
            topic_sys_flag=topic_sys_flag,
        )
        self._put_new(tc, now_ms)
        self._emit(
            "TopicConfigManager.createTopicInSendMessageBackMethod",
            "create",
            topic=topic,
            created=True,
            read_queue_nums=tc.read_queue_nums,
            write_queue_nums=tc.write_queue_nums,
            perm=perm,
            data_version=self.data_version.counter,
        )
        self._notify_created(tc)
        return tc

    def create_topic_of_tran_check_max_time(
        self, client_default_topic_queue_nums: int, perm: int, now_ms: int
    ) -> TopicConfig:
        """Create ``TRANS_CHECK_MAX_TIME_TOPIC`` if missing (sys flag 0).

        Mirrors ``TopicConfigManager#createTopicOfTranCheckMaxTime`` (broker/topic,
        RocketMQ 4.9.3).
        """
        topic = RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC
        existing = self.topic_config_table.get(topic)
        if existing is not None:
            return existing
        tc = TopicConfig(
            topic,
            read_queue_nums=client_default_topic_queue_nums,
            write_queue_nums=client_default_topic_queue_nums,
            perm=perm,
        )
        self._put_new(tc, now_ms)
        self._emit(
            "TopicConfigManager.createTopicOfTranCheckMaxTime",
            "create",
            topic=topic,
            created=True,
            read_queue_nums=tc.read_queue_nums,
            perm=perm,
            data_version=self.data_version.counter,
        )
        self._notify_created(tc)
        return tc

    def _put_new(self, tc: TopicConfig, now_ms: int) -> None:
        self.topic_config_table[tc.topic_name] = tc
        self.data_version.next_version(now_ms)
        self.persist()

    def _notify_created(self, tc: TopicConfig) -> None:
        if self.on_topic_created is not None:
            self.on_topic_created(tc)

    # -- admin updates -----------------------------------------------------------------------

    def update_topic_config(self, topic_config: TopicConfig, now_ms: int) -> None:
        """Create or replace a topic (UPDATE_AND_CREATE_TOPIC), bump the version, persist.

        Mirrors ``TopicConfigManager#updateTopicConfig`` (broker/topic, RocketMQ 4.9.3).
        Does not call ``on_topic_created``: in Java the admin processor re-registers.
        """
        old = self.topic_config_table.get(topic_config.topic_name)
        self.topic_config_table[topic_config.topic_name] = topic_config
        self.data_version.next_version(now_ms)
        self.persist()
        self._emit(
            "TopicConfigManager.updateTopicConfig",
            "update",
            topic=topic_config.topic_name,
            created=old is None,
            read_queue_nums=topic_config.read_queue_nums,
            write_queue_nums=topic_config.write_queue_nums,
            perm=topic_config.perm,
            data_version=self.data_version.counter,
        )

    def delete_topic_config(self, topic: str, now_ms: int) -> bool:
        """Remove a topic; bump the version and persist if it existed.

        Mirrors ``TopicConfigManager#deleteTopicConfig`` (broker/topic, RocketMQ 4.9.3).

        Returns:
            True if the topic existed (Java only logs the difference).
        """
        if self.topic_config_table.pop(topic, None) is None:
            return False
        self.data_version.next_version(now_ms)
        self.persist()
        self._emit(
            "TopicConfigManager.deleteTopicConfig",
            "delete",
            topic=topic,
            data_version=self.data_version.counter,
        )
        return True

    def update_order_topic_config(self, order_topics: Iterable[str] | None, now_ms: int) -> bool:
        """Mark exactly the name server's order topics as ordered.

        Mirrors ``TopicConfigManager#updateOrderTopicConfig(KVTable)`` (broker/topic,
        RocketMQ 4.9.3): the KV table's keys are the order topics; ``None`` (no table)
        changes nothing.

        Returns:
            True if a flag changed (then the version is bumped and the file persisted).
        """
        if order_topics is None:
            return False
        wanted = set(order_topics)
        changed: list[str] = []
        for name in sorted(self.topic_config_table):
            tc = self.topic_config_table[name]
            if tc.order != (name in wanted):
                tc.order = name in wanted
                changed.append(name)
        if changed:
            self.data_version.next_version(now_ms)
            self.persist()
            self._emit(
                "TopicConfigManager.updateOrderTopicConfig",
                "update",
                topics=changed,
                data_version=self.data_version.counter,
            )
        return bool(changed)

    # -- serialisation -----------------------------------------------------------------------

    def build_topic_config_serialize_wrapper(self) -> tuple[DataVersion, dict[str, TopicConfig]]:
        """``(data_version, topic_config_table)``, the body of a broker registration.

        Mirrors ``TopicConfigManager#buildTopicConfigSerializeWrapper``; the objects are
        the live ones, as in Java (the caller encodes them right away).
        """
        return self.data_version, self.topic_config_table

    def to_json_dict(self) -> dict[str, Any]:
        """``TopicConfigSerializeWrapper``: ``{"dataVersion":…,"topicConfigTable":…}``
        with topics sorted by name; docs/reference.md §7.4."""
        return {
            "dataVersion": self.data_version.to_json_dict(),
            "topicConfigTable": {
                name: self.topic_config_table[name].to_json_dict()
                for name in sorted(self.topic_config_table)
            },
        }

    def encode(self, pretty_format: bool = False) -> str:
        """Mirrors ``TopicConfigManager#encode(boolean)``."""
        return fastjson.dumps(self.to_json_dict(), pretty=pretty_format)

    def decode(self, json_string: str) -> None:
        """Merge a topics.json into the table (loaded topics override built-ins) and adopt
        its data version. Mirrors ``TopicConfigManager#decode``.

        Raises:
            ValueError: the text is not a TopicConfigSerializeWrapper.
        """
        loaded, version = self.decode_versioned_table(
            json_string, "topicConfigTable", TopicConfig.from_json_dict, "topics.json"
        )
        self.topic_config_table.update(loaded)
        self.data_version.assign_new_one(version)

    def config_file_path(self) -> Path | None:
        """``<config_dir>/topics.json`` (Java: ``<storePathRootDir>/config/topics.json``)."""
        return None if self.config_dir is None else self.config_dir / TOPICS_JSON

    def _emit(self, component: str, step: str, kind: str = Kind.STATE, **fields: Any) -> None:
        if self._tracer is not None and self._tracer.enabled:
            self._tracer.emit(component, step, kind, **fields)
