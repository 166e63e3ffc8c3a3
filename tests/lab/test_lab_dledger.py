"""A Lab with a DLedger group (``Lab(dledger=3)``): the election's master, sends acknowledged
by a majority, and the faults (kill, power cut, partition, heal, slow link), with the exact
terms, indexes, offsets and ids seed 5 gives (mechanisms.md "DLedger in the workbench")."""

from __future__ import annotations

import pytest

from mqlab.common.message_decoder import decode_message_id
from mqlab.lab.lab import Lab

BUSY = "[PC_SYNCHRONIZED]broker busy, start flow control for a while"
N0, N1, N2 = "127.0.0.1:10911", "127.0.0.1:11911", "127.0.0.1:12911"
COLS = ["running", "role", "term", "vote_for", "ledger_end_index", "ledger_end_term",
        "committed_index", "broker_id"]  # fmt: skip


def nodes(lab: Lab) -> dict[str, list]:
    df = lab.dledger_nodes()[COLS]
    return {
        n: [None if v != v else v for v in row]
        for n, row in zip(df.index, df.values.tolist(), strict=True)
    }


def route(lab: Lab) -> dict[int, str]:
    return dict(lab.namesrv.route_info_manager.broker_addr_table["broker-a"].broker_addrs)


def stored_at(result) -> tuple[str, int]:
    """Where a SEND_OK's message lives: the storing broker's address and the offset."""
    addr, offset = decode_message_id(result.offset_msg_id)
    return addr, offset


@pytest.fixture
def lab():
    lab = Lab(seed=5, dledger=3)
    yield lab
    lab.close()


def test_seed_5_elects_n2_whose_broker_registers_as_master(lab: Lab) -> None:
    assert lab.now == 653
    assert lab.dledger_leader() == "broker-a-n2"
    s = lab.dledger_server("n2")
    assert (s.member_state.curr_term, s.member_state.curr_vote_for) == (1, "n2")
    # the followers' brokers registered as SLAVEs with brokerId selfId + 1 while candidates
    assert route(lab) == {0: N2, 1: N0, 2: N1}
    assert lab.master_in_route() == "broker-a-n2"
    assert lab.broker("broker-a").name == "broker-a-n2"  # brokerId 0 of broker-a
    assert lab.broker("broker-a-n2").message_store_config.broker_role.value == "SYNC_MASTER"
    assert lab.dledger_server("broker-a-n0") is lab.dledger_server("dledger-a-n0")


def test_send_ok_comes_once_a_majority_holds_the_entry_and_consumers_consume(lab: Lab) -> None:
    fut = lab.send("TopicTest", "m0", run=False)
    seen: list[tuple] = []  # (n0, n1, n2 log end), n2's committed index: each change
    while not fut.done:
        lab.step()
        s = lab.dledger_nodes()
        now = (tuple(s["ledger_end_index"]), s["committed_index"].iloc[2])
        if not seen or seen[-1] != now:
            seen.append(now)
    assert lab.now == 665
    # the leader held entry 0 alone; both followers took it (COMPARE, TRUNCATE at t=663);
    # the quorum moved the committed index to 0 (t=664); then SEND_OK (t=665)
    assert seen == [((-1, -1, -1), -1), ((-1, -1, 0), -1), ((0, -1, 0), -1),
                    ((0, 0, 0), -1), ((0, 0, 0), 0)]  # fmt: skip
    assert lab.dledger_server("n2").store.committed_index == 0
    assert fut.result.send_status.name == "SEND_OK"
    assert stored_at(fut.result) == (N2, 0x30)
    results = [lab.send("TopicTest", f"m{i}").result for i in (1, 2)]
    assert [(r.message_queue.queue_id, r.queue_offset) for r in results] == [(3, 0), (2, 1)]
    assert [stored_at(r)[1] for r in results] == [0x106, 0x1DC]
    assert nodes(lab)["broker-a-n2"][4:7] == [2, 1, 2]
    # the leader's log is its broker's commit log: entry i holds the message at pos + 48;
    # n0 holds entry 2 but learns it is committed only with the next COMMIT push
    leader, follower = lab.commit_log("n2"), lab.commit_log("broker-a-n0")
    assert leader[["index", "term", "committed", "commit_log_offset", "queue_id",
                   "queue_offset"]].values.tolist() == [
        [0, 1, True, 0x30, 2, 0], [1, 1, True, 0x106, 3, 0], [2, 1, True, 0x1DC, 2, 1],
    ]  # fmt: skip
    assert leader["msg_id"].tolist() == [fut.result.offset_msg_id] + [
        r.offset_msg_id for r in results
    ]
    assert follower["committed"].tolist() == [True, True, False]
    lab.advance(1_500)  # the followers learn the commit by the next COMMIT push
    assert [row[6] for row in nodes(lab).values()] == [2, 2, 2]
    lab.push_consumer("CG", "TopicTest")
    lab.advance(3_000)
    assert sorted(lab.deliveries()["msg_id"]) == sorted(
        [fut.result.msg_id] + [r.msg_id for r in results]
    )


def test_a_batch_is_an_entry_a_message_acknowledged_with_the_last(lab: Lab) -> None:
    """``DefaultMQProducer#send(Collection)`` to the DLedger master: one SEND_BATCH_MESSAGE,
    three entries of n2's log (``DLedgerCommitLog#asyncPutMessages``), SEND_OK once the
    last is committed, each message at its entry's pos + 48, consumed at queue offsets
    0..2 of one queue."""
    from mqlab.common.message import Message

    p = lab.producer("BPG")
    fut = p.send_batch([Message("TopicTest", f"b{i}".encode()) for i in range(3)])
    while not fut.done:
        lab.step()
    r = fut.result
    assert (r.send_status.name, lab.now, r.message_queue.queue_id, r.queue_offset) == (
        "SEND_OK", 667, 1, 0)  # fmt: skip
    offsets = [decode_message_id(i) for i in r.offset_msg_id.split(",")]
    assert offsets == [(N2, 0x30), (N2, 0xF9), (N2, 0x1C2)]
    log = lab.commit_log("n2")
    assert log[["index", "committed", "commit_log_offset", "queue_id", "queue_offset"]
               ].values.tolist() == [
        [0, True, 0x30, 1, 0], [1, True, 0xF9, 1, 1], [2, True, 0x1C2, 1, 2],
    ]  # fmt: skip
    lab.push_consumer("CG", "TopicTest")
    lab.advance(3_000)
    d = lab.deliveries()
    assert list(zip(d["queue_id"], d["queue_offset"], d["msg_id"], strict=True)) == [
        (1, i, m) for i, m in enumerate(r.msg_id.split(","))
    ]


def test_a_full_data_file_ends_in_a_blank_and_the_log_goes_on_in_the_next() -> None:
    """1 KiB data files (the brokers' ``mappedFileSizeCommitLog``, which 4.9.3's
    ``DLedgerCommitLog`` makes its node's ``mappedFileSizeForEntryData``):
    four 214-byte entries fill 856 bytes, the fifth does not fit in the 168 left, so the rest
    is a blank and it lands at 1024 (its message at 0x430) on every node; every node's reput
    steps over the blank, so all eight messages are consumed. Before, the fifth send failed
    (DISK_ERROR: "broker busy") and so did every one after it."""
    lab = Lab(seed=5, dledger=3, store={"mapped_file_size_commit_log": 1024})
    try:
        results = [lab.send("TopicTest", f"m{i}").result for i in range(8)]
        assert [stored_at(r)[1] for r in results] == [
            0x30, 0x106, 0x1DC, 0x2B2, 0x430, 0x506, 0x5DC, 0x6B2]  # fmt: skip
        for node in ("n0", "n1", "n2"):
            st = lab.dledger_server(node).store
            assert (len(st.data), bytes(st.data[856:864])) == (
                1880,
                b"\xff" * 4 + (168).to_bytes(4, "big"),
            )
        lab.push_consumer("CG", "TopicTest")
        lab.advance(5_000)
        assert sorted(lab.deliveries()["msg_id"]) == sorted(r.msg_id for r in results)
        for node in ("n0", "n1", "n2"):
            store = lab.broker(f"broker-a-{node}").message_store
            assert [store.get_max_offset_in_queue("TopicTest", q) for q in range(4)] == [2, 1, 3, 2]
    finally:
        lab.close()


def test_the_brokers_preferred_leader_id_reaches_the_nodes() -> None:
    """``preferredLeaderId`` is a broker key that 4.9.3's ``DLedgerCommitLog`` hands its node:
    seed 5 elects n2 at 653, whose ``checkPreferredLeader`` then hands the lead to n0 (term 2
    at 1,102); n0's broker is brokerId 0 at 1,103, n1 and n2 at 2 and 3."""
    lab = Lab(seed=5, dledger=3, store={"preferred_leader_id": "n0"})
    try:
        assert (lab.now, lab.dledger_leader()) == (653, "broker-a-n2")
        assert lab.run_until_elected() == {
            "leader": "broker-a-n0", "self_id": "n0", "term": 2, "t_ms": 1102,
        }  # fmt: skip
        assert (lab.run_until_master(), lab.now) == ("broker-a-n0", 1103)
        assert route(lab) == {0: N0, 2: N1, 3: N2}
    finally:
        lab.close()


def test_leader_killed_a_follower_is_elected_master_and_nothing_acknowledged_is_lost(
    lab: Lab,
) -> None:
    acked = [lab.send("TopicTest", f"m{i}").result for i in range(3)]
    lab.kill("broker-a-n2")
    assert lab.run_until_elected() == {
        "leader": "broker-a-n1", "self_id": "n1", "term": 2, "t_ms": 7132,
    }  # fmt: skip
    assert lab.run_until_master() == "broker-a-n1" and lab.now == 7233
    assert route(lab)[0] == N1
    st = nodes(lab)
    assert st["broker-a-n1"] == [True, "LEADER", 2, "n1", 2, 1, 2, 0]
    assert st["broker-a-n2"][:2] == [False, "LEADER"]  # dead in term 1, as it was
    # the producer's route still names n2 until its 30 s poll: its sends fail at once
    fut = lab.send("TopicTest", "too early")
    assert fut.result is None and "Send [3] times, still failed" in str(fut.error)
    while lab.now < 31_000:
        lab.advance(1_000)
    nxt = lab.send("TopicTest", "after the kill").result
    assert nxt.send_status.name == "SEND_OK" and lab.now == 31_238
    assert stored_at(nxt) == (N1, 0x2B2)  # entry 3 on n1's log, after the three acknowledged
    assert (nxt.message_queue.queue_id, nxt.queue_offset) == (2, 2)
    lab.push_consumer("CG", "TopicTest")
    lab.advance(3_000)
    d = lab.deliveries()
    assert sorted(d["msg_id"]) == sorted(r.msg_id for r in [*acked, nxt])
    assert sorted(zip(d["queue_id"], d["queue_offset"], strict=True)) == [
        (2, 0),
        (2, 1),
        (2, 2),
        (3, 0),
    ]


def test_an_isolated_leader_cannot_commit_the_majority_elects_and_heal_truncates(
    lab: Lab,
) -> None:
    for i in range(3):
        lab.send("TopicTest", f"m{i}")
    lab.advance(1_500)
    t0 = lab.now
    assert lab.partition(["n2"]) == {"side": ["broker-a-n2"],
                                     "rest": ["broker-a-n0", "broker-a-n1"]}  # fmt: skip
    fut = lab.send("TopicTest", "cut off")
    # each attempt waits maxWaitAckTimeMs (2500 ms) for a quorum; the first is answered
    # SYSTEM_ERROR "broker busy", the retry runs past the producer's 3000 ms send timeout
    answers = [e for e in lab.trace.events if e.t_ms > t0 and e.node == "lab-producer"
               and e.component == "DefaultMQProducerImpl.sendDefaultImpl"
               and e.step == "exception"]  # fmt: skip
    assert [e.t_ms - t0 for e in answers] == [2_502, 3_000]
    assert BUSY in answers[0].fields["text"] and "timeout" in answers[1].fields["text"]
    assert fut.result is None and str(fut.error) == "sendDefaultImpl call timeout"
    st = nodes(lab)
    assert st["broker-a-n2"][4:7] == [4, 1, 2]  # two appends (the send and its retry), uncommitted
    assert lab.run_until_elected() == {
        "leader": "broker-a-n1", "self_id": "n1", "term": 2, "t_ms": 9222,
    }  # fmt: skip
    assert lab.run_until_master() == "broker-a-n1"
    assert lab.dledger_log("n2") == [(0, 1, 166), (1, 1, 166), (2, 1, 166), (3, 1, 171),
                                     (4, 1, 171)]  # fmt: skip
    lab.heal()
    # n1's first COMPARE went into the partition: it waits out 3 s, and n2 answers the next
    # only once it follows n1; the TRUNCATE comes about 4 s after the heal
    lab.advance(3_000)
    assert nodes(lab)["broker-a-n2"][1] == "CANDIDATE" and len(lab.dledger_log("n2")) == 5
    lab.advance(2_000)
    st = nodes(lab)
    assert st["broker-a-n2"] == [True, "FOLLOWER", 2, "n2", 2, 1, 2, 3]  # a SLAVE, id 2 + 1
    assert lab.dledger_log("n2") == lab.dledger_log("n1") == [(0, 1, 166), (1, 1, 166),
                                                              (2, 1, 166)]  # fmt: skip
    assert [e.step for e in lab.trace.events if e.component == "Lab"] == ["partition", "heal"]


def test_a_power_cut_leader_loses_its_unflushed_entry_and_gets_it_back(lab: Lab) -> None:
    acked = [lab.send("TopicTest", f"m{i}").result for i in range(3)]
    s = lab.dledger_server("n2")
    assert s.store.write_ms == {0: 658, 1: 668, 2: 672}
    out = lab.power_cut("broker-a-n2")
    # at t=675 the flush pass of t=670 covered entries 0 and 1; entry 2 (t=672) was lost
    assert {k: v for k, v in out.items() if k.startswith("dledger")} == {
        "dledger_ledger_end_index_before": 2, "dledger_ledger_end_index_after": 1,
        "dledger_lost_entries": 1,
    }  # fmt: skip
    assert lab.dledger_log("n2") == [(0, 1, 166), (1, 1, 166)]
    assert lab.run_until_elected()["leader"] == "broker-a-n1"
    lab.run_until_master()
    lab.restart_broker("broker-a-n2")
    lab.advance(5_000)
    assert nodes(lab)["broker-a-n2"] == [True, "FOLLOWER", 2, "n2", 2, 1, 2, 3]
    assert lab.dledger_log("n2") == lab.dledger_log("n1")
    assert lab.broker("broker-a-n2").message_store.get_max_offset_in_queue("TopicTest", 2) == 2
    while lab.now < 31_000:  # the producer's route names n1 after its 30 s poll
        lab.advance(1_000)
    # the topic's config is on n2, which auto-created it: n1 makes it on this send (4.9.3's
    # SlaveSynchronize of a DLedger slave is not modelled)
    nxt = lab.send("TopicTest", "after the cut").result
    assert stored_at(nxt) == (N1, 0x2B2)
    lab.push_consumer("CG", "TopicTest")
    lab.advance(3_000)
    assert sorted(lab.deliveries()["msg_id"]) == sorted(r.msg_id for r in [*acked, nxt])


def send_ms(lab: Lab, body: str) -> int:
    """How long a send takes to its SEND_OK (stepped to the answer, no further)."""
    t0 = lab.now
    fut = lab.send("TopicTest", body, run=False)
    while not fut.done:
        lab.step()
    assert fut.result.send_status.name == "SEND_OK"
    return lab.now - t0


def test_a_slow_link_to_one_follower_leaves_the_quorum_to_the_other(lab: Lab) -> None:
    lab.send("TopicTest", "m0")
    assert send_ms(lab, "m1") == 4  # producer -> broker, push and ack (1 ms each), answer
    lab.slow_link("n2", "n0", 400)
    assert send_ms(lab, "m2") == 4  # n1's ack makes the quorum
    lab.slow_link("n2", "n1", 400)
    lab.advance(2_000)
    assert send_ms(lab, "m3") == 802  # both acks 2 x 400 ms away
    lab.slow_link("n2", "n0", None)
    lab.slow_link("n2", "n1", None)
    lab.advance(2_000)
    assert send_ms(lab, "m4") == 4
    assert [e.fields["latency_ms"] for e in lab.trace.events
            if e.component == "Lab" and e.step == "slow_link"] == [400, 400, -1, -1]  # fmt: skip


def test_a_send_over_a_link_slower_than_the_pushers_retry_returns(lab: Lab) -> None:
    """n2 <-> n0 at 2000 ms each way: a COMPARE or heartbeat is always in flight, so the
    driver is never idle. ``send`` answers SEND_OK through n1's ack and returns once its
    settle bound (60 s after the call) is reached; it looped for 10,000,000 events before."""
    t0 = lab.now
    lab.slow_link("n2", "n0", 2000)
    fut = lab.send("TopicTest", "m0")
    assert fut.done and fut.result.send_status.name == "SEND_OK"
    assert fut.result.queue_offset == 0
    assert lab.now == t0 + 60_000


def test_a_fork_replays_the_faults_and_the_stepping(lab: Lab) -> None:
    lab.send("TopicTest", "m0")
    with pytest.raises(TimeoutError):
        lab.run_until_elected(max_ms=3_000)  # n2 holds on
    lab.partition(["n2"])
    lab.run_until_vote()
    mid = lab.checkpoint()
    mid_state, mid_now = nodes(lab), lab.now
    lab.run_until_elected()
    lab.heal()
    lab.run_until_master()
    other = lab.fork()
    try:
        assert nodes(other) == nodes(lab) and other.now == lab.now
        assert other.events_run == lab.events_run
    finally:
        other.close()
    other = lab.fork(step=mid)  # inside the election that ended later
    try:
        assert (nodes(other), other.now) == (mid_state, mid_now)
    finally:
        other.close()


def test_bad_arguments_say_why(lab: Lab) -> None:
    with pytest.raises(ValueError, match="group size of 3 or 5, got 4"):
        Lab(dledger=4)
    with pytest.raises(ValueError, match="leave out slaves and broker_role"):
        Lab(dledger=3, slaves=1)
    with pytest.raises(ValueError, match="no DLedger node 'n7'"):
        lab.partition(["n7"])
    with pytest.raises(ValueError, match="at least one node"):
        lab.partition([])
    with pytest.raises(ValueError, match="is the whole group"):
        lab.partition(["n0", "n1", "n2"])
    with pytest.raises(ValueError, match="two different nodes"):
        lab.slow_link("n1", "broker-a-n1", 5)
    with pytest.raises(ValueError, match="latency_ms must be a whole number"):
        lab.slow_link("n1", "n2", -3)
    # a healthy leader keeps its followers: no election ends
    with pytest.raises(TimeoutError, match="no election of broker-a ended: not within 5000 ms"):
        lab.run_until_elected(max_ms=5_000)
    assert lab.dledger_leader() == "broker-a-n2"
    plain = Lab()
    try:
        with pytest.raises(ValueError, match=r"no DLedger group: build it with Lab\(dledger=3\)"):
            plain.partition(["broker-a"])
    finally:
        plain.close()


def test_five_nodes_survive_two_killed() -> None:
    lab = Lab(seed=2, dledger=5)
    try:
        first = lab.dledger_leader()
        assert lab.master_in_route() == first
        lab.send("TopicTest", "m0")
        others = [n for n in lab.dledger_nodes().index if n != first]
        lab.kill(first)
        lab.kill(others[0])
        won = lab.run_until_elected()
        assert won["term"] == 2 and won["leader"] in others[1:]
        assert lab.run_until_master() == won["leader"]
        # the dead first leader keeps brokerId 0; broker("broker-a") is the running master
        assert (first, others[0], won["leader"]) == ("broker-a-n3", "broker-a-n0", "broker-a-n4")
        assert lab.broker(first).broker_config.broker_id == 0
        assert lab.broker("broker-a").name == "broker-a-n4"
        assert lab.dledger_server(won["leader"]).store.committed_index == 0
    finally:
        lab.close()


def test_a_follower_cut_off_alone_does_not_stop_the_majority_nor_inflate_terms(lab: Lab) -> None:
    lab.send("TopicTest", "m0")
    assert lab.partition("n0") == {"side": ["broker-a-n0"],
                                   "rest": ["broker-a-n1", "broker-a-n2"]}  # fmt: skip
    assert [send_ms(lab, f"p{i}") for i in range(3)] == [4, 4, 4]  # n1's ack is the quorum
    lab.advance(10_000)
    st = nodes(lab)
    # n0 lost its leader and stands as a candidate, but its votes reach no quorum of valid
    # answers, so it never moves to a new term (DLedgerLeaderElector: WAIT_TO_REVOTE)
    assert st["broker-a-n0"] == [True, "CANDIDATE", 1, "n2", 0, 1, -1, 1]
    assert st["broker-a-n2"] == [True, "LEADER", 1, "n2", 3, 1, 3, 0]
    lab.heal()
    lab.advance(5_000)
    assert nodes(lab)["broker-a-n0"] == [True, "FOLLOWER", 1, "n2", 3, 1, 3, 1]
    assert lab.dledger_log("n0") == lab.dledger_log("n2")


def test_the_election_vote_by_vote(lab: Lab) -> None:
    """Seed 5's first election as the voters answered it, then a kill's election stepped
    one vote at a time (``run_until_vote``); n0..n2 are also names for the machine faults."""
    # at t=0 and 1 (term 0) each node voted for itself and refused the two others
    votes = lab.dledger_votes(since_ms=2)
    assert [tuple(r) for r in votes[["t_ms", "voter_id", "candidate", "term", "result"]].values] == [
        (640, "n2", "n2", 1, "ACCEPT"),  # n2 moves to term 1 and votes for itself
        (641, "n0", "n2", 1, "REJECT_TERM_NOT_READY"),  # still in term 0: moves to 1
        (641, "n1", "n2", 1, "REJECT_TERM_NOT_READY"),
        (650, "n2", "n2", 1, "ACCEPT"),  # n2 asks again at once
        (651, "n0", "n2", 1, "ACCEPT"),
        (651, "n1", "n2", 1, "ACCEPT"),
    ]  # fmt: skip
    lab.kill("n2")  # the selfId names the machine: broker-a-n2 and dledger-a-n2
    assert not lab.broker("broker-a-n2").running and not lab.dledger_server("n2").running
    steps = [lab.run_until_vote() for _ in range(6)]
    assert [(v["t_ms"], v["voter_id"], v["candidate"], v["term"], v["result"]) for v in steps] == [
        (1140, "n1", "n1", 1, "REJECT_ALREADY_VOTED"),  # n1 already voted n2 in term 1
        (1141, "n0", "n1", 1, "REJECT_ALREADY_VOTED"),
        (1220, "n0", "n0", 1, "REJECT_ALREADY_VOTED"),
        (1221, "n1", "n0", 1, "REJECT_ALREADY_VOTED"),
        (1580, "n1", "n1", 2, "ACCEPT"),  # n1 moved on to term 2
        (1581, "n0", "n1", 2, "REJECT_TERM_NOT_READY"),
    ]  # fmt: skip
    assert lab.run_until_elected() == {
        "leader": "broker-a-n1", "self_id": "n1", "term": 2, "t_ms": 1592,
    }  # fmt: skip


def test_two_broker_names_are_two_groups() -> None:
    with Lab(seed=5, brokers=2, dledger=3) as lab:
        assert lab.now == 653
        assert [lab.master_in_route(n) for n in ("broker-a", "broker-b")] == [
            "broker-a-n2", "broker-b-n2",
        ]  # fmt: skip
        peers = {s.config.group: s.config.peers for s in lab.dledger_servers.values()}
        assert peers == {
            "broker-a": "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913",
            "broker-b": "n0-127.0.0.1:40921;n1-127.0.0.1:40922;n2-127.0.0.1:40923",
        }
        with pytest.raises(ValueError, match=r"one DLedger group, got nodes of \['broker-a', 'b"):
            lab.partition(["broker-a-n0", "broker-b-n0"])
        with pytest.raises(ValueError, match="no DLedger node 'n0'"):  # a selfId is ambiguous
            lab.dledger_server("n0")
        lab.partition(["broker-b-n2"])
        assert lab.run_until_elected("broker-b")["leader"] == "broker-b-n0"
        assert lab.dledger_leader("broker-a") == "broker-a-n2"  # the other group is untouched


def test_dledger_config_overrides_reach_every_node() -> None:
    with Lab(seed=5, dledger=3, dledger_config={"heart_beat_time_interval_ms": 500}) as lab:
        assert {s.config.heart_beat_time_interval_ms for s in lab.dledger_servers.values()} == {500}
        lab.send("TopicTest", "m0")
        assert lab.now == 667
        lab.kill("n2")
        # n1 won at 2632 after 3 missed heartbeats of 500 ms (with 2000 ms: at 7132)
        assert lab.run_until_elected() == {
            "leader": "broker-a-n1", "self_id": "n1", "term": 2, "t_ms": 2632,
        }  # fmt: skip
    with pytest.raises(ValueError, match="unknown DLedger setting"):
        Lab(dledger=3, dledger_config={"heartbeat": 1})
    with pytest.raises(ValueError, match="cannot set 'peers'"):
        Lab(dledger=3, dledger_config={"peers": "x"})
    with pytest.raises(ValueError, match="needs a DLedger group"):
        Lab(dledger_config={"max_heart_beat_leak": 2})


def test_a_lost_machine_comes_back_empty_and_gets_the_whole_log_on_the_next_append(
    lab: Lab,
) -> None:
    for i in range(3):
        lab.send("TopicTest", f"m{i}")
    lab.lose("n0")
    lab.restart_broker("n0")  # a replacement machine: no log, no currterm file
    assert nodes(lab)["broker-a-n0"] == [True, "CANDIDATE", 0, None, -1, -1, -1, -1]  # brokerId -1
    lab.advance(5_000)
    # it follows n2 in term 1 (it forgot its vote for n2), but the leader's dispatcher
    # still counts it at index 2 and sends only COMMITs: nothing tells it the log is gone
    assert nodes(lab)["broker-a-n0"] == [True, "FOLLOWER", 1, None, -1, -1, -1, 1]
    lab.send("TopicTest", "m3")  # the APPEND of entry 3 meets an empty log: COMPARE,
    lab.advance(2_000)  # TRUNCATE to entry 0, APPEND 1..3
    assert nodes(lab)["broker-a-n0"] == [True, "FOLLOWER", 1, None, 3, 1, 3, 1]
    assert lab.dledger_log("n0") == lab.dledger_log("n2")
    steps = [(e.step, e.fields.get("type")) for e in lab.trace.events
             if e.node == "dledger-a-n0" and e.component == "DLedgerEntryPusher.EntryHandler"
             and e.step in ("4", "6", "8")]  # fmt: skip
    assert steps[-5:] == [("4", "COMPARE"), ("6", "TRUNCATE"), ("8", "APPEND"), ("8", "APPEND"),
                          ("8", "APPEND")]  # fmt: skip
    assert lab.broker("n0").message_store.get_max_offset_in_queue("TopicTest", 2) == 2


def test_a_producer_with_its_own_client_config_learns_the_new_master_at_its_poll(lab):
    """``lab.producer(client_config=ClientConfig(poll_name_server_interval=1000))``: the lab
    keeps the caller's fields and sets the instance name and offset dir. Seed 5, the leader's
    broker (n2) killed at 853 ms: the 1 s producer's route names n1's broker as master at
    7,673 ms, the default (30 s) one's only at its next poll, 30,673 ms."""
    from mqlab.client.client_config import ClientConfig
    from mqlab.common.message import Message

    fast = lab.producer(name="fast", client_config=ClientConfig(poll_name_server_interval=1000))
    slow = lab.producer(name="slow")
    insts = {"fast": fast.default_mq_producer_impl.instance,
             "slow": slow.default_mq_producer_impl.instance}  # fmt: skip
    cfg = insts["fast"].client_config
    assert (cfg.poll_name_server_interval, cfg.instance_name, cfg.namesrv_addr) == (
        1000, "fast", "127.0.0.1:9876",
    )  # fmt: skip
    assert insts["slow"].client_config.poll_name_server_interval == 30_000
    for p in (fast, slow):
        f = p.send(Message("T", b"x"))
        lab.advance(100)
        assert f.done and f.get().send_status.name == "SEND_OK"

    def master(inst) -> str | None:
        rd = inst.topic_route_table.get("T")
        return None if rd is None else rd.broker_datas[0].broker_addrs.get(0)

    assert (lab.now, master(insts["fast"]), master(insts["slow"])) == (853, N2, N2)
    lab.kill("n2")
    seen: dict[str, int] = {}
    while len(seen) < 2 and lab.now < 60_000:
        lab.advance(10)
        seen.update({n: lab.now for n, i in insts.items() if n not in seen and master(i) == N1})
    assert seen == {"fast": 7_673, "slow": 30_673}
    with pytest.raises(TypeError, match="client_config must be a ClientConfig, got dict"):
        lab.producer(name="bad", client_config={"poll_name_server_interval": 1000})
