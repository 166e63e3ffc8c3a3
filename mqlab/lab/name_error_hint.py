"""A NameError in a notebook cell says to run the notebook from the top (issue 28).

Two ways in: a lesson's first cell imports ``mqlab.lab``, which installs the hint; and a kernel
of ``make lab`` runs ``mqlab/lab/kernel_startup.py`` first (PYTHONSTARTUP), which loads this
file on its own, so that a cell run before the lesson's first one gets the hint too. So this
module imports nothing of mqlab's, only IPython. Mirrors no RocketMQ class.
"""

from __future__ import annotations

from typing import Any

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
