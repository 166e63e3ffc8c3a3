"""The workbench layer: the ``Lab`` facade, inspectors, widgets and figures.

``from mqlab.lab import Lab, control_panel, check, learner_seed`` is all a lesson needs
(lesson 11 adds ``OutcomeExplorer``).
"""

from typing import Any

from mqlab.lab.check import check, expected, learner_seed
from mqlab.lab.lab import Lab
from mqlab.lab.name_error_hint import NAME_ERROR_HINT, install_name_error_hint

__all__ = ["Lab", "check", "control_panel", "dledger_panel", "expected", "learner_seed",
           "OutcomeExplorer", "install_name_error_hint", "NAME_ERROR_HINT"]  # fmt: skip


def _full_text_in_notebook_tables() -> None:
    """In a notebook, show trace text whole: pandas cuts table cells at 50 characters by
    default ("suspended 18000 ms ≥ 150…"). Left alone outside IPython or when the learner
    already chose another width."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    import pandas as pd

    if pd.get_option("display.max_colwidth") == 50:
        pd.set_option("display.max_colwidth", 400)


_full_text_in_notebook_tables()

install_name_error_hint()


def __getattr__(name: str) -> Any:
    # ipywidgets and plotly load only when a panel is asked for.
    if name == "control_panel":
        from mqlab.lab.widgets import control_panel

        return control_panel
    if name == "dledger_panel":
        from mqlab.lab.dledger_widgets import dledger_panel

        return dledger_panel
    if name == "OutcomeExplorer":
        from mqlab.lab.outcome_explorer import OutcomeExplorer

        return OutcomeExplorer
    raise AttributeError(f"module 'mqlab.lab' has no attribute {name!r}")
