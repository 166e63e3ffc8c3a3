"""Build the lesson notebooks from their sources: ``lessons/NN_name.md`` (jupytext MyST Markdown).

Run from the repository root (``make lessons`` does the first)::

    python tools/build_lessons.py            # writes notebooks/NN_name.ipynb and
                                             # notebooks/solutions/NN_name_solutions.ipynb
    python tools/build_lessons.py --check    # writes nothing; exit 1 naming stale notebooks
    python tools/build_lessons.py 04_long_polling   # only these lessons

A source is a notebook in jupytext's MyST Markdown: prose as Markdown, code in
```` ```{code-cell} ```` blocks, cells split with ``+++``. Two cell tags make exercises:

* a Markdown cell tagged ``exercise`` holding only ``### Exercise NN.k``: the builder adds the
  question registered for ``NN.k`` in ``mqlab.lab.lessons.lessonNN`` (next to its checker and
  hint, so the notebook and the checker never disagree) and a one-line note;
* a code cell tagged ``solution`` (the worked answer; it assigns ``answer``): the learner copy
  gets one cell ``answer = ...  # your prediction`` + ``check("NN.k", answer, seed=SEED)``
  instead (in one cell, so a failing answer line never lets the check grade the ``answer``
  left over from an earlier exercise); the solutions copy gets the worked answer and then
  ``assert check(...)``.

Every other cell goes to both copies as it is, except that Markdown links to files are written
relative to ``notebooks/`` (``[the steps](mechanisms.md)``) and get a ``../`` in the solutions copy. The notebooks are written without outputs, with
cell ids derived from the lesson and the cell's position, and with fixed metadata, so rebuilding
an unchanged source gives the same bytes (tests/lab/test_lesson_sources.py checks that the
committed notebooks are up to date).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "lessons"
NOTEBOOKS = ROOT / "notebooks"

#: What the notebooks say in their metadata (the lab fills in the rest from its kernel on open).
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}
LEARNER_NOTE = "*Predict first: replace the `...` with your answer and run the check.*"
SOLUTION_NOTE = "*Worked answer below.*"
PLACEHOLDER = "answer = ...  # your prediction"
EXERCISE_HEADING = re.compile(r"### Exercise (\d\d\.\d+)")
#: A Markdown link to a file relative to notebooks/ (not a URL, an anchor or an absolute path).
RELATIVE_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)\)")


class SourceError(ValueError):
    """A lesson source breaks the rules above (the message names the file and the cell)."""


@dataclass(frozen=True, slots=True)
class Lesson:
    """One lesson source, read: its name (``04_long_polling``), cells and ``mqlab`` settings."""

    stem: str
    cells: list[nbformat.NotebookNode]
    settings: dict

    @property
    def learner_path(self) -> Path:
        return NOTEBOOKS / f"{self.stem}.ipynb"

    @property
    def solutions_path(self) -> Path:
        return NOTEBOOKS / "solutions" / f"{self.stem}_solutions.ipynb"


def read_lesson(path: Path) -> Lesson:
    """Read ``lessons/NN_name.md``; check its exercise and solution cells."""
    nb = jupytext.read(path, fmt="md:myst")
    lesson = Lesson(path.stem, list(nb.cells), dict(nb.metadata.get("mqlab", {})))
    open_exercise = None
    for i, cell in enumerate(lesson.cells):
        tags = cell.metadata.get("tags", [])
        where = f"{path.name}, cell {i}"
        if "exercise" in tags:
            m = EXERCISE_HEADING.fullmatch(cell.source.strip())
            if cell.cell_type != "markdown" or m is None:
                raise SourceError(f"{where}: an exercise cell holds only '### Exercise NN.k'")
            if open_exercise is not None:
                raise SourceError(f"{where}: exercise {open_exercise} has no solution cell")
            open_exercise = m.group(1)
        elif "solution" in tags:
            if cell.cell_type != "code" or open_exercise is None:
                raise SourceError(f"{where}: a solution is a code cell after an exercise heading")
            if not re.search(r"^\s*answer\s*=", cell.source, flags=re.M):
                raise SourceError(f"{where}: the solution of {open_exercise} must set `answer`")
            open_exercise = None
    if open_exercise is not None:
        raise SourceError(f"{path.name}: exercise {open_exercise} has no solution cell")
    return lesson


def build(lesson: Lesson, *, solutions: bool) -> nbformat.NotebookNode:
    """The learner copy of ``lesson``, or with ``solutions`` its solutions copy."""
    from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)
    from mqlab.lab.check import EXERCISES

    s = lesson.settings
    learner_note = s.get("learner_note", LEARNER_NOTE)
    placeholder = s.get("placeholder", PLACEHOLDER)
    out: list[nbformat.NotebookNode] = []
    exercise_id = ""
    for cell in lesson.cells:
        tags = cell.metadata.get("tags", [])
        text = cell.source.strip("\n")
        if "exercise" in tags:
            exercise_id = EXERCISE_HEADING.fullmatch(text.strip()).group(1)
            if exercise_id not in EXERCISES:
                raise SourceError(
                    f"{lesson.stem}: exercise {exercise_id} is not registered in "
                    f"mqlab.lab.lessons.lesson{exercise_id[:2]}"
                )
            note = SOLUTION_NOTE if solutions else learner_note
            question = EXERCISES[exercise_id].question
            out.append(new_markdown_cell(f"### Exercise {exercise_id}\n\n{question}\n\n{note}"))
        elif "solution" in tags:
            check = f'check("{exercise_id}", answer, seed=SEED)'
            if solutions:
                out.append(new_code_cell(text))
                out.append(new_code_cell(f"assert {check}"))
            else:  # one cell: if the answer line fails, no earlier exercise's answer is graded
                out.append(new_code_cell(f"{placeholder}\n{check}"))
        elif cell.cell_type == "markdown":
            if solutions and not out:
                text = text.replace("\n", " — solutions\n", 1)
            if solutions:  # links are written relative to notebooks/; solutions/ is one deeper
                text = RELATIVE_LINK.sub(r"](../\1)", text)
            out.append(new_markdown_cell(text))
        else:
            out.append(new_code_cell(text))
    copy = "s" if solutions else "l"
    for i, c in enumerate(out):
        c.id = f"l{lesson.stem[:2]}-{copy}{i:03d}"  # "l04-l007": lesson, copy, position
    nb = new_notebook(cells=out, metadata=METADATA)
    nbformat.validate(nb)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    """The notebook's file text: nbformat's JSON (1-space indent, sorted keys) and a newline."""
    return nbformat.writes(nb) + "\n"


def targets(stems: list[str] | None = None) -> dict[Path, str]:
    """Every notebook the sources make (or those of ``stems``), path → file text."""
    paths = sorted(SOURCES.glob("[0-9][0-9]_*.md"))
    if stems:
        paths = [p for p in paths if p.stem in stems]
        missing = set(stems) - {p.stem for p in paths}
        if missing:
            raise SourceError(f"no lesson source for {sorted(missing)} in {SOURCES}")
    out = {}
    for path in paths:
        lesson = read_lesson(path)
        out[lesson.learner_path] = render(build(lesson, solutions=False))
        out[lesson.solutions_path] = render(build(lesson, solutions=True))
    return out


def stale(stems: list[str] | None = None) -> list[Path]:
    """The notebooks whose committed text differs from what their source builds."""
    return [
        p
        for p, text in targets(stems).items()
        if not p.exists() or p.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stems", nargs="*", help="lessons to build, e.g. 04_long_polling (default all)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if any is stale")
    args = ap.parse_args(argv)
    try:
        built = targets(args.stems or None)
    except SourceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    changed = []
    for path, text in built.items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        changed.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in changed:
        rel = path.relative_to(ROOT)
        print(f"stale: {rel} (run `make lessons`)" if args.check else f"wrote {rel}")
    if not changed:
        print(f"{len(built)} notebooks up to date")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
