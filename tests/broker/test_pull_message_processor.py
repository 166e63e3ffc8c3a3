"""PULL_MESSAGE: the 11 steps of mechanisms.md "Pull processing" and long polling of mechanisms.md "Long polling"."""

from mqlab.common.message_decoder import decodes
from mqlab.remoting.codes import RequestCode, ResponseCode

SUB_FAQ = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


def steps(c, component="PullMessageProcessor.processRequest"):
    return [e.step for e in c.d.recorder.select(component=component)]


def test_found_returns_stored_bytes_and_offsets(cluster):
    """FOUND → SUCCESS, body = stored entries, nextBeginOffset = offset + count (mechanisms.md "The consumer's pull loop")."""
    c = cluster()
    for i in range(3):
        c.send("TopicTest", f"m{i}".encode())
    p = c.pull("TopicTest", offset=1)
    assert p.code == ResponseCode.SUCCESS and p.remark == "FOUND"
    assert {
        k: p.ext(k) for k in ("nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId")
    } == {"nextBeginOffset": "3", "minOffset": "0", "maxOffset": "3", "suggestWhichBrokerId": "0"}
    assert [m.body for m in decodes(p.response.body)] == [b"m1", b"m2"]


def test_every_step_is_traced_in_order(cluster):
    """A successful pull emits steps 1–9 and 11 of mechanisms.md "Pull processing", in order."""
    c = cluster()
    c.send("TopicTest")
    mark = len(c.d.recorder)
    c.pull("TopicTest")
    evs = [
        e.step
        for e in c.d.recorder.events[mark:]
        if e.component == "PullMessageProcessor.processRequest"
    ]
    assert evs == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "11"]


def test_step1_broker_not_readable(cluster):
    """Step 1: broker permission without R → NO_PERMISSION (16)."""
    c = cluster()
    c.broker.broker_config.broker_permission = 2
    p = c.pull("TopicTest")
    assert (p.code, p.remark) == (16, "the broker[127.0.0.1] pulling message is forbidden")
    assert p.response.ext_fields == {}


def test_step3_consume_disabled(cluster):
    """Step 3: consumeEnable false → NO_PERMISSION 'subscription group no permission, CG'."""
    c = cluster()
    c.send("TopicTest")
    sgc = c.broker.subscription_group_manager.find_subscription_group_config("CG", 0)
    sgc.consume_enable = False
    p = c.pull("TopicTest")
    assert (p.code, p.remark) == (16, "subscription group no permission, CG")


def test_step4_topic_not_exist(cluster):
    """Step 4: unknown topic → TOPIC_NOT_EXIST with 'topic[X] not exist, apply first please! ...'."""
    c = cluster()
    p = c.pull("Nope")
    assert p.code == 17
    assert p.remark.startswith("topic[Nope] not exist, apply first please! \nSee ")


def test_step5_queue_id_out_of_range(cluster):
    """Step 5: queueId 8 on a 4-queue topic → SYSTEM_ERROR with RocketMQ's remark."""
    c = cluster()
    c.send("TopicTest")
    p = c.pull("TopicTest", queue_id=8)
    assert p.code == ResponseCode.SYSTEM_ERROR
    port = c.d._conns[("client", c.broker.broker_addr)].client_end.local_address
    assert p.remark == (
        f"queueId[8] is illegal, topic:[TopicTest] topicConfig.readQueueNums:[4] consumer:[/{port}]"
    )


def test_step6_no_heartbeat_no_subscription(cluster):
    """Step 6 without the SUBSCRIPTION flag: an unknown group → SUBSCRIPTION_NOT_EXIST (24)."""
    c = cluster()
    c.send("TopicTest")
    p = c.pull("TopicTest", sys_flag=2)
    assert (p.code, p.remark) == (24, "the consumer's group info not exist" + SUB_FAQ)


def test_step7_sql92_needs_property_filter(cluster):
    """Step 7: a SQL92 subscription while enablePropertyFilter is off → SYSTEM_ERROR."""
    c = cluster()
    c.send("TopicTest")
    ext = c.pull_ext("TopicTest", sub="a > 5")
    ext["expressionType"] = "SQL92"
    p = c.call(c.broker.broker_addr, RequestCode.PULL_MESSAGE, ext)
    assert (p.code, p.remark) == (
        1,
        "The broker does not support consumer to filter message by SQL92",
    )


def test_status_codes_for_empty_and_overflow(cluster):
    """NO_MESSAGE_IN_QUEUE at offset 5 → PULL_OFFSET_MOVED (21) next 0; OFFSET_OVERFLOW_BADLY → 21."""
    c = cluster()
    c.send("TopicTest", queue_id=0)
    p = c.pull("TopicTest", queue_id=1, offset=5, sys_flag=4)
    assert (p.code, p.remark, p.ext("nextBeginOffset")) == (21, "NO_MESSAGE_IN_QUEUE", "0")
    p = c.pull("TopicTest", queue_id=0, offset=7, sys_flag=4)
    assert (p.code, p.remark, p.ext("nextBeginOffset")) == (21, "OFFSET_OVERFLOW_BADLY", "0")
    p = c.pull("TopicTest", queue_id=0, offset=1, sys_flag=4)
    assert (p.code, p.remark, p.ext("nextBeginOffset")) == (19, "OFFSET_OVERFLOW_ONE", "1")
    # OFFSET_MOVED leaves an OffsetMovedEvent in OFFSET_MOVED_EVENT queue 0.
    assert c.broker.message_store.get_max_offset_in_queue("OFFSET_MOVED_EVENT", 0) == 2


def test_offset_moved_event_message(cluster):
    """generateOffsetMovedEvent: TAGS = KEYS = the group, DELAY=0 (setDelayTimeLevel(0),
    PullMessageProcessor.java:529), body = the OffsetMovedEvent JSON."""
    c = cluster()
    c.send("TopicTest")
    assert c.pull("TopicTest", offset=5).code == 21
    [m] = decodes(c.pull("OFFSET_MOVED_EVENT", group="EVT", sys_flag=4).response.body)
    assert m.properties == {"TAGS": "CG", "DELAY": "0", "KEYS": "CG"}
    assert m.body == (
        b'{"consumerGroup":"CG","messageQueue":{"brokerName":"broker-a","queueId":0,'
        b'"topic":"TopicTest"},"offsetNew":0,"offsetRequest":5}'
    )


def test_no_matched_message_is_retry_immediately(cluster):
    """Only non-matching tags → NO_MATCHED_MESSAGE → PULL_RETRY_IMMEDIATELY (20), next past them."""
    c = cluster()
    c.send("TopicTest", tags="TagB")
    c.send("TopicTest", tags="TagB")
    p = c.pull("TopicTest", sub="TagA", sys_flag=4)
    assert (p.code, p.remark, p.ext("nextBeginOffset")) == (20, "NO_MATCHED_MESSAGE", "2")


def test_long_poll_parked_at_t1_answered_at_20000(cluster):
    """Long polling: parked at t=1 with 15 s; checks every 5 s → answered by the check at t=20000."""
    c = cluster()
    c.send("TopicTest")  # creates the topic; queue 1 stays empty
    p = c.pull("TopicTest", queue_id=1, offset=0, run=False)
    c.d.advance(1)
    held = c.broker.pull_request_hold_service.inspect()
    assert [(h["key"], h["pull_from_this_offset"], h["timeout_millis"]) for h in held] == [
        ("TopicTest@1", 0, 15000)
    ]
    parked_at = held[0]["suspend_timestamp"]
    labels = [t.label for t in c.d.next_timers()]
    assert any(lbl.startswith("suspended pull timeout broker-a TopicTest@1") for lbl in labels)
    c.d.advance(30_000)
    first_check_after = ((parked_at + 15000 + 4999) // 5000) * 5000
    assert p.code == ResponseCode.PULL_NOT_FOUND and p.remark == "NO_MESSAGE_IN_QUEUE"
    assert p.done_at == first_check_after + 1  # the reply travels 1 ms


def test_long_poll_exact_timing_from_t1(tmp_path):
    """The issue's example: a pull parked at t=1 ms with 15 s is answered at t=20 000 ms."""
    from broker_cluster import Cluster

    from mqlab.broker.broker_controller import BrokerController
    from mqlab.broker.config import BrokerConfig
    from mqlab.runtime.raw_client import RawClient
    from mqlab.runtime.sim import SimDriver
    from mqlab.store.config import MessageStoreConfig

    d = SimDriver(seed=1)
    b = BrokerController(
        BrokerConfig(name_server_addr=""), MessageStoreConfig(store_path_root_dir=str(tmp_path))
    )
    d.add_node(b)
    b.topic_config_manager.create_topic_in_send_message_method("T", "TBW102", "x", 4, 0, 0)
    cl = RawClient("c")
    d.add_node(cl)
    ext = Cluster.pull_ext(None, "T", queue_id=1)
    p = cl.send(b.broker_addr, RequestCode.PULL_MESSAGE, ext)  # sent at t=0, parked at t=1
    d.advance(1)
    [held] = b.pull_request_hold_service.inspect()
    assert (held["suspend_timestamp"], held["deadline"]) == (1, 15001)
    d.advance(19_998)  # t = 19 999: checks at 5 000, 10 000, 15 000 kept it parked
    assert not p.done
    d.advance(2)  # the check at 20 000 answers; the reply lands at 20 001
    assert (p.code, p.done_at) == (ResponseCode.PULL_NOT_FOUND, 20_001)
    assert p.ext("nextBeginOffset") == "0"


def test_short_polling_answers_after_the_1s_check(cluster):
    """Short polling: parked with shortPollingTimeMills 1000 and answered by a later 1 s check."""
    c = cluster(long_polling_enable=False)
    c.send("TopicTest")
    p = c.pull("TopicTest", queue_id=1, run=False)
    c.d.advance(1)
    [held] = c.broker.pull_request_hold_service.inspect()
    assert held["timeout_millis"] == 1000
    c.d.advance(3000)
    deadline = held["suspend_timestamp"] + 1000
    assert p.code == ResponseCode.PULL_NOT_FOUND
    assert p.done_at == ((deadline + 999) // 1000) * 1000 + 1


def test_long_polling_switched_off_at_runtime_takes_effect_after_the_current_wait(cluster):
    """UPDATE_BROKER_CONFIG longPollingEnable=false: a pull parked afterwards is held
    shortPollingTimeMills (1 000 ms, not its 15 s), but PullRequestHoldService#run reads
    the flag only when it starts a wait, so the 5 s wait under way ends first (check at
    5 000), then the checks come every 1 000 ms (6 000, 7 000, ...)."""
    c = cluster()
    c.send("TopicTest", queue_id=0)
    c.send("TopicTest", queue_id=1)
    t0 = c.d.now
    assert c.broker.pull_request_hold_service.next_check_at == 5000 and t0 < 4000
    r = c.call(c.broker.broker_addr, RequestCode.UPDATE_BROKER_CONFIG, None,
               b"longPollingEnable=false\n")  # fmt: skip
    assert r.code == ResponseCode.SUCCESS and not c.broker.broker_config.long_polling_enable
    early = c.pull("TopicTest", queue_id=0, offset=1, run=False)
    c.d.advance(5002 - c.d.now)
    assert early.done_at == 5000 + 1  # deadline ~t0+1 000, but the 5 s wait answers it
    assert c.broker.pull_request_hold_service.next_check_at == 6000
    c.d.advance(498)  # t = 5 500
    late = c.pull("TopicTest", queue_id=1, offset=1, run=False)
    c.d.advance(1)
    [held] = c.broker.pull_request_hold_service.inspect()
    assert held["timeout_millis"] == 1000
    c.d.advance(2000)
    assert late.code == ResponseCode.PULL_NOT_FOUND
    assert late.done_at == 7000 + 1  # deadline 6 50x: the check at 6 000 is too early


def test_matching_message_wakes_parked_pull_at_once(cluster):
    """Long polling: a matching message's reput wakes the parked pull in the same ms."""
    c = cluster()
    c.send("TopicTest", tags="TagA")
    p = c.pull("TopicTest", offset=1, sub="TagA", run=False)
    c.d.advance(100)
    assert not p.done
    c.send("TopicTest", b"new", tags="TagB")  # does not match: stays parked
    assert not p.done
    sent = c.d.now
    c.client.send(
        c.broker.broker_addr,
        RequestCode.SEND_MESSAGE_V2,
        {
            "a": "PG",
            "b": "TopicTest",
            "c": "TBW102",
            "d": "4",
            "e": "0",
            "f": "0",
            "g": "0",
            "h": "0",
            "i": "TAGS\x01TagA",
        },
        b"wake",
    )
    c.d.run_until_idle()
    assert p.code == ResponseCode.SUCCESS
    assert p.done_at == sent + 2  # send reaches the broker at +1, the reply arrives at +2
    # "new" (TagB) is skipped by the consume-queue tag check on the replay.
    assert [m.body for m in decodes(p.response.body)] == [b"wake"]


def test_short_polling_is_not_woken_by_arrival(cluster):
    """Short polling: arrival does not notify; the next 1 s check answers with the message."""
    c = cluster(long_polling_enable=False)
    c.send("TopicTest")
    p = c.pull("TopicTest", offset=1, run=False)
    c.d.advance(10)
    c.send("TopicTest", b"late")
    assert not p.done
    c.d.advance(1000)
    assert p.code == ResponseCode.SUCCESS


def test_commit_offset_step11(cluster):
    """Step 11: COMMIT_OFFSET flag commits header.commitOffset; a replay never commits."""
    c = cluster()
    c.send("TopicTest")
    c.pull("TopicTest", sys_flag=7, commit_offset=1, offset=0)
    assert c.broker.consumer_offset_manager.query_offset("CG", "TopicTest", 0) == 1
    c.pull("TopicTest", sys_flag=6, commit_offset=5, offset=0)
    assert c.broker.consumer_offset_manager.query_offset("CG", "TopicTest", 0) == 1


def test_query_consumer_offset_rule(cluster):
    """QUERY_CONSUMER_OFFSET: unknown group with min offset 0 → SUCCESS 0 (docs/reference.md §10.4)."""
    c = cluster()
    c.send("TopicTest")
    r = c.call(
        c.broker.broker_addr,
        RequestCode.QUERY_CONSUMER_OFFSET,
        {"consumerGroup": "new", "topic": "TopicTest", "queueId": "0"},
    )
    assert (r.code, r.ext("offset")) == (0, "0")
    c.call(
        c.broker.broker_addr,
        RequestCode.UPDATE_CONSUMER_OFFSET,
        {"consumerGroup": "g", "topic": "TopicTest", "queueId": "0", "commitOffset": "1"},
    )
    r = c.call(
        c.broker.broker_addr,
        RequestCode.QUERY_CONSUMER_OFFSET,
        {"consumerGroup": "g", "topic": "TopicTest", "queueId": "0"},
    )
    assert r.ext("offset") == "1"


def test_same_seed_same_trace_bytes(tmp_path):
    """Same seed and calls → the same trace, byte for byte (JSON lines), frames included."""
    from broker_cluster import Cluster

    from mqlab.trace.events import TraceLevel

    def run(sub):
        c = Cluster(tmp_path / sub, seed=3, trace_level=TraceLevel.FRAMES)
        for i in range(5):
            c.send("TopicTest", f"m{i}".encode(), tags="TagA", queue_id=-1)
        c.pull("TopicTest", queue_id=1)
        c.d.advance(25_000)
        return c.d.recorder.to_jsonl()

    a, b = run("a"), run("b")
    assert a == b
    assert a.count(b"\n") > 100
