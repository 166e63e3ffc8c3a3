"""mqlab.explore: reaching deep classes: a connection kept slow (``L<i>``, ``sticky``), PCT
runs beside the random walks, and their classes shrunk to schedules that replay."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario
from mqlab.explore.schedule import DEFAULT, Choice, Schedule, ScheduleError
from mqlab.explore.search import PCT, pct_runs, replay

pytestmark = pytest.mark.slow


def test_a_slow_connection_is_one_move():
    s = Schedule.parse("d2 L1 l1")
    assert s.choices == (DEFAULT, DEFAULT, Choice("L", 1), Choice("l", 1))
    assert (str(s), s.moves, s.depth) == ("d2 L1 l1", 2, 4)
    # equal moves and length: the plain latency move first
    assert Schedule.parse("d5 l1").sort_key() < Schedule.parse("d5 L1").sort_key()
    # fewer moves first, however long
    assert Schedule.parse("d30 L1").sort_key() < Schedule.parse("l1 l1").sort_key()
    with pytest.raises(ScheduleError, match="bad schedule token 'L0'"):
        Schedule.parse("L0")
    b = Bounds.parse("deviations=2,sticky=1")
    assert b.sticky == 1 and str(b) == (
        "deviations=2,depth=any,faults=0,window=0,latencies=scenario,sticky=1,por=1"
    )
    assert not Bounds.parse("deviations=2").sticky
    assert str(Bounds.parse("deviations=2,sticky=2")).endswith("sticky=2,por=1")
    with pytest.raises(ValueError, match="sticky is 0, 1 or 2, got 3"):
        Bounds.parse("sticky=3")


def test_a_slow_connection_delays_every_later_frame_both_ways():
    # consumer_join: consumer-2's first frame (to the name server) slow alone changes
    # nothing; its connections to the name server and to broker-a kept slow (two moves)
    # make it join so late that nothing overlaps; ten single slow frames, a walk's, did
    # what two L1 do
    xs = get_scenario("consumer_join")
    assert replay(xs, "l1").outcome == "dup:rebalance=1 overlap=1"
    rec = replay(xs, "L1 d1 L1")
    assert rec.outcome == "ok"
    # the connection's later frames are no choice points: fewer points than the default
    assert len(replay(xs, "L1").choices) < len(replay(xs, "").choices)
    # a slow connection cannot be given where the run has an order point
    with pytest.raises(ScheduleError, match="is an order point"):
        replay(xs, "L1 L1")


def test_pct_priorities_and_change_points():
    g = PCT(random.Random(1), depth=3, k=10)
    assert len(g.change) == 2 and set(g.change.values()) == {1, 2}
    assert all(0 <= p < 10 for p in g.change)
    opts = [DEFAULT, Choice("o", 1)]
    first = next(i for i in range(10) if i not in g.change)
    k = g.order(first, ["a", "b"], opts)
    assert k == (0 if g.priority["a"] > g.priority["b"] else 1)
    # the node about to act at a change point drops below every first priority, and is slow
    top = ["a", "b"][k]
    p1 = min(g.change, key=g.change.get)
    assert g.order(p1, ["a", "b"], opts) == 1 - k
    assert g.priority[top] == 1 and g.slow == {top}
    lat = [DEFAULT, Choice("l", 1)]
    assert g.latency(first, top, "c", lat) == 1
    assert g.latency(first, "c", "d", lat) == 0
    # depth 1: no change point
    assert PCT(random.Random(1), depth=1, k=10).change == {}


def test_pct_is_deterministic_per_seed_and_its_classes_replay():
    xs = get_scenario("consumer_join")
    b = Bounds(depth=40)
    # shortest_runs=0: no search for fewer moves (ok's 9 moves would spend its 400 runs,
    # 23 CPU s a call; tests/explore/test_walks_shortest.py tests that search)
    one = pct_runs(xs, b, range(12), depth=3, shrink_replays=30, shortest_runs=0)
    two = pct_runs(xs, b, range(12), depth=3, shrink_replays=30, shortest_runs=0)
    assert one.table() == two.table()
    assert [(g.total_runs, g.new) for g in one.growth] == [
        (g.total_runs, g.new) for g in two.growth
    ]
    assert one.walks and one.runs == 12
    for row in one.rows:  # every class's shrunk schedule replays to its class
        assert replay(xs, row.schedule, b).outcome == row.outcome
    other = pct_runs(xs, b, range(12, 24), depth=3, shrink_outcomes=False)
    assert [r.found_at for r in other.rows] != [r.found_at for r in one.rows] or \
        other.table() != one.table()  # fmt: skip
    with pytest.raises(ValueError, match="PCT depth must be >= 1"):
        pct_runs(xs, b, range(1), depth=0)


def test_consumer_join_shows_five_classes_with_two_moves():
    # deviations=2 with slow connections: every class that 300 random walks of depth 40
    # find (issue 29), each with its least schedule. The whole search runs 2 814 runs
    # (level 0: 1, level 1: 106, level 2: 2 707) and gives this table, its counts 64, 351,
    # 1, 16 and 7; the first 143 runs reach all five (level 2 runs in sort_key order, so
    # a class's first record is its least schedule there), which this test pins
    xs = get_scenario("consumer_join")
    b = Bounds.parse("deviations=2,sticky=1,runs=150", depth=xs.depth)
    res = explore(xs, b, shrink_outcomes=False)
    assert not res.complete and res.runs == 150
    assert [(o, s) for o, _, s, _ in res.table()] == [
        ("dup:rebalance=1", "d4 L1"),
        ("dup:rebalance=1 overlap=1", "(default)"),
        ("dup:rebalance=2 overlap=1", "L1 d3 L1"),
        ("ok", "L1 d1 L1"),
        ("overlap=1", "d4 L1 l1"),
    ]
    assert [(r.outcome, r.found_at) for r in res.rows] == [
        ("dup:rebalance=1", 11),
        ("dup:rebalance=1 overlap=1", 1),
        ("dup:rebalance=2 overlap=1", 133),
        ("ok", 115),
        ("overlap=1", 143),
    ]
    assert [(g.level, g.runs, g.new) for g in res.growth] == [
        ("0", 1, ("dup:rebalance=1 overlap=1",)),
        ("1", 106, ("dup:rebalance=1",)),
        ("2", 43, ("dup:rebalance=2 overlap=1", "ok", "overlap=1")),
    ]
    for o, _, s, _ in res.table():  # each replays to its class, without the search
        assert replay(xs, s).outcome == o


def test_consumer_join_at_two_slow_connections_the_whole_table():
    # sticky=2: every latency move keeps its connection slow. The whole search: five
    # classes, 1 040 runs (sticky=1: 2 814), each class with its least schedule. Read from
    # lesson 11's record of this very search (``lesson11.deep_search``: the same scenario,
    # bounds and sequential runner): tests/lab/test_lesson11.py's
    # test_the_record_is_what_the_search_gives runs the search again and compares every
    # figure, so the 1 040 runs (about 170 CPU s) are run once in the suite, not twice.
    from mqlab.lab.lessons import lesson11

    xs = get_scenario("consumer_join")
    b = Bounds.parse("deviations=2,sticky=2", depth=xs.depth, faults=xs.fault_budget,
                     window_ms=xs.window_ms)  # fmt: skip
    assert lesson11.deep_bounds() == b and lesson11.scenario() is xs
    res = lesson11.deep_search()
    assert res.table() == [
        ("dup:rebalance=1", 15, "d4 L1", 5),
        ("dup:rebalance=1 overlap=1", 157, "(default)", 0),
        ("dup:rebalance=2 overlap=1", 1, "L1 d3 L1", 5),
        ("ok", 10, "L1 d1 L1", 3),
        ("overlap=1", 3, "L1 d11 L1", 13),
    ]
    assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == (
        1040,
        7320,
        5564,
        712,
        34,
    )
    assert [(g.level, g.runs, g.total_runs, g.classes, g.new) for g in res.growth] == [
        ("0", 1, 1, 1, ("dup:rebalance=1 overlap=1",)),
        ("1", 68, 69, 2, ("dup:rebalance=1",)),
        ("2", 971, 1040, 5, ("dup:rebalance=2 overlap=1", "ok", "overlap=1")),
    ]
    assert [(r.outcome, r.found_at) for r in res.rows] == [
        ("dup:rebalance=1", 6),
        ("dup:rebalance=1 overlap=1", 1),
        ("dup:rebalance=2 overlap=1", 76),
        ("ok", 71),
        ("overlap=1", 151),
    ]


def _reach_bounds(xs) -> Bounds:
    from mqlab.bench.explore import REACH_BOUNDS

    return Bounds.parse(REACH_BOUNDS[xs.name], depth=xs.depth, faults=xs.fault_budget,
                        window_ms=xs.window_ms)  # fmt: skip


def test_orderly_slow_listener_at_its_reach_bounds_finds_ok_on_both_runners():
    # depth 4 finds overlap=1 only; walks of depth 40 found ok. One move anywhere in the
    # walks' 40 points: consumer-2's GET_CONSUMER_LIST_BY_GROUP 5 ms, so consumer-1 gives
    # queue 1 up before consumer-2's view takes it (mqlab.explore.scenarios). The pool
    # reads the same records in the same order: the same table and figures
    xs = get_scenario("orderly_slow_listener")
    b = _reach_bounds(xs)
    assert str(b) == "deviations=1,depth=40,faults=0,window=1,latencies=scenario,por=1"
    seq = explore(xs, b)
    pool = explore(xs, b, runner="pool", workers=2)
    for res in (seq, pool):
        assert res.table() == [("ok", 2, "d26 l1", 27), ("overlap=1", 15, "(default)", 0)]
        assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == (
            47, 586, 471, 18, 0,
        )  # fmt: skip
        assert res.complete
        assert [(g.level, g.runs, g.new) for g in res.growth] == [
            ("0", 1, ("overlap=1",)), ("1", 46, ("ok",)),
        ]  # fmt: skip
        assert [(r.outcome, r.found_at) for r in res.rows] == [("ok", 29), ("overlap=1", 1)]
    assert replay(xs, "d26 l1", b).outcome == "ok"


def test_retry_rebalance_at_its_reach_bounds_finds_the_walks_two_classes():
    # depth 8 finds two classes; walks of depth 40 found two more. Two moves within 24
    # points: the whole search runs 269 runs (level 0: 1, level 1: 29, level 2: 239) and
    # gives these four classes, counts 40, 2, 4 and 14; the first 119 runs reach all four
    # (level 2 runs in sort_key order, so its class's first record is its least schedule)
    xs = get_scenario("retry_rebalance")
    b = replace(_reach_bounds(xs), max_runs=119)
    assert (b.deviations, b.depth) == (2, 24)
    res = explore(xs, b, shrink_outcomes=False)
    assert not res.complete and res.runs == 119
    dup, both = "dup:rebalance=1 dup:sent-back-twice=1", "retry=3 dlq=3"
    assert [(o, s) for o, _, s, _ in res.table()] == [
        (f"{dup} overlap=1 {both}", "(default)"),
        (f"{dup} {both}", "d8 l1 d5 l1"),  # consumer-1 rebalances first, commits late
        ("overlap=1 retry=2 dlq=2", "d16 l1"),  # consumer-2's offset query late
        ("retry=2 dlq=2", "d6 l1"),
    ]
    assert [(r.outcome, r.found_at) for r in res.rows] == [
        (f"{dup} overlap=1 {both}", 1), (f"{dup} {both}", 119),
        ("overlap=1 retry=2 dlq=2", 21), ("retry=2 dlq=2", 8),
    ]  # fmt: skip
    assert [(g.level, g.runs, g.new) for g in res.growth] == [
        ("0", 1, (f"{dup} overlap=1 {both}",)),
        ("1", 29, ("overlap=1 retry=2 dlq=2", "retry=2 dlq=2")),
        ("2", 89, (f"{dup} {both}",)),
    ]
    found = set().union(*({p.split("=")[0] for p in o.split()} for o, *_ in res.table()))
    assert found <= xs.allowed and xs.expected <= found
    for o, _, s, _ in res.table():  # each replays to its class, without the search
        assert replay(xs, s, b).outcome == o


@pytest.mark.parametrize(
    ("name", "table", "stats", "found_at"),
    [
        (
            "async_master_lost",
            [("lost=1", 3, "d3 F:lose(broker-a)", 4), ("ok", 4, "(default)", 0),
             ("pending=1", 28, "d6 F:lose(broker-a)", 7)],
            (210, 1027, 873, 154, 13),
            [("lost=1", 25), ("ok", 1), ("pending=1", 28)],
        ),
        (
            "sync_master_lost",
            [("ok", 10, "(default)", 0), ("pending=1", 28, "d10 F:lose(broker-a)", 11)],
            (232, 1043, 897, 146, 18),
            [("ok", 1), ("pending=1", 30)],
        ),
    ],
)  # fmt: skip
def test_master_lost_at_its_reach_bounds_finds_pcts_pending(name, table, stats, found_at):
    # depth 5 (the scenarios' own) finds lost and ok, or ok; 300 PCT runs (`bench explore
    # --reach`, 2026-12-01) found pending too: the machine lost once the slave has the
    # message, 6 or 10 points in, and nothing tells the name server or consumer-1 before the
    # run ends (test_explore_ha.py says what the run does). The loss anywhere in the walks'
    # 40 points finds it at level 0+1F; one move beside it adds nothing. Each class's
    # shortest schedule replays to it
    xs = get_scenario(name)
    b = _reach_bounds(xs)
    assert str(b) == "deviations=1,depth=40,faults=1,window=0,latencies=scenario,por=1"
    res = explore(xs, b)
    assert res.table() == table
    assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == stats
    assert res.complete
    assert [(r.outcome, r.found_at) for r in res.rows] == found_at
    new = ("lost=1", "pending=1") if name == "async_master_lost" else ("pending=1",)
    assert [(g.level, g.new) for g in res.growth] == [
        ("0", ("ok",)), ("1", ()), ("0+1F", new), ("1+1F", ()),
    ]  # fmt: skip
    found = {p.split("=")[0] for o, *_ in res.table() if o != "ok" for p in o.split()}
    assert found <= xs.allowed and xs.expected <= found
    for o, _, s, _ in res.table():
        assert replay(xs, s, b).outcome == o


def test_cli_pct(capsys):
    from mqlab.explore.cli import main

    assert main(["consumer_crash", "--pct", "3", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PCT, depth 3, bounds depth=6,faults=1,")
    # each run's change points kill consumer-1 (half the time) before its persist or after
    assert "dup:crash=4      2      1  F:kill(consumer-1)" in out
    assert "dup:crash=1      1      3  d2 F:kill(consumer-1)" in out
    assert "the last walk (3) added a class" in out
    assert main(["consumer_crash", "--pct", "3", "--pct-depth", "0"]) == 2
    assert "--pct-depth >= 1" in capsys.readouterr().err


def test_bench_reach_prints_search_walks_and_pct_side_by_side(capsys):
    from mqlab.bench.explore import main

    args = ["--reach", "--scenarios", "consumer_crash", "--walks", "2", "--pct", "2"]
    assert main(args) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| consumer_crash")]
    assert [r.split(" | ")[1:3] for r in rows] == [
        ["search `depth=6,faults=1,window=0,latencies=scenario,por=1`", "35"],
        ["2 walks", "2"],
        ["2 PCT d=3", "2"],
    ]
    classes = [[c.split("`")[1] for c in r.split(" | ")[6].split(", ")] for r in rows]
    assert classes == [["dup:crash=1", "dup:crash=2", "dup:crash=4"], ["dup:crash=2"],
                       ["dup:crash=2"]]  # fmt: skip
    assert all(r.endswith(" | - |") for r in rows)  # nothing the search missed
    assert main(["--reach", "--scenarios", "nope"]) == 2


def test_the_outcome_explorer_steps_through_a_slow_connection():
    from mqlab.lab.outcome_explorer import replay_prefix

    xs = get_scenario("consumer_join")
    rep = replay_prefix(xs, "L1 d3 L1")
    assert rep.record.outcome == "dup:rebalance=2 overlap=1"
    assert str(rep.schedule) == "L1 d3 L1"
    assert str(replay_prefix(xs, "L1 d3 L1", 1).schedule) == "L1"


def test_walks_keep_a_connection_slow_where_the_bounds_offer_it():
    # sticky=1: a walk's latency points offer L<i> too, as the search's do; without it a
    # walk never keeps a connection slow (12 seeds: no L anywhere)
    from mqlab.explore.search import random_walks

    xs = get_scenario("consumer_join")
    plain = random_walks(xs, Bounds(depth=40), range(12), shrink_outcomes=False)
    assert not any("L" in str(r.schedule) for r in plain.rows)
    res = random_walks(xs, Bounds(depth=40, sticky=1), range(12), shrink_outcomes=False)
    assert [(r.outcome, r.runs, str(r.schedule)) for r in res.rows] == [
        ("dup:rebalance=1 overlap=1", 8, "d1 L1 d1 L1 L1 o1 o2 o1 d1 o1"),
        ("dup:rebalance=2 overlap=1", 4, "L1 o1 l1 d1 L1 o1 l1 d3 o2 d3 L1 d1 o1"),
    ]
    for r in res.rows:  # each least schedule replays to its class
        assert replay(xs, str(r.schedule)).outcome == r.outcome


def _walk_rows(res) -> list[tuple]:
    return [(r.outcome, r.count, r.runs, str(r.schedule), r.found_at) for r in res.rows]


def test_walks_and_pct_on_a_pool_give_the_tables_run_here_gives():
    # each walk an item of one level: the pool's workers claim them, the driver reads the
    # records in seed order (consumer_join, the walks' depth 40, seeds 0-15)
    from mqlab.explore.runners import walks
    from mqlab.explore.search import random_walks

    xs = get_scenario("consumer_join")
    b = Bounds(depth=40)
    here = random_walks(xs, b, range(16), shrink_outcomes=False)
    assert [(o, n) for o, _, n, _, _ in _walk_rows(here)] == [
        ("dup:rebalance=1 overlap=1", 14), ("ok", 1), ("overlap=1", 1),
    ]  # fmt: skip
    pool = walks(xs, b, range(16), runner="pool", workers=2, shrink_outcomes=False)
    assert _walk_rows(pool) == _walk_rows(here)
    assert (pool.runs, pool.states, pool.distinct) == (here.runs, here.states, here.distinct)
    pct_here = pct_runs(xs, b, range(6), depth=3, shrink_outcomes=False)
    pct_pool = walks(xs, b, range(6), runner="pool", workers=2, pct_depth=3,
                     shrink_outcomes=False)  # fmt: skip
    assert _walk_rows(pct_pool) == _walk_rows(pct_here) and pct_pool.runs == 6


def test_cli_walks_on_a_pool(capsys):
    from mqlab.explore.cli import main

    # a scenario whose walks all end "ok" (nothing to shrink): the CLI's plumbing
    argv = ["sync_flush_power_cut", "--bounds", "depth=40", "--walks", "6", "--no-progress"]
    assert main(argv) == 0
    here = capsys.readouterr().out
    assert main([*argv, "--runner", "pool", "--workers", "2"]) == 0
    pool = capsys.readouterr().out
    rows = [ln for ln in here.splitlines() if ln.startswith("ok ")]
    assert len(rows) == 1 and rows == [ln for ln in pool.splitlines() if ln.startswith("ok ")]
    assert rows[0].split() == ["ok", "4", "0", "(default)"]  # 4 distinct final states
    assert main([*argv, "--pct", "3"]) == 2
    assert "--walks or --pct, not both" in capsys.readouterr().err


def test_bench_phases_time_the_search_own_run_for_every_kind_of_scenario(capsys):
    # the phases go through the engine's steps, so a DLedger group (which builds itself)
    # is timed too, and the run timed is the one a search replays
    from mqlab.bench.explore import PHASES, _one_run, main

    for name in ("dledger_split_vote", "consumer_join"):
        xs = get_scenario(name)
        tot = dict.fromkeys(PHASES, 0.0)
        rec, want = _one_run(xs, tot, 1), replay(xs, "")
        assert (rec.outcome, rec.counts, rec.events) == (want.outcome, want.counts, want.events)
        assert tot["build_to_arm"] > 0 and min(tot.values()) >= 0
    assert main(["--phases", "--scenarios", "dledger_split_vote,consumer_join", "--runs", "1"]) == 0
    rows = [r.split() for r in capsys.readouterr().out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["dledger_split_vote", "consumer_join"]
    assert all(len(r) == 8 and r[6].endswith("%") and r[7].startswith("x") for r in rows)
