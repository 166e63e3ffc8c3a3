"""``serve`` with aclEnable=true: where the ACL file is read from, the refusal frames on
real sockets, and the warning for brokers listening beyond loopback without ACL."""

from __future__ import annotations

import socket

import pytest

from mqlab.acl.signature import SessionCredentials, sign_request
from mqlab.broker.config import BrokerConfig
from mqlab.conformance.wire import call_sync
from mqlab.remoting.codes import RequestCode as R
from mqlab.remoting.command import RemotingCommand, split_frames
from mqlab.serve import MqlabServer, ServeConfig, ServerThread, build_parser, exposure_warning

ACL = """accounts:
- accessKey: RocketMQ
  secretKey: '12345678'
  defaultTopicPerm: PUB
"""

V2 = {"a": "PG", "b": "TopicA", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0",
      "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false"}  # fmt: skip
REFUSED = (
    "org.apache.rocketmq.acl.common.AclException: No accessKey is configured, "
    "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:636)"
)


def test_rocketmq_home_is_the_flag_else_the_environment(monkeypatch):
    """--rocketmq-home / ServeConfig.rocketmq_home, else ROCKETMQ_HOME; not rocketmqHome."""
    assert build_parser().parse_args(["--rocketmq-home", "/opt/rmq"]).rocketmq_home == "/opt/rmq"
    monkeypatch.setenv("ROCKETMQ_HOME", "/from/env")
    assert MqlabServer(ServeConfig()).rocketmq_home_dir == "/from/env"
    assert MqlabServer(ServeConfig(rocketmq_home="/given")).rocketmq_home_dir == "/given"
    monkeypatch.delenv("ROCKETMQ_HOME")
    assert MqlabServer(ServeConfig(properties={"rocketmqHome": "/x"})).rocketmq_home_dir is None


def test_exposure_warning():
    """Loopback: none. Another address with a broker whose ACL is off: a warning naming the
    risk and the broker; every broker with ACL on: none."""
    off, on = BrokerConfig(), BrokerConfig(acl_enable=True)
    assert exposure_warning("127.0.0.1", [off]) is None
    assert exposure_warning("localhost", [off]) is None
    assert exposure_warning("0.0.0.0", [on]) is None
    assert exposure_warning("0.0.0.0", [off, on]) == (
        "listening on 0.0.0.0 with aclEnable=false (broker-a): anyone who can reach these "
        "ports can send and consume on every topic, and change topics, groups, offsets and "
        "the broker config, without credentials. Bind 127.0.0.1, or set aclEnable=true with "
        "<rocketmq home>/conf/plain_acl.yml."
    )


def test_exposure_warning_names_the_name_server():
    """A name server beyond loopback has no ACL (nor has 4.9.3's): its own warning, with or
    without ACL on the brokers; on loopback none."""
    on = BrokerConfig(acl_enable=True)
    namesrv = (
        "the name server listens on 0.0.0.0 and has no ACL (4.9.3's has none either): anyone "
        "who can reach its port can register or wipe brokers, delete topic routes, and change "
        "its KV and config (UPDATE_NAMESRV_CONFIG)."
    )
    assert exposure_warning("0.0.0.0", [on], namesrv=True) == namesrv
    both = exposure_warning("0.0.0.0", [BrokerConfig()], namesrv=True)
    assert both.startswith("listening on 0.0.0.0 with aclEnable=false (broker-a): anyone")
    assert both.endswith(" " + namesrv)
    assert exposure_warning("127.0.0.1", [BrokerConfig()], namesrv=True) is None


def test_serve_logs_the_warning_before_it_binds(monkeypatch, caplog, tmp_path):
    """``serve --host 0.0.0.0`` without ACL logs the warning first (here the bind is made
    to fail, so nothing listens beyond loopback in the test)."""
    import asyncio

    import mqlab.serve as serve

    def no_bind(host, port):
        raise OSError(f"test: not binding {host}:{port}")

    monkeypatch.setattr(serve, "bind_socket", no_bind)
    cfg = ServeConfig(host="0.0.0.0", namesrv_port=0, broker_port=0, store=str(tmp_path))
    with caplog.at_level("WARNING", logger="mqlab.serve"), pytest.raises(OSError, match="test"):
        asyncio.run(MqlabServer(cfg).start())
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [exposure_warning("0.0.0.0", [BrokerConfig()], namesrv=True)]
    assert "anyone who can reach these ports can send and consume" in warnings[0]


@pytest.fixture
def acl_server(tmp_path):
    home = tmp_path / "home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "plain_acl.yml").write_text(ACL)
    cfg = ServeConfig(
        namesrv_port=0, broker_port=0, store=str(tmp_path / "store"), trace_level="off",
        properties={"aclEnable": "true"}, rocketmq_home=str(home),
    )  # fmt: skip
    server = ServerThread(cfg)
    try:
        yield server, server.call(lambda s: s.broker().broker_addr)
    finally:
        server.stop()


def test_refusals_on_the_wire(acl_server):
    """Unsigned: SYSTEM_ERROR with the exception and its frame, the request's opaque, a
    response flag; signed: stored."""
    server, addr = acl_server
    request = RemotingCommand.create_request(R.SEND_MESSAGE_V2, dict(V2), b"hello")
    refused = call_sync(addr, request)
    assert refused.header_dict() | {"language": "-", "version": 0} == {
        "code": 1, "extFields": {}, "flag": 1, "language": "-", "opaque": refused.opaque,
        "remark": REFUSED, "serializeTypeCurrentRPC": "JSON", "version": 0,
    }  # fmt: skip
    signed = RemotingCommand.create_request(R.SEND_MESSAGE_V2, dict(V2), b"hello")
    sign_request(signed, SessionCredentials("RocketMQ", "12345678"))
    assert call_sync(addr, signed).code == 0
    assert server.call(lambda s: s.broker().message_store.get_max_offset_in_queue("TopicA", 0)) == 1


def test_a_refused_one_way_request_gets_no_frame(acl_server):
    """A refused one-way send, then a refused request on the same connection: the only
    frame back answers the second (opaque 2)."""
    _, addr = acl_server
    oneway = RemotingCommand.create_request(R.SEND_MESSAGE_V2, dict(V2), b"x")
    oneway.mark_oneway_rpc()
    oneway.opaque = 1
    second = RemotingCommand.create_request(R.GET_BROKER_RUNTIME_INFO, {})
    second.opaque = 2
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(oneway.encode() + second.encode())
        buf = bytearray()
        frames: list[bytes] = []
        while not frames:
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            buf += chunk
            frames = split_frames(buf)
    first = RemotingCommand.decode_payload(frames[0])  # split_frames strips the length
    assert (first.opaque, first.code, first.remark) == (2, 1, REFUSED)
