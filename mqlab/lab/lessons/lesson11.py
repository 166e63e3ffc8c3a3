"""Lesson 11 — what can happen? Every outcome of a consumer joining group CG.

Two ``mqlab.explore`` scenarios, each searched exhaustively on the sequential runner at its
own bounds (depth 8, no faults, latencies 1/5 ms; two seconds or so each), once per process:

- ``consumer_join`` (``mqlab.explore.scenarios``): one broker, TopicTest with 2 queues, 4
  messages, consumer-1 (one consume thread, 20 ms per message) and, 10 ms into the
  scenario, consumer-2 joining while consumer-1 consumes;
- ``consumer_join_at_persist`` (``mqlab.explore.scenarios``): the same cluster, consumer-2 joining 7 994 ms in,
  so that its QUERY_CONSUMER_OFFSET for queue 1 reaches the broker in the same ms as
  consumer-1's first 5 s offset persist (``MQClientInstance#persistAllConsumerOffset``,
  10 s after consumer-1 started). The search decides from 8 000 ms on.

Section 5 goes past the bounds (issue 29): ``walks`` are 20 random walks of
``consumer_join`` that decide its first 40 choice points (seeds 0..19, as ``python -m mqlab
explore consumer_join --walks 20 --bounds depth=40``), ``missed`` names the classes they find
and the depth-8 table lacks, and ``deep_search`` is the search bounded by *moves* instead of
depth (``deviations=2,sticky=2``: at most two non-default choices anywhere in the run, each
latency move keeping its connection slow; fewest moves first, so each class comes with its
shortest schedule). On a loaded 2-core machine the walks took 43 s and that search (1 040
runs) 165 to 341 s, so the notebook loads their records (``_lesson11_record``: the browser
tier's Run All must end within 120 s); ``walks(recompute=True)`` and
``deep_search(recompute=True)`` run them again, and tests/lab/test_lesson11.py checks that
the records are what they give.
``saturation_figure`` draws the classes of the three against runs and against the bound.

This module hands the notebook the searches, the outcome explorer, the duplicates of a
replayed run, and the exercises. Exercises 11.1–11.5 are the same for every learner: the
search enumerates every schedule within the bounds, so there is no seed to vary; 11.6 and
11.7 ask about a class of the deviation search that the learner's seed picks.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import ExploreScenario, get_scenario
from mqlab.explore.schedule import Schedule
from mqlab.explore.search import Growth, OutcomeRow, SearchResult, random_walks
from mqlab.lab import figures
from mqlab.lab.check import exercise, wrong_answer

__all__ = ["SCENARIO", "AT_PERSIST", "scenario", "bounds", "search", "explorer", "duplicates",
           "one_choice", "queue1_handover", "WALKS", "WALK_DEPTH", "DEEP_BOUNDS", "walks",
           "missed", "replay", "growth", "walk_bounds", "deep_bounds", "deep_search", "record", "your_class",
           "saturation_figure"]  # fmt: skip

#: The lesson's first scenario (``python -m mqlab explore consumer_join`` runs the same search).
SCENARIO = "consumer_join"
#: The second: the join timed to meet consumer-1's first offset persist at the broker.
AT_PERSIST = "consumer_join_at_persist"
_RESULT: dict[str, SearchResult] = {}
#: Section 5: random walks of consumer_join (seeds 0 .. WALKS - 1), each deciding its first
#: WALK_DEPTH choice points at random.
WALKS = 20
WALK_DEPTH = 40
#: Section 5: the search bounded by moves (``Bounds.parse``; no depth bound).
DEEP_BOUNDS = "deviations=2,sticky=2"


def scenario(name: str = SCENARIO) -> ExploreScenario:
    """``consumer_join`` (``mqlab.explore.scenarios``) or ``consumer_join_at_persist``."""
    return get_scenario(name)


def bounds(name: str = SCENARIO) -> Bounds:
    """The scenario's own bounds: depth 8, no faults, no reorder window (latencies 1/5 ms)."""
    xs = scenario(name)
    return Bounds(depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)


def search(name: str = SCENARIO, *, progress: bool = False) -> SearchResult:
    """The exhaustive search of scenario ``name`` on the sequential runner (run once, kept)."""
    if name not in _RESULT:
        _RESULT[name] = explore(scenario(name), bounds(name), runner="sequential",
                                progress=progress)  # fmt: skip
    return _RESULT[name]


def explorer(name: str = SCENARIO, *, select: str | None = None,
             plot_mode: str | None = None) -> Any:  # fmt: skip
    """The outcome explorer on scenario ``name``'s search (``select``: a class replayed at once)."""
    from mqlab.lab.outcome_explorer import outcome_explorer

    return outcome_explorer(search(name), scenario(name), select=select, plot_mode=plot_mode)


def duplicates(lab: Any) -> pd.DataFrame:
    """The duplicates of a replayed run, as ``find_duplicates`` reports them (group CG)."""
    from mqlab.lab.checkers import find_duplicates

    cols = ["queue_id", "queue_offset", "first_t_ms", "first_consumer", "again_t_ms",
            "again_consumer", "cause"]  # fmt: skip
    return find_duplicates(lab, "CG").findings[cols]


#: What the handover of queue 1 consists of: consuming it, taking it, its offset persisted,
#: committed, queried and read (the pull's own commit offsets are left out).
_HANDOVER = ("consumes TopicTest/broker-a/1", "of TopicTest: ['TopicTest/broker-a/1']",
             "queueId=1]", "updateConsumerOffset", "queryConsumerOffset")  # fmt: skip


def queue1_handover(lab: Any, until_ms: int = 2040) -> pd.DataFrame:
    """Queue 1 changing hands in a replayed run, t=2000..``until_ms``: t_ms, node, step, text.

    Each event once (a consumer's rebalance repeats every round with the same result).
    """
    rows = [(e.t_ms, e.node, e.component, e.fields.get("text", "")) for e in lab.trace.events
            if 2000 <= e.t_ms <= until_ms and any(k in e.describe() for k in _HANDOVER)
            and ("queue 1" in e.describe() or "queueId=1" in e.describe()
                 or "broker-a/1" in e.describe())]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["t_ms", "node", "step", "text"])
    return frame.drop_duplicates(["node", "step", "text"]).reset_index(
        drop=True
    )  # rebalances repeat


def one_choice(schedule: str, name: str = SCENARIO) -> list[Any]:
    """The non-default choices of a schedule: [[choice point, what it picked], ...]."""
    from mqlab.lab.outcome_explorer import replay_prefix

    rep = replay_prefix(scenario(name), schedule)
    return [[p.index, p.labels[p.chosen]] for p in rep.points if p.chosen != 0]


def _keys(outcome: str) -> set[str]:
    return set() if outcome == "ok" else {part.split("=")[0] for part in outcome.split()}


@exercise("11.1", "consumer-2 joins group CG while consumer-1 consumes 4 messages on 2 queues. "
          "The search tries every choice of the first 8 choice points (each frame's latency: 1 "
          "or 5 ms). How many distinct outcome classes (rows of the outcome table) does it find?",
          hint="an outcome class is a set of non-zero counts (lost, dup:<cause>, order, overlap, "
               "retry, dlq), or 'ok' when all are zero; not a run and not a final state: if you "
               "answered 76 you counted runs, 17 is the distinct final states; 1 would mean no "
               "latency changes anything, and 256 (2^8) forgets that most choices lead to the "
               "same counts")  # fmt: skip
def _ex_11_1(seed: int) -> int:
    return len(search().rows)


@exercise("11.2", "How many of the outcome classes have no duplicate (no dup:… count)? In other "
          "words: in how many classes does no message reach a listener twice?",
          hint="look at the outcome column: a class without 'dup:' is one where consumer-2 "
               "reads queue 1's offset after consumer-1 has consumed offset 0 (20 ms) and "
               "persisted offset 1; 'ok' (no non-zero count at all) is such a class: 0 forgets "
               "'ok', and 2 counts the class 'dup:rebalance=1' as if it had none")  # fmt: skip
def _ex_11_2(seed: int) -> int:
    return sum(not any(k.startswith("dup:") for k in _keys(r.outcome)) for r in search().rows)


@exercise("11.3", "The class with a duplicate but no overlap (dup:rebalance=1) has a shortest "
          "schedule with one non-default choice. Which choice point is it (counting from 0), and what latency in ms does it "
          "give its frame? Answer [choice point, ms].",
          hint="select the class in the explorer and step it with 'next choice': the outcome "
               "changes at exactly one step; the choice list says which frame it is "
               "(sender->receiver and the latency); 'dN' means N default choices first, so "
               "'d5 l1' changes point 5, not 6, and l1 is the second latency of the set 1/5, "
               "not 1 ms")  # fmt: skip
def _ex_11_3(seed: int) -> list[int]:
    row = next(r for r in search().rows if _keys(r.outcome) == {"dup:rebalance"})
    ((point, label),) = one_choice(str(row.schedule))
    return [point, int(label.split()[-2])]


@exercise("11.4", "Now consumer-2 joins 7994 ms in: its QUERY_CONSUMER_OFFSET for queue 1 and "
          "consumer-1's first offset persist (UPDATE_CONSUMER_OFFSET, queue 1 := 2) reach the "
          "broker in the same ms. The plain run handles the update first: no duplicate. In the "
          "class the one other order causes, how many messages are delivered twice, and which "
          "offset does consumer-2 read for queue 1? Answer [messages, offset].",
          hint="with the query first, the broker answers from consumerOffset.json before the "
               "update lands: consumer-1 had not persisted anything yet (the 5 s timer first "
               "fires 10 s after it started, and no pull carried a commit offset), so the "
               "answer is the new-group rule of lesson 08, not 2; consumer-2 then pulls queue 1 "
               "from there and gets every message of that queue again, not just one")  # fmt: skip
def _ex_11_4(seed: int) -> list[int]:
    from mqlab.lab.outcome_explorer import replay_prefix

    row = next(r for r in search(AT_PERSIST).rows if "dup:rebalance" in _keys(r.outcome))
    rep = replay_prefix(scenario(AT_PERSIST), row.schedule)
    reads = [e.fields.get("text", "") for e in rep.lab.trace.events
             if e.node == "broker-a" and e.component.endswith("queryConsumerOffset")
             and "TopicTest@CG queue 1" in e.fields.get("text", "")]  # fmt: skip
    offset = int(reads[-1].split(" = ")[1].split()[0])
    return [len(duplicates(rep.lab)), offset]


# -- section 5: past the bounds ------------------------------------------------------------------
def walks(*, recompute: bool = False) -> SearchResult:
    """``WALKS`` random walks of ``consumer_join`` (seeds 0..WALKS-1, ``WALK_DEPTH`` choice
    points each picked at random), loaded from their record (``_lesson11_record.WALKS``: on a
    loaded 2-core machine they take most of a minute); ``recompute``: run them. Their schedules
    are left as the walks made them (the command line shrinks them; here the deviation search
    gives the short ones)."""
    if recompute:
        return random_walks(scenario(), walk_bounds(), range(WALKS), shrink_outcomes=False)
    if "walks" not in _RESULT:
        from mqlab.lab.lessons._lesson11_record import WALKS as REC

        _RESULT["walks"] = _from_record(REC, walk_bounds())
    return _RESULT["walks"]


def walk_bounds() -> Bounds:
    """The walks' bounds: ``WALK_DEPTH`` choice points, the scenario's latencies."""
    return Bounds(depth=WALK_DEPTH)


def replay(schedule: str, name: str = SCENARIO) -> str:
    """The outcome of one schedule of scenario ``name``, replayed exactly (no search)."""
    from mqlab.explore.search import replay as run_one

    return run_one(scenario(name), schedule).outcome or "?"


def growth(result: SearchResult) -> pd.DataFrame:
    """How a search's table grew, level by level: the moves the level allows, its runs, the
    runs so far, the classes so far, and the classes it added, each with the run that first
    reached it (``SearchResult.growth``, without the seconds: a record has none). For walks:
    the walk that found a class, the classes so far, the class."""
    found = {r.outcome: r.found_at for r in result.rows}
    if result.walks:
        rows = [(g.total_runs, g.classes, ", ".join(g.new)) for g in result.growth]
        return pd.DataFrame(rows, columns=["walk", "classes", "new"])
    rows = [(g.moves, g.runs, g.total_runs, g.classes,
             ", ".join(f"{o} (run {found[o]})" for o in g.new) or "-")
            for g in result.growth]  # fmt: skip
    return pd.DataFrame(rows, columns=["moves", "runs", "so_far", "classes", "new"])


def missed() -> list[str]:
    """The classes the walks find and the depth-8 search does not."""
    have = set(search().outcomes())
    return [r.outcome for r in walks().rows if r.outcome not in have]


def deep_bounds() -> Bounds:
    """``DEEP_BOUNDS`` over consumer_join: at most 2 moves anywhere in the run (depth=any)."""
    xs = scenario()
    return Bounds.parse(DEEP_BOUNDS, depth=xs.depth, faults=xs.fault_budget,
                        window_ms=xs.window_ms)  # fmt: skip


def record(result: SearchResult) -> dict[str, Any]:
    """What a search found, without its timings: the record ``deep_search`` loads."""
    rows = [{"outcome": r.outcome, "count": r.count, "runs": r.runs,
             "schedule": str(r.schedule), "counts": dict(r.counts), "found_at": r.found_at}
            for r in result.rows]  # fmt: skip
    growth = [{k: v for k, v in asdict(g).items() if k != "seconds"} | {"new": list(g.new)}
              for g in result.growth]  # fmt: skip
    return {"scenario": result.scenario, "bounds": str(result.bounds), "rows": rows,
            "runs": result.runs, "states": result.states, "distinct": result.distinct,
            "pruned": result.pruned, "redundant": result.redundant, "reruns": result.reruns,
            "complete": result.complete, "walks": result.walks, "growth": growth}  # fmt: skip


def _from_record(rec: dict[str, Any], b: Bounds) -> SearchResult:
    if rec["bounds"] != str(b):
        raise ValueError(f"the record's bounds {rec['bounds']} are not {b}")
    rows = [OutcomeRow(r["outcome"], r["count"], r["runs"], Schedule.parse(r["schedule"]),
                       dict(r["counts"]), r["found_at"]) for r in rec["rows"]]  # fmt: skip
    growth = [Growth(**{**g, "new": tuple(g["new"]), "seconds": 0.0}) for g in rec["growth"]]
    return SearchResult(rec["scenario"], b, rows, runs=rec["runs"], states=rec["states"],
                        distinct=rec["distinct"], pruned=rec["pruned"],
                        redundant=rec["redundant"], reruns=rec["reruns"],
                        complete=rec["complete"], growth=growth,
                        walks=rec["walks"])  # fmt: skip


def deep_search(*, recompute: bool = False, progress: bool = False) -> SearchResult:
    """The search of consumer_join bounded by moves (``DEEP_BOUNDS``), loaded from its record
    (``_lesson11_record``); ``recompute``: run it (1 040 runs) on the sequential runner, as
    ``python -m mqlab explore consumer_join --bounds deviations=2,sticky=2`` does."""
    if recompute:
        return explore(scenario(), deep_bounds(), runner="sequential", progress=progress,
                       shrink_outcomes=False)  # fmt: skip
    if "deep" not in _RESULT:
        from mqlab.lab.lessons._lesson11_record import DEVIATION_SEARCH

        _RESULT["deep"] = _from_record(DEVIATION_SEARCH, deep_bounds())
    return _RESULT["deep"]


def write_record(path: Any = None) -> None:
    """Run the deviation search and the walks and write ``_lesson11_record.py`` (after a
    change to the scenario or the search; then `ruff format` it, and the test checks it
    again)."""
    from pathlib import Path
    from pprint import pformat

    out = Path(path or Path(__file__).with_name("_lesson11_record.py"))
    deep, walked = record(deep_search(recompute=True)), record(walks(recompute=True))
    out.write_text(
        '"""The records of lesson 11\'s deviation search (``lesson11.deep_search``) and random\n'
        "walks (``lesson11.walks``), written by ``lesson11.write_record()``;\n"
        "tests/lab/test_lesson11.py checks them against new runs.\n\n"
        'Mirrors no RocketMQ class: recorded data.\n"""\n\n'
        f"DEVIATION_SEARCH = {pformat(deep, width=96, sort_dicts=False)}\n\n"
        f"WALKS = {pformat(walked, width=96, sort_dicts=False)}\n"
    )


def your_class(seed: int) -> str:
    """The deviation search's class a learner's exercises 11.6 and 11.7 ask about: one of the
    classes its shortest schedule reaches with a move (not the plain run's), by seed."""
    moved = [r.outcome for r in deep_search().rows if r.schedule.moves]
    return moved[seed % len(moved)]


#: The saturation figure's colours: one per way of looking.
SATURATION_COLORS = {"depth": "#1f77b4", "walks": "#ff7f0e", "deep": "#2ca02c"}


def _steps(result: SearchResult) -> tuple[list[int], list[int]]:
    """Classes so far against runs: a point at each run that found a class, and the last."""
    found = sorted(r.found_at for r in result.rows)
    x = found + ([result.runs] if result.runs > found[-1] else [])
    return x, [min(i + 1, len(found)) for i in range(len(x))]


def saturation_figure() -> go.Figure:
    """Classes found against runs (left: the depth-8 search, the walks, the deviation
    search) and against the bound (right: the moves a level allows, for the two searches)."""
    from plotly.subplots import make_subplots

    d, w, v = search(), walks(), deep_search()
    names = {"depth": f"search, depth {d.bounds.depth}",
             "walks": f"{w.runs} random walks, depth {WALK_DEPTH}",
             "deep": f"search, at most {v.bounds.deviations} moves"}  # fmt: skip
    fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.12,
                        subplot_titles=("classes against runs (log)",
                                        "classes against the moves allowed"))  # fmt: skip
    for key, res in (("depth", d), ("walks", w), ("deep", v)):
        x, y = _steps(res)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", line_shape="hv", name=names[key],
                                 legendgroup=key, line={"color": SATURATION_COLORS[key]},
                                 hovertemplate="run %{x}: %{y} class(es)<extra>" + names[key]
                                 + "</extra>"), row=1, col=1)  # fmt: skip
    for key, res in (("depth", d), ("deep", v)):
        fig.add_trace(go.Scatter(x=[g.moves for g in res.growth], y=[g.classes for g in res.growth],
                                 mode="lines+markers", name=names[key], legendgroup=key,
                                 showlegend=False, line={"color": SATURATION_COLORS[key]},
                                 hovertemplate="%{x} move(s): %{y} class(es)<extra>" + names[key]
                                 + "</extra>"), row=1, col=2)  # fmt: skip
    # ticks at 1, 10, 100, 1000 only: plotly's own log ticks read "10 2 5 100 2 5 1000" on a
    # projector (walk 4 of issue 28)
    fig.update_xaxes(type="log", dtick=1, title_text="runs", row=1, col=1)
    fig.update_xaxes(title_text="moves (non-default choices)", row=1, col=2)
    fig.update_yaxes(title_text="outcome classes so far", row=1, col=1)
    fig.update_layout(
        title=f"When to stop: {len(v.rows)} classes at most {v.bounds.deviations} moves, "
              f"{len(d.rows)} at depth {d.bounds.depth}",
        height=380, legend={"orientation": "h", "y": -0.25}, margin={"b": 90},
    )  # fmt: skip
    return figures.house_style(fig)


def _moves_depth(schedule: Schedule) -> list[int]:
    return [schedule.moves, schedule.depth]


def _depth8_schedule(outcome: str) -> Schedule | None:
    return next((r.schedule for r in search().rows if r.outcome == outcome), None)


@exercise("11.5", f"The depth-8 search's growth table says it saturated. {WALKS} random walks "
          f"now decide the first {WALK_DEPTH} choice points of the same scenario at random "
          "(latencies 1 or 5 ms, and the order of events due together). How many outcome "
          "classes will they find that the depth-8 table does not have?",
          hint="the depth-8 search tried every schedule of the first 8 choice points, and only "
               "those: from choice point 8 on, every run took the defaults; a walk makes choices "
               "at any of its first 40 points, so it can reach classes no depth-8 schedule "
               "reaches",
          misconceptions=(
              wrong_answer("believing a saturated table is complete",
                           "0 takes 'saturated' for 'complete': the depth-8 search's last levels "
                           "added nothing within depth 8, and it never tried a choice at point 8 "
                           "or later; a walk does",
                           lambda want, seed: 0),
              wrong_answer("counting every class the walks find",
                           "that counts every class the walks find, those the depth-8 table has "
                           "too; the question asks for the ones it lacks",
                           lambda want, seed: len(walks().rows)),
          ))  # fmt: skip
def _ex_11_5(seed: int) -> int:
    return len(missed())


@exercise("11.6", "Your class (L.your_class(SEED)) in the table of the search bounded by moves "
          "(deviations=2,sticky=2): how many moves does its shortest schedule make, and how many "
          "choice points does it decide (its depth)? Answer [moves, depth].",
          hint="a move is a non-default choice: l<i>, L<i> or o<i>; d<n> is n default choices, "
               "no move; the depth counts every choice point the schedule decides, defaults "
               "included, from choice point 0 to its last move",
          misconceptions=(
              wrong_answer("counting default choices as moves",
                           "d<n> is n default choices, no move: count only the l, L and o tokens",
                           lambda want, seed: [want[1], want[1]]),
              wrong_answer("counting tokens as moves",
                           "a d<n> token is no move: it stands for n default choices; count "
                           "only the l, L and o tokens",
                           lambda want, seed: [len(str(next(r.schedule for r in deep_search().rows
                                                            if r.outcome == your_class(seed))
                                                       ).split()), want[1]]),
              wrong_answer("taking the last move's point for the depth",
                           "choice points count from 0: the last move's point is depth - 1 "
                           "('L1 d3 L1' decides points 0 to 4: depth 5)",
                           lambda want, seed: [want[0], want[1] - 1]),
              wrong_answer("reading the depth-8 table's schedule",
                           "that is the shortest schedule the depth-8 search found for the "
                           "class; the search bounded by moves finds one with fewer moves (a "
                           "connection kept slow, L1, is one move)",
                           lambda want, seed: _moves_depth(_depth8_schedule(your_class(seed)))),
          ))  # fmt: skip
def _ex_11_6(seed: int) -> list[int]:
    row = next(r for r in deep_search().rows if r.outcome == your_class(seed))
    return _moves_depth(row.schedule)


def _level_end(outcome: str) -> int:
    res = deep_search()
    run = next(r.found_at for r in res.rows if r.outcome == outcome)
    return next(g.total_runs for g in res.growth if g.total_runs >= run)


@exercise("11.7", "Your class again: at which run did the search bounded by moves first reach "
          "it (its growth table names the run)?",
          hint="the growth table lists, per level (the moves allowed), the classes the level "
               "added, each with '(run N)': the run that first reached it, counted from the "
               "search's start",
          misconceptions=(
              wrong_answer("taking the search's last run",
                           "that is the search's last run: having found a class, it still runs "
                           "the rest of the level, to know that nothing else is there; the "
                           "growth table's '(run N)' is when the class was found",
                           lambda want, seed: deep_search().runs),
              wrong_answer("taking the end of the class's level",
                           "that is the run that closed the class's level ('so far'); the "
                           "class itself came earlier, at '(run N)'",
                           lambda want, seed: _level_end(your_class(seed))),
              wrong_answer("taking the walk that found the class",
                           "that is the random walk that first found the class; the question "
                           "asks for the search's run",
                           lambda want, seed: next(r.found_at for r in walks().rows
                                                   if r.outcome == your_class(seed))),
          ))  # fmt: skip
def _ex_11_7(seed: int) -> int:
    return next(r.found_at for r in deep_search().rows if r.outcome == your_class(seed))
