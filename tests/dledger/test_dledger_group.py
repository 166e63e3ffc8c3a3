"""A DLedger group on the simulation driver: elections, commits, kills and partitions.

Three (and five) nodes with seeded election timeouts (mechanisms.md "DLedger election",
"DLedger replication"); each test names the 0.2.3 behaviour it shows.
"""

from __future__ import annotations

from dledger_harness import steps

from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.member_state import Role
from mqlab.dledger.protocol import DLedgerResponseCode as R

E = "DLedgerLeaderElector"


def elected(g: DLedgerGroup) -> list[tuple[int, str, int]]:
    """(time, node, term) of every changeRoleToLeader (step 6) so far."""
    return [(e.t_ms, e.node, e.fields["term"]) for e in g.trace.select(component=E, step="6")]


def settle(seed: int = 1, n: int = 3) -> DLedgerGroup:
    g = DLedgerGroup(n, seed=seed)
    g.run_until(lambda: g.leader() is not None, 20_000)
    g.advance(20)  # the followers get their first heartbeat
    return g


def test_a_leader_is_elected_after_a_split_first_round():
    """Every node votes for itself in term 0 (all rejected: REJECT_ALREADY_VOTED), waits
    300 + random(700) ms, and the first to ask in term 1 wins: seed 1 elects n2 at 342 ms;
    the others follow on its first heartbeat. Reference: DLedgerLeaderElector#maintainAsCandidate."""
    g = settle(seed=1)
    assert elected(g) == [(342, "n2", 1)]
    round0 = [e.fields["results"] for e in g.trace.select(component=E, step="4") if e.t_ms < 10]
    assert round0 == [{"n0": "ACCEPT", "n1": "REJECT_ALREADY_VOTED", "n2": "REJECT_ALREADY_VOTED"},
                      {"n0": "REJECT_ALREADY_VOTED", "n1": "ACCEPT", "n2": "REJECT_ALREADY_VOTED"},
                      {"n0": "REJECT_ALREADY_VOTED", "n1": "REJECT_ALREADY_VOTED", "n2": "ACCEPT"}]  # fmt: skip
    assert {i: (s["role"], s["term"], s["leader_id"]) for i, s in g.state().items()} == {
        "n0": ("FOLLOWER", 1, "n2"), "n1": ("FOLLOWER", 1, "n2"), "n2": ("LEADER", 1, "n2"),
    }  # fmt: skip


def test_same_seed_same_trace():
    """Two groups with seed 5 produce the same trace, byte for byte (docs/design.md §6.9)."""
    a, b = settle(seed=5), settle(seed=5)
    for g in (a, b):
        g.append(b"x")
        g.advance(3000)
    assert a.trace.to_jsonl() == b.trace.to_jsonl()
    assert elected(settle(seed=6)) != elected(a)


def test_appends_commit_on_a_majority():
    """With one follower down, 2 of 3 is a quorum: appends commit (SUCCESS); with both down,
    none does (WAIT_QUORUM_ACK_TIMEOUT). Reference: QuorumAckChecker#doWork."""
    g = settle()
    leader = g.leader()
    followers = [i for i in g.ids if i != leader]
    g.kill(followers[0])
    futures = [g.append(b"m%d" % i) for i in range(3)]
    g.advance(10)
    assert [(f.value.code, f.value.index) for f in futures] == [(R.SUCCESS, i) for i in range(3)]
    g.kill(followers[1])
    lost = g.append(b"alone")
    g.advance(2600)
    assert (lost.value.code, lost.value.index) == (R.WAIT_QUORUM_ACK_TIMEOUT, 3)
    assert g.server(leader).store.committed_index == 2


def test_leader_killed_a_new_one_within_the_election_timeouts_keeping_every_committed_entry():
    """Kill the leader: a follower's timeout is more than maxHeartBeatLeak * heartBeatInterval
    (6000 ms) after the last heartbeat, which came at most 2010 ms before the kill; seeds 0-7
    elect a new leader 4000-7000 ms after it, and its log holds every acknowledged entry.
    Reference: maintainAsFollower, handleVote's ledger checks."""
    gaps = []
    for seed in range(8):
        g = settle(seed=seed)
        acked = [g.append(b"s%d-%d" % (seed, i)) for i in range(5)]
        g.advance(500)
        assert all(f.value.code == R.SUCCESS for f in acked)
        old = g.leader()
        g.kill(old)
        t0 = g.now
        g.run_until(lambda g=g, old=old: g.leader() not in (None, old), 20_000)
        gaps.append(g.now - t0)
        new_log = g.log(g.leader())
        assert [b for _, _, b in new_log] == [b"s%d-%d" % (seed, i) for i in range(5)]
    assert all(4000 <= gap <= 7000 for gap in gaps), gaps


def test_a_partitioned_leader_cannot_commit_and_truncates_on_heal():
    """The leader alone on its side: its append waits and times out (WAIT_QUORUM_ACK_TIMEOUT);
    the majority elects a leader of a higher term and commits; on heal the old leader steps
    down (its heartbeat gets EXPIRED_TERM, or it hears the higher term), the new leader
    COMPAREs, TRUNCATEs its uncommitted entry, and every log is the same.
    Reference: sendHeartbeats, EntryDispatcher#doCompare, DLedgerMmapFileStore#truncate."""
    g = settle(seed=1)
    first = [g.append(b"c%d" % i) for i in range(2)]
    g.advance(100)
    assert [f.value.code for f in first] == [R.SUCCESS, R.SUCCESS]
    old = g.leader()
    g.partition([old])
    stranded = g.append(b"stranded", old)
    g.run_until(lambda: g.leader() not in (None, old), 20_000)
    new = g.leader()
    assert stranded.value.code == R.WAIT_QUORUM_ACK_TIMEOUT
    assert g.server(old).store.committed_index == 1
    assert g.log(old)[-1][2] == b"stranded"
    later = [g.append(b"n%d" % i, new) for i in range(2)]
    g.advance(100)
    assert [f.value.code for f in later] == [R.SUCCESS, R.SUCCESS]
    g.heal()
    g.advance(10_000)
    assert g.server(old).member_state.role == Role.FOLLOWER
    truncates = steps(g.trace, "DLedgerEntryPusher.EntryHandler", node=old, type="TRUNCATE")
    assert [(f["index"], f["end_before"], f["code"]) for _, f in truncates] == [(1, 2, "SUCCESS")]
    logs = {i: g.log(i) for i in g.ids}
    assert [b for _, _, b in logs[new]] == [b"c0", b"c1", b"n0", b"n1"]
    assert (
        logs[old] == logs[new] and logs[new] == logs[[i for i in g.ids if i not in (old, new)][0]]
    )


def test_five_nodes_a_minority_with_the_leader_cannot_commit():
    """Five nodes, the leader and one follower cut off: the other three elect a leader and
    commit (3 of 5); the two commit nothing; after the heal all five logs agree."""
    g = settle(seed=3, n=5)
    old = g.leader()
    buddy = next(i for i in g.ids if i != old)
    g.partition([old, buddy])
    stranded = g.append(b"minority", old)
    g.run_until(lambda: g.leader() not in (None, old), 20_000)
    new = g.leader()
    assert new not in (old, buddy)
    assert stranded.value.code == R.WAIT_QUORUM_ACK_TIMEOUT
    ok = g.append(b"majority", new)
    g.advance(50)
    assert ok.value.code == R.SUCCESS
    g.heal()
    g.advance(10_000)
    logs = [g.log(i) for i in g.ids]
    assert all(log == logs[0] for log in logs)
    assert [b for _, _, b in logs[0]] == [b"majority"]


def test_a_killed_follower_restarts_with_its_term_and_catches_up():
    """A restarted node reads term and vote from its currterm file, starts as a candidate,
    is rejected or follows the leader, and receives what it missed."""
    g = settle(seed=2)
    leader = g.leader()
    victim = next(i for i in g.ids if i != leader)
    term = g.server(victim).member_state.curr_term
    g.kill(victim)
    for i in range(3):
        g.append(b"while-away-%d" % i)
    g.advance(100)
    g.restart(victim)
    assert g.server(victim).member_state.curr_term == term
    g.advance(10_000)
    assert g.leader() == leader
    assert g.log(victim) == g.log(leader)
    assert g.server(victim).store.committed_index == 2


def test_dledger_frames_carry_dledger_code_names():
    """A frame between DLedger nodes is named by DLedgerRequestCode/DLedgerResponseCode
    (0.2.3), in the trace and in the label the explorer offers as a choice: VOTE (51001)
    and SUCCESS (200), not "51001" and RocketMQ's TRANSACTION_SHOULD_COMMIT (also 200)."""
    from mqlab.trace.events import TraceLevel

    g = DLedgerGroup(3, seed=5, trace_level=TraceLevel.FRAMES)
    g.advance(0)
    assert [t.label for t in g.driver.scheduler.pending() if t.name == "frame"] == [
        f"frame {b} VOTE {a}->{b}" for a, b in
        (("n0", "n1"), ("n0", "n2"), ("n1", "n0"), ("n1", "n2"), ("n2", "n0"), ("n2", "n1"))
    ]  # fmt: skip
    g.advance(1)
    frames = [(e.node, e.step, e.fields["code"], e.fields["response"])
              for e in g.trace.select(component="RemotingCommand")]  # fmt: skip
    assert frames[6:8] == [("n1", "recv", "VOTE", False), ("n1", "send", "SUCCESS", True)]
    assert {t.label.split()[2] for t in g.driver.scheduler.pending() if t.name == "frame"} == {
        "SUCCESS"
    }


def test_a_candidate_of_a_larger_term_with_a_shorter_log_stays_out():
    """n0, cut off while n2 (term 1) commits two entries with n1, has moved on to term 2 (as a
    candidate does after a round that ended WAIT_TO_VOTE_NEXT; set here). Healed, it stays a
    candidate without a leader: its VOTEs are refused on its log before their term is looked
    at (REJECT_EXPIRED_LEDGER_TERM), and its EXPIRED_TERM answers to n2's heartbeats do not
    count while n1 makes the quorum. A LEADERSHIP_TRANSFER to it is refused 409 with no
    leader: what the mixed group saw in CI (``mqlab.conformance.dledger_mixed._wait_formed``).
    Reference: handleVote, sendHeartbeats, DLedgerServer#handleLeadershipTransfer."""
    g = settle(seed=1)
    g.partition(["n0"])
    acks = [g.append(b"c%d" % i) for i in range(2)]
    g.advance(100)
    assert [a.value.code for a in acks] == [R.SUCCESS, R.SUCCESS]
    elector = g.server("n0").elector
    elector.change_role_to_candidate(2)
    elector.need_increase_term_immediately = True
    g.heal()
    healed = g.now
    g.advance(30_000)
    assert {i: (s["role"], s["term"], s["leader_id"], s["committed_index"])
            for i, s in g.state().items()} == {
        "n0": ("CANDIDATE", 2, None, -1), "n1": ("FOLLOWER", 1, "n2", 1),
        "n2": ("LEADER", 1, "n2", 1),
    }  # fmt: skip
    rounds = [e.fields for e in g.trace.select(component=E, step="4", node="n0") if e.t_ms > healed]
    assert len(rounds) == 18
    assert {(r["term"], tuple(sorted(r["results"].items()))) for r in rounds} == {
        (2, (("n0", "ACCEPT"), ("n1", "REJECT_EXPIRED_LEDGER_TERM"),
             ("n2", "REJECT_EXPIRED_LEDGER_TERM"))),
    }  # fmt: skip
    answer = g.server("n2").transfer_leadership("n0")
    g.run_until(lambda: answer.done, 10_000)
    assert (answer.value.code, answer.value.leader_id, answer.value.term) == (
        R.INCONSISTENT_LEADER, None, 1,
    )  # fmt: skip
    assert g.leader() == "n2"
