"""Queue offsets, orderly locks, topic admin and message lookup by offset.

Mirrors the parts of ``AdminBrokerProcessor`` and ``QueryMessageProcessor``
(broker/processor, RocketMQ 4.9.3) that clients use: GET_MAX_OFFSET, GET_MIN_OFFSET,
SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME, LOCK_BATCH_MQ /
UNLOCK_BATCH_MQ, UPDATE_AND_CREATE_TOPIC, DELETE_TOPIC_IN_BROKER, GET_ALL_TOPIC_CONFIG,
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET,
VIEW_MESSAGE_BY_ID, UPDATE_BROKER_CONFIG (25: settings changed at runtime, as
``mqadmin updateBrokerConfig`` does); facts §2.1, §2.4, §10.16, §11 AdminBrokerProcessorTest.

Everything else AdminBrokerProcessor answers in Java is left out (it teaches nothing
about the seeds' mechanisms) and gets REQUEST_CODE_NOT_SUPPORTED, as an unknown code
does: among others GET_BROKER_CONFIG (26), GET_BROKER_RUNTIME_INFO (28), topic and
consume stats, ACL,
the message index (QUERY_MESSAGE by key) and the consumer-connection queries.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING

from mqlab.broker.config import parse_properties
from mqlab.common.mix_all import is_lmq
from mqlab.common.topic_config import TopicConfig, TopicFilterType
from mqlab.common.topic_validator import TopicValidator
from mqlab.remoting.bodies import (
    LockBatchRequestBody,
    LockBatchResponseBody,
    UnlockBatchRequestBody,
)
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.fastjson import dumps, loads_json_body
from mqlab.remoting.headers import (
    CreateTopicRequestHeader,
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    SearchOffsetRequestHeader,
    ViewMessageRequestHeader,
)
from mqlab.runtime.context import Channel

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["AdminBrokerProcessor", "ADMIN_CODES"]

C = "AdminBrokerProcessor"

ADMIN_CODES = (
    RequestCode.GET_MAX_OFFSET,
    RequestCode.GET_MIN_OFFSET,
    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
    RequestCode.GET_EARLIEST_MSG_STORETIME,
    RequestCode.LOCK_BATCH_MQ,
    RequestCode.UNLOCK_BATCH_MQ,
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    RequestCode.DELETE_TOPIC_IN_BROKER,
    RequestCode.GET_ALL_TOPIC_CONFIG,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    RequestCode.GET_ALL_CONSUMER_OFFSET,
    RequestCode.GET_ALL_DELAY_OFFSET,
    RequestCode.VIEW_MESSAGE_BY_ID,
    RequestCode.UPDATE_BROKER_CONFIG,
)


#: ``RemotingCommand#createResponseCommand(Class)``'s starting remark.
NOT_SET_REMARK = "not set any response code"


def _ok(ext: dict[str, str] | None = None, body: bytes | None = None) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, None, ext_fields=ext or {}, body=body
    )


def _properties_to_object(props: dict[str, str], obj: object) -> None:
    """``MixAll#properties2Object``: set each field whose Java name is a key; int and
    str fields parse as Java's setters would, booleans by ``Boolean.parseBoolean``;
    other types and unparsable values are left alone (Java swallows the exception)."""
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        key = _JAVA_NAMES.get(f.name) or _camel(f.name)
        if key not in props:
            continue
        raw, current = props[key], getattr(obj, f.name)
        if isinstance(current, bool):
            setattr(obj, f.name, raw.lower() == "true")
        elif isinstance(current, int) and not isinstance(current, enum.Enum):
            try:
                setattr(obj, f.name, int(raw, 10))
            except ValueError:
                continue
        elif isinstance(current, str) and not isinstance(current, enum.Enum):
            setattr(obj, f.name, raw)
        elif current is None and "str" in str(f.type):
            setattr(obj, f.name, raw)


_JAVA_NAMES = {
    "broker_ip1": "brokerIP1",
    "broker_ip2": "brokerIP2",
    "name_server_addr": "namesrvAddr",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _err(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark, ext_fields={})


class AdminBrokerProcessor:
    """The broker's default processor (Java registers AdminBrokerProcessor as the default)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        code = request.code
        handler = {
            RequestCode.GET_MAX_OFFSET: self.get_max_offset,
            RequestCode.GET_MIN_OFFSET: self.get_min_offset,
            RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: self.search_offset_by_timestamp,
            RequestCode.GET_EARLIEST_MSG_STORETIME: self.get_earliest_msg_storetime,
            RequestCode.LOCK_BATCH_MQ: self.lock_batch_mq,
            RequestCode.UNLOCK_BATCH_MQ: self.unlock_batch_mq,
            RequestCode.UPDATE_AND_CREATE_TOPIC: self.update_and_create_topic,
            RequestCode.DELETE_TOPIC_IN_BROKER: self.delete_topic,
            RequestCode.GET_ALL_TOPIC_CONFIG: self.get_all_topic_config,
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: self.update_and_create_subscription_group,
            RequestCode.GET_ALL_CONSUMER_OFFSET: self.get_all_consumer_offset,
            RequestCode.GET_ALL_DELAY_OFFSET: self.get_all_delay_offset,
            RequestCode.VIEW_MESSAGE_BY_ID: self.view_message_by_id,
            RequestCode.UPDATE_BROKER_CONFIG: self.update_broker_config,
        }.get(code)
        if handler is None:
            return _err(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {code} not supported"
            )
        try:
            return handler(channel, request)
        except RemotingCommandException as e:
            return _err(ResponseCode.SYSTEM_ERROR, str(e))

    # -- broker config ---------------------------------------------------------------------------
    def update_broker_config(self, channel, request):
        """``AdminBrokerProcessor#updateBrokerConfig``: the body is a ``Properties`` text set
        onto the broker's config objects (``Configuration#update``, each through
        ``MixAll#properties2Object``: unknown keys and values that do not parse are
        skipped; a boolean is ``Boolean.parseBoolean``). A new ``brokerPermission`` bumps
        the topic data version and re-registers with the name server at once.

        Not modelled: ``Configuration#persist`` (the broker.properties file is not rewritten).
        """
        body = request.body
        if body:
            props = parse_properties(bytes(body).decode("utf-8", "replace"))
            for target in (self.broker.broker_config, self.broker.message_store_config):
                _properties_to_object(props, target)
            if "brokerPermission" in props:
                self.broker.topic_config_manager.data_version.next_version(self.broker.ctx.now_ms)
                self.broker.register_broker_all(False)
        return _ok()

    # -- offsets ---------------------------------------------------------------------------------
    def get_max_offset(self, channel, request):
        h = GetMaxOffsetRequestHeader.from_ext_fields(request.ext_fields)
        off = self.broker.message_store.get_max_offset_in_queue(h.topic, h.queue_id)
        return _ok({"offset": str(off)})

    def get_min_offset(self, channel, request):
        h = GetMinOffsetRequestHeader.from_ext_fields(request.ext_fields)
        off = self.broker.message_store.get_min_offset_in_queue(h.topic, h.queue_id)
        return _ok({"offset": str(off)})

    def search_offset_by_timestamp(self, channel, request):
        h = SearchOffsetRequestHeader.from_ext_fields(request.ext_fields)
        off = self.broker.message_store.get_offset_in_queue_by_time(
            h.topic, h.queue_id, h.timestamp
        )
        return _ok({"offset": str(off)})

    def get_earliest_msg_storetime(self, channel, request):
        h = GetEarliestMsgStoretimeRequestHeader.from_ext_fields(request.ext_fields)
        ts = self.broker.message_store.get_earliest_message_time(h.topic, h.queue_id)
        return _ok({"timestamp": str(ts)})

    # -- orderly locks ------------------------------------------------------------------------------
    def lock_batch_mq(self, channel, request):
        """``lockBatchMQ``: the subset of queues now locked by (or granted to) the caller."""
        body = LockBatchRequestBody.decode(request.body)
        now = self.broker.ctx.now_ms
        locked = self.broker.rebalance_lock_manager.try_lock_batch(
            body.consumer_group, list(body.mq_set), body.client_id, now
        )
        ok = tuple(mq for mq in body.mq_set if mq in locked)
        if self.broker.tracer.enabled:
            self.broker.tracer.emit(
                "RebalanceLockManager.tryLockBatch", "lock", group=body.consumer_group,
                client_id=body.client_id, asked=[str(m) for m in body.mq_set],
                locked=[str(m) for m in ok],
                text=f"{body.client_id} locks {len(ok)}/{len(body.mq_set)} queue(s) of {body.consumer_group}",
            )  # fmt: skip
        return _ok(body=LockBatchResponseBody(lock_ok_mq_set=ok).encode())

    def unlock_batch_mq(self, channel, request):
        body = UnlockBatchRequestBody.decode(request.body)
        self.broker.rebalance_lock_manager.unlock_batch(
            body.consumer_group, list(body.mq_set), body.client_id
        )
        return _ok()

    # -- topics and groups --------------------------------------------------------------------------
    def update_and_create_topic(self, channel, request):
        """``updateAndCreateTopic``: validate, refuse system topics, store, re-register.

        Mirrors AdminBrokerProcessor#updateAndCreateTopic (broker/processor, RocketMQ
        4.9.3). The request's ``order`` is not read: Java builds ``new TopicConfig(topic)``
        (order false) and sets only queues, filter type, perm and sys flag; a topic is
        ordered when the name server's ORDER_TOPIC_CONFIG says so, applied from the
        registration reply (``updateOrderTopicConfig``).
        """
        h = CreateTopicRequestHeader.from_ext_fields(request.ext_fields)
        # CreateTopicRequestHeader#checkFields: TopicFilterType.valueOf throws (→ SYSTEM_ERROR)
        if h.topic_filter_type not in TopicFilterType.__members__:
            return _err(
                ResponseCode.SYSTEM_ERROR,
                f"topicFilterType = [{h.topic_filter_type}] value invalid",
            )
        topic = h.topic or ""
        ok, code, remark = TopicValidator.validate_topic(topic)
        if not ok:
            return _err(code, remark or "")
        if TopicValidator.is_system_topic(topic, self.broker.system_topic_extras()):
            return _err(
                ResponseCode.SYSTEM_ERROR, TopicValidator.system_topic_conflict_remark(topic)
            )
        tc = TopicConfig(
            topic_name=topic,
            read_queue_nums=h.read_queue_nums,
            write_queue_nums=h.write_queue_nums,
            perm=h.perm,
            topic_filter_type=h.topic_filter_type,
            topic_sys_flag=h.topic_sys_flag or 0,
        )
        self.broker.topic_config_manager.update_topic_config(tc, self.broker.ctx.now_ms)
        # Java: registerIncrementBrokerData (this topic only); mqlab registers them all.
        self.broker.register_broker_all()
        # The response began as createResponseCommand(null) (SYSTEM_ERROR, "not set any
        # response code") and Java sets only the code on success: the remark stays.
        return RemotingCommand.create_response(ResponseCode.SUCCESS, NOT_SET_REMARK, ext_fields={})

    def delete_topic(self, channel, request):
        """``deleteTopic``: validate, refuse system topics, drop the config and the queues.

        Mirrors AdminBrokerProcessor#deleteTopic (broker/processor, RocketMQ 4.9.3): the
        store's ``cleanUnusedTopic`` destroys every consume queue whose topic is no longer
        configured (a re-created topic starts at offset 0); there is no re-registration,
        so the name server keeps the route until the next ``registerBrokerAll``. A
        missing ``topic`` is not refused up front: Java's header decoding only logs it,
        and ``validateTopic(null)`` answers "blank".
        """
        topic = request.ext("topic")
        ok, code, remark = TopicValidator.validate_topic(topic)
        if not ok:
            return _err(code, remark or "")
        if TopicValidator.is_system_topic(topic, self.broker.system_topic_extras()):
            return _err(
                ResponseCode.SYSTEM_ERROR, TopicValidator.system_topic_conflict_remark(topic)
            )
        store = self.broker.message_store
        if is_lmq(topic):
            store.clean_unused_lmq_topic(topic)
            return _ok()
        tcm = self.broker.topic_config_manager
        tcm.delete_topic_config(topic, self.broker.ctx.now_ms)
        store.clean_unused_topic(tcm.topic_config_table.keys())
        return _ok()

    def get_all_topic_config(self, channel, request):
        tcm = self.broker.topic_config_manager
        body = {
            "dataVersion": tcm.data_version.to_json_dict(),
            "topicConfigTable": {k: v.to_json_dict() for k, v in tcm.topic_config_table.items()},
        }
        return _ok(body=dumps(body).encode())

    def update_and_create_subscription_group(self, channel, request):
        from mqlab.broker.config import SubscriptionGroupConfig

        try:
            cfg = SubscriptionGroupConfig.from_json_dict(loads_json_body(request.body))
        except (ValueError, KeyError, TypeError) as e:
            return _err(ResponseCode.SYSTEM_ERROR, f"bad SubscriptionGroupConfig body: {e}")
        self.broker.subscription_group_manager.update_subscription_group_config(
            cfg, self.broker.ctx.now_ms
        )
        return _ok()

    def get_all_consumer_offset(self, channel, request):
        table = self.broker.consumer_offset_manager.offset_table
        return _ok(body=dumps({"offsetTable": table}).encode())

    def get_all_delay_offset(self, channel, request):
        sms = self.broker.message_store.schedule_message_service
        return _ok(body=dumps({"offsetTable": dict(sms.offset_table)}).encode())

    # -- lookup ------------------------------------------------------------------------------------
    def view_message_by_id(self, channel, request):
        """QueryMessageProcessor#viewMessageById: the raw stored entry at a commit-log offset."""
        h = ViewMessageRequestHeader.from_ext_fields(request.ext_fields)
        raw = self.broker.message_store.select_one_message_by_offset(h.offset)
        if raw is None:
            return _err(
                ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {h.offset}"
            )
        return _ok(body=bytes(raw))
