"""Build lessons 00–04: each source below makes a learner notebook and a solutions notebook.

    python tools/build_lessons_00_04.py          # writes notebooks/0N_*.ipynb and
                                                 # notebooks/solutions/0N_*_solutions.ipynb

A lesson is a list of cells: ``md(...)``, ``code(...)`` and ``ex(id, params, solution)``.
An exercise expands to a heading with the question (read from the registered exercise in
``mqlab.lab.lessons.lessonNN``, so the notebook and the checker never disagree), the
learner's parameters, an answer cell (``answer = ...`` for the learner, the worked answer
in the solutions) and a check cell (``check(...)``, or ``assert check(...)`` in the
solutions). Notebooks are written without outputs, with stable cell ids, so rebuilding an
unchanged source gives identical files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)
from mqlab.lab.check import EXERCISES

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Cell:
    kind: str  # "md", "code", "ex" (an exercise heading) or "sol" (its answer)
    text: str = ""


def md(text: str) -> Cell:
    return Cell("md", text.strip("\n"))


def code(text: str) -> Cell:
    return Cell("code", text.strip("\n"))


def ex(ex_id: str) -> Cell:
    """The heading of exercise ``ex_id``; the next cells show the learner's parameters."""
    return Cell("ex", ex_id)


def sol(text: str) -> Cell:
    """The worked answer of the exercise above (the learner copy gets ``answer = ...``)."""
    return Cell("sol", text.strip("\n"))


def preamble(module: str, lab: str = "Lab(seed=SEED)") -> Cell:
    return code(f"""
from mqlab.lab import Lab, figures
from mqlab.lab.check import check, learner_seed
from mqlab.lab.lessons import {module} as L
from mqlab.lab.widgets import control_panel

LEARNER = "your-name"
SEED = learner_seed(LEARNER)
lab = {lab}
""")


# ============================================================================================
# 00 · tour
# ============================================================================================
L00 = [
    md("""
# 00 · A tour of the workbench

mqlab is a small Python model of the Apache RocketMQ 4.9.3 broker, name server and
clients, run on a simulated clock that only moves when you say so. In this tour you build
a lab, send messages, consume them with a push consumer, read the trace and its timeline,
and drive the lab from a control panel. Each later lesson opens up one mechanism you meet
here (the map is at the end).

Put your name in `LEARNER` below: it picks your `SEED`, and your seed changes the numbers
in the exercises, so your answers are your own. Every exercise is *predict, then run*:
write your prediction into `answer`, run the check, then run the cells that show what
happened.
"""),
    preamble("lesson00"),
    md("""
## A lab

`Lab(seed=…)` builds a name server and one broker, `broker-a`, and starts them. Nothing
happens until you move time: `lab.step()` runs one event, `lab.advance(ms)` runs
everything due in the next `ms`, `lab.run_until_idle()` runs until only background timers
are left. `lab.now` is the virtual time in ms.
"""),
    code("""
lab.now, lab.events_run
"""),
    md("""
The broker already holds its built-in topics (facts §7.3). `TBW102` is the template for
topics created on first send (lesson 01).
"""),
    code("""
lab.topics(include_system=True)
"""),
    md("""
## Send

`lab.send_many(topic, n)` sends `n` messages with the lab's producer (`lab-producer`).
TopicTest does not exist yet: the producer borrows TBW102's route, and the broker creates
the topic with 4 queues on the first send (seed 002, `msgCheck` step 4; lesson 01).
"""),
    ex("00.1"),
    code("""
N = L.params_00_1(SEED)
N
"""),
    sol("""
answer = -(-N // 4)  # round robin over 4 queues: ceil(N / 4)
"""),
    md("Now run it and look at the queues' offsets."),
    code("""
lab.send_many("TopicTest", N, tags="TagA")
lab.queues("TopicTest")
"""),
    md("""
## Consume

A push consumer in group `CG` (node `consumer-1`) rebalances (seed 004), then pulls each
of its queues (seed 003). When a queue has nothing new, the broker does not answer at
once: it parks the pull in `PullRequestHoldService` (seed 001; lesson 04).
"""),
    code("""
lab.push_consumer("CG", "TopicTest")
lab.run_until_idle()
lab.deliveries()
"""),
    md("""
The parked pulls: one per TopicTest queue, and one for the group's retry topic
`%RETRY%CG`, which a CLUSTERING push consumer (the default) subscribes to as well
(`DefaultMQPushConsumerImpl#copySubscription`; a BROADCASTING one does not).
"""),
    code("""
lab.held_pulls()
"""),
    md("""
What will happen next, and when: the pending timers (`lab.timers()` lists them all; this
view leaves out the schedule service's 18 delay-level timers).
"""),
    code("""
L.upcoming(lab, 8)
"""),
    md("""
## The trace

Every mechanism step is a trace event: the node, the component (RocketMQ's class#method),
the seed's step number, and what happened in words. `L.round_trip` keeps the events of a
send → store → pull → consume round trip.
"""),
    code("""
L.round_trip(lab, 0).head(24)
"""),
    md("""
The same run as a timeline: one lane per node, time to the right. Hover over a marker to
read the event; the pale bars are pulls parked in the broker.
"""),
    code("""
figures.sequence_timeline(lab, nodes=["lab-producer", "broker-a", "consumer-1"])
"""),
    ex("00.2"),
    code("""
D = L.params_00_2(SEED)
print(f"the lab is idle at {lab.now} ms; you wait D = {D} ms")
"""),
    sol("""
answer = lab.now + D + 2  # 1 ms to the broker, which wakes the parked pull; 1 ms back
"""),
    code("""
lab.advance(D)
lab.send("TopicTest", b"late", tags="TagA")
lab.deliveries().tail(1)
"""),
    md("""
Zoom in on the late message: the send reaches the broker, `ReputMessageService` builds
the consume-queue unit and calls `notifyMessageArriving`, which replays the parked pull
(seed 001 step 3), and the answer goes straight back.
"""),
    code("""
figures.sequence_timeline(
    lab, nodes=["lab-producer", "broker-a", "consumer-1"], start_ms=lab.now - 5
)
"""),
    ex("00.3"),
    code("""
K = L.params_00_3(SEED)
K
"""),
    sol("""
answer = [4 // K + (1 if i < 4 % K else 0) for i in range(K)]  # AllocateMessageQueueAveragely
"""),
    code("""
for _ in range(K - 1):
    lab.push_consumer("CG", "TopicTest")
lab.run_until_idle()
L.queues_held(lab)
"""),
    md("""
Who held which queue, round after round (lesson 05 takes rebalancing apart):
"""),
    code("""
figures.allocation_heatmap(lab)
"""),
    md("""
## The control panel

Every lesson has a panel like this one. Each click runs the lab and then says, in words,
which trace events it produced; bad input is reported in the panel and never raises.
Try: send 5 messages, pull queue 0 once, then *advance to next timer*. (Clicks change
`lab`; the exercises above are already checked.)
"""),
    code("""
control_panel(lab)
"""),
    md("""
## Map of the lessons

Each lesson is one mechanism, mapped to the seed text that describes it.
"""),
    code("""
L.lesson_map()
"""),
    md("""
**What the model leaves out.** Time is virtual and every link takes 1 ms unless you say
otherwise; the broker runs a request's processing in one event (no thread pools, no
queueing delay); there is a master/slave role flag (a SLAVE refuses writes and keeps
request offsets) but no replication, DLedger or failover, no ACL, no message traces, and the store keeps real files but never runs out of page cache. The
trace shows what RocketMQ *decides*, not how long a real JVM takes to decide it.
"""),
]


# ============================================================================================
# 01 · send path
# ============================================================================================
L01 = [
    md("""
# 01 · The send path and topic auto-creation

Seed 002 walks `SendMessageProcessor#asyncSendMessage` (RocketMQ 4.9.3) in six steps:
**1** `preSend` · **2** build the `MessageExtBrokerInner` · **3** `handleRetryAndDLQ` ·
**4** transaction-prepared messages · **5** `asyncPutMessage` · **6**
`handlePutMessageResult`. `preSend` (seed 002 §2) makes the response, refuses sends before
`startAcceptSendRequestTimeStamp`, then runs `msgCheck` (§2.1):

1. broker not writable *and* the topic is an order topic → NO_PERMISSION (16);
2. topic name: blank, characters outside `^[%|a-zA-Z0-9_-]+$`, or longer than 127 →
   SYSTEM_ERROR (1);
3. a not-allowed system topic (`SCHEDULE_TOPIC_XXXX`) → NO_PERMISSION (16);
4. look the topic up; if missing, `createTopicInSendMessageMethod` copies the default
   topic `TBW102` (§2.1.1), else a `%RETRY%` topic is made, else TOPIC_NOT_EXIST (17);
5. `queueId >= max(writeQueueNums, readQueueNums)` → SYSTEM_ERROR (1).

In this lesson you send hand-made `SEND_MESSAGE_V2` requests, so every field the broker
checks is in plain sight, and then meet the two-broker pitfall of §2.1.3.
"""),
    preamble("lesson01"),
    md("""
## A hand-made send

`SEND_MESSAGE_V2` carries its header under one-letter names (facts §2.2): `a` producer
group, `b` topic, `c` default topic (`TBW102`), `d` defaultTopicQueueNums, `e` queue id,
`f` sysFlag, `g` born timestamp, `h` flag, `i` properties (`TAGS\\x01TagA`).
"""),
    code("""
L.send_fields("TopicTest")
"""),
    code("""
call = L.send_raw(lab, "TopicTest", b"hello")
L.outcome(call)
"""),
    md("""
What the broker did, step by step: `msgCheck` step 4 did not find TopicTest, so
`TopicConfigManager#createTopicInSendMessageMethod` ran its steps (§2.1.1): lock, take
TBW102 as the template, check its PERM_INHERIT, copy it with
`min(defaultTopicQueueNums, TBW102 writeQueueNums)` queues and the inherit bit cleared,
persist `topics.json`, and re-register the broker with the name server.
"""),
    code("""
L.broker_events(lab, call)
"""),
    code("""
t = lab.topics(include_system=True)
t[t["topic"].isin(["TBW102", "TopicTest"])]
"""),
    ex("01.1"),
    code("""
k = L.params_01_1(SEED)
k
"""),
    sol("""
answer = [min(k, 8), 6]  # min(defaultTopicQueueNums, TBW102's 8); perm 7 without INHERIT
"""),
    code("""
lab1 = Lab(seed=SEED)
L.send_raw(lab1, default_topic_queue_nums=k)
lab1.topics()
"""),
    md("""
## msgCheck steps 2 and 3: topic names

The broker's `TopicValidator#validateTopic` checks blank, then illegal characters, then
length (facts §7.1); step 3 refuses `SCHEDULE_TOPIC_XXXX`, where delayed messages wait
(sending there directly would bypass the delay).
"""),
    ex("01.2"),
    code("""
name = L.topic_name(SEED)
name
"""),
    sol("""
legal = 0 < len(name) <= 127 and all(ch in L.TOPIC_ALLOWED_CHARS for ch in name)
answer = 1 if not legal else (16 if name == "SCHEDULE_TOPIC_XXXX" else 0)
"""),
    md("Every name of the exercise, each sent to a fresh lab:"),
    code("""
L.topic_name_table()
"""),
    md("""
## autoCreateTopicEnable off

With `autoCreateTopicEnable=false` the broker does not create TBW102 at all (facts §7.3),
and `createTopicInSendMessageMethod` would in any case force TBW102's perm to RW without
INHERIT (§2.1.1 step 3), so step 4 answers TOPIC_NOT_EXIST. Topics must then be created by
an admin (`mqadmin updateTopic` sends `UPDATE_AND_CREATE_TOPIC`). Step 5 compares the
queue id with the *larger* of the write and read queue numbers.
"""),
    ex("01.3"),
    code("""
p = L.params_01_3(SEED)
p
"""),
    sol("""
answer = [17, 0 if p["queue_id"] < max(p["read_queue_nums"], p["write_queue_nums"]) else 1]
"""),
    code("""
off = Lab(seed=SEED, broker={"auto_create_topic_enable": False})
first = L.send_raw(off, "NewTopic")
L.create_topic(
    off, "NewTopic", read_queue_nums=p["read_queue_nums"], write_queue_nums=p["write_queue_nums"]
)
second = L.send_raw(off, "NewTopic", queue_id=p["queue_id"])
L.outcome(first), L.outcome(second)
"""),
    md("""
## Two brokers: why auto-creation is off in production (seed 002 §2.1.3)

Two brokers, auto-creation on. The producer has no route for TopicTest, so it borrows
TBW102's route (both brokers) and sends the first message to one of them. Only that
broker creates the topic and re-registers it with the name server. When the producer next
refreshes its routes (10 ms after it starts, then every 30 s: `pollNameServerInterval`),
the name server's route for TopicTest lists that one broker, and from then on every
producer sends only there: the other broker never gets a chance to create the topic.
"""),
    code("""
two, first = L.two_broker_lab(SEED)
print("the first message went to", first)
L.messages_per_broker(two)
"""),
    code("""
L.route_events(two, end_ms=100)
"""),
    code("""
figures.sequence_timeline(two, nodes=["lab-producer", "namesrv", "broker-a", "broker-b"], end_ms=40)
"""),
    ex("01.4"),
    code("""
N = L.params_01_4(SEED)
N
"""),
    sol("""
answer = [N + 1, 0]  # the route lists only the first broker; the other never gets the topic
"""),
    code("""
two.send_many("TopicTest", N)
L.messages_per_broker(two)
"""),
    md("""
A second producer (another process) learns the route from the name server directly, so
it too sends only to that broker. The fix RocketMQ recommends: turn
`autoCreateTopicEnable` off and create each topic on every broker (or on the cluster).
"""),
    code("""
L.send_from_new_producer(two, count=8)
"""),
    md("""
## Your turn

Toggle *autoCreateTopicEnable* off, type a new topic name and send: the panel shows the
TOPIC_NOT_EXIST remark. Then try an illegal name.
"""),
    code("""
control_panel(lab, sections=["send", "toggles", "inspect", "log"])
"""),
]


# ============================================================================================
# 02 · store
# ============================================================================================
L02 = [
    md("""
# 02 · The store: commit-log and consume-queue bytes

The broker writes every message of every topic, one after the other, into one **commit
log** (`CommitLog`): a fixed part of 91 bytes (with IPv4 hosts) plus the body, the topic
and the properties string (facts §4.1). `ReputMessageService` then appends a 20-byte unit
to the topic's **consume queue** (`ConsumeQueue`, facts §6): commit-log offset (8 bytes),
size (4), tags hash code (8). `DefaultMessageStore#getMessage` (seed 003) scans those
units, filters by tags code, and only then reads the commit log.
"""),
    preamble("lesson02"),
    code("""
call = L.send_raw(lab, body=b"hello")
lab.commit_log(raw=True)[["commit_log_offset", "size", "topic", "queue_id", "queue_offset", "tags"]]
"""),
    md("""
## The bytes of one entry

Each bar is one field; hover for its bytes. The fixed header holds TOTALSIZE,
MAGICCODE (0xDAA320A7), BODYCRC, QUEUEID, FLAG, QUEUEOFFSET, PHYSICALOFFSET, SYSFLAG,
BORNTIMESTAMP, BORNHOST, STORETIMESTAMP, STOREHOSTADDRESS, RECONSUMETIMES and
PREPAREDTRANSACTIONOFFSET; then come the body, topic and properties, each after its
length.
"""),
    code("""
figures.commit_log_byte_map(lab, 0)
"""),
    code("""
L.entry_fields(lab, 0)
"""),
    md("""
The stored properties are `CLUSTER` and `TAGS`, in that order: the broker parses the
client's string into a `java.util.HashMap`, adds the cluster name, drops `WAIT` (seed 002
§1) and writes the map back in its iteration order, bucket by bucket of the key's hash
(`CLUSTER` falls in bucket 12, `TAGS` in 14; facts §4.4). 32 bytes here. So this entry is
91 + 5 + 9 + 32 bytes.
"""),
    code("""
L.entry_size(5), repr(L.PROPS_TAGA), len(L.PROPS_TAGA)
"""),
    ex("02.1"),
    code("""
body_len = L.params_02_1(SEED)
body_len
"""),
    sol("""
answer = 91 + body_len + len("TopicTest") + len(L.PROPS_TAGA)
"""),
    code("""
L.send_raw(lab, body=b"x" * body_len)
lab.commit_log()[["commit_log_offset", "size"]]
"""),
    md("""
## The consume queue: 20-byte units

Queue 0's units, decoded and as the bytes on disk. The last 8 bytes are the tags code:
Java's `String.hashCode()` of the TAGS property (facts §6: "TagA" = 2598919), so a tag
filter can skip a message without reading the commit log.
"""),
    code("""
L.consume_queue_bytes(lab, "TopicTest", 0)
"""),
    ex("02.2"),
    code("""
tag = L.params_02_2(SEED)
tag
"""),
    sol("""
h = 0
for ch in tag:
    h = (31 * h + ord(ch)) & 0xFFFFFFFF  # Java int arithmetic
answer = h - (1 << 32) if h >= 1 << 31 else h
"""),
    code("""
L.send_raw(lab, tags=tag)
L.consume_queue_bytes(lab, "TopicTest", 0).tail(1)
"""),
    md("""
## Files and roll-over

The commit log is a sequence of fixed-size files, each named by its start offset (20
digits). RocketMQ's are 1 GiB; mqlab's default is 16 MiB, and a lesson may make them tiny.
An entry goes into the current file only if 8 bytes remain after it; otherwise the broker
writes an 8-byte end-of-file marker (TOTALSIZE = the bytes left, MAGICCODE 0xCBD43194)
and starts the next file (facts §4.1).
"""),
    code("""
L.commit_log_files(lab)
"""),
    ex("02.3"),
    code("""
p = L.params_02_3(SEED)
p
"""),
    sol("""
size = 91 + p["body_len"] + len("TopicTest") + len(L.PROPS_TAGA)
per_file = (p["mapped_file_size_commit_log"] - 8) // size
i = p["messages"] - 1
start = (i // per_file) * p["mapped_file_size_commit_log"]
answer = [start, start + (i % per_file) * size]
"""),
    code("""
small = Lab(seed=SEED, store={"mapped_file_size_commit_log": p["mapped_file_size_commit_log"]})
for _ in range(p["messages"]):
    L.send_raw(small, body=b"x" * p["body_len"])
L.commit_log_files(small)
"""),
    code("""
small.commit_log()[["commit_log_offset", "size", "queue_offset"]]
"""),
    md("""
## A crash with a torn tail, and recovery

`L.tear_tail` kills the broker (no shutdown step runs: what the page cache held survives,
and the `abort` file stays behind), then drops the last bytes of the newest commit-log
file. In 4.9.3 a commit-log file is preallocated at its full size, and
`MappedFileQueue#doLoad` refuses to load a file of any other length, so a crash never
leaves a short file: the cut stands for a **torn write inside a preallocated file**, where
the last entry is only partly there and the rest of the file is zeros. mqlab's files are
not preallocated (a file is as long as its flushed data) and it loads a shorter one,
reading the missing bytes as zeros: the same bytes recovery would see.

On restart the `abort` file tells `DefaultMessageStore#load` that the last exit was not
clean (`lastExitOK = !isTempFileExist()`; the trace shows `last_shutdown_normal=False`),
so 4.9.3 runs `CommitLog#recoverAbnormally`: it goes back from the newest file to the
first one whose first message is older than the checkpoint's (`StoreCheckpoint`) minimum
timestamp, walks forward entry by entry (magic code, CRC, length), dispatching each entry
to the consume queues again, and cuts at the first entry that is not whole. mqlab keeps no
checkpoint and simplifies: it walks the last files as `recoverNormally` does (the trace
names that method), cuts at the same place, and its reput rebuilds any missing
consume-queue units. Either way, units that point past the cut are dropped
(`truncateDirtyLogicFiles`), and queue offsets continue from what survived.
"""),
    ex("02.4"),
    code("""
p = L.params_02_4(SEED)
p
"""),
    sol("""
size = 91 + p["body_len"] + len("TopicTest") + len(L.PROPS_TAGA)
answer = (p["messages"] * size - p["cut_bytes"]) // size  # whole entries left
"""),
    code("""
crash = Lab(seed=SEED)
for _ in range(p["messages"]):
    L.send_raw(crash, body=b"x" * p["body_len"])
L.tear_tail(crash, p["cut_bytes"])
"""),
    code("""
L.recovery_events(crash)
"""),
    code("""
crash.queues("TopicTest")
"""),
    md("The next send continues from the recovered offset:"),
    code("""
L.outcome(L.send_raw(crash, body=b"after the crash"))
"""),
    md("""
## Your turn

Send messages with different tags and bodies, then refresh the commit-log and
consume-queue views.
"""),
    code("""
control_panel(lab, sections=["send", "inspect", "log"])
"""),
]


# ============================================================================================
# 03 · pull processing
# ============================================================================================
L03 = [
    md("""
# 03 · The broker's pull processing in 11 steps

Seed 000 walks `PullMessageProcessor#processRequest` (RocketMQ 4.9.3) in eleven steps:

| step | check | fails with |
|---|---|---|
| 1 | the broker is readable (`brokerPermission`) | NO_PERMISSION 16 |
| 2 | the consumer group's subscription config | SUBSCRIPTION_GROUP_NOT_EXIST 26 |
| 3 | the group may consume (`consumeEnable`) | NO_PERMISSION 16 |
| 4 | the topic's config; the topic is readable (`perm`) | TOPIC_NOT_EXIST 17; NO_PERMISSION 16 (`the topic[X] pulling message is forbidden`) |
| 5 | `0 <= queueId < readQueueNums` | SYSTEM_ERROR 1 |
| 6 | the subscription (from the request, or from the group's heartbeat) and filter data | SUBSCRIPTION_NOT_EXIST 24, … |
| 7 | a non-TAG expression needs `enablePropertyFilter` | SYSTEM_ERROR 1 |
| 8 | the message filter (`filterSupportRetry` picks the retry-aware one) | — |
| 9 | `DefaultMessageStore#getMessage` | — |
| 10 | the store returned null | SYSTEM_ERROR 1 |
| 11 | commit the consumer's offset | — |

After step 9 the store's `GetMessageStatus` becomes the response code (seed 003's table).
Each step emits a trace event with its number, so you can watch a pull go through.
This lab records network frames too (`trace_level="frames"`).
"""),
    preamble("lesson03", 'Lab(seed=SEED, trace_level="frames")'),
    code("""
for i in range(3):
    L.send_raw(lab, body=f"m{i}".encode())
lab.queues("TopicTest")
"""),
    md("""
## One raw pull, one event at a time

`L.walk_pull` sends a `PULL_MESSAGE` for queue 0 from offset 0 and calls `lab.step()`
until the answer is back. `lab_step` 1 is the request frame arriving: the broker runs
steps 1–11 inside that one event, as the Java pull thread does. `lab_step` 2 is the
response arriving at the client. The pull's sysFlag is SUBSCRIPTION only: no SUSPEND (an
empty result is answered at once) and no COMMIT_OFFSET (step 11 commits nothing).
"""),
    code("""
walk = L.walk_pull(lab, offset=0)
walk
"""),
    code("""
L.pull_outcome(walk.attrs["call"])
"""),
    code("""
figures.sequence_timeline(lab, nodes=["raw-client", "broker-a"], start_ms=lab.now - 3)
"""),
    md("""
## From GetMessageStatus to response code (seed 003)

The remark of a pull response is the status name. Two statuses have no fixed code: an
empty or missing queue answers PULL_NOT_FOUND if the pull asked for offset 0 and
PULL_OFFSET_MOVED otherwise.
"""),
    code("""
L.status_code_table()
"""),
    ex("03.1"),
    code("""
p = L.params_03_1(SEED)
p
"""),
    sol("""
m, x = p["messages"], p["offset"]
if x < m:
    answer = [0, m]  # FOUND: all of them fit in 32, next = max
elif x == m:
    answer = [19, m]  # OFFSET_OVERFLOW_ONE
else:
    answer = [21, 0]  # OFFSET_OVERFLOW_BADLY; minOffset 0 sends the client back to 0
"""),
    code("""
lab31 = L.loaded_lab(SEED, p["messages"])
L.pull_outcome(L.pull(lab31, offset=p["offset"]))
"""),
    md("""
## Where pulls fail

Each fault below breaks one precondition on an otherwise healthy lab: a write-only broker
(perm 2), an unknown group with `autoCreateSubscriptionGroup` off, a group updated with
`consumeEnable=false` (`UPDATE_AND_CREATE_SUBSCRIPTIONGROUP`, as `mqadmin updateSubGroup`
sends it), a missing topic, queue id 7 of 4, a pull without the SUBSCRIPTION flag from a
group that never sent a heartbeat, an SQL92 expression, and a store that is not readable.
"""),
    ex("03.2"),
    code("""
fault = L.params_03_2(SEED)
fault
"""),
    sol("""
answer = {
    "broker permission 2 (write only)": [1, 16],
    "group CG updated with consumeEnable false": [3, 16],
    "topic NoSuchTopic": [4, 17],
    "queueId 7 of a 4-queue topic": [5, 1],
    "no SUBSCRIPTION flag and no heartbeat": [6, 24],
    "SQL92 expression, enablePropertyFilter off": [7, 1],
}[fault]
"""),
    code("""
L.fault_table(SEED)
"""),
    md("""
The step ladder: for a healthy pull and each fault, which steps passed (green), which one
failed (red) and which were never reached (grey). Step 10 is the exception: when the store
returns null, processRequest still goes on to step 11.
"""),
    code("""
L.step_ladder_figure(L.step_ladder(SEED))
"""),
    md("""
## Filtering in the consume queue

Step 8 builds an `ExpressionMessageFilter`; `getMessage` compares each unit's tags code
with the subscription's codes before it reads the commit log (facts §10.1).
"""),
    ex("03.3"),
    code("""
p = L.params_03_3(SEED)
p
"""),
    sol("""
answer = [20, p["messages"]]  # NO_MATCHED_MESSAGE → PULL_RETRY_IMMEDIATELY; every unit examined
"""),
    code("""
lab33 = L.loaded_lab(SEED, p["messages"])
L.pull_outcome(L.pull(lab33, offset=p["offset"], subscription="TagB"))
"""),
    ex("03.4"),
    code("""
y = L.params_03_4(SEED)
y
"""),
    sol("""
answer = [19 if y == 0 else 21, "NO_MESSAGE_IN_QUEUE"]
"""),
    code("""
L.pull_outcome(L.pull(lab, queue_id=3, offset=y))
"""),
    md("""
On a master, a PULL_OFFSET_MOVED answer also stores an `OffsetMovedEvent` message in the
system topic `OFFSET_MOVED_EVENT` (facts §10.2 step 12); if your pull got 21, that
topic's queue now holds one message:
"""),
    code("""
lab.queues("OFFSET_MOVED_EVENT")
"""),
    md("""
## Step 11: committing the offset

With the COMMIT_OFFSET flag (sysFlag 1 | 4 = 5), step 11 stores the pull's `commitOffset`
for the group, the way a push consumer reports its progress with every pull.
"""),
    code("""
L.pull(lab, L.pull_fields(offset=1, sys_flag=5, commit_offset=1))
lab.consumer_offsets()
"""),
    md("""
## Your turn

Pull queue 0 from different offsets, flip the toggles, and read the words the panel
prints for each step.
"""),
    code("""
control_panel(lab, sections=["pull", "toggles", "inspect", "log"])
"""),
]


# ============================================================================================
# 04 · long polling
# ============================================================================================
L04 = [
    md("""
# 04 · Long polling vs short polling

When a pull with the SUSPEND flag finds nothing (PULL_NOT_FOUND), the broker does not
answer: `PullMessageProcessor#processRequest` parks it in `PullRequestHoldService`
(seed 001) under the key `topic@queueId`, for the consumer's `suspendTimeoutMillis`
(15 000 ms) if `longPollingEnable` is on, else for `shortPollingTimeMills` (1 000 ms).

The hold service checks its table every 5 000 ms (with long polling; every
`shortPollingTimeMills` without) and calls `notifyMessageArriving(topic, queueId,
maxOffset)` for every key. When a message is stored, `ReputMessageService` calls it too,
with the message's tags code (long polling only). `notifyMessageArriving` (seed 001
steps 1–5): **1** take the key's pulls; **2** if the max offset is not beyond the pull's
offset, read it again; **3** if it is, check the filter (a null tags code matches) and on
a match replay the pull (`executeRequestWhenWakeup`, no second suspend); **4** if the pull
has waited its timeout, replay it anyway; **5** otherwise park it again.
"""),
    preamble("lesson04"),
    code("""
L.send_message(lab, queue_id=0)  # creates TopicTest; queue 1 stays empty
lab.queues("TopicTest")
"""),
    md("""
## Park a pull

`L.park_pull(lab, at)` sends a pull for the empty queue 1 so that it reaches the broker at
`at` ms. The broker answers nothing; the pull sits in the hold service's table.
"""),
    code("""
call = L.park_pull(lab, 2000)
lab.held_pulls()
"""),
    md("The hold service's next check is a timer (`PullRequestHoldService.run`):"),
    code("""
t = lab.timers()
t[t["name"].str.startswith("PullRequestHoldService")]
"""),
    code("""
lab.advance(5_000 - lab.now)  # to the hold service's first check
L.hold_events(lab, 2000)
"""),
    md("""
The check at 5 000 ms found nothing new and the pull has waited 3 000 of its 15 000 ms, so
it stays parked (step 5). Let it time out:
"""),
    code("""
lab.advance(15_001)
L.hold_events(lab, 5001)
"""),
    md("""
The deadline passed at 17 000 ms, but nothing happens until the next check, at 20 000 ms
(step 4): the replay answers PULL_NOT_FOUND, which reaches the client 1 ms later. Long
polling answers an empty pull 15 to 20 s after it was parked.
"""),
    code("""
call.code, call.remark, call.done_at
"""),
    ex("04.1"),
    code("""
at = L.park_time(SEED)
print(f"your pull reaches the broker at {at} ms")
"""),
    sol("""
answer = -(-(at + 15_000) // 5_000) * 5_000 + 1  # first check at or after the deadline, +1 ms
"""),
    code("""
L.time_pull(SEED)
"""),
    ex("04.2"),
    code("""
print(f"your pull reaches the broker at {at} ms; longPollingEnable = false")
"""),
    sol("""
answer = -(-(at + 1_000) // 1_000) * 1_000 + 1  # suspend 1 000 ms, checks every 1 000 ms
"""),
    code("""
L.time_pull(SEED, long_polling=False)
"""),
    md("""
## Woken by a message

A message for the parked queue wakes the pull at once: `ReputMessageService` dispatches it
and calls `notifyMessageArriving` with its tags code, the filter matches, and the pull is
replayed (step 3).
"""),
    ex("04.3"),
    code("""
print(f"pull parked at {at} ms; the message reaches the broker at {at + 3000} ms")
"""),
    sol("""
answer = at + 3_000 + 1  # woken in the same ms, the answer takes 1 ms
"""),
    code("""
L.time_pull(SEED, park_at=at, message_at=at + 3000)
"""),
    md("""
## Not woken by a message that does not match

With subscription `TagA`, a TagB message fails the filter in step 3, so the pull stays
parked. The next 5-second check calls `notifyMessageArriving` with a null tags code, which
matches everything: the pull is replayed, and the replay's `getMessage` filters TagB out.
Which status is that, and which code does seed 003's table give it? If the message and a
check fall in the same millisecond, the check runs first.
"""),
    ex("04.4"),
    code("""
print(f"pull (TagA) parked at {at} ms; a TagB message reaches the broker at {at + 3000} ms")
"""),
    sol("""
answer = [20, (at + 3_000) // 5_000 * 5_000 + 5_000 + 1]  # NO_MATCHED_MESSAGE → 20
"""),
    code("""
L.time_pull(SEED, park_at=at, message_at=at + 3000, message_tags="TagB", subscription="TagA")
"""),
    md("""
## A push consumer for a minute

The same 20 messages arrive at the same moments for two labs, one with long polling and
one without. Long polling answers a parked pull as soon as a message is stored (green) or
after 15–20 s (orange). Short polling parks each pull for 1 000 ms only, and nothing wakes
it early: the next 1-second check answers it, with a message (green) or without (orange).
So the consumer pulls far more often and still waits up to a second for each message.
"""),
    code("""
figures.long_poll_wait_histogram(L.polling_lab(SEED, long_polling=True))
"""),
    code("""
figures.long_poll_wait_histogram(L.polling_lab(SEED, long_polling=False))
"""),
    code("""
L.compare_polling(SEED)
"""),
    md("""
## Your turn

Pull queue 1 with *suspend* on, then use *advance to next timer* and *let this long poll
time out*; flip *longPollingEnable* and do it again.
"""),
    code("""
control_panel(lab, sections=["send", "pull", "time", "toggles", "inspect", "log"])
"""),
]


LESSONS = {
    "00_tour": L00,
    "01_send_path": L01,
    "02_store": L02,
    "03_pull_processing": L03,
    "04_long_polling": L04,
}


def build(stem: str, cells: list[Cell], *, solutions: bool) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    out = []
    current = ""
    for c in cells:
        if c.kind == "md":
            text = c.text
            if solutions and not out:
                text = text.replace("\n", " — solutions\n", 1)
            out.append(nbformat.v4.new_markdown_cell(text))
        elif c.kind == "code":
            out.append(nbformat.v4.new_code_cell(c.text))
        elif c.kind == "ex":
            current = c.text
            note = (
                "*Worked answer below.*"
                if solutions
                else "*Predict first: replace the `...` with your answer, then run the check.*"
            )
            heading = f"### Exercise {current}\n\n{EXERCISES[current].question}\n\n{note}"
            out.append(nbformat.v4.new_markdown_cell(heading))
        else:
            answer = c.text if solutions else "answer = ...  # your prediction"
            check = f'check("{current}", answer, seed=SEED)'
            out.append(nbformat.v4.new_code_cell(answer))
            out.append(nbformat.v4.new_code_cell(f"assert {check}" if solutions else check))
    for i, cell in enumerate(out):
        cell["id"] = f"{stem.replace('_', '-')}-{i:03d}"
    nb.cells = out
    nbformat.validate(nb)
    return nb


def main() -> None:
    nbdir = ROOT / "notebooks"
    (nbdir / "solutions").mkdir(parents=True, exist_ok=True)
    for stem, cells in LESSONS.items():
        learner = build(stem, cells, solutions=False)
        solution = build(stem, cells, solutions=True)
        nbformat.write(learner, nbdir / f"{stem}.ipynb")
        nbformat.write(solution, nbdir / "solutions" / f"{stem}_solutions.ipynb")
        print(f"wrote notebooks/{stem}.ipynb and notebooks/solutions/{stem}_solutions.ipynb")


if __name__ == "__main__":
    main()
