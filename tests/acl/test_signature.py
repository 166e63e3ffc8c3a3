"""mqlab.acl.signature: the bytes and the Base64 that 4.9.3's AclClientRPCHook gives.

The expected values came from rocketmq-acl-4.9.3.jar: ``new AclClientRPCHook(new
SessionCredentials("RocketMQ", "12345678")).doBeforeRequest(...)`` on a SEND_MESSAGE_V2
request built from the header below, body ``hello``.
"""

from __future__ import annotations

from mqlab.acl.signature import (
    SessionCredentials,
    cal_signature,
    combine_request_content,
    sign_request,
)
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand

#: SendMessageRequestHeaderV2 as Java put it on the wire (``l``, maxReconsumeTimes, is null)
V2 = {
    "a": "PG", "b": "TopicA", "c": "TBW102", "d": "4", "e": "1", "f": "0",
    "g": "1700000000000", "h": "0", "i": "KEYS\x01k1\x02", "j": "0", "k": "false", "m": "false",
}  # fmt: skip


def test_the_content_is_the_values_in_key_order_then_the_body():
    fields = {**V2, "AccessKey": "RocketMQ", "Signature": "left out"}
    assert combine_request_content(fields, b"hello") == (
        b"RocketMQPGTopicATBW10241017000000000000KEYS\x01k1\x020falsefalsehello"
    )
    assert combine_request_content({}, None) == b""


def test_a_send_is_signed_as_the_java_hook_signs_it():
    request = RemotingCommand(RequestCode.SEND_MESSAGE_V2, ext_fields=dict(V2), body=b"hello")
    sign_request(request, SessionCredentials("RocketMQ", "12345678"))
    assert request.ext_fields == {
        **V2, "AccessKey": "RocketMQ", "Signature": "6TENtnn88XL/L2Bt/TZC2gmyKtQ=",
    }  # fmt: skip


def test_signing_again_gives_the_same_signature_and_a_token_is_signed_too():
    request = RemotingCommand(RequestCode.SEND_MESSAGE_V2, ext_fields=dict(V2), body=b"hello")
    credentials = SessionCredentials("RocketMQ", "12345678")
    sign_request(sign_request(request, credentials), credentials)
    assert request.ext_fields["Signature"] == "6TENtnn88XL/L2Bt/TZC2gmyKtQ="
    token = SessionCredentials("RocketMQ", "12345678", security_token="T")
    signed = sign_request(RemotingCommand(RequestCode.SEND_MESSAGE_V2, ext_fields=dict(V2)), token)
    assert signed.ext_fields["SecurityToken"] == "T"
    content = combine_request_content({**V2, "AccessKey": "RocketMQ", "SecurityToken": "T"}, None)
    assert signed.ext_fields["Signature"] == cal_signature(content, "12345678")


def test_an_empty_content_signs_as_javas_hmac_sha1():
    assert cal_signature(b"", "12345678") == "beQgVA0KNM4WtCe68fj2DEn3WWU="
