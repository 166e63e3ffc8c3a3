"""Tables of a failover sweep, one Parquet file per grid point, and back.

Mirrors no RocketMQ class. ``master_loss`` (replication) and ``leader_loss`` (DLedger)
record their sends and runs the same way: a directory per table, partitioned by ``point``
(``point=p000/part-0.parquet``, zstd), each file with the table's Arrow schema and two
metadata keys, the dataset's schema version and the table's name (datasets/README.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

__all__ = ["typed", "write_point_table", "read_point_table"]

#: A column's declared type → its pandas dtype.
_PANDAS = {"string": "object", "int64": "int64", "bool": "bool"}


def typed(df: Any, columns: list[tuple[str, str]]) -> Any:
    """``df`` with each column cast to its declared type, the index renumbered."""
    return df.astype({n: _PANDAS[t] for n, t in columns}).reset_index(drop=True)


def write_point_table(df: Any, columns: list[tuple[str, str]], root: Path, *, table: str,
                      version_key: str, version: int) -> None:  # fmt: skip
    """Replace ``root`` with ``df``'s rows, one ``point=<p>/part-0.parquet`` per point;
    ``version_key`` (``mqlab.<dataset>_schema_version``) and ``mqlab.table`` in the schema's
    metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mqlab.experiments.schema import _ARROW

    if root.exists():
        shutil.rmtree(root)
    stored = [(n, t) for n, t in columns if n != "point"]
    meta = {version_key: str(version), "mqlab.table": table}
    schema = pa.schema([pa.field(n, getattr(pa, _ARROW[t])()) for n, t in stored], metadata=meta)
    for point, part in df.groupby("point", sort=True):
        target = root / f"point={point}"
        target.mkdir(parents=True)
        t = pa.Table.from_pandas(part[[n for n, _ in stored]], schema=schema, preserve_index=False)
        pq.write_table(t, target / "part-0.parquet", compression="zstd")


def read_point_table(root: Path, columns: list[tuple[str, str]]) -> Any:
    """The table under ``root`` (pandas), its columns in ``columns``' order and types, sorted
    by point, seed and (for sends) n."""
    import pyarrow.dataset as ds

    df = ds.dataset(root, format="parquet", partitioning="hive").to_table().to_pandas()
    df["point"] = df["point"].astype(str)
    order = [n for n, _ in columns]
    sort = ["point", "seed", "n"] if "n" in order else ["point", "seed"]
    return typed(df[order].sort_values(sort), columns)
