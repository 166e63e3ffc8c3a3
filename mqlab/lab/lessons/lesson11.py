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

This module hands the notebook the searches, the outcome explorer, the duplicates of a
replayed run, and the exercises. The exercises are the same for every learner: the search
enumerates every schedule within the bounds, so there is no seed to vary.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mqlab.explore.engine import Bounds
from mqlab.explore.runners import explore
from mqlab.explore.scenarios import ExploreScenario, get_scenario
from mqlab.explore.search import SearchResult
from mqlab.lab.check import exercise

__all__ = ["SCENARIO", "AT_PERSIST", "scenario", "bounds", "search", "explorer", "duplicates",
           "one_choice", "queue1_handover"]  # fmt: skip

#: The lesson's first scenario (``python -m mqlab explore consumer_join`` runs the same search).
SCENARIO = "consumer_join"
#: The second: the join timed to meet consumer-1's first offset persist at the broker.
AT_PERSIST = "consumer_join_at_persist"
_RESULT: dict[str, SearchResult] = {}


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
