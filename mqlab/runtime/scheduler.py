"""A tiny deterministic event scheduler on a virtual millisecond clock.

SimPy's kernel in one idea (docs/design.md §1): every pending event is a heap entry
``(due_ms, priority, seq)``; ``seq`` comes from a counter, so events due at the same
time and priority run in the order they were scheduled. Integer milliseconds, clock
starting at 0, no floats, no wall clock.

Timers are named after the Java code they replace (``"RebalanceService.run"``,
``"PullRequestHoldService.run"``) and keyed by ``(node, name, key)``: arming a timer
with a key that is already pending replaces it, as re-scheduling a Java
``ScheduledFuture`` of the same task would. A *daemon* timer is background work
(periodic services, a parked pull's deadline): ``run_until_idle`` stops when only
daemon timers remain.

NOTE: performance — the heap holds tuples ``(due, priority, seq, timer)``, so ``heapq``
compares them in C instead of calling a Python ``Timer.__lt__`` ~13 times per push or pop.
Cancelled timers stay in the heap until popped (lazy deletion); RPC timeouts (3 s sends,
30 s pulls) are almost always cancelled, so when cancelled entries outnumber live ones the
heap is rebuilt without them (in bench_e2e's single sends the heap averaged 2 500 entries
instead of 13 800). Together: arming a frame, arming and cancelling an RPC timeout and
running one event went from 7.5 to 2.9 µs. ``seq`` is unique, so the order never depends
on how the heap is laid out: compaction cannot change which timer runs next.

This module owns time and order. It must not know what a timer does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from heapq import heapify, heappop, heappush

__all__ = [
    "Timer",
    "Scheduler",
    "ChoosingScheduler",
    "PendingTimer",
    "URGENT",
    "NORMAL",
    "group_of",
]

URGENT = 0
NORMAL = 1


class Timer:
    """One pending event. Cancelling sets a flag; the heap entry is skipped when popped."""

    # NOTE: performance — slots and a plain class: one Timer per frame in flight.
    __slots__ = (
        "due", "priority", "seq", "node", "name", "key", "callback", "period", "daemon",
        "cancelled",
    )  # fmt: skip

    def __init__(
        self,
        due: int,
        priority: int,
        seq: int,
        node: str,
        name: str,
        key: str | None,
        callback: Callable[[], None],
        period: int | None,
        daemon: bool,
    ) -> None:
        self.due = due
        self.priority = priority
        self.seq = seq
        self.node = node
        self.name = name
        self.key = key
        self.callback = callback
        self.period = period
        self.daemon = daemon
        self.cancelled = False

    def __lt__(self, other: Timer) -> bool:
        """Firing order (the scheduler's heap compares ``(due, priority, seq)`` tuples)."""
        return (self.due, self.priority, self.seq) < (other.due, other.priority, other.seq)

    @property
    def label(self) -> str:
        parts = [self.name, self.node]
        if self.key is not None:
            parts.append(self.key)
        return " ".join(p for p in parts if p)

    def __repr__(self) -> str:
        return f"Timer({self.label!r}, due={self.due})"


@dataclass(frozen=True, slots=True)
class PendingTimer:
    """What ``next_timers()`` shows a learner: when, where, what."""

    due_ms: int
    node: str
    name: str
    key: str | None
    daemon: bool
    periodic: bool

    @property
    def label(self) -> str:
        parts = [self.name, self.node] + ([self.key] if self.key is not None else [])
        return " ".join(p for p in parts if p)


class Scheduler:
    """Virtual clock + timer heap. ``now`` only moves forward."""

    #: Compact the heap only past this size (a small heap is cheap to skip through).
    _COMPACT_MIN = 256

    def __init__(self) -> None:
        self.now = 0
        self._heap: list[tuple[int, int, int, Timer]] = []
        self._seq = itertools.count()
        self._keyed: dict[tuple[str, str, str | None], Timer] = {}
        self._live_foreground = 0
        self._cancelled_in_heap = 0

    # -- arming ----------------------------------------------------------------------------
    def call_at(
        self,
        due: int,
        callback: Callable[[], None],
        *,
        node: str = "",
        name: str = "",
        key: str | None = None,
        period: int | None = None,
        daemon: bool = False,
        priority: int = NORMAL,
        keyed: bool = True,
    ) -> Timer:
        """Schedule ``callback`` at absolute time ``due`` (never earlier than now).

        With ``keyed`` (the default) a pending timer with the same ``(node, name, key)``
        is cancelled first. Frames in flight use ``keyed=False``.
        """
        if due < self.now:
            due = self.now
        seq = next(self._seq)
        t = Timer(due, priority, seq, node, name, key, callback, period, daemon)
        if keyed:
            k = (node, name, key)
            old = self._keyed.get(k)
            if old is not None:
                self._cancel(old)
            self._keyed[k] = t
        heappush(self._heap, (due, priority, seq, t))
        if not daemon:
            self._live_foreground += 1
        return t

    def call_later(self, delay: int, callback: Callable[[], None], **kw) -> Timer:
        if delay < 0:
            raise ValueError(f"delay must be >= 0 ms, got {delay}")
        return self.call_at(self.now + int(delay), callback, **kw)

    def cancel(self, node: str, name: str, key: str | None = None) -> bool:
        t = self._keyed.get((node, name, key))
        if t is None:
            return False
        self._cancel(t)
        return True

    def get(self, node: str, name: str, key: str | None = None) -> Timer | None:
        return self._keyed.get((node, name, key))

    def reschedule(self, node: str, name: str, key: str | None, due: int) -> bool:
        """Move a pending keyed timer (``ServiceThread#wakeup`` moves it to now)."""
        t = self._keyed.get((node, name, key))
        if t is None:
            return False
        self.call_at(
            due, t.callback, node=node, name=name, key=key, period=t.period, daemon=t.daemon,
            priority=t.priority,
        )  # fmt: skip
        return True

    def cancel_node(self, node: str) -> int:
        """Silence every timer of a node (the node stopped or was killed)."""
        n = 0
        for entry in list(self._heap):  # a snapshot: cancelling may compact the heap
            t = entry[3]
            if t.node == node and not t.cancelled:
                self._cancel(t)
                n += 1
        return n

    def _cancel(self, t: Timer) -> None:
        if t.cancelled:
            return
        t.cancelled = True
        if not t.daemon:
            self._live_foreground -= 1
        k = (t.node, t.name, t.key)
        if self._keyed.get(k) is t:
            del self._keyed[k]
        self._cancelled_in_heap += 1
        heap = self._heap
        if self._cancelled_in_heap * 2 > len(heap) and len(heap) > self._COMPACT_MIN:
            # NOTE: performance — lazy-deletion compaction (see the module note).
            live = [e for e in heap if not e[3].cancelled]
            heapify(live)
            self._heap = live
            self._cancelled_in_heap = 0

    # -- running -----------------------------------------------------------------------------
    def peek(self) -> Timer | None:
        """The next live timer, or None."""
        heap = self._heap
        while heap:
            t = heap[0][3]
            if not t.cancelled:
                return t
            heappop(heap)
            self._cancelled_in_heap -= 1
        return None

    @property
    def has_foreground(self) -> bool:
        return self._live_foreground > 0

    def pop(self) -> Timer | None:
        """Remove and return the next live timer, advancing ``now`` to its due time."""
        heap = self._heap
        while heap:
            t = heappop(heap)[3]
            if t.cancelled:
                self._cancelled_in_heap -= 1
                continue
            k = (t.node, t.name, t.key)
            if self._keyed.get(k) is t:
                del self._keyed[k]
            if not t.daemon:
                self._live_foreground -= 1
            t.cancelled = True  # consumed
            self.now = t.due
            return t
        return None

    def run_one(self) -> Timer | None:
        """Pop the next timer, run it, re-arm it if periodic. Returns it (None if empty)."""
        t = self.pop()
        if t is None:
            return None
        if t.period is not None:
            # Re-arm before running, so the callback may cancel or move it.
            self.call_at(
                t.due + t.period, t.callback, node=t.node, name=t.name, key=t.key,
                period=t.period, daemon=t.daemon, priority=t.priority,
            )  # fmt: skip
        t.callback()
        return t

    def pending(self) -> list[PendingTimer]:
        """Live timers in firing order."""
        live = sorted(e for e in self._heap if not e[3].cancelled)
        return [
            PendingTimer(t.due, t.node, t.name, t.key, t.daemon, t.period is not None)
            for t in (e[3] for e in live)
        ]


#: Bookkeeping timers: the statistics samplings (``StoreStatsService`` every second,
#: ``BrokerStatsManager``'s ``StatsItemSet`` every 10 s, 10 min and 1 h). They read counters
#: and write samples that no mechanism reads (only admin requests show them), so they commute
#: with every event and no outcome depends on where they run. The explorer never offers them
#: as a choice, and what a learner is shown as "the next timer" leaves them out.
BOOKKEEPING_TIMERS = frozenset({
    "StoreStatsService.sampling", "StatsItemSet.samplingInSeconds",
    "StatsItemSet.samplingInMinutes", "StatsItemSet.samplingInHour",
})  # fmt: skip


class ChoosingScheduler(Scheduler):
    """A ``Scheduler`` whose next event is picked by a *chooser* (``mqlab.explore``).

    ``SimDriver.set_chooser`` turns a driver's scheduler into one of these (by class, so a
    driver without a chooser runs ``Scheduler.run_one`` unchanged, at the same speed).

    The events *enabled together* are the live timers due within ``window`` ms of the
    earliest one. Of those, only the first of each *group* may run: frames of one direction
    of a connection (``sender->receiver``, TCP's FIFO) form a group, so do the deliveries of
    one direction of a byte stream (an HA connection's chunks or reports), and every other
    timer of a node is in that node's group (a node's own timers keep their order). A ``close``
    (a connection closed after its last frame) is never moved. The chooser gets the
    candidates in default order, ``(due, priority, seq)``, and returns the index of the
    one to run (or None after changing the world, e.g. a fault: it is asked again); index 0
    is what ``Scheduler.run_one`` would run. A chooser may also have ``settled_head(self)``:
    the head, taken as ``choose_event`` would take it, once its answer no longer depends on
    the other candidates (the run is past its schedule and its depth); None asks as above.
    """

    chooser = None  # set by SimDriver.set_chooser
    window = 0
    #: Never a choice: run at their time, in default order, and left out of other events'
    #: candidates (see ``BOOKKEEPING_TIMERS``).
    BOOKKEEPING = BOOKKEEPING_TIMERS

    def candidates(self) -> list[Timer]:
        """The events that may run next, in default order (index 0 = the heap's head)."""
        head = self.peek()
        if head is None:
            return []
        if head.name == "close" or head.name in self.BOOKKEEPING:
            return [head]
        limit = head.due + self.window
        # NOTE: performance — the entries due by ``limit``, walked from the heap's root: a
        # heap entry is never due before its parent, so every one of them is reached through
        # parents due by ``limit`` too, and the walk stops at the first entry past it on
        # each path (usually the head's two children: one candidate). A scan of the whole
        # heap took ~20 % of an explored run's instructions (callgrind, DLedger scenarios,
        # where every event is chosen among ~20 pending timers).
        heap = self._heap
        n = len(heap)
        live = []
        stack = [0]
        while stack:
            i = stack.pop()
            e = heap[i]
            if e[0] > limit:
                continue
            if not e[3].cancelled:
                live.append(e)
            i = 2 * i + 1
            if i < n:
                stack.append(i)
                if i + 1 < n:
                    stack.append(i + 1)
        if len(live) == 1:
            return [head]  # the head alone (neither a close nor bookkeeping: see above)
        live.sort()
        out: list[Timer] = []
        seen: set = set()
        for e in live:
            t = e[3]
            if t.name == "close":
                seen.add(("node", t.node))
                continue
            if t.name in self.BOOKKEEPING:
                continue
            g = group_of(t)
            if g in seen:
                continue
            seen.add(g)
            out.append(t)
        return out

    def take(self, t: Timer) -> None:
        """Remove live timer ``t`` (anywhere in the heap) as ``pop`` would remove the head."""
        k = (t.node, t.name, t.key)
        if self._keyed.get(k) is t:
            del self._keyed[k]
        if not t.daemon:
            self._live_foreground -= 1
        t.cancelled = True  # consumed; its heap entry is skipped when popped
        self._cancelled_in_heap += 1
        if t.due > self.now:
            self.now = t.due

    def run_one(self) -> Timer | None:
        chooser = self.chooser
        if chooser is None:
            return Scheduler.run_one(self)
        settled = getattr(chooser, "settled_head", None)
        t = settled(self) if settled is not None else None
        if t is None:
            cands = self.candidates()
            if not cands:
                return None
            t = chooser.choose_event(self, cands)
            if t is None:  # the chooser changed the world (a fault): ask again
                return self.run_one()
        self.take(t)
        if t.period is not None:
            self.call_at(
                t.due + t.period, t.callback, node=t.node, name=t.name, key=t.key,
                period=t.period, daemon=t.daemon, priority=t.priority,
            )  # fmt: skip
        t.callback()
        return t


def group_of(t: Timer) -> tuple[str, str]:
    """The FIFO group of a timer: a frame's direction, a byte stream's direction (its
    accept, chunks and end: ``stream`` timers keyed ``"bytes a->b"``, TCP keeps their
    order), or the node a timer belongs to."""
    if t.name == "frame" and t.key is not None:
        return ("frame", t.key.rsplit(" ", 1)[-1])
    if t.name == "stream" and t.key is not None and "->" in t.key:
        return ("stream", t.key.rsplit(" ", 1)[-1])
    return ("node", t.node)
