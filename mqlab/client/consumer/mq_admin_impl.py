"""The offset look-ups a consumer makes outside the pull path: max, min, by time, queue lists.

Mirrors the consumer-facing part of ``MQAdminImpl`` (client/impl/MQAdminImpl.java, RocketMQ
4.9.3): ``maxOffset``, ``minOffset``, ``searchOffset``, ``earliestMsgStoreTime`` and
``fetchSubscribeMessageQueues``; mechanisms.md "Where a new queue starts" "computePullFromWhere" (``getMQAdminImpl().maxOffset``
for CONSUME_FROM_LAST_OFFSET, ``searchOffset`` for CONSUME_FROM_TIMESTAMP); docs/reference.md §10.11.

Each look-up finds the master of ``mq.brokerName`` in the publish routes, refreshes the route
once from the name server if it is unknown, then asks the broker (GET_MAX_OFFSET 30,
GET_MIN_OFFSET 31, SEARCH_OFFSET_BY_TIMESTAMP 29, GET_EARLIEST_MSG_STORETIME 32). Any failure
becomes ``MQClientException`` with Java's texts ("Invoke Broker[addr] exception", "The
broker[name] not exist"). Every function is a generator (``yield from``) because the RPCs are.

Lives with the consumer because only consumers use it in mqlab; Java keeps it in
``client/impl``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mqlab.client.exception import MQClientException
from mqlab.common.faq_url import MQLIST_NOT_EXIST, suggest_todo
from mqlab.common.message import MessageQueue
from mqlab.common.perm_name import PermName

__all__ = ["MQAdminImpl", "topic_route_data_to_topic_subscribe_info", "TIMEOUT_MILLIS"]

#: ``MQAdminImpl.timeoutMillis``.
TIMEOUT_MILLIS = 6000

Gen = Generator[Any, Any, Any]


def topic_route_data_to_topic_subscribe_info(topic: str, route: Any) -> set[MessageQueue]:
    """Queues 0..readQueueNums−1 of every readable QueueData (docs/reference.md §2.5 "Subscribe queues").

    Mirrors MQClientInstance#topicRouteData2TopicSubscribeInfo (RocketMQ 4.9.3).
    """
    result: set[MessageQueue] = set()
    for qd in route.queue_datas:
        if PermName.is_readable(qd.perm):
            for i in range(qd.read_queue_nums):
                result.add(MessageQueue(topic, qd.broker_name, i))
    return result


class MQAdminImpl:
    """Mirrors the consumer half of ``MQAdminImpl`` (client/impl, RocketMQ 4.9.3).

    Args:
        mq_client_factory: the ``MQClientInstance`` (routes and ``mq_client_api_impl``).
    """

    def __init__(self, mq_client_factory: Any, timeout_millis: int = TIMEOUT_MILLIS) -> None:
        self.mq_client_factory = mq_client_factory
        self.timeout_millis = timeout_millis

    def _broker_addr(self, mq: MessageQueue) -> Gen:
        factory = self.mq_client_factory
        addr = factory.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            yield from factory.update_topic_route_info_from_name_server(mq.topic)
            addr = factory.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            raise MQClientException(-1, f"The broker[{mq.broker_name}] not exist")
        return addr

    def _invoke(self, mq: MessageQueue, call_name: str, *args: Any) -> Gen:
        addr = yield from self._broker_addr(mq)
        api = self.mq_client_factory.mq_client_api_impl
        try:
            return (yield from getattr(api, call_name)(addr, mq.topic, mq.queue_id, *args))
        except MQClientException:
            raise
        except Exception as e:  # noqa: BLE001 — Java wraps every failure the same way
            raise MQClientException(-1, f"Invoke Broker[{addr}] exception") from e

    def max_offset(self, mq: MessageQueue) -> Gen:
        """GET_MAX_OFFSET for ``mq``. Mirrors MQAdminImpl#maxOffset."""
        return (yield from self._invoke(mq, "get_max_offset", self.timeout_millis))

    def min_offset(self, mq: MessageQueue) -> Gen:
        """GET_MIN_OFFSET for ``mq``. Mirrors MQAdminImpl#minOffset."""
        return (yield from self._invoke(mq, "get_min_offset", self.timeout_millis))

    def search_offset(self, mq: MessageQueue, timestamp: int) -> Gen:
        """SEARCH_OFFSET_BY_TIMESTAMP. Mirrors MQAdminImpl#searchOffset."""
        return (yield from self._invoke(mq, "search_offset", timestamp, self.timeout_millis))

    def earliest_msg_store_time(self, mq: MessageQueue) -> Gen:
        """GET_EARLIEST_MSG_STORETIME. Mirrors MQAdminImpl#earliestMsgStoreTime."""
        return (yield from self._invoke(mq, "get_earliest_msg_storetime", self.timeout_millis))

    def fetch_subscribe_message_queues(self, topic: str) -> Gen:
        """The readable queues of ``topic`` from a fresh name-server route.

        Mirrors MQAdminImpl#fetchSubscribeMessageQueues (RocketMQ 4.9.3).

        Raises:
            MQClientException: no route, or the route has no readable queue.
        """
        api = self.mq_client_factory.mq_client_api_impl
        try:
            route = yield from api.get_topic_route_info_from_name_server(topic, self.timeout_millis)
            mqs = topic_route_data_to_topic_subscribe_info(topic, route)
            if not mqs:
                raise MQClientException(
                    -1, f"Can not find Message Queue for this topic, {topic} Namesrv return empty"
                )
        except Exception as e:  # noqa: BLE001 — Java's catch (Exception e) also wraps the
            # "Namesrv return empty" it threw inside the try: the caller sees this text
            raise MQClientException(
                -1,
                f"Can not find Message Queue for this topic, {topic}"
                + suggest_todo(MQLIST_NOT_EXIST),
            ) from e
        return mqs
