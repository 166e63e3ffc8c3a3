"""Lesson 10 (transactions): the walk-through as the prose tells it, every helper, the panel's
crash / step controls, and exact exercise answers.

Mirrors ``TransactionalMessageServiceImpl#check``, ``EndTransactionProcessor#processRequest``
and ``DefaultMQProducerImpl#sendMessageInTransaction`` (rocketmq-all-4.9.3) through the lesson's
helpers; the numbers are the ones lessons/10_transactions.md prints.
"""

from __future__ import annotations

import re

import pytest

from mqlab.lab import figures
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson10 as L

SEEDS = [1, 12345]


def _section1(seed: int):
    lab = L.tx_lab(seed, interval=1000)
    lab.push_consumer("CG", L.TOPIC)
    listener = L.TxListener(local="UNKNOW", check="COMMIT_MESSAGE")
    producer = L.producer(lab, listener)
    lab.advance(1000 - lab.now)
    result = L.send_in_transaction(lab, producer)
    return lab, listener, result


@pytest.mark.parametrize("seed", SEEDS)
def test_half_message_is_on_the_half_topic_and_invisible(seed):
    """Section 1: SEND_OK for an Orders queue, but only the half topic holds it."""
    lab, listener, result = _section1(seed)
    assert (result.send_status.name, result.local_transaction_state.name) == ("SEND_OK", "UNKNOW")
    q = lab.queues().query("topic in ['Orders', 'RMQ_SYS_TRANS_HALF_TOPIC']")
    assert dict(zip(q.topic + "/" + q.queue_id.astype(str), q.max_offset, strict=True)) == {
        "Orders/0": 0, "Orders/1": 0, "Orders/2": 0, "Orders/3": 0,
        "RMQ_SYS_TRANS_HALF_TOPIC/0": 1,
    }  # fmt: skip
    h = L.half_messages(lab)
    assert list(h.columns) == ["queue_offset", "born_ms", "t_ms", "real_topic", "real_qid",
                               "check_times", "uniq_key", "body", "done"]  # fmt: skip
    row = h.iloc[0]
    assert (row.queue_offset, row.born_ms, row.t_ms, row.real_topic, row.check_times, row.body,
            row.done) == (0, 1002, 1003, "Orders", 0, "order-1", False)  # fmt: skip
    assert row.real_qid == result.message_queue.queue_id
    assert row.uniq_key == result.msg_id
    assert len(lab.deliveries()) == 0 and L.op_messages(lab).empty
    assert L.half_count(lab) == 1


@pytest.mark.parametrize("seed", SEEDS)
def test_commit_and_rollback_write_op_messages(seed):
    """Section 2: both half messages stored; only the commit reaches Orders (sys flag 8);
    each end writes an op message tag d whose body is the half offset, 2 ms after the half."""
    ends = L.tx_lab(seed, interval=1000)
    committer = L.producer(ends, L.TxListener(local="COMMIT_MESSAGE"))
    rollbacker = L.producer(ends, L.TxListener(local="ROLLBACK_MESSAGE"), group="TXG-RB")
    assert L.send_in_transaction(ends, committer, "order-commit").local_transaction_state.name == (
        "COMMIT_MESSAGE"
    )
    L.send_in_transaction(ends, rollbacker, "order-rollback")
    h = L.half_messages(ends)
    assert h[["queue_offset", "t_ms", "body", "done"]].values.tolist() == [
        [0, 9, "order-commit", True], [1, 14, "order-rollback", True],
    ]  # fmt: skip
    real = L.real_messages(ends)
    assert real[["queue_offset", "t_ms", "sys_flag", "body"]].values.tolist() == [
        [0, 11, 8, "order-commit"]
    ]
    assert L.op_messages(ends).values.tolist() == [[0, 11, "d", 0], [1, 16, "d", 1]]


@pytest.mark.parametrize("seed", SEEDS)
def test_unknow_is_checked_back_at_8000_and_committed(seed):
    """Section 3: born 1002 → at 7000 only 5998 ms old; the 8000 round writes copy 1 (check
    times 1), asks at 8001, commit at 8002, delivered at 8003; CID_RMQ_SYS_TRANS at 2 / 1."""
    lab, listener, _ = _section1(seed)
    lab.advance(8000)
    assert listener.checked().values.tolist() == [[8001, 1, "order-1", "COMMIT_MESSAGE"]]
    assert L.real_messages(lab)[["t_ms", "sys_flag", "body"]].values.tolist() == [
        [8002, 8, "order-1"]
    ]
    assert L.op_messages(lab).values.tolist() == [[0, 8002, "d", 1]]
    h = L.half_messages(lab)
    assert h[["queue_offset", "t_ms", "check_times", "done"]].values.tolist() == [
        [0, 1003, 0, False], [1, 8000, 1, True],
    ]  # fmt: skip
    d = lab.deliveries()
    assert (list(d.t_ms), list(d.topic)) == ([8003], ["Orders"])
    assert L.system_offsets(lab) == {"half": 2, "op": 1}
    ev = lab.events(component="TransactionalMessageServiceImpl.check")
    young = ev[ev.step == "8"]
    assert list(young.t_ms) == [2000, 3000, 4000, 5000, 6000, 7000]
    assert "is 5998 ms old < 6000 ms" in young.text.iloc[-1]
    fig = figures.sequence_timeline(lab, nodes=["producer-1", "broker-a"], start_ms=995,
                                    end_ms=8010, title="One transaction")  # fmt: skip
    points = sum(len(t.x) for t in fig.data if t.x is not None)
    assert points > 10


@pytest.mark.parametrize("seed", SEEDS)
def test_always_unknow_is_checked_three_times_then_discarded(seed):
    """Section 4: transactionCheckMax 3: checks at 8001/9001/10001 (times 1, 2, 3), the 11000
    round writes it to TRANS_CHECK_MAX_TIME_TOPIC; Orders stays empty."""
    never = L.tx_lab(seed, interval=1000, check_max=3)
    unsure = L.TxListener(local="UNKNOW", check="UNKNOW")
    L.producer(never, unsure)
    never.advance(1000 - never.now)
    L.send_in_transaction(never, never.producers["producer-1"])
    never.advance(12_000)
    assert unsure.checked()[["t_ms", "check_times"]].values.tolist() == [
        [8001, 1], [9001, 2], [10001, 3],
    ]  # fmt: skip
    assert L.discarded(never).values.tolist() == [[11000, "Orders", 3, "order-1"]]
    assert L.real_messages(never).empty


@pytest.mark.parametrize("seed", SEEDS)
def test_crash_before_commit_then_a_new_producer_commits(seed):
    """Section 5: no END_TRANSACTION; 'channel is null' at 7000/8000/9000 (counts 1..3); a
    producer started at 9000 heartbeats at 10000 (arrives 10001), is asked at 11001 with
    check times 5, and its COMMIT reaches Orders at 11002."""
    crash = L.tx_lab(seed, interval=1000)
    node = L.crash_before_commit(crash, L.producer(crash, L.TxListener()))
    assert node == "producer-1" and not crash.driver.node(node).running
    ends = crash.events(component="EndTransactionProcessor.processRequest")
    assert ends.empty  # nothing ended the transaction
    crash.advance(9000 - crash.now)
    ev = crash.events(component="AbstractTransactionalMessageCheckListener.sendCheckMessage")
    assert list(ev.t_ms) == [7000, 8000, 9000]
    assert set(ev.text) == {"check transaction failed, channel is null. groupId=TXG"}
    h = L.half_messages(crash)
    assert h[["queue_offset", "t_ms", "check_times", "done"]].values.tolist() == [
        [0, 9, 0, False], [1, 7000, 1, False], [2, 8000, 2, False], [3, 9000, 3, False],
    ]  # fmt: skip
    restarted = L.TxListener(local="COMMIT_MESSAGE", check="COMMIT_MESSAGE")
    L.producer(crash, restarted)
    crash.advance(3000)
    assert restarted.checked()[["t_ms", "check_times"]].values.tolist() == [[11001, 5]]
    assert L.real_messages(crash)[["t_ms", "sys_flag"]].values.tolist() == [[11002, 8]]


@pytest.mark.parametrize(
    ("born", "interval", "timeout", "want"),
    [(1002, 1000, 6000, 8000), (1000, 1000, 6000, 7000), (50, 5000, 7000, 10000),
     (0, 1000, 0, 1000)],
)  # fmt: skip
def test_first_check_ms(born, interval, timeout, want):
    """The first round k × interval (k ≥ 1) at which born + timeout has passed."""
    assert L.first_check_ms(born, interval, timeout) == want


def test_tx_listener_refuses_an_unknown_state():
    with pytest.raises(ValueError, match="a state is one of"):
        L.TxListener(local="MAYBE")
    assert L.TxListener(local="unknow").local.name == "UNKNOW"


# -- the panel ---------------------------------------------------------------------------------
def _log(panel) -> str:
    return "\n".join(panel.messages)


def test_panel_crash_and_step_check_service():
    """The panel's buttons' callbacks, in the order the prose suggests: crash before commit,
    step (stored just now), advance 6000, step (no producer), start producer, advance 2000,
    step: the check-back commits it and the op queue shows it."""
    lab = L.tx_lab(1)
    panel = L.transaction_panel(lab)
    assert [b.description for b in (panel.buttons["start_producer"], panel.buttons["send_tx"],
            panel.buttons["crash"], panel.buttons["step_check"])] == [
        "start producer", "send in transaction", "crash before commit", "step check service",
    ]  # fmt: skip
    assert panel.inputs["topic"].value == L.HALF  # the inspector shows the half topic
    panel.buttons["crash"].click()
    assert "⚠ no producer is running: click 'start producer' first" in panel.messages
    panel.inputs["check"].value = "COMMIT_MESSAGE"
    panel.buttons["start_producer"].click()
    panel.buttons["crash"].click()
    assert (
        "  → producer-1 crashed after the half message (offset 0) was stored: no "
        "END_TRANSACTION; the check service will ask another producer of TXG"
    ) in panel.messages
    assert "producer: none running" in panel.queues_view.value
    assert "half queue (RMQ_SYS_TRANS_HALF_TOPIC): 1 message(s)</b>" in panel.queues_view.value
    panel.buttons["step_check"].click()
    assert "half offset 0 stored just now: check it later" in _log(panel)
    assert panel.messages[-1] == ("  → check round: 0 half message(s) due, 0 check-back(s) sent, "
                                  "0 with no producer of the group, 0 discarded")  # fmt: skip
    panel.inputs["advance_ms"].value = "6000"
    panel.buttons["advance"].click()
    panel.buttons["step_check"].click()
    assert panel.messages[-1] == ("  → check round: 1 half message(s) due, 0 check-back(s) sent, "
                                  "1 with no producer of the group, 0 discarded")  # fmt: skip
    panel.buttons["start_producer"].click()
    assert "producer: producer-2" in panel.queues_view.value
    panel.inputs["advance_ms"].value = "2000"
    panel.buttons["advance"].click()
    panel.buttons["step_check"].click()
    assert panel.messages[-1] == ("  → check round: 1 half message(s) due, 1 check-back(s) sent, "
                                  "0 with no producer of the group, 0 discarded")  # fmt: skip
    assert L.op_messages(lab).values.tolist() == [[0, 8013, "d", 2]]
    assert L.real_messages(lab)[["t_ms", "body"]].values.tolist() == [[8013, "order-1"]]
    assert "op queue (RMQ_SYS_TRANS_OP_HALF_TOPIC): 1 message(s)</b>" in panel.queues_view.value
    assert "Orders (what consumers read): 1 message(s)</b>" in panel.queues_view.value
    assert "CID_RMQ_SYS_TRANS at half offset 2, op offset none yet" in panel.queues_view.value


def test_panel_send_in_transaction_commit_and_discard():
    """send in transaction with local COMMIT: on Orders at once; with UNKNOW / UNKNOW and
    transactionCheckMax 1 two steps (after 6 s) check once, then discard."""
    lab = L.tx_lab(1, check_max=1)
    panel = L.transaction_panel(lab)
    panel.start_producer()
    panel.send_in_transaction()
    assert "local transaction COMMIT_MESSAGE" in panel.messages[-1]
    assert len(L.real_messages(lab)) == 1 and len(L.op_messages(lab)) == 1
    panel.inputs["local"].value = panel.inputs["check"].value = "UNKNOW"
    panel.start_producer()
    panel.send_in_transaction()
    lab.advance(6000)
    panel.step_check()
    assert panel.messages[-1] == ("  → check round: 1 half message(s) due, 1 check-back(s) sent, "
                                  "0 with no producer of the group, 0 discarded")  # fmt: skip
    panel.step_check()
    assert panel.messages[-1].endswith(", 1 discarded")
    assert L.discarded(lab)[["real_topic", "check_times", "body"]].values.tolist() == [
        ["Orders", 1, "order-2"]
    ]
    assert "TRANS_CHECK_MAX_TIME_TOPIC: 1 message(s)</b>" in panel.queues_view.value


def test_panel_numbers_transactions_as_the_learner_sees_them():
    """Issue 28: the second transaction was "order-4" when the first one's half message had
    been copied by a check (the number counted half-queue entries, not transactions)."""
    lab = L.tx_lab(1)
    panel = L.transaction_panel(lab)
    panel.inputs["local"].value = "UNKNOW"
    panel.start_producer()
    panel.send_in_transaction()
    lab.advance(7000)
    panel.step_check()  # writes a copy of order-1's half message: 2 entries, 1 transaction
    assert L.half_messages(lab)["body"].tolist() == ["order-1", "order-1"]
    panel.send_in_transaction()
    panel.crash_before_commit()
    sent = [m for m in panel.messages if m.startswith("▶") and "order-" in m]
    assert sent == [
        "▶ t=6 send order-1 to Orders in a transaction",
        "▶ t=7013 send order-2 to Orders in a transaction",
        "▶ t=7016 send order-3 in a transaction, crash before commit",
    ]
    assert L.half_messages(lab)["body"].tolist() == ["order-1", "order-1", "order-2", "order-3"]


def test_panel_shows_only_what_the_lesson_uses():
    """Issue 28: the inspector showed the held pulls, allocation and process queues (always
    empty here), cut CID_RMQ_SYS_TRANS to "CID_RMQ…", and the time row offered "let long poll
    time out", whose refusal sent the learner to a "pull once" this panel does not have."""
    lab = L.tx_lab(1)
    panel = L.transaction_panel(lab)
    panel.start_producer()
    panel.send_in_transaction()
    lab.advance(7000)
    panel.step_check()  # the check service's group now has offsets: a row to show
    titles = re.findall(r"<b>([^<]*)</b>", panel.inspector.value)
    assert titles[1:] == [
        "queues of RMQ_SYS_TRANS_HALF_TOPIC",
        "consumer offsets (CID_RMQ_SYS_TRANS)",
    ]
    assert "<td>CID_RMQ_SYS_TRANS</td>" in panel.inspector.value
    assert "<td>RMQ_SYS_TRANS_HALF_TOPIC</td>" in panel.inspector.value
    assert 'title="' not in panel.inspector.value  # nothing is cut
    assert panel.buttons["long_poll_timeout"].layout.display == "none"
    panel.let_long_poll_time_out()
    assert panel.messages[-1] == (
        "⚠ no pull is parked: no consumer pulls in this lab, so there is nothing to time out"
    )


# -- exercises --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ex", "seed", "want"),
    [
        ("10.1", 7, 10002),
        ("10.1", 12345, 8002),
        ("10.1", 99999, 15002),
        ("10.2", 7, [4, 21000, "TRANS_CHECK_MAX_TIME_TOPIC"]),
        ("10.2", 12345, [2, 20000, "TRANS_CHECK_MAX_TIME_TOPIC"]),
        ("10.3", 7, [11002, 5]),
        ("10.3", 12345, [13002, 7]),
    ],
)
def test_exercise_answers(ex, seed, want):
    """Exercises 10.1–10.3 have these exact answers (computed by running the mechanism)."""
    assert expected(ex, seed) == want
    assert check(ex, want, seed=seed)


@pytest.mark.parametrize(
    ("ex", "answer", "says"),
    [
        ("10.1", 5002, "first check round after the send"),  # forgot transactionTimeOut
        ("10.1", 7052, "multiples of transactionCheckInterval"),  # forgot the round grid
        ("10.1", 10000, "1 ms later"),  # forgot the two hops
        ("10.1", 1, "the check service runs at I, 2I, 3I"),  # anything else: the plain hint
        ("10.2", [5, 24000, "TRANS_CHECK_MAX_TIME_TOPIC"], "carries TRANSACTION_CHECK_TIMES 1"),
        ("10.2", [4, 21000, "Orders"], "neither delivered nor dropped"),
        ("10.2", [4, 15000, "TRANS_CHECK_MAX_TIME_TOPIC"], "transactionTimeOut (6000 ms) old"),
        ("10.3", [11002, 1], "still wrote the half message again"),
        ("10.3", [10002, 5], "HEART_BEAT"),
        ("10.3", [10502, 5], "the next check round"),
    ],
)
def test_wrong_answers_get_the_hint_for_their_misconception(ex, answer, says):
    """Seed 7: 10.1 interval 5000, timeout 7000, send at 50; 10.2 interval 3000, max 4;
    10.3 restart at 9500."""
    r = check(ex, answer, seed=7)
    assert not r and says in r.message, r.message


def test_message_tables_are_a_line_of_text_high():
    """Walk of issue 28: the half, op and real-topic tables inherited ipywidgets' 28 px
    line-height (34 px rows in Chromium, the panel 960 px tall after the lesson's walk)."""
    panel = L.transaction_panel(L.tx_lab(1))
    panel.start_producer()
    panel.send_in_transaction()
    html = panel.queues_view.value
    assert html.startswith("<style>.mqlab-insp{line-height:1.4}")
    assert '<div class="mqlab-insp" style="font-size:11px">' in html and "<table" in html


def test_message_tables_are_drawn_as_the_inspectors():
    """Walk 4 of issue 28: the half, op and real-topic tables were pandas' bordered tables,
    with done as True/False, beside the inspector's plain ones in the same panel. They are now
    inspector tables (columns sized to their text, nothing cut), done as ✔ or —; an empty
    topic is one line."""
    from test_inspector_widths import titles_that_do_not_fit, uncut_cells_that_do_not_fit

    lab = L.tx_lab(1)
    panel = L.transaction_panel(lab)
    panel.start_producer()
    panel.crash_before_commit()
    html = panel.queues_view.value
    assert 'class="dataframe"' not in html
    assert "<b>Orders (what consumers read)</b>: 0 message(s)" in html
    assert "<th>queue offset</th><th>born ms</th><th>t ms</th><th>real topic</th>" in html
    assert html.count("<td>—</td>") == 1 and "<td>✔</td>" not in html
    panel.start_producer()
    lab.advance(8000)
    panel.step_check()
    html = panel.queues_view.value
    assert html.count("<td>✔</td>") == 1 and "<td>True</td>" not in html
    assert "<b>Orders (what consumers read): 1 message(s)</b>" in html
    assert uncut_cells_that_do_not_fit(html) == [] and titles_that_do_not_fit(html) == []
    assert "<td title=" not in html
