"""mqlab.explore: the ready-made scenarios' outcome tables, mutants caught, runners equal.

The expected classes of each scenario are in ``mqlab.explore.scenarios`` (written before
the search ran); these tests pin the exact tables at the scenarios' own bounds.
"""

from __future__ import annotations

import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.mutants import mutant
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import SCENARIOS, get_scenario
from mqlab.explore.schedule import ScheduleError
from mqlab.explore.search import random_walks, replay

pytestmark = pytest.mark.slow


def _bounds(xs, **kw) -> Bounds:
    return Bounds(**{"depth": xs.depth, "faults": xs.fault_budget, "window_ms": xs.window_ms, **kw})


_PLAIN: dict[str, object] = {}


def _plain(name: str):
    """The search of scenario ``name`` at its own bounds, without mutants (run once)."""
    if name not in _PLAIN:
        xs = get_scenario(name)
        _PLAIN[name] = explore(xs, _bounds(xs))
    return _PLAIN[name]


def _keys(outcome: str) -> set[str]:
    return set() if outcome == "ok" else {part.split("=")[0] for part in outcome.split()}


#: orderly_slow_listener at depth 4: one class, with or without consume_lock_skipped
OSL_N, OSL_STATS = 7, (13, 13, 12, 1, 0)

TABLES = {
    "consumer_join": (
        [
            ("dup:rebalance=1", 4, "d5 l1", 6),
            ("dup:rebalance=1 overlap=1", 11, "(default)", 0),
            ("ok", 2, "l1 d1 l1 l1 d2 l1", 7),
        ],
        (76, 97, 72, 22, 0),
    ),  # fmt: skip
    "consumer_join_at_persist": (
        [("dup:rebalance=2 overlap=1", 20, "o1", 1), ("overlap=1", 9, "(default)", 0)],
        (118, 138, 118, 20, 0),
    ),
    "async_flush_power_cut": (
        [("lost=1", 2, "d3 F:power_cut(broker-a)", 4), ("ok", 4, "(default)", 0)],
        (8, 21, 21, 0, 0),  # (60, 83, 55, 28, 0) while a power cut told the peers at once
    ),
    "sync_flush_power_cut": ([("ok", 6, "(default)", 0)], (8, 21, 20, 1, 0)),
    # retry_rebalance, orderly_join: with their menus (latencies 1/5, window 1), depth 8
    "retry_rebalance": (
        [
            ("dup:rebalance=1 dup:sent-back-twice=1 overlap=1 retry=3 dlq=3", 21, "(default)", 0),
            ("retry=2 dlq=2", 6, "d6 l1", 7),
        ],
        (100, 121, 98, 22, 0),
    ),  # fmt: skip
    "orderly_join": (
        [
            ("dup:rebalance=1", 5, "d6 l1", 7),
            ("dup:rebalance=1 overlap=1", 8, "(default)", 0),
            ("ok", 1, "d2 l1 l1 l1 d2 l1", 8),
            ("overlap=1", 11, "l1 l1", 2),
        ],
        (102, 121, 100, 20, 0),
    ),  # fmt: skip
    "orderly_slow_listener": ([("overlap=1", OSL_N, "(default)", 0)], OSL_STATS),
    # with its menu (latencies 1/5, window 1): the same one class (was 21 runs without)
    "orderly_lock_expiry": ([("overlap=1", 11, "(default)", 0)], (25, 25, 23, 2, 3)),
    # consumer_crash, master_returns: with their menus (a kill anywhere in the first 6 points;
    # the returning master's registration 1/10/20 ms): 3 classes each (was 1, 6 runs)
    "consumer_crash": (
        [
            ("dup:crash=1", 2, "d2 F:kill(consumer-1)", 3),  # d5 before runs were deferred
            ("dup:crash=2", 1, "(default)", 0),
            ("dup:crash=4", 3, "F:kill(consumer-1)", 1),
        ],
        (35, 60, 42, 17, 0),
    ),
    # replication (tests/explore/test_explore_ha.py checks what each class is)
    "async_master_lost": (
        [("lost=1", 2, "d3 F:lose(broker-a)", 4), ("ok", 4, "(default)", 0)],
        (6, 15, 15, 0, 0),  # (45, 51, 42, 8, 0) while a lost machine told the peers at once
    ),
    "sync_master_lost": ([("ok", 6, "(default)", 0)], (6, 15, 15, 0, 0)),
    "master_returns": (
        [("dup:crash=1", 2, "l1", 1), ("dup:crash=2", 4, "(default)", 0), ("ok", 1, "l2", 1)],
        (24, 13, 13, 0, 0),
    ),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_scenario_outcome_table(name):
    xs = get_scenario(name)
    res = _plain(name)
    table, stats = TABLES[name]
    assert res.table() == table
    assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == stats
    assert res.complete
    found = set().union(*(_keys(o) for o, *_ in res.table()))
    assert found <= xs.allowed
    assert xs.expected <= found
    # the shortest schedule of each class replays to it
    for outcome, _, schedule, _ in res.table():
        assert replay(xs, schedule, _bounds(xs)).outcome == outcome


def test_every_scenario_has_a_table():
    # the DLedger scenarios' tables are in test_dledger_explore.py
    assert sorted(n for n in SCENARIOS if not n.startswith("dledger_")) == sorted(TABLES)


MUTANTS = [
    ("sync_flush_power_cut", "flush_before_write", "lost=1", "d3 F:power_cut(broker-a)"),
    ("consumer_join", "dropped_pq_consumed", "dup:rebalance=2 overlap=1", "(default)"),
    # the mutant's offset (5, all submitted) rides consumer-1's second pull at once: killed
    # inside offset 4 (the default) it loses nothing; killed before offset 4 starts, it does
    ("consumer_crash", "offset_before_consume", "lost=1", "F:kill(consumer-1)"),
    ("orderly_lock_expiry", "orderly_lock_unchecked", "dup:rebalance=1 overlap=1", "(default)"),
    (
        "orderly_slow_listener",
        "consume_lock_skipped",
        "dup:rebalance=1 concurrent=1 overlap=1",
        "(default)",
    ),
    ("sync_master_lost", "slave_ack_at_message_start", "lost=1", "d4 F:lose(broker-a)"),
]


@pytest.mark.parametrize(("name", "mut", "new_class", "schedule"), MUTANTS)
def test_mutant_is_caught_with_a_shortest_schedule(name, mut, new_class, schedule):
    xs = get_scenario(name)
    plain = _plain(name).outcomes()
    with mutant(mut):
        res = explore(xs, _bounds(xs))
        rows = {o: s for o, _, s, _ in res.table()}
        assert replay(xs, schedule, _bounds(xs)).outcome == new_class
    assert new_class in rows and new_class not in plain
    assert rows[new_class] == schedule


def test_pool_gives_the_sequential_table():
    # depth 10: 218 runs over many levels, latency points; the outcome of two runs with
    # the same state but another past (a rebalance a ms earlier) must not be shared. The
    # pool reads the same records in the same order: the same figures too
    xs = get_scenario("consumer_join")
    seq = explore(xs, _bounds(xs, depth=10))
    pool = explore(xs, _bounds(xs, depth=10), runner="pool", workers=2)
    assert (
        pool.table()
        == seq.table()
        == [
            ("dup:rebalance=1", 5, "d5 l1", 6),
            ("dup:rebalance=1 overlap=1", 16, "(default)", 0),
            ("ok", 5, "l1 d1 l1 d6 l1", 10),
        ]
    )
    assert (pool.runs, pool.states, pool.distinct) == (seq.runs, seq.states, seq.distinct)
    assert (seq.runs, seq.states, seq.distinct) == (218, 253, 212)


@pytest.mark.parametrize("name", ["consumer_crash", "master_returns"])
def test_pool_gives_the_sequential_table_of_the_widened_menus(name):
    # a fault on the menu (consumer_crash) and three latencies (master_returns)
    xs = get_scenario(name)
    seq = _plain(name)
    pool = explore(xs, _bounds(xs), runner="pool", workers=2)
    assert pool.table() == seq.table() == TABLES[name][0]
    figures = (pool.runs, pool.states, pool.distinct, pool.pruned, pool.redundant)
    assert figures == TABLES[name][1]
    # consumer_crash: 3 runs of level 1 took the kill (every event asleep); read up to it,
    # their prefixes through the kill ran again at level 1+1F (d2 F:kill stays the least)
    assert seq.deferred == pool.deferred == {"consumer_crash": 3, "master_returns": 0}[name]


def test_without_por_the_same_outcomes_from_more_runs():
    # orderly_join without its menu (one latency, no window), at depth 12: the sleep sets
    # save 16 runs (with the menu, at depth 8, they save none: 102 runs either way)
    xs = get_scenario("orderly_join")
    b = Bounds(depth=12, latencies=(1,))
    on = explore(xs, b, shrink_outcomes=False)
    off = explore(xs, Bounds(depth=12, latencies=(1,), por=False), shrink_outcomes=False)
    assert off.outcomes() == on.outcomes() == {"dup:rebalance=1 overlap=1": 1}
    assert (on.runs, off.runs) == (51, 67)


def test_random_walks_find_only_reachable_classes():
    xs = get_scenario("async_flush_power_cut")
    res = random_walks(xs, _bounds(xs), range(6), shrink_outcomes=False)
    assert res.runs == 6
    assert set(res.outcomes()) <= {"lost=1", "ok"}


def test_a_schedule_that_does_not_fit_is_a_clear_error():
    xs = get_scenario("async_flush_power_cut")
    with pytest.raises(ScheduleError, match=r"choice 0: o5 but only 1 event\(s\) enabled"):
        replay(xs, "o5")
    with pytest.raises(ScheduleError, match="choice 1 is an order point, the schedule says l1"):
        replay(xs, "d1 l1")


def test_cli_prints_the_table(capsys):
    from mqlab.__main__ import main

    assert main(["explore", "sync_flush_power_cut", "--no-progress", "--mutant",
                 "flush_before_write", "--bounds", "depth=5"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "lost=1       1      4  d3 F:power_cut(broker-a)" in out
    assert main(["explore", "nope"]) == 2
    assert main(["explore", "sync_flush_power_cut", "--bounds", "deep=3"]) == 2


def test_a_search_stopped_early_is_marked_incomplete():
    xs = get_scenario("async_flush_power_cut")
    res = explore(xs, _bounds(xs, max_runs=5), shrink_outcomes=False)
    assert (res.runs, res.complete) == (5, False)
    calls = iter(range(100))
    res = explore(xs, _bounds(xs), cancel=lambda: next(calls) >= 2, shrink_outcomes=False)
    assert res.complete is False and res.runs < 61


def test_concurrent_catches_an_orderly_queue_given_away_inside_its_listener():
    # consume_lock_skipped: consumer-1's rebalance unlocks queue 1 while its listener is
    # inside offset 0 (2 010-3 510 ms); consumer-2 locks it, and is inside it from 3 036 ms
    xs = get_scenario("orderly_slow_listener")
    assert _plain("orderly_slow_listener").table() == [("overlap=1", OSL_N, "(default)", 0)]
    calls: dict[str, list[tuple[int, int, int]]] = {}

    def look(lab) -> None:
        for c in lab.consumers.values():
            impl = c.default_mq_push_consumer_impl
            calls[impl.mq_client_factory.name] = [
                (b, e, mq.queue_id) for b, e, mq, _ in impl.consume_message_service.listener_calls
            ]

    replay(xs, "", _bounds(xs), on_lab=look)
    assert calls == {"consumer-1": [(2010, 3510, 1), (3510, 5010, 0)], "consumer-2": []}
    with mutant("consume_lock_skipped"):
        res = explore(xs, _bounds(xs))
        assert replay(xs, "", _bounds(xs), on_lab=look).outcome == (
            "dup:rebalance=1 concurrent=1 overlap=1"
        )
    assert res.table() == [("dup:rebalance=1 concurrent=1 overlap=1", OSL_N, "(default)", 0)]
    assert calls == {
        "consumer-1": [(2010, 3510, 1), (3510, 5010, 0)],
        "consumer-2": [(3036, 4536, 1)],
    }
