"""The asyncio network driver: the sans-IO core on real sockets and the real clock.

Mirrors ``NettyRemotingServer`` / ``NettyRemotingClient`` / ``NettyRemotingAbstract``
(remoting/netty, RocketMQ 4.9.3) reduced to what the nodes use; docs/reference.md §1.1 (framing),
§1.6 (server-side dispatch). It implements the same ``NodeContext`` as the simulation
driver (``mqlab.runtime.sim``), so the broker that answers a notebook's simulated pull
answers the official C++ client here, unchanged.

What it owns: listening sockets, connections (one ``Channel`` per TCP connection end),
per-connection framing, the table of requests in flight keyed by ``(connection id,
opaque)``, and timers keyed by ``(node, name, key)`` on ``loop.call_later``. What it must
not know: what a request code means (nodes answer them) or what a timer does.

Decisions, documented:

* **Clock.** ``now_ms`` is wall-clock milliseconds since the Unix epoch
  (``System.currentTimeMillis``), not time since the server started: store and born
  timestamps travel to real clients and into the store files, and the delay-level
  schedule and a restart on the same store directory compare them across processes.
  Trace ``t_ms`` therefore reads as epoch ms (subtract the first event's ``t_ms`` for a
  timeline). Timers run on the loop's monotonic clock, so a wall-clock step does not
  fire or starve them.
* **Framing.** ``LengthFieldBasedFrameDecoder`` with a 16 MiB limit: a length field
  below 4 or a frame (length + 4) over ``MAX_FRAME_LENGTH``, a header that does not
  decode, or an unknown serialize type closes *that* connection, with a log line and an
  ``error`` trace event (``NettyDecoder``/``decode``); frames before the bad one are
  still served and every other connection carries on (docs/design.md §6.10: one boundary).
* **Concurrency.** A request is handled as soon as its frame is complete; the core
  answers synchronously or returns None (a held pull) and answers later through
  ``send_response``. So one connection can carry many requests in flight at once, in
  any order, as the C++ client expects (docs/cpp-client.md §1). A 0 ms timer armed while
  a read or a timer callback runs (the reput a put asks for, which wakes parked pulls)
  fires when that callback ends, right after its answers are written, and what it
  writes goes out at once (``NetDriver._end_batch``).
* **Write-buffer limit.** What a connection has written but the peer has not yet read
  (beyond the kernel's socket buffers) waits in the transport's write buffer. Above
  ``write_buffer_high_water_mark`` bytes (default ``WRITE_BUFFER_HIGH_WATER_MARK``,
  16 MiB; ``serve --write-buffer-high-water-mark``) the connection is aborted: the
  buffer is dropped, the peer sees a reset, the close is logged, traced
  (``NettyRemotingServer`` ``close`` with the reason) and kept in
  ``NetDriver.overflow_closes``, and every other connection carries on. So a client
  that sends requests but never reads the answers costs the broker at most the mark
  plus one response. 0 disables the limit (RocketMQ 4.9.3's Netty buffers without
  bound; its ``writeBufferHighWaterMark`` only flips ``Channel#isWritable``). A
  well-behaved client reading as fast as loopback or a LAN delivers stays far below
  it: the largest single response is a pull of at most 256 KiB in memory
  (``maxTransferBytesOnMessageInMemory``) or one message of at most 4 MiB.
* **Errors.** An exception in a handler becomes SYSTEM_ERROR with a short remark (not
  for oneway requests), a log line and an ``error`` trace event (docs/reference.md §1.6 step 4); an
  exception in a timer or a response callback is logged and traced. Nothing a peer
  sends can stop the loop. Such errors are kept in ``NetDriver.errors``; connections
  closed for malformed frames in ``NetDriver.decode_errors``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import MAX_FRAME_LENGTH, RemotingCommand, RemotingCommandException
from mqlab.runtime.context import (
    CONNECT_TIMEOUT_MILLIS,
    AcceptCallback,
    Channel,
    InvokeCallback,
    Node,
    NodeContext,
    RemotingConnectException,
    RemotingSendRequestException,
    RemotingTimeoutException,
    StreamChannel,
)
from mqlab.trace.events import Kind, TraceLevel
from mqlab.trace.recorder import NodeTracer, TraceRecorder

_FRAMES = int(TraceLevel.FRAMES)  # NOTE: performance: see mqlab/trace/recorder.py

__all__ = [
    "NetDriver",
    "NetContext",
    "NetConnection",
    "NetTimerInfo",
    "LoopThread",
    "LOOPS",
    "WRITE_BUFFER_HIGH_WATER_MARK",
    "bind_socket",
    "epoch_ms",
    "local_ip",
    "loop_name",
    "new_event_loop",
    "run_until_signalled",
    "wait_for",
]

log = logging.getLogger(__name__)

#: Default ``write_buffer_high_water_mark``: a connection with more than this many bytes
#: written but not yet taken by the peer is closed (0 = no limit).
WRITE_BUFFER_HIGH_WATER_MARK = 16 * 1024 * 1024
#: ``NetConnection.write`` joins a pass's frames to one connection up to about this many
#: bytes; a frame this large or larger (a big pull answer) is written as it comes.
COALESCE_BYTES = 64 * 1024
#: Keep at most about this many events in memory (older ones are dropped in chunks).
DEFAULT_KEEP_EVENTS = 20_000

#: ``NetDriver.errors`` / ``decode_errors`` keep this many of their latest entries.
MAX_NOTES = 1000


#: ``serve --loop``: the event loop implementations the network driver runs on.
LOOPS = ("asyncio", "uvloop", "auto")


def new_event_loop(kind: str = "asyncio") -> asyncio.AbstractEventLoop:
    """A new event loop of ``kind``: ``asyncio`` (the standard loop, the tested default),
    ``uvloop`` (libuv's loop, the ``uvloop`` extra: ``pip install mqlab[uvloop]``) or
    ``auto`` (uvloop when it is installed, else asyncio).

    The driver uses only what both loops offer (``call_soon``/``call_at``, protocols and
    transports, ``create_server`` on a bound socket), so the nodes see no difference.

    Raises:
        ValueError: ``kind`` is not one of ``LOOPS``, or it is ``uvloop`` and uvloop is not
            installed.
    """
    if kind not in LOOPS:
        raise ValueError(f"loop must be one of {', '.join(LOOPS)}; got {kind!r}")
    if kind != "asyncio":
        try:
            import uvloop
        except ImportError:
            if kind == "uvloop":
                raise ValueError(
                    "loop 'uvloop' needs the uvloop package (pip install 'mqlab[uvloop]')"
                ) from None
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: which implementation ``loop`` is."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def epoch_ms() -> int:
    """Wall-clock ms since the epoch (``System.currentTimeMillis``)."""
    return time.time_ns() // 1_000_000


def bind_socket(host: str, port: int, *, backlog: int = 1024) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 → the OS picks a free one).

    Binding before the node is built lets a caller learn the real port first (the broker
    stamps its address on every stored message and registers it with the name server).

    Raises:
        OSError: the address is in use or not available.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def bind_broker_socket(host: str, port: int, *, attempts: int = 50) -> socket.socket:
    """A broker's listening socket (``bind_socket``); with port 0, one whose ports + 1 and
    - 2 are free too, since the broker's HA service listens on the first
    (``haListenPort = listenPort + 1``, mechanisms.md "HA replication") and its VIP channel
    on the second (``BrokerController#initialize``'s fastRemotingServer). A given port is
    taken as it is: a taken HA port then fails the broker's start, as it fails 4.9.3's.

    Raises:
        OSError: the address is in use, or no such port was found in ``attempts`` tries.
    """
    if port != 0:
        return bind_socket(host, port)
    for _ in range(attempts):
        sock = bind_socket(host, 0)
        try:
            for other in (sock.getsockname()[1] + 1, sock.getsockname()[1] - 2):
                bind_socket(host, other).close()
        except OSError:
            sock.close()
            continue
        return sock
    raise OSError(f"no free port p on {host} with p + 1 and p - 2 free too, in {attempts} tries")


def local_ip() -> str:
    """This host's address towards other hosts, else ``127.0.0.1``.

    Stands in for ``RemotingUtil#getLocalAddress`` (the broker's default ``brokerIP1``)
    when the server listens on a wildcard address. Connecting a UDP socket sends nothing.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the outgoing interface
            return str(s.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def _fmt_addr(info: Any) -> str:
    if isinstance(info, tuple) and len(info) >= 2:
        return f"{info[0]}:{info[1]}"
    return str(info)


def _code_name(code: int, is_response: bool, codes: tuple[type, type] | None = None) -> str:
    """A frame's code by name: RocketMQ's, or ``codes`` (the local node's
    ``remoting_codes``: a DLedger node's frames, both ways, are DLedger's)."""
    try:
        return (codes or (RequestCode, ResponseCode))[1 if is_response else 0](code).name
    except ValueError:
        return str(code)


@dataclass(frozen=True, slots=True)
class NetTimerInfo:
    """A pending timer as ``NetDriver.pending_timers`` lists it (like sim's ``PendingTimer``)."""

    due_ms: int
    node: str
    name: str
    key: str | None
    daemon: bool
    periodic: bool


class _Timer:
    __slots__ = ("name", "key", "callback", "period_ms", "daemon", "due", "handle")

    def __init__(self, name, key, callback, period_ms, daemon) -> None:
        self.name = name
        self.key = key
        self.callback = callback
        self.period_ms = period_ms
        self.daemon = daemon
        self.due = 0.0  # loop time (s)
        self.handle: asyncio.Handle | None = None


class _Soon:
    """A timer due now, armed inside a batch: fired when the batch ends (``_end_batch``)."""

    __slots__ = ("ctx", "timer", "cancelled")

    def __init__(self, ctx: NetContext, timer: _Timer) -> None:
        self.ctx = ctx
        self.timer = timer
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class NetConnection(asyncio.Protocol):
    """One TCP connection, as seen by the node that owns this end of it.

    A server-side connection belongs to the listening node; a client-side one to the
    node that called ``invoke_async`` (the broker registering with the name server).
    """

    def __init__(self, driver: NetDriver, ctx: NetContext, *, client_side: bool, addr: str = ""):
        self.driver = driver
        self.ctx = ctx
        self.client_side = client_side
        self.addr = addr
        self.id = next(driver._conn_ids)
        self.channel = Channel(self.id, "", addr, addr)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.buf = bytearray()
        self._out: list[bytes] = []  # frames written while a client connection is opening
        #: frames written during this loop pass, sent in one write by ``NetDriver._flush``
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._close_reason: str | None = None
        #: when this end last read or wrote (``loop.time()``): Netty's ``IdleStateHandler``
        self.active = 0.0
        self._idle_handle: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport; both have its methods
        transport = cast(asyncio.Transport, transport)
        if self.closed:  # closed (its node stopped) while the connect was under way
            transport.close()
            return
        self.transport = transport
        if self.driver.write_buffer_high_water_mark:
            # asyncio calls pause_writing once the buffer is above ``high``.
            transport.set_write_buffer_limits(high=self.driver.write_buffer_high_water_mark)
        ch = self.channel
        ch.local_address = _fmt_addr(transport.get_extra_info("sockname"))
        ch.remote_address = _fmt_addr(transport.get_extra_info("peername"))
        ch.remote_node = self.addr or ch.remote_address
        self.driver._connections[self.id] = self
        self.active = self.driver.loop.time()
        self._watch_idle()
        if not self.client_side and self.ctx.tracer.enabled:
            self.ctx.tracer.emit(
                "NettyRemotingServer", "accept", Kind.STATE, conn=self.id,
                remote=ch.remote_address,
            )  # fmt: skip
        if self._out:
            for frame in self._out:
                transport.write(frame)
            self._out.clear()

    def data_received(self, data: bytes) -> None:
        # NOTE: performance: the usual case is one whole frame per read with nothing
        # buffered, parsed straight from ``data`` without copying it into ``buf``.
        driver = self.driver
        driver._batch_depth += 1
        self.active = driver.loop.time()
        try:
            if self.buf:
                self.buf += data
                rest = self._frames(self.buf)
                if rest is not None:
                    del self.buf[: len(self.buf) - rest]
            else:
                rest = self._frames(data)
                if rest:
                    self.buf += data[len(data) - rest :]
        finally:
            driver._end_batch()

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self._drain_received()
        # the peer's FIN (exc None, and not our own close) fails nothing under way
        fail_fast = exc is not None or self._close_reason is not None
        self.driver._on_closed(
            self, "peer closed" if exc is None else f"connection lost: {exc}", fail_fast=fail_fast
        )

    def _drain_received(self) -> None:
        """Handle the frames the peer sent before the connection broke.

        A write to a peer that has closed fails (EPIPE, ECONNRESET) and asyncio stops reading
        at once, though frames the peer wrote before its close still wait in the socket: a
        client that sends its last offset commits and closes (the Go client's shutdown
        ``persist``: one UPDATE_CONSUMER_OFFSET per queue, then close) would lose the ones not
        yet read. Netty reads on its I/O thread while processors answer from their executors
        (``NettyRemotingAbstract#processRequestCommand``), so those frames are read and handled;
        only their responses fail. This reads what is left (the socket is still open here),
        handles it, and drops the responses.
        """
        if self.transport is None or self.closed:
            return
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return
        try:
            # socket.fromfd dups the descriptor: works on uvloop's pseudo-socket too,
            # which has no dup() of its own
            dup = socket.fromfd(sock.fileno(), sock.family, sock.type)
        except OSError:
            return
        with dup:
            dup.setblocking(False)
            while not self.closed:
                try:
                    data = dup.recv(65536)
                except OSError:  # nothing more (EAGAIN) or the socket is gone
                    break
                if not data:
                    break
                self.data_received(data)

    def pause_writing(self) -> None:
        """The write buffer passed the high-water mark: abort this connection."""
        if self.transport is None or self.closed:
            return
        size = self.transport.get_write_buffer_size()
        mark = self.driver.write_buffer_high_water_mark
        reason = f"write buffer {size} bytes over the high-water mark {mark} (peer not reading)"
        log.warning(
            "%s: closing connection %s to %s: %s",
            self.ctx.node_name, self.id, self.channel.remote_address, reason,
        )  # fmt: skip
        self.driver._note(
            self.driver.overflow_closes,
            f"{self.ctx.node_name}: conn {self.id} {self.channel.remote_address}: {reason}",
        )
        self.driver.overflow_close_sizes.append(size)
        if len(self.driver.overflow_close_sizes) > MAX_NOTES:
            del self.driver.overflow_close_sizes[0]
        # abort, not close: a graceful close would wait for a peer that never reads.
        self.close(reason, abort=True)

    def resume_writing(self) -> None:
        pass  # the connection was aborted when writing paused

    # -- framing -------------------------------------------------------------------------------
    def _frames(self, data: bytes | bytearray) -> int | None:
        """Handle every complete frame of ``data``; return how many bytes are left over.

        Mirrors ``NettyDecoder`` (LengthFieldBasedFrameDecoder, 16 MiB); docs/reference.md §1.1.
        Returns None when the connection was closed (the rest is discarded).
        """
        n = len(data)
        pos = 0
        with memoryview(data) as mv:
            while n - pos >= 4:
                length = int.from_bytes(mv[pos : pos + 4], "big", signed=True)
                if length < 4 or length + 4 > MAX_FRAME_LENGTH:
                    self.fail(f"bad frame length {length} (max {MAX_FRAME_LENGTH})")
                    return None
                end = pos + 4 + length
                if end > n:
                    break
                try:
                    cmd = RemotingCommand.decode_payload(bytes(mv[pos + 4 : end]))
                except RemotingCommandException as e:
                    self.fail(str(e))
                    return None
                pos = end
                self.driver._on_command(self, cmd)
                if self.closed:
                    return None
        return n - pos

    # -- writing and closing ----------------------------------------------------------------------
    def write(self, frame: bytes) -> bool:
        """Queue ``frame`` for this connection; it goes out with the pass's other frames.

        NOTE: performance: one ``transport.write`` (one ``send`` syscall) per connection
        per batch instead of one per frame. A batch is one read (the answers to the
        several requests it carried) or one timer callback (the pulls a reput woke, which
        share a connection when one client instance pulls several queues); its frames to
        a connection are joined and written when it ends (``NetDriver._end_batch``).
        Frames written outside a batch (an invoke timeout's callback) are flushed by a
        ``call_soon``. Each answer still leaves as soon as its batch ends: nothing waits
        for a later loop pass. Measured: see ``mqlab/bench/real.py``.
        """
        if self.closed:
            return False
        if self.transport is None:
            self._out.append(frame)
        elif self.transport.is_closing():  # broken under us: see _drain_received
            return False
        else:
            pending = self._pending
            if not pending:
                if len(frame) >= COALESCE_BYTES or self.transport.get_write_buffer_size():
                    # a large answer, or the peer is behind (asyncio buffers anyway): as it
                    # comes, so the high-water mark is checked frame by frame as before
                    self.transport.write(frame)
                    self.active = self.driver.loop.time()
                    return True
                self.driver._dirty(self)
            pending.append(frame)
            self._pending_bytes += len(frame)
            if self._pending_bytes >= COALESCE_BYTES:
                self.flush()
        return True

    def flush(self) -> None:
        """Write the frames queued by ``write`` (one transport write)."""
        frames = self._pending
        if not frames:
            return
        self._pending = []
        self._pending_bytes = 0
        transport = self.transport
        if self.closed or transport is None or transport.is_closing():
            return
        transport.write(frames[0] if len(frames) == 1 else b"".join(frames))
        self.active = self.driver.loop.time()

    def _watch_idle(self) -> None:
        """Netty's ``IdleStateHandler(0, 0, maxIdle)`` on this channel: once it has neither
        read nor written for the node's limit (``Node.channel_max_idle_ms``:
        ``serverChannelMaxIdleTimeSeconds`` on an accepted channel,
        ``clientChannelMaxIdleTimeSeconds`` on one it opened, 120 s), ALL_IDLE, and
        ``NettyConnectManageHandler#userEventTriggered`` closes it (the name server then
        drops the broker whose channel it was). Checked when the limit would run out, as
        Netty schedules it, and again from the last activity until then."""
        if self.closed:
            return
        limit = self.ctx.node.channel_max_idle_ms(server_side=not self.client_side) / 1000
        loop = self.driver.loop
        idle_for = loop.time() - self.active
        if idle_for < limit:
            self._idle_handle = loop.call_at(self.active + limit, self._watch_idle)
            return
        self._idle_handle = None
        remote = self.channel.remote_address
        if self.ctx.tracer.enabled:
            self.ctx.tracer.emit(
                "NettyConnectManageHandler.userEventTriggered", "idle", Kind.STATE,
                conn=self.id, remote=remote, idle_ms=int(limit * 1000),
                text=f"no read or write on the channel to {remote} for {idle_for:.1f} s: "
                "ALL_IDLE, close",
            )  # fmt: skip
        log.info("%s: closing idle connection %s to %s", self.ctx.node_name, self.id, remote)
        self.close(f"idle for {int(limit * 1000)} ms")

    def fail(self, reason: str) -> None:
        """Close this connection because of malformed input (log + trace, once)."""
        if self.closed:
            return
        log.warning(
            "%s: closing connection %s from %s: %s",
            self.ctx.node_name, self.id, self.channel.remote_address, reason,
        )  # fmt: skip
        if self.ctx.tracer.enabled:
            self.ctx.tracer.emit(
                "NettyDecoder", "decode", Kind.ERROR, conn=self.id,
                remote=self.channel.remote_address, error=reason,
            )  # fmt: skip
        self.driver._note(self.driver.decode_errors, f"{self.ctx.node_name}: {reason}")
        self.close(reason)

    def close(self, reason: str, *, abort: bool = False) -> None:
        if self.transport is None:
            self.driver._on_closed(self, reason)
            return
        if abort:
            self._pending.clear()
            self._pending_bytes = 0
            self.transport.abort()
        else:
            self.flush()  # what was answered before the close still goes out first
            self.transport.close()
        # connection_lost follows from the loop; mark now so nothing more is handled.
        self.closed = True
        self.channel.closed = True
        self._close_reason = reason


class NetStream(asyncio.Protocol):
    """One end of a byte stream (``StreamChannel``) on a TCP connection: the HA link.

    Bytes go to the channel's ``on_bytes`` as they are read, the end to its ``on_close``
    (not after this end closed it). Bytes written while the connect is under way are sent
    once it is up; a failed connect ends in ``on_close`` with ``opened`` still False.
    """

    def __init__(self, driver: NetDriver, ctx: NetContext, channel: StreamChannel) -> None:
        self.driver = driver
        self.ctx = ctx
        self.channel = channel
        self.transport: asyncio.Transport | None = None
        self._out: list[bytes] = []
        self._on_accept: AcceptCallback | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport; both have its methods
        transport = cast(asyncio.Transport, transport)
        ch = self.channel
        if ch.closed or not self.ctx.node.running:
            transport.close()
            return
        self.transport = transport
        ch.opened = True
        ch.local_address = _fmt_addr(transport.get_extra_info("sockname"))
        ch.remote_address = _fmt_addr(transport.get_extra_info("peername"))
        self.driver._streams[ch.id] = self
        for data in self._out:
            transport.write(data)
        self._out.clear()
        if self._on_accept is not None:
            self.driver._guarded(self.ctx, "stream accept", self._on_accept, ch)

    def data_received(self, data: bytes) -> None:
        ch = self.channel
        if not ch.closed and ch.on_bytes is not None and self.ctx.node.running:
            self.driver._guarded(self.ctx, "stream bytes", ch.on_bytes, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.driver._streams.pop(self.channel.id, None)
        self.driver._stream_protos.pop(self.channel.id, None)
        self._end("peer closed" if exc is None else f"connection lost: {exc}")

    def _end(self, reason: str) -> None:
        ch = self.channel
        if ch.closed:
            return
        ch.closed = True
        if ch.on_close is not None and self.ctx.node.running:
            self.driver._guarded(self.ctx, "stream close", ch.on_close, reason)

    def write(self, data: bytes) -> None:
        if self.channel.closed:
            return
        if self.transport is None:
            self._out.append(data)
        else:
            self.transport.write(data)

    def close(self) -> None:
        self.channel.closed = True
        self.driver._streams.pop(self.channel.id, None)
        if self.transport is not None:
            self.transport.close()


class NetContext(NodeContext):
    """A node's view of the network driver (sockets, wall clock, ``loop.call_later``)."""

    def __init__(self, driver: NetDriver, node: Node) -> None:
        self.driver = driver
        self.node = node
        self.node_name = node.name
        self.tracer = NodeTracer(driver.recorder, node.name, epoch_ms)
        self._rngs: dict[str, random.Random] = {}
        self._opaque = itertools.count(1)
        self.timers: dict[tuple[str, str | None], _Timer] = {}
        # (connection id, opaque) -> (callback, timeout handle), for requests this node sent.
        self.pending: dict[tuple[int, int], tuple[InvokeCallback, asyncio.TimerHandle]] = {}

    @property
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def rng(self, purpose: str) -> random.Random:
        r = self._rngs.get(purpose)
        if r is None:
            r = self._rngs[purpose] = random.Random(
                f"{self.driver.seed}/{self.node_name}/{purpose}"
            )
        return r

    # -- timers ----------------------------------------------------------------------------
    def set_timer(
        self,
        name: str,
        delay_ms: int,
        callback: Callable[[], None],
        *,
        key: str | None = None,
        period_ms: int | None = None,
        daemon: bool = False,
    ) -> None:
        if delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, got {delay_ms}")
        if period_ms is not None and period_ms <= 0:
            raise ValueError(f"period_ms must be > 0, got {period_ms}")
        self.cancel_timer(name, key)
        t = _Timer(name, key, callback, period_ms, daemon)
        self.timers[(name, key)] = t
        loop = self.driver.loop
        self._arm(t, loop.time() + delay_ms / 1000.0)

    def _arm(self, t: _Timer, due: float) -> None:
        t.due = due
        loop = self.driver.loop
        if due <= loop.time():
            # Due now (a 0 ms timer, a wake-up): run it right after the current event,
            # before the loop reads the next batch of input. ``call_at(now)`` would run it
            # only after every callback of the next poll's input: the reput that wakes a
            # parked pull then waited for all the sends that had arrived meanwhile
            # (measured, Java client, 4 producer threads: put → woken pull's answer
            # p50 0.88 → 0.54 ms, p90 1.7 → 1.1 ms).
            #
            # Armed inside a read or a timer callback (the reput a put asks for), it runs
            # as soon as that callback's answers are written (``NetDriver._end_batch``),
            # not after the other callbacks of this loop pass: the pulls it wakes are
            # answered without waiting for the other connections' reads, and a pull read
            # later in the pass finds the messages dispatched instead of parking.
            driver = self.driver
            if driver._batch_depth:
                t.handle = soon = _Soon(self, t)
                driver._soon.append(soon)
            else:
                t.handle = loop.call_soon(self._fire, t)
        else:
            t.handle = loop.call_at(due, self._fire, t)

    def _fire(self, t: _Timer) -> None:
        if self.timers.get((t.name, t.key)) is not t or not self.node.running:
            return
        if t.period_ms is not None:
            # Re-arm before running (fixed rate), so the callback may cancel or move it.
            self._arm(t, max(t.due + t.period_ms / 1000.0, self.driver.loop.time()))
        else:
            del self.timers[(t.name, t.key)]
        driver = self.driver
        driver._batch_depth += 1
        try:
            t.callback()
        except Exception as e:
            driver._handler_error(self, f"timer {t.name!r}", e)
        finally:
            driver._end_batch()

    def cancel_timer(self, name: str, key: str | None = None) -> bool:
        t = self.timers.pop((name, key), None)
        if t is None:
            return False
        if t.handle is not None:
            t.handle.cancel()
        return True

    def has_timer(self, name: str, key: str | None = None) -> bool:
        return (name, key) in self.timers

    def wakeup_timer(self, name: str, key: str | None = None) -> bool:
        t = self.timers.get((name, key))
        if t is None:
            return False
        if t.handle is not None:
            t.handle.cancel()
        self._arm(t, self.driver.loop.time())
        return True

    def cancel_all_timers(self) -> None:
        for t in self.timers.values():
            if t.handle is not None:
                t.handle.cancel()
        self.timers.clear()

    # -- remoting ----------------------------------------------------------------------------
    def invoke_async(
        self, addr: str, request: RemotingCommand, timeout_ms: int, callback: InvokeCallback
    ) -> None:
        request.opaque = next(self._opaque)
        loop = self.driver.loop
        conn = self.driver._connect(self, addr)
        if conn is None:
            err = RemotingConnectException(f"connect to <{addr}> failed")
            loop.call_soon(self._run_callback, callback, None, err)
            return
        key = (conn.id, request.opaque)
        handle = loop.call_later(timeout_ms / 1000.0, self._invoke_timeout, key, addr, timeout_ms)
        self.pending[key] = (callback, handle)
        self.driver._send(conn, request)

    def _invoke_timeout(self, key: tuple[int, int], addr: str, timeout_ms: int) -> None:
        entry = self.pending.pop(key, None)
        if entry is not None:
            err = RemotingTimeoutException(
                f"wait response on the channel <{addr}> timeout, {timeout_ms}(ms)"
            )
            self._run_callback(entry[0], None, err)

    def _run_callback(
        self, callback: InvokeCallback, response: RemotingCommand | None, error: Exception | None
    ) -> None:
        if not self.node.running:
            return
        try:
            callback(response, error)
        except Exception as e:
            self.driver._handler_error(self, "invoke callback", e)

    def _fail_pending(self, conn_id: int, reason: str, *, connected: bool = True) -> None:
        """Fail the requests under way on connection ``conn_id``: ``failFast``'s
        RemotingSendRequestException on a channel that was open, RemotingConnectException on
        one whose connect failed (``NettyRemotingClient#createChannel`` returned null)."""
        failed = sorted(k for k in self.pending if k[0] == conn_id)
        error = RemotingSendRequestException if connected else RemotingConnectException
        for k in failed:
            cb, handle = self.pending.pop(k)
            handle.cancel()
            self.driver.loop.call_soon(self._run_callback, cb, None, error(reason))

    def invoke_oneway(self, addr: str, request: RemotingCommand) -> None:
        request.opaque = next(self._opaque)
        request.mark_oneway_rpc()
        conn = self.driver._connect(self, addr)
        if conn is None:  # NettyRemotingClient#invokeOneway: no channel → throw
            raise RemotingConnectException(f"connect to <{addr}> failed")
        self.driver._send(conn, request)

    def send_response(self, channel: Channel, response: RemotingCommand) -> None:
        conn = self.driver._connections.get(channel.id)
        if conn is None or conn.closed:
            return
        self.driver._send(conn, response)

    def send_request_oneway(self, channel: Channel, request: RemotingCommand) -> None:
        conn = self.driver._connections.get(channel.id)
        if conn is None or conn.closed:
            return
        request.opaque = next(self._opaque)
        request.mark_oneway_rpc()
        self.driver._send(conn, request)

    def invoke_channel(
        self, channel: Channel, request: RemotingCommand, timeout_ms: int, callback: InvokeCallback
    ) -> None:
        request.opaque = next(self._opaque)
        loop = self.driver.loop
        conn = self.driver._connections.get(channel.id)
        if conn is None or conn.closed:
            err = RemotingSendRequestException(f"send request to <{channel.remote_address}> failed")
            loop.call_soon(self._run_callback, callback, None, err)
            return
        key = (conn.id, request.opaque)
        handle = loop.call_later(
            timeout_ms / 1000.0, self._invoke_timeout, key, channel.remote_address, timeout_ms
        )
        self.pending[key] = (callback, handle)
        self.driver._send(conn, request)

    # -- byte streams --------------------------------------------------------------------------
    def listen_stream(self, addr: str, on_accept: AcceptCallback) -> None:
        d = self.driver
        if addr in d.stream_servers:
            raise ValueError(f"address {addr!r} is already listened on")
        host, port = addr.rsplit(":", 1)
        sock = bind_socket(host.strip("[]"), int(port))  # OSError: the port is taken

        def factory() -> NetStream:
            ch = StreamChannel(next(d._conn_ids), addr, "", "")
            proto = NetStream(d, self, ch)
            proto._on_accept = on_accept
            return proto

        d.stream_servers[addr] = (self.node_name, None)
        task = d.loop.create_task(d._serve_stream(addr, factory, sock))
        d._tasks.add(task)
        task.add_done_callback(d._tasks.discard)

    def stop_listening(self, addr: str) -> None:
        self.driver._stop_stream_server(addr, self.node_name)

    def open_stream(self, addr, on_bytes, on_close) -> StreamChannel:
        d = self.driver
        ch = StreamChannel(next(d._conn_ids), "", addr, addr)
        ch.on_bytes, ch.on_close = on_bytes, on_close
        proto = NetStream(d, self, ch)
        d._stream_protos[ch.id] = proto
        host, sep, port = addr.rpartition(":")

        async def connect() -> None:
            try:
                if not sep or not port.isdigit():
                    raise OSError(f"bad address {addr!r}")
                await asyncio.wait_for(
                    d.loop.create_connection(lambda: proto, host.strip("[]"), int(port)),
                    CONNECT_TIMEOUT_MILLIS / 1000.0,
                )
            except (TimeoutError, OSError) as e:
                d._stream_protos.pop(ch.id, None)
                proto._end(f"connect to {addr} failed: {e}")

        task = d.loop.create_task(connect())
        d._tasks.add(task)
        task.add_done_callback(d._tasks.discard)
        return ch

    def send_bytes(self, channel: StreamChannel, data: bytes) -> None:
        proto = self.driver._stream_protos.get(channel.id)
        if proto is not None:
            proto.write(bytes(data))

    def close_stream(self, channel: StreamChannel) -> None:
        proto = self.driver._stream_protos.pop(channel.id, None)
        channel.closed = True
        if proto is not None:
            proto.close()

    def close_channel(self, channel: Channel) -> None:
        conn = self.driver._connections.get(channel.id)
        if conn is not None:
            conn.close(f"closed by {self.node_name}")


class NetDriver:
    """Runs nodes on an asyncio event loop, over TCP, on the real clock.

    Create it inside a running loop (``asyncio.run``, a thread's loop), then
    ``await add_node(...)`` each node; ``await stop_node(name)`` / ``await close()`` to
    end. All node code runs on the loop's thread.

    Args:
        run_id: the ``run_id`` of every trace event.
        trace_level: ``TraceLevel.OFF`` / ``STEPS`` / ``FRAMES``.
        seed: seeds each node's ``rng(purpose)`` streams (only choices such as a random
            queue id; timing is the real world's).
        keep_events: at most about this many events stay in ``recorder.events``
            (older ones are dropped in chunks; listeners still see every event).
        loop: the loop to use (default: the running loop).
        write_buffer_high_water_mark: close a connection whose write buffer holds more
            than this many bytes the peer has not read (0 = no limit); see the module
            docstring.
    """

    def __init__(
        self,
        *,
        run_id: str = "live",
        trace_level: TraceLevel = TraceLevel.STEPS,
        seed: int = 0,
        keep_events: int | None = DEFAULT_KEEP_EVENTS,
        loop: asyncio.AbstractEventLoop | None = None,
        write_buffer_high_water_mark: int = WRITE_BUFFER_HIGH_WATER_MARK,
    ) -> None:
        if keep_events is not None and keep_events < 1:
            raise ValueError(f"keep_events must be >= 1 or None, got {keep_events}")
        if write_buffer_high_water_mark < 0:
            raise ValueError(
                f"write_buffer_high_water_mark must be >= 0, got {write_buffer_high_water_mark}"
            )
        self.write_buffer_high_water_mark = write_buffer_high_water_mark
        self.loop = loop or asyncio.get_running_loop()
        self.recorder = TraceRecorder(run_id, trace_level)
        self.seed = seed
        self.keep_events = keep_events
        self.nodes: dict[str, Node] = {}
        self.contexts: dict[str, NetContext] = {}
        #: graceful stops waiting for their node's shutdown task (``stop_node``)
        self._stopping: dict[str, asyncio.Future[None]] = {}
        self.servers: dict[str, asyncio.AbstractServer] = {}
        #: more listening sockets of a node (a broker's VIP channel), by node name
        self.extra_servers: dict[str, list[asyncio.AbstractServer]] = {}
        #: handler, timer and callback exceptions (a core bug, or input the core mishandles)
        self.errors: list[str] = []
        #: connections closed for malformed frames (expected with a misbehaving peer)
        self.decode_errors: list[str] = []
        #: connections aborted for a write buffer over the high-water mark, and the
        #: buffer size (bytes) each had when it was aborted
        self.overflow_closes: list[str] = []
        self.overflow_close_sizes: list[int] = []
        self._connections: dict[int, NetConnection] = {}
        self._client_conns: dict[tuple[str, str], NetConnection] = {}
        self._conn_ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()
        #: byte streams: listen address -> (node, server); every open stream end by channel id
        self.stream_servers: dict[str, tuple[str, asyncio.AbstractServer | None]] = {}
        self._streams: dict[int, NetStream] = {}
        self._stream_protos: dict[int, NetStream] = {}
        self._tracer = NodeTracer(self.recorder, "net", epoch_ms)
        #: connections with frames queued in this loop pass (see ``NetConnection.write``)
        self._dirty_conns: list[NetConnection] = []
        #: > 0 while a read or a timer callback runs (frames are flushed when it ends)
        self._batch_depth = 0
        #: timers due now, armed during the current batch (``NetContext._arm``)
        self._soon: list[_Soon] = []
        if keep_events is not None:
            self.recorder.subscribe(self._trim_events)

    # -- nodes -------------------------------------------------------------------------------
    async def add_node(
        self, node: Node, *, sock: socket.socket | None = None, listen: bool = True,
        extra_socks: tuple[socket.socket, ...] = (),
    ) -> NetContext:  # fmt: skip
        """Attach a node, listen on its address (or on ``sock``), and start it.

        The node's ``on_start`` runs before the first connection is served. Each of
        ``extra_socks`` is one more listening socket whose requests the same node serves: a
        broker's VIP channel on ``listenPort - 2`` (``BrokerController#initialize``'s
        ``fastRemotingServer``), where a 4.9.3 slave's SlaveSynchronize sends its requests
        (``MixAll#brokerVIPChannel(true, addr)``).

        Raises:
            ValueError: the node name is already used.
            OSError: the address cannot be bound.
        """
        if node.name in self.nodes:
            raise ValueError(f"node name {node.name!r} is already used")
        ctx = NetContext(self, node)
        node.ctx = ctx
        server = None
        if listen and (sock is not None or node.address):
            if sock is None:
                host, port = node.address.rsplit(":", 1)
                sock = bind_socket(host, int(port))
            server = await self.loop.create_server(
                lambda: NetConnection(self, ctx, client_side=False), sock=sock,
                start_serving=False,
            )  # fmt: skip
            self.servers[node.name] = server
        extra = []
        for extra_sock in extra_socks:
            extra.append(await self.loop.create_server(
                lambda: NetConnection(self, ctx, client_side=False), sock=extra_sock,
                start_serving=False,
            ))  # fmt: skip
        if extra:
            self.extra_servers[node.name] = extra
        self.nodes[node.name] = node
        self.contexts[node.name] = ctx
        node.running = True
        if ctx.tracer.enabled:
            ctx.tracer.emit("NetDriver", "start", Kind.STATE, address=node.address)
        node.on_start()
        if server is not None:
            await server.start_serving()
            log.info("%s listening on %s", node.name, node.address)
        for extra_server in extra:
            await extra_server.start_serving()
        return ctx

    def node(self, name: str) -> Node:
        try:
            return self.nodes[name]
        except KeyError:
            raise ValueError(f"no node named {name!r}; nodes: {sorted(self.nodes)}") from None

    async def stop_node(self, name: str, *, graceful: bool = True) -> None:
        """Stop a node: ``graceful`` runs its ``on_stop`` (persist, flush) first; then its
        timers are cancelled, its listening socket and every connection it owns close."""
        node = self.node(name)
        if not node.running:
            return
        ctx = self.contexts[name]
        if graceful:
            if name in self._stopping:
                return  # its shutdown is still running; that stop ends it
            try:
                pending = node.on_stop()
            except Exception as e:
                self._handler_error(ctx, "on_stop", e)
                pending = None
            if pending is not None and not pending.done:
                # Java's shutdown blocks (a client's last offset commit may first refresh
                # its route): the node keeps running until its shutdown task ends, or a
                # kill (stop_node(graceful=False)) ends the wait.
                done = asyncio.get_running_loop().create_future()
                self._stopping[name] = done
                pending.add_done_callback(lambda _t: done.done() or done.set_result(None))
                try:
                    await done
                finally:
                    self._stopping.pop(name, None)
                if not node.running:
                    return
        else:
            waiting = self._stopping.pop(name, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)
        node.running = False
        ctx.cancel_all_timers()
        if ctx.tracer.enabled:
            ctx.tracer.emit(
                "NetDriver", "stop" if graceful else "kill", Kind.STATE if graceful else Kind.FAULT
            )
        server = self.servers.pop(name, None)
        if server is not None:
            server.close()
        for extra_server in self.extra_servers.pop(name, []):
            extra_server.close()
        for conn in sorted(
            (c for c in self._connections.values() if c.ctx is ctx), key=lambda c: c.id
        ):
            conn.close(f"{name} stopped", abort=not graceful)
        for key in [k for k in self._client_conns if k[0] == name]:
            conn = self._client_conns.pop(key)
            if not conn.closed:
                conn.close(f"{name} stopped", abort=not graceful)
        for _, handle in ctx.pending.values():
            handle.cancel()
        ctx.pending.clear()
        for addr in [a for a, (n, _) in self.stream_servers.items() if n == name]:
            self._stop_stream_server(addr, name)
        for sid in sorted(i for i, p in self._stream_protos.items() if p.ctx is ctx):
            proto = self._stream_protos.pop(sid)
            if proto.transport is not None and not graceful:
                proto.transport.abort()
            proto.close()
        if server is not None:
            await asyncio.sleep(0)  # let the transports run connection_lost

    async def remove_node(self, name: str) -> Node:
        """Stop (kill, unless already stopped) and detach a node, freeing its name for a
        new node on the same address (a restart, as ``SimDriver.remove_node``)."""
        node = self.node(name)
        await self.stop_node(name, graceful=False)
        self.nodes.pop(name)
        self.contexts.pop(name)
        return node

    async def close(self) -> None:
        """Stop every running node gracefully, in reverse order of start."""
        for name in reversed(list(self.nodes)):
            await self.stop_node(name)
        for task in list(self._tasks):
            task.cancel()

    # -- inspection ----------------------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return epoch_ms()

    def pending_timers(self) -> list[NetTimerInfo]:
        """Every node's pending timers, soonest first (like ``SimDriver.next_timers``)."""
        offset = epoch_ms() - self.loop.time() * 1000.0
        out = [
            NetTimerInfo(
                int(t.due * 1000.0 + offset), name, t.name, t.key, t.daemon,
                t.period_ms is not None,
            )
            for name, ctx in self.contexts.items()
            for t in ctx.timers.values()
        ]  # fmt: skip
        return sorted(out, key=lambda i: (i.due_ms, i.node, i.name, i.key or ""))

    def connections(self, node: str | None = None) -> list[Channel]:
        """Open channels (all, or those owned by ``node``), by id."""
        return [
            c.channel
            for _, c in sorted(self._connections.items())
            if not c.closed and (node is None or c.ctx.node_name == node)
        ]

    # -- transport -----------------------------------------------------------------------------
    async def _serve_stream(self, addr: str, factory, sock: socket.socket) -> None:
        owner = self.stream_servers.get(addr)
        if owner is None:  # stopped before it started serving
            sock.close()
            return

        def tracked() -> NetStream:
            proto = factory()
            self._stream_protos[proto.channel.id] = proto
            return proto

        server = await self.loop.create_server(tracked, sock=sock)
        if self.stream_servers.get(addr, (None,))[0] != owner[0]:
            server.close()
            return
        self.stream_servers[addr] = (owner[0], server)

    def _stop_stream_server(self, addr: str, node: str) -> None:
        owner = self.stream_servers.get(addr)
        if owner is None or owner[0] != node:
            return
        del self.stream_servers[addr]
        if owner[1] is not None:
            owner[1].close()

    def _guarded(self, ctx: NetContext, where: str, fn, *args) -> None:
        """Run a stream callback of the core; an exception is a core bug, kept in ``errors``."""
        try:
            fn(*args)
        except Exception as e:
            self._handler_error(ctx, where, e)

    def _connect(self, ctx: NetContext, addr: str) -> NetConnection | None:
        key = (ctx.node_name, addr)
        conn = self._client_conns.get(key)
        if conn is not None and not conn.closed:
            return conn
        host, sep, port = addr.rpartition(":")
        if not sep or not port.isdigit():
            return None
        conn = NetConnection(self, ctx, client_side=True, addr=addr)
        self._client_conns[key] = conn
        self._connections[conn.id] = conn
        task = self.loop.create_task(self._open(conn, host.strip("[]"), int(port)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return conn

    async def _open(self, conn: NetConnection, host: str, port: int) -> None:
        try:
            await asyncio.wait_for(
                self.loop.create_connection(lambda: conn, host, port),
                CONNECT_TIMEOUT_MILLIS / 1000.0,
            )
        except (TimeoutError, OSError) as e:
            if conn.ctx.tracer.enabled:
                conn.ctx.tracer.emit(
                    "NettyRemotingClient", "connect", Kind.ERROR, addr=conn.channel.remote_address,
                    error=str(e) or type(e).__name__,
                )  # fmt: skip
            self._on_closed(conn, f"connect to <{conn.channel.remote_address}> failed: {e}")

    def _on_closed(self, conn: NetConnection, reason: str, *, fail_fast: bool = True) -> None:
        """``conn`` is closed. A client's requests under way fail at once when it closed the
        channel itself, or the connection broke (a reset, a failed connect), as Netty's
        ``failFast`` does; after the peer's FIN (``fail_fast`` False) they wait out their
        timeouts, as 4.9.3's do (``mqlab.runtime.sim.SimDriver._close``)."""
        if conn._idle_handle is not None:
            conn._idle_handle.cancel()
            conn._idle_handle = None
        if self._connections.pop(conn.id, None) is None:
            return
        reason = conn._close_reason or reason
        conn.closed = True
        conn.channel.closed = True
        conn._out.clear()
        conn._pending.clear()
        conn._pending_bytes = 0
        ctx = conn.ctx
        if conn.client_side:
            key = (ctx.node_name, conn.addr)
            if self._client_conns.get(key) is conn:
                del self._client_conns[key]
        if ctx.tracer.enabled and conn.transport is not None:
            ctx.tracer.emit(
                "NettyRemotingServer" if not conn.client_side else "NettyRemotingClient",
                "close", Kind.STATE, conn=conn.id, remote=conn.channel.remote_address,
                reason=reason,
            )  # fmt: skip
        if fail_fast and conn.client_side:
            ctx._fail_pending(conn.id, reason, connected=conn.transport is not None)
        node = ctx.node
        if node.running and conn.transport is not None:
            try:
                node.channel_inactive(conn.channel)
            except Exception as e:
                self._handler_error(ctx, "channel_inactive", e)

    def _dirty(self, conn: NetConnection) -> None:
        """``conn`` has its first frame of this batch queued: flush when the batch ends
        (outside a batch: right after the current callback, by ``call_soon``)."""
        if not self._dirty_conns and not self._batch_depth:
            self.loop.call_soon(self._flush)
        self._dirty_conns.append(conn)

    def _end_batch(self) -> None:
        """A read or a timer callback is done: write what it queued (``_flush``)."""
        self._batch_depth -= 1
        if self._batch_depth:
            return
        if self._dirty_conns:
            self._flush()  # the batch's own answers first: they wait for nothing else
        if self._soon:
            # NOTE: performance: the timers the batch armed due now, then their frames.
            # Measured (bench real, Java client, 16 producers, 7 alternating pairs at load
            # 5-10): send p50 5.33 → 4.51 ms, e2e p50 10.08 → 7.46 ms, e2e p99 63 → 37 ms,
            # loop CPU 248 → 221 µs a message (medians), against call_soon.
            self._run_soon()
            if self._dirty_conns:
                self._flush()

    def _run_soon(self) -> None:
        """Fire the timers that came due during the batch (one generation; any they arm
        due now go to ``call_soon``, so a timer re-arming itself cannot starve the loop)."""
        self._batch_depth += 1
        try:
            soon, self._soon = self._soon, []
            for h in soon:
                if not h.cancelled:
                    h.ctx._fire(h.timer)
        finally:
            self._batch_depth -= 1
        if self._soon:
            later, self._soon = self._soon, []
            for h in later:
                if not h.cancelled:
                    h.timer.handle = self.loop.call_soon(h.ctx._fire, h.timer)

    def _flush(self) -> None:
        """Write every connection's queued frames, one transport write each, in the order
        the connections got their first frame of the pass."""
        conns = self._dirty_conns
        self._dirty_conns = []
        for conn in conns:
            try:
                conn.flush()
            except Exception as e:  # a transport refusing a write: that connection only
                conn._pending.clear()
                conn._pending_bytes = 0
                self._handler_error(conn.ctx, "flush", e)

    def _send(self, conn: NetConnection, cmd: RemotingCommand) -> None:
        try:
            frame = cmd.encode()
        except Exception as e:  # a core bug: report it, never take the loop down
            self._handler_error(conn.ctx, f"encode {cmd!r}", e)
            return
        if self.recorder.level >= _FRAMES:
            conn.ctx.tracer.emit(
                "RemotingCommand", "send", Kind.SEND,
                code=_code_name(cmd.code, cmd.is_response, conn.ctx.node.remoting_codes),
                opaque=cmd.opaque, to=conn.channel.remote_address, bytes=len(frame),
                response=cmd.is_response,
            )  # fmt: skip
        conn.write(frame)

    def _on_command(self, conn: NetConnection, cmd: RemotingCommand) -> None:
        """``NettyRemotingAbstract#processMessageReceived``: a response or a request."""
        ctx = conn.ctx
        if self.recorder.level >= _FRAMES:
            ctx.tracer.emit(
                "RemotingCommand", "recv", Kind.RECV,
                code=_code_name(cmd.code, cmd.is_response, ctx.node.remoting_codes),
                opaque=cmd.opaque, frm=conn.channel.remote_address, response=cmd.is_response,
            )  # fmt: skip
        if cmd.is_response:
            entry = ctx.pending.pop((conn.id, cmd.opaque), None)
            if entry is not None:
                entry[1].cancel()
                ctx._run_callback(entry[0], cmd, None)
            return
        node = ctx.node
        if not node.running:
            return
        # docs/reference.md §1.6: the processor answers; an exception is SYSTEM_ERROR (not for oneway).
        try:
            response = node.process_request(conn.channel, cmd)
        except Exception as e:
            self._handler_error(ctx, f"process_request code {cmd.code}", e)
            response = RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"{type(e).__name__}: {e}"[:200], ext_fields={}
            )
        if response is None or cmd.is_oneway:
            return
        response.opaque = cmd.opaque
        response.mark_response_type()
        self._send(conn, response)

    def _handler_error(self, ctx: NetContext, where: str, e: Exception) -> None:
        log.error("%s: error in %s", ctx.node_name, where, exc_info=e)
        self._note(self.errors, f"{ctx.node_name}: {where}: {e!r}")
        if ctx.tracer.enabled:
            ctx.tracer.emit(
                "NettyRemotingAbstract", "processRequestCommand", Kind.ERROR, where=where,
                error=repr(e)[:300],
            )  # fmt: skip

    @staticmethod
    def _note(notes: list[str], text: str) -> None:
        """Keep the last ``MAX_NOTES`` entries of an error list (a hostile peer is endless)."""
        notes.append(text)
        if len(notes) > MAX_NOTES:
            del notes[: len(notes) - MAX_NOTES]

    def _trim_events(self, _event: Any) -> None:
        events = self.recorder.events
        keep = self.keep_events
        if keep is not None and len(events) > 2 * keep:
            del events[: len(events) - keep]


async def wait_for(pred: Callable[[], bool], timeout_ms: int, interval_ms: int = 5) -> bool:
    """Poll ``pred()`` on the loop until it is true or ``timeout_ms`` passed; its last value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_ms / 1000.0
    while not pred():
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(interval_ms / 1000.0)
    return True


class LoopThread:
    """An event loop on a daemon thread, for code that is not async itself.

    Tests, benchmarks and notebooks use it to run a live server beside their own code:
    ``submit(coro)`` runs a coroutine there and waits for its result, ``call(fn)`` runs a
    plain function on the loop's thread (the only thread that may touch the nodes).
    """

    def __init__(self, name: str = "mqlab-net", *, loop: str = "asyncio") -> None:
        self.loop = new_event_loop(loop)  # ValueError: see new_event_loop
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Any, timeout: float | None = 30.0) -> Any:
        """Run ``coro`` on the loop; return its result (or raise its exception)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn: Callable[[], Any], timeout: float | None = 30.0) -> Any:
        """Run ``fn()`` on the loop's thread; return its result."""

        async def run() -> Any:
            return fn()

        return self.submit(run(), timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the loop and join the thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()


def run_until_signalled(
    start: Callable[[], Awaitable[Any]],
    shutdown: Callable[[], Awaitable[Any]],
    *,
    loop: str = "asyncio",
) -> None:
    """``asyncio.run``: await ``start()``, wait for SIGINT or SIGTERM, await ``shutdown()``,
    on a new event loop of kind ``loop`` (see ``new_event_loop``).

    A second signal while shutting down is ignored, so the shutdown (flush, persist)
    completes.

    Raises:
        ValueError: ``loop`` is unknown or not installed (before anything starts).
    """
    new_event_loop(loop).close()  # check it now, not inside the runner

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await start()
        await stop.wait()
        log.info("signal received, shutting down")
        await shutdown()

    with asyncio.Runner(loop_factory=lambda: new_event_loop(loop)) as runner:
        runner.run(main())
