"""The leader elector, one test per sentence of the mechanism (DLedgerLeaderElector, DLedger 0.2.3).

Each test sets a node's state, feeds it requests or answers, and checks what it answers,
sends and becomes, in the manner of etcd-io/raft's raft_paper_test.go; the 0.2.3 method it
mirrors is named under each test. Steps: mechanisms.md "DLedger election".
"""

from __future__ import annotations

import random

import pytest
from dledger_harness import one_server

from mqlab.dledger.dledger_leader_elector import VOTE_LATCH
from mqlab.dledger.member_state import Role
from mqlab.dledger.protocol import (
    DLedgerResponseCode as R,
)
from mqlab.dledger.protocol import (
    HeartBeatRequest,
    HeartBeatResponse,
    ParseResult,
    VoteRequest,
    VoteResponse,
)
from mqlab.dledger.protocol import (
    VoteResult as V,
)


def voter(term=2, end_term=1, end_index=5, vote_for=None, leader=None):
    """Node n1 in ``term`` with a log ending at (end_term, end_index)."""
    driver, server, rpc = one_server("n1")
    ms = server.member_state
    ms.curr_term = term
    ms.curr_vote_for = vote_for
    ms.leader_id = leader
    ms.update_ledger_index_and_term(end_index, end_term)
    return server


def vote(server, candidate="n0", term=2, end_term=1, end_index=5, self_vote=False):
    req = VoteRequest(group="default", remote_id=server.member_state.self_id, leader_id=candidate,
                      term=term, ledger_end_term=end_term, ledger_end_index=end_index)  # fmt: skip
    return server.elector.handle_vote(req, self_vote)


# -- handleVote, check by check, in 0.2.3's order -------------------------------------------------
def test_vote_granted_and_persisted():
    """An up-to-date candidate in this term, no vote yet: ACCEPT, and the vote is written.
    Reference: DLedgerLeaderElector#handleVote."""
    s = voter()
    resp = vote(s)
    assert (resp.vote_result, resp.term, resp.leader_id, resp.remote_id) == (
        V.ACCEPT,
        2,
        "n0",
        "n1",
    )
    assert s.member_state.curr_vote_for == "n0"
    assert s.disk["/tmp/dledgerstore/dledger-n1/currterm"] == "voteLeader=n0\ncurrTerm=2\n"
    assert vote(s).vote_result == V.ACCEPT  # the same candidate again: "repeat just let it go"


def test_vote_rejects_unknown_and_unexpected_leaders():
    """A candidate outside the peers: REJECT_UNKNOWN_LEADER; this node's own id from the
    network: REJECT_UNEXPECTED_LEADER. Reference: DLedgerLeaderElector#handleVote."""
    s = voter()
    assert vote(s, candidate="n9").vote_result == V.REJECT_UNKNOWN_LEADER
    assert vote(s, candidate="n1").vote_result == V.REJECT_UNEXPECTED_LEADER
    assert vote(s, candidate="n1", self_vote=True).vote_result == V.ACCEPT


def test_vote_rejects_a_log_with_an_older_last_term_before_looking_at_terms():
    """ledgerEndTerm below ours: REJECT_EXPIRED_LEDGER_TERM, checked before the request's
    term, so a larger term does not make this node step down. Reference: handleVote."""
    s = voter(term=2, end_term=1)
    resp = vote(s, term=9, end_term=0, end_index=50)
    assert (resp.vote_result, resp.term) == (V.REJECT_EXPIRED_LEDGER_TERM, 2)
    assert (s.member_state.curr_term, s.elector.need_increase_term_immediately) == (2, False)


def test_vote_rejects_a_shorter_log_of_the_same_last_term():
    """Same ledgerEndTerm, smaller ledgerEndIndex: REJECT_SMALL_LEDGER_END_INDEX."""
    s = voter(end_term=1, end_index=5)
    assert vote(s, end_term=1, end_index=4).vote_result == V.REJECT_SMALL_LEDGER_END_INDEX
    assert vote(s, end_term=2, end_index=0).vote_result == V.ACCEPT  # a later term wins


def test_vote_rejects_an_older_term_with_our_term():
    """term below ours: REJECT_EXPIRED_VOTE_TERM carrying our term, so the candidate learns it."""
    resp = vote(voter(term=4), term=3)
    assert (resp.vote_result, resp.term) == (V.REJECT_EXPIRED_VOTE_TERM, 4)


def test_one_vote_per_term():
    """Voted for n2 in this term: n0 gets REJECT_ALREADY_VOTED, or REJECT_ALREADY_HAS_LEADER
    once a leader is known. Reference: handleVote."""
    assert vote(voter(vote_for="n2"), candidate="n0").vote_result == V.REJECT_ALREADY_VOTED
    s = voter(vote_for="n2", leader="n2")
    assert vote(s, candidate="n0").vote_result == V.REJECT_ALREADY_HAS_LEADER
    assert s.member_state.curr_vote_for == "n2"


def test_a_larger_term_makes_the_voter_a_candidate_that_is_not_ready():
    """term above ours: this node becomes a candidate of that term (knownMaxTermInGroup),
    raises needIncreaseTermImmediately, and answers REJECT_TERM_NOT_READY with its old term.
    Reference: handleVote, "stepped down by larger term"."""
    s = voter(term=2, vote_for="n2", leader="n2")
    s.member_state.role = Role.FOLLOWER
    resp = vote(s, term=5)
    assert (resp.vote_result, resp.term) == (V.REJECT_TERM_NOT_READY, 2)
    ms = s.member_state
    assert (ms.role, ms.curr_term, ms.leader_id, ms.known_max_term_in_group) == (
        Role.CANDIDATE,
        2,
        None,
        5,
    )
    assert s.elector.need_increase_term_immediately is True


def test_vote_rejects_a_term_below_our_ledger_end_term():
    """A term below our last entry's term: REJECT_TERM_SMALL_THAN_LEDGER, carrying our
    ledgerEndTerm. Reference: handleVote."""
    s = voter(term=1, end_term=2, end_index=0)
    resp = vote(s, term=1, end_term=2, end_index=0)
    assert (resp.vote_result, resp.term) == (V.REJECT_TERM_SMALL_THAN_LEDGER, 2)


# -- handleHeartBeat ------------------------------------------------------------------------------
def beat(server, leader="n0", term=2):
    return server.elector.handle_heart_beat(
        HeartBeatRequest(
            group="default", local_id=leader, remote_id="n1", leader_id=leader, term=term
        )
    )


def test_heartbeat_of_an_older_term_is_refused_with_ours():
    """term below ours: EXPIRED_TERM (403) with our term. Reference: handleHeartBeat."""
    resp = beat(voter(term=3), term=2)
    assert (resp.code, resp.term) == (R.EXPIRED_TERM, 3)


def test_heartbeat_makes_a_candidate_the_follower_of_this_terms_leader():
    """Same term, no leader known: become its follower, SUCCESS. Reference: handleHeartBeat,
    changeRoleToFollower."""
    s = voter(term=2)
    assert beat(s).code == R.SUCCESS
    ms = s.member_state
    assert (ms.role, ms.leader_id, s.elector.last_leader_heart_beat_time) == (
        Role.FOLLOWER,
        "n0",
        0,
    )
    assert s.elector.last_parse_result == ParseResult.WAIT_TO_REVOTE


def test_heartbeat_from_another_leader_of_the_same_term_is_inconsistent():
    """Same term, another leader known: INCONSISTENT_LEADER (409)."""
    s = voter(term=2, leader="n2")
    assert beat(s, leader="n0").code == R.INCONSISTENT_LEADER


def test_heartbeat_of_a_larger_term_makes_a_candidate_first():
    """A larger term: candidate of that term, TERM_NOT_READY (416), "to make it simple"."""
    s = voter(term=2, leader="n2")
    s.member_state.role = Role.FOLLOWER
    resp = beat(s, leader="n0", term=4)
    assert resp.code == R.TERM_NOT_READY
    assert (s.member_state.role, s.member_state.known_max_term_in_group) == (Role.CANDIDATE, 4)
    assert s.elector.need_increase_term_immediately is True


def test_heartbeat_from_an_unknown_or_own_id():
    """UNKNOWN_MEMBER (401) for a non-peer, UNEXPECTED_MEMBER (402) for this node's id."""
    s = voter()
    assert beat(s, leader="n7").code == R.UNKNOWN_MEMBER
    assert beat(s, leader="n1").code == R.UNEXPECTED_MEMBER


# -- a candidate's round and its parse result -----------------------------------------------------
def draws(node: str, seed: int = 0):
    """The node's "dledger.vote" stream, as the elector draws from it."""
    return random.Random(f"{seed}/{node}/dledger.vote")


def start_round(**state):
    """n0 as a candidate in term 2 (after WAIT_TO_VOTE_NEXT), its round sent."""
    driver, server, rpc = one_server("n0")
    ms = server.member_state
    ms.curr_term = 1
    ms.update_ledger_index_and_term(state.get("end_index", -1), state.get("end_term", -1))
    server.elector.last_parse_result = ParseResult.WAIT_TO_VOTE_NEXT
    server.elector.maintain_state()
    return driver, server, rpc


def test_a_candidate_asks_every_peer_for_its_vote_in_a_new_term():
    """After WAIT_TO_VOTE_NEXT: nextTerm (1 -> 2), a vote for itself, a VoteRequest to each
    other peer with its ledger end. Reference: maintainAsCandidate, voteForQuorumResponses."""
    _, s, rpc = start_round(end_index=4, end_term=1)
    sent = rpc.take("vote")
    assert [
        (r.remote_id, r.leader_id, r.term, r.ledger_end_term, r.ledger_end_index) for r, _ in sent
    ] == [
        ("n1", "n0", 2, 1, 4),
        ("n2", "n0", 2, 1, 4),
    ]
    assert (s.member_state.curr_term, s.member_state.curr_vote_for) == (2, "n0")


def test_two_accepts_of_three_pass_and_the_candidate_leads():
    """Self + one ACCEPT is a quorum of 3: PASSED at once, LEADER of term 2.
    Reference: maintainAsCandidate, changeRoleToLeader."""
    driver, s, rpc = start_round()
    (r1, cb1), (r2, cb2) = rpc.take("vote")
    cb1(VoteResponse.of(r1, vote_result=V.ACCEPT))
    assert s.elector.last_parse_result == ParseResult.PASSED
    assert (s.member_state.role, s.member_state.leader_id) == (Role.LEADER, "n0")
    assert not driver.contexts["n0"].has_timer(VOTE_LATCH)


def test_accept_plus_term_not_ready_revotes_immediately():
    """Self ACCEPT + REJECT_TERM_NOT_READY is a quorum only with the not-ready one:
    REVOTE_IMMEDIATELY, same term, no wait. Reference: maintainAsCandidate."""
    _, s, rpc = start_round()
    (r1, cb1), _ = rpc.take("vote")
    cb1(VoteResponse.of(r1, term=2, vote_result=V.REJECT_TERM_NOT_READY))
    assert s.elector.last_parse_result == ParseResult.REVOTE_IMMEDIATELY
    assert s.member_state.role == Role.CANDIDATE


def test_a_larger_term_in_the_answers_waits_to_vote_next_in_that_term():
    """REJECT_EXPIRED_VOTE_TERM with term 7: WAIT_TO_VOTE_NEXT, knownMaxTermInGroup 7, the
    next vote at now + 300 + random(700), in term 7. Reference: maintainAsCandidate."""
    driver, s, rpc = start_round()
    (r1, cb1), (r2, cb2) = rpc.take("vote")
    cb1(VoteResponse.of(r1, term=7, vote_result=V.REJECT_EXPIRED_VOTE_TERM))
    cb2(VoteResponse.of(r2, term=2, vote_result=V.REJECT_ALREADY_VOTED))
    rng = draws("n0")
    rng.randrange(1000)  # the round's latch
    assert s.elector.last_parse_result == ParseResult.WAIT_TO_VOTE_NEXT
    assert s.elector.next_time_to_request_vote == 300 + rng.randrange(700)
    assert s.member_state.known_max_term_in_group == 7
    driver.advance(s.elector.next_time_to_request_vote + 10)  # the maintainer ticks every 10 ms
    assert s.member_state.curr_term == 7


def test_a_known_leader_waits_a_whole_heartbeat_leak():
    """REJECT_ALREADY_HAS_LEADER: WAIT_TO_REVOTE until now + 300 + random(700) + 3 * 2000."""
    _, s, rpc = start_round()
    (r1, cb1), _ = rpc.take("vote")
    cb1(VoteResponse.of(r1, term=2, vote_result=V.REJECT_ALREADY_HAS_LEADER))
    rng = draws("n0")
    rng.randrange(1000)
    assert s.elector.last_parse_result == ParseResult.WAIT_TO_REVOTE
    assert s.elector.next_time_to_request_vote == 300 + rng.randrange(700) + 6000


def test_too_few_answers_wait_for_the_latch_then_revote():
    """No answer from either peer: the round ends at the latch, 2000 + random(1000) ms;
    validNum 1 is no quorum: WAIT_TO_REVOTE (same term next time). Reference: maintainAsCandidate."""
    driver, s, rpc = start_round()
    rng = draws("n0")
    latch = 2000 + rng.randrange(1000)
    driver.advance(latch - 1)
    assert driver.contexts["n0"].has_timer(VOTE_LATCH)  # the round is still open
    driver.advance(1)
    assert s.elector.last_parse_result == ParseResult.WAIT_TO_REVOTE
    assert s.elector.next_time_to_request_vote == latch + 300 + rng.randrange(700)
    assert s.member_state.curr_term == 2


def test_bigger_logs_in_the_group_make_a_candidate_wait_longer():
    """Two REJECT_SMALL_LEDGER_END_INDEX: valid 3, valid - bigger 1 is no quorum:
    WAIT_TO_REVOTE with maxVoteIntervalMs more. Reference: maintainAsCandidate."""
    _, s, rpc = start_round()
    (r1, cb1), (r2, cb2) = rpc.take("vote")
    cb1(VoteResponse.of(r1, term=2, vote_result=V.REJECT_SMALL_LEDGER_END_INDEX))
    cb2(VoteResponse.of(r2, term=2, vote_result=V.REJECT_EXPIRED_LEDGER_TERM))
    rng = draws("n0")
    rng.randrange(1000)
    assert s.elector.last_parse_result == ParseResult.WAIT_TO_REVOTE
    assert s.elector.next_time_to_request_vote == 300 + rng.randrange(700) + 1000


def test_all_rejected_waits_to_vote_next():
    """Self ACCEPT and two REJECT_ALREADY_VOTED: WAIT_TO_VOTE_NEXT (the next term)."""
    _, s, rpc = start_round()
    for r, cb in rpc.take("vote"):
        cb(VoteResponse.of(r, term=2, vote_result=V.REJECT_ALREADY_VOTED))
    assert s.elector.last_parse_result == ParseResult.WAIT_TO_VOTE_NEXT


def test_the_first_round_is_in_term_0():
    """A fresh node's first round keeps term 0 (lastParseResult starts WAIT_TO_REVOTE).
    Reference: maintainAsCandidate."""
    driver, s, rpc = one_server("n0")
    driver.advance(0)
    assert [r.term for r, _ in rpc.take("vote")] == [0, 0]
    assert s.member_state.curr_vote_for == "n0"


# -- the leader's heartbeats and the follower's timeout -------------------------------------------
def leader_n0():
    driver, s, rpc = one_server("n0")
    s.member_state.curr_term = 3
    s.elector.change_role_to_leader(3)
    return driver, s, rpc


def test_a_leader_beats_every_2000_ms_and_keeps_its_lease_on_a_quorum():
    """Heartbeats at once, then when more than heartBeatTimeIntervalMs passed (checked every
    10 ms): at 0 and 2010. One SUCCESS renews lastSuccHeartBeatTime. Reference: maintainAsLeader,
    sendHeartbeats."""
    driver, s, rpc = leader_n0()
    driver.advance(0)
    sent = rpc.take("heart_beat")
    assert [(r.remote_id, r.leader_id, r.term) for r, _ in sent] == [
        ("n1", "n0", 3),
        ("n2", "n0", 3),
    ]
    sent[0][1](HeartBeatResponse())
    assert s.elector.last_succ_heart_beat_time == 0
    driver.advance(2000)
    assert rpc.take("heart_beat") == []
    driver.advance(10)
    assert len(rpc.take("heart_beat")) == 2


def test_a_leader_without_a_quorum_for_6000_ms_steps_down():
    """No answers: each round ends after 2000 ms; once more than 3 * 2000 ms passed since the
    last success the leader becomes a candidate of the same term. Reference: sendHeartbeats."""
    driver, s, rpc = leader_n0()
    driver.advance(0)
    ok = rpc.take("heart_beat")
    ok[0][1](HeartBeatResponse())  # success at 0: the round closes on its quorum
    # rounds start at 2010 and 4020 (more than 2000 ms after the last), each closing 2000 ms
    # later without answers; the one closing at 6020 finds 6020 ms > 6000 ms without a quorum
    driver.advance(6019)
    assert [len(rpc.take("heart_beat"))] == [4]
    assert s.member_state.role == Role.LEADER
    driver.advance(1)
    assert (s.member_state.role, s.member_state.curr_term) == (Role.CANDIDATE, 3)


def test_a_heartbeat_answer_with_a_larger_term_ends_leadership():
    """EXPIRED_TERM with term 5 from one and no quorum: candidate of term 5."""
    driver, s, rpc = leader_n0()
    driver.advance(0)
    (r1, cb1), (r2, cb2) = rpc.take("heart_beat")
    cb1(HeartBeatResponse(code=R.EXPIRED_TERM, term=5))
    cb2(HeartBeatResponse(code=R.NETWORK_ERROR))
    assert (s.member_state.role, s.member_state.known_max_term_in_group) == (Role.CANDIDATE, 5)
    assert s.member_state.peers_live_table == {"n1": True, "n2": False}


def test_a_larger_term_from_one_peer_does_not_end_leadership_while_the_other_succeeds():
    """EXPIRED_TERM with term 5 from one, then SUCCESS from the other: a quorum renews the
    lease first, so the leader stays leader of term 3 (sendHeartbeats looks at the larger term only
    without a quorum). A peer in a larger term with a shorter log stays shut out: its VOTEs
    are refused on the log before the term is looked at (see
    test_vote_rejects_a_log_with_an_older_last_term_before_looking_at_terms), the mixed
    group's ``_wait_formed`` in ``mqlab.conformance.dledger_mixed``."""
    driver, s, rpc = leader_n0()
    driver.advance(0)
    (r1, cb1), (r2, cb2) = rpc.take("heart_beat")
    cb2(HeartBeatResponse(code=R.EXPIRED_TERM, term=5))
    cb1(HeartBeatResponse())
    assert (s.member_state.role, s.member_state.curr_term) == (Role.LEADER, 3)
    assert s.elector.last_succ_heart_beat_time == 0
    driver.advance(2010)
    assert [r.term for r, _ in rpc.take("heart_beat")] == [3, 3]


@pytest.mark.parametrize("gap, role", [(6000, Role.FOLLOWER), (6010, Role.CANDIDATE)])
def test_a_follower_without_heartbeats_becomes_a_candidate(gap, role):
    """More than maxHeartBeatLeak * heartBeatTimeIntervalMs (6000 ms) without a heartbeat:
    candidate in the same term. Reference: maintainAsFollower."""
    driver, s, rpc = one_server("n1")
    s.member_state.curr_term = 2
    s.elector.change_role_to_follower(2, "n0")
    driver.advance(gap)
    assert (s.member_state.role, s.member_state.curr_term) == (role, 2)


# -- handleVote against 0.2.3's own answers ---------------------------------------------------------
#: (state, request) -> what DLedger 0.2.3's DLedgerLeaderElector#handleVote answered in jshell on
#: dledger-0.2.3.jar (n1 of three; state: currTerm, ledgerEndTerm, ledgerEndIndex, vote, leader;
#: request: candidate, term, ledgerEndTerm, ledgerEndIndex): "result/term/role/currTerm/vote".
REAL_0_2_3 = [
    ((2, 1, 5, None, None), ("n0", 2, 1, 5), "ACCEPT/2/CANDIDATE/2/n0"),
    ((2, 1, 5, None, None), ("n9", 2, 1, 5), "REJECT_UNKNOWN_LEADER/2/CANDIDATE/2/None"),
    ((2, 1, 5, None, None), ("n1", 2, 1, 5), "REJECT_UNEXPECTED_LEADER/2/CANDIDATE/2/None"),
    ((2, 1, 5, None, None), ("n0", 9, 0, 50), "REJECT_EXPIRED_LEDGER_TERM/2/CANDIDATE/2/None"),
    ((2, 1, 5, None, None), ("n0", 2, 1, 4), "REJECT_SMALL_LEDGER_END_INDEX/2/CANDIDATE/2/None"),
    ((4, 1, 5, None, None), ("n0", 3, 1, 5), "REJECT_EXPIRED_VOTE_TERM/4/CANDIDATE/4/None"),
    ((2, 1, 5, "n2", None), ("n0", 2, 1, 5), "REJECT_ALREADY_VOTED/2/CANDIDATE/2/n2"),
    ((2, 1, 5, "n2", "n2"), ("n0", 2, 1, 5), "REJECT_ALREADY_HAS_LEADER/2/FOLLOWER/2/n2"),
    ((2, 1, 5, "n2", "n2"), ("n0", 5, 1, 5), "REJECT_TERM_NOT_READY/2/CANDIDATE/2/n2"),
    ((1, 2, 0, None, None), ("n0", 1, 2, 0), "REJECT_TERM_SMALL_THAN_LEDGER/2/CANDIDATE/1/None"),
    ((2, 1, 5, None, None), ("n0", 2, 2, 0), "ACCEPT/2/CANDIDATE/2/n0"),
]


@pytest.mark.parametrize("state, request_, real", REAL_0_2_3)
def test_handle_vote_answers_as_0_2_3_does(state, request_, real):
    """The same state and request give 0.2.3's result, term, role and vote."""
    term, end_term, end_index, vote_for, leader = state
    s = voter(term=term, end_term=end_term, end_index=end_index, vote_for=vote_for)
    if leader is not None:
        s.elector.change_role_to_follower(term, leader)
    candidate, r_term, r_end_term, r_end_index = request_
    resp = vote(s, candidate=candidate, term=r_term, end_term=r_end_term, end_index=r_end_index)
    ms = s.member_state
    got = f"{resp.vote_result.name}/{resp.term}/{ms.role.name}/{ms.curr_term}/{ms.curr_vote_for}"
    assert got == real


#: handleHeartBeat as DLedger 0.2.3 answered it in jshell (n1; state: currTerm, leader;
#: request: leader, term): "code/term/role/currTerm/leaderId".
REAL_BEATS_0_2_3 = [
    ((3, None), ("n0", 2), "403/3/CANDIDATE/3/None"),
    ((2, None), ("n0", 2), "200/-1/FOLLOWER/2/n0"),
    ((2, "n0"), ("n0", 2), "200/-1/FOLLOWER/2/n0"),
    ((2, "n2"), ("n0", 2), "409/-1/FOLLOWER/2/n2"),
    ((2, "n2"), ("n0", 4), "416/-1/CANDIDATE/2/None"),
    ((2, None), ("n7", 2), "401/2/CANDIDATE/2/None"),
    ((2, None), ("n1", 2), "402/2/CANDIDATE/2/None"),
]


@pytest.mark.parametrize("state, request_, real", REAL_BEATS_0_2_3)
def test_handle_heart_beat_answers_as_0_2_3_does(state, request_, real):
    """The same state and heartbeat give 0.2.3's code, term, role and leader."""
    term, leader = state
    s = voter(term=term)
    if leader is not None:
        s.elector.change_role_to_follower(term, leader)
    resp = beat(s, leader=request_[0], term=request_[1])
    ms = s.member_state
    assert f"{int(resp.code)}/{resp.term}/{ms.role.name}/{ms.curr_term}/{ms.leader_id}" == real
