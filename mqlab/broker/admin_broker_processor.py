"""Queue offsets, orderly locks, topic admin, broker config, runtime info and stats.

Mirrors the parts of ``AdminBrokerProcessor`` (broker/processor, RocketMQ 4.9.3) that
clients and ``mqadmin`` use (the message lookups QUERY_MESSAGE and VIEW_MESSAGE_BY_ID are
``query_message_processor``'s): GET_MAX_OFFSET,
GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME, LOCK_BATCH_MQ /
UNLOCK_BATCH_MQ, UPDATE_AND_CREATE_TOPIC, DELETE_TOPIC_IN_BROKER, GET_ALL_TOPIC_CONFIG,
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET;
and for ``mqadmin``: UPDATE_BROKER_CONFIG (25) and GET_BROKER_CONFIG
(26) over ``broker_configuration.BrokerConfiguration`` (Java's ``Configuration``, its text in
a JDK 17 ``Properties`` order), GET_BROKER_RUNTIME_INFO (28, ``prepareRuntimeInfo``: which
values are counted and which are modelled constants is in its docstring),
GET_TOPIC_STATS_INFO (202, ``topicStatus``), GET_CONSUMER_CONNECTION_LIST (203) and
GET_CONSUME_STATS (208, ``consumerProgress`` / ``consumerConnection``),
GET_PRODUCER_CONNECTION_LIST (204, ``producerConnection``), INVOKE_BROKER_TO_RESET_OFFSET
(222, ``resetOffsetByTime``: ``Broker2Client#resetOffset``), QUERY_TOPIC_CONSUME_BY_WHO
(300, the message track of ``queryMsgById``); GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201,
``getConsumerConfig``, ``exportMetadata``), DELETE_SUBSCRIPTIONGROUP (207,
``deleteSubGroup``), REGISTER_FILTER_SERVER (301, ``filter_server_manager``),
QUERY_CONSUME_TIME_SPAN (303), GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305, ``exportMetadata``),
CLEAN_EXPIRED_CONSUMEQUEUE (306, ``cleanExpiredCQ``), QUERY_CORRECTION_OFFSET (308),
CLONE_GROUP_OFFSET (314, ``cloneGroupOffset``), CLEAN_UNUSED_TOPIC (316,
``cleanUnusedTopic``), QUERY_CONSUME_QUEUE (321, ``queryCq``) and the ACL codes 50-54 as a
broker with ACL off answers them. Bodies are fastjson's: bean fields sorted,
``HashMap<MessageQueue, ...>`` tables in Java's iteration order.

A code AdminBrokerProcessor does not dispatch gets REQUEST_CODE_NOT_SUPPORTED with Java's
remark.
"""

from __future__ import annotations

import math
import os
import shutil
from typing import TYPE_CHECKING

from mqlab.acl.acl_utils import JavaException
from mqlab.acl.plain_permission_manager import PlainAccessConfig
from mqlab.common.bloom_filter import BloomFilter
from mqlab.common.filter_api import java_string_hash
from mqlab.common.java_hash_map import hash_map_order
from mqlab.common.message import MessageQueue
from mqlab.common.mix_all import get_reply_topic, is_lmq
from mqlab.common.properties import string_to_properties
from mqlab.common.topic_config import TopicConfig, TopicFilterType
from mqlab.common.topic_validator import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    RMQ_SYS_BENCHMARK_TOPIC,
    RMQ_SYS_OFFSET_MOVED_EVENT,
    RMQ_SYS_SELF_TEST_TOPIC,
    RMQ_SYS_TRACE_TOPIC,
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    TopicValidator,
)
from mqlab.common.topic_validator import RMQ_SYS_SCHEDULE_TOPIC as SCHEDULE_TOPIC
from mqlab.common.util_all import format_date_yyyy_mm_dd_hh_mm_ss_sss, is_blank
from mqlab.remoting.bodies import (
    LockBatchRequestBody,
    LockBatchResponseBody,
    UnlockBatchRequestBody,
)
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import CURRENT_VERSION, RemotingCommand, RemotingCommandException
from mqlab.remoting.fastjson import dumps, java_double_to_string, loads_json_body
from mqlab.remoting.headers import (
    CreateTopicRequestHeader,
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    SearchOffsetRequestHeader,
)
from mqlab.runtime.context import Channel
from mqlab.store.consume_queue import CQ_STORE_UNIT_SIZE, CQ_UNIT
from mqlab.trace.events import Kind

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
    RequestCode.UPDATE_BROKER_CONFIG,
    RequestCode.GET_BROKER_CONFIG,
    RequestCode.GET_BROKER_RUNTIME_INFO,
    RequestCode.GET_TOPIC_STATS_INFO,
    RequestCode.GET_CONSUMER_CONNECTION_LIST,
    RequestCode.GET_PRODUCER_CONNECTION_LIST,
    RequestCode.GET_CONSUME_STATS,
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
    RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,
    RequestCode.GET_CONSUMER_RUNNING_INFO,
    RequestCode.CONSUME_MESSAGE_DIRECTLY,
    RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS,
    # groups, filter servers, store housekeeping, offsets, consume queues, ACL
    RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
    RequestCode.DELETE_SUBSCRIPTIONGROUP,
    RequestCode.REGISTER_FILTER_SERVER,
    RequestCode.QUERY_CONSUME_TIME_SPAN,
    RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER,
    RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE,
    RequestCode.CLEAN_UNUSED_TOPIC,
    RequestCode.QUERY_CORRECTION_OFFSET,
    RequestCode.CLONE_GROUP_OFFSET,
    RequestCode.QUERY_CONSUME_QUEUE,
    RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
    RequestCode.DELETE_ACL_CONFIG,
    RequestCode.GET_BROKER_CLUSTER_ACL_INFO,
    RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
    RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG,
    # BrokerStatsManager's figures
    RequestCode.VIEW_BROKER_STATS_DATA,
    RequestCode.GET_BROKER_CONSUME_STATS,
)


#: ``TopicValidator.SYSTEM_TOPIC_SET`` as its static initialiser fills it, in that order.
STATIC_SYSTEM_TOPICS = (
    AUTO_CREATE_TOPIC_KEY_TOPIC, SCHEDULE_TOPIC, RMQ_SYS_BENCHMARK_TOPIC,
    RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRACE_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC,
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_SELF_TEST_TOPIC, RMQ_SYS_OFFSET_MOVED_EVENT,
)  # fmt: skip

#: ``RemotingCommand#createResponseCommand(Class)``'s starting remark.
NOT_SET_REMARK = "not set any response code"


def _ok(ext: dict[str, str] | None = None, body: bytes | None = None) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, None, ext_fields=ext or {}, body=body
    )


def _err(code: int, remark: str | None) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark, ext_fields={})


class AdminBrokerProcessor:
    """The broker's default processor (Java registers AdminBrokerProcessor as the default)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """The code's handler's answer; None (52, 54 with ACL off) means no answer."""
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
            RequestCode.UPDATE_BROKER_CONFIG: self.update_broker_config,
            RequestCode.GET_BROKER_CONFIG: self.get_broker_config,
            RequestCode.GET_BROKER_RUNTIME_INFO: self.get_broker_runtime_info,
            RequestCode.GET_TOPIC_STATS_INFO: self.get_topic_stats_info,
            RequestCode.GET_CONSUMER_CONNECTION_LIST: self.get_consumer_connection_list,
            RequestCode.GET_PRODUCER_CONNECTION_LIST: self.get_producer_connection_list,
            RequestCode.GET_CONSUME_STATS: self.get_consume_stats,
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: self.reset_offset,
            RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: self.query_topic_consume_by_who,
            # forwarded to a client (broker2client): answered when the client answers
            RequestCode.GET_CONSUMER_RUNNING_INFO: self.get_consumer_running_info,
            RequestCode.CONSUME_MESSAGE_DIRECTLY: self.consume_message_directly,
            RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: self.get_consumer_status,
            # groups, filter servers, store housekeeping, offsets, consume queues, ACL
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: self.get_all_subscription_group,
            RequestCode.DELETE_SUBSCRIPTIONGROUP: self.delete_subscription_group,
            RequestCode.REGISTER_FILTER_SERVER: self.register_filter_server,
            RequestCode.QUERY_CONSUME_TIME_SPAN: self.query_consume_time_span,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: self.get_system_topic_list_from_broker,
            RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE: self.clean_expired_consume_queue,
            RequestCode.CLEAN_UNUSED_TOPIC: self.clean_unused_topic,
            RequestCode.QUERY_CORRECTION_OFFSET: self.query_correction_offset,
            RequestCode.CLONE_GROUP_OFFSET: self.clone_group_offset,
            RequestCode.QUERY_CONSUME_QUEUE: self.query_consume_queue,
            RequestCode.UPDATE_AND_CREATE_ACL_CONFIG: self.update_and_create_access_config,
            RequestCode.DELETE_ACL_CONFIG: self.delete_access_config,
            RequestCode.GET_BROKER_CLUSTER_ACL_INFO: self.get_broker_acl_config_version,
            RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: self.update_global_white_addrs_config,
            RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG: self.get_broker_cluster_acl_config,
            RequestCode.RESUME_CHECK_HALF_MESSAGE: self.resume_check_half_message,
            # BrokerStatsManager's figures
            RequestCode.VIEW_BROKER_STATS_DATA: self.view_broker_stats_data,
            RequestCode.GET_BROKER_CONSUME_STATS: self.fetch_all_consume_stats_in_broker,
        }.get(code)
        if handler is None:
            return _err(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {code} not supported"
            )
        try:
            return handler(channel, request)
        except RemotingCommandException as e:
            return _err(ResponseCode.SYSTEM_ERROR, str(e))

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
        """``updateAndCreateTopic``: validate, refuse system topics, store, re-register, answer.

        Mirrors AdminBrokerProcessor#updateAndCreateTopic (broker/processor, RocketMQ
        4.9.3). The request's ``order`` is not read: Java builds ``new TopicConfig(topic)``
        (order false) and sets only queues, filter type, perm and sys flag; a topic is
        ordered when the name server's ORDER_TOPIC_CONFIG says so, applied from the
        registration reply (``updateOrderTopicConfig``).

        The answer waits for the registration: BrokerController#registerIncrementBrokerData
        → ``doRegisterBrokerAll(true, false, ...)`` (not oneway) →
        BrokerOuterAPI#registerBrokerAll, which sends REGISTER_BROKER to every name server in
        parallel (``invokeSync`` each) and waits on a CountDownLatch for all of them, at most
        ``registerBrokerTimeoutMills`` (6 000 ms). A name server that fails or times out is
        caught and logged there: the answer is SUCCESS all the same. One-way: nothing is
        answered; a caller whose connection closed meanwhile gets nothing. Not modelled: Java's
        method and registerIncrementBrokerData are ``synchronized``, so a second create waits
        for the first one's registration; here the two registrations overlap.
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
        # The response began as createResponseCommand(null) (SYSTEM_ERROR, "not set any
        # response code") and Java sets only the code on success: the remark stays.
        response = RemotingCommand.create_response(
            ResponseCode.SUCCESS, NOT_SET_REMARK, ext_fields={}
        )
        # Java: registerIncrementBrokerData (this topic only; mqlab registers them all),
        # which waits for the name servers' answers before the response is written: a
        # client that asks the name server for the route after the answer finds the topic.
        state = {"in_call": True, "done": False}

        def registered() -> None:
            state["done"] = True
            if not state["in_call"] and not request.is_oneway and not channel.closed:
                self._answer_later(channel, request, response)

        self.broker.register_broker_all(on_done=registered)
        state["in_call"] = False
        return response if state["done"] else None

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
        if self.broker.broker_config.auto_delete_unused_stats:
            self.broker.broker_stats_manager.on_topic_deleted(topic)
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

    # -- broker config and runtime info ---------------------------------------------------------
    def update_broker_config(self, channel, request):
        """``updateBrokerConfig``: ``key=value`` lines in the body → ``Configuration#update``.

        Mirrors AdminBrokerProcessor#updateBrokerConfig (broker/processor, RocketMQ 4.9.3):
        a body that does not load as properties is SYSTEM_ERROR "string2Properties error";
        no body changes nothing and answers SUCCESS. A ``brokerPermission`` key bumps the
        topic-config data version and re-registers with the name server.
        """
        if request.body is not None:
            props = string_to_properties(bytes(request.body).decode("utf-8", "replace"))
            if props is None:
                return _err(ResponseCode.SYSTEM_ERROR, "string2Properties error")
            now = self.broker.ctx.now_ms
            self.broker.configuration.update(props, now)
            if "brokerPermission" in props:
                self.broker.topic_config_manager.data_version.next_version(now)
                self.broker.register_broker_all(False)
        return _ok()

    def get_broker_config(self, channel, request):
        """``getBrokerConfig``: the properties text of the four config objects + ``version``.

        Mirrors AdminBrokerProcessor#getBrokerConfig; the text and its order are
        ``Configuration#getAllConfigsFormatString``'s (see broker_configuration).
        """
        conf = self.broker.configuration
        content = conf.get_all_configs_format_string()
        return _ok({"version": conf.get_data_version_json()}, content.encode() or None)

    def get_broker_runtime_info(self, channel, request):
        """``getBrokerRuntimeInfo``: ``prepareRuntimeInfo`` as a KVTable body."""
        table = self.prepare_runtime_info_ordered()
        return _ok(body=dumps({"table": table}).encode())

    def prepare_runtime_info(self) -> dict[str, str]:
        """The entries AdminBrokerProcessor#prepareRuntimeInfo fills, in the order Java puts
        them (``prepare_runtime_info_ordered``: the HashMap's iteration order).

        Computed from mqlab's state: the store's put/get counters
        (``putMessageTimesTotal``, ``putMessageSizeTotal``, ``putMessageAverageSize``,
        ``putMessageFailedTimes``, ``msgPutTotalTodayNow``, ``msgGetTotalTodayNow``),
        ``bootTimestamp`` / ``runtime`` on the simulated clock, the commit-log offsets,
        ``dispatchBehindBytes``, ``remainHowManyDataToFlush``, each delay level's
        ``scheduleMessageOffset_<level>``, the earliest message time and the queue
        capacities from ``BrokerConfig``. The disk ratios are the store's simulated
        ``disk_used_ratio`` (mqlab never lets the real disk drive behaviour);
        ``commitLogDirCapacity`` alone shows the real partition of the store directory
        (``File#getTotalSpace`` / ``#getUsableSpace``), for display only.

        Modelled constants, because mqlab has no thread pools and no sampling threads:
        the thread-pool queue sizes and head wait times are 0 (a request is handled as it
        arrives); the TPS figures and the put-latency histogram are what a 4.9.3 broker
        shows in its first 10 s (``putTps`` etc. "  ", ``getTotalTps`` "0.0 0.0 0.0",
        ``putMessageDistributeTime`` "null"); ``*EntireTimeMax`` and
        ``pageCacheLockTimeMills`` are 0 (a simulated put takes no time);
        the yesterday/today-morning totals are 0 (``BrokerStats#record`` runs at
        midnight); ``dispatchMaxBuffer`` is 0 and ``remainTransientStoreBufferNumbs`` is
        ``Integer.MAX_VALUE`` (no transient store pool).
        """
        broker = self.broker
        store = broker.message_store
        cfg = broker.broker_config
        stats = store.store_stats_service
        now = broker.ctx.now_ms
        info: dict[str, str] = {}
        # StoreStatsService#getRuntimeInfo
        total_times = stats.get_put_message_times_total() or 1
        size_total = stats.get_put_message_size_total()
        info["bootTimestamp"] = str(stats.message_store_boot_timestamp)
        info["runtime"] = _format_runtime(now - stats.message_store_boot_timestamp)
        info["putMessageEntireTimeMax"] = "0"
        info["putMessageTimesTotal"] = str(total_times)
        info["putMessageFailedTimes"] = str(stats.put_message_failed_times)
        info["putMessageSizeTotal"] = str(size_total)
        info["putMessageDistributeTime"] = "null"
        info["putMessageAverageSize"] = java_double_to_string(size_total / total_times)
        info["dispatchMaxBuffer"] = "0"
        info["getMessageEntireTimeMax"] = "0"
        info.update(stats.sampled_runtime_info())  # putTps ... getTransferedTps
        # DefaultMessageStore#getRuntimeInfo
        # the store's one simulated disk (DefaultMessageStore.disk_used_ratio)
        cl_path = store.get_store_path_physic()
        cl_ratio = java_double_to_string(store.disk_used_ratio)
        info[f"commitLogDiskRatio_{cl_path}"] = cl_ratio
        info["commitLogDiskRatio"] = cl_ratio
        info["consumeQueueDiskRatio"] = java_double_to_string(store.disk_used_ratio)
        sms = store.schedule_message_service
        for level, delay_offset in sms.offset_table.items():  # buildRunningStats
            max_offset = store.get_max_offset_in_queue(SCHEDULE_TOPIC, level - 1)
            info[f"scheduleMessageOffset_{level}"] = f"{delay_offset},{max_offset}"
        info["commitLogMinOffset"] = str(store.get_min_phy_offset())
        info["commitLogMaxOffset"] = str(store.get_max_phy_offset())
        # AdminBrokerProcessor#prepareRuntimeInfo
        info["brokerVersionDesc"] = "V4_9_3"
        info["brokerVersion"] = str(CURRENT_VERSION)
        info["msgPutTotalYesterdayMorning"] = "0"
        info["msgPutTotalTodayMorning"] = "0"
        info["msgPutTotalTodayNow"] = str(stats.get_put_message_times_total())
        info["msgGetTotalYesterdayMorning"] = "0"
        info["msgGetTotalTodayMorning"] = "0"
        info["msgGetTotalTodayNow"] = str(stats.get_message_transfered_msg_count)
        info["sendThreadPoolQueueSize"] = "0"
        info["sendThreadPoolQueueCapacity"] = str(cfg.send_thread_pool_queue_capacity)
        info["pullThreadPoolQueueSize"] = "0"
        info["pullThreadPoolQueueCapacity"] = str(cfg.pull_thread_pool_queue_capacity)
        info["queryThreadPoolQueueSize"] = "0"
        info["queryThreadPoolQueueCapacity"] = str(cfg.query_thread_pool_queue_capacity)
        info["EndTransactionQueueSize"] = "0"
        info["EndTransactionThreadPoolQueueCapacity"] = str(cfg.end_transaction_pool_queue_capacity)
        info["dispatchBehindBytes"] = str(store.dispatch_behind_bytes())
        info["pageCacheLockTimeMills"] = "0"
        for pool in ("send", "pull", "query"):
            info[f"{pool}ThreadPoolQueueHeadWaitTimeMills"] = "0"
        info["earliestMessageTimeStamp"] = str(self._earliest_message_time())
        info["startAcceptSendRequestTimeStamp"] = str(cfg.start_accept_send_request_time_stamp)
        info["remainTransientStoreBufferNumbs"] = str(2**31 - 1)
        mfq = store.commit_log.mapped_file_queue
        unflushed = mfq.get_max_offset() - mfq.flushed_where
        info["remainHowManyDataToFlush"] = human_readable_byte_count(max(0, unflushed))
        root = store.message_store_config.store_path_root_dir
        if root and os.path.exists(root):
            usage = shutil.disk_usage(root)
            info["commitLogDirCapacity"] = (
                f"Total : {human_readable_byte_count(usage.total)}, "
                f"Free : {human_readable_byte_count(usage.free)}."
            )
        return info

    def prepare_runtime_info_ordered(self) -> dict[str, str]:
        """``prepare_runtime_info`` in a ``HashMap(64)``'s iteration order (the wire's)."""
        info = self.prepare_runtime_info()
        return {k: info[k] for k in hash_map_order(info, initial_capacity=64)}

    def _earliest_message_time(self) -> int:
        """``DefaultMessageStore#getEarliestMessageTime()``: store time of the first
        commit-log entry, -1 if there is none.

        4.9.3 reads it with ``CommitLog#pickupStoreTimestamp(minPhyOffset, maxMessageSize
        * 2)``, whose ``MappedFile#selectMappedBuffer(pos, size)`` returns null unless the
        file holds ``size`` written bytes from ``pos``: so -1 until 8 MiB (by default) are
        written in the first file from the first entry on, whatever is stored (found by
        the conformance row ``connections-stats-and-offsets/runtime_info``).
        """
        store = self.broker.message_store
        min_offset = store.get_min_phy_offset()
        if min_offset < 0 or min_offset >= store.get_max_phy_offset():
            return -1
        size = store.message_store_config.max_message_size * 2
        if store.commit_log.get_message(min_offset, size) is None:
            return -1
        msg = store.look_message_by_offset(min_offset)
        return -1 if msg is None else msg.store_timestamp

    # -- topic and consumer stats ---------------------------------------------------------------
    def _store_time(self, topic: str, queue_id: int, offset: int) -> int:
        """``getMessageStoreTimeStamp``: store time of the message at a queue offset, -1."""
        unit = self.broker.message_store.find_consume_queue(topic, queue_id).get_unit(offset)
        if unit is None:
            return -1
        msg = self.broker.message_store.look_message_by_offset(unit[0], unit[1])
        return -1 if msg is None else msg.store_timestamp

    def _offset_wrapper(self, group: str, topic: str, queue_id: int) -> tuple[MessageQueue, dict]:
        """One queue's ``OffsetWrapper`` as ``getConsumeStats`` and ``fetchAllConsumeStatsInBroker``
        build it: the broker's and the group's offsets (at least 0) and the store time of the
        last consumed message (0 when there is none)."""
        broker = self.broker
        mq = MessageQueue(topic, broker.broker_config.broker_name, queue_id)
        broker_offset = max(0, broker.message_store.get_max_offset_in_queue(topic, queue_id))
        consumer_offset = max(
            0, broker.consumer_offset_manager.query_offset(group, topic, queue_id)
        )
        last = 0
        if consumer_offset - 1 >= 0:
            ts = self._store_time(topic, queue_id, consumer_offset - 1)
            if ts > 0:
                last = ts
        wrapper = {
            "brokerOffset": broker_offset,
            "consumerOffset": consumer_offset,
            "lastTimestamp": last,
        }
        return mq, wrapper

    def get_topic_stats_info(self, channel, request):
        """``getTopicStatsInfo``: min/max offset and last store time per write queue.

        Mirrors AdminBrokerProcessor#getTopicStatsInfo (TopicStatsTable body).
        """
        topic = request.ext("topic")
        tc = self.broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return _err(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
        store = self.broker.message_store
        table = {}
        for i in range(tc.write_queue_nums):
            mq = MessageQueue(topic, self.broker.broker_config.broker_name, i)
            lo = max(0, store.get_min_offset_in_queue(topic, i))
            hi = max(0, store.get_max_offset_in_queue(topic, i))
            ts = self._store_time(topic, i, hi - 1) if hi > 0 else 0
            table[mq] = {"lastUpdateTimestamp": ts, "maxOffset": hi, "minOffset": lo}
        body = {"offsetTable": _mq_map(table)}
        return _ok(body=dumps(body).encode())

    @staticmethod
    def _connection(info) -> dict:
        """``Connection`` bean: clientAddr, clientId, language, version."""
        return {
            "clientAddr": info.channel.remote_address,
            "clientId": info.client_id,
            "language": info.language,
            "version": info.version,
        }

    def get_consumer_connection_list(self, channel, request):
        """``getConsumerConnectionList``: the group's members and subscriptions
        (ConsumerConnection body), or CONSUMER_NOT_ONLINE."""
        group = request.ext("consumerGroup")
        info = self.broker.consumer_manager.get_consumer_group_info(group)
        if info is None:
            return _err(ResponseCode.CONSUMER_NOT_ONLINE, f"the consumer group[{group}] not online")
        subs = info.subscription_table
        body = {
            "connectionSet": sorted(
                (self._connection(c) for c in info.channel_info_table.values()),
                key=lambda c: (c["clientId"], c["clientAddr"]),
            ),
            "consumeFromWhere": info.consume_from_where,
            "consumeType": info.consume_type,
            "messageModel": info.message_model,
            "subscriptionTable": {t: subs[t].to_json_dict() for t in hash_map_order(subs)},
        }
        return _ok(body=dumps(body).encode())

    def get_producer_connection_list(self, channel, request):
        """``getProducerConnectionList``: the group's producers (ProducerConnection body),
        or SYSTEM_ERROR "the producer group[g] not exist"."""
        group = request.ext("producerGroup")
        table = self.broker.producer_manager.get_group_channel_table().get(group)
        if table is None:
            return _err(ResponseCode.SYSTEM_ERROR, f"the producer group[{group}] not exist")
        conns = sorted(
            (self._connection(c) for c in table.values()),
            key=lambda c: (c["clientId"], c["clientAddr"]),
        )
        return _ok(body=dumps({"connectionSet": conns}).encode())

    def get_consume_stats(self, channel, request):
        """``getConsumeStats``: broker and consumer offset per read queue (ConsumeStats).

        Mirrors AdminBrokerProcessor#getConsumeStats: no ``topic`` → every topic the group
        has offsets for; a topic without config is skipped, as is one the group does not
        subscribe to while it subscribes to others. ``consumeTps`` adds up
        ``BrokerStatsManager#tpsGroupGetNums`` of each topic: GROUP_GET_NUMS over the last
        minute of 10 s samples.
        """
        group = request.ext("consumerGroup")
        topic = request.ext("topic")
        broker = self.broker
        if not topic or not topic.strip():
            topics = broker.consumer_offset_manager.which_topic_by_consumer(group)
        else:
            topics = [topic]
        cm = broker.consumer_manager
        table = {}
        consume_tps = 0.0
        for t in topics:
            tc = broker.topic_config_manager.select_topic_config(t)
            if tc is None:
                continue
            if (
                cm.find_subscription_data(group, t) is None
                and cm.find_subscription_data_count(group) > 0
            ):
                continue
            for i in range(tc.read_queue_nums):
                mq, wrapper = self._offset_wrapper(group, t, i)
                table[mq] = wrapper
            consume_tps += broker.broker_stats_manager.tps_group_get_nums(group, t)
        body = {"consumeTps": consume_tps, "offsetTable": _mq_map(table)}
        return _ok(body=dumps(body).encode())

    def query_topic_consume_by_who(self, channel, request):
        """QUERY_TOPIC_CONSUME_BY_WHO (300): groups subscribed to the topic or holding
        offsets on it (GroupList body; a HashSet in Java, written in its order).

        Mirrors AdminBrokerProcessor#queryTopicConsumeByWho; ``queryMsgById``'s message
        track asks it.
        """
        topic = request.ext("topic")
        broker = self.broker
        groups = set(broker.consumer_manager.query_topic_consume_by_who(topic))
        groups.update(broker.consumer_offset_manager.which_group_by_topic(topic))
        return _ok(body=dumps({"groupList": hash_map_order(sorted(groups))}).encode())

    # -- groups, filter servers, store housekeeping, offsets, consume queues, ACL ---------------
    # The codes mqadmin's getConsumerConfig, deleteSubGroup, exportMetadata, cleanExpiredCQ,
    # cleanUnusedTopic, queryCq and cloneGroupOffset send; one method per code.
    def get_all_subscription_group(self, channel, request):
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): ``SubscriptionGroupManager#encode()``.

        Mirrors AdminBrokerProcessor#getAllSubscriptionGroup (broker/processor, RocketMQ
        4.9.3): ``{"dataVersion":…,"subscriptionGroupTable":{group: config}}``. (Java's
        "No subscription group in this broker" branch needs an empty text, which the
        encoding never is.)
        """
        content = self.broker.subscription_group_manager.encode()
        return _ok(body=content.encode())

    def delete_subscription_group(self, channel, request):
        """DELETE_SUBSCRIPTIONGROUP (207): drop the group's config, and with
        ``removeOffset=true`` its committed offsets on every topic.

        Mirrors AdminBrokerProcessor#deleteSubscriptionGroup: SUCCESS whether or not the
        group existed (``SubscriptionGroupManager#deleteSubscriptionGroupConfig`` only
        logs a miss); ``removeOffset`` is read with ``Boolean.parseBoolean``. The offsets
        go from memory at once and from consumerOffset.json at the next persist
        (``ConsumerOffsetManager#removeOffset`` does not persist). ``autoDeleteUnusedStats``
        (off by default) would also drop the group's BrokerStatsManager figures, which
        mqlab does not keep.
        """
        group = request.ext("groupName")
        broker = self.broker
        broker.subscription_group_manager.delete_subscription_group_config(group, broker.ctx.now_ms)
        removed: list[str] = []
        if request.ext("removeOffset", "false").lower() == "true":
            removed = broker.consumer_offset_manager.remove_offset(group)
        if broker.tracer.enabled:
            broker.tracer.emit(
                C + ".deleteSubscriptionGroup", "delete", group=group, removed_offsets=removed,
                text=f"group {group} deleted ({len(removed)} offset table(s) removed)",
            )  # fmt: skip
        return _ok()

    def register_filter_server(self, channel, request):
        """REGISTER_FILTER_SERVER (301): remember the caller's filter server; answer the
        broker's id and name in the response header.

        Mirrors AdminBrokerProcessor#registerFilterServer → FilterServerManager
        #registerFilterServer (see ``filter_server_manager``): the address is named in
        every later REGISTER_BROKER until the channel closes or 30 s pass without a
        renewal.
        """
        broker = self.broker
        broker.filter_server_manager.register_filter_server(
            channel, request.ext("filterServerAddr"), broker.ctx.now_ms
        )
        cfg = broker.broker_config
        return _ok({"brokerId": str(cfg.broker_id), "brokerName": cfg.broker_name})

    def query_consume_time_span(self, channel, request):
        """QUERY_CONSUME_TIME_SPAN (303): per write queue, the store times of the first
        and last message, of the group's last consumed one, and how far behind it is.

        Mirrors AdminBrokerProcessor#queryConsumeTimeSpan (QueryConsumeTimeSpanBody of
        QueueTimeSpan beans): a time is -1 where there is no message; the consume time
        is the first message's when the group has no offset (or offset 0); ``delayTime``
        is now minus the store time of the next message to consume, only while the
        group is behind (0 otherwise; now + 1 when the group has no offset, as Java's
        ``System.currentTimeMillis() - (-1)``). The ``*Str`` fields are
        ``yyyy-MM-dd#HH:mm:ss:SSS`` (mqlab writes UTC; Java the JVM's time zone).
        """
        topic, group = request.ext("topic"), request.ext("group")
        broker = self.broker
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return _err(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
        store = broker.message_store
        now = broker.ctx.now_ms
        spans = []
        for i in range(tc.write_queue_nums):
            min_time = store.get_earliest_message_time(topic, i)
            max_offset = store.get_max_offset_in_queue(topic, i)
            max_time = store.get_message_store_timestamp(topic, i, max_offset - 1)
            consumer_offset = broker.consumer_offset_manager.query_offset(group, topic, i)
            if consumer_offset > 0:
                consume_time = store.get_message_store_timestamp(topic, i, consumer_offset - 1)
            else:
                consume_time = min_time
            delay = 0
            if consumer_offset < max_offset:
                delay = now - store.get_message_store_timestamp(topic, i, consumer_offset)
            spans.append({
                "consumeTimeStamp": consume_time,
                "consumeTimeStampStr": format_date_yyyy_mm_dd_hh_mm_ss_sss(consume_time),
                "delayTime": delay,
                "maxTimeStamp": max_time,
                "maxTimeStampStr": format_date_yyyy_mm_dd_hh_mm_ss_sss(max_time),
                "messageQueue": MessageQueue(topic, broker.broker_config.broker_name, i),
                "minTimeStamp": min_time,
                "minTimeStampStr": format_date_yyyy_mm_dd_hh_mm_ss_sss(min_time),
            })  # fmt: skip
        return _ok(body=dumps({"consumeTimeSpanSet": spans}).encode())

    def system_topic_list(self) -> list[str]:
        """``TopicValidator#getSystemTopicSet`` in a 4.9.3 broker: the static set, then what
        ``TopicConfigManager``'s constructor adds (``addSystemTopic``), in a ``HashSet``'s
        iteration order."""
        cfg = self.broker.broker_config
        added = [RMQ_SYS_SELF_TEST_TOPIC]
        if cfg.auto_create_topic_enable:
            added.append(AUTO_CREATE_TOPIC_KEY_TOPIC)
        added += [RMQ_SYS_BENCHMARK_TOPIC, cfg.broker_cluster_name, cfg.broker_name,
                  RMQ_SYS_OFFSET_MOVED_EVENT, SCHEDULE_TOPIC]  # fmt: skip
        if cfg.trace_topic_enable:
            added.append(cfg.msg_trace_topic_name)
        added.append(get_reply_topic(cfg.broker_cluster_name))
        ordered = list(dict.fromkeys([*STATIC_SYSTEM_TOPICS, *added]))
        return hash_map_order(ordered)

    def get_system_topic_list_from_broker(self, channel, request):
        """GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305): a TopicList of the system topics.

        Mirrors AdminBrokerProcessor#getSystemTopicListFromBroker; ``mqadmin
        exportMetadata`` asks it (with GET_ALL_TOPIC_CONFIG and
        GET_ALL_SUBSCRIPTIONGROUP_CONFIG) to leave these topics out.
        """
        return _ok(body=dumps({"topicList": self.system_topic_list()}).encode())

    def clean_expired_consume_queue(self, channel, request):
        """CLEAN_EXPIRED_CONSUMEQUEUE (306): ``DefaultMessageStore#cleanExpiredConsumerQueue``.

        Mirrors AdminBrokerProcessor#cleanExpiredConsumeQueue: always SUCCESS.
        """
        self.broker.message_store.clean_expired_consumer_queue()
        return _ok()

    def clean_unused_topic(self, channel, request):
        """CLEAN_UNUSED_TOPIC (316): destroy the consume queues of every topic that is not
        configured (``DefaultMessageStore#cleanUnusedTopic``).

        Mirrors AdminBrokerProcessor#cleanUnusedTopic: always SUCCESS.
        """
        tcm = self.broker.topic_config_manager
        self.broker.message_store.clean_unused_topic(tcm.topic_config_table.keys())
        return _ok()

    def query_correction_offset(self, channel, request):
        """QUERY_CORRECTION_OFFSET (308): per queue, the lowest offset any group (but the
        filter groups) has committed on the topic (QueryCorrectionOffsetBody).

        Mirrors AdminBrokerProcessor#queryCorrectionOffset and
        ConsumerOffsetManager#queryMinOffsetInAllGroup, with both of 4.9.3's slips:
        the filter groups' offsets are removed from the broker (see
        ``query_min_offset_in_all_group``), and the compare group's offsets are looked up
        as ``queryOffset(topic, compareGroup)``, i.e. under the key
        ``compareGroup@topic``, which a real group's offsets never have: the
        ``Long.MAX_VALUE`` correction only applies to a topic named like the compare group.
        """
        topic = request.ext("topic")
        com = self.broker.consumer_offset_manager
        store = self.broker.message_store
        correction = com.query_min_offset_in_all_group(
            topic, request.ext("filterGroups"), store.get_min_offset_in_queue
        )
        compare = com.query_offset_table(topic, request.ext("compareGroup"))  # (group, topic)
        for queue_id, offset in (compare or {}).items():
            if queue_id not in correction:  # Java unboxes the missing Long
                return _err(
                    ResponseCode.SYSTEM_ERROR,
                    "java.lang.NullPointerException, org.apache.rocketmq.broker.processor."
                    "AdminBrokerProcessor.queryCorrectionOffset(AdminBrokerProcessor.java:1187)",
                )
            if correction[queue_id] > offset:
                correction[queue_id] = JAVA_LONG_MAX
        table = {q: correction[q] for q in hash_map_order(correction, hash_code=_int_hash)}
        return _ok(body=dumps({"correctionOffsets": table}).encode())

    def clone_group_offset(self, channel, request):
        """CLONE_GROUP_OFFSET (314): copy one group's committed offsets to another.

        Mirrors AdminBrokerProcessor#cloneGroupOffset: the topics are the header's
        ``topic``, or when it is blank every topic the source group has offsets for;
        one without config is skipped, and unless ``offline`` so is one the online
        source group does not subscribe to (while it subscribes to others). Each
        remaining topic calls ``cloneOffset(src, dest, header.topic)``: the HEADER's
        topic, as 4.9.3 does, so a request without a topic clones nothing. Nothing is
        persisted until the next periodic persist. Always SUCCESS.
        """
        src, dest = request.ext("srcGroup"), request.ext("destGroup")
        topic = request.ext("topic")
        offline = request.ext("offline", "false").lower() == "true"
        broker = self.broker
        com, cm = broker.consumer_offset_manager, broker.consumer_manager
        if is_blank(topic):
            topics = com.which_topic_by_consumer(src)
        else:
            topics = [topic]
        cloned = []
        for t in topics:
            if broker.topic_config_manager.select_topic_config(t) is None:
                continue
            if not offline and (
                cm.find_subscription_data_count(src) > 0
                and cm.find_subscription_data(src, t) is None
            ):
                continue
            # Java concatenates the header's topic: null becomes "null@<src>"
            com.clone_offset(src, dest, "null" if topic is None else topic)
            cloned.append(t)
        if broker.tracer.enabled:
            broker.tracer.emit(
                C + ".cloneGroupOffset", "clone", src=src, dest=dest, topic=topic, topics=cloned,
                text=f"clone offsets of {src} to {dest} on {topic} ({len(cloned)} topic(s) checked)",
            )  # fmt: skip
        return _ok()

    def query_consume_queue(self, channel, request):
        """QUERY_CONSUME_QUEUE (321): up to ``count`` raw units of one consume queue from
        ``index`` (QueryConsumeQueueResponseBody), for ``mqadmin queryCq``.

        Mirrors AdminBrokerProcessor#queryConsumeQueue: a queue the store does not hold
        (``getConsumeQueue``: never created nor looked up) is SYSTEM_ERROR
        "q@topic is not exist!"; an index outside the written units is SUCCESS with
        the remark "Index i of q@topic is not exist!" and no body. Units are read up to
        the end of the file holding ``index``. With ``consumerGroup``: its subscription,
        and as ``filterData`` its SQL92 filter data (fastjson pretty text; "null" for a
        tag subscription) or "group@topic is not online!". ``eval`` and the extend data
        belong to the consume-queue extension (``enableConsumeQueueExt``, off), which
        mqlab does not model: every unit reads ``eval`` false. On success the remark
        stays ``createResponseCommand``'s "not set any response code", as in Java.
        """
        topic = request.ext("topic")
        queue_id = int(request.ext("queueId", "0"))
        index = int(request.ext("index", "0"))
        count = int(request.ext("count", "0"))
        group = request.ext("consumerGroup")
        broker = self.broker
        cq = broker.message_store.get_consume_queue(topic, queue_id)
        if cq is None:
            return _err(ResponseCode.SYSTEM_ERROR, f"{queue_id}@{topic} is not exist!")
        body: dict = {}
        if group is not None:
            sub = broker.consumer_manager.find_subscription_data(group, topic)
            if sub is None:
                body["filterData"] = f"{group}@{topic} is not online!"
            else:
                data = broker.consumer_filter_manager.get(topic, group)
                cfg = broker.broker_config
                bloom = BloomFilter(
                    cfg.max_error_rate_of_bloom_filter, cfg.expect_consumer_num_use_filter
                )
                body["filterData"] = _filter_data_text(data, bloom)
                body["subscriptionData"] = sub.to_json_dict()
        found = cq.get_index_buffer(index)
        if found is None:
            return RemotingCommand.create_response(
                ResponseCode.SUCCESS,
                f"Index {index} of {queue_id}@{topic} is not exist!",
                ext_fields={},
            )
        mf, pos, end = found
        units = []
        for p in range(pos, min(end, pos + count * CQ_STORE_UNIT_SIZE), CQ_STORE_UNIT_SIZE):
            phy, size, tags = CQ_UNIT.unpack_from(mf.mm, p)
            units.append({"eval": False, "physicOffset": phy, "physicSize": size, "tagsCode": tags})
        body["maxQueueIndex"] = cq.get_max_offset_in_queue()
        body["minQueueIndex"] = cq.get_min_offset_in_queue()
        body["queueData"] = units
        body = {k: body[k] for k in sorted(body)}
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, NOT_SET_REMARK, ext_fields={}, body=dumps(body).encode()
        )

    # ACL (UPDATE_AND_CREATE_ACL_CONFIG ... GET_BROKER_CLUSTER_ACL_CONFIG). With aclEnable=false
    # (4.9.3's default) the AccessValidator map is empty and each handler's validator is null;
    # with aclEnable=true it is the broker's PlainAccessValidator (mqlab.acl). 4.9.3 lists
    # none of these codes in Permission.ADMIN_CODE: any account that signs may send them.
    def update_and_create_access_config(self, channel, request):
        """UPDATE_AND_CREATE_ACL_CONFIG (50): create an account, or update one, in its file.

        Mirrors AdminBrokerProcessor#updateAndCreateAccessConfig. ACL off: the call on
        the null validator throws a NullPointerException, caught; code 209 with its
        ``getMessage()`` as the remark: null on JDK 8, a "helpful" text on JDK 14+. ACL on:
        ``PlainPermissionManager#updateAccessConfig`` (the comma lists split as
        ``UtilAll#split``); SUCCESS with no remark; false → 209 "The accesskey[..]
        corresponding to accessConfig has been updated failed."; an exception → 209 with
        its message.
        """
        validator = self.broker.access_validator
        if validator is None:
            return _err(ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED, None)
        ext = request.ext_fields or {}
        access_key = ext.get("accessKey")
        config = PlainAccessConfig(
            access_key=access_key, secret_key=ext.get("secretKey"),
            white_remote_address=ext.get("whiteRemoteAddress"),
            admin=(ext.get("admin") or "").lower() == "true",
            default_topic_perm=ext.get("defaultTopicPerm"),
            default_group_perm=ext.get("defaultGroupPerm"),
            topic_perms=_util_split(ext.get("topicPerms")),
            group_perms=_util_split(ext.get("groupPerms")),
        )  # fmt: skip
        code = ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
        try:
            ok = validator.acl_plug_engine.update_access_config(config)
        except JavaException as e:
            return self._acl_failed(code, e.message, e)
        if not ok:
            return self._acl_failed(code, f"The accesskey[{_java(access_key)}] corresponding "
                                    "to accessConfig has been updated failed.")  # fmt: skip
        return self._acl_done("updateAndCreateAccessConfig", access_key=access_key)

    def delete_access_config(self, channel, request):
        """DELETE_ACL_CONFIG (51): an account out of its file.

        Mirrors AdminBrokerProcessor#deleteAccessConfig. ACL off: 210, remark null (see
        code 50). ACL on: ``PlainPermissionManager#deleteAccessConfig``; false (no such
        key) → 210 "The accesskey[..] corresponding to accessConfig has been deleted
        failed."; an exception → 210 with its message.
        """
        validator = self.broker.access_validator
        if validator is None:
            return _err(ResponseCode.DELETE_ACL_CONFIG_FAILED, None)
        access_key = request.ext("accessKey")
        code = ResponseCode.DELETE_ACL_CONFIG_FAILED
        try:
            ok = validator.acl_plug_engine.delete_access_config(access_key)
        except JavaException as e:
            return self._acl_failed(code, e.message, e)
        if not ok:
            return self._acl_failed(code, f"The accesskey[{_java(access_key)}] corresponding "
                                    "to accessConfig has been deleted failed.")  # fmt: skip
        return self._acl_done("deleteAccessConfig", access_key=access_key)

    def get_broker_acl_config_version(self, channel, request):
        """GET_BROKER_CLUSTER_ACL_INFO (52): the ACL files' versions.

        Mirrors AdminBrokerProcessor#getBrokerAclConfigVersion. ACL off: the
        NullPointerException is caught and logged, the method returns null, and the broker
        writes no response; the caller times out (``mqadmin getAccessConfigSubCommand``
        ...). ACL on: SUCCESS, no remark, and the header ``version`` (the default file's
        ``dataVersion``), ``allAclFileVersion`` (each file's), ``brokerName``,
        ``brokerAddr``, ``clusterName``.
        """
        validator = self.broker.access_validator
        if validator is None:
            return None
        m = validator.acl_plug_engine
        cfg = self.broker.broker_config
        return _ok({
            "version": m.get_acl_config_data_version(),
            "allAclFileVersion": m.all_acl_config_version_json(),
            "brokerName": cfg.broker_name,
            "brokerAddr": self.broker.broker_addr,
            "clusterName": cfg.broker_cluster_name,
        })  # fmt: skip

    def update_global_white_addrs_config(self, channel, request):
        """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53): the default file's global white list.

        Mirrors AdminBrokerProcessor#updateGlobalWhiteAddrsConfig. ACL off: 211, remark
        null (see code 50). ACL on: ``PlainPermissionManager#updateGlobalWhiteAddrsConfig``;
        false (no list in the file, or no ``globalWhiteAddrs``) → 211 "The
        globalWhiteAddresses[..] has been updated failed."; an exception → 211 with its
        message.
        """
        validator = self.broker.access_validator
        if validator is None:
            return _err(ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, None)
        addrs = request.ext("globalWhiteAddrs")
        code = ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
        try:
            ok = validator.acl_plug_engine.update_global_white_addrs_config(_util_split(addrs))
        except JavaException as e:
            return self._acl_failed(code, e.message, e)
        if not ok:
            return self._acl_failed(
                code, f"The globalWhiteAddresses[{_java(addrs)}] has been updated failed."
            )
        return self._acl_done("updateGlobalWhiteAddrsConfig", global_white_addrs=addrs)

    def get_broker_cluster_acl_config(self, channel, request):
        """GET_BROKER_CLUSTER_ACL_CONFIG (54): every account and global white address.

        Mirrors AdminBrokerProcessor#getBrokerClusterAclConfig. ACL off: no answer (see
        code 52). ACL on: SUCCESS with the body ``{"globalWhiteAddrs": [..],
        "plainAccessConfigs": [..]}`` (``PlainPermissionManager#getAllAclConfig``, secret
        keys included); a file that no longer reads: no answer.
        """
        validator = self.broker.access_validator
        if validator is None:
            return None
        try:
            white, configs = validator.acl_plug_engine.get_all_acl_config()
        except JavaException:
            return None
        body = {
            "globalWhiteAddrs": white,
            "plainAccessConfigs": [c.to_json_dict() for c in configs],
        }
        return _ok(body=dumps(body).encode())

    def _acl_failed(self, code: int, remark: str | None, error: Exception | None = None):
        if self.broker.tracer.enabled:
            self.broker.tracer.emit(
                "AdminBrokerProcessor", "acl", Kind.ERROR, code=int(code), remark=remark,
                error=None if error is None else str(error), text=f"ACL update failed: {remark}",
            )  # fmt: skip
        return _err(code, remark)

    def _acl_done(self, what: str, **fields):
        if self.broker.tracer.enabled:
            self.broker.tracer.emit("AdminBrokerProcessor", "acl", Kind.STATE, **fields,
                                    text=f"{what}: file written")  # fmt: skip
        return RemotingCommand.create_response(ResponseCode.SUCCESS, None, ext_fields={})

    # -- reset offsets (mqadmin resetOffsetByTime) -------------------------------------------------
    def reset_offset(self, channel, request):
        """INVOKE_BROKER_TO_RESET_OFFSET (222): ``resetOffset`` → ``Broker2Client#resetOffset``.

        For each write queue of the topic: the offset for ``timestamp`` (-1: the max
        offset; a negative answer becomes 0), used when ``isForce`` or when it is below the
        group's committed offset, else the committed offset stays. A queue without a
        committed offset makes the whole request SYSTEM_ERROR "THe consumer group <g> not
        exist". The table goes to every online consumer of the group as a oneway
        RESET_CONSUMER_CLIENT_OFFSET (220) request (a ``ResetOffsetBodyForC`` list when
        the request came from a CPP client), and back in the reply body. The broker does
        not change its own offsets: each client commits the reset offsets itself
        (``MQClientInstance#resetOffset``). No consumer online → CONSUMER_NOT_ONLINE, on
        which mqadmin falls back to the old path (GET_CONSUME_STATS, SEARCH_OFFSET_BY_
        TIMESTAMP, UPDATE_CONSUMER_OFFSET per queue).
        """
        topic, group = request.ext("topic"), request.ext("group")
        timestamp = int(request.ext("timestamp"))
        is_force = request.ext("isForce", "false").lower() == "true"
        is_c = request.language == "CPP"
        broker = self.broker
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return _err(
                ResponseCode.SYSTEM_ERROR,
                f"[reset-offset] reset offset failed, no topic in this broker. topic={topic}",
            )
        store = broker.message_store
        table: dict[MessageQueue, int] = {}
        for i in range(tc.write_queue_nums):
            mq = MessageQueue(topic, broker.broker_config.broker_name, i)
            consumer_offset = broker.consumer_offset_manager.query_offset(group, topic, i)
            if consumer_offset == -1:
                return _err(ResponseCode.SYSTEM_ERROR, f"THe consumer group <{group}> not exist")
            if timestamp == -1:
                ts_offset = store.get_max_offset_in_queue(topic, i)
            else:
                ts_offset = store.get_offset_in_queue_by_time(topic, i, timestamp)
            ts_offset = max(ts_offset, 0)
            table[mq] = ts_offset if is_force or ts_offset < consumer_offset else consumer_offset
        table = _mq_map(table)
        # extFields in Java's HashMap order (as a 4.9.3 broker writes them)
        ext = {"topic": topic, "isForce": "false", "group": group, "timestamp": str(timestamp)}
        if is_c:  # ResetOffsetBodyForC: a list of MessageQueueForC
            body = {"offsetTable": [
                {"brokerName": mq.broker_name, "offset": off, "queueId": mq.queue_id, "topic": mq.topic}
                for mq, off in table.items()
            ]}  # fmt: skip
        else:
            body = {"offsetTable": table}
        to_client = RemotingCommand.create_request(
            RequestCode.RESET_CONSUMER_CLIENT_OFFSET, ext, body=dumps(body).encode()
        )
        info = broker.consumer_manager.get_consumer_group_info(group)
        if info is None or not info.get_all_channel():
            return _err(
                ResponseCode.CONSUMER_NOT_ONLINE,
                "Consumer not online, so can not reset offset, "
                f"Group: {group} Topic: {topic} Timestamp: {timestamp}",
            )
        for ch, cinfo in info.channel_info_table.items():
            if cinfo.version < V3_0_7_SNAPSHOT:
                return _err(
                    ResponseCode.SYSTEM_ERROR,
                    f"the client does not support this feature. version={cinfo.version}",
                )
            broker.ctx.send_request_oneway(ch, to_client)
        if broker.tracer.enabled:
            broker.tracer.emit(
                "Broker2Client.resetOffset", "reset", group=group, topic=topic,
                timestamp=timestamp, force=is_force, clients=len(info.channel_info_table),
                offsets={f"{mq.broker_name}:{mq.queue_id}": off for mq, off in table.items()},
                text=f"RESET_CONSUMER_CLIENT_OFFSET to {len(info.channel_info_table)} "
                f"consumer(s) of {group}",
            )  # fmt: skip
        # Broker2Client#resetOffset sets SUCCESS but keeps createResponseCommand's remark
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, "not set any response code", ext_fields={},
            body=dumps({"offsetTable": table}).encode(),
        )  # fmt: skip

    # -- forwarded to a client (mqadmin consumerStatus, queryMsgById's resend) --------------------
    def _answer_later(self, channel: Channel, request: RemotingCommand, response) -> None:
        response.opaque = request.opaque
        response.mark_response_type()
        self.broker.ctx.send_response(channel, response)

    def get_consumer_running_info(self, channel, request):
        """GET_CONSUMER_RUNNING_INFO (307): forwarded to the client ``clientId`` of
        ``consumerGroup`` (``mqadmin consumerStatus``, ``consumerProgress -s``).

        Mirrors AdminBrokerProcessor#getConsumerRunningInfo → ``#callConsumer``.
        """
        return self.call_consumer(
            channel, request, RequestCode.GET_CONSUMER_RUNNING_INFO,
            request.ext("consumerGroup"), request.ext("clientId"),
        )  # fmt: skip

    def consume_message_directly(self, channel, request):
        """CONSUME_MESSAGE_DIRECTLY (309): the stored message ``msgId`` (an offset message
        id), sent to one client to consume at once (``mqadmin consumeMessage``, the
        dashboard's resend).

        Mirrors AdminBrokerProcessor#consumeMessageDirectly: the request gains
        ``brokerName`` and, as body, the whole stored message read at the id's commit-log
        offset; a missing message is Java's NullPointerException on
        ``selectMappedBufferResult.getSize()`` (SYSTEM_ERROR). Then ``#callConsumer``.
        """
        from mqlab.common.message_decoder import decode_message_id

        ext = dict(request.ext_fields or {})
        ext["brokerName"] = self.broker.broker_config.broker_name
        msg_id = ext.get("msgId")
        if msg_id is None:  # MessageDecoder#decodeMessageId(null): msgId.length()
            return _err(
                ResponseCode.SYSTEM_ERROR,
                "java.lang.NullPointerException, org.apache.rocketmq.common.message."
                "MessageDecoder.decodeMessageId(MessageDecoder.java:87)",
            )
        try:
            _, offset = decode_message_id(msg_id)
        except ValueError:
            return _err(ResponseCode.SYSTEM_ERROR, f"bad message id {msg_id}")
        raw = self.broker.message_store.select_one_message_by_offset(offset)
        if raw is None:
            return _err(
                ResponseCode.SYSTEM_ERROR,
                "java.lang.NullPointerException, org.apache.rocketmq.broker.processor."
                "AdminBrokerProcessor.consumeMessageDirectly(AdminBrokerProcessor.java:1213)",
            )
        forwarded = RemotingCommand.create_request(request.code, ext, body=bytes(raw))
        forwarded.version, forwarded.language = request.version, request.language
        return self.call_consumer(
            channel, forwarded, RequestCode.CONSUME_MESSAGE_DIRECTLY, ext.get("consumerGroup"),
            ext.get("clientId"), reply_to=request,
        )  # fmt: skip

    def call_consumer(self, channel, request, request_code, group, client_id, reply_to=None):
        """Forward ``request``'s extFields and body to one consumer; its answer is ours.

        Mirrors AdminBrokerProcessor#callConsumer (broker/processor, RocketMQ 4.9.3):

        1. ``ConsumerManager#findChannel(group, clientId)``: none → SYSTEM_ERROR "The
           Consumer <g> <c> not online".
        2. A client older than V3_1_8_SNAPSHOT → SYSTEM_ERROR "The Consumer <c> Version
           <V…> too low to finish, please upgrade it to V3_1_8_SNAPSHOT".
        3. ``Broker2Client#callClient`` (10 s): the client's response is the answer as it
           is (code, remark, extFields, body); a timeout → CONSUME_MSG_TIMEOUT "consumer
           <g> <c> Timeout: …", another failure → SYSTEM_ERROR "invoke consumer <g> <c>
           Exception: …".
        """
        from mqlab.broker.broker2client import (
            V3_1_8_SNAPSHOT,
            exception_simple_desc,
            version_desc,
        )
        from mqlab.runtime.context import RemotingTimeoutException

        broker = self.broker
        tracer = broker.tracer
        info = broker.consumer_manager.find_channel(group, client_id) if client_id else None
        if info is None:  # step 1
            return _err(
                ResponseCode.SYSTEM_ERROR, f"The Consumer <{group}> <{client_id}> not online"
            )
        if info.version < V3_1_8_SNAPSHOT:  # step 2
            return _err(
                ResponseCode.SYSTEM_ERROR,
                f"The Consumer <{client_id}> Version <{version_desc(info.version)}> too low to "
                "finish, please upgrade it to V3_1_8_SNAPSHOT",
            )
        forwarded = RemotingCommand.create_request(
            request_code, dict(request.ext_fields or {}), body=request.body
        )
        if tracer.enabled:
            tracer.emit("AdminBrokerProcessor.callConsumer", "3", group=group, client_id=client_id,
                        code=RequestCode(request_code).name,
                        text=f"{RequestCode(request_code).name} forwarded to {client_id}")  # fmt: skip
        original = reply_to or request

        def answered(response: RemotingCommand | None, error: Exception | None) -> None:
            if error is None and response is not None:
                out = RemotingCommand.create_response(
                    response.code, response.remark, ext_fields=response.ext_fields,
                    body=response.body,
                )  # fmt: skip
                out.version, out.language = response.version, response.language
            elif isinstance(error, RemotingTimeoutException):
                out = _err(ResponseCode.CONSUME_MSG_TIMEOUT,
                           f"consumer <{group}> <{client_id}> Timeout: {exception_simple_desc(error)}")  # fmt: skip
            else:
                out = _err(ResponseCode.SYSTEM_ERROR,
                           f"invoke consumer <{group}> <{client_id}> Exception: "
                           f"{exception_simple_desc(error)}")  # fmt: skip
            self._answer_later(channel, original, out)

        broker.broker2client.call_client(info.channel, forwarded, answered)
        return None

    def get_consumer_status(self, channel, request):
        """INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223): every consumer's offsets of a topic
        (``mqadmin getConsumerStatus``). Mirrors AdminBrokerProcessor#getConsumerStatus →
        ``Broker2Client#getConsumeStatus``."""
        return self.broker.broker2client.get_consume_status(
            request.ext("topic"), request.ext("group"), request.ext("clientAddr"),
            lambda response: self._answer_later(channel, request, response),
        )  # fmt: skip

    def resume_check_half_message(self, channel, request):
        """RESUME_CHECK_HALF_MESSAGE (323): ``resumeCheckHalfMessage`` + ``toMessageExtBrokerInner``.

        Mirrors AdminBrokerProcessor#resumeCheckHalfMessage (broker/processor, RocketMQ 4.9.3):
        the message at the offset inside ``msgId`` (an offset message id) is written again to
        RMQ_SYS_TRANS_HALF_TOPIC queue 0 with TRANSACTION_CHECK_TIMES=0, so the check service
        asks its producer again (mqadmin ``resumeCheckHalfMessage``). Any failure to find or
        decode it is Java's caught exception: SYSTEM_ERROR "Exception was thrown when putting
        message back to RMQ_SYS_TRANS_HALF_TOPIC.".
        """
        from mqlab.broker.transaction.transactional_message_bridge import build_half_topic
        from mqlab.common import message_const as mc
        from mqlab.common.filter_api import tags_string_to_tags_code
        from mqlab.common.message import MessageExtBrokerInner
        from mqlab.common.message_decoder import (
            MessageDecodeError,
            decode_message_id,
            decode_stored_message,
            message_properties_to_string,
        )
        from mqlab.store.status import PutMessageStatus

        broker = self.broker
        thrown = "Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC."
        try:
            _, offset = decode_message_id(request.ext("msgId") or "")
            raw = broker.message_store.select_one_message_by_offset(offset)
            if raw is None:
                raise ValueError("selectOneMessageByOffset returned null")
            msg = decode_stored_message(
                raw, 0, read_body=True, inflate=True
            )  # MessageDecoder.decode(bb)
        except (ValueError, MessageDecodeError):
            return _err(ResponseCode.SYSTEM_ERROR, thrown)
        msg.properties[mc.PROPERTY_TRANSACTION_CHECK_TIMES] = "0"
        inner = MessageExtBrokerInner(
            topic=build_half_topic(), body=msg.body, flag=msg.flag, properties=msg.properties,
            properties_string=message_properties_to_string(msg.properties),
            tags_code=tags_string_to_tags_code(msg.properties.get(mc.PROPERTY_TAGS)), queue_id=0,
            sys_flag=msg.sys_flag, born_host=msg.born_host, born_timestamp=msg.born_timestamp,
            store_host=msg.store_host, reconsume_times=msg.reconsume_times, msg_id=msg.msg_id,
        )  # fmt: skip
        result = broker.put_message(inner)
        if result is not None and result.put_message_status is PutMessageStatus.PUT_OK:
            if broker.tracer.enabled:
                broker.tracer.emit(
                    "AdminBrokerProcessor.resumeCheckHalfMessage", "put", offset=offset,
                    real_topic=msg.properties.get(mc.PROPERTY_REAL_TOPIC),
                    text=f"message @{offset} put back to RMQ_SYS_TRANS_HALF_TOPIC (check times 0)",
                )  # fmt: skip
            return _ok()
        return _err(
            ResponseCode.SYSTEM_ERROR, "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed."
        )

    # -- BrokerStatsManager's figures (VIEW_BROKER_STATS_DATA 315, GET_BROKER_CONSUME_STATS 317)
    def view_broker_stats_data(self, channel, request):
        """VIEW_BROKER_STATS_DATA (315): one stats item's minute, hour and day (``mqadmin
        statsAll``; BrokerStatsData of three BrokerStatsItem {sum, tps, avgpt}).

        Mirrors AdminBrokerProcessor#ViewBrokerStatsData (broker/processor, RocketMQ 4.9.3):
        an item never counted answers SYSTEM_ERROR "The stats <name> <key> not exist".
        """
        name, key = request.ext("statsName"), request.ext("statsKey")
        item = self.broker.broker_stats_manager.get_stats_item(name, key)
        if item is None:
            return _err(ResponseCode.SYSTEM_ERROR, f"The stats <{name}> <{key}> not exist")

        def view(ss) -> dict:
            return {"avgpt": float(ss.avgpt), "sum": ss.sum, "tps": float(ss.tps)}

        body = {
            "statsDay": view(item.get_stats_data_in_day()),
            "statsHour": view(item.get_stats_data_in_hour()),
            "statsMinute": view(item.get_stats_data_in_minute()),
        }
        return _ok(body=dumps(body).encode())

    def fetch_all_consume_stats_in_broker(self, channel, request):
        """GET_BROKER_CONSUME_STATS (317): every subscription group's ConsumeStats per topic it
        has offsets on (``mqadmin brokerConsumeStats``; ConsumeStatsList body).

        Mirrors AdminBrokerProcessor#fetchAllConsumeStatsInBroker (broker/processor, RocketMQ
        4.9.3): groups in the subscription table's order (a ConcurrentHashMap of 1024: 2048
        buckets), topics in a HashSet's; ``isOrder`` keeps order topics only; a topic the group
        does not subscribe to while it subscribes to others is skipped; the queues are the
        topic's *write* queues; ``totalDiff`` sums broker minus consumer offsets.
        """
        broker = self.broker
        is_order = (request.ext("isOrder") or "false").lower() == "true"
        cm = broker.consumer_manager
        stats_list = []
        total_diff = 0
        groups = broker.subscription_group_manager.subscription_group_table
        for group in hash_map_order(groups, initial_capacity=2048):
            per_topic = []
            topics = broker.consumer_offset_manager.which_topic_by_consumer(group)
            for t in hash_map_order(topics):
                tc = broker.topic_config_manager.select_topic_config(t)
                if tc is None or (is_order and not tc.order):
                    continue
                if (
                    cm.find_subscription_data(group, t) is None
                    and cm.find_subscription_data_count(group) > 0
                ):
                    continue
                table = {}
                for i in range(tc.write_queue_nums):
                    mq, wrapper = self._offset_wrapper(group, t, i)
                    table[mq] = wrapper
                    total_diff += wrapper["brokerOffset"] - wrapper["consumerOffset"]
                tps = broker.broker_stats_manager.tps_group_get_nums(group, t)
                per_topic.append({"consumeTps": tps, "offsetTable": _mq_map(table)})
            stats_list.append({group: per_topic})
        body = {
            "brokerAddr": broker.broker_addr,
            "consumeStatsList": stats_list,
            "totalDiff": total_diff,
        }
        return _ok(body=dumps(body).encode())


#: ``MQVersion.Version.V3_0_7_SNAPSHOT.ordinal()``: clients from this version take resets.
V3_0_7_SNAPSHOT = 28


def _util_split(s: str | None) -> list[str] | None:
    """``UtilAll#split(str, ",")``: Java's ``String#split`` (trailing empty strings dropped,
    ``""`` is ``[""]``); None stays None."""
    if s is None:
        return None
    parts = s.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return [] if parts == [""] and s != "" else parts


def _java(v: str | None) -> str:
    """``String.format("%s", v)``: null is "null"."""
    return "null" if v is None else v


def _mq_hash(mq: MessageQueue) -> int:
    """``MessageQueue#hashCode``: 31-based over brokerName, queueId, topic (32-bit)."""
    h = 31 + java_string_hash(mq.broker_name)
    h = 31 * h + mq.queue_id
    h = 31 * h + java_string_hash(mq.topic)
    return h & 0xFFFF_FFFF


def _mq_map(table: dict) -> dict:
    """A ``HashMap<MessageQueue, V>`` in Java's iteration order."""
    return {mq: table[mq] for mq in hash_map_order(table, hash_code=_mq_hash)}


def _format_runtime(ms: int) -> str:
    """``StoreStatsService#getFormatRuntime``: ``MessageFormat`` with grouped numbers."""
    day, hour, minute = 86_400_000, 3_600_000, 60_000
    parts = (ms // day, (ms % day) // hour, (ms % hour) // minute, (ms % minute) // 1000)
    d, h, m, s = (f"{p:,}" for p in parts)
    return f"[ {d} days, {h} hours, {m} minutes, {s} seconds ]"


def human_readable_byte_count(n: int) -> str:
    """``MixAll#humanReadableByteCount(bytes, si=false)``: "512 B", "1.5 KiB", ..."""
    if n < 1024:
        return f"{n} B"
    exp = int(math.log(n) / math.log(1024))
    return f"{n / 1024**exp:.1f} {'KMGTPE'[exp - 1]}iB"


#: ``Long.MAX_VALUE``: QUERY_CORRECTION_OFFSET's "no correction" value.
JAVA_LONG_MAX = 2**63 - 1


def _int_hash(i: int) -> int:
    """``Integer#hashCode``."""
    return i & 0xFFFF_FFFF


def _filter_data_text(data, bloom: BloomFilter) -> str:
    """``JSON.toJSONString(consumerFilterData, true)``: "null" when there is none (a tag
    subscription). For a SQL92 group, the bean's properties with the group's
    ``bloomFilterData`` (``ConsumerFilterManager``'s filter, of ``"group#topic"``);
    ``compiledExpression`` is not written (checked on a 4.9.3 broker)."""
    if data is None:
        return "null"
    bloom_data = bloom.generate(f"{data.consumer_group}#{data.topic}")
    # fastjson writes an int[] (IntArraySerializer) on one line even when pretty-printing
    positions = "[" + ",".join(str(p) for p in bloom_data["bitPos"]) + "]"
    bloom_data["bitPos"] = _BIT_POS_MARK
    d = {
        "bloomFilterData": bloom_data,
        "bornTime": data.born_time,
        "clientVersion": data.client_version,
        "consumerGroup": data.consumer_group,
        "dead": data.is_dead(),
        "deadTime": data.dead_time,
        "expression": data.expression,
        "expressionType": data.expression_type,
        "topic": data.topic,
    }
    text = dumps({k: v for k, v in d.items() if v is not None}, pretty=True)
    return text.replace(dumps(_BIT_POS_MARK), positions, 1)


_BIT_POS_MARK = "@@bitPos@@"
