"""Every worked answer passes after Run All: an exercise's inputs are its own.

Mirrors no RocketMQ class: this guards the lessons (issue 20, defect 1). A learner runs every
cell of ``notebooks/NN_name.ipynb``, then pastes the solutions notebook's worked answer into an
exercise's cell and runs it again. The answer must still be right, so it may not depend on
anything a later cell changes (``lab.now``, a ``p`` reassigned by the next exercise, ...).

Each lesson runs in one kernel (nbclient, like Jupyter's "Run All"): every learner cell in order,
then, for each exercise, the solutions notebook's answer cell and the check, expecting ✔.
Owns: the Run-All contract of the lesson notebooks. Must not know: what an exercise computes.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)
from mqlab.lab.check import EXERCISES
from tests import patient_zmq

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
STEMS = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md"))
#: A learner's name (seed 50381): with it, 03.1's answer read 03.3's ``p`` and failed.
LEARNER = "ada"
CHECK = re.compile(r'^assert check\("(\d\d\.\d+)", answer, seed=SEED\)$')


def worked_answers(stem: str) -> dict[str, str]:
    """Exercise id → the solutions notebook's answer cell (the cell before its checking cell)."""
    nb = nbformat.read(NOTEBOOKS / "solutions" / f"{stem}_solutions.ipynb", as_version=4)
    cells = nb.cells
    out = {}
    for i, c in enumerate(cells):
        m = CHECK.match(c.source.strip()) if c.cell_type == "code" else None
        if m:
            out[m.group(1)] = cells[i - 1].source
    return out


def text_of(cell) -> str:
    parts = []
    for o in cell.outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type == "error":
            parts.append(f"{o.ename}: {o.evalue}")
    return "".join(parts).strip()


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_worked_answers_pass_after_run_all(stem):
    """Run All, then each worked answer + its check in the same kernel: all ✔."""
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert 'LEARNER = "your-name"' in first.source, first.source
    first.source = first.source.replace('"your-name"', f'"{LEARNER}"')  # as a learner would
    answers = worked_answers(stem)
    assert answers, stem
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    got = {}
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, i)  # raises CellExecutionError if a cell fails
        client.allow_errors = True  # a failing worked answer is reported below, with the others
        for ex_id, source in answers.items():
            cell = new_code_cell(f'{source}\nprint(check("{ex_id}", answer, seed=SEED))')
            nb.cells.append(cell)
            client.execute_cell(cell, len(nb.cells) - 1, store_history=False)
            got[ex_id] = text_of(cell)
    assert sorted(got) == sorted(k for k in EXERCISES if k[:2] == stem[:2])  # every exercise
    wrong = {k: v for k, v in got.items() if "✔ correct" not in v}
    assert wrong == {}, wrong


def test_a_reply_the_first_polls_missed_is_read_by_the_next(monkeypatch):
    """tests/patient_zmq.py (loaded by tests/conftest.py), with the lost edge made on
    purpose: the shell socket's first two polls answer "nothing" at once, as a poll whose
    edge was lost answers only at its timeout. The next poll reads the reply; the cell's
    output is whole and the cell after it runs as usual. A 1.5 s cell with ``POLL_S`` 0.2 is
    waited for in chunks and loses nothing either. Without the plugin, the first missed poll
    is nbclient's ``Empty``: "Cell execution timed out"."""
    monkeypatch.setattr(patient_zmq, "POLL_S", 0.2)
    nb = nbformat.v4.new_notebook()
    nb.cells = [new_code_cell("import time; time.sleep(1.5); print('slept')"),
                new_code_cell("print(6 * 7)")]  # fmt: skip
    client = NotebookClient(nb, timeout=60, kernel_name="python3")
    with client.setup_kernel():
        client.execute_cell(nb.cells[0], 0)
        socket = client.kc.shell_channel.socket
        real_poll, missed = socket.poll, []

        async def lossy_poll(timeout: int | None = None, *args: Any) -> int:
            if len(missed) < 2:
                missed.append(timeout)
                return 0
            return await real_poll(timeout, *args)

        socket.poll = lossy_poll
        client.execute_cell(nb.cells[1], 1)
    assert [text_of(c) for c in nb.cells] == ["slept", "42"]
    assert missed == [200, 200]


#: Names a worked answer may read although the lesson changes them later: none. ``lab`` is
#: listed apart because cells after an exercise advance it (``lab.now`` moves on).
MUTABLE = {"lab"}


def _reads_and_binds(source: str) -> tuple[set[str], set[str]]:
    tree = ast.parse(source)
    reads, binds = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (binds if isinstance(node.ctx, ast.Store) else reads).add(node.id)
        elif isinstance(node, ast.arg):
            binds.add(node.arg)
    return reads, binds


@pytest.mark.parametrize("stem", STEMS)
def test_worked_answers_read_nothing_a_later_cell_changes(stem):
    """Seed-independent: no name a worked answer reads is rebound after its exercise, nor is `lab`."""
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    trapped = {}
    for ex_id, source in worked_answers(stem).items():
        at = next(i for i, s in enumerate(code) if f'check("{ex_id}", answer, seed=SEED)' in s)
        reads, binds = _reads_and_binds(source)
        free = reads - binds
        later = set().union(*(_reads_and_binds(s)[1] for s in code[at + 1 :]))
        bad = sorted((free & later) | (free & MUTABLE))
        if bad:
            trapped[ex_id] = bad
    assert trapped == {}
