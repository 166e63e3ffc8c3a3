"""Lesson 07 (consumption, retry and the DLQ): helpers and exact exercise answers."""

import contextlib
import io

import pytest

from mqlab.lab.check import check, expected
from mqlab.lab.checkers import check_retry_timing
from mqlab.lab.lessons import lesson07 as L


def test_flaky_retries_on_the_delay_table():
    """docs/reference.md §10.7: retries 1..3 use levels 3, 4, 5 = 10 s, 30 s, 1 min (+ the 100 ms schedule tick)."""
    with L.retry_lab(1, L.Flaky(3)) as lab:
        lab.send("TopicTest", "order-1", tags="Flaky")
        lab.advance(120_000)
        h = L.delivery_history(lab)
        gaps = h["since_previous_ms"].dropna().astype(int).tolist()
        assert [g // 100 * 100 for g in gaps] == [10_000, 30_100, 60_100]
        assert list(h["reconsume_times"].iloc[-4:]) == [0, 1, 2, 3]
        assert check_retry_timing(lab, "CG").ok
        assert L.schedule_queues_used(lab) == [2, 3, 4]


def test_dlq_after_16_retries_with_fast_levels():
    """docs/reference.md §10.7 step 8: reconsumeTimes 16 ≥ maxReconsumeTimes 16 → %DLQ%CG queue 0."""
    with L.retry_lab(1, L.Flaky(100), delay_levels=L.FAST_LEVELS) as lab:
        lab.send("TopicTest", "order-1", tags="Flaky")
        lab.advance(30_000)
        q = lab.queues().set_index("topic")
        assert q.loc["%DLQ%CG", "max_offset"] == 1 and q.loc["%RETRY%CG", "max_offset"] == 16
        assert L.sent_back(lab) == 17


def test_retry_schedule_table():
    """docs/reference.md §10.7: 16 retries at levels 3..18 sum to 17 140 s; schedule queue = level − 1."""
    s = L.retry_schedule()
    assert list(s["delay_level"]) == list(range(3, 19))
    assert list(s["schedule_queue"]) == list(range(2, 18))
    assert s["since_first_ms"].iloc[-1] == 17_140_000
    assert L.retry_schedule(L.FAST_LEVELS, retries=3)["since_first_ms"].tolist() == [
        1000, 2000, 3000
    ]  # fmt: skip


def test_flaky_validates():
    """Flaky refuses a negative fail count, naming the argument."""
    with pytest.raises(ValueError, match="fail_times"):
        L.Flaky(-1)


@pytest.mark.parametrize(
    ("ex", "seed", "want"),
    [
        ("07.1", 7, 220),
        ("07.1", 12345, 40),
        ("07.2", 7, [3, [2, 3]]),
        ("07.2", 12345, [4, [2, 3, 4]]),
        ("07.3", 250, 8),
        ("07.3", 99999, 9),
    ],
)
def test_exercise_answers(ex, seed, want):
    """Exercises 07.1–07.3 (mechanisms.md "Consumption", docs/reference.md §10.7, §10.15) have these exact answers."""
    assert expected(ex, seed) == want
    assert check(ex, want, seed=seed)


def test_first_round_trip_timeline_is_zoomed():
    """Section 2's figure draws [first, first + 10 200] ms, not 0–30 000 (parked pulls clipped)."""
    from mqlab.lab import figures

    with L.retry_lab(1, L.Flaky(3)) as lab:
        lab.send("TopicTest", "order-1", tags="Flaky")
        lab.advance(30_000)
        h = L.delivery_history(lab)
        first = int(h[h["reconsume_times"] == 0]["t_ms"].max())
        fig = figures.sequence_timeline(
            lab, nodes=["consumer-1", "broker-a"], start_ms=first, end_ms=first + 10_200
        )
        assert list(fig.layout.xaxis.range) == [first - 204, first + 10_200 + 204]  # 2 % each side
        bars = [t for t in fig.data if t.type == "bar"]
        assert bars and all(min(b.base) >= first for b in bars)
        assert all(max(s + x for s, x in zip(b.base, b.x, strict=True)) <= first + 10_200
                   for b in bars)  # fmt: skip


def test_panel_log_shows_each_send_back_cause_first_and_keeps_them():
    """Section 5's walk ("fails", send, advance 10 000 twice): the consumer's send-back is
    logged before the broker's "send back … delay level 3" (the request leaves first), and
    after the second advance the log still shows the first send-back (issue 20, defect 12)."""
    import html
    import re

    from mqlab.lab.widgets import control_panel

    with L.retry_lab(1, L.Flaky(3)) as lab:
        lab.send("TopicTest", "order-1", tags="Flaky")
        lab.advance(120_000)
        panel = control_panel(lab, sections=["send", "consumers", "time", "toggles", "log"])
        panel.inputs["listener"].value = "fails"
        panel.buttons["send"].click()
        panel.inputs["advance_ms"].value = "10000"
        panel.buttons["advance"].click()
        panel.buttons["advance"].click()
        lines = [ln for ln in panel.messages if "send back" in ln]
        who = [(re.search(r"t=(\d+) (\S+)", ln).groups(), "delay level" in ln) for ln in lines]
        # (consumer's request, broker's store) per failure: level 3, then level 4
        assert [(node, broker) for (_t, node), broker in who] == [
            ("consumer-1", False), ("broker-a", True), ("consumer-1", False), ("broker-a", True),
        ]  # fmt: skip
        times = [int(t) for (t, _node), _b in who]
        assert times == sorted(times) and times[1] == times[0] + 1
        assert "with delay level 3" in lines[1] and "with delay level 4" in lines[3]
        log = html.unescape(panel.log.value)
        assert lines[0].strip() in log and lines[1].strip() in log  # the first one is still shown
        assert "earlier lines not shown" not in log


def test_one_slow_frame_gives_no_duplicate_as_the_prose_says():
    """Section 6: ``d6 l1`` gives ``retry=2 dlq=2``, through the lesson's helper as through
    ``python -m mqlab explore retry_rebalance --replay "d6 l1"`` (the scenario's 1 ms
    reorder window; the helper once replayed without it and got the default's class)."""
    from mqlab.explore.cli import main as explore
    from mqlab.lab.lessons.lesson05 import replay_schedule

    assert replay_schedule("retry_rebalance", "d6 l1").outcome == "retry=2 dlq=2"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert explore(["retry_rebalance", "--replay", "d6 l1", "--no-progress"]) == 0
    assert "retry=2 dlq=2" in out.getvalue()


def test_a_rebalance_during_a_retry_sends_a_message_back_twice():
    """Section 6: retry_rebalance is dup:rebalance=1 dup:sent-back-twice=1 overlap=1 retry=3
    dlq=3; consumer-2 consumes queue 1's offset 0 again at 3 016 ms (offset read as 0 at
    3 014), and %RETRY%CG offsets 0 and 2 are the same message (3 101 and 4 101 ms)."""
    from mqlab.lab.lessons.lesson05 import replay_schedule

    run = replay_schedule("retry_rebalance")
    assert run.outcome == "dup:rebalance=1 dup:sent-back-twice=1 overlap=1 retry=3 dlq=3"
    d = run.deliveries
    rows = [(int(t), c, q, int(o), int(r)) for t, c, q, o, r in
            d[["t_ms", "consumer", "queue", "queue_offset", "reconsume_times"]].itertuples(index=False)]  # fmt: skip
    assert rows == [
        (2010, "consumer-1", "TopicTest", 0, 0),
        (2010, "consumer-1", "TopicTest", 0, 0),
        (3016, "consumer-2", "TopicTest", 0, 0),
        (3101, "consumer-1", "%RETRY%CG", 0, 1),
        (3103, "consumer-1", "%RETRY%CG", 1, 1),
        (4101, "consumer-1", "%RETRY%CG", 2, 1),
    ]
    ids = list(d["msg_id"])
    assert ids[2] == ids[3] == ids[5] != ids[4]  # one message: TopicTest, then two retry copies
    dup = run.duplicates
    assert [(int(a), int(b), c) for a, b, c in dup[["first_t_ms", "again_t_ms", "cause"]].itertuples(index=False)] == [
        (2010, 3016, "rebalance overlap"),
        (3016, 3101, "retry"),
        (3101, 4101, "rebalance overlap (sent back twice)"),
        (2010, 3103, "retry"),
    ]  # fmt: skip
    ev = run.events
    reads = ev[
        (ev["component"] == "RemoteBrokerOffsetStore.readOffset") & (ev["node"] == "consumer-2")
    ]
    assert [(int(t), x[-3:]) for t, x in zip(reads["t_ms"], reads["text"], strict=True) if "queueId=1" in x] == [
        (3014, ": 0")
    ]  # fmt: skip
