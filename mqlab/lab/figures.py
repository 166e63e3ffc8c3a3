"""Figures: plotly pictures of a recorded run, for lessons and slides.

Mirrors no RocketMQ class: this is mqlab's ``reporting.py`` .
Figures read trace events after the fact; they never touch a broker, client or driver, and
mechanism modules never plot. Each figure comes in two halves: a pure
``<figure>_frame(events)`` that turns events into a tidy pandas frame (tests check its
numbers exactly, not pixels), and ``<figure>(source, ...)`` that draws that frame as a
``plotly.graph_objects.Figure`` with a title, axis labels, a legend and hover text.

``source`` may be a ``Lab``, a ``TraceRecorder``, a list of ``TraceEvent`` or a frame from
``lab.events()`` / ``recorder.to_pandas()``. The event shapes each frame reads (component,
step: fields) are listed in its docstring; client-side shapes are those that
``mqlab/client/consumer`` emits, so events of those shapes alone (or synthetic ones in tests)
are enough to draw the figure. The byte map is the exception: it draws one stored entry
from ``inspect.commit_log_fields``.

Every figure ends in ``house_style(fig)``: the title below plotly's modebar, whole-number
ticks on axes whose data are whole numbers; ``mqlab.lab.figure_check`` holds every lesson
figure to that and to three more rules (colours explained, no translucent bars over each
other, no line hidden on another).

``export(fig, "fig.png")`` writes PNG/SVG/PDF for slides through the optional ``kaleido``
package (≥ 1, which also needs Chrome); ``can_export()`` says whether it is installed, and
``export`` says how to install it when it is not.
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from mqlab.lab.allocation import allocation_snapshots
from mqlab.lab.allocation import mq_label as _mq_label
from mqlab.lab.allocation import node_stopped as _stopped
from mqlab.lab.allocation import queue_sort_key as _queue_sort_key
from mqlab.lab.inspect import commit_log_fields
from mqlab.trace.events import Kind, TraceEvent

__all__ = [
    "sequence_timeline_frame", "request_arrows_frame", "sequence_timeline",
    "long_poll_wait_histogram_frame", "long_poll_wait_histogram",
    "allocation_heatmap_frame", "allocation_heatmap",
    "offsets_over_time_frame", "offsets_over_time",
    "commit_log_byte_map_frame", "commit_log_byte_map",
    "flow_control_episodes_frame", "flow_control_episodes",
    "commit_logs_side_by_side_frame", "commit_logs_side_by_side", "REPLICA_COLORS",
    "can_export", "export", "KALEIDO_MISSING",
    "house_style", "integer_ticks", "parked_pull_slots", "byte_label_positions",
]  # fmt: skip

#: Marker colour per event kind (``Kind``); send/recv are drawn as arrows instead.
KIND_COLORS = {
    Kind.STEP: "#1f77b4", Kind.TIMER: "#7f7f7f", Kind.STATE: "#2ca02c",
    Kind.FAULT: "#d62728", Kind.ERROR: "#ff7f0e",
}  # fmt: skip
REASON_COLORS = {
    "message": "#2ca02c", "timeout": "#ff7f0e", "dropped": "#d62728", "unanswered": "#9467bd",
}  # fmt: skip
FLOW_CONTROL_COLORS = {"count": "#d62728", "size": "#9467bd", "span": "#8c564b"}
OVERLAP = "overlap (2+ consumers)"
OVERLAP_COLOR = "#222222"
#: A queue no consumer holds (a killed consumer's, or one not yet allocated): a mid grey,
#: told apart on a projector from the plot's pale background, the consumers' colours and
#: the overlaps' near-black (walk of issue 28: it was an empty cell, the background's colour).
NOBODY = "no consumer"
NOBODY_COLOR = "#a6a6a6"
#: Topics ``offsets_over_time`` leaves out unless ``include_system=True``.
SYSTEM_TOPICS = ("SCHEDULE_TOPIC_XXXX", "TBW102", "OFFSET_MOVED_EVENT", "SELF_TEST_TOPIC")
MAX_FAULT_LINES = 50

KALEIDO_MISSING = (
    "exporting figures to PNG/SVG needs the optional package kaleido (version 1 or later), "
    "which is not installed. Install it with `pip install kaleido` (kaleido >= 1 also needs "
    "Chrome: run `plotly_get_chrome`, or install chromium). The figure still shows in the "
    "notebook, and fig.write_html(path) needs nothing extra."
)

# components and steps read below (notebooks/mechanisms.md lists them)
PULL = "PullMessageProcessor.processRequest"
HOLD = "PullRequestHoldService"
REPUT = "ReputMessageService.doReput"
UPDATE_OFFSET = "ConsumerManageProcessor.updateConsumerOffset"
PUSH_PULL = "DefaultMQPushConsumerImpl.pullMessage"


# -- reading events ------------------------------------------------------------------------
def _events(source: Any) -> list[TraceEvent]:
    """The events of a Lab, TraceRecorder, events frame or iterable of TraceEvent, by seq."""
    if isinstance(source, pd.DataFrame):
        return _events_from_frame(source)
    trace = getattr(source, "trace", None)  # a Lab
    if trace is not None and isinstance(getattr(trace, "events", None), list):
        return list(trace.events)
    if isinstance(getattr(source, "events", None), list):  # a TraceRecorder
        return list(source.events)
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        evs = list(source)
        bad = [e for e in evs if not isinstance(e, TraceEvent)]
        if not bad:
            return evs
        raise TypeError(f"source holds {type(bad[0]).__name__}, not TraceEvent")
    raise TypeError(
        "source must be a Lab, a TraceRecorder, a list of TraceEvent or an events DataFrame, "
        f"got {type(source).__name__}"
    )


def _events_from_frame(df: pd.DataFrame) -> list[TraceEvent]:
    missing = {"t_ms", "seq", "node", "component", "step", "kind"} - set(df.columns)
    if missing or not {"fields", "fields_obj"} & set(df.columns):
        raise ValueError(f"source frame lacks trace columns {sorted(missing) or ['fields']}")
    out = []
    for r in df.sort_values("seq").to_dict("records"):
        f = r.get("fields_obj", r.get("fields"))
        f = json.loads(f) if isinstance(f, str) else dict(f or {})
        out.append(TraceEvent(str(r.get("run_id", "")), int(r["t_ms"]), int(r["seq"]),
                              r["node"], r["component"], r["step"], r["kind"], f))  # fmt: skip
    return out


def _text(e: TraceEvent) -> str:
    """The event in words: its ``text`` field, or its fields as ``k=v``."""
    text = e.fields.get("text")
    if text is None:
        text = ", ".join(f"{k}={v}" for k, v in e.fields.items())
    return str(text)


def _hover(*lines: str) -> str:
    """Hover text: each line escaped (event text may hold "<"), joined by ``<br>``."""
    return "<br>".join(html.escape(line, quote=False) for line in lines)


def _empty(fig: go.Figure, what: str) -> go.Figure:
    fig.add_annotation(text=what, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return house_style(fig)


# -- house style: titles below the modebar, whole-number ticks --------------------------------
#: The title's top edge, px from the figure's top: below the modebar (plotly's toolbar, about
#: 28 px tall at the top right), so a long title never runs under it (issue 28).
TITLE_TOP_PX = 34
TITLE_FONT_PX = 17
#: Ticks a whole-number axis aims at (its step is the next 1, 2 or 5 × 10^k, at least 1).
TICKS = 8


def integer_ticks(lo: float, hi: float, *, ticks: int = TICKS) -> dict[str, Any]:
    """Axis settings whose ticks are whole numbers for data from ``lo`` to ``hi``: a dtick of
    1, 2 or 5 × 10^k (at least 1, about ``ticks`` ticks over the span) from 0, written
    without plotly's "10.02k"."""
    span = max(float(hi) - float(lo), 1.0)
    step = max(1, int(_nice_step(span / ticks)))
    return {"tickmode": "linear", "tick0": 0, "dtick": step, "tickformat": "d"}


def house_style(fig: go.Figure) -> go.Figure:
    """The figures' shared style, applied last: the title's first line sits ``TITLE_TOP_PX``
    below the top, clear of the modebar, with a top margin that holds all its lines; every
    linear axis whose data are all whole numbers gets whole-number ticks (``integer_ticks``
    over its range, or its data's). The figure check (``mqlab.lab.figure_check``) holds
    every lesson figure to this."""
    from mqlab.lab.figure_check import whole_number_axes

    text = fig.layout.title.text or ""
    lines = [ln for ln in re.split(r"<br\s*/?>", text) if ln.strip()]
    if lines:
        size = fig.layout.title.font.size or TITLE_FONT_PX
        heights = [1.3 * size * (0.7 if ln.lstrip().startswith("<sup>") else 1) for ln in lines]
        height = sum(heights)
        t = fig.layout.margin.t
        # subplot titles sit just above the plots: room for them under the title
        height += 22 * any(a.yref == "paper" and (a.y or 0) >= 0.99 and a.yanchor == "bottom"
                           for a in fig.layout.annotations)  # fmt: skip
        fig.update_layout(
            # plotly anchors a title's last line and stacks the others above it: the pad
            # holds them too, so the first line's top is TITLE_TOP_PX down
            title={"y": 1, "yref": "container", "yanchor": "top", "x": 0.02, "xanchor": "left",
                   "pad": {"t": math.ceil(TITLE_TOP_PX + height - heights[0])}},
            margin={"t": max(t or 0, math.ceil(TITLE_TOP_PX + height + 12))},
        )  # fmt: skip
    for axis, (lo, hi) in whole_number_axes(fig).items():
        if fig.layout[axis].tickmode == "array":
            continue  # ticks of its own (a figure's labelled positions)
        rng = fig.layout[axis].range
        if rng is not None and None not in rng:
            lo, hi = rng
        fig.layout[axis].update(integer_ticks(lo, hi))
        if lo == hi:  # a flat line: an axis from lo to lo + 1, not from lo − 1
            fig.layout[axis].update(range=[lo, lo + 1])
    return fig


#: The band of a timeline lane that parked-pull bars share (the lane is 1 wide).
PARKED_BAND = 0.6


def parked_pull_slots(bars: list[tuple[str, int, int]]) -> list[tuple[float, float]]:
    """(offset, width) of each parked-pull bar ``(lane, start, end)`` so that none overlaps
    another: pulls parked at the same time on one lane get rows of their own in the lane's
    band (``PARKED_BAND``), the first free row from the top, so five pulls are five bars and
    not one blend of five translucent colours (issue 28)."""
    slot: list[int] = [0] * len(bars)
    ends: dict[str, list[int]] = {}  # lane → the end of the last bar in each row
    for i in sorted(range(len(bars)), key=lambda i: (bars[i][1], bars[i][2], i)):
        lane, start, end = bars[i]
        rows = ends.setdefault(lane, [])
        free = next((r for r, e in enumerate(rows) if e <= start), None)
        if free is None:
            free = len(rows)
            rows.append(end)
        rows[free] = max(end, start)
        slot[i] = free
    out = []
    for (lane, _, _), k in zip(bars, slot, strict=True):
        n = len(ends[lane])
        width = PARKED_BAND / n
        out.append((PARKED_BAND / 2 - (k + 1) * width, width * 0.9))
    return out


# -- sequence timeline ---------------------------------------------------------------------
def sequence_timeline_frame(events: Any) -> pd.DataFrame:
    """One row per event: ``seq, t_ms, node, component, step, kind, text``."""
    rows = [
        {"seq": e.seq, "t_ms": e.t_ms, "node": e.node, "component": e.component,
         "step": e.step, "kind": e.kind, "text": _text(e)}
        for e in _events(events)
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["seq", "t_ms", "node", "component", "step", "kind", "text"])


def request_arrows_frame(events: Any) -> pd.DataFrame:
    """Remoting frames as arrows: each ``send`` event paired with its ``recv``.

    Reads ``RemotingCommand`` send (code, opaque, to, bytes, response) and recv (code,
    opaque, frm, response) events, which a lab records at ``trace_level="frames"``. A send
    is paired with the first later recv of the same (sender, receiver, opaque, response);
    one still in flight, or lost to a closed connection or a stopped node, has
    ``delivered`` False and no receive columns.

    Returns:
        ``send_seq, t_send, src, dst, code, opaque, response, bytes, recv_seq, t_recv,
        latency_ms, delivered`` (receive columns nullable ``Int64``).
    """
    rows: list[dict[str, Any]] = []
    pending: dict[tuple, deque[dict[str, Any]]] = {}
    for e in _events(events):
        f = e.fields
        if e.component == "RemotingCommand" and e.kind == Kind.SEND:
            row = {"send_seq": e.seq, "t_send": e.t_ms, "src": e.node, "dst": f.get("to"),
                   "code": f.get("code"), "opaque": f.get("opaque"),
                   "response": bool(f.get("response")), "bytes": f.get("bytes"),
                   "recv_seq": None, "t_recv": None, "latency_ms": None,
                   "delivered": False}  # fmt: skip
            rows.append(row)
            key = (e.node, row["dst"], row["opaque"], row["response"])
            pending.setdefault(key, deque()).append(row)
        elif e.component == "RemotingCommand" and e.kind == Kind.RECV:
            key = (f.get("frm"), e.node, f.get("opaque"), bool(f.get("response")))
            queue = pending.get(key)
            if queue:
                row = queue.popleft()
                row.update(recv_seq=e.seq, t_recv=e.t_ms, latency_ms=e.t_ms - row["t_send"],
                           delivered=True)  # fmt: skip
        elif _stopped(e) or (e.component == "SimNetwork" and e.step == "close"):
            if _stopped(e):  # frames to or from a stopped node are never delivered
                lost = [k for k in pending if e.node in (k[0], k[1])]
            else:  # frames in flight on a closed connection are dropped
                ends = {f.get("client"), f.get("server")}
                lost = [k for k in pending if {k[0], k[1]} == ends]
            for key in lost:
                del pending[key]
    cols = ["send_seq", "t_send", "src", "dst", "code", "opaque", "response", "bytes",
            "recv_seq", "t_recv", "latency_ms", "delivered"]  # fmt: skip
    df = pd.DataFrame(rows, columns=cols)
    return df.astype({"recv_seq": "Int64", "t_recv": "Int64", "latency_ms": "Int64"})


def sequence_timeline(
    source: Any,
    *,
    nodes: list[str] | None = None,
    start_ms: int | None = None,
    end_ms: int | None = None,
    title: str = "What happened, node by node",
) -> go.Figure:
    """Swimlanes: one lane per node, time to the right.

    Markers are events coloured by kind (hover: the event in words); arrows are remoting
    frames when the trace has FRAMES (requests solid, responses dotted); bars are pulls
    parked in ``PullRequestHoldService`` from suspend to answer; faults are red crosses with
    a dotted red line (the first 50).

    Args:
        source: a Lab, TraceRecorder, list of TraceEvent or events frame.
        nodes: the lanes to show, top to bottom (default: every node, in order of first event).
        start_ms / end_ms: a time window (inclusive).
        title: the figure title.
    """
    evs = _events(source)
    lo = -(2**62) if start_ms is None else start_ms
    hi = 2**62 if end_ms is None else end_ms
    ev = sequence_timeline_frame(evs)
    ev = ev[(ev["t_ms"] >= lo) & (ev["t_ms"] <= hi)]
    lanes = list(nodes) if nodes is not None else list(dict.fromkeys(ev["node"]))
    ev = ev[ev["node"].isin(lanes)]
    fig = go.Figure()
    fig.update_layout(
        title=title, xaxis_title="virtual time (ms)", yaxis_title="node", barmode="overlay",
        legend_title="", hovermode="closest", height=max(320, 70 * len(lanes) + 150),
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": lanes[::-1]},
    )  # fmt: skip
    if ev.empty:
        return _empty(fig, "no trace events in this window")
    end_of_trace = int(ev["t_ms"].max())
    # the axis is the requested window (the events' span where a bound is not given); a
    # parked pull that began before it or ends after it is clipped, never stretching the axis
    x0 = int(ev["t_ms"].min()) if start_ms is None else int(start_ms)
    x1 = end_of_trace if end_ms is None else int(end_ms)
    # with a margin of 2 % (at least 1 ms) each side: an event on the axis's edge was drawn
    # as half a dot (issue 28's walk: lessons 01, 03, 07 and 10)
    pad = max(1, math.ceil(0.02 * (x1 - x0)))
    fig.update_xaxes(range=[x0 - pad, max(x1, x0 + 1) + pad])
    # parked pulls: bars under the markers
    pulls = long_poll_wait_histogram_frame(evs)
    pulls = pulls[pulls["broker"].isin(lanes) & (pulls["suspend_t_ms"] <= hi)]
    what = {"message": "woken by a message", "timeout": "answered: suspend timed out",
            "dropped": "dropped unanswered", "unanswered": "still parked at the end"}  # fmt: skip
    bars = []  # (reason, lane, base, tip, hover) of each parked pull in the window
    for r in pulls.to_dict("records"):
        end = end_of_trace if pd.isna(r["end_t_ms"]) else int(r["end_t_ms"])
        if end < lo:
            continue
        base, tip = max(int(r["suspend_t_ms"]), x0), min(end, x1)
        after = "" if r["reason"] == "unanswered" else f" after {end - r['suspend_t_ms']} ms"
        hover = _hover(f"parked pull {r['key']} offset {r['offset']}",
                       f"suspended t={r['suspend_t_ms']}, {what[r['reason']]} t={end}{after}")  # fmt: skip
        bars.append((r["reason"], r["broker"], base, tip, hover))
    slots = parked_pull_slots([(lane, b, t) for _, lane, b, t, _ in bars])
    for reason in REASON_COLORS:
        mine = [(b, s) for b, s in zip(bars, slots, strict=True) if b[0] == reason]
        if not mine:
            continue
        fig.add_trace(go.Bar(
            orientation="h", y=[b[1] for b, _ in mine], base=[b[2] for b, _ in mine],
            x=[b[3] - b[2] for b, _ in mine], offset=[s[0] for _, s in mine],
            width=[s[1] for _, s in mine], name=f"parked pull ({reason})",
            marker_color=REASON_COLORS[reason], opacity=0.35,
            hovertext=[b[4] for b, _ in mine], hoverinfo="text",
        ))  # fmt: skip
    # frames: one trace per direction, line segments with an arrow head at the receiver
    arrows = request_arrows_frame(evs)
    arrows = arrows[arrows["delivered"] & arrows["src"].isin(lanes) & arrows["dst"].isin(lanes)]
    arrows = arrows[(arrows["t_send"] >= lo) & (arrows["t_send"] <= hi)]
    for response, name, dash in ((False, "request", "solid"), (True, "response", "dot")):
        a = arrows[arrows["response"] == response]
        if a.empty:
            continue
        xs: list[Any] = []
        ys: list[Any] = []
        texts: list[Any] = []
        for r in a.itertuples(index=False):
            label = _hover(f"{r.code} {r.src} → {r.dst} (opaque {r.opaque}, {r.bytes} B), "
                           f"sent t={r.t_send}, received t={r.t_recv}")  # fmt: skip
            xs += [r.t_send, int(r.t_recv), None]
            ys += [r.src, r.dst, None]
            texts += [label, label, None]
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines+markers", name=name, hovertext=texts, hoverinfo="text",
            line={"width": 1, "dash": dash, "color": "#555555" if response else "#17becf"},
            marker={"symbol": ["circle", "arrow", "circle"] * len(a), "angleref": "previous",
                    "size": [3, 10, 0] * len(a)},
        ))  # fmt: skip
    # events: one marker trace per kind
    for kind, color in KIND_COLORS.items():
        k = ev[ev["kind"] == kind]
        if k.empty:
            continue
        hover = [
            _hover(f"t={t} seq {s} {n}", f"{c} step {st}", tx)
            for t, s, n, c, st, tx in zip(k["t_ms"], k["seq"], k["node"], k["component"],
                                          k["step"], k["text"], strict=True)
        ]  # fmt: skip
        fault = kind == Kind.FAULT
        fig.add_trace(go.Scatter(
            x=list(k["t_ms"]), y=list(k["node"]), mode="markers", name=f"{kind} event",
            marker={"color": color, "size": 12 if fault else 7,
                    "symbol": "x" if fault else "circle"},
            hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    for t in list(ev.loc[ev["kind"] == Kind.FAULT, "t_ms"])[:MAX_FAULT_LINES]:
        fig.add_vline(x=int(t), line_dash="dot", line_color=KIND_COLORS[Kind.FAULT], opacity=0.6)
    return house_style(fig)


# -- long polling --------------------------------------------------------------------------
def long_poll_wait_histogram_frame(events: Any) -> pd.DataFrame:
    """One row per parked pull: when it was suspended, when and why it was answered.

    Reads ``PullRequestHoldService.suspendPullRequest`` "suspend" (key, offset,
    timeout_millis, deadline) and ``PullRequestHoldService.notifyMessageArriving`` step "3"
    with ``match`` True (a message woke it: reason ``"message"``) or step "4" (suspended
    long enough: reason ``"timeout"``); ``notifyMessageArriving`` steps 3–4. Answers are paired with
    suspends first-in first-out per (broker, key, offset).

    A pull that ends unanswered has reason ``"dropped"`` and ``end_t_ms`` set when its broker
    stopped (``SimDriver`` stop/kill) or when a ``PullRequestHoldService.channelClosed``
    "drop" event (key, offset) names it; any other pull without an answer is
    ``"unanswered"`` (still parked at the end of the trace, as far as the trace tells: the
    hold service drops a closed connection's pulls without an event today).

    Returns:
        ``broker, key, topic, queue_id, offset, suspend_seq, suspend_t_ms, timeout_millis,
        deadline, answer_seq, answer_t_ms, wait_ms, end_t_ms, reason`` (answer and end
        columns ``Int64``; ``end_t_ms`` is the answer or drop time).
    """
    rows: list[dict[str, Any]] = []
    parked: dict[tuple, deque[dict[str, Any]]] = {}
    for e in _events(events):
        f = e.fields
        if e.component == HOLD + ".suspendPullRequest" and e.step == "suspend":
            topic, _, qid = str(f.get("key")).rpartition("@")
            row = {"broker": e.node, "key": f.get("key"), "topic": topic,
                   "queue_id": int(qid) if qid.lstrip("-").isdigit() else None,
                   "offset": f.get("offset"), "suspend_seq": e.seq, "suspend_t_ms": e.t_ms,
                   "timeout_millis": f.get("timeout_millis"), "deadline": f.get("deadline"),
                   "answer_seq": None, "answer_t_ms": None, "wait_ms": None,
                   "end_t_ms": None, "reason": "unanswered"}  # fmt: skip
            rows.append(row)
            parked.setdefault((e.node, row["key"], row["offset"]), deque()).append(row)
        elif e.component == HOLD + ".notifyMessageArriving" and (
            e.step == "4" or (e.step == "3" and f.get("match"))
        ):
            queue = parked.get((e.node, f.get("key"), f.get("offset")))
            if queue:
                row = queue.popleft()
                row.update(answer_seq=e.seq, answer_t_ms=e.t_ms, end_t_ms=e.t_ms,
                           wait_ms=e.t_ms - row["suspend_t_ms"],
                           reason="message" if e.step == "3" else "timeout")  # fmt: skip
        elif e.component == HOLD + ".channelClosed" and e.step == "drop":
            queue = parked.get((e.node, f.get("key"), f.get("offset")))
            if queue:
                queue.popleft().update(end_t_ms=e.t_ms, reason="dropped")
        elif _stopped(e):
            for key in [k for k in parked if k[0] == e.node]:
                for row in parked.pop(key):
                    row.update(end_t_ms=e.t_ms, reason="dropped")
    cols = ["broker", "key", "topic", "queue_id", "offset", "suspend_seq", "suspend_t_ms",
            "timeout_millis", "deadline", "answer_seq", "answer_t_ms", "wait_ms", "end_t_ms",
            "reason"]  # fmt: skip
    df = pd.DataFrame(rows, columns=cols)
    ints = ("answer_seq", "answer_t_ms", "wait_ms", "end_t_ms")
    return df.astype(dict.fromkeys(ints, "Int64"))


def _nice_step(x: float) -> float:
    """The smallest 1, 2 or 5 × 10^k that is at least ``x`` (x > 0)."""
    k = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10**k >= x:
            return float(m * 10**k)
    return float(10 ** (k + 1))


def _polling_mode(source: Any) -> str | None:
    """ "long" / "short" when ``source`` is a Lab (its brokers' ``longPollingEnable``)."""
    brokers = getattr(source, "brokers", None)
    if not brokers:
        return None
    return "long" if brokers[0].broker_config.long_polling_enable else "short"


def long_poll_wait_histogram(
    source: Any, *, nbins: int = 30, title: str | None = None
) -> go.Figure:
    """How long parked pulls waited, one colour for woken-by-message and one for timeout.

    ``title`` defaults to "Long polling: …" or "Short polling: …" when ``source`` is a Lab
    (its brokers' ``longPollingEnable``), else "Parked pulls: …". Both colours share one
    set of bins, at least 1/50 of the longest wait wide, so a pile of equal waits (short
    polling's timeouts all wait one ``shortPollingTimeMills`` check) is a visible bar.
    """
    df = long_poll_wait_histogram_frame(source)
    if title is None:
        mode = _polling_mode(source)
        what = {"long": "Long polling", "short": "Short polling"}.get(mode or "", "Parked pulls")
        title = f"{what}: how long each parked pull waited"
    fig = go.Figure()
    fig.update_layout(
        title=title, barmode="group", showlegend=True,
        xaxis_title="wait = answer time − suspend time (ms)", yaxis_title="parked pulls",
        legend_title="answered because",
    )  # fmt: skip
    answered = df[df["reason"].isin(["message", "timeout"])]
    if answered.empty:
        return _empty(fig, "no answered parked pulls in this trace")
    waits = [int(w) for w in answered["wait_ms"]]
    lo, hi = min(waits), max(waits)
    size = _nice_step(max((hi - lo) / max(nbins, 1), max(hi, 1) / 50, 1))
    start = math.floor(lo / size) * size
    bins = {"start": start, "end": math.floor(hi / size) * size + size, "size": size}
    for reason, name in (("message", "a message arrived"), ("timeout", "the suspend timed out")):
        d = answered[answered["reason"] == reason]
        if d.empty:
            continue
        fig.add_trace(go.Histogram(
            x=[int(w) for w in d["wait_ms"]], name=name, xbins=bins,
            marker_color=REASON_COLORS[reason],
            hovertemplate="wait %{x} ms: %{y} pull(s)<extra>" + name + "</extra>",
        ))  # fmt: skip
    # side by side in each bin (overlaid, translucent bars blended into a colour the legend
    # does not show, and the shorter bar hid under the taller)
    return house_style(fig)


# -- allocation ----------------------------------------------------------------------------
def allocation_heatmap_frame(
    events: Any,
    *,
    group: str | None = None,
    topic: str | None = None,
    changes_only: bool = False,
) -> pd.DataFrame:
    """Who owns each queue, just after each rebalance.

    Reads ``RebalancePushImpl`` / ``RebalancePullImpl`` ``.rebalanceByTopic`` step "42-61"
    (step 42-61: group, topic, client_id, allocated_mqs), one event per consumer
    per round, each giving that consumer's own view. A consumer's view ends when its node
    stops (``SimDriver`` stop/kill) or it shuts down (``*.shutdown`` with its group).
    Broadcasting rounds (step "3-19") name no queues and are not shown.

    One snapshot per time at which a rebalance result arrived (or a view ended), taken
    after the last such event at that time; ``changes_only=True`` keeps only snapshots that
    differ from the one before (long runs rebalance every 20 s with the same result). A
    queue claimed by two consumers at once (a rebalance overlap: the cause of duplicates)
    has both ids in ``owner`` joined by " + " and ``owners`` 2.

    Returns:
        ``t_ms, group, topic, queue, owner, owners`` (``owner`` "" when nobody holds it).
    """
    snapshots, universe = allocation_snapshots(_events(events), group=group, topic=topic)
    rows: list[dict[str, Any]] = []
    order = sorted(universe, key=lambda x: (x[0], x[1], _queue_sort_key(x[2])))
    previous = None
    for t_ms, vs in snapshots:
        owners = [
            sorted(
                {cid for (_, vg, vt), (cid, qs) in vs.items() if vg == g and vt == t and q in qs}
            )
            for g, t, q in order
        ]
        if changes_only and owners == previous:
            continue
        previous = owners
        for (g, t, q), ids in zip(order, owners, strict=True):
            rows.append({"t_ms": t_ms, "group": g, "topic": t, "queue": q,
                         "owner": " + ".join(ids), "owners": len(ids)})  # fmt: skip
    return pd.DataFrame(rows, columns=["t_ms", "group", "topic", "queue", "owner", "owners"])


def allocation_heatmap(
    source: Any,
    *,
    group: str | None = None,
    topic: str | None = None,
    changes_only: bool = False,
) -> go.Figure:
    """Queues (rows) by rebalance time (columns), each cell coloured by its consumer.

    One heatmap trace plus one legend entry per consumer, one for overlaps and one for
    queues no consumer holds (``NOBODY``, grey), each if any; ``changes_only=True`` keeps only the columns where the allocation changed.
    """
    df = allocation_heatmap_frame(source, group=group, topic=topic, changes_only=changes_only)
    fig = go.Figure()
    fig.update_layout(
        title="Queue allocation after each rebalance", xaxis_title="time of rebalance (ms)",
        yaxis_title="queue (topic/broker/id)", legend_title="consumer",
        xaxis={"type": "category"}, yaxis={"type": "category", "autorange": "reversed"},
    )  # fmt: skip
    if df.empty:
        return _empty(fig, "no rebalance results in this trace")
    several = df["group"].nunique() > 1
    df = df.assign(
        row=[f"{g} · {q}" if several else q for g, q in zip(df["group"], df["queue"], strict=True)]
    )
    rows = list(dict.fromkeys(df["row"]))
    times = list(dict.fromkeys(df["t_ms"]))
    # every consumer that holds a queue, also one whose every cell is an overlap (it would
    # otherwise be missing from the legend)
    consumers = sorted({c for o in df["owner"] if o for c in o.split(" + ")})
    palette = [c for c in qualitative.Plotly + qualitative.D3 if c != "#7f7f7f"]  # no grey
    colors = {c: palette[i % len(palette)] for i, c in enumerate(consumers)}
    if (df["owners"] > 1).any():
        colors[OVERLAP] = OVERLAP_COLOR
    if (df["owners"] == 0).any():
        colors[NOBODY] = NOBODY_COLOR
    cats = list(colors)
    index = {c: i for i, c in enumerate(cats)}
    cell = {(r, t): (o, n) for r, t, o, n in zip(df["row"], df["t_ms"], df["owner"],
                                                 df["owners"], strict=True)}  # fmt: skip
    z, custom = [], []
    for r in rows:
        cells = [cell[(r, t)] for t in times]
        z.append([index[NOBODY if n == 0 else OVERLAP if n > 1 else o] for o, n in cells])
        custom.append([o or NOBODY for o, _ in cells])
    k = len(cats)
    scale = []
    for i, c in enumerate(cats):
        scale += [[i / k, colors[c]], [(i + 1) / k, colors[c]]]
    fig.add_trace(go.Heatmap(
        x=[str(t) for t in times], y=rows, z=z, customdata=custom, zmin=-0.5, zmax=k - 0.5,
        colorscale=scale, showscale=False, xgap=2, ygap=2, name="allocation",
        hovertemplate="t=%{x} ms<br>%{y}<br>held by %{customdata}<extra></extra>",
    ))  # fmt: skip
    for c in cats:
        fig.add_trace(go.Scatter(
            x=[None], y=[None], mode="markers", name=c, showlegend=True,
            marker={"symbol": "square", "size": 12, "color": colors[c]},
        ))  # fmt: skip
    return house_style(fig)


# -- offsets and lag -----------------------------------------------------------------------
def offsets_over_time_frame(
    events: Any,
    *,
    group: str | None = None,
    topic: str | None = None,
    include_system: bool = False,
) -> pd.DataFrame:
    """Committed offset, max offset and lag per (group, queue), after every change.

    Reads, on brokers: ``ReputMessageService.doReput`` "dispatch" (topic, queue_id,
    queue_offset: the queue's max offset becomes queue_offset + 1);
    ``ConsumerManageProcessor.updateConsumerOffset`` "commit" (group, topic, queue_id,
    offset: UPDATE_CONSUMER_OFFSET); and ``PullMessageProcessor.processRequest`` step "11"
    with ``committed`` True (commit_offset; group/topic/queue_id from step "1" of the same
    request; pull step 11). A queue's max offset is 0 until its first dispatch (a
    restarted broker rebuilds its queues without dispatch events; later ones are exact).

    Every dispatch adds a row for each group that ever commits on the topic (or one row
    with group None if none does); every commit adds one row. ``lag`` = max(0, max −
    committed), as ``ConsumerOffsetManager`` readers compute it; None before the first
    commit.

    Returns:
        ``t_ms, seq, broker, group, topic, queue_id, queue, event, committed_offset,
        max_offset, lag`` (offset columns ``Int64``), ``event`` "message" or "commit".
    """
    evs = _events(events)
    commits: list[tuple[TraceEvent, str, str, int, int]] = []
    request: dict[str, dict[str, Any]] = {}
    for e in evs:
        f = e.fields
        if e.component == UPDATE_OFFSET and e.step == "commit":
            commits.append((e, f["group"], f["topic"], int(f["queue_id"]), int(f["offset"])))
        elif e.component == PULL and e.step == "1":
            request[e.node] = f
        elif e.component == PULL and e.step == "11" and f.get("committed"):
            r = request.get(e.node, {})
            if "topic" in r:
                commits.append((e, r["group"], r["topic"], int(r["queue_id"]),
                                int(f["commit_offset"])))  # fmt: skip

    def wanted(t: str) -> bool:
        if topic is not None:
            return t == topic
        return include_system or not (t in SYSTEM_TOPICS or t.lower().startswith("rmq_sys_"))

    commits = [c for c in commits if wanted(c[2]) and (group is None or c[1] == group)]
    groups_of: dict[str, list[str | None]] = {}
    for _, g, t, _, _ in commits:
        groups_of.setdefault(t, [])
        if g not in groups_of[t]:
            groups_of[t].append(g)
    for t in groups_of:
        groups_of[t].sort()
    if group is not None and topic is not None:
        groups_of.setdefault(topic, [group])
    by_seq = {c[0].seq: c for c in commits}
    max_off: dict[tuple[str, str, int], int] = {}
    committed: dict[tuple[str, str | None, str, int], int] = {}
    rows = []

    def row(e: TraceEvent, g: str | None, t: str, q: int, event: str) -> None:
        mx = max_off.get((e.node, t, q), 0)
        c = committed.get((e.node, g, t, q))
        rows.append({"t_ms": e.t_ms, "seq": e.seq, "broker": e.node, "group": g, "topic": t,
                     "queue_id": q, "queue": f"{t}/{e.node}/{q}", "event": event,
                     "committed_offset": c, "max_offset": mx,
                     "lag": None if c is None else max(0, mx - c)})  # fmt: skip

    for e in evs:
        if e.seq in by_seq:
            _, g, t, q, off = by_seq[e.seq]
            committed[(e.node, g, t, q)] = off
            row(e, g, t, q, "commit")
        elif e.component == REPUT and e.step == "dispatch" and wanted(e.fields["topic"]):
            t, q = e.fields["topic"], int(e.fields["queue_id"])
            if group is not None and t not in groups_of:
                continue
            max_off[(e.node, t, q)] = int(e.fields["queue_offset"]) + 1
            for g in groups_of.get(t, [None]):
                row(e, g, t, q, "message")
    cols = ["t_ms", "seq", "broker", "group", "topic", "queue_id", "queue", "event",
            "committed_offset", "max_offset", "lag"]  # fmt: skip
    df = pd.DataFrame(rows, columns=cols)
    return df.astype({"committed_offset": "Int64", "max_offset": "Int64", "lag": "Int64"})


def offsets_over_time(
    source: Any,
    *,
    group: str | None = None,
    topic: str | None = None,
    include_system: bool = False,
) -> go.Figure:
    """Top: each queue's max offset (dashed) over each group's committed offset (a wide pale
    band of the same colour, so where the consumer has caught up both still show). Bottom:
    the lag between them. Step lines: values hold until the next change."""
    df = offsets_over_time_frame(source, group=group, topic=topic, include_system=include_system)
    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
        subplot_titles=("offsets: max offset (dashed), committed offset (wide pale band)",
                        "lag = max offset − committed offset"),
    )  # fmt: skip
    fig.update_layout(title="Consumer offsets and lag per queue", legend_title="queue",
                      height=560, hovermode="x unified", showlegend=True)  # fmt: skip
    fig.update_xaxes(title_text="virtual time (ms)", row=2, col=1)
    fig.update_yaxes(title_text="queue offset", row=1, col=1)
    fig.update_yaxes(title_text="messages behind", rangemode="nonnegative", row=2, col=1)
    if df.empty:
        return _empty(fig, "no messages or offset commits in this trace")
    palette = qualitative.Plotly + qualitative.D3
    queues = sorted(dict.fromkeys(df["queue"]), key=_queue_sort_key)
    series: dict[str, tuple] = {}
    for q in queues:
        d = df[df["queue"] == q].drop_duplicates("seq")
        mx = (tuple(d["t_ms"]), tuple(int(v) for v in d["max_offset"]))
        per_group = []
        c = df[(df["queue"] == q) & df["group"].notna() & df["committed_offset"].notna()]
        for g, dg in c.groupby("group", sort=True):
            per_group.append((g, tuple(dg["t_ms"]), tuple(int(v) for v in dg["committed_offset"]),
                              tuple(int(v) for v in dg["lag"])))  # fmt: skip
        series[q] = (mx, tuple(per_group))
    # Queues whose lines would coincide are drawn once, named together ("TopicTest/broker-a/0–3").
    merged: dict[tuple, list[str]] = {}
    for q in queues:
        merged.setdefault(series[q], []).append(q)
    for i, (sig, qs) in enumerate(merged.items()):
        (mx_x, mx_y), per_group = sig
        label = _queues_label(qs)
        color = palette[i % len(palette)]
        # the committed band first: the max offset's dashes are drawn over it (one plain line
        # of the same colour on the same path hid the other, issue 28)
        for g, x, committed, _lag in per_group:
            fig.add_trace(go.Scatter(
                x=list(x), y=list(committed), name=f"{g} {label} committed",
                mode="lines+markers", line={"shape": "hv", "color": color, "width": 7},
                marker={"size": 9}, opacity=0.35, legendgroup=label, showlegend=False,
                hovertemplate=f"{g} committed %{{y}}<extra>{label}</extra>",
            ), row=1, col=1)  # fmt: skip
        fig.add_trace(go.Scatter(
            x=list(mx_x), y=list(mx_y), name=label, mode="lines", legendgroup=label,
            line={"shape": "hv", "dash": "dash", "color": color},
            hovertemplate=f"{label}: max offset %{{y}}<extra></extra>",
        ), row=1, col=1)  # fmt: skip
        for g, x, _committed, lag in per_group:
            fig.add_trace(go.Scatter(
                x=list(x), y=list(lag), name=f"{g} {label} lag", mode="lines",
                line={"shape": "hv", "color": color}, legendgroup=label, showlegend=False,
                hovertemplate=f"{g} lag %{{y}}<extra>{label}</extra>",
            ), row=2, col=1)  # fmt: skip
    return house_style(fig)


def _queues_label(queues: list[str]) -> str:
    """``["T/b/0", "T/b/1", "T/b/2"]`` → ``"T/b/0–2"``; ``["T/b/0", "T/b/2"]`` → ``"T/b/0, 2"``;
    queues of different topics or brokers are listed in full."""
    if len(queues) == 1:
        return queues[0]
    heads = {q.rpartition("/")[0] for q in queues}
    ids = [q.rpartition("/")[2] for q in queues]
    if len(heads) != 1 or not all(i.isdigit() for i in ids):
        return ", ".join(queues)
    nums = sorted(int(i) for i in ids)
    span = f"{nums[0]}–{nums[-1]}" if nums == list(range(nums[0], nums[-1] + 1)) else (
        ", ".join(str(n) for n in nums))  # fmt: skip
    return f"{heads.pop()}/{span}"


# -- commit-log byte map -------------------------------------------------------------------
def _region(field: str) -> str:
    if field in ("BODYLENGTH", "BODY"):
        return "body"
    if field in ("TOPICLENGTH", "TOPIC"):
        return "topic"
    if field in ("PROPERTIESLENGTH", "PROPERTIES"):
        return "properties"
    return "fixed header"


def commit_log_byte_map_frame(entry: bytes) -> pd.DataFrame:
    """The fields of one stored commit-log entry (``CommitLog#calMsgLength``) with where each ends.

    ``inspect.commit_log_fields`` plus ``end`` (offset + size), ``region`` ("fixed header",
    "body", "topic", "properties") and ``value_text`` (the value as a string).
    """
    if not isinstance(entry, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"entry must be the bytes of one stored message, got {type(entry).__name__}"
        )
    df = commit_log_fields(bytes(entry))
    df["end"] = df["offset"] + df["size"]
    df["region"] = [_region(f) for f in df["field"]]
    df["value_text"] = [repr(v) if isinstance(v, bytes) else str(v) for v in df["value"]]
    return df


def commit_log_byte_map(source: Any, index: int = 0, *, broker: str = "broker-a") -> go.Figure:
    """One horizontal bar per field of a stored message: where it starts and how long it is.

    Args:
        source: a Lab (``index`` picks the entry of ``broker``'s commit log) or the bytes
            of one entry (``lab.commit_log(raw=True)["raw"][i]``).
        index: which entry, counting from 0, when ``source`` is a Lab.
        broker: which broker's commit log, when ``source`` is a Lab.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        entry, where = bytes(source), "one stored message"
    else:
        if not hasattr(source, "commit_log"):
            raise TypeError(f"source must be a Lab or bytes, got {type(source).__name__}")
        if not isinstance(index, int) or index < 0:
            raise ValueError(f"index must be an int >= 0, got {index!r}")
        log = source.commit_log(broker, raw=True, limit=index + 1)
        if len(log) <= index:
            raise ValueError(
                f"index {index} is past the {len(log)} entries of {broker}'s commit log"
            )
        entry = log["raw"].iloc[index]
        where = f"{broker} commit log entry {index} @ {int(log['commit_log_offset'].iloc[index])}"
    df = commit_log_byte_map_frame(entry)
    fig = go.Figure()
    fig.update_layout(
        title=f"Byte map of {where} ({len(entry)} bytes)", barmode="overlay",
        xaxis_title="byte offset within the entry", yaxis_title="field", legend_title="part",
        yaxis={"type": "category", "categoryorder": "array",
               "categoryarray": list(df["field"])[::-1]},
        height=max(360, 24 * len(df) + 140),
    )  # fmt: skip
    palette = {"fixed header": "#1f77b4", "body": "#2ca02c", "topic": "#ff7f0e",
               "properties": "#9467bd"}  # fmt: skip
    for region, color in palette.items():
        d = df[df["region"] == region]
        hover = [
            _hover(f"{fl}: bytes {o}..{e - 1} ({s} B)", f"hex {hx}", f"value {v}")
            for fl, o, e, s, hx, v in zip(d["field"], d["offset"], d["end"], d["size"], d["hex"],
                                          d["value_text"], strict=True)
        ]  # fmt: skip
        labels = [f"{s} B" for s in d["size"]]
        fig.add_trace(go.Bar(
            orientation="h", y=list(d["field"]), base=list(d["offset"]), x=list(d["size"]),
            name=region, marker_color=color, text=labels, cliponaxis=False,
            textposition=byte_label_positions(list(d["size"]), len(entry)),
            textfont={"size": 12}, hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    return house_style(fig)


#: About how many px wide a byte map's bars can be (an 800 px figure less margins and legend),
#: and how wide one character of a bar's label is (12 px font).
BYTE_MAP_PLOT_PX, LABEL_CHAR_PX = 520, 7


def byte_label_positions(sizes: list[int], total: int) -> list[str]:
    """Where each field's "N B" label goes: "inside" its bar when the bar is wide enough for
    it at 12 px, else "outside" (to its right): plotly shrank a label squeezed into a 1–4
    byte bar until it could not be read (issue 28)."""
    px = BYTE_MAP_PLOT_PX / max(total, 1)
    return ["inside" if s * px >= LABEL_CHAR_PX * len(f"{s} B") + 8 else "outside"
            for s in sizes]  # fmt: skip


# -- flow control --------------------------------------------------------------------------
def flow_control_episodes_frame(events: Any) -> pd.DataFrame:
    """Runs of flow control per consumer queue: when pulling was held back, and why.

    Reads ``DefaultMQPushConsumerImpl.pullMessage`` step "2.1" events that carry
    ``flow_control`` ("count", "size" or "span"), with mq, cached, threshold, delay_ms
    (pull-loop step 2.1: the pull is retried ``PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL`` =
    50 ms later). Consecutive pullMessage events of one (node, mq) that are all flow
    control of the same kind form one episode; any other pullMessage event for that queue
    (a pull sent, step "2.5") ends it. The episode ends when the last deferred pull ran:
    last event + its delay_ms.

    Returns:
        ``node, group, mq, queue, kind, start_t_ms, end_t_ms, duration_ms, events,
        first_seq, last_seq, max_cached, threshold``.
    """
    rows: list[dict[str, Any]] = []
    open_: dict[tuple[str, str], dict[str, Any] | None] = {}
    for e in _events(events):
        if e.component != PUSH_PULL:
            continue
        f = e.fields
        key = (e.node, str(f.get("mq")))
        kind = f.get("flow_control")
        if e.step != "2.1" or kind is None:
            open_[key] = None
            continue
        ep = open_.get(key)
        end = e.t_ms + int(f.get("delay_ms") or 0)
        if ep is not None and ep["kind"] == kind:
            ep.update(end_t_ms=end, duration_ms=end - ep["start_t_ms"], last_seq=e.seq,
                      events=ep["events"] + 1,
                      max_cached=max(ep["max_cached"], f.get("cached", 0)))  # fmt: skip
            continue
        ep = {"node": e.node, "group": f.get("group"), "mq": key[1], "queue": _mq_label(key[1]),
              "kind": kind, "start_t_ms": e.t_ms, "end_t_ms": end, "duration_ms": end - e.t_ms,
              "events": 1, "first_seq": e.seq, "last_seq": e.seq,
              "max_cached": f.get("cached", 0), "threshold": f.get("threshold")}  # fmt: skip
        rows.append(ep)
        open_[key] = ep
    cols = ["node", "group", "mq", "queue", "kind", "start_t_ms", "end_t_ms", "duration_ms",
            "events", "first_seq", "last_seq", "max_cached", "threshold"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


_FC_WHAT = {"count": "cached messages", "size": "cached MiB", "span": "offset span"}


def flow_control_episodes(source: Any) -> go.Figure:
    """A bar per flow-control episode on its queue's row, one colour per kind."""
    df = flow_control_episodes_frame(source)
    fig = go.Figure()
    fig.update_layout(
        title="Flow control: when each consumer queue stopped pulling", barmode="overlay",
        xaxis_title="virtual time (ms)", yaxis_title="consumer queue", showlegend=True,
        legend_title="flow control by", yaxis={"type": "category"},
    )  # fmt: skip
    if df.empty:
        return _empty(fig, "no flow control in this trace")
    several = df["node"].nunique() > 1
    df = df.assign(
        row=[f"{n} · {q}" if several else q for n, q in zip(df["node"], df["queue"], strict=True)]
    )
    rows = sorted(dict.fromkeys(df["row"]))
    fig.update_yaxes(categoryorder="array", categoryarray=rows[::-1])
    for kind, color in FLOW_CONTROL_COLORS.items():
        d = df[df["kind"] == kind]
        if d.empty:
            continue
        hover = [
            _hover(f"{r}: {kind} flow control t={s}..{en} ms",
                   f"{n} pull(s) deferred; up to {mc} {_FC_WHAT[kind]} (threshold {th})")
            for r, s, en, n, mc, th in zip(d["row"], d["start_t_ms"], d["end_t_ms"], d["events"],
                                           d["max_cached"], d["threshold"], strict=True)
        ]  # fmt: skip
        fig.add_trace(go.Bar(
            orientation="h", y=list(d["row"]), base=list(d["start_t_ms"]),
            x=list(d["duration_ms"]), name=f"{kind} ({_FC_WHAT[kind]})", marker_color=color,
            opacity=0.8, hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    # showlegend: with one kind only, plotly hid the legend and red (count) or brown (span)
    # said nothing (issue 28)
    return house_style(fig)


# -- replication: master and slave commit logs side by side ---------------------------------
#: Segment colour per state of a commit-log stretch on one node (``commit_logs_side_by_side``).
REPLICA_COLORS = {
    "on every slave": "#2ca02c",
    "on the master only": "#ff7f0e",
    "same bytes as the master": "#1f77b4",
    "other bytes than the master": "#d62728",
    "beyond the master's end": "#9467bd",
}


def _lane(i: int, node: str, end: int, gone: bool) -> str:
    role = "master" if i == 0 else "slave"
    return f"{node} ({role}, {'store gone' if gone else f'{end} B'})"


def commit_logs_side_by_side_frame(commit_logs: pd.DataFrame) -> pd.DataFrame:
    """Each node's commit log as segments, from ``lab.commit_logs(name)``.

    One row per master entry per node that holds something there, and one per slave that
    holds bytes past the master's end: ``node, lane, start, end, size, state, topic,
    queue_id, queue_offset``. ``state`` is one of ``REPLICA_COLORS``: on the master an entry
    is "on every slave" (every slave holds its bytes) or "on the master only"; on a slave
    "same bytes as the master" or "other bytes than the master" (a slave ahead of a master
    that came back empty, mechanisms.md "HA replication"); a slave's bytes past the
    master's end are one "beyond the master's end" segment. A slave's entry it does not
    hold is no row. ``attrs`` carries those of ``commit_logs`` (``max_offsets``,
    ``replicated_offset``, ``push2_slave_max_offset``, ``stores_gone``) and ``lanes``
    (master first).

    Raises:
        TypeError: not a frame of ``lab.commit_logs``.
    """
    if not isinstance(commit_logs, pd.DataFrame) or "max_offsets" not in commit_logs.attrs:
        raise TypeError(
            "commit_logs must be the frame lab.commit_logs(name) returns, got "
            f"{type(commit_logs).__name__}"
        )
    ends: dict[str, int] = commit_logs.attrs["max_offsets"]
    gone = set(commit_logs.attrs.get("stores_gone", ()))
    nodes = list(ends)
    master, slaves = nodes[0], nodes[1:]
    lanes = {n: _lane(i, n, ends[n], n in gone) for i, n in enumerate(nodes)}
    rows: list[dict[str, Any]] = []
    for r in commit_logs.to_dict("records"):
        start, size = int(r["commit_log_offset"]), int(r["size"])
        what = {"start": start, "end": start + size, "size": size, "topic": r["topic"],
                "queue_id": r.get("queue_id"), "queue_offset": r.get("queue_offset")}  # fmt: skip
        everywhere = bool(slaves) and all(r[s] is True for s in slaves)
        state = "on every slave" if everywhere else "on the master only"
        rows.append({"node": master, "lane": lanes[master], "state": state, **what})
        for s in slaves:
            if r[s] is None or pd.isna(r[s]):
                continue
            state = "same bytes as the master" if r[s] else "other bytes than the master"
            rows.append({"node": s, "lane": lanes[s], "state": state, **what})
    master_end = ends[master]
    for s in slaves:
        if ends[s] > master_end:
            rows.append({
                "node": s, "lane": lanes[s], "state": "beyond the master's end",
                "start": master_end, "end": ends[s], "size": ends[s] - master_end,
                "topic": None, "queue_id": None, "queue_offset": None,
            })  # fmt: skip
    cols = ["node", "lane", "start", "end", "size", "state", "topic", "queue_id",
            "queue_offset"]  # fmt: skip
    df = pd.DataFrame(rows, columns=cols)
    df = df.astype({"start": "int64", "end": "int64", "size": "int64", "queue_id": "Int64",
                    "queue_offset": "Int64"})  # fmt: skip
    df.attrs.update(commit_logs.attrs)
    df.attrs["lanes"] = [lanes[n] for n in nodes]
    return df


def commit_logs_side_by_side(source: Any, name: str = "broker-a") -> go.Figure:
    """Master and slave commit logs as bars of messages on a byte axis, one lane per node,
    the replicated offset and the master's ``push2SlaveMaxOffset`` marked.

    Args:
        source: a Lab (its ``commit_logs(name)``) or the frame ``lab.commit_logs(name)``.
        name: the broker name, when ``source`` is a Lab.

    The replicated offset is the least max offset among the slaves (every slave holds the
    master's bytes up to there); ``push2SlaveMaxOffset`` is what the master believes, the
    largest offset a slave reported (``HAService``; mechanisms.md "HA replication"). Between
    them sits what a slave holds and has not reported yet.
    """
    if isinstance(source, pd.DataFrame):
        logs = source
    elif hasattr(source, "commit_logs"):
        logs = source.commit_logs(name)
    else:
        raise TypeError(
            f"source must be a Lab or lab.commit_logs(name)'s frame, got {type(source).__name__}"
        )
    df = commit_logs_side_by_side_frame(logs)
    ends = df.attrs["max_offsets"]
    master = next(iter(ends))
    replicated, push2 = df.attrs["replicated_offset"], df.attrs["push2_slave_max_offset"]
    lanes = df.attrs["lanes"]
    group = master if len(ends) == 1 else f"{master} and its slaves"
    sub = f"master {ends[master]} B"
    if replicated is not None:
        sub += f", replicated offset {replicated}, push2SlaveMaxOffset {push2}"
    fig = go.Figure()
    fig.update_layout(
        title=f"Commit logs of {group}<br><sup>{sub}</sup>", barmode="overlay",
        xaxis_title="commit-log offset (bytes)", yaxis_title="node", legend_title="bytes",
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": lanes[::-1]},
        showlegend=True, height=max(300, 90 * len(lanes) + 180),
    )  # fmt: skip
    if df.empty:
        return _empty(fig, f"no messages in {master}'s commit log or its slaves' yet")
    for state, color in REPLICA_COLORS.items():
        d = df[df["state"] == state]
        if d.empty:
            continue
        hover = [
            _hover(f"{n}: bytes {s}..{e - 1} ({z} B)", state,
                   f"{t} queue {q} offset {qo}" if t is not None else "not on the master")
            for n, s, e, z, t, q, qo in zip(d["node"], d["start"], d["end"], d["size"],
                                            d["topic"], d["queue_id"], d["queue_offset"],
                                            strict=True)
        ]  # fmt: skip
        fig.add_trace(go.Bar(
            orientation="h", y=list(d["lane"]), base=list(d["start"]), x=list(d["size"]),
            name=state, marker={"color": color, "line": {"color": "white", "width": 1}},
            width=0.6, hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    if replicated is not None:
        same = replicated == push2
        marks = [(replicated, "dash", "replicated offset" + (" = push2SlaveMaxOffset" if same
                                                             else ""))]  # fmt: skip
        if not same:
            marks.append((push2, "dot", "push2SlaveMaxOffset"))
        for i, (x, dash, label) in enumerate(marks):
            fig.add_shape(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="paper",
                          line={"color": "#222222", "width": 2, "dash": dash})  # fmt: skip
            fig.add_annotation(
                # the first above the plot, the second just inside its top (the gap over
                # the top lane's bar), so the two labels never cover each other
                x=x, xref="x", y=1, yref="paper", yanchor="bottom" if i == 0 else "top",
                text=f"{label} {x} (black, {'dashed' if dash == 'dash' else 'dotted'})",
                showarrow=False,
                font={"size": 12}, bgcolor="white",
            )  # fmt: skip
    right = max([*ends.values(), replicated or 0, push2 or 0, 1])
    fig.update_xaxes(range=[0, math.ceil(right * 1.05)])
    return house_style(fig)


# -- export --------------------------------------------------------------------------------
_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def can_export() -> bool:
    """Whether ``export`` can write images: kaleido >= 1 is installed."""
    if importlib.util.find_spec("kaleido") is None:
        return False
    from importlib.metadata import PackageNotFoundError, version

    from packaging.version import Version

    try:
        return Version(version("kaleido")) >= Version("1")
    except PackageNotFoundError:
        return False


def export(
    fig: go.Figure,
    path: str | Path,
    *,
    width: int | None = None,
    height: int | None = None,
    scale: float | None = None,
) -> Path:
    """Write ``fig`` as PNG, SVG or PDF (by the suffix of ``path``) for slides.

    Raises:
        TypeError: ``fig`` is not a plotly figure.
        ValueError: ``path`` does not end in .png, .svg or .pdf.
        RuntimeError: kaleido is not installed (the message says how to install it).
    """
    if not isinstance(fig, go.Figure):
        raise TypeError(f"fig must be a plotly Figure, got {type(fig).__name__}")
    p = Path(path)
    fmt = _FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise ValueError(f"path must end in .png, .svg or .pdf, got {str(path)!r}")
    if not can_export():
        raise RuntimeError(KALEIDO_MISSING)
    fig.write_image(p, format=fmt, width=width, height=height, scale=scale)
    return p
