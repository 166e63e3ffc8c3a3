"""Sweeps: a scenario × a parameter grid × seeds, unrolled into run configurations.

Mirrors no RocketMQ class. A ``Sweep`` holds a base ``Scenario``, a grid (each ``Param``
names a result column, a dotted path into the scenario and the values to try) and the
seeds. ``configs()`` lists every run in a fixed order (grid points in product order, then
seeds), each a small picklable, JSON-able ``RunConfig``: what a runner ships to a worker
process or a Spark task. The point index names the Parquet partition (``point=p003``).

Spec files (YAML/JSON) are either a plain scenario (one run per seed) or::

    sweep: allocation_under_churn        # name (default: the scenario's name)
    scenario: {...}                      # or a path, relative to the spec file
    grid:
      strategy: {path: consumers.0.strategy, values: [AVG, AVG_BY_CIRCLE]}
      "broker.long_polling_enable": [true, false]   # short form: column = last segment
    seeds: 20                            # or [3, 5, 8] or {start: 100, count: 20}
    events: 1                            # keep traces of the first N seeds ("all", "none")

It must not know how runs execute.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqlab.experiments.scenario import Scenario, load_spec_file
from mqlab.experiments.schema import check_param_column, param_type

__all__ = ["Param", "RunConfig", "Sweep", "load_sweep"]


@dataclass(frozen=True, slots=True)
class Param:
    """One grid axis: result column ``column``, scenario path ``path``, the ``values``."""

    column: str
    path: str
    values: tuple[Any, ...]

    def __post_init__(self) -> None:
        check_param_column(self.column)
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise ValueError(f"parameter {self.column!r} has no values")


@dataclass(frozen=True, slots=True)
class RunConfig:
    """One run of a sweep, as shipped to a worker (picklable and JSON-able)."""

    run_id: str
    sweep: str
    point: str
    seed: int
    params: tuple[tuple[str, Any], ...]
    param_types: tuple[tuple[str, str], ...]
    scenario: str  # the scenario as JSON, overrides and seed applied
    keep_events: bool

    def to_json(self) -> str:
        return json.dumps(
            {"run_id": self.run_id, "sweep": self.sweep, "point": self.point, "seed": self.seed,
             "params": [list(p) for p in self.params],
             "param_types": [list(p) for p in self.param_types],
             "scenario": self.scenario, "keep_events": self.keep_events},
            sort_keys=True,
        )  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        d = json.loads(text)
        return cls(d["run_id"], d["sweep"], d["point"], d["seed"],
                   tuple((k, v) for k, v in d["params"]),
                   tuple((k, v) for k, v in d["param_types"]), d["scenario"],
                   d["keep_events"])  # fmt: skip

    def build_scenario(self) -> Scenario:
        return Scenario.from_dict(json.loads(self.scenario))


def _seeds(value: Any) -> tuple[int, ...]:
    if isinstance(value, bool):
        raise ValueError(f"seeds must be a count, a list or {{start, count}}, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"seeds must be >= 1, got {value}")
        return tuple(range(value))
    if isinstance(value, dict):
        extra = set(value) - {"start", "count"}
        if extra:
            raise ValueError(f"seeds: unknown key(s) {sorted(extra)}; known: ['count', 'start']")
        start, count = int(value.get("start", 0)), int(value["count"])
        return tuple(range(start, start + count))
    seeds = tuple(value)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of ints, got {value!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must not repeat, got {value!r}")
    return seeds


def _grid(value: Any) -> tuple[Param, ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValueError(f"grid must be a mapping of column → values, got {value!r}")
    out = []
    for key, spec in value.items():
        if isinstance(spec, dict):
            extra = set(spec) - {"path", "values"}
            if extra:
                raise ValueError(f"grid {key!r}: unknown key(s) {sorted(extra)}")
            out.append(Param(key, spec.get("path", key), tuple(spec["values"])))
        else:
            segments = [s for s in key.split(".") if not s.isdigit()]
            out.append(Param(segments[-1], key, tuple(spec)))
    columns = [p.column for p in out]
    if len(set(columns)) != len(columns):
        raise ValueError(f"grid columns repeat: {columns}; use the long form with a column name")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Sweep:
    """A scenario × a parameter grid × seeds."""

    scenario: Scenario
    grid: tuple[Param, ...] = ()
    seeds: tuple[int, ...] = (0,)
    name: str | None = None
    events: str | int = "all"  # "all", "none", or N: the first N seeds of each point

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", tuple(self.grid))
        object.__setattr__(self, "seeds", _seeds(self.seeds))
        if self.name is None:
            object.__setattr__(self, "name", self.scenario.name)
        ok = self.events in ("all", "none") or (
            isinstance(self.events, int) and not isinstance(self.events, bool) and self.events >= 0
        )
        if not ok:
            raise ValueError(f"events must be 'all', 'none' or a count >= 0, got {self.events!r}")
        for p in self.grid:  # every path must apply (fail before any run starts)
            self.scenario.with_params({p.path: p.values[0]})

    @property
    def param_types(self) -> dict[str, str]:
        return {p.column: param_type(list(p.values)) for p in self.grid}

    def points(self) -> list[dict[str, Any]]:
        """Grid points in product order, each ``{column: value}``."""
        if not self.grid:
            return [{}]
        combos = itertools.product(*(p.values for p in self.grid))
        return [dict(zip((p.column for p in self.grid), c, strict=True)) for c in combos]

    def configs(self) -> list[RunConfig]:
        """Every run: points × seeds, in order."""
        types = tuple(self.param_types.items())
        paths = {p.column: p.path for p in self.grid}
        out = []
        for i, point in enumerate(self.points()):
            label = f"p{i:03d}"
            base = self.scenario.with_params({paths[c]: v for c, v in point.items()})
            for k, seed in enumerate(self.seeds):
                keep = self.events == "all" or (isinstance(self.events, int) and k < self.events)
                out.append(RunConfig(
                    run_id=f"{self.name}-{label}-s{seed}", sweep=str(self.name), point=label,
                    seed=seed, params=tuple(point.items()), param_types=types,
                    scenario=base.with_params({"seed": seed}).to_json(), keep_events=keep,
                ))  # fmt: skip
        return out

    def limit_seeds(self, n: int) -> Sweep:
        """The same sweep with only its first ``n`` seeds (a quick look, a regeneration test)."""
        return Sweep(self.scenario, self.grid, self.seeds[:n], self.name, self.events)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweep": self.name,
            "scenario": self.scenario.to_dict(),
            "grid": {p.column: {"path": p.path, "values": list(p.values)} for p in self.grid},
            "seeds": list(self.seeds),
            "events": self.events,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], base_dir: str | Path | None = None) -> Sweep:
        """A sweep spec, or a plain scenario (a sweep of its own seed)."""
        if "scenario" not in data:
            sc = Scenario.from_dict(data)
            return cls(sc, seeds=(sc.seed,))
        extra = set(data) - {"sweep", "scenario", "grid", "seeds", "events"}
        if extra:
            raise ValueError(f"sweep: unknown key(s) {sorted(extra)}; known: "
                             "['events', 'grid', 'scenario', 'seeds', 'sweep']")  # fmt: skip
        sc_data = data["scenario"]
        if isinstance(sc_data, str):
            sc_data = load_spec_file(Path(base_dir or ".") / sc_data)
        sc = Scenario.from_dict(sc_data)
        return cls(sc, _grid(data.get("grid")), data.get("seeds", [sc.seed]), data.get("sweep"),
                   data.get("events", "all"))  # fmt: skip


def load_sweep(source: str | Path | dict[str, Any]) -> Sweep:
    """A ``Sweep`` from a dict or a YAML/JSON spec file."""
    if isinstance(source, dict):
        return Sweep.from_dict(source)
    return Sweep.from_dict(load_spec_file(source), base_dir=Path(source).parent)
