"""mqlab.explore: the deviation bound (moves anywhere in the run, fewest first) and the
growth of the table (classes against runs and against the bound, saturation)."""

from __future__ import annotations

import pytest

from mqlab.explore.engine import ANY_DEPTH, Bounds, run_schedule
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario
from mqlab.explore.schedule import Schedule
from mqlab.explore.search import random_walks, replay, shrink

pytestmark = pytest.mark.slow


def test_bounds_parse_a_deviation_bound():
    b = Bounds.parse("deviations=2", depth=8)
    assert (b.depth, b.deviations) == (ANY_DEPTH, 2)
    assert str(b) == "deviations=2,depth=any,faults=0,window=0,latencies=scenario,por=1"
    # both bounds: moves only within the first 12 choice points
    b = Bounds.parse("deviations=2,depth=12", depth=8)
    assert (b.depth, b.deviations) == (12, 2)
    assert Bounds.parse("depth=any").depth == ANY_DEPTH
    assert Bounds.parse("", depth=8).deviations is None
    assert str(Bounds.parse("", depth=8)) == "depth=8,faults=0,window=0,latencies=scenario,por=1"
    with pytest.raises(ValueError, match="bounds must be >= 0"):
        Bounds.parse("deviations=-1")
    with pytest.raises(ValueError, match=r"bounds: deviations='two' is not a whole number"):
        Bounds.parse("deviations=two")


def _one_move_outcomes(xs, bounds) -> dict[str, str]:
    """Every schedule with exactly one move off the default run, run without a search:
    outcome -> its least schedule (the search's answer, found by brute force)."""
    root = run_schedule(xs, "", bounds, record=True)
    best: dict[str, Schedule] = {root.outcome: Schedule()}
    for p in root.points:
        for k, opt in enumerate(p.options):
            if k == p.chosen or opt.kind == "F":
                continue
            s = Schedule(tuple(root.choices[: p.index]) + (opt,)).trimmed()
            o = run_schedule(xs, s, bounds).outcome
            if o not in best or s.sort_key() < best[o].sort_key():
                best[o] = s
    return {o: str(s) for o, s in best.items()}


def test_one_deviation_anywhere_is_what_brute_force_finds():
    # consumer_join's default run meets 63 choice points; one move at any of them. The
    # search prunes states seen before (1 008 visited, 842 distinct), and must still find
    # every class that the 68 one-move schedules give, each with the same least schedule.
    # "d5 l1" reaches a state twice in a row (two ConsumeRequest.run of one ms): a run is
    # not pruned by its own earlier point, or the class would be lost
    xs = get_scenario("consumer_join")
    b = Bounds.parse("deviations=1", depth=xs.depth)
    res = explore(xs, b, shrink_outcomes=False)
    assert res.table() == [
        ("dup:rebalance=1", 2, "d5 l1", 6),
        ("dup:rebalance=1 overlap=1", 12, "(default)", 0),
    ]
    assert (res.runs, res.states, res.distinct, res.pruned, res.redundant) == (69, 1008, 842, 50, 2)
    assert {o: s for o, _, s, _ in res.table()} == _one_move_outcomes(xs, b)
    assert [(g.level, g.runs, g.total_runs, g.classes, g.new) for g in res.growth] == [
        ("0", 1, 1, 1, ("dup:rebalance=1 overlap=1",)),
        ("1", 68, 69, 2, ("dup:rebalance=1",)),
    ]
    assert res.saturation() == "the last level added a class: a higher bound may add more"
    # classes against runs: the 7th run (default, l1, d1 l1 … d5 l1) found the second
    assert [(r.outcome, r.found_at) for r in res.rows] == [
        ("dup:rebalance=1", 7),
        ("dup:rebalance=1 overlap=1", 1),
    ]
    assert "      1    68     69        2" in res.format_growth()
    assert "dup:rebalance=1 (run 7)" in res.format_growth()
    # the pool reads the same records in the same order: the same table and figures
    pool = explore(xs, b, runner="pool", workers=2, shrink_outcomes=False)
    assert pool.table() == res.table()
    assert (pool.runs, pool.states, pool.distinct, pool.pruned) == (69, 1008, 842, 50)


def test_no_moves_places_a_fault_anywhere():
    # deviations=0 with a fault budget: the default order, a power cut at any of the run's
    # choice points (the depth bound of 6 would stop at the 6th)
    xs = get_scenario("async_flush_power_cut")
    res = explore(xs, Bounds.parse("deviations=0", depth=xs.depth, faults=xs.fault_budget))
    # (21 and 22 final states, 12 pruned, while the peers learned of the cut at once, from
    # a FIN no machine without power sends: ``SimDriver._machine_down``)
    assert res.table() == [
        ("lost=1", 23, "d3 F:power_cut(broker-a)", 4),
        ("ok", 26, "(default)", 0),
    ]
    assert (res.runs, res.pruned) == (62, 13)
    assert [(g.level, g.runs, g.new) for g in res.growth] == [
        ("0", 1, ("ok",)),
        ("0+1F", 61, ("lost=1",)),
    ]
    assert replay(xs, "d3 F:power_cut(broker-a)").outcome == "lost=1"


def test_the_depth_search_grows_and_saturates():
    # today's depth bound, unchanged: the table of test_explore, level by level
    xs = get_scenario("consumer_join")
    res = explore(xs, Bounds(depth=xs.depth), shrink_outcomes=False)
    assert res.runs == 76
    assert [(g.level, g.runs, g.total_runs, g.classes, g.new) for g in res.growth] == [
        ("0", 1, 1, 1, ("dup:rebalance=1 overlap=1",)),
        ("1", 8, 9, 2, ("dup:rebalance=1",)),
        ("2", 14, 23, 2, ()),
        ("3", 22, 45, 2, ()),
        ("4", 19, 64, 3, ("ok",)),
        ("5", 9, 73, 3, ()),
        ("6", 2, 75, 3, ()),
        ("7", 1, 76, 3, ()),
    ]
    assert res.quiet == 3
    assert res.saturation() == (
        "saturated: the last 3 levels in a row added no class (complete only within these bounds)"
    )
    assert res.format(growth=True).splitlines()[-1] == res.saturation()
    # stopped part-way: the last level is marked, and is not counted as quiet
    part = explore(xs, Bounds(depth=xs.depth, max_runs=30), shrink_outcomes=False)
    assert [(g.level, g.runs, g.complete) for g in part.growth][-2:] == [
        ("2", 14, True),
        ("3", 7, False),
    ]
    assert part.quiet == 1
    assert part.saturation() == "the last 1 level(s) added no class (search stopped part-way)"


def test_walks_report_the_walk_that_found_each_class():
    xs = get_scenario("async_flush_power_cut")
    b = Bounds(depth=xs.depth, faults=xs.fault_budget)
    res = random_walks(xs, b, range(20), shrink_outcomes=False)
    assert [(g.total_runs, g.classes, g.new) for g in res.growth] == [
        (1, 1, ("ok",)),
        (20, 2, ("lost=1",)),
    ]
    assert res.saturation() == "the last walk (20) added a class: more walks may add more"
    assert res.format(growth=True).splitlines()[-3].split()[:2] == ["1", "1"]


def test_a_late_move_slides_to_the_earliest_point_that_keeps_its_class():
    # a walk of depth 40 reached dup:rebalance=1 with "d9 l1" (its one-minimal shrink);
    # the least schedule of the class is "d5 l1" (the deviation search's, above)
    xs = get_scenario("consumer_join")
    b = Bounds(depth=40)
    s = Schedule.parse("d9 l1")
    assert replay(xs, s, b).outcome == "dup:rebalance=1"
    assert str(shrink(xs, s, "dup:rebalance=1", b)) == "d9 l1"
    slid = shrink(xs, s, "dup:rebalance=1", b, slide=True)
    assert str(slid) == "d5 l1"
    assert replay(xs, slid, b).outcome == "dup:rebalance=1"
    # out of replays: the schedule so far, which replays
    assert str(shrink(xs, s, "dup:rebalance=1", b, slide=True, max_replays=0)) == "d9 l1"


def test_shrink_turns_a_connection_kept_slow_into_one_slow_frame():
    # a walk with slow connections (sticky=1) may keep consumer-2's link slow where one
    # slow frame gives the class: "d5 L1" shrinks to "d5 l1" (fewer links kept slow), the
    # least schedule of dup:rebalance=1 at depth 8 (tests/explore/test_explore.py). Where
    # the whole exchange must be slow, L stays: "L1 d3 L1" (two messages twice)
    xs = get_scenario("consumer_join")
    b = Bounds(depth=8, latencies=(1, 5), sticky=1)
    s = Schedule.parse("d5 L1")
    assert replay(xs, s, b).outcome == "dup:rebalance=1"
    assert str(shrink(xs, s, "dup:rebalance=1", b)) == "d5 l1"
    assert replay(xs, "d5 l1", b).outcome == "dup:rebalance=1"
    both = Schedule.parse("L1 d3 L1")
    assert replay(xs, both, b).outcome == "dup:rebalance=2 overlap=1"
    assert str(shrink(xs, both, "dup:rebalance=2 overlap=1", b)) == "L1 d3 L1"


def test_a_schedule_that_misfits_a_scripted_fault_is_a_schedule_error():
    # orderly_join's consumer-2 joins by a scripted fault at 10 ms, whose first choice point
    # is a latency point: "o2" does not fit it. The fault's wrapper kept the message but
    # made it a plain ValueError, so a PCT shrink that tried such a candidate crashed
    # (`bench explore --reach`, 2026-11-29) instead of passing it over
    from mqlab.explore.schedule import ScheduleError
    from mqlab.explore.search import _outcome_of

    xs = get_scenario("orderly_join")
    b = Bounds(depth=8)
    with pytest.raises(ScheduleError) as err:
        replay(xs, Schedule.parse("o2"), b)
    assert str(err.value) == (
        "fault 'join' at 10 ms: choice 0 is a latency point, the schedule says o2"
    )
    assert _outcome_of(xs, Schedule.parse("o2"), b) is None
