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
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[2]


def code_cells(stem: str) -> list[str]:
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


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


def open_panel(stem: str, marker: str = "control_panel(", nth: int = 0) -> tuple[Any, dict]:
    """Run ``stem``'s cells up to the ``nth`` cell containing ``marker``; return its value."""
    ns: dict[str, Any] = {"__name__": f"walk_{stem}"}
    seen = 0
    for i, src in enumerate(code_cells(stem)):
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
