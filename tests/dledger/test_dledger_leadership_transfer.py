"""Leadership transfer (DLedgerLeaderElector#handleLeadershipTransfer, #handleTakeLeadership,
TakeLeadershipTask, DLedgerServer#handleLeadershipTransfer and #checkPreferredLeader,
DLedger 0.2.3); mechanisms.md "DLedger election" step 12."""

from __future__ import annotations

from dledger_harness import one_server

from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.member_state import Role
from mqlab.dledger.protocol import DLedgerResponseCode as R
from mqlab.dledger.protocol import LeadershipTransferRequest, VoteRequest
from mqlab.dledger.protocol import VoteResult as V

E = "DLedgerLeaderElector"


def transfer_events(g: DLedgerGroup) -> list[tuple[int, str, str, str | None]]:
    return [
        (e.t_ms, e.node, e.fields["event"], e.fields.get("code"))
        for e in g.trace.select(component=E, step="12")
    ]


def settled() -> DLedgerGroup:
    g = DLedgerGroup(3, seed=1)
    g.run_until(lambda: g.leader() is not None, 20_000)
    g.advance(2100)
    for i in range(3):
        g.append(b"x%d" % i)
    g.advance(50)  # t = 2500
    return g


def test_a_transfer_hands_the_next_term_to_the_transferee():
    """The leader (n2, term 1) marks n0 as transferee (its appends answer LEADER_TRANSFERRING)
    and asks n0 to take over; n0 becomes a candidate of term 2 at once, wins, and its role
    change answers SUCCESS; the old leader passes the answer on and follows n0."""
    g = settled()
    assert (g.leader(), g.now) == ("n2", 2500)
    answer = g.server("n2").transfer_leadership("n0")
    assert g.append(b"during", "n2").value.code == R.LEADER_TRANSFERRING
    g.run_until(lambda: answer.done, 10_000)
    assert (answer.value.code, answer.value.term) == (R.SUCCESS, 2)
    assert transfer_events(g) == [
        (2500, "n2", "handleLeadershipTransfer", None),
        (2501, "n0", "handleTakeLeadership", None),
        (3042, "n0", "TakeLeadershipTask", "SUCCESS"),
        (3043, "n2", "transferAnswered", "SUCCESS"),
    ]
    g.advance(3000)
    assert {i: (s["role"], s["term"]) for i, s in g.state().items()} == {
        "n0": ("LEADER", 2), "n1": ("FOLLOWER", 2), "n2": ("FOLLOWER", 2),
    }  # fmt: skip
    assert g.log("n0") == g.log("n2") and len(g.log("n0")) == 3
    assert g.server("n2").member_state.transferee is None


def test_the_leaders_checks():
    """An unknown transferee: UNKNOWN_MEMBER (401); another term: INCONSISTENT_TERM (407);
    a follower asked as the transferring node: NOT_LEADER (404); a second transfer while one
    runs: LEADER_TRANSFERRING (506); neither transferring nor transferee: UNEXPECTED_ARGUMENT."""
    g = settled()
    s2 = g.server("n2")

    def ask(node: str, **kw):
        base = {"group": "default", "remote_id": node, "transfer_id": node, "term": 1,
                "transferee_id": "n0"}  # fmt: skip
        base.update(kw)
        return g.server(node).handle_leadership_transfer(LeadershipTransferRequest(**base)).value

    assert ask("n2", transferee_id="n7").code == R.UNKNOWN_MEMBER
    assert ask("n2", term=5).code == R.INCONSISTENT_TERM
    assert ask("n1").code == R.NOT_LEADER
    assert ask("n1", transfer_id="n2", transferee_id="n0").code == R.UNEXPECTED_ARGUMENT
    first = s2.transfer_leadership("n0")
    assert not first.done
    assert s2.transfer_leadership("n1").value.code == R.LEADER_TRANSFERRING


def test_a_preferred_leader_takes_over_within_a_second():
    """preferredLeaderIds=n1: n2 wins term 1 at 342 ms; its checkPreferredLeader (every
    1000 ms) hands over at 1000 ms; n1, taking leadership, waits only 30 + random(70) ms to
    vote and leads term 2 at 1052 ms. Reference: DLedgerServer#checkPreferredLeader."""
    g = DLedgerGroup(3, seed=1, preferred_leader_ids="n1")
    g.run_until(lambda: g.leader() == "n1", 20_000)
    leaders = [(e.t_ms, e.node, e.fields["term"]) for e in g.trace.select(component=E, step="6")]
    assert leaders == [(342, "n2", 1), (1052, "n1", 2)]
    waits = [
        e.fields["next_time_to_request_vote"] - e.t_ms
        for e in g.trace.select(component=E, step="1", node="n1")
        if e.fields.get("event") == "WAIT_AFTER_INCREASE" and e.fields["term"] == 2
    ]
    assert waits == [30]


def test_a_node_taking_leadership_refuses_an_equal_log():
    """While taking leadership (preferred, in the term it is to take), a node refuses its
    vote to a candidate whose log is not longer: REJECT_TAKING_LEADERSHIP; a longer log gets
    it. Reference: DLedgerLeaderElector#handleVote, #isTakingLeadership."""
    _, s, _ = one_server("n1", preferred_leader_ids="n1")
    ms = s.member_state
    ms.curr_term = 4
    ms.term_to_take_leadership = 4
    ms.update_ledger_index_and_term(7, 3)

    def vote(end_index):
        req = VoteRequest(group="default", remote_id="n1", leader_id="n0", term=4,
                          ledger_end_term=3, ledger_end_index=end_index)  # fmt: skip
        return s.elector.handle_vote(req, False).vote_result

    assert vote(7) == V.REJECT_TAKING_LEADERSHIP
    assert vote(8) == V.ACCEPT
    assert ms.role == Role.CANDIDATE
