"""The timer that runs the transaction check.

Mirrors ``TransactionalMessageCheckService`` (broker/transaction, RocketMQ 4.9.3): a
ServiceThread that waits ``transactionCheckInterval`` (60 000 ms by default), then runs
``TransactionalMessageServiceImpl#check(transactionTimeOut, transactionCheckMax,
listener)`` (``onWaitEnd``), again and again. Only a master runs it
(``BrokerController#startProcessorByHa``). Here it is the broker timer
``TransactionalMessageCheckService.onWaitEnd`` with that period, on the driver's clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["TransactionalMessageCheckService"]

C = "TransactionalMessageCheckService"
TIMER = C + ".onWaitEnd"


class TransactionalMessageCheckService:
    """Runs the check every ``transactionCheckInterval`` ms."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker
        #: how many checks ran (for inspection and tests).
        self.runs = 0
        #: ``ServiceThread#started``
        self.started = False

    def start(self) -> None:
        """Arm the periodic timer (first run one interval after start); nothing if started
        (``ServiceThread#start``: ``started.compareAndSet(false, true)``)."""
        if self.started:
            return
        self.started = True
        interval = self.broker.broker_config.transaction_check_interval
        self.broker.ctx.set_timer(TIMER, interval, self.on_wait_end, period_ms=interval,
                                  daemon=True)  # fmt: skip

    def shutdown(self) -> None:
        """``ServiceThread#shutdown``: the timer is cancelled (a DLedger broker turned SLAVE)."""
        if self.started:
            self.started = False
            self.broker.ctx.cancel_timer(TIMER)

    def on_wait_end(self) -> None:
        """One check. Mirrors ``#onWaitEnd``: the config is read at each run."""
        broker = self.broker
        cfg = broker.broker_config
        self.runs += 1
        if broker.tracer.enabled:
            broker.tracer.emit(
                C, "onWaitEnd", Kind.TIMER, timeout_ms=cfg.transaction_time_out,
                check_max=cfg.transaction_check_max,
                text=f"begin to check prepare messages (transactionTimeOut "
                f"{cfg.transaction_time_out} ms, transactionCheckMax {cfg.transaction_check_max})",
            )  # fmt: skip
        broker.transactional_message_service.check(
            cfg.transaction_time_out, cfg.transaction_check_max,
            broker.transactional_message_check_listener,
        )  # fmt: skip
