"""A producer facing a broker whose machine fell silent, asked of the real 4.9.3 client and
brokers, and of mqlab's (lesson 12, "A lost machine tells nobody"; ``tests/lab/test_machine_down.py``).

Two JVMs: the name server with broker-b (``serverChannelMaxIdleTimeSeconds`` 11, so that the
module takes seconds, not minutes), and broker-a, which registers through a relay
(``mqlab.conformance.dledger_capture``) and is then stopped with SIGSTOP: its kernel still
acknowledges, but nothing more is read or written, as after a power cut. Both brokers register
every 10 s (``registerNameServerPeriod``, its minimum), so only the silent one's channel goes
idle. A third JVM runs the Java scenario ``producer-broker-freeze``: a topic with 2 queues on each
broker, routes polled every second, sends back to back.

What both must show, the real client and mqlab's in ``Lab`` with the same settings:

- each send whose first attempt goes to broker-a waits out the whole 3 000 ms send timeout on
  the open connection, and fails with ``RemotingTooMuchRequestException: sendDefaultImpl call
  timeout``: no time is left for the retry on broker-b;
- that retry's queue selection still moves the producer's queue index
  (``TopicPublishInfo#selectOneMessageQueue(lastBrokerName)``), so from then on the sends
  alternate broker-a queue 0 (fails) and broker-b queue 1 (succeeds);
- the name server drops broker-a when its channel has been idle for 11 s, and the producer's
  next route poll leaves broker-a out: every send after it goes to broker-b.

One thing only Java does: when its clock reads the timeout to the millisecond, the retry goes
out with 0 ms left, to broker-b, which may store the message though the send fails (5 of 60
failed sends in 15 runs, 3 of them stored). If the clock still reads it, the third attempt
goes to broker-a too, and the send fails with ``MQClientException: Send [3] times, still
failed``. The checks allow both on the real side; mqlab counts a budget used up exactly as used
up (``DefaultMQProducerImpl.send_default_impl``). The Java
producer's queue index is checked step by step (:func:`_check_real_queue_index`).

About 22 s: two broker JVMs, the scenario's JVM, and the 11 s idle limit.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab import Lab, Message
from mqlab.client.client_config import ClientConfig
from mqlab.conformance.dledger_capture import broker_behind_relay
from mqlab.conformance.real_cluster import RealClusterError
from mqlab.conformance.wire import broker_addr_table, wait_until
from mqlab.interop.java_client import run_java_interactive

pytestmark = pytest.mark.conformance

IDLE_S = 11
PERIOD_MS = 10_000
TIMEOUT = "RemotingTooMuchRequestException: sendDefaultImpl call timeout"
RETRIES = 2  # DefaultMQProducer.retryTimesWhenSendFailed


@pytest.fixture(scope="module")
def two_brokers(java_runner, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """JVM 1: the name server and broker-b; the relay; JVM 2: broker-a, through the relay."""
    try:
        with broker_behind_relay(
            tmp_path_factory.mktemp, ns_broker_name="broker-b",
            namesrv_properties={"serverChannelMaxIdleTimeSeconds": str(IDLE_S)},
            broker_properties={"registerNameServerPeriod": str(PERIOD_MS)},
        ) as cluster:  # fmt: skip
            yield cluster
    except RealClusterError as e:
        pytest.fail(str(e))


def _real_run(two_brokers, work: Path) -> dict:
    ns, relay, broker = two_brokers
    seen: dict[str, float] = {}

    def watch_drop() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if broker_addr_table(ns.namesrv_addr, "broker-a") == {}:
                seen["dropped"] = time.time() * 1000
                return
            time.sleep(0.05)

    def freeze(event: dict) -> None:
        os.kill(broker.pid, signal.SIGSTOP)
        epoch, mono = time.time() * 1000, relay._now_ms()
        # the name server's last read or write on broker-a's channel, in epoch ms
        seen["last_frame"] = epoch - (mono - max(f.t_ms for f in relay.frames()))
        threading.Thread(target=watch_drop, daemon=True).start()

    r = run_java_interactive("producer-broker-freeze", ns.namesrv_addr, "freeze_", work,
                             {"freeze": freeze}, timeout_s=150)  # fmt: skip
    wait_until(lambda: "dropped" in seen, 10, "the name server to drop broker-a")
    r["lastFrameAt"], r["droppedAt"] = seen["last_frame"], seen["dropped"]
    for x in r["sends"]:
        x["broker"], _, q = x["attempts"][0].partition("/")
        x["queueId"] = int(q)
    return r


def _lab_run() -> dict:
    """The same in the simulator: broker-a's machine loses power at 25 000 ms, 5 s after its
    registration of 20 000 (the name server read it at 20 001)."""
    with Lab(seed=1, brokers=2, broker={"register_name_server_period": PERIOD_MS}) as lab:
        lab.namesrv.netty_server_config.server_channel_max_idle_time_seconds = IDLE_S
        for b in ("broker-a", "broker-b"):
            call = lab.request(b, "UPDATE_AND_CREATE_TOPIC", {
                "topic": "T", "defaultTopic": "TBW102", "readQueueNums": 2,
                "writeQueueNums": 2, "perm": 6, "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0, "order": "false"})  # fmt: skip
            assert call.code == 0
        producer = lab.producer("PG", client_config=ClientConfig(
            poll_name_server_interval=1000, heartbeat_broker_interval=600_000))  # fmt: skip

        def send(body: str) -> dict:
            mark = len(lab.trace.events)
            begin = lab.now
            fut = producer.send(Message("T", body.encode()))
            while not fut.done:
                lab.step()
            s: dict = {"at": begin, "ms": lab.now - begin}
            if fut.error is None:
                s["status"] = fut.result.send_status.name
            else:
                s["error"] = f"{type(fut.error).__name__}: {fut.error}"
            s["attempts"] = [
                f"{m['brokerName']}/{m['queueId']}"
                for e in lab.trace.events[mark:]
                if e.step == "selectOneMessageQueue"
                for m in [dict(kv.split("=") for kv in e.fields["mq"][14:-1].split(", "))]
            ]
            s["broker"], _, q = s["attempts"][0].partition("/")
            s["queueId"] = int(q)
            return s

        lab.advance(15_000 - lab.now)
        for i in range(4):
            send(f"warm-{i}")
        lab.advance(25_000 - lab.now)
        lab.power_cut("broker-a")
        frozen = lab.now
        sends, after = [], 0
        while after < 4:
            s = send(f"freeze-{len(sends)}")
            sends.append(s)
            left = _route_left(lab)
            after += left is not None and left <= s["at"]
        drops = [e.t_ms for e in lab.trace.events
                 if e.component == "RouteInfoManager.onChannelDestroy"]  # fmt: skip
        idle = [e.fields["since"] for e in lab.trace.events if e.step == "idle"]
        return {"brokers": ["broker-a", "broker-b"], "frozenAt": frozen, "sends": sends,
                "routeLeftAt": _route_left(lab), "droppedAt": drops[0],
                "lastFrameAt": idle[0]}  # fmt: skip


def _route_left(lab: Lab) -> int | None:
    for e in lab.trace.events:
        text = e.describe() if e.step == "route" and e.node == "producer-1" else ""
        if "T: route [broker-b:2w/2r] (changed)" in text:
            return e.t_ms
    return None


def _check(run: dict, slack_ms: int) -> list[tuple]:
    """What both runs must show (the module's docstring). Returns the sends from the first
    failure to the route change, as (broker, queue id, ok), up to the first send that made a
    second attempt (below)."""
    sends, left = run["sends"], run["routeLeftAt"]
    assert run["brokers"] == ["broker-a", "broker-b"]
    assert left, f"the producer's route never left broker-a out: {sends}"
    assert abs(run["droppedAt"] - run["lastFrameAt"] - IDLE_S * 1000) <= slack_ms * 2, run
    # (the harness sees the drop by asking the name server every 50 ms)
    assert -slack_ms // 4 <= left - run["droppedAt"] <= 1000 + slack_ms, run
    before = [s for s in sends if s["at"] < left]
    after = [s for s in sends if s["at"] >= left]
    for s in before:
        if s["broker"] == "broker-a":
            assert 3000 <= s["ms"] <= 3000 + slack_ms, s
            # a second attempt, on broker-b with no time left, is Java's when its clock read
            # the timeout to the millisecond (``timeout < costTime`` is false), and a third,
            # on broker-a, when it still did; never mqlab's
            tries = [a.partition("/")[0] for a in s["attempts"]]
            assert tries == ["broker-a", "broker-b", "broker-a"][: len(tries)], s
            assert len(tries) == 1 or slack_ms > 2, s
            if len(tries) < RETRIES + 1:
                assert s.get("error") == TIMEOUT, s
            else:  # no retry left: sendDefaultImpl's own failure, with every broker tried
                assert (
                    s.get("error", "").startswith(
                        "MQClientException: Send [3] times, still failed, cost ["
                    )
                    and "BrokersSent: [broker-a, broker-b, broker-a]" in s["error"]
                ), s
        else:
            assert s.get("status") == "SEND_OK" and s["ms"] <= slack_ms, s
            assert len(s["attempts"]) == 1, s
    first = next(i for i, s in enumerate(before) if "error" in s)
    pattern = []
    for s in before[first:]:
        pattern.append((s["broker"], s["queueId"], "error" not in s))
        if len(s["attempts"]) > 1:
            break
    steady = pattern[1:]
    want = [("broker-b", 1, True), ("broker-a", 0, False)] * len(steady)
    assert steady == want[: len(steady)], pattern
    # each failure takes the whole timeout, each success next to nothing
    fails = sum(1 for s in before if "error" in s)
    assert abs(fails - (left - run["frozenAt"]) / 3000) <= 1.5, (fails, run)
    assert len(after) >= 4
    assert all(s.get("status") == "SEND_OK" and s["broker"] == "broker-b" for s in after), after
    return pattern


def _index(text: str) -> int | None:
    """``ThreadLocalIndex{threadLocalIndex=N}``'s N (None before the thread's first use)."""
    value = text.rsplit("=", 1)[1].rstrip("}")
    return None if value == "null" else int(value)


QUEUES = ["broker-a/0", "broker-a/1", "broker-b/0", "broker-b/1"]


def _select(index: int, last_broker: str | None) -> tuple[int, str]:
    """4.9.3's ``TopicPublishInfo#selectOneMessageQueue(lastBrokerName)`` over [a0, a1, b0,
    b1]: the index moves on by one, and on past ``last_broker``'s queues (at most a round)."""
    for _ in range(len(QUEUES)):
        index += 1
        q = QUEUES[index % len(QUEUES)]
        if last_broker is None or not q.startswith(last_broker + "/"):
            return index, q
    return index + 1, QUEUES[(index + 1) % len(QUEUES)]


def _check_real_queue_index(run: dict) -> None:
    """The Java producer's queue choice, read off its ``ThreadLocalIndex`` before and after
    each send: every attempt, and every failed attempt's retry selection too (made before
    ``sendDefaultImpl`` finds no time left), moves the index as :func:`_select` does. A
    route refresh that changes the route gives the producer a new TopicPublishInfo, whose
    index starts at random: those sends are not checked."""
    checked = 0
    for s in run["sends"]:
        before, after = _index(s["indexBefore"]), _index(s["indexAfter"])
        if s["info"] != s["infoAfter"] or before is None or s["at"] >= run["routeLeftAt"]:
            continue
        index, last = before, None
        for i, attempted in enumerate(s["attempts"]):
            index, q = _select(index, last)
            assert q == attempted, (i, s)
            last = attempted.partition("/")[0]
        if "error" in s and len(s["attempts"]) < RETRIES + 1:
            index, _ = _select(index, last)  # the retry's selection, then no time left
        assert index == after, s
        checked += 1
    assert checked >= 3, run["sends"]
    ok_on_b = sum(1 for s in run["sends"] + run["warm"] if "SEND_OK" == s.get("status")
                  and s["broker"] == "broker-b")  # fmt: skip
    second = sum(1 for s in run["sends"] for a in s["attempts"][1:] if a.startswith("broker-b"))
    # a second attempt with 0 ms left may still be written to broker-b, which stores it: a
    # message stored though its send failed (unless the clock moved on before the write,
    # sendKernelImpl's and invokeSync's own ``timeout < costTime`` checks)
    assert 0 <= sum(run["storedOnB"].values()) - ok_on_b <= second, run


def test_a_silent_broker_costs_the_producer_a_whole_timeout_per_send_until_the_route_leaves_it(
    two_brokers, tmp_path: Path
):
    real = _real_run(two_brokers, tmp_path)
    lab = _lab_run()
    real_pattern = _check(real, slack_ms=400)
    _check_real_queue_index(real)
    lab_pattern = _check(lab, slack_ms=2)  # a round trip over the 1 ms links
    n = min(len(real_pattern), len(lab_pattern))
    assert real_pattern[1:n] == lab_pattern[1:n]


def test_mqlab_pins_the_silent_broker_run():
    """The simulator's run, exactly: broker-a's last registration is read at 20 001 ms, its
    machine loses power at 25 000, and the name server's idle close drops it at 31 001
    (20 001 + 11 000). The producer's route poll of 31 022 leaves it out; the send begun at
    31 006, before that, still waits out its 3 s."""
    run = _lab_run()
    assert (run["lastFrameAt"], run["droppedAt"], run["routeLeftAt"]) == (20_001, 31_001, 31_022)
    ok = "SEND_OK"
    assert [(s["at"], s["ms"], s["broker"], s["queueId"], s.get("status") or s["error"])
                   for s in run["sends"]] == [
        (25_000, 2, "broker-b", 1, ok),
        (25_002, 3000, "broker-a", 0, TIMEOUT),
        (28_002, 2, "broker-b", 1, ok),
        (28_004, 3000, "broker-a", 0, TIMEOUT),
        (31_004, 2, "broker-b", 1, ok),
        (31_006, 3000, "broker-a", 0, TIMEOUT),
        (34_006, 2, "broker-b", 1, ok),
        (34_008, 2, "broker-b", 0, ok),
        (34_010, 2, "broker-b", 1, ok),
        (34_012, 2, "broker-b", 0, ok),
    ]  # fmt: skip
