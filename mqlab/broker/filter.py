"""The broker's message filters: tag hash codes, SQL92 on properties, and retry topics.

Mirrors ``ConsumerFilterData``, ``ConsumerFilterManager``, ``ExpressionMessageFilter``,
``ExpressionForRetryMessageFilter`` and ``MessageEvaluationContext`` (broker/filter), plus
the client's tag re-filter in ``PullAPIWrapper#processPullResult`` (client/impl/consumer),
RocketMQ 4.9.3; mechanisms.md "Pull processing" steps 6–8, mechanisms.md "Long polling" (``notifyMessageArriving``), mechanisms.md "Rebalancing"
(``||`` tags and their hash codes); docs/reference.md §10.1 "Filtering by CQ", §10.2 steps 7–8, §10.3,
§10.14.

What this module owns: per (topic, group) SQL92 filter data with its compiled expression
and born/dead times, and the two-stage match the store runs for each consume-queue unit
(by tags code, then by the stored entry's properties). What it must not know: clocks
(``now_ms`` comes in as an argument or from the ``clock`` the broker hands over), the
store's files, or sockets.

Left out: the bloom filter (``BloomFilterData``, ``CommitLogDispatcherCalcBitMap``, the
consume-queue extension bit maps). In 4.9.3 the SQL92 consume-queue check returns
``True`` whenever bloom data is absent, so without it every SQL92 decision is made by the
commit-log check on properties — the same answers, just without the pre-filter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mqlab.common import message_const as mc
from mqlab.common.filter_api import ExpressionType, SubscriptionData
from mqlab.common.message_decoder import decode_stored_message
from mqlab.common.mix_all import RETRY_GROUP_TOPIC_PREFIX
from mqlab.common.mix_all_files import config_manager_load, string2file
from mqlab.common.sql92 import SQL92, FilterException, Sql92Expression, compile_sql92

__all__ = [
    "MS_24_HOUR",
    "ConsumerFilterData",
    "FilterDataMapByTopic",
    "ConsumerFilterManager",
    "ExpressionMessageFilter",
    "ExpressionForRetryMessageFilter",
    "filter_messages_by_tags",
]

_TAG = ExpressionType.TAG
_SUB_ALL = SubscriptionData.SUB_ALL

#: ``ConsumerFilterManager.MS_24_HOUR``; also ``BrokerConfig.filterDataCleanTimeSpan``'s default.
MS_24_HOUR = 24 * 3600 * 1000

M = TypeVar("M")


def _to_int32(v: int) -> int:
    """Java ``Long#intValue``: keep the low 32 bits, signed."""
    v &= 0xFFFFFFFF
    return v - 0x1_0000_0000 if v & 0x8000_0000 else v


def _compile(expression_type: str | None, expression: str | None) -> Sql92Expression:
    """``FilterFactory.INSTANCE.get(type).compile(expression)``: only SQL92 is registered;
    Java NPEs on any other type, which its callers catch as a compile failure."""
    if expression_type != SQL92:
        raise FilterException(f"no filter registered for type {expression_type!r}")
    if expression is None:
        raise FilterException("expression is null")
    return compile_sql92(expression)


@dataclass(slots=True)
class ConsumerFilterData:
    """A consumer group's compiled SQL92 expression for one topic.

    Mirrors ``ConsumerFilterData`` (broker/filter, RocketMQ 4.9.3). ``bloomFilterData`` is
    omitted (see the module note). ``compiled_expression`` is transient: not persisted,
    recompiled on load.
    """

    consumer_group: str
    topic: str
    expression: str | None
    expression_type: str | None
    compiled_expression: Sql92Expression | None = None
    born_time: int = 0
    dead_time: int = 0
    client_version: int = 0

    @property
    def compiled(self) -> Sql92Expression | None:
        """Short alias of :attr:`compiled_expression`."""
        return self.compiled_expression

    def is_dead(self) -> bool:
        """``deadTime >= bornTime`` (so data born and "killed" at the same ms is dead)."""
        return self.dead_time >= self.born_time

    def how_long_after_death(self, now_ms: int) -> int:
        """Milliseconds since death, or -1 while alive."""
        return now_ms - self.dead_time if self.is_dead() else -1

    def is_msg_in_live(self, msg_store_time: int) -> bool:
        """Was the message stored after this data was born (used by the bloom path)."""
        return msg_store_time > self.born_time

    def to_json_dict(self) -> dict[str, Any]:
        """The fastjson bean: sorted keys, ``dead`` from ``isDead()``, no compiled expression."""
        d: dict[str, Any] = {
            "bornTime": self.born_time,
            "clientVersion": self.client_version,
            "consumerGroup": self.consumer_group,
            "dead": self.is_dead(),
            "deadTime": self.dead_time,
        }
        if self.expression is not None:
            d["expression"] = self.expression
        if self.expression_type is not None:
            d["expressionType"] = self.expression_type
        d["topic"] = self.topic
        return d

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> ConsumerFilterData:
        return cls(
            consumer_group=str(d.get("consumerGroup", "")),
            topic=str(d.get("topic", "")),
            expression=d.get("expression"),
            expression_type=d.get("expressionType"),
            born_time=int(d.get("bornTime", 0)),
            dead_time=int(d.get("deadTime", 0)),
            client_version=int(d.get("clientVersion", 0)),
        )


@dataclass(slots=True)
class FilterDataMapByTopic:
    """One topic's group → filter data map. Mirrors ``ConsumerFilterManager.FilterDataMapByTopic``."""

    topic: str
    group_filter_data: dict[str, ConsumerFilterData] = field(default_factory=dict)

    def un_register(self, consumer_group: str, now_ms: int) -> None:
        """Mark the group's data dead (it stays until ``clean`` removes it)."""
        data = self.group_filter_data.get(consumer_group)
        if data is None or data.is_dead():
            return
        data.dead_time = now_ms

    def register(
        self,
        consumer_group: str,
        expression: str,
        type_: str,
        client_version: int,
        now_ms: int,
    ) -> bool:
        """Add or refresh the group's data; only a newer ``client_version`` may change it.

        Mirrors ``FilterDataMapByTopic#register`` (the bloom-data comparison is omitted).
        Returns whether the data is now registered and alive; a changed expression that
        does not compile removes the old data and returns ``False``.
        """
        old = self.group_filter_data.get(consumer_group)
        if old is None:
            data = ConsumerFilterManager.build(
                self.topic, consumer_group, expression, type_, client_version, now_ms=now_ms
            )
            if data is None:
                return False
            self.group_filter_data[consumer_group] = data
            return True
        if client_version <= old.client_version:
            # An old or repeated heartbeat: only a same-version one revives dead data.
            if client_version == old.client_version and old.is_dead():
                old.dead_time = 0  # reAlive
                return True
            return False
        if old.expression != expression or old.expression_type != type_:
            data = ConsumerFilterManager.build(
                self.topic, consumer_group, expression, type_, client_version, now_ms=now_ms
            )
            if data is None:  # new expression does not compile: drop, let the client fail
                del self.group_filter_data[consumer_group]
                return False
            self.group_filter_data[consumer_group] = data
            return True
        old.client_version = client_version
        if old.is_dead():
            old.dead_time = 0  # reAlive
        return True


class ConsumerFilterManager:
    """All SQL92 filter data of a broker, by topic then consumer group.

    Mirrors ``ConsumerFilterManager`` (broker/filter, RocketMQ 4.9.3). Java registers on
    every heartbeat (``DefaultConsumerIdsChangeListener`` REGISTER → ``register(group,
    subList)``) and marks a group's data dead on UNREGISTER; dead data older than
    ``filter_data_clean_time_span`` is dropped when the table is persisted.

    Args:
        clock: returns the current time in ms (the Lab clock); used where Java calls
            ``System.currentTimeMillis()`` and no ``now_ms`` is passed. Defaults to 0.
        filter_data_clean_time_span: ``BrokerConfig.filterDataCleanTimeSpan`` (24 h).
    """

    def __init__(
        self,
        clock: Callable[[], int] | None = None,
        filter_data_clean_time_span: int = MS_24_HOUR,
    ) -> None:
        self.clock: Callable[[], int] = clock if clock is not None else (lambda: 0)
        self.filter_data_clean_time_span = filter_data_clean_time_span
        self.filter_data_by_topic: dict[str, FilterDataMapByTopic] = {}

    def _now(self, now_ms: int | None) -> int:
        return self.clock() if now_ms is None else now_ms

    @staticmethod
    def build(
        topic: str,
        consumer_group: str,
        expression: str | None,
        type_: str | None,
        client_version: int,
        *,
        now_ms: int = 0,
    ) -> ConsumerFilterData | None:
        """Compile an expression into filter data; ``None`` for TAG or a compile error.

        Mirrors ``ConsumerFilterManager#build`` (broker/filter, RocketMQ 4.9.3); mechanisms.md "Pull processing"
        step 6. Bloom filter data is not included (Java adds it in ``register``).

        Args:
            topic, consumer_group: the subscription.
            expression: the SQL92 text.
            type_: ``"SQL92"``; ``None``/``""``/``"TAG"`` → ``None``.
            client_version: the subscription's ``subVersion``.
            now_ms: the born time (Java: ``System.currentTimeMillis()``).
        """
        if ExpressionType.is_tag_type(type_):
            return None
        try:
            compiled = _compile(type_, expression)
        except FilterException:
            return None  # Java logs "parse error" and returns null
        return ConsumerFilterData(
            consumer_group=consumer_group,
            topic=topic,
            expression=expression,
            expression_type=type_,
            compiled_expression=compiled,
            born_time=now_ms,
            dead_time=0,
            client_version=client_version,
        )

    def register(
        self,
        topic: str,
        consumer_group: str,
        expression: str | None,
        type_: str | None,
        client_version: int,
        *,
        now_ms: int | None = None,
    ) -> bool:
        """Register (or refresh) one subscription's filter data; TAG and empty → ``False``.

        Mirrors ``ConsumerFilterManager#register(topic, group, expression, type, version)``.
        """
        if ExpressionType.is_tag_type(type_) or not expression:
            return False
        by_topic = self.filter_data_by_topic.get(topic)
        if by_topic is None:
            by_topic = self.filter_data_by_topic[topic] = FilterDataMapByTopic(topic)
        return by_topic.register(
            consumer_group, expression, str(type_), client_version, self._now(now_ms)
        )

    def register_group(
        self,
        consumer_group: str,
        sub_list: Iterable[SubscriptionData],
        *,
        now_ms: int | None = None,
    ) -> None:
        """Register every subscription of a heartbeat, then kill data of dropped topics.

        Mirrors ``ConsumerFilterManager#register(group, Collection<SubscriptionData>)``.
        """
        now = self._now(now_ms)
        subs = list(sub_list)
        for sd in subs:
            self.register(
                sd.topic, consumer_group, sd.sub_string, sd.expression_type, sd.sub_version,
                now_ms=now,
            )  # fmt: skip
        topics = {sd.topic for sd in subs}
        for data in self.get_by_group(consumer_group):
            if data.topic not in topics and not data.is_dead():
                data.dead_time = now  # "make illegal topic dead"

    def un_register(self, consumer_group: str, *, now_ms: int | None = None) -> None:
        """Mark the group's data dead on every topic. Mirrors ``ConsumerFilterManager#unRegister``."""
        now = self._now(now_ms)
        for topic in sorted(self.filter_data_by_topic):
            self.filter_data_by_topic[topic].un_register(consumer_group, now)

    unregister = un_register

    def get(self, topic: str, consumer_group: str) -> ConsumerFilterData | None:
        """The group's filter data for ``topic`` (alive or dead), or ``None``.

        Mirrors ``ConsumerFilterManager#get(topic, group)``; mechanisms.md "Pull processing" step 6.
        """
        by_topic = self.filter_data_by_topic.get(topic)
        if by_topic is None:
            return None
        return by_topic.group_filter_data.get(consumer_group)

    def get_by_topic(self, topic: str) -> list[ConsumerFilterData] | None:
        """All groups' data for a topic (sorted by group), ``None`` if there is none.
        Mirrors ``ConsumerFilterManager#get(topic)``."""
        by_topic = self.filter_data_by_topic.get(topic)
        if by_topic is None or not by_topic.group_filter_data:
            return None
        return [by_topic.group_filter_data[g] for g in sorted(by_topic.group_filter_data)]

    def get_by_group(self, consumer_group: str) -> list[ConsumerFilterData]:
        """The group's data on every topic, sorted by topic. Mirrors ``getByGroup``."""
        out = []
        for topic in sorted(self.filter_data_by_topic):
            data = self.filter_data_by_topic[topic].group_filter_data.get(consumer_group)
            if data is not None:
                out.append(data)
        return out

    def clean(self, *, now_ms: int | None = None) -> None:
        """Drop data dead for at least ``filter_data_clean_time_span``, then empty topics.

        Mirrors ``ConsumerFilterManager#clean`` (run before every persist).
        """
        now = self._now(now_ms)
        for topic in sorted(self.filter_data_by_topic):
            groups = self.filter_data_by_topic[topic].group_filter_data
            for group in sorted(groups):
                if groups[group].how_long_after_death(now) >= self.filter_data_clean_time_span:
                    del groups[group]
            if not groups:
                del self.filter_data_by_topic[topic]

    def encode(self, *, now_ms: int | None = None, pretty_format: bool = False) -> str:
        """``consumerFilter.json``: ``clean`` first, then the fastjson shape
        ``{"filterDataByTopic": {topic: {"groupFilterData": {group: {...}}, "topic": t}}}``
        (no ``bloomFilterData``: a Java broker loading this file would ignore it)."""
        self.clean(now_ms=now_ms)
        doc = {
            "filterDataByTopic": {
                topic: {
                    "groupFilterData": {
                        g: m.group_filter_data[g].to_json_dict()
                        for g in sorted(m.group_filter_data)
                    },
                    "topic": m.topic,
                }
                for topic, m in sorted(self.filter_data_by_topic.items())
            }
        }
        return json.dumps(doc, indent=4 if pretty_format else None, separators=(",", ":"))

    def decode(self, json_string: str, *, now_ms: int | None = None) -> None:
        """Load persisted data: recompile each expression and mark every consumer dead
        (``deadTime = max(now - 30 s, bornTime)``) until its next heartbeat revives it.

        Mirrors ``ConsumerFilterManager#decode`` (the bloom-change check is omitted).
        """
        now = self._now(now_ms)
        doc = json.loads(json_string) if json_string else None
        if not doc or not isinstance(doc.get("filterDataByTopic"), dict):
            return
        table: dict[str, FilterDataMapByTopic] = {}
        for topic, m in doc["filterDataByTopic"].items():
            if not isinstance(m, dict):
                continue
            by_topic = FilterDataMapByTopic(str(m.get("topic", topic)))
            for group, d in (m.get("groupFilterData") or {}).items():
                if not isinstance(d, dict):
                    continue
                data = ConsumerFilterData.from_json_dict(d)
                try:
                    data.compiled_expression = _compile(data.expression_type, data.expression)
                except FilterException:
                    pass  # Java logs "load filter data error" and keeps the data
                if data.dead_time == 0:
                    data.dead_time = max(now - 30 * 1000, data.born_time)
                by_topic.group_filter_data[group] = data
            table[topic] = by_topic
        self.filter_data_by_topic = table

    @staticmethod
    def config_file_path(store_path_root_dir: str | Path) -> Path:
        """``BrokerPathConfigHelper#getConsumerFilterPath``: ``<root>/config/consumerFilter.json``."""
        return Path(store_path_root_dir) / "config" / "consumerFilter.json"

    def persist(self, path: str | Path, *, now_ms: int | None = None) -> None:
        """Write :meth:`encode` (pretty) to ``path`` (``ConfigManager#persist``:
        ``MixAll#string2File``, the previous content kept in ``.bak``)."""
        string2file(self.encode(now_ms=now_ms, pretty_format=True), path)

    def load(self, path: str | Path, *, now_ms: int | None = None) -> bool:
        """Read ``path``, else its ``.bak`` (``ConfigManager#load``); a missing file is fine.

        Returns:
            False only when both the file and its ``.bak`` are unreadable.
        """
        return config_manager_load(path, lambda text: self.decode(text, now_ms=now_ms))


class ExpressionMessageFilter:
    """The store's filter for one pull: tag codes by consume queue, SQL92 by properties.

    Mirrors ``ExpressionMessageFilter`` (broker/filter, RocketMQ 4.9.3); mechanisms.md "Pull processing" step 8;
    docs/reference.md §10.1. Implements ``mqlab.store.message_filter.MessageFilter``.
    """

    __slots__ = ("subscription_data", "consumer_filter_data", "consumer_filter_manager")

    def __init__(
        self,
        subscription_data: SubscriptionData | None,
        consumer_filter_data: ConsumerFilterData | None,
        consumer_filter_manager: ConsumerFilterManager | None,
    ) -> None:
        self.subscription_data = subscription_data
        self.consumer_filter_data = consumer_filter_data
        self.consumer_filter_manager = consumer_filter_manager

    @property
    def bloom_data_valid(self) -> bool:
        """Always ``False``: mqlab keeps no bloom filter data."""
        return False

    def is_matched_by_consume_queue(self, tags_code: int | None, cq_ext_unit: Any = None) -> bool:
        """Match a consume-queue unit by its tags code.

        Mirrors ``ExpressionMessageFilter#isMatchedByConsumeQueue``; docs/reference.md §10.1 step 4e;
        mechanisms.md "Long polling" (``notifyMessageArriving`` passes ``None`` from the hold-service check).
        TAG: no subscription, class filter mode, ``None`` code or ``"*"`` → ``True``; else
        the code, cut to a Java ``int``, must be in ``code_set`` (hash collisions pass and
        are dropped by the client, see :func:`filter_messages_by_tags`). SQL92: ``True``
        (no bloom data; the commit-log check decides).
        """
        sd = self.subscription_data
        if sd is None or sd.class_filter_mode:
            return True
        # NOTE: performance: runs for every unit a pull scans; ExpressionType.is_tag_type
        # inlined (None, "" or "TAG"), ~0.1 µs per unit.
        expression_type = sd.expression_type
        if expression_type is None or expression_type == "" or expression_type == _TAG:
            if tags_code is None or sd.sub_string == _SUB_ALL:
                return True
            return _to_int32(tags_code) in sd.code_set
        return True  # SQL92: "no expression or no bloom" → matched

    def is_matched_by_commit_log(
        self, msg_buffer: bytes | bytearray | memoryview | None, properties: dict[str, str] | None
    ) -> bool:
        """Match a stored message by its properties (SQL92 only; TAG → ``True``).

        Mirrors ``ExpressionMessageFilter#isMatchedByCommitLog``; docs/reference.md §10.1 step 4g;
        mechanisms.md "Long polling". Properties come from ``properties`` or, when ``None``, are decoded from
        the stored entry ``msg_buffer``. Only a TRUE result matches: unknown (``None``)
        and evaluation errors (Java logs "Message Filter error") do not.
        """
        sd = self.subscription_data
        if sd is None or sd.class_filter_mode:
            return True
        expression_type = sd.expression_type  # NOTE: performance: is_tag_type inlined
        if expression_type is None or expression_type == "" or expression_type == _TAG:
            return True
        return _evaluate(self.consumer_filter_data, msg_buffer, properties)


def _decode_properties(msg_buffer: bytes | bytearray | memoryview) -> dict[str, str]:
    """``MessageDecoder#decodeProperties``: the properties of the entry at offset 0."""
    return decode_stored_message(msg_buffer, 0, read_body=False).properties


def _evaluate(
    data: ConsumerFilterData | None,
    msg_buffer: bytes | bytearray | memoryview | None,
    properties: Mapping[str, str] | None,
) -> bool:
    """The shared tail of both ``isMatchedByCommitLog`` methods."""
    if data is None or data.expression is None or data.compiled_expression is None:
        return True  # no expression
    if properties is None and msg_buffer is not None:
        properties = _decode_properties(msg_buffer)
    return data.compiled_expression(properties)  # False on None or an evaluation error


class ExpressionForRetryMessageFilter(ExpressionMessageFilter):
    """The retry-aware filter (``BrokerConfig.filterSupportRetry``, default false).

    Mirrors ``ExpressionForRetryMessageFilter`` (broker/filter, RocketMQ 4.9.3); mechanisms.md "Pull processing"
    step 8. The consume-queue check is inherited (a ``%RETRY%`` subscription is TAG ``*``,
    so it passes). The commit-log check differs for ``%RETRY%<group>`` topics: the TAG
    short-cut is skipped, and the message is judged by the group's SQL92 filter data for
    its *original* topic (the ``RETRY_TOPIC`` property), so a retried message must still
    match the consumer's SQL92 expression. TAG subscriptions have no filter data, so their
    retry messages all pass (tags are re-checked only on the client).
    """

    __slots__ = ()

    def is_matched_by_commit_log(
        self, msg_buffer: bytes | bytearray | memoryview | None, properties: dict[str, str] | None
    ) -> bool:
        """Mirrors ``ExpressionForRetryMessageFilter#isMatchedByCommitLog``.

        A retry message without ``RETRY_TOPIC`` has no original filter data here and
        matches; Java would throw a NullPointerException from ``get(null, group)``.
        """
        sd = self.subscription_data
        if sd is None or sd.class_filter_mode:
            return True
        is_retry_topic = sd.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
        if not is_retry_topic and ExpressionType.is_tag_type(sd.expression_type):
            return True
        data = self.consumer_filter_data
        if is_retry_topic:
            # "retry topic, use original filter data" (Java: poor performance, decodes).
            if properties is None and msg_buffer is not None:
                properties = _decode_properties(msg_buffer)
            real_topic = (properties or {}).get(mc.PROPERTY_RETRY_TOPIC)
            group = sd.topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
            manager = self.consumer_filter_manager
            data = None
            if real_topic is not None and manager is not None:
                data = manager.get(real_topic, group)
        return _evaluate(data, msg_buffer, properties)


def filter_messages_by_tags(msgs: Iterable[M], subscription_data: SubscriptionData) -> list[M]:
    """Re-filter pulled messages by tag string on the client.

    Mirrors the tag re-filter in ``PullAPIWrapper#processPullResult`` (client/impl/consumer,
    RocketMQ 4.9.3); docs/reference.md §10.14. The broker matched by hash code only, so two tags with
    the same ``String#hashCode`` ("Aa"/"BB") both pass it; here, when ``tags_set`` is not
    empty and not in class filter mode, only messages whose ``TAGS`` property is present
    and exactly one of the subscribed tags survive (untagged messages are dropped).
    ``"*"`` (empty ``tags_set``) and SQL92 subscriptions keep everything. Order is kept.

    Args:
        msgs: decoded messages (anything with a ``properties`` dict).
        subscription_data: the consumer's subscription for the topic.
    """
    if not subscription_data.tags_set or subscription_data.class_filter_mode:
        return list(msgs)
    wanted = frozenset(subscription_data.tags_set)
    out = []
    for msg in msgs:
        tags = msg.properties.get(mc.PROPERTY_TAGS)  # type: ignore[attr-defined]
        if tags is not None and tags in wanted:
            out.append(msg)
    return out
