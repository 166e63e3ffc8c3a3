"""Benchmarks that print figures: ``python -m mqlab bench {broker,e2e,net,load,real,sweep,explore}``.

Speed is measured here, by scripts that print numbers, never by timed assertions in tests.
Each command is one module, also runnable as ``python -m mqlab.bench.<name>``:

* ``broker``: the store and the send/pull processors in-process, beside a raw-Python floor;
* ``e2e``: producer → broker → push consumers in simulation, and the codec ceiling;
* ``net``: the official C++ client over loopback against ``mqlab serve``, beside an echo floor;
* ``load``: 8 C++ producers and 4 push consumers with a broker SIGKILL in the middle (lost,
  duplicates by cause, latencies, RSS);
* ``real``: the Java client's sync sends and end-to-end latency on the real RocketMQ 4.9.3
  broker and on ``mqlab serve``, side by side, with ratios; ``--group sync`` / ``async``: on a
  SYNC_MASTER / ASYNC_MASTER with one slave on each side, every send checked SEND_OK;
* ``sweep``: a 200-run experiment sweep sequentially and on Spark (local, standalone,
  Connect);
* ``explore``: schedule exploration (``mqlab.explore``): one run's phases, schedules per
  second per core, the exhaustive search on each runner with its speed-up.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["COMMANDS", "main"]

COMMANDS: dict[str, str] = {
    "broker": "store and processors in-process, beside a raw-Python floor",
    "e2e": "producer -> broker -> push consumers in simulation; the codec ceiling",
    "net": "the C++ client over loopback against mqlab serve, beside an echo floor",
    "load": "8 C++ producers, 4 push consumers, a broker SIGKILL in the middle",
    "real": "the Java client on the real 4.9.3 broker and on mqlab serve, side by side",
    "sweep": "a 200-run sweep sequentially and on Spark (local, standalone, Connect)",
    "explore": "schedule exploration: a run's phases, schedules/s, the search per runner",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print("usage: python -m mqlab bench {" + ",".join(COMMANDS) + "} [options]")
        for name, what in COMMANDS.items():
            print(f"  {name:<7} {what}")
        return 0 if argv[:1] in ([], ["-h"], ["--help"]) else 2
    module = importlib.import_module(f"mqlab.bench.{argv[0]}")
    return module.main(argv[1:])
