"""The slave's end of HA replication: ``HAClient``.

Mirrors ``HAService.HAClient`` (store, RocketMQ 4.9.3); mechanisms.md "HA replication"
steps 1, 3, 9, 10 and 11.

What it owns: the master's HA address (``update_master_address``, from the slave's
registration: ``BrokerController`` → ``DefaultMessageStore#updateHaMasterAddress``), the
stream to it, the bytes read but not yet dispatched, ``currentReportedOffset`` and
``lastWriteTimestamp``.

Java's thread loops: with no connection, it connects (``connectMaster``) or waits 5 s;
connected, it reports its max offset if more than ``haSendHeartbeatInterval`` passed since
its last write, waits at most 1000 ms for bytes (``selector.select(1000)``), dispatches
what came (``dispatchReadRequest``: append each whole block at the offset its header
names, then report the new max offset), and closes the connection when it has not
written for more than ``haHousekeepingInterval``. A closed connection is reconnected on
the next turn of the loop; a failed connect waits 5 s. Here each turn of the loop is one
event of the node's ``"HAClient.run"`` timer, or the arrival of bytes: the same moments.
So a slave that connects at ``c`` sends its first report at ``c + 6000`` (the turns at
+1000 … +5000 find 5000 ms not yet *more* than the interval), and the master pushes
nothing before it. 4.9.3's thread also turns every 5 s while it has no master address;
here the timer is armed only once an address is set (from the first 5 s tick after
it), which changes no outcome and keeps idle brokers free of events.

What it must not know: the master's state. It sees only the 12-byte headers and blocks,
checks each header's offset against its own max offset (a mismatch closes the
connection), and appends through the store (``append_to_commit_log``), whose reput then
builds the consume queues and the index.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from mqlab.store.ha.ha_connection import HEADER_SIZE

if TYPE_CHECKING:
    from mqlab.runtime.context import StreamChannel
    from mqlab.store.ha.ha_service import HAService

__all__ = ["HAClient"]

C = "HAService.HAClient"
_HEADER = struct.Struct(">qi")
_LONG = struct.Struct(">q")
#: waitForRunning(1000 * 5) with no connection
RECONNECT_WAIT_MS = 5000
#: selector.select(1000)
SELECT_MS = 1000


class HAClient:
    """Mirrors ``HAService.HAClient`` (store, RocketMQ 4.9.3). See the module essay."""

    def __init__(self, ha_service: HAService) -> None:
        self.ha_service = ha_service
        self.master_address: str | None = None
        self.channel: StreamChannel | None = None
        self.current_reported_offset = 0
        self.last_write_timestamp = 0
        self._buf = bytearray()
        self._dispatch_position = 0
        self._started_ms: int | None = None
        self.stopped = False

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """The thread starts (``HAService#start``); it turns once an address is set."""
        self._started_ms = self.ha_service.ctx.now_ms
        if self.master_address is not None:
            self._arm(0)

    def shutdown(self) -> None:
        """Mirrors ``HAClient#shutdown``: stop, close the connection."""
        self.stopped = True
        ctx = self.ha_service.ctx
        if ctx is not None:
            ctx.cancel_timer("HAClient.run")
        self.close_master("shutdown")

    def update_master_address(self, new_addr: str | None) -> None:
        """Mirrors ``HAClient#updateMasterAddress``: keep the new address if it differs."""
        current = self.master_address
        if current is not None and current == new_addr:
            return
        self.master_address = new_addr
        ha = self.ha_service
        tracer = ha.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C, "1", old=current, new=new_addr,
                        text=f"master HA address {current} → {new_addr}")  # fmt: skip
        if ha.ctx is None or self._started_ms is None or self.stopped or new_addr is None:
            return
        if self.channel is None and not ha.ctx.has_timer("HAClient.run"):
            # the thread, in waitForRunning(5000), turns at its next 5 s tick
            now = ha.ctx.now_ms
            k = -(-(now - self._started_ms) // RECONNECT_WAIT_MS)
            self._arm(self._started_ms + k * RECONNECT_WAIT_MS - now)

    def _arm(self, delay_ms: int) -> None:
        self.ha_service.ctx.set_timer("HAClient.run", delay_ms, self.run, daemon=True)

    # -- the loop -----------------------------------------------------------------------------------
    def run(self) -> None:
        """The top of ``HAClient#run``'s loop, up to ``selector.select(1000)``."""
        if self.stopped:
            return
        if not self.connect_master():
            self._arm(RECONNECT_WAIT_MS)
            return
        if self.is_time_to_report_offset():  # step 3: the heartbeat report
            if not self.report_slave_max_offset(self.current_reported_offset, heartbeat=True):
                self.close_master("report failed")
        if self.channel is None:  # Java: select on a closed channel throws → wait 5 s
            self._arm(RECONNECT_WAIT_MS)
            return
        self._arm(SELECT_MS)

    def _after_select(self, data: bytes, eof: str | None = None) -> None:
        """The rest of a loop turn after ``select``: read, report, housekeeping."""
        ok = eof is None and self.process_read_event(data)
        if not ok:
            self.close_master(eof or "dispatch failed")
        if self.channel is not None and not self.report_slave_max_offset_plus():
            self.run()
            return
        ha = self.ha_service
        interval = ha.ctx.now_ms - self.last_write_timestamp
        if self.channel is not None and interval > ha.config.ha_housekeeping_interval:
            self.close_master(f"housekeeping: nothing written for {interval} ms")
        self.run()

    def connect_master(self) -> bool:
        """Mirrors ``HAClient#connectMaster``; step 1."""
        if self.channel is None:
            # step 1: connect to the master's HA address (none yet: nothing to do)
            addr = self.master_address
            ha = self.ha_service
            ctx = ha.ctx
            if addr is not None:
                cell: list = []

                def on_bytes(data: bytes) -> None:
                    if self.channel is not None and cell and self.channel is cell[0]:
                        ctx.cancel_timer("HAClient.run")
                        self._after_select(data)

                def on_close(reason: str) -> None:
                    if self.channel is not None and cell and self.channel is cell[0]:
                        ctx.cancel_timer("HAClient.run")
                        if not cell[0].opened:  # the connect failed (a driver that connects
                            self.channel = None  # in the background): wait 5 s, as Java does
                            self._trace_connect_failed(addr, reason)
                            self._arm(RECONNECT_WAIT_MS)
                            return
                        self._after_select(b"", eof=reason)

                ch = ctx.open_stream(addr, on_bytes, on_close)
                cell.append(ch)
                if not ch.closed:
                    self.channel = ch
            self.current_reported_offset = ha.store.get_max_phy_offset()
            self.last_write_timestamp = ctx.now_ms
            tracer = ha.tracer
            if tracer is not None and tracer.enabled and addr is not None:
                tracer.emit(C, "1", master=addr, connected=self.channel is not None,
                            max_offset=self.current_reported_offset,
                            text=(f"connected to {addr}, at offset {self.current_reported_offset}"
                                  if self.channel is not None else f"connect to {addr} failed"))  # fmt: skip
        return self.channel is not None

    def _trace_connect_failed(self, addr: str, reason: str) -> None:
        tracer = self.ha_service.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C, "1", master=addr, connected=False, reason=reason,
                        text=f"connect to {addr} failed")  # fmt: skip

    def close_master(self, reason: str) -> None:
        """Mirrors ``HAClient#closeMaster``; step 11."""
        if self.channel is None:
            return
        ha = self.ha_service
        # step 11: close; the next turn of the loop reconnects
        ch, self.channel = self.channel, None
        if not ch.closed:
            ha.ctx.close_stream(ch)
        self.last_write_timestamp = 0
        self._dispatch_position = 0
        self._buf = bytearray()
        tracer = ha.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C, "11", reason=reason, text=f"connection to the master closed: {reason}")

    def is_time_to_report_offset(self) -> bool:
        """Mirrors ``HAClient#isTimeToReportOffset``."""
        ha = self.ha_service
        return ha.ctx.now_ms - self.last_write_timestamp > ha.config.ha_send_heartbeat_interval

    def report_slave_max_offset(self, max_offset: int, *, heartbeat: bool = False) -> bool:
        """Write the 8-byte report. Mirrors ``HAClient#reportSlaveMaxOffset``; steps 3 and 10."""
        ha = self.ha_service
        if self.channel is None or self.channel.closed:
            return False
        ha.ctx.send_bytes(self.channel, _LONG.pack(max_offset))
        self.last_write_timestamp = ha.ctx.now_ms
        tracer = ha.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C, "3" if heartbeat else "10", offset=max_offset,
                        text=f"report max offset {max_offset}")  # fmt: skip
        return True

    def report_slave_max_offset_plus(self) -> bool:
        """Report the max offset if it grew. Mirrors ``HAClient#reportSlaveMaxOffsetPlus``; step 10."""
        current = self.ha_service.store.get_max_phy_offset()
        # step 10: report after an append, if the max offset grew
        if current > self.current_reported_offset:
            self.current_reported_offset = current
            if not self.report_slave_max_offset(current):
                self.close_master("report failed")
                return False
        return True

    def process_read_event(self, data: bytes) -> bool:
        """Mirrors ``HAClient#processReadEvent`` → ``#dispatchReadRequest``; step 9."""
        self._buf += data
        ha = self.ha_service
        store = ha.store
        while True:
            diff = len(self._buf) - self._dispatch_position
            if diff >= HEADER_SIZE:
                master_phy_offset, body_size = _HEADER.unpack_from(
                    self._buf, self._dispatch_position
                )
                slave_phy_offset = store.get_max_phy_offset()
                # step 9: the block must start at the slave's max offset (unless the slave is empty)
                if slave_phy_offset != 0 and slave_phy_offset != master_phy_offset:
                    tracer = ha.tracer
                    if tracer is not None and tracer.enabled:
                        tracer.emit(C, "9", master_offset=master_phy_offset,
                                    slave_offset=slave_phy_offset, ok=False,
                                    text=f"master pushed {master_phy_offset}, slave max is "
                                         f"{slave_phy_offset}: close")  # fmt: skip
                    return False
                if diff >= HEADER_SIZE + body_size:
                    start = self._dispatch_position + HEADER_SIZE
                    body = bytes(self._buf[start : start + body_size])
                    appended = store.append_to_commit_log(master_phy_offset, body)
                    tracer = ha.tracer
                    if tracer is not None and tracer.enabled and body_size:
                        tracer.emit(C, "9", master_offset=master_phy_offset, size=body_size,
                                    ok=appended, text=f"append {body_size} B at {master_phy_offset}")  # fmt: skip
                    self._dispatch_position += HEADER_SIZE + body_size
                    if not self.report_slave_max_offset_plus():
                        return False
                    continue
            break
        del self._buf[: self._dispatch_position]
        self._dispatch_position = 0
        return True
