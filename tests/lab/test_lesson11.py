"""Lesson 11 (what can happen?): the exercises' answers and the walk as the notebook writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson11 as L

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", [0, 12345])
def test_exercise_answers(seed):
    """The same for every learner (the search covers every schedule; no seed to vary)."""
    assert expected("11.1", seed) == 3
    assert expected("11.2", seed) == 1
    assert expected("11.3", seed) == [5, 5]
    assert expected("11.4", seed) == [2, 0]


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
