"""The two clusters a scenario runs against: ``mqlab serve`` and the real RocketMQ 4.9.3.

Both are started with the same broker properties (``INTEROP_BROKER_PROPERTIES``): a short
``messageDelayLevel`` so that retries come back in seconds, ``enablePropertyFilter`` for
SQL92 selectors, a 1 s ``transactionCheckInterval`` / ``transactionTimeOut`` so that a
transaction check-back comes in seconds. Each lives in its own work directory on free loopback ports and is
stopped by ``close()``.

Either can run as a broker group (``broker_role`` and ``slaves``): the master ``broker-a``
with that ``brokerRole`` and one slave (brokerId 1, SLAVE) of it, which learns the master's HA
address from its registration result: ``mqlab serve --slaves 1`` on one event loop, or the
real name server and slave in one JVM (``RealCluster(broker=False)``, ``start_slave``) and the
real master in a JVM of its own, so that ``stop_master()`` kills it as a crash would.

Beside its broker each target can run ``broker-acl``, a broker with ACL on for the ACL
scenarios (``acl()``, ``mqlab.interop.acl_broker``): started on first use, stopped by ``close()``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["INTEROP_BROKER_PROPERTIES", "Target", "MqlabTarget", "RealTarget", "open_target"]

#: Quick retries: level 3 (a consumer's first send-back) is 1 s, every later level 2 s.
QUICK_DELAY_LEVELS = "1s 1s 1s 2s 2s 2s 2s 2s 2s 2s 2s 2s 2s 2s 2s 2s 2s 2s"

INTEROP_BROKER_PROPERTIES: dict[str, str] = {
    "messageDelayLevel": QUICK_DELAY_LEVELS,
    "enablePropertyFilter": "true",
    # transaction check-backs in about 2 s instead of 60 s (a half message is checked once
    # it is older than transactionTimeOut, at the next check)
    "transactionCheckInterval": "1000",
    "transactionTimeOut": "1000",
}


class Target(Protocol):
    kind: str  # "mqlab" or "real"
    namesrv_addr: str
    broker_addr: str
    #: the slave's address in a group ("" without a slave)
    slave_addr: str
    workdir: Path

    def close(self) -> None: ...

    def group(self) -> Any:
        """The master+slave group of this target (``mqlab.interop.ha_group``): started by
        the first call, shared by every HA scenario, stopped by ``close()``."""
        ...

    def acl(self) -> Any:
        """The broker with ACL on of this target (``mqlab.interop.acl_broker.AclBroker``),
        registered with its name server: started by the first call, started afresh by the
        call after a write to its ACL file, stopped by ``close()``."""
        ...

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the target's server has used so far."""
        ...


@dataclass
class MqlabTarget:
    """``python -m mqlab serve`` on an event-loop thread of this process."""

    workdir: Path
    properties: dict[str, str] = field(default_factory=lambda: dict(INTEROP_BROKER_PROPERTIES))
    kind: str = "mqlab"
    #: the master's ``brokerRole`` (None: ASYNC_MASTER) and its slaves (0 or 1)
    broker_role: str | None = None
    slaves: int = 0
    #: the event loop (``serve --loop``)
    loop: str = "asyncio"

    def __post_init__(self) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        _check_group(self.broker_role, self.slaves)
        props = dict(self.properties)
        delay = props.pop("messageDelayLevel", None)
        self._server = ServerThread(
            ServeConfig(
                namesrv_port=0, broker_port=0, store=str(self.workdir / "store"),
                delay_levels=delay, properties=props, trace_level="off",
                broker_role=self.broker_role, slaves=self.slaves, loop=self.loop,
            )
        )  # fmt: skip
        self.namesrv_addr = self._server.namesrv_addr
        self.broker_addr = self._server.server.broker_addrs["broker-a"]
        #: the slave's address ("" without one)
        self.slave_addr = self._server.server.broker_addrs.get("broker-a-s1", "")

    def close(self) -> None:
        try:
            _close_acl(self)
            _close_group(self)
        finally:
            self._server.stop()

    def group(self) -> Any:
        return _group(self)

    def acl(self) -> Any:
        return _acl(self, None)

    @property
    def master_ha_port(self) -> int:
        """The master's HA port (its listen port + 1, as ``mqlab serve`` lays a group out)."""
        return int(self.broker_addr.rsplit(":", 1)[1]) + 1

    def stop_master(self) -> None:
        """Kill ``broker-a``'s master node alone (``MqlabServer.stop_broker``, not graceful:
        its connections abort, nothing is persisted or flushed first)."""
        self._server.submit(self._server.server.stop_broker("broker-a", graceful=False))

    def start_master(self) -> None:
        """Start it again on its store (``MqlabServer.restart_broker``)."""
        self._server.submit(self._server.server.restart_broker("broker-a"))

    def run_on_loop(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` on the server's event-loop thread (the thread that runs every node)."""
        return self._server.call(lambda _server: fn())

    def cpu_seconds(self) -> float:
        """CPU time of the event-loop thread: name server, broker and network driver."""
        return float(self.run_on_loop(time.thread_time))


@dataclass
class RealTarget:
    """The real RocketMQ 4.9.3 name server and broker (one JVM, ``RealCluster``); a group
    runs in two (module docstring)."""

    workdir: Path
    properties: dict[str, str] = field(default_factory=lambda: dict(INTEROP_BROKER_PROPERTIES))
    kind: str = "real"
    #: extra JVM options, e.g. full JIT for a benchmark (the tests' JVM stops at C1)
    jvm_options: list[str] = field(default_factory=list)
    #: the master's ``brokerRole`` (None: ASYNC_MASTER) and its slaves (0 or 1)
    broker_role: str | None = None
    slaves: int = 0

    def __post_init__(self) -> None:
        from mqlab.conformance.real_cluster import RealCluster

        _check_group(self.broker_role, self.slaves)
        props = dict(self.properties)
        if self.broker_role is not None:
            props["brokerRole"] = self.broker_role
        self._master: RealCluster | None = None
        self.slave_addr = ""
        if not self.slaves:
            self._cluster = RealCluster(self.workdir, props, jvm_options=self.jvm_options).start()
            self.namesrv_addr = self._cluster.namesrv_addr
            self.broker_addr = self._cluster.broker_addr
            return
        # a group: the name server and the slave in one JVM, the master in a JVM of its own,
        # so that stop_master() can kill it as a crash ends a machine's broker
        self._cluster = RealCluster(
            self.workdir / "namesrv", jvm_options=self.jvm_options, broker=False
        ).start()
        try:
            self.namesrv_addr = self._cluster.namesrv_addr
            self._master = RealCluster(
                self.workdir / "master", props, jvm_options=self.jvm_options,
                namesrv_addr=self.namesrv_addr,
            ).start()  # fmt: skip
            self.broker_addr = self._master.broker_addr
            self._wait_master_routed()
            slave = self._cluster.start_slave(properties=props_for_slave(props))
            self.slave_addr = slave.broker_addr
        except BaseException:
            self._stop_jvms()
            raise

    def _wait_master_routed(self) -> None:
        # the slave learns its master's HA address from its registration result: the
        # master must be registered first (else the slave waits for its next one, 30 s)
        from mqlab.conformance.wire import registered_addr, wait_until

        wait_until(lambda: registered_addr(self.namesrv_addr, "broker-a", 0) == self.broker_addr,
                   60, "the master to register")  # fmt: skip

    def _stop_jvms(self) -> None:
        try:
            self._cluster.stop()  # the slave first, with the name server
        finally:
            if self._master is not None:
                self._master.stop()

    def close(self) -> None:
        try:
            _close_acl(self)
            _close_group(self)
        finally:
            self._stop_jvms()

    def group(self) -> Any:
        return _group(self)

    def acl(self) -> Any:
        return _acl(self, self._cluster)

    @property
    def master_ha_port(self) -> int:
        return (self._master or self._cluster).ha_port

    def stop_master(self) -> None:
        """Kill the master's JVM (SIGKILL: no unregistering, no last flush); the name
        server drops it when its connection closes."""
        if self._master is None:
            raise RuntimeError("stop_master: this target runs no group")
        self._master.kill()

    def start_master(self) -> None:
        """Start the master's JVM again on its store and ports; returns once it is routed."""
        if self._master is None:
            raise RuntimeError("start_master: this target runs no group")
        self._master.restart()
        self._wait_master_routed()

    def cpu_seconds(self) -> float:
        """CPU time of the JVMs (name server and brokers, every thread), from ``/proc``."""
        total = 0.0
        for jvm in (self._cluster, self._master):
            if jvm is not None and jvm.pid is not None:
                stat = Path(f"/proc/{jvm.pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
        return total


def props_for_slave(master_props: dict[str, str]) -> dict[str, str]:
    """The real slave's settings: the master's, less its role (``start_slave`` makes it
    SLAVE) and ``messageDelayLevel`` (``start-slave`` takes no whitespace in a value; a
    slave schedules no retries)."""
    return {k: v for k, v in master_props.items() if k not in ("brokerRole", "messageDelayLevel")}


def _check_group(broker_role: str | None, slaves: int) -> None:
    if broker_role not in (None, "ASYNC_MASTER", "SYNC_MASTER"):
        raise ValueError(f"broker_role must be ASYNC_MASTER or SYNC_MASTER, got {broker_role!r}")
    if isinstance(slaves, bool) or slaves not in (0, 1):
        raise ValueError(f"slaves must be 0 or 1, got {slaves!r}")


def _group(target: Any) -> Any:
    group = getattr(target, "_ha_group", None)
    if group is None:
        from mqlab.interop.ha_group import open_group

        group = target._ha_group = open_group(target.kind, target.workdir / "ha-group")
    return group


def _close_group(target: Any) -> None:
    group = getattr(target, "_ha_group", None)
    if group is None:
        return
    target._ha_group = None
    from mqlab.conformance.real_cluster import close_mqadmin_sessions

    try:
        close_mqadmin_sessions(group.namesrv_addr)
    finally:
        group.close()


def _acl(target: Any, cluster: Any) -> Any:
    broker = getattr(target, "_acl_broker", None)
    if broker is None:
        from mqlab.interop.acl_broker import AclBroker

        broker = target._acl_broker = AclBroker(
            target.kind, target.namesrv_addr, target.workdir / "acl-broker", cluster
        )
    return broker.ensure()


def _close_acl(target: Any) -> None:
    broker = getattr(target, "_acl_broker", None)
    if broker is not None:
        target._acl_broker = None
        broker.close()


def open_target(
    kind: str,
    workdir: Path | None = None,
    *,
    benchmark: bool = False,
    broker_role: str | None = None,
    slaves: int = 0,
    loop: str = "asyncio",
) -> Target:
    """Start a target of ``kind`` ("mqlab" or "real") in ``workdir`` (a new temp dir).

    ``benchmark``: the real broker's JVM with full JIT and a 1 GiB heap, as in production
    (the tests' quick-start flags stop at the C1 compiler). ``broker_role`` and ``slaves``:
    a group, the master with that role and ``slaves`` (0 or 1) slaves. ``loop``: mqlab's
    event loop (``serve --loop``)."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix=f"mqlab-interop-{kind}-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if kind == "mqlab":
        return MqlabTarget(workdir, broker_role=broker_role, slaves=slaves, loop=loop)
    if kind == "real":
        jvm = ["-XX:TieredStopAtLevel=4", "-Xms1g", "-Xmx1g"] if benchmark else []
        return RealTarget(workdir, jvm_options=jvm, broker_role=broker_role, slaves=slaves)
    raise ValueError(f"unknown target {kind!r} (mqlab, real)")
