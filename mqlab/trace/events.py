"""Trace events: one record per step of a mechanism.

docs/design.md §3: "Tracing is the product". Each numbered step of each mechanism emits one
event ``(run_id, t_ms, seq, node, component, step, kind, fields)``. ``component`` is the
Java class (or ``Class.method``) that the step belongs to, ``step`` is the step
number of ``notebooks/mechanisms.md`` as a string ("5", "2a", ...) or a short name where the
mechanism has no number, and
``fields`` holds plain JSON values (ints, strings, bools, lists) describing the outcome.

This module owns the event shape and its schema version (documented in
``datasets/README.md``). It must not know who emits events or how they are shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

__all__ = ["TraceEvent", "TraceLevel", "Kind", "TRACE_SCHEMA_VERSION", "COLUMNS", "new_event"]

#: Bump when a column is added, removed or changes meaning (datasets/README.md).
TRACE_SCHEMA_VERSION = 1

#: Column order of the tabular form (pandas / Parquet).
COLUMNS = ("run_id", "t_ms", "seq", "node", "component", "step", "kind", "fields")


class TraceLevel(IntEnum):
    """How much a recorder keeps.

    OFF keeps nothing (the hot path pays one attribute check). STEPS keeps mechanism steps,
    timers firing, faults and state changes. FRAMES adds one event per remoting frame
    sent and received.
    """

    OFF = 0
    STEPS = 1
    FRAMES = 2


class Kind:
    """Event kinds (a closed vocabulary, so figures can colour by it)."""

    STEP = "step"  # a numbered mechanism step and its outcome
    TIMER = "timer"  # a timer fired (the component names the Java service)
    SEND = "send"  # a frame left a node (FRAMES level)
    RECV = "recv"  # a frame reached a node (FRAMES level)
    FAULT = "fault"  # an injected fault (drop, delay, kill, restart, ...)
    STATE = "state"  # a node started, stopped, or changed a setting
    ERROR = "error"  # a malformed frame, a handler exception, a closed connection


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One trace record. ``fields`` must hold JSON-serialisable values only."""

    run_id: str
    t_ms: int
    seq: int
    node: str
    component: str
    step: str
    kind: str
    fields: dict[str, Any]

    def to_row(self) -> dict[str, Any]:
        """A flat row; ``fields`` becomes a compact JSON string with sorted keys."""
        return {
            "run_id": self.run_id,
            "t_ms": self.t_ms,
            "seq": self.seq,
            "node": self.node,
            "component": self.component,
            "step": self.step,
            "kind": self.kind,
            "fields": json.dumps(self.fields, sort_keys=True, separators=(",", ":")),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_row(), sort_keys=False, separators=(",", ":"))

    def describe(self) -> str:
        """The event in words, for panels and logs: ``t=20000 broker-a Pull... step 5: ...``."""
        text = self.fields.get("text")
        if text is None:
            text = ", ".join(f"{k}={v}" for k, v in self.fields.items())
        step = f" step {self.step}" if self.step else ""
        return f"t={self.t_ms} {self.node} {self.component}{step}: {text}"


def _event_maker():
    new = object.__new__
    s_run, s_t, s_seq, s_node, s_comp, s_step, s_kind, s_fields = (
        TraceEvent.__dict__[name].__set__ for name in COLUMNS
    )

    def new_event(
        run_id: str, t_ms: int, seq: int, node: str, component: str, step: str, kind: str,
        fields: dict[str, Any],
    ) -> TraceEvent:  # fmt: skip
        ev = new(TraceEvent)
        s_run(ev, run_id)
        s_t(ev, t_ms)
        s_seq(ev, seq)
        s_node(ev, node)
        s_comp(ev, component)
        s_step(ev, step)
        s_kind(ev, kind)
        s_fields(ev, fields)
        return ev

    return new_event


#: ``TraceEvent(...)`` by position, the same event, for the recorder's hot path.
#: NOTE: performance — a frozen dataclass's ``__init__`` sets each field through
#: ``object.__setattr__`` (~2.2 µs for these 8); the slots' own setters take ~0.8 µs. A run
#: of the explorer records ~370 events (consumer_join). The event stays frozen: setting a
#: field afterwards raises ``FrozenInstanceError`` as before.
new_event = _event_maker()
