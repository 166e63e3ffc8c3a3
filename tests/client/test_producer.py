"""DefaultMQProducer against a real name server and brokers on the simulation driver.

docs/reference.md §2.5 (TBW102 fallback), §2.7 (retries), §4.3 (compression), §4.5 (UNIQ_KEY), §8.4
(defaults), §10.6 (batches); DefaultMQProducerImpl#sendDefaultImpl / #sendKernelImpl /
#sendSelectImpl (RocketMQ 4.9.3).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from mqlab.broker.broker_controller import BrokerController
from mqlab.broker.config import BrokerConfig
from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.pull_api_wrapper import PullAPIWrapper, PullStatus
from mqlab.client.exception import (
    MQBrokerException,
    MQClientException,
    RemotingTooMuchRequestException,
)
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.client.producer import (
    DefaultMQProducer,
    SelectMessageQueueByHash,
    SelectMessageQueueByRandom,
    SendStatus,
)
from mqlab.client.producer.message_queue_selector import java_hash_code
from mqlab.common.filter_api import FilterAPI, java_string_hash
from mqlab.common.message import Message, MessageQueue
from mqlab.common.message_decoder import decodes
from mqlab.common.sysflag import MessageSysFlag, PullSysFlag
from mqlab.common.topic_config import TopicConfig
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import RequestCode
from mqlab.runtime.context import RemotingConnectException
from mqlab.runtime.sim import SimDriver
from mqlab.runtime.task import spawn
from mqlab.store.config import MessageStoreConfig

FAR_FUTURE = 10**13  # year 2286: the broker refuses sends until then


def make_cluster(tmp_path, brokers=1, seed=1, start_producer=True, **broker_kw):
    """A name server, ``brokers`` brokers (broker-a :10911, broker-b :10921) and a producer."""
    d = SimDriver(seed=seed)
    ns = NamesrvController()
    d.add_node(ns)
    bs = []
    for i in range(brokers):
        letter = "abc"[i]
        cfg = BrokerConfig(broker_name=f"broker-{letter}", listen_port=10911 + 10 * i, **broker_kw)
        store = MessageStoreConfig(store_path_root_dir=str(tmp_path / f"store-{letter}"))
        b = BrokerController(cfg, store)
        d.add_node(b)
        bs.append(b)
    d.run_until_idle()
    inst = MQClientInstance(name="producer-1")
    d.add_node(inst)
    producer = DefaultMQProducer("PG", inst)
    if start_producer:
        producer.start()
    return SimpleNamespace(d=d, ns=ns, brokers=bs, inst=inst, producer=producer)


def spy(node):
    """Record (request, response) of every request ``node`` handles."""
    seen = []
    orig = node.process_request

    def wrapped(channel, request):
        response = orig(channel, request)
        seen.append((request, response))
        return response

    node.process_request = wrapped
    return seen


def send(c, msg, **kw):
    f = c.producer.send(msg, **kw)
    c.d.run_until_idle()
    return f


def warm_up_route(c, topic):
    """Fetch the topic's publish info without sending (the TBW102 route for a new topic)."""
    impl = c.producer.default_mq_producer_impl
    t = spawn(c.inst.ctx, impl.try_to_find_topic_publish_info(topic), on_done=lambda t: None)
    c.d.run_until_idle()
    return t.result


def next_queue(info):
    """The queue the next (first-attempt) send will use, without moving the cursor."""
    n = len(info.message_queue_list)
    return info.message_queue_list[info.send_which_queue.peek() % n]


def pull(c, broker, topic, queue_id, offset=0, sub="*"):
    wrapper = PullAPIWrapper(c.inst, "CG")
    mq = MessageQueue(topic, broker.broker_config.broker_name, queue_id)
    gen = wrapper.pull_kernel_impl(
        mq, sub, "TAG", 0, offset, 32, PullSysFlag.build_sys_flag(False, False, True, False),
        0, 15000, 30000,
    )  # fmt: skip
    t = spawn(c.inst.ctx, gen, on_done=lambda t: None)
    c.d.run_until_idle()
    assert t.error is None, t.error
    return wrapper, mq, t.result


# -- first send, auto-create -----------------------------------------------------------------


def test_first_send_to_unknown_topic_borrows_tbw102_route_and_auto_creates(tmp_path):
    """Unknown topic: NS TOPIC_NOT_EXIST, then TBW102's route; the broker creates it with 4 queues; SEND_OK at offset 0."""
    c = make_cluster(tmp_path)
    ns_seen = spy(c.ns)
    f = send(c, Message("TopicNew", b"hello"))
    r = f.get()
    assert r.send_status is SendStatus.SEND_OK
    assert r.queue_offset == 0
    assert r.message_queue.topic == "TopicNew" and r.message_queue.broker_name == "broker-a"
    lookups = [
        (q.ext_fields["topic"], p.code)
        for q, p in ns_seen
        if q.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
    ]
    assert lookups[:2] == [("TopicNew", 17), ("TBW102", 0)]
    tc = c.brokers[0].topic_config_manager.select_topic_config("TopicNew")
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (4, 4, 6)
    info = c.producer.default_mq_producer_impl.topic_publish_info_table["TopicNew"]
    assert [mq.queue_id for mq in info.message_queue_list] == [0, 1, 2, 3]


def test_send_request_header_carries_producer_defaults(tmp_path):
    """SEND_MESSAGE_V2 header: a=group, c=TBW102, d=4, e=queue, f=0, i keeps WAIT=true, j=0 (docs/reference.md §2.2, §8.4)."""
    c = make_cluster(tmp_path)
    seen = spy(c.brokers[0])
    r = send(c, Message("T", b"hello", tags="TagA", keys="k1")).get()
    req = next(q for q, _ in seen if q.code == RequestCode.SEND_MESSAGE_V2)
    ext = req.ext_fields
    assert (ext["a"], ext["b"], ext["c"], ext["d"], ext["e"], ext["f"], ext["j"], ext["k"], ext["m"]) == (
        "PG", "T", "TBW102", "4", str(r.message_queue.queue_id), "0", "0", "false", "false"
    )  # fmt: skip
    props = dict(p.split("\x01") for p in ext["i"].split("\x02"))
    assert props["WAIT"] == "true" and props["TAGS"] == "TagA" and props["KEYS"] == "k1"
    assert props["UNIQ_KEY"] == r.msg_id


# -- queue selection -----------------------------------------------------------------------------


def test_round_robin_over_four_queues(tmp_path):
    """Successive sends take queue ids in cyclic order after the random start; 8 sends → 2 per queue (docs/reference.md §2.5)."""
    c = make_cluster(tmp_path)
    send(c, Message("T", b"first")).get()  # creates T; the route refresh settles the publish info
    c.d.advance(100)
    ids = [send(c, Message("T", b"m%d" % i)).get().message_queue.queue_id for i in range(8)]
    start = ids[0]
    assert ids == [(start + k) % 4 for k in range(8)]


def create_topic(c, topic, queue_nums=4):
    """Create ``topic`` on every broker (UPDATE_AND_CREATE_TOPIC's effect) and re-register."""
    for b in c.brokers:
        tc = TopicConfig(topic, read_queue_nums=queue_nums, write_queue_nums=queue_nums)
        b.topic_config_manager.update_topic_config(tc, c.d.now)
        b.register_broker_all()
    c.d.run_until_idle()


def test_round_robin_across_two_brokers(tmp_path):
    """With T on two brokers the 8 queues are broker-a 0..3 then broker-b 0..3, visited in cyclic order."""
    c = make_cluster(tmp_path, brokers=2)
    create_topic(c, "T")
    mqs = [send(c, Message("T", b"m%d" % i)).get().message_queue for i in range(8)]
    order = [("broker-a", q) for q in range(4)] + [("broker-b", q) for q in range(4)]
    got = [(mq.broker_name, mq.queue_id) for mq in mqs]
    k = order.index(got[0])
    assert got == [order[(k + i) % 8] for i in range(8)]


def test_auto_created_topic_converges_on_the_first_broker(tmp_path):
    """mechanisms.md "Topic auto-creation": auto-creation from TBW102 makes only the broker that got the first message own T; later sends stay there."""
    c = make_cluster(tmp_path, brokers=2)
    first = send(c, Message("T", b"first")).get().message_queue.broker_name
    c.d.advance(100)  # the route refresh (10 ms after start) now finds T on one broker only
    brokers = {send(c, Message("T", b"m%d" % i)).get().message_queue.broker_name for i in range(8)}
    assert brokers == {first}
    owners = [b.broker_config.broker_name for b in c.brokers
              if b.topic_config_manager.select_topic_config("T") is not None]  # fmt: skip
    assert owners == [first]


def test_first_send_with_the_first_name_server_down(tmp_path):
    """Two name servers, the first unreachable: the first route lookup asks the second within the same call; SEND_OK."""
    c = make_cluster(tmp_path, start_producer=False)
    inst = MQClientInstance(ClientConfig(namesrv_addr="127.0.0.1:9999;127.0.0.1:9876"), name="p2")
    c.d.add_node(inst)
    producer = DefaultMQProducer("PG2", inst)
    producer.start()
    f = producer.send(Message("T", b"x"))
    c.d.run_until_idle()
    assert f.error is None and f.result.send_status is SendStatus.SEND_OK


def test_sync_send_retries_on_the_other_broker(tmp_path):
    """A SYSTEM_ERROR reply is retried on a queue of the other broker (lastBrokerName avoidance), which stores it."""
    c = make_cluster(tmp_path, brokers=2)
    info = warm_up_route(c, "T")
    first = next_queue(info)
    bad = next(b for b in c.brokers if b.broker_config.broker_name == first.broker_name)
    bad.broker_config.start_accept_send_request_time_stamp = FAR_FUTURE
    seen = [spy(b) for b in c.brokers]
    r = send(c, Message("T", b"x")).get()
    assert r.send_status is SendStatus.SEND_OK
    assert r.message_queue.broker_name != first.broker_name
    codes = [(q.code, p.code) for s in seen for q, p in s if q.code == RequestCode.SEND_MESSAGE_V2]
    assert sorted(codes) == [(310, 0), (310, 1)]


def test_sync_send_gives_up_after_three_attempts(tmp_path):
    """Both brokers refuse: 3 attempts (1 + retryTimesWhenSendFailed 2), alternating brokers, then MQClientException(1)."""
    c = make_cluster(tmp_path, brokers=2, start_accept_send_request_time_stamp=FAR_FUTURE)
    seen = [spy(b) for b in c.brokers]
    f = send(c, Message("T", b"x"))
    e = f.error
    assert isinstance(e, MQClientException)
    assert e.response_code == 1
    m = re.match(
        r"Send \[3\] times, still failed, cost \[\d+\]ms, Topic: T, BrokersSent: \[(.*)\]",
        e.error_message,
    )
    assert m is not None
    sent = m.group(1).split(", ")
    assert len(sent) == 3 and sent[0] != sent[1] and sent[0] == sent[2]
    assert sum(1 for s in seen for q, _ in s if q.code == RequestCode.SEND_MESSAGE_V2) == 3
    assert isinstance(e.__cause__, MQBrokerException)
    assert str(e) == e.error_message  # setResponseCode(1): no "CODE: 1  DESC: " prefix
    assert e.error_message.endswith(
        "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
    )


def test_no_route_and_no_name_server_texts(tmp_path):
    """No route: plain "No route info of this topic: X\nSee ..." (10005); no name server address: 10004, plain."""
    c = make_cluster(tmp_path, auto_create_topic_enable=False)
    e = send(c, Message("NoSuchTopic", b"x")).error
    assert isinstance(e, MQClientException) and e.response_code == 10005
    assert str(e) == (
        "No route info of this topic: NoSuchTopic"
        "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
    )
    # validateNameServerSetting (the route lookup before it already fails without one)
    inst = MQClientInstance(ClientConfig(namesrv_addr=None), name="p2")
    with pytest.raises(MQClientException) as info:
        DefaultMQProducer("PG2", inst).default_mq_producer_impl._validate_name_server_setting()
    assert info.value.response_code == 10004
    assert str(info.value) == (
        "No name server address, please set it."
        "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
    )


def test_sync_send_timeout_is_not_resent_with_a_used_up_budget(tmp_path):
    """The reply comes after 4 s: the one attempt times out at +3000 ms and is not resent (sendDefaultImpl call timeout)."""
    c = make_cluster(tmp_path, brokers=2)
    warm_up_route(c, "T")
    for b in ("broker-a", "broker-b"):
        c.d.set_link("producer-1", b, latency_ms=4000)
    seen = [spy(b) for b in c.brokers]
    t0 = c.d.now
    f = c.producer.send(Message("T", b"x"))
    c.d.run_until(t0 + 2999)
    assert not f.done
    c.d.run_until(t0 + 3000)
    assert isinstance(f.error, RemotingTooMuchRequestException)
    assert str(f.error) == "sendDefaultImpl call timeout"
    c.d.run_until(t0 + 20000)
    assert sum(1 for s in seen for q, _ in s if q.code == RequestCode.SEND_MESSAGE_V2) == 1


def test_non_retry_code_is_thrown_at_once(tmp_path):
    """MESSAGE_ILLEGAL (13, properties over 32767 bytes) is not a retry code: one attempt, MQBrokerException."""
    c = make_cluster(tmp_path, brokers=2)
    seen = [spy(b) for b in c.brokers]
    f = send(c, Message("T", b"x", properties={"big": "v" * 40000}))
    assert isinstance(f.error, MQBrokerException) and f.error.response_code == 13
    assert sum(1 for s in seen for q, _ in s if q.code == RequestCode.SEND_MESSAGE_V2) == 1


# -- async, oneway -------------------------------------------------------------------------------


def test_async_send_calls_back_once_with_the_result(tmp_path):
    """send(msg, callback=...) calls back exactly once with (SendResult, None)."""
    c = make_cluster(tmp_path)
    calls = []
    f = c.producer.send(Message("T", b"a"), callback=lambda r, e: calls.append((r, e)))
    assert calls == [] and not f.done
    c.d.run_until_idle()
    assert len(calls) == 1
    r, e = calls[0]
    assert e is None and r.send_status is SendStatus.SEND_OK and r.queue_offset == 0
    assert f.result is r


def test_async_send_broker_refusal_is_not_retried(tmp_path):
    """Async: a refusing reply goes to the callback after one attempt (MQClientAPIImpl#sendMessageAsync)."""
    c = make_cluster(tmp_path, brokers=2, start_accept_send_request_time_stamp=FAR_FUTURE)
    seen = [spy(b) for b in c.brokers]
    calls = []
    c.producer.send(Message("T", b"a"), callback=lambda r, e: calls.append((r, e)))
    c.d.run_until_idle()
    assert len(calls) == 1 and calls[0][0] is None
    assert isinstance(calls[0][1], MQBrokerException) and calls[0][1].response_code == 1
    assert sum(1 for s in seen for q, _ in s if q.code == RequestCode.SEND_MESSAGE_V2) == 1


def test_async_send_connect_error_is_resent_to_the_other_broker(tmp_path):
    """Async: a broker that cannot be reached → the same request goes to the other broker (onExceptionImpl)."""
    c = make_cluster(tmp_path, brokers=2)
    info = warm_up_route(c, "T")
    first = next_queue(info)
    c.d.set_link("producer-1", first.broker_name, down=True)
    calls = []
    c.producer.send(Message("T", b"a"), callback=lambda r, e: calls.append((r, e)))
    c.d.run_until_idle()
    ((r, e),) = calls
    assert e is None and r.send_status is SendStatus.SEND_OK
    assert r.message_queue.broker_name != first.broker_name
    assert r.message_queue.queue_id == first.queue_id  # Java resends the same header (queue id)


def test_async_send_timeout_is_stored_once(tmp_path):
    """Async, replies after 8 s: given up at +4000 ms (timeout + scan grace); the resends fail unwritten; one message stored."""
    c = make_cluster(tmp_path, brokers=2)
    warm_up_route(c, "T")
    for b in ("broker-a", "broker-b"):
        c.d.set_link("producer-1", b, latency_ms=4000)
    t0 = c.d.now
    calls = []
    c.producer.send(Message("T", b"x"), callback=lambda r, e: calls.append((c.d.now - t0, r, e)))
    c.d.run_until(t0 + 20000)
    ((dt, r, e),) = calls
    assert dt == 4000 and r is None
    assert isinstance(e, RemotingTooMuchRequestException)
    assert re.fullmatch(r"invokeAsync call the addr\[127\.0\.0\.1:109[12]1\] timeout", str(e))
    stored = sum(
        b.message_store.get_max_offset_in_queue("T", q) for b in c.brokers for q in range(4)
    )
    assert stored == 1


def test_oneway_send_is_stored_without_a_result(tmp_path):
    """send_oneway completes with no result once written; the broker stores the message."""
    c = make_cluster(tmp_path)
    f = c.producer.send_oneway(Message("T", b"oneway"))
    c.d.run_until_idle()
    assert f.done and f.result is None and f.error is None
    store = c.brokers[0].message_store
    assert sum(store.get_max_offset_in_queue("T", q) for q in range(4)) == 1


def test_oneway_send_to_an_unreachable_broker_fails_after_one_attempt(tmp_path):
    """invokeOneway throws RemotingConnectException: "Send [1] times, still failed", code CONNECT_BROKER_EXCEPTION."""
    c = make_cluster(tmp_path)
    warm_up_route(c, "T")
    c.d.set_link("producer-1", "broker-a", down=True)
    f = c.producer.send_oneway(Message("T", b"x"))
    c.d.run_until_idle()
    assert f.done and f.result is None
    assert isinstance(f.error, MQClientException) and f.error.response_code == 10001
    assert f.error.error_message == (
        "Send [1] times, still failed, cost [0]ms, Topic: T, BrokersSent: [broker-a]"
        "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
    )
    assert isinstance(f.error.__cause__, RemotingConnectException)


# -- orderly --------------------------------------------------------------------------------------


def test_orderly_send_by_hash_keeps_one_queue_per_key(tmp_path):
    """SelectMessageQueueByHash: the same key always lands in queue |hashCode| % 4; offsets grow 0,1,2."""
    c = make_cluster(tmp_path)
    sel = SelectMessageQueueByHash()
    results = []
    for i in range(3):
        f = c.producer.send_orderly(Message("T", b"o%d" % i), sel, "order-1")
        c.d.run_until_idle()
        results.append(f.get())
    expected = abs(java_string_hash("order-1")) % 4
    assert [r.message_queue.queue_id for r in results] == [expected] * 3
    assert [r.queue_offset for r in results] == [0, 1, 2]


def test_select_message_queue_by_hash_vectors():
    """Java hashCode: "TagA" 2598919 % 4 = 3; Integer 7 % 4 = 3; -7 → |−3| = 3; "polygenelubricants" (MIN) → 0."""
    mqs = [MessageQueue("T", "b", i) for i in range(4)]
    sel = SelectMessageQueueByHash()
    assert sel.select(mqs, Message("T", b"x"), "TagA").queue_id == 3
    assert sel.select(mqs, Message("T", b"x"), 7).queue_id == 3
    assert sel.select(mqs, Message("T", b"x"), -7).queue_id == 3
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert sel.select(mqs, Message("T", b"x"), "polygenelubricants").queue_id == 0
    assert java_hash_code(True) == 1231 and java_hash_code(2**40 + 5) == (2**8) ^ 5
    with pytest.raises(TypeError):
        sel.select(mqs, Message("T", b"x"), 1.5)


def test_select_message_queue_by_random_uses_the_given_rng():
    """SelectMessageQueueByRandom draws from the RNG it is given (no module-level random)."""
    import random

    mqs = [MessageQueue("T", "b", i) for i in range(4)]
    a = [
        SelectMessageQueueByRandom(random.Random(3)).select(mqs, None, None).queue_id
        for _ in range(1)
    ]
    b = [
        SelectMessageQueueByRandom(random.Random(3)).select(mqs, None, None).queue_id
        for _ in range(1)
    ]
    assert a == b and 0 <= a[0] < 4


# -- batch ----------------------------------------------------------------------------------------


def test_batch_of_three_gets_consecutive_offsets(tmp_path):
    """SEND_BATCH_MESSAGE: 3 messages in one queue at offsets 0,1,2; msgId joins the 3 UNIQ_KEYs (docs/reference.md §10.6)."""
    c = make_cluster(tmp_path)
    seen = spy(c.brokers[0])
    msgs = [Message("T", b"b%d" % i, tags="TagA") for i in range(3)]
    f = c.producer.send_batch(msgs)
    c.d.run_until_idle()
    r = f.get()
    assert r.send_status is SendStatus.SEND_OK and r.queue_offset == 0
    uniq = [m.get_property("UNIQ_KEY") for m in msgs]
    assert r.msg_id == ",".join(uniq) and len(set(uniq)) == 3
    req = next(q for q, _ in seen if q.code == RequestCode.SEND_BATCH_MESSAGE)
    assert req.ext_fields["m"] == "true" and req.ext_fields["i"] == "WAIT\x01true"
    _, _, pr = pull(c, c.brokers[0], "T", r.message_queue.queue_id)
    assert [m.queue_offset for m in decodes(pr.message_binary)] == [0, 1, 2]
    assert [m.body for m in decodes(pr.message_binary)] == [b"b0", b"b1", b"b2"]


def test_batch_rejects_delayed_messages(tmp_path):
    """A delayed message in a batch → MQClientException "Failed to initiate the MessageBatch" (MessageBatch)."""
    c = make_cluster(tmp_path)
    m = Message("T", b"x")
    m.delay_time_level = 2
    f = c.producer.send_batch([Message("T", b"a"), m])
    c.d.run_until_idle()
    assert isinstance(f.error, MQClientException)
    assert f.error.error_message == "Failed to initiate the MessageBatch"
    assert str(f.error.__cause__) == "TimeDelayLevel is not supported for batching"


# -- message treatment ------------------------------------------------------------------------------


def test_large_body_is_compressed_on_the_wire_and_decoded_by_a_pull(tmp_path):
    """A 5000-byte body is zlib-compressed (sysFlag bit 1) and decodes back; the caller's body is restored (docs/reference.md §4.3)."""
    c = make_cluster(tmp_path)
    seen = spy(c.brokers[0])
    body = bytes(range(256)) * 19 + b"x" * 136  # 5000 bytes
    assert len(body) == 5000
    msg = Message("T", body)
    r = send(c, msg).get()
    assert msg.body == body
    req = next(q for q, _ in seen if q.code == RequestCode.SEND_MESSAGE_V2)
    assert int(req.ext_fields["f"]) & MessageSysFlag.COMPRESSED_FLAG == 1
    assert len(req.body) < 5000
    _, _, pr = pull(c, c.brokers[0], "T", r.message_queue.queue_id)
    raw = decodes(pr.message_binary, inflate=False)[0]
    assert raw.sys_flag & MessageSysFlag.COMPRESSED_FLAG == 1 and raw.body == req.body
    assert decodes(pr.message_binary)[0].body == body


def test_body_below_threshold_is_not_compressed(tmp_path):
    """4095 bytes stay uncompressed; 4096 (the threshold itself) is compressed (≥ compressMsgBodyOverHowmuch)."""
    c = make_cluster(tmp_path)
    seen = spy(c.brokers[0])
    send(c, Message("T", b"a" * 4095)).get()
    send(c, Message("T", b"a" * 4096)).get()
    flags = [int(q.ext_fields["f"]) for q, _ in seen if q.code == RequestCode.SEND_MESSAGE_V2]
    assert flags == [0, 1]


def test_uniq_key_is_32_hex_and_distinct(tmp_path):
    """Each send sets a UNIQ_KEY of 32 upper-case hex chars, distinct per message, returned as msgId (docs/reference.md §4.5)."""
    c = make_cluster(tmp_path)
    results = [send(c, Message("T", b"u%d" % i)).get() for i in range(5)]
    ids = [r.msg_id for r in results]
    assert all(re.fullmatch(r"[0-9A-F]{32}", i) for i in ids)
    assert len(set(ids)) == 5
    assert ids[0][:8] == "7F000001"  # 127.0.0.1
    assert all(len(r.offset_msg_id) == 32 for r in results)


def test_retry_topic_moves_reconsume_times_into_the_header(tmp_path):
    """%RETRY% topics: RECONSUME_TIME → header j, MAX_RECONSUME_TIMES → header l, removed from the message."""
    c = make_cluster(tmp_path)
    seen = spy(c.brokers[0])
    msg = Message(
        "%RETRY%CG", b"r", properties={"RECONSUME_TIME": "3", "MAX_RECONSUME_TIMES": "16"}
    )
    send(c, msg)
    req = next(q for q, _ in seen if q.code == RequestCode.SEND_MESSAGE_V2)
    assert (req.ext_fields["j"], req.ext_fields["l"]) == ("3", "16")
    assert (
        msg.get_property("RECONSUME_TIME") is None
        and msg.get_property("MAX_RECONSUME_TIMES") is None
    )


# -- validation and lifecycle --------------------------------------------------------------------------


def test_validation_errors(tmp_path):
    """Client checks (Validators): empty body → code 13; illegal topic; SCHEDULE_TOPIC_XXXX forbidden."""
    c = make_cluster(tmp_path)
    faq = "\nFor more information, please visit the url, http://rocketmq.apache.org/docs/faq/"
    e = send(c, Message("T", b"")).error
    assert isinstance(e, MQClientException) and e.response_code == 13
    assert e.error_message == "the message body length is zero"
    assert str(e) == "CODE: 13  DESC: the message body length is zero" + faq
    e = send(c, Message("bad topic", b"x")).error
    assert e.error_message.startswith("The specified topic[bad topic] contains illegal characters")
    e = send(c, Message("SCHEDULE_TOPIC_XXXX", b"x")).error
    assert e.error_message == "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."
    assert str(e) == e.error_message + faq and e.response_code == -1
    with pytest.raises(TypeError):
        c.producer.send("not a message")


def test_start_checks_group_and_duplicates(tmp_path):
    """DEFAULT_PRODUCER is refused; a second producer of the same group on one instance is refused."""
    c = make_cluster(tmp_path)
    with pytest.raises(MQClientException, match="producerGroup can not equal DEFAULT_PRODUCER"):
        DefaultMQProducer("DEFAULT_PRODUCER", c.inst).start()
    with pytest.raises(
        MQClientException, match=r"The producer group\[PG\] has been created before"
    ):
        DefaultMQProducer("PG", c.inst).start()


def test_send_before_start_and_after_shutdown_fails(tmp_path):
    """Sending needs a RUNNING producer (makeSureStateOK)."""
    c = make_cluster(tmp_path, start_producer=False)
    e = send(c, Message("T", b"x")).error
    assert isinstance(e, MQClientException) and "CREATE_JUST" in e.error_message
    c.producer.start()
    c.producer.shutdown()
    e = send(c, Message("T", b"x")).error
    assert "SHUTDOWN_ALREADY" in e.error_message
    assert "PG" not in c.inst.producer_table


def test_producer_defaults_match_java():
    """DefaultMQProducer defaults (docs/reference.md §8.4) and the retry codes of docs/reference.md §2.7."""
    p = DefaultMQProducer("PG", MQClientInstance(name="x"))
    assert (p.create_topic_key, p.default_topic_queue_nums, p.send_msg_timeout,
            p.compress_msg_body_over_howmuch, p.retry_times_when_send_failed,
            p.retry_times_when_send_async_failed, p.retry_another_broker_when_not_store_ok,
            p.max_message_size) == ("TBW102", 4, 3000, 4096, 2, 2, False, 4194304)  # fmt: skip
    assert p.retry_response_codes == {17, 14, 1, 16, 204, 205}


def test_pulled_message_is_retagged_by_the_client_filter(tmp_path):
    """Sent TagA/TagB, pulled with "TagA": process_pull_result keeps TagA only and sets MIN/MAX_OFFSET."""
    c = make_cluster(tmp_path)
    sel = SelectMessageQueueByHash()
    for tag in ("TagA", "TagB", "TagA"):
        f = c.producer.send_orderly(Message("T", tag.encode(), tags=tag), sel, 0)
        c.d.run_until_idle()
        f.get()
    wrapper, mq, pr = pull(c, c.brokers[0], "T", 0, sub="TagA")
    sd = FilterAPI.build_subscription_data("T", "TagA")
    pr = wrapper.process_pull_result(mq, pr, sd)
    assert pr.pull_status is PullStatus.FOUND
    assert [m.body for m in pr.msg_found_list] == [b"TagA", b"TagA"]
    assert [
        (m.get_property("MIN_OFFSET"), m.get_property("MAX_OFFSET")) for m in pr.msg_found_list
    ] == [("0", "3")] * 2
    assert pr.next_begin_offset == 3 and pr.message_binary is None


def test_same_seed_same_producer_trace(tmp_path):
    """Same seed, same calls → the producer's trace events are identical, byte for byte (docs/design.md §1)."""

    def scenario(path):
        c = make_cluster(path, brokers=2, seed=5)
        for i in range(6):
            send(c, Message("T", b"d%d" % i))
        c.producer.send(Message("T", b"async"), callback=lambda r, e: None)
        c.d.advance(40_000)
        return [e.to_json() for e in c.d.recorder.events if e.node == "producer-1"]

    first, second = scenario(tmp_path / "one"), scenario(tmp_path / "two")
    assert first == second and len(first) > 30


def test_send_needs_an_attached_instance():
    """A producer on an instance that no driver runs yet cannot send (RuntimeError naming the fix)."""
    p = DefaultMQProducer("PG", MQClientInstance(name="loose"))
    p.start()
    with pytest.raises(RuntimeError, match="add_node"):
        p.send(Message("T", b"x"))
