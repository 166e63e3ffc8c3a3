"""Issue 29, item 3: a walk's class is shrunk to a shortest schedule. Delta debugging stops
where no single move can go; a deviation search with fewer moves then finds the fewest
(``mqlab.explore.search.shortest``), within a budget of runs."""

from __future__ import annotations

from mqlab.explore.engine import Bounds
from mqlab.explore.scenarios import get_scenario
from mqlab.explore.schedule import Schedule
from mqlab.explore.search import random_walks, replay, shortest, shrink

#: where delta debugging (sliding moves too) stopped for the walks' ``ok`` (session 13)
FOUR_MOVES = "l1 d1 l1 d1 l1 d8 l1"


def _walk_bounds(xs) -> Bounds:
    # as `python -m mqlab explore orderly_slow_listener --walks N --bounds depth=40`
    return Bounds.parse("depth=40", depth=xs.depth, faults=xs.fault_budget,
                        window_ms=xs.window_ms)  # fmt: skip


def test_orderly_slow_listener_walks_give_ok_its_one_move_schedule():
    # walk 3 reaches ok with 17 moves. The search for fewer moves stops after level 1
    # (47 runs): one move, consumer-2's GET_CONSUMER_LIST_BY_GROUP 5 ms, the least
    # schedule the reach search pins (tests/explore/test_reach.py). Without it, delta
    # debugging stopped at four moves, none of which can go alone.
    # (shrink_replays=0 leaves delta debugging out here: it costs 8 CPU s)
    xs = get_scenario("orderly_slow_listener")
    b = _walk_bounds(xs)
    res = random_walks(xs, b, range(3), shrink_replays=0)
    assert [(r.outcome, str(r.schedule), r.shortest, r.found_at) for r in res.rows] == [
        ("ok", "d26 l1", "fewer", 3),
        ("overlap=1", "(default)", "fewer", 1),
    ]
    for r in res.rows:
        assert replay(xs, r.schedule, b).outcome == r.outcome
    assert replay(xs, FOUR_MOVES, b).outcome == "ok"
    assert str(shrink(xs, Schedule.parse(FOUR_MOVES), "ok", b)) == FOUR_MOVES
    assert "*" not in res.format()


def test_a_class_whose_schedule_has_the_fewest_moves_keeps_it():
    # consumer_join's two messages twice need the whole exchange slow both times: "L1 d3
    # L1" (test_deviations.py). No level-1 schedule within depth 8 gives the class: kept
    xs = get_scenario("consumer_join")
    b = Bounds(depth=8, latencies=(1, 5), sticky=1)
    s, note = shortest(xs, Schedule.parse("L1 d3 L1"), "dup:rebalance=2 overlap=1", b)
    assert (str(s), note) == ("L1 d3 L1", "fewest")
    assert replay(xs, s, b).outcome == "dup:rebalance=2 overlap=1"
    # one move or none: nothing to search
    assert shortest(xs, Schedule.parse("d5 l1"), "dup:rebalance=1", b) == (
        Schedule.parse("d5 l1"), "",
    )  # fmt: skip


def test_out_of_runs_the_schedule_is_kept_and_the_table_marks_it(monkeypatch):
    import mqlab.explore.search as search

    runs = []  # the search's runs (the walks and replays do not go through run_item)
    run_item = search.run_item

    def counted(*a, **k):
        runs.append(1)
        return run_item(*a, **k)

    monkeypatch.setattr(search, "run_item", counted)
    xs = get_scenario("orderly_slow_listener")
    b = _walk_bounds(xs)
    # one run: level 0 gives overlap=1, not ok; delta debugging's schedule is kept
    assert shortest(xs, Schedule.parse(FOUR_MOVES), "ok", b, max_runs=1) == (
        Schedule.parse(FOUR_MOVES), "budget",
    )  # fmt: skip
    assert len(runs) == 1
    # ok comes at level 1's 28th run (run 29), in a level that 40 runs a class cannot
    # finish (46 runs): the search stops there, no lesser level giving ok: one move, the
    # fewest, not shown to be the least of them. The table marks it. overlap=1: 1 run
    res = random_walks(xs, b, range(3), shrink_replays=0, shortest_runs=40)
    assert len(runs) == 1 + 3 + 29 + 1  # the walks are items too (``Item.sample``)
    assert [(r.outcome, str(r.schedule), r.shortest) for r in res.rows] == [
        ("ok", "d26 l1", "part"),
        ("overlap=1", "(default)", "fewer"),
    ]
    lines = res.format().splitlines()
    assert lines[1:4] == [
        "ok             1     27  d26 l1  *",
        "overlap=1      2      0  (default)",
        "* the search for fewer moves ran out of runs: not shown to be the shortest",
    ]
    assert replay(xs, res.rows[0].schedule, b).outcome == "ok"
