"""Sweeps on a real Spark standalone cluster and through Spark Connect (mqlab.experiments.cluster,
.ship, .jobs, and the CLI's ``--runner spark``).

One cluster for the module: a master and two workers with one core each, on 127.0.0.1 and free
ports, started from the pip pyspark package exactly as the README's "Scaling out" shows
(the command templates of ``mqlab.experiments.cluster``).
Drivers are ``python -m mqlab experiment run … --runner spark`` subprocesses. Executors run either
the project's Python or a venv that has numpy, pandas and pyarrow but no mqlab (nor lark, plotly,
narwhals): mqlab ships itself there. The Connect test runs last (its server holds both cores).
Every test checks that what it started has stopped; the last one stops the cluster and checks that
no process it started is left.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas.testing as pdt
import pytest

from mqlab.experiments.cluster import SWEEP_ON_CONNECT, SWEEP_ON_MASTER
from mqlab.experiments.parquet import read_events, read_manifest, read_metrics
from mqlab.experiments.runners import run_sequential
from mqlab.experiments.sweep import load_sweep

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SPEC = "datasets/specs/long_vs_short_polling.yaml"  # 2 seeds: 12 runs of ~0.05 s
SLOW_SPEC = "datasets/specs/crash_offset_persist.yaml"  # 40 runs of ~1 s (interrupted)


def _skip_without_spark() -> None:
    if os.environ.get("MQLAB_SKIP_SPARK", "").lower() in ("1", "true", "yes"):
        pytest.skip("MQLAB_SKIP_SPARK=1")
    pytest.importorskip("pyspark")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")


def _ours(root: Path) -> list[str]:
    """Live processes started for this module: their command line, cwd or environment name root."""
    mark = str(root).encode()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes()
            hit = mark in cmd or mark in (proc / "environ").read_bytes()
            hit = hit or os.readlink(proc / "cwd").startswith(str(root))
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if hit and state != "Z" and int(proc.name) != os.getpid():
            text = cmd.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{proc.name}: {text}")
    return found


def _wait_for(predicate, timeout_s: float = 60.0, what: str = "", show=None) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}: {show() if show else ''}"
        time.sleep(0.5)


def _apps_processes(root: Path) -> list[str]:
    """Our processes other than the master and workers (and their launch scripts)."""
    daemons = ("org.apache.spark.deploy.worker.Worker", "org.apache.spark.deploy.master.Master")
    return [p[:300] for p in _ours(root) if not any(d in p for d in daemons)]


def _link_distributions(site: Path, names: tuple[str, ...]) -> None:
    """Symlink installed distributions (and what they require) into another site-packages."""
    from packaging.requirements import Requirement

    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        dist = importlib.metadata.distribution(name)
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        tops = {f.parts[0] for f in dist.files or () if f.parts[0] != ".."}
        for top in tops:
            src, dst = Path(dist.locate_file(top)), site / top
            if src.exists() and not dst.exists():
                dst.symlink_to(src)
        for req in map(Requirement, dist.requires or ()):
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)


def _executor_python(root: Path, packages: tuple[str, ...]) -> str:
    """A venv of the base interpreter holding only ``packages`` (symlinked): no mqlab."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    _link_distributions(site, packages)
    return str(root / "bin" / "python")


def _imports(python: str, module: str) -> bool:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([python, "-c", f"import {module}"], env=env, cwd="/",
                       capture_output=True, check=False)  # fmt: skip
    return r.returncode == 0


def _command(template: str, **values: str) -> tuple[dict[str, str], list[str]]:
    """A README command line (``VAR=value python -m …``) as (environment, argv)."""
    words = shlex.split(template.format(**values))
    env = {}
    while "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    if words[0] == "python":
        words[0] = sys.executable
    return env, words


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    _skip_without_spark()
    from mqlab.experiments.cluster import LocalCluster

    root = tmp_path_factory.mktemp("cluster")
    c = LocalCluster(workers=2, cores=1, root=root).start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """Executors' Python with numpy, pandas and pyarrow, without mqlab, lark, plotly, narwhals."""
    return _executor_python(
        tmp_path_factory.mktemp("bare") / "venv", ("numpy", "pandas", "pyarrow")
    )


@pytest.fixture(scope="module")
def sequential():
    sweep = load_sweep(ROOT / SPEC).limit_seeds(2)
    return run_sequential(sweep, progress=False)


def _driver_env(cluster) -> dict[str, str]:
    """The cluster's driver environment with this checkout first on the path."""
    env = cluster.driver_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.pop("MQLAB_SPARK_SHIP", None)
    return env


def _run(template: str, env: dict[str, str], **values: str) -> subprocess.CompletedProcess:
    extra, argv = _command(template, **values)
    return subprocess.run(argv, env={**env, **extra}, cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip


def _no_app_running(cluster) -> bool:
    status = cluster.status()
    return not status["activeapps"] and all(w["coresused"] == 0 for w in status["workers"])


def test_a_master_whose_ui_port_was_taken_meanwhile_is_found_where_it_bound(tmp_path, monkeypatch):
    """The CI failure this guards: between ``free_port()`` and the master's start another process
    took the web UI port; Spark bound the next port, and ``status()`` read the other process's
    empty 200 answer (JSONDecodeError). The cluster reads the ports from the master's log."""
    _skip_without_spark()
    import http.server

    from mqlab.experiments import cluster as mod

    class Empty(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    squatter = http.server.HTTPServer(("127.0.0.1", 0), Empty)
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    taken = squatter.server_address[1]
    ports = iter([mod.free_port(), taken])
    monkeypatch.setattr(mod, "free_port", lambda: next(ports))
    try:
        with mod.LocalCluster(workers=0, root=tmp_path) as c:
            assert c.webui_port != taken
            assert c.status()["url"] == c.url
            assert c.status()["workers"] == []
    finally:
        squatter.shutdown()
        squatter.server_close()
    assert _ours(tmp_path) == []


def test_standalone_cluster_sweep_on_executors_without_mqlab(
    cluster, sequential, bare_python, tmp_path
):
    """--runner spark on spark://127.0.0.1:PORT (2 workers × 1 core) whose executors' Python has
    no mqlab (nor lark, plotly, narwhals): mqlab ships itself (addPyFile), and the 12 metrics rows
    and the events equal the sequential runner's; the progress bar reaches 12/12; the cluster is
    idle afterwards."""
    for module, present in (("mqlab", False), ("lark", False), ("plotly", False),
                            ("narwhals", False), ("pandas", True), ("pyarrow", True)):  # fmt: skip
        assert _imports(bare_python, module) is present, module
    out = tmp_path / "standalone"
    r = _run(SWEEP_ON_MASTER, _driver_env(cluster), python=bare_python, master=cluster.url,
             spec=SPEC, out=str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"running 12 run(s) of long_vs_short_polling on {cluster.url}" in r.stderr
    assert "12/12" in r.stderr  # the tqdm bar's last state
    pdt.assert_frame_equal(read_metrics(out), sequential.metrics)
    pdt.assert_frame_equal(read_events(out), sequential.events)
    assert read_manifest(out)["runs"] == 12
    _wait_for(lambda: _no_app_running(cluster), what="the application to end")
    assert "mqlab" in [a["name"] for a in cluster.status()["completedapps"]]


def test_executors_without_compiled_packages_get_a_clear_error(cluster, tmp_path):
    """Executors with a bare Python (standard library only): exit 1, naming what to install."""
    empty = _executor_python(tmp_path / "empty", ())
    assert not _imports(empty, "numpy")
    r = _run(SWEEP_ON_MASTER, _driver_env(cluster), python=empty, master=cluster.url, spec=SPEC,
             out=str(tmp_path / "o"))  # fmt: skip
    assert r.returncode == 1, r.stderr[-3000:]
    assert (
        f"mqlab experiment: the Spark executors' Python ({empty}, "
        f"{'.'.join(map(str, sys.version_info[:3]))}) lacks numpy, pandas, pyarrow, which "
        "mqlab's runs import." in r.stderr
    )
    assert "install numpy pandas pyarrow into the executors' Python" in r.stderr
    assert not (tmp_path / "o").exists()
    _wait_for(lambda: _no_app_running(cluster), what="the application to end")


def test_ctrl_c_cancels_the_sweep_and_frees_the_cluster(cluster, tmp_path):
    """SIGINT to a CLI sweep running on the cluster: the job group is cancelled, the CLI exits 130
    without writing, the application ends and no executor or Python worker of it is left."""
    out = tmp_path / "interrupted"
    env, argv = _command(SWEEP_ON_MASTER.replace(" --seeds 2", ""), python=sys.executable,
                         master=cluster.url, spec=SLOW_SPEC, out=str(out))  # fmt: skip
    proc = subprocess.Popen(argv, env={**_driver_env(cluster), **env}, cwd=ROOT,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)  # fmt: skip
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: proc.stderr.read1(), b"")))
    reader.start()
    try:
        # the bar appears when the sweep's job starts; then let tasks get under way
        _wait_for(lambda: b"crash_offset_persist (spark" in b"".join(chunks) or proc.poll(),
                  timeout_s=300, what="the sweep to start")  # fmt: skip
        assert proc.poll() is None, b"".join(chunks).decode()[-3000:]
        _wait_for(lambda: any(e["coresused"] for e in cluster.status()["workers"]),
                  what="executors")  # fmt: skip
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(10)
    err = b"".join(chunks).decode(errors="replace")
    assert code == 130, err[-3000:]
    assert "mqlab experiment: cancelled the sweep's Spark jobs" in err
    assert "crash_offset_persist was not written" in err
    assert "40/40" not in err and not out.exists()
    _wait_for(lambda: _no_app_running(cluster), what="the cancelled application to end")
    _wait_for(lambda: not _apps_processes(cluster.root), what="executors and Python workers to exit",
              show=lambda: _apps_processes(cluster.root))  # fmt: skip


def test_spark_connect_sweep_matches_sequential(cluster, sequential, bare_python, tmp_path):
    """A Spark Connect server on the cluster (executors without mqlab: it travels with
    addArtifacts(pyfile=True)); SPARK_REMOTE=sc://127.0.0.1:PORT gives the sequential rows."""
    from mqlab.experiments.cluster import ConnectServer

    with ConnectServer(cluster.url, bare_python, root=cluster.root) as server:
        out = tmp_path / "connect"
        env = _driver_env(cluster)
        env.pop("MQLAB_SPARK_MASTER")
        r = _run(SWEEP_ON_CONNECT, env, remote=server.url, spec=SPEC, out=str(out))
        assert r.returncode == 0, r.stderr[-3000:]
        assert "running 12 run(s) of long_vs_short_polling on Spark Connect" in r.stderr
        pdt.assert_frame_equal(read_metrics(out), sequential.metrics)
        pdt.assert_frame_equal(read_events(out), sequential.events)
        assert json.loads((out / "sweep.json").read_text())["runs"] == 12
    _wait_for(lambda: _no_app_running(cluster), what="the Connect server's application to end")


def test_stopping_the_cluster_leaves_no_process(cluster):
    """After stop(): no master, worker, executor or Python worker of this module is alive."""
    cluster.stop()
    _wait_for(lambda: not _ours(cluster.root), timeout_s=30, what="every process to exit",
              show=lambda: [p[:300] for p in _ours(cluster.root)])  # fmt: skip
