"""Aggregating a sweep's metrics: distributions, confidence intervals, paired comparisons.

Mirrors no RocketMQ class. Each helper takes the metrics table as a Spark DataFrame (and
then computes with the DataFrame API / Spark SQL functions) or as a pandas DataFrame (the
same numbers with pandas, for machines without Java: ``MQLAB_SKIP_SPARK=1``). Either way
the result is a small pandas DataFrame (one row per group or per pair, collected from
Spark), so the code that reads a number out of it is the same on both paths; pass
``as_spark=True`` to keep Spark's lazy DataFrame instead. Percentiles are exact with
linear interpolation in both (Spark SQL ``percentile``, pandas ``quantile``).

- ``distribution(df, metric, by)``: n, mean, std, min, p05, p50, p95, max per group;
- ``confidence_intervals(df, metric(s), by, level)``: mean ± t(level, n − 1) · s / √n,
  several metrics in one aggregation (on Spark one job: t is a column expression);
- ``paired_comparison(df, param, a, b, metric)``: runs with ``param`` = a and = b on the
  same seed (and the same other parameters) paired; the mean difference b − a with its
  confidence interval, and how often b was lower, equal, higher. Pairing removes the
  seed-to-seed noise both values share (the same sends, the same fault times).

``t_quantile`` is the Student-t quantile (exact for 1 and 2 degrees of freedom, a
Cornish–Fisher expansion beyond, within 0.2 % for 3 and better above), so no SciPy.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from mqlab.experiments.schema import ID_COLUMNS, METRIC_COLUMNS

__all__ = [
    "t_quantile",
    "param_columns",
    "distribution",
    "confidence_intervals",
    "paired_differences",
    "paired_comparison",
    "is_spark",
]

_FIXED = {n for n, _ in ID_COLUMNS} | {n for n, _ in METRIC_COLUMNS}
_QUANTILES = (("p05", 0.05), ("p50", 0.5), ("p95", 0.95))


def is_spark(df: Any) -> bool:
    """Whether ``df`` is a Spark DataFrame (classic or Connect)."""
    return type(df).__module__.startswith("pyspark.")


def _cornish_fisher(z: float) -> tuple[float, float, float, float, float]:
    """Coefficients a0..a4 of t ≈ a0 + a1/v + a2/v² + a3/v³ + a4/v⁴ (v degrees of freedom)."""
    return (
        z,
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )


def _exact_small(level: float) -> tuple[float, float]:
    """The exact critical values for 1 and 2 degrees of freedom."""
    p = 0.5 + level / 2
    return math.tan(math.pi * (p - 0.5)), (2 * p - 1) / math.sqrt(2 * p * (1 - p))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")


def t_quantile(level: float, dof: int) -> float:
    """The two-sided ``level`` critical value of Student's t with ``dof`` degrees of freedom."""
    _check_level(level)
    if dof < 1:
        return math.nan
    if dof <= 2:
        return _exact_small(level)[dof - 1]
    a = _cornish_fisher(NormalDist().inv_cdf(0.5 + level / 2))
    v = float(dof)
    return a[0] + a[1] / v + a[2] / v**2 + a[3] / v**3 + a[4] / v**4


def _t_column(level: float, n: Any) -> Any:
    """``t_quantile(level, n − 1)`` as a Spark Column (null for n < 2): no extra job."""
    from pyspark.sql import functions as F

    _check_level(level)
    a = _cornish_fisher(NormalDist().inv_cdf(0.5 + level / 2))
    v = (n - 1).cast("double")
    cf = F.lit(a[0]) + a[1] / v + a[2] / v**2 + a[3] / v**3 + a[4] / v**4
    t1, t2 = _exact_small(level)
    return F.when(n < 2, F.lit(None)).when(n == 2, t1).when(n == 3, t2).otherwise(cf)


def param_columns(df: Any) -> list[str]:
    """The grid's parameter columns of a metrics table (everything not fixed)."""
    return [c for c in df.columns if c not in _FIXED]


def _by(by: str | list[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _out(df: Any, as_spark: bool) -> Any:
    """A Spark result as pandas unless ``as_spark`` (pandas results pass through)."""
    return df.toPandas() if is_spark(df) and not as_spark else df


def distribution(df: Any, metric: str, by: str | list[str] | None = None, *,
                 as_spark: bool = False) -> Any:  # fmt: skip
    """Per group of ``by``: n, mean, std, min, p05, p50, p95, max of ``metric``."""
    keys = _by(by)
    if is_spark(df):
        from pyspark.sql import functions as F

        col = F.col(f"`{metric}`")
        aggs = [F.count(col).alias("n"), F.mean(col).alias("mean"),
                F.stddev_samp(col).alias("std"), F.min(col).cast("double").alias("min")]  # fmt: skip
        aggs += [F.expr(f"percentile(`{metric}`, {q})").alias(name) for name, q in _QUANTILES]
        aggs.append(F.max(col).cast("double").alias("max"))
        grouped = df.groupBy(*keys) if keys else df.groupBy()
        out = grouped.agg(*aggs)
        return _out(out.orderBy(*keys) if keys else out, as_spark)
    import pandas as pd

    def stats(s: pd.Series) -> pd.Series:
        s = s.dropna().astype("float64")
        values = {"n": len(s), "mean": s.mean(), "std": s.std(ddof=1), "min": s.min()}
        values.update({name: s.quantile(q) for name, q in _QUANTILES})
        values["max"] = s.max()
        return pd.Series(values)

    if not keys:
        return stats(df[metric]).to_frame().T.astype({"n": "int64"})
    out = df.groupby(keys, sort=True)[metric].apply(stats).unstack().reset_index()
    return out.astype({"n": "int64"})


def _with_ci(df: Any, level: float, mean: str, std: str, n: str) -> Any:
    """Add ``t``, ``half_width``, ``ci_low``, ``ci_high`` to an aggregate frame."""
    if is_spark(df):
        from pyspark.sql import functions as F

        half = F.col("t") * F.col(std) / F.sqrt(F.col(n).cast("double"))
        return (df.withColumn("t", _t_column(level, F.col(n)))
                .withColumn("half_width", half)
                .withColumn("ci_low", F.col(mean) - F.col("half_width"))
                .withColumn("ci_high", F.col(mean) + F.col("half_width")))  # fmt: skip
    out = df.copy()
    out["t"] = [t_quantile(level, int(c) - 1) if c > 1 else math.nan for c in out[n]]
    out["half_width"] = out["t"] * out[std] / out[n].astype("float64") ** 0.5
    out["ci_low"] = out[mean] - out["half_width"]
    out["ci_high"] = out[mean] + out["half_width"]
    return out


_CI = ["n", "mean", "std", "t", "half_width", "ci_low", "ci_high"]


def confidence_intervals(df: Any, metric: str | list[str], by: str | list[str] | None = None,
                         level: float = 0.95, *, as_spark: bool = False) -> Any:  # fmt: skip
    """Per group: n, mean, std and the ``level`` confidence interval of the mean.

    ``metric`` may be a list: one aggregation for all of them (one Spark job), the rows
    stacked with a leading ``metric`` column.
    """
    keys = _by(by)
    metrics = [metric] if isinstance(metric, str) else list(metric)
    if is_spark(df):
        from pyspark.sql import functions as F

        grouped = df.groupBy(*keys) if keys else df.groupBy()
        aggs = []
        for i, m in enumerate(metrics):
            col = F.col(f"`{m}`")
            aggs += [F.count(col).alias(f"n{i}"), F.mean(col).alias(f"mean{i}"),
                     F.stddev_samp(col).alias(f"std{i}")]  # fmt: skip
        wide = grouped.agg(*aggs)
        rows = [F.struct(F.lit(m).alias("metric"), F.col(f"n{i}").alias("n"),
                         F.col(f"mean{i}").alias("mean"), F.col(f"std{i}").alias("std"))
                for i, m in enumerate(metrics)]  # fmt: skip
        long = wide.select(*keys, F.explode(F.array(*rows)).alias("s")).select(*keys, "s.*")
        out = _with_ci(long, level, "mean", "std", "n")
        out = out.select(*(["metric"] if not isinstance(metric, str) else []), *keys, *_CI)
        order = ([] if isinstance(metric, str) else ["metric"]) + keys
        return _out(out.orderBy(*order) if order else out, as_spark)
    import pandas as pd

    frames = []
    for m in metrics:
        d = distribution(df, m, keys)[[*keys, "n", "mean", "std"]]
        d = _with_ci(d, level, "mean", "std", "n").reset_index(drop=True)
        frames.append(d[[*keys, *_CI]] if isinstance(metric, str) else d.assign(metric=m))
    if isinstance(metric, str):
        return frames[0]
    out = pd.concat(frames, ignore_index=True)[["metric", *keys, *_CI]]
    return out.sort_values(["metric", *keys], kind="stable").reset_index(drop=True)


def paired_differences(df: Any, param: str, a: Any, b: Any, metric: str, *,
                       as_spark: bool = False) -> Any:  # fmt: skip
    """One row per pair: the other parameters, seed, ``a``, ``b`` and ``diff`` = b − a."""
    others = [c for c in param_columns(df) if c != param]
    keys = [*others, "seed"]
    if is_spark(df):
        from pyspark.sql import functions as F

        left = df.where(F.col(param) == F.lit(a)).select(*keys, F.col(metric).alias("a"))
        right = df.where(F.col(param) == F.lit(b)).select(*keys, F.col(metric).alias("b"))
        pairs = left.join(right, on=keys, how="inner")
        pairs = pairs.where(F.col("a").isNotNull() & F.col("b").isNotNull())
        return _out(pairs.withColumn("diff", F.col("b") - F.col("a")).orderBy(*keys), as_spark)
    left = df[df[param] == a][[*keys, metric]].rename(columns={metric: "a"})
    right = df[df[param] == b][[*keys, metric]].rename(columns={metric: "b"})
    pairs = left.merge(right, on=keys, how="inner").dropna(subset=["a", "b"])
    pairs["diff"] = pairs["b"] - pairs["a"]
    return pairs.sort_values(keys, kind="stable").reset_index(drop=True)


def paired_comparison(df: Any, param: str, a: Any, b: Any, metric: str,
                      level: float = 0.95, *, as_spark: bool = False) -> Any:  # fmt: skip
    """``param`` = b against = a on the same seeds (per combination of the other params).

    Returns per group: ``pairs``, ``mean_a``, ``mean_b``, ``mean_diff`` (b − a), ``std_diff``,
    the confidence interval of the mean difference, and ``b_lower`` / ``ties`` /
    ``b_higher`` (how many seeds had b below, equal to, above a).
    """
    others = [c for c in param_columns(df) if c != param]
    pairs = paired_differences(df, param, a, b, metric, as_spark=True)
    if is_spark(pairs):
        from pyspark.sql import functions as F

        grouped = pairs.groupBy(*others) if others else pairs.groupBy()
        agg = grouped.agg(
            F.count("diff").alias("pairs"), F.mean("a").alias("mean_a"),
            F.mean("b").alias("mean_b"), F.mean("diff").alias("mean_diff"),
            F.stddev_samp("diff").alias("std_diff"),
            F.sum(F.when(F.col("diff") < 0, 1).otherwise(0)).alias("b_lower"),
            F.sum(F.when(F.col("diff") == 0, 1).otherwise(0)).alias("ties"),
            F.sum(F.when(F.col("diff") > 0, 1).otherwise(0)).alias("b_higher"),
        )  # fmt: skip
        out = _with_ci(agg, level, "mean_diff", "std_diff", "pairs")
        cols = [*others, "pairs", "mean_a", "mean_b", "mean_diff", "std_diff", "half_width",
                "ci_low", "ci_high", "b_lower", "ties", "b_higher"]  # fmt: skip
        out = out.select(*cols)
        return _out(out.orderBy(*others) if others else out, as_spark)
    import pandas as pd

    def summary(g: pd.DataFrame) -> pd.Series:
        diff = g["diff"].astype("float64")
        return pd.Series({
            "pairs": len(g), "mean_a": g["a"].mean(), "mean_b": g["b"].mean(),
            "mean_diff": diff.mean(), "std_diff": diff.std(ddof=1),
            "b_lower": int((diff < 0).sum()), "ties": int((diff == 0).sum()),
            "b_higher": int((diff > 0).sum()),
        })  # fmt: skip

    if others:
        agg = pairs.groupby(others, sort=True)[["a", "b", "diff"]].apply(summary).reset_index()
    else:
        agg = summary(pairs).to_frame().T
    agg = agg.astype({"pairs": "int64", "b_lower": "int64", "ties": "int64", "b_higher": "int64"})
    out = _with_ci(agg, level, "mean_diff", "std_diff", "pairs")
    cols = [*others, "pairs", "mean_a", "mean_b", "mean_diff", "std_diff", "half_width",
            "ci_low", "ci_high", "b_lower", "ties", "b_higher"]  # fmt: skip
    return out[cols].reset_index(drop=True)
