"""The RocketMQ 4.9.3 Java client as a scenario driver.

``org.mqlab.interop.JavaScenarios`` (``conformance/java``, built by Maven with the rest of
that project) runs one named scenario with DefaultMQProducer, DefaultMQPushConsumer,
DefaultLitePullConsumer or DefaultMQPullConsumer and prints JSON lines; the last one is
``{"event": "result", ...}``, what a user can observe.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["java_missing", "run_java_interactive", "run_java_scenario"]

MAIN = "org.mqlab.interop.JavaScenarios"
FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]


def java_missing() -> str | None:
    from mqlab.conformance.real_cluster import java_tools_missing

    return java_tools_missing()


def run_java_scenario(
    name: str, namesrv_addr: str, prefix: str, workdir: Path, *, timeout_s: float = 120,
    env: dict[str, str] | None = None,
) -> dict:  # fmt: skip
    """Run one Java scenario (``env``: more environment for it); its result object. Raises
    RuntimeError when it failed."""
    cmd, base = _command(name, namesrv_addr, prefix, workdir)
    env = {**base, **(env or {})}
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False,
            stdin=subprocess.DEVNULL, cwd=workdir,
        )  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"Java scenario {name} hung for {timeout_s} s") from e
    return _result(name, workdir, proc.returncode, proc.stdout, proc.stderr)


def _command(name: str, namesrv_addr: str, prefix: str, workdir: Path):
    from mqlab.conformance.real_cluster import JAVA_DIR, _java, runner_classpath

    classpath = runner_classpath()
    workdir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
    cmd = [
        _java(), *FLAGS,
        f"-Duser.home={workdir}",
        f"-Drocketmq.client.logRoot={workdir}/logs",
        f"-Dlogback.configurationFile={JAVA_DIR / 'conf' / 'logback_tools.xml'}",
        "-cp", classpath, MAIN, name, namesrv_addr, prefix,
    ]  # fmt: skip
    return cmd, env


def _result(name: str, workdir: Path, returncode: int, stdout: str, stderr: str) -> dict:
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    (workdir / f"{name}.stdout").write_text(stdout)
    (workdir / f"{name}.stderr").write_text(stderr)
    result = next((x for x in reversed(lines) if x.get("event") in ("result", "error")), None)
    if returncode != 0 or result is None or result.get("event") == "error":
        why = result.get("error") if result else stderr[-1500:]
        raise RuntimeError(f"Java scenario {name} failed (exit {returncode}): {why}")
    result.pop("event")
    return result


def run_java_interactive(
    name: str,
    namesrv_addr: str,
    prefix: str,
    workdir: Path,
    steps: dict[str, Callable[[dict], None]],
    *,
    timeout_s: float = 300,
) -> dict:
    """Run a Java scenario that asks the harness to act midway (``JavaScenarios#harness``):
    on each line ``{"event": "await", "step": S, ...}`` it prints, ``steps[S](that line)``
    runs here, then ``"S done"`` goes to the scenario's stdin. A step that raises ends the
    scenario (killed) with that error; so does ``timeout_s``. Its result object."""
    cmd, env = _command(name, namesrv_addr, prefix, workdir)
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, cwd=workdir,
    )  # fmt: skip
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        proc.kill()

    watchdog = threading.Timer(timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    err_chunks: list[str] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        err_chunks.append(proc.stderr.read())

    err_reader = threading.Thread(target=read_stderr, daemon=True)
    err_reader.start()
    out: list[str] = []
    try:
        assert proc.stdout is not None and proc.stdin is not None
        for line in proc.stdout:
            out.append(line)
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            if event.get("event") != "await":
                continue
            step = event["step"]
            if step not in steps:
                raise RuntimeError(f"Java scenario {name} asked for an unknown step {step!r}")
            steps[step](event)
            proc.stdin.write(f"{step} done\n")
            proc.stdin.flush()
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        watchdog.cancel()
        err_reader.join(10)
        (workdir / f"{name}.stdout").write_text("".join(out))
        (workdir / f"{name}.stderr").write_text("".join(err_chunks))
    if timed_out.is_set():
        raise RuntimeError(f"Java scenario {name} hung for {timeout_s} s")
    return _result(name, workdir, proc.returncode, "".join(out), "".join(err_chunks))
