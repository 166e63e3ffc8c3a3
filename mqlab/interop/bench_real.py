"""``python -m mqlab bench real``: the Java client's load on the real 4.9.3 broker and on mqlab.

One run, side by side: for each target (the real broker first, then ``mqlab serve``; one at
a time, so they do not compete for the cores) ``org.mqlab.interop.JavaBench`` sends 100-byte
messages synchronously from 1 and from 4 producer threads and a push consumer takes them
end to end. Printed: msg/s for sending and end to end, the p50/p99 of the send call and of
send-to-consume, and mqlab's figures as a ratio of the real broker's.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

from mqlab.interop.targets import MqlabTarget, Target, open_target

__all__ = ["run_java_bench", "main"]

FLAGS = ["-Xms256m", "-Xmx512m", "-XX:+UseSerialGC"]


def run_java_bench(
    namesrv_addr: str, topic: str, threads: int, per_thread: int, workdir: Path
) -> dict:
    from mqlab.conformance.real_cluster import JAVA_DIR, _java, runner_classpath

    cmd = [
        _java(), *FLAGS, f"-Duser.home={workdir}", f"-Drocketmq.client.logRoot={workdir}/logs",
        f"-Dlogback.configurationFile={JAVA_DIR / 'conf' / 'logback_tools.xml'}",
        "-cp", runner_classpath(), "org.mqlab.interop.JavaBench",
        namesrv_addr, topic, str(threads), str(per_thread),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, check=False)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"JavaBench failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def _measured_run(target: Target, n: int, per_thread: int, workdir: Path) -> dict:
    """One JavaBench run, with the server's CPU per message and the load around it."""
    load0 = os.getloadavg()[0]
    cpu0 = target.cpu_seconds()
    r = run_java_bench(target.namesrv_addr, f"BenchT{n}", n, per_thread, workdir)
    cpu = target.cpu_seconds() - cpu0
    # every message the server saw: warm-ups, the topic-creating one, the measured ones
    handled = r.get("warmup", 200 * n) + 1 + r["sent"]
    r["cpuUsPerMsg"] = round(cpu * 1e6 / handled, 1)
    r["load1"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    return r


def _start_profile(target: MqlabTarget) -> cProfile.Profile:
    prof = cProfile.Profile()  # the default clock: cheap; the CPU clock costs a syscall a call
    target.run_on_loop(prof.enable)
    return prof


def _report_profile(prof: cProfile.Profile, path: str, messages: int, cpu_s: float) -> None:
    """The top functions by own time, as a share of the loop's busy time and in µs/message.

    cProfile's clock is the wall clock: on a loaded machine it also counts the time the
    thread waited for a core, spread over the functions roughly as the CPU was. So the
    shares come from the profile and the µs from the loop thread's CPU clock (``cpu_s``,
    measured in the same runs, the profiler's own overhead included). "cum" includes the
    callees; for the loop's own frames (``_run_once``, ``select``) it includes the idle wait.
    """
    prof.dump_stats(path)
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    idle = sum(v[2] for k, v in stats.items() if k[2] in _IDLE)
    busy = sum(v[2] for v in stats.values()) - idle
    us = cpu_s * 1e6 / messages
    print(f"\nmqlab's event-loop thread under cProfile: {cpu_s:.2f} s CPU for {messages} "
          f"messages = {us:.0f} µs/msg (profiler included); {busy:.2f} s busy and {idle:.2f} s "
          "idle in epoll by its wall clock. Top functions by own time:")  # fmt: skip
    rows = sorted(((k, v) for k, v in stats.items() if k[2] not in _IDLE), key=lambda kv: -kv[1][2])
    print(f"  {'share':>6} {'µs/msg':>7} {'cum µs':>7} {'calls/msg':>9}  function")
    for (file, line, func), (_cc, nc, tt, ct, _callers) in rows[:15]:
        where = func if file == "~" else f"{Path(file).name}:{line}({func})"
        print(f"  {tt / busy:>6.1%} {tt / busy * us:>7.1f} {ct / busy * us:>7.1f} "
              f"{nc / messages:>9.2f}  {where}")  # fmt: skip
    print(f"  (pstats file: {path}; `python -m pstats {path}` to browse)")


#: What the event loop's thread does when it waits for input.
_IDLE = ("<method 'poll' of 'select.epoll' objects>", "<method 'select' of 'select.epoll' objects>")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab bench real", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--messages", type=int, default=5000, help="messages per producer thread")
    ap.add_argument("--threads", default="1,4", help="producer thread counts (default 1,4)")
    ap.add_argument("--targets", default="real,mqlab", help="which brokers (default real,mqlab)")
    ap.add_argument(
        "--profile", metavar="FILE",
        help="run mqlab's event-loop thread under cProfile and write the pstats to FILE; "
        "prints the top costs as shares and in µs per message (mqlab's figures then include "
        "the profiler's overhead)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    threads = [int(x) for x in args.threads.split(",")]
    kinds = [k for k in ("real", "mqlab") if k in args.targets.split(",")]
    root = Path(tempfile.mkdtemp(prefix="mqlab-bench-real-"))
    results: dict[tuple[str, int], dict] = {}
    for kind in kinds:
        target = open_target(kind, root / kind, benchmark=True)
        prof = None
        try:
            if args.profile and isinstance(target, MqlabTarget):
                prof = _start_profile(target)
            for n in threads:
                r = _measured_run(target, n, args.messages, root / kind)
                results[(kind, n)] = r
                print(f"{kind:6} {n} thread(s): {json.dumps(r)}", flush=True)
            if prof is not None:
                target.run_on_loop(prof.disable)
                runs = [r for (k, _), r in results.items() if k == "mqlab"]
                handled = sum(r["warmup"] + 1 + r["sent"] for r in runs)
                cpu_s = sum(r["cpuUsPerMsg"] * (r["warmup"] + 1 + r["sent"]) for r in runs) / 1e6
                _report_profile(prof, args.profile, handled, cpu_s)
        finally:
            target.close()
    load = os.getloadavg()
    print(f"\nJava client, 100-byte sync sends, {args.messages} per thread; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; cpuUsPerMsg: "
          "the broker process's CPU (mqlab: its event-loop thread) per message handled")  # fmt: skip
    cols = ("sendMsgPerSec", "e2eMsgPerSec", "sendP50Ms", "sendP99Ms", "e2eP50Ms", "e2eP99Ms",
            "cpuUsPerMsg")  # fmt: skip
    print(f"{'threads':>7} {'broker':>6} " + " ".join(f"{c:>13}" for c in cols) + "  consumed/sent")
    for n in threads:
        for kind in kinds:
            r = results[(kind, n)]
            print(f"{n:>7} {kind:>6} " + " ".join(f"{r[c]:>13}" for c in cols)
                  + f"  {r['consumed']}/{r['sent']}")  # fmt: skip
        if len(kinds) == 2:
            real, mq = results[("real", n)], results[("mqlab", n)]
            ratios = [mq[c] / real[c] if real[c] else float("nan") for c in cols]
            print(f"{n:>7} {'ratio':>6} " + " ".join(f"{x:>12.2f}x" for x in ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
