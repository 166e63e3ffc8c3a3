"""Figures: the tidy frames behind each plotly figure, the figures' traces, and export."""

import importlib.util
import math

import pandas as pd
import plotly.graph_objects as go
import pytest

from mqlab import Lab
from mqlab.lab import figures as F
from mqlab.trace.events import TraceEvent

SEND = {"a": "PG", "b": "TopicTest", "c": "TBW102", "d": 4, "e": 0, "f": 0, "g": 0, "h": 0}
PULL = {
    "consumerGroup": "CG", "topic": "TopicTest", "queueId": 1, "queueOffset": 0,
    "maxMsgNums": 32, "sysFlag": 6, "commitOffset": 0, "suspendTimeoutMillis": 15000,
    "subscription": "*", "subVersion": 0,
}  # fmt: skip
NA = pd.NA


def send(lab, body=b"x", queue_id=0):
    return lab.request(
        "broker-a", "SEND_MESSAGE_V2", {**SEND, "e": queue_id, "i": "TAGS\x01TagA"}, body
    )


def mq(queue_id, topic="TopicTest"):
    return f"MessageQueue [topic={topic}, brokerName=broker-a, queueId={queue_id}]"


class Events:
    """Synthetic trace events with increasing seq (client-side event shapes)."""

    def __init__(self):
        self.events = []

    def add(self, t_ms, node, component, step, kind="step", **fields):
        self.events.append(
            TraceEvent("synthetic", t_ms, len(self.events), node, component, step, kind, fields)
        )


@pytest.fixture(scope="module")
def long_poll_lab():
    """Two parked pulls: TopicTest@1 times out, TopicTest@2 is woken by a message at t=3008."""
    lab = Lab(seed=1, trace_level="frames")
    send(lab)  # queue 0, t=3
    calls = [lab.request("broker-a", "PULL_MESSAGE", {**PULL, "queueId": q}) for q in (1, 2)]
    lab.advance(3000)
    send(lab, queue_id=2)  # wakes the pull parked on queue 2
    lab.advance(20_000)
    assert [c.code for c in calls] == [19, 0]  # PULL_NOT_FOUND, SUCCESS
    yield lab
    lab.close()


# -- long polling ----------------------------------------------------------------------------
def test_long_poll_wait_frame_timeout_and_message(long_poll_lab):
    """mechanisms.md "Long polling" steps 3–4: a pull parked at t=6 times out at the t=20000 check (wait 19994 ms);
    one parked at t=7 is woken by the message stored at t=3008 (wait 3001 ms)."""
    df = F.long_poll_wait_histogram_frame(long_poll_lab)
    cols = ["key", "queue_id", "offset", "suspend_t_ms", "timeout_millis", "deadline",
            "answer_t_ms", "wait_ms", "reason"]  # fmt: skip
    assert df[cols].values.tolist() == [
        ["TopicTest@1", 1, 0, 6, 15000, 15006, 20000, 19994, "timeout"],
        ["TopicTest@2", 2, 0, 7, 15000, 15007, 3008, 3001, "message"],
    ]
    step4 = long_poll_lab.trace.select(component="PullRequestHoldService.notifyMessageArriving",
                                       step="4")  # fmt: skip
    assert [e.fields["suspended_ms"] for e in step4] == [19994]


def test_long_poll_wait_frame_reads_an_events_frame(long_poll_lab):
    """lab.events() (fields as JSON text) gives the same frame as the lab itself."""
    a = F.long_poll_wait_histogram_frame(long_poll_lab)
    b = F.long_poll_wait_histogram_frame(long_poll_lab.events())
    c = F.long_poll_wait_histogram_frame(long_poll_lab.trace.to_pandas())
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_long_poll_dropped_and_unanswered_pulls():
    """A stopped broker's parked pulls are "dropped" at the stop; a channelClosed "drop" event
    drops one; a pull with no answer at the end of the trace is "unanswered"."""
    ev = Events()
    hold = "PullRequestHoldService"

    def suspend(t, offset):
        ev.add(t, "broker-a", hold + ".suspendPullRequest", "suspend", key="T@0", offset=offset,
               timeout_millis=15000, deadline=t + 15000)  # fmt: skip

    suspend(10, 3)
    ev.add(50, "broker-a", "SimDriver", "kill", "fault")
    suspend(60, 3)
    suspend(70, 4)
    suspend(80, 5)
    ev.add(100, "broker-a", hold + ".notifyMessageArriving", "3", key="T@0", offset=3, match=False)
    ev.add(900, "broker-a", hold + ".channelClosed", "drop", key="T@0", offset=4)
    ev.add(15060, "broker-a", hold + ".notifyMessageArriving", "4", key="T@0", offset=3)
    df = F.long_poll_wait_histogram_frame(ev.events)
    cols = ["suspend_t_ms", "offset", "answer_t_ms", "wait_ms", "end_t_ms", "reason"]
    assert df[cols].values.tolist() == [
        [10, 3, NA, NA, 50, "dropped"],
        [60, 3, 15060, 15000, 15060, "timeout"],
        [70, 4, NA, NA, 900, "dropped"],
        [80, 5, NA, NA, NA, "unanswered"],
    ]
    fig = F.sequence_timeline(ev.events)
    bars = {t.name: (list(t.base), list(t.x)) for t in fig.data if t.type == "bar"}
    assert bars == {
        "parked pull (timeout)": ([60], [15000]),
        "parked pull (dropped)": ([10, 70], [40, 830]),
        "parked pull (unanswered)": ([80], [15060 - 80]),  # to the end of the trace
    }
    assert [t.name for t in F.long_poll_wait_histogram(ev.events).data] == ["the suspend timed out"]


def test_long_poll_wait_histogram_traces(long_poll_lab):
    """One histogram per answer reason: woken by a message, timed out."""
    fig = F.long_poll_wait_histogram(long_poll_lab)
    assert isinstance(fig, go.Figure)
    assert [(t.type, t.name, list(t.x)) for t in fig.data] == [
        ("histogram", "a message arrived", [3001]),
        ("histogram", "the suspend timed out", [19994]),
    ]
    assert fig.layout.xaxis.title.text == "wait = answer time − suspend time (ms)"
    # a Lab says its mode; both reasons share bins: waits 3001..19994 → 1000 ms bins from 3000
    assert fig.layout.title.text == "Long polling: how long each parked pull waited"
    assert [(t.xbins.start, t.xbins.end, t.xbins.size) for t in fig.data] == [
        (3000, 20000, 1000)
    ] * 2
    assert F.long_poll_wait_histogram(long_poll_lab.events()).layout.title.text == (
        "Parked pulls: how long each parked pull waited"
    )
    assert F.long_poll_wait_histogram(long_poll_lab, title="T").layout.title.text == "T"


def test_short_polling_histogram_title_and_visible_timeout_bar():
    """longPollingEnable=false: the title says short polling, and the pile of equal timeout
    waits (one shortPollingTimeMills check) gets a bin 1/50 of the longest wait wide, not a
    hairline."""
    from mqlab.lab.lessons import lesson04 as L4

    lab = L4.polling_lab(5, long_polling=False)
    fig = F.long_poll_wait_histogram(lab)
    assert fig.layout.title.text == "Short polling: how long each parked pull waited"
    timeouts = next(t for t in fig.data if t.name == "the suspend timed out")
    assert timeouts.xbins.size >= max(timeouts.x) / 50
    assert F._nice_step(37) == 50 and F._nice_step(1000) == 1000 and F._nice_step(1001) == 2000


# -- sequence timeline -------------------------------------------------------------------------
def test_sequence_timeline_frame_one_row_per_event(long_poll_lab):
    """Every trace event is one row, with its text (the trace event fields of docs/design.md §3)."""
    df = F.sequence_timeline_frame(long_poll_lab)
    assert len(df) == len(long_poll_lab.trace)
    suspend = df[df["component"] == "PullRequestHoldService.suspendPullRequest"]
    assert suspend[["t_ms", "node", "step", "kind", "text"]].values.tolist() == [
        [6, "broker-a", "suspend", "step", "pull held: TopicTest@1 offset 0, suspended 15000 ms"],
        [7, "broker-a", "suspend", "step", "pull held: TopicTest@2 offset 0, suspended 15000 ms"],
    ]


def test_request_arrows_pair_send_and_recv(long_poll_lab):
    """FRAMES level: each frame's send pairs with its recv, 1 ms later (default link latency)."""
    df = F.request_arrows_frame(long_poll_lab)
    assert df["delivered"].all() and set(df["latency_ms"]) == {1}
    pulls = df[df["code"] == "PULL_MESSAGE"]
    assert pulls[["src", "dst", "opaque", "t_send", "t_recv", "bytes"]].values.tolist() == [
        ["raw-client", "broker-a", 2, 5, 6, 309],
        ["raw-client", "broker-a", 3, 6, 7, 309],
    ]
    answers = df[(df["dst"] == "raw-client") & df["opaque"].isin([2, 3])]
    assert answers[["code", "opaque", "t_send"]].values.tolist() == [
        ["SUCCESS", 3, 3008],  # the woken pull, answered at once
        ["PULL_NOT_FOUND", 2, 20000],  # the parked pull, answered by the hold-service check
    ]


def test_sequence_timeline_traces(long_poll_lab):
    """Bars for parked pulls, arrows for requests and responses, markers per event kind."""
    fig = F.sequence_timeline(long_poll_lab)
    assert [t.name for t in fig.data] == [
        "parked pull (message)", "parked pull (timeout)", "request", "response",
        "step event", "timer event", "state event",
    ]  # fmt: skip
    bars = {t.name: (list(t.base), list(t.x)) for t in fig.data if t.type == "bar"}
    assert bars == {"parked pull (message)": ([7], [3001]), "parked pull (timeout)": ([6], [19994])}
    # no window: the events' span, and 2 % each side (an event on the edge was half a dot)
    assert list(fig.layout.xaxis.range) == [-401, 20001 + 401]
    assert list(fig.layout.yaxis.categoryarray) == ["raw-client", "broker-a", "namesrv"]
    assert len(fig.layout.shapes) == 0  # no faults


def test_sequence_timeline_window_and_lanes(long_poll_lab):
    """A time window and a lane list keep only those events."""
    fig = F.sequence_timeline(long_poll_lab, nodes=["broker-a"], start_ms=3000, end_ms=3008)
    steps = next(t for t in fig.data if t.name == "step event")
    assert set(steps.y) == {"broker-a"} and min(steps.x) >= 3000 and max(steps.x) <= 3008
    assert "request" not in [t.name for t in fig.data]  # raw-client lane not shown


def test_sequence_timeline_axis_is_the_requested_window(long_poll_lab):
    """A zoom is a zoom: the x axis is [start_ms, end_ms] (with 2 %, at least 1 ms, each side,
    so that an event on its edge is drawn whole: issue 28's walk) and parked-pull bars are
    clipped to [start_ms, end_ms].

    Before, the bars of pulls parked at t=6 and t=7 (answered at 20000 and 3008) stretched a
    3000–3008 window to 6–20000 (issue 20, "Zoom figures are not zoomed")."""
    fig = F.sequence_timeline(long_poll_lab, start_ms=3000, end_ms=3008)
    assert list(fig.layout.xaxis.range) == [2999, 3009]
    bars = {t.name: (list(t.base), list(t.x)) for t in fig.data if t.type == "bar"}
    assert bars == {"parked pull (message)": ([3000], [8]), "parked pull (timeout)": ([3000], [8])}
    # only a start: up to the last event in the trace; only an end: from the first event
    last = int(long_poll_lab.events()["t_ms"].max())
    pad = math.ceil(0.02 * (last - 3005))
    assert list(F.sequence_timeline(long_poll_lab, start_ms=3005).layout.xaxis.range) == [
        3005 - pad, last + pad,
    ]  # fmt: skip
    assert list(F.sequence_timeline(long_poll_lab, end_ms=10).layout.xaxis.range) == [-1, 11]
    hover = next(t for t in fig.data if t.name == "parked pull (timeout)").hovertext[0]
    assert "suspended t=6" in hover and "t=20000 after 19994 ms" in hover  # the true times


def test_sequence_timeline_marks_a_kill_and_the_lost_frame():
    """A kill is a fault (red marker + line); the frame it stranded is not delivered."""
    lab = Lab(seed=3, trace_level="frames")
    send_fields = {**SEND, "i": "TAGS\x01TagA"}
    call = lab.request("broker-a", "SEND_MESSAGE_V2", send_fields, b"x", run=False)
    lab.kill("broker-a")
    lab.run_until_idle()
    assert call.code is None
    arrows = F.request_arrows_frame(lab)
    assert arrows.iloc[-1][["code", "t_send", "delivered"]].tolist() == [
        "SEND_MESSAGE_V2", 2, False,
    ]  # fmt: skip
    assert arrows["t_recv"].isna().tolist() == [False, False, True]
    fig = F.sequence_timeline(lab)
    fault = next(t for t in fig.data if t.name == "fault event")
    assert (list(fault.x), list(fault.y), fault.marker.color) == ([2], ["broker-a"], "#d62728")
    assert [s.x0 for s in fig.layout.shapes] == [2]
    lab.close()


def test_bad_source_is_a_type_error():
    """Misuse names the argument (docs/design.md §6.10)."""
    with pytest.raises(TypeError, match="source must be a Lab"):
        F.sequence_timeline_frame(42)
    with pytest.raises(TypeError, match="not TraceEvent"):
        F.sequence_timeline_frame([1, 2])


# -- offsets -------------------------------------------------------------------------------------
def test_offsets_over_time_frame_commits_and_lag():
    """docs/reference.md §10.4 / mechanisms.md "Pull processing" step 11: UPDATE_CONSUMER_OFFSET commits 1, a pull commits 2;
    max offset is queue offset + 1 of the last dispatch; lag = max − committed."""
    lab = Lab(seed=1)
    for i in range(3):
        send(lab, f"m{i}".encode())  # dispatched at t=3, 6, 8
    update = {"consumerGroup": "CG", "topic": "TopicTest", "queueId": 0, "commitOffset": 1}
    assert lab.request("broker-a", "UPDATE_CONSUMER_OFFSET", update).code == 0
    pull = {**PULL, "queueId": 0, "queueOffset": 2, "sysFlag": 7, "commitOffset": 2}
    assert lab.request("broker-a", "PULL_MESSAGE", pull).code == 0
    df = F.offsets_over_time_frame(lab)
    cols = ["t_ms", "group", "queue", "event", "committed_offset", "max_offset", "lag"]
    assert df[cols].values.tolist() == [
        [3, "CG", "TopicTest/broker-a/0", "message", NA, 1, NA],
        [6, "CG", "TopicTest/broker-a/0", "message", NA, 2, NA],
        [8, "CG", "TopicTest/broker-a/0", "message", NA, 3, NA],
        [10, "CG", "TopicTest/broker-a/0", "commit", 1, 3, 2],
        [12, "CG", "TopicTest/broker-a/0", "commit", 2, 3, 1],
    ]
    last = lab.consumer_offsets().iloc[0]
    assert (last["offset"], last["max_offset"], last["lag"]) == (2, 3, 1)  # the inspector agrees
    fig = F.offsets_over_time(lab)
    assert [t.name for t in fig.data] == [
        "CG TopicTest/broker-a/0 committed",
        "TopicTest/broker-a/0",
        "CG TopicTest/broker-a/0 lag",
    ]  # fmt: skip  (the committed band first: the dashed max offset is drawn over it)
    assert [t.showlegend for t in fig.data] == [False, None, False]  # one legend entry per queue
    assert list(fig.data[2].y) == [2, 1]
    assert F.offsets_over_time_frame(lab, group="OTHER").empty
    lab.close()


def test_offsets_without_commits_show_max_offsets_only(long_poll_lab):
    """No group commits: one row per dispatch, group None; the figure draws max lines only."""
    df = F.offsets_over_time_frame(long_poll_lab)
    assert df[["t_ms", "group", "queue", "max_offset"]].values.tolist() == [
        [3, None, "TopicTest/broker-a/0", 1],
        [3008, None, "TopicTest/broker-a/2", 1],
    ]
    fig = F.offsets_over_time(long_poll_lab)
    assert [t.name for t in fig.data] == ["TopicTest/broker-a/0", "TopicTest/broker-a/2"]


def test_offsets_of_queues_with_the_same_history_are_drawn_once():
    """Lesson 08: 12 messages over 4 queues, all consumed: the 4 queues' lines coincide, so
    they are one set of traces (max, committed, lag) with one legend entry, not 4 × 3."""
    with Lab(seed=1) as lab:
        lab.send_many("TopicTest", 12)
        lab.push_consumer("CG", "TopicTest")
        lab.advance(12_000)
        df = F.offsets_over_time_frame(lab, group="CG", topic="TopicTest")
        fig = F.offsets_over_time(lab, group="CG", topic="TopicTest")
        legend = [t.name for t in fig.data if t.showlegend is not False]
        histories = {
            q: tuple(map(tuple, d[["t_ms", "max_offset", "committed_offset"]].astype(str).values))
            for q, d in df.groupby("queue")
        }
        distinct = len(set(histories.values()))
        assert len(legend) == distinct == len(fig.data) // 3
        assert sum(1 for t in fig.data if t.name.endswith(" lag")) == distinct
        if distinct == 1:
            assert legend == ["TopicTest/broker-a/0–3"]


def test_queues_label():
    """Consecutive ids of one topic and broker become a range; others are listed."""
    assert F._queues_label(["T/b/0", "T/b/1", "T/b/2"]) == "T/b/0–2"
    assert F._queues_label(["T/b/0", "T/b/2"]) == "T/b/0, 2"
    assert F._queues_label(["T/a/0", "T/b/0"]) == "T/a/0, T/b/0"


# -- commit-log byte map ---------------------------------------------------------------------------
def test_commit_log_byte_map_frame_matches_the_layout(long_poll_lab):
    """docs/reference.md §4.1: fixed fields end at 84; total = 91 + body (1) + topic (9) + properties (32)."""
    entry = long_poll_lab.commit_log(raw=True)["raw"][0]
    df = F.commit_log_byte_map_frame(entry)
    assert len(entry) == 133 == 91 + 1 + 9 + 32
    fixed = df[df["region"] == "fixed header"]
    assert fixed["end"].tolist()[-1] == 84 and fixed["field"].tolist()[:2] == [
        "TOTALSIZE", "MAGICCODE",
    ]  # fmt: skip
    tail = df[df["region"] != "fixed header"]
    assert tail[["field", "offset", "size", "end", "value_text"]].values.tolist() == [
        ["BODYLENGTH", 84, 4, 88, "1"],
        ["BODY", 88, 1, 89, "b'x'"],
        ["TOPICLENGTH", 89, 1, 90, "9"],
        ["TOPIC", 90, 9, 99, "TopicTest"],
        ["PROPERTIESLENGTH", 99, 2, 101, "32"],
        ["PROPERTIES", 101, 32, 133, "CLUSTER=DefaultCluster; TAGS=TagA"],
    ]
    assert df["value_text"][1] == "-626843481"  # MAGICCODE 0xDAA320A7
    assert df["offset"][1:].tolist() == df["end"][:-1].tolist()  # fields tile the entry


def test_commit_log_byte_map_figure(long_poll_lab):
    """One bar trace per part of the entry; entry 1 is the message stored at commit log @133."""
    fig = F.commit_log_byte_map(long_poll_lab, 1)
    assert [t.name for t in fig.data] == ["fixed header", "body", "topic", "properties"]
    assert fig.layout.title.text == "Byte map of broker-a commit log entry 1 @ 133 (133 bytes)"
    topic = fig.data[2]
    assert (list(topic.y), list(topic.base), list(topic.x)) == (
        ["TOPICLENGTH", "TOPIC"], [89, 90], [1, 9],
    )  # fmt: skip
    assert F.commit_log_byte_map(long_poll_lab.commit_log(raw=True)["raw"][0]).data[0].x[0] == 4
    with pytest.raises(ValueError, match="index 5 is past the 2 entries"):
        F.commit_log_byte_map(long_poll_lab, 5)


# -- allocation ------------------------------------------------------------------------------------
REBALANCE = "RebalancePushImpl.rebalanceByTopic"


def allocation_events():
    """consumer-1 alone; consumer-2 joins (overlap until consumer-1's round); consumer-2 killed."""
    ev = Events()
    c1, c2 = "127.0.0.1@consumer-1", "127.0.0.1@consumer-2"

    def alloc(t, node, cid, cids, qids, topic="TopicTest"):
        ev.add(t, node, REBALANCE, "42-61", group="CG", topic=topic, strategy="AVG",
               client_id=cid, cid_all=cids, mq_all=4, allocated=qids,
               allocated_mqs=[mq(q, topic) for q in qids])  # fmt: skip

    alloc(20000, "consumer-1", c1, [c1], [0, 1, 2, 3])
    alloc(20000, "consumer-1", c1, [c1], [0], topic="%RETRY%CG")
    alloc(40000, "consumer-2", c2, [c1, c2], [2, 3])
    alloc(40020, "consumer-1", c1, [c1, c2], [0, 1])
    ev.add(50000, "consumer-2", "SimDriver", "kill", "fault")
    return ev.events


def test_allocation_heatmap_frame_shows_overlap_and_kill():
    """docs/reference.md §10.10 AVG: 4 queues over 2 consumers = [0,1] + [2,3]; until consumer-1's own
    round, queues 2 and 3 are held by both (a rebalance overlap); a killed consumer's
    queues are held by nobody."""
    df = F.allocation_heatmap_frame(allocation_events(), topic="TopicTest")
    c1, c2 = "127.0.0.1@consumer-1", "127.0.0.1@consumer-2"
    both = f"{c1} + {c2}"
    grid = df.pivot(index="queue", columns="t_ms", values="owner")
    assert list(grid.columns) == [20000, 40000, 40020, 50000]
    assert grid.values.tolist() == [
        [c1, c1, c1, c1],
        [c1, c1, c1, c1],
        [c1, both, c2, ""],
        [c1, both, c2, ""],
    ]
    assert df[df["t_ms"] == 40000]["owners"].tolist() == [1, 1, 2, 2]


def test_allocation_heatmap_frame_all_topics_and_shutdown():
    """Without a topic filter the retry topic's queue is a row too; a shutdown ends a view."""
    evs = allocation_events()
    evs.append(TraceEvent("synthetic", 60000, len(evs), "consumer-1",
                          "DefaultMQPushConsumerImpl.shutdown", "shutdown", "state",
                          {"group": "CG"}))  # fmt: skip
    df = F.allocation_heatmap_frame(evs)
    assert sorted(set(df["queue"])) == ["%RETRY%CG/broker-a/0"] + [
        f"TopicTest/broker-a/{q}" for q in range(4)
    ]
    assert sorted(set(df["t_ms"])) == [20000, 40000, 40020, 50000, 60000]
    assert set(df[df["t_ms"] == 60000]["owner"]) == {""}


def test_allocation_heatmap_traces():
    """One heatmap plus a legend entry per consumer, one for overlaps and one for queues no
    consumer holds (walk of issue 28: those were empty cells, in the background's colour,
    with no legend entry), each in its own colour."""
    fig = F.allocation_heatmap(allocation_events(), topic="TopicTest")
    assert [t.type for t in fig.data] == ["heatmap"] + ["scatter"] * 4
    assert [t.name for t in fig.data[1:]] == [
        "127.0.0.1@consumer-1", "127.0.0.1@consumer-2", F.OVERLAP, "no consumer",
    ]  # fmt: skip
    assert [t.marker.color for t in fig.data[1:]] == ["#636EFA", "#EF553B", "#222222", "#a6a6a6"]
    heat = fig.data[0]
    assert list(heat.x) == ["20000", "40000", "40020", "50000"]
    assert [list(r) for r in heat.z] == [[0, 0, 0, 0], [0, 0, 0, 0], [0, 2, 1, 3],
                                         [0, 2, 1, 3]]  # fmt: skip
    assert (heat.zmin, heat.zmax) == (-0.5, 3.5)
    assert heat.colorscale[6:] == ((0.75, "#a6a6a6"), (1.0, "#a6a6a6"))
    assert heat.customdata[2][3] == "no consumer"
    assert len(F.allocation_heatmap([]).data) == 0


def test_allocation_heatmap_legend_lists_a_consumer_seen_only_in_overlaps():
    """Lesson 05: consumer-2 claims queues 2 and 3 while consumer-1 still holds them, then is
    killed: every cell of consumer-2 is an overlap, and the legend still lists it (issue 20,
    defect 13)."""
    c1, c2 = "127.0.0.1@consumer-1", "127.0.0.1@consumer-2"
    evs = allocation_events()
    evs = [evs[0], evs[2], evs[4]]  # consumer-1 holds 0-3; consumer-2 takes 2, 3; killed
    fig = F.allocation_heatmap(evs, topic="TopicTest")
    assert [t.name for t in fig.data[1:]] == [c1, c2, F.OVERLAP]
    assert [list(r) for r in fig.data[0].z] == [[0, 0, 0], [0, 0, 0], [0, 2, 0], [0, 2, 0]]


def test_allocation_heatmap_changes_only():
    """changes_only keeps the columns where some queue changed hands."""
    evs = allocation_events()
    c1 = "127.0.0.1@consumer-1"
    evs.append(TraceEvent("synthetic", 60000, len(evs), "consumer-1", REBALANCE, "42-61", "step",
                          {"group": "CG", "topic": "TopicTest", "client_id": c1,
                           "allocated_mqs": [mq(0), mq(1)]}))  # fmt: skip
    every = F.allocation_heatmap_frame(evs, topic="TopicTest")
    changed = F.allocation_heatmap_frame(evs, topic="TopicTest", changes_only=True)
    assert sorted(set(every["t_ms"])) == [20000, 40000, 40020, 50000, 60000]
    assert sorted(set(changed["t_ms"])) == [20000, 40000, 40020, 50000]


def test_allocation_heatmap_frame_real_consumers():
    """Two push consumers split 4 queues (docs/reference.md §10.10 AVG); after consumer-1 is killed the
    last snapshot gives consumer-2 all four, and a column shows the join's overlap."""
    lab = Lab(seed=4)
    lab.send_many("TopicTest", 8)
    lab.push_consumer("CG", "TopicTest")
    lab.advance(1000)
    lab.push_consumer("CG", "TopicTest")
    lab.advance(25_000)

    def last(df):
        return df[df["t_ms"] == df["t_ms"].max()][["queue", "owner"]].values.tolist()

    c1, c2 = "127.0.0.1@consumer-1", "127.0.0.1@consumer-2"
    df = F.allocation_heatmap_frame(lab, topic="TopicTest")
    assert last(df) == [[f"TopicTest/broker-a/{q}", c] for q, c in enumerate([c1, c1, c2, c2])]
    now = lab.allocation()
    now = now[now["topic"] == "TopicTest"]
    assert [f"{r.client_id}:{r.queue_id}" for r in now.itertuples()] == [
        f"{c1}:0", f"{c1}:1", f"{c2}:2", f"{c2}:3",
    ]  # fmt: skip
    assert (df["owners"] == 2).any()  # consumer-2 took 2 and 3 before consumer-1 let go
    lab.kill_consumer("consumer-1")
    lab.advance(45_000)
    df = F.allocation_heatmap_frame(lab, topic="TopicTest")
    assert last(df) == [[f"TopicTest/broker-a/{q}", c2] for q in range(4)]
    lab.close()


# -- flow control ----------------------------------------------------------------------------------
def flow_control_events():
    """docs/reference.md §10.14: count > 1000 → retry in 50 ms (3 times), a pull, then span, then count."""
    ev = Events()
    pm = "DefaultMQPushConsumerImpl.pullMessage"

    def fc(t, q, kind, cached, threshold):
        ev.add(t, "consumer-1", pm, "2.1", group="CG", mq=mq(q), delay_ms=50,
               flow_control=kind, cached=cached, threshold=threshold,
               text=f"flow control: {cached} > {threshold}")  # fmt: skip

    fc(100, 0, "count", 1001, 1000)
    fc(100, 1, "size", 101, 100)
    fc(150, 0, "count", 1003, 1000)
    fc(200, 0, "count", 1002, 1000)
    ev.add(250, "consumer-1", pm, "2.5", group="CG", mq=mq(0), offset=1200)
    fc(400, 0, "span", 2001, 2000)
    fc(450, 0, "count", 1001, 1000)
    return ev.events


def test_flow_control_episodes_frame():
    """Back-to-back deferrals of one queue and kind are one episode ending at last + 50 ms."""
    df = F.flow_control_episodes_frame(flow_control_events())
    cols = ["queue", "kind", "start_t_ms", "end_t_ms", "duration_ms", "events", "max_cached",
            "threshold"]  # fmt: skip
    assert df[cols].values.tolist() == [
        ["TopicTest/broker-a/0", "count", 100, 250, 150, 3, 1003, 1000],
        ["TopicTest/broker-a/1", "size", 100, 150, 50, 1, 101, 100],
        ["TopicTest/broker-a/0", "span", 400, 450, 50, 1, 2001, 2000],
        ["TopicTest/broker-a/0", "count", 450, 500, 50, 1, 1001, 1000],
    ]


def test_flow_control_episodes_traces():
    """One bar trace per flow-control kind, bars from episode start to end."""
    fig = F.flow_control_episodes(flow_control_events())
    assert [t.name for t in fig.data] == [
        "count (cached messages)", "size (cached MiB)", "span (offset span)",
    ]  # fmt: skip
    assert (list(fig.data[0].base), list(fig.data[0].x)) == ([100, 450], [150, 50])
    assert len(F.flow_control_episodes([]).data) == 0


def test_flow_control_episodes_real_consumer():
    """docs/reference.md §10.14: a slow listener and pullThresholdForQueue 2 → "count" flow control; every
    flow-control event lands in exactly one episode, and a queue's episodes do not overlap."""
    lab = Lab(seed=4)
    lab.send_many("TopicTest", 40)
    lab.push_consumer("CG", "TopicTest", pull_threshold_for_queue=2, pull_batch_size=4,
                      consume_time_ms=100, consume_thread_min=1, consume_thread_max=1)  # fmt: skip
    lab.advance(3000)
    df = F.flow_control_episodes_frame(lab)
    fc = [e for e in lab.trace.select(component="DefaultMQPushConsumerImpl.pullMessage", step="2.1")
          if "flow_control" in e.fields]  # fmt: skip
    assert len(fc) > 0 and df["events"].sum() == len(fc)
    assert set(df["kind"]) == {"count"} and set(df["threshold"]) == {2}
    assert (df["max_cached"] > 2).all()
    for _, d in df.groupby("queue"):
        assert (d["start_t_ms"].iloc[1:].values >= d["end_t_ms"].iloc[:-1].values).all()
    assert len(F.flow_control_episodes(lab).data) == 1
    lab.close()


# -- export ----------------------------------------------------------------------------------------
@pytest.mark.skipif(importlib.util.find_spec("kaleido") is not None, reason="kaleido installed")
def test_export_without_kaleido_says_how_to_install(tmp_path, long_poll_lab):
    """No kaleido: a RuntimeError that names kaleido and `pip install kaleido`; no file."""
    assert F.can_export() is False
    with pytest.raises(RuntimeError, match="pip install kaleido"):
        F.export(F.long_poll_wait_histogram(long_poll_lab), tmp_path / "waits.png")
    assert not (tmp_path / "waits.png").exists()


def test_can_export_false_without_kaleido(monkeypatch):
    """can_export() looks for the kaleido package."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "kaleido" else real(name, *a)
    )
    assert F.can_export() is False


def test_export_bad_arguments(tmp_path):
    """Only .png/.svg/.pdf paths and plotly figures are accepted (docs/design.md §6.10)."""
    with pytest.raises(ValueError, match=r"path must end in \.png, \.svg or \.pdf"):
        F.export(go.Figure(), tmp_path / "fig.gif")
    with pytest.raises(TypeError, match="fig must be a plotly Figure"):
        F.export({"data": []}, tmp_path / "fig.png")
