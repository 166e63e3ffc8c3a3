"""The asyncio network driver on its own: framing, dispatch, held requests, invokes, timers.

Mirrors the role of NettyRemotingServer/Client; docs/reference.md §1.1 (frame layout, 16 MiB limit),
§1.3 (flags), §1.6 (dispatch: unknown codes, exceptions → SYSTEM_ERROR, oneway);
docs/cpp-client.md §1 (JSON replies with type byte 0, extFields on every reply, many requests
in flight on one connection).
"""

import asyncio
import json
import socket
import struct
import time

import pytest

from mqlab.remoting.command import RemotingCommand, SerializeType, split_frames
from mqlab.runtime.context import Node, RemotingConnectException, RemotingTimeoutException
from mqlab.runtime.net import NetDriver, bind_socket, epoch_ms
from mqlab.trace.events import TraceLevel


class Echo(Node):
    """1: echo the body; 2: hold (answer later with ``release``); 3: raise; 4: notify back;
    5: note the body (``seen``) and answer; 6: answer, then close the connection; 7: answer
    and arm a 0 ms timer that releases the held request (a put asking for the reput that
    wakes a parked pull)."""

    def __init__(self, address="127.0.0.1:0"):
        super().__init__("echo", address)
        self.held = []
        self.inactive = []
        self.seen = []

    def process_request(self, channel, request):
        if request.code == 1:
            return RemotingCommand.create_response(0, body=request.body)
        if request.code == 2:
            self.held.append((channel, request))
            return None
        if request.code == 3:
            raise ValueError("boom")
        if request.code == 4:
            self.ctx.send_request_oneway(channel, RemotingCommand.create_request(40, {"g": "G"}))
            return RemotingCommand.create_response(0)
        if request.code == 5:
            self.seen.append(request.body)
            return RemotingCommand.create_response(0)
        if request.code == 7:
            self.ctx.set_timer("Release", 0, lambda: self.release(b"woken"))
            return RemotingCommand.create_response(0, body=request.body)
        if request.code == 6:
            resp = RemotingCommand.create_response(0, body=request.body)
            resp.opaque = request.opaque
            resp.mark_response_type()
            self.ctx.send_response(channel, resp)
            self.ctx.close_channel(channel)
            return None
        return super().process_request(channel, request)

    def release(self, body):
        channel, request = self.held.pop(0)
        resp = RemotingCommand.create_response(0, body=body)
        resp.opaque = request.opaque
        resp.mark_response_type()
        self.ctx.send_response(channel, resp)

    def channel_inactive(self, channel):
        self.inactive.append(channel.remote_address)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


async def start_echo(**kw):
    driver = NetDriver(trace_level=kw.pop("trace_level", TraceLevel.STEPS), **kw)
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    echo = Echo(f"127.0.0.1:{port}")
    await driver.add_node(echo, sock=sock)
    return driver, echo, port


class Wire:
    """A raw TCP peer: write frames, read decoded frames."""

    def __init__(self, reader, writer):
        self.reader, self.writer, self.buf = reader, writer, bytearray()

    @classmethod
    async def open(cls, port):
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    def send(self, code, ext=None, body=None, opaque=1, flag=0):
        req = RemotingCommand.create_request(code, ext, body)
        req.opaque, req.flag = opaque, flag
        self.writer.write(req.encode())

    async def recv(self, timeout=5):
        while True:
            frames = split_frames(self.buf)
            if frames:
                self.buf[:0] = b"".join(struct.pack(">i", len(f)) + f for f in frames[1:])
                return frames[0]
            chunk = await asyncio.wait_for(self.reader.read(65536), timeout)
            if not chunk:
                return None
            self.buf += chunk


def test_reply_is_json_type_byte_0_with_string_extfields_and_same_opaque():
    """A reply: serialize byte 0, header JSON with flag bit 0 set, the request's opaque, and an
    extFields object even when the node set none (docs/cpp-client.md §1 response rules)."""

    async def main():
        driver, _, port = await start_echo()
        w = await Wire.open(port)
        w.send(1, {"queueId": "0"}, b"ping", opaque=77)
        payload = await w.recv()
        word = struct.unpack(">I", payload[:4])[0]
        assert word >> 24 == 0
        header = json.loads(payload[4 : 4 + (word & 0xFFFFFF)])
        assert (header["code"], header["flag"], header["opaque"]) == (0, 1, 77)
        assert header["extFields"] == {}
        assert payload[4 + (word & 0xFFFFFF) :] == b"ping"
        await driver.close()

    run(main())


def test_rocketmq_binary_request_gets_a_json_reply():
    """A ROCKETMQ-serialized request (type byte 1) is decoded; the reply is JSON (byte 0), as a
    Java server answers in its own configured type (docs/reference.md §1.2, §1.5)."""

    async def main():
        driver, _, port = await start_echo()
        w = await Wire.open(port)
        req = RemotingCommand(1, ext_fields={"k": "v"}, body=b"bin", opaque=8,
                              serialize_type=SerializeType.ROCKETMQ)  # fmt: skip
        frame = req.encode()
        assert frame[4] == 1
        w.writer.write(frame)
        payload = await w.recv()
        assert payload[0] == 0
        resp = RemotingCommand.decode_payload(payload)
        assert (resp.opaque, resp.body, resp.is_response) == (8, b"bin", True)
        await driver.close()

    run(main())


def test_many_requests_in_flight_on_one_connection_answer_out_of_order():
    """A held request (None from process_request) does not block later ones on the same
    connection; its answer comes when the node sends it (long polling, docs/reference.md §10.3)."""

    async def main():
        driver, echo, port = await start_echo()
        w = await Wire.open(port)
        w.send(2, opaque=1)
        w.send(2, opaque=2)
        w.send(1, body=b"third", opaque=3)
        first = RemotingCommand.decode_payload(await w.recv())
        assert (first.opaque, first.body) == (3, b"third")
        echo.release(b"late-1")
        echo.release(b"late-2")
        got = [RemotingCommand.decode_payload(await w.recv()) for _ in range(2)]
        assert [(c.opaque, c.body) for c in got] == [(1, b"late-1"), (2, b"late-2")]
        await driver.close()

    run(main())


def test_frames_split_and_coalesced_across_reads():
    """Frames cut at every byte and several frames in one write are all decoded, in order."""

    async def main():
        driver, _, port = await start_echo()
        w = await Wire.open(port)
        frames = b""
        for i in range(3):
            req = RemotingCommand.create_request(1, None, f"m{i}".encode())
            req.opaque = i
            frames += req.encode()
        for b in frames[:10]:
            w.writer.write(bytes([b]))
            await w.writer.drain()
            await asyncio.sleep(0.001)
        w.writer.write(frames[10:])
        got = [RemotingCommand.decode_payload(await w.recv()) for _ in range(3)]
        assert [(c.opaque, c.body) for c in got] == [(0, b"m0"), (1, b"m1"), (2, b"m2")]
        await driver.close()

    run(main())


async def _warm_and_spy(driver, port):
    """A client connection warmed by one echo, and the writes of its server side."""
    w = await Wire.open(port)
    w.send(1, body=b"warm", opaque=100)
    assert RemotingCommand.decode_payload(await w.recv()).opaque == 100
    (conn,) = driver._connections.values()
    writes = []
    write = conn.transport.write
    conn.transport.write = lambda data: (writes.append(bytes(data)), write(data))[1]
    return w, conn, writes


def test_answers_to_the_frames_of_one_read_leave_in_one_write():
    """Three requests that arrive in one read are answered in one transport write, the three
    frames in request order (NetConnection.write: one write per connection per pass)."""

    async def main():
        driver, _, port = await start_echo()
        w, conn, writes = await _warm_and_spy(driver, port)
        frames = b""
        for i in range(3):
            req = RemotingCommand.create_request(1, None, f"m{i}".encode())
            req.opaque = i
            frames += req.encode()
        w.writer.write(frames)
        got = [RemotingCommand.decode_payload(await w.recv()) for _ in range(3)]
        assert [(c.opaque, c.body) for c in got] == [(0, b"m0"), (1, b"m1"), (2, b"m2")]
        assert len(writes) == 1
        parts = split_frames(bytearray(writes[0]))
        assert [RemotingCommand.decode_payload(f).opaque for f in parts] == [0, 1, 2]
        await driver.close()

    run(main())


def test_a_0_ms_timer_armed_by_a_read_runs_when_the_read_ends_and_writes_after_its_answers():
    """A held request and one that arms a 0 ms timer (code 7), in one read: the timer fires
    before the read callback returns (not after the loop's other callbacks), and the
    connection sees two writes: the read's answer, then the frame the timer wrote."""

    async def main():
        driver, echo, port = await start_echo()
        w, conn, writes = await _warm_and_spy(driver, port)
        held_after_read = []
        received = conn.data_received

        def data_received(data):
            received(data)
            held_after_read.append(len(echo.held))

        conn.data_received = data_received
        hold = RemotingCommand.create_request(2, None, b"h")
        hold.opaque = 1
        arm = RemotingCommand.create_request(7, None, b"a")
        arm.opaque = 2
        w.writer.write(hold.encode() + arm.encode())
        got = [RemotingCommand.decode_payload(await w.recv()) for _ in range(2)]
        assert [(c.opaque, c.body) for c in got] == [(2, b"a"), (1, b"woken")]
        assert held_after_read == [0]  # released within the read's callback
        assert [[RemotingCommand.decode_payload(f).opaque for f in split_frames(bytearray(x))]
                for x in writes] == [[2], [1]]  # fmt: skip
        await driver.close()

    run(main())


def test_answer_sent_before_a_close_still_reaches_the_peer():
    """A node that answers and then closes the connection in the same pass: the answer goes
    out before the close (queued frames are written first), then the peer reads EOF."""

    async def main():
        driver, _, port = await start_echo()
        w = await Wire.open(port)
        w.send(6, body=b"bye", opaque=9)
        resp = RemotingCommand.decode_payload(await w.recv())
        assert (resp.opaque, resp.body, resp.is_response) == (9, b"bye", True)
        assert await w.recv() is None
        await driver.close()

    run(main())


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (struct.pack(">i", 16_777_213) + b"x", "bad frame length 16777213"),
        (struct.pack(">i", 3) + b"xyz", "bad frame length 3"),
        (struct.pack(">iI", 6, 100) + b"{}", "header length 100 exceeds frame payload 2"),
        (struct.pack(">iI", 7, 3) + b"{x}", "header is not JSON"),
        (struct.pack(">iI", 6, (5 << 24) | 2) + b"{}", "unknown serialize type 5"),
    ],
)
def test_malformed_frame_closes_only_that_connection(bad, error):
    """Over 16 MiB (length + 4 > 16,777,216), length < 4, bad JSON, unknown serialize type:
    that connection is closed with a decode error event; frames before it were answered and
    another connection is served (docs/reference.md §1.1; docs/design.md §6.10)."""

    async def main():
        driver, echo, port = await start_echo()
        other = await Wire.open(port)
        w = await Wire.open(port)
        ok = RemotingCommand.create_request(1, None, b"before")
        ok.opaque = 5
        w.writer.write(ok.encode() + bad)
        first = RemotingCommand.decode_payload(await w.recv())
        assert (first.opaque, first.body) == (5, b"before")
        assert await w.recv() is None  # closed by the broker
        other.send(1, body=b"still here", opaque=9)
        assert RemotingCommand.decode_payload(await other.recv()).body == b"still here"
        [err] = driver.decode_errors
        assert error in err
        [ev] = driver.recorder.select(component="NettyDecoder", step="decode")
        assert error in ev.fields["error"]
        await asyncio.sleep(0.05)
        assert len(echo.inactive) == 1
        await driver.close()

    run(main())


def test_handler_exception_is_system_error_and_unknown_code_not_supported():
    """An exception → SYSTEM_ERROR (1) with a remark, the connection stays open; an unknown
    code → REQUEST_CODE_NOT_SUPPORTED (3) " request type 999 not supported" (docs/reference.md §1.6)."""

    async def main():
        driver, _, port = await start_echo()
        w = await Wire.open(port)
        w.send(3, opaque=1)
        resp = RemotingCommand.decode_payload(await w.recv())
        assert (resp.code, resp.remark, resp.ext_fields) == (1, "ValueError: boom", {})
        w.send(999, opaque=2)
        resp = RemotingCommand.decode_payload(await w.recv())
        assert (resp.code, resp.remark) == (3, " request type 999 not supported")
        assert driver.errors == ["echo: process_request code 3: ValueError('boom')"]
        await driver.close()

    run(main())


def test_oneway_request_gets_no_reply_and_server_notify_is_oneway():
    """flag 2 (oneway) → no reply; a node's send_request_oneway reaches the client with the
    oneway bit set (NOTIFY_CONSUMER_IDS_CHANGED, docs/reference.md §1.3)."""

    async def main():
        driver, _, port = await start_echo()
        w = await Wire.open(port)
        w.send(1, body=b"nobody", opaque=1, flag=2)
        w.send(4, opaque=2)
        got = [RemotingCommand.decode_payload(await w.recv()) for _ in range(2)]
        notify = next(c for c in got if not c.is_response)
        assert (notify.code, notify.flag, notify.ext_fields) == (40, 2, {"g": "G"})
        assert [c.opaque for c in got if c.is_response] == [2]
        await driver.close()

    run(main())


def test_frames_sent_before_the_peer_closed_are_handled_when_a_write_breaks():
    """A client writes its last requests and closes (the Go client's shutdown: one
    UPDATE_CONSUMER_OFFSET per queue, then close). The broker's next write to it fails
    (EPIPE: the peer answered the first one with RST) and asyncio stops reading, but the
    requests sent before the close are still in the socket: each is handled, as Netty's I/O
    thread has read them while processors answer from their executors; only the answers
    are lost."""

    async def main():
        driver, echo, port = await start_echo()
        peer = socket.create_connection(("127.0.0.1", port))
        for opaque in (1, 2, 3):  # three held requests: answers the server writes later
            req = RemotingCommand.create_request(2)
            req.opaque = opaque
            peer.sendall(req.encode())
        while len(echo.held) < 3:
            await asyncio.sleep(0.01)
        # from here on the loop does not run until the end: the server reads nothing more
        for i in range(2):
            last = RemotingCommand.create_request(5, body=f"commit-{i}".encode())
            last.opaque = 10 + i
            peer.sendall(last.encode())
        peer.close()  # FIN; the server's next write is answered with RST
        conn = next(iter(driver._connections.values()))
        for _ in range(3):
            echo.release(b"late")
            driver._flush()  # the end of a loop pass: the queued answer is written now
            if conn.transport.is_closing():
                break
            time.sleep(0.05)  # the RST comes back; the next write fails
        assert conn.transport.is_closing(), "a write to the closed peer failed"
        while not echo.inactive:
            await asyncio.sleep(0.01)
        assert echo.seen == [b"commit-0", b"commit-1"]
        await driver.close()

    run(main())


class Caller(Node):
    def __init__(self):
        super().__init__("caller", "")
        self.results = []

    def call(self, addr, code, timeout_ms=2000):
        def cb(resp, err):
            self.results.append(resp.body if resp is not None else type(err))

        self.ctx.invoke_async(
            addr, RemotingCommand.create_request(code, None, b"hi"), timeout_ms, cb
        )
        assert self.results == []  # never called back before invoke_async returns


def test_invoke_async_response_timeout_and_connect_failure():
    """invoke_async: the response body; RemotingTimeoutException after the timeout on a held
    request; RemotingConnectException when nothing listens."""

    async def main():
        driver, _, port = await start_echo()
        caller = Caller()
        await driver.add_node(caller)
        caller.call(f"127.0.0.1:{port}", 1)
        caller.call(f"127.0.0.1:{port}", 2, timeout_ms=100)
        dead = bind_socket("127.0.0.1", 0)
        dead_port = dead.getsockname()[1]
        dead.close()
        caller.call(f"127.0.0.1:{dead_port}", 1)
        deadline = asyncio.get_running_loop().time() + 30  # 0.1 s of timeout, slower loaded
        while len(caller.results) < 3 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        assert sorted(map(str, caller.results)) == sorted(
            map(str, [b"hi", RemotingTimeoutException, RemotingConnectException])
        )
        assert len(driver.connections("caller")) == 1  # one connection per address
        await driver.close()

    run(main())


def test_invoke_oneway_to_a_bad_address_raises():
    """invoke_oneway with no channel to be had throws RemotingConnectException (invokeOneway)."""

    async def main():
        driver = NetDriver(trace_level=TraceLevel.STEPS)
        caller = Caller()
        await driver.add_node(caller)
        with pytest.raises(RemotingConnectException, match=r"^connect to <no-port> failed$"):
            caller.ctx.invoke_oneway("no-port", RemotingCommand.create_request(35))
        await driver.close()

    run(main())


class Ticker(Node):
    def __init__(self):
        super().__init__("ticker", "")
        self.fired = []

    def on_start(self):
        self.ctx.set_timer("Periodic.run", 20, lambda: self.fired.append("p"), period_ms=20)
        self.ctx.set_timer("Once", 10_000, lambda: self.fired.append("once"), key="k")
        self.ctx.set_timer("Replaced", 10, lambda: self.fired.append("old"))
        self.ctx.set_timer("Replaced", 30, lambda: self.fired.append("new"))
        self.ctx.set_timer("Cancelled", 10, lambda: self.fired.append("cancelled"))
        self.ctx.cancel_timer("Cancelled")


def test_timers_replace_cancel_period_wakeup_and_stop():
    """Timers keyed by (node, name, key): re-arming replaces, cancel silences, periodic
    repeats, wakeup fires now (ServiceThread#wakeup), a stopped node's timers go silent
    (docs/design.md §6.8)."""

    async def main():
        driver = NetDriver()
        t = Ticker()
        loop = asyncio.get_running_loop()
        start = loop.time()
        await driver.add_node(t)
        names = [(i.name, i.key, i.periodic) for i in driver.pending_timers()]
        assert names == [("Periodic.run", None, True), ("Replaced", None, False),
                         ("Once", "k", False)]  # fmt: skip
        assert t.ctx.wakeup_timer("Once", "k") is True
        # Until three periodic runs and the replacement have fired (about 0.06 s, longer
        # under load: a fixed 0.11 s sleep saw 2 runs at load 10), then bounded by the time
        # taken: the k-th run is due no earlier than 20*k ms after the timer was set.
        deadline = start + 30
        while (t.fired.count("p") < 3 or "new" not in t.fired) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        elapsed_ms = (loop.time() - start) * 1000
        assert t.fired.count("once") == 1 and "new" in t.fired and "old" not in t.fired
        assert "cancelled" not in t.fired
        assert 3 <= t.fired.count("p") <= elapsed_ms // 20 + 1
        await driver.stop_node("ticker")
        n = len(t.fired)
        await asyncio.sleep(0.05)
        assert len(t.fired) == n and driver.pending_timers() == []
        await driver.close()

    run(main())


def test_now_ms_is_epoch_wall_clock_and_frames_trace():
    """now_ms is epoch ms (store/born timestamps are compared across processes); with
    TraceLevel.FRAMES every frame in and out is a recv/send event."""

    async def main():
        before = epoch_ms()
        driver, echo, port = await start_echo(trace_level=TraceLevel.FRAMES)
        assert before <= echo.ctx.now_ms <= epoch_ms()
        w = await Wire.open(port)
        w.send(1, body=b"x", opaque=4)
        await w.recv()
        frames = [
            (e.kind, e.fields["opaque"], e.fields["response"])
            for e in driver.recorder.select(component="RemotingCommand")
        ]
        assert frames == [("recv", 4, False), ("send", 4, True)]
        await driver.close()

    run(main())


class SlowShutdown(Node):
    """on_stop: a task waiting for the answer to a held request (code 2) of ``addr``."""

    def __init__(self, addr):
        super().__init__("slow", "127.0.0.1:0")
        self.addr = addr
        self.answers = []

    def on_stop(self):
        from mqlab.runtime.task import Rpc, spawn

        def steps():
            resp = yield Rpc(self.addr, RemotingCommand.create_request(2, body=b"q"), 60_000)
            self.answers.append(resp.body)

        return spawn(self.ctx, steps(), name="SlowShutdown", on_done=lambda t: None)


def test_graceful_stop_waits_for_the_shutdown_task_and_a_kill_ends_the_wait():
    """A graceful stop returns once on_stop's task has its answer; a second one waits for a
    held answer until a kill ends the wait (the node stops, the answer is never taken)."""

    async def main():
        driver, echo, port = await start_echo()
        for release in (True, False):
            slow = SlowShutdown(f"127.0.0.1:{port}")
            await driver.add_node(slow, listen=False)
            stop = asyncio.ensure_future(driver.stop_node("slow"))
            while not echo.held:
                await asyncio.sleep(0.01)
            assert slow.running and not stop.done()
            await driver.stop_node("slow")  # a second graceful stop does not start another
            if release:
                echo.release(b"bye")
                await stop
                assert slow.answers == [b"bye"]
            else:
                await driver.stop_node("slow", graceful=False)
                await stop
                assert slow.answers == [] and len(echo.held) == 1
                echo.held.clear()
            assert not slow.running
            await driver.remove_node("slow")
        await driver.close()

    run(main())


def test_a_channel_with_no_read_or_write_for_the_nodes_limit_is_closed():
    """Netty's IdleStateHandler(0, 0, maxIdle) in every pipeline: a peer that falls silent
    (its machine gone, nothing closed) has its channel closed once neither side has read
    or written for the node's limit (here 0.4 s; ``serverChannelMaxIdleTimeSeconds``, 120 s
    by default), and the node's ``channel_inactive`` runs. A channel that keeps talking
    stays; each frame read or written starts the wait again."""

    class Quick(Echo):
        def channel_max_idle_ms(self, *, server_side):
            return 400 if server_side else 120_000

    async def main():
        driver = NetDriver(trace_level=TraceLevel.STEPS)
        sock = bind_socket("127.0.0.1", 0)
        port = sock.getsockname()[1]
        echo = Quick(f"127.0.0.1:{port}")
        await driver.add_node(echo, sock=sock)
        silent, busy = await Wire.open(port), await Wire.open(port)
        t0 = time.monotonic()
        for i in range(8):  # 0.1 s apart: never 0.4 s without a frame
            busy.send(1, body=b"x", opaque=i)
            assert (await busy.recv()) is not None
            await asyncio.sleep(0.1)
        # the silent one was closed by then: EOF, 0.4 s after it connected
        assert await silent.recv(timeout=2) is None
        assert 0.35 < time.monotonic() - t0 < 1.5
        idle = [e for e in driver.recorder.events if e.step == "idle"]
        assert len(idle) == 1 and idle[0].fields["idle_ms"] == 400
        assert len(echo.inactive) == 1
        assert await busy.recv(timeout=1.5) is None  # silent from now on: closed too
        assert len(echo.inactive) == 2
        await driver.close()

    run(main())
