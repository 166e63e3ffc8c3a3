"""One client process: routes, broker addresses, heartbeats, and the producers and consumers.

Mirrors ``MQClientInstance`` (client/impl/factory/MQClientInstance.java, RocketMQ 4.9.3)
and ``ClientRemotingProcessor#notifyConsumerIdsChanged`` (client/impl); docs/reference.md §2.3
(heartbeat body and who gets it), §2.5 (route → publish / subscribe queues), §2.7 (what a
Java client sends), §9 (timings). It is a ``Node``: every producer and consumer of the
client lives on it and sends through its context.

What it owns:

* ``topic_route_table`` (topic → TopicRouteData), ``broker_addr_table`` (broker name →
  {broker id → address}) and ``broker_version_table``, refreshed from the name server;
* ``producer_table`` and ``consumer_table`` (group → the group's impl);
* the scheduled tasks of ``startScheduledTask``, as timers named after the Java code:
  ``MQClientInstance.updateTopicRouteInfoFromNameServer`` (first after 10 ms, then every
  ``poll_name_server_interval``, 30 s), ``MQClientInstance.sendHeartbeatToAllBroker``
  (with ``cleanOfflineBroker``; first after 1 s, then every ``heartbeat_broker_interval``,
  30 s) and ``MQClientInstance.persistAllConsumerOffset`` (first after 10 s, then every
  ``persist_consumer_offset_interval``, 5 s).

What it must not know: how a consumer pulls or rebalances, or how a producer picks a queue.
Consumers are reached through the ``MQConsumerInner`` methods only (``group_name()``,
``subscriptions()``, ``update_topic_subscribe_info(...)``, ``do_rebalance()``...).

Where mqlab differs from Java: the client IP defaults to 127.0.0.1 and the instance name
``DEFAULT`` becomes the node name (Java: ``<pid>#<nanoTime>``); the inner producer
``CLIENT_INNER_PRODUCER`` (used by consumers to re-send failed messages) takes part in
heartbeats and route refreshes only while the instance has consumers (Java registers it
with every instance); Java's ``lockNamesrv`` / ``lockHeartbeat`` try-locks are not
modelled (the core is single-threaded), so heartbeats go to all brokers concurrently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqlab.client.client_config import DEFAULT_INSTANCE_NAME, ClientConfig
from mqlab.client.consumer.pull_message_service import PullMessageService
from mqlab.client.consumer.rebalance_service import RebalanceService
from mqlab.client.exception import MQBrokerException, MQClientException
from mqlab.client.mq_client_api_impl import MQClientAPIImpl
from mqlab.client.producer.topic_publish_info import ThreadLocalIndex, TopicPublishInfo
from mqlab.common import message_const as mc
from mqlab.common.frozen_init import fast_frozen_init
from mqlab.common.message import MessageQueue
from mqlab.common.message_client_id import MessageClientIDSetter
from mqlab.common.message_decoder import MessageDecodeError, decodes
from mqlab.common.mix_all import CLIENT_INNER_PRODUCER_GROUP, MASTER_ID
from mqlab.common.perm_name import PermName
from mqlab.remoting.bodies import (
    BrokerData,
    ConsumerData,
    HeartbeatData,
    ProducerData,
    TopicRouteData,
)
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads_json_body
from mqlab.remoting.headers import (
    CheckTransactionStateRequestHeader,
    NotifyConsumerIdsChangedRequestHeader,
)
from mqlab.runtime.context import Channel, Node, RemotingException
from mqlab.runtime.task import Sleep, Task, spawn
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    import random

    from mqlab.client.producer.default_mq_producer import DefaultMQProducer
    from mqlab.client.producer.default_mq_producer_impl import DefaultMQProducerImpl

__all__ = [
    "FindBrokerResult",
    "MQClientInstance",
    "topic_route_data_to_topic_publish_info",
    "topic_route_data_to_topic_subscribe_info",
]

Gen = Generator[Any, Any, Any]
C = "MQClientInstance"


@fast_frozen_init
@dataclass(frozen=True, slots=True)
class FindBrokerResult:
    """A broker node to talk to. Mirrors ``FindBrokerResult`` (client/impl)."""

    broker_addr: str
    slave: bool
    broker_version: int = 0


def topic_route_data_to_topic_publish_info(
    topic: str, route: TopicRouteData, rng: random.Random | None = None
) -> TopicPublishInfo:
    """The queues a producer may write: per broker (sorted), writable and with a master.

    Mirrors ``MQClientInstance#topicRouteData2TopicPublishInfo`` (client/impl/factory,
    RocketMQ 4.9.3); docs/reference.md §2.5. An ``orderTopicConf`` ("brokerName:queueNums;...") wins
    and marks the topic as ordered. ``rng`` seeds the round-robin cursor.
    """
    info = TopicPublishInfo(topic_route_data=route, send_which_queue=ThreadLocalIndex(rng))
    if route.order_topic_conf:
        for broker in route.order_topic_conf.split(";"):
            name, _, nums = broker.partition(":")
            info.message_queue_list.extend(MessageQueue(topic, name, i) for i in range(int(nums)))
        info.order_topic = True
        return info
    brokers = {bd.broker_name: bd for bd in reversed(route.broker_datas)}  # first one wins
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        if not PermName.is_writeable(qd.perm):
            continue
        bd = brokers.get(qd.broker_name)
        if bd is None or MASTER_ID not in bd.broker_addrs:
            continue
        info.message_queue_list.extend(
            MessageQueue(topic, qd.broker_name, i) for i in range(qd.write_queue_nums)
        )
    return info


def topic_route_data_to_topic_subscribe_info(
    topic: str, route: TopicRouteData
) -> set[MessageQueue]:
    """Every readable queue: queues 0..readQueueNums−1 of each readable QueueData.

    Mirrors ``MQClientInstance#topicRouteData2TopicSubscribeInfo``; docs/reference.md §2.5. (A set, as
    in Java: callers sort before using the order.)
    """
    return {
        MessageQueue(topic, qd.broker_name, i)
        for qd in route.queue_datas
        if PermName.is_readable(qd.perm)
        for i in range(qd.read_queue_nums)
    }


def _sorted_route(route: TopicRouteData) -> TopicRouteData:
    return dataclasses.replace(
        route,
        queue_datas=tuple(sorted(route.queue_datas, key=lambda q: q.broker_name)),
        broker_datas=tuple(sorted(route.broker_datas, key=lambda b: b.broker_name)),
    )


def topic_route_data_is_change(old: TopicRouteData | None, new: TopicRouteData | None) -> bool:
    """Mirrors ``MQClientInstance#topicRouteDataIsChange``: compare with both lists sorted."""
    if old is None or new is None:
        return True
    return _sorted_route(old) != _sorted_route(new)


class MQClientInstance(Node):
    """A client process as a node of a driver.

    Mirrors ``MQClientInstance`` (client/impl/factory, RocketMQ 4.9.3).

    Args:
        client_config: the client settings (copied; ``instance_name`` "DEFAULT" → ``name``).
        name: the node name (unique in the driver).
        rpc_hook: an ``RPCHook`` (``mqlab.acl.AclClientRPCHook``) run on every request this
            instance sends, to name servers and brokers alike (Java: the ``rpcHook`` that
            ``MQClientManager#getOrCreateMQClientInstance`` gives ``MQClientAPIImpl``, which
            registers it on its remoting client). Producers and consumers may bring it too
            (:meth:`register_rpc_hook`).
    """

    def __init__(
        self, client_config: ClientConfig | None = None, name: str = "client", rpc_hook: Any = None
    ) -> None:
        super().__init__(name, "")
        self._rpc_hooks: list[Any] = []
        if rpc_hook is not None:
            self.register_rpc_hook(rpc_hook)
        cfg = dataclasses.replace(client_config) if client_config else ClientConfig()
        if cfg.instance_name == DEFAULT_INSTANCE_NAME:
            cfg.instance_name = name  # Java: changeInstanceNameToPID → "<pid>#<nanoTime>"
        self.client_config = cfg
        self.client_id = cfg.build_mq_client_id()
        self.mq_client_api_impl = MQClientAPIImpl(self)
        self.topic_route_table: dict[str, TopicRouteData] = {}
        self.broker_addr_table: dict[str, dict[int, str]] = {}
        self.broker_version_table: dict[str, dict[str, int]] = {}
        self.producer_table: dict[str, DefaultMQProducerImpl] = {}
        self.consumer_table: dict[str, Any] = {}
        self.send_heartbeat_times_total = 0
        self._message_client_id_setter: MessageClientIDSetter | None = None
        self.pull_message_service = PullMessageService(self)
        self.rebalance_service = RebalanceService(self)
        # The inner producer (Java: new DefaultMQProducer(CLIENT_INNER_PRODUCER_GROUP)).
        from mqlab.client.producer.default_mq_producer import DefaultMQProducer

        self.default_mq_producer: DefaultMQProducer = DefaultMQProducer(
            CLIENT_INNER_PRODUCER_GROUP, self
        )
        self.default_mq_producer.default_mq_producer_impl.start(register=False)

    def __repr__(self) -> str:
        return f"MQClientInstance({self.name!r}, client_id={self.client_id!r})"

    # -- the remoting client's RPC hooks ------------------------------------------------------
    @property
    def ctx(self) -> Any:
        """The driver's context, behind this client's RPC hooks when it has any
        (``mqlab.client.rpc_hook_context``)."""
        try:
            return self._hooked_ctx
        except AttributeError:
            raise AttributeError("ctx: the instance is not on a driver yet") from None

    @ctx.setter
    def ctx(self, value: Any) -> None:
        self._driver_ctx = value
        self._wrap_ctx()

    def _wrap_ctx(self) -> None:
        if not hasattr(self, "_driver_ctx"):
            return
        ctx = self._driver_ctx
        if ctx is not None and self._rpc_hooks:
            from mqlab.client.rpc_hook_context import RpcHookContext

            self._hooked_ctx = RpcHookContext(ctx, self._rpc_hooks)
        else:
            self._hooked_ctx = ctx

    @property
    def rpc_hook(self) -> Any:
        """The hook this instance's requests pass (None: none)."""
        return self._rpc_hooks[0] if self._rpc_hooks else None

    def register_rpc_hook(self, rpc_hook: Any) -> None:
        """Run ``rpc_hook`` on every request this instance sends from now on.

        Mirrors ``MQClientAPIImpl``'s constructor (``remotingClient.registerRPCHook``). In
        Java the hook comes with the first producer or consumer that creates the instance
        (``MQClientManager#getOrCreateMQClientInstance``); a later one on the same client id
        is silently ignored, so its requests go out signed with the FIRST one's keys. mqlab
        refuses that case instead of hiding it.

        Raises:
            TypeError: not a hook (``do_before_request`` / ``do_after_response``).
            ValueError: the instance already has a different hook.
        """
        if not (hasattr(rpc_hook, "do_before_request") and hasattr(rpc_hook, "do_after_response")):
            raise TypeError(
                f"rpc_hook must be an RPCHook (do_before_request, do_after_response), got "
                f"{type(rpc_hook).__name__}"
            )
        if rpc_hook in self._rpc_hooks:
            return
        if self._rpc_hooks:
            raise ValueError(
                f"client {self.name!r} already sends with {self._rpc_hooks[0]!r}; Java's "
                "MQClientManager would silently keep that one for every producer and consumer "
                "of this client id. Give each account its own MQClientInstance."
            )
        self._rpc_hooks.append(rpc_hook)
        self._wrap_ctx()

    @property
    def attached(self) -> bool:
        """True once a driver gave this node a context."""
        return getattr(self, "ctx", None) is not None

    @property
    def message_client_id_setter(self) -> MessageClientIDSetter:
        """This client's UNIQ_KEY generator: pid and class-loader hash drawn from the RNG."""
        if self._message_client_id_setter is None:
            rng = self.ctx.rng("MessageClientIDSetter")
            self._message_client_id_setter = MessageClientIDSetter(
                self.client_config.client_ip, rng.randrange(1, 1 << 16), rng.getrandbits(32),
                self.ctx.now_ms,
            )  # fmt: skip
        return self._message_client_id_setter

    # -- lifecycle ---------------------------------------------------------------------------
    def on_start(self) -> None:
        """``MQClientInstance#start`` → ``startScheduledTask`` + the two services."""
        cfg = self.client_config
        ctx = self.ctx
        ctx.set_timer(
            C + ".updateTopicRouteInfoFromNameServer", 10, self._scheduled_update_route,
            period_ms=cfg.poll_name_server_interval, daemon=True,
        )  # fmt: skip
        ctx.set_timer(
            C + ".sendHeartbeatToAllBroker", 1000, self._scheduled_heartbeat,
            period_ms=cfg.heartbeat_broker_interval, daemon=True,
        )  # fmt: skip
        ctx.set_timer(
            C + ".persistAllConsumerOffset", 10_000, self.persist_all_consumer_offset,
            period_ms=cfg.persist_consumer_offset_interval, daemon=True,
        )  # fmt: skip
        self.pull_message_service.start()
        self.rebalance_service.start()
        holder = getattr(self, "request_future_holder", None)
        if holder is not None:  # producers started before the instance was on a driver
            holder.on_instance_start()
        if self.tracer.enabled:
            self.tracer.emit(C, "start", Kind.STATE, client_id=self.client_id,
                             text=f"client {self.client_id} started")  # fmt: skip

    def on_stop(self) -> Task:
        """Shut the consumers and producers down (offsets persisted, UNREGISTER_CLIENT sent),
        then the instance: its inner producer unregisters ``CLIENT_INNER_PRODUCER`` too.

        Mirrors the ``shutdown`` chain of DefaultMQPushConsumerImpl / DefaultMQProducerImpl
        → ``MQClientInstance#shutdown``, one client after the other as an application's
        calls would run. Java's shutdown calls block (an offset commit may first wait for a
        route refresh when the route has no master; each UNREGISTER_CLIENT waits for its
        answer), so this is a task; the driver stops the node when it ends.
        """
        return spawn(self.ctx, self._shutdown_clients(), name=C + ".shutdown",
                     on_done=self._done(C + ".shutdown"))  # fmt: skip

    def _shutdown_clients(self) -> Gen:
        for group in sorted(self.consumer_table):
            consumer = self.consumer_table.get(group)
            if consumer is None:
                continue
            under_way = getattr(consumer, "shutdown_task", None)
            if under_way is not None and not under_way.done:
                # Java's shutdown is synchronized: a second call waits for the first
                while not under_way.done:
                    yield Sleep(1)
                continue
            steps = getattr(consumer, "shutdown_steps", None)
            if steps is None:  # a consumer whose shutdown never waits
                consumer.shutdown()
            else:
                yield from steps()
        for group in sorted(self.producer_table):
            producer = self.producer_table.get(group)
            if producer is not None:
                yield from producer.shutdown_steps()
        # MQClientInstance#shutdown, once the last client is gone: the inner producer's
        # DefaultMQProducerImpl#shutdown(false) → unregisterProducer(CLIENT_INNER_PRODUCER)
        yield from self.unregister_client_steps(CLIENT_INNER_PRODUCER_GROUP, None)

    def _done(self, component: str) -> Any:
        """An ``on_done`` that records a failed task as an error event (Java logs it)."""

        def on_done(task: Task) -> None:
            if task.error is not None and self.tracer.enabled:
                self.tracer.emit(component, "exception", Kind.ERROR, error=repr(task.error),
                                 text=f"{component} failed: {task.error}")  # fmt: skip

        return on_done

    # -- registration ---------------------------------------------------------------------------
    def register_consumer(self, group: str, consumer: Any) -> bool:
        """Add a consumer group; False if the group is taken. Mirrors ``#registerConsumer``."""
        if group is None or consumer is None or group in self.consumer_table:
            return False
        self.consumer_table[group] = consumer
        return True

    def unregister_consumer(self, group: str) -> Gen:
        """Drop the group, then UNREGISTER_CLIENT to every broker, each answer awaited in
        turn (``unregister_client_steps``). Mirrors ``#unregisterConsumer``."""
        self.consumer_table.pop(group, None)
        yield from self.unregister_client_steps(None, group)

    def register_producer(self, group: str, producer: DefaultMQProducerImpl) -> bool:
        """Add a producer group; False if the group is taken. Mirrors ``#registerProducer``."""
        if group is None or producer is None or group in self.producer_table:
            return False
        self.producer_table[group] = producer
        return True

    def unregister_producer(self, group: str) -> Gen:
        """Drop the group, then UNREGISTER_CLIENT to every broker, each answer awaited in
        turn (``unregister_client_steps``). Mirrors ``#unregisterProducer``."""
        self.producer_table.pop(group, None)
        yield from self.unregister_client_steps(group, None)

    def select_consumer(self, group: str) -> Any:
        return self.consumer_table.get(group)

    def select_producer(self, group: str) -> DefaultMQProducerImpl | None:
        return self.producer_table.get(group)

    def _producers(self) -> list[tuple[str, DefaultMQProducerImpl]]:
        """Producer groups in name order, plus the inner producer while consumers exist."""
        items = dict(self.producer_table)
        if self.consumer_table and CLIENT_INNER_PRODUCER_GROUP not in items:
            items[CLIENT_INNER_PRODUCER_GROUP] = self.default_mq_producer.default_mq_producer_impl
        return sorted(items.items())

    def _consumers(self) -> list[tuple[str, Any]]:
        return sorted(self.consumer_table.items())

    def unregister_client_steps(self, producer_group: str | None,
                                consumer_group: str | None) -> Gen:  # fmt: skip
        """UNREGISTER_CLIENT to every known broker address (slaves too), one after the
        other: each waits for its answer or its ``mqClientApiTimeout`` (3 s) before the
        next is sent, and a failure is traced (Java logs a warning) and the next address
        follows. Mirrors ``MQClientInstance#unregisterClient`` (RocketMQ 4.9.3), which its
        callers run inside the client's ``shutdown``: the shutdown waits for all of them.
        """
        if not self.attached:
            return
        timeout = self.client_config.mq_client_api_timeout
        targets = [(name, addr) for name, addrs in sorted(self.broker_addr_table.items())
                   for _, addr in sorted(addrs.items()) if addr]  # fmt: skip
        tracer = self.tracer
        if tracer.enabled:
            tracer.emit(
                C + ".unregisterClient", "unregister", producer_group=producer_group,
                consumer_group=consumer_group, brokers=sorted(self.broker_addr_table),
                text=f"UNREGISTER_CLIENT (producer {producer_group}, consumer "
                f"{consumer_group}) to {len(targets)} address(es) of "
                f"{len(self.broker_addr_table)} broker(s), one after the other",
            )  # fmt: skip
        for name, addr in targets:
            try:
                yield from self.mq_client_api_impl.unregister_client(
                    addr, self.client_id, producer_group, consumer_group, timeout
                )
            except (RemotingException, MQBrokerException) as e:
                if tracer.enabled:
                    tracer.emit(
                        C + ".unregisterClient", "failed", Kind.ERROR, broker=name,
                        addr=addr, error=repr(e),
                        text=f"unregister client from broker {name} ({addr}) failed: {e}; "
                        "the next address follows",
                    )  # fmt: skip

    # -- routes -----------------------------------------------------------------------------------
    def _scheduled_update_route(self) -> None:
        spawn(self.ctx, self.update_all_topic_route_info_from_name_server(),
              name=C + ".updateTopicRouteInfoFromNameServer",
              on_done=self._done(C + ".updateTopicRouteInfoFromNameServer"))  # fmt: skip

    def update_all_topic_route_info_from_name_server(self) -> Gen:
        """Refresh the route of every subscribed and published topic, one after the other.

        Mirrors the no-argument ``MQClientInstance#updateTopicRouteInfoFromNameServer``
        (client/impl/factory, RocketMQ 4.9.3); docs/reference.md §2.7 step 6 (the producer side always
        includes TBW102, which every producer keeps in its publish table).
        """
        topics: set[str] = set()
        for _, consumer in self._consumers():
            topics.update(sd.topic for sd in consumer.subscriptions() or ())
        for _, producer in self._producers():
            topics.update(producer.get_publish_topic_list())
        for topic in sorted(topics):
            yield from self.update_topic_route_info_from_name_server(topic)

    def update_topic_route_info_from_name_server(
        self,
        topic: str,
        is_default: bool = False,
        default_mq_producer: Any = None,
    ) -> Gen:
        """Ask the name server for ``topic``'s route; on change, update every producer/consumer.

        Mirrors ``MQClientInstance#updateTopicRouteInfoFromNameServer(String, boolean,
        DefaultMQProducer)`` (client/impl/factory, RocketMQ 4.9.3); docs/reference.md §2.5. With
        ``is_default`` the producer's ``create_topic_key`` (TBW102) route is fetched instead
        and each QueueData is capped to ``min(default_topic_queue_nums, readQueueNums)``
        queues: that borrowed route is what lets the first send to a new topic reach a
        broker, which then creates the topic.

        Returns:
            True if the route changed (or someone needed it) and was stored.

        Raises:
            RemotingException: the name server did not answer (Java wraps it in an
                IllegalStateException that escapes to the caller).
        """
        api = self.mq_client_api_impl
        timeout = self.client_config.mq_client_api_timeout
        tracer = self.tracer
        comp = C + ".updateTopicRouteInfoFromNameServer"
        try:
            if is_default and default_mq_producer is not None:
                key = default_mq_producer.create_topic_key
                route = yield from api.get_default_topic_route_info_from_name_server(key, timeout)
                nums = default_mq_producer.default_topic_queue_nums
                route = dataclasses.replace(
                    route,
                    queue_datas=tuple(
                        dataclasses.replace(
                            qd,
                            read_queue_nums=min(nums, qd.read_queue_nums),
                            write_queue_nums=min(nums, qd.read_queue_nums),
                        )
                        for qd in route.queue_datas
                    ),
                )
            else:
                route = yield from api.get_topic_route_info_from_name_server(topic, timeout)
        except MQClientException as e:
            if tracer.enabled:
                tracer.emit(
                    comp, "route", topic=topic, default=is_default, code=e.response_code,
                    text=f"no route for {topic} in the name server (code {e.response_code})",
                )  # fmt: skip
            return False
        except RemotingException as e:
            if tracer.enabled:
                tracer.emit(comp, "route", Kind.ERROR, topic=topic, error=str(e),
                            text=f"route lookup of {topic} failed: {e}")  # fmt: skip
            raise
        old = self.topic_route_table.get(topic)
        changed = topic_route_data_is_change(old, route)
        if not changed:
            changed = self._is_need_update_topic_route_info(topic)
        if tracer.enabled:
            src = f"{default_mq_producer.create_topic_key}'s route" if is_default else "route"
            qds = ", ".join(
                f"{q.broker_name}:{q.write_queue_nums}w/{q.read_queue_nums}r"
                for q in route.queue_datas
            )
            tracer.emit(
                comp, "route", topic=topic, default=is_default, changed=changed,
                brokers=[b.broker_name for b in route.broker_datas],
                text=f"{topic}: {src} [{qds}]" + (" (changed)" if changed else ""),
            )  # fmt: skip
        if not changed:
            return False
        for bd in route.broker_datas:
            self.broker_addr_table[bd.broker_name] = dict(bd.broker_addrs)
        producers = self._producers()
        if producers:
            info = topic_route_data_to_topic_publish_info(
                topic, route, self.ctx.rng("TopicPublishInfo.sendWhichQueue")
            )
            info.have_topic_router_info = True
            for _, producer in producers:
                producer.update_topic_publish_info(topic, info)
        consumers = self._consumers()
        if consumers:
            subscribe_info = topic_route_data_to_topic_subscribe_info(topic, route)
            for _, consumer in consumers:
                consumer.update_topic_subscribe_info(topic, set(subscribe_info))
        self.topic_route_table[topic] = route
        return True

    def _is_need_update_topic_route_info(self, topic: str) -> bool:
        """Some producer lacks queues for the topic, or some consumer lacks its subscribe info."""
        for _, producer in self._producers():
            if producer.is_publish_topic_need_update(topic):
                return True
        for _, consumer in self._consumers():
            if consumer.is_subscribe_topic_need_update(topic):
                return True
        return False

    def get_an_exist_topic_route_data(self, topic: str) -> TopicRouteData | None:
        return self.topic_route_table.get(topic)

    # -- broker lookup --------------------------------------------------------------------------
    def find_broker_address_in_publish(self, broker_name: str) -> str | None:
        """The master's address. Mirrors ``#findBrokerAddressInPublish``."""
        return (self.broker_addr_table.get(broker_name) or {}).get(MASTER_ID)

    def find_broker_address_in_subscribe(
        self, broker_name: str, broker_id: int, only_this_broker: bool
    ) -> FindBrokerResult | None:
        """The node ``broker_id`` of ``broker_name``, else (a slave id) id+1, else any node.

        Mirrors ``MQClientInstance#findBrokerAddressInSubscribe`` (client/impl/factory,
        RocketMQ 4.9.3); docs/reference.md §10.14. "Any node" is the lowest id (Java takes the first
        entry of a ``HashMap<Long,String>``, which is the lowest small id).
        """
        addrs = self.broker_addr_table.get(broker_name)
        if not addrs:
            return None
        addr = addrs.get(broker_id)
        slave = broker_id != MASTER_ID
        found = addr is not None
        if not found and slave:
            addr = addrs.get(broker_id + 1)
            found = addr is not None
        if not found and not only_this_broker:
            first = min(addrs)
            addr, slave, found = addrs[first], first != MASTER_ID, True
        if not found or addr is None:
            return None
        return FindBrokerResult(addr, slave, self.find_broker_version(broker_name, addr))

    def find_broker_version(self, broker_name: str, broker_addr: str) -> int:
        """The ``version`` the broker's last heartbeat reply carried, 0 if none."""
        return self.broker_version_table.get(broker_name, {}).get(broker_addr, 0)

    def find_broker_addr_by_topic(self, topic: str) -> str | None:
        """A random broker of the topic's route: its master, else a random node.

        Mirrors ``MQClientInstance#findBrokerAddrByTopic`` + ``BrokerData#selectBrokerAddr``.
        """
        route = self.topic_route_table.get(topic)
        if route is None or not route.broker_datas:
            return None
        rng = self.ctx.rng("MQClientInstance.findBrokerAddrByTopic")
        bd: BrokerData = route.broker_datas[rng.randrange(len(route.broker_datas))]
        addr = bd.broker_addrs.get(MASTER_ID)
        if addr is None and bd.broker_addrs:
            ids = sorted(bd.broker_addrs)
            addr = bd.broker_addrs[ids[rng.randrange(len(ids))]]
        return addr

    def find_consumer_id_list(self, topic: str, group: str) -> Gen:
        """GET_CONSUMER_LIST_BY_GROUP at a random broker of ``topic``; None on failure.

        Mirrors ``MQClientInstance#findConsumerIdList`` (client/impl/factory, RocketMQ
        4.9.3); docs/reference.md §2.7 step 4.
        """
        addr = self.find_broker_addr_by_topic(topic)
        if addr is None:
            yield from self.update_topic_route_info_from_name_server(topic)
            addr = self.find_broker_addr_by_topic(topic)
        if addr is None:
            return None
        try:
            return (
                yield from self.mq_client_api_impl.get_consumer_id_list_by_group(
                    addr, group, self.client_config.mq_client_api_timeout
                )
            )
        except Exception as e:  # Java: catch (Exception) → log, null
            if self.tracer.enabled:
                self.tracer.emit(
                    C + ".findConsumerIdList", "exception", Kind.ERROR, group=group, addr=addr,
                    error=str(e), text=f"getConsumerIdListByGroup {group} at {addr} failed: {e}",
                )  # fmt: skip
            return None

    # -- heartbeats ----------------------------------------------------------------------------
    def _scheduled_heartbeat(self) -> None:
        self.clean_offline_broker()
        self.send_heartbeat_to_all_broker_with_lock()

    def clean_offline_broker(self) -> None:
        """Forget broker addresses no route mentions any more. Mirrors ``#cleanOfflineBroker``."""
        live = {
            addr
            for route in self.topic_route_table.values()
            for bd in route.broker_datas
            for addr in bd.broker_addrs.values()
        }
        removed = []
        for name in sorted(self.broker_addr_table):
            kept = {i: a for i, a in self.broker_addr_table[name].items() if a in live}
            removed += [a for a in self.broker_addr_table[name].values() if a not in live]
            if kept:
                self.broker_addr_table[name] = kept
            else:
                del self.broker_addr_table[name]
        if removed and self.tracer.enabled:
            self.tracer.emit(C + ".cleanOfflineBroker", "clean", removed=removed,
                             text=f"forget offline broker(s) {', '.join(removed)}")  # fmt: skip

    def prepare_heartbeat_data(self) -> HeartbeatData:
        """The HEART_BEAT body: every consumer group, then every producer group.

        Mirrors ``MQClientInstance#prepareHeartbeatData``; docs/reference.md §2.3.
        """
        consumers = tuple(
            ConsumerData(
                group_name=c.group_name(),
                consume_type=c.consume_type(),
                message_model=c.message_model(),
                consume_from_where=c.consume_from_where(),
                subscription_data_set=tuple(
                    sd.to_json_dict() for sd in sorted(c.subscriptions() or (), key=_sd_key)
                ),
                unit_mode=bool(c.is_unit_mode()),
            )
            for _, c in self._consumers()
        )
        producers = tuple(ProducerData(group_name=g) for g, _ in self._producers())
        return HeartbeatData(
            client_id=self.client_id, producer_data_set=producers, consumer_data_set=consumers
        )

    def send_heartbeat_to_all_broker_with_lock(self) -> None:
        """HEART_BEAT to every known broker node (only masters if there are no consumers).

        Mirrors ``MQClientInstance#sendHeartbeatToAllBrokerWithLock`` →
        ``#sendHeartbeatToAllBroker`` (client/impl/factory, RocketMQ 4.9.3); docs/reference.md §2.3,
        §2.7 step 3. Each reply's ``version`` is recorded as that node's broker version.
        """
        if not self.attached or not self.running:
            return
        hb = self.prepare_heartbeat_data()
        tracer = self.tracer
        comp = C + ".sendHeartbeatToAllBroker"
        if not hb.producer_data_set and not hb.consumer_data_set:
            if tracer.enabled:
                tracer.emit(comp, "heartbeat", text="sending heartbeat, but no consumer and "
                            "no producer")  # fmt: skip
            return
        if not self.broker_addr_table:
            return
        self.send_heartbeat_times_total += 1
        consumer_empty = not hb.consumer_data_set
        targets: list[tuple[str, int, str]] = []
        for broker_name, addrs in sorted(self.broker_addr_table.items()):
            for bid, addr in sorted(addrs.items()):
                if consumer_empty and bid != MASTER_ID:
                    continue
                targets.append((broker_name, bid, addr))
        if tracer.enabled:
            tracer.emit(
                comp, "heartbeat", brokers=[t[2] for t in targets],
                producers=[p.group_name for p in hb.producer_data_set],
                consumers=[c.group_name for c in hb.consumer_data_set],
                text=f"HEART_BEAT to {len(targets)} broker node(s): producers "
                f"{[p.group_name for p in hb.producer_data_set]}, consumers "
                f"{[c.group_name for c in hb.consumer_data_set]}",
            )  # fmt: skip
        for broker_name, _, addr in targets:
            spawn(self.ctx, self._send_heartbeat(broker_name, addr, hb),
                  name=f"{comp} {addr}", on_done=self._done(comp))  # fmt: skip

    def _send_heartbeat(self, broker_name: str, addr: str, hb: HeartbeatData) -> Gen:
        version = yield from self.mq_client_api_impl.send_heartbeat(
            addr, hb, self.client_config.mq_client_api_timeout
        )
        self.broker_version_table.setdefault(broker_name, {})[addr] = version
        return version

    # -- consumers ------------------------------------------------------------------------------
    def persist_all_consumer_offset(self) -> None:
        """Each consumer commits its offsets. Mirrors ``#persistAllConsumerOffset`` (every 5 s)."""
        for _, consumer in self._consumers():
            consumer.persist_consumer_offset()

    def rebalance_immediately(self) -> None:
        """Wake the rebalance service now. Mirrors ``#rebalanceImmediately``."""
        self.rebalance_service.wakeup()

    def do_rebalance(self) -> None:
        """Each consumer rebalances. Mirrors ``MQClientInstance#doRebalance``."""
        for _, consumer in self._consumers():
            consumer.do_rebalance()

    def reset_offset(self, topic: str, group: str, offset_table: dict[MessageQueue, int]) -> None:
        """A broker's RESET_CONSUMER_CLIENT_OFFSET: move a running push consumer's queues.

        Mirrors ``MQClientInstance#resetOffset`` (client/impl/factory, RocketMQ 4.9.3):
        step 1 pause the consumer (its pulls wait) and drop and clear the process queue of
        each of the topic's queues in the table (in-flight results are then ignored);
        step 2, after Java's ``TimeUnit.SECONDS.sleep(10)`` (a 10 s timer here), for each of
        those queues still held: set the offset store's offset (not increase-only), commit it
        and forget it (``removeUnnecessaryMessageQueue``) and remove the queue; step 3
        resume, which rebalances at once: the queues come back and their first pull starts
        at the offset just committed. A group that is not a push consumer here is ignored.
        """
        from mqlab.client.consumer.default_mq_push_consumer_impl import DefaultMQPushConsumerImpl

        impl = self.consumer_table.get(group)
        if not isinstance(impl, DefaultMQPushConsumerImpl):
            if self.tracer.enabled:
                self.tracer.emit("MQClientInstance.resetOffset", "1", Kind.ERROR, group=group,
                                 text=f"[reset-offset] consumer dose not exist. group={group}")  # fmt: skip
            return
        impl.suspend()
        pqt = impl.rebalance_impl.process_queue_table
        dropped = []
        for mq, pq in list(pqt.items()):
            if mq.topic == topic and mq in offset_table:
                pq.dropped = True
                pq.clear()
                dropped.append(str(mq))
        if self.tracer.enabled:
            self.tracer.emit("MQClientInstance.resetOffset", "1", group=group, topic=topic,
                             dropped=dropped,
                             text=f"reset {group}/{topic}: pause, drop {len(dropped)} queue(s), "
                             "wait 10 s")  # fmt: skip
        self.ctx.set_timer(
            "MQClientInstance.resetOffset", 10_000,
            lambda: self._reset_offset_after_sleep(impl, topic, group, offset_table),
            key=f"{group}@{topic}",
        )  # fmt: skip

    def _reset_offset_after_sleep(
        self, impl: Any, topic: str, group: str, offset_table: dict[MessageQueue, int]
    ) -> None:
        """Steps 2 and 3 of ``reset_offset``."""
        pqt = impl.rebalance_impl.process_queue_table
        moved = {}
        try:
            for mq in list(pqt):
                offset = offset_table.get(mq)
                if mq.topic == topic and offset is not None:
                    impl.offset_store.update_offset(mq, offset, False)
                    impl.rebalance_impl.remove_unnecessary_message_queue(mq, pqt.get(mq))
                    pqt.pop(mq, None)
                    moved[str(mq)] = offset
            if self.tracer.enabled:
                self.tracer.emit("MQClientInstance.resetOffset", "2", group=group, topic=topic,
                                 offsets=moved,
                                 text=f"reset {group}/{topic}: {len(moved)} queue offset(s) set "
                                 "and committed, resume")  # fmt: skip
        finally:
            impl.resume()

    # -- server-initiated requests ---------------------------------------------------------------
    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """NOTIFY_CONSUMER_IDS_CHANGED → rebalance now; RESET_CONSUMER_CLIENT_OFFSET → move
        the group's offsets (``reset_offset``); no reply to either; others unsupported.

        Mirrors ``ClientRemotingProcessor#processRequest`` /
        ``#notifyConsumerIdsChanged`` / ``#resetOffset`` (client/impl, RocketMQ 4.9.3);
        docs/reference.md §10.5.
        """
        if request.code == RequestCode.RESET_CONSUMER_CLIENT_OFFSET:
            table: dict[MessageQueue, int] = {}
            if request.body is not None:
                raw = loads_json_body(request.body).get("offsetTable") or {}
                table = {MessageQueue.from_json_dict(k.to_dict()): int(v) for k, v in raw.items()}
            self.reset_offset(request.ext("topic"), request.ext("group"), table)
            return None
        if request.code == RequestCode.CHECK_TRANSACTION_STATE:
            self.check_transaction_state(channel, request)
            return None
        if request.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
            h = NotifyConsumerIdsChangedRequestHeader.from_ext_fields(request.ext_fields)
            if self.tracer.enabled:
                self.tracer.emit(
                    "ClientRemotingProcessor.notifyConsumerIdsChanged", "notify",
                    group=h.consumer_group, frm=channel.remote_address,
                    text=f"consumer ids of {h.consumer_group} changed ({channel.remote_address})"
                    ", rebalance immediately",
                )  # fmt: skip
            self.rebalance_immediately()
            return None
        from mqlab.client.client_remoting_processor import ClientRemotingProcessor

        if request.code in ClientRemotingProcessor.CODES:  # 326, 307, 309, 221
            return ClientRemotingProcessor(self).process_request(channel, request)
        return super().process_request(channel, request)

    def check_transaction_state(self, channel: Channel, request: RemotingCommand) -> None:
        """CHECK_TRANSACTION_STATE (39): hand the check to the producer of the message's group.

        Mirrors ``ClientRemotingProcessor#checkTransactionState`` (client/impl, RocketMQ
        4.9.3): the body is the half message (as its real topic); the PGROUP property picks
        the producer, which answers with END_TRANSACTION to the broker that asked. No reply
        (the request is oneway). Java also copies the UNIQ_KEY into the message's
        transactionId; the check's header carries the same id here.
        """
        h = CheckTransactionStateRequestHeader.from_ext_fields(request.ext_fields)
        try:
            msgs = decodes(request.body or b"")
        except MessageDecodeError:
            msgs = []
        if not msgs:
            if self.tracer.enabled:
                self.tracer.emit("ClientRemotingProcessor.checkTransactionState", "decode",
                                 Kind.ERROR, text="checkTransactionState, decode message failed")  # fmt: skip
            return
        msg = msgs[0]
        group = msg.properties.get(mc.PROPERTY_PRODUCER_GROUP)
        producer = self.select_producer(group) if group is not None else None
        if producer is None:
            if self.tracer.enabled:
                self.tracer.emit("ClientRemotingProcessor.checkTransactionState", "select",
                                 Kind.ERROR, group=group,
                                 text=f"checkTransactionState, pick producer by group[{group}] "
                                 "failed")  # fmt: skip
            return
        producer.check_transaction_state(channel.remote_address, msg, h)

    # -- convenience ------------------------------------------------------------------------------
    def broker_addresses(self) -> Iterable[str]:
        """Every known broker address, sorted (for panels and tests)."""
        return sorted(a for addrs in self.broker_addr_table.values() for a in addrs.values())


def _sd_key(sd: Any) -> tuple[str, str]:
    return (sd.topic, sd.sub_string or "")
