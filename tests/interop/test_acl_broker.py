"""The ACL interop scenarios' broker (``mqlab.interop.acl_broker``) on an mqlab target, without
JVMs: ``Target.acl()`` starts ``broker-acl`` once, registered with the target's name server; a
write to its file gets the next caller a fresh one; ``close()`` stops it. And the batch mqadmin
JVM's ``conf/tools.yml``, written for a signed command and removed for an unsigned one.

Mirrors no RocketMQ class: harness plumbing (``PlainPermissionManager#load(String)`` is why a
written file needs a fresh broker, apache/rocketmq#3887).
"""

from __future__ import annotations

import pytest

from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.acl.signature import SessionCredentials
from mqlab.conformance.acl_answers import bad_signature
from mqlab.conformance.real_cluster import _write_tools_yml
from mqlab.conformance.scenarios import acl as acl_group
from mqlab.conformance.scenarios.acl_accounts import USER
from mqlab.conformance.wire import call_sync, registered_addr
from mqlab.interop.acl_broker import AclBroker, create_topics, read_plain_acl, routed_brokers
from mqlab.interop.targets import open_target
from mqlab.remoting.command import RemotingCommand


@pytest.fixture
def target(tmp_path):
    t = open_target("mqlab", tmp_path / "mqlab")
    try:
        yield t
    finally:
        t.close()


def _send(addr: str, credentials: SessionCredentials) -> tuple[int, str | None]:
    step = acl_group._send("probe", "acl_t_pubsub", n=1)
    req = RemotingCommand.create_request(310, dict(step.header), step.body)
    AclClientRPCHook(credentials).do_before_request(addr, req)
    resp = call_sync(addr, req)
    return resp.code, resp.remark


def test_one_broker_until_its_file_is_written_then_a_fresh_one(target):
    acl = target.acl()
    first, home = acl.addr, acl.home
    assert (acl.starts, acl.namesrv_addr) == (1, target.namesrv_addr)
    assert registered_addr(target.namesrv_addr, "broker-acl", 0) == first
    assert create_topics(first, ("acl_t_pubsub",), target.namesrv_addr) == [0]
    assert routed_brokers(target.namesrv_addr, "acl_t_pubsub") == ["broker-acl"]
    assert _send(first, USER) == (0, None)
    assert _send(first, SessionCredentials(USER.access_key, "not-the-secret")) == (
        1, bad_signature("mqlabUser"),
    )  # fmt: skip
    assert read_plain_acl(home)["accounts"][1]["accessKey"] == "mqlabUser"

    assert target.acl() is acl and acl.addr == first and acl.starts == 1
    acl.file_written()
    again = target.acl()
    assert again is acl and acl.starts == 2 and not acl.poisoned
    assert acl.addr != first and acl.home != home and not home.exists()
    assert registered_addr(target.namesrv_addr, "broker-acl", 0) == acl.addr
    assert routed_brokers(target.namesrv_addr, "acl_t_pubsub") == []  # a new, empty store


def test_close_stops_it_and_unregisters(target):
    acl = target.acl()
    home = acl.home
    acl.close()
    assert acl.addr == "" and not home.exists()
    assert registered_addr(target.namesrv_addr, "broker-acl", 0) is None
    acl.close()  # a second time: nothing left to stop


def test_a_real_acl_broker_needs_the_targets_cluster(tmp_path):
    with pytest.raises(ValueError, match="needs the target's RealCluster"):
        AclBroker("real", "127.0.0.1:9876", tmp_path)
    with pytest.raises(ValueError, match="mqlab or real"):
        AclBroker("other", "127.0.0.1:9876", tmp_path)


def test_tools_yml_is_written_for_a_signed_command_and_removed_for_an_unsigned_one(tmp_path):
    _write_tools_yml(tmp_path, USER)
    assert (tmp_path / "tools.yml").read_text() == (
        "accessKey: mqlabUser\nsecretKey: user-secret-1\n"
    )
    _write_tools_yml(tmp_path, None)
    assert not (tmp_path / "tools.yml").exists()
    _write_tools_yml(tmp_path, None)  # nothing to remove: no error
