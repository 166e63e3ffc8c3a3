"""Lesson 05 — rebalancing and allocation strategies (``RebalanceService``, ``RebalanceImpl``, ``AllocateMessageQueue*``).

Each push consumer decides on its own which queues it pulls. ``RebalanceService`` runs
``MQClientInstance#doRebalance`` every 20 s (``waitInterval``), once when the consumer
starts, and whenever the broker sends ``NOTIFY_CONSUMER_IDS_CHANGED`` (a consumer joined or
left). ``RebalanceImpl#rebalanceByTopic`` asks the broker for the group's client ids, sorts
them and the topic's queues (step 21-40), and hands both lists to the group's
``AllocateMessageQueueStrategy`` (step 42-61; the steps are in notebooks/mechanisms.md); ``updateProcessQueueTableInRebalance``
then drops the queues it lost and starts pulling the ones it gained.

The helpers build a group on a topic with a chosen number of queues, read who holds what,
lay every strategy of ``mqlab.client.allocate`` side by side (pure functions, the same
inputs each consumer computes from), and count how many queues change owner when one more
consumer joins. What they must not know: pulls, offsets, consumption (lessons 06–08).
``replay_schedule`` is the exception: it replays one schedule of a ready-made
``python -m mqlab explore`` scenario and hands back what the delivery checkers read
(lessons 02 and 07 use it too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from mqlab.client.allocate import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
    AllocateMessageQueueStrategy,
    allocate_all,
)
from mqlab.common.message import MessageQueue
from mqlab.lab.check import Misconception, exercise
from mqlab.lab.figures import allocation_heatmap_frame
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson01 import create_topic

__all__ = [
    "TOPIC",
    "STRATEGIES",
    "strategy",
    "client_id",
    "group_lab",
    "print_events",
    "owners",
    "queues_of",
    "strategy_table",
    "moved_on_join",
    "join_moves",
    "overlap_ms",
    "params_05_1",
    "params_05_3",
    "params_05_4",
    "Replayed",
    "replay_schedule",
]

#: The topic the exercises create with a chosen number of queues.
TOPIC = "Orders"

#: The strategies a lab consumer can be given, by their ``getName()``.
STRATEGIES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH")


def strategy(name: str) -> AllocateMessageQueueStrategy:
    """A strategy object by its RocketMQ name ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH")."""
    table: dict[str, Any] = {
        "AVG": AllocateMessageQueueAveragely,
        "AVG_BY_CIRCLE": AllocateMessageQueueAveragelyByCircle,
        "CONSISTENT_HASH": AllocateMessageQueueConsistentHash,
    }
    if name not in table:
        raise ValueError(f"strategy must be one of {sorted(table)}, got {name!r}")
    return table[name]()


def client_id(n: int) -> str:
    """The client id of the lab's ``consumer-n`` (``MQClientInstance`` ip@instanceName)."""
    return f"127.0.0.1@consumer-{n}"


def group_lab(
    seed: int,
    *,
    queues: int = 4,
    consumers: int = 2,
    strategy_name: str = "AVG",
    gap_ms: int = 2_000,
    topic: str = TOPIC,
    broker: dict[str, Any] | None = None,
) -> Lab:
    """A lab with ``topic`` of ``queues`` queues and ``consumers`` consumers of group CG.

    Consumers join ``gap_ms`` apart (consumer-1 first); the lab then runs ``gap_ms`` more,
    so every consumer has rebalanced after the last join (the broker's notify wakes them).
    """
    if not 1 <= consumers <= 9:
        raise ValueError(f"consumers must be 1..9 (client ids sort as text), got {consumers!r}")
    lab = Lab(seed=seed, broker=broker)
    create_topic(lab, topic, read_queue_nums=queues, write_queue_nums=queues)
    for _ in range(consumers):
        lab.push_consumer("CG", topic, allocate_message_queue_strategy=strategy(strategy_name))
        lab.advance(gap_ms)
    return lab


def print_events(frame: pd.DataFrame, *, limit: int | None = 40) -> None:
    """Print trace events one per line, in full (a notebook table cuts long text).

    ``frame`` is ``lab.events(...)`` or a slice of it: ``t_ms``, ``node``, ``text`` and, if
    present, ``component`` and ``step``. Later lessons use it too.
    """
    rows = frame if limit is None else frame.head(limit)
    for r in rows.to_dict("records"):
        where = " ".join(str(r[k]) for k in ("component", "step") if k in r and r[k] != "")
        print(f"t={r['t_ms']:>6}  {r['node']:<11} " + (f"{where}: " if where else "") + r["text"])
    if limit is not None and len(frame) > limit:
        print(f"… and {len(frame) - limit} more")


def owners(lab: Lab, topic: str = TOPIC) -> dict[int, str]:
    """Queue id → the consumer holding it now.

    A queue two consumers hold shows both, joined by " + " (a rebalance overlap); a queue
    nobody holds is absent.
    """
    a = lab.allocation()
    a = a[a["topic"] == topic]
    held: dict[int, list[str]] = {}
    for q, c in sorted(zip(a["queue_id"], a["consumer"], strict=True)):
        held.setdefault(int(q), []).append(str(c))
    return {q: " + ".join(cs) for q, cs in held.items()}


def queues_of(lab: Lab, consumer: str, topic: str = TOPIC) -> list[int]:
    """The queue ids of ``topic`` that ``consumer`` holds now, sorted."""
    return sorted(q for q, c in owners(lab, topic).items() if consumer in c.split(" + "))


def strategy_table(queues: int = 4, consumers: int = 3, topic: str = TOPIC) -> pd.DataFrame:
    """Every strategy of ``mqlab.client.allocate`` on the same inputs: who gets which queue.

    Rows are queues, columns strategies, cells the consumers (``consumer-n``) that take the
    queue (several joined by " + ", "" for nobody). Each consumer runs the strategy on the
    sorted queues and sorted client ids, as ``rebalanceByTopic`` does.

    CONFIG is ``AllocateMessageQueueByConfig`` with every consumer configured to queue 0: it
    ignores the group, so all of them take queue 0. MACHINE_ROOM is
    ``AllocateMessageQueueByMachineRoom(consumeridcs={"idc1"})`` on the same queue ids, but
    with the broker named ``"idc1@broker-a"`` (it keeps only brokers named ``<idc>@<name>``
    whose idc it consumes from; a plain "broker-a" gives everyone nothing).
    """
    mqs = [MessageQueue(topic, "broker-a", q) for q in range(queues)]
    room_mqs = [MessageQueue(topic, "idc1@broker-a", q) for q in range(queues)]
    cids = [client_id(n) for n in range(1, consumers + 1)]
    columns: dict[str, dict[str, list[MessageQueue]]] = {
        "AVG": allocate_all(AllocateMessageQueueAveragely(), "CG", mqs, cids),
        "AVG_BY_CIRCLE": allocate_all(AllocateMessageQueueAveragelyByCircle(), "CG", mqs, cids),
        "CONSISTENT_HASH": allocate_all(AllocateMessageQueueConsistentHash(), "CG", mqs, cids),
        "CONFIG": allocate_all(AllocateMessageQueueByConfig(mqs[:1]), "CG", mqs, cids),
        "MACHINE_ROOM": allocate_all(
            AllocateMessageQueueByMachineRoom({"idc1"}), "CG", room_mqs, cids
        ),
    }
    rows = []
    for q in range(queues):
        row: dict[str, Any] = {"queue_id": q}
        for name, shares in columns.items():
            takers = [cid for cid, got in shares.items() if any(m.queue_id == q for m in got)]
            row[name] = " + ".join(c.split("@", 1)[1] for c in takers)
        rows.append(row)
    return pd.DataFrame(rows, columns=["queue_id", *columns])


def moved_on_join(before: dict[int, str], after: dict[int, str]) -> int:
    """How many queues changed owner between two ``owners`` snapshots."""
    return sum(before.get(q) != after.get(q) for q in sorted(set(before) | set(after)))


def join_moves(
    seed: int, *, queues: int, strategy_name: str, consumers: int = 2
) -> tuple[dict[int, str], dict[int, str], int]:
    """``consumers`` consumers hold ``queues`` queues; one more joins. Owners before, after, moved."""
    with group_lab(seed, queues=queues, consumers=consumers, strategy_name=strategy_name) as lab:
        before = owners(lab)
        lab.push_consumer("CG", TOPIC, allocate_message_queue_strategy=strategy(strategy_name))
        lab.advance(2_000)
        after = owners(lab)
    return before, after, moved_on_join(before, after)


def overlap_ms(lab: Lab, topic: str = "TopicTest") -> int:
    """How long (ms) some queue of ``topic`` was claimed by two consumers at once, in total.

    Read from ``allocation_heatmap_frame``: the sum, over the snapshots in which any queue
    had two owners, of the time until the next snapshot.
    """
    df = allocation_heatmap_frame(lab, topic=topic)
    if df.empty:
        return 0
    times = sorted(set(df["t_ms"]))
    doubled = set(df[df["owners"] > 1]["t_ms"])
    total = 0
    for t, nxt in zip(times, [*times[1:], lab.now], strict=True):
        if t in doubled:
            total += nxt - t
    return total


# -- exercises -------------------------------------------------------------------------------
def params_05_1(seed: int) -> dict[str, int]:
    """Exercises 05.1/05.2: the topic's queue count (5..12) and the group size (2..4)."""
    return {"queues": 5 + seed % 8, "consumers": 2 + (seed // 8) % 3}


def _circle_05(seed: int) -> list[int]:
    """consumer-2's queues under AVG_BY_CIRCLE with exercise 05.1's numbers."""
    p = params_05_1(seed)
    return [i for i in range(p["queues"]) if i % p["consumers"] == 1]


def params_05_3(seed: int) -> int:
    """Exercise 05.3: queues of the topic two consumers share before a third joins (4..12)."""
    return 4 + seed % 9


def params_05_4(seed: int) -> int:
    """Exercise 05.4: when consumer-2 joins (ms; 3 000..17 000 in whole seconds)."""
    return 3_000 + 1_000 * (seed % 15)


# fmt: off
_MISC_05_1 = (
    Misconception("dealing the queues out like cards",
                  "that is AllocateMessageQueueAveragelyByCircle (exercise 05.2); AVG gives each "
                  "consumer one contiguous block of queue ids",
                  lambda answer, want, seed: list(answer) == _circle_05(seed) != want),
)
# fmt: on


@exercise("05.1", "Topic Orders has your Q queues and group CG your C consumers (consumer-1 … "
          "consumer-C), with the default AllocateMessageQueueAveragely. Which queue ids does "
          "consumer-2 hold once they have all rebalanced? Answer a sorted list of ints.",
          hint="rebalanceByTopic sorts the client ids (consumer-2 is index 1); AVG gives each "
               "consumer a contiguous block: Q // C queues, and the first Q % C consumers one "
               "more, starting where the previous block ended",
          misconceptions=_MISC_05_1)  # fmt: skip
def _ex_05_1(seed: int) -> list[int]:
    p = params_05_1(seed)
    with group_lab(seed, queues=p["queues"], consumers=p["consumers"]) as lab:
        return queues_of(lab, "consumer-2")


# fmt: off
_MISC_05_2 = (
    Misconception("a contiguous block",
                  "that is AllocateMessageQueueAveragely (exercise 05.1); BY_CIRCLE deals the "
                  "queues out one at a time: queue i goes to the consumer at index i % C",
                  lambda answer, want, seed: list(answer) == _ex_05_1(seed) != want),
)
# fmt: on


@exercise("05.2", "The same topic and group, but every consumer uses "
          "AllocateMessageQueueAveragelyByCircle. Which queue ids does consumer-2 hold?",
          hint="AVG_BY_CIRCLE deals the sorted queues out like cards: queue i goes to the "
               "consumer at index i % C",
          misconceptions=_MISC_05_2)  # fmt: skip
def _ex_05_2(seed: int) -> list[int]:
    p = params_05_1(seed)
    with group_lab(seed, queues=p["queues"], consumers=p["consumers"],
                   strategy_name="AVG_BY_CIRCLE") as lab:  # fmt: skip
        return queues_of(lab, "consumer-2")


@exercise("05.3", "Two consumers share a topic of your Q queues; then consumer-3 joins. How many "
          "queues change owner with AVG, and how many with CONSISTENT_HASH? Answer [avg, hash].",
          hint="for AVG compare the contiguous blocks for 2 and for 3 consumers; for the hash "
               "ring compute both allocations with strategy_table(Q, 2) and strategy_table(Q, 3) "
               "(or allocate_all) and count the rows whose owner differs")  # fmt: skip
def _ex_05_3(seed: int) -> list[int]:
    q = params_05_3(seed)
    return [
        join_moves(seed, queues=q, strategy_name=name)[2] for name in ("AVG", "CONSISTENT_HASH")
    ]


@exercise("05.4", "The broker's notifyConsumerIdsChangedEnable is off. consumer-1 starts at about "
          "9 ms on TopicTest (4 queues); consumer-2 joins at your J ms. For how many seconds "
          "(rounded to a whole number) are queues 2 and 3 claimed by both consumers?",
          hint="without the notify, consumer-1 only rebalances on its RebalanceService timer: "
               "once at start (about 13 ms) and then every 20 000 ms; consumer-2 takes its queues "
               "a few ms after it starts")  # fmt: skip
def _ex_05_4(seed: int) -> int:
    with Lab(seed=seed, broker={"notify_consumer_ids_changed_enable": False}) as lab:
        lab.send_many("TopicTest", 4)
        lab.push_consumer("CG", "TopicTest")
        lab.advance(params_05_4(seed) - lab.now)
        lab.push_consumer("CG", "TopicTest")
        lab.advance(25_000)
        return round(overlap_ms(lab) / 1000)


@dataclass(frozen=True)
class Replayed:
    """One replayed schedule: its outcome class and what the checkers read from the run.

    ``outcome``: the explorer's label (``"ok"``, ``"dup:rebalance=1 overlap=1"``, …);
    ``deliveries``: ``Lab.deliveries()`` (every listener call); ``duplicates``:
    ``find_duplicates(lab).findings`` (cause per repeated delivery); ``events``:
    ``Lab.events()`` of the run.
    """

    outcome: str
    deliveries: pd.DataFrame
    duplicates: pd.DataFrame
    events: pd.DataFrame


def replay_schedule(name: str, schedule: str = "", *, drain_ms: int | None = None) -> Replayed:
    """Replay ``schedule`` of the explorer's scenario ``name`` (``python -m mqlab explore
    --list``) into a lab, exactly as ``python -m mqlab explore NAME --replay SCHEDULE`` does.

    ``schedule`` is a row's "shortest schedule" ("" or "(default)": the seed's own run).
    ``drain_ms`` ends the run earlier (or later) than the scenario's own drain time.
    """
    import dataclasses

    from mqlab.explore.scenarios import get_scenario
    from mqlab.explore.search import replay
    from mqlab.lab.checkers import find_duplicates

    xs = get_scenario(name)
    if drain_ms is not None:
        if drain_ms < 0:
            raise ValueError(f"drain_ms must be >= 0, got {drain_ms!r}")
        xs = dataclasses.replace(xs, scenario=dataclasses.replace(xs.scenario, drain_ms=drain_ms))
    seen: dict[str, pd.DataFrame] = {}

    def look(lab: Lab) -> None:
        seen["deliveries"] = lab.deliveries()
        seen["duplicates"] = find_duplicates(lab).findings
        seen["events"] = lab.events()

    rec = replay(xs, "" if schedule == "(default)" else schedule, on_lab=look)
    return Replayed(str(rec.outcome), seen["deliveries"], seen["duplicates"], seen["events"])
