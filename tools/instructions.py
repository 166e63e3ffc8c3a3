"""Instructions per explored replay or per simulated message, counted by callgrind: a figure
that does not drift with the machine's load, for comparing two trees side by side.

    python tools/instructions.py TREE [TREE ...] [--scenario NAME ...] [--e2e]

Each TREE is a checkout of mqlab (``git worktree add /tmp/old HEAD~1``, say); it is put first
on ``PYTHONPATH``, so run this from outside any tree. For each scenario of ``mqlab explore``
(default: consumer_join) the replay of its default schedule runs twice under
``valgrind --tool=callgrind``, ``--few`` and ``--many`` times (default 3 and 13), and the
difference, divided by the difference in replays, is the instructions of one replay: start-up,
imports and a process's first runs (lazy imports, ``gc.freeze``) cancel out. ``--e2e`` does the
same for ``python -m mqlab bench e2e`` at batch 1 (1 000 and 3 000 messages): instructions per
message. Hash seeds are fixed (``PYTHONHASHSEED=0``); a figure repeats within ~0.1 % (the
runs' temporary directories have random names).

Instructions are not time: C code (orjson, the ``json`` scanner) does more per instruction than
the interpreter. Use it to see small changes that the machine's noise (±30 % between runs
here) hides in timings, and confirm a large one with ``python -m mqlab bench``
(CONTRIBUTING.md §8). Needs valgrind; runs two processes at a time (~40 s of CPU each).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

REPLAY = (
    "import sys\n"
    "from mqlab.explore.scenarios import SCENARIOS\n"
    "from mqlab.explore.search import replay\n"
    "xs = SCENARIOS[sys.argv[1]]\n"
    "for _ in range(int(sys.argv[2])):\n"
    "    replay(xs, '')\n"
)
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.M)


def collected(stderr: str) -> int:
    """The instruction count callgrind prints at exit (``==PID== Collected : N``)."""
    m = _COLLECTED.search(stderr)
    if m is None:
        raise RuntimeError(f"no callgrind total in valgrind's output:\n{stderr[-2000:]}")
    return int(m.group(1))


def per_unit(few: int, many: int, n_few: int, n_many: int) -> float:
    """Instructions of one unit: the difference of two counts over the difference of units."""
    if n_many <= n_few:
        raise ValueError(f"--many ({n_many}) must be more than --few ({n_few})")
    return (many - few) / (n_many - n_few)


def _count(tree: str, argv: list[str]) -> int:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), PYTHONHASHSEED="0")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, *argv]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return collected(out.stderr)


def _replay_argv(scenario: str, n: int) -> list[str]:
    return ["-c", REPLAY, scenario, str(n)]


def _e2e_argv(n: int) -> list[str]:
    return ["-m", "mqlab", "bench", "e2e", "--messages", str(n), "--batch", "1", "--repeat",
            "1", "--ceiling", "0"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+", metavar="TREE", help="mqlab checkouts to compare")
    ap.add_argument("--scenario", action="append", help="explore scenarios (default consumer_join)")
    ap.add_argument("--few", type=int, default=3, help="replays in the first count (default 3)")
    ap.add_argument("--many", type=int, default=13, help="replays in the second (default 13)")
    ap.add_argument("--e2e", action="store_true", help="also bench e2e: instructions a message")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        ap.error("valgrind is not on PATH (Debian: apt-get install valgrind)")
    if args.many <= args.few:
        ap.error("--many must be more than --few")
    jobs: list[tuple[str, str, list[str], list[str], int, int]] = []
    for name in args.scenario or ["consumer_join"]:
        for tree in args.trees:
            jobs.append((name, tree, _replay_argv(name, args.few), _replay_argv(name, args.many),
                         args.few, args.many))  # fmt: skip
    if args.e2e:
        for tree in args.trees:
            jobs.append(("bench e2e (a message)", tree, _e2e_argv(1000), _e2e_argv(3000),
                         1000, 3000))  # fmt: skip
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = [(pool.submit(_count, j[1], j[2]), pool.submit(_count, j[1], j[3])) for j in jobs]
        results = [
            per_unit(a.result(), b.result(), j[4], j[5])
            for j, (a, b) in zip(jobs, counts, strict=True)
        ]
    first: dict[str, float] = {}
    print(f"{'what':28s} {'tree':40s} {'instructions':>14s}  vs the first tree")
    for (name, tree, *_), value in zip(jobs, results, strict=True):
        base = first.setdefault(name, value)
        print(f"{name:28s} {tree:40s} {value / 1e6:12.2f} M  {value / base - 1:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
