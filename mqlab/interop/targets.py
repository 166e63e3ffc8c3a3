"""The two clusters a scenario runs against: ``mqlab serve`` and the real RocketMQ 4.9.3.

Both are started with the same broker properties (``INTEROP_BROKER_PROPERTIES``): a short
``messageDelayLevel`` so that retries come back in seconds, ``enablePropertyFilter`` for
SQL92 selectors, a 1 s ``transactionCheckInterval`` / ``transactionTimeOut`` so that a
transaction check-back comes in seconds. Each lives in its own work directory on free loopback ports and is
stopped by ``close()``.
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
    workdir: Path

    def close(self) -> None: ...

    def group(self) -> Any:
        """The master+slave group of this target (``mqlab.interop.ha_group``): started by
        the first call, shared by every HA scenario, stopped by ``close()``."""
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

    def __post_init__(self) -> None:
        from mqlab.serve import ServeConfig, ServerThread

        props = dict(self.properties)
        delay = props.pop("messageDelayLevel", None)
        self._server = ServerThread(
            ServeConfig(
                namesrv_port=0, broker_port=0, store=str(self.workdir / "store"),
                delay_levels=delay, properties=props, trace_level="off",
            )
        )  # fmt: skip
        self.namesrv_addr = self._server.namesrv_addr
        self.broker_addr = self._server.server.broker_addrs["broker-a"]

    def close(self) -> None:
        _close_group(self)
        self._server.stop()

    def group(self) -> Any:
        return _group(self)

    def run_on_loop(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` on the server's event-loop thread (the thread that runs every node)."""
        return self._server.call(lambda _server: fn())

    def cpu_seconds(self) -> float:
        """CPU time of the event-loop thread: name server, broker and network driver."""
        return float(self.run_on_loop(time.thread_time))


@dataclass
class RealTarget:
    """The real RocketMQ 4.9.3 name server and broker (one JVM, ``RealCluster``)."""

    workdir: Path
    properties: dict[str, str] = field(default_factory=lambda: dict(INTEROP_BROKER_PROPERTIES))
    kind: str = "real"
    #: extra JVM options, e.g. full JIT for a benchmark (the tests' JVM stops at C1)
    jvm_options: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from mqlab.conformance.real_cluster import RealCluster

        self._cluster = RealCluster(
            self.workdir, dict(self.properties), jvm_options=self.jvm_options
        ).start()
        self.namesrv_addr = self._cluster.namesrv_addr
        self.broker_addr = self._cluster.broker_addr

    def close(self) -> None:
        _close_group(self)
        self._cluster.stop()

    def group(self) -> Any:
        return _group(self)

    def cpu_seconds(self) -> float:
        """CPU time of the JVM (name server and broker, every thread), from ``/proc``."""
        stat = Path(f"/proc/{self._cluster.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


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


def open_target(kind: str, workdir: Path | None = None, *, benchmark: bool = False) -> Target:
    """Start a target of ``kind`` ("mqlab" or "real") in ``workdir`` (a new temp dir).

    ``benchmark``: the real broker's JVM with full JIT and a 1 GiB heap, as in production
    (the tests' quick-start flags stop at the C1 compiler)."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix=f"mqlab-interop-{kind}-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if kind == "mqlab":
        return MqlabTarget(workdir)
    if kind == "real":
        jvm = ["-XX:TieredStopAtLevel=4", "-Xms1g", "-Xmx1g"] if benchmark else []
        return RealTarget(workdir, jvm_options=jvm)
    raise ValueError(f"unknown target {kind!r} (mqlab, real)")
