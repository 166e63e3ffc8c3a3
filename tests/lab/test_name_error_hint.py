"""A cell that uses a name no cell has defined yet (a kernel restart, cells run out of order)
says to run the notebook from the top, under the NameError's traceback (issue 28).

Mirrors no RocketMQ class. Runs an IPython shell in a subprocess, as a kernel runs a notebook:
the lesson's first cell imports mqlab.lab, which installs the hint
(``mqlab.lab.install_name_error_hint``); and real kernels started as ``make lab`` starts them,
whose PYTHONSTARTUP (mqlab/lab/kernel_startup.py) installs it before any cell runs.
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


def _kernel_run(cells: list[str], env: dict[str, str]) -> list[tuple[str, str]]:
    """Start a real IPython kernel (ipykernel, as JupyterLab does) with ``env``, run ``cells``
    in order; each cell's (error name or "", the traceback text it showed)."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(ROOT))
    out = []
    try:
        for src in cells:
            msg_id = kc.execute(src)
            ename, shown = "", ""
            while True:
                msg = kc.get_iopub_msg(timeout=60)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "error":
                    ename, shown = content["ename"], "\n".join(content["traceback"])
                elif kind == "stream":
                    shown += content["text"]
                elif kind == "status" and content["execution_state"] == "idle":
                    break
            out.append((ename, shown))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return out


def test_make_labs_kernels_give_the_hint_before_the_lessons_first_cell():
    """``make lab`` sets PYTHONSTARTUP to mqlab/lab/kernel_startup.py: in a kernel started with
    it, the very first cell's NameError carries the hint; the startup leaves no name in the
    notebook's namespace and imports none of mqlab (the lesson's own import does, later)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert 'PYTHONSTARTUP="$(CURDIR)/mqlab/lab/kernel_startup.py"' in makefile
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PYTHONSTARTUP": str(ROOT / "mqlab" / "lab" / "kernel_startup.py")}  # fmt: skip
    first, names, loaded, inside = _kernel_run(
        [
            "L.scenario()",
            "print(sorted(n for n in dir() if 'mqlab' in n.lower()))",
            "import sys; print(sorted(m for m in sys.modules if m.startswith('mqlab')))",
            "exec('undefined_inside', {})",
        ],
        env,
    )
    assert first[0] == "NameError" and first[1].endswith(NAME_ERROR_HINT)
    assert names == ("", "[]\n")
    assert loaded == ("", "[]\n")
    assert inside[0] == "NameError" and NAME_ERROR_HINT not in inside[1]


def test_without_the_startup_a_kernels_first_name_error_is_bare():
    """The same first cell in a kernel started without PYTHONSTARTUP: a bare NameError (what the
    test above would see if the startup did nothing)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    [(ename, shown)] = _kernel_run(["L.scenario()"], {**env, "PYTHONPATH": str(ROOT)})
    assert ename == "NameError" and NAME_ERROR_HINT not in shown


def test_the_startup_leaves_a_plain_interpreter_alone(tmp_path):
    """A plain ``python`` in the lab's terminal reads PYTHONSTARTUP too (interactive only); run
    as a script here, it neither fails, nor leaves a name, nor loads the hint."""
    startup = ROOT / "mqlab" / "lab" / "kernel_startup.py"
    code = (
        f"exec(open({str(startup)!r}).read())\n"
        "names = sorted(k for k in dir() if not k.startswith('__'))\n"
        "import sys\n"
        "print(names, sorted(m for m in sys.modules if 'name_error_hint' in m))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout  # fmt: skip
    assert out == "[] []\n"
