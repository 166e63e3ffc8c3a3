"""The broker's send path: SEND_MESSAGE(_V2), SEND_BATCH_MESSAGE, CONSUMER_SEND_MSG_BACK.

Mirrors ``SendMessageProcessor`` and ``AbstractSendMessageProcessor`` (broker/processor,
RocketMQ 4.9.3); mechanisms.md "Send"; docs/reference.md §10.6 (send), §10.7 (send-back).

mechanisms.md "Send" numbers three levels, and so do the trace events:

- ``SendMessageProcessor.asyncSendMessage`` steps 1–6: preSend (incl. msgCheck and topic
  auto-creation) · build the inner message · handleRetryAndDLQ · transaction-prepared ·
  put · handlePutMessageResult;
- ``SendMessageProcessor.preSend`` steps 1–3: response with MSG_REGION / TRACE_ON ·
  ``startAcceptSendRequestTimeStamp`` · msgCheck;
- ``AbstractSendMessageProcessor.msgCheck`` steps 1–5: broker writable (for order
  topics) · topic name rules · not-allowed system topics · topic lookup and auto-create
  from TBW102 (or the retry topic) · queue id range.

Every failure is a response code + RocketMQ's remark, returned early. The store's
``PutMessageStatus`` becomes a response code through ``PUT_MESSAGE_STATUS_TO_RESPONSE``.
The processor never sees a socket or a clock: time comes from ``ctx.now_ms``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from mqlab.common import faq_url
from mqlab.common import message_const as mc
from mqlab.common.filter_api import java_string_hash, tags_string_to_tags_code
from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import (
    decode_batch_body_raw,
    join_batch_properties,
    message_properties_to_string,
    string_to_message_properties,
)
from mqlab.common.mix_all import (
    RETRY_GROUP_TOPIC_PREFIX,
    get_dlq_topic,
    get_retry_topic,
)
from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import MessageSysFlag
from mqlab.common.topic_validator import RMQ_SYS_SCHEDULE_TOPIC, TopicValidator
from mqlab.common.util_all import time_millis_to_human_string2
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.headers import (
    ConsumerSendMsgBackRequestHeader,
    SendMessageRequestHeader,
    decode_send_message_header_v2,
)
from mqlab.runtime.context import Channel
from mqlab.store.status import PutMessageStatus

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["SendMessageProcessor", "PUT_MESSAGE_STATUS_TO_RESPONSE"]

C_SEND = "SendMessageProcessor.asyncSendMessage"
C_PRESEND = "SendMessageProcessor.preSend"
C_CHECK = "AbstractSendMessageProcessor.msgCheck"
C_BACK = "SendMessageProcessor.asyncConsumerSendMsgBack"

#: ``MQVersion.Version.V3_4_9.ordinal()``: from this version a request's
#: maxReconsumeTimes overrides the group's retryMaxTimes.
V3_4_9 = 121
#: ``MixAll.DLQ_NUMS_PER_GROUP``.
DLQ_NUMS_PER_GROUP = 1

_ILLEGAL = (
    "the message is illegal, maybe msg body or properties length not matched. msg body length "
    "limit 128k, msg properties length limit 32k."
)
#: handlePutMessageResult's switch (docs/reference.md §10.6 step 10): status → (code, remark).
#: The first four count as "sent": the response carries msgId / queueId / queueOffset.
PUT_MESSAGE_STATUS_TO_RESPONSE: dict[PutMessageStatus, tuple[int, str | None]] = {
    PutMessageStatus.PUT_OK: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_DISK_TIMEOUT: (ResponseCode.FLUSH_DISK_TIMEOUT, None),
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: (ResponseCode.FLUSH_SLAVE_TIMEOUT, None),
    PutMessageStatus.SLAVE_NOT_AVAILABLE: (ResponseCode.SLAVE_NOT_AVAILABLE, None),
    PutMessageStatus.CREATE_MAPEDFILE_FAILED: (
        ResponseCode.SYSTEM_ERROR, "create mapped file failed, server is busy or broken."
    ),
    PutMessageStatus.MESSAGE_ILLEGAL: (ResponseCode.MESSAGE_ILLEGAL, _ILLEGAL),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (ResponseCode.MESSAGE_ILLEGAL, _ILLEGAL),
    # "{disk_util}" is filled in by _handle_put_message_result (SendMessageProcessor#diskUtil).
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (
        ResponseCode.SERVICE_NOT_AVAILABLE,
        "service not available now. It may be caused by one of the following reasons: the broker's "
        "disk is full [{disk_util}], messages are put to the slave, message store has been shut "
        "down, etc.",
    ),
    PutMessageStatus.OS_PAGECACHE_BUSY: (
        ResponseCode.SYSTEM_ERROR, "[PC_SYNCHRONIZED]broker busy, start flow control for a while"
    ),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
}  # fmt: skip
_SENT = {
    PutMessageStatus.PUT_OK,
    PutMessageStatus.FLUSH_DISK_TIMEOUT,
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
    PutMessageStatus.SLAVE_NOT_AVAILABLE,
}
# NOTE: performance: read on every send. Enum members read through their class and
# Enum.__hash__ (Python code, for the dict / set above) cost ~0.1 µs each in CPython 3.11.
_PUT_OK = PutMessageStatus.PUT_OK
_SUCCESS = ResponseCode.SUCCESS
# the request codes process_request tells apart, read once (an enum member read from its
# class is ~100 ns on 3.11: mqlab/trace/recorder.py)
_SEND_MSG_BACK = RequestCode.CONSUMER_SEND_MSG_BACK
_V2_CODES = (RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE)
_TAGS = mc.PROPERTY_TAGS
_WAIT = mc.PROPERTY_WAIT_STORE_MSG_OK
# NOTE: performance: TopicValidator.validate_topic is a pure function of the name that
# costs ~1 µs (a regex, and a generator over the chars for the blank test); a broker sees
# few names. The memo holds its (immutable) results only.
_validate_topic = lru_cache(maxsize=4096)(TopicValidator.validate_topic)


_V2_FRAME = "org.apache.rocketmq.broker.processor.AbstractSendMessageProcessor."
_V2_NULL_FIELD = re.compile(r"^the custom field <[a-h]> is null$")


def _v2_decode_remark(text: str) -> str:
    """What Java's remoting layer writes for decodeSendMessageHeaderV2's own exceptions:
    ``RemotingHelper#exceptionSimpleDesc`` (the exception, then its first stack frame;
    AbstractSendMessageProcessor.java lines of 4.9.3). Other decode errors (a number that
    does not parse: Java's NumberFormatException, whose first frame is inside the JDK)
    keep mqlab's own text naming the field."""
    exc = "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
    if text == "the ext fields is null":
        return f"{exc}{text}, {_V2_FRAME}decodeSendMessageHeaderV2(AbstractSendMessageProcessor.java:311)"
    if _V2_NULL_FIELD.match(text):
        return f"{exc}{text}, {_V2_FRAME}checkNotNull(AbstractSendMessageProcessor.java:375)"
    return text


class SendMessageProcessor:
    """SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320), CONSUMER_SEND_MSG_BACK (36)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    # -- entry ---------------------------------------------------------------------------------
    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """Mirrors SendMessageProcessor#processRequest (broker/processor, RocketMQ 4.9.3)."""
        code = request.code
        if code == _SEND_MSG_BACK:
            return self.consumer_send_msg_back(channel, request)
        try:
            if code in _V2_CODES:
                header = decode_send_message_header_v2(request.ext_fields)
            else:
                header = SendMessageRequestHeader.from_ext_fields(request.ext_fields)
        except RemotingCommandException as e:
            # AbstractSendMessageProcessor#parseRequestHeader throws; the remoting layer
            # answers SYSTEM_ERROR with the exception text (no preSend extFields yet).
            return self._response(ResponseCode.SYSTEM_ERROR, _v2_decode_remark(str(e)),
                                  region=False)  # fmt: skip
        # Java looks at requestHeader.isBatch() only: 320 with m=false is stored as one
        # message whose body is the whole batch body. (The C++ client's SEND_MESSAGE with
        # batch:"1" counts as a batch: the header decoder reads "1" as true.)
        if header.batch:
            return self.send_batch_message(channel, request, header)
        return self.send_message(channel, request, header)

    def _response(self, code: int, remark: str | None, region: bool = True) -> RemotingCommand:
        """A response; ``region``: with preSend's MSG_REGION / TRACE_ON extFields (send
        paths), or without (send-back and header errors: ``createResponseCommand(null)``)."""
        if not region:
            return RemotingCommand.create_response(code, remark, ext_fields={})
        cfg = self.broker.broker_config
        return RemotingCommand.create_response(
            code,
            remark,
            ext_fields={
                mc.PROPERTY_MSG_REGION: cfg.region_id,
                mc.PROPERTY_TRACE_SWITCH: "true" if cfg.trace_on else "false",
            },
        )

    def _fail(
        self, component: str, step: str, code: int, remark: str, region: bool = True
    ) -> RemotingCommand:
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(
                component, step, code=ResponseCode(code).name, remark=remark,
                text=f"{component.split('.')[-1]} step {step} fails: {ResponseCode(code).name} "
                f"({remark.splitlines()[0]})",
            )  # fmt: skip
        return self._response(code, remark, region)

    # -- preSend + msgCheck --------------------------------------------------------------------------
    def pre_send(
        self, channel: Channel, header: SendMessageRequestHeader
    ) -> RemotingCommand | None:
        """Checks before storing; returns an error response, or None to go on.

        Mirrors SendMessageProcessor#preSend and AbstractSendMessageProcessor#msgCheck
        (broker/processor, RocketMQ 4.9.3); mechanisms.md "Send"
        """
        broker = self.broker
        cfg = broker.broker_config
        tracer = broker.tracer
        now = broker.ctx.now_ms
        # preSend step 2: not before startAcceptSendRequestTimeStamp.
        start = cfg.start_accept_send_request_time_stamp
        if now < start:
            return self._fail(
                C_PRESEND, "2", ResponseCode.SYSTEM_ERROR,
                f"broker unable to service, until {time_millis_to_human_string2(start)}",
            )  # fmt: skip
        topic = header.topic or ""
        tcm = broker.topic_config_manager
        # msgCheck step 1: a non-writable broker refuses order topics.
        if not PermName.is_writeable(cfg.broker_permission) and tcm.is_order_topic(topic):
            return self._fail(
                C_CHECK, "1", ResponseCode.NO_PERMISSION,
                f"the broker[{cfg.broker_ip1}] sending message is forbidden",
            )  # fmt: skip
        # msgCheck step 2: blank / illegal characters / longer than 127.
        ok, code, remark = _validate_topic(topic)
        if not ok:
            return self._fail(C_CHECK, "2", code, remark or "")
        # msgCheck step 3: SCHEDULE_TOPIC_XXXX may not be sent to.
        if TopicValidator.is_not_allowed_send_topic(topic):
            return self._fail(
                C_CHECK, "3", ResponseCode.NO_PERMISSION,
                TopicValidator.not_allowed_send_remark(topic),
            )  # fmt: skip
        # msgCheck step 4: find the topic, or create it from the default topic (TBW102).
        topic_config = tcm.select_topic_config(topic)
        created = None
        if topic_config is None:
            topic_sys_flag = 0
            if header.unit_mode:
                topic_sys_flag = 2 if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) else 1
            topic_config = tcm.create_topic_in_send_message_method(
                topic, header.default_topic, channel.remote_address,
                header.default_topic_queue_nums or 0, topic_sys_flag, now,
            )  # fmt: skip
            created = "from default topic" if topic_config is not None else None
            if topic_config is None and topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                topic_config = tcm.create_topic_in_send_message_back_method(
                    topic, 1, PermName.PERM_WRITE | PermName.PERM_READ, topic_sys_flag, now
                )
                created = "retry topic" if topic_config is not None else None
            if topic_config is None:
                return self._fail(
                    C_CHECK, "4", ResponseCode.TOPIC_NOT_EXIST,
                    f"topic[{topic}] not exist, apply first please!"
                    f"{faq_url.suggest_todo(faq_url.APPLY_TOPIC_URL)}",
                )  # fmt: skip
        if tracer.enabled:
            tracer.emit(
                C_CHECK, "4", topic=topic, created=created, queues=topic_config.write_queue_nums,
                perm=topic_config.perm,
                text=(
                    f"topic {topic} auto-created ({created}): {topic_config.write_queue_nums} "
                    f"queues, perm {topic_config.perm}"
                    if created
                    else f"topic {topic} found"
                ),
            )  # fmt: skip
        # msgCheck step 5: queueId < max(writeQueueNums, readQueueNums).
        queue_id = header.queue_id if header.queue_id is not None else 0
        id_valid = max(topic_config.write_queue_nums, topic_config.read_queue_nums)
        if queue_id >= id_valid:
            return self._fail(
                C_CHECK, "5", ResponseCode.SYSTEM_ERROR,
                f"request queueId[{queue_id}] is illegal, {_topic_config_str(topic_config)} "
                f"Producer: {channel.remote_address}",
            )  # fmt: skip
        return None

    def _target_queue(self, header: SendMessageRequestHeader):
        """After preSend: the topic, its config and the queue id (random when < 0)."""
        topic = header.topic or ""
        topic_config = self.broker.topic_config_manager.select_topic_config(topic)
        queue_id = header.queue_id if header.queue_id is not None else 0
        if queue_id < 0:
            queue_id = self.random_queue_id(topic_config.write_queue_nums)
        return topic, topic_config, queue_id

    # -- one message --------------------------------------------------------------------------------
    def send_message(
        self, channel: Channel, request: RemotingCommand, header: SendMessageRequestHeader
    ) -> RemotingCommand | None:
        """Store one message.

        Mirrors SendMessageProcessor#asyncSendMessage (broker/processor, RocketMQ 4.9.3);
        mechanisms.md "Send"
        """
        broker = self.broker
        cfg = broker.broker_config
        tracer = broker.tracer
        # step 1: preSend (response extFields, start time, msgCheck + auto-create).
        err = self.pre_send(channel, header)
        if err is not None:
            return err
        topic, topic_config, queue_id = self._target_queue(header)
        # step 2: the inner message from the request.
        msg = MessageExtBrokerInner(topic=topic, queue_id=queue_id)
        props = string_to_message_properties(header.properties or "")
        # step 3: %RETRY% topics: past maxReconsumeTimes the message goes to %DLQ%.
        err = self._handle_retry_and_dlq(request, header, msg, topic_config, props)
        if err is not None:
            return err
        msg.body = request.body or b""
        msg.flag = header.flag or 0
        msg.properties = props
        msg.tags_code = tags_string_to_tags_code(props.get(_TAGS))
        msg.born_timestamp = header.born_timestamp or 0
        msg.born_host = channel.remote_address
        msg.store_host = broker.broker_addr
        msg.reconsume_times = header.reconsume_times or 0
        props[mc.PROPERTY_CLUSTER] = cfg.broker_cluster_name
        # There is no need to store "WAIT=true": saves 10 bytes per message (WAIT\x01true and
        # its separator; the Java comment says 9).
        wait = props.pop(_WAIT, None)
        if wait is not None:
            # origProps.remove(WAIT) does not shrink the HashMap's table, which sets the
            # stored order: a None value is skipped but still counts for the table size.
            props[_WAIT] = None
        msg.properties_string = message_properties_to_string(props)
        if wait is not None:
            props[_WAIT] = wait
        traced = tracer.enabled  # NOTE: performance: one property read per send
        if traced:
            tracer.emit(
                C_SEND, "2", topic=msg.topic, queue_id=msg.queue_id, body_bytes=len(msg.body),
                tags=props.get(mc.PROPERTY_TAGS),
                text=f"message for {msg.topic} queue {msg.queue_id} ({len(msg.body)} B body)",
            )  # fmt: skip
        # step 4: transaction-prepared messages.
        if props.get(mc.PROPERTY_TRANSACTION_PREPARED, "").lower() == "true":
            if cfg.reject_transaction_message:
                return self._fail(
                    C_SEND, "4", ResponseCode.NO_PERMISSION,
                    f"the broker[{cfg.broker_ip1}] sending transaction message is forbidden",
                )  # fmt: skip
            # TransactionalMessageServiceImpl#asyncPrepareMessage →
            # TransactionalMessageBridge#parseHalfMessageInner: park it in the half topic.
            # The properties string is recomputed from the map, which holds WAIT again:
            # the half message stores it (the 10-byte saving above is undone, as in Java).
            broker.transactional_message_service.bridge.parse_half_message_inner(msg)
            if traced:
                tracer.emit(
                    C_SEND, "4", real_topic=props[mc.PROPERTY_REAL_TOPIC],
                    real_queue_id=int(props[mc.PROPERTY_REAL_QUEUE_ID]),
                    text="transaction half message → RMQ_SYS_TRANS_HALF_TOPIC queue 0",
                )  # fmt: skip
        # step 5: put into the store.
        result = broker.put_message(msg)
        # step 6: PutMessageStatus → response (msg.topic: SCHEDULE_TOPIC_XXXX when delayed).
        topic, stored_queue_id = msg.topic, msg.queue_id
        return self._answer_when_replicated(
            channel, request, result,
            lambda: self._handle_put_message_result(
                request, result, queue_id, C_SEND, topic, stored_queue_id
            ),
        )  # fmt: skip

    def _answer_when_replicated(self, channel, request, result, respond):
        """The response now, or (SYNC_MASTER waiting for a slave) once the put's
        ``GroupCommitRequest`` completes: 4.9.3's ``putMessageResult.thenApply``.

        mechanisms.md "HA replication" step 14: the replica status (PUT_OK or
        FLUSH_SLAVE_TIMEOUT) overrides the put's, as ``CommitLog#asyncPutMessage``'s
        ``thenCombine`` does, and the response goes out on ``channel`` then.
        """
        req = None if result is None else result.replica_request
        if req is None:
            return respond()

        def done(status: PutMessageStatus) -> None:
            # step 14 (mechanisms.md "HA replication"): the replica status, then the response
            if status is not PutMessageStatus.PUT_OK:
                result.put_message_status = status
            result.replica_request = None
            tracer = self.broker.tracer
            if tracer.enabled:
                tracer.emit(
                    "SendMessageProcessor.handlePutMessageResultFuture", "14",
                    replica_status=status.name, later=not req_done_now,
                    text=f"the slave's answer: {status.name}",
                )  # fmt: skip
            response = respond()
            if req_done_now:
                answer.append(response)
                return
            if request.is_oneway or channel.closed:
                return
            response.opaque = request.opaque
            response.mark_response_type()
            self.broker.ctx.send_response(channel, response)

        answer: list[RemotingCommand] = []
        req_done_now = True
        req.on_done(done)
        if answer:
            return answer[0]
        req_done_now = False
        return None

    def _handle_retry_and_dlq(
        self, request, header, msg, topic_config, props
    ) -> RemotingCommand | None:
        """SendMessageProcessor#handleRetryAndDLQ; mechanisms.md "Send"; docs/reference.md §10.6 step 5."""
        broker = self.broker
        topic = header.topic or ""
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            group = topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
            sgc = broker.subscription_group_manager.find_subscription_group_config(
                group, broker.ctx.now_ms
            )
            if sgc is None:
                return self._fail(
                    C_SEND, "3", ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                    f"subscription group not exist, {group} "
                    f"{faq_url.suggest_todo(faq_url.SUBSCRIPTION_GROUP_NOT_EXIST)}",
                )  # fmt: skip
            max_reconsume = sgc.retry_max_times
            if request.version >= V3_4_9 and header.max_reconsume_times is not None:
                max_reconsume = header.max_reconsume_times
            reconsume_times = header.reconsume_times or 0
            if reconsume_times >= max_reconsume:
                new_topic = get_dlq_topic(group)
                msg.topic = new_topic
                msg.queue_id = self.random_queue_id(DLQ_NUMS_PER_GROUP)
                topic_config = broker.topic_config_manager.create_topic_in_send_message_back_method(
                    new_topic, DLQ_NUMS_PER_GROUP, PermName.PERM_WRITE | PermName.PERM_READ, 0,
                    broker.ctx.now_ms,
                )  # fmt: skip
                if topic_config is None:
                    return self._fail(
                        C_SEND, "3", ResponseCode.SYSTEM_ERROR, f"topic[{new_topic}] not exist"
                    )
                if broker.tracer.enabled:
                    broker.tracer.emit(
                        C_SEND, "3", topic=new_topic, reconsume_times=reconsume_times,
                        max_reconsume_times=max_reconsume,
                        text=f"reconsumeTimes {reconsume_times} ≥ {max_reconsume} → {new_topic}",
                    )  # fmt: skip
        sys_flag = header.sys_flag or 0
        if topic_config is not None and topic_config.topic_filter_type == "MULTI_TAG":
            sys_flag |= MessageSysFlag.MULTI_TAGS_FLAG
        msg.sys_flag = sys_flag
        return None

    def _handle_put_message_result(
        self, request, result, queue_id, component, topic: str, stored_queue_id: int | None = None
    ) -> RemotingCommand | None:
        """SendMessageProcessor#handlePutMessageResult; mechanisms.md "Send"; docs/reference.md §10.6 step 10.

        A sent message counts in BrokerStatsManager: TOPIC_PUT_NUMS / TOPIC_PUT_SIZE of
        ``topic`` (the stored one), BROKER_PUT_NUMS, and QUEUE_PUT_* of ``stored_queue_id`` for
        SCHEDULE_TOPIC_XXXX (the delay level's queue).
        """
        if result is None:
            return self._fail(
                component, "6", ResponseCode.SYSTEM_ERROR, "store putMessage return null"
            )
        status = result.put_message_status
        if status is _PUT_OK:  # NOTE: performance: the usual case without the enum lookups
            code, remark, sent = _SUCCESS, None, True
        else:
            code, remark = PUT_MESSAGE_STATUS_TO_RESPONSE.get(
                status, (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR DEFAULT")
            )
            sent = status in _SENT
            if status is PutMessageStatus.SERVICE_NOT_AVAILABLE:
                remark = remark.format(disk_util=self.disk_util())
        response = self._response(code, remark)
        tracer = self.broker.tracer
        if sent:
            amr = result.append_message_result
            bsm = self.broker.broker_stats_manager
            if topic == RMQ_SYS_SCHEDULE_TOPIC:
                q = queue_id if stored_queue_id is None else stored_queue_id
                bsm.inc_queue_put_nums(topic, q, amr.msg_num, 1)
                bsm.inc_queue_put_size(topic, q, amr.wrote_bytes)
            bsm.inc_topic_put_nums(topic, amr.msg_num, 1)
            bsm.inc_topic_put_size(topic, amr.wrote_bytes)
            bsm.inc_broker_put_nums(amr.msg_num)
            msg_id = amr.msg_id
            ext = response.ext_fields
            ext["msgId"] = msg_id
            ext["queueId"] = str(queue_id)
            ext["queueOffset"] = str(amr.logics_offset)
            if tracer.enabled:
                status_name, code_name = status.name, ResponseCode(code).name
                tracer.emit(
                    component, "6", status=status_name, code=code_name,
                    msg_id=msg_id, queue_id=queue_id, queue_offset=amr.logics_offset,
                    commit_log_offset=amr.wrote_offset,
                    text=(
                        f"{status_name} → {code_name}: queue {queue_id} offset "
                        f"{amr.logics_offset}, commit log @{amr.wrote_offset}"
                    ),
                )  # fmt: skip
        elif tracer.enabled:
            status_name, code_name = status.name, ResponseCode(code).name
            tracer.emit(
                component, "6", status=status_name, code=code_name, remark=remark,
                text=f"{status_name} → {code_name}",
            )  # fmt: skip
        return response

    def disk_util(self) -> str:
        """``diskUtil``: the used fraction of the commit-log, consume-queue and index paths.

        Mirrors SendMessageProcessor#diskUtil (broker/processor, RocketMQ 4.9.3):
        ``String.format("CL: %5.2f CQ: %5.2f INDEX: %5.2f", ...)``. mqlab's paths share one
        simulated disk, ``DefaultMessageStore.disk_used_ratio``.
        """
        ratio = self.broker.message_store.disk_used_ratio
        return f"CL: {ratio:5.2f} CQ: {ratio:5.2f} INDEX: {ratio:5.2f}"

    def random_queue_id(self, write_queue_nums: int) -> int:
        """``randomQueueId``: ``(random.nextInt() % 99999999) % writeQueueNums`` (abs)."""
        return self.broker.ctx.rng("send random queue").randint(0, 99_999_998) % max(
            1, write_queue_nums
        )

    # -- batches -----------------------------------------------------------------------------------
    def send_batch_message(
        self, channel: Channel, request: RemotingCommand, header: SendMessageRequestHeader
    ) -> RemotingCommand | None:
        """Store a batch as consecutive entries of one queue.

        Mirrors SendMessageProcessor#asyncSendBatchMessage (broker/processor, RocketMQ
        4.9.3); docs/reference.md §4.6 (batch body), §10.6 "Batch".
        """
        broker = self.broker
        cfg = broker.broker_config
        err = self.pre_send(channel, header)
        if err is not None:
            return err
        topic, topic_config, queue_id = self._target_queue(header)
        # 4.9.3 checks only the topic length here (the "batch request does not support
        # retry group" refusal is 5.x); msgCheck's validateTopic already caps it at 127.
        if len(topic) > TopicValidator.TOPIC_MAX_LENGTH:
            return self._fail(
                C_SEND, "2", ResponseCode.MESSAGE_ILLEGAL,
                f"message topic length too long {len(topic)}",
            )  # fmt: skip
        try:
            entries = decode_batch_body_raw(request.body or b"")
        except ValueError as e:
            return self._fail(C_SEND, "2", ResponseCode.MESSAGE_ILLEGAL, f"bad batch body: {e}")
        # asyncSendBatchMessage keeps the header's properties (WAIT included: the 9-byte
        # saving is single-send only) and adds CLUSTER; the store then writes each message's
        # own properties string + \u0002 + this one (docs/reference.md §4.6).
        batch_props = string_to_message_properties(header.properties or "")
        batch_props[mc.PROPERTY_CLUSTER] = cfg.broker_cluster_name
        batch_prop_str = message_properties_to_string(batch_props)
        sys_flag = header.sys_flag or 0
        if topic_config.topic_filter_type == "MULTI_TAG":
            sys_flag |= MessageSysFlag.MULTI_TAGS_FLAG
        # NOTE: performance: what every message of the batch shares is read once.
        born_timestamp = header.born_timestamp or 0
        born_host = channel.remote_address
        store_host = broker.broker_addr
        reconsume_times = header.reconsume_times or 0
        msgs = []
        for flag, body, props_text in entries:
            stored = join_batch_properties(props_text, batch_prop_str)
            merged = string_to_message_properties(stored)  # later keys win, as in Java's map
            msgs.append(
                MessageExtBrokerInner(
                    topic=topic,
                    queue_id=queue_id,
                    body=body,
                    flag=flag,
                    properties=merged,
                    properties_string=stored,
                    tags_code=tags_string_to_tags_code(merged.get(mc.PROPERTY_TAGS)),
                    sys_flag=sys_flag,
                    born_timestamp=born_timestamp,
                    born_host=born_host,
                    store_host=store_host,
                    reconsume_times=reconsume_times,
                )  # fmt: skip
            )
        # The store reads DELAY and WAIT from batch_props only (messageExtBatch's own map).
        result = broker.put_messages(
            msgs, batch_props, len(request.body or b""), [e[2] for e in entries]
        )
        return self._answer_when_replicated(
            channel,
            request,
            result,
            lambda: self._handle_put_message_result(request, result, queue_id, C_SEND, topic),
        )

    def _fail_back(self, component: str, step: str, code: int, remark: str) -> RemotingCommand:
        """A send-back failure: ``createResponseCommand(null)``, no MSG_REGION / TRACE_ON."""
        return self._fail(component, step, code, remark, region=False)

    # -- consumer send-back --------------------------------------------------------------------------
    def consumer_send_msg_back(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """A consumer hands back a message it failed to consume: retry topic or DLQ.

        Mirrors SendMessageProcessor#asyncConsumerSendMsgBack (broker/processor, RocketMQ
        4.9.3); docs/reference.md §10.7 steps 1–10.
        """
        broker = self.broker
        cfg = broker.broker_config
        tracer = broker.tracer
        now = broker.ctx.now_ms
        h = ConsumerSendMsgBackRequestHeader.from_ext_fields(request.ext_fields)
        group = h.group or ""
        # step 1: the group's config.
        sgc = broker.subscription_group_manager.find_subscription_group_config(group, now)
        if sgc is None:
            return self._fail_back(
                C_BACK, "1", ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group not exist, {group} "
                f"{faq_url.suggest_todo(faq_url.SUBSCRIPTION_GROUP_NOT_EXIST)}",
            )  # fmt: skip
        # step 2: broker writable.
        if not PermName.is_writeable(cfg.broker_permission):
            return self._fail_back(
                C_BACK, "2", ResponseCode.NO_PERMISSION,
                f"the broker[{cfg.broker_ip1}] sending message is forbidden",
            )  # fmt: skip
        # step 3: no retry queues → silently dropped.
        if sgc.retry_queue_nums <= 0:
            if tracer.enabled:
                tracer.emit(C_BACK, "3", text="retryQueueNums <= 0: message dropped")
            return self._response(ResponseCode.SUCCESS, None, region=False)
        # step 4: the retry topic (created if needed).
        new_topic = get_retry_topic(group)
        queue_id = self.random_queue_id(sgc.retry_queue_nums)
        topic_sys_flag = 2 if h.unit_mode else 0
        tcm = broker.topic_config_manager
        topic_config = tcm.create_topic_in_send_message_back_method(
            new_topic, sgc.retry_queue_nums, PermName.PERM_WRITE | PermName.PERM_READ,
            topic_sys_flag, now,
        )  # fmt: skip
        if topic_config is None:
            return self._fail_back(
                C_BACK, "4", ResponseCode.SYSTEM_ERROR, f"topic[{new_topic}] not exist"
            )
        if not PermName.is_writeable(topic_config.perm):
            return self._fail_back(
                C_BACK, "4", ResponseCode.NO_PERMISSION,
                f"the topic[{new_topic}] sending message is forbidden",
            )  # fmt: skip
        # step 5: the original message, by commit-log offset.
        offset = h.offset if h.offset is not None else -1
        msg_ext = broker.message_store.look_message_by_offset(offset)
        if msg_ext is None:
            return self._fail_back(
                C_BACK, "5", ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {offset}"
            )
        props = dict(msg_ext.properties)
        # step 6: remember the original topic; the retry copy is not waited on.
        if props.get(mc.PROPERTY_RETRY_TOPIC) is None:
            props[mc.PROPERTY_RETRY_TOPIC] = msg_ext.topic
        props[mc.PROPERTY_WAIT_STORE_MSG_OK] = "false"
        # step 7: maxReconsumeTimes.
        max_reconsume = sgc.retry_max_times
        if request.version >= V3_4_9 and h.max_reconsume_times is not None:
            max_reconsume = h.max_reconsume_times
        # step 8: DLQ or delay level.
        delay_level = h.delay_level or 0
        if msg_ext.reconsume_times >= max_reconsume or delay_level < 0:
            new_topic = get_dlq_topic(group)
            queue_id = self.random_queue_id(DLQ_NUMS_PER_GROUP)
            topic_config = tcm.create_topic_in_send_message_back_method(
                new_topic, DLQ_NUMS_PER_GROUP, PermName.PERM_WRITE | PermName.PERM_READ, 0, now
            )
            if topic_config is None:
                return self._fail_back(
                    C_BACK, "8", ResponseCode.SYSTEM_ERROR, f"topic[{new_topic}] not exist"
                )
            props[mc.PROPERTY_DELAY_TIME_LEVEL] = "0"
            where = f"DLQ {new_topic} (reconsumeTimes {msg_ext.reconsume_times} ≥ {max_reconsume})"
        else:
            if delay_level == 0:
                delay_level = 3 + msg_ext.reconsume_times
            props[mc.PROPERTY_DELAY_TIME_LEVEL] = str(delay_level)
            where = f"{new_topic} with delay level {delay_level}"
        if tracer.enabled:
            tracer.emit(
                C_BACK, "8", topic=new_topic, delay_level=int(props[mc.PROPERTY_DELAY_TIME_LEVEL]),
                reconsume_times=msg_ext.reconsume_times + 1, origin_offset=offset,
                text=f"send back message @{offset} → {where}",
            )  # fmt: skip
        # step 9: the new message.
        origin_msg_id = props.get(mc.PROPERTY_ORIGIN_MESSAGE_ID) or msg_ext.msg_id
        props[mc.PROPERTY_ORIGIN_MESSAGE_ID] = origin_msg_id
        tags = props.get(mc.PROPERTY_TAGS)
        new_msg = MessageExtBrokerInner(
            topic=new_topic, queue_id=queue_id, body=msg_ext.body, flag=msg_ext.flag,
            properties=props, properties_string=message_properties_to_string(props),
            tags_code=java_string_hash(tags) if tags else 0, sys_flag=msg_ext.sys_flag,
            born_timestamp=msg_ext.born_timestamp, born_host=msg_ext.born_host,
            store_host=broker.broker_addr, reconsume_times=msg_ext.reconsume_times + 1,
        )  # fmt: skip
        # step 10: put (DELAY > 0 parks it in SCHEDULE_TOPIC_XXXX first).
        result = broker.put_message(new_msg)
        if result is not None and result.put_message_status == PutMessageStatus.PUT_OK:
            # BrokerStatsManager: SNDBCK_PUT_NUMS of the message's own topic (RETRY_TOPIC
            # when it came from a retry topic) @ group; a delayed one also counts as a put
            # of SCHEDULE_TOPIC_XXXX
            bsm = broker.broker_stats_manager
            back_topic = props.get(mc.PROPERTY_RETRY_TOPIC) or msg_ext.topic
            if new_msg.topic == RMQ_SYS_SCHEDULE_TOPIC:
                amr = result.append_message_result
                bsm.inc_topic_put_nums(new_msg.topic)
                bsm.inc_topic_put_size(new_msg.topic, amr.wrote_bytes)
                bsm.inc_queue_put_nums(new_msg.topic, new_msg.queue_id)
                bsm.inc_queue_put_size(new_msg.topic, new_msg.queue_id, amr.wrote_bytes)
            bsm.inc_send_back_nums(group, back_topic)
            return self._response(ResponseCode.SUCCESS, None, region=False)
        status = (
            result.put_message_status.name if result is not None else "putMessageResult is null"
        )
        return self._fail_back(C_BACK, "10", ResponseCode.SYSTEM_ERROR, status)


def _topic_config_str(tc) -> str:
    """``TopicConfig#toString``."""
    return (
        f"TopicConfig [topicName={tc.topic_name}, readQueueNums={tc.read_queue_nums}, "
        f"writeQueueNums={tc.write_queue_nums}, perm={PermName.perm2string(tc.perm)}, "
        f"topicFilterType={tc.topic_filter_type}, topicSysFlag={tc.topic_sys_flag}, "
        f"order={'true' if tc.order else 'false'}]"
    )
