"""Trace events, the recorder, and their export (docs/design.md §3)."""

from mqlab.trace.events import COLUMNS, TRACE_SCHEMA_VERSION, Kind, TraceEvent, TraceLevel
from mqlab.trace.recorder import NodeTracer, TraceRecorder

__all__ = [
    "COLUMNS",
    "TRACE_SCHEMA_VERSION",
    "Kind",
    "NodeTracer",
    "TraceEvent",
    "TraceLevel",
    "TraceRecorder",
]
