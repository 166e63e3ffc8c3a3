"""The live plots' frontend models start with their traces and layout (issue 28, "empty live
plots under load"): the first state JupyterLab receives, the comm's open message, already
holds the whole figure, so a view created before any later update still draws it."""

from __future__ import annotations

import comm
import plotly.graph_objects as go
import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario
from mqlab.lab.live_figure import LiveFigure
from mqlab.lab.outcome_explorer import OutcomeExplorer
from mqlab.lab.panel_views import TimelineView


@pytest.fixture
def opened(monkeypatch):
    """The state of every widget comm opened, by model: what the frontend starts from."""
    states: list[dict] = []
    real = comm.create_comm

    def spy(**kw):
        states.append(kw["data"]["state"])
        return real(**kw)

    monkeypatch.setattr(comm, "create_comm", spy)
    return states


def _figures(states: list[dict]) -> list[tuple[int, str | None]]:
    """(traces, title) of each plotly figure model opened."""
    return [
        (len(s["_widget_data"]), (s["_widget_layout"].get("title") or {}).get("text"))
        for s in states
        if "_widget_data" in s
    ]


def test_plotlys_own_figure_widget_opens_empty_and_ours_opens_whole(opened):
    """The defect's cause, pinned: plotly's FigureWidget opens its comm before its traces."""
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout={"title": {"text": "T"}})
    go.FigureWidget(fig)
    live = LiveFigure(fig)
    assert _figures(opened) == [(0, None), (1, "T")]
    assert live.comm is not None and len(live.data) == 1 and live.layout.title.text == "T"


def test_the_panels_timeline_is_no_figure_widget_but_an_output_holding_its_figure(opened):
    """4 parked-pull bar series (one per reason: message, timeout, dropped, unanswered) and
    5 event-marker series (step, timer, state, fault, error), titled. The panel's timeline
    opens no plotly model: its figure (edited in place in the kernel) is put whole into an
    Output on every change, and a view of an Output redraws on each change of its state (a
    LiveFigure's view draws the state it opens with and then only deltas: after a page reload
    on a loaded machine lesson 00's timeline stopped drawing new clicks, and lesson 11's
    explorer timeline stayed empty, 'Node by node' with 9 traces and 0 points)."""
    import ipywidgets as widgets

    tl = TimelineView(mode="live")
    assert tl.mode == "live" and isinstance(tl.widget, widgets.Output)
    assert _figures(opened) == []
    assert len(tl.figure.data) == 9 and tl.figure.layout.title.text == "Node by node"


def test_the_outcome_explorers_live_figure_opens_with_its_bars(opened):
    xs = get_scenario("consumer_join")
    result = explore(xs, Bounds(depth=xs.depth))
    ex = OutcomeExplorer(result, xs, plot_mode="live")
    assert isinstance(ex.fig, LiveFigure)
    opened_figs = _figures(opened)
    assert (len(ex.fig.data), ex.fig.layout.title.text) in opened_figs
    assert len(ex.fig.data) >= 1
