"""The embedded Spark session keeps the notebook clean: the driver JVM's warnings go to a log.

A notebook shows whatever the kernel process writes to its stderr descriptor as a red box;
the driver JVM inherits that descriptor unless ``get_session`` redirects it (issue 13,
defect 8). Run in a subprocess, so the session starts fresh and its stderr can be read.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

SESSION = """
from mqlab.experiments.spark import get_session, spark_log_path
s = get_session("local[1]", config={"spark.driver.memory": "512m"})
print(s.range(5).count(), s.sparkContext.parallelize([1, 2], 1).map(lambda x: x * 2).collect())
print(spark_log_path())
s.stop()
"""


def test_session_start_writes_nothing_to_stderr(tmp_path):
    """Session start, a SQL job and a Python-worker job: stderr stays empty; the JVM's own
    start-up lines ("Using incubator modules", log4j's default-profile notice) are in the log."""
    if os.environ.get("MQLAB_SKIP_SPARK", "").lower() in ("1", "true", "yes"):
        pytest.skip("MQLAB_SKIP_SPARK=1")
    pytest.importorskip("pyspark")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    log = tmp_path / "driver.log"
    env = {**os.environ, "MQLAB_SPARK_LOG": str(log), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", SESSION], env=env, capture_output=True,
                          text=True, timeout=240, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines() == ["5 [2, 4]", str(log)]
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "Using Spark's default log4j profile" in text
