"""The Apache RocketMQ Go client (``rocketmq-client-go/v2``) as a scenario driver.

The program is ``interop/go/main.go`` in the source tree, pinned in ``interop/go/go.mod``.
It is built once with the Go toolchain into a cache directory (keyed on the checksum of
its sources, so an edit rebuilds it; concurrent callers wait on a lock) and run as a subprocess that prints one JSON object
per line: ``{"event": "send", ...}`` for each SendResult, ``{"event": "consume", ...}`` for
each delivered message.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["GO_DIR", "GoClientProcess", "build_go_client", "go_missing", "run_go_client"]

#: The Go module in a source checkout of mqlab.
GO_DIR = Path(__file__).resolve().parents[2] / "interop" / "go"


def go_missing() -> str | None:
    """Why the Go client cannot be built here, or None when it can."""
    if not (GO_DIR / "go.mod").is_file():
        return f"the Go client sources are not here ({GO_DIR}): run from a source checkout"
    if shutil.which("go") is None:
        return "the Go toolchain (`go`) is not on PATH (Debian: apt-get install golang-go)"
    return None


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mqlab" / "go"


def build_go_client(timeout_s: float = 600) -> Path:
    """Build the program once; return the binary's path."""
    reason = go_missing()
    if reason:
        raise RuntimeError(reason)
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((GO_DIR / name).read_bytes())
    binary = _cache_dir() / f"mqlab-go-client-{digest.hexdigest()[:16]}"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    # the interop matrix's two targets (threads) and other processes may ask at once: one builds
    with open(binary.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.exists():
            return binary
        tmp = binary.with_suffix(".tmp")
        proc = subprocess.run(
            ["go", "build", "-o", str(tmp), "."],
            cwd=GO_DIR, capture_output=True, text=True, timeout=timeout_s, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"go build failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        tmp.replace(binary)
    return binary


def run_go_client(
    args: list[str], *, timeout_s: float = 90, home: Path | None = None
) -> list[dict]:
    """Run ``mqlab-go-client ARGS``; its JSON lines. Raises on a non-zero exit."""
    env = dict(os.environ, ROCKETMQ_GO_LOG_LEVEL="error")
    if home is not None:  # the client keeps broadcasting offsets and logs under $HOME
        env["HOME"] = str(home)
    proc = subprocess.run(
        [str(build_go_client()), *args],
        capture_output=True, text=True, timeout=timeout_s, env=env, check=False,
    )  # fmt: skip
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0:
        raise RuntimeError(
            f"mqlab-go-client {' '.join(args)} exited {proc.returncode}; "
            f"stderr: {proc.stderr[-2000:]!r}; last lines: {lines[-3:]}"
        )
    return lines


class GoClientProcess:
    """A Go client left running (``-linger``) while something else looks at the cluster."""

    def __init__(self, args: list[str], *, home: Path | None = None) -> None:
        import queue
        import threading

        env = dict(os.environ, ROCKETMQ_GO_LOG_LEVEL="error")
        if home is not None:
            env["HOME"] = str(home)
        self.proc = subprocess.Popen(
            [str(build_go_client()), *args],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
            start_new_session=True,
        )  # fmt: skip
        self.lines: list[dict] = []
        self._queue: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self._queue.put(json.loads(line))
        self._queue.put(None)

    def wait_lingering(self, timeout_s: float = 60) -> list[dict]:
        """Read its lines until it says it is lingering (its work done, still connected)."""
        import queue
        import time

        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            try:
                item = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if item is None:
                break
            self.lines.append(item)
            if item.get("event") == "lingering":
                return self.lines
        self.stop()
        raise RuntimeError(f"the Go client did not get to its linger: {self.lines[-3:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def __enter__(self) -> GoClientProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
