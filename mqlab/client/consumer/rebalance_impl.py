"""Rebalance: which queues this consumer owns, and the process queues that follow from it.

Mirrors ``RebalanceImpl`` (client/impl/consumer/RebalanceImpl.java, RocketMQ 4.9.3; the
push and pull halves are ``rebalance_push_impl`` and ``rebalance_pull_impl``); mechanisms.md "Rebalancing"
"RebalanceImpl#doRebalance", "#rebalanceByTopic", "#updateProcessQueueTableInRebalance";
mechanisms.md "The consumer's pull loop" step 1; docs/reference.md §10.11 (algorithm), §10.16 (orderly locks: ``lock``, ``lockAll``).

What this module owns, per consumer group on this client:

* ``subscription_inner`` — topic → SubscriptionData (including ``%RETRY%<group>``);
* ``topic_subscribe_info_table`` — topic → readable queues (filled from routes);
* ``process_queue_table`` — the queues this consumer currently pulls, each with its
  ``ProcessQueue``.

A rebalance round (``do_rebalance``) walks the subscriptions in subscription order; for each
topic it computes the wanted queue set (all queues when broadcasting; this consumer's share of
the *sorted* queues among the *sorted* consumer ids when clustering), drops the queues it no
longer wants or whose pulls stalled for 120 s, adds the new ones at the offset
``computePullFromWhere`` picks, and dispatches their first pull. Java's blocking RPCs
(GET_CONSUMER_LIST_BY_GROUP, QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, LOCK_BATCH_MQ) make the
round a generator task; one round at a time per consumer (a wakeup during a round runs one
more round after it, like ``ServiceThread``'s ``hasNotified``).

Java catches ``Throwable`` around each topic; mqlab catches the client, broker and remoting
exceptions (what the network can cause) and lets programming errors surface.

What it must not know: pulling, consuming, flow control (the push consumer impl), the broker.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable
from typing import Any

from mqlab.client.allocate import AllocateMessageQueueStrategy
from mqlab.client.consumer.consumer_enums import (
    ConsumeType,
    MessageModel,
)
from mqlab.client.consumer.pull_request import PullRequest
from mqlab.client.exception import MQBrokerException, MQClientException
from mqlab.client.process_queue import ProcessQueue
from mqlab.common.filter_api import SubscriptionData
from mqlab.common.message import MessageQueue
from mqlab.common.mix_all import MASTER_ID, is_retry_topic
from mqlab.remoting.bodies import LockBatchRequestBody, UnlockBatchRequestBody
from mqlab.runtime.context import RemotingException
from mqlab.runtime.task import Task, spawn
from mqlab.trace.events import Kind

__all__ = [
    "RebalanceImpl",
    "NETWORK_ERRORS",
    "LOCK_BATCH_MQ_TIMEOUT",
    "parse_consume_timestamp",
]

Gen = Generator[Any, Any, Any]

#: lockBatchMQ / unlockBatchMQ timeout (docs/reference.md §2.4).
LOCK_BATCH_MQ_TIMEOUT = 1000

#: The errors a rebalance step survives (Java catches Throwable; see the module essay).
NETWORK_ERRORS = (MQClientException, MQBrokerException, RemotingException)


def _mq_text(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


def parse_consume_timestamp(value: str) -> int:
    """``UtilAll.parseDate(consumeTimestamp, "yyyyMMddHHmmss").getTime()``, in UTC (ms).

    mqlab formats and parses times in UTC where Java uses the JVM zone (``UtilAll``).

    Raises:
        ValueError: not 14 digits forming a valid date and time.
    """
    from datetime import UTC, datetime

    if not isinstance(value, str) or len(value) != 14 or not value.isdigit():
        raise ValueError(f"consumeTimestamp must be yyyyMMddHHmmss, got {value!r}")
    d = datetime(
        int(value[0:4]), int(value[4:6]), int(value[6:8]),
        int(value[8:10]), int(value[10:12]), int(value[12:14]), tzinfo=UTC,
    )  # fmt: skip
    delta = d - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000


class RebalanceImpl(ABC):
    """The shared rebalance algorithm. Mirrors ``RebalanceImpl`` (client/impl/consumer).

    Args:
        consumer_group: the group.
        message_model: CLUSTERING or BROADCASTING.
        allocate_message_queue_strategy: an ``mqlab.client.allocate`` strategy.
        mq_client_factory: the ``MQClientInstance`` (routes, consumer ids, RPCs, context).
    """

    def __init__(
        self,
        consumer_group: str,
        message_model: str,
        allocate_message_queue_strategy: AllocateMessageQueueStrategy,
        mq_client_factory: Any,
    ) -> None:
        self.consumer_group = consumer_group
        self.message_model = MessageModel(message_model)
        self.allocate_message_queue_strategy = allocate_message_queue_strategy
        self.mq_client_factory = mq_client_factory
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}
        self.topic_subscribe_info_table: dict[str, set[MessageQueue]] = {}
        self.subscription_inner: dict[str, SubscriptionData] = {}
        #: The last allocation per topic (sorted), for inspection.
        self.allocation_table: dict[str, list[MessageQueue]] = {}
        self.rounds = 0
        self._round_running = False
        self._round_again: bool | None = None  # is_order of a round asked for meanwhile

    # -- context -----------------------------------------------------------------------------------
    @property
    def ctx(self):
        return self.mq_client_factory.ctx

    @property
    def tracer(self):
        return self.mq_client_factory.tracer

    def _emit(self, method: str, step: str, kind: str = Kind.STEP, **fields: Any) -> None:
        tracer = self.tracer
        if tracer.enabled:
            tracer.emit(f"{type(self).__name__}.{method}", step, kind, group=self.consumer_group,
                        **fields)  # fmt: skip

    # -- the round -----------------------------------------------------------------------------------
    def do_rebalance(self, is_order: bool) -> Task | None:
        """Start a rebalance round as a task (or queue one if a round is running).

        Mirrors RebalanceImpl#doRebalance (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Rebalancing"
        "RebalanceImpl#doRebalance" lines 7–22.
        """
        if self._round_running:
            self._round_again = is_order
            return None
        self._round_running = True
        return spawn(
            self.ctx, self.do_rebalance_gen(is_order),
            name=f"RebalanceImpl.doRebalance {self.consumer_group}", on_done=self._round_done,
        )  # fmt: skip

    def _round_done(self, task: Task) -> None:
        self._round_running = False
        if task.error is not None:
            raise task.error
        if self._round_again is not None:
            again, self._round_again = self._round_again, None
            self.do_rebalance(again)

    def do_rebalance_gen(self, is_order: bool) -> Gen:
        """One round: every subscribed topic, then drop queues of unsubscribed topics.

        Mirrors RebalanceImpl#doRebalance; mechanisms.md "Rebalancing" span 7–20 (per topic) and 22.
        """
        self.rounds += 1
        # mechanisms.md "Rebalancing" span 7-20: rebalance each subscribed topic (retry topic included)
        for topic in list(self.subscription_inner):
            try:
                yield from self.rebalance_by_topic(topic, is_order)
            except NETWORK_ERRORS as e:
                if not is_retry_topic(topic):
                    self._emit("doRebalance", "7-20", Kind.ERROR, topic=topic, error=str(e),
                               text=f"rebalanceByTopic {topic} failed: {e}")  # fmt: skip
        # mechanisms.md "Rebalancing" span 22: drop the queues of topics no longer subscribed
        self.truncate_message_queue_not_my_topic()

    def rebalance_by_topic(self, topic: str, is_order: bool) -> Gen:
        """Compute this consumer's queues of ``topic`` and update the process queues.

        Mirrors RebalanceImpl#rebalanceByTopic (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Rebalancing"
        "RebalanceImpl#rebalanceByTopic" lines 3–19 (broadcasting) and 20–74 (clustering);
        docs/reference.md §10.11.
        """
        mq_set = self.topic_subscribe_info_table.get(topic)
        if self.message_model is MessageModel.BROADCASTING:
            # mechanisms.md "Rebalancing" span 3-19: broadcasting takes every readable queue
            if mq_set is None:
                self._emit("rebalanceByTopic", "3-19", Kind.ERROR, topic=topic,
                           text=f"doRebalance, but the topic[{topic}] not exist")  # fmt: skip
                return
            self._emit("rebalanceByTopic", "3-19", topic=topic, mq_all=len(mq_set),
                       text=f"BROADCASTING: take all {len(mq_set)} queue(s) of {topic}")  # fmt: skip
            self.allocation_table[topic] = sorted(mq_set)
            changed = yield from self.update_process_queue_table_in_rebalance(
                topic, mq_set, is_order
            )
            if changed:
                self.message_queue_changed(topic, mq_set, mq_set)
            return
        # mechanisms.md "Rebalancing" span 20-74: clustering shares the queues among the group's consumers
        cid_all = yield from self.mq_client_factory.find_consumer_id_list(
            topic, self.consumer_group
        )
        if mq_set is None and not is_retry_topic(topic):
            self._emit("rebalanceByTopic", "21-40", Kind.ERROR, topic=topic,
                       text=f"doRebalance, but the topic[{topic}] not exist")  # fmt: skip
        if cid_all is None:
            self._emit("rebalanceByTopic", "21-40", Kind.ERROR, topic=topic,
                       text=f"doRebalance, {topic}: get consumer id list failed")  # fmt: skip
        if mq_set is None or cid_all is None:
            return
        # mechanisms.md "Rebalancing" span 21-40: sort both lists so every consumer computes the same split
        mq_all = sorted(mq_set)
        cid_all = sorted(cid_all)
        # mechanisms.md "Rebalancing" span 42-61: the allocation strategy picks this consumer's share
        strategy = self.allocate_message_queue_strategy
        client_id = self.mq_client_factory.client_id
        try:
            allocate_result = strategy.allocate(self.consumer_group, client_id, mq_all, cid_all)
        except Exception as e:  # noqa: BLE001 — Java: log the strategy's failure and give up
            self._emit("rebalanceByTopic", "42-61", Kind.ERROR, topic=topic,
                       strategy=strategy.get_name(), error=repr(e),
                       text=f"AllocateMessageQueueStrategy.allocate failed: {e!r}")  # fmt: skip
            return
        allocate_result_set = set(allocate_result or ())
        mine = sorted(allocate_result_set)
        self.allocation_table[topic] = mine
        self._emit(
            "rebalanceByTopic", "42-61", topic=topic, strategy=strategy.get_name(),
            client_id=client_id, cid_all=cid_all, mq_all=len(mq_all),
            allocated=[m.queue_id for m in mine],
            allocated_mqs=[str(m) for m in mine],
            text=f"{strategy.get_name()}: {client_id} is consumer {cid_all.index(client_id) + 1 if client_id in cid_all else '?'} "
            f"of {len(cid_all)}, takes {len(mine)} of {len(mq_all)} queue(s) of {topic}: "
            f"{[_mq_text(m) for m in mine]}",
        )  # fmt: skip
        # mechanisms.md "Rebalancing" span 63-72: update the process queues; announce a change
        changed = yield from self.update_process_queue_table_in_rebalance(
            topic, allocate_result_set, is_order
        )
        if changed:
            self.message_queue_changed(topic, mq_set, allocate_result_set)

    def truncate_message_queue_not_my_topic(self) -> None:
        """Drop process queues whose topic is no longer subscribed.

        Mirrors RebalanceImpl#truncateMessageQueueNotMyTopic; mechanisms.md "Rebalancing" span 28–40.
        """
        for mq in [m for m in self.process_queue_table if m.topic not in self.subscription_inner]:
            pq = self.process_queue_table.pop(mq)
            pq.dropped = True
            self._emit("truncateMessageQueueNotMyTopic", "28-40", mq=str(mq),
                       text=f"remove unnecessary mq {_mq_text(mq)}: topic no longer subscribed")  # fmt: skip

    def update_process_queue_table_in_rebalance(
        self, topic: str, mq_set: Iterable[MessageQueue], is_order: bool
    ) -> Gen:
        """Make the process queues of ``topic`` match ``mq_set``; return whether they changed.

        Mirrors RebalanceImpl#updateProcessQueueTableInRebalance (client/impl/consumer,
        RocketMQ 4.9.3); mechanisms.md "Rebalancing" span 93–161; docs/reference.md §10.11 steps 1–3.
        """
        mq_set = set(mq_set)
        changed = False
        now = self.ctx.now_ms
        # mechanisms.md "Rebalancing" span 93-126: drop what is no longer ours, or whose pulls stalled
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic != topic:
                continue
            if mq not in mq_set:
                pq.dropped = True
                if self.remove_unnecessary_message_queue(mq, pq):
                    self.process_queue_table.pop(mq, None)
                    changed = True
                    self._emit("updateProcessQueueTableInRebalance", "93-126", mq=str(mq),
                               text=f"remove unnecessary mq {_mq_text(mq)}: allocated elsewhere now")  # fmt: skip
            elif pq.is_pull_expired(now):
                # mechanisms.md "Rebalancing" span 108-120: no pull for > 120 s: a push consumer drops the queue
                if self.consume_type() is ConsumeType.CONSUME_PASSIVELY:
                    pq.dropped = True
                    if self.remove_unnecessary_message_queue(mq, pq):
                        self.process_queue_table.pop(mq, None)
                        changed = True
                        self._emit(
                            "updateProcessQueueTableInRebalance", "108-120", Kind.ERROR,
                            mq=str(mq), idle_ms=now - pq.last_pull_timestamp,
                            text=f"[BUG] remove mq {_mq_text(mq)}: no pull for "
                            f"{now - pq.last_pull_timestamp} ms > 120000 ms, re-add it",
                        )  # fmt: skip
        # mechanisms.md "Rebalancing" span 128-158: add the queues that are new to us
        pull_request_list: list[PullRequest] = []
        for mq in sorted(mq_set):
            if mq in self.process_queue_table:
                continue
            if is_order and not (yield from self.lock(mq)):
                self._emit("updateProcessQueueTableInRebalance", "132-135", Kind.ERROR,
                           mq=str(mq), text=f"add a new mq {_mq_text(mq)} failed: lock failed")  # fmt: skip
                continue
            self.remove_dirty_offset(mq)
            pq = ProcessQueue(self.ctx.now_ms)
            try:
                next_offset = yield from self.compute_pull_from_where_with_exception(mq)
            except NETWORK_ERRORS as e:
                self._emit("updateProcessQueueTableInRebalance", "139", Kind.ERROR, mq=str(mq),
                           error=str(e), text=f"compute offset failed for {_mq_text(mq)}: {e}")  # fmt: skip
                continue
            if next_offset < 0:
                self._emit("updateProcessQueueTableInRebalance", "139", Kind.ERROR, mq=str(mq),
                           next_offset=next_offset,
                           text=f"add new mq {_mq_text(mq)} failed: offset {next_offset}")  # fmt: skip
                continue
            if mq in self.process_queue_table:  # putIfAbsent lost a race with another path
                continue
            self.process_queue_table[mq] = pq
            pull_request_list.append(PullRequest(self.consumer_group, mq, pq, next_offset))
            changed = True
            self._emit("updateProcessQueueTableInRebalance", "140-156", mq=str(mq),
                       next_offset=next_offset,
                       text=f"add a new mq {_mq_text(mq)}, first pull at offset {next_offset}")  # fmt: skip
        # mechanisms.md "Rebalancing" span 161: start pulling the new queues
        self.dispatch_pull_request(pull_request_list)
        return changed

    # -- orderly locks (docs/reference.md §10.16) ----------------------------------------------------------
    def _lock_body(self, cls: type, mqs: Iterable[MessageQueue]) -> Any:
        return cls(
            consumer_group=self.consumer_group,
            client_id=self.mq_client_factory.client_id,
            mq_set=tuple(sorted(mqs)),
        )

    def _master(self, broker_name: str) -> str | None:
        found = self.mq_client_factory.find_broker_address_in_subscribe(
            broker_name, MASTER_ID, True
        )
        return None if found is None else found.broker_addr

    def lock(self, mq: MessageQueue) -> Gen:
        """LOCK_BATCH_MQ for one queue; mark locked process queues; True if ``mq`` is locked.

        Mirrors RebalanceImpl#lock (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.16.
        """
        addr = self._master(mq.broker_name)
        if addr is None:
            return False
        api = self.mq_client_factory.mq_client_api_impl
        try:
            locked = yield from api.lock_batch_mq(
                addr, self._lock_body(LockBatchRequestBody, [mq]), LOCK_BATCH_MQ_TIMEOUT
            )
        except NETWORK_ERRORS as e:
            self._emit("lock", "lock", Kind.ERROR, mq=str(mq), error=str(e),
                       text=f"lockBatchMQ exception for {_mq_text(mq)}: {e}")  # fmt: skip
            return False
        now = self.ctx.now_ms
        for m in sorted(locked):
            pq = self.process_queue_table.get(m)
            if pq is not None:
                pq.locked = True
                pq.last_lock_timestamp = now
        ok = mq in locked
        self._emit("lock", "lock", mq=str(mq), ok=ok,
                   text=f"the message queue lock {'OK' if ok else 'Failed'}: {_mq_text(mq)}")  # fmt: skip
        return ok

    def lock_all(self) -> Gen:
        """LOCK_BATCH_MQ per broker for every process queue; refresh or clear ``locked``.

        Mirrors RebalanceImpl#lockAll (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.16.
        """
        api = self.mq_client_factory.mq_client_api_impl
        for broker_name, mqs in sorted(self._process_queue_table_by_broker_name().items()):
            addr = self._master(broker_name)
            if not mqs or addr is None:
                continue
            try:
                ok_set = yield from api.lock_batch_mq(
                    addr, self._lock_body(LockBatchRequestBody, mqs), LOCK_BATCH_MQ_TIMEOUT
                )
            except NETWORK_ERRORS as e:
                self._emit("lockAll", "lockAll", Kind.ERROR, broker=broker_name, error=str(e),
                           text=f"lockBatchMQ exception on {broker_name}: {e}")  # fmt: skip
                continue
            now = self.ctx.now_ms
            for mq in sorted(mqs):
                pq = self.process_queue_table.get(mq)
                if pq is None:
                    continue
                if mq in ok_set:
                    pq.locked = True
                    pq.last_lock_timestamp = now
                else:
                    pq.locked = False
            self._emit(
                "lockAll", "lockAll", broker=broker_name,
                locked=[str(m) for m in sorted(ok_set)],
                failed=[str(m) for m in sorted(set(mqs) - set(ok_set))],
                text=f"lockAll on {broker_name}: {len(ok_set)} of {len(mqs)} queue(s) locked",
            )  # fmt: skip

    def unlock(self, mq: MessageQueue, oneway: bool) -> Gen:
        """UNLOCK_BATCH_MQ for one queue. Mirrors RebalanceImpl#unlock."""
        addr = self._master(mq.broker_name)
        if addr is None:
            return
        api = self.mq_client_factory.mq_client_api_impl
        try:
            yield from api.unlock_batch_mq(
                addr, self._lock_body(UnlockBatchRequestBody, [mq]), LOCK_BATCH_MQ_TIMEOUT, oneway
            )
            self._emit("unlock", "unlock", mq=str(mq),
                       text=f"unlock messageQueue {_mq_text(mq)}")  # fmt: skip
        except NETWORK_ERRORS as e:
            self._emit("unlock", "unlock", Kind.ERROR, mq=str(mq), error=str(e),
                       text=f"unlockBatchMQ exception for {_mq_text(mq)}: {e}")  # fmt: skip

    def unlock_all(self, oneway: bool) -> Gen:
        """UNLOCK_BATCH_MQ per broker; clear ``locked``. Mirrors RebalanceImpl#unlockAll."""
        api = self.mq_client_factory.mq_client_api_impl
        for broker_name, mqs in sorted(self._process_queue_table_by_broker_name().items()):
            addr = self._master(broker_name)
            if not mqs or addr is None:
                continue
            try:
                yield from api.unlock_batch_mq(
                    addr, self._lock_body(UnlockBatchRequestBody, mqs), LOCK_BATCH_MQ_TIMEOUT,
                    oneway,
                )  # fmt: skip
            except NETWORK_ERRORS as e:
                self._emit("unlockAll", "unlockAll", Kind.ERROR, broker=broker_name,
                           error=str(e))  # fmt: skip
                continue
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is not None:
                    pq.locked = False

    def _process_queue_table_by_broker_name(self) -> dict[str, list[MessageQueue]]:
        """Mirrors RebalanceImpl#buildProcessQueueTableByBrokerName."""
        result: dict[str, list[MessageQueue]] = {}
        for mq in sorted(self.process_queue_table):
            result.setdefault(mq.broker_name, []).append(mq)
        return result

    def remove_process_queue(self, mq: MessageQueue) -> None:
        """Drop one queue now (OFFSET_ILLEGAL fix-up); the next round re-adds it.

        Mirrors RebalanceImpl#removeProcessQueue (client/impl/consumer, RocketMQ 4.9.3).
        """
        prev = self.process_queue_table.pop(mq, None)
        if prev is not None:
            was_dropped = prev.dropped
            prev.dropped = True
            self.remove_unnecessary_message_queue(mq, prev)
            self._emit("removeProcessQueue", "fix-offset", mq=str(mq), was_dropped=was_dropped,
                       text=f"Fix Offset: remove mq {_mq_text(mq)}; the next rebalance re-adds it")  # fmt: skip

    def destroy(self) -> None:
        """Mark every process queue dropped and forget them. Mirrors RebalanceImpl#destroy."""
        for pq in self.process_queue_table.values():
            pq.dropped = True
        self.process_queue_table.clear()

    # -- what push and pull consumers do differently --------------------------------------------
    @abstractmethod
    def message_queue_changed(
        self, topic: str, mq_all: set[MessageQueue], mq_divided: set[MessageQueue]
    ) -> None: ...

    @abstractmethod
    def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool: ...

    @abstractmethod
    def consume_type(self) -> ConsumeType: ...

    @abstractmethod
    def remove_dirty_offset(self, mq: MessageQueue) -> None: ...

    @abstractmethod
    def compute_pull_from_where_with_exception(self, mq: MessageQueue) -> Gen: ...

    @abstractmethod
    def dispatch_pull_request(self, pull_request_list: list[PullRequest]) -> None: ...
