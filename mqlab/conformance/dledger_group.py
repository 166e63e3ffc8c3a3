"""A real RocketMQ 4.9.3 DLedger group: a name server and three broker nodes, one JVM each.

Not a RocketMQ class: the harness that runs the real Raft group mqlab's DLedger is checked
against. Each node is our runner (``conformance/java``, ``RealCluster`` with
``--namesrv-addr``) with 4.9.3's DLedger keys, as ``MessageStoreConfig`` reads them:

- ``enableDLegerCommitLog=true``: the store's commit log is a ``DLedgerCommitLog``; the runner
  sets ``brokerId=-1`` as ``BrokerStartup#createBrokerController`` does;
- ``dLegerGroup``: the Raft group's name (here the broker name, as in 4.9.3's example confs);
- ``dLegerPeers``: ``n0-127.0.0.1:P0;n1-127.0.0.1:P1;n2-127.0.0.1:P2``, each node's DLedger
  RPC address; a node listens on its own (``DLedgerRpcNettyService``);
- ``dLegerSelfId``: ``n0``, ``n1``, ``n2``.

1. :meth:`RealDLedgerGroup.start` starts the name server alone in one JVM
   (``RealCluster(broker=False)``), then each node in a JVM of its own on free loopback
   ports, with ``brokerIP1``/``brokerIP2`` 127.0.0.1 and its own store (``<workdir>/n<i>``).
2. It returns once the name server lists a brokerId-0 address for the group:
   ``DLedgerRoleChangeHandler`` makes the elected leader ``SYNC_MASTER`` with brokerId 0 once
   it has applied its log, and each follower a SLAVE with brokerId ``i + 1``
   (``DLedgerCommitLog``'s id), and each registers.
3. :meth:`kill` ends one node's JVM with SIGKILL (its store keeps its ``abort`` file);
   :meth:`restart` starts it again on its store, ports and peers.
4. With ``capture=True`` the peers reach each other through a :class:`FrameCapture` relay:
   node ``a`` has, for peer ``b``, the address of the link ``a -> b``, so every DLedger frame
   between real nodes is recorded with its sender and receiver.
5. ``external={"n2": "127.0.0.1:P"}`` makes a peer a node that runs elsewhere (an mqlab
   node, ``mqlab.conformance.dledger_mixed``): no JVM is started for it, and every real
   node's ``dLegerPeers`` names its address (with a capture, the link to it; the external
   node gets its own peers, links included, from :meth:`peers_of`). :meth:`start` then returns
   once the real nodes' brokers are up, without waiting for a brokerId 0: the leader may be
   the external node, which registers by itself.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from mqlab.conformance.dledger_capture import FrameCapture
from mqlab.conformance.real_cluster import RealCluster, RealClusterError, free_port
from mqlab.conformance.wire import broker_addr_table, wait_until

__all__ = ["DLEDGER_JVM_OPTIONS", "RealDLedgerGroup"]

#: Per node: a smaller heap than one broker's runner default (four JVMs on a shared box), and
#: DLedger's own disk guards (``DLedgerConfig``: ``dledger.disk.ratio.check`` 0.70 and
#: ``dledger.disk.ratio.clean`` 0.85) raised, so that results do not depend on this disk.
DLEDGER_JVM_OPTIONS = [
    "-Xms32m",
    "-Xmx256m",
    "-XX:MaxDirectMemorySize=128m",
    "-Ddledger.disk.ratio.check=0.98",
    "-Ddledger.disk.ratio.clean=0.99",
]


class RealDLedgerGroup:
    """A name server and ``nodes`` real 4.9.3 DLedger brokers named ``broker_name``.

    Args:
        workdir: holds ``namesrv/`` and ``n0/``, ``n1/``... (each a :class:`RealCluster`'s
            workdir: store, home, JVM output).
        capture: relay the DLedger RPC through a :class:`FrameCapture` (``self.capture``).
        broker_properties: further broker settings for every node.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        nodes: int = 3,
        broker_name: str = "RaftNode00",
        cluster: str = "RaftCluster",
        capture: bool = False,
        broker_properties: dict[str, str] | None = None,
        jvm_options: list[str] | None = None,
        startup_timeout_s: float = 90,
        external: dict[str, str] | None = None,
    ) -> None:
        if nodes < 1:
            raise ValueError("a DLedger group needs at least one node")
        self.workdir = Path(workdir)
        self.ids = [f"n{i}" for i in range(nodes)]
        #: peers run elsewhere: self id -> DLedger address (step 5)
        self.external = dict(external or {})
        unknown = sorted(set(self.external) - set(self.ids))
        if unknown:
            raise ValueError(f"external nodes {unknown} are not among {self.ids}")
        #: the nodes this group runs, one JVM each
        self.real_ids = [i for i in self.ids if i not in self.external]
        self.broker_name = broker_name
        self.cluster = cluster
        self.broker_properties = dict(broker_properties or {})
        self.jvm_options = [*DLEDGER_JVM_OPTIONS, *(jvm_options or [])]
        self.startup_timeout_s = startup_timeout_s
        self.capture: FrameCapture | None = FrameCapture() if capture else None
        self.namesrv: RealCluster | None = None
        #: by self id; each a broker in a JVM of its own
        self.nodes: dict[str, RealCluster] = {}
        #: each node's own DLedger RPC port (what it listens on)
        self.dledger_ports: dict[str, int] = {}

    def __enter__(self) -> RealDLedgerGroup:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def namesrv_addr(self) -> str:
        if self.namesrv is None:
            raise RealClusterError("the group is not started")
        return self.namesrv.namesrv_addr

    def peers_of(self, self_id: str) -> str:
        """``dLegerPeers`` as node ``self_id`` is given it: its own real address, and for each
        peer the real address, or with a capture, the link ``self_id -> peer``."""
        parts = []
        for i in self.ids:
            addr = self.dledger_addr(i)
            if self.capture is not None and (self_id, i) in self._links:
                addr = f"127.0.0.1:{self._links[(self_id, i)]}"
            parts.append(f"{i}-{addr}")
        return ";".join(parts)

    def dledger_addr(self, self_id: str) -> str:
        """Where node ``self_id`` listens for DLedger RPC (its own address, no relay)."""
        if self_id in self.external:
            return self.external[self_id]
        return f"127.0.0.1:{self.dledger_ports[self_id]}"

    def dledger_dir(self, self_id: str) -> Path:
        """A real node's DLedger store, ``DLedgerConfig#getDefaultPath`` (0.2.3): the broker's
        ``storePathRootDir`` (``DLedgerCommitLog`` sets it as ``storeBaseDir``) and
        ``dledger-<selfId>``; ``data/`` and ``index/`` hold its files."""
        return self.nodes[self_id].store_dir / f"dledger-{self_id}"

    # -- 1./2. start ----------------------------------------------------------------------
    def start(self) -> RealDLedgerGroup:
        """Start the name server, then every node; return once the group has a brokerId 0."""
        try:
            self.namesrv = RealCluster(
                self.workdir / "namesrv", broker=False, cluster=self.cluster,
                jvm_options=self.jvm_options, startup_timeout_s=self.startup_timeout_s,
            ).start()  # fmt: skip
            for i in self.real_ids:
                self.dledger_ports[i] = free_port()
            self._links: dict[tuple[str, str], int] = {}
            if self.capture is not None:
                for a in self.ids:
                    for b in self.ids:
                        if a != b and (a in self.real_ids or b in self.real_ids):
                            port = int(self.dledger_addr(b).rsplit(":", 1)[1])
                            self._links[(a, b)] = self.capture.add_link(a, b, port)
            for i in self.real_ids:
                props = {
                    **self.broker_properties,
                    "enableDLegerCommitLog": "true",
                    "dLegerGroup": self.broker_name,
                    "dLegerPeers": self.peers_of(i),
                    "dLegerSelfId": i,
                }
                self.nodes[i] = RealCluster(
                    self.workdir / i, props, broker_name=self.broker_name, cluster=self.cluster,
                    namesrv_addr=self.namesrv.namesrv_addr, jvm_options=self.jvm_options,
                    startup_timeout_s=self.startup_timeout_s,
                ).start()  # fmt: skip
            if not self.external:
                self.wait_leader()
        except BaseException:
            self.stop()
            raise
        return self

    # -- what the name server says --------------------------------------------------------
    def broker_addrs(self) -> dict[int, str]:
        """The group's ``brokerAddrs`` in the name server's cluster info (106), by brokerId."""
        return broker_addr_table(self.namesrv_addr, self.broker_name)

    def node_at(self, broker_addr: str) -> str | None:
        """The self id of the running node whose broker listens at ``broker_addr``."""
        for i, node in self.nodes.items():
            if node.broker_addr == broker_addr:
                return i
        return None

    def leader(self) -> str | None:
        """The self id of the node the name server lists as brokerId 0 (the DLedger leader,
        once its role change has applied its log), or None."""
        addr = self.broker_addrs().get(0)
        return None if addr is None else self.node_at(addr)

    def leader_addr(self) -> str:
        leader = self.leader()
        if leader is None:
            raise RealClusterError("the name server lists no brokerId 0 for the group")
        return self.nodes[leader].broker_addr

    def wait_leader(self, *, other_than: str | None = None, timeout_s: float = 90) -> str:
        """Block until the name server lists a running node (not ``other_than``) as brokerId
        0; its self id."""
        found: list[str] = []

        def listed() -> bool:
            leader = self.leader()
            if leader is None or leader == other_than or not self.nodes[leader].running:
                return False
            found.append(leader)
            return True

        wait_until(listed, timeout_s, f"a brokerId 0 for {self.broker_name}",
                   error=RealClusterError, pause_s=0.2)  # fmt: skip
        return found[-1]

    def wait_registered(self, timeout_s: float = 90) -> dict[int, str]:
        """Block until every running node is listed: the leader at 0, follower ``n<i>`` at
        ``i + 1``; the table."""
        table: list[dict[int, str]] = []

        def complete() -> bool:
            addrs = self.broker_addrs()
            leader = addrs.get(0)
            want = {
                (0 if node.broker_addr == leader else int(i[1:]) + 1): node.broker_addr
                for i, node in self.nodes.items()
                if node.running
            }
            table.append(addrs)
            return leader is not None and addrs == want

        wait_until(complete, timeout_s, "every node of the group registered",
                   error=RealClusterError, pause_s=0.2)  # fmt: skip
        return table[-1]

    # -- 3. faults ------------------------------------------------------------------------
    def kill(self, self_id: str) -> None:
        """SIGKILL node ``self_id``'s JVM: no shutdown, no unregistering, no last flush."""
        self.nodes[self_id].kill()

    def restart(self, self_id: str) -> None:
        """Start a killed or stopped node again on its store, ports and peers; returns once its
        broker is up (its election or following happens after)."""
        self.nodes[self_id].restart()

    def stop(self) -> None:
        """Stop every node, then the name server, then the relay. Idempotent."""
        for node in self.nodes.values():
            node.stop()
        if self.namesrv is not None:
            self.namesrv.stop()
        if self.capture is not None:
            self.capture.close()
