"""Elections and heartbeats: who leads, in which term.

Mirrors ``DLedgerLeaderElector`` (DLedger 0.2.3): ``maintainState`` with
``maintainAsCandidate``, ``maintainAsLeader`` and ``maintainAsFollower``,
``voteForQuorumResponses``, ``handleVote``, ``sendHeartbeats``, ``handleHeartBeat``,
``changeRoleToLeader`` / ``Candidate`` / ``Follower`` and ``getNextTimeToRequestVote``;
mechanisms.md "DLedger election" steps 1-11.

Java's ``StateMaintainer`` thread calls ``maintainState`` and sleeps 10 ms, forever. Here it
is the node's periodic timer ``"DLedgerLeaderElector.StateMaintainer"`` (10 ms). Two waits
of that thread block it: the candidate's ``voteLatch.await(2000 + random(maxVoteIntervalMs))``
and the leader's ``beatLatch.await(heartBeatTimeIntervalMs)``. Each is a *round* here: while
one is open the maintainer does nothing, and the round closes when the latch would count
down (a quorum, or every peer answered) or when its timer (``"DLedgerLeaderElector.voteLatch"``
/ ``".beatLatch"``) fires. The round is then read, as Java reads the counters after the
await; answers that come later are not counted.

Random draws (``Random#nextInt``) come from the node's seeded stream ``"dledger.vote"``, so a
seed fixes every election timeout.

What it owns: the timestamps ``last_leader_heart_beat_time``, ``last_send_heart_beat_time``,
``last_succ_heart_beat_time`` (-1), ``next_time_to_request_vote`` (-1),
``need_increase_term_immediately``, ``last_parse_result`` (WAIT_TO_REVOTE) and the open round.
Role, term and vote are ``MemberState``'s.

Leadership transfer (``handleLeadershipTransfer``, ``handleTakeLeadership``,
``TakeLeadershipTask``, ``isTakingLeadership``) is ``leadership_transfer``, owned here as
``self.transfer``; it shortens the vote wait and adds REJECT_TAKING_LEADERSHIP to the vote.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqlab.common import mutants
from mqlab.dledger.leadership_transfer import LeadershipTransfer
from mqlab.dledger.member_state import Role
from mqlab.dledger.protocol import (
    DLedgerResponseCode,
    HeartBeatRequest,
    HeartBeatResponse,
    ParseResult,
    VoteRequest,
    VoteResponse,
    VoteResult,
)
from mqlab.dledger.service_thread import elapsed

if TYPE_CHECKING:
    from mqlab.dledger.dledger_server import DLedgerServer

__all__ = ["DLedgerLeaderElector", "STATE_MAINTAINER", "VOTE_LATCH", "BEAT_LATCH"]

C = "DLedgerLeaderElector"
STATE_MAINTAINER = "DLedgerLeaderElector.StateMaintainer"
VOTE_LATCH = "DLedgerLeaderElector.voteLatch"
BEAT_LATCH = "DLedgerLeaderElector.beatLatch"
#: ``StateMaintainer#doWork`` ends with ``sleep(10)``.
STATE_MAINTAINER_INTERVAL_MS = 10

R = DLedgerResponseCode
V = VoteResult

#: ``RoleChangeHandler#handle(term, role)``.
RoleChangeHandler = Callable[[int, Role], None]


@dataclass
class _VoteRound:
    term: int
    peer_size: int
    known_max_term_in_group: int
    all_num: int = 0
    valid_num: int = 0
    accepted_num: int = 0
    not_ready_term_num: int = 0
    bigger_ledger_num: int = 0
    already_has_leader: bool = False
    results: dict[str, str] = field(default_factory=dict)


@dataclass
class _BeatRound:
    term: int
    all_num: int = 1
    succ_num: int = 1
    not_ready_num: int = 0
    max_term: int = -1
    inconsist_leader: bool = False


class DLedgerLeaderElector:
    """Mirrors ``DLedgerLeaderElector`` (DLedger 0.2.3). See the module essay."""

    def __init__(self, server: DLedgerServer) -> None:
        self.server = server
        self.config = server.config
        self.member_state = server.member_state
        self.last_leader_heart_beat_time = -1
        self.last_send_heart_beat_time = -1
        self.last_succ_heart_beat_time = -1
        self.next_time_to_request_vote = -1
        self.need_increase_term_immediately = False
        self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        self.last_vote_cost = 0
        self.role_change_handlers: list[RoleChangeHandler] = []
        self._vote_round: _VoteRound | None = None
        self._beat_round: _BeatRound | None = None
        self.transfer = LeadershipTransfer(self)

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.server.ctx.now_ms

    def _emit(self, step: str, **fields) -> None:
        self.server.ctx.tracer.emit(C, step, **fields)

    def _next_int(self, bound: int) -> int:
        """``Random#nextInt(bound)``: uniform in ``[0, bound)``."""
        return self.server.ctx.rng("dledger.vote").randrange(bound)

    def startup(self) -> None:
        """``DLedgerLeaderElector#startup``: the maintainer thread starts (at once)."""
        self.server.ctx.set_timer(
            STATE_MAINTAINER, 0, self.maintain_state, period_ms=STATE_MAINTAINER_INTERVAL_MS,
            daemon=True,
        )  # fmt: skip

    def add_role_change_handler(self, handler: RoleChangeHandler) -> None:
        if handler not in self.role_change_handlers:
            self.role_change_handlers.append(handler)

    # -- the maintainer -----------------------------------------------------------------------
    def maintain_state(self) -> None:
        """``StateMaintainer#doWork`` → ``maintainState``: act by role, unless a round is open
        (the thread is blocked in a latch)."""
        if self._vote_round is not None or self._beat_round is not None:
            return
        if not self.config.enable_leader_elector:
            return
        ms = self.member_state
        if ms.is_leader():
            self.maintain_as_leader()
        elif ms.is_follower():
            self.maintain_as_follower()
        else:
            self.maintain_as_candidate()

    def get_next_time_to_request_vote(self) -> int:
        """``getNextTimeToRequestVote``: now + minVoteIntervalMs + random(max - min); a node
        taking leadership uses minTakeLeadershipVoteIntervalMs (30) and max (100)."""
        c = self.config
        if self.transfer.is_taking_leadership():
            return (
                self.now
                + c.min_take_leadership_vote_interval_ms
                + self._next_int(
                    c.max_take_leadership_vote_interval_ms - c.min_take_leadership_vote_interval_ms
                )
            )
        return (
            self.now
            + c.min_vote_interval_ms
            + self._next_int(c.max_vote_interval_ms - c.min_vote_interval_ms)
        )

    # -- candidate ----------------------------------------------------------------------------
    def maintain_as_candidate(self) -> None:
        """Start a vote round when it is time (steps 1-2).

        Mirrors ``DLedgerLeaderElector#maintainAsCandidate``.
        """
        ms = self.member_state
        if self.now < self.next_time_to_request_vote and not self.need_increase_term_immediately:
            return
        if not ms.is_candidate():
            return
        # step 1: a new term after WAIT_TO_VOTE_NEXT or a larger term seen, else the same term
        if (
            self.last_parse_result == ParseResult.WAIT_TO_VOTE_NEXT
            or self.need_increase_term_immediately
        ):
            prev_term = ms.curr_term
            term = ms.next_term()
            self._emit("1", event="INCREASE_TERM", prev_term=prev_term, term=term)
            self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        else:
            term = ms.curr_term
        ledger_end_index = ms.ledger_end_index
        ledger_end_term = ms.ledger_end_term
        if self.need_increase_term_immediately:
            self.next_time_to_request_vote = self.get_next_time_to_request_vote()
            self.need_increase_term_immediately = False
            self._emit("1", event="WAIT_AFTER_INCREASE", term=term,
                       next_time_to_request_vote=self.next_time_to_request_vote)  # fmt: skip
            return
        # step 2: voteForQuorumResponses: one VoteRequest per peer, self included
        rnd = _VoteRound(term=term, peer_size=ms.peer_size(), known_max_term_in_group=term)
        self._vote_round = rnd
        self._vote_started = self.now
        self._emit(
            "2", term=term, ledger_end_term=ledger_end_term, ledger_end_index=ledger_end_index
        )
        self_response: VoteResponse | None = None
        for peer_id in ms.peer_map:
            request = VoteRequest(
                group=ms.group, ledger_end_index=ledger_end_index, ledger_end_term=ledger_end_term,
                leader_id=ms.self_id, term=term, remote_id=peer_id,
            )  # fmt: skip
            if peer_id == ms.self_id:
                self_response = self.handle_vote(request, True)
            else:
                self.server.rpc.vote(
                    request, lambda resp, p=peer_id, r=rnd: self._on_vote_response(r, p, resp)
                )
        latch_ms = 2000 + self._next_int(self.config.max_vote_interval_ms)
        self.server.ctx.set_timer(VOTE_LATCH, latch_ms, lambda r=rnd: self._parse_vote_round(r))
        assert self_response is not None, "selfId is always a peer (DLedgerConfig checks it)"
        self._on_vote_response(rnd, ms.self_id, self_response)

    def _on_vote_response(self, rnd: _VoteRound, peer_id: str, x: VoteResponse) -> None:
        """One answer of the round (the ``whenComplete`` callback in ``maintainAsCandidate``)."""
        if self._vote_round is not rnd:
            return  # the round was read already: Java's counters are no longer looked at
        rnd.results[peer_id] = x.vote_result.value
        if x.vote_result != V.UNKNOWN:
            rnd.valid_num += 1
        r = x.vote_result
        if r == V.ACCEPT:
            rnd.accepted_num += 1
        elif r == V.REJECT_ALREADY_HAS_LEADER:
            rnd.already_has_leader = True
        elif r in (V.REJECT_TERM_SMALL_THAN_LEDGER, V.REJECT_EXPIRED_VOTE_TERM):
            if x.term > rnd.known_max_term_in_group:
                rnd.known_max_term_in_group = x.term
        elif r in (V.REJECT_EXPIRED_LEDGER_TERM, V.REJECT_SMALL_LEDGER_END_INDEX):
            rnd.bigger_ledger_num += 1
        elif r == V.REJECT_TERM_NOT_READY:
            rnd.not_ready_term_num += 1
        ms = self.member_state
        latch = (
            rnd.already_has_leader
            or ms.is_quorum(rnd.accepted_num)
            or ms.is_quorum(rnd.accepted_num + rnd.not_ready_term_num)
        )
        rnd.all_num += 1
        if latch or rnd.all_num == ms.peer_size():
            self.server.ctx.cancel_timer(VOTE_LATCH)
            self._parse_vote_round(rnd)

    def _parse_vote_round(self, rnd: _VoteRound) -> None:
        """Read the round's counts (steps 4-6), as ``maintainAsCandidate`` does after the await."""
        if self._vote_round is not rnd:
            return
        self._vote_round = None
        ms = self.member_state
        term = rnd.term
        self.last_vote_cost = self.now - self._vote_started
        # step 4: the counts when the latch opened
        self._emit(
            "4", term=term, all_num=rnd.all_num, valid_num=rnd.valid_num,
            accepted_num=rnd.accepted_num, not_ready_term_num=rnd.not_ready_term_num,
            bigger_ledger_num=rnd.bigger_ledger_num, already_has_leader=rnd.already_has_leader,
            known_max_term=rnd.known_max_term_in_group, cost_ms=self.last_vote_cost,
            results=dict(sorted(rnd.results.items())),
        )  # fmt: skip
        # step 5: the parse result, in 0.2.3's order
        if rnd.known_max_term_in_group > term:
            result = ParseResult.WAIT_TO_VOTE_NEXT
            self.next_time_to_request_vote = self.get_next_time_to_request_vote()
            self.change_role_to_candidate(rnd.known_max_term_in_group)
        elif rnd.already_has_leader:
            result = ParseResult.WAIT_TO_REVOTE
            self.next_time_to_request_vote = (
                self.get_next_time_to_request_vote()
                + self.config.heart_beat_time_interval_ms * self.config.max_heart_beat_leak
            )
        elif not ms.is_quorum(rnd.valid_num):
            result = ParseResult.WAIT_TO_REVOTE
            self.next_time_to_request_vote = self.get_next_time_to_request_vote()
        elif not ms.is_quorum(rnd.valid_num - rnd.bigger_ledger_num):
            result = ParseResult.WAIT_TO_REVOTE
            self.next_time_to_request_vote = (
                self.get_next_time_to_request_vote() + self.config.max_vote_interval_ms
            )
        elif ms.is_quorum(rnd.accepted_num):
            result = ParseResult.PASSED
        elif ms.is_quorum(rnd.accepted_num + rnd.not_ready_term_num):
            result = ParseResult.REVOTE_IMMEDIATELY
        else:
            result = ParseResult.WAIT_TO_VOTE_NEXT
            self.next_time_to_request_vote = self.get_next_time_to_request_vote()
        self.last_parse_result = result
        self._emit("5", term=term, result=result.value,
                   next_time_to_request_vote=self.next_time_to_request_vote)  # fmt: skip
        if result == ParseResult.PASSED:
            self.change_role_to_leader(term)

    # -- the voter ----------------------------------------------------------------------------
    def handle_vote(self, request: VoteRequest, self_vote: bool) -> VoteResponse:
        """Answer a vote request: the checks in 0.2.3's order (step 3).

        Mirrors ``DLedgerLeaderElector#handleVote``: the candidate must be a member and not
        this node (unless it asks itself); its log must be at least as up to date (ledger
        end term, then ledger end index); its term must be this node's (smaller: rejected;
        larger: this node steps down to candidate and answers REJECT_TERM_NOT_READY); one
        vote per term; the term may not be below this node's ledger end term.
        """
        ms = self.member_state
        result, term = self._decide_vote(request, self_vote)
        if result == V.ACCEPT:
            ms.set_curr_vote_for(request.leader_id)
        self._emit("3", candidate=request.leader_id, term=request.term,
                   ledger_end_term=request.ledger_end_term, ledger_end_index=request.ledger_end_index,
                   result=result.value, curr_term=ms.curr_term, vote_for=ms.curr_vote_for)  # fmt: skip
        return VoteResponse.of(request, term=term, vote_result=result)

    def _decide_vote(self, request: VoteRequest, self_vote: bool) -> tuple[VoteResult, int]:
        ms = self.member_state
        if not ms.is_peer_member(request.leader_id):
            return V.REJECT_UNKNOWN_LEADER, ms.curr_term
        if not self_vote and ms.self_id == request.leader_id:
            return V.REJECT_UNEXPECTED_LEADER, ms.curr_term
        if request.ledger_end_term < ms.ledger_end_term:
            return V.REJECT_EXPIRED_LEDGER_TERM, ms.curr_term
        if (
            request.ledger_end_term == ms.ledger_end_term
            and request.ledger_end_index < ms.ledger_end_index
        ):
            return V.REJECT_SMALL_LEDGER_END_INDEX, ms.curr_term
        if request.term < ms.curr_term:
            return V.REJECT_EXPIRED_VOTE_TERM, ms.curr_term
        if request.term == ms.curr_term:
            if ms.curr_vote_for is None or ms.curr_vote_for == request.leader_id:
                pass  # let it go / a repeat
            elif ms.leader_id is not None:
                return V.REJECT_ALREADY_HAS_LEADER, ms.curr_term
            elif "dledger_vote_twice" not in mutants.ACTIVE:  # planted bug: votes again
                return V.REJECT_ALREADY_VOTED, ms.curr_term
        else:
            # stepped down by a larger term: only vote once the terms agree
            self.change_role_to_candidate(request.term)
            self.need_increase_term_immediately = True
            return V.REJECT_TERM_NOT_READY, ms.curr_term
        if request.term < ms.ledger_end_term:
            return V.REJECT_TERM_SMALL_THAN_LEDGER, ms.ledger_end_term
        if (
            not self_vote
            and self.transfer.is_taking_leadership()
            and request.ledger_end_term == ms.ledger_end_term
            and ms.ledger_end_index >= request.ledger_end_index
        ):
            return V.REJECT_TAKING_LEADERSHIP, ms.curr_term
        return V.ACCEPT, ms.curr_term

    # -- leader -------------------------------------------------------------------------------
    def maintain_as_leader(self) -> None:
        """Heartbeats when more than ``heartBeatTimeIntervalMs`` passed since the last (step 7).

        Mirrors ``DLedgerLeaderElector#maintainAsLeader``.
        """
        if (
            elapsed(self.now, self.last_send_heart_beat_time)
            > self.config.heart_beat_time_interval_ms
        ):
            ms = self.member_state
            if not ms.is_leader():
                return
            self.last_send_heart_beat_time = self.now
            self.send_heartbeats(ms.curr_term, ms.leader_id or ms.self_id)

    def send_heartbeats(self, term: int, leader_id: str) -> None:
        """One ``HeartBeatRequest`` per other peer; the round closes on a quorum of successes
        (or successes and TERM_NOT_READY), on every answer, or after
        ``heartBeatTimeIntervalMs`` (step 7). Mirrors ``DLedgerLeaderElector#sendHeartbeats``."""
        ms = self.member_state
        rnd = _BeatRound(term=term)
        self._beat_round = rnd
        self._emit("7", term=term, leader_id=leader_id)
        for peer_id in ms.peer_map:
            if peer_id == ms.self_id:
                continue
            request = HeartBeatRequest(
                group=ms.group,
                local_id=ms.self_id,
                remote_id=peer_id,
                leader_id=leader_id,
                term=term,
            )
            self.server.rpc.heart_beat(
                request, lambda resp, p=peer_id, r=rnd: self._on_heart_beat_response(r, p, resp)
            )
        self.server.ctx.set_timer(
            BEAT_LATCH,
            self.config.heart_beat_time_interval_ms,
            lambda r=rnd: self._parse_beat_round(r),
        )
        if ms.peer_size() == 1:
            self.server.ctx.cancel_timer(BEAT_LATCH)
            self._parse_beat_round(rnd)

    def _on_heart_beat_response(self, rnd: _BeatRound, peer_id: str, x: HeartBeatResponse) -> None:
        ms = self.member_state
        code = R.value_of(x.code)
        ms.peers_live_table[peer_id] = code != R.NETWORK_ERROR
        if self._beat_round is not rnd:
            return
        if code == R.SUCCESS:
            rnd.succ_num += 1
        elif code == R.EXPIRED_TERM:
            rnd.max_term = x.term
        elif code == R.INCONSISTENT_LEADER:
            rnd.inconsist_leader = True
        elif code == R.TERM_NOT_READY:
            rnd.not_ready_num += 1
        latch = ms.is_quorum(rnd.succ_num) or ms.is_quorum(rnd.succ_num + rnd.not_ready_num)
        rnd.all_num += 1
        if latch or rnd.all_num == ms.peer_size():
            self.server.ctx.cancel_timer(BEAT_LATCH)
            self._parse_beat_round(rnd)

    def _parse_beat_round(self, rnd: _BeatRound) -> None:
        """What the leader makes of a heartbeat round (step 9): a quorum of successes renews
        its lease; else a larger term or an inconsistent leader, or no quorum for more than
        ``maxHeartBeatLeak * heartBeatTimeIntervalMs``, makes it a candidate."""
        if self._beat_round is not rnd:
            return
        self._beat_round = None
        ms = self.member_state
        c = self.config
        outcome = "lease"
        if ms.is_quorum(rnd.succ_num):
            self.last_succ_heart_beat_time = self.now
        elif ms.is_quorum(rnd.succ_num + rnd.not_ready_num):
            self.last_send_heart_beat_time = -1
            outcome = "resend"
        elif rnd.max_term > rnd.term:
            outcome = "larger_term"
            self.change_role_to_candidate(rnd.max_term)
        elif rnd.inconsist_leader:
            outcome = "inconsistent_leader"
            self.change_role_to_candidate(rnd.term)
        elif (
            elapsed(self.now, self.last_succ_heart_beat_time)
            > c.max_heart_beat_leak * c.heart_beat_time_interval_ms
        ):
            outcome = "lost_quorum"
            self.change_role_to_candidate(rnd.term)
        else:
            outcome = "no_quorum"
        self._emit(
            "9", term=rnd.term, all_num=rnd.all_num, succ_num=rnd.succ_num,
            not_ready_num=rnd.not_ready_num, max_term=rnd.max_term, outcome=outcome,
            last_succ_heart_beat_time=self.last_succ_heart_beat_time,
        )  # fmt: skip

    # -- follower -----------------------------------------------------------------------------
    def maintain_as_follower(self) -> None:
        """No heartbeat for more than ``maxHeartBeatLeak * heartBeatTimeIntervalMs``: become a
        candidate in the same term (step 10). Mirrors ``maintainAsFollower``."""
        c = self.config
        gap = elapsed(self.now, self.last_leader_heart_beat_time)
        if gap > 2 * c.heart_beat_time_interval_ms:
            ms = self.member_state
            if ms.is_follower() and gap > c.max_heart_beat_leak * c.heart_beat_time_interval_ms:
                self._emit("10", last_leader_heart_beat_time=self.last_leader_heart_beat_time,
                           leader_id=ms.leader_id, term=ms.curr_term)  # fmt: skip
                self.change_role_to_candidate(ms.curr_term)

    def handle_heart_beat(self, request: HeartBeatRequest) -> HeartBeatResponse:
        """Answer a leader's heartbeat (step 8). Mirrors ``DLedgerLeaderElector#handleHeartBeat``:
        a smaller term gets EXPIRED_TERM; the known leader of this term renews the follower's
        timer; a leader of this term when none is known makes this node its follower; a larger
        term makes it a candidate first (TERM_NOT_READY), as 0.2.3 does "to make it simple".
        """
        code, term = self._decide_heart_beat(request)
        ms = self.member_state
        self._emit("8", leader_id=request.leader_id, term=request.term, code=code.name,
                   role=ms.role.value, curr_term=ms.curr_term)  # fmt: skip
        if term is None:
            return HeartBeatResponse(code=code)
        return HeartBeatResponse(code=code, term=term)

    def _decide_heart_beat(self, request: HeartBeatRequest) -> tuple[R, int | None]:
        ms = self.member_state
        if not ms.is_peer_member(request.leader_id):
            return R.UNKNOWN_MEMBER, ms.curr_term
        if ms.self_id == request.leader_id:
            return R.UNEXPECTED_MEMBER, ms.curr_term
        if request.term < ms.curr_term:
            return R.EXPIRED_TERM, ms.curr_term
        if request.term == ms.curr_term:
            if ms.leader_id is None:
                self.change_role_to_follower(request.term, request.leader_id)
                return R.SUCCESS, None
            if request.leader_id == ms.leader_id:
                self.last_leader_heart_beat_time = self.now
                return R.SUCCESS, None
            return R.INCONSISTENT_LEADER, None
        self.change_role_to_candidate(request.term)
        self.need_increase_term_immediately = True
        return R.TERM_NOT_READY, None

    # -- role changes ---------------------------------------------------------------------------
    def change_role_to_leader(self, term: int) -> None:
        """``changeRoleToLeader`` (step 6): only in the term it was elected for."""
        ms = self.member_state
        if ms.curr_term == term:
            ms.change_to_leader(term)
            self.last_send_heart_beat_time = -1
            self._emit("6", role=Role.LEADER.value, term=term)
            self._handle_role_change(term, Role.LEADER)

    def change_role_to_candidate(self, term: int) -> None:
        """``changeRoleToCandidate`` (step 11): a term not below the current one."""
        ms = self.member_state
        if term >= ms.curr_term:
            prev = ms.role
            ms.change_to_candidate(term)
            self._emit("11", role=Role.CANDIDATE.value, term=term, prev_role=prev.value,
                       curr_term=ms.curr_term)  # fmt: skip
            self._handle_role_change(term, Role.CANDIDATE)

    def change_role_to_follower(self, term: int, leader_id: str) -> None:
        """``changeRoleToFollower`` (step 8's outcome)."""
        self.last_parse_result = ParseResult.WAIT_TO_REVOTE
        self.member_state.change_to_follower(term, leader_id)
        self.last_leader_heart_beat_time = self.now
        self._emit("8", event="ChangeRoleToFollower", role=Role.FOLLOWER.value, term=term,
                   leader_id=leader_id)  # fmt: skip
        self._handle_role_change(term, Role.FOLLOWER)

    def _handle_role_change(self, term: int, role: Role) -> None:
        """``handleRoleChange``: the take-leadership task first, then the handlers."""
        self.transfer.check(term, role)
        for handler in list(self.role_change_handlers):
            handler(term, role)

    def stop(self) -> None:
        """Forget the open rounds (the node stopped)."""
        self._vote_round = None
        self._beat_round = None
