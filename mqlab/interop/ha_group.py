"""The master+slave group the HA interop scenarios share, on each target.

One group per target, started by the first HA scenario (``Target.group()``) and stopped with
the target: a SYNC_MASTER ``broker-a`` (brokerId 0) and its SLAVE (brokerId 1), with their
own name server, beside the target's single broker that every other scenario uses.

It is a second target of the same kind, ``open_target(kind, broker_role="SYNC_MASTER",
slaves=1)`` (``mqlab.interop.targets``), as ``bench real --group sync`` starts its own:

- mqlab: ``python -m mqlab serve --slaves 1 --broker-role SYNC_MASTER`` on an event-loop
  thread (``ServerThread``); the master node is killed (``MqlabServer.stop_broker(...,
  graceful=False)``: its connections abort, nothing is flushed) and restarted on its store
  (``restart_broker``).
- real: the name server and the slave in one JVM (``RealCluster(broker=False)`` and
  ``start_slave()``), the master in a JVM of its own (``RealCluster(namesrv_addr=...)``),
  killed with SIGKILL and launched again on its store and ports.

Either way, ``stop_master()`` returns once the name server has dropped the master (its
connection closed); the
group's start and ``start_master()`` return once the name server routes to the master *and*
the slave acknowledges what it is sent (``wait_slave_acks``): a slave's ``HAClient``
reconnects every 5 s and reports its offset (letting the master push) only
``haSendHeartbeatInterval`` (5 s) after connecting, so a SYNC_MASTER send soon after a
(re)connection waits ``syncFlushTimeout`` (5 s) and answers FLUSH_SLAVE_TIMEOUT on both
brokers. Waiting for a probe's SEND_OK makes the scenarios' sends independent of that race.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mqlab.conformance.wire import call_sync, registered_addr, send_v2, wait_until
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads as fastjson_loads

__all__ = ["HaGroup", "open_group"]

BROKER_NAME = "broker-a"
ROLE = "SYNC_MASTER"
#: the topic of the harness's probe sends (no scenario reads it)
PROBE_TOPIC = "IH_Probe"


def _wait(cond, timeout_s: float, what: str) -> None:
    wait_until(cond, timeout_s, what)


def registered(namesrv_addr: str, broker_id: int) -> str | None:
    """The address the name server has for ``broker-a``'s ``broker_id``."""
    return registered_addr(namesrv_addr, BROKER_NAME, broker_id)


def knows_topic(broker_addr: str, topic: str) -> bool:
    """The broker's topic table (GET_ALL_TOPIC_CONFIG) holds ``topic``: a slave has it once
    its SlaveSynchronize (every 10 s) copied it from the master."""
    resp = call_sync(broker_addr, RemotingCommand.create_request(RequestCode.GET_ALL_TOPIC_CONFIG))
    if resp.code != 0 or not resp.body:
        return False
    table = fastjson_loads(resp.body.decode()).get("topicConfigTable") or {}
    return topic in table


def probe_send(master_addr: str) -> int:
    """One SEND_MESSAGE_V2 to ``PROBE_TOPIC`` (auto-created from TBW102); the response code:
    0 SEND_OK, 12 FLUSH_SLAVE_TIMEOUT, 11 SLAVE_NOT_AVAILABLE (SYNC_MASTER's answers)."""
    return send_v2(master_addr, PROBE_TOPIC, b"probe", group="IH_probe", timeout=15).code


def ha_link_up(ha_port: int) -> bool:
    """Some TCP connection on this machine is established to local port ``ha_port`` (a
    slave's HAClient connected to the master's HA port): ``/proc/net/tcp``, Linux."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(path).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "01" and int(f[1].rsplit(":", 1)[1], 16) == ha_port:  # ESTABLISHED
                return True
    return False


class HaGroup:
    """The group on one target: a SYNC_MASTER ``broker-a`` and its slave, started with
    ``open_target(kind, broker_role="SYNC_MASTER", slaves=1)`` as ``bench real --group``
    starts its own, ready once the slave acknowledges (``wait_slave_acks``)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.kind = target.kind
        self.namesrv_addr = target.namesrv_addr
        self.master_addr, self.slave_addr = target.broker_addr, target.slave_addr
        self.master_ha_port = target.master_ha_port
        try:
            self.wait_slave_acks()
        except BaseException:
            target.close()
            raise

    def stop_master(self) -> None:
        """Stop the master alone; returns once the name server has dropped it."""
        self.target.stop_master()
        _wait(lambda: registered(self.namesrv_addr, 0) is None, 30,
              "the name server to drop the stopped master")  # fmt: skip

    def start_master(self) -> None:
        """Start the master again on its store; returns once it is routed to and its slave
        acknowledges."""
        self.target.start_master()
        _wait(lambda: registered(self.namesrv_addr, 0) == self.master_addr, 30,
              "the restarted master to register")  # fmt: skip
        self.wait_slave_acks()

    def wait_slave_acks(self, timeout_s: float = 60) -> None:
        """Probe sends to the master until one is SEND_OK: the slave is connected, has
        reported, and acknowledges within syncFlushTimeout."""
        _wait(lambda: ha_link_up(self.master_ha_port), timeout_s, "the slave's HA connection")
        _wait(lambda: probe_send(self.master_addr) == 0, timeout_s,
              "a SEND_OK from the master (its slave acknowledging)")  # fmt: skip

    def wait_slave_knows(self, topic: str, timeout_s: float = 30) -> None:
        _wait(lambda: knows_topic(self.slave_addr, topic), timeout_s,
              f"the slave's SlaveSynchronize to copy {topic}")  # fmt: skip

    def close(self) -> None:
        self.target.close()


def open_group(kind: str, workdir: Path) -> HaGroup:
    """Start the group of target ``kind`` ("mqlab" or "real") in ``workdir``."""
    from mqlab.interop.targets import open_target

    return HaGroup(open_target(kind, workdir, broker_role=ROLE, slaves=1))
