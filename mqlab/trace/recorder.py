"""The in-memory trace recorder and the per-node tracer that components call.

A ``TraceRecorder`` belongs to one run (one Lab, one simulation driver, or one live
server). It numbers events with a run-wide ``seq`` and keeps them in a list. Components
never see the recorder: they get a ``NodeTracer`` bound to their node name and to the
driver's clock, and call ``tracer.emit(component, step, kind, **fields)`` guarded by
``tracer.enabled`` so that tracing off costs one attribute read.

Exports: ``to_pandas()`` (a tidy frame, one row per event, ``fields`` as JSON text plus
the decoded dict in ``fields_obj`` if asked), ``to_parquet(path)`` (pyarrow, zstd) and
``to_jsonl()`` (bytes; the "same seed, same bytes" determinism check compares these).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mqlab.trace.events import (
    COLUMNS,
    TRACE_SCHEMA_VERSION,
    Kind,
    TraceEvent,
    TraceLevel,
    new_event,
)

__all__ = ["TraceRecorder", "NodeTracer"]

# NOTE: performance — the levels as plain ints for the checks below, which every traced
# step makes (``tracer.enabled``, several a message on serve's send path): an IntEnum member
# read from its class costs ~100 ns on 3.11 (``EnumType``'s attribute lookup); comparing
# the recorder's level with an int gives the same answer.
_OFF = int(TraceLevel.OFF)
_FRAMES = int(TraceLevel.FRAMES)


class TraceRecorder:
    """Collects the events of one run.

    Args:
        run_id: the ``run_id`` column of every event.
        level: a ``TraceLevel``; ``OFF`` records nothing.
    """

    def __init__(self, run_id: str = "run-0", level: TraceLevel = TraceLevel.STEPS) -> None:
        self.run_id = run_id
        self.level = TraceLevel(level)
        self.events: list[TraceEvent] = []
        self._seq = 0
        self._listeners: list[Callable[[TraceEvent], None]] = []

    # -- recording --------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self.level > _OFF

    @property
    def frames_enabled(self) -> bool:
        return self.level >= _FRAMES

    def record(
        self, t_ms: int, node: str, component: str, step: str, kind: str, fields: dict[str, Any]
    ) -> TraceEvent | None:
        if self.level == _OFF:
            return None
        ev = new_event(self.run_id, t_ms, self._seq, node, component, step, kind, fields)
        self._seq += 1
        self.events.append(ev)
        for listener in self._listeners:
            listener(ev)
        return ev

    def subscribe(self, listener: Callable[[TraceEvent], None]) -> Callable[[], None]:
        """Call ``listener`` on every new event (a live view); returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def since(self, seq: int) -> list[TraceEvent]:
        """Events with ``seq >= seq`` (events are stored in seq order)."""
        if not self.events or seq > self.events[-1].seq:
            return []
        start = max(0, seq - self.events[0].seq)
        return self.events[start:]

    def clear(self) -> None:
        self.events.clear()

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    # -- queries ---------------------------------------------------------------------------------
    def select(
        self,
        *,
        component: str | None = None,
        step: str | None = None,
        node: str | None = None,
        kind: str | None = None,
    ) -> list[TraceEvent]:
        """Events matching every given attribute (``component`` matches a prefix too)."""
        out = []
        for e in self.events:
            if component is not None and not (
                e.component == component or e.component.startswith(component + ".")
            ):
                continue
            if step is not None and e.step != step:
                continue
            if node is not None and e.node != node:
                continue
            if kind is not None and e.kind != kind:
                continue
            out.append(e)
        return out

    # -- export ----------------------------------------------------------------------------------
    def to_jsonl(self, events: Iterable[TraceEvent] | None = None) -> bytes:
        evs = self.events if events is None else events
        return "".join(e.to_json() + "\n" for e in evs).encode()

    def to_pandas(self, *, decode_fields: bool = False):
        """A DataFrame with the columns of ``mqlab.trace.events.COLUMNS``."""
        import pandas as pd

        df = pd.DataFrame([e.to_row() for e in self.events], columns=list(COLUMNS))
        df = df.astype({"t_ms": "int64", "seq": "int64"})
        if decode_fields:
            df["fields_obj"] = [e.fields for e in self.events]
        return df

    def to_parquet(self, path, *, extra_columns: dict[str, Any] | None = None) -> None:
        """Write the events as Parquet (schema version in the file metadata)."""
        from mqlab.trace.export import write_parquet

        write_parquet(self.events, path, extra_columns=extra_columns)


class NodeTracer:
    """What a component holds: ``enabled`` and ``emit(component, step, kind, **fields)``.

    Bound to one node name and to a clock function (the driver's ``now``), so components
    never pass time or node names themselves.
    """

    __slots__ = ("recorder", "node", "_clock")

    def __init__(self, recorder: TraceRecorder, node: str, clock: Callable[[], int]) -> None:
        self.recorder = recorder
        self.node = node
        self._clock = clock

    @property
    def enabled(self) -> bool:
        return self.recorder.level > _OFF

    @property
    def frames_enabled(self) -> bool:
        return self.recorder.level >= _FRAMES

    def emit(self, component: str, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        self.recorder.record(self._clock(), self.node, component, step, kind, fields)


SCHEMA_VERSION = TRACE_SCHEMA_VERSION
