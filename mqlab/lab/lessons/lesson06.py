"""Lesson 06 — the consumer pull loop and flow control (``PullMessageService``, ``DefaultMQPushConsumerImpl#pullMessage``, ``ProcessQueue``).

``PullMessageService`` takes one ``PullRequest`` at a time from its queue and calls
``DefaultMQPushConsumerImpl#pullMessage``. Before sending PULL_MESSAGE it checks the
request's ``ProcessQueue`` (the consumer-side copy of the queue: a tree map offset →
message) and defers the pull by ``PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL`` = 50 ms when
more than ``pullThresholdForQueue`` (1 000) messages or ``pullThresholdSizeForQueue``
(100 MiB) are cached, or, for concurrent consumers, when the offsets in the map span more
than ``consumeConcurrentlyMaxSpan`` (2 000) (step 2.1). The ``PullCallback``
then acts on the status (step 2.6): FOUND → cache, hand to the consume service, pull
again at once; NO_NEW_MSG / NO_MATCHED_MSG → move the offset, pull again; OFFSET_ILLEGAL →
drop the queue and fix its offset 10 s later.

The helpers make a one-queue topic, a consumer whose listener is slow (``consume_time_ms``)
so its ProcessQueue fills, a listener stuck on one message (the span grows while the count
stays small), a pre-set committed offset (to see each PullCallback status), and read the
pull loop back from the trace. Thresholds are lowered in the exercises so a run stays small.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from mqlab.common.message import MessageExt
from mqlab.lab.check import Misconception, exercise, wrong_answer
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson01 import create_topic
from mqlab.lab.lessons.lesson05 import print_events
from mqlab.runtime.raw_client import Call

__all__ = [
    "TOPIC",
    "print_events",
    "PULL",
    "create_topic",
    "one_queue_lab",
    "stuck_on",
    "pull_log",
    "first_flow_control",
    "set_committed_offset",
    "first_status",
    "params_06_1",
    "params_06_2",
    "params_06_3",
    "status_lab",
    "PULL_LOOP",
    "walk_lab",
]

#: A topic with one queue, so one ProcessQueue tells the whole story.
TOPIC = "Orders"
#: The trace component of the pull loop (steps 2–2.6).
PULL = "DefaultMQPushConsumerImpl.pullMessage"
#: What the section-4 panel's log keeps line by line: the pull loop (step 2.1 flow control,
#: 2.5 pull sent, 2.6 the PullCallback) and the broker's ``PullRequestHoldService`` (a pull
#: parked, woken, timed out or dropped); everything else is folded.
PULL_LOOP = (PULL, "PullRequestHoldService")


def one_queue_lab(seed: int, messages: int, *, topic: str = TOPIC, **lab_args: Any) -> Lab:
    """A lab with ``topic`` (1 queue) holding ``messages`` messages ``msg-0`` … and no consumer."""
    lab = Lab(seed=seed, **lab_args)
    create_topic(lab, topic, read_queue_nums=1, write_queue_nums=1)
    if messages:
        lab.send_many(topic, messages)
    return lab


def walk_lab(seed: int) -> Lab:
    """Section 4's lab: ``Orders`` with one empty queue and no consumer yet, so the consumer
    the learner adds owns the queue and every pull of the loop happens on a click."""
    return one_queue_lab(seed, 0)


def stuck_on(offset: int = 0, stuck_ms: int = 600_000) -> Callable[[list[MessageExt]], int]:
    """A ``consume_time_ms`` for a listener that hangs on the message at queue ``offset``.

    Every other message takes 0 ms; the stuck one ``stuck_ms`` (10 minutes by default), so
    it stays in the ProcessQueue while the offsets after it come and go.
    """

    def consume_time(msgs: list[MessageExt]) -> int:
        return stuck_ms if any(m.queue_offset == offset for m in msgs) else 0

    return consume_time


def pull_log(lab: Lab, topic: str = TOPIC, *, limit: int | None = 20) -> pd.DataFrame:
    """The pull loop of ``topic`` in words: time, consumer, step, what happened."""
    ev = lab.events(component=PULL)
    ev = ev[ev["text"].str.contains(f"{topic}/", regex=False)]
    ev = ev[["t_ms", "node", "step", "text"]].reset_index(drop=True)
    return ev if limit is None else ev.head(limit)


def first_flow_control(lab: Lab, kind: str | None = None) -> dict[str, Any] | None:
    """The fields of the first flow-control event (``kind`` "count", "size", "span" or any)."""
    for e in lab.trace.events:
        if e.component == PULL and e.step == "2.1" and "flow_control" in e.fields:
            if kind is None or e.fields["flow_control"] == kind:
                return {"t_ms": e.t_ms, "node": e.node, **e.fields}
    return None


def set_committed_offset(lab: Lab, offset: int, *, topic: str = TOPIC, queue_id: int = 0,
                         group: str = "CG") -> Call:  # fmt: skip
    """UPDATE_CONSUMER_OFFSET: the broker stores ``offset`` for the group (as a commit would)."""
    fields = {"consumerGroup": group, "topic": topic, "queueId": queue_id, "commitOffset": offset}
    return lab.request("broker-a", "UPDATE_CONSUMER_OFFSET", fields)


def first_status(lab: Lab, topic: str = TOPIC) -> str | None:
    """The PullStatus of the first answered pull of ``topic`` (FOUND, NO_NEW_MSG, …)."""
    for e in lab.trace.events:
        if (e.component == PULL and e.step == "2.6" and "status" in e.fields
                and f"{topic}," in str(e.fields.get("mq"))):  # fmt: skip
            return str(e.fields["status"])
    return None


# -- exercises -------------------------------------------------------------------------------
def params_06_1(seed: int) -> dict[str, int]:
    """Exercise 06.1: pullBatchSize (8..32) and pullThresholdForQueue (40..150)."""
    return {
        "pull_batch_size": 8 + seed % 25,
        "pull_threshold_for_queue": 40 + 10 * (seed // 25 % 12),
    }


def params_06_2(seed: int) -> int:
    """Exercise 06.2: consumeConcurrentlyMaxSpan (100..300)."""
    return 100 + 10 * (seed % 21)


def params_06_3(seed: int) -> dict[str, int]:
    """Exercise 06.3: messages in the queue (20..39) and the offset committed before start."""
    m = 20 + seed % 20
    d = 1 + seed // 20 % 5
    return {"messages": m, "committed": (m - d, m, m + d)[seed // 100 % 3]}


# fmt: off
_MISC_06_1 = (
    Misconception("a cache that stops exactly at the threshold",
                  "the cache grows by whole batches of pullBatchSize, and a pull is deferred only "
                  "once the count is *greater than* pullThresholdForQueue",
                  lambda answer, want, seed: answer in (params_06_1(seed)["pull_threshold_for_queue"],
                                                        params_06_1(seed)["pull_threshold_for_queue"]
                                                        + 1)),
    wrong_answer("deferring at or before the threshold",
                 "a batch that takes the count past the threshold is still cached; the next pull "
                 "is the one deferred",
                 lambda want, seed: want - params_06_1(seed)["pull_batch_size"]),
)
# fmt: on


@exercise("06.1", "Orders (1 queue) holds plenty of messages. A consumer with your pullBatchSize "
          "and pullThresholdForQueue and a listener that takes 60 s per message starts. How many "
          "messages are cached in its ProcessQueue when flow control first stops a pull?",
          hint="every FOUND adds a full batch and nothing leaves the ProcessQueue until a listener "
               "call ends; step 2.1 defers the pull when the cached count is *greater than* the "
               "threshold",
          misconceptions=_MISC_06_1)  # fmt: skip
def _ex_06_1(seed: int) -> int:
    p = params_06_1(seed)
    with one_queue_lab(seed, p["pull_threshold_for_queue"] + 2 * p["pull_batch_size"]) as lab:
        lab.push_consumer("CG", TOPIC, consume_time_ms=60_000, **p)
        lab.advance(1_000)
        fc = first_flow_control(lab, "count")
        assert fc is not None, "no count flow control happened"
        return int(fc["cached"])


# fmt: off
_MISC_06_2 = (
    wrong_answer("an off-by-one in offsets",
                 "the span is last offset − first offset: after k pulls of 32 from offset 0 the "
                 "ProcessQueue holds offsets 0 … 32·k − 1, a span of 32·k − 1",
                 lambda want, seed: want + 1),
)
# fmt: on


@exercise("06.2", "A listener hangs on the message at offset 0 and takes 0 ms for all others; "
          "pullBatchSize is the default 32 and consumeConcurrentlyMaxSpan is your S. What is the "
          "span (last offset − first offset in the ProcessQueue) when span flow control first "
          "stops a pull?",
          hint="offset 0 never leaves the tree map, so after k pulls the span is 32·k − 1; the "
               "pull is deferred once the span is greater than S",
          misconceptions=_MISC_06_2)  # fmt: skip
def _ex_06_2(seed: int) -> int:
    s = params_06_2(seed)
    with one_queue_lab(seed, s + 65) as lab:
        lab.push_consumer("CG", TOPIC, consume_time_ms=stuck_on(0),
                          consume_concurrently_max_span=s)  # fmt: skip
        lab.advance(1_000)
        fc = first_flow_control(lab, "span")
        assert fc is not None, "no span flow control happened"
        return int(fc["cached"])


def status_lab(seed: int) -> Lab:
    """Exercise 06.3's run: M messages, the group's offset pre-set, a consumer for 60 s."""
    p = params_06_3(seed)
    lab = one_queue_lab(seed, p["messages"])
    set_committed_offset(lab, p["committed"])
    lab.push_consumer("CG", TOPIC)
    lab.advance(60_000)
    return lab


@exercise("06.3", "Orders (1 queue) holds your M messages (offsets 0..M−1). Before the consumer of "
          "group CG starts, the broker's committed offset for the queue is set to your X. What "
          "PullStatus does its first pull of Orders get, and how many messages does its listener "
          "receive in the first 60 s? Answer [status name, count].",
          hint="the consumer starts from the stored offset X; getMessage gives FOUND for X < M, "
               "OFFSET_OVERFLOW_ONE (→ NO_NEW_MSG) for X = M, OFFSET_OVERFLOW_BADLY (→ "
               "OFFSET_ILLEGAL, next offset 0 since min offset is 0) for X > M; after "
               "OFFSET_ILLEGAL the queue is dropped, its offset fixed 10 s later, and the next "
               "rebalance (20 s) pulls it again")  # fmt: skip
def _ex_06_3(seed: int) -> list[Any]:
    with status_lab(seed) as lab:
        d = lab.deliveries()
        return [first_status(lab), int((d["topic"] == TOPIC).sum())]
