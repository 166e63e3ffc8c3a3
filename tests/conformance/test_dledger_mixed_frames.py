"""What the mixed group's hand-over reads off the relay, without Java: whether a node follows
a leader in a term (:func:`follows`) and the frames a failure shows (:func:`timeline`), on
the recorded heartbeat round of ``tests/fixtures/dledger/heartbeat.jsonl`` (leader ``n1`` in
term 1; ``n2`` answers its first heartbeat TERM_NOT_READY, its second SUCCESS)."""

from __future__ import annotations

import base64
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
