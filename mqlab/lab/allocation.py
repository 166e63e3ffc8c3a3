"""Who held which queue when: the allocation views in a run's trace, in plain Python.

Mirrors no RocketMQ class. The consumers' rebalance results (``RebalanceImpl#rebalanceByTopic``
steps 42-61, traced) read back as views per (node, group, topic). ``mqlab.lab.figures``
draws them (``allocation_heatmap``); ``mqlab.explore.outcome`` counts overlaps from them.
This module imports neither pandas nor plotly, so a search (``python -m mqlab explore``) and
its workers never load them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mqlab.trace.events import Kind, TraceEvent

__all__ = ["allocation_snapshots", "mq_label", "node_stopped", "queue_sort_key"]

_MQ_RE = re.compile(r"MessageQueue \[topic=(.*), brokerName=(.*), queueId=(-?\d+)\]")


def mq_label(mq: str) -> str:
    """``MessageQueue [topic=T, brokerName=b, queueId=3]`` → ``T/b/3`` (the clients' text)."""
    m = _MQ_RE.fullmatch(mq)
    return f"{m[1]}/{m[2]}/{m[3]}" if m else mq


def queue_sort_key(label: str) -> tuple:
    """Sort ``T/b/3`` labels by topic, broker, then queue id as a number."""
    topic, _, rest = label.partition("/")
    broker, _, qid = rest.rpartition("/")
    return (topic, broker, int(qid) if qid.lstrip("-").isdigit() else 0, label)


def node_stopped(e: TraceEvent) -> bool:
    """A node went away (``SimDriver`` stop or kill): its parked pulls, frames, views end."""
    return e.component == "SimDriver" and e.step in ("stop", "kill")


def allocation_snapshots(
    events: Iterable[TraceEvent], *, group: str | None = None, topic: str | None = None
) -> tuple[list[tuple[int, dict]], set[tuple[str, str, str]]]:
    """The views behind ``mqlab.lab.figures.allocation_heatmap_frame``: ``(t_ms, views)`` per
    time a rebalance result arrived or a view ended (the state after the last such event at
    that time; ``views``: (node, group, topic) → (client id, queue labels)), and every
    (group, topic, queue) any view named. ``events`` in seq order."""
    views: dict[tuple[str, str, str], tuple[str, tuple[str, ...]]] = {}
    snapshots: list[tuple[int, dict]] = []
    universe: set[tuple[str, str, str]] = set()
    for e in events:
        f = e.fields
        update: dict | None = None
        if e.component.endswith(".rebalanceByTopic") and e.step == "42-61" and e.kind == Kind.STEP:
            g, t = f.get("group"), f.get("topic")
            if (group is None or g == group) and (topic is None or t == topic):
                mqs = f.get("allocated_mqs")
                if mqs is None:
                    mqs = [f"{t}/?/{q}" for q in f.get("allocated", [])]
                labels = tuple(sorted((mq_label(str(m)) for m in mqs), key=queue_sort_key))
                update = {**views, (e.node, g, t): (str(f.get("client_id") or e.node), labels)}
                universe.update((g, t, q) for q in labels)
        elif node_stopped(e) or (e.component.endswith(".shutdown") and "group" in f):
            update = {k: v for k, v in views.items()
                      if not (k[0] == e.node and (node_stopped(e) or k[1] == f["group"]))}  # fmt: skip
            if len(update) == len(views):
                update = None
        if update is not None:
            views = update
            if snapshots and snapshots[-1][0] == e.t_ms:
                snapshots.pop()  # keep the state after the last change at this time
            snapshots.append((e.t_ms, views))
    return snapshots, universe
