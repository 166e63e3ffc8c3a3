"""What the control panel shows: events in words, inspector tables, the live timeline.

Mirrors no RocketMQ class: this is the view half of ``mqlab.lab.widgets`` (the panel's
buttons live there). It owns three things, each cheap enough to redraw on every click:

- ``words(events)``: the trace events a click produced, as ``TraceEvent.describe()``
  lines, repeats folded and long runs summarised;
- ``inspector_html(lab, ...)``: small HTML tables (queues, held pulls, allocation,
  process queues, consumer offsets) built from the Lab's inspectors, row counts capped;
- ``TimelineView``: the swimlane timeline of the last ``window_ms`` of the trace. In
  ``"live"`` mode it is one ``plotly`` ``FigureWidget`` (needs anywidget) with fixed traces
  (event markers per kind, parked-pull bars from ``figures.long_poll_wait_histogram_frame``,
  in ``figures.sequence_timeline``'s colours) whose arrays change in place; frame arrows
  are left out. In ``"static"`` mode (``MQLAB_PLOT_MODE=static``, or no anywidget) it
  re-renders ``figures.sequence_timeline`` into an ``Output`` widget.

It also holds ``PanelListener``, the listener whose mode the panel's "listener fails"
toggle flips. It must not know about buttons or change the lab's state.
"""

from __future__ import annotations

import bisect
import html
import importlib.util
import json
import os
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd
import traitlets

from mqlab.client.allocate import STRATEGIES_BY_NAME
from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus
from mqlab.lab import figures
from mqlab.remoting.codes import ResponseCode
from mqlab.trace.events import Kind, TraceEvent

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab
    from mqlab.runtime.raw_client import Call

__all__ = [
    "PanelListener",
    "NumberText",
    "strategy_names",
    "build_inputs",
    "section_rows",
    "call_words",
    "words",
    "code_name",
    "inspector_html",
    "plot_mode",
    "TimelineView",
    "MAX_ROWS",
]

#: Rows per inspector table before "… N more rows".
MAX_ROWS = 12
#: Parked pulls that started this long before the window still get their bar.
HOLD_LOOKBACK_MS = 60_000
_HOLD = figures.HOLD + "."


class PanelListener:
    """A concurrent listener the panel's toggle switches between success and failure.

    ``fails`` False answers CONSUME_SUCCESS, True answers RECONSUME_LATER (the consumer sends
    the message back for a later retry; lesson 07). ``calls`` counts the calls.

    The mode lives in this object, not in the Lab's journal: a ``lab.fork()`` replays the
    consumers with this same object, so a fork sees the listener's *current* mode.
    """

    __slots__ = ("fails", "calls")

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.calls = 0

    def __call__(self, msgs: list, context: Any) -> ConsumeConcurrentlyStatus:
        self.calls += 1
        if self.fails:
            return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def __repr__(self) -> str:
        return f"PanelListener({'RECONSUME_LATER' if self.fails else 'CONSUME_SUCCESS'})"


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


def build_inputs(lab: Lab, topic: str, group: str, strategies: list[str]) -> dict[str, Any]:
    """The panel's input widgets by name, toggles set from broker-a's config."""
    W = widgets
    lay = {"layout": W.Layout(width="150px")}
    b0 = lab.brokers[0].broker_config
    return {
        "topic": W.Text(topic, description="topic", **lay),
        "tags": W.Text("TagA", description="tags", **lay),
        "body": W.Text("msg-{i}", description="body", **lay),
        "count": NumberText("1", description="count", **lay),
        "broker": W.Dropdown(options=[b.name for b in lab.brokers], description="broker", **lay),
        "queue_id": NumberText("0", description="queue id", **lay),
        "offset": NumberText("", description="offset", placeholder="max", **lay),
        "suspend": W.Checkbox(True, description="suspend", indent=False, **lay),
        "timeout_ms": NumberText("15000", description="suspend ms", **lay),
        "subscription": W.Text("*", description="subscr.", **lay),
        "consumer": W.Dropdown(options=[], description="consumer", **lay),
        "group": W.Text(group, description="group", **lay),
        "expression": W.Text("*", description="tags expr", **lay),
        "persist_first": W.Checkbox(False, description="persist first", indent=False, **lay),
        "advance_ms": NumberText("100", description="ms", **lay),
        "long_polling": W.Checkbox(b0.long_polling_enable, description="longPollingEnable",
                                   indent=False),
        "auto_create_topic": W.Checkbox(b0.auto_create_topic_enable, indent=False,
                                        description="autoCreateTopicEnable"),
        "strategy": W.Dropdown(options=strategies, value="AVG", description="allocate"),
        "listener": W.ToggleButtons(options=["succeeds", "fails"], description="listener"),
    }  # fmt: skip


def section_rows(
    i: dict[str, Any], b: dict[str, Any], inspector: Any, figure: Any, log: Any
) -> dict[str, list[Any]]:
    """The widgets of each panel section (``widgets.SECTIONS``), left to right."""
    return {
        "send": [i["topic"], i["tags"], i["body"], i["count"], b["send"]],
        "pull": [i["broker"], i["queue_id"], i["offset"], i["suspend"], i["timeout_ms"],
                 i["subscription"], b["pull"]],
        "consumers": [i["consumer"], i["group"], i["expression"], b["add_consumer"],
                      b["remove_consumer"], b["kill_consumer"], i["persist_first"],
                      b["rebalance"], b["persist_offsets"]],
        "time": [i["advance_ms"], b["advance"], b["next_timer"], b["long_poll_timeout"]],
        "toggles": [i["long_polling"], i["auto_create_topic"], i["strategy"], i["listener"]],
        "inspect": [widgets.VBox([b["refresh"], inspector])],
        "figure": [figure] if figure is not None else [],
        "log": [log],
    }  # fmt: skip


# -- events in words -------------------------------------------------------------------------
def words(events: Sequence[TraceEvent], *, limit: int = 20) -> list[str]:
    """The events as lines: repeats of one line folded ("(×3)"), at most ``limit`` lines.

    When there are more, the first and last ``limit // 2`` lines are kept and one line says
    how many were left out and which components they came from.
    """
    lines: list[str] = []
    counts: list[int] = []
    comps: list[str] = []
    for e in events:
        d = e.describe()
        if lines and lines[-1] == d:
            counts[-1] += 1
            continue
        lines.append(d)
        counts.append(1)
        comps.append(e.component)
    out = [line if n == 1 else f"{line} (×{n})" for line, n in zip(lines, counts, strict=True)]
    if len(out) <= limit:
        return out
    head, tail = limit // 2, limit - limit // 2 - 1
    hidden = Counter(comps[head : len(out) - tail])
    top = ", ".join(
        f"{c} ×{n}" for c, n in sorted(hidden.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    )
    skipped = len(out) - head - tail
    return [*out[:head], f"… {skipped} more lines ({top}); see lab.events()", *out[-tail:]]


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
def _table(title: str, df: pd.DataFrame, columns: list[str]) -> str:
    cols = [c for c in columns if c in df.columns]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for rec in df[cols].head(MAX_ROWS).values.tolist():
        body.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in rec) + "</tr>")
    more = len(df) - MAX_ROWS
    if more > 0:
        body.append(f'<tr><td colspan="{len(cols)}">… {more} more rows</td></tr>')
    if not body:
        body.append(f'<tr><td colspan="{len(cols)}"><i>none</i></td></tr>')
    return (
        f'<div class="mqlab-table"><b>{html.escape(title)}</b>'
        f'<table style="font-size:11px;border-collapse:collapse"><tr>{head}</tr>'
        f"{''.join(body)}</table></div>"
    )


def inspector_html(lab: Lab, topic: str, group: str) -> str:
    """The panel's inspector: a status line and five small tables, side by side."""
    held = lab.held_pulls()
    nxt = lab.next_timers(1, include_frames=False)
    nxt_s = f"next timer: {nxt[0].name} at t={nxt[0].due_ms}" if nxt else "no timers pending"
    status = (
        f"<div><b>t = {lab.now} ms</b> · {lab.events_run} events run · "
        f"{len(held)} parked pull(s) · {html.escape(nxt_s)}</div>"
    )
    offsets = lab.consumer_offsets()
    pq = lab.process_queues()
    running = [n for n, c in lab.consumers.items() if _running(c)]
    pq = pq[pq["consumer"].isin(running)]  # a killed consumer's process queues died with it
    if group:
        offsets = offsets[offsets["group"] == group]
    tables = [
        _table(f"queues of {topic}", lab.queues(topic) if topic else lab.queues(),
               ["broker", "queue_id", "min_offset", "max_offset"]),
        _table("held pulls (PullRequestHoldService)", held,
               ["broker", "key", "consumer", "pull_from_this_offset", "suspend_timestamp",
                "deadline"]),
        _table("allocation", lab.allocation(), ["consumer", "topic", "broker", "queue_id"]),
        _table("process queues", pq,
               ["consumer", "topic", "queue_id", "msg_count", "queue_offset_max", "dropped"]),
        _table(f"consumer offsets ({group or 'all groups'})", offsets,
               ["group", "topic", "queue_id", "offset", "max_offset", "lag"]),
    ]  # fmt: skip
    return (
        status
        + '<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">'
        + "".join(tables)
        + "</div>"
    )


def _running(consumer: Any) -> bool:
    return bool(consumer.default_mq_push_consumer_impl.mq_client_factory.running)


# -- the timeline --------------------------------------------------------------------------------
def plot_mode(requested: str | None = None) -> str:
    """``"live"`` (FigureWidget) or ``"static"`` (Output); ``MQLAB_PLOT_MODE`` overrides.

    Live needs the anywidget package (plotly 6+ FigureWidget is an anywidget).
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


class TimelineView:
    """The last ``window_ms`` of the trace as swimlanes, redrawn in place on ``update()``.

    At most ``max_events`` events (the newest) are drawn, so a refresh stays cheap on a
    long trace. ``widget`` is the ``FigureWidget`` (live) or the ``Output`` (static).
    """

    def __init__(self, *, window_ms: int = 5000, max_events: int = 400, mode: str | None = None):
        if not isinstance(window_ms, int) or window_ms <= 0:
            raise ValueError(f"window_ms must be a whole number of ms > 0, got {window_ms!r}")
        self.window_ms = window_ms
        self.max_events = max_events
        self.mode = plot_mode(mode)
        self._scanned = 0  # trace events already scanned for hold-service events
        self._hold: list[TraceEvent] = []  # hold-service and stop events, for bars
        self.widget: Any = None
        self._last_traces: dict[int, dict[str, Any]] = {}  # what each trace was set to
        self._last_layout: dict[str, Any] = {}
        if self.mode == "live":
            try:
                self.widget = self._build_figure_widget()
            except Exception:  # noqa: BLE001 — any frontend problem: fall back to static
                self.mode = "static"
        if self.mode == "static":
            self.widget = widgets.Output()

    # -- events --------------------------------------------------------------------------------
    def window(self, lab: Lab) -> tuple[list[TraceEvent], list[TraceEvent], int, int]:
        """(window events, events for the parked-pull bars, lo, hi)."""
        evs = lab.trace.events
        for e in evs[self._scanned :]:
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

    # -- drawing -------------------------------------------------------------------------------
    def _build_figure_widget(self) -> Any:
        import plotly.graph_objects as go

        fw = go.FigureWidget()
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
            xaxis_title="virtual time (ms)", yaxis_title="node", barmode="overlay",
            hovermode="closest", margin={"l": 10, "r": 10, "t": 40, "b": 40}, height=320,
            yaxis={"type": "category", "categoryorder": "array", "categoryarray": []},
        )  # fmt: skip
        return fw

    def update(self, lab: Lab) -> None:
        """Redraw from the lab's trace."""
        win, with_hold, lo, hi = self.window(lab)
        title = f"Last {hi - lo} ms, node by node (t={lo}…{hi})"
        if self.mode == "static":
            fig = figures.sequence_timeline(with_hold, start_ms=lo, end_ms=hi, title=title)
            fig.update_layout(height=min(fig.layout.height or 320, 420))
            bundle = json.loads(fig.to_json())
            bundle.setdefault("config", {})
            self.widget.outputs = (
                {"output_type": "display_data", "metadata": {},
                 "data": {"application/vnd.plotly.v1+json": bundle, "text/plain": title}},
            )  # fmt: skip
            return
        lanes = list(dict.fromkeys(e.node for e in win))
        bars: dict[str, tuple[list, list, list, list]] = {
            r: ([], [], [], []) for r in figures.REASON_COLORS
        }
        for r in figures.long_poll_wait_histogram_frame(with_hold).to_dict("records"):
            end = hi if pd.isna(r["end_t_ms"]) else int(r["end_t_ms"])
            if r["suspend_t_ms"] > hi or end < lo or r["broker"] not in lanes:
                continue
            ys, bases, xs, hover = bars[r["reason"]]
            start = max(lo, int(r["suspend_t_ms"]))
            ys.append(r["broker"])
            bases.append(start)
            xs.append(end - start)
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
            dict(y=ys, base=bs, x=xs, hovertext=h, showlegend=bool(ys))
            for ys, bs, xs, h in bars.values()
        ]
        new += [dict(x=xs, y=ys, hovertext=h, showlegend=bool(xs)) for xs, ys, h in marks.values()]
        layout = {"title": title, "xaxis.range": (lo - 1, hi + 1),
                  "yaxis.categoryarray": tuple(lanes[::-1]),
                  "height": max(260, 40 * len(lanes) + 120)}  # fmt: skip
        fw = self.widget
        with fw.batch_update():
            for n, (tr, props) in enumerate(zip(fw.data, new, strict=True)):
                if self._last_traces.get(n) != props:
                    tr.update(props)
                    self._last_traces[n] = props
            for key, value in layout.items():
                if self._last_layout.get(key) != value:
                    fw.layout[key] = value
                    self._last_layout[key] = value
