"""mqlab's producer, push consumer and pull consumer take an RPC hook as Java's constructors
do, and every request their client instance sends arrives signed: to the name server as well
as to the broker, one-way requests included (``MQClientAPIImpl`` registers the hook on its one
remoting client; ``NettyRemotingClient`` runs it in invokeSync, invokeAsync and invokeOneway).

Each request is checked as ``PlainAccessValidator#parse`` and ``PlainPermissionManager#validate``
check it: the ext fields as received (after the codec), sorted, ``Signature`` left out, then
the body, HmacSHA1 with the account's secret.
"""

from __future__ import annotations

import pytest

from mqlab import Lab, Message
from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook
from mqlab.acl.signature import SessionCredentials, cal_signature, combine_request_content
from mqlab.client.client_config import ClientConfig
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.client.producer.default_mq_producer import DefaultMQProducer
from mqlab.remoting.codes import RequestCode

USER = SessionCredentials("mqlabUser", "user-secret-1")
OTHER = SessionCredentials("mqlabOther", "other-secret-1")


def _record(lab: Lab) -> list[tuple[str, object]]:
    """Every request the name server and the broker receive: (the sender's node, request)."""
    seen: list[tuple[str, object]] = []
    for node in (lab.driver.nodes["namesrv"], lab.broker("broker-a")):
        original = node.process_request

        def spy(channel, request, _original=original):
            seen.append((channel.remote_node, request))
            return _original(channel, request)

        node.process_request = spy
    return seen


def _valid(request, credentials: SessionCredentials) -> bool:
    ext = dict(request.ext_fields or {})
    if ext.get("AccessKey") != credentials.access_key:
        return False
    ext.pop("_UNIQUE_KEY_QUERY", None)
    content = combine_request_content(ext, request.body)
    return ext.get("Signature") == cal_signature(content, credentials.secret_key)


def test_every_request_of_the_clients_is_signed_name_server_and_broker():
    lab = Lab(seed=7)
    seen = _record(lab)
    hook = AclClientRPCHook(USER)
    producer = lab.producer("acl_pg", name="signed-producer", rpc_hook=hook)
    for i in range(3):
        producer.send(Message("acl_t", f"m{i}".encode()))
    producer.send_oneway(Message("acl_t", b"oneway"))
    lab.push_consumer("acl_cg", "acl_t", name="signed-consumer", rpc_hook=AclClientRPCHook(USER),
                      consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
    puller = lab.pull_consumer("acl_pull", name="signed-puller", rpc_hook=AclClientRPCHook(USER))
    lab.run_until_idle()
    lab.advance(40_000)  # heartbeats, route refreshes, offset persistence
    mqs = puller.fetch_subscribe_message_queues("acl_t")
    lab.run_until_idle()
    assert len(mqs.get()) == 4  # auto-created from TBW102: 4 queues
    lab.producers["signed-producer"].shutdown()
    lab.run_until_idle()

    by_node: dict[str, set[int]] = {}
    for node, request in seen:
        if node.startswith("signed-"):
            assert _valid(request, USER), (node, RequestCode(request.code).name, request.ext_fields)
            by_node.setdefault(node, set()).add(request.code)
    codes = {n: {RequestCode(c).name for c in cs} for n, cs in by_node.items()}
    assert {"GET_ROUTEINFO_BY_TOPIC", "SEND_MESSAGE_V2", "HEART_BEAT",
            "UNREGISTER_CLIENT"} <= codes["signed-producer"]  # fmt: skip
    assert {"GET_ROUTEINFO_BY_TOPIC", "HEART_BEAT", "PULL_MESSAGE",
            "GET_CONSUMER_LIST_BY_GROUP"} <= codes["signed-consumer"]  # fmt: skip
    assert "GET_ROUTEINFO_BY_TOPIC" in codes["signed-puller"]
    # the one-way send arrived signed too (it is a SEND_MESSAGE_V2 marked one-way)
    oneway = [r for n, r in seen if n == "signed-producer" and r.is_oneway]
    assert len(oneway) == 1 and _valid(oneway[0], USER)
    # the lab's own unsigned clients and the broker's registrations carry no signature
    unsigned = [r for n, r in seen if not n.startswith("signed-")]
    assert unsigned and all("Signature" not in (r.ext_fields or {}) for r in unsigned)


def test_one_instance_one_hook_as_javas_client_manager_keeps_the_first():
    inst = MQClientInstance(ClientConfig(), name="c1", rpc_hook=AclClientRPCHook(USER))
    hook = inst.rpc_hook
    DefaultMQProducer("pg1", inst, rpc_hook=hook)  # the same hook again: fine
    with pytest.raises(ValueError, match="Java's MQClientManager would silently keep"):
        DefaultMQProducer("pg2", inst, rpc_hook=AclClientRPCHook(OTHER))
    with pytest.raises(TypeError, match="RPCHook"):
        MQClientInstance(ClientConfig(), name="c2", rpc_hook=USER)
    plain = MQClientInstance(ClientConfig(), name="c3")
    assert plain.rpc_hook is None
