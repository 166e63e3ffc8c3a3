"""`make test`'s runner (tools/run_tests.py): the suite in groups side by side, each printed
whole, and a closing line that counts every group.

Mirrors no RocketMQ class: the repo's own tooling (CONTRIBUTING.md §2). The groups here are
tiny pytest runs in a temp dir, so the runner's promises are checked without the suite:
the exit status is non-zero when any group fails, each group's output (with its own pytest
summary) is printed in one piece, the last line is ``total: N passed, N failed, N skipped``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def runner():
    """tools/run_tests.py as a module (tools/ is not a package)."""
    name = "run_tests"
    if name not in sys.modules:  # dataclasses need the module registered while it loads
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def _module(tmp_path: Path, name: str, body: str) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / f"test_{name}.py").write_text(body)
    return str(d)


PASSING = """
import pytest

def test_a():
    pass

def test_b():
    pass

def test_c():
    pytest.skip("not here")
"""

FAILING = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("no fixture today")

def test_ok():
    pass

def test_wrong():
    assert 2 + 2 == 5

def test_set_up_fails(broken):
    pass
"""


def _group(name: str, path: str):
    return runner().Group(name, f"the {name} group", (path,))


def _run(groups, capsys, tmp_path, **kw) -> tuple[int, list[str]]:
    status = runner().run(tuple(groups), [], log_dir=tmp_path / "logs", **kw)
    return status, capsys.readouterr().out.splitlines()


@pytest.fixture(autouse=True)
def _bare_pytest(monkeypatch):
    """The groups' pytest processes load no plugins from entry points: a quicker start."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_a_failing_group_fails_the_run_each_printed_whole_and_the_total_counts_both(
    tmp_path, capsys
):
    """One group passes, one fails (a failure and an error): exit 1; each group's whole pytest
    output (its summary last) between its header and its status line; then each failing test
    again, named with its group (CI keeps only the log's tail); the last line adds both groups'
    counts."""
    groups = [
        _group("good", _module(tmp_path, "good", PASSING)),
        _group("bad", _module(tmp_path, "bad", FAILING)),
    ]
    status, out = _run(groups, capsys, tmp_path)
    assert status == 1
    assert out[-1] == "total: 3 passed, 2 failed, 1 skipped"
    assert out[-2] == "==> make test FAILED (exit 1)"
    assert re.fullmatch(r"==> \[bad\] FAILED \S*bad/test_bad.py::test_wrong.*", out[-4]), out[-4]
    assert re.fullmatch(r"==> \[bad\] ERROR \S*bad/test_bad.py::test_set_up_fails.*", out[-3]), out[
        -3
    ]
    assert re.fullmatch(r"==> good +exit 0, +\d+ s: 2 passed, 1 skipped", out[-6]), out[-6]
    assert re.fullmatch(r"==> bad +exit 1, +\d+ s: 1 failed, 1 passed, 1 errors", out[-5]), out[-5]
    for name, summary in (
        ("good", "2 passed, 1 skipped in"),
        ("bad", "1 failed, 1 passed, 1 error in"),
    ):
        start = out.index(f"==> [{name}] output (the {name} group):")
        end = next(i for i in range(start, len(out)) if out[i].startswith(f"==> {name} "))
        block = out[start + 1 : end]
        assert block[0].startswith("===") and "test session starts" in block[0]
        assert summary in block[-1]
        assert not any("==> " in x for x in block)  # nothing of the runner's in between
    assert "test_wrong" in (tmp_path / "logs" / "bad.log").read_text()


WAITS_FOR = """
import time
from pathlib import Path

def test_meet():
    Path({mine!r}).touch()
    deadline = time.monotonic() + 60
    while not Path({other!r}).exists():
        assert time.monotonic() < deadline, "the other group never started"
        time.sleep(0.05)
"""


def test_groups_run_side_by_side(tmp_path, capsys):
    """Two groups that each wait for the other to start both pass: they run at the same time."""
    a, b = str(tmp_path / "a.started"), str(tmp_path / "b.started")
    groups = [
        _group("left", _module(tmp_path, "left", WAITS_FOR.format(mine=a, other=b))),
        _group("right", _module(tmp_path, "right", WAITS_FOR.format(mine=b, other=a))),
    ]
    status, out = _run(groups, capsys, tmp_path)
    assert (status, out[-1]) == (0, "total: 2 passed, 0 failed, 0 skipped")


def test_serial_mode_runs_the_same_groups_one_after_the_other(tmp_path, capsys):
    """MQLAB_TEST_SERIAL=1: the same counts and status, output streamed group by group."""
    groups = [
        _group("good", _module(tmp_path, "good", PASSING)),
        _group("bad", _module(tmp_path, "bad", FAILING)),
    ]
    status, out = _run(groups, capsys, tmp_path, serial=True)
    assert (status, out[-1]) == (1, "total: 3 passed, 2 failed, 1 skipped")
    assert any("groups one after the other" in x for x in out)


def test_a_group_past_its_timeout_is_stopped_and_counted_as_failed(tmp_path, capsys):
    """A hung group is interrupted after the timeout; its output so far is printed; exit != 0."""
    hang = "import time\n\ndef test_quick():\n    pass\n\ndef test_hang():\n    time.sleep(600)\n"
    groups = [_group("hung", _module(tmp_path, "hung", hang))]
    status, out = _run(groups, capsys, tmp_path, timeout_s=5)
    assert status != 0
    assert any(x.startswith("==> [hung] still running after 5 s") for x in out)
    assert any(re.fullmatch(r"==> hung +TIMED OUT, +\d+ s: .*", x) for x in out), out
    assert re.fullmatch(r"total: \d passed, 1 failed, 0 skipped", out[-1]), out[-1]


def test_a_group_without_a_summary_counts_as_one_failure(tmp_path, capsys):
    """A pytest process that dies before its summary still fails the run and the total."""
    d = Path(_module(tmp_path, "dies", "def test_never():\n    pass\n"))
    (d / "conftest.py").write_text("import os\n\nos._exit(3)\n")
    status, out = _run([_group("dies", str(d))], capsys, tmp_path)
    assert status == 3
    assert re.fullmatch(r"==> dies +exit 3, +\d+ s: no pytest summary", out[-3]), out[-3]
    assert out[-1] == "total: 0 passed, 1 failed, 0 skipped"


def test_groups_that_select_nothing_are_not_failures(tmp_path, capsys):
    """``-k`` matching nothing in one group is fine (pytest's 5); in every group it is exit 5."""
    groups = [
        _group("good", _module(tmp_path, "good", PASSING)),
        _group("other", _module(tmp_path, "other", FAILING)),
    ]
    status = runner().run(tuple(groups), ["-k", "test_a"], log_dir=tmp_path / "logs")
    out = capsys.readouterr().out.splitlines()
    assert (status, out[-1]) == (0, "total: 1 passed, 0 failed, 0 skipped")
    status = runner().run(tuple(groups), ["-k", "nothing_has_this_name"], log_dir=tmp_path / "l")
    out = capsys.readouterr().out.splitlines()
    assert (status, out[-1]) == (5, "total: 0 passed, 0 failed, 0 skipped")


@pytest.mark.parametrize(
    ("line", "counts"),
    [
        (
            "==== 1 failed, 2 passed, 3 skipped, 4 deselected, 1 error in 12.34s (0:00:12) ====",
            {"failed": 1, "passed": 2, "skipped": 3, "deselected": 4, "errors": 1},
        ),
        ("3 passed, 2 warnings in 1.00s", {"passed": 3, "warnings": 2}),
        ("============================ no tests ran in 0.01s =============================", {}),
        ("== 2 errors, 1 xfailed, 1 xpassed in 3s ==", {"errors": 2, "xfailed": 1, "xpassed": 1}),
    ],
)
def test_parse_summary_reads_pytests_closing_line(line, counts):
    """The counts of the last summary line, whatever pytest's verbosity."""
    assert runner().parse_summary(f"collected 3 items\n\n{line}\n") == counts


def test_parse_summary_is_none_without_a_closing_line():
    """A crash before the summary: no counts."""
    assert runner().parse_summary("collected 3 items\nSegmentation fault\n") is None


def test_the_groups_split_tests_by_directory_so_each_test_runs_once():
    """The "core" group ignores exactly the directories the other groups run."""
    groups = runner().GROUPS
    core = next(g for g in groups if g.name == "core")
    others = sorted(p for g in groups if g is not core for p in g.paths if p.startswith("tests"))
    assert core.paths == ("tests",)
    assert sorted(core.ignore) == others
    assert all((ROOT / p).is_dir() for p in others)
    assert [g.name for g in groups if g.nbmake] == ["notebooks"]


def test_make_test_runs_the_groups_with_the_mark_expression_and_pytest_args():
    """The Makefile's test recipe is the runner, given the MQLAB_SKIP_* marks and PYTEST_ARGS."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = text.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "$(VENV_PY) tools/run_tests.py $(PYTEST_MARK) --durations=10 $(PYTEST_ARGS)" in recipe


def test_a_stopped_group_still_prints_its_pytest_summary_when_sigint_was_ignored(tmp_path):
    """A group is stopped with SIGINT so that pytest prints its summary; that works even when
    the runner was started with SIGINT ignored (a background job), which children inherit."""
    import signal
    import time

    started = tmp_path / "started"
    hang = (
        "import time\nfrom pathlib import Path\n\ndef test_quick():\n    pass\n\n"
        f"def test_hang():\n    Path({str(started)!r}).touch()\n    time.sleep(600)\n"
    )
    group = _group("hung", _module(tmp_path, "hung", hang))
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        r = runner().Running(group, [], tmp_path, tee=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 120
    while not started.exists() and r.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    r.stop()
    o = r.finish()
    assert "KeyboardInterrupt" in o.output
    assert (o.returncode, o.counts) == (2, {"passed": 1}), o.output


def test_a_group_runs_at_its_niceness(tmp_path, capsys):
    """A group's ``nice`` is added to its process's niceness (the CPU-bound group yields)."""
    import os

    want = min(os.nice(0) + 5, 19)
    body = f"import os\n\ndef test_nice():\n    assert os.nice(0) == {want}\n"
    group = runner().Group("low", "a low-priority group", (_module(tmp_path, "low", body),), nice=5)
    status, out = _run([group], capsys, tmp_path)
    assert (status, out[-1]) == (0, "total: 1 passed, 0 failed, 0 skipped")
    assert [g.nice for g in runner().GROUPS if g.name == "core"] == [10]


AFTER = """
from pathlib import Path

def test_after():
    assert Path({first_done!r}).exists(), "started before its predecessor ended"
"""

FIRST = """
from pathlib import Path

def test_first():
    pass

def teardown_module():
    Path({first_done!r}).touch()
"""


def test_a_group_with_after_starts_when_that_group_has_ended(tmp_path, capsys):
    """Group.after: "second" starts only once "first" has ended; "free" runs beside both."""
    done = str(tmp_path / "first.done")
    groups = [
        _group("first", _module(tmp_path, "first", FIRST.format(first_done=done))),
        _group("free", _module(tmp_path, "free", PASSING)),
        runner().Group(
            "second",
            "test",
            (_module(tmp_path, "second", AFTER.format(first_done=done)),),
            after="first",
        ),
    ]
    status, out = _run(groups, capsys, tmp_path)
    assert (status, out[-1]) == (0, "total: 4 passed, 0 failed, 1 skipped")
    started = [x.split("]")[0] for x in out if x.startswith("==> [") and "] started:" in x]
    assert started == ["==> [first", "==> [free", "==> [second"]


def test_the_suites_lanes_chain_the_waiting_groups_beside_the_niced_cpu_groups():
    """Four lanes: real-broker then browser, at normal priority; net (its live clients'
    deadlines: normal priority) then core at nice 10; lab and spark, the other CPU-bound parts,
    each at nice 10 from the start, and the notebooks niced after spark."""
    groups = runner().GROUPS
    assert {g.name: g.after for g in groups} == {
        "real-broker": "", "net": "", "core": "net", "lab": "", "spark": "",
        "notebooks": "spark", "browser": "real-broker",
    }  # fmt: skip
    assert {g.name: g.nice for g in groups} == {
        "real-broker": 0, "net": 0, "core": 10, "lab": 10, "spark": 10, "notebooks": 10,
        "browser": 0,
    }  # fmt: skip
