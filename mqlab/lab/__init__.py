"""The workbench layer: the ``Lab`` facade, inspectors, widgets and figures.

``from mqlab.lab import Lab, control_panel, check, learner_seed`` is all a lesson needs
(lesson 11 adds ``OutcomeExplorer``).
"""

from typing import Any

from mqlab.lab.check import check, expected, learner_seed
from mqlab.lab.lab import Lab

__all__ = ["Lab", "check", "control_panel", "expected", "learner_seed", "OutcomeExplorer",
           "install_name_error_hint", "NAME_ERROR_HINT"]  # fmt: skip


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

#: What a NameError in a notebook adds under its traceback.
NAME_ERROR_HINT = (
    "This cell uses a name that an earlier cell defines, and that cell has not run in this "
    "kernel (after a kernel restart, none has): run the notebook from the top "
    "(Run > Run All Cells)."
)


def install_name_error_hint(shell: Any = None) -> bool:
    """In IPython, a NameError's traceback ends with ``NAME_ERROR_HINT``.

    A lesson's first cell imports ``mqlab.lab``, which calls this: a cell run later, after a
    restart or out of order, then says how to get its names back instead of a bare NameError.
    Installs an IPython custom exception handler (``InteractiveShell.set_custom_exc``) unless
    another one is installed already. Returns whether the hint is installed.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    if getattr(shell, "_mqlab_name_error_hint", False):
        return True
    if shell.custom_exceptions:  # someone else's handler: leave it
        return False

    def hint(self: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None):
        stb = self.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        last = tb
        while last is not None and last.tb_next is not None:
            last = last.tb_next
        if last is not None and last.tb_frame.f_globals is self.user_ns:  # the cell's own name
            stb = [*stb, NAME_ERROR_HINT]
        self._showtraceback(etype, value, stb)

    shell.set_custom_exc((NameError,), hint)
    shell._mqlab_name_error_hint = True
    return True


install_name_error_hint()


def __getattr__(name: str) -> Any:
    # ipywidgets and plotly load only when a panel is asked for.
    if name == "control_panel":
        from mqlab.lab.widgets import control_panel

        return control_panel
    if name == "OutcomeExplorer":
        from mqlab.lab.outcome_explorer import OutcomeExplorer

        return OutcomeExplorer
    raise AttributeError(f"module 'mqlab.lab' has no attribute {name!r}")
