"""Lesson 11 (what can happen?): the exercises' answers and the walk as the notebook writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqlab.lab.check import check, expected, learner_seed
from mqlab.lab.lessons import lesson11 as L

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", [0, 12345])
def test_exercise_answers(seed):
    """11.1-11.5 the same for every learner (the search covers every schedule); 11.6 and 11.7
    ask about the class of the deviation search the seed picks."""
    assert expected("11.1", seed) == 3
    assert expected("11.2", seed) == 1
    assert expected("11.3", seed) == [5, 5]
    assert expected("11.4", seed) == [2, 0]
    assert expected("11.5", seed) == 1


#: seed % 4 -> the class 11.6 and 11.7 ask about, [moves, depth] of its shortest schedule
#: in the search bounded by moves, and the run that first reached it
YOUR_CLASS = {
    0: ("dup:rebalance=1", [1, 5], 6),
    1: ("dup:rebalance=2 overlap=1", [2, 5], 76),
    2: ("ok", [2, 3], 71),
    3: ("overlap=1", [2, 13], 151),
}


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 12345, learner_seed("your-name")])
def test_your_class_exercises_differ_by_seed(seed):
    outcome, moves_depth, run = YOUR_CLASS[seed % 4]
    assert L.your_class(seed) == outcome
    assert expected("11.6", seed) == moves_depth
    assert expected("11.7", seed) == run


def test_wrong_answers_past_the_bounds_get_the_misconception_hints():
    r = check("11.5", 0)
    assert not r and "0 takes 'saturated' for 'complete'" in r.message
    r = check("11.5", 3)
    assert not r and "that counts every class the walks find" in r.message
    seed = 1  # dup:rebalance=2 overlap=1: L1 d3 L1
    r = check("11.6", [5, 5], seed=seed)
    assert not r and "d<n> is n default choices, no move" in r.message
    r = check("11.6", [3, 5], seed=seed)
    assert not r and "a d<n> token is no move" in r.message
    r = check("11.6", [2, 4], seed=seed)
    assert not r and "choice points count from 0" in r.message
    r = check("11.6", [1, 6], seed=0)  # dup:rebalance=1: d5 l1 at depth 8, d4 L1 by moves
    assert not r and "the shortest schedule the depth-8 search found" in r.message
    r = check("11.7", 1040, seed=seed)
    assert not r and "that is the search's last run" in r.message
    r = check("11.7", 1040, seed=3)  # overlap=1, found in level 2, which ends at run 1 040
    assert not r and "that is the search's last run" in r.message
    r = check("11.7", 69, seed=0)  # dup:rebalance=1: run 6, its level 1 ends at run 69
    assert not r and "closed the class's level" in r.message
    r = check("11.7", 6, seed=3)  # overlap=1: the walk that found it
    assert not r and "the random walk that first found the class" in r.message
    assert check("11.5", 1) and check("11.6", [2, 5], seed=1) and check("11.7", 76, seed=1)


def test_wrong_answers_get_the_misconception_hints():
    r = check("11.1", 17)
    assert not r and "17 is the distinct final states" in r.message
    r = check("11.1", 76)
    assert not r and "if you answered 76 you counted runs" in r.message
    r = check("11.2", 0)
    assert not r and "0 forgets 'ok'" in r.message
    r = check("11.3", [6, 5])
    assert not r and "'d5 l1' changes point 5, not 6" in r.message
    r = check("11.4", [2, 2])
    assert not r and "the new-group rule of lesson 08, not 2" in r.message
    assert check("11.2", 1) and check("11.3", [5, 5]) and check("11.1", 3) and check("11.4", [2, 0])


def test_the_walk_as_written():
    xs = L.scenario()
    assert (xs.name, str(L.bounds()), xs.latencies) == (
        "consumer_join",
        "depth=8,faults=0,window=0,latencies=scenario,por=1",
        (1, 5),
    )
    res = L.search()
    assert res.format().splitlines() == [
        "outcome                    count  depth  shortest schedule",
        "dup:rebalance=1                4      6  d5 l1",
        "dup:rebalance=1 overlap=1     11      0  (default)",
        "ok                             2      7  l1 d1 l1 l1 d2 l1",
        "runs 76, states visited 97, distinct 72, pruned 22, asleep 0",
    ]
    assert res.frame()["shortest_schedule"].tolist() == ["d5 l1", "(default)", "l1 d1 l1 l1 d2 l1"]
    ex = L.explorer(plot_mode="static")
    ex.select("dup:rebalance=1")
    assert ex.messages[-1] == (
        "dup:rebalance=1: its shortest schedule d5 l1 replayed (6 choice point(s)) → dup:rebalance=1"
    )
    ex.previous_choice()
    assert (
        ex.messages[-1] == "step 5 of 6: the first 5 choice(s) of d5 l1 → dup:rebalance=1 overlap=1"
    )
    ex.next_choice()
    assert ex.messages[-1] == "step 6 of 6: the first 6 choice(s) of d5 l1 → dup:rebalance=1"
    assert L.one_choice("d5 l1") == [[5, "consumer-2->broker-a 5 ms"]]
    ex.diff()
    assert ex.messages[-1] == "d5 l1: the trace parts from the plain run at seq 275"
    d = ex.diff_frame.set_index("seq")
    # the plain run: consumer-2's GET_CONSUMER_LIST_BY_GROUP is answered at 2021; the replay: 2025
    assert d.loc[274, "same"] and not d.loc[275, "same"]
    assert d.loc[275, "a_event"].startswith("ConsumerManageProcessor.getConsumerListByGroup ok")
    assert (d.loc[275, "a_t_ms"], d.loc[278, "b_t_ms"]) == (2021, 2022)
    # section 3's two handover tables: a reads the new-group 0 before consumer-1 persists,
    # b reads the 0 consumer-1 persisted
    texts = [
        L.queue1_handover(lab)[["t_ms", "text"]].values.tolist()
        for lab in (ex.plain.lab, ex.current.lab)
    ]
    assert [t for t, _ in texts[0]] == [2010, 2022, 2023, 2024, 2024, 2025, 2026]
    assert texts[0][2][1] == "offset of TopicTest@CG queue 1 = 0 (new group, min offset 0 → 0)"
    assert [t for t, _ in texts[1]] == [2010, 2024, 2025, 2026, 2027, 2028, 2030]
    assert texts[1][4][1] == "offset of TopicTest@CG queue 1 = 0 (stored)"
    for lab, again in ((ex.plain.lab, 2026), (ex.current.lab, 2030)):
        dups = L.duplicates(lab)
        assert dups.values.tolist() == [
            [1, 0, 2010, "consumer-1", again, "consumer-2", "rebalance overlap"]
        ]

    # consumer-2 takes queue 1 at 2022 in the plain run (and reads the new-group offset 0 at
    # 2023); in the replay at 2026, after consumer-1 dropped it and persisted offset 0 at 2024
    def at(lab, node, text):
        return [e.t_ms for e in lab.trace.events if e.node == node and text in e.describe()]

    assert at(ex.plain.lab, "consumer-2", "takes 1 of 2 queue(s)")[0] == 2022
    assert at(ex.plain.lab, "broker-a", "queue 1 = 0 (new group")[-1] == 2023
    assert at(ex.current.lab, "broker-a", "queue 1 = 0 (stored)") == [2027]
    assert at(ex.current.lab, "consumer-2", "takes 1 of 2 queue(s)")[0] == 2026
    assert (
        at(
            ex.current.lab,
            "consumer-1",
            "commit offset 0 of MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=1]",
        )[0]
        == 2024
    )


def test_the_class_without_a_duplicate_as_written():
    """Section 3: four frames of consumer-2 5 ms slower; it reads offset 1, nobody gets a message twice."""
    assert L.one_choice("l1 d1 l1 l1 d2 l1") == [
        [0, "consumer-2->namesrv 5 ms"],
        [2, "consumer-2->namesrv 5 ms"],
        [3, "consumer-2->namesrv 5 ms"],
        [6, "consumer-2->broker-a 5 ms"],
    ]
    ex = L.explorer(select="ok", plot_mode="static")
    assert ex.messages == [
        "ok: its shortest schedule l1 d1 l1 l1 d2 l1 replayed (7 choice point(s)) → ok"
    ]
    lab = ex.current.lab
    assert L.duplicates(lab).empty
    hand = L.queue1_handover(lab)
    assert hand[["t_ms", "node", "step"]].values.tolist() == [
        [2010, "consumer-1", "ConsumeMessageConcurrentlyService.ConsumeRequest.run"],
        [2032, "consumer-1", "RemoteBrokerOffsetStore.persist"],
        [2033, "broker-a", "ConsumerManageProcessor.updateConsumerOffset"],
        [2034, "consumer-2", "RebalancePushImpl.rebalanceByTopic"],
        [2035, "broker-a", "ConsumerManageProcessor.queryConsumerOffset"],
        [2036, "consumer-2", "RemoteBrokerOffsetStore.readOffset"],
        [2038, "consumer-2", "ConsumeMessageConcurrentlyService.ConsumeRequest.run"],
    ]
    assert hand["text"][4] == "offset of TopicTest@CG queue 1 = 1 (stored)"

    def at(node, text):
        return [e.t_ms for e in lab.trace.events if e.node == node and text in e.describe()]

    assert at("consumer-1", "consumes TopicTest/broker-a/1 offsets [0]") == [2010]
    assert (
        at(
            "consumer-1",
            "commit offset 1 of MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=1]",
        )[0]
        == 2032
    )
    assert at("broker-a", "offset of TopicTest@CG queue 1 = 1 (stored)") == [2035]
    assert at("consumer-2", "takes 1 of 2 queue(s)")[0] == 2034
    assert at("consumer-2", "consumes TopicTest/broker-a/1 offsets [1]") == [2038]


def test_the_walk_at_persist_as_written():
    """Section 4: the plain run has no duplicate; o1 (the query before the update) has two."""
    from mqlab.lab.figures import allocation_heatmap_frame

    xs = L.scenario(L.AT_PERSIST)
    assert (xs.name, xs.arm_ms, str(L.bounds(L.AT_PERSIST)), xs.latencies) == (
        "consumer_join_at_persist",
        8000,
        "depth=8,faults=0,window=0,latencies=scenario,por=1",
        (1, 5),
    )
    assert L.search(L.AT_PERSIST).format().splitlines() == [
        "outcome                    count  depth  shortest schedule",
        "dup:rebalance=2 overlap=1     20      1  o1",
        "overlap=1                      9      0  (default)",
        "runs 118, states visited 138, distinct 118, pruned 20, asleep 0",
    ]
    ex = L.explorer(L.AT_PERSIST, select="dup:rebalance=2 overlap=1", plot_mode="static")
    assert ex.messages == [
        "dup:rebalance=2 overlap=1: its shortest schedule o1 replayed (1 choice point(s)) "
        "→ dup:rebalance=2 overlap=1"
    ]
    assert ex.timeline.widget.outputs[0]["data"]["text/plain"] == ("Node by node, t=9998…10058")
    p = ex.current.points[0]
    assert p.labels == [
        "frame broker-a UPDATE_CONSUMER_OFFSET consumer-1->broker-a @10007",
        "frame broker-a QUERY_CONSUMER_OFFSET consumer-2->broker-a @10007",
    ]
    assert L.one_choice("o1", L.AT_PERSIST) == [
        [0, "frame broker-a QUERY_CONSUMER_OFFSET consumer-2->broker-a @10007"]
    ]
    ex.diff()
    assert ex.messages[-1] == "o1: the trace parts from the plain run at seq 301"
    d = ex.diff_frame.set_index("seq")
    assert d.loc[304, "a_event"] == (
        "ConsumerManageProcessor.queryConsumerOffset found: "
        "offset of TopicTest@CG queue 1 = 2 (stored)"
    )
    assert d.loc[301, "b_event"] == (
        "ConsumerManageProcessor.queryConsumerOffset found: "
        "offset of TopicTest@CG queue 1 = 0 (new group, min offset 0 → 0)"
    )
    assert L.duplicates(ex.plain.lab).empty
    assert L.duplicates(ex.current.lab).values.tolist() == [
        [1, 0, 2010, "consumer-1", 10010, "consumer-2", "rebalance overlap"],
        [1, 1, 2050, "consumer-1", 10030, "consumer-2", "rebalance overlap"],
    ]
    # the plain run's overlap is queue 1, held by both consumers for a moment
    heat = allocation_heatmap_frame(ex.plain.lab.trace.events)
    both = heat[heat["owners"] > 1][["topic", "queue"]].drop_duplicates().values.tolist()
    assert both == [["TopicTest", "TopicTest/broker-a/1"]]


def test_the_prose_says_what_the_timeline_draws():
    """Issue 28: the prose said "the first 60 ms … (zoom out in it for more)" while the title
    said "the last 60 ms are drawn"; both now name the 60 ms drawn, and nothing more is."""
    ex = L.explorer(select="dup:rebalance=1", plot_mode="static")
    title = ex.timeline.widget.outputs[0]["data"]["text/plain"]
    assert title == "Node by node, t=2008…2068"
    prose = " ".join((ROOT / "lessons" / "11_what_can_happen.md").read_text().split())
    assert (
        f"The timeline draws {ex.span_ms} ms of the replay, from the point where the search "
        f"starts deciding (its title says which: {title.removeprefix('Node by node, ')})"
    ) in prose
    assert "zoom out" not in prose


def _prose() -> str:
    return " ".join((ROOT / "lessons" / "11_what_can_happen.md").read_text().split())


def test_past_the_bounds_as_written():
    """Sections 5 and 6 (issue 29): the depth-8 table saturated; 20 walks of depth 40 find a
    class it lacks; the search bounded by moves confirms it with two moves, at choice point 12."""
    prose = _prose()
    res = L.search()
    assert res.saturation() == (
        "saturated: the last 3 levels in a row added no class (complete only within these bounds)"
    )
    g = L.growth(res)
    assert g[["moves", "runs", "so_far", "classes"]].values.tolist() == [
        [0, 1, 1, 1], [1, 8, 9, 2], [2, 14, 23, 2], [3, 22, 45, 2], [4, 19, 64, 3],
        [5, 9, 73, 3], [6, 2, 75, 3], [7, 1, 76, 3],
    ]  # fmt: skip
    assert g["new"].tolist()[4] == "ok (run 55)"
    assert "Level 4 added `ok` at run 55, and levels 5, 6 and 7 added nothing" in prose
    w = L.walks()
    assert (w.runs, L.WALK_DEPTH) == (20, 40)
    assert "use the seeds 0 to 19, as `python -m mqlab explore consumer_join --walks 20 " \
           "--bounds depth=40` does" in prose  # fmt: skip
    assert [(x.total_runs, x.classes, x.new) for x in w.growth] == [
        (1, 1, ("dup:rebalance=1 overlap=1",)), (6, 2, ("overlap=1",)), (10, 3, ("ok",)),
    ]  # fmt: skip
    assert w.saturation() == "last new class at walk 10 of 20: 10 walks in a row added nothing"
    assert L.growth(w).values.tolist() == [
        [1, 1, "dup:rebalance=1 overlap=1"], [6, 2, "overlap=1"], [10, 3, "ok"],
    ]  # fmt: skip
    assert "The walks find three classes, and one of them is not in the depth-8 table" in prose
    assert L.missed() == ["overlap=1"]
    assert "dup:rebalance=1" in res.outcomes() and "dup:rebalance=1" not in w.outcomes()
    assert (
        "none of them reached `dup:rebalance=1`, which the depth-8 search found with one move"
        in prose
    )
    assert next(r for r in res.rows if r.outcome == "dup:rebalance=1").schedule.moves == 1
    ov = next(r.schedule for r in w.rows if r.outcome == "overlap=1")
    assert f"decides {ov.depth} choice points and makes {ov.moves} moves" in prose
    assert (ov.depth, ov.moves) == (39, 17)

    deep = L.deep_search()
    assert str(deep.bounds) == (
        "deviations=2,depth=any,faults=0,window=0,latencies=scenario,sticky=2,por=1"
    )
    assert deep.table() == [
        ("dup:rebalance=1", 15, "d4 L1", 5),
        ("dup:rebalance=1 overlap=1", 157, "(default)", 0),
        ("dup:rebalance=2 overlap=1", 1, "L1 d3 L1", 5),
        ("ok", 10, "L1 d1 L1", 3),
        ("overlap=1", 3, "L1 d11 L1", 13),
    ]
    assert deep.format().splitlines()[-1] == (
        "runs 1040, states visited 7320, distinct 5564, pruned 712, asleep 34"
    )
    assert deep.saturation() == "the last level added a class: a higher bound may add more"
    assert L.growth(deep).values.tolist() == [
        [0, 1, 1, 1, "dup:rebalance=1 overlap=1 (run 1)"],
        [1, 68, 69, 2, "dup:rebalance=1 (run 6)"],
        [2, 971, 1040, 5, "dup:rebalance=2 overlap=1 (run 76), ok (run 71), overlap=1 (run 151)"],
    ]
    assert "That search makes 1,040 runs" in prose
    assert max(r.schedule.moves for r in deep.rows) == 2
    assert L.one_choice("L1 d11 L1") == [
        [0, "consumer-2->namesrv 5 ms from here on"],
        [12, "consumer-2->broker-a 5 ms from here on"],
    ]
    assert "the second at choice point 12" in prose
    assert L.replay("L1 d11 L1") == "overlap=1"
    assert "`ok` with two moves, `L1 d1 L1`, where the depth-8 search needed four" in prose
    assert next(r.schedule for r in res.rows if r.outcome == "ok").moves == 4
    # the explorer's schedule box takes the deep search's schedules too
    ex = L.explorer(plot_mode="static")
    assert ex.replay_schedule("L1 d11 L1")
    assert ex.messages[-1] == "schedule L1 d11 L1 replayed → overlap=1"


def test_when_to_stop_as_written():
    """Section 7: the saturation figure, its three lines, and the numbers the prose reads off it."""
    from mqlab.lab.figure_check import check_figure

    prose = _prose()
    fig = L.saturation_figure()
    assert check_figure(fig) == []
    lines = {(t.name, t.xaxis): (list(t.x), list(t.y)) for t in fig.data}
    assert lines == {
        ("search, depth 8", "x"): ([1, 7, 55, 76], [1, 2, 3, 3]),
        ("20 random walks, depth 40", "x"): ([1, 6, 10, 20], [1, 2, 3, 3]),
        ("search, at most 2 moves", "x"): ([1, 6, 71, 76, 151, 1040], [1, 2, 3, 4, 5, 5]),
        ("search, depth 8", "x2"): ([0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 2, 2, 3, 3, 3, 3]),
        ("search, at most 2 moves", "x2"): ([0, 1, 2], [1, 2, 5]),
    }
    assert fig.layout.title.text == "When to stop: 5 classes at most 2 moves, 3 at depth 8"
    # runs on a log axis ticked at powers of ten only (not "10 2 5 100 2 5 1000")
    assert (fig.layout.xaxis.type, fig.layout.xaxis.dtick) == ("log", 1)
    for phrase in (
        "The depth-8 search found its last class at run 55 and ran on to run 76",
        "The walks found their last class at walk 10, and the ten walks after it added nothing",
        "The search bounded by moves found all five by run 151, then ran on to run 1,040",
        "the depth-8 search's levels stop adding after 4 moves",
        "added three classes at its last level",
        '"the last level added a class: a higher bound may add more"',
    ):
        assert phrase in prose, phrase


def test_the_walks_record_is_what_the_walks_give():
    """The notebook loads the 20 walks from their record: walk again, the same record (every
    figure but the seconds)."""
    from mqlab.lab.lessons._lesson11_record import WALKS

    assert L.record(L.walks(recompute=True)) == WALKS
    assert L.record(L.walks()) == WALKS


def test_the_record_is_what_the_search_gives():
    """The notebook loads the deviation search (1 040 runs) from its record: run it again,
    the same record (every figure but the seconds)."""
    from mqlab.lab.lessons._lesson11_record import DEVIATION_SEARCH

    assert L.record(L.deep_search(recompute=True)) == DEVIATION_SEARCH
    assert L.record(L.deep_search()) == DEVIATION_SEARCH
