"""The handle a sans-IO send returns, and the producer's small enums.

Mirrors ``CommunicationMode`` (client/impl), ``ServiceState`` (common) and the role of
``SendCallback`` (client/producer), RocketMQ 4.9.3. Java's synchronous ``send`` blocks and
returns a ``SendResult``; mqlab's returns a ``SendFuture`` that the driver completes in
virtual time. Plain data: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

from mqlab.client.producer.send_result import SendResult

if TYPE_CHECKING:
    from mqlab.runtime.task import Task

__all__ = ["AsyncSendError", "CommunicationMode", "SendCallback", "SendFuture", "ServiceState"]

#: ``callback(result, error)``: exactly one of them is not None (ONEWAY: both None).
SendCallback = Callable[[SendResult | None, Exception | None], None]


class CommunicationMode(Enum):
    """Mirrors ``CommunicationMode`` (client/impl)."""

    SYNC = "SYNC"
    ASYNC = "ASYNC"
    ONEWAY = "ONEWAY"


class ServiceState(Enum):
    """Mirrors ``ServiceState`` (common)."""

    CREATE_JUST = "CREATE_JUST"
    RUNNING = "RUNNING"
    SHUTDOWN_ALREADY = "SHUTDOWN_ALREADY"
    START_FAILED = "START_FAILED"


class SendFuture:
    """A send in flight; completes in virtual time.

    Attributes:
        done: the send finished (successfully or not).
        result: the ``SendResult`` (None for oneway sends and failures).
        error: the exception Java would have thrown / passed to ``onException``.
        mode: the ``CommunicationMode``.
    """

    __slots__ = ("done", "result", "error", "mode", "task")

    def __init__(self, mode: CommunicationMode) -> None:
        self.done = False
        self.result: SendResult | None = None
        self.error: BaseException | None = None
        self.mode = mode
        self.task: Task | None = None

    def get(self) -> SendResult | None:
        """The result, or raise the error.

        Raises:
            RuntimeError: not done yet (advance the driver first).
        """
        if not self.done:
            raise RuntimeError("the send has not completed yet: step or advance the driver")
        if self.error is not None:
            raise self.error
        return self.result

    def __repr__(self) -> str:
        state = "pending" if not self.done else ("error" if self.error else "done")
        return f"SendFuture({self.mode.name}, {state}, result={self.result}, error={self.error!r})"


class AsyncSendError(Exception):
    """Carries an asynchronous send's failure past ``sendDefaultImpl``'s retry loop.

    In Java the async RPC fails on another thread and goes straight to the callback;
    ``sendDefaultImpl`` never sees it. Here the RPC runs inside the same generator, so the
    failure is wrapped to get through the loop untouched and unwrapped at the end.
    """

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause
