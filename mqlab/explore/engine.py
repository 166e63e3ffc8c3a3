"""Running one scenario under a schedule: the chooser at the driver's choice points.

Mirrors no RocketMQ class. ``run_schedule`` builds the scenario's cluster (``mqlab.
experiments.run.build_lab``), plays its timeline, and from ``arm_ms`` (scenario time) on
hands the driver a ``Chooser``: at every choice point it follows the schedule's next
choice, or, past the schedule's end, takes the default (what the seed alone would run).
While a search is running (``record=True``), the chooser also notes, for every choice
point up to ``depth``: the options it had, the canonical state digest there
(``mqlab.explore.state``), and the *sleep set* of the partial-order reduction.

Choice points, in run order (the same run always meets the same ones):

- an **order** point: the driver's next event, when more than one event is enabled
  together (``ChoosingScheduler``) or the scenario offers faults; the options are the
  candidates, then the faults (``o<i>`` / ``F:<fault>``);
- a **latency** point: a frame is sent, or a chunk is written to a byte stream (an HA
  connection's push or a slave's report), and the scenario's latency set has more than
  one value (``l<i>``; 0 = the link's latency). A stream's chunks stay in order (TCP):
  a longer latency delays a chunk and every chunk behind it. With ``Bounds.sticky`` a
  latency point also offers ``L<i>``: that latency for this frame and every later one
  between the same two nodes, both ways (a slow connection), whose frames then make no
  choice points. One move then delays a whole exchange, where ``l<i>`` needs a move
  per frame: consumer_join's "two messages delivered twice" needs consumer-2's start
  delayed by tens of ms: ten ``l1`` moves in a walk, two ``L1``.

A scenario of another kind (``mqlab.explore.dledger.DLedgerScenario``: a DLedger group,
no broker) builds its own run: the engine calls its ``build_to_arm`` and ``act`` instead
of building a Lab and playing a ``Scenario``, and the run object's ``explore_fault``,
``explore_digest`` and ``explore_outcome`` instead of ``apply_fault``, ``state.digest``
and ``outcome.outcome_counts``. The chooser, the search and the runners are the same.

Sleep sets (Godefroid 1996): after the subtree of candidate ``a`` has been searched, its
siblings ``b`` need not run ``a`` first again while ``a`` stays independent of what ran
since. Two events are independent when they run on different nodes that share no
connection (they exchange no frames and no stream bytes), and neither is a driver action
or a fault.
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqlab.explore.schedule import DEFAULT, Choice, Schedule, ScheduleError
from mqlab.explore.state import digest
from mqlab.explore.tmpdirs import owner_tag, scratch_dir
from mqlab.runtime.sim import _fewer_gc_passes

if TYPE_CHECKING:
    from mqlab.explore.scenarios import ExploreScenario
    from mqlab.explore.snapshot import Snapshots
    from mqlab.lab.lab import Lab

__all__ = ["Bounds", "Point", "RunRecord", "Chooser", "run_schedule", "apply_fault", "Redundant",
           "ANY_DEPTH", "UNBOUNDED", "covered"]  # fmt: skip

_GLOBAL_NODES = ("", "lab", "sim")
#: ``Bounds.depth`` with no depth bound (``depth=any``): choice points anywhere in the run.
ANY_DEPTH = 1 << 30
#: The moves left at a point when no deviation bound is set.
UNBOUNDED = 1 << 30


def covered(seen: Any, left: int, moves_left: int, faults_left: int, sleep_key: frozenset) -> bool:
    """Whether a visited table's entries for one digest (``(depth left, faults left, sleep
    key, moves left)``) cover a state reached with this budget: seen before with at least
    as much depth, as many faults and moves left, and no more events asleep."""
    return bool(seen) and any(
        d >= left and f >= faults_left and m >= moves_left and sk <= sleep_key
        for d, f, sk, m in seen
    )


@dataclass(frozen=True, slots=True)
class Bounds:
    """How far a search goes.

    ``depth``: choice points (from ``arm_ms``) where alternatives are tried; ``faults``:
    faults per run; ``window_ms``: events due within this many ms of the earliest are
    enabled together; ``latencies``: the latency set of a frame (empty: the scenario's);
    ``por``: sleep-set reduction on; ``max_runs``: stop after this many runs;
    ``sticky``: 1: latency points also offer to keep the connection slow from there on
    (``L<i>``, one move; ``mqlab.explore.schedule``); 2: they offer only that (every
    latency move keeps its connection slow); 0: neither;
    ``deviations``: non-default order and latency choices per run ("moves", the
    delay-bounding of Emmi, Qadeer and Rakamarić, POPL 2011), None: no such bound. A
    deviation bound alone searches choice points at any depth of the run
    (``depth=ANY_DEPTH``, printed ``depth=any``); faults stay bounded by ``faults``.
    """

    depth: int = 6
    faults: int = 0
    window_ms: int = 0
    latencies: tuple[int, ...] = ()
    por: bool = True
    max_runs: int = 5000
    deviations: int | None = None
    sticky: int = 0

    @classmethod
    def parse(cls, text: str | None, **base: Any) -> Bounds:
        """``"depth=8,faults=1,window=1,latencies=1/5,por=0"`` → Bounds (unknown keys raise).
        ``deviations=K`` without ``depth=`` lifts the depth bound (``depth=any``)."""
        kw: dict[str, Any] = dict(base)
        given: set[str] = set()
        for part in (text or "").replace(" ", "").split(","):
            if not part:
                continue
            k, sep, v = part.partition("=")
            if not sep:
                raise ValueError(f"bounds: {part!r} is not key=value")
            k = {"window": "window_ms", "runs": "max_runs"}.get(k, k)
            given.add(k)
            if k == "depth" and v.lower() == "any":
                kw[k] = ANY_DEPTH
            elif k in ("depth", "faults", "window_ms", "max_runs", "deviations", "sticky"):
                try:
                    kw[k] = int(v)
                except ValueError:
                    raise ValueError(f"bounds: {k}={v!r} is not a whole number") from None
            elif k == "latencies":
                kw[k] = tuple(int(x) for x in v.split("/") if x)
            elif k == "por":
                kw[k] = v.lower() not in ("0", "false", "no", "off")
            else:
                raise ValueError(
                    f"bounds: unknown key {k!r}; known: depth, deviations, faults, window, "
                    "latencies, por, sticky, runs"
                )
        if "deviations" in given and "depth" not in given:
            kw["depth"] = ANY_DEPTH
        b = cls(**kw)
        if (b.depth < 0 or b.faults < 0 or b.window_ms < 0 or b.max_runs < 1
                or (b.deviations is not None and b.deviations < 0)):  # fmt: skip
            raise ValueError(f"bounds must be >= 0 (max_runs >= 1), got {b}")
        if b.sticky not in (0, 1, 2):
            raise ValueError(f"bounds: sticky is 0, 1 or 2, got {b.sticky}")
        return b

    def __str__(self) -> str:
        lat = "/".join(map(str, self.latencies)) or "scenario"
        depth = "any" if self.depth >= ANY_DEPTH else str(self.depth)
        dev = "" if self.deviations is None else f"deviations={self.deviations},"
        sticky = f",sticky={self.sticky}" if self.sticky else ""
        return (f"{dev}depth={depth},faults={self.faults},window={self.window_ms},"
                f"latencies={lat}{sticky},por={int(self.por)}")  # fmt: skip


@dataclass(slots=True)
class Point:
    """One recorded choice point of a searched run."""

    index: int
    kind: str  # "o" or "l"
    options: list[Choice]
    labels: list[str]
    chosen: int  # index into options
    digest: str
    faults_left: int
    sleep: frozenset[tuple[int, str]]  # (seq, node) asleep here
    sleep_key: frozenset  # canonical form, for the visited table
    seqs: list[int] = field(default_factory=list)  # candidates' seqs (order points)
    nodes: list[str] = field(default_factory=list)  # candidates' nodes
    moves_left: int = UNBOUNDED  # deviations left here (``Bounds.deviations``)

    def entry(self, depth: int) -> tuple:
        """This point's visited-table entry under a depth bound ``depth`` (``covered``)."""
        return (depth - self.index, self.faults_left, self.sleep_key, self.moves_left)


@dataclass(slots=True)
class RunRecord:
    """What one run gives: the choices made, the points noted, the end."""

    choices: list[Choice]
    points: list[Point]
    outcome: str | None = None
    counts: dict[str, int] | None = None
    final_digest: str = ""
    redundant: bool = False  # every candidate was asleep (POR): the run stopped
    pruned: bool = False  # stopped at a state expanded before
    events: int = 0
    links: frozenset = frozenset()  # node pairs that had a connection

    @property
    def schedule(self) -> Schedule:
        return Schedule(tuple(self.choices)).trimmed()


class Redundant(Exception):
    """Every enabled event is asleep: this run repeats an order searched already."""


class Pruned(Exception):
    """The run reached a state the search expanded before: the rest adds nothing."""


def state_digest(lab: Any, sends: list) -> str:
    """The state's digest: ``mqlab.explore.state.digest`` for a broker Lab, the run's own
    (``explore_digest``) for another kind (``mqlab.explore.dledger``)."""
    own = getattr(lab, "explore_digest", None)
    return own(sends) if own is not None else digest(lab, sends)


def freeze(lab: Lab, node: str, ms: int) -> None:
    """A stop-the-world pause of ``node`` for ``ms`` (a long GC): nothing of the node runs
    until ``now + ms``. Its timers that come due meanwhile, and the frames that reach it
    meanwhile, are all due at the wake-up (in their old order, so the explorer may reorder
    them there, as the woken JVM's threads would race); later ones keep their time.
    Frames and stream bytes sent to it during the pause queue behind (TCP keeps their
    order)."""
    d = lab.driver
    s = d.scheduler
    d.node(node)
    wake = s.now + ms
    d._tracer.emit("Explorer", "freeze", "fault", node=node, ms=ms,
                   text=f"{node} stops for {ms} ms (a pause longer than its timeouts)")  # fmt: skip
    for e in sorted(x for x in s._heap if not x[3].cancelled and x[3].node == node):
        t = e[3]
        if t.due >= wake:
            continue
        keyed = s._keyed.get((t.node, t.name, t.key)) is t
        s._cancel(t)
        s.call_at(wake, t.callback, node=t.node, name=t.name, key=t.key, period=t.period,
                  daemon=t.daemon, priority=t.priority, keyed=keyed)  # fmt: skip
    for conn in d._conns.values():
        if node in (conn.client, conn.server):
            peer = conn.peer_of(node)
            conn.last_due[peer] = max(conn.last_due[peer], wake)
    for stream in d._stream_by_channel.values():  # byte streams too (each max is idempotent)
        if node in (stream.client, stream.server):
            peer = stream.peer_of(node)
            stream.last_due[peer] = max(stream.last_due[peer], wake)


def apply_fault(lab: Lab, name: str, scenario: Any) -> None:
    """Inject fault ``name`` (``kill(broker-a)``: killed and restarted on its store;
    ``power_cut(broker-a)``: power cut and restart; ``lose(broker-a)``: the machine lost
    for good, store and all, not restarted (``Lab.lose``); ``kill(consumer-1)``;
    ``leave(consumer-2)``; ``join`` (a consumer like the scenario's first);
    ``pause(consumer-1)`` (suspend its pulls); ``freeze(consumer-1,MS)`` (a
    stop-the-world pause of MS ms, see ``freeze``); ``cut(a,b)`` / ``heal(a,b)``: a link down or up both ways)."""
    own = getattr(lab, "explore_fault", None)
    if own is not None:  # a run of another kind injects its own faults (``explore.dledger``)
        own(name)
        return
    what, _, arg = name.partition("(")
    arg = arg.rstrip(")")
    if what == "kill" and arg.startswith("broker-"):
        lab.restart_broker(arg, graceful=False)
    elif what == "power_cut":
        lab.restart_broker(arg, power_cut=True)
    elif what == "lose":
        lab.lose(arg)
    elif what == "kill":
        lab.kill_consumer(arg)
    elif what == "leave":
        lab.remove_consumer(arg)
    elif what == "join":
        from mqlab.experiments.run import _consumer

        _consumer(lab, scenario.consumers[0], scenario.seed)
    elif what == "pause":
        lab.pause_consumer(arg)
    elif what == "freeze":
        node, ms = arg.split(",")
        freeze(lab, node, int(ms))
    elif what in ("cut", "heal"):
        a, b = arg.split(",")
        lab.set_link(a, b, down=what == "cut")
        lab.set_link(b, a, down=what == "cut")
    else:
        raise ScheduleError(f"unknown fault {name!r}")


class Chooser:
    """Follows a schedule at the driver's choice points; records them while searching."""

    def __init__(
        self, lab: Lab, schedule: Schedule, *, menu: tuple[str, ...], latencies: tuple[int, ...],
        depth: int, faults: int, scenario: Any, sends: list, record: bool, por: bool,
        sleep: frozenset[int] = frozenset(), sleep_at: int = -1, deviations: int | None = None,
        sticky: int = 0,
    ) -> None:  # fmt: skip
        self.lab = lab
        self.tokens = list(schedule.choices)
        self.menu = menu
        self.latencies = latencies
        self.depth = depth
        self.fault_budget = faults
        self.scenario = scenario
        self.sends = sends
        self.record = record
        self.por = por
        self.deviations = deviations
        self.sticky = sticky
        #: connections kept slow (``L<i>``), both ways: (node, node) sorted -> latency index
        self.slow: dict[tuple[str, str], int] = {}
        self.pos = 0
        #: The search's visited table (digest -> [``Point.entry``]: depth, faults left, sleep
        #: key, moves left), read only: a run stops at a state expanded before (the search
        #: prunes it there too).
        self.visited: dict | None = None
        #: A search's pick among a free point's options (random walks); None: the first.
        self.pick: Callable[[list[Choice]], int] | None = None
        #: A strategy that picks from the nodes involved (PCT, ``mqlab.explore.search.PCT``):
        #: ``order(i, nodes, options) -> k`` and ``latency(i, sender, receiver, options) ->
        #: k``; before ``pick``.
        self.guide: Any = None
        self.faults_used = 0
        self.made: list[Choice] = []
        self.points: list[Point] = []
        self.sleep: set[int] = set()
        self._sleep_in = sleep
        self._sleep_at = sleep_at
        if sleep_at < 0:
            self.sleep = set(sleep)

    # -- helpers -----------------------------------------------------------------------------
    def _links(self) -> set[frozenset[str]]:
        """Node pairs that exchanged frames or stream bytes (the dependence relation)."""
        d = self.lab.driver
        return {frozenset((c.client, c.server)) for c in d._conns.values()} | d.stream_pairs

    def _independent(self, a: str, b: str, links: set) -> bool:
        return (a != b and a not in _GLOBAL_NODES and b not in _GLOBAL_NODES
                and frozenset((a, b)) not in links)  # fmt: skip

    def _ran(self, node: str, seq: int | None, sched: Any) -> None:
        """Wake the sleepers that depend on an event of ``node`` (all of them for a fault)."""
        if not self.sleep:
            return
        if seq is not None:
            self.sleep.discard(seq)
        if node is None:
            self.sleep.clear()
            return
        links = self._links()
        by_seq = {e[2]: e[3] for e in sched._heap if not e[3].cancelled}
        self.sleep = {s for s in self.sleep
                      if s in by_seq and self._independent(by_seq[s].node, node, links)}  # fmt: skip

    def _arrived(self) -> None:
        if self.pos - 1 == self._sleep_at:
            self.sleep = set(self._sleep_in)

    def _sleep_key(self, sched: Any) -> frozenset:
        now = sched.now
        out = []
        for e in sched._heap:
            t = e[3]
            if t.seq in self.sleep and not t.cancelled:
                out.append((t.node, t.name, t.key, t.due - now))
        return frozenset(out)

    def _moves_left(self) -> int:
        if self.deviations is None:
            return UNBOUNDED
        return self.deviations - sum(c.kind in ("o", "l", "L") for c in self.made)

    def _digest(self) -> str:
        """The state's digest, and the links kept slow (they decide the rest of the run)."""
        d = state_digest(self.lab, self.sends)
        if not self.slow:
            return d
        return hashlib.blake2b(f"{d} {sorted(self.slow.items())!r}".encode(),
                               digest_size=16).hexdigest()  # fmt: skip

    def _subsumed(self, p: Point, i: int) -> bool:
        """This state was expanded before with as much budget left (the search's table)."""
        seen = self.visited.get(p.digest) if self.visited is not None else None
        return covered(seen, self.depth - i, p.moves_left, p.faults_left, p.sleep_key)

    # -- the driver's hooks ------------------------------------------------------------------
    def settled_head(self, sched: Any) -> Any:
        """``choose_event``'s answer where it is the default whatever the candidates: past the
        schedule and the recorded depth, with a fault menu (so that every event is a point,
        one or many candidates). None where ``choose_event`` must see them.

        NOTE: performance — a DLedger run is ~4 100 events and its search records 12 points:
        the rest need not gather the candidates (a heap walk and their groups each).
        """
        i = self.pos
        if not self.menu or i < len(self.tokens) or (self.record and i < self.depth):
            return None
        t = sched.peek()
        if t is None:
            return None
        self.pos = i + 1
        self.made.append(DEFAULT)
        self._ran(t.node, t.seq, sched)
        return t

    def choose_event(self, sched: Any, cands: list) -> Any:
        faults_ok = bool(self.menu)
        if len(cands) == 1 and not faults_ok:
            t = cands[0]
            self._ran(t.node, t.seq, sched)
            return t
        i = self.pos
        self.pos += 1
        if i < len(self.tokens):
            c = self.tokens[i]
            if c.kind == "F":
                self.made.append(c)
                self.faults_used += 1
                apply_fault(self.lab, str(c.value), self.scenario)
                self._ran(None, None, sched)
                self._arrived()
                return None
            if c.kind not in ("o", "d"):
                raise ScheduleError(f"choice {i} is an order point, the schedule says {c}")
            k = 0 if c.kind == "d" else int(c.value)
            if k >= len(cands):
                raise ScheduleError(f"choice {i}: o{k} but only {len(cands)} event(s) enabled")
            self.made.append(c)
            t = cands[k]
            self._ran(t.node, t.seq, sched)
            self._arrived()
            return t
        if not self.record or i >= self.depth:
            self.made.append(DEFAULT)
            t = cands[0]
            self._ran(t.node, t.seq, sched)
            return t
        awake = [j for j, t in enumerate(cands) if t.seq not in self.sleep] if self.por else \
            list(range(len(cands)))  # fmt: skip
        faults_left = self.fault_budget - self.faults_used
        options = [Choice("o", j) if j else DEFAULT for j in awake]
        labels = [f"{cands[j].label} @{cands[j].due}" for j in awake]
        if faults_left > 0:
            options += [Choice("F", f) for f in self.menu]
            labels += [f"fault {f}" for f in self.menu]
        nodes = {t.seq: t.node for t in cands}
        self.points.append(Point(
            i, "o", options, labels, 0, self._digest(), faults_left,
            frozenset((s, nodes.get(s, "")) for s in self.sleep), self._sleep_key(sched),
            [t.seq for t in cands], [t.node for t in cands], self._moves_left(),
        ))  # fmt: skip
        if self._subsumed(self.points[-1], i):
            raise Pruned()
        if not awake and faults_left <= 0:
            raise Redundant()
        if self.guide is not None:
            k = self.guide.order(i, [cands[j].node for j in awake], options)
        else:
            k = 0 if self.pick is None else self.pick(options)
        if not awake and options[k].kind != "F":
            raise Redundant()
        c = options[k]
        self.points[-1].chosen = k
        self.made.append(c)
        if c.kind == "F":
            self.faults_used += 1
            apply_fault(self.lab, str(c.value), self.scenario)
            self._ran(None, None, sched)
            return None
        t = cands[int(c.value)] if c.kind == "o" else cands[awake[0]]
        self._ran(t.node, t.seq, sched)
        return t

    def choose_latency(self, sender: str, receiver: str, cmd: Any, default: int) -> int:
        lats = self.latencies
        if len(lats) < 2:
            return default
        link = (sender, receiver) if sender < receiver else (receiver, sender)
        if link in self.slow:  # kept slow by an ``L<i>``: no choice here
            return lats[self.slow[link]]
        i = self.pos
        self.pos += 1
        if i < len(self.tokens):
            c = self.tokens[i]
            if c.kind not in ("l", "L", "d"):
                raise ScheduleError(f"choice {i} is a latency point, the schedule says {c}")
            k = 0 if c.kind == "d" else int(c.value)
            if k >= len(lats):
                raise ScheduleError(f"choice {i}: {c} but the latency set has {len(lats)} values")
            self.made.append(c)
            if c.kind == "L":
                self.slow[link] = k
            self._arrived()
            return default if k == 0 else lats[k]
        if not self.record or i >= self.depth:
            self.made.append(DEFAULT)
            return default
        sched = self.lab.driver.scheduler
        options = [DEFAULT] + [Choice("l", k) for k in range(1, len(lats))]
        labels = [f"{sender}->{receiver} {lat} ms" for lat in (default, *lats[1:])]
        if self.sticky == 2:  # only the connection kept slow
            options, labels = options[:1], labels[:1]
        if self.sticky:
            options += [Choice("L", k) for k in range(1, len(lats))]
            labels += [f"{sender}->{receiver} {lat} ms from here on" for lat in lats[1:]]
        if self.guide is not None:
            k = self.guide.latency(i, sender, receiver, options)
        else:
            k = 0 if self.pick is None else self.pick(options)
        self.points.append(Point(
            i, "l", options, labels,
            k, self._digest(), self.fault_budget - self.faults_used,
            frozenset((s, "") for s in self.sleep), self._sleep_key(sched),
            moves_left=self._moves_left(),
        ))  # fmt: skip
        if self._subsumed(self.points[-1], i):
            raise Pruned()
        c = options[k]
        self.made.append(c)
        if c.kind == "L":
            self.slow[link] = int(c.value)
        return default if k == 0 else lats[int(c.value)]


def _script(xs: ExploreScenario, t0: int) -> list[tuple]:
    """The scenario's steps in run order: ``("fault", t, name)``, ``("do", t, action)``,
    one ``("arm", t)`` (the explorer takes over: before the first step at or after
    ``arm_ms``) and ``("end", t)``."""
    from mqlab.experiments.schedule import timeline

    arm_at = t0 + xs.arm_ms
    out: list[tuple] = []
    armed = False
    scripted = sorted(xs.scripted)

    def arm_before(t: int) -> None:
        nonlocal armed
        if not armed and t >= arm_at:
            out.append(("arm", arm_at))
            armed = True

    for action in timeline(xs.scenario):
        due = t0 + action.t_ms
        while scripted and t0 + scripted[0][0] <= due:
            at, name = scripted.pop(0)
            arm_before(t0 + at)
            out.append(("fault", t0 + at, name))
        arm_before(due)
        out.append(("do", due, action))
    for at, name in scripted:
        arm_before(t0 + at)
        out.append(("fault", t0 + at, name))
    if not armed:
        out.append(("arm", arm_at))
    out.append(("end", t0 + xs.scenario.end_ms))
    return out


@dataclass(slots=True)
class _Prefix:
    """A cluster built and played up to the arm point, and what the rest of a run needs."""

    lab: Any
    producers: Any
    ctx: Any
    rest: list[tuple]  # the steps from the arm point on
    tmp: str


def _build_to_arm(xs: ExploreScenario) -> _Prefix:
    if hasattr(xs, "build_to_arm"):  # another kind of scenario builds its own (DLedger)
        return xs.build_to_arm()
    from mqlab.experiments.metrics import RunContext
    from mqlab.experiments.run import _do, build_lab

    scn = xs.scenario
    tmp = tempfile.mkdtemp(prefix=f"mqlab-explore-store-{owner_tag()}-", dir=_fast_tmp())
    try:
        lab, producers = build_lab(scn, f"explore-{xs.name}", store_dir=tmp,
                                   slaves=xs.slaves, broker_role=xs.broker_role)  # fmt: skip
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        ctx = RunContext(scenario=scn, t0=lab.now)
        steps = _script(xs, ctx.t0)
        for i, step in enumerate(steps):
            if step[0] == "arm":
                _to(lab, step[1])
                return _Prefix(lab, producers, ctx, steps[i:], tmp)
            _to(lab, step[1])
            if step[0] == "fault":
                apply_fault(lab, step[2], scn)
            else:
                _do(lab, ctx, step[2], producers)
        raise AssertionError("a script without an arm step")  # pragma: no cover
    except BaseException:
        lab.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _to(lab: Lab, t: int) -> None:
    if t > lab.now:
        lab.advance(t - lab.now)


def _run_from_arm(
    xs: ExploreScenario, pre: _Prefix, sched: Schedule, bounds: Bounds, *, record: bool,
    sleep: frozenset[int], sleep_at: int, outcome_cache: dict | None, pick: Any,
    visited: dict | None, on_lab: Callable[[Lab], None] | None, guide: Any = None,
) -> RunRecord:  # fmt: skip
    """Arm the chooser on ``pre`` (at its arm point) and play the rest of the run."""
    from mqlab.explore.outcome import outcome_counts, outcome_label

    if not hasattr(xs, "act"):
        from mqlab.experiments.run import _do

    lab, ctx, scn = pre.lab, pre.ctx, getattr(xs, "scenario", xs)
    chooser = Chooser(
        lab, sched, menu=xs.faults, latencies=bounds.latencies or xs.latencies,
        depth=bounds.depth, faults=bounds.faults, scenario=scn, sends=ctx.sends,
        record=record, por=bounds.por, sleep=sleep, sleep_at=sleep_at,
        deviations=bounds.deviations, sticky=bounds.sticky,
    )  # fmt: skip
    chooser.pick = pick
    chooser.guide = guide
    chooser.visited = visited
    rec = RunRecord(chooser.made, chooser.points)
    try:
        for step in pre.rest:
            _to(lab, step[1])
            if step[0] == "arm":
                lab.driver.set_chooser(chooser, window_ms=bounds.window_ms)
            elif step[0] == "fault":
                apply_fault(lab, step[2], scn)
            elif step[0] == "do" and hasattr(xs, "act"):
                xs.act(lab, ctx, step)
            elif step[0] == "do":
                _do(lab, ctx, step[2], pre.producers)  # pyright: ignore[reportPossiblyUnbound]
    except Redundant:
        rec.redundant = True
    except Pruned:
        rec.pruned = True
    rec.events = lab.driver.events_run
    rec.links = frozenset(chooser._links())
    stopped = rec.redundant or rec.pruned
    if chooser.pos < len(chooser.tokens) and not stopped:
        extra = [c for c in chooser.tokens[chooser.pos :] if not c.is_default]
        if extra:
            raise ScheduleError(
                f"the run met {chooser.pos} choice point(s); the schedule has "
                f"{len(chooser.tokens)} (it ends with {Schedule(tuple(extra))})"
            )
    if not stopped:
        rec.final_digest = state_digest(lab, ctx.sends)
        hit = outcome_cache.get(rec.final_digest) if outcome_cache is not None else None
        if hit is None:
            own = getattr(lab, "explore_outcome", None)
            counts = own(ctx.sends) if own is not None else outcome_counts(lab, ctx.sends)
            hit = (outcome_label(counts), counts)
            if outcome_cache is not None:
                outcome_cache[rec.final_digest] = hit
        rec.outcome, rec.counts = hit
    if on_lab is not None:
        on_lab(lab)
    return rec


def run_schedule(
    xs: ExploreScenario, schedule: Schedule | str = "", bounds: Bounds | None = None, *,
    record: bool = False, sleep: frozenset[int] = frozenset(), sleep_at: int = -1,
    outcome_cache: dict[str, tuple[str, dict]] | None = None,
    pick: Callable[[list[Choice]], int] | None = None,
    visited: dict | None = None,
    on_lab: Callable[[Lab], None] | None = None,
    snapshots: Snapshots | None = None,
    guide: Any = None,
) -> RunRecord:  # fmt: skip
    """Run ``xs`` under ``schedule`` (defaults after its end) and classify its outcome.

    ``record``: note the choice points up to ``bounds.depth`` (a search). ``sleep`` /
    ``sleep_at``: the sleep set to install after choice point ``sleep_at``.
    ``on_lab``: called with the finished lab before it closes (the widget's replay).
    ``pick`` / ``guide``: what a random walk or a PCT run picks at its free points.
    ``snapshots``: a search's cluster snapshots at the arm point (``Snapshots``): the run
    forks from one instead of building the cluster (the same record, byte for byte).

    Raises:
        ScheduleError: the schedule does not fit this run.
    """
    with _fewer_gc_passes():  # the whole run, build and classification included
        rec = _run_schedule(xs, schedule, bounds, record=record, sleep=sleep,
                            sleep_at=sleep_at, outcome_cache=outcome_cache, pick=pick,
                            visited=visited, on_lab=on_lab, snapshots=snapshots,
                            guide=guide)  # fmt: skip
    _freeze_imports()
    return rec


def _run_schedule(
    xs: ExploreScenario, schedule: Schedule | str, bounds: Bounds | None, *, record: bool,
    sleep: frozenset[int], sleep_at: int, outcome_cache: dict | None, pick: Any,
    visited: dict | None, on_lab: Callable[[Lab], None] | None, snapshots: Snapshots | None,
    guide: Any,
) -> RunRecord:  # fmt: skip
    bounds = bounds or Bounds(depth=0)
    sched = Schedule.parse(schedule)
    kw = dict(record=record, sleep=sleep, sleep_at=sleep_at, outcome_cache=outcome_cache,
              pick=pick, visited=visited, on_lab=on_lab)  # fmt: skip
    if guide is not None:
        kw["guide"] = guide
    if snapshots is not None and on_lab is None:
        rec = snapshots.run(xs, sched, bounds, kw)
        if rec is not None:
            return rec
    pre = _build_to_arm(xs)
    try:
        return _run_from_arm(xs, pre, sched, bounds, **kw)
    finally:
        pre.lab.close()
        shutil.rmtree(pre.tmp, ignore_errors=True)


_frozen_in: int | None = None


def _freeze_imports() -> None:
    """Once per process, after its first run: ``gc.freeze()`` what lives then (the imported
    modules, the first run's lazy imports included: ~100 000 objects), so that the
    collector's full passes during later runs scan only their own objects.

    NOTE: performance — with the whole run under ``_fewer_gc_passes`` (above) and this, the
    collector takes ~2 ms of a consumer_join run instead of ~5 (``gc.callbacks``, 60
    replays). Nothing a run computes depends on when the collector runs. Skipped where other
    threads run (a Jupyter kernel: its later cyclic garbage would stay frozen); a
    collection first, so no garbage is frozen.
    """
    global _frozen_in
    if _frozen_in == os.getpid() or threading.active_count() > 1:
        return
    _frozen_in = os.getpid()
    gc.collect()
    gc.freeze()


def _fast_tmp() -> str | None:
    """Where runs' stores go (``mqlab.explore.tmpdirs.scratch_dir``: ``/dev/shm`` when
    writable)."""
    return scratch_dir()
