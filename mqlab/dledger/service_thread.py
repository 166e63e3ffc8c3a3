"""DLedger's service threads as timers of the node, and its futures.

Mirrors ``ShutdownAbleThread`` (``doWork`` in a loop, ``waitForRunning(ms)``, ``wakeup``),
``TimeoutFuture`` and ``AppendFuture`` (DLedger 0.2.3). A thread's wait is its timer
``(node, name, key)`` armed ``ms`` ahead; ``wakeup`` brings that timer to now, or arms it
now when the thread was parked without one. docs/design.md §6.8.

A future completes once (later completions are ignored, as ``CompletableFuture#complete``
returns false) and runs its callbacks in the order they were added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from mqlab.dledger.dledger_server import DLedgerServer

__all__ = ["BatchAppendFuture", "ServiceThread", "TimeoutFuture", "elapsed"]

T = TypeVar("T")


def elapsed(now_ms: int, start_ms: int) -> int:
    """``DLedgerUtils#elapsed``: ``now - start``. 0.2.3's clock is the epoch, so its ``-1``
    ("never") reads as 56 years ago; the simulation's clock starts at 0, so ``-1`` here is
    given as ``now + 2**62``: longer than any interval the code compares it with."""
    return now_ms + (1 << 62) if start_ms == -1 else now_ms - start_ms


class ServiceThread:
    """One ``ShutdownAbleThread``: subclasses implement ``do_work`` and call ``wait_for_running``."""

    def __init__(self, server: DLedgerServer, name: str, key: str | None = None) -> None:
        self.server = server
        self.name = name
        self.key = key

    def do_work(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def wait_for_running(self, ms: int) -> None:
        """Run ``do_work`` again in ``ms`` (or sooner, on ``wakeup``)."""
        self.server.ctx.set_timer(self.name, ms, self.do_work, key=self.key, daemon=True)

    def wakeup(self) -> None:
        """``ShutdownAbleThread#wakeup``: run ``do_work`` now."""
        ctx = self.server.ctx
        if not ctx.wakeup_timer(self.name, self.key):
            ctx.set_timer(self.name, 0, self.do_work, key=self.key, daemon=True)

    def park(self) -> None:
        """Wait for a ``wakeup`` only (no timer)."""
        self.server.ctx.cancel_timer(self.name, self.key)


class TimeoutFuture(Generic[T]):
    """Mirrors ``TimeoutFuture`` / ``AppendFuture``: a future with a creation time and a
    timeout (``isTimeOut``: ``now - createTimeMs >= timeOutMs``) and, for appends, ``pos``."""

    __slots__ = ("create_time_ms", "time_out_ms", "pos", "done", "value", "_callbacks")

    def __init__(self, now_ms: int, time_out_ms: int = 1000, pos: int = -1) -> None:
        self.create_time_ms = now_ms
        self.time_out_ms = time_out_ms
        self.pos = pos
        self.done = False
        self.value: T | None = None
        self._callbacks: list[Callable[[T], Any]] = []

    def is_time_out(self, now_ms: int) -> bool:
        return now_ms - self.create_time_ms >= self.time_out_ms

    def complete(self, value: T) -> bool:
        if self.done:
            return False
        self.done = True
        self.value = value
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(value)
        return True

    def when_complete(self, cb: Callable[[T], Any]) -> None:
        if self.done:
            cb(self.value)  # type: ignore[arg-type]
        else:
            self._callbacks.append(cb)

    @classmethod
    def completed(cls, now_ms: int, value: T, pos: int = -1) -> TimeoutFuture[T]:
        """``AppendFuture#newCompletedFuture``."""
        f: TimeoutFuture[T] = cls(now_ms, pos=pos)
        f.complete(value)
        return f


class BatchAppendFuture(TimeoutFuture[T]):
    """Mirrors ``BatchAppendFuture`` (DLedger 0.2.3): an ``AppendFuture`` for the last entry
    of a batch, with the data position of every entry (``positions``)."""

    __slots__ = ("positions",)

    def __init__(self, now_ms: int, time_out_ms: int = 1000, pos: int = -1) -> None:
        super().__init__(now_ms, time_out_ms, pos)
        self.positions: list[int] = []
