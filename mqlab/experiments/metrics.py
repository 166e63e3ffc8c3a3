"""The metrics row of one run, read from a finished Lab and its trace.

Mirrors no RocketMQ class; it reads what the mechanisms left behind. Sources:

- delivery: ``Lab.deliveries()`` (every listener hand-over) against the producers'
  ``SendResult``s and the brokers' commit logs (``store_timestamp`` gives the latency
  store → listener, mechanisms.md "Pull processing" step 6 / mechanisms.md "The consumer's pull loop" step 2.6);
- duplicates and their causes: ``mqlab.lab.checkers.find_duplicates`` ("rebalance
  overlap", "crash before offset persist", "unexplained"; "retry" is intended);
- pulls: each push consumer's ``stats`` (PULL_MESSAGE sent, results by status) and the
  broker's ``PullRequestHoldService.suspendPullRequest`` events (mechanisms.md "Long polling");
- flow control: ``mqlab.lab.figures.flow_control_episodes_frame`` (mechanisms.md "The consumer's pull loop" step 2.1);
- rebalancing: ``RebalancePushImpl.messageQueueChanged`` and
  ``updateProcessQueueTableInRebalance`` "140-156" events, and the allocation snapshots of
  ``allocation_heatmap_frame`` for the time to converge after a membership change (mechanisms.md "Rebalancing");
- retries and DLQ: deliveries with ``reconsume_times`` > 0, messages stored in
  ``%DLQ%<group>`` (docs/reference.md §10.7);
- final lag: committed offsets on the brokers (``consumerOffset.json``) against max offsets.

It must not change the lab. Column names and types are fixed in ``mqlab.experiments.schema``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqlab.common.message_decoder import decode_stored_message
from mqlab.lab.checkers import find_duplicates

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.experiments.scenario import FaultSpec, Scenario
    from mqlab.lab.lab import Lab
    from mqlab.trace.events import TraceEvent

__all__ = ["RunContext", "compute_metrics", "convergence_times", "latency_percentiles"]

_EMPTY_STATUSES = ("NO_NEW_MSG", "NO_MATCHED_MSG", "OFFSET_ILLEGAL")
_PUSH_PULL = "DefaultMQPushConsumerImpl.pullMessage"
_DUP_CAUSES = {
    "rebalance overlap": "dup_rebalance",
    "crash before offset persist": "dup_crash",
    "unexplained": "dup_unexplained",
}


@dataclass(slots=True)
class RunContext:
    """What the runner saw while playing the timeline (lab times are absolute)."""

    scenario: Scenario
    t0: int
    sends: list[tuple[str, Any]] = field(default_factory=list)  # (topic, SendFuture)
    membership_changes: list[int] = field(default_factory=list)
    faults: list[tuple[int, FaultSpec]] = field(default_factory=list)


def _stored(lab: Lab, topics: set[str]) -> pd.DataFrame:
    """Messages of ``topics`` (and ``%DLQ%`` topics) in every broker's commit log."""
    import pandas as pd

    rows = []
    for b in lab.brokers:
        if b.message_store is None:
            continue
        name = b.broker_config.broker_name
        for _, _, raw in b.message_store.iter_commit_log_entries():
            m = decode_stored_message(raw, read_body=False)
            if m.topic in topics or m.topic.startswith("%DLQ%"):
                rows.append((m.topic, m.client_msg_id(), m.store_timestamp, name, m.queue_id,
                             m.queue_offset))  # fmt: skip
    cols = ["topic", "msg_id", "store_timestamp", "broker", "queue_id", "queue_offset"]
    return pd.DataFrame(rows, columns=cols)


def _pending(lab: Lab, group: str, where: tuple[str, str, int, int]) -> bool:
    """A live consumer of ``group`` owns the message's queue and has not consumed past it."""
    topic, broker, qid, qoff = where
    for c in lab.consumers.values():
        if c.consumer_group != group:
            continue
        if not c.default_mq_push_consumer_impl.mq_client_factory.running:
            continue
        for mq, pq in c.process_queue_table.items():
            if (mq.topic, mq.broker_name, mq.queue_id) == (topic, broker, qid) and not pq.dropped:
                if qoff >= pq.queue_offset_max or qoff in pq.msg_tree_map:
                    return True
    return False


def latency_percentiles(latencies: list[int] | pd.Series) -> dict[str, float | None]:
    """p50 / p95 / p99 / mean of store → listener latencies (linear interpolation)."""
    import pandas as pd

    s = pd.Series(latencies, dtype="float64")
    if s.empty:
        return dict.fromkeys(("latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
                              "latency_mean_ms"))  # fmt: skip
    return {
        "latency_p50_ms": float(s.quantile(0.50)),
        "latency_p95_ms": float(s.quantile(0.95)),
        "latency_p99_ms": float(s.quantile(0.99)),
        "latency_mean_ms": float(s.mean()),
    }


def convergence_times(events: list[TraceEvent], group: str, topic: str,
                      changes: list[int], end_ms: int) -> list[int | None]:  # fmt: skip
    """For each membership change: ms until the allocation settled, or None.

    Settled: the last allocation before the next change (or the end) has every queue
    owned by exactly one consumer; the time is when that allocation first appeared (0 if
    it was already in place). None: it never settled before the next change.
    """
    from mqlab.lab.figures import allocation_heatmap_frame

    snaps = allocation_heatmap_frame(events, group=group, topic=topic)
    by_time: list[tuple[int, tuple, bool]] = []
    for t, g in snaps.groupby("t_ms", sort=True):
        alloc = tuple(zip(g["queue"], g["owner"], strict=True))
        by_time.append((int(t), alloc, bool((g["owners"] == 1).all())))
    bounds = sorted(set(changes))
    out: list[int | None] = []
    for i, tc in enumerate(bounds):
        nxt = bounds[i + 1] if i + 1 < len(bounds) else end_ms + 1
        before = [s for s in by_time if s[0] < tc]
        inside = [s for s in by_time if tc <= s[0] < nxt]
        if not inside:
            settled = bool(before) and before[-1][2]
            out.append(0 if settled else None)
            continue
        final = inside[-1]
        if not final[2]:
            out.append(None)
            continue
        first = final[0]
        for t, alloc, _ in reversed(inside):
            if alloc != final[1]:
                break
            first = t
        if first == inside[0][0] and before and before[-1][1] == final[1]:
            first = tc  # the same allocation as before the change: nothing to converge
        out.append(first - tc)
    return out


def _lag(lab: Lab, group: str, topic: str) -> int:
    """Σ over queues of max offset − committed offset (the whole queue if none committed)."""
    q = lab.queues(topic)
    off = lab.consumer_offsets()
    off = off[(off["group"] == group) & (off["topic"] == topic)]
    committed = {(r.broker, r.queue_id): r.offset for r in off.itertuples()}
    total = 0
    for r in q.itertuples():
        c = committed.get((r.broker, r.queue_id), r.min_offset)
        total += max(0, r.max_offset - c)
    return total


def _loss_explanations(lab: Lab, ctx: RunContext) -> list[str]:
    """Faults and end states under which an acknowledged message may go undelivered."""
    out = []
    for t, f in ctx.faults:
        at = t - ctx.t0
        if f.action in ("kill_broker", "power_cut_broker"):
            out.append(f"{f.action} {f.target}@{at}")
        elif f.action == "restart_broker" and not f.graceful:
            out.append(f"restart_broker {f.target} (kill)@{at}")
        elif f.action == "set_link" and (f.down or (f.drop_rate or 0) > 0):
            out.append(f"set_link {f.src}-{f.dst}@{at}")
        elif f.action == "pause":
            out.append(f"pause {f.target}@{at}")
    for spec in sorted({(c.group, c.topic) for c in ctx.scenario.consumers}):
        live = [c for c in lab.consumers.values() if c.consumer_group == spec[0]
                and c.default_mq_push_consumer_impl.mq_client_factory.running]  # fmt: skip
        if not live:
            out.append(f"no live consumer of {spec[0]} at the end")
    return out


def compute_metrics(lab: Lab, ctx: RunContext) -> dict[str, Any]:
    """The metrics row of a finished run (everything but ``run_id`` and sweep columns)."""
    from mqlab.lab.figures import flow_control_episodes_frame  # plotly: only for metrics

    s = ctx.scenario
    events = lab.trace.events
    topics = {t.name for t in s.topics}
    pairs = sorted({(c.group, c.topic) for c in s.consumers})
    stored = _stored(lab, topics)
    original = stored[stored["topic"].isin(topics)]
    store_ts = dict(zip(original["msg_id"], original["store_timestamp"], strict=True))
    place = {r.msg_id: (r.topic, r.broker, r.queue_id, r.queue_offset)
             for r in original.itertuples()}  # fmt: skip
    acked: dict[str, set[str]] = {t: set() for t in topics}
    for topic, fut in ctx.sends:
        if fut.done and fut.error is None and fut.result is not None:
            acked[topic].add(fut.result.msg_id)
    d = lab.deliveries()
    delivered = lost = not_stored = backlog = 0
    latencies: list[int] = []
    for group, topic in pairs:
        dg = d[(d["group"] == group) & (d["topic"] == topic)]
        got = set(dg["msg_id"])
        delivered += len(got)
        for m in sorted(acked[topic] - got):
            lost += 1
            if m not in place:
                not_stored += 1
            elif _pending(lab, group, place[m]):
                backlog += 1
        first = dg.groupby("msg_id", sort=True)["t_ms"].min()
        latencies += [int(t) - int(store_ts[m]) for m, t in first.items() if m in store_ts]
    dups = find_duplicates(lab).findings
    dup_counts = dict.fromkeys(_DUP_CAUSES.values(), 0)
    for cause, n in dups["cause"].value_counts().items():
        if cause in _DUP_CAUSES:
            dup_counts[_DUP_CAUSES[cause]] += int(n)
    start, end = ctx.t0, ctx.t0 + s.end_ms
    pulls_issued = pulls_found = pulls_empty = fc_deferrals = suspended = rebalances = 0
    adds: dict[tuple[str, str], int] = {}
    for e in events:
        comp = e.component
        if comp == _PUSH_PULL:
            if not start <= e.t_ms <= end:
                continue
            f = e.fields
            if e.step == "2.5":
                pulls_issued += 1
            elif e.step == "2.6" and f.get("status") == "FOUND":
                pulls_found += f.get("found", 0) > 0
                pulls_empty += f.get("found", 0) == 0
            elif e.step == "2.6" and f.get("status") in _EMPTY_STATUSES:
                pulls_empty += 1
            elif e.step == "2.1" and "flow_control" in f:
                fc_deferrals += 1
        elif comp == "PullRequestHoldService.suspendPullRequest" and e.step == "suspend":
            suspended += start <= e.t_ms <= end
        elif comp.endswith(".messageQueueChanged") and e.step == "changed" and e.kind == "step":
            rebalances += e.fields.get("topic") in topics
        elif comp.endswith(".updateProcessQueueTableInRebalance") and e.step == "140-156":
            mq = str(e.fields.get("mq", ""))
            if any(f"topic={t}," in mq for t in topics):
                key = (str(e.fields.get("group")), mq)
                adds[key] = adds.get(key, 0) + 1
    episodes = flow_control_episodes_frame(events)
    conv: list[int | None] = []
    if ctx.membership_changes:
        for group, topic in pairs:
            conv += convergence_times(events, group, topic, ctx.membership_changes, end)
    settled = [c for c in conv if c is not None]
    explanations = _loss_explanations(lab, ctx)
    if backlog:
        explanations.append(f"backlog: {backlog} still queued for a live consumer at the end")
    if lost and not explanations:
        explanations.append("unexplained")
    row: dict[str, Any] = {
        "duration_ms": s.duration_ms,
        "sent": sum(len(v) for v in acked.values()),
        "send_failed": len(ctx.sends) - sum(len(v) for v in acked.values()),
        "stored": len(original),
        "delivered": delivered,
        "deliveries": int(len(d)),
        "duplicates": sum(dup_counts.values()),
        **dup_counts,
        "lost": lost,
        "lost_not_stored": not_stored,
        "lost_allowed_by": "; ".join(explanations) if lost else "",
        **latency_percentiles(latencies),
        "pulls_issued": pulls_issued,
        "pulls_found": pulls_found,
        "pulls_empty": pulls_empty,
        "pulls_suspended": suspended,
        "flow_control_episodes": int(episodes["start_t_ms"].between(start, end).sum()),
        "flow_control_deferrals": fc_deferrals,
        "rebalances": int(rebalances),
        "queue_moves": sum(max(0, n - 1) for n in adds.values()),
        "membership_changes": len(set(ctx.membership_changes)),
        "convergence_ms": float(max(settled)) if settled and len(settled) == len(conv) else None,
        "unconverged_changes": len(conv) - len(settled),
        "retries": int((d["reconsume_times"] > 0).sum()),
        "dlq": int(stored["topic"].str.startswith("%DLQ%").sum()),
        "final_lag": sum(_lag(lab, g, t) for g, t in pairs),
        "trace_events": len(events),
    }
    return row
