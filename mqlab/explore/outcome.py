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
- ``overlap``: queues that two consumers of one group held at once
  (``mqlab.lab.figures.allocation_heatmap_frame``, as lesson 5 reads it);
- ``retry``: redeliveries (reconsume times > 0); ``dlq``: messages in ``%DLQ%`` topics.

For example ``"dup:rebalance=1 overlap=1"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqlab.common.message_decoder import decode_stored_message

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab

__all__ = ["outcome_counts", "outcome_label", "OUTCOME_KEYS"]

_CAUSES = {
    "rebalance overlap": "dup:rebalance",
    "rebalance overlap (sent back twice)": "dup:sent-back-twice",
    "crash before offset persist": "dup:crash",
    "unexplained": "dup:unexplained",
}
OUTCOME_KEYS = ("lost", "pending", "dup:rebalance", "dup:sent-back-twice", "dup:crash", "dup:unexplained",
                "order", "overlap", "retry", "dlq")  # fmt: skip


def outcome_counts(lab: Lab, sends: list[tuple[str, Any]]) -> dict[str, int]:
    """Every ``OUTCOME_KEYS`` count of a finished run (``sends``: (topic, SendFuture))."""
    from mqlab.lab.checkers import check_queue_order, find_duplicates
    from mqlab.lab.figures import allocation_heatmap_frame

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
    counts["retry"] = retries
    return counts


def outcome_label(counts: dict[str, int]) -> str:
    """``"ok"`` or the non-zero counts, in ``OUTCOME_KEYS`` order."""
    parts = [f"{k}={counts[k]}" for k in OUTCOME_KEYS if counts.get(k)]
    return " ".join(parts) if parts else "ok"
