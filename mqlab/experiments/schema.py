"""The tables a sweep produces: metrics (one row per run) and events (the runs' traces).

Mirrors no RocketMQ class. This module owns the column lists, their types, the schema
versions (documented in ``datasets/README.md``) and the one conversion every runner uses
from a run's output to typed rows, so the sequential, process-pool and Spark runners give
identical rows. It builds pyarrow and Spark schemas from the same list. It must not know
how runs execute or where files go.

Types are named ``string``, ``int64``, ``float64`` and ``bool``. Metric columns that may
be undefined (no deliveries → no latency; no membership change → no convergence time) are
``float64`` and null.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mqlab.trace.events import COLUMNS as TRACE_COLUMNS
from mqlab.trace.events import TRACE_SCHEMA_VERSION

__all__ = [
    "METRICS_SCHEMA_VERSION",
    "ID_COLUMNS",
    "METRIC_COLUMNS",
    "EVENT_COLUMNS",
    "metrics_columns",
    "param_type",
    "param_value",
    "arrow_schema",
    "spark_schema",
    "check_param_column",
]

#: Bump when a metrics column is added, removed or changes meaning (datasets/README.md).
METRICS_SCHEMA_VERSION = 1

#: Identify a run: the sweep, the grid point (Parquet partition), the seed, all params as JSON.
ID_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "string"),
    ("sweep", "string"),
    ("point", "string"),
    ("seed", "int64"),
    ("params", "string"),
]

#: What a run measures (``mqlab.experiments.metrics.compute_metrics``), in order.
METRIC_COLUMNS: list[tuple[str, str]] = [
    ("duration_ms", "int64"),
    ("sent", "int64"),
    ("send_failed", "int64"),
    ("stored", "int64"),
    ("delivered", "int64"),
    ("deliveries", "int64"),
    ("duplicates", "int64"),
    ("dup_rebalance", "int64"),
    ("dup_crash", "int64"),
    ("dup_unexplained", "int64"),
    ("lost", "int64"),
    ("lost_not_stored", "int64"),
    ("lost_allowed_by", "string"),
    ("latency_p50_ms", "float64"),
    ("latency_p95_ms", "float64"),
    ("latency_p99_ms", "float64"),
    ("latency_mean_ms", "float64"),
    ("pulls_issued", "int64"),
    ("pulls_found", "int64"),
    ("pulls_empty", "int64"),
    ("pulls_suspended", "int64"),
    ("flow_control_episodes", "int64"),
    ("flow_control_deferrals", "int64"),
    ("rebalances", "int64"),
    ("queue_moves", "int64"),
    ("membership_changes", "int64"),
    ("convergence_ms", "float64"),
    ("unconverged_changes", "int64"),
    ("retries", "int64"),
    ("dlq", "int64"),
    ("final_lag", "int64"),
    ("trace_events", "int64"),
]

#: The trace schema's eight columns plus the run's seed and grid point.
EVENT_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "string"),
    ("t_ms", "int64"),
    ("seq", "int64"),
    ("node", "string"),
    ("component", "string"),
    ("step", "string"),
    ("kind", "string"),
    ("fields", "string"),
    ("seed", "int64"),
    ("point", "string"),
]
assert tuple(n for n, _ in EVENT_COLUMNS[:8]) == TRACE_COLUMNS, "events extend the trace schema"

_RESERVED = {n for n, _ in ID_COLUMNS} | {n for n, _ in METRIC_COLUMNS}
_IDENT = re.compile(r"[a-z_][a-z0-9_]*\Z")


def check_param_column(name: str) -> str:
    """A grid column name: lower-case identifier, not a fixed column. Returns it."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError(f"parameter column {name!r} must be a lower-case identifier")
    if name in _RESERVED:
        raise ValueError(f"parameter column {name!r} clashes with a metrics column")
    return name


def param_type(values: list[Any]) -> str:
    """The column type for a grid parameter's values (mixed or nested → JSON string)."""
    if values and all(isinstance(v, bool) for v in values):
        return "bool"
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "float64"
    return "string"


def param_value(value: Any, kind: str) -> Any:
    """``value`` as stored in a column of type ``kind``."""
    if kind == "float64":
        return float(value)
    if kind == "string" and not isinstance(value, str):
        return json.dumps(value, sort_keys=True)
    return value


def metrics_columns(param_types: dict[str, str]) -> list[tuple[str, str]]:
    """All metrics-table columns: ids, then one per grid parameter, then the metrics."""
    return ID_COLUMNS + list(param_types.items()) + METRIC_COLUMNS


_ARROW = {"string": "string", "int64": "int64", "float64": "float64", "bool": "bool_"}
_SPARK = {"string": "StringType", "int64": "LongType", "float64": "DoubleType",
          "bool": "BooleanType"}  # fmt: skip


def arrow_schema(columns: list[tuple[str, str]], *, kind: str = "metrics"):
    """A pyarrow schema; the file metadata carries the schema versions."""
    import pyarrow as pa

    meta = {
        "mqlab.metrics_schema_version": str(METRICS_SCHEMA_VERSION),
        "mqlab.trace_schema_version": str(TRACE_SCHEMA_VERSION),
        "mqlab.table": kind,
    }
    return pa.schema([pa.field(n, getattr(pa, _ARROW[t])()) for n, t in columns], metadata=meta)


def spark_schema(columns: list[tuple[str, str]]):
    """The same columns as a ``pyspark.sql.types.StructType`` (all nullable)."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(n, getattr(T, _SPARK[t])(), True) for n, t in columns])
