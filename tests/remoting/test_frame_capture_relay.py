"""The DLedger relay's silent cut holds bytes as a sender's kernel does, and lets them go at
TCP's first retransmission after the heal (mqlab.conformance.dledger_capture, step 5).

No JVM: a plain socket server stands for the peer ``b``, a socket client for ``a``."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from mqlab.conformance.dledger_capture import FrameCapture, frame_record
from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.sim import tcp_retransmission_at


class _Peer:
    """``b``: accepts one connection and records (monotonic seconds, bytes) as they come."""

    def __init__(self) -> None:
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(4)
        self.port = self.srv.getsockname()[1]
        self.got: list[tuple[float, bytes]] = []
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        while data := conn.recv(65536):
            self.got.append((time.monotonic(), data))

    def body(self) -> bytes:
        return b"".join(d for _, d in self.got)

    def close(self) -> None:
        for c in [*self.conns, self.srv]:
            c.close()


def _frame(n: int) -> bytes:
    return RemotingCommand.create_request(50001, body=b'{"n":%d}' % n).encode()


def _wait(cond, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.01)


@pytest.fixture
def relay():
    peer, capture = _Peer(), FrameCapture()
    try:
        port = capture.add_link("a", "b", peer.port)
        yield peer, capture, port
    finally:
        capture.close()
        peer.close()


def test_a_silent_cut_holds_bytes_until_the_first_retransmission_after_the_heal(relay):
    """Frame 1 passes. Frames 2 and 3 go into the cut and wait; the heal ~300 ms after frame
    2 lets them go no sooner than TCP's retransmission at frame 2 + 400 ms, and frame 4,
    sent after the heal, comes behind them. ``held()`` lists what was held, as read: 2, 3,
    the late connection's 9, and 4; ``frames()`` lists 1 to 4 in the order ``b`` got them. A connection accepted during the cut is
    closed at the heal."""
    peer, capture, port = relay
    a = socket.create_connection(("127.0.0.1", port))
    a.sendall(_frame(1))
    _wait(lambda: peer.body() == _frame(1))
    assert len(peer.got) == 1
    capture.block("a", "b", silent=True)
    t0 = time.monotonic()
    a.sendall(_frame(2))
    _wait(lambda: len(capture.held()) == 1)
    a.sendall(_frame(3))
    late = socket.create_connection(("127.0.0.1", port))  # accepted, never answered
    late.sendall(_frame(9))
    _wait(lambda: len(capture.held()) == 3)
    time.sleep(0.3)
    assert peer.body() == _frame(1)
    since_ms = capture.held()[0].t_ms
    healed_ms = int((time.monotonic() - capture._t0) * 1000)
    capture.unblock("a", "b")
    healed = time.monotonic()
    a.sendall(_frame(4))
    _wait(lambda: peer.body() == b"".join(_frame(i) for i in (1, 2, 3, 4)))
    arrived = peer.got[1][0]  # the chunk after frame 1's: frame 2 comes first
    release_ms = tcp_retransmission_at(since_ms, healed_ms)
    assert release_ms - since_ms >= 400
    assert arrived - healed >= (release_ms - healed_ms) / 1000 - 0.02
    assert arrived - t0 >= 0.38
    late.settimeout(5)
    assert late.recv(10) == b""  # closed at the heal
    bodies = [(f["src"], f["dst"], f["bodyText"]) for f in map(frame_record, capture.frames())]
    assert bodies == [("a", "b", f'{{"n":{n}}}') for n in (1, 2, 3, 4)]
    assert [frame_record(f)["bodyText"] for f in capture.held()] == [
        '{"n":2}', '{"n":3}', '{"n":9}', '{"n":4}',
    ]  # fmt: skip
    a.close()
    late.close()


def test_a_raw_link_relays_bytes_that_are_not_frames_and_logs_them():
    """``frames=False`` (an HA connection's bytes): nothing is cut into frames, no decode
    error is kept, and ``events`` tells what passed: the accept, each chunk with its bytes,
    the bytes a silent cut held and their release, and each side's end of stream."""
    peer, capture = _Peer(), FrameCapture()
    try:
        port = capture.add_link("slave", "master", peer.port, frames=False)
        a = socket.create_connection(("127.0.0.1", port))
        a.sendall((130).to_bytes(8, "big"))
        _wait(lambda: peer.body() == (130).to_bytes(8, "big"))
        capture.block("slave", "master", silent=True)
        a.sendall((259).to_bytes(8, "big"))
        _wait(lambda: any(e.kind == "held" for e in capture.events("slave", "master")))
        capture.unblock("slave", "master")
        _wait(lambda: len(peer.body()) == 16)
        a.close()
        _wait(lambda: sum(e.kind == "eof" for e in capture.events("slave", "master")) == 2)
        events = [(e.conn, e.kind, e.src, e.n, e.data) for e in capture.events("slave", "master")]
        assert events == [
            (1, "accept", "slave", 0, b""),
            (1, "bytes", "slave", 8, (130).to_bytes(8, "big")),
            (1, "held", "slave", 8, (259).to_bytes(8, "big")),
            (1, "release", "slave", 8, b""),
            (1, "eof", "slave", 0, b""),
            (1, "eof", "master", 0, b""),  # the relay closed its side to the master
        ]
        assert capture.frames() == [] and capture.held() == [] and capture.errors == []
    finally:
        capture.close()
        peer.close()
