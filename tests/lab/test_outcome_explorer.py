"""Lesson 11's outcome explorer, through the methods its buttons and dropdown call.

The search is ``consumer_join`` at its own bounds (depth 8, latencies 1/5 ms, sequential
runner), run once for the module; the exact table is pinned in tests/explore as well.
"""

from __future__ import annotations

import pytest

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario
from mqlab.explore.schedule import ScheduleError
from mqlab.explore.search import replay
from mqlab.lab.outcome_explorer import OutcomeExplorer, outcome_figure, replay_prefix

pytestmark = pytest.mark.slow

XS = get_scenario("consumer_join")
PLAIN = "dup:rebalance=1 overlap=1"
NO_OVERLAP = "dup:rebalance=1"
OK = "ok"
OK_SCHEDULE = "l1 d1 l1 l1 d2 l1"


@pytest.fixture(scope="module")
def result():
    return explore(XS, Bounds(depth=XS.depth))


@pytest.fixture
def ex(result):
    return OutcomeExplorer(result, XS, plot_mode="static")


def test_outcome_table_rows_are_a_line_of_text_high(ex):
    """Walk 4 of issue 28: the outcome table inherited the HTML widget's 28 px line height
    (rows 32 px apart with their padding); its lines are now 1.4 × 12 px, padded 1 px."""
    assert ex.table.value.startswith("<div style='font-size:12px;line-height:1.4'>")
    assert "<td style='padding:1px 10px'><code>d5 l1</code></td>" in ex.table.value


def test_table_and_bar_chart_show_every_class(result, ex):
    assert result.table() == [
        (NO_OVERLAP, 4, "d5 l1", 6),
        (PLAIN, 11, "(default)", 0),
        (OK, 2, OK_SCHEDULE, 7),
    ]
    assert ex.outcome.options == (NO_OVERLAP, PLAIN, OK) and ex.outcome.value is None
    assert "d5 l1" in ex.table.value and "76 runs, 97 states visited, 72 distinct" in ex.table.value
    fig = outcome_figure(result, NO_OVERLAP)
    assert list(fig.data[0].x) == [NO_OVERLAP, PLAIN, OK] and list(fig.data[0].y) == [4, 11, 2]
    assert list(fig.data[0].marker.color) == ["#1f4e79", "#6fa8dc", "#6fa8dc"]
    assert fig.layout.title.text == (
        "consumer_join: 3 outcome class(es), 76 runs"
        "<br><sup>bounds depth=8,faults=0,window=0,latencies=scenario,por=1; dark blue: the "
        "class selected</sup>"
    )  # the title names the selected bar's colour (figure check "legend", issue 28)


def test_selecting_a_class_replays_its_shortest_schedule(ex):
    ex.outcome.value = NO_OVERLAP  # what the dropdown does
    assert ex.selected == NO_OVERLAP and str(ex.schedule) == "d5 l1" and ex.step == 6
    assert ex.messages == [
        f"{NO_OVERLAP}: its shortest schedule d5 l1 replayed (6 choice point(s)) → {NO_OVERLAP}"
    ]
    assert ex.current.outcome == NO_OVERLAP == replay(XS, "d5 l1").outcome
    assert ex.schedule_text.value == "d5 l1"
    # the 6 choice points, each a frame's latency; only point 5 takes the 5 ms option
    pts = ex.current.points
    assert [(p.index, p.kind, p.chosen) for p in pts] == [(i, "l", int(i == 5)) for i in range(6)]
    assert pts[5].labels == ["consumer-2->broker-a 1 ms", "consumer-2->broker-a 5 ms"]
    assert "step 6 of 6" in ex.choices.value and "consumer-2-&gt;broker-a 5 ms" in ex.choices.value
    # the timeline and the inspector show the replayed run (it ends at t=5106)
    assert ex.current.lab.now == 5106 and len(ex.current.lab.trace.events) == 374
    assert "allocation" in ex.inspector.value
    # the timeline draws the 60 ms from when the search starts deciding (2000 + arm 10 - 2),
    # from the events before the lab closed (closing adds a stop per node)
    assert ex.current.events == 359
    assert ex.timeline.widget.outputs[0]["data"]["text/plain"] == (
        "Node by node, t=2008…2068"  # all of what is drawn: no "zoom out" (issue 28)
    )


def test_the_class_without_a_duplicate_takes_four_slow_frames(ex):
    assert ex.select(OK) and ex.step == 7 and ex.current.outcome == OK
    assert (
        ex.messages[-1]
        == f"ok: its shortest schedule {OK_SCHEDULE} replayed (7 choice point(s)) → ok"
    )
    picked = [(p.index, p.labels[p.chosen]) for p in ex.current.points if p.chosen]
    assert picked == [
        (0, "consumer-2->namesrv 5 ms"),
        (2, "consumer-2->namesrv 5 ms"),
        (3, "consumer-2->namesrv 5 ms"),
        (6, "consumer-2->broker-a 5 ms"),
    ]
    assert ex.diff() and ex.diff_frame.attrs["diverges_at"] == 265


def test_step_back_and_forth_replays_prefixes(ex):
    ex.select(NO_OVERLAP)
    assert ex.previous_choice() and ex.step == 5 and ex.current.outcome == PLAIN
    assert str(ex.current.schedule) == "(default)"
    assert ex.messages[-1] == f"step 5 of 6: the first 5 choice(s) of d5 l1 → {PLAIN}"
    assert ex.next_choice() and ex.step == 6 and ex.current.outcome == NO_OVERLAP
    assert not ex.next_choice()
    assert ex.messages[-1] == "⚠ already at the last choice (6) of d5 l1" and ex.step == 6
    assert ex.goto(0) and ex.current.outcome == PLAIN
    assert not ex.previous_choice() and ex.step == 0
    assert not ex.goto(7) and ex.messages[-1] == "⚠ step 7 is outside 0..6" and ex.step == 0


def test_diff_against_the_plain_run(ex):
    ex.select(NO_OVERLAP)
    assert ex.diff()
    d = ex.diff_frame
    assert d.attrs["diverges_at"] == 275 and d["seq"].tolist() == [
        272,
        273,
        274,
        275,
        276,
        277,
        278,
    ]
    assert d["same"].tolist() == [True, True, True, False, False, False, False]
    row = d.set_index("seq").loc[275]
    assert (row["a_t_ms"], row["a_node"], row["b_t_ms"], row["b_node"]) == (
        2021,
        "broker-a",
        2022,
        "consumer-1",
    )
    assert row["a_event"].startswith("ConsumerManageProcessor.getConsumerListByGroup ok")
    assert "the traces part at seq 275" in ex.diff_view.value
    ex.previous_choice()  # the first 5 choices are all defaults: the plain run itself
    assert ex.diff() and ex.diff_frame.attrs["diverges_at"] is None
    assert ex.messages[-1] == "(default): the same trace as the plain run"


def test_the_diff_tab_is_a_compact_table_like_the_inspector(ex):
    """Walk 4 of issue 28: the diff tab was pandas' ``to_html`` table in an HTML widget, whose
    28 px line height drew its rows 28 px apart, at the widget's 13 px. It is now drawn as the
    inspector's tables are: its CSS (11 px text, lines 1.4 high), columns sized to their text
    (every cell not marked cut fits), ``same`` as ✔/✘."""
    from test_inspector_widths import titles_that_do_not_fit, uncut_cells_that_do_not_fit

    ex.select(NO_OVERLAP)
    ex.diff()
    html = ex.diff_view.value
    assert 'class="dataframe"' not in html
    assert ".mqlab-insp{line-height:1.4}" in html and '<div class="mqlab-insp">' in html
    assert "<b>plain run (a) vs d5 l1 (b): the traces part at seq 275</b>" in html
    assert "<th>seq</th><th>same</th><th>a t ms</th><th>a node</th><th>a event</th>" in html
    assert "<tr><td>274</td><td>✔</td><td>2021</td>" in html
    assert "<tr><td>275</td><td>✘</td><td>2021</td><td>broker-a</td>" in html
    assert uncut_cells_that_do_not_fit(html) == [] and titles_that_do_not_fit(html) == []
    assert html.count("<td title=") == 12  # events past 40 digits' width: whole on hover


def test_nonsense_input_says_why_and_changes_nothing(ex):
    assert (
        not ex.diff()
        and ex.messages[-1] == "⚠ select an outcome class (or replay a schedule) first"
    )
    assert not ex.next_choice() and ex.current is None
    ex.select(NO_OVERLAP)
    assert not ex.select("lost=1")
    assert ex.messages[-1] == (
        "⚠ no outcome class 'lost=1' in this table; the classes are "
        "['dup:rebalance=1', 'dup:rebalance=1 overlap=1', 'ok']"
    )
    assert not ex.replay_schedule("x9")
    assert (
        ex.messages[-1] == "⚠ bad schedule token 'x9': expected o<i>, l<i>, L<i>, d<n> or F:<fault>"
    )
    assert not ex.replay_schedule("d5 l2")
    assert ex.messages[-1] == (
        "⚠ l2: latency choice out of range; the latency set has 2 values "
        "(l0 = 1 ms, l1 = 5 ms; l0 is the default)"
    )
    assert not ex.replay_schedule("d90 l1")
    assert ex.messages[-1].startswith("⚠ the run met ") and ex.messages[-1].endswith(
        "the schedule has 91 (d90 l1)"
    )
    assert "#b00" in ex.status.value
    # nothing changed: still the selected class at its last step
    assert (ex.selected, str(ex.schedule), ex.step, ex.current.outcome) == (
        NO_OVERLAP,
        "d5 l1",
        6,
        NO_OVERLAP,
    )


@pytest.mark.parametrize(
    ("schedule", "said"),
    [
        ("l9", "l9: latency choice out of range; the latency set has 2 values (l0 = 1 ms, "
               "l1 = 5 ms; l0 is the default)"),
        ("o5", "choice 0 is a latency point (options d0 l1: the frame's latency), not an order "
               "point: o5 picks among events due together, and none are here"),
        ("l1 o1", "choice 1 is a latency point (options d0 l1: the frame's latency), not an "
                  "order point: o1 picks among events due together, and none are here"),
        ("F:kill(broker-a)", "F:kill(broker-a): this scenario allows no faults (its search's "
                             "bounds say faults=0); a schedule here holds only o<i> (event "
                             "order), l<i> (latency), L<i> (a connection kept slow) and "
                             "d<n>"),
    ],
)  # fmt: skip
def test_a_bad_token_is_named_with_its_own_problem(ex, schedule, said):
    """Issue 28: choice 0 falls inside the scenario's consumer join, whose step wrapped every
    misfit as "fault 'join' at 10 ms: …", and a fault got no word that none is allowed."""
    assert not ex.replay_schedule(schedule)
    assert ex.messages[-1] == f"⚠ {said}"
    assert "fault 'join'" not in ex.messages[-1]


def test_a_bad_token_at_an_order_point_is_named_too():
    xs = get_scenario("consumer_join_at_persist")
    b = Bounds(depth=xs.depth)
    with pytest.raises(ScheduleError) as e:
        replay_prefix(xs, "l1", bounds=b)
    assert str(e.value) == (
        "choice 0 is an order point (options d0 o1: which of 2 event(s) due together runs "
        "first), not a latency point: l1 does not fit it"
    )
    with pytest.raises(ScheduleError) as e:
        replay_prefix(xs, "o5", bounds=b)
    assert str(e.value) == (
        "choice 0 is an order point with 2 event(s) due together (options d0 o1): o5 is out "
        "of range"
    )


def test_a_typed_schedule_replays(ex):
    assert ex.replay_schedule(" l1 ")
    assert (str(ex.schedule), ex.step, ex.current.outcome, ex.selected) == ("l1", 1, PLAIN, None)
    assert ex.messages[-1] == f"schedule l1 replayed → {PLAIN}"


def test_exported_from_mqlab_lab():
    from mqlab.lab import OutcomeExplorer as Exported

    assert Exported is OutcomeExplorer


def test_replay_prefix_and_scenario_mismatch(result):
    rep = replay_prefix(XS, "d5 l1", 5)
    assert str(rep.schedule) == "(default)" and rep.outcome == PLAIN
    assert [p.chosen for p in rep.points] == [0] * 6
    with pytest.raises(
        ValueError, match="the result is of scenario 'consumer_join', not 'orderly_join'"
    ):
        OutcomeExplorer(result, "orderly_join")


def test_the_selected_class_is_highlighted_in_table_and_bars(result, monkeypatch):
    """The row of the class being replayed is dark, as its bar; a live figure (a
    FigureWidget) recolours its bars in place, a typed schedule clears both."""
    monkeypatch.delenv("MQLAB_PLOT_MODE", raising=False)
    ex = OutcomeExplorer(result, XS, plot_mode="live")
    dark = "<tr style='background:#1f4e79;color:white'>"
    assert dark not in ex.table.value
    ex.outcome.value = OK
    assert ex.table.value.count(dark) == 1
    assert ex.table.value.split(dark)[1].startswith(f"<td style='padding:1px 10px'><code>{OK}")
    assert ex.timeline.mode == "live"  # anywidget is a dependency (pyproject.toml)
    assert list(ex.fig.data[0].marker.color) == ["#6fa8dc", "#6fa8dc", "#1f4e79"]
    ex.replay_schedule("d5 l1")
    assert dark not in ex.table.value
    assert list(ex.fig.data[0].marker.color) == ["#6fa8dc"] * 3
