"""The name server's routing tables: which broker serves which topic, and who is alive.

Mirrors ``RouteInfoManager`` and ``BrokerLiveInfo`` (namesrv/routeinfo, RocketMQ 4.9.3),
plus the small ``TopicConfigSerializeWrapper`` and ``RegisterBrokerResult`` beans it
trades in; docs/reference.md §2.5, §2.6, §9 (expiry) and §10.17; mechanisms.md "Topic auto-creation", "autoCreateTopicEnable".

State (the five Java maps, same names in snake_case):

* ``topic_queue_table``: topic → {brokerName → QueueData} (Java: a list per topic; the
  dict keeps the list's order);
* ``broker_addr_table``: brokerName → BrokerData {cluster, brokerName, brokerId → addr};
* ``cluster_addr_table``: clusterName → set of brokerNames;
* ``broker_live_table``: brokerAddr → BrokerLiveInfo {last update, dataVersion, channel,
  haServerAddr};
* ``filter_server_table``: brokerAddr → filter server addresses.

mechanisms.md "Topic auto-creation" ends on why ``autoCreateTopicEnable`` should be off in production: the broker
that auto-creates a topic from TBW102 re-registers at once, ``register_broker`` adds a
QueueData for that broker only, and every producer that fetches the route afterwards
sends to that one broker. The ``registerBroker`` trace event lists the topics whose
QueueData was created or changed, so a notebook can show the convergence.

What this module must not know: requests, bytes on the wire, timers. Time comes in as
``now_ms``; the controller closes channels that ``scan_not_active_broker`` expires.
Java iterates HashMaps; here every walk is sorted (topics, brokerNames, clusters,
addresses), so runs are reproducible. Two exceptions, computed from ``String#hashCode``
(so still reproducible): ``get_system_topic_list`` picks its ``brokerAddr`` by Java's
HashMap iteration order, as the order decides the value there; and the topic lists
(``get_all_topic_list``, ``get_topics_by_cluster``, the unit lists) come in the order of
Java's ``HashSet``, which is the order their reply bodies show.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqlab.common.java_hash_map import hash_map_order, java_long_hash
from mqlab.common.mix_all import MASTER_ID
from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import TopicSysFlag
from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.remoting.bodies import BrokerData, ClusterInfo, QueueData, TopicRouteData
from mqlab.remoting.fastjson import dumps
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.runtime.context import Channel

__all__ = [
    "BROKER_CHANNEL_EXPIRED_TIME",
    "BrokerLiveInfo",
    "RegisterBrokerResult",
    "RouteInfoManager",
    "TopicConfigSerializeWrapper",
    "encode_topic_list",
]


#: ``RouteInfoManager.BROKER_CHANNEL_EXPIRED_TIME``: 2 minutes without a registration.
BROKER_CHANNEL_EXPIRED_TIME = 1000 * 60 * 2


@dataclass(slots=True)
class TopicConfigSerializeWrapper:
    """A broker's topic table plus its version stamp (topics.json, docs/reference.md §7.4).

    Mirrors ``TopicConfigSerializeWrapper`` (common/protocol/body, RocketMQ 4.9.3).
    """

    topic_config_table: dict[str, TopicConfig] = field(default_factory=dict)
    data_version: DataVersion = field(default_factory=DataVersion)

    def to_json_dict(self) -> dict[str, Any]:
        """``{"dataVersion":{…},"topicConfigTable":{name: TopicConfig bean}}``, topics sorted."""
        table = self.topic_config_table
        return {
            "dataVersion": self.data_version.to_json_dict(),
            "topicConfigTable": {name: table[name].to_json_dict() for name in sorted(table)},
        }

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> TopicConfigSerializeWrapper:
        """Read the bean; a TopicConfig without ``topicName`` takes its map key."""
        table: dict[str, TopicConfig] = {}
        for name, tc in (d.get("topicConfigTable") or {}).items():
            tc = dict(tc)
            tc.setdefault("topicName", str(name))
            table[str(name)] = TopicConfig.from_json_dict(tc)
        return cls(table, DataVersion.from_json_dict(d.get("dataVersion") or {}))


@dataclass(slots=True)
class BrokerLiveInfo:
    """One registered broker address. Mirrors ``BrokerLiveInfo`` (RouteInfoManager.java)."""

    last_update_timestamp: int
    data_version: DataVersion
    channel: Channel | None
    ha_server_addr: str | None


@dataclass(frozen=True, slots=True)
class RegisterBrokerResult:
    """What a registration tells the broker: its master (slaves only) and the order-topic KVs.

    Mirrors ``RegisterBrokerResult`` (common/namesrv, RocketMQ 4.9.3).
    """

    ha_server_addr: str | None = None
    master_addr: str | None = None
    kv_table: dict[str, str] | None = None


def encode_topic_list(topics: Iterable[str], broker_addr: str | None = None) -> bytes:
    """``TopicList#encode``: ``{"brokerAddr":…,"topicList":[…]}`` (null left out, topics in
    the order given, each once: the callers give Java's ``HashSet`` order)."""
    d: dict[str, Any] = {}
    if broker_addr is not None:
        d["brokerAddr"] = broker_addr
    d["topicList"] = list(dict.fromkeys(topics))
    return dumps(d).encode("utf-8")


def _clone(bd: BrokerData) -> BrokerData:
    """A BrokerData with its own address map (``HashMap#clone`` in pickupTopicRouteData)."""
    addrs = bd.broker_addrs
    return BrokerData(
        cluster=bd.cluster,
        broker_name=bd.broker_name,
        broker_addrs={i: addrs[i] for i in sorted(addrs)},
    )


class RouteInfoManager:
    """The five routing tables and the operations on them.

    Mirrors ``RouteInfoManager`` (namesrv/routeinfo, RocketMQ 4.9.3). Java guards the maps
    with a read/write lock; a node here runs one event at a time, so no lock is needed.

    Args:
        tracer: a ``NodeTracer`` or None. Every mutating call emits one event whose
            component is ``RouteInfoManager.<javaMethod>``.
    """

    def __init__(self, tracer: Any = None) -> None:
        self.tracer = tracer
        self.topic_queue_table: dict[str, dict[str, QueueData]] = {}
        self.broker_addr_table: dict[str, BrokerData] = {}
        self.cluster_addr_table: dict[str, set[str]] = {}
        self.broker_live_table: dict[str, BrokerLiveInfo] = {}
        self.filter_server_table: dict[str, list[str]] = {}

    def _emit(self, method: str, step: str, **fields: Any) -> None:
        if self.tracer is not None and self.tracer.enabled:
            self.tracer.emit(f"RouteInfoManager.{method}", step, Kind.STEP, **fields)

    # -- registration ---------------------------------------------------------------------
    def register_broker(
        self,
        cluster_name: str,
        broker_addr: str,
        broker_name: str,
        broker_id: int,
        ha_server_addr: str | None,
        topic_config_wrapper: TopicConfigSerializeWrapper | None,
        filter_server_list: Iterable[str] | None,
        channel: Channel | None,
        now_ms: int,
    ) -> RegisterBrokerResult:
        """Record a broker (or refresh it) and, for a master, its topics' queues.

        Mirrors ``RouteInfoManager#registerBroker`` (namesrv/routeinfo, RocketMQ 4.9.3);
        docs/reference.md §10.17. A master (id 0) creates or replaces the QueueData of every topic
        it sends when this is its first registration or its DataVersion changed; a
        slave's topics are ignored. A slave learns its master's address and HA address.

        Returns:
            The slave's master and HA addresses (both None for a master or unknown master).
        """
        self.cluster_addr_table.setdefault(cluster_name, set()).add(broker_name)

        register_first = False
        broker_data = self.broker_addr_table.get(broker_name)
        if broker_data is None:
            register_first = True
            broker_data = BrokerData(cluster=cluster_name, broker_name=broker_name)
            self.broker_addr_table[broker_name] = broker_data
        addrs = broker_data.broker_addrs
        # Switch slave to master: the same ip:port keeps one record, so drop it under any
        # other brokerId before adding it under this one.
        for other_id in sorted(addrs):
            if addrs[other_id] == broker_addr and other_id != broker_id:
                del addrs[other_id]
        old_addr = addrs.get(broker_id)
        addrs[broker_id] = broker_addr
        register_first = register_first or old_addr is None

        data_version = DataVersion()
        new_topics: list[str] = []
        changed_topics: list[str] = []
        if topic_config_wrapper is not None:
            data_version.assign_new_one(topic_config_wrapper.data_version)
            if broker_id == MASTER_ID and (
                self.is_broker_topic_config_changed(broker_addr, data_version) or register_first
            ):
                table = topic_config_wrapper.topic_config_table
                for topic in sorted(table):
                    outcome = self._create_and_update_queue_data(broker_name, table[topic])
                    if outcome == "new":
                        new_topics.append(topic)
                    elif outcome == "changed":
                        changed_topics.append(topic)

        prev = self.broker_live_table.get(broker_addr)
        self.broker_live_table[broker_addr] = BrokerLiveInfo(
            now_ms, data_version, channel, ha_server_addr
        )

        if filter_server_list is not None:
            servers = list(filter_server_list)
            if servers:
                self.filter_server_table[broker_addr] = servers
            else:
                self.filter_server_table.pop(broker_addr, None)

        result = RegisterBrokerResult()
        if broker_id != MASTER_ID:
            master_addr = addrs.get(MASTER_ID)
            if master_addr is not None:
                master_live = self.broker_live_table.get(master_addr)
                if master_live is not None:
                    result = RegisterBrokerResult(master_live.ha_server_addr, master_addr)

        self._emit(
            "registerBroker", "register" if prev is None else "refresh",
            cluster=cluster_name, broker_name=broker_name, broker_id=broker_id,
            broker_addr=broker_addr, register_first=register_first,
            data_version=data_version.to_json_dict(), new_topics=new_topics,
            changed_topics=changed_topics, master_addr=result.master_addr,
        )  # fmt: skip
        return result

    def _create_and_update_queue_data(self, broker_name: str, topic_config: TopicConfig) -> str:
        """Put this broker's QueueData for one topic; "new", "changed" or "same".

        Mirrors ``RouteInfoManager#createAndUpdateQueueData`` (RocketMQ 4.9.3): an equal
        QueueData is kept, a different one replaced ("topic changed" in Java's log). Java
        removes the old one from the topic's list and appends the new one, so a changed
        QueueData moves to the end (``by_broker`` keeps Java's list order: the unit-topic
        lists read its first entry).
        """
        queue_data = QueueData(
            broker_name=broker_name,
            read_queue_nums=topic_config.read_queue_nums,
            write_queue_nums=topic_config.write_queue_nums,
            perm=topic_config.perm,
            topic_sys_flag=topic_config.topic_sys_flag,
        )
        by_broker = self.topic_queue_table.get(topic_config.topic_name)
        if by_broker is None:
            self.topic_queue_table[topic_config.topic_name] = {broker_name: queue_data}
            return "new"
        old = by_broker.get(broker_name)
        if old == queue_data:
            return "same"
        by_broker.pop(broker_name, None)  # it.remove(), then queueDataList.add(queueData)
        by_broker[broker_name] = queue_data
        return "new" if old is None else "changed"

    def is_broker_topic_config_changed(self, broker_addr: str, data_version: DataVersion) -> bool:
        """True unless the address is registered with an equal DataVersion.

        Mirrors ``RouteInfoManager#isBrokerTopicConfigChanged``.
        """
        prev = self.query_broker_topic_config(broker_addr)
        return prev is None or prev != data_version

    def query_broker_topic_config(self, broker_addr: str) -> DataVersion | None:
        """The DataVersion of the last registration. Mirrors ``#queryBrokerTopicConfig``."""
        live = self.broker_live_table.get(broker_addr)
        return None if live is None else live.data_version

    def update_broker_info_update_timestamp(self, broker_addr: str, now_ms: int) -> None:
        """Keep a broker alive without a full registration (QUERY_DATA_VERSION, unchanged).

        Mirrors ``RouteInfoManager#updateBrokerInfoUpdateTimestamp``.
        """
        live = self.broker_live_table.get(broker_addr)
        if live is not None:
            live.last_update_timestamp = now_ms

    def unregister_broker(
        self, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int
    ) -> None:
        """Forget one broker address; the last address of a brokerName takes its topics.

        Mirrors ``RouteInfoManager#unregisterBroker`` (RocketMQ 4.9.3).
        """
        live = self.broker_live_table.pop(broker_addr, None)
        self.filter_server_table.pop(broker_addr, None)
        remove_broker_name = False
        broker_data = self.broker_addr_table.get(broker_name)
        if broker_data is not None:
            broker_data.broker_addrs.pop(broker_id, None)
            if not broker_data.broker_addrs:
                del self.broker_addr_table[broker_name]
                remove_broker_name = True
        removed_topics: list[str] = []
        if remove_broker_name:
            name_set = self.cluster_addr_table.get(cluster_name)
            if name_set is not None:
                name_set.discard(broker_name)
                if not name_set:
                    del self.cluster_addr_table[cluster_name]
            removed_topics = self._remove_topic_by_broker_name(broker_name)
        self._emit(
            "unregisterBroker", "unregister", cluster=cluster_name, broker_name=broker_name,
            broker_id=broker_id, broker_addr=broker_addr, was_live=live is not None,
            removed_broker_name=remove_broker_name, removed_topics=removed_topics,
        )  # fmt: skip

    def _remove_topic_by_broker_name(self, broker_name: str) -> list[str]:
        """Drop a brokerName's QueueData everywhere; returns the topics left with none.

        Mirrors ``RouteInfoManager#removeTopicByBrokerName``.
        """
        emptied = []
        for topic in sorted(self.topic_queue_table):
            by_broker = self.topic_queue_table[topic]
            by_broker.pop(broker_name, None)
            if not by_broker:
                del self.topic_queue_table[topic]
                emptied.append(topic)
        return emptied

    def delete_topic(self, topic: str) -> None:
        """DELETE_TOPIC_IN_NAMESRV. Mirrors ``RouteInfoManager#deleteTopic``."""
        existed = self.topic_queue_table.pop(topic, None) is not None
        self._emit("deleteTopic", "delete", topic=topic, existed=existed)

    # -- routes ---------------------------------------------------------------------------
    def pickup_topic_route_data(self, topic: str) -> TopicRouteData | None:
        """The route of a topic, or None when it has no QueueData or no live BrokerData.

        Mirrors ``RouteInfoManager#pickupTopicRouteData`` (RocketMQ 4.9.3); docs/reference.md §2.5.
        QueueDatas and BrokerDatas are sorted by brokerName (Java: list and HashSet order);
        ``filterServerTable`` lists only addresses that have filter servers (fastjson
        leaves out Java's null entries anyway).
        """
        by_broker = self.topic_queue_table.get(topic)
        if not by_broker:
            return None
        broker_datas = []
        filter_server_map: dict[str, list[str]] = {}
        for broker_name in sorted(by_broker):
            broker_data = self.broker_addr_table.get(broker_name)
            if broker_data is None:
                continue
            clone = _clone(broker_data)
            broker_datas.append(clone)
            for addr in clone.broker_addrs.values():
                servers = self.filter_server_table.get(addr)
                if servers is not None:
                    filter_server_map[addr] = list(servers)
        if not broker_datas:
            return None
        return TopicRouteData(
            queue_datas=tuple(by_broker[name] for name in sorted(by_broker)),
            broker_datas=tuple(broker_datas),
            filter_server_table=filter_server_map,
        )

    def get_all_cluster_info(self) -> ClusterInfo:
        """Every BrokerData and cluster membership. Mirrors ``#getAllClusterInfo``; docs/reference.md §2.6."""
        return ClusterInfo(
            broker_addr_table={
                name: _clone(self.broker_addr_table[name])
                for name in sorted(self.broker_addr_table)
            },
            cluster_addr_table={
                c: tuple(sorted(self.cluster_addr_table[c]))
                for c in sorted(self.cluster_addr_table)
            },
        )

    def _topic_list_order(self, topics: Iterable[str]) -> list[str]:
        """``topics`` (in ``topicQueueTable`` insertion order) as a ``TopicList`` holds them.

        ``TopicList#topicList`` is a ``HashSet<String>`` (default capacity 16) filled while
        iterating ``topicQueueTable``, a ``HashMap(1024)``; fastjson writes the set in its
        iteration order. So: the table's order, then the set's.
        """
        return hash_map_order(hash_map_order(topics, initial_capacity=1024))

    def get_all_topic_list(self) -> list[str]:
        """Every topic with at least one QueueData, in Java's ``HashSet`` order.

        Mirrors ``RouteInfoManager#getAllTopicList`` (see :meth:`_topic_list_order`).
        """
        return self._topic_list_order(self.topic_queue_table)

    def get_topics_by_cluster(self, cluster: str) -> list[str]:
        """Topics served by any broker of ``cluster``, sorted; [] for an unknown cluster.

        Mirrors ``RouteInfoManager#getTopicsByCluster`` (Java's NPE on an unknown cluster
        is caught and logged, so the reply is an empty list there too).
        """
        names = self.cluster_addr_table.get(cluster, set())
        return self._topic_list_order(
            t for t, by_broker in self.topic_queue_table.items() if names & by_broker.keys()
        )

    def get_system_topic_list(self) -> tuple[list[str], str | None]:
        """GET_SYSTEM_TOPIC_LIST_FROM_NS: every cluster name and brokerName, plus one address.

        Mirrors ``RouteInfoManager#getSystemTopicList`` (RocketMQ 4.9.3): the "topics" are
        the keys and the brokerNames of ``clusterAddrTable``; ``brokerAddr`` is the first
        address of the first BrokerData that has one, in Java's HashMap iteration order
        (``brokerAddrTable`` is a ``HashMap(128)``, ``brokerAddrs`` a ``HashMap<Long,…>``),
        so not necessarily the first brokerName alphabetically, nor always the master.

        The names come in the order fastjson writes ``TopicList#topicList``, a
        ``HashSet<String>``: filled while iterating ``clusterAddrTable`` (a ``HashMap(32)``),
        each cluster name then its brokerNames (a ``HashSet``), then iterated in the set's
        own hash order (found by the conformance row ``fake-broker/system_topics``).

        Returns:
            (names in Java's order, brokerAddr or None when no broker is registered).
        """
        inserted: list[str] = []
        for cluster in hash_map_order(self.cluster_addr_table, initial_capacity=32):
            inserted.append(cluster)
            inserted += hash_map_order(self.cluster_addr_table[cluster])
        topics = hash_map_order(dict.fromkeys(inserted))
        broker_addr = None
        for name in hash_map_order(self.broker_addr_table, initial_capacity=128):
            addrs = self.broker_addr_table[name].broker_addrs
            if addrs:
                broker_addr = addrs[hash_map_order(addrs, hash_code=java_long_hash)[0]]
                break
        return topics, broker_addr

    def _topics_with_first_sys_flag(self, test: Callable[[int], bool]) -> list[str]:
        """Topics whose first QueueData's ``topicSysFlag`` passes ``test``, in Java's order.

        Java looks at ``queueDatas.get(0)`` only: the QueueData registered first (or
        changed last by ``createAndUpdateQueueData``), not every broker's.
        """
        return self._topic_list_order(
            topic
            for topic, by_broker in self.topic_queue_table.items()
            if by_broker and test(next(iter(by_broker.values())).topic_sys_flag)
        )

    def get_unit_topics(self) -> list[str]:
        """GET_UNIT_TOPIC_LIST: topics with FLAG_UNIT. Mirrors ``#getUnitTopics``."""
        return self._topics_with_first_sys_flag(TopicSysFlag.has_unit_flag)

    def get_has_unit_sub_topic_list(self) -> list[str]:
        """GET_HAS_UNIT_SUB_TOPIC_LIST: topics with FLAG_UNIT_SUB.

        Mirrors ``RouteInfoManager#getHasUnitSubTopicList``.
        """
        return self._topics_with_first_sys_flag(TopicSysFlag.has_unit_sub_flag)

    def get_has_unit_sub_un_unit_topic_list(self) -> list[str]:
        """GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: FLAG_UNIT_SUB without FLAG_UNIT.

        Mirrors ``RouteInfoManager#getHasUnitSubUnUnitTopicList``.
        """
        return self._topics_with_first_sys_flag(
            lambda f: not TopicSysFlag.has_unit_flag(f) and TopicSysFlag.has_unit_sub_flag(f)
        )

    # -- write permission -----------------------------------------------------------------
    def wipe_write_perm_of_broker_by_lock(self, broker_name: str) -> int:
        """Clear PERM_WRITE on every QueueData of a broker (6 → 4); returns the count.

        Mirrors ``RouteInfoManager#wipeWritePermOfBrokerByLock`` (RocketMQ 4.9.3); docs/reference.md §11
        (``RouteInfoManagerTest``: perm 4 afterwards).
        """
        count = self._operate_write_perm_of_broker(broker_name, wipe=True)
        self._emit("wipeWritePermOfBroker", "wipe", broker_name=broker_name, topic_count=count)
        return count

    def add_write_perm_of_broker_by_lock(self, broker_name: str) -> int:
        """Set every QueueData of a broker to PERM_READ | PERM_WRITE (6); returns the count.

        Mirrors ``RouteInfoManager#addWritePermOfBrokerByLock`` (RocketMQ 4.9.3): the perm
        becomes exactly 6, whatever other bits it had.
        """
        count = self._operate_write_perm_of_broker(broker_name, wipe=False)
        self._emit("addWritePermOfBroker", "add", broker_name=broker_name, topic_count=count)
        return count

    def _operate_write_perm_of_broker(self, broker_name: str, *, wipe: bool) -> int:
        """Mirrors ``RouteInfoManager#operateWritePermOfBroker``."""
        count = 0
        for topic in sorted(self.topic_queue_table):
            by_broker = self.topic_queue_table[topic]
            qd = by_broker.get(broker_name)
            if qd is None:
                continue
            perm = (
                qd.perm & ~PermName.PERM_WRITE if wipe else PermName.PERM_READ | PermName.PERM_WRITE
            )
            by_broker[broker_name] = dataclasses.replace(qd, perm=perm)
            count += 1
        return count

    # -- liveness -------------------------------------------------------------------------
    def scan_not_active_broker(self, now_ms: int) -> list[tuple[str, Channel | None]]:
        """Remove brokers whose last registration is more than 120 s old.

        Mirrors ``RouteInfoManager#scanNotActiveBroker`` (RocketMQ 4.9.3); docs/reference.md §9. The
        test is strict: expired when ``last_update_timestamp + 120000 < now_ms``.

        Returns:
            ``(brokerAddr, channel)`` of each expired broker; the caller closes the
            channels (Java's ``RemotingUtil.closeChannel``).
        """
        expired = []
        for addr in sorted(self.broker_live_table):
            live = self.broker_live_table[addr]
            if live.last_update_timestamp + BROKER_CHANNEL_EXPIRED_TIME < now_ms:
                del self.broker_live_table[addr]
                expired.append((addr, live.channel))
                self._emit(
                    "scanNotActiveBroker", "expired", broker_addr=addr,
                    last_update_timestamp=live.last_update_timestamp,
                    expired_time=BROKER_CHANNEL_EXPIRED_TIME,
                )  # fmt: skip
                self.on_channel_destroy(addr, live.channel)
        return expired

    def on_channel_destroy(self, remote_addr: str, channel: Channel | None) -> str | None:
        """Clean up after a closed or expired broker connection.

        Mirrors ``RouteInfoManager#onChannelDestroy`` (RocketMQ 4.9.3): find the broker
        address whose live entry holds ``channel`` (else use ``remote_addr``), then remove
        it from every table; the last address of a brokerName takes the brokerName, its
        cluster membership and its QueueData with it.

        Returns:
            The broker address that was cleaned up, or None if nothing referred to it.
        """
        broker_addr_found = None
        if channel is not None:
            for addr in sorted(self.broker_live_table):
                if self.broker_live_table[addr].channel == channel:
                    broker_addr_found = addr
                    break
        if broker_addr_found is None:
            broker_addr_found = remote_addr
        if not broker_addr_found:
            return None

        was_live = self.broker_live_table.pop(broker_addr_found, None) is not None
        self.filter_server_table.pop(broker_addr_found, None)
        broker_name_found = None
        remove_broker_name = False
        for name in sorted(self.broker_addr_table):
            if broker_name_found is not None:
                break
            addrs = self.broker_addr_table[name].broker_addrs
            for broker_id in sorted(addrs):
                if addrs[broker_id] == broker_addr_found:
                    broker_name_found = name
                    del addrs[broker_id]
                    break
            if not addrs:
                remove_broker_name = True
                del self.broker_addr_table[name]

        if broker_name_found is not None and remove_broker_name:
            for cluster in sorted(self.cluster_addr_table):
                names = self.cluster_addr_table[cluster]
                if broker_name_found in names:
                    names.discard(broker_name_found)
                    if not names:
                        del self.cluster_addr_table[cluster]
                    break

        removed_topics: list[str] = []
        if remove_broker_name and broker_name_found is not None:
            removed_topics = self._remove_topic_by_broker_name(broker_name_found)

        if not was_live and broker_name_found is None:
            return None  # an ordinary client connection closed: nothing to clean
        self._emit(
            "onChannelDestroy", "destroy", broker_addr=broker_addr_found,
            broker_name=broker_name_found, removed_broker_name=remove_broker_name,
            removed_topics=removed_topics,
        )  # fmt: skip
        return broker_addr_found

    # -- views ----------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The five tables as plain, sorted dicts (for the Lab and for tests)."""
        return {
            "topic_queue_table": {
                topic: [
                    self.topic_queue_table[topic][n].to_json_dict()
                    for n in sorted(self.topic_queue_table[topic])
                ]
                for topic in sorted(self.topic_queue_table)
            },
            "broker_addr_table": {
                name: _clone(self.broker_addr_table[name]).to_json_dict()
                for name in sorted(self.broker_addr_table)
            },
            "cluster_addr_table": {
                c: sorted(self.cluster_addr_table[c]) for c in sorted(self.cluster_addr_table)
            },
            "broker_live_table": {
                addr: {
                    "last_update_timestamp": live.last_update_timestamp,
                    "data_version": live.data_version.to_json_dict(),
                    "ha_server_addr": live.ha_server_addr,
                    "channel": None if live.channel is None else repr(live.channel),
                }
                for addr, live in sorted(self.broker_live_table.items())
            },
            "filter_server_table": {
                addr: list(servers) for addr, servers in sorted(self.filter_server_table.items())
            },
        }
