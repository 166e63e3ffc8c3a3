"""Lesson 14 (Raft in the broker): every number lessons/14_raft_in_the_broker.md states, checked
on the lesson's helpers with its seed (``L.WALK_SEED``, 5); the panel walk of section 1 clicked
as the prose says, on the learner notebook's own cells; the exercises' answers and
misconception hints.

Mirrors ``DLedgerLeaderElector``, ``DLedgerEntryPusher`` (DLedger 0.2.3) and
``DLedgerCommitLog``, ``DLedgerRoleChangeHandler`` (rocketmq-all-4.9.3) through the lesson.
"""

from __future__ import annotations

import pytest
from walks import open_panel

from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson14 as L

STEM = "14_raft_in_the_broker"


def test_section1_the_first_election():
    """A three-way split at 0 ms; next tries at 633 (n2), 803 (n0), 956 (n1); n2 asks in term 1
    at 640, REVOTE_IMMEDIATELY, all accept at 650, n2 leads from 652."""
    lab = L.group_lab()
    r = L.rounds(lab)
    assert r["asked_ms"].tolist() == [0, 0, 0, 640, 650]
    assert r["candidate"].tolist() == ["n0", "n1", "n2", "n2", "n2"]
    assert r["parse"].tolist() == ["WAIT_TO_VOTE_NEXT"] * 3 + ["REVOTE_IMMEDIATELY", "PASSED"]
    assert dict(zip(r["candidate"][:3], r["next_vote_ms"][:3], strict=True)) == {
        "n0": 803, "n1": 956, "n2": 633}  # fmt: skip
    assert r["term"].tolist() == [0, 0, 0, 1, 1]
    assert "REJECT_TERM_NOT_READY" in r["answers"][3]
    v = L.votes(lab)
    assert (v["result"][:3] == "ACCEPT").all() and (
        v["result"][3:9] == "REJECT_ALREADY_VOTED"
    ).all()
    won = [(e.t_ms, e.node) for e in lab.trace.events
           if e.component == "DLedgerLeaderElector" and e.step == "6"]  # fmt: skip
    assert won == [(652, "dledger-a-n2")]


def test_section1_the_panel_walk_as_written():
    """The learner notebook up to the panel; next vote twice, then step to next election."""
    p, ns = open_panel(STEM, "L.election_panel(")
    assert ns["who"] == {"leader": "broker-a-n2", "behind": "broker-a-n0",
                         "ahead": "broker-a-n1", "killed_ms": 667, "term": 1}  # fmt: skip
    view = L.dledger_view(ns["lab"]).set_index("node")
    assert (view.loc["broker-a-n1", "end_index"], view.loc["broker-a-n1", "end_term"]) == (0, 1)
    assert (view.loc["broker-a-n0", "end_index"], view.loc["broker-a-n0", "end_term"]) == (-1, -1)
    mark = len(p.messages)
    p.buttons["next_vote"].click()
    said = "\n".join(p.messages[mark:])
    assert "n0 answers n0's vote for term 1: REJECT_ALREADY_VOTED" in said
    assert ns["lab"].now == 1220
    mark = len(p.messages)
    p.buttons["next_vote"].click()
    assert "n1 answers n0's vote for term 1: REJECT_EXPIRED_LEDGER_TERM" in "\n".join(
        p.messages[mark:])  # fmt: skip
    mark = len(p.messages)
    p.buttons["step_election"].click()
    assert "broker-a-n1 (n1) won term 2 at t=7132" in "\n".join(p.messages[mark:])


def test_section1_every_round_after_the_kill():
    """n0 at 1220, 2900, 4240, 5930 (refused by n1: older ledger term); n1 in term 1 at 6680
    (refused by both), term 2 at 7120, PASSED at 7132."""
    done, who = L.leader_lost()
    done.run_until_elected()
    r = L.rounds(done, since_ms=who["killed_ms"])
    assert r["asked_ms"].tolist() == [1220, 2900, 4240, 5930, 6680, 7120, 7130]
    assert r["candidate"].tolist() == ["n0"] * 4 + ["n1"] * 3
    assert r["term"].tolist() == [1, 1, 1, 1, 1, 2, 2]
    assert all("n1: REJECT_EXPIRED_LEDGER_TERM" in a for a in r["answers"][:4])
    assert r["answers"][4].count("REJECT_ALREADY_VOTED") == 2
    assert r["parse"].tolist()[-1] == "PASSED" and r["closed_ms"].tolist()[-1] == 7132
    assert (r["end_term"].tolist(), r["end_index"].tolist()) == ([-1] * 4 + [1] * 3,
                                                                 [-1] * 4 + [0] * 3)  # fmt: skip
    fig = L.votes_figure(L.votes(done, since_ms=who["killed_ms"]))
    assert sum(len(t.x) for t in fig.data) == 14


def test_section2_one_send():
    """Entry 1 at pos 217 (48 + 169 before it), n1 at 669, committed at 670, PUT_OK, SEND_OK
    at 671 (4 ms), n0 at 688; offsetMsgId ...0109 (265); only the leader counts entry 1 committed."""
    lab, result, start = L.one_send()
    assert (result.send_status.name, start, result.offset_msg_id[-4:]) == ("SEND_OK", 667, "0109")
    s = L.replication_steps(lab, since_ms=start, until_ms=start + 4)
    assert s["says"][0] == "term=1 index=1 pos=217" and s["t_ms"][0] == 668
    rows = list(zip(s["t_ms"], s["node"], s["step"], strict=True))
    assert (669, "dledger-a-n1", "8") in rows
    assert (670, "dledger-a-n2", "10") in rows
    assert s["says"][s["step"] == "10"].tolist() == ["term=1 committed_index=1 quorum_index=1"]
    assert s["says"].tolist()[-2:] == ["code=SUCCESS status=PUT_OK", "status=SEND_OK"]
    assert s["t_ms"].tolist()[-1] == 671
    late = L.replication_steps(lab, since_ms=start + 5)
    assert late[late["component"] == "DLedgerEntryPusher.EntryHandler"]["t_ms"].tolist()[0] == 688
    e = L.entries(lab)
    assert e[e["index"] == 0]["size"].tolist() == [169, 169, 169]
    e1 = e[e["index"] == 1].set_index("node")
    assert e1["pos"].tolist() == [217, 217, 217] and e1["commit_log_offset"].tolist()[0] == 265
    assert e1["committed"].to_dict() == {"broker-a-n0": False, "broker-a-n1": False,
                                         "broker-a-n2": True}  # fmt: skip
    assert len(L.log_figure(e).data) == 2  # term 1 committed / not committed


def test_section3_the_isolated_leader():
    """Entry 1 at 668, broker busy (code 1) at 3169, entry 2 at 3170, the producer gives up at
    3667; no_quorum at 4670 (a heartbeat round waits out its 2000 ms), lost_quorum at 6680;
    candidates at 6670, whose term-1 rounds wait out their vote latch (n1 until 8771, n0
    until 9018: n2's votes never answer); n1 leads term 2 at 9222, master at 9322; heal at
    9323; n1's COMPARE into the partition times out at 12222, again at 12722, answered once n2
    follows (13251); TRUNCATE at 13252/13253, end 2 → 0; n2's 15 frames sent into the
    partition since 668 reach n0 and n1 at 13469 (TCP's retransmission at 13468) and are
    refused."""
    run = L.isolate_leader()
    assert (run["old_leader"], run["cut_ms"], run["heal_ms"]) == ("broker-a-n2", 667, 9323)
    assert run["new_leader"] == {"leader": "broker-a-n1", "self_id": "n1", "term": 2,
                                 "t_ms": 9222}  # fmt: skip
    s = L.partition_story(run)
    rows = list(zip(s["t_ms"], s["node"], s["step"], s["says"], strict=True))
    assert (668, "broker-a-n2", "5", "pos=220") in rows
    assert (3170, "broker-a-n2", "5", "pos=438") in rows
    assert (3168, "broker-a-n2", "6",
            "code=WAIT_QUORUM_ACK_TIMEOUT status=OS_PAGECACHE_BUSY") in rows  # fmt: skip
    busy = [r for r in rows if r[0] == 3169]
    assert len(busy) == 1 and "CODE: 1" in busy[0][3] and "broker busy" in busy[0][3]
    assert (3667, "lab-producer", "result", "error=sendDefaultImpl call timeout") in rows
    no_quorum = [r[0] for r in rows if r[1:] == ("dledger-a-n2", "9",
                                                 "term=1 outcome=no_quorum succ_num=1")]  # fmt: skip
    assert no_quorum == [4670]
    assert (5670, "broker-a-n2", "6",
            "code=WAIT_QUORUM_ACK_TIMEOUT status=OS_PAGECACHE_BUSY") in rows  # fmt: skip
    assert (6680, "dledger-a-n2", "9", "term=1 outcome=lost_quorum succ_num=1") in rows
    assert (6680, "dledger-a-n2", "11", "role=CANDIDATE term=1") in rows
    assert {r[1] for r in rows if r[0] == 6670 and r[2] == "11"} == {"dledger-a-n0",
                                                                     "dledger-a-n1"}  # fmt: skip
    assert (9222, "dledger-a-n1", "6", "role=LEADER term=2") in rows
    ev = run["lab"].trace.events
    rounds = [(e.t_ms, e.node, e.fields["cost_ms"], set(e.fields["results"].values()))
              for e in ev if e.component == "DLedgerLeaderElector" and e.step == "4"
              and e.fields["term"] == 1 and e.node in ("dledger-a-n0", "dledger-a-n1")
              and e.t_ms > 6000]  # fmt: skip
    assert rounds == [(8771, "dledger-a-n1", 2091, {"REJECT_ALREADY_VOTED"}),
                      (9018, "dledger-a-n0", 2338, {"REJECT_ALREADY_VOTED"})]  # fmt: skip
    to_n2 = [(e.t_ms, e.step, e.fields.get("code") or e.fields.get("type"))
             for e in ev if e.component == "DLedgerEntryPusher.EntryDispatcher"
             and e.fields.get("peer") == "n2" and e.node == "dledger-a-n1"
             and (e.fields.get("code") == "NETWORK_ERROR" or e.fields.get("type") == "COMPARE")
             and e.t_ms > 9000]  # fmt: skip
    assert to_n2[:3] == [
        (9222, "3", "COMPARE"),
        (12222, "5", "NETWORK_ERROR"),
        (12722, "3", "COMPARE"),
    ]
    assert [
        e.t_ms
        for e in ev
        if e.node == "dledger-a-n2"
        and e.component == "DLedgerLeaderElector"
        and e.fields.get("event") == "ChangeRoleToFollower"
    ] == [13251]
    assert (9322, "broker-a-n1", "3",
            "role=LEADER term=2 broker_id=0 broker_role=SYNC_MASTER") in rows  # fmt: skip
    assert (13252, "dledger-a-n1", "6", "type=TRUNCATE index=0 pos=0 peer=n2") in rows
    assert (13253, "dledger-a-n2", "6",
            "type=TRUNCATE index=0 code=SUCCESS end_before=2 end_after=0") in rows  # fmt: skip
    b = run["before_heal"]
    n2 = b[b["node"] == "broker-a-n2"]
    assert n2["body"].tolist() == [b"before 0", b"during", b"during"]
    assert n2["committed"].tolist() == [True, False, False]
    assert run["ends_before_heal"] == {"broker-a-n0": 0, "broker-a-n1": 0, "broker-a-n2": 2}
    assert run["ends_after_heal"] == {"broker-a-n0": 0, "broker-a-n1": 0, "broker-a-n2": 0}
    assert len(run["after_heal"]) == 3
    # what n2 sent into the partition, kept by its kernel since 668, arrives at 13469
    held = sorted((e.fields["to"], e.fields["held"], e.fields["since"], e.fields["at"])
                  for e in ev if e.step == "retransmit" and e.node == "dledger-a-n2")  # fmt: skip
    assert held == [("dledger-a-n0", 15, 668, 13468), ("dledger-a-n1", 15, 668, 13468)]
    stale = {(e.node, e.fields.get("code") or e.fields.get("result")) for e in ev
             if e.t_ms == 13469 and e.component == "DLedgerLeaderElector"
             and e.step in ("3", "8")}  # fmt: skip
    assert stale == {(n, r) for n in ("dledger-a-n0", "dledger-a-n1")
                     for r in ("EXPIRED_TERM", "REJECT_EXPIRED_VOTE_TERM",
                               "REJECT_ALREADY_HAS_LEADER")}  # fmt: skip


def test_section4_the_explorer_and_the_replays():
    """13 runs, 3 classes (ok 1, unacked=1 2, unacked=1 truncated=1 6), no safety key; the
    shortest truncation replayed: n1 leads term 2, a unanswered, (0, 1) held by none, n2's
    entry 0 replaced at 4793; d10: n0 leads term 2 (n0 refused n1 at 2401), a kept."""
    res = L.explore_partition()
    t = L.class_table(res)
    assert res.runs == 13
    assert t.set_index("outcome")[["runs", "shortest schedule"]].to_dict("index") == {
        "ok": {"runs": 1, "shortest schedule": "(default)"},
        "unacked=1": {"runs": 2, "shortest schedule": "d10 F:isolate(leader)"},
        "unacked=1 truncated=1": {"runs": 6, "shortest schedule": "F:isolate(leader)"},
    }
    cut = L.replay("F:isolate(leader)")
    assert cut["outcome"] == "unacked=1 truncated=1"
    assert cut["leaders"] == {1: ["n2"], 2: ["n1"]}
    assert cut["answers"] == [("a", "no answer"), ("b", "SUCCESS")]
    assert cut["cut"] == [(0, 1)] and cut["truncations"] == [(4793, "n2", 0)]
    assert cut["faults"][0] == (1000, "isolate(leader)->n2")
    assert cut["logs"][["index", "term", "body"]].values.tolist() == [[0, 2, "b"]] * 3
    kept = L.replay("d10 F:isolate(leader)")
    assert (kept["outcome"], kept["leaders"], kept["cut"]) == (
        "unacked=1", {1: ["n2"], 2: ["n0"]}, [])  # fmt: skip
    assert {(2400, "n1", 1, "REJECT_ALREADY_VOTED"),
            (2401, "n1", 1, "REJECT_EXPIRED_LEDGER_TERM")} <= set(kept["votes"])  # fmt: skip
    n0 = kept["logs"][kept["logs"]["node"] == "n0"]
    assert n0[["index", "term", "body"]].values.tolist() == [[0, 1, "a"], [1, 2, "b"]]


def test_section4_the_scenario_as_described():
    """A group of 3, heartbeats every 500 ms; a through the leader at 0, b at 2.5 s, the heal
    at 3 s; the partition of the leader the one fault; the classes written down first."""
    xs = L.get_scenario(L.SCENARIO)
    assert (xs.n, dict(xs.config)) == (3, {"heart_beat_time_interval_ms": 500})
    assert xs.appends == ((0, b"a"), (2500, b"b")) and xs.scripted == ((3000, "heal"),)
    assert (xs.faults, xs.fault_budget, xs.depth) == (("isolate(leader)",), 1, 12)
    assert xs.expected == {"unacked", "truncated"}


def test_section1_n1_gives_its_leader_up_after_three_missed_beats():
    """n1's last heartbeat from n2 at 661; at 6670, more than 6000 ms (3 x 2000 ms) later, it is
    a candidate (the state maintainer looks every 10 ms)."""
    done, who = L.leader_lost()
    done.run_until_elected()
    gave_up = [(e.t_ms, e.fields["last_leader_heart_beat_time"]) for e in done.trace.events
               if e.node == "dledger-a-n1" and e.component == "DLedgerLeaderElector"
               and e.step == "10"]  # fmt: skip
    assert gave_up == [(6670, 661)]
    cfg = done.dledger_server("n1").config
    assert (cfg.heart_beat_time_interval_ms, cfg.max_heart_beat_leak) == (2000, 3)


def test_exercise_answers():
    """14.1: n1 in term 2 at seed 0; 14.2: 4 ms whatever the slow link; 14.3: [k + 1, k - 1]."""
    assert expected("14.1", 0) == ["n1", 2]
    assert [L.params_14_2(s) for s in range(4)] == [30, 50, 80, 120]
    assert expected("14.2", 0) == 4 and expected("14.2", 3) == 4
    assert (L.params_14_3(0), expected("14.3", 0)) == (2, [3, 1])


def test_wrong_answers_get_the_misconception_hints():
    r = check("14.1", ["n0", 2], seed=0)
    assert not r and "REJECT_EXPIRED_LEDGER_TERM" in r.message
    r = check("14.1", ["n1", 1], seed=0)
    assert not r and "a new leader needs a new term" in r.message
    r = check("14.2", 34, seed=0)
    assert not r and "the slow follower is not waited for" in r.message
    r = check("14.3", [3, 3], seed=0)
    assert not r and "truncates (TRUNCATE)" in r.message
    r = check("14.3", [2, 1], seed=0)
    assert not r and "the producer tried twice" in r.message
    assert check("14.1", ["n1", 2], seed=0) and check("14.2", 4, seed=0)
    assert check("14.3", [3, 1], seed=0)


def test_exercise_14_1_varies_by_seed_and_its_answer_follows_from_the_set_up():
    """The seed picks the lab seed, the follower cut off and 0-2 earlier handovers: seeds 0,
    6, 9, 11 answer n1/n2/n0/n0 in terms 2/2/3/4. In each the winner is the follower that was
    not cut off (who['ahead']), in the killed leader's term + 1."""
    assert [L.params_14_1(s) for s in (0, 6, 9, 11)] == [
        {"seed": 1, "cut": 0, "handovers": 0}, {"seed": 7, "cut": 0, "handovers": 0},
        {"seed": 10, "cut": 1, "handovers": 1}, {"seed": 12, "cut": 1, "handovers": 2},
    ]  # fmt: skip
    answers = []
    for s in (0, 6, 9, 11):
        lab, who = L.leader_lost(**L.params_14_1(s))
        won = lab.run_until_elected()
        assert (f"broker-a-{won['self_id']}", won["term"]) == (who["ahead"], who["term"] + 1)
        answers.append([won["self_id"], won["term"]])
    assert answers == [["n1", 2], ["n2", 2], ["n0", 3], ["n0", 4]]
    assert expected("14.1", 11) == ["n0", 4] and check("14.1", ["n0", 4], seed=11)
    r = check("14.1", ["n0", 3], seed=11)
    assert not r and "above the killed leader's" in r.message


def test_leader_lost_refuses_bad_arguments():
    with pytest.raises(ValueError, match="cut must be 0 or 1"):
        L.leader_lost(cut=2)
    with pytest.raises(ValueError, match="handovers must be 0, 1 or 2"):
        L.leader_lost(handovers=3)
