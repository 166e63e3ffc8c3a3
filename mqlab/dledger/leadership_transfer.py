"""Leadership transfer: a leader hands its role to a named follower.

Mirrors ``DLedgerLeaderElector#handleLeadershipTransfer``, ``#handleTakeLeadership``,
``#isTakingLeadership`` and ``TakeLeadershipTask``, and ``DLedgerServer#checkPreferredLeader``
(DLedger 0.2.3); mechanisms.md "DLedger election" step 12.

1. The leader gets a LEADERSHIP_TRANSFER (``transferId`` itself, ``transfereeId`` a peer, its
   term). It sets ``transferee`` (appends now answer LEADER_TRANSFERRING) and sends the
   transferee a LEADERSHIP_TRANSFER of its own, with ``takeLeadershipLedgerIndex``.
2. The transferee (``handleTakeLeadership``) sets ``termToTakeLeadership`` to term + 1 and
   becomes a candidate of that term at once (``needIncreaseTermImmediately``). When it is
   taking leadership and listed in ``preferredLeaderIds``, it waits only
   30 + random(70) ms before voting, and refuses to vote for a peer whose log is not longer
   than its own (REJECT_TAKING_LEADERSHIP).
3. Its next role change answers the transfer (``TakeLeadershipTask#check``): LEADER of that
   term: SUCCESS; FOLLOWER: TAKE_LEADERSHIP_FAILED; a later term: EXPIRED_TERM. The old leader
   passes the answer on, and drops ``transferee`` when it failed.

``checkPreferredLeader`` runs every 1000 ms on each node (timer
``"DLedgerServer.checkPreferredLeader"``): a leader that is not among ``preferredLeaderIds``
transfers to the first preferred peer that is a member, answered its last heartbeat, and is
less than ``maxLeadershipTransferWaitIndex`` (1000) entries behind.

0.2.3 resets ``transferee`` through ``MemberState#setTransferee``, which throws on a node
that is no longer leader; the future then fails and no answer is written. Here that case
leaves the transfer unanswered too (the caller's RPC times out), with an ``error`` event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.dledger.exception import check
from mqlab.dledger.member_state import Role
from mqlab.dledger.protocol import (
    DLedgerResponseCode,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
)
from mqlab.dledger.service_thread import TimeoutFuture

if TYPE_CHECKING:
    from mqlab.dledger.dledger_leader_elector import DLedgerLeaderElector

__all__ = ["LeadershipTransfer", "CHECK_PREFERRED_LEADER"]

C = "DLedgerLeaderElector"
CHECK_PREFERRED_LEADER = "DLedgerServer.checkPreferredLeader"
R = DLedgerResponseCode


class LeadershipTransfer:
    """The transfer half of ``DLedgerLeaderElector`` (DLedger 0.2.3). See the module essay."""

    def __init__(self, elector: DLedgerLeaderElector) -> None:
        self.elector = elector
        self.server = elector.server
        self.member_state = elector.member_state
        self.config = elector.config
        # TakeLeadershipTask's request and future
        self._task_request: LeadershipTransferRequest | None = None
        self._task_future: TimeoutFuture | None = None

    def _emit(self, **fields) -> None:
        self.server.ctx.tracer.emit(C, "12", **fields)

    def is_taking_leadership(self) -> bool:
        """``isTakingLeadership``: preferred, and in the term it was asked to take."""
        ids = self.config.preferred_leader_ids
        ms = self.member_state
        if ids is not None and ms.term_to_take_leadership == ms.curr_term:
            return ms.self_id in ids.split(";")
        return False

    # -- the leader's side ----------------------------------------------------------------------
    def handle_leadership_transfer(self, request: LeadershipTransferRequest) -> TimeoutFuture:
        """``DLedgerLeaderElector#handleLeadershipTransfer`` (step 12.1)."""
        ms = self.member_state
        now = self.server.ctx.now_ms

        def done(code: R) -> TimeoutFuture:
            self._emit(
                event="handleLeadershipTransfer", transferee=request.transferee_id, code=code.name
            )
            return TimeoutFuture.completed(
                now, LeadershipTransferResponse(term=ms.curr_term, code=code)
            )

        if ms.curr_term != request.term:
            return done(R.INCONSISTENT_TERM)
        if not ms.is_leader():
            return done(R.NOT_LEADER)
        if ms.transferee is not None:
            return done(R.LEADER_TRANSFERRING)
        ms.transferee = request.transferee_id
        take = LeadershipTransferRequest(
            group=ms.group, leader_id=ms.leader_id, local_id=ms.self_id,
            remote_id=request.transferee_id, term=request.term,
            take_leadership_ledger_index=ms.ledger_end_index, transfer_id=ms.self_id,
            transferee_id=request.transferee_id,
        )  # fmt: skip
        self._emit(event="handleLeadershipTransfer", transferee=request.transferee_id, term=request.term,
                   take_leadership_ledger_index=ms.ledger_end_index)  # fmt: skip
        future: TimeoutFuture = TimeoutFuture(now)

        def on_answer(response: LeadershipTransferResponse) -> None:
            if response.code != R.SUCCESS or (
                ms.curr_term == request.term and ms.transferee is not None
            ):
                if not ms.is_leader():  # MemberState#setTransferee throws: no answer is written
                    self.server.ctx.tracer.emit(C, "12", kind="error", event="setTransferee",
                                                error=f"{ms.self_id} is not leader")  # fmt: skip
                    return
                ms.transferee = None
            self._emit(
                event="transferAnswered", code=R.value_of(response.code).name, term=response.term
            )
            future.complete(response)

        self.server.rpc.leadership_transfer(take, on_answer)
        return future

    # -- the transferee's side ------------------------------------------------------------------
    def handle_take_leadership(self, request: LeadershipTransferRequest) -> TimeoutFuture:
        """``DLedgerLeaderElector#handleTakeLeadership`` (step 12.2)."""
        ms = self.member_state
        now = self.server.ctx.now_ms
        if ms.curr_term != request.term:
            return TimeoutFuture.completed(
                now, LeadershipTransferResponse(term=ms.curr_term, code=R.INCONSISTENT_TERM)
            )
        target_term = request.term + 1
        ms.term_to_take_leadership = target_term
        future: TimeoutFuture = TimeoutFuture(now)
        self._task_request, self._task_future = request, future
        self._emit(event="handleTakeLeadership", target_term=target_term)
        self.elector.change_role_to_candidate(target_term)
        self.elector.need_increase_term_immediately = True
        return future

    def check(self, term: int, role: Role) -> None:
        """``TakeLeadershipTask#check``: the role change after a take answers it (step 12.3)."""
        ms = self.member_state
        if ms.term_to_take_leadership == -1 or self._task_future is None:
            return
        if term > ms.term_to_take_leadership:
            code = R.EXPIRED_TERM
        elif term == ms.term_to_take_leadership:
            if role == Role.LEADER:
                code = R.SUCCESS
            elif role == Role.FOLLOWER:
                code = R.TAKE_LEADERSHIP_FAILED
            else:
                return
        else:
            code = R.TAKE_LEADERSHIP_FAILED if role == Role.FOLLOWER else R.INTERNAL_ERROR
        future = self._task_future
        ms.term_to_take_leadership = -1
        self._task_future = self._task_request = None
        self._emit(event="TakeLeadershipTask", term=term, role=role.value, code=code.name)
        future.complete(LeadershipTransferResponse(term=term, code=code))

    # -- the preferred leader -------------------------------------------------------------------
    def check_preferred_leader(self) -> None:
        """``DLedgerServer#checkPreferredLeader``: hand over to a preferred peer."""
        ms = self.member_state
        ids = self.config.preferred_leader_ids
        if not ms.is_leader() or ids is None or ms.transferee is not None:
            return
        preferred = ids.split(";")
        if ms.self_id in preferred:
            return
        pusher = self.server.pusher
        assert pusher is not None
        candidates = []
        for peer in preferred:  # 0.2.3 removes the non-members and the offline ones
            if not ms.is_peer_member(peer) or not ms.peers_live_table.get(peer, False):
                continue
            candidates.append(peer)
        if not candidates:
            return
        peer = candidates[0]
        fall_behind = self.server.store.ledger_end_index - pusher.get_peer_water_mark(
            ms.curr_term, peer
        )
        if fall_behind < self.config.max_leadership_transfer_wait_index:
            self.handle_leadership_transfer(
                LeadershipTransferRequest(term=ms.curr_term, transferee_id=peer)
            )

    def check_server_side(self, request: LeadershipTransferRequest) -> None:
        """``DLedgerServer#handleLeadershipTransfer``'s checks on the leader.

        Raises:
            DLedgerException: UNKNOWN_MEMBER, INCONSISTENT_TERM, NOT_LEADER, FALL_BEHIND_TOO_MUCH.
        """
        ms = self.member_state
        check(ms.is_peer_member(request.transferee_id), R.UNKNOWN_MEMBER,
              f"transferee={request.transferee_id} is not a peer member")  # fmt: skip
        check(ms.curr_term == request.term, R.INCONSISTENT_TERM,
              f"currTerm({ms.curr_term}) != request.term({request.term})")  # fmt: skip
        check(ms.is_leader(), R.NOT_LEADER, f"selfId={ms.self_id} is not leader={ms.leader_id}")
        pusher = self.server.pusher
        assert pusher is not None
        behind = self.server.store.ledger_end_index - pusher.get_peer_water_mark(
            request.term,
            request.transferee_id,  # type: ignore[arg-type]
        )
        check(behind < self.config.max_leadership_transfer_wait_index, R.FALL_BEHIND_TOO_MUCH,
              f"transferee fall behind too much, diff={behind}")  # fmt: skip
