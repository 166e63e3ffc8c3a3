"""Tests for mqlab.broker.rebalance_lock_manager (docs/reference.md §10.16 broker queue locks, §9 60 s expiry)."""

from __future__ import annotations

from mqlab.broker.rebalance_lock_manager import REBALANCE_LOCK_MAX_LIVE_TIME, RebalanceLockManager
from mqlab.common.message import MessageQueue


class Tracer:
    enabled = True

    def __init__(self):
        self.events = []

    def emit(self, component, step, kind="step", **fields):
        self.events.append((component, step, kind, fields))


MQ0, MQ1, MQ2 = (MessageQueue("T", "broker-a", i) for i in range(3))


def test_max_live_time():
    """REBALANCE_LOCK_MAX_LIVE_TIME is 60 000 ms (docs/reference.md §9)."""
    assert REBALANCE_LOCK_MAX_LIVE_TIME == 60000


def test_first_lock_granted_then_other_client_refused():
    """A free queue goes to the first client; another client is refused while it is live."""
    tracer = Tracer()
    rlm = RebalanceLockManager(tracer=tracer)
    assert rlm.try_lock("g", MQ0, "c1", 0)
    assert not rlm.try_lock("g", MQ0, "c2", 1000)
    assert rlm.is_locked("g", MQ0, "c1", 1000) and not rlm.is_locked("g", MQ0, "c2", 1000)
    assert [e[1] for e in tracer.events] == ["granted", "lockedByOther"]


def test_owner_renewal_extends_lock():
    """Re-locking renews: locked at 0, renewed at 50 000, still held at 110 000 (60 000 after)."""
    rlm = RebalanceLockManager()
    rlm.try_lock("g", MQ0, "c1", 0)
    assert rlm.try_lock("g", MQ0, "c1", 50000)
    assert not rlm.try_lock("g", MQ0, "c2", 110000)
    assert rlm.mq_lock_table["g"][MQ0].last_update_timestamp == 50000


def test_expiry_after_60s_gives_lock_to_other_client():
    """At exactly 60 000 ms after renewal the lock holds; at 60 001 another client takes it."""
    tracer = Tracer()
    rlm = RebalanceLockManager(tracer=tracer)
    rlm.try_lock("g", MQ0, "c1", 0)
    assert not rlm.try_lock("g", MQ0, "c2", 60000)
    assert not rlm.is_locked("g", MQ0, "c1", 60001)
    assert rlm.try_lock("g", MQ0, "c2", 60001)
    assert rlm.mq_lock_table["g"][MQ0].client_id == "c2"
    assert tracer.events[-1][1:] == (
        "expiredReassigned",
        "state",
        {"group": "g", "mq": str(MQ0), "client_id": "c2", "old_client_id": "c1"},
    )


def test_try_lock_batch_returns_held_subset():
    """tryLockBatch returns queues held by or newly granted to the caller, expired ones reassigned."""
    rlm = RebalanceLockManager()
    assert rlm.try_lock_batch("g", [MQ0, MQ1], "c1", 0) == {MQ0, MQ1}
    rlm.try_lock("g", MQ1, "c1", 30000)  # c1 renews MQ1 only
    assert rlm.try_lock_batch("g", [MQ0, MQ1, MQ2], "c2", 30000) == {MQ2}
    assert rlm.try_lock_batch("g", [MQ0, MQ1, MQ2], "c2", 60001) == {MQ0, MQ2}
    assert rlm.try_lock_batch("g", [MQ0, MQ1], "c1", 60001) == {MQ1}


def test_groups_are_independent():
    """Locks are per consumer group."""
    rlm = RebalanceLockManager()
    rlm.try_lock("g1", MQ0, "c1", 0)
    assert rlm.try_lock("g2", MQ0, "c2", 0)


def test_unlock_by_non_owner_ignored():
    """unlockBatch removes only the caller's entries; another client's unlock is ignored."""
    tracer = Tracer()
    rlm = RebalanceLockManager(tracer=tracer)
    rlm.try_lock_batch("g", [MQ0, MQ1], "c1", 0)
    rlm.unlock_batch("g", [MQ0, MQ1], "c2")
    assert rlm.is_locked("g", MQ0, "c1", 1) and rlm.is_locked("g", MQ1, "c1", 1)
    rlm.unlock_batch("g", [MQ0], "c1")
    assert MQ0 not in rlm.mq_lock_table["g"]
    assert rlm.try_lock("g", MQ0, "c2", 2)
    assert not rlm.try_lock("g", MQ1, "c2", 2)
    rlm.unlock_batch("unknown-group", [MQ0], "c1")  # no table: nothing happens
    steps = [e[1] for e in tracer.events if e[0] == "RebalanceLockManager.unlockBatch"]
    assert steps == ["lockedByOther", "lockedByOther", "released"]
