"""The outcome explorer: every outcome class of a schedule search, each replayable and steppable.

Mirrors no RocketMQ class: this is lesson 11's widget (issue 19, "what can happen?").
``outcome_explorer(result, scenario)`` shows the outcome table of a ``mqlab.explore`` search
(outcome, distinct final states, runs, depth, shortest schedule), a bar chart of the distinct
final states per class, and for the class you select:

1. its shortest schedule replayed (``mqlab.explore.engine.run_schedule``) into a ``Lab``,
   drawn in the control panel's timeline (``TimelineView``: the ``span_ms`` from the time
   the search starts deciding, the scenario's ``arm_ms``) and inspector tables
   (``inspector_html``, the state at the end of the run);
2. the schedule's choice points, one per line, with what each one picked: *next choice* /
   *previous choice* replay the schedule's first k choices (the rest take their defaults),
   so the step where the outcome changes is the choice that causes it;
3. a diff of that replay against the plain run (every choice default): ``Lab.diff``, rows
   around the first event where the two traces part.

Every action is a plain method (``select``, ``replay_schedule``, ``next_choice``,
``previous_choice``, ``goto``, ``diff``) wired to a button; bad input (an unknown class, a
schedule that does not parse or does not fit the run) becomes a message in ``status``,
never a traceback. Replays are cached by schedule text, so stepping back is instant.
Owns: the widgets and their callbacks. Must not know: how a search runs.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from mqlab.explore.engine import Bounds, Point, RunRecord, run_schedule
from mqlab.explore.schedule import DEFAULT, Choice, Schedule, ScheduleError
from mqlab.lab import figures
from mqlab.lab.live_figure import LiveFigure
from mqlab.lab.panel_views import TimelineView, inspector_html, table_html

if TYPE_CHECKING:
    from mqlab.explore.scenarios import ExploreScenario
    from mqlab.explore.search import SearchResult
    from mqlab.lab.lab import Lab

__all__ = [
    "OutcomeExplorer",
    "Replay",
    "outcome_explorer",
    "outcome_figure",
    "replay_prefix",
    "timeline_window",
]


#: The explorer's tabs under its status line: the replay (choices and timeline), the inspector
#: tables at the end of the replay, the diff against the plain run.
TAB_TITLES = ("replay", "state at the end", "diff")


@dataclass(slots=True)
class Replay:
    """One replayed run: its schedule, record (choice points with labels), lab and tables."""

    schedule: Schedule
    record: RunRecord
    lab: Lab  # closed: its trace stays, its nodes are stopped
    inspector: str  # the inspector tables at the end of the run (HTML)
    events: int = 0  # trace events before the lab closed (closing adds a stop per node)
    arm_t_ms: int = 0  # lab time at which the search starts deciding (warm-up + arm_ms)

    @property
    def outcome(self) -> str:
        return self.record.outcome or "?"

    @property
    def points(self) -> list[Point]:
        return self.record.points


def replay_prefix(xs: ExploreScenario, schedule: Schedule | str, k: int | None = None, *,
                  bounds: Bounds | None = None, topic: str = "TopicTest",
                  group: str = "CG") -> Replay:  # fmt: skip
    """Replay the first ``k`` choices of ``schedule`` (all of them when None), defaults after.

    The run records every choice point of the whole schedule (its options, their labels,
    which one was taken), so a prefix replay still shows what the later points offered.

    With ``bounds`` (the search's), a schedule may hold no more faults than they allow.

    Raises:
        ScheduleError: the schedule does not parse, or does not fit this run; the message
            names the token and what is wrong with it (a latency out of the latency set, an
            order choice at a latency point, a fault where the scenario allows none …).
    """
    s = Schedule.parse(schedule).trimmed()
    n = len(s.choices)
    k = n if k is None else k
    if not 0 <= k <= n:
        raise ScheduleError(f"step {k} is outside 0..{n} (the schedule has {n} choice points)")
    b = bounds or Bounds(depth=0)
    lats = b.latencies or xs.latencies
    _check_tokens(s, lats, None if bounds is None else bounds.faults)
    toks = list(s.choices[:k])
    pos = {"i": 0}
    misfit: list[ScheduleError] = []  # what follow() found: a run wraps it in its own error

    def follow(options: list[Choice]) -> int:
        i = pos["i"]
        pos["i"] += 1
        want = toks[i] if i < len(toks) else DEFAULT
        if want not in options:
            misfit.append(ScheduleError(_misfit(i, options, want)))
            raise misfit[-1]
        return options.index(want)

    got: dict[str, Any] = {}

    def keep(lab: Lab) -> None:
        got["lab"] = lab
        got["html"] = inspector_html(lab, topic, group)
        got["events"] = len(lab.trace.events)

    try:
        rec = run_schedule(
            xs, "", Bounds(depth=n, faults=s.faults, window_ms=b.window_ms, latencies=lats,
                           por=False, sticky=int(any(c.kind == "L" for c in s.choices))),
            record=True, pick=follow, on_lab=keep,
        )  # fmt: skip
    except ValueError:
        if misfit:  # the scenario's step that met the choice point wrapped it ("fault 'join' …")
            raise misfit[-1] from None
        raise
    if len(rec.points) < n:
        raise ScheduleError(
            f"the run met {len(rec.points)} choice point(s); the schedule has {n} ({s})"
        )
    arm = xs.scenario.warmup_ms + xs.arm_ms
    return Replay(Schedule(tuple(toks)).trimmed(), rec, got["lab"], got["html"], got["events"], arm)


def _check_tokens(s: Schedule, lats: tuple[int, ...], faults: int | None) -> None:
    """Refuse a token no run of this scenario can follow, before replaying anything."""
    for c in s.choices:
        if c.kind == "F" and faults == 0:
            raise ScheduleError(
                f"{c}: this scenario allows no faults (its search's bounds say faults=0); "
                "a schedule here holds only o<i> (event order), l<i> (latency), L<i> (a "
                "connection kept slow) and d<n>"
            )
        if c.kind == "l" and int(c.value) >= len(lats):
            if len(lats) < 2:
                raise ScheduleError(
                    f"{c}: this scenario has no latency choice (its latency set is {lats} ms)"
                )
            menu = ", ".join(f"l{j} = {ms} ms" for j, ms in enumerate(lats))
            raise ScheduleError(
                f"{c}: latency choice out of range; the latency set has {len(lats)} values "
                f"({menu}; l0 is the default)"
            )
    if faults is not None and s.faults > faults:
        raise ScheduleError(
            f"the schedule has {s.faults} faults; this scenario allows at most {faults}"
        )


def _misfit(i: int, options: list[Choice], want: Choice) -> str:
    """Why token ``want`` does not fit choice point ``i`` with these options."""
    menu = " ".join(map(str, options))
    if any(o.kind == "l" for o in options):  # a latency point (l out of range: _check_tokens)
        if want.kind == "o":
            return (f"choice {i} is a latency point (options {menu}: the frame's latency), not "
                    f"an order point: {want} picks among events due together, and none are here")  # fmt: skip
    elif want.kind in ("o", "l"):  # an order point: d0, o1 … (and the faults it offers)
        n = sum(o.kind != "F" for o in options)
        if want.kind == "l":
            return (f"choice {i} is an order point (options {menu}: which of {n} event(s) due "
                    f"together runs first), not a latency point: {want} does not fit it")  # fmt: skip
        return (f"choice {i} is an order point with {n} event(s) due together (options {menu}): "
                f"{want} is out of range")  # fmt: skip
    if want.kind == "F":
        return f"choice {i} offers no fault {want.value!r} (options {menu})"
    return f"choice {i} has options {menu}; the schedule says {want}"


@dataclass(slots=True)
class _Events:
    events: list


@dataclass(slots=True)
class _Window:
    """What ``TimelineView.update`` reads of a lab (``trace.events``, ``now``): a replay's
    events up to ``now``."""

    trace: _Events
    now: int


def timeline_window(rep: Replay, span_ms: int) -> tuple[_Window, int]:
    """The replay's events from just before the search starts deciding, ``span_ms`` long."""
    t0 = max(0, rep.arm_t_ms - 2)
    t1 = t0 + span_ms
    evs = [e for e in rep.lab.trace.events[: rep.events] if e.t_ms <= t1]
    return _Window(_Events(evs), t1), t0


def bar_colors(result: SearchResult, selected: str | None = None) -> list[str]:
    """The bars' colours: the selected class darker."""
    return ["#1f4e79" if r.outcome == selected else "#6fa8dc" for r in result.rows]


def outcome_figure(result: SearchResult, selected: str | None = None) -> go.Figure:
    """Bars: the distinct final states of each outcome class (the selected one darker)."""
    rows = result.rows
    x = [r.outcome for r in rows]
    colors = bar_colors(result, selected)
    fig = go.Figure(go.Bar(
        x=x, y=[r.count for r in rows], marker_color=colors, name="distinct final states",
        customdata=[[r.runs, str(r.schedule)] for r in rows],
        hovertemplate="%{x}: %{y} distinct final state(s), %{customdata[0]} run(s)<br>"
                      "shortest schedule: %{customdata[1]}<extra></extra>",
    ))  # fmt: skip
    # the colour key is in the title from the start: a title changed on a live figure before
    # its view was drawn left the chart empty in the browser
    key = "; dark blue: the class selected"
    fig.update_layout(
        title=f"{result.scenario}: {len(rows)} outcome class(es), {result.runs} runs"
              f"<br><sup>bounds {result.bounds}{key}</sup>",
        xaxis_title="outcome class", yaxis_title="distinct final states", height=300,
        margin={"b": 50},
    )  # fmt: skip
    fig.update_xaxes(type="category")
    return figures.house_style(fig)


def _guarded(method: Callable[..., Any]) -> Callable[..., bool]:
    """An action: errors become the status line; returns whether it worked."""

    @functools.wraps(method)
    def wrapper(self: OutcomeExplorer, *args: Any, **kwargs: Any) -> bool:
        try:
            method(self, *args, **kwargs)
        except (ScheduleError, ValueError) as e:
            self._say(f"⚠ {e}", error=True)
            return False
        except Exception as e:  # noqa: BLE001 — a notebook click must never raise
            self._say(f"✗ {method.__name__} failed: {type(e).__name__}: {e}", error=True)
            return False
        return True

    return wrapper


class OutcomeExplorer:
    """The outcome table, a bar chart, and a replay you can step and diff.

    Args:
        result: a ``SearchResult`` (``mqlab.explore.runners.explore`` or ``search.exhaustive``).
        scenario: the ``ExploreScenario`` it searched (or its name in ``SCENARIOS``).
        plot_mode: the timeline's ``"live"`` or ``"static"`` mode (``MQLAB_PLOT_MODE``).
        span_ms: how much of the run the timeline draws, from the time the search starts
            deciding (its title names the times; the rest of the run is not drawn).

    Attributes:
        selected: the outcome class shown (None before a selection).
        schedule: the schedule being stepped; ``step``: how many of its choices are applied.
        current: the ``Replay`` shown; ``plain``: the plain run's.
        diff_frame: the last ``Lab.diff`` (None before *diff*); ``messages``: what it said.
    """

    def __init__(self, result: SearchResult, scenario: ExploreScenario | str, *,
                 plot_mode: str | None = None, span_ms: int = 60) -> None:  # fmt: skip
        if isinstance(scenario, str):
            from mqlab.explore.scenarios import get_scenario

            scenario = get_scenario(scenario)
        if scenario.name != result.scenario:
            raise ValueError(
                f"the result is of scenario {result.scenario!r}, not {scenario.name!r}"
            )
        self.result = result
        self.xs = scenario
        self.bounds = result.bounds
        self.selected: str | None = None
        self.schedule: Schedule = Schedule()
        self.step = 0
        self.current: Replay | None = None
        self.diff_frame: pd.DataFrame | None = None
        self.messages: list[str] = []
        self._cache: dict[str, Replay] = {}
        self._plain: Replay | None = None
        W = widgets
        style = {"description_width": "initial"}
        self.table = W.HTML(self._table_html())
        self.figure = W.Output(layout=W.Layout(min_height="300px"))
        self.outcome = W.Dropdown(options=[r.outcome for r in result.rows], value=None,
                                  description="outcome class", style=style,
                                  layout=W.Layout(width="420px"))  # fmt: skip
        self.schedule_text = W.Text(description="schedule", style=style,
                                    placeholder="e.g. d5 l1", layout=W.Layout(width="340px"))  # fmt: skip
        self.buttons = {
            "replay": W.Button(description="replay schedule"),
            "previous": W.Button(description="◀ previous choice"),
            "next": W.Button(description="next choice ▶"),
            "diff": W.Button(description="diff against the plain run"),
        }
        for b in self.buttons.values():
            b.layout = W.Layout(width="auto")
        self._syncing = False  # the dropdown is being set by an action, not by the learner
        self.outcome.observe(self._picked, "value")
        self.buttons["replay"].on_click(lambda _b: self.replay_schedule(self.schedule_text.value))
        self.buttons["previous"].on_click(lambda _b: self.previous_choice())
        self.buttons["next"].on_click(lambda _b: self.next_choice())
        self.buttons["diff"].on_click(lambda _b: self.diff())
        self.status = W.HTML()
        self.choices = W.HTML()
        self.inspector = W.HTML()
        self.diff_view = W.HTML()
        self.span_ms = span_ms
        self.timeline = TimelineView(window_ms=span_ms, mode=plot_mode)
        row = {"flex_flow": "row wrap", "align_items": "center"}
        # The table and its chart, the controls, the status line (what a click did), then
        # the answer to the click in tabs: the replay (choices and timeline, shown first, so
        # its plot is drawn while visible), the end state, the diff. In one column it was
        # about 2 470 px tall, the diff far below the button (issue 28).
        self.tabs = W.Tab(children=[
            W.VBox([self.choices, self.timeline.widget]), self.inspector, self.diff_view,
        ])  # fmt: skip
        self.tabs.titles = TAB_TITLES
        self.widget = W.VBox([
            self.table, self.figure,
            W.HBox([self.outcome, self.schedule_text, self.buttons["replay"]],
                   layout=W.Layout(**row)),
            W.HBox([self.buttons["previous"], self.buttons["next"], self.buttons["diff"]],
                   layout=W.Layout(**row)),
            self.status, self.tabs,
        ])  # fmt: skip
        self._draw_figure()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # -- drawing ------------------------------------------------------------------------------
    def _say(self, text: str, *, error: bool = False) -> None:
        self.messages.append(text)
        colour = "#b00" if error else "#333"
        self.status.value = (
            f"<div style='color:{colour};font-family:monospace'>{html.escape(text)}</div>"
        )

    def _table_html(self) -> str:
        r = self.result
        head = "".join(f"<th style='padding:1px 10px;text-align:left'>{h}</th>" for h in
                       ("outcome", "distinct final states", "runs", "depth", "shortest schedule"))  # fmt: skip
        td = "<td style='padding:1px 10px'>"

        def tr(o: Any) -> str:  # the selected class's row as its bar: dark, white text
            on = o.outcome == self.selected
            return "<tr style='background:#1f4e79;color:white'>" if on else "<tr>"

        body = "".join(
            f"{tr(o)}{td}<code>{html.escape(o.outcome)}</code></td>{td}{o.count}</td>{td}{o.runs}"
            f"</td>{td}{o.depth}</td>{td}<code>{html.escape(str(o.schedule))}</code></td></tr>"
            for o in r.rows
        )
        foot = (f"{r.runs} runs, {r.states} states visited, {r.distinct} distinct, "
                f"{r.pruned} pruned, {r.redundant} asleep"
                + ("" if r.complete else " (incomplete)"))  # fmt: skip
        # lines 1.4 high, not the HTML widget's 28 px: rows 19 px apart (walk 4 of issue 28)
        return (f"<div style='font-size:12px;line-height:1.4'><b>{html.escape(r.scenario)}</b> · bounds "
                f"<code>{html.escape(str(r.bounds))}</code><table style='border-collapse:collapse'>"
                f"<tr>{head}</tr>{body}</table><div>{html.escape(foot)}</div></div>")  # fmt: skip

    def _draw_figure(self) -> None:
        """Drawn once, when the explorer is built: a second display into the same Output
        from a later cell made nbclient (nbmake) miss the cell's reply until its timeout."""
        from IPython.display import display

        self.figure.clear_output(wait=True)
        self.fig = outcome_figure(self.result, self.selected)
        if self.timeline.mode == "live":  # recoloured in place on each selection
            try:
                self.fig = LiveFigure(self.fig)  # its comm opens with the figure
            except Exception:  # noqa: BLE001 — any frontend problem: a static figure
                pass
        with self.figure:
            display(self.fig)

    def _highlight(self) -> None:
        """Show the selected class: its table row, and its bar where the figure is live
        (a static one stays as drawn: ``_draw_figure``)."""
        self.table.value = self._table_html()
        if isinstance(self.fig, go.FigureWidget):
            self.fig.data[0].marker.color = bar_colors(self.result, self.selected)

    def _choices_html(self, rep: Replay) -> str:
        lines = []
        for p in rep.points:
            taken = p.labels[p.chosen]
            applied = p.index < self.step
            tok = self.schedule.choices[p.index] if p.index < len(self.schedule.choices) else None
            want = str(tok) if tok is not None and not tok.is_default else "default"
            mark = "▶" if applied else "·"
            style = "font-weight:bold" if applied and want != "default" else ""
            lines.append(
                f"<div style='{style}'>{mark} choice {p.index} ({'order' if p.kind == 'o' else 'latency'}, "
                f"schedule: {html.escape(want)}): {html.escape(taken)}</div>"
            )
        return (f"<div style='font-family:monospace;font-size:12px'><b>step {self.step} of "
                f"{len(self.schedule.choices)}</b>: replaying <code>{html.escape(str(rep.schedule))}"
                f"</code> → <b>{html.escape(rep.outcome)}</b>{''.join(lines)}</div>")  # fmt: skip

    def _show(self, rep: Replay) -> None:
        self.current = rep
        self.choices.value = self._choices_html(rep)
        self.inspector.value = rep.inspector
        view, t0 = timeline_window(rep, self.span_ms)
        self.timeline.new_trace()  # each replay is another trace
        self.timeline.update(view, since_ms=t0)
        self.diff_frame = None
        self.diff_view.value = ""
        self.tabs.selected_index = TAB_TITLES.index("replay")

    # -- replays ------------------------------------------------------------------------------
    def _replay(self, k: int) -> Replay:
        key = str(Schedule(self.schedule.choices[:k]).trimmed())
        rep = self._cache.get(key)
        if rep is None:
            rep = replay_prefix(self.xs, self.schedule, k, bounds=self.bounds)
            self._cache[key] = rep
        return rep

    @property
    def plain(self) -> Replay:
        """The plain run: every choice default (the seed's own run)."""
        if self._plain is None:
            self._plain = self._cache.get("(default)") or replay_prefix(
                self.xs, "", bounds=self.bounds
            )
            self._cache["(default)"] = self._plain
        return self._plain

    def _load(self, schedule: Schedule) -> None:
        """Replay ``schedule`` whole (its errors first: nothing changes on bad input)."""
        s = schedule.trimmed()
        n = len(s.choices)
        key = str(s)
        rep = self._cache.get(key)
        if rep is None:
            rep = replay_prefix(self.xs, s, n, bounds=self.bounds)
            self._cache[key] = rep
        self.schedule, self.step = s, n
        self._show(rep)

    def _picked(self, change: dict[str, Any]) -> None:
        if not self._syncing and change["new"] is not None:
            self.select(change["new"])

    def _set_dropdown(self, value: str | None) -> None:
        self._syncing = True
        try:
            self.outcome.value = value
        finally:
            self._syncing = False

    # -- actions (each wired to a widget) ------------------------------------------------------
    @_guarded
    def select(self, outcome: str) -> None:
        """Replay the shortest schedule of outcome class ``outcome``."""
        rows = {r.outcome: r for r in self.result.rows}
        if outcome not in rows:
            raise ValueError(
                f"no outcome class {outcome!r} in this table; the classes are {sorted(rows)}"
            )
        row = rows[outcome]
        self._load(row.schedule)
        self.selected = outcome
        self._highlight()
        self.schedule_text.value = str(row.schedule)
        self._set_dropdown(outcome)
        self._say(f"{outcome}: its shortest schedule {row.schedule} replayed "
                  f"({len(row.schedule.choices)} choice point(s)) → {self.current.outcome}")  # fmt: skip

    @_guarded
    def replay_schedule(self, text: str) -> None:
        """Replay a schedule typed by hand (``"d5 l1"``)."""
        s = Schedule.parse(text.strip() if isinstance(text, str) else text)
        self._load(s)
        self.selected = None
        self._highlight()
        self._set_dropdown(None)
        self._say(f"schedule {s} replayed → {self.current.outcome}")

    def _goto(self, k: int) -> None:
        if self.current is None:
            raise ValueError("select an outcome class (or replay a schedule) first")
        n = len(self.schedule.choices)
        if not 0 <= k <= n:
            raise ValueError(f"step {k} is outside 0..{n}")
        rep = self._replay(k)
        self.step = k
        self._show(rep)
        self._say(f"step {k} of {n}: the first {k} choice(s) of {self.schedule} → {rep.outcome}")

    @_guarded
    def goto(self, k: int) -> None:
        """Apply the schedule's first ``k`` choices (the rest default)."""
        if not isinstance(k, int) or isinstance(k, bool):
            raise ValueError(f"a step is a whole number, got {k!r}")
        self._goto(k)

    @_guarded
    def next_choice(self) -> None:
        """One more choice of the schedule applied."""
        if self.current is not None and self.step >= len(self.schedule.choices):
            raise ValueError(f"already at the last choice ({self.step}) of {self.schedule}")
        self._goto(self.step + 1)

    @_guarded
    def previous_choice(self) -> None:
        """One choice fewer (a replay of the shorter prefix)."""
        if self.current is not None and self.step <= 0:
            raise ValueError("already at step 0: no choice of the schedule is applied")
        self._goto(self.step - 1)

    @_guarded
    def diff(self, context: int = 3) -> None:
        """``Lab.diff`` of the plain run against the replay shown: where the traces part."""
        if self.current is None:
            raise ValueError("select an outcome class (or replay a schedule) first")
        d = self.plain.lab.diff(self.current.lab, context=context)
        self.diff_frame = d
        self.tabs.selected_index = TAB_TITLES.index("diff")
        at = d.attrs["diverges_at"]
        if at is None:
            self.diff_view.value = (
                "<div style='font-family:monospace'>the same trace as the plain run</div>"
            )
            self._say(f"{self.current.schedule}: the same trace as the plain run")
            return
        self.diff_view.value = diff_table_html(
            d, f"plain run (a) vs {self.current.schedule} (b): the traces part at seq {at}"
        )
        self._say(f"{self.current.schedule}: the trace parts from the plain run at seq {at}")


#: The diff tab's columns: the width of their values in digits (``panel_views._table``); the
#: nodes and events are as wide as their text, an event up to ``DIFF_EVENT_CH`` digits, then
#: cut with "…" and whole on hover.
_DIFF_COLUMNS = {"seq": 5, "same": 4, "a_t_ms": 6, "a_node": 7, "a_event": 12, "b_t_ms": 6,
                 "b_node": 7, "b_event": 12}  # fmt: skip
DIFF_EVENT_CH = 40


def diff_table_html(d: pd.DataFrame, title: str) -> str:
    """A ``Lab.diff`` frame as the diff tab draws it: a table like the inspector's (11 px
    text, rows 19 px apart; walk 4 of issue 28: pandas' table, in an HTML widget's 28 px
    line height, had rows 28 px apart), headed by the frame's own columns ("a t ms" for
    ``a_t_ms``: a is the plain run, b the replay, as the title says), ``same`` as ✔ or ✘, a
    missing side blank, in a box that scrolls sideways when the tab is narrower."""

    def cell(v: Any) -> str:
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)

    def whole(v: Any) -> str:
        return cell(v) if cell(v) == "" else str(int(v))

    rows = pd.DataFrame({
        "seq": d["seq"].map(whole), "same": d["same"].map(lambda v: "✔" if v else "✘"),
        **{f"{ab}_{col}": d[f"{ab}_{col}"].map(whole if col == "t_ms" else cell)
           for ab in "ab" for col in ("t_ms", "node", "event")},
    })  # fmt: skip
    table = table_html(title, rows, list(_DIFF_COLUMNS), col_ch=_DIFF_COLUMNS,
                       names=("a_node", "a_event", "b_node", "b_event"),
                       name_max_ch=DIFF_EVENT_CH)  # fmt: skip
    return f"<div style='overflow-x:auto'>{table}</div>"


def outcome_explorer(result: SearchResult, scenario: ExploreScenario | str, *,
                     select: str | None = None, plot_mode: str | None = None) -> OutcomeExplorer:  # fmt: skip
    """An ``OutcomeExplorer`` on ``result``; ``select``: an outcome class to replay at once."""
    ex = OutcomeExplorer(result, scenario, plot_mode=plot_mode)
    if select is not None:
        ex.select(select)
    return ex
