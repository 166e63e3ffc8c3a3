"""ConsumeMessageOrderlyService: broker locks, one batch at a time per queue, order kept.

docs/reference.md §10.16 (LOCK_BATCH_MQ, lockAll after 1 s and every 20 s, broker expiry 60 s,
SUSPEND_CURRENT_QUEUE_A_MOMENT → suspendCurrentQueueTimeMillis), §9.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_push_consumer import ConsumerCluster

from mqlab.client.consumer.consume_message_orderly_service import (
    ORDERLY_MAX_RECONSUME_TIMES,
    ConsumeMessageOrderlyService,
)
from mqlab.client.consumer.listener import ConsumeOrderlyStatus
from mqlab.client.process_queue import ProcessQueue
from mqlab.common.message import MessageQueue
from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver

SUCCESS = ConsumeOrderlyStatus.SUCCESS
SUSPEND = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT


def per_queue(consumed):
    out = {}
    for r in consumed:
        out.setdefault(r.mq.queue_id, []).append((r.queue_offset, r.reconsume_times, r.status))
    return out


def test_orderly_keeps_per_queue_order_across_a_failure(tmp_path):
    """Queue 1 offset 2 fails once: it is retried 1000 ms later, before offset 3 (same queue)."""
    cl = ConsumerCluster(tmp_path)
    failed = []

    def listener(msgs, ctx):
        m = msgs[0]
        if (m.queue_id, m.queue_offset) == (1, 2) and not failed:
            failed.append(cl.d.now)
            return SUSPEND
        return SUCCESS

    c = cl.consumer("c1", listener=listener, orderly=True)
    cl.d.advance(3000)
    assert all(pq.locked for mq, pq in c.process_queue_table.items() if mq.topic == "T")
    for i in range(15):
        cl.send(body=f"order-{i}".encode(), queue_id=i % 3)
    cl.d.advance(5000)
    got = per_queue(c.consumed)
    assert [o for o, _, _ in got[0]] == [0, 1, 2, 3, 4]
    assert [o for o, _, _ in got[2]] == [0, 1, 2, 3, 4]
    assert got[1] == [
        (0, 0, "SUCCESS"), (1, 0, "SUCCESS"), (2, 0, "SUSPEND_CURRENT_QUEUE_A_MOMENT"),
        (2, 1, "SUCCESS"), (3, 0, "SUCCESS"), (4, 0, "SUCCESS"),
    ]  # fmt: skip
    retried = [
        r.t_ms
        for r in c.consumed
        if (r.mq.queue_id, r.queue_offset, r.reconsume_times) == (1, 2, 1)
    ]
    assert retried[0] - failed[0] == 1000  # suspendCurrentQueueTimeMillis
    store = c.default_mq_push_consumer_impl.offset_store
    assert store.read_offset_from_memory(MessageQueue("T", "broker-a", 1)) == 5


def test_orderly_pulls_only_after_the_broker_lock(tmp_path):
    """New queues are pulled only once lockAll (1 s after start) locked them on the broker."""
    cl = ConsumerCluster(tmp_path)
    cl.send_and_wait(body=b"x", queue_id=0)
    start = cl.d.now
    c = cl.consumer("c1", orderly=True)
    cl.d.advance(10_000)
    not_locked = [e for e in cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage",
                                       step="2.3") if "not locked" in e.fields["text"]]  # fmt: skip
    assert not_locked and not_locked[0].fields["delay_ms"] == 1000
    lock_all = cl.events(node="c1", component="RebalancePushImpl.lockAll")
    assert lock_all[0].t_ms - start == 1000 + 2  # first lockMQPeriodically, plus the round trip
    (first,) = [r for r in c.consumed if r.mq.queue_id == 0]
    assert first.t_ms > lock_all[0].t_ms
    glm = cl.broker.rebalance_lock_manager
    assert glm.is_locked("CG", MessageQueue("T", "broker-a", 0), c.client_id, cl.d.now)


def test_exhausted_orderly_message_goes_to_retry_then_dlq(tmp_path):
    """maxReconsumeTimes 2: after 2 suspended retries the message goes to %RETRY% → %DLQ%CG."""
    cl = ConsumerCluster(tmp_path)
    seen = []

    def listener(msgs, ctx):
        seen.append((msgs[0].queue_offset, msgs[0].reconsume_times))
        return SUSPEND if msgs[0].queue_offset == 0 else SUCCESS

    c = cl.consumer("c1", listener=listener, orderly=True, max_reconsume_times=2)
    cl.d.advance(3000)
    cl.send(body=b"poison", queue_id=0)
    cl.send(body=b"next", queue_id=0)
    cl.d.advance(10_000)
    assert seen == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert c.stats.send_back_ok == 1
    # the re-sent message carries DELAY 3 + 2 = 5 (1 min); the broker's DLQ path keeps it
    # (docs/reference.md §10.6 quirk), so it reaches %DLQ%CG through SCHEDULE_TOPIC_XXXX a minute later
    store = cl.broker.message_store
    assert store.get_max_offset_in_queue("%DLQ%CG", 0) == 0
    cl.d.advance(60_000)
    assert store.get_max_offset_in_queue("%DLQ%CG", 0) == 1


def test_second_orderly_consumer_takes_over_unlocked_queues(tmp_path):
    """Rebalance: c1 unlocks the queues it gives away, c2 locks and consumes them in order."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("c1", orderly=True)
    cl.d.advance(3000)
    c2 = cl.consumer("c2", orderly=True)
    cl.d.advance(25_000)  # c2's lockAll (1 s, 21 s) covers its new queues
    glm = cl.broker.rebalance_lock_manager
    now = cl.d.now
    owners = {
        q: [c.client_id for c in (c1, c2) if glm.is_locked("CG", MessageQueue("T", "broker-a", q),
                                                           c.client_id, now)]
        for q in range(4)
    }  # fmt: skip
    assert owners == {0: ["127.0.0.1@c1"], 1: ["127.0.0.1@c1"], 2: ["127.0.0.1@c2"],
                      3: ["127.0.0.1@c2"]}  # fmt: skip
    for i in range(8):
        cl.send(body=f"k{i}".encode(), queue_id=i % 4)
    cl.d.advance(5000)
    assert sorted({r.mq.queue_id for r in c2.consumed}) == [2, 3]
    assert sorted({r.mq.queue_id for r in c1.consumed}) == [0, 1]


def test_orderly_groups_on_one_instance_keep_their_own_delayed_tasks(tmp_path):
    """Two orderly groups on one client instance suspend one queue a moment: each group's
    submitConsumeRequestLater (and pull-later) is its own task, so both re-consume 1000 ms
    later and consume the next message at once — what one group alone does."""
    cl = ConsumerCluster(tmp_path, queues=1)
    consumers = cl.shared_consumers(["GA", "GB"])
    calls = {"GA": [], "GB": []}
    for g, c in consumers.items():
        c.subscribe("T", "*")

        def listener(msgs, ctx, g=g):
            calls[g].append((cl.d.now, [m.body for m in msgs]))
            return SUSPEND if len(calls[g]) == 1 else SUCCESS

        c.register_message_listener_orderly(listener)
        c.start()
    cl.d.advance(5000)
    cl.send_and_wait(body=b"x", queue_id=0)
    cl.d.advance(60_000)
    cl.send_and_wait(body=b"y", queue_id=0)
    cl.d.advance(60_000)
    expected = [(5104, [b"x"]), (6104, [b"x"]), (65107, [b"y"])]
    assert calls == {"GA": expected, "GB": expected}
    mq = MessageQueue("T", "broker-a", 0)
    for c in consumers.values():
        assert c.offset_store.read_offset_from_memory(mq) == 2
        assert c.process_queue_table[mq].msg_count == 0


# -- unit ----------------------------------------------------------------------------------------------


def unit_service(**settings):
    d = SimDriver(seed=1)
    node = Node("c", "")
    d.add_node(node)
    cfg = dict(consumer_group="CG", message_model="BROADCASTING", consume_thread_min=1,
               consume_thread_max=1, suspend_current_queue_time_millis=1000,
               max_reconsume_times=-1)  # fmt: skip
    cfg.update(settings)
    impl = SimpleNamespace(ctx=node.ctx, tracer=node.ctx.tracer,
                           default_mq_push_consumer=SimpleNamespace(**cfg))  # fmt: skip
    return d, ConsumeMessageOrderlyService(impl, lambda msgs, ctx: SUCCESS)


@pytest.mark.parametrize(("asked", "armed"), [(-1, 1000), (0, 10), (5, 10), (500, 500),
                                                (60_000, 30_000)])  # fmt: skip
def test_submit_later_clamps_to_10_30000_ms(asked, armed):
    """submitConsumeRequestLater: −1 → suspendCurrentQueueTimeMillis; clamp to [10, 30000]."""
    d, svc = unit_service()
    svc.submit_consume_request_later(ProcessQueue(0), MessageQueue("T", "b", 0), asked)
    (t,) = [t for t in d.next_timers() if t.name.endswith("submitConsumeRequestLater")]
    assert t.due_ms == armed and t.key == f"CG@{MessageQueue('T', 'b', 0)}#1"


def test_delayed_tasks_of_one_queue_do_not_replace_each_other():
    """submitConsumeRequestLater / tryLockLaterAndReconsume twice for one queue: two timers
    (keys <group>@<mq>#<n>), as Java schedules two tasks."""
    d, svc = unit_service()
    mq = MessageQueue("T", "b", 0)
    svc.submit_consume_request_later(ProcessQueue(0), mq, 500)
    svc.submit_consume_request_later(ProcessQueue(0), mq, 100)
    svc.try_lock_later_and_reconsume(mq, ProcessQueue(0), 100)
    svc.try_lock_later_and_reconsume(mq, ProcessQueue(0), 10)
    timers = [(t.due_ms, t.name.split(".")[-1], t.key) for t in d.next_timers()]
    assert timers == [
        (10, "tryLockLaterAndReconsume", f"CG@{mq}#4"),
        (100, "submitConsumeRequestLater", f"CG@{mq}#2"),
        (100, "tryLockLaterAndReconsume", f"CG@{mq}#3"),
        (500, "submitConsumeRequestLater", f"CG@{mq}#1"),
    ]


def test_orderly_max_reconsume_times_default_is_integer_max():
    """maxReconsumeTimes −1 means Integer.MAX_VALUE for orderly consumption (docs/reference.md §9)."""
    _, svc = unit_service()
    assert svc.max_reconsume_times() == ORDERLY_MAX_RECONSUME_TIMES == 2147483647
    _, svc = unit_service(max_reconsume_times=3)
    assert svc.max_reconsume_times() == 3


def test_one_request_per_queue_at_a_time():
    """A second request for a busy queue waits for the first (MessageQueueLock)."""
    d, svc = unit_service(consume_thread_min=2, consume_thread_max=2)
    pq = ProcessQueue(0)
    mq = MessageQueue("T", "b", 0)
    req_a = SimpleNamespace(process_queue=pq, message_queue=mq)
    svc.mq_lock_holder[mq] = req_a
    svc.consume_executor.submit(lambda w: svc._run(req_a, w))
    d.run_until_idle()
    assert list(svc.mq_lock_waiters[mq])[0][0] is req_a


def test_killed_owner_blocks_its_queues_until_the_60_s_broker_lock_expires(tmp_path):
    """c1 dies without unlocking: c2 gets queues 0/1 only after the broker lock expired (60 s)."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("c1", orderly=True)
    c2 = cl.consumer("c2", orderly=True)
    cl.d.advance(25_000)
    last_renewal = max(e.t_ms for e in cl.events(node="c1", component="RebalancePushImpl.lockAll"))
    cl.d.stop_node("c1", graceful=False)
    cl.send(body=b"orphan", queue_id=0)
    cl.d.advance(30_000)
    assert [r for r in c2.consumed if r.mq.queue_id == 0] == []
    failed = [e for e in cl.events(node="c2", component="RebalancePushImpl.updateProcessQueueTableInRebalance")
              if "lock failed" in e.fields["text"]]  # fmt: skip
    assert failed, "c2 should have tried to take queue 0 and failed to lock it"
    cl.d.advance(60_000)
    got = [r for r in c2.consumed if r.mq.queue_id == 0]
    assert len(got) == 1
    assert got[0].t_ms - last_renewal > 60_000  # broker RebalanceLockManager expiry
    assert c1.client_id != c2.client_id
