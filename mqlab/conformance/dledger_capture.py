"""A loopback relay that records the remoting frames real DLedger nodes send each other.

Not a RocketMQ class: a tap for the harness. Each DLedger node of a real 4.9.3 group runs
its RPC server (``DLedgerRpcNettyService``, DLedger 0.2.3) on its own address in
``dLegerPeers`` and sends to the address it has for a peer (``MemberState#getPeerAddr``). The
group (``mqlab.conformance.dledger_group``) gives node ``a`` the address of a *link*
``a -> b`` for peer ``b``: a port of this relay, which forwards bytes to ``b``'s real port and
back unchanged, and cuts a copy of each direction into frames with mqlab's own codec
(``split_frames``, ``RemotingCommand.decode_payload``). So every request ``a`` sends to ``b``
and every response ``b`` returns is recorded once, with who sent it to whom.

1. :meth:`FrameCapture.add_link` listens on a free port of 127.0.0.1 for one ordered pair.
2. A connection there opens one to the peer's real port; bytes are forwarded as they come.
3. Each direction's bytes are cut into frames and each frame is recorded as a
   :class:`CapturedFrame`: the sender, the receiver, the frame's exact bytes and its decoded
   fields (code, flag, opaque, version, language, extFields, remark, the body's JSON).
4. :meth:`FrameCapture.block` cuts one link (a one-way partition: ``a``'s requests to ``b``
   fail, ``b``'s to ``a`` still pass); :meth:`FrameCapture.unblock` heals it. With
   ``silent=True`` the cut is a partition no packet crosses: open connections stay open and
   their bytes are held both ways, as the senders' kernels would hold them
   (:meth:`FrameCapture.held`); a new connection is accepted and never answered.
5. :meth:`FrameCapture.unblock` after a silent cut: each connection's held bytes go on, in
   order, at TCP's first retransmission after the heal (``tcp_retransmission_at``: 200, 400,
   800 ms ... after the first held byte), and what comes meanwhile queues behind them, as
   with a real partition; the connections accepted during the cut, which a real partition
   would never have let open, are closed.

A link added with ``frames=False`` relays bytes that are not remoting frames (an HA
connection's): nothing is cut into frames, and :meth:`FrameCapture.events` tells what passed.

The relay runs an asyncio loop on a thread of its own; nothing binds beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqlab.remoting.command import (
    RPC_TYPE,
    RemotingCommand,
    RemotingCommandException,
    split_frames,
)
from mqlab.runtime.sim import tcp_retransmission_at

__all__ = [
    "CapturedFrame",
    "FrameCapture",
    "LinkEvent",
    "frame_record",
    "read_frames",
    "write_frames",
]


@dataclass(frozen=True, slots=True)
class LinkEvent:
    """What happened on a link: ``accept`` (a connection, ``conn`` its number on the link),
    ``bytes`` (``n`` bytes passed from ``src`` to ``dst``), ``held`` (``n`` bytes kept back
    by a silent cut), ``release`` (``n`` held bytes passed at TCP's retransmission) or
    ``eof`` (``src`` closed its side; after held bytes, its FIN waits behind them)."""

    t_ms: int
    conn: int
    kind: str
    src: str
    dst: str
    n: int = 0
    #: the bytes themselves (``bytes`` and ``held`` on a link added with ``frames=False``)
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class CapturedFrame:
    """One frame seen on a link: ``src`` sent it to ``dst`` (DLedger self ids, ``n0``...)."""

    seq: int
    #: milliseconds since the capture started (for reading a run, never asserted on)
    t_ms: int
    src: str
    dst: str
    #: the whole frame, its 4-byte length prefix included
    frame: bytes

    def command(self) -> RemotingCommand:
        return RemotingCommand.decode(self.frame)


def frame_record(f: CapturedFrame) -> dict[str, Any]:
    """One JSON-lines record: the frame decoded by mqlab's codec, and its bytes in base64.

    ``header`` is the JSON header's text exactly as sent (its key order is the sender's);
    ``body`` is the body parsed as JSON when it is JSON, and ``bodyText`` the body's text.
    """
    cmd = f.command()
    raw = memoryview(f.frame)
    hlen = int.from_bytes(raw[4:8], "big") & 0xFFFFFF
    header = bytes(raw[8 : 8 + hlen]).decode("utf-8")
    body_text = cmd.body.decode("utf-8") if cmd.body else None
    try:
        body = json.loads(body_text) if body_text else None
    except ValueError:
        body = None
    return {
        "seq": f.seq,
        "t_ms": f.t_ms,
        "src": f.src,
        "dst": f.dst,
        "kind": "response" if cmd.flag & RPC_TYPE else "request",
        "code": cmd.code,
        "flag": cmd.flag,
        "opaque": cmd.opaque,
        "version": cmd.version,
        "language": cmd.language,
        "serializeType": raw[4],
        "extFields": cmd.ext_fields,
        "remark": cmd.remark,
        "header": header,
        "bodyText": body_text,
        "body": body,
        "frame": base64.b64encode(f.frame).decode("ascii"),
    }


def write_frames(path: Path, records: list[dict[str, Any]]) -> None:
    """Write records as JSON lines (one frame a line, keys in the order above)."""
    with open(path, "w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


def read_frames(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


@dataclass
class _Flow:
    """One direction of one relayed connection: the bytes a silent cut holds back."""

    src: str
    dst: str
    writer: asyncio.StreamWriter | None
    link: _Link
    conn: int
    #: the relay's clock (ms) when the first byte held now came; None: nothing held
    since_ms: int | None = None
    held: bytearray = field(default_factory=bytearray)
    #: the frames of ``held``, to record as relayed when they go on
    held_frames: list[CapturedFrame] = field(default_factory=list)
    #: a release is due (the link was healed)
    releasing: bool = False
    #: the sender closed while bytes were held: close after them, as its FIN would come
    close_after: bool = False


@dataclass
class _Link:
    src: str
    dst: str
    dst_port: int
    listen_port: int = 0
    server: asyncio.base_events.Server | None = None
    blocked: bool = False
    #: with ``blocked``: bytes are held instead of connections closed (a silent partition)
    silent: bool = False
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    flows: list[_Flow] = field(default_factory=list)
    #: connections accepted while the link was silently cut (never answered)
    unanswered: list[asyncio.StreamWriter] = field(default_factory=list)
    #: cut each direction into remoting frames and record them (False: bytes only)
    frames: bool = True
    events: list[LinkEvent] = field(default_factory=list)
    accepted: int = 0


class FrameCapture:
    """Relays between DLedger peers on 127.0.0.1, recording each frame both ways."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mqlab-dledger-capture", daemon=True
        )
        self._thread.start()
        self._lock = threading.Lock()
        self._frames: list[CapturedFrame] = []
        self._held: list[CapturedFrame] = []
        self._links: list[_Link] = []
        self._t0 = time.monotonic()
        #: frames that did not decode (text of the error), kept rather than dropped
        self.errors: list[str] = []
        self._closed = False

    # -- 1. links -------------------------------------------------------------------------
    def add_link(self, src: str, dst: str, dst_port: int, *, frames: bool = True) -> int:
        """Listen for ``src``'s connections to ``dst`` (real port ``dst_port``); the port.
        ``frames=False``: relay bytes that are not remoting frames, recording only
        :meth:`events`."""
        link = _Link(src, dst, dst_port, frames=frames)
        fut = asyncio.run_coroutine_threadsafe(self._listen(link), self._loop)
        return fut.result(10)

    async def _listen(self, link: _Link) -> int:
        link.server = await asyncio.start_server(
            lambda r, w: self._relay(link, r, w), "127.0.0.1", 0
        )
        link.listen_port = link.server.sockets[0].getsockname()[1]
        self._links.append(link)
        return link.listen_port

    # -- 2. forwarding --------------------------------------------------------------------
    def block(self, src: str, dst: str, *, silent: bool = False) -> None:
        """Cut the link ``src -> dst``: its open connections are closed and new ones are
        closed as soon as accepted, so ``src``'s requests to ``dst`` fail (a one-way
        partition: ``dst``'s own requests to ``src`` go over the link ``dst -> src``).

        ``silent=True``: nothing is closed. Bytes on the link's open connections are held
        both ways (``src``'s requests and ``dst``'s answers) until :meth:`unblock`, and a
        new connection is accepted and never answered: each request waits out its timeout."""

        async def cut() -> None:
            for link in self._links:
                if (link.src, link.dst) == (src, dst):
                    link.blocked, link.silent = True, silent
                    if not silent:
                        self._close_all(link)

        asyncio.run_coroutine_threadsafe(cut(), self._loop).result(10)

    def unblock(self, src: str, dst: str) -> None:
        """Let ``src`` connect to ``dst`` again (its client reconnects on its next request).
        After a silent cut, each connection's held bytes go on at TCP's first
        retransmission after now (``tcp_retransmission_at``), and the connections accepted
        during the cut are closed."""

        async def heal() -> None:
            for link in self._links:
                if (link.src, link.dst) == (src, dst):
                    if link.blocked and link.silent:
                        for w in link.unanswered:
                            w.close()
                        link.unanswered.clear()
                        now = self._now_ms()
                        for flow in link.flows:
                            if flow.writer is None:  # accepted during the cut: no peer
                                continue
                            if flow.since_ms is not None and not flow.releasing:
                                flow.releasing = True
                                at = tcp_retransmission_at(flow.since_ms, now)
                                self._loop.call_later((at - now) / 1000, self._release, flow)
                    link.blocked = link.silent = False

        asyncio.run_coroutine_threadsafe(heal(), self._loop).result(10)

    def _now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def _release(self, flow: _Flow) -> None:
        """TCP's retransmission: the held bytes go on, in order; their frames are recorded
        as relayed now."""
        data, frames = bytes(flow.held), flow.held_frames
        flow.held, flow.held_frames = bytearray(), []
        flow.since_ms, flow.releasing = None, False
        if flow.writer is None or flow.writer.is_closing():
            return
        flow.writer.write(data)
        self._event(flow, "release", len(data))
        if flow.close_after:
            flow.writer.close()
        with self._lock:
            for f in frames:
                self._frames.append(
                    CapturedFrame(
                        seq=len(self._frames),
                        t_ms=self._now_ms(),
                        src=f.src,
                        dst=f.dst,
                        frame=f.frame,
                    )
                )

    def _event(self, flow: _Flow, kind: str, n: int = 0, data: bytes = b"") -> None:
        with self._lock:
            flow.link.events.append(
                LinkEvent(self._now_ms(), flow.conn, kind, flow.src, flow.dst, n, data)
            )

    def events(self, src: str, dst: str) -> list[LinkEvent]:
        """What happened on the link ``src -> dst`` so far, in order."""
        with self._lock:
            return [e for link in self._links if (link.src, link.dst) == (src, dst)
                    for e in link.events]  # fmt: skip

    @staticmethod
    def _close_all(link: _Link) -> None:
        for w in link.writers:
            w.close()
        link.writers.clear()

    async def _relay(
        self, link: _Link, c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter
    ) -> None:
        link.accepted += 1
        conn = link.accepted
        with self._lock:
            link.events.append(LinkEvent(self._now_ms(), conn, "accept", link.src, link.dst))
        if link.blocked and link.silent:  # accepted, and never answered
            link.writers.append(c_writer)
            link.unanswered.append(c_writer)
            await self._pump(link, conn, c_reader, None, link.src, link.dst)
            return
        if link.blocked:
            c_writer.close()
            return
        try:
            p_reader, p_writer = await asyncio.open_connection("127.0.0.1", link.dst_port)
        except OSError:  # the peer is down: refuse as it would
            c_writer.close()
            return
        link.writers += [c_writer, p_writer]
        await asyncio.gather(
            self._pump(link, conn, c_reader, p_writer, link.src, link.dst),
            self._pump(link, conn, p_reader, c_writer, link.dst, link.src),
        )

    async def _pump(
        self,
        link: _Link,
        conn: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter | None,
        src: str,
        dst: str,
    ) -> None:
        """Forward ``reader``'s bytes to ``writer`` (None: nowhere), recording the frames;
        while the link is silently cut, and after it until the release
        (:meth:`unblock`), the bytes are held and their frames kept apart."""
        buf = bytearray()
        flow = _Flow(src, dst, writer, link, conn)
        link.flows.append(flow)
        try:
            while chunk := await reader.read(65536):
                hold = writer is None or (link.blocked and link.silent) or flow.since_ms is not None
                if link.frames:
                    buf += chunk
                if hold:
                    if flow.since_ms is None:
                        flow.since_ms = self._now_ms()
                    flow.held += chunk
                    self._event(flow, "held", len(chunk), b"" if link.frames else chunk)
                    if link.frames:
                        flow.held_frames += self._record(buf, src, dst, held=True)
                    continue
                writer.write(chunk)
                self._event(flow, "bytes", len(chunk), b"" if link.frames else chunk)
                if link.frames:
                    self._record(buf, src, dst)
                await writer.drain()
        except (OSError, RemotingCommandException) as e:
            if isinstance(e, RemotingCommandException):
                self.errors.append(f"{src}->{dst}: {e}")
        finally:
            self._event(flow, "eof")
            if writer is not None and flow.since_ms is not None:
                flow.close_after = True  # the sender's FIN queues behind its held bytes
            else:
                link.flows.remove(flow)
                if writer is not None:
                    writer.close()

    # -- 3. recording ---------------------------------------------------------------------
    def _record(
        self, buf: bytearray, src: str, dst: str, *, held: bool = False
    ) -> list[CapturedFrame]:
        """Cut ``buf``'s whole frames off and record each, as relayed or as ``held``."""
        made = []
        for payload in split_frames(buf):
            frame = len(payload).to_bytes(4, "big") + payload
            try:
                RemotingCommand.decode(frame)
            except RemotingCommandException as e:
                self.errors.append(f"{src}->{dst}: {e}")
            with self._lock:
                into = self._held if held else self._frames
                f = CapturedFrame(seq=len(into), t_ms=self._now_ms(), src=src, dst=dst,
                                  frame=frame)  # fmt: skip
                into.append(f)
                made.append(f)
        return made

    def frames(self) -> list[CapturedFrame]:
        """Every frame recorded so far, in the order the relay read them."""
        with self._lock:
            return list(self._frames)

    def held(self) -> list[CapturedFrame]:
        """Every frame a silent cut held back, in the order the relay read them (``seq``
        counts these frames only; ``t_ms`` is when it was read). Each is in :meth:`frames`
        too once its connection's retransmission has let it go on."""
        with self._lock:
            return list(self._held)

    def close(self) -> None:
        """Stop listening, close every relayed connection, end the loop's thread. Idempotent."""
        if self._closed:
            return
        self._closed = True

        async def shut() -> None:
            for link in self._links:
                if link.server is not None:
                    link.server.close()
                for w in link.writers:
                    w.close()
            me = asyncio.current_task()
            for task in asyncio.all_tasks():
                if task is not me:
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shut(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@contextmanager
def broker_behind_relay(
    workdir: Callable[[str], Path], *, broker_name: str = "broker-a",
    ns_broker_name: str | None = None, namesrv_properties: dict[str, str] | None = None,
    broker_properties: dict[str, str] | None = None,
) -> Iterator[tuple[Any, FrameCapture, Any]]:  # fmt: skip
    """A real name server's JVM (with a broker ``ns_broker_name`` in it, or none), a relay, and
    ``broker_name`` in a JVM of its own that registers through the relay (link "broker" →
    "namesrv"), so its frames to the name server are recorded with their times; yields
    ``(name server's RealCluster, relay, broker's RealCluster)`` once the name server lists
    the broker. A test may stop the broker's JVM with SIGSTOP (a machine fallen silent): on
    exit it gets SIGCONT, then both JVMs stop. ``workdir``: a fresh directory for a name
    (``tmp_path_factory.mktemp``).

    Raises:
        RealClusterError: a JVM did not start.
    """
    import os
    import signal

    from mqlab.conformance.real_cluster import RealCluster
    from mqlab.conformance.wire import broker_addr_table, wait_until

    ns = RealCluster(workdir("namesrv"), broker_properties, broker=ns_broker_name is not None,
                     broker_name=ns_broker_name or "broker-a",
                     namesrv_properties=namesrv_properties)  # fmt: skip
    relay = FrameCapture()
    broker = None
    try:
        ns.start()
        port = relay.add_link("broker", "namesrv", int(ns.namesrv_addr.rsplit(":", 1)[1]))
        broker = RealCluster(workdir(broker_name), broker_properties, broker_name=broker_name,
                             namesrv_addr=f"127.0.0.1:{port}")  # fmt: skip
        broker.start()
        wait_until(lambda: broker_addr_table(ns.namesrv_addr, broker_name) != {}, 30,
                   f"{broker_name} registered")  # fmt: skip
        yield ns, relay, broker
    finally:
        if broker is not None:
            if broker.pid is not None:
                try:
                    os.kill(broker.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            broker.stop()
        relay.close()
        ns.stop()
