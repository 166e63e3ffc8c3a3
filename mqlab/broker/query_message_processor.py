"""QUERY_MESSAGE (12) by key and VIEW_MESSAGE_BY_ID (33): the message lookups of mqadmin.

Mirrors ``QueryMessageProcessor`` (broker/processor, RocketMQ 4.9.3).

QUERY_MESSAGE looks ``topic#key`` up in the message index (``IndexService``) and answers
with the stored entries themselves, concatenated in commit-log order, as the body (Java
streams them with a ``QueryMessageTransfer`` file region), plus the header fields
``indexLastUpdateTimestamp`` / ``indexLastUpdatePhyoffset`` (the newest index file's end);
nothing found is QUERY_NOT_FOUND (22) "can not find message, maybe time range not correct".
With the ext field ``_UNIQUE_KEY_QUERY=true`` (the client's ``queryMsgByUniqueKey``, which
``queryMsgById`` uses for an id that is not an offset id) ``maxNum`` becomes
``defaultQueryMaxNum`` (32). The store caps ``maxNum`` at ``maxMsgsNumBatch`` (64).

VIEW_MESSAGE_BY_ID answers the raw stored entry at a commit-log offset (the offset a
broker-made message id carries), or SYSTEM_ERROR "can not find message by the offset, N".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import QueryMessageRequestHeader, ViewMessageRequestHeader
from mqlab.runtime.context import Channel

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["QueryMessageProcessor", "UNIQUE_MSG_QUERY_FLAG"]

#: MixAll.UNIQUE_MSG_QUERY_FLAG
UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"
C = "QueryMessageProcessor"


class QueryMessageProcessor:
    """Mirrors ``QueryMessageProcessor`` (broker/processor, RocketMQ 4.9.3)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        if request.code == 12:
            return self.query_message(channel, request)
        return self.view_message_by_id(channel, request)

    def query_message(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """``queryMessage``: the stored entries of ``topic#key`` in [begin, end]."""
        h = QueryMessageRequestHeader.from_ext_fields(request.ext_fields)
        max_num = h.max_num
        if request.ext(UNIQUE_MSG_QUERY_FLAG) == "true":
            max_num = self.broker.message_store_config.default_query_max_num
        result = self.broker.message_store.query_message(
            h.topic, h.key, max_num, h.begin_timestamp, h.end_timestamp
        )
        ext = {  # in Java's HashMap order, as a 4.9.3 broker writes them
            "indexLastUpdatePhyoffset": str(result.index_last_update_phyoffset),
            "indexLastUpdateTimestamp": str(result.index_last_update_timestamp),
        }
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(C, "queryMessage", topic=h.topic, key=h.key, max_num=max_num,
                        found=len(result.message_buffers),
                        text=f"{len(result.message_buffers)} message(s) under {h.topic}#{h.key}")  # fmt: skip
        if result.buffer_total_size > 0:
            return RemotingCommand.create_response(
                ResponseCode.SUCCESS, None, ext_fields=ext, body=b"".join(result.message_buffers)
            )
        return RemotingCommand.create_response(
            ResponseCode.QUERY_NOT_FOUND,
            "can not find message, maybe time range not correct",
            ext_fields=ext,
        )

    def view_message_by_id(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """``viewMessageById``: the raw stored entry at a commit-log offset."""
        h = ViewMessageRequestHeader.from_ext_fields(request.ext_fields)
        raw = self.broker.message_store.select_one_message_by_offset(h.offset)
        if raw is None:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR,
                f"can not find message by the offset, {h.offset}",
                ext_fields={},
            )
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={}, body=raw)
