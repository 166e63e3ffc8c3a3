"""``bench real --group sync`` on both brokers: the wait for the slave and a tiny Java run.

A SYNC_MASTER with one slave on each side (mqlab ``serve --slaves 1 --broker-role
SYNC_MASTER``; the real 4.9.3 master with a real slave in its JVM), one at a time. Mirrors
``CommitLog#handleHA`` (4.9.3): before its slave reports, the master answers
SLAVE_NOT_AVAILABLE or FLUSH_SLAVE_TIMEOUT, after writing the message; the bench's probes
are stored as 133 bytes on both (tests/test_bench_real.py). Then ``JavaBench`` (the Java
4.9.3 client) sends 200 warm-up and 20 measured messages from one thread: every one comes
back SEND_OK and is consumed. Nothing timed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mqlab.bench.real import run_java_bench, send_ok_problems, wait_for_slave
from mqlab.interop.targets import open_target

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

PROBE_SIZE = 133
RETRY = {"SLAVE_NOT_AVAILABLE", "FLUSH_SLAVE_TIMEOUT"}


@pytest.mark.parametrize("kind", ["real", "mqlab"])
def test_sync_group_acknowledges_every_java_send_once_the_slave_reports(
    kind: str, java_runner: Path, tmp_path: Path
) -> None:
    target = open_target(kind, tmp_path / kind, broker_role="SYNC_MASTER", slaves=1)
    try:
        assert target.slave_addr and target.slave_addr != target.broker_addr
        ready = wait_for_slave(target.broker_addr, target.slave_addr)
        assert ready.answers[-1] == "SEND_OK"
        assert set(ready.answers[:-1]) <= RETRY
        assert ready.master_max_offset == len(ready.answers) * PROBE_SIZE
        assert ready.slave_max_offset == ready.master_max_offset

        r = run_java_bench(target.namesrv_addr, "BenchTiny", 1, 20, tmp_path / "java")
        assert (r["warmup"], r["sent"], r["failed"], r["consumed"]) == (200, 20, 0, 20)
        assert r["sendStatus"] == {"SEND_OK": 20}
        assert r["warmupSendStatus"] == {"SEND_OK": 200}
        assert send_ok_problems(r, 20) == []
    finally:
        target.close()
