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


def test_the_outcome_explorers_live_figure_opens_with_its_bars(opened):
    xs = get_scenario("consumer_join")
    result = explore(xs, Bounds(depth=xs.depth))
    ex = OutcomeExplorer(result, xs, plot_mode="live")
    assert isinstance(ex.fig, LiveFigure)
    opened_figs = _figures(opened)
    assert (len(ex.fig.data), ex.fig.layout.title.text) in opened_figs
    assert len(ex.fig.data) >= 1
