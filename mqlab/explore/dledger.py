"""DLedger schedules for the explorer: a scenario kind backed by ``DLedgerGroup``.

Mirrors no DLedger class. A ``DLedgerScenario`` is what ``ExploreScenario`` is for a broker
Lab, for a DLedger group of ``n`` nodes on one ``SimDriver`` (``mqlab.dledger.group``):
the engine (``mqlab.explore.engine``) builds it, plays its timeline up to ``arm_ms``, hands
the driver the same ``Chooser`` (order points, latency points, faults from the menu), plays
the rest and classifies the end. What differs is behind four hooks the engine calls when a
scenario has them: ``build_to_arm`` (the group instead of a Lab), ``act`` (a timeline
step: an append through the leader, as DLedger's client sends APPEND to the leader it
knows; ``DLedgerServer#handleAppend``), and, on the run object ``DLedgerRun``,
``explore_fault``, ``explore_digest`` and ``explore_outcome``.

Times: ``t0`` is ``warmup_ms`` (the first leader is elected by then, seeded); timeline
times are from ``t0``. Faults (menu tokens ``F:<name>`` and scripted steps):

- ``kill(X)``: kill -9 (``DLedgerGroup.kill``: log and ``currterm`` kept); ``restart(X)``,
  ``restart(all)``: start every killed node again on its disk;
- ``isolate(X)``: a partition with ``X`` alone on one side; ``heal``: every link back;
- ``X`` is a node (``n0``) or ``leader``: the leader when the fault is injected (the
  running leader with the highest term; no leader: the fault does nothing).

Outcome keys (``DLEDGER_KEYS``), the four safety checkers first (Raft, Ongaro and
Ousterhout 2014, Figure 3):

- ``two_leaders``: terms in which two nodes became leader (Election Safety; a node
  becomes leader in ``DLedgerLeaderElector#changeRoleToLeader``, trace step 6);
- ``leader_missing``: (new leader, committed entry) pairs where an entry committed on
  some node before the election is not in the new leader's log at that moment (Leader
  Completeness);
- ``lost``: appends acknowledged SUCCESS (``DLedgerEntryPusher.QuorumAckChecker``) whose
  entry (index, term, body) a majority of the nodes does not hold at the end;
- ``diverged``: indexes at which two nodes committed different entries, at any time of
  the run (``DLedgerMmapFileStore#updateCommittedIndex``) or in their committed prefix
  at the end (State Machine Safety);

then two that the protocol allows, written to tell the classes apart:

- ``unacked``: appends that got no SUCCESS (no answer, WAIT_QUORUM_ACK_TIMEOUT,
  TERM_CHANGED, NOT_LEADER);
- ``truncated``: entries a leader appended that no node holds at the end (an uncommitted
  entry cut by ``DLedgerMmapFileStore#truncate`` on a follower, or overwritten);
- ``split``: split votes after the warm-up: terms in which two or more nodes asked for
  votes (``maintainAsCandidate``, trace step 2) and none became leader. (Every group
  starts with one: at 0 ms each node asks for itself in term 0.)
"""

from __future__ import annotations

import hashlib
import random
import types
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.protocol import DLedgerResponseCode
from mqlab.explore.schedule import ScheduleError
from mqlab.explore.state import frame_bytes, tuple_digest
from mqlab.trace.events import TraceLevel

__all__ = ["DLedgerScenario", "DLedgerRun", "DLEDGER_KEYS", "dledger_counts"]

DLEDGER_KEYS = (
    "two_leaders",
    "leader_missing",
    "lost",
    "diverged",
    "unacked",
    "truncated",
    "split",
)


@dataclass(frozen=True)
class DLedgerScenario:
    """A DLedger group, a timeline, and what the explorer may vary. See the module essay.

    ``appends``: ``(t_ms, body)``, each through the leader at that time; ``scripted``:
    ``(t_ms, fault)`` at fixed times; ``end_ms``: the run's end (from ``t0``);
    ``config``: ``DLedgerConfig`` fields, as pairs.
    """

    name: str
    n: int = 3
    seed: int = 0
    warmup_ms: int = 1000
    appends: tuple[tuple[int, bytes], ...] = ()
    scripted: tuple[tuple[int, str], ...] = ()
    end_ms: int = 12_000
    config: tuple[tuple[str, Any], ...] = ()
    arm_ms: int = 0
    faults: tuple[str, ...] = ()
    latencies: tuple[int, ...] = ()
    depth: int = 6
    fault_budget: int = 0
    window_ms: int = 0
    allowed: frozenset[str] = frozenset()
    expected: frozenset[str] = frozenset()
    text: str = ""
    kind = "dledger"

    def steps(self, t0: int) -> list[tuple]:
        """The timeline in run order, as ``engine._script`` gives a broker scenario's."""
        timed = sorted(
            [(t, 1, "fault", f) for t, f in self.scripted]
            + [(t, 2, "do", ("append", body)) for t, body in self.appends]
        )
        out: list[tuple] = []
        armed = False
        for t, _, what, arg in timed:
            if not armed and t >= self.arm_ms:
                out.append(("arm", t0 + self.arm_ms))
                armed = True
            out.append((what, t0 + t, arg))
        if not armed:
            out.append(("arm", t0 + self.arm_ms))
        out.append(("end", t0 + self.end_ms))
        return out

    def build_to_arm(self) -> Any:
        """The group built and played up to the arm point (``engine._Prefix``)."""
        from mqlab.explore.engine import _Prefix

        run = DLedgerRun(self)
        try:
            run.advance(self.warmup_ms)
            steps = self.steps(run.now)
            for i, step in enumerate(steps):
                _to(run, step[1])
                if step[0] == "arm":
                    return _Prefix(run, None, run, steps[i:], "")
                self.act(run, run, step)
            raise AssertionError("a timeline without an arm step")  # pragma: no cover
        except BaseException:
            run.close()
            raise

    def act(self, run: DLedgerRun, ctx: Any, step: tuple) -> None:
        """One timeline step at its time: a fault, or an append through the leader."""
        if step[0] == "fault":
            run.explore_fault(step[2])
        elif step[0] == "do":
            run.append(step[2][1])


def _to(run: DLedgerRun, t: int) -> None:
    if t > run.now:
        run.advance(t - run.now)


@dataclass
class _Watch:
    """What the checkers read besides the end state, recorded as the run goes."""

    leaders: dict[int, set[str]] = field(default_factory=dict)  # term -> nodes elected
    candidates: dict[int, set[str]] = field(default_factory=dict)  # term -> nodes that asked
    #: index -> the entries (term, body digest) committed there, on any node, at any time
    committed: dict[int, set[tuple[int, str]]] = field(default_factory=dict)
    #: (node, index) already recorded as committed
    seen: set[tuple[str, int]] = field(default_factory=set)
    missing: set[tuple[str, int, int]] = field(default_factory=set)  # (leader, term, index)
    appended: set[tuple[int, int]] = field(default_factory=set)  # (index, term) by a leader
    faults: list[tuple[int, str]] = field(default_factory=list)


def _h(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=8).hexdigest()


class DLedgerRun:
    """One run's group, with the hooks the engine calls (see the module essay)."""

    def __init__(self, xs: DLedgerScenario) -> None:
        self.xs = xs
        self.group = DLedgerGroup(xs.n, seed=xs.seed, trace_level=TraceLevel.STEPS,
                                  **dict(xs.config))  # fmt: skip
        self.driver = self.group.driver
        self.sends: list[tuple[bytes, Any]] = []  # (body, the append's future)
        self.watch = _Watch()
        self.trace.subscribe(self._on_event)
        for node_id, server in self.group.servers.items():
            server.store.commit_listeners.append(lambda n=node_id: self._on_commit(n))

    # -- a Lab's surface, as the engine uses it ---------------------------------------------
    @property
    def now(self) -> int:
        return self.driver.now

    @property
    def trace(self):
        return self.driver.recorder

    def advance(self, ms: int) -> None:
        self.driver.advance(ms)

    def close(self) -> None:
        self.driver.set_chooser(None)

    # -- records -----------------------------------------------------------------------------
    def _log(self, node_id: str) -> dict[int, tuple[int, str]]:
        return {i: (t, _h(b)) for i, t, b in self.group.log(node_id)}

    def _on_commit(self, node_id: str) -> None:
        w = self.watch
        store = self.group.server(node_id).store
        log = self._log(node_id)
        for i in range(store.committed_index + 1):
            if (node_id, i) not in w.seen and i in log:
                w.seen.add((node_id, i))
                w.committed.setdefault(i, set()).add(log[i])

    def _on_event(self, e: Any) -> None:
        if e.component == "DLedgerLeaderElector" and e.step == "6":
            term = e.fields["term"]
            self.watch.leaders.setdefault(term, set()).add(e.node)
            log = self._log(e.node)
            for i, entries in self.watch.committed.items():
                for entry in entries:
                    if log.get(i) != entry:
                        self.watch.missing.add((e.node, term, i))
        elif (
            e.component == "DLedgerLeaderElector" and e.step == "2" and e.t_ms >= self.xs.warmup_ms
        ):
            self.watch.candidates.setdefault(e.fields["term"], set()).add(e.node)
        elif e.component == "DLedgerServer.handleAppend" and "index" in e.fields:
            self.watch.appended.add((e.fields["index"], e.fields["term"]))

    # -- clients and faults ------------------------------------------------------------------
    def append(self, body: bytes) -> None:
        """An APPEND to the leader (none: to ``n0``, which answers NOT_LEADER)."""
        leader = self.group.leader() or self.group.ids[0]
        self.sends.append((body, self.group.append(body, leader)))

    def _node(self, arg: str) -> str | None:
        if arg == "leader":
            return self.group.leader()
        self.group.server(arg)
        return arg

    def explore_fault(self, name: str) -> None:
        """Inject ``name`` (module essay: kill, restart, isolate, heal)."""
        what, _, arg = name.partition("(")
        arg = arg.rstrip(")")
        g = self.group
        if what == "heal" and not arg:
            node = None
            g.heal()
        elif what == "restart" and arg == "all":
            node = None
            for i in g.ids:
                if not g.server(i).running:
                    g.restart(i)
        elif what in ("kill", "restart", "isolate"):
            node = self._node(arg)
            if node is not None:
                if what == "kill":
                    g.kill(node)
                elif what == "restart":
                    if not g.server(node).running:
                        g.restart(node)
                else:
                    g.partition([node])
        else:
            raise ScheduleError(f"unknown DLedger fault {name!r}; known: kill(X), restart(X), "
                                "restart(all), isolate(X), heal (X: a node or leader)")  # fmt: skip
        self.watch.faults.append((self.now, f"{name}->{node}"))
        self.driver._tracer.emit("Explorer", "fault", "fault", fault=name, node=node,
                                 text=f"explorer: {name} ({node or 'every node'})")  # fmt: skip

    # -- the engine's hooks ------------------------------------------------------------------
    def explore_digest(self, sends: list | None = None) -> str:
        return tuple_digest(self.state_tuple())

    def explore_outcome(self, sends: list | None = None) -> dict[str, int]:
        return dledger_counts(self)

    def state_tuple(self) -> tuple:
        """Every node's state (member state, store, elector, pusher, their rounds and
        futures, its random streams), every pending timer and frame, the connections, the
        appends' futures and the checkers' records. Times are absolute (``now`` is in):
        only runs at the same time merge, which is what reordered events reach."""
        d = self.driver
        now = d.scheduler.now
        nodes = []
        for name in self.group.ids:
            s = self.group.servers[name]
            ctx = d.contexts[name]
            store = s.store
            nodes.append((
                name, s.running, s.epoch, tuple(sorted(s.disk.items())),
                _canon(s.member_state, set()),
                (_h(bytes(store.data)), _h(bytes(store.index)), store.ledger_begin_index,
                 store.ledger_end_index, store.ledger_end_term, store.committed_index,
                 store.committed_pos),
                _canon(s.elector, set()), _canon(s.pusher, set()),
                tuple(sorted((k, _h(repr(r.getstate()).encode())) for k, r in ctx._rngs.items())),
                repr(ctx._opaque), tuple(sorted(ctx.pending)),
            ))  # fmt: skip
        timers = []
        for e in d.scheduler._heap:
            t = e[3]
            if t.cancelled:
                continue
            fb = frame_bytes(t) if t.name in ("frame", "stream") else None
            timers.append((t.due, t.priority, t.node, t.name, t.key or "", t.daemon,
                           _h(fb) if fb else ""))  # fmt: skip
        timers.sort()
        conns = tuple(sorted(
            (c.id, c.client, c.server, c.closed, tuple(sorted(c.last_due.items())))
            for c in d._conns.values()
        ))  # fmt: skip
        links = tuple(sorted((k, v.down) for k, v in d.links.items()))
        w = self.watch
        watch = (
            tuple(sorted((t, tuple(sorted(v))) for t, v in w.leaders.items())),
            tuple(sorted((t, tuple(sorted(v))) for t, v in w.candidates.items())),
            tuple(sorted((i, tuple(sorted(v))) for i, v in w.committed.items())),
            tuple(sorted(w.seen)),
            tuple(sorted(w.missing)),
            tuple(sorted(w.appended)),
            tuple(w.faults),
        )
        sends = tuple((body, _canon(f, set())) for body, f in self.sends)
        return (now, tuple(nodes), tuple(timers), conns, links, repr(d._conn_ids), watch, sends)


_SKIP = frozenset({"server", "config", "dledger_config", "ctx", "pusher", "elector", "member_state",
                   "store", "role_change_handlers", "append_hooks", "commit_listeners", "disk"})  # fmt: skip


def _canon(obj: Any, seen: set[int]) -> Any:
    """A canonical, id-free form of a DLedger object graph (back references skipped,
    callables named only, dicts and sets sorted)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, Enum):
            return obj.value
        return obj
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (bytes, bytearray)):
        return _h(bytes(obj))
    if isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
        return "fn"
    if isinstance(obj, dict):
        return tuple(sorted(((_canon(k, seen), _canon(v, seen)) for k, v in obj.items()), key=repr))
    if isinstance(obj, (list, tuple, deque)):
        return tuple(_canon(x, seen) for x in obj)
    if isinstance(obj, (set, frozenset)):
        return tuple(sorted((_canon(x, seen) for x in obj), key=repr))
    if isinstance(obj, random.Random):
        return _h(repr(obj.getstate()).encode())
    mod = type(obj).__module__
    if not mod.startswith("mqlab.dledger"):
        return type(obj).__name__
    if id(obj) in seen:
        return ("ref", type(obj).__name__)
    seen.add(id(obj))
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in names]
    return (type(obj).__name__, tuple(
        (n, _canon(getattr(obj, n, None), seen)) for n in names if n not in _SKIP
    ))  # fmt: skip


def dledger_counts(run: DLedgerRun) -> dict[str, int]:
    """Every ``DLEDGER_KEYS`` count of a finished run (the module essay says what each is)."""
    g, w = run.group, run.watch
    counts = dict.fromkeys(DLEDGER_KEYS, 0)
    counts["two_leaders"] = sum(len(v) > 1 for v in w.leaders.values())
    counts["leader_missing"] = len(w.missing)
    logs = {i: run._log(i) for i in g.ids}
    majority = len(g.ids) // 2 + 1
    for body, f in run.sends:
        v = f.value if f.done else None
        if v is None or DLedgerResponseCode.value_of(v.code) != DLedgerResponseCode.SUCCESS:
            counts["unacked"] += 1
            continue
        held = sum(log.get(v.index) == (v.term, _h(body)) for log in logs.values())
        counts["lost"] += held < majority
    committed = {i: set(v) for i, v in w.committed.items()}
    for node_id in g.ids:
        c = g.server(node_id).store.committed_index
        for i in range(c + 1):
            if i in logs[node_id]:
                committed.setdefault(i, set()).add(logs[node_id][i])
    counts["diverged"] = sum(len(v) > 1 for v in committed.values())
    held_anywhere = {(i, e[0]) for log in logs.values() for i, e in log.items()}
    counts["truncated"] = len(w.appended - held_anywhere)
    counts["split"] = sum(len(v) > 1 and t not in w.leaders for t, v in w.candidates.items())
    return counts
