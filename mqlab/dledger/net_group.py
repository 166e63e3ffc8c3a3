"""DLedger nodes on the asyncio network driver: real sockets, the real clock.

Not a DLedger class: the harness that runs ``DLedgerServer`` nodes (``mqlab.dledger``) on a
``NetDriver`` (``mqlab.runtime.net``), as ``DLedgerGroup`` runs them on the simulation driver.
What a 0.2.3 node does in ``DLedgerServer#startup`` is the same code here; only the driver
differs: each node listens on its own address in ``peers`` (``DLedgerRpcNettyService``
binds ``MemberState#getSelfAddr``), and VOTE, HEART_BEAT, PUSH and the answers are frames of
the remoting protocol on TCP (docs/dledger.md §2).

1. :func:`loopback_peers` binds ``n`` listening sockets on 127.0.0.1 with ports the OS picks
   and builds ``peers`` from them (``n0-127.0.0.1:P0;n1-127.0.0.1:P1;...``); the sockets are
   handed to the nodes, so no other process can take a port in between.
2. :meth:`NetDLedgerNodes.start` starts the nodes of ``peers`` that run in this process
   (``self_ids``; any other peer is another process, a real 4.9.3 broker for instance).
   All are added to the driver before the loop runs any of their timers, so each node's
   first vote (term 0, for itself) comes before it can answer a peer's.
3. :meth:`kill` stops a node without its shutdown (the driver aborts its connections; its
   disk and log stay in memory, as ``DLedgerGroup.kill``); :meth:`restart` starts the same
   node object again on its address.

The owner runs every method on the driver's loop (``LoopThread.submit`` / ``call`` from
other threads).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from mqlab.dledger.dledger_config import DLedgerConfig, parse_peers
from mqlab.dledger.dledger_server import DLedgerServer
from mqlab.dledger.member_state import Role
from mqlab.runtime.net import NetDriver, bind_socket

__all__ = ["NetDLedgerNodes", "loopback_peers", "node_state"]


def loopback_peers(
    n: int, host: str = "127.0.0.1", prefix: str = "n"
) -> tuple[str, dict[str, socket.socket]]:
    """``n`` listening sockets on ``host`` with free ports, and the ``peers`` naming them.

    Returns:
        ``("n0-127.0.0.1:P0;...", {"n0": sock0, ...})``.
    """
    socks: dict[str, socket.socket] = {}
    try:
        for i in range(n):
            socks[f"{prefix}{i}"] = bind_socket(host, 0)
    except OSError:
        for s in socks.values():
            s.close()
        raise
    peers = ";".join(f"{i}-{host}:{s.getsockname()[1]}" for i, s in socks.items())
    return peers, socks


def node_state(server: DLedgerServer) -> dict[str, Any]:
    """A node's role, term, vote, leader, log end and committed index (as
    ``DLedgerGroup.state`` gives them)."""
    ms = server.member_state
    st = server.store
    return {
        "running": server.running, "role": ms.role.value, "term": ms.curr_term,
        "vote_for": ms.curr_vote_for, "leader_id": ms.leader_id,
        "ledger_end_index": st.ledger_end_index, "ledger_end_term": st.ledger_end_term,
        "committed_index": st.committed_index,
    }  # fmt: skip


class NetDLedgerNodes:
    """The nodes of one DLedger group that run in this process, on ``driver``.

    Args:
        driver: the network driver (created on the loop these methods run on).
        config: the group's config; its ``peers`` lists every node, those here and others;
            its ``self_id`` is ignored (each node gets its own).
        self_ids: which peers run here (default: all of them).
        socks: already-bound listening sockets by self id (:func:`loopback_peers`); a node
            without one binds its address from ``peers``.
        on_disk: each node keeps its log in files under ``config.store_base_dir`` and
            recovers from them (``DLedgerServer(on_disk=True)``); a restart builds the node
            again from its files.

    Raises:
        ValueError: a self id that is not among the peers.
    """

    def __init__(
        self,
        driver: NetDriver,
        config: DLedgerConfig,
        self_ids: list[str] | None = None,
        socks: dict[str, socket.socket] | None = None,
        *,
        on_disk: bool = False,
    ) -> None:
        peers = parse_peers(config.peers)
        ids = list(peers) if self_ids is None else list(self_ids)
        unknown = [i for i in ids if i not in peers]
        if unknown:
            raise ValueError(f"self ids {unknown} are not among peers {config.peers!r}")
        self.driver = driver
        self.peers = config.peers
        self.ids = ids
        self._socks = dict(socks or {})
        self.on_disk = on_disk
        self.servers: dict[str, DLedgerServer] = {
            i: DLedgerServer(config.with_(self_id=i), on_disk=on_disk) for i in ids
        }

    # -- 2./3. life cycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Start every node here (step 2)."""
        await asyncio.gather(*(self._add(i) for i in self.ids))

    async def _add(self, node_id: str) -> None:
        await self.driver.add_node(self.servers[node_id], sock=self._socks.pop(node_id, None))

    async def kill(self, node_id: str) -> None:
        """Stop ``node_id`` without its shutdown; its disk and log stay."""
        self.server(node_id)
        await self.driver.remove_node(node_id)

    async def restart(self, node_id: str) -> None:
        """Start a killed node again on its address, disk and log."""
        server = self.server(node_id)
        if server.running:
            raise ValueError(f"{node_id} is running")
        if self.on_disk:  # what was in memory is gone: the node reads its files back
            server.store.close_files()
            server = DLedgerServer(server.config, name=server.name, on_disk=True)
            self.servers[node_id] = server
        await self.driver.add_node(server)

    async def stop(self) -> None:
        """Stop every node here (``DLedgerServer#shutdown``)."""
        for i in reversed(self.ids):
            if i in self.driver.nodes and self.servers[i].running:
                await self.driver.stop_node(i)
            self.servers[i].store.close_files()
        for s in self._socks.values():
            s.close()
        self._socks.clear()

    # -- views ----------------------------------------------------------------------------------
    def server(self, node_id: str) -> DLedgerServer:
        try:
            return self.servers[node_id]
        except KeyError:
            raise ValueError(f"no node {node_id!r} here; nodes: {self.ids}") from None

    def leader(self) -> str | None:
        """The running node here that is LEADER with the highest term, or None."""
        leaders = [
            i for i, s in self.servers.items() if s.running and s.member_state.role == Role.LEADER
        ]
        return max(leaders, key=lambda i: self.servers[i].member_state.curr_term, default=None)

    def state(self) -> dict[str, dict[str, Any]]:
        return {i: node_state(s) for i, s in self.servers.items()}
