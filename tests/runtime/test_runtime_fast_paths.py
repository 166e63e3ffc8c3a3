"""The driver's shortcuts keep its rules: heap order with compaction, GC setting restored.

docs/design.md §6.9 (heap key ``(due_ms, priority, seq)``, keyed timers replace, daemon accounting);
issue 3 (tuple heap, lazy-deletion compaction, fewer GC passes while events run).
"""

from __future__ import annotations

import gc
import random

import pytest

from mqlab.runtime import sim
from mqlab.runtime.scheduler import NORMAL, URGENT, Scheduler


class _ReferenceScheduler:
    """The rules written plainly: a list of live timers, the minimum (due, priority, seq) runs."""

    def __init__(self) -> None:
        self.now = 0
        self.seq = 0
        self.live: list[list] = []  # [due, priority, seq, node, name, key, period, daemon, label]

    def call_at(self, due, label, *, node, name, key, period, daemon, priority, keyed):
        due = max(due, self.now)
        if keyed:
            self.live = [t for t in self.live if not (t[9] and t[3:6] == [node, name, key])]
        self.live.append([due, priority, self.seq, node, name, key, period, daemon, label, keyed])
        self.seq += 1

    def cancel(self, node, name, key):
        n = len(self.live)
        self.live = [t for t in self.live if not (t[9] and t[3:6] == [node, name, key])]
        return len(self.live) != n

    def cancel_node(self, node):
        n = len(self.live)
        self.live = [t for t in self.live if t[3] != node]
        return n - len(self.live)

    def reschedule(self, node, name, key, due):
        for t in self.live:
            if t[9] and t[3:6] == [node, name, key]:
                self.call_at(due, t[8], node=node, name=name, key=key, period=t[6],
                             daemon=t[7], priority=t[1], keyed=True)  # fmt: skip
                return True
        return False

    def run_one(self):
        if not self.live:
            return None
        t = min(self.live, key=lambda t: t[:3])
        self.live.remove(t)
        self.now = t[0]
        if t[6] is not None:  # a periodic timer re-arms keyed
            self.call_at(t[0] + t[6], t[8], node=t[3], name=t[4], key=t[5], period=t[6],
                         daemon=t[7], priority=t[1], keyed=True)  # fmt: skip
        return t[8]

    def pending(self):
        return [(t[0], t[3], t[4], t[5], t[7], t[6] is not None) for t in sorted(self.live)]

    def has_foreground(self):
        return any(not t[7] for t in self.live)


@pytest.mark.parametrize("seed", range(12))
def test_scheduler_fires_in_the_reference_order_through_compactions(seed):
    """Random arming, keyed re-arming, cancels (enough to compact the heap many times),
    node silencing, wakeups and periodic timers: the same firing order, clock, pending list
    and foreground flag as the plain rule "the live minimum of (due, priority, seq) runs"."""
    rng = random.Random(seed)
    s, ref = Scheduler(), _ReferenceScheduler()
    fired: list[str] = []
    nodes, names = ["a", "b", "c"], ["rpc", "svc", "frame", "task"]
    for i in range(3000):
        op = rng.random()
        node, name = rng.choice(nodes), rng.choice(names)
        key = rng.choice([None, "k1", "k2", f"opaque={rng.randrange(40)}"])
        if op < 0.45:
            due = s.now + rng.choice([0, 0, 1, 5, 30, 3000, 30000])
            kw = dict(node=node, name=name, key=key, daemon=rng.random() < 0.4,
                      priority=rng.choice([URGENT, NORMAL]), keyed=rng.random() < 0.8,
                      period=rng.choice([None] * 9 + [rng.choice([7, 5000])]))  # fmt: skip
            label = f"t{i}"
            s.call_at(due, lambda label=label: fired.append(label), **kw)
            ref.call_at(due, label, **kw)
        elif op < 0.75:
            assert s.cancel(node, name, key) == ref.cancel(node, name, key)
        elif op < 0.77:
            assert s.cancel_node(node) == ref.cancel_node(node)
        elif op < 0.8:
            assert s.reschedule(node, name, key, s.now) == ref.reschedule(node, name, key, s.now)
        else:
            t = s.run_one()
            expected = ref.run_one()
            assert (t is None) == (expected is None)
            if t is not None:
                assert fired[-1] == expected
        assert s.now == ref.now
        assert s.has_foreground == ref.has_foreground()
        if i % 97 == 0:
            assert [
                (p.due_ms, p.node, p.name, p.key, p.daemon, p.periodic) for p in s.pending()
            ] == ref.pending()
    assert len(s._heap) < 3000  # cancelled entries were compacted away


def test_compaction_keeps_only_live_entries():
    """Cancelling most of a big heap rebuilds it without the cancelled entries (lazy
    deletion); the survivors still run in (due, seq) order."""
    s = Scheduler()
    out: list[int] = []
    for i in range(1000):
        s.call_at(1000 - i, lambda i=i: out.append(i), node="n", name="rpc", key=str(i))
    for i in range(0, 1000, 4):
        for j in (1, 2, 3):
            s.cancel("n", "rpc", str(i + j))
    assert len(s._heap) < 600
    while s.run_one():
        pass
    assert out == list(range(996, -1, -4))


def test_run_loops_relax_gc_and_restore_the_threshold():
    """While events run the young-generation GC threshold is raised; afterwards the
    caller's setting is back, also when a handler raises."""
    old = gc.get_threshold()
    seen: list[int] = []
    d = sim.SimDriver(seed=1)
    try:
        gc.set_threshold(700, old[1], old[2])
        d.call_later(1, lambda: seen.append(gc.get_threshold()[0]))
        d.run_until_idle()
        assert seen == [sim._GC_GEN0_THRESHOLD]
        assert gc.get_threshold()[0] == 700

        def boom() -> None:
            raise RuntimeError("handler failed")

        d.call_later(1, boom)
        with pytest.raises(RuntimeError):
            d.advance(5)
        assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*old)
