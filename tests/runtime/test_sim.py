"""The simulation driver: frames, latency, timeouts, faults, determinism."""

import pytest

from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Node, RemotingConnectException
from mqlab.runtime.sim import SimDriver
from mqlab.trace.events import TraceLevel


class Echo(Node):
    """Answers code 1 with the same body; holds code 2 (never answers); code 3 notifies back."""

    def __init__(self):
        super().__init__("echo", "127.0.0.1:7000")
        self.held = []

    def process_request(self, channel, request):
        self.tracer.emit("Echo", "1", got=request.code)
        if request.code == 1:
            return RemotingCommand.create_response(0, body=request.body)
        if request.code == 2:
            self.held.append((channel, request))
            return None
        if request.code == 3:
            self.ctx.send_request_oneway(channel, RemotingCommand.create_request(40))
            return RemotingCommand.create_response(0)
        return super().process_request(channel, request)


class Client(Node):
    def __init__(self, name="client"):
        super().__init__(name, "127.0.0.2:0")
        self.results = []
        self.notified = []

    def call(self, code, body=b"x", timeout=3000):
        def cb(resp, err):
            self.results.append(
                (
                    self.ctx.now_ms,
                    resp.code if resp else type(err).__name__,
                    resp.body if resp else None,
                )
            )

        self.ctx.invoke_async(
            "127.0.0.1:7000", RemotingCommand.create_request(code, body=body), timeout, cb
        )

    def process_request(self, channel, request):
        self.notified.append((self.ctx.now_ms, request.code, request.is_oneway))
        return None


def make(seed=1, **kw):
    d = SimDriver(seed=seed, **kw)
    echo, client = Echo(), Client()
    d.add_node(echo)
    d.add_node(client)
    return d, echo, client


def make_with_other():
    """``make()``, a second client ``other`` (127.0.0.3) that has not connected yet, and
    one answered call of the first, so that its connection is open."""
    d, echo, client = make()
    other = Client("other")
    other.address = "127.0.0.3:0"
    d.add_node(other)
    client.call(1, b"before")
    d.run_until_idle()
    return d, echo, client, other


def test_request_response_takes_two_latencies():
    """With the default 1 ms latency a round trip completes at t=2."""
    d, _, c = make()
    c.call(1, b"hello")
    d.run_until_idle()
    assert c.results == [(2, 0, b"hello")]


def test_unknown_code_gets_request_code_not_supported():
    """The base Node answers REQUEST_CODE_NOT_SUPPORTED (3) with RocketMQ's remark."""
    d, _, c = make()
    got = []
    c.ctx.invoke_async(
        "127.0.0.1:7000",
        RemotingCommand.create_request(999),
        1000,
        lambda r, e: got.append((r.code, r.remark)),
    )
    d.run_until_idle()
    assert got == [(3, " request type 999 not supported")]


def test_timeout_fires_at_exact_deadline_and_is_daemon():
    """A held request times out at send time + timeout; run_until_idle does not wait for it."""
    d, echo, c = make()
    c.call(2, timeout=30000)
    d.run_until_idle()
    assert len(echo.held) == 1 and c.results == []
    assert [t.name for t in d.next_timers()] == ["NettyRemotingAbstract.scanResponseTable"]
    assert d.now == 1  # the request reached the echo node at t=1 and was held
    d.advance(29998)
    assert c.results == []
    d.advance(1)
    assert c.results == [(30000, "RemotingTimeoutException", None)]


def test_advance_is_inclusive():
    """advance(ms) runs events due exactly at now + ms."""
    d, _, c = make()
    fired = []
    c.ctx.set_timer("T", 15000, lambda: fired.append(d.now))
    d.advance(15000)
    assert fired == [15000] and d.now == 15000


def test_step_runs_one_event_and_returns_its_trace():
    """step() delivers one frame; the echo handler's trace event comes back."""
    d, _, c = make()
    c.call(1)
    evs = d.step()
    assert [(e.node, e.component, e.step, e.fields) for e in evs] == [
        ("echo", "Echo", "1", {"got": 1})
    ]
    assert d.now == 1


def test_server_to_client_oneway_on_same_channel():
    """NOTIFY-style oneway requests reach the client over the channel the request came on."""
    d, _, c = make()
    c.call(3)
    d.run_until_idle()
    assert c.notified == [(2, 40, True)]


def test_connect_failure_and_kill():
    """A kill's FIN does not fail a call under way: 4.9.3's client has no channelInactive
    handler, so the call waits out its timeout (SimDriver._close). Invoking the dead address
    then fails at once with RemotingConnectException (refused)."""
    d, echo, c = make()
    c.call(2)  # held by echo: no answer
    d.run_until_idle()
    d.stop_node("echo", graceful=False)
    d.run_until_idle()
    assert c.results == []
    d.advance(3000 - d.now)
    assert c.results == [(3000, "RemotingTimeoutException", None)]
    c.call(1)
    d.run_until_idle()
    assert c.results[-1] == (3000, "RemotingConnectException", None)
    assert len(c.results) == 2


def test_invoke_oneway_without_a_connection_raises():
    """invokeOneway to a dead node or over a cut link throws RemotingConnectException; nothing is written."""
    d, echo, c = make()
    seen = []
    echo.process_request = lambda ch, req: seen.append(req.code) or None
    d.set_link("client", "echo", down=True)
    with pytest.raises(RemotingConnectException, match=r"^connect to 127\.0\.0\.1:7000 failed$"):
        c.ctx.invoke_oneway("127.0.0.1:7000", RemotingCommand.create_request(35))
    d.set_link("client", "echo", down=False)
    c.ctx.invoke_oneway("127.0.0.1:7000", RemotingCommand.create_request(35))
    d.run_until_idle()
    d.stop_node("echo")
    with pytest.raises(RemotingConnectException):
        c.ctx.invoke_oneway("127.0.0.1:7000", RemotingCommand.create_request(35))
    d.run_until_idle()
    assert seen == [35]


def test_link_down_drops_and_fifo_per_direction():
    """A cut link drops frames (traced as a fault); with jitter, order per direction holds."""
    d, _, c = make()
    d.set_link("client", "echo", jitter_ms=50)
    for i in range(20):
        c.call(1, str(i).encode())
    d.run_until_idle()
    assert [r[2] for r in c.results] == [str(i).encode() for i in range(20)]
    d.set_link("client", "echo", down=True)
    c.call(1, timeout=100)
    d.run_until_idle()
    d.advance(100)
    assert c.results[-1][1] == "RemotingConnectException"
    assert any(e.kind == "fault" for e in d.recorder.events)


def test_a_silent_partition_keeps_the_open_connection_and_delays_a_new_connect():
    """Across a silent cut an open connection stays: a request on it gets no answer and times
    out (RemotingTimeoutException at its timeout); a frame already on its way before the cut
    arrives. A new connect fails after connectTimeoutMillis (3000 ms), not at once; with a
    reset (``silent=False``) it fails at once. The sender's kernel keeps the request: it
    reaches echo at TCP's first retransmission after the heal (sent at t0: t0 + 200, 400,
    800, 1600, 3200, 6400), and echo's answer finds no one waiting. A request sent right
    after the heal queues behind it on the same connection."""
    d, echo, c, other = make_with_other()
    assert c.results == [(2, 0, b"before")]
    conn = d._conns[("client", "127.0.0.1:7000")]
    c.call(1, b"in flight", timeout=500)  # reaches echo at 3, which answers before the cut
    d.advance(1)
    for a, b in (("client", "echo"), ("echo", "client"), ("other", "echo"), ("echo", "other")):
        d.set_link(a, b, down=True, silent=True)
    t0 = d.now
    c.call(1, b"into the cut", timeout=1000)
    other.call(1, b"new connect", timeout=5000)  # other never connected: no channel to keep
    d.advance(5000)
    assert [(t - t0, r) for t, r, _ in c.results[1:]] == [
        (1, 0),
        (1000, "RemotingTimeoutException"),
    ]
    assert [(t - t0, r) for t, r, _ in other.results] == [(3000, "RemotingConnectException")]
    assert not conn.closed and d._conns[("client", "127.0.0.1:7000")] is conn
    net = [(e.step, e.fields) for e in d.recorder.events
           if e.component == "SimNetwork" and e.step in ("hold", "drop")]  # fmt: skip
    assert [(step, f["to"], f["reason"]) for step, f in net] == [
        ("hold", "echo", "link down (silent)")
    ]
    for a, b in (("other", "echo"), ("echo", "other")):
        d.set_link(a, b, down=True, silent=False)
    t1 = d.now
    other.call(1, b"refused")
    d.run_until_idle()
    assert (other.results[-1][0] - t1, other.results[-1][1]) == (0, "RemotingConnectException")
    assert d.now - t0 == 5000
    for a, b in (("client", "echo"), ("echo", "client")):
        d.set_link(a, b, down=False, silent=False)
    c.call(1, b"healed")
    d.run_until_idle()
    got = [(e.t_ms - t0, e.fields["got"]) for e in d.recorder.events if e.component == "Echo"]
    assert got[2:] == [(6401, 1), (6401, 1)]  # the held request, then the one behind it
    assert [(t - t0, r, b) for t, r, b in c.results[3:]] == [(6402, 0, b"healed")]
    (rt,) = [e.fields for e in d.recorder.events if e.step == "retransmit"]
    assert (rt["held"], rt["since"] - t0, rt["at"] - t0) == (1, 0, 6400)
    assert d._conns[("client", "127.0.0.1:7000")] is conn


def test_malformed_frame_closes_only_that_connection():
    """A frame that does not decode closes its connection; other clients keep working."""
    d, _, c = make()
    other = Client("other")
    other.address = "127.0.0.3:0"
    d.add_node(other)
    c.call(2)
    other.call(1, b"ok")
    d.run_until_idle()
    conn = d._conns[("client", "127.0.0.1:7000")]
    d.scheduler.call_later(
        0, lambda: d._deliver(conn, "echo", b"\x00\x00\x00\x05\x07\x00\x00\x00\x00"), keyed=False
    )
    d.run_until_idle()
    # echo's decoder closed the connection; the client, told by the FIN, waits out its call
    assert c.results == []
    assert any(e.kind == "error" and e.component == "NettyDecoder" for e in d.recorder.events)
    other.call(1, b"again")
    d.run_until_idle()
    assert other.results[-1][1:] == (0, b"again")


def test_timers_of_stopped_node_are_silent():
    """A stopped node's timers never fire."""
    d, _, c = make()
    fired = []
    c.ctx.set_timer("T", 10, lambda: fired.append(1), period_ms=10)
    d.advance(25)
    d.stop_node("client")
    d.advance(100)
    assert fired == [1, 1]


def scenario(seed):
    d, _, c = make(seed=seed, trace_level=TraceLevel.FRAMES)
    d.set_link("client", "echo", jitter_ms=7, drop_rate=0.2)
    for i in range(30):
        c.call(1, str(i).encode(), timeout=500)
    d.run_until_idle()
    d.advance(1000)
    return d.recorder.to_jsonl(), c.results


def test_same_seed_same_trace_bytes():
    """Same seed and calls → byte-identical trace; another seed differs."""
    a, ra = scenario(7)
    b, rb = scenario(7)
    c, _ = scenario(8)
    assert a == b and ra == rb
    assert a != c


def test_bad_arguments_raise_value_error():
    """Misuse names the argument."""
    d, _, _ = make()
    with pytest.raises(ValueError, match="advance"):
        d.advance(-1)
    with pytest.raises(ValueError, match="already used"):
        d.add_node(Echo())
    with pytest.raises(ValueError, match="no node named"):
        d.node("nope")


class Farewell(Client):
    def on_stop(self):
        self.ctx.invoke_oneway("127.0.0.1:7000", RemotingCommand.create_request(35, body=b"bye"))


def test_graceful_stop_delivers_frames_written_during_shutdown():
    """A graceful stop closes the connection after the last frame its shutdown wrote (TCP FIN)."""
    d = SimDriver()
    echo = Echo()
    d.add_node(echo)
    f = Farewell()
    d.add_node(f)
    f.call(1)
    d.run_until_idle()
    seen = []
    echo.process_request = lambda ch, req: seen.append(req.body) or None
    d.stop_node("client")
    d.run_until_idle()
    assert seen == [b"bye"]


class SlowShutdown(Client):
    """A shutdown that waits for an answer first (Java's blocking consumer shutdown)."""

    def on_stop(self):
        from mqlab.runtime.task import Rpc, spawn

        def steps():
            resp = yield Rpc("127.0.0.1:7000", RemotingCommand.create_request(1, body=b"q"), 3000)
            self.results.append((self.ctx.now_ms, resp.code, resp.body))

        return spawn(self.ctx, steps(), name="SlowShutdown", on_done=lambda t: None)


def test_graceful_stop_waits_for_the_shutdown_task_and_a_kill_ends_the_wait():
    """on_stop's task not done: the node runs until it ends (its answer at 2 ms, then the
    stop); a second graceful stop meanwhile does nothing; a kill while it waits stops the
    node at once, and the answer, if it came, is not taken."""
    d = SimDriver()
    d.add_node(Echo())
    s = SlowShutdown()
    d.add_node(s)
    d.stop_node("client")
    d.stop_node("client")
    assert s.running
    d.run_until_idle()
    assert not s.running
    assert s.results == [(2, 0, b"q")]
    assert [(e.t_ms, e.step) for e in d.recorder.select(component="SimDriver", node="client")
            if e.step in ("stopping", "stop")] == [(0, "stopping"), (2, "stop")]  # fmt: skip
    d2 = SimDriver()
    d2.add_node(Echo())
    s2 = SlowShutdown()
    d2.add_node(s2)
    d2.stop_node("client")
    d2.stop_node("client", graceful=False)
    assert not s2.running
    d2.run_until_idle()
    assert s2.results == []


def test_a_done_callback_runs_when_a_task_without_on_done_fails():
    """``Task.add_done_callback``: a failed task with no ``on_done`` raises its error, and
    still calls its waiters first, so a driver's stop that waits on it ends."""
    from mqlab.runtime.task import Task

    class Ctx:
        pass

    def gen():
        raise ValueError("boom")
        yield

    task = Task(Ctx(), gen(), "t", None)
    seen = []
    task.add_done_callback(lambda t: seen.append((t.done, repr(t.error))))
    with pytest.raises(ValueError, match="boom"):
        task._step()
    assert seen == [(True, "ValueError('boom')")]


def test_tcp_retransmission_at_doubles_from_200_ms_up_to_120_s():
    """Data first sent at 0 is retransmitted at 200, 400, 800 ... 102 400 ms, then the gap
    stops doubling at TCP_RTO_MAX (120 s): 204 800, 324 800. A heal exactly at a
    retransmission gets that one; a heal 1 ms later waits for the next."""
    from mqlab.runtime.sim import tcp_retransmission_at

    assert [tcp_retransmission_at(0, now) for now in (0, 200, 201, 6400, 6401)] == [
        200, 200, 400, 6400, 12_800,
    ]  # fmt: skip
    assert [tcp_retransmission_at(0, now) for now in (102_401, 204_801, 324_801)] == [
        204_800, 324_800, 444_800,
    ]  # fmt: skip
    assert tcp_retransmission_at(668, 9323) == 13_468  # lesson 14's isolated leader


def test_a_machine_that_goes_down_tells_no_peer_and_resets_old_connections_when_back():
    """A kill's kernel closes the connection at once; a power cut leaves no kernel to do so.
    The client's connection stays open: a request on it waits out its timeout, one sent
    into the dead machine stays unacknowledged (TCP retransmits it 200, 400, 800 ... ms after
    it was first sent), and a new connect from another node waits out connectTimeoutMillis.
    When echo's machine is up again its kernel answers the client's next retransmission with
    a reset, one round trip later; the client connects again on its next call. The server
    end of a channel whose peer went silent closes after 120 s without a read or a write
    (Netty's IdleStateHandler)."""
    d, echo, c, other = make_with_other()
    conn = d._conns[("client", "127.0.0.1:7000")]
    d.advance(8)
    t0 = d.now  # 10
    d.stop_node("echo", graceful=False, fault="power_cut")
    assert not conn.closed and conn.lost == "echo"
    c.call(1, b"into nothing", timeout=1000)  # unacknowledged from t0 on
    other.call(1, b"new connect", timeout=5000)
    d.advance(3500)
    assert [(t - t0, r) for t, r, _ in c.results[1:]] == [(1000, "RemotingTimeoutException")]
    assert [(t - t0, r) for t, r, _ in other.results] == [(3000, "RemotingConnectException")]
    assert not conn.closed
    d.start_node("echo")  # at t0 + 3500: the retransmissions are at t0 + 200, 400 ... 3200, 6400
    d.run_until_idle()
    (reset,) = [e.fields for e in d.recorder.events if e.step == "reset"]
    assert (reset["by"], reset["at"] - t0) == ("echo", 6402)
    assert conn.closed and d.now - t0 == 6402
    c.call(1, b"again")  # a new connection
    d.run_until_idle()
    assert [(t - t0, r, b) for t, r, b in c.results[2:]] == [(6404, 0, b"again")]
    assert d._conns[("client", "127.0.0.1:7000")] is not conn
    # nothing the client sent after the reset reached the old connection's echo end
    assert [e.fields["got"] for e in d.recorder.events if e.component == "Echo"] == [1, 1]


def test_a_peer_with_nothing_outstanding_is_reset_at_its_next_send_and_idle_closes_the_rest():
    """The client's channel has nothing unacknowledged when echo's machine goes down: the
    restart is noticed only at the client's next send (reset one round trip later, the call
    fails at once with the channel). The other way round: echo's own channel to a client
    whose machine went down closes once 120 s pass without a read or a write on it."""
    d, echo, c = make()
    c.call(1, b"before")
    d.run_until_idle()
    conn = d._conns[("client", "127.0.0.1:7000")]
    d.stop_node("echo", graceful=False, fault="lost")
    d.advance(500)
    d.start_node("echo")
    d.advance(1000)
    assert not conn.closed  # nothing sent: nothing learned
    t1 = d.now
    c.call(1, b"stale", timeout=3000)
    d.run_until_idle()
    assert [(t - t1, r) for t, r, _ in c.results[1:]] == [(2, "RemotingSendRequestException")]
    assert conn.closed

    d2, echo2, c2 = make()
    c2.call(1, b"before")
    d2.run_until_idle()  # echo's end last wrote at 1 (its answer)
    conn2 = d2._conns[("client", "127.0.0.1:7000")]
    closed = []
    echo2.channel_inactive = lambda ch: closed.append((d2.now, ch.id))
    d2.stop_node("client", graceful=False, fault="power_cut")
    d2.advance(200_000)
    assert closed == [(120_001, conn2.server_end.id)]
    (idle,) = [e for e in d2.recorder.events if e.step == "idle"]
    assert (idle.node, idle.t_ms, idle.fields["since"]) == ("echo", 120_001, 1)
