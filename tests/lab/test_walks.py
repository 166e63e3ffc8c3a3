"""The prose is the test: every "drive it yourself" / "Your turn" walk of lessons 00–09,
followed step by step as written (issue 20).

Each test runs the learner notebook's cells up to the walk's panel, exactly as *Run All*
does (``walks.open_panel``), then clicks what the lesson's text says through the panel's
own buttons and inputs (the callbacks a browser click runs) and checks what the text says
will be seen, number for number. When a lesson's walk text changes, its test changes with
it. The browser versions of lessons 06 and 08 are tests/e2e/test_lessons_browser.py.
"""

from __future__ import annotations

import pandas as pd
import pytest
from walks import clicks, open_panel, prose_quotes, run_cell_with, unquoted

from mqlab.lab import explorer as E
from mqlab.lab.check import learner_seed
from mqlab.lab.checkers import find_duplicates
from mqlab.lab.lessons import lesson09 as L09

#: The learner notebooks' default name (``LEARNER = "your-name"``).
SEED = learner_seed("your-name")


def click(panel, button: str, **inputs) -> str:
    """Set ``inputs`` as a learner types them, click ``button``; what the log said."""
    for name, value in inputs.items():
        panel.inputs[name].value = value
    mark = len(panel.messages)
    panel.buttons[button].click()
    return clicks(panel, mark)


def toggle(panel, name: str, value) -> str:
    mark = len(panel.messages)
    panel.inputs[name].value = value
    return clicks(panel, mark)


def test_lesson00_the_control_panel():
    """00 "The control panel": send 5 (sent 5/5), pull once on queue 0 (parked, listed in
    held pulls), to next timer (time jumps to the timer the log names)."""
    p, ns = open_panel("00_tour")
    lab = ns["lab"]
    said = click(p, "send", count="5")
    assert "→ sent 5/5: SEND_OK broker-a queue" in said
    assert said.count("SEND_OK") == 5
    held_before = len(lab.held_pulls())
    said = click(p, "pull", queue_id="0")
    assert p.inputs["offset"].value == ""  # empty: the queue's max offset
    assert "no answer yet — the pull is parked (see held pulls)" in said
    held = lab.held_pulls()
    assert len(held) == held_before + 1 and "TopicTest@0" in set(held["key"])
    nxt = lab.next_timers(1)[0]
    said = click(p, "next_timer")
    assert f"advance to the next timer: {nxt.name} ({nxt.node}) at t={nxt.due_ms}" in said
    assert lab.now == nxt.due_ms
    assert not unquoted(prose_quotes("00_tour", "## The control panel"), "\n".join(p.messages))


def test_lesson01_your_turn():
    """01 "Your turn": autoCreateTopicEnable off, send to NewTopic → TOPIC_NOT_EXIST remark,
    3 attempts, sent 0/1; an illegal name is refused before anything is sent."""
    p, ns = open_panel("01_send_path")
    lab = ns["lab"]
    # the toggles row holds only what the lesson uses (issue 28: it showed the allocation
    # strategy and the listener mode too, which lesson 01 never touches)
    toggles = p.widget.children[p.sections.index("toggles")].children
    assert [w.description for w in toggles] == ["autoCreateTopicEnable"]
    said = toggle(p, "auto_create_topic", False)
    assert "autoCreateTopicEnable=False on every broker" in said
    said = click(p, "send", topic="NewTopic")
    assert "reason=default topic has no inherit perm" in said
    assert "TOPIC_NOT_EXIST (topic[NewTopic] not exist, apply first please!)" in said
    assert "→ sent 0/1" in said
    assert "→ send failed: Send [3] times, still failed" in said
    before = (lab.now, len(lab.trace))
    said = click(p, "send", topic="bad topic!")
    assert said.startswith(
        "⚠ The specified topic[bad topic!] contains illegal characters, allowing only "
        "^[%|a-zA-Z0-9_-]+$"
    )
    assert (lab.now, len(lab.trace)) == before
    assert not unquoted(prose_quotes("01_send_path", "## Your turn"), "\n".join(p.messages))


@pytest.mark.parametrize("learner", ["your-name", "ada"])
def test_lesson02_your_turn_commit_log_and_consume_queue_views(learner):
    """02 "Your turn" (defect 7): the panel has the commit-log and consume-queue views; after
    sending 2 × TagB / hello-{i}, their top rows are those messages and their units."""
    p, ns = open_panel("02_store", learner=learner)
    lab = ns["lab"]
    html_before = p.inspector.value
    assert "commit log (broker-a, newest first)" in html_before
    assert "consume queues of TopicTest (newest first)" in html_before
    said = click(p, "send", tags="TagB", body="hello-{i}", count="2")
    assert "→ sent 2/2" in said
    log = lab.commit_log().sort_values("commit_log_offset", ascending=False).head(2)
    assert list(log["tags"]) == ["TagB", "TagB"]
    assert sorted(log["body"]) == [b"hello-0", b"hello-1"]
    units = pd.concat(
        [lab.consume_queue("TopicTest", q).assign(queue_id=q) for q in range(4)]
    ).sort_values("commit_log_offset", ascending=False)
    top = units.head(2)
    assert list(top["commit_log_offset"]) == list(log["commit_log_offset"])
    assert list(top["size"]) == list(log["size"])
    assert list(top["tags_code"]) == [2598920, 2598920]  # "TagB".hashCode()
    html = p.inspector.value
    for off, body in zip(log["commit_log_offset"], log["body"], strict=True):
        assert f"<td>{off}</td>" in html and f"<td>{body.decode()}</td>" in html
    assert html.count("<td>2598920</td>") == 2


@pytest.mark.parametrize("learner", ["your-name", "ada"])
def test_lesson03_your_turn(learner):
    """03 "Your turn": queue 0 holds 3 messages; offsets 0 and 2 → FOUND (next 3), max →
    parked 15 000 ms, 99 → PULL_OFFSET_MOVED (21); without long polling: suspended 1000 ms."""
    p, ns = open_panel("03_pull_processing", learner=learner)
    q = ns["lab"].queues("TopicTest").set_index("queue_id").loc[0]
    assert (q["min_offset"], q["max_offset"]) == (0, 3)
    said = click(p, "pull", queue_id="0", offset="0")
    assert "SUCCESS (0), nextBeginOffset=3, minOffset=0, maxOffset=3 — FOUND" in said
    said = click(p, "pull", offset="2")
    assert "offset 2 from broker-a answered" in said
    assert "SUCCESS (0), nextBeginOffset=3, minOffset=0, maxOffset=3 — FOUND" in said
    said = click(p, "pull", offset="")
    assert "pull held: TopicTest@0 offset 3, suspended 15000 ms" in said
    assert "no answer yet — the pull is parked" in said
    said = click(p, "pull", offset="99")
    assert "PULL_OFFSET_MOVED (21), nextBeginOffset=0, minOffset=0, maxOffset=3" in said
    assert "OFFSET_OVERFLOW_BADLY" in said
    toggle(p, "long_polling", False)
    said = click(p, "pull", offset="")
    assert "pull held: TopicTest@0 offset 3, suspended 1000 ms" in said
    assert not unquoted(prose_quotes("03_pull_processing", "## Your turn"), "\n".join(p.messages))


@pytest.mark.parametrize("learner", ["your-name", "ada"])
def test_lesson04_your_turn(learner):
    """04 "Your turn": parked at 20002 (deadline 35002), the check at 25000 keeps it, the
    check at 40000 answers it (PULL_NOT_FOUND at 40001); short polling: 1000 ms, its
    deadline 41003, answered by the check at 45000."""
    p, ns = open_panel("04_long_polling", learner=learner)
    lab = ns["lab"]
    said = click(p, "pull", queue_id="1")
    assert "t=20002 broker-a PullRequestHoldService.suspendPullRequest" in said
    row = lab.held_pulls().set_index("key").loc["TopicTest@1"]
    assert (row["suspend_timestamp"], row["deadline"]) == (20002, 35002)
    said = click(p, "next_timer")
    assert "at t=25000" in said and "TopicTest@1: 1 pull(s) stay parked" in said
    said = click(p, "long_poll_timeout")
    assert "the hold-service check at t=40000 answered the parked pull TopicTest@1" in said
    assert "answered at t=40001: PULL_NOT_FOUND (19)" in said
    toggle(p, "long_polling", False)
    said = click(p, "pull")
    assert "pull held: TopicTest@1 offset 0, suspended 1000 ms" in said
    said = click(p, "next_timer")
    assert "suspended pull timeout (broker-a) at t=41003" in said
    said = click(p, "long_poll_timeout")
    assert "the hold-service check at t=45000 answered the parked pull TopicTest@1" in said
    assert "answered at t=45001: PULL_NOT_FOUND (19)" in said
    assert not unquoted(prose_quotes("04_long_polling", "## Your turn"), "\n".join(p.messages))


@pytest.mark.parametrize("learner", ["your-name", "ada"])
def test_lesson05_consistent_hash_newcomer(learner):
    """05 "Drive it yourself": CONSISTENT_HASH beside three AVG consumers claims queues 1 and
    2, already held; nobody holds queue 3; the heatmap cell, run again, shows it."""
    p, ns = open_panel("05_rebalancing", learner=learner)
    lab = ns["lab"]
    toggle(p, "strategy", "CONSISTENT_HASH")
    said = click(p, "add_consumer")
    assert "→ consumer-4 (CONSISTENT_HASH) now holds TopicTest queues [1, 2]" in said
    a = lab.allocation()
    a = a[a["topic"] == "TopicTest"]
    owners = {q: sorted(g["consumer"]) for q, g in a.groupby("queue_id")}
    assert owners == {0: ["consumer-1"], 1: ["consumer-2", "consumer-4"],
                      2: ["consumer-3", "consumer-4"]}  # fmt: skip
    fig = run_cell_with("05_rebalancing", "figures.allocation_heatmap(lab", ns)
    assert "overlap (2+ consumers)" in {t.name for t in fig.data}


def test_lesson06_pull_loop_step_by_step():
    """06 "Drive it yourself" (defect 3): on a fresh lab, the added consumer owns the queue
    and the log shows the loop: pull sent, parked; woken, FOUND 1 / 32 / 7, parked at 40;
    the 15 s run out and the check at 20000 answers NO_NEW_MSG, parked again; kill drops both."""
    p, ns = open_panel("06_pull_loop_flow_control")
    walk = ns["walk"]
    said = click(p, "add_consumer")
    assert said.endswith("→ consumer-1 (AVG) now holds Orders queues [0]")
    assert "step 2.5: pull Orders/broker-a/0 from offset 0" in said
    assert "pull held: Orders@0 offset 0, suspended 15000 ms" in said
    assert sorted(walk.held_pulls()["key"]) == ["%RETRY%CG@0", "Orders@0"]
    said = click(p, "send", count="40")
    loop = [
        "Orders@0: max offset 1 > pull offset 0; filter matches → wake",
        "FOUND 1 on Orders/broker-a/0 (offsets 0..0); 1 cached; submit to consume, next pull from 1",
        "pull Orders/broker-a/0 from offset 1",
        "FOUND 32 on Orders/broker-a/0 (offsets 1..32)",
        "pull Orders/broker-a/0 from offset 33",
        "FOUND 7 on Orders/broker-a/0 (offsets 33..39)",
        "pull Orders/broker-a/0 from offset 40",
        "pull held: Orders@0 offset 40, suspended 15000 ms",
    ]
    at = [said.find(s) for s in loop]
    assert -1 not in at and at == sorted(at), dict(zip(loop, at, strict=True))
    # the log keeps the pull loop's lines and folds the consume lines (L.PULL_LOOP)
    assert said.count("step 2.6: FOUND") == 3 and said.count("step 2.5: pull Orders") == 3
    assert "ConsumeMessageConcurrentlyService.ConsumeRequest.run step 61" not in said
    said = click(p, "advance", advance_ms="20000")
    assert "suspend deadline of Orders@0 offset 40 reached" in said and "t=15035" in said
    assert "Orders@0 offset 40: suspended 19965 ms ≥ 15000 ms → answer now" in said
    assert "NO_NEW_MSG on Orders/broker-a/0: next offset 40" in said
    after = said[said.find("NO_NEW_MSG on Orders") :]
    assert "pull Orders/broker-a/0 from offset 40" in after
    assert "pull held: Orders@0 offset 40, suspended 15000 ms" in after
    said = click(p, "kill_consumer")
    assert said.count("the consumer's connection closed; the parked pull is dropped") == 2
    assert walk.held_pulls().empty
    # every log line the prose quotes is in the log as printed (issue 28: it quoted
    # "FOUND 32 (offsets 1..32)", which a learner searching the log did not find)
    quotes = prose_quotes("06_pull_loop_flow_control", "## 4. Drive it yourself")
    assert len(quotes) == 15 and not unquoted(quotes, "\n".join(p.messages))


def test_lesson07_listener_fails_then_retry():
    """07 "Drive it yourself": listener "fails", send 1, advance 10000 twice: consumed →
    RECONSUME_LATER, sent back with delay level 3; the retry comes from %RETRY%CG, fails
    again and goes back with level 4."""
    p, _ = open_panel("07_retry_dlq")
    toggle(p, "listener", "fails")
    said = click(p, "send")
    assert (
        "consumes TopicTest/broker-a/" in said and "(reconsumeTimes [0]) → RECONSUME_LATER" in said
    )
    assert "→ %RETRY%CG with delay level 3" in said
    said = click(p, "advance", advance_ms="10000") + "\n" + click(p, "advance")
    assert "level 3: delivered 1 message(s)" in said
    assert "consumes %RETRY%CG/broker-a/0" in said
    assert "(reconsumeTimes [1]) → RECONSUME_LATER" in said
    assert "→ %RETRY%CG with delay level 4" in said
    assert not unquoted(
        prose_quotes("07_retry_dlq", "## 5. Drive it yourself"), "\n".join(p.messages)
    )


def _lesson08_run(persist_first: bool):
    p, ns = open_panel("08_offsets")
    walk = ns["walk"]
    said = click(p, "add_consumer", consume_ms="2000")
    assert "→ consumer-1 (AVG) now holds TopicTest queues [0, 1, 2, 3]" in said
    said = click(p, "send", count="20")
    assert "→ sent 20/20" in said and walk.now == 2034
    assert len(walk.deliveries()) == 20
    assert walk.consumer_offsets().query("group == 'CG'").empty  # the broker has none yet
    assert "<td>TopicTest</td>" not in p.inspector.value.split("consumer offsets")[1]
    assert p.inputs["consumer"].value == "consumer-1"
    said = click(p, "kill_consumer", persist_first=persist_first)
    assert ("kill consumer-1 (persist first)" in said) is persist_first
    said = click(p, "add_consumer", consume_ms="0")
    assert "→ consumer-2 (AVG) now holds TopicTest queues [0, 1, 2, 3]" in said
    report = run_cell_with("08_offsets", "find_duplicates(walk", ns)
    return walk, report, "\n".join(p.messages)


#: What lesson 08's walk prose quotes of the two runs' printed reports, by persist first.
_REPORT_08 = {
    False: "✘ duplicates: 20 duplicate deliver(ies): 20 × crash before offset persist",
    True: "✔ duplicates: no unintended duplicates",
}


def _lesson08_quotes_found(log: str, printed: str, persist_first: bool) -> None:
    """Every log line the walk quotes is in the log, or in the report the cell printed;
    only the other run's report is not."""
    quotes = prose_quotes("08_offsets", "## 5. Drive it yourself")
    assert unquoted(quotes, log + "\n" + printed) == [_REPORT_08[not persist_first]]


def test_lesson08_kill_without_persist_first_redelivers_20(capsys):
    """08 "Drive it yourself" (defect 2), persist first unticked: consumer-2 starts at 0 and
    the cell under the panel prints 20 duplicates."""
    walk, _, log = _lesson08_run(False)
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    _lesson08_quotes_found(log, printed, False)
    assert printed == "✘ duplicates: 20 duplicate deliver(ies): 20 × crash before offset persist"
    assert str(find_duplicates(walk, "CG")) == (
        "✘ duplicates: 20 duplicate deliver(ies): 20 × crash before offset persist"
    )
    assert len(walk.deliveries()) == 40


def test_lesson08_kill_with_persist_first_redelivers_nothing(capsys):
    """The same walk on a fresh `walk` with persist first ticked: offset 5 per queue was
    committed before the kill, consumer-2 starts there, no duplicates."""
    walk, _, log = _lesson08_run(True)
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    _lesson08_quotes_found(log, printed, True)
    assert printed == "✔ duplicates: no unintended duplicates"
    assert str(find_duplicates(walk, "CG")) == printed
    off = walk.consumer_offsets().query("group == 'CG' and topic == 'TopicTest'")
    assert off.sort_values("queue_id")["offset"].tolist() == [5, 5, 5, 5]
    assert len(walk.deliveries()) == 20


@pytest.mark.parametrize("dataset", ["long_vs_short_polling"])
def test_lesson09_explore_the_runs(dataset):
    """09 "Explore the runs yourself", on the pandas path (the Spark path of the same widget:
    tests/experiments): each *run a small fresh sweep* adds 4 runs to "fresh runs (this
    session)", one step per seed; the intervals narrow as they add up."""
    e = L09.explorer(None, SEED)
    assert e.dataset.value == dataset
    e.button.click()
    assert e.dataset.value == E.FRESH and (e.progress.value, e.progress.max) == (2, 2)
    assert e.summary["n"].tolist() == [2, 2]
    width1 = (e.summary["ci_high"] - e.summary["ci_low"]).tolist()
    e.button.click()
    assert e.summary["n"].tolist() == [4, 4]
    assert "8 fresh runs" in e.status.value
    width2 = (e.summary["ci_high"] - e.summary["ci_low"]).tolist()
    assert all(b < a for a, b in zip(width1, width2, strict=True)), (width1, width2)
