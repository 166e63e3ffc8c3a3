"""The browser tier's set-up: scripts/ensure_chromium.sh and the Makefile's e2e switches.

Mirrors no RocketMQ class: workbench plumbing (issue 4, "Tests": Debian's chromium "installed by the
set-up"; CONTRIBUTING.md §4). Owns: the script's messages and exit codes for
the cases a test can arrange without root or network, and `make -n test`'s marker expression.
Must not know: JupyterLab or Playwright (test_lessons_browser.py drives those).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASH, MAKE = shutil.which("bash"), shutil.which("make")
SCRIPT = ROOT / "scripts" / "ensure_chromium.sh"

needs_bash = pytest.mark.skipif(BASH is None or os.name == "nt", reason="needs bash")


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run the script with PATH = a bin dir whose fake `apt-get` records that it was called."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    calls = tmp_path / "apt-get-calls"
    fake = bindir / "apt-get"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> '{calls}'\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    path = f"{bindir}:/usr/bin:/bin"
    return subprocess.run(
        [BASH, str(SCRIPT), *args],
        env={"PATH": path, "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@needs_bash
def test_skip_e2e_checks_nothing_and_exits_0(tmp_path: Path) -> None:
    """MQLAB_SKIP_E2E=1: one line saying the browser tests are deselected, exit 0, no apt-get."""
    result = _run(tmp_path, MQLAB_SKIP_E2E="1")
    assert result.returncode == 0
    assert (
        result.stdout == "e2e: MQLAB_SKIP_E2E=1: browser tests deselected, Chromium not checked.\n"
    )
    assert not (tmp_path / "apt-get-calls").exists()


@needs_bash
def test_override_binary_is_reported_with_its_version(tmp_path: Path) -> None:
    """MQLAB_E2E_CHROMIUM names the browser; its `--version` (trailing space trimmed) is shown."""
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\necho 'Chromium 156.0.8078.79 '\n", encoding="utf-8")
    fake.chmod(0o755)
    result = _run(tmp_path, MQLAB_E2E_CHROMIUM=str(fake))
    assert result.returncode == 0
    assert result.stdout == (
        f"e2e: Chromium at {fake} (Chromium 156.0.8078.79) -- browser tests will run\n"
    )


@needs_bash
def test_missing_override_says_skipped_with_install_hint_and_installs_nothing(
    tmp_path: Path,
) -> None:
    """A MQLAB_E2E_CHROMIUM that is not executable: "SKIPPED" + how to install, exit 0, no apt."""
    result = _run(tmp_path, MQLAB_E2E_CHROMIUM=str(tmp_path / "nope"))
    assert result.returncode == 0
    assert "is not an executable file. The browser tests (tests/e2e) will be SKIPPED." in (
        result.stdout
    )
    assert "`sudo apt-get install chromium`" in result.stdout
    assert not (tmp_path / "apt-get-calls").exists()


@pytest.mark.skipif(MAKE is None, reason="needs make")
@pytest.mark.parametrize(
    ("env", "mark"),
    [
        ({}, None),
        ({"MQLAB_SKIP_SPARK": "1"}, '-m "not spark"'),
        ({"MQLAB_SKIP_E2E": "1"}, '-m "not e2e"'),
        ({"MQLAB_SKIP_SPARK": "1", "MQLAB_SKIP_E2E": "1"}, '-m "not spark and not e2e"'),
    ],
)
def test_make_test_runs_e2e_unless_skipped(env: dict[str, str], mark: str | None) -> None:
    """`make test` runs e2e-deps first and deselects e2e only with MQLAB_SKIP_E2E=1 (issue 4)."""
    # An outer `make test VAR=…` passes its variables down in MAKEFLAGS: drop those too.
    drop = ("MQLAB_", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    out = subprocess.run(
        [MAKE, "-n", "--no-print-directory", "test"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    # the suite's runner (tools/run_tests.py) gives the mark expression to each group's pytest
    pytest_lines = [ln for ln in out.splitlines() if "tools/run_tests.py" in ln]
    assert len(pytest_lines) == 1, out
    assert "bash scripts/ensure_chromium.sh" in out
    if mark is None:
        assert " -m " not in pytest_lines[0].split("tools/run_tests.py", 1)[1]
    else:
        assert mark in pytest_lines[0]
