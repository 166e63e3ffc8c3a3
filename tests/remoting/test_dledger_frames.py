"""DLedger frames recorded between real 4.9.3 DLedger nodes, read with mqlab's codec.

The fixtures in tests/fixtures/dledger/ are our own recording of one run of
``python -m mqlab.conformance.dledger_record tests/fixtures/dledger`` (three real 4.9.3
brokers with ``enableDLegerCommitLog=true``, relayed through ``FrameCapture``): each line is one
frame, its bytes in base64 and what mqlab's codec decoded from them. DLedger 0.2.3's RPC
(``DLedgerRpcNettyService``) is 4.9.3's ``RemotingCommand`` with a ``DLedgerRequestCode`` and a
fastjson body; docs/dledger.md describes the layouts these tests pin.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mqlab.common.message_decoder import decodes
from mqlab.dledger.dledger_entry import BODY_OFFSET
from mqlab.dledger.protocol import DLedgerRequestCode, DLedgerResponseCode, PushEntryType
from mqlab.remoting.command import RemotingCommand

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dledger"
FILES = ("election", "heartbeat", "first-entry", "cut-off-leader", "rejoin")

#: ``DLedgerRequestCode`` and ``DLedgerResponseCode`` (DLedger 0.2.3), as mqlab.dledger has them
Q = DLedgerRequestCode
R = DLedgerResponseCode
VOTE, HEART_BEAT, PUSH = Q.VOTE, Q.HEART_BEAT, Q.PUSH

#: the body's field names, by what it is (fastjson writes them sorted, nulls left out)
VOTE_REQUEST = ["code", "group", "leaderId", "ledgerEndIndex", "ledgerEndTerm", "remoteId", "term"]
VOTE_RESPONSE = ["code", "group", "leaderId", "remoteId", "term", "voteResult"]
HEART_BEAT_REQUEST = ["code", "group", "leaderId", "localId", "remoteId", "term"]
HEART_BEAT_RESPONSE = ["code", "term"]
PUSH_REQUEST = [
    "batch", "batchEntry", "code", "commitIndex", "count", "entry", "firstEntryIndex", "group",
    "lastEntryIndex", "leaderId", "remoteId", "term", "totalSize", "type",
]  # fmt: skip
ENTRY = ["body", "bodyCrc", "chainCrc", "channel", "index", "magic", "pos", "size", "term"]


def _load(name: str) -> list[dict]:
    lines = (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


ALL = [r for name in FILES for r in _load(name)]


def _requests_of(code: int) -> list[dict]:
    return [r for r in ALL if r["kind"] == "request" and r["code"] == code]


def _answer_to(req: dict) -> dict:
    (a,) = [
        r for r in ALL
        if r["kind"] == "response" and (r["src"], r["dst"], r["opaque"]) == (req["dst"], req["src"], req["opaque"])
    ]  # fmt: skip
    return a


def _keys(text: str) -> list[str]:
    return list(json.loads(text))  # in the order the sender wrote them


@pytest.mark.parametrize("name", FILES)
def test_each_frame_decodes_to_what_was_recorded(name: str) -> None:
    """mqlab's codec reads each frame: a JSON header (serialize type 0) with version 399
    (V4_9_3) and language JAVA, no extFields, no remark, and a JSON body."""
    records = _load(name)
    assert records
    for r in records:
        cmd = RemotingCommand.decode(base64.b64decode(r["frame"]))
        assert (cmd.code, cmd.flag, cmd.opaque) == (r["code"], r["flag"], r["opaque"])
        assert (cmd.serialize_type, cmd.version, cmd.language) == (0, 399, "JAVA")
        assert cmd.ext_fields is None and cmd.remark is None
        assert json.loads(cmd.body) == r["body"]


def test_request_codes_are_dledgers_and_responses_carry_200_and_the_opaque() -> None:
    """Requests are VOTE (51001), HEART_BEAT (51002) and PUSH (51004) with flag 0; every
    response frame has code 200 (DLedgerResponseCode.SUCCESS, whatever its body says) and
    flag 1, and answers a request of the same opaque the other way on the same link."""
    requests = [r for r in ALL if r["kind"] == "request"]
    assert {r["code"] for r in requests} == {VOTE, HEART_BEAT, PUSH}
    assert {r["flag"] for r in requests} == {0}
    responses = [r for r in ALL if r["kind"] == "response"]
    assert {(r["code"], r["flag"]) for r in responses} == {(R.SUCCESS, 1)}
    assert {_answer_to(r)["body"]["code"] for r in requests} == {
        R.SUCCESS,
        R.INCONSISTENT_STATE,
        R.TERM_NOT_READY,
    }


def test_requests_reencode_byte_for_byte_and_responses_but_for_empty_ext_fields() -> None:
    """A request re-encoded by mqlab is the recorded frame exactly (header keys sorted:
    code, flag, language, opaque, serializeTypeCurrentRPC, version). A response differs by
    one thing: mqlab writes ``"extFields":{}`` in every response header (for the C++
    client), where DLedger's has no extFields at all; with ``empty_ext_fields=False`` (as
    mqlab's DLedger answers) it is the recorded frame exactly."""
    for r in ALL:
        frame = base64.b64decode(r["frame"])
        cmd = RemotingCommand.decode(frame)
        again = cmd.encode()
        if r["kind"] == "request":
            assert again == frame
        else:
            header = r["header"].replace('"code":200,', '"code":200,"extFields":{},', 1)
            body = frame[8 + len(r["header"]) :]
            want = (4 + len(header) + len(body)).to_bytes(4, "big")
            want += len(header).to_bytes(4, "big") + header.encode() + body
            assert again == want
            cmd.empty_ext_fields = False
            assert cmd.encode() == frame
        assert _keys(r["header"]) == sorted(_keys(r["header"]))


def test_a_dledger_style_response_built_by_mqlab_is_the_recorded_frame() -> None:
    """``create_response(SUCCESS, body=..., empty_ext_fields=False)`` with the request's
    opaque, as ``DLedgerServer`` answers, gives the real node's response frame byte for byte;
    the same call without the flag still writes ``"extFields":{}`` (other frames unchanged)."""
    (answer,) = [r for r in _load("heartbeat") if r["seq"] == 70]
    frame = base64.b64decode(answer["frame"])
    cmd = RemotingCommand.create_response(
        R.SUCCESS, body=answer["bodyText"].encode(), empty_ext_fields=False
    )
    cmd.opaque = answer["opaque"]
    assert cmd.encode() == frame
    plain = RemotingCommand.create_response(R.SUCCESS, body=answer["bodyText"].encode())
    plain.opaque = answer["opaque"]
    assert b'"extFields":{}' in plain.encode() and len(plain.encode()) == len(frame) + 15


def test_body_field_names_by_kind_sorted_as_fastjson_writes_them() -> None:
    """The bodies' fields, exactly and in order: VoteRequest has no localId (its leaderId is
    the candidate), HeartBeatResponse only code and term (-1), PushEntryRequest carries the
    entry as JSON with its body in base64 (none for a COMMIT)."""
    for r in ALL:
        keys = _keys(r["bodyText"])
        assert keys == sorted(keys)
    for req in _requests_of(VOTE):
        assert _keys(req["bodyText"]) == VOTE_REQUEST
        assert req["body"]["leaderId"] == req["src"] and req["body"]["remoteId"] == req["dst"]
        assert _keys(_answer_to(req)["bodyText"]) == VOTE_RESPONSE
    for req in _requests_of(HEART_BEAT):
        assert _keys(req["bodyText"]) == HEART_BEAT_REQUEST
        assert _keys(_answer_to(req)["bodyText"]) == HEART_BEAT_RESPONSE
        assert _answer_to(req)["body"]["term"] == -1
    for req in _requests_of(PUSH):
        want = [
            k
            for k in PUSH_REQUEST
            if k != "entry" or req["body"]["type"] != PushEntryType.COMMIT.value
        ]
        assert _keys(req["bodyText"]) == want
        if req["body"]["type"] != "COMMIT":
            assert _keys(json.dumps(req["body"]["entry"])) == ENTRY


def test_first_entry_reaches_a_follower_as_compare_then_truncate_then_commit() -> None:
    """A fresh leader's pusher starts in COMPARE: entry 0 is compared (answer 406
    INCONSISTENT_STATE, the follower's beginIndex and endIndex -1), then sent in a TRUNCATE
    (answer 200, 0..0), then committed (COMMIT, commitIndex 0). The entry's body is the
    message in commit-log format, whose physical offset is 48: the entry's header size."""
    pushes = [r for r in _load("first-entry") if r["kind"] == "request"]
    assert [p["body"]["type"] for p in pushes] == ["COMPARE", "TRUNCATE", "COMMIT"]
    said = [_answer_to(p)["body"] for p in pushes]
    assert [(a["code"], a["beginIndex"], a["endIndex"]) for a in said] == [
        (R.INCONSISTENT_STATE, -1, -1), (R.SUCCESS, 0, 0), (R.SUCCESS, 0, 0),
    ]  # fmt: skip
    assert pushes[2]["body"]["commitIndex"] == 0
    entry = pushes[1]["body"]["entry"]
    message = base64.b64decode(entry["body"])
    assert (entry["index"], entry["term"], entry["magic"], entry["pos"]) == (0, 1, 1, 0)
    assert entry["size"] == BODY_OFFSET + len(message)
    (msg,) = decodes(message)
    assert (msg.body, msg.commit_log_offset, msg.topic) == (
        b"one message",
        BODY_OFFSET,
        "DLedgerTopic",
    )


def test_cut_off_leader_rejects_votes_then_has_its_uncommitted_entry_truncated() -> None:
    """The cut-off leader (log end index 1, an entry no follower has) answers the followers'
    VOTEs REJECT_SMALL_LEDGER_END_INDEX; one of them wins anyway, COMPAREs entry 0 with the old
    leader (answer 200, endIndex 1: it has more) and TRUNCATEs it to entry 0 (answer endIndex
    0). The old leader's own VOTEs (ledgerEndIndex 1) meet REJECT_ALREADY_HAS_LEADER."""
    records = _load("cut-off-leader")
    trunc = [r for r in records if r["code"] == PUSH and r["body"]["type"] == "TRUNCATE"]
    (t,) = trunc
    old, new = t["dst"], t["src"]
    votes_to_old = [r for r in records if r["code"] == VOTE and r["dst"] == old]
    assert votes_to_old
    assert {_answer_to(v)["body"]["voteResult"] for v in votes_to_old} == {
        "REJECT_SMALL_LEDGER_END_INDEX"
    }
    assert {v["body"]["ledgerEndIndex"] for v in votes_to_old} == {0}
    (compare,) = [r for r in records if r["code"] == PUSH and r["body"]["type"] == "COMPARE"]
    assert (compare["src"], compare["dst"], compare["body"]["entry"]["index"]) == (new, old, 0)
    a = _answer_to(compare)["body"]
    assert (a["code"], a["beginIndex"], a["endIndex"]) == (R.SUCCESS, 0, 1)
    a = _answer_to(t)["body"]
    assert (t["body"]["entry"]["index"], a["code"], a["endIndex"]) == (0, R.SUCCESS, 0)
    own = [r for r in records if r["code"] == VOTE and r["src"] == old]
    assert {v["body"]["ledgerEndIndex"] for v in own} == {1}
    assert {_answer_to(v)["body"]["voteResult"] for v in own} == {"REJECT_ALREADY_HAS_LEADER"}


def test_restarted_node_is_compared_then_appended_what_it_missed() -> None:
    """A node killed (SIGKILL) and restarted on its store: the leader's PUSHes to it are
    COMPAREs until one is answered SUCCESS with the node's endIndex equal to the compared
    index, then an APPEND of the next entry, answered with endIndex that entry's index."""
    pushes = [r for r in _load("rejoin") if r["kind"] == "request"]
    assert [p["body"]["type"] for p in pushes][-1] == "APPEND"
    assert {p["body"]["type"] for p in pushes[:-1]} == {"COMPARE"}
    compare, append = pushes[-2], pushes[-1]
    said = _answer_to(compare)["body"]
    assert (said["code"], said["endIndex"]) == (R.SUCCESS, compare["body"]["entry"]["index"])
    index = append["body"]["entry"]["index"]
    assert index == said["endIndex"] + 1
    a = _answer_to(append)["body"]
    assert (a["code"], a["endIndex"], a["index"]) == (R.SUCCESS, index, index)
    (msg,) = decodes(base64.b64decode(append["body"]["entry"]["body"]))
    assert msg.body == b"after the kill"
