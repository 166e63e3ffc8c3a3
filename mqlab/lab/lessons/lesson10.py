"""Lesson 10 — transactional messages (``TransactionMQProducer``, ``EndTransactionProcessor``,
``TransactionalMessageCheckService``).

A transactional send stores a *half message* on RMQ_SYS_TRANS_HALF_TOPIC (its real topic and
queue in the properties REAL_TOPIC / REAL_QID), where no consumer reads it. The producer then
runs its local transaction and sends END_TRANSACTION: COMMIT writes the message to its real
topic, ROLLBACK does not, and both write an *op message* (tag "d", body: the half offset) to
RMQ_SYS_TRANS_OP_HALF_TOPIC. UNKNOW changes nothing: every ``transactionCheckInterval`` the
broker's check service scans the half queue, and a half message older than
``transactionTimeOut`` with no op message is written again (TRANSACTION_CHECK_TIMES + 1) and
checked back (CHECK_TRANSACTION_STATE) with a producer of its group. After
``transactionCheckMax`` checks it goes to TRANS_CHECK_MAX_TIME_TOPIC. The steps are in
``notebooks/mechanisms.md`` ("Transactions"); ``TransactionalMessageServiceImpl#check`` and
``EndTransactionProcessor#processRequest`` (broker, rocketmq-all-4.9.3) are what they mirror.

The helpers: listeners that commit, roll back or answer UNKNOW (and record each check-back), a
producer that crashes after its half message is stored and before its local transaction ends,
one check-service round on demand, the half and op queues as frames, and a panel (the control
panel's time row and log, plus transaction buttons and the two queues).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import pandas as pd

from mqlab.client.producer import LocalTransactionState, TransactionListener
from mqlab.common.message import Message
from mqlab.lab.check import Misconception, exercise
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson05 import print_events
from mqlab.lab.panel_views import INSPECTOR_CSS, inspector_table
from mqlab.lab.widgets import ControlPanel, PanelInputError, _guarded

__all__ = [
    "HALF",
    "OP",
    "MAX_TIME",
    "TOPIC",
    "GROUP",
    "print_events",
    "TxListener",
    "tx_lab",
    "producer",
    "half_count",
    "send_in_transaction",
    "crash_before_commit",
    "step_check_service",
    "half_messages",
    "op_messages",
    "real_messages",
    "discarded",
    "system_offsets",
    "first_check_ms",
    "TransactionPanel",
    "transaction_panel",
    "params_10_1",
    "params_10_2",
    "params_10_3",
]

HALF = "RMQ_SYS_TRANS_HALF_TOPIC"
OP = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
MAX_TIME = "TRANS_CHECK_MAX_TIME_TOPIC"
TOPIC = "Orders"
GROUP = "TXG"
STATES = {s.name: s for s in LocalTransactionState}


def _state(value: Any) -> LocalTransactionState:
    if isinstance(value, LocalTransactionState):
        return value
    if isinstance(value, str) and value.upper() in STATES:
        return STATES[value.upper()]
    raise ValueError(f"a state is one of {list(STATES)}, got {value!r}")


class TxListener(TransactionListener):
    """A ``TransactionListener`` that answers ``local`` at once and ``check`` on each check-back.

    ``local`` and ``check``: "COMMIT_MESSAGE", "ROLLBACK_MESSAGE" or "UNKNOW" (or the
    ``LocalTransactionState``). ``checks`` records each check-back: when (``lab.now``, set by
    ``tx_lab``'s producers), the message's TRANSACTION_CHECK_TIMES and its body.
    """

    def __init__(self, local: Any = "COMMIT_MESSAGE", check: Any = "COMMIT_MESSAGE") -> None:
        self.local, self.check = _state(local), _state(check)
        self.checks: list[dict[str, Any]] = []
        self.lab: Lab | None = None

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return self.local

    def check_local_transaction(self, msg: Any) -> LocalTransactionState:
        self.checks.append({
            "t_ms": None if self.lab is None else self.lab.now,
            "check_times": int(msg.properties.get("TRANSACTION_CHECK_TIMES", 0)),
            "body": bytes(msg.body).decode("utf-8", "replace"), "answer": self.check.name,
        })  # fmt: skip
        return self.check

    def checked(self) -> pd.DataFrame:
        """The check-backs so far: ``t_ms, check_times, body, answer``."""
        return pd.DataFrame(self.checks, columns=["t_ms", "check_times", "body", "answer"])


def tx_lab(seed: int, *, interval: int | None = None, timeout: int | None = None,
           check_max: int | None = None, **kw: Any) -> Lab:  # fmt: skip
    """A Lab whose broker runs the check service with these settings (None: RocketMQ's
    defaults, ``transactionCheckInterval`` 60 000 ms, ``transactionTimeOut`` 6 000 ms,
    ``transactionCheckMax`` 15). The topic ``Orders`` exists (4 queues)."""
    broker = dict(kw.pop("broker", {}) or {})
    for key, value in (("transaction_check_interval", interval),
                       ("transaction_time_out", timeout),
                       ("transaction_check_max", check_max)):  # fmt: skip
        if value is not None:
            broker[key] = value
    lab = Lab(seed=seed, broker=broker, **kw)
    lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC", {
        "topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": 4, "writeQueueNums": 4,
        "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False,
    })  # fmt: skip
    lab.run_until_idle()
    return lab


def producer(lab: Lab, listener: TxListener, *, group: str = GROUP, name: str | None = None):
    """A started ``TransactionMQProducer`` of ``group`` with ``listener``."""
    listener.lab = lab
    return lab.transaction_producer(group, listener, name=name)


def send_in_transaction(lab: Lab, p: Any, body: str = "order-1", *, topic: str = TOPIC,
                        tags: str = "TagA") -> Any:  # fmt: skip
    """Send one message in a transaction and run until the producer has ended it; returns
    the ``TransactionSendResult``."""
    f = p.send_message_in_transaction(Message(topic, body.encode(), tags=tags), None)
    lab.run_until_idle()
    if f.error is not None:
        raise f.error
    return f.result


def crash_before_commit(lab: Lab, p: Any, body: str = "order-1", *, topic: str = TOPIC) -> str:
    """Send in a transaction and kill the producer once the broker has stored the half message,
    before its SEND_OK reaches the producer: no local transaction, no END_TRANSACTION.
    Returns the killed node's name."""
    node = p.default_mq_producer_impl.instance.name
    before = half_count(lab)
    p.send_message_in_transaction(Message(topic, body.encode(), tags="TagA"), None)
    for _ in range(10_000):
        if half_count(lab) > before:
            break
        lab.step()
    else:  # pragma: no cover — the send always reaches the broker on a healthy lab
        raise RuntimeError("the half message was never stored")
    lab.kill(node)
    lab.run_until_idle()
    return node


def half_count(lab: Lab) -> int:
    """How many messages RMQ_SYS_TRANS_HALF_TOPIC queue 0 holds (its max offset)."""
    return lab.broker().message_store.get_max_offset_in_queue(HALF, 0)


def step_check_service(lab: Lab) -> list[str]:
    """Run one ``TransactionalMessageCheckService`` round now (``onWaitEnd``), then the
    check-backs and END_TRANSACTIONs it caused. Returns the check's trace lines."""
    mark = len(lab.trace)
    lab.broker().transactional_message_check_service.on_wait_end()
    lab.run_until_idle()
    keep = ("TransactionalMessageServiceImpl.check", "DefaultMQProducerImpl.checkTransactionState",
            "EndTransactionProcessor.processRequest", "AbstractTransactionalMessageCheckListener",
            "DefaultTransactionalMessageCheckListener")  # fmt: skip
    return [e.describe() for e in lab.trace.events[mark:] if e.component.startswith(keep)]


def _entries(lab: Lab, topic: str) -> pd.DataFrame:
    log = lab.commit_log()
    return log[log.topic == topic].reset_index(drop=True)


#: The message tables' columns that are not the inspector's: their width in digits.
_MESSAGE_COL_CH = {"born_ms": 6, "t_ms": 6, "real_qid": 4, "check_times": 5, "done": 4,
                   "half_offset": 6, "tags": 4, "sys_flag": 5}  # fmt: skip


def op_messages(lab: Lab) -> pd.DataFrame:
    """RMQ_SYS_TRANS_OP_HALF_TOPIC: ``queue_offset, t_ms, tags, half_offset`` (the body)."""
    op = _entries(lab, OP)
    return pd.DataFrame({
        "queue_offset": op.queue_offset.astype(int), "t_ms": op.store_timestamp.astype(int),
        "tags": op.tags, "half_offset": [int(b.decode()) for b in op.body],
    })  # fmt: skip


def half_messages(lab: Lab) -> pd.DataFrame:
    """RMQ_SYS_TRANS_HALF_TOPIC: one row per stored half message (first sends and the copies
    each check writes): ``queue_offset, born_ms, t_ms, real_topic, real_qid, check_times, uniq_key,
    body, done`` (``done``: an op message names this half offset)."""
    half = _entries(lab, HALF)
    done = set(op_messages(lab)["half_offset"])
    props = half.properties
    store = lab.broker().message_store
    born = [store.look_message_by_offset(int(o)).born_timestamp for o in half.commit_log_offset]
    return pd.DataFrame({
        "queue_offset": half.queue_offset.astype(int), "born_ms": pd.Series(born, dtype=int),
        "t_ms": half.store_timestamp.astype(int),
        "real_topic": props.map(lambda p: p.get("REAL_TOPIC")),
        "real_qid": props.map(lambda p: int(p.get("REAL_QID", -1))),
        "check_times": props.map(lambda p: int(p.get("TRANSACTION_CHECK_TIMES", 0))),
        "uniq_key": props.map(lambda p: p.get("UNIQ_KEY")),
        "body": [b.decode("utf-8", "replace") for b in half.body],
        "done": [int(o) in done for o in half.queue_offset],
    })  # fmt: skip


def real_messages(lab: Lab, topic: str = TOPIC) -> pd.DataFrame:
    """What consumers can read on ``topic``: ``queue_id, queue_offset, t_ms, sys_flag, body``."""
    r = _entries(lab, topic)
    return pd.DataFrame({
        "queue_id": r.queue_id.astype(int), "queue_offset": r.queue_offset.astype(int),
        "t_ms": r.store_timestamp.astype(int), "sys_flag": r.sys_flag.astype(int),
        "body": [b.decode("utf-8", "replace") for b in r.body],
    })  # fmt: skip


def discarded(lab: Lab) -> pd.DataFrame:
    """TRANS_CHECK_MAX_TIME_TOPIC: ``t_ms, real_topic, check_times, body``."""
    d = _entries(lab, MAX_TIME)
    return pd.DataFrame({
        "t_ms": d.store_timestamp.astype(int),
        "real_topic": d.properties.map(lambda p: p.get("REAL_TOPIC")),
        "check_times": d.properties.map(lambda p: int(p.get("TRANSACTION_CHECK_TIMES", 0))),
        "body": [b.decode("utf-8", "replace") for b in d.body],
    })  # fmt: skip


def system_offsets(lab: Lab) -> dict[str, int]:
    """Where the check service's group CID_RMQ_SYS_TRANS stands in the half and op queues."""
    offsets = lab.broker().consumer_offset_manager
    return {
        "half": int(offsets.query_offset("CID_RMQ_SYS_TRANS", HALF, 0)),
        "op": int(offsets.query_offset("CID_RMQ_SYS_TRANS", OP, 0)),
    }


def first_check_ms(born_ms: int, interval: int, timeout: int) -> int:
    """The first check-service run (at k × interval from the broker's start, t = 0) that
    finds a half message born at ``born_ms`` at least ``timeout`` ms old."""
    k = -(-(born_ms + timeout) // interval)  # ceiling
    return max(k, 1) * interval


# -- the panel ---------------------------------------------------------------------------------
class TransactionPanel(ControlPanel):
    """The control panel's time row and log, plus a transaction row and the two queues.

    ``local`` / ``check``: what the next producer's listener answers (its local transaction,
    and a check-back). Buttons: *send in transaction* (with the running producer),
    *crash before commit* (the producer dies after the half message is stored),
    *start producer* (a new producer of the group, with the chosen answers), *step check
    service* (one ``TransactionalMessageCheckService`` round now).
    """

    def __init__(self, lab: Lab, *, group: str = GROUP, topic: str = TOPIC) -> None:
        self.tx_group, self.tx_topic = group, topic
        self.tx_producer: Any = None
        self.tx_listener: TxListener | None = None
        self.queues_view = widgets.HTML()
        # the inspector: the half topic's queue and the check service's offsets, nothing the
        # lesson does not use (no consumer pulls here: no held pulls, allocation, process queues)
        super().__init__(lab, topic=HALF, group="CID_RMQ_SYS_TRANS",
                         sections=["time", "inspect", "log"],
                         views=("queues", "consumer_offsets"))  # fmt: skip
        # nothing pulls in this lab, so no long poll can time out: no such button
        self.buttons["long_poll_timeout"].layout.display = "none"
        self.inputs["local"] = widgets.Dropdown(options=list(STATES), value="COMMIT_MESSAGE",
                                                description="local")  # fmt: skip
        self.inputs["check"] = widgets.Dropdown(options=list(STATES), value="COMMIT_MESSAGE",
                                                description="check")  # fmt: skip
        for key, label, fn in (("send_tx", "send in transaction", self.send_in_transaction),
                               ("crash", "crash before commit", self.crash_before_commit),
                               ("start_producer", "start producer", self.start_producer),
                               ("step_check", "step check service", self.step_check)):  # fmt: skip
            b = widgets.Button(description=label,
                               layout=widgets.Layout(width="auto", flex="0 0 auto"))  # fmt: skip
            b.on_click(lambda _b, fn=fn: fn())
            self.buttons[key] = b
        row = widgets.Layout(flex_flow="row wrap", align_items="center")
        tx_row = widgets.HBox(
            [self.inputs["local"], self.inputs["check"], self.buttons["start_producer"],
             self.buttons["send_tx"], self.buttons["crash"], self.buttons["step_check"]],
            layout=row,
        )  # fmt: skip
        # the transaction row, the time row, the log (the answer to a click, in view with the
        # buttons), then the four message tables and the inspector: with the tables between
        # buttons and log the panel was 1 005 px tall after the lesson's walk (issue 28)
        time_row, log_box, *views = self.widget.children
        self.widget.children = (tx_row, time_row, log_box, self.queues_view, *views)
        self.refresh()

    def _redraw(self) -> None:
        super()._redraw()
        if hasattr(self, "queues_view"):
            self.queues_view.value = self.queues_html()

    def queues_html(self) -> str:
        """The half queue, the op queue and the real topic as small tables."""
        lab = self.lab
        off = system_offsets(lab)
        at = {k: "none yet" if v < 0 else str(v) for k, v in off.items()}
        parts = [
            f"<b>t={lab.now} ms</b> · CID_RMQ_SYS_TRANS at half offset {at['half']}, "
            f"op offset {at['op']} · producer: " + (self._producer_name() or "none running"),
        ]
        tables, empty = [], []
        for title, frame in ((f"half queue ({HALF})", half_messages(lab)),
                             (f"op queue ({OP})", op_messages(lab)),
                             (f"{self.tx_topic} (what consumers read)", real_messages(lab, self.tx_topic)),
                             (MAX_TIME, discarded(lab))):  # fmt: skip
            if frame.empty:
                empty.append(f"<b>{html.escape(title)}</b>: 0 message(s)")
                continue
            if "done" in frame:
                frame = frame.assign(done=frame["done"].map(lambda d: "✔" if d else "—"))
            # drawn as the inspector's tables below (walk 4 of issue 28: pandas' bordered
            # tables, True/False, beside the inspector's plain ones in the same panel)
            tables.append(inspector_table(f"{title}: {len(frame)} message(s)", frame.tail(8),
                                 list(frame.columns), col_ch=_MESSAGE_COL_CH,
                                 names=("real_topic", "uniq_key", "body"), name_max_ch=40))  # fmt: skip
        return (f'{INSPECTOR_CSS}<div class="mqlab-insp" style="font-size:11px">'
                + "<br>".join(parts + empty)
                + '<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">'
                + "".join(tables) + "</div></div>")  # fmt: skip

    def _producer_name(self) -> str | None:
        p = self.tx_producer
        if p is None:
            return None
        inst = p.default_mq_producer_impl.instance
        return inst.name if self.lab.driver.node(inst.name).running else None

    @_guarded
    def start_producer(self) -> None:
        """A new producer of the group; its listener answers the chosen ``local`` / ``check``."""
        listener = TxListener(self.inputs["local"].value, self.inputs["check"].value)

        def run() -> list[str]:
            self.tx_producer = producer(self.lab, listener, group=self.tx_group)
            self.tx_listener = listener
            self._idle()
            return [f"{self._producer_name()} of {self.tx_group} runs: local transaction → "
                    f"{listener.local.name}, check-back → {listener.check.name}"]  # fmt: skip

        self._do(f"start a producer of {self.tx_group}", run)

    def _next_transaction(self) -> int:
        """The number of the next transaction: one more than the transactions the half queue
        holds (a check's copy of a half message is the same transaction: its UNIQ_KEY)."""
        return int(half_messages(self.lab)["uniq_key"].nunique()) + 1

    def _running_producer(self) -> Any:
        if self._producer_name() is None:
            raise PanelInputError("no producer is running: click 'start producer' first")
        return self.tx_producer

    @_guarded
    def send_in_transaction(self) -> None:
        """Send one message in a transaction with the running producer."""
        p = self._running_producer()
        n = self._next_transaction()

        def run() -> list[str]:
            r = send_in_transaction(self.lab, p, f"order-{n}", topic=self.tx_topic)
            return [f"half message stored at {HALF} offset {r.queue_offset}; local "
                    f"transaction {r.local_transaction_state.name}"]  # fmt: skip

        self._do(f"send order-{n} to {self.tx_topic} in a transaction", run)

    @_guarded
    def crash_before_commit(self) -> None:
        """The running producer sends in a transaction and dies before its local transaction
        ends: only the half message is stored."""
        p = self._running_producer()
        n = self._next_transaction()

        def run() -> list[str]:
            node = crash_before_commit(self.lab, p, f"order-{n}", topic=self.tx_topic)
            return [f"{node} crashed after the half message (offset {half_count(self.lab) - 1}) "
                    "was stored: no END_TRANSACTION; the check service will ask another "
                    f"producer of {self.tx_group}"]  # fmt: skip

        self._do(f"send order-{n} in a transaction, crash before commit", run)

    @_guarded
    def step_check(self) -> None:
        """One check-service round now (``TransactionalMessageCheckService#onWaitEnd``)."""

        def run() -> list[str]:
            lines = step_check_service(self.lab)
            due = sum("check its producer" in x for x in lines)
            asked = sum("CHECK_TRANSACTION_STATE for" in x for x in lines)
            discards = sum(": discard" in x for x in lines)
            return [
                f"check round: {due} half message(s) due, {asked} check-back(s) sent, "
                f"{due - asked} with no producer of the group, {discards} discarded"
            ]

        self._do("step the check service (one round of TransactionalMessageServiceImpl#check)",
                 run)  # fmt: skip


def transaction_panel(lab: Lab, *, group: str = GROUP, topic: str = TOPIC) -> TransactionPanel:
    """A ``TransactionPanel`` for ``lab``; leave it as a cell's last expression to show it."""
    return TransactionPanel(lab, group=group, topic=topic)


# -- exercises -------------------------------------------------------------------------------
INTERVALS = (1000, 2000, 3000, 5000)


def params_10_1(seed: int) -> dict[str, int]:
    """Exercise 10.1: check interval, transactionTimeOut and when the send starts (ms)."""
    interval = INTERVALS[seed % 4]
    return {"interval": interval, "timeout": interval + 1000 * (1 + seed // 4 % 5),
            "send_at": 50 + 100 * (seed // 28 % 30)}  # fmt: skip


def params_10_2(seed: int) -> dict[str, int]:
    """Exercise 10.2: check interval, transactionCheckMax (2..6), send at (ms)."""
    return {"interval": INTERVALS[seed // 3 % 4], "check_max": 2 + seed % 5,
            "send_at": 50 + 100 * (seed // 12 % 20)}  # fmt: skip


def params_10_3(seed: int) -> dict[str, int]:
    """Exercise 10.3: check interval 1000 ms; the new producer starts at ``restart_at``."""
    return {"interval": 1000, "restart_at": 8500 + 1000 * (seed % 6)}


def _send_at(lab: Lab, ms: int, listener: TxListener) -> int:
    p = producer(lab, listener)
    lab.advance(ms - lab.now)
    born = lab.now
    send_in_transaction(lab, p)
    return born


def _first_10_1(seed: int, timeout: int | None = None) -> int:
    p = params_10_1(seed)
    t = p["timeout"] if timeout is None else timeout
    return first_check_ms(p["send_at"], p["interval"], t) + 2


#: 10.1's typical wrong answers, most specific first.
MISCONCEPTIONS_10_1 = (
    Misconception(
        "forgetting transactionTimeOut",
        "that is the first check round after the send; a half message younger than "
        "transactionTimeOut is left for a later round (step 8)",
        lambda answer, want, seed: answer == _first_10_1(seed, 0),
    ),
    Misconception(
        "expecting a check the moment the timeout ends",
        "nothing checks at the moment the timeout ends: the check service only runs at "
        "multiples of transactionCheckInterval",
        lambda answer, want, seed: (
            answer == params_10_1(seed)["send_at"] + params_10_1(seed)["timeout"] + 2
        ),
    ),
    Misconception(
        "forgetting the two 1 ms hops",
        "the round at that time sends CHECK_TRANSACTION_STATE; the producer gets it 1 ms later "
        "and its END_TRANSACTION takes 1 ms more",
        lambda answer, want, seed: answer in (want - 2, want - 1),
    ),
)


@exercise("10.1", "The broker checks every I ms (your interval) with transactionTimeOut T (your "
          "timeout). At your send_at ms a producer sends one message in a transaction; its local "
          "transaction answers UNKNOW and its check-back answers COMMIT_MESSAGE. (Its first send asks "
          "the name server for the route of Orders: the message is born 2 ms after send_at.) At "
          "which virtual ms is the message written to Orders, where consumers can read it? Each "
          "hop takes 1 ms.",
          hint="the check service runs at I, 2I, 3I … from the broker's start; the first round "
               "where the half message is at least T ms old asks the producer (1 ms), whose "
               "END_TRANSACTION COMMIT arrives 1 ms later",
          misconceptions=MISCONCEPTIONS_10_1)  # fmt: skip
def _ex_10_1(seed: int) -> int:
    p = params_10_1(seed)
    with tx_lab(seed, interval=p["interval"], timeout=p["timeout"]) as lab:
        _send_at(lab, p["send_at"], TxListener("UNKNOW", "COMMIT_MESSAGE"))
        lab.advance(p["send_at"] + p["timeout"] + 2 * p["interval"])
        return int(real_messages(lab)["t_ms"].iloc[0])


def _off_by_one_10_2(answer: Any, seed: int) -> bool:
    p = params_10_2(seed)
    m = p["check_max"]
    first = first_check_ms(p["send_at"], p["interval"], 6000)
    late = (first + (m - 1) * p["interval"], first + (m + 1) * p["interval"])
    return answer[0] in (m - 1, m + 1) or answer[1] in late


#: 10.2's typical wrong answers ([checks, ms, topic]), most specific first.
MISCONCEPTIONS_10_2 = (
    Misconception(
        "counting the first check as 0",
        "the first check-back carries TRANSACTION_CHECK_TIMES 1, not 0 (needDiscard writes 1 "
        "the first time); the round that finds the count at transactionCheckMax discards "
        "instead of asking",
        lambda answer, want, seed: len(answer) == 3 and _off_by_one_10_2(answer, seed),
    ),
    Misconception(
        "thinking the message is delivered or dropped",
        f"a message checked too often is neither delivered nor dropped: see {MAX_TIME}",
        lambda answer, want, seed: len(answer) == 3 and answer[2] != MAX_TIME,
    ),
    Misconception(
        "forgetting transactionTimeOut",
        "the first check-back waits until the half message is transactionTimeOut (6000 ms) "
        "old; the rounds before only find it too young (step 8)",
        lambda answer, want, seed: (
            len(answer) == 3
            and answer[1]
            == first_check_ms(params_10_2(seed)["send_at"], params_10_2(seed)["interval"], 0)
            + params_10_2(seed)["check_max"] * params_10_2(seed)["interval"]
        ),
    ),
)


@exercise("10.2", "transactionCheckMax is your check_max, the check interval your interval, "
          "transactionTimeOut 6000 ms. At your send_at ms a producer sends in a transaction (born "
          "2 ms later, after its route lookup); its listener answers UNKNOW to everything. How many times is the producer asked, at which "
          "virtual ms does the broker give up, and on which topic does the message end? Answer "
          "[checks, ms, topic].",
          hint="check-backs 1, 2, … check_max come at consecutive rounds, the first at least "
               "6000 ms after the send; the next round finds TRANSACTION_CHECK_TIMES = check_max "
               "and writes the half message to TRANS_CHECK_MAX_TIME_TOPIC (needDiscard, "
               "resolveDiscardMsg)",
          misconceptions=MISCONCEPTIONS_10_2)  # fmt: skip
def _ex_10_2(seed: int) -> list[Any]:
    p = params_10_2(seed)
    with tx_lab(seed, interval=p["interval"], check_max=p["check_max"]) as lab:
        listener = TxListener("UNKNOW", "UNKNOW")
        _send_at(lab, p["send_at"], listener)
        lab.advance(6000 + (p["check_max"] + 3) * p["interval"])
        d = discarded(lab)
        return [len(listener.checks), int(d["t_ms"].iloc[0]), MAX_TIME]


def _restart_10_3(seed: int) -> int:
    return params_10_3(seed)["restart_at"]


#: 10.3's typical wrong answers ([ms, check_times]), most specific first.
MISCONCEPTIONS_10_3 = (
    Misconception(
        "not counting the rounds that had no producer",
        "the rounds with no producer of the group still wrote the half message again and "
        "counted a check (needDiscard runs before anyone is asked)",
        lambda answer, want, seed: len(answer) == 2 and answer[1] == 1,
    ),
    Misconception(
        "forgetting the new producer's first heartbeat",
        "the broker knows a producer only from its HEART_BEAT, and a new client's first "
        "heartbeat goes out 1000 ms after it starts",
        lambda answer, want, seed: (
            len(answer) == 2 and answer[0] == -(-_restart_10_3(seed) // 1000) * 1000 + 2
        ),
    ),
    Misconception(
        "thinking the heartbeat triggers a check",
        "the heartbeat does not trigger a check: the next check round (at a multiple of the "
        "interval) asks the producer",
        lambda answer, want, seed: (
            len(answer) == 2
            and answer[0] in tuple(_restart_10_3(seed) + d for d in (1001, 1002, 1003))
        ),
    ),
)


@exercise("10.3", "Check interval 1000 ms, transactionTimeOut 6000 ms. At 100 ms a producer "
          "of TXG sends in a transaction and crashes before its local transaction ends. At your "
          "restart_at ms a new producer of TXG starts; its check-back answers COMMIT_MESSAGE. At "
          "which virtual ms is the message written to Orders, and what TRANSACTION_CHECK_TIMES "
          "does the check-back carry? Answer [ms, check_times].",
          hint="the first round at least 6000 ms after the send counts check 1 even with no "
               "producer to ask; each later round counts one more; the broker learns of the new "
               "producer from its first heartbeat (1000 ms after it starts), and the next round "
               "asks it (1 ms), whose COMMIT arrives 1 ms later",
          misconceptions=MISCONCEPTIONS_10_3)  # fmt: skip
def _ex_10_3(seed: int) -> list[int]:
    p = params_10_3(seed)
    with tx_lab(seed, interval=p["interval"]) as lab:
        first = producer(lab, TxListener("UNKNOW", "UNKNOW"), name="producer-1")
        lab.advance(100 - lab.now)
        crash_before_commit(lab, first)
        lab.advance(p["restart_at"] - lab.now)
        listener = TxListener("COMMIT_MESSAGE", "COMMIT_MESSAGE")
        producer(lab, listener, name="producer-2")
        lab.advance(3 * p["interval"])
        return [int(real_messages(lab)["t_ms"].iloc[0]), listener.checks[0]["check_times"]]
