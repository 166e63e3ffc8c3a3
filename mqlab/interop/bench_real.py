"""``python -m mqlab bench real``: the Java client's load on the real 4.9.3 broker and on mqlab.

One run, side by side: for each target (the real broker first, then ``mqlab serve``; one at
a time, so they do not compete for the cores) ``org.mqlab.interop.JavaBench`` sends 100-byte
messages synchronously from 1 and from 4 producer threads and a push consumer takes them
end to end. Printed: msg/s for sending and end to end, the p50/p99 of the send call and of
send-to-consume, each broker's CPU per message handled (the real broker's JVM from
``/proc``, every thread, its 1 ms polling services and JIT included; mqlab's event-loop
thread), consumed/sent, the load average around each run, and mqlab's figures as a ratio
of the real broker's. ``--profile FILE`` runs mqlab's loop thread under cProfile and prints
its top costs in µs per message.

Measured on 2 cores shared with other jobs (load average 12-22; compare within one run)::

    run (UTC)      threads   msg/s real / mqlab  ratio   e2e p50 ms real / mqlab  ratio
    12:27 before      1          953 / 1184      1.24x        1.49 / 0.94         0.63x
                      4         3963 / 3127      0.79x        1.86 / 1.68         0.90x
    12:33 before      1         1133 / 1195      1.05x        1.47 / 1.55         1.05x
                      4         3240 / 2523      0.78x        1.91 / 2.22         1.16x
    12:51 after       1          933 / 1374      1.47x        1.90 / 1.00         0.53x
                      4         2801 / 1723      0.62x        2.26 / 2.62         1.16x
    12:52 after       1          800 / 1239      1.55x        2.34 / 0.79         0.34x
                      4         3098 / 3120      1.01x        2.59 / 1.92         0.74x

The goals (1 producer: >= 0.25x the real broker's msg/s, p50 <= 3x) hold in every run.
CPU per message: mqlab's loop 225-280 µs with 1 producer, 109-184 µs with 4; the real
JVM 940-990 and 280-320 µs (mostly its idle polling threads at these rates). mqlab's p99
is its weak side: a loaded machine preempts the one loop thread (lag of a 10 ms timer p99
33 ms, max 93 ms at load 18; GC pauses under 4 ms), and every client waits meanwhile.

Where mqlab's loop time goes (cProfile, 26 002 messages, 287 µs/msg with the profiler):
``socket.send`` 27 % (76 µs/msg, 1.8 sends a message: loopback TCP and waking the Java
reader, in the kernel), pulls (``PullMessageProcessor._process`` with ``get_message``)
18 %, sends (``SendMessageProcessor.send_message`` with the put) 16 %, decoding requests
(JSON header, ext fields) 9 %, encoding responses 6 %, the rest asyncio and framing: no
single Python hot spot left.

End-to-end latency: a parked pull is answered within one loop pass of the put (p50 0.5
ms with 4 producers, since 0 ms timers run right after the current event), but most
messages reach the consumer by its next fresh pull, so e2e follows the client's turnaround
(answer → next pull, p50 1.3 ms). When the broker is slowed (profiler on, CPU-starved) the
consumer can fall behind; its pulls then carry batches, it hands each message to its
consume pool, and its turnaround grew with the batch (2.2 ms for 1 message, 16 ms for
16+), which keeps it behind: e2e p50 23-31 ms against a send p50 of 1.1 ms in 2 of 7
profiled 1-producer runs. That is the likely cause of a 4-producer e2e p50 of 624 ms seen
once at load ~17; it did not recur in 5 side-by-side runs nor in ~15 mqlab-only runs
(loop thread at nice 19, all on one core, 16 and 32 producers: 6 745 msg/s, e2e p50 6.7 ms).
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
