"""Fixtures shared by every test directory."""

from __future__ import annotations

import pytest

# Every kernel a test process starts is reached over ipc (no port another process can take),
# and every kernel client polls zmq patiently (the lost-edge stall); see each module.
import tests.kernel_ipc  # noqa: F401
from tests.patient_zmq import pytest_terminal_summary  # noqa: F401


def replicate_for_test(lab, master, slave, limit_ms: int = 60_000) -> int:
    """Advance ``lab`` millisecond by millisecond until ``slave``'s commit log has every byte
    of ``master``'s, as its HAClient pulls them (mechanisms.md "HA replication"), and its
    reput has dispatched them. Returns the number of bytes the slave gained.

    Raises:
        AssertionError: the slave has not caught up within ``limit_ms``.
    """
    src, dst = master.message_store, slave.message_store
    start, end = dst.commit_log.get_max_offset(), src.commit_log.get_max_offset()
    assert start <= end, f"the slave is ahead of its master ({start} > {end})"
    waited = 0
    while dst.commit_log.get_max_offset() < end or dst.reput_from_offset < end:
        assert waited < limit_ms, (
            f"the slave holds {dst.commit_log.get_max_offset()} of {end} bytes after {waited} ms"
        )
        lab.advance(1)
        waited += 1
    return end - start


@pytest.fixture
def replicate():
    """``replicate(lab, master, slave)``: see ``replicate_for_test``."""
    return replicate_for_test
