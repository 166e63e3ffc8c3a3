"""Scenarios: one experiment run described as data.

Mirrors no RocketMQ class: this is the workbench's experiment description. A ``Scenario``
says what cluster to build (brokers, topics, broker and store settings), who sends what
and when (producers: a rate, tags, bursts), who consumes and how (push consumers: the
allocation strategy by ``STRATEGIES_BY_NAME`` name, batch sizes, flow-control thresholds,
listener time and failure rate), which faults happen when (kill, join, leave, broker
restart, link delay or loss) and for how long the run lasts. ``mqlab.experiments.run``
turns it into ``Lab`` calls.

This module owns the dataclasses, loading them from plain dicts (YAML/JSON) with every
unknown key named in the error, and ``with_params`` (a copy with dotted-path overrides,
what a sweep's grid applies). It must not know how a run executes or what it measures.

All times are virtual ms counted from the scenario's start: after the cluster is built,
the initial consumers started and ``warmup_ms`` elapsed.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "FAULT_ACTIONS",
    "Burst",
    "ConsumerSpec",
    "FaultSpec",
    "ProducerSpec",
    "Scenario",
    "TopicSpec",
    "load_scenario",
    "load_spec_file",
]

#: Fault actions and the Lab call each maps to.
FAULT_ACTIONS = {
    "kill_consumer": "Lab.kill_consumer(target, persist_first=…)",
    "join": "Lab.push_consumer(…) with consumers[consumer]'s settings",
    "leave": "Lab.remove_consumer(target)",
    "pause": "Lab.pause_consumer(target)",
    "resume": "Lab.resume_consumer(target)",
    "restart_broker": "Lab.restart_broker(target, graceful=…)",
    "kill_broker": "Lab.kill(target)",
    "power_cut_broker": "Lab.power_cut(target)",
    "set_link": "Lab.set_link(src, dst, latency_ms=…, jitter_ms=…, drop_rate=…, down=…)",
}


def _build(cls: type, data: Any, where: str) -> Any:
    """``cls(**data)`` with unknown keys and non-dicts reported by path."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a mapping, got {type(data).__name__} {data!r}")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; known: {sorted(names)}")
    return cls(**data)


def _tuple(value: Any, where: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str | bytes | dict):
        raise ValueError(f"{where} must be a list, got {value!r}")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic created on every broker before the run (UPDATE_AND_CREATE_TOPIC)."""

    name: str = "TopicTest"
    queues: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.queues, int) or not 1 <= self.queues <= 1024:
            raise ValueError(f"topic {self.name!r}: queues must be 1..1024, got {self.queues!r}")


@dataclass(frozen=True, slots=True)
class Burst:
    """``count`` messages sent back to back at ``at_ms``."""

    at_ms: int
    count: int


@dataclass(frozen=True, slots=True)
class ProducerSpec:
    """One producer's send schedule.

    ``rate_per_s`` messages per second from ``start_ms`` until ``stop_ms`` (default: the
    scenario's ``duration_ms``), evenly spaced (``arrival="uniform"``) or as a Poisson
    process drawn from the run's seed (``"poisson"``); plus ``bursts``. Message ``i`` gets
    ``tags[i % len(tags)]`` and a body of ``body_bytes`` bytes.
    """

    topic: str = "TopicTest"
    group: str = "PG"
    rate_per_s: float = 10.0
    start_ms: int = 0
    stop_ms: int | None = None
    arrival: str = "uniform"
    tags: tuple[str, ...] = ("TagA",)
    bursts: tuple[Burst, ...] = ()
    body_bytes: int = 32

    def __post_init__(self) -> None:
        object.__setattr__(self, "tags", _tuple(self.tags, "producer tags"))
        bursts = _tuple(self.bursts, "producer bursts")
        object.__setattr__(
            self, "bursts", tuple(_build(Burst, b, "producer burst") for b in bursts)
        )
        if self.rate_per_s < 0:
            raise ValueError(f"rate_per_s must be >= 0, got {self.rate_per_s!r}")
        if self.arrival not in ("uniform", "poisson"):
            raise ValueError(f"arrival must be 'uniform' or 'poisson', got {self.arrival!r}")


@dataclass(frozen=True, slots=True)
class ConsumerSpec:
    """``count`` push consumers of one group (nodes consumer-1, consumer-2, … in order).

    ``strategy`` is a ``STRATEGIES_BY_NAME`` key ("AVG", "AVG_BY_CIRCLE",
    "CONSISTENT_HASH", …). ``failure_rate``: the share of listener calls answering
    RECONSUME_LATER, decided by a hash of (seed, message id, reconsume times), so the same
    seed fails the same messages. ``settings``: any other DefaultMQPushConsumer field.
    ``start_ms`` > 0 starts them later (a join).
    """

    group: str = "CG"
    topic: str = "TopicTest"
    expression: str = "*"
    count: int = 1
    strategy: str = "AVG"
    start_ms: int = 0
    pull_batch_size: int = 32
    consume_batch_size: int = 1
    pull_threshold_for_queue: int = 1000
    pull_threshold_size_for_queue: int = 100
    consume_concurrently_max_span: int = 2000
    consume_thread: int = 20
    consume_time_ms: int = 0
    failure_rate: float = 0.0
    max_reconsume_times: int = -1
    consume_from_where: str = "CONSUME_FROM_FIRST_OFFSET"
    settings: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from mqlab.client.allocate import STRATEGIES_BY_NAME

        if self.strategy not in STRATEGIES_BY_NAME:
            raise ValueError(
                f"strategy must be one of {sorted(STRATEGIES_BY_NAME)}, got {self.strategy!r}"
            )
        try:
            STRATEGIES_BY_NAME[self.strategy]()
        except TypeError:
            raise ValueError(
                f"strategy {self.strategy!r} needs constructor arguments a scenario cannot give; "
                "use AVG, AVG_BY_CIRCLE or CONSISTENT_HASH"
            ) from None
        if not 0.0 <= self.failure_rate <= 1.0:
            raise ValueError(f"failure_rate must be between 0 and 1, got {self.failure_rate!r}")
        if not isinstance(self.count, int) or self.count < 0:
            raise ValueError(f"consumer count must be an int >= 0, got {self.count!r}")
        object.__setattr__(self, "settings", dict(self.settings or {}))


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """One fault at ``at_ms`` (plus a seeded 0..``jitter_ms`` delay); see ``FAULT_ACTIONS``.

    ``target`` names the consumer ("consumer-2") or broker ("broker-a"); ``join`` adds one
    consumer with ``consumers[consumer]``'s settings; ``set_link`` changes the link
    ``src`` → ``dst`` (and back, unless ``both_ways`` is false).
    """

    at_ms: int
    action: str
    target: str | None = None
    jitter_ms: int = 0
    persist_first: bool = False
    graceful: bool = True
    consumer: int = 0
    src: str | None = None
    dst: str | None = None
    both_ways: bool = True
    latency_ms: int | None = None
    link_jitter_ms: int | None = None
    drop_rate: float | None = None
    down: bool | None = None

    def __post_init__(self) -> None:
        if self.action not in FAULT_ACTIONS:
            raise ValueError(
                f"fault action must be one of {sorted(FAULT_ACTIONS)}, got {self.action!r}"
            )
        needs_target = self.action not in ("join", "set_link")
        if needs_target and not self.target:
            raise ValueError(f"fault {self.action!r} at {self.at_ms} ms needs a target")
        if self.action == "set_link" and not (self.src and self.dst):
            raise ValueError(f"fault set_link at {self.at_ms} ms needs src and dst")


@dataclass(frozen=True, slots=True)
class Scenario:
    """One run: cluster, schedule, consumers, faults, settings, duration and seed.

    ``broker`` / ``store``: BrokerConfig / MessageStoreConfig overrides (e.g.
    ``{"long_polling_enable": False}``). The run sends during ``duration_ms`` and then lets
    consumers catch up for ``drain_ms`` more before it measures.
    """

    name: str = "scenario"
    seed: int = 0
    duration_ms: int = 30_000
    drain_ms: int = 10_000
    warmup_ms: int = 2_000
    brokers: int = 1
    latency_ms: int = 1
    delay_levels: str | None = None
    broker: dict[str, Any] = field(default_factory=dict)
    store: dict[str, Any] = field(default_factory=dict)
    topics: tuple[TopicSpec, ...] = (TopicSpec(),)
    producers: tuple[ProducerSpec, ...] = (ProducerSpec(),)
    consumers: tuple[ConsumerSpec, ...] = (ConsumerSpec(),)
    faults: tuple[FaultSpec, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "broker", dict(self.broker or {}))
        object.__setattr__(self, "store", dict(self.store or {}))
        for name, cls in (("topics", TopicSpec), ("producers", ProducerSpec),
                          ("consumers", ConsumerSpec), ("faults", FaultSpec)):  # fmt: skip
            items = _tuple(getattr(self, name), name)
            built = tuple(_build(cls, x, f"{name}[{i}]") for i, x in enumerate(items))
            object.__setattr__(self, name, built)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise TypeError(f"seed must be an int, got {type(self.seed).__name__}")
        for name in ("duration_ms", "drain_ms", "warmup_ms"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be a whole number of ms >= 0, got {v!r}")
        known = {t.name for t in self.topics}
        for p in self.producers:
            if p.topic not in known:
                raise ValueError(f"producer topic {p.topic!r} is not in topics {sorted(known)}")
        for c in self.consumers:
            if c.topic not in known:
                raise ValueError(f"consumer topic {c.topic!r} is not in topics {sorted(known)}")
        for f in self.faults:
            if f.action == "join" and not 0 <= f.consumer < len(self.consumers):
                raise ValueError(f"join at {f.at_ms} ms: consumers[{f.consumer}] does not exist")

    @property
    def end_ms(self) -> int:
        """When the run stops measuring (scenario time): duration plus drain."""
        return self.duration_ms + self.drain_ms

    # -- dict / file forms ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        """Build from a plain dict (what YAML/JSON give); unknown keys raise ValueError."""
        return _build(cls, dict(data), "scenario")

    def to_dict(self) -> dict[str, Any]:
        """Plain dicts, lists and scalars (round-trips through ``from_dict``)."""
        return _plain(asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def with_params(self, params: dict[str, Any]) -> Scenario:
        """A copy with dotted-path overrides: ``{"consumers.0.strategy": "AVG", "seed": 3}``.

        Paths walk dict keys and list indexes (``faults.1.persist_first``,
        ``broker.long_polling_enable``); a missing final dict key is added (settings).
        """
        d = self.to_dict()
        for path, value in params.items():
            _set_path(d, path, value)
        return Scenario.from_dict(d)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _set_path(d: Any, path: str, value: Any) -> None:
    parts = path.split(".")
    node = d
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ValueError(f"path {path!r}: no list index {part!r}")
            if last:
                node[int(part)] = copy.deepcopy(value)
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if not last and part not in node:
                raise ValueError(f"path {path!r}: no key {part!r}; known: {sorted(node)}")
            if last:
                node[part] = copy.deepcopy(value)
            else:
                node = node[part]
        else:
            raise ValueError(f"path {path!r}: {'.'.join(parts[:i])!r} is not a mapping or list")


def load_spec_file(path: str | Path) -> dict[str, Any]:
    """A YAML (``.yaml``/``.yml``) or JSON spec file as a dict."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{p}: a spec must be a mapping at the top level")
    return data


def load_scenario(source: str | Path | dict[str, Any]) -> Scenario:
    """A ``Scenario`` from a dict or a YAML/JSON file."""
    data = source if isinstance(source, dict) else load_spec_file(source)
    return Scenario.from_dict(data)
