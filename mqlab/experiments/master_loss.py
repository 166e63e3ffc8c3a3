"""The master-loss sweep: send latency against acknowledged messages lost (issue 24, item 7).

Mirrors no RocketMQ class; it measures what ``brokerRole`` and ``flushDiskType`` buy
(mechanisms.md "HA replication", steps 8 and 12-14). One run (``run_point``):

1. a ``Lab`` with one broker group: master ``broker-a`` (``role``, ``flush``) and one slave
   ``broker-a-s1``; the replication link master ↔ slave gets ``link_jitter_ms`` of seeded
   jitter each way (``Lab.set_link``), the producer's link stays 1 ms;
2. ``warmup_ms`` (12 s) so the slave has connected and made its first report (6 s after
   connecting, HA step 3): a SYNC_MASTER send no longer waits for it;
3. the producer sends ``messages`` messages as a synchronous producer does: message ``i``
   at ``i × interval_ms`` or when message ``i − 1`` is answered, whichever is later. Its
   send latency is answer time − send time, in virtual ms;
4. right after the ``lose_after``-th answer, the master's machine is lost (``Lab.lose``:
   process and store directory gone). The sends after it fail. A lost machine tells
   nobody, so each waits out its 3 s timeout on the producer's open connection, until
   the name server drops broker-a (Netty's idle close, 120 s after its last registration)
   and the producer's route refresh follows; after that they fail at once (no route);
5. one more second, then the slave's commit log is read: an acknowledged (SEND_OK)
   message *survives* when its body is there. The slave is the only copy left.

ASYNC_MASTER answers before the master's ``WriteSocketService`` pushed the message (it
looks for new data every 100 ms when idle, step 8): what was acknowledged in the last push
interval before the loss is gone. SYNC_MASTER answers only once the slave reported the
message's end (steps 12-14), so nothing acknowledged is lost, and every send pays a
master → slave → master round trip. The flush type changes neither here: the simulated
``msync`` takes no virtual time, and a lost machine takes its disk, flushed or not
(``Lab.power_cut`` is where flushing matters).

Everything derives from the point's seed, so every machine gives the same rows
(``run_sweep``) and the same table, on Spark or pandas (``summary``). ``datasets/master_loss``
holds the recorded sweep (``write`` / ``load_sends``); ``python -m mqlab.experiments.master_loss``
prints the table (``--regenerate`` re-runs the sweep into ``datasets/``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mqlab.experiments.point_tables import read_point_table, typed, write_point_table

__all__ = [
    "ROLES",
    "FLUSHES",
    "LOSE_AFTER",
    "SEEDS",
    "SCHEMA_VERSION",
    "SEND_COLUMNS",
    "RUN_COLUMNS",
    "SUMMARY_COLUMNS",
    "Point",
    "points",
    "run_point",
    "run_sweep",
    "run_sweep_spark",
    "write",
    "load_sends",
    "load_runs",
    "spark_sends",
    "summary",
    "figure",
    "main",
]

ROLES = ("ASYNC_MASTER", "SYNC_MASTER")
FLUSHES = ("ASYNC_FLUSH", "SYNC_FLUSH")
#: The loss moments: the master is lost right after the producer's N-th answer.
LOSE_AFTER = (25, 50, 75, 100)
SEEDS = 3
#: Bump when a column is added, removed or changes meaning (datasets/README.md).
SCHEMA_VERSION = 1
#: the schema version's key in each Parquet file's metadata
_VERSION_KEY = "mqlab.master_loss_schema_version"
DATASET = "master_loss"
TOPIC = "TopicTest"

#: One row per send (``sends/``).
SEND_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "string"),
    ("point", "string"),
    ("role", "string"),
    ("flush", "string"),
    ("lose_after", "int64"),
    ("seed", "int64"),
    ("n", "int64"),
    ("sent_ms", "int64"),
    ("answered_ms", "int64"),
    ("status", "string"),
    ("latency_ms", "int64"),
    ("acked", "bool"),
    ("on_slave", "bool"),
]
#: One row per run (``runs/``).
RUN_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "string"),
    ("point", "string"),
    ("role", "string"),
    ("flush", "string"),
    ("lose_after", "int64"),
    ("seed", "int64"),
    ("messages", "int64"),
    ("acked", "int64"),
    ("failed", "int64"),
    ("acked_lost", "int64"),
    ("lost_at_ms", "int64"),
    ("slave_max_offset", "int64"),
]
#: The table ``summary`` gives, one row per (role, flush, lose_after).
SUMMARY_COLUMNS = ("role", "flush", "lose_after", "runs", "acked", "latency_p50_ms",
                   "latency_p99_ms", "acked_lost")  # fmt: skip
_KEYS = ["role", "flush", "lose_after"]


@dataclass(frozen=True, slots=True)
class Point:
    """One run's settings (see the module docstring for the steps)."""

    role: str = "ASYNC_MASTER"
    flush: str = "ASYNC_FLUSH"
    lose_after: int = 50
    seed: int = 0
    messages: int = 100
    interval_ms: int = 10
    warmup_ms: int = 12_000
    link_jitter_ms: int = 4

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {list(ROLES)}, got {self.role!r}")
        if self.flush not in FLUSHES:
            raise ValueError(f"flush must be one of {list(FLUSHES)}, got {self.flush!r}")
        if not isinstance(self.messages, int) or self.messages < 1:
            raise ValueError(f"messages must be a whole number >= 1, got {self.messages!r}")
        if not isinstance(self.lose_after, int) or not 1 <= self.lose_after <= self.messages:
            raise ValueError(
                f"lose_after must be 1..messages ({self.messages}), got {self.lose_after!r}"
            )
        for name in ("interval_ms", "warmup_ms", "link_jitter_ms", "seed"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {v!r}")

    @property
    def point_id(self) -> str:
        """``p000``…: the index of (role, flush, lose_after) in the default grid's order."""
        try:
            i = list(itertools.product(ROLES, FLUSHES, LOSE_AFTER)).index(
                (self.role, self.flush, self.lose_after)
            )
        except ValueError:
            return "custom"
        return f"p{i:03d}"

    @property
    def run_id(self) -> str:
        return f"{DATASET}-{self.point_id}-s{self.seed}"


def points(seeds: int = SEEDS, **overrides: Any) -> list[Point]:
    """The sweep: ROLES × FLUSHES × LOSE_AFTER × seeds 0..``seeds``−1, in that order."""
    return [Point(role=r, flush=f, lose_after=n, seed=s, **overrides)
            for r, f, n in itertools.product(ROLES, FLUSHES, LOSE_AFTER)
            for s in range(seeds)]  # fmt: skip


def run_point(point: Point) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run one point; returns its send rows and its run row (``SEND_COLUMNS``, ``RUN_COLUMNS``)."""
    from mqlab.common.message import Message
    from mqlab.lab.lab import Lab

    master, slave = "broker-a", "broker-a-s1"
    lab = Lab(seed=point.seed, slaves=1, broker_role=point.role, trace_level="off",
              store={"flush_disk_type": point.flush}, run_id=point.run_id)  # fmt: skip
    try:
        # step 1: the group, the topic, the producer, the replication link
        call = lab.request(master, "UPDATE_AND_CREATE_TOPIC",
                           {"topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": 4,
                            "writeQueueNums": 4, "perm": 6, "topicFilterType": "SINGLE_TAG",
                            "topicSysFlag": 0, "order": "false"})  # fmt: skip
        if call.code != 0:
            raise RuntimeError(f"creating {TOPIC} failed: {call.remark}")
        producer = lab.producer("PG")
        if point.link_jitter_ms:
            lab.set_link(master, slave, jitter_ms=point.link_jitter_ms)
            lab.set_link(slave, master, jitter_ms=point.link_jitter_ms)
        lab.advance(point.warmup_ms)  # step 2
        start = lab.now
        sends: list[dict[str, Any]] = []
        lost_at = -1
        for n in range(point.messages):  # step 3
            due = start + n * point.interval_ms
            if due > lab.now:
                lab.advance(due - lab.now)
            sent = lab.now
            fut = producer.send(Message(TOPIC, f"{point.run_id}-m{n}".encode()))
            while not fut.done:
                lab.step()
            status = fut.result.send_status.name if fut.result is not None else "FAILED"
            sends.append({"n": n, "sent_ms": sent - start, "answered_ms": lab.now - start,
                          "status": status, "latency_ms": lab.now - sent,
                          "acked": status == "SEND_OK"})  # fmt: skip
            if n + 1 == point.lose_after:  # step 4
                lab.lose(master)
                lost_at = lab.now - start
        lab.advance(1000)  # step 5
        store = lab.broker(slave).message_store
        bodies = set(lab.commit_log(slave)["body"])
        slave_max = store.get_max_phy_offset()
    finally:
        lab.close()
    ids = {"run_id": point.run_id, "point": point.point_id, "role": point.role,
           "flush": point.flush, "lose_after": point.lose_after, "seed": point.seed}  # fmt: skip
    rows = []
    for s in sends:
        on_slave = f"{point.run_id}-m{s['n']}".encode() in bodies
        rows.append({**ids, **s, "on_slave": on_slave})
    acked = sum(r["acked"] for r in rows)
    run = {**ids, "messages": point.messages, "acked": acked, "failed": len(rows) - acked,
           "acked_lost": sum(r["acked"] and not r["on_slave"] for r in rows),
           "lost_at_ms": lost_at, "slave_max_offset": slave_max}  # fmt: skip
    return rows, run


def _frames(results: list[tuple[list[dict[str, Any]], dict[str, Any]]]):
    import pandas as pd

    sends = pd.DataFrame([r for rows, _ in results for r in rows],
                         columns=[n for n, _ in SEND_COLUMNS])  # fmt: skip
    runs = pd.DataFrame([run for _, run in results], columns=[n for n, _ in RUN_COLUMNS])
    return typed(sends, SEND_COLUMNS), typed(runs, RUN_COLUMNS)


def run_sweep(pts: list[Point] | None = None) -> tuple[Any, Any]:
    """Run every point in this process, in order: (sends, runs) as pandas frames."""
    return _frames([run_point(p) for p in (points() if pts is None else pts)])


def run_sweep_spark(spark: Any, pts: list[Point] | None = None) -> tuple[Any, Any]:
    """The same runs as Spark tasks (one point per task): the same rows as ``run_sweep``."""
    pts = points() if pts is None else pts
    rdd = spark.sparkContext.parallelize([asdict(p) for p in pts], len(pts))
    results = rdd.map(lambda d: run_point(Point(**d))).collect()
    return _frames(results)


# -- files -------------------------------------------------------------------------------------
def _dir(out_dir: str | Path | None) -> Path:
    if out_dir is not None:
        return Path(out_dir)
    from mqlab.experiments.datasets import datasets_dir

    return datasets_dir() / DATASET


def write(sends: Any, runs: Any, out_dir: str | Path | None = None, *,
          command: str | None = None) -> Path:  # fmt: skip
    """Write ``sends/``, ``runs/`` (Parquet, partitioned by point) and ``sweep.json``."""
    from mqlab.experiments.parquet import mqlab_version, source_revision

    out = _dir(out_dir)
    write_point_table(
        sends,
        SEND_COLUMNS,
        out / "sends",
        table="sends",
        version_key=_VERSION_KEY,
        version=SCHEMA_VERSION,
    )
    write_point_table(
        runs,
        RUN_COLUMNS,
        out / "runs",
        table="runs",
        version_key=_VERSION_KEY,
        version=SCHEMA_VERSION,
    )
    grid = runs[["point", "role", "flush", "lose_after"]].drop_duplicates().sort_values("point")
    manifest = {
        "command": command, "mqlab_version": mqlab_version(),
        "source_revision": source_revision(), "python": sys.version.split()[0],
        "master_loss_schema_version": SCHEMA_VERSION, "runs": len(runs),
        "points": grid.to_dict("records"),
        "settings": {k: v for k, v in asdict(Point()).items()
                     if k not in ("role", "flush", "lose_after", "seed")},
        "seeds": sorted(int(s) for s in runs["seed"].unique()),
    }  # fmt: skip
    (out / "sweep.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")  # fmt: skip
    return out


def load_sends(out_dir: str | Path | None = None) -> Any:
    """The recorded sends (pandas, one row per send), ``datasets/master_loss`` by default."""
    return read_point_table(_dir(out_dir) / "sends", SEND_COLUMNS)


def load_runs(out_dir: str | Path | None = None) -> Any:
    """The recorded runs (pandas, one row per run)."""
    return read_point_table(_dir(out_dir) / "runs", RUN_COLUMNS)


def spark_sends(spark: Any, out_dir: str | Path | None = None) -> Any:
    """The recorded sends as a Spark DataFrame."""
    return spark.read.parquet(str(_dir(out_dir) / "sends"))


# -- the aggregation ---------------------------------------------------------------------------
def summary(sends: Any) -> Any:
    """(role, flush, lose_after) → runs, acked, send latency p50 / p99 of the acknowledged
    sends (ms, exact percentiles with linear interpolation), acknowledged messages lost.

    ``sends``: a Spark DataFrame (aggregated by Spark SQL) or a pandas one (by pandas);
    either way a pandas frame with ``SUMMARY_COLUMNS``, ordered by role, flush, lose_after;
    percentiles rounded to 6 decimals, so that both give the same bits.
    """
    import pandas as pd

    from mqlab.experiments.aggregate import is_spark

    if is_spark(sends):
        from pyspark.sql import functions as F

        acked = F.col("acked")
        out = (sends.groupBy(*_KEYS).agg(
            F.countDistinct("run_id").alias("runs"),
            F.sum(acked.cast("long")).alias("acked"),
            F.expr("percentile(IF(acked, latency_ms, NULL), 0.5)").alias("latency_p50_ms"),
            F.expr("percentile(IF(acked, latency_ms, NULL), 0.99)").alias("latency_p99_ms"),
            F.sum((acked & ~F.col("on_slave")).cast("long")).alias("acked_lost"),
        ).orderBy(*_KEYS).toPandas())  # fmt: skip
    else:
        rows = []
        for key, g in sends.groupby(_KEYS, sort=True):
            ok = g[g["acked"]]["latency_ms"].astype("float64")
            rows.append((*key, g["run_id"].nunique(), int(g["acked"].sum()), ok.quantile(0.5),
                         ok.quantile(0.99), int((g["acked"] & ~g["on_slave"]).sum())))  # fmt: skip
        out = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    out = out[list(SUMMARY_COLUMNS)].round({"latency_p50_ms": 6, "latency_p99_ms": 6})
    return out.astype({"lose_after": "int64", "runs": "int64", "acked": "int64",
                       "latency_p50_ms": "float64", "latency_p99_ms": "float64",
                       "acked_lost": "int64"}).reset_index(drop=True)  # fmt: skip


_ROLE_COLORS = {"ASYNC_MASTER": "#d62728", "SYNC_MASTER": "#1f77b4"}
_FLUSH_SYMBOLS = {"ASYNC_FLUSH": "circle", "SYNC_FLUSH": "diamond"}


def figure(table: Any) -> Any:
    """Send latency (p50 a dot, p99 a ring around it) against acknowledged messages lost per
    run, one marker per (role, loss moment), one panel per flush type: the durability–latency
    trade-off. Side by side, the two panels show that the flush type changes nothing here (one
    plot drew the ASYNC_FLUSH markers hidden under the SYNC_FLUSH ones, issue 28)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    flushes = sorted(set(table["flush"]))
    fig = make_subplots(rows=1, cols=len(flushes), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=flushes)  # fmt: skip
    lost = table["acked_lost"] / table["runs"]
    for col, flush in enumerate(flushes, start=1):
        for role, g in table[table["flush"] == flush].groupby("role", sort=True):
            for q, symbol, size in (("p50", "circle", 9), ("p99", "circle-open", 17)):
                fig.add_trace(go.Scatter(
                    x=lost[g.index], y=g[f"latency_{q}_ms"], mode="markers",
                    name=f"{role} {q}", legendgroup=f"{role} {q}", showlegend=col == 1,
                    marker={"color": _ROLE_COLORS[role], "symbol": symbol, "size": size,
                            "line": {"width": 2, "color": _ROLE_COLORS[role]}},
                    customdata=g[["lose_after", "acked_lost", "runs"]].to_numpy(),
                    hovertemplate=(f"{role} {flush}<br>lost after %{{customdata[0]}} answers"
                                   f"<br>{q} %{{y}} ms<br>acknowledged lost %{{customdata[1]}}"
                                   " in %{customdata[2]} runs<extra></extra>"),
                ), row=1, col=col)  # fmt: skip
    top = max(float(lost.max()), 1.0)
    fig.update_layout(
        title="A lost master: send latency against acknowledged messages lost",
        yaxis_title="send latency (virtual ms)", legend_title="role, percentile",
        template="plotly_white", margin={"t": 100},
    )  # fmt: skip
    # whole messages; room left of 0 so the markers at 0 are not cut by the axis
    fig.update_xaxes(dtick=5, tick0=0, tickformat="d", range=[-0.08 * top, 1.08 * top],
                     title_text="acknowledged messages lost per run")  # fmt: skip
    return fig


def format_table(table: Any) -> str:
    """The summary as a Markdown table."""
    lines = ["| " + " | ".join(SUMMARY_COLUMNS) + " |",
             "|" + "---|" * len(SUMMARY_COLUMNS)]  # fmt: skip
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:g}" if isinstance(v, float) else str(v)
                                       for v in row) + " |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m mqlab.experiments.master_loss [--regenerate] [--pandas]``."""
    p = argparse.ArgumentParser(prog="python -m mqlab.experiments.master_loss",
                                description="The master-loss sweep's table (issue 24).")  # fmt: skip
    p.add_argument("--regenerate", action="store_true",
                   help="re-run the sweep into datasets/master_loss first (about 30 s)")  # fmt: skip
    p.add_argument("--pandas", action="store_true", help="aggregate with pandas, not Spark")
    args = p.parse_args(argv)
    if args.regenerate:
        sends, runs = run_sweep()
        write(sends, runs, command="python -m mqlab.experiments.master_loss --regenerate")
    if args.pandas:
        table = summary(load_sends())
    else:
        from mqlab.experiments.spark import get_session

        spark = get_session(app_name="mqlab-master-loss",
                            config={"spark.sql.adaptive.enabled": "false"})  # fmt: skip
        try:
            table = summary(spark_sends(spark))
        finally:
            spark.stop()
    print(format_table(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
