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
        assert p.timeline.figure.layout.height <= 360


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


def test_lesson10_panel_puts_the_log_under_its_buttons():
    """Walk of issue 28: lesson 10's panel drew its four message tables between its buttons
    and its log (1 005 px in Chromium after the lesson's walk, the log from 600 px down and
    pushed further by every half-queue row); now the transaction row, the time row, the log,
    then the four tables and the inspector."""
    from mqlab.lab.lessons import lesson10 as L10

    p = L10.transaction_panel(L10.tx_lab(1))
    kids = p.widget.children
    assert len(kids) == 5
    assert holds(kids[0], p.buttons["step_check"]) and holds(kids[1], p.buttons["advance"])
    assert holds(kids[2], p.log)
    assert kids[3] is p.queues_view and holds(kids[4], p.inspector)
