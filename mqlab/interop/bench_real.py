"""``python -m mqlab bench real``: the Java client's load on the real 4.9.3 broker and on mqlab.

One run, side by side: for each target (the real broker first, then ``mqlab serve``; one at
a time, so they do not compete for the cores) ``org.mqlab.interop.JavaBench`` sends 100-byte
messages synchronously from 1 and from 4 producer threads and a push consumer takes them
end to end. Printed: msg/s for sending and end to end, the p50/p99 of the send call and of
send-to-consume, and mqlab's figures as a ratio of the real broker's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mqlab.interop.targets import open_target

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab bench real", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--messages", type=int, default=5000, help="messages per producer thread")
    ap.add_argument("--threads", default="1,4", help="producer thread counts (default 1,4)")
    args = ap.parse_args(argv)
    threads = [int(x) for x in args.threads.split(",")]
    root = Path(tempfile.mkdtemp(prefix="mqlab-bench-real-"))
    results: dict[tuple[str, int], dict] = {}
    for kind in ("real", "mqlab"):
        target = open_target(kind, root / kind, benchmark=True)
        try:
            for n in threads:
                r = run_java_bench(target.namesrv_addr, f"BenchT{n}", n, args.messages, root / kind)
                results[(kind, n)] = r
                print(f"{kind:6} {n} thread(s): {json.dumps(r)}", flush=True)
        finally:
            target.close()
    load = os.getloadavg()
    print(f"\nJava client, 100-byte sync sends, {args.messages} per thread; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")  # fmt: skip
    cols = ("sendMsgPerSec", "e2eMsgPerSec", "sendP50Ms", "sendP99Ms", "e2eP50Ms", "e2eP99Ms")
    print(f"{'threads':>7} {'broker':>6} " + " ".join(f"{c:>13}" for c in cols))
    for n in threads:
        for kind in ("real", "mqlab"):
            r = results[(kind, n)]
            print(f"{n:>7} {kind:>6} " + " ".join(f"{r[c]:>13}" for c in cols))
        real, mq = results[("real", n)], results[("mqlab", n)]
        ratios = [mq[c] / real[c] if real[c] else float("nan") for c in cols]
        print(f"{n:>7} {'ratio':>6} " + " ".join(f"{x:>12.2f}x" for x in ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
