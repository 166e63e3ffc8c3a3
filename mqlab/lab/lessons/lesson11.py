"""Lesson 11 — what can happen? Every outcome of a consumer joining during consumption.

The lesson's scenario is ``mqlab.explore``'s ``consumer_join``: one broker, TopicTest with 2
queues, 4 messages, consumer-1 (one consume thread, 20 ms per message) and, 10 ms into the
scenario, consumer-2 joining group CG. The exhaustive search (sequential runner, the
scenario's own bounds: depth 6, no faults, latencies 1/3 ms) takes a few seconds; this
module runs it once per process and hands the notebook its result, the outcome explorer,
the duplicate a class shows, and the exercises.

The exercises are the same for every learner: the search enumerates every schedule within
the bounds, so there is no seed to vary (the scenario's seed is fixed, as in
``mqlab.explore.scenarios``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import ExploreScenario, get_scenario
from mqlab.explore.search import SearchResult
from mqlab.lab.check import exercise

__all__ = ["SCENARIO", "scenario", "bounds", "search", "explorer", "duplicates",
           "one_choice"]  # fmt: skip

#: The lesson's scenario (``python -m mqlab explore consumer_join`` runs the same search).
SCENARIO = "consumer_join"
_RESULT: dict[str, SearchResult] = {}


def scenario() -> ExploreScenario:
    """The ``consumer_join`` explore scenario."""
    return get_scenario(SCENARIO)


def bounds() -> Bounds:
    """The scenario's own bounds: depth 6, no faults, no reorder window, latencies 1/3 ms."""
    xs = scenario()
    return Bounds(depth=xs.depth, faults=xs.fault_budget, window_ms=xs.window_ms)


def search(*, progress: bool = False) -> SearchResult:
    """The exhaustive search of the scenario on the sequential runner (run once, then kept)."""
    if SCENARIO not in _RESULT:
        _RESULT[SCENARIO] = explore(scenario(), bounds(), runner="sequential", progress=progress)
    return _RESULT[SCENARIO]


def explorer(result: SearchResult | None = None, *, select: str | None = None,
             plot_mode: str | None = None) -> Any:  # fmt: skip
    """The outcome explorer on the search's result (``select``: a class replayed at once)."""
    from mqlab.lab.outcome_explorer import outcome_explorer

    return outcome_explorer(result or search(), scenario(), select=select, plot_mode=plot_mode)


def duplicates(lab: Any) -> pd.DataFrame:
    """The duplicates of a replayed run, as ``find_duplicates`` reports them (group CG)."""
    from mqlab.lab.checkers import find_duplicates

    cols = ["queue_id", "queue_offset", "first_t_ms", "first_consumer", "again_t_ms",
            "again_consumer", "cause"]  # fmt: skip
    return find_duplicates(lab, "CG").findings[cols]


def one_choice(schedule: str) -> list[Any]:
    """The non-default choices of a shortest schedule: [[choice point, what it picked], ...]."""
    from mqlab.lab.outcome_explorer import replay_prefix

    rep = replay_prefix(scenario(), schedule)
    return [[p.index, p.labels[p.chosen]] for p in rep.points if p.chosen != 0]


def _keys(outcome: str) -> set[str]:
    return set() if outcome == "ok" else {part.split("=")[0] for part in outcome.split()}


@exercise("11.1", "consumer-2 joins group CG while consumer-1 consumes 4 messages on 2 queues. "
          "The search tries every choice of the first 6 choice points (each frame's latency: 1 "
          "or 3 ms). How many distinct outcome classes (rows of the outcome table) does it find?",
          hint="an outcome class is a set of non-zero counts (lost, dup:<cause>, order, overlap, "
               "retry, dlq), not a run and not a final state: if you answered 31 you counted "
               "runs, 9 is the distinct final states; 1 would mean no latency changes anything, "
               "and 64 (2^6) forgets that most choices lead to the same counts")  # fmt: skip
def _ex_11_1(seed: int) -> int:
    return len(search().rows)


@exercise("11.2", "How many of the outcome classes have no duplicate (no dup:… count)? In other "
          "words: can any schedule within the bounds avoid delivering a message twice?",
          hint="look at the outcome column: a class without 'dup:' would be a schedule where "
               "consumer-2 starts from an offset consumer-1 committed after consuming. "
               "consumer-1 takes 20 ms per message and commits an offset only after a message "
               "is consumed (and sends it asynchronously), so when the queue moves the "
               "message in its listener is still below the broker's offset")  # fmt: skip
def _ex_11_2(seed: int) -> int:
    return sum(not any(k.startswith("dup:") for k in _keys(r.outcome)) for r in search().rows)


@exercise("11.3", "The class without an overlap has a shortest schedule with one non-default "
          "choice. Which choice point is it (counting from 0), and what latency in ms does it "
          "give its frame? Answer [choice point, ms].",
          hint="select the class in the explorer and step it with 'next choice': the outcome "
               "changes at exactly one step; the choice list says which frame it is "
               "(sender->receiver and the latency); 'dN' means N default choices first, so "
               "'d5 l1' changes point 5, not 6, and l1 is the second latency of the set 1/3, "
               "not 1 ms")  # fmt: skip
def _ex_11_3(seed: int) -> list[int]:
    row = next(r for r in search().rows if "overlap" not in _keys(r.outcome))
    ((point, label),) = one_choice(str(row.schedule))
    return [point, int(label.split()[-2])]
