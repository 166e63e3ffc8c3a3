"""The Lab's DLedger groups: brokers whose commit log is Raft, and the faults that test it.

``Lab(seed=…, dledger=3)`` (or 5) makes each broker name a DLedger group, as 4.9.3 runs it
with ``enableDLegerCommitLog=true`` (mechanisms.md "DLedger in the workbench"):

1. **Build.** For broker name ``broker-a`` and node ``nK`` (``dLegerSelfId``), a
   ``DLedgerServer`` node ``dledger-a-nK`` on ``127.0.0.1:40911 + 10 * i + K`` (its entry of
   ``dLegerPeers``, ``dLegerGroup`` = the broker name) and a ``BrokerController`` node
   ``broker-a-nK`` on ``127.0.0.1:10911 + 10 * i + 1000 * K`` whose store's commit log is a
   ``DLedgerCommitLog`` over that server. In 4.9.3 both live in one JVM; here they are two
   nodes of one driver, and the Lab's machine faults take both (``Lab.kill``,
   ``Lab.power_cut``, ``Lab.restart_broker``). Every broker starts with brokerId -1 and does
   not register (``BrokerStartup``, ``BrokerController#start``).
2. **Elect.** The servers' election timers (drawn from the seed) run; the winner's
   ``DLedgerRoleChangeHandler`` makes its broker ``SYNC_MASTER`` with brokerId 0 once its log
   is committed and dispatched, each follower's a ``SLAVE`` with brokerId ``K + 1``; each
   registers with the name server. The Lab's constructor runs until every broker name has a
   brokerId 0 registered (``run_until_master``).
3. **Send.** A producer's SEND_MESSAGE_V2 reaches the master; ``DLedgerCommitLog`` appends
   the message as an entry and answers SEND_OK only once a majority holds it (the quorum ack
   moves the committed index); consume queues are built from committed entries on every node.

The faults (each journaled, each a ``Lab`` trace event of kind FAULT):

- ``kill(node)`` / ``restart_broker(node)``: the broker and its DLedger server die and start
  together; the DLedger log and the ``currterm`` file stay (page cache, disk).
- ``power_cut(node)``: as a kill, and the DLedger log keeps only what its last flush pass
  covered: 0.2.3's ``FlushDataService`` flushes every ``flushFileInterval`` (10 ms) from the
  node's start, so entries written since the last pass are lost (``dledger_power_cut``).
- ``partition(side)``: every DLedger link between ``side`` and the rest of its group is cut
  silently (no packet crosses); the name server and the clients still reach every broker, so
  a producer's send to an isolated leader waits for a quorum that never comes
  (``maxWaitAckTimeMs`` 2500 ms, then SYSTEM_ERROR "broker busy", docs/dledger.md §5).
- ``lose(node)``: the machine and its disk (log, ``currterm``) are gone; ``restart_broker``
  starts a replacement in term 0 with no vote and an empty log.
- ``heal()``: every DLedger link up again. ``slow_link(a, b, latency_ms)``: the DLedger
  link between two nodes takes ``latency_ms`` each way.

Stepping: ``run_until_vote()`` steps until the next vote is answered (``dledger_votes()``
lists them all); ``run_until_elected()`` steps event by event until a node becomes leader in a
term no leader held before the call; ``run_until_master()`` until the name server lists the
leader's broker as brokerId 0. ``dledger_nodes()`` is each node's role, term, vote, log end
and committed index (``dledger_view`` as the panels show it), ``dledger_entries(node)`` a
node's log as its commit log, ``dledger_leader()`` and ``master_in_route()`` who leads and who
the name server lists as brokerId 0. ``Lab(dledger_config={...})`` sets DLedger's own settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mqlab.broker.broker_controller import BrokerController
from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_server import DLedgerServer
from mqlab.dledger.member_state import Role
from mqlab.lab.journal import journaled
from mqlab.store.dledger_commit_log import dledger_config_from
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.lab.lab import Lab
    from mqlab.runtime.sim import SimDriver

__all__ = ["COLUMNS", "DLEDGER_PORT_BASE", "DLEDGER_SIZES", "DLedgerMixin", "dledger_power_cut",
           "dledger_view"]  # fmt: skip

#: The first DLedger node's port (``dLegerPeers``); broker-b's group starts at +10.
DLEDGER_PORT_BASE = 40911
#: The group sizes a Lab builds: Raft needs an odd majority to survive one (two) failures.
DLEDGER_SIZES = (3, 5)
#: How long ``run_until_elected`` / ``run_until_master`` wait by default (virtual ms).
ELECTION_WAIT_MS = 60_000


def dledger_power_cut(server: DLedgerServer, now_ms: int, started_ms: int) -> dict[str, int]:
    """What a DLedger node's log keeps when its machine loses power at ``now_ms``.

    0.2.3's ``DLedgerMmapFileStore.FlushDataService`` flushes the data and index files, then
    waits ``flushFileInterval`` (10 ms), from the node's start at ``started_ms``: the last
    pass before the cut ran at ``started_ms + 10 * k`` and covered what was written before
    it. Entries written at or after that pass are lost (their pages were in the page cache
    only), and the log is cut back to the last flushed entry; the ``currterm`` file stays
    (``MemberState#persistTerm`` writes it at each change).

    Returns:
        ``ledger_end_index`` before and after the cut, and ``lost_entries``.
    """
    store = server.store
    interval = max(1, server.config.flush_file_interval)
    last_pass = started_ms + (now_ms - started_ms) // interval * interval
    before = store.ledger_end_index
    keep = before
    while keep >= store.ledger_begin_index and keep >= 0:
        written = store.write_ms.get(keep)
        if written is None or written < last_pass:
            break
        keep -= 1
    store.cut_to(keep)
    return {"ledger_end_index_before": before, "ledger_end_index_after": keep,
            "lost_entries": before - keep}  # fmt: skip


#: The DLedger panel's table columns (``dledger_view``), left to right.
COLUMNS = ["node", "id", "up", "role", "term", "voted_for", "leader", "end_index", "end_term",
           "committed", "broker_id", "cut_from", "slow_to"]  # fmt: skip


def dledger_view(lab: Lab, name: str = "broker-a") -> pd.DataFrame:
    """The nodes of DLedger group ``name`` as the panel shows them: one row per node, the
    columns ``COLUMNS``. ``cut_from``: the peers this node's DLedger links to are down (a
    partition); ``slow_to``: the peers with a set latency, as ``n0:400ms``."""
    import pandas as pd

    df = lab.dledger_nodes(name)
    servers = {lab.dledger_server(n).config.self_id: lab.dledger_server(n) for n in df.index}
    rows = []
    for node, r in df.iterrows():
        me = servers[r["self_id"]]
        cut, slow = [], []
        for peer_id, peer in servers.items():
            link = lab.driver.links.get((me.name, peer.name))
            if peer is me or link is None:
                continue
            if link.down:
                cut.append(peer_id)
            if link.latency_ms is not None:
                slow.append(f"{peer_id}:{link.latency_ms}ms")
        up = bool(r["running"])
        rows.append({
            "node": node, "id": r["self_id"], "up": "up" if up else "DOWN", "role": r["role"],
            "term": int(r["term"]), "voted_for": r["vote_for"] or "-",
            "leader": r["leader_id"] or "-", "end_index": int(r["ledger_end_index"]),
            "end_term": int(r["ledger_end_term"]), "committed": int(r["committed_index"]),
            "broker_id": "-" if not up or r["broker_id"] is None else int(r["broker_id"]),
            "cut_from": ",".join(cut) or "-", "slow_to": ",".join(slow) or "-",
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


class DLedgerMixin:
    """The DLedger half of ``Lab``. See the module essay."""

    driver: SimDriver
    brokers: list[BrokerController]
    _journal: list
    _replaying: bool
    dledger: int

    # -- construction --------------------------------------------------------------------------
    def _init_dledger(self, overrides: dict[str, Any] | None = None) -> None:
        self._dledger_overrides = dict(overrides or {})
        for key in ("group", "self_id", "peers"):
            if key in self._dledger_overrides:
                raise ValueError(f"dledger_config cannot set {key!r}: the Lab names the group "
                                 "(the broker name), each node's selfId and the peers")  # fmt: skip
        try:
            DLedgerConfig(
                group="g", self_id="n0", peers="n0-127.0.0.1:1", **self._dledger_overrides
            )
        except TypeError as e:
            raise ValueError(f"unknown DLedger setting: {e}") from None
        #: DLedger servers by node name (``dledger-a-n0``), and each broker node's server
        self.dledger_servers: dict[str, DLedgerServer] = {}
        self._dledger_of: dict[str, str] = {}
        self._dledger_started: dict[str, int] = {}

    @staticmethod
    def _dledger_node_name(letter: str, k: int) -> str:
        return f"dledger-{letter}-n{k}"

    def _dledger_peers(self, letter: str) -> str:
        i = ord(letter) - ord("a")
        return ";".join(
            f"n{k}-127.0.0.1:{DLEDGER_PORT_BASE + 10 * i + k}" for k in range(self.dledger)
        )

    def _add_dledger_node(self, letter: str, k: int, bcfg: Any, scfg: Any) -> BrokerController:
        name = bcfg.broker_name
        scfg.enable_d_leger_commit_log = True
        scfg.d_leger_group = name
        scfg.d_leger_peers = self._dledger_peers(letter)
        scfg.d_leger_self_id = f"n{k}"
        # DLedgerCommitLog's constructor: the node's settings from the broker's keys (data
        # files of mappedFileSizeCommitLog, preferredLeaderId ...), then the Lab's overrides
        cfg = dataclasses.replace(
            dledger_config_from(scfg, DLedgerConfig.store_base_dir), **self._dledger_overrides
        )
        server = DLedgerServer(cfg, name=self._dledger_node_name(letter, k))
        self.driver.add_node(server)
        self._dledger_started[server.name] = self.driver.now
        self.dledger_servers[server.name] = server
        broker = BrokerController(bcfg, scfg, name=f"{name}-n{k}", dledger_server=server,
                                  rocketmq_home_dir=self.rocketmq_home)  # type: ignore[attr-defined]  # fmt: skip
        self._dledger_of[broker.name] = server.name
        self.driver.add_node(broker)
        self.brokers.append(broker)
        return broker

    # -- views ---------------------------------------------------------------------------------
    def _need_dledger(self) -> None:
        if not self.dledger:
            raise ValueError("this lab has no DLedger group: build it with Lab(dledger=3)")

    def dledger_server(self, node: str) -> DLedgerServer:
        """The DLedger server of ``node``: a broker node (``broker-a-n1``), a DLedger node
        (``dledger-a-n1``), or, with one broker name, its ``selfId`` (``n1``).

        Raises:
            ValueError: no such node (the message lists them), or no DLedger in this lab.
        """
        self._need_dledger()
        if isinstance(node, str):
            if node in self.dledger_servers:
                return self.dledger_servers[node]
            if node in self._dledger_of:
                return self.dledger_servers[self._dledger_of[node]]
            ids = [s for s in self.dledger_servers.values() if s.config.self_id == node]
            if len(ids) == 1:
                return ids[0]
        raise ValueError(
            f"no DLedger node {node!r}; nodes: {sorted(self._dledger_of)} "
            f"(or their DLedger nodes {sorted(self.dledger_servers)})"
        )

    def _machine(self, node: Any) -> Any:
        """The broker node of a DLedger node name or selfId (``n1``); anything else as is."""
        if not self.dledger or not isinstance(node, str) or node in self._dledger_of:
            return node
        try:
            return self._broker_of_server(self.dledger_server(node)).name
        except ValueError:
            return node

    def _broker_of_server(self, server: DLedgerServer) -> BrokerController:
        name = next(b for b, s in self._dledger_of.items() if s == server.name)
        return next(b for b in self.brokers if b.name == name)

    def _group_of(self, server: DLedgerServer) -> list[DLedgerServer]:
        return [s for s in self.dledger_servers.values() if s.config.group == server.config.group]

    def _groups(self, name: str | None) -> list[DLedgerServer]:
        self._need_dledger()
        servers = list(self.dledger_servers.values())
        if name is None:
            return servers
        out = [s for s in servers if s.config.group == name]
        if not out:
            groups = sorted({s.config.group for s in servers})
            raise ValueError(f"no DLedger group {name!r}; groups: {groups}")
        return out

    def dledger_nodes(self, name: str | None = None) -> pd.DataFrame:
        """Each DLedger node (of broker name ``name``, default all): its broker, whether it
        runs, its role, term, vote (``votedFor``), leader, log end index and term, committed
        index, and its broker's role and brokerId. One row per node, by broker node name."""
        import pandas as pd

        rows = []
        for s in self._groups(name):
            b = self._broker_of_server(s)
            ms = s.member_state
            rows.append({
                "node": b.name, "self_id": s.config.self_id, "group": s.config.group,
                "running": s.running, "role": ms.role.value, "term": ms.curr_term,
                "vote_for": ms.curr_vote_for, "leader_id": ms.leader_id,
                "ledger_end_index": s.store.ledger_end_index,
                "ledger_end_term": s.store.ledger_end_term,
                "committed_index": s.store.committed_index,
                "broker_role": b.message_store_config.broker_role.value if b.running else None,
                "broker_id": b.broker_config.broker_id if b.running else None,
            })  # fmt: skip
        return pd.DataFrame(rows).set_index("node")

    def dledger_leader(self, name: str = "broker-a") -> str | None:
        """The broker node whose DLedger server leads group ``name`` in the highest term
        among the running leaders (two only across a partition), or None."""
        leaders = [s for s in self._groups(name)
                   if s.running and s.member_state.role == Role.LEADER]  # fmt: skip
        if not leaders:
            return None
        return self._broker_of_server(max(leaders, key=lambda s: s.member_state.curr_term)).name

    def dledger_log(self, node: str) -> list[tuple[int, int, int]]:
        """A node's DLedger log as ``(index, term, body size)``, oldest first."""
        return [(e.index, e.term, len(e.body or b""))
                for e in self.dledger_server(node).store.entries()]  # fmt: skip

    def _vote_row(self, e: Any) -> dict[str, Any]:
        server = self.dledger_servers[e.node]
        return {"t_ms": e.t_ms, "voter": self._broker_of_server(server).name,
                "voter_id": server.config.self_id, "candidate": e.fields["candidate"],
                "term": e.fields["term"], "result": e.fields["result"],
                "voter_term": e.fields["curr_term"], "vote_for": e.fields["vote_for"]}  # fmt: skip

    def _vote_events(self, name: str | None, since: int = 0) -> list:
        nodes = {s.name for s in self._groups(name)}
        return [e for e in self.trace.events[since:]  # type: ignore[attr-defined]
                if e.node in nodes and e.component == "DLedgerLeaderElector" and e.step == "3"]  # fmt: skip

    def dledger_votes(self, name: str | None = None, *, since_ms: int = 0) -> pd.DataFrame:
        """Every vote answered (``DLedgerLeaderElector#handleVote``, step 3) in group ``name``
        (default all) from ``since_ms`` on: when, the voter, the candidate (its selfId; a
        candidate asks itself too), the term asked for, the answer (ACCEPT,
        REJECT_ALREADY_VOTED, REJECT_TERM_NOT_READY, …), and the voter's term and vote after."""
        import pandas as pd

        rows = [self._vote_row(e) for e in self._vote_events(name) if e.t_ms >= since_ms]
        cols = ["t_ms", "voter", "voter_id", "candidate", "term", "result", "voter_term",
                "vote_for"]  # fmt: skip
        return pd.DataFrame(rows, columns=cols)

    def dledger_entries(self, node: str, *, raw: bool = False) -> pd.DataFrame:
        """A node's DLedger log as its broker's commit log: one row per entry, its ``index``,
        ``term``, whether it is ``committed`` on this node, and the message inside, decoded
        (``commit_log_offset`` is the entry's position + 48, as in the msgId; ``raw=True``
        adds the message's bytes). ``Lab.commit_log`` of a DLedger broker is this frame."""
        import pandas as pd

        from mqlab.common.message_decoder import MessageDecodeError, decode_stored_message

        store = self.dledger_server(node).store
        rows = []
        for e in store.entries():
            body = e.body or b""
            row: dict[str, Any] = {"index": e.index, "term": e.term,
                                   "committed": e.index <= store.committed_index,
                                   "commit_log_offset": e.pos + 48, "size": len(body)}  # fmt: skip
            try:
                m = decode_stored_message(body)
                row.update(topic=m.topic, queue_id=m.queue_id, queue_offset=m.queue_offset,
                           body=m.body[:64], msg_id=m.msg_id)  # fmt: skip
            except MessageDecodeError as err:
                row["topic"] = f"<{err}>"
            if raw:
                row["raw"] = body
            rows.append(row)
        cols = ["index", "term", "committed", "commit_log_offset", "size", "topic", "queue_id",
                "queue_offset", "body", "msg_id"] + (["raw"] if raw else [])  # fmt: skip
        return pd.DataFrame(rows, columns=cols)

    def master_in_route(self, name: str = "broker-a") -> str | None:
        """The broker node the name server lists as brokerId 0 of ``name``, or None."""
        data = self.namesrv.route_info_manager.broker_addr_table.get(name)  # type: ignore[attr-defined]
        addr = None if data is None else data.broker_addrs.get(0)
        return next((b.name for b in self.brokers if b.broker_addr == addr), None)

    # -- stepping ------------------------------------------------------------------------------
    def _quorum_waits(self) -> int:
        """How many appends the running leaders hold for a quorum ack (``waitAck``)."""
        n = 0
        for s in self.dledger_servers.values():
            if s.running and s.member_state.role == Role.LEADER and s.pusher is not None:
                n += sum(len(m) for m in s.pusher.pending_append_responses_by_term.values())
        return n

    def _settle(self, max_ms: int | None = None) -> list:
        """``run_until_idle``, and in a DLedger lab on until no running leader holds an append
        for its quorum: DLedger's threads are background timers, so an append waiting for
        its acks (or for its 2500 ms timeout) is not "idle" work to the driver, but the
        client's answer waits on it. Gives up ``max_ms`` (default 60 s) after the call.

        The first run is bounded too: over a DLedger link slower than the pusher's retry
        (``slow_link(…, 2000)``), a COMPARE or heartbeat is always in flight, so the driver
        is never idle; unbounded, a send looped until ``run_until_idle``'s 10,000,000 events."""
        d = self.driver
        if not self.dledger:
            return d.run_until_idle(max_ms=max_ms)
        limit = d.now + (ELECTION_WAIT_MS if max_ms is None else max_ms)
        events = d.run_until_idle(max_ms=limit - d.now)
        while self._quorum_waits():
            t = d.scheduler.peek()
            if t is None or t.due > limit:
                break
            events += d.step()
            events += d.run_until_idle(max_ms=limit - d.now)
        return events

    def _step_until(self, done: Any, max_ms: int, what: str) -> None:
        if not isinstance(max_ms, int) or isinstance(max_ms, bool) or max_ms < 0:
            raise ValueError(f"max_ms must be a whole number of ms >= 0, got {max_ms!r}")
        d = self.driver
        end = d.now + max_ms
        while not done():
            nxt = d.scheduler.peek()
            if nxt is None or nxt.due > end:  # the clock stays at the last event run
                raise TimeoutError(f"{what}: not within {max_ms} ms (now t={d.now})")
            d.step()

    @journaled
    def run_until_elected(self, name: str = "broker-a", *, max_ms: int = ELECTION_WAIT_MS) -> dict:
        """Step event by event until a DLedger node of group ``name`` becomes LEADER in a term
        no running leader held when called (the next election ends); return who and when.

        Returns:
            ``{"leader": broker node, "self_id", "term", "t_ms"}``.

        Raises:
            TimeoutError: no election ended within ``max_ms`` (a leader that keeps its
                followers' heartbeats coming holds on: kill or isolate it first). The
                events due within ``max_ms`` have run.
            ValueError: no DLedger group ``name``.
        """
        group = self._groups(name)
        held = {(s.name, s.member_state.curr_term) for s in group
                if s.running and s.member_state.role == Role.LEADER}  # fmt: skip
        won: list[DLedgerServer] = []

        def done() -> bool:
            won[:] = [s for s in group if s.running and s.member_state.role == Role.LEADER
                      and (s.name, s.member_state.curr_term) not in held]  # fmt: skip
            return bool(won)

        self._step_until(done, max_ms, f"no election of {name} ended")
        s = won[0]
        return {"leader": self._broker_of_server(s).name, "self_id": s.config.self_id,
                "term": s.member_state.curr_term, "t_ms": self.driver.now}  # fmt: skip

    @journaled
    def run_until_vote(self, name: str = "broker-a", *, max_ms: int = ELECTION_WAIT_MS) -> dict:
        """Step until the next vote of group ``name`` is answered (an election, vote by vote);
        return it as a row of ``dledger_votes``.

        Raises:
            TimeoutError: no vote within ``max_ms`` (a leader holds its followers).
        """
        self._groups(name)
        mark = len(self.trace)  # type: ignore[attr-defined]
        self._step_until(lambda: bool(self._vote_events(name, mark)), max_ms,
                         f"no vote in {name}")  # fmt: skip
        return self._vote_row(self._vote_events(name, mark)[0])

    @journaled
    def run_until_master(self, name: str = "broker-a", *, max_ms: int = ELECTION_WAIT_MS) -> str:
        """Step until the name server lists the current leader's broker as brokerId 0 of
        ``name`` (its role change handler has applied the log and re-registered); return it.

        Raises:
            TimeoutError: not within ``max_ms`` (no leader, or its log never commits).
        """
        self._groups(name)

        def done() -> bool:
            lead = self.dledger_leader(name)
            return lead is not None and self.master_in_route(name) == lead

        self._step_until(done, max_ms, f"no master of {name} registered")
        return self.master_in_route(name)  # type: ignore[return-value]

    # -- faults --------------------------------------------------------------------------------
    def _side(self, side: Iterable[str] | str) -> list[DLedgerServer]:
        if isinstance(side, str):
            side = [side]
        try:
            servers = [self.dledger_server(n) for n in side]
        except TypeError:
            raise ValueError(f"a side is a list of node names, got {side!r}") from None
        if not servers:
            raise ValueError("a partition needs at least one node on its side")
        groups = {s.config.group for s in servers}
        if len(groups) > 1:
            raise ValueError(f"a side lies in one DLedger group, got nodes of {sorted(groups)}")
        rest = [s for s in self._group_of(servers[0]) if s not in servers]
        if not rest:
            raise ValueError("a partition leaves some nodes on the other side; "
                             f"{sorted(s.name for s in servers)} is the whole group")  # fmt: skip
        return servers

    def _dledger_link(self, a: DLedgerServer, b: DLedgerServer, **settings: Any) -> None:
        self.driver.set_link(a.name, b.name, **settings)
        self.driver.set_link(b.name, a.name, **settings)

    @journaled
    def partition(self, side: Iterable[str] | str) -> dict[str, list[str]]:
        """Cut every DLedger link between the nodes of ``side`` and the rest of their group,
        silently (no packet crosses; each side finds out by its timeouts, and what it sends
        across arrives at TCP's first retransmission after :meth:`heal`, ``LinkConfig.silent``).
        The name server and the clients still reach every broker.

        ``side``: broker nodes (``["broker-a-n1"]``), DLedger nodes or selfIds (``"n1"``).

        Returns:
            The two sides as broker node names.

        Raises:
            ValueError: an unknown node, an empty side, or the whole group.
        """
        servers = self._side(side)
        rest = [s for s in self._group_of(servers[0]) if s not in servers]
        for a in servers:
            for b in rest:
                self._dledger_link(a, b, down=True, silent=True)
        sides = {"side": sorted(self._broker_of_server(s).name for s in servers),
                 "rest": sorted(self._broker_of_server(s).name for s in rest)}  # fmt: skip
        self.driver._tracer.emit(
            "Lab", "partition", Kind.FAULT, side=",".join(sides["side"]),
            rest=",".join(sides["rest"]),
            text=f"DLedger partition: {sides['side']} | {sides['rest']}",
        )  # fmt: skip
        return sides

    @journaled
    def heal(self, name: str | None = None) -> None:
        """Bring every DLedger link (of group ``name``, default all) back up; a slow link
        stays slow (``slow_link(a, b, None)`` ends it)."""
        for g in {s.config.group for s in self._groups(name)}:
            group = self._groups(g)
            for a in group:
                for b in group:
                    link = self.driver.links.get((a.name, b.name))
                    if a is not b and link is not None and link.down:
                        self.driver.set_link(a.name, b.name, down=False, silent=False)
        self.driver._tracer.emit("Lab", "heal", Kind.FAULT, group=name or "all",
                                 text=f"DLedger links of {name or 'every group'} up again")  # fmt: skip

    @journaled
    def slow_link(self, a: str, b: str, latency_ms: int | None) -> None:
        """Make the DLedger link between nodes ``a`` and ``b`` take ``latency_ms`` each way
        (votes, heartbeats, pushes and their answers); None: the lab's latency again.

        Raises:
            ValueError: unknown nodes, the same node twice, nodes of two groups, or a
                latency that is not a whole number of ms >= 0.
        """
        if latency_ms is not None and (
            not isinstance(latency_ms, int) or isinstance(latency_ms, bool) or latency_ms < 0
        ):
            raise ValueError(f"latency_ms must be a whole number of ms >= 0 or None, "
                             f"got {latency_ms!r}")  # fmt: skip
        sa, sb = self.dledger_server(a), self.dledger_server(b)
        if sa is sb:
            raise ValueError(f"a link joins two different nodes, got {a!r} and {b!r}")
        if sa.config.group != sb.config.group:
            raise ValueError(f"{a} and {b} are in different DLedger groups")
        self._dledger_link(sa, sb, latency_ms=latency_ms)
        na, nb = self._broker_of_server(sa).name, self._broker_of_server(sb).name
        self.driver._tracer.emit(
            "Lab", "slow_link", Kind.FAULT, a=na, b=nb,
            latency_ms=-1 if latency_ms is None else latency_ms,
            text=f"DLedger link {na} <-> {nb} takes "
            + (f"{latency_ms} ms" if latency_ms is not None else "the lab's latency again"),
        )  # fmt: skip

    def _dledger_link_fault(self, kind: str, node: str, **params: Any) -> Any:
        """``Lab.fault``'s link faults in a DLedger lab (see there)."""
        server = self.dledger_server(node)
        if kind in ("cut_link", "partition"):
            return self.partition([node])
        if kind == "heal_link":
            return self.heal(server.config.group)
        leader = self.dledger_leader(server.config.group)
        if leader is None or self.dledger_server(leader) is server:
            raise ValueError(f"lag_slave slows the link from the leader to a follower; "
                             f"{node} is {'the leader' if leader else 'in a group with no leader'}")  # fmt: skip
        return self.slow_link(leader, node, params.get("latency_ms"))

    # -- the machine faults' DLedger half (Lab.kill, Lab.power_cut, Lab.restart_broker) ----------
    def _dledger_stop(self, broker: str, *, power_cut: bool = False) -> dict[str, int]:
        """Stop the DLedger server of broker node ``broker`` (if any) without its shutdown;
        a power cut also loses its unflushed entries (``dledger_power_cut``)."""
        sname = self._dledger_of.get(broker)
        if sname is None:
            return {}
        server = self.dledger_servers[sname]
        if not server.running:
            return {}
        self.driver.stop_node(sname, graceful=False, fault="power_cut" if power_cut else "kill")
        if not power_cut:
            return {}
        lost = dledger_power_cut(server, self.driver.now, self._dledger_started[sname])
        self.driver._tracer.emit(
            "Lab", "power_cut", Kind.FAULT, node=sname, **lost,
            text=f"{sname}'s DLedger log keeps entries up to {lost['ledger_end_index_after']} "
            f"(its last flush pass); {lost['lost_entries']} lost",
        )  # fmt: skip
        return lost

    def _dledger_lose(self, broker: str) -> None:
        """The DLedger half of ``Lab.lose``: the node dies and its disk with it."""
        sname = self._dledger_of.get(broker)
        if sname is None:
            return
        server = self.dledger_servers[sname]
        self.driver.stop_node(sname, graceful=False, fault="lost")
        server.store.cut_to(-1)
        server.disk.clear()

    def _dledger_start(self, broker: str) -> None:
        sname = self._dledger_of.get(broker)
        if sname is None or self.dledger_servers[sname].running:
            return
        self._dledger_started[sname] = self.driver.now
        self.driver.start_node(sname)
