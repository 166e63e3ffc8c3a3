"""A broker with aclEnable=true on the simulation driver: every request passes
PlainAccessValidator before its processor (BrokerController#initialAcl's RPC hook), the
refusals are NettyRemotingAbstract's, the file reloads on the driver's clock, and codes
50-54 change the file as 4.9.3 does."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from mqlab.acl.permission import ADMIN_CODE
from mqlab.acl.plain_access_resource import RESOURCES_BY_CODE
from mqlab.acl.signature import SessionCredentials, sign_request
from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode as R
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads_json_body
from mqlab.runtime.raw_client import RawClient
from mqlab.runtime.sim import SimDriver
from mqlab.store.config import MessageStoreConfig

ACL = """globalWhiteRemoteAddresses:
- 10.10.103.*
accounts:
- accessKey: RocketMQ
  secretKey: '12345678'
  defaultTopicPerm: DENY
  defaultGroupPerm: SUB
  topicPerms:
  - topicA=DENY
  - topicB=PUB|SUB
  groupPerms:
  - groupA=DENY
- accessKey: rocketmq2
  secretKey: '12345678'
  admin: true
"""

USER = SessionCredentials("RocketMQ", "12345678")
ADMIN = SessionCredentials("rocketmq2", "12345678")
PPM = "org.apache.rocketmq.acl.plain.PlainPermissionManager"
ACL_EXC = "org.apache.rocketmq.acl.common.AclException"


class AclCluster:
    def __init__(self, tmp_path, acl_text=ACL, acl_enable=True, client_ip="127.0.0.1"):
        self.home = tmp_path / "home"
        (self.home / "conf").mkdir(parents=True)
        self.file = self.home / "conf" / "plain_acl.yml"
        if acl_text is not None:
            self.file.write_text(acl_text)
        self.d = SimDriver(seed=1)
        self.d.add_node(NamesrvController())
        self.broker = BrokerController(
            BrokerConfig(acl_enable=acl_enable),
            MessageStoreConfig(store_path_root_dir=str(tmp_path / "store")),
            rocketmq_home_dir=str(self.home),
        )
        self.d.add_node(self.broker)
        self.client = RawClient("client", f"{client_ip}:0")
        self.d.add_node(self.client)
        self.d.run_until_idle()

    def call(self, code, ext=None, body=None, cred=None, oneway=False):
        cmd = RemotingCommand(code, ext_fields=dict(ext or {}), body=body)
        if cred is not None:
            sign_request(cmd, cred)
        c = self.client.send(self.broker.broker_addr, code, cmd.ext_fields, body, oneway=oneway)
        self.d.run_until_idle()
        return c

    def events(self, component):
        return [
            (e.step, e.fields.get("outcome")) for e in self.d.recorder.select(component=component)
        ]


V2 = {"a": "PG", "b": "topicB", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0",
      "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false"}  # fmt: skip


@pytest.fixture
def acl(tmp_path):
    return AclCluster(tmp_path)


def stored(c: AclCluster, topic: str) -> int:
    return c.broker.message_store.get_max_offset_in_queue(topic, 0)


def test_refusals_are_system_error_with_the_exception_and_its_frame(acl):
    """Unsigned, unknown key, wrong secret, denied topic, admin-only code: SYSTEM_ERROR (1)
    with exceptionSimpleDesc; the processor never runs (nothing stored, no topic made)."""
    cases = [
        (None, V2, f"{ACL_EXC}: No accessKey is configured, {PPM}.validate(PlainPermissionManager.java:636)"),
        (SessionCredentials("nobody1", "12345678"), V2,
         f"{ACL_EXC}: No acl config for nobody1, {PPM}.validate(PlainPermissionManager.java:640)"),
        (SessionCredentials("RocketMQ", "87654321"), V2,
         f"{ACL_EXC}: Check signature failed for accessKey=RocketMQ, "
         f"{PPM}.validate(PlainPermissionManager.java:653)"),
        (USER, {**V2, "b": "topicA"},
         f"{ACL_EXC}: No default permission for topic:topicA, "
         f"{PPM}.checkPerm(PlainPermissionManager.java:583)"),
    ]  # fmt: skip
    for cred, ext, remark in cases:
        c = acl.call(R.SEND_MESSAGE_V2, ext, b"hello", cred)
        assert (c.code, c.remark) == (1, remark)
        assert c.response.ext_fields == {}
    assert stored(acl, "topicB") == 0 and stored(acl, "topicA") == 0
    create = {"topic": "T1", "defaultTopic": "TBW102", "readQueueNums": "4",
              "writeQueueNums": "4", "perm": "6", "topicFilterType": "SINGLE_TAG"}  # fmt: skip
    c = acl.call(R.UPDATE_AND_CREATE_TOPIC, create, None, USER)
    assert (c.code, c.remark) == (1, f"{ACL_EXC}: Need admin permission for request code=17, "
                                  f"but accessKey=RocketMQ is not, "
                                  f"{PPM}.checkPerm(PlainPermissionManager.java:553)")  # fmt: skip
    assert acl.broker.topic_config_manager.select_topic_config("T1") is None
    assert acl.call(R.UPDATE_AND_CREATE_TOPIC, create, None, ADMIN).code == 0
    assert acl.broker.topic_config_manager.select_topic_config("T1") is not None


def test_a_signed_send_goes_through_and_each_step_is_traced(acl):
    """A signed send to a PUB|SUB topic is stored; the trace shows steps 1, 4, 5, 6."""
    c = acl.call(R.SEND_MESSAGE_V2, V2, b"hello", USER)
    assert c.code == 0
    assert stored(acl, "topicB") == 1
    assert acl.events("PlainAccessValidator.parse") == [("1", None)]
    assert acl.events("PlainPermissionManager.validate") == [
        ("1", "next"), ("4", "next"), ("5", "next"), ("6", "next"), ("6", "admit"),
    ]  # fmt: skip


def test_the_acl_runs_before_the_field_checks(acl):
    """A request missing a required field is refused by the ACL first (the hook runs before
    the processor decodes its header)."""
    c = acl.call(R.GET_MAX_OFFSET, {}, None)
    assert c.remark.startswith(f"{ACL_EXC}: No accessKey is configured")
    c = acl.call(R.GET_MAX_OFFSET, {}, None, USER)
    assert (c.code, c.remark) == (1, "the custom field <topic> is null")
    assert acl.call(9999, {}, None).remark.startswith(f"{ACL_EXC}: No accessKey is configured")
    c = acl.call(9999, {}, None, USER)
    assert (c.code, c.remark) == (3, " request type 9999 not supported")


def test_a_refused_one_way_request_gets_no_answer(acl):
    """NettyRemotingAbstract answers no one-way request, refused or not."""
    frames_before = len(acl.d.recorder.select(component="PlainAccessValidator.doBeforeRequest"))
    acl.call(R.SEND_MESSAGE_V2, V2, b"hello", None, oneway=True)
    refused = acl.d.recorder.select(component="PlainAccessValidator.doBeforeRequest")
    assert len(refused) == frames_before + 1 and refused[-1].fields["oneway"] is True
    assert stored(acl, "topicB") == 0
    assert acl.client.inbound == []


def test_a_global_white_address_needs_no_signature(tmp_path):
    """A client at 10.10.103.x is let in unsigned, at step 1."""
    c = AclCluster(tmp_path, client_ip="10.10.103.7")
    assert c.call(R.SEND_MESSAGE_V2, {**V2, "b": "topicA"}, b"hello").code == 0
    assert c.events("PlainPermissionManager.validate") == [("1", "admit")]


def test_acl_off_checks_nothing(tmp_path):
    """aclEnable=false (the default): no validator, an unsigned send is stored."""
    c = AclCluster(tmp_path, acl_enable=False)
    assert c.broker.access_validator is None
    assert c.call(R.SEND_MESSAGE_V2, V2, b"hello").code == 0


def test_a_bad_file_stops_the_broker_starting(tmp_path):
    """An empty plain_acl.yml: 4.9.3's broker does not start; mqlab raises naming it."""
    with pytest.raises(ValueError, match="plain_acl.yml file is not data"):
        AclCluster(tmp_path, acl_text="")


def test_the_file_reloads_every_5_s_on_the_driver_clock(acl):
    """Code 53 writes a global white list; it applies at the watcher's next turn (5 s of
    virtual time), not before."""
    client_ip_white = "127.0.0.*"
    c = acl.call(R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, {"globalWhiteAddrs": client_ip_white},
                 None, USER)  # fmt: skip
    assert (c.code, c.remark) == (0, None)
    assert "- 127.0.0.*\n" in acl.file.read_text()
    assert acl.call(R.SEND_MESSAGE_V2, {**V2, "b": "topicA"}, b"x").code == 1
    acl.d.advance(5000)
    reloads = acl.d.recorder.select(component="AclFileWatchService.run")
    assert [(e.step, e.fields["reload"]) for e in reloads] == [("3", "file")]
    assert acl.call(R.SEND_MESSAGE_V2, {**V2, "b": "topicA"}, b"x").code == 0


def test_codes_50_to_54(acl):
    """Create and update an account, the versions, the cluster ACL info, delete, and the
    refusals' codes and remarks."""
    path = str(acl.file)
    c = acl.call(R.UPDATE_AND_CREATE_ACL_CONFIG, {
        "accessKey": "newuser1", "secretKey": "newsecret1", "admin": "false",
        "defaultTopicPerm": "PUB", "topicPerms": "t1=SUB,t2=PUB|SUB",
    }, None, USER)  # fmt: skip
    assert (c.code, c.remark) == (0, None)
    text = acl.file.read_text()
    assert "- accessKey: newuser1\n  secretKey: newsecret1\n  admin: false\n" in text
    assert "  topicPerms:\n  - t1=SUB\n  - t2=PUB|SUB\ndataVersion:\n- counter: 1\n" in text
    # a new account works at once
    newuser = SessionCredentials("newuser1", "newsecret1")
    assert acl.call(R.SEND_MESSAGE_V2, {**V2, "b": "t2"}, b"x", newuser).code == 0
    c = acl.call(R.GET_BROKER_CLUSTER_ACL_INFO, {}, None, USER)
    assert c.code == 0 and c.remark is None
    t0 = acl.broker.access_validator.acl_plug_engine.data_version.timestamp
    t1 = int(text.split("timestamp: ")[1])
    assert c.response.ext_fields == {
        "version": f'{{"counter":0,"timestamp":{t0}}}',
        "allAclFileVersion": f'{{"{path}":{{"counter":1,"timestamp":{t1}}}}}',
        "brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911", "clusterName": "DefaultCluster",
    }  # fmt: skip
    c = acl.call(R.GET_BROKER_CLUSTER_ACL_CONFIG, {}, None, USER)
    body = loads_json_body(c.response.body)
    assert body["globalWhiteAddrs"] == ["10.10.103.*"]
    assert [a["accessKey"] for a in body["plainAccessConfigs"]] == [
        "RocketMQ",
        "rocketmq2",
        "newuser1",
    ]
    assert body["plainAccessConfigs"][2] == {
        "accessKey": "newuser1", "admin": False, "defaultTopicPerm": "PUB",
        "secretKey": "newsecret1", "topicPerms": ["t1=SUB", "t2=PUB|SUB"],
    }  # fmt: skip
    # refusals
    c = acl.call(R.UPDATE_AND_CREATE_ACL_CONFIG, {"accessKey": "abc", "secretKey": "12345678"},
                 None, USER)  # fmt: skip
    assert (c.code, c.remark) == (209, "The accessKey=abc and secretKey=12345678 cannot be null "
                                  "and length should longer than 6")  # fmt: skip
    c = acl.call(R.DELETE_ACL_CONFIG, {"accessKey": "nobody11"}, None, USER)
    assert (c.code, c.remark) == (
        210,
        "The accesskey[nobody11] corresponding to accessConfig has been deleted failed.",
    )
    c = acl.call(R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, {}, None, USER)
    assert (c.code, c.remark) == (211, "The globalWhiteAddresses[null] has been updated failed.")
    # delete
    c = acl.call(R.DELETE_ACL_CONFIG, {"accessKey": "newuser1"}, None, USER)
    assert (c.code, c.remark) == (0, None)
    assert "newuser1" not in acl.file.read_text()
    assert "- counter: 2\n" in acl.file.read_text()


def test_code_53_splits_on_every_comma_and_a_reload_that_fails_changes_nothing(acl):
    """``10.10.103.*,192.168.0.{1,2}`` is split on every comma (the real broker's 54 lists
    ``192.168.0.{1`` and ``2}``); at the next watcher turn the file does not load (a bad
    pattern): the error is traced and the old rules stay."""
    c = acl.call(R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
                 {"globalWhiteAddrs": "10.10.103.*,192.168.0.{1,2}"}, None, ADMIN)  # fmt: skip
    assert (c.code, c.remark) == (0, None)
    body = loads_json_body(acl.call(R.GET_BROKER_CLUSTER_ACL_CONFIG, {}, None, USER).response.body)
    assert body["globalWhiteAddrs"] == ["10.10.103.*", "192.168.0.{1", "2}"]
    acl.d.advance(5000)
    failed = acl.d.recorder.select(component="AclFileWatchService.run")
    assert [e.fields.get("error") for e in failed] == [
        "org.apache.rocketmq.acl.common.AclException: "
        "Netaddress examine Exception netaddress is 192.168.0.{1"
    ]
    assert acl.call(R.SEND_MESSAGE_V2, V2, b"x", USER).code == 0  # no #3887 breakage


#: fields that name a denied topic and a denied group wherever a code reads them
DENIED = {"topic": "topicA", "b": "topicA", "originTopic": "topicA", "group": "groupA",
          "consumerGroup": "groupA", "clientID": "c1", "queueId": "0", "commitOffset": "9",
          "offset": "0", "delayLevel": "0", "groupName": "groupA", "key": "k", "maxNum": "1",
          "beginTimestamp": "0", "endTimestamp": "1", "accessKey": "RocketMQ",
          "secretKey": "changed1", "globalWhiteAddrs": "*"}  # fmt: skip
DENIED_HEARTBEAT = (
    b'{"clientID":"c1","consumerDataSet":[{"groupName":"groupA","subscriptionDataSet":'
    b'[{"topic":"topicA"}]}],"producerDataSet":[]}'
)


def snapshot(c: AclCluster):
    b = c.broker
    return (
        copy.deepcopy(b.topic_config_manager.topic_config_table),
        list(b.subscription_group_manager.subscription_group_table),
        copy.deepcopy(b.consumer_offset_manager.offset_table),
        dataclasses.asdict(b.broker_config),
        b.configuration.get_all_configs_format_string(),
        b.message_store.get_max_phy_offset(),
        c.file.read_bytes(),
    )


def test_every_request_code_refused_changes_nothing(acl):
    """Each of the 94 request codes, unsigned, with a wrong secret, and (admin-only codes and
    the codes that name a resource) by an account without the perm: refused with the real
    broker's remark, and topics, groups, offsets, config, store and ACL file unchanged."""
    before = snapshot(acl)
    wrong = SessionCredentials("RocketMQ", "not-the-secret")
    expected_remarks = set()
    for code in R:
        body = DENIED_HEARTBEAT if code == R.HEART_BEAT else None
        c = acl.call(code, DENIED, body)
        assert (c.code, c.remark) == (1, f"{ACL_EXC}: No accessKey is configured, "
                                      f"{PPM}.validate(PlainPermissionManager.java:636)"), code  # fmt: skip
        c = acl.call(code, DENIED, body, wrong)
        assert (c.code, c.remark) == (1, f"{ACL_EXC}: Check signature failed for accessKey="
                                      f"RocketMQ, {PPM}.validate(PlainPermissionManager.java:653)"), code  # fmt: skip
        if code in ADMIN_CODE or code in RESOURCES_BY_CODE:
            c = acl.call(code, DENIED, body, USER)
            assert c.code == 1, code
            expected_remarks.add(c.remark.split(", org.apache")[0].split(": ", 1)[1])
    assert expected_remarks == {
        "Need admin permission for request code=17, but accessKey=RocketMQ is not",
        "Need admin permission for request code=25, but accessKey=RocketMQ is not",
        "Need admin permission for request code=200, but accessKey=RocketMQ is not",
        "Need admin permission for request code=207, but accessKey=RocketMQ is not",
        "Need admin permission for request code=215, but accessKey=RocketMQ is not",
        "No default permission for topic:topicA",
        "No default permission for group:groupA",
    }
    assert snapshot(acl) == before
    assert acl.client.inbound == []


def test_a_file_edited_into_nonsense_is_traced_and_the_old_rules_stay(acl):
    """A hand edit that is YAML but not a map: the watcher's reload fails (traced, as Java
    logs it) and the broker goes on with what it had."""
    acl.file.write_text("- just\n- a list\n")
    acl.d.advance(5000)
    errors = [e.fields["error"] for e in acl.d.recorder.select(component="AclFileWatchService.run")]
    assert errors == [f"{ACL_EXC}: {acl.file}: expected a YAML map, got a list"]
    assert acl.call(R.SEND_MESSAGE_V2, V2, b"x", USER).code == 0


def test_same_seed_same_acl_trace_whatever_the_home(tmp_path):
    """Two runs from different home and store directories, same calls: the same ACL events
    (file names are shown relative to the home)."""

    def run(sub):
        c = AclCluster(tmp_path / sub)
        c.call(R.SEND_MESSAGE_V2, V2, b"x", USER)
        c.call(R.SEND_MESSAGE_V2, V2, b"x")
        c.call(R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, {"globalWhiteAddrs": "127.0.0.*"}, None, USER)
        c.d.advance(5000)
        return [
            (e.t_ms, e.node, e.component, e.step, e.kind, e.fields)
            for e in c.d.recorder
            if e.component.startswith(("PlainAccessValidator", "PlainPermissionManager",
                                       "AclFileWatchService", "BrokerController.initialAcl"))
        ]  # fmt: skip

    first, second = run("one"), run("two")
    assert first == second
    assert ("AclFileWatchService.run", "3") in [(c, s) for _, _, c, s, _, _ in first]
