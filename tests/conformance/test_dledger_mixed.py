"""A mixed DLedger group: one mqlab node and two real 4.9.3 DLedger nodes (issue 26, 3).

``mqlab.conformance.dledger_mixed`` runs the group once for the module (a name server and
two broker JVMs; the mqlab node ``n2`` in this process): a real leader, a transfer to the
mqlab node, a transfer from it to ``n0``, ``n0`` killed and restarted. The tests read what
it saw: who led after each step, what was acknowledged, and each node's stored log (the
real nodes' data and index files as 0.2.3 writes them, against mqlab's bytes). The group is
run by ``mqlab.conformance.cli.dledger``, as ``python -m mqlab conformance`` runs it after
its scenarios, so the lines checked here are the ones the conformance run prints.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab.conformance.cli import dledger
from mqlab.conformance.dledger_capture import read_frames
from mqlab.conformance.dledger_mixed import (
    CLIENT_REQUESTS,
    CUT_OFF_BODY,
    MESSAGES,
    MQLAB_ID,
    MixedResult,
    client_problems,
    frame_problems,
    summary_line,
)
from mqlab.conformance.engine import Run
from mqlab.dledger.dledger_server import GET_NPE, NO_BODY_NPE, PULL_NPE
from mqlab.dledger.protocol import DLedgerRequestCode as Q
from mqlab.dledger.protocol import DLedgerResponseCode

pytestmark = pytest.mark.conformance

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dledger"


@pytest.fixture(scope="module")
def run_lines(java_runner: Path) -> tuple[Run, list[str], MixedResult | None]:
    run, lines = Run(), []
    mixed = dledger(run, out=lines.append, rows=False)  # the rows: test_dledger_rows.py
    return run, lines, mixed


@pytest.fixture(scope="module")
def mixed(run_lines: tuple[Run, list[str], MixedResult | None]) -> Iterator[MixedResult]:
    run, lines, result = run_lines
    if result is None:
        pytest.fail(f"{run.dledger_problems}; lines: {lines}")
    yield result


def test_the_mqlab_node_follows_leads_and_hands_over(mixed: MixedResult) -> None:
    """Either side wins the first election; then a real leader hands over to n2 (mqlab), n2
    hands over to n0, and after n0's kill n1 or n2 leads; n2 leads (n1 hands over to it if
    n1 won), and once it is cut off n0 or n1 leads: every step a leader change, each step's
    sends SEND_OK."""
    leaders = mixed.leaders
    if leaders[0] == MQLAB_ID:  # mqlab won the first election: it hands over to n0 first
        assert leaders[:4] == [MQLAB_ID, "n0", MQLAB_ID, "n0"]
    else:
        assert leaders[0] in ("n0", "n1")
        assert leaders[1:3] == [MQLAB_ID, "n0"]
    after_kill = 4 if leaders[0] == MQLAB_ID else 3
    assert leaders[after_kill] in ("n1", MQLAB_ID)
    handed = leaders[after_kill] == "n1"  # step 6: n1 hands over to n2 first
    assert leaders[after_kill + 1 :] == ([MQLAB_ID] if handed else []) + [leaders[-1]]
    assert leaders[-1] in ("n0", "n1")
    assert mixed.leader_changes == len(leaders) - 1
    assert len(mixed.acked) == len(leaders) * MESSAGES
    assert CUT_OFF_BODY not in mixed.acked


def test_the_mqlab_leader_cut_off_steps_down_and_a_real_leader_truncates_it(
    mixed: MixedResult,
) -> None:
    """Step 6: with n2 (mqlab) leading and cut off silently from both real nodes, a send to
    its broker is appended and answered SYSTEM_ERROR "broker busy" once maxWaitAckTimeMs
    (2500) has passed without a quorum; n0 and n1 elect one of them in a higher term, and n2
    has stepped down to CANDIDATE. At the heal the real leader TRUNCATEs n2's log back to
    its committed end, which n2 answers SUCCESS with that endIndex, and the appended entry
    is gone: every node's committed entries are the same bytes (the test above)."""
    cut = mixed.cut_off
    assert cut["answer"] == (1, "[PC_SYNCHRONIZED]broker busy, start flow control for a while")
    # the send's entry, one past what was committed
    assert cut["end_before_heal"] == cut["committed_before_heal"] + 1
    assert cut["role_before_heal"] == "CANDIDATE" and cut["term_before_heal"] == cut["term"]
    index, code, end = cut["truncate"]
    assert (index, code, end) == (cut["committed_before_heal"], DLedgerResponseCode.SUCCESS,
                                  cut["committed_before_heal"])  # fmt: skip
    assert mixed.leader_terms[-1] > cut["term"]


def test_the_mqlab_node_votes_for_a_real_candidate_and_wins_real_votes(mixed: MixedResult) -> None:
    """Each time n0 takes the leadership from n2 by a transfer, n2 ACCEPTs n0's VOTE of that
    term; each time n2 takes it, its round of that term has its own ACCEPT and a real node's.
    (The last change is step 6's, where n2 is cut off and votes for nobody.)"""
    steps = list(zip(mixed.leaders, mixed.leader_terms, strict=True))
    for (before, _), (leader, term) in itertools.pairwise(steps[:-1]):
        if (before, leader) == (MQLAB_ID, "n0"):
            assert (term, "n0", "ACCEPT") in mixed.votes_given
        if leader == MQLAB_ID:
            won = [r for t, r in mixed.vote_rounds if t == term]
            assert any(r.get(MQLAB_ID) == "ACCEPT" and "ACCEPT" in (r.get("n0"), r.get("n1"))
                       for r in won), (term, mixed.vote_rounds)  # fmt: skip
    assert [t for t in mixed.leader_terms] == sorted(set(mixed.leader_terms))


def test_every_frame_the_mqlab_node_sent_is_shaped_as_a_real_nodes(mixed: MixedResult) -> None:
    """Through the relay: each frame n2 sent (requests and answers of VOTE, HEART_BEAT, PUSH
    of each type and LEADERSHIP_TRANSFER) has the header text (opaque aside), body keys and
    entry keys of a frame a real node sent in the same role, in this run or in the frames
    recorded between three real nodes (tests/fixtures/dledger: a TRUNCATE, which only a
    leader facing an empty follower sends)."""
    recorded = [r for f in sorted(FIXTURES.glob("*.jsonl")) for r in read_frames(f)]
    ours, problems, unmatched = frame_problems(mixed.frames, recorded)
    assert (problems, unmatched) == ([], set())
    kinds = {(kind, code, type_) for kind, code, type_, *_ in ours}
    assert {
        ("request", Q.VOTE, None), ("response", Q.VOTE, None),
        ("request", Q.HEART_BEAT, None), ("response", Q.HEART_BEAT, None),
        ("request", Q.PUSH, "COMPARE"), ("request", Q.PUSH, "APPEND"),
        ("request", Q.PUSH, "COMMIT"), ("response", Q.PUSH, "APPEND"),
        ("response", Q.PUSH, "COMMIT"), ("response", Q.PUSH, "COMPARE"),
        ("request", Q.LEADERSHIP_TRANSFER, None), ("response", Q.LEADERSHIP_TRANSFER, None),
    } <= kinds, sorted(kinds, key=repr)  # fmt: skip


def test_a_dledger_client_gets_the_same_answers_from_the_mqlab_node_as_from_real_ones(
    mixed: MixedResult,
) -> None:
    """METADATA, GET and PULL as a DLedger client sends them, to every node while n2 (mqlab)
    led and again while n0 (real) led: each answer equals every other of its role (the
    leader's across the two moments, the followers' within each), ids written as roles."""
    assert set(mixed.client) == {MQLAB_ID, "n0"}
    assert client_problems(mixed.client) == []
    for leader, answers in mixed.client.items():
        assert [(a.node, a.request) for a in answers] == [
            (n, label) for n in ("n0", "n1", MQLAB_ID) for label, _, _ in CLIENT_REQUESTS
        ]
        assert {a.role for a in answers if a.node == leader} == {"leader"}
    as_leader = {a.request: a for a in mixed.client[MQLAB_ID] if a.node == MQLAB_ID}
    assert as_leader["METADATA"].body == {
        "code": 200, "group": "RaftNode00", "leaderId": "<leader>", "peers": ["n0", "n1", "n2"],
        "term": -1,
    }  # fmt: skip
    for label, index in (("GET 0", 0), ("GET 1", 1)):
        got = as_leader[label].body
        assert (got["code"], got["group"], got["term"]) == (200, "RaftNode00", -1)
        assert [(e["index"], e["magic"], e["channel"]) for e in got["entries"]] == [(index, 1, 0)]
    assert as_leader["GET past the log"].body == {
        "code": 410, "entries": [], "group": "RaftNode00", "leaderId": "<leader>",
        "remoteId": "<self>", "term": -1,
    }  # fmt: skip
    without = as_leader["GET without beginIndex"]
    assert (without.code, without.remark, without.body) == (1, GET_NPE, None)
    assert (as_leader["PULL"].code, as_leader["PULL"].remark) == (1, PULL_NPE)
    no_body = as_leader["METADATA without a body"]
    assert (no_body.code, no_body.remark, no_body.body) == (1, NO_BODY_NPE, None)
    short = as_leader["APPEND 13 bytes"]
    assert (short.code, short.remark) == (1, "java.lang.IllegalArgumentException: newPosition "
            "> limit: (76 > 61), java.base/java.nio.Buffer.createPositionException(Buffer.java:341)")  # fmt: skip
    as_follower = {a.request: a for a in mixed.client["n0"] if a.node == MQLAB_ID}
    assert as_follower["GET 0"].body == {
        "code": 404, "entries": [], "group": "RaftNode00", "leaderId": "<leader>",
        "remoteId": "<self>", "term": -1,
    }  # fmt: skip
    assert as_follower["GET without beginIndex"].body["code"] == 404  # NOT_LEADER comes first
    append = as_follower["APPEND 13 bytes"]
    assert (append.code, append.body["code"], append.body["leaderId"]) == (200, 404, "<leader>")


def test_every_node_stores_the_committed_entries_byte_for_byte(mixed: MixedResult) -> None:
    """The real nodes' data and index files equal the mqlab node's bytes over the committed
    range, and their checkpoint files its checkpoint (the same committed index); the entries are indexes 0..E-1 with terms that never go down, the same on every
    node, and at least every acknowledged message is one of them."""
    assert mixed.problems == []
    assert mixed.entries >= len(mixed.acked)
    terms = mixed.terms[MQLAB_ID]
    assert [i for i, _ in terms] == list(range(mixed.entries))
    assert [t for _, t in terms] == sorted(t for _, t in terms)
    assert mixed.terms == {"n0": terms, "n1": terms, MQLAB_ID: terms}
    # a new term for each leader, each with its sends
    assert len({t for _, t in terms}) >= len(mixed.leaders)


def test_the_conformance_run_records_the_summary_line(run_lines, mixed: MixedResult) -> None:
    """The ``dledger:`` line ``python -m mqlab conformance`` prints last: E is every entry
    of the steps (one per SEND_OK, and any refused send that was appended all the same), L
    the changes (4 to 6: one more when mqlab won the first election, one more when n1 hands
    over to it before the partition)."""
    run, lines, _ = run_lines
    line = (f"dledger: mixed group, {mixed.entries} entries committed, identical on every "
            f"node, {len(mixed.leaders) - 1} leader changes")  # fmt: skip
    assert summary_line(mixed) == run.dledger_line == line
    assert run.dledger_problems == []
    assert lines[-1].startswith("dledger: checked in ")
