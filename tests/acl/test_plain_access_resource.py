"""mqlab.acl.plain_access_resource.parse: what each request code needs, on which resource,
and the bytes its signature covers (PlainAccessValidator#parse, 4.9.3)."""

from __future__ import annotations

import pytest

from mqlab.acl.acl_utils import AclException
from mqlab.acl.permission import PUB, SUB
from mqlab.acl.plain_access_resource import RESOURCES_BY_CODE, parse, print_str
from mqlab.remoting.codes import RequestCode as R
from mqlab.remoting.command import RemotingCommand

HEARTBEAT = (
    b'{"clientID":"c1","consumerDataSet":[{"groupName":"CG","subscriptionDataSet":'
    b'[{"topic":"T1"},{"topic":"%RETRY%CG"}]}],"producerDataSet":[{"groupName":"PG"}]}'
)

#: code, ext fields, body → the resources and perms 4.9.3 checks
TABLE = [
    (R.SEND_MESSAGE, {"topic": "T"}, None, {"T": PUB}),
    (R.SEND_MESSAGE_V2, {"b": "T"}, None, {"T": PUB}),
    (R.CONSUMER_SEND_MSG_BACK, {"originTopic": "T", "group": "G"}, None,
     {"T": PUB, "%RETRY%G": SUB}),
    (R.PULL_MESSAGE, {"topic": "T", "consumerGroup": "G"}, None, {"T": SUB, "%RETRY%G": SUB}),
    (R.QUERY_MESSAGE, {"topic": "T"}, None, {"T": SUB}),
    (R.HEART_BEAT, {}, HEARTBEAT, {"%RETRY%CG": SUB, "T1": SUB}),
    (R.UNREGISTER_CLIENT, {"clientID": "c1", "consumerGroup": "G"}, None, {"%RETRY%G": SUB}),
    (R.UNREGISTER_CLIENT, {"clientID": "c1", "producerGroup": "P"}, None, None),
    (R.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "G"}, None, {"%RETRY%G": SUB}),
    (R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": "G", "topic": "T"}, None,
     {"%RETRY%G": SUB, "T": SUB}),
    # codes outside the switch need no resource: batch and reply sends among them
    (R.SEND_BATCH_MESSAGE, {"b": "T"}, None, None),
    (R.SEND_REPLY_MESSAGE_V2, {"b": "T"}, None, None),
    (R.QUERY_CONSUMER_OFFSET, {"consumerGroup": "G", "topic": "T"}, None, None),
    (R.UPDATE_AND_CREATE_TOPIC, {"topic": "T"}, None, None),
    (R.UPDATE_AND_CREATE_ACL_CONFIG, {"accessKey": "someone"}, None, None),
]  # fmt: skip


@pytest.mark.parametrize(("code", "ext", "body", "needs"), TABLE)
def test_parse_resources(code, ext, body, needs):
    """Each code needs 4.9.3's resources; a group is its %RETRY% topic."""
    resource = parse(RemotingCommand(code, ext_fields=dict(ext), body=body), "10.0.0.7:50001")
    assert resource.resource_perm_map == needs
    assert resource.request_code == code
    assert resource.white_remote_address == "10.0.0.7"


def test_the_table_names_every_code_the_switch_has():
    """RESOURCES_BY_CODE lists the nine codes of PlainAccessValidator#parse's switch."""
    assert sorted(RESOURCES_BY_CODE) == [10, 11, 12, 15, 34, 35, 36, 38, 310]


def test_credentials_and_content():
    """AccessKey, Signature, SecurityToken read; the content is the sorted values without
    Signature and _UNIQUE_KEY_QUERY, then the body."""
    ext = {"b": "T", "a": "PG", "AccessKey": "ak12345", "Signature": "sig",
           "SecurityToken": "tok", "_UNIQUE_KEY_QUERY": "true"}  # fmt: skip
    r = parse(RemotingCommand(R.SEND_MESSAGE_V2, ext_fields=ext, body=b"xyz"), "127.0.0.1:1")
    assert (r.access_key, r.signature, r.secret_token) == ("ak12345", "sig", "tok")
    assert r.content == b"ak12345tokPGTxyz"


def test_no_ext_fields_stops_after_the_address():
    """A request without ext fields carries only its address and code."""
    r = parse(RemotingCommand(R.GET_BROKER_RUNTIME_INFO), "127.0.0.1:5")
    assert (r.access_key, r.content, r.resource_perm_map) == (None, None, None)
    assert r.white_remote_address == "127.0.0.1"
    assert parse(RemotingCommand(28), None).white_remote_address is None


def test_a_heartbeat_without_a_body_fails_as_in_java():
    """A null heartbeat body: Java's NullPointerException text, wrapped, at parse:124."""
    with pytest.raises(AclException) as e:
        parse(RemotingCommand(R.HEART_BEAT, ext_fields={"AccessKey": "x"}), "127.0.0.1:5")
    assert e.value.simple_desc() == (
        "org.apache.rocketmq.acl.common.AclException: Cannot read the array length because "
        '"bytes" is null, org.apache.rocketmq.acl.plain.PlainAccessValidator.parse('
        "PlainAccessValidator.java:124)"
    )


def test_print_str():
    """A group is named without its %RETRY% prefix."""
    assert print_str("%RETRY%G", True) == "group:G"
    assert print_str("T", False) == "topic:T"
