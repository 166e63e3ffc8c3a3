"""The figure check (issue 28): each rule rejects a bad figure, and every figure the lessons and
their panels draw passes all six rules.

Before the fixes of issue 28 the lesson run failed on: translucent-overlap (lesson 00's three
timelines and its panel's, 04's two histograms, 07's retry timeline, 10's transaction
timeline, 11's two explorer timelines), integer-ticks (every time axis; 04's counts; 08's
offsets and lag; 09's churn, crash and explorer figures; 11's bar charts), title (00's and
11's panel timelines and 11's second bar chart under the modebar; 03's step ladder too wide;
09's explorer under the modebar), legend (06's two flow-control figures and 08's offsets:
a legend title with no legend; 09's churn colours, crash lines and flow lines; 11's selected
bar) and hidden-trace (08's committed line on its max offset line; 09's 20 seed lines on 5).
"""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from lesson_figures import STEMS, lesson_figures

from mqlab.lab import figures as F
from mqlab.lab.figure_check import RULES, check_figure, hue_names, title_box


def rules_broken(fig) -> list[str]:
    return sorted({p.rule for p in check_figure(fig)})


def styled(fig: go.Figure) -> go.Figure:
    return F.house_style(fig)


# -- each rule can fail ----------------------------------------------------------------------
def test_legend_rule_rejects_an_unexplained_colour():
    """Two colours and no legend (one trace per colour, legend hidden): rejected; the same
    with the legend shown, or with the title naming both hues, passes."""
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2], marker_color=["#d62728", "#2ca02c"]))
    fig.update_layout(title="Two bars")
    assert [p.detail for p in check_figure(fig, rules=("legend",))] == [
        "trace 0 (bar) draws #2ca02c, which no legend entry or caption explains",
        "trace 0 (bar) draws #d62728, which no legend entry or caption explains",
    ]
    fig.update_layout(title="Two bars: red failed, green passed")
    assert check_figure(fig, rules=("legend",)) == []


def test_legend_rule_rejects_a_titled_legend_that_is_hidden():
    """One trace with a legend title: plotly hides the legend, so its colour is unexplained."""
    fig = go.Figure(go.Bar(x=[1], y=[2], marker_color="#d62728", name="count"))
    fig.update_layout(legend_title="flow control by")
    assert rules_broken(fig) == ["integer-ticks", "legend"]
    fig.update_layout(showlegend=True)
    assert "legend" not in rules_broken(fig)


def test_legend_rule_rejects_an_empty_heatmap_cell():
    """Walk of issue 28: lesson 00's allocation heatmap left the queue nobody held empty
    (None), drawn in the background's colour, which no legend entry explains; a category of
    its own passes, and so does a caption that says what empty means."""
    scale = [[0, "#636efa"], [0.5, "#636efa"], [0.5, "#ef553b"], [1, "#ef553b"]]
    fig = go.Figure(go.Heatmap(z=[[0, 1], [None, 0]], zmin=-0.5, zmax=1.5, colorscale=scale,
                               showscale=False, name="allocation"))  # fmt: skip
    fig.update_layout(title="Who holds each queue: blue c1, red c2")
    assert [p.detail for p in check_figure(fig, rules=("legend",))] == [
        "trace 0 (allocation) leaves 1 of 4 cells empty: they show the background, which no "
        "legend entry or caption explains"
    ]
    fig.update_layout(title="Who holds each queue: blue c1, red c2, empty nobody")
    assert check_figure(fig, rules=("legend",)) == []
    fig.update_layout(title="Who holds each queue: blue c1, red c2")
    fig.update_traces(z=[[0, 1], [1, 0]])
    assert check_figure(fig, rules=("legend",)) == []


def test_overlap_rule_rejects_translucent_bars_over_each_other():
    """Two translucent horizontal bars on one lane over the same time: rejected; side by side
    in the lane (offsets), or opaque histograms grouped, pass."""
    fig = go.Figure([
        go.Bar(orientation="h", y=["b"], base=[0], x=[10], opacity=0.35, name="message"),
        go.Bar(orientation="h", y=["b"], base=[5], x=[10], opacity=0.35, name="timeout"),
    ])  # fmt: skip
    fig.update_layout(barmode="overlay")
    assert [p.detail for p in check_figure(fig, rules=("translucent-overlap",))] == [
        "bars of trace 0 (message) and trace 1 (timeout) overlap at -0.4..0.4 × 5..10 with "
        "opacity < 1"
    ]
    fig.update_traces(width=0.3, selector=0, offset=0)
    fig.update_traces(width=0.3, selector=1, offset=-0.3)
    assert check_figure(fig, rules=("translucent-overlap",)) == []
    bins = {"start": 0, "end": 20, "size": 10}
    hist = go.Figure([go.Histogram(x=[1, 2], xbins=bins, opacity=0.75),
                      go.Histogram(x=[3], xbins=bins, opacity=0.75)])  # fmt: skip
    hist.update_layout(barmode="overlay")
    assert rules_broken(hist) == ["integer-ticks", "translucent-overlap"]
    hist.update_layout(barmode="group")
    assert "translucent-overlap" not in rules_broken(hist)


def test_integer_rule_rejects_fractional_and_si_ticks():
    """Whole-number data with plotly's automatic ticks: rejected (0.5 steps on a 0..3 axis);
    a dtick of 1 passes; values past 10 000 also need tickformat "d" (not "10.02k")."""
    fig = go.Figure(go.Scatter(x=[0, 1, 2, 3], y=[1, 2, 2, 3]))
    assert [p.detail for p in check_figure(fig, rules=("integer-ticks",))] == [
        "xaxis draws whole numbers only but its ticks may be fractional (dtick None)",
        "yaxis draws whole numbers only but its ticks may be fractional (dtick None)",
    ]
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(dtick=1)
    assert check_figure(fig, rules=("integer-ticks",)) == []
    big = go.Figure(go.Scatter(x=[10_000, 10_040], y=[1.5, 2.5]))
    big.update_xaxes(dtick=10)
    assert [p.detail for p in check_figure(big, rules=("integer-ticks",))] == [
        "xaxis reaches 10040: plotly writes such ticks as '10.02k' unless tickformat is 'd'"
    ]
    big.update_xaxes(tickformat="d")
    assert check_figure(big, rules=("integer-ticks",)) == []


def test_title_rule_rejects_a_title_under_the_modebar_or_too_wide():
    """A 40 px top margin puts a long title in the modebar's band; a 110-character title does
    not fit 800 px; house_style places both below the modebar (the wide one still too wide)."""
    fig = go.Figure(go.Scatter(x=[0.5], y=[0.5]))
    fig.update_layout(title="Node by node, t=10000…10060 (zoom out: the last 60 ms are drawn)",
                      margin={"t": 40})  # fmt: skip
    assert [p.detail for p in check_figure(fig, rules=("title",))] == [
        "the title (top 7 px, right 631 px) runs under the modebar"
    ]
    styled(fig)
    assert title_box(fig)["top"] == F.TITLE_TOP_PX and check_figure(fig) == []
    wide = go.Figure(go.Scatter(x=[0.5], y=[0.5]))
    wide.update_layout(title="x" * 110)
    styled(wide)
    assert [p.detail for p in check_figure(wide)] == [
        "the title is ~1016 px wide from x=16: it does not fit 800 px"
    ]


def test_hidden_rule_rejects_a_line_wholly_on_another():
    """A line drawn under a later solid one on the same path is hidden; one of the same
    colour on another's path cannot be told from it; a wide pale band under a dashed line
    of the same colour passes."""
    under = go.Figure([go.Scatter(x=[0, 1], y=[0.5, 1.5], mode="lines", name="a"),
                       go.Scatter(x=[0, 1], y=[0.5, 1.5], mode="lines", name="b")])  # fmt: skip
    assert [p.detail for p in check_figure(under, rules=("hidden-trace",))] == [
        "trace 0 (a) lies wholly on trace 1 (b) and is covered by it"
    ]
    same = go.Figure([
        go.Scatter(x=[0, 5, 9], y=[1.5, 2.5, 2.5], mode="lines", line={"dash": "dash",
                   "color": "#636efa", "shape": "hv"}, name="max"),
        go.Scatter(x=[5, 9], y=[2.5, 2.5], mode="lines", line={"color": "#636efa"},
                   name="committed"),
    ])  # fmt: skip
    assert [p.detail for p in check_figure(same, rules=("hidden-trace",))] == [
        "trace 1 (committed) lies wholly on trace 0 (max) and has the colour of it"
    ]
    band = go.Figure([
        go.Scatter(x=[5, 9], y=[2.5, 2.5], mode="lines", opacity=0.35, name="committed",
                   line={"color": "#636efa", "width": 7}),
        go.Scatter(x=[0, 5, 9], y=[1.5, 2.5, 2.5], mode="lines", name="max",
                   line={"dash": "dash", "color": "#636efa", "shape": "hv"}),
    ])  # fmt: skip
    assert check_figure(band, rules=("hidden-trace",)) == []


def test_hidden_rule_rejects_markers_wholly_under_others():
    """Markers drawn under a later filled marker at least as big, at the same points, are
    hidden (lesson 12's trade-off figure drew its ASYNC_FLUSH circles under the SYNC_FLUSH
    diamonds, and a p99 ring of 2.02 ms on the same-coloured p50 dot of 2.0 ms); a bigger
    ring around a dot passes, and so do markers with a point of their own."""
    red = {"color": "#d62728", "size": 11}
    under = go.Figure([
        go.Scatter(x=[15, 30], y=[2.0, 2.0], mode="markers", name="async", marker=red),
        go.Scatter(x=[15, 30], y=[2.0, 2.0], mode="markers", name="sync",
                   marker={**red, "symbol": "diamond"}),
    ])  # fmt: skip
    assert [p.detail for p in check_figure(under, rules=("hidden-trace",))] == [
        "trace 0 (async) lies wholly on trace 1 (sync) and is covered by it"
    ]
    ring = go.Figure([
        go.Scatter(x=[30, 0], y=[2.0, 0.0], mode="markers", name="p50", marker=red),
        go.Scatter(x=[30, 0], y=[2.02, 12.0], mode="markers", name="p99",
                   marker={**red, "symbol": "circle-open"}),
    ])  # fmt: skip
    assert check_figure(ring, rules=("hidden-trace",)) == []  # 12.0 is a point of its own
    ring.data[1].y = (2.02, 0.0)
    assert [p.detail for p in check_figure(ring, rules=("hidden-trace",))] == [
        "trace 1 (p99) lies wholly on trace 0 (p50) and has the colour of it"
    ]
    ring.data[1].marker.size = 17  # a ring around the dot
    assert check_figure(ring, rules=("hidden-trace",)) == []


def test_clipped_rule_rejects_markers_on_the_edge_of_a_fixed_range():
    """Walk of issue 28: lesson 03's timeline fixed its x range to its events' span, 8..11 ms,
    and drew the events at 8 and 11 ms as half dots; a point outside the range (a zoomed
    window, whose edges may cut a point: the panel's timeline), markers drawn unclipped,
    and a range plotly chooses itself pass."""
    fig = go.Figure([go.Scatter(x=[8, 9, 11], y=["a", "b", "a"], mode="markers", name="step")])
    fig.update_xaxes(range=[8, 11])
    assert [p.detail for p in check_figure(fig, rules=("clipped-marker",))] == [
        "trace 0 (step) has markers at x = [8.0, 11.0] on the edge of its xaxis range [8, 11]"
    ]
    fig.update_xaxes(range=[7, 12])
    assert check_figure(fig, rules=("clipped-marker",)) == []
    fig.update_xaxes(range=[8, 10])  # 11 lies outside: a zoomed window
    assert check_figure(fig, rules=("clipped-marker",)) == []
    fig.update_xaxes(range=[8, 11])
    fig.data[0].cliponaxis = False
    assert check_figure(fig, rules=("clipped-marker",)) == []
    assert check_figure(go.Figure(fig.data), rules=("clipped-marker",)) == []  # no range set


def test_check_figure_bad_input():
    """A non-figure is a TypeError, an unknown rule a ValueError naming the rules."""
    with pytest.raises(TypeError, match="plotly figure"):
        check_figure("fig")
    with pytest.raises(ValueError, match="unknown rules \\['colour'\\]"):
        check_figure(go.Figure(), rules=("colour",))
    assert RULES == ("legend", "translucent-overlap", "integer-ticks", "title", "hidden-trace",
                     "clipped-marker")  # fmt: skip


def test_hue_names():
    """The words a caption may use for the lab's colours."""
    assert hue_names("#2ca02c") == {"green"}
    assert hue_names("#d62728") == {"red"}
    assert hue_names("#8c564b") == {"red", "brown"}
    assert hue_names("#ff7f0e") == {"orange"}
    assert hue_names("#dddddd") == {"grey", "gray"}
    assert hue_names("#1f4e79") == hue_names("#6fa8dc") == {"blue"}


# -- the house style and the helpers the fixes use -----------------------------------------------
def test_integer_ticks_steps():
    """1, 2 or 5 × 10^k, at least 1, about 8 ticks; written as whole numbers."""
    assert F.integer_ticks(8, 10)["dtick"] == 1
    assert F.integer_ticks(0, 60)["dtick"] == 10
    assert F.integer_ticks(10_000, 10_060) == {"tickmode": "linear", "tick0": 0, "dtick": 10,
                                              "tickformat": "d"}  # fmt: skip


def test_parked_pull_slots_give_overlapping_pulls_rows_of_their_own():
    """Three pulls parked together on broker-a get three rows of a 0.6 band, top first; a
    later one reuses the first free row; another lane is independent."""
    bars = [("broker-a", 0, 10), ("broker-a", 2, 10), ("broker-a", 3, 8), ("broker-a", 8, 9),
            ("broker-b", 0, 10)]  # fmt: skip
    got = [(round(o, 3), round(w, 3)) for o, w in F.parked_pull_slots(bars)]
    assert got == [(0.1, 0.18), (-0.1, 0.18), (-0.3, 0.18), (-0.3, 0.18), (-0.3, 0.54)]


def test_byte_map_labels_of_small_fields_go_outside():
    """In a 137-byte entry a 1–4 byte field's label is outside its bar, an 8-byte one inside."""
    assert F.byte_label_positions([4, 8, 1, 32], 137) == ["outside", "inside", "outside",
                                                          "inside"]  # fmt: skip


# -- every lesson figure passes ------------------------------------------------------------------
@pytest.mark.parametrize("stem", STEMS)
def test_every_lesson_figure_passes_the_check(stem, monkeypatch):
    """Run the lesson as Run All does, drive its panel or explorer: every figure passes."""
    figs = lesson_figures(stem, monkeypatch)
    assert figs, f"{stem} draws no figure"
    problems = [str(p) for name, fig in figs for p in check_figure(fig, name)]
    assert problems == []
