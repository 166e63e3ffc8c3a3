"""A canonical digest of a run's observable state, so that revisited states are pruned.

Mirrors no RocketMQ class. Two runs that reach the same digest behave the same from there
on (the sans-IO core is deterministic), so an explorer expands each digest once. What goes
in, for every node in name order (no object ids, no dict order that depends on history, no
absolute times where only differences matter):

- whether it runs;
- a broker's store: the commit log's end and flushed position, each consume queue's max
  offset, its replication state when it has one (``_ha``); the committed consumer
  offsets; the queue locks (owner, age);
- a push consumer: each ProcessQueue (offsets cached and being consumed, dropped, locked,
  the highest offset), its local offset table, its allocation, and its delivery log (what
  the listener got, in order, and how long ago: the outcome depends on it); an orderly
  consumer's listener calls (begin and end ages: ``concurrent`` depends on them);
- the producers' sends (done, failed) and their retry state: for a send in flight, the
  attempt (``DefaultMQProducerImpl#sendDefaultImpl``'s ``times``), the brokers tried and
  how long ago the first attempt began (the retries share one time budget); for every
  producer, each topic's queue cursor (``TopicPublishInfo#sendWhichQueue``: the queue
  of the next send, or of a retry);
- every pending timer and frame, its due time relative to now, and a frame's bytes (or
  a stream chunk's);
- the past the outcome reads (``history``): faults, node starts and stops, rebalances'
  allocations, and the delivery log, each with its age relative to now.

``blake2b`` of that tuple's ``marshal`` bytes (16 bytes, hex: ``tuple_digest``).
Collisions are possible but, as with TLC's 64-bit fingerprints, improbable (about
n²/2¹²⁹ for n states).
"""

from __future__ import annotations

import hashlib
import marshal
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mqlab.lab.lab import Lab

__all__ = ["digest", "state_tuple", "tuple_digest", "frame_bytes", "history"]


def frame_bytes(t: Any) -> bytes | None:
    """The encoded frame a ``frame`` timer delivers (read from its callback's closure)."""
    for cell in t.callback.__closure__ or ():
        v = cell.cell_contents
        if isinstance(v, bytes):
            return v
    return None


def _mq(mq: Any) -> tuple:
    return (mq.topic, mq.broker_name, mq.queue_id)


def _broker(b: Any, now: int) -> tuple:
    st = b.message_store
    store: tuple = ()
    if st is not None:
        cl = st.commit_log
        cqs = tuple(
            (topic, qid, cq.get_max_offset_in_queue())
            for topic, by_q in sorted(st.consume_queue_table.items())
            for qid, cq in sorted(by_q.items())
        )
        store = (cl.get_max_offset(), cl.mapped_file_queue.flushed_where, cqs)
        ha = _ha(st, now)
        if ha:  # left out when idle: a single broker's digest is what it was
            store += (ha,)
    offsets = tuple(
        (k, tuple(sorted(v.items())))
        for k, v in sorted(b.consumer_offset_manager.offset_table.items())
    )
    locks = tuple(
        (
            g,
            tuple(
                sorted((_mq(mq), e.client_id, now - e.last_update_timestamp) for mq, e in t.items())
            ),
        )  # fmt: skip
        for g, t in sorted(b.rebalance_lock_manager.mq_lock_table.items())
    )
    return (store, offsets, locks)


def _ha(st: Any, now: int) -> tuple:
    """A store's replication state: ``push2SlaveMaxOffset``, each slave connection (its
    request and ack offsets, where its next push starts, a partial report read, its last
    read and write ages), the requests waiting in ``GroupTransferService``, and a
    slave's ``HAClient`` (connected, offset reported, a partial chunk read). Empty when
    the store replicates nothing."""
    ha = getattr(st, "ha_service", None)
    if ha is None:
        return ()
    conns = tuple(
        (c.slave_request_offset, c.slave_ack_offset, c.next_transfer_from_where,
         bytes(c._read_buf), now - c.last_read_timestamp, now - c.last_write_timestamp)
        for c in ha.connection_list
    )  # fmt: skip
    gts = ha.group_transfer_service
    waiting = (
        tuple((r.next_offset, r.dead_line_ms - now) for r in gts.requests_read),
        tuple((r.next_offset, r.dead_line_ms - now) for r in gts.requests_write),
    )
    cl = ha.ha_client
    client = ()
    if cl.master_address is not None:
        client = (cl.channel is not None, cl.current_reported_offset,
                  now - cl.last_write_timestamp, bytes(cl._buf), cl._dispatch_position)  # fmt: skip
    if (
        not conns
        and not waiting[0]
        and not waiting[1]
        and not client
        and not ha.push2_slave_max_offset
    ):
        return ()
    return (ha.push2_slave_max_offset, conns, waiting, client)


def _consumer(c: Any, now: int) -> tuple:
    impl = c.default_mq_push_consumer_impl
    pqs = tuple(
        (_mq(mq), tuple(pq.msg_tree_map.keys()), tuple(pq.consuming_msg_orderly_tree_map.keys()),
         pq.dropped, pq.locked, pq.queue_offset_max, pq.consuming)
        for mq, pq in sorted(impl.rebalance_impl.process_queue_table.items(), key=lambda kv: _mq(kv[0]))
    )  # fmt: skip
    store = impl.offset_store
    table = getattr(store, "offset_table", {}) if store is not None else {}
    offsets = tuple(sorted((_mq(mq), off) for mq, off in table.items()))
    alloc = tuple((t, tuple(_mq(m) for m in mqs)) for t, mqs in sorted(c.allocation.items()))
    log = tuple(
        (now - r.t_ms, _mq(r.mq), r.queue_offset, r.msg_id, r.reconsume_times, str(r.status))
        for r in impl.consumed
    )
    part: tuple = (pqs, offsets, alloc, log)
    calls = getattr(impl.consume_message_service, "listener_calls", None)
    if calls:  # orderly: when each listener call ended (``concurrent`` reads it)
        part += (
            tuple((now - b, None if e is None else now - e, _mq(mq), w) for b, e, mq, w in calls),
        )
    return part


def state_tuple(lab: Lab, sends: list | None = None) -> tuple:
    """The canonical state (see the module docstring)."""
    d = lab.driver
    now = d.scheduler.now
    brokers = {b.name: b for b in lab.brokers}
    consumers = {
        c.default_mq_push_consumer_impl.mq_client_factory.name: c for c in lab.consumers.values()
    }
    nodes = []
    for name in sorted(d.nodes):
        node = d.nodes[name]
        part: tuple = ()
        if name in brokers:
            part = _broker(brokers[name], now)
        elif name in consumers:
            part = _consumer(consumers[name], now)
        nodes.append((name, node.running, part))
    timers = []
    for e in d.scheduler._heap:
        t = e[3]
        if t.cancelled:
            continue
        fb = frame_bytes(t) if t.name in ("frame", "stream") else None
        timers.append((t.due - now, t.priority, t.node, t.name, t.key or "", t.daemon,
                       hashlib.blake2b(fb, digest_size=8).hexdigest() if fb else ""))  # fmt: skip
    timers.sort()
    sent = tuple((f.done, f.error is None, _retry_state(f, now)) for _, f in (sends or []))
    cursors = tuple(
        (name, topic, _cursor(info.send_which_queue))
        for name, p in sorted(lab.producers.items())
        for topic, info in sorted(p.default_mq_producer_impl.topic_publish_info_table.items())
    )
    return (tuple(nodes), tuple(timers), sent, history(lab, now)) + ((cursors,) if cursors else ())


#: ``_cursor``'s digests of random streams' states, by state (a search meets a few).
_RNG_DIGESTS: dict[tuple, str] = {}


def _cursor(index: Any) -> Any:
    """A queue cursor's value; before its first use, the state of the random stream its
    start will be drawn from (``ThreadLocalIndex``: ``Math.abs(new Random().nextInt())``)."""
    if index.value is not None or index._rng is None:
        return index.value
    # NOTE: performance — the repr of a Mersenne Twister state (625 ints) took 15 % of a
    # digest; the state tuple hashes in C, so each distinct state is written out once.
    state = index._rng.getstate()
    hit = _RNG_DIGESTS.get(state)
    if hit is None:
        if len(_RNG_DIGESTS) >= 1024:
            _RNG_DIGESTS.clear()
        hit = _RNG_DIGESTS[state] = hashlib.blake2b(repr(state).encode(), digest_size=8).hexdigest()
    return hit


def _retry_state(f: Any, now: int) -> tuple:
    """A send in flight's retry loop (``send_default_impl``'s locals, read from its
    generator: the loop keeps them nowhere else); ``()`` when done or not begun."""
    g = None if f.done or f.task is None else f.task.gen
    while g is not None:
        if g.gi_code.co_name == "send_default_impl" and g.gi_frame is not None:
            loc = g.gi_frame.f_locals
            if "times" not in loc:
                return ()  # still finding the route: no attempt yet
            return (loc["times"], tuple(loc["brokers_sent"]), now - loc["begin_first"])
        g = g.gi_yieldfrom
    return ()


def _relevant(e: Any) -> bool:
    c = e.component
    return (
        e.kind == "fault"
        or (c == "SimDriver" and e.step in ("kill", "stop", "start", "power_cut"))
        or (c.endswith(".rebalanceByTopic") and e.step == "42-61")
        or c.endswith(".messageQueueChanged")
        or c.endswith(".shutdown")
    )


#: Per trace recorder: how many of its events ``_relevant_events`` has read, the last of
#: them, and the relevant ones among them (a recorder only appends, or is cleared).
_SCANNED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _relevant_events(recorder: Any) -> list:
    """``recorder``'s events that ``_relevant`` keeps, in order. NOTE: performance — read
    incrementally: a digest at every choice point re-read the whole trace (58 % of a
    digest in retry_rebalance's search)."""
    events = recorder.events
    n, last, kept = _SCANNED.get(recorder, (0, None, None))
    if kept is None or n > len(events) or (n and events[n - 1] is not last):
        n, kept = 0, []  # first read, or the trace was cleared
    kept.extend(e for e in events[n:] if _relevant(e))
    if events:
        _SCANNED[recorder] = (len(events), events[-1], kept)
    return kept


def history(lab: Lab, now: int) -> tuple:
    """The past that outcomes read besides the state: faults, starts and stops, and each
    rebalance's allocation, with their age (ms before now), sorted: the checkers date a
    duplicate's cause and a queue's ownership overlap by these events' times, never by
    their order within one ms (which commuting events on two nodes may swap)."""
    return tuple(sorted(
        (now - e.t_ms, e.node, e.component, e.step, repr(e.fields.get("allocated_mqs")))
        for e in _relevant_events(lab.trace)
    ))  # fmt: skip


def digest(lab: Lab, sends: list | None = None) -> str:
    """16-byte hex digest of ``state_tuple``."""
    return tuple_digest(state_tuple(lab, sends))


def tuple_digest(state: tuple) -> str:
    """``blake2b`` (16 bytes, hex) of a state tuple's bytes: ``marshal`` format 2, which
    writes each value by its type and content alone (no references to shared objects, which
    format 3 adds by reference count; no interning flags, which format 3 adds), so two
    tuples of the same values give the same bytes in every process. A tuple holding a value
    marshal cannot write (not a built-in type) is digested through its ``repr``, marked
    apart. NOTE: performance — the ``repr`` of the whole tuple was 11 % of a walk's CPU
    (86 us a digest at consumer_join, against 27 us)."""
    try:
        data = b"m" + marshal.dumps(state, 2)
    except ValueError:
        data = b"r" + repr(state).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
