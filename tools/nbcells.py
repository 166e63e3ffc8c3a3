"""Cells of a lesson notebook, and building the learner and solutions copies from them.

Shared by ``tools/build_lessons_05_08.py`` and ``tools/build_lesson09.py``. A lesson is a
list of cells: markdown (``Md``), code (``Code``) and exercises (``Exercise``). An exercise
becomes a ``### Exercise NN.k`` heading with its registered question, an optional cell
showing the learner's numbers, an answer cell (``answer = ...`` in the learner copy, the
worked answer in the solutions copy) and a check cell (``check(...)`` / ``assert
check(...)``). Notebooks carry no outputs and stable cell ids, so rebuilding gives the same
bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)
from mqlab.lab.check import EXERCISES

__all__ = ["Md", "Code", "Exercise", "Cell", "build"]


@dataclass(frozen=True)
class Md:
    text: str


@dataclass(frozen=True)
class Code:
    src: str


@dataclass(frozen=True)
class Exercise:
    id: str  # "05.1"; the question is the registered one (mqlab.lab.lessons.lessonNN)
    params: str | None  # a cell showing the learner's numbers (None: no such cell)
    solution: str  # the worked answer; must assign ``answer``


Cell = Md | Code | Exercise


def build(
    cells: list[Cell],
    *,
    solutions: bool,
    prefix: str,
    learner_note: str = "*Predict first: replace the `...` with your answer and run the check.*",
    placeholder: str = "answer = ...  # your prediction",
) -> nbformat.NotebookNode:
    """One copy of a lesson: ``solutions`` picks the worked answers and asserting checks."""
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    out = []
    for cell in cells:
        if isinstance(cell, Md):
            text = cell.text.strip("\n")
            if solutions and not out:
                text = text.replace("\n", " — solutions\n", 1)
            out.append(new_markdown_cell(text))
        elif isinstance(cell, Code):
            out.append(new_code_cell(cell.src.strip("\n")))
        else:
            note = "*Worked answer below.*" if solutions else learner_note
            question = EXERCISES[cell.id].question
            out.append(new_markdown_cell(f"### Exercise {cell.id}\n\n{question}\n\n{note}"))
            if cell.params:
                out.append(new_code_cell(cell.params.strip("\n")))
            check = f'check("{cell.id}", answer, seed=SEED)'
            if solutions:
                out.append(new_code_cell(cell.solution.strip("\n")))
                out.append(new_code_cell(f"assert {check}"))
            else:
                out.append(new_code_cell(placeholder))
                out.append(new_code_cell(check))
    for i, c in enumerate(out):
        c.id = f"{prefix}-{'s' if solutions else 'l'}{i:03d}"
    nb.cells = out
    nbformat.validate(nb)
    return nb
