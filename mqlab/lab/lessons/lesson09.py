"""Lesson 09 — comparing runs with Spark (the mechanisms of lessons 04, 05, 06 and 08 over many runs).

One run answers "what happened"; a question like "is long polling cheaper?" needs many
seeded runs and an aggregate. ``mqlab.experiments`` describes runs as data (``Scenario``,
``Sweep``), runs them (sequentially, in a process pool, or as Spark tasks) and writes
Parquet; ``datasets/`` ships four recorded sweeps. This module gives the notebook its
Spark session (or ``None`` with ``MQLAB_SKIP_SPARK=1`` / no Java: every helper then
works on pandas), one summary and one figure per comparison, a small sweep to run fresh,
and the exercises.

Nothing here imports pyspark at import time (``mqlab.lab.check`` imports every lesson).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from mqlab.experiments import aggregate as agg
from mqlab.experiments import datasets
from mqlab.experiments.runners import run_sequential
from mqlab.experiments.scenario import Scenario
from mqlab.experiments.sweep import Sweep
from mqlab.lab import figures
from mqlab.lab.check import Misconception, exercise, wrong_answer
from mqlab.lab.lab import Lab

__all__ = [
    "Skipped",
    "spark_session",
    "load",
    "to_pandas",
    "sql",
    "idle_pulls_by_hand",
    "polling_summary",
    "polling_figure",
    "churn_summary",
    "churn_figure",
    "crash_pairs",
    "crash_comparison",
    "crash_figure",
    "flow_summary",
    "flow_figure",
    "batch_scenario",
    "fresh_sweep",
    "run_sweep",
    "fresh_steps",
    "explorer",
    "schema",
    "params_09_1",
    "params_09_2",
    "STRATEGIES",
]

STRATEGIES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH")
#: The lesson's tables have at most a few hundred rows: adaptive execution would only split
#: each query into more jobs (a stage per shuffle, plus a sampling job per sort).
_LESSON_CONFIG = {"spark.sql.adaptive.enabled": "false"}
_MODE = {True: "long polling", False: "short polling"}
#: The one colour of a figure whose colours would mean nothing (the x axis names each bar).
_BAR_COLOR = "#1f77b4"
_COLORS = {"long polling": "#1f77b4", "short polling": "#ff7f0e", False: "#d62728",
           True: "#2ca02c"}  # fmt: skip


class Skipped:
    """What a Spark-only cell shows when Spark is off."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"(skipped: {self.what} needs Spark; MQLAB_SKIP_SPARK=1 or no Java)"

    def _repr_html_(self) -> str:
        return f'<div style="color:#7f7f7f;font-family:monospace">{self!r}</div>'


def spark_session(app_name: str = "mqlab-lesson09") -> Any:
    """The embedded Spark session, or None when Spark is off (the notebook uses pandas then).

    ``MQLAB_SKIP_SPARK=1`` turns Spark off; so does a missing pyspark or Java. The master
    comes from ``MQLAB_SPARK_MASTER`` / ``SPARK_REMOTE`` (default ``local[*]``).
    """
    if os.environ.get("MQLAB_SKIP_SPARK", "").lower() in ("1", "true", "yes"):
        print("MQLAB_SKIP_SPARK=1: Spark is off; the cells below use pandas on the same files.")
        return None
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("pyspark is not installed (pip install 'mqlab[spark]'); using pandas.")
        return None
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        print("no Java 17 found; using pandas.")
        return None
    from mqlab.experiments.spark import get_session

    return get_session(app_name=app_name, config=_LESSON_CONFIG)


def load(spark: Any, name: str) -> Any:
    """A shipped dataset's metrics: a Spark DataFrame, or pandas when ``spark`` is None."""
    if spark is None:
        return datasets.load_metrics(name)
    return datasets.spark_table(spark, name, "metrics")


def to_pandas(df: Any) -> pd.DataFrame:
    """A small (aggregated) frame as pandas, whatever it was."""
    return df.toPandas() if agg.is_spark(df) else df


def schema(df: Any) -> pd.DataFrame:
    """Column names and types (Spark: from the plan's schema, so no job runs)."""
    pairs = df.dtypes if agg.is_spark(df) else df.dtypes.items()
    return pd.DataFrame([(name, str(kind)) for name, kind in pairs], columns=["column", "type"])


def sql(spark: Any, query: str, **views: Any) -> Any:
    """Run Spark SQL over DataFrames registered under the given view names."""
    if spark is None:
        return Skipped("Spark SQL")
    for name, df in views.items():
        df.createOrReplaceTempView(name)
    return spark.sql(query).toPandas()


# -- one run by hand ---------------------------------------------------------------------
def idle_pulls_by_hand(lab: Lab, ms: int = 60_000) -> int:
    """One consumer on an idle 4-queue topic for ``ms``: PULL_MESSAGE requests it sent."""
    lab.send("TopicTest", b"create the topic")
    c = lab.push_consumer("CG", "TopicTest", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    lab.advance(2_000)
    before = c.stats.pulls_issued
    lab.advance(ms)
    return c.stats.pulls_issued - before


# -- 1. long vs short polling --------------------------------------------------------------
def polling_summary(metrics: Any) -> pd.DataFrame:
    """Mean pulls issued (95 % CI) and mean p50 latency per (long_polling, rate_per_s)."""
    keys = ["long_polling", "rate_per_s"]
    ci = to_pandas(agg.confidence_intervals(metrics, ["pulls_issued", "latency_p50_ms"], keys))
    out = ci[ci["metric"] == "pulls_issued"].drop(columns="metric")
    lat = ci[ci["metric"] == "latency_p50_ms"][[*keys, "mean"]]
    out = out.merge(lat.rename(columns={"mean": "latency_p50_ms"}), on=keys, how="left")
    out.insert(0, "mode", out["long_polling"].map(_MODE))
    return out.sort_values(keys, ascending=[False, True], kind="stable").reset_index(drop=True)


def polling_figure(summary: pd.DataFrame) -> go.Figure:
    """Pulls issued and median latency per message rate, long vs short polling."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "PULL_MESSAGE requests in 65 s (mean, 95 % CI)", "delivery latency p50 (ms, mean)"))  # fmt: skip
    for mode, d in summary.groupby("mode", sort=False):
        x = [f"{r:g} msg/s" for r in d["rate_per_s"]]
        fig.add_trace(go.Bar(x=x, y=d["mean"], name=mode, marker_color=_COLORS[mode],
                             error_y={"type": "data", "array": d["half_width"]}), 1, 1)  # fmt: skip
        fig.add_trace(go.Bar(x=x, y=d["latency_p50_ms"], name=mode, showlegend=False,
                             marker_color=_COLORS[mode]), 1, 2)  # fmt: skip
    fig.update_layout(title="Long polling vs short polling", barmode="group",
                      legend_title="polling mode")  # fmt: skip
    fig.update_xaxes(title_text="message rate")
    # ~1 ms (long polling) beside ~500 ms (short): a log axis keeps both bars visible
    fig.update_yaxes(type="log", dtick=1, title_text="ms (log scale)", row=1, col=2)
    return figures.house_style(fig)


# -- 2. allocation strategies under churn ------------------------------------------------------
def churn_summary(metrics: Any) -> pd.DataFrame:
    """Per strategy: mean (95 % CI) of queue_moves, duplicates and convergence_ms."""
    names = ["queue_moves", "duplicates", "convergence_ms"]
    ci = to_pandas(agg.confidence_intervals(metrics, names, "strategy"))
    return ci[["metric", "strategy", "n", "mean", "half_width"]].reset_index(drop=True)


def churn_figure(summary: pd.DataFrame) -> go.Figure:
    """Queue moves, duplicates and time to converge per allocation strategy."""
    metrics = ["queue_moves", "duplicates", "convergence_ms"]
    fig = make_subplots(rows=1, cols=3, subplot_titles=(
        "queues moved", "duplicate deliveries", "time to converge (ms, worst change)"))  # fmt: skip
    for i, metric in enumerate(metrics, start=1):
        d = summary[summary["metric"] == metric]
        # one colour: the strategy is the bar's x label (three unexplained colours said nothing)
        fig.add_trace(go.Bar(x=d["strategy"], y=d["mean"], showlegend=False,
                             marker_color=_BAR_COLOR,
                             error_y={"type": "data", "array": d["half_width"]}), 1, i)  # fmt: skip
    fig.update_layout(title="Allocation strategies under churn: join, crash, leave")
    return figures.house_style(fig)


# -- 3. crash before / after offset persist ------------------------------------------------------
def crash_pairs(metrics: Any) -> pd.DataFrame:
    """Duplicates per seed without (a) and with (b) persisting offsets before the crash."""
    return to_pandas(agg.paired_differences(metrics, "persist_first", False, True, "duplicates"))


def crash_comparison(metrics: Any) -> pd.DataFrame:
    """The paired comparison: persist_first=True minus False on the same seeds."""
    return to_pandas(agg.paired_comparison(metrics, "persist_first", False, True, "duplicates"))


def crash_figure(pairs: pd.DataFrame) -> go.Figure:
    """Each seed's duplicates without and with persisting first, joined by a grey line; seeds
    with the same pair of results share one line, as wide as their number and labelled with
    it (20 seeds drawn one line each showed as about 5 lines)."""
    fig = go.Figure()
    shared: dict[tuple[float, float], list[int]] = {}
    for r in pairs.itertuples():
        shared.setdefault((float(r.a), float(r.b)), []).append(int(r.seed))
    for (a, b), seeds in sorted(shared.items()):
        n = len(seeds)
        fig.add_trace(go.Scatter(
            x=[0, 1], y=[a, b], mode="lines", line={"color": "#bbbbbb", "width": 1.5 + 1.5 * n},
            showlegend=False, hovertemplate=f"{n} seed(s) {seeds}: %{{y}}<extra></extra>",
        ))  # fmt: skip
        fig.add_annotation(x=0.25, y=a + (b - a) / 4, text=f"{n} seed{'s' if n > 1 else ''}",
                           showarrow=False, yshift=10, font={"size": 11, "color": "#555555"})  # fmt: skip
    for x, label, col, persisted in ((0, "kill", "a", False),
                                     (1, "persist, then kill", "b", True)):  # fmt: skip
        fig.add_trace(go.Scatter(x=[x] * len(pairs), y=pairs[col], mode="markers",
                                 name=label, marker={"color": _COLORS[persisted], "size": 9}))  # fmt: skip
    fig.update_layout(title="Duplicates after a consumer crash, paired by seed<br><sup>a grey "
                      "line joins a seed's two runs; seeds with the same two results share "
                      "one line</sup>", yaxis_title="duplicate deliveries", xaxis_title="",
                      showlegend=True)  # fmt: skip
    fig.update_xaxes(tickmode="array", tickvals=[0, 1], ticktext=["kill", "persist, then kill"],
                     range=[-0.3, 1.3])  # fmt: skip
    return figures.house_style(fig)


# -- 4. flow-control thresholds ------------------------------------------------------------------
def flow_summary(metrics: Any) -> pd.DataFrame:
    """Per pullThresholdForQueue: mean (95 % CI) of episodes, pulls and p99 latency."""
    names = ["flow_control_episodes", "pulls_issued", "latency_p99_ms"]
    ci = to_pandas(agg.confidence_intervals(metrics, names, "pull_threshold_for_queue"))
    return ci[["metric", "pull_threshold_for_queue", "mean", "half_width"]].reset_index(drop=True)


def flow_figure(summary: pd.DataFrame) -> go.Figure:
    """Flow-control episodes, pulls and p99 latency against the threshold (log axis)."""
    titles = {"flow_control_episodes": "flow-control episodes", "pulls_issued": "pulls issued",
              "latency_p99_ms": "latency p99 (ms)"}  # fmt: skip
    fig = make_subplots(rows=1, cols=3, subplot_titles=list(titles.values()))
    for i, (metric, _) in enumerate(titles.items(), start=1):
        d = summary[summary["metric"] == metric]
        fig.add_trace(go.Scatter(x=d["pull_threshold_for_queue"], y=d["mean"], mode="lines+markers",
                                 showlegend=False, line={"color": _BAR_COLOR},
                                 error_y={"type": "data", "array": d["half_width"]}), 1, i)  # fmt: skip
        ticks = sorted({float(v) for v in d["pull_threshold_for_queue"]})
        fig.update_xaxes(type="log", title_text="pullThresholdForQueue", row=1, col=i,
                         tickvals=ticks, ticktext=[f"{v:g}" for v in ticks])  # fmt: skip
    fig.update_layout(title="Flow control under a burst: threshold vs episodes and latency")
    return figures.house_style(fig)


# -- a fresh sweep ---------------------------------------------------------------------------------
def batch_scenario(seed: int) -> Scenario:
    """A 5 s scenario for the design exercise: 2 consumers, 20 msg/s Poisson plus a burst of
    100 at 1 s, 4 queues."""
    return Scenario.from_dict({
        "name": "batch", "seed": seed, "duration_ms": 5_000, "drain_ms": 2_000,
        "producers": [{"rate_per_s": 20, "arrival": "poisson",
                       "bursts": [{"at_ms": 1_000, "count": 100}]}],
        "consumers": [{"count": 2, "consume_time_ms": 5}],
    })  # fmt: skip


def fresh_sweep(seed: int) -> Sweep:
    """Long vs short polling at 2 msg/s, 2 seeds from ``seed``: 4 short runs."""
    base = Scenario.from_dict({
        "name": "fresh", "duration_ms": 5_000, "drain_ms": 1_000,
        "producers": [{"rate_per_s": 2, "arrival": "poisson"}], "consumers": [{"count": 1}],
    })  # fmt: skip
    return Sweep.from_dict({
        "sweep": "fresh", "scenario": base.to_dict(),
        "grid": {"long_polling": {"path": "broker.long_polling_enable", "values": [True, False]}},
        "seeds": {"start": seed, "count": 2}, "events": "none",
    })  # fmt: skip


def run_sweep(sweep: Sweep, spark: Any = None, slices: int | None = None) -> Any:
    """Run ``sweep`` as ``slices`` Spark tasks (metrics as a Spark DataFrame), or here with
    pandas. ``slices=None``: ``run_sweep_spark``'s default (4 per core, at most one per run)."""
    if spark is None:
        return run_sequential(sweep, progress=False).metrics
    from mqlab.experiments.spark import run_sweep_spark

    return run_sweep_spark(sweep, spark, slices=slices).metrics


def fresh_steps(seed: int, spark: Any = None) -> Any:
    """The explorer's k-th fresh sweep: ``fresh_sweep(seed + 2k)``, one seed per step (one
    Spark job each, or here with pandas); yields ``(done, total, runs so far)``."""
    import dataclasses

    def steps(k: int) -> Any:
        sweep = fresh_sweep(seed + 2 * k)
        runs = None
        for i, s in enumerate(sweep.seeds, start=1):
            part = run_sweep(dataclasses.replace(sweep, seeds=(s,)), spark, slices=1)
            runs = part if runs is None else (
                runs.unionByName(part) if agg.is_spark(runs) else pd.concat([runs, part],
                                                                            ignore_index=True))  # fmt: skip
            yield i, len(sweep.seeds), runs

    return steps


def explorer(spark: Any, seed: int) -> Any:
    """Lesson 09's explorer over the four shipped datasets (Spark tables, or pandas when
    ``spark`` is None) plus the fresh sweeps its button runs (``fresh_steps``)."""
    from mqlab.lab.explorer import RunExplorer

    tables = {name: (lambda name=name: load(spark, name)) for name in datasets.DATASETS}
    return RunExplorer(tables, fresh=fresh_steps(seed, spark), dataset="long_vs_short_polling",
                       metric="pulls_issued", by="long_polling")  # fmt: skip


# -- exercises -------------------------------------------------------------------------------------
def _rate(seed: int) -> int:
    return (0, 1, 10)[seed % 3]


# fmt: off
_MISC_09_1 = (
    Misconception("the idle case",
                  "the tenfold gap is the idle case (rate 0). With messages flowing, long "
                  "polling answers a pull as soon as a message is stored and the consumer pulls "
                  "again, while short polling collects one batch per 1 s check: the gap shrinks, "
                  "and at 10 msg/s long polling sends more (a ratio below 1)",
                  lambda answer, want, seed: _rate(seed) != 0
                  and (answer == 10 or _same_ratio(answer, _ex_09_1(0)))),
    Misconception("an upside-down ratio",
                  "divide short polling's mean pulls_issued by long polling's (short ÷ long)",
                  lambda answer, want, seed: _same_ratio(answer, _inverse_09_1(seed))),
)
# fmt: on


@exercise("09.1", "long_vs_short_polling, at the message rate L.params_09_1(SEED): what is the "
          "ratio short ÷ long of the mean pulls_issued (short polling's mean divided by long "
          "polling's), rounded to 1 decimal? Above 1, short polling sends more PULL_MESSAGE "
          "requests; below 1, fewer.",
          hint="filter rate_per_s, take the mean pulls_issued of each long_polling value, divide "
               "short (False) by long (True). Idle, a long poll is answered every ~20 s and a "
               "short poll every ~2 s; at 10 msg/s, long polling answers each pull as soon as a "
               "message arrives, and short polling one batch per 1 s check",
          misconceptions=_MISC_09_1)  # fmt: skip
def _ex_09_1(seed: int) -> float:
    s = polling_summary(datasets.load_metrics("long_vs_short_polling"))
    s = s[s["rate_per_s"] == _rate(seed)].set_index("long_polling")["mean"]
    return round(float(s[False] / s[True]), 1)


def _same_ratio(answer: Any, ratio: float) -> bool:
    return isinstance(answer, int | float) and round(float(answer), 1) == round(ratio, 1)


def _inverse_09_1(seed: int) -> float:
    """Long ÷ short at the seed's rate: the ratio upside down."""
    s = polling_summary(datasets.load_metrics("long_vs_short_polling"))
    s = s[s["rate_per_s"] == _rate(seed)].set_index("long_polling")["mean"]
    return float(s[True] / s[False])


def params_09_1(seed: int) -> int:
    """The message rate exercise 09.1 asks about."""
    return _rate(seed)


@exercise("09.2", "allocation_under_churn: the mean queue_moves of the strategy L.params_09_2(SEED), "
          "rounded to 2 decimals.",
          hint="confidence_intervals(metrics, 'queue_moves', 'strategy') has the mean per strategy")  # fmt: skip
def _ex_09_2(seed: int) -> float:
    m = datasets.load_metrics("allocation_under_churn")
    return round(float(m[m["strategy"] == params_09_2(seed)]["queue_moves"].mean()), 2)


def params_09_2(seed: int) -> str:
    """The strategy exercise 09.2 asks about."""
    return STRATEGIES[seed % 3]


@exercise("09.3", "crash_offset_persist: on how many seeds did persisting offsets before the kill "
          "give strictly fewer duplicates than killing without persisting?",
          hint="paired_comparison(metrics, 'persist_first', False, True, 'duplicates') counts it "
               "in b_lower")  # fmt: skip
def _ex_09_3(seed: int) -> int:
    return int(crash_comparison(datasets.load_metrics("crash_offset_persist"))["b_lower"].iloc[0])


# fmt: off
_MISC_09_4 = (
    wrong_answer("subtracting the other way round",
                 "the difference is batch 32's pulls_issued minus batch 1's, seed by seed "
                 "(paired_comparison(metrics, 'batch', 1, 32, ...) computes exactly that): if "
                 "bigger batches need fewer pulls, it is negative",
                 lambda want, seed: -want),
)
# fmt: on


@exercise("09.4", "Design a sweep: on L.batch_scenario(SEED), compare consumers.0.pull_batch_size 1 "
          "and 32 over seeds SEED, SEED+1, SEED+2 (column 'batch'). Hypothesis: bigger batches need "
          "fewer pulls. Answer the mean paired difference of pulls_issued (32 minus 1), rounded to 1 "
          "decimal.",
          hint="Sweep(L.batch_scenario(SEED), grid=(Param('batch', 'consumers.0.pull_batch_size', "
               "(1, 32)),), seeds=(SEED, SEED + 1, SEED + 2)); run it; paired_comparison(metrics, "
               "'batch', 1, 32, 'pulls_issued')",
          misconceptions=_MISC_09_4)  # fmt: skip
def _ex_09_4(seed: int) -> float:
    from mqlab.experiments.sweep import Param

    sweep = Sweep(batch_scenario(seed), grid=(Param("batch", "consumers.0.pull_batch_size", (1, 32)),),
                  seeds=(seed, seed + 1, seed + 2), events="none")  # fmt: skip
    metrics = run_sequential(sweep, progress=False).metrics
    c = agg.paired_comparison(metrics, "batch", 1, 32, "pulls_issued")
    return round(float(c["mean_diff"].iloc[0]), 1)
