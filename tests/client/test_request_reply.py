"""Request-reply and the broker's calls to its clients, on the simulation driver.

``DefaultMQProducer.request`` (sync and RequestCallback), ReplyMessageProcessor (324/325 →
PUSH_REPLY_MESSAGE_TO_CLIENT 326), RequestFutureHolder's scan, and the forwarded admin
requests GET_CONSUMER_RUNNING_INFO (307), CONSUME_MESSAGE_DIRECTLY (309) and
INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223 → 221).
"""

from __future__ import annotations

import json
import zlib

from test_push_consumer import OK, ConsumerCluster

from mqlab.client.exception import MQClientException
from mqlab.client.message_util import create_reply_message
from mqlab.client.producer.default_mq_producer import DefaultMQProducer
from mqlab.client.producer.request_response import RequestTimeoutException
from mqlab.common.message import Message
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.fastjson import loads_json_body
from mqlab.runtime.raw_client import RawClient

REPLY_TOPIC = "DefaultCluster_REPLY_TOPIC"


class Replier:
    """A push consumer's listener that answers each request with "pong:<body>"."""

    def __init__(self) -> None:
        self.producer: DefaultMQProducer | None = None
        self.sends = []
        self.seen = []

    def __call__(self, msgs, ctx):
        for m in msgs:
            self.seen.append(m)
            if self.producer is not None:
                self.sends.append(self.producer.send(create_reply_message(m, b"pong:" + m.body)))
        return OK


class Callback:
    def __init__(self, d) -> None:
        self.d = d
        self.calls = []

    def on_success(self, msg):
        self.calls.append((self.d.now, "success", msg))

    def on_exception(self, e):
        self.calls.append((self.d.now, "exception", e))


def _cluster(tmp_path, *, reply=True, broker_kw=None):
    cl = ConsumerCluster(tmp_path, broker_kw=broker_kw)
    replier = Replier()
    c = cl.consumer("c1", listener=replier)
    if reply:
        replier.producer = DefaultMQProducer(
            "RPG", c.default_mq_push_consumer_impl.mq_client_factory
        )
        replier.producer.start()
    cl.d.advance(5000)  # rebalanced, pulling
    return cl, replier


def test_sync_request_gets_the_reply_pushed_to_the_requester(tmp_path):
    cl, replier = _cluster(tmp_path)
    t0 = cl.d.now
    fut = cl.producer.request(Message("T", b"ping"), timeout_ms=3000)
    cl.d.run_until(t0 + 3000)
    reply = fut.get()
    # the request carried the three properties prepareSendRequest adds
    req = replier.seen[0]
    assert (
        req.get_property("REPLY_TO_CLIENT")
        == cl.producer_instance.client_id
        == "127.0.0.1@producer"
    )
    assert req.get_property("TTL") == "3000"
    assert req.get_property("CLUSTER") == "DefaultCluster"
    assert (
        reply.get_property("CORRELATION_ID")
        == req.get_property("CORRELATION_ID")
        == fut.correlation_id
    )
    # the reply: topic, body, the properties the broker and the client add
    assert (reply.topic, reply.body, reply.queue_id) == (REPLY_TOPIC, b"pong:ping", 0)
    assert reply.get_property("MSG_TYPE") == "reply"
    assert reply.get_property("PUSH_REPLY_TIME") == str(reply.store_timestamp)
    assert int(reply.get_property("ARRIVE_TIME")) == int(reply.get_property("PUSH_REPLY_TIME")) + 1
    # the replier's send went out as SEND_REPLY_MESSAGE_V2 and was stored at offset 0
    sr = replier.sends[0].get()
    assert (sr.message_queue.topic, sr.message_queue.queue_id, sr.queue_offset) == (
        REPLY_TOPIC,
        0,
        0,
    )
    assert cl.broker.message_store.get_max_offset_in_queue(REPLY_TOPIC, 0) == 1
    # stored without PUSH_REPLY_TIME (the properties as sent)
    stored = cl.broker.message_store.look_message_by_offset(int(sr.offset_msg_id[-16:], 16))
    assert "PUSH_REPLY_TIME" not in stored.properties
    assert stored.properties["CORRELATION_ID"] == fut.correlation_id
    # pushed to the requester's channel, found by its client id
    push = [
        e for e in cl.events(component="ReplyMessageProcessor.processReplyMessageRequest", step="5")
    ]
    assert [(e.fields["pushed"], e.fields["client_id"]) for e in push] == [
        (True, "127.0.0.1@producer")
    ]
    # nothing left in the table
    assert cl.producer_instance.request_future_holder.request_future_table == {}


def test_sync_request_times_out_at_exactly_begin_plus_timeout(tmp_path):
    cl, replier = _cluster(tmp_path, reply=False)
    t0 = cl.d.now
    fut = cl.producer.request(Message("T", b"ping"), timeout_ms=3000)
    cl.d.run_until(t0 + 2999)
    assert not fut.done and len(replier.seen) == 1
    cl.d.run_until(t0 + 3000)
    assert fut.done
    assert isinstance(fut.error, RequestTimeoutException)
    assert fut.error.response_code == 10006
    assert str(fut.error) == (
        "CODE: 10006  DESC: send request message to <T> OK, but wait reply message timeout, 3000 ms."
    )
    assert cl.producer_instance.request_future_holder.request_future_table == {}


def test_callback_request_success_and_timeout_by_the_scan(tmp_path):
    cl, _ = _cluster(tmp_path)
    cb = Callback(cl.d)
    t0 = cl.d.now
    cl.producer.request(Message("T", b"ping"), timeout_ms=3000, callback=cb)
    cl.d.run_until(t0 + 3000)
    assert [(kind, m.body) for _, kind, m in cb.calls] == [("success", b"pong:ping")]

    # A request nobody answers: the scan runs every 1000 ms from 3000 ms after the
    # producer started (t=100 here), and expires it once now - begin > timeout.
    cl2, _ = _cluster(tmp_path / "b", reply=False)
    cb2 = Callback(cl2.d)
    begin = cl2.d.now
    assert begin == 5100
    cl2.producer.request(Message("T", b"ping"), timeout_ms=3000, callback=cb2)
    cl2.d.run_until(begin + 3000)  # 8100: a scan tick, but 3000 is not > 3000
    assert cb2.calls == []
    cl2.d.run_until(begin + 4000)
    assert [(t, kind, str(e)) for t, kind, e in cb2.calls] == [
        (9100, "exception", "CODE: 10006  DESC: request timeout, no reply message.")
    ]
    # the scan runs only while requests are in flight (same ticks as Java's every-second scan)
    assert not cl2.producer_instance.ctx.has_timer("RequestHouseKeepingService.scanExpiredRequest")


def test_request_to_a_topic_without_route_fails_as_mq_client_exception(tmp_path):
    cl, _ = _cluster(tmp_path)
    cl.producer.default_mq_producer_impl.default_mq_producer.create_topic_key = "NO_SUCH_DEFAULT"
    t0 = cl.d.now
    fut = cl.producer.request(Message("NoRoute", b"x"), timeout_ms=3000)
    cl.d.run_until(t0 + 3000)
    assert isinstance(fut.error, MQClientException)
    assert str(fut.error).startswith("send request message to <NoRoute> fail")
    assert "No route info of this topic: NoRoute" in str(fut.error.__cause__)


# -- the broker's side, with raw requests ------------------------------------------------------


def _raw(cl):
    raw = RawClient("raw")
    cl.d.add_node(raw)
    return raw


def _reply_ext(cl, props, *, v2=True):
    p = "".join(f"{k}\x01{v}\x02" for k, v in props.items())[:-1]
    if v2:
        return {"a": "RPG", "b": REPLY_TOPIC, "c": "TBW102", "d": "4", "e": "0", "f": "0",
                "g": str(cl.d.now), "h": "0", "i": p, "j": "0", "k": "false", "m": "false"}  # fmt: skip
    return {"producerGroup": "RPG", "topic": REPLY_TOPIC, "defaultTopic": "TBW102",
            "defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0",
            "bornTimestamp": str(cl.d.now), "flag": "0", "properties": p}  # fmt: skip


def _call(cl, raw, code, ext, body=None):
    call = raw.send(cl.broker.broker_addr, code, ext, body)
    cl.d.run_until(cl.d.now + 50)
    return call


def test_reply_to_a_client_that_is_not_connected_is_stored_but_refused(tmp_path):
    cl, _ = _cluster(tmp_path, reply=False)
    raw = _raw(cl)
    call = _call(cl, raw, RequestCode.SEND_REPLY_MESSAGE_V2,
                 _reply_ext(cl, {"MSG_TYPE": "reply", "REPLY_TO_CLIENT": "nobody@1"}), b"r")  # fmt: skip
    assert (call.code, call.remark) == (
        1,
        "push reply message fail, channel of <nobody@1> not found.",
    )
    assert call.ext("queueId") == "0" and call.ext("queueOffset") == "0"
    assert call.ext("msgId").endswith(f"{0:016X}")  # the reply is the first stored message
    assert call.ext("MSG_REGION") == "DefaultRegion" and call.ext("TRACE_ON") == "true"
    call = _call(
        cl,
        raw,
        RequestCode.SEND_REPLY_MESSAGE,
        _reply_ext(cl, {"MSG_TYPE": "reply"}, v2=False),
        b"r",
    )
    assert (call.code, call.remark) == (1, "reply message properties[REPLY_TO_CLIENT] is null")
    assert call.ext("queueOffset") == "1"
    assert cl.broker.message_store.get_max_offset_in_queue(REPLY_TOPIC, 0) == 2


def test_reply_not_stored_without_store_reply_message_enable(tmp_path):
    cl, _ = _cluster(tmp_path, reply=False, broker_kw={"store_reply_message_enable": False})
    raw = _raw(cl)
    client_id = cl.producer_instance.client_id
    call = _call(cl, raw, RequestCode.SEND_REPLY_MESSAGE_V2,
                 _reply_ext(cl, {"MSG_TYPE": "reply", "REPLY_TO_CLIENT": client_id,
                                 "CORRELATION_ID": "nobody-waits"}), b"r")  # fmt: skip
    # pushed (the client answers SUCCESS even when no request matches), not stored
    assert (call.code, call.remark) == (0, None)
    assert (call.ext("msgId"), call.ext("queueId"), call.ext("queueOffset")) == ("0", "0", "0")
    assert cl.broker.message_store.get_max_offset_in_queue(REPLY_TOPIC, 0) == 0


def test_push_to_a_client_that_does_not_answer_fails_after_10_s(tmp_path):
    cl, _ = _cluster(tmp_path, reply=False)
    raw = _raw(cl)
    hb = {"clientID": "raw@1", "producerDataSet": [{"groupName": "RAWPG"}], "consumerDataSet": []}
    _call(cl, raw, RequestCode.HEART_BEAT, None, json.dumps(hb).encode())
    t0 = cl.d.now
    call = raw.send(cl.broker.broker_addr, RequestCode.SEND_REPLY_MESSAGE_V2,
                    _reply_ext(cl, {"MSG_TYPE": "reply", "REPLY_TO_CLIENT": "raw@1"}), b"r")  # fmt: skip
    cl.d.run_until(t0 + 10_001)
    assert not call.done
    assert [r.request.code for r in raw.inbound] == [RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT]
    push = raw.inbound[0].request
    assert push.ext("bornHost").startswith("/127.0.0.1:")
    assert push.ext("storeHost") == "/" + cl.broker.broker_addr == "/127.0.0.1:10911"
    assert (push.ext("topic"), push.ext("producerGroup"), push.body) == (REPLY_TOPIC, "RPG", b"r")
    assert "PUSH_REPLY_TIME" in push.ext("properties")
    cl.d.run_until(t0 + 10_003)
    assert (call.code, call.remark, call.done_at - t0) == (
        1,
        "push reply message to raw@1fail.",
        10_002,
    )


def test_forwarded_consumer_running_info_consume_directly_and_status(tmp_path):
    cl, replier = _cluster(tmp_path, reply=False)
    raw = _raw(cl)
    consumer_id = "127.0.0.1@c1"
    sr = cl.send_and_wait("T", b"hello", queue_id=2)
    cl.d.advance(2000)
    # 307 to the consumer: its ConsumerRunningInfo
    call = _call(cl, raw, RequestCode.GET_CONSUMER_RUNNING_INFO,
                 {"consumerGroup": "CG", "clientId": consumer_id, "jstackEnable": "false"})  # fmt: skip
    assert call.code == 0
    info = loads_json_body(call.response.body)
    assert list(info) == ["mqTable", "properties", "statusTable", "subscriptionSet"]
    props = info["properties"]
    assert (props["PROP_CONSUME_TYPE"], props["PROP_CONSUMEORDERLY"], props["PROP_CLIENT_VERSION"],
            props["PROP_NAMESERVER_ADDR"], props["consumerGroup"]) == (
        "CONSUME_PASSIVELY", "false", "V4_9_3", "127.0.0.1:9876;", "CG")  # fmt: skip
    assert props["PROP_CONSUMER_START_TIMESTAMP"] == "100"  # built at t=100
    assert props["PROP_THREADPOOL_CORE_SIZE"] == "20"
    assert [s["topic"] for s in info["subscriptionSet"]] == ["%RETRY%CG", "T"]
    mq_table = {k.to_dict()["queueId"]: v for k, v in info["mqTable"].items()}
    assert sorted(mq_table) == [0, 1, 2, 3]
    assert mq_table[2]["commitOffset"] == 1 and mq_table[0]["commitOffset"] == 0
    assert set(info["statusTable"]) == {"%RETRY%CG", "T"}
    # not online / unknown group on the client
    call = _call(
        cl, raw, RequestCode.GET_CONSUMER_RUNNING_INFO, {"consumerGroup": "CG", "clientId": "x@y"}
    )
    assert (call.code, call.remark) == (1, "The Consumer <CG> <x@y> not online")
    # 309: the stored message through the listener once more
    seen = len(replier.seen)
    call = _call(cl, raw, RequestCode.CONSUME_MESSAGE_DIRECTLY,
                 {"consumerGroup": "CG", "clientId": consumer_id, "msgId": sr.offset_msg_id})  # fmt: skip
    assert call.code == 0
    assert json.loads(call.response.body) == {
        "autoCommit": True,
        "consumeResult": "CR_SUCCESS",
        "order": False,
        "spentTimeMills": 0,
    }
    assert [m.body for m in replier.seen[seen:]] == [b"hello"]
    call = _call(cl, raw, RequestCode.CONSUME_MESSAGE_DIRECTLY,
                 {"consumerGroup": "CG", "clientId": consumer_id,
                  "msgId": sr.offset_msg_id[:-16] + f"{999_999:016X}"})  # fmt: skip
    assert (call.code, call.remark) == (1, (
        "java.lang.NullPointerException, org.apache.rocketmq.broker.processor."
        "AdminBrokerProcessor.consumeMessageDirectly(AdminBrokerProcessor.java:1213)"))  # fmt: skip
    # 223 → 221 to each consumer of the group
    call = _call(
        cl, raw, RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, {"topic": "T", "group": "CG"}
    )
    assert call.code == 0
    body = loads_json_body(call.response.body)
    table = {k.to_dict()["queueId"]: v for k, v in body["consumerTable"][consumer_id].items()}
    assert table == {0: 0, 1: 0, 2: 1, 3: 0}
    assert body["messageQueueTable"] == {}
    call = _call(
        cl,
        raw,
        RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS,
        {"topic": "T", "group": "NoSuchGroup"},
    )
    assert (call.code, call.remark) == (1, (
        "java.lang.NullPointerException, org.apache.rocketmq.broker.client.net."
        "Broker2Client.getConsumeStatus(Broker2Client.java:243)"))  # fmt: skip


def test_forwarding_to_an_old_or_silent_client(tmp_path):
    cl, _ = _cluster(tmp_path, reply=False)
    raw = _raw(cl)
    hb = {"clientID": "old@1", "producerDataSet": [], "consumerDataSet": [{
        "groupName": "OLDCG", "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
        "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionDataSet": [], "unitMode": False}]}  # fmt: skip
    raw.send(
        cl.broker.broker_addr, RequestCode.HEART_BEAT, None, json.dumps(hb).encode(), version=50
    )
    cl.d.run_until(cl.d.now + 50)
    call = _call(
        cl,
        raw,
        RequestCode.GET_CONSUMER_RUNNING_INFO,
        {"consumerGroup": "OLDCG", "clientId": "old@1"},
    )
    assert (call.code, call.remark) == (1, (
        "The Consumer <old@1> Version <V3_1_2_SNAPSHOT> too low to finish, please upgrade it to "
        "V3_1_8_SNAPSHOT"))  # fmt: skip
    # version 50 ≥ V3_0_7_SNAPSHOT (28): asked with 221; no answer in 5 s is only logged
    t0 = cl.d.now
    call = raw.send(cl.broker.broker_addr, RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS,
                    {"topic": "T", "group": "OLDCG"})  # fmt: skip
    cl.d.run_until(t0 + 5010)
    assert (call.code, call.done_at - t0) == (0, 5002)
    assert json.loads(call.response.body) == {"consumerTable": {}, "messageQueueTable": {}}
    # (after the NOTIFY_CONSUMER_IDS_CHANGED its heartbeat caused)
    assert [r.request.code for r in raw.inbound] == [
        RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
        RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT,
    ]
    assert raw.inbound[1].request.ext_fields == {"topic": "T", "group": "OLDCG"}
    raw2 = RawClient("raw2")
    cl.d.add_node(raw2)
    hb["clientID"] = "silent@1"
    hb["consumerDataSet"][0]["groupName"] = "SILENTCG"
    raw2.send(cl.broker.broker_addr, RequestCode.HEART_BEAT, None, json.dumps(hb).encode())
    cl.d.run_until(cl.d.now + 50)
    t0 = cl.d.now
    call = raw.send(cl.broker.broker_addr, RequestCode.GET_CONSUMER_RUNNING_INFO,
                    {"consumerGroup": "SILENTCG", "clientId": "silent@1"})  # fmt: skip
    cl.d.run_until(t0 + 10_010)
    assert call.code == 207  # CONSUME_MSG_TIMEOUT after callClient's 10 s
    assert call.remark.startswith("consumer <SILENTCG> <silent@1> Timeout: ")
    assert call.done_at - t0 == 10_002


def test_a_compressed_reply_is_inflated_by_the_requester(tmp_path):
    """A reply body over compressMsgBodyOverHowmuch (4096 B) is sent compressed (sysFlag 1);
    the push carries the header's sysFlag and ClientRemotingProcessor#receiveReplyMessage
    inflates it."""
    cl, replier = _cluster(tmp_path)
    t0 = cl.d.now
    big = b"x" * 5000
    fut = cl.producer.request(Message("T", big), timeout_ms=3000)
    cl.d.run_until(t0 + 3000)
    reply = fut.get()
    assert reply.body == b"pong:" + big
    stored = cl.broker.message_store.look_message_by_offset(
        int(replier.sends[0].get().offset_msg_id[-16:], 16)
    )
    # ReplyMessageProcessor never copies the header's sysFlag to the stored message: the
    # compressed bytes are stored with sysFlag 0, as on a 4.9.3 broker
    assert stored.sys_flag == 0
    assert zlib.decompress(stored.body) == b"pong:" + big


class _TickingClock:
    """The broker's context, with a clock that moves 1 ms at every read (a wall clock may
    between two reads on the net driver)."""

    def __init__(self, ctx):
        self._ctx, self._reads = ctx, 0

    @property
    def now_ms(self):
        self._reads += 1
        return self._ctx.now_ms + self._reads

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def test_push_reply_time_is_read_after_the_store_timestamp(tmp_path):
    """ReplyMessageProcessor#pushReplyMessage reads the clock for storeTimestamp (L162), then
    for PUSH_REPLY_TIME (L184). mqlab read them the other way round, so on a wall clock the
    push time came 1 ms before the store time now and then (the conformance run's
    reply-forwarding rows, dry runs of 2026-11-29)."""
    cl, _replier = _cluster(tmp_path)
    pushes = []
    real = cl.broker.ctx
    ticking = _TickingClock(real)

    def invoke_channel(target, push, timeout, cb):
        pushes.append(push)
        real.invoke_channel(target, push, timeout, cb)

    ticking.invoke_channel = invoke_channel
    processor = cl.broker.reply_message_processor
    broker = processor.broker
    broker.ctx = ticking
    try:
        t0 = cl.d.now
        fut = cl.producer.request(Message("T", b"ping"), timeout_ms=3000)
        cl.d.run_until(t0 + 3000)
    finally:
        broker.ctx = real
    assert fut.get().body == b"pong:ping"
    [push] = pushes
    from mqlab.common.message_decoder import string_to_message_properties

    props = string_to_message_properties(push.ext_fields["properties"])
    assert int(props["PUSH_REPLY_TIME"]) - int(push.ext_fields["storeTimestamp"]) == 1
