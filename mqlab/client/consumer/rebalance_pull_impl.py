"""The pull consumer's half of rebalancing: tell the application which queues it owns.

Mirrors ``RebalancePullImpl`` (client/impl/consumer/RebalancePullImpl.java, RocketMQ 4.9.3);
mechanisms.md "Rebalancing" "[PullConsumer] RebalancePullImpl#removeUnnecessaryMessageQueue" and
"#computePullFromWhere" (always 0); docs/reference.md §10.11.

A pull consumer allocates the queues of its ``register_topics`` like a push consumer, but has
no pull loop: a change only calls the application's ``MessageQueueListener``, a removed queue's
offset is persisted and forgotten, and stalled pulls are never a reason to drop a queue
(``CONSUME_ACTIVELY``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mqlab.client.consumer.consumer_enums import ConsumeType
from mqlab.client.consumer.pull_request import PullRequest
from mqlab.client.consumer.rebalance_impl import RebalanceImpl
from mqlab.client.process_queue import ProcessQueue
from mqlab.common.message import MessageQueue
from mqlab.trace.events import Kind

__all__ = ["RebalancePullImpl"]

Gen = Generator[Any, Any, Any]


class RebalancePullImpl(RebalanceImpl):
    """The pull consumer's rebalance: it only tells the application which queues it owns.

    Mirrors ``RebalancePullImpl`` (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Rebalancing"
    "RebalancePullImpl#removeUnnecessaryMessageQueue".
    """

    def __init__(self, default_mq_pull_consumer_impl: Any, *args: Any) -> None:
        super().__init__(*args)
        self.default_mq_pull_consumer_impl = default_mq_pull_consumer_impl

    def message_queue_changed(
        self, topic: str, mq_all: set[MessageQueue], mq_divided: set[MessageQueue]
    ) -> None:
        """Call the application's ``MessageQueueListener`` (errors are only traced)."""
        listener = (
            self.default_mq_pull_consumer_impl.default_mq_pull_consumer.message_queue_listener
        )
        self._emit("messageQueueChanged", "changed", topic=topic,
                   divided=[str(m) for m in sorted(mq_divided)],
                   text=f"{topic}: this pull consumer now owns {len(mq_divided)} queue(s)")  # fmt: skip
        if listener is None:
            return
        fn = getattr(listener, "message_queue_changed", listener)
        try:
            fn(topic, set(mq_all), set(mq_divided))
        except Exception as e:  # noqa: BLE001 — Java logs and goes on
            self._emit("messageQueueChanged", "changed", Kind.ERROR, topic=topic, error=repr(e))

    def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """Mirrors RebalancePullImpl#removeUnnecessaryMessageQueue (mechanisms.md "Rebalancing" span 1–5)."""
        store = self.default_mq_pull_consumer_impl.offset_store
        store.persist(mq)
        store.remove_offset(mq)
        return True

    def consume_type(self) -> ConsumeType:
        return ConsumeType.CONSUME_ACTIVELY

    def remove_dirty_offset(self, mq: MessageQueue) -> None:
        self.default_mq_pull_consumer_impl.offset_store.remove_offset(mq)

    def compute_pull_from_where_with_exception(self, mq: MessageQueue) -> Gen:
        """Always 0: the application decides where to pull. Mirrors RebalancePullImpl."""
        return 0
        yield  # pragma: no cover — makes this a generator

    def dispatch_pull_request(self, pull_request_list: list[PullRequest]) -> None:
        """Nothing: a pull consumer has no pull loop."""
