"""A cell that uses a name no cell has defined yet (a kernel restart, cells run out of order)
says to run the notebook from the top, under the NameError's traceback (issue 28).

Mirrors no RocketMQ class. Runs an IPython shell in a subprocess, as a kernel runs a notebook:
the lesson's first cell imports mqlab.lab, which installs the hint
(``mqlab.lab.install_name_error_hint``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mqlab.lab import NAME_ERROR_HINT

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
from IPython.core.interactiveshell import InteractiveShell

sh = InteractiveShell.instance(colors="NoColor")
def cell(src):
    print(f"=== {src}", flush=True)
    r = sh.run_cell(src)
    print(f"=== ok={r.success} error={type(r.error_in_exec).__name__}", flush=True)

cell("L.scenario()")                                  # before the lesson's first import
cell("from mqlab.lab.check import check, learner_seed")  # the lesson's first cell
cell("L.scenario()")                                  # a later cell after a restart
cell("1 / 0")
cell("exec('undefined_inside', {})")                  # a NameError not in the cell's names
"""


def _run_cells() -> list[tuple[str, str, str]]:
    """(cell source, what it showed, "ok=… error=…") for each cell of SCRIPT, in order."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout  # fmt: skip
    cells = []
    for part in out.split("=== ")[1:]:
        if part.startswith("ok="):
            src, shown = cells.pop()
            cells.append((src, shown, part.strip()))
        else:
            src, _, shown = part.partition("\n")
            cells.append((src, shown))
    return cells


def test_a_name_error_in_a_cell_says_to_run_from_the_top():
    before, first, after, zero, inside = _run_cells()
    assert [c[2] for c in (before, first, after, zero, inside)] == [
        "ok=False error=NameError",
        "ok=True error=NoneType",
        "ok=False error=NameError",
        "ok=False error=ZeroDivisionError",
        "ok=False error=NameError",
    ]
    # the lesson's first import installs it: a bare NameError before, the hint after
    assert "NameError: name 'L' is not defined" in before[1] and NAME_ERROR_HINT not in before[1]
    assert f"NameError: name 'L' is not defined\n{NAME_ERROR_HINT}" in after[1]
    # other errors, and a NameError raised outside the cell's own names, stay as they were
    assert "ZeroDivisionError" in zero[1] and NAME_ERROR_HINT not in zero[1]
    assert "undefined_inside" in inside[1] and NAME_ERROR_HINT not in inside[1]


def test_no_shell_no_hint_and_another_handler_is_left_alone():
    from mqlab.lab import install_name_error_hint

    assert install_name_error_hint() is False  # pytest runs no IPython

    class Shell:
        custom_exceptions = (KeyError,)

    assert install_name_error_hint(Shell()) is False
