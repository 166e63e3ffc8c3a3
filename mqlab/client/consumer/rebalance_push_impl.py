"""The push consumer's half of rebalancing: where a new queue starts, what a change triggers.

Mirrors ``RebalancePushImpl`` (client/impl/consumer/RebalancePushImpl.java, RocketMQ 4.9.3);
mechanisms.md "Where a new queue starts" step 3 (``computePullFromWhere``), mechanisms.md "Rebalancing"
"RebalancePushImpl#removeUnnecessaryMessageQueue" and "#dispatchPullRequest"; docs/reference.md §10.11,
§11 (``RebalancePushImplTest``: the computePullFromWhere table, pullThresholdForTopic 1024 →
512 / 341).

What it adds to ``RebalanceImpl``: the offset a queue new to this consumer starts at (the
offset store first, then ``consumeFromWhere``, with the retry-topic rules), the per-queue flow
control thresholds derived from the topic ones, the heartbeat that tells brokers the new
``subVersion``, persisting a removed queue's offset, the delayed broker unlock of an orderly
queue, and starting each new queue's pull loop.

What it must not know: how pulls and consumption work (it calls the consumer impl).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mqlab.client.consumer.consumer_enums import (
    DEPRECATED_LAST_OFFSET_ALIASES,
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
)
from mqlab.client.consumer.pull_request import PullRequest
from mqlab.client.consumer.rebalance_impl import RebalanceImpl, parse_consume_timestamp
from mqlab.client.process_queue import ProcessQueue
from mqlab.common import mutants as _mutants
from mqlab.common.message import MessageQueue
from mqlab.common.mix_all import is_retry_topic
from mqlab.runtime.task import spawn
from mqlab.trace.events import Kind

__all__ = ["RebalancePushImpl", "UNLOCK_DELAY_TIME_MILLS"]

Gen = Generator[Any, Any, Any]

#: RebalancePushImpl.UNLOCK_DELAY_TIME_MILLS (docs/reference.md §9): unlock after 20 s if pq holds messages.
UNLOCK_DELAY_TIME_MILLS = 20_000


def _mq_text(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


class RebalancePushImpl(RebalanceImpl):
    """The push consumer's rebalance. Mirrors ``RebalancePushImpl`` (client/impl/consumer).

    Args:
        default_mq_push_consumer_impl: the consumer (offset store, config, pull service,
            orderly flag).
    """

    def __init__(self, default_mq_push_consumer_impl: Any, *args: Any) -> None:
        super().__init__(*args)
        self.default_mq_push_consumer_impl = default_mq_push_consumer_impl
        self._unlock_delay_seq = 0  # numbers the delayed unlocks: one timer key each

    @property
    def _config(self) -> Any:
        return self.default_mq_push_consumer_impl.default_mq_push_consumer

    def message_queue_changed(
        self, topic: str, mq_all: set[MessageQueue], mq_divided: set[MessageQueue]
    ) -> None:
        """New subVersion, per-queue thresholds from the topic ones, heartbeat.

        Mirrors RebalancePushImpl#messageQueueChanged (client/impl/consumer, RocketMQ 4.9.3);
        docs/reference.md §10.11, §11 (pullThresholdForTopic 1024: 2 queues → 512, 3 → 341).
        """
        cfg = self._config
        sd = self.subscription_inner.get(topic)
        old_version = None if sd is None else sd.sub_version
        new_version = self.ctx.now_ms
        if sd is not None:
            sd.sub_version = new_version
        current_queue_count = len(self.process_queue_table)
        if current_queue_count != 0:
            if cfg.pull_threshold_for_topic != -1:
                cfg.pull_threshold_for_queue = max(
                    1, cfg.pull_threshold_for_topic // current_queue_count
                )
            if cfg.pull_threshold_size_for_topic != -1:
                cfg.pull_threshold_size_for_queue = max(
                    1, cfg.pull_threshold_size_for_topic // current_queue_count
                )
        self._emit(
            "messageQueueChanged", "changed", topic=topic, sub_version=new_version,
            old_sub_version=old_version, process_queues=current_queue_count,
            pull_threshold_for_queue=cfg.pull_threshold_for_queue,
            text=f"{topic} rebalance changed: subVersion {old_version} → {new_version}; "
            f"heartbeat so the brokers learn it",
        )  # fmt: skip
        # notify broker
        self.mq_client_factory.send_heartbeat_to_all_broker_with_lock()

    def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """Persist and forget the queue's offset; orderly: release the broker lock.

        Mirrors RebalancePushImpl#removeUnnecessaryMessageQueue (client/impl/consumer,
        RocketMQ 4.9.3); mechanisms.md "Rebalancing" "removeUnnecessaryMessageQueue" span 2–27; docs/reference.md §10.11.
        Java's ``pq.getConsumeLock().tryLock(1000 ms)`` becomes "is a listener call of this
        queue running right now" (no wait: a running call then keeps the queue).
        """
        impl = self.default_mq_push_consumer_impl
        # mechanisms.md "Rebalancing" span 2-4: commit the offset once more (oneway), then forget it
        impl.offset_store.persist(mq)
        impl.offset_store.remove_offset(mq)
        # mechanisms.md "Rebalancing" span 5-27: orderly + clustering holds a broker lock to give back
        if impl.consume_orderly and self.message_model is MessageModel.CLUSTERING:
            if impl.consume_message_service.is_consume_locked(mq, pq) and (
                "consume_lock_skipped" not in _mutants.ACTIVE  # mqlab.common.mutants
            ):
                pq.inc_try_unlock_times()
                self._emit("removeUnnecessaryMessageQueue", "5-27", Kind.ERROR, mq=str(mq),
                           try_unlock_times=pq.try_unlock_times,
                           text=f"[WRONG] mq {_mq_text(mq)} is consuming, so can not unlock it")  # fmt: skip
                return False
            return self._unlock_delay(mq, pq)
        return True

    def _unlock_delay(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """Unlock now, or in 20 s if the queue still holds messages. Mirrors #unlockDelay.

        The timer is keyed ``<group>@<mq>#<n>``: each Java ``schedule()`` is its own task,
        which no later unlock (of this group or another on the instance) replaces.
        """
        if pq.has_temp_message():
            self._unlock_delay_seq += 1
            self.ctx.set_timer(
                "RebalancePushImpl.unlockDelay", UNLOCK_DELAY_TIME_MILLS,
                lambda: self._spawn_unlock(mq),
                key=f"{self.consumer_group}@{mq}#{self._unlock_delay_seq}", daemon=True,
            )  # fmt: skip
        else:
            self._spawn_unlock(mq)
        return True

    def _spawn_unlock(self, mq: MessageQueue) -> None:
        spawn(self.ctx, self.unlock(mq, True), name=f"RebalanceImpl.unlock {mq}")

    def consume_type(self) -> ConsumeType:
        return ConsumeType.CONSUME_PASSIVELY

    def remove_dirty_offset(self, mq: MessageQueue) -> None:
        """Mirrors RebalancePushImpl#removeDirtyOffset."""
        self.default_mq_push_consumer_impl.offset_store.remove_offset(mq)

    def compute_pull_from_where_with_exception(self, mq: MessageQueue) -> Gen:
        """Where a queue new to this consumer starts: the stored offset, else the policy.

        Mirrors RebalancePushImpl#computePullFromWhereWithException (client/impl/consumer,
        RocketMQ 4.9.3); mechanisms.md "The consumer's pull loop" step 3; docs/reference.md §10.11 and the
        ``RebalancePushImplTest`` table (§11): stored ≥ 0 → it; −1 and LAST → max offset
        (retry topic: 0); −1 and FIRST → 0; −1 and TIMESTAMP → search by
        ``consumeTimestamp`` (retry topic: max offset); −2 (store unreachable) → −1.

        Raises:
            MQClientException: the max-offset or search look-up failed.
        """
        from mqlab.client.consumer.offset_store import ReadOffsetType

        impl = self.default_mq_push_consumer_impl
        cfg = self._config
        where = ConsumeFromWhere(cfg.consume_from_where)
        admin = impl.mq_admin_impl
        last_offset = yield from impl.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE)
        result = -1
        reason: str
        if last_offset >= 0:
            result, reason = last_offset, f"stored offset {last_offset}"
        elif last_offset != -1:
            result, reason = -1, f"offset store unreachable ({last_offset}): skip the queue"
        elif where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
            result, reason = 0, "no stored offset, CONSUME_FROM_FIRST_OFFSET → 0"
        elif where is ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
            if is_retry_topic(mq.topic):
                result = yield from admin.max_offset(mq)
                reason = f"no stored offset, retry topic → max offset {result}"
            else:
                timestamp = parse_consume_timestamp(cfg.consume_timestamp)
                result = yield from admin.search_offset(mq, timestamp)
                reason = (
                    f"no stored offset, CONSUME_FROM_TIMESTAMP {cfg.consume_timestamp} → "
                    f"offset {result}"
                )
        else:  # CONSUME_FROM_LAST_OFFSET and its three deprecated aliases
            assert where is ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET or (
                where in DEPRECATED_LAST_OFFSET_ALIASES
            ), f"unhandled ConsumeFromWhere {where}"
            if is_retry_topic(mq.topic):
                result, reason = 0, "no stored offset, retry topic → 0"
            else:
                result = yield from admin.max_offset(mq)
                reason = f"no stored offset, CONSUME_FROM_LAST_OFFSET → max offset {result}"
        self._emit(
            "computePullFromWhere", "3", mq=str(mq), consume_from_where=where.value,
            last_offset=last_offset, result=result,
            text=f"{_mq_text(mq)}: {reason}",
        )  # fmt: skip
        return result

    def dispatch_pull_request(self, pull_request_list: list[PullRequest]) -> None:
        """Start each new queue's pull loop. Mirrors RebalancePushImpl#dispatchPullRequest.

        mechanisms.md "Rebalancing" "RebalancePushImpl#dispatchPullRequest" lines 1–6; mechanisms.md "The consumer's pull loop" step 1.
        """
        for pull_request in pull_request_list:
            self.default_mq_push_consumer_impl.execute_pull_request_immediately(pull_request)
