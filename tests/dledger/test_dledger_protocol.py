"""DLedger's codes and messages (protocol/*, DLedger 0.2.3) and their JSON bodies."""

from __future__ import annotations

import json

import pytest

from mqlab.dledger import protocol as p
from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.rpc_body import from_body, to_body


def test_request_codes_are_0_2_3s():
    """DLedgerRequestCode: METADATA 50000 ... LEADERSHIP_TRANSFER 51005."""
    assert {c.name: int(c) for c in p.DLedgerRequestCode} == {
        "UNKNOWN": -1, "METADATA": 50000, "APPEND": 50001, "GET": 50002, "VOTE": 51001,
        "HEART_BEAT": 51002, "PULL": 51003, "PUSH": 51004, "LEADERSHIP_TRANSFER": 51005,
    }  # fmt: skip


def test_response_codes_are_0_2_3s():
    """A sample of DLedgerResponseCode's numbers; an unknown number reads as UNKNOWN."""
    R = p.DLedgerResponseCode
    assert (R.SUCCESS, R.NETWORK_ERROR, R.EXPIRED_TERM, R.NOT_LEADER) == (200, 302, 403, 404)
    assert (R.INCONSISTENT_STATE, R.INCONSISTENT_LEADER, R.TERM_NOT_READY) == (406, 409, 416)
    assert (R.TERM_CHANGED, R.WAIT_QUORUM_ACK_TIMEOUT, R.LEADER_TRANSFERRING) == (501, 502, 506)
    assert len(R) == 34
    assert R.value_of(999) == R.UNKNOWN


def test_vote_results_and_parse_results_in_declaration_order():
    """VoteResponse.RESULT and ParseResult, named and ordered as 0.2.3 declares them."""
    assert [r.name for r in p.VoteResult] == [
        "UNKNOWN", "ACCEPT", "REJECT_UNKNOWN_LEADER", "REJECT_UNEXPECTED_LEADER",
        "REJECT_EXPIRED_VOTE_TERM", "REJECT_ALREADY_VOTED", "REJECT_ALREADY_HAS_LEADER",
        "REJECT_TERM_NOT_READY", "REJECT_TERM_SMALL_THAN_LEDGER", "REJECT_EXPIRED_LEDGER_TERM",
        "REJECT_SMALL_LEDGER_END_INDEX", "REJECT_TAKING_LEADERSHIP",
    ]  # fmt: skip
    assert [r.name for r in p.ParseResult] == [
        "WAIT_TO_REVOTE", "REVOTE_IMMEDIATELY", "PASSED", "WAIT_TO_VOTE_NEXT"
    ]  # fmt: skip
    assert [t.name for t in p.PushEntryType] == ["APPEND", "COMMIT", "COMPARE", "TRUNCATE"]


def test_defaults_and_copy_base_info():
    """code 200 and term -1 by default; VoteResponse.of copies group, term, code, ids."""
    req = p.VoteRequest(group="g", remote_id="n1", local_id=None, leader_id="n0", term=4)
    assert (req.code, req.ledger_end_index, req.ledger_end_term) == (200, -1, -1)
    resp = p.VoteResponse.of(req, vote_result=p.VoteResult.ACCEPT)
    assert (resp.group, resp.remote_id, resp.leader_id, resp.term) == ("g", "n1", "n0", 4)
    assert p.VoteResponse().vote_result == p.VoteResult.UNKNOWN
    assert p.PushEntryResponse().index is None
    assert req.base_info() == "info[group=g,term=4,code=200,local=None,remote=n1,leader=n0]"


#: Bodies written by DLedger 0.2.3's classes with fastjson 1.2.76 (RocketMQ 4.9.3's pin), in
#: jshell with dledger-0.2.3.jar: ``JSON.toJSONBytes(request)`` as DLedgerRpcNettyService does.
GOLDEN = {
    "push_compare": b'{"batch":false,"batchEntry":[],"code":200,"commitIndex":5,"count":0,'
    b'"entry":{"body":"eA==","bodyCrc":0,"chainCrc":0,"channel":0,"index":6,"magic":1,"pos":9,'
    b'"size":49,"term":2},"firstEntryIndex":6,"group":"g","lastEntryIndex":6,"leaderId":"n0",'
    b'"remoteId":"n1","term":2,"totalSize":0,"type":"COMPARE"}',
    "push_commit": b'{"batch":false,"batchEntry":[],"code":200,"commitIndex":5,"count":0,'
    b'"firstEntryIndex":-1,"group":"g","lastEntryIndex":-1,"leaderId":"n0","remoteId":"n1",'
    b'"term":2,"totalSize":0,"type":"COMMIT"}',
    "vote_request": b'{"code":200,"group":"g","leaderId":"n0","ledgerEndIndex":-1,'
    b'"ledgerEndTerm":-1,"remoteId":"n1","term":1}',
    "vote_response": b'{"code":200,"term":3,"voteResult":"REJECT_ALREADY_VOTED"}',
    "push_response": b'{"beginIndex":0,"code":200,"endIndex":6,"group":"g","index":6,"term":2}',
    "append_response": b'{"code":200,"group":"g","index":6,"leaderId":"n0","pos":9,"term":2}',
    "transfer_request": b'{"code":200,"group":"g","remoteId":"n0","takeLeadershipLedgerIndex":0,'
    b'"term":1,"transferId":"n2","transfereeId":"n0"}',
    "heart_beat_response": b'{"code":200,"term":-1}',
}


def test_json_bodies_are_what_0_2_3_and_fastjson_write():
    """Each body equals, byte for byte, what 0.2.3's class gives through fastjson 1.2.76;
    each parses back to the same message."""
    entry = DLedgerEntry(magic=1, size=49, index=6, term=2, pos=9, body=b"x")
    base = {"group": "g", "remote_id": "n1", "leader_id": "n0", "term": 2, "commit_index": 5}
    messages = {
        "push_compare": p.PushEntryRequest(**base, type=p.PushEntryType.COMPARE, entry=entry),
        "push_commit": p.PushEntryRequest(**base, type=p.PushEntryType.COMMIT),
        "vote_request": p.VoteRequest(group="g", leader_id="n0", remote_id="n1", term=1),
        "vote_response": p.VoteResponse(term=3, vote_result=p.VoteResult.REJECT_ALREADY_VOTED),
        "push_response": p.PushEntryResponse(
            group="g", term=2, index=6, begin_index=0, end_index=6
        ),
        "append_response": p.AppendEntryResponse(group="g", term=2, index=6, pos=9, leader_id="n0"),
        "transfer_request": p.LeadershipTransferRequest(
            group="g", term=1, transfer_id="n2", transferee_id="n0", remote_id="n0"
        ),
        "heart_beat_response": p.HeartBeatResponse(),
    }
    for name, msg in messages.items():
        assert to_body(msg) == GOLDEN[name], name
        assert from_body(type(msg), GOLDEN[name]) == msg, name
    assert json.loads(GOLDEN["push_compare"])["entry"]["body"] == "eA=="


@pytest.mark.parametrize(
    "body, message",
    [(b"", "empty body"), (b"[1]", "body is not a JSON object"), (b"{", "body is not JSON"),
     (b'{"voteResult":"MAYBE"}', "bad body")],
)  # fmt: skip
def test_bad_bodies_are_value_errors(body, message):
    """A body that is not a message is a ValueError naming the class."""
    with pytest.raises(ValueError, match=f"VoteResponse: {message}"):
        from_body(p.VoteResponse, body)
