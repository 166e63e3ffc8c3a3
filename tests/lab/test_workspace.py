"""mqlab.lab.workspace: the learners' working copy that `make lab` serves (issue 20, defects 8
and 9). The copy is made once and never overwritten; a reset restores one lesson and keeps
the learner's copy; bad input is refused and loses nothing. The real server: see
tests/e2e/test_workshop_clean.py.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mqlab.__main__ import main as mqlab_main
from mqlab.lab import workspace as W

ROOT = Path(__file__).resolve().parents[2]
#: The lessons in this checkout's notebooks/ ("00", "01", …).
LESSON_NUMBERS = sorted(p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
LESSON06 = "06_pull_loop_flow_control.ipynb"
SOL06 = Path("solutions") / "06_pull_loop_flow_control_solutions.ipynb"


@pytest.fixture(autouse=True)
def private_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Jupyter runtime folder of the test's own: a reset asks only the servers started here,
    never a lab someone runs on this machine."""
    runtime = tmp_path / "jruntime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    return runtime


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout's notebooks/ (copied; checkpoints included, to be left out)."""
    r = tmp_path / "repo"
    shutil.copytree(ROOT / "notebooks", r / "notebooks")
    (r / "notebooks" / ".ipynb_checkpoints").mkdir(exist_ok=True)
    (r / "notebooks" / ".ipynb_checkpoints" / "00_tour-checkpoint.ipynb").write_text("{}")
    return r


def tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_first_start_copies_every_notebook_and_page(repo):
    created = W.prepare(repo)
    work = repo / "work"
    src = {k: v for k, v in tree(repo / "notebooks").items() if ".ipynb_checkpoints" not in k}
    assert tree(work) == src
    assert len(created) == len(src) == len(W.source_files(repo))
    names = {str(p.relative_to(work)) for p in created}
    assert {LESSON06, str(SOL06), "mechanisms.md", "README.md"} <= names
    assert len([n for n in names if n.endswith(".ipynb") and "/" not in n]) == len(LESSON_NUMBERS)


def test_the_working_copy_is_never_overwritten(repo):
    W.prepare(repo)
    mine = repo / "work" / LESSON06
    mine.write_text('{"my": "edits"}')
    (repo / "notebooks" / LESSON06).write_text('{"upstream": "changed"}')  # a git pull
    (repo / "notebooks" / "10_new.ipynb").write_text('{"new": "lesson"}')
    assert W.prepare(repo) == [repo / "work" / "10_new.ipynb"]
    assert mine.read_text() == '{"my": "edits"}'
    assert (repo / "work" / "10_new.ipynb").read_text() == '{"new": "lesson"}'
    assert W.prepare(repo) == []


def test_reset_restores_one_lesson_and_keeps_the_learners_copy(repo):
    W.prepare(repo)
    work = repo / "work"
    (work / LESSON06).write_text('{"my": "06"}')
    (work / "07_retry_dlq.ipynb").write_text('{"my": "07"}')
    at = dt.datetime(2026, 11, 28, 1, 2, 3, tzinfo=dt.UTC)
    done = W.reset_lesson("06", repo, now=at)
    assert [d for d, _ in done] == [work / LESSON06, work / SOL06]
    assert (work / LESSON06).read_bytes() == (repo / "notebooks" / LESSON06).read_bytes()
    backup = work / ".reset" / "06_pull_loop_flow_control.20261128T010203Z.ipynb"
    assert done[0][1] == backup and backup.read_text() == '{"my": "06"}'
    assert done[1][1] is None  # the solutions copy was untouched: nothing to keep
    assert (work / "07_retry_dlq.ipynb").read_text() == '{"my": "07"}'  # only lesson 06


def test_reset_accepts_6_and_the_full_name_and_brings_back_a_deleted_copy(repo):
    W.prepare(repo)
    (repo / "work" / LESSON06).unlink()
    assert W.lesson_files(repo, "6") == W.lesson_files(repo, "06_pull_loop_flow_control")
    W.reset_lesson("6", repo)
    assert (repo / "work" / LESSON06).read_bytes() == (repo / "notebooks" / LESSON06).read_bytes()


@pytest.mark.parametrize(
    ("lesson", "message"),
    [("42", "no lesson 42 in notebooks/; lessons: " + ", ".join(LESSON_NUMBERS)),
     ("six", "a lesson is a number such as 06 (or 06_name), got 'six'"),
     ("../06", "a lesson is a number such as 06 (or 06_name), got '../06'")],
)  # fmt: skip
def test_a_bad_lesson_is_refused_and_changes_nothing(repo, lesson, message, capsys):
    W.prepare(repo)
    (repo / "work" / LESSON06).write_text('{"my": "06"}')
    before = tree(repo / "work")
    with pytest.raises(ValueError, match=re.escape(message)):
        W.reset_lesson(lesson, repo)
    assert mqlab_main(["lab", "reset", lesson, "--repo", str(repo)]) == 2
    assert capsys.readouterr().err.strip() == f"mqlab lab: {message}"
    assert tree(repo / "work") == before


def test_command_line_prepare_then_reset(repo, capsys):
    n = len(W.source_files(repo))
    assert mqlab_main(["lab", "prepare", "--repo", str(repo)]) == 0
    assert capsys.readouterr().out.strip() == (
        f"working copy {repo / 'work'}: {n} file(s) copied from notebooks/, 0 already there "
        "(left as they are)"
    )
    (repo / "work" / LESSON06).write_text("{}")
    assert mqlab_main(["lab", "reset", "06", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith(f"reset {repo / 'work' / LESSON06} (your copy is kept as ")
    assert out[1] == f"reset {repo / 'work' / SOL06}"


def test_no_notebooks_folder_is_a_clear_error(tmp_path, capsys):
    assert mqlab_main(["lab", "prepare", "--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'notebooks'} is not a folder: run this from the mqlab checkout" in err
    assert not (tmp_path / "work").exists()


def test_make_lab_serves_the_ignored_working_copy():
    """The Makefile's lab target prepares work/ and roots JupyterLab there; git ignores work/;
    lab-instructor is rooted at the checkout; reset-lesson runs the documented command."""
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    lab = make[make.index("\nlab: ") : make.index("\nreset-lesson: ")]
    assert "-m mqlab lab prepare" in lab and "--ServerApp.root_dir=work " in lab
    assert "--ServerApp.root_dir=notebooks" not in make
    inst = make[make.index("\nlab-instructor: ") :].split("\n\n")[0]
    assert "--ServerApp.root_dir=. " in inst
    reset = make[make.index("\nreset-lesson: ") :].split("\n\n")[0]
    assert "-m mqlab lab reset $(L)" in reset
    probe = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "-q", f"{W.WORK_DIR}/{LESSON06}"],
        check=False,
    )
    assert probe.returncode == 0, "work/ is not git-ignored"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TOKEN = "mqlab-test-token"


@pytest.fixture
def lab_on_work(repo: Path, tmp_path: Path, private_runtime_dir: Path):
    """A running Jupyter server rooted at ``repo/work`` with a token (as ``make lab``'s), its
    info file in the private runtime folder; yields ``api(path, method, body)``. Stopped, with
    its kernels, at teardown."""
    W.prepare(repo)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "jconfig"),
           "JUPYTER_DATA_DIR": str(tmp_path / "jdata"), "IPYTHONDIR": str(tmp_path / "ipython")}  # fmt: skip
    port = _free_port()
    cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", "--ip", "127.0.0.1",
           "--port", str(port), "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.root_dir={repo / 'work'}"]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp_path / "jupyter.log", "wb")  # noqa: SIM115 (closed at teardown)
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip
    base = [f"http://127.0.0.1:{port}"]

    def api(path: str, method: str = "GET", body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{base[0]}{path}", data=data, method=method,
                                     headers={"Authorization": f"token {TOKEN}"})  # fmt: skip
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read()
            return json.loads(text) if text else None

    try:
        deadline = time.monotonic() + 60
        while not (infos := list(private_runtime_dir.glob("jpserver-*.json"))):
            assert proc.poll() is None, (tmp_path / "jupyter.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "jupyter.log").read_text()
            time.sleep(0.2)
        # the address the server says it serves on; and until it answers (a CI dry run once
        # had the status call refused right after the info file appeared)
        base[0] = json.loads(infos[0].read_text())["url"].rstrip("/")
        while True:
            try:
                api("/api/status")
                break
            except urllib.error.URLError:
                assert proc.poll() is None, (tmp_path / "jupyter.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "jupyter.log").read_text()
                time.sleep(0.2)
        yield api
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the server shuts its kernels down
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        log.close()


@pytest.mark.slow
def test_reset_refuses_while_the_lesson_is_open_in_a_running_lab(repo, lab_on_work, capsys):
    """With lesson 06 open in a running lab (a session: what an open notebook tab has), `make
    reset-lesson L=06` refuses with exit 1, saying which lab and what to do, and changes
    nothing; once the tab is closed (session ended) the same command resets (issue 28)."""
    work = repo / "work"
    (work / LESSON06).write_text('{"my": "06"}')
    before = tree(work)
    session = lab_on_work("/api/sessions", "POST",
                          {"path": LESSON06, "type": "notebook", "name": LESSON06,
                           "kernel": {"name": "python3"}})  # fmt: skip
    assert mqlab_main(["lab", "reset", "06", "--repo", str(repo)]) == 1
    server = next(json.loads(p.read_text()) for p in
                  Path(os.environ["JUPYTER_RUNTIME_DIR"]).glob("jpserver-*.json"))  # fmt: skip
    url = server["url"] if server["url"].endswith("/") else server["url"] + "/"
    assert capsys.readouterr().err.strip() == (
        f"mqlab lab: lesson 06 is open: {work / LESSON06} in the lab at {url}. Close its tab "
        "first (File → Close and Shut Down Notebook, or shut its kernel down in the Running "
        "panel), then reset again: the open tab holds the old copy and its next save would "
        "undo the reset"
    )
    assert tree(work) == before
    with pytest.raises(W.LessonOpen):
        W.reset_lesson("06", repo)
    lab_on_work(f"/api/sessions/{session['id']}", "DELETE")  # the tab closed, kernel shut down
    assert mqlab_main(["lab", "reset", "06", "--repo", str(repo)]) == 0
    assert (work / LESSON06).read_bytes() == (repo / "notebooks" / LESSON06).read_bytes()


def test_a_lab_that_cannot_be_asked_is_warned_about_and_the_reset_goes_on(
    repo, private_runtime_dir, capsys
):
    """A server info file for a lab on work/ that does not answer (here: a closed port) does not
    block the reset; stderr says the lab could not be asked and what to do if the tab is open."""
    W.prepare(repo)
    port = _free_port()
    info = {
        "url": f"http://127.0.0.1:{port}/",
        "root_dir": str(repo / "work"),
        "token": "x",
        "pid": os.getpid(),
        "port": port,
    }  # a live pid: list_running_servers keeps the file
    (private_runtime_dir / f"jpserver-{os.getpid()}.json").write_text(json.dumps(info))
    (repo / "work" / LESSON06).write_text("{}")
    assert mqlab_main(["lab", "reset", "06", "--repo", str(repo)]) == 0
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"mqlab lab: could not ask the Jupyter server at http://127.0.0.1:{port}/ ("
    )
    assert err.endswith(
        ") whether lesson 06 is open there; if it is, close its tab without saving (or choose "
        "Revert when the lab says the file changed)"
    )
    assert (repo / "work" / LESSON06).read_bytes() == (repo / "notebooks" / LESSON06).read_bytes()
