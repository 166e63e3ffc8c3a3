"""Lesson 07 — consumption, retry and the dead-letter queue (``ConsumeMessageConcurrentlyService``, ``SendMessageProcessor#asyncConsumerSendMsgBack``).

``ConsumeMessageConcurrentlyService`` splits each pulled batch into chunks of
``consumeMessageBatchMaxSize`` (1) and calls the listener once per chunk. Its answer
decides ``ackIndex`` (``processConsumeResult``, step 65-69): CONSUME_SUCCESS
acks messages ``0..context.ackIndex`` (all by default), RECONSUME_LATER acks none. In
clustering mode every message after ``ackIndex`` is sent back to the broker
(CONSUMER_SEND_MSG_BACK, ``DefaultMQPushConsumerImpl#sendMessageBack``). The broker stores it again on ``%RETRY%<group>``
with delay level ``3 + reconsumeTimes`` — parked in ``SCHEDULE_TOPIC_XXXX`` queue
``level − 1`` until due (10 s, 30 s, 1 min, 2 min, …) — and, once ``reconsumeTimes``
reaches ``maxReconsumeTimes`` (16), on ``%DLQ%<group>`` instead, where no consumer reads
it. The offset moves past the message either way: a retry is a new message.

The helpers give listeners that fail a chosen number of times or ack part of a batch, and
read retries back (deliveries per message, the schedule queues used). ``Lab(delay_levels=
"1s 1s …")`` makes every level one second so the 16 retries of a DLQ run take 17 s.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mqlab.client.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from mqlab.common.message import MessageExt
from mqlab.lab.check import Misconception, exercise
from mqlab.lab.checkers import delay_table_ms
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson01 import create_topic
from mqlab.lab.lessons.lesson05 import print_events

__all__ = [
    "TOPIC",
    "print_events",
    "FAST_LEVELS",
    "Flaky",
    "PartialAck",
    "retry_lab",
    "delivery_history",
    "schedule_queues_used",
    "retry_schedule",
    "params_07_1",
    "params_07_2",
    "params_07_3",
    "sent_back",
]

TOPIC = "Orders"
#: ``messageDelayLevel`` with all 18 levels at one second (a quick DLQ run).
FAST_LEVELS = " ".join(["1s"] * 18)


class Flaky:
    """A listener that answers RECONSUME_LATER for a message until it was retried ``fail_times``.

    Only messages whose tag is ``tags`` fail (default "Flaky"); everything else succeeds.
    ``calls`` counts listener calls.
    """

    def __init__(self, fail_times: int, *, tags: str = "Flaky") -> None:
        if not isinstance(fail_times, int) or fail_times < 0:
            raise ValueError(f"fail_times must be an int >= 0, got {fail_times!r}")
        self.fail_times = fail_times
        self.tags = tags
        self.calls = 0

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        self.calls += 1
        if any(m.tags == self.tags and m.reconsume_times < self.fail_times for m in msgs):
            return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


class PartialAck:
    """A batch listener that acks only messages ``0..ack_index`` of a first delivery.

    Sets ``context.ack_index`` and answers CONSUME_SUCCESS; retried messages
    (reconsumeTimes > 0) are acked in full, so each message is retried at most once.
    """

    def __init__(self, ack_index: int) -> None:
        self.ack_index = ack_index

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        if msgs and msgs[0].reconsume_times == 0:
            context.ack_index = self.ack_index
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


def retry_lab(seed: int, listener: Any, *, warm_up_ms: int = 0, delay_levels: str | None = None,
              **settings: Any) -> Lab:  # fmt: skip
    """TopicTest exists (one message "warm-up"), consumer-1 of CG runs ``listener``.

    The topic is created before the consumer starts, so the consumer's first rebalance
    already sees its queues (a consumer started before its topic exists waits for the next
    route refresh, up to 30 s, and the next rebalance). ``warm_up_ms``: run this long
    before returning.
    """
    lab = Lab(seed=seed, delay_levels=delay_levels)
    lab.send("TopicTest", "warm-up", tags="Warmup")
    lab.push_consumer("CG", "TopicTest", listener=listener, **settings)
    lab.advance(warm_up_ms)
    return lab


def delivery_history(lab: Lab, group: str = "CG") -> pd.DataFrame:
    """Each delivery of each message: time, gap since the previous one, from which queue."""
    d = lab.deliveries()
    d = d[d["group"] == group].sort_values(["msg_id", "t_ms"], kind="stable")
    d = d.assign(since_previous_ms=d.groupby("msg_id")["t_ms"].diff().astype("Int64"))
    cols = ["msg_id", "t_ms", "since_previous_ms", "queue", "queue_offset", "reconsume_times",
            "status"]  # fmt: skip
    return d[cols].reset_index(drop=True)


def schedule_queues_used(lab: Lab) -> list[int]:
    """The SCHEDULE_TOPIC_XXXX queue ids that received a message (queue id = delay level − 1)."""
    q = lab.queues("SCHEDULE_TOPIC_XXXX")
    return sorted(int(i) for i in q[q["max_offset"] > 0]["queue_id"])


def retry_schedule(level_string: str | None = None, retries: int = 16) -> pd.DataFrame:
    """The broker's retry plan: retry k uses level 3 + k − 1 (``asyncConsumerSendMsgBack`` step 8), its delay and the sum."""
    levels = delay_table_ms(level_string) if level_string else delay_table_ms()
    rows, total = [], 0
    for k in range(1, retries + 1):
        level = min(3 + k - 1, max(levels))
        total += levels[level]
        rows.append({"retry": k, "delay_level": level, "schedule_queue": level - 1,
                     "delay_ms": levels[level], "since_first_ms": total})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["retry", "delay_level", "schedule_queue", "delay_ms", "since_first_ms"]
    )


def sent_back(lab: Lab) -> int:
    """How many messages the consumers sent back (CONSUMER_SEND_MSG_BACK answered SUCCESS)."""
    return sum(c.stats.send_back_ok for c in lab.consumers.values())


# -- exercises -------------------------------------------------------------------------------
def params_07_1(seed: int) -> int:
    """Exercise 07.1: how many times the listener fails the message (1..4)."""
    return 1 + seed % 4


def params_07_2(seed: int) -> int:
    """Exercise 07.2: the consumer's maxReconsumeTimes (1..6)."""
    return 1 + seed // 4 % 6


def params_07_3(seed: int) -> dict[str, int]:
    """Exercise 07.3: messages in the queue (5..20), consumeMessageBatchMaxSize (3..8), ackIndex."""
    batch = 3 + seed % 6
    return {"messages": 5 + seed // 6 % 16, "batch": batch, "ack_index": seed // 96 % (batch - 1)}


# fmt: off
_MISC_07_1 = (
    Misconception("starting the retries at delay level 1",
                  "the first send-back uses delay level 3 + reconsumeTimes = 3 (10 s), not "
                  "level 1 (1 s): levels 1 and 2 are never used by retries",
                  lambda answer, want, seed: answer
                  == sum(delay_table_ms()[lvl] for lvl in range(1, 1 + params_07_1(seed))) // 1000),
)
# fmt: on


@exercise("07.1", "The listener answers RECONSUME_LATER for the message tagged Flaky until it has "
          "failed your F times, then CONSUME_SUCCESS. Default delay levels. How many seconds "
          "after its first delivery does the successful delivery come (rounded to a whole "
          "second)?",
          hint="the k-th send-back uses delay level 3 + (k − 1) — 10 s, 30 s, 1 min, 2 min … — "
               "and the retry is handed over about 0.1 s after it is due",
          misconceptions=_MISC_07_1)  # fmt: skip
def _ex_07_1(seed: int) -> int:
    with retry_lab(seed, Flaky(params_07_1(seed))) as lab:
        lab.send("TopicTest", "order-1", tags="Flaky")
        lab.advance(300_000)
        h = delivery_history(lab)
        h = h[h["msg_id"] == h["msg_id"].iloc[h["reconsume_times"].idxmax()]]
        return round((int(h["t_ms"].max()) - int(h["t_ms"].min())) / 1000)


# fmt: off
_MISC_07_2 = (
    Misconception("counting only the retries",
                  "the first delivery is not a retry: R retries plus the first delivery",
                  lambda answer, want, seed: answer[0] == want[0] - 1),
    Misconception("taking the delay level for the queue id",
                  "a message at delay level L waits in SCHEDULE_TOPIC_XXXX queue L − 1",
                  lambda answer, want, seed: list(answer[1]) == [q + 1 for q in want[1]]),
)
# fmt: on


@exercise("07.2", "Every delay level is 1 s (Lab(delay_levels=FAST_LEVELS)); the consumer's "
          "maxReconsumeTimes is your R and its listener always fails the Flaky message. How many "
          "times is the message delivered in all, and which SCHEDULE_TOPIC_XXXX queue ids did its "
          "retries pass through? Answer [deliveries, [queue ids]].",
          hint="retry k is parked at delay level 3 + (k − 1), in schedule queue level − 1; the "
               "send-back after delivery number R + 1 finds reconsumeTimes = R ≥ R and goes to "
               "%DLQ%CG, which is never parked",
          misconceptions=_MISC_07_2)  # fmt: skip
def _ex_07_2(seed: int) -> list[Any]:
    with retry_lab(seed, Flaky(100), delay_levels=FAST_LEVELS,
                   max_reconsume_times=params_07_2(seed)) as lab:  # fmt: skip
        lab.send("TopicTest", "order-1", tags="Flaky")
        lab.advance(30_000)
        d = lab.deliveries()
        return [int((d["queue"] != "TopicTest").sum() + 1), schedule_queues_used(lab)]


@exercise("07.3", "Orders (1 queue) holds your N messages before the consumer starts. "
          "consumeMessageBatchMaxSize is your B, and the listener sets context.ack_index to your "
          "k on each first delivery and answers CONSUME_SUCCESS. How many messages are sent back "
          "for a retry?",
          hint="the first pull brings all N; submitConsumeRequest cuts them into chunks of B (the "
               "last may be shorter); in a chunk of n messages, ackIndex = min(k, n − 1) and the "
               "n − 1 − ackIndex messages after it are sent back")  # fmt: skip
def _ex_07_3(seed: int) -> int:
    p = params_07_3(seed)
    with Lab(seed=seed, delay_levels=FAST_LEVELS) as lab:
        create_topic(lab, TOPIC, read_queue_nums=1, write_queue_nums=1)
        lab.send_many(TOPIC, p["messages"])
        lab.push_consumer("CG", TOPIC, listener=PartialAck(p["ack_index"]),
                          consume_message_batch_max_size=p["batch"])  # fmt: skip
        lab.advance(5_000)
        return sent_back(lab)
