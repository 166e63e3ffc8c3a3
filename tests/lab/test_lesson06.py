"""Lesson 06 (the consumer pull loop and flow control): helpers and exact exercise answers."""

import pytest

from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson06 as L


def test_pull_loop_pulls_batches_of_32_then_parks():
    """mechanisms.md "The consumer's pull loop" steps 2.5/2.6: 100 messages come as 32 + 32 + 32 + 4, then the fifth pull parks."""
    with L.one_queue_lab(1, 100) as lab:
        lab.push_consumer("CG", L.TOPIC)
        lab.advance(100)
        log = L.pull_log(lab, limit=None)
        found = log[log["text"].str.startswith("FOUND")]["text"].str.split().str[1]
        assert list(found) == ["32", "32", "32", "4"]
        assert (log["step"] == "2.5").sum() == 5 and len(lab.held_pulls()) == 2


def test_count_flow_control_defers_50ms():
    """mechanisms.md "The consumer's pull loop" step 2.1: cached > pullThresholdForQueue → pull again in 50 ms."""
    with L.one_queue_lab(1, 60) as lab:
        lab.push_consumer("CG", L.TOPIC, consume_time_ms=60_000, pull_batch_size=10,
                          pull_threshold_for_queue=25)  # fmt: skip
        lab.advance(500)
        fc = L.first_flow_control(lab, "count")
        assert (fc["cached"], fc["threshold"], fc["delay_ms"]) == (30, 25, 50)
        assert L.first_flow_control(lab, "span") is None


def test_stuck_message_holds_the_committed_offset_at_zero():
    """docs/reference.md §10.13: removeMessage returns the smallest offset left, so one stuck message pins it."""
    with L.one_queue_lab(1, 100) as lab:
        lab.push_consumer("CG", L.TOPIC, consume_time_ms=L.stuck_on(0))
        lab.advance(12_000)
        pq = lab.process_queues().set_index("topic").loc[L.TOPIC]
        assert (pq["msg_count"], pq["queue_offset_max"]) == (1, 99)
        off = lab.consumer_offsets().set_index("topic").loc[L.TOPIC]
        assert (off["offset"], off["lag"]) == (0, 100)


def test_offset_illegal_drops_and_fixes_after_10s():
    """docs/reference.md §10.14: OFFSET_ILLEGAL drops the queue, fixes the offset 10 s later, rebalance re-pulls."""
    with L.one_queue_lab(1, 20) as lab:
        assert L.set_committed_offset(lab, 25).code == 0
        lab.push_consumer("CG", L.TOPIC)
        lab.advance(30_000)
        assert L.first_status(lab) == "OFFSET_ILLEGAL"
        log = L.pull_log(lab)
        fix = log[log["text"].str.startswith("fix the pull request offset")]
        assert list(fix["t_ms"]) == [10_022]
        assert len(lab.deliveries()) == 20


@pytest.mark.parametrize(
    ("ex", "seed", "want"),
    [
        ("06.1", 7, 45),
        ("06.1", 12345, 56),
        ("06.2", 7, 191),
        ("06.2", 12345, 287),
        ("06.3", 150, ["NO_NEW_MSG", 0]),
        ("06.3", 250, ["OFFSET_ILLEGAL", 30]),
        ("06.3", 12345, ["FOUND", 3]),
    ],
)
def test_exercise_answers(ex, seed, want):
    """Exercises 06.1–06.3 (mechanisms.md "The consumer's pull loop" steps 2.1 and 2.6, docs/reference.md §10.14) have these exact answers."""
    assert expected(ex, seed) == want
    assert check(ex, want, seed=seed)
