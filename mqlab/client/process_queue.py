"""The push consumer's per-queue buffer of pulled, not yet acknowledged messages.

Mirrors ``ProcessQueue`` (client/impl/consumer/ProcessQueue.java, RocketMQ 4.9.3); mechanisms.md "Consumption"
"ProcessQueue#putMessage / #removeMessage / #cleanExpiredMsg", mechanisms.md "The consumer's pull loop" (flow control reads
``msg_count``, ``msg_size`` and ``get_max_span``); docs/reference.md §10.13 and §9 (constants).

What this module owns: for one message queue, the messages between "pulled" and "consumed"
keyed by queue offset (``msg_tree_map``), their count and body bytes, the orderly-consumption
side map, and the flags and timestamps rebalance reads (dropped, locked, last pull / consume /
lock). The offset to commit is *the smallest offset still buffered*: a slow message holds the
consumer offset back, which is why ``get_max_span`` exists.

What it must not know: clocks (every time is a ``now_ms`` argument; ``clean_expired_msg``, which
waits on send-backs, takes a ``now`` callable), threads (Java's read/write lock and
``consumeLock`` vanish: the core is single-threaded), brokers or offset stores (sending an
expired message back is a generator function handed in).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mqlab.common import message_const as mc
from mqlab.common.message import MessageExt

__all__ = [
    "PULL_MAX_IDLE_TIME",
    "REBALANCE_LOCK_INTERVAL",
    "REBALANCE_LOCK_MAX_LIVE_TIME",
    "OffsetTreeMap",
    "ProcessQueue",
]

# docs/reference.md §9; Java reads each from a system property (named in the comment) with this default.
REBALANCE_LOCK_MAX_LIVE_TIME = 30000  # ms; rocketmq.client.rebalance.lockMaxLiveTime
REBALANCE_LOCK_INTERVAL = (
    20000  # ms between orderly lockAll; rocketmq.client.rebalance.lockInterval
)
PULL_MAX_IDLE_TIME = (
    120000  # ms without a pull before rebalance drops the queue; ...pullMaxIdleTime
)

_MIB = 1024 * 1024
_CLEAN_EXPIRED_MAX_LOOP = 16
_EXPIRED_MSG_DELAY_LEVEL = 3


class OffsetTreeMap:
    """A map queue offset → message iterated in offset order: the ``TreeMap<Long, MessageExt>``.

    A dict for lookup plus a sorted list of keys with a moving head index. NOTE: performance —
    pulled batches arrive in offset order, so ``put`` is an O(1) append and removing or polling
    the first key (what concurrent and orderly consumption do) is an O(1) head move, amortised
    by compaction; other inserts and deletes are a bisect plus a list memmove. Taking 10 000
    messages from a 102 400-message queue one by one stays linear (docs/reference.md §11 ProcessQueueTest).
    """

    __slots__ = ("_map", "_keys", "_head")

    _COMPACT_MIN_HEAD = 1024  # compact the key list once this many dead slots lead it

    def __init__(self) -> None:
        self._map: dict[int, MessageExt] = {}
        self._keys: list[int] = []
        self._head = 0

    # -- reading ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._map)

    def __bool__(self) -> bool:
        return bool(self._map)

    def __contains__(self, offset: object) -> bool:
        return offset in self._map

    def __getitem__(self, offset: int) -> MessageExt:
        return self._map[offset]

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys[self._head :])

    def __repr__(self) -> str:
        if not self._map:
            return "OffsetTreeMap({})"
        return (
            f"OffsetTreeMap(<{len(self)} messages, offsets {self.first_key()}..{self.last_key()}>)"
        )

    def get(self, offset: int) -> MessageExt | None:
        return self._map.get(offset)

    def keys(self) -> list[int]:
        """Offsets in ascending order (a snapshot)."""
        return self._keys[self._head :]

    def values(self) -> list[MessageExt]:
        """Messages in offset order (a snapshot)."""
        m = self._map
        return [m[k] for k in self._keys[self._head :]]

    def items(self) -> list[tuple[int, MessageExt]]:
        """``(offset, message)`` pairs in offset order (a snapshot)."""
        m = self._map
        return [(k, m[k]) for k in self._keys[self._head :]]

    def first_key(self) -> int:
        """``TreeMap#firstKey``. Raises KeyError when empty (Java: NoSuchElementException)."""
        if not self._map:
            raise KeyError("first_key of an empty OffsetTreeMap")
        return self._keys[self._head]

    def last_key(self) -> int:
        """``TreeMap#lastKey``. Raises KeyError when empty (Java: NoSuchElementException)."""
        if not self._map:
            raise KeyError("last_key of an empty OffsetTreeMap")
        return self._keys[-1]

    def first_entry(self) -> tuple[int, MessageExt] | None:
        """``TreeMap#firstEntry``: the smallest ``(offset, message)``, or None when empty."""
        if not self._map:
            return None
        k = self._keys[self._head]
        return k, self._map[k]

    def last_entry(self) -> tuple[int, MessageExt] | None:
        """``TreeMap#lastEntry``: the largest ``(offset, message)``, or None when empty."""
        if not self._map:
            return None
        k = self._keys[-1]
        return k, self._map[k]

    # -- writing ---------------------------------------------------------------------------------
    def put(self, offset: int, msg: MessageExt) -> MessageExt | None:
        """``TreeMap#put``: store ``msg`` at ``offset``; return the message it replaced, if any."""
        old = self._map.get(offset)
        self._map[offset] = msg
        if old is None:
            keys = self._keys
            if len(keys) == self._head or offset > keys[-1]:
                keys.append(offset)  # the in-order append of a pulled batch
            else:
                insort(keys, offset, lo=self._head)
        return old

    def put_all(self, other: OffsetTreeMap) -> None:
        """``TreeMap#putAll``."""
        for k, v in other.items():
            self.put(k, v)

    def remove(self, offset: int) -> MessageExt | None:
        """``TreeMap#remove``: drop ``offset``; return its message, or None if absent."""
        msg = self._map.pop(offset, None)
        if msg is not None:
            keys = self._keys
            if keys[self._head] == offset:
                self._advance_head()
            else:
                del keys[bisect_left(keys, offset, lo=self._head)]
        return msg

    def poll_first_entry(self) -> tuple[int, MessageExt] | None:
        """``TreeMap#pollFirstEntry``: remove and return the smallest entry, None when empty."""
        if not self._map:
            return None
        k = self._keys[self._head]
        msg = self._map.pop(k)
        self._advance_head()
        return k, msg

    def clear(self) -> None:
        self._map.clear()
        self._keys.clear()
        self._head = 0

    def _advance_head(self) -> None:
        self._head += 1
        keys = self._keys
        if self._head == len(keys):
            keys.clear()
            self._head = 0
        elif self._head > self._COMPACT_MIN_HEAD and self._head * 2 > len(keys):
            del keys[: self._head]
            self._head = 0


@dataclass(slots=True, init=False, eq=False, repr=False)
class ProcessQueue:
    """The messages of one queue between pull and acknowledgement, and the queue's flags.

    Mirrors ``ProcessQueue`` (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.13. Java starts
    all three timestamps at ``System.currentTimeMillis()``; here the creator passes ``now_ms``.
    Equality is identity, as in Java (no ``equals``).

    Args:
        now_ms: the creation time, the initial last pull / consume / lock timestamp.
    """

    msg_tree_map: OffsetTreeMap
    msg_count: int
    msg_size: int
    consuming_msg_orderly_tree_map: OffsetTreeMap
    try_unlock_times: int
    queue_offset_max: int
    dropped: bool
    last_pull_timestamp: int
    last_consume_timestamp: int
    locked: bool
    last_lock_timestamp: int
    consuming: bool
    msg_acc_cnt: int

    def __init__(self, now_ms: int) -> None:
        if not isinstance(now_ms, int):
            raise TypeError(f"now_ms must be an int (ms), got {now_ms!r}")
        self.msg_tree_map = OffsetTreeMap()
        self.msg_count = 0
        self.msg_size = 0
        # A subset of msg_tree_map's messages, only used when consuming orderly.
        self.consuming_msg_orderly_tree_map = OffsetTreeMap()
        self.try_unlock_times = 0
        self.queue_offset_max = 0
        self.dropped = False
        self.last_pull_timestamp = now_ms
        self.last_consume_timestamp = now_ms
        self.locked = False
        self.last_lock_timestamp = now_ms
        self.consuming = False
        self.msg_acc_cnt = 0

    def __repr__(self) -> str:
        return (
            f"ProcessQueue(msg_count={self.msg_count}, msg_size={self.msg_size}, "
            f"max_span={self.get_max_span()}, queue_offset_max={self.queue_offset_max}, "
            f"consuming={self.consuming}, dropped={self.dropped}, locked={self.locked})"
        )

    # -- expiry ----------------------------------------------------------------------------------
    def is_lock_expired(self, now_ms: int) -> bool:
        """True when the last lock is more than 30 000 ms old (strictly).

        Mirrors ProcessQueue#isLockExpired (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.13.
        """
        return now_ms - self.last_lock_timestamp > REBALANCE_LOCK_MAX_LIVE_TIME

    def is_pull_expired(self, now_ms: int) -> bool:
        """True when no pull started for more than 120 000 ms (strictly).

        Mirrors ProcessQueue#isPullExpired (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Consumption"
        "updateProcessQueueTableInRebalance"; docs/reference.md §10.11, §10.13.
        """
        return now_ms - self.last_pull_timestamp > PULL_MAX_IDLE_TIME

    def clean_expired_msg(
        self,
        now: Callable[[], int],
        consume_timeout_minutes: int,
        send_back: Callable[[MessageExt, int], Generator[Any, Any, bool]],
        *,
        consume_orderly: bool = False,
    ) -> Generator[Any, Any, int]:
        """Send the oldest messages whose consumption has run too long back to the broker.

        Mirrors ProcessQueue#cleanExpiredMsg (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Consumption"
        "ProcessQueue#cleanExpiredMsg" lines 2–48; docs/reference.md §10.13. Run every
        ``consume_timeout_minutes`` by the concurrent consume service, as a task: each
        send-back is a synchronous RPC in Java, and the message is removed only after it
        returned (ProcessQueue.java:107-129).

        Args:
            now: the clock (Java reads ``System.currentTimeMillis()`` in every round).
            consume_timeout_minutes: ``consumeTimeout`` (15 by default).
            send_back: a generator function, ``DefaultMQPushConsumer#sendMessageBack(msg,
                delayLevel)``; returns False where Java would throw (the message then stays
                cached and the loop goes on).
            consume_orderly: orderly consumers never clean (Java returns at once).

        Returns:
            How many messages were sent back.
        """
        # mechanisms.md "Consumption" span 2-5: orderly consumption never expires messages
        if consume_orderly:
            return 0
        timeout_ms = consume_timeout_minutes * 60 * 1000
        sent_back = 0
        # mechanisms.md "Consumption" span 7-9: at most 16 rounds (fewer if fewer messages are buffered)
        for _ in range(min(len(self.msg_tree_map), _CLEAN_EXPIRED_MAX_LOOP)):
            # mechanisms.md "Consumption" span 10-25: the first message, if its consumption started too long ago
            first = self.msg_tree_map.first_entry()
            if first is None:
                break
            msg = first[1]
            start = msg.properties.get(mc.PROPERTY_CONSUME_START_TIMESTAMP)
            if not start or now() - int(start) <= timeout_ms:
                break
            # mechanisms.md "Consumption" span 29: send it back with delay level 3; a failure skips the removal
            if not (yield from send_back(msg, _EXPIRED_MSG_DELAY_LEVEL)):
                continue
            sent_back += 1
            # mechanisms.md "Consumption" span 32-48: remove it if it is still the first message
            if self.msg_tree_map and msg.queue_offset == self.msg_tree_map.first_key():
                self.remove_message([msg], now())
        return sent_back

    # -- concurrent consumption ------------------------------------------------------------------
    def put_message(self, msgs: Sequence[MessageExt]) -> bool:
        """Buffer a pulled batch; return True if an orderly consume request should be submitted.

        Mirrors ProcessQueue#putMessage (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Consumption"
        "ProcessQueue#putMessage"; docs/reference.md §10.13. Only offsets not yet buffered count toward
        ``msg_count`` / ``msg_size`` and move ``queue_offset_max``.

        Returns:
            ``dispatchToConsume``: True when the map is non-empty and nobody was consuming.
        """
        dispatch_to_consume = False
        tree = self.msg_tree_map
        valid_msg_cnt = 0
        for msg in msgs:
            if tree.put(msg.queue_offset, msg) is None:
                valid_msg_cnt += 1
                self.queue_offset_max = msg.queue_offset
                self.msg_size += len(msg.body)
        self.msg_count += valid_msg_cnt

        if tree and not self.consuming:
            dispatch_to_consume = True
            self.consuming = True

        if msgs:
            last = msgs[-1]
            max_offset = last.properties.get(mc.PROPERTY_MAX_OFFSET)
            if max_offset is not None:
                acc_total = int(max_offset) - last.queue_offset
                if acc_total > 0:
                    self.msg_acc_cnt = acc_total
        return dispatch_to_consume

    def get_max_span(self) -> int:
        """Largest minus smallest buffered offset (0 when empty); flow control caps it at 2000.

        Mirrors ProcessQueue#getMaxSpan (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.13,
        §10.14.
        """
        tree = self.msg_tree_map
        if not tree:
            return 0
        return tree.last_key() - tree.first_key()

    def remove_message(self, msgs: Iterable[MessageExt], now_ms: int | None = None) -> int:
        """Drop consumed messages; return the offset the consumer may now commit.

        Mirrors ProcessQueue#removeMessage (client/impl/consumer, RocketMQ 4.9.3); mechanisms.md "Consumption"
        "ProcessQueue#removeMessage"; docs/reference.md §10.13.

        Args:
            msgs: the consumed (or successfully sent back) messages.
            now_ms: when given, becomes ``last_consume_timestamp`` (Java always stamps it).

        Returns:
            −1 if nothing was buffered; else the smallest offset still buffered, or
            ``queue_offset_max + 1`` when the map is now empty.
        """
        result = -1
        if now_ms is not None:
            self.last_consume_timestamp = now_ms
        tree = self.msg_tree_map
        if tree:
            result = self.queue_offset_max + 1
            removed_cnt = 0
            for msg in msgs:
                if tree.remove(msg.queue_offset) is not None:
                    removed_cnt += 1
                    self.msg_size -= len(msg.body)
            self.msg_count -= removed_cnt
            if tree:
                result = tree.first_key()
        return result

    # -- orderly consumption ---------------------------------------------------------------------
    def take_messages(self, batch_size: int, now_ms: int) -> list[MessageExt]:
        """Move up to ``batch_size`` first messages into the orderly in-flight map.

        Mirrors ProcessQueue#takeMessages (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.13.
        Count and size are unchanged until :meth:`commit`. An empty result clears ``consuming``.
        """
        self.last_consume_timestamp = now_ms
        result: list[MessageExt] = []
        tree = self.msg_tree_map
        consuming_map = self.consuming_msg_orderly_tree_map
        if tree:
            for _ in range(batch_size):
                entry = tree.poll_first_entry()
                if entry is None:
                    break
                result.append(entry[1])
                consuming_map.put(entry[0], entry[1])
        if not result:
            self.consuming = False
        return result

    def commit(self) -> int:
        """Forget the in-flight orderly messages; return the offset after the last of them.

        Mirrors ProcessQueue#commit (client/impl/consumer, RocketMQ 4.9.3); docs/reference.md §10.13.

        Returns:
            last in-flight offset + 1, or −1 when nothing is in flight. (Java's
            ``lastKey()`` on an empty map throws instead; its callers never commit without
            having taken messages, so −1 is never seen there.)
        """
        consuming_map = self.consuming_msg_orderly_tree_map
        if not consuming_map:
            return -1
        offset = consuming_map.last_key()
        self.msg_count -= len(consuming_map)
        for msg in consuming_map.values():
            self.msg_size -= len(msg.body)
        consuming_map.clear()
        return offset + 1

    def rollback(self) -> None:
        """Put every in-flight orderly message back to be consumed again.

        Mirrors ProcessQueue#rollback (client/impl/consumer, RocketMQ 4.9.3).
        """
        self.msg_tree_map.put_all(self.consuming_msg_orderly_tree_map)
        self.consuming_msg_orderly_tree_map.clear()

    def make_message_to_consume_again(self, msgs: Iterable[MessageExt]) -> None:
        """Put the given in-flight orderly messages back to be consumed again.

        Mirrors ProcessQueue#makeMessageToConsumeAgain (client/impl/consumer, RocketMQ 4.9.3);
        used for SUSPEND_CURRENT_QUEUE_A_MOMENT (docs/reference.md §10.16).
        """
        for msg in msgs:
            self.consuming_msg_orderly_tree_map.remove(msg.queue_offset)
            self.msg_tree_map.put(msg.queue_offset, msg)

    # -- bookkeeping -----------------------------------------------------------------------------
    def has_temp_message(self) -> bool:
        """True if messages are buffered. Mirrors ProcessQueue#hasTempMessage."""
        return bool(self.msg_tree_map)

    def clear(self) -> None:
        """Drop every buffered message and reset count, size and ``queue_offset_max``.

        Mirrors ProcessQueue#clear (client/impl/consumer, RocketMQ 4.9.3).
        """
        self.msg_tree_map.clear()
        self.consuming_msg_orderly_tree_map.clear()
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0

    def inc_try_unlock_times(self) -> None:
        """Mirrors ProcessQueue#incTryUnlockTimes (a failed delayed unlock, docs/reference.md §10.11)."""
        self.try_unlock_times += 1

    @property
    def cached_msg_size_in_mib(self) -> int:
        """``msg_size`` in whole MiB (floor), as flow control and ``ProcessQueueInfo`` show it.

        Mirrors ``msgSize / (1024 * 1024)`` in DefaultMQPushConsumerImpl#pullMessage and
        ProcessQueue#fillProcessQueueInfo (RocketMQ 4.9.3); docs/reference.md §10.14, §11.
        """
        return self.msg_size // _MIB
