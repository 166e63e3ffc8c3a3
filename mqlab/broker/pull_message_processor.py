"""The broker's pull path: PULL_MESSAGE in eleven steps.

Mirrors ``PullMessageProcessor`` (broker/processor, RocketMQ 4.9.3); mechanisms.md "Pull processing" (steps
1–11), mechanisms.md "Long polling" (``PULL_NOT_FOUND`` → suspend; ``executeRequestWhenWakeup``), mechanisms.md "The consumer's pull loop"
(status → response code); docs/reference.md §10.2.

Every check is a guard clause that sets a ``ResponseCode`` and RocketMQ's remark and
returns early (docs/design.md §6.10). Each numbered step of mechanisms.md "Pull processing" emits one trace event with
``step`` = that number, so code, mechanisms.md and trace use the same numbers:

1 broker readable · 2 subscription group lookup · 3 consume enabled · 4 topic config
(and topic readable) · 5 queue id range · 6 subscription / consumer filter data ·
7 property-filter switch · 8 message filter choice · 9 ``getMessage`` · 10 null result ·
11 commit offset. Between 10 and 11 the store status becomes a response code (table
below) and ``PULL_NOT_FOUND`` may park the request (mechanisms.md "Long polling").

This module never sees a socket: it returns the response (or None when the request was
parked) and the driver writes it. A replay after wake-up (``brokerAllowSuspend`` false)
never parks again and never commits an offset.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mqlab.broker.filter import (
    ConsumerFilterManager,
    ExpressionForRetryMessageFilter,
    ExpressionMessageFilter,
)
from mqlab.broker.pull_request_hold_service import PullRequest
from mqlab.common import faq_url
from mqlab.common import message_const as mc
from mqlab.common.filter_api import ExpressionType, FilterAPI, java_string_hash
from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import message_properties_to_string
from mqlab.common.mix_all import MASTER_ID
from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import PullSysFlag
from mqlab.common.topic_validator import TopicValidator
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import PullMessageRequestHeader
from mqlab.runtime.context import Channel
from mqlab.store.status import GetMessageStatus

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["PullMessageProcessor", "GET_MESSAGE_STATUS_TO_RESPONSE_CODE"]

COMPONENT = "PullMessageProcessor.processRequest"

#: mechanisms.md "From GetMessageStatus to response code"'s table. NO_MESSAGE_IN_QUEUE / NO_MATCHED_LOGIC_QUEUE are not here: their code
#: depends on the requested offset (PULL_OFFSET_MOVED unless it is 0), so that is code.
GET_MESSAGE_STATUS_TO_RESPONSE_CODE: dict[GetMessageStatus, int] = {
    GetMessageStatus.FOUND: ResponseCode.SUCCESS,
    GetMessageStatus.MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
}


_FOUND = GetMessageStatus.FOUND


def _java_remote(channel: Channel) -> str:
    """``channel.remoteAddress()`` as Java prints an ``InetSocketAddress``."""
    return "/" + channel.remote_address


class PullMessageProcessor:
    """PULL_MESSAGE (11)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        return self._process(channel, request, True)

    def _fail(self, step: str, code: int, remark: str) -> RemotingCommand:
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(
                COMPONENT, step, code=ResponseCode(code).name, remark=remark,
                text=f"step {step} fails: {ResponseCode(code).name} ({remark.splitlines()[0]})",
            )  # fmt: skip
        # Java builds the response from PullMessageResponseHeader, so extFields exist
        # (empty) even on errors; the C++ client needs them (docs/cpp-client.md §1).
        return RemotingCommand.create_response(code, remark, ext_fields={})

    def _process(
        self, channel: Channel, request: RemotingCommand, broker_allow_suspend: bool
    ) -> RemotingCommand | None:
        """Answer one pull, or park it.

        Mirrors PullMessageProcessor#processRequest(Channel, RemotingCommand, boolean)
        (broker/processor, RocketMQ 4.9.3); mechanisms.md "Pull processing", steps 1–11; mechanisms.md "Long polling".

        Returns:
            The response, or None when the request was parked in the hold service.
        """
        broker = self.broker
        cfg = broker.broker_config
        tracer = broker.tracer
        traced = tracer.enabled
        h = PullMessageRequestHeader.from_ext_fields(request.ext_fields)
        group, topic, queue_id = h.consumer_group, h.topic, h.queue_id or 0
        sys_flag = h.sys_flag or 0

        # step 1 (mechanisms.md "Pull processing"): the broker must be readable.
        if not PermName.is_readable(cfg.broker_permission):
            return self._fail(
                "1", ResponseCode.NO_PERMISSION,
                f"the broker[{cfg.broker_ip1}] pulling message is forbidden",
            )  # fmt: skip
        if traced:
            tracer.emit(COMPONENT, "1", text="broker readable", group=group, topic=topic,
                        queue_id=queue_id, offset=h.queue_offset, replay=not broker_allow_suspend)  # fmt: skip

        # step 2: the consumer group's subscription config (auto-created when allowed).
        sgc = broker.subscription_group_manager.find_subscription_group_config(
            group, broker.ctx.now_ms
        )
        if sgc is None:
            return self._fail(
                "2", ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group [{group}] does not exist, "
                f"{faq_url.suggest_todo(faq_url.SUBSCRIPTION_GROUP_NOT_EXIST)}",
            )  # fmt: skip
        # step 3: the group may consume.
        if not sgc.consume_enable:
            return self._fail(
                "3", ResponseCode.NO_PERMISSION, f"subscription group no permission, {group}"
            )
        if traced:
            tracer.emit(COMPONENT, "2", text=f"subscription group {group} found")
            tracer.emit(COMPONENT, "3", text="consume enabled")

        has_suspend = PullSysFlag.has_suspend_flag(sys_flag)
        has_commit_offset = PullSysFlag.has_commit_offset_flag(sys_flag)
        has_subscription = PullSysFlag.has_subscription_flag(sys_flag)
        suspend_timeout_millis = (h.suspend_timeout_millis or 0) if has_suspend else 0

        # step 4: the topic's config, and the topic must be readable.
        topic_config = broker.topic_config_manager.select_topic_config(topic)
        if topic_config is None:
            return self._fail(
                "4", ResponseCode.TOPIC_NOT_EXIST,
                f"topic[{topic}] not exist, apply first please! "
                f"{faq_url.suggest_todo(faq_url.APPLY_TOPIC_URL)}",
            )  # fmt: skip
        if not PermName.is_readable(topic_config.perm):
            return self._fail(
                "4", ResponseCode.NO_PERMISSION, f"the topic[{topic}] pulling message is forbidden"
            )
        # step 5: the queue id is within readQueueNums.
        if queue_id < 0 or queue_id >= topic_config.read_queue_nums:
            return self._fail(
                "5", ResponseCode.SYSTEM_ERROR,
                f"queueId[{queue_id}] is illegal, topic:[{topic}] topicConfig.readQueueNums:"
                f"[{topic_config.read_queue_nums}] consumer:[{_java_remote(channel)}]",
            )  # fmt: skip
        if traced:
            tracer.emit(COMPONENT, "4", text=f"topic {topic} found, perm {topic_config.perm}")
            tracer.emit(
                COMPONENT,
                "5",
                text=f"queue id {queue_id} < readQueueNums {topic_config.read_queue_nums}",
            )

        # step 6: the subscription — from the request (SUBSCRIPTION flag) or from the
        # group's heartbeat — and, for SQL92, the consumer filter data.
        consumer_filter_data = None
        if has_subscription:
            try:
                subscription_data = FilterAPI.build_subscription_data(
                    topic, h.subscription, h.expression_type
                )
                if not ExpressionType.is_tag_type(subscription_data.expression_type):
                    # Java only asserts it is not null (asserts are off): a broker goes on
                    # without filter data, and then every message passes the SQL92 check.
                    consumer_filter_data = ConsumerFilterManager.build(
                        topic,
                        group,
                        h.subscription,
                        h.expression_type,
                        h.sub_version or 0,
                        now_ms=broker.ctx.now_ms,
                    )
            except Exception:
                return self._fail(
                    "6", ResponseCode.SUBSCRIPTION_PARSE_FAILED,
                    "parse the consumer's subscription failed",
                )  # fmt: skip
            source = "request"
        else:
            group_info = broker.consumer_manager.get_consumer_group_info(group)
            if group_info is None:
                return self._fail(
                    "6", ResponseCode.SUBSCRIPTION_NOT_EXIST,
                    "the consumer's group info not exist"
                    + faq_url.suggest_todo(faq_url.SAME_GROUP_DIFFERENT_TOPIC),
                )  # fmt: skip
            if not sgc.consume_broadcast_enable and group_info.message_model == "BROADCASTING":
                return self._fail(
                    "6", ResponseCode.NO_PERMISSION,
                    f"the consumer group[{group}] can not consume by broadcast way",
                )  # fmt: skip
            subscription_data = group_info.find_subscription_data(topic)
            if subscription_data is None:
                return self._fail(
                    "6", ResponseCode.SUBSCRIPTION_NOT_EXIST,
                    "the consumer's subscription not exist"
                    + faq_url.suggest_todo(faq_url.SAME_GROUP_DIFFERENT_TOPIC),
                )  # fmt: skip
            if subscription_data.sub_version < (h.sub_version or 0):
                return self._fail(
                    "6", ResponseCode.SUBSCRIPTION_NOT_LATEST,
                    "the consumer's subscription not latest",
                )  # fmt: skip
            if not ExpressionType.is_tag_type(subscription_data.expression_type):
                consumer_filter_data = broker.consumer_filter_manager.get(topic, group)
                if consumer_filter_data is None:
                    return self._fail(
                        "6", ResponseCode.FILTER_DATA_NOT_EXIST,
                        "The broker's consumer filter data is not exist!Your expression may be wrong!",
                    )  # fmt: skip
                if consumer_filter_data.client_version < (h.sub_version or 0):
                    return self._fail(
                        "6", ResponseCode.FILTER_DATA_NOT_LATEST,
                        "the consumer's consumer filter data not latest",
                    )  # fmt: skip
            source = "heartbeat"
        if traced:
            tracer.emit(
                COMPONENT, "6", source=source, expression_type=subscription_data.expression_type,
                sub_string=subscription_data.sub_string,
                text=f"subscription from {source}: {subscription_data.expression_type} "
                f"{subscription_data.sub_string!r}",
            )  # fmt: skip

        # step 7: a non-TAG expression needs enablePropertyFilter.
        if (
            not ExpressionType.is_tag_type(subscription_data.expression_type)
            and not cfg.enable_property_filter
        ):
            return self._fail(
                "7", ResponseCode.SYSTEM_ERROR,
                "The broker does not support consumer to filter message by "
                f"{subscription_data.expression_type}",
            )  # fmt: skip
        # step 8: the message filter (filterSupportRetry picks the retry-aware one).
        filter_cls = (
            ExpressionForRetryMessageFilter if cfg.filter_support_retry else ExpressionMessageFilter
        )
        message_filter = filter_cls(
            subscription_data, consumer_filter_data, broker.consumer_filter_manager
        )
        if traced:
            tracer.emit(COMPONENT, "7", text="expression type allowed")
            tracer.emit(COMPONENT, "8", text=f"filter: {filter_cls.__name__}")

        # step 9: read from the store.
        result = broker.message_store.get_message(
            group, topic, queue_id, h.queue_offset or 0, h.max_msg_nums or 0, message_filter
        )
        if result is None:
            # step 10: the store returned nothing at all (shut down or not readable).
            response = self._fail("10", ResponseCode.SYSTEM_ERROR, "store getMessage return null")
        else:
            response = self._respond_to_result(
                channel, request, h, sgc, result, subscription_data, message_filter,
                broker_allow_suspend, has_suspend, suspend_timeout_millis,
            )  # fmt: skip

        # step 11: commit the consumer's offset (never on a wake-up replay, never on a slave).
        store_offset_enable = (
            broker_allow_suspend
            and has_commit_offset
            and broker.message_store_config.broker_role != "SLAVE"
        )
        if store_offset_enable:
            broker.consumer_offset_manager.commit_offset(
                channel.remote_address, group, topic, queue_id, h.commit_offset
            )
        if traced:
            tracer.emit(
                COMPONENT, "11", committed=store_offset_enable,
                commit_offset=h.commit_offset if store_offset_enable else None,
                text=(
                    f"commit offset {h.commit_offset} for {topic}@{group} queue {queue_id}"
                    if store_offset_enable
                    else "no offset commit"
                ),
            )  # fmt: skip
        return response

    def _respond_to_result(
        self, channel, request, h, sgc, result, subscription_data, message_filter,
        broker_allow_suspend, has_suspend, suspend_timeout_millis,
    ) -> RemotingCommand | None:  # fmt: skip
        """Status → response code (mechanisms.md "From GetMessageStatus to response code" table), then FOUND body / suspend / offset moved."""
        broker = self.broker
        cfg = broker.broker_config
        tracer = broker.tracer
        status = result.status
        # suggestWhichBrokerId: only matters with slaveReadEnable (docs/reference.md §10.2 step 10).
        if cfg.slave_read_enable:
            suggest = (
                sgc.which_broker_when_consume_slowly
                if result.suggest_pulling_from_slave
                else sgc.broker_id
            )
        else:
            suggest = MASTER_ID
        if status is _FOUND:  # NOTE: performance: the usual case without Enum.__hash__
            code = ResponseCode.SUCCESS
        else:
            code = GET_MESSAGE_STATUS_TO_RESPONSE_CODE.get(status)
        if code is None:
            # NO_MESSAGE_IN_QUEUE / NO_MATCHED_LOGIC_QUEUE: an empty queue. Asking for
            # offset 0 is "nothing yet"; any other offset has "moved".
            code = (
                ResponseCode.PULL_OFFSET_MOVED if (h.queue_offset or 0) != 0
                else ResponseCode.PULL_NOT_FOUND
            )  # fmt: skip
        # NOTE: performance — the header as a dict; every reply carries all four fields.
        ext = {
            "suggestWhichBrokerId": str(suggest),
            "nextBeginOffset": str(result.next_begin_offset),
            "minOffset": str(result.min_offset),
            "maxOffset": str(result.max_offset),
        }
        response = RemotingCommand.create_response(code, status.name, ext_fields=ext)
        if tracer.enabled:
            tracer.emit(
                COMPONENT, "9", status=status.name, code=ResponseCode(code).name,
                next_begin_offset=result.next_begin_offset, min_offset=result.min_offset,
                max_offset=result.max_offset, messages=result.message_count,
                text=(
                    f"getMessage: {status.name} ({result.message_count} msgs, next "
                    f"{result.next_begin_offset}, min {result.min_offset}, max "
                    f"{result.max_offset}) → {ResponseCode(code).name}"
                ),
            )  # fmt: skip
        if code == ResponseCode.SUCCESS:
            # BrokerStatsManager: GROUP_GET_NUMS / GROUP_GET_SIZE of topic@group,
            # BROKER_GET_NUMS, and GROUP_GET_LATENCY (the copy below: 0 ms on one clock tick)
            bsm = broker.broker_stats_manager
            bsm.inc_group_get_nums(h.consumer_group, h.topic, result.message_count)
            bsm.inc_group_get_size(h.consumer_group, h.topic, result.buffer_total_size)
            bsm.inc_broker_get_nums(result.message_count)
            bsm.inc_group_get_latency(h.consumer_group, h.topic, h.queue_id or 0, 0)
            # transferMsgByHeap: the body is the stored bytes, concatenated.
            response.body = b"".join(result.message_buffers)
        elif code == ResponseCode.PULL_NOT_FOUND:
            if broker_allow_suspend and has_suspend:
                polling_time_mills = suspend_timeout_millis
                if not cfg.long_polling_enable:
                    polling_time_mills = cfg.short_polling_time_mills
                pull_request = PullRequest(
                    request_command=request,
                    client_channel=channel,
                    timeout_millis=polling_time_mills,
                    suspend_timestamp=broker.ctx.now_ms,
                    pull_from_this_offset=h.queue_offset or 0,
                    subscription_data=subscription_data,
                    message_filter=message_filter,
                )
                broker.pull_request_hold_service.suspend_pull_request(
                    h.topic, h.queue_id, pull_request
                )
                return None
        elif code == ResponseCode.PULL_OFFSET_MOVED:
            store_cfg = broker.message_store_config
            if store_cfg.broker_role != "SLAVE" or store_cfg.offset_check_in_slave:
                self._generate_offset_moved_event(h, result.next_begin_offset)
            else:
                response.code = ResponseCode.PULL_RETRY_IMMEDIATELY
                ext["suggestWhichBrokerId"] = str(sgc.broker_id)
        return response

    def _generate_offset_moved_event(self, h: PullMessageRequestHeader, offset_new: int) -> None:
        """``generateOffsetMovedEvent``: a message in OFFSET_MOVED_EVENT, queue 0."""
        broker = self.broker
        body = json.dumps(
            {
                "consumerGroup": h.consumer_group,
                "messageQueue": {
                    "brokerName": broker.broker_config.broker_name,
                    "queueId": h.queue_id,
                    "topic": h.topic,
                },
                "offsetNew": offset_new,
                "offsetRequest": h.queue_offset,
            },
            separators=(",", ":"),
        ).encode()
        # setTags, setDelayTimeLevel(0), setKeys: DELAY=0 is stored too.
        props = {
            mc.PROPERTY_TAGS: h.consumer_group,
            mc.PROPERTY_DELAY_TIME_LEVEL: "0",
            mc.PROPERTY_KEYS: h.consumer_group,
        }
        now = broker.ctx.now_ms
        msg = MessageExtBrokerInner(
            topic=TopicValidator.RMQ_SYS_OFFSET_MOVED_EVENT,
            body=body,
            properties=props,
            properties_string=message_properties_to_string(props),
            tags_code=java_string_hash(h.consumer_group),
            queue_id=0,
            born_timestamp=now,
            born_host=broker.broker_addr,
            store_host=broker.broker_addr,
        )
        broker.put_message(msg)

    def execute_request_when_wakeup(self, channel: Channel, request: RemotingCommand) -> None:
        """Replay a parked pull and write its response (suspend not allowed this time).

        Mirrors PullMessageProcessor#executeRequestWhenWakeup (broker/processor, RocketMQ
        4.9.3); mechanisms.md "Long polling". Java submits the replay to the pull thread pool; here it runs in
        the same event.
        """
        if channel.closed:
            return
        response = self._process(channel, request, False)
        if response is not None:
            response.opaque = request.opaque
            response.mark_response_type()
            self.broker.ctx.send_response(channel, response)
