"""Running one scenario on a Lab: build the cluster, play the timeline, measure.

Mirrors no RocketMQ class. ``run(scenario)`` is the one place that turns a ``Scenario``
into ``Lab`` calls (docs/design.md §4): topics through UPDATE_AND_CREATE_TOPIC on every broker,
consumers through ``Lab.push_consumer`` (strategy, batch sizes, thresholds, a
``ScenarioListener``), producers through ``Lab.producer``; then, in timeline order,
``Lab.advance`` to each action and the action itself (a send, or a fault through
``kill_consumer`` / ``push_consumer`` / ``remove_consumer`` / ``restart_broker`` /
``kill`` / ``power_cut`` / ``set_link``). After ``duration_ms + drain_ms`` it hands the lab to
``mqlab.experiments.metrics`` for the metrics row.

Everything is a function of the scenario (seed included): no wall clock, no global
state, the store in a temp directory that never reaches the trace. It must not know
sweeps, runners or file formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqlab.experiments.listener import ScenarioListener
from mqlab.experiments.metrics import RunContext, compute_metrics
from mqlab.experiments.scenario import ConsumerSpec, FaultSpec, Scenario
from mqlab.experiments.schedule import Action, timeline
from mqlab.trace.events import TraceEvent

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.lab.lab import Lab

__all__ = ["RunResult", "run", "build_lab"]


@dataclass(slots=True)
class RunResult:
    """What one run gives: its trace events and its metrics row."""

    run_id: str
    scenario: Scenario
    metrics: dict[str, Any]
    events: list[TraceEvent] = field(default_factory=list)

    def events_frame(self) -> pd.DataFrame:
        """The trace as rows of ``mqlab.trace.events.COLUMNS``."""
        import pandas as pd

        from mqlab.trace.events import COLUMNS

        return pd.DataFrame([e.to_row() for e in self.events], columns=list(COLUMNS))

    def metrics_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([self.metrics])


def _consumer(lab: Lab, spec: ConsumerSpec, seed: int) -> str:
    from mqlab.client.allocate import STRATEGIES_BY_NAME

    settings = {
        "allocate_message_queue_strategy": STRATEGIES_BY_NAME[spec.strategy](),
        "pull_batch_size": spec.pull_batch_size,
        "consume_message_batch_max_size": spec.consume_batch_size,
        "pull_threshold_for_queue": spec.pull_threshold_for_queue,
        "pull_threshold_size_for_queue": spec.pull_threshold_size_for_queue,
        "consume_concurrently_max_span": spec.consume_concurrently_max_span,
        "consume_thread_min": spec.consume_thread,
        "consume_thread_max": spec.consume_thread,
        "consume_time_ms": spec.consume_time_ms,
        "max_reconsume_times": spec.max_reconsume_times,
        "consume_from_where": spec.consume_from_where,
        **spec.settings,
    }
    listener = ScenarioListener(seed, spec.group, spec.failure_rate)
    if settings.get("orderly") and spec.failure_rate == 0:
        listener = None  # an orderly consumer (settings {"orderly": true}): always SUCCESS
    c = lab.push_consumer(spec.group, spec.topic, spec.expression, listener, **settings)
    return c.default_mq_push_consumer_impl.mq_client_factory.name


def build_lab(
    scenario: Scenario, run_id: str | None = None, store_dir: str | None = None, *,
    slaves: int = 0, broker_role: str | None = None,
) -> tuple[Lab, dict[str, Any]]:  # fmt: skip
    """The cluster of ``scenario`` with its topics and initial consumers, warmed up.

    Returns the lab and the producers by scenario index (started, not yet sending).
    ``store_dir``: where the brokers' files go (default: a temp dir the lab removes).
    ``slaves`` / ``broker_role``: broker groups (``Lab``'s arguments; the explorer's
    replication scenarios). Topics are created on the masters; a slave copies them
    with SlaveSynchronize.
    """
    from mqlab.lab.lab import Lab

    lab = Lab(
        seed=scenario.seed, brokers=scenario.brokers, run_id=run_id, trace_level="steps",
        latency_ms=scenario.latency_ms, delay_levels=scenario.delay_levels,
        broker=scenario.broker, store=scenario.store, store_dir=store_dir,
        slaves=slaves, broker_role=broker_role,
    )  # fmt: skip
    for topic in scenario.topics:
        for b in lab.brokers:
            if b.broker_config.broker_id != 0:
                continue
            call = lab.request(
                b.broker_config.broker_name, "UPDATE_AND_CREATE_TOPIC",
                {"topic": topic.name, "defaultTopic": "TBW102", "readQueueNums": topic.queues,
                 "writeQueueNums": topic.queues, "perm": 6, "topicFilterType": "SINGLE_TAG",
                 "topicSysFlag": 0, "order": "false"},
            )  # fmt: skip
            if call.code != 0:
                raise ValueError(f"creating topic {topic.name!r} failed: {call.remark}")
    for spec in scenario.consumers:
        if spec.start_ms == 0:
            for _ in range(spec.count):
                _consumer(lab, spec, scenario.seed)
    producers = {i: lab.producer(p.group) for i, p in enumerate(scenario.producers)}
    lab.advance(scenario.warmup_ms)
    return lab, producers


def _apply_fault(lab: Lab, ctx: RunContext, f: FaultSpec, scenario: Scenario) -> None:
    a = f.action
    if a == "kill_consumer":
        lab.kill_consumer(f.target, persist_first=f.persist_first)
        ctx.membership_changes.append(lab.now)
    elif a == "join":
        _consumer(lab, scenario.consumers[f.consumer], scenario.seed)
        ctx.membership_changes.append(lab.now)
    elif a == "leave":
        lab.remove_consumer(f.target)
        ctx.membership_changes.append(lab.now)
    elif a == "pause":
        lab.pause_consumer(f.target)
    elif a == "resume":
        lab.resume_consumer(f.target)
    elif a == "restart_broker":
        lab.restart_broker(f.target, graceful=f.graceful)
    elif a == "kill_broker":
        lab.kill(f.target)
    elif a == "power_cut_broker":
        lab.power_cut(f.target)
    elif a == "set_link":
        settings = {k: v for k, v in (("latency_ms", f.latency_ms), ("jitter_ms", f.link_jitter_ms),
                    ("drop_rate", f.drop_rate), ("down", f.down)) if v is not None}  # fmt: skip
        lab.set_link(f.src, f.dst, **settings)
        if f.both_ways:
            lab.set_link(f.dst, f.src, **settings)
    ctx.faults.append((lab.now, f))


def _do(lab: Lab, ctx: RunContext, action: Action, producers: dict[str, Any]) -> None:
    from mqlab.common.message import Message

    s = ctx.scenario
    if action.kind == "send":
        spec = s.producers[action.index]
        tag = spec.tags[action.number % len(spec.tags)] if spec.tags else None
        body = f"p{action.index}-{action.number}".encode().ljust(spec.body_bytes, b".")
        fut = producers[action.index].send(Message(spec.topic, body, tags=tag))
        ctx.sends.append((spec.topic, fut))
    elif action.kind == "start":
        _consumer(lab, s.consumers[action.index], s.seed)
        ctx.membership_changes.append(lab.now)
    else:
        assert action.fault is not None, "a fault action carries its FaultSpec"
        try:
            _apply_fault(lab, ctx, action.fault, s)
        except ValueError as e:
            # the same class: a schedule that does not fit the run (the explorer's
            # ScheduleError, a ValueError) must stay one, or a shrink's candidate crashes
            raise type(e)(f"fault {action.fault.action!r} at {action.t_ms} ms: {e}") from None


def run(scenario: Scenario, *, run_id: str | None = None, keep_events: bool = True) -> RunResult:
    """Run ``scenario`` and measure it.

    Args:
        scenario: what to run (its ``seed`` decides every random choice).
        run_id: the trace's and the metrics row's ``run_id`` (default
            ``f"{scenario.name}-s{scenario.seed}"``).
        keep_events: return the trace events (False: only the metrics row).

    Returns:
        A ``RunResult`` (``metrics`` holds the columns of ``mqlab.experiments.schema``
        that a run measures).

    Raises:
        ValueError: a fault or setting the lab refuses (named in the message).
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    rid = run_id or f"{scenario.name}-s{scenario.seed}"
    lab, producers = build_lab(scenario, rid)
    try:
        ctx = RunContext(scenario=scenario, t0=lab.now)
        for action in timeline(scenario):
            due = ctx.t0 + action.t_ms
            if due > lab.now:
                lab.advance(due - lab.now)
            _do(lab, ctx, action, producers)
        end = ctx.t0 + scenario.end_ms
        if end > lab.now:
            lab.advance(end - lab.now)
        metrics = compute_metrics(lab, ctx)
        metrics["run_id"] = rid
        events = list(lab.trace.events) if keep_events else []
        return RunResult(rid, scenario, metrics, events)
    finally:
        lab.close()
