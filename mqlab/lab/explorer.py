"""The run explorer: pick a dataset, a metric and a grouping; Spark aggregates, the figure follows.

Mirrors no RocketMQ class: this is lesson 09's widget (issue 13, "explore, don't only read").
``RunExplorer(tables, fresh=...)`` shows three dropdowns (dataset, metric, group by), a figure
of the metric's mean per group with its 95 % confidence interval, and a button that runs a
small fresh sweep, one Spark job (or one pandas run batch) per seed, with a progress bar, and
adds its runs to the "fresh runs" dataset, which the dropdown then offers.

The aggregate is ``mqlab.experiments.aggregate.confidence_intervals``: on a Spark DataFrame it
is one Spark job, and its small result comes back as pandas; on pandas it is the same numbers.
The figure is re-rendered into an ``Output`` widget (a plain plotly figure, so it survives a
browser reload). Owns: the widgets and their callbacks. Must not know: how a sweep runs (it
gets a ``fresh`` callable) or what a dataset means.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from mqlab.experiments import aggregate as agg
from mqlab.experiments.schema import METRIC_COLUMNS
from mqlab.lab import figures

__all__ = ["RunExplorer", "FRESH", "numeric_metrics", "group_columns", "explorer_figure"]

#: The name the fresh runs are listed under in the dataset dropdown.
FRESH = "fresh runs (this session)"
_NUMERIC = {"int64", "float64"}
_SKIP = {"duration_ms", "trace_events"}


def numeric_metrics(table: Any) -> list[str]:
    """The numeric metric columns of a metrics table, in schema order."""
    cols = set(table.columns)
    return [n for n, t in METRIC_COLUMNS if t in _NUMERIC and n in cols and n not in _SKIP]


def group_columns(table: Any) -> list[str]:
    """What a metrics table can be grouped by: its grid parameters, then the seed."""
    return [*agg.param_columns(table), "seed"]


def explorer_figure(summary: pd.DataFrame, metric: str, by: str, dataset: str) -> go.Figure:
    """Bars: the mean of ``metric`` per value of ``by``, with the 95 % interval as error bars."""
    x = [str(v) for v in summary[by]]
    fig = go.Figure(go.Bar(
        x=x, y=summary["mean"], marker_color="#1f77b4", name=metric,
        error_y={"type": "data", "array": summary["half_width"].fillna(0)},
        customdata=summary["n"], hovertemplate=f"{by}=%{{x}}: mean %{{y:.4g}} "
                                               "over %{customdata} runs<extra></extra>",
    ))  # fmt: skip
    runs = int(summary["n"].sum()) if len(summary) else 0
    fig.update_layout(
        title=f"{metric} by {by}<br><sup>{dataset} ({runs} runs; mean, 95 % CI)</sup>",
        xaxis_title=by, yaxis_title=metric, height=380, margin={"b": 50},
    )  # fmt: skip
    fig.update_xaxes(type="category")
    means = [float(m) for m in summary["mean"] if pd.notna(m)]
    if means and min(means) > 0 and max(means) / min(means) > 30:
        # ~1 ms beside ~500 ms: on a linear axis the small bar is invisible
        fig.update_yaxes(type="log", dtick=1, title_text=f"{metric} (log scale)")
    return figures.house_style(fig)


class RunExplorer:
    """Dropdowns, a figure, and a fresh-sweep button over named metrics tables.

    Args:
        tables: dataset name → metrics table (Spark or pandas DataFrame), or a callable that
            loads it on first use.
        fresh: ``fresh(k) -> Iterator[(done, total, table)]``: the k-th fresh sweep, yielding
            after each step (its progress) with the table of all its runs so far; None hides
            the button.
        metric / by / dataset: the initial choice.
    """

    def __init__(self, tables: dict[str, Any], *, fresh: Callable[[int], Iterator] | None = None,
                 dataset: str | None = None, metric: str | None = None,
                 by: str | None = None) -> None:  # fmt: skip
        if not tables:
            raise ValueError("the explorer needs at least one dataset")
        self._tables: dict[str, Any] = dict(tables)
        self._fresh = fresh
        self._fresh_runs: Any = None
        self._sweeps = 0
        self._syncing = False
        W = widgets
        style = {"description_width": "initial"}
        first = dataset if dataset is not None else next(iter(self._tables))
        self.dataset = W.Dropdown(options=list(self._tables), value=first, description="dataset",
                                  style=style, layout=W.Layout(width="360px"))  # fmt: skip
        self.metric = W.Dropdown(description="metric", style=style,
                                 layout=W.Layout(width="300px"))  # fmt: skip
        self.by = W.Dropdown(description="group by", style=style, layout=W.Layout(width="260px"))
        self.figure = W.Output(layout=W.Layout(min_height="390px"))
        self.status = W.HTML()
        self.button = W.Button(description="run a small fresh sweep", icon="play",
                               layout=W.Layout(width="auto"))  # fmt: skip
        self.progress = W.IntProgress(value=0, min=0, max=1, description="sweep",
                                      style=style, layout=W.Layout(width="260px"))  # fmt: skip
        self.button.on_click(lambda _b: self.run_fresh())
        self._fill_choices(metric, by)
        self.dataset.observe(lambda _c: self._dataset_changed(), "value")
        self.metric.observe(lambda _c: self.redraw(), "value")
        self.by.observe(lambda _c: self.redraw(), "value")
        controls = [self.dataset, self.metric, self.by]
        row = {"flex_flow": "row wrap", "align_items": "center"}
        rows = [W.HBox(controls, layout=W.Layout(**row))]
        if fresh is not None:
            rows.append(W.HBox([self.button, self.progress, self.status],
                               layout=W.Layout(**row)))  # fmt: skip
        else:
            rows.append(self.status)
        self.widget = W.VBox([*rows, self.figure])
        self.summary: pd.DataFrame | None = None
        self.redraw()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # -- choices ------------------------------------------------------------------------------
    def table(self, name: str | None = None) -> Any:
        """The metrics table of ``name`` (default: the chosen dataset), loaded on first use."""
        name = name or self.dataset.value
        t = self._tables[name]
        if callable(t):
            t = self._tables[name] = t()
        return t

    def _fill_choices(self, metric: str | None = None, by: str | None = None) -> None:
        t = self.table()
        metrics, groups = numeric_metrics(t), group_columns(t)
        self._syncing = True
        try:
            keep_m = metric or (self.metric.value if self.metric.value in metrics else None)
            keep_b = by or (self.by.value if self.by.value in groups else None)
            self.metric.options = metrics
            self.metric.value = keep_m if keep_m in metrics else metrics[0]
            self.by.options = groups
            self.by.value = keep_b if keep_b in groups else groups[0]
        finally:
            self._syncing = False

    def _dataset_changed(self) -> None:
        self._fill_choices()
        self.redraw()

    # -- the aggregate and its figure -----------------------------------------------------------
    def redraw(self) -> None:
        """Aggregate the chosen metric per group (Spark when the table is Spark) and redraw."""
        if self._syncing:
            return
        metric, by, name = self.metric.value, self.by.value, self.dataset.value
        try:
            ci = agg.confidence_intervals(self.table(), metric, by)
        except Exception as e:  # noqa: BLE001 — a dropdown change must never raise
            self.status.value = f"<span style='color:#b00'>✗ {type(e).__name__}: {e}</span>"
            return
        self.summary = ci
        fig = explorer_figure(ci, metric, by, name)
        from IPython.display import display

        self.figure.clear_output(wait=True)
        with self.figure:
            display(fig)

    # -- a fresh sweep ------------------------------------------------------------------------
    def run_fresh(self) -> None:
        """Run the next fresh sweep, step by step on the progress bar, then show its runs."""
        if self._fresh is None:
            return
        self.button.disabled = True
        self._sweeps += 1
        try:
            table = None
            for done, total, runs in self._fresh(self._sweeps - 1):
                self.progress.max = max(total, 1)
                self.progress.value = done
                self.status.value = f"sweep {self._sweeps}: step {done}/{total}"
                table = runs
            if table is None:
                return
            self._fresh_runs = (
                table if self._fresh_runs is None else _union(self._fresh_runs, table)
            )
            self._tables[FRESH] = self._fresh_runs
            if FRESH not in self.dataset.options:
                self.dataset.options = [*self.dataset.options, FRESH]
            n = _count(self._fresh_runs)
            self.status.value = f"sweep {self._sweeps} done: {n} fresh runs in “{FRESH}”"
            if self.dataset.value != FRESH:
                self.dataset.value = FRESH  # redraws through the observer
            else:
                self._fill_choices()
                self.redraw()
        except Exception as e:  # noqa: BLE001 — a click must never raise into the notebook
            self.status.value = f"<span style='color:#b00'>✗ {type(e).__name__}: {e}</span>"
        finally:
            self.button.disabled = False


def _union(a: Any, b: Any) -> Any:
    if agg.is_spark(a):
        return a.unionByName(b)
    return pd.concat([a, b], ignore_index=True)


def _count(t: Any) -> int:
    return int(t.count()) if agg.is_spark(t) else len(t)
