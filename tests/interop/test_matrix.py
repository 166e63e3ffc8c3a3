"""The interop matrix's runner (``mqlab.interop.matrix``) without clusters or clients: fake
targets and scenarios show that the two targets run side by side with the serial run's
outcomes, and that the one-time builds the clients share happen once when asked at once.

Mirrors no RocketMQ class: harness plumbing (CONTRIBUTING.md §2, what runs in parallel).
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from mqlab.conformance import real_cluster
from mqlab.interop import go_client, matrix, scenarios
from mqlab.interop.scenarios import Scenario, ScenarioFailed


@dataclass
class FakeTarget:
    kind: str
    workdir: Path
    closed: bool = False

    @property
    def namesrv_addr(self) -> str:
        return f"fake-{self.kind}:9876"

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_targets(monkeypatch):
    opened: list[FakeTarget] = []

    def open_target(kind: str, workdir: Path) -> FakeTarget:
        t = FakeTarget(kind, workdir)
        opened.append(t)
        return t

    monkeypatch.setattr(matrix, "open_target", open_target)
    return opened


def _observe(t, work: Path) -> dict:
    return {"queue": 3, "work": work.relative_to(t.workdir).as_posix()}


def _fails_on_real(t, work: Path) -> dict:
    if t.kind == "real":
        raise ScenarioFailed("only 2 of 3 delivered")
    return {"delivered": 3}


def _crashes(t, work: Path) -> dict:
    raise RuntimeError(f"client exited 2 on {t.kind}")


CATALOGUE = [
    Scenario("java/observe", "java", "an observation", _observe),
    Scenario("go/last", "go", "runs last", _observe, last=True),
    Scenario("go/fails-on-real", "go", "a check fails on real", _fails_on_real),
    Scenario("go/crash", "go", "the client crashes", _crashes),
]


def _outcomes(results) -> list[tuple]:
    return [
        (r.scenario.name, kind, o.passed, o.observation, o.error)
        for r in results
        for kind, o in sorted(r.outcomes.items())
    ]


def test_parallel_run_has_the_serial_outcomes(fake_targets, tmp_path):
    """Side by side or one after the other: the same outcome for every scenario and target."""
    serial = matrix.run_matrix(CATALOGUE, workdir=tmp_path / "s", log=lambda _: None,
                               parallel=False)  # fmt: skip
    parallel = matrix.run_matrix(CATALOGUE, workdir=tmp_path / "p", log=lambda _: None)
    assert _outcomes(parallel) == _outcomes(serial)
    assert _outcomes(parallel) == [
        ("java/observe", "mqlab", True, {"queue": 3, "work": "java_observe"}, None),
        ("java/observe", "real", True, {"queue": 3, "work": "java_observe"}, None),
        ("go/fails-on-real", "mqlab", True, {"delivered": 3}, None),
        ("go/fails-on-real", "real", False, None, "check failed: only 2 of 3 delivered"),
        ("go/crash", "mqlab", False, None, "RuntimeError: client exited 2 on mqlab"),
        ("go/crash", "real", False, None, "RuntimeError: client exited 2 on real"),
        ("go/last", "mqlab", True, {"queue": 3, "work": "go_last"}, None),
        ("go/last", "real", True, {"queue": 3, "work": "go_last"}, None),
    ]
    assert matrix.summary_line(parallel) == (
        "interop: 4 scenarios, 3 pass on mqlab, 2 pass on real, 1 mismatches"
    )
    assert [(t.kind, t.closed) for t in fake_targets[2:]] in (
        [("mqlab", True), ("real", True)],
        [("real", True), ("mqlab", True)],
    )


def test_targets_run_at_the_same_time_each_in_scenario_order(fake_targets, tmp_path):
    """Both targets are inside a scenario at once (a barrier only two threads can pass), and
    each runs the scenarios in the catalogue's order, ``last`` ones at the end."""
    barrier = threading.Barrier(2, timeout=60)
    seen: dict[str, list[str]] = {"mqlab": [], "real": []}

    def meet(t, work):
        barrier.wait()
        seen[t.kind].append("meet")
        return {}

    def note(name):
        def run(t, work):
            seen[t.kind].append(name)
            return {}

        return run

    catalogue = [
        Scenario("go/z-last", "go", "", note("z-last"), last=True),
        Scenario("go/meet", "go", "", meet),
        Scenario("go/b", "go", "", note("b")),
    ]
    results = matrix.run_matrix(catalogue, workdir=tmp_path, log=lambda _: None)
    assert [(r.scenario.name, r.both_passed) for r in results] == [
        ("go/meet", True),
        ("go/b", True),
        ("go/z-last", True),
    ]
    assert seen == {"mqlab": ["meet", "b", "z-last"], "real": ["meet", "b", "z-last"]}


def test_a_target_that_does_not_start_fails_only_its_own_side(monkeypatch, tmp_path):
    """The real cluster failing to start marks every scenario failed on real, with the reason;
    mqlab's side still runs."""

    def open_target(kind, workdir):
        if kind == "real":
            raise RuntimeError("no 4 consecutive free ports")
        return FakeTarget(kind, workdir)

    monkeypatch.setattr(matrix, "open_target", open_target)
    (r,) = matrix.run_matrix(CATALOGUE[:1], workdir=tmp_path, log=lambda _: None)
    assert (r.outcomes["mqlab"].passed, r.outcomes["real"].passed) == (True, False)
    assert r.outcomes["real"].error == "real cluster did not start: no 4 consecutive free ports"


class FakeSession:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_closing_one_targets_mqadmin_session_leaves_the_other(monkeypatch):
    """A target that finishes first stops its own mqadmin JVM, not the other target's."""
    a, b = FakeSession(), FakeSession()
    monkeypatch.setattr(real_cluster, "_SESSIONS", {"127.0.0.1:1": a, "127.0.0.1:2": b})
    real_cluster.close_mqadmin_sessions("127.0.0.1:1")
    assert (a.closed, b.closed, list(real_cluster._SESSIONS)) == (True, False, ["127.0.0.1:2"])
    real_cluster.close_mqadmin_sessions()
    assert (b.closed, real_cluster._SESSIONS) == (True, {})


def _fake_tool(bindir: Path, name: str, body: str) -> None:
    bindir.mkdir(exist_ok=True)
    path = bindir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _at_once(fn, n: int = 2) -> list:
    """Call ``fn`` from ``n`` threads released together; their results (or exceptions)."""
    barrier = threading.Barrier(n, timeout=30)
    out: list = [None] * n

    def call(i):
        barrier.wait()
        try:
            out[i] = fn()
        except Exception as e:  # reported to the test below
            out[i] = e

    threads = [threading.Thread(target=call, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def test_go_client_is_built_once_when_two_targets_ask_at_once(monkeypatch, tmp_path):
    """Two threads needing the Go program at once: one `go build`, both get the binary."""
    calls = tmp_path / "calls"
    # `go build -o TMP .`: count the call, take a while, write the binary
    _fake_tool(tmp_path / "bin", "go", f'echo build >> "{calls}"; sleep 1; echo bin > "$3"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    got = _at_once(go_client.build_go_client)
    assert got[0] == got[1] and isinstance(got[0], Path), got
    assert got[0].read_text() == "bin\n"
    assert calls.read_text() == "build\n"


def test_npm_ci_runs_once_when_two_targets_ask_at_once(monkeypatch, tmp_path):
    """Two threads needing the Node.js client at once: one `npm ci`, after which both run.
    The second comes while `npm ci` has unpacked ``ali-ons`` but not yet the rest (as dry run
    BQ's real target did) and still waits for the end."""
    import threading
    import time

    calls = tmp_path / "calls"
    node_dir = tmp_path / "node"
    node_dir.mkdir()
    (node_dir / "package-lock.json").write_text("{}")
    _fake_tool(tmp_path / "bin", "npm",
               f'echo ci >> "{calls}"; mkdir -p node_modules/ali-ons; sleep 1; '
               "echo x > node_modules/dependency.js")  # fmt: skip
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(scenarios, "_NODE_DIR", node_dir)
    done = node_dir / "node_modules" / "dependency.js"
    seen: list[bool] = []

    def call() -> None:
        scenarios._npm_ci()
        seen.append(done.is_file())

    first = threading.Thread(target=call)
    first.start()
    deadline = time.monotonic() + 30
    while not (node_dir / "node_modules" / "ali-ons").is_dir() and time.monotonic() < deadline:
        time.sleep(0.01)
    call()  # ali-ons is there, the install is not finished
    first.join(30)
    assert seen == [True, True]
    assert calls.read_text() == "ci\n"
    scenarios._npm_ci()  # installed: no second npm ci
    assert calls.read_text() == "ci\n"


def test_notes_are_kept_per_target_and_left_out_of_the_comparison(fake_targets, tmp_path):
    """An observation's ``_notes`` (what timing decides: duplicates after a master's return)
    goes to ``Outcome.notes``, is logged and listed per target, and does not count as a
    mismatch; the rest of the observation still does."""
    dups = {"mqlab": 0, "real": 2}

    def with_notes(t, work):
        return {"delivered": 8, scenarios.NOTES_KEY: {"duplicatesAfterRestart": dups[t.kind]}}

    def differs(t, work):
        return {"delivered": 8 if t.kind == "real" else 7, scenarios.NOTES_KEY: {"n": 1}}

    catalogue = [
        Scenario("java/ha-notes", "java", "", with_notes),
        Scenario("java/ha-differs", "java", "", differs),
    ]
    lines: list[str] = []
    results = matrix.run_matrix(catalogue, workdir=tmp_path, log=lines.append)
    first, second = results
    assert {k: (o.observation, o.notes) for k, o in first.outcomes.items()} == {
        "mqlab": ({"delivered": 8}, {"duplicatesAfterRestart": 0}),
        "real": ({"delivered": 8}, {"duplicatesAfterRestart": 2}),
    }
    assert (first.mismatch, second.mismatch) == (False, True)
    assert matrix.summary_line(results) == (
        "interop: 2 scenarios, 2 pass on mqlab, 2 pass on real, 1 mismatches"
    )
    text = matrix.details(results)
    assert 'notes java/ha-notes on real: {"duplicatesAfterRestart": 2}' in text.splitlines()
    assert 'notes java/ha-notes on mqlab: {"duplicatesAfterRestart": 0}' in text.splitlines()
    assert any(x.endswith('java/ha-notes                            notes: {"duplicatesAfterRestart": 2}')
               and x.lstrip().startswith("real") for x in lines)  # fmt: skip
