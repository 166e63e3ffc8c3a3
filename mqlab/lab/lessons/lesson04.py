"""Lesson 04 — long polling vs short polling (seed 001).

Helpers that park a pull at a chosen moment and measure when it is answered, and the
lesson's exercises. A pull with the SUSPEND flag that finds nothing is parked by
``PullRequestHoldService``; it is answered when a matching message arrives (long polling
only) or by the first hold-service check at or after its deadline (every 5 000 ms with
long polling, every ``shortPollingTimeMills`` = 1 000 ms without).
"""

from __future__ import annotations

from dataclasses import dataclass

from mqlab.lab.check import exercise
from mqlab.lab.lab import Lab
from mqlab.runtime.raw_client import Call

__all__ = ["SEND", "pull_fields", "send_message", "park_pull", "PullTiming", "time_pull"]

#: SEND_MESSAGE_V2 fields (facts §2.2 short names) for a producer group "PG".
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

    ``park_at`` defaults to a seed-dependent moment between 1 001 and 5 000 ms.
    ``message_at``: also send a message to the parked queue at that time.
    """
    lab = Lab(seed=seed, broker={"long_polling_enable": long_polling})
    send_message(lab, queue_id=0)  # create the topic; queue 1 stays empty
    at = park_at if park_at is not None else 1001 + seed % 4000
    call = park_pull(lab, at, subscription=subscription)
    if message_at is not None:
        lab.advance(message_at - 1 - lab.now)
        send_message(lab, queue_id=1, tags=message_tags, run=False)
    lab.advance(40_000)
    assert call.done, "the pull was never answered"
    return PullTiming(at, call.done_at - 1, call.done_at, call.code, call.remark or "")


@exercise("04.1", "Long polling: a pull parks on an empty queue at the lesson's time with a 15 000 ms "
          "suspend timeout. At what virtual time (ms) does the consumer receive PULL_NOT_FOUND?",
          hint="the hold service checks every 5 000 ms from broker start; the first check at or after "
               "parked + 15 000 answers, and the reply takes 1 ms")  # fmt: skip
def _ex_04_1(seed: int) -> int:
    return time_pull(seed).received_at


@exercise("04.2", "Short polling (longPollingEnable=false): the same pull. When does the consumer "
          "receive PULL_NOT_FOUND?",
          hint="without long polling the suspend time is shortPollingTimeMills (1 000 ms) and the "
               "service checks every 1 000 ms")  # fmt: skip
def _ex_04_2(seed: int) -> int:
    return time_pull(seed, long_polling=False).received_at


@exercise("04.3", "Long polling: while the pull is parked, a matching message reaches the broker at "
          "parked + 3 000 ms. When does the consumer receive it?",
          hint="reput dispatches the message as soon as it is stored and wakes the parked pull at once; "
               "count the two 1 ms hops")  # fmt: skip
def _ex_04_3(seed: int) -> int:
    at = 1001 + seed % 4000
    return time_pull(seed, park_at=at, message_at=at + 3000).received_at


@exercise("04.4", "Long polling with subscription 'TagA': the message reaching the broker at parked + "
          "3 000 ms has tag TagB. What response code does the consumer get, and when? Answer [code, time].",
          hint="arrival does not wake the pull (TagB does not match), but the hold-service check calls "
               "notifyMessageArriving with tagsCode = null; what does the replay's getMessage find, and "
               "which code does seed 003's table give for it?")  # fmt: skip
def _ex_04_4(seed: int) -> list[int]:
    at = 1001 + seed % 4000
    t = time_pull(seed, park_at=at, message_at=at + 3000, message_tags="TagB", subscription="TagA")
    return [t.code, t.received_at]
