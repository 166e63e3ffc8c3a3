"""Fixtures shared by every test directory."""

from __future__ import annotations

import pytest


def copy_master_commit_log_for_test(master, slave) -> int:
    """A test's stand-in for HA replication: append the master's commit-log bytes that the
    slave lacks to the slave's commit log, then let the slave's reput build its consume
    queues. Returns the number of bytes copied.

    Not a mechanism of mqlab: the slave's HAClient does this over the HA connection
    (mechanisms.md "SlaveSynchronize" says what a slave gets without it: metadata only).
    """
    src, dst = master.message_store.commit_log, slave.message_store.commit_log
    start, end = dst.get_max_offset(), src.get_max_offset()
    assert start <= end, f"the slave is ahead of its master ({start} > {end})"
    offset = start
    while offset < end:
        found = src.get_data(offset)
        assert found is not None, f"the master has no bytes at {offset}"
        mf, pos, stop = found
        chunk = bytes(mf.view[pos:stop])
        target = dst.mapped_file_queue.get_last_mapped_file_or_create(offset)
        assert target.file_from_offset + target.wrote_position == offset
        assert target.append_message(chunk)
        offset += len(chunk)
    slave.message_store.do_reput()
    return end - start


@pytest.fixture
def copy_commit_log():
    """``copy_commit_log(master, slave)``: see ``copy_master_commit_log_for_test``."""
    return copy_master_commit_log_for_test
