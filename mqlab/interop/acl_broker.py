"""The broker with ACL on that the ACL interop scenarios share, on each target.

One per target, started by the first ACL scenario (``Target.acl()``) and stopped with the
target: ``broker-acl``, a master with ``aclEnable=true`` registered with the target's own name
server, beside its ``broker-a``. It reads our accounts
(:mod:`mqlab.conformance.scenarios.acl_accounts`) from ``<home>/conf/plain_acl.yml``, as 4.9.3's
``PlainPermissionManager`` looks for them under ``rocketmq.home.dir``:

- mqlab: ``ServeConfig(properties={"aclEnable": "true", ...}, rocketmq_home=home,
  namesrv_addr=<the target's>)`` on an event-loop thread of its own (``ServerThread``);
- real: ``RealCluster.start_broker("broker-acl", {"aclEnable": "true", "rocketmqHome": home})``
  in the target's JVM (no JVM of its own).

Its topics are created on it alone (:func:`create_topics`, signed by the admin), so that routes
to them lead there and not to ``broker-a``. Registered beside ``broker-a``, its ``TBW102``
would draw other scenarios' auto-created topics to a broker that refuses them unsigned: the
ACL scenarios therefore run last.

A write to the ACL file (mqadmin ``updateAclConfig``, ``deleteAccessConfig``,
``updateGlobalWhiteAddr``) poisons the broker: 4.9.3's watcher reloads the file 0-5 s later and
``PlainPermissionManager#load(String)`` loses every account it had (apache/rocketmq#3887;
``mechanisms.md "Plain ACL"``). The scenario says so (:meth:`AclBroker.file_written`) and the
next ``Target.acl()`` starts a fresh broker: new store, new home, new ports.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.conformance.scenarios.acl_accounts import ADMIN, write_plain_acl
from mqlab.conformance.sides import ACL_BROKER, acl_properties

__all__ = ["AclBroker", "create_topics", "read_plain_acl", "routed_brokers"]


class AclBroker:
    """``broker-acl`` of one target; :meth:`ensure` (re)starts it, :meth:`close` stops it.

    ``cluster`` is the real target's ``RealCluster`` (None on mqlab)."""

    def __init__(self, kind: str, namesrv_addr: str, workdir: Path, cluster: Any = None) -> None:
        if kind not in ("mqlab", "real"):
            raise ValueError(f"kind must be mqlab or real, got {kind!r}")
        if kind == "real" and cluster is None:
            raise ValueError("a real ACL broker needs the target's RealCluster")
        self.kind = kind
        self.namesrv_addr = namesrv_addr
        # absolute: 4.9.3 prints the file's path as rocketmqHome + "/conf/plain_acl.yml"
        self.workdir = Path(workdir).resolve()
        self._cluster = cluster
        self._server = None
        #: this broker's address ("" while stopped)
        self.addr = ""
        #: how many times a broker was started (the first, then one per poisoning write)
        self.starts = 0
        #: the ACL file was written since the start: 4.9.3 loses its accounts at the next tick
        self.poisoned = False

    @property
    def home(self) -> Path:
        """Its ``rocketmq.home.dir``: ``plain_acl.yml`` is in ``conf/`` below."""
        return self.workdir / f"home-{self.starts}"

    @property
    def acl_file(self) -> Path:
        return self.home / "conf" / "plain_acl.yml"

    def ensure(self) -> AclBroker:
        """Running, and not poisoned: started (again, afresh) if needed."""
        if self.addr and not self.poisoned:
            return self
        self.close()
        self.starts += 1
        self.poisoned = False
        write_plain_acl(self.home)
        store = self.workdir / f"store-{self.starts}"
        if self.kind == "real":
            props = {**acl_properties(), "rocketmqHome": str(self.home)}
            self.addr = self._cluster.start_broker(ACL_BROKER, props).broker_addr
            return self
        from mqlab.conformance.wire import registered_addr, wait_until
        from mqlab.serve import ServeConfig, ServerThread

        self._server = ServerThread(
            ServeConfig(
                namesrv_port=0, broker_port=0, store=str(store), trace_level="off",
                run_id="interop-acl", properties={**acl_properties(), "brokerName": ACL_BROKER},
                rocketmq_home=str(self.home), namesrv_addr=self.namesrv_addr,
            )
        )  # fmt: skip
        self.addr = self._server.call(lambda s: s.broker(ACL_BROKER).broker_addr)
        # as RealCluster.start_broker: return once the name server routes to it
        wait_until(lambda: registered_addr(self.namesrv_addr, ACL_BROKER, 0) == self.addr,
                   30, "broker-acl to register")  # fmt: skip
        return self

    def file_written(self) -> None:
        """A command wrote the ACL file: the next :meth:`ensure` starts a fresh broker."""
        self.poisoned = True

    def close(self) -> None:
        """Stop it (it unregisters from the name server); its store and home are removed."""
        if not self.addr:
            return
        self.addr = ""
        try:
            if self._server is not None:
                self._server.stop()
                self._server = None
            else:
                store = self._cluster.brokers[ACL_BROKER].store_dir
                self._cluster.stop_broker(ACL_BROKER)
                shutil.rmtree(store, ignore_errors=True)
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
            shutil.rmtree(self.workdir / f"store-{self.starts}", ignore_errors=True)


def create_topics(
    addr: str, topics: tuple[str, ...] | list[str], namesrv_addr: str | None = None
) -> list[int]:
    """UPDATE_AND_CREATE_TOPIC (1 read and 1 write queue, perm 6) of each topic on the ACL
    broker at ``addr`` alone, signed by the admin: the response codes (0 each when created).

    With ``namesrv_addr``, returns once that name server routes each topic to ``broker-acl``
    alone. Both brokers answer only after their registration reached the name servers
    (``AdminBrokerProcessor#updateAndCreateTopic`` calls ``registerIncrementBrokerData``, and
    ``BrokerOuterAPI#registerBrokerAll`` waits on a ``CountDownLatch``), so the first look
    normally finds the route; the wait checks it. A registration that failed or timed out
    is still answered SUCCESS: a client asking for the route then finds none, falls back to
    ``TBW102`` and may auto-create the topic on ``broker-a``, which has no ACL."""
    from mqlab.conformance.scenarios.acl import _create_topic
    from mqlab.conformance.wire import call_sync, wait_until
    from mqlab.remoting.command import RemotingCommand

    codes = []
    for topic in topics:
        req = RemotingCommand.create_request(17, dict(_create_topic("t", topic).header))
        AclClientRPCHook(ADMIN).do_before_request(addr, req)
        codes.append(call_sync(addr, req).code)
    if namesrv_addr is not None:
        for topic in topics:
            wait_until(lambda t=topic: routed_brokers(namesrv_addr, t) == [ACL_BROKER], 30,
                       f"{topic} routed to {ACL_BROKER}")  # fmt: skip
    return codes


def routed_brokers(namesrv_addr: str, topic: str) -> list[str]:
    """The broker names the name server routes ``topic`` to (GET_ROUTEINFO_BY_TOPIC), sorted;
    [] when it has no route."""
    from mqlab.conformance.wire import call_sync
    from mqlab.remoting.codes import RequestCode
    from mqlab.remoting.command import RemotingCommand
    from mqlab.remoting.fastjson import loads as fastjson_loads

    req = RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
    resp = call_sync(namesrv_addr, req)
    if resp.code != 0 or not resp.body:
        return []
    route = fastjson_loads(resp.body.decode())
    return sorted(b["brokerName"] for b in route.get("brokerDatas") or [])


def read_plain_acl(home: Path | str) -> dict:
    """``<home>/conf/plain_acl.yml`` as YAML: what a command left in the file."""
    return yaml.safe_load((Path(home) / "conf" / "plain_acl.yml").read_text(encoding="utf-8"))
