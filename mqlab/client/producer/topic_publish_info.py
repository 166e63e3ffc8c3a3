"""A producer's view of one topic's writable queues, and its round-robin cursor.

Mirrors ``TopicPublishInfo`` (client/impl/producer) and ``ThreadLocalIndex``
(client/common), RocketMQ 4.9.3; docs/reference.md §2.5 ("Client use": publish queues are, for each
QueueData sorted by broker name, writable and with a master, queues
0..writeQueueNums−1).

Queue choice (``selectOneMessageQueue``): a counter starts at ``|random int|`` the first
time it is used and is incremented before every choice; the queue is
``|counter| % len(queues)``. On a retry the previous broker is avoided: up to ``len``
candidates are tried and the first one on another broker wins, else any queue. Java keeps
the counter per thread; mqlab's core is single-threaded, so there is one counter per
``TopicPublishInfo``, drawn from an RNG the client instance hands in (deterministic per
seed). Java's 32-bit wrap-around and ``Math.abs(Integer.MIN_VALUE)`` quirk are kept.

This module knows queues and counters only: no routes on the wire, no sending.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mqlab.common.message import MessageQueue
from mqlab.remoting.bodies import TopicRouteData

__all__ = ["ThreadLocalIndex", "TopicPublishInfo"]

_INT_MIN = -(1 << 31)


def _int32(v: int) -> int:
    """Java ``int`` wrap-around."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _java_abs(v: int) -> int:
    """``Math.abs(int)``: ``Integer.MIN_VALUE`` stays negative."""
    return v if v == _INT_MIN else abs(v)


def _java_rem(a: int, n: int) -> int:
    """Java ``%``: the sign follows the dividend."""
    r = abs(a) % n
    return -r if a < 0 else r


class ThreadLocalIndex:
    """The send-queue cursor. Mirrors ``ThreadLocalIndex`` (client/common, RocketMQ 4.9.3).

    Args:
        rng: where the start value comes from (Java: ``Math.abs(new Random().nextInt())``);
            ``None`` starts at 0.
    """

    __slots__ = ("_rng", "_index")

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng
        self._index: int | None = None

    @property
    def value(self) -> int | None:
        """The current counter (None before the first use)."""
        return self._index

    def _ensure_started(self) -> int:
        if self._index is None:
            start = 0 if self._rng is None else _int32(self._rng.getrandbits(32))
            self._index = _java_abs(start)
        return self._index

    def increment_and_get(self) -> int:
        """Draw the start on first use, add 1 (32-bit), return ``Math.abs`` of it."""
        self._index = _int32(self._ensure_started() + 1)
        return _java_abs(self._index)

    def peek(self) -> int:
        """What ``increment_and_get`` will return next, without moving (draws the start).

        Not in Java; lets a lesson (or a test) say which queue the next send will use.
        """
        return _java_abs(_int32(self._ensure_started() + 1))

    def __repr__(self) -> str:
        return f"ThreadLocalIndex{{threadLocalIndex={self._index}}}"


@dataclass(slots=True, eq=False)
class TopicPublishInfo:
    """The queues a producer may send a topic's messages to.

    Mirrors ``TopicPublishInfo`` (client/impl/producer, RocketMQ 4.9.3).
    """

    order_topic: bool = False
    have_topic_router_info: bool = False
    message_queue_list: list[MessageQueue] = field(default_factory=list)
    send_which_queue: ThreadLocalIndex = field(default_factory=ThreadLocalIndex)
    topic_route_data: TopicRouteData | None = None

    def ok(self) -> bool:
        """There is at least one queue. Mirrors ``TopicPublishInfo#ok``."""
        return bool(self.message_queue_list)

    def select_one_message_queue(self, last_broker_name: str | None = None) -> MessageQueue:
        """Round-robin, avoiding ``last_broker_name`` when given (a retry).

        Mirrors ``TopicPublishInfo#selectOneMessageQueue`` (both overloads), which
        ``MQFaultStrategy#selectOneMessageQueue`` calls when ``sendLatencyFaultEnable`` is
        false (the default; docs/reference.md §8.4).

        Raises:
            ValueError: the list is empty (callers check ``ok()`` first, as Java does).
        """
        n = len(self.message_queue_list)
        if n == 0:
            raise ValueError("select_one_message_queue on a TopicPublishInfo with no queues")
        if last_broker_name is not None:
            for _ in range(n):
                mq = self.message_queue_list[self._pos(n)]
                if mq.broker_name != last_broker_name:
                    return mq
        return self.message_queue_list[self._pos(n)]

    def _pos(self, n: int) -> int:
        index = self.send_which_queue.increment_and_get()
        pos = _java_rem(_java_abs(index), n)
        return 0 if pos < 0 else pos

    def get_queue_id_by_broker(self, broker_name: str) -> int:
        """The broker's write queue count, −1 if absent. Mirrors ``#getQueueIdByBroker``."""
        if self.topic_route_data is not None:
            for qd in self.topic_route_data.queue_datas:
                if qd.broker_name == broker_name:
                    return qd.write_queue_nums
        return -1
