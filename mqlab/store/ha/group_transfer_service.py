"""SYNC_MASTER's wait for a slave: ``GroupTransferService`` and ``GroupCommitRequest``.

Mirrors ``HAService.GroupTransferService`` and ``CommitLog.GroupCommitRequest`` (store,
RocketMQ 4.9.3); mechanisms.md "HA replication" step 13.

What it owns: the requests of SYNC_MASTER puts that wait for a slave, in put order
(``requestsWrite``, swapped into ``requestsRead`` when the service turns to them). Java's
thread takes the requests one by one: for each, it waits on ``notifyTransferObject`` at
most 1000 ms at a time, re-checking after each wait (or each ``notifyTransferSome``),
until ``push2SlaveMaxOffset >= nextOffset`` (PUT_OK) or the deadline has passed
(FLUSH_SLAVE_TIMEOUT). Here the thread is one timer of the node, keyed
``"GroupTransferService.run"``: a wait is the timer armed 1000 ms on, a notify fires it
now. So a request put at ``t`` with ``slaveTimeout`` 3000 and no slave progress times out
at ``t + 3000`` exactly (checks at +1000, +2000, +3000), and the request behind it is
only looked at then (head of line, as in Java).

What it must not know: sockets. The read service tells it that the slave's offset moved
(``notify_transfer_some``); the commit log gives it requests (``put_request``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mqlab.common import mutants as _mutants
from mqlab.store.status import PutMessageStatus

if TYPE_CHECKING:
    from mqlab.store.ha.ha_service import HAService

__all__ = ["GroupCommitRequest", "GroupTransferService"]

C = "HAService.GroupTransferService"
#: notifyTransferObject.waitForRunning(1000) in doWaitTransfer
WAIT_MS = 1000


class GroupCommitRequest:
    """One put waiting for a slave. Mirrors ``CommitLog.GroupCommitRequest`` (4.9.3).

    ``next_offset``: the commit-log offset just past the message(s); ``dead_line_ms``:
    the put's time + ``slaveTimeout``. ``status`` is None until ``wakeup_customer``; the
    callbacks given to ``on_done`` run then (the future's ``thenApply``). ``wrote_offset``:
    where the message starts (-1: not known); only the planted bug
    ``slave_ack_at_message_start`` (``mqlab.common.mutants``) reads it.
    """

    __slots__ = ("next_offset", "dead_line_ms", "wrote_offset", "status", "_callbacks")

    def __init__(self, next_offset: int, dead_line_ms: int, wrote_offset: int = -1) -> None:
        self.next_offset = next_offset
        self.dead_line_ms = dead_line_ms
        self.wrote_offset = wrote_offset
        self.status: PutMessageStatus | None = None
        self._callbacks: list[Callable[[PutMessageStatus], None]] = []

    @property
    def done(self) -> bool:
        return self.status is not None

    def on_done(self, callback: Callable[[PutMessageStatus], None]) -> None:
        """Run ``callback(status)`` when the request completes (now if it has)."""
        if self.status is not None:
            callback(self.status)
        else:
            self._callbacks.append(callback)

    def wakeup_customer(self, status: PutMessageStatus) -> None:
        """Complete the request. Mirrors ``GroupCommitRequest#wakeupCustomer``."""
        if self.status is not None:
            return
        self.status = status
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(status)

    def __repr__(self) -> str:
        status = None if self.status is None else self.status.name
        return f"GroupCommitRequest(next_offset={self.next_offset}, dead_line_ms={self.dead_line_ms}, status={status})"


class GroupTransferService:
    """Mirrors ``HAService.GroupTransferService`` (store, RocketMQ 4.9.3). See the module essay."""

    def __init__(self, ha_service: HAService) -> None:
        self.ha_service = ha_service
        self.requests_write: list[GroupCommitRequest] = []
        self.requests_read: list[GroupCommitRequest] = []

    # -- what the commit log and the read service call -------------------------------------------
    def put_request(self, request: GroupCommitRequest) -> None:
        """Queue a request and wake the service. Mirrors ``GroupTransferService#putRequest``."""
        self.requests_write.append(request)
        if not self.requests_read:  # the thread waits in waitForRunning(10): wakeup()
            self._arm(0)

    def notify_transfer_some(self) -> None:
        """The slave's offset moved: end the current wait now (``notifyTransferObject.wakeup``)."""
        if self.requests_read:
            self._arm(0)

    def pending(self) -> list[GroupCommitRequest]:
        """The requests not yet answered, in the order they will be looked at."""
        return self.requests_read + self.requests_write

    # -- the thread -------------------------------------------------------------------------------
    def _arm(self, delay_ms: int) -> None:
        ctx = self.ha_service.ctx
        if ctx is not None:
            ctx.set_timer("GroupTransferService.run", delay_ms, self.run, daemon=False)

    def run(self) -> None:
        """One wake of the thread: ``onWaitEnd`` (swap) and ``doWaitTransfer``.

        Mirrors ``GroupTransferService#doWaitTransfer`` (4.9.3); step 13.
        """
        ha = self.ha_service
        now = ha.ctx.now_ms
        if not self.requests_read:  # waitForRunning(10) ended: onWaitEnd → swapRequests
            self.requests_read, self.requests_write = self.requests_write, []
        while self.requests_read:
            req = self.requests_read[0]
            # step 13: push2SlaveMaxOffset >= nextOffset → PUT_OK; else wait until the deadline
            transfer_ok = ha.push2_slave_max_offset >= req.next_offset
            if "slave_ack_at_message_start" in _mutants.ACTIVE:  # mqlab.common.mutants
                transfer_ok = ha.push2_slave_max_offset >= req.wrote_offset
            if not transfer_ok and req.dead_line_ms - now > 0:
                self._arm(WAIT_MS)  # notifyTransferObject.waitForRunning(1000)
                return
            self.requests_read.pop(0)
            status = (
                PutMessageStatus.PUT_OK if transfer_ok else PutMessageStatus.FLUSH_SLAVE_TIMEOUT
            )
            tracer = ha.tracer
            if tracer is not None and tracer.enabled:
                tracer.emit(
                    C, "13", status=status.name, next_offset=req.next_offset,
                    push2_slave_max_offset=ha.push2_slave_max_offset,
                    text=(
                        f"slave has {ha.push2_slave_max_offset} ≥ {req.next_offset}: PUT_OK"
                        if transfer_ok
                        else f"slave has {ha.push2_slave_max_offset} < {req.next_offset} at the deadline: FLUSH_SLAVE_TIMEOUT"
                    ),
                )  # fmt: skip
            req.wakeup_customer(status)
            if not self.requests_read and self.requests_write:
                # back in waitForRunning(10), already notified by putRequest: swap at once
                self.requests_read, self.requests_write = self.requests_write, []
