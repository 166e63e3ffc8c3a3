"""Request-reply and the requests a broker forwards to a client.

The harness's connection first sends a HEART_BEAT as client ``cf_reply@1`` (producer group
``cf_rp_pg``, consumer group ``cf_rp_cg``); from then on each broker may call it, and it
answers as ``raw_tcp.answer_server_request`` says (it echoes what it was sent, so the two
brokers' forwarding compares field by field). Replies (324/325) are pushed to it with
PUSH_REPLY_MESSAGE_TO_CLIENT (326) and stored in ``DefaultCluster_REPLY_TOPIC``;
GET_CONSUMER_RUNNING_INFO (307), CONSUME_MESSAGE_DIRECTLY (309) and
INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223 → 221) reach it through the broker. Error
paths: no such client, no REPLY_TO_CLIENT, a refused push, a client too old, a group the
broker does not know, a message id with no message.
"""

from __future__ import annotations

import json
import zlib

from mqlab.conformance.raw_tcp import REFUSE_REPLY
from mqlab.conformance.scenario import Scenario, Step, StoredCheck, props
from mqlab.conformance.scenarios.common import BORN, SETTLE_MS, send_v2, uniq

__all__ = ["SCENARIOS"]

CLIENT = "cf_reply@1"
PG, CG, T = "cf_rp_pg", "cf_rp_cg", "cf_rp"
REPLY_TOPIC = "DefaultCluster_REPLY_TOPIC"


def _heartbeat(name: str, client_id: str, group: str, *, producer: str | None = None,
               version: int | None = None, note: str = "") -> Step:  # fmt: skip
    body = {
        "clientID": client_id,
        "consumerDataSet": [{
            "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "consumeType": "CONSUME_PASSIVELY",
            "groupName": group, "messageModel": "CLUSTERING",
            "subscriptionDataSet": [{
                "classFilterMode": False, "codeSet": [], "expressionType": "TAG",
                "subString": "*", "subVersion": 100, "tagsSet": [], "topic": T,
            }],
            "unitMode": False,
        }],
        "producerDataSet": [{"groupName": producer}] if producer else [],
    }  # fmt: skip
    return Step(name, "HEART_BEAT", {}, json.dumps(body, separators=(",", ":")),
                version=version, note=note)  # fmt: skip


def _reply_props(n: int, correlation_id: str, reply_to: str | None) -> str:
    kv = {"UNIQ_KEY": uniq(n), "MSG_TYPE": "reply", "CORRELATION_ID": correlation_id}
    if reply_to is not None:
        kv["REPLY_TO_CLIENT"] = reply_to
    kv["TTL"] = "3000"
    return props(**kv)


def _reply_v2(name: str, n: int, correlation_id: str, reply_to: str | None = CLIENT, *,
              topic: str = REPLY_TOPIC, note: str = "", expect: int | None = None,
              compressed: bool = False) -> Step:  # fmt: skip
    """SEND_REPLY_MESSAGE_V2 (325): the V2 header a replier's producer sends; ``compressed``:
    a zlib body with sysFlag 1, as a producer sends a body over 4 KiB."""
    body = f"reply {n}".encode()
    if compressed:
        body = zlib.compress(body * 600, 5)
    h = {
        "a": PG, "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "1" if compressed else "0",
        "g": BORN, "h": "0", "i": _reply_props(n, correlation_id, reply_to), "j": "0",
        "k": "false", "m": "false",
    }  # fmt: skip
    return Step(name, "SEND_REPLY_MESSAGE_V2", h, body, note=note, expect=expect)


def _reply_v1(name: str, n: int, correlation_id: str, reply_to: str | None = CLIENT, *,
              note: str = "", **extra: str | None) -> Step:  # fmt: skip
    """SEND_REPLY_MESSAGE (324): the long-named SendMessageRequestHeader."""
    h: dict[str, str | None] = {
        "producerGroup": PG, "topic": REPLY_TOPIC, "defaultTopic": "TBW102",
        "defaultTopicQueueNums": "4", "queueId": "-1", "sysFlag": "0", "bornTimestamp": BORN,
        "flag": "0", "properties": _reply_props(n, correlation_id, reply_to),
        "reconsumeTimes": "0", "unitMode": "false",
    }  # fmt: skip
    h.update(extra)
    return Step(name, "SEND_REPLY_MESSAGE", h, f"reply {n}", note=note)


def _running_info(name: str, client_id: str, group: str = CG, note: str = "") -> Step:
    return Step(name, "GET_CONSUMER_RUNNING_INFO",
                {"consumerGroup": group, "clientId": client_id, "jstackEnable": "false"},
                note=note)  # fmt: skip


SCENARIOS = [
    Scenario(
        "reply-forwarding",
        "reply",
        [
            _heartbeat(
                "heartbeat",
                CLIENT,
                CG,
                producer=PG,
                note="registers the harness's connection as client cf_reply@1",
            ),  # fmt: skip
            _reply_v2(
                "reply_v2", 1, "cf-c1", note="pushed to cf_reply@1 (326), then stored", expect=0
            ),  # fmt: skip
            _reply_v1(
                "reply_v1",
                2,
                "cf-c2",
                note="SEND_REPLY_MESSAGE; queueId -1: a random "
                "write queue (the reply topic has one)",
            ),  # fmt: skip
            _reply_v2(
                "reply_refused",
                3,
                REFUSE_REPLY,
                note="the client answers the push SYSTEM_ERROR: stored, SYSTEM_ERROR",
            ),  # fmt: skip
            _reply_v2(
                "reply_no_client",
                4,
                "cf-c4",
                "cf_nobody@1",
                note="no channel for that client id: stored, SYSTEM_ERROR",
            ),  # fmt: skip
            _reply_v2(
                "reply_no_reply_to",
                5,
                "cf-c5",
                None,
                note="no REPLY_TO_CLIENT property: stored, SYSTEM_ERROR",
            ),  # fmt: skip
            _reply_v2(
                "reply_other_topic",
                6,
                "cf-c6",
                topic=T,
                note="a reply may go to any topic: auto-created from TBW102",
            ),  # fmt: skip
            _reply_v2(
                "reply_schedule_topic",
                7,
                "cf-c7",
                topic="SCHEDULE_TOPIC_XXXX",
                note="msgCheck, shared with SendMessageProcessor: NO_PERMISSION",
            ),  # fmt: skip
            _reply_v1(
                "reply_v1_no_flag",
                8,
                "cf-c8",
                flag=None,
                note="a @CFNotNull field missing (Java: NullPointerException on setFlag, nothing stored)",
            ),  # fmt: skip
            _reply_v2(
                "reply_compressed",
                9,
                "cf-c9",
                compressed=True,
                note="sysFlag 1 goes with the push; the stored entry keeps sysFlag 0",
            ),  # fmt: skip
            StoredCheck(
                "stored",
                (REPLY_TOPIC, T),
                wait_ms=SETTLE_MS,
                note="the replies as stored, without PUSH_REPLY_TIME",
            ),  # fmt: skip
        ],
        doc="SEND_REPLY_MESSAGE (324) and _V2 (325): pushed to the requester named in "
        "REPLY_TO_CLIENT (PUSH_REPLY_MESSAGE_TO_CLIENT, 326) through its producer channel, "
        "then stored in DefaultCluster_REPLY_TOPIC (storeReplyMessageEnable).",
    ),
    Scenario(
        "reply-forwarding",
        "forwarding",
        [
            _heartbeat("heartbeat", CLIENT, CG, producer=PG),
            send_v2("send", T, 0, b"direct", n=20, expect=0),
            _running_info("running_info", CLIENT, note="forwarded as it is; the harness echoes it"),
            _running_info("running_info_offline", "cf_nobody@1", note="not online"),
            _running_info(
                "running_info_other_group",
                CLIENT,
                "cf_rp_nogroup",
                note="the client is not in that group: not online",
            ),  # fmt: skip
            _heartbeat(
                "heartbeat_old",
                "cf_old@1",
                "cf_rp_old",
                version=50,
                note="a V3_1_2_SNAPSHOT client (version 50)",
            ),  # fmt: skip
            _running_info(
                "running_info_old",
                "cf_old@1",
                "cf_rp_old",
                note="older than V3_1_8_SNAPSHOT: too low",
            ),  # fmt: skip
            Step(
                "consume_directly",
                "CONSUME_MESSAGE_DIRECTLY",
                {"consumerGroup": CG, "clientId": CLIENT, "msgId": "${send.msgId}"},
                wait_ms=SETTLE_MS,
                note="the stored message as body, brokerName added",
            ),  # fmt: skip
            Step(
                "consume_directly_offline",
                "CONSUME_MESSAGE_DIRECTLY",
                {"consumerGroup": CG, "clientId": "cf_nobody@1", "msgId": "${send.msgId}"},
            ),
            Step(
                "consume_directly_no_message",
                "CONSUME_MESSAGE_DIRECTLY",
                {
                    "consumerGroup": CG,
                    "clientId": CLIENT,
                    "msgId": "7F00000100002A9F00000000FFFFFF00",
                },
                note="no message at that offset: NullPointerException",
            ),  # fmt: skip
            Step(
                "consumer_status",
                "INVOKE_BROKER_TO_GET_CONSUMER_STATUS",
                {"topic": T, "group": CG},
                note="221 to every client of the group",
            ),  # fmt: skip
            Step(
                "consumer_status_one",
                "INVOKE_BROKER_TO_GET_CONSUMER_STATUS",
                {"topic": T, "group": CG, "clientAddr": CLIENT},
            ),
            Step(
                "consumer_status_other",
                "INVOKE_BROKER_TO_GET_CONSUMER_STATUS",
                {"topic": T, "group": CG, "clientAddr": "cf_nobody@1"},
                note="no client of that id: an empty table",
            ),  # fmt: skip
            Step(
                "consumer_status_no_group",
                "INVOKE_BROKER_TO_GET_CONSUMER_STATUS",
                {"topic": T, "group": "cf_rp_nogroup"},
                note="unknown group: NullPointerException",
            ),  # fmt: skip
        ],
        doc="GET_CONSUMER_RUNNING_INFO (307), CONSUME_MESSAGE_DIRECTLY (309) and "
        "INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223 → GET_CONSUMER_STATUS_FROM_CLIENT 221), "
        "forwarded to a client registered by heartbeat; not online, too old, unknown group.",
    ),
]
