"""One sweep run as a task: a ``RunConfig`` in, typed metrics and event rows out.

Mirrors no RocketMQ class. Every runner (sequential, process pool, Spark) calls
``execute`` and nothing else, so they produce identical rows for the same configs: the
metrics row in ``schema.metrics_columns`` order and the events as tuples in
``schema.EVENT_COLUMNS`` order. ``execute_partition`` is the ``mapPartitions`` body. It
must not know which runner calls it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mqlab.experiments.schema import METRIC_COLUMNS, param_value
from mqlab.experiments.sweep import RunConfig

__all__ = ["RunOutput", "execute", "execute_partition"]


@dataclass(slots=True)
class RunOutput:
    """A run's metrics row (a dict in column order) and its event rows (tuples)."""

    metrics: dict[str, Any]
    events: list[tuple] = field(default_factory=list)


def execute(config: RunConfig) -> RunOutput:
    """Run one configuration and shape its results as table rows."""
    from mqlab.experiments.run import run

    result = run(config.build_scenario(), run_id=config.run_id, keep_events=config.keep_events)
    types = dict(config.param_types)
    row: dict[str, Any] = {
        "run_id": config.run_id,
        "sweep": config.sweep,
        "point": config.point,
        "seed": config.seed,
        "params": json.dumps(dict(config.params), sort_keys=True),
    }
    for column, value in config.params:
        row[column] = param_value(value, types[column])
    for column, kind in METRIC_COLUMNS:
        value = result.metrics[column]
        row[column] = None if value is None else (float(value) if kind == "float64" else value)
    events = []
    for e in result.events:
        r = e.to_row()
        events.append((r["run_id"], r["t_ms"], r["seq"], r["node"], r["component"], r["step"],
                       r["kind"], r["fields"], config.seed, config.point))  # fmt: skip
    return RunOutput(row, events)


def execute_partition(configs: Iterable[RunConfig | str]) -> Iterator[RunOutput]:
    """Run each config of a partition (objects or their JSON) in order."""
    for c in configs:
        yield execute(RunConfig.from_json(c) if isinstance(c, str) else c)
