"""RebalanceImpl / RebalancePushImpl / RebalancePullImpl: who pulls which queue, from where.

Unit tests drive the rebalance generators with small fakes (docs/reference.md §10.11, §11
RebalancePushImplTest); the end-to-end test joins a third consumer to a 4-queue topic.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_push_consumer import ConsumerCluster

from mqlab.client.allocate import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
)
from mqlab.client.consumer.rebalance_impl import parse_consume_timestamp
from mqlab.client.consumer.rebalance_pull_impl import RebalancePullImpl
from mqlab.client.consumer.rebalance_push_impl import RebalancePushImpl
from mqlab.client.exception import MQClientException
from mqlab.client.process_queue import ProcessQueue
from mqlab.common.filter_api import FilterAPI
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import Sleep, spawn


def _gen(value):
    if isinstance(value, Exception):
        raise value
    return value
    yield  # pragma: no cover


class FakeOffsetStore:
    def __init__(self, stored=-1):
        self.stored = stored
        self.persisted = []
        self.removed = []

    def read_offset(self, mq, type_):
        return _gen(self.stored)

    def persist(self, mq):
        self.persisted.append(mq)

    def remove_offset(self, mq):
        self.removed.append(mq)


class FakeAdmin:
    def __init__(self, max_offset=12345, search=12345, retry_max=23456):
        self.max, self.search, self.retry_max = max_offset, search, retry_max
        self.calls = []

    def max_offset(self, mq):
        self.calls.append(("max", mq.topic))
        return _gen(self.retry_max if mq.topic.startswith("%RETRY%") else self.max)

    def search_offset(self, mq, ts):
        self.calls.append(("search", ts))
        return _gen(self.search)


class Harness:
    """A RebalancePushImpl on a real node context with fake factory, store and admin."""

    def __init__(self, *, stored=-1, where="CONSUME_FROM_LAST_OFFSET", cids=("cid-a",),
                 client_id="cid-a", model="CLUSTERING", strategy=None, pull=False):  # fmt: skip
        self.d = SimDriver(seed=1)
        node = Node("c", "")
        self.d.add_node(node)
        self.heartbeats = 0
        self.cids = list(cids)
        self.dispatched = []

        def find_consumer_id_list(topic, group):
            return _gen(list(self.cids))

        def heartbeat():
            self.heartbeats += 1

        self.factory = SimpleNamespace(
            ctx=node.ctx, tracer=node.ctx.tracer, client_id=client_id,
            find_consumer_id_list=find_consumer_id_list,
            send_heartbeat_to_all_broker_with_lock=heartbeat,
        )  # fmt: skip
        self.config = SimpleNamespace(
            consume_from_where=where, consume_timestamp="19700101000010",
            pull_threshold_for_topic=-1, pull_threshold_size_for_topic=-1,
            pull_threshold_for_queue=1000, pull_threshold_size_for_queue=100,
            message_queue_listener=None,
        )  # fmt: skip
        self.store = FakeOffsetStore(stored)
        self.admin = FakeAdmin()
        impl = SimpleNamespace(
            default_mq_push_consumer=self.config, default_mq_pull_consumer=self.config,
            offset_store=self.store, mq_admin_impl=self.admin, consume_orderly=False,
            execute_pull_request_immediately=self.dispatched.append,
        )  # fmt: skip
        cls = RebalancePullImpl if pull else RebalancePushImpl
        self.ri = cls(impl, "CG", model, strategy or AllocateMessageQueueAveragely(), self.factory)
        self.ri.subscription_inner["T"] = FilterAPI.build_subscription_data("T", "*")
        self.ri.topic_subscribe_info_table["T"] = {MessageQueue("T", "b", i) for i in range(4)}

    def run(self, gen):
        task = spawn(self.factory.ctx, gen, on_done=lambda t: None)
        self.d.run_until_idle()
        if task.error is not None:
            raise task.error
        return task.result


MQ = MessageQueue("T", "b", 0)
RETRY_MQ = MessageQueue("%RETRY%CG", "b", 0)


# -- computePullFromWhere (docs/reference.md §11 RebalancePushImplTest) ----------------------------------------


@pytest.mark.parametrize(
    ("stored", "where", "mq", "expected"),
    [
        (0, "CONSUME_FROM_LAST_OFFSET", MQ, 0),
        (0, "CONSUME_FROM_FIRST_OFFSET", MQ, 0),
        (0, "CONSUME_FROM_TIMESTAMP", MQ, 0),
        (-2, "CONSUME_FROM_LAST_OFFSET", MQ, -1),
        (-2, "CONSUME_FROM_FIRST_OFFSET", MQ, -1),
        (-2, "CONSUME_FROM_TIMESTAMP", MQ, -1),
        (-1, "CONSUME_FROM_LAST_OFFSET", MQ, 12345),
        (-1, "CONSUME_FROM_LAST_OFFSET", RETRY_MQ, 0),
        (-1, "CONSUME_FROM_MIN_OFFSET", MQ, 12345),  # deprecated: behaves like LAST
        (-1, "CONSUME_FROM_MAX_OFFSET", MQ, 12345),
        (-1, "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST", MQ, 12345),
        (-1, "CONSUME_FROM_FIRST_OFFSET", MQ, 0),
        (-1, "CONSUME_FROM_FIRST_OFFSET", RETRY_MQ, 0),
        (-1, "CONSUME_FROM_TIMESTAMP", MQ, 12345),
        (-1, "CONSUME_FROM_TIMESTAMP", RETRY_MQ, 23456),
        (1024, "CONSUME_FROM_TIMESTAMP", RETRY_MQ, 1024),
    ],
)
def test_compute_pull_from_where_table(stored, where, mq, expected):
    """The RebalancePushImplTest table: stored ≥ 0 wins, −2 skips, −1 applies the policy."""
    h = Harness(stored=stored, where=where)
    assert h.run(h.ri.compute_pull_from_where_with_exception(mq)) == expected


def test_compute_pull_from_where_timestamp_searches_consume_timestamp():
    """CONSUME_FROM_TIMESTAMP searches by ``consumeTimestamp`` parsed as yyyyMMddHHmmss (UTC)."""
    h = Harness(stored=-1, where="CONSUME_FROM_TIMESTAMP")
    h.run(h.ri.compute_pull_from_where_with_exception(MQ))
    assert h.admin.calls == [("search", 10_000)]
    assert parse_consume_timestamp("20220222000000") == 1645488000000
    with pytest.raises(ValueError, match="yyyyMMddHHmmss"):
        parse_consume_timestamp("2022-02-22")


def test_compute_pull_from_where_max_offset_failure_propagates():
    """A failed GET_MAX_OFFSET raises MQClientException (the queue is then skipped)."""
    h = Harness(stored=-1)
    h.admin.max_offset = lambda mq: _gen(MQClientException(-1, "Invoke Broker[x] exception"))
    with pytest.raises(MQClientException, match="Invoke Broker"):
        h.run(h.ri.compute_pull_from_where_with_exception(MQ))
    # in a rebalance round the queue is skipped, not added
    assert h.run(h.ri.update_process_queue_table_in_rebalance("T", {MQ}, False)) is False
    assert h.ri.process_queue_table == {}


def test_pull_impl_always_starts_at_zero():
    """RebalancePullImpl#computePullFromWhere is 0 and dispatches nothing."""
    h = Harness(stored=-1, pull=True)
    assert h.run(h.ri.compute_pull_from_where_with_exception(MQ)) == 0


# -- messageQueueChanged ---------------------------------------------------------------------------


@pytest.mark.parametrize(("queues", "expected"), [(2, 512), (3, 341)])
def test_message_queue_changed_splits_topic_thresholds(queues, expected):
    """pullThresholdForTopic 1024 → per queue 1024 // n (docs/reference.md §11: 2 → 512, 3 → 341)."""
    h = Harness()
    h.config.pull_threshold_for_topic = 1024
    h.config.pull_threshold_size_for_topic = 1024
    for i in range(queues):
        h.ri.process_queue_table[MessageQueue("T", "b", i)] = ProcessQueue(0)
    h.d.advance(777)
    h.ri.message_queue_changed("T", set(), set())
    assert h.config.pull_threshold_for_queue == expected
    assert h.config.pull_threshold_size_for_queue == expected
    assert h.ri.subscription_inner["T"].sub_version == 777
    assert h.heartbeats == 1


def test_message_queue_changed_keeps_thresholds_when_topic_limit_off():
    """pullThresholdForTopic −1: the per-queue settings stay 1000 / 100."""
    h = Harness()
    h.ri.process_queue_table[MQ] = ProcessQueue(0)
    h.ri.message_queue_changed("T", set(), set())
    assert (h.config.pull_threshold_for_queue, h.config.pull_threshold_size_for_queue) == (
        1000,
        100,
    )


# -- rebalanceByTopic ---------------------------------------------------------------------------------


def test_clustering_sorts_queues_and_consumer_ids():
    """Each consumer sorts both lists, so unsorted broker answers give the same split (4q/3c)."""
    shares = {}
    for me in ["cid-b", "cid-c", "cid-a"]:
        h = Harness(stored=0, cids=("cid-c", "cid-a", "cid-b"), client_id=me)
        h.run(h.ri.rebalance_by_topic("T", False))
        shares[me] = [mq.queue_id for mq in sorted(h.ri.process_queue_table)]
    assert shares == {"cid-a": [0, 1], "cid-b": [2], "cid-c": [3]}


def test_broadcasting_takes_every_queue():
    """BROADCASTING ignores the consumer ids: all four queues, one heartbeat after the change."""
    h = Harness(stored=0, model="BROADCASTING", cids=("cid-a", "cid-b"))
    h.run(h.ri.rebalance_by_topic("T", False))
    assert [mq.queue_id for mq in sorted(h.ri.process_queue_table)] == [0, 1, 2, 3]
    assert [pr.next_offset for pr in h.dispatched] == [0, 0, 0, 0]
    assert h.heartbeats == 1


def test_missing_consumer_ids_skip_the_topic():
    """findConsumerIdList failed (None): nothing changes."""
    h = Harness(stored=0)
    h.cids = None
    h.factory.find_consumer_id_list = lambda t, g: _gen(None)
    h.run(h.ri.rebalance_by_topic("T", False))
    assert h.ri.process_queue_table == {} and h.heartbeats == 0


@pytest.mark.parametrize(
    "strategy",
    [
        AllocateMessageQueueAveragely(),
        AllocateMessageQueueAveragelyByCircle(),
        AllocateMessageQueueConsistentHash(),
        AllocateMessageQueueByMachineRoom(["b"]),
    ],
    ids=lambda s: s.get_name(),
)
def test_every_strategy_splits_without_overlap(strategy):
    """With any strategy of mqlab.client.allocate the consumers' shares partition the queues."""
    mqs = {MessageQueue("T", "b@room", i) for i in range(8)}
    seen = []
    for me in ["cid-a", "cid-b", "cid-c"]:
        h = Harness(stored=0, cids=("cid-a", "cid-b", "cid-c"), client_id=me, strategy=strategy)
        h.ri.topic_subscribe_info_table["T"] = set(mqs)
        h.run(h.ri.rebalance_by_topic("T", False))
        seen.extend(h.ri.process_queue_table)
    assert sorted(seen) == sorted(mqs)


def test_by_config_strategy_takes_the_configured_queues():
    """AllocateMessageQueueByConfig returns its list whatever the consumer ids are."""
    mine = [MessageQueue("T", "b", 3), MessageQueue("T", "b", 1)]
    h = Harness(stored=0, cids=("x", "y"), client_id="y",
                strategy=AllocateMessageQueueByConfig(mine))  # fmt: skip
    h.run(h.ri.rebalance_by_topic("T", False))
    assert sorted(h.ri.process_queue_table) == sorted(mine)


# -- updateProcessQueueTableInRebalance ---------------------------------------------------------------


def test_removed_queue_is_dropped_persisted_and_forgotten():
    """A queue no longer allocated: pq.dropped, offset persisted then removed, entry gone."""
    h = Harness(stored=5)
    pq = ProcessQueue(0)
    h.ri.process_queue_table[MQ] = pq
    changed = h.run(h.ri.update_process_queue_table_in_rebalance("T", set(), False))
    assert changed is True and pq.dropped and MQ not in h.ri.process_queue_table
    assert h.store.persisted == [MQ] and h.store.removed == [MQ]


def test_delayed_unlocks_of_one_queue_are_separate_tasks():
    """unlockDelay (a queue removed with messages cached) twice within 20 s: two timers
    RebalancePushImpl.unlockDelay keyed <group>@<mq>#<n>, each unlocking at its own time."""
    h = Harness()
    unlocked = []
    h.ri._spawn_unlock = lambda mq: unlocked.append((h.d.now, mq))
    pq = ProcessQueue(0)
    pq.put_message([MessageExt(topic="T", queue_offset=0, body=b"x")])
    assert h.ri._unlock_delay(MQ, pq) is True
    h.d.advance(5000)
    h.ri._unlock_delay(MQ, pq)
    timers = [
        (t.due_ms, t.key) for t in h.d.next_timers() if t.name == "RebalancePushImpl.unlockDelay"
    ]
    assert timers == [(20_000, f"CG@{MQ}#1"), (25_000, f"CG@{MQ}#2")]
    h.d.advance(20_000)
    assert unlocked == [(20_000, MQ), (25_000, MQ)]


def test_pull_idle_for_more_than_120_s_is_dropped_for_push_only():
    """lastPullTimestamp older than 120 000 ms: a push consumer drops and re-adds the queue."""
    h = Harness(stored=7)
    old = ProcessQueue(0)
    h.ri.process_queue_table[MQ] = old
    h.d.advance(120_000)
    assert h.run(h.ri.update_process_queue_table_in_rebalance("T", {MQ}, False)) is False
    assert h.ri.process_queue_table[MQ] is old  # exactly 120 000 ms is not "more than"
    h.d.advance(1)
    assert h.run(h.ri.update_process_queue_table_in_rebalance("T", {MQ}, False)) is True
    assert old.dropped and h.ri.process_queue_table[MQ] is not old
    assert [pr.next_offset for pr in h.dispatched] == [7]
    p = Harness(stored=7, pull=True)
    idle = ProcessQueue(0)
    p.ri.process_queue_table[MQ] = idle
    p.d.advance(200_000)
    assert p.run(p.ri.update_process_queue_table_in_rebalance("T", {MQ}, False)) is False
    assert not idle.dropped


def test_new_queue_gets_computed_offset_and_a_pull_request():
    """New queues (in sorted order): removeDirtyOffset, computePullFromWhere, PullRequest."""
    h = Harness(stored=-1, where="CONSUME_FROM_FIRST_OFFSET")
    mqs = {MessageQueue("T", "b", 2), MessageQueue("T", "b", 0)}
    assert h.run(h.ri.update_process_queue_table_in_rebalance("T", mqs, False)) is True
    assert [(pr.message_queue.queue_id, pr.next_offset) for pr in h.dispatched] == [(0, 0), (2, 0)]
    assert h.store.removed == sorted(mqs)
    assert all(
        pr.process_queue is h.ri.process_queue_table[pr.message_queue] for pr in h.dispatched
    )


def test_negative_offset_skips_the_queue():
    """computePullFromWhere −1 (offset store unreachable): the queue is not added."""
    h = Harness(stored=-2)
    assert h.run(h.ri.update_process_queue_table_in_rebalance("T", {MQ}, False)) is False
    assert h.ri.process_queue_table == {} and h.dispatched == []


def test_truncate_drops_queues_of_unsubscribed_topics():
    """After unsubscribe the round's last step drops that topic's process queues."""
    h = Harness(stored=0)
    h.run(h.ri.do_rebalance_gen(False))
    pqs = dict(h.ri.process_queue_table)
    assert len(pqs) == 4
    del h.ri.subscription_inner["T"]
    h.run(h.ri.do_rebalance_gen(False))
    assert h.ri.process_queue_table == {} and all(pq.dropped for pq in pqs.values())


def test_rounds_do_not_overlap():
    """A rebalance asked for during a round runs once after it (hasNotified)."""
    h = Harness(stored=0)

    def slow_ids(topic, group):
        yield Sleep(10)  # GET_CONSUMER_LIST_BY_GROUP takes a while
        return ["cid-a"]

    h.factory.find_consumer_id_list = slow_ids
    h.ri.do_rebalance(False)
    h.ri.do_rebalance(False)
    h.ri.do_rebalance(False)
    h.d.run_until_idle()
    assert h.ri.rounds == 2


# -- end to end ------------------------------------------------------------------------------------


def test_third_consumer_converges_to_2_1_1_after_heartbeat_and_notify(tmp_path):
    """A third consumer of a 4-queue topic: heartbeat → NOTIFY_CONSUMER_IDS_CHANGED → 2/1/1."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("consumer-1")
    c2 = cl.consumer("consumer-2")
    cl.d.advance(5000)

    def share(c):
        return [mq.queue_id for mq in sorted(c.process_queue_table) if mq.topic == "T"]

    assert (share(c1), share(c2)) == ([0, 1], [2, 3])
    start = cl.d.now
    c3 = cl.consumer("consumer-3")
    done_at = None
    while cl.d.now - start < 20_000:
        cl.d.step()
        if (share(c1), share(c2), share(c3)) == ([0, 1], [2], [3]):
            done_at = cl.d.now
            break
    assert done_at is not None
    elapsed = done_at - start
    # one heartbeat (c3 → broker) and one notify (broker → c1, c2) plus the offset queries:
    # well inside the 20 s RebalanceService period.
    assert elapsed < 100, elapsed
    notified = [e.node for e in cl.events(component="ClientRemotingProcessor.notifyConsumerIdsChanged")
                if e.t_ms >= start]  # fmt: skip
    assert {"consumer-1", "consumer-2"} <= set(notified)
    print(f"converged 2/1/1 in {elapsed} virtual ms")
