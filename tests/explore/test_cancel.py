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


def test_a_cancel_stops_the_search_before_the_next_record():
    """``cancel`` is read before each record, not only between levels: true from its fifth
    call (level 0's check, the root's record, level 1's check, one more record), the search
    stops with 2 runs read, marked incomplete, the table so far printed."""
    from mqlab.explore.engine import Bounds
    from mqlab.explore.scenarios import get_scenario
    from mqlab.explore.search import exhaustive

    calls = [0]

    def cancel() -> bool:
        calls[0] += 1
        return calls[0] >= 5

    xs = get_scenario("consumer_join")
    res = exhaustive(xs, Bounds(depth=13), cancel=cancel, shrink_outcomes=False)
    assert (res.runs, res.complete, calls[0]) == (2, False, 5)
    assert res.outcomes() and "(incomplete)" in res.format()


def test_ctrl_c_swallowed_by_a_finalizer_still_stops_the_search(monkeypatch):
    """A KeyboardInterrupt raised inside a finalizer is printed and dropped by CPython (a
    run's generator tasks are closed as the collector frees its lab); ``stop_on_sigint``'s
    handler has set the flag the search reads before each record all the same."""
    from mqlab.explore.cli import stop_on_sigint

    class Finalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs at the next bytecode: in here
                time.sleep(0)

    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: dropped.append(u.exc_type))
    stop = {"now": False}
    with stop_on_sigint(stop):
        Finalized()  # freed at once: its KeyboardInterrupt goes to sys.unraisablehook
        assert dropped == [KeyboardInterrupt]
        assert stop["now"] is True
        with pytest.raises(KeyboardInterrupt):  # outside a finalizer it raises as usual
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
