"""What a client answers when a broker asks it something.

Mirrors the parts of ``ClientRemotingProcessor`` (client/impl, RocketMQ 4.9.3) that answer:
PUSH_REPLY_MESSAGE_TO_CLIENT (326, ``receiveReplyMessage``: a reply to this client's
``request()``), GET_CONSUMER_RUNNING_INFO (307, ``getConsumerRunningInfo`` →
``MQClientInstance#consumerRunningInfo`` → ``DefaultMQPushConsumerImpl#consumerRunningInfo``),
CONSUME_MESSAGE_DIRECTLY (309, ``consumeMessageDirectly`` →
``ConsumeMessageConcurrentlyService#consumeMessageDirectly``) and
GET_CONSUMER_STATUS_FROM_CLIENT (221, ``getConsumeStatus`` →
``MQClientInstance#getConsumerStatus``). The oneway ones (NOTIFY_CONSUMER_IDS_CHANGED,
RESET_CONSUMER_CLIENT_OFFSET) stay in ``MQClientInstance#process_request``.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from mqlab.common import message_const as mc
from mqlab.common.filter_api import java_string_hash
from mqlab.common.java_hash_map import hash_map_order
from mqlab.common.message import MessageExt, MessageQueue
from mqlab.common.message_decoder import decodes, string_to_message_properties
from mqlab.common.sysflag import MessageSysFlag
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import dumps
from mqlab.remoting.headers import (
    ConsumeMessageDirectlyResultRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumerStatusRequestHeader,
    ReplyMessageRequestHeader,
)
from mqlab.runtime.context import Channel

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance

__all__ = ["ClientRemotingProcessor", "CLIENT_VERSION_DESC", "consumer_running_info"]

C = "ClientRemotingProcessor"
#: ``MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION)`` of a 4.9.3 client.
CLIENT_VERSION_DESC = "V4_9_3"
#: ``ConsumerRunningInfo.PROP_*`` keys.
PROP_NAMESERVER_ADDR = "PROP_NAMESERVER_ADDR"
PROP_THREADPOOL_CORE_SIZE = "PROP_THREADPOOL_CORE_SIZE"
PROP_CONSUME_ORDERLY = "PROP_CONSUMEORDERLY"
PROP_CONSUME_TYPE = "PROP_CONSUME_TYPE"
PROP_CLIENT_VERSION = "PROP_CLIENT_VERSION"
PROP_CONSUMER_START_TIMESTAMP = "PROP_CONSUMER_START_TIMESTAMP"


class ClientRemotingProcessor:
    """The answering half of ``ClientRemotingProcessor#processRequest``."""

    CODES = frozenset({
        RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT,
        RequestCode.GET_CONSUMER_RUNNING_INFO,
        RequestCode.CONSUME_MESSAGE_DIRECTLY,
        RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT,
    })  # fmt: skip

    def __init__(self, instance: MQClientInstance) -> None:
        self.instance = instance

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        code = request.code
        if code == RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT:
            return self.receive_reply_message(channel, request)
        if code == RequestCode.GET_CONSUMER_RUNNING_INFO:
            return self.get_consumer_running_info(request)
        if code == RequestCode.CONSUME_MESSAGE_DIRECTLY:
            return self.consume_message_directly(request)
        return self.get_consume_status(request)

    # -- 326 -------------------------------------------------------------------------------------
    def receive_reply_message(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``#receiveReplyMessage`` + ``#processReplyMessage``: the pushed reply as
        a MessageExt (body inflated when COMPRESSED, ARRIVE_TIME added), handed to the
        request future of its CORRELATION_ID. SUCCESS even when none matches (Java logs)."""
        from mqlab.client.producer.request_response import holder_of

        inst = self.instance
        h = ReplyMessageRequestHeader.from_ext_fields(request.ext_fields)
        body = request.body or b""
        if (h.sys_flag or 0) & MessageSysFlag.COMPRESSED_FLAG:
            try:
                body = zlib.decompress(body)
            except zlib.error:
                pass  # Java logs "err when uncompress constant" and keeps the bytes
        msg = MessageExt(
            topic=h.topic or "", body=body, flag=h.flag or 0, queue_id=h.queue_id or 0,
            store_timestamp=h.store_timestamp or 0,
            born_host=(h.born_host or "").lstrip("/") or "127.0.0.1:0",
            store_host=(h.store_host or "").lstrip("/") or "127.0.0.1:0",
            born_timestamp=h.born_timestamp or 0, reconsume_times=h.reconsume_times or 0,
            properties=string_to_message_properties(h.properties),
        )  # fmt: skip
        msg.properties[mc.PROPERTY_REPLY_MESSAGE_ARRIVE_TIME] = str(inst.ctx.now_ms)
        holder_of(inst).process_reply_message(msg)
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})

    # -- 307 -------------------------------------------------------------------------------------
    def get_consumer_running_info(self, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``#getConsumerRunningInfo``: the group's ConsumerRunningInfo, or
        SYSTEM_ERROR "The Consumer Group <g> not exist in this consumer"."""
        h = GetConsumerRunningInfoRequestHeader.from_ext_fields(request.ext_fields)
        info = consumer_running_info(self.instance, h.consumer_group)
        if info is None:
            return _err(f"The Consumer Group <{h.consumer_group}> not exist in this consumer")
        if h.jstack_enable:
            # UtilAll.jstack of every thread: mqlab's client runs on the driver's one thread.
            info["jstack"] = f'"{self.instance.name}" (mqlab driver task, no JVM threads)\n'
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, None, ext_fields={}, body=dumps(_sorted(info)).encode()
        )

    # -- 309 -------------------------------------------------------------------------------------
    def consume_message_directly(self, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``#consumeMessageDirectly`` → ``MQClientInstance#consumeMessageDirectly``
        → ``ConsumeMessageConcurrentlyService#consumeMessageDirectly``: the stored message
        in the body goes once through the group's listener (no offset, no retry); the
        answer is a ConsumeMessageDirectlyResult (order false, autoCommit true,
        consumeResult CR_SUCCESS / CR_LATER / CR_RETURN_NULL / CR_THROW_EXCEPTION)."""
        from mqlab.client.consumer.listener import (
            ConsumeConcurrentlyContext,
            ConsumeConcurrentlyStatus,
            ConsumeReturnType,
            call_listener,
        )

        h = ConsumeMessageDirectlyResultRequestHeader.from_ext_fields(request.ext_fields)
        impl = self.instance.consumer_table.get(h.consumer_group)
        service = getattr(impl, "consume_message_service", None)
        if impl is None or service is None:
            return _err(f"The Consumer Group <{h.consumer_group}> not exist in this consumer")
        msgs = decodes(request.body or b"")
        msg = msgs[0]
        mq = MessageQueue(msg.topic, h.broker_name or "", msg.queue_id)
        context = ConsumeConcurrentlyContext(mq)
        impl.reset_retry_and_namespace([msg], h.consumer_group)
        begin = self.instance.ctx.now_ms
        outcome = call_listener(service.message_listener, [msg], context,
                                orderly=bool(impl.consume_orderly))  # fmt: skip
        result: dict[str, Any] = {"autoCommit": True, "order": False}
        if outcome.return_type is ConsumeReturnType.EXCEPTION:
            result["consumeResult"] = "CR_THROW_EXCEPTION"
            result["remark"] = outcome.error
        elif outcome.return_type is ConsumeReturnType.RETURNNULL:
            result["consumeResult"] = "CR_RETURN_NULL"
        elif outcome.status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS:
            result["consumeResult"] = "CR_SUCCESS"
        else:
            result["consumeResult"] = "CR_LATER"
        result["spentTimeMills"] = self.instance.ctx.now_ms - begin
        tracer = self.instance.tracer
        if tracer.enabled:
            tracer.emit(C + ".consumeMessageDirectly", "consume", group=h.consumer_group,
                        msg_id=msg.msg_id, result=result["consumeResult"],
                        text=f"{h.consumer_group} consumed {msg.msg_id} directly: "
                        f"{result['consumeResult']}")  # fmt: skip
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, None, ext_fields={}, body=dumps(_sorted(result)).encode()
        )

    # -- 221 -------------------------------------------------------------------------------------
    def get_consume_status(self, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``#getConsumeStatus`` → ``MQClientInstance#getConsumerStatus``: the
        offset store's table for the topic (empty for an unknown group)."""
        h = GetConsumerStatusRequestHeader.from_ext_fields(request.ext_fields)
        impl = self.instance.consumer_table.get(h.group)
        store = getattr(impl, "offset_store", None)
        table = store.clone_offset_table(h.topic) if store is not None else {}
        body = {"consumerTable": {}, "messageQueueTable": _mq_map(dict(table))}
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, None, ext_fields={}, body=dumps(body).encode()
        )


def consumer_running_info(instance: MQClientInstance, group: str | None) -> dict | None:
    """``MQClientInstance#consumerRunningInfo`` of a push consumer, as its JSON bean.

    ``DefaultMQPushConsumerImpl#consumerRunningInfo``: ``properties`` (the consumer's
    settings, camelCase, plus PROP_CONSUMEORDERLY, PROP_THREADPOOL_CORE_SIZE,
    PROP_CONSUMER_START_TIMESTAMP, then the instance's PROP_NAMESERVER_ADDR,
    PROP_CONSUME_TYPE, PROP_CLIENT_VERSION), ``subscriptionSet`` (sorted by topic),
    ``mqTable`` (a ProcessQueueInfo per held queue, sorted), ``statusTable`` (a
    ConsumeStatus per topic; mqlab keeps no ConsumerStatsManager, so its RT and TPS read 0).
    """
    impl = instance.consumer_table.get(group)
    if impl is None or not hasattr(impl, "rebalance_impl"):
        return None
    dpc = getattr(impl, "default_mq_push_consumer", None)
    props: dict[str, str] = {}
    if dpc is not None:
        for name, value in sorted(vars(dpc).items()):
            if isinstance(value, bool):
                props[_camel(name)] = "true" if value else "false"
            elif isinstance(value, int | str):
                props[_camel(name)] = str(value)
    service = getattr(impl, "consume_message_service", None)
    pool = getattr(service, "consume_executor", None)
    core = getattr(pool, "core_pool_size", None) or getattr(dpc, "consume_thread_min", 20)
    props[PROP_CONSUME_ORDERLY] = "true" if impl.consume_orderly else "false"
    props[PROP_THREADPOOL_CORE_SIZE] = str(core)
    props[PROP_CONSUMER_START_TIMESTAMP] = str(getattr(impl, "consumer_start_timestamp", 0))
    ns = instance.client_config.namesrv_addr or ""
    props[PROP_NAMESERVER_ADDR] = "".join(f"{a};" for a in ns.split(";") if a)
    props[PROP_CONSUME_TYPE] = impl.consume_type()
    props[PROP_CLIENT_VERSION] = CLIENT_VERSION_DESC
    subs = sorted(impl.subscriptions(), key=lambda sd: (sd.topic, sd.sub_string or ""))
    mq_table: dict[MessageQueue, dict] = {}
    store = impl.offset_store
    for mq, pq in sorted(impl.rebalance_impl.process_queue_table.items()):
        commit = store.read_offset_from_memory(mq) if store is not None else -1
        mq_table[mq] = _process_queue_info(pq, commit)
    status = {
        sd.topic: {"consumeFailedMsgs": 0, "consumeFailedTPS": 0.0, "consumeOKTPS": 0.0,
                   "consumeRT": 0.0, "pullRT": 0.0, "pullTPS": 0.0}
        for sd in subs
    }  # fmt: skip
    return {
        "mqTable": mq_table,
        "properties": props,
        "statusTable": status,
        "subscriptionSet": [sd.to_json_dict() for sd in subs],
    }


def _process_queue_info(pq: Any, commit_offset: int) -> dict[str, Any]:
    """``ProcessQueue#fillProcessQueueInfo`` (+ the commit offset), fastjson field order."""
    tree = pq.msg_tree_map
    orderly = pq.consuming_msg_orderly_tree_map
    return {
        "cachedMsgCount": len(tree),
        "cachedMsgMaxOffset": tree.last_key() if tree else 0,
        "cachedMsgMinOffset": tree.first_key() if tree else 0,
        "cachedMsgSizeInMiB": pq.msg_size // (1024 * 1024),
        "commitOffset": commit_offset,
        "droped": pq.dropped,
        "lastConsumeTimestamp": pq.last_consume_timestamp,
        "lastLockTimestamp": pq.last_lock_timestamp,
        "lastPullTimestamp": pq.last_pull_timestamp,
        "locked": pq.locked,
        "transactionMsgCount": len(orderly),
        "transactionMsgMaxOffset": orderly.last_key() if orderly else 0,
        "transactionMsgMinOffset": orderly.first_key() if orderly else 0,
        "tryUnlockTimes": pq.try_unlock_times,
    }


def _mq_map(table: dict[MessageQueue, int]) -> dict[MessageQueue, int]:
    """A ``HashMap<MessageQueue, Long>`` in Java's iteration order (``MessageQueue#hashCode``:
    31-based over brokerName, queueId, topic)."""

    def mq_hash(mq: MessageQueue) -> int:
        h = 31 + java_string_hash(mq.broker_name)
        h = 31 * h + mq.queue_id
        return (31 * h + java_string_hash(mq.topic)) & 0xFFFF_FFFF

    return {mq: table[mq] for mq in hash_map_order(table, hash_code=mq_hash)}


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _sorted(bean: dict[str, Any]) -> dict[str, Any]:
    """fastjson writes a bean's fields in name order."""
    return {k: bean[k] for k in sorted(bean)}


def _err(remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, remark, ext_fields={})
