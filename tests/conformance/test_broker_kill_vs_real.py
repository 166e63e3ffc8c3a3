"""A broker killed while a push consumer's pull is parked there, asked of the real 4.9.3
client: the pull is not failed when the connection closes. It waits out its 30 s timeout
(``CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND``), found by ``scanResponseTable`` up to 2 s later, and
the consumer pulls again ``pullTimeDelayMillsWhenException`` (1 s) after that. So a message sent
to the restarted broker 3 s after the kill is consumed only about 32 s after the pull was sent.

Why: the killed process's kernel closes its sockets with a FIN. Netty closes the client's
channel on reading the end of stream, without an outbound ``close`` through the pipeline, and
4.9.3's ``NettyRemotingClient.NettyConnectManageHandler`` has no ``channelInactive``: its
``failFast`` runs only when the client closes a channel itself (an exception such as a reset, an
idle channel, its shutdown). ``mqlab.runtime.sim.SimDriver._close`` does the same.

Two JVMs: the name server, and broker-a, which :meth:`RealCluster.kill` ends with SIGKILL and
:meth:`RealCluster.restart` starts again on the same store and ports. A third runs the Java
scenario ``push-broker-kill``. About 45 s, most of it the 30 s the pull waits.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab import Lab, Message
from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus
from mqlab.conformance.real_cluster import RealCluster, RealClusterError
from mqlab.conformance.wire import broker_addr_table, wait_until
from mqlab.interop.java_client import run_java_interactive

pytestmark = pytest.mark.conformance

TIMEOUT_MS = 30_000  # DefaultMQPushConsumerImpl.CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND
DELAY_MS = 1_000  # ClientConfig.pullTimeDelayMillsWhenException


@pytest.fixture(scope="module")
def killable_broker(java_runner, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """JVM 1: the name server; JVM 2: broker-a, registered with it."""
    ns = RealCluster(tmp_path_factory.mktemp("namesrv"), broker=False)
    broker: RealCluster | None = None
    try:
        ns.start()
        broker = RealCluster(tmp_path_factory.mktemp("broker-a"), broker_name="broker-a",
                             namesrv_addr=ns.namesrv_addr)  # fmt: skip
        broker.start()
        wait_until(lambda: broker_addr_table(ns.namesrv_addr, "broker-a") != {}, 30,
                   "broker-a registered")  # fmt: skip
        yield ns, broker
    except RealClusterError as e:
        pytest.fail(str(e))
    finally:
        if broker is not None:
            broker.stop()
        ns.stop()


def _lab_run() -> dict:
    """The same in the simulator: m0 consumed at 5 010 ms (the pull that follows is sent then
    and parked); broker-a killed at 6 010, restarted at 8 010; m1 sent at 8 110."""
    with Lab(seed=1) as lab:
        call = lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC", {
            "topic": "K", "defaultTopic": "TBW102", "readQueueNums": 1, "writeQueueNums": 1,
            "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": "false"})  # fmt: skip
        assert call.code == 0
        got: dict[str, int] = {}

        def listener(msgs, ctx):
            for m in msgs:
                got.setdefault(m.body.decode(), lab.now)
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

        fast_routes = ClientConfig(poll_name_server_interval=1000)
        lab.push_consumer("CG", "K", listener=listener, client_config=fast_routes)
        lab.advance(5000)
        producer = lab.producer("PG", client_config=fast_routes)
        producer.send(Message("K", b"m0"))
        while "m0" not in got:
            lab.step()
        lab.advance(1000)
        lab.kill("broker-a")
        lab.advance(2000)
        lab.restart_broker("broker-a", graceful=False)
        lab.advance(100)
        back = lab.now
        producer.send(Message("K", b"m1"))
        while "m1" not in got:
            lab.step()
        timeouts = [e.t_ms for e in lab.trace.events
                    if e.node == "consumer-1" and e.step == "2.6" and "K/broker-a/0 failed" in
                    e.describe() and "wait response" in e.describe()]  # fmt: skip
        return {"m0ConsumedAt": got["m0"], "backAt": back, "m1ConsumedAt": got["m1"],
                "pullTimedOutAt": timeouts}  # fmt: skip


def test_a_parked_pull_outlives_its_killed_broker_until_its_timeout(
    killable_broker, tmp_path: Path
):
    ns, broker = killable_broker
    seen: dict[str, float] = {}

    def kill_restart(event: dict) -> None:
        seen["kill"] = time.time() * 1000
        broker.kill()
        broker.restart()
        wait_until(lambda: broker_addr_table(ns.namesrv_addr, "broker-a") != {}, 30,
                   "broker-a registered again")  # fmt: skip

    real = run_java_interactive("push-broker-kill", ns.namesrv_addr, "kill_", tmp_path,
                                {"kill-restart": kill_restart}, timeout_s=200)  # fmt: skip
    t0 = real["m0ConsumedAt"]  # the parked pull was sent just before m0 reached the listener
    assert 500 <= seen["kill"] - t0 <= 3000, (seen, real)
    assert real["backAt"] - t0 < 15_000, real  # the broker was back long before the timeout
    # not before the pull's timeout; then scanResponseTable's tick (up to 2 s) and 1 s
    assert TIMEOUT_MS <= real["m1ConsumedAt"] - t0 <= TIMEOUT_MS + 2000 + DELAY_MS + 1000, real

    lab = _lab_run()
    t0 = lab["m0ConsumedAt"]
    # scanResponseTable's 1 s grace, without its tick; then the 1 s delay and a round trip
    assert lab["pullTimedOutAt"] == [t0 + TIMEOUT_MS + 1000]
    assert lab["m1ConsumedAt"] - t0 == TIMEOUT_MS + 1000 + DELAY_MS + 2
    assert lab["backAt"] - t0 == 3100
