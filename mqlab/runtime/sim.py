"""The simulation driver: virtual time, an in-process network, seeded randomness.

Runs the sans-IO core deterministically (docs/design.md §1). Everything that happens is an
event on one ``Scheduler``: a timer of a node firing, or a frame arriving at a node.

- ``step()`` runs exactly one event and returns the trace events it produced;
- ``advance(ms)`` runs everything due up to ``now + ms`` *inclusive* (unlike SimPy's
  ``run(until)``: a learner who advances 15 000 ms to "let the long poll time out"
  expects the timer due at exactly +15 000 to fire), then sets the clock to now + ms;
- ``run_until_idle()`` runs until only daemon timers (periodic services, parked pulls'
  deadlines) are left;
- ``next_timers()`` lists what is pending, by name.

The network carries *encoded* frames (``RemotingCommand.encode``), so the simulation
exercises the same codec as the wire. Each direction of a connection is FIFO, like TCP:
a frame is delivered at ``max(now + latency, previous delivery on that direction)``.
Links can be given extra latency, jitter, a drop rate, or be cut (faults, recorded as
trace events).

Byte streams (``StreamChannel``, the HA connection) travel the same links: each direction
is FIFO with the link's latency and jitter; a drop rate does not apply (TCP resends what it
loses, so a stream only gets slower). A cut link closes the streams between its two nodes
at once, on both ends; a stopped or killed node's streams close for the peer after the
bytes it had sent, one latency later (the kernel's FIN); its listeners go away.

A killed node's kernel closes its connections (the FIN above). The FIN fails nothing its peers
have under way: 4.9.3's client fails its requests at once only when it closes a channel itself
(an idle channel, a reset it reads, a frame it cannot decode: ``failFast``), and its server
never, so a request the dead node had read (a pull parked by long polling) waits out its
timeout (``SimDriver._close``). A node whose *machine* goes down
(``stop_node(fault="power_cut" | "lost")``, ``MACHINE_FAULTS``) has no kernel left to do it:
its peers are told nothing, their connections and streams stay open, what they send goes
unanswered (their requests wait out their timeouts) and a new connect waits out
``CONNECT_TIMEOUT_MILLIS``. When the machine is up again, its kernel answers a segment on an old
connection with a reset: at the peer's next retransmission of what it sent meanwhile, or at its
next send, the connection ends for the peer one round trip later.

A *silent* cut (a partition) closes nothing. What is sent across it, frames, stream bytes
and FINs alike, waits in the sender's kernel, which retransmits it at ``since + 200 ms``,
``+ 400``, ``+ 800`` ... (``tcp_retransmission_at``); the first retransmission after the
heal delivers it, in order, and what the sender writes meanwhile queues behind it.

Determinism (docs/design.md §6.9): one heap keyed ``(due_ms, priority, seq)``; RNG streams
derived from ``(seed, node, purpose)`` with string seeding (SHA-512 based, identical in
every process); no iteration over sets; channel ids and ephemeral ports from counters.
Same seed + same calls → the same trace, byte for byte.
"""

from __future__ import annotations

import gc
import itertools
import logging
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.runtime.context import (
    CHANNEL_MAX_IDLE_MILLIS,
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
from mqlab.runtime.scheduler import (
    BOOKKEEPING_TIMERS,
    ChoosingScheduler,
    PendingTimer,
    Scheduler,
)
from mqlab.trace.events import Kind, TraceEvent, TraceLevel
from mqlab.trace.recorder import NodeTracer, TraceRecorder

_FRAMES = int(TraceLevel.FRAMES)  # NOTE: performance: see mqlab/trace/recorder.py

__all__ = ["SimDriver", "SimContext", "LinkConfig", "SimConnection", "SimStream", "MACHINE_FAULTS"]

#: ``SimDriver.stop_node`` faults that take the whole machine down: no kernel is left to send
#: a FIN, so the node's peers are told nothing (``SimDriver._machine_down``). A ``"kill"``
#: ends the process only: its kernel closes its sockets.
MACHINE_FAULTS = ("power_cut", "lost")

log = logging.getLogger(__name__)

_EPHEMERAL_PORT_BASE = 50_000

#: Linux TCP's first retransmission of data nobody acknowledged comes 200 ms after it was
#: sent (a tail loss probe after ``TCP_DELACK_MAX``, then the RTO from ``TCP_RTO_MIN``, both
#: 200 ms on a low-latency link); each later gap doubles, up to ``TCP_RTO_MAX``.
#: ``scripts/tcp_retransmission_probe.py`` shows it on a real kernel: a byte sent into a
#: partition on loopback was retransmitted at +0.208, 0.416, 0.832, 1.664, 3.328, 6.688,
#: 13.348, 26.656 and 54.560 s (docs/design.md, ``lab.cut_link``).
TCP_RTO_MIN_MS = 200
TCP_RTO_MAX_MS = 120_000


def tcp_retransmission_at(since_ms: int, now_ms: int) -> int:
    """The first retransmission at or after ``now_ms`` of data first sent at ``since_ms`` and
    never acknowledged: ``since + 200``, ``+ 400``, ``+ 800`` ... (gaps doubling up to
    ``TCP_RTO_MAX_MS``). Mirrors the Linux kernel's ``tcp_send_loss_probe`` and
    ``tcp_retransmit_timer`` for one connection; the abort after ``tcp_retries2`` (15
    retransmissions, about 15 minutes) is not modelled.
    """
    at, gap = since_ms + TCP_RTO_MIN_MS, TCP_RTO_MIN_MS
    while at < now_ms:
        at += gap
        gap = min(2 * gap, TCP_RTO_MAX_MS)
    return at


#: Young-generation GC threshold while the driver runs events (see ``_fewer_gc_passes``).
_GC_GEN0_THRESHOLD = 20_000


@contextmanager
def _fewer_gc_passes() -> Iterator[None]:
    """Let the cyclic GC run less often while events run; restore the setting after.

    NOTE: performance — a run allocates a few container objects per event (timers, frames,
    messages, trace events) and keeps many (the trace, the consumed logs), so with CPython's
    default threshold (700) the collector kept re-scanning them: in bench_e2e (64 000
    messages, batches of 32) it ran ~1 400 times and took ~26 % of the run with tracing
    on, ~11 % off; with this threshold inside the run loops, ~12 % and ~6 % (the rest is
    outside them). Only how often it collects changes; nothing the simulation computes
    depends on it.
    """
    old = gc.get_threshold()
    if old[0] >= _GC_GEN0_THRESHOLD:
        yield
        return
    gc.set_threshold(_GC_GEN0_THRESHOLD, old[1], old[2])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == _GC_GEN0_THRESHOLD:  # unless a callback changed it
            gc.set_threshold(*old)


@dataclass(slots=True)
class LinkConfig:
    """How frames from one node to another travel. ``None`` fields use the default."""

    latency_ms: int | None = None
    jitter_ms: int = 0
    drop_rate: float = 0.0
    down: bool = False
    #: With ``down``: a partition no reset crosses. Nothing ends the streams or connections
    #: across it; each end finds out by its own timeouts (an HA connection by its
    #: ``haHousekeepingInterval``, a request by its timeout). What either end sends across
    #: it (remoting frames, stream bytes, a close) waits in its kernel and arrives, in order,
    #: at TCP's first retransmission after the link is up again (``tcp_retransmission_at``),
    #: unless the receiving end has closed by then. A new connect fails after
    #: ``CONNECT_TIMEOUT_MILLIS``. Without it a cut link ends the streams at once, on both
    #: ends, frames on it are lost, and connects fail at once.
    silent: bool = False


@dataclass(slots=True)
class _HeldFlow:
    """What one end of a connection or stream sent across a silent cut, not yet delivered:
    TCP's retransmission clock runs from ``since_ms``, the first of it."""

    since_ms: int
    owner: SimConnection | SimStream
    #: (deliver, trace label), in the order sent
    deliveries: list[tuple[Callable[[], None], str]]


class SimConnection:
    """A client↔server connection: two ``Channel`` ends and per-direction FIFO clocks."""

    __slots__ = (
        "id", "client", "server", "client_end", "server_end", "last_due", "closed", "lost",
        "active",
    )  # fmt: skip

    def __init__(
        self, cid: int, client: str, server: str, client_end: Channel, server_end: Channel
    ):
        self.id = cid
        self.client = client
        self.server = server
        self.client_end = client_end
        self.server_end = server_end
        self.last_due = {client: 0, server: 0}  # by sender
        #: when each end last wrote or read a frame (Netty's ``IdleStateHandler``)
        self.active = {client: 0, server: 0}
        self.closed = False
        #: the end whose machine went down (a power cut, a lost machine) while the
        #: connection was open: its kernel sent no FIN, so the other end stays open
        #: (``SimDriver._machine_down``)
        self.lost: str | None = None

    def end_of(self, node: str) -> Channel:
        return self.client_end if node == self.client else self.server_end

    def peer_of(self, node: str) -> str:
        return self.server if node == self.client else self.client


class SimStream:
    """A byte stream between two nodes: two ``StreamChannel`` ends, per-direction FIFO."""

    __slots__ = ("id", "client", "server", "client_end", "server_end", "last_due", "lost")

    def __init__(self, sid: int, client: str, server: str, client_end, server_end) -> None:
        self.id = sid
        self.client = client
        self.server = server
        self.client_end = client_end
        self.server_end = server_end
        self.last_due = {client: 0, server: 0}  # by sender
        self.lost: str | None = None  # as ``SimConnection.lost``

    def end_of(self, node: str) -> StreamChannel:
        return self.client_end if node == self.client else self.server_end

    def peer_of(self, node: str) -> str:
        return self.server if node == self.client else self.client


def _code_name(code: int, is_response: bool, codes: tuple[type, type] | None = None) -> str:
    """A frame's code by name: RocketMQ's, or ``codes`` (an endpoint's ``remoting_codes``)."""
    try:
        if codes is None:
            from mqlab.remoting.codes import RequestCode, ResponseCode

            codes = (RequestCode, ResponseCode)
        return codes[1 if is_response else 0](code).name
    except (ImportError, ValueError):
        return str(code)


class SimContext(NodeContext):
    """A node's view of the simulation driver."""

    def __init__(self, driver: SimDriver, node: Node) -> None:
        self.driver = driver
        self.node = node
        self.node_name = node.name
        self.tracer = NodeTracer(driver.recorder, node.name, lambda: driver.scheduler.now)
        self._rngs: dict[str, random.Random] = {}
        self._opaque = itertools.count(1)
        # (connection id, opaque) -> callback, for requests this node sent.
        self.pending: dict[tuple[int, int], InvokeCallback] = {}

    @property
    def now_ms(self) -> int:
        return self.driver.scheduler.now

    def rng(self, purpose: str) -> random.Random:
        r = self._rngs.get(purpose)
        if r is None:
            r = self._rngs[purpose] = random.Random(
                f"{self.driver.seed}/{self.node_name}/{purpose}"
            )
        return r

    # -- timers ------------------------------------------------------------------------------
    def set_timer(self, name, delay_ms, callback, *, key=None, period_ms=None, daemon=False):
        # NOTE: performance — ``call_at`` directly with the guard inlined (one closure, no
        # keyword repacking through ``call_later``): ~0.5 µs of ~2 µs per timer armed.
        delay = int(delay_ms)
        if delay < 0:
            raise ValueError(f"delay must be >= 0 ms, got {delay}")
        node = self.node

        def guarded() -> None:  # SimDriver._guard: a stopped node's timers do nothing
            if node.running:
                callback()

        s = self.driver.scheduler
        s.call_at(
            s.now + delay, guarded, node=self.node_name, name=name, key=key, period=period_ms,
            daemon=daemon,
        )  # fmt: skip

    def cancel_timer(self, name, key=None) -> bool:
        return self.driver.scheduler.cancel(self.node_name, name, key)

    def has_timer(self, name, key=None) -> bool:
        return self.driver.scheduler.get(self.node_name, name, key) is not None

    def wakeup_timer(self, name, key=None) -> bool:
        s = self.driver.scheduler
        return s.reschedule(self.node_name, name, key, s.now)

    # -- remoting --------------------------------------------------------------------------------
    def invoke_async(self, addr, request, timeout_ms, callback):
        request.opaque = next(self._opaque)
        d = self.driver
        conn = d._connect(self.node_name, addr)
        if conn is None:  # NettyRemotingClient#createChannel: refused at once, or (across a
            # silent partition) no answer to the connect until connectTimeoutMillis runs out
            d.scheduler.call_later(
                d._connect_failure_delay(self.node_name, addr),
                lambda: callback(None, RemotingConnectException(f"connect to {addr} failed")),
                node=self.node_name, name="NettyRemotingClient.connect failed", keyed=False,
            )  # fmt: skip
            return
        key = (conn.id, request.opaque)
        self.pending[key] = callback

        def on_timeout() -> None:
            cb = self.pending.pop(key, None)
            if cb is not None:
                cb(None, RemotingTimeoutException(
                    f"wait response on the channel <{addr}> timeout, {timeout_ms}(ms)"
                ))  # fmt: skip

        timeout = int(timeout_ms)
        if timeout < 0:
            raise ValueError(f"delay must be >= 0 ms, got {timeout}")
        s = d.scheduler
        s.call_at(  # NOTE: performance — call_at directly, as in set_timer
            s.now + timeout, on_timeout, node=self.node_name,
            name="NettyRemotingAbstract.scanResponseTable", key=f"opaque={request.opaque}",
            daemon=True,
        )  # fmt: skip
        d._transmit(conn, self.node_name, request)

    def invoke_oneway(self, addr, request):
        request.opaque = next(self._opaque)
        request.mark_oneway_rpc()
        conn = self.driver._connect(self.node_name, addr)
        if conn is None:  # NettyRemotingClient#invokeOneway: no active channel → throw
            raise RemotingConnectException(f"connect to {addr} failed")
        self.driver._transmit(conn, self.node_name, request)

    def send_response(self, channel, response):
        conn = self.driver._conn_by_channel.get(channel.id)
        if conn is None or conn.closed:
            return
        self.driver._transmit(conn, self.node_name, response)

    def send_request_oneway(self, channel, request):
        conn = self.driver._conn_by_channel.get(channel.id)
        if conn is None or conn.closed:
            return
        request.opaque = next(self._opaque)
        request.mark_oneway_rpc()
        self.driver._transmit(conn, self.node_name, request)

    def invoke_channel(self, channel, request, timeout_ms, callback):
        request.opaque = next(self._opaque)
        d = self.driver
        conn = d._conn_by_channel.get(channel.id)
        if conn is None or conn.closed:
            err = RemotingSendRequestException(f"send request to <{channel.remote_address}> failed")
            d.scheduler.call_later(
                0, lambda: callback(None, err), node=self.node_name,
                name="NettyRemotingAbstract.invokeSyncImpl failed", keyed=False,
            )  # fmt: skip
            return
        key = (conn.id, request.opaque)
        self.pending[key] = callback
        addr = channel.remote_address

        def on_timeout() -> None:
            cb = self.pending.pop(key, None)
            if cb is not None:
                cb(None, RemotingTimeoutException(
                    f"wait response on the channel <{addr}> timeout, {timeout_ms}(ms)"
                ))  # fmt: skip

        s = d.scheduler
        s.call_at(
            s.now + int(timeout_ms), on_timeout, node=self.node_name,
            name="NettyRemotingAbstract.scanResponseTable", key=f"opaque={request.opaque}",
            daemon=True,
        )  # fmt: skip
        d._transmit(conn, self.node_name, request)

    def close_channel(self, channel):
        conn = self.driver._conn_by_channel.get(channel.id)
        if conn is not None:
            self.driver._close(conn, reason=f"closed by {self.node_name}", by=self.node_name)

    # -- byte streams ----------------------------------------------------------------------------
    def listen_stream(self, addr, on_accept):
        d = self.driver
        owner = d.stream_listeners.get(addr)
        if owner is not None and owner[0] != self.node_name and d.nodes[owner[0]].running:
            raise ValueError(f"address {addr!r} is already listened on by {owner[0]!r}")
        d.stream_listeners[addr] = (self.node_name, on_accept)

    def stop_listening(self, addr):
        owner = self.driver.stream_listeners.get(addr)
        if owner is not None and owner[0] == self.node_name:
            del self.driver.stream_listeners[addr]

    def open_stream(self, addr, on_bytes, on_close):
        return self.driver._open_stream(self.node_name, addr, on_bytes, on_close)

    def send_bytes(self, channel, data):
        stream = self.driver._stream_by_channel.get(channel.id)
        if stream is None or channel.closed:
            return
        self.driver._transmit_bytes(stream, self.node_name, bytes(data))

    def close_stream(self, channel):
        stream = self.driver._stream_by_channel.get(channel.id)
        if stream is None or channel.closed:
            return
        self.driver._close_stream(stream, self.node_name, f"closed by {self.node_name}")


class SimDriver:
    """Deterministic discrete-event driver for a set of nodes.

    Args:
        seed: the run's seed; every RNG stream derives from it.
        run_id: the ``run_id`` of every trace event.
        trace_level: ``TraceLevel.OFF`` / ``STEPS`` / ``FRAMES``.
        latency_ms: default one-way latency of every link (1 ms).
        strict: re-raise exceptions from node handlers (tests, notebooks). When False a
            handler exception becomes a SYSTEM_ERROR response and an ``error`` trace
            event, as ``NettyRemotingAbstract#processRequestCommand`` does.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        run_id: str = "run-0",
        trace_level: TraceLevel = TraceLevel.STEPS,
        latency_ms: int = 1,
        strict: bool = True,
    ) -> None:
        if latency_ms < 0:
            raise ValueError(f"latency_ms must be >= 0, got {latency_ms}")
        self.seed = seed
        self.scheduler = Scheduler()
        self.recorder = TraceRecorder(run_id, trace_level)
        self.latency_ms = latency_ms
        self.strict = strict
        self.nodes: dict[str, Node] = {}
        self.contexts: dict[str, SimContext] = {}
        self.addr_to_node: dict[str, str] = {}
        #: ``Node.extra_addresses`` (a broker's VIP channel) → node; a node's own address wins
        self._alias_to_node: dict[str, str] = {}
        self.links: dict[tuple[str, str], LinkConfig] = {}
        #: what was sent across a silently cut link, by (sender, receiver), then by
        #: ("conn" | "stream", id): delivered at TCP's first retransmission after the link
        #: from sender to receiver is up again (``LinkConfig.silent``)
        self._held: dict[tuple[str, str], dict[tuple[str, int], _HeldFlow]] = {}
        self._conns: dict[tuple[str, str], SimConnection] = {}
        self._conn_by_channel: dict[int, SimConnection] = {}
        self._conn_ids = itertools.count(1)
        self._ports = itertools.count(_EPHEMERAL_PORT_BASE + 1)
        self._net_rng = random.Random(f"{seed}/network")
        self._tracer = NodeTracer(self.recorder, "sim", lambda: self.scheduler.now)
        #: How many events have run so far (the "step number" a lab can fork at).
        self.events_run = 0
        # NOTE: performance — code names per (code, is_response): an enum look-up per frame
        # cost ~1.5 µs; every frame's timer label needs one.
        self._code_names: dict[tuple[int, bool, tuple[type, type] | None], str] = {}
        #: The explorer's chooser (``mqlab.explore``), or None: the run is the seed's own.
        self.chooser = None
        #: byte streams: listen address -> (node, on_accept); streams by channel id
        self.stream_listeners: dict[str, tuple[str, AcceptCallback]] = {}
        #: nodes whose graceful stop waits for their shutdown task (``stop_node``)
        self._stopping: set[str] = set()
        self._stream_by_channel: dict[int, SimStream] = {}
        #: the node pairs that ever had a stream (the explorer's dependence relation)
        self.stream_pairs: set[frozenset[str]] = set()
        #: nodes whose machine is down (a power cut, a lost machine) → since when
        self._down: dict[str, int] = {}
        #: what a peer sent into a machine that is down, by ("conn" | "stream", id) → when
        #: it first sent, unacknowledged since: its kernel retransmits it (``_machine_up``)
        self._unacked: dict[tuple[str, int], int] = {}
        #: connections and streams whose reset is on its way (``_reset_lost``)
        self._resetting: set[tuple[str, int]] = set()

    # -- nodes -------------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.scheduler.now

    def add_node(self, node: Node, *, start: bool = True) -> SimContext:
        """Attach a node (its name and listen address must be unique) and start it. Its
        ``extra_addresses`` are served too where no node listens on them."""
        if node.name in self.nodes:
            raise ValueError(f"node name {node.name!r} is already used")
        if node.address in self.addr_to_node:
            raise ValueError(
                f"address {node.address!r} is already used by {self.addr_to_node[node.address]!r}"
            )
        ctx = SimContext(self, node)
        node.ctx = ctx
        self.nodes[node.name] = node
        self.contexts[node.name] = ctx
        if node.address:
            self.addr_to_node[node.address] = node.name
            self._alias_to_node.pop(node.address, None)
        for alias in node.extra_addresses:  # best effort, as serve binds the VIP channel
            if alias not in self.addr_to_node:
                self._alias_to_node.setdefault(alias, node.name)
        if start:
            self.start_node(node.name)
        return ctx

    def node(self, name: str) -> Node:
        try:
            return self.nodes[name]
        except KeyError:
            raise ValueError(f"no node named {name!r}; nodes: {sorted(self.nodes)}") from None

    def start_node(self, name: str) -> None:
        node = self.node(name)
        if name in self._down:
            self._machine_up(name)
        node.running = True
        self._tracer_for(name).emit("SimDriver", "start", Kind.STATE, address=node.address)
        node.on_start()

    def stop_node(self, name: str, *, graceful: bool = True, fault: str = "kill") -> None:
        """Stop a node: ``graceful`` runs its shutdown (persist, unregister) first; a kill does not.

        ``fault``: the trace step of a stop that is not graceful (``"kill"``, or
        ``"power_cut"`` when the whole machine goes down).
        """
        node = self.node(name)
        if not node.running:
            return
        if graceful:
            if name in self._stopping:
                return  # its shutdown is still running; the stop ends with it
            pending = node.on_stop()
            if pending is not None and not pending.done:
                # Java's shutdown blocks (a client's last offset commit may first refresh
                # its route): the node keeps running until its shutdown task ends.
                self._stopping.add(name)
                self._tracer_for(name).emit(
                    "SimDriver", "stopping", Kind.STATE, task=pending.name,
                    text=f"{name} stops once {pending.name} ends",
                )  # fmt: skip
                pending.add_done_callback(lambda _t: self._stopped(name, node))
                return
        self._finish_stop(name, node, graceful, fault)

    def _stopped(self, name: str, node: Node) -> None:
        """A graceful stop whose shutdown task has ended: stop the node now."""
        self._stopping.discard(name)
        if node.running and self.nodes.get(name) is node:
            self._finish_stop(name, node, True, "kill")

    def _finish_stop(self, name: str, node: Node, graceful: bool, fault: str) -> None:
        self._stopping.discard(name)
        node.running = False
        self.scheduler.cancel_node(name)
        self._tracer_for(name).emit(
            "SimDriver", "stop" if graceful else fault, Kind.STATE if graceful else Kind.FAULT
        )
        for addr in [a for a, (n, _) in self.stream_listeners.items() if n == name]:
            del self.stream_listeners[addr]
        if fault in MACHINE_FAULTS and not graceful:
            self._machine_down(name)
            return
        streams = {
            s.id: s for s in self._stream_by_channel.values() if name in (s.client, s.server)
        }
        for sid in sorted(streams):
            self._close_stream(streams[sid], name, f"{name} stopped")
        for conn in [c for c in self._conns.values() if name in (c.client, c.server)]:
            if conn.last_due[name] >= self.scheduler.now:
                # TCP delivers what was written before the FIN, even when the process was
                # killed (the kernel closes its sockets): close after the last frame this
                # node sent (its shutdown's UNREGISTER_CLIENT, offsets persisted just before).
                self.scheduler.call_at(
                    conn.last_due[name],
                    lambda c=conn: self._close(c, reason=f"{name} stopped", by=name),
                    node=name, name="close", keyed=False,
                )  # fmt: skip
            else:
                self._close(conn, reason=f"{name} stopped", by=name)

    def _machine_down(self, name: str) -> None:
        """``name``'s machine went down (its power, or the machine itself): no kernel is left
        to close its sockets, so its peers are told nothing. Their connections and streams
        stay open; what they send vanishes, unacknowledged, and their requests wait out
        their timeouts; a new connect waits out ``CONNECT_TIMEOUT_MILLIS``. Frames it had
        sent that are still on the way arrive."""
        self._down[name] = self.scheduler.now
        streams = {
            s.id: s for s in self._stream_by_channel.values() if name in (s.client, s.server)
        }
        for sid in sorted(streams):
            stream = streams[sid]
            if stream.lost is None:
                stream.lost = name
                stream.end_of(name).closed = True
                self._forget_stream(stream)
        for conn in [c for c in self._conns.values() if name in (c.client, c.server)]:
            if not conn.closed and conn.lost is None:
                conn.lost = name
                self._watch_idle(conn, conn.peer_of(name))
        self._tracer_for(name).emit(
            "SimNetwork", "machine_down", Kind.FAULT, node=name,
            text=f"{name}'s machine is down: its peers' connections stay open, and what "
            "they send goes unanswered",
        )  # fmt: skip

    def _machine_up(self, name: str) -> None:
        """``name``'s machine is up again, with none of its old sockets: a segment a peer
        sends on an old connection is answered with a reset. A peer with data
        unacknowledged since the machine went down retransmits it at its next
        retransmission (``tcp_retransmission_at``) and has the reset one round trip later;
        a peer with nothing outstanding learns of it at its next send."""
        del self._down[name]
        for conn in [c for c in self._conns.values() if c.lost == name and not c.closed]:
            if ("conn", conn.id) in self._unacked:
                self._reset_lost(conn, conn.peer_of(name))
        streams = {s.id: s for s in self._stream_by_channel.values() if s.lost == name}
        for sid in sorted(streams):
            if ("stream", sid) in self._unacked:
                self._reset_lost(streams[sid], streams[sid].peer_of(name))

    def _watch_idle(self, conn: SimConnection, end: str) -> None:
        """Netty's ``IdleStateHandler`` on ``end``'s channel: ALL_IDLE once it has neither
        read nor written for ``CHANNEL_MAX_IDLE_MILLIS``, and
        ``NettyConnectManageHandler#userEventTriggered`` closes it (the node's
        ``channel_inactive`` runs: the name server drops a broker whose channel it was,
        ``BrokerHousekeepingService#onChannelIdle``). Watched where a peer fell silent (its
        machine down), the only place an idle channel changes what happens. The limit is the
        node's (``Node.channel_max_idle_ms``, ``CHANNEL_MAX_IDLE_MILLIS`` by default)."""
        server_side = end == conn.server

        def limit() -> int:
            node = self.nodes.get(end)
            return CHANNEL_MAX_IDLE_MILLIS if node is None else (
                node.channel_max_idle_ms(server_side=server_side)
            )  # fmt: skip

        def check() -> None:
            node = self.nodes.get(end)
            if conn.closed or node is None or not node.running:
                return
            idle_since, idle_ms = conn.active[end], limit()
            if self.scheduler.now - idle_since < idle_ms:
                self.scheduler.call_at(
                    idle_since + idle_ms, check, node=end, name="IdleStateHandler",
                    keyed=False, daemon=True,
                )  # fmt: skip
                return
            remote = conn.end_of(end).remote_address
            self._tracer_for(end).emit(
                "NettyConnectManageHandler.userEventTriggered", "idle", Kind.STATE,
                conn=conn.id, remote=remote, since=idle_since, idle_ms=idle_ms,
                text=f"no read or write on the channel to {remote} since {idle_since} ms "
                f"({idle_ms} ms): ALL_IDLE, close",
            )  # fmt: skip
            self._close(conn, reason=f"idle for {idle_ms} ms", by=end)

        self.scheduler.call_at(
            max(conn.active[end] + limit(), self.scheduler.now), check, node=end,
            name="IdleStateHandler", keyed=False, daemon=True,
        )  # fmt: skip

    def _to_lost(
        self, owner: SimConnection | SimStream, sender: str, what: str, sent: int = -1
    ) -> None:
        """``sender`` sends on ``owner`` (or sent, at ``sent``), whose other end's machine
        went down: into nothing while it is down, a reset once it is up again
        (``_machine_up``)."""
        lost = owner.lost
        assert lost is not None
        kind = "conn" if isinstance(owner, SimConnection) else "stream"
        if lost in self._down:
            first = sent if sent >= 0 else self.scheduler.now
            key = (kind, owner.id)
            self._unacked[key] = min(first, self._unacked.get(key, first))
            self._tracer_for(sender).emit(
                "SimNetwork", "hold", Kind.FAULT, reason=f"{lost}'s machine is down",
                **{kind: owner.id}, to=lost, what=what,
            )  # fmt: skip
            return
        if (kind, owner.id) not in self._resetting:  # else it queues behind what is reset
            self._reset_lost(owner, sender)

    def _reset_lost(self, owner: SimConnection | SimStream, peer: str) -> None:
        """``peer``'s next segment on ``owner`` reaches the restarted machine, whose kernel
        knows no such connection and answers with a reset: the connection ends for ``peer``
        one round trip later (``ECONNRESET``). The segment goes now, or, with data
        unacknowledged since the machine went down, at its next retransmission."""
        lost = owner.lost
        assert lost is not None
        kind = "conn" if isinstance(owner, SimConnection) else "stream"
        self._resetting.add((kind, owner.id))
        now = self.scheduler.now
        since = self._unacked.pop((kind, owner.id), None)
        at = now if since is None else tcp_retransmission_at(since, now)
        there = self._latency(peer, lost) or 0
        back = self._latency(lost, peer) or 0
        due = at + there + back
        self._tracer_for(peer).emit(
            "SimNetwork", "reset", Kind.FAULT, **{kind: owner.id}, by=lost, at=due,
            text=f"{lost} restarted without this connection: its kernel answers {peer}'s "
            f"next segment with a reset, which {peer} has at {due} ms",
        )  # fmt: skip

        def fire() -> None:
            self._resetting.discard((kind, owner.id))
            if isinstance(owner, SimConnection):
                self._close(owner, reason="Connection reset by peer", by=peer)
            else:
                self._reset_stream(owner, "Connection reset by peer")

        self.scheduler.call_at(due, fire, node=peer, name="reset", keyed=False)

    def remove_node(self, name: str) -> Node:
        """Stop (kill) and detach a node, freeing its name and address (for restarts)."""
        self.stop_node(name, graceful=False)
        node = self.nodes.pop(name)
        self.contexts.pop(name)
        if node.address and self.addr_to_node.get(node.address) == name:
            del self.addr_to_node[node.address]
        for alias in node.extra_addresses:
            if self._alias_to_node.get(alias) == name:
                del self._alias_to_node[alias]
        return node

    def _tracer_for(self, name: str) -> NodeTracer:
        ctx = self.contexts.get(name)
        return ctx.tracer if ctx is not None else self._tracer

    def _guard(self, node: Node, fn: Callable[[], None]) -> Callable[[], None]:
        """Timers of a stopped node do nothing (cluster's ``Role.set_timer`` wrapper)."""

        def run() -> None:
            if node.running:
                fn()

        return run

    # -- links and faults ------------------------------------------------------------------------
    def set_link(self, src: str, dst: str, **kw) -> None:
        """Configure frames from node ``src`` to node ``dst`` (see ``LinkConfig``)."""
        cfg = self.links.setdefault((src, dst), LinkConfig())
        for k, v in kw.items():
            if not hasattr(cfg, k):
                raise ValueError(f"unknown link setting {k!r}")
            setattr(cfg, k, v)
        self._tracer.emit("SimNetwork", "link", Kind.FAULT, src=src, dst=dst, **kw)
        if not cfg.down and (src, dst) in self._held:
            self._retransmit(src, dst, self._held.pop((src, dst)))
        if (
            cfg.down and not cfg.silent
        ):  # a cut link ends the streams between the two nodes, on both ends
            pair = {src, dst}
            streams = {
                s.id: s for s in self._stream_by_channel.values() if {s.client, s.server} == pair
            }
            for sid in sorted(streams):
                self._reset_stream(streams[sid], "link down")

    def _hold(
        self, sender: str, receiver: str, kind: str, owner: SimConnection | SimStream,
        deliver: Callable[[], None], label: str,
    ) -> None:  # fmt: skip
        """Keep what ``sender`` sent across a silent cut until TCP retransmits it."""
        flows = self._held.setdefault((sender, receiver), {})
        flow = flows.get((kind, owner.id))
        if flow is None:
            flow = flows[(kind, owner.id)] = _HeldFlow(self.scheduler.now, owner, [])
        flow.deliveries.append((deliver, label))

    def _retransmit(self, src: str, dst: str, flows: dict[tuple[str, int], _HeldFlow]) -> None:
        """The link from ``src`` to ``dst`` is up: each held flow arrives, in order, one
        latency after its next retransmission; what ``src`` sends meanwhile queues behind."""
        now = self.scheduler.now
        for key in sorted(flows):
            flow = flows[key]
            at = tcp_retransmission_at(flow.since_ms, now)
            due = max(at + (self._latency(src, dst) or 0), flow.owner.last_due[src])
            flow.owner.last_due[src] = due
            self._tracer_for(src).emit(
                "SimNetwork", "retransmit", Kind.FAULT, **{key[0]: key[1]}, to=dst,
                held=len(flow.deliveries), since=flow.since_ms, at=at,
                text=f"{len(flow.deliveries)} held since {flow.since_ms} ms: TCP retransmits "
                f"them at {at} ms, {dst} has them at {due} ms",
            )  # fmt: skip
            for deliver, label in flow.deliveries:
                self.scheduler.call_at(
                    due, deliver, node=dst, name="stream" if key[0] == "stream" else "frame",
                    key=label, keyed=False,
                )  # fmt: skip

    # -- byte streams ----------------------------------------------------------------------------
    def _latency(self, sender: str, receiver: str) -> int | None:
        """One-way latency from ``sender`` to ``receiver`` now; None if the link is down."""
        link = self.links.get((sender, receiver))
        latency = self.latency_ms
        if link is not None:
            if link.down:
                return None
            if link.latency_ms is not None:
                latency = link.latency_ms
            if link.jitter_ms:
                latency += self._net_rng.randint(0, link.jitter_ms)
        return latency

    def _open_stream(self, client: str, addr: str, on_bytes, on_close) -> StreamChannel:
        cid = next(self._conn_ids)
        ip = self.nodes[client].address.rsplit(":", 1)[0] or "127.0.0.1"
        eph = f"{ip}:{next(self._ports)}"
        owner = self.stream_listeners.get(addr)
        server = owner[0] if owner is not None else "?"
        client_end = StreamChannel(2 * cid, eph, addr, server)
        client_end.on_bytes, client_end.on_close = on_bytes, on_close
        latency = None
        if owner is not None and self.nodes[server].running:
            back = self.links.get((server, client))
            latency = None if back is not None and back.down else self._latency(client, server)
        if latency is None:  # nothing listens, or the link is cut: the connect fails
            client_end.closed = True
            node = self.nodes[client]
            self.scheduler.call_later(
                0, self._guard(node, lambda: on_close(f"connect to {addr} failed")),
                node=client, name="RemotingUtil.connect failed", keyed=False,
            )  # fmt: skip
            return client_end
        server_end = StreamChannel(2 * cid + 1, addr, eph, client)
        client_end.opened = server_end.opened = True
        stream = SimStream(cid, client, server, client_end, server_end)
        self.stream_pairs.add(frozenset((client, server)))
        self._stream_by_channel[client_end.id] = stream
        self._stream_by_channel[server_end.id] = stream
        due = self.scheduler.now + latency
        stream.last_due[client] = due
        on_accept = owner[1]

        def accept() -> None:
            node = self.nodes.get(server)
            if node is not None and node.running and not server_end.closed:
                on_accept(server_end)

        self._tracer_for(client).emit(
            "SimNetwork", "stream_open", Kind.STATE, stream=cid, to=server, addr=addr
        )
        self.scheduler.call_at(
            due, accept, node=server, name="stream", key=f"accept {client}->{server}", keyed=False
        )
        return client_end

    def _transmit_bytes(self, stream: SimStream, sender: str, data: bytes) -> None:
        if stream.lost is not None:
            self._to_lost(stream, sender, f"{len(data)} bytes")
            return
        receiver = stream.peer_of(sender)
        latency = self._latency(sender, receiver)
        end = stream.end_of(receiver)

        def deliver() -> None:
            node = self.nodes.get(receiver)
            if end.closed or node is None or not node.running or end.on_bytes is None:
                return
            end.on_bytes(data)

        if latency is None:
            if self._silent(sender, receiver):  # a partition: the kernel keeps the bytes
                self._tracer_for(sender).emit(
                    "SimNetwork", "hold", Kind.FAULT, reason="link down (silent)",
                    stream=stream.id, to=receiver, bytes=len(data),
                )  # fmt: skip
                self._hold(sender, receiver, "stream", stream, deliver,
                           f"bytes {sender}->{receiver}")  # fmt: skip
                return
            self._reset_stream(stream, "link down")
            return
        if self.chooser is not None:  # a choice point of mqlab.explore: this chunk's latency
            latency = self.chooser.choose_latency(sender, receiver, None, latency)
        due = max(self.scheduler.now + latency, stream.last_due[sender])
        stream.last_due[sender] = due
        if self.recorder.level >= _FRAMES:
            self._tracer_for(sender).emit(
                "SimNetwork", "bytes", Kind.SEND, stream=stream.id, to=receiver, bytes=len(data)
            )
        self.scheduler.call_at(
            due, deliver, node=receiver, name="stream", key=f"bytes {sender}->{receiver}",
            keyed=False,
        )  # fmt: skip

    def _close_stream(self, stream: SimStream, closer: str, reason: str) -> None:
        """``closer`` closes its end now; the peer sees the end after the bytes in flight."""
        mine = stream.end_of(closer)
        if mine.closed:
            return
        mine.closed = True
        if stream.lost is not None:  # the FIN goes into a machine that went down
            self._forget_stream(stream)
            return
        peer = stream.peer_of(closer)
        peer_end = stream.end_of(peer)
        latency = self._latency(closer, peer)
        due = max(self.scheduler.now + (latency or 0), stream.last_due[closer])
        self._tracer_for(closer).emit(
            "SimNetwork", "stream_close", Kind.STATE, stream=stream.id, by=closer, reason=reason
        )

        def fin() -> None:
            if peer_end.closed:
                self._forget_stream(stream)
                return
            peer_end.closed = True
            self._forget_stream(stream)
            node = self.nodes.get(peer)
            if node is not None and node.running and peer_end.on_close is not None:
                peer_end.on_close(reason)

        if latency is None and self._silent(closer, peer):  # the FIN queues behind the bytes
            self._hold(closer, peer, "stream", stream, fin, f"close {closer}->{peer}")
            return
        self.scheduler.call_at(
            due, fin, node=peer, name="stream", key=f"close {closer}->{peer}", keyed=False
        )

    def _silent(self, sender: str, receiver: str) -> bool:
        """True if the link from ``sender`` to ``receiver`` is silently down (a partition)."""
        link = self.links.get((sender, receiver))
        return link is not None and link.down and link.silent

    def _reset_stream(self, stream: SimStream, reason: str) -> None:
        """Both ends end now (a cut link): bytes in flight are lost."""
        self._tracer.emit("SimNetwork", "stream_close", Kind.FAULT, stream=stream.id, reason=reason)
        for side in (stream.client, stream.server):
            end = stream.end_of(side)
            if end.closed:
                continue
            end.closed = True
            node = self.nodes.get(side)
            if node is not None and node.running and end.on_close is not None:
                self.scheduler.call_later(
                    0, self._guard(node, lambda e=end: e.on_close(reason)),
                    node=side, name="stream", key=f"reset {side}", keyed=False,
                )  # fmt: skip
        self._forget_stream(stream)

    def _forget_stream(self, stream: SimStream) -> None:
        if stream.client_end.closed and stream.server_end.closed:
            self._stream_by_channel.pop(stream.client_end.id, None)
            self._stream_by_channel.pop(stream.server_end.id, None)

    # -- transport ------------------------------------------------------------------------------
    def _server_of(self, addr: str) -> str | None:
        """The node listening on ``addr``: its own address first, then its extra ones."""
        server = self.addr_to_node.get(addr)
        return server if server is not None else self._alias_to_node.get(addr)

    def _connect(self, client: str, addr: str) -> SimConnection | None:
        server = self._server_of(addr)
        conn = self._conns.get((client, addr))
        if conn is not None and conn.lost is not None and not conn.closed:
            if conn.lost == server:  # nothing told the client: its channel is still active
                return conn
            conn = None  # the client is a new incarnation: a channel of its own
        if server is None or not self.nodes[server].running:
            return None
        link = self.links.get((client, server))
        if link is not None and link.down:
            # a silent partition keeps an open channel (nothing tells either end; its frames
            # vanish in _transmit and each request waits out its timeout); a new connect, or
            # any connect across a link cut with a reset, fails
            if link.silent and conn is not None and not conn.closed:
                return conn
            return None
        if conn is not None and not conn.closed:
            return conn
        cid = next(self._conn_ids)
        ip = self.nodes[client].address.rsplit(":", 1)[0] or "127.0.0.1"
        eph = f"{ip}:{next(self._ports)}"
        client_end = Channel(2 * cid, eph, addr, server)
        server_end = Channel(2 * cid + 1, addr, eph, client)
        conn = SimConnection(cid, client, server, client_end, server_end)
        self._conns[(client, addr)] = conn
        self._conn_by_channel[client_end.id] = conn
        self._conn_by_channel[server_end.id] = conn
        return conn

    def _connect_failure_delay(self, client: str, addr: str) -> int:
        """Milliseconds until a failed connect from ``client`` to ``addr`` is known: 0 when
        refused (no such node, a stopped one, a link cut with a reset), and
        ``NettyClientConfig#connectTimeoutMillis`` across a silent partition, where the
        connect's packets vanish and ``NettyRemotingClient#createChannel`` waits it out."""
        server = self._server_of(addr)
        if server is not None and server in self._down:  # no machine answers the SYN
            return CONNECT_TIMEOUT_MILLIS
        if server is None or not self.nodes[server].running:
            return 0
        return CONNECT_TIMEOUT_MILLIS if self._silent(client, server) else 0

    def _close(self, conn: SimConnection, *, reason: str, by: str) -> None:
        """``by`` closes its end of ``conn`` (its process stopped, its own close, or its read
        of a reset); the other end sees the FIN. Both ends' ``channel_inactive`` runs. Only a
        client that closes its own channel fails its requests under way at once
        (``NettyRemotingClient.NettyConnectManageHandler#close`` →
        ``NettyRemotingAbstract#failFast``). A FIN from the peer does not: 4.9.3's client
        pipeline has no ``channelInactive`` handler, and its server has no ``failFast``, so
        their requests wait out their timeouts (``scanResponseTable``)."""
        if conn.closed:
            return
        conn.closed = True
        conn.client_end.closed = conn.server_end.closed = True
        self._tracer.emit(
            "SimNetwork", "close", Kind.STATE, conn=conn.id, client=conn.client,
            server=conn.server, reason=reason,
        )  # fmt: skip
        for side in (conn.client, conn.server):
            node = self.nodes.get(side)
            ctx = self.contexts.get(side)
            if node is None or ctx is None or not node.running or side == conn.lost:
                continue
            failed = (
                sorted(k for k in ctx.pending if k[0] == conn.id)
                if side == by and side == conn.client
                else []
            )
            remote = conn.end_of(side).remote_address
            for k in failed:
                cb = ctx.pending.pop(k)
                # requestFail: sendRequestOK false, so invokeSync throws this (an async
                # callback finds no response and sendRequestOK false)
                err = RemotingSendRequestException(f"send request to <{remote}> failed: {reason}")
                self.scheduler.call_later(
                    0, self._guard(node, lambda cb=cb, err=err: cb(None, err)),
                    node=side, name="NettyRemotingAbstract.failFast", keyed=False,
                )  # fmt: skip
            end = conn.end_of(side)
            self.scheduler.call_later(
                0, self._guard(node, lambda n=node, e=end: n.channel_inactive(e)),
                node=side, name="channelInactive", keyed=False,
            )  # fmt: skip

    def _transmit(self, conn: SimConnection, sender: str, cmd: RemotingCommand) -> None:
        # NOTE: performance — one encode per frame; the receiver decodes the same bytes.
        frame = cmd.encode()
        conn.active[sender] = self.scheduler.now
        if conn.lost is not None:
            self._to_lost(conn, sender, f"code {cmd.code} opaque {cmd.opaque}")
            return
        receiver = conn.peer_of(sender)
        link = self.links.get((sender, receiver))
        latency = self.latency_ms
        if link is not None:
            if link.down:
                if link.silent:  # a partition: the sender's kernel keeps the frame
                    code_name = self._frame_code_name(cmd.code, cmd.is_response, sender, receiver)
                    self._tracer_for(sender).emit(
                        "SimNetwork", "hold", Kind.FAULT, reason="link down (silent)",
                        code=code_name, opaque=cmd.opaque, to=receiver, bytes=len(frame),
                    )  # fmt: skip
                    self._hold(
                        sender, receiver, "conn", conn,
                        lambda: self._deliver(conn, receiver, frame),
                        f"{code_name} {sender}->{receiver}",
                    )  # fmt: skip
                    return
                self._tracer_for(sender).emit(
                    "SimNetwork", "drop", Kind.FAULT, reason="link down", code=cmd.code, to=receiver
                )
                return
            if link.latency_ms is not None:
                latency = link.latency_ms
            if link.jitter_ms:
                latency += self._net_rng.randint(0, link.jitter_ms)
            if link.drop_rate and self._net_rng.random() < link.drop_rate:
                self._tracer_for(sender).emit(
                    "SimNetwork", "drop", Kind.FAULT, reason="loss", code=cmd.code, to=receiver
                )
                return
        if self.chooser is not None:  # a choice point of mqlab.explore: this frame's latency
            latency = self.chooser.choose_latency(sender, receiver, cmd, latency)
        now = self.scheduler.now
        due = max(now + latency, conn.last_due[sender])
        conn.last_due[sender] = due
        code_name = self._frame_code_name(cmd.code, cmd.is_response, sender, receiver)
        if self.recorder.level >= _FRAMES:
            self._tracer_for(sender).emit(
                "RemotingCommand", "send", Kind.SEND, code=code_name,
                opaque=cmd.opaque, to=receiver, bytes=len(frame), response=cmd.is_response,
            )  # fmt: skip
        label = f"{code_name} {sender}->{receiver}"
        self.scheduler.call_at(
            due, lambda: self._deliver(conn, receiver, frame, now), node=receiver, name="frame",
            key=label, keyed=False,
        )  # fmt: skip

    def _frame_code_name(self, code: int, is_response: bool, a: str, b: str) -> str:
        """The code's name in the protocol of the endpoints ``a`` and ``b`` (a DLedger node's
        frames, both ways, are DLedger's; ``Node.remoting_codes``)."""
        na, nb = self.nodes.get(a), self.nodes.get(b)
        codes = (na.remoting_codes if na is not None else None) or (
            nb.remoting_codes if nb is not None else None
        )
        key = (code, is_response, codes)
        name = self._code_names.get(key)
        if name is None:
            name = self._code_names[key] = _code_name(code, is_response, codes)
        return name

    def _deliver(self, conn: SimConnection, receiver: str, frame: bytes, sent: int = -1) -> None:
        if conn.lost == receiver and not conn.closed:  # its machine went down on the way
            self._to_lost(conn, conn.peer_of(receiver), "a frame in flight", sent)
            return
        node = self.nodes.get(receiver)
        if conn.closed or node is None or not node.running:
            return
        conn.active[receiver] = self.scheduler.now
        ctx = self.contexts[receiver]
        try:
            cmd = RemotingCommand.decode(frame)
        except RemotingCommandException as e:
            ctx.tracer.emit("NettyDecoder", "decode", Kind.ERROR, error=str(e))
            self._close(conn, reason=f"malformed frame: {e}", by=receiver)
            return
        channel = conn.end_of(receiver)
        if self.recorder.level >= _FRAMES:
            ctx.tracer.emit(
                "RemotingCommand", "recv", Kind.RECV,
                code=self._frame_code_name(cmd.code, cmd.is_response, receiver,
                                           conn.peer_of(receiver)),
                opaque=cmd.opaque,
                frm=conn.peer_of(receiver), response=cmd.is_response,
            )  # fmt: skip
        if cmd.is_response:
            cb = ctx.pending.pop((conn.id, cmd.opaque), None)
            if cb is not None:
                self.scheduler.cancel(
                    receiver, "NettyRemotingAbstract.scanResponseTable", f"opaque={cmd.opaque}"
                )
                cb(cmd, None)
            return
        self._process_request(node, ctx, conn, channel, cmd)

    def _process_request(self, node, ctx, conn, channel, cmd) -> None:
        """``NettyRemotingAbstract#processRequestCommand`` (docs/reference.md §1.6)."""
        try:
            response = node.process_request(channel, cmd)
        except Exception as e:
            if self.strict:
                raise
            from mqlab.remoting.codes import ResponseCode

            ctx.tracer.emit(
                "NettyRemotingAbstract", "processRequestCommand", Kind.ERROR, error=repr(e)
            )
            response = RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, repr(e)[:200])
        if response is None or cmd.is_oneway:
            return
        response.opaque = cmd.opaque
        response.mark_response_type()
        self._transmit(conn, node.name, response)

    # -- exploring -------------------------------------------------------------------------------
    def set_chooser(self, chooser, *, window_ms: int = 0) -> None:
        """Let ``chooser`` pick among the events enabled together and the latency of each
        frame and of each chunk written to a byte stream.

        ``chooser`` has ``choose_event(scheduler, candidates) -> Timer | None`` and
        ``choose_latency(sender, receiver, cmd, default_ms) -> int`` (``mqlab.explore``;
        ``cmd`` is None for a stream's chunk, whose delivery stays behind the chunks
        written before it: a stream, like TCP, keeps its order).
        Events due within ``window_ms`` of the earliest are enabled together (see
        ``ChoosingScheduler``). ``set_chooser(None)`` goes back to the seed's own order.
        """
        if window_ms < 0:
            raise ValueError(f"window_ms must be >= 0, got {window_ms}")
        self.chooser = chooser
        s = self.scheduler
        if chooser is None:
            if isinstance(s, ChoosingScheduler):
                s.__class__ = Scheduler
                del s.chooser, s.window
            return
        s.__class__ = ChoosingScheduler
        s.chooser = chooser
        s.window = int(window_ms)

    # -- running ---------------------------------------------------------------------------------
    def step(self) -> list[TraceEvent]:
        """Run exactly one event; return the trace events it produced ([] if none pending)."""
        mark = len(self.recorder.events)
        if self.scheduler.run_one() is not None:
            self.events_run += 1
        return self.recorder.events[mark:]

    def advance(self, ms: int) -> list[TraceEvent]:
        """Run every event due up to ``now + ms`` (inclusive), then set the clock there."""
        if ms < 0:
            raise ValueError(f"advance() takes a duration >= 0 ms, got {ms}")
        mark = len(self.recorder.events)
        self.run_until(self.scheduler.now + int(ms))
        return self.recorder.events[mark:]

    def run_until(self, t_ms: int) -> None:
        s = self.scheduler
        with _fewer_gc_passes():
            while True:
                t = s.peek()
                if t is None or t.due > t_ms:
                    break
                s.run_one()
                self.events_run += 1
        if t_ms > s.now:
            s.now = t_ms

    def run_until_idle(
        self, *, max_ms: int | None = None, max_events: int = 10_000_000
    ) -> list[TraceEvent]:
        """Run until only daemon timers are pending (or ``max_ms`` of virtual time passed).

        Raises:
            RuntimeError: more than ``max_events`` events ran (something loops forever).
        """
        mark = len(self.recorder.events)
        s = self.scheduler
        limit = None if max_ms is None else s.now + max_ms
        n = 0
        with _fewer_gc_passes():
            while s._live_foreground > 0:  # s.has_foreground, read directly: once per event
                t = s.peek()
                if t is None or (limit is not None and t.due > limit):
                    break
                s.run_one()
                self.events_run += 1
                n += 1
                if n > max_events:
                    raise RuntimeError(
                        f"run_until_idle: more than {max_events} events; is something looping?"
                    )
        return self.recorder.events[mark:]

    def next_timers(
        self,
        limit: int | None = None,
        *,
        include_frames: bool = True,
        include_bookkeeping: bool = True,
    ) -> list[PendingTimer]:
        """Pending timers (and frames in flight) in firing order; without the statistics
        samplings (``BOOKKEEPING_TIMERS``) when ``include_bookkeeping`` is false."""
        out = [
            p
            for p in self.scheduler.pending()
            if (include_frames or p.name != "frame")
            and (include_bookkeeping or p.name not in BOOKKEEPING_TIMERS)
        ]
        return out if limit is None else out[:limit]

    def call_later(
        self, delay_ms: int, fn: Callable[[], None], *, name: str = "lab action"
    ) -> None:
        """Schedule a driver-level action (used by the Lab for scripted scenarios)."""
        self.scheduler.call_later(delay_ms, fn, node="lab", name=name, keyed=False)
