"""What the mixed group's hand-over reads off the relay, without Java: whether a node follows
a leader in a term (:func:`follows`) and the frames a failure shows (:func:`timeline`), on
the recorded heartbeat round of ``tests/fixtures/dledger/heartbeat.jsonl`` (leader ``n1`` in
term 1; ``n2`` answers its first heartbeat TERM_NOT_READY, its second SUCCESS)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from mqlab.conformance.dledger_capture import CapturedFrame, read_frames
from mqlab.conformance.dledger_mixed import follows, timeline

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dledger"


def _frames(name: str) -> list[CapturedFrame]:
    return [
        CapturedFrame(r["seq"], r["t_ms"], r["src"], r["dst"], base64.b64decode(r["frame"]))
        for r in read_frames(FIXTURES / name)
    ]


def test_a_node_follows_once_its_last_answer_to_the_leaders_heartbeat_of_the_term_is_success():
    frames = _frames("heartbeat.jsonl")
    assert not follows(frames[:1], "n0", "n1", 1)  # asked, not yet answered
    assert follows(frames[:3], "n0", "n1", 1)
    assert not follows(frames[:4], "n2", "n1", 1)  # 416 TERM_NOT_READY
    assert follows(frames, "n2", "n1", 1)
    assert not follows(frames, "n2", "n1", 2)  # no heartbeat of that term
    assert not follows(frames, "n2", "n0", 1)  # n0 sent none


def test_a_failed_hand_over_shows_the_transferees_last_frames():
    frames = _frames("heartbeat.jsonl")
    assert timeline(frames, "n2").splitlines() == [
        "   13944 ms n1->n2 51002: term 1 leader n1",
        "   14731 ms n2->n1 answer to 51002: code 416 term -1 leader None",
        "   15637 ms n1->n2 51002: term 1 leader n1",
        "   15755 ms n2->n1 answer to 51002: code 200 term -1 leader None",
    ]
    assert (
        timeline(frames, "n0", last=1)
        == "   15875 ms n0->n1 answer to 51002: code 200 term -1 leader None"
    )


def test_a_vote_answer_shows_its_result():
    assert timeline(_frames("election.jsonl"), "n0", last=3).splitlines() == [
        "   13415 ms n0->n1 answer to 51001: code 200 term 0 leader n1 REJECT_TERM_NOT_READY",
        "   13525 ms n1->n0 51001: term 1 leader n1",
        "   13534 ms n0->n1 answer to 51001: code 200 term 1 leader n1 ACCEPT",
    ]


def _rec(src: str, dst: str, kind: str, opaque: int, code: int, body: dict) -> dict:
    return {"src": src, "dst": dst, "kind": kind, "opaque": opaque, "code": code,
            "body": body, "header": f'{{"code":{code},"opaque":{opaque}}}'}  # fmt: skip


def test_an_answer_pairs_with_the_last_request_of_its_opaque_before_it():
    """A restarted JVM counts its opaques from the start again (the mixed group's n0 after
    step 5): n2's answer to n0's VOTE 5 is a VOTE answer, and its answer to the restarted
    n0's PUSH 5 a COMMIT answer, not the other way round (CI's dry run AW once paired the
    VOTE answer with the later PUSH and called it unlike any real node's)."""
    from mqlab.conformance.dledger_mixed import MQLAB_ID, frame_problems
    from mqlab.dledger.protocol import DLedgerRequestCode as Q

    vote, push = int(Q.VOTE), int(Q.PUSH)
    records = [
        _rec("n0", MQLAB_ID, "request", 5, vote, {"term": 1}),
        _rec(MQLAB_ID, "n0", "response", 5, 200, {"voteResult": "ACCEPT"}),
        _rec("n0", MQLAB_ID, "request", 5, push, {"type": "COMMIT"}),
        _rec(MQLAB_ID, "n0", "response", 5, 200, {"index": 3}),
    ]
    ours, _, _ = frame_problems(records)
    answers = {(s[1], s[2], s[4]) for s in ours if s[0] == "response"}
    assert answers == {(vote, None, ("voteResult",)), (push, "COMMIT", ("index",))}


def test_a_heartbeat_answer_counts_only_for_the_heartbeat_of_its_opaque():
    """``follows``: an answer whose opaque a later request of the leader took over (a
    restarted leader) is not the heartbeat's."""
    from mqlab.dledger.protocol import DLedgerRequestCode as Q

    def frame(src: str, dst: str, kind: str, opaque: int, code: int, body: dict) -> CapturedFrame:
        from mqlab.remoting.command import RemotingCommand

        if kind == "request":
            cmd = RemotingCommand.create_request(code, body=json.dumps(body).encode())
        else:
            cmd = RemotingCommand.create_response(code, body=json.dumps(body).encode())
        cmd.opaque = opaque
        return CapturedFrame(0, 0, src, dst, cmd.encode())

    beat = frame("n1", "n0", "request", 7, int(Q.HEART_BEAT), {"term": 2})
    vote = frame("n1", "n0", "request", 7, int(Q.VOTE), {"term": 2})
    ok = frame("n0", "n1", "response", 7, 200, {"code": 200})
    assert follows([beat, ok], "n0", "n1", 2)
    assert not follows([beat, vote, ok], "n0", "n1", 2)


def test_a_transferee_is_caught_up_once_it_acknowledged_the_leaders_highest_append():
    """0.2.3 lets a transferee behind the leader stand at once and lose (REJECT_SMALL_LEDGER_
    END_INDEX from both real nodes: the mixed group's step 2 once shut n2 out in term 3), so
    the hand-over waits for :func:`caught_up` first."""
    from mqlab.conformance.dledger_mixed import MQLAB_ID, caught_up
    from mqlab.dledger.protocol import DLedgerRequestCode as Q

    push = int(Q.PUSH)

    def append(dst: str, opaque: int, index: int, term: int = 2) -> dict:
        return _rec("n0", dst, "request", opaque, push,
                    {"type": "APPEND", "term": term, "entry": {"index": index}})  # fmt: skip

    def ok(src: str, opaque: int, code: int = 200) -> dict:
        return _rec(src, "n0", "response", opaque, 200, {"code": code})

    assert caught_up([], "n0", MQLAB_ID, 2)  # nothing appended in the term
    records = [append("n1", 1, 4), ok("n1", 1), append(MQLAB_ID, 1, 3), ok(MQLAB_ID, 1)]
    assert not caught_up(records, "n0", MQLAB_ID, 2)  # n1 holds 4, n2 only 3
    assert caught_up(records, "n0", "n1", 2)
    records += [append(MQLAB_ID, 2, 4)]
    assert not caught_up(records, "n0", MQLAB_ID, 2)  # asked, not yet answered
    assert not caught_up([*records, ok(MQLAB_ID, 2, code=1001)], "n0", MQLAB_ID, 2)
    assert caught_up([*records, ok(MQLAB_ID, 2)], "n0", MQLAB_ID, 2)
    # an APPEND of an older term is not the leader's of this term
    assert caught_up([append("n1", 9, 7, term=1), *records, ok(MQLAB_ID, 2)], "n0", MQLAB_ID, 2)
