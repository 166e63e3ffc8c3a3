"""The recorded sweeps shipped under ``datasets/``: where they are, how to load and remake them.

Mirrors no RocketMQ class. Each dataset is the output directory of one sweep spec in
``datasets/specs/<name>.yaml`` (``metrics/``, ``events/``, ``sweep.json``), made with
``python -m mqlab experiment run datasets/specs/<name>.yaml --out datasets/<name>``
(``command(name)``). Lesson 09 loads them (pandas or Spark) so it works without
re-running hundreds of simulations; ``regenerate`` re-runs a spec (optionally only its first
seeds) to check that the shipped rows still match the code.

``datasets_dir()`` is the repository's ``datasets/`` next to the ``mqlab`` package (an
editable install), or ``$MQLAB_DATASETS``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = [
    "DATASETS",
    "datasets_dir",
    "readme",
    "spec_path",
    "dataset_path",
    "command",
    "load_metrics",
    "load_events",
    "spark_table",
    "regenerate",
]

#: Shipped datasets: name → what question it answers.
DATASETS = {
    "long_vs_short_polling": "pulls issued and delivery latency with longPollingEnable on/off "
    "at 0, 1 and 10 messages/s (lesson 04)",
    "allocation_under_churn": "queue moves, duplicates and convergence time of AVG, "
    "AVG_BY_CIRCLE and CONSISTENT_HASH when consumers join, crash and leave (lesson 05)",
    "crash_offset_persist": "duplicates after a consumer crash with and without committing "
    "offsets first (lesson 08)",
    "flow_control_thresholds": "flow-control episodes, pulls and latency for "
    "pullThresholdForQueue 4, 16, 64, 256 under a burst (pull-loop step 2.1, lesson 06)",
}


def datasets_dir() -> Path:
    """The ``datasets/`` directory (``$MQLAB_DATASETS`` overrides)."""
    env = os.environ.get("MQLAB_DATASETS")
    if env:
        return Path(env)
    import mqlab

    path = Path(mqlab.__file__).resolve().parent.parent / "datasets"
    if not path.is_dir():
        raise FileNotFoundError(
            f"no datasets directory at {path}: install mqlab from a checkout "
            "(pip install -e .) or set MQLAB_DATASETS"
        )
    return path


def readme() -> Any:
    """``datasets/README.md`` (what each recorded sweep asks, its schema and the command that made
    it) as Markdown a notebook renders: the lab's file browser starts at ``notebooks/`` and cannot
    open the file itself."""
    from IPython.display import Markdown

    return Markdown((datasets_dir() / "README.md").read_text(encoding="utf-8"))


def _check(name: str) -> str:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}")
    return name


def spec_path(name: str) -> Path:
    """``datasets/specs/<name>.yaml``: the sweep that made the dataset."""
    return datasets_dir() / "specs" / f"{_check(name)}.yaml"


def dataset_path(name: str) -> Path:
    """``datasets/<name>``: the recorded output (metrics/, events/, sweep.json)."""
    return datasets_dir() / _check(name)


def command(name: str) -> str:
    """The exact command that regenerates ``name`` (run from the repository root)."""
    _check(name)
    return f"python -m mqlab experiment run datasets/specs/{name}.yaml --out datasets/{name}"


def load_metrics(name: str):
    """The dataset's metrics table (pandas, one row per run)."""
    from mqlab.experiments.parquet import read_metrics

    return read_metrics(dataset_path(name))


def load_events(name: str):
    """The dataset's events table (pandas; the traces kept: the first seed of each point)."""
    from mqlab.experiments.parquet import read_events

    return read_events(dataset_path(name))


def spark_table(spark: Any, name: str, table: str = "metrics"):
    """The dataset's ``metrics`` or ``events`` as a Spark DataFrame (``point`` partitioned)."""
    if table not in ("metrics", "events"):
        raise ValueError(f"table must be 'metrics' or 'events', got {table!r}")
    return spark.read.parquet(str(dataset_path(name) / table))


def regenerate(name: str, out_dir: str | Path, *, seeds: int | None = None,
               progress: bool = False) -> Path:  # fmt: skip
    """Re-run the dataset's spec (its first ``seeds`` seeds) into ``out_dir``, sequentially."""
    from mqlab.experiments.runners import run_sequential
    from mqlab.experiments.sweep import load_sweep

    sweep = load_sweep(spec_path(name))
    if seeds is not None:
        sweep = sweep.limit_seeds(seeds)
    result = run_sequential(sweep, progress=progress)
    cmd = command(name) + (f" --seeds {seeds}" if seeds is not None else "")
    return result.write(out_dir, command=cmd)
