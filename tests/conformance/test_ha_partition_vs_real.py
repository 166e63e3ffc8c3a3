"""A silent partition between a real 4.9.3 SYNC_MASTER and its real slave, and the heal.

What ``Lab.cut_link(master, slave, silent=True)`` (the control panel's "partition") and
``test_lab_faults.test_a_silent_partition_times_sync_sends_out_until_housekeeping`` say of
mqlab, asked of the real broker. One real cluster for the module (one JVM: name server,
``broker-a`` as SYNC_MASTER, its slave); the slave's HA connection goes through the relay of
``mqlab.conformance.dledger_capture`` (a raw link, ``frames=False``: HA bytes are not
remoting frames), which the test cuts silently: nothing crosses, nothing is closed, and what
each side sends waits, as in its kernel, for TCP's first retransmission after the heal.

The master's ``haHousekeepingInterval`` is 7500 ms here (20 000 by default) to keep the
module short; the slave reports every 1000 ms (``haSendHeartbeatInterval``, slave side).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from mqlab.common.message_decoder import decode_message_id
from mqlab.conformance.dledger_capture import FrameCapture
from mqlab.conformance.real_cluster import RealCluster, RealClusterError
from mqlab.conformance.replication import runtime_info
from mqlab.conformance.wire import send_v2, wait_until
from mqlab.remoting.codes import ResponseCode
from mqlab.runtime.sim import tcp_retransmission_at

pytestmark = pytest.mark.conformance

TOPIC = "HaPartition"
GROUP = "ha-partition-producer"
HOUSEKEEPING_MS = 7500


@pytest.fixture(scope="module")
def real_cluster_properties() -> dict[str, str]:
    return {"brokerRole": "SYNC_MASTER", "haHousekeepingInterval": str(HOUSEKEEPING_MS)}


@pytest.fixture(scope="module")
def relayed(real_cluster: RealCluster) -> Iterator[tuple[RealCluster, FrameCapture, str]]:
    """The cluster, the relay, and the slave's broker address; its HA connection relayed."""
    relay = FrameCapture()
    try:
        port = relay.add_link("slave", "master", real_cluster.ha_port, frames=False)
        try:
            slave = real_cluster.start_slave(
                properties={"haMasterAddress": f"127.0.0.1:{port}",
                            "haSendHeartbeatInterval": "1000"},
            )  # fmt: skip
        except RealClusterError as e:
            pytest.fail(str(e))
        yield real_cluster, relay, slave.broker_addr
    finally:
        relay.close()


def _offset(resp) -> int:
    return decode_message_id(resp.ext_fields["msgId"])[1]


def _max_offset(addr: str) -> int:
    return int(runtime_info(addr)["commitLogMaxOffset"])


def test_a_silent_partition_then_the_heal(relayed: tuple[RealCluster, FrameCapture, str]):
    """Before the cut a send answers SEND_OK. During it every send answers
    FLUSH_SLAVE_TIMEOUT (12) after slaveTimeout (3 s) while the master keeps its HA
    connection; the master closes it once no report has come for haHousekeepingInterval
    (7500 ms, checked after each 1 s select), and the next send answers SLAVE_NOT_AVAILABLE
    (11) at once. The slave keeps its side: its HAClient closes only when its own reports
    stall. At the heal the relay lets the held bytes go at TCP's first retransmission; the
    slave's old connection takes the master's pushes made into the partition, as mqlab's Lab
    has it, and the slave connects again: its first report on the new connection is the end
    of the last push it appended. Then it catches up with the master.

    How many of the held pushes the slave appends depends on timing, which the Lab does not
    model: the master closed its socket, so the slave's first report after a push meets a
    reset, and the slave drops the connection with the rest of its buffer at the next report
    that fails ("reportSlaveMaxOffset error", then "dispatchReadRequest error"). On
    loopback the reset came back before the second report (2 of 3 pushes appended); the
    Lab's 1 ms links leave no room for it, and its slave appends all of them."""
    cluster, relay, slave_addr = relayed
    wait_until(
        lambda: send_v2(cluster.broker_addr, TOPIC, b"before", group=GROUP).code
        == ResponseCode.SUCCESS,
        60, "a SEND_OK with the slave connected", pause_s=0.5,
    )  # fmt: skip
    relay.block("slave", "master", silent=True)
    t0 = time.monotonic()
    answers: list[tuple[float, int, float, int]] = []
    for i in range(8):
        start = time.monotonic()
        resp = send_v2(cluster.broker_addr, TOPIC, b"cut %d" % i, group=GROUP, timeout=30)
        answers.append((start - t0, resp.code, time.monotonic() - start, _offset(resp)))
        if resp.code != ResponseCode.FLUSH_SLAVE_TIMEOUT:
            break
    events = relay.events("slave", "master")
    close = next(e for e in events if (e.kind, e.src) == ("eof", "master"))
    last_report = max(e.t_ms for e in events
                      if (e.kind, e.src) == ("bytes", "slave") and e.n == 8)  # fmt: skip
    # the master's housekeeping: no report for 7500 ms, seen after a 1 s select at most (the
    # relay's clock reads both ends a little late on a loaded machine: 500 ms of slack below,
    # 3000 above)
    assert HOUSEKEEPING_MS - 500 <= close.t_ms - last_report <= HOUSEKEEPING_MS + 3000
    assert not any(e.kind == "eof" and e.src == "slave" for e in events)
    codes = [code for _, code, _, _ in answers]
    assert codes[:-1] == [ResponseCode.FLUSH_SLAVE_TIMEOUT] * (len(codes) - 1)
    assert codes[-1] == ResponseCode.SLAVE_NOT_AVAILABLE
    assert all(2.9 <= took <= 6.0 for _, _, took, _ in answers[:-1])  # slaveTimeout 3000
    assert answers[-1][2] < 2.5  # at once, not after slaveTimeout
    master_end = _max_offset(cluster.broker_addr)

    healed_ms = relay._now_ms()
    relay.unblock("slave", "master")
    wait_until(lambda: _max_offset(slave_addr) == master_end, 60,
               "the slave caught up with the master", pause_s=0.2)  # fmt: skip
    events = relay.events("slave", "master")
    held = [e for e in events if e.kind == "held" and e.conn == 1]
    [pushes] = [e for e in events if (e.kind, e.src, e.conn) == ("release", "master", 1)]
    since = min(e.t_ms for e in held if e.src == "master")
    assert pushes.t_ms >= tcp_retransmission_at(since, healed_ms) - 5
    assert pushes.n == sum(e.n for e in held if e.src == "master")
    accepts = [e for e in events if e.kind == "accept"]
    assert [e.conn for e in accepts] == [1, 2] and accepts[1].t_ms >= pushes.t_ms
    first_report = next(e for e in events
                        if (e.kind, e.src, e.conn) == ("bytes", "slave", 2))  # fmt: skip
    # what the old connection carried: every message answered 12, up to the one answered 11
    # the old connection carried the first push at least: the slave's first report on the
    # new one is the end of a message pushed into the partition (see the docstring)
    carried = int.from_bytes(first_report.data[:8], "big")
    assert carried in [offset for _, _, _, offset in answers[1:]]
