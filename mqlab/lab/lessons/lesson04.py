"""Lesson 04 — long polling vs short polling (``PullRequestHoldService``).

Helpers that park a pull at a chosen moment and measure when it is answered, and the
lesson's exercises. A pull with the SUSPEND flag that finds nothing is parked by
``PullRequestHoldService``; it is answered when a matching message arrives (long polling
only) or by the first hold-service check at or after its deadline (every 5 000 ms with
long polling, every ``shortPollingTimeMills`` = 1 000 ms without).

``hold_events`` picks the hold service's events out of the trace; ``polling_lab`` runs a
push consumer for a minute while messages arrive at seed-chosen moments, and
``compare_polling`` sets long and short polling side by side on the same arrivals (pulls
served, pulls answered by timeout, delivery latency).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pandas as pd

from mqlab.lab.check import Misconception, exercise
from mqlab.lab.figures import long_poll_wait_histogram_frame
from mqlab.lab.lab import Lab
from mqlab.runtime.raw_client import Call

__all__ = [
    "SEND", "pull_fields", "send_message", "park_pull", "PullTiming", "time_pull",
    "hold_events", "park_time", "polling_lab", "delivery_latency", "compare_polling",
]  # fmt: skip

#: SEND_MESSAGE_V2 fields (``SendMessageRequestHeaderV2``'s short names) for a producer group "PG".
SEND = {"a": "PG", "b": "TopicTest", "c": "TBW102", "d": 4, "e": 0, "f": 0, "g": 0, "h": 0}


def pull_fields(
    topic: str = "TopicTest",
    queue_id: int = 0,
    offset: int = 0,
    *,
    subscription: str = "*",
    suspend: bool = True,
    timeout_ms: int = 15_000,
) -> dict:
    """PULL_MESSAGE fields as a push consumer sends them (sysFlag SUSPEND | SUBSCRIPTION)."""
    return {
        "consumerGroup": "CG", "topic": topic, "queueId": queue_id, "queueOffset": offset,
        "maxMsgNums": 32, "sysFlag": 6 if suspend else 4, "commitOffset": 0,
        "suspendTimeoutMillis": timeout_ms, "subscription": subscription, "subVersion": 0,
    }  # fmt: skip


def send_message(lab: Lab, body: bytes = b"hello", *, queue_id: int = 0, tags: str = "TagA",
                 run: bool = True) -> Call:  # fmt: skip
    """One SEND_MESSAGE_V2 to broker-a (creates TopicTest with 4 queues the first time)."""
    return lab.request("broker-a", "SEND_MESSAGE_V2",
                       {**SEND, "e": queue_id, "i": f"TAGS\x01{tags}"}, body, run=run)  # fmt: skip


def park_pull(lab: Lab, at_ms: int, *, queue_id: int = 1, offset: int = 0,
              subscription: str = "*") -> Call:  # fmt: skip
    """Send a pull so that it reaches broker-a at ``at_ms`` (latency 1 ms) and let it park."""
    if at_ms < lab.now + 1:
        raise ValueError(f"at_ms must be later than now + 1 ms ({lab.now + 1}), got {at_ms}")
    lab.advance(at_ms - 1 - lab.now)
    call = lab.request("broker-a", "PULL_MESSAGE",
                       pull_fields(queue_id=queue_id, offset=offset, subscription=subscription),
                       run=False)  # fmt: skip
    lab.advance(1)
    return call


def park_time(seed: int) -> int:
    """When the lesson's pull reaches the broker: 1 001 … 12 000 ms, from the seed.

    The window spans two 5 s hold-service checks, so learners' answers to 04.1 differ
    (20 001, 25 001 or 30 001 ms)."""
    return 1001 + seed % 11_000


@dataclass(frozen=True, slots=True)
class PullTiming:
    parked_at: int
    answered_at: int  # when the response left the broker
    received_at: int  # when the client got it
    code: int
    status: str


def time_pull(seed: int, *, long_polling: bool = True, park_at: int | None = None,
              message_at: int | None = None, message_tags: str = "TagA",
              subscription: str = "*") -> PullTiming:  # fmt: skip
    """Park a pull on an empty queue and report when it is answered.

    ``park_at`` defaults to a seed-dependent moment between 1 001 and 12 000 ms
    (``park_time``).
    ``message_at``: also send a message to the parked queue at that time.
    """
    lab = Lab(seed=seed, broker={"long_polling_enable": long_polling})
    send_message(lab, queue_id=0)  # create the topic; queue 1 stays empty
    at = park_at if park_at is not None else park_time(seed)
    call = park_pull(lab, at, subscription=subscription)
    if message_at is not None:
        lab.advance(message_at - 1 - lab.now)
        send_message(lab, queue_id=1, tags=message_tags, run=False)
    lab.advance(40_000)
    assert call.done, "the pull was never answered"
    return PullTiming(at, call.done_at - 1, call.done_at, call.code, call.remark or "")


# fmt: off
_MISC_04_1 = (
    Misconception("a timer per parked pull",
                  "nothing fires at parked + 15 000: the hold service checks every 5 000 ms from "
                  "broker start, and the first check at or after the deadline answers",
                  lambda answer, want, seed: answer in (park_time(seed) + 15_000,
                                                        park_time(seed) + 15_001)),
)
# fmt: on


@exercise("04.1", "Long polling: a pull parks on an empty queue at the lesson's time with a 15 000 ms "
          "suspend timeout. At what virtual time (ms) does the consumer receive PULL_NOT_FOUND?",
          hint="the hold service checks every 5 000 ms from broker start; the first check at or after "
               "parked + 15 000 answers, and the reply takes 1 ms",
          misconceptions=_MISC_04_1)  # fmt: skip
def _ex_04_1(seed: int) -> int:
    return time_pull(seed).received_at


@exercise("04.2", "Short polling (longPollingEnable=false): the same pull. When does the consumer "
          "receive PULL_NOT_FOUND?",
          hint="without long polling the suspend time is shortPollingTimeMills (1 000 ms) and the "
               "service checks every 1 000 ms")  # fmt: skip
def _ex_04_2(seed: int) -> int:
    return time_pull(seed, long_polling=False).received_at


# fmt: off
_MISC_04_3 = (
    Misconception("waiting for the next hold-service check",
                  "a matching message wakes the parked pull at once: reput calls "
                  "notifyMessageArriving as soon as the message is stored",
                  lambda answer, want, seed: answer > want and (answer - 1) % 1_000 == 0),
)
# fmt: on


@exercise("04.3", "Long polling: while the pull is parked, a matching message reaches the broker at "
          "parked + 3 000 ms. When does the consumer receive it?",
          hint="the message is already at the broker at parked + 3 000; reput dispatches it as soon as "
               "it is stored and wakes the parked pull at once, so only the reply's 1 ms hop remains",
          misconceptions=_MISC_04_3)  # fmt: skip
def _ex_04_3(seed: int) -> int:
    at = park_time(seed)
    return time_pull(seed, park_at=at, message_at=at + 3000).received_at


@exercise("04.4", "Long polling with subscription 'TagA': the message reaching the broker at parked + "
          "3 000 ms has tag TagB. What response code does the consumer get, and when? Answer [code, time].",
          hint="arrival does not wake the pull (TagB does not match), but the hold-service check calls "
               "notifyMessageArriving with tagsCode = null; what does the replay's getMessage find, and "
               "which code does lesson 03's status table give for it?")  # fmt: skip
def _ex_04_4(seed: int) -> list[int]:
    at = park_time(seed)
    t = time_pull(seed, park_at=at, message_at=at + 3000, message_tags="TagB", subscription="TagA")
    return [t.code, t.received_at]


# -- watching the hold service ----------------------------------------------------------------
_HOLD = "PullRequestHoldService"


def hold_events(lab: Lab, start_ms: int = 0, end_ms: int | None = None) -> pd.DataFrame:
    """The hold service's events (suspend, checks, notifyMessageArriving steps 3–5, deadlines)
    and the pulls answered, between ``start_ms`` and ``end_ms``."""
    ev = lab.events()
    hi = int(ev["t_ms"].max()) if end_ms is None else end_ms
    ev = ev[(ev["t_ms"] >= start_ms) & (ev["t_ms"] <= hi)]
    keep = ev["component"].str.startswith(_HOLD) | (
        (ev["component"] == "PullMessageProcessor.processRequest") & (ev["step"] == "9")
    )
    return ev[keep][["t_ms", "node", "component", "step", "text"]].reset_index(drop=True)


def polling_lab(seed: int, *, long_polling: bool = True, duration_ms: int = 60_000,
                messages: int = 20) -> Lab:  # fmt: skip
    """A push consumer on TopicTest for ``duration_ms`` while ``messages`` arrive at
    seed-chosen moments (the same moments for long and short polling)."""
    lab = Lab(seed=seed, broker={"long_polling_enable": long_polling})
    lab.send("TopicTest", b"create")
    lab.push_consumer("CG", "TopicTest")
    lab.run_until_idle()
    start = lab.now
    rng = random.Random(seed)  # the lesson's own stream: the lab's streams stay untouched
    for at in sorted(rng.randrange(1_000, duration_ms) for _ in range(messages)):
        lab.advance(start + at - lab.now)
        lab.send("TopicTest", b"tick", run=False)
    lab.advance(start + duration_ms - lab.now)
    return lab


def delivery_latency(lab: Lab, topic: str = "TopicTest") -> pd.DataFrame:
    """Per consumed message: stored at (store timestamp), consumed at, latency in ms."""
    stored = lab.commit_log()
    stored = stored[stored["topic"] == topic][["queue_id", "queue_offset", "store_timestamp"]]
    got = lab.deliveries()
    got = got[got["topic"] == topic][["queue_id", "queue_offset", "t_ms"]]
    df = got.merge(stored, on=["queue_id", "queue_offset"], how="left")
    df["latency_ms"] = df["t_ms"] - df["store_timestamp"]
    return df.rename(columns={"t_ms": "consumed_at"}).reset_index(drop=True)


def compare_polling(seed: int, *, duration_ms: int = 60_000, messages: int = 20) -> pd.DataFrame:
    """Long vs short polling on the same arrivals: pulls the broker served, pulls parked,
    parked pulls answered by timeout, and the delivery latency."""
    rows = []
    for long_polling in (True, False):
        with polling_lab(seed, long_polling=long_polling, duration_ms=duration_ms,
                         messages=messages) as lab:  # fmt: skip
            pulls = lab.events(component="PullMessageProcessor.processRequest", step="1")
            fresh = sum(1 for f in pulls["fields"] if not json.loads(f).get("replay"))
            held = long_poll_wait_histogram_frame(lab)
            lat = delivery_latency(lab)
            lat = lat[
                lat["store_timestamp"] >= lat["consumed_at"].min()
            ]  # after the consumer started
            rows.append({
                "longPollingEnable": long_polling, "pull_requests": fresh,
                "parked": len(held), "answered_by_timeout": int((held["reason"] == "timeout").sum()),
                "messages_consumed": len(lat), "mean_latency_ms": float(lat["latency_ms"].mean()),
                "max_latency_ms": int(lat["latency_ms"].max()),
            })  # fmt: skip
    return pd.DataFrame(rows)
