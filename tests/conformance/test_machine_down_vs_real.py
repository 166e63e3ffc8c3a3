"""A broker that falls silent, asked of the real 4.9.3 name server: it drops the broker when
the broker's channel has gone ``serverChannelMaxIdleTimeSeconds`` without a read or a write
(Netty's ``IdleStateHandler``, ``BrokerHousekeepingService#onChannelIdle``), not at
``scanNotActiveBroker``'s 120 s, as ``mqlab.runtime.sim.SimDriver._watch_idle`` does after
``lab.power_cut`` (``tests/lab/test_machine_down.py``).

Two JVMs: a name server alone, with ``serverChannelMaxIdleTimeSeconds`` 4 (120 by default)
to keep the module short, and a broker whose name server address is a relay
(``mqlab.conformance.dledger_capture``, recording the frames with their times). The broker's
JVM is stopped with SIGSTOP right after its first registration: its kernel still
acknowledges, but nothing more is read or written on the name server's channel, as after a
power cut. About 15 s.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from mqlab import Lab
from mqlab.conformance.dledger_capture import FrameCapture, broker_behind_relay
from mqlab.conformance.real_cluster import RealCluster, RealClusterError
from mqlab.conformance.wire import broker_addr_table, wait_until
from mqlab.remoting.codes import RequestCode

pytestmark = pytest.mark.conformance

IDLE_S = 4


@pytest.fixture(scope="module")
def silent_broker(
    java_runner, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RealCluster, FrameCapture, RealCluster]]:
    """The name server's JVM, the relay, and the broker's JVM (registered through it)."""
    try:
        with broker_behind_relay(
            tmp_path_factory.mktemp, broker_name="broker-s",
            namesrv_properties={"serverChannelMaxIdleTimeSeconds": str(IDLE_S)},
        ) as cluster:  # fmt: skip
            yield cluster
    except RealClusterError as e:
        pytest.fail(str(e))


def test_the_name_server_drops_a_silent_broker_when_its_channel_has_been_idle(silent_broker):
    ns, relay, broker = silent_broker
    wait_until(lambda: broker_addr_table(ns.namesrv_addr, "broker-s") != {}, 30,
               "broker-s registered")  # fmt: skip
    regs = [f for f in relay.frames()
            if f.src == "broker" and f.command().code == RequestCode.REGISTER_BROKER]  # fmt: skip
    assert regs, "no REGISTER_BROKER went through the relay"
    os.kill(broker.pid, signal.SIGSTOP)  # the machine falls silent: nothing read or written
    stopped_ms = relay._now_ms()
    last_ms = max(f.t_ms for f in relay.frames())  # the name server's last read or write
    assert stopped_ms - last_ms < IDLE_S * 1000 - 1500, "a frame too close to the stop"
    wait_until(lambda: broker_addr_table(ns.namesrv_addr, "broker-s") == {}, IDLE_S + 30,
               "the name server to drop broker-s", pause_s=0.05)  # fmt: skip
    dropped_ms = relay._now_ms()
    # the channel's close reaches the relay as the name server's end of stream
    eofs = [e.t_ms for e in relay.events("broker", "namesrv")
            if e.kind == "eof" and e.src == "namesrv"]  # fmt: skip
    assert len(eofs) == 1
    assert abs((eofs[0] - last_ms) - IDLE_S * 1000) < 600, eofs[0] - last_ms
    assert abs((dropped_ms - last_ms) - IDLE_S * 1000) < 600, dropped_ms - last_ms


def test_mqlab_drops_a_powered_off_broker_when_its_channel_has_been_idle():
    """The same in the simulator, with the same limit: the broker's last registration is
    answered at 10 001 ms (registerBrokerAll: at its start, then every 30 s from 10 s), its
    machine loses power at 12 000, and the name server's idle close drops it at
    10 001 + 4000 ms."""
    with Lab(seed=1) as lab:
        lab.namesrv.netty_server_config.server_channel_max_idle_time_seconds = IDLE_S
        lab.advance(12_000 - lab.now)
        lab.power_cut("broker-a")
        lab.advance(10_000)
        idle = [(e.t_ms, e.fields["since"]) for e in lab.trace.events if e.step == "idle"]
        drop = [e.t_ms for e in lab.trace.events
                if e.component == "RouteInfoManager.onChannelDestroy"]  # fmt: skip
        assert idle == [(14_001, 10_001)] and drop == [14_001]
