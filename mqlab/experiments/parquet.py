"""Sweep results on disk: partitioned Parquet (pyarrow) and a provenance manifest.

Mirrors no RocketMQ class. Layout of an output directory::

    DIR/sweep.json                          what ran: spec, mqlab version, command, schemas
    DIR/metrics/point=p000/part-0.parquet   one row per run (schema.metrics_columns)
    DIR/events/point=p000/part-0.parquet    trace events (schema.EVENT_COLUMNS)

Partitioned by grid point (Hive style, ``point`` as a string), zstd. Spark writes the same
layout (``partitionBy("point")``, its own file names); ``read_metrics`` / ``read_events``
read either, with the columns in schema order and rows sorted by (point, seed[, seq]).
This module owns file I/O only; it must not know how runs execute.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqlab.experiments.schema import (
    EVENT_COLUMNS,
    METRICS_SCHEMA_VERSION,
    arrow_schema,
)
from mqlab.trace.events import TRACE_SCHEMA_VERSION

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.experiments.sweep import Sweep

__all__ = [
    "manifest",
    "write_manifest",
    "write_tables",
    "read_metrics",
    "read_events",
    "read_manifest",
    "mqlab_version",
    "source_revision",
    "sort_metrics",
    "sort_events",
]


def mqlab_version() -> str:
    try:
        from importlib.metadata import version

        return version("mqlab")
    except Exception:  # noqa: BLE001 — not installed as a distribution
        return "unknown"


def source_revision() -> str | None:
    """The git commit of the mqlab checkout (with "+local changes" if dirty), if any."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "mqlab"],
                               capture_output=True, text=True, timeout=10, check=True).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head + (" +local changes" if dirty.strip() else "")


def manifest(sweep: Sweep, *, runs: int, command: str | None = None) -> dict[str, Any]:
    """Provenance of a sweep's output: exact command, mqlab version and git revision,
    schema versions, the spec as run."""
    return {
        "command": command,
        "mqlab_version": mqlab_version(),
        "source_revision": source_revision(),
        "python": sys.version.split()[0],
        "metrics_schema_version": METRICS_SCHEMA_VERSION,
        "trace_schema_version": TRACE_SCHEMA_VERSION,
        "runs": runs,
        "points": [{"point": f"p{i:03d}", **p} for i, p in enumerate(sweep.points())],
        "spec": sweep.to_dict(),
    }


def write_manifest(out_dir: str | Path, data: dict[str, Any]) -> Path:
    path = Path(out_dir) / "sweep.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read_manifest(out_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(out_dir) / "sweep.json").read_text(encoding="utf-8"))


def _write_partitioned(df: pd.DataFrame, columns: list[tuple[str, str]], root: Path,
                       kind: str) -> None:  # fmt: skip
    import pyarrow as pa
    import pyarrow.parquet as pq

    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    stored = [(n, t) for n, t in columns if n != "point"]
    schema = arrow_schema(stored, kind=kind)
    for point, part in df.groupby("point", sort=True):
        table = pa.Table.from_pandas(part[[n for n, _ in stored]], schema=schema,
                                     preserve_index=False)  # fmt: skip
        target = root / f"point={point}"
        target.mkdir()
        pq.write_table(table, target / "part-0.parquet", compression="zstd")


def write_tables(out_dir: str | Path, metrics: pd.DataFrame, events: pd.DataFrame,
                 metric_columns: list[tuple[str, str]]) -> None:  # fmt: skip
    """Write both tables under ``out_dir`` (replacing earlier ``metrics/`` and ``events/``)."""
    out = Path(out_dir)
    _write_partitioned(metrics, metric_columns, out / "metrics", "metrics")
    _write_partitioned(events, EVENT_COLUMNS, out / "events", "events")
    if events.empty:
        (out / "events").mkdir(parents=True, exist_ok=True)


def _read(root: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([("point", pa.string())]), flavor="hive")
    dataset = ds.dataset(str(root), format="parquet", partitioning=part)
    return dataset.to_table().to_pandas()


def sort_metrics(df: pd.DataFrame) -> pd.DataFrame:
    """Canonical order: columns ids/params/metrics with ``point`` third; rows by point, seed."""
    cols = [c for c in df.columns if c != "point"]
    cols.insert(2, "point")
    return df[cols].sort_values(["point", "seed"], kind="stable").reset_index(drop=True)


def sort_events(df: pd.DataFrame) -> pd.DataFrame:
    cols = [n for n, _ in EVENT_COLUMNS]
    return df[cols].sort_values(["point", "seed", "seq"], kind="stable").reset_index(drop=True)


def read_metrics(out_dir: str | Path) -> pd.DataFrame:
    """The metrics table of an output directory (written by pyarrow or Spark)."""
    return sort_metrics(_read(Path(out_dir) / "metrics"))


def read_events(out_dir: str | Path) -> pd.DataFrame:
    """The events table of an output directory (empty frame if no events were kept)."""
    import pandas as pd

    root = Path(out_dir) / "events"
    if not any(root.rglob("*.parquet")):
        return pd.DataFrame({n: pd.Series(dtype=_PANDAS[t]) for n, t in EVENT_COLUMNS})
    return sort_events(_read(root))


_PANDAS = {"string": "object", "int64": "int64", "float64": "float64", "bool": "bool"}
