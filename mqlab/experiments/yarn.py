"""A one-machine YARN cluster for sweeps on ``MQLAB_SPARK_MASTER=yarn``.

Mirrors no RocketMQ class. ``experiments/java`` is a small Maven project of ours: its
``org.mqlab.experiments.MiniYarn`` starts Hadoop's ``MiniYARNCluster`` (one ResourceManager and
one NodeManager in one JVM, Hadoop 3.5.0 as bundled by the pip pyspark package) on 127.0.0.1
and free ports, writes ``core-site.xml`` and ``yarn-site.xml`` for its clients, prints one
readiness line and runs until SIGTERM or SIGINT (or the end of its stdin when that is a pipe).

``python -m mqlab.experiments.yarn --conf-dir DIR --work-dir DIR`` (``MINIYARN_COMMAND``)

1. builds ``experiments/java`` unless already built from the same sources (Maven downloads
   the shaded ``hadoop-client-minicluster`` and a few jars, about 120 MB, into ``~/.m2``
   the first time; ``mqlab.conformance.real_cluster.build_runner`` does the build);
2. writes ``spark-defaults.conf`` into the conf directory (``SPARK_DEFAULTS`` below: drivers,
   the application master and executors on 127.0.0.1, two executors of one core, small
   heaps, ``spark.yarn.jars`` pointing at the pip package's ``jars/`` with ``local:`` so
   that no 400 MB archive is uploaded per application);
3. replaces itself with the JVM (``exec``), which adds the Hadoop files.

The conf directory is then both ``HADOOP_CONF_DIR`` and ``SPARK_CONF_DIR`` of a driver:
``SWEEP_ON_YARN`` is the sweep command. In client mode (the only mode for a sweep from the
CLI or a notebook) the driver runs here; the application master and the executors run in
YARN containers, in the NodeManager's directories under the work directory. The executors'
Python (``PYSPARK_PYTHON``) needs numpy, pandas and pyarrow: pyspark reaches it as the
``python/lib/pyspark.zip`` that the pip package carries (Spark's YARN client distributes it
with the application), and mqlab ships itself as on any cluster (``mqlab.experiments.ship``).

``YarnCluster`` runs ``MINIYARN_COMMAND`` in its own session with a pipe as stdin (so the
cluster ends with the process that started it), waits for the readiness line, and stops it
with SIGTERM: the NodeManager kills the containers still running. Container processes are
in sessions of their own (YARN starts them with ``setsid``), so ``stop()`` then kills any
process still working in the cluster's directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import stat
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqlab.experiments.cluster import DEFAULTS, JAVA_OPTS, ClusterError, _Daemon, spark_home

__all__ = [
    "JAVA_DIR",
    "MINIYARN_COMMAND",
    "SWEEP_ON_YARN",
    "YarnCluster",
    "build_miniyarn",
    "spark_defaults",
]

#: The Maven project: pom.xml and MiniYarn.java.
JAVA_DIR = Path(__file__).resolve().parents[2] / "experiments" / "java"
MAIN_CLASS = "org.mqlab.experiments.MiniYarn"
READY = "mqlab-miniyarn ready"

#: A one-machine YARN cluster; its clients' configuration goes to ``conf_dir``.
MINIYARN_COMMAND = "python -m mqlab.experiments.yarn --conf-dir {conf_dir} --work-dir {work_dir}"
#: A sweep on YARN (client mode): the conf directory holds the Hadoop and Spark settings.
SWEEP_ON_YARN = (
    "HADOOP_CONF_DIR={conf_dir} SPARK_CONF_DIR={conf_dir} PYSPARK_PYTHON={python}"
    " MQLAB_SPARK_MASTER=yarn python -m mqlab experiment run {spec} --seeds 2 --out {out}"
    " --runner spark"
)

#: The ResourceManager and NodeManager JVM: a capped heap, C1 only, the serial GC, IPv4.
JVM_FLAGS = [
    "-Xms64m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.net.preferIPv4Stack=true",
]


def spark_defaults(work_dir: Path) -> dict[str, str]:
    """``spark-defaults.conf`` for drivers on the mini cluster (``MINIYARN_COMMAND`` writes it).

    Two executors of one core and 512 MB (each container 896 MB with Spark's 384 MB
    overhead), a 256 MB application master, everything bound to 127.0.0.1, the staging
    directory in ``work_dir`` and Spark's jars from this machine's pip package (``local:``:
    nothing uploaded; right only because the NodeManager runs on this machine).
    """
    return {
        **DEFAULTS,
        "spark.executor.instances": "2",
        "spark.executor.cores": "1",
        "spark.yarn.am.memory": "256m",
        "spark.yarn.jars": f"local:{spark_home()}/jars/*",
        "spark.yarn.stagingDir": (Path(work_dir).resolve() / "spark-staging").as_uri(),
        "spark.yarn.am.extraJavaOptions": JAVA_OPTS,
        "spark.executor.extraJavaOptions": JAVA_OPTS,
        "spark.yarn.appMasterEnv.SPARK_LOCAL_IP": "127.0.0.1",
        "spark.executorEnv.SPARK_LOCAL_IP": "127.0.0.1",
    }


def build_miniyarn() -> str:
    """Build ``experiments/java`` if needed; return the JVM's class path (our jar first).

    Raises:
        mqlab.conformance.real_cluster.RealClusterError: no JDK 17 or Maven, or Maven failed.
    """
    from mqlab.conformance.real_cluster import build_runner

    jars = build_runner(project=JAVA_DIR).read_text(encoding="utf-8").strip()
    return f"{JAVA_DIR / 'target' / 'mqlab-miniyarn.jar'}{os.pathsep}{jars}"


def _java_home(java: str) -> str:
    """``$JAVA_HOME``, else the JDK that ``java`` belongs to (the containers' ``{{JAVA_HOME}}``)."""
    return os.environ.get("JAVA_HOME") or str(Path(os.path.realpath(java)).parents[1])


def main(argv: list[str] | None = None) -> int:
    """``python -m mqlab.experiments.yarn``: build, write spark-defaults.conf, exec the JVM."""
    from mqlab.conformance.real_cluster import RealClusterError, _java, java_tools_missing

    parser = argparse.ArgumentParser(
        prog="python -m mqlab.experiments.yarn",
        description="A one-machine YARN cluster (Hadoop's MiniYARNCluster) on 127.0.0.1.",
    )
    parser.add_argument("--conf-dir", required=True, type=Path,
                        help="where to write core-site.xml, yarn-site.xml, spark-defaults.conf")  # fmt: skip
    parser.add_argument("--work-dir", required=True, type=Path,
                        help="the NodeManager's directories and Spark's staging directory")  # fmt: skip
    parser.add_argument("--memory-mb", type=int, default=4096, help="NodeManager memory")
    parser.add_argument("--vcores", type=int, default=4, help="NodeManager virtual cores")
    args = parser.parse_args(argv)
    missing = java_tools_missing()
    if missing:
        print(f"mqlab.experiments.yarn: cannot start: {missing}", file=sys.stderr)
        return 1
    try:
        classpath = build_miniyarn()
    except RealClusterError as e:
        print(f"mqlab.experiments.yarn: building {JAVA_DIR} failed: {e}", file=sys.stderr)
        return 1
    conf, work = args.conf_dir.resolve(), args.work_dir.resolve()
    conf.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    defaults = spark_defaults(work)
    (conf / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in defaults.items()))
    java = _java()
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith(("PYSPARK_", "SPARK_"))}  # fmt: skip
    env["JAVA_HOME"] = _java_home(java)
    print(f"MiniYARN starting; clients: HADOOP_CONF_DIR={conf} SPARK_CONF_DIR={conf} "
          "MQLAB_SPARK_MASTER=yarn", file=sys.stderr, flush=True)  # fmt: skip
    jvm = [java, *JVM_FLAGS, "-cp", classpath, MAIN_CLASS, "--conf-dir", str(conf),
           "--work-dir", str(work), "--memory-mb", str(args.memory_mb),
           "--vcores", str(args.vcores)]  # fmt: skip
    if stat.S_ISFIFO(os.fstat(0).st_mode):  # a parent's pipe (YarnCluster): stop when it ends
        jvm += ["--watch-stdin", "true"]  # (not a terminal: a background job would be stopped)
    os.execve(java, jvm, env)
    return 1  # not reached


@dataclass
class YarnCluster:
    """``MINIYARN_COMMAND`` in ``root`` (``conf/``, ``work/``, ``logs/miniyarn.log``).

    Use as a context manager, or ``start()`` / ``stop()``. ``driver_env()`` is the
    environment of a driver on it; ``apps()`` the ResourceManager's REST view of the
    applications (``/ws/v1/cluster/apps``).
    """

    root: Path | None = None
    start_timeout_s: float = 120.0
    grace_s: float = 30.0
    rm_address: str = ""
    webapp_address: str = ""
    #: seconds from launching the command to the readiness line (the build excluded)
    startup_s: float | None = None
    _daemon: _Daemon | None = None
    _tmp: tempfile.TemporaryDirectory | None = None
    _argv: list[str] = field(default_factory=list)

    @property
    def conf_dir(self) -> Path:
        return Path(self.root) / "conf"

    @property
    def work_dir(self) -> Path:
        return Path(self.root) / "work"

    @property
    def pid(self) -> int | None:
        """The JVM's pid (the command ``exec``s into it)."""
        return self._daemon.proc.pid if self._daemon and self._daemon.proc else None

    def command(self) -> str:
        """The command line run, as the README shows it (``python`` for this interpreter)."""
        return shlex.join(["python", *self._argv[1:]]) if self._argv else ""

    def driver_env(self, **extra: str) -> dict[str, str]:
        """An environment for a driver process on this cluster."""
        env = dict(os.environ)
        env.pop("SPARK_REMOTE", None)
        env.update({"HADOOP_CONF_DIR": str(self.conf_dir), "YARN_CONF_DIR": str(self.conf_dir),
                    "SPARK_CONF_DIR": str(self.conf_dir), "SPARK_LOCAL_IP": "127.0.0.1",
                    "MQLAB_SPARK_MASTER": "yarn"})  # fmt: skip
        env.update(extra)
        return env

    def start(self) -> YarnCluster:
        """Build ``experiments/java`` if needed, start the cluster, wait until it is ready.

        Raises:
            mqlab.conformance.real_cluster.RealClusterError: the build failed.
            ClusterError: the cluster exited or was not ready in time (with its log's end).
        """
        if self.root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mqlab-yarn-")
            self.root = Path(self._tmp.name)
        self.root = Path(self.root)
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        build_miniyarn()  # here, so that a failure raises with Maven's output
        self._argv = shlex.split(MINIYARN_COMMAND.format(conf_dir=self.conf_dir,
                                                         work_dir=self.work_dir))  # fmt: skip
        self._argv[0] = sys.executable
        self._daemon = _Daemon("MiniYARN", self._argv, self.root / "logs" / "miniyarn.log",
                               pipe_stdin=True)  # fmt: skip
        started = time.monotonic()
        try:
            self._daemon.start(dict(os.environ))
            deadline = started + self.start_timeout_s
            while (
                m := re.search(rf"{READY} rm=(\S+) webapp=(\S+)", self._daemon.tail(50))
            ) is None:
                if not self._daemon.alive() or time.monotonic() > deadline:
                    why = "exited" if not self._daemon.alive() else "was not ready in time"
                    raise ClusterError(f"MiniYARN {why}: {self.command()}\n"
                                       f"{self._daemon.tail(40)}")  # fmt: skip
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - started
        self.rm_address, self.webapp_address = m.group(1), m.group(2)
        return self

    def apps(self) -> list[dict[str, Any]]:
        """The ResourceManager's applications (``id``, ``name``, ``state``, ``finalStatus``…)."""
        url = f"http://{self.webapp_address}/ws/v1/cluster/apps"
        with urllib.request.urlopen(url, timeout=10) as r:
            return (json.load(r).get("apps") or {}).get("app", [])

    def containers(self) -> list[int]:
        """Live processes working in the cluster's directory: the containers' processes."""
        return _working_in(self.work_dir)

    def stop(self) -> None:
        """SIGTERM the JVM (it stops the NodeManager, which kills its containers), SIGKILL
        after ``grace_s``; then kill what still works in the cluster's directory."""
        if self._daemon is not None:
            self._daemon.stop(self.grace_s)
            self._daemon = None
        if self.root is not None:
            for pid in _working_in(self.work_dir):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> YarnCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _working_in(directory: Path) -> list[int]:
    """Pids of live processes whose current directory is in ``directory``."""
    prefix = str(Path(directory).resolve())
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(proc / "cwd")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and (cwd == prefix or cwd.startswith(prefix + os.sep)):
            found.append(int(proc.name))
    return found


if __name__ == "__main__":
    raise SystemExit(main())
