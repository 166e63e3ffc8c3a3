"""Tests for mqlab.client.process_queue (ProcessQueueTest and docs/reference.md §10.13 behaviour).

Vectors from docs/reference.md §11 "Client consumer internals"; constants from docs/reference.md §9.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlab.client.process_queue import (
    PULL_MAX_IDLE_TIME,
    REBALANCE_LOCK_INTERVAL,
    REBALANCE_LOCK_MAX_LIVE_TIME,
    OffsetTreeMap,
    ProcessQueue,
)
from mqlab.common.message import MessageExt

CONSUME_TIMEOUT_MS = 15 * 60 * 1000


def msg(offset: int, body_len: int = 123, **props: str) -> MessageExt:
    return MessageExt(queue_offset=offset, body=bytes(body_len), properties=dict(props))


def create_message_list(count: int = 100) -> list[MessageExt]:
    """ProcessQueueTest#createMessageList: offsets 0..count-1, 123-byte bodies."""
    return [msg(i) for i in range(count)]


def test_constants():
    """PULL_MAX_IDLE_TIME 120000, REBALANCE_LOCK_MAX_LIVE_TIME 30000, REBALANCE_LOCK_INTERVAL 20000; docs/reference.md §9."""
    assert (PULL_MAX_IDLE_TIME, REBALANCE_LOCK_MAX_LIVE_TIME, REBALANCE_LOCK_INTERVAL) == (
        120000,
        30000,
        20000,
    )


def test_new_process_queue_state():
    """A new queue is empty, not dropped/locked/consuming, all timestamps = creation time; docs/reference.md §10.13."""
    pq = ProcessQueue(5000)
    assert (pq.msg_count, pq.msg_size, pq.queue_offset_max, pq.msg_acc_cnt) == (0, 0, 0, 0)
    assert (pq.dropped, pq.locked, pq.consuming, pq.try_unlock_times) == (False, False, False, 0)
    assert pq.last_pull_timestamp == pq.last_consume_timestamp == pq.last_lock_timestamp == 5000
    assert not pq.has_temp_message()
    assert pq.get_max_span() == 0
    with pytest.raises(TypeError, match="now_ms"):
        ProcessQueue(1.5)  # type: ignore[arg-type]


def test_cached_message_count():
    """put 100 → 100; takeMessages(10)+commit → 90; removeMessage(last) → 89 (testCachedMessageCount); docs/reference.md §11."""
    pq = ProcessQueue(0)
    pq.put_message(create_message_list())
    assert pq.msg_count == 100
    pq.take_messages(10, 0)
    pq.commit()
    assert pq.msg_count == 90
    pq.remove_message([pq.msg_tree_map.last_entry()[1]])
    assert pq.msg_count == 89


def test_cached_message_size():
    """Size 100×123 = 12300 → 90×123 = 11070 → 89×123 = 10947 (testCachedMessageSize); docs/reference.md §11."""
    pq = ProcessQueue(0)
    pq.put_message(create_message_list())
    assert pq.msg_size == 12300
    pq.take_messages(10, 0)
    pq.commit()
    assert pq.msg_size == 11070
    pq.remove_message([pq.msg_tree_map.last_entry()[1]])
    assert pq.msg_size == 10947


def test_fill_process_queue_info_cached_mib():
    """102400×123 B → 12 MiB; take 10000 → 10; 10000 more → 9; 80000 more → 0 (testFillProcessQueueInfo)."""
    pq = ProcessQueue(0)
    pq.put_message(create_message_list(102400))
    assert pq.cached_msg_size_in_mib == 12
    pq.take_messages(10000, 0)
    pq.commit()
    assert pq.cached_msg_size_in_mib == 10
    pq.take_messages(10000, 0)
    pq.commit()
    assert pq.cached_msg_size_in_mib == 9
    pq.take_messages(80000, 0)
    assert pq.commit() == 100000
    assert pq.cached_msg_size_in_mib == 0
    assert (pq.msg_count, pq.msg_tree_map.first_key(), pq.msg_tree_map.last_key()) == (
        2400,
        100000,
        102399,
    )


def test_put_message_dispatch_to_consume():
    """putMessage returns true only when it turns consuming on; docs/reference.md §10.13, mechanisms.md "Consumption" putMessage."""
    pq = ProcessQueue(0)
    assert pq.put_message([msg(0)]) is True
    assert pq.consuming is True
    assert pq.put_message([msg(1)]) is False
    assert ProcessQueue(0).put_message([]) is False


def test_put_message_duplicates_not_counted():
    """Re-putting a buffered offset replaces it but adds nothing to count/size/queueOffsetMax; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    pq.put_message([msg(5), msg(6)])
    pq.put_message([msg(6, body_len=999), msg(3, body_len=10)])
    assert (pq.msg_count, pq.msg_size) == (3, 123 + 123 + 10)
    assert pq.queue_offset_max == 3  # the offset of the last *new* message, not the maximum
    assert pq.msg_tree_map.keys() == [3, 5, 6]
    assert len(pq.msg_tree_map[6].body) == 999


def test_put_message_msg_acc_cnt():
    """msgAccCnt = MAX_OFFSET − last message's offset when positive; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    pq.put_message([msg(10), msg(11, MAX_OFFSET="100")])
    assert pq.msg_acc_cnt == 89
    pq.put_message([msg(12, MAX_OFFSET="12")])
    assert pq.msg_acc_cnt == 89  # 0 is not > 0: unchanged
    pq.put_message([msg(13, MAX_OFFSET="20"), msg(14)])
    assert pq.msg_acc_cnt == 89  # only the batch's last message is read


def test_get_max_span():
    """getMaxSpan = lastKey − firstKey, 0 when empty; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    assert pq.get_max_span() == 0
    pq.put_message([msg(7)])
    assert pq.get_max_span() == 0
    pq.put_message([msg(2007), msg(100)])
    assert pq.get_max_span() == 2000
    pq.remove_message([msg(7)])
    assert pq.get_max_span() == 1907


def test_remove_message_return_values():
    """removeMessage: −1 if empty; smallest remaining offset; queueOffsetMax+1 once emptied; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    assert pq.remove_message([msg(0)]) == -1
    pq.put_message([msg(i) for i in range(10, 15)])
    assert pq.remove_message([msg(11), msg(12)]) == 10
    assert pq.remove_message([msg(10)]) == 13
    assert pq.remove_message([msg(99)]) == 13  # absent offset: nothing removed
    assert (pq.msg_count, pq.msg_size) == (2, 246)
    assert pq.remove_message([msg(13), msg(14)]) == 15
    assert (pq.msg_count, pq.msg_size) == (0, 0)
    assert pq.remove_message([msg(13)]) == -1


def test_remove_message_stamps_last_consume_timestamp():
    """removeMessage sets lastConsumeTimestamp (given now_ms) even when the queue is empty."""
    pq = ProcessQueue(0)
    pq.remove_message([], now_ms=4321)
    assert pq.last_consume_timestamp == 4321
    pq.remove_message([])
    assert pq.last_consume_timestamp == 4321


def test_is_pull_expired_boundary():
    """isPullExpired is strict: idle 120000 ms → false, 120001 ms → true; docs/reference.md §10.13."""
    pq = ProcessQueue(1000)
    assert pq.is_pull_expired(1000 + 120000) is False
    assert pq.is_pull_expired(1000 + 120001) is True
    pq.last_pull_timestamp = 200000
    assert pq.is_pull_expired(200000 + 120001 - 1) is False


def test_is_lock_expired_boundary():
    """isLockExpired is strict: 30000 ms → false, 30001 ms → true; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    assert pq.is_lock_expired(30000) is False
    assert pq.is_lock_expired(30001) is True


def test_take_messages_commit_orderly():
    """takeMessages moves first n to the orderly map; commit returns last+1 and drops count/size."""
    pq = ProcessQueue(0)
    pq.put_message([msg(i) for i in range(5)])
    taken = pq.take_messages(3, 777)
    assert [m.queue_offset for m in taken] == [0, 1, 2]
    assert pq.last_consume_timestamp == 777
    assert pq.msg_tree_map.keys() == [3, 4]
    assert pq.consuming_msg_orderly_tree_map.keys() == [0, 1, 2]
    assert (pq.msg_count, pq.msg_size) == (5, 615)  # unchanged until commit
    assert pq.commit() == 3
    assert (pq.msg_count, pq.msg_size) == (2, 246)
    assert pq.commit() == -1
    assert [m.queue_offset for m in pq.take_messages(10, 0)] == [3, 4]
    assert pq.consuming is True
    assert pq.take_messages(1, 0) == []
    assert pq.consuming is False


def test_rollback_and_make_message_to_consume_again():
    """rollback moves all in-flight back; makeMessageToConsumeAgain moves given ones back; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    pq.put_message([msg(i) for i in range(4)])
    pq.take_messages(3, 0)
    pq.rollback()
    assert pq.msg_tree_map.keys() == [0, 1, 2, 3]
    assert len(pq.consuming_msg_orderly_tree_map) == 0
    assert pq.msg_count == 4
    taken = pq.take_messages(3, 0)
    pq.make_message_to_consume_again(taken[1:])
    assert pq.msg_tree_map.keys() == [1, 2, 3]
    assert pq.consuming_msg_orderly_tree_map.keys() == [0]
    assert pq.commit() == 1
    assert pq.msg_count == 3


def test_clear_and_try_unlock_times():
    """clear empties both maps and resets count, size and queueOffsetMax; incTryUnlockTimes counts."""
    pq = ProcessQueue(0)
    pq.put_message([msg(i) for i in range(4)])
    pq.take_messages(2, 0)
    pq.inc_try_unlock_times()
    pq.clear()
    assert (pq.msg_count, pq.msg_size, pq.queue_offset_max) == (0, 0, 0)
    assert not pq.has_temp_message() and not pq.consuming_msg_orderly_tree_map
    assert pq.try_unlock_times == 1


# -- cleanExpiredMsg ------------------------------------------------------------------------------


class SendBack:
    """Records sendMessageBack(msg, delayLevel) calls; fails while ``ok`` is False."""

    def __init__(self, ok: bool = True) -> None:
        self.ok = ok
        self.calls: list[tuple[int, int]] = []

    def __call__(self, m: MessageExt, delay_level: int):
        self.calls.append((m.queue_offset, delay_level))
        return self.ok
        yield  # pragma: no cover — a generator function, as the consume service's


def clean(pq: ProcessQueue, now_ms: int, send_back, **kw) -> int:
    """Run cleanExpiredMsg at ``now_ms`` with send-backs that answer at once."""
    gen = pq.clean_expired_msg(lambda: now_ms, 15, send_back, **kw)
    with pytest.raises(StopIteration) as stop:
        next(gen)
    return stop.value.value


def started(offset: int, at_ms: int | None) -> MessageExt:
    if at_ms is None:
        return msg(offset)
    return msg(offset, CONSUME_START_TIME=str(at_ms))


def test_clean_expired_msg_up_to_16():
    """At most 16 expired first messages are sent back with delay level 3 and removed; mechanisms.md "Consumption", docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    pq.put_message([started(i, 0) for i in range(20)])
    send_back = SendBack()
    assert clean(pq, CONSUME_TIMEOUT_MS + 1, send_back) == 16
    assert send_back.calls == [(i, 3) for i in range(16)]
    assert pq.msg_tree_map.keys() == [16, 17, 18, 19]
    assert pq.msg_count == 4


def test_clean_expired_msg_timeout_is_strict():
    """A message started exactly consumeTimeout (15 min) ago is not expired; docs/reference.md §10.13."""
    pq = ProcessQueue(0)
    pq.put_message([started(0, 1000)])
    send_back = SendBack()
    assert clean(pq, 1000 + CONSUME_TIMEOUT_MS, send_back) == 0
    assert send_back.calls == []


def test_clean_expired_msg_stops_at_first_fresh_or_unstarted():
    """The loop stops at the first message not expired or without CONSUME_START_TIME; mechanisms.md "Consumption" span 10-25."""
    pq = ProcessQueue(0)
    pq.put_message([started(0, 0), started(1, None), started(2, 0)])
    send_back = SendBack()
    assert clean(pq, CONSUME_TIMEOUT_MS + 1, send_back) == 1
    assert send_back.calls == [(0, 3)]
    assert pq.msg_tree_map.keys() == [1, 2]


def test_clean_expired_msg_failed_send_back_keeps_message():
    """A failed send-back leaves the message; the loop retries it up to min(size, 16) times."""
    pq = ProcessQueue(0)
    pq.put_message([started(i, 0) for i in range(3)])
    send_back = SendBack(ok=False)
    assert clean(pq, CONSUME_TIMEOUT_MS + 1, send_back) == 0
    assert send_back.calls == [(0, 3), (0, 3), (0, 3)]
    assert pq.msg_count == 3


def test_clean_expired_msg_orderly_noop():
    """Orderly consumers never clean expired messages (Java returns at once); mechanisms.md "Consumption" span 2-5."""
    pq = ProcessQueue(0)
    pq.put_message([started(0, 0)])
    send_back = SendBack()
    assert clean(pq, 10**9, send_back, consume_orderly=True) == 0
    assert send_back.calls == []


def test_clean_expired_msg_not_removed_if_no_longer_first():
    """If a smaller offset arrives during send-back, the sent message is not removed; mechanisms.md "Consumption" span 32-48."""
    pq = ProcessQueue(0)
    pq.put_message([started(5, 0)])

    def send_back(m: MessageExt, delay_level: int):
        pq.put_message([msg(1)])
        return True
        yield  # pragma: no cover

    assert clean(pq, CONSUME_TIMEOUT_MS + 1, send_back) == 1
    assert pq.msg_tree_map.keys() == [1, 5]


# -- OffsetTreeMap --------------------------------------------------------------------------------


def test_offset_tree_map_order_and_entries():
    """msgTreeMap iterates by queue offset whatever the insert order; first/last entries as TreeMap."""
    tree = OffsetTreeMap()
    assert tree.first_entry() is None and tree.last_entry() is None
    assert tree.poll_first_entry() is None
    with pytest.raises(KeyError):
        tree.first_key()
    for k in (5, 1, 9, 3):
        assert tree.put(k, msg(k)) is None
    assert list(tree) == [1, 3, 5, 9]
    assert [m.queue_offset for m in tree.values()] == [1, 3, 5, 9]
    assert tree.first_entry()[0] == 1 and tree.last_key() == 9
    assert tree.poll_first_entry()[0] == 1
    assert tree.remove(5).queue_offset == 5
    assert tree.remove(5) is None
    assert tree.items()[0][0] == 3 and 9 in tree and 5 not in tree


class EagerCompactingTreeMap(OffsetTreeMap):
    """Compacts after 2 dead head slots, so short random runs exercise compaction."""

    __slots__ = ()
    _COMPACT_MIN_HEAD = 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["put", "remove", "poll"]), st.integers(0, 3000)),
        max_size=3000,
    )
)
def test_offset_tree_map_matches_sorted_dict(ops):
    """OffsetTreeMap behaves as a sorted map under any put/remove/poll sequence (head compaction included)."""
    tree = EagerCompactingTreeMap()
    model: dict[int, MessageExt] = {}
    for i, (op, k) in enumerate(ops):
        if op == "put":
            m = msg(k)
            assert tree.put(k, m) is model.get(k)
            model[k] = m
        elif op == "remove":
            assert tree.remove(k) is model.pop(k, None)
        else:
            got = tree.poll_first_entry()
            if model:
                first = min(model)
                assert got == (first, model.pop(first))
            else:
                assert got is None
        if i % 97 == 0:
            assert tree.keys() == sorted(model)
    assert tree.keys() == sorted(model)
    assert len(tree) == len(model)


def test_offset_tree_map_in_order_append_and_drain_is_linear():
    """NOTE: performance — 200 000 in-order puts and first-removals finish quickly (hot path)."""
    tree = OffsetTreeMap()
    m = msg(0)
    for k in range(200_000):
        tree.put(k, m)
    for k in range(200_000):
        tree.remove(k)
    assert len(tree) == 0 and tree.keys() == []
