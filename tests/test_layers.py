"""The core's imports point down only (docs/design.md §4).

An import-graph check over the source with ``ast``: no module of the core (``common``,
``runtime``, ``remoting``, ``store``, ``dledger``, ``broker``, ``namesrv``, ``client``, ``trace``) imports
the layers above it (``explore``, ``lab``, ``experiments``, ``conformance``, ``interop``,
``bench``), at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ("common", "runtime", "remoting", "store", "dledger", "broker", "namesrv", "client", "trace")
ABOVE = ("explore", "lab", "experiments", "conformance", "interop", "bench")


def imported_modules(source: str) -> list[tuple[int, str]]:
    """Every absolute module name that ``source`` imports (``from a import b`` gives ``a`` and
    ``a.b``), with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def upward(source: str) -> list[str]:
    """The imports in ``source`` that reach a layer above the core, as ``line: module``."""
    return [
        f"{line}: {name}"
        for line, name in imported_modules(source)
        if any(name == f"mqlab.{up}" or name.startswith(f"mqlab.{up}.") for up in ABOVE)
    ]


@pytest.mark.parametrize("package", CORE)
def test_core_never_imports_the_layers_above(package):
    """No module under mqlab/<package> imports mqlab.explore, lab, experiments and the like."""
    files = sorted((ROOT / "mqlab" / package).rglob("*.py"))
    assert files, package
    hits = [f"{f.relative_to(ROOT)}:{hit}" for f in files for hit in upward(f.read_text("utf-8"))]
    assert hits == []


def test_the_check_sees_an_upward_import():
    """The check finds an upward import at module level and inside a function, and nothing else."""
    source = (
        "import os\nfrom mqlab.common import mutants\n\n"
        "def f():\n    from mqlab.explore import mutants\n    import mqlab.lab.lab\n"
    )
    assert upward(source) == ["5: mqlab.explore", "5: mqlab.explore.mutants", "6: mqlab.lab.lab"]
