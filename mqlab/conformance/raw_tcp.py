"""A blocking RemotingCommand client over plain TCP, for the conformance harness.

Not a RocketMQ class: the smallest ``NettyRemotingClient`` that can talk to both the
real 4.9.3 broker and ``mqlab serve`` — one socket per address, JSON headers (the Java
client's default ``serializeTypeCurrentRPC``), ``opaque`` numbers matched to answers by a
reader thread, so several requests may be outstanding at once (a parked pull while a
send goes out on the same connection, as ``MQClientAPIImpl`` does).
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from concurrent.futures import Future

from mqlab.remoting.command import RemotingCommand, split_frames

__all__ = ["RawTcpClient", "Answer"]


class Answer:
    """One response and how long it took on the real clock (ms)."""

    __slots__ = ("command", "elapsed_ms", "error")

    def __init__(
        self, command: RemotingCommand | None, elapsed_ms: float, error: str | None = None
    ) -> None:
        self.command = command
        self.elapsed_ms = elapsed_ms
        self.error = error


class _Connection:
    def __init__(self, addr: str, timeout_s: float) -> None:
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending: dict[int, Future] = {}
        self.lock = threading.Lock()
        self.closed = False
        self.reader = threading.Thread(target=self._read_loop, daemon=True, name=f"wire {addr}")
        self.reader.start()

    @property
    def local_addr(self) -> str:
        h, p = self.sock.getsockname()[:2]
        return f"{h}:{p}"

    def _read_loop(self) -> None:
        buf = bytearray()
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                for payload in split_frames(buf):
                    cmd = RemotingCommand.decode_payload(payload)
                    if not cmd.is_response:
                        continue  # a server-initiated request (NOTIFY_CONSUMER_IDS_CHANGED...)
                    fut = self.pending.pop(cmd.opaque, None)
                    if fut is not None:
                        fut.set_result((cmd, time.monotonic()))
        except OSError:
            pass
        finally:
            self.closed = True
            for fut in list(self.pending.values()):
                if not fut.done():
                    fut.set_exception(ConnectionError("connection closed"))
            self.pending.clear()

    def send(self, cmd: RemotingCommand) -> Future:
        fut: Future = Future()
        self.pending[cmd.opaque] = fut
        with self.lock:
            self.sock.sendall(cmd.encode())
        return fut

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class RawTcpClient:
    """Send raw requests to any address; answers come back as :class:`Answer`."""

    _opaques = itertools.count(1)

    def __init__(self, *, connect_timeout_s: float = 5.0) -> None:
        self.connect_timeout_s = connect_timeout_s
        self._conns: dict[str, _Connection] = {}
        self._lock = threading.Lock()

    def connection(self, addr: str) -> _Connection:
        with self._lock:
            c = self._conns.get(addr)
            if c is None or c.closed:
                c = self._conns[addr] = _Connection(addr, self.connect_timeout_s)
            return c

    def local_addr(self, addr: str) -> str:
        return self.connection(addr).local_addr

    def start(
        self,
        addr: str,
        code: int,
        ext_fields: dict[str, str] | None = None,
        body: bytes | None = None,
        *,
        timeout_s: float = 30.0,
        oneway: bool = False,
    ) -> Future:
        """Send one request; the future resolves to an :class:`Answer`."""
        cmd = RemotingCommand.create_request(code, ext_fields, body)
        cmd.opaque = next(self._opaques)
        out: Future = Future()
        t0 = time.monotonic()
        conn = self.connection(addr)
        if oneway:
            cmd.mark_oneway_rpc()
            with conn.lock:
                conn.sock.sendall(cmd.encode())
            out.set_result(Answer(None, 0.0))
            return out
        inner = conn.send(cmd)

        def wait() -> None:
            try:
                resp, t1 = inner.result(timeout=timeout_s)
                out.set_result(Answer(resp, (t1 - t0) * 1000))
            except Exception as e:  # noqa: BLE001 - reported as the answer
                conn.pending.pop(cmd.opaque, None)
                out.set_result(Answer(None, (time.monotonic() - t0) * 1000, repr(e)))

        threading.Thread(target=wait, daemon=True).start()
        return out

    def call(self, addr: str, code: int, ext_fields=None, body=None, *, timeout_s=30.0) -> Answer:
        return self.start(addr, code, ext_fields, body, timeout_s=timeout_s).result()

    def close(self) -> None:
        with self._lock:
            for c in self._conns.values():
                c.close()
            self._conns.clear()
