"""The master's end of one slave's HA connection: ``HAConnection``.

Mirrors ``HAConnection`` with its ``ReadSocketService`` and ``WriteSocketService`` (store,
RocketMQ 4.9.3); mechanisms.md "HA replication" steps 4–8 and 11.

The wire, in both directions a plain TCP stream without remoting frames:

- slave → master: an 8-byte big-endian long, the slave's max commit-log offset
  (``REPORT_SIZE``). The read service keeps only the last whole report of what it read.
  The first report is the slave's *request offset*; every report is its *ack offset*.
  The master believes them: nothing checks that the slave has the bytes
  (apache/rocketmq#3015), except that a report after the first may not pass the
  master's own max offset (then the connection closes).
- master → slave: a 12-byte header (``HEADER_SIZE``: 8-byte physical offset, 4-byte
  body size), then the body: at most ``haTransferBatchSize`` bytes of the commit log
  from that offset, never past the end of one file. A header with size 0 is the
  heartbeat, sent when more than ``haSendHeartbeatInterval`` passed since the last
  write.

Java's two threads become two timers of the node. ``WriteSocketService`` loops: before
the first report it sleeps 10 ms at a time; then it sends what the commit log has, and
with nothing to send it waits on the service's ``WaitNotifyObject`` for 100 ms, woken
early by ``wakeupAll`` (a SYNC_MASTER put). The timer fires at those same moments: 10 ms
ticks from the connection's start, then 100 ms ticks from the last pass, but only when a
pass would do something (new data, a heartbeat due), so an idle connection costs one
event per heartbeat. ``ReadSocketService`` runs on each arrival of bytes; its
housekeeping (no read for more than ``haHousekeepingInterval``) is a timer re-armed by
each read. Writes never block here (the driver buffers them), so Java's
``lastWriteOver`` is always true.

What it must not know: the put path. It reads the commit log through the store
(``get_commit_log_data``, ``get_max_phy_offset``) and tells the service what the slave
acknowledged (``notify_transfer_some``).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mqlab.runtime.context import StreamChannel
    from mqlab.store.ha.ha_service import HAService

__all__ = ["HAConnection", "HEADER_SIZE", "REPORT_SIZE"]

#: WriteSocketService.headerSize: 8-byte physical offset + 4-byte body size
HEADER_SIZE = 8 + 4
#: HAClient.reportOffset: one 8-byte long
REPORT_SIZE = 8
_HEADER = struct.Struct(">qi")
_LONG = struct.Struct(">q")

C_READ = "HAConnection.ReadSocketService"
C_WRITE = "HAConnection.WriteSocketService"
#: Thread.sleep(10) while the slave has not reported
REQUEST_POLL_MS = 10
#: WaitNotifyObject.allWaitForRunning(100) when there is nothing to send
IDLE_WAIT_MS = 100


def _ceil_ticks(since: int, start: int, period: int, *, at_least_one: bool) -> int:
    """The first tick ``start + k * period`` at or after ``since`` (k >= 1 if asked)."""
    k = max(0, -(-(since - start) // period))
    if at_least_one:
        k = max(k, 1)
    return start + k * period


class HAConnection:
    """Mirrors ``HAConnection`` (store, RocketMQ 4.9.3). See the module essay.

    Attributes:
        slave_request_offset: the slave's first report (-1 until it comes).
        slave_ack_offset: the slave's last report (-1 until the first).
        next_transfer_from_where: where the next push starts (-1 until the first).
    """

    def __init__(self, ha_service: HAService, channel: StreamChannel) -> None:
        self.ha_service = ha_service
        self.channel = channel
        self.client_addr = channel.remote_address
        self.id = channel.id
        self.slave_request_offset = -1
        self.slave_ack_offset = -1
        self.closed = False
        now = ha_service.ctx.now_ms
        # ReadSocketService
        self._read_buf = bytearray()
        self.last_read_timestamp = now
        # WriteSocketService
        self.next_transfer_from_where = -1
        self.last_write_timestamp = now
        self._started_ms = now
        self._idle_since: int | None = None
        self._write_due: int | None = None
        ha_service.connection_count += 1  # the constructor: connectionCount.incrementAndGet()

    @property
    def _key(self) -> str:
        return f"{self.client_addr}#{self.id}"

    def start(self) -> None:
        """Start both services. Mirrors ``HAConnection#start``."""
        self.channel.on_bytes = self.on_bytes
        self.channel.on_close = self._on_stream_closed
        self._arm_housekeeping()

    # ==================================================================================
    # ReadSocketService
    # ==================================================================================
    def on_bytes(self, data: bytes) -> None:
        """Bytes from the slave. Mirrors ``ReadSocketService#processReadEvent``; step 4."""
        if self.closed:
            return
        ha = self.ha_service
        store = ha.store
        self._read_buf += data
        self.last_read_timestamp = ha.ctx.now_ms
        self._arm_housekeeping()
        n = len(self._read_buf)
        if n < REPORT_SIZE:
            return
        pos = n - n % REPORT_SIZE
        (read_offset,) = _LONG.unpack_from(self._read_buf, pos - REPORT_SIZE)
        del self._read_buf[:pos]  # processPosition = pos
        # step 4: the report is the slave's ack; the first is also where it wants to start
        self.slave_ack_offset = read_offset
        first = self.slave_request_offset < 0
        if first:
            self.slave_request_offset = read_offset
        elif self.slave_ack_offset > store.get_max_phy_offset():
            self._trace(C_READ, "4", ack_offset=read_offset, first=False,
                        master_max_offset=store.get_max_phy_offset(),
                        text=f"slave reports {read_offset}, past the master's max offset "
                             f"{store.get_max_phy_offset()}: close")  # fmt: skip
            self.close("slave ack offset > master max offset")
            return
        self._trace(C_READ, "4", ack_offset=read_offset, first=first,
                    text=f"slave {'requests from' if first else 'has'} {read_offset}")  # fmt: skip
        ha.notify_transfer_some(self.slave_ack_offset)  # step 5
        if first:  # the write service's 10 ms sleep ends at its next tick
            now = ha.ctx.now_ms
            self._arm_write(_ceil_ticks(now, self._started_ms, REQUEST_POLL_MS, at_least_one=False))

    def _arm_housekeeping(self) -> None:
        ha = self.ha_service
        limit = ha.config.ha_housekeeping_interval
        ha.ctx.set_timer(
            "HAConnection.ReadSocketService.housekeeping",
            self.last_read_timestamp + limit + 1 - ha.ctx.now_ms,
            self._housekeeping, key=self._key, daemon=True,
        )  # fmt: skip

    def _housekeeping(self) -> None:
        """No read for more than ``haHousekeepingInterval``: close. Step 11."""
        ha = self.ha_service
        interval = ha.ctx.now_ms - self.last_read_timestamp
        if interval > ha.config.ha_housekeeping_interval:
            self.close(f"housekeeping: no report for {interval} ms")
        else:
            self._arm_housekeeping()

    # ==================================================================================
    # WriteSocketService
    # ==================================================================================
    def wakeup(self) -> None:
        """``WaitNotifyObject#wakeupAll`` reached this connection's write service."""
        if self.closed or self.slave_request_offset < 0:
            return
        self._arm_write(self.ha_service.ctx.now_ms)

    def notify_appended(self) -> None:
        """The commit log grew: the write service sees it at its next 100 ms tick."""
        if self.closed or self._idle_since is None:
            return
        now = self.ha_service.ctx.now_ms
        self._arm_write(_ceil_ticks(now, self._idle_since, IDLE_WAIT_MS, at_least_one=True))

    def _arm_write(self, due: int) -> None:
        if self._write_due is not None and self._write_due <= due:
            return
        ctx = self.ha_service.ctx
        self._write_due = due
        # max(0, …): on the net driver the clock is read again here and may have moved
        # past ``due`` (a wakeup computes due = now, then a millisecond ticks).
        ctx.set_timer("HAConnection.WriteSocketService.run", max(0, due - ctx.now_ms),
                      self.run_write, key=self._key, daemon=True)  # fmt: skip

    def run_write(self) -> None:
        """One pass of ``WriteSocketService#run``: steps 6, 7 and 8."""
        self._write_due = None
        if self.closed or self.slave_request_offset < 0:
            return
        ha = self.ha_service
        store = ha.store
        cfg = ha.config
        now = ha.ctx.now_ms
        if self.next_transfer_from_where == -1:
            # step 6: where the first push starts
            if self.slave_request_offset == 0:
                master_offset = store.commit_log.get_max_offset()
                master_offset -= master_offset % cfg.mapped_file_size_commit_log
                self.next_transfer_from_where = max(master_offset, 0)
            else:
                self.next_transfer_from_where = self.slave_request_offset
            self._trace(C_WRITE, "6", next_transfer_from_where=self.next_transfer_from_where,
                        slave_request_offset=self.slave_request_offset,
                        text=f"slave requests {self.slave_request_offset}: transfer from "
                             f"{self.next_transfer_from_where}")  # fmt: skip
        # step 7: the heartbeat, a header with size 0
        if now - self.last_write_timestamp > cfg.ha_send_heartbeat_interval:
            self._write(_HEADER.pack(self.next_transfer_from_where, 0))
            self._trace(C_WRITE, "7", offset=self.next_transfer_from_where, size=0,
                        text=f"heartbeat: header ({self.next_transfer_from_where}, 0)")  # fmt: skip
        # step 8: what the commit log has from nextTransferFromWhere, a batch at a time
        while not self.closed:
            data = store.get_commit_log_data(self.next_transfer_from_where)
            if data is None:
                break
            mf, start, end = data
            size = min(end - start, cfg.ha_transfer_batch_size)
            this_offset = self.next_transfer_from_where
            self.next_transfer_from_where += size
            self._write(_HEADER.pack(this_offset, size) + bytes(mf.mm[start : start + size]))
            self._trace(C_WRITE, "8", offset=this_offset, size=size,
                        text=f"push {size} B from {this_offset}")  # fmt: skip
        if self.closed:
            return
        # allWaitForRunning(100): the next pass that has work is a heartbeat, unless data comes
        self._idle_since = now
        hb_due = now + IDLE_WAIT_MS
        while hb_due - self.last_write_timestamp <= cfg.ha_send_heartbeat_interval:
            hb_due += IDLE_WAIT_MS
        self._arm_write(hb_due)

    def _write(self, data: bytes) -> None:
        ha = self.ha_service
        ha.ctx.send_bytes(self.channel, data)
        self.last_write_timestamp = ha.ctx.now_ms

    # ==================================================================================
    # the end
    # ==================================================================================
    def _on_stream_closed(self, reason: str) -> None:
        """The slave closed, or the link broke: the read fails. Step 11."""
        self.close(reason, stream_closed=True)

    def close(self, reason: str, *, stream_closed: bool = False) -> None:
        """Both services end: the connection leaves the service, the socket closes.

        Mirrors the end of ``ReadSocketService#run`` / ``WriteSocketService#run`` and
        ``HAConnection#shutdown``; step 11.
        """
        if self.closed:
            return
        # step 11: the connection leaves the service; connectionCount - 1
        self.closed = True
        ha = self.ha_service
        ctx = ha.ctx
        ctx.cancel_timer("HAConnection.WriteSocketService.run", self._key)
        ctx.cancel_timer("HAConnection.ReadSocketService.housekeeping", self._key)
        ha.remove_connection(self)
        ha.connection_count -= 1
        if not stream_closed:
            ctx.close_stream(self.channel)
        self._trace(C_READ, "11", reason=reason, connection_count=ha.connection_count,
                    text=f"connection from {self.client_addr} closed: {reason}")  # fmt: skip

    def _trace(self, component: str, step: str, **fields) -> None:
        tracer = self.ha_service.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(component, step, slave=self.client_addr, **fields)

    def __repr__(self) -> str:
        return (
            f"HAConnection({self.client_addr}, request={self.slave_request_offset}, "
            f"ack={self.slave_ack_offset}, next={self.next_transfer_from_where})"
        )
