"""HA replication on the wire with the real RocketMQ 4.9.3 broker, both ways.

B1: the real master ``broker-a`` replicates to an mqlab slave (net driver, brokerId 1); B2: an
mqlab master ``broker-b`` replicates to a real 4.9.3 slave, run in the real cluster's JVM. One
real cluster for the module (one JVM: name server, master, slave). Mirrors 4.9.3's
``HAService`` / ``HAConnection`` / ``HAClient`` on each side (mechanisms.md "HA replication");
the harness is mqlab/conformance/replication.py. Exact byte counts, offsets and consume-queue
units; nothing timed.

Each message: a 4-queue topic, queue ``i % 4``, tags ``Tag{i % 2}``, keys ``k{i:02d}``, body
``ha-<topic>-{i:02d}``, message 3's with 40,000 bytes more (longer than haTransferBatchSize,
32 KiB: it crosses an HA block boundary). Stored sizes: 170 B on ``HaWireRealMaster``, 172 B
on ``HaWireMqlabMaster`` (one topic character more), 40,000 B more for message 3; the same on
both brokers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mqlab.conformance.real_cluster import RealCluster, RealClusterError
from mqlab.conformance.replication import (
    MESSAGES,
    ReplicationCheck,
    body_of,
    check_replication,
    summary_line,
)

pytestmark = pytest.mark.conformance

#: String#hashCode of "Tag0" and "Tag1": the tags code in a consume-queue unit
TAG0, TAG1 = 2598902, 2598903


@pytest.fixture(scope="module")
def replication(
    real_cluster: RealCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RealCluster, ReplicationCheck, ReplicationCheck]]:
    """Both directions, run once for the module; the real master and the mqlab master are
    stopped at the end of it (the Java consumer reads the slaves)."""
    try:
        b1, b2 = check_replication(real_cluster, tmp_path_factory.mktemp("ha-wire"))
    except RealClusterError as e:
        pytest.fail(str(e))
    yield real_cluster, b1, b2


#: (commit-log offset, size, tags code) per queue: queue q holds messages q and q + 4
UNITS_B1 = {
    0: [(0, 170, TAG0), (40680, 170, TAG0)],
    1: [(170, 170, TAG1), (40850, 170, TAG1)],
    2: [(340, 170, TAG0), (41020, 170, TAG0)],
    3: [(510, 40170, TAG1), (41190, 170, TAG1)],
}
UNITS_B2 = {
    0: [(0, 172, TAG0), (40688, 172, TAG0)],
    1: [(172, 172, TAG1), (40860, 172, TAG1)],
    2: [(344, 172, TAG0), (41032, 172, TAG0)],
    3: [(516, 40172, TAG1), (41204, 172, TAG1)],
}


SENDS = [(i % 4, i // 4) for i in range(MESSAGES)]


def test_b1_real_master_to_mqlab_slave_bytes_identical(replication) -> None:
    """The mqlab slave took the master's HA address from its registration with the real name
    server, and holds the real master's commit log [0, 41360) byte for byte."""
    real, b1, _ = replication
    assert b1.learned_ha_address == f"127.0.0.1:{real.ha_port}"
    assert b1.sends == SENDS
    assert (b1.replicated_from, b1.master_max_offset, b1.slave_max_offset) == (0, 41360, 41360)
    assert b1.first_difference is None
    assert b1.replicated_bytes == 41360 == 8 * 170 + 40000


def test_b1_mqlab_slave_consume_queues_match_the_real_masters(replication) -> None:
    """The mqlab slave's reput built the same units as the real master's consume queues."""
    _, b1, _ = replication
    assert b1.master_queues == UNITS_B1
    assert b1.slave_queues == UNITS_B1


def test_b2_mqlab_master_to_real_slave_bytes_identical(replication) -> None:
    """The real 4.9.3 slave replicated the mqlab master's commit log [0, 41376) byte for byte."""
    _, _, b2 = replication
    assert b2.sends == SENDS
    assert (b2.replicated_from, b2.master_max_offset, b2.slave_max_offset) == (0, 41376, 41376)
    assert b2.first_difference is None
    assert b2.replicated_bytes == 41376 == 8 * 172 + 40000


def test_b2_real_slave_consume_queues_match_the_mqlab_masters(replication) -> None:
    _, _, b2 = replication
    assert b2.master_queues == UNITS_B2
    assert b2.slave_queues == UNITS_B2


def test_java_consumer_reads_every_message_from_each_slave_with_the_master_stopped(
    replication,
) -> None:
    """DefaultMQPullConsumer, masters stopped (gone from the route): all 8 messages of each
    topic, at the queue offsets their sends were given, from the slaves."""
    real, b1, b2 = replication
    assert real.master_stopped and real.running
    for check in (b1, b2):
        want = sorted((q, o, body_of(check.topic, i)) for i, (q, o) in enumerate(SENDS))
        assert sorted(check.read_from_slave) == want
        assert check.problems() == []


def test_summary_line(replication) -> None:
    _, b1, b2 = replication
    assert summary_line(b1, b2) == (
        "replication: real master -> mqlab slave 41360 bytes identical, "
        "mqlab master -> real slave 41376 bytes identical"
    )


def test_a_stopped_master_leaves_the_slave_running_until_the_cluster_stops(replication) -> None:
    """stop_master() left the JVM and its slave running; a command the runner cannot carry out
    answers 'failed N', which raises; stop() ends the slave and the JVM, exit 0. (Last: it
    stops the module's cluster.)"""
    real, _, _ = replication
    assert set(real.slaves) == {"broker-b"}
    with pytest.raises(RealClusterError, match=r"stop-master failed: .*already stopped"):
        real.stop_master()
    with pytest.raises(RealClusterError, match=r"no slave of broker-a was started"):
        real.stop_slave("broker-a")
    assert real.running
    real.stop()
    assert real.returncode == 0
    assert real.output().rstrip().endswith("mqlab-real-cluster stopped")
