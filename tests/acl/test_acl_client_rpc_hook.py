"""mqlab.acl.AclClientRPCHook on the requests mqlab's client builds, against 4.9.3's hook.

The expected ext fields, signatures and bodies are what ``tests/acl/java/HookPin.java`` printed
with rocketmq-acl-4.9.3.jar: ``new AclClientRPCHook(new SessionCredentials("mqlabUser",
"user-secret-1")).doBeforeRequest(...)`` on the same four requests built by the Java client's
classes (SendMessageRequestHeaderV2, PullMessageRequestHeader, HeartbeatData#encode, and a
request with no custom header), then ``makeCustomHeaderToNet``.
"""

from __future__ import annotations

import base64

import pytest

from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.acl.signature import SessionCredentials
from mqlab.client.mq_client_api_impl import _request
from mqlab.common.filter_api import FilterAPI
from mqlab.remoting.bodies import ConsumerData, HeartbeatData, ProducerData
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import (
    PullMessageRequestHeader,
    SendMessageRequestHeader,
    send_message_header_v2_to_ext_fields,
)

USER = SessionCredentials("mqlabUser", "user-secret-1")
HOOK = AclClientRPCHook(USER)

#: HookPin.java's output (ext fields after makeCustomHeaderToNet, sorted; body as Base64)
JAVA_SEND = {
    "AccessKey": "mqlabUser", "Signature": "dyQjZo51Rt67e7ufRpDgooRN1SA=", "a": "PG",
    "b": "TopicA", "c": "TBW102", "d": "4", "e": "1", "f": "0", "g": "1700000000000", "h": "0",
    "i": "KEYS\x01k1\x02WAIT\x01true\x02", "j": "0", "k": "false", "m": "false",
}  # fmt: skip
JAVA_PULL = {
    "AccessKey": "mqlabUser", "Signature": "0Vvg+ApX90IhUjrBscwhPIS+bTc=", "commitOffset": "0",
    "consumerGroup": "CG", "expressionType": "TAG", "maxMsgNums": "32", "queueId": "1",
    "queueOffset": "5", "subVersion": "1700000000001", "subscription": "TagA || TagB",
    "suspendTimeoutMillis": "15000", "sysFlag": "6", "topic": "TopicA",
}  # fmt: skip
JAVA_HEARTBEAT = {"AccessKey": "mqlabUser", "Signature": "ybJRqopEiYzwjXnI0YRc4q4BXR0="}
JAVA_HEARTBEAT_BODY = base64.b64decode(
    "eyJjbGllbnRJRCI6IjEyNy4wLjAuMUBtcWxhYiIsImNvbnN1bWVyRGF0YVNldCI6W3siY29uc3VtZUZyb21XaGVy"
    "ZSI6IkNPTlNVTUVfRlJPTV9MQVNUX09GRlNFVCIsImNvbnN1bWVUeXBlIjoiQ09OU1VNRV9QQVNTSVZFTFkiLCJn"
    "cm91cE5hbWUiOiJDRyIsIm1lc3NhZ2VNb2RlbCI6IkNMVVNURVJJTkciLCJzdWJzY3JpcHRpb25EYXRhU2V0Ijpb"
    "eyJjbGFzc0ZpbHRlck1vZGUiOmZhbHNlLCJjb2RlU2V0IjpbMjU5ODkxOV0sImV4cHJlc3Npb25UeXBlIjoiVEFH"
    "Iiwic3ViU3RyaW5nIjoiVGFnQSIsInN1YlZlcnNpb24iOjE3MDAwMDAwMDAwMDEsInRhZ3NTZXQiOlsiVGFnQSJd"
    "LCJ0b3BpYyI6IlRvcGljQSJ9XSwidW5pdE1vZGUiOmZhbHNlfV0sInByb2R1Y2VyRGF0YVNldCI6W3siZ3JvdXBO"
    "YW1lIjoiUEcifV19"
)
JAVA_NO_HEADER = {"AccessKey": "mqlabUser", "Signature": "7s6x0/n3lNR170UgkBtzKWxKkbI="}
JAVA_TOKEN = {
    "AccessKey": "mqlabUser", "SecurityToken": "tok-1", "Signature": "eWTiZEnRA1qT+XvLcnk+tOfL6N8=",
}  # fmt: skip


def _signed(request: RemotingCommand, hook: AclClientRPCHook = HOOK) -> RemotingCommand:
    hook.do_before_request("127.0.0.1:10911", request)
    # the ext fields as the broker reads them: through the codec and back
    return RemotingCommand.decode(request.encode())


def test_send_message_v2_as_mqlabs_producer_builds_it():
    header = SendMessageRequestHeader(
        producer_group="PG", topic="TopicA", default_topic="TBW102", default_topic_queue_nums=4,
        queue_id=1, sys_flag=0, born_timestamp=1700000000000, flag=0,
        properties="KEYS\x01k1\x02WAIT\x01true\x02", reconsume_times=0, unit_mode=False,
        batch=False,
    )  # fmt: skip
    request = RemotingCommand.create_request(
        RequestCode.SEND_MESSAGE_V2, send_message_header_v2_to_ext_fields(header), b"hello"
    )
    wire = _signed(request)
    assert wire.ext_fields == JAVA_SEND
    assert wire.body == b"hello"


def test_pull_message_as_mqlabs_consumer_builds_it():
    header = PullMessageRequestHeader(
        consumer_group="CG", topic="TopicA", queue_id=1, queue_offset=5, max_msg_nums=32,
        sys_flag=6, commit_offset=0, suspend_timeout_millis=15000, subscription="TagA || TagB",
        sub_version=1700000000001, expression_type="TAG",
    )  # fmt: skip
    wire = _signed(_request(RequestCode.PULL_MESSAGE, header))
    assert wire.ext_fields == JAVA_PULL
    assert wire.body is None


def test_heart_beat_with_a_body_the_body_is_signed_byte_for_byte():
    sub = FilterAPI.build_subscription_data("TopicA", "TagA", sub_version=1700000000001)
    consumer = ConsumerData(
        group_name="CG", consume_type="CONSUME_PASSIVELY", message_model="CLUSTERING",
        consume_from_where="CONSUME_FROM_LAST_OFFSET", subscription_data_set=(sub.to_json_dict(),),
    )  # fmt: skip
    body = HeartbeatData(
        client_id="127.0.0.1@mqlab", producer_data_set=(ProducerData(group_name="PG"),),
        consumer_data_set=(consumer,),
    ).encode()  # fmt: skip
    assert body == JAVA_HEARTBEAT_BODY
    wire = _signed(_request(RequestCode.HEART_BEAT, None, body))
    assert wire.ext_fields == JAVA_HEARTBEAT
    assert wire.body == JAVA_HEARTBEAT_BODY


def test_a_request_with_no_header_signs_the_access_key_alone():
    request = _request(RequestCode.GET_BROKER_CLUSTER_INFO, None)
    assert request.ext_fields is None
    assert _signed(request).ext_fields == JAVA_NO_HEADER


def test_a_security_token_is_sent_and_signed():
    hook = AclClientRPCHook(SessionCredentials("mqlabUser", "user-secret-1", "tok-1"))
    wire = _signed(_request(RequestCode.GET_BROKER_CLUSTER_INFO, None), hook)
    assert wire.ext_fields == JAVA_TOKEN


def test_the_unique_key_query_flag_is_sent_but_not_signed():
    """Java adds ``_UNIQUE_KEY_QUERY`` outside the header: its hook never signs it, and
    ``PlainAccessValidator#parse`` leaves it out of the content it checks."""
    with_flag = RemotingCommand.create_request(
        RequestCode.QUERY_MESSAGE, {"topic": "T", "_UNIQUE_KEY_QUERY": "true"}
    )
    without = RemotingCommand.create_request(RequestCode.QUERY_MESSAGE, {"topic": "T"})
    a, b = _signed(with_flag), _signed(without)
    assert a.ext_fields["_UNIQUE_KEY_QUERY"] == "true"
    assert a.ext_fields["Signature"] == b.ext_fields["Signature"]


def test_the_hook_takes_session_credentials_and_never_shows_the_secret():
    with pytest.raises(TypeError, match="SessionCredentials"):
        AclClientRPCHook(("mqlabUser", "user-secret-1"))  # type: ignore[arg-type]
    assert "user-secret-1" not in repr(HOOK)
    assert repr(HOOK) == "AclClientRPCHook(access_key='mqlabUser')"
