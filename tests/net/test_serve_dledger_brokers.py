"""``python -m mqlab serve --dledger-brokers N``: a name server and a DLedger broker group.

Issue 26 item 3 (a whole DLedger broker group from ``serve``). N brokers of one brokerName on
``DLedgerCommitLog``, node ``i`` with 4.9.3's keys ``enableDLegerCommitLog=true``,
``dLegerGroup=<brokerName>``, ``dLegerPeers=n0-...;n1-...``, ``dLegerSelfId=n<i>``. The elected
leader's broker registers as brokerId 0, follower ``n<i>`` as ``i + 1`` (``DLedgerCommitLog``'s
id); a follower refuses a send (14, SERVICE_NOT_AVAILABLE, as a 4.9.3 slave); after the
leader is killed another node leads, its broker becomes brokerId 0 and has every message
acknowledged before.
"""

import pytest
from cpp_harness import wait_until

from mqlab.conformance.wire import broker_addr_table, send_v2
from mqlab.serve import ServeConfig, ServerThread, main

SLAVE_REMARK = (
    "service not available now. It may be caused by one of the following reasons: the broker's "
    "disk is full [CL:  0.00 CQ:  0.00 INDEX:  0.00], messages are put to the slave, message "
    "store has been shut down, etc."
)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"dledger_brokers": 10}, "dledger_brokers must be between 0 and 9, got 10"),
        ({"dledger_brokers": 3, "slaves": 1, "broker_role": "SYNC_MASTER"},
         "--dledger-brokers runs one brokerName whose master DLedger elects (brokerId 0 for the "
         "leader, i + 1 for follower n<i>): --slaves, --broker-role cannot go with it"),
        ({"dledger_brokers": 3, "brokers": 2},
         "--dledger-brokers runs one brokerName whose master DLedger elects (brokerId 0 for the "
         "leader, i + 1 for follower n<i>): --brokers cannot go with it"),
    ],
)  # fmt: skip
def test_dledger_broker_flags_are_checked_before_anything_binds(kw, message):
    with pytest.raises(ValueError) as e:
        ServeConfig(**kw)
    assert str(e.value) == message


def test_cli_refuses_ten_dledger_brokers_exit_2(capsys):
    assert main(["--dledger-brokers", "10"]) == 2
    assert (
        capsys.readouterr().err == "mqlab serve: dledger_brokers must be between 0 and 9, got 10\n"
    )


def _broker_addrs(namesrv: str, name: str = "broker-a") -> dict[int, str]:
    return broker_addr_table(namesrv, name)


def _leader(srv: ServerThread) -> str | None:
    leaders = srv.call(lambda s: [n for n, d in s.dledger_servers.items()
                                  if d.running and d.member_state.role.value == "LEADER"])  # fmt: skip
    return leaders[0] if len(leaders) == 1 else None


def test_a_dledger_broker_group_registers_its_leader_as_master_and_fails_over(tmp_path):
    """``--dledger-brokers 3``: one line per node; the name server lists the leader's broker at
    brokerId 0 and follower n<i>'s at i + 1; a send to the master is SEND_OK at queue offset 0,
    to a follower 14; the master killed (no shutdown), a new leader's broker is brokerId 0, the
    dead one is gone, and a send to queue 0 is SEND_OK at queue offset 1 (it has message 0)."""
    cfg = ServeConfig(namesrv_port=0, broker_port=0, dledger_port=0, dledger_brokers=3,
                      store=str(tmp_path))  # fmt: skip
    with ServerThread(cfg) as srv:
        nodes = srv.call(lambda s: {b.name: (b.broker_addr, s.dledger_servers[b.name].address)
                                    for b in s.brokers})  # fmt: skip
        assert list(nodes) == ["broker-a-n0", "broker-a-n1", "broker-a-n2"]
        peers = ";".join(f"n{i}-{d}" for i, (_, d) in enumerate(nodes.values()))
        assert srv.call(lambda s: [(b.message_store_config.d_leger_group,
                                    b.message_store_config.d_leger_peers,
                                    b.message_store_config.d_leger_self_id) for b in s.brokers]) == [
            ("broker-a", peers, f"n{i}") for i in range(3)
        ]  # fmt: skip
        assert srv.call(lambda s: s.describe()) == [
            f"mqlab serve: name server {srv.namesrv_addr}",
            *(f"mqlab serve: {n} {b} DLedger n{i} {d} (group broker-a; brokerId 0 once it "
              f"leads) store {tmp_path / n}" for i, (n, (b, d)) in enumerate(nodes.items())),
            "mqlab serve: ready (Ctrl-C to stop)",
        ]  # fmt: skip

        def expected() -> dict[int, str]:
            leader = _leader(srv)
            if leader is None:
                return {-1: "no leader"}
            return {0 if n == leader else i + 1: b
                    for i, (n, (b, _)) in enumerate(nodes.items())
                    if srv.call(lambda s, n=n: s.broker(n).running)}  # fmt: skip

        wait_until(lambda: _broker_addrs(srv.namesrv_addr) == expected(), 20,
                   "the leader at brokerId 0, follower n<i> at i + 1")  # fmt: skip
        leader = _leader(srv)
        master = nodes[leader][0]
        r = send_v2(master, "DlTopic", b"m0", group="pg", queue_id=0)
        assert (r.code, r.ext_fields["queueId"], r.ext_fields["queueOffset"]) == (0, "0", "0")
        follower = next(b for n, (b, _) in nodes.items() if n != leader)
        r = send_v2(follower, "DlTopic", b"refused", group="pg", queue_id=0)
        assert (r.code, r.remark) == (14, SLAVE_REMARK)

        srv.submit(srv.server.stop_broker(leader, graceful=False))
        wait_until(lambda: _leader(srv) not in (None, leader), 20, "another leader")
        wait_until(lambda: _broker_addrs(srv.namesrv_addr) == expected(), 20,
                   "the new leader at brokerId 0, the killed node gone")  # fmt: skip
        table = _broker_addrs(srv.namesrv_addr)
        assert len(table) == 2 and master not in table.values()
        new_master = table[0]
        assert new_master == nodes[_leader(srv)][0]

        def sent() -> bool:
            r = send_v2(new_master, "DlTopic", b"m1", group="pg", queue_id=0)
            got.append(r)
            return r.code == 0

        got: list = []
        wait_until(sent, 20, "a SEND_OK from the new master")
        r = got[-1]
        assert (r.ext_fields["queueId"], r.ext_fields["queueOffset"]) == ("0", "1")
        # the old leader restarted on its files: it follows, and has both messages
        srv.submit(srv.server.restart_broker(leader))
        wait_until(lambda: srv.call(lambda s: [e.body for e in s.dledger_servers[leader].store.entries()
                                               if s.dledger_servers[leader].store.committed_index == 1]) != [],
                   20, "the restarted node has entry 1 committed")  # fmt: skip
        assert srv.call(lambda s: s.dledger_servers[leader].member_state.role.value) == "FOLLOWER"


def test_a_config_with_enable_dleger_commit_log_runs_that_one_node(tmp_path):
    """``--config`` with 4.9.3's keys and a one-node dLegerPeers: the node leads alone and its
    broker registers as brokerId 0 of dLegerGroup's brokerName."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    conf = tmp_path / "broker-n0.conf"
    conf.write_text(
        "brokerClusterName=RaftCluster\nbrokerName=RaftNode00\nenableDLegerCommitLog=true\n"
        f"dLegerGroup=RaftNode00\ndLegerPeers=n0-127.0.0.1:{port}\ndLegerSelfId=n0\n"
    )
    cfg = ServeConfig(namesrv_port=0, broker_port=0, config=str(conf), store=str(tmp_path / "s"))
    with ServerThread(cfg) as srv:
        addr = srv.call(lambda s: s.brokers[0].broker_addr)
        assert srv.call(lambda s: s.dledger_servers["RaftNode00"].address) == f"127.0.0.1:{port}"
        wait_until(lambda: _broker_addrs(srv.namesrv_addr, "RaftNode00") == {0: addr}, 20,
                   "the one node's broker at brokerId 0")  # fmt: skip
        r = send_v2(addr, "DlTopic", b"m0", group="pg", queue_id=0)
        assert (r.code, r.ext_fields["queueOffset"]) == (0, "0")


def test_the_cli_runs_a_dledger_broker_group_and_stops_on_sigterm(tmp_path):
    """``python -m mqlab serve --dledger-brokers 3`` in a process: a name server line, one line
    per node (broker ports 10 apart, DLedger ports 1 apart), ready; the name server lists the
    three brokers (one at brokerId 0); SIGTERM stops it with exit 0."""
    from cpp_harness import ServeProc

    from mqlab.conformance.real_cluster import free_port

    # the three brokers' ports (broker, +10, +20) and each one's HA port (+1): a free run of 22
    broker = free_port(22)
    ns = next(p for p in iter(free_port, None) if not broker <= p < broker + 22)
    proc = ServeProc(tmp_path, "--namesrv-port", str(ns), "--broker-port", str(broker),
                     "--dledger-port", "0", "--dledger-brokers", "3", "--store", str(tmp_path / "s"))  # fmt: skip
    try:
        assert proc.lines[0] == f"mqlab serve: name server 127.0.0.1:{ns}"
        assert [x.split()[2:5] for x in proc.lines[1:4]] == [
            [f"broker-a-n{i}", f"127.0.0.1:{broker + 10 * i}", "DLedger"] for i in range(3)
        ]
        assert proc.lines[4] == "mqlab serve: ready (Ctrl-C to stop)"
        addrs = {f"127.0.0.1:{broker + 10 * i}" for i in range(3)}
        wait_until(lambda: set(_broker_addrs(f"127.0.0.1:{ns}").values()) == addrs
                   and 0 in _broker_addrs(f"127.0.0.1:{ns}"), 20, "the three brokers listed")  # fmt: skip
        rc, out, err = proc.terminate()
        assert rc == 0, err
        assert out.splitlines() == ["mqlab serve: stopped"]
    finally:
        proc.kill()


def test_a_killed_node_restarts_with_its_log_from_its_files(tmp_path):
    """``--dledger-brokers 3``, 5 messages committed on every node; a follower killed (no
    shutdown) and restarted: the new DLedgerServer reads 0.2.3's files back
    (``<store>/<node>/dledger-n<i>/data`` and ``index``): ledgerEndIndex 4 and every entry's
    bytes as before the kill; it follows again, its broker at brokerId i + 1, and its
    consume queue serves the 5 messages."""
    cfg = ServeConfig(namesrv_port=0, broker_port=0, dledger_port=0, dledger_brokers=3,
                      store=str(tmp_path))  # fmt: skip
    with ServerThread(cfg) as srv:
        wait_until(lambda: _leader(srv) is not None and 0 in _broker_addrs(srv.namesrv_addr), 20,
                   "a master")  # fmt: skip
        leader = _leader(srv)
        master = srv.call(lambda s: s.broker(leader).broker_addr)
        for k in range(5):
            r = send_v2(master, "DlTopic", b"m%d" % k, group="pg", queue_id=0)
            assert (r.code, r.ext_fields["queueOffset"]) == (0, str(k))
        node = next(f"broker-a-n{i}" for i in range(3) if f"broker-a-n{i}" != leader)
        i = int(node[-1])

        def committed() -> list[int]:
            return srv.call(lambda s: [d.store.committed_index for d in s.dledger_servers.values()])

        wait_until(lambda: committed() == [4, 4, 4], 20, "entry 4 committed on every node")

        def log(s) -> tuple[int, list[bytes]]:
            store = s.dledger_servers[node].store
            return store.ledger_end_index, [bytes(store.data[e.pos : e.pos + e.size])
                                            for e in store.entries()]  # fmt: skip

        srv.submit(srv.server.stop_broker(node, graceful=False))
        before = srv.call(log)
        assert before[0] == 4 and len(before[1]) == 5
        data_file = tmp_path / node / f"dledger-n{i}" / "data" / ("0" * 20)
        assert data_file.read_bytes() == b"".join(before[1])
        srv.submit(srv.server.restart_broker(node))
        assert srv.call(log) == before
        wait_until(lambda: srv.call(lambda s: s.dledger_servers[node].member_state.role.value)
                   == "FOLLOWER" and _broker_addrs(srv.namesrv_addr).get(i + 1)
                   == srv.call(lambda s: s.broker(node).broker_addr), 20,
                   "the restarted node following, its broker at brokerId i + 1")  # fmt: skip
        wait_until(lambda: committed() == [4, 4, 4], 20, "the restarted node learns the commit")
        assert srv.call(log) == before
        wait_until(lambda: srv.call(lambda s: s.broker(node).message_store.get_max_offset_in_queue(
            "DlTopic", 0)) == 5, 20, "its consume queue rebuilt")  # fmt: skip


def test_a_brokers_store_restarted_with_enable_dleger_commit_log_keeps_its_messages(tmp_path):
    """4.9.3's upgrade path on one machine: ``serve --config`` of a plain broker takes two
    messages and stops; the same store restarted with the DLedger keys added (a one-node
    group) serves both old messages at their offsets, and the next send goes after the old
    commit log's file (``dividedCommitlogOffset``: 4096 + 48), at queue offset 2."""
    import socket

    from mqlab.common.message_decoder import decodes
    from mqlab.conformance.wire import call_sync
    from mqlab.remoting.codes import RequestCode
    from mqlab.remoting.command import RemotingCommand

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    plain = "brokerClusterName=RaftCluster\nbrokerName=RaftNode00\nmappedFileSizeCommitLog=4096\n"
    conf = tmp_path / "broker.conf"
    store = str(tmp_path / "s")

    def offsets(addr: str, body: bytes) -> tuple[int, str]:
        r = send_v2(addr, "UpTopic", body, group="pg", queue_id=0)
        assert r.code == 0, r
        return int(r.ext_fields["msgId"][-16:], 16), r.ext_fields["queueOffset"]

    conf.write_text(plain)
    with ServerThread(ServeConfig(namesrv_port=0, broker_port=0, config=str(conf),
                                  store=store)) as srv:  # fmt: skip
        addr = srv.call(lambda s: s.brokers[0].broker_addr)
        assert [offsets(addr, b"old-%d" % i) for i in range(2)] == [(0, "0"), (122, "1")]
    conf.write_text(plain + "enableDLegerCommitLog=true\ndLegerGroup=RaftNode00\n"
                    f"dLegerPeers=n0-127.0.0.1:{port}\ndLegerSelfId=n0\n")  # fmt: skip
    with ServerThread(ServeConfig(namesrv_port=0, broker_port=0, config=str(conf),
                                  store=store)) as srv:  # fmt: skip
        addr = srv.call(lambda s: s.brokers[0].broker_addr)
        wait_until(lambda: _broker_addrs(srv.namesrv_addr, "RaftNode00") == {0: addr}, 20,
                   "the one node's broker at brokerId 0")  # fmt: skip
        assert offsets(addr, b"new") == (4096 + 48, "2")

        def max_offset() -> str:
            q = {"topic": "UpTopic", "queueId": "0"}
            r = call_sync(addr, RemotingCommand.create_request(RequestCode.GET_MAX_OFFSET, q))
            return r.ext_fields["offset"]

        # the reput dispatches the committed entry on its own thread, as 4.9.3's does
        wait_until(lambda: max_offset() == "3", 10, "the new message in the consume queue")
        pull = RemotingCommand.create_request(RequestCode.PULL_MESSAGE, {
            "consumerGroup": "cg", "topic": "UpTopic", "queueId": "0", "queueOffset": "0",
            "maxMsgNums": "32", "sysFlag": "4", "commitOffset": "0", "suspendTimeoutMillis": "0",
            "subscription": "*", "subVersion": "0", "expressionType": "TAG",
        })  # fmt: skip
        r = call_sync(addr, pull)
        assert (r.code, r.remark) == (0, "FOUND"), r
        got = [(m.body, m.commit_log_offset, m.queue_offset) for m in decodes(r.body)]
        assert got == [(b"old-0", 0, 0), (b"old-1", 122, 1), (b"new", 4096 + 48, 2)]
