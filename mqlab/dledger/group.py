"""A DLedger group of 3 or 5 nodes on the simulation driver, with its faults.

Builds ``n`` ``DLedgerServer`` nodes ``n0`` ... on one ``SimDriver`` (docs/design.md §1):
``peers`` is ``"n0-127.0.0.1:40911;n1-127.0.0.1:40912;..."``, every node has its own disk, and
every election timeout is drawn from the seed (each node's ``"dledger.vote"`` stream). The
clock, the trace and the faults are the driver's: ``kill`` stops a node without its shutdown
(its disk and log stay), ``restart`` starts it again on them, ``partition`` cuts every link
between a side and the rest (frames already on a connection are lost, so calls time out;
new connections fail), ``heal`` restores them.

This is the harness the tests and a later Lab build on; it adds nothing to the protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_server import DLedgerServer
from mqlab.dledger.member_state import Role
from mqlab.dledger.service_thread import TimeoutFuture
from mqlab.runtime.sim import SimDriver
from mqlab.trace.events import TraceLevel

__all__ = ["DLedgerGroup", "BASE_PORT"]

BASE_PORT = 40911


class DLedgerGroup:
    """``n`` DLedger nodes on one simulation driver. See the module essay.

    Args:
        n: how many nodes (1 or more; DLedger is meant for 3 or 5).
        seed: the driver's seed: election timeouts, everything.
        group: ``DLedgerConfig.group``.
        latency_ms: one-way latency of every link.
        trace_level: the driver's trace level.
        **config: other ``DLedgerConfig`` fields (``heart_beat_time_interval_ms=...``).
    """

    def __init__(
        self,
        n: int = 3,
        *,
        seed: int = 0,
        group: str = "default",
        latency_ms: int = 1,
        trace_level: TraceLevel = TraceLevel.STEPS,
        **config,
    ) -> None:
        if n < 1:
            raise ValueError(f"a DLedger group needs at least one node, got n={n}")
        self.ids = [f"n{i}" for i in range(n)]
        self.peers = ";".join(f"{i}-127.0.0.1:{BASE_PORT + k}" for k, i in enumerate(self.ids))
        self.driver = SimDriver(seed, latency_ms=latency_ms, trace_level=trace_level,
                                run_id=f"dledger-{n}-{seed}")  # fmt: skip
        self.servers: dict[str, DLedgerServer] = {}
        for node_id in self.ids:
            cfg = DLedgerConfig(group=group, self_id=node_id, peers=self.peers, **config)
            server = DLedgerServer(cfg)
            self.servers[node_id] = server
            self.driver.add_node(server)

    # -- the clock ----------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.driver.now

    @property
    def trace(self):
        return self.driver.recorder

    def advance(self, ms: int):
        return self.driver.advance(ms)

    def step(self):
        return self.driver.step()

    def run_until(self, predicate: Callable[[], bool], max_ms: int, slice_ms: int = 10) -> int:
        """Advance in ``slice_ms`` steps until ``predicate()`` holds; return the time.

        Raises:
            TimeoutError: it did not hold within ``max_ms``.
        """
        end = self.now + max_ms
        while not predicate():
            if self.now >= end:
                raise TimeoutError(f"not reached within {max_ms} ms (now {self.now})")
            self.advance(slice_ms)
        return self.now

    # -- views --------------------------------------------------------------------------------
    def server(self, node_id: str) -> DLedgerServer:
        try:
            return self.servers[node_id]
        except KeyError:
            raise ValueError(f"no node {node_id!r}; nodes: {self.ids}") from None

    def running(self) -> list[str]:
        return [i for i in self.ids if self.servers[i].running]

    def leaders(self) -> list[str]:
        """Running nodes whose role is LEADER (two at once only across a partition)."""
        return [i for i in self.running() if self.servers[i].member_state.role == Role.LEADER]

    def leader(self) -> str | None:
        """The leader with the highest term among the running nodes, or None."""
        leaders = self.leaders()
        if not leaders:
            return None
        return max(leaders, key=lambda i: self.servers[i].member_state.curr_term)

    def state(self) -> dict[str, dict]:
        """Each node's role, term, vote, leader, log end and committed index."""
        out = {}
        for i in self.ids:
            s = self.servers[i]
            ms = s.member_state
            out[i] = {
                "running": s.running, "role": ms.role.value, "term": ms.curr_term,
                "vote_for": ms.curr_vote_for, "leader_id": ms.leader_id,
                "ledger_end_index": s.store.ledger_end_index, "ledger_end_term": s.store.ledger_end_term,
                "committed_index": s.store.committed_index,
            }  # fmt: skip
        return out

    def log(self, node_id: str) -> list[tuple[int, int, bytes]]:
        """A node's log as ``(index, term, body)``."""
        return [(e.index, e.term, e.body or b"") for e in self.server(node_id).store.entries()]

    # -- clients ------------------------------------------------------------------------------
    def append(self, body: bytes, node_id: str | None = None) -> TimeoutFuture:
        """Append ``body`` through ``node_id`` (default: the current leader).

        Raises:
            ValueError: there is no leader and no node was named.
        """
        target = node_id or self.leader()
        if target is None:
            raise ValueError("no leader to append to; name a node")
        return self.server(target).append(body)

    # -- faults -------------------------------------------------------------------------------
    def kill(self, node_id: str) -> None:
        """Stop a node without its shutdown (kill -9); its disk and log stay."""
        self.server(node_id)
        self.driver.stop_node(node_id, graceful=False)

    def restart(self, node_id: str) -> None:
        """Start a killed node again on its disk and log."""
        if self.server(node_id).running:
            raise ValueError(f"{node_id} is running")
        self.driver.start_node(node_id)

    def partition(self, side: Iterable[str]) -> None:
        """Cut every link between ``side`` and the other nodes, both directions."""
        a = sorted(set(side))
        for x in a:
            self.server(x)
        b = [i for i in self.ids if i not in a]
        for x in a:
            for y in b:
                self.driver.set_link(x, y, down=True)
                self.driver.set_link(y, x, down=True)

    def heal(self) -> None:
        """Restore every link."""
        for x in self.ids:
            for y in self.ids:
                if x != y and (x, y) in self.driver.links and self.driver.links[(x, y)].down:
                    self.driver.set_link(x, y, down=False)
