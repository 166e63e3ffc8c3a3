"""The broker calling its clients and waiting for their answer.

Mirrors ``Broker2Client`` (broker/client/net, RocketMQ 4.9.3): ``callClient`` (an
``invokeSync`` of 10 s on the client's channel) and ``getConsumeStatus`` (one
GET_CONSUMER_STATUS_FROM_CLIENT, 221, to each consumer of a group, one after the other, 5 s
each). The oneway requests (NOTIFY_CONSUMER_IDS_CHANGED, RESET_CONSUMER_CLIENT_OFFSET)
stay where they are sent (``BrokerController``, ``AdminBrokerProcessor#reset_offset``).

Java blocks a thread of the admin pool on each call. Here a call is
``NodeContext.invoke_channel`` with a callback, and the broker answers its own caller
from there; the steps and the answers are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mqlab.broker.admin_broker_processor import _mq_map
from mqlab.common.message import MessageQueue
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import FrozenKey, dumps, loads_json_body
from mqlab.remoting.headers import GetConsumerStatusRequestHeader
from mqlab.runtime.context import Channel

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = [
    "Broker2Client",
    "CALL_CLIENT_TIMEOUT_MILLIS",
    "GET_CONSUME_STATUS_TIMEOUT_MILLIS",
    "V3_0_7_SNAPSHOT",
    "V3_1_8_SNAPSHOT",
    "version_desc",
]

C = "Broker2Client"
#: ``Broker2Client#callClient``: ``invokeSync(channel, request, 10000)``.
CALL_CLIENT_TIMEOUT_MILLIS = 10_000
#: ``Broker2Client#getConsumeStatus``: ``invokeSync(channel, request, 5000)`` per client.
GET_CONSUME_STATUS_TIMEOUT_MILLIS = 5_000
#: ``MQVersion.Version.V3_0_7_SNAPSHOT.ordinal()``: from it a client answers 221.
V3_0_7_SNAPSHOT = 28
#: ``MQVersion.Version.V3_1_8_SNAPSHOT.ordinal()``: from it a client answers 307 and 309.
V3_1_8_SNAPSHOT = 62

_EARLY = (
    "V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1", "V3_0_0_BETA1", "V3_0_0_BETA2", "V3_0_0_BETA3",
    "V3_0_0_BETA4", "V3_0_0_BETA5", "V3_0_0_BETA6_SNAPSHOT", "V3_0_0_BETA6",
    "V3_0_0_BETA7_SNAPSHOT", "V3_0_0_BETA7", "V3_0_0_BETA8_SNAPSHOT", "V3_0_0_BETA8",
    "V3_0_0_BETA9_SNAPSHOT", "V3_0_0_BETA9", "V3_0_0_FINAL",
)  # fmt: skip


def version_desc(version: int) -> str:
    """``MQVersion#getVersionDesc`` for the versions these remarks name (below V3_1_8).

    The enum starts with 16 V3.0.0 pre-releases, then a ``_SNAPSHOT`` and a release per
    version: V3_0_1_SNAPSHOT (16) … V3_0_15 (45), V3_1_0_SNAPSHOT (46) … V3_1_9 (65).
    """
    if 0 <= version < len(_EARLY):
        return _EARLY[version]
    if 16 <= version < 66:
        n = version - 16
        minor, patch = (0, 1 + n // 2) if n < 30 else (1, (n - 30) // 2)
        return f"V3_{minor}_{patch}" + ("_SNAPSHOT" if n % 2 == 0 else "")
    return f"version {version}"  # not reached by the remarks mqlab writes


def exception_simple_desc(e: Exception) -> str:
    """``RemotingHelper#exceptionSimpleDesc`` of a remoting exception: its class and text
    (Java adds the first stack frame, a NettyRemotingAbstract line mqlab has no match for)."""
    name = {
        "RemotingTimeoutException": "org.apache.rocketmq.remoting.exception.RemotingTimeoutException",
        "RemotingSendRequestException": "org.apache.rocketmq.remoting.exception."
        "RemotingSendRequestException",
    }.get(type(e).__name__, type(e).__name__)
    return f"{name}: {e}"


Answer = Callable[[RemotingCommand], None]


class Broker2Client:
    """The broker's calls to its clients that wait for an answer."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def call_client(
        self,
        channel: Channel,
        request: RemotingCommand,
        callback: Callable[[RemotingCommand | None, Exception | None], None],
    ) -> None:
        """Mirrors ``Broker2Client#callClient``: ``invokeSync(channel, request, 10000)``."""
        self.broker.ctx.invoke_channel(channel, request, CALL_CLIENT_TIMEOUT_MILLIS, callback)

    def get_consume_status(
        self, topic: str, group: str, origin_client_id: str | None, answer: Answer
    ) -> RemotingCommand | None:
        """INVOKE_BROKER_TO_GET_CONSUMER_STATUS's work: ask each consumer of ``group``
        (or only ``origin_client_id``) for its offsets of ``topic``.

        Mirrors ``Broker2Client#getConsumeStatus`` (broker/client/net, RocketMQ 4.9.3):

        1. An unknown group: Java dereferences ``getConsumerGroupInfo(group)`` (null) and
           the remoting layer answers the NullPointerException (SYSTEM_ERROR).
        2. No channel: SYSTEM_ERROR "No Any Consumer online in the consumer group: [g]".
        3. Per channel in table order: a client older than V3_0_7_SNAPSHOT ends it all
           with SYSTEM_ERROR "the client does not support this feature. version=V…";
           else (every client, or just the named one) GET_CONSUMER_STATUS_FROM_CLIENT
           (221), 5 s; a SUCCESS with a body adds its ``messageQueueTable`` under the
           client id; anything else is only logged. The named client ends the loop.
        4. SUCCESS with ``GetConsumerStatusBody`` (``consumerTable``: client id → table),
           and createResponseCommand's remark "not set any response code" kept.

        Returns the answer when it is known at once, else None (``answer`` gets it).
        """
        broker = self.broker
        info = broker.consumer_manager.get_consumer_group_info(group)
        if info is None:  # step 1
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR,
                "java.lang.NullPointerException, org.apache.rocketmq.broker.client.net."
                "Broker2Client.getConsumeStatus(Broker2Client.java:243)",
                ext_fields={},
            )
        entries = list(info.channel_info_table.items())
        if not entries:  # step 2
            return _err(f"No Any Consumer online in the consumer group: [{group}]")
        ext = GetConsumerStatusRequestHeader(topic=topic, group=group).to_ext_fields()
        status_table: dict[str, Any] = {}
        tracer = broker.tracer
        # Until the first call goes out, an outcome is the return value (Java's answer
        # on the same thread); after it, ``answer`` gets it.
        state = {"sync": True, "result": None}

        def reply(resp: RemotingCommand) -> None:
            if state["sync"]:
                state["result"] = resp
            else:
                answer(resp)

        def done() -> None:  # step 4
            if tracer.enabled:
                tracer.emit(C + ".getConsumeStatus", "4", group=group, topic=topic,
                            clients=sorted(status_table),
                            text=f"consumer status of {group} from {len(status_table)} client(s)")  # fmt: skip
            body = {"consumerTable": status_table, "messageQueueTable": {}}
            # result.setCode(SUCCESS) keeps createResponseCommand's remark
            reply(RemotingCommand.create_response(
                ResponseCode.SUCCESS, "not set any response code", ext_fields={},
                body=dumps(body).encode(),
            ))  # fmt: skip

        def next_client(i: int) -> None:  # step 3
            while i < len(entries):
                channel, cinfo = entries[i]
                if cinfo.version < V3_0_7_SNAPSHOT:
                    reply(_err("the client does not support this feature. version="
                               + version_desc(cinfo.version)))  # fmt: skip
                    return
                client_id = cinfo.client_id
                if not origin_client_id or origin_client_id == client_id:
                    last = bool(origin_client_id)
                    req = RemotingCommand.create_request(
                        RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, dict(ext)
                    )
                    if tracer.enabled:
                        tracer.emit(C + ".getConsumeStatus", "3", client_id=client_id,
                                    text=f"GET_CONSUMER_STATUS_FROM_CLIENT to {client_id}")  # fmt: skip

                    def got(resp, error, client_id=client_id, i=i, last=last) -> None:
                        if error is None and resp is not None and resp.code == 0 and resp.body:
                            try:
                                table = _mq_table(
                                    loads_json_body(resp.body).get("messageQueueTable") or {}
                                )
                            except (ValueError, KeyError, TypeError, AttributeError):
                                table = None  # Java: the decode throws, caught and logged
                            if table is not None:
                                status_table[client_id] = table
                        if last:
                            done()
                        else:
                            next_client(i + 1)

                    broker.ctx.invoke_channel(channel, req, GET_CONSUME_STATUS_TIMEOUT_MILLIS, got)
                    return
                i += 1
            done()

        next_client(0)
        state["sync"] = False
        return state["result"]


def _err(remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, remark, ext_fields={})


def _mq_table(table: Any) -> dict:
    """A client's ``messageQueueTable`` as a ``HashMap<MessageQueue, Long>`` (Java order)."""
    out: dict[MessageQueue, int] = {}
    for k, v in table.items():
        d = k.to_dict() if isinstance(k, FrozenKey) else k
        out[MessageQueue(d["topic"], d["brokerName"], int(d["queueId"]))] = int(v)
    return _mq_map(out)
