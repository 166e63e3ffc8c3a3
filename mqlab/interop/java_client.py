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
from pathlib import Path

__all__ = ["java_missing", "run_java_scenario"]

MAIN = "org.mqlab.interop.JavaScenarios"
FLAGS = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]


def java_missing() -> str | None:
    from mqlab.conformance.real_cluster import java_tools_missing

    return java_tools_missing()


def run_java_scenario(
    name: str, namesrv_addr: str, prefix: str, workdir: Path, *, timeout_s: float = 120
) -> dict:
    """Run one Java scenario; its result object. Raises RuntimeError when it failed."""
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
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False,
            stdin=subprocess.DEVNULL, cwd=workdir,
        )  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"Java scenario {name} hung for {timeout_s} s") from e
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    (workdir / f"{name}.stdout").write_text(proc.stdout)
    (workdir / f"{name}.stderr").write_text(proc.stderr)
    result = next((x for x in reversed(lines) if x.get("event") in ("result", "error")), None)
    if proc.returncode != 0 or result is None or result.get("event") == "error":
        why = result.get("error") if result else proc.stderr[-1500:]
        raise RuntimeError(f"Java scenario {name} failed (exit {proc.returncode}): {why}")
    result.pop("event")
    return result
