"""``python -m mqlab serve``: configuration, broker layout, CLI errors, several brokers.

Issue 6 "Server"; docs/reference.md §1.6 (ports 9876 / 10911), §8.1 and §8.2 (broker.properties keys).
"""

import json
import socket

import pytest
from cpp_harness import CPP_CLIENT, run_client

from mqlab.conformance.wire import call_sync
from mqlab.remoting.command import RemotingCommand
from mqlab.serve import MqlabServer, ServeConfig, load_properties, main
from mqlab.store.config import FlushDiskType


def test_load_properties_splits_broker_and_store_keys():
    """One broker.properties feeds BrokerConfig and MessageStoreConfig, as BrokerStartup does."""
    text = (
        "brokerClusterName=LabCluster\nautoCreateTopicEnable=false\n"
        "flushDiskType=SYNC_FLUSH\nmessageDelayLevel=1s 2s\nmappedFileSizeCommitLog=65536\n"
    )
    bc, store, given = load_properties(text)
    assert (bc.broker_cluster_name, bc.auto_create_topic_enable) == ("LabCluster", False)
    assert store == {
        "flush_disk_type": "SYNC_FLUSH",
        "message_delay_level": "1s 2s",
        "mapped_file_size_commit_log": 65536,
    }
    assert given == {"brokerClusterName", "autoCreateTopicEnable"}


def test_load_properties_rejects_unknown_key_and_bad_number():
    """A typo or a non-number is a ValueError naming the key (Java ignores both silently)."""
    with pytest.raises(ValueError, match="'brokerNmae'"):
        load_properties("brokerNmae=x\n")
    with pytest.raises(ValueError, match="'mappedFileSizeCommitLog'"):
        load_properties("mappedFileSizeCommitLog=big\n")


def test_brokers_get_consecutive_ports_names_and_store_dirs(tmp_path):
    """--brokers 3: broker-a/b/c on 10911/10921/10931, files under <store>/<name>/."""
    cfg = tmp_path / "broker.properties"
    cfg.write_text("flushDiskType=SYNC_FLUSH\nbrokerClusterName=C1\n")
    srv = MqlabServer(ServeConfig(brokers=3, store=str(tmp_path / "s"), config=str(cfg),
                                  delay_levels="1s 1s 2s"))  # fmt: skip
    got = [
        (b.broker_name, b.broker_addr, b.broker_cluster_name, s.store_path_root_dir,
         s.flush_disk_type, s.message_delay_level)
        for _, b, s in srv._broker_configs()
    ]  # fmt: skip
    assert got == [
        (f"broker-{x}", f"127.0.0.1:{port}", "C1", str(tmp_path / "s" / f"broker-{x}"),
         FlushDiskType.SYNC_FLUSH, "1s 1s 2s")
        for x, port in (("a", 10911), ("b", 10921), ("c", 10931))
    ]  # fmt: skip


def test_serve_config_validates_arguments():
    """Out-of-range ports, broker counts and trace levels are ValueErrors naming the field."""
    with pytest.raises(ValueError, match="brokers"):
        ServeConfig(brokers=0)
    with pytest.raises(ValueError, match="namesrv_port"):
        ServeConfig(namesrv_port=70000)
    with pytest.raises(ValueError, match="trace_level"):
        ServeConfig(trace_level="all")


def serve_config_text(tmp_path, text: str) -> int:
    """``serve --config`` of a broker.properties holding ``text``: its exit code."""
    cfg = tmp_path / "broker.properties"
    cfg.write_text(text)
    return main(["--config", str(cfg), "--namesrv-port", "0", "--broker-port", "0",
                 "--store", str(tmp_path / "s")])  # fmt: skip


def test_cli_bad_config_exits_1_with_the_key(tmp_path, capsys):
    """`serve --config` with an unknown key prints it and exits 1 without serving."""
    assert serve_config_text(tmp_path, "noSuchKey=1\n") == 1
    assert "unknown broker.properties key 'noSuchKey'" in capsys.readouterr().err


@pytest.mark.slow
@CPP_CLIENT
def test_two_brokers_register_and_serve_the_cpp_client(live, tmp_path):
    """--brokers 2: both register with the name server (TBW102 routes to both); the C++
    producer's sends are acked and the trace file gets one JSON line per event."""
    trace = tmp_path / "trace.jsonl"
    server = live(brokers=2, trace=str(trace))

    def route(srv):
        data = srv.namesrv.route_info_manager.pickup_topic_route_data("TBW102")
        return sorted(b.broker_name for b in data.broker_datas) if data else []

    assert server.call(route) == ["broker-a", "broker-b"]
    ops = [{"op": "sync", "topic": "TwoBrokers", "tags": "T", "body": f"m{i}"} for i in range(8)]
    res = run_client(tmp_path, "produce", {"ns": server.namesrv_addr, "ops": ops})["results"]
    assert [r["status"] for r in res] == [0] * 8
    server.stop()
    lines = [json.loads(ln) for ln in trace.read_text().splitlines()]
    nodes = {ln["node"] for ln in lines}
    assert {"namesrv", "broker-a", "broker-b"} <= nodes
    assert all(ln["run_id"] == "serve" for ln in lines)


def test_served_name_server_and_broker_configs_name_their_own_paths_and_ports(live, tmp_path):
    """As BrokerStartup / a started 4.9.3 name server: haListenPort = listenPort + 1, and
    GET_NAMESRV_CONFIG lists kvConfigPath and configStorePath (beside the stores)."""
    server = live()
    broker = server.server.brokers[0]
    port = int(broker.broker_addr.rsplit(":", 1)[1])
    assert broker.message_store_config.ha_listen_port == port + 1
    # the broker's HAService accepts slaves there, on loopback (mechanisms.md "HA replication")
    with socket.create_connection(("127.0.0.1", port + 1), timeout=5):
        pass
    r = call_sync(server.namesrv_addr, RemotingCommand.create_request(319, {}, None))
    text = r.body.decode()
    store = tmp_path / "store" / "namesrv"
    assert f"kvConfigPath={store / 'kvConfig.json'}\n" in text
    assert f"configStorePath={store / 'namesrv.properties'}\n" in text
    r = call_sync(server.namesrv_addr, RemotingCommand.create_request(
        100, {"namespace": "n", "key": "k", "value": "v"}, None))  # fmt: skip
    assert r.code == 0
    assert (store / "kvConfig.json").read_text() == '{"configTable":{"n":{"k":"v"}}}'


def test_a_served_broker_answers_on_its_vip_channel(tmp_path):
    """``serve`` binds each broker's VIP channel, listenPort - 2 (BrokerController#initialize's
    fastRemotingServer), where a real 4.9.3 slave's SlaveSynchronize sends GET_ALL_TOPIC_CONFIG
    (MixAll#brokerVIPChannel(true, masterAddr)): the same topic table as the main port."""
    from mqlab.conformance.real_cluster import free_port
    from mqlab.serve import ServerThread

    for attempt in range(3):  # free when checked, not reserved: a lost race is retried
        base = free_port(4)  # VIP, -, broker, HA (listenPort + 1)
        cfg = ServeConfig(
            namesrv_port=0, broker_port=base + 2, store=str(tmp_path / str(attempt)),
            trace_level="off",
        )  # fmt: skip
        try:
            server = ServerThread(cfg)
        except OSError:
            continue
        break
    try:
        addr = server.call(lambda s: s.broker().broker_addr)
        assert addr == f"127.0.0.1:{base + 2}"
        answers = [
            call_sync(a, RemotingCommand.create_request(21)) for a in (addr, f"127.0.0.1:{base}")
        ]
    finally:
        server.stop()
    assert [a.code for a in answers] == [0, 0]
    assert answers[0].body == answers[1].body and b'"TBW102"' in answers[1].body


def test_the_brokers_netty_keys_are_read_shown_and_the_idle_limit_kept(live, tmp_path, capsys):
    """A ``broker.conf`` with NettyServerConfig / NettyClientConfig keys, as
    ``BrokerStartup#createBrokerController`` reads them from the same file (before, serve
    refused them as unknown): GET_BROKER_CONFIG shows them, the broker's listenPort is still
    its own, and a connection to the broker that sends nothing is closed after
    ``serverChannelMaxIdleTimeSeconds`` (1 s here) by the broker's idle handler. A value that
    does not parse is refused before anything binds, naming the key."""
    import time

    assert serve_config_text(tmp_path, "serverWorkerThreads=many\n") == 1
    assert "'serverWorkerThreads': expected an integer, got 'many'" in capsys.readouterr().err
    server = live(trace_level="off", properties={
        "serverChannelMaxIdleTimeSeconds": "1", "serverWorkerThreads": "4",
        "clientChannelMaxIdleTimeSeconds": "7", "writeBufferHighWaterMark": "65536",
    })  # fmt: skip
    addr = server.call(lambda s: s.broker().broker_addr)
    text = call_sync(addr, RemotingCommand.create_request(26)).body.decode()
    got = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert {k: got[k] for k in ("serverChannelMaxIdleTimeSeconds", "serverWorkerThreads",
                                "clientChannelMaxIdleTimeSeconds", "writeBufferHighWaterMark",
                                "listenPort")} == {
        "serverChannelMaxIdleTimeSeconds": "1", "serverWorkerThreads": "4",
        "clientChannelMaxIdleTimeSeconds": "7", "writeBufferHighWaterMark": "65536",
        "listenPort": addr.rsplit(":", 1)[1],
    }  # fmt: skip
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        t0 = time.monotonic()
        assert sock.recv(1) == b""  # closed by the broker, nothing sent either way
        waited = time.monotonic() - t0
    assert waited >= 0.9, waited  # not at once: the idle limit (the recv's timeout bounds it)
