"""Delivery checkers: what a run promised, and whether it kept it.

RocketMQ promises *at-least-once* delivery: nothing acknowledged is lost, but a message
may arrive twice. These checkers read a lab after a run and report findings, each
pointing at the trace event (``seq``) that explains it:

- ``check_at_least_once``: every message the broker stored for a topic that the group's
  subscription selects was handed to a listener of the group, or is still in flight (cached
  in a running consumer's ProcessQueue, waiting for a consume thread) — nothing lost;
- ``find_duplicates``: messages delivered more than once, with the likely cause:
  ``rebalance overlap`` (the queue moved between consumers while messages were in
  flight), ``crash before offset persist`` (a consumer was killed and its successor
  started from the last committed offset), or ``retry`` (an intended redelivery:
  reconsumeTimes went up);
- ``check_queue_order``: for orderly consumers, offsets within each queue never go back
  (except when a failed batch is retried as a whole);
- ``check_retry_timing``: each redelivery came after the delay its level promises
  (levels 3, 4, 5 … = 10 s, 30 s, 1 min …), within a tolerance.

Each returns a ``CheckReport`` (``ok``, a frame of findings, a one-line summary).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqlab.common import message_const as mc
from mqlab.common.filter_api import ExpressionType, SubscriptionData
from mqlab.common.message_decoder import decode_stored_message
from mqlab.common.sql92 import FilterException, compile_sql92

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.lab.lab import Lab

__all__ = [
    "CheckReport",
    "check_at_least_once",
    "find_duplicates",
    "check_queue_order",
    "check_retry_timing",
    "delay_table_ms",
]


def _frame() -> pd.DataFrame:
    """An empty DataFrame (pandas is imported on first use: ``python -m mqlab explore`` never
    needs it)."""
    import pandas as pd

    return pd.DataFrame()


@dataclass(slots=True)
class CheckReport:
    """The result of one checker."""

    name: str
    ok: bool
    summary: str
    findings: pd.DataFrame = field(default_factory=_frame)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return f"{'✔' if self.ok else '✘'} {self.name}: {self.summary}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else "#b42318"
        table = "" if self.findings.empty else self.findings.head(20).to_html(index=False)
        return f'<div style="color:{colour};font-family:monospace">{self}</div>{table}'


def _stored_ids(lab: Lab, topic: str) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """Messages the brokers stored for ``topic`` (queue, offset, client msg id), and the
    properties of each row (for the subscription filter)."""
    import pandas as pd

    rows, props = [], []
    for b in lab.brokers:
        store = b.message_store
        for _, _, raw in store.iter_commit_log_entries():
            m = decode_stored_message(raw, read_body=False)
            if m.topic != topic:
                continue
            rows.append({"broker": b.broker_config.broker_name, "queue_id": m.queue_id,
                         "queue_offset": m.queue_offset, "msg_id": m.client_msg_id(),
                         "store_timestamp": m.store_timestamp})  # fmt: skip
            props.append(m.properties)
    frame = pd.DataFrame(
        rows, columns=["broker", "queue_id", "queue_offset", "msg_id", "store_timestamp"]
    )
    return frame, props


def _matcher(sd: SubscriptionData) -> Callable[[dict[str, str]], bool]:
    """Whether a listener with this subscription can ever get a message (by its properties):
    TAG by tag string, as ``PullAPIWrapper#processPullResult`` re-checks it; SQL92 by the
    expression, as ``ExpressionMessageFilter#isMatchedByCommitLog`` (only TRUE matches)."""
    if ExpressionType.is_tag_type(sd.expression_type) or sd.class_filter_mode:
        if not sd.tags_set or sd.class_filter_mode:
            return lambda _props: True
        wanted = frozenset(sd.tags_set)
        return lambda props: props.get(mc.PROPERTY_TAGS) in wanted
    try:
        return compile_sql92(sd.sub_string or "")
    except FilterException:  # the broker rejects such a subscription: nothing is delivered
        return lambda _props: False


def check_at_least_once(lab: Lab, topic: str, group: str) -> CheckReport:
    """Every stored message of ``topic`` that ``group`` subscribes to reached a listener of
    ``group`` at least once, or is still in flight.

    Expected messages are those the subscription of some consumer of ``group`` in this lab
    selects (every message when the lab has no consumer of ``group``); a TagB message is not
    expected by a ``TagA`` group. "In flight" means cached in a running consumer's
    ProcessQueue (pulled, not yet handed to the listener): not lost, just not consumed yet.
    Findings: one row per message not delivered, ``state`` "lost" or "in flight".
    """
    import pandas as pd

    stored, props = _stored_ids(lab, topic)
    consumers = [c for _, c in sorted(lab.consumers.items()) if c.consumer_group == group]
    subs = [_matcher(sd) for c in consumers
            if (sd := c.default_mq_push_consumer_impl.rebalance_impl.subscription_inner.get(topic))
            is not None]  # fmt: skip
    expected = [not subs or any(match(p) for match in subs) for p in props]
    filtered_out = len(stored) - sum(expected)
    stored = stored[pd.Series(expected, index=stored.index, dtype=bool)]
    d = lab.deliveries()
    got = set(d[(d["group"] == group) & (d["topic"] == topic)]["msg_id"])
    cached: set[str] = set()
    for c in consumers:
        if not c.default_mq_push_consumer_impl.mq_client_factory.running:
            continue  # a killed consumer's cache died with it
        for mq, pq in c.process_queue_table.items():
            if mq.topic == topic:
                for tree in (pq.msg_tree_map, pq.consuming_msg_orderly_tree_map):
                    cached.update(m.client_msg_id() for m in tree.values())
    missing = stored[~stored["msg_id"].isin(got)].copy()
    missing["state"] = ["in flight" if i in cached else "lost" for i in missing["msg_id"]]
    lost = int((missing["state"] == "lost").sum())
    in_flight = len(missing) - lost
    ok = lost == 0
    delivered = len(stored) - len(missing)
    if ok and not in_flight:
        summary = f"all {len(stored)} expected message(s) were delivered"
    elif ok:
        summary = (f"{delivered} of {len(stored)} expected message(s) delivered, {in_flight} "
                   "still in flight (cached in a ProcessQueue), none lost")  # fmt: skip
    else:
        summary = f"{lost} of {len(stored)} expected message(s) never reached a listener of {group}"
        if in_flight:
            summary += f" ({in_flight} more still in flight)"
    if filtered_out:
        summary += f"; {filtered_out} not selected by the subscription"
    return CheckReport("at-least-once", ok, summary, missing.reset_index(drop=True))


def _fault_events(lab: Lab) -> list[tuple[int, int, str, str]]:
    """(t_ms, seq, kind, text) of kills, restarts and rebalance changes, in order."""
    out = []
    for e in lab.trace.events:
        if e.kind == "fault" or (e.component == "SimDriver" and e.step in ("kill", "stop")):
            out.append((e.t_ms, e.seq, "fault", e.fields.get("text") or f"{e.step} {e.node}"))
        elif e.component.startswith("Rebalance") and e.component.endswith(".messageQueueChanged"):
            # RebalanceImpl#messageQueueChanged: this consumer's queue set changed.
            out.append((e.t_ms, e.seq, "rebalance", e.fields.get("text", "queues changed")))
    return out


def duplicate_cause(
    prev: tuple[int, str, int], cur: tuple[int, str, int], events: list[tuple[int, int, str, str]]
) -> tuple[str, int | None]:
    """Why delivery ``cur`` came after ``prev`` of the same message to the same group, and the
    trace seq behind it. Each is (t_ms, consumer, reconsume times); ``events``:
    ``_fault_events``. Shared by ``find_duplicates`` and the explorer's outcome counts."""
    if cur[2] > prev[2]:
        return "retry", None
    if cur[2] == prev[2] > 0:
        # Two retry copies with the same count: two owners of the queue (a rebalance
        # overlap) both failed the message and both sent it back.
        rb = [ev for ev in events if ev[2] == "rebalance" and ev[0] <= cur[0]]
        return "rebalance overlap (sent back twice)", (rb[-1][1] if rb else None)
    between = [ev for ev in events if prev[0] <= ev[0] <= cur[0]]
    faults = [ev for ev in between if ev[2] == "fault"]
    if faults:
        return "crash before offset persist", faults[-1][1]
    rb = [ev for ev in between if ev[2] == "rebalance"]
    if prev[1] != cur[1] or rb:
        return "rebalance overlap", (rb[-1][1] if rb else None)
    return "unexplained", None


def find_duplicates(lab: Lab, group: str | None = None) -> CheckReport:
    """Messages delivered more than once to a group, with a cause and the trace seq behind it."""
    import pandas as pd

    d = lab.deliveries()
    if group is not None:
        d = d[d["group"] == group]
    events = _fault_events(lab)
    rows = []
    for (grp, msg_id), deliveries in d.groupby(["group", "msg_id"], sort=True):
        if len(deliveries) < 2:
            continue
        deliveries = deliveries.sort_values("t_ms", kind="stable")
        for prev, cur in zip(
            deliveries.iloc[:-1].itertuples(), deliveries.iloc[1:].itertuples(), strict=True
        ):
            cause, seq = duplicate_cause(
                (prev.t_ms, prev.consumer, prev.reconsume_times),
                (cur.t_ms, cur.consumer, cur.reconsume_times), events,
            )  # fmt: skip
            rows.append({"group": grp, "msg_id": msg_id, "first_t_ms": prev.t_ms,
                         "first_consumer": prev.consumer, "again_t_ms": cur.t_ms,
                         "again_consumer": cur.consumer, "queue_id": cur.queue_id,
                         "queue_offset": cur.queue_offset, "cause": cause, "seq": seq})  # fmt: skip
    cols = ["group", "msg_id", "first_t_ms", "first_consumer", "again_t_ms", "again_consumer",
            "queue_id", "queue_offset", "cause", "seq"]  # fmt: skip
    df = pd.DataFrame(rows, columns=cols)
    unintended = df[df["cause"] != "retry"]
    counts = unintended["cause"].value_counts().to_dict()
    summary = (
        "no unintended duplicates"
        if unintended.empty
        else f"{len(unintended)} duplicate deliver(ies): "
        + ", ".join(f"{n} × {c}" for c, n in sorted(counts.items()))
    )
    return CheckReport("duplicates", unintended.empty, summary, df)


def check_queue_order(lab: Lab, consumer: str | None = None) -> CheckReport:
    """Within each (consumer, queue), first deliveries come in offset order."""
    import pandas as pd

    d = lab.deliveries()
    if consumer is not None:
        d = d[d["consumer"] == consumer]
    rows = []
    for (cons, queue, broker, qid), g in d.groupby(
        ["consumer", "queue", "broker", "queue_id"], sort=True
    ):
        last = -1
        for r in g.itertuples():
            if r.queue_offset < last and r.reconsume_times == 0:
                rows.append({"consumer": cons, "queue": queue, "broker": broker, "queue_id": qid,
                             "t_ms": r.t_ms, "queue_offset": r.queue_offset, "after": last})  # fmt: skip
            last = max(last, r.queue_offset)
    df = pd.DataFrame(
        rows, columns=["consumer", "queue", "broker", "queue_id", "t_ms", "queue_offset", "after"]
    )
    summary = (
        "every queue was consumed in order" if df.empty else f"{len(df)} out-of-order deliver(ies)"
    )
    return CheckReport("per-queue order", df.empty, summary, df)


def delay_table_ms(
    level_string: str = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h",
) -> dict[int, int]:
    """``messageDelayLevel`` parsed: level (1-based) → ms (``MessageStoreConfig.messageDelayLevel``)."""
    units = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    return {i + 1: int(v[:-1]) * units[v[-1]] for i, v in enumerate(level_string.split())}


def check_retry_timing(lab: Lab, group: str, *, tolerance_ms: int = 1_000) -> CheckReport:
    """Each redelivery k came about delay(level 3 + k − 1) after delivery k − 1."""
    import pandas as pd

    levels = delay_table_ms(lab.brokers[0].message_store_config.message_delay_level)
    d = lab.deliveries()
    d = d[d["group"] == group]
    rows = []
    for msg_id, g in d.groupby("msg_id", sort=True):
        g = g.sort_values("t_ms", kind="stable")
        for prev, cur in zip(g.iloc[:-1].itertuples(), g.iloc[1:].itertuples(), strict=True):
            if cur.reconsume_times != prev.reconsume_times + 1:
                continue
            level = min(3 + prev.reconsume_times, max(levels))
            want = levels[level]
            got = cur.t_ms - prev.t_ms
            rows.append({"msg_id": msg_id, "reconsume_times": cur.reconsume_times, "level": level,
                         "expected_ms": want, "actual_ms": got,
                         "ok": want <= got <= want + tolerance_ms})  # fmt: skip
    df = pd.DataFrame(
        rows, columns=["msg_id", "reconsume_times", "level", "expected_ms", "actual_ms", "ok"]
    )
    bad = df[~df["ok"]] if not df.empty else df
    summary = (
        f"{len(df)} redelivery(ies) on schedule"
        if bad.empty
        else f"{len(bad)} of {len(df)} redeliveries off schedule"
    )
    return CheckReport("retry timing", bad.empty, summary, df)
