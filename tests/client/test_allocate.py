"""Tests for mqlab.client.allocate (AllocateMessageQueue*Test, AllocateMachineRoomNearByTest).

Vectors from docs/reference.md §11 "Allocation"; behaviour from docs/reference.md §10.10 and mechanisms.md "Rebalancing".
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlab.client.allocate import (
    STRATEGIES_BY_NAME,
    AllocateMachineRoomNearby,
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
    AllocateMessageQueueStrategy,
    ConsistentHashRouter,
    allocate_all,
    md5_hash,
)
from mqlab.common.message import MessageQueue

TOPIC = "topic_test"
GROUP = "testConsumerGroup"


def mqs(n: int, broker: str = "brokerName") -> list[MessageQueue]:
    return [MessageQueue(TOPIC, broker, i) for i in range(n)]


def cids(n: int) -> list[str]:
    return [f"CID-{i}" for i in range(n)]


def queue_ids(strategy: AllocateMessageQueueStrategy, nq: int, nc: int) -> list[list[int]]:
    """Each consumer's queue ids, consumers in cid order."""
    result = allocate_all(strategy, GROUP, mqs(nq), cids(nc))
    return [[mq.queue_id for mq in result[c]] for c in cids(nc)]


def owners(strategy: AllocateMessageQueueStrategy, mq_all, cid_all) -> dict[MessageQueue, str]:
    """Queue -> owning cid; asserts no queue has two owners."""
    owner: dict[MessageQueue, str] = {}
    for cid, got in allocate_all(strategy, GROUP, mq_all, cid_all).items():
        for mq in got:
            assert mq not in owner, f"{mq} allocated twice"
            owner[mq] = cid
    return owner


class SplitResolver:
    """AllocateMachineRoomNearByTest's resolver: the room is the text before the first "-"."""

    def broker_deploy_in(self, message_queue: MessageQueue) -> str:
        return message_queue.broker_name.split("-")[0]

    def consumer_deploy_in(self, client_id: str) -> str:
        return client_id.split("-")[0]


# -- common argument checks ---------------------------------------------------------------------

ALL_CHECKED = (
    AllocateMessageQueueAveragely(),
    AllocateMessageQueueAveragelyByCircle(),
    AllocateMessageQueueByMachineRoom({"IDC1"}),
    AllocateMessageQueueConsistentHash(),
    AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), SplitResolver()),
)


@pytest.mark.parametrize("strategy", ALL_CHECKED, ids=lambda s: type(s).__name__)
def test_current_cid_illegal_argument(strategy):
    """Empty currentCID raises (Java IllegalArgumentException "currentCID is empty"); docs/reference.md §10.10."""
    with pytest.raises(ValueError, match="currentCID is empty"):
        strategy.allocate(GROUP, "", mqs(6), cids(2))
    with pytest.raises(ValueError, match="currentCID is empty"):
        strategy.allocate(GROUP, None, mqs(6), cids(2))


@pytest.mark.parametrize("strategy", ALL_CHECKED, ids=lambda s: type(s).__name__)
def test_message_queue_illegal_argument(strategy):
    """Null or empty mqAll raises "mqAll is null or mqAll empty"; docs/reference.md §10.10."""
    for bad in (None, []):
        with pytest.raises(ValueError, match="mqAll is null or mqAll empty"):
            strategy.allocate(GROUP, "CID-0", bad, cids(2))


@pytest.mark.parametrize("strategy", ALL_CHECKED, ids=lambda s: type(s).__name__)
def test_consumer_id_illegal_argument(strategy):
    """Null or empty cidAll raises "cidAll is null or cidAll empty"; docs/reference.md §10.10."""
    for bad in (None, []):
        with pytest.raises(ValueError, match="cidAll is null or cidAll empty"):
            strategy.allocate(GROUP, "CID-0", mqs(6), bad)


@pytest.mark.parametrize("strategy", ALL_CHECKED, ids=lambda s: type(s).__name__)
def test_current_cid_not_exists(strategy):
    """A currentCID missing from cidAll gets [] (testCurrentCIDNotExists, "2147483647"); docs/reference.md §10.10."""
    assert strategy.allocate(GROUP, str(2**31 - 1), mqs(6), cids(2)) == []


def test_blank_cid_only_rejected_by_machine_room():
    """Only ByMachineRoom uses StringUtils.isBlank; the others accept "  " and return [] (4.9.3 source)."""
    assert AllocateMessageQueueAveragely().allocate(GROUP, "  ", mqs(4), cids(2)) == []
    with pytest.raises(ValueError, match="currentCID is empty"):
        AllocateMessageQueueByMachineRoom({"IDC1"}).allocate(GROUP, "  ", mqs(4), cids(2))


def test_names_and_registry():
    """getName values; STRATEGIES_BY_NAME maps Java's names to the classes, read-only; docs/reference.md §10.10."""
    instances = {
        "AVG": AllocateMessageQueueAveragely(),
        "AVG_BY_CIRCLE": AllocateMessageQueueAveragelyByCircle(),
        "CONFIG": AllocateMessageQueueByConfig([]),
        "MACHINE_ROOM": AllocateMessageQueueByMachineRoom(set()),
        "CONSISTENT_HASH": AllocateMessageQueueConsistentHash(),
    }
    assert sorted(STRATEGIES_BY_NAME) == sorted(instances)
    for name, strategy in instances.items():
        assert strategy.get_name() == name
        assert type(strategy) is STRATEGIES_BY_NAME[name]
    with pytest.raises(TypeError):
        STRATEGIES_BY_NAME["AVG"] = AllocateMessageQueueAveragely  # type: ignore[index]


# -- averagely ------------------------------------------------------------------------------------


def test_allocate_averagely_10q_4c_sizes():
    """10 queues / 4 consumers → block sizes [3, 3, 2, 2] (AllocateMessageQueueAveragelyTest); docs/reference.md §11."""
    assert [len(x) for x in queue_ids(AllocateMessageQueueAveragely(), 10, 4)] == [3, 3, 2, 2]
    assert queue_ids(AllocateMessageQueueAveragely(), 10, 4) == [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7],
        [8, 9],
    ]


@pytest.mark.parametrize(
    ("nq", "nc", "expected"),
    [
        (4, 3, [[0, 1], [2], [3]]),
        (3, 5, [[0], [1], [2], [], []]),
        (8, 3, [[0, 1, 2], [3, 4, 5], [6, 7]]),
        (16, 5, [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15]]),
        (5, 2, [[0, 1, 2], [3, 4]]),
        (1, 2, [[0], []]),
        (4, 2, [[0, 1], [2, 3]]),
    ],
)
def test_allocate_averagely_vectors(nq, nc, expected):
    """Averagely gives contiguous blocks, earlier consumers one extra; docs/reference.md §11 computed vectors, mechanisms.md "Rebalancing" table."""
    assert queue_ids(AllocateMessageQueueAveragely(), nq, nc) == expected


def test_allocate_averagely_does_not_sort():
    """Strategies use the caller's order (RebalanceImpl sorts first); allocate_all sorts; mechanisms.md "Rebalancing" span 27."""
    shuffled = [mqs(4)[i] for i in (3, 1, 0, 2)]
    got = AllocateMessageQueueAveragely().allocate(GROUP, "CID-0", shuffled, ["CID-0", "CID-1"])
    assert [mq.queue_id for mq in got] == [3, 1]
    assert allocate_all(AllocateMessageQueueAveragely(), GROUP, shuffled, ["CID-1", "CID-0"]) == {
        "CID-0": mqs(4)[:2],
        "CID-1": mqs(4)[2:],
    }


def test_allocate_all_sorts_by_topic_broker_queue_id():
    """allocate_all sorts queues by (topic, brokerName, queueId) and dedupes them; docs/reference.md §10.10, §10.11."""
    mq_all = [
        MessageQueue("b", "broker-a", 0),
        MessageQueue("a", "broker-b", 0),
        MessageQueue("a", "broker-a", 1),
        MessageQueue("a", "broker-a", 0),
        MessageQueue("a", "broker-a", 0),
    ]
    got = allocate_all(AllocateMessageQueueAveragely(), GROUP, mq_all, ["c1"])
    assert got == {
        "c1": [
            MessageQueue("a", "broker-a", 0),
            MessageQueue("a", "broker-a", 1),
            MessageQueue("a", "broker-b", 0),
            MessageQueue("b", "broker-a", 0),
        ]
    }


# -- by circle ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nq", "nc", "expected"),
    [
        (10, 4, [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]),
        (8, 3, [[0, 3, 6], [1, 4, 7], [2, 5]]),
        (4, 3, [[0, 3], [1], [2]]),
        (2, 3, [[0], [1], []]),
    ],
)
def test_allocate_by_circle_vectors(nq, nc, expected):
    """Circle deals queue i to consumer i % m (AllocateMessageQueueAveragelyByCircleTest); docs/reference.md §11."""
    assert queue_ids(AllocateMessageQueueAveragelyByCircle(), nq, nc) == expected


@settings(max_examples=200, deadline=None)
@given(
    nq=st.integers(1, 64),
    nc=st.integers(1, 40),
    strategy=st.sampled_from(
        [AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle()]
    ),
)
def test_averagely_and_circle_cover_every_queue_once(nq, nc, strategy):
    """Averagely and circle: the union over all consumers is every queue exactly once; docs/reference.md §11."""
    owner = owners(strategy, mqs(nq), cids(nc))
    assert sorted(owner) == mqs(nq)
    sizes = [len(v) for v in allocate_all(strategy, GROUP, mqs(nq), cids(nc)).values()]
    assert max(sizes) - min(sizes) <= 1


# -- by config ------------------------------------------------------------------------------------


def test_allocate_by_config():
    """ByConfig returns the configured list whatever the inputs, with no checks; mechanisms.md "Rebalancing", docs/reference.md §10.10."""
    configured = [MessageQueue("other", "broker-x", 7), MessageQueue("other", "broker-x", 3)]
    strategy = AllocateMessageQueueByConfig(configured)
    assert strategy.allocate(GROUP, "CID-0", mqs(4), cids(2)) == configured
    assert strategy.allocate(GROUP, "", [], []) == configured
    assert strategy.allocate(GROUP, "nobody", mqs(4), cids(2)) == configured
    assert strategy.get_name() == "CONFIG"
    with pytest.raises(TypeError, match="message_queue_list"):
        AllocateMessageQueueByConfig(["not a queue"])  # type: ignore[list-item]


# -- by machine room ------------------------------------------------------------------------------


def room_mqs() -> list[MessageQueue]:
    """IDC1@a (3 queues), IDC2@b (3 queues), plain broker c (2 queues), sorted."""
    out = [MessageQueue(TOPIC, "IDC1@a", i) for i in range(3)]
    out += [MessageQueue(TOPIC, "IDC2@b", i) for i in range(3)]
    out += [MessageQueue(TOPIC, "c", i) for i in range(2)]
    return sorted(out)


def test_allocate_by_machine_room():
    """ByMachineRoom keeps "<idc>@<name>" brokers with idc wanted, blocks then remainder; mechanisms.md "Rebalancing" span 17-34."""
    strategy = AllocateMessageQueueByMachineRoom({"IDC1", "IDC2"})
    cid_all = ["CID-0", "CID-1", "CID-2", "CID-3"]
    got = {c: strategy.allocate(GROUP, c, room_mqs(), cid_all) for c in cid_all}
    # premqAll = IDC1@a 0,1,2 then IDC2@b 0,1,2; mod = 6 // 4 = 1, rem = 2
    assert got == {
        "CID-0": [MessageQueue(TOPIC, "IDC1@a", 0), MessageQueue(TOPIC, "IDC2@b", 1)],
        "CID-1": [MessageQueue(TOPIC, "IDC1@a", 1), MessageQueue(TOPIC, "IDC2@b", 2)],
        "CID-2": [MessageQueue(TOPIC, "IDC1@a", 2)],
        "CID-3": [MessageQueue(TOPIC, "IDC2@b", 0)],
    }
    assert strategy.allocate(GROUP, "CID-9", room_mqs(), cid_all) == []


def test_allocate_by_machine_room_filters_rooms():
    """Only wanted IDCs count; broker names must split on "@" into exactly 2 parts; docs/reference.md §10.10."""
    strategy = AllocateMessageQueueByMachineRoom({"IDC2"})
    got = allocate_all(strategy, GROUP, room_mqs(), ["c0", "c1"])
    assert got == {
        "c0": [MessageQueue(TOPIC, "IDC2@b", 0), MessageQueue(TOPIC, "IDC2@b", 2)],
        "c1": [MessageQueue(TOPIC, "IDC2@b", 1)],
    }
    odd = [MessageQueue(TOPIC, "IDC2@b@x", 0), MessageQueue(TOPIC, "IDC2", 1)]
    assert strategy.allocate(GROUP, "c0", odd, ["c0"]) == []
    # Java's String#split drops trailing empty strings: "IDC2@b@" still has two parts.
    assert strategy.allocate(GROUP, "c0", [MessageQueue(TOPIC, "IDC2@b@", 0)], ["c0"]) == [
        MessageQueue(TOPIC, "IDC2@b@", 0)
    ]


# -- consistent hash ------------------------------------------------------------------------------


def test_md5_hash_check_values():
    """MD5-prefix hash("CID-0-0") = 1900518137, hash(str(queue 0)) = 2171879703; docs/reference.md §11."""
    assert md5_hash("CID-0-0") == 1900518137
    mq0 = MessageQueue(TOPIC, "brokerName", 0)
    assert str(mq0) == "MessageQueue [topic=topic_test, brokerName=brokerName, queueId=0]"
    assert md5_hash(str(mq0)) == 2171879703


@pytest.mark.parametrize(
    ("nq", "nc", "vnodes", "expected"),
    [
        (6, 2, 10, [1, 0, 1, 0, 0, 0]),
        (8, 3, 10, [2, 0, 1, 2, 2, 2, 0, 0]),
        (10, 4, 3, [3, 3, 1, 0, 2, 0, 3, 3, 0, 3]),
    ],
)
def test_allocate_consistent_hash_vectors(nq, nc, vnodes, expected):
    """Queue owners match Java's ConsistentHashRouter (topic_test/brokerName/CID-i); docs/reference.md §11 computed."""
    owner = owners(AllocateMessageQueueConsistentHash(vnodes), mqs(nq), cids(nc))
    assert [owner[mq] for mq in mqs(nq)] == [f"CID-{i}" for i in expected]


def test_consistent_hash_default_virtual_nodes_and_validation():
    """Default virtualNodeCnt is 10; a negative count raises "illegal virtualNodeCnt"; docs/reference.md §10.10."""
    assert AllocateMessageQueueConsistentHash().virtual_node_cnt == 10
    with pytest.raises(ValueError, match="illegal virtualNodeCnt :-1"):
        AllocateMessageQueueConsistentHash(-1)


def test_consistent_hash_zero_virtual_nodes_allocates_nothing():
    """With 0 virtual nodes the ring is empty and routeNode returns null: nobody gets a queue."""
    assert queue_ids(AllocateMessageQueueConsistentHash(0), 4, 2) == [[], []]


def test_consistent_hash_custom_hash_function():
    """A custom HashFunction replaces MD5: ring keys "<cid>-<i>", first node ≥ key hash, wrapping."""

    def h(key: str) -> int:
        # virtual nodes: "A-0" -> 100, "B-0" -> 200; queues hash by queue id
        table = {"A-0": 100, "B-0": 200}
        return table[key] if key in table else int(key.rsplit("=", 1)[1].rstrip("]")) * 60

    strategy = AllocateMessageQueueConsistentHash(1, h)
    # queue ids 0..4 hash to 0, 60, 120, 180, 240 -> A, A, B, B, wrap to A
    assert owners(strategy, mqs(5), ["A", "B"]) == {
        mqs(5)[0]: "A",
        mqs(5)[1]: "A",
        mqs(5)[2]: "B",
        mqs(5)[3]: "B",
        mqs(5)[4]: "A",
    }


def test_consistent_hash_router_replicas_and_remove():
    """addNode numbers new replicas after existing ones; removeNode drops all; docs/reference.md §10.10."""
    router = ConsistentHashRouter(["CID-0"], 2)
    assert router.get_existing_replicas("CID-0") == 2
    router.add_node("CID-0", 1)
    assert sorted(v for v in router.ring.values()) == [("CID-0", 0), ("CID-0", 1), ("CID-0", 2)]
    assert md5_hash("CID-0-2") in router.ring
    router.remove_node("CID-0")
    assert router.route_node("anything") is None
    with pytest.raises(ValueError, match="illegal virtual node counts"):
        router.add_node("CID-1", -1)


@settings(max_examples=100, deadline=None)
@given(
    nq=st.integers(1, 20),
    nc=st.integers(1, 20),
    vnodes=st.sampled_from([3, 10]),
    data=st.data(),
)
def test_consistent_hash_stability(nq, nc, vnodes, data):
    """Covers all queues once; removing a consumer moves only its queues; adding one only takes to it; docs/reference.md §11."""
    strategy = AllocateMessageQueueConsistentHash(vnodes)
    mq_all, cid_all = mqs(nq), cids(nc)
    before = owners(strategy, mq_all, cid_all)
    assert sorted(before) == mq_all

    if nc > 1:
        removed = data.draw(st.sampled_from(cid_all))
        after_remove = owners(strategy, mq_all, [c for c in cid_all if c != removed])
        assert sorted(after_remove) == mq_all
        for mq, cid in before.items():
            if cid != removed:
                assert after_remove[mq] == cid, f"{mq} moved although {cid} stayed"

    new_cid = "CID-NEW"
    after_add = owners(strategy, mq_all, [*cid_all, new_cid])
    assert sorted(after_add) == mq_all
    for mq, cid in after_add.items():
        if cid != new_cid:
            assert before[mq] == cid, f"{mq} moved from {before[mq]} to {cid}, not to the newcomer"


# -- machine room nearby --------------------------------------------------------------------------


RESOLVER = SplitResolver()
NEARBY = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), RESOLVER)


def prepare_mq(idc_size: int, queue_size: int) -> list[MessageQueue]:
    return [
        MessageQueue(TOPIC, f"IDC{i}-brokerName", q)
        for i in range(1, idc_size + 1)
        for q in range(queue_size)
    ]


def prepare_consumer(idc_size: int, consumer_size: int) -> list[str]:
    return [f"IDC{i}-CID-{c}" for i in range(1, idc_size + 1) for c in range(consumer_size)]


def test_allocate_machine_room_nearby_name():
    """getName is "MACHINE_ROOM_NEARBY-" + inner name; null arguments rejected (NPE in Java)."""
    assert NEARBY.get_name() == "MACHINE_ROOM_NEARBY-AVG"
    with pytest.raises(TypeError, match="allocate_message_queue_strategy"):
        AllocateMachineRoomNearby(None, RESOLVER)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="machine_room_resolver"):
        AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), None)  # type: ignore[arg-type]


def test_allocate_machine_room_nearby_same_room_preference():
    """Equal rooms: every consumer only gets queues of its own room, all covered (test1); docs/reference.md §10.10."""
    mq_all, cid_all = prepare_mq(2, 3), prepare_consumer(2, 2)
    got = {c: NEARBY.allocate(GROUP, c, mq_all, cid_all) for c in cid_all}
    assert got == {
        "IDC1-CID-0": [
            MessageQueue(TOPIC, "IDC1-brokerName", 0),
            MessageQueue(TOPIC, "IDC1-brokerName", 1),
        ],
        "IDC1-CID-1": [MessageQueue(TOPIC, "IDC1-brokerName", 2)],
        "IDC2-CID-0": [
            MessageQueue(TOPIC, "IDC2-brokerName", 0),
            MessageQueue(TOPIC, "IDC2-brokerName", 1),
        ],
        "IDC2-CID-1": [MessageQueue(TOPIC, "IDC2-brokerName", 2)],
    }


def test_allocate_machine_room_nearby_orphan_room_shared():
    """Queues of a room without consumers are shared by all consumers with the inner strategy (test3)."""
    mq_all, cid_all = prepare_mq(2, 2), prepare_consumer(1, 2)
    got = {c: NEARBY.allocate(GROUP, c, mq_all, cid_all) for c in cid_all}
    assert got == {
        "IDC1-CID-0": [
            MessageQueue(TOPIC, "IDC1-brokerName", 0),
            MessageQueue(TOPIC, "IDC2-brokerName", 0),
        ],
        "IDC1-CID-1": [
            MessageQueue(TOPIC, "IDC1-brokerName", 1),
            MessageQueue(TOPIC, "IDC2-brokerName", 1),
        ],
    }


def test_allocate_machine_room_nearby_empty_room_raises():
    """A resolver returning an empty room raises "Machine room is null for ..." (IllegalArgumentException)."""

    class Blank(SplitResolver):
        def broker_deploy_in(self, message_queue: MessageQueue) -> str:
            return ""

    with pytest.raises(ValueError, match="Machine room is null for mq MessageQueue"):
        AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), Blank()).allocate(
            GROUP, "IDC1-CID-0", prepare_mq(1, 1), ["IDC1-CID-0"]
        )


@settings(max_examples=100, deadline=None)
@given(
    broker_idcs=st.integers(1, 6),
    consumer_idcs=st.integers(1, 6),
    queue_size=st.integers(1, 12),
    consumer_size=st.integers(1, 8),
)
def test_allocate_machine_room_nearby_random_cases(
    broker_idcs, consumer_idcs, queue_size, consumer_size
):
    """Random rooms (testRun10RandomCase): full coverage once; healthy rooms' queues stay in their room."""
    mq_all = prepare_mq(broker_idcs, queue_size)
    cid_all = prepare_consumer(consumer_idcs, consumer_size)
    rooms_with_consumers = {RESOLVER.consumer_deploy_in(c) for c in cid_all}
    owner = owners(NEARBY, mq_all, cid_all)
    assert sorted(owner) == sorted(mq_all)
    for mq, cid in owner.items():
        room = RESOLVER.broker_deploy_in(mq)
        if room in rooms_with_consumers:
            assert RESOLVER.consumer_deploy_in(cid) == room
