"""Follow a lesson's "drive it yourself" / "Your turn" walk as a learner does (issue 20).

``open_panel(stem)`` runs the learner notebook ``notebooks/<stem>.ipynb`` cell by cell, in
one namespace, exactly as *Run All* would up to the cell that shows the walk's panel, and
returns that cell's value (the ``ControlPanel``) with the namespace. A walk test then
clicks what the prose says, through the panel's buttons and inputs (the same callbacks a
browser click runs), and asserts what the prose says will be seen.

Mirrors no RocketMQ class: test plumbing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[2]


#: The learner notebooks' first cell names the learner so: a walk test may put another name.
LEARNER_LINE = 'LEARNER = "your-name"'


def code_cells(stem: str, learner: str | None = None) -> list[str]:
    """The code cells of the learner notebook; with ``learner``, as that learner typed their
    name into the first cell (so their seed, and their exercises' numbers, differ)."""
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    if learner is not None:
        assert LEARNER_LINE in cells[0], f"{stem}: no {LEARNER_LINE!r} in the first cell"
        cells[0] = cells[0].replace(LEARNER_LINE, f"LEARNER = {learner!r}")
    return cells


def _run_cell(src: str, ns: dict[str, Any], name: str) -> Any:
    """Run one cell; return the value of its last line when that is an expression."""
    tree = ast.parse(src, filename=name)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body = tree.body[:-1]
    exec(compile(tree, name, "exec"), ns)  # noqa: S102 — the repo's own lesson cells
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), name, "eval"), ns)  # noqa: S307


def open_panel(stem: str, marker: str = "control_panel(", nth: int = 0, *,
               learner: str | None = None) -> tuple[Any, dict]:  # fmt: skip
    """Run ``stem``'s cells up to the ``nth`` cell containing ``marker``; return its value
    and the namespace (``learner``: the name typed into the first cell, see ``code_cells``)."""
    ns: dict[str, Any] = {"__name__": f"walk_{stem}"}
    seen = 0
    for i, src in enumerate(code_cells(stem, learner)):
        value = _run_cell(src, ns, f"<{stem} cell {i}>")
        if marker in src:
            if seen == nth:
                return value, ns
            seen += 1
    raise AssertionError(f"{stem}: no cell with {marker!r} (#{nth})")


def run_cell_with(stem: str, marker: str, ns: dict[str, Any]) -> Any:
    """Run the first cell of ``stem`` containing ``marker`` again in ``ns`` (a learner
    re-running it); return its value."""
    for i, src in enumerate(code_cells(stem)):
        if marker in src:
            return _run_cell(src, ns, f"<{stem} cell {i}>")
    raise AssertionError(f"{stem}: no cell with {marker!r}")


def clicks(panel: Any, since: int) -> str:
    """What the panel's log said since message ``since``."""
    return "\n".join(panel.messages[since:])


def prose_quotes(stem: str, heading: str) -> list[str]:
    """What the section ``heading`` of ``lessons/<stem>.md`` quotes of the log: its inline code
    spans with a space in them (a name such as `TopicTest@0` or `walk` is no log line), each
    with its line breaks and indents collapsed to one space."""
    text = (ROOT / "lessons" / f"{stem}.md").read_text()
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    end = min(i for i in (text.find("\n## ", start), text.find("```{code-cell}", start),
                          len(text)) if i >= 0)  # fmt: skip
    spans = [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", text[start:end])]
    return [s for s in spans if " " in s]


def unquoted(quotes: list[str], log: str) -> list[str]:
    """The quotes not found in ``log``; "…" in a quote (and the spaces around it) stands for
    any text on the same line."""
    missing = []
    for q in quotes:
        pattern = r"[^\n]*?".join(re.escape(part.strip()) for part in q.split("…"))
        if re.search(pattern, log) is None:
            missing.append(q)
    return missing
