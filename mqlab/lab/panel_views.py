"""What the control panel shows: events in words, inspector tables, the live timeline.

Mirrors no RocketMQ class: this is the view half of ``mqlab.lab.widgets`` (the panel's
buttons live there). It owns three things, each cheap enough to redraw on every click:

- ``words(events)``: the trace events a click produced, as ``TraceEvent.describe()``
  lines, repeats folded and long runs summarised;
- ``inspector_html(lab, ...)``: small HTML tables (queues, held pulls, allocation,
  process queues, consumer offsets) built from the Lab's inspectors, row counts capped;
- ``TimelineView``: the swimlane timeline of the last ``window_ms`` of the trace, shown in
  an ``Output`` widget as plotly's mimetype. In ``"live"`` mode it is one ``plotly`` figure
  with fixed traces (event markers per kind, parked-pull bars from
  ``figures.long_poll_wait_histogram_frame``, in ``figures.sequence_timeline``'s colours)
  whose arrays change in place, put in the ``Output`` when something changed; frame arrows
  are left out. (It was a ``FigureWidget``, whose edits travel as deltas: on a loaded
  machine the browser drew it empty after Run All, or stopped applying new clicks after a
  page reload, issue 28.) In ``"static"`` mode (``MQLAB_PLOT_MODE=static``, or no
  anywidget) it re-renders ``figures.sequence_timeline`` on each click, arrows included.

It also holds ``PanelListener``, the listener whose mode the panel's "listener fails"
toggle flips. It must not know about buttons or change the lab's state.
"""

from __future__ import annotations

import bisect
import html
import importlib.util
import itertools
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import numpy as np
import pandas as pd
import traitlets

from mqlab.client.allocate import STRATEGIES_BY_NAME
from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus
from mqlab.lab import figures
from mqlab.lab.dledger_lab import dledger_view
from mqlab.lab.lab import FAULTS
from mqlab.lab.text_width import ZERO_EM, text_em
from mqlab.remoting.codes import ResponseCode
from mqlab.trace.events import Kind, TraceEvent

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab
    from mqlab.runtime.raw_client import Call

__all__ = [
    "PanelListener",
    "GovernedListener",
    "govern_listeners",
    "LISTENER_MODES",
    "NumberText",
    "strategy_names",
    "build_inputs",
    "section_rows",
    "call_words",
    "words",
    "is_key_event",
    "KEY_COMPONENTS",
    "code_name",
    "inspector_html",
    "VIEWS",
    "DEFAULT_VIEWS",
    "plot_mode",
    "TimelineView",
    "MAX_ROWS",
    "table_html",
    "inspector_table",
    "INSPECTOR_CSS",
]

#: Rows per inspector table before "… N more rows".
MAX_ROWS = 12
#: Parked pulls that started this long before the window still get their bar.
HOLD_LOOKBACK_MS = 60_000
_HOLD = figures.HOLD + "."


#: The panel's listener modes: each consumer's own listener, or all succeed, or all fail.
LISTENER_MODES = ("own", "succeeds", "fails")


class PanelListener:
    """The listener mode the panel's "listener" toggle sets, for every consumer it shows.

    ``mode`` "own": each consumer runs the listener it was started with (consumers the panel
    adds answer CONSUME_SUCCESS); "succeeds" / "fails": every concurrent consumer of the lab
    answers CONSUME_SUCCESS / RECONSUME_LATER (the consumer sends the message back for a later
    retry, ``ConsumeMessageConcurrentlyService#processConsumeResult``). The panel puts a
    ``GovernedListener`` in front of each consumer's own listener for that. ``calls`` counts
    the calls this object answered itself.

    The mode lives in this object, not in the Lab's journal: a ``lab.fork()`` replays the
    consumers with their own listeners.
    """

    __slots__ = ("mode", "calls")

    def __init__(self, fails: bool | None = None) -> None:
        self.mode = "own" if fails is None else ("fails" if fails else "succeeds")
        self.calls = 0

    @property
    def fails(self) -> bool:
        """True when every governed consumer answers RECONSUME_LATER."""
        return self.mode == "fails"

    @fails.setter
    def fails(self, value: bool) -> None:
        self.mode = "fails" if value else "succeeds"

    def __call__(self, msgs: list, context: Any) -> ConsumeConcurrentlyStatus:
        self.calls += 1
        if self.mode == "fails":
            return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def __repr__(self) -> str:
        return f"PanelListener({self.mode!r})"


class GovernedListener:
    """A consumer's own listener behind the panel's mode (``PanelListener.mode``).

    In mode "own" it calls ``inner`` (exceptions and all, so ``call_listener`` sees what the
    listener did); otherwise the ``PanelListener`` answers. ``consume_time_ms`` is the inner
    listener's, so a slow listener stays slow.
    """

    __slots__ = ("inner", "governor")

    def __init__(self, inner: Any, governor: PanelListener) -> None:
        self.inner = inner
        self.governor = governor

    @property
    def consume_time_ms(self) -> Any:
        return getattr(self.inner, "consume_time_ms", None)

    def consume_message(self, msgs: list, context: Any) -> Any:
        if self.governor.mode == "own":
            fn = getattr(self.inner, "consume_message", None)
            return (fn if callable(fn) else self.inner)(msgs, context)
        return self.governor(msgs, context)

    def __repr__(self) -> str:
        return f"GovernedListener({self.inner!r}, {self.governor!r})"


def govern_listeners(lab: Lab, governor: PanelListener) -> list[str]:
    """Put ``governor`` in front of every started concurrent consumer's listener (once each).

    Returns the names of the consumers it governs (orderly consumers keep their own
    listener: their statuses are ``ConsumeOrderlyStatus``).
    """
    names = []
    for name, c in sorted(lab.consumers.items()):
        impl = c.default_mq_push_consumer_impl
        svc = getattr(impl, "consume_message_service", None)
        if svc is None or impl.consume_orderly:
            continue
        if not isinstance(svc.message_listener, (GovernedListener, PanelListener)):
            svc.message_listener = GovernedListener(svc.message_listener, governor)
        names.append(name)
    return names


# -- the inputs -------------------------------------------------------------------------------
def strategy_names() -> list[str]:
    """Allocation strategies a panel can build without settings (``STRATEGIES_BY_NAME``)."""
    names = []
    for name, cls in sorted(STRATEGIES_BY_NAME.items()):
        try:
            cls()
        except TypeError:  # CONFIG and MACHINE_ROOM need a queue list / machine rooms
            continue
        names.append(name)
    return names


class NumberText(widgets.Text):
    """A text box for a number: setting ``value`` to an int stores its text (``3`` → ``"3"``).

    A text box, not an ``IntText``, so that a wrong entry ("abc", "-1") reaches the panel's
    own checks and becomes a message instead of being silently reset.
    """

    value = traitlets.CUnicode(help="String value").tag(sync=True)


#: Width of each input (label included; labels take their natural width), wide enough for
#: its usual values ("TopicTest", "msg-{i}", "broker-a", "consumer-12").
_WIDTHS = {
    "topic": "210px", "tags": "150px", "body": "190px", "count": "120px", "broker": "190px",
    "queue_id": "130px", "offset": "140px", "suspend": "auto", "timeout_ms": "170px",
    "subscription": "150px", "consumer": "190px", "group": "140px", "expression": "130px",
    "persist_first": "auto", "advance_ms": "140px", "consume_ms": "150px",
    "fault": "200px", "fault_node": "190px", "latency_ms": "160px",
}  # fmt: skip
_STYLE = {"description_width": "initial"}


def build_inputs(lab: Lab, topic: str, group: str, strategies: list[str]) -> dict[str, Any]:
    """The panel's input widgets by name, toggles set from broker-a's config."""
    W = widgets

    def lay(name: str) -> dict[str, Any]:
        return {"layout": W.Layout(width=_WIDTHS[name], flex="0 0 auto"), "style": _STYLE}

    b0 = lab.brokers[0].broker_config
    return {
        "topic": W.Text(topic, description="topic", **lay("topic")),
        "tags": W.Text("TagA", description="tags", **lay("tags")),
        "body": W.Text("msg-{i}", description="body", **lay("body")),
        "count": NumberText("1", description="count", **lay("count")),
        "broker": W.Dropdown(options=[b.name for b in lab.brokers], description="broker",
                             **lay("broker")),
        "queue_id": NumberText("0", description="queue id", **lay("queue_id")),
        "offset": NumberText("", description="offset", placeholder="max", **lay("offset")),
        # the checkbox is the SUSPEND flag, the field suspendTimeoutMillis: distinct labels,
        # and a gap, so they do not read "suspend suspend ms"
        "suspend": W.Checkbox(True, description="suspend", indent=False,
                              layout=W.Layout(width="auto", flex="0 0 auto",
                                              margin="0 14px 0 0"), style=_STYLE),
        "timeout_ms": NumberText("15000", description="timeout ms", **lay("timeout_ms")),
        "subscription": W.Text("*", description="subscr.", **lay("subscription")),
        "consumer": W.Dropdown(options=[], description="consumer", **lay("consumer")),
        "group": W.Text(group, description="group", **lay("group")),
        "expression": W.Text("*", description="tags expr", **lay("expression")),
        "consume_ms": NumberText("0", description="consume ms", **lay("consume_ms")),
        "persist_first": W.Checkbox(False, description="persist first", indent=False,
                                    **lay("persist_first")),
        "advance_ms": NumberText("100", description="ms", **lay("advance_ms")),
        "fault": W.Dropdown(options=list(FAULTS), value="kill", description="fault",
                            **lay("fault")),
        "fault_node": W.Dropdown(options=[b.name for b in lab.brokers], description="node",
                                 **lay("fault_node")),
        "latency_ms": NumberText("5000", description="latency ms", **lay("latency_ms")),
        "long_polling": W.Checkbox(b0.long_polling_enable, description="longPollingEnable",
                                   indent=False, layout=W.Layout(width="auto")),
        "auto_create_topic": W.Checkbox(b0.auto_create_topic_enable, indent=False,
                                        description="autoCreateTopicEnable",
                                        layout=W.Layout(width="auto")),
        "strategy": W.Dropdown(options=strategies, value="AVG", description="allocate",
                               style=_STYLE, layout=W.Layout(width="250px")),
        "listener": W.ToggleButtons(
            options=list(LISTENER_MODES), description="listener (all consumers)",
            style={"description_width": "initial", "button_width": "auto"},
            layout=W.Layout(width="auto"), tooltips=[
                "each consumer runs its own listener (consumers added here succeed)",
                "every consumer answers CONSUME_SUCCESS",
                "every consumer answers RECONSUME_LATER: the message is sent back for a retry",
            ]),
    }  # fmt: skip


def section_rows(
    i: dict[str, Any], b: dict[str, Any], inspector: Any, figure: Any, log: Any
) -> dict[str, list[Any]]:
    """The widgets of each panel section (``widgets.SECTIONS``), left to right."""
    return {
        "send": [i["topic"], i["tags"], i["body"], i["count"], b["send"]],
        "pull": [i["broker"], i["queue_id"], i["offset"], i["suspend"], i["timeout_ms"],
                 i["subscription"], b["pull"]],
        "consumers": [i["consumer"], i["group"], i["expression"], i["consume_ms"],
                      b["add_consumer"],
                      b["remove_consumer"], b["kill_consumer"], i["persist_first"],
                      b["rebalance"], b["persist_offsets"]],
        "time": [i["advance_ms"], b["advance"], b["next_timer"], b["long_poll_timeout"]],
        "faults": [i["fault"], i["fault_node"], i["latency_ms"], b["apply_fault"]],
        "toggles": [i["long_polling"], i["auto_create_topic"], i["strategy"], i["listener"]],
        "inspect": [widgets.VBox([b["refresh"], inspector],
                                 layout=widgets.Layout(align_items="flex-start"))],
        "figure": [figure] if figure is not None else [],
        "log": [log],
    }  # fmt: skip


# -- events in words -------------------------------------------------------------------------
#: Components whose lines a lesson asks the learner to look for (consume results, send-backs,
#: retries handed back by the schedule service, transaction check-backs and their ends):
#: ``words`` never folds them away.
KEY_COMPONENTS = (
    "ConsumeMessageConcurrentlyService.ConsumeRequest.run",
    "ConsumeMessageConcurrentlyService.processConsumeResult",
    "ConsumeMessageOrderlyService.ConsumeRequest.run",
    "ConsumeMessageOrderlyService.processConsumeResult",
    "DefaultMQPushConsumerImpl.sendMessageBack",
    "SendMessageProcessor.asyncConsumerSendMsgBack",
    "ScheduleMessageService.DeliverDelayedMessageTimerTask",
    "AbstractTransactionalMessageCheckListener.sendCheckMessage",
    "DefaultMQProducerImpl.checkTransactionState",
    "EndTransactionProcessor.processRequest",
)


def is_key_event(e: TraceEvent, keys: Sequence[str] = KEY_COMPONENTS) -> bool:
    """True for an event of a component in ``keys`` (by default a consume result, a send-back,
    a retry's delivery or a transaction check-back): ``words`` never folds it."""
    return e.component.startswith(tuple(keys))


def words(events: Sequence[TraceEvent], *, limit: int = 20,
          keys: Sequence[str] = KEY_COMPONENTS) -> list[str]:  # fmt: skip
    """The events as lines: repeats of one line folded ("(×3)"), about ``limit`` lines.

    When there are more, the first and last ``limit // 2`` lines are kept, and so is every
    key line (``is_key_event``: by default consume results, send-backs, retries; ``keys``
    names other components, e.g. the pull loop's in lesson 06); each run of other
    lines left out becomes one line saying how many and which components they came from.
    """
    lines: list[str] = []
    counts: list[int] = []
    comps: list[str] = []
    is_key: list[bool] = []
    for e in events:
        d = e.describe()
        if lines and lines[-1] == d:
            counts[-1] += 1
            continue
        lines.append(d)
        counts.append(1)
        comps.append(e.component)
        is_key.append(is_key_event(e, keys))
    out = [line if n == 1 else f"{line} (×{n})" for line, n in zip(lines, counts, strict=True)]
    if len(out) <= limit:
        return out
    head, tail = limit // 2, limit - limit // 2 - 1
    result: list[str] = list(out[:head])
    hidden: list[str] = []

    def flush() -> None:
        if not hidden:
            return
        top = ", ".join(
            f"{c} ×{n}"
            for c, n in sorted(Counter(hidden).items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        )
        result.append(f"… {len(hidden)} more lines ({top}); see lab.events()")
        hidden.clear()

    for k in range(head, len(out) - tail):
        if is_key[k]:
            flush()
            result.append(out[k])
        else:
            hidden.append(comps[k])
    flush()
    return result + out[len(out) - tail :]


def code_name(code: int | None) -> str:
    """``19`` → ``"PULL_NOT_FOUND (19)"``."""
    if code is None:
        return "no response"
    try:
        return f"{ResponseCode(code).name} ({code})"
    except ValueError:
        return f"code {code}"


def call_words(call: Call, what: str) -> str:
    """One line for an answered (or failed) raw request."""
    if call.error is not None:
        return f"{what}: failed at t={call.done_at}: {call.error}"
    ext = []
    for k in ("nextBeginOffset", "minOffset", "maxOffset"):
        v = call.ext(k)
        if v is not None:
            ext.append(f"{k}={v}")
    remark = f" — {call.remark}" if call.remark else ""
    return (
        f"{what} answered at t={call.done_at}: {code_name(call.code)}"
        + (f", {', '.join(ext)}" if ext else "")
        + remark
    )


# -- inspector tables --------------------------------------------------------------------------
#: Column widths of the inspector tables (characters); a value longer than its column is cut
#: with "…" and shown whole on hover. Fixed widths keep the tables in place from click to
#: click; a table is as tall as its rows, up to ``VISIBLE_ROWS`` (then it scrolls), so an
#: empty one leaves no blank block.
_COL_CH = {
    "broker": 9, "queue_id": 6, "min_offset": 7, "max_offset": 7, "key": 17, "consumer": 16,
    "pull_from_this_offset": 8, "suspend_timestamp": 10, "deadline": 9, "topic": 14,
    "msg_count": 6, "queue_offset_max": 8, "dropped": 7, "group": 9, "offset": 7, "lag": 6,
    "commit_log_offset": 8, "size": 5, "queue_offset": 7, "tags": 8, "body": 12,
    "tags_code": 10, "node": 11, "role": 7, "bytes_behind": 7, "push2_slave_max_offset": 8,
    "up": 4, "term": 4, "voted_for": 5, "end_index": 5, "end_term": 5, "committed": 6,
    "broker_id": 5, "cut_from": 8,
}  # fmt: skip
#: Columns of names: as wide as their longest value (up to ``_NAME_MAX_CH`` digits' width), so
#: a name such as CID_RMQ_SYS_TRANS is shown whole, not cut to "CID_RMQ…".
_NAME_COLUMNS, _NAME_MAX_CH = ("group", "topic", "key", "consumer", "node", "role"), 32
_ROW_PX = 19
#: Rows a table box shows before it scrolls.
VISIBLE_ROWS = 8
#: The tables' font size and a cell's padding, left and right (px).
_FONT_PX, _PAD_PX = 11, 4
#: A table's bold title's font size (px): JupyterLab's widget text (--jp-widgets-font-size).
_TITLE_PX = 13


#: The inspector's CSS, scoped to its own tables: cells on one line, cut with "…"; lines
#: 1.4 high (an HTML widget's content inherits ipywidgets' line-height of 28 px, the height of
#: a button: lesson 00's tables tab drew its rows 28 px apart and was 980 px tall).
_INSPECTOR_CSS = (
    "<style>.mqlab-insp{line-height:1.4}"
    f".mqlab-insp table{{font-size:{_FONT_PX}px;border-collapse:collapse;"
    "table-layout:fixed}"
    f".mqlab-insp th{{padding:0 {_PAD_PX}px;text-align:left;vertical-align:bottom;"
    "line-height:1.1}"
    f".mqlab-insp td{{padding:0 {_PAD_PX}px;white-space:nowrap;overflow:hidden;"
    "text-overflow:ellipsis}"
    f".mqlab-insp .mqlab-table>b{{font-size:{_TITLE_PX}px;white-space:nowrap}}</style>"
)


def _table(title: str, df: pd.DataFrame, columns: list[str], *,
           col_ch: dict[str, int] | None = None, names: tuple[str, ...] = _NAME_COLUMNS,
           name_max_ch: int = _NAME_MAX_CH) -> str:  # fmt: skip
    """One inspector table. Each column is given room (px) for ``_COL_CH`` digits (or
    ``col_ch``'s), a name column (``names``) for its longest value up to ``name_max_ch``
    digits, measured by ``text_width.text_em`` (issue 28: a column of
    18 ``ch`` drew CID_RMQ_SYS_TRANS cut, its capitals being wider than a "0" and the padding
    coming out of the column), plus the padding; a value wider than its room is cut with "…"
    and shown whole on hover. The box is as wide as the table or its bold title, whichever is
    wider, so the title stays on one line."""
    ch = {**_COL_CH, **(col_ch or {})}
    cols = [c for c in columns if c in df.columns]
    # a yes/no column as ✔ or — (walk 4 of issue 28: lesson 00's process queues said
    # "dropped False" in every row; lesson 12's commit-log table already says ✔/—)
    shown = (
        df[cols]
        .head(MAX_ROWS)
        .map(lambda v: ("✔" if v else "—") if isinstance(v, bool | np.bool_) else v)
    )
    rooms = [  # px of text each column holds
        min(max([ch.get(c, 10) * ZERO_EM, *(text_em(str(v)) for v in shown[c])]),
            name_max_ch * ZERO_EM) * _FONT_PX
        if c in names else ch.get(c, 10) * ZERO_EM * _FONT_PX
        for c in cols
    ]  # fmt: skip
    widths = [math.ceil(room) + 2 * _PAD_PX for room in rooms]
    colgroup = "".join(f'<col style="width:{w}px">' for w in widths)
    head = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in cols)
    body = []
    for rec in shown.values.tolist():
        cells = []
        for v, room in zip(rec, rooms, strict=True):
            text = html.escape(str(v))
            cells.append(f'<td title="{text}">{text}</td>'
                         if text_em(str(v)) * _FONT_PX > room else f"<td>{text}</td>")  # fmt: skip
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = len(df) - MAX_ROWS
    if more > 0:
        body.append(f'<tr><td colspan="{len(cols)}">… {more} more rows</td></tr>')
    if not body:
        body.append(f'<tr><td colspan="{len(cols)}"><i>none</i></td></tr>')
    width = sum(widths)
    # the box holds its title on one line too (lesson 10's "queues of RMQ_SYS_TRANS_HALF_TOPIC"
    # wrapped over its 4 narrow columns)
    box = max(width, math.ceil(text_em(title, bold=True) * _TITLE_PX))
    height = (VISIBLE_ROWS + 3) * _ROW_PX  # more rows scroll inside the box
    return (
        f'<div class="mqlab-table" style="flex:0 0 auto;width:{box + 2}px;'
        f'max-height:{height}px;overflow:auto"><b>{html.escape(title)}</b>'
        f'<table style="width:{width}px">{colgroup}<tr>{head}</tr>{"".join(body)}</table></div>'
    )


#: The inspector's CSS, for a widget that draws ``inspector_table`` s inside a
#: ``<div class="mqlab-insp">`` of its own.
INSPECTOR_CSS = _INSPECTOR_CSS


def inspector_table(title: str, df: pd.DataFrame, columns: list[str], **sizes: Any) -> str:
    """One table box as the inspector draws its own (without the CSS: ``INSPECTOR_CSS``);
    ``sizes``: ``_table``'s ``col_ch``, ``names`` and ``name_max_ch``."""
    return _table(title, df, columns, **sizes)


def table_html(title: str, df: pd.DataFrame, columns: list[str], **sizes: Any) -> str:
    """One table drawn as the inspector draws its own (its CSS included: 11 px text, rows
    ``_ROW_PX`` high, columns sized to their text), for another widget's tab; ``sizes``:
    ``_table``'s ``col_ch``, ``names`` and ``name_max_ch``."""
    return (
        _INSPECTOR_CSS + '<div class="mqlab-insp">' + _table(title, df, columns, **sizes) + "</div>"
    )


#: The inspector's tables, by name; a panel shows ``DEFAULT_VIEWS`` unless told otherwise.
VIEWS = ("queues", "held_pulls", "allocation", "process_queues", "consumer_offsets",
         "commit_log", "consume_queue", "replication", "dledger")  # fmt: skip
DEFAULT_VIEWS = VIEWS[:5]


def replication_view(lab: Lab) -> pd.DataFrame:
    """Each broker node of a group with slaves: its commit-log end, how far it is behind its
    master, and on the master what it believes its slaves hold (``push2SlaveMaxOffset``);
    from ``lab.commit_logs(name)``. No rows without slaves."""
    rows = []
    names = dict.fromkeys(b.broker_config.broker_name for b in lab.brokers
                          if b.broker_config.broker_id != 0)  # fmt: skip
    for name in names:
        attrs = lab.commit_logs(name).attrs
        ends = attrs["max_offsets"]
        master = next(iter(ends))
        for i, (node, end) in enumerate(ends.items()):
            gone = node in attrs["stores_gone"]
            rows.append({
                "node": node, "role": ("master" if i == 0 else "slave")
                + (" (store gone)" if gone else ""),
                "max_offset": end, "bytes_behind": ends[master] - end,
                "push2_slave_max_offset": attrs["push2_slave_max_offset"] if i == 0 else "",
            })  # fmt: skip
    cols = ["node", "role", "max_offset", "bytes_behind", "push2_slave_max_offset"]
    return pd.DataFrame(rows, columns=cols)


def _commit_log_view(lab: Lab) -> pd.DataFrame:
    """broker-a's commit log, newest entry first, body and tags as text."""
    df = lab.commit_log()
    if df.empty:
        return df
    df = df.sort_values("commit_log_offset", ascending=False).head(MAX_ROWS + 1).copy()
    df["body"] = [b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)
                  for b in df["body"]]  # fmt: skip
    return df


def _consume_queue_view(lab: Lab, topic: str) -> pd.DataFrame:
    """The consume-queue units of every queue of ``topic`` on broker-a, newest first."""
    cols = ["queue_id", "queue_offset", "commit_log_offset", "size", "tags_code"]
    if not topic:
        return pd.DataFrame(columns=cols)
    qs = lab.queues(topic)
    ids = sorted(qs.loc[qs["broker"] == "broker-a", "queue_id"]) if not qs.empty else []
    frames = [lab.consume_queue(topic, q).assign(queue_id=q) for q in ids]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=cols)
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values("commit_log_offset", ascending=False)[cols]


def inspector_html(lab: Lab, topic: str, group: str,
                   views: Sequence[str] = DEFAULT_VIEWS) -> str:  # fmt: skip
    """The panel's inspector: a status line and small tables (``views``), side by side.

    ``commit_log`` and ``consume_queue`` (lesson 02) show broker-a's newest commit-log
    entries and the units of ``topic``'s consume queues that point at them; ``replication``
    each node of a group with slaves and how far behind its master it is
    (``replication_view``; the figure is ``figures.commit_logs_side_by_side``); ``dledger``
    each node of a DLedger group's role, term, vote, log end and committed index
    (``dledger_lab.dledger_view``).
    """
    bad = [v for v in views if v not in VIEWS]
    if bad:
        raise ValueError(f"unknown inspector views {bad}; choose from {list(VIEWS)}")
    held = lab.held_pulls()
    nxt = lab.next_timers(1, include_frames=False)
    nxt_s = f"next timer: {nxt[0].name} at t={nxt[0].due_ms}" if nxt else "no timers pending"
    status = (
        f"<div><b>t = {lab.now} ms</b> · {lab.events_run} events run · "
        f"{len(held)} parked pull(s) · {html.escape(nxt_s)}</div>"
    )

    def offsets_view() -> pd.DataFrame:
        offsets = lab.consumer_offsets()
        return offsets[offsets["group"] == group] if group else offsets

    def pq_view() -> pd.DataFrame:
        pq = lab.process_queues()
        running = [n for n, c in lab.consumers.items() if _running(c)]
        return pq[pq["consumer"].isin(running)]  # a killed consumer's process queues died

    build = {
        "queues": lambda: _table(f"queues of {topic}", lab.queues(topic) if topic else lab.queues(),
                                 ["broker", "queue_id", "min_offset", "max_offset"]),
        "held_pulls": lambda: _table("held pulls (PullRequestHoldService)", held,
                                     ["broker", "key", "consumer", "pull_from_this_offset",
                                      "suspend_timestamp", "deadline"]),
        "allocation": lambda: _table("allocation", lab.allocation(),
                                     ["consumer", "topic", "broker", "queue_id"]),
        "process_queues": lambda: _table("process queues", pq_view(),
                                         ["consumer", "topic", "queue_id", "msg_count",
                                          "queue_offset_max", "dropped"]),
        "consumer_offsets": lambda: _table(f"consumer offsets ({group or 'all groups'})",
                                           offsets_view(), ["group", "topic", "queue_id",
                                                            "offset", "max_offset", "lag"]),
        "commit_log": lambda: _table("commit log (broker-a, newest first)", _commit_log_view(lab),
                                     ["commit_log_offset", "size", "topic", "queue_id",
                                      "queue_offset", "tags", "body"]),
        "consume_queue": lambda: _table(f"consume queues of {topic} (newest first)",
                                        _consume_queue_view(lab, topic),
                                        ["queue_id", "queue_offset", "commit_log_offset", "size",
                                         "tags_code"]),
        "replication": lambda: _table("replication (commit-log ends)", replication_view(lab),
                                      ["node", "role", "max_offset", "bytes_behind",
                                       "push2_slave_max_offset"]),
        "dledger": lambda: _table("DLedger nodes (broker-a)", dledger_view(lab),
                                  ["node", "up", "role", "term", "voted_for", "end_index",
                                   "end_term", "committed", "broker_id", "cut_from"]),
    }  # fmt: skip
    tables = [build[v]() for v in views]
    return (
        _INSPECTOR_CSS
        + '<div class="mqlab-insp">'
        + status
        + '<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">'
        + "".join(tables)
        + "</div></div>"
    )


def _running(consumer: Any) -> bool:
    return bool(consumer.default_mq_push_consumer_impl.mq_client_factory.running)


# -- the timeline --------------------------------------------------------------------------------
def plot_mode(requested: str | None = None) -> str:
    """``"live"`` (a figure edited in place) or ``"static"`` (redrawn on each click);
    ``MQLAB_PLOT_MODE`` overrides.

    Live needs the anywidget package: the outcome explorer's live bar chart is a
    ``FigureWidget`` (plotly 6+ FigureWidget is an anywidget).
    """
    mode = (requested or os.environ.get("MQLAB_PLOT_MODE") or "live").strip().lower()
    if mode not in ("live", "static"):
        raise ValueError(f"plot mode must be 'live' or 'static', got {mode!r}")
    if mode == "live" and importlib.util.find_spec("anywidget") is None:
        return "static"
    return mode


_REASON_WHAT = {
    "message": "woken by a message", "timeout": "answered: suspend timed out",
    "dropped": "dropped unanswered", "unanswered": "still parked",
}  # fmt: skip


#: The tallest a panel's timeline is drawn (px): the panel, its log and the timeline fit a
#: laptop screen (issue 28).
MAX_TIMELINE_PX = 360


class TimelineView:
    """The last ``window_ms`` of the trace as swimlanes, redrawn in place on ``update()``.

    At most ``max_events`` events (the newest) are drawn, so a refresh stays cheap on a
    long trace. ``widget`` is the ``Output`` that shows it; ``figure`` the live figure.
    """

    def __init__(self, *, window_ms: int = 5000, max_events: int = 400, mode: str | None = None):
        if not isinstance(window_ms, int) or window_ms <= 0:
            raise ValueError(f"window_ms must be a whole number of ms > 0, got {window_ms!r}")
        self.window_ms = window_ms
        self.max_events = max_events
        self.mode = plot_mode(mode)
        self._scanned = 0  # trace events already scanned for hold-service events
        self._hold: list[TraceEvent] = []  # hold-service and stop events, for bars
        #: every node in order of its first trace event: the lanes keep this order on every
        #: redraw (ordered by the window's first events, they changed places on each click)
        self._lane_order: dict[str, None] = {}
        self._last_traces: dict[int, dict[str, Any]] = {}  # what each trace was set to
        self._last_layout: dict[str, Any] = {}
        #: live: the figure edited in place; both modes show it through ``widget``, an
        #: ``Output`` holding the figure's JSON (a browser's view is drawn from that whole
        #: state, also after a reload)
        self.figure: Any = self._build_figure() if self.mode == "live" else None
        self.widget: Any = widgets.Output()

    # -- events --------------------------------------------------------------------------------
    def new_trace(self) -> None:
        """The next ``update`` draws another trace (a replay): forget what was scanned of this
        one; the lanes keep their order, so the same node stays on the same row."""
        self._scanned = 0
        self._hold = []

    def window(self, lab: Lab) -> tuple[list[TraceEvent], list[TraceEvent], int, int]:
        """(window events, events for the parked-pull bars, lo, hi)."""
        evs = lab.trace.events
        for e in evs[self._scanned :]:
            self._lane_order.setdefault(e.node, None)
            if e.component.startswith(_HOLD) or (
                e.component == "SimDriver" and e.step in ("stop", "kill")
            ):
                self._hold.append(e)
        self._scanned = len(evs)
        hi = lab.now
        lo = max(0, hi - self.window_ms)
        start = bisect.bisect_left(evs, lo, key=lambda e: e.t_ms)
        if len(evs) - start > self.max_events:  # too many: the newest only, a shorter window
            start = len(evs) - self.max_events
            lo = evs[start].t_ms
        win = evs[start:]
        cut = bisect.bisect_left(self._hold, lo - HOLD_LOOKBACK_MS, key=lambda e: e.t_ms)
        if cut:
            del self._hold[:cut]
        first_seq = win[0].seq if win else None
        older = [e for e in self._hold if first_seq is None or e.seq < first_seq]
        return win, older + win, lo, hi

    def lanes(self, win: Sequence[TraceEvent]) -> list[str]:
        """The nodes with events in ``win``, top to bottom, in the trace's first-seen order."""
        present = {e.node for e in win}
        return [n for n in self._lane_order if n in present]

    # -- drawing -------------------------------------------------------------------------------
    def _build_figure(self) -> Any:
        import plotly.graph_objects as go

        fw = go.Figure()
        for reason, color in figures.REASON_COLORS.items():
            fw.add_trace(go.Bar(
                orientation="h", y=[], x=[], base=[], width=0.35, name=f"parked pull ({reason})",
                marker_color=color, opacity=0.35, hoverinfo="text", showlegend=False,
            ))  # fmt: skip
        for kind, color in figures.KIND_COLORS.items():
            fault = kind == Kind.FAULT
            fw.add_trace(go.Scatter(
                x=[], y=[], mode="markers", name=f"{kind} event", hoverinfo="text",
                marker={"color": color, "size": 12 if fault else 7,
                        "symbol": "x" if fault else "circle"}, showlegend=False,
            ))  # fmt: skip
        fw.update_layout(
            title="Node by node", xaxis_title="virtual time (ms)", yaxis_title="node",
            barmode="overlay", hovermode="closest", margin={"l": 10, "r": 10, "b": 40},
            height=320, xaxis={"tickformat": "d"},
            yaxis={"type": "category", "categoryorder": "array", "categoryarray": []},
        )  # fmt: skip
        figures.house_style(fw)  # the title below the modebar
        return fw

    @staticmethod
    def focus_range(win: Sequence[TraceEvent], lo: int, hi: int,
                    since_ms: int | None) -> tuple[int, int, float, float]:  # fmt: skip
        """The x range to show: from ``since_ms`` (when the last click began) to now, or with
        no click yet from the newest burst of events (after the last gap longer than a fifth
        of the window, at least 50 ms), padded 4 % (at least 2 ms) each side.

        Not the whole window: a click's events span a few ms, and a 5 000 ms axis would
        squeeze them, and the previous click's, against its two edges.
        """
        t0 = lo if since_ms is None else max(lo, since_ms)
        if since_ms is None and win:
            # no click yet: the newest burst of events (after the last long quiet gap)
            times = sorted({e.t_ms for e in win})
            t0 = max(lo, times[0])
            quiet = max(50, (hi - lo) // 5)
            for a, b in itertools.pairwise(times):
                if b - a > quiet:
                    t0 = b
        t1 = hi
        pad = max(2.0, 0.04 * (t1 - t0))
        x0, x1 = t0 - pad, t1 + pad
        # plotly hides a marker outside the axis and draws one on its edge whole, over the
        # lane names ("broker-a●", issue 28): an earlier event of the window within 1 % of
        # the span of the left edge is left out whole, the edge just past it
        band = 0.01 * (x1 - x0)
        on_edge = [e.t_ms for e in win if x0 - band < e.t_ms < x0 + band]
        if on_edge:
            x0 = max(on_edge) + band
        return t0, t1, x0, x1

    def update(self, lab: Lab, since_ms: int | None = None) -> None:
        """Redraw from the lab's trace; ``since_ms``: when the last click began (the x axis
        shows from there to now; zoom out or double-click for the whole window)."""
        win, with_hold, lo, hi = self.window(lab)
        t0, t1, x0, x1 = self.focus_range(win, lo, hi, since_ms)
        title = f"Node by node, t={t0}…{t1}"
        if t0 > lo:  # the axis shows part of what is drawn: say how much zooming out shows
            title += f" (zoom out: the last {hi - lo} ms are drawn)"
        lanes = self.lanes(win)
        if self.mode == "static":
            fig = figures.sequence_timeline(
                with_hold, nodes=lanes, start_ms=lo, end_ms=hi, title=title
            )
            fig.update_layout(height=min(fig.layout.height or 320, MAX_TIMELINE_PX))
            fig.update_xaxes(range=[x0, x1], **figures.integer_ticks(x0, x1))
            bundle = json.loads(fig.to_json())
            bundle.setdefault("config", {})
            self.widget.outputs = (
                {"output_type": "display_data", "metadata": {},
                 "data": {"application/vnd.plotly.v1+json": bundle, "text/plain": title}},
            )  # fmt: skip
            return
        bars: dict[str, tuple[list, list, list, list, list, list]] = {
            r: ([], [], [], [], [], []) for r in figures.REASON_COLORS
        }
        parked = []
        for r in figures.long_poll_wait_histogram_frame(with_hold).to_dict("records"):
            end = hi if pd.isna(r["end_t_ms"]) else int(r["end_t_ms"])
            if r["suspend_t_ms"] > hi or end < lo or r["broker"] not in lanes:
                continue
            parked.append((r, max(lo, int(r["suspend_t_ms"])), end))
        # pulls parked at the same time get rows of their own (translucent bars drawn over
        # each other blended into colours the legend does not show, issue 28)
        slots = figures.parked_pull_slots([(r["broker"], a, b) for r, a, b in parked])
        for (r, start, end), (offset, width) in zip(parked, slots, strict=True):
            ys, bases, xs, hover, offs, widths = bars[r["reason"]]
            ys.append(r["broker"])
            bases.append(start)
            xs.append(end - start)
            offs.append(offset)
            widths.append(width)
            hover.append(
                html.escape(f"parked pull {r['key']} offset {r['offset']}", quote=False)
                + f"<br>suspended t={r['suspend_t_ms']}, {_REASON_WHAT[r['reason']]} t={end}"
            )
        marks: dict[str, tuple[list, list, list]] = {k: ([], [], []) for k in figures.KIND_COLORS}
        for e in win:
            m = marks.get(e.kind)
            if m is not None:
                m[0].append(e.t_ms)
                m[1].append(e.node)
                m[2].append(html.escape(e.describe(), quote=False))
        # NOTE: performance: plotly validates every property set (~1 ms per trace), so
        # only traces and layout fields whose data changed are set.
        new = [
            dict(y=ys, base=bs, x=xs, hovertext=h, offset=o, width=w, showlegend=bool(ys))
            for ys, bs, xs, h, o, w in bars.values()
        ]
        new += [dict(x=xs, y=ys, hovertext=h, showlegend=bool(xs)) for xs, ys, h in marks.values()]
        ticks = figures.integer_ticks(x0, x1)
        layout = {"title.text": title, "xaxis.range": (x0, x1), "xaxis.dtick": ticks["dtick"],
                  "xaxis.tick0": 0, "xaxis.tickmode": "linear",
                  "yaxis.categoryarray": tuple(lanes[::-1]),
                  # exactly the lanes: a category outside them (an empty "0" lane seen after a
                  # reload) falls outside the range and is not drawn
                  "yaxis.range": (-0.5, max(len(lanes), 1) - 0.5),
                  "height": min(MAX_TIMELINE_PX, max(260, 40 * len(lanes) + 120))}  # fmt: skip
        fw = self.figure
        changed = not self.widget.outputs
        with fw.batch_update():
            for n, (tr, props) in enumerate(zip(fw.data, new, strict=True)):
                if self._last_traces.get(n) != props:
                    tr.update(props)
                    self._last_traces[n] = props
                    changed = True
            for key, value in layout.items():
                if self._last_layout.get(key) != value:
                    fw.layout[key] = value
                    self._last_layout[key] = value
                    changed = True
        if changed:
            self._show(fw, title)

    def _show(self, fig: Any, title: str) -> None:
        """Put ``fig`` in the ``Output`` as the plotly mimetype: a copy of its raw data and
        layout (validated as they were set; plotly.io.to_json took 11 ms for lesson 00's
        174 points, this 3 ms)."""
        bundle = json.loads(json.dumps({"data": fig._data, "layout": fig._layout}))
        bundle.setdefault("config", {})
        self.widget.outputs = (
            {"output_type": "display_data", "metadata": {},
             "data": {"application/vnd.plotly.v1+json": bundle, "text/plain": title}},
        )  # fmt: skip
