"""Lesson 11 (what can happen?): the exercises' answers and the walk as the notebook writes it."""

from __future__ import annotations

import pytest

from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson11 as L

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", [0, 12345])
def test_exercise_answers(seed):
    """The same for every learner (the search covers every schedule; no seed to vary)."""
    assert expected("11.1", seed) == 2
    assert expected("11.2", seed) == 0
    assert expected("11.3", seed) == [5, 3]


def test_wrong_answers_get_the_misconception_hints():
    r = check("11.1", 9)
    assert not r and "9 is the distinct final states" in r.message
    r = check("11.1", 31)
    assert not r and "if you answered 31 you counted runs" in r.message
    r = check("11.3", [6, 3])
    assert not r and "'d5 l1' changes point 5, not 6" in r.message
    assert check("11.2", 0) and check("11.3", [5, 3]) and check("11.1", 2)


def test_the_walk_as_written():
    xs = L.scenario()
    assert (xs.name, str(L.bounds()), xs.latencies) == (
        "consumer_join",
        "depth=6,faults=0,window=0,latencies=-,por=1",
        (1, 3),
    )
    res = L.search()
    assert res.format().splitlines() == [
        "outcome                    count  depth  shortest schedule",
        "dup:rebalance=1                3      6  d5 l1",
        "dup:rebalance=1 overlap=1      6      0  (default)",
        "runs 31, states visited 39, distinct 30, pruned 9, asleep 0",
    ]
    assert res.frame()["shortest_schedule"].tolist() == ["d5 l1", "(default)"]
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
    assert L.one_choice("d5 l1") == [[5, "consumer-2->broker-a 3 ms"]]
    ex.diff()
    assert ex.messages[-1] == "d5 l1: the trace parts from the plain run at seq 275"
    d = ex.diff_frame.set_index("seq")
    # the plain run: consumer-2's GET_CONSUMER_LIST_BY_GROUP is answered at 2020; the replay: 2022
    assert d.loc[274, "same"] and not d.loc[275, "same"]
    assert d.loc[275, "a_event"].startswith("ConsumerManageProcessor.getConsumerListByGroup ok")
    assert (d.loc[275, "a_t_ms"], d.loc[278, "b_t_ms"]) == (2020, 2021)
    for lab, again in ((ex.plain.lab, 2025), (ex.current.lab, 2027)):
        dups = L.duplicates(lab)
        assert dups.values.tolist() == [
            [1, 0, 2009, "consumer-1", again, "consumer-2", "rebalance overlap"]
        ]

    # consumer-2 takes queue 1 at 2021 in the plain run, at 2023 in the replay, when
    # consumer-1 drops it and persists offset 0
    def at(lab, node, text):
        return [e.t_ms for e in lab.trace.events if e.node == node and text in e.describe()]

    assert at(ex.plain.lab, "consumer-2", "takes 1 of 2 queue(s)")[0] == 2021
    assert at(ex.current.lab, "consumer-2", "takes 1 of 2 queue(s)")[0] == 2023
    assert (
        at(
            ex.current.lab,
            "consumer-1",
            "commit offset 0 of MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=1]",
        )[0]
        == 2023
    )
