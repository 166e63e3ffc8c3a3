"""Record the DLedger frames of a real 4.9.3 group as small JSON-lines fixtures.

Not a RocketMQ class: ``python -m mqlab.conformance.dledger_record OUT_DIR`` runs one scenario
on a :class:`~mqlab.conformance.dledger_group.RealDLedgerGroup` with its relay on, and writes
what the real nodes sent each other (``frame_record``: decoded by mqlab's codec, with the
frame's bytes) to five files, our own observations of a run:

1. ``election.jsonl``: every VOTE request and response up to the first HEART_BEAT (the
   first leader's term won);
2. ``heartbeat.jsonl``: the first leader's first HEART_BEAT requests and their responses;
3. ``first-entry.jsonl``: one message sent to the leader; the PUSHes to one follower up to
   its first COMMIT of index 0 (COMPARE, TRUNCATE, COMMIT), with their answers;
4. ``cut-off-leader.jsonl``: the leader's links to its peers cut and one message sent to it
   (not acknowledged); what the cut-off leader and the new leader then say to each other
   (its VOTEs, the new leader's COMPARE and TRUNCATE), up to the TRUNCATE's answer;
5. ``rejoin.jsonl``: that new leader killed (SIGKILL), one message sent to the next leader,
   the killed node restarted on its store: the PUSHes to it up to the first APPEND (COMPAREs,
   then APPEND of the entry it missed), with their answers.

It prints the send's answers and the files' sizes. The group is stopped at the end.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mqlab.conformance.dledger_capture import frame_record, write_frames
from mqlab.conformance.dledger_group import RealDLedgerGroup
from mqlab.conformance.wire import send_v2, wait_until

__all__ = ["record", "main"]

VOTE, HEART_BEAT, PUSH = 51001, 51002, 51004
TOPIC = "DLedgerTopic"


def _with_answers(records: list[dict], requests: list[dict]) -> list[dict]:
    """``requests`` and the responses to them, in the order the relay read them."""
    keys = {(r["src"], r["dst"], r["opaque"]) for r in requests}
    return [
        r for r in records
        if r in requests or (r["kind"] == "response" and (r["dst"], r["src"], r["opaque"]) in keys)
    ]  # fmt: skip


def record(out: Path, workdir: Path) -> dict[str, object]:
    """Run the scenario in ``workdir``; write the five files to ``out``; what was answered."""
    out.mkdir(parents=True, exist_ok=True)
    facts: dict[str, object] = {}
    with RealDLedgerGroup(workdir, capture=True) as g:
        assert g.capture is not None
        g.wait_registered()
        leader = g.leader()
        assert leader is not None
        facts["first leader"] = leader

        def records() -> list[dict]:
            assert g.capture is not None
            return [frame_record(f) for f in g.capture.frames()]

        # 1.-2. the election and the first heartbeats
        rs = records()
        first_beat = next(r["seq"] for r in rs if r["code"] == HEART_BEAT)
        votes = [r for r in rs if r["code"] == VOTE and r["seq"] < first_beat]
        write_frames(out / "election.jsonl", _with_answers(rs, votes))
        beats = [r for r in rs if r["code"] == HEART_BEAT][:4]
        write_frames(out / "heartbeat.jsonl", _with_answers(rs, beats))

        # 3. one message through the leader
        resp = send_v2(g.leader_addr(), TOPIC, b"one message", group="record_producer")
        facts["send to the leader"] = (resp.code, resp.remark, resp.ext("msgId"))
        follower = sorted(set(g.ids) - {leader})[0]

        def first_commit() -> list[dict]:
            pushes = [r for r in records() if r["code"] == PUSH and r["dst"] == follower]
            for i, p in enumerate(pushes):
                if p["body"]["type"] == "COMMIT" and p["body"]["commitIndex"] == 0:
                    return pushes[: i + 1]
            return []

        wait_until(lambda: bool(first_commit()), 30, "the first COMMIT of index 0")
        pushes = first_commit()
        wait_until(lambda: len(_with_answers(records(), pushes)) == 2 * len(pushes), 30,
                   "the answers to those pushes")  # fmt: skip
        write_frames(out / "first-entry.jsonl", _with_answers(records(), pushes))

        # 4. the leader cut off from its peers, one message sent to it
        start = len(g.capture.frames())
        peers = sorted(set(g.ids) - {leader})
        for p in peers:
            g.capture.block(leader, p)
        resp = send_v2(g.leader_addr(), TOPIC, b"never acknowledged", group="record_producer",
                       timeout=30)  # fmt: skip
        facts["send to the cut-off leader"] = (resp.code, resp.remark)
        new = g.wait_leader(other_than=leader)
        facts["new leader"] = new
        for p in peers:
            g.capture.unblock(leader, p)

        def truncated() -> list[dict]:
            rs = records()[start:]
            ts = [r for r in rs if r["code"] == PUSH and r["body"]["type"] == "TRUNCATE"
                  and (r["src"], r["dst"]) == (new, leader)]  # fmt: skip
            if not ts or len(_with_answers(rs, ts[:1])) < 2:
                return []
            end = next(r["seq"] for r in _with_answers(rs, ts[:1]) if r["kind"] == "response")
            between = [r for r in rs if r["seq"] <= end and r["kind"] == "request"
                       and leader in (r["src"], r["dst"]) and r["code"] != HEART_BEAT]  # fmt: skip
            return _with_answers(rs, between)

        wait_until(lambda: bool(truncated()), 60, "the new leader's TRUNCATE and its answer")
        write_frames(out / "cut-off-leader.jsonl", truncated())

        # 5. the leader killed, one message sent to the next one, the killed node restarted
        g.wait_registered()
        g.kill(new)
        third = g.wait_leader(other_than=new)
        facts["after kill -9 of the leader"] = third
        wait_until(lambda: send_v2(g.leader_addr(), TOPIC, b"after the kill",
                                   group="record_producer").code == 0,
                   60, "a SEND_OK from the new leader", pause_s=0.2)  # fmt: skip
        start = len(g.capture.frames())
        g.restart(new)

        def rejoined() -> list[dict]:
            rs = records()[start:]
            pushes = [r for r in rs if r["code"] == PUSH and (r["src"], r["dst"]) == (third, new)]
            for i, p in enumerate(pushes):
                if p["body"]["type"] == "APPEND":
                    done = _with_answers(rs, pushes[: i + 1])
                    return done if len(done) == 2 * (i + 1) else []
            return []

        wait_until(
            lambda: bool(rejoined()), 60, "the leader's COMPARE and APPEND to the restarted node"
        )
        write_frames(out / "rejoin.jsonl", rejoined())
    for f in sorted(out.glob("*.jsonl")):
        facts[f.name] = f"{len(f.read_text().splitlines())} frames, {f.stat().st_size} bytes"
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mqlab.conformance.dledger_record")
    parser.add_argument("out", type=Path, help="where the .jsonl files go")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mqlab-dledger-record-") as workdir:
        for k, v in record(args.out, Path(workdir)).items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
