"""Scheduler: order, keyed re-arming, periodic timers, daemon accounting."""

from mqlab.runtime.scheduler import Scheduler


def test_same_due_runs_in_scheduling_order():
    """Events due at the same ms run FIFO (heap key (due, priority, seq))."""
    s = Scheduler()
    out = []
    for i in range(5):
        s.call_at(10, lambda i=i: out.append(i), node="n", name=f"t{i}")
    while s.run_one():
        pass
    assert out == [0, 1, 2, 3, 4]
    assert s.now == 10


def test_keyed_timer_rearm_replaces():
    """Arming (node, name, key) again cancels the pending one."""
    s = Scheduler()
    out = []
    s.call_at(5, lambda: out.append("a"), node="n", name="x", key="k")
    s.call_at(7, lambda: out.append("b"), node="n", name="x", key="k")
    assert [p.due_ms for p in s.pending()] == [7]
    while s.run_one():
        pass
    assert out == ["b"]


def test_periodic_timer_rearms_and_can_be_cancelled():
    """A periodic timer fires every period until cancelled."""
    s = Scheduler()
    fired = []
    s.call_at(0, lambda: fired.append(s.now), node="n", name="p", period=5000, daemon=True)
    for _ in range(3):
        s.run_one()
    assert fired == [0, 5000, 10000]
    assert s.cancel("n", "p")
    assert s.run_one() is None


def test_daemon_timers_do_not_count_as_work():
    """has_foreground ignores daemon timers and tracks cancellations."""
    s = Scheduler()
    s.call_at(1, lambda: None, node="n", name="svc", daemon=True)
    assert not s.has_foreground
    s.call_at(2, lambda: None, node="n", name="job")
    assert s.has_foreground
    s.cancel("n", "job")
    assert not s.has_foreground


def test_reschedule_moves_timer_to_now():
    """ServiceThread#wakeup: a pending timer can be pulled forward."""
    s = Scheduler()
    out = []
    s.call_at(20000, lambda: out.append(s.now), node="c", name="RebalanceService.run")
    s.call_at(
        3, lambda: s.reschedule("c", "RebalanceService.run", None, s.now), node="c", name="notify"
    )
    while s.run_one():
        pass
    assert out == [3]
