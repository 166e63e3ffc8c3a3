"""Getting mqlab to Spark executors that do not have it installed.

Mirrors no RocketMQ class. A cluster's executors run mqlab's tasks in their own Python,
which usually has pyspark's own dependencies (numpy, pandas, pyarrow: packages with
compiled code, installed with the cluster) but not mqlab. ``ship(spark)`` sends:

1. ``mqlab-<version>-<hash>.zip``: the ``mqlab`` package the driver imported (the same
   code, so the same rows), and
2. ``mqlab-deps-<hash>.zip``: the pure-Python distributions a run imports
   (``SHIPPED_DISTRIBUTIONS``: lark, plotly, narwhals; with their ``.dist-info``, since
   plotly and narwhals read their version from it; orjson, which has compiled code, is
   not sent: ``mqlab.remoting.fastjson`` uses it where it is installed and reads and
   writes the same bytes without it),

through ``SparkContext.addPyFile`` on a classic session, or
``spark.addArtifacts(path, pyfile=True)`` on Spark Connect. Executors put both zips at the
front of ``sys.path`` (zipimport), ahead of anything installed there. The zips are built
once per content (the name carries a hash of it, and of the driver's byte-code magic) under
``$MQLAB_SPARK_SHIP_DIR`` (default ``<tmp>/mqlab-spark-ship``).

Beside each ``x.py`` a zip holds ``x.pyc``, compiled by the driver's interpreter as an
*unchecked hash-based* pyc (PEP 552): zipimport cannot write byte code, so without it every
new Python worker compiles mqlab and plotly again (about half a second each). An executor
whose Python has another byte-code version sees a different magic number and zipimport
falls back to the source; an unchecked pyc also skips zipimport's comparison with the
source's time stamp, which a zip stores only to two seconds.

``check_executors(spark)`` then runs one small task per core (a plain Python UDF, so it
needs neither Arrow nor mqlab to start) that imports ``REQUIRED_MODULES`` and then mqlab's
task code, and reports the executors' Python. A module that is missing raises
``ExecutorEnvironmentError`` naming it, the executors' Python and what to install. The
same task leaves the Python workers with mqlab imported, ready for the runs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import py_compile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

__all__ = [
    "REQUIRED_MODULES",
    "SHIPPED_DISTRIBUTIONS",
    "ExecutorEnvironmentError",
    "check_executors",
    "package_zips",
    "ship",
]

#: Compiled packages a run imports: they cannot travel in a zip and must be installed on
#: the executors (pyspark[sql] needs the same three).
REQUIRED_MODULES = ("numpy", "pandas", "pyarrow")
#: Pure-Python distributions a run imports; shipped with mqlab.
SHIPPED_DISTRIBUTIONS = ("lark", "plotly", "narwhals")

_COMPILED = (".so", ".pyd", ".dylib", ".dll")


class ExecutorEnvironmentError(RuntimeError):
    """The executors' Python cannot run mqlab's tasks (the message says what is missing)."""


def _ship_dir() -> Path:
    env = os.environ.get("MQLAB_SPARK_SHIP_DIR")
    return Path(env) if env else Path(tempfile.gettempdir()) / "mqlab-spark-ship"


def _mqlab_files() -> list[tuple[Path, str]]:
    """(file, name in the zip) for every file of the imported ``mqlab`` package."""
    import mqlab

    pkg = Path(mqlab.__file__).resolve().parent
    out = []
    for f in sorted(pkg.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".pyo"):
            out.append((f, f.relative_to(pkg.parent).as_posix()))
    return out


def _distribution_files(name: str) -> list[tuple[Path, str]]:
    """(file, name in the zip) of an installed pure-Python distribution (from its RECORD)."""
    dist = importlib.metadata.distribution(name)
    out = []
    for rel in dist.files or ():
        text = rel.as_posix()
        if text.startswith("..") or "__pycache__" in rel.parts or text.endswith(".pyc"):
            continue  # scripts and data outside site-packages; byte code
        if text.endswith(_COMPILED):
            raise ValueError(f"distribution {name!r} has compiled code ({text}): not shippable")
        path = Path(dist.locate_file(rel))
        if path.is_file():
            out.append((path, text))
    return out


def _unchecked_pyc(path: Path, arcname: str, scratch: Path) -> bytes | None:
    """``path`` compiled as an unchecked hash-based pyc named ``arcname`` in tracebacks
    (None if it does not compile: it travels as source only, and an import of it fails on
    the executor as it would here)."""
    out = scratch / "module.pyc"
    try:
        py_compile.compile(str(path), cfile=str(out), dfile=arcname, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)  # fmt: skip
    except py_compile.PyCompileError:
        return None
    return out.read_bytes()


def _write_zip(target: Path, files: list[tuple[Path, str]]) -> Path:
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    with (
        zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z,
        tempfile.TemporaryDirectory(prefix="mqlab-pyc-") as scratch,
    ):
        for path, arcname in files:
            z.write(path, arcname)
            if arcname.endswith(".py"):
                pyc = _unchecked_pyc(path, arcname, Path(scratch))
                if pyc is not None:
                    z.writestr(arcname + "c", pyc)
    os.replace(partial, target)  # atomic: a concurrent builder writes the same bytes
    return target


def package_zips(directory: str | Path | None = None) -> list[Path]:
    """Build (or reuse) the mqlab zip and the dependencies zip; return their paths."""
    import mqlab

    out_dir = Path(directory) if directory is not None else _ship_dir()
    files = _mqlab_files()
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER)
    for path, arcname in files:
        digest.update(arcname.encode() + b"\0" + path.read_bytes() + b"\0")
    own = out_dir / f"mqlab-{mqlab.__version__}-{digest.hexdigest()[:16]}.zip"
    versions = [(d, importlib.metadata.version(d)) for d in SHIPPED_DISTRIBUTIONS]
    key = hashlib.sha256(importlib.util.MAGIC_NUMBER + json.dumps(versions).encode()).hexdigest()
    key = key[:16]
    deps = out_dir / f"mqlab-deps-{key}.zip"
    if not deps.exists():
        files_deps = [f for d in SHIPPED_DISTRIBUTIONS for f in _distribution_files(d)]
        _write_zip(deps, files_deps)
    return [_write_zip(own, files), deps]


def _session_key(spark: Any) -> str:
    from mqlab.experiments.spark import is_connect

    if is_connect(spark):
        return f"connect:{spark.session_id}"
    return f"classic:{spark.sparkContext.applicationId}"


_SHIPPED: dict[str, list[str]] = {}


def ship(spark: Any) -> list[Path]:
    """Add the zips to ``spark`` (once per session); return them."""
    from mqlab.experiments.spark import is_connect

    zips = package_zips()
    key = _session_key(spark)
    done = _SHIPPED.setdefault(key, [])
    for z in zips:
        if z.name in done:
            continue
        if is_connect(spark):
            spark.addArtifacts(str(z), pyfile=True)
        else:
            spark.sparkContext.addPyFile(str(z))
        done.append(z.name)
    return zips


# The probe is compiled from source under a module name that cannot be imported, so
# cloudpickle sends it by value: the executor needs nothing but the standard library to
# run it, whatever else it lacks.
_PROBE_SOURCE = """
def probe(_):
    import importlib, json, sys, traceback
    out = {"python": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
           "missing": [], "error": None, "mqlab": None}
    for name in REQUIRED:
        try:
            importlib.import_module(name)
        except ImportError:
            out["missing"].append(name)
    if not out["missing"]:
        try:
            import mqlab
            import mqlab.experiments.task
            out["mqlab"] = [mqlab.__version__, mqlab.__file__]
        except ImportError as e:
            out["missing"].append(e.name or str(e))
        except Exception:
            out["error"] = traceback.format_exc(limit=5)
    return json.dumps(out)
"""


def _probe_function():
    namespace: dict[str, Any] = {"__name__": "_mqlab_executor_probe",
                                 "REQUIRED": REQUIRED_MODULES}  # fmt: skip
    exec(compile(_PROBE_SOURCE, "<mqlab executor probe>", "exec"), namespace)
    return namespace["probe"]


_CHECKED: dict[str, list[dict[str, Any]]] = {}


def check_executors(spark: Any, tasks: int = 2) -> list[dict[str, Any]]:
    """Run the probe in ``tasks`` tasks; raise ``ExecutorEnvironmentError`` if one failed.

    Returns the probes' reports (``python``, ``version``, ``mqlab``: version and file).
    Done once per session.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    key = _session_key(spark)
    if key in _CHECKED:
        return _CHECKED[key]
    probe = F.udf(_probe_function(), T.StringType(), useArrow=False)
    rows = spark.range(0, tasks, 1, tasks).select(probe("id").alias("r")).collect()
    reports = [json.loads(r.r) for r in rows]
    bad = [r for r in reports if r["missing"] or r["error"]]
    if bad:
        r = bad[0]
        if r["missing"]:
            missing = sorted({m for b in bad for m in b["missing"]})
            raise ExecutorEnvironmentError(
                f"the Spark executors' Python ({r['python']}, {r['version']}) lacks "
                f"{', '.join(missing)}, which mqlab's runs import. mqlab ships itself and "
                f"its pure-Python dependencies ({', '.join(SHIPPED_DISTRIBUTIONS)}) but not "
                f"packages with compiled code: install {' '.join(REQUIRED_MODULES)} into the "
                "executors' Python (`pip install 'pyspark[sql]'` brings them), or ship a "
                "packed environment with spark.archives and point spark.pyspark.python at it."
            )  # fmt: skip
        raise ExecutorEnvironmentError(
            f"mqlab's task code fails to import on the Spark executors "
            f"({r['python']}, {r['version']}):\n{r['error']}"
        )
    _CHECKED[key] = reports
    return reports
