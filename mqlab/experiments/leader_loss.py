"""The leader-loss sweep: how long a DLedger group is unavailable when its leader dies, and
what it loses (issue 26, item 5).

Mirrors no RocketMQ class; it measures what DLedger's election timeouts buy
(``DLedgerLeaderElector#maintainAsFollower`` / ``#maintainAsCandidate``, DLedger 0.2.3, and
mechanisms.md "DLedger in the workbench"). A follower stands as candidate once no heartbeat
came for more than ``maxHeartBeatLeak`` × ``heartBeatTimeIntervalMs`` (3 × 2000 ms by
default), then asks for votes after a random ``minVoteIntervalMs``..``maxVoteIntervalMs``
(300..1000 ms). One run (``run_point``):

1. a ``Lab(dledger=3)`` (one group ``broker-a``, nodes n0..n2) with ``heartbeat_ms``,
   ``min_vote_ms`` and ``max_vote_ms`` as its ``DLedgerConfig``; the constructor runs until
   the first leader's broker is registered as brokerId 0;
2. a producer whose client polls the name server every ``poll_ms`` (1000 ms here, not the
   client's 30 s default: the new route reaches the producer at its next poll, so the default
   adds up to 30 s of waiting to every run and hides the election; the grid's last three
   points run it for 0.2.3's default timeouts), then ``warmup_ms`` (2 s) so it holds the route;
3. the producer sends as a synchronous producer does: message ``i`` at ``i × interval_ms``
   (100 ms) or when message ``i − 1`` is answered, whichever is later;
4. the fault's timing: once ``kill_after_ms`` (1 s) of sending passed, the run waits for the
   leader's next heartbeat round and kills the leader's machine (``Lab.kill``: broker and
   DLedger node) ``kill_phase_pct`` % of a heartbeat interval after it. Killed right after a
   heartbeat, the followers wait the whole leak; killed just before the next, almost one
   interval less;
5. the sends go on (they fail at once while the producer's route names the dead broker)
   until the first SEND_OK after the kill and ``after_ok`` (5) more sends; the driver is
   watched event by event for the new leader (``election_ms`` = its election − the kill) and
   for its broker as brokerId 0 in the name server (``master_ms``); ``unavailability_ms`` =
   the first SEND_OK's answer − the kill. Sends give up ``max_wait_ms`` (60 s) after the kill;
6. a push consumer of a new group reads the topic from its first offset for ``drain_ms``
   (3 s): ``consumed`` = acknowledged messages it received, ``lost`` = acknowledged messages
   it did not (DLedger answers SEND_OK only once a majority holds the entry: 0 in every run).

Everything derives from the point's seed, so every runner gives the same rows
(``run_sweep`` in this process, ``run_sweep_pool`` in a process pool, ``run_sweep_spark``
as Spark tasks) and the same table
(``summary`` on pandas or Spark SQL). ``datasets/leader_loss`` holds the recorded sweep;
``python -m mqlab.experiments.leader_loss`` prints its table (``--regenerate`` re-runs it).
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
    "HEARTBEATS",
    "VOTE_INTERVALS",
    "KILL_PHASES",
    "SEEDS",
    "SCHEMA_VERSION",
    "SEND_COLUMNS",
    "RUN_COLUMNS",
    "SUMMARY_COLUMNS",
    "Point",
    "points",
    "run_point",
    "run_sweep",
    "run_sweep_pool",
    "run_sweep_spark",
    "write",
    "load_sends",
    "load_runs",
    "spark_runs",
    "summary",
    "figure",
    "format_table",
    "main",
]

#: ``heartBeatTimeIntervalMs``: 0.2.3's 2000 ms and half of it.
HEARTBEATS = (1000, 2000)
#: (``minVoteIntervalMs``, ``maxVoteIntervalMs``): 0.2.3's 300..1000 ms and a wider 1000..3000.
VOTE_INTERVALS = ((300, 1000), (1000, 3000))
#: When the leader dies, in % of a heartbeat interval after its last heartbeat round.
KILL_PHASES = (5, 50, 95)
SEEDS = 3
#: Bump when a column is added, removed or changes meaning (datasets/README.md).
SCHEMA_VERSION = 1
#: the schema version's key in each Parquet file's metadata
_VERSION_KEY = "mqlab.leader_loss_schema_version"
DATASET = "leader_loss"
#: The producer's ``pollNameServerInterval`` in the sweep (the client's default is 30 s).
DEFAULT_POLL_MS = 1000
#: ``ClientConfig#pollNameServerInterval``'s default: the grid runs it for 0.2.3's defaults.
CLIENT_POLL_MS = 30_000


def _grid() -> list[tuple[int, int, int, int, int]]:
    """(poll, heartbeat, min vote, max vote, kill phase) of p000, p001, …: every timeout and
    kill phase with the 1 s poll, then 0.2.3's timeouts with the client's 30 s poll."""
    fast = [
        (DEFAULT_POLL_MS, h, lo, hi, k)
        for h, (lo, hi), k in itertools.product(HEARTBEATS, VOTE_INTERVALS, KILL_PHASES)
    ]
    return fast + [(CLIENT_POLL_MS, 2000, 300, 1000, k) for k in KILL_PHASES]  # fmt: skip


TOPIC = "TopicTest"

#: One row per send (``sends/``).
SEND_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "string"),
    ("point", "string"),
    ("seed", "int64"),
    ("n", "int64"),
    ("sent_ms", "int64"),
    ("answered_ms", "int64"),
    ("status", "string"),
    ("acked", "bool"),
    ("consumed", "bool"),
]
#: One row per run (``runs/``).
RUN_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "string"),
    ("point", "string"),
    ("heartbeat_ms", "int64"),
    ("min_vote_ms", "int64"),
    ("max_vote_ms", "int64"),
    ("kill_phase_pct", "int64"),
    ("poll_ms", "int64"),
    ("seed", "int64"),
    ("old_leader", "string"),
    ("old_term", "int64"),
    ("killed_ms", "int64"),
    ("new_leader", "string"),
    ("new_term", "int64"),
    ("election_ms", "int64"),
    ("master_ms", "int64"),
    ("unavailability_ms", "int64"),
    ("sends", "int64"),
    ("acknowledged", "int64"),
    ("consumed", "int64"),
    ("lost", "int64"),
]
#: The table ``summary`` gives, one row per (heartbeat, vote interval, kill phase).
SUMMARY_COLUMNS = ("poll_ms", "heartbeat_ms", "min_vote_ms", "max_vote_ms", "kill_phase_pct", "runs",
                   "election_p50_ms", "unavailability_p50_ms", "unavailability_p90_ms",
                   "unavailability_max_ms", "acknowledged", "lost")  # fmt: skip
_KEYS = ["poll_ms", "heartbeat_ms", "min_vote_ms", "max_vote_ms", "kill_phase_pct"]


@dataclass(frozen=True, slots=True)
class Point:
    """One run's settings (see the module docstring for the steps)."""

    heartbeat_ms: int = 2000
    min_vote_ms: int = 300
    max_vote_ms: int = 1000
    kill_phase_pct: int = 50
    seed: int = 0
    poll_ms: int = DEFAULT_POLL_MS
    warmup_ms: int = 2000
    interval_ms: int = 100
    kill_after_ms: int = 1000
    after_ok: int = 5
    max_wait_ms: int = 60_000
    drain_ms: int = 3000

    def __post_init__(self) -> None:
        for name in ("heartbeat_ms", "min_vote_ms", "max_vote_ms", "poll_ms", "interval_ms",
                     "max_wait_ms"):  # fmt: skip
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
        for name in ("seed", "warmup_ms", "kill_after_ms", "after_ok", "drain_ms"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {v!r}")
        if self.max_vote_ms <= self.min_vote_ms:
            raise ValueError(f"max_vote_ms ({self.max_vote_ms}) must exceed min_vote_ms "
                             f"({self.min_vote_ms})")  # fmt: skip
        p = self.kill_phase_pct
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < 100:
            raise ValueError(f"kill_phase_pct must be a whole number 0..99, got {p!r}")

    @property
    def point_id(self) -> str:
        """``p000``…: the index of the cell in the default grid's order (``custom`` off it)."""
        cell = (self.poll_ms, self.heartbeat_ms, self.min_vote_ms, self.max_vote_ms,
                self.kill_phase_pct)  # fmt: skip
        try:
            return f"p{_grid().index(cell):03d}"
        except ValueError:
            return "custom"

    @property
    def run_id(self) -> str:
        return f"{DATASET}-{self.point_id}-s{self.seed}"


def points(seeds: int = SEEDS, **overrides: Any) -> list[Point]:
    """The sweep: HEARTBEATS × VOTE_INTERVALS × KILL_PHASES with the 1 s poll, then 0.2.3's
    timeouts × KILL_PHASES with the client's 30 s poll; each × seeds 0..``seeds``−1."""
    return [Point(heartbeat_ms=h, min_vote_ms=lo, max_vote_ms=hi, kill_phase_pct=k, seed=s,
                  poll_ms=poll, **overrides)
            for poll, h, lo, hi, k in _grid() for s in range(seeds)]  # fmt: skip


def _producer(lab: Any, poll_ms: int) -> Any:
    """A started producer whose client polls the name server every ``poll_ms``
    (``ClientConfig#pollNameServerInterval``; the default is 30 s)."""
    from mqlab.client.client_config import ClientConfig

    return lab.producer(
        "PG", name="producer-1", client_config=ClientConfig(poll_name_server_interval=poll_ms)
    )


def run_point(point: Point) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run one point; returns its send rows and its run row (``SEND_COLUMNS``, ``RUN_COLUMNS``)."""
    from mqlab.common.message import Message
    from mqlab.lab.lab import Lab

    cfg = {
        "heart_beat_time_interval_ms": point.heartbeat_ms,
        "min_vote_interval_ms": point.min_vote_ms,
        "max_vote_interval_ms": point.max_vote_ms,
    }
    lab = Lab(seed=point.seed, dledger=3, dledger_config=cfg, trace_level="off",
              run_id=point.run_id)  # step 1  # fmt: skip
    try:
        d = lab.driver
        producer = _producer(lab, point.poll_ms)  # step 2
        lab.advance(point.warmup_ms)
        start = lab.now
        old = lab.dledger_leader()
        elector = lab.dledger_server(old).elector
        old_term = lab.dledger_server(old).member_state.curr_term
        watch: dict[str, int] = {}
        state: dict[str, Any] = {"killed": None, "kill_due": None, "beat": None}

        def after_event() -> None:
            """Steps 4 and 5: arm and fire the kill; note the election and the new master."""
            now = lab.now
            killed = state["killed"]
            if killed is None:
                if state["beat"] is None and now - start >= point.kill_after_ms:
                    state["beat"] = elector.last_send_heart_beat_time
                elif state["kill_due"] is None and state["beat"] is not None:
                    if elector.last_send_heart_beat_time != state["beat"]:
                        state["kill_due"] = (
                            elector.last_send_heart_beat_time
                            + point.heartbeat_ms * point.kill_phase_pct // 100
                        )
                return
            if "elected" not in watch:
                lead = lab.dledger_leader()
                if lead is not None and lead != old:
                    watch["elected"] = now
                    watch["leader"] = lead  # type: ignore[assignment]
                    watch["term"] = lab.dledger_server(lead).member_state.curr_term
            if "elected" in watch and "master" not in watch:
                if lab.master_in_route() == watch["leader"]:
                    watch["master"] = now

        def run_to(until_ms: int | None, fut: Any = None) -> None:
            """Run events until ``fut`` is done, or up to ``until_ms``; the kill fires on time."""
            while True:
                if fut is not None and fut.done:
                    return
                due = state["kill_due"]
                nxt = d.scheduler.peek()
                limit = until_ms if fut is None else None
                if due is not None and state["killed"] is None and (nxt is None or nxt.due > due):
                    if limit is None or due <= limit:
                        if due > lab.now:
                            d.advance(due - lab.now)
                        lab.kill(old)
                        state["killed"] = lab.now
                        continue
                if nxt is None or (limit is not None and nxt.due > limit):
                    if limit is not None and limit > lab.now:
                        d.advance(limit - lab.now)
                    return
                d.step()
                after_event()

        sends: list[dict[str, Any]] = []
        first_ok: int | None = None
        n = 0
        while True:  # step 3
            due = start + n * point.interval_ms
            if due > lab.now:
                run_to(due)
            sent = lab.now
            fut = producer.send(Message(TOPIC, f"{point.run_id}-m{n}".encode()))
            run_to(None, fut)
            status = fut.result.send_status.name if fut.result is not None else "FAILED"
            sends.append({"n": n, "sent_ms": sent - start, "answered_ms": lab.now - start,
                          "status": status, "acked": status == "SEND_OK",
                          "msg_id": fut.result.msg_id if fut.result is not None else ""})  # fmt: skip
            killed = state["killed"]
            if killed is not None and first_ok is None and status == "SEND_OK" and sent >= killed:
                first_ok = n
            n += 1
            if first_ok is not None and n > first_ok + point.after_ok:
                break
            if (
                lab.now - (start + point.kill_after_ms if killed is None else killed)
                > point.max_wait_ms
            ):
                break  # no SEND_OK within max_wait_ms of the kill (or no kill at all)
        consumer = lab.push_consumer(
            "CG", TOPIC, consume_from_where="CONSUME_FROM_FIRST_OFFSET"
        )  # step 6
        run_to(lab.now + point.drain_ms)
        got = {r.msg_id for r in consumer.consumed}
    finally:
        lab.close()
    killed = state["killed"]
    ids = {"run_id": point.run_id, "point": point.point_id, "seed": point.seed}
    rows = [{**ids, **{k: v for k, v in s.items() if k != "msg_id"},
             "consumed": s["acked"] and s["msg_id"] in got} for s in sends]  # fmt: skip
    acked = [r for r in rows if r["acked"]]
    unavail = -1 if first_ok is None else sends[first_ok]["answered_ms"] + start - killed
    run = {
        **ids, "heartbeat_ms": point.heartbeat_ms, "min_vote_ms": point.min_vote_ms,
        "max_vote_ms": point.max_vote_ms, "kill_phase_pct": point.kill_phase_pct,
        "poll_ms": point.poll_ms, "old_leader": old.removeprefix("broker-a-"),
        "old_term": old_term, "killed_ms": killed - start,
        "new_leader": str(watch.get("leader", "")).removeprefix("broker-a-"),
        "new_term": watch.get("term", -1),
        "election_ms": watch["elected"] - killed if "elected" in watch else -1,
        "master_ms": watch["master"] - killed if "master" in watch else -1,
        "unavailability_ms": unavail, "sends": len(rows), "acknowledged": len(acked),
        "consumed": sum(r["consumed"] for r in acked),
        "lost": sum(not r["consumed"] for r in acked),
    }  # fmt: skip
    run = {n: run[n] for n, _ in RUN_COLUMNS}
    return rows, run


def _frames(results: list[tuple[list[dict[str, Any]], dict[str, Any]]]) -> tuple[Any, Any]:
    import pandas as pd

    sends = pd.DataFrame([r for rows, _ in results for r in rows],
                         columns=[n for n, _ in SEND_COLUMNS])  # fmt: skip
    runs = pd.DataFrame([run for _, run in results], columns=[n for n, _ in RUN_COLUMNS])
    return typed(sends, SEND_COLUMNS), typed(runs, RUN_COLUMNS)


def run_sweep(pts: list[Point] | None = None) -> tuple[Any, Any]:
    """Run every point in this process, in order: (sends, runs) as pandas frames."""
    return _frames([run_point(p) for p in (points() if pts is None else pts)])


def run_sweep_pool(pts: list[Point] | None = None, workers: int = 2) -> tuple[Any, Any]:
    """The same runs in a process pool (``spawn``, as ``runners.run_process_pool``): the
    same rows as ``run_sweep``, in the points' order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pts = points() if pts is None else pts
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        return _frames(list(pool.map(run_point, pts)))


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
    grid = runs[["point", *_KEYS]].drop_duplicates().sort_values("point")
    manifest = {
        "command": command, "mqlab_version": mqlab_version(),
        "source_revision": source_revision(), "python": sys.version.split()[0],
        "leader_loss_schema_version": SCHEMA_VERSION, "runs": len(runs),
        "points": grid.to_dict("records"),
        "settings": {k: v for k, v in asdict(Point()).items()
                     if k not in (*_KEYS, "seed", "poll_ms")},
        "seeds": sorted(int(s) for s in runs["seed"].unique()),
    }  # fmt: skip
    (out / "sweep.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")  # fmt: skip
    return out


def load_sends(out_dir: str | Path | None = None) -> Any:
    """The recorded sends (pandas, one row per send), ``datasets/leader_loss`` by default."""
    return read_point_table(_dir(out_dir) / "sends", SEND_COLUMNS)


def load_runs(out_dir: str | Path | None = None) -> Any:
    """The recorded runs (pandas, one row per run)."""
    return read_point_table(_dir(out_dir) / "runs", RUN_COLUMNS)


def spark_runs(spark: Any, out_dir: str | Path | None = None) -> Any:
    """The recorded runs as a Spark DataFrame."""
    return spark.read.parquet(str(_dir(out_dir) / "runs"))


# -- the aggregation ---------------------------------------------------------------------------
_FLOATS = ("election_p50_ms", "unavailability_p50_ms", "unavailability_p90_ms")


def summary(runs: Any) -> Any:
    """(heartbeat, vote interval, kill phase) → runs, election p50, unavailability p50 / p90 /
    max (ms; exact percentiles with linear interpolation), acknowledged, lost.

    ``runs``: a Spark DataFrame (aggregated by Spark SQL) or a pandas one (by pandas); either
    way a pandas frame with ``SUMMARY_COLUMNS`` ordered by the keys; percentiles rounded to 6
    decimals so that both give the same bits.
    """
    import pandas as pd

    from mqlab.experiments.aggregate import is_spark

    if is_spark(runs):
        from pyspark.sql import functions as F

        out = (runs.groupBy(*_KEYS).agg(
            F.count("run_id").alias("runs"),
            F.expr("percentile(election_ms, 0.5)").alias("election_p50_ms"),
            F.expr("percentile(unavailability_ms, 0.5)").alias("unavailability_p50_ms"),
            F.expr("percentile(unavailability_ms, 0.9)").alias("unavailability_p90_ms"),
            F.max("unavailability_ms").alias("unavailability_max_ms"),
            F.sum("acknowledged").alias("acknowledged"),
            F.sum("lost").alias("lost"),
        ).orderBy(*_KEYS).toPandas())  # fmt: skip
    else:
        rows = []
        for key, g in runs.groupby(_KEYS, sort=True):
            u = g["unavailability_ms"].astype("float64")
            rows.append((*key, len(g), g["election_ms"].astype("float64").quantile(0.5),
                         u.quantile(0.5), u.quantile(0.9), int(g["unavailability_ms"].max()),
                         int(g["acknowledged"].sum()), int(g["lost"].sum())))  # fmt: skip
        out = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    out = out[list(SUMMARY_COLUMNS)].round(dict.fromkeys(_FLOATS, 6))
    ints = [c for c in SUMMARY_COLUMNS if c not in _FLOATS]
    return out.astype({**dict.fromkeys(ints, "int64"),
                       **dict.fromkeys(_FLOATS, "float64")}).reset_index(drop=True)  # fmt: skip


_VOTE_COLORS = {(300, 1000): "#1f77b4", (1000, 3000): "#ff7f0e"}


def figure(runs: Any) -> Any:
    """Unavailability against the kill's phase in the heartbeat interval, one panel per
    heartbeat interval, one colour per vote interval: every run a small dot, each cell's
    p50 a line through them. The followers' leak timer starts at the last heartbeat they
    got, so a kill just before the next heartbeat is noticed sooner (the lines fall). Only
    the runs with the 1 s route poll: the 30 s poll's runs (about 25 s) would flatten them."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    runs = runs[runs["poll_ms"] == DEFAULT_POLL_MS]
    table = summary(runs)
    beats = sorted(set(int(h) for h in runs["heartbeat_ms"]))
    fig = make_subplots(rows=1, cols=len(beats), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[f"heartBeatTimeIntervalMs {h}" for h in beats])  # fmt: skip
    for col, hb in enumerate(beats, start=1):
        for (lo, hi), g in runs[runs["heartbeat_ms"] == hb].groupby(["min_vote_ms",
                                                                      "max_vote_ms"]):  # fmt: skip
            color = _VOTE_COLORS.get((int(lo), int(hi)), "#2ca02c")
            name = f"vote interval {lo}..{hi} ms"
            fig.add_trace(go.Scatter(
                x=g["kill_phase_pct"], y=g["unavailability_ms"], mode="markers",
                name=f"{name}, each run", legendgroup=name, showlegend=col == 1,
                marker={"color": color, "size": 7, "opacity": 0.6},
                customdata=g[["seed", "election_ms", "new_leader", "new_term", "lost"]].to_numpy(),
                hovertemplate=("killed %{x} % into the interval<br>unavailable %{y} ms<br>"
                               "seed %{customdata[0]}, elected after %{customdata[1]} ms: "
                               "%{customdata[2]} term %{customdata[3]}<br>lost "
                               "%{customdata[4]}<extra></extra>"),
            ), row=1, col=col)  # fmt: skip
            t = table[(table["heartbeat_ms"] == hb) & (table["min_vote_ms"] == lo)
                      & (table["max_vote_ms"] == hi)]  # fmt: skip
            fig.add_trace(go.Scatter(
                x=t["kill_phase_pct"], y=t["unavailability_p50_ms"], mode="lines+markers",
                name=f"{name}, p50", legendgroup=name, showlegend=col == 1,
                line={"color": color, "width": 2}, marker={"color": color, "size": 10},
                hovertemplate="p50 %{y} ms<extra></extra>",
            ), row=1, col=col)  # fmt: skip
    lost = int(runs["lost"].sum())
    fig.update_layout(
        title=f"DLedger leader killed: until the first SEND_OK ({lost} acked lost)",
        yaxis_title="unavailability, ms (route poll 1 s)", legend_title="election timeout",
        template="plotly_white", margin={"t": 100},
    )  # fmt: skip
    fig.update_xaxes(title_text="kill, % of a heartbeat interval after the last heartbeat",
                     range=[-5, 100], dtick=25)  # fmt: skip
    fig.update_yaxes(rangemode="tozero", dtick=1000, tickformat="d")
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
    """``python -m mqlab.experiments.leader_loss [--regenerate] [--pandas]``."""
    p = argparse.ArgumentParser(prog="python -m mqlab.experiments.leader_loss",
                                description="The DLedger leader-loss sweep's table (issue 26).")  # fmt: skip
    p.add_argument(
        "--regenerate",
        action="store_true",
        help="re-run the sweep into datasets/leader_loss first (about 40 s)",
    )
    p.add_argument("--pandas", action="store_true", help="aggregate with pandas, not Spark")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="with --regenerate: run in a process pool of this many workers",
    )
    args = p.parse_args(argv)
    if args.regenerate:
        sends, runs = run_sweep() if args.workers <= 1 else run_sweep_pool(workers=args.workers)
        write(sends, runs, command="python -m mqlab.experiments.leader_loss --regenerate")
    if args.pandas:
        table = summary(load_runs())
    else:
        from mqlab.experiments.spark import get_session

        spark = get_session(app_name="mqlab-leader-loss",
                            config={"spark.sql.adaptive.enabled": "false"})  # fmt: skip
        try:
            table = summary(spark_runs(spark))
        finally:
            spark.stop()
    print(format_table(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
