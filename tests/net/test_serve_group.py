"""``python -m mqlab serve`` with broker groups: a master and its slaves on loopback.

Issue 24, item 4 ("``python -m mqlab serve`` runs a master, a slave, or a whole group");
mechanisms.md "HA replication" and "The slave as a broker". A group's slaves register with
the name server serve runs, learn their master's HA address from the registration result,
and replicate its commit log byte for byte; a SYNC_MASTER answers SEND_OK once a slave has
it; a slave refuses sends as 4.9.3's does.
"""

import signal

import pytest
from cpp_harness import ServeProc, wait_until

from mqlab.conformance.wire import broker_addr_table, call_sync
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.serve import MqlabServer, ServeConfig, ServerThread, main

#: SEND_MESSAGE_V2's short header fields (SendMessageRequestHeaderV2): one message of 127
#: stored bytes to TopicTest queue 0, auto-created from TBW102 (as tests/net/test_net_ha.py).
SEND_EXT = {
    "a": "PG", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "0", "f": "0",
    "g": "0", "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false",
}  # fmt: skip
STORED_SIZE = 127
#: SendMessageProcessor's remark for PutMessageStatus.SERVICE_NOT_AVAILABLE (4.9.3), which a
#: SLAVE store answers to every put (DefaultMessageStore#checkStoreStatus).
SLAVE_REMARK = (
    "service not available now. It may be caused by one of the following reasons: the "
    "broker's disk is full [CL:  0.00 CQ:  0.00 INDEX:  0.00], messages are put to the "
    "slave, message store has been shut down, etc."
)


def _send(addr: str, body: bytes) -> RemotingCommand:
    req = RemotingCommand.create_request(RequestCode.SEND_MESSAGE_V2, dict(SEND_EXT), body)
    return call_sync(addr, req)


def _commit_log(store) -> bytes:
    return b"".join(
        bytes(mf.mm[: mf.wrote_position]) for mf in store.commit_log.mapped_file_queue.mapped_files
    )


def _connected(server: ServerThread, master: str, n: int) -> None:
    """Wait until ``master``'s HA service has ``n`` connections that have reported."""

    def ready(srv):
        conns = srv.broker(master).message_store.ha_service.connection_list
        return len(conns) == n and all(c.slave_request_offset >= 0 for c in conns)

    wait_until(lambda: server.call(ready), 20, f"{n} slaves connected to {master}'s HA port")


# -- flags -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"broker_role": "SLAVE", "broker_id": 0}, "a SLAVE's brokerId must be > 0"),
        ({"broker_role": "SYNC_MASTER", "broker_id": 1}, "a master's brokerId is 0"),
        ({"broker_role": "MASTER"}, "broker_role must be one of"),
        ({"slaves": 3}, "slaves must be between 0 and 2, got 3"),
        ({"slaves": 1, "broker_role": "SLAVE"}, "not SLAVE"),
        ({"slaves": 1, "broker_id": 1}, "leave --broker-id out"),
        ({"slaves": 1, "ha_master_address": "127.0.0.1:10912"}, "learn their master's HA"),
        ({"broker_role": "SYNC_MASTER", "ha_master_address": "127.0.0.1:10912"}, "has none"),
        ({"broker_role": "SLAVE", "broker_id": 1, "ha_master_address": "10912"}, "host:port"),
        ({"broker_role": "SLAVE", "broker_id": 1, "brokers": 2,
          "ha_master_address": "127.0.0.1:10912"}, "names one master"),
        ({"namesrv_addr": "localhost"}, "namesrv_addr must be host:port"),
    ],
)  # fmt: skip
def test_bad_role_and_group_flags_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        ServeConfig(**kw)


def test_cli_bad_flag_combos_exit_2_or_1_with_the_reason(tmp_path, capsys):
    """On the command line: a SLAVE with brokerId 0 exits 2 before anything binds; a SLAVE
    without a brokerId (the config's 0) exits 1, as 4.9.3's BrokerStartup exits."""
    base = ["--namesrv-port", "0", "--broker-port", "0", "--store", str(tmp_path / "s")]
    assert main([*base, "--broker-role", "SLAVE", "--broker-id", "0"]) == 2
    assert "a SLAVE's brokerId must be > 0" in capsys.readouterr().err
    assert main([*base, "--broker-role", "SLAVE"]) == 1
    assert (
        "broker-a: a SLAVE's brokerId must be > 0 (BrokerStartup: \"Slave's brokerId must be "
        '> 0"), got 0' in capsys.readouterr().err
    )
    assert main([*base, "--ha-master-address", "127.0.0.1:10912"]) == 1
    assert "broker-a's brokerRole is ASYNC_MASTER" in capsys.readouterr().err
    cfg = tmp_path / "broker.properties"
    cfg.write_text("brokerRole=SYNC_MASTER\nbrokerId=1\n")
    assert main([*base, "--config", str(cfg)]) == 1
    assert "brokerId=1 with brokerRole=SYNC_MASTER" in capsys.readouterr().err
    assert not (tmp_path / "s" / "broker-a").exists()  # nothing started


def test_group_layout_ports_ids_roles_and_store_dirs(tmp_path):
    """--brokers 2 --slaves 2 --broker-role SYNC_MASTER: per broker name a master (brokerId 0)
    and slaves 1 and 2 on the master's port + 1000 and + 2000, each with its own store."""
    srv = MqlabServer(
        ServeConfig(brokers=2, slaves=2, broker_role="SYNC_MASTER", store=str(tmp_path / "s"))
    )
    got = [
        (node, b.broker_name, b.broker_id, b.broker_addr, b.broker_ip2, str(s.broker_role),
         s.store_path_root_dir, s.ha_master_address)
        for node, b, s in srv._broker_configs()
    ]  # fmt: skip
    s = tmp_path / "s"
    assert got == [
        ("broker-a", "broker-a", 0, "127.0.0.1:10911", "127.0.0.1", "SYNC_MASTER",
         str(s / "broker-a"), None),
        ("broker-a-s1", "broker-a", 1, "127.0.0.1:11911", "127.0.0.1", "SLAVE",
         str(s / "broker-a-s1"), None),
        ("broker-a-s2", "broker-a", 2, "127.0.0.1:12911", "127.0.0.1", "SLAVE",
         str(s / "broker-a-s2"), None),
        ("broker-b", "broker-b", 0, "127.0.0.1:10921", "127.0.0.1", "SYNC_MASTER",
         str(s / "broker-b"), None),
        ("broker-b-s1", "broker-b", 1, "127.0.0.1:11921", "127.0.0.1", "SLAVE",
         str(s / "broker-b-s1"), None),
        ("broker-b-s2", "broker-b", 2, "127.0.0.1:12921", "127.0.0.1", "SLAVE",
         str(s / "broker-b-s2"), None),
    ]  # fmt: skip
    lone = MqlabServer(ServeConfig(broker_role="SLAVE", broker_id=1, store=str(tmp_path / "l"),
                                   ha_master_address="127.0.0.1:10912"))  # fmt: skip
    [(node, b, sc)] = lone._broker_configs()
    assert (node, b.broker_id, b.broker_addr, str(sc.broker_role), sc.ha_master_address) == (
        "broker-a-s1",
        1,
        "127.0.0.1:10911",
        "SLAVE",
        "127.0.0.1:10912",
    )
    assert sc.store_path_root_dir == str(tmp_path / "l" / "broker-a-s1")


# -- live ------------------------------------------------------------------------------------
def test_sync_master_group_replicates_and_the_slave_refuses_sends(live):
    """--slaves 1 --broker-role SYNC_MASTER: the slave registers, learns the master's HA
    address from the registration, and connects; three sends to the master answer SEND_OK
    (SUCCESS) once the slave has them, the slave's commit log is the master's byte for
    byte (3 * 127 bytes), and a send to the slave answers 14 with 4.9.3's remark."""
    server = live(slaves=1, broker_role="SYNC_MASTER")
    addrs = server.call(lambda srv: srv.broker_addrs)
    assert sorted(addrs) == ["broker-a", "broker-a-s1"]
    master_ha = server.call(lambda srv: srv.broker("broker-a").ha_server_addr)
    assert server.call(
        lambda srv: srv.broker("broker-a", broker_id=1).message_store.ha_master_address
    ) == master_ha  # fmt: skip
    lines = server.call(lambda srv: srv.describe())
    assert lines[1] == (
        f"mqlab serve: broker-a {addrs['broker-a']} SYNC_MASTER (brokerId 0, HA {master_ha}) "
        f"store {server.server.store_root / 'broker-a'}"
    )
    s_port = int(addrs["broker-a-s1"].rsplit(":", 1)[1])
    assert lines[2] == (
        f"mqlab serve: broker-a-s1 {addrs['broker-a-s1']} SLAVE (brokerId 1, HA "
        f"127.0.0.1:{s_port + 1}, replicates from {master_ha}) "
        f"store {server.server.store_root / 'broker-a-s1'}"
    )
    _connected(server, "broker-a", 1)
    for i in range(3):
        r = _send(addrs["broker-a"], f"msg-{i}".encode())
        assert (r.code, r.ext("queueOffset")) == (ResponseCode.SUCCESS, str(i))

    def state(srv):
        m, s = srv.broker("broker-a"), srv.broker("broker-a-s1")
        return (
            m.message_store.get_max_phy_offset(),
            m.message_store.ha_service.push2_slave_max_offset,
            s.message_store.get_max_phy_offset(),
        )

    assert server.call(state) == (3 * STORED_SIZE, 3 * STORED_SIZE, 3 * STORED_SIZE)
    logs = server.call(
        lambda srv: [_commit_log(srv.broker(n).message_store) for n in ("broker-a", "broker-a-s1")]
    )
    assert len(logs[0]) == 3 * STORED_SIZE and logs[1] == logs[0]
    r = _send(addrs["broker-a-s1"], b"to the slave")
    assert (r.code, r.remark) == (ResponseCode.SERVICE_NOT_AVAILABLE, SLAVE_REMARK)
    assert r.code == 14
    assert server.call(
        lambda srv: srv.broker("broker-a-s1").message_store.get_max_phy_offset()
    ) == (3 * STORED_SIZE)


def test_a_lone_slave_joins_a_master_through_its_name_server(live, tmp_path):
    """A second serve with --broker-role SLAVE --broker-id 2 --namesrv-addr (no name server
    of its own) registers with the first one's, is told the master's HA address, and
    replicates what the ASYNC_MASTER had before it came (and what comes after)."""
    first = live()
    addr = first.call(lambda srv: srv.broker_addrs["broker-a"])
    assert _send(addr, b"before").code == ResponseCode.SUCCESS
    second = live(broker_role="SLAVE", broker_id=2, namesrv_addr=first.namesrv_addr,
                  store=str(tmp_path / "store2"))  # fmt: skip
    assert second.call(lambda srv: srv.namesrv) is None
    assert second.call(lambda srv: srv.describe())[0] == (
        f"mqlab serve: name server {first.namesrv_addr} (not run here)"
    )
    master_ha = first.call(lambda srv: srv.broker().ha_server_addr)
    wait_until(
        lambda: (
            second.call(lambda srv: srv.broker("broker-a-s2").message_store.ha_master_address)
            == master_ha
        ),
        20,
        "the slave's registration result",
    )
    assert _send(addr, b"after").code == ResponseCode.SUCCESS
    end = first.call(lambda srv: srv.broker().message_store.get_max_phy_offset())
    wait_until(
        lambda: (
            second.call(lambda srv: srv.broker("broker-a-s2").message_store.get_max_phy_offset())
            == end
        ),
        20,
        "the slave at the master's max offset",
    )
    master_log = first.call(lambda srv: _commit_log(srv.broker().message_store))
    slave_log = second.call(lambda srv: _commit_log(srv.broker("broker-a-s2").message_store))
    assert len(master_log) == end and slave_log == master_log

    def group(srv):
        data = srv.namesrv.route_info_manager.pickup_topic_route_data("TopicTest")
        return {bd.broker_name: bd.broker_addrs for bd in data.broker_datas}

    slave_addr = second.call(lambda srv: srv.broker_addrs["broker-a-s2"])
    assert first.call(group) == {"broker-a": {0: addr, 2: slave_addr}}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_every_broker_of_the_group(tmp_path, sig):
    """`serve --slaves 2` in a subprocess prints each node with its role and HA address;
    SIGTERM or SIGINT (Ctrl-C) stops all three gracefully: exit 0, and no store keeps an
    ``abort`` file."""
    store = tmp_path / "store"
    srv = ServeProc(tmp_path, "--namesrv-port", "0", "--broker-port", "0", "--slaves", "2",
                    "--store", str(store))  # fmt: skip
    try:
        nodes = [ln.split()[2:5] for ln in srv.lines[1:4]]
        assert [(n[0], n[2]) for n in nodes] == [
            ("broker-a", "ASYNC_MASTER"), ("broker-a-s1", "SLAVE"), ("broker-a-s2", "SLAVE"),
        ]  # fmt: skip
        assert srv.lines[4] == "mqlab serve: ready (Ctrl-C to stop)"
        for node in ("broker-a", "broker-a-s1", "broker-a-s2"):
            assert (store / node / "abort").exists()  # running
        srv.proc.send_signal(sig)
        out, err = srv.proc.communicate(timeout=30)
        assert srv.proc.returncode == 0, err
        assert out.splitlines() == ["mqlab serve: stopped"]
        for node in ("broker-a", "broker-a-s1", "broker-a-s2"):
            assert not (store / node / "abort").exists()
    finally:
        srv.kill()


def test_live_group_commit_logs_side_by_side(tmp_path):
    """Lab.serve(slaves=1, broker_role="SYNC_MASTER"): after two SEND_OKs the live inspector
    shows both nodes with the same 2 * 127 bytes, and the figure marks 254 (replicated offset
    = push2SlaveMaxOffset); it passes the figure check."""
    from mqlab.lab import Lab
    from mqlab.lab import figures as F
    from mqlab.lab.figure_check import check_figure

    with Lab.serve(namesrv_port=0, broker_port=0, store=str(tmp_path / "s"), slaves=1,
                   broker_role="SYNC_MASTER") as live:  # fmt: skip
        _connected(live._server, "broker-a", 1)
        addr = live._server.call(lambda s: s.broker_addrs["broker-a"])
        assert [_send(addr, f"msg-{i}".encode()).code for i in range(2)] == [0, 0]
        df = live.commit_logs("broker-a")
        assert df["commit_log_offset"].tolist() == [0, STORED_SIZE]
        assert df["broker-a-s1"].tolist() == [True, True]
        assert df.attrs["max_offsets"] == {"broker-a": 254, "broker-a-s1": 254}
        assert (df.attrs["replicated_offset"], df.attrs["push2_slave_max_offset"]) == (254, 254)
        fig = F.commit_logs_side_by_side(df)
        assert check_figure(fig) == []
        assert [a.text for a in fig.layout.annotations] == [
            "replicated offset = push2SlaveMaxOffset 254 (black, dashed)"
        ]
        with pytest.raises(ValueError, match="no broker name 'broker-b' with a master here"):
            live.commit_logs("broker-b")


def test_the_ha_port_binds_the_host_or_the_configured_broker_ip2(tmp_path):
    """The HA service listens on brokerIP2: the --host address (127.0.0.1 by default), or
    brokerIP2 from the config."""
    cfgs = MqlabServer(ServeConfig(host="127.0.0.5", slaves=1, store=str(tmp_path)))
    assert [(n, b.broker_ip1, b.broker_ip2) for n, b, _ in cfgs._broker_configs()] == [
        ("broker-a", "127.0.0.5", "127.0.0.5"), ("broker-a-s1", "127.0.0.5", "127.0.0.5"),
    ]  # fmt: skip
    cfgs = MqlabServer(ServeConfig(properties={"brokerIP2": "127.0.0.9"}, store=str(tmp_path)))
    [(_, b, _)] = cfgs._broker_configs()
    assert (b.broker_ip1, b.broker_ip2) == ("127.0.0.1", "127.0.0.9")


def _route_ids(namesrv_addr: str) -> list[int]:
    """broker-a's brokerIds in the name server's GET_BROKER_CLUSTER_INFO."""
    return sorted(broker_addr_table(namesrv_addr, "broker-a"))


def test_the_master_node_stops_alone_and_restarts_on_its_store(live):
    """MqlabServer.stop_broker / restart_broker (the interop HA group's master kill and
    return): the stopped master leaves the route (its name-server connection closes), the
    slave keeps serving; restarted, the master recovers its 2 messages from its store,
    registers again at the same address, its slave reconnects to its HA port, and a
    SYNC_MASTER send answers SEND_OK at queue offset 2 once the slave has it. Every broker's
    periodic flush passes force on the server's FileSyncer thread, the restarted one's too,
    and its flushed position moves when that thread's sync returns."""
    server = live(slaves=1, broker_role="SYNC_MASTER")
    addrs = server.call(lambda srv: srv.broker_addrs)

    def syncing(srv) -> list[bool]:
        submit = srv.file_syncer.submit
        return [b.message_store.background_sync == submit for b in srv.brokers]

    assert server.call(syncing) == [True, True]
    ns = server.namesrv_addr
    _connected(server, "broker-a", 1)
    for i in range(2):
        assert _send(addrs["broker-a"], f"msg-{i}".encode()).code == ResponseCode.SUCCESS
    old = server.call(lambda srv: srv.broker("broker-a"))
    server.submit(server.server.stop_broker("broker-a"))
    assert old.running is False
    wait_until(lambda: _route_ids(ns) == [1], 10, "the name server to drop the master")
    with pytest.raises(ValueError, match="broker-a-s1 is running: stop it first"):
        server.submit(server.server.restart_broker("broker-a-s1"))
    new = server.submit(server.server.restart_broker("broker-a"))
    assert new is not old and new.running and new.broker_addr == addrs["broker-a"]
    assert server.call(lambda srv: srv.broker("broker-a")) is new
    assert server.call(lambda srv: new.message_store.get_max_phy_offset()) == 2 * STORED_SIZE
    assert server.call(syncing) == [True, True]
    wait_until(lambda: _route_ids(ns) == [0, 1], 10, "the restarted master to register")
    _connected(server, "broker-a", 1)
    r = _send(addrs["broker-a"], b"msg-2")
    assert (r.code, r.ext("queueOffset")) == (ResponseCode.SUCCESS, "2")
    assert (
        server.call(lambda srv: srv.broker("broker-a-s1").message_store.get_max_phy_offset())
        == 3 * STORED_SIZE
    )
    # a thorough flush pass hands the commit log to the FileSyncer: flushedWhere moves
    # when its sync reports back on the loop, not in the pass itself
    mfq = new.message_store.commit_log.mapped_file_queue

    def thorough_pass(srv) -> tuple[int, int]:
        before = mfq.flushed_where
        new.message_store.commit_log.flush_real_time_service(new.ctx.now_ms + 3_600_000)
        return before, mfq.flushed_where

    before, after = server.call(thorough_pass)
    assert after == before <= 3 * STORED_SIZE
    wait_until(
        lambda: server.call(lambda srv: mfq.flushed_where) == 3 * STORED_SIZE,
        10,
        "the background sync to move flushedWhere",
    )


def test_the_harness_helpers_send_route_and_wait_on_a_group(live):
    """mqlab.conformance.wire's helpers, which the replication check, the HA interop group
    and ``bench real --group`` share: ``registered_addr`` reads the name server's table,
    ``send_v2`` sends as the Java producer (WAIT=true after the given properties), and
    ``wait_until`` names what it waited for when it gives up."""
    from mqlab.conformance.wire import registered_addr, send_v2, wait_until

    server = live(slaves=1, broker_role="SYNC_MASTER")
    addrs = server.call(lambda srv: srv.broker_addrs)
    namesrv = server.server.namesrv_addr
    wait_until(lambda: registered_addr(namesrv, "broker-a", 1) is not None, 20, "the slave")
    assert [registered_addr(namesrv, "broker-a", i) for i in (0, 1, 2)] == [
        addrs["broker-a"], addrs["broker-a-s1"], None,
    ]  # fmt: skip
    assert registered_addr(namesrv, "broker-z", 0) is None
    _connected(server, "broker-a", 1)
    r = send_v2(addrs["broker-a"], "TopicTest", b"one", group="PG", queue_id=2,
                properties={"KEYS": "k1"})  # fmt: skip
    assert (r.code, r.ext("queueId"), r.ext("queueOffset")) == (ResponseCode.SUCCESS, "2", "0")

    raw = server.call(lambda srv: _commit_log(srv.broker("broker-a").message_store))
    # the broker keeps the given property and adds CLUSTER; WAIT is not stored (4.9.3)
    assert raw.endswith(b"\x03one\tTopicTest\x00\x1eKEYS\x01k1\x02CLUSTER\x01DefaultCluster")
    with pytest.raises(TimeoutError, match="timed out after 0.2 s waiting for nothing"):
        wait_until(lambda: False, 0.2, "nothing", pause_s=0.05)
