"""The ``acl`` group against the real RocketMQ 4.9.3 broker with ``aclEnable=true``.

The group runs on the real side alone and every row is checked against the answer the real
broker gave when this was written: code, remark (with ``PlainPermissionManager``'s line numbers,
as ``RemotingHelper#exceptionSimpleDesc`` prints them), ext fields and bodies.
``test_the_group_on_both_sides`` runs it against mqlab too and fails on any unexplained row, and
the one-way, Java client and Python client tests run on mqlab's ACL broker as well (their
``mqlab`` parameter). The full conformance run has the group too.

One real cluster for the module (one JVM start); the ACL broker (``broker-acl``) runs in it for
the group and stops after. The group waits twice for ``AclFileWatchService`` (5 s period): the
module takes ~45 s after the JVM start.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.acl.signature import SessionCredentials
from mqlab.client.exception import MQBrokerException
from mqlab.conformance.acl_answers import (
    JAVA_CLIENTS,
    LOST_ACCOUNT,
    NO_ACCESS_KEY,
    bad_signature,
    need_admin,
    no_acl_config,
    no_perm,
)
from mqlab.conformance.engine import run_scenarios, run_side
from mqlab.conformance.raw_tcp import Answer
from mqlab.conformance.real_cluster import run_mqadmin
from mqlab.conformance.scenarios import acl, acl_refusals
from mqlab.conformance.scenarios.acl_accounts import USER
from mqlab.conformance.sides import MqlabSide, RealSide
from mqlab.interop.acl_broker import create_topics
from mqlab.interop.acl_scenarios import MQADMIN, TOPICS, run_acl_command
from mqlab.interop.java_client import run_java_scenario
from mqlab.remoting.command import RemotingCommand, split_frames

pytestmark = pytest.mark.conformance

#: step -> (code, remark), as the real broker answered
EXPECTED: dict[str, tuple[int, str | None]] = {
    # acl-who
    "create_acl_t_deny": (0, "not set any response code"),
    "create_acl_t_pub": (0, "not set any response code"),
    "create_acl_t_sub": (0, "not set any response code"),
    "create_acl_t_pubsub": (0, "not set any response code"),
    "create_acl_t_other": (0, "not set any response code"),
    "unsigned": (1, NO_ACCESS_KEY),
    "wrong_secret": (1, bad_signature("mqlabUser")),
    "unknown_key": (1, no_acl_config("mqlabNobody")),
    "signed": (0, None),
    "white_unsigned": (0, None),
    "white_bad_signature": (0, None),
    "tampered": (0, None),
    "no_header_signed": (0, None),
    "no_header_unsigned": (1, NO_ACCESS_KEY),
    "route_unsigned": (
        17,
        "No topic route info in name server for the topic: acl_no_such_topic\nSee http://rocketmq.apache.org/docs/faq/ for further details.",
    ),
    # acl-topic-perms
    "send_acl_t_deny": (1, no_perm("topic:acl_t_deny", 583)),
    "send_acl_t_pub": (0, None),
    "send_acl_t_sub": (1, no_perm("topic:acl_t_sub", 583)),
    "send_acl_t_pubsub": (0, None),
    "send_acl_t_other": (0, None),
    "pull_acl_t_deny": (1, no_perm("topic:acl_t_deny", 583)),
    "pull_acl_t_pub": (1, no_perm("topic:acl_t_pub", 583)),
    "pull_acl_t_sub": (19, "NO_MESSAGE_IN_QUEUE"),
    "pull_acl_t_pubsub": (0, "FOUND"),
    "pull_acl_t_other": (1, no_perm("topic:acl_t_other", 578)),
    # acl-group-perms
    "pull_group_acl_g_deny": (1, no_perm("group:acl_g_deny", 583)),
    "pull_group_acl_g_pub": (1, no_perm("group:acl_g_pub", 583)),
    "pull_group_acl_g_sub": (0, "FOUND"),
    "pull_group_acl_g_pubsub": (0, "FOUND"),
    "pull_group_acl_g_other": (0, "FOUND"),
    "heartbeat_ok": (0, None),
    "heartbeat_group_pub": (1, no_perm("group:acl_g_pub", 583)),
    "heartbeat_topic_pub": (1, no_perm("topic:acl_t_pub", 583)),
    "pull_both_denied": (1, no_perm("group:acl_g_deny", 583)),
    "pull_both_pub": (1, no_perm("topic:acl_t_pub", 583)),
    "heartbeat_both_pub": (1, no_perm("topic:acl_t_pub", 583)),
    "offset_ok": (0, None),
    "offset_both_deny": (1, no_perm("group:acl_g_deny", 583)),
    "offset_group_deny": (1, no_perm("group:acl_g_deny", 583)),
    "consumers_group_deny": (1, no_perm("group:acl_g_deny", 583)),
    # acl-admin-only
    "create_by_user": (1, need_admin(17, "mqlabUser")),
    "group_by_user": (1, need_admin(207, "mqlabUser")),
    "config_by_user": (1, need_admin(25, "mqlabUser")),
    "delete_topic_by_white": (0, None),
    "acl_info_by_user": (0, None),
    # acl-admin-codes
    "acl_config": (0, None),
    "acl_info": (0, None),
    "acl_create": (0, None),
    "created_sends": (0, None),
    "created_denied": (1, no_perm("topic:acl_t_pubsub", 578)),
    "acl_create_short": (
        209,
        "The accessKey=short and secretKey=short-secret cannot be null and length should longer than 6",
    ),
    "acl_create_by_user": (0, None),
    "acl_delete": (0, None),
    "deleted_sends": (0, None),
    "acl_delete_unknown": (
        210,
        "The accesskey[mqlabNobody] corresponding to accessConfig has been deleted failed.",
    ),
    "acl_white": (0, None),
    "acl_config_after": (0, None),
    # acl-reload
    "settled_user": (1, LOST_ACCOUNT),
    "settled_admin": (1, LOST_ACCOUNT),
    "settled_white": (1, LOST_ACCOUNT),
    "settled_unknown": (1, no_acl_config("mqlabNobody")),
    "settled_unsigned": (1, NO_ACCESS_KEY),
    "before_edit": (1, no_acl_config("mqlabAdded")),
    "added_sends": (0, None),
    "added_denied": (1, no_perm("topic:acl_t_deny", 578)),
    "user_after_edit": (1, LOST_ACCOUNT),
    "white_split": (0, None),
    "acl_config_split": (0, None),
}


def _refusal(name: str) -> tuple[int, str]:
    """acl-refused-codes: the real broker's answer to ``unsigned_<code>``,
    ``wrong_secret_<code>``, ``no_perm_<code>`` (the header names acl_t_deny and acl_g_deny;
    where a code names both, the group is refused first: PlainAccessResource's HashMap order)"""
    case, code = name.rsplit("_", 1)
    code_ = int(code)
    if case == "unsigned":
        return 1, NO_ACCESS_KEY
    if case == "wrong_secret":
        return 1, bad_signature("mqlabUser")
    if code_ in (17, 25, 200, 207, 215):
        return 1, need_admin(code_, "mqlabUser")
    if code_ in (10, 310, 12):  # SEND_MESSAGE, SEND_MESSAGE_V2, QUERY_MESSAGE: a topic only
        return 1, no_perm("topic:acl_t_deny", 583)
    return 1, no_perm("group:acl_g_deny", 583)


EXPECTED.update({name: _refusal(name) for name in acl_refusals.step_names()})

#: GET_BROKER_CLUSTER_ACL_CONFIG (54): the file's accounts (secret keys included) and addresses
_ADMIN = {"accessKey": "mqlabAdmin", "admin": True, "secretKey": "admin-secret-1",
          "whiteRemoteAddress": ""}  # fmt: skip
_USER = {
    "accessKey": "mqlabUser", "admin": False, "defaultGroupPerm": "SUB", "defaultTopicPerm": "PUB",
    "groupPerms": ["acl_g_deny=DENY", "acl_g_pub=PUB", "acl_g_sub=SUB", "acl_g_pubsub=PUB|SUB"],
    "secretKey": "user-secret-1",
    "topicPerms": ["acl_t_deny=DENY", "acl_t_pub=PUB", "acl_t_sub=SUB", "acl_t_pubsub=PUB|SUB"],
    "whiteRemoteAddress": "192.168.1.*",
}  # fmt: skip
_WHITE = {"accessKey": "mqlabWhite", "admin": False, "defaultGroupPerm": "DENY",
          "defaultTopicPerm": "DENY", "secretKey": "white-secret-1",
          "whiteRemoteAddress": "127.0.0.1"}  # fmt: skip
ACL_CONFIG = {
    "acl_config": {"globalWhiteAddrs": ["10.10.103.*", "192.168.0.{1,2}"],
                   "plainAccessConfigs": [_ADMIN, _USER, _WHITE]},
    # after 50 (mqlabCreated, then mqlabByUser by the NON-admin user), 51 (mqlabCreated) and 53
    "acl_config_after": {"globalWhiteAddrs": ["10.10.103.*", "172.16.0.1"],
                         "plainAccessConfigs": [_ADMIN, _USER, _WHITE, {
                             "accessKey": "mqlabByUser", "admin": True,
                             "secretKey": "byuser-secret-1"}]},
    # the hand edit, then 53 with "10.10.103.*,192.168.0.{1,2}": split at every comma
    "acl_config_split": {"globalWhiteAddrs": ["10.10.103.*", "192.168.0.{1", "2}"],
                         "plainAccessConfigs": [
                             _ADMIN,
                             {**_USER, "topicPerms": ["acl_t_deny=PUB", *_USER["topicPerms"][1:]]},
                             _WHITE,
                             {"accessKey": "mqlabAdded", "admin": False,
                              "defaultGroupPerm": "SUB", "defaultTopicPerm": "DENY",
                              "secretKey": "added-secret-1", "topicPerms": ["acl_t_pub=PUB"],
                              "whiteRemoteAddress": ""}]},
}  # fmt: skip


_WRONG = SessionCredentials(USER.access_key, "not-the-secret")


@pytest.fixture(scope="module")
def real_side(java_runner) -> Iterator[RealSide]:
    side = RealSide()
    side.start()
    try:
        yield side
    finally:
        side.stop()


def _oneway_then_twoway(addr: str) -> list[int]:
    """An unsigned one-way SEND_MESSAGE_V2 (opaque 41), then the same request two-way (opaque
    42), on one raw connection: the opaques of the answers that come back within 3 s."""
    step = acl._send("oneway", "acl_t_pubsub", n=90)
    oneway = RemotingCommand.create_request(310, dict(step.header), step.body)
    oneway.opaque = 41
    oneway.mark_oneway_rpc()
    twoway = RemotingCommand.create_request(310, dict(step.header), step.body)
    twoway.opaque = 42
    host, port = addr.rsplit(":", 1)
    got: list[int] = []
    with socket.create_connection((host, int(port)), timeout=3) as s:
        s.sendall(oneway.encode() + twoway.encode())
        buf = bytearray()
        deadline = time.monotonic() + 3
        while 42 not in got and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
            got += [RemotingCommand.decode_payload(p).opaque for p in split_frames(buf)]
    return got


@pytest.fixture(scope="module")
def answers(real_side: RealSide) -> dict[str, Answer]:
    home = real_side.acl_home
    out: dict = {"@home": home}
    for steps in run_side(acl.SCENARIOS, real_side).values():
        out.update(steps)
    return out


SIDES = ["real", "mqlab"]


@pytest.fixture(scope="module")
def mqlab_side() -> Iterator[MqlabSide]:
    side = MqlabSide("mqlab")
    side.start()
    try:
        yield side
    finally:
        side.stop()


@pytest.fixture
def acl_side(request, real_side: RealSide):
    """One side's ACL broker, fresh (its store and home removed when it stops)."""
    side = real_side if request.param == "real" else request.getfixturevalue("mqlab_side")
    side.start_acl_broker()
    try:
        yield side
    finally:
        side.stop_acl_broker()


def test_every_row_answers_as_the_real_broker_did(answers):
    got = {
        name: (a.command.code, a.command.remark) if a.command is not None else (None, a.error)
        for name, a in answers.items()
        if not name.startswith("@")
    }
    assert got == EXPECTED


def test_a_refusal_is_system_error_with_no_ext_fields_and_no_body(answers):
    refused = [a.command for n, a in answers.items() if n in EXPECTED and EXPECTED[n][0] == 1]
    assert len(refused) == 31 + 130
    assert all(c.ext_fields in (None, {}) and not c.body for c in refused)


@pytest.mark.parametrize("acl_side", SIDES, indirect=True)
def test_a_refused_one_way_request_gets_no_answer(acl_side):
    assert _oneway_then_twoway(acl_side.acl_addr) == [42]


def _assert_unchanged(side) -> None:
    """acl-refused-codes changed nothing on this side: topics, groups, offsets, broker
    config, commit log, ACL config and version, the file's bytes."""
    before, after = side.acl_states["before"], side.acl_states["after"]
    assert sorted(before) == ["acl_config", "acl_file", "acl_info", "commit_log", "config",
                              "delay_offsets", "groups", "offsets", "topics"]  # fmt: skip
    for key in before:
        assert after[key] == before[key], f"{side.name}: {key} changed"
    # the rows ran after sends and a committed offset: the store and offsets are not empty
    assert int(before["commit_log"][1]) > 0
    assert "acl_t_sub@acl_g_pubsub" in before["offsets"]


def test_the_refused_codes_change_nothing_on_the_real_broker(answers, real_side):
    """58 broker codes x unsigned / wrong secret, 14 x no perm: 130 refusals."""
    names = acl_refusals.step_names()
    assert len(names) == 130 and all(answers[n].command.code == 1 for n in names)
    _assert_unchanged(real_side)


def test_the_acl_config_bodies(answers):
    for name, want in ACL_CONFIG.items():
        assert json.loads(answers[name].command.body) == want, name


def test_the_cluster_acl_info_by_a_non_admin(answers):
    ext = answers["acl_info_by_user"].command.ext_fields
    assert sorted(ext) == ["allAclFileVersion", "brokerAddr", "brokerName", "clusterName",
                           "version"]  # fmt: skip
    version = json.loads(ext["version"])
    assert sorted(version) == ["counter", "timestamp"] and version["counter"] == 0
    path = str(Path(answers["@home"]) / "conf" / "plain_acl.yml")
    assert json.loads(ext["allAclFileVersion"]) == {path: version}
    assert (ext["brokerName"], ext["clusterName"]) == ("broker-acl", "DefaultCluster")
    assert answers["acl_info"].command.ext_fields == ext


@pytest.mark.parametrize("acl_side", SIDES, indirect=True)
def test_the_java_client_with_acl_client_rpc_hook(acl_side, tmp_path):
    """The 4.9.3 Java client (``DefaultMQProducer``, ``DefaultMQPushConsumer``,
    ``DefaultLitePullConsumer`` constructed with an ``AclClientRPCHook``) against a broker
    with ACL on: interop scenario ``acl-clients`` (conformance/java AclScenarios)."""
    assert create_topics(acl_side.acl_addr, TOPICS, acl_side.acl_namesrv_addr) == [0, 0]
    result = run_java_scenario("acl-clients", acl_side.acl_namesrv_addr, "acl-", tmp_path)
    assert result == JAVA_CLIENTS


def _broker_exception(error: BaseException | None) -> tuple[int, str] | None:
    while error is not None and not isinstance(error, MQBrokerException):
        error = error.__cause__
    return None if error is None else (error.response_code, error.error_message)


@pytest.mark.parametrize("acl_side", SIDES, indirect=True)
def test_mqlabs_python_clients_sign_as_the_broker_checks(acl_side, tmp_path):
    """mqlab's producer and push consumer, on the network driver, constructed with an
    ``AclClientRPCHook``, against a broker with ACL on: the real 4.9.3
    ``PlainAccessValidator`` accepts every request they sign (routes, heartbeats, sends,
    pulls, offsets), and refuses as it refuses the Java client."""
    from mqlab.client.client_config import ClientConfig
    from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer
    from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer import DefaultMQProducer
    from mqlab.common.message import Message
    from mqlab.runtime.net import LoopThread, NetDriver

    loop = LoopThread("acl-clients")
    driver = None
    try:
        assert create_topics(acl_side.acl_addr, TOPICS, acl_side.acl_namesrv_addr) == [0, 0]

        async def new_driver() -> NetDriver:
            return NetDriver(run_id="acl-clients")

        driver = loop.submit(new_driver())

        def instance(name: str) -> MQClientInstance:
            cfg = ClientConfig(namesrv_addr=acl_side.acl_namesrv_addr, instance_name=name,
                               local_offset_store_dir=str(tmp_path))  # fmt: skip
            inst = MQClientInstance(cfg, name=name)
            loop.submit(driver.add_node(inst, listen=False))
            return inst

        signed, wrong = instance("py-producer"), instance("py-wrong")

        def send_all() -> list:
            p = DefaultMQProducer("acl_py_pg", signed, rpc_hook=AclClientRPCHook(USER))
            w = DefaultMQProducer("acl_py_pg_wrong", wrong, rpc_hook=AclClientRPCHook(_WRONG))
            p.start()
            w.start()
            return [p.send(Message("acl_t_pubsub", f"py-{i}".encode(), tags="TagA"))
                    for i in range(4)] + [p.send(Message("acl_t_sub", b"no-pub")),
                                          w.send(Message("acl_t_pubsub", b"wrong"))]  # fmt: skip

        futures = loop.call(send_all)
        deadline = time.monotonic() + 60
        while not all(loop.call(lambda: [f.done for f in futures])):
            assert time.monotonic() < deadline, "sends did not finish within 60 s"
            time.sleep(0.1)
        statuses = loop.call(lambda: [f.result.send_status.name for f in futures[:4]])
        refused = loop.call(lambda: [_broker_exception(f.error) for f in futures[4:]])
        assert statuses == ["SEND_OK"] * 4
        assert refused == [(1, no_perm("topic:acl_t_sub", 583)), (1, bad_signature("mqlabUser"))]
        assert "Send [3] times, still failed" in str(loop.call(lambda: futures[4].error))

        got: list[str] = []

        def listener(msgs, context):
            got.extend(m.body.decode() for m in msgs)
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

        consumer = instance("py-consumer")  # off the loop: add_node runs on it

        def consume() -> None:
            c = DefaultMQPushConsumer("acl_g_sub", consumer,
                                      rpc_hook=AclClientRPCHook(USER),
                                      consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
            c.subscribe("acl_t_pubsub", "*")
            c.register_message_listener(listener)
            c.start()

        loop.call(consume)
        deadline = time.monotonic() + 60
        while len(got) < 4:
            assert time.monotonic() < deadline, f"consumed only {got} within 60 s"
            time.sleep(0.1)
        assert sorted(got) == ["py-0", "py-1", "py-2", "py-3"]
        assert driver.errors == []
    finally:
        if driver is not None:
            loop.submit(driver.close())
        loop.close()


@pytest.mark.parametrize("acl_side", SIDES, indirect=True)
@pytest.mark.parametrize("command", sorted(MQADMIN))
def test_the_mqadmin_acl_commands(acl_side, command):
    """Each of the five mqadmin ACL commands (4.9.3's tools, signing with ``conf/tools.yml``)
    on a fresh ACL broker: 4.9.3's reload after a write loses the admin's account, so one
    broker per command. What it prints, and what a write leaves in the file."""
    run_acl_command(
        command, acl_side.acl_addr, acl_side.acl_home,
        lambda args, cred: run_mqadmin(args, acl_side.acl_namesrv_addr, credentials=cred),
    )  # fmt: skip


@pytest.mark.parametrize("acl_side", SIDES, indirect=True)
def test_mqadmin_without_tools_yml_is_unsigned_and_still_exits_0(acl_side):
    r = run_mqadmin(["clusterAclConfigVersion", "-b", acl_side.acl_addr],
                    acl_side.acl_namesrv_addr)  # fmt: skip
    assert (r.returncode, r.stdout.strip()) == (0, "")
    assert "ClusterAclConfigVersionListSubCommand command failed" in r.stderr
    assert f"CODE: 1  DESC: {NO_ACCESS_KEY}" in r.stderr


def test_the_group_on_both_sides(real_side, mqlab_side):
    result = run_scenarios(acl.SCENARIOS, real_side, mqlab_side)
    n, i, e, u = result.tally()
    assert n == len(EXPECTED)
    assert u == 0, "\n".join(str(r) for r in result.rows if r.verdict == "UNEXPLAINED")
    _assert_unchanged(real_side)
    _assert_unchanged(mqlab_side)
