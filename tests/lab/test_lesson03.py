"""Lesson 03 (pull processing, mechanisms.md "Pull processing" and mechanisms.md "The consumer's pull loop"): exercise answers for fixed seeds and helpers."""

from __future__ import annotations

import pytest

from mqlab.lab import Lab
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson03 as L


@pytest.mark.parametrize(
    ("ex_id", "seed", "answer"),
    [
        ("03.1", 20521, [0, 4]),  # 4 messages, offset 3 < max: FOUND, next = 4
        ("03.1", 50381, [21, 0]),  # offset 5 > max 4: OFFSET_OVERFLOW_BADLY, next = min 0
        ("03.1", 10, [19, 3]),  # offset 3 == max 3: OFFSET_OVERFLOW_ONE, next = 3
        ("03.2", 20521, [3, 16]),  # consumeEnable false: step 3 NO_PERMISSION
        ("03.2", 50381, [7, 1]),  # SQL92 without enablePropertyFilter: step 7 SYSTEM_ERROR
        ("03.3", 20521, [20, 4]),  # TagB on TagA units: NO_MATCHED_MESSAGE → 20, next = max
        ("03.3", 7, [20, 10]),
        ("03.4", 0, [19, "NO_MESSAGE_IN_QUEUE"]),  # empty queue, offset 0 → PULL_NOT_FOUND
        ("03.4", 20521, [21, "NO_MESSAGE_IN_QUEUE"]),  # empty queue, offset 22 → OFFSET_MOVED
    ],
)
def test_exercise_answers(ex_id, seed, answer):
    """The computed answers for fixed seeds (mechanisms.md "The consumer's pull loop" getMessage statuses and code table)."""
    assert expected(ex_id, seed) == answer
    assert check(ex_id, answer, seed=seed)


def test_params_cover_every_case():
    """03.1 offsets run max−1 … max+2; 03.2 cycles through the faults of steps 1, 3, 4, 5, 6, 7."""
    assert [L.params_03_1(s)["offset"] - L.params_03_1(s)["messages"] for s in (0, 10, 20, 30)] == [
        -1, 0, 1, 2,
    ]  # fmt: skip
    assert [L.params_03_2(s) for s in range(6)] == [f.name for f in L.EXERCISE_FAULTS]
    assert [L.params_03_4(s) for s in (0, 1, 50)] == [0, 2, 0]


def test_fault_table_steps_codes_and_remarks():
    """Each fault stops processRequest at its mechanisms.md "Pull processing" step with RocketMQ's code and remark."""
    t = L.fault_table(1).set_index("fault")
    assert [(r.failed_step, r.code) for r in t.itertuples()] == [
        ("1", 16), ("2", 26), ("3", 16), ("4", 17), ("5", 1), ("6", 24), ("7", 1), ("10", 1),
    ]  # fmt: skip
    assert t["remark"].iloc[0] == "the broker[127.0.0.1] pulling message is forbidden"
    assert t["remark"].iloc[2] == "subscription group no permission, CG"
    assert t["remark"].iloc[3] == "topic[NoSuchTopic] not exist, apply first please! "
    assert t["remark"].iloc[5] == "the consumer's group info not exist"
    assert t["remark"].iloc[6] == "The broker does not support consumer to filter message by SQL92"
    assert t["remark"].iloc[7] == "store getMessage return null"
    with pytest.raises(ValueError, match="no fault named"):
        L.fault_lab(1, "nope")


def test_walk_pull_one_event_for_the_broker_one_for_the_answer():
    """lab.step() 1 runs steps 1–11 on the broker; lab.step() 2 delivers the response."""
    with L.loaded_lab(1, 3, trace_level="frames") as lab:
        walk = L.walk_pull(lab, offset=1)
        pull_steps = walk[walk["component"] == "PullMessageProcessor.processRequest"]
        assert list(pull_steps["step"]) == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "11"]
        assert set(pull_steps["lab_step"]) == {1}
        assert walk["lab_step"].max() == 2
        assert walk.iloc[-1]["node"] == "raw-client"
        out = L.pull_outcome(walk.attrs["call"])
        assert out == {"code": 0, "code_name": "SUCCESS", "remark": "FOUND", "next_begin_offset": 3,
                       "min_offset": 0, "max_offset": 3, "messages": 2}  # fmt: skip


def test_step_ladder_states():
    """Healthy: all passed; a step-4 fault: 1–3 passed, 4 failed, 5–11 not reached; step 10 goes on to 11."""
    lad = L.step_ladder(1).pivot(index="case", columns="step", values="state")
    assert set(lad.loc["healthy pull"]) == {"passed"}
    row = lad.loc["topic NoSuchTopic"]
    assert [row[s] for s in L.STEPS] == ["passed"] * 3 + ["failed"] + ["not reached"] * 7
    row = lad.loc["store not readable (RunningFlags)"]
    assert [row[s] for s in L.STEPS] == ["passed"] * 9 + ["failed", "passed"]
    fig = L.step_ladder_figure(L.step_ladder(1))
    assert len(fig.data[0].y) == 9 and len(fig.data[0].x) == 11


def test_status_code_table_matches_seed_003():
    """FOUND 0, NO_MATCHED_MESSAGE 20, OFFSET_OVERFLOW_ONE 19, OFFSET_TOO_SMALL 21, empty queue 19/21."""
    t = L.status_code_table()
    fixed = dict(
        zip(t["status"][t["condition"] == ""], t["code"][t["condition"] == ""], strict=True)
    )
    assert fixed == {"FOUND": 0, "MESSAGE_WAS_REMOVING": 20, "NO_MATCHED_MESSAGE": 20,
                     "OFFSET_FOUND_NULL": 19, "OFFSET_OVERFLOW_BADLY": 21,
                     "OFFSET_OVERFLOW_ONE": 19, "OFFSET_TOO_SMALL": 21}  # fmt: skip
    cond = t[t["status"] == "NO_MESSAGE_IN_QUEUE"]
    assert list(cond["code"]) == [19, 21]


def test_commit_offset_flag_commits_at_step_11():
    """sysFlag COMMIT_OFFSET | SUBSCRIPTION (5) stores commitOffset for the group (step 11)."""
    with L.loaded_lab(1, 3) as lab:
        assert L.pull(lab, L.pull_fields(offset=1, sys_flag=5, commit_offset=2)).code == 0
        off = lab.consumer_offsets()
        assert off[["group", "queue_id", "offset", "lag"]].values.tolist() == [["CG", 0, 2, 1]]


def test_loaded_lab_with_no_messages_still_has_the_topic():
    """loaded_lab(seed, 0) creates TopicTest (one message in queue 0) so pulls reach step 5+."""
    with L.loaded_lab(1, 0) as lab:
        assert lab.queues("TopicTest")["max_offset"].tolist() == [1, 0, 0, 0]
    with Lab(seed=1) as lab:
        assert L.pull(lab).code == 17


def test_exercise_03_2_names_a_step_of_mechanisms_md():
    """03.2's question names the numbered checks of mechanisms.md, not an outside document."""
    from pathlib import Path

    from mqlab.lab.check import EXERCISES

    q = EXERCISES["03.2"].question
    assert "seed" not in q  # it cited a document outside the repo
    assert "checks 1–7 in mechanisms.md, 'Pull processing'" in q
    page = (Path(__file__).resolve().parents[2] / "notebooks" / "mechanisms.md").read_text("utf-8")
    section = page.split("## Pull processing: `PullMessageProcessor#processRequest`")[1]
    section = section.split("\n## ")[0]
    assert [f"| {i} |" in section for i in range(1, 8)] == [True] * 7
