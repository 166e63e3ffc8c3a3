"""Lesson 08 — offsets and consume-from-where (``computePullFromWhere``, the offset stores).

A consumer's progress per queue is the *offset*: the next queue offset to consume (the
smallest offset still in the ProcessQueue, or one past the last). Where it lives depends
on the message model (the consumer's progress):

* clustering → ``RemoteBrokerOffsetStore``: kept in memory, sent to the broker by the 5 s
  ``MQClientInstance#persistAllConsumerOffset`` timer (oneway UPDATE_CONSUMER_OFFSET), and
  also piggybacked on every pull once it is above 0 (``commitOffset`` with the
  COMMIT_OFFSET sysFlag; the broker stores it in step 11 of pull processing);
* broadcasting → ``LocalFileOffsetStore``: ``offsets.json`` in the client's directory, and
  the broker never hears of it.

When a queue is (re)assigned, ``RebalancePushImpl#computePullFromWhere`` reads the stored
offset. Only if there is none does ``consumeFromWhere`` matter — and for a
clustering group the broker's QUERY_CONSUMER_OFFSET answers 0, not "none", while the
queue's min offset is still 0 (the new-group rule, ``ConsumerManageProcessor#queryConsumerOffset``), so even
CONSUME_FROM_LAST_OFFSET starts at 0 on a young topic.

The helpers start groups under each consume-from-where, read the local offsets file, and
crash a slow consumer (one consume thread) between two persists to count the duplicates.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mqlab.lab.check import Misconception, exercise
from mqlab.lab.checkers import find_duplicates
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson01 import create_topic
from mqlab.lab.lessons.lesson05 import print_events

__all__ = [
    "TOPIC",
    "print_events",
    "CONSUME_FROM",
    "start_lab",
    "local_offsets",
    "committed_offset",
    "crash_lab",
    "steady_crash_lab",
    "crash_duplicates",
    "WALK_TOPIC",
    "walk_lab",
    "params_08_1",
    "params_08_2",
    "params_08_3",
]

TOPIC = "Orders"
#: The three consume-from-where options that are not deprecated (``ConsumeFromWhere``).
CONSUME_FROM = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP")


def start_lab(seed: int, *, old: int, new: int, consumers: int = 1, group: str = "CG",
              **settings: Any) -> Lab:  # fmt: skip
    """TopicTest holds ``old`` messages; ``consumers`` consumers of ``group`` start; ``new`` more.

    Settings go to every consumer (``consume_from_where``, ``message_model`` …). The lab
    runs 12 s after the last send, long enough for a persist.
    """
    lab = Lab(seed=seed)
    lab.send_many("TopicTest", old, body="old-{i}")
    for _ in range(consumers):
        lab.push_consumer(group, "TopicTest", **settings)
    lab.advance(1_000)
    lab.send_many("TopicTest", new, body="new-{i}")
    lab.advance(12_000)
    return lab


def local_offsets(lab: Lab, consumer: str) -> pd.DataFrame:
    """A broadcasting consumer's offsets.json: its path, and queue → offset."""
    c = lab.consumer(consumer)
    store = c.default_mq_push_consumer_impl.offset_store
    path = getattr(store, "store_path", None)
    if path is None:
        raise ValueError(f"{consumer} keeps its offsets on the broker (clustering), not in a file")
    rows = [{"file": str(path), "topic": mq.topic, "queue_id": mq.queue_id, "offset": off}
            for mq, off in sorted(store.offset_table.items())]  # fmt: skip
    return pd.DataFrame(rows, columns=["file", "topic", "queue_id", "offset"])


#: The topic of section 5's walk (the panel's default topic).
WALK_TOPIC = "TopicTest"


def walk_lab(seed: int) -> Lab:
    """Section 5's lab: TopicTest (4 queues) created and empty, no consumer yet.

    The learner adds a slow consumer with the panel, sends, kills it, and adds a second one
    that takes the queues over; ``find_duplicates(walk, "CG")`` then counts that run only.
    """
    lab = Lab(seed=seed)
    create_topic(lab, WALK_TOPIC)
    return lab


def committed_offset(lab: Lab, topic: str = TOPIC, queue_id: int = 0, group: str = "CG") -> int:
    """The broker's committed offset for (group, topic, queue); −1 if it has none."""
    o = lab.consumer_offsets()
    o = o[(o["group"] == group) & (o["topic"] == topic) & (o["queue_id"] == queue_id)]
    return int(o["offset"].iloc[0]) if len(o) else -1


def crash_lab(seed: int, *, consume_time_ms: int, kill_after_ms: int,
              persist_first: bool = False, messages: int = 64) -> Lab:  # fmt: skip
    """A slow consumer (one consume thread) is killed; a second consumer takes over.

    Orders (1 queue) holds ``messages`` messages; consumer-1 of CG starts, each listener call
    takes ``consume_time_ms``, it is killed ``kill_after_ms`` after it started
    (``persist_first``: it committed its offsets just before), consumer-2 starts at once and
    the lab runs 40 s more.
    """
    lab = Lab(seed=seed)
    create_topic(lab, TOPIC, read_queue_nums=1, write_queue_nums=1)
    lab.send_many(TOPIC, messages)
    start = lab.now
    lab.push_consumer("CG", TOPIC, consume_time_ms=consume_time_ms, consume_thread_min=1,
                      consume_thread_max=1)  # fmt: skip
    lab.advance(start + kill_after_ms - lab.now)
    lab.kill_consumer("consumer-1", persist_first=persist_first)
    lab.push_consumer("CG", TOPIC)
    lab.advance(40_000)
    return lab


def steady_crash_lab(seed: int, *, consume_time_ms: int, messages: int = 20,
                     interval_ms: int = 200) -> Lab:  # fmt: skip
    """Messages arrive one by one while consumer-1 consumes; it dies before its first persist.

    Orders (1 queue); consumer-1 (one consume thread, ``consume_time_ms`` per message)
    starts, ``messages`` messages are sent ``interval_ms`` apart, consumer-1 is killed right
    after the last send — before the 5 s timer's first persist at 10 s — and consumer-2
    takes over for 20 s. Each pull consumer-1 sent carried its in-memory offset.
    """
    lab = Lab(seed=seed)
    create_topic(lab, TOPIC, read_queue_nums=1, write_queue_nums=1)
    lab.send(TOPIC, "first")
    lab.push_consumer("CG", TOPIC, consume_time_ms=consume_time_ms, consume_thread_min=1,
                      consume_thread_max=1)  # fmt: skip
    lab.advance(100)
    lab.send_many(TOPIC, messages, interval_ms=interval_ms)
    lab.kill_consumer("consumer-1")
    lab.push_consumer("CG", TOPIC)
    lab.advance(20_000)
    return lab


def crash_duplicates(lab: Lab) -> int:
    """Deliveries find_duplicates blames on the crash (not intended retries)."""
    f = find_duplicates(lab, "CG").findings
    return int((f["cause"] == "crash before offset persist").sum())


# -- exercises -------------------------------------------------------------------------------
def params_08_1(seed: int) -> dict[str, Any]:
    """Exercise 08.1: old messages (5..20), new messages (1..8) and the consume-from-where."""
    return {"old": 5 + seed % 16, "new": 1 + seed // 16 % 8,
            "consume_from_where": CONSUME_FROM[seed // 128 % 3]}  # fmt: skip


def params_08_2(seed: int) -> dict[str, Any]:
    """Exercise 08.2: old (5..20), new (1..8), consumers (2..3), LAST or FIRST offset."""
    return {"old": 5 + seed % 16, "new": 1 + seed // 16 % 8, "consumers": 2 + seed // 128 % 2,
            "consume_from_where": CONSUME_FROM[seed // 256 % 2]}  # fmt: skip


def params_08_3(seed: int) -> dict[str, int]:
    """Exercise 08.3: ms per listener call (400..900) and when the kill comes (11.5..19.5 s)."""
    return {
        "consume_time_ms": 400 + 100 * (seed % 6),
        "kill_after_ms": 11_500 + 1_000 * (seed // 6 % 9),
    }


# fmt: off
_MISC_08_1 = (
    Misconception("letting consumeFromWhere decide",
                  "consumeFromWhere only applies when the broker has no offset; for a new group "
                  "on a young topic it answers 0, and an offset ≥ 0 wins, so the old messages "
                  "are consumed too",
                  lambda answer, want, seed: answer == params_08_1(seed)["new"] != want),
)
# fmt: on


@exercise("08.1", "TopicTest holds your N old messages. A brand-new clustering group CG starts "
          "with your consumeFromWhere; then M new messages are sent. How many messages does the "
          "group consume?",
          hint="computePullFromWhere first reads the stored offset (QUERY_CONSUMER_OFFSET); for a "
               "group with no offset the broker answers 0 — not 'not found' — while the queue's "
               "min offset is 0 and its first message is within the last 40 % of RAM of the commit "
               "log (checkInDiskByConsumeOffset is a distance-from-the-end test, not a flush "
               "test; by default mqlab keeps everything in memory), and an offset ≥ 0 wins over "
               "consumeFromWhere",
          misconceptions=_MISC_08_1)  # fmt: skip
def _ex_08_1(seed: int) -> int:
    p = params_08_1(seed)
    with start_lab(seed, old=p["old"], new=p["new"],
                   consume_from_where=p["consume_from_where"]) as lab:  # fmt: skip
        return len(lab.deliveries())


# fmt: off
_MISC_08_2 = (
    Misconception("expecting broadcasting offsets on the broker",
                  "a BROADCASTING consumer keeps its offsets in LocalFileOffsetStore "
                  "(offsets.json); the broker never sees them",
                  lambda answer, want, seed: answer[0] == want[0] and answer[1] != 0),
    Misconception("sharing the messages among the consumers",
                  "BROADCASTING delivers every message to every consumer",
                  lambda answer, want, seed: answer[0] * params_08_2(seed)["consumers"]
                  == want[0]),
)
# fmt: on


@exercise("08.2", "The same N old and M new messages, but your K consumers of group BG are "
          "BROADCASTING with your consumeFromWhere. How many deliveries are there in all, and "
          "how many rows does lab.consumer_offsets() (the broker's offsets) show for BG? "
          "Answer [deliveries, rows].",
          hint="a broadcasting consumer uses LocalFileOffsetStore: with no offsets.json the stored "
               "offset is −1, so consumeFromWhere decides (LAST → the queue's max offset via "
               "GET_MAX_OFFSET, FIRST → 0) and every consumer gets every message; its offsets "
               "never go to the broker",
          misconceptions=_MISC_08_2)  # fmt: skip
def _ex_08_2(seed: int) -> list[int]:
    p = params_08_2(seed)
    with start_lab(seed, old=p["old"], new=p["new"], consumers=p["consumers"], group="BG",
                   message_model="BROADCASTING",
                   consume_from_where=p["consume_from_where"]) as lab:  # fmt: skip
        o = lab.consumer_offsets()
        return [len(lab.deliveries()), int((o["group"] == "BG").sum())]


@exercise("08.3", "Orders (1 queue) holds 64 messages. consumer-1 (one consume thread, your D ms "
          "per message) starts, and is killed your K ms later; consumer-2 of the same group takes "
          "over at once. How many messages are delivered twice (a) if consumer-1 did not persist "
          "before dying, (b) if it persisted its offsets just before (persist_first=True)? "
          "Answer [a, b].",
          hint="the first delivery comes about 10 ms after the start, then one every D ms; the "
               "5 s persist timer first fires 10 s after the start; pulls here commit nothing: "
               "all 64 messages come in the first two pulls, sent while the in-memory offset "
               "was 0, and a pull carries it only once it is above 0; the committed offset is the "
               "lowest offset still in the ProcessQueue, and a message in the listener when the "
               "kill comes was delivered but not consumed")  # fmt: skip
def _ex_08_3(seed: int) -> list[int]:
    p = params_08_3(seed)
    out = []
    for persist in (False, True):
        with crash_lab(seed, persist_first=persist, **p) as lab:
            out.append(crash_duplicates(lab))
    return out
