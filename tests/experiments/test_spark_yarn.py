"""Sweeps on a real YARN cluster (mqlab.experiments.yarn, and the CLI's ``--runner spark``).

One cluster for the module: Hadoop 3.5.0's MiniYARNCluster (a ResourceManager and a NodeManager in
one JVM, built from ``experiments/java`` with Maven inside this run) on 127.0.0.1 and free ports,
started with the README's "Scaling out" command (``MINIYARN_COMMAND``). The sweep is the README's
``SWEEP_ON_YARN`` in a subprocess: a driver in client mode here, the application master and two
executors of one core in YARN containers, whose Python has numpy, pandas and pyarrow but neither
pyspark (Spark's YARN client ships the pip package's ``python/lib/pyspark.zip``) nor mqlab (it
ships itself). Skipped like the other Spark tests (MQLAB_SKIP_SPARK=1, no pyspark, no Java); a
missing JDK compiler or Maven skips it, or fails it with MQLAB_REQUIRE_CONFORMANCE=1 (CI).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas.testing as pdt
import pytest
from test_spark_cluster import (
    _command,
    _executor_python,
    _imports,
    _ours,
    _skip_without_spark,
    _wait_for,
)

from mqlab.experiments.parquet import read_events, read_manifest, read_metrics
from mqlab.experiments.runners import run_sequential
from mqlab.experiments.sweep import load_sweep
from mqlab.experiments.yarn import MINIYARN_COMMAND, SWEEP_ON_YARN

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SPEC = "datasets/specs/long_vs_short_polling.yaml"  # 2 seeds: 12 runs of ~0.05 s


@pytest.fixture(scope="module")
def yarn(tmp_path_factory):
    _skip_without_spark()
    from mqlab.conformance.real_cluster import RealClusterError, require_java_tools
    from mqlab.experiments.yarn import YarnCluster

    require_java_tools("YARN")
    cluster = YarnCluster(root=tmp_path_factory.mktemp("yarn"))
    try:
        cluster.start()
    except RealClusterError as e:
        pytest.fail(f"building experiments/java failed: {e}")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """Executors' Python with numpy, pandas and pyarrow; no pyspark, mqlab, lark, plotly."""
    return _executor_python(
        tmp_path_factory.mktemp("bare") / "venv", ("numpy", "pandas", "pyarrow")
    )


def test_the_cluster_runs_the_readme_command(yarn):
    """The command is MINIYARN_COMMAND; its conf directory holds the clients' three files, the
    ResourceManager's addresses on 127.0.0.1."""
    assert yarn.command() == MINIYARN_COMMAND.format(conf_dir=yarn.conf_dir,
                                                     work_dir=yarn.work_dir)  # fmt: skip
    names = sorted(p.name for p in yarn.conf_dir.iterdir())
    assert names == ["core-site.xml", "spark-defaults.conf", "yarn-site.xml"]
    assert yarn.rm_address.startswith("127.0.0.1:") and yarn.webapp_address.startswith("127.0.0.1:")
    assert f"<value>{yarn.rm_address}</value>" in (yarn.conf_dir / "yarn-site.xml").read_text()
    assert yarn.apps() == []


def test_yarn_sweep_on_executors_without_mqlab_or_pyspark(yarn, bare_python, tmp_path):
    """--runner spark with MQLAB_SPARK_MASTER=yarn: 12 metrics rows and the events equal the
    sequential runner's; Spark's jars came from spark.yarn.jars; the application ends FINISHED /
    SUCCEEDED in the ResourceManager, with its containers gone."""
    for module, present in (("mqlab", False), ("pyspark", False), ("lark", False),
                            ("pandas", True), ("pyarrow", True)):  # fmt: skip
        assert _imports(bare_python, module) is present, module
    sequential = run_sequential(load_sweep(ROOT / SPEC).limit_seeds(2), progress=False)
    out = tmp_path / "yarn"
    env, argv = _command(SWEEP_ON_YARN, conf_dir=str(yarn.conf_dir), python=bare_python,
                         spec=SPEC, out=str(out))  # fmt: skip
    driver_env = yarn.driver_env(**env)
    # Spark's YARN client appends the driver's PYTHONPATH to the containers': the driver finds
    # this checkout's mqlab as `python -m` does, through its current directory, not PYTHONPATH
    driver_env.pop("PYTHONPATH", None)
    driver_env.pop("MQLAB_SPARK_SHIP", None)
    driver_env["MQLAB_SPARK_LOG"] = str(tmp_path / "driver.log")
    r = subprocess.run(argv, env=driver_env, cwd=ROOT, capture_output=True, text=True,
                       timeout=600, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "running 12 run(s) of long_vs_short_polling on yarn" in r.stderr
    assert "12/12" in r.stderr
    pdt.assert_frame_equal(read_metrics(out), sequential.metrics)
    pdt.assert_frame_equal(read_events(out), sequential.events)
    assert read_manifest(out)["runs"] == 12
    # spark.yarn.jars=local:… from the cluster's spark-defaults.conf: Spark's jars not uploaded
    # (without it the driver logs "Neither spark.yarn.jars nor spark.yarn.archive is set")
    driver_log = (tmp_path / "driver.log").read_text(errors="replace")
    assert "Using Spark's default log4j profile" in driver_log
    assert "spark.yarn.archive is set" not in driver_log
    apps = yarn.apps()
    assert [(a["name"], a["state"], a["finalStatus"]) for a in apps] == [
        ("mqlab", "FINISHED", "SUCCEEDED")
    ]
    _wait_for(lambda: not yarn.containers(), what="the containers to exit",
              show=yarn.containers)  # fmt: skip


def test_yarn_without_hadoop_conf_dir_says_so(tmp_path):
    """MQLAB_SPARK_MASTER=yarn without HADOOP_CONF_DIR: exit 2 before any JVM starts."""
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    env.update(MQLAB_SPARK_MASTER="yarn")
    env.pop("PYTHONPATH", None)  # `python -m mqlab` in ROOT runs this checkout
    r = subprocess.run([sys.executable, "-m", "mqlab", "experiment", "run", SPEC, "--seeds", "2",
                        "--out", str(tmp_path / "o"), "--runner", "spark"], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.strip() == (
        "mqlab experiment: MQLAB_SPARK_MASTER=yarn needs HADOOP_CONF_DIR (or YARN_CONF_DIR): the "
        "directory of the cluster's core-site.xml and yarn-site.xml, which say where its "
        "ResourceManager is"
    )
    assert not (tmp_path / "o").exists()


def test_stopping_the_cluster_leaves_no_process(yarn):
    """After stop(): no ResourceManager/NodeManager JVM, container or Python worker is alive."""
    yarn.stop()
    _wait_for(lambda: not _ours(yarn.root), timeout_s=30, what="every process to exit",
              show=lambda: [p[:300] for p in _ours(yarn.root)])  # fmt: skip
