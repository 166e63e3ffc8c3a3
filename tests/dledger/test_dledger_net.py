"""Three DLedger nodes on the network driver: an election, appends and commits over TCP.

The nodes are ``mqlab.dledger.net_group.NetDLedgerNodes`` on a ``NetDriver`` in a
``LoopThread``, each listening on its own 127.0.0.1 port; a client sends DLedger's APPEND
request (code 50001, an ``AppendEntryRequest`` as fastjson body, as ``DLedgerClient#append``
sends it) on its own connection, as any process would.

Which node wins is fixed by the driver's seed: every node votes for itself in term 0 (a
split, each answer REJECT_ALREADY_VOTED), then waits ``300 + random(700)`` ms drawn from its
``"dledger.vote"`` stream (``DLedgerLeaderElector#getNextTimeToRequestVote``). With seed 5
``n1`` waits 339 ms and the others 877 and 912 ms, so ``n1`` asks first in term 1 and wins;
the gap (over half a second) is what makes it certain on a real clock.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mqlab.conformance.wire import call_sync, wait_until
from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_entry import BODY_OFFSET
from mqlab.dledger.net_group import NetDLedgerNodes, loopback_peers
from mqlab.dledger.protocol import AppendEntryRequest, AppendEntryResponse, DLedgerRequestCode
from mqlab.dledger.protocol import DLedgerResponseCode as R
from mqlab.dledger.rpc_body import from_body, to_body
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.net import LoopThread, NetDriver

SEED = 5
GROUP = "g0"


class Live:
    """The nodes and their loop, for the test's thread."""

    def __init__(self, **config) -> None:
        self.loop = LoopThread("dledger-net-test")
        peers, socks = loopback_peers(3)
        self.addrs = {i: f"127.0.0.1:{s.getsockname()[1]}" for i, s in socks.items()}

        async def start() -> NetDLedgerNodes:
            self.driver = NetDriver(seed=SEED, run_id="dledger-net")
            nodes = NetDLedgerNodes(self.driver, DLedgerConfig(group=GROUP, peers=peers, **config),
                                    socks=socks)  # fmt: skip
            await nodes.start()
            return nodes

        self.nodes: NetDLedgerNodes = self.loop.submit(start())

    def call(self, fn):
        return self.loop.call(lambda: fn(self.nodes))

    def state(self) -> dict[str, dict]:
        return self.call(lambda g: g.state())

    def close(self) -> None:
        try:
            self.loop.submit(self.nodes.stop())
        finally:
            self.loop.close()


@pytest.fixture
def live() -> Iterator[Live]:
    lv = Live()
    try:
        yield lv
    finally:
        errors = list(lv.driver.errors)
        lv.close()
    assert errors == []


def append(addr: str, remote_id: str, body: bytes) -> tuple[RemotingCommand, AppendEntryResponse]:
    """One APPEND as ``DLedgerClientRpcNettyService#append`` sends it: a request without a
    custom header, the request as its JSON body; the frame and the parsed answer."""
    req = RemotingCommand.create_request(
        DLedgerRequestCode.APPEND,
        body=to_body(AppendEntryRequest(group=GROUP, remote_id=remote_id, body=body)),
    )
    resp = call_sync(addr, req)
    return resp, from_body(AppendEntryResponse, resp.body)


def test_three_nodes_elect_append_and_commit_over_tcp(live: Live) -> None:
    """n1 leads term 1 with a quorum of votes, and the followers follow it; three APPENDs to n1 answer
    SUCCESS with index 0, 1, 2 at positions 0, 53, 109; each node holds the same three
    entries of term 1, byte for byte, and has committed index 2. An APPEND to a follower
    answers NOT_LEADER naming n1."""
    wait_until(lambda: all(s["leader_id"] == "n1" for s in live.state().values()), 15,
               "every node following n1")  # fmt: skip
    st = live.state()
    assert {i: (s["role"], s["term"]) for i, s in st.items()} == {
        "n0": ("FOLLOWER", 1), "n1": ("LEADER", 1), "n2": ("FOLLOWER", 1),
    }  # fmt: skip
    # n1 won with its own vote and at least one follower's; a follower whose vote request
    # came after the first heartbeat (under load) follows without having voted in term 1
    votes = {i: s["vote_for"] for i, s in st.items()}
    assert votes["n1"] == "n1" and set(votes.values()) <= {"n1", None}, votes
    assert sum(v == "n1" for v in votes.values()) >= 2, votes

    bodies = [b"hello", b"dledger!", b"over tcp"]
    answers = []
    for body in bodies:
        frame, resp = append(live.addrs["n1"], "n1", body)
        assert (frame.code, frame.ext_fields) == (R.SUCCESS, None)
        answers.append((resp.code, resp.term, resp.leader_id, resp.index, resp.pos))
    assert answers == [
        (R.SUCCESS, 1, "n1", 0, 0),
        (R.SUCCESS, 1, "n1", 1, BODY_OFFSET + 5),
        (R.SUCCESS, 1, "n1", 2, 2 * BODY_OFFSET + 5 + 8),
    ]

    wait_until(lambda: all(s["committed_index"] == 2 for s in live.state().values()), 15,
               "index 2 committed on every node")  # fmt: skip
    logs = live.call(
        lambda g: {i: [(e.index, e.term, e.pos, e.body) for e in s.store.entries()]
                   for i, s in g.servers.items()}
    )  # fmt: skip
    want = [(0, 1, 0, b"hello"), (1, 1, 53, b"dledger!"), (2, 1, 109, b"over tcp")]
    assert logs == {"n0": want, "n1": want, "n2": want}
    data = live.call(lambda g: {i: bytes(s.store.data) for i, s in g.servers.items()})
    assert len(data["n1"]) == 3 * BODY_OFFSET + 5 + 8 + 8
    assert data["n0"] == data["n1"] == data["n2"]
    st = live.state()
    assert {i: (s["ledger_end_index"], s["ledger_end_term"]) for i, s in st.items()} == {
        "n0": (2, 1), "n1": (2, 1), "n2": (2, 1),
    }  # fmt: skip

    _, refused = append(live.addrs["n0"], "n0", b"to a follower")
    assert (refused.code, refused.leader_id, refused.index) == (R.NOT_LEADER, "n1", -1)


def test_leader_killed_the_others_elect_and_the_restarted_node_catches_up() -> None:
    """With heartbeats every 200 ms (a follower gives up after 3 missed: 600 ms), the leader
    n1 is killed after 2 committed entries: n0 or n2 leads a later term, its log holds both
    entries, an APPEND to it answers SUCCESS at index 2; n1 restarted on its log rejoins as
    a follower of the new term and ends with the same 3 entries, committed."""
    live = Live(heart_beat_time_interval_ms=200)
    try:
        wait_until(lambda: all(s["leader_id"] == "n1" for s in live.state().values()), 15,
                   "every node following n1")  # fmt: skip
        for body in (b"one", b"two"):
            assert append(live.addrs["n1"], "n1", body)[1].code == R.SUCCESS
        wait_until(lambda: all(s["committed_index"] == 1 for s in live.state().values()), 15,
                   "index 1 committed on every node")  # fmt: skip
        live.loop.submit(live.nodes.kill("n1"))

        def new_leader() -> str | None:
            st = live.state()
            leaders = [i for i in ("n0", "n2") if st[i]["role"] == "LEADER"]
            return leaders[0] if leaders else None

        wait_until(lambda: new_leader() is not None, 15, "a new leader")
        leader = new_leader()
        term = live.state()[leader]["term"]
        assert term >= 2
        _, resp = append(live.addrs[leader], leader, b"three")
        assert (resp.code, resp.index, resp.term, resp.pos) == (R.SUCCESS, 2, term, 2 * 48 + 6)
        live.loop.submit(live.nodes.restart("n1"))
        wait_until(lambda: all(s["committed_index"] == 2 for s in live.state().values()), 15,
                   "index 2 committed on every node, n1 too")  # fmt: skip
        st = live.state()
        assert (st["n1"]["role"], st["n1"]["term"], st["n1"]["leader_id"]) == (
            "FOLLOWER", term, leader,
        )  # fmt: skip
        logs = live.call(
            lambda g: {i: [(e.index, e.term, e.body) for e in s.store.entries()]
                       for i, s in g.servers.items()}
        )  # fmt: skip
        want = [(0, 1, b"one"), (1, 1, b"two"), (2, term, b"three")]
        assert logs == {"n0": want, "n1": want, "n2": want}
        assert live.driver.errors == []
    finally:
        live.close()
