"""mqadmin resetOffsetByTime moves a running push consumer: broker → client reset path.

INVOKE_BROKER_TO_RESET_OFFSET (222) to the broker (Broker2Client#resetOffset), which sends
RESET_CONSUMER_CLIENT_OFFSET (220) to each consumer of the group; the client
(MQClientInstance#resetOffset) pauses, drops the queues, waits 10 s, commits the new
offsets, resumes, and re-consumes from there.
"""

from __future__ import annotations

from mqlab.lab.lab import Lab

FIRST = "CONSUME_FROM_FIRST_OFFSET"


def _lab(consumers=1):
    lab = Lab(seed=1)
    lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC", {
        "topic": "T", "defaultTopic": "TBW102", "readQueueNums": 2, "writeQueueNums": 2,
        "perm": 6, "topicFilterType": "SINGLE_TAG",
    })  # fmt: skip
    for _ in range(consumers):
        lab.push_consumer("G", "T", "*", consume_from_where=FIRST)
    lab.advance(1_000)
    lab.send_many("T", 4)  # queue offsets 0 and 1 of both queues
    lab.advance(10_000)
    t = lab.now
    lab.send_many("T", 4)  # queue offsets 2 and 3
    lab.advance(10_000)
    return lab, t


def _reset(lab, t, force="true"):
    ext = {"topic": "T", "group": "G", "timestamp": t, "isForce": force}
    return lab.request("broker-a", "INVOKE_BROKER_TO_RESET_OFFSET", ext, run=False)


def test_running_consumer_reconsumes_from_the_reset_point():
    """Reset to the time between the two batches: offsets 2 and 3 of each queue come again,
    10 s after the reset, and the broker ends with the consumer's commits (4, 4)."""
    lab, t = _lab()
    before = lab.deliveries()
    assert sorted(zip(before.queue_id, before.queue_offset, strict=True)) == [
        (q, o) for q in (0, 1) for o in range(4)
    ]
    call = _reset(lab, t)
    lab.advance(100)
    assert call.code == 0
    reset_at = call.done_at
    lab.advance(30_000)
    after = lab.deliveries().iloc[len(before) :]
    assert sorted(zip(after.queue_id, after.queue_offset, strict=True)) == [
        (0, 2),
        (0, 3),
        (1, 2),
        (1, 3),
    ]
    # the client waited Java's 10 s (TimeUnit.SECONDS.sleep(10)) before committing and resuming
    steps = lab.events(component="MQClientInstance.resetOffset")
    assert steps.step.tolist() == ["1", "2"]
    assert steps.t_ms.iloc[1] - steps.t_ms.iloc[0] == 10_000
    assert 10_000 <= after.t_ms.min() - reset_at < 10_100
    com = lab.brokers[0].consumer_offset_manager
    assert [com.query_offset("G", "T", q) for q in (0, 1)] == [4, 4]
    lab.close()


def test_not_forced_reset_forward_changes_nothing():
    """isForce=false with "now" (-1 → max offset 4, not below the committed 4): the clients
    still pause and resume, but every offset stays and nothing is delivered again."""
    lab, _ = _lab()
    n = len(lab.deliveries())
    call = _reset(lab, -1, force="false")
    lab.advance(30_000)
    assert call.code == 0 and len(lab.deliveries()) == n
    com = lab.brokers[0].consumer_offset_manager
    assert [com.query_offset("G", "T", q) for q in (0, 1)] == [4, 4]
    lab.close()


def test_each_consumer_of_the_group_resets_its_own_queues():
    """Two consumers (one queue each): both get the request; together they re-consume
    offsets 2 and 3 of both queues once."""
    lab, t = _lab(consumers=2)
    n = len(lab.deliveries())
    _reset(lab, t)
    lab.advance(30_000)
    after = lab.deliveries().iloc[n:]
    assert sorted(zip(after.queue_id, after.queue_offset, strict=True)) == [
        (0, 2),
        (0, 3),
        (1, 2),
        (1, 3),
    ]
    assert after.groupby("queue_id").consumer.nunique().tolist() == [1, 1]
    assert len(lab.events(component="MQClientInstance.resetOffset", step="1")) == 2
    lab.close()
