"""A Spark standalone cluster and a Spark Connect server on 127.0.0.1, from the pip pyspark.

Mirrors no RocketMQ class. The pip ``pyspark`` package carries what a small real cluster
needs: ``bin/spark-class`` starts a standalone master and workers, and
``sbin/start-connect-server.sh`` a Spark Connect server. ``LocalCluster`` and
``ConnectServer`` run exactly the command lines in ``MASTER_COMMAND``,
``WORKER_COMMAND`` and ``CONNECT_COMMAND``, and the cluster tests run sweeps with
``SWEEP_ON_MASTER`` and ``SWEEP_ON_CONNECT`` (the README's "Scaling out" shows these
lines with fixed ports; a test checks it), each daemon bound to 127.0.0.1 on free ports, its web UI on a free port too. They
are what the cluster tests and ``python -m mqlab.bench.sweep`` use; they are not
how a production cluster is run.

Every process is started in a new session (its own process group), so ``stop()`` ends the
whole tree (a shell script, ``nice``, the JVM, and the executors and Python workers the
JVM forked) by signalling the group: SIGTERM, then SIGKILL after ``grace_s``. Logs go
to files under the cluster's directory.

``LocalCluster`` also writes ``conf/spark-defaults.conf`` there (``SPARK_CONF_DIR``):
drivers and executors bound to 127.0.0.1, the driver UI off, small heaps, ``JAVA_OPTS``
for their JVMs. A driver given ``cluster.driver_env()`` (as the tests' subprocesses are)
reads it, and so does a ``ConnectServer`` started with the cluster's ``root``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MASTER_COMMAND",
    "WORKER_COMMAND",
    "CONNECT_COMMAND",
    "SWEEP_ON_MASTER",
    "SWEEP_ON_CONNECT",
    "ClusterError",
    "ConnectServer",
    "LocalCluster",
    "free_port",
    "spark_home",
]

#: ``bin/spark-class`` … ``Master``: the standalone master, loopback only.
MASTER_COMMAND = (
    "{spark_home}/bin/spark-class org.apache.spark.deploy.master.Master"
    " --host 127.0.0.1 --port {port} --webui-port {webui_port}"
)
#: A worker offering ``cores`` cores and ``memory`` to executors; scratch in ``work_dir``.
WORKER_COMMAND = (
    "{spark_home}/bin/spark-class org.apache.spark.deploy.worker.Worker {master}"
    " --host 127.0.0.1 --port {port} --webui-port {webui_port}"
    " --cores {cores} --memory {memory} --work-dir {work_dir}"
)
#: The Spark Connect server in the foreground (``--wait``) on ``master``. Its executors run
#: Python UDFs with the server's ``PYSPARK_PYTHON`` (not ``spark.pyspark.python``).
CONNECT_COMMAND = (
    "PYSPARK_PYTHON={python} {spark_home}/sbin/start-connect-server.sh --wait --master {master}"
    " --conf spark.connect.grpc.binding.address=127.0.0.1"
    " --conf spark.connect.grpc.binding.port={port}"
)

#: A sweep on a standalone master (``PYSPARK_PYTHON``: the executors' Python).
SWEEP_ON_MASTER = (
    "PYSPARK_PYTHON={python} MQLAB_SPARK_MASTER={master} python -m mqlab experiment run {spec}"
    " --seeds 2 --out {out} --runner spark"
)
#: A sweep through a Spark Connect server.
SWEEP_ON_CONNECT = (
    "SPARK_REMOTE={remote} python -m mqlab experiment run {spec} --seeds 2 --out {out}"
    " --runner spark"
)

#: Settings every driver and executor of a ``LocalCluster`` reads (``spark-defaults.conf``).
DEFAULTS = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
    "spark.executor.memory": "512m",
    "spark.sql.session.timeZone": "UTC",
}

#: JVM options of the daemons, drivers and executors here: C1 only and the serial GC. These
#: JVMs live for minutes and their own work is small (the runs are Python): C2's compiler
#: threads and a parallel collector cost more CPU than they save. On 2 cores the driver's
#: options alone take about 2.5 CPU-seconds off a warm 200-run sweep
#: (``python -m mqlab bench sweep``).
JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class ClusterError(RuntimeError):
    """A daemon did not come up (the message holds the end of its log)."""


def spark_home() -> Path:
    """The pip pyspark package's directory (it is a Spark distribution: bin/, sbin/, jars/)."""
    env = os.environ.get("SPARK_HOME")
    if env:
        return Path(env)
    import pyspark

    return Path(pyspark.__file__).resolve().parent


#: The log line by which a Spark daemon names the port a service bound.
_BOUND = re.compile(r"Successfully started service '([\w.]+)' on port (\d+)")
#: The service name a Spark Connect server's gRPC port is logged under.
_CONNECT_SERVICE = "org.apache.spark.sql.connect.service.SparkConnectService"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (bind port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class _Daemon:
    name: str
    argv: list[str]
    log: Path
    proc: subprocess.Popen | None = None
    #: give the daemon a pipe as stdin (a daemon that stops when it ends stops with us)
    pipe_stdin: bool = False
    log_start: int = 0

    def start(self, env: dict[str, str]) -> None:
        self.log_start = self.log.stat().st_size if self.log.exists() else 0
        out = open(self.log, "ab")  # noqa: SIM115 (the child owns it; closed on stop)
        stdin = subprocess.PIPE if self.pipe_stdin else subprocess.DEVNULL
        self.proc = subprocess.Popen(self.argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=stdin, start_new_session=True)  # fmt: skip
        out.close()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def bound(self) -> dict[str, int]:
        """The services this run of the daemon has bound, by name, from its log."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self.log_start)
                text = f.read().decode(errors="replace")
        except OSError:
            return {}
        return {name: int(port) for name, port in _BOUND.findall(text)}

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace_s: float) -> None:
        """SIGTERM the process group, SIGKILL what is left after ``grace_s``."""
        if self.proc is None:
            return
        pgid = self.proc.pid  # start_new_session: the group id is the leader's pid
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _group_alive(pgid):
                time.sleep(0.1)
            if not _group_alive(pgid):
                break
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.stdin is not None:
            self.proc.stdin.close()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie leader still counts in the group until reaped: look for a live member
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parts = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(parts[2]) == pgid and parts[0] != "Z":
            return True
    return False


def _base_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.pop("PYTHONPATH", None)  # the daemons' children must not see the driver's code
    env.update({
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_CONF_DIR": str(root / "conf"),
        "SPARK_LOG_DIR": str(root / "logs"),
        "SPARK_PID_DIR": str(root / "run"),
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": JAVA_OPTS,
    })  # fmt: skip
    return env


@dataclass
class LocalCluster:
    """A standalone master and ``workers`` workers (``cores`` cores each) on 127.0.0.1.

    Use as a context manager, or ``start()`` / ``stop()``. ``url`` is the master's
    ``spark://127.0.0.1:PORT``; ``status()`` its JSON view (workers, applications).
    """

    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    root: Path | None = None
    start_timeout_s: float = 120.0
    grace_s: float = 10.0
    port: int = 0
    webui_port: int = 0
    _daemons: list[_Daemon] = field(default_factory=list)
    _tmp: tempfile.TemporaryDirectory | None = None

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def spark_defaults(self) -> dict[str, str]:
        """What ``conf/spark-defaults.conf`` holds: ``DEFAULTS``, and ``JAVA_OPTS`` for the
        drivers' and executors' JVMs."""
        return dict(DEFAULTS, **{"spark.driver.extraJavaOptions": JAVA_OPTS,
                                 "spark.executor.extraJavaOptions": JAVA_OPTS})  # fmt: skip

    def commands(self) -> list[str]:
        """The command lines this cluster runs (master first), as a shell would read them."""
        return [shlex.join(d.argv) for d in self._daemons]

    def driver_env(self, **extra: str) -> dict[str, str]:
        """An environment for a driver process on this cluster (``MQLAB_SPARK_MASTER`` set)."""
        env = dict(os.environ)
        env.update({"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_CONF_DIR": str(self.root / "conf"),
                    "MQLAB_SPARK_MASTER": self.url})  # fmt: skip
        env.pop("SPARK_REMOTE", None)
        env.update(extra)
        return env

    def start(self) -> LocalCluster:
        if self.root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mqlab-spark-cluster-")
            self.root = Path(self._tmp.name)
        self.root = Path(self.root)
        for sub in ("conf", "logs", "run"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "conf" / "spark-defaults.conf").write_text(
            "".join(f"{k} {v}\n" for k, v in self.spark_defaults().items()))  # fmt: skip
        env = _base_env(self.root)
        home = spark_home()
        self.port, self.webui_port = free_port(), free_port()
        master = _Daemon("master", shlex.split(MASTER_COMMAND.format(
            spark_home=home, port=self.port, webui_port=self.webui_port)),
            self.root / "logs" / "master.log")  # fmt: skip
        self._daemons.append(master)
        try:
            master.start(env)
            self._wait(lambda: self._bound(master), master)
            self._wait(self._answers, master)
            for i in range(self.workers):
                work = self.root / f"worker-{i}"
                work.mkdir(exist_ok=True)
                w = _Daemon(f"worker-{i}", shlex.split(WORKER_COMMAND.format(
                    spark_home=home, master=self.url, port=free_port(), webui_port=free_port(),
                    cores=self.cores, memory=self.memory, work_dir=work)),
                    self.root / "logs" / f"worker-{i}.log")  # fmt: skip
                self._daemons.append(w)
                w.start(env)
            self._wait(lambda: len(self.alive_workers()) == self.workers, *self._daemons)
        except BaseException:
            self.stop()
            raise
        return self

    def status(self) -> dict[str, Any]:
        """The master's ``/json/`` view: ``workers``, ``activeapps``, ``completedapps``…"""
        url = f"http://127.0.0.1:{self.webui_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)

    def alive_workers(self) -> list[dict[str, Any]]:
        try:
            return [w for w in self.status()["workers"] if w["state"] == "ALIVE"]
        except (OSError, ValueError):  # not up yet, or a body that is not (yet) JSON
            return []

    def _bound(self, master: _Daemon) -> bool:
        """Read the ports the master bound from its log: Spark moves a service to the next
        port when the one asked for was taken in the meantime (``spark.port.maxRetries``),
        and a probe of the port asked for would then reach another process."""
        ports = master.bound()
        if "sparkMaster" not in ports or "MasterUI" not in ports:
            return False
        self.port, self.webui_port = ports["sparkMaster"], ports["MasterUI"]
        return True

    def _answers(self) -> bool:
        try:
            return self.status().get("url") == self.url
        except (OSError, ValueError):
            return False

    def _wait(self, ready, *daemons: _Daemon) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while not ready():
            dead = [d for d in daemons if not d.alive()]
            if dead or time.monotonic() > deadline:
                d = dead[0] if dead else daemons[-1]
                why = "exited" if dead else f"not ready after {self.start_timeout_s:.0f} s"
                raise ClusterError(f"Spark {d.name} {why}: {shlex.join(d.argv)}\n{d.tail()}")
            time.sleep(0.25)

    def stop(self) -> None:
        """Stop the workers (and their executors), then the master; remove the directory."""
        for d in reversed(self._daemons):
            d.stop(self.grace_s)
        self._daemons.clear()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class ConnectServer:
    """``sbin/start-connect-server.sh --wait`` on ``master`` (a cluster URL or ``local[N]``).

    ``python`` is the executors' Python (the server's ``PYSPARK_PYTHON``). ``url`` is the
    ``sc://127.0.0.1:PORT`` a client passes as ``SPARK_REMOTE``.
    """

    master: str
    python: str
    root: Path
    conf: dict[str, str] = field(default_factory=dict)
    start_timeout_s: float = 120.0
    grace_s: float = 10.0
    port: int = 0
    _daemon: _Daemon | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def start(self) -> ConnectServer:
        self.root = Path(self.root)
        for sub in ("conf", "logs", "run"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        words = shlex.split(CONNECT_COMMAND.format(spark_home=spark_home(), master=self.master,
                                                   port=self.port, python=self.python))  # fmt: skip
        python = words.pop(0).split("=", 1)[1]
        argv = words + [a for k, v in self.conf.items() for a in ("--conf", f"{k}={v}")]
        self._daemon = _Daemon("connect-server", argv, self.root / "logs" / "connect.log")
        # the launcher sizes a Connect server's driver heap by SPARK_DAEMON_MEMORY
        env = dict(_base_env(self.root), SPARK_DAEMON_MEMORY="1g", PYSPARK_PYTHON=python)
        try:
            self._daemon.start(env)
            deadline = time.monotonic() + self.start_timeout_s
            while (bound := self._daemon.bound().get(_CONNECT_SERVICE)) is None:
                if not self._daemon.alive() or time.monotonic() > deadline:
                    raise ClusterError(f"Spark Connect server did not start: {shlex.join(argv)}"
                                       f"\n{self._daemon.tail()}")  # fmt: skip
                time.sleep(0.25)
            # logged once the port is bound; Spark moves to the next port if the one asked
            # for was taken
            self.port = bound
        except BaseException:
            self.stop()
            raise
        return self

    def command(self) -> str:
        """The command line run, ``PYSPARK_PYTHON=…`` first."""
        if self._daemon is None:
            return ""
        return f"PYSPARK_PYTHON={shlex.quote(self.python)} {shlex.join(self._daemon.argv)}"

    def stop(self) -> None:
        if self._daemon is not None:
            self._daemon.stop(self.grace_s)
            self._daemon = None

    def __enter__(self) -> ConnectServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
