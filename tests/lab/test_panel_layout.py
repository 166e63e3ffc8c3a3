"""Panel layout (issue 28): the answer to a click is in view with the buttons.

The control panel puts its log right under its control rows, then the timeline and the
tables (two tabs when both are shown: lesson 00's panel was 1 500–1 800 px tall with the log
last); the outcome explorer puts the answer to a click in tabs right under its status line
(about 2 470 px in one column, the diff at the bottom), and shows the tab that answers it. The heights in a
browser are checked in tests/e2e/test_lessons_browser.py.
"""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario
from mqlab.lab import Lab
from mqlab.lab.outcome_explorer import TAB_TITLES, OutcomeExplorer
from mqlab.lab.widgets import control_panel


def holds(box, widget) -> bool:
    return box is widget or any(holds(c, widget) for c in getattr(box, "children", ()))


def test_lesson00_panel_log_under_the_buttons_then_timeline_and_tables_tabs():
    """Every section: five control rows, the log, then tabs "timeline" (shown) and "tables"."""
    with Lab(seed=1) as lab:
        p = control_panel(lab, plot_mode="live")
        kids = p.widget.children
        assert len(kids) == 7
        assert [holds(k, p.buttons["send"]) for k in kids[:5]] == [True, False, False, False,
                                                                    False]  # fmt: skip
        assert holds(kids[3], p.buttons["advance"]) and holds(kids[4], p.inputs["strategy"])
        assert holds(kids[5], p.log)
        tabs = kids[6]
        assert isinstance(tabs, widgets.Tab) and tabs.titles == ("timeline", "tables")
        assert tabs.selected_index == 0 and holds(tabs.children[0], p.timeline.widget)
        assert holds(tabs.children[1], p.inspector)
        assert p.timeline.widget.layout.height <= 360


def test_panel_without_timeline_puts_the_log_before_the_tables():
    """Lesson 02's sections (send, inspect, log): send row, log, tables."""
    with Lab(seed=1) as lab:
        p = control_panel(lab, sections=["send", "inspect", "log"])
        kids = p.widget.children
        assert len(kids) == 3
        assert holds(kids[0], p.buttons["send"]) and holds(kids[1], p.log)
        assert holds(kids[2], p.inspector) and not isinstance(kids[2], widgets.Tab)


@pytest.mark.slow
def test_outcome_explorer_answer_in_tabs_under_the_status_line():
    """Table, chart, controls, status, then tabs; the replay tab (its timeline) is shown
    first and on a selection, the diff tab on *diff*."""
    xs = get_scenario("consumer_join")
    ex = OutcomeExplorer(explore(xs, Bounds(depth=xs.depth)), xs, plot_mode="static")
    kids = ex.widget.children
    assert kids[0] is ex.table and kids[1] is ex.figure
    assert holds(kids[2], ex.outcome) and holds(kids[3], ex.buttons["diff"])
    assert kids[4] is ex.status and kids[5] is ex.tabs and len(kids) == 6
    assert ex.tabs.titles == TAB_TITLES == ("replay", "state at the end", "diff")
    ex._ipython_display_()  # the timeline joins the replay tab when the explorer is shown
    assert ex.tabs.selected_index == 0 and holds(ex.tabs.children[0], ex.timeline.widget)
    ex.diff_view.value = "x"
    ex.select("dup:rebalance=1")
    assert ex.tabs.selected_index == 0 and ex.diff_view.value == ""
    ex.diff()
    assert ex.tabs.selected_index == 2 and ex.tabs.children[2] is ex.diff_view
    ex.next_choice()  # at the last choice: refused, the diff stays shown
    assert ex.tabs.selected_index == 2
    ex.previous_choice()
    assert ex.tabs.selected_index == 0


class _Recording:
    """``comm.create_comm`` replaced: every widget's comm records what it publishes."""

    def __init__(self) -> None:
        self.sent: dict[str, list[tuple[str, dict]]] = {}

    def create(self, *args, **kwargs):
        import comm

        rec = self

        class Comm(comm.DummyComm):
            def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
                rec.sent.setdefault(self.comm_id, []).append((msg_type, data or {}))

        return Comm(*args, **kwargs)

    def of(self, widget) -> list[tuple[str, dict]]:
        return self.sent[widget.model_id]


@pytest.fixture
def recording(monkeypatch):
    import comm

    rec = _Recording()
    monkeypatch.setattr(comm, "create_comm", rec.create)
    return rec


def _opened_with_the_figure(msgs: list[tuple[str, dict]], traces: int) -> None:
    """The widget's first message opens it with all ``traces`` and a layout, and no message
    before its display changes them: a view is drawn from the state it opened with."""
    kind, data = msgs[0]
    assert kind == "comm_open"
    state = data["state"]
    assert len(state["_widget_data"]) == traces and state["_widget_layout"]
    later = [k for _, d in msgs[1:] for k in d.get("state", {}) if k.startswith("_widget_")]
    assert later == []


def test_live_figures_open_with_their_traces(recording, monkeypatch):
    """A FigureWidget opened empty and filled by updates drew an empty plot now and then in
    JupyterLab (walk of issue 28: lesson 11's four explorer plots and lesson 00's panel
    timeline on a second Run All had no trace; the widget's model still held the empty
    state it opened with): the panel's timeline and the outcome explorer's bar chart open
    with their traces and layout in the comm's first message."""
    monkeypatch.delenv("MQLAB_PLOT_MODE", raising=False)
    with Lab(seed=1) as lab:
        p = control_panel(lab, plot_mode="live")
        fw = p.timeline.widget
        _opened_with_the_figure(recording.of(fw), len(fw.data))
        drawn = recording.of(fw)[0][1]["state"]["_widget_data"]
        assert sum(len(t.get("x", ())) for t in drawn) > 0  # the lab's first events
    xs = get_scenario("consumer_join")
    result = explore(xs, Bounds(depth=4))
    ex = OutcomeExplorer(result, xs, plot_mode="live")
    ex.select(result.rows[0].outcome)  # a replay before the explorer is shown
    ex._ipython_display_()  # as the cell that shows it
    _opened_with_the_figure(recording.of(ex.fig), 1)
    opened = recording.of(ex.fig)[0][1]["state"]["_widget_data"][0]["marker"]["color"]
    assert "#1f4e79" in opened  # the selected class's bar, dark from the start
    tl = ex.timeline.widget
    _opened_with_the_figure(recording.of(tl), len(tl.data))
    assert sum(len(t.get("x", ())) for t in recording.of(tl)[0][1]["state"]["_widget_data"]) > 0
