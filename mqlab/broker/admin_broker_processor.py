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
(300, the message track of ``queryMsgById``). Bodies are fastjson's: bean
fields sorted, ``HashMap<MessageQueue, ...>`` tables in Java's iteration order.

Everything else AdminBrokerProcessor answers in Java is left out (it teaches nothing
about the mechanisms mqlab models) and gets REQUEST_CODE_NOT_SUPPORTED, as an unknown code
does: among others GET_ALL_SUBSCRIPTIONGROUP_CONFIG, DELETE_SUBSCRIPTIONGROUP, ACL,
CLONE_GROUP_OFFSET, VIEW_BROKER_STATS_DATA and GET_BROKER_CONSUME_STATS.
"""

from __future__ import annotations

import math
import os
import shutil
from typing import TYPE_CHECKING

from mqlab.common.filter_api import java_string_hash
from mqlab.common.java_hash_map import hash_map_order
from mqlab.common.message import MessageQueue
from mqlab.common.mix_all import is_lmq
from mqlab.common.properties import string_to_properties
from mqlab.common.topic_config import TopicConfig, TopicFilterType
from mqlab.common.topic_validator import RMQ_SYS_SCHEDULE_TOPIC as SCHEDULE_TOPIC
from mqlab.common.topic_validator import TopicValidator
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
    # BrokerStatsManager's figures
    RequestCode.VIEW_BROKER_STATS_DATA,
    RequestCode.GET_BROKER_CONSUME_STATS,
)


#: ``RemotingCommand#createResponseCommand(Class)``'s starting remark.
NOT_SET_REMARK = "not set any response code"


def _ok(ext: dict[str, str] | None = None, body: bytes | None = None) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, None, ext_fields=ext or {}, body=body
    )


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
            RequestCode.UPDATE_BROKER_CONFIG: self.update_broker_config,
            RequestCode.GET_BROKER_CONFIG: self.get_broker_config,
            RequestCode.GET_BROKER_RUNTIME_INFO: self.get_broker_runtime_info,
            RequestCode.GET_TOPIC_STATS_INFO: self.get_topic_stats_info,
            RequestCode.GET_CONSUMER_CONNECTION_LIST: self.get_consumer_connection_list,
            RequestCode.GET_PRODUCER_CONNECTION_LIST: self.get_producer_connection_list,
            RequestCode.GET_CONSUME_STATS: self.get_consume_stats,
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: self.reset_offset,
            RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: self.query_topic_consume_by_who,
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
        cl_path = store.message_store_config.get_store_path_commit_log()
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
        commit-log entry, -1 if there is none."""
        store = self.broker.message_store
        min_offset = store.get_min_phy_offset()
        if min_offset < 0 or min_offset >= store.get_max_phy_offset():
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
                mq = MessageQueue(t, broker.broker_config.broker_name, i)
                broker_offset = max(0, broker.message_store.get_max_offset_in_queue(t, i))
                consumer_offset = max(0, broker.consumer_offset_manager.query_offset(group, t, i))
                last = 0
                if consumer_offset - 1 >= 0:
                    ts = self._store_time(t, i, consumer_offset - 1)
                    if ts > 0:
                        last = ts
                table[mq] = {
                    "brokerOffset": broker_offset,
                    "consumerOffset": consumer_offset,
                    "lastTimestamp": last,
                }
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
        store = broker.message_store
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
                    mq = MessageQueue(t, broker.broker_config.broker_name, i)
                    broker_offset = max(0, store.get_max_offset_in_queue(t, i))
                    consumer_offset = max(
                        0, broker.consumer_offset_manager.query_offset(group, t, i)
                    )
                    last = 0
                    if consumer_offset - 1 >= 0:
                        ts = self._store_time(t, i, consumer_offset - 1)
                        if ts > 0:
                            last = ts
                    table[mq] = {
                        "brokerOffset": broker_offset,
                        "consumerOffset": consumer_offset,
                        "lastTimestamp": last,
                    }
                    total_diff += broker_offset - consumer_offset
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
