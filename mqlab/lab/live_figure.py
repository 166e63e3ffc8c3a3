"""A plotly ``FigureWidget`` whose frontend model starts with its traces and layout.

Mirrors no RocketMQ class: it is the workbench's live plot (docs/design.md §5).

``plotly.graph_objects.FigureWidget`` opens its comm (the frontend model) at the very start
of its constructor, before it has any trace, and sends the traces and layout in a state
update after. A view renders from the model's state once, when it is created, and ignores
later changes of that state (plotly's widget bundle: ``do_data`` and ``do_layout`` do
nothing). On a loaded machine JupyterLab created the view between the two messages: the
panel's timeline and the explorer's figure drew an empty plot titled "Click to enter Plot
title", and every later restyle had no trace to change (issue 28, "empty live plots under
load"). ``LiveFigure`` opens its comm only once its constructor has set both, so the first
state the frontend sees is the whole figure.

The panel's timeline (``panel_views.TimelineView``) is no plotly widget at all: as a
``LiveFigure`` it opened whole, but in the browser tier lesson 11's explorer timelines then
drew none of the data that later updates sent (9 traces, 0 points), and as a plain
``FigureWidget`` lesson 00's drew an empty plot; why the later deltas were lost is not
found. It is a figure copied whole into an ``Output`` on each change, whose view redraws
from its state every time.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import plotly.graph_objects as go

__all__ = ["LiveFigure"]


class LiveFigure(go.FigureWidget):
    """A ``FigureWidget`` (same arguments) whose comm opens with its data and layout."""

    def __init__(self, data: Any = None, layout: Any = None, **kwargs: Any) -> None:
        self._defer_open = True  # plain attribute: BaseFigure.__init__ calls open() first
        super().__init__(data=data, layout=layout, **kwargs)
        self._defer_open = False
        self._widget_data = deepcopy(self._data)
        self._widget_layout = deepcopy(self._layout_obj._props)
        self.open()

    def open(self) -> None:
        if getattr(self, "_defer_open", False):
            return
        super().open()
