"""MemberState: roles, terms, votes and the currterm file (MemberState, DLedger 0.2.3)."""

from __future__ import annotations

import pytest

from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.exception import DLedgerException
from mqlab.dledger.member_state import MemberState, Role, parse_term_file, term_file_text
from mqlab.dledger.protocol import DLedgerResponseCode

PEERS = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"
PATH = "/tmp/dledgerstore/dledger-n0/currterm"


def state(disk=None) -> MemberState:
    return MemberState(DLedgerConfig(self_id="n0", peers=PEERS), disk)


def test_a_node_starts_as_a_candidate_in_term_0():
    """role CANDIDATE, currTerm 0, no vote, no leader, ledger end -1/-1."""
    ms = state()
    assert (ms.role, ms.curr_term, ms.curr_vote_for, ms.leader_id) == (
        Role.CANDIDATE,
        0,
        None,
        None,
    )
    assert (ms.ledger_end_index, ms.ledger_end_term, ms.known_max_term_in_group) == (-1, -1, -1)
    assert ms.peer_map == {
        "n0": "127.0.0.1:40911",
        "n1": "127.0.0.1:40912",
        "n2": "127.0.0.1:40913",
    }


def test_term_file_text_is_what_java_17_properties_write():
    """voteLeader first, then currTerm (Properties' order on Java 17); an empty vote is blank."""
    assert term_file_text(3, "n1") == "voteLeader=n1\ncurrTerm=3\n"
    assert term_file_text(0, None) == "voteLeader=\ncurrTerm=0\n"
    assert parse_term_file("voteLeader=\ncurrTerm=7\n") == (7, None)
    assert parse_term_file("#c\ncurrTerm = 2\nvoteLeader=n2\n") == (2, "n2")
    with pytest.raises(ValueError, match="currTerm='x'"):
        parse_term_file("currTerm=x\n")


def test_next_term_persists_and_clears_the_vote():
    """nextTerm: currTerm + 1, vote cleared, both written; the old file goes to .bak. The
    same two files as 0.2.3's MemberState wrote for setCurrVoteFor("n0"), nextTerm() in jshell
    on dledger-0.2.3.jar (Java 17)."""
    disk: dict[str, str] = {}
    ms = state(disk)
    ms.set_curr_vote_for("n0")
    assert disk[PATH] == "voteLeader=n0\ncurrTerm=0\n"
    assert ms.next_term() == 1
    assert disk[PATH] == "voteLeader=\ncurrTerm=1\n"
    assert disk[PATH + ".bak"] == "voteLeader=n0\ncurrTerm=0\n"


def test_next_term_jumps_to_the_largest_term_heard():
    """changeToCandidate(5) records knownMaxTermInGroup 5; nextTerm goes there, not to 1."""
    ms = state()
    ms.change_to_candidate(5)
    assert ms.curr_term == 0
    assert ms.next_term() == 5
    assert ms.next_term() == 6


def test_a_restart_reads_term_and_vote_back():
    """A new MemberState on the same disk has the persisted term and vote (loadTerm)."""
    disk: dict[str, str] = {}
    ms = state(disk)
    ms.next_term()
    ms.next_term()
    ms.set_curr_vote_for("n2")
    again = state(disk)
    assert (again.curr_term, again.curr_vote_for, again.role) == (2, "n2", Role.CANDIDATE)


def test_role_changes_check_the_term():
    """changeToLeader/Follower in another term: ILLEGAL_MEMBER_STATE (504); nextTerm only as candidate."""
    ms = state()
    with pytest.raises(DLedgerException) as e:
        ms.change_to_leader(1)
    assert e.value.code == DLedgerResponseCode.ILLEGAL_MEMBER_STATE
    ms.change_to_follower(0, "n1")
    assert (ms.role, ms.leader_id) == (Role.FOLLOWER, "n1")
    with pytest.raises(DLedgerException, match="FOLLOWER != CANDIDATE"):
        ms.next_term()
    with pytest.raises(DLedgerException, match="should -1 >= 0"):
        ms.change_to_candidate(-1)


def test_is_quorum_of_three():
    """isQuorum: 2 of 3."""
    ms = state()
    assert (ms.is_quorum(1), ms.is_quorum(2)) == (False, True)
