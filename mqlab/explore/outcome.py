"""The outcome of one explored run, from the delivery checkers that already exist.

Mirrors no RocketMQ class. An outcome is a short label built from counts, with zero
counts left out ("ok" when all are zero):

- ``lost``: messages the producer got a SEND_OK for (not FLUSH_SLAVE_TIMEOUT,
  SLAVE_NOT_AVAILABLE or FLUSH_DISK_TIMEOUT: those promise nothing) that no listener of
  the group got,
  that no live consumer still holds in a ProcessQueue, and that the broker no longer has
  below the group's committed offset (gone from the store, or the offset passed them):
  at-least-once broken;
- ``pending``: such messages the broker still has at or past the committed offset: they
  will be delivered, the run ended first (a lock still held, a retry not yet due);
- ``dup:<cause>``: unintended duplicates by cause (``mqlab.lab.checkers.find_duplicates``:
  rebalance, crash, sent-back-twice, unexplained);
- ``order``: out-of-order first deliveries within a queue (``check_queue_order``);
- ``concurrent``: queues of an orderly group whose listener two consumers of the group
  (or two threads of one) were inside at the same time: orderly consumption broken
  (``ConsumeMessageOrderlyService.ConsumeRequest#run`` consumes a queue only while it
  holds the broker's lock, the ``MessageQueueLock`` and the ProcessQueue's consume lock,
  and ``RebalancePushImpl#removeUnnecessaryMessageQueue`` gives a queue away only when
  its consume lock is free). A call lasts from the listener's call until it returns,
  frozen time included (``engine.freeze``: a paused JVM is still inside); the call of a
  consumer killed inside its listener ends with it (its process is gone);
- ``overlap``: queues that two consumers of one group held at once
  (``mqlab.lab.figures.allocation_heatmap_frame``, as lesson 5 reads it);
- ``retry``: redeliveries (reconsume times > 0); ``dlq``: messages in ``%DLQ%`` topics.

For example ``"dup:rebalance=1 overlap=1"``.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

from mqlab.common.message_decoder import decode_stored_message

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab

__all__ = ["outcome_counts", "outcome_label", "concurrent_queues", "delivery_counts",
           "checker_counts", "OUTCOME_KEYS"]  # fmt: skip

_CAUSES = {
    "rebalance overlap": "dup:rebalance",
    "rebalance overlap (sent back twice)": "dup:sent-back-twice",
    "crash before offset persist": "dup:crash",
    "unexplained": "dup:unexplained",
}
OUTCOME_KEYS = ("lost", "pending", "dup:rebalance", "dup:sent-back-twice", "dup:crash", "dup:unexplained",
                "order", "concurrent", "overlap", "retry", "dlq")  # fmt: skip


def outcome_counts(
    lab: Lab, sends: list[tuple[str, Any]], *, checkers: bool = False
) -> dict[str, int]:
    """Every ``OUTCOME_KEYS`` count of a finished run (``sends``: (topic, SendFuture)).

    The ``dup:*``, ``order`` and ``overlap`` counts come from plain-Python readings of the
    consumers' logs and the trace (``delivery_counts``: the same counts as the lessons'
    pandas checkers, at a fifteenth of the CPU); ``checkers=True`` takes them from the
    checkers themselves (``find_duplicates``, ``check_queue_order``,
    ``allocation_heatmap_frame``), as ``tests/explore/test_outcome_fast.py`` compares."""
    counts = dict.fromkeys(OUTCOME_KEYS, 0)
    # SEND_OK only: FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE and FLUSH_DISK_TIMEOUT store
    # the message but promise nothing about its durability (``SendStatus``)
    acked = {(topic, f.result.msg_id) for topic, f in sends
             if f.done and f.error is None and f.result is not None
             and f.result.send_status.value == "SEND_OK"}  # fmt: skip
    groups: dict[str, set[str]] = {}
    held: set[str] = set()
    retries = 0
    for c in lab.consumers.values():
        impl = c.default_mq_push_consumer_impl
        got = groups.setdefault(c.consumer_group, set())
        for r in impl.consumed:
            got.add(r.msg_id)
            retries += r.reconsume_times > 0
        if impl.mq_client_factory.running:
            for pq in impl.rebalance_impl.process_queue_table.values():
                if not pq.dropped:
                    for tree in (pq.msg_tree_map, pq.consuming_msg_orderly_tree_map):
                        held.update(m.client_msg_id() for m in tree.values())
    stored: dict[str, list[tuple[str, str, int, int]]] = {}
    for b in lab.brokers:
        if b.message_store is None or not b.store_dir.exists():
            continue  # no store, or a machine lost with its disk (``Lab.lose``)
        for _, _, raw in b.message_store.iter_commit_log_entries():
            m = decode_stored_message(raw, read_body=False)
            if m.topic.startswith("%DLQ%"):
                counts["dlq"] += 1
            stored.setdefault(m.client_msg_id(), []).append(
                (b.name, m.topic, m.queue_id, m.queue_offset)
            )
    for topic, msg_id in sorted(acked):
        if not groups or any(msg_id in got for got in groups.values()) or msg_id in held:
            continue
        places = [p for p in stored.get(msg_id, []) if p[1] == topic]
        waiting = False
        for group in sorted(groups):
            for broker, _, qid, qoff in places:
                b = lab.broker(broker)
                table = b.consumer_offset_manager.offset_table.get(f"{topic}@{group}", {})
                if table.get(qid, -1) <= qoff:
                    waiting = True  # the group has not committed past it: it will come
        counts["pending" if waiting else "lost"] += 1
    counts.update(checker_counts(lab) if checkers else delivery_counts(lab))
    counts["retry"] = retries
    counts["concurrent"] = concurrent_queues(lab)
    return counts


def checker_counts(lab: Lab) -> dict[str, int]:
    """The ``dup:*``, ``order`` and ``overlap`` counts, from the lessons' checkers."""
    from mqlab.lab.checkers import check_queue_order, find_duplicates
    from mqlab.lab.figures import allocation_heatmap_frame

    counts = dict.fromkeys((*_CAUSES.values(), "order", "overlap"), 0)
    dups = find_duplicates(lab).findings
    for cause in dups["cause"]:
        if cause in _CAUSES:
            counts[_CAUSES[cause]] += 1
    counts["order"] = len(check_queue_order(lab).findings)
    heat = allocation_heatmap_frame(lab.trace.events)
    if not heat.empty and "owners" in heat:
        counts["overlap"] = int(
            heat[heat["owners"] > 1][["topic", "queue"]].drop_duplicates().shape[0]
        )
    return counts


def delivery_counts(lab: Lab) -> dict[str, int]:
    """``checker_counts`` without pandas, reading what the checkers read:

    - the deliveries as ``Lab.deliveries`` lists them (consumers by name, each one's log in
      order, then stably by time and consumer);
    - ``dup:*``: per (group, msg id), each delivery after the first, with the cause
      ``find_duplicates`` gives it (the fault and rebalance events of the trace, read only
      when some message came twice);
    - ``order``: per (consumer, queue), first deliveries below an offset seen before
      (``check_queue_order``);
    - ``overlap``: (topic, queue) pairs two client ids held in one allocation snapshot
      (``mqlab.lab.allocation.allocation_snapshots``, behind ``allocation_heatmap_frame``).
    """
    from mqlab.lab.allocation import allocation_snapshots
    from mqlab.lab.checkers import _fault_events, duplicate_cause

    counts = dict.fromkeys((*_CAUSES.values(), "order", "overlap"), 0)
    rows = []
    for name, c in sorted(lab.consumers.items()):
        group = c.consumer_group
        for r in c.consumed:
            rows.append((r.t_ms, name, group, r.msg_id, r.mq, r.queue_offset, r.reconsume_times))
    rows.sort(key=lambda r: (r[0], r[1]))
    by_msg: dict[tuple, list[tuple]] = {}
    last: dict[tuple, int] = {}
    for r in rows:
        t_ms, name, group, msg_id, mq, qoff, times = r
        if group is not None and msg_id is not None:  # pandas' groupby drops missing keys
            by_msg.setdefault((group, msg_id), []).append(r)
        key = (name, mq.topic, mq.broker_name, mq.queue_id)
        if None in key:
            continue
        seen = last.get(key, -1)
        if qoff < seen and times == 0:
            counts["order"] += 1
        last[key] = max(seen, qoff)
    events = None
    for ds in by_msg.values():
        for prev, cur in pairwise(ds):
            if events is None:
                events = _fault_events(lab)
            cause, _ = duplicate_cause((prev[0], prev[1], prev[6]), (cur[0], cur[1], cur[6]),
                                       events)  # fmt: skip
            if cause in _CAUSES:
                counts[_CAUSES[cause]] += 1
    over: set[tuple[str, str]] = set()
    for _, views in allocation_snapshots(lab.trace.events)[0]:
        ids: dict[tuple[str, str, str], set[str]] = {}
        for (_, g, t), (cid, qs) in views.items():
            for q in qs:
                ids.setdefault((g, t, q), set()).add(cid)
        over.update((t, q) for (_, t, q), held in ids.items() if len(held) > 1)
    counts["overlap"] = len(over)
    return counts


def concurrent_queues(lab: Lab) -> int:
    """The ``concurrent`` count: (group, queue) pairs with two overlapping listener calls
    of different consumers or threads (calls ``[begin, end)``, from each orderly
    consumer's ``listener_calls``)."""
    now = lab.driver.scheduler.now
    calls: dict[tuple, list[tuple[int, int, tuple[str, str]]]] = {}
    for c in lab.consumers.values():
        impl = c.default_mq_push_consumer_impl
        log = getattr(impl.consume_message_service, "listener_calls", None)
        if not impl.consume_orderly or not log:
            continue
        name = impl.mq_client_factory.name
        running = impl.mq_client_factory.running
        for begin, end, mq, worker in log:
            if end is None:
                end = now + 1 if running else begin  # still inside / gone with its process
            key = (c.consumer_group, mq.topic, mq.broker_name, mq.queue_id)
            calls.setdefault(key, []).append((begin, end, (name, worker)))
    found = 0
    for spans in calls.values():
        spans.sort()
        found += any(
            b2 < e1 and o1 != o2
            for i, (b1, e1, o1) in enumerate(spans)
            for b2, _, o2 in spans[i + 1 :]
        )
    return found


def outcome_label(counts: dict[str, int]) -> str:
    """``"ok"`` or the non-zero counts, in ``OUTCOME_KEYS`` order, then any other keys in
    ``counts``' order (``mqlab.explore.dledger.DLEDGER_KEYS``)."""
    keys = OUTCOME_KEYS + tuple(k for k in counts if k not in OUTCOME_KEYS)  # a DLedger run's
    parts = [f"{k}={counts[k]}" for k in keys if counts.get(k)]
    return " ".join(parts) if parts else "ok"
