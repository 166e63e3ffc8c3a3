"""The entry pusher, one test per sentence of the mechanism (DLedgerEntryPusher, DLedger 0.2.3).

A group of three with the elector switched off (``enableLeaderElector=false``): the tests set
each node's log and role by hand, let the pusher run, and check the pushes in the trace, the
followers' bytes and the committed index. Steps: mechanisms.md "DLedger replication".
"""

from __future__ import annotations

from dledger_harness import build_log, steps

from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.protocol import DLedgerResponseCode as R

D = "DLedgerEntryPusher.EntryDispatcher"
PREFIX = [(1, b"a"), (1, b"b"), (2, b"c")]


def group_with_logs(logs: dict[str, list[tuple[int, bytes]]], leader_term: int) -> DLedgerGroup:
    """n0 leads ``leader_term``; n1 and n2 follow it; each with its log from ``logs``."""
    g = DLedgerGroup(3, seed=0, enable_leader_elector=False)
    for node_id, entries in logs.items():
        build_log(g.server(node_id), entries)
    for node_id in g.ids:
        s = g.server(node_id)
        s.member_state.curr_term = leader_term
        if node_id == "n0":
            s.elector.change_role_to_leader(leader_term)
        else:
            s.elector.change_role_to_follower(leader_term, "n0")
    return g


def pushes(g: DLedgerGroup, peer: str) -> list[tuple[str, str, int]]:
    """The leader's COMPARE / TRUNCATE / APPEND pushes to ``peer``: (step, type, index)."""
    return [
        (step, f["type"], f["index"])
        for step, f in steps(g.trace, D, node="n0", peer=peer)
        if f.get("type") in ("COMPARE", "TRUNCATE", "APPEND") and "event" not in f
    ]


def test_a_new_leader_compares_back_to_where_the_logs_meet_and_truncates_the_rest():
    """COMPARE from the leader's last entry; a follower that is behind answers its end index
    and the leader jumps there; a diverged one is walked back one index at a time, then
    TRUNCATEd at the match; then APPEND. Afterwards every log is the leader's, byte for byte.
    Reference: EntryDispatcher#doCompare, #doTruncate, EntryHandler#handleDoCompare,
    #handleDoTruncate, DLedgerMmapFileStore#truncate."""
    leader_log = PREFIX + [(3, b"d"), (3, b"e")]
    g = group_with_logs(
        {
            "n0": leader_log,
            "n1": PREFIX,  # behind
            "n2": PREFIX + [(2, b"x"), (2, b"y"), (2, b"z")],  # diverged and longer
        },
        leader_term=4,
    )
    g.advance(100)
    assert pushes(g, "n1") == [("3", "COMPARE", 4), ("3", "COMPARE", 2), ("7", "APPEND", 3),
                               ("7", "APPEND", 4)]  # fmt: skip
    assert pushes(g, "n2") == [
        ("3", "COMPARE", 4), ("3", "COMPARE", 3), ("3", "COMPARE", 2), ("6", "TRUNCATE", 2),
        ("7", "APPEND", 3), ("7", "APPEND", 4),
    ]  # fmt: skip
    truncated = steps(g.trace, "DLedgerEntryPusher.EntryHandler", node="n2", type="TRUNCATE")
    assert truncated == [("6", {"type": "TRUNCATE", "index": 2, "code": "SUCCESS",
                                "end_before": 5, "end_after": 2})]  # fmt: skip
    lead = g.server("n0").store
    for node_id in ("n1", "n2"):
        store = g.server(node_id).store
        assert (store.data, store.index) == (lead.data, lead.index)
        assert g.log(node_id) == [(i, t, b) for i, (t, b) in enumerate(leader_log)]


def test_an_append_commits_on_a_quorum_and_completes_the_waiting_client():
    """The leader appends (index 3, its term), waits; the first follower's SUCCESS makes the
    quorum index 3: committedIndex 3, the client's future completes with index, term and
    pos. Reference: DLedgerServer#handleAppend, DLedgerEntryPusher#waitAck, QuorumAckChecker."""
    g = group_with_logs({"n0": PREFIX, "n1": PREFIX, "n2": PREFIX}, leader_term=3)
    g.advance(20)
    future = g.append(b"hello", "n0")
    assert not future.done
    g.advance(2)  # 1 ms there, 1 ms back
    resp = future.value
    assert (resp.code, resp.index, resp.term, resp.pos, resp.leader_id) == (
        R.SUCCESS,
        3,
        3,
        147,
        "n0",
    )
    assert g.server("n0").store.committed_index == 3
    marks = g.server("n0").pusher.peer_water_marks_by_term
    assert marks == {3: {"n0": 3, "n1": 3, "n2": 3}}


def test_followers_learn_the_committed_index_from_the_next_push():
    """An APPEND carries the leader's committedIndex; idle for more than 1000 ms, a COMMIT
    push carries it. Reference: EntryDispatcher#doCommit, EntryHandler#handleDoCommit."""
    g = group_with_logs({"n0": PREFIX, "n1": PREFIX, "n2": PREFIX}, leader_term=3)
    g.advance(20)
    g.append(b"one", "n0")
    g.advance(10)
    assert [g.server(i).store.committed_index for i in g.ids] == [3, 2, 2]
    commits = steps(g.trace, D, node="n0", type="COMMIT")
    g.advance(1100)
    later = steps(g.trace, D, node="n0", type="COMMIT")[len(commits) :]
    assert {f["commit_index"] for _, f in later} == {3}
    assert [g.server(i).store.committed_index for i in g.ids] == [3, 3, 3]


def test_an_entry_of_an_earlier_term_commits_on_a_replica_count():
    """0.2.3 moves committedIndex to the quorum index whatever the entry's term: a new
    leader of term 4 commits index 2 (term 2) once a follower has it, with no entry of term 4
    (Raft §5.4.2 would wait for one). Reference: QuorumAckChecker#doWork,
    DLedgerMmapFileStore#updateCommittedIndex."""
    g = group_with_logs({"n0": PREFIX, "n1": PREFIX[:1], "n2": []}, leader_term=4)
    g.advance(100)
    assert g.server("n0").store.committed_index == 2
    assert g.server("n0").store.ledger_end_term == 2


def test_without_a_quorum_an_append_times_out_after_max_wait_ack_time_ms():
    """Both followers gone: the append waits maxWaitAckTimeMs (2500 ms) and is answered
    WAIT_QUORUM_ACK_TIMEOUT (502); nothing commits. Reference: QuorumAckChecker#doWork."""
    g = group_with_logs({"n0": PREFIX, "n1": PREFIX, "n2": PREFIX}, leader_term=3)
    g.advance(20)
    g.kill("n1")
    g.kill("n2")
    future = g.append(b"lost", "n0")
    g.advance(2499)
    assert not future.done
    g.advance(11)  # the checker looks every 10 ms
    assert (future.value.code, future.value.index) == (R.WAIT_QUORUM_ACK_TIMEOUT, 3)
    assert g.server("n0").store.committed_index == 2


def test_a_lost_push_is_sent_again_after_max_push_time_out_ms():
    """An APPEND whose answer does not come is pushed again once more than maxPushTimeOutMs
    (1000 ms) passed. Reference: EntryDispatcher#doCheckAppendResponse."""
    g = group_with_logs({"n0": PREFIX, "n1": PREFIX, "n2": PREFIX}, leader_term=3)
    g.advance(20)
    g.driver.set_link("n0", "n2", drop_rate=1.0)
    g.append(b"x", "n0")
    g.advance(5)
    g.driver.set_link("n0", "n2", drop_rate=0.0)
    g.advance(1100)
    retries = [f for _, f in steps(g.trace, D, node="n0", peer="n2", event="retry")]
    assert retries == [{"peer": "n2", "event": "retry", "index": 3}]
    assert g.log("n2")[-1] == (3, 3, b"x")
