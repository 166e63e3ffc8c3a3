"""tools/instructions.py: instructions per replay from two callgrind counts (CONTRIBUTING.md §8).

The counting needs valgrind and ~a minute of CPU, so it is left to whoever compares trees; here
its arithmetic and its reading of callgrind's output are checked, and that the replay it runs
is the search's replay of the default schedule.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tool():
    spec = importlib.util.spec_from_file_location("instructions", ROOT / "tools/instructions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reads_callgrind_total():
    stderr = "==12== Callgrind, a call-graph generating cache profiler\n==12== Events    : Ir\n" \
        "==12== Collected : 3480771777\n==12==\n==12== I   refs:      3,480,771,777\n"  # fmt: skip
    assert tool().collected(stderr) == 3_480_771_777
    with pytest.raises(RuntimeError, match="no callgrind total"):
        tool().collected("valgrind: command failed")


def test_one_unit_is_the_difference_over_the_units():
    t = tool()
    assert t.per_unit(1_000, 1_650, 3, 13) == 65.0
    with pytest.raises(ValueError):
        t.per_unit(1, 2, 5, 5)


def test_the_replay_it_counts_runs_the_scenario(tmp_path):
    """The code it runs under valgrind, run plainly: two replays of a scenario, no output."""
    out = subprocess.run(
        [sys.executable, *tool()._replay_argv("dledger_split_vote", 2)],
        capture_output=True, text=True, cwd=tmp_path, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.stdout == ""
