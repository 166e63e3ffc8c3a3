"""The leader's water marks, the waiting appends, and the quorum ack that commits them.

Mirrors ``DLedgerEntryPusher`` (DLedger 0.2.3): ``waitAck``, ``isPendingFull``,
``updatePeerWaterMark``, ``getPeerWaterMark``, ``handlePush`` and its ``QuorumAckChecker``;
mechanisms.md "DLedger replication" steps 1, 10 and 12. The per-follower ``EntryDispatcher``
is ``entry_dispatcher``, the follower's ``EntryHandler`` is ``entry_handler``.

What it owns: ``peer_water_marks_by_term`` (term → peer → the highest index that peer
acknowledged in that term, -1 at first; the leader's own mark is its ledger end), and
``pending_append_responses_by_term`` (term → index → the ``AppendFuture`` a client waits on).

The ``QuorumAckChecker`` thread (timer ``"DLedgerEntryPusher.QuorumAckChecker"``) runs on a
leader: it drops the futures and marks of older terms (TERM_CHANGED), takes the quorum index
of the current term's marks (``quorum.quorum_index``), moves the store's committed index
there, and completes every waiting append up to it; with nothing to ack it times out the
appends past it that waited ``maxWaitAckTimeMs`` (2500 ms): WAIT_QUORUM_ACK_TIMEOUT.
Java's thread waits 1 ms between turns; here it waits 10 ms, and every acknowledgement
wakes it, as in Java.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.common import mutants
from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.entry_dispatcher import EntryDispatcher
from mqlab.dledger.entry_handler import EntryHandler
from mqlab.dledger.member_state import Role
from mqlab.dledger.protocol import AppendEntryResponse, DLedgerResponseCode, PushEntryRequest
from mqlab.dledger.quorum import quorum_index
from mqlab.dledger.service_thread import BatchAppendFuture, ServiceThread, TimeoutFuture

if TYPE_CHECKING:
    from mqlab.dledger.dledger_server import DLedgerServer

__all__ = ["DLedgerEntryPusher", "QuorumAckChecker"]

C = "DLedgerEntryPusher"
R = DLedgerResponseCode
#: the idle wait of the pusher's threads here (Java's: 1 ms, or a busy loop)
IDLE_WAIT_MS = 10


class DLedgerEntryPusher:
    """Mirrors ``DLedgerEntryPusher`` (DLedger 0.2.3). See the module essay."""

    def __init__(self, server: DLedgerServer) -> None:
        self.server = server
        self.config = server.config
        self.member_state = server.member_state
        self.store = server.store
        self.peer_water_marks_by_term: dict[int, dict[str, int]] = {}
        self.pending_append_responses_by_term: dict[int, dict[int, TimeoutFuture]] = {}
        self.dispatcher_map: dict[str, EntryDispatcher] = {
            peer: EntryDispatcher(self, peer)
            for peer in self.member_state.peer_map
            if peer != self.member_state.self_id
        }
        self.entry_handler = EntryHandler(self)
        self.quorum_ack_checker = QuorumAckChecker(self)

    @property
    def now(self) -> int:
        return self.server.ctx.now_ms

    def startup(self) -> None:
        """``DLedgerEntryPusher#startup``: the threads run when their role comes."""
        self.server.elector.add_role_change_handler(self._on_role_change)

    def _on_role_change(self, term: int, role: Role) -> None:
        if role == Role.LEADER:
            self.quorum_ack_checker.wakeup()
            self.wake_up_dispatchers()
        elif role == Role.FOLLOWER:
            self.entry_handler.wakeup()

    def wake_up_dispatchers(self) -> None:
        for d in self.dispatcher_map.values():
            d.wakeup()

    # -- water marks --------------------------------------------------------------------------
    def check_term_for_water_mark(self, term: int) -> None:
        if term not in self.peer_water_marks_by_term:
            self.peer_water_marks_by_term[term] = {p: -1 for p in self.member_state.peer_map}

    def check_term_for_pending_map(self, term: int) -> None:
        self.pending_append_responses_by_term.setdefault(term, {})

    def update_peer_water_mark(self, term: int, peer_id: str, index: int) -> None:
        """``updatePeerWaterMark``: a mark only rises."""
        self.check_term_for_water_mark(term)
        marks = self.peer_water_marks_by_term[term]
        if marks[peer_id] < index:
            marks[peer_id] = index

    def get_peer_water_mark(self, term: int, peer_id: str) -> int:
        self.check_term_for_water_mark(term)
        return self.peer_water_marks_by_term[term][peer_id]

    def is_pending_full(self, curr_term: int) -> bool:
        """``isPendingFull``: more than ``maxPendingRequestsNum`` appends wait."""
        self.check_term_for_pending_map(curr_term)
        return (
            len(self.pending_append_responses_by_term[curr_term])
            > self.config.max_pending_requests_num
        )

    # -- the client's wait ----------------------------------------------------------------------
    def wait_ack(self, entry: DLedgerEntry, batch: bool = False) -> TimeoutFuture:
        """The future a client's append waits on until a quorum has the entry (step 1).

        ``DLedgerEntryPusher#waitAck``: the leader's own mark moves to the entry; a group of
        one answers at once; else the future waits in ``pendingAppendResponsesByTerm``.
        ``batch`` (``isBatchWait``): the future is a ``BatchAppendFuture``.
        """
        cls = BatchAppendFuture if batch else TimeoutFuture
        ms = self.member_state
        self.update_peer_water_mark(entry.term, ms.self_id, entry.index)
        if ms.peer_size() == 1:
            response = AppendEntryResponse(
                group=ms.group,
                leader_id=ms.self_id,
                index=entry.index,
                term=entry.term,
                pos=entry.pos,
            )
            return cls.completed(self.now, response, pos=entry.pos)
        self.check_term_for_pending_map(entry.term)
        future: TimeoutFuture = cls(self.now, self.config.max_wait_ack_time_ms, pos=entry.pos)
        self.pending_append_responses_by_term[entry.term][entry.index] = future
        self.quorum_ack_checker.wakeup()
        return future

    # -- the follower's side --------------------------------------------------------------------
    def handle_push(self, request: PushEntryRequest) -> TimeoutFuture:
        """``DLedgerEntryPusher#handlePush`` → ``EntryHandler#handlePush``."""
        return self.entry_handler.handle_push(request)


class QuorumAckChecker(ServiceThread):
    """Mirrors ``DLedgerEntryPusher.QuorumAckChecker`` (DLedger 0.2.3): step 10 and 12."""

    def __init__(self, pusher: DLedgerEntryPusher) -> None:
        super().__init__(pusher.server, "DLedgerEntryPusher.QuorumAckChecker")
        self.pusher = pusher
        self.last_check_leak_time_ms = pusher.server.ctx.now_ms
        self.last_quorum_index = -1

    def do_work(self) -> None:
        p = self.pusher
        ms = p.member_state
        store = p.store
        now = p.now
        if not ms.is_leader():
            self.park()
            return
        curr_term = ms.curr_term
        p.check_term_for_pending_map(curr_term)
        p.check_term_for_water_mark(curr_term)
        tracer = self.server.ctx.tracer
        # step 12: futures of older terms end with TERM_CHANGED; their marks go
        for term in sorted(t for t in p.pending_append_responses_by_term if t != curr_term):
            for index, future in sorted(p.pending_append_responses_by_term.pop(term).items()):
                tracer.emit(
                    C, "12", event="TERM_CHANGED", index=index, term=term, curr_term=curr_term
                )
                future.complete(AppendEntryResponse(
                    group=ms.group, index=index, code=R.TERM_CHANGED, leader_id=ms.leader_id
                ))  # fmt: skip
        for term in [t for t in p.peer_water_marks_by_term if t != curr_term]:
            del p.peer_water_marks_by_term[term]
        # step 10: the quorum index of this term's marks becomes the committed index
        marks = p.peer_water_marks_by_term[curr_term]
        q_index = quorum_index(marks.values())
        if "dledger_minority_quorum" in mutants.ACTIVE:  # planted bug: a minority's index
            q_index = sorted(marks.values(), reverse=True)[max(0, len(marks) // 2 - 1)]
        before = store.committed_index
        store.update_committed_index(curr_term, q_index)
        if store.committed_index != before:
            tracer.emit(C, "10", quorum_index=q_index, committed_index=store.committed_index,
                        water_marks=dict(sorted(marks.items())), term=curr_term)  # fmt: skip
        responses = p.pending_append_responses_by_term[curr_term]
        need_check = False
        ack_num = 0
        i = q_index
        while i > self.last_quorum_index:
            future = responses.pop(i, None)
            if future is None:
                need_check = True
                break
            if not future.done:
                future.complete(AppendEntryResponse(
                    group=ms.group, term=curr_term, index=i, leader_id=ms.self_id, pos=future.pos
                ))  # fmt: skip
            ack_num += 1
            i -= 1
        if ack_num == 0:
            # step 12: appends past the quorum index that waited maxWaitAckTimeMs time out
            i = q_index + 1
            while True:
                future = responses.get(i)
                if future is None or not future.is_time_out(now):
                    break
                tracer.emit(C, "12", event="WAIT_QUORUM_ACK_TIMEOUT", index=i, term=curr_term)
                future.complete(AppendEntryResponse(
                    group=ms.group, code=R.WAIT_QUORUM_ACK_TIMEOUT, term=curr_term, index=i,
                    leader_id=ms.self_id,
                ))  # fmt: skip
                i += 1
        if now - self.last_check_leak_time_ms > 1000 or need_check:
            p.update_peer_water_mark(curr_term, ms.self_id, store.ledger_end_index)
            for index in sorted(responses):
                if index < q_index:
                    future = responses.pop(index)
                    future.complete(AppendEntryResponse(
                        group=ms.group, term=curr_term, index=index, leader_id=ms.self_id,
                        pos=future.pos,
                    ))  # fmt: skip
            self.last_check_leak_time_ms = now
        self.last_quorum_index = q_index
        self.wait_for_running(IDLE_WAIT_MS)
