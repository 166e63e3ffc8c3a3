"""MQClientAPIImpl: request shapes and response mappings, against a fake server node.

Mirrors MQClientAPIImplTest (client/impl, RocketMQ 4.9.3) and docs/reference.md §2, §3, §1.8.
"""

from __future__ import annotations

import pytest

from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.pull_api_wrapper import PullStatus
from mqlab.client.exception import (
    MQBrokerException,
    MQClientException,
    RemotingTooMuchRequestException,
)
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.client.producer.message_batch import MessageBatch
from mqlab.client.producer.send_future import CommunicationMode
from mqlab.client.producer.send_result import SendStatus
from mqlab.common.message import Message, MessageExt, MessageQueue
from mqlab.remoting.bodies import (
    BrokerData,
    GetConsumerListByGroupResponseBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    QueueData,
    TopicRouteData,
)
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import (
    PullMessageRequestHeader,
    QueryConsumerOffsetRequestHeader,
    SendMessageRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from mqlab.runtime.context import Node, RemotingConnectException, RemotingTimeoutException
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import spawn

BROKER = "127.0.0.1:10911"
NAMESRV = "127.0.0.1:9876"


class FakeServer(Node):
    """Records every request; answers with ``handler(request)`` (None → no answer)."""

    def __init__(self, name, address, handler=None):
        super().__init__(name, address)
        self.requests: list[RemotingCommand] = []
        self.handler = handler

    def process_request(self, channel, request):
        self.requests.append(request)
        return None if self.handler is None else self.handler(request)


def reply(code, remark=None, ext=None, body=None, version=None):
    def handler(request):
        r = RemotingCommand.create_response(code, remark, dict(ext or {}), body)
        if version is not None:
            r.version = version
        return r

    return handler


@pytest.fixture
def env():
    d = SimDriver(seed=7)
    server = FakeServer("broker-a", BROKER)
    d.add_node(server)
    inst = MQClientInstance(ClientConfig(namesrv_addr=NAMESRV), name="c1")
    d.add_node(inst)
    return d, server, inst


def run(d, inst, gen, advance_ms=0):
    """Run a generator as a task until the simulation is idle (then ``advance_ms``)."""
    task = spawn(inst.ctx, gen, name="test", on_done=lambda t: None)
    d.run_until_idle()
    if advance_ms:
        d.advance(advance_ms)
    assert task.done, "the task did not finish"
    return task


def know_broker(inst):
    """Give the instance a route to broker-a (so cleanOfflineBroker keeps its address)."""
    inst.topic_route_table["T"] = TopicRouteData(
        queue_datas=(
            QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4, perm=6),
        ),
        broker_datas=(
            BrokerData(cluster="DefaultCluster", broker_name="broker-a", broker_addrs={0: BROKER}),
        ),
    )
    inst.broker_addr_table["broker-a"] = {0: BROKER}


def send_header(**kw):
    base = dict(
        producer_group="PG", topic="T", default_topic="TBW102", default_topic_queue_nums=4,
        queue_id=1, sys_flag=0, born_timestamp=0, flag=0, properties="WAIT\x01true",
        reconsume_times=0,
    )  # fmt: skip
    base.update(kw)
    return SendMessageRequestHeader(**base)


def test_send_message_sync_success_maps_header_fields(env):
    """SUCCESS with msgId "123", queueId 1, queueOffset 123 → SEND_OK, offsetMsgId "123" (MQClientAPIImplTest)."""
    d, server, inst = env
    server.handler = reply(0, ext={"msgId": "123", "queueId": "1", "queueOffset": "123"})
    msg = Message("T", b"body")
    msg.put_property("UNIQ_KEY", "ABCDEF")
    task = run(
        d, inst, inst.mq_client_api_impl.send_message(BROKER, "broker-a", msg, send_header(), 3000)
    )
    r = task.result
    assert r.send_status is SendStatus.SEND_OK
    assert r.offset_msg_id == "123"
    assert r.queue_offset == 123
    assert r.message_queue == MessageQueue("T", "broker-a", 1)
    assert r.msg_id == "ABCDEF"
    assert r.region_id == "DefaultRegion" and r.trace_on is True


@pytest.mark.parametrize(
    "code,status",
    [(10, SendStatus.FLUSH_DISK_TIMEOUT), (11, SendStatus.SLAVE_NOT_AVAILABLE),
     (12, SendStatus.FLUSH_SLAVE_TIMEOUT)],
)  # fmt: skip
def test_send_message_stored_codes_map_to_statuses(env, code, status):
    """Codes 10/11/12 are "stored" results, not errors (docs/reference.md §3 processSendResponse)."""
    d, server, inst = env
    server.handler = reply(code, ext={"msgId": "X", "queueId": "0", "queueOffset": "5"})
    task = run(
        d,
        inst,
        inst.mq_client_api_impl.send_message(
            BROKER, "broker-a", Message("T", b"b"), send_header(), 3000
        ),
    )
    assert task.result.send_status is status
    assert task.result.queue_offset == 5


def test_send_message_broker_error_raises_mq_broker_exception(env):
    """Code 1 "Broker is broken." → MQBrokerException with code, remark and address (MQClientAPIImplTest)."""
    d, server, inst = env
    server.handler = reply(ResponseCode.SYSTEM_ERROR, "Broker is broken.")
    task = run(
        d,
        inst,
        inst.mq_client_api_impl.send_message(
            BROKER, "broker-a", Message("T", b"b"), send_header(), 3000
        ),
    )
    e = task.error
    assert isinstance(e, MQBrokerException)
    assert (e.response_code, e.error_message, e.broker_addr) == (1, "Broker is broken.", BROKER)
    assert str(e) == (
        f"CODE: 1  DESC: Broker is broken. BROKER: {BROKER}"
        "\nFor more information, please visit the url, http://rocketmq.apache.org/docs/faq/"
    )


def test_send_message_region_and_trace_switch_come_from_ext_fields(env):
    """MSG_REGION is copied, TRACE_ON "false" turns tracing off (docs/reference.md §1.8)."""
    d, server, inst = env
    server.handler = reply(
        0,
        ext={
            "msgId": "1",
            "queueId": "0",
            "queueOffset": "0",
            "MSG_REGION": "R1",
            "TRACE_ON": "false",
        },
    )
    task = run(
        d,
        inst,
        inst.mq_client_api_impl.send_message(
            BROKER, "broker-a", Message("T", b"b"), send_header(), 3000
        ),
    )
    assert (task.result.region_id, task.result.trace_on) == ("R1", False)


def test_send_request_uses_send_message_v2_short_names(env):
    """A normal send is SEND_MESSAGE_V2 (310) with extFields a..m and the body (docs/reference.md §2.1, §2.2)."""
    d, server, inst = env
    server.handler = reply(0, ext={"msgId": "1", "queueId": "1", "queueOffset": "0"})
    run(
        d,
        inst,
        inst.mq_client_api_impl.send_message(
            BROKER, "broker-a", Message("T", b"abc"), send_header(), 3000
        ),
    )
    req = server.requests[0]
    assert req.code == RequestCode.SEND_MESSAGE_V2 == 310
    assert req.body == b"abc"
    assert req.ext_fields == {
        "a": "PG", "b": "T", "c": "TBW102", "d": "4", "e": "1", "f": "0", "g": "0", "h": "0",
        "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false",
    }  # fmt: skip


def test_send_request_code_for_batch_and_without_smart_msg(env):
    """Batches use SEND_BATCH_MESSAGE (320); with sendSmartMsg off a send is SEND_MESSAGE (10)."""
    d, server, inst = env
    server.handler = reply(0, ext={"msgId": "1", "queueId": "1", "queueOffset": "0"})
    api = inst.mq_client_api_impl
    batch = MessageBatch.generate_from_list([Message("T", b"1"), Message("T", b"2")])
    assert api.build_send_request(batch, send_header(batch=True)).code == 320
    api.send_smart_msg = False
    req = api.build_send_request(Message("T", b"x"), send_header())
    assert req.code == RequestCode.SEND_MESSAGE == 10
    assert req.ext_fields["producerGroup"] == "PG" and req.ext_fields["queueId"] == "1"


def test_send_message_oneway_sets_the_oneway_flag(env):
    """sendOneway writes a request with flag bit RPC_ONEWAY (2) and gets no answer (docs/reference.md §1.3)."""
    d, server, inst = env
    server.handler = reply(0)
    inst.mq_client_api_impl.send_message_oneway(BROKER, Message("T", b"x"), send_header())
    d.run_until_idle()
    assert len(server.requests) == 1
    assert server.requests[0].flag & 0x2 == 0x2


def test_async_send_timeout_is_given_up_by_the_scan_then_resends_fail_unwritten(env):
    """Async timeout (scanResponseTable: timeout + 1000 ms); the resends' budget is negative, so invokeAsync throws unwritten."""
    d, server, inst = env
    know_broker(inst)
    producer = inst.default_mq_producer.default_mq_producer_impl
    gen = inst.mq_client_api_impl.send_message_async(
        BROKER, "broker-a", Message("T", b"x"), send_header(), 3000, None, producer, 2
    )
    task = spawn(inst.ctx, gen, name="test", on_done=lambda t: None)
    d.advance(3999)
    assert not task.done
    d.advance(1)
    assert task.done and len(server.requests) == 1
    assert isinstance(task.error, RemotingTooMuchRequestException)
    assert str(task.error) == f"invokeAsync call the addr[{BROKER}] timeout"


def test_async_send_timeout_without_retries_reports_wait_response_timeout(env):
    """retryTimesWhenSendAsyncFailed 0: the callback gets MQClientException "wait response timeout 3000ms" (-1)."""
    d, server, inst = env
    know_broker(inst)
    producer = inst.default_mq_producer.default_mq_producer_impl
    gen = inst.mq_client_api_impl.send_message_async(
        BROKER, "broker-a", Message("T", b"x"), send_header(), 3000, None, producer, 0
    )
    task = run(d, inst, gen, advance_ms=5000)
    assert isinstance(task.error, MQClientException) and task.error.response_code == -1
    assert task.error.error_message == "wait response timeout 3000ms"
    assert len(server.requests) == 1


def test_async_send_reply_within_the_scan_grace_still_succeeds(env):
    """A reply 3400 ms after the async send (past the 3000 ms timeout, before the scan's +1000) is a success."""
    d, server, inst = env
    know_broker(inst)
    server.handler = reply(0, ext={"msgId": "1", "queueId": "1", "queueOffset": "7"})
    d.set_link("c1", "broker-a", latency_ms=1700)
    d.set_link("broker-a", "c1", latency_ms=1700)
    producer = inst.default_mq_producer.default_mq_producer_impl
    gen = inst.mq_client_api_impl.send_message_async(
        BROKER, "broker-a", Message("T", b"x"), send_header(), 3000, None, producer, 2
    )
    task = run(d, inst, gen)
    assert task.error is None and task.result.queue_offset == 7
    assert len(server.requests) == 1 and d.now == 3400


def test_async_send_resends_on_connect_error_and_not_on_broker_error(env):
    """Connect errors are resent to the same broker (no publish info); a refusing code is not retried."""
    d, server, inst = env
    know_broker(inst)
    server.handler = reply(0, ext={"msgId": "1", "queueId": "1", "queueOffset": "7"})
    producer = inst.default_mq_producer.default_mq_producer_impl
    api = inst.mq_client_api_impl
    task = run(d, inst, api.send_message_async("127.0.0.1:1", "broker-a", Message("T", b"x"),
                                               send_header(), 3000, None, producer, 2))  # fmt: skip
    assert task.error is None and len(server.requests) == 1  # retried at BROKER, which answers
    assert task.result.queue_offset == 7
    server.requests.clear()
    server.handler = reply(ResponseCode.SYSTEM_ERROR, "busy")
    task = run(d, inst, api.send_message_async(BROKER, "broker-a", Message("T", b"x"),
                                               send_header(), 3000, None, producer, 2))  # fmt: skip
    assert isinstance(task.error, MQBrokerException) and task.error.response_code == 1
    assert len(server.requests) == 1


def test_async_send_gives_up_after_three_connect_errors(env):
    """With no reachable broker the async send makes 3 attempts and reports the connect error."""
    d, server, inst = env
    producer = inst.default_mq_producer.default_mq_producer_impl
    api = inst.mq_client_api_impl
    task = run(d, inst, api.send_message_async("127.0.0.1:1", "broker-x", Message("T", b"x"),
                                               send_header(), 3000, None, producer, 2))  # fmt: skip
    assert isinstance(task.error, RemotingConnectException)


@pytest.mark.parametrize(
    "code,status",
    [(0, PullStatus.FOUND), (19, PullStatus.NO_NEW_MSG), (20, PullStatus.NO_MATCHED_MSG),
     (21, PullStatus.OFFSET_ILLEGAL)],
)  # fmt: skip
def test_pull_message_maps_codes_to_pull_status(env, code, status):
    """0/19/20/21 → FOUND / NO_NEW_MSG / NO_MATCHED_MSG / OFFSET_ILLEGAL with the header offsets (docs/reference.md §3)."""
    d, server, inst = env
    server.handler = reply(code, ext={"suggestWhichBrokerId": "1", "nextBeginOffset": "516",
                                      "minOffset": "100", "maxOffset": "1024"}, body=b"raw")  # fmt: skip
    h = PullMessageRequestHeader(consumer_group="G", topic="T", queue_id=1, queue_offset=456,
                                 max_msg_nums=32, sys_flag=2, commit_offset=0,
                                 suspend_timeout_millis=15000, sub_version=0)  # fmt: skip
    task = run(d, inst, inst.mq_client_api_impl.pull_message(BROKER, h, 30000))
    r = task.result
    assert r.pull_status is status
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (516, 100, 1024)
    assert r.suggest_which_broker_id == 1 and r.message_binary == b"raw"
    assert server.requests[0].code == RequestCode.PULL_MESSAGE
    assert server.requests[0].ext_fields["queueOffset"] == "456"


def _pull_header():
    return PullMessageRequestHeader(consumer_group="G", topic="T", queue_id=1, queue_offset=0,
                                    max_msg_nums=32, sys_flag=2, commit_offset=0,
                                    suspend_timeout_millis=15000, sub_version=0)  # fmt: skip


def test_async_pull_timeout_is_found_by_the_scan_1000_ms_late(env):
    """pullMessageAsync: scanResponseTable drops it at timeout + 1000 ms; the callback gets
    MQClientException "wait response from <addr> timeout :30000ms" (-1). A SYNC pull
    (pullMessageSync) times out at exactly 30000 ms."""
    d, server, inst = env  # the fake broker never answers
    api = inst.mq_client_api_impl
    task = spawn(inst.ctx, api.pull_message(BROKER, _pull_header(), 30000, CommunicationMode.ASYNC),
                 name="async", on_done=lambda t: None)  # fmt: skip
    sync = spawn(inst.ctx, api.pull_message(BROKER, _pull_header(), 30000),
                 name="sync", on_done=lambda t: None)  # fmt: skip
    d.advance(30_000)
    assert isinstance(sync.error, RemotingTimeoutException) and not task.done
    d.advance(999)
    assert not task.done
    d.advance(1)
    assert isinstance(task.error, MQClientException) and task.error.response_code == -1
    assert task.error.error_message == f"wait response from {BROKER} timeout :30000ms"


def test_async_pull_reply_within_the_scan_grace_is_a_result(env):
    """A pull reply 30 400 ms after an async pull (past its 30 s, before the scan) is used."""
    d, server, inst = env
    server.handler = reply(19, ext={"suggestWhichBrokerId": "0", "nextBeginOffset": "0",
                                    "minOffset": "0", "maxOffset": "0"})  # fmt: skip
    d.set_link("c1", "broker-a", latency_ms=15200)
    d.set_link("broker-a", "c1", latency_ms=15200)
    api = inst.mq_client_api_impl
    task = run(d, inst, api.pull_message(BROKER, _pull_header(), 30000, CommunicationMode.ASYNC))
    assert task.error is None and task.result.pull_status is PullStatus.NO_NEW_MSG
    assert d.now == 30_400


def test_pull_message_other_code_raises(env):
    """Any other pull code (e.g. SUBSCRIPTION_NOT_EXIST 24) → MQBrokerException (docs/reference.md §3)."""
    d, server, inst = env
    server.handler = reply(24, "the consumer's group info not exist")
    h = PullMessageRequestHeader(consumer_group="G", topic="T", queue_id=0, queue_offset=0)
    task = run(d, inst, inst.mq_client_api_impl.pull_message(BROKER, h, 30000))
    assert isinstance(task.error, MQBrokerException) and task.error.response_code == 24


def test_query_consumer_offset_success_and_not_found(env):
    """QUERY_CONSUMER_OFFSET: SUCCESS → the offset; QUERY_NOT_FOUND (22) → MQBrokerException."""
    d, server, inst = env
    api = inst.mq_client_api_impl
    h = QueryConsumerOffsetRequestHeader(consumer_group="G", topic="T", queue_id=0)
    server.handler = reply(0, ext={"offset": "1024"})
    assert run(d, inst, api.query_consumer_offset(BROKER, h, 5000)).result == 1024
    server.handler = reply(22, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
    e = run(d, inst, api.query_consumer_offset(BROKER, h, 5000)).error
    assert isinstance(e, MQBrokerException) and e.response_code == 22


def test_update_consumer_offset_oneway_request_shape(env):
    """The oneway UPDATE_CONSUMER_OFFSET carries group, topic, queueId, commitOffset and flag 2 (docs/reference.md §1.2)."""
    d, server, inst = env
    h = UpdateConsumerOffsetRequestHeader(
        consumer_group="g", topic="%RETRY%g", queue_id=0, commit_offset=18
    )
    inst.mq_client_api_impl.update_consumer_offset_oneway(BROKER, h)
    d.run_until_idle()
    req = server.requests[0]
    assert req.code == 15 and req.flag == 2
    assert req.ext_fields == {
        "consumerGroup": "g",
        "topic": "%RETRY%g",
        "queueId": "0",
        "commitOffset": "18",
    }


def test_max_min_and_search_offset(env):
    """GET_MAX_OFFSET / GET_MIN_OFFSET / SEARCH_OFFSET_BY_TIMESTAMP return the header's offset."""
    d, server, inst = env
    server.handler = reply(0, ext={"offset": "12345"})
    api = inst.mq_client_api_impl
    assert run(d, inst, api.get_max_offset(BROKER, "T", 0, 3000)).result == 12345
    assert run(d, inst, api.get_min_offset(BROKER, "T", 0, 3000)).result == 12345
    assert run(d, inst, api.search_offset(BROKER, "T", 0, 99, 3000)).result == 12345
    assert [r.code for r in server.requests] == [30, 31, 29]
    assert server.requests[2].ext_fields["timestamp"] == "99"


def test_get_consumer_id_list_needs_a_body(env):
    """GET_CONSUMER_LIST_BY_GROUP: SUCCESS with body → ids; SUCCESS without body → failure (docs/reference.md §1.8)."""
    d, server, inst = env
    api = inst.mq_client_api_impl
    body = GetConsumerListByGroupResponseBody(consumer_id_list=("b@2", "a@1")).encode()
    server.handler = reply(0, body=body)
    assert run(d, inst, api.get_consumer_id_list_by_group(BROKER, "G", 3000)).result == [
        "b@2",
        "a@1",
    ]
    server.handler = reply(0)
    e = run(d, inst, api.get_consumer_id_list_by_group(BROKER, "G", 3000)).error
    assert isinstance(e, MQBrokerException) and e.response_code == 0


def test_send_heartbeat_returns_the_broker_version(env):
    """HEART_BEAT → the reply's version (399 for 4.9.3), the body is the HeartbeatData JSON (docs/reference.md §2.3)."""
    d, server, inst = env
    server.handler = reply(0, version=399)
    hb = HeartbeatData(client_id="127.0.0.1@c1")
    assert run(d, inst, inst.mq_client_api_impl.send_heartbeat(BROKER, hb, 3000)).result == 399
    assert (
        server.requests[0].body
        == b'{"clientID":"127.0.0.1@c1","consumerDataSet":[],"producerDataSet":[]}'
    )


def test_lock_batch_mq_returns_the_locked_set(env):
    """LOCK_BATCH_MQ (41) → the lockOKMQSet of the reply (docs/reference.md §2.4)."""
    d, server, inst = env
    mq = MessageQueue("T", "broker-a", 0)
    server.handler = reply(0, body=LockBatchResponseBody(lock_ok_mq_set=(mq,)).encode())
    body = LockBatchRequestBody(consumer_group="G", client_id="c", mq_set=(mq,))
    assert run(d, inst, inst.mq_client_api_impl.lock_batch_mq(BROKER, body, 1000)).result == {mq}


def test_consumer_send_message_back_header(env):
    """CONSUMER_SEND_MSG_BACK carries offset = commit-log offset and originMsgId = UNIQ_KEY (docs/reference.md §2.2)."""
    d, server, inst = env
    server.handler = reply(0)
    msg = MessageExt(
        topic="T", commit_log_offset=123, msg_id="OFFSETID", properties={"UNIQ_KEY": "U1"}
    )
    run(d, inst, inst.mq_client_api_impl.consumer_send_message_back(BROKER, msg, "G", 0, 5000, 16))
    ext = server.requests[0].ext_fields
    assert (ext["offset"], ext["group"], ext["delayLevel"], ext["originMsgId"], ext["originTopic"],
            ext["maxReconsumeTimes"]) == ("123", "G", "0", "U1", "T", "16")  # fmt: skip


def test_route_lookup_topic_not_exist_and_success():
    """GET_ROUTEINFO_BY_TOPIC: TOPIC_NOT_EXIST → MQClientException(17); SUCCESS → TopicRouteData (docs/reference.md §2.5)."""
    d = SimDriver(seed=1)
    route = TopicRouteData(
        queue_datas=(
            QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4, perm=6),
        ),
        broker_datas=(
            BrokerData(cluster="DefaultCluster", broker_name="broker-a", broker_addrs={0: BROKER}),
        ),
    )

    def handler(request):
        if request.ext_fields["topic"] == "T":
            return RemotingCommand.create_response(0, None, {}, route.encode())
        return RemotingCommand.create_response(
            17, "No topic route info in name server for the topic: X", {}
        )

    ns = FakeServer("namesrv", NAMESRV, handler)
    d.add_node(ns)
    inst = MQClientInstance(ClientConfig(namesrv_addr=NAMESRV), name="c1")
    d.add_node(inst)
    api = inst.mq_client_api_impl
    assert run(d, inst, api.get_topic_route_info_from_name_server("T")).result == route
    e = run(d, inst, api.get_topic_route_info_from_name_server("X")).error
    assert isinstance(e, MQClientException) and e.response_code == 17
    assert ns.requests[0].code == RequestCode.GET_ROUTEINFO_BY_TOPIC == 105


def test_name_server_rotation_within_one_call():
    """getAndCreateNameserverChannel: the first name server is down, the same call asks the next; it stays chosen."""
    d = SimDriver(seed=1)
    ns = FakeServer("namesrv", "127.0.0.1:9877", reply(17, "none"))
    d.add_node(ns)
    inst = MQClientInstance(ClientConfig(namesrv_addr=f"{NAMESRV};127.0.0.1:9877"), name="c1")
    d.add_node(inst)
    api = inst.mq_client_api_impl
    for _ in range(2):
        e = run(d, inst, api.get_topic_route_info_from_name_server("X")).error
        assert isinstance(e, MQClientException) and e.response_code == 17
    assert len(ns.requests) == 2
    d.stop_node("namesrv")
    d.run_until_idle()
    e = run(d, inst, api.get_topic_route_info_from_name_server("X")).error
    assert isinstance(e, RemotingConnectException)
    assert str(e) == f"connect to [{NAMESRV}, 127.0.0.1:9877] failed"
    inst.client_config.namesrv_addr = None
    e = run(d, inst, api.get_topic_route_info_from_name_server("X")).error
    assert isinstance(e, RemotingConnectException) and str(e) == "connect to null failed"
