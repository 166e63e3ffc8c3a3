"""Lesson 09's run explorer, headless on pandas (the Spark path: tests/experiments)."""

import pandas as pd

from mqlab.lab import explorer as E
from mqlab.lab.lessons import lesson09 as L


def test_metric_change_redraws_with_the_new_aggregate():
    """Pick a metric: the summary is confidence_intervals(table, metric, by), the figure's
    title and bars follow (60 runs of long_vs_short_polling: 30 per mode)."""
    e = L.explorer(None, 5)
    assert (e.dataset.value, e.metric.value, e.by.value) == (
        "long_vs_short_polling", "pulls_issued", "long_polling")  # fmt: skip
    assert e.summary["n"].tolist() == [30, 30]
    e.metric.value = "latency_p50_ms"
    want = L.polling_summary(L.load(None, "long_vs_short_polling"))
    got = e.summary.set_index("long_polling")["mean"]
    for mode in (True, False):
        lat = want[want["long_polling"] == mode]
        runs = L.load(None, "long_vs_short_polling")
        expect = runs[runs["long_polling"] == mode]["latency_p50_ms"].mean()
        assert abs(got[mode] - expect) < 1e-9 and not lat.empty
    fig = E.explorer_figure(e.summary, "latency_p50_ms", "long_polling", "long_vs_short_polling")
    assert fig.layout.title.text.startswith("latency_p50_ms by long_polling<br><sup>long_vs_short")
    assert fig.layout.yaxis.type == "log"  # 1 ms beside ~500 ms


def test_dataset_change_offers_its_own_columns():
    """Another dataset: its grid parameters become the groupings."""
    e = L.explorer(None, 5)
    e.dataset.value = "allocation_under_churn"
    assert e.by.options == ("strategy", "seed") and e.by.value == "strategy"
    assert e.summary["strategy"].tolist() == list(L.STRATEGIES)
    assert "queue_moves" in e.metric.options and "lost_allowed_by" not in e.metric.options


def test_fresh_sweep_adds_its_runs_to_the_comparison():
    """Each click runs fresh_sweep(seed + 2k) one seed per step (progress 1/2, 2/2) and adds
    its 4 runs to "fresh runs", which the dropdown shows."""
    e = L.explorer(None, 5)
    e.run_fresh()
    assert e.dataset.value == E.FRESH and (e.progress.value, e.progress.max) == (2, 2)
    assert e.summary["n"].tolist() == [2, 2]
    e.run_fresh()
    runs = e.table(E.FRESH)
    assert isinstance(runs, pd.DataFrame) and sorted(set(runs["seed"])) == [5, 6, 7, 8]
    assert e.summary["n"].tolist() == [4, 4]
    assert "8 fresh runs" in e.status.value


def test_lesson09_figures_are_readable():
    """Legend title says what it is; the latency panel is log-scaled; the flow figure's log
    axis ticks at the thresholds themselves."""
    f = L.polling_figure(L.polling_summary(L.load(None, "long_vs_short_polling")))
    assert f.layout.legend.title.text == "polling mode" and f.layout.yaxis2.type == "log"
    f = L.flow_figure(L.flow_summary(L.load(None, "flow_control_thresholds")))
    assert f.layout.xaxis.tickvals == (4.0, 16.0, 64.0, 256.0)
    assert f.layout.xaxis.ticktext == ("4", "16", "64", "256")
