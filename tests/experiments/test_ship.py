"""What mqlab ships to Spark executors (mqlab.experiments.ship): the zips and the probe. No Spark."""

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

import mqlab
from mqlab.experiments.ship import (
    REQUIRED_MODULES,
    SHIPPED_DISTRIBUTIONS,
    _probe_function,
    package_zips,
)
from mqlab.experiments.sweep import load_sweep

ROOT = Path(__file__).resolve().parents[2]


def test_package_zips_hold_mqlab_and_its_pure_python_dependencies(tmp_path):
    """mqlab-<version>-<hash>.zip holds the package's sources; mqlab-deps-<hash>.zip lark, plotly
    (with _plotly_utils) and narwhals with their dist-info; beside each x.py its x.pyc, no
    __pycache__, no compiled extension; a second call reuses both files."""
    own, deps = package_zips(tmp_path)
    assert own.name.startswith(f"mqlab-{mqlab.__version__}-") and deps.name.startswith(
        "mqlab-deps-"
    )
    names = zipfile.ZipFile(own).namelist()
    assert {"mqlab/__init__.py", "mqlab/experiments/task.py", "mqlab/experiments/ship.py"} <= set(
        names
    )
    assert all(n.startswith("mqlab/") and "__pycache__" not in n for n in names)
    sources = [n for n in names if n.endswith(".py")]
    assert len(sources) > 150 and {n + "c" for n in sources} <= set(names)
    dep_names = zipfile.ZipFile(deps).namelist()
    tops = {n.split("/")[0] for n in dep_names}
    versions = {d: importlib.metadata.version(d) for d in SHIPPED_DISTRIBUTIONS}
    assert {"lark", "plotly", "_plotly_utils", "narwhals"} <= tops
    assert {f"{d}-{v}.dist-info" for d, v in versions.items()} <= tops
    assert not [n for n in dep_names if n.endswith((".so", ".pyd"))]
    assert "plotly/__init__.pyc" in dep_names and "lark/lark.pyc" in dep_names
    assert package_zips(tmp_path) == [own, deps]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([own.name, deps.name])


def _import_from(zip_path: Path, module: str) -> str:
    """Import ``module`` in a fresh interpreter whose path starts with ``zip_path``; its file."""
    code = f"import sys; sys.path.insert(0, {str(zip_path)!r}); import {module}; print({module}.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                         check=True)  # fmt: skip
    return out.stdout.strip()


def test_shipped_byte_code_is_used_and_a_foreign_python_falls_back_to_source(tmp_path):
    """The pycs are unchecked hash-based (PEP 552 flags 0b01, so zipimport does not compare them
    with the zip's two-second time stamps) and zipimport loads them; where the magic number is
    another Python's, the same zip imports from source."""
    own, _ = package_zips(tmp_path)
    with zipfile.ZipFile(own) as z:
        pyc = z.read("mqlab/experiments/task.pyc")
        assert pyc[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(pyc[4:8], "little") == 0b01
        entries = [(i, z.read(i)) for i in z.infolist()]
    assert _import_from(own, "mqlab.experiments.task") == f"{own}/mqlab/experiments/task.pyc"
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        for info, data in entries:
            z.writestr(info, b"\x00\x00" + data[2:] if info.filename.endswith(".pyc") else data)
    assert _import_from(foreign, "mqlab.experiments.task") == f"{foreign}/mqlab/experiments/task.py"


def _closure(names):
    seen, todo = set(), list(names)
    while todo:
        dist = importlib.metadata.distribution(todo.pop())
        name = dist.metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        for req in map(Requirement, dist.requires or ()):
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def test_a_run_imports_only_what_is_shipped_or_required():
    """A run on an executor (the task module, one run) imports third-party distributions only from
    SHIPPED_DISTRIBUTIONS and REQUIRED_MODULES (with what they require): the executor check's lists
    stay complete."""
    config = load_sweep(ROOT / "datasets/specs/long_vs_short_polling.yaml").configs()[0]
    code = (
        "import importlib.metadata, json, sys\n"
        "before = set(sys.modules)\n"  # what site start-up imported (.pth files)
        "import mqlab.experiments.spark\n"
        "from mqlab.experiments.sweep import RunConfig\n"
        "from mqlab.experiments.task import execute\n"
        "execute(RunConfig.from_json(sys.stdin.read()))\n"
        "dists = importlib.metadata.packages_distributions()\n"
        "mods = set(sys.modules) - before - set(sys.stdlib_module_names)\n"
        "tops = {m.split('.')[0] for m in mods}\n"
        "print(json.dumps(sorted({d.lower() for t in tops for d in dists.get(t, ())})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=config.to_json(), capture_output=True,
                         text=True, check=True)  # fmt: skip
    imported = set(json.loads(out.stdout)) - {"mqlab"}
    # mqlab.lab tries IPython (to widen notebook tables), mqlab.remoting.fastjson orjson (a
    # faster JSON reader and writer, same bytes), and both go on without them: optional
    allowed = (
        _closure(SHIPPED_DISTRIBUTIONS) | _closure(REQUIRED_MODULES)
        | _closure(["ipython", "orjson"])
    )  # fmt: skip
    assert imported <= allowed, imported - allowed
    assert {"pandas", "numpy", "lark", "plotly", "narwhals"} <= imported


def test_the_probe_reports_this_python():
    """The probe (sent by value to executors) imports the required modules and mqlab's task code
    and reports the interpreter."""
    report = json.loads(_probe_function()(0))
    assert report == {
        "python": sys.executable,
        "version": ".".join(map(str, sys.version_info[:3])),
        "missing": [],
        "error": None,
        "mqlab": [mqlab.__version__, mqlab.__file__],
    }
    assert _probe_function().__module__ == "_mqlab_executor_probe"
