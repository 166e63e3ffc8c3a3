"""The Lab's clients: producers, push and pull consumers, and what they did.

Each client runs on its own ``MQClientInstance`` node (one "process" each: its own
client id, heartbeats, route table), named ``producer-1``, ``consumer-1``, … so traces
and figures show who did what. Consumers keep a ``consumed`` log (every message handed
to the listener); ``deliveries()`` gathers them into one frame, which the delivery
checkers read.

Listeners: a callable ``listener(msgs, context) -> ConsumeConcurrentlyStatus`` (or the
orderly statuses), or an object with ``consume_message``; ``None`` means "always
CONSUME_SUCCESS". ``consume_time_ms`` (a setting) makes each listener call take virtual
time in the modelled consume thread pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus
from mqlab.common.message import Message
from mqlab.lab.journal import journaled
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.client.client_config import ClientConfig
    from mqlab.client.consumer.default_mq_pull_consumer import DefaultMQPullConsumer
    from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer import DefaultMQProducer
    from mqlab.client.producer.send_future import SendFuture
    from mqlab.client.producer.transaction_mq_producer import TransactionMQProducer

__all__ = ["ClientsMixin", "always_succeed"]


def always_succeed(msgs: list, context: Any) -> Any:
    """The default listener: consume everything successfully."""
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


def always_succeed_orderly(msgs: list, context: Any) -> Any:
    return ConsumeOrderlyStatus.SUCCESS


class ClientsMixin:
    """Client factories and views, mixed into ``Lab``."""

    driver: Any
    _journal: list
    _replaying: bool

    def _init_clients(self) -> None:
        self.producers: dict[str, DefaultMQProducer] = {}
        self.consumers: dict[str, DefaultMQPushConsumer] = {}
        self.pull_consumers: dict[str, DefaultMQPullConsumer] = {}
        self._default_producer: DefaultMQProducer | None = None

    def _instance(
        self, kind: str, name: str | None, client_config: ClientConfig | None = None
    ) -> MQClientInstance:
        """The client's node. ``client_config``: its ``ClientConfig`` (as a Java client sets
        ``pollNameServerInterval`` and the rest on its producer or consumer, which extends
        ``ClientConfig``); the lab sets ``instance_name`` (the node's name) and
        ``local_offset_store_dir`` (under the lab's store) on a copy, every other field is
        the caller's. None: the defaults, with the lab's name server."""
        import dataclasses

        from mqlab.client.client_config import ClientConfig
        from mqlab.client.mq_client_instance import MQClientInstance
        from mqlab.lab.lab import NAMESRV_ADDR

        if client_config is not None and not isinstance(client_config, ClientConfig):
            raise TypeError(
                f"client_config must be a ClientConfig, got {type(client_config).__name__}"
            )
        node = name or self._next_name(kind)  # type: ignore[attr-defined]
        if node in self.driver.nodes:
            raise ValueError(f"a node named {node!r} already exists")
        cfg = dataclasses.replace(
            client_config or ClientConfig(namesrv_addr=NAMESRV_ADDR), instance_name=node,
            local_offset_store_dir=str(self.store_dir / "client-offsets"),  # type: ignore[attr-defined]
        )  # fmt: skip
        inst = MQClientInstance(cfg, name=node)
        self.driver.add_node(inst)
        return inst

    # -- producers -----------------------------------------------------------------------------
    @journaled
    def producer(
        self, group: str = "PG", *, name: str | None = None,
        client_config: ClientConfig | None = None, **settings: Any,
    ) -> DefaultMQProducer:  # fmt: skip
        """A started producer on its own client node (settings: DefaultMQProducer fields;
        ``client_config``: its ``ClientConfig``, e.g. ``ClientConfig(poll_name_server_interval
        =1000)`` for a route refresh every second instead of 30 s)."""
        from mqlab.client.producer.default_mq_producer import DefaultMQProducer

        inst = self._instance("producer", name, client_config)
        p = DefaultMQProducer(group, inst, **settings)
        p.start()
        self.producers[inst.name] = p
        return p

    @journaled
    def transaction_producer(
        self, group: str, listener: Any, *, name: str | None = None, **settings: Any
    ) -> TransactionMQProducer:
        """A started ``TransactionMQProducer`` on its own client node.

        ``listener``: a ``TransactionListener`` (``execute_local_transaction(msg, arg)``
        and ``check_local_transaction(msg)``, each returning a ``LocalTransactionState``).
        Send with ``producer.send_message_in_transaction(Message(...), arg)``.
        """
        from mqlab.client.producer.transaction_mq_producer import TransactionMQProducer

        inst = self._instance("producer", name)
        p = TransactionMQProducer(group, inst, transaction_listener=listener, **settings)
        p.start()
        self.producers[inst.name] = p
        return p

    def _producer(self) -> DefaultMQProducer:
        if self._default_producer is None:
            was = self._replaying
            self._replaying = True  # created as part of a journaled call, not on its own
            try:
                self._default_producer = self.producer("lab-producer-group", name="lab-producer")
            finally:
                self._replaying = was
        return self._default_producer

    @journaled
    def send(
        self, topic: str, body: bytes | str = b"", *, tags: str | None = None, keys: str | None = None,
        properties: dict[str, str] | None = None, delay_level: int = 0, run: bool = True,
    ) -> SendFuture:  # fmt: skip
        """Send one message with the lab's producer; by default run until it is acknowledged."""
        msg = Message(topic, body, tags=tags, keys=keys, properties=properties)
        if delay_level:
            msg.delay_time_level = delay_level
        fut = self._producer().send(msg)
        if run and not self._replaying:
            self._settle()  # type: ignore[attr-defined]
        return fut

    @journaled
    def send_many(
        self, topic: str, count: int, *, tags: str | list[str] | None = None, body: str = "msg-{i}",
        interval_ms: int = 0, run: bool = True,
    ) -> list[SendFuture]:  # fmt: skip
        """Send ``count`` messages (bodies ``body.format(i=i)``), ``interval_ms`` apart.

        ``tags`` may be a list: message i gets ``tags[i % len(tags)]``.
        """
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be a whole number >= 0, got {count!r}")
        if not isinstance(interval_ms, int) or interval_ms < 0:
            raise ValueError(f"interval_ms must be a whole number >= 0, got {interval_ms!r}")
        if not topic:
            raise ValueError("topic must not be empty")
        producer = self._producer()
        futures = []
        for i in range(count):
            tag = tags[i % len(tags)] if isinstance(tags, list) and tags else tags
            msg = Message(topic, body.format(i=i), tags=tag)
            if interval_ms and i:
                # Time moves inside this call, so a fork at a step inside it replays the whole call.
                self.driver.advance(interval_ms)
            futures.append(producer.send(msg))
        if run and not self._replaying:
            self._settle()  # type: ignore[attr-defined]
        return futures

    # -- push consumers --------------------------------------------------------------------------
    @journaled
    def push_consumer(
        self, group: str, topic: str, expression: str = "*", listener: Any = None, *,
        orderly: bool = False, expression_type: str = "TAG", name: str | None = None,
        start: bool = True, client_config: ClientConfig | None = None, **settings: Any,
    ) -> DefaultMQPushConsumer:  # fmt: skip
        """A push consumer on its own client node, subscribed to ``topic``.

        Settings are DefaultMQPushConsumer fields (``message_model="BROADCASTING"``,
        ``consume_from_where="CONSUME_FROM_FIRST_OFFSET"``, ``pull_batch_size``,
        ``allocate_message_queue_strategy``, ``consume_time_ms`` ...); ``client_config``: its
        ``ClientConfig``, as for ``producer``.
        """
        from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer

        inst = self._instance("consumer", name, client_config)
        c = DefaultMQPushConsumer(group, inst, **settings)
        c.subscribe(topic, expression, expression_type)
        if orderly:
            c.register_message_listener_orderly(listener or always_succeed_orderly)
        else:
            c.register_message_listener(listener or always_succeed)
        if start:
            c.start()
        self.consumers[inst.name] = c
        return c

    add_consumer = push_consumer

    def consumer(self, name: str) -> DefaultMQPushConsumer:
        try:
            return self.consumers[name]
        except KeyError:
            raise ValueError(
                f"no consumer named {name!r}; consumers: {sorted(self.consumers)}"
            ) from None

    @journaled
    def kill_consumer(self, name: str, *, persist_first: bool = False) -> None:
        """Crash a consumer. ``persist_first``: it committed its offsets just before."""
        c = self.consumer(name)
        inst = c.default_mq_push_consumer_impl.mq_client_factory
        if persist_first:
            inst.persist_all_consumer_offset()
        self.driver._tracer.emit(
            "Lab", "kill_consumer", Kind.FAULT, consumer=name, persist_first=persist_first,
            text=f"kill {name}" + (" right after it persisted its offsets" if persist_first else ""),
        )  # fmt: skip
        self.driver.stop_node(inst.name, graceful=False)

    @journaled
    def remove_consumer(self, name: str) -> None:
        """Shut a consumer down cleanly (persists offsets, unregisters)."""
        c = self.consumer(name)
        node = c.default_mq_push_consumer_impl.mq_client_factory.name
        task = c.shutdown()  # waits for its offset commits and UNREGISTER_CLIENT answers
        if task is None or task.done:
            self.driver.stop_node(node, graceful=True)
        else:
            task.add_done_callback(lambda _t: self.driver.stop_node(node, graceful=True))

    @journaled
    def pause_consumer(self, name: str) -> None:
        """Suspend a consumer's pulling (DefaultMQPushConsumer#suspend)."""
        self.consumer(name).suspend()

    @journaled
    def resume_consumer(self, name: str) -> None:
        self.consumer(name).resume()

    @journaled
    def rebalance(self, name: str) -> None:
        """Wake a consumer's RebalanceService now (as NOTIFY_CONSUMER_IDS_CHANGED does)."""
        self.consumer(name).default_mq_push_consumer_impl.mq_client_factory.rebalance_immediately()

    @journaled
    def persist_offsets(self, name: str | None = None) -> None:
        """Commit consumer offsets to the broker now (all consumers, or one)."""
        names = [name] if name is not None else sorted(
            n for n, c in self.consumers.items()
            if c.default_mq_push_consumer_impl.mq_client_factory.running
        )  # fmt: skip
        for n in names:
            self.consumer(
                n
            ).default_mq_push_consumer_impl.mq_client_factory.persist_all_consumer_offset()

    # -- pull consumers --------------------------------------------------------------------------
    @journaled
    def pull_consumer(
        self, group: str, *, name: str | None = None, **settings: Any
    ) -> DefaultMQPullConsumer:
        """A started pull consumer (you choose queues and offsets yourself)."""
        from mqlab.client.consumer.default_mq_pull_consumer import DefaultMQPullConsumer

        inst = self._instance("pull-consumer", name)
        c = DefaultMQPullConsumer(group, inst, **settings)
        c.start()
        self.pull_consumers[inst.name] = c
        return c

    # -- views -------------------------------------------------------------------------------------
    def deliveries(self) -> pd.DataFrame:
        """Every message handed to a listener, all consumers, in time order."""
        import pandas as pd

        rows = []
        for name, c in sorted(self.consumers.items()):
            for r in c.consumed:
                rows.append({
                    "t_ms": r.t_ms, "consumer": name, "group": c.consumer_group, "topic": r.topic,
                    "queue": r.mq.topic, "broker": r.mq.broker_name, "queue_id": r.mq.queue_id,
                    "queue_offset": r.queue_offset, "msg_id": r.msg_id,
                    "reconsume_times": r.reconsume_times, "status": str(getattr(r.status, "name", r.status)),
                })  # fmt: skip
        cols = ["t_ms", "consumer", "group", "topic", "queue", "broker", "queue_id", "queue_offset",
                "msg_id", "reconsume_times", "status"]  # fmt: skip
        df = pd.DataFrame(rows, columns=cols)
        return df.sort_values(["t_ms", "consumer"], kind="stable").reset_index(drop=True)

    def allocation(self) -> pd.DataFrame:
        """Which queues each consumer holds now (one row per consumer and queue)."""
        import pandas as pd

        rows = []
        for name, c in sorted(self.consumers.items()):
            if not c.default_mq_push_consumer_impl.mq_client_factory.running:
                continue  # a stopped or killed consumer holds nothing
            for topic, mqs in sorted(c.allocation.items()):
                for mq in mqs:
                    rows.append({"consumer": name, "client_id": c.client_id, "topic": topic,
                                 "broker": mq.broker_name, "queue_id": mq.queue_id})  # fmt: skip
        return pd.DataFrame(rows, columns=["consumer", "client_id", "topic", "broker", "queue_id"])

    def process_queues(self) -> pd.DataFrame:
        """Each consumer's ProcessQueues: cached count/size, span, dropped/locked, offsets."""
        import pandas as pd

        rows = []
        for name, c in sorted(self.consumers.items()):
            if not c.default_mq_push_consumer_impl.mq_client_factory.running:
                continue
            for mq, pq in sorted(c.process_queue_table.items()):
                rows.append({
                    "consumer": name, "topic": mq.topic, "broker": mq.broker_name,
                    "queue_id": mq.queue_id, "msg_count": pq.msg_count, "msg_size": pq.msg_size,
                    "max_span": pq.get_max_span(), "queue_offset_max": pq.queue_offset_max,
                    "dropped": pq.dropped, "locked": pq.locked,
                    "last_pull_timestamp": pq.last_pull_timestamp,
                })  # fmt: skip
        cols = ["consumer", "topic", "broker", "queue_id", "msg_count", "msg_size", "max_span",
                "queue_offset_max", "dropped", "locked", "last_pull_timestamp"]  # fmt: skip
        return pd.DataFrame(rows, columns=cols)
