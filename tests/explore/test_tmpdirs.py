"""A search killed with SIGKILL leaves its scratch files (journal, spool, stores); the next
search removes them, and leaves a live owner's alone (``mqlab.explore.tmpdirs``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from mqlab.explore import tmpdirs
from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore

pytestmark = pytest.mark.slow


def _kinds(names: list[str]) -> set[str]:
    return {n.split("-")[2] for n in names if n.startswith("mqlab-explore-")}


def test_the_next_search_sweeps_a_killed_searchs_files_only(tmp_path, monkeypatch):
    env = {**os.environ, "MQLAB_EXPLORE_TMP": str(tmp_path)}
    cmd = [sys.executable, "-m", "mqlab", "explore", "consumer_join", "--no-progress",
           "--bounds", "depth=14", "--runner", "pool", "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    try:
        for _ in range(1200):  # until a level runs: its journal, spool and stores all there
            if _kinds(os.listdir(tmp_path)) >= {"journal", "spool", "store"} or proc.poll():
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        os.killpg(proc.pid, signal.SIGKILL)  # the search and its pool workers, at once
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    for _ in range(600):  # the workers are gone too (init reaps them)
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    left = sorted(os.listdir(tmp_path))
    assert _kinds(left) >= {"journal", "spool", "store"}
    owners = {n.split("-")[3] for n in left}
    assert f"p{proc.pid}" in {o.split("t")[0] for o in owners}
    # a live owner's (this process), a name of the old form, an owner whose pid was reused
    live = tmp_path / f"mqlab-explore-store-{tmpdirs.owner_tag()}-live"
    live.mkdir()
    (live / "commitlog").write_bytes(b"x")
    old = tmp_path / "mqlab-explore-3kq9a1bz"
    old.mkdir()
    reused = tmp_path / f"mqlab-explore-journal-p{os.getpid()}t1-abc"
    reused.write_bytes(b"")
    monkeypatch.setenv("MQLAB_EXPLORE_TMP", str(tmp_path))
    res = explore("async_flush_power_cut", Bounds(depth=1, max_runs=1), shrink_outcomes=False)
    assert res.runs == 1
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, old.name])
    assert (live / "commitlog").read_bytes() == b"x"


def test_sweep_reads_the_owner_from_the_name(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    start = tmpdirs._start_ticks(os.getpid())
    assert start is not None and start > 0  # Linux: /proc gives the start time
    names = [
        f"mqlab-explore-spool-p{child.pid}t5-a",  # gone
        f"mqlab-explore-store-p{os.getpid()}t{start}-b",  # alive: this process
        f"mqlab-explore-store-p{os.getpid()}t{start + 1}-c",  # this pid, another start
        "mqlab-explore-levels-pxt1-d",  # not a pid: not ours to judge
        "other-p1t1-e",
    ]
    for n in names:
        (tmp_path / n).mkdir()
    assert tmpdirs.sweep(str(tmp_path)) == sorted([names[0], names[2]])
    assert sorted(os.listdir(tmp_path)) == sorted([names[1], names[3], names[4]])
