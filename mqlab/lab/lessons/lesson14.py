"""Lesson 14 — Raft in the broker: a DLedger group elects, replicates, loses its leader.

The notebook's logic, on ``Lab(seed=…, dledger=3)`` (``mqlab.lab.dledger_lab``) and the
explorer's DLedger scenarios (``mqlab.explore.dledger``):

1. an election vote by vote: the leader killed while one follower missed the last entry;
   every ``VoteRequest`` answered, with the candidate's ``ledgerEndTerm``/``ledgerEndIndex``
   and the voter's verdict (mechanisms.md "DLedger election", steps 1-6), and each round's
   parse with its randomized next time (``getNextTimeToRequestVote``);
2. one send through the leader: the append, the push to each follower, the quorum ack that
   moves ``committedIndex`` and completes SEND_OK (mechanisms.md "DLedger replication" and
   "DLedger commit log"), with the entries' indexes and positions;
3. the leader cut off by a partition: its appends wait for a quorum that never comes
   (``maxWaitAckTimeMs``), it steps down, the majority elects, and at the heal the new
   leader's ``EntryDispatcher`` truncates the old leader's uncommitted entries;
4. the explorer's ``dledger_leader_isolated`` searched with the fault at every choice point,
   and the shortest schedule of ``unacked=1 truncated=1`` replayed.

Mirrors ``DLedgerLeaderElector``, ``DLedgerEntryPusher``, ``DLedgerMmapFileStore#truncate``
(DLedger 0.2.3) and ``DLedgerCommitLog``, ``DLedgerRoleChangeHandler`` (rocketmq-all-4.9.3)
through the Lab.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from mqlab.dledger.protocol import DLedgerResponseCode
from mqlab.explore.engine import Bounds, run_schedule
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import get_scenario
from mqlab.lab import figures
from mqlab.lab.check import Misconception, exercise, wrong_answer
from mqlab.lab.dledger_lab import dledger_view
from mqlab.lab.dledger_widgets import DLedgerPanel
from mqlab.lab.lab import Lab

__all__ = [
    "WALK_SEED",
    "TOPIC",
    "group_lab",
    "leader_lost",
    "votes",
    "rounds",
    "votes_figure",
    "one_send",
    "replication_steps",
    "entries",
    "log_figure",
    "isolate_leader",
    "partition_story",
    "SCENARIO",
    "explore_partition",
    "class_table",
    "replay",
    "election_panel",
    "params_14_1",
    "params_14_2",
    "params_14_3",
]

#: The seed of the walk-through: every number the prose states is this seed's (tested).
WALK_SEED = 5
TOPIC = "TopicTest"
#: Section 3 watches this long after the heal: the new leader's COMPARE sent into the
#: partition waits out its 3 s, its dispatcher sleeps 500 ms, and only then compares and
#: truncates (``DLedgerEntryPusher.EntryDispatcher#doCompare``).
AFTER_HEAL_MS = 5000
#: The trace components of one append's way through the group.
REPLICATION_COMPONENTS = (
    "DLedgerCommitLog.asyncPutMessage",
    "DLedgerServer.handleAppend",
    "DLedgerEntryPusher.EntryDispatcher",
    "DLedgerEntryPusher.EntryHandler",
    "DLedgerEntryPusher",
)
#: The fields a story row prints, in this order, when the event has them.
_FIELDS = ("role", "term", "candidate", "result", "type", "index", "pos", "peer", "code",
           "outcome", "succ_num",
           "committed_index", "quorum_index", "end_before", "end_after", "status", "error",
           "broker_id", "broker_role")  # fmt: skip


def group_lab(seed: int = WALK_SEED, **kwargs: Any) -> Lab:
    """A lab whose broker-a is a DLedger group of 3 (n0, n1, n2), its first leader elected
    and registered as the master (brokerId 0)."""
    return Lab(seed=seed, dledger=3, **kwargs)


def _others(lab: Lab, leader: str) -> list[str]:
    return [n for n in lab.dledger_nodes().index if n != leader]


def leader_lost(
    seed: int = WALK_SEED, *, cut: int = 0, handovers: int = 0
) -> tuple[Lab, dict[str, Any]]:
    """Section 1's set-up: one message sent while a follower is cut off, so it misses entry
    0; then the leader is killed and the cut healed at once. Nothing is stepped further: the
    election that follows is the learner's to step.

    ``cut``: which follower is cut off, 0 the first by name (section 1), 1 the second.
    ``handovers``: how many leaders are killed before that, each time after the next leader
    is elected, and started again as a follower: each raises the term by one.

    Returns the lab and ``{"leader", "behind", "ahead", "killed_ms", "term"}`` (broker
    nodes; ``term`` is the killed leader's).

    Raises:
        ValueError: ``cut`` not 0 or 1, or ``handovers`` not 0, 1 or 2.
    """
    if cut not in (0, 1):
        raise ValueError(f"cut must be 0 or 1 (which follower by name), got {cut!r}")
    if handovers not in (0, 1, 2):
        raise ValueError(f"handovers must be 0, 1 or 2, got {handovers!r}")
    lab = group_lab(seed)
    for _ in range(handovers):
        old = lab.dledger_leader()
        lab.kill(old)
        lab.run_until_elected()
        lab.restart_broker(old)
        lab.run_until_master()
        _until_following(lab)
    leader = lab.dledger_leader()
    followers = _others(lab, leader)
    behind, ahead = followers[cut], followers[1 - cut]
    lab.partition([behind])
    lab.send(TOPIC, b"entry 0").get()
    term = int(lab.dledger_nodes().loc[leader, "term"])
    lab.kill(leader)
    lab.heal()
    return lab, {"leader": leader, "behind": behind, "ahead": ahead, "killed_ms": lab.now,
                 "term": term}  # fmt: skip


def _until_following(lab: Lab, max_ms: int = 30_000) -> None:
    """Advance until every node follows one leader in one term (a restarted node has heard
    the leader's heartbeat), so the next append has its quorum."""
    end = lab.now + max_ms
    while True:
        df = lab.dledger_nodes()
        roles = sorted(df["role"])
        if roles == ["FOLLOWER", "FOLLOWER", "LEADER"] and df["term"].nunique() == 1:
            return
        if lab.now >= end:
            raise TimeoutError(f"the group did not settle within {max_ms} ms: {roles}")
        lab.advance(10)


def _fields(e: Any) -> dict[str, Any]:
    f = e.fields if isinstance(e.fields, dict) else json.loads(e.fields or "{}")
    return f


def _say(f: dict[str, Any]) -> str:
    return " ".join(f"{k}={f[k]}" for k in _FIELDS if k in f and f[k] not in (None, ""))


def votes(lab: Lab, since_ms: int = 0) -> pd.DataFrame:
    """Every vote answered since ``since_ms`` (``DLedgerLeaderElector#handleVote``, step 3):
    when, the voter, the candidate with the term it asked for and its log end
    (``ledgerEndTerm``/``ledgerEndIndex`` as it sent them), the verdict, and the voter's term
    and vote after."""
    rows = []
    for e in lab.trace.events:
        if e.t_ms < since_ms or e.component != "DLedgerLeaderElector" or e.step != "3":
            continue
        f = _fields(e)
        rows.append({"t_ms": e.t_ms, "voter": lab.dledger_server(e.node).config.self_id,
                     "candidate": f["candidate"], "term": f["term"],
                     "cand_end_term": f["ledger_end_term"], "cand_end_index": f["ledger_end_index"],
                     "result": f["result"], "voter_term": f["curr_term"],
                     "voted_for": f["vote_for"]})  # fmt: skip
    cols = ["t_ms", "voter", "candidate", "term", "cand_end_term", "cand_end_index", "result",
            "voter_term", "voted_for"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def rounds(lab: Lab, since_ms: int = 0) -> pd.DataFrame:
    """Each vote round a candidate closed since ``since_ms`` (steps 4-5): who asked, in which
    term, with which log end; the answers; the parse result; and when it may ask next
    (``nextTimeToRequestVote``: now + 300 + random(700) ms, more after some results)."""
    rows, asked = [], {}
    for e in lab.trace.events:
        if e.t_ms < since_ms or e.component != "DLedgerLeaderElector":
            continue
        f = _fields(e)
        sid = lab.dledger_server(e.node).config.self_id
        if e.step == "2":
            asked[sid] = (e.t_ms, f["ledger_end_term"], f["ledger_end_index"])
        elif e.step == "5" and sid in asked:
            t0, lt, li = asked.pop(sid)
            nxt = f.get("next_time_to_request_vote", -1)
            rows.append({"asked_ms": t0, "candidate": sid, "term": f["term"],
                         "end_term": lt, "end_index": li,
                         "answers": ", ".join(f"{k}: {v}" for k, v in res.items())
                         if (res := _last_results(lab, e)) else "",
                         "parse": f["result"], "closed_ms": e.t_ms,
                         "next_vote_ms": nxt if f["result"] != "PASSED" else None})  # fmt: skip
    cols = ["asked_ms", "candidate", "term", "end_term", "end_index", "answers", "parse",
            "closed_ms", "next_vote_ms"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def _last_results(lab: Lab, step5: Any) -> dict[str, str]:
    """The answers of the round that ``step5`` parses (its step 4, just before it)."""
    evs = lab.trace.events
    i = evs.index(step5)
    for e in reversed(evs[:i]):
        if e.node == step5.node and e.component == "DLedgerLeaderElector" and e.step == "4":
            return dict(_fields(e).get("results", {}))
    return {}


#: Marker symbols of the vote answers in ``votes_figure``.
_VOTE_SYMBOLS = {"ACCEPT": "circle", "REJECT_TERM_NOT_READY": "diamond-open",
                 "REJECT_ALREADY_VOTED": "x", "REJECT_EXPIRED_LEDGER_TERM": "triangle-down",
                 "REJECT_SMALL_LEDGER_END_INDEX": "triangle-down-open"}  # fmt: skip


def votes_figure(v: pd.DataFrame, title: str = "Every vote answered") -> go.Figure:
    """One lane per candidate, time to the right; a marker per answer (its voter in the
    hover), shaped by the verdict."""
    fig = go.Figure()
    for result, grp in v.groupby("result", sort=False):
        fig.add_trace(go.Scatter(
            x=grp["t_ms"], y=[f"{c} asks (term {t})" for c, t in zip(grp["candidate"], grp["term"], strict=False)],
            mode="markers", name=result,
            marker={"symbol": _VOTE_SYMBOLS.get(result, "square"), "size": 11},
            customdata=list(zip(grp["voter"], grp["cand_end_term"], grp["cand_end_index"], strict=False)),
            hovertemplate="t=%{x} ms: %{customdata[0]} answers " + result
            + "<br>candidate's log end: term %{customdata[1]}, index %{customdata[2]}"
            "<extra></extra>",
        ))  # fmt: skip
    fig.update_layout(title=title, xaxis_title="virtual time (ms)", height=340,
                      legend={"orientation": "h", "y": -0.3}, margin={"l": 140})  # fmt: skip
    fig.update_yaxes(type="category", categoryorder="category descending")
    return figures.house_style(fig)


# -- 2. replication ------------------------------------------------------------------------------
def one_send(seed: int = WALK_SEED, slow_ms: int | None = 20) -> tuple[Lab, Any, int]:
    """A first message (its entry on every node), then the link from the leader to the first
    follower slowed to ``slow_ms`` each way, and a second send run to its answer; then 50 ms.
    Returns the lab, the second send's ``SendResult`` and the time it was sent."""
    lab = group_lab(seed)
    lab.send(TOPIC, b"first").get()
    leader = lab.dledger_leader()
    if slow_ms is not None:
        lab.slow_link(leader, _others(lab, leader)[0], slow_ms)
    start = lab.now
    result = lab.send(TOPIC, b"second").get()
    lab.advance(50)  # the slow follower's copy lands too
    return lab, result, start


def replication_steps(lab: Lab, since_ms: int = 0, until_ms: int | None = None) -> pd.DataFrame:
    """The append's steps since ``since_ms``: t_ms, node, component, step and what each says
    (index, position, peer, committed index …); with the producer's answer."""
    rows = []
    for e in lab.trace.events:
        if e.t_ms < since_ms or (until_ms is not None and e.t_ms > until_ms):
            continue
        if e.component in REPLICATION_COMPONENTS or (
            e.component == "DefaultMQProducerImpl.send" and e.step == "result"
        ):
            f = _fields(e)
            if e.component == "DLedgerEntryPusher.EntryDispatcher" and f.get("type") == "COMMIT":
                continue
            rows.append({"t_ms": e.t_ms, "node": e.node, "component": e.component,
                         "step": e.step, "says": _say(f)})  # fmt: skip
    return pd.DataFrame(rows, columns=["t_ms", "node", "component", "step", "says"])


def entries(lab: Lab) -> pd.DataFrame:
    """Every node's DLedger log side by side: one row per (node, entry): index, term, the
    entry's position, its message's commit-log offset (position + 48), the body, and whether
    this node counts it committed."""
    frames = []
    for node in lab.dledger_nodes().index:
        df = lab.dledger_entries(node)
        df.insert(0, "node", node)
        df.insert(3, "pos", df["commit_log_offset"] - 48)
        frames.append(df[["node", "index", "term", "pos", "commit_log_offset", "size", "body",
                          "committed"]])  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _text(body: Any) -> str:
    return body.decode(errors="replace") if isinstance(body, bytes) else str(body)


def log_figure(logs: pd.DataFrame, title: str = "Each node's DLedger log") -> go.Figure:
    """One row per node, one box per entry (by index), coloured by term; an uncommitted entry
    is drawn pale. ``logs``: ``entries(lab)``, or rows of node, index, term, committed (and
    optionally body)."""
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    fig = go.Figure()
    nodes = list(dict.fromkeys(logs["node"]))
    for (term, committed), grp in logs.groupby(["term", "committed"], sort=True):
        body = grp["body"] if "body" in grp else [""] * len(grp)
        fig.add_trace(go.Bar(
            x=[0.9] * len(grp), base=grp["index"] - 0.45, y=grp["node"], orientation="h",
            width=0.6, marker={"color": palette[int(term) % len(palette)],
                               "opacity": 1.0 if committed else 0.35},
            name=f"term {term}, {'committed' if committed else 'not committed'}",
            text=[f"{i}: {_text(b)}" for i, b in zip(grp["index"], body, strict=False)], textposition="inside",
            hovertemplate="%{y}, index %{text}<extra>term " + str(term) + "</extra>",
        ))  # fmt: skip
    hi = int(logs["index"].max()) if len(logs) else 0
    fig.update_layout(title=title, xaxis_title="entry index", barmode="overlay", height=260,
                      showlegend=True,
                      legend={"orientation": "h", "y": -0.35})  # fmt: skip
    fig.update_xaxes(range=[-0.6, hi + 0.6], tickmode="array", tickvals=list(range(hi + 1)))
    fig.update_yaxes(type="category", categoryarray=nodes[::-1], categoryorder="array")
    return figures.house_style(fig)


# -- 3. a partition -------------------------------------------------------------------------------
def isolate_leader(seed: int = WALK_SEED, before: int = 1) -> dict[str, Any]:
    """Section 3: ``before`` messages committed; the leader cut off (minority side); one send
    to it (it is still the master in the route); the majority's election; the heal, and
    ``AFTER_HEAL_MS`` after it. Returns the lab and the milestones (times and each node's log end)."""
    lab = group_lab(seed)
    for i in range(before):
        lab.send(TOPIC, f"before {i}".encode()).get()
    old = lab.dledger_leader()
    lab.partition([old])
    cut_ms = lab.now
    fut = lab.send(TOPIC, b"during")
    at_send = entries(lab)
    won = lab.run_until_elected()
    master = lab.run_until_master()
    before_heal = entries(lab)
    ends_before = {
        n: int(r["end_index"]) for n, r in dledger_view(lab).set_index("node").iterrows()
    }
    lab.heal()
    heal_ms = lab.now
    lab.advance(AFTER_HEAL_MS)
    ends_after = {n: int(r["end_index"]) for n, r in dledger_view(lab).set_index("node").iterrows()}
    return {"lab": lab, "old_leader": old, "cut_ms": cut_ms, "send_error": fut.error,
            "new_leader": won, "master": master, "before_heal": before_heal, "at_send": at_send,
            "heal_ms": heal_ms, "ends_before_heal": ends_before, "ends_after_heal": ends_after,
            "after_heal": entries(lab)}  # fmt: skip


#: What ``partition_story`` keeps: (component, step) → only these fields' events.
_STORY = {
    ("DLedgerCommitLog.asyncPutMessage", "5"), ("DLedgerCommitLog.asyncPutMessage", "6"),
    ("DLedgerLeaderElector", "6"), ("DLedgerLeaderElector", "9"), ("DLedgerLeaderElector", "11"),
    ("DLedgerEntryPusher.EntryHandler", "6"), ("DLedgerEntryPusher.EntryDispatcher", "6"),
    ("DLedgerRoleChangeHandler.handle", "3"), ("DefaultMQProducerImpl.sendDefaultImpl", "exception"),
    ("DefaultMQProducerImpl.send", "result"), ("Lab", "partition"), ("Lab", "heal"),
}  # fmt: skip


def partition_story(run: dict[str, Any]) -> pd.DataFrame:
    """The milestones of ``isolate_leader``'s run from the cut on, one row each: the sends'
    appends and answers, the producer's tries, role changes, the truncation."""
    lab = run["lab"]
    rows = []
    for e in lab.trace.events:
        if e.t_ms < run["cut_ms"] or (e.component, e.step) not in _STORY:
            continue
        f = _fields(e)
        if e.component == "DLedgerRoleChangeHandler.handle" and not f.get("succ", True):
            continue
        says = _say(f)
        if e.component == "DefaultMQProducerImpl.sendDefaultImpl":
            says = f"try {f.get('attempt')}: " + str(f.get("error", "")).splitlines()[0]
        rows.append({"t_ms": e.t_ms, "node": e.node, "component": e.component, "step": e.step,
                     "says": says[:110]})  # fmt: skip
    return pd.DataFrame(rows, columns=["t_ms", "node", "component", "step", "says"])


# -- 4. the explorer ------------------------------------------------------------------------------
#: The explorer's scenario: an append through leader n2, the partition that isolates it injected
#: at any choice point, a second append through the majority's leader, the heal at 3 s.
SCENARIO = "dledger_leader_isolated"
#: The fault at each choice point of the plain run, and no other move: 13 runs.
BOUNDS = "depth=12,deviations=0"


def explore_partition(bounds: str = BOUNDS) -> Any:
    """``explore`` of ``SCENARIO`` at ``bounds`` (the scenario's own fault budget)."""
    xs = get_scenario(SCENARIO)
    return explore(xs, Bounds.parse(bounds, depth=xs.depth, faults=xs.fault_budget,
                                    window_ms=xs.window_ms))  # fmt: skip


def class_table(result: Any) -> pd.DataFrame:
    """One row per outcome class: its runs, distinct final states and shortest schedule."""
    return pd.DataFrame(
        [{"outcome": r.outcome, "runs": r.runs, "final states": r.count,
          "shortest schedule": str(r.schedule) or "(default)"} for r in result.rows]
    )  # fmt: skip


def replay(schedule: str) -> dict[str, Any]:
    """``SCENARIO`` replayed under ``schedule``: its outcome counts, each node's log at the
    end (index, term, body), the leaders by term, the appends' answers, and the truncations
    (``EntryHandler`` step 6) with their times."""
    xs = get_scenario(SCENARIO)
    got: dict[str, Any] = {}

    def keep(run: Any) -> None:
        g = run.group
        got["logs"] = pd.DataFrame(
            [{"node": n, "index": i, "term": t, "body": b.decode(),
              "committed": i <= g.server(n).store.committed_index}
             for n in g.ids for i, t, b in g.log(n)],
            columns=["node", "index", "term", "body", "committed"])  # fmt: skip
        got["leaders"] = {t: sorted(v) for t, v in sorted(run.watch.leaders.items())}
        got["answers"] = [
            (body.decode(), DLedgerResponseCode.value_of(f.value.code).name
             if f.done and f.value else "no answer") for body, f in run.sends]  # fmt: skip
        got["truncations"] = [(e.t_ms, run.group.ids[[run.group.servers[i].name for i in
                                                      run.group.ids].index(e.node)]
                               if e.node not in run.group.ids else e.node,
                               _fields(e).get("index"))
                              for e in run.trace.events
                              if e.component == "DLedgerEntryPusher.EntryHandler" and e.step == "6"
                              and e.t_ms >= xs.warmup_ms + 3000]  # after the heal  # fmt: skip
        held = {(i, t) for _, i, t in ((n, i, t) for n in g.ids for i, t, _ in g.log(n))}
        got["cut"] = sorted(set(run.watch.appended) - held)
        got["faults"] = list(run.watch.faults)
        got["votes"] = [(e.t_ms, _fields(e)["candidate"], _fields(e)["term"],
                         _fields(e)["result"]) for e in run.trace.events
                        if e.component == "DLedgerLeaderElector" and e.step == "3"
                        and e.t_ms > xs.warmup_ms]  # fmt: skip

    rec = run_schedule(xs, schedule, Bounds(depth=0, faults=1), on_lab=keep)
    return {"outcome": rec.outcome, **got}


# -- the panel ------------------------------------------------------------------------------------
def election_panel(lab: Lab) -> DLedgerPanel:
    """The DLedger panel on ``lab`` (``mqlab.lab.dledger_panel``)."""
    return DLedgerPanel(lab)


# -- exercises ------------------------------------------------------------------------------------
def params_14_1(seed: int) -> dict[str, int]:
    """Exercise 14.1's set-up, ``L.leader_lost(**L.params_14_1(SEED))``: the lab seed (so
    the first leader), which follower is cut off, and how many leaders were replaced before
    (so the term)."""
    return {"seed": (seed % 97) + 1, "cut": seed % 2, "handovers": (seed // 2) % 3}


def _won(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    lab, who = leader_lost(**params_14_1(seed))
    won = lab.run_until_elected()
    return who, {"self_id": won["self_id"], "term": won["term"], "lab": lab}


def _sid(node: str) -> str:
    return node.rsplit("-", 1)[-1]


MISCONCEPTIONS_14_1 = (
    Misconception(
        "believing the first node to stand wins",
        "the node cut off during the send stands again and again (it never heard a "
        "heartbeat), but its log ends in an older term: the other follower answers "
        "REJECT_EXPIRED_LEDGER_TERM (handleVote compares ledgerEndTerm first), and no "
        "majority accepts it",
        lambda answer, want, seed: answer[0] != want[0],
    ),
    Misconception(
        "believing a new leader keeps the old leader's term",
        "every node voted once in the old leader's term and keeps that vote "
        "(REJECT_ALREADY_VOTED): a new leader needs a new term, nextTerm() raises it by one "
        "above the killed leader's (who['term']: each earlier handover raised it too)",
        lambda answer, want, seed: answer[0] == want[0] and answer[1] < want[1],
    ),
)


@exercise("14.1", "As in section 1, with your own set-up L.params_14_1(SEED): a lab seed, "
          "the follower cut off during the one send (cut 0: the first by name, 1: the "
          "second), and how many earlier leaders were replaced first (handovers; each raised "
          "the term); then the leader killed and the cut healed. Which node wins the "
          "election, and in which term? Answer [selfId, term], e.g. ['n0', 3]. "
          "(lab, who = L.leader_lost(**L.params_14_1(SEED)) builds it; who names the nodes "
          "and the killed leader's term. Predict, then step it.)",
          hint="a voter refuses a candidate whose log ends in an older term "
               "(REJECT_EXPIRED_LEDGER_TERM) and votes once per term (REJECT_ALREADY_VOTED): "
               "only the follower that holds entry 0 (who['ahead']) can win, in a term above "
               "the killed leader's. Step it: lab.run_until_elected()",
          misconceptions=MISCONCEPTIONS_14_1)  # fmt: skip
def _ex_14_1(seed: int) -> list:
    _, won = _won(seed)
    return [won["self_id"], won["term"]]


def params_14_2(seed: int) -> int:
    """Exercise 14.2: the slow link's latency (ms each way)."""
    return (30, 50, 80, 120)[seed % 4]


def _latency(seed: int) -> int:
    lab, result, start = one_send(WALK_SEED, params_14_2(seed))
    answered = [e.t_ms for e in lab.trace.events
                if e.t_ms >= start and e.component == "DefaultMQProducerImpl.send"
                and e.step == "result"]  # fmt: skip
    return answered[0] - start


MISCONCEPTIONS_14_2 = (
    Misconception(
        "believing SEND_OK waits for every follower",
        "the leader's QuorumAckChecker moves committedIndex to the middle water mark: with 3 "
        "nodes, the leader and one follower are a majority, so the slow follower is not "
        "waited for",
        lambda answer, want, seed: isinstance(answer, int) and answer >= params_14_2(seed),
    ),
)


@exercise("14.2", "As in section 2 (seed 5), with the link from the leader to the first "
          "follower slowed to L.params_14_2(SEED) ms each way: how many ms after the send "
          "leaves does the producer hold its SEND_OK? "
          "(L.one_send(L.WALK_SEED, L.params_14_2(SEED)) runs it.)",
          hint="the quorum ack needs the leader and one follower: the fast follower's answer "
               "completes the append; the producer's answer then takes one more link",
          misconceptions=MISCONCEPTIONS_14_2)  # fmt: skip
def _ex_14_2(seed: int) -> int:
    return _latency(seed)


def params_14_3(seed: int) -> int:
    """Exercise 14.3: how many messages are committed before the partition."""
    return (2, 3, 4)[seed % 3]


def _ends(seed: int) -> list[int]:
    run = isolate_leader(WALK_SEED, params_14_3(seed))
    old = run["old_leader"]
    return [run["ends_before_heal"][old], run["ends_after_heal"][old]]


MISCONCEPTIONS_14_3 = (
    wrong_answer(
        "believing the old leader's entries survive the heal",
        "after the heal the new leader's EntryDispatcher compares (COMPARE) and truncates "
        "(TRUNCATE) the old leader's log back to the last entry they share: uncommitted entries "
        "of the old term are cut",
        lambda want, seed: [want[0], want[0]],
    ),
    wrong_answer(
        "believing one send makes one entry",
        "the producer tried twice within its 3 s: each try reached the isolated leader, which "
        "appended the message again (entries 1 and 2 of section 3); both wait for a quorum",
        lambda want, seed: [want[0] - 1, want[1]],
    ),
)


@exercise("14.3", "As in section 3 (seed 5), but with L.params_14_3(SEED) messages committed "
          "before the partition isolates the leader; then one send to it, the majority's "
          "election, the heal. Answer [the old leader's ledgerEndIndex just before the heal, "
          "and 5 s after it]. (L.isolate_leader(L.WALK_SEED, L.params_14_3(SEED)) runs it.)",
          hint="indexes start at 0; the isolated leader appends each try of the send (two "
               "tries in the producer's 3 s); after the heal the new leader truncates it back "
               "to what they share",
          misconceptions=MISCONCEPTIONS_14_3)  # fmt: skip
def _ex_14_3(seed: int) -> list[int]:
    return _ends(seed)
