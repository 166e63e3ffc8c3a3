"""``python -m mqlab serve`` in DLedger mode: one DLedger node, or a whole group, on loopback.

Issue 26 ("``python -m mqlab serve`` runs a DLedger node or a whole group"). The flags take
4.9.3's keys in spirit: ``--dledger-peers`` (``dLegerPeers``), ``--dledger-self-id``
(``dLegerSelfId``), ``--dledger-group`` (``dLegerGroup``); ``--dledger-nodes N`` builds the
peers of a group run in one process. A client's APPEND (``DLedgerClient#append``: code 50001,
an ``AppendEntryRequest`` as JSON body) to the leader is answered SUCCESS once a majority has
the entry.
"""

import socket

import pytest
from cpp_harness import ServeProc, wait_until

from mqlab.conformance.wire import call_sync
from mqlab.dledger.protocol import AppendEntryRequest, AppendEntryResponse, DLedgerRequestCode
from mqlab.dledger.protocol import DLedgerResponseCode as R
from mqlab.dledger.rpc_body import from_body, to_body
from mqlab.remoting.command import RemotingCommand
from mqlab.serve import ServeConfig, ServerThread, main


def _append(addr: str, group: str, remote_id: str, body: bytes) -> AppendEntryResponse:
    req = RemotingCommand.create_request(
        DLedgerRequestCode.APPEND,
        body=to_body(AppendEntryRequest(group=group, remote_id=remote_id, body=body)),
    )
    return from_body(AppendEntryResponse, call_sync(addr, req).body)


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# -- flags -------------------------------------------------------------------------------------
PEERS = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"dledger_self_id": "n0"}, "--dledger-self-id needs --dledger-peers or --dledger-nodes"),
        ({"dledger_group": "g"}, "--dledger-group needs --dledger-peers or --dledger-nodes"),
        ({"dledger_peers": PEERS, "dledger_nodes": 3},
         "--dledger-peers names the nodes; --dledger-nodes builds them: give one"),
        ({"dledger_nodes": 3, "dledger_self_id": "n0"},
         "--dledger-nodes runs every node here; --dledger-self-id picks one of --dledger-peers"),
        ({"dledger_peers": PEERS, "dledger_self_id": "n9"},
         "--dledger-self-id 'n9' is not among the peers ['n0', 'n1', 'n2']"),
        ({"dledger_peers": "n0=127.0.0.1:40911"},
         "peers entry 'n0=127.0.0.1:40911' is not id-address (peers='n0=127.0.0.1:40911')"),
        ({"dledger_peers": "n0-10.1.2.3:40911", "dledger_self_id": "n0"},
         "n0 would listen on 10.1.2.3:40911, not on --host 127.0.0.1: give it a 127.0.0.1 "
         "address in --dledger-peers (or another --host)"),
        ({"dledger_nodes": 10}, "dledger_nodes must be between 0 and 9, got 10"),
        ({"dledger_nodes": 3, "brokers": 2, "namesrv_addr": "127.0.0.1:9876"},
         "DLedger mode runs DLedger nodes only (no name server, no broker): --brokers, "
         "--namesrv-addr cannot go with it"),
    ],
)  # fmt: skip
def test_dledger_flags_are_checked_before_anything_binds(kw, message):
    with pytest.raises(ValueError) as e:
        ServeConfig(**kw)
    assert str(e.value) == message


def test_cli_refuses_a_self_id_outside_the_peers_exit_2(capsys):
    assert main(["--dledger-peers", PEERS, "--dledger-self-id", "n3"]) == 2
    assert capsys.readouterr().err == (
        "mqlab serve: --dledger-self-id 'n3' is not among the peers ['n0', 'n1', 'n2']\n"
    )


# -- a whole group in one process --------------------------------------------------------------
def test_a_whole_group_in_one_process_elects_and_commits():
    """``--dledger-nodes 3 --dledger-port 0``: three nodes n0..n2 on ports the OS picks, one
    line each; they elect one leader in term 1 (every node's term 1, leader the same), an
    APPEND to it answers SUCCESS at index 0, and index 0 is committed on all three."""
    with ServerThread(ServeConfig(dledger_nodes=3, dledger_port=0, dledger_group="g1")) as srv:
        nodes = srv.call(lambda s: s.dledger)
        peers = nodes.peers
        addrs = {i: s.address for i, s in nodes.servers.items()}
        assert peers == ";".join(f"{i}-{a}" for i, a in addrs.items())
        assert srv.call(lambda s: s.describe()) == [
            f"mqlab serve: dledger group g1 peers {peers}",
            *(f"mqlab serve: dledger node {i} {a} (selfId {i})" for i, a in addrs.items()),
            "mqlab serve: ready (Ctrl-C to stop)",
        ]

        def following() -> str | None:
            st = srv.call(lambda s: s.dledger.state())
            leaders = {s["leader_id"] for s in st.values()}
            return leaders.pop() if len(leaders) == 1 and None not in leaders else None

        wait_until(lambda: following() is not None, 15, "one leader followed by all")
        leader = following()
        st = srv.call(lambda s: s.dledger.state())
        assert sorted((s["role"], s["term"]) for s in st.values()) == [
            ("FOLLOWER", 1), ("FOLLOWER", 1), ("LEADER", 1),
        ]  # fmt: skip
        assert st[leader]["role"] == "LEADER"
        resp = _append(addrs[leader], "g1", leader, b"one")
        assert (resp.code, resp.index, resp.pos, resp.term) == (R.SUCCESS, 0, 0, 1)
        wait_until(
            lambda: all(s["committed_index"] == 0 for s in srv.call(lambda s: s.dledger.state()).values()),
            15, "index 0 committed on every node",
        )  # fmt: skip


# -- one node per process -----------------------------------------------------------------------
def test_three_serve_processes_one_node_each_form_a_group(tmp_path):
    """Three ``serve --dledger-peers P --dledger-self-id nI`` processes: each prints its line
    and ready; an APPEND to a follower answers NOT_LEADER with the leader's id, to the leader
    SUCCESS at index 0 then 1; SIGTERM stops each with exit 0 and "mqlab serve: stopped"."""
    ports = _free_ports(3)
    peers = ";".join(f"n{i}-127.0.0.1:{p}" for i, p in enumerate(ports))
    procs = []
    try:
        for i in range(3):
            procs.append(ServeProc(tmp_path, "--dledger-peers", peers, "--dledger-self-id",
                                   f"n{i}", "--dledger-group", "g2"))  # fmt: skip
        for i, proc in enumerate(procs):
            assert proc.lines == [
                f"mqlab serve: dledger group g2 peers {peers}",
                f"mqlab serve: dledger node n{i} 127.0.0.1:{ports[i]} (selfId n{i})",
                "mqlab serve: ready (Ctrl-C to stop)",
            ]
        seen: list[AppendEntryResponse] = []

        def named() -> bool:
            seen.append(_append(f"127.0.0.1:{ports[0]}", "g2", "n0", b"probe"))
            return seen[-1].code == R.SUCCESS or seen[-1].leader_id is not None

        wait_until(named, 20, "n0 naming a leader")
        if seen[-1].code == R.SUCCESS:  # n0 leads: its probe is entry 0
            leader, first = "n0", seen[-1]
        else:
            assert seen[-1].code == R.NOT_LEADER
            leader = seen[-1].leader_id
            first = _append(f"127.0.0.1:{ports[int(leader[1:])]}", "g2", leader, b"probe")
        assert (first.code, first.index, first.leader_id) == (R.SUCCESS, 0, leader)
        second = _append(f"127.0.0.1:{ports[int(leader[1:])]}", "g2", leader, b"second")
        assert (second.code, second.index, second.pos) == (R.SUCCESS, 1, 48 + 5)
        for proc in procs:
            rc, out, err = proc.terminate()
            assert rc == 0, err
            assert out.splitlines() == ["mqlab serve: stopped"]
    finally:
        for proc in procs:
            proc.kill()


# -- the log on disk ------------------------------------------------------------------------------
def test_a_killed_serve_process_comes_back_with_its_nodes_logs(tmp_path):
    """``serve --dledger-peers P --store S`` (three nodes in one process); entries 0..2
    appended ("e0", "e1", "e2": positions 0, 50, 100); the process killed with SIGKILL (no
    shutdown), then started again on the same store: each node reads its files back
    (``S/dledger-nI/data`` and ``index``), so the group's next entry is index 3 at position
    150, and every node's data file is the four entries' bytes, the first three as before."""
    ports = _free_ports(3)
    peers = ";".join(f"n{i}-127.0.0.1:{p}" for i, p in enumerate(ports))
    data = [tmp_path / "s" / f"dledger-n{i}" / "data" / ("0" * 20) for i in range(3)]

    def start() -> ServeProc:
        return ServeProc(tmp_path, "--dledger-peers", peers, "--dledger-group", "g4",
                         "--store", str(tmp_path / "s"))  # fmt: skip

    def append(body: bytes) -> AppendEntryResponse:
        seen: list[AppendEntryResponse] = []

        def appended() -> bool:
            for i, p in enumerate(ports):
                resp = _append(f"127.0.0.1:{p}", "g4", f"n{i}", body)
                if resp.code == R.SUCCESS:
                    seen.append(resp)
                    return True
            return False

        wait_until(appended, 30, f"a leader appending {body!r}")
        return seen[-1]

    proc = start()
    try:
        got = [append(b"e%d" % k) for k in range(3)]
        assert [(r.index, r.pos) for r in got] == [(0, 0), (1, 50), (2, 100)]
        wait_until(lambda: all(len(f.read_bytes()) == 150 for f in data), 15,
                   "entries 0..2 in every node's data file")  # fmt: skip
        before = [f.read_bytes() for f in data]
        proc.kill_group()
        proc = start()
        fourth = append(b"e3")
        assert (fourth.index, fourth.pos) == (3, 150)
        wait_until(lambda: all(len(f.read_bytes()) == 200 for f in data), 15,
                   "entry 3 in every node's data file")  # fmt: skip
        assert all(f.read_bytes()[:150] == b for f, b in zip(data, before, strict=True))
        rc, out, err = proc.terminate()
        assert (rc, out.splitlines()) == (0, ["mqlab serve: stopped"]), err
    finally:
        proc.kill()
