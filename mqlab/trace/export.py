"""Parquet export of trace events (pyarrow, explicit schema, zstd).

The schema is versioned (``TRACE_SCHEMA_VERSION``) and documented in
``datasets/README.md``; it is written into the file's key-value metadata as
``mqlab.trace_schema_version`` so readers can check what they load.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mqlab.trace.events import TRACE_SCHEMA_VERSION, TraceEvent

__all__ = ["arrow_schema", "events_to_table", "write_parquet"]


def arrow_schema(extra: dict[str, Any] | None = None):
    import pyarrow as pa

    fields = [
        pa.field("run_id", pa.dictionary(pa.int32(), pa.string())),
        pa.field("t_ms", pa.int64()),
        pa.field("seq", pa.int64()),
        pa.field("node", pa.dictionary(pa.int32(), pa.string())),
        pa.field("component", pa.dictionary(pa.int32(), pa.string())),
        pa.field("step", pa.dictionary(pa.int32(), pa.string())),
        pa.field("kind", pa.dictionary(pa.int32(), pa.string())),
        pa.field("fields", pa.string()),
    ]
    for name, value in (extra or {}).items():
        fields.append(pa.field(name, pa.scalar(value).type))
    return pa.schema(fields, metadata={"mqlab.trace_schema_version": str(TRACE_SCHEMA_VERSION)})


def events_to_table(events: Iterable[TraceEvent], *, extra_columns: dict[str, Any] | None = None):
    import pyarrow as pa

    rows = [e.to_row() for e in events]
    schema = arrow_schema(extra_columns)
    cols: dict[str, list[Any]] = {name: [r[name] for r in rows] for name in schema.names[:8]}
    for name, value in (extra_columns or {}).items():
        cols[name] = [value] * len(rows)
    arrays = [pa.array(cols[f.name], type=f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(
    events: Iterable[TraceEvent], path, *, extra_columns: dict[str, Any] | None = None
) -> None:
    import pyarrow.parquet as pq

    pq.write_table(events_to_table(events, extra_columns=extra_columns), path, compression="zstd")
