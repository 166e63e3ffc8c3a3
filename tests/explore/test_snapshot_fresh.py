"""Runs ``test_snapshot.py`` in a fresh interpreter, where forking from a snapshot is possible
(one thread), and requires every one of its tests to pass: none may be skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

pytestmark = pytest.mark.slow


def test_snapshot_tests_pass_in_a_fresh_interpreter():
    env = {**os.environ, "MQLAB_SNAPSHOT_TESTS": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(HERE / "test_snapshot.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    tail = r.stdout[-4000:] + r.stderr[-2000:]
    assert r.returncode == 0, tail
    m = re.search(r"(\d+) passed", r.stdout)
    assert m is not None and int(m.group(1)) >= 17, tail
    assert not re.search(r"\d+ (skipped|failed|error)", r.stdout), tail
