"""A search loads neither pandas nor plotly: they are the lab's, and cost a CLI start or a
pool worker ~0.5 s and ~90 MB (``mqlab.lab.allocation``; pandas is imported where a frame
is built)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from mqlab.explore import cli, runners
from mqlab.explore.scenarios import SCENARIOS
from mqlab.explore.search import replay
for name in sorted(SCENARIOS):
    replay(SCENARIOS[name], "")
print(sorted(m for m in ("pandas", "plotly", "numpy", "pyarrow") if m in sys.modules))
"""


def test_replaying_every_scenario_imports_no_pandas_nor_plotly():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         timeout=300, check=True)  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_lab_still_gives_frames():
    from mqlab.lab.checkers import CheckReport

    report = CheckReport(name="x", ok=True, summary="")
    assert type(report.findings).__name__ == "DataFrame"
    assert report.findings.empty
