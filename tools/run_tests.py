"""Run the whole suite as `make test` does: in groups, side by side, one pytest process each.

Run from the repository root (``make test`` does, with the MQLAB_SKIP_* mark expression and
``PYTEST_ARGS``)::

    python tools/run_tests.py [PYTEST OPTIONS...]    # every group; options go to each group
    MQLAB_TEST_SERIAL=1 python tools/run_tests.py     # the same groups, one after the other

Part of the suite's wall time is waiting, on the real broker's JVMs and the clients driving it.
So the groups below run in four lanes side by side (``GROUPS``): the real broker's waits overlap
the three CPU-bound groups (unit and simulation; lab; Spark), which run at a lower priority
(``nice``): they have no deadlines, while the real broker's clients give up after a few seconds without an
answer (CONTRIBUTING.md §2). The groups split ``tests/`` by directory, so each test runs
in exactly one of them; module- and session-scoped fixtures (one real cluster per module, one
Spark session, one JupyterLab server) stay as they are, in their own group's process.

Output: each group writes to ``artifacts/test-groups/<name>.log`` (``tail -f`` it to follow);
when a group ends its whole output is printed at once, with its own pytest summary, so groups
never interleave. While groups run, a line every few minutes says which are left. The last
lines are one per group (exit status, wall time, counts) and then the combined count, alone on
the last line::

    total: N passed, N failed, N skipped

where *failed* also counts errors, and a group that ended without a pytest summary (a crash,
or killed after ``MQLAB_TEST_GROUP_TIMEOUT`` seconds, default 3600) counts as one failure. The
exit status is 0 when every group passed, else the first failing group's pytest status (5
when no group ran a test, as pytest's own "no tests ran").
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG_DIR = ROOT / "artifacts" / "test-groups"
HEARTBEAT_S = 300.0
#: the nbmake run's timeout per cell (tests/test_environment.py checks the Makefile says it)
NBMAKE_TIMEOUT = "--nbmake-timeout=180"


@dataclass(frozen=True)
class Group:
    """One pytest process: a name, why it is a group of its own, and its arguments."""

    name: str
    why: str
    paths: tuple[str, ...]
    #: directories left to other groups (``--ignore``); only for the group of ``tests``
    ignore: tuple[str, ...] = ()
    #: the solutions notebooks take fixed options, not the suite's (as before the split)
    nbmake: bool = False
    #: niceness added to the process: the CPU-bound group yields to the waiting ones, whose
    #: clients, servers and browser answer on timeouts (a Java client's 3 s RPC, a page's 20 s)
    nice: int = 0
    #: the group that must end before this one starts ("" = at once): the CPU-heavy groups
    #: (core, the browser's kernels, nbmake's kernels) take turns instead of slowing each other
    after: str = ""

    def argv(self, pytest_opts: list[str]) -> list[str]:
        if self.nbmake:
            # tests/patient_zmq.py: nbmake's kernel client polls patiently, as the suite's do;
            # tests/kernel_ipc.py: and reaches its kernels over ipc
            opts = ["-p", "no:cacheprovider", "-p", "tests.patient_zmq", "-p", "tests.kernel_ipc",
                    "--nbmake", NBMAKE_TIMEOUT]  # fmt: skip
        else:
            # each process its own cache dir: two sessions writing one lastfailed file would race
            opts = ["-o", f"cache_dir=.pytest_cache/{self.name}", *pytest_opts]
            opts += [f"--ignore={d}" for d in self.ignore]
        return [sys.executable, "-m", "pytest", *opts, *self.paths]


#: The groups, in the order their results are printed. Four lanes start together: the
#: groups that wait with deadlines, one after the other at normal priority (real-broker, then
#: browser), beside three CPU-bound parts of the rest, each at ``nice 10``: core, lab
#: (tests/lab) and spark (tests/experiments, the Spark sweeps and clusters), then the
#: notebooks (nbmake, niced too: its only deadline is a notebook's 180 s). tests/net goes
#: first in core's lane, at normal priority: its live C++ clients give up after 3 s, and niced
#: it missed that twice in about 25 dry runs (AQ; BI on 2026-12-02, a route query). CI on 2026-11-29
#: with the notebooks between real-broker and browser: that lane 1,550 s (notebooks 368 s
#: there against 173 s on a quiet machine), lab 1,203 s, spark 577 s. Measured on 2
#: cores: all at normal priority at once, the browser's widgets missed their waits; two lanes
#: (real-broker then notebooks, core then browser) left one lane of 674 s and one of 2156 s
#: on CI (2026-11-29), since core alone took 1771 s; three lanes (lab still in core) took
#: 1448 s, core the last by 360 s, with the CPU 44 % busy. Niced, the parts take what the
#: waiting lane leaves, and the browser tier still gets the CPU when it wants it. Dry run BN
#: (session 32) tried more overlap: browser after net (beside the real broker), core from the
#: start, the notebooks after core. 32:16 against 31:26 for BM the same day: the browser
#: tier took 1,471 s beside everything (564 s in BM), spark 1,826 s (1,323): reverted.
GROUPS = (
    Group(
        "real-broker",
        "tests/conformance and tests/interop: wait on the real 4.9.3 broker's JVMs and clients",
        ("tests/conformance", "tests/interop"),
    ),
    Group(
        "net",
        "tests/net: mqlab serve over sockets, driven by live C++, Go and Node.js clients whose "
        "RPCs give up after seconds; at normal priority, then core in its lane",
        ("tests/net",),
    ),
    Group(
        "core",
        "the rest of tests/: unit, simulation and explorer tests, CPU-bound",
        ("tests",),
        ignore=(
            "tests/conformance",
            "tests/interop",
            "tests/e2e",
            "tests/experiments",
            "tests/lab",
            "tests/net",
        ),
        nice=10,
        after="net",
    ),
    Group(
        "lab",
        "tests/lab: the workbench, the lessons' walks, worked answers and figures, CPU-bound",
        ("tests/lab",),
        nice=10,
    ),
    Group(
        "spark",
        "tests/experiments: Spark sweeps, local and on real clusters (standalone, YARN, Connect)",
        ("tests/experiments",),
        nice=10,
    ),
    Group(
        "notebooks",
        "notebooks/solutions via nbmake (serial within the group, " + NBMAKE_TIMEOUT + ")",
        ("notebooks/solutions",),
        nbmake=True,
        nice=10,
        after="spark",
    ),
    Group(
        "browser",
        "tests/e2e: Chromium, JupyterLab and the kernels they drive; after the real broker",
        ("tests/e2e",),
        after="real-broker",
    ),
)

_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)")
_SUMMARY = re.compile(r"^=*\s*(?P<body>(?:\d+ \w+(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s\b")


def parse_summary(text: str) -> dict[str, int] | None:
    """The counts of pytest's closing line (``=== 3 failed, 10 passed in 1.2s ===``), or None
    when the output has no such line. ``error``/``errors`` are counted as ``errors``."""
    for line in reversed(text.splitlines()):
        m = _SUMMARY.match(line.strip())
        if m is None:
            continue
        counts: dict[str, int] = {}
        for n, word in _COUNT.findall(m.group("body")):
            key = {"error": "errors", "warning": "warnings"}.get(word, word)
            counts[key] = counts.get(key, 0) + int(n)
        return counts
    return None


@dataclass
class Outcome:
    """A finished group: its exit status, wall time, output and parsed counts."""

    group: Group
    returncode: int
    seconds: float
    output: str
    counts: dict[str, int] | None = field(default=None)
    timed_out: bool = False

    @property
    def ran_nothing(self) -> bool:
        """pytest's exit 5: collected nothing, or everything was deselected (``-k``, ``-m``)."""
        return self.returncode == 5

    @property
    def ok(self) -> bool:
        return self.returncode == 0 or self.ran_nothing

    @property
    def failed(self) -> int:
        """Failures and errors; a group that failed without saying how counts as one."""
        c = self.counts or {}
        n = c.get("failed", 0) + c.get("errors", 0)
        return n if (n or self.ok) else 1

    def line(self) -> str:
        c = self.counts
        what = (
            ", ".join(f"{v} {k}" for k, v in c.items() if k != "warnings")
            if c
            else "no pytest summary"
        )
        status = "TIMED OUT" if self.timed_out else f"exit {self.returncode}"
        return f"==> {self.group.name:11} {status}, {self.seconds:6.0f} s: {what}"


#: pytest's short test summary lines (``-r fE``, its default): one per failed or erroring test.
_SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) \S.*$", re.M)


def failing_lines(output: str, width: int = 200) -> list[str]:
    """The ``FAILED …`` and ``ERROR …`` lines of pytest's short test summary, each cut to
    ``width`` characters. Printed again after the totals, where a reader of the log's tail (CI
    keeps the tail) finds which tests failed in every group, not only in the last printed."""
    return [m.group(0)[:width] for m in _SUMMARY_LINE.finditer(output)]


def total_line(outcomes: list[Outcome]) -> str:
    """The combined count, in the plain closing form CI reads: ``total: N passed, N failed,
    N skipped``."""
    passed = sum((o.counts or {}).get("passed", 0) for o in outcomes)
    failed = sum(o.failed for o in outcomes)
    skipped = sum((o.counts or {}).get("skipped", 0) for o in outcomes)
    return f"total: {passed} passed, {failed} failed, {skipped} skipped"


def exit_status(outcomes: list[Outcome]) -> int:
    for o in outcomes:
        if not o.ok:
            return o.returncode if o.returncode > 0 else 1
    if outcomes and all(o.ran_nothing for o in outcomes):
        return 5
    return 0


def _child_setup(nice: int):
    def setup() -> None:
        # a job started in the background inherits SIGINT ignored; pytest needs it to stop
        # cleanly (with its summary) when a group is stopped
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if nice:
            os.nice(nice)

    return setup


class Running:
    """A group's pytest process, in its own session (so a timeout can end all it started)."""

    def __init__(self, group: Group, pytest_opts: list[str], log_dir: Path, tee: bool) -> None:
        self.group = group
        self.log_path = log_dir / f"{group.name}.log"
        self.argv = group.argv(pytest_opts)
        self.started = time.monotonic()
        self.timed_out = False
        self._log = open(self.log_path, "wb")  # noqa: SIM115  (closed in finish)
        self.proc = subprocess.Popen(
            self.argv,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if tee else self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_child_setup(group.nice),
        )

    def pump(self) -> None:
        """Serial mode: copy the output to ours as it comes, and to the log."""
        assert self.proc.stdout is not None
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            self._log.write(chunk)

    def command(self) -> str:
        nice = f"nice -n {self.group.nice} " if self.group.nice else ""
        return nice + shlex.join([Path(self.argv[0]).name, *self.argv[1:]])

    def signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        """SIGINT (pytest prints what it has), then SIGKILL after 20 s."""
        self.signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.proc.wait()

    def finish(self) -> Outcome:
        self.proc.wait()
        self._log.close()
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return Outcome(
            self.group,
            self.proc.returncode,
            time.monotonic() - self.started,
            text,
            parse_summary(text),
            self.timed_out,
        )


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _say(text: str) -> None:
    print(text, flush=True)


def _print_whole(o: Outcome) -> None:
    _say(f"==> [{o.group.name}] output ({o.group.why}):")
    sys.stdout.write(o.output if o.output.endswith("\n") or not o.output else o.output + "\n")
    _say(o.line())


def run(
    groups: tuple[Group, ...] = GROUPS,
    pytest_opts: list[str] | None = None,
    *,
    serial: bool = False,
    timeout_s: float = 3600.0,
    log_dir: Path = LOG_DIR,
    heartbeat_s: float = HEARTBEAT_S,
) -> int:
    """Run ``groups`` (side by side unless ``serial``); print each whole, then the totals."""
    pytest_opts = list(pytest_opts or [])
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    outcomes: list[Outcome] = []
    left: list[Running] = []  # started, not yet finished and reported
    interrupted = False

    def on_term(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        if serial:
            for g in groups:
                _say(f"==> [{g.name}] {g.why}")
                r = Running(g, pytest_opts, log_dir, tee=True)
                left = [r]
                _say(f"==> [{g.name}] {r.command()}")
                r.pump()
                left = []
                o = r.finish()
                outcomes.append(o)
                _say(o.line())
        else:
            names = {g.name for g in groups}
            # a group whose predecessor is not in this run starts at once
            waiting = [g for g in groups if g.after and g.after in names]

            def start(g: Group) -> None:
                r = Running(g, pytest_opts, log_dir, tee=False)
                left.append(r)
                _say(f"==> [{g.name}] started: {r.command()}")
                _say(f"    ({g.why}; its output when it ends, meanwhile in {_shown(r.log_path)})")

            for g in groups:
                if g not in waiting:
                    start(g)
            next_beat = time.monotonic() + heartbeat_s
            while left or waiting:
                time.sleep(0.2)
                now = time.monotonic()
                for r in list(left):
                    if r.proc.poll() is None and now - r.started > timeout_s:
                        _say(f"==> [{r.group.name}] still running after {timeout_s:.0f} s: stop")
                        r.timed_out = True
                        r.stop()
                    if r.proc.poll() is not None:
                        left.remove(r)
                        o = r.finish()
                        outcomes.append(o)
                        _print_whole(o)
                        for g in [g for g in waiting if g.after == r.group.name]:
                            waiting.remove(g)
                            start(g)
                if left and now >= next_beat:
                    next_beat = now + heartbeat_s
                    names = ", ".join(f"{r.group.name} ({now - r.started:.0f} s)" for r in left)
                    _say(f"==> still running: {names}")
    except KeyboardInterrupt:
        interrupted = True
        _say("==> interrupted: stopping the groups still running")
        for r in left:
            if r.proc.poll() is None:
                r.stop()
            o = r.finish()
            outcomes.append(o)
            if not serial:
                _print_whole(o)
    finally:
        signal.signal(signal.SIGTERM, previous)
    order = {g.name: i for i, g in enumerate(groups)}
    outcomes.sort(key=lambda o: order[o.group.name])
    mode = "one after the other" if serial else "side by side"
    _say(f"==> {len(outcomes)} groups {mode}, wall {time.monotonic() - started:.0f} s:")
    for o in outcomes:
        _say(o.line())
    for o in outcomes:
        for line in failing_lines(o.output):
            _say(f"==> [{o.group.name}] {line}")
    status = exit_status(outcomes) or (2 if interrupted else 0)  # 2: pytest's "interrupted"
    if status != 0:
        _say(f"==> make test FAILED (exit {status})")
    _say(total_line(outcomes))
    return status


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def main(argv: list[str] | None = None) -> int:
    opts = list(sys.argv[1:] if argv is None else argv)
    groups = GROUPS
    if not any((ROOT / "notebooks" / "solutions").glob("*.ipynb")):
        _say("==> no notebooks/solutions/*.ipynb yet: skipping nbmake")
        groups = tuple(g for g in groups if not g.nbmake)
    timeout_s = float(os.environ.get("MQLAB_TEST_GROUP_TIMEOUT") or 3600)
    return run(groups, opts, serial=_truthy("MQLAB_TEST_SERIAL"), timeout_s=timeout_s)


if __name__ == "__main__":
    sys.exit(main())
