"""The periodic rebalance: every 20 s, at a consumer's start, and when a broker says so.

Mirrors ``RebalanceService`` (client/impl/consumer/RebalanceService.java, RocketMQ 4.9.3);
mechanisms.md "Rebalancing" "RebalanceService" span 21–30 (``waitForRunning(waitInterval)`` then
``mqClientFactory.doRebalance()``); docs/reference.md §9 (``waitInterval`` 20 000 ms, system property
``rocketmq.client.rebalance.waitInterval``).

The service thread becomes one periodic daemon timer ``RebalanceService.run``. ``wakeup()``
(``ServiceThread#wakeup``) moves the pending firing to *now*, as Java's ``countDownLatch``
release does; the next periodic firing is then ``wait_interval`` after it. Three things wake
it (mechanisms.md "Rebalancing" span 26): the 20 s wait elapsing, ``DefaultMQPushConsumerImpl#start``
(``rebalanceImmediately``) and NOTIFY_CONSUMER_IDS_CHANGED from a broker. A wakeup before the
service runs is remembered (``hasNotified``) and makes the first firing immediate.

What it must not know: how a consumer rebalances (``MQClientInstance#doRebalance`` asks each).
"""

from __future__ import annotations

from typing import Any

from mqlab.trace.events import Kind

__all__ = ["RebalanceService", "WAIT_INTERVAL"]

#: ms between rebalances; rocketmq.client.rebalance.waitInterval (docs/reference.md §9).
WAIT_INTERVAL = 20_000

TIMER = "RebalanceService.run"


class RebalanceService:
    """Mirrors ``RebalanceService`` (client/impl/consumer, RocketMQ 4.9.3).

    Args:
        mq_client_factory: the owning ``MQClientInstance``.
        wait_interval: the period (default 20 000 ms).
    """

    def __init__(self, mq_client_factory: Any, wait_interval: int = WAIT_INTERVAL) -> None:
        self.mq_client_factory = mq_client_factory
        self.wait_interval = wait_interval
        self.stopped = True
        self.has_notified = False
        self.runs = 0

    def start(self) -> None:
        """``ServiceThread#start``: first firing after ``wait_interval`` (at once if woken)."""
        self.stopped = False
        delay = 0 if self.has_notified else self.wait_interval
        self.mq_client_factory.ctx.set_timer(
            TIMER, delay, self.run, period_ms=self.wait_interval, daemon=True
        )

    def shutdown(self) -> None:
        self.stopped = True
        self.mq_client_factory.ctx.cancel_timer(TIMER)

    def wakeup(self) -> None:
        """``ServiceThread#wakeup``: rebalance now instead of at the end of the wait."""
        ctx = getattr(self.mq_client_factory, "ctx", None)
        if self.stopped or ctx is None or not ctx.wakeup_timer(TIMER):
            self.has_notified = True

    def run(self) -> None:
        """One loop iteration: ``mqClientFactory.doRebalance()``.

        Mirrors RebalanceService#run (RocketMQ 4.9.3); mechanisms.md "Rebalancing" "RebalanceService" span 26.
        """
        if self.stopped:
            return
        self.has_notified = False
        self.runs += 1
        tracer = self.mq_client_factory.tracer
        if tracer.enabled:
            tracer.emit(
                "RebalanceService.run", "26", Kind.TIMER, runs=self.runs,
                text=f"rebalance round {self.runs}: ask every consumer of this client to rebalance",
            )  # fmt: skip
        self.mq_client_factory.do_rebalance()
