"""Broker-side queue locks for orderly consumption.

Mirrors ``RebalanceLockManager`` and its ``LockEntry`` (broker/client/rebalance,
RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop" (orderly pull needs the queue locked), mechanisms.md "Rebalancing" (rebalance);
docs/reference.md §9 (lock expiry 60 s), §10.16 (tryLockBatch returns the subset the caller holds,
expired locks are reassigned, unlock only removes the caller's own entries).

What this module owns: ``mq_lock_table`` (group → {MessageQueue → LockEntry}). What it
must not know: clocks and requests; the LOCK_BATCH_MQ / UNLOCK_BATCH_MQ handlers pass
``now_ms``. A lock is valid while ``now − last renewal ≤ 60 000``; it expires at the
first instant strictly after that. Locking a queue you already hold renews it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mqlab.common.message import MessageQueue
from mqlab.trace.events import Kind

__all__ = ["RebalanceLockManager", "LockEntry", "REBALANCE_LOCK_MAX_LIVE_TIME"]

#: ``rocketmq.broker.rebalance.lockMaxLiveTime`` default (docs/reference.md §9).
REBALANCE_LOCK_MAX_LIVE_TIME = 60000

_COMPONENT = "RebalanceLockManager"


@dataclass(slots=True)
class LockEntry:
    """Owner and last renewal of one queue lock. Mirrors ``RebalanceLockManager.LockEntry``."""

    client_id: str
    last_update_timestamp: int

    def is_expired(self, now_ms: int, max_live_ms: int = REBALANCE_LOCK_MAX_LIVE_TIME) -> bool:
        """Mirrors ``LockEntry#isExpired``: more than 60 s since the last renewal."""
        return now_ms - self.last_update_timestamp > max_live_ms

    def is_locked(
        self, client_id: str, now_ms: int, max_live_ms: int = REBALANCE_LOCK_MAX_LIVE_TIME
    ) -> bool:
        """Mirrors ``LockEntry#isLocked``: held by ``client_id`` and not expired."""
        return self.client_id == client_id and not self.is_expired(now_ms, max_live_ms)


class RebalanceLockManager:
    """Queue locks of one broker, per consumer group.

    Attributes:
        mq_lock_table: group → {queue → LockEntry}.
        max_live_ms: lock lifetime (``REBALANCE_LOCK_MAX_LIVE_TIME``, 60 000).
    """

    __slots__ = ("mq_lock_table", "max_live_ms", "_tracer")

    def __init__(
        self, *, tracer: Any = None, max_live_ms: int = REBALANCE_LOCK_MAX_LIVE_TIME
    ) -> None:
        self.mq_lock_table: dict[str, dict[MessageQueue, LockEntry]] = {}
        self.max_live_ms = max_live_ms
        self._tracer = tracer

    def is_locked(self, group: str, mq: MessageQueue, client_id: str, now_ms: int) -> bool:
        """True if ``client_id`` holds an unexpired lock on ``mq`` (no renewal).

        Java's private ``isLocked`` also renews a held lock; :meth:`try_lock` and
        :meth:`try_lock_batch` do that renewal themselves.
        """
        entry = self.mq_lock_table.get(group, {}).get(mq)
        return entry is not None and entry.is_locked(client_id, now_ms, self.max_live_ms)

    def try_lock(self, group: str, mq: MessageQueue, client_id: str, now_ms: int) -> bool:
        """Lock (or renew) one queue for ``client_id``.

        Mirrors ``RebalanceLockManager#tryLock`` (broker/client/rebalance, RocketMQ 4.9.3):
        a free queue or an expired lock goes to the caller; the caller's own lock is
        renewed; another client's live lock makes it fail.
        """
        return self._lock_one(
            self.mq_lock_table.setdefault(group, {}), group, mq, client_id, now_ms
        )

    def try_lock_batch(
        self, group: str, mqs: Iterable[MessageQueue], client_id: str, now_ms: int
    ) -> set[MessageQueue]:
        """Lock (or renew) several queues; return those the caller now holds.

        Mirrors ``RebalanceLockManager#tryLockBatch`` (broker/client/rebalance, RocketMQ
        4.9.3); docs/reference.md §10.16. Queues are processed in sorted order so trace events are
        reproducible.
        """
        group_value = self.mq_lock_table.setdefault(group, {})
        return {
            mq
            for mq in sorted(set(mqs))
            if self._lock_one(group_value, group, mq, client_id, now_ms)
        }

    def _lock_one(
        self,
        group_value: dict[MessageQueue, LockEntry],
        group: str,
        mq: MessageQueue,
        client_id: str,
        now_ms: int,
    ) -> bool:
        entry = group_value.get(mq)
        if entry is None:
            group_value[mq] = LockEntry(client_id, now_ms)
            self._emit("tryLock", "granted", group=group, mq=str(mq), client_id=client_id)
            return True
        if entry.is_locked(client_id, now_ms, self.max_live_ms):
            entry.last_update_timestamp = now_ms
            return True
        if entry.is_expired(now_ms, self.max_live_ms):
            old = entry.client_id
            entry.client_id = client_id
            entry.last_update_timestamp = now_ms
            self._emit(
                "tryLock",
                "expiredReassigned",
                group=group,
                mq=str(mq),
                client_id=client_id,
                old_client_id=old,
            )
            return True
        self._emit(
            "tryLock",
            "lockedByOther",
            Kind.STEP,
            group=group,
            mq=str(mq),
            client_id=client_id,
            owner=entry.client_id,
        )
        return False

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> None:
        """Release the caller's locks; entries owned by others are left alone.

        Mirrors ``RebalanceLockManager#unlockBatch`` (broker/client/rebalance, RocketMQ
        4.9.3); docs/reference.md §10.16. An entry is removed if its owner is ``client_id``, even if
        it has expired.
        """
        group_value = self.mq_lock_table.get(group)
        if group_value is None:
            return
        for mq in sorted(set(mqs)):
            entry = group_value.get(mq)
            if entry is None:
                continue
            if entry.client_id == client_id:
                del group_value[mq]
                self._emit("unlockBatch", "released", group=group, mq=str(mq), client_id=client_id)
            else:
                self._emit(
                    "unlockBatch",
                    "lockedByOther",
                    Kind.STEP,
                    group=group,
                    mq=str(mq),
                    client_id=client_id,
                    owner=entry.client_id,
                )

    def _emit(self, method: str, step: str, kind: str = Kind.STATE, **fields: Any) -> None:
        if self._tracer is not None and self._tracer.enabled:
            self._tracer.emit(f"{_COMPONENT}.{method}", step, kind, **fields)
