"""Lesson 01 — the send path and topic auto-creation (``SendMessageProcessor#asyncSendMessage``).

``SendMessageProcessor#asyncSendMessage`` runs ``preSend`` (start-accept time, then
``msgCheck`` steps 1–5: broker writable for order topics · topic name rules · not-allowed
system topics · topic lookup with auto-creation from ``TBW102`` · queue id range), then
builds, stores and answers. These helpers send hand-made ``SEND_MESSAGE_V2`` requests
(``SendMessageRequestHeaderV2``'s short names), so every field the broker checks is in plain sight, and run the
two-broker scenario: the first send creates the topic on one broker
only, that broker re-registers with the name server, and once producers refresh their
routes (10 ms after start, then every 30 s) every producer sends there.

Later lessons import ``send_raw`` from here.
"""

from __future__ import annotations

import pandas as pd

from mqlab.common.message import Message
from mqlab.lab.check import Misconception, exercise
from mqlab.lab.lab import Lab
from mqlab.remoting.codes import ResponseCode
from mqlab.runtime.raw_client import Call

__all__ = [
    "send_fields",
    "send_raw",
    "outcome",
    "TOPIC_NAMES",
    "TOPIC_ALLOWED_CHARS",
    "broker_events",
    "route_events",
    "topic_name",
    "topic_name_table",
    "create_topic",
    "messages_per_broker",
    "two_broker_lab",
    "send_from_new_producer",
    "params_01_1",
    "params_01_3",
    "params_01_4",
]

#: Topic names for exercise 01.2 (``msgCheck`` steps 2–3; ``TopicValidator#validateTopic``).
TOPIC_NAMES = (
    "Topic Test",
    "order.created",
    "orders|eu",
    "SCHEDULE_TOPIC_XXXX",
    "T" * 128,
    "café",
    "Orders_2024-eu",
    "%RETRY%CG",
)


#: TopicValidator's allowed characters (``TopicValidator``: ``^[%|a-zA-Z0-9_-]+$``, at most 127).
TOPIC_ALLOWED_CHARS = frozenset(
    "%|-_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)


def send_fields(
    topic: str = "TopicTest", *, queue_id: int = 0, tags: str | None = "TagA",
    default_topic_queue_nums: int = 4, group: str = "PG",
) -> dict:  # fmt: skip
    """SEND_MESSAGE_V2 ext fields (``SendMessageRequestHeaderV2``'s short names) as a Java producer fills them."""
    fields = {
        "a": group, "b": topic, "c": "TBW102", "d": default_topic_queue_nums, "e": queue_id,
        "f": 0, "g": 0, "h": 0,
    }  # fmt: skip
    if tags is not None:
        fields["i"] = f"TAGS\x01{tags}"
    return fields


def send_raw(
    lab: Lab, topic: str = "TopicTest", body: bytes = b"hello", *, broker: str = "broker-a",
    queue_id: int = 0, tags: str | None = "TagA", default_topic_queue_nums: int = 4,
    run: bool = True,
) -> Call:  # fmt: skip
    """Send one hand-made SEND_MESSAGE_V2 to ``broker`` (queue ``queue_id``; no UNIQ_KEY).

    The stored properties are ``TAGS`` (if given) and ``CLUSTER`` (added by the broker), so
    an entry is 91 + body + topic + properties bytes (``CommitLog#calMsgLength``).
    """
    if not isinstance(body, bytes):
        raise TypeError(f"body must be bytes, got {type(body).__name__}")
    fields = send_fields(topic, queue_id=queue_id, tags=tags,
                         default_topic_queue_nums=default_topic_queue_nums)  # fmt: skip
    return lab.request(broker, "SEND_MESSAGE_V2", fields, body, run=run)


def outcome(call: Call) -> dict:
    """A finished call in words: code, its name, the remark's first line, the queue offset.
    A call that failed without an answer (its connection closed or reset) gives the
    exception's name and message instead of a code."""
    if call.done and call.response is None and call.error is not None:
        return {"code": None, "code_name": type(call.error).__name__,
                "remark": str(call.error).split("\n")[0], "queue_offset": None}  # fmt: skip
    if not call.done or call.response is None:
        return {"code": None, "code_name": "no answer yet", "remark": "", "queue_offset": None}
    code = call.code
    try:
        name = ResponseCode(code).name
    except ValueError:
        name = str(code)
    offset = call.ext("queueOffset")
    return {
        "code": code, "code_name": name, "remark": (call.remark or "").split("\n")[0],
        "queue_offset": None if offset is None else int(offset),
    }  # fmt: skip


def broker_events(lab: Lab, call: Call) -> pd.DataFrame:
    """What the brokers traced while ``call`` was in flight (its request → its answer)."""
    ev = lab.events()
    end = call.done_at if call.done_at is not None else lab.now
    brokers = {b.name for b in lab.brokers}
    ev = ev[(ev["t_ms"] >= call.sent_at) & (ev["t_ms"] <= end) & ev["node"].isin(brokers)]
    ev = ev[~ev["component"].str.startswith(("RemotingCommand", "ReputMessageService"))]
    return ev[["t_ms", "node", "component", "step", "text"]].reset_index(drop=True)


_ROUTE = (
    "DefaultMQProducerImpl.tryToFindTopicPublishInfo",
    "MQClientInstance.updateTopicRouteInfoFromNameServer",
    "AbstractSendMessageProcessor.msgCheck",
    "DefaultMQProducerImpl.send",
)


def route_events(lab: Lab, topic: str = "TopicTest", end_ms: int | None = None) -> pd.DataFrame:
    """How the producer found (or borrowed) a route for ``topic``, and where its sends went."""
    ev = lab.events()
    if end_ms is not None:
        ev = ev[ev["t_ms"] <= end_ms]
    ev = ev[ev["component"].isin(_ROUTE) & ev["text"].str.contains(topic, regex=False)
            | (ev["component"] == "DefaultMQProducerImpl.send")]  # fmt: skip
    return ev[["t_ms", "node", "component", "step", "text"]].reset_index(drop=True)


def topic_name(seed: int) -> str:
    """The topic name exercise 01.2 asks about for this seed."""
    return TOPIC_NAMES[seed % len(TOPIC_NAMES)]


def topic_name_table(
    names: tuple[str, ...] | list[str] = TOPIC_NAMES, *, seed: int = 0
) -> pd.DataFrame:
    """Send one message to each name on a fresh lab: what msgCheck answered."""
    rows = []
    for name in names:
        with Lab(seed=seed) as lab:
            rows.append({"topic": name if len(name) <= 40 else name[:12] + f"… ({len(name)} chars)",
                         **outcome(send_raw(lab, name))})  # fmt: skip
    return pd.DataFrame(rows, columns=["topic", "code", "code_name", "remark", "queue_offset"])


def create_topic(lab: Lab, topic: str, *, read_queue_nums: int = 4, write_queue_nums: int = 4,
                 perm: int = 6, broker: str = "broker-a") -> Call:  # fmt: skip
    """UPDATE_AND_CREATE_TOPIC, as ``mqadmin updateTopic`` sends it (every header field is
    @CFNotNull, so ``defaultTopic`` and ``topicFilterType`` go along)."""
    fields = {"topic": topic, "defaultTopic": "TBW102", "readQueueNums": read_queue_nums,
              "writeQueueNums": write_queue_nums, "perm": perm,
              "topicFilterType": "SINGLE_TAG"}  # fmt: skip
    return lab.request(broker, "UPDATE_AND_CREATE_TOPIC", fields)


def messages_per_broker(lab: Lab, topic: str = "TopicTest") -> pd.DataFrame:
    """How many messages each broker holds for ``topic`` (sum of its queues' max offsets)."""
    rows = []
    for b in lab.brokers:
        name = b.broker_config.broker_name
        q = lab.queues(topic)
        q = q[q["broker"] == name]
        has = topic in b.topic_config_manager.topic_config_table
        rows.append({"broker": name, "has_topic": has, "messages": int(q["max_offset"].sum())})
    return pd.DataFrame(rows, columns=["broker", "has_topic", "messages"])


def two_broker_lab(seed: int, *, wait_ms: int = 30_000, later: int = 0) -> tuple[Lab, str]:
    """Two brokers, one first send, a wait, then ``later`` sends (why auto-creation is off in production).

    The lab's producer sends one message to the new topic TopicTest (through TBW102's
    route, which lists both brokers), advances ``wait_ms`` and sends ``later`` more.

    Returns:
        The lab and the name of the broker that took the first message.
    """
    lab = Lab(seed=seed, brokers=2)
    first = lab.send("TopicTest", b"first").result.message_queue.broker_name
    lab.advance(wait_ms)
    if later:
        lab.send_many("TopicTest", later)
    return lab, first


def send_from_new_producer(lab: Lab, topic: str = "TopicTest", count: int = 8,
                           group: str = "PG2") -> pd.DataFrame:  # fmt: skip
    """Start another producer (its own client node), send ``count`` messages, say where they went."""
    p = lab.producer(group)
    futures = [p.send(Message(topic, f"from-{group}-{i}".encode())) for i in range(count)]
    lab.run_until_idle()
    rows = []
    for i, f in enumerate(futures):
        r = f.result
        rows.append({"i": i, "broker": None if r is None else r.message_queue.broker_name,
                     "queue_id": None if r is None else r.message_queue.queue_id})  # fmt: skip
    return pd.DataFrame(rows, columns=["i", "broker", "queue_id"])


# -- exercises -------------------------------------------------------------------------------
def params_01_1(seed: int) -> int:
    """Exercise 01.1: the producer's ``defaultTopicQueueNums`` (1..12)."""
    return 1 + seed % 12


# fmt: off
_MISC_01_1 = (
    Misconception("keeping PERM_INHERIT",
                  "TBW102's perm 7 includes PERM_INHERIT (1); the new topic gets it without: "
                  "7 & ~1 = 6 (read + write)",
                  lambda answer, want, seed: answer[0] == want[0] and answer[1] == 7),
    Misconception("taking the producer's queue count as is",
                  "createTopicInSendMessageMethod caps defaultTopicQueueNums at TBW102's "
                  "writeQueueNums (8)",
                  lambda answer, want, seed: answer[0] == params_01_1(seed) > 8),
    Misconception("taking TBW102's queue count",
                  "TBW102's 8 queues are only the cap; the producer asks for its "
                  "defaultTopicQueueNums, and the smaller of the two wins",
                  lambda answer, want, seed: answer[0] == 8 != want[0]),
)
# fmt: on


@exercise("01.1", "A producer whose defaultTopicQueueNums is your k sends the first message to "
          "the new topic TopicTest (autoCreateTopicEnable on, TBW102 has 8 queues, perm 7). How "
          "many write queues does the broker create, and with what perm? Answer [queues, perm].",
          hint="createTopicInSendMessageMethod takes min(defaultTopicQueueNums, TBW102's "
               "writeQueueNums) and TBW102's perm without PERM_INHERIT (createTopicInSendMessageMethod step 4)",
          misconceptions=_MISC_01_1)  # fmt: skip
def _ex_01_1(seed: int) -> list[int]:
    with Lab(seed=seed) as lab:
        send_raw(lab, default_topic_queue_nums=params_01_1(seed))
        t = lab.topics().set_index("topic").loc["TopicTest"]
        return [int(t["write_queue_nums"]), int(t["perm"])]


@exercise("01.2", "msgCheck: you send one message to the topic named by topic_name(SEED). "
          "What response code does the broker answer?",
          hint="step 2 allows only ^[%|a-zA-Z0-9_-]+$ up to 127 characters (SYSTEM_ERROR = 1); "
               "step 3 forbids SCHEDULE_TOPIC_XXXX (NO_PERMISSION = 16); a legal new name is "
               "auto-created and stored (SUCCESS = 0)")  # fmt: skip
def _ex_01_2(seed: int) -> int:
    with Lab(seed=seed) as lab:
        return int(send_raw(lab, topic_name(seed)).code)


def params_01_3(seed: int) -> dict[str, int]:
    """Exercise 01.3: the admin-created topic's queue numbers and the queue id sent to."""
    return {"read_queue_nums": 5 + seed % 4, "write_queue_nums": 4, "queue_id": 4 + (seed // 4) % 5}


# fmt: off
_MISC_01_3 = (
    Misconception("expecting auto-creation",
                  "with autoCreateTopicEnable off the broker has no TBW102 to copy, so the first "
                  "send gets TOPIC_NOT_EXIST (17)",
                  lambda answer, want, seed: answer[0] != 17 and answer[0] in (0, 1)),
    Misconception("checking the queue id against writeQueueNums only",
                  "step 5 rejects queueId >= max(writeQueueNums, readQueueNums)",
                  lambda answer, want, seed: answer == [17, 1] and want == [17, 0]),
)
# fmt: on


@exercise("01.3", "autoCreateTopicEnable is off. (a) What code does the first send to the new "
          "topic NewTopic get? (b) An admin then creates NewTopic with your read/write queue "
          "numbers (params_01_3) and you send to your queue id: what code now? Answer [a, b].",
          hint="with auto-create off the broker never creates TBW102, so step 4's "
               "createTopicInSendMessageMethod finds 'default topic[TBW102] not exist' and answers "
               "TOPIC_NOT_EXIST (17); step 5 rejects queueId >= max(writeQueueNums, readQueueNums) with "
               "SYSTEM_ERROR (1)",
          misconceptions=_MISC_01_3)  # fmt: skip
def _ex_01_3(seed: int) -> list[int]:
    p = params_01_3(seed)
    with Lab(seed=seed, broker={"auto_create_topic_enable": False}) as lab:
        a = send_raw(lab, "NewTopic").code
        create_topic(lab, "NewTopic", read_queue_nums=p["read_queue_nums"],
                     write_queue_nums=p["write_queue_nums"])  # fmt: skip
        b = send_raw(lab, "NewTopic", queue_id=p["queue_id"]).code
        return [int(a), int(b)]


def params_01_4(seed: int) -> int:
    """Exercise 01.4: how many messages are sent 30 s after the first one (10..29)."""
    return 10 + seed % 20


# fmt: off
_MISC_01_4 = (
    Misconception("expecting the messages to spread over both brokers",
                  "after the route refresh the name server's route for TopicTest lists only the "
                  "broker that created it (the other never got the first send)",
                  lambda answer, want, seed: answer[1] > 0),
)
# fmt: on


@exercise("01.4", "Two brokers, autoCreateTopicEnable on. The lab's producer sends one message to "
          "the new topic TopicTest, 30 s pass, then it sends your N more. How many messages does "
          "the broker that took the first message hold, and how many the other? "
          "Answer [first broker, other broker].",
          hint="only the broker that got the first message created the topic and registered it; "
               "the producer's route refresh (10 ms after start, then every 30 s) replaces "
               "TBW102's route with the name server's route, which lists that broker only",
          misconceptions=_MISC_01_4)  # fmt: skip
def _ex_01_4(seed: int) -> list[int]:
    lab, first = two_broker_lab(seed, later=params_01_4(seed))
    with lab:
        counts = messages_per_broker(lab).set_index("broker")["messages"]
        other = next(b for b in counts.index if b != first)
        return [int(counts[first]), int(counts[other])]
