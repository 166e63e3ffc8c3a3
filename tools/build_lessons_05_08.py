"""Build the notebooks of lessons 05–08 (learner and solutions copies) from one source.

Run from the repository root::

    python tools/build_lessons_05_08.py            # writes notebooks/ and notebooks/solutions/
    python tools/build_lessons_05_08.py --check    # exit 1 if a written notebook is stale

Each lesson is a list of cells: markdown, code, and exercises. An exercise becomes a
``### Exercise NN.k`` heading with its question, a cell showing the learner's numbers, an
answer cell (``answer = ...`` in the learner copy, the worked answer in the solutions
copy) and a check cell (``check(...)`` / ``assert check(...)``). Notebooks are written
without outputs, with stable cell ids, so rebuilding gives the same bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbcells import Cell, Code, Exercise, Md, build

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


# ============================================================================================
# Lesson 05 — rebalancing and allocation strategies
# ============================================================================================
# fmt: off
L05: list[Cell] = [
    Md("""
# 05 · Rebalancing and allocation strategies

*Seed 004 §5 ("PushConsumer 消息队列分配"): `RebalanceService`, `RebalanceImpl#rebalanceByTopic`,
`AllocateMessageQueueStrategy`; facts §10.10–10.11.*

In a clustering group, each queue of a topic should be pulled by exactly one consumer.
Nobody hands the queues out. Each consumer works out its own share from the same two
sorted lists: the topic's queues and the group's client ids. The group agrees because
every consumer computes the same thing. This lesson shows when consumers recompute
(`RebalanceService`), what they compute (the strategies in `mqlab.client.allocate`), and
what happens in between (a queue claimed twice).

Put your name in `LEARNER`: the exercises use numbers derived from it.
"""),
    Code("""
from mqlab.lab import Lab, figures
from mqlab.lab.check import check, learner_seed
from mqlab.lab.lessons import lesson05 as L
from mqlab.lab.widgets import control_panel

LEARNER = "your-name"
SEED = learner_seed(LEARNER)
lab = Lab(seed=SEED)
"""),
    Md("""
## 1. One consumer takes every queue

`RebalanceService#run` (seed 004 §5, lines 21–30) loops: `waitForRunning(waitInterval)`
(20 000 ms), then `MQClientInstance#doRebalance`. Two things end the wait early: the
consumer's own start (`rebalanceService.wakeup()`) and a NOTIFY_CONSUMER_IDS_CHANGED from
a broker. Send 8 messages (TopicTest is auto-created with 4 queues) and
start one consumer of group `CG`. `owners` maps queue id → the consumer holding it.
"""),
    Code("""
lab.send_many("TopicTest", 8)
lab.push_consumer("CG", "TopicTest")
lab.advance(2_000)
L.owners(lab, "TopicTest")
"""),
    Md("""
Each round of `rebalanceByTopic` leaves one line in the trace (step "42-61", seed 004
lines 42–61): the strategy, this consumer's index among the sorted client ids, and the
queues it takes. The consumer also rebalances `%RETRY%CG`, the group's retry topic, which
every clustering consumer subscribes to without being asked (lesson 07).
"""),
    Code("""
L.print_events(lab.events(component="RebalancePushImpl.rebalanceByTopic"))
"""),
    Md("""
## 2. Two more consumers join

A new consumer heartbeats every broker. `ClientManageProcessor#heartBeat` →
`ConsumerManager#registerConsumer` sees a new channel and, with
`notifyConsumerIdsChangedEnable` on (the default), sends NOTIFY_CONSUMER_IDS_CHANGED to
every consumer of the group (facts §10.5). Each one wakes its `RebalanceService`, fetches
the group's ids (GET_CONSUMER_LIST_BY_GROUP), sorts both lists ("排序后才能保证各 Consumer
顺序一致", seed 004 lines 21–40) and allocates.
"""),
    Code("""
for _ in range(2):
    lab.push_consumer("CG", "TopicTest")
    lab.advance(2_000)
L.owners(lab, "TopicTest")
"""),
    Md("""
Four queues and three consumers: `AllocateMessageQueueAveragely` gives the first
4 % 3 = 1 consumer one extra queue. consumer-1 gets {0, 1}, consumer-2 {2} and consumer-3
{3}. That is the 2/1/1 column of the table in seed 004 ("Consumer * 3 不可整除"). Here
are the notifications and the queue hand-overs, in words:
"""),
    Code("""
ev = lab.events()
ev = ev[ev["component"].str.contains("notifyConsumerIdsChanged|updateProcessQueueTable")]
L.print_events(ev[ev["t_ms"] > 2_000])
"""),
    Md("""
## 3. The allocation over time

`allocation_heatmap` replays every `rebalanceByTopic` result in the trace. There is one
column per moment when some consumer's view changed. A black cell is a queue that two
consumers claimed at the same moment. The newcomer took the queue before the old owner
had run its own rebalance and dropped it (`removeUnnecessaryMessageQueue`, which first
persists the queue's offset). For those few milliseconds both may pull the queue. This
is the "rebalance overlap" that `find_duplicates` blames for duplicates.
"""),
    Code("""
figures.allocation_heatmap(lab, topic="TopicTest", changes_only=True)
"""),
    Md("""
## 4. Drive it yourself

The panel adds consumers to `CG` with the strategy chosen under *allocate*. It can also
remove a consumer (clean shutdown: it unregisters), kill one (the broker sees the
connection close and notifies the rest), trigger a rebalance and move time. Try choosing
`CONSISTENT_HASH` and adding a fourth consumer next to the three `AVG` ones. Each consumer
computes only its own share, so when they disagree a queue can end up with two owners or
none. Here the newcomer claims queues 1 and 2, which are already held, and nobody pulls
queue 3. Then run the heatmap cell above again.
"""),
    Code("""
control_panel(lab, sections=["consumers", "time", "toggles", "inspect", "log"])
"""),
    Md("""
## 5. Every strategy, side by side

A strategy is a pure function of (group, my client id, all queues, all client ids)
(facts §10.10). `strategy_table` runs each one once per consumer on the same sorted
inputs, as every consumer of a group does, and shows who takes each queue:

* **AVG** (`AllocateMessageQueueAveragely`): contiguous blocks of Q // C queues; the
  first Q % C consumers get one more.
* **AVG_BY_CIRCLE**: queue i goes to the consumer at index i % C, like dealing cards.
* **CONSISTENT_HASH**: each consumer places 10 virtual nodes on an MD5 ring; a queue goes
  to the first node at or after the hash of `MessageQueue [topic=…, brokerName=…, queueId=…]`.
* **CONFIG**: returns its configured list, whatever the group looks like. Here every
  consumer is configured with queue 0, so all three pull it and nobody pulls the rest.
* **MACHINE_ROOM**: only queues of brokers named `<idc>@<name>` whose idc the consumer
  consumes from (here `idc1@broker-a`); the remainder goes to the first consumers.
"""),
    Code("""
L.strategy_table(queues=5, consumers=3)
"""),
    Exercise("05.1", "L.params_05_1(SEED)", """
p = L.params_05_1(SEED)
size, mod = p["queues"] // p["consumers"], p["queues"] % p["consumers"]
extra = 1 < mod  # consumer-2 has index 1 in the sorted ids
n = size + extra
start = n if extra else size + mod
answer = list(range(start, start + n))
answer
"""),
    Exercise("05.2", "L.params_05_1(SEED)", """
p = L.params_05_1(SEED)
answer = [i for i in range(p["queues"]) if i % p["consumers"] == 1]
answer
"""),
    Md("""
## 6. Who moves when a consumer joins?

Moving a queue costs something. The old owner drops its ProcessQueue and persists the
offset. The new owner reads that offset from the broker and starts pulling. Messages
consumed in between may be consumed twice. `join_moves` lets two consumers settle on 4
queues, adds a third, and counts the queues whose owner changed:
"""),
    Code("""
for name in ("AVG", "CONSISTENT_HASH"):
    before, after, moved = L.join_moves(SEED, queues=4, strategy_name=name)
    print(f"{name}: before {before}")
    print(f"{name}: after  {after}  → {moved} moved")
"""),
    Md("""
With 4 queues AVG moves 1 queue and the hash ring moves 2. The ring also leaves
consumer-1 with nothing: 0/2/2, not 2/1/1. With more queues the comparison changes. AVG
shifts every block boundary, while the ring only moves the queues that the newcomer's
virtual nodes capture. Try `L.join_moves(SEED, queues=10, strategy_name=...)`. To predict
a join without running a lab, compare `L.strategy_table(Q, 2)` with `L.strategy_table(Q, 3)`:
it computes exactly what each consumer computes.
"""),
    Exercise("05.3", "L.params_05_3(SEED)", """
q = L.params_05_3(SEED)
two, three = L.strategy_table(q, 2), L.strategy_table(q, 3)
answer = [int((two[s] != three[s]).sum()) for s in ("AVG", "CONSISTENT_HASH")]
answer
"""),
    Md("""
## 7. Without the notify: seconds of overlap

If the broker does not notify (`notifyConsumerIdsChangedEnable=false`), an old consumer
only learns about a newcomer on its own 20 s timer. The newcomer rebalances at once when
it starts, so both hold the same queues until the old consumer's next round.
"""),
    Code("""
quiet = Lab(seed=SEED, broker={"notify_consumer_ids_changed_enable": False})
quiet.send_many("TopicTest", 4)
quiet.push_consumer("CG", "TopicTest")
quiet.advance(5_000 - quiet.now)
quiet.push_consumer("CG", "TopicTest")
quiet.advance(20_000)
L.owners(quiet, "TopicTest")
"""),
    Code("""
figures.allocation_heatmap(quiet, topic="TopicTest", changes_only=True)
"""),
    Code("""
L.overlap_ms(quiet), L.overlap_ms(lab)
"""),
    Md("""
consumer-2 took queues 2 and 3 a few ms after 5 000. consumer-1 kept pulling them until
its timer fired at about 20 013 ms (13 ms for the first round after its start, then every
20 000 ms). With the notify, as in `lab`, the overlap is a few ms.
"""),
    Exercise("05.4", "L.params_05_4(SEED)", """
# consumer-1 rebalances at ~13 ms and ~20 013 ms; consumer-2 takes its queues at J + ~10 ms
answer = round((20_013 + 2 - (L.params_05_4(SEED) + 10)) / 1000)
answer
"""),
    Md("""
## What to take away

* Rebalancing is local: every consumer runs the same strategy on the same sorted lists.
  It is only as consistent as those lists are at that moment.
* Consumers rebalance at start, every 20 s, and when a broker notifies them. Between a
  newcomer's round and an old consumer's round, a queue can have two owners.
* The strategy decides how even the split is and how many queues move when the group
  changes. AVG is even; the hash ring moves fewer queues as the topic grows.

Next: lesson 06 follows one of these queues into the consumer's pull loop.
"""),
]
# fmt: on


# ============================================================================================
# Lesson 06 — the consumer pull loop and flow control
# ============================================================================================
# fmt: off
L06: list[Cell] = [
    Md("""
# 06 · The consumer pull loop and flow control

*Seed 003 §2 (`PullMessageService`, `PullRequest`/`ProcessQueue`, flow control,
`PullCallback`), seed 004 "DefaultMQPushConsumerImpl#pullMessage"; facts §9, §10.13–10.14.*

A "push" consumer pulls. Lesson 05 ended with `dispatchPullRequest`, which puts one
`PullRequest` per new queue into `PullMessageService`'s `pullRequestQueue` (a
`LinkedBlockingQueue`). The service loops forever: `take()` a request, then
`DefaultMQPushConsumerImpl#pullMessage` it (seed 003, steps 1–5). Each request carries
its queue's `ProcessQueue`, "MessageQueue在消费端的重现、快照": a tree map offset → message
that holds what was pulled until a listener has consumed it. This lesson watches that
loop, makes it stop (flow control), and goes through what each pull status does.
"""),
    Code("""
from mqlab.lab import Lab, figures
from mqlab.lab.check import check, learner_seed
from mqlab.lab.lessons import lesson06 as L
from mqlab.lab.widgets import control_panel

LEARNER = "your-name"
SEED = learner_seed(LEARNER)
lab = Lab(seed=SEED)
"""),
    Md("""
## 1. The loop, pull by pull

One topic with **one** queue keeps the story in one ProcessQueue. 100 messages wait in
it before the consumer starts:
"""),
    Code("""
L.create_topic(lab, "Orders", read_queue_nums=1, write_queue_nums=1)
lab.send_many("Orders", 100)
lab.push_consumer("CG", "Orders")
lab.advance(100)
L.print_events(L.pull_log(lab))
"""),
    Md("""
Step 2.5 sends PULL_MESSAGE for up to `pullBatchSize` = 32 messages ("默认每次拉取32条消息").
Step 2.6 is the `PullCallback`. On FOUND it puts the messages into the ProcessQueue, submits
them to the consume service and puts the request straight back in the queue
(`executePullRequestImmediately`, because `pullInterval` is 0). After four pulls (32 + 32 +
32 + 4) the queue is empty. The fifth pull parks in the broker's `PullRequestHoldService`
(lesson 04) with a 15 s suspend timeout (`BROKER_SUSPEND_MAX_TIME_MILLIS`).
"""),
    Code("""
lab.process_queues()
"""),
    Md("""
## 2. A slow listener fills the ProcessQueue

Before each pull, step 2.1 checks the ProcessQueue (seed 003 "2.1流控"). If more than
`pullThresholdForQueue` = 1 000 messages are cached, or more than
`pullThresholdSizeForQueue` = 100 MiB, the request goes back after
`PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL` = 50 ms. Nothing is pulled until the listener
catches up. Here 1 100 messages wait and each listener call takes 50 ms
(`consume_time_ms`, mqlab's model of a slow listener; 20 consume threads by default):
"""),
    Code("""
slow = L.one_queue_lab(SEED, 1_100)
slow.push_consumer("CG", "Orders", consume_time_ms=50)
slow.advance(3_000)
L.print_events(L.pull_log(slow, limit=None).query("step == '2.1'"), limit=5)
"""),
    Md("""
The first check after about 32 pulls finds just over 1 000 cached messages (a few have
already been consumed) and defers the pull. `flow_control_episodes` draws each run of
deferred pulls as a bar on its queue. The bar ends when a check finds the count back at
1 000 or below.
"""),
    Code("""
figures.flow_control_episodes(slow)
"""),
    Md("""
## 3. One stuck message: the span

For concurrent consumers there is a third check: the ProcessQueue's span, its last offset
minus its first (`getMaxSpan`). If the span is more than `consumeConcurrentlyMaxSpan`
(2 000) the pull is also deferred 50 ms (seed 003: "跨度超过 2000 则延迟 50 毫秒再拉取消息").
A listener that hangs on a single message keeps that message, and so the first key, in
the tree map, while everything after it comes and goes. The span limit is lowered to
200 here so the run stays small:
"""),
    Code("""
stuck = L.one_queue_lab(SEED, 400)
stuck.push_consumer("CG", "Orders", consume_time_ms=L.stuck_on(0),
                    consume_concurrently_max_span=200)
stuck.advance(12_000)
figures.flow_control_episodes(stuck)
"""),
    Code("""
stuck.process_queues()[["topic", "msg_count", "max_span", "queue_offset_max"]]
"""),
    Md("""
Each episode is short. Once the later messages are consumed, only offset 0 is left and
the span drops to 0, so pulling goes on. The lasting damage is elsewhere. The offset a
consumer commits is the **smallest offset still in the ProcessQueue**
(`ProcessQueue#removeMessage`, facts §10.13), so it stays at 0 as long as message 0
hangs. If the consumer restarts, everything after 0 is delivered again (lesson 08).
"""),
    Code("""
stuck.consumer_offsets()
"""),
    Md("""
## 4. Drive it yourself

The panel works on `lab` (topic Orders). Send a few hundred messages, add a consumer,
and advance time in small steps. The log says which step ran (pull sent, FOUND, parked).
Kill the consumer and watch the broker drop its parked pull.
"""),
    Code("""
control_panel(lab, topic="Orders", sections=["send", "consumers", "time", "inspect", "log"])
"""),
    Exercise("06.1", "L.params_06_1(SEED)", """
p = L.params_06_1(SEED)
b, t = p["pull_batch_size"], p["pull_threshold_for_queue"]
answer = (t // b + 1) * b  # the first multiple of b greater than t
answer
"""),
    Exercise("06.2", "L.params_06_2(SEED)", """
s = L.params_06_2(SEED)
answer = ((s + 1) // 32 + 1) * 32 - 1  # the first 32·k − 1 greater than s
answer
"""),
    Md("""
## 5. What each PullStatus does

The broker's `GetMessageStatus` becomes a response code, and the client turns that into
a `PullStatus` (`MQClientAPIImpl#processPullResponse`, seed 003 §5). The `PullCallback`
then acts on it (step 2.6):

| PullStatus | from | the callback |
|---|---|---|
| FOUND | SUCCESS | cache, consume, pull again from `nextBeginOffset` |
| NO_NEW_MSG | PULL_NOT_FOUND | `nextOffset := nextBeginOffset`; if nothing is cached the offset follows (`correctTagsOffset`); pull again |
| NO_MATCHED_MSG | PULL_RETRY_IMMEDIATELY | as NO_NEW_MSG |
| OFFSET_ILLEGAL | PULL_OFFSET_MOVED | drop the ProcessQueue; 10 s later store `nextBeginOffset`, persist it and remove the queue; the next rebalance pulls it again |

To see the last row, store a committed offset past the end of a queue before the
consumer starts:
"""),
    Code("""
illegal = L.one_queue_lab(SEED, 20)
L.set_committed_offset(illegal, 25)
illegal.push_consumer("CG", "Orders")
illegal.advance(30_000)
L.print_events(L.pull_log(illegal))
"""),
    Md("""
The broker answered offset 25 > max 20 with OFFSET_OVERFLOW_BADLY → PULL_OFFSET_MOVED,
with `nextBeginOffset` 0 (the queue's min offset, facts §10.1). 10 s later the consumer
stored 0. The next `RebalanceService` round, about 20 s after start, found the queue
missing, created it again and consumed all 20 messages.
"""),
    Exercise("06.3", "L.params_06_3(SEED)", """
p = L.params_06_3(SEED)
m, x = p["messages"], p["committed"]
if x < m:
    answer = ["FOUND", m - x]
elif x == m:
    answer = ["NO_NEW_MSG", 0]
else:
    answer = ["OFFSET_ILLEGAL", m]
answer
"""),
    Md("""
## What to take away

* The pull loop is one request per queue, sent again as soon as its answer is handled.
  Flow control is the only brake: it defers the pull 50 ms while the ProcessQueue is too
  full (count, size) or too wide (span).
* The ProcessQueue is where pulling and consuming meet. The committed offset is its
  smallest remaining key, so one slow message holds back the whole queue's progress.
* Every status puts the request back in the loop, except OFFSET_ILLEGAL, which drops
  the queue until the next rebalance.

Next: lesson 07, what the consume service does with a message the listener rejects.
"""),
]
# fmt: on


# ============================================================================================
# Lesson 07 — consumption, retry and the dead-letter queue
# ============================================================================================
# fmt: off
L07: list[Cell] = [
    Md("""
# 07 · Consumption, retry and the dead-letter queue

*Seed 004 §6–7 (`ConsumeMessageConcurrentlyService`, `ConsumeRequest`,
`processConsumeResult`, `sendMessageBack`); facts §10.7 (CONSUMER_SEND_MSG_BACK), §10.8–10.9
(delay levels), §10.15.*

When a listener answers RECONSUME_LATER, the message is not retried in place. In
clustering mode the consumer **sends it back** to the broker. The broker stores a new
message on the group's retry topic `%RETRY%<group>`, parks it in `SCHEDULE_TOPIC_XXXX`
for a delay that grows with each retry, and delivers it like any other message. The
original's offset moves on. After 16 retries the broker stores it on `%DLQ%<group>`,
and no consumer reads that topic.
"""),
    Code("""
from mqlab.lab import Lab, figures
from mqlab.lab.check import check, learner_seed
from mqlab.lab.checkers import check_retry_timing
from mqlab.lab.lessons import lesson07 as L
from mqlab.lab.widgets import control_panel

LEARNER = "your-name"
SEED = learner_seed(LEARNER)
lab = Lab(seed=SEED)
"""),
    Md("""
## 1. A message that fails three times

`L.Flaky(3)` answers RECONSUME_LATER for messages tagged `Flaky` until each has been
retried three times. The topic is created (by a first message) *before* the consumer
starts. A consumer that starts before its topic exists has to wait for its next route
refresh (up to 30 s) and then its next rebalance before it pulls anything.
"""),
    Code("""
lab.send("TopicTest", "warm-up", tags="Warmup")
lab.push_consumer("CG", "TopicTest", listener=L.Flaky(3))
lab.send("TopicTest", "order-1", tags="Flaky")
lab.advance(120_000)
L.delivery_history(lab)
"""),
    Md("""
The first delivery comes from TopicTest and the retries from `%RETRY%CG`, each a new
message at its own offset. `reconsume_times` counts the retries. The gaps are 10 s, 30 s
and 1 min, plus about 0.1 s each: the schedule service checks each level's queue every
100 ms. `check_retry_timing` compares every gap with the delay table:
"""),
    Code("""
check_retry_timing(lab, "CG")
"""),
    Md("""
## 2. What happens on a failure

`processConsumeResult` (seed 004 lines 12–32) turns the status into `ackIndex`:
CONSUME_SUCCESS acks everything (`ackIndex` = batch size − 1), RECONSUME_LATER acks
nothing (−1). Every message after `ackIndex` goes back with CONSUMER_SEND_MSG_BACK
(lines 43–52). The broker (`asyncConsumerSendMsgBack`, facts §10.7) picks delay level
3 + reconsumeTimes and stores a copy on `%RETRY%CG` with reconsumeTimes + 1. A message
with a delay is stored in `SCHEDULE_TOPIC_XXXX`, queue level − 1, until it is due.
Then the consume offset moves past the original (lines 65–69). In words:
"""),
    Code("""
ev = lab.events()
ev = ev[ev["component"].str.contains("sendMessageBack|SendMsgBack|DeliverDelayed")]
L.print_events(ev[ev["text"].str.contains("send back|delivered")], limit=9)
"""),
    Md("""
The first round trip as a timeline: the listener's failure, the send-back, the broker
storing it on the schedule topic, and then, 10 s later, the delivery of the retry (zoom
in with the mouse).
"""),
    Code("""
h = L.delivery_history(lab)
first = int(h[h["reconsume_times"] == 0]["t_ms"].max())
figures.sequence_timeline(lab, nodes=["consumer-1", "broker-a"], start_ms=first,
                          end_ms=first + 10_200)
"""),
    Md("""
The whole plan: retry k uses level 3 + k − 1 from the broker's `messageDelayLevel`
("1s 5s 10s 30s 1m 2m … 2h"). After the 16th retry, the next failure finds
reconsumeTimes = 16 ≥ `maxReconsumeTimes` and goes to the DLQ, about 4 h 46 min after
the first delivery:
"""),
    Code("""
L.retry_schedule()
"""),
    Exercise("07.1", "L.params_07_1(SEED)", """
answer = int(L.retry_schedule(retries=L.params_07_1(SEED))["since_first_ms"].iloc[-1] // 1000)
answer
"""),
    Md("""
## 3. Into the dead-letter queue, quickly

Waiting almost five hours for a DLQ is not practical in a workshop. `Lab(delay_levels=…)`
sets the broker's `messageDelayLevel`. `FAST_LEVELS` makes all 18 levels one second, so
only the waiting is shorter and everything else is unchanged. A listener that always
fails:
"""),
    Code("""
fast = Lab(seed=SEED, delay_levels=L.FAST_LEVELS)
fast.send("TopicTest", "warm-up", tags="Warmup")
fast.push_consumer("CG", "TopicTest", listener=L.Flaky(100))
fast.send("TopicTest", "order-1", tags="Flaky")
fast.advance(30_000)
fast.queues().query("topic.str.startswith('%')")
"""),
    Md("""
17 deliveries (1 + 16 retries), 16 messages on `%RETRY%CG`, and 1 on `%DLQ%CG`. The
broker created the DLQ topic (1 queue) on the first dead letter. Which schedule queues
did the retries pass through?
"""),
    Code("""
print("schedule queues used:", L.schedule_queues_used(fast))
print(check_retry_timing(fast, "CG"))
"""),
    Exercise("07.2", "L.params_07_2(SEED)", """
r = L.params_07_2(SEED)
answer = [r + 1, [level - 1 for level in range(3, 3 + r)]]
answer
"""),
    Md("""
## 4. Acking part of a batch

With `consumeMessageBatchMaxSize` > 1 the listener gets several messages per call.
Setting `context.ack_index = k` before answering CONSUME_SUCCESS acks messages 0..k and
sends the rest back (facts §10.15). `L.PartialAck(1)` does that on first deliveries. The
batch size is 4, and each of TopicTest's 4 queues holds 6 messages:
"""),
    Code("""
acks = Lab(seed=SEED, delay_levels=L.FAST_LEVELS)
acks.send_many("TopicTest", 24)
acks.push_consumer("CG", "TopicTest", listener=L.PartialAck(1),
                   consume_message_batch_max_size=4)
acks.advance(5_000)
acks.deliveries().groupby(["queue", "reconsume_times"]).size()
"""),
    Md("""
Each queue's 6 messages came in one pull and were cut into chunks of 4 and 2. In the
chunk of 4, messages 2 and 3 went back. In the chunk of 2, `ackIndex` = min(1, 2 − 1) = 1
acked both. That makes 2 retries per queue, 8 in all, delivered again from `%RETRY%CG`.
"""),
    Exercise("07.3", "L.params_07_3(SEED)", """
p = L.params_07_3(SEED)
n, b, k = p["messages"], p["batch"], p["ack_index"]
chunks = [min(b, n - i) for i in range(0, n, b)]
answer = sum(size - 1 - min(k, size - 1) for size in chunks)
answer
"""),
    Md("""
## 5. Drive it yourself

Consumers the panel adds use the panel's listener. Switch *listener* to "fails", send a
message, and advance 10 s at a time: the log shows the send-back, the schedule service
delivering the retry, and the next failure. Switch back to "succeeds" before the DLQ.
"""),
    Code("""
control_panel(lab, sections=["send", "consumers", "time", "toggles", "log"])
"""),
    Md("""
## What to take away

* A failed message is not redelivered where it was. It is sent back and stored again as
  a new message on `%RETRY%<group>` after a growing delay (level 3 + retries), and the
  original offset is committed as if it had been consumed.
* After `maxReconsumeTimes` (16) retries it lands on `%DLQ%<group>`, which no consumer
  reads. Someone has to look there.
* `ackIndex` is per listener call: with batches, the messages after it are retried and
  the ones before it are not.

Next: lesson 08, offsets, and what a crash does to them.
"""),
]
# fmt: on


# ============================================================================================
# Lesson 08 — offsets and consume-from-where
# ============================================================================================
# fmt: off
L08: list[Cell] = [
    Md("""
# 08 · Offsets and consume-from-where

*Seed 003 §3 ("消息进度如何计算的": `computePullFromWhere`, `readOffset`,
`ConsumerManageProcessor#queryConsumerOffset`), seed 004 §8 (`OffsetStore`,
`RemoteBrokerOffsetStore`, `LocalFileOffsetStore`, persisted every 5 s), seed 000 step 11
(the commit offset in each pull); facts §10.4, §10.11–10.12.*

A consumer's progress on a queue is one number: the next offset to consume. This lesson
covers where that number is kept, when it is written, where a consumer starts when
there is none, and how many messages are delivered twice when a consumer dies before
writing it.
"""),
    Code("""
from mqlab.lab import Lab, figures
from mqlab.lab.check import check, learner_seed
from mqlab.lab.checkers import find_duplicates
from mqlab.lab.lessons import lesson08 as L
from mqlab.lab.widgets import control_panel

LEARNER = "your-name"
SEED = learner_seed(LEARNER)
lab = Lab(seed=SEED)
"""),
    Md("""
## 1. A new group starts at 0, even "from the last offset"

TopicTest already holds 12 messages when group `CG` starts with the default
`CONSUME_FROM_LAST_OFFSET`. The name suggests it will skip them:
"""),
    Code("""
lab.send_many("TopicTest", 12)
lab.push_consumer("CG", "TopicTest")
lab.advance(12_000)
len(lab.deliveries())
"""),
    Md("""
It consumed all 12. `computePullFromWhere` first reads the stored offset
(READ_FROM_STORE → QUERY_CONSUMER_OFFSET). Only −1, meaning "none", lets
`consumeFromWhere` decide. The broker has no offset for this new group, but
`queryConsumerOffset` answers **0** rather than "not found" whenever the queue's min offset
is still 0 and `checkInDiskByConsumeOffset(topic, queueId, 0)` is false (seed 003: "这就意味着ConsumeFromWhere中定义的三种枚举类型都不会生效,直接从0开始消费").
That check is not about flushing: it asks whether the queue's first message lies more than
`accessMessageInMemoryMaxRatio` (40 %) of the machine's RAM behind the commit log's end,
i.e. whether it has likely dropped out of the page cache. Only a topic whose old files were
deleted (min offset > 0) or whose first message is that far behind the end gets
QUERY_NOT_FOUND, and then GET_MAX_OFFSET. By default mqlab treats every message as in memory, so a
new group on a young topic always starts at 0 here.
"""),
    Code("""
L.print_events(lab.events(component="ConsumerManageProcessor.queryConsumerOffset"), limit=5)
"""),
    Md("""
## 2. Where the offset goes (clustering)

`RemoteBrokerOffsetStore` keeps the offsets in memory. Two paths carry them to the
broker. `MQClientInstance#persistAllConsumerOffset` runs every 5 s (first 10 s after
start) and sends a oneway UPDATE_CONSUMER_OFFSET per queue. On top of that, **every pull
carries the in-memory offset** (`commitOffset` with the COMMIT_OFFSET sysFlag), and the
broker stores it in step 11 of seed 000. `lab.consumer_offsets()` is the broker's
`consumerOffset.json`. `offsets_over_time` plots each queue's max offset (dashed) and the
committed offset (solid), with the lag below:
"""),
    Code("""
lab.consumer_offsets()
"""),
    Code("""
figures.offsets_over_time(lab, group="CG", topic="TopicTest")
"""),
    Exercise("08.1", "L.params_08_1(SEED)", """
p = L.params_08_1(SEED)
answer = p["old"] + p["new"]  # the broker answers 0 for a new group on a young topic
answer
"""),
    Md("""
## 3. Broadcasting: offsets in a local file

In BROADCASTING mode every consumer gets every message, so progress is per consumer.
`LocalFileOffsetStore` writes it to `offsets.json` under the client's directory (the
same file shape seed 004 shows) and the broker never hears of it. With no file, the
stored offset is −1, so `consumeFromWhere` really decides. LAST sends GET_MAX_OFFSET
and skips the 10 old messages:
"""),
    Code("""
bc = L.start_lab(SEED, old=10, new=5, consumers=2, group="BG", message_model="BROADCASTING")
len(bc.deliveries()), len(bc.consumer_offsets())
"""),
    Code("""
L.local_offsets(bc, "consumer-1")
"""),
    Exercise("08.2", "L.params_08_2(SEED)", """
p = L.params_08_2(SEED)
last = p["consume_from_where"] == "CONSUME_FROM_LAST_OFFSET"
per_consumer = p["new"] if last else p["old"] + p["new"]
answer = [p["consumers"] * per_consumer, 0]
answer
"""),
    Md("""
## 4. A crash before the offset was written

A killed consumer does not persist anything. Its successor starts from whatever the
broker holds, and messages consumed since then are delivered again: at-least-once. How
many depends on how far the committed offset lags behind the consumption. In a steady
stream, every pull carries the offset, so a fast consumer loses almost nothing, even
though it dies before its first 5 s persist:
"""),
    Code("""
fast = L.steady_crash_lab(SEED, consume_time_ms=0)
slowish = L.steady_crash_lab(SEED, consume_time_ms=300)
print("0 ms per message:  ", find_duplicates(fast, "CG"))
print("300 ms per message:", find_duplicates(slowish, "CG"))
"""),
    Md("""
A slow listener is needed for many duplicates. Here consumer-1 has one consume thread
and 500 ms per message. All 64 messages arrive in its first two pulls, so no later pull
carries the offset. Only the 5 s timer does, at 10 s and 15 s after start. The kill
comes at 13.5 s:
"""),
    Code("""
crash = L.crash_lab(SEED, consume_time_ms=500, kill_after_ms=13_500)
report = find_duplicates(crash, "CG")
print(report)
"""),
    Code("""
report.findings[["queue_offset", "first_t_ms", "again_t_ms", "again_consumer", "cause", "seq"]]
"""),
    Md("""
Each finding names its cause and the trace `seq` of the kill. The broker's offset was
the one persisted at 10 s: the lowest offset still in the ProcessQueue, which is the
message that was in the listener at that moment (it was handed over before 10 s and had
not finished). consumer-2 starts from there, so that message, every message handed to the
listener after it, and the one in the listener when the kill came were delivered again.
"""),
    Exercise("08.3", "L.params_08_3(SEED)", """
p = L.params_08_3(SEED)
d, k = p["consume_time_ms"], p["kill_after_ms"]
delivered = (k - 10) // d + 1  # handed to the listener by the kill (first at ~10 ms)
last_persist = 10_000 if k < 15_000 else 15_000
committed = (last_persist - 10) // d  # finished by the last persist
answer = [delivered - committed, 1]  # (b): the message in the listener at the kill
answer
"""),
    Md("""
## 5. Drive it yourself

On `lab`: add a consumer with a slow listener from Python (`lab.push_consumer("CG",
"TopicTest", consume_time_ms=2_000)`), send messages with the panel, then kill the
consumer with and without *persist first*, and compare `find_duplicates(lab, "CG")`.
*persist offsets* commits every running consumer's offsets now.
"""),
    Code("""
control_panel(lab, sections=["send", "consumers", "time", "inspect", "log"])
"""),
    Md("""
## What to take away

* The stored offset always wins. `consumeFromWhere` only matters when there is none, and
  for a new clustering group on a young topic the broker answers 0, so LAST behaves like
  FIRST.
* Clustering offsets reach the broker every 5 s and with every pull. Broadcasting offsets
  stay in a local file.
* A crash re-delivers everything consumed from the last offset the broker got on. With a
  fast listener that is next to nothing; with a slow one, up to 5 s of work. Listeners
  must be idempotent.
"""),
]
# fmt: on


LESSONS = {
    "05_rebalancing": ("l05", L05),
    "06_pull_loop_flow_control": ("l06", L06),
    "07_retry_dlq": ("l07", L07),
    "08_offsets": ("l08", L08),
}


def targets() -> dict[Path, nbformat.NotebookNode]:
    out = {}
    for name, (prefix, cells) in LESSONS.items():
        out[NOTEBOOKS / f"{name}.ipynb"] = build(cells, solutions=False, prefix=prefix)
        out[NOTEBOOKS / "solutions" / f"{name}_solutions.ipynb"] = build(
            cells, solutions=True, prefix=prefix
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report stale notebooks")
    args = ap.parse_args(argv)
    stale = []
    for path, nb in targets().items():
        text = nbformat.writes(nb) + "\n"
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for p in stale:
        print(("stale: " if args.check else "wrote ") + str(p.relative_to(ROOT)))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
