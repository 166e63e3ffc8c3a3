"""Helpers for the DLedger tests: one server with a recording RPC, and hand-built logs."""

from __future__ import annotations

from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.dledger_server import DLedgerServer
from mqlab.dledger.member_state import Role
from mqlab.runtime.sim import SimDriver

PEERS3 = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"


class RecordingRpc:
    """Stands in for ``DLedgerRpcService``: records each request with its callback."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object, object]] = []

    def vote(self, request, callback):
        self.sent.append(("vote", request, callback))

    def heart_beat(self, request, callback):
        self.sent.append(("heart_beat", request, callback))

    def push(self, request, callback):
        self.sent.append(("push", request, callback))

    def append(self, request, callback):
        self.sent.append(("append", request, callback))

    def take(self, kind: str) -> list[tuple[object, object]]:
        """The requests of one kind sent so far, removed from the record."""
        out = [(r, cb) for k, r, cb in self.sent if k == kind]
        self.sent = [s for s in self.sent if s[0] != kind]
        return out


def one_server(self_id: str = "n0", *, seed: int = 0, peers: str = PEERS3, **config):
    """A started ``DLedgerServer`` on its own driver with a ``RecordingRpc``; its
    maintainer has not run yet (the driver has not advanced)."""
    driver = SimDriver(seed)
    server = DLedgerServer(DLedgerConfig(self_id=self_id, peers=peers, **config))
    rpc = RecordingRpc()
    server.rpc = rpc
    driver.add_node(server)
    return driver, server, rpc


def build_log(server: DLedgerServer, entries: list[tuple[int, bytes]]) -> None:
    """Give ``server`` a log of ``(term, body)`` entries, each appended as the leader of its
    term, then make it a candidate again (no leader)."""
    ms = server.member_state
    for term, body in entries:
        ms.curr_term = term
        ms.role = Role.LEADER
        server.store.append_as_leader(DLedgerEntry(body=body))
    ms.role = Role.CANDIDATE
    ms.leader_id = None


def steps(trace, component: str, node: str | None = None, **match) -> list[tuple]:
    """``(step, fields)`` of the events of ``component`` whose fields include ``match``."""
    return [
        (e.step, e.fields)
        for e in trace.select(component=component, node=node)
        if all(e.fields.get(k) == v for k, v in match.items())
    ]
