"""The driver's choice points: no chooser = today's run; a default chooser = the same run;
candidates respect FIFO per direction; schedules round-trip."""

from __future__ import annotations

import pytest

from mqlab.explore.schedule import DEFAULT, Choice, Schedule, ScheduleError
from mqlab.lab.lab import Lab
from mqlab.runtime.scheduler import ChoosingScheduler, Scheduler, group_of


class Default:
    """Always the seed's own choice; remembers every candidate list it saw."""

    def __init__(self) -> None:
        self.seen: list[list] = []

    def choose_event(self, sched, cands):
        self.seen.append(list(cands))
        return cands[0]

    def choose_latency(self, sender, receiver, cmd, default):
        return default


def _run(chooser=None, window=0) -> tuple[list[tuple], Lab]:
    lab = Lab(seed=3, trace_level="frames")
    if chooser is not None:
        lab.driver.set_chooser(chooser, window_ms=window)
    lab.push_consumer("CG", "TopicTest")
    lab.push_consumer("CG", "TopicTest")
    for i in range(4):
        lab.send("TopicTest", f"m{i}".encode())
    lab.advance(3000)
    rows = [(e.seq, e.t_ms, e.node, e.component, e.step, tuple(sorted(e.fields.items())))
            for e in lab.trace.events]  # fmt: skip
    return rows, lab


def test_default_chooser_gives_the_seeds_own_trace_byte_for_byte():
    plain, lab0 = _run()
    assert type(lab0.driver.scheduler) is Scheduler
    chooser = Default()
    chosen, lab1 = _run(chooser, window=2)
    assert type(lab1.driver.scheduler) is ChoosingScheduler
    assert chosen == plain
    assert len(plain) == 461
    # with a 2 ms window the chooser had real choices, and never two frames of one direction
    multi = [c for c in chooser.seen if len(c) > 1]
    assert (len(multi), len(chooser.seen)) == (129, 138)
    for cands in chooser.seen:
        groups = [group_of(t) for t in cands]
        assert len(groups) == len(set(groups))
        assert [(t.due, t.priority, t.seq) for t in cands] == sorted(
            (t.due, t.priority, t.seq) for t in cands
        )
    lab1.driver.set_chooser(None)
    assert type(lab1.driver.scheduler) is Scheduler
    lab0.close()
    lab1.close()


def test_schedule_text_round_trips_and_orders():
    s = Schedule.parse("d3 o2 l1 F:kill(broker-a) d2 o1")
    assert s.choices[:4] == (DEFAULT, DEFAULT, DEFAULT, Choice("o", 2))
    assert str(s) == "d3 o2 l1 F:kill(broker-a) d2 o1"
    assert Schedule.parse(str(s)) == s
    assert (s.faults, s.moves, s.depth) == (1, 3, 9)
    assert str(Schedule.parse("o0 l0 d4")) == "(default)"
    assert Schedule.parse("F:cut(consumer-1,broker-a)").choices == (
        Choice("F", "cut(consumer-1,broker-a)"),
    )
    a, b, c = Schedule.parse("o1"), Schedule.parse("d5 o1"), Schedule.parse("F:join")
    assert sorted([c, b, a], key=Schedule.sort_key) == [a, b, c]
    with pytest.raises(ScheduleError, match="bad schedule token 'x1'"):
        Schedule.parse("o1 x1")


def test_bounds_parse_and_errors():
    from mqlab.explore.engine import Bounds

    b = Bounds.parse("depth=8,faults=1,window=2,latencies=1/5,por=0,runs=30")
    assert (b.depth, b.faults, b.window_ms, b.latencies, b.por, b.max_runs) == (
        8, 1, 2, (1, 5), False, 30,
    )  # fmt: skip
    assert str(b) == "depth=8,faults=1,window=2,latencies=1/5,por=0"
    with pytest.raises(ValueError, match="unknown key 'deep'"):
        Bounds.parse("deep=3")
    with pytest.raises(ValueError, match="'depth' is not key=value"):
        Bounds.parse("depth")


def test_mutants_are_off_unless_switched_on():
    from mqlab.explore import mutants

    assert mutants.active() == ()
    with mutants.mutant("flush_before_write"):
        assert mutants.active() == ("flush_before_write",)
    assert mutants.active() == ()
    with pytest.raises(ValueError, match="unknown mutant 'nope'"), mutants.mutant("nope"):
        pass


def test_freeze_moves_overdue_events_to_the_wake_up_in_order():
    from mqlab.explore.engine import freeze

    lab = Lab(seed=0)
    c = lab.push_consumer("CG", "TopicTest")
    node = c.default_mq_push_consumer_impl.mq_client_factory.name
    lab.advance(100)
    before = [(p.due_ms, p.name, p.key) for p in lab.next_timers(None) if p.node == node]
    now = lab.now
    freeze(lab, node, 10_000)
    after = [(p.due_ms, p.name, p.key) for p in lab.next_timers(None) if p.node == node]
    wake = now + 10_000
    assert sorted(after) == sorted((max(d, wake), n, k) for d, n, k in before)
    assert sum(d == wake for d, _, _ in after) == sum(d < wake for d, _, _ in before) > 0
    lab.close()
