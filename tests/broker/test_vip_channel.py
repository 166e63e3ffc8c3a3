"""The broker's VIP channel: ``listenPort - 2``, served in the simulation as under ``serve``.

Mirrors ``BrokerController#initialize`` (its ``fastRemotingServer``) and
``BrokerController#registerProcessor`` (RocketMQ 4.9.3): the fast server has every processor
of the main one but PULL_MESSAGE's, so a pull there reaches its default processor,
``AdminBrokerProcessor``, which answers REQUEST_CODE_NOT_SUPPORTED. A client with
``vipChannelEnabled`` sends there all but its pulls (``MixAll#brokerVIPChannel``), and a slave
its GET_ALL_TOPIC_CONFIG (``BrokerOuterAPI#getAllTopicConfig``).
"""

from __future__ import annotations

import pytest

from mqlab import Lab
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.runtime.sim import SimDriver
from tests.broker.test_slave_broker import MASTER_ADDR, pull_ext, send_ext

VIP_ADDR = "127.0.0.1:10909"


@pytest.fixture
def lab(tmp_path):
    with Lab(seed=3, store_dir=tmp_path) as lab:
        yield lab


def ask(lab: Lab, addr: str, code: RequestCode, ext: dict[str, str], body: bytes | None = None):
    call = lab.raw.send(addr, int(code), ext, body)
    lab.advance(10)
    return call.response


def test_the_vip_channel_takes_sends_and_refuses_pulls(lab):
    """A send on the VIP channel is SEND_OK and lands in the same queue; a pull there is
    REQUEST_CODE_NOT_SUPPORTED " request type 11 not supported", and the same pull on the main
    port finds the message; admin requests answer alike on both."""
    master = lab.broker("broker-a")
    assert (master.broker_addr, master.vip_addr) == (MASTER_ADDR, VIP_ADDR)
    sent = ask(lab, VIP_ADDR, RequestCode.SEND_MESSAGE_V2, send_ext(lab, "TopicTest"), b"vip")
    assert (sent.code, sent.ext("queueId"), sent.ext("queueOffset")) == (0, "0", "0")
    refused = ask(lab, VIP_ADDR, RequestCode.PULL_MESSAGE, pull_ext("TopicTest"))
    assert (refused.code, refused.remark) == (
        ResponseCode.REQUEST_CODE_NOT_SUPPORTED, " request type 11 not supported",
    )  # fmt: skip
    pulled = ask(lab, MASTER_ADDR, RequestCode.PULL_MESSAGE, pull_ext("TopicTest"))
    assert (pulled.code, pulled.ext("nextBeginOffset")) == (ResponseCode.SUCCESS, "1")
    tables = [ask(lab, a, RequestCode.GET_ALL_TOPIC_CONFIG, {}) for a in (MASTER_ADDR, VIP_ADDR)]
    assert [t.code for t in tables] == [0, 0] and tables[0].body == tables[1].body


def test_a_slave_asks_the_masters_vip_channel_for_its_topics(tmp_path):
    """SlaveSynchronize's GET_ALL_TOPIC_CONFIG goes to the master's VIP channel, the other
    three requests to its main port: two connections from the slave to the master."""
    with Lab(seed=5, slaves=1, store_dir=tmp_path) as lab:
        lab.advance(3_100)
        assert lab.broker("broker-a-s1").slave_synchronize.last_run[0] == (
            "GET_ALL_TOPIC_CONFIG", "same",
        )  # fmt: skip
        conns = sorted(a for c, a in lab.driver._conns if c == "broker-a-s1")
        assert conns == ["127.0.0.1:10909", "127.0.0.1:10911", "127.0.0.1:9876"]


def test_a_node_listening_on_the_vip_address_takes_it():
    """The VIP channel is served where no node listens: a node whose own address is a
    broker's VIP address keeps it (the simulation's first come does not win)."""
    from mqlab.broker.broker_controller import BrokerController
    from mqlab.runtime.context import Node

    d = SimDriver(seed=1)
    broker = BrokerController()
    d.add_node(broker, start=False)
    assert d._server_of(VIP_ADDR) == "broker-a"
    d.add_node(Node("other", VIP_ADDR), start=False)
    assert (d._server_of(VIP_ADDR), d._server_of(MASTER_ADDR)) == ("other", "broker-a")
    d.remove_node("broker-a")
    assert (d._server_of(VIP_ADDR), d._server_of(MASTER_ADDR)) == ("other", None)


def test_a_client_with_vip_channel_enabled_sends_there_and_pulls_on_the_main_port(tmp_path):
    """``sendMessageWithVIPChannel``: the producer's send reaches the broker on 10909; the
    heartbeat (``MQClientAPIImpl#sendHearbeat``) and the pull (``#pullMessage``) use the
    address as it is, 10911, as 4.9.3's do."""
    from mqlab.common.message import Message
    from tests.client.test_producer import make_cluster, pull, send

    c = make_cluster(tmp_path, start_producer=False)
    c.inst.client_config.vip_channel_enabled = True
    c.producer.send_message_with_vip_channel = True
    broker = c.brokers[0]
    seen: list[tuple[str, int, int]] = []
    orig = broker.process_request

    def spied(channel, request):
        response = orig(channel, request)
        if response is not None:
            seen.append((channel.local_address, request.code, response.code))
        return response

    broker.process_request = spied
    c.producer.start()
    r = send(c, Message("TopicTest", b"through the VIP channel")).get()
    assert (r.send_status.name, r.queue_offset) == ("SEND_OK", 0)
    c.inst.send_heartbeat_to_all_broker_with_lock()
    c.d.run_until_idle()
    *_, result = pull(c, broker, "TopicTest", r.message_queue.queue_id)
    assert (result.pull_status.name, result.next_begin_offset) == ("FOUND", 1)
    assert (VIP_ADDR, RequestCode.SEND_MESSAGE_V2, 0) in seen
    assert {a for a, code, _ in seen if code == RequestCode.HEART_BEAT} == {MASTER_ADDR}
    assert [a for a, code, _ in seen if code == RequestCode.PULL_MESSAGE] == [MASTER_ADDR]
