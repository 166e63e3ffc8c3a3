"""Byte streams on the simulation driver (``NodeContext.open_stream`` and friends).

The HA connection's transport: per-direction FIFO with the link's latency, a close that
arrives after the bytes sent before it, a cut link that ends the stream on both ends, a
killed node whose peer sees the end, and a failed connect (docs/design.md §1).
"""

from __future__ import annotations

import pytest

from mqlab.runtime.context import Node
from mqlab.runtime.sim import SimDriver


class Peer(Node):
    def __init__(self, name: str, address: str) -> None:
        super().__init__(name, address)
        self.got: list[tuple[int, bytes]] = []
        self.closed: list[tuple[int, str]] = []
        self.accepted = []

    def listen(self, addr: str) -> None:
        def accept(ch):
            self.accepted.append((self.ctx.now_ms, ch))
            ch.on_bytes = self.on_bytes
            ch.on_close = self.on_close

        self.ctx.listen_stream(addr, accept)

    def open(self, addr: str):
        return self.ctx.open_stream(addr, self.on_bytes, self.on_close)

    def on_bytes(self, data: bytes) -> None:
        self.got.append((self.ctx.now_ms, data))

    def on_close(self, reason: str) -> None:
        self.closed.append((self.ctx.now_ms, reason))


def two(latency_ms: int = 1):
    d = SimDriver(seed=1, latency_ms=latency_ms)
    a, b = Peer("a", "127.0.0.1:1000"), Peer("b", "127.0.0.1:2000")
    d.add_node(a)
    d.add_node(b)
    b.listen("127.0.0.1:2001")
    return d, a, b


def test_bytes_arrive_in_order_after_the_accept():
    """The accept, then the bytes, each direction FIFO, each after the link's latency."""
    d, a, b = two(latency_ms=3)
    ch = a.open("127.0.0.1:2001")
    assert (ch.opened, ch.closed, ch.remote_address) == (True, False, "127.0.0.1:2001")
    a.ctx.send_bytes(ch, b"one")
    d.set_link("a", "b", latency_ms=1)  # faster now: still after what was sent before
    a.ctx.send_bytes(ch, b"two")
    d.run_until_idle()
    [(t_accept, server_end)] = b.accepted
    assert (t_accept, b.got) == (3, [(3, b"one"), (3, b"two")])
    b.ctx.send_bytes(server_end, b"back")
    d.run_until_idle()
    assert a.got == [(6, b"back")]


def test_close_reaches_the_peer_after_the_bytes_before_it():
    """A close travels behind the bytes already sent; the closer's own callback stays quiet."""
    d, a, b = two(latency_ms=2)
    ch = a.open("127.0.0.1:2001")
    a.ctx.send_bytes(ch, b"last")
    a.ctx.close_stream(ch)
    a.ctx.send_bytes(ch, b"never")
    d.run_until_idle()
    assert b.got == [(2, b"last")]
    assert b.closed == [(2, "closed by a")]
    assert a.closed == []


def test_cut_link_ends_both_ends_and_connects_fail():
    """A cut link closes the stream on both ends at once (bytes in flight are lost), and
    a connect across it fails: on_close with ``opened`` False."""
    d, a, b = two(latency_ms=5)
    ch = a.open("127.0.0.1:2001")
    d.run_until(5)
    a.ctx.send_bytes(ch, b"lost")
    d.set_link("b", "a", down=True)
    d.run_until_idle()
    assert (a.closed, b.closed, b.got) == ([(5, "link down")], [(5, "link down")], [])
    t = d.now
    ch2 = a.open("127.0.0.1:2001")
    d.run_until_idle()
    assert (ch2.opened, ch2.closed) == (False, True)
    assert a.closed[-1] == (t, "connect to 127.0.0.1:2001 failed")


def test_silent_cut_holds_bytes_and_a_close_until_tcp_retransmits_them():
    """LinkConfig.silent: a cut no reset crosses. The stream stays open on both ends; what
    either end sends across it waits in its kernel, and a close queues behind it. The heal
    of a -> b at 1000 delivers a's "held" and its close together at TCP's first
    retransmission after it (sent at 5: 205, 405, 805, 1605) plus the 5 ms latency. b's
    "held too" is retransmitted after b -> a heals at 1610 (at 3205), to an end already
    closed, and is dropped. Bytes sent before
    the cut still arrive."""
    d, a, b = two(latency_ms=5)
    ch = a.open("127.0.0.1:2001")
    d.run_until(5)
    [(_, server_end)] = b.accepted
    a.ctx.send_bytes(ch, b"in flight")
    for src, dst in (("a", "b"), ("b", "a")):
        d.set_link(src, dst, down=True, silent=True)
    a.ctx.send_bytes(ch, b"held")
    b.ctx.send_bytes(server_end, b"held too")
    d.run_until(100)
    assert (a.got, b.got, a.closed, b.closed) == ([], [(10, b"in flight")], [], [])
    assert (ch.closed, server_end.closed) == (False, False)
    a.ctx.close_stream(ch)
    d.run_until(1000)
    assert b.closed == []  # the close waits for the link
    d.set_link("a", "b", down=False, silent=False)
    d.run_until_idle()
    assert (b.got[1:], b.closed) == ([(1610, b"held")], [(1610, "closed by a")])
    d.set_link("b", "a", down=False, silent=False)
    d.run_until_idle()
    assert a.got == [] and d._stream_by_channel == {}
    rows = [(e.t_ms, e.step, e.fields.get("to"), e.fields.get("at")) for e in d.recorder.events
            if e.component == "SimNetwork" and e.step in ("hold", "retransmit")]  # fmt: skip
    assert rows == [
        (5, "hold", "b", None), (5, "hold", "a", None),
        (1000, "retransmit", "b", 1605), (1610, "retransmit", "a", 3205),
    ]  # fmt: skip


def test_killed_node_closes_its_streams_and_listeners():
    """A killed node's peer sees the end one latency later; its listen address is free."""
    d, a, b = two(latency_ms=2)
    a.open("127.0.0.1:2001")
    d.run_until(10)
    d.stop_node("b", graceful=False)
    d.run_until_idle()
    assert a.closed == [(12, "b stopped")]
    assert "127.0.0.1:2001" not in d.stream_listeners
    a.open("127.0.0.1:2001")
    d.run_until_idle()
    assert a.closed[-1] == (12, "connect to 127.0.0.1:2001 failed")


def test_listen_twice_is_refused():
    """Two running nodes cannot listen on one address."""
    d, a, b = two()
    with pytest.raises(ValueError, match="already listened on by 'b'"):
        a.listen("127.0.0.1:2001")


class LastFirst:
    """An explorer's chooser (``SimDriver.set_chooser``): runs the last candidate, gives each
    stream chunk the latency queued in ``lat``, and notes what it was offered."""

    def __init__(self, lat: list[int]) -> None:
        self.lat = lat
        self.offered: list[list[str]] = []
        self.asked: list[tuple] = []

    def choose_event(self, sched, cands):
        self.offered.append([f"{c.label} @{c.due}" for c in cands])
        return cands[-1]

    def choose_latency(self, sender, receiver, cmd, default):
        self.asked.append((sender, receiver, cmd, default))
        return self.lat.pop(0)


def test_a_chooser_schedules_stream_deliveries_within_the_fifo():
    """Under the explorer a stream's deliveries are their own FIFO group (not the receiving
    node's): the accept is offered beside b's own timer due at the same ms, the chunk
    behind it is not; each chunk's latency is a choice, and a slow chunk holds back the
    chunks written after it (TCP keeps the order)."""
    d, a, b = two(latency_ms=1)
    ran: list[tuple[int, str]] = []
    ch = a.open("127.0.0.1:2001")  # the accept is due at 1
    b.ctx.set_timer("tick", 1, lambda: ran.append((b.ctx.now_ms, "tick")))
    pick = LastFirst([4, 1])
    d.set_chooser(pick)
    a.ctx.send_bytes(ch, b"one")  # latency 4: due at 4
    a.ctx.send_bytes(ch, b"two")  # latency 1, but behind "one": due at 4 too
    d.run_until_idle()
    assert pick.asked == [("a", "b", None, 1), ("a", "b", None, 1)]
    assert pick.offered[0] == ["stream b accept a->b @1", "tick b @1"]
    assert ran == [(1, "tick")] and b.accepted[0][0] == 1  # the tick ran first, then the accept
    assert ["stream b bytes a->b @4"] in pick.offered  # "two" is never offered beside "one"
    assert all(len([x for x in o if "bytes a->b" in x]) <= 1 for o in pick.offered)
    assert b.got == [(4, b"one"), (4, b"two")]
