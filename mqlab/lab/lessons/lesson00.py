"""Lesson 00 — a tour of the workbench: build a lab, send, consume, read the trace.

The tour touches several mechanisms: a send auto-creates the topic (lesson 01), a push
consumer rebalances and pulls (lessons 05, 06) and its pulls park in
``PullRequestHoldService`` (lesson 04) and points to the lesson that takes each apart. The helpers
here set up the tour's scenario, list the lessons, and pick the few events of a send →
consume round trip out of the trace so the first timeline is readable.
"""

from __future__ import annotations

import pandas as pd

from mqlab.lab.check import Misconception, exercise, wrong_answer
from mqlab.lab.lab import Lab

__all__ = [
    "LESSONS",
    "lesson_map",
    "round_trip",
    "queues_held",
    "upcoming",
    "params_00_1",
    "params_00_2",
    "params_00_3",
    "tour_lab",
]

#: (lesson, mechanism, RocketMQ classes) — the map of the course; each mechanism's numbered
#: steps are listed, with links to RocketMQ 4.9.3's source, in notebooks/mechanisms.md.
LESSONS = (
    ("00", "tour: lab, send, consume, trace, control panel", "Lab"),
    ("01", "send path and topic auto-creation (two-broker pitfall)",
     "SendMessageProcessor, TopicConfigManager"),
    ("02", "the store: commit-log and consume-queue bytes, roll-over, recovery",
     "CommitLog, ConsumeQueue, DefaultMessageStore"),
    ("03", "the broker's 11-step pull processing",
     "PullMessageProcessor, DefaultMessageStore#getMessage"),
    ("04", "long polling vs short polling", "PullRequestHoldService"),
    ("05", "rebalancing and allocation strategies", "RebalanceImpl, AllocateMessageQueue*"),
    ("06", "the consumer pull loop and flow control", "PullMessageService, ProcessQueue"),
    ("07", "consumption, retry and the dead-letter queue", "ConsumeMessageConcurrentlyService"),
    ("08", "offsets and consume-from-where", "RemoteBrokerOffsetStore"),
    ("09", "comparing runs with Spark", "(experiments)"),
    ("10", "transactions: half message, commit, rollback, check-back",
     "EndTransactionProcessor, TransactionalMessageCheckService"),
    ("11", "what can happen? every schedule of a consumer joining",
     "RebalanceImpl, RemoteBrokerOffsetStore (explore)"),
    ("12", "replication and failover: the HA stream, a lost master, reads from the slave",
     "HAService, HAConnection, SlaveSynchronize"),
    ("13", "who may send: a signature, an accounts table, a refused send, hot reload",
     "AclClientRPCHook, PlainAccessValidator, PlainPermissionManager"),
    ("14", "Raft in the broker: an election vote by vote, the quorum ack, a partition, truncation",
     "DLedgerLeaderElector, DLedgerEntryPusher, DLedgerCommitLog"),
)  # fmt: skip


def lesson_map() -> pd.DataFrame:
    """The lessons as a table: mechanism and RocketMQ classes, indexed by the lesson's number
    (walk 4 of issue 28: a default index 0–13 was drawn beside the numbers 00–13)."""
    df = pd.DataFrame(LESSONS, columns=["lesson", "mechanism", "RocketMQ classes"])
    return df.set_index("lesson")


#: Components of one send → store → wake → pull → consume round trip.
_ROUND_TRIP = (
    "DefaultMQProducerImpl.sendKernelImpl",
    "SendMessageProcessor.asyncSendMessage",
    "PullRequestHoldService.notifyMessageArriving",
    "PullMessageProcessor.processRequest",
    "DefaultMQPushConsumerImpl.pullMessage",
    "ConsumeMessageConcurrentlyService.ConsumeRequest.run",
    "PullRequestHoldService.suspendPullRequest",
)


def round_trip(lab: Lab, start_ms: int, end_ms: int | None = None) -> pd.DataFrame:
    """The round-trip events between ``start_ms`` and ``end_ms``: who did what, when."""
    ev = lab.events()
    hi = ev["t_ms"].max() if end_ms is None else end_ms
    ev = ev[(ev["t_ms"] >= start_ms) & (ev["t_ms"] <= hi) & ev["component"].isin(_ROUND_TRIP)]
    ev = ev[(ev["component"] != "PullMessageProcessor.processRequest") | (ev["step"] == "9")]
    return ev[["t_ms", "node", "component", "step", "text"]].reset_index(drop=True)


def upcoming(lab: Lab, n: int = 8) -> pd.DataFrame:
    """The next ``n`` timers, leaving out the schedule service's 18 delay-level timers."""
    t = lab.timers(include_frames=False)
    t = t[~t["name"].str.startswith("ScheduleMessageService")]
    return t[["due_ms", "in_ms", "node", "name", "key"]].head(n).reset_index(drop=True)


def queues_held(lab: Lab, topic: str = "TopicTest") -> dict[str, int]:
    """How many queues of ``topic`` each push consumer holds now (0 if none)."""
    a = lab.allocation()
    a = a[a["topic"] == topic]
    counts = a.groupby("consumer").size()
    return {name: int(counts.get(name, 0)) for name in sorted(lab.consumers, key=_node_order)}


def _node_order(name: str) -> tuple[str, int]:
    kind, _, n = name.rpartition("-")
    return (kind, int(n)) if n.isdigit() else (name, 0)


# -- the tour's scenario and exercises --------------------------------------------------------
def params_00_1(seed: int) -> int:
    """Exercise 00.1: how many messages the tour sends (5..16)."""
    return 5 + seed % 12


def params_00_2(seed: int) -> int:
    """Exercise 00.2: how long (ms) to wait before the late message (100..999)."""
    return 100 + seed % 900


def params_00_3(seed: int) -> int:
    """Exercise 00.3: how many consumers the group ends up with (2..5)."""
    return 2 + seed % 4


def tour_lab(seed: int) -> Lab:
    """The tour so far: N messages to TopicTest, then consumer-1 in group CG, run until idle."""
    lab = Lab(seed=seed)
    lab.send_many("TopicTest", params_00_1(seed), tags="TagA")
    lab.push_consumer("CG", "TopicTest")
    lab.run_until_idle()
    return lab


# fmt: off
_MISC_00_1 = (
    # first: when N % 4 != 0, N // 4 is also the right answer minus one, but the idea behind it
    # is the division, not the offsets
    wrong_answer("rounding N / 4 down",
                 "N // 4 drops the remainder: the producer deals the N messages out round robin, "
                 "so the first N % 4 queues get one message more, and the largest max_offset is "
                 "N / 4 rounded up",
                 lambda want, seed: params_00_1(seed) // 4),
    wrong_answer("an off-by-one in offsets",
                 "max_offset is the offset the *next* message will get, so it equals the number "
                 "of messages in the queue, not the last message's offset",
                 lambda want, seed: want - 1),
    wrong_answer("the queue count before auto-creation",
                 "TBW102 has 8 queues, but the producer cuts the route it borrows to its "
                 "defaultTopicQueueNums (4), the broker creates TopicTest with min(4, 8) = 4, "
                 "and the producer spreads every message over those 4",
                 lambda want, seed: -(-params_00_1(seed) // 8)),
    wrong_answer("all messages on one queue",
                 "the producer takes the next queue for each message (round robin over 4)",
                 lambda want, seed: params_00_1(seed)),
)
# fmt: on


@exercise("00.1", "The lab's producer sends your N messages to the new topic TopicTest, one after "
          "the other. Afterwards, what is the largest max_offset among the topic's queues?",
          hint="the topic is auto-created with 4 queues and the producer takes the next queue for "
               "each message (round robin), so the queues differ by at most one message",
          misconceptions=_MISC_00_1)  # fmt: skip
def _ex_00_1(seed: int) -> int:
    with Lab(seed=seed) as lab:
        lab.send_many("TopicTest", params_00_1(seed), tags="TagA")
        return int(lab.queues("TopicTest")["max_offset"].max())


# fmt: off
_MISC_00_2 = (
    wrong_answer("counting D from time 0",
                 "you advance D ms from the moment the lab is idle (lab.now then), not from 0",
                 lambda want, seed: params_00_2(seed) + 2),
    Misconception("forgetting the network hops",
                  "each hop takes 1 ms: the send to the broker, and the pull's answer back",
                  lambda answer, want, seed: answer in (want - 2, want - 1)),
    Misconception("waiting for a hold-service check",
                  "a new message wakes the parked pull at once (notifyMessageArriving), it does "
                  "not wait for PullRequestHoldService's 5 s check",
                  lambda answer, want, seed: answer > want and (answer - 1) % 5000 == 0),
)
# fmt: on


@exercise("00.2", "After the tour's lab is idle (consumer-1 has consumed everything), you advance "
          "your D ms and send one more message with lab.send. At what virtual time (ms) does "
          "consumer-1 consume it?",
          hint="consumer-1's pulls are parked in the broker; the message takes 1 ms to reach the "
               "broker, which wakes the parked pull at once, and the pull's answer takes 1 ms back",
          misconceptions=_MISC_00_2)  # fmt: skip
def _ex_00_2(seed: int) -> int:
    with tour_lab(seed) as lab:
        lab.advance(params_00_2(seed))
        lab.send("TopicTest", b"late", tags="TagA")
        d = lab.deliveries()
        return int(d["t_ms"].iloc[-1])


# fmt: off
_MISC_00_3 = (
    wrong_answer("forgetting the remainder",
                 "AllocateMessageQueueAveragely gives 4 // K queues each, and the first 4 % K "
                 "consumers one more",
                 lambda want, seed: [4 // params_00_3(seed)] * params_00_3(seed)),
)
# fmt: on


@exercise("00.3", "Starting from the tour's lab, you add consumers to group CG until it has your K "
          "consumers, then run until idle. How many TopicTest queues does each consumer hold? "
          "Answer a list: [consumer-1, consumer-2, ...].",
          hint="AllocateMessageQueueAveragely: 4 queues over K sorted consumer ids; the first "
               "4 % K consumers get one extra, and a consumer beyond the 4th gets none",
          misconceptions=_MISC_00_3)  # fmt: skip
def _ex_00_3(seed: int) -> list[int]:
    with tour_lab(seed) as lab:
        for _ in range(params_00_3(seed) - 1):
            lab.push_consumer("CG", "TopicTest")
        lab.run_until_idle()
        return list(queues_held(lab).values())
