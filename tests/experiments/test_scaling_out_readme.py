"""The README's "Scaling out" commands are the ones the cluster tests run (mqlab.experiments.cluster).

Each command line in that section's code blocks must be an instance of a command template that
``LocalCluster``, ``ConnectServer``, ``YarnCluster``, ``tests/experiments/test_spark_cluster.py`` or
``tests/experiments/test_spark_yarn.py`` runs (ports, paths and URLs may differ), or one of the two ``export`` lines whose values those tests also set; and
every template must appear. No Spark needed.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from mqlab.experiments.cluster import (
    CONNECT_COMMAND,
    MASTER_COMMAND,
    SWEEP_ON_CONNECT,
    SWEEP_ON_MASTER,
    WORKER_COMMAND,
    spark_home,
)
from mqlab.experiments.yarn import MINIYARN_COMMAND, SWEEP_ON_YARN

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME_LINE = (
    'export SPARK_HOME=$(python -c "import os, pyspark; print(os.path.dirname(pyspark.__file__))")'
)
EXPORTS = [SPARK_HOME_LINE, "export SPARK_LOCAL_IP=127.0.0.1"]
TEMPLATES = {
    "MASTER_COMMAND": MASTER_COMMAND,
    "WORKER_COMMAND": WORKER_COMMAND,
    "CONNECT_COMMAND": CONNECT_COMMAND,
    "SWEEP_ON_MASTER": SWEEP_ON_MASTER,
    "SWEEP_ON_CONNECT": SWEEP_ON_CONNECT,
    "MINIYARN_COMMAND": MINIYARN_COMMAND,
    "SWEEP_ON_YARN": SWEEP_ON_YARN,
}


def _section_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Scaling out", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"^```bash\n(.*?)^```", section, flags=re.S | re.M)
    lines = [ln.strip() for b in blocks for ln in b.splitlines()]
    return [ln.removesuffix("&").strip() for ln in lines if ln and not ln.startswith("#")]


def _pattern(template: str) -> re.Pattern:
    parts = re.split(r"(\{\w+\})", template)
    regex = "".join(
        r"\$SPARK_HOME" if p == "{spark_home}" else r"\S+" if p.startswith("{") else re.escape(p)
        for p in parts
    )
    return re.compile(regex + r"\Z")


def test_every_scaling_out_command_is_a_tested_one():
    """10 commands in three blocks; each matches a template; every template is used."""
    commands = _section_commands()
    assert len(commands) == 10, commands
    used = set()
    for cmd in commands:
        if cmd.startswith("export "):
            assert cmd in EXPORTS, cmd
            continue
        names = [n for n, t in TEMPLATES.items() if _pattern(t).match(cmd)]
        assert names, f"README command matches no tested template: {cmd}"
        used.update(names)
    assert used == set(TEMPLATES)


def test_the_spark_home_line_names_the_package_the_cluster_uses():
    """The README's SPARK_HOME one-liner prints the directory LocalCluster starts Spark from."""
    code = SPARK_HOME_LINE.split('-c "', 1)[1].rsplit('")', 1)[0]
    env = {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()  # fmt: skip
    assert Path(out) == spark_home() if "SPARK_HOME" not in os.environ else Path(out).is_dir()
