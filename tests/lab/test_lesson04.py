"""Lesson 04 (long polling, mechanisms.md "Long polling"): exercise answers for fixed seeds and the polling helpers."""

from __future__ import annotations

import pytest

from mqlab.lab import Lab
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson04 as L


@pytest.mark.parametrize(
    ("ex_id", "seed", "answer"),
    [
        ("04.1", 20521, 30001),  # parked 10522: deadline 25522, first check 30000, +1 ms
        ("04.1", 50381, 25001),  # parked 7382: deadline 22382, check at 25000
        ("04.2", 20521, 12001),  # short polling: 10522 + 1000 → check at 12000
        ("04.2", 50381, 9001),  # 7382 + 1000 → check at 9000
        ("04.3", 20521, 13523),  # woken when the message is stored at 13522
        ("04.3", 50381, 10383),
        ("04.4", 20521, [20, 15001]),  # TagB at 13522; the 15000 check replays: NO_MATCHED_MESSAGE
        ("04.4", 999, [20, 10001]),  # TagB at 5000, same ms as a check: the check runs first
    ],
)
def test_exercise_answers(ex_id, seed, answer):
    """The computed answers for fixed seeds (mechanisms.md "Long polling" notifyMessageArriving steps 3–5)."""
    assert expected(ex_id, seed) == answer
    assert check(ex_id, answer, seed=seed)


def test_park_time_range():
    """Pulls park between 1 001 and 5 000 ms."""
    assert [L.park_time(s) for s in (0, 10999, 11000)] == [1001, 12000, 1001]


def test_hold_events_follow_a_parked_pull_to_its_timeout():
    """Parked at 2000: checks at 5000/10000/15000 keep it (step 5), 20000 answers it (step 4)."""
    with Lab(seed=1) as lab:
        L.send_message(lab, queue_id=0)
        call = L.park_pull(lab, 2000)
        assert lab.held_pulls()["deadline"].tolist() == [17000]
        lab.advance(20_001 - lab.now)
        ev = L.hold_events(lab, 2000)
        notify = ev[ev["component"] == "PullRequestHoldService.notifyMessageArriving"]
        assert list(zip(notify["t_ms"], notify["step"], strict=True)) == [
            (5000, "5"), (10000, "5"), (15000, "5"), (20000, "4"),
        ]  # fmt: skip
        assert (call.code, call.remark, call.done_at) == (19, "NO_MESSAGE_IN_QUEUE", 20001)


def test_polling_lab_and_delivery_latency():
    """Long polling delivers each message 1 ms after it is stored (reput wakes the parked pull)."""
    with L.polling_lab(3, duration_ms=20_000, messages=5) as lab:
        lat = L.delivery_latency(lab)
        assert len(lat) == 6  # the "create" message and the 5 arrivals
        assert lat["latency_ms"].tolist()[1:] == [1, 1, 1, 1, 1]


def test_compare_polling_numbers():
    """Same arrivals, seed 20521: short polling serves ~5× the pulls and waits up to ~1 s."""
    df = L.compare_polling(20521).set_index("longPollingEnable")
    assert df.loc[True, "pull_requests"] == 34 and df.loc[False, "pull_requests"] == 161
    assert df.loc[True, "max_latency_ms"] == 1 and df.loc[False, "max_latency_ms"] == 944
    assert df.loc[True, "messages_consumed"] == df.loc[False, "messages_consumed"] == 20
