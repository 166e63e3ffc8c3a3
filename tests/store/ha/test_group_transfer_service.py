"""SYNC_MASTER's put path: isSlaveOK, GroupTransferService, the send's answer
(mechanisms.md "HA replication" steps 12–14).

Mirrors CommitLog#submitReplicaRequest, HAService#isSlaveOK and
HAService.GroupTransferService#doWaitTransfer (store, RocketMQ 4.9.3). Links are 1 ms
unless a test sets the master–slave latency; each message is 127 bytes.
"""

from __future__ import annotations

from mqlab.remoting.codes import ResponseCode

MSG = 127


def replicating(pair, **kw):
    """A pair whose slave has connected and reported (its first report 6000 ms after
    connecting), with nothing in flight."""
    p = pair(**kw)
    p.connect()
    p.d.run_until(12_000)
    assert p.ha.connection_count == 1 and p.ha.connection_list[0].slave_request_offset == 0
    return p


def test_no_slave_slave_not_available(pair):
    """SYNC_MASTER without any HA connection: SLAVE_NOT_AVAILABLE (11) at once; stored."""
    p = pair(slave=False)
    c = p.send()
    p.d.run_until_idle()
    assert (c.code, c.remark, c.ext("queueOffset")) == (ResponseCode.SLAVE_NOT_AVAILABLE, None, "0")
    assert c.done_at - c.sent_at == 2
    assert p.ms.commit_log.get_max_offset() == MSG


def test_send_ok_after_the_slave_reported_it(pair):
    """SEND_OK leaves when the slave's report reaches the master: with a 5 ms master–slave
    link, request 1 ms + push 5 ms + report 5 ms + response 1 ms = 12 ms."""
    p = replicating(pair, latency_ms=5)
    t0 = p.d.now
    c = p.send()
    p.d.run_until(t0 + 11)
    assert not c.done
    assert p.ss.get_max_phy_offset() == MSG  # the slave appended it at t0 + 6
    p.d.run_until(t0 + 12)
    assert (c.code, c.done_at - t0) == (ResponseCode.SUCCESS, 12)
    assert p.ha.push2_slave_max_offset == MSG


def test_async_master_answers_at_once_and_replicates_at_the_next_poll(pair):
    """ASYNC_MASTER: SEND_OK after 2 ms; the write service finds the bytes at its next
    100 ms poll, not woken by the put."""
    p = replicating(pair, role="ASYNC_MASTER", latency_ms=5)
    idle_since = p.ha.connection_list[0]._idle_since
    t0 = p.d.now
    c = p.send()
    p.d.run_until(t0 + 2)
    assert (c.code, c.done_at - t0) == (ResponseCode.SUCCESS, 2)
    poll = idle_since + 100 * -(-(t0 + 1 - idle_since) // 100)
    p.d.run_until(poll + 5 - 1)
    assert p.ss.get_max_phy_offset() == 0
    p.d.run_until(poll + 5)
    assert p.ss.get_max_phy_offset() == MSG


def test_flush_slave_timeout_at_exactly_slave_timeout(pair):
    """A slave that never reports past the message: FLUSH_SLAVE_TIMEOUT (12) when
    slaveTimeout (3000 ms) has passed since the put; the message is stored."""
    p = pair(slave=False)
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    t0 = p.d.now
    c = p.send()  # put at t0 + 1
    p.d.run_until(t0 + 1 + 3000)
    assert not c.done
    p.d.run_until(t0 + 1 + 3000 + 1)
    assert (c.code, c.ext("queueOffset"), c.done_at - t0) == (
        ResponseCode.FLUSH_SLAVE_TIMEOUT,
        "0",
        3002,
    )


def test_a_waiting_request_blocks_the_one_behind_it(pair):
    """GroupTransferService takes one request at a time, waiting 1000 ms per turn: the
    second put (500 ms later) is looked at when the first times out, then waits a whole
    turn: its FLUSH_SLAVE_TIMEOUT goes out 1000 ms after the first's, not 500."""
    p = pair(slave=False)
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    t0 = p.d.now
    c1 = p.send()
    p.d.run_until(t0 + 500)
    c2 = p.send()
    p.d.run_until_idle()
    assert (c1.code, c1.done_at - t0) == (ResponseCode.FLUSH_SLAVE_TIMEOUT, 3002)
    assert (c2.code, c2.done_at - t0) == (ResponseCode.FLUSH_SLAVE_TIMEOUT, 4002)


def test_a_report_in_time_answers_send_ok(pair):
    """The slave reports the message's end offset 2000 ms after the put: SEND_OK then."""
    p = pair(slave=False)
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    t0 = p.d.now
    c = p.send()
    p.d.run_until(t0 + 2000)
    fake.report(MSG)
    p.d.run_until_idle()
    assert (c.code, c.done_at - t0) == (ResponseCode.SUCCESS, 2002)


def test_slave_too_far_behind_is_not_available(pair):
    """A connected slave haSlaveFallbehindMax or more behind the message's end:
    SLAVE_NOT_AVAILABLE; once it reports closer, the put waits for it again."""
    p = pair(slave=False, ha_slave_fallbehind_max=200)
    p.send(props={"WAIT": "false"})
    p.d.run_until_idle()
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    c = p.send()  # ends at 254: 254 - 0 >= 200
    p.d.run_until(p.d.now + 5)
    assert c.code == ResponseCode.SLAVE_NOT_AVAILABLE
    fake.report(254)
    p.d.run_until(p.d.now + 5)
    c = p.send()  # ends at 381: 381 - 254 < 200, and the report already covers nothing
    p.d.run_until(p.d.now + 5)
    assert not c.done
    fake.report(381)
    p.d.run_until_idle()
    assert c.code == ResponseCode.SUCCESS


def test_made_up_report_acknowledges_what_no_slave_has(pair):
    """apache/rocketmq#3015: any connection to the HA port may report any offset; the
    master believes it, so SYNC_MASTER answers SEND_OK for messages no slave has."""
    p = pair(slave=False)
    fake = p.fake_slave()
    fake.open()
    fake.report(10**9)
    p.d.run_until(p.d.now + 5)
    t0 = p.d.now
    calls = [p.send() for _ in range(3)]
    p.d.run_until_idle()
    assert [(c.code, c.done_at - t0) for c in calls] == [(ResponseCode.SUCCESS, 2)] * 3
    assert p.ha.push2_slave_max_offset == 10**9
    assert p.ms.commit_log.get_max_offset() == 3 * MSG


def test_wait_false_does_not_wait(pair):
    """WAIT=false on SYNC_MASTER: no replica request, SEND_OK at once."""
    p = pair(slave=False)
    c = p.send(props={"WAIT": "false"})
    p.d.run_until_idle()
    assert (c.code, c.done_at - c.sent_at) == (ResponseCode.SUCCESS, 2)


def test_batch_waits_for_the_slave_too(pair):
    """SEND_BATCH_MESSAGE on SYNC_MASTER: the batch's end offset is what the slave must
    report; SEND_OK 12 ms after the request with a 5 ms master–slave link."""
    from mqlab.common.message import Message
    from mqlab.common.message_decoder import encode_batch_body
    from mqlab.remoting.codes import RequestCode

    p = replicating(pair, latency_ms=5)
    t0 = p.d.now
    ext = {"a": "PG", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0",
           "h": "0", "i": "WAIT\x01true", "m": "true"}  # fmt: skip
    body = encode_batch_body([Message("TopicTest", f"b{i}".encode()) for i in range(3)])
    c = p.client.send("127.0.0.1:10911", RequestCode.SEND_BATCH_MESSAGE, ext, body)
    p.d.run_until_idle()
    end = p.ms.get_max_phy_offset()
    assert (c.code, c.ext("queueOffset"), c.done_at - t0) == (ResponseCode.SUCCESS, "0", 12)
    assert p.ha.push2_slave_max_offset == p.ss.get_max_phy_offset() == end


def test_every_step_is_traced_with_its_number(pair):
    """A replication run emits the steps of mechanisms.md "HA replication" under their
    numbers: 1–10 and 12–14 on the way, 11 once the slave is killed."""
    p = replicating(pair)
    c = p.send()
    p.d.run_until_idle()
    assert c.code == ResponseCode.SUCCESS
    p.d.run_until(p.d.now + 6000)  # a heartbeat header (7) goes out
    p.d.stop_node("slave", graceful=False)
    p.d.run_until(p.d.now + 10)
    ha_components = (
        "HAService", "HAConnection", "CommitLog.submitReplicaRequest",
        "SendMessageProcessor.handlePutMessageResultFuture",
    )  # fmt: skip
    steps = {
        int(e.step)
        for e in p.d.recorder.events
        if e.component.startswith(ha_components) and e.step.isdigit()
    }
    assert steps == set(range(1, 15))


def test_lagging_slave_times_out_but_still_gets_the_message(pair):
    """A slave 2000 ms away (link latency): its report would come 4000 ms after the put,
    so SYNC_MASTER answers FLUSH_SLAVE_TIMEOUT at 3000 ms; the slave has it at 2000 ms and
    reports it at 4000 ms."""
    p = replicating(pair)
    p.set_latency(2000)
    t0 = p.d.now
    c = p.send()
    p.d.run_until(t0 + 1 + 2000)
    assert p.ss.get_max_phy_offset() == MSG
    p.d.run_until_idle()
    assert (c.code, c.done_at - t0) == (ResponseCode.FLUSH_SLAVE_TIMEOUT, 3002)
    assert p.ha.push2_slave_max_offset == MSG
