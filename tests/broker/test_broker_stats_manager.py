"""BrokerStatsManager on the simulated clock: counted where 4.9.3 counts, sampled every 10 s.

VIEW_BROKER_STATS_DATA (315), GET_CONSUME_STATS's consumeTps (208) and
GET_BROKER_CONSUME_STATS (317) read the samples. The samplings run on the broker's clock,
first at its start, then every 10 s / 10 min / 1 h (StatsItemSet#init).
"""

from mqlab.common.stats import CallSnapshot, StatsItem, compute_stats_data
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.fastjson import loads


def _view(c, name, key):
    r = c.call(c.broker.broker_addr, RequestCode.VIEW_BROKER_STATS_DATA,
               {"statsName": name, "statsKey": key})  # fmt: skip
    return r, (loads(r.response.body.decode()) if r.response.body else None)


def _to(c, t):
    """Advance the simulated clock to ``t`` ms after the broker started."""
    c.d.advance(c.start + t - c.d.now)


def _started(cluster):
    c = cluster()
    c.start = c.broker.broker_stats_manager.start_ms  # the broker's first samplings ran here
    assert c.start <= c.d.now < c.start + 1_000
    return c


def test_fifty_sends_in_the_first_window_read_5_tps_at_the_10_s_sample(cluster):
    """50 sends between 1 s and 6 s: nothing until the sample at 10 s, then sum 50, tps 5.00."""
    c = _started(cluster)
    _to(c, 1_000)
    for i in range(50):
        assert c.send("TopicStats", b"x" * 10, queue_id=i % 4).code == ResponseCode.SUCCESS
        c.d.advance(100)
    _to(c, 9_950)  # (a request takes a few simulated ms on the network)
    r, body = _view(c, "TOPIC_PUT_NUMS", "TopicStats")
    assert r.code == ResponseCode.SUCCESS
    assert body["statsMinute"] == {"avgpt": 0.0, "sum": 0, "tps": 0.0}  # not sampled yet
    _to(c, 10_000)
    _, body = _view(c, "TOPIC_PUT_NUMS", "TopicStats")
    # the first sample is preceded by a zero one 10 s earlier: 50 over 10 s
    assert body["statsMinute"] == {"avgpt": 1.0, "sum": 50, "tps": 5.0}
    assert body["statsHour"] == {"avgpt": 0.0, "sum": 0, "tps": 0.0}  # next at 10 min
    assert body["statsDay"] == {"avgpt": 0.0, "sum": 0, "tps": 0.0}
    # BROKER_PUT_NUMS counts the value only (no times): avgpt stays 0
    _, body = _view(c, "BROKER_PUT_NUMS", "DefaultCluster")
    assert body["statsMinute"] == {"avgpt": 0.0, "sum": 50, "tps": 5.0}
    # TOPIC_PUT_SIZE: the bytes written, 50 stored entries of one size each
    size = c.broker.broker_stats_manager.get_stats_item("TOPIC_PUT_SIZE", "TopicStats").value
    assert size == c.broker.message_store.get_max_phy_offset()
    assert size % 50 == 0
    # 20 s: [zero, 50 @10 s, 50 @20 s] → 50 over 20 s
    _to(c, 20_000)
    _, body = _view(c, "TOPIC_PUT_NUMS", "TopicStats")
    assert body["statsMinute"] == {"avgpt": 1.0, "sum": 50, "tps": 2.5}
    # 70 s: 8 samples, the zero one dropped (7 kept) → nothing in the last minute
    _to(c, 70_000)
    _, body = _view(c, "TOPIC_PUT_NUMS", "TopicStats")
    assert body["statsMinute"] == {"avgpt": 0.0, "sum": 0, "tps": 0.0}
    # 10 min: the hour list gets [zero @0, 50 @10 min]
    _to(c, 600_000)
    _, body = _view(c, "TOPIC_PUT_NUMS", "TopicStats")
    assert body["statsHour"] == {"avgpt": 1.0, "sum": 50, "tps": 50_000 / 600_000}


def test_view_of_an_item_never_counted_is_system_error(cluster):
    c = _started(cluster)
    r, _ = _view(c, "TOPIC_PUT_NUMS", "Nope")
    assert (r.code, r.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "The stats <TOPIC_PUT_NUMS> <Nope> not exist",
    )
    r, _ = _view(c, "NO_SUCH_STATS", "x")
    assert (r.code, r.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "The stats <NO_SUCH_STATS> <x> not exist",
    )


def test_pulls_feed_consume_tps_and_broker_consume_stats(cluster):
    """8 messages pulled by CG: GROUP_GET_NUMS TopicStats@CG → consumeTps 0.8 after 10 s."""
    c = _started(cluster)
    _to(c, 2_000)
    for _ in range(8):
        c.send("TopicStats", queue_id=1)
    p = c.pull("TopicStats", queue_id=1, offset=0)
    assert p.code == ResponseCode.SUCCESS
    c.call(c.broker.broker_addr, RequestCode.UPDATE_CONSUMER_OFFSET,
           {"consumerGroup": "CG", "topic": "TopicStats", "queueId": "1", "commitOffset": "6"})  # fmt: skip
    addr = c.broker.broker_addr
    r = c.call(addr, RequestCode.GET_CONSUME_STATS, {"consumerGroup": "CG"})
    assert loads(r.response.body.decode())["consumeTps"] == 0.0  # before the 10 s sample
    _to(c, 10_000)
    r = c.call(addr, RequestCode.GET_CONSUME_STATS, {"consumerGroup": "CG"})
    assert loads(r.response.body.decode())["consumeTps"] == 0.8
    _, body = _view(c, "GROUP_GET_NUMS", "TopicStats@CG")
    assert body["statsMinute"] == {"avgpt": 8.0, "sum": 8, "tps": 0.8}  # one pull of 8
    # enableDetailStat (default true): latency keyed queueId@topic@group, 0 ms here
    _, body = _view(c, "GROUP_GET_LATENCY", "1@TopicStats@CG")
    assert body["statsMinute"] == {"avgpt": 0.0, "sum": 0, "tps": 0.0}
    _, body = _view(c, "BROKER_GET_NUMS", "DefaultCluster")
    assert body["statsMinute"]["sum"] == 8
    r = c.call(addr, RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": "false"})
    assert r.code == ResponseCode.SUCCESS
    body = loads(r.response.body.decode())
    assert body["brokerAddr"] == addr and body["totalDiff"] == 2
    groups = {g: v for entry in body["consumeStatsList"] for g, v in entry.items()}
    [cs] = groups["CG"]
    assert cs["consumeTps"] == 0.8
    offsets = {k.to_dict()["queueId"]: v for k, v in cs["offsetTable"].items()}
    assert sorted(offsets) == [0, 1, 2, 3]
    assert offsets[1]["brokerOffset"] == 8 and offsets[1]["consumerOffset"] == 6
    # isOrder=true: TopicStats is not an order topic
    r = c.call(addr, RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": "true"})
    body = loads(r.response.body.decode())
    assert body["totalDiff"] == 0
    assert {g: v for e in body["consumeStatsList"] for g, v in e.items()}["CG"] == []


def test_send_back_counts_sndbck_put_nums_of_the_original_topic(cluster):
    """CONSUMER_SEND_MSG_BACK: SNDBCK_PUT_NUMS TopicStats@CG, and a put of the schedule topic."""
    c = _started(cluster)
    c.send("TopicStats", b"fail me")
    r = c.call(c.broker.broker_addr, RequestCode.CONSUMER_SEND_MSG_BACK,
               {"offset": "0", "group": "CG", "delayLevel": "0", "originTopic": "TopicStats"})  # fmt: skip
    assert r.code == ResponseCode.SUCCESS
    bsm = c.broker.broker_stats_manager
    item = bsm.get_stats_item("SNDBCK_PUT_NUMS", "TopicStats@CG")
    assert (item.value, item.times) == (1, 1)
    assert bsm.get_stats_item("TOPIC_PUT_NUMS", "SCHEDULE_TOPIC_XXXX").value == 1
    assert bsm.get_stats_item("TOPIC_PUT_NUMS", "TopicStats").value == 1


def test_compute_stats_data_first_and_last_sample():
    """StatsItem#computeStatsData: sum, tps, avgpt over the first and last sample kept."""
    item = StatsItem("X", "k")
    item.value, item.times = 30, 3
    item.sampling_in_seconds(20_000)
    item.value, item.times = 90, 5
    item.sampling_in_seconds(30_000)
    assert list(item.cs_minute) == [
        CallSnapshot(10_000, 0, 0), CallSnapshot(20_000, 3, 30), CallSnapshot(30_000, 5, 90),
    ]  # fmt: skip
    ss = compute_stats_data(item.cs_minute)
    assert (ss.sum, ss.tps, ss.avgpt, ss.times) == (90, 4.5, 18.0, 5)


def test_delayed_message_counts_at_send_and_at_delivery(cluster):
    """A DELAY 3 (10 s) send counts as a put of SCHEDULE_TOPIC_XXXX queue 2; its delivery, as a put of
    its real topic and a get of SCHEDULE_CONSUMER (PutResultProcess#onSuccess)."""
    c = _started(cluster)
    r = c.send("TopicStats", b"later", queue_id=1, props={"DELAY": "3"})
    assert r.code == ResponseCode.SUCCESS
    bsm = c.broker.broker_stats_manager
    assert bsm.get_stats_item("TOPIC_PUT_NUMS", "SCHEDULE_TOPIC_XXXX").value == 1
    assert bsm.get_stats_item("QUEUE_PUT_NUMS", "SCHEDULE_TOPIC_XXXX@2").value == 1
    assert bsm.get_stats_item("QUEUE_PUT_NUMS", "SCHEDULE_TOPIC_XXXX@1") is None
    assert bsm.get_stats_item("TOPIC_PUT_NUMS", "TopicStats") is None
    c.d.advance(11_000)
    assert c.broker.message_store.get_max_offset_in_queue("TopicStats", 1) == 1
    assert bsm.get_stats_item("TOPIC_PUT_NUMS", "TopicStats").value == 1
    get = bsm.get_stats_item("GROUP_GET_NUMS", "SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER")
    assert (get.value, get.times) == (1, 1)
    q = bsm.get_stats_item("QUEUE_GET_NUMS", "SCHEDULE_TOPIC_XXXX@2@SCHEDULE_CONSUMER")
    assert q.value == 1
    broker_puts = bsm.get_stats_item("BROKER_PUT_NUMS", "DefaultCluster")
    assert (broker_puts.value, broker_puts.times) == (2, 0)
    size = bsm.get_stats_item("TOPIC_PUT_SIZE", "TopicStats").value
    assert (
        size == bsm.get_stats_item("GROUP_GET_SIZE", "SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER").value
    )
