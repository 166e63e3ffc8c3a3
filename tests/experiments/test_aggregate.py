"""Aggregation helpers on pandas frames with hand-computed answers (mqlab.experiments.aggregate)."""

import math

import pandas as pd
import pytest

from mqlab.experiments.aggregate import (
    confidence_intervals,
    distribution,
    paired_comparison,
    paired_differences,
    param_columns,
    t_quantile,
)


@pytest.fixture
def metrics():
    """Two modes × seeds 0..2 of pulls_issued (a: 10, 12, 14; b: 100, 130, 160)."""
    return pd.DataFrame({
        "run_id": [f"s-p00{i // 3}-s{i % 3}" for i in range(6)], "sweep": "s",
        "point": ["p000"] * 3 + ["p001"] * 3, "seed": [0, 1, 2] * 2, "params": "{}",
        "mode": ["a"] * 3 + ["b"] * 3, "pulls_issued": [10, 12, 14, 100, 130, 160],
    })  # fmt: skip


@pytest.mark.parametrize(("dof", "want", "tol"), [
    (1, 12.7062, 1e-4), (2, 4.3027, 1e-4), (3, 3.1824, 4e-3), (9, 2.2622, 1e-3),
    (19, 2.0930, 1e-3), (1000, 1.9623, 1e-3),
])  # fmt: skip
def test_t_quantile_matches_the_t_table(dof, want, tol):
    """95 % two-sided Student-t critical values from the usual table."""
    assert t_quantile(0.95, dof) == pytest.approx(want, abs=tol)


def test_t_quantile_edge_cases():
    """0 degrees of freedom has no interval; a level outside (0, 1) is refused."""
    assert math.isnan(t_quantile(0.95, 0))
    with pytest.raises(ValueError, match="level must be between 0 and 1"):
        t_quantile(1.5, 3)


def test_param_columns_are_the_non_fixed_ones(metrics):
    """Only the grid column remains after ids and metrics are set aside."""
    assert param_columns(metrics) == ["mode"]


def test_distribution_per_mode(metrics):
    """a: n 3, mean 12, std 2, p05 10.2, p50 12, p95 13.8 (linear interpolation)."""
    d = distribution(metrics, "pulls_issued", "mode").set_index("mode")
    assert d.loc["a"].to_dict() == pytest.approx(
        {"n": 3, "mean": 12, "std": 2, "min": 10, "p05": 10.2, "p50": 12, "p95": 13.8, "max": 14}
    )
    assert d.loc["b", "mean"] == 130 and d["n"].dtype == "int64"


def test_confidence_interval_of_the_mean(metrics):
    """mean ± t(0.95, 2) · s / √n = 12 ± 4.3027 · 2 / √3."""
    ci = confidence_intervals(metrics, "pulls_issued", "mode").set_index("mode")
    half = t_quantile(0.95, 2) * 2 / math.sqrt(3)
    assert ci.loc["a", "half_width"] == pytest.approx(half)
    assert (ci.loc["a", "ci_low"], ci.loc["a", "ci_high"]) == pytest.approx((12 - half, 12 + half))


def test_confidence_intervals_of_several_metrics(metrics):
    """A list of metrics gives one stacked frame with a leading metric column."""
    two = metrics.assign(lost=[0, 0, 0, 1, 1, 4])
    ci = confidence_intervals(two, ["pulls_issued", "lost"], "mode")
    assert ci[["metric", "mode", "n", "mean"]].values.tolist() == [
        ["lost", "a", 3, 0.0], ["lost", "b", 3, 2.0],
        ["pulls_issued", "a", 3, 12.0], ["pulls_issued", "b", 3, 130.0]]  # fmt: skip


def test_paired_comparison_on_the_same_seeds(metrics):
    """b − a per seed: 90, 118, 146 → mean 118, std 28, b higher on all 3 seeds."""
    pairs = paired_differences(metrics, "mode", "a", "b", "pulls_issued")
    assert pairs[["seed", "a", "b", "diff"]].values.tolist() == [
        [0, 10, 100, 90], [1, 12, 130, 118], [2, 14, 160, 146]]  # fmt: skip
    c = paired_comparison(metrics, "mode", "a", "b", "pulls_issued").iloc[0]
    assert (c["pairs"], c["mean_diff"], c["std_diff"]) == (3, 118, 28)
    assert (c["b_lower"], c["ties"], c["b_higher"]) == (0, 0, 3)
    assert c["half_width"] == pytest.approx(t_quantile(0.95, 2) * 28 / math.sqrt(3))


def test_paired_comparison_groups_by_the_other_parameters(metrics):
    """With a second parameter, pairs form within each of its values."""
    two = pd.concat(
        [metrics.assign(rate=1), metrics.assign(rate=5, pulls_issued=lambda d: d.pulls_issued * 2)]
    )
    c = paired_comparison(two, "mode", "a", "b", "pulls_issued")
    assert c[["rate", "pairs", "mean_diff"]].values.tolist() == [[1, 3, 118], [5, 3, 236]]
