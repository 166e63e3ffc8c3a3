"""``python -m mqlab interop``: every scenario on ``mqlab serve`` and on the real 4.9.3 broker.

For each target the cluster is started once, every selected scenario runs against it in
order, and the cluster is stopped. The two targets run side by side, each on its own thread
(a run mostly waits on client processes and JVMs): each has its own cluster, work directory,
free loopback ports and mqadmin JVM, and the one-time builds the clients share (Maven's
``conformance/java``, the Go program, ``npm ci``) hold a file lock, so the first caller
builds and the other waits. ``--serial`` (``parallel=False``) runs one target after the other.
A scenario *passes* on a target when its own checks hold; the two targets *match* when their
observations are equal. What a scenario records under ``NOTES_KEY`` (what timing decides, e.g.
duplicates after a master's return) is kept per target as ``Outcome.notes``, logged and
listed, and not compared. The table has one row per scenario; the last line is exactly::

    interop: S scenarios, P pass on mqlab, R pass on real, M mismatches

and the exit status is 1 when M > 0 or P < S. A client that cannot run here (no Go
toolchain, no Maven) fails its scenarios with the reason: nothing is skipped quietly. A
scenario that fails on the real broker is a scenario bug: fix the scenario.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from mqlab.interop import (  # noqa: F401  (they register)
    acl_scenarios,
    ha_scenarios,
    java_scenarios,
    mqadmin_scenarios,
)
from mqlab.interop.scenarios import (
    CLIENT_MISSING,
    NOTES_KEY,
    SCENARIOS,
    Scenario,
    ScenarioFailed,
    ordered,
)
from mqlab.interop.targets import open_target

__all__ = ["Outcome", "ScenarioResult", "run_matrix", "summary_line", "main"]

TARGETS = ("mqlab", "real")


@dataclass
class Outcome:
    """One scenario on one target."""

    passed: bool
    observation: dict | None = None
    error: str | None = None
    seconds: float = 0.0
    #: what the scenario records but does not compare (``NOTES_KEY`` of its observation):
    #: e.g. how many duplicates a consumer saw after a master's return, which timing decides
    notes: dict | None = None


@dataclass
class ScenarioResult:
    scenario: Scenario
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        """Both targets ran it and saw different things (a failure on one side too)."""
        got = [self.outcomes.get(t) for t in TARGETS]
        if any(o is None for o in got):
            return False
        a, b = got
        if a.passed != b.passed:
            return True
        return a.passed and a.observation != b.observation

    @property
    def mismatch(self) -> bool:
        """A difference no named reason explains."""
        return self.differs and not (self.scenario.known_difference and self.both_passed)

    @property
    def explained(self) -> bool:
        return self.differs and not self.mismatch

    @property
    def both_passed(self) -> bool:
        return all((o := self.outcomes.get(t)) is not None and o.passed for t in TARGETS)


def _run_one(sc: Scenario, target, work: Path) -> Outcome:
    missing = CLIENT_MISSING.get(sc.client, lambda: None)()
    if missing:
        return Outcome(False, error=f"client not available: {missing}")
    start = time.monotonic()
    try:
        obs = sc.run(target, work)
        notes = obs.pop(NOTES_KEY, None) if isinstance(obs, dict) else None
        return Outcome(True, obs, seconds=time.monotonic() - start, notes=notes)
    except ScenarioFailed as e:
        return Outcome(False, error=f"check failed: {e}", seconds=time.monotonic() - start)
    except Exception as e:  # a client crash or a timeout is a failure of this scenario
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        return Outcome(False, error=tb[-1500:], seconds=time.monotonic() - start)


def _run_target(kind: str, results: list[ScenarioResult], root: Path, log) -> None:
    """Start ``kind``'s cluster, run every scenario on it in order, stop it."""
    log(f"== starting {kind} cluster")
    try:
        target = open_target(kind, root / kind)
    except Exception as e:
        for r in results:
            r.outcomes[kind] = Outcome(False, error=f"{kind} cluster did not start: {e}")
        return
    try:
        for r in results:
            work = root / kind / r.scenario.name.replace("/", "_")
            work.mkdir(parents=True, exist_ok=True)
            o = _run_one(r.scenario, target, work)
            r.outcomes[kind] = o
            log(
                f"   {kind:5} {r.scenario.name:40} {'pass' if o.passed else 'FAIL'} ({o.seconds:.1f} s)"
            )
            if o.notes:
                log(
                    f"   {kind:5} {r.scenario.name:40} notes: {json.dumps(o.notes, sort_keys=True)}"
                )
    finally:
        from mqlab.conformance.real_cluster import close_mqadmin_sessions

        close_mqadmin_sessions(target.namesrv_addr)
        target.close()


def run_matrix(
    scenarios: list[Scenario] | None = None,
    targets: tuple[str, ...] = TARGETS,
    workdir: Path | None = None,
    log=print,
    *,
    parallel: bool = True,
) -> list[ScenarioResult]:
    """Run ``scenarios`` (default: all) on each of ``targets``; one result per scenario.

    With ``parallel`` the targets run side by side, one thread each; a result's outcomes are
    the same either way (each target keeps its own cluster and scenario order).
    """
    scenarios = ordered(list(SCENARIOS if scenarios is None else scenarios))
    results = [ScenarioResult(sc) for sc in scenarios]
    root = Path(workdir or tempfile.mkdtemp(prefix="mqlab-interop-"))
    if not parallel or len(targets) < 2:
        for kind in targets:
            _run_target(kind, results, root, log)
        return results
    with ThreadPoolExecutor(len(targets), thread_name_prefix="interop") as pool:
        futures = [pool.submit(_run_target, kind, results, root, log) for kind in targets]
        for f in futures:
            f.result()  # a harness error (not a scenario's) is raised here
    return results


def summary_line(results: list[ScenarioResult]) -> str:
    s = len(results)
    p = sum(1 for r in results if r.outcomes.get("mqlab", Outcome(False)).passed)
    real = sum(1 for r in results if r.outcomes.get("real", Outcome(False)).passed)
    m = sum(1 for r in results if r.mismatch)
    return f"interop: {s} scenarios, {p} pass on mqlab, {real} pass on real, {m} mismatches"


def render_table(results: list[ScenarioResult]) -> str:
    rows = ["| scenario | client | mqlab | real | same observation |", "|---|---|---|---|---|"]
    for r in results:
        cells = []
        for t in TARGETS:
            o = r.outcomes.get(t)
            cells.append("—" if o is None else ("pass" if o.passed else "FAIL"))
        same = (
            "MISMATCH"
            if r.mismatch
            else (
                "yes"
                if all((o := r.outcomes.get(t)) is not None and o.passed for t in TARGETS)
                else "—"
            )
        )
        rows.append(
            f"| {r.scenario.name} | {r.scenario.client} | {cells[0]} | {cells[1]} | {same} |"
        )
    return "\n".join(rows)


def details(results: list[ScenarioResult]) -> str:
    out = []
    for r in results:
        for t, o in r.outcomes.items():
            if o.notes:
                out.append(f"notes {r.scenario.name} on {t}: {json.dumps(o.notes, sort_keys=True)}")
    for r in results:
        if all(o.passed for o in r.outcomes.values()) and not r.differs:
            continue
        out.append(f"--- {r.scenario.name}: {r.scenario.description}")
        for t, o in r.outcomes.items():
            if o.error:
                out.append(f"  {t}: {o.error}")
            else:
                out.append(f"  {t}: {json.dumps(o.observation, sort_keys=True)}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mqlab interop", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        help="run scenarios whose name starts with this (repeatable), e.g. go/",
    )
    ap.add_argument(
        "--target",
        choices=TARGETS,
        action="append",
        help="run on this target only (repeatable; default both)",
    )
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--workdir", type=Path, help="keep the clusters' files here")
    ap.add_argument(
        "--serial",
        action="store_true",
        help="run one target after the other (default: side by side)",
    )
    args = ap.parse_args(argv)
    chosen = [
        s
        for s in ordered(SCENARIOS)
        if not args.only or any(s.name.startswith(o) for o in args.only)
    ]
    if args.list:
        for s in chosen:
            print(f"{s.name:40} {s.description}")
        return 0
    targets = tuple(args.target) if args.target else TARGETS
    results = run_matrix(chosen, targets, args.workdir, parallel=not args.serial)
    print(render_table(results))
    text = details(results)
    if text:
        print(text)
    line = summary_line(results)
    print(line)
    s = len(results)
    p = sum(1 for r in results if r.outcomes.get("mqlab", Outcome(False)).passed)
    m = sum(1 for r in results if r.mismatch)
    return 1 if (m > 0 or p < s) else 0


if __name__ == "__main__":
    sys.exit(main())
