"""The control panel, driven headless: every button clicked, every toggle flipped (issue 4)."""

import ipywidgets as widgets
import pytest

from mqlab.lab import Lab
from mqlab.lab.panel_views import PanelListener, words
from mqlab.lab.widgets import SECTIONS, ControlPanel, control_panel
from mqlab.trace.events import Kind, TraceEvent

BUTTONS = {
    "send", "pull", "add_consumer", "remove_consumer", "kill_consumer", "rebalance",
    "persist_offsets", "advance", "next_timer", "long_poll_timeout", "refresh", "apply_fault",
}  # fmt: skip
INPUTS = {
    "topic", "tags", "body", "count", "broker", "queue_id", "offset", "suspend", "timeout_ms",
    "subscription", "consumer", "group", "expression", "consume_ms", "persist_first", "advance_ms",
    "long_polling", "auto_create_topic", "strategy", "listener", "fault", "fault_node",
    "latency_ms",
}  # fmt: skip


@pytest.fixture
def lab():
    with Lab(seed=1) as lab:
        yield lab


@pytest.fixture
def panel(lab):
    return control_panel(lab)


def said(panel: ControlPanel) -> str:
    return "\n".join(panel.messages)


def snapshot(lab: Lab) -> tuple:
    """What a bad click must leave alone: time, events, journal, topics."""
    return (lab.now, lab.events_run, len(lab.trace), len(lab._journal), len(lab.topics()))


def send(panel: ControlPanel, count: int = 3, topic: str = "TopicTest") -> None:
    panel.inputs["topic"].value = topic
    panel.inputs["count"].value = str(count)
    panel.buttons["send"].click()


def max_offsets(lab: Lab, topic: str = "TopicTest") -> list[int]:
    return lab.queues(topic)["max_offset"].tolist()


def queues_of(lab: Lab) -> dict[str, list[int]]:
    a = lab.allocation()
    a = a[a["topic"] == "TopicTest"]
    return {c: sorted(g["queue_id"]) for c, g in a.groupby("consumer")}


# -- construction --------------------------------------------------------------------------------
def test_control_panel_api(lab):
    """Contract: control_panel(lab) → ControlPanel with widget, buttons, inputs, messages, refresh."""
    p = control_panel(lab, topic="T1", group="G1")
    assert isinstance(p, ControlPanel) and isinstance(p.widget, widgets.VBox)
    assert len(SECTIONS) == 9  # the timeline and the tables share one box: two tabs
    # without slaves the "faults" row is left out: 9 sections - 1 - the tab's second = 7 boxes
    assert "faults" not in p.sections
    assert len(p.widget.children) == 7 and isinstance(p.widget.children[-1], widgets.Tab)
    assert set(p.buttons) == BUTTONS and set(p.inputs) == INPUTS
    assert all(isinstance(b, widgets.Button) for b in p.buttons.values())
    assert (p.inputs["topic"].value, p.inputs["group"].value) == ("T1", "G1")
    assert p.messages == [] and callable(p._ipython_display_)
    assert "t = 0 ms" not in p.inspector.value and f"t = {lab.now} ms" in p.inspector.value


def test_control_panel_sections(lab):
    """sections=[...] shows only those rows; every button still exists; a bad name is a ValueError."""
    p = control_panel(lab, sections=["send", "log"])
    assert len(p.widget.children) == 2
    assert p.buttons["send"] in p.widget.children[0].children
    assert set(p.buttons) == BUTTONS and p.timeline is None
    send(p, 2)
    assert p.messages[-1].startswith("  → sent 2/2: SEND_OK") and p.inspector.value == ""
    with pytest.raises(ValueError, match="unknown sections \\['sned'\\]"):
        control_panel(lab, sections=["sned"])


# -- send ---------------------------------------------------------------------------------------
def test_send_three(lab, panel):
    """send 3 to a new topic: auto-created with 4 queues (TBW102, docs/reference.md §7.3); seed 1 picks q1–q3."""
    send(panel, 3)
    assert max_offsets(lab) == [0, 1, 1, 1]
    assert "▶ t=2 send 3 to TopicTest (tags TagA)" in panel.messages
    assert (
        "  → sent 3/3: SEND_OK broker-a queue 1 offset 0, SEND_OK broker-a queue 2 offset 0, "
        "SEND_OK broker-a queue 3 offset 0" in panel.messages
    )
    assert "PUT_OK → SUCCESS: queue 3 offset 0, commit log @358" in said(panel)
    assert "queues of TopicTest" in panel.inspector.value
    assert "<td>broker-a</td><td>3</td><td>0</td><td>1</td>" in panel.inspector.value


def test_send_body_and_tags(lab, panel):
    """The body template's {i} numbers the messages; the tags input becomes the TAGS property."""
    panel.inputs["body"].value = "order-{i}"
    panel.inputs["tags"].value = "TagB"
    send(panel, 2)
    log = lab.commit_log()
    assert log["body"].tolist() == [b"order-0", b"order-1"]
    assert log["tags"].tolist() == ["TagB", "TagB"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("topic", "", "⚠ topic must not be empty"),
        ("topic", "   ", "⚠ topic must not be empty"),
        # RocketMQ 4.9.3's own remarks (Validators#checkTopic), walk 4 of issue 28
        ("topic", "bad topic!", "⚠ The specified topic[bad topic!] contains illegal characters, "
                                "allowing only ^[%|a-zA-Z0-9_-]+$ (Validators#checkTopic)"),
        ("topic", "T" * 128, "⚠ The specified topic is longer than topic max length 127. "
                             "(Validators#checkTopic)"),
        ("count", "-1", "⚠ count must be from 1 to 10000, got -1"),
        ("count", "0", "⚠ count must be from 1 to 10000, got 0"),
        ("count", "three", "⚠ count must be a whole number, got 'three'"),
        ("body", "", "⚠ body must not be empty (the client rejects an empty body)"),
        ("body", "m-{x}", "⚠ body may use {i} (the message number) only, got 'm-{x}'"),
    ],
)  # fmt: skip
def test_send_bad_input(lab, panel, field, value, message):
    """Bad send input (docs/reference.md §7.1 topic rules): a clear message, nothing sent, nothing raised."""
    before = snapshot(lab)
    panel.inputs[field].value = value
    panel.buttons["send"].click()
    assert panel.messages == [message]
    assert snapshot(lab) == before
    assert message in panel.log.value.replace("&#x27;", "'")


def test_send_error_from_the_lab_becomes_a_message(lab, panel, monkeypatch):
    """An exception inside the Lab is shown, not raised into the notebook."""

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(lab, "send_many", boom)
    panel.buttons["send"].click()
    assert panel.messages[0] == "▶ t=2 send 1 to TopicTest (tags TagA)"
    assert panel.messages[-1] == "✗ send failed: RuntimeError: boom"


# -- pull once -----------------------------------------------------------------------------------
def test_pull_once_on_empty_queue_parks(lab, panel):
    """mechanisms.md "Long polling": a SUSPEND pull at the max offset of an empty queue is parked for 15 000 ms."""
    send(panel, 3)  # queue 0 stays empty
    panel.messages.clear()
    panel.inputs["queue_id"].value = "0"
    panel.buttons["pull"].click()
    held = lab.held_pulls()
    assert held[
        ["key", "pull_from_this_offset", "suspend_timestamp", "deadline"]
    ].values.tolist() == [["TopicTest@0", 0, 10, 15010]]
    assert (
        "  t=10 broker-a PullRequestHoldService.suspendPullRequest step suspend: pull held: "
        "TopicTest@0 offset 0, suspended 15000 ms" in panel.messages
    )
    assert panel.messages[-1] == (
        "  → pull TopicTest@0 offset 0 from broker-a: no answer yet — the pull is parked "
        "(see held pulls)"
    )
    assert "<td>TopicTest@0</td>" in panel.inspector.value
    bars = {tr.name: tr for tr in panel.timeline.figure.data}
    assert list(bars["parked pull (unanswered)"].y) == ["broker-a"]


def test_let_long_poll_time_out(lab, panel):
    """docs/reference.md §10.3: the parked pull (deadline 15 010) is answered by the 20 000 check: PULL_NOT_FOUND."""
    send(panel, 3)
    panel.inputs["queue_id"].value = "0"
    panel.buttons["pull"].click()
    panel.messages.clear()
    panel.buttons["long_poll_timeout"].click()
    assert lab.held_pulls().empty
    assert lab.now == 20001
    assert panel.messages[0] == (
        "▶ t=10 let the parked pull TopicTest@0 offset 0 (deadline t=15010) time out "
        "(your pull once)"
    )
    assert "  → the hold-service check at t=20000 answered the parked pull TopicTest@0 offset 0 " \
           "(deadline t=15010): your pull once" in panel.messages  # fmt: skip
    assert panel.messages[-1] == (
        "  → pull TopicTest@0 offset 0 from broker-a answered at t=20001: PULL_NOT_FOUND (19), "
        "nextBeginOffset=0, minOffset=0, maxOffset=0 — NO_MESSAGE_IN_QUEUE"
    )
    bars = {tr.name: tr for tr in panel.timeline.figure.data}
    assert list(bars["parked pull (timeout)"].y) == ["broker-a"]


def test_let_long_poll_time_out_answers_your_pull_not_the_consumers():
    """Lesson 00: consumer-1's pulls park at ~t=30 (the %RETRY%CG@0 one has the earliest
    deadline, answered by the t=20000 check); your pull once at t≈6030 has deadline ≈21030, so
    the button advances to the t=25000 check and your pull comes back PULL_NOT_FOUND.
    Before, it stopped at t=20000 and your pull was still parked (issue 20, defect 10)."""
    from mqlab.lab.lessons import lesson00 as L

    with L.tour_lab(1) as lab:
        panel = control_panel(lab)
        panel.inputs["advance_ms"].value = "6000"
        panel.buttons["advance"].click()
        panel.inputs["queue_id"].value = "0"
        panel.buttons["pull"].click()
        mine = lab.held_pulls().sort_values("suspend_timestamp").iloc[-1]
        assert (mine["key"], int(mine["deadline"])) == ("TopicTest@0", lab.now + 15_000)
        earliest = lab.held_pulls().sort_values("deadline").iloc[0]
        assert earliest["key"] != "TopicTest@0" or earliest["opaque"] != mine["opaque"]
        panel.messages.clear()
        panel.buttons["long_poll_timeout"].click()
        off = int(mine["pull_from_this_offset"])
        assert panel.messages[0] == (
            f"▶ t={int(mine['suspend_timestamp'])} let the parked pull TopicTest@0 offset {off} "
            f"(deadline t={int(mine['deadline'])}) time out (your pull once)"
        )
        assert lab.now == 25_001
        assert panel.messages[-1].startswith(
            f"  → pull TopicTest@0 offset {off} from broker-a answered at t=25001: "
            "PULL_NOT_FOUND (19)"
        )
        # with no pull of yours parked, the earliest deadline (a push consumer's) is named
        panel.buttons["long_poll_timeout"].click()
        assert panel.messages[-1].endswith(": a push consumer's pull, the earliest deadline")


def test_let_long_poll_time_out_with_nothing_parked(lab, panel):
    """No parked pull: a message, time does not move."""
    before = snapshot(lab)
    panel.buttons["long_poll_timeout"].click()
    assert panel.messages == ["⚠ no pull is parked: pull once on an empty queue first"]
    assert snapshot(lab) == before


def test_pull_once_finds_messages(lab, panel):
    """mechanisms.md "Pull processing" step 9: FOUND → SUCCESS (0) with nextBeginOffset = offset + messages."""
    send(panel, 3)
    panel.inputs["queue_id"].value = "1"
    panel.inputs["offset"].value = "0"
    panel.buttons["pull"].click()
    assert lab.held_pulls().empty
    assert panel.messages[-1] == (
        "  → pull TopicTest@1 offset 0 from broker-a answered at t=11: SUCCESS (0), "
        "nextBeginOffset=1, minOffset=0, maxOffset=1 — FOUND"
    )


def test_pull_once_without_suspend_answers_at_once(lab, panel):
    """Without the SUSPEND flag an empty queue answers PULL_NOT_FOUND (19) at once (mechanisms.md "Pull processing")."""
    send(panel, 3)
    panel.inputs["queue_id"].value = "0"
    panel.inputs["suspend"].value = False
    panel.buttons["pull"].click()
    assert lab.held_pulls().empty
    assert "answered at t=11: PULL_NOT_FOUND (19)" in panel.messages[-1]


def test_pull_once_queue_id_of_a_topic_the_broker_does_not_have(lab, panel):
    """No read queue count to check against: the header's queueId is a Java int."""
    panel.messages.clear()
    panel.inputs["topic"].value = "NoSuchTopic"
    panel.inputs["queue_id"].value = "99999999999"
    panel.buttons["pull"].click()
    assert panel.messages == [
        "⚠ queue id must be from 0 to 2147483647 (the header's queueId is a Java int), "
        "got 99999999999"
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("queue_id", "4", "⚠ queue id must be from 0 to 3 (TopicTest has 4 read queues), got 4"),
        ("queue_id", "-1", "⚠ queue id must be from 0 to 3 (TopicTest has 4 read queues), got -1"),
        ("queue_id", "one", "⚠ queue id must be a whole number, got 'one'"),
        ("offset", "1.5", "⚠ offset must be a whole number, got '1.5'"),
        # issue 28: a number past a Java long reached the broker, which answered
        # "RemotingCommandException: … out of range"
        (
            "offset",
            "99999999999999999999",
            "⚠ offset must be from 0 to 9223372036854775807 (the "
            "header's queueOffset is a Java long), got "
            "99999999999999999999",
        ),
        (
            "offset",
            "-1",
            "⚠ offset must be from 0 to 9223372036854775807 (the header's "
            "queueOffset is a Java long), got -1",
        ),
        ("timeout_ms", "-5", "⚠ timeout ms must be from 0 to 3600000, got -5"),
        ("group", "", "⚠ group must be a valid name (a-z A-Z 0-9 _ - % |), got ''"),
    ],
)
def test_pull_once_bad_input(lab, panel, field, value, message):
    """Queue id out of readQueueNums (4) and non-numbers: a message, no request sent."""
    send(panel, 3)
    panel.messages.clear()
    before = snapshot(lab)
    panel.inputs[field].value = value
    panel.buttons["pull"].click()
    assert panel.messages == [message]
    assert snapshot(lab) == before


# -- consumers -----------------------------------------------------------------------------------
def test_add_consumers_allocation(lab, panel):
    """Two consumers, AVG (docs/reference.md §10.10): contiguous blocks, consumer-1 [0, 1], consumer-2 [2, 3]."""
    send(panel, 3)
    panel.buttons["add_consumer"].click()
    assert queues_of(lab) == {"consumer-1": [0, 1, 2, 3]}
    assert "  → consumer-1 (AVG) now holds TopicTest queues [0, 1, 2, 3]" in panel.messages
    panel.buttons["add_consumer"].click()
    assert queues_of(lab) == {"consumer-1": [0, 1], "consumer-2": [2, 3]}
    assert panel.messages[-1] == "  → consumer-2 (AVG) now holds TopicTest queues [2, 3]"
    assert list(panel.inputs["consumer"].options) == ["consumer-1", "consumer-2"]
    assert panel.inputs["consumer"].value == "consumer-2"
    assert lab.consumer("consumer-1").message_listener is panel.listener
    assert (
        "<td>consumer-2</td><td>TopicTest</td><td>broker-a</td><td>3</td>" in panel.inspector.value
    )


def test_strategy_dropdown(lab, panel):
    """AVG_BY_CIRCLE (docs/reference.md §10.10): queue i goes to consumer i % 2 → [0, 2] and [1, 3]."""
    send(panel, 3)
    assert list(panel.inputs["strategy"].options) == ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"]
    panel.inputs["strategy"].value = "AVG_BY_CIRCLE"
    assert panel.messages[-1] == (
        "▶ allocation strategy for consumers added next: AVG_BY_CIRCLE "
        "(running consumers keep theirs)"
    )
    panel.buttons["add_consumer"].click()
    panel.buttons["add_consumer"].click()
    assert queues_of(lab) == {"consumer-1": [0, 2], "consumer-2": [1, 3]}
    strategies = {n: c.allocate_message_queue_strategy.get_name() for n, c in lab.consumers.items()}
    assert strategies == {"consumer-1": "AVG_BY_CIRCLE", "consumer-2": "AVG_BY_CIRCLE"}


def test_kill_consumer(lab, panel):
    """Killing consumer-2: the broker notifies consumer-1, which rebalances and takes all 4 queues."""
    send(panel, 3)
    panel.buttons["add_consumer"].click()
    panel.buttons["add_consumer"].click()
    panel.messages.clear()
    panel.inputs["consumer"].value = "consumer-2"
    panel.buttons["kill_consumer"].click()
    assert panel.messages[0].endswith(" kill consumer-2")
    assert "Lab step kill_consumer: kill consumer-2" in said(panel)
    assert "NOTIFY_CONSUMER_IDS_CHANGED to 1 consumer(s) of CG" in said(panel)
    assert queues_of(lab) == {"consumer-1": [0, 1, 2, 3]}
    assert list(panel.inputs["consumer"].options) == ["consumer-1"]
    assert "<td>consumer-2</td>" not in panel.inspector.value


def test_kill_consumer_persist_first(lab, panel):
    """ "persist first": consumer-2 commits queues 2 and 3 (oneway) before its connections close."""
    send(panel, 3)
    panel.buttons["add_consumer"].click()
    panel.buttons["add_consumer"].click()
    panel.inputs["persist_first"].value = True
    panel.messages.clear()
    panel.buttons["kill_consumer"].click()
    t = int(panel.messages[0].split()[1][2:])
    assert panel.messages[:3] == [
        f"▶ t={t} kill consumer-2 (persist first)",
        f"  t={t} consumer-2 RemoteBrokerOffsetStore.persistAll step persist: commit 2 offset(s) "
        "of CG (oneway)",
        f"  t={t} sim Lab step kill_consumer: kill consumer-2 right after it persisted its offsets",
    ]
    commits = [m for m in panel.messages if "updateConsumerOffset" in m]
    assert commits[:2] == [
        f"  t={t + 1} broker-a ConsumerManageProcessor.updateConsumerOffset step commit: offset of "
        f"TopicTest@CG queue {q} := 1"
        for q in (2, 3)
    ]


def test_remove_consumer(lab, panel):
    """A clean shutdown unregisters consumer-1; consumer-2 takes all 4 queues."""
    send(panel, 3)
    panel.buttons["add_consumer"].click()
    panel.buttons["add_consumer"].click()
    panel.inputs["consumer"].value = "consumer-1"
    panel.buttons["remove_consumer"].click()
    assert queues_of(lab) == {"consumer-2": [0, 1, 2, 3]}
    assert list(panel.inputs["consumer"].options) == ["consumer-2"]


def test_consumer_buttons_without_consumer(lab, panel):
    """remove / kill / rebalance / persist with no consumer: a message, nothing changes."""
    before = snapshot(lab)
    for key in ("remove_consumer", "kill_consumer", "rebalance"):
        panel.buttons[key].click()
    panel.buttons["persist_offsets"].click()
    assert panel.messages == ["⚠ no running consumer chosen: add a consumer first"] * 3 + [
        "⚠ no running consumer: nothing to persist"
    ]
    assert snapshot(lab) == before


def test_rebalance(lab, panel):
    """RebalanceService wakes at once (mechanisms.md "Send" step 26) and keeps the same allocation."""
    send(panel, 3)
    panel.buttons["add_consumer"].click()
    panel.buttons["add_consumer"].click()
    panel.inputs["consumer"].value = "consumer-1"
    panel.messages.clear()
    t = lab.now
    panel.buttons["rebalance"].click()
    assert panel.messages[0] == f"▶ t={t} rebalance consumer-1"
    assert f"  t={t} consumer-1 RebalanceService.run step 26: rebalance round 4: ask every " \
           "consumer of this client to rebalance" in panel.messages  # fmt: skip
    assert queues_of(lab) == {"consumer-1": [0, 1], "consumer-2": [2, 3]}


def test_persist_offsets(lab, panel):
    """persist offsets → UPDATE_CONSUMER_OFFSET for all 5 queues (pulls had committed only 1–3)."""
    send(panel, 3)
    panel.buttons["add_consumer"].click()
    cols = ["group", "topic", "queue_id", "offset", "lag"]
    assert lab.consumer_offsets()[cols].values.tolist() == [
        ["CG", "TopicTest", 1, 1, 0],
        ["CG", "TopicTest", 2, 1, 0],
        ["CG", "TopicTest", 3, 1, 0],
    ]  # committed by the pulls' commitOffset flag (mechanisms.md "Pull processing" step 11)
    panel.messages.clear()
    panel.buttons["persist_offsets"].click()
    assert lab.consumer_offsets()[cols].values.tolist() == [
        ["CG", "%RETRY%CG", 0, 0, 0],
        ["CG", "TopicTest", 0, 0, 0],
        ["CG", "TopicTest", 1, 1, 0],
        ["CG", "TopicTest", 2, 1, 0],
        ["CG", "TopicTest", 3, 1, 0],
    ]
    assert panel.messages[0].endswith(" persist offsets of consumer-1")
    assert "RemoteBrokerOffsetStore.persistAll step persist: commit 5 offset(s) of CG (oneway)" in (
        said(panel)
    )
    assert "<b>consumer offsets (CG)</b>" in panel.inspector.value
    assert "<td>CG</td><td>%RETRY%CG</td><td>0</td><td>0</td><td>0</td><td>0</td>" in (
        panel.inspector.value
    )


# -- time ---------------------------------------------------------------------------------------
def test_advance(lab, panel):
    """advance 100 ms moves the virtual clock by exactly 100."""
    t = lab.now
    panel.inputs["advance_ms"].value = "100"
    panel.buttons["advance"].click()
    assert lab.now == t + 100
    assert panel.messages[0] == f"▶ t={t} advance 100 ms"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "⚠ ms must be a whole number, got 'abc'"),
        ("", "⚠ ms must be a whole number, got ''"),
        ("-5", "⚠ ms must be from 0 to 3600000, got -5"),
        ("3600001", "⚠ ms must be from 0 to 3600000, got 3600001"),
    ],
)
def test_advance_bad_input(lab, panel, value, message):
    """Non-numeric or negative ms: a message, time stands still."""
    before = snapshot(lab)
    panel.inputs["advance_ms"].value = value
    panel.buttons["advance"].click()
    assert panel.messages == [message]
    assert snapshot(lab) == before


def test_advance_to_next_timer(lab, panel):
    """ "to next timer" jumps to the first pending timer's due time."""
    t, nxt = lab.now, lab.next_timers(1)[0]
    panel.buttons["next_timer"].click()
    assert lab.now == nxt.due_ms
    assert panel.messages[0] == (
        f"▶ t={t} advance to the next timer: {nxt.name} ({nxt.node}) at t={nxt.due_ms}"
    )


# -- toggles ------------------------------------------------------------------------------------
def test_toggle_long_polling_off(lab, panel):
    """Long polling off: park 1 000 ms (shortPollingTimeMills, §8.1); the armed 5 000 ms wait answers."""
    send(panel, 3)
    panel.inputs["long_polling"].value = False
    assert [b.broker_config.long_polling_enable for b in lab.brokers] == [False]
    assert panel.messages[-1] == (
        "  → new pulls park for shortPollingTimeMills; the hold service checks every 1000 ms "
        "from its next turn (t=5000)"
    )
    panel.inputs["queue_id"].value = "0"
    panel.buttons["pull"].click()
    assert lab.held_pulls()[["timeout_millis", "deadline"]].values.tolist() == [[1000, 1010]]
    assert "pull held: TopicTest@0 offset 0, suspended 1000 ms" in said(panel)
    panel.buttons["long_poll_timeout"].click()
    assert lab.held_pulls().empty
    assert "answered at t=5001: PULL_NOT_FOUND (19)" in panel.messages[-1]
    assert lab.brokers[0].pull_request_hold_service.check_interval() == 1000


def test_toggle_long_polling_back_on(lab, panel):
    """Turning long polling back on restores the 15 000 ms suspend (checkbox follows the broker)."""
    panel.inputs["long_polling"].value = False
    panel.inputs["long_polling"].value = True
    assert lab.brokers[0].broker_config.long_polling_enable is True
    send(panel, 3)
    panel.inputs["queue_id"].value = "0"
    panel.buttons["pull"].click()
    assert lab.held_pulls()["timeout_millis"].tolist() == [15000]


def test_toggle_auto_create_topic_off(lab, panel):
    """autoCreateTopicEnable=false: a send to a new topic fails (TOPIC_NOT_EXIST (17) three times), docs/reference.md §10.6."""
    panel.inputs["auto_create_topic"].value = False
    assert [b.broker_config.auto_create_topic_enable for b in lab.brokers] == [False]
    send(panel, 1, topic="NewTopic")
    assert lab.topics().empty
    assert panel.messages[-2] == "  → sent 0/1"
    # MQClientException(info, e).setResponseCode(17): Java's text has no "CODE: 17" prefix
    assert panel.messages[-1].startswith("  → send failed: Send [3] times, still failed, cost [")


def test_listener_fails_toggle(lab, panel):
    """ "listener fails": the panel's consumers answer RECONSUME_LATER (mechanisms.md "Rebalancing"), then succeed again."""
    send(panel, 1)
    panel.inputs["listener"].value = "fails"
    assert panel.listener.fails is True
    assert panel.messages[-1] == (
        f"▶ t={lab.now} every consumer's listener now returns RECONSUME_LATER "
        "(no consumer yet, and consumers added next)"
    )
    panel.buttons["add_consumer"].click()
    d = lab.deliveries()
    assert d[["consumer", "topic", "status"]].values.tolist() == [
        ["consumer-1", "TopicTest", "RECONSUME_LATER"]
    ]
    panel.inputs["listener"].value = "succeeds"
    assert panel.listener.fails is False
    send(panel, 1)
    assert lab.deliveries()["status"].tolist() == ["RECONSUME_LATER", "CONSUME_SUCCESS"]


def test_listener_governs_the_lessons_own_consumer():
    """Lesson 07's scenario: consumer-1 was started with its own listener (Flaky(3), which fails
    only tag Flaky). listener "fails", send 1 (tag TagA), advance 10 000 ms twice: the first
    delivery is sent back (CONSUMER_SEND_MSG_BACK, delay level 3 = 10 s), its retry comes from
    %RETRY%CG and is sent back again at level 4; every one of those lines is in the log."""
    from mqlab.lab.lessons import lesson07 as L

    with Lab(seed=1) as lab:
        lab.send("TopicTest", "warm-up", tags="Warmup")
        flaky = L.Flaky(3)
        lab.push_consumer("CG", "TopicTest", listener=flaky)
        lab.advance(1_000)
        p = control_panel(lab, sections=["send", "consumers", "time", "toggles", "log"])
        p.inputs["listener"].value = "fails"
        assert p.messages[-1].endswith("now returns RECONSUME_LATER (consumer-1, and consumers "
                                       "added next)")  # fmt: skip
        mark = len(p.messages)
        send(p, 1)
        p.inputs["advance_ms"].value = "10000"
        p.buttons["advance"].click()
        p.buttons["advance"].click()
        d = lab.deliveries()
        d = d[d["t_ms"] > 1_000]
        assert d[["queue", "reconsume_times", "status"]].values.tolist() == [
            ["TopicTest", 0, "RECONSUME_LATER"],
            ["%RETRY%CG", 1, "RECONSUME_LATER"],
        ]
        log = "\n".join(p.messages[mark:])
        assert log.count("→ RECONSUME_LATER") == 2  # ConsumeRequest.run, never folded
        assert "send back message @" in log and "with delay level 3" in log
        assert "with delay level 4" in log
        assert (
            "ScheduleMessageService.DeliverDelayedMessageTimerTask step 3: level 3: delivered 1"
            in log
        )
        assert flaky.calls == 1  # the warm-up only: the panel answered the rest
        p.inputs["listener"].value = "own"
        assert p.listener.mode == "own"
        send(p, 1)
        assert lab.deliveries()["status"].tolist()[-1] == "CONSUME_SUCCESS"
        assert flaky.calls == 2


def test_panel_listener():
    """PanelListener answers by its mode and counts calls."""
    listener = PanelListener()
    assert listener.mode == "own" and listener([], None).name == "CONSUME_SUCCESS"
    listener.fails = True
    assert listener([], None).name == "RECONSUME_LATER"
    assert listener.calls == 2


def test_number_inputs_take_ints(lab, panel):
    """Numeric inputs accept an int from notebook code (stored as text, checked on click)."""
    panel.inputs["count"].value = 2
    panel.inputs["advance_ms"].value = 50
    assert (panel.inputs["count"].value, panel.inputs["advance_ms"].value) == ("2", "50")
    panel.buttons["send"].click()
    t = lab.now
    panel.buttons["advance"].click()
    assert (sum(max_offsets(lab)), lab.now) == (2, t + 50)


def test_methods_are_the_button_callbacks(lab, panel):
    """Each action is a plain method: calling it equals clicking (send(), advance(), ...)."""
    panel.inputs["count"].value = "2"
    panel.send()
    assert sum(max_offsets(lab)) == 2
    panel.set_long_polling(False)
    assert panel.inputs["long_polling"].value is False
    panel.set_strategy("CONSISTENT_HASH")
    assert panel.inputs["strategy"].value == "CONSISTENT_HASH"
    panel.set_strategy("NOPE")
    assert panel.messages[-1] == (
        "⚠ strategy must be one of ['AVG', 'AVG_BY_CIRCLE', 'CONSISTENT_HASH'], got 'NOPE'"
    )
    panel.set_listener_fails(True)
    assert panel.inputs["listener"].value == "fails" and panel.listener.fails


# -- views --------------------------------------------------------------------------------------
def test_static_plot_mode(lab, monkeypatch):
    """MQLAB_PLOT_MODE=static: the timeline is an Output re-rendered with a plotly figure."""
    monkeypatch.setenv("MQLAB_PLOT_MODE", "static")
    p = control_panel(lab)
    assert p.timeline.mode == "static" and isinstance(p.timeline.widget, widgets.Output)
    send(p, 1)
    out = p.timeline.widget.outputs
    assert len(out) == 1
    fig = out[0]["data"]["application/vnd.plotly.v1+json"]
    assert fig["layout"]["title"]["text"].startswith("Node by node, t=")
    assert any(tr.get("name") == "step event" for tr in fig["data"])


def test_live_timeline_window(lab, panel):
    """The live timeline shows only the last window_ms of the trace."""
    send(panel, 1)
    panel.inputs["advance_ms"].value = "20000"
    panel.buttons["advance"].click()
    fw = panel.timeline.figure
    # the click covered 20 000 ms: the axis shows the whole 5 000 ms window, padded 4 %
    assert tuple(fw.layout.xaxis.range) == (lab.now - 5000 - 200, lab.now + 200)
    xs = [x for tr in fw.data if tr.type == "scatter" for x in tr.x]
    assert xs and min(xs) >= lab.now - 5000


def test_live_timeline_focuses_on_the_last_click(lab, panel):
    """A send's events span a few ms: the axis shows that click (padded 2 ms), not the whole
    window, which would squeeze them against its right edge (issue 13)."""
    panel.inputs["advance_ms"].value = "3000"
    panel.buttons["advance"].click()
    t0 = lab.now
    send(panel, 1)
    fw = panel.timeline.figure
    assert tuple(fw.layout.xaxis.range) == (t0 - 2, lab.now + 2)
    drawn = lab.now - max(0, lab.now - 5000)
    assert t0 > lab.now - drawn  # the axis shows part of the window: zooming out shows more
    assert fw.layout.title.text == (
        f"Node by node, t={t0}…{lab.now} (zoom out: the last {drawn} ms are drawn)"
    )


def test_words_folds_repeats_and_summarises():
    """Repeated lines fold to "(×n)"; more than `limit` lines keep the head and tail."""
    evs = [TraceEvent("r", 1, i, "n", "C", "1", Kind.STEP, {"text": "same"}) for i in range(3)]
    assert words(evs) == ["t=1 n C step 1: same (×3)"]
    many = [TraceEvent("r", i, i, "n", f"C{i % 2}", "", Kind.STEP, {"text": f"e{i}"})
            for i in range(30)]  # fmt: skip
    out = words(many, limit=6)
    assert out == ["t=0 n C0: e0", "t=1 n C1: e1", "t=2 n C0: e2",
                   "… 25 more lines (C1 ×13, C0 ×12); see lab.events()",
                   "t=28 n C0: e28", "t=29 n C1: e29"]  # fmt: skip


def test_words_never_folds_key_lines():
    """Consume results, send-backs and retries stay in the log between folded runs."""
    many = [TraceEvent("r", i, i, "n", f"C{i % 2}", "", Kind.STEP, {"text": f"e{i}"})
            for i in range(30)]  # fmt: skip
    many[12] = TraceEvent("r", 12, 12, "c", "DefaultMQPushConsumerImpl.sendMessageBack", "4-8",
                          Kind.STEP, {"text": "send back"})  # fmt: skip
    out = words(many, limit=6)
    assert out == ["t=0 n C0: e0", "t=1 n C1: e1", "t=2 n C0: e2",
                   "… 9 more lines (C1 ×5, C0 ×4); see lab.events()",
                   "t=12 c DefaultMQPushConsumerImpl.sendMessageBack step 4-8: send back",
                   "… 15 more lines (C1 ×8, C0 ×7); see lab.events()",
                   "t=28 n C0: e28", "t=29 n C1: e29"]  # fmt: skip


def test_trace_off_lab():
    """A lab with trace_level="off" still works: the panel says what it did, without events."""
    with Lab(seed=1, trace_level="off") as lab:
        p = control_panel(lab)
        send(p, 2)
        assert p.messages == [
            "▶ t=2 send 2 to TopicTest (tags TagA)",
            "  → sent 2/2: SEND_OK broker-a queue 1 offset 0, SEND_OK broker-a queue 2 offset 0",
        ]


def test_fork_replays_panel_clicks(lab, panel):
    """Panel clicks go through the Lab's journal: a fork rebuilds the same queues."""
    send(panel, 3)
    panel.inputs["queue_id"].value = "0"
    panel.buttons["pull"].click()
    other = lab.fork()
    assert max_offsets(other) == max_offsets(lab) == [0, 1, 1, 1]
    assert other.held_pulls()["deadline"].tolist() == [15010]
    other.close()


def test_timeline_focus_without_a_click_is_the_newest_burst():
    """Before any click, the axis shows the newest burst of events (after the last gap longer
    than a fifth of the window), not both ends of the window (issue 13)."""
    from mqlab.lab.panel_views import TimelineView

    evs = [TraceEvent("r", t, i, "n", "C", "", Kind.STEP, {"text": "e"})
           for i, t in enumerate([7, 10, 30, 855, 860, 871])]  # fmt: skip
    assert TimelineView.focus_range(evs, 0, 871, None) == (855, 871, 853.0, 873.0)
    assert TimelineView.focus_range(evs, 0, 871, 860) == (860, 871, 858.0, 873.0)
    assert TimelineView.focus_range([], 0, 100, None) == (0, 100, -4.0, 104.0)


def test_words_keys_name_the_components_a_lesson_follows():
    """``keys`` replaces the default key components: lesson 06 keeps its pull loop's lines
    and folds the consume results."""
    many = [TraceEvent("r", i, i, "n", f"C{i % 2}", "", Kind.STEP, {"text": f"e{i}"})
            for i in range(30)]  # fmt: skip
    many[10] = TraceEvent("r", 10, 10, "c", "DefaultMQPushConsumerImpl.pullMessage", "2.6",
                          Kind.STEP, {"text": "FOUND 32"})  # fmt: skip
    many[12] = TraceEvent("r", 12, 12, "c", "DefaultMQPushConsumerImpl.sendMessageBack", "4-8",
                          Kind.STEP, {"text": "send back"})  # fmt: skip
    out = words(many, limit=6, keys=("DefaultMQPushConsumerImpl.pullMessage",))
    assert out == ["t=0 n C0: e0", "t=1 n C1: e1", "t=2 n C0: e2",
                   "… 7 more lines (C1 ×4, C0 ×3); see lab.events()",
                   "t=10 c DefaultMQPushConsumerImpl.pullMessage step 2.6: FOUND 32",
                   "… 17 more lines (C1 ×9, C0 ×7, DefaultMQPushConsumerImpl.sendMessageBack ×1);"
                   " see lab.events()",
                   "t=28 n C0: e28", "t=29 n C1: e29"]  # fmt: skip


def test_add_consumer_with_a_slow_listener(lab, panel):
    """ "consume ms" 500: each listener call of the added consumer takes 500 ms of virtual time
    (DefaultMQPushConsumer.consume_time_ms); a later consumer with 0 is fast again."""
    send(panel, 1)
    t0 = lab.now
    panel.inputs["consume_ms"].value = "500"
    panel.buttons["add_consumer"].click()
    assert "add consumer to CG on TopicTest ('*', AVG, 500 ms per listener call)" in said(panel)
    assert lab.consumers["consumer-1"].consume_time_ms == 500
    assert "offsets [0] (reconsumeTimes [0]) → CONSUME_SUCCESS, takes 500 ms" in said(panel)
    assert lab.now >= t0 + 500  # the click ran until the listener call ended
    panel.inputs["consume_ms"].value = "0"
    panel.buttons["add_consumer"].click()
    assert lab.consumers["consumer-2"].consume_time_ms == 0


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "⚠ consume ms must be from 0 to 3600000, got -1"),
     ("slow", "⚠ consume ms must be a whole number, got 'slow'")],
)  # fmt: skip
def test_add_consumer_bad_consume_ms(lab, panel, value, message):
    before = snapshot(lab)
    panel.inputs["consume_ms"].value = value
    panel.buttons["add_consumer"].click()
    assert panel.messages[-1] == message
    assert snapshot(lab) == before and lab.consumers == {}


def test_inspector_views(lab):
    """``views`` picks the inspector's tables; lesson 02's commit log and consume queues show
    the newest entries first, with the unit pointing at its entry."""
    p = control_panel(lab, sections=["send", "inspect", "log"],
                      views=["queues", "commit_log", "consume_queue"])  # fmt: skip
    html = p.inspector.value
    assert "commit log (broker-a, newest first)" in html and "held pulls" not in html
    send(p, 2)
    log = lab.commit_log().sort_values("commit_log_offset")
    last = log.iloc[-1]
    html = p.inspector.value
    top = html.split("commit log (broker-a, newest first)")[1]
    assert top.index(f"<td>{last['commit_log_offset']}</td>") < top.index(
        f"<td>{log.iloc[0]['commit_log_offset']}</td>"
    )
    assert "<td>msg-1</td>" in html and "<td>2598919</td>" in html  # TagA's hash code
    with pytest.raises(ValueError, match=r"unknown inspector views \['commitlog'\]"):
        control_panel(lab, views=["commitlog"])


def test_live_timeline_lanes_keep_their_order():
    """Lesson 00's clicks: the lanes keep the trace's first-seen order (namesrv, broker-a,
    lab-producer, consumer-1, raw-client, consumer-2) on every redraw; the y axis holds exactly
    the lanes, so no phantom lane is drawn (issue 20, defect 11)."""
    from mqlab.lab.lessons import lesson00 as L

    order = ["namesrv", "broker-a", "lab-producer", "consumer-1", "raw-client", "consumer-2"]
    with L.tour_lab(1) as lab:
        panel = control_panel(lab)
        fw = panel.timeline.figure
        seen = [tuple(fw.layout.yaxis.categoryarray)]
        panel.inputs["count"].value = "5"
        panel.inputs["queue_id"].value = "0"
        for button in ("send", "pull", "next_timer", "next_timer", "long_poll_timeout",
                       "add_consumer", "next_timer", "send"):  # fmt: skip
            panel.buttons[button].click()
            lanes = list(fw.layout.yaxis.categoryarray)[::-1]  # top to bottom
            seen.append(tuple(lanes[::-1]))
            assert lanes == [n for n in order if n in lanes], lanes
            assert tuple(fw.layout.yaxis.range) == (-0.5, len(lanes) - 0.5)
            drawn = {y for tr in fw.data for y in (tr.y or ())}
            assert drawn <= set(lanes)
        assert seen[0] == ("consumer-1", "lab-producer", "broker-a", "namesrv")
        assert seen[2] == ("raw-client", "consumer-1", "lab-producer", "broker-a", "namesrv")
        assert seen[6][0] == "consumer-2"


def test_log_keeps_400_lines_and_says_when_it_cut(lab, panel):
    """The log shows the newest 400 lines; when it cuts, its first line says how many."""
    import html

    from mqlab.lab.widgets import LOG_LINES

    assert LOG_LINES == 400
    panel.messages[:] = [f"line {i}" for i in range(400)]
    panel._render_log()
    text = html.unescape(panel.log.value)
    assert "line 0\n" in text and "not shown" not in text
    panel.messages.append("line 400")
    panel._render_log()
    text = html.unescape(panel.log.value)
    assert "… 1 earlier lines not shown (panel.messages keeps them)\nline 1\n" in text
    assert "line 0\n" not in text and text.count("\n") == 400


def test_pull_inputs_have_distinct_labels_and_a_gap(panel):
    """Not "☑ suspend suspend ms": the checkbox (SUSPEND flag) and the field
    (suspendTimeoutMillis) read "suspend" and "timeout ms", with a gap (issue 20, defect 13)."""
    i = panel.inputs
    assert (i["suspend"].description, i["timeout_ms"].description) == ("suspend", "timeout ms")
    assert i["suspend"].layout.margin == "0 14px 0 0"


def test_inspector_tables_are_as_tall_as_their_rows(lab, panel):
    """An empty table is one short box, not a fixed 209 px block (issue 20, defect 13)."""
    from mqlab.lab.panel_views import inspector_html

    text = inspector_html(lab, "TopicTest", "CG")
    assert text.count('class="mqlab-table"') == 5
    assert text.count("max-height:209px;overflow:auto") == 5
    assert ";height:" not in text


def test_timeline_new_trace_forgets_the_last_trace_keeps_the_lanes():
    """The outcome explorer draws one replay after another in one view: after
    ``new_trace`` the parked-pull bars come from the new trace only (not the old one's, at
    the same indices), and the lanes keep their rows."""
    from mqlab.lab.panel_views import TimelineView

    view = TimelineView(window_ms=50, mode="static")  # a window that leaves t=0 behind
    with Lab(seed=1) as first, Lab(seed=1) as second:
        panel = control_panel(first)
        send(panel, 3)
        panel.inputs["queue_id"].value = "0"
        panel.buttons["pull"].click()  # parks (test_let_long_poll_time_out): a hold event
        _, held, _, _ = view.window(first)
        mine = {id(e) for e in first.trace.events}
        assert any(e.component.startswith("PullRequestHoldService") for e in held)
        assert all(id(e) in mine for e in held)
        lanes = list(view._lane_order)
        second.advance(1000)
        view.new_trace()
        _, held, _, _ = view.window(second)
        theirs = {id(e) for e in second.trace.events}
        assert all(id(e) in theirs for e in held)  # the second trace's own, if any
        assert not any(e.component.startswith("PullRequestHoldService") for e in held)
        assert list(view._lane_order)[: len(lanes)] == lanes


@pytest.mark.parametrize(
    ("sections", "said"),
    [
        (None, "pull once on an empty queue first"),
        (["consumers", "time", "log"], "add a consumer first: its pulls park while its queues "
                                       "are empty"),
        (["time", "log"], "no consumer pulls in this lab, so there is nothing to time out"),
    ],
)  # fmt: skip
def test_long_poll_timeout_with_nothing_parked_points_at_what_the_panel_has(sections, said):
    """Issue 28: a panel without *pull once* (lesson 10's) still said "pull once on an empty
    queue first"."""
    with Lab(seed=1) as lab:
        p = control_panel(lab, sections=sections, plot_mode="static")
        p.let_long_poll_time_out()
        assert p.messages[-1] == f"⚠ no pull is parked: {said}"


def test_inspector_shows_long_names_whole():
    """Issue 28: a group or topic name longer than its column was cut ("CID_RMQ…")."""
    with Lab(seed=1) as lab:
        lab.send("A_RATHER_LONG_TOPIC_NAME_X", b"x")
        lab.run_until_idle()
        p = control_panel(lab, topic="A_RATHER_LONG_TOPIC_NAME_X", plot_mode="static",
                          group="A_LONG_CONSUMER_GROUP_NAME")  # fmt: skip
        assert "queues of A_RATHER_LONG_TOPIC_NAME_X" in p.inspector.value
        lab.request("broker-a", "UPDATE_CONSUMER_OFFSET", {
            "consumerGroup": "A_LONG_CONSUMER_GROUP_NAME", "topic": "A_RATHER_LONG_TOPIC_NAME_X",
            "queueId": 0, "commitOffset": 1})  # fmt: skip
        lab.run_until_idle()
        p.refresh()
        html = p.inspector.value
        assert "<td>A_LONG_CONSUMER_GROUP_NAME</td><td>A_RATHER_LONG_TOPIC_NAME_X</td>" in html
        assert 'title="A_LONG' not in html


def test_timeline_focus_leaves_no_event_on_its_left_edge():
    """Walk of issue 28 (lesson 00, the panel after a reload): the axis began at t0 - 2 ms,
    where an earlier event of the window lay, and plotly drew that marker whole on the axis
    edge, over the lane's name ("broker-a●"). An event within 1 % of the span of the left
    edge is now left out whole: the edge moves just past it."""
    from mqlab.lab.panel_views import TimelineView

    evs = [TraceEvent("r", t, i, "n", "C", "", Kind.STEP, {"text": "e"})
           for i, t in enumerate([20, 875, 876, 877, 880])]  # fmt: skip
    t0, t1, x0, x1 = TimelineView.focus_range(evs, 0, 880, 877)
    assert (t0, t1, x1) == (877, 880, 882.0)
    band = 0.01 * (x1 - x0)
    assert 875 < x0 < 876 and all(abs(e.t_ms - x0) > band for e in evs), x0
    assert TimelineView.focus_range(evs, 0, 880, 880)[2] == 878.0  # no event at 878: as was


def test_live_timeline_is_shown_whole_on_every_change(lab, panel):
    """Issue 28 ("empty live plots under load"): the live timeline was a FigureWidget, whose
    edits reach the browser as deltas; on a loaded machine lesson 00's panel drew an empty
    plot after Run All ('Click to enter Plot title', 0 traces), and after a page reload new
    clicks were no longer drawn (3 of 3 browser runs at load 8-10, main as well). Now the
    figure is edited in place in the kernel and put whole in an Output widget on each change:
    a browser view, new or reloaded, draws the whole current figure."""
    assert isinstance(panel.timeline.widget, widgets.Output)

    def shown() -> dict:
        (out,) = panel.timeline.widget.outputs
        return out["data"]["application/vnd.plotly.v1+json"]

    first = shown()
    assert first["layout"]["title"]["text"] == panel.timeline.figure.layout.title.text
    send(panel, 1)
    now = shown()
    assert now["layout"]["title"]["text"] == panel.timeline.figure.layout.title.text
    assert now["layout"]["title"]["text"] != first["layout"]["title"]["text"]
    steps = next(t for t in now["data"] if t["name"] == "step event")
    live = next(t for t in panel.timeline.figure.data if t.name == "step event")
    before = next(t for t in first["data"] if t["name"] == "step event")
    assert list(steps["x"]) == list(live.x) and len(steps["x"]) > len(before["x"])
