"""The workbench layer: the ``Lab`` facade, inspectors, widgets and figures.

``from mqlab.lab import Lab, control_panel, check, learner_seed`` is all a lesson needs.
"""

from typing import Any

from mqlab.lab.check import check, expected, learner_seed
from mqlab.lab.lab import Lab

__all__ = ["Lab", "check", "control_panel", "expected", "learner_seed"]


def __getattr__(name: str) -> Any:
    # ipywidgets and plotly load only when a panel is asked for.
    if name == "control_panel":
        from mqlab.lab.widgets import control_panel

        return control_panel
    raise AttributeError(f"module 'mqlab.lab' has no attribute {name!r}")
