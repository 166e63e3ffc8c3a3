"""Local runners: a sweep's runs one after another, or in a process pool.

Mirrors no RocketMQ class. Both runners call ``task.execute`` on ``Sweep.configs()`` and
shape the outputs with ``frames``, so they give the same rows as each other and as the
Spark runner (``mqlab.experiments.spark``). ``run_process_pool`` uses
``concurrent.futures.ProcessPoolExecutor`` with the ``spawn`` start method by default
(safe next to a running JVM or threads); each worker imports mqlab once. Progress is a
``tqdm.auto`` bar (a widget in Jupyter, text elsewhere).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mqlab.experiments.parquet import manifest, sort_events, sort_metrics, write_manifest
from mqlab.experiments.parquet import write_tables as _write_tables
from mqlab.experiments.schema import EVENT_COLUMNS, arrow_schema, metrics_columns
from mqlab.experiments.sweep import Sweep
from mqlab.experiments.task import RunOutput, execute

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SweepResult", "frames", "run_sequential", "run_process_pool"]


@dataclass(slots=True)
class SweepResult:
    """A sweep's results as pandas frames (metrics: one row per run; events)."""

    sweep: Sweep
    metrics: pd.DataFrame
    events: pd.DataFrame

    def write(self, out_dir: str | Path, *, command: str | None = None) -> Path:
        """Write partitioned Parquet and ``sweep.json`` under ``out_dir``; return it."""
        out = Path(out_dir)
        _write_tables(out, self.metrics, self.events, metrics_columns(self.sweep.param_types))
        write_manifest(out, manifest(self.sweep, runs=len(self.metrics), command=command))
        return out


def frames(sweep: Sweep, outputs: Iterable[RunOutput]) -> SweepResult:
    """Typed pandas frames (through pyarrow, as the files hold them) in canonical order."""
    import pyarrow as pa

    outputs = list(outputs)
    mcols = metrics_columns(sweep.param_types)
    mt = pa.Table.from_pylist([o.metrics for o in outputs], schema=arrow_schema(mcols))
    rows = [e for o in outputs for e in o.events]
    names = [n for n, _ in EVENT_COLUMNS]
    ecols = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    et = pa.Table.from_pydict(ecols, schema=arrow_schema(EVENT_COLUMNS, kind="events"))
    return SweepResult(sweep, sort_metrics(mt.to_pandas()), sort_events(et.to_pandas()))


def _bar(total: int, desc: str, progress: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="run", disable=not progress)


def run_sequential(sweep: Sweep, *, progress: bool = True) -> SweepResult:
    """Run every configuration in this process, in order."""
    configs = sweep.configs()
    outputs = []
    with _bar(len(configs), f"{sweep.name} (sequential)", progress) as bar:
        for cfg in configs:
            outputs.append(execute(cfg))
            bar.update(1)
    return frames(sweep, outputs)


def run_process_pool(
    sweep: Sweep, *, max_workers: int | None = None, progress: bool = True,
    mp_context: str = "spawn", chunksize: int = 1,
) -> SweepResult:  # fmt: skip
    """Run the configurations in ``max_workers`` processes (default: CPU count)."""
    configs = sweep.configs()
    workers = max_workers or os.cpu_count() or 1
    ctx = multiprocessing.get_context(mp_context)
    outputs = []
    with (
        ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool,
        _bar(len(configs), f"{sweep.name} (pool ×{workers})", progress) as bar,
    ):
        for out in pool.map(execute, configs, chunksize=chunksize):
            outputs.append(out)
            bar.update(1)
    return frames(sweep, outputs)
