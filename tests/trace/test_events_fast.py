"""``new_event`` builds the very event ``TraceEvent(...)`` does, and it stays frozen."""

from __future__ import annotations

import dataclasses

import pytest

from mqlab.trace.events import COLUMNS, Kind, TraceEvent, new_event
from mqlab.trace.recorder import TraceRecorder


def test_new_event_equals_the_dataclass_constructor():
    args = ("run-1", 20_000, 7, "broker-a", "PullMessageProcessor", "5", Kind.STEP, {"n": 1})
    fast, plain = new_event(*args), TraceEvent(*args)
    assert fast == plain
    assert repr(fast) == repr(plain)
    assert fast.to_json() == plain.to_json()
    assert [f.name for f in dataclasses.fields(fast)] == list(COLUMNS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.seq = 8  # type: ignore[misc]


def test_the_recorder_numbers_and_keeps_its_events():
    rec = TraceRecorder("r")
    a = rec.record(5, "n", "C", "1", Kind.STEP, {"text": "a"})
    b = rec.record(6, "n", "C", "2", Kind.TIMER, {})
    assert rec.events == [a, b]
    assert (a.seq, b.seq, b.t_ms, b.kind) == (0, 1, 6, "timer")
    assert a == TraceEvent("r", 5, 0, "n", "C", "1", Kind.STEP, {"text": "a"})
