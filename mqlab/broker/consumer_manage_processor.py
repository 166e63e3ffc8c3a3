"""Consumer offsets and consumer lists: QUERY/UPDATE_CONSUMER_OFFSET, GET_CONSUMER_LIST_BY_GROUP.

Mirrors ``ConsumerManageProcessor`` (broker/processor, RocketMQ 4.9.3); mechanisms.md "Where a new queue starts" (the
broker's ``queryConsumerOffset``); docs/reference.md §10.4.

The QUERY_NOT_FOUND rule is the one that surprises people: a group the broker has never
seen gets offset 0 (not "not found") while the queue's min offset is still 0 and its
first message is not "in disk" — so a brand-new group on a young topic reads from the
start even with CONSUME_FROM_LAST_OFFSET. mqlab treats every message as in memory
(``check_in_disk_by_consume_offset`` is always False), so: min ≤ 0 → 0, else
QUERY_NOT_FOUND and the client falls back to GET_MAX_OFFSET.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.remoting.bodies import GetConsumerListByGroupResponseBody
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import (
    GetConsumerListByGroupRequestHeader,
    QueryConsumerOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from mqlab.runtime.context import Channel

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["ConsumerManageProcessor"]

C = "ConsumerManageProcessor"


class ConsumerManageProcessor:
    """GET_CONSUMER_LIST_BY_GROUP (38), UPDATE_CONSUMER_OFFSET (15), QUERY_CONSUMER_OFFSET (14)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        if request.code == RequestCode.GET_CONSUMER_LIST_BY_GROUP:
            return self.get_consumer_list_by_group(channel, request)
        if request.code == RequestCode.UPDATE_CONSUMER_OFFSET:
            return self.update_consumer_offset(channel, request)
        return self.query_consumer_offset(channel, request)

    def get_consumer_list_by_group(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """``getConsumerListByGroup``: the client ids of the group's live channels."""
        h = GetConsumerListByGroupRequestHeader.from_ext_fields(request.ext_fields)
        info = self.broker.consumer_manager.get_consumer_group_info(h.consumer_group)
        ids = info.get_all_client_id() if info is not None else []
        tracer = self.broker.tracer
        if ids:
            if tracer.enabled:
                tracer.emit(C + ".getConsumerListByGroup", "ok", group=h.consumer_group,
                            consumer_ids=list(ids), text=f"{h.consumer_group}: {list(ids)}")  # fmt: skip
            body = GetConsumerListByGroupResponseBody(consumer_id_list=tuple(ids)).encode()
            return RemotingCommand.create_response(
                ResponseCode.SUCCESS, None, ext_fields={}, body=body
            )
        if tracer.enabled:
            tracer.emit(C + ".getConsumerListByGroup", "none", group=h.consumer_group,
                        text=f"no consumer for this group, {h.consumer_group}")  # fmt: skip
        return RemotingCommand.create_response(
            ResponseCode.SYSTEM_ERROR,
            f"no consumer for this group, {h.consumer_group}",
            ext_fields={},
        )

    def update_consumer_offset(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """``updateConsumerOffset``: a plain overwrite of ``offsetTable[topic@group][queueId]``."""
        h = UpdateConsumerOffsetRequestHeader.from_ext_fields(request.ext_fields)
        self.broker.consumer_offset_manager.commit_offset(
            channel.remote_address, h.consumer_group, h.topic, h.queue_id, h.commit_offset
        )
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(
                C + ".updateConsumerOffset", "commit", group=h.consumer_group, topic=h.topic,
                queue_id=h.queue_id, offset=h.commit_offset,
                text=f"offset of {h.topic}@{h.consumer_group} queue {h.queue_id} := {h.commit_offset}",
            )  # fmt: skip
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})

    def query_consumer_offset(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """``queryConsumerOffset`` with the QUERY_NOT_FOUND rule (docs/reference.md §10.4)."""
        broker = self.broker
        h = QueryConsumerOffsetRequestHeader.from_ext_fields(request.ext_fields)
        offset = broker.consumer_offset_manager.query_offset(h.consumer_group, h.topic, h.queue_id)
        tracer = broker.tracer
        if offset >= 0:
            rule = "stored"
        else:
            min_offset = broker.message_store.get_min_offset_in_queue(h.topic, h.queue_id)
            if min_offset <= 0 and not broker.message_store.check_in_disk_by_consume_offset(
                h.topic, h.queue_id, 0
            ):
                offset, rule = 0, "new group, min offset 0 → 0"
            else:
                if tracer.enabled:
                    tracer.emit(
                        C + ".queryConsumerOffset", "not found", group=h.consumer_group,
                        topic=h.topic, queue_id=h.queue_id, min_offset=min_offset,
                        text=f"no offset for {h.topic}@{h.consumer_group} queue {h.queue_id} and "
                        f"min offset {min_offset} > 0 → QUERY_NOT_FOUND",
                    )  # fmt: skip
                return RemotingCommand.create_response(
                    ResponseCode.QUERY_NOT_FOUND,
                    "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first",
                    ext_fields={},
                )
        if tracer.enabled:
            tracer.emit(
                C + ".queryConsumerOffset", "found", group=h.consumer_group, topic=h.topic,
                queue_id=h.queue_id, offset=offset, rule=rule,
                text=f"offset of {h.topic}@{h.consumer_group} queue {h.queue_id} = {offset} ({rule})",
            )  # fmt: skip
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, None, ext_fields={"offset": str(offset)}
        )
