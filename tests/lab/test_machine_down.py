"""A machine that goes down tells nobody (mechanisms.md "HA replication", "A machine that goes
down tells nobody"; ``mqlab.runtime.sim.SimDriver._machine_down``).

Two brokers, topic T with 2 queues on each, one producer sending every 3 s from 40 000 ms on,
seed 1, 1 ms links. broker-a's last registration reaches the name server at 40 001 ms.

- A kill: the name server drops broker-a at once (its channel closes), and each send whose
  queue is on broker-a fails at once (connect refused) and is retried on broker-b: nothing
  fails.
- A power cut: nothing closes. Each send whose queue is on broker-a (every other one here:
  16, from 43 004 to 181 034 ms) waits out the 3 s send timeout on the producer's open connection (``sendDefaultImpl call timeout``: no time left
  for a retry), until the name server's channel to broker-a has been idle for 120 s
  (160 001 ms, Netty's ``IdleStateHandler``) and the producer's next route refresh
  (180 022 ms) leaves broker-a out.
- The power cut, then a restart at 52 006 ms: the restarted machine knows none of the old
  connections. The producer had sent into the dead machine since 43 004 ms, so its kernel
  retransmits at 43 004 + 200, 400, ... 12 800 = 55 804 ms, and the reset is back at
  55 806 ms; the send of 52 006 ms had already timed out at 55 006. The name server's
  answer to the last registration (40 001 ms) is reset at 52 803 ms; the restarted broker
  registered on a new connection first, so the name server keeps its route.
"""

from __future__ import annotations

from mqlab import Lab, Message


def _run(fault: str, *, restart_at: int | None = None) -> tuple[Lab, list[tuple]]:
    lab = Lab(seed=1, brokers=2)
    for b in ("broker-a", "broker-b"):
        call = lab.request(b, "UPDATE_AND_CREATE_TOPIC", {
            "topic": "T", "defaultTopic": "TBW102", "readQueueNums": 2, "writeQueueNums": 2,
            "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": "false"})  # fmt: skip
        assert call.code == 0
    producer = lab.producer("PG")
    lab.advance(40_000 - lab.now)
    getattr(lab, fault)("broker-a")
    sends = []
    for i in range(60):
        if restart_at is not None and lab.now >= restart_at:
            lab.restart_broker("broker-a", graceful=False)
            restart_at = None
        sent = lab.now
        fut = producer.send(Message("T", f"m{i}".encode()))
        while not fut.done:
            lab.step()
        r = fut.result
        sends.append((sent, lab.now, r.message_queue.broker_name if r else str(fut.error)))
        lab.advance(3000)
    return lab, sends


def _events(lab: Lab) -> list[tuple]:
    out = []
    for e in lab.trace.events:
        if e.component == "RouteInfoManager.onChannelDestroy":
            out.append((e.t_ms, "destroy", e.fields["broker_addr"]))
        elif e.step == "idle":
            out.append((e.t_ms, "idle", e.node, e.fields["since"]))
        elif e.step == "reset":
            out.append((e.t_ms, "reset", e.node, e.fields["at"]))
        elif (
            e.node == "producer-1"
            and e.step == "route"
            and "T: route" in e.describe()
            and "(changed)" in e.describe()
        ):
            out.append((e.t_ms, "route", e.describe().split("T: route ")[-1]))
    return out


def test_a_killed_broker_is_dropped_at_once_and_no_send_fails():
    lab, sends = _run("kill")
    with lab:
        assert {b for _, _, b in sends} == {"broker-b"}
        assert all(done - sent == 2 for sent, done, _ in sends[1:])
        assert _events(lab) == [
            (40_001, "destroy", "127.0.0.1:10911"),
            (40_002, "route", "[broker-a:2w/2r, broker-b:2w/2r] (changed)"),
            (60_022, "route", "[broker-b:2w/2r] (changed)"),
        ]


def test_a_power_cut_times_sends_out_until_the_name_server_drops_the_broker():
    lab, sends = _run("power_cut")
    with lab:
        failed = [(sent, done) for sent, done, b in sends if not b.startswith("broker-")]
        assert {b for _, _, b in sends if b.startswith("broker-")} == {"broker-b"}
        assert len(failed) == 16 and all(done - sent == 3000 for sent, done in failed)
        assert (failed[0], failed[-1]) == ((43_004, 46_004), (178_034, 181_034))
        assert {b for _, _, b in sends if not b.startswith("broker-")} == {
            "sendDefaultImpl call timeout"
        }
        assert _events(lab) == [
            (40_002, "route", "[broker-a:2w/2r, broker-b:2w/2r] (changed)"),
            (120_006, "idle", "raw-client", 6),  # the lab's own channel, unused since 6 ms
            (160_001, "idle", "namesrv", 40_001),
            (160_001, "destroy", "127.0.0.1:10911"),
            (180_022, "route", "[broker-b:2w/2r] (changed)"),
        ]


def test_a_restarted_machine_resets_the_connections_of_before():
    lab, sends = _run("power_cut", restart_at=52_000)
    with lab:
        assert sends[:6] == [
            (40_000, 40_004, "broker-b"),
            (43_004, 46_004, "sendDefaultImpl call timeout"),
            (49_004, 49_006, "broker-b"),
            (52_006, 55_006, "sendDefaultImpl call timeout"),
            (58_006, 58_008, "broker-b"),
            (61_008, 61_010, "broker-a"),  # a new connection to the restarted broker
        ]
        assert all(b.startswith("broker-") for _, _, b in sends[4:])
        ev = _events(lab)
        assert ev[:3] == [
            (40_002, "route", "[broker-a:2w/2r, broker-b:2w/2r] (changed)"),
            (52_006, "reset", "namesrv", 52_803),
            (52_006, "reset", "producer-1", 55_806),
        ]
        assert [e for e in ev if e[1] == "destroy"] == []  # the old channel's close drops nothing
        closes = [(e.t_ms, e.fields["reason"]) for e in lab.trace.events
                  if e.component == "SimNetwork" and e.step == "close"]  # fmt: skip
        assert closes[:2] == [(52_803, "Connection reset by peer"),
                              (55_806, "Connection reset by peer")]  # fmt: skip
