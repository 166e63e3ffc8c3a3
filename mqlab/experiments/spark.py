"""Sweeps on Spark: runs as Spark tasks, results as DataFrames, written as Parquet.

Mirrors no RocketMQ class. ``run_sweep_spark(sweep)`` runs the sweep's ``RunConfig``s
(as JSON) in ``n`` tasks, task ``i`` running configs ``i, i + n, …``: ``mapInArrow`` over
``spark.range(0, n, 1, n)`` (one row per task, so no shuffle; on classic sessions and on
Spark Connect, which has no RDD API), or ``parallelize(range(n), n).mapPartitions(run)``
(``method="rdd"``, classic only). A task calls ``task.execute`` (the same code as the local
runners, so the rows are identical) and returns one row per run: the metrics columns plus
the run's events as an array of structs. Arrow is the default because it costs the
executors less than pickled rows (about 1 CPU-second per 200 runs on a 2-worker cluster). The driver persists that, and ``SparkSweepResult`` exposes ``metrics``
(the array dropped) and ``events`` (exploded) as DataFrames; ``write(dir)`` writes both
with ``partitionBy("point")`` in the layout of ``mqlab.experiments.parquet``.

Sessions (``get_session``):

* default: an embedded ``local[*]`` session: UI off, no console progress, 2 shuffle
  partitions, bound to 127.0.0.1 (``SPARK_LOCAL_IP``), ``PYSPARK_PYTHON`` = this
  interpreter (CONTRIBUTING.md §3), a C1-only JIT and the serial GC (``LOCAL_JAVA_OPTS``);
* a cluster: ``MQLAB_SPARK_MASTER=spark://host:7077`` (or ``yarn``, ``k8s://…``), or
  ``spark.master`` in ``config``; under ``spark-submit`` its ``--master`` is kept. ``yarn``
  needs ``HADOOP_CONF_DIR`` (``mqlab.experiments.yarn`` starts a one-machine YARN cluster);
* Spark Connect: ``SPARK_REMOTE=sc://host:15002`` (needs ``pyspark[connect]``).

The driver JVM's own output (its start-up warnings such as "Using incubator modules", log4j's
console lines such as "NativeCodeLoader", and the Python workers' stderr, which they inherit
from it) goes to a log file, ``spark_log_path()`` (``$MQLAB_SPARK_LOG`` overrides), not to the
notebook: ``get_session`` starts the py4j gateway itself with its stdout and stderr redirected
(``launch_gateway(popen_kwargs=...)``, the hook pyspark offers for this).

A local session maps the AppCDS archive ``.cache/spark-cds.jsa`` of the checkout when it
exists (``-XX:SharedArchiveFile``, CONTRIBUTING.md §3: about half the JVM start);
``build_cds_archive()`` makes it (one extra JVM start; the tests' conftest calls it). A
stale archive (another JDK or pyspark) is ignored by the JVM (``-Xshare:auto``).

On a cluster (any master but ``local``, and always on Spark Connect) ``run_sweep_spark``
first ships mqlab to the executors and checks them (``mqlab.experiments.ship``): a zip
of the driver's ``mqlab`` and one of its pure-Python dependencies go out with
``addPyFile`` / ``addArtifacts(pyfile=True)``, and a probe task names any compiled package
(numpy, pandas, pyarrow) the executors lack. mqlab's runs need no JVM jars. The run itself
writes a temp store directory on the executor and removes it.

The runs execute as one job group (``mqlab.experiments.jobs``): a ``tqdm.auto`` progress
bar counts them, and Ctrl-C or a kernel interrupt cancels just that group's jobs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqlab.experiments.parquet import manifest, write_manifest
from mqlab.experiments.schema import EVENT_COLUMNS, arrow_schema, metrics_columns, spark_schema
from mqlab.experiments.sweep import RunConfig, Sweep
from mqlab.experiments.task import execute

__all__ = [
    "LOCAL_CONFIG",
    "LOCAL_JAVA_OPTS",
    "get_session",
    "run_sweep_spark",
    "SparkSweepResult",
    "is_connect",
    "default_tasks",
    "cds_archive_path",
    "build_cds_archive",
    "spark_log_path",
    "SparkConfigurationError",
]

#: Settings of the embedded session (CONTRIBUTING.md §3): quiet, small, loopback only.
LOCAL_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    "spark.python.worker.reuse": "true",
}

#: JVM options of an embedded session: the C1 JIT only and the serial collector. The driver
#: JVM of a local session is short-lived and only plans tiny jobs (the runs are Python), so
#: C2 compilation threads and a parallel GC cost start-up CPU that never pays back: about
#: half of the session start and of the first query on a 2-core machine (issue 4).
LOCAL_JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def cds_archive_path() -> Path:
    """``.cache/spark-cds.jsa`` next to the ``mqlab`` package (``$MQLAB_SPARK_CDS`` overrides)."""
    env = os.environ.get("MQLAB_SPARK_CDS")
    if env:
        return Path(env)
    import mqlab

    return Path(mqlab.__file__).resolve().parent.parent / ".cache" / "spark-cds.jsa"


_QUIET_CDS = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"


def build_cds_archive(path: str | Path | None = None, *, timeout_s: float = 300) -> bool:
    """Write the AppCDS archive by starting (and stopping) a session in a subprocess.

    The JVM dumps the classes it loaded when it exits (``-XX:ArchiveClassesAtExit``).
    Returns whether the archive exists afterwards.
    """
    import subprocess
    import time

    target = Path(path) if path is not None else cds_archive_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    opts = f"{_QUIET_CDS} -XX:ArchiveClassesAtExit={target}"
    code = (
        "from mqlab.experiments.spark import get_session\n"
        f"s = get_session('local[1]', config={{'spark.driver.extraJavaOptions': {opts!r}}})\n"
        "s.range(10).groupBy().count().collect()\n"
        "s.stop()\n"
    )
    subprocess.run([sys.executable, "-c", code], timeout=timeout_s, capture_output=True,
                   check=False)  # fmt: skip
    deadline = time.monotonic() + 60
    while not target.exists() and time.monotonic() < deadline:
        time.sleep(0.5)  # the JVM writes the archive as it exits, after Python has
    return target.exists()


def spark_log_path() -> Path:
    """Where the driver JVM's stdout and stderr go: ``$MQLAB_SPARK_LOG``, else
    ``<tmp>/mqlab-spark/driver-<pid>.log``."""
    env = os.environ.get("MQLAB_SPARK_LOG")
    if env:
        return Path(env)
    import tempfile

    return Path(tempfile.gettempdir()) / "mqlab-spark" / f"driver-{os.getpid()}.log"


def _launch_gateway_to_log(settings: dict[str, str]) -> None:
    """Start the py4j gateway (the driver JVM) with its output in ``spark_log_path()``.

    Does nothing when a gateway is already up (a second session in this process) or when
    ``spark-submit`` started us (``PYSPARK_GATEWAY_PORT``: the JVM is already there). The
    settings go on spark-submit's command line, as ``SparkContext`` would pass them.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    log = spark_log_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    conf = SparkConf(loadDefaults=False)
    for k, v in settings.items():
        conf.set(k, v)
    with open(log, "ab") as out:  # the child keeps its own copy of the descriptor
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": out, "stderr": out})
        except Exception as e:
            raise RuntimeError(f"the Spark driver JVM did not start; see {log}") from e
    SparkContext._ensure_initialized(gateway=gateway)


class SparkConfigurationError(ValueError):
    """The environment cannot give a session on the master asked for (the message says why)."""


def get_session(master: str | None = None, *, app_name: str = "mqlab",
                config: dict[str, str] | None = None):  # fmt: skip
    """A SparkSession: embedded ``local[*]`` unless told otherwise (see the module notes).

    Args:
        master: ``local[2]``, ``spark://…``, ``yarn``, ``sc://…`` (Connect); default from
            ``SPARK_REMOTE``, ``MQLAB_SPARK_MASTER``, ``config["spark.master"]``, else
            ``local[*]``.
        app_name: the application name.
        config: extra Spark settings (``MQLAB_SPARK_JAVA_OPTS`` sets the driver's JVM
            options; otherwise a local session maps the AppCDS archive if there is one).

    Raises:
        SparkConfigurationError: ``yarn`` without ``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR``.
    """
    from pyspark.sql import SparkSession

    config = dict(config or {})
    remote = master if master and master.startswith("sc://") else os.environ.get("SPARK_REMOTE")
    if remote:
        builder = SparkSession.builder.remote(remote).appName(app_name)
        for k, v in config.items():
            builder = builder.config(k, v)
        return builder.getOrCreate()
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    master = master or os.environ.get("MQLAB_SPARK_MASTER") or config.pop("spark.master", None)
    if master is None and not under_submit:
        master = "local[*]"
    if master == "yarn" and not (
        os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")
    ):
        raise SparkConfigurationError(
            "MQLAB_SPARK_MASTER=yarn needs HADOOP_CONF_DIR (or YARN_CONF_DIR): the directory of "
            "the cluster's core-site.xml and yarn-site.xml, which say where its ResourceManager is"
        )  # fmt: skip
    builder = SparkSession.builder.appName(app_name)
    settings: dict[str, str] = {}
    settings["spark.ui.showConsoleProgress"] = "false"  # run_sweep_spark draws its own bar
    if master is not None:
        builder = builder.master(master)
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            settings.update(LOCAL_CONFIG)
    java_opts = os.environ.get("MQLAB_SPARK_JAVA_OPTS")
    if java_opts:
        settings["spark.driver.extraJavaOptions"] = java_opts
    elif master is not None and master.startswith("local"):
        cds = cds_archive_path()
        share = f"{_QUIET_CDS} -XX:SharedArchiveFile={cds} " if cds.exists() else ""
        settings["spark.driver.extraJavaOptions"] = share + LOCAL_JAVA_OPTS
    settings.update(config)
    for k, v in settings.items():
        builder = builder.config(k, v)
    launch = {"spark.app.name": app_name, **({"spark.master": master} if master else {})}
    _launch_gateway_to_log({**launch, **settings})
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (no ``sparkContext``, no RDDs)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _columns(sweep: Sweep) -> list[tuple[str, str]]:
    return metrics_columns(sweep.param_types)


def _combined_schema(sweep: Sweep):
    from pyspark.sql import types as T

    return T.StructType(
        list(spark_schema(_columns(sweep)).fields)
        + [T.StructField("run_events", T.ArrayType(spark_schema(EVENT_COLUMNS)), True)]
    )


def _rdd_partition(configs: list[str], tasks: int):
    """``mapPartitions`` body over ``parallelize(range(tasks), tasks)``: task ``i`` runs
    ``configs[i::tasks]``; each run yields its metrics values and its events list."""

    def run(indexes: Iterator[int]) -> Iterator[tuple]:
        for task in indexes:
            for text in configs[task::tasks]:
                out = execute(RunConfig.from_json(text))
                yield (*out.metrics.values(), out.events)

    return run


def _arrow_partition(columns: list[tuple[str, str]], configs: list[str], tasks: int):
    """``mapInArrow`` body (Spark Connect): the same rows as Arrow record batches.

    Its input is ``spark.range(0, tasks, 1, tasks)``, one row per task holding the task's
    index ``i``; the task runs ``configs[i::tasks]`` (they travel inside the function). So the
    runs need no shuffle to reach their tasks.
    """

    def run(batches):
        import pyarrow as pa

        fields = list(arrow_schema(columns)) + [
            pa.field("run_events", pa.list_(pa.struct(list(arrow_schema(EVENT_COLUMNS)))))
        ]
        schema = pa.schema(fields)
        names = [n for n, _ in EVENT_COLUMNS]
        for batch in batches:
            for task in batch.column("id").to_pylist():
                for text in configs[task::tasks]:
                    out = execute(RunConfig.from_json(text))
                    row = dict(out.metrics)
                    row["run_events"] = [dict(zip(names, e, strict=True)) for e in out.events]
                    yield pa.RecordBatch.from_pylist([row], schema=schema)

    return run


_CORES: dict[str, int] = {}


def default_tasks(spark: Any) -> int:
    """How many tasks a sweep gets by default: 4 per core the session's executors offer.

    A classic session reads ``defaultParallelism``. Spark Connect has no ``sparkContext``:
    its default parallelism is read once per session as the number of partitions
    ``spark.range`` splits into (one job, no Python). Four tasks per core keep the cores busy
    to the end (each task gets every n-th run) while each task still runs many runs: every
    task costs a Python worker round trip, and on 2 cores 64 tasks cost about 5 CPU-seconds
    more than 8 (``python -m mqlab bench sweep``).
    """
    if not is_connect(spark):
        return 4 * spark.sparkContext.defaultParallelism
    key = spark.session_id
    if key not in _CORES:
        from pyspark.sql import functions as F

        ids = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p"))
        _CORES[key] = int(ids.agg(F.max("p").alias("p")).first()["p"]) + 1
    return 4 * _CORES[key]


@dataclass(slots=True)
class SparkSweepResult:
    """A sweep's results as Spark DataFrames (``metrics``: one row per run; ``events``)."""

    sweep: Sweep
    metrics: Any
    events: Any
    combined: Any

    def write(self, out_dir: str | Path, *, command: str | None = None) -> str:
        """Write partitioned Parquet (and, for a local path, ``sweep.json``)."""
        out = str(out_dir).rstrip("/")
        for name, df in (("metrics", self.metrics), ("events", self.events)):
            (df.write.mode("overwrite").partitionBy("point").option("compression", "zstd")
             .parquet(f"{out}/{name}"))  # fmt: skip
        if "://" not in out or out.startswith("file://"):
            local = out.removeprefix("file://")
            runs = len(self.sweep.configs())
            write_manifest(local, manifest(self.sweep, runs=runs, command=command))
        return out

    def to_pandas(self) -> tuple[Any, Any]:
        """(metrics, events) as pandas frames in the local runners' canonical order."""
        from mqlab.experiments.parquet import sort_events, sort_metrics

        return sort_metrics(self.metrics.toPandas()), sort_events(self.events.toPandas())

    def unpersist(self) -> None:
        self.combined.unpersist()


def _ships(spark: Any, ship: bool | None) -> bool:
    """Whether to ship mqlab: asked for, else ``MQLAB_SPARK_SHIP``, else unless local."""
    if ship is not None:
        return ship
    env = os.environ.get("MQLAB_SPARK_SHIP", "").lower()
    if env in ("0", "1", "true", "false", "yes", "no"):
        return env in ("1", "true", "yes")
    return is_connect(spark) or not spark.sparkContext.master.startswith("local")


def run_sweep_spark(sweep: Sweep, spark: Any = None, *, slices: int | None = None,
                    method: str | None = None, progress: bool = True,
                    ship: bool | None = None) -> SparkSweepResult:  # fmt: skip
    """Run every configuration of ``sweep`` as Spark tasks.

    Args:
        sweep: what to run.
        spark: a session (default ``get_session()``).
        slices: how many tasks (default ``default_tasks(spark)``: 4 per core, never more
            than runs). Each task gets every n-th run, so a slow grid point is spread over
            all tasks.
        method: ``"arrow"`` (``mapInArrow``; the default) or ``"rdd"``
            (``parallelize().mapPartitions()``; classic sessions only).
        progress: show a progress bar (``tqdm.auto``).
        ship: send mqlab to the executors and check them first (``mqlab.experiments.ship``);
            default: on a cluster and on Spark Connect, not on ``local[…]``
            (``MQLAB_SPARK_SHIP=0/1`` overrides the default).

    Returns:
        A ``SparkSweepResult``; the runs have executed (the combined frame is persisted).

    Raises:
        ExecutorEnvironmentError: the executors lack a package the runs need.
        KeyboardInterrupt: interrupted; the sweep's Spark jobs were cancelled.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from mqlab.experiments.jobs import run_job

    spark = spark or get_session()
    configs = [c.to_json() for c in sweep.configs()]
    connect = is_connect(spark)
    if _ships(spark, ship):
        from mqlab.experiments.ship import check_executors
        from mqlab.experiments.ship import ship as ship_mqlab

        ship_mqlab(spark)
        check_executors(spark)
    n = slices or default_tasks(spark)
    n = max(1, min(n, len(configs)))
    method = method or "arrow"
    schema = _combined_schema(sweep)
    if method == "rdd":
        if connect:
            raise ValueError("method 'rdd' needs a classic session: Spark Connect has no RDDs")
        tasks = spark.sparkContext.parallelize(range(n), n)  # one element per task: its index
        rdd = tasks.mapPartitions(_rdd_partition(configs, n))
        combined = spark.createDataFrame(rdd, schema, verifySchema=False)
    elif method == "arrow":
        tasks = spark.range(0, n, 1, n)  # one row per task: its index
        combined = tasks.mapInArrow(_arrow_partition(_columns(sweep), configs, n), schema)
    else:
        raise ValueError(f"method must be 'rdd' or 'arrow', got {method!r}")
    combined = combined.persist(StorageLevel.MEMORY_AND_DISK)
    try:  # run now: both frames below read the persisted rows
        run_job(spark, combined.count, runs=len(configs), tasks=n, progress=progress,
                desc=f"{sweep.name} (spark ×{n} tasks)")  # fmt: skip
    except BaseException:
        combined.unpersist()
        raise
    metrics = combined.drop("run_events")
    events = combined.select(F.explode("run_events").alias("e")).select("e.*")
    return SparkSweepResult(sweep, metrics, events, combined)
