"""Fixtures for the experiment tests: one local Spark session for the whole run.

The session follows CONTRIBUTING.md §3: ``local[2]``, UI off, 2 shuffle partitions,
127.0.0.1, C1-only JIT and the serial GC for a quick start, and the AppCDS archive
``.cache/spark-cds.jsa`` (§3.4; the first run builds it in a subprocess, one extra JVM
start). Skipped when ``MQLAB_SKIP_SPARK=1``, or when pyspark or Java is missing.
"""

import os
import shutil

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def _java_opts() -> str:
    """C1 only and the serial GC (tests only), plus the AppCDS archive, made on first use."""
    if os.environ.get("MQLAB_SPARK_JAVA_OPTS"):
        return os.environ["MQLAB_SPARK_JAVA_OPTS"]
    from mqlab.experiments.spark import build_cds_archive, cds_archive_path

    opts = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Xlog:cds=off"
    archive = cds_archive_path()
    if archive.exists() or build_cds_archive(archive):
        opts += f" -Xlog:cds+dynamic=off -XX:SharedArchiveFile={archive}"
    return opts


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A local[2] SparkSession shared by every Spark test."""
    if os.environ.get("MQLAB_SKIP_SPARK", "").lower() in ("1", "true", "yes"):
        pytest.skip("MQLAB_SKIP_SPARK=1")
    pytest.importorskip("pyspark")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    from mqlab.experiments.spark import get_session

    session = get_session(
        "local[2]",
        app_name="mqlab-tests",
        config={
            "spark.default.parallelism": "2",
            "spark.driver.memory": "1g",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
            "spark.driver.extraJavaOptions": _java_opts(),
        },
    )
    yield session
    session.stop()
