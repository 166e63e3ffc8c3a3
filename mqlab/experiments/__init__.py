"""Experiments at scale: scenarios, metrics, sweeps, runners (local and Spark), datasets.

A ``Scenario`` (``scenario``) describes one run as data; ``run(scenario)`` (``run``)
plays it on a ``Lab`` and returns its trace and one metrics row (``metrics``). A
``Sweep`` (``sweep``) is a scenario × parameter grid × seeds; ``run_sequential`` /
``run_process_pool`` (``runners``) and ``run_sweep_spark`` (``spark``, needs pyspark) run
it and give identical rows; ``parquet`` writes and reads the results; ``aggregate`` has
distributions, confidence intervals and paired comparisons (Spark or pandas);
``datasets`` knows the recorded sweeps shipped under ``datasets/``. Importing this package
does not import pyspark.
"""

from mqlab.experiments.parquet import read_events, read_manifest, read_metrics
from mqlab.experiments.run import RunResult, run
from mqlab.experiments.runners import SweepResult, run_process_pool, run_sequential
from mqlab.experiments.scenario import (
    Burst,
    ConsumerSpec,
    FaultSpec,
    ProducerSpec,
    Scenario,
    TopicSpec,
    load_scenario,
)
from mqlab.experiments.sweep import Param, RunConfig, Sweep, load_sweep

__all__ = [
    "Burst",
    "ConsumerSpec",
    "FaultSpec",
    "Param",
    "ProducerSpec",
    "RunConfig",
    "RunResult",
    "Scenario",
    "Sweep",
    "SweepResult",
    "TopicSpec",
    "load_scenario",
    "load_sweep",
    "read_events",
    "read_manifest",
    "read_metrics",
    "run",
    "run_process_pool",
    "run_sequential",
]
