"""Ctrl-C stops a search on the sequential and the pool runner: the table so far is
printed, marked incomplete, and no worker is left behind (the pool's workers get the
SIGINT too, as a terminal sends it to the whole process group)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("runner", ["sequential", "pool"])
def test_ctrl_c_prints_the_table_so_far(runner):
    cmd = [sys.executable, "-m", "mqlab", "explore", "consumer_join", "--bounds", "depth=14",
           "--runner", runner, "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    err = bytearray()
    searching = threading.Event()

    def pump() -> None:  # the progress bar (stderr) says when the search has begun
        while chunk := os.read(proc.stderr.fileno(), 4096):
            err.extend(chunk)
            if b"explore consumer_join" in err:
                searching.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        assert searching.wait(120), bytes(err[-2000:])
        time.sleep(2)  # some levels in: a whole search takes ~30 s
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)  # a hang raises here (the table is small: stdout cannot fill up)
        out = proc.stdout.read().decode()
        reader.join(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, bytes(err[-2000:])
    assert "(incomplete)" in out
    assert out.splitlines()[0] == "scenario consumer_join: " + (
        "consumer-2 joins while consumer-1 consumes 4 messages on 2 queues"
    )
    with pytest.raises(ProcessLookupError):  # the whole group is gone: no worker left
        os.killpg(proc.pid, 0)
