"""ConsumeMessageConcurrentlyService: batches, the modelled pool, ackIndex, send-back, retries.

mechanisms.md "Consumption" "ConsumeMessageConcurrentlyService" (submitConsumeRequest lines 16–47, ConsumeRequest
lines 24–117, processConsumeResult lines 8–69); docs/reference.md §10.15, §10.7 (retry schedule, DLQ).
Unit tests run the service on a real node context with a fake consumer; the end-to-end tests
use a broker (retry delays, DLQ, duplicates after a rebalance).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_push_consumer import LATER, OK, ConsumerCluster

from mqlab.client.consumer.consume_message_concurrently_service import (
    ConsumeMessageConcurrentlyService,
)
from mqlab.client.consumer.consume_pool import ConsumeThreadPool, thread_prefix, timer_key_prefix
from mqlab.client.consumer.default_mq_push_consumer_impl import (
    DefaultMQPushConsumerImpl,
    PushConsumerStats,
)
from mqlab.client.exception import MQClientException
from mqlab.client.process_queue import ProcessQueue
from mqlab.common import message_const as mc
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import Sleep
from mqlab.trace.events import TraceLevel

MQ = MessageQueue("T", "broker-a", 0)


class FakeOffsetStore:
    def __init__(self):
        self.updates = []

    def update_offset(self, mq, offset, increase_only):
        self.updates.append((offset, increase_only))


class Unit:
    """The service on a node context, with a fake DefaultMQPushConsumerImpl."""

    def __init__(self, listener, *, model="CLUSTERING", send_back_fails=False, **settings):
        self.d = SimDriver(seed=1)
        node = Node("c", "")
        self.d.add_node(node)
        cfg = dict(consumer_group="CG", message_model=model, consume_thread_min=20,
                   consume_thread_max=20, consume_message_batch_max_size=1, consume_timeout=15,
                   consume_time_ms=0)  # fmt: skip
        cfg.update(settings)
        self.sent_back = []
        self.consumed = []

        def send_message_back(msg, delay_level, broker_name):
            if send_back_fails:
                raise RuntimeError("broker down")
            self.sent_back.append((msg.queue_offset, delay_level, broker_name))
            return
            yield  # pragma: no cover

        self.store = FakeOffsetStore()
        self.impl = SimpleNamespace(
            ctx=node.ctx, tracer=node.ctx.tracer, default_mq_push_consumer=SimpleNamespace(**cfg),
            stats=PushConsumerStats(), offset_store=self.store,
            reset_retry_and_namespace=lambda msgs, g: DefaultMQPushConsumerImpl.reset_retry_and_namespace(None, msgs, g),
            record_consumed=lambda msgs, mq, status, worker: self.consumed.append(
                (self.d.now, [m.queue_offset for m in msgs], status, worker)),
            send_message_back=send_message_back,
            rebalance_impl=SimpleNamespace(process_queue_table={}),
        )  # fmt: skip
        self.svc = ConsumeMessageConcurrentlyService(self.impl, listener)
        self.pq = ProcessQueue(0)
        self.impl.rebalance_impl.process_queue_table[MQ] = self.pq

    def submit(self, offsets):
        msgs = [MessageExt(topic="T", queue_id=0, queue_offset=o, body=b"x") for o in offsets]
        dispatch = self.pq.put_message(msgs)
        self.svc.submit_consume_request(msgs, self.pq, MQ, dispatch)
        return msgs


def test_batches_split_by_consume_message_batch_max_size():
    """7 pulled messages, consumeMessageBatchMaxSize 3 → requests of 3, 3 and 1 (lines 23–47)."""
    sizes = []
    u = Unit(lambda msgs, ctx: sizes.append(len(msgs)) or OK, consume_message_batch_max_size=3)
    u.submit(range(7))
    u.d.run_until_idle()
    assert sizes == [3, 3, 1]
    assert u.store.updates[-1] == (7, True)
    (e,) = u.d.recorder.select(component="ConsumeMessageConcurrentlyService.submitConsumeRequest")
    assert e.step == "23-47" and e.fields["requests"] == 3


def test_pool_never_grows_past_consume_thread_min():
    """consumeThreadMin 2 (max 64): five 100 ms requests run 2 at a time — starts 0,0,100,100,200."""
    u = Unit(lambda msgs, ctx: OK, consume_thread_min=2, consume_thread_max=64, consume_time_ms=100)
    u.submit(range(5))
    u.d.run_until_idle()
    assert [t for t, *_ in u.consumed] == [0, 0, 100, 100, 200]
    assert [w for *_, w in u.consumed] == [
        "ConsumeMessageThread_CG_1", "ConsumeMessageThread_CG_2", "ConsumeMessageThread_CG_1",
        "ConsumeMessageThread_CG_2", "ConsumeMessageThread_CG_1",
    ]  # fmt: skip
    pool = u.svc.consume_executor
    assert (pool.largest_pool_size, pool.completed_task_count) == (2, 5)
    assert u.d.now == 300


def test_pools_of_groups_sharing_100_chars_both_start_their_tasks():
    """Groups alike in their first 100 characters name their threads alike
    (ConsumeMessageThread_<group[:100]>_1); the start timers' keys carry the whole group,
    so one pool's start does not replace the other's (Java's executors are separate)."""
    d = SimDriver(seed=1)
    node = Node("c", "")
    d.add_node(node)
    ran = []
    pools = []
    for g in ("G" * 100 + "A", "G" * 100 + "B"):
        pool = ConsumeThreadPool(node.ctx, thread_prefix(g), 1, 1, "ConsumeRequest.run",
                                 timer_key_prefix(g))  # fmt: skip
        pool.submit(lambda worker, g=g: ran.append((g[-1], worker)))
        pools.append(pool)
    keys = [t.key for t in d.next_timers()]
    assert keys == [f"{'G' * 100}A/ConsumeMessageThread_{'G' * 100}_1",
                    f"{'G' * 100}B/ConsumeMessageThread_{'G' * 100}_1"]  # fmt: skip
    d.run_until_idle()
    assert ran == [("A", f"ConsumeMessageThread_{'G' * 100}_1"),
                   ("B", f"ConsumeMessageThread_{'G' * 100}_1")]  # fmt: skip
    assert timer_key_prefix("G" * 100) == ""  # the thread name holds the whole group


def test_slow_message_holds_the_commit_offset_back():
    """Offsets commit at the smallest cached offset: a slow offset 0 keeps the offset at 0."""
    u = Unit(lambda msgs, ctx: OK,
             consume_time_ms=lambda msgs: 1000 if msgs[0].queue_offset == 0 else 10)  # fmt: skip
    u.submit(range(3))
    u.d.advance(10)
    assert [o for o, _ in u.store.updates] == [0, 0]
    u.d.advance(990)
    assert u.store.updates[-1] == (3, True)


def test_ack_index_acks_a_prefix_and_sends_the_rest_back():
    """CONSUME_SUCCESS with ackIndex 0 on a batch of 3: offsets 1 and 2 go back to the broker."""

    def listener(msgs, ctx):
        ctx.ack_index = 0
        ctx.delay_level_when_next_consume = 2
        return OK

    u = Unit(listener, consume_message_batch_max_size=3)
    u.submit([10, 11, 12])
    u.d.run_until_idle()
    assert u.sent_back == [(11, 2, "broker-a"), (12, 2, "broker-a")]
    assert u.store.updates == [(13, True)]
    assert (u.impl.stats.consume_ok, u.impl.stats.consume_failed) == (1, 2)


def test_reconsume_later_and_exceptions_send_everything_back():
    """RECONSUME_LATER (and a listener exception) ack nothing: every message is sent back."""
    u = Unit(lambda msgs, ctx: LATER, consume_message_batch_max_size=2)
    u.submit([0, 1])
    u.d.run_until_idle()
    assert [o for o, *_ in u.sent_back] == [0, 1]

    def boom(msgs, ctx):
        raise ValueError("bad message")

    u2 = Unit(boom)
    u2.submit([5])
    u2.d.run_until_idle()
    assert [o for o, *_ in u2.sent_back] == [5]
    (e,) = u2.d.recorder.select(component="ConsumeMessageConcurrentlyService.ConsumeRequest.run")
    assert e.fields["status"] == "RECONSUME_LATER" and e.fields["return_type"] == "EXCEPTION"
    assert "bad message" in e.fields["error"]


def test_failed_send_back_is_consumed_here_again_after_5000_ms():
    """Send-back fails: reconsumeTimes + 1, the message stays cached, re-consumed 5 s later."""
    seen = []

    def listener(msgs, ctx):
        seen.append((u.d.now, msgs[0].reconsume_times))
        return LATER if len(seen) == 1 else OK

    u = Unit(listener, send_back_fails=True)
    u.submit([0])
    u.d.advance(4999)
    assert seen == [(0, 0)] and u.pq.msg_count == 1
    assert u.store.updates == [(0, True)]  # removeMessage([]) → the smallest cached offset
    (t,) = [t for t in u.d.next_timers() if "submitConsumeRequestLater" in t.name]
    assert (t.due_ms, t.key) == (5000, f"CG@{MQ}#1")
    u.d.advance(1)
    assert seen == [(0, 0), (5000, 1)]
    assert u.pq.msg_count == 0 and u.store.updates[-1] == (1, True)
    assert u.impl.stats.send_back_failed == 1


def test_broadcasting_drops_failed_messages():
    """BROADCASTING: a failed message is only logged, removed and its offset passed."""
    u = Unit(lambda msgs, ctx: LATER, model="BROADCASTING")
    u.submit([0, 1])
    u.d.run_until_idle()
    assert u.sent_back == [] and u.store.updates[-1] == (2, True)
    drops = u.d.recorder.select(component="ConsumeMessageConcurrentlyService.processConsumeResult",
                                step="36-41")  # fmt: skip
    assert len(drops) == 2 and "drop it" in drops[0].fields["text"]


def test_dropped_queue_is_not_consumed_and_late_results_are_ignored():
    """A request of a dropped queue is skipped; a result that lands after the drop is ignored."""
    u = Unit(lambda msgs, ctx: OK, consume_time_ms=100)
    u.submit([0])
    u.d.advance(50)
    u.pq.dropped = True
    u.submit([1])
    u.d.run_until_idle()
    assert [offs for _, offs, *_ in u.consumed] == [[0]]
    assert u.store.updates == [] and u.impl.stats.results_dropped == 1


def test_consume_start_time_and_retry_topic_reset():
    """CONSUME_START_TIME is stamped; a %RETRY% message shows its RETRY_TOPIC to the listener."""
    seen = []
    u = Unit(lambda msgs, ctx: seen.extend(msgs) or OK)
    u.d.advance(42)
    msg = MessageExt(topic="%RETRY%CG", queue_offset=0, body=b"r",
                     properties={mc.PROPERTY_RETRY_TOPIC: "T"})  # fmt: skip
    u.svc.submit_consume_request([msg], u.pq, MQ, True)
    u.d.run_until_idle()
    assert seen[0].topic == "T"
    assert seen[0].properties[mc.PROPERTY_CONSUME_START_TIMESTAMP] == "42"


def test_clean_expired_msg_sends_back_after_15_minutes():
    """cleanExpiredMsg every 15 min: a message consuming for > 15 min goes back with level 3."""
    u = Unit(lambda msgs, ctx: OK, consume_time_ms=40 * 60 * 1000)
    u.svc.start()
    u.submit([0])
    u.d.advance(15 * 60 * 1000)  # first run: consuming exactly 15 min, not more
    assert u.sent_back == []
    u.d.advance(15 * 60 * 1000)
    assert u.sent_back == [(0, 3, None)]  # no broker name: the message's store host
    assert u.pq.msg_count == 0


def test_clean_expired_msg_keeps_a_message_whose_send_back_failed():
    """sendMessageBack throws (broker and inner-producer fallback both failed): Java skips
    removeMessage (ProcessQueue.java:107-129), so the message stays cached; the failure is
    traced as "send expired msg exception"."""
    u = Unit(lambda msgs, ctx: OK, consume_time_ms=40 * 60 * 1000, send_back_fails=True)
    u.svc.start()
    u.submit([0])
    u.d.advance(30 * 60 * 1000)
    assert u.pq.msg_count == 1 and u.pq.msg_tree_map.keys() == [0]
    (e,) = u.d.recorder.select(component="ProcessQueue.cleanExpiredMsg")
    assert (e.t_ms, e.kind, e.fields["queue_offset"]) == (30 * 60 * 1000, "error", 0)
    assert e.fields["text"] == "send expired msg exception: broker down"


def test_clean_expired_msg_removes_after_the_send_back_returns():
    """The send-back is a synchronous RPC in Java: the message leaves the process queue when
    it has returned (here 7 ms later), and the next expired message is sent back after it."""
    u = Unit(lambda msgs, ctx: OK, consume_time_ms=40 * 60 * 1000)
    sends = []

    def slow_send_back(msg, delay_level, broker_name):
        sends.append((u.d.now, msg.queue_offset))
        yield Sleep(7)

    u.impl.send_message_back = slow_send_back
    u.svc.start()
    u.submit([0])
    u.submit([1])
    u.d.advance(30 * 60 * 1000)
    assert sends == [(1_800_000, 0)] and u.pq.msg_count == 2
    u.d.advance(7)
    assert sends == [(1_800_000, 0), (1_800_007, 1)] and u.pq.msg_tree_map.keys() == [1]
    u.d.advance(7)
    assert u.pq.msg_count == 0


# -- end to end ----------------------------------------------------------------------------------


def test_retries_arrive_after_10_s_30_s_60_s_with_reconsume_times_1_2_3(tmp_path):
    """Fail 3 times then succeed: redeliveries ~10 s, 30 s, 60 s after each failure (levels 3-5)."""
    cl = ConsumerCluster(tmp_path)
    calls = []

    def listener(msgs, ctx):
        calls.append((cl.d.now, msgs[0].reconsume_times, msgs[0].topic, msgs[0].body))
        return LATER if len(calls) <= 3 else OK

    c = cl.consumer("c1", listener=listener)
    cl.d.advance(2000)
    cl.send(body=b"retry-me", queue_id=0)
    cl.d.advance(120_000)
    assert [(rt, topic, body) for _, rt, topic, body in calls] == [
        (0, "T", b"retry-me"), (1, "T", b"retry-me"), (2, "T", b"retry-me"), (3, "T", b"retry-me"),
    ]  # fmt: skip
    gaps = [b[0] - a[0] for a, b in zip(calls, calls[1:], strict=False)]
    for gap, delay in zip(gaps, [10_000, 30_000, 60_000], strict=True):
        assert delay <= gap <= delay + 200, gaps  # the schedule service ticks every 100 ms
    assert [r.mq.topic for r in c.consumed] == ["T", "%RETRY%CG", "%RETRY%CG", "%RETRY%CG"]
    assert len({r.msg_id for r in c.consumed}) == 1
    assert c.stats.send_back_ok == 3


def test_message_lands_in_dlq_after_16_retries(tmp_path):
    """Always failing: deliveries with reconsumeTimes 0..16, then %DLQ%CG (docs/reference.md §10.7)."""
    fast = " ".join(["1s"] * 18)  # shorter delays; the schedule and the count are the point here
    cl = ConsumerCluster(tmp_path, trace_level=TraceLevel.OFF,
                         store_kw={"message_delay_level": fast})  # fmt: skip
    seen = []

    def listener(msgs, ctx):
        seen.append(msgs[0].reconsume_times)
        return LATER

    cl.consumer("c1", listener=listener)
    cl.d.advance(2000)
    cl.send(body=b"poison", queue_id=0)
    cl.d.advance(120_000)
    assert seen == list(range(17))
    store = cl.broker.message_store
    assert store.get_max_offset_in_queue("%DLQ%CG", 0) == 1
    dlq = cl.broker.topic_config_manager.select_topic_config("%DLQ%CG")
    assert (dlq.read_queue_nums, dlq.perm) == (1, 6)


@pytest.mark.slow
def test_dlq_with_the_default_delay_table_after_4h45m(tmp_path):
    """Default levels 3..18 (10 s … 2 h): the 17th delivery is ~17 140 s in; then %DLQ%CG."""
    cl = ConsumerCluster(tmp_path, trace_level=TraceLevel.OFF)
    seen = []

    def listener(msgs, ctx):
        seen.append((cl.d.now, msgs[0].reconsume_times))
        return LATER

    cl.consumer("c1", listener=listener)
    cl.d.advance(2000)
    cl.send(body=b"poison", queue_id=0)
    cl.d.advance(5 * 3600 * 1000)
    assert [rt for _, rt in seen] == list(range(17))
    # 10 s + 30 s + 1..10 min + 20 min + 30 min + 1 h + 2 h = 17 140 s, plus 100 ms ticks
    assert 17_140_000 <= seen[-1][0] - seen[0][0] <= 17_140_000 + 16 * 200
    assert cl.broker.message_store.get_max_offset_in_queue("%DLQ%CG", 0) == 1


def test_in_flight_messages_are_redelivered_after_a_rebalance(tmp_path):
    """c1 is consuming 8 messages when c2 joins: the 4 of c2's queues are consumed twice."""
    cl = ConsumerCluster(tmp_path)
    c1 = cl.consumer("c1", consume_time_ms=5000)
    cl.d.advance(2000)
    for i in range(8):
        cl.send(body=f"m{i}".encode(), queue_id=i % 4)
    cl.d.advance(100)
    assert len(c1.consumed) == 8  # all eight handed to c1's listener, none finished
    c2 = cl.consumer("c2", consume_time_ms=5000)
    cl.d.advance(20_000)
    counts = {}
    for r in c1.consumed + c2.consumed:
        counts[r.msg_id] = counts.get(r.msg_id, 0) + 1
    duplicates = sorted(n for n in counts.values() if n > 1)
    assert len(counts) == 8 and duplicates == [2, 2, 2, 2]
    assert sorted({r.mq.queue_id for r in c2.consumed}) == [2, 3]
    assert c1.stats.results_dropped == 4
    assert [r.reconsume_times for r in c2.consumed] == [0, 0, 0, 0]


def test_failed_send_backs_of_two_groups_on_one_instance_both_retry_after_5000_ms(tmp_path):
    """Two groups on one client instance both fail to send one message back: each group's
    submitConsumeRequestLater is its own task, so both consume it again 5 s later with
    reconsumeTimes 1 and commit offset 1 — what one group alone does."""
    cl = ConsumerCluster(tmp_path, queues=1)
    consumers = cl.shared_consumers(["GA", "GB"])
    calls = {"GA": [], "GB": []}

    def failing_send_back(msg, delay_level, broker_name):
        raise MQClientException(-1, "send-back and the fallback send failed")
        yield  # pragma: no cover

    for g, c in consumers.items():
        c.subscribe("T", "*")

        def listener(msgs, ctx, g=g):
            calls[g].append((cl.d.now, msgs[0].queue_offset, msgs[0].reconsume_times))
            return LATER if len(calls[g]) == 1 else OK

        c.register_message_listener(listener)
        c.start()
        c.default_mq_push_consumer_impl.send_message_back = failing_send_back
    cl.d.advance(3000)
    cl.send_and_wait(body=b"x")
    cl.d.advance(30_000)
    assert calls == {"GA": [(3104, 0, 0), (8104, 0, 1)], "GB": [(3104, 0, 0), (8104, 0, 1)]}
    mq = MessageQueue("T", "broker-a", 0)
    for c in consumers.values():
        assert c.offset_store.read_offset_from_memory(mq) == 1
        assert (c.process_queue_table[mq].msg_count, c.stats.send_back_failed) == (0, 1)


def test_update_core_pool_size_starts_queued_requests():
    """updateCorePoolSize 1 → 3 while 4 requests wait: two more workers start at once."""
    u = Unit(lambda msgs, ctx: OK, consume_thread_min=1, consume_thread_max=20, consume_time_ms=100)
    u.submit(range(4))
    u.d.advance(0)
    assert u.svc.consume_executor.queue_size == 3
    u.svc.consume_executor.set_core_pool_size(3)
    u.d.run_until_idle()
    assert [t for t, *_ in u.consumed] == [0, 0, 0, 100]
