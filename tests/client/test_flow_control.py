"""Pull-side flow control: cached count, cached size and offset span (mechanisms.md "The consumer's pull loop" step 2.1).

docs/reference.md §10.14: msgCount > pullThresholdForQueue (1000), msgSize/MiB > pullThresholdSizeForQueue
(100), concurrently: maxSpan > consumeConcurrentlyMaxSpan (2000) → the pull request comes back
PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL = 50 ms later.
"""

from __future__ import annotations

from test_push_consumer import OK, ConsumerCluster

from mqlab.client.consumer.default_mq_push_consumer_impl import (
    PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL,
)
from mqlab.common.message import MessageQueue

Q0 = str(MessageQueue("T", "broker-a", 0))
STUCK = 10**9  # a listener call that never ends within the test


def flow_control_events(cl, kind):
    return [
        e
        for e in cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage", step="2.1")
        if e.fields.get("flow_control") == kind and e.fields["mq"] == Q0
    ]


def fill_queue0(cl, n, body=b"x"):
    for _ in range(n):
        cl.send(body=body, queue_id=0)
    cl.d.run_until_idle()


def test_count_flow_control_engages_at_1001_cached_and_retries_every_50_ms(tmp_path):
    """1000 cached still pulls; at 1001 cached the pull comes back 50 ms later, again and again."""
    cl = ConsumerCluster(tmp_path)
    fill_queue0(cl, 1100)
    c = cl.consumer("c1", pull_batch_size=1, consume_thread_min=1, consume_thread_max=1,
                    consume_time_ms=STUCK)  # fmt: skip
    cl.d.advance(10_000)
    events = flow_control_events(cl, "count")
    assert len(events) >= 3
    first = events[0]
    assert first.fields["cached"] == 1001 and first.fields["threshold"] == 1000
    assert "1001 cached > pullThresholdForQueue 1000" in first.fields["text"]
    assert first.fields["delay_ms"] == PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL == 50
    times = [e.t_ms for e in events[:5]]
    assert {b - a for a, b in zip(times, times[1:], strict=False)} == {50}
    pq = c.process_queue_table[MessageQueue("T", "broker-a", 0)]
    assert pq.msg_count == 1001
    assert c.stats.flow_control["count"] == len(events)
    assert c.stats.queue_flow_control_times == len(events)
    # the last pull that went out was the one that brought the 1001st message
    sent = [e for e in cl.events(node="c1", component="DefaultMQPushConsumerImpl.pullMessage",
                                 step="2.5") if e.fields["mq"] == Q0]  # fmt: skip
    assert sent[-1].fields["offset"] == 1000 and sent[-1].t_ms < first.t_ms


def test_size_flow_control_uses_whole_mib(tmp_path):
    """pullThresholdSizeForQueue 1 MiB: 3 × 512 KiB (1 MiB by floor) pulls on, 4 (2 MiB) stops."""
    cl = ConsumerCluster(tmp_path)
    fill_queue0(cl, 6, body=b"s" * 512 * 1024)
    c = cl.consumer("c1", pull_batch_size=1, consume_thread_min=1, consume_thread_max=1,
                    consume_time_ms=STUCK, pull_threshold_size_for_queue=1)  # fmt: skip
    cl.d.advance(3000)
    events = flow_control_events(cl, "size")
    assert events and events[0].fields["cached"] == 2 and events[0].fields["threshold"] == 1
    pq = c.process_queue_table[MessageQueue("T", "broker-a", 0)]
    assert (pq.msg_count, pq.cached_msg_size_in_mib) == (4, 2)
    assert c.stats.flow_control == {"count": 0, "size": len(events), "span": 0}


def test_span_flow_control_when_one_message_blocks_the_offset(tmp_path):
    """Offsets 0 and 2005 never finish, the rest do: span > 2000 stops pulling (not the count)."""
    cl = ConsumerCluster(tmp_path)
    fill_queue0(cl, 2100)

    def consume_time(msgs):
        return STUCK if msgs[0].queue_offset in (0, 2005) else 0

    c = cl.consumer("c1", consume_time_ms=consume_time)
    cl.d.advance(10_000)
    events = flow_control_events(cl, "span")
    assert events, "span flow control never engaged"
    assert events[0].fields["cached"] > 2000 and events[0].fields["threshold"] == 2000
    assert "consumeConcurrentlyMaxSpan 2000" in events[0].fields["text"]
    pq = c.process_queue_table[MessageQueue("T", "broker-a", 0)]
    # the two stuck messages are all that is cached: 2 < 1000, yet the span is 2005 > 2000
    assert (pq.msg_count, pq.get_max_span(), pq.queue_offset_max) == (2, 2005, 2015)
    assert c.stats.flow_control["count"] == 0
    assert c.stats.queue_max_span_flow_control_times == len(events)
    times = [e.t_ms for e in events[:4]]
    assert {b - a for a, b in zip(times, times[1:], strict=False)} == {50}
    # the committed offset is held at 0 by the stuck message
    store = c.default_mq_push_consumer_impl.offset_store
    assert store.read_offset_from_memory(MessageQueue("T", "broker-a", 0)) == 0


def test_flow_control_releases_when_consumption_catches_up(tmp_path):
    """Slow but finite consumption: flow control comes and goes; every message is consumed."""
    cl = ConsumerCluster(tmp_path)
    fill_queue0(cl, 60)
    c = cl.consumer("c1", pull_batch_size=4, pull_threshold_for_queue=5, consume_thread_min=1,
                    consume_thread_max=1, consume_time_ms=10, listener=lambda m, x: OK)  # fmt: skip
    cl.d.advance(5000)
    assert sorted(r.queue_offset for r in c.consumed if r.mq.queue_id == 0) == list(range(60))
    assert c.stats.flow_control["count"] > 0
