"""The master's side of the HA stream, byte by byte (mechanisms.md "HA replication" steps 2–8, 11).

A fake slave (tests/store/ha/ha_pair.py) writes 8-byte reports and records what the
master's ``WriteSocketService`` pushes. Each message here is 127 bytes in the commit log.
Mirrors HAConnection.ReadSocketService / WriteSocketService (store, RocketMQ 4.9.3).
"""

from __future__ import annotations

import struct

from mqlab.remoting.codes import ResponseCode

MSG = 127


def sends(p, n, **kw):
    calls = [p.send(**kw) for _ in range(n)]
    p.d.run_until_idle()
    return calls


def test_first_report_zero_starts_at_the_last_file(pair):
    """slaveRequestOffset 0: the push starts at the start of the master's last file
    (maxOffset − maxOffset % mappedFileSizeCommitLog), a 12-byte header then the bytes."""
    p = pair(role="ASYNC_MASTER", slave=False, mapped_file_size_commit_log=1024)
    sends(p, 10)  # 8 entries fill file 0 (1016 B + blank), 2 go to file 1024
    assert p.ms.commit_log.get_max_offset() == 1024 + 2 * MSG == 1278
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    conn = p.ha.connection_list[0]
    assert (conn.slave_request_offset, conn.slave_ack_offset) == (0, 0)
    assert conn.next_transfer_from_where == 1278
    master_bytes = bytes(p.ms.commit_log.get_data(1024)[0].mm[0:254])
    assert fake.stream() == struct.pack(">qi", 1024, 254) + master_bytes
    assert fake.stream()[:12] == bytes.fromhex("0000000000000400000000fe")


def test_first_push_time_and_heartbeat_every_5100_ms(pair):
    """The push goes out at the write service's first 10 ms tick after the report; idle,
    a heartbeat header (offset, 0) follows when more than 5000 ms passed since the last
    write, at the 100 ms poll: 5100 ms later, and again 5100 ms after that."""
    p = pair(role="ASYNC_MASTER", slave=False)
    sends(p, 1)
    t0 = p.d.now
    fake = p.fake_slave()
    fake.open()  # accepted at t0 + 1 (1 ms link)
    p.d.run_until(t0 + 24)
    fake.report(0)  # arrives at t0 + 25; ticks from t0 + 1: t0 + 31
    p.d.run_until(t0 + 20_000)
    assert [(t - t0, d) for t, d in fake.received] == [
        (32, struct.pack(">qi", 0, MSG) + bytes(p.ms.commit_log.get_data(0)[0].mm[0:MSG])),
        (31 + 5100 + 1, struct.pack(">qi", MSG, 0)),
        (31 + 10_200 + 1, struct.pack(">qi", MSG, 0)),
        (31 + 15_300 + 1, struct.pack(">qi", MSG, 0)),
    ]


def test_silent_connection_closed_after_housekeeping_interval(pair):
    """A connection that sends nothing for more than haHousekeepingInterval (20000 ms) is
    closed, and connectionCount goes back to 0."""
    p = pair(role="ASYNC_MASTER", slave=False)
    fake = p.fake_slave()
    t0 = p.d.now
    fake.open()
    p.d.run_until(t0 + 1)
    assert p.ha.connection_count == 1
    p.d.run_until(t0 + 1 + 20_000)
    assert p.ha.connection_count == 1
    p.d.run_until(t0 + 1 + 20_001)
    assert (p.ha.connection_count, p.ha.connection_list) == (0, [])
    p.d.run_until_idle()
    assert fake.closed_at == t0 + 1 + 20_001 + 1


def test_batches_of_ha_transfer_batch_size(pair):
    """More than haTransferBatchSize bytes waiting: one header + batch after another."""
    p = pair(role="ASYNC_MASTER", slave=False, ha_transfer_batch_size=300)
    sends(p, 5)  # 635 bytes
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    data = fake.stream()
    headers = []
    pos = 0
    while pos < len(data):
        off, size = struct.unpack_from(">qi", data, pos)
        headers.append((off, size))
        pos += 12 + size
    assert headers == [(0, 300), (300, 300), (600, 35)]


def test_report_ahead_of_master_closes_but_first_report_is_believed(pair):
    """The first report is taken as it is (slaveRequestOffset); a later report past the
    master's max offset closes the connection."""
    p = pair(role="ASYNC_MASTER", slave=False)
    sends(p, 1)
    fake = p.fake_slave()
    fake.open()
    fake.report(5000)
    p.d.run_until(p.d.now + 5)
    conn = p.ha.connection_list[0]
    assert (conn.slave_request_offset, p.ha.push2_slave_max_offset) == (5000, 5000)
    fake.report(5000)
    p.d.run_until(p.d.now + 5)
    assert (p.ha.connection_count, conn.closed) == (0, True)
    assert p.ha.push2_slave_max_offset == 5000  # never goes down


def test_reports_coalesce_to_the_last_whole_one(pair):
    """Reports arriving together: only the last whole 8 bytes count; a partial report waits."""
    p = pair(role="ASYNC_MASTER", slave=False)
    sends(p, 2)
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    fake.ctx.send_bytes(fake.channel, struct.pack(">qq", 100, 127) + b"\x00\x00\x00")
    p.d.run_until(p.d.now + 5)
    conn = p.ha.connection_list[0]
    assert (conn.slave_ack_offset, p.ha.push2_slave_max_offset) == (127, 127)
    fake.ctx.send_bytes(fake.channel, struct.pack(">q", 254)[3:])
    p.d.run_until(p.d.now + 5)
    assert (conn.slave_ack_offset, p.ha.push2_slave_max_offset) == (254, 254)


def test_send_codes_are_unchanged_for_async_master(pair):
    """ASYNC_MASTER answers SEND_OK at once, slave or not."""
    p = pair(role="ASYNC_MASTER", slave=False)
    [c] = sends(p, 1)
    assert (c.code, c.done_at - c.sent_at) == (ResponseCode.SUCCESS, 2)


class _TickingClock:
    """A node context whose clock moves 1 ms at every read, as a wall clock may between two
    reads on the net driver; its timers refuse a negative delay, as the net driver's do."""

    def __init__(self, ctx):
        self._ctx = ctx
        self._reads = 0

    @property
    def now_ms(self):
        self._reads += 1
        return self._ctx.now_ms + self._reads

    def set_timer(self, name, delay_ms, callback, **kw):
        assert delay_ms >= 0, f"{name}: delay_ms {delay_ms}"
        self._ctx.set_timer(name, delay_ms, callback, **kw)

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def test_a_wakeup_on_a_moving_clock_arms_a_timer_not_an_error(pair):
    """The CI failure of 2026-11-29 (tests/net/test_net_ha.py): a SYNC_MASTER put wakes the
    write service with due = now, the clock ticks before the timer is set, and the delay came
    out −1 ms, which the net driver refuses. The write service must run, not raise."""
    p = pair(role="ASYNC_MASTER", slave=False)
    fake = p.fake_slave()
    fake.open()
    fake.report(0)
    p.d.run_until(p.d.now + 5)
    real = p.ha.ctx
    p.ha.ctx = _TickingClock(real)
    try:
        p.ha.wakeup_all()
    finally:
        p.ha.ctx = real
    p.d.run_until(p.d.now + 5)
    sends(p, 1)
    p.d.run_until(p.d.now + 200)
    assert fake.stream()[:12] == struct.pack(">qi", 0, MSG)
