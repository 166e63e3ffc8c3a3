"""Smoke test of the oracle itself: the real RocketMQ 4.9.3 cluster starts, answers raw
RemotingCommands from mqlab's own codec, runs mqadmin, deletes a topic and stops cleanly.

Mirrors no RocketMQ class: it checks mqlab/conformance/real_cluster.py and our runner
(conformance/java). Exact codes and offsets only; nothing timed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqlab.common.message_decoder import decodes, message_properties_to_string
from mqlab.conformance.real_cluster import (
    MqAdminSession,
    RealCluster,
    RealClusterError,
    run_mqadmin,
)
from mqlab.conformance.wire import call_sync
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads as fastjson_loads
from mqlab.remoting.headers import (
    PullMessageRequestHeader,
    SendMessageRequestHeader,
    send_message_header_v2_to_ext_fields,
)

pytestmark = pytest.mark.conformance

TOPIC = "SmokeTopic"
BODY = b"hello from mqlab's raw client"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped) is gone for our purposes
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_name_server_routes_to_broker_a_at_its_loopback_port(real_cluster: RealCluster) -> None:
    """GET_BROKER_CLUSTER_INFO (106): broker-a in DefaultCluster, master (id 0) at exactly
    127.0.0.1:<its listen port> (brokerIP1 forced to loopback)."""
    resp = call_sync(real_cluster.namesrv_addr, RemotingCommand.create_request(106))
    assert resp.code == 0
    info = fastjson_loads(resp.body.decode())
    assert info["clusterAddrTable"] == {"DefaultCluster": ["broker-a"]}
    broker = info["brokerAddrTable"]["broker-a"]
    assert broker["cluster"] == "DefaultCluster"
    assert broker["brokerAddrs"] == {0: real_cluster.broker_addr}
    assert real_cluster.broker_addr.startswith("127.0.0.1:")
    assert (resp.version, resp.language) == (399, "JAVA")  # MQVersion V4_9_3, as NamesrvStartup


def test_broker_registered_its_topics_with_the_name_server(real_cluster: RealCluster) -> None:
    """GET_ROUTEINFO_BY_TOPIC (105) for TBW102: the broker registered its topic table (which
    needs the 4.9.3 remoting version on REGISTER_BROKER), 8 read / 8 write queues, perm RWX."""
    resp = call_sync(
        real_cluster.namesrv_addr,
        RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "TBW102"}),
    )
    assert (resp.code, resp.remark) == (0, None)
    route = fastjson_loads(resp.body.decode())
    assert route["queueDatas"] == [
        {
            "brokerName": "broker-a",
            "perm": 7,
            "readQueueNums": 8,
            "topicSysFlag": 0,
            "writeQueueNums": 8,
        }
    ]


def test_send_v2_auto_creates_topic_then_pull_returns_the_body(real_cluster: RealCluster) -> None:
    """SEND_MESSAGE_V2 (310) to a new topic is auto-created from TBW102 (code 0, queue 0 offset
    0); a PULL_MESSAGE (11) with a subscription flag and long polling returns the same body."""
    header = SendMessageRequestHeader(
        producer_group="smoke_producer",
        topic=TOPIC,
        default_topic="TBW102",
        default_topic_queue_nums=4,
        queue_id=0,
        sys_flag=0,
        born_timestamp=int(time.time() * 1000),
        flag=0,
        properties=message_properties_to_string({"TAGS": "TagA", "WAIT": "true"}),
        reconsume_times=0,
        max_reconsume_times=16,
    )
    send = RemotingCommand.create_request(
        RequestCode.SEND_MESSAGE_V2, send_message_header_v2_to_ext_fields(header), BODY
    )
    resp = call_sync(real_cluster.broker_addr, send)
    assert (resp.code, resp.remark) == (0, None)
    assert resp.ext("queueId") == "0"
    assert resp.ext("queueOffset") == "0"

    pull = PullMessageRequestHeader(
        consumer_group="smoke_consumer",
        topic=TOPIC,
        queue_id=0,
        queue_offset=0,
        max_msg_nums=32,
        sys_flag=2 | 4,  # PullSysFlag: FLAG_SUSPEND | FLAG_SUBSCRIPTION
        commit_offset=0,
        suspend_timeout_millis=10_000,
        subscription="*",
        sub_version=0,
        expression_type="TAG",
    )
    resp = call_sync(
        real_cluster.broker_addr,
        RemotingCommand.create_request(RequestCode.PULL_MESSAGE, pull.to_ext_fields()),
        timeout=30,
    )
    assert resp.code == 0  # SUCCESS = FOUND
    assert resp.ext("nextBeginOffset") == "1"
    (msg,) = decodes(resp.body)
    assert (msg.topic, msg.queue_id, msg.queue_offset, msg.body) == (TOPIC, 0, 0, BODY)
    assert msg.properties["TAGS"] == "TagA"
    assert msg.store_host == real_cluster.broker_addr


def test_mqadmin_cluster_list_names_the_broker(real_cluster: RealCluster) -> None:
    """mqadmin clusterList (MQAdminStartup with our logback_tools.xml) prints broker-a's row:
    cluster, name, id 0, address and version V4_9_3."""
    proc = run_mqadmin(["clusterList", "-n", real_cluster.namesrv_addr], real_cluster.namesrv_addr)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if "broker-a" in line]
    assert len(rows) == 1, proc.stdout + proc.stderr
    assert rows[0][:5] == ["DefaultCluster", "broker-a", "0", real_cluster.broker_addr, "V4_9_3"]
    assert "Exception" not in proc.stderr, proc.stderr


def test_mqadmin_topic_list_shows_the_registered_topics(real_cluster: RealCluster) -> None:
    """mqadmin topicList (GET_ALL_TOPIC_LIST_FROM_NAMESERVER): the broker's default topics."""
    proc = run_mqadmin(["topicList"], real_cluster.namesrv_addr)
    assert proc.returncode == 0, proc.stderr
    assert {"TBW102", "broker-a", "DefaultCluster", "SELF_TEST_TOPIC"} <= set(proc.stdout.split())


def test_mqadmin_batch_runs_many_commands_in_one_jvm(real_cluster: RealCluster) -> None:
    """MqAdmin --batch: one JVM, one command a line, each output ended by the marker; the
    System.exit of a bad command line (ServerUtil#parseCmdLine, status 1) and of -h (0) is
    stopped and the next command runs."""
    session = MqAdminSession(real_cluster.namesrv_addr)
    try:
        pid = session._proc.pid
        listed = session.run(["topicList"])
        bad = session.run(["updateTopic", "-zz"])
        helped = session.run(["topicRoute", "-h", "-t", "TBW102"])
        missing = session.run(["noSuchCommand"])
        route = session.run(["topicRoute", "-t", "TBW102"])
        assert session._proc.pid == pid and session.alive and session.commands == 5
    finally:
        session.close()
    assert listed.returncode == 0 and "TBW102" in listed.stdout.split()
    assert bad.returncode == 1 and bad.stdout.startswith("usage: mqadmin updateTopic")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: mqadmin topicRoute")
    assert (missing.returncode, missing.stdout) == (0, "The sub command noSuchCommand not exist.\n")
    assert route.returncode == 0 and '"brokerName":"broker-a"' in route.stdout
    assert not session.alive


def test_delete_topic_in_broker_destroys_its_consume_queue(real_cluster: RealCluster) -> None:
    """DELETE_TOPIC_IN_BROKER (215) answers 0 and destroys the topic's consume queues: each
    queue's directory goes (MappedFileQueue#destroy), the topic's own stays, empty. This runs
    MappedFile.clean, which needs the --add-opens flags on JDK 17."""
    cq = real_cluster.store_dir / "consumequeue" / TOPIC
    assert [p.name for p in cq.iterdir()] == ["0"]
    assert [p.name for p in (cq / "0").iterdir()] == ["00000000000000000000"]
    resp = call_sync(
        real_cluster.broker_addr,
        RemotingCommand.create_request(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": TOPIC}),
    )
    assert (resp.code, resp.remark) == (0, None)
    assert list(cq.iterdir()) == []
    config = json.loads((real_cluster.store_dir / "config" / "topics.json").read_text())
    assert TOPIC not in config["topicConfigTable"]
    assert "InaccessibleObjectException" not in real_cluster.output()


def test_a_master_that_loses_a_port_race_starts_on_the_next_ports(
    real_cluster: RealCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """start_broker's first block of ports has its broker port taken meanwhile (another
    process won the race). 4.9.3's BrokerController#start locks the store before it binds,
    so the runner shuts the failed broker down, and the retry on the next block starts it
    (before, the retry failed with OverlappingFileLockException in the same JVM)."""
    import mqlab.conformance.real_cluster as rc

    real_free_port = rc.free_port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        while True:  # a listening port P with P - 2 and P - 1 free: the block P - 2 .. P
            taken.bind(("127.0.0.1", 0))
            port = taken.getsockname()[1]
            if rc._bindable(port - 2) and rc._bindable(port - 1):
                break
            taken.close()
            taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        taken.listen()
        handed = iter([port - 2])
        monkeypatch.setattr(rc, "free_port", lambda n=1: next(handed, None) or real_free_port(n))
        broker = real_cluster.start_broker("broker-race")
    try:
        assert broker.broker_addr != f"127.0.0.1:{port}"
        assert "java.net.BindException: Address already in use" in real_cluster.output()
        assert "OverlappingFileLockException" not in real_cluster.output()
    finally:
        real_cluster.stop_broker("broker-race")


def test_stop_ends_the_jvm_with_exit_0(real_cluster: RealCluster) -> None:
    """stop() (SIGTERM): the broker, then the name server shut down; the JVM exits 0."""
    pid = real_cluster.pid
    assert pid is not None and _pid_alive(pid)
    real_cluster.stop()
    assert real_cluster.returncode == 0
    assert not _pid_alive(pid)
    assert real_cluster.output().rstrip().endswith("mqlab-real-cluster stopped")
    real_cluster.stop()  # idempotent
    assert real_cluster.returncode == 0


def test_unknown_broker_property_fails_the_start(java_runner: Path, tmp_path: Path) -> None:
    """A key no broker config bean has (a typo) fails the start, naming the key."""
    cluster = RealCluster(tmp_path, {"autoCreateTopicEnabled": "false"})
    with pytest.raises(
        RealClusterError, match=r"no broker config field named \[autoCreateTopicEnabled\]"
    ):
        cluster.start()
    assert cluster.returncode == 1
    assert not cluster.running


def test_unknown_name_server_property_fails_the_start(java_runner: Path, tmp_path: Path) -> None:
    """``namesrv_properties`` (``--namesrv-property``) take NamesrvConfig and NettyServerConfig
    keys only: a typo fails the start, naming the key; setting them for a JVM without a name
    server of its own is refused before anything starts."""
    cluster = RealCluster(tmp_path, broker=False,
                          namesrv_properties={"serverChannelMaxIdleTime": "4"})  # fmt: skip
    with pytest.raises(
        RealClusterError, match=r"no name server config field named \[serverChannelMaxIdleTime\]"
    ):
        cluster.start()
    assert cluster.returncode == 1
    with pytest.raises(ValueError, match="namesrv_properties set a name server"):
        RealCluster(tmp_path, namesrv_addr="127.0.0.1:9876",
                    namesrv_properties={"serverChannelMaxIdleTimeSeconds": "4"})  # fmt: skip


def test_dledger_keys_with_a_lower_case_d_are_broker_config_keys(
    java_runner: Path, tmp_path: Path
) -> None:
    """``dLegerGroup``, ``dLegerPeers`` and ``dLegerSelfId`` (setters ``setdLegerGroup``...,
    keys as ``MixAll#properties2Object`` derives them) pass the runner's key check: only the
    typo beside them is named."""
    props = {
        "dLegerGroup": "g", "dLegerPeers": "n0-127.0.0.1:1", "dLegerSelfId": "n0",
        "dLegerSelfID": "n0",
    }  # fmt: skip
    cluster = RealCluster(tmp_path, props)
    with pytest.raises(RealClusterError, match=r"no broker config field named \[dLegerSelfID\]"):
        cluster.start()
    assert cluster.returncode == 1


_ORPHAN = """
import sys, time
from pathlib import Path
from mqlab.conformance.real_cluster import RealCluster
c = RealCluster(Path(sys.argv[1])).start()
print(c.pid, flush=True)
time.sleep(600)
"""


def test_jvm_exits_when_the_python_process_that_started_it_is_killed(
    java_runner: Path, tmp_path: Path
) -> None:
    """SIGKILL the Python process holding a RealCluster: its stdin pipe closes and the JVM stops
    (no orphaned broker holding ports)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        jvm_pid = int(proc.stdout.readline())
        assert _pid_alive(jvm_pid)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    for _ in range(600):  # the JVM's own clean stop, up to 60 s on a loaded box
        if not _pid_alive(jvm_pid):
            break
        time.sleep(0.1)
    else:
        os.kill(jvm_pid, signal.SIGKILL)
        pytest.fail("the JVM outlived the Python process that started it")
    assert (
        (tmp_path / "real-cluster.out").read_text().rstrip().endswith("mqlab-real-cluster stopped")
    )


def test_a_master_in_a_jvm_of_its_own_is_killed_and_restarted_on_its_store_and_ports(
    java_runner: Path, tmp_path: Path
) -> None:
    """The interop HA group's layout: a name server alone (``broker=False``), a master in a
    JVM of its own (``namesrv_addr=``). kill() is a crash: exit -9, the store's ``abort``
    file left behind (a clean shutdown deletes it), the name server drops the broker when
    its connection closes. restart(): the same address, the store recovered (the next
    send's queue offset is 1)."""
    from mqlab.conformance.wire import registered_addr, send_v2, wait_until

    with pytest.raises(ValueError, match="neither a name server nor a broker"):
        RealCluster(tmp_path, namesrv_addr="127.0.0.1:1", broker=False)
    ns = RealCluster(tmp_path / "ns", broker=False).start()
    master = RealCluster(tmp_path / "m", namesrv_addr=ns.namesrv_addr)
    try:
        assert ns.broker_addr == "" and "broker=none" in ns.output()
        with pytest.raises(RealClusterError, match=r"runs no master \(--no-broker\)"):
            ns.stop_master()
        master.start()
        addr = master.broker_addr
        wait_until(lambda: registered_addr(ns.namesrv_addr, "broker-a", 0) == addr, 60, "it")
        first = send_v2(addr, TOPIC, BODY, group="PG", queue_id=0)
        assert (first.code, first.ext("queueOffset")) == (0, "0")
        master.kill()
        assert master.returncode == -signal.SIGKILL and not master.running
        assert (master.store_dir / "abort").exists()
        wait_until(lambda: registered_addr(ns.namesrv_addr, "broker-a", 0) is None, 60, "drop")
        master.restart()
        assert master.broker_addr == addr
        wait_until(lambda: registered_addr(ns.namesrv_addr, "broker-a", 0) == addr, 60, "back")
        again = send_v2(addr, TOPIC, BODY, group="PG", queue_id=0)
        assert (again.code, again.ext("queueOffset")) == (0, "1")
    finally:
        master.stop()
        ns.stop()
    assert (master.returncode, ns.returncode) == (0, 0)
