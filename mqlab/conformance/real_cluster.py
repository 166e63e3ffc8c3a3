"""The real Apache RocketMQ 4.9.3 name server and broker, from Maven Central, as a test oracle.

Not a RocketMQ class: this is the harness that runs the real thing beside mqlab. It owns

1. finding the tools (``java`` >= 17 with ``javac``, and ``mvn``) and saying why when they are missing;
2. building ``conformance/java`` once (its pom pins rocketmq-namesrv, -broker, -client and -tools
   4.9.3; Maven downloads them into ``~/.m2`` on the first build and reuses them after);
3. starting our runner ``org.mqlab.conformance.RealCluster`` (a ``NamesrvController`` and a
   ``BrokerController`` in one JVM, as RocketMQ's own integration tests embed them) on free
   loopback ports, waiting for its readiness line, and stopping it with SIGTERM;
4. running ``mqadmin`` (``MQAdminStartup`` from rocketmq-tools) with our own logback file.

The JVM reads its stdin and stops when it ends, so a test process that dies (even by SIGKILL)
takes the real cluster with it: the kernel closes the pipe.

The broker binds every interface (4.9.3 has no bind-address option): it gets free ports, and
everything here talks to it on 127.0.0.1 only. Besides its listen port it opens ``listenPort - 2``
(the VIP channel, ``BrokerController#initialize``) and the HA port, so :class:`RealCluster` takes
one block of four consecutive free ports: VIP, HA, broker, name server.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import TracebackType

__all__ = [
    "JAVA_DIR",
    "JVM_FLAGS",
    "REQUIRE_ENV",
    "RealCluster",
    "RealClusterError",
    "RealBroker",
    "RealSlave",
    "build_runner",
    "conformance_required",
    "require_java_tools",
    "free_port",
    "java_tools_missing",
    "MqAdminSession",
    "close_mqadmin_sessions",
    "mqadmin_session",
    "run_mqadmin",
    "runner_classpath",
]

#: The Maven project: pom.xml, the runner's source and our logback files (conf/).
JAVA_DIR = Path(__file__).resolve().parents[2] / "conformance" / "java"
READY = "mqlab-real-cluster ready"
RUNNER_MAIN = "org.mqlab.conformance.RealCluster"
#: MQAdminStartup.main, then System.exit: skips Netty's ~2-3 s graceful-shutdown quiet period
MQADMIN_MAIN = "org.mqlab.conformance.MqAdmin"

#: JDK 17 needs these for 4.9.3: ``MappedFile.clean`` reflects into ``DirectByteBuffer`` and
#: ``jdk.internal.ref.Cleaner`` (every store shutdown, DELETE_TOPIC_IN_BROKER, file expiry), and
#: the HA service reflects ``sun.nio.ch``. The rest keeps one JVM small and quick to start on a
#: shared 2-core box.
JVM_FLAGS = [
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-Dtls.server.mode=disabled",
    "-Xms64m",
    "-Xmx512m",
    "-XX:MaxDirectMemorySize=256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Xss512k",
    "-Xshare:auto",
    # the store's disk-full guards (CleanCommitLogService): results must not depend on how full
    # this machine's disk is
    "-Drocketmq.broker.diskSpaceWarningLevelRatio=0.99",
    "-Drocketmq.broker.diskSpaceCleanForciblyRatio=0.98",
    # BrokerStartup#createBrokerController and NamesrvStartup set this (MQVersion.CURRENT_VERSION,
    # V4_9_3 = 399); an embedded controller without it sends REGISTER_BROKER with version 0, and
    # the 4.9.3 name server then takes the old path (DefaultRequestProcessor#registerBroker), reads
    # the body as a bare TopicConfigSerializeWrapper and registers NO topics: every route query
    # answers TOPIC_NOT_EXIST (found by the conformance harness).
    "-Drocketmq.remoting.version=399",
]
MQADMIN_FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]


class RealClusterError(RuntimeError):
    """The real cluster could not be built, started or stopped; the message holds the output."""


# -- 1. tools ---------------------------------------------------------------------------------


def _jdk_tool(name: str) -> str | None:
    """``$JAVA_HOME/bin/<name>`` when JAVA_HOME is set (as scripts/check_java.sh and Maven do),
    else ``<name>`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        path = Path(home) / "bin" / name
        return str(path) if os.access(path, os.X_OK) else None
    return shutil.which(name)


@cache
def java_tools_missing() -> str | None:
    """None when ``java`` >= 17, ``javac`` and ``mvn`` are usable, else why not (one line).

    The same check as scripts/check_conformance.sh, which ``make test`` runs first.
    """
    java = _jdk_tool("java")
    if java is None:
        return "no 'java' (JAVA_HOME/bin or PATH); the conformance tier needs a JDK 17 (openjdk-17-jdk-headless)"
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"'java -version' failed: {e}"
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if m is None:
        return f"cannot read the Java version from: {out.strip()[:200]!r}"
    major = int(m.group(2)) if m.group(1) == "1" else int(m.group(1))
    if major < 17:
        return f"Java {major} at {java}; the conformance tier needs Java >= 17"
    if _jdk_tool("javac") is None:
        return "no 'javac' on PATH: a JRE alone cannot build conformance/java (openjdk-17-jdk-headless)"
    if shutil.which("mvn") is None:
        return "no 'mvn' on PATH: the conformance tier builds conformance/java with Maven (apt-get install maven)"
    return None


#: With this set to 1 (CI), a test tier that needs the real cluster fails instead of skipping.
REQUIRE_ENV = "MQLAB_REQUIRE_CONFORMANCE"


def conformance_required() -> bool:
    """True when ``MQLAB_REQUIRE_CONFORMANCE`` is 1/true/yes."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in ("1", "true", "yes")


def require_java_tools(tier: str = "conformance") -> None:
    """For pytest fixtures of the conformance and interop tiers: skip with the reason when the
    tools are missing, or fail with it when ``MQLAB_REQUIRE_CONFORMANCE=1``."""
    import pytest

    missing = java_tools_missing()
    if missing is None:
        return
    if conformance_required():
        pytest.fail(f"{REQUIRE_ENV}=1 but the {tier} tier cannot run: {missing}")
    pytest.skip(f"{tier} tier skipped: {missing}")


# -- 2. build ---------------------------------------------------------------------------------


def _sources_digest(project: Path = JAVA_DIR) -> str:
    h = hashlib.sha256()
    files = [project / "pom.xml", *sorted((project / "src").rglob("*.java"))]
    for f in files:
        h.update(f.relative_to(project).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def build_runner(*, quiet: bool = True, project: Path = JAVA_DIR) -> Path:
    """Build ``conformance/java`` (or another Maven ``project`` of ours, such as
    ``experiments/java``) unless already built from the same pom and sources.

    Runs ``mvn -B compile jar:jar dependency:build-classpath``; the stamp ``target/.mqlab-built-<digest>``
    is keyed on a checksum of pom.xml and every ``*.java``. Concurrent callers wait on a lock.

    Returns:
        ``target/classpath.txt``: the resolved jars (in ``~/.m2``), ``:``-separated.

    Raises:
        RealClusterError: tools missing, or Maven failed (its output is in the message).
    """
    missing = java_tools_missing()
    if missing:
        raise RealClusterError(missing)
    target = project / "target"
    target.mkdir(exist_ok=True)
    classpath = target / "classpath.txt"
    stamp = target / f".mqlab-built-{_sources_digest(project)}"
    with open(target / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and classpath.exists():
            return classpath
        for old in [
            *target.glob(".mqlab-built-*"),
            *target.glob("*.jsa"),
            *target.glob("*.jsa.tmp"),
        ]:
            old.unlink()
        cmd = [
            "mvn", "-B", *(["-q"] if quiet else []), "compile", "jar:jar", "dependency:build-classpath",
            f"-Dmdep.outputFile={classpath}",
        ]  # fmt: skip
        proc = subprocess.run(
            cmd, cwd=project, capture_output=quiet, text=True, timeout=1200, check=False
        )
        if proc.returncode != 0:
            tail = ((proc.stdout or "") + (proc.stderr or ""))[-4000:]
            raise RealClusterError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{tail}")
        stamp.touch()
    return classpath


def runner_classpath() -> str:
    """Our jar plus RocketMQ's: the ``-cp`` for the runner and for mqadmin."""
    jars = build_runner().read_text(encoding="utf-8").strip()
    return f"{JAVA_DIR / 'target' / 'mqlab-conformance.jar'}{os.pathsep}{jars}"


def _class_data_sharing(name: str) -> tuple[list[str], Path | None]:
    """JVM flags for an application class-data-sharing archive ``target/<name>.jsa``.

    The first JVM of a kind dumps the classes it loaded at exit (``-XX:ArchiveClassesAtExit``,
    to a private temp name, renamed when that JVM ended well); later ones map them
    (``-XX:SharedArchiveFile``): ~0.25 s less CPU per start (0.58 s instead of 0.83 s to the
    real cluster's readiness). A stale or foreign archive is only a warning: the JVM runs without it.

    Returns:
        The flags, and the temp file to rename to the archive after a clean exit (or None).
    """
    archive = JAVA_DIR / "target" / f"{name}.jsa"
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"], None
    tmp = archive.with_name(f"{name}.{os.getpid()}-{time.monotonic_ns()}.jsa.tmp")
    return [f"-XX:ArchiveClassesAtExit={tmp}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"], tmp


def _keep_archive(tmp: Path | None, returncode: int | None) -> None:
    if tmp is None:
        return
    if returncode == 0 and tmp.exists() and tmp.stat().st_size > 0:
        tmp.replace(tmp.with_name(tmp.name.split(".", 1)[0] + ".jsa"))
    else:
        tmp.unlink(missing_ok=True)


# -- 3. ports ---------------------------------------------------------------------------------


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(n_consecutive: int = 1) -> int:
    """A free loopback port; with ``n_consecutive`` > 1, the first of that many free in a row.

    Free when checked, not reserved: a caller that loses the race retries (RealCluster does).
    A port bound on 0.0.0.0 by another process also fails the 127.0.0.1 check on Linux.
    """
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n_consecutive - 1 > 65535:
            continue
        if all(_bindable(p) for p in range(base, base + n_consecutive)):
            return base
    raise RealClusterError(f"no {n_consecutive} consecutive free loopback ports found")


# -- 4. the cluster ---------------------------------------------------------------------------


class RealCluster:
    """One real 4.9.3 name server and master broker in one JVM; a context manager.

    Args:
        workdir: holds ``store/`` (commit log, consume queues, index, config), ``home/``
            (``user.home``: nothing lands in ``~``) and ``real-cluster.out`` (the JVM's output).
        broker_properties: ``key=value`` broker settings, applied like lines of a broker.conf to
            BrokerConfig, NettyServerConfig, NettyClientConfig and MessageStoreConfig
            (``{"autoCreateTopicEnable": "false", "messageDelayLevel": "1s 2s"}``). An unknown key
            fails the start. Ports, ``brokerIP1``, ``namesrvAddr`` and store paths are always ours.
        jvm_options: added after :data:`JVM_FLAGS` (a later HotSpot flag wins). JVM_FLAGS are
            tuned for a quick start (C1 only); a throughput benchmark of the real broker should
            pass ``["-XX:TieredStopAtLevel=4", "-Xmx1g"]``.
        namesrv_addr: run no name server: the master registers with this one (a master in a
            JVM of its own, which :meth:`kill` can end as a crash ends a machine's broker).
        broker: False: run the name server alone (``broker_addr`` stays ""); slaves may be
            started in it with :meth:`start_slave`.
    """

    def __init__(
        self,
        workdir: Path,
        broker_properties: dict[str, str] | None = None,
        *,
        broker_name: str = "broker-a",
        cluster: str = "DefaultCluster",
        startup_timeout_s: float = 90,
        jvm_options: list[str] | None = None,
        namesrv_addr: str | None = None,
        broker: bool = True,
        namesrv_properties: dict[str, str] | None = None,
    ) -> None:
        if namesrv_addr is not None and not broker:
            raise ValueError("a JVM with neither a name server nor a broker runs nothing")
        if namesrv_addr is not None and namesrv_properties:
            raise ValueError("namesrv_properties set a name server this JVM does not run")
        #: ``NamesrvConfig`` / ``NettyServerConfig`` fields of the name server this JVM runs
        #: (``--namesrv-property KEY=VALUE``), e.g. ``serverChannelMaxIdleTimeSeconds``
        self.namesrv_properties = dict(namesrv_properties or {})
        self.workdir = Path(workdir)
        self._given_namesrv = namesrv_addr
        self._with_broker = broker
        self._ports: tuple[int, int, int, int] | None = None
        self.jvm_options = list(jvm_options or [])
        self.broker_properties = dict(broker_properties or {})
        self.broker_name = broker_name
        self.cluster = cluster
        self.startup_timeout_s = startup_timeout_s
        self.store_dir = self.workdir / "store"
        self.commitlog_dir = self.store_dir / "commitlog"
        self.home_dir = self.workdir / "home"
        self.output_path = self.workdir / "real-cluster.out"
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.broker_vip_addr = ""
        self.ha_port = 0
        self.pid: int | None = None
        #: seconds from launching the JVM to its readiness line, and from SIGTERM to its exit
        self.startup_s: float | None = None
        self.shutdown_s: float | None = None
        self.returncode: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._cds_tmp: Path | None = None
        self._commands = 0
        #: slaves started by :meth:`start_slave`, by broker name
        self.slaves: dict[str, RealSlave] = {}
        #: further masters started by :meth:`start_broker`, by broker name
        self.brokers: dict[str, RealBroker] = {}
        self.master_stopped = False

    # context manager
    def __enter__(self) -> RealCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def output(self) -> str:
        """Everything the JVM wrote so far (stdout and stderr)."""
        try:
            return self.output_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def start(self) -> RealCluster:
        """Launch the JVM and block until the broker is registered with the name server.

        Raises:
            RealClusterError: the JVM exited or did not get ready in time; the message ends
                with the tail of its output. A lost port race is retried with new ports.
        """
        if self._proc is not None:
            raise RealClusterError("already started")
        classpath = runner_classpath()
        for attempt in range(3):
            try:
                return self._launch(classpath)
            except RealClusterError as e:
                if "Address already in use" not in str(e) or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _launch(self, classpath: str) -> RealCluster:
        self._proc, self.returncode = None, None  # a retry after a lost port race
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.home_dir.mkdir(parents=True, exist_ok=True)
        if self._ports is None:
            base = free_port(4)
            ports = base, base + 1, base + 2, base + 3
        else:  # a restart after kill(): the same ports, as a broker restarted on its machine
            ports = self._ports
        vip, self.ha_port, broker_port, namesrv_port = ports
        self.namesrv_addr = self._given_namesrv or f"127.0.0.1:{namesrv_port}"
        self.broker_addr = f"127.0.0.1:{broker_port}" if self._with_broker else ""
        self.broker_vip_addr = f"127.0.0.1:{vip}" if self._with_broker else ""
        namesrv_args = (
            ["--namesrv-addr", self._given_namesrv]
            if self._given_namesrv
            else ["--namesrv-port", str(namesrv_port)]
        )
        broker_args = (
            ["--broker-port", str(broker_port), "--ha-port", str(self.ha_port)]
            if self._with_broker
            else ["--no-broker"]
        )
        timeout_ms = int(self.startup_timeout_s * 1000)
        cds_flags, self._cds_tmp = _class_data_sharing("real-cluster")
        cmd = [
            _java(), *JVM_FLAGS, *self.jvm_options, *cds_flags,
            f"-Duser.home={self.home_dir}",
            f"-Drocketmq.client.logRoot={self.home_dir / 'logs'}",
            f"-Dlogback.configurationFile={JAVA_DIR / 'conf' / 'logback-real-cluster.xml'}",
            "-cp", classpath, RUNNER_MAIN, *namesrv_args, *broker_args,
            "--store", str(self.store_dir),
            "--broker-name", self.broker_name, "--cluster", self.cluster,
            "--ready-timeout-ms", str(timeout_ms),
            *(a for k, v in self.namesrv_properties.items()
              for a in ("--namesrv-property", f"{k}={v}")),
            *(f"{k}={v}" for k, v in self.broker_properties.items()),
        ]  # fmt: skip
        env = {
            k: v for k, v in os.environ.items() if k not in ("ROCKETMQ_HOME", "JAVA_TOOL_OPTIONS")
        }
        started = time.monotonic()
        with open(self.output_path, "wb") as out:
            self._proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, env=env,
                cwd=self.workdir,
            )  # fmt: skip
        self.pid = self._proc.pid
        deadline = started + self.startup_timeout_s + 10
        while True:
            text = self.output()
            if READY in text:
                self.startup_s = time.monotonic() - started
                self._ports = ports
                return self
            if self._proc.poll() is not None:
                self._reap()
                raise RealClusterError(
                    f"the real cluster exited with {self.returncode} before it was ready:\n"
                    + _tail(text)
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RealClusterError(
                    f"the real cluster was not ready within {self.startup_timeout_s} s:\n"
                    + _tail(self.output())
                )
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, wait up to 30 s, then SIGKILL. Idempotent."""
        proc = self._proc
        if proc is None or self.returncode is not None:
            return
        started = time.monotonic()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        self.shutdown_s = time.monotonic() - started
        self._reap()

    def kill(self) -> None:
        """SIGKILL the JVM, as a crash ends a broker's process: no shutdown hook, no
        unregistering (the name server drops the broker when its connection closes), no last
        flush, the store's ``abort`` file left behind. :meth:`restart` starts it again."""
        proc = self._proc
        if proc is None or self.returncode is not None:
            return
        proc.kill()
        self._reap()

    def restart(self) -> RealCluster:
        """Launch the JVM again after :meth:`stop` or :meth:`kill`, on the same store and
        ports; blocks until it is ready (a broker in a JVM of its own: until its runtime info
        answers; the caller waits for the name server to route to it).

        Raises:
            RealClusterError: it is running, was never started, or did not get ready (a port
                taken meanwhile, say).
        """
        if self._ports is None or self._proc is None:
            raise RealClusterError("restart: never started")
        if self.running:
            raise RealClusterError("restart: still running")
        self._proc, self._commands = None, 0
        return self._launch(runner_classpath())

    def _reap(self) -> None:
        assert self._proc is not None
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        self.returncode = self._proc.wait()
        _keep_archive(self._cds_tmp, self.returncode)
        self._cds_tmp = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- commands on the JVM's stdin (RealCluster.java#watchStdin) -------------------------------
    def _command(self, words: list[str], timeout_s: float) -> str:
        """Send one command line; the rest of its ``done N`` answer.

        Raises:
            RealClusterError: the JVM answered ``failed N`` (why, and the output's tail), ended,
                or did not answer within ``timeout_s``.
        """
        if not self.running or self._proc is None or self._proc.stdin is None:
            raise RealClusterError("the real cluster is not running")
        if any(not w or any(c.isspace() for c in w) for w in words):
            raise ValueError(f"command words must be non-empty, without whitespace: {words!r}")
        self._commands += 1
        n = self._commands
        self._proc.stdin.write((" ".join(words) + "\n").encode())
        self._proc.stdin.flush()
        done, failed = f"{READY.split()[0]} done {n} ", f"{READY.split()[0]} failed {n} "
        deadline = time.monotonic() + timeout_s
        while True:
            for line in self.output().splitlines():
                if line.startswith(done):
                    return line[len(done) :]
                if line.startswith(failed):
                    raise RealClusterError(
                        f"{words[0]} failed: {line[len(failed) :]}\n" + _tail(self.output())
                    )
            if not self.running:
                raise RealClusterError(
                    f"the real cluster ended during {words[0]}:\n" + _tail(self.output())
                )
            if time.monotonic() > deadline:
                raise RealClusterError(
                    f"{words[0]}: no answer within {timeout_s} s:\n" + _tail(self.output())
                )
            time.sleep(0.05)

    def stop_master(self, timeout_s: float = 60) -> None:
        """Shut the master broker down, alone: it unregisters from the name server; the name
        server and every slave keep running (``stop-master``)."""
        self._command(["stop-master"], timeout_s)
        self.master_stopped = True

    def start_master(self, timeout_s: float | None = None) -> None:
        """Start the master stopped by :meth:`stop_master` again (``start-master``): a new
        broker on the same store, ports and properties; returns once the name server routes
        to it. Its slaves reconnect to its HA port on their own (HAClient retries every 5 s)."""
        self._command(["start-master"], self.startup_timeout_s if timeout_s is None else timeout_s)
        self.master_stopped = False

    def start_slave(
        self,
        broker_name: str | None = None,
        properties: dict[str, str] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> RealSlave:
        """Start a real 4.9.3 SLAVE (``brokerId`` 1, ``brokerRole`` SLAVE) in this JVM.

        It gets its own store (``<workdir>/slave-<name>``) and a block of three free loopback
        ports (VIP, HA, broker, as the master's), registers with this cluster's name server
        (or ``namesrvAddr`` in ``properties``) and learns its master's HA address from the
        registration result, as ``BrokerController#registerBrokerAll`` does, unless
        ``haMasterAddress`` is given. Returns once the name server holds it (when it is ours).

        Args:
            broker_name: the master's broker name (default: this cluster's ``broker_name``).
            properties: ``key=value`` broker settings on top of the runner's defaults; no value
                may hold whitespace.
        """
        name = broker_name or self.broker_name
        if name in self.slaves:
            raise RealClusterError(f"a slave of {name} is already running")
        props = dict(properties or {})
        store = self.workdir / f"slave-{name}"
        timeout = self.startup_timeout_s if timeout_s is None else timeout_s
        base = self._start_on_free_ports("start-slave", name, store, props, timeout)
        slave = RealSlave(
            broker_name=name, broker_addr=f"127.0.0.1:{base + 2}", ha_port=base + 1,
            store_dir=store,
        )  # fmt: skip
        self.slaves[name] = slave
        return slave

    def _start_on_free_ports(
        self, command: str, name: str, store: Path, props: dict[str, str], timeout: float
    ) -> int:
        """Run ``command NAME PORT HA_PORT STORE [key=value ...]`` on a block of three free
        loopback ports (VIP, HA, broker); its first port. A lost port race is retried."""
        for attempt in range(3):
            base = free_port(3)
            try:
                self._command(
                    [command, name, str(base + 2), str(base + 1), str(store),
                     *(f"{k}={v}" for k, v in props.items())],
                    timeout,
                )  # fmt: skip
            except RealClusterError as e:
                if "Address already in use" not in str(e) or attempt == 2:
                    raise
                continue
            return base
        raise AssertionError("unreachable")

    def stop_slave(self, broker_name: str | None = None, timeout_s: float = 60) -> None:
        """Shut a slave started by :meth:`start_slave` down (``stop-slave``)."""
        name = broker_name or self.broker_name
        if name not in self.slaves:
            raise RealClusterError(f"no slave of {name} was started")
        self._command(["stop-slave", name], timeout_s)
        del self.slaves[name]

    def start_broker(
        self,
        broker_name: str,
        properties: dict[str, str] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> RealBroker:
        """Start another real 4.9.3 MASTER (brokerId 0) named ``broker_name`` in this JVM
        (``start-broker``), registered with this cluster's name server.

        It gets its own store (``<workdir>/broker-<name>``), three free loopback ports (VIP,
        HA, broker) and only the runner's defaults plus ``properties``, not the first master's.
        With ``aclEnable=true`` and ``rocketmqHome=DIR``, its ``PlainAccessValidator`` reads
        ``DIR/conf/plain_acl.yml`` (4.9.3 reads the ``rocketmq.home.dir`` system property; the
        runner sets it to ``DIR`` while this broker initializes). Returns once the name server
        routes to it. A group that needs it starts it and stops it after (:meth:`stop_broker`).
        """
        if broker_name in self.brokers or broker_name == self.broker_name:
            raise RealClusterError(f"a master named {broker_name} is already running")
        props = dict(properties or {})
        store = self.workdir / f"broker-{broker_name}"
        timeout = self.startup_timeout_s if timeout_s is None else timeout_s
        base = self._start_on_free_ports("start-broker", broker_name, store, props, timeout)
        broker = RealBroker(
            broker_name=broker_name, broker_addr=f"127.0.0.1:{base + 2}",
            broker_vip_addr=f"127.0.0.1:{base}", ha_port=base + 1, store_dir=store,
        )  # fmt: skip
        self.brokers[broker_name] = broker
        return broker

    def stop_broker(self, broker_name: str, timeout_s: float = 60) -> None:
        """Shut a master started by :meth:`start_broker` down (``stop-broker``)."""
        if broker_name not in self.brokers:
            raise RealClusterError(f"no broker {broker_name} was started by start_broker")
        self._command(["stop-broker", broker_name], timeout_s)
        del self.brokers[broker_name]


@dataclass(frozen=True, slots=True)
class RealBroker:
    """Another real 4.9.3 master run by :meth:`RealCluster.start_broker`."""

    broker_name: str
    broker_addr: str
    broker_vip_addr: str
    ha_port: int
    store_dir: Path


@dataclass(frozen=True, slots=True)
class RealSlave:
    """A real 4.9.3 slave broker run by :meth:`RealCluster.start_slave`."""

    broker_name: str
    broker_addr: str
    ha_port: int
    store_dir: Path

    @property
    def commitlog_dir(self) -> Path:
        return self.store_dir / "commitlog"


def _java() -> str:
    java = _jdk_tool("java")
    if java is None:
        raise RealClusterError("no 'java' (JAVA_HOME/bin or PATH)")
    return java


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


# -- 5. mqadmin -------------------------------------------------------------------------------


def run_mqadmin(
    args: list[str], namesrv_addr: str, *, timeout_s: float = 60, credentials=None
) -> subprocess.CompletedProcess[str]:
    """Run ``mqadmin <args>`` (``MQAdminStartup`` from rocketmq-tools 4.9.3) against a name server.

    ``MQAdminStartup`` loads ``$ROCKETMQ_HOME/conf/logback_tools.xml`` first and, when that file
    is missing, prints a stack trace, runs no command and still exits 0. So each call gets a
    temp ROCKETMQ_HOME holding our own ``logback_tools.xml``; it is also ``user.home``, so the
    client's logs land there, and it is removed afterwards. ``namesrv_addr`` is passed as the
    ``rocketmq.namesrv.addr`` property, so ``-n`` in ``args`` is optional.

    ``credentials`` (a ``SessionCredentials``) are written to ``conf/tools.yml`` as
    ``accessKey`` / ``secretKey``: 4.9.3's ``MQAdminStartup`` then signs every request with
    ``AclUtils#getAclRPCHook(ROCKETMQ_HOME + "/conf/tools.yml")``; without the file (or with a
    blank key) it signs nothing.

    Returns:
        The finished process, text mode: the command's own output is on stdout.
    """
    classpath = runner_classpath()
    with tempfile.TemporaryDirectory(prefix="mqlab-mqadmin-") as home:
        conf = Path(home) / "conf"
        conf.mkdir()
        shutil.copyfile(JAVA_DIR / "conf" / "logback_tools.xml", conf / "logback_tools.xml")
        _write_tools_yml(conf, credentials)
        env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
        env["ROCKETMQ_HOME"] = home
        cds_flags, cds_tmp = _class_data_sharing("mqadmin")
        cmd = [
            _java(), *MQADMIN_FLAGS, *cds_flags,
            f"-Duser.home={home}",
            f"-Drocketmq.client.logRoot={home}/logs",
            f"-Drocketmq.namesrv.addr={namesrv_addr}",
            "-cp", classpath, MQADMIN_MAIN, *args,
        ]  # fmt: skip
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False,
                stdin=subprocess.DEVNULL, cwd=home,
            )  # fmt: skip
        except BaseException:
            _keep_archive(cds_tmp, None)
            raise
        _keep_archive(cds_tmp, proc.returncode)
        return proc


def _write_tools_yml(conf: Path, credentials) -> None:
    """``conf/tools.yml`` with the ``accessKey`` / ``secretKey`` of ``credentials`` (a
    ``SessionCredentials``), or no such file (None): what ``AclUtils#getAclRPCHook`` reads."""
    tools = conf / "tools.yml"
    if credentials is None:
        tools.unlink(missing_ok=True)
        return
    tools.write_text(
        f"accessKey: {credentials.access_key}\nsecretKey: {credentials.secret_key}\n",
        encoding="utf-8",
    )


class MqAdminSession:
    """One JVM that runs many mqadmin commands (``MqAdmin --batch``), for one name server.

    Each command is one line on the JVM's stdin (arguments separated by TAB); the JVM runs it
    with ``MQAdminStartup.main`` and ends its output with a marker line on stdout and stderr
    (``MqAdmin.BATCH_END`` and the status). A JVM start costs ~1 s of CPU; a command in a warm
    JVM costs a fraction of that. The environment is :func:`run_mqadmin`'s: a temp ROCKETMQ_HOME
    with our ``logback_tools.xml``, the name server as ``rocketmq.namesrv.addr``.

    A command that does not finish within its timeout kills the JVM (the next :meth:`run`
    starts a new one) and raises ``subprocess.TimeoutExpired``.
    """

    MARKER = "@@mqlab-mqadmin-end"

    def __init__(self, namesrv_addr: str) -> None:
        import queue
        import threading

        self.namesrv_addr = namesrv_addr
        self._home = tempfile.TemporaryDirectory(prefix="mqlab-mqadmin-")
        home = self._home.name
        conf = Path(home) / "conf"
        conf.mkdir()
        shutil.copyfile(JAVA_DIR / "conf" / "logback_tools.xml", conf / "logback_tools.xml")
        env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
        env["ROCKETMQ_HOME"] = home
        archive = JAVA_DIR / "target" / "mqadmin.jsa"
        cds = [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off"] if archive.exists() else []
        cmd = [
            _java(), *MQADMIN_FLAGS, *cds, "-Djava.security.manager=allow",
            f"-Duser.home={home}",
            f"-Drocketmq.client.logRoot={home}/logs",
            f"-Drocketmq.namesrv.addr={namesrv_addr}",
            "-cp", runner_classpath(), MQADMIN_MAIN, "--batch",
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env, cwd=home, bufsize=1,
        )  # fmt: skip
        self._lines: dict[str, queue.Queue[str | None]] = {}
        for name, stream in (("stdout", self._proc.stdout), ("stderr", self._proc.stderr)):
            q: queue.Queue[str | None] = queue.Queue()
            self._lines[name] = q
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()
        self.commands = 0

    @staticmethod
    def _pump(stream, q) -> None:
        for line in stream:
            q.put(line)
        q.put(None)

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def _read_until_marker(self, name: str, deadline: float) -> tuple[str, int | None]:
        import queue

        out: list[str] = []
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines[name].get(timeout=max(left, 0.001))
            except queue.Empty:
                return "".join(out), None
            if line is None:
                return "".join(out), None
            at = line.find(self.MARKER)
            if at >= 0:  # a command's output may not end with a newline
                out.append(line[:at])
                return "".join(out), int(line[at:].split()[1])
            out.append(line)

    def run(
        self, args: list[str], *, timeout_s: float = 60, credentials=None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``mqadmin <args>``; the finished command as a CompletedProcess (status: 0, or what
        the command asked ``System.exit`` for).

        ``credentials`` sign this command as :func:`run_mqadmin`'s do: ``MQAdminStartup#main0``
        reads ``$ROCKETMQ_HOME/conf/tools.yml`` for every command it runs
        (``AclUtils#getAclRPCHook``), so the file is written before this one, and removed
        before a command without them."""
        if any("\t" in a or "\n" in a for a in args):
            raise ValueError(f"mqadmin arguments cannot hold a TAB or newline: {args!r}")
        if not self.alive:
            raise RealClusterError(f"the mqadmin JVM has ended ({self._proc.returncode})")
        _write_tools_yml(Path(self._home.name) / "conf", credentials)
        assert self._proc.stdin is not None
        self._proc.stdin.write("\t".join(args) + "\n")
        self._proc.stdin.flush()
        deadline = time.monotonic() + timeout_s
        stdout, status = self._read_until_marker("stdout", deadline)
        stderr, _ = self._read_until_marker("stderr", deadline)
        self.commands += 1
        if status is None:
            self.close()
            raise subprocess.TimeoutExpired(["mqadmin", *args], timeout_s, stdout, stderr)
        return subprocess.CompletedProcess(["mqadmin", *args], status, stdout, stderr)

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()  # the JVM halts at end of input
                self._proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait(10)
        self._home.cleanup()


_SESSIONS: dict[str, MqAdminSession] = {}
#: The interop matrix runs its two targets on two threads, each with its own name server.
_SESSIONS_LOCK = threading.Lock()


def mqadmin_session(namesrv_addr: str) -> MqAdminSession:
    """The batch mqadmin JVM for this name server (started on first use, reused after)."""
    with _SESSIONS_LOCK:
        s = _SESSIONS.get(namesrv_addr)
    if s is None or not s.alive:  # a JVM start: not under the lock (one caller per name server)
        s = MqAdminSession(namesrv_addr)
        with _SESSIONS_LOCK:
            _SESSIONS[namesrv_addr] = s
    return s


def close_mqadmin_sessions(namesrv_addr: str | None = None) -> None:
    """Stop the batch mqadmin JVM of ``namesrv_addr``, or (None) every one this process started."""
    with _SESSIONS_LOCK:
        if namesrv_addr is None:
            sessions = list(_SESSIONS.values())
            _SESSIONS.clear()
        else:
            sessions = [s] if (s := _SESSIONS.pop(namesrv_addr, None)) is not None else []
    for s in sessions:
        s.close()


# -- 6. measuring -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m mqlab.conformance.real_cluster [--runs N]``: build, then start, measure and
    stop the real cluster N times, running ``mqadmin clusterList`` against each; prints figures."""
    import argparse
    import resource

    parser = argparse.ArgumentParser(prog="python -m mqlab.conformance.real_cluster")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    missing = java_tools_missing()
    if missing:
        print(f"cannot run: {missing}")
        return 1
    started = time.monotonic()
    build_runner()
    print(f"build (or up to date): {time.monotonic() - started:.1f} s")
    tick = os.sysconf("SC_CLK_TCK")

    def children_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="mqlab-real-cluster-") as workdir:
            cluster = RealCluster(Path(workdir)).start()
            try:
                stat = Path(f"/proc/{cluster.pid}/stat").read_text().rsplit(")", 1)[1].split()
                cpu = (int(stat[11]) + int(stat[12])) / tick
                status = Path(f"/proc/{cluster.pid}/status").read_text()
                rss = int(status.split("VmRSS:")[1].split()[0]) / 1024
                t, c = time.monotonic(), children_cpu()
                admin = run_mqadmin(["clusterList"], cluster.namesrv_addr)
                admin_s, admin_cpu = time.monotonic() - t, children_cpu() - c
            finally:
                cluster.stop()
        ok = admin.returncode == 0 and cluster.broker_addr in admin.stdout
        print(
            f"run {run + 1}: ready {cluster.startup_s:.2f} s (JVM CPU {cpu:.2f} s), "
            f"RSS {rss:.0f} MiB, stop {cluster.shutdown_s:.2f} s (exit {cluster.returncode}); "
            f"mqadmin clusterList {admin_s:.2f} s (CPU {admin_cpu:.2f} s, {'ok' if ok else 'FAILED'})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
