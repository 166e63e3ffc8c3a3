"""mqlab.explore on replicated broker groups: what the replication scenarios' classes are
(which message is lost, which are delivered twice, and where), the HA stream's chunks as
choice points, and the scenarios listed by the CLI.

The tables themselves are pinned in ``test_explore.TABLES`` and ``MUTANTS``.
"""

from __future__ import annotations

import pytest

from mqlab.explore.engine import Bounds, run_schedule
from mqlab.explore.mutants import mutant
from mqlab.explore.scenarios import get_scenario
from mqlab.explore.search import replay

pytestmark = pytest.mark.slow

HA = ("async_master_lost", "sync_master_lost", "master_returns")


def _lost_run(lab) -> dict:
    """What a run with the master lost ends with."""
    master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
    return {
        "master_store": master.store_dir.exists(),
        "slave_max_offset": slave.message_store.commit_log.get_max_offset(),
        "deliveries": len(lab.deliveries()),
        "lost_at": [e.t_ms for e in lab.trace.events if e.component == "Lab" and e.step == "lose"],
    }


def test_async_master_lost_loses_the_acknowledged_message():
    """ASYNC_MASTER: SEND_OK at the put (12 009 ms); the machine lost 3 choice points later,
    before the write service pushed: the slave has nothing, the consumer gets nothing."""
    xs = get_scenario("async_master_lost")
    seen: dict = {}
    rec = replay(xs, "d3 F:lose(broker-a)", on_lab=lambda lab: seen.update(_lost_run(lab)))
    assert (rec.outcome, rec.counts["lost"]) == ("lost=1", 1)
    assert seen == {"master_store": False, "slave_max_offset": 0, "deliveries": 0,
                    "lost_at": [12_009]}  # fmt: skip


def test_sync_master_planted_bug_answers_before_the_slave_has_the_message():
    """``slave_ack_at_message_start``: GroupTransferService wakes the sender at once (the
    slave's 0 reaches the message's start, 0), so the machine lost before the write
    service's pass (choice point 4) loses an acknowledged message; 4.9.3 waits for the
    slave's 206 and the same schedule ends with nothing acknowledged."""
    xs = get_scenario("sync_master_lost")
    seen: dict = {}
    with mutant("slave_ack_at_message_start"):
        rec = replay(xs, "d4 F:lose(broker-a)", on_lab=lambda lab: seen.update(_lost_run(lab)))
    assert rec.outcome == "lost=1"
    assert seen == {"master_store": False, "slave_max_offset": 0, "deliveries": 0,
                    "lost_at": [12_009]}  # fmt: skip
    assert replay(xs, "d4 F:lose(broker-a)").outcome == "ok"


def test_a_master_lost_after_the_slave_has_the_message_leaves_it_pending_not_lost():
    """PCT's class: the machine lost at 12 011 ms, 10 choice points in, once the slave has
    the message (206) and the master's SEND_OK is on its way. A machine without power sends
    no FIN, so nothing tells anyone: the name server still counts two live brokers at its
    15 000 ms scan (it drops one only after 120 s without a registration), the slave's
    GET_ALL_TOPIC_CONFIG at 13 000 ms goes unanswered, and consumer-1 (started at 14 006)
    finds the master in its route, so its rebalances' connects to it wait out the 3 s connect
    timeout, past the run's end. The acknowledged message is on the slave, not consumed:
    ``pending``, an allowed class (the group will read it), not ``lost``."""
    xs = get_scenario("sync_master_lost")
    seen: dict = {}

    def look(lab) -> None:
        seen.update(_lost_run(lab))
        seen["scans"] = [
            (e.t_ms, e.fields["live"], e.fields["expired"]) for e in lab.trace.events
            if e.component == "RouteInfoManager.scanNotActiveBroker" and e.t_ms > 12_011
        ]  # fmt: skip
        seen["unanswered"] = [
            (e.t_ms, e.node, e.fields["what"]) for e in lab.trace.events
            if e.component == "SimNetwork" and e.step == "hold"
        ]  # fmt: skip
        seen["failed_rebalances"] = sum(
            1 for e in lab.trace.events
            if e.node == "consumer-1" and e.step == "exception"
            and "getConsumerIdListByGroup CG at 127.0.0.1:10911 failed" in e.describe()
        )  # fmt: skip
        seen["end"] = lab.now

    rec = replay(xs, "d10 F:lose(broker-a)", on_lab=look)
    assert (rec.outcome, rec.counts["lost"], rec.counts["pending"]) == ("pending=1", 0, 1)
    assert "pending" in xs.allowed and "pending" not in xs.expected
    assert seen == {"master_store": False, "slave_max_offset": 206, "deliveries": 0,
                    "lost_at": [12_011], "scans": [(15_000, 2, [])],
                    "unanswered": [(13_000, "broker-a-s1", "code 21 opaque 7")],
                    "failed_rebalances": 0, "end": 15_106}  # fmt: skip


@pytest.mark.parametrize(
    ("schedule", "outcome", "reads", "registered", "again", "overwritten"),
    [
        ("", "dup:crash=2", [(27_513, "broker-a", 0, 1), (27_515, "broker-a", 1, 1)], 27_507,
         [(0, 27_518), (1, 27_518)], []),
        ("l1", "dup:crash=1", [(27_515, "broker-a-s1", 0, 2), (27_519, "broker-a", 1, 1)],
         27_516, [(1, 27_522)], []),
        ("l2", "ok", [(27_515, "broker-a-s1", 0, 2), (27_519, "broker-a-s1", 1, 2)], 27_526, [],
         [(33_004, "broker-a-s1", ["TopicTest@CG"])]),
    ],
)  # fmt: skip
def test_master_returns_delivers_the_outage_messages_again_unless_the_slave_answers(
    schedule, outcome, reads, registered, again, overwritten
):
    """apache/rocketmq#1094: consumer-2 consumed queue offset 1 of both queues from the
    slave during the outage (16 522) and committed offsets 2 there; the master, back at
    27 506 with its offsets of before (1), registers with the name server 1 ms later, and
    consumer-3 (started in the same ms) reads each queue's offset from the master and
    consumes offset 1 again. With the registration 10 ms late (``l1``), queue 0's route
    refresh misses the master and reads the slave (2): one duplicate; 20 ms late (``l2``):
    both from the slave, none, and the slave's syncAll at 33 004 then copies the master's
    offsets (1) over its own (the master never saw consumer-3's commits)."""
    xs = get_scenario("master_returns")
    seen: dict = {}

    def look(lab) -> None:
        d = lab.deliveries().sort_values(["t_ms", "queue_id"], kind="stable")
        seen["deliveries"] = list(zip(d["consumer"], d["queue_id"], d["queue_offset"], d["t_ms"],
                                      strict=True))  # fmt: skip
        seen["overwritten"] = [
            (e.t_ms, e.node, e.fields["overwritten"])
            for e in lab.trace.select(component="SlaveSynchronize.syncConsumerOffset")
            if e.fields.get("overwritten")
        ]
        seen["faults"] = [(e.t_ms, e.node, e.step) for e in lab.trace.events
                          if e.component in ("SimDriver", "Lab") and e.step in ("kill", "restart")]  # fmt: skip
        seen["reads"] = [
            (e.t_ms, e.node, e.fields["queue_id"], e.fields["offset"])
            for e in lab.trace.select(component="ConsumerManageProcessor.queryConsumerOffset")
            if e.t_ms > 27_506 and e.fields["topic"] == "TopicTest"
        ]
        seen["registered"] = [e.t_ms for e in lab.trace.select(component="RouteInfoManager.registerBroker")
                              if 27_506 <= e.t_ms < 30_000 and e.fields.get("broker_id") == 0]  # fmt: skip

    rec = replay(xs, schedule, on_lab=look)
    assert (rec.outcome, rec.counts["dup:crash"]) == (outcome, len(again))
    assert seen["deliveries"] == [
        ("consumer-1", 0, 0, 12_010), ("consumer-1", 1, 0, 12_010),
        ("consumer-2", 0, 1, 16_522), ("consumer-2", 1, 1, 16_522),
    ] + [("consumer-3", q, 1, t) for q, t in again]  # fmt: skip
    assert seen["faults"] == [(16_006, "broker-a", "kill"), (27_506, "sim", "restart")]
    assert seen["reads"] == reads
    assert seen["registered"] == [registered]
    assert seen["overwritten"] == overwritten


def test_the_ha_stream_is_scheduled_like_frames():
    """In sync_master_lost the master's push and the slave's report are latency points
    (``broker-a->broker-a-s1``, ``broker-a-s1->broker-a``) and their arrivals order points.
    Delaying the push by 4 ms (``d8 l1``) delays the slave's append and report, the
    GroupTransferService's PUT_OK and the producer's SEND_OK by 4 ms each."""
    xs = get_scenario("sync_master_lost")
    b = Bounds(depth=12, latencies=(1, 5))
    rec = run_schedule(xs, "", b, record=True)
    assert [(p.index, p.labels[0]) for p in rec.points if "broker-a-s1" in p.labels[0]] == [
        (8, "broker-a->broker-a-s1 1 ms"),
        (10, "stream broker-a-s1 bytes broker-a->broker-a-s1 @12010"),
        (11, "broker-a-s1->broker-a 1 ms"),
    ]

    def times(out: list):
        def look(lab) -> None:
            out.extend((e.t_ms, e.node, e.component.rsplit(".", 1)[-1], e.step)
                       for e in lab.trace.events if e.t_ms > 12_000 and (
                           e.component in ("HAService.HAClient", "HAService.GroupTransferService")
                           and e.step in ("9", "10", "13")
                           or e.component == "DefaultMQProducerImpl.send"))  # fmt: skip

        return look

    plain: list = []
    late: list = []
    assert run_schedule(xs, "", b, on_lab=times(plain)).outcome == "ok"
    assert run_schedule(xs, "d8 l1", b, on_lab=times(late)).outcome == "ok"
    assert plain == [
        (12_010, "broker-a-s1", "HAClient", "9"), (12_010, "broker-a-s1", "HAClient", "10"),
        (12_011, "broker-a", "GroupTransferService", "13"),
        (12_012, "producer-1", "send", "result"),
    ]  # fmt: skip
    assert late == [(t + 4, *rest) for t, *rest in plain]


def test_cli_lists_the_replication_scenarios(capsys):
    from mqlab.__main__ import main

    assert main(["explore", "--list"]) == 0
    lines = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()}
    assert set(HA) <= set(lines)
    assert "ASYNC_MASTER + 1 slave" in lines["async_master_lost"]
    assert "apache/rocketmq#1094" in lines["master_returns"]
