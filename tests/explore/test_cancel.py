"""Ctrl-C stops a search on the sequential and the pool runner: the table so far is
printed, marked incomplete, and no worker is left behind (the pool's workers get the
SIGINT too, as a terminal sends it to the whole process group)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("runner", ["sequential", "pool"])
def test_ctrl_c_prints_the_table_so_far(runner):
    cmd = [sys.executable, "-m", "mqlab", "explore", "consumer_join", "--bounds", "depth=14",
           "--runner", runner, "--workers", "2", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        time.sleep(6)  # imports, then some levels: a whole search takes ~30 s
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-2000:]
    assert "(incomplete)" in out
    assert out.splitlines()[0] == "scenario consumer_join: " + (
        "consumer-2 joins while consumer-1 consumes 4 messages on 2 queues"
    )
    with pytest.raises(ProcessLookupError):  # the whole group is gone: no worker left
        os.killpg(proc.pid, 0)
