"""Build lesson 09 (learner and solutions copies) from one source.

Run from the repository root::

    python tools/build_lesson09.py            # writes notebooks/09_… and notebooks/solutions/09_…
    python tools/build_lesson09.py --check    # exit 1 if a written notebook is stale

The lesson is a list of cells: markdown, code, and exercises. An exercise becomes a
``### Exercise 09.k`` heading with its registered question, an optional cell showing the
learner's numbers, an answer cell (``answer = ...`` in the learner copy, the worked answer
in the solutions copy) and a check cell (``check(...)`` / ``assert check(...)``).
Notebooks are written without outputs, with stable cell ids, so rebuilding gives the same
bytes. Spark cells go through ``mqlab.lab.lessons.lesson09``, which falls back to pandas
when ``MQLAB_SKIP_SPARK=1`` (or without Java), so the notebook runs either way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbcells import Cell, Code, Exercise, Md
from nbcells import build as _build

ROOT = Path(__file__).resolve().parents[1]
NAME = "09_comparing_runs_with_spark"
LEARNER_PATH = ROOT / "notebooks" / f"{NAME}.ipynb"
SOLUTIONS_PATH = ROOT / "notebooks" / "solutions" / f"{NAME}_solutions.ipynb"


def build(cells: list[Cell], *, solutions: bool) -> nbformat.NotebookNode:
    return _build(
        cells, solutions=solutions, prefix="l09",
        learner_note="*Work it out: replace the `...` with your answer and run the check.*",
        placeholder="answer = ...  # your answer",
    )  # fmt: skip


# fmt: off
CELLS: list[Cell] = [
    Md("""
# 09 · Comparing runs with Spark

*Seeds 001 (long polling), 003 (the pull loop and flow control) and 004 (rebalancing,
offset stores); `mqlab.experiments`; the datasets in `datasets/` (see `datasets/README.md`).*

One run tells you what happened. "Is long polling really cheaper?", "which allocation
strategy moves fewer queues when a consumer joins?", "how many duplicates does a crash
before the offset persist cost?" need many runs, each with its own seed, and an
aggregate with an error bar. This lesson describes runs as data (a `Scenario`), runs
grids of them (a `Sweep`) sequentially or as Spark tasks, and compares the results with
Spark SQL and the DataFrame API.

Put your name in `LEARNER`: the exercises use numbers derived from it. Spark runs
embedded (`local[*]`); with `MQLAB_SKIP_SPARK=1` or without Java every cell below still
runs, on pandas.
"""),
    Code("""
from mqlab.experiments import Param, Scenario, Sweep, aggregate, run
from mqlab.lab import Lab
from mqlab.lab.check import check, learner_seed
from mqlab.lab.lessons import lesson09 as L

LEARNER = "your-name"
SEED = learner_seed(LEARNER)
lab = Lab(seed=SEED)
"""),
    Md("""
## 1. One run, by hand

Start one consumer on an idle 4-queue topic and count its PULL_MESSAGE requests over
60 s. Each pull finds nothing and the broker parks it (`PullMessageProcessor`, between seed
000's steps 10 and 11: PULL_NOT_FOUND → `PullRequestHoldService#suspendPullRequest`, seed 001) for the consumer's 15 s
`brokerSuspendMaxTimeMillis`. The hold service checks every 5 000 ms, so a parked pull is
answered 20 s after it arrived. The consumer pulls 5 queues: the 4 of TopicTest and
`%RETRY%CG`.
"""),
    Code("""
L.idle_pulls_by_hand(lab)
"""),
    Md("""
## 2. The same run as a scenario

A `Scenario` says the same thing as data: the cluster, who sends what and when, who
consumes and how, which faults happen when, the broker settings, how long, and the seed.
`run(scenario)` builds a `Lab`, plays the timeline and returns the trace and **one metrics
row**: deliveries, duplicates and their causes, losses and what allowed them, latency
percentiles (store → listener), pulls (issued, empty, suspended), flow-control episodes,
rebalances, queue moves, convergence time, retries, DLQ, final lag.
"""),
    Code("""
idle = Scenario(name="idle", seed=SEED, duration_ms=60_000, drain_ms=0,
                producers=[{"rate_per_s": 0}], consumers=[{"count": 1}])
one = run(idle)
one.metrics_frame()[["run_id", "pulls_issued", "pulls_empty", "pulls_suspended", "lost"]]
"""),
    Md("""
## 3. Many runs on Spark

A `Sweep` is a scenario × a parameter grid × seeds. Each run is a Spark task
(`sparkContext.parallelize(configs).mapPartitions(run)`); the results come back as two
DataFrames, `metrics` (one row per run) and `events` (the traces), written as Parquet
partitioned by grid point. Four recorded sweeps ship with mqlab, so this lesson does not
have to re-run hundreds of simulations. `datasets/README.md` gives their schema and the
exact command that made each one. Spark is lazy: loading a dataset reads the files'
footers for the schema below, and nothing is computed until a cell asks for results.
"""),
    Code("""
spark = L.spark_session()
spark
"""),
    Code("""
polling = L.load(spark, "long_vs_short_polling")
L.schema(polling).T
"""),
    Md("""
## 4. Long polling vs short polling

With `longPollingEnable=false` the broker parks an empty pull for only
`shortPollingTimeMills` (1 000 ms). Its hold service then checks every 1 000 ms, and a
new message does **not** wake the pull: `ReputMessageService` notifies arrivals only when
long polling is on (seed 001; facts §10.3). Spark SQL first, on a temporary view:
"""),
    Code("""
L.sql(spark, \"\"\"SELECT long_polling, rate_per_s, count(*) AS runs,
                      avg(pulls_issued) AS pulls, avg(latency_p50_ms) AS p50_ms
               FROM polling GROUP BY long_polling, rate_per_s
               ORDER BY long_polling DESC, rate_per_s\"\"\", polling=polling)
"""),
    Md("""
`aggregate.confidence_intervals` adds the 95 % interval of each mean (Student t). The
figure shows the price of each mode: short polling sends ten times more requests when
idle, and every message waits for the next 1 000 ms check (about 500 ms on average).
Long polling answers as soon as the message is stored.
"""),
    Code("""
summary = L.polling_summary(polling)
L.polling_figure(summary)
"""),
    Exercise("09.1", "L.params_09_1(SEED)", """
s = summary[summary["rate_per_s"] == L.params_09_1(SEED)].set_index("long_polling")["mean"]
answer = round(float(s[False] / s[True]), 1)
answer
"""),
    Md("""
## 5. Allocation strategies under churn

Three consumers share 8 queues. A fourth joins at 10 s, consumer-1 crashes at a seeded
moment between 20 and 25 s, and consumer-2 leaves at 30 s. Every change makes each
consumer re-run `RebalanceImpl#rebalanceByTopic` (seed 004) with the group's sorted ids.
A *queue move* is a queue added to a consumer after another consumer held it. Each move
costs a drop, an offset persist and a fresh `computePullFromWhere`, and messages in
flight may be delivered twice.
"""),
    Code("""
churn = L.load(spark, "allocation_under_churn")
churn_summary = L.churn_summary(churn)
L.churn_figure(churn_summary)
"""),
    Exercise("09.2", "L.params_09_2(SEED)", """
s = churn_summary[churn_summary["metric"] == "queue_moves"].set_index("strategy")["mean"]
answer = round(float(s[L.params_09_2(SEED)]), 2)
answer
"""),
    Md("""
## 6. A crash before or after the offset persist

`RemoteBrokerOffsetStore#persistAll` commits offsets every 5 s (seed 004). Each pull also
carries the queue's offset (`commitOffset` with the COMMIT_OFFSET sys flag, committed by
`PullMessageProcessor`, seed 000 step 11). So a crash forgets only the progress made
since the last pull or persist, plus whatever the listener was still working on; the
successor delivers those messages again. A
**paired** comparison runs both variants on the same seeds, so each seed has the same sends
and the same kill moment. It then compares the two within each seed.
"""),
    Code("""
crash = L.load(spark, "crash_offset_persist")
crash_cmp = L.crash_comparison(crash)
crash_cmp
"""),
    Code("""
L.crash_figure(L.crash_pairs(crash))
"""),
    Exercise("09.3", None, """
answer = int(crash_cmp["b_lower"].iloc[0])
answer
"""),
    Md("""
## 7. Flow-control thresholds

A burst of 400 messages meets one slow consumer (2 consume threads, 20 ms per message).
Before each pull, `DefaultMQPushConsumerImpl#pullMessage` checks the cached count against
`pullThresholdForQueue`. Above it, the pull is retried in 50 ms
(`PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL`, seed 003 step 2.1). Here the listener is the
bottleneck, so the threshold barely moves the p99 latency: a low threshold replaces pulls
with 50 ms flow-control retries, and the cache it protects stays small.
"""),
    Code("""
flow = L.load(spark, "flow_control_thresholds")
L.flow_figure(L.flow_summary(flow))
"""),
    Md("""
## 8. A fresh sweep on the embedded Spark

The same machinery runs new sweeps: here long vs short polling at 2 messages/s on two
seeds from yours, 4 runs. `slices=1` packs them into one Spark task: each task needs a
Python worker that imports mqlab, which costs far more than four 5-second simulations
(the default, 4 tasks per core, pays off at hundreds of runs). Every runner (sequential,
process pool, Spark) gives identical rows for the same seeds.
"""),
    Code("""
fresh = L.run_sweep(L.fresh_sweep(SEED), spark, slices=1)
L.to_pandas(fresh)[["run_id", "long_polling", "pulls_issued", "latency_p50_ms"]]
"""),
    Md("""
## 9. Design a sweep, check a hypothesis

Hypothesis: a bigger `pullBatchSize` (seed 003: up to 32 messages per PULL_MESSAGE) means
fewer pulls when a burst arrives. Build the sweep yourself. Start from
`L.batch_scenario(SEED)`, vary `consumers.0.pull_batch_size` over 1 and 32 (name the
column `batch`), and use the seeds `SEED`, `SEED + 1`, `SEED + 2`. Run it with
`L.run_sweep(sweep, spark)` (Spark tasks) or `L.run_sweep(sweep)` (here: a handful of short
runs finish sooner without shipping them to executors; Spark pays off at hundreds) and
compare with `aggregate.paired_comparison`.
"""),
    Exercise("09.4", None, """
sweep = Sweep(L.batch_scenario(SEED), grid=(Param("batch", "consumers.0.pull_batch_size", (1, 32)),),
              seeds=(SEED, SEED + 1, SEED + 2), events="none")
batch = L.run_sweep(sweep)  # 6 short runs: quicker here than as Spark tasks
cmp = aggregate.paired_comparison(batch, "batch", 1, 32, "pulls_issued")
answer = round(float(cmp["mean_diff"].iloc[0]), 1)
answer
"""),
    Md("""
## Going further

* The same sweeps from a shell: `python -m mqlab experiment run datasets/specs/<name>.yaml
  --out DIR --runner spark` (or `--runner pool`), and the benchmark:
  `python -m mqlab.experiments.bench`.
* On a cluster, set `MQLAB_SPARK_MASTER=spark://host:7077` (or `SPARK_REMOTE=sc://host:15002`
  for Spark Connect) and install mqlab on the executors (`mqlab.experiments.spark`).
* Traces are kept too: `L.load(spark, …)` reads `metrics`, and
  `mqlab.experiments.datasets.spark_table(spark, name, "events")` reads the events of the
  first seed of each grid point, ready for the lesson figures.
"""),
]
# fmt: on


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a notebook is stale")
    args = p.parse_args(argv)
    stale = []
    for path, solutions in ((LEARNER_PATH, False), (SOLUTIONS_PATH, True)):
        text = nbformat.writes(build(CELLS, solutions=solutions)) + "\n"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(f"stale: {path.relative_to(ROOT)} (run python tools/build_lesson09.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
