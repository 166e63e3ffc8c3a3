"""A replier's answer to ``request()``: push it to the requester, then store it.

Mirrors ``ReplyMessageProcessor`` (broker/processor, RocketMQ 4.9.3): SEND_REPLY_MESSAGE
(324, SendMessageRequestHeader) and SEND_REPLY_MESSAGE_V2 (325, the one-letter V2
header). A consumer that got a request message answers it with a message built by
``MessageUtil#createReplyMessage``: topic ``<cluster>_REPLY_TOPIC`` (the broker creates it
at start, ``MixAll#getReplyTopic``), MSG_TYPE "reply", and the request's CORRELATION_ID,
REPLY_TO_CLIENT and TTL. Its producer sends that message with 324/325 instead of 310.

Numbered steps (``processReplyMessageRequest``), each a trace event of
``ReplyMessageProcessor.processReplyMessageRequest``:

1. Decode the header (324: long names; 325: the V2 short names).
2. The checks it shares with SendMessageProcessor: not before
   ``startAcceptSendRequestTimeStamp``, then ``AbstractSendMessageProcessor#msgCheck``
   (permission, topic name, not-allowed topics, find or auto-create the topic, queue id).
3. Build the inner message (a queue id < 0 picks a random write queue).
4. ``pushReplyMessage``: find the channel of the client named in REPLY_TO_CLIENT through
   ``ProducerManager#findChannel`` and call it with PUSH_REPLY_MESSAGE_TO_CLIENT (326),
   a ``ReplyMessageRequestHeader`` whose properties gain PUSH_REPLY_TIME. Java blocks on
   ``Broker2Client#callClient`` (``invokeSync``, 10 s); mqlab answers from the callback.
5. ``handlePushReplyResult``: pushed → SUCCESS with msgId "0", the queue id, offset 0;
   not pushed → SYSTEM_ERROR with the reason ("push reply message fail, channel of <id>
   not found.", "reply message properties[REPLY_TO_CLIENT] is null", "push reply
   message to <id>fail." — no space, as in Java).
6. With ``storeReplyMessageEnable`` (default true): store the message (its properties as
   sent, without PUSH_REPLY_TIME); a stored message sets msgId / queueId / queueOffset,
   whatever step 5 decided about the code. A failed store changes nothing in the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.common import message_const as mc
from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import (
    message_properties_to_string,
    string_to_message_properties,
)
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.headers import (
    ReplyMessageRequestHeader,
    SendMessageRequestHeader,
    decode_send_message_header_v2,
)
from mqlab.runtime.context import Channel
from mqlab.store.status import PutMessageStatus

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["ReplyMessageProcessor", "CALL_CLIENT_TIMEOUT_MILLIS"]

C = "ReplyMessageProcessor.processReplyMessageRequest"

#: ``Broker2Client#callClient``: ``invokeSync(channel, request, 10000)``.
CALL_CLIENT_TIMEOUT_MILLIS = 10_000

#: handlePutMessageResult: these statuses count as stored (the rest only log).
_PUT_OK = {
    PutMessageStatus.PUT_OK,
    PutMessageStatus.FLUSH_DISK_TIMEOUT,
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
    PutMessageStatus.SLAVE_NOT_AVAILABLE,
}


def inet_socket_address_string(addr: str) -> str:
    """``InetSocketAddress#toString`` of a literal ``ip:port``: ``/ip:port``."""
    return "/" + addr


class ReplyMessageProcessor:
    """SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """Mirrors ``ReplyMessageProcessor#processRequest`` → ``#processReplyMessageRequest``.

        Returns the answer at once when a check fails; otherwise None, and the answer is
        written once the requester has answered the push (step 4).
        """
        broker = self.broker
        tracer = broker.tracer
        # step 1: the header. 325's V2 fields go through Java's generic decoder
        # (decodeCommandCustomHeader), so a missing one is "the custom field <x> is null".
        try:
            if request.code == RequestCode.SEND_REPLY_MESSAGE_V2:
                header = decode_send_message_header_v2(request.ext_fields)
            else:
                header = SendMessageRequestHeader.from_ext_fields(request.ext_fields)
        except RemotingCommandException as e:
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(e), ext_fields={})
        # step 2: preSend's start time + msgCheck, with MSG_REGION / TRACE_ON set first.
        send = broker.send_message_processor
        err = send.pre_send(channel, header)
        if err is not None:
            return err
        topic = header.topic or ""
        topic_config = broker.topic_config_manager.select_topic_config(topic)
        queue_id = header.queue_id if header.queue_id is not None else 0
        if queue_id < 0:
            queue_id = send.random_queue_id(topic_config.write_queue_nums)
        # step 3: the inner message (tags code: from the properties when dispatched).
        props = string_to_message_properties(header.properties or "")
        msg = MessageExtBrokerInner(topic=topic, queue_id=queue_id)
        msg.body = request.body or b""
        msg.flag = header.flag or 0
        msg.properties = props
        msg.properties_string = header.properties or ""
        msg.born_timestamp = header.born_timestamp or 0
        msg.born_host = channel.remote_address
        msg.store_host = broker.broker_addr
        msg.reconsume_times = header.reconsume_times or 0
        if tracer.enabled:
            tracer.emit(C, "3", topic=topic, queue_id=queue_id, body_bytes=len(msg.body),
                        correlation_id=props.get(mc.PROPERTY_CORRELATION_ID),
                        text=f"reply for {topic} queue {queue_id} ({len(msg.body)} B body)")  # fmt: skip

        def finish(push_ok: bool, remark: str) -> None:
            response = self._answer(request, msg, queue_id, push_ok, remark)
            response.opaque = request.opaque
            response.mark_response_type()
            broker.ctx.send_response(channel, response)

        # step 4: push to the requester (no requester to push to: answered at once)
        failed = self._push_reply_message(channel, header, msg, finish)
        if failed is not None:
            return self._answer(request, msg, queue_id, False, failed)
        return None

    # -- step 4 ----------------------------------------------------------------------------------
    def _push_reply_message(self, channel, header, msg, finish) -> str | None:
        """Mirrors ``ReplyMessageProcessor#pushReplyMessage``: None once the push is on its
        way (``finish`` runs with its outcome), else the remark of why there is none."""
        broker = self.broker
        tracer = broker.tracer
        sender_id = msg.properties.get(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT)
        if sender_id is None:
            remark = f"reply message properties[{mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT}] is null"
            self._emit_push(False, None, remark)
            return remark
        target = broker.producer_manager.find_channel(sender_id)
        if target is None:
            remark = f"push reply message fail, channel of <{sender_id}> not found."
            self._emit_push(False, sender_id, remark)
            return remark
        # Java reads the clock for storeTimestamp first (L162), for PUSH_REPLY_TIME after it
        # (L184): on a wall clock the push time is never before the store time
        store_timestamp = broker.ctx.now_ms
        props = dict(msg.properties)
        props[mc.PROPERTY_PUSH_REPLY_TIME] = str(broker.ctx.now_ms)
        push_header = ReplyMessageRequestHeader(
            producer_group=header.producer_group, topic=header.topic,
            default_topic=header.default_topic,
            default_topic_queue_nums=header.default_topic_queue_nums, queue_id=header.queue_id,
            sys_flag=header.sys_flag, born_timestamp=header.born_timestamp, flag=header.flag,
            properties=message_properties_to_string(props),
            reconsume_times=header.reconsume_times, unit_mode=header.unit_mode,
            born_host=inet_socket_address_string(channel.remote_address),
            store_host=inet_socket_address_string(broker.broker_addr),
            store_timestamp=store_timestamp,
        )  # fmt: skip
        push = RemotingCommand.create_request(
            RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, push_header.to_ext_fields(), body=msg.body
        )
        if tracer.enabled:
            tracer.emit(C, "4", client_id=sender_id, to=target.remote_address,
                        text=f"PUSH_REPLY_MESSAGE_TO_CLIENT to {sender_id} ({target.remote_address})")  # fmt: skip

        def pushed(response: RemotingCommand | None, error: Exception | None) -> None:
            ok = error is None and response is not None and response.code == ResponseCode.SUCCESS
            remark = "" if ok else f"push reply message to {sender_id}fail."
            self._emit_push(ok, sender_id, remark or None, error=error,
                            code=None if response is None else response.code)  # fmt: skip
            finish(ok, remark)

        broker.ctx.invoke_channel(target, push, CALL_CLIENT_TIMEOUT_MILLIS, pushed)
        return None

    def _emit_push(self, ok: bool, sender_id, remark, *, error=None, code=None) -> None:
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(
                C, "5", pushed=ok, client_id=sender_id, remark=remark, client_code=code,
                error=None if error is None else str(error),
                text=f"pushed to {sender_id}" if ok else f"not pushed: {remark}",
            )  # fmt: skip

    # -- steps 5 and 6 -----------------------------------------------------------------------------
    def _answer(self, request, msg, queue_id, push_ok: bool, remark: str) -> RemotingCommand:
        """``handlePushReplyResult`` then (with storeReplyMessageEnable) ``putMessage`` +
        ``handlePutMessageResult``."""
        broker = self.broker
        cfg = broker.broker_config
        ext = {
            mc.PROPERTY_MSG_REGION: cfg.region_id,
            mc.PROPERTY_TRACE_SWITCH: "true" if cfg.trace_on else "false",
        }
        # step 5: the push decides the code
        if push_ok:
            code, text = ResponseCode.SUCCESS, None
            ext.update(msgId="0", queueId=str(queue_id), queueOffset="0")
        else:
            code, text = ResponseCode.SYSTEM_ERROR, remark
        # step 6: store the reply too
        if cfg.store_reply_message_enable:
            result = broker.put_message(msg)
            stored = result is not None and result.put_message_status in _PUT_OK
            if stored:
                amr = result.append_message_result
                ext.update(msgId=amr.msg_id, queueId=str(queue_id),
                           queueOffset=str(amr.logics_offset))  # fmt: skip
            if broker.tracer.enabled:
                status = None if result is None else result.put_message_status.name
                broker.tracer.emit(
                    C, "6", status=status, stored=stored, queue_id=queue_id,
                    queue_offset=ext.get("queueOffset"), msg_id=ext.get("msgId"),
                    text=f"stored in {msg.topic} queue {queue_id} at offset {ext['queueOffset']}"
                    if stored else f"not stored: {status}",
                )  # fmt: skip
        return RemotingCommand.create_response(code, text, ext_fields=ext)
