"""Lesson 12 (replication and failover): the walk as lessons/12_replication_and_failover.md tells
it, with the numbers its prose states, and the exercises' answers and misconception hints.

Mirrors ``HAService``, ``HAConnection``, ``CommitLog#submitReplicaRequest``,
``PullMessageProcessor`` (suggestWhichBrokerId) and ``SlaveSynchronize`` (rocketmq-all-4.9.3)
through the lesson's helpers.
"""

from __future__ import annotations

from collections import Counter

import pytest

from mqlab.lab import figures
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson12 as L

SEEDS = [1, 12345]


@pytest.mark.parametrize("seed", SEEDS)
def test_section1_the_ha_stream_of_one_sync_send(seed):
    """Sent at 12 009 ms; the master parks the send (12), pushes (8); the slave appends (9)
    and reports (10) 1 ms later; the master reads the report (4), raises push2SlaveMaxOffset
    (5) and GroupTransferService releases the send (13, 14) 2 ms after the request arrived."""
    lab, result, start = L.one_sync_send(seed)
    assert (result.send_status.name, start) == ("SEND_OK", 12_009)
    s = L.ha_stream(lab, since_ms=start)
    assert list(zip(s.t_ms, s.node, s.step, strict=True)) == [
        (12_010, "broker-a", "12"), (12_010, "broker-a", "8"), (12_011, "broker-a-s1", "9"),
        (12_011, "broker-a-s1", "10"), (12_012, "broker-a", "4"), (12_012, "broker-a", "5"),
        (12_012, "broker-a", "13"), (12_012, "broker-a", "14"),
    ]  # fmt: skip
    assert s.text.iloc[0] == "wait until a slave has 338" and s.text.iloc[6].endswith("PUT_OK")
    fig = figures.sequence_timeline(lab, nodes=["lab-producer", "broker-a", "broker-a-s1"],
                                    start_ms=start, end_ms=start + 5)  # fmt: skip
    assert {y for t in fig.data for y in t.y} == {"lab-producer", "broker-a", "broker-a-s1"}
    logs = lab.commit_logs("broker-a")
    assert logs["broker-a-s1"].tolist() == [True, True]
    assert logs.attrs["replicated_offset"] == logs.attrs["max_offsets"]["broker-a"] == 338
    lab.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_section2_async_loses_the_last_ten_and_sync_none(seed):
    """ASYNC_MASTER lost after 50 answers: 2 ms sends (the first 4 ms), messages 40..49 (sent
    400-490 ms) not on the slave for these seeds (41..49 for others: "nine or ten"), the rest
    FAILED. SYNC_MASTER: none lost, 4..12 ms, median 8."""
    a = L.lose_master("ASYNC_MASTER", 50, seed)
    acked = a[a["acked"]]
    assert len(acked) == 50 and acked[~acked["on_slave"]]["n"].tolist() == list(range(40, 50))
    assert acked[~acked["on_slave"]]["sent_ms"].tolist() == list(range(400, 500, 10))
    assert Counter(acked["latency_ms"]) == {2: 49, 4: 1}
    assert set(a[~a["acked"]]["status"]) == {"FAILED"}
    # "and slowly": 46 wait out the 3 s timeout, until the name server has dropped broker-a
    # and the producer's route followed; the last 4 fail at once (no route)
    assert Counter(a[~a["acked"]]["latency_ms"]) == {3000: 46, 2: 4}
    s = L.lose_master("SYNC_MASTER", 50, seed)
    acked = s[s["acked"]]
    assert len(acked) == 50 and acked["on_slave"].all()
    d = acked["latency_ms"].describe()
    assert (d["min"], d["50%"], d["max"]) == (4.0, 8.0, 12.0)


def test_section2_nine_or_ten_as_the_prose_says():
    """Over seeds 0..5 the ASYNC_MASTER run loses the last nine or ten (sent from 400 or 410 ms),
    never other messages."""
    seen = set()
    for seed in range(6):
        a = L.lose_master("ASYNC_MASTER", 50, seed)
        lost = a[a["acked"] & ~a["on_slave"]]["n"].tolist()
        assert lost in (list(range(40, 50)), list(range(41, 50))), (seed, lost)
        seen.add(len(lost))
    assert seen == {9, 10}


def test_section3_the_tradeoff_table_and_figure():
    """48 runs; ASYNC p50 2 ms and 5 or 10 lost per run; SYNC p50 8 ms, none lost; the flush
    type changes nothing; the figure has p50 and p99 of each role and flush."""
    t = L.tradeoff()
    assert t["runs"].sum() == 48 and sorted(set(t["lose_after"])) == [25, 50, 75, 100]
    a, s = t[t["role"] == "ASYNC_MASTER"], t[t["role"] == "SYNC_MASTER"]
    assert set(a["latency_p50_ms"]) == {2.0} and set(s["latency_p50_ms"]) == {8.0}
    assert set(a["acked_lost"] // a["runs"]) == {5, 10} and set(s["acked_lost"]) == {0}
    by_flush = [g.drop(columns="flush").reset_index(drop=True) for _, g in t.groupby("flush")]
    assert by_flush[0].equals(by_flush[1])
    assert len(L.tradeoff_figure(t).data) == 8


@pytest.mark.parametrize("seed", SEEDS)
def test_section4_memory_pressure_sends_the_pull_to_the_slave(seed):
    """The machine's memory: the master keeps the pull; 100 bytes: it suggests brokerId 1, and
    the slave answers and suggests the master; slaveReadEnable off: never the slave."""
    want = {"master_code": 0, "slave_code": 0, "slave_suggests": 0}
    assert L.pull_far_behind(seed, None) == {**want, "suggest_which_broker_id": 0}
    assert L.pull_far_behind(seed, 100) == {**want, "suggest_which_broker_id": 1}
    off = L.pull_far_behind(seed, 100, slave_read_enable=False)
    assert off == {**want, "suggest_which_broker_id": 0}


@pytest.mark.parametrize("seed", SEEDS)
def test_section5_the_outage_and_the_duplicates(seed):
    """Offsets 1 before; c2 consumes the 8 from the slave and commits 3 there; the restarted
    master has 1 and the slave's sync copies 1 back; c3 consumes the 8 again. (c2's removal
    waits 10 ms for its shutdown's 5 route refreshes, no master being in its route, then
    4 ms for its two UNREGISTER_CLIENTs to the slave, one answered before the next: the
    restart is at 52 121.)"""
    o = L.outage(seed)
    ones, threes = {q: 1 for q in range(4)}, {q: 3 for q in range(4)}
    assert o == {
        "before": ones, "killed_ms": 22_103, "consumed_from_slave": 8,
        "slave_during_outage": threes, "restarted_ms": 52_121, "master_after_restart": ones,
        "slave_after_sync": ones, "overwritten_ms": 73_004, "consumed_again": 8,
    }  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_section6_a_partition_loses_nothing_and_answers_nothing(seed):
    """Seven FLUSH_SLAVE_TIMEOUTs 3002 ms apart with the HA connection still open (the last
    after the master's housekeeping closed it at 20 000), then SLAVE_NOT_AVAILABLE in 2 ms;
    the master's kernel kept 8 (seven pushes and the close) since 1 ms after the cut and
    sends them again at 25 601, 4586 ms after the heal at 21 016: the slave appends the
    seven on its old connection, reads the close, connects again, and holds everything
    10 588 ms after the heal, as the prose says."""
    p = L.partition(seed)
    sends = p["sends"]
    assert sends["sent"].tolist() == [3002 * i for i in range(8)]
    assert sends["answer"].tolist() == ["FLUSH_SLAVE_TIMEOUT"] * 7 + ["SLAVE_NOT_AVAILABLE"]
    assert sends["waited"].tolist() == [3002] * 7 + [2]
    assert sends["ha_connections"].tolist() == [1] * 6 + [0, 0]
    assert (p["closed_ms"], p["held"], p["heal_ms"], p["caught_up_ms"]) == (
        20_000, {"count": 8, "since": 1, "at": 25_601}, 21_016, 10_588,
    )  # fmt: skip
    a = p["after_heal"]
    rows = list(zip(a["after_heal_ms"], a["step"], strict=True))
    assert rows[1:16] == [(4586, "9"), (4586, "10")] * 7 + [(4586, "11")]
    assert rows[16:] == [(4586, "1"), (10_586, "3"), (10_588, "9"), (10_588, "10")]
    assert a["text"].iloc[13] == "append 124 B at 910" and a["text"].iloc[18].endswith("1034")


@pytest.mark.parametrize("seed", SEEDS)
def test_section7_a_lost_machine_tells_nobody(seed):
    """Broker-a lost at 40 s, a send every 3 s after the previous answer. Kill: nothing fails,
    the name server drops broker-a at 40 001 (its channel closed), the route follows at 60 022.
    Power cut: every other send (the producer's round robin over a0 a1 b0 b1 lands on broker-a
    every second time) waits 3000 ms, 16 of them; the name server's idle handler drops
    broker-a at 160 001, 120 s after the registration sent at 40 000 ms, which arrived at
    40 001 after the cut; the route follows at 180 022, the producer's next 30 s refresh.
    The figure passes the figure check."""
    from mqlab.lab.figure_check import check_figure

    k, p = L.machine_down(seed, "kill"), L.machine_down(seed, "power_cut")
    assert (k["failed"], k["dropped_ms"], k["dropped_by"], k["route_ms"]) == (
        0, 40_001, "close", 60_022)  # fmt: skip
    assert (p["failed"], p["last_registration_ms"], p["dropped_ms"], p["dropped_by"],
            p["route_ms"]) == (16, 40_001, 160_001, "idle", 180_022)  # fmt: skip
    t = p["sends"]
    failed = t[~t["result"].str.startswith("broker-")]
    assert set(failed["waited_ms"]) == {3000}
    assert set(failed["result"]) == {"sendDefaultImpl call timeout"}
    # where the round robin starts is the seed's
    first, last = {1: (43_004, 178_034), 12345: (40_000, 175_030)}[seed]
    assert (failed["sent_ms"].min(), failed["sent_ms"].max()) == (first, last)
    if seed == 1:
        assert t.iloc[:3].values.tolist() == [
            [40_000, 40_004, 4, "broker-b"],
            [43_004, 46_004, 3000, "sendDefaultImpl call timeout"],
            [49_004, 49_006, 2, "broker-b"],
        ]
    assert set(t[t["sent_ms"] > p["route_ms"]]["result"]) == {"broker-b"}
    assert set(k["sends"]["result"]) == {"broker-b"}
    assert check_figure(L.machine_down_figure(k, p)) == []


def test_machine_down_refuses_nonsense():
    with pytest.raises(
        ValueError, match=r"fault must be one of \['kill', 'power_cut'\], got 'lose'"
    ):
        L.machine_down(1, "lose")
    with pytest.raises(ValueError, match="cut_at_ms must be a whole number >= 1000, got 0"):
        L.machine_down(1, cut_at_ms=0)
    with pytest.raises(ValueError, match="sends must be a whole number >= 1, got '3'"):
        L.machine_down(1, sends="3")


@pytest.mark.parametrize("seed", SEEDS)
def test_exercise_answers(seed):
    """12.1 = the acknowledged messages the slave never got: fewer than a write-service wait
    (100 ms = 10 sends) holds; 12.2 = [0, median]; 12.3 = the messages re-consumed; 12.4 =
    the retransmission after the heal (the push at 1 ms: 201, 401, ... 6401, 12 801, 25 601)
    plus 1 ms."""
    assert (L.params_12_1(seed), expected("12.1", seed)) == {1: (37, 7), 12345: (23, 3)}[seed]
    lost, median = expected("12.2", seed)
    assert lost == 0 and 4 <= median <= 12
    assert expected("12.3", seed) == L.params_12_3(seed)
    assert (L.params_12_4(seed), expected("12.4", seed)) == {1: (9000, 12_802),
                                                             12345: (5000, 6402)}[seed]  # fmt: skip
    # 12.5: the last registration the name server read before the cut, plus 120 s
    assert (L.params_12_5(seed), expected("12.5", seed)) == {1: (47_000, 160_001),
                                                             12345: (25_000, 130_001)}[seed]  # fmt: skip


def test_exercise_answers_for_seed_1():
    """Seed 1: lost after 37 → 7 (30..36); SYNC after 44 → [0, 8.0]; 8 messages again."""
    assert (L.params_12_1(1), expected("12.1", 1)) == (37, 7)
    assert (L.params_12_2(1), expected("12.2", 1)) == (44, [0, 8.0])
    assert (L.params_12_3(1), expected("12.3", 1)) == (8, 8)
    assert [L.partition(s, heal_after_ms=h)["first_append_ms"] for s, h in
            ((2, 14_000), (1, 3002), (1, 19_999))] == [25_602, 3202, 25_602]  # fmt: skip


def test_wrong_answers_get_the_misconception_hints():
    r = check("12.1", 0, seed=1)
    assert not r and "SEND_OK as soon as its own commit log" in r.message
    r = check("12.1", 37, seed=1)
    assert not r and "only the messages since the last push" in r.message
    r = check("12.2", [7, 8], seed=1)
    assert not r and "answers only once the slave reported" in r.message
    r = check("12.2", [0, 2], seed=1)
    assert not r and "2 ms more than the producer's round trip" in r.message
    r = check("12.3", 0, seed=1)
    assert not r and "c3 reads the returning master's older offsets" in r.message
    r = check("12.5", 47_001, seed=1)
    assert not r and "a machine without power sends nothing" in r.message
    r = check("12.5", 167_000, seed=1)
    assert not r and "its clock runs from the last frame" in r.message
    r = check("12.5", 165_000, seed=1)
    assert not r and "idle handler on the channel fires first" in r.message
    assert check("12.5", 160_001, seed=1)
    r = check("12.4", 9001, seed=1)
    assert not r and "only when its retransmission timer fires" in r.message
    assert check("12.4", 12_802, seed=1)
    assert check("12.1", 7, seed=1) and check("12.2", [0, 8], seed=1) and check("12.3", 8, seed=1)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("role", ["ASYNC_MASTER", "SYNC_MASTER"])
def test_section8_the_panel_as_written(seed, role):
    """Send 3: master 537, slave 0; advance 12 000 ms: slave 537; send 3 and lose the master:
    ASYNC_MASTER's slave holds 537 bytes (the last three are gone), SYNC_MASTER's all six
    (1074); restart: an empty master, the slave ahead of it."""
    p = L.replication_panel(L.group_lab(seed, role))
    p.inputs["count"].value = "3"
    p.buttons["send"].click()
    assert "master's end 537, slave's end 0," in p.replication_view.value
    p.inputs["advance_ms"].value = "12000"
    p.buttons["advance"].click()
    assert "master's end 537, slave's end 537," in p.replication_view.value
    held = {"ASYNC_MASTER": 537, "SYNC_MASTER": 1074}[role]
    p.buttons["send"].click()
    assert f"master's end 1074, slave's end {held}," in p.replication_view.value
    p.buttons["lose_master"].click()
    assert p.messages[-1] == f"  → broker-a is lost; broker-a-s1 holds {held} bytes of commit log"
    assert "broker-a (" + role + ") is down" in p.replication_view.value
    p.buttons["restart_master"].click()
    assert p.messages[-1] == "  → broker-a restarted with 0 bytes"
    assert f"master's end 0, slave's end {held}," in p.replication_view.value
    p.lab.close()


def test_panel_lose_twice_is_refused_and_the_table_says_held_or_not():
    """Walk of issue 28: a second *lose master* on a lost master ran Lab.lose again and the
    log said "broker-a is lost" a second time, as if it had just happened; the commit-log
    table printed True and None for "this node holds the entry" and "it does not"."""
    p = L.replication_panel(L.group_lab(1, "ASYNC_MASTER"))
    p.inputs["count"].value = "3"
    p.buttons["send"].click()
    table = p.replication_view.value
    assert "None" not in table and "True" not in table
    assert (
        table.count("<td>✔</td>") == 3 and table.count("<td>—</td>") == 3
    )  # master's, not the slave's
    p.buttons["lose_master"].click()
    faults = len(p.lab.trace)
    p.buttons["lose_master"].click()
    assert p.messages[-1] == (
        "⚠ broker-a must be running to be lost: it is lost already (restart master first)"
    )
    assert len(p.lab.trace) == faults  # nothing ran
    p.buttons["restart_master"].click()
    assert p.messages[-1] == "  → broker-a restarted with 0 bytes"
    p.lab.close()
