"""Queue allocation strategies: which consumer of a group pulls which message queue.

Mirrors ``AllocateMessageQueueStrategy`` and its implementations in
``client/consumer/rebalance`` plus ``ConsistentHashRouter`` / ``VirtualNode`` from
``common/consistenthash`` (RocketMQ 4.9.3); mechanisms.md "Rebalancing" "AllocateMessageQueueStrategy";
docs/reference.md §10.10 and the §11 "Allocation" vectors.

What this module owns: the pure functions from (group, current client id, all queues, all
client ids) to the current client's share. Each consumer runs the same strategy on the same
inputs and so, without talking to the others, picks a disjoint share.

What it must not know: where the lists come from (route data, GET_CONSUMER_LIST_BY_GROUP),
process queues, pulls, time or randomness.

Callers pass *sorted* lists, as ``RebalanceImpl#rebalanceByTopic`` does
(``Collections.sort(mqAll); Collections.sort(cidAll)``): a consumer's position in ``cid_all``
is its identity, so unsorted input gives each consumer a different view and overlapping or
missing queues. The strategies never sort on their own (neither does Java);
:func:`allocate_all` sorts and is what the lab uses to show a whole group's allocation.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from mqlab.common.message import MessageQueue

__all__ = [
    "STRATEGIES_BY_NAME",
    "AllocateMachineRoomNearby",
    "AllocateMessageQueueAveragely",
    "AllocateMessageQueueAveragelyByCircle",
    "AllocateMessageQueueByConfig",
    "AllocateMessageQueueByMachineRoom",
    "AllocateMessageQueueConsistentHash",
    "AllocateMessageQueueStrategy",
    "ConsistentHashRouter",
    "MachineRoomResolver",
    "allocate_all",
    "md5_hash",
]


def _check_args(
    current_cid: str | None,
    mq_all: Sequence[MessageQueue] | None,
    cid_all: Sequence[str] | None,
    *,
    blank: bool = False,
) -> None:
    """The argument checks every strategy but ByConfig starts with.

    Mirrors the guard clauses of ``AllocateMessageQueueAveragely#allocate`` (client/consumer/
    rebalance, RocketMQ 4.9.3); docs/reference.md §10.10 "Common". Java throws IllegalArgumentException;
    we raise ValueError with Java's message. ``blank=True`` is ``StringUtils.isBlank`` (used
    only by ByMachineRoom); the others only reject null or "".
    """
    if current_cid is None or (current_cid.strip() if blank else current_cid) == "":
        raise ValueError(f"currentCID is empty: current_cid={current_cid!r}")
    if not mq_all:
        raise ValueError(f"mqAll is null or mqAll empty: mq_all={mq_all!r}")
    if not cid_all:
        raise ValueError(f"cidAll is null or cidAll empty: cid_all={cid_all!r}")


class AllocateMessageQueueStrategy(ABC):
    """The strategy interface of a consumer group's rebalance.

    Mirrors ``AllocateMessageQueueStrategy`` (client/consumer, RocketMQ 4.9.3).
    """

    __slots__ = ()

    @abstractmethod
    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """The queues ``current_cid`` should pull, given sorted ``mq_all`` and ``cid_all``."""

    @abstractmethod
    def get_name(self) -> str:
        """The strategy name reported in consumer running info, e.g. ``"AVG"``."""


@dataclass(frozen=True, slots=True)
class AllocateMessageQueueAveragely(AllocateMessageQueueStrategy):
    """Contiguous blocks; the first ``len(mq_all) % len(cid_all)`` consumers get one extra.

    The default strategy of ``DefaultMQPushConsumer`` (docs/reference.md §9).
    """

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Allocate one contiguous block of queues to ``current_cid``.

        Mirrors AllocateMessageQueueAveragely#allocate (client/consumer/rebalance, RocketMQ
        4.9.3); mechanisms.md "Rebalancing" "AllocateMessageQueueAveragely" span 7–37; docs/reference.md §10.10.

        Args:
            consumer_group: only used in Java's "[BUG] not in cidAll" log line.
            current_cid: this consumer's client id.
            mq_all: all queues of the topic, sorted.
            cid_all: all client ids of the group, sorted.

        Returns:
            This consumer's queues; ``[]`` when ``current_cid`` is not in ``cid_all``.

        Raises:
            ValueError: ``current_cid`` empty, ``mq_all`` or ``cid_all`` empty or None.
        """
        # mechanisms.md "Rebalancing" span 7-16: argument checks
        _check_args(current_cid, mq_all, cid_all)
        # mechanisms.md "Rebalancing" span 18-25: a client id the broker does not list gets nothing
        if current_cid not in cid_all:
            return []
        # mechanisms.md "Rebalancing" span 27-36: index, remainder, block size and start
        index = list(cid_all).index(current_cid)
        n, m = len(mq_all), len(cid_all)
        mod = n % m
        if n <= m:
            average_size = 1
        elif mod > 0 and index < mod:
            average_size = n // m + 1
        else:
            average_size = n // m
        start_index = (
            index * average_size if (mod > 0 and index < mod) else index * average_size + mod
        )
        range_ = min(average_size, n - start_index)
        return [mq_all[(start_index + i) % n] for i in range(range_)]

    def get_name(self) -> str:
        return "AVG"


@dataclass(frozen=True, slots=True)
class AllocateMessageQueueAveragelyByCircle(AllocateMessageQueueStrategy):
    """Deal the queues round-robin: queue ``i`` goes to consumer ``i % len(cid_all)``."""

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Allocate every ``len(cid_all)``-th queue, starting at this consumer's index.

        Mirrors AllocateMessageQueueAveragelyByCircle#allocate (client/consumer/rebalance,
        RocketMQ 4.9.3); mechanisms.md "Rebalancing" "AllocateMessageQueueAveragelyByCircle" span 7–33;
        docs/reference.md §10.10.

        Raises:
            ValueError: ``current_cid`` empty, ``mq_all`` or ``cid_all`` empty or None.
        """
        _check_args(current_cid, mq_all, cid_all)
        if current_cid not in cid_all:
            return []
        # mechanisms.md "Rebalancing" span 28-33: ring allocation
        index = list(cid_all).index(current_cid)
        m = len(cid_all)
        return [mq_all[i] for i in range(index, len(mq_all)) if i % m == index]

    def get_name(self) -> str:
        return "AVG_BY_CIRCLE"


@dataclass(frozen=True, slots=True, init=False)
class AllocateMessageQueueByConfig(AllocateMessageQueueStrategy):
    """Always the configured queues, whatever the group looks like.

    Args:
        message_queue_list: the queues this consumer should pull (Java's
            ``setMessageQueueList``); kept as a tuple.
    """

    message_queue_list: tuple[MessageQueue, ...]

    def __init__(self, message_queue_list: Iterable[MessageQueue]) -> None:
        mqs = tuple(message_queue_list)
        for mq in mqs:
            if not isinstance(mq, MessageQueue):
                raise TypeError(f"message_queue_list items must be MessageQueue, got {mq!r}")
        object.__setattr__(self, "message_queue_list", mqs)

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return the configured list, with no argument checks at all (as in Java).

        Mirrors AllocateMessageQueueByConfig#allocate (client/consumer/rebalance, RocketMQ
        4.9.3); mechanisms.md "Rebalancing" "AllocateMessageQueueByConfig"; docs/reference.md §10.10.
        """
        return list(self.message_queue_list)

    def get_name(self) -> str:
        return "CONFIG"


@dataclass(frozen=True, slots=True, init=False)
class AllocateMessageQueueByMachineRoom(AllocateMessageQueueStrategy):
    """Share the queues of brokers named ``"<idc>@<name>"`` with ``idc`` in ``consumeridcs``.

    Args:
        consumeridcs: the machine rooms (IDCs) whose brokers this group consumes from.
    """

    consumeridcs: frozenset[str]

    def __init__(self, consumeridcs: Iterable[str]) -> None:
        if isinstance(consumeridcs, str):
            raise TypeError(f"consumeridcs must be a collection of str, got {consumeridcs!r}")
        object.__setattr__(self, "consumeridcs", frozenset(consumeridcs))

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Split the eligible queues into equal blocks, then deal the remainder one each.

        Mirrors AllocateMessageQueueByMachineRoom#allocate (client/consumer/rebalance,
        RocketMQ 4.9.3); mechanisms.md "Rebalancing" "AllocateMessageQueueByMachineRoom" span 10–35; docs/reference.md §10.10.
        The seed's older copy indexes ``mqAll`` in the block loop; 4.9.3 indexes ``premqAll``,
        which is what we do. Unlike Averagely, the remainder goes to the *first* consumers as
        queues taken from the *end* of the list.

        Raises:
            ValueError: ``current_cid`` blank (``StringUtils.isBlank``), ``mq_all`` or
                ``cid_all`` empty or None.
        """
        _check_args(current_cid, mq_all, cid_all, blank=True)
        if current_cid not in cid_all:
            return []
        current_index = list(cid_all).index(current_cid)
        # mechanisms.md "Rebalancing" span 17-23: keep queues whose broker name is "<idc>@<name>", idc wanted
        premq_all = []
        for mq in mq_all:
            temp = _java_split(mq.broker_name, "@")
            if len(temp) == 2 and temp[0] in self.consumeridcs:
                premq_all.append(mq)
        # mechanisms.md "Rebalancing" span 25-34: equal blocks, then the remainder
        m = len(cid_all)
        mod, rem = divmod(len(premq_all), m)
        start_index = mod * current_index
        result = premq_all[start_index : start_index + mod]
        if rem > current_index:
            result.append(premq_all[current_index + mod * m])
        return result

    def get_name(self) -> str:
        return "MACHINE_ROOM"


def _java_split(s: str, sep: str) -> list[str]:
    """``String#split`` with a literal one-char separator: trailing empty strings dropped."""
    if sep not in s:
        return [s]
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# -- consistent hashing (common/consistenthash) ----------------------------------------------


def md5_hash(key: str) -> int:
    """The default ring hash: the first 4 bytes of MD5(key) as an unsigned big-endian int.

    Mirrors ConsistentHashRouter.MD5Hash#hash (common/consistenthash, RocketMQ 4.9.3); docs/reference.md
    §10.10 and §11 (``md5_hash("CID-0-0") == 1900518137``). Java's ``key.getBytes()`` uses the
    platform charset; we use UTF-8, the Linux default.
    """
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest()[:4], "big")


@dataclass(slots=True, init=False)
class ConsistentHashRouter:
    """A hash ring of virtual nodes ``"<key>-<i>"``; a key routes to the next node clockwise.

    Mirrors ConsistentHashRouter and VirtualNode (common/consistenthash, RocketMQ 4.9.3); the
    physical nodes are client-id strings (``ClientNode#getKey``). As with Java's
    ``TreeMap.put``, a virtual node whose hash collides with an existing one replaces it.

    Args:
        p_nodes: physical node keys, added in this order.
        v_node_count: virtual nodes per physical node (≥ 0).
        hash_function: ``str -> int``; defaults to :func:`md5_hash`.
    """

    hash_function: Callable[[str], int]
    ring: dict[int, tuple[str, int]]  # hash -> (physical node key, replica index)
    _sorted_hashes: list[int] = field(repr=False)

    def __init__(
        self,
        p_nodes: Iterable[str],
        v_node_count: int,
        hash_function: Callable[[str], int] | None = None,
    ) -> None:
        self.hash_function = md5_hash if hash_function is None else hash_function
        self.ring = {}
        self._sorted_hashes = []
        for p_node in p_nodes:
            self.add_node(p_node, v_node_count)

    def add_node(self, p_node: str, v_node_count: int) -> None:
        """Add ``v_node_count`` more virtual nodes of ``p_node`` (numbered after existing ones).

        Mirrors ConsistentHashRouter#addNode (common/consistenthash, RocketMQ 4.9.3).

        Raises:
            ValueError: ``v_node_count`` < 0 ("illegal virtual node counts").
        """
        if v_node_count < 0:
            raise ValueError(f"illegal virtual node counts :{v_node_count}")
        existing_replicas = self.get_existing_replicas(p_node)
        for i in range(v_node_count):
            replica = i + existing_replicas
            self.ring[self.hash_function(f"{p_node}-{replica}")] = (p_node, replica)
        self._sorted_hashes = sorted(self.ring)

    def remove_node(self, p_node: str) -> None:
        """Remove every virtual node of ``p_node``. Mirrors ConsistentHashRouter#removeNode."""
        self.ring = {h: v for h, v in self.ring.items() if v[0] != p_node}
        self._sorted_hashes = sorted(self.ring)

    def get_existing_replicas(self, p_node: str) -> int:
        """How many virtual nodes of ``p_node`` are on the ring."""
        return sum(1 for key, _ in self.ring.values() if key == p_node)

    def route_node(self, object_key: str) -> str | None:
        """The physical node of the first virtual node with hash ≥ hash(key), wrapping.

        Mirrors ConsistentHashRouter#routeNode (``ring.tailMap(hash).firstKey()`` or
        ``ring.firstKey()``); ``None`` on an empty ring.
        """
        if not self._sorted_hashes:
            return None
        i = bisect_left(self._sorted_hashes, self.hash_function(object_key))
        node_hash = (
            self._sorted_hashes[i] if i < len(self._sorted_hashes) else self._sorted_hashes[0]
        )
        return self.ring[node_hash][0]


@dataclass(frozen=True, slots=True)
class AllocateMessageQueueConsistentHash(AllocateMessageQueueStrategy):
    """Place consumers on a hash ring; each queue goes to the next consumer clockwise.

    Adding or removing a consumer moves only the queues next to its virtual nodes, so a
    rebalance disturbs few process queues (docs/reference.md §11 stability properties).

    Args:
        virtual_node_cnt: virtual nodes per consumer (default 10, must be ≥ 0).
        custom_hash_function: ``str -> int`` replacing :func:`md5_hash`.
    """

    virtual_node_cnt: int = 10
    custom_hash_function: Callable[[str], int] | None = None

    def __post_init__(self) -> None:
        if self.virtual_node_cnt < 0:
            raise ValueError(f"illegal virtualNodeCnt :{self.virtual_node_cnt}")

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """The queues whose ``str(mq)`` routes to ``current_cid`` on the ring of ``cid_all``.

        Mirrors AllocateMessageQueueConsistentHash#allocate (client/consumer/rebalance,
        RocketMQ 4.9.3); docs/reference.md §10.10. The ring is built in ``cid_all`` order (it matters only
        when two virtual nodes collide).

        Raises:
            ValueError: ``current_cid`` empty, ``mq_all`` or ``cid_all`` empty or None.
        """
        _check_args(current_cid, mq_all, cid_all)
        if current_cid not in cid_all:
            return []
        router = ConsistentHashRouter(cid_all, self.virtual_node_cnt, self.custom_hash_function)
        return [mq for mq in mq_all if router.route_node(str(mq)) == current_cid]

    def get_name(self) -> str:
        return "CONSISTENT_HASH"


# -- machine room nearby ----------------------------------------------------------------------


class MachineRoomResolver(Protocol):
    """Tells which machine room a queue's broker and a consumer are deployed in.

    Mirrors AllocateMachineRoomNearby.MachineRoomResolver (client/consumer/rebalance,
    RocketMQ 4.9.3). Results must be non-empty strings.
    """

    def broker_deploy_in(self, message_queue: MessageQueue) -> str: ...

    def consumer_deploy_in(self, client_id: str) -> str: ...


@dataclass(frozen=True, slots=True)
class AllocateMachineRoomNearby(AllocateMessageQueueStrategy):
    """Prefer queues in the consumer's own machine room; share orphaned rooms with everyone.

    Args:
        allocate_message_queue_strategy: the inner strategy used inside each room.
        machine_room_resolver: maps queues and client ids to machine rooms.
    """

    allocate_message_queue_strategy: AllocateMessageQueueStrategy
    machine_room_resolver: MachineRoomResolver

    def __post_init__(self) -> None:
        # Java's constructor throws NullPointerException for either argument being null.
        if self.allocate_message_queue_strategy is None:
            raise TypeError("allocate_message_queue_strategy is None")
        if self.machine_room_resolver is None:
            raise TypeError("machine_room_resolver is None")

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Same-room queues among same-room consumers, then consumer-less rooms among all.

        Mirrors AllocateMachineRoomNearby#allocate (client/consumer/rebalance, RocketMQ
        4.9.3); docs/reference.md §10.10. Rooms are visited in sorted order (Java's TreeMap).

        Raises:
            ValueError: the common checks, or a resolver returning an empty room.
        """
        _check_args(current_cid, mq_all, cid_all)
        if current_cid not in cid_all:
            return []
        resolver = self.machine_room_resolver
        inner = self.allocate_message_queue_strategy
        # group mq by machine room
        mr2mq: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = resolver.broker_deploy_in(mq)
            if not room:
                raise ValueError(f"Machine room is null for mq {mq}")
            mr2mq.setdefault(room, []).append(mq)
        # group consumer by machine room
        mr2c: dict[str, list[str]] = {}
        for cid in cid_all:
            room = resolver.consumer_deploy_in(cid)
            if not room:
                raise ValueError(f"Machine room is null for consumer id {cid}")
            mr2c.setdefault(room, []).append(cid)

        results: list[MessageQueue] = []
        # 1. the queues in the current consumer's room, among the consumers of that room
        current_room = resolver.consumer_deploy_in(current_cid)
        mq_in_this_room = mr2mq.pop(current_room, None)
        if mq_in_this_room:
            results.extend(
                inner.allocate(consumer_group, current_cid, mq_in_this_room, mr2c[current_room])
            )
        # 2. rooms with no live consumer: every consumer shares their queues
        for room in sorted(mr2mq):
            if room not in mr2c:
                results.extend(inner.allocate(consumer_group, current_cid, mr2mq[room], cid_all))
        return results

    def get_name(self) -> str:
        return "MACHINE_ROOM_NEARBY-" + self.allocate_message_queue_strategy.get_name()


STRATEGIES_BY_NAME: Mapping[str, type[AllocateMessageQueueStrategy]] = MappingProxyType(
    {
        "AVG": AllocateMessageQueueAveragely,
        "AVG_BY_CIRCLE": AllocateMessageQueueAveragelyByCircle,
        "CONFIG": AllocateMessageQueueByConfig,
        "MACHINE_ROOM": AllocateMessageQueueByMachineRoom,
        "CONSISTENT_HASH": AllocateMessageQueueConsistentHash,
    }
)
"""Strategy classes by ``get_name()``. ``AllocateMachineRoomNearby`` is absent: its name,
``"MACHINE_ROOM_NEARBY-<inner>"``, depends on the strategy it wraps."""


def allocate_all(
    strategy: AllocateMessageQueueStrategy,
    consumer_group: str,
    mq_all: Iterable[MessageQueue],
    cid_all: Iterable[str],
) -> dict[str, list[MessageQueue]]:
    """Every consumer's share, computed the way each consumer computes its own.

    Deduplicates and sorts both inputs, as ``RebalanceImpl#rebalanceByTopic`` does (a set of
    queues and the broker's client ids, ``Collections.sort`` on both; docs/reference.md §10.11), then calls
    ``strategy.allocate`` once per client id. mqlab-only: the lab uses it to draw a group.

    Returns:
        ``{cid: queues}`` with keys in sorted client-id order.
    """
    mqs = sorted(set(mq_all))
    cids = sorted(set(cid_all))
    return {cid: strategy.allocate(consumer_group, cid, mqs, cids) for cid in cids}
