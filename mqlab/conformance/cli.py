"""``python -m mqlab conformance [--report PATH] [--only GROUP] [-v] [--against real|mqlab]``.

``--codes`` prints the request-code table (``coverage``) and starts nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["main"]

DEFAULT_REPORT = Path("docs/conformance.md")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab conformance",
        description="Replay the same raw requests to the real RocketMQ 4.9.3 broker and to "
        "mqlab serve, and compare every answer.",
    )
    ap.add_argument("--report", type=Path, default=DEFAULT_REPORT,
                    help=f"Markdown report to write ({DEFAULT_REPORT})")  # fmt: skip
    ap.add_argument("--no-report", action="store_true", help="do not write the report")
    ap.add_argument("--only", action="append", default=[], metavar="GROUP",
                    help="run only this scenario group (repeatable)")  # fmt: skip
    ap.add_argument("-v", "--verbose", action="store_true", help="show every masked field")
    ap.add_argument(
        "--against", choices=["real", "mqlab"], default="real",
        help="the reference side: the real 4.9.3 cluster (default) or a second mqlab "
        "serve (a self-check of the harness that needs no Java)",
    )  # fmt: skip
    ap.add_argument(
        "--no-replication", action="store_true",
        help="skip the HA check (real master -> mqlab slave, mqlab master -> real slave) "
        "that follows the scenarios against the real broker",
    )  # fmt: skip
    ap.add_argument(
        "--no-dledger", action="store_true",
        help="skip the mixed DLedger group (an mqlab node and two real 4.9.3 DLedger nodes) "
        "and the rows across a DLedger leader kill (a real group and serve's) that follow "
        "the scenarios against the real broker",
    )  # fmt: skip
    ap.add_argument(
        "--codes", action="store_true",
        help="print every request code 4.9.3 dispatches, whether mqlab handles it and the "
        "rows that send it; starts no cluster",
    )  # fmt: skip
    return ap


def select(only: list[str]):
    from mqlab.conformance.scenarios import ALL, GROUPS

    unknown = [g for g in only if g not in GROUPS]
    if unknown:
        raise SystemExit(f"conformance: unknown group(s) {unknown}; known: {sorted(GROUPS)}")
    return [s for s in ALL if not only or s.group in only]


#: Lines of the real broker's log printed after a run with UNEXPLAINED rows start so.
REAL_LOG_PREFIX = "real broker log: "


def run(args: argparse.Namespace, out=print):
    """Start both sides, run the selected scenarios, print rows; returns the ``Run``."""
    from mqlab.conformance.coverage import coverage_table, summary_line
    from mqlab.conformance.engine import run_scenarios
    from mqlab.conformance.report import RUN_FILE, row_line, write_report
    from mqlab.conformance.scenarios import GROUPS
    from mqlab.conformance.sides import MqlabSide, RealSide

    scenarios = select(args.only)
    if args.against == "real":
        real, label = RealSide(), "the real RocketMQ 4.9.3 name server and broker"
    else:
        real, label = MqlabSide("reference"), "a second `mqlab serve` (self-check)"
    mq = MqlabSide("mqlab")
    try:
        real.start()
        mq.start()
        out(f"conformance: reference {real.broker_addr} (namesrv {real.namesrv_addr}), "
            f"mqlab {mq.broker_addr} (namesrv {mq.namesrv_addr})")  # fmt: skip
        result = run_scenarios(scenarios, real, mq, log=lambda r: out(row_line(r, args.verbose)))
        if result.tally()[3] and hasattr(real, "log_errors"):
            # a row that differs once in many runs is explained by the real side's log, which
            # goes with its work directory
            for line in real.log_errors():
                out(f"{REAL_LOG_PREFIX}{line}")
        if args.against == "real" and not getattr(args, "no_replication", False):
            replicate(real, result, out)
    finally:
        mq.stop()
        real.stop()
    if args.against == "real" and not getattr(args, "no_dledger", False):
        dledger(result, out)
    codes = coverage_table(scenarios)
    if not args.no_report:
        # the default report is tracked: its run file goes to the git-ignored artifacts/;
        # a report elsewhere gets its run file beside it
        run_file = RUN_FILE if args.report == DEFAULT_REPORT else args.report.with_suffix(".run.md")
        from mqlab.conformance import dledger_rows, dledger_upgrade

        groups_doc = {**GROUPS, "dledger-failover": dledger_rows.GROUP_DOC,
                      "dledger-upgrade": dledger_upgrade.GROUP_DOC}  # fmt: skip
        write_report(result, args.report, real_label=label, groups_doc=groups_doc, codes=codes,
                     run_file=run_file)  # fmt: skip
        out(f"conformance: report written to {args.report} (this run's timings: {run_file})")
    out(f"conformance: {result.seconds:.0f} s")
    out(result.summary())
    out(summary_line(codes))
    if result.replication_line is not None:
        out(result.replication_line)
    if result.dledger_line is not None:
        out(result.dledger_line)
    return result


def dledger(result, out=print, *, rows: bool = True):
    """The mixed DLedger group after the scenarios (mqlab/conformance/dledger_mixed.py: an
    mqlab node and two real 4.9.3 nodes, its leader changed four to six times, the mqlab
    leader cut off by a silent partition once); records the ``dledger:`` line and every difference in ``result``; the ``MixedResult`` or None.
    Then, with ``rows``, the rows across a leader kill and an upgrade (:func:`dledger_rows`;
    the mixed group's own test leaves them to tests/conformance/test_dledger_rows.py and
    test_dledger_upgrade.py)."""
    import tempfile
    import time
    from pathlib import Path

    from mqlab.conformance.dledger_mixed import check_mixed_group, summary_line
    from mqlab.conformance.real_cluster import RealClusterError

    started = time.monotonic()
    mixed = None
    with tempfile.TemporaryDirectory(prefix="mqlab-dledger-mixed-") as work:
        try:
            mixed = check_mixed_group(Path(work), out)
        except RealClusterError as e:
            result.dledger_line = "dledger: mixed group FAILED"
            result.dledger_problems = [str(e)]
        else:
            result.dledger_line = summary_line(mixed)
            result.dledger_problems = list(mixed.problems)
    for problem in result.dledger_problems:
        out(f"dledger: {problem}")
    out(f"dledger: checked in {time.monotonic() - started:.0f} s")
    if rows:
        dledger_rows(result, out)
    return mixed


def dledger_rows(result, out=print) -> None:
    """The rows of a real 4.9.3 DLedger group and ``serve --dledger-brokers 3``: across a
    leader kill (mqlab/conformance/dledger_rows.py), then over a broker's upgraded store
    (dledger_upgrade.py); each row goes into ``result`` (and counts in its tally), a failed
    start or a wait that gave up into its dledger problems."""
    import time

    from mqlab.conformance.dledger_rows import run_dledger_rows
    from mqlab.conformance.dledger_upgrade import run_upgrade_rows
    from mqlab.conformance.real_cluster import RealClusterError
    from mqlab.conformance.report import row_line

    for label, run in (("dledger rows", run_dledger_rows), ("dledger upgrade", run_upgrade_rows)):
        started = time.monotonic()
        try:
            rows, notes = run(out, log=lambda r: out(row_line(r, False)))
        except (RealClusterError, TimeoutError) as e:
            result.dledger_problems.append(f"{label}: {e}")
            out(f"{label}: FAILED: {e}")
            continue
        result.rows.extend(rows.rows)
        result.dledger_problems += notes
        for note in notes:
            out(f"{label}: {note}")
        out(f"{label}: {rows.summary().removeprefix('conformance: ')}, "
            f"in {time.monotonic() - started:.0f} s")  # fmt: skip


def replicate(real, result, out=print) -> None:
    """HA on the wire both ways, on the real side's cluster after its scenarios (its master's
    whole commit log is replicated to an mqlab slave); records the ``replication:`` line and
    every difference (each naming its first differing offset) in ``result``."""
    import tempfile
    import time
    from pathlib import Path

    from mqlab.conformance.replication import ReplicationError, check_replication, summary_line

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mqlab-ha-wire-") as work:
        try:
            b1, b2 = check_replication(
                real.cluster, Path(work), properties=real.properties, all_topics=True
            )
        except ReplicationError as e:
            result.replication_line = "replication: FAILED"
            result.replication_problems = [str(e)]
        else:
            result.replication_line = summary_line(b1, b2)
            result.replication_problems = b1.problems() + b2.problems()
            out(f"replication: B1 also compared the consume queues of {b1.other_topics} "
                "other topics of the real master")  # fmt: skip
    for problem in result.replication_problems:
        out(f"replication: {problem}")
    out(f"replication: checked in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.codes:
        from mqlab.conformance.coverage import coverage_table, text_table

        print(text_table(coverage_table(select(args.only))))
        return 0
    if args.against == "real":
        from mqlab.conformance.real_cluster import java_tools_missing

        why = java_tools_missing()
        if why:
            print(f"conformance: cannot start the real broker: {why}", file=sys.stderr)
            return 2
    result = run(args, out=lambda s: print(s, flush=True))
    return 1 if result.tally()[3] or result.replication_problems or result.dledger_problems else 0
