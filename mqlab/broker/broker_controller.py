"""The broker node: managers, store, processors and service timers on one context.

Mirrors ``BrokerController`` (broker, RocketMQ 4.9.3): ``initialize`` + ``start`` become
``on_start``, ``shutdown`` becomes ``on_stop``, and every service thread becomes a timer
named after the Java code it replaces (docs/design.md §1, docs/design.md §6.8):

| timer | period | Java |
|---|---|---|
| ``PullRequestHoldService.run`` | 5 000 ms (or ``shortPollingTimeMills``) | PullRequestHoldService |
| ``ReputMessageService.doReput`` | right after each put | ReputMessageService (1 ms loop) |
| ``ScheduleMessageService.DeliverDelayedMessageTimerTask`` | per level, 1 000 ms then as the task says | ScheduleMessageService |
| ``ScheduleMessageService.persist`` | 10 000 ms | flushDelayOffsetInterval |
| ``ConsumerOffsetManager.persist`` | 5 000 ms (first after 10 000) | flushConsumerOffsetInterval |
| ``BrokerController.registerBrokerAll`` | 30 000 ms (first after 10 000) + on topic changes | registerNameServerPeriod |
| ``ClientHousekeepingService.scanExceptionChannel`` | 10 000 ms | channel expiry (120 s) |
| ``TransactionalMessageCheckService.onWaitEnd`` | ``transactionCheckInterval`` (60 000 ms), masters only | TransactionalMessageCheckService |
| ``SlaveSynchronize.syncAll`` | 10 000 ms (first after 3 000), slaves only (DLedger: from each changeToSlave) | handleSlaveSynchronize |
| ``StoreStatsService.sampling`` | 1 000 ms | StoreStatsService (brokerStatus putTps …) |
| ``StatsItemSet.samplingInSeconds`` / ``InMinutes`` / ``InHour`` | 10 s / 10 min / 1 h (first at once) | BrokerStatsManager |
| ``AclFileWatchService.run`` | 5 000 ms, with ``aclEnable=true`` only | AclFileWatchService |

Request codes are dispatched to processors as ``BrokerController#registerProcessor``
does; ``AdminBrokerProcessor`` is the default. A restart is a new ``BrokerController``
on the same store directory: ``on_start`` reloads topics, offsets and groups from
``config/*.json`` and recovers the commit log and consume queues from their files.

A DLedger broker (``enableDLegerCommitLog=true``) starts with brokerId -1 and neither
registers nor starts those role-bound services at start; each role change of its DLedger node
switches them (``changeToSlave`` / ``changeToMaster``; mechanisms.md "DLedger commit log").

A SLAVE (``brokerRole=SLAVE``, ``brokerId`` ≥ 1) runs no ScheduleMessageService
(``DefaultMessageStore#handleScheduleMessageService``) and no transaction check; its
registration reply gives it the master's HA address (to the store) and broker address (to
``SlaveSynchronize``): mechanisms.md "The slave as a broker".

With ``aclEnable=true`` (``BrokerController#initialAcl``) a ``PlainAccessValidator`` reads
``<rocketmq_home_dir>/conf/plain_acl.yml`` (and ``conf/acl/``): ``rocketmq_home_dir`` is the
JVM's ``rocketmq.home.dir`` / ``ROCKETMQ_HOME``, given to the controller by its driver, not
the config's ``rocketmqHome``. Every request then passes the validator before its
processor, as the server RPC hook runs in ``NettyRemotingAbstract#processRequestCommand``
(``mqlab.acl.plain_access_validator``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqlab.acl.acl_file_watch_service import WATCH_INTERVAL
from mqlab.acl.acl_utils import JavaException
from mqlab.acl.plain_access_validator import PlainAccessValidator
from mqlab.broker.admin_broker_processor import AdminBrokerProcessor
from mqlab.broker.broker2client import Broker2Client
from mqlab.broker.broker_configuration import BrokerConfiguration, NettyClientConfig
from mqlab.broker.broker_outer_api import (
    MQBrokerException,
    RegisterBrokerResult,
    build_register_broker_request,
    parse_register_broker_response,
)
from mqlab.broker.client_manage_processor import ClientManageProcessor
from mqlab.broker.config import BrokerConfig
from mqlab.broker.consumer_manage_processor import ConsumerManageProcessor
from mqlab.broker.consumer_manager import ConsumerManager
from mqlab.broker.consumer_offset_manager import ConsumerOffsetManager
from mqlab.broker.dledger_role_change_handler import DLedgerRoleChangeHandler
from mqlab.broker.end_transaction_processor import EndTransactionProcessor
from mqlab.broker.filter import ConsumerFilterManager
from mqlab.broker.filter_server_manager import FilterServerManager
from mqlab.broker.producer_manager import ProducerManager
from mqlab.broker.pull_message_processor import PullMessageProcessor
from mqlab.broker.pull_request_hold_service import PullRequestHoldService
from mqlab.broker.query_message_processor import QueryMessageProcessor
from mqlab.broker.rebalance_lock_manager import RebalanceLockManager
from mqlab.broker.reply_message_processor import ReplyMessageProcessor
from mqlab.broker.send_message_processor import SendMessageProcessor
from mqlab.broker.slave_synchronize import (
    SYNC_ALL_FIRST_DELAY_MS,
    SYNC_ALL_PERIOD_MS,
    SlaveSynchronize,
)
from mqlab.broker.subscription_group_manager import SubscriptionGroupManager
from mqlab.broker.topic_config_manager import TopicConfigManager
from mqlab.broker.transaction.transactional_message_bridge import TransactionalMessageBridge
from mqlab.broker.transaction.transactional_message_check_listener import (
    DefaultTransactionalMessageCheckListener,
)
from mqlab.broker.transaction.transactional_message_check_service import (
    TransactionalMessageCheckService,
)
from mqlab.broker.transaction.transactional_message_service_impl import (
    TransactionalMessageServiceImpl,
)
from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.mix_all import broker_vip_channel, get_reply_topic
from mqlab.common.perm_name import PermName
from mqlab.common.topic_config import TopicConfig
from mqlab.common.topic_validator import RMQ_SYS_SCHEDULE_TOPIC as SCHEDULE_TOPIC
from mqlab.namesrv.configuration import NettyServerConfig
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.headers import NotifyConsumerIdsChangedRequestHeader
from mqlab.runtime.context import Channel, Node
from mqlab.store.broker_stats_manager import BrokerStatsManager
from mqlab.store.commit_log import StoreRuntimeException
from mqlab.store.config import BrokerRole, MessageStoreConfig
from mqlab.store.default_message_store import DefaultMessageStore
from mqlab.store.status import PutMessageResult
from mqlab.store.store_stats_service import FREQUENCY_OF_SAMPLING
from mqlab.trace.events import Kind

__all__ = ["BrokerController", "REQUIRED_EXT_FIELDS"]

#: The ``@CFNotNull`` header fields per request code (docs/reference.md §2.2) that mqlab refuses up
#: front (see ``process_request``). SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE check theirs in
#: ``decode_send_message_header_v2``. Left out on purpose: fields Java gets through without
#: (``CreateTopicRequestHeader.order`` defaults to false and is never read;
#: ``DeleteTopicRequestHeader.topic`` null fails ``validateTopic`` as blank).
REQUIRED_EXT_FIELDS: dict[int, tuple[str, ...]] = {
    RequestCode.SEND_MESSAGE: ("producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums",
                               "queueId", "sysFlag", "bornTimestamp", "flag"),
    RequestCode.SEND_REPLY_MESSAGE: ("producerGroup", "topic", "defaultTopic",
                                     "defaultTopicQueueNums", "queueId", "sysFlag",
                                     "bornTimestamp", "flag"),
    RequestCode.PULL_MESSAGE: ("consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums",
                               "sysFlag", "commitOffset", "suspendTimeoutMillis", "subVersion"),
    RequestCode.QUERY_CONSUMER_OFFSET: ("consumerGroup", "topic", "queueId"),
    RequestCode.UPDATE_CONSUMER_OFFSET: ("consumerGroup", "topic", "queueId", "commitOffset"),
    RequestCode.UPDATE_AND_CREATE_TOPIC: ("topic", "defaultTopic", "readQueueNums",
                                          "writeQueueNums", "perm", "topicFilterType"),
    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: ("topic", "queueId", "timestamp"),
    RequestCode.GET_MAX_OFFSET: ("topic", "queueId"),
    RequestCode.GET_MIN_OFFSET: ("topic", "queueId"),
    RequestCode.GET_EARLIEST_MSG_STORETIME: ("topic", "queueId"),
    RequestCode.VIEW_MESSAGE_BY_ID: ("offset",),
    RequestCode.QUERY_MESSAGE: ("topic", "key", "maxNum", "beginTimestamp", "endTimestamp"),
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: ("topic", "group", "timestamp", "isForce"),
    RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: ("topic",),
    RequestCode.GET_TOPIC_STATS_INFO: ("topic",),
    RequestCode.GET_CONSUMER_CONNECTION_LIST: ("consumerGroup",),
    RequestCode.GET_PRODUCER_CONNECTION_LIST: ("producerGroup",),
    RequestCode.GET_CONSUME_STATS: ("consumerGroup",),
    RequestCode.UNREGISTER_CLIENT: ("clientID",),
    RequestCode.CONSUMER_SEND_MSG_BACK: ("offset", "group", "delayLevel"),
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: ("consumerGroup",),
    # AdminBrokerProcessor's group, filter-server and offset admin (issue 18)
    RequestCode.DELETE_SUBSCRIPTIONGROUP: ("groupName",),
    RequestCode.REGISTER_FILTER_SERVER: ("filterServerAddr",),
    RequestCode.QUERY_CONSUME_TIME_SPAN: ("topic", "group"),
    RequestCode.QUERY_CORRECTION_OFFSET: ("compareGroup", "topic"),
    RequestCode.CLONE_GROUP_OFFSET: ("srcGroup", "destGroup"),
    # Those of END_TRANSACTION whose null Java unboxes (a NullPointerException); a null
    # producerGroup or msgId goes through there ("The producer group wrong", or a commit).
    RequestCode.END_TRANSACTION: ("tranStateTableOffset", "commitLogOffset", "commitOrRollback"),
}  # fmt: skip

C = "BrokerController"
SYNC_TIMER = "SlaveSynchronize.syncAll"
#: ``BrokerController#registerProcessor``: the codes the VIP channel's server
#: (``fastRemotingServer``, listenPort - 2) has no processor for. Such a request goes to its
#: default processor, ``AdminBrokerProcessor``, which answers REQUEST_CODE_NOT_SUPPORTED.
NOT_ON_VIP_CHANNEL = frozenset({RequestCode.PULL_MESSAGE})
SCHEDULE_TIMER = "ScheduleMessageService.DeliverDelayedMessageTimerTask"


class BrokerController(Node):
    """One broker (master by default) as a node of a driver.

    Args:
        broker_config: ``BrokerConfig`` (name, address, toggles). Defaults to broker-a on
            127.0.0.1:10911.
        message_store_config: ``MessageStoreConfig``; ``store_path_root_dir`` None → a
            fresh temp dir (kept in ``store_dir``; pass it again to restart on it).
        name: the node name; defaults to the broker name.
        rocketmq_home_dir: where the ACL files are (``<dir>/conf/plain_acl.yml``): Java's
            system property ``rocketmq.home.dir``, else the env ``ROCKETMQ_HOME``, which the
            driver resolves (``serve``) or passes (the simulation). Read only with
            ``aclEnable=true``; None: no ACL file, so only white lists admit anyone.
        netty_server_config: ``NettyServerConfig`` (``BrokerStartup`` reads it from the same
            ``broker.conf``); its ``listenPort`` is the broker config's. Shown by
            GET_BROKER_CONFIG; the drivers read ``serverChannelMaxIdleTimeSeconds``.
        netty_client_config: ``NettyClientConfig``, likewise; the drivers read
            ``clientChannelMaxIdleTimeSeconds``.
    """

    def __init__(
        self,
        broker_config: BrokerConfig | None = None,
        message_store_config: MessageStoreConfig | None = None,
        *,
        name: str | None = None,
        rocketmq_home_dir: str | None = None,
        dledger_server: Any = None,
        netty_server_config: NettyServerConfig | None = None,
        netty_client_config: NettyClientConfig | None = None,
    ) -> None:
        self.rocketmq_home_dir = rocketmq_home_dir
        self.netty_server_config = netty_server_config or NettyServerConfig()
        self.netty_client_config = netty_client_config or NettyClientConfig()
        #: with ``enableDLegerCommitLog`` (required then): the node's ``DLedgerServer``, a
        #: node of the same driver
        self.dledger_server = dledger_server
        self.dledger_role_change_handler: DLedgerRoleChangeHandler | None = None
        #: BrokerController#accessValidatorMap's PlainAccessValidator (aclEnable=true)
        self.access_validator: PlainAccessValidator | None = None
        self.broker_config = broker_config or BrokerConfig()
        self.message_store_config = message_store_config or MessageStoreConfig()
        if self.message_store_config.store_path_root_dir is None:
            self.message_store_config.store_path_root_dir = tempfile.mkdtemp(prefix="mqlab-store-")
        self.store_dir = Path(self.message_store_config.store_path_root_dir)
        # BrokerStartup#createBrokerController (4.9.3): haListenPort := listenPort + 1
        self.message_store_config.ha_listen_port = self.broker_config.listen_port + 1
        if self.message_store_config.enable_d_leger_commit_log:
            if dledger_server is None:
                raise ValueError(
                    "enableDLegerCommitLog=true: pass the node's DLedgerServer (dledger_server=), "
                    "a node of the same driver; a broker starting its own is not modelled yet"
                )
            # BrokerStartup#createBrokerController: a DLedger broker starts with brokerId -1
            self.broker_config.broker_id = -1
        super().__init__(name or self.broker_config.broker_name, self.broker_config.broker_addr)
        #: the VIP channel (``fastRemotingServer``), where a client with vipChannelEnabled
        #: sends all but its pulls, and a slave its GET_ALL_TOPIC_CONFIG
        self.vip_addr = broker_vip_channel(True, self.broker_addr)
        self.extra_addresses = (self.vip_addr,)
        #: how a channel's local address ends when it came in on the VIP channel (the host
        #: a driver binds may be another name for brokerIP1)
        self._vip_suffix = ":" + self.vip_addr.rpartition(":")[2]
        self.message_store: DefaultMessageStore | None = None
        self.register_count = 0
        self.slave_synchronize = SlaveSynchronize(self)
        #: BrokerController#updateMasterHAServerAddrPeriodically: a slave without a
        #: configured haMasterAddress takes the one each registration reply gives.
        self.update_master_ha_server_addr_periodically = False

    @property
    def is_dledger(self) -> bool:
        """``enableDLegerCommitLog``: the role comes from DLedger's elections."""
        return self.message_store_config.enable_d_leger_commit_log

    @property
    def is_slave(self) -> bool:
        return self.message_store_config.broker_role == "SLAVE"

    @property
    def broker_addr(self) -> str:
        return self.broker_config.broker_addr

    @property
    def ha_server_addr(self) -> str:
        """``brokerIP2:haListenPort``, where slaves connect. Mirrors ``BrokerController#getHAServerAddr``."""
        return f"{self.broker_config.broker_ip2}:{self.message_store_config.ha_listen_port}"

    # -- lifecycle ------------------------------------------------------------------------------
    def on_start(self) -> None:
        """``BrokerController#initialize`` + ``#start``."""
        cfg = self.broker_config
        now = self.ctx.now_ms
        tracer = self.tracer
        config_dir = self.store_dir / "config"
        config_dir.mkdir(parents=True, exist_ok=True)
        self.topic_config_manager = TopicConfigManager(cfg, config_dir, tracer=tracer, now_ms=now)
        self.topic_config_manager.load()
        # TopicConfigManager#createTopicIn*: registerBrokerAll(false, true, true), no order check
        self.topic_config_manager.on_topic_created = lambda tc: self.register_broker_all(False)
        self.subscription_group_manager = SubscriptionGroupManager(
            cfg, config_dir, tracer=tracer, now_ms=now
        )
        self.subscription_group_manager.load()
        self.consumer_offset_manager = ConsumerOffsetManager(config_dir, tracer=tracer)
        self.consumer_offset_manager.load()
        self.consumer_filter_manager = ConsumerFilterManager(clock=lambda: self.ctx.now_ms)
        self.consumer_manager = ConsumerManager(listener=self._consumer_ids_changed, tracer=tracer)
        self.producer_manager = ProducerManager(tracer=tracer)
        self.rebalance_lock_manager = RebalanceLockManager(tracer=tracer)
        self.filter_server_manager = FilterServerManager(tracer=tracer)
        self.pull_request_hold_service = PullRequestHoldService(self)
        # Set before the store loads: recovery's reput dispatches through _message_arriving.
        self._schedule_sleeping: set[int] = set()
        self._schedule_phase = (now + 1000) % 100  # ScheduleMessageService.DELAY_FOR_A_WHILE
        self.message_store = DefaultMessageStore(
            self.message_store_config, store_host=self.broker_addr, tracer=tracer,
            arriving_listener=self._message_arriving, dledger_server=self.dledger_server,
        )  # fmt: skip
        if self.message_store_config.enable_d_leger_commit_log:
            # BrokerController#initialize: the DLedger role change handler
            self.dledger_role_change_handler = DLedgerRoleChangeHandler(
                self.message_store, on_change=self._dledger_role_changed
            )
        self.message_store.store_stats_service.message_store_boot_timestamp = now
        # BrokerController#initialize: BrokerStatsManager(clusterName, enableDetailStat)
        self.broker_stats_manager = BrokerStatsManager(
            cfg.broker_cluster_name, cfg.enable_detail_stat
        )
        self.message_store.broker_stats_manager = self.broker_stats_manager
        self.message_store.reput_wakeup = self.request_reput
        self.message_store.load()
        # BrokerController#initialize: a slave with a configured haMasterAddress (6+ chars)
        # uses it; without one, it takes the address each registration reply carries.
        if self.is_slave:
            # mechanisms.md "The slave as a broker" step 1
            ha_master_address = self.message_store_config.ha_master_address
            if ha_master_address is not None and len(ha_master_address) >= 6:
                self.message_store.update_ha_master_address(ha_master_address)
            else:
                self.update_master_ha_server_addr_periodically = True
            if tracer.enabled:
                tracer.emit(
                    C + ".registerBrokerAll", "1", Kind.STATE,
                    update_periodically=self.update_master_ha_server_addr_periodically,
                    text=f"slave {cfg.broker_id}: the master's HA address comes from "
                    + ("each registration" if self.update_master_ha_server_addr_periodically
                       else f"the config ({ha_master_address})"),
                )  # fmt: skip
        # DefaultMessageStore#start: haService.start() (mechanisms.md "HA replication")
        self.message_store.start_ha(self.ctx, self.ha_server_addr)
        # BrokerController's Configuration over its four config objects (GET/UPDATE_BROKER_CONFIG)
        self.netty_server_config.listen_port = cfg.listen_port
        self.configuration = BrokerConfiguration(
            cfg, self.netty_server_config, self.netty_client_config,
            self.message_store_config, now_ms=now,
        )  # fmt: skip
        self.send_message_processor = SendMessageProcessor(self)
        self.pull_message_processor = PullMessageProcessor(self)
        self.consumer_manage_processor = ConsumerManageProcessor(self)
        self.client_manage_processor = ClientManageProcessor(self)
        self.admin_broker_processor = AdminBrokerProcessor(self)
        self.query_message_processor = QueryMessageProcessor(self)
        self.reply_message_processor = ReplyMessageProcessor(self)
        self.broker2client = Broker2Client(self)
        self.end_transaction_processor = EndTransactionProcessor(self)
        # BrokerController#initialTransaction
        self.transactional_message_service = TransactionalMessageServiceImpl(
            TransactionalMessageBridge(self)
        )
        self.transactional_message_check_listener = DefaultTransactionalMessageCheckListener(self)
        self.transactional_message_check_service = TransactionalMessageCheckService(self)
        self._initial_acl()
        self.processor_table: dict[int, Any] = {
            RequestCode.SEND_MESSAGE: self.send_message_processor,
            RequestCode.SEND_MESSAGE_V2: self.send_message_processor,
            RequestCode.SEND_BATCH_MESSAGE: self.send_message_processor,
            RequestCode.CONSUMER_SEND_MSG_BACK: self.send_message_processor,
            RequestCode.PULL_MESSAGE: self.pull_message_processor,
            RequestCode.GET_CONSUMER_LIST_BY_GROUP: self.consumer_manage_processor,
            RequestCode.UPDATE_CONSUMER_OFFSET: self.consumer_manage_processor,
            RequestCode.QUERY_CONSUMER_OFFSET: self.consumer_manage_processor,
            RequestCode.HEART_BEAT: self.client_manage_processor,
            RequestCode.UNREGISTER_CLIENT: self.client_manage_processor,
            RequestCode.CHECK_CLIENT_CONFIG: self.client_manage_processor,
            RequestCode.QUERY_MESSAGE: self.query_message_processor,
            RequestCode.VIEW_MESSAGE_BY_ID: self.query_message_processor,
            RequestCode.SEND_REPLY_MESSAGE: self.reply_message_processor,
            RequestCode.SEND_REPLY_MESSAGE_V2: self.reply_message_processor,
            RequestCode.END_TRANSACTION: self.end_transaction_processor,
        }
        ctx = self.ctx
        self.pull_request_hold_service.start()
        # DefaultMessageStore#start: handleScheduleMessageService(role), except in DLedger mode,
        # where the role change does it (changeToMaster / changeToSlave)
        if not self.is_dledger:
            self.handle_schedule_message_service(self.message_store_config.broker_role)
        ctx.set_timer(
            "ConsumerOffsetManager.persist", 10_000, self.consumer_offset_manager.persist,
            period_ms=cfg.flush_consumer_offset_interval, daemon=True,
        )  # fmt: skip
        ctx.set_timer(
            "BrokerController.registerBrokerAll", 10_000, self.register_broker_all,
            period_ms=max(10_000, min(cfg.register_name_server_period, 60_000)), daemon=True,
        )  # fmt: skip
        ctx.set_timer(
            "ClientHousekeepingService.scanExceptionChannel", 10_000, self._scan_exception_channel,
            period_ms=10_000, daemon=True,
        )  # fmt: skip
        # BrokerController#start: startProcessorByHa and handleSlaveSynchronize, except in
        # DLedger mode, where the role change does both
        if not self.is_dledger:
            self.start_processor_by_ha(self.message_store_config.broker_role)
            self.handle_slave_synchronize(self.message_store_config.broker_role)
        # StoreStatsService#run: waitForRunning(1000), then sampling, in a loop
        stats = self.message_store.store_stats_service
        ctx.set_timer(
            "StoreStatsService.sampling", FREQUENCY_OF_SAMPLING,
            lambda: stats.sampling(self.ctx.now_ms), period_ms=FREQUENCY_OF_SAMPLING, daemon=True,
        )  # fmt: skip
        # StatsItemSet#init: the samplings every 10 s, 10 min and 1 h, first at once
        self.broker_stats_manager.start(ctx.set_timer, lambda: self.ctx.now_ms)
        self.request_reput()  # dispatch anything recovered but not yet in a consume queue
        # BrokerController#start: a DLedger broker registers when its role is known
        if self.dledger_role_change_handler is None:
            self.register_broker_all()
        if tracer.enabled:
            # The store path is left out on purpose: it differs between runs, behaviour not.
            tracer.emit(C, "start", Kind.STATE, address=self.broker_addr,
                        text=f"broker {cfg.broker_name} started on {self.broker_addr}")  # fmt: skip

    def _initial_acl(self) -> None:
        """``BrokerController#initialAcl``: with ``aclEnable``, load the ACL files and watch
        them (``PlainPermissionManager#watch``) every ``WATCH_INTERVAL`` ms.

        Raises:
            ValueError: a file 4.9.3 would not start with (empty, not YAML, a bad account or
                pattern), naming the reason.
        """
        if not self.broker_config.acl_enable:
            return
        try:
            self.access_validator = PlainAccessValidator(
                self.rocketmq_home_dir, now_ms=lambda: self.ctx.now_ms, tracer=self.tracer
            )
        except JavaException as e:
            raise ValueError(f"aclEnable=true but the ACL files do not load: {e}") from None
        self.ctx.set_timer(
            "AclFileWatchService.run", WATCH_INTERVAL, self.access_validator.watch,
            period_ms=WATCH_INTERVAL, daemon=True,
        )  # fmt: skip
        if self.tracer.enabled:
            m = self.access_validator.acl_plug_engine
            self.tracer.emit(C + ".initialAcl", "acl", Kind.STATE, files=[m.relative(f) for f in m.file_list],
                             text=f"ACL on: {len(m.file_list)} file(s), "
                             f"{len(m.access_key_table)} access key(s)")  # fmt: skip

    def on_stop(self) -> None:
        """``BrokerController#shutdown``: persist everything, unregister, flush the store."""
        self.consumer_offset_manager.persist()
        self.topic_config_manager.persist()
        self.subscription_group_manager.persist()
        if self.message_store is not None:
            self.message_store.do_reput()
            self.message_store.schedule_message_service.persist()
            self.message_store.shutdown()

    # -- dispatch ---------------------------------------------------------------------------------
    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """``NettyRemotingAbstract#processRequestCommand``: the code's processor, or the default.

        A request missing one of its header's ``@CFNotNull`` fields is refused with
        SYSTEM_ERROR "the custom field <name> is null". Java 4.9.3 logs that check's failure
        and goes on with nulls (which later throw, or end up as null keys that its
        ConcurrentHashMaps refuse): in ``RemotingCommand#decodeCommandCustomHeader`` the
        ``throw`` (RemotingCommand.java:256) sits inside the per-field ``try`` whose
        ``catch (Throwable e)`` only logs (l.281-282). mqlab refuses up front, so no table
        ever holds a ``None`` topic or group.

        With ACL on, the validator runs first, before any processor or field check (the RPC
        hook's place in ``NettyRemotingAbstract#processRequestCommand``); a refusal is
        SYSTEM_ERROR with ``exceptionSimpleDesc`` of the exception, and no answer at all to
        a one-way request.

        A ``StoreRuntimeException`` out of a processor (the store threw, as Java's does)
        becomes SYSTEM_ERROR with its ``exceptionSimpleDesc`` text, as in Java.
        """
        if self.access_validator is not None:
            refusal = self.access_validator.do_before_request(channel.remote_address, request)
            if refusal is not None:
                return None if request.is_oneway else refusal
        required = REQUIRED_EXT_FIELDS.get(request.code)
        if required:
            ext = request.ext_fields or {}
            for name in required:
                if ext.get(name) is None:
                    return RemotingCommand.create_response(
                        ResponseCode.SYSTEM_ERROR,
                        f"the custom field <{name}> is null",
                        ext_fields={},
                    )
        processor = self.processor_table.get(request.code, self.admin_broker_processor)
        if request.code in NOT_ON_VIP_CHANNEL and channel.local_address.endswith(self._vip_suffix):
            processor = self.admin_broker_processor  # the fast server's default
        try:
            return processor.process_request(channel, request)
        except StoreRuntimeException as e:
            # NettyRemotingAbstract#processRequestCommand catches what a processor throws
            # and answers SYSTEM_ERROR with RemotingHelper.exceptionSimpleDesc(e).
            if self.tracer.enabled:
                self.tracer.emit(C, "processRequestCommand", code="SYSTEM_ERROR", remark=str(e),
                                 text=f"request {request.code} threw {e.message!r}")  # fmt: skip
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(e), ext_fields={})

    def channel_inactive(self, channel: Channel) -> None:
        """``ClientHousekeepingService#onChannelClose``."""
        self.consumer_manager.do_channel_close_event(channel.remote_address, channel)
        self.producer_manager.do_channel_close_event(channel.remote_address, channel)
        self.pull_request_hold_service.channel_closed(channel)
        self.filter_server_manager.do_channel_close_event(channel.remote_address, channel)

    # -- store access used by processors ------------------------------------------------------------
    def put_message(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        result = self.message_store.put_message(msg, self.ctx.now_ms)
        self.request_reput()
        return result

    def put_messages(
        self,
        msgs: list[MessageExtBrokerInner],
        batch_properties: dict[str, str],
        body_length: int,
        own_properties: list[str] | None = None,
    ) -> PutMessageResult:
        result = self.message_store.put_messages(
            msgs, self.ctx.now_ms, batch_properties=batch_properties, body_length=body_length,
            own_properties=own_properties,
        )  # fmt: skip
        self.request_reput()
        return result

    def request_reput(self) -> None:
        """Arm ReputMessageService for right after this event (Java polls every 1 ms)."""
        if not self.ctx.has_timer("ReputMessageService.doReput"):
            self.ctx.set_timer("ReputMessageService.doReput", 0, self._do_reput)

    def _do_reput(self) -> None:
        self.message_store.do_reput()

    def _message_arriving(
        self, topic, queue_id, logic_offset, tags_code, store_timestamp, bitmap, properties
    ) -> None:
        """``NotifyMessageArrivingListener#arriving``: only a master with long polling on."""
        if topic == SCHEDULE_TOPIC and (queue_id + 1) in self._schedule_sleeping:
            self._wake_schedule_level(queue_id + 1)
        # NOTE: performance: with no parked pull there is nothing to wake (the usual case);
        # skips two config reads and a call per dispatched message (~0.3 µs).
        if not self.pull_request_hold_service.pull_request_table:
            return
        if (
            self.broker_config.long_polling_enable
            and self.message_store_config.broker_role != "SLAVE"
        ):
            self.pull_request_hold_service.notify_message_arriving(
                topic, queue_id, logic_offset, tags_code, store_timestamp, bitmap, properties
            )

    def _deliver_delayed(self, level: int) -> None:
        """One run of ``DeliverDelayedMessageTimerTask`` for ``level``, then re-arm.

        NOTE: performance — RocketMQ re-runs every level's task every 100 ms. Most runs find
        an empty queue or a head that is not due, and change nothing. So when a run says
        "again in 100 ms", the next run is moved to the first 100 ms tick (same phase) at or
        after the head's delivery time, and an empty level sleeps until a message for it is
        dispatched. Deliveries happen at exactly the ticks they would with polling; 18 idle
        levels no longer cost 180 events per virtual second (a 4 h 45 min retry test: 61 s
        → under 2 s).
        """
        sms = self.message_store.schedule_message_service
        now = self.ctx.now_ms
        delay = sms.execute_on_time_up(level, now)
        self.request_reput()
        if delay is None:  # the service was stopped: the chain ends, as in Java
            return
        if delay == sms.DELAY_FOR_A_WHILE:
            head = self._schedule_head_due(level, now)
            if head is None:
                self._schedule_sleeping.add(level)
                return
            delay = max(delay, self._schedule_tick_at_or_after(head) - now)
        self._arm_schedule_level(level, delay)

    def _arm_schedule_level(self, level: int, delay: int) -> None:
        self.ctx.set_timer(
            "ScheduleMessageService.DeliverDelayedMessageTimerTask", delay,
            lambda: self._deliver_delayed(level), key=f"level {level}", daemon=True,
        )  # fmt: skip

    def _schedule_head_due(self, level: int, now: int) -> int | None:
        """Delivery time of the level's next undelivered unit, or None if there is none."""
        sms = self.message_store.schedule_message_service
        offset = sms.task_offset_table.get(level, 0)
        cq = self.message_store.find_consume_queue(SCHEDULE_TOPIC, level - 1)
        if offset >= cq.get_max_offset_in_queue():
            return None
        unit = cq.get_unit(offset)
        if unit is None:
            return now  # let the task look (it knows the offset rules)
        return sms.correct_deliver_timestamp(now, unit[2], level)

    def _schedule_tick_at_or_after(self, t: int) -> int:
        """The first 100 ms tick of the delivery chains (their phase) at or after ``t``."""
        step = self.message_store.schedule_message_service.DELAY_FOR_A_WHILE
        return t + (self._schedule_phase - t) % step

    def _wake_schedule_level(self, level: int) -> None:
        """A message reached a sleeping level: arm its task for the tick it becomes due."""
        self._schedule_sleeping.discard(level)
        now = self.ctx.now_ms
        head = self._schedule_head_due(level, now)
        due = self._schedule_tick_at_or_after(max(now + 1, head if head is not None else now))
        self._arm_schedule_level(level, due - now)

    def channel_max_idle_ms(self, *, server_side: bool) -> int:
        """``serverChannelMaxIdleTimeSeconds`` on the channels it accepted,
        ``clientChannelMaxIdleTimeSeconds`` on those it opened (to the name servers, a
        master, clients it calls back): each ``IdleStateHandler`` of the broker's remoting
        server and client (120 s unless ``broker.conf`` says otherwise)."""
        if server_side:
            return self.netty_server_config.server_channel_max_idle_time_seconds * 1000
        return self.netty_client_config.client_channel_max_idle_time_seconds * 1000

    # -- name server ----------------------------------------------------------------------------------
    def _dledger_role_changed(self, role: BrokerRole, broker_id: int) -> None:
        """``changeToSlave`` / ``changeToMaster`` after the handler set the id and role.

        ``changeToSlave``: the schedule service stops, the transaction check stops
        (``shutdownProcessorByHa``), SlaveSynchronize is armed (first in 3 s, then every
        10 s, master address unknown until a registration reply names one).
        ``changeToMaster``: SlaveSynchronize stops and forgets the master, the schedule
        service and the transaction check start. Both then ``registerBrokerAll(true, true,
        true)``. mechanisms.md "DLedger commit log" (the role change table, steps 4 and 5).
        """
        self.broker_config.broker_id = broker_id
        if role == BrokerRole.SLAVE:
            self.handle_schedule_message_service(role)
            self.shutdown_processor_by_ha()
            self.handle_slave_synchronize(role)
        else:
            self.handle_slave_synchronize(role)
            self.handle_schedule_message_service(role)
            self.start_processor_by_ha(role)
        if self.tracer.enabled:
            self.tracer.emit(
                C + ".changeRole", "4" if role == BrokerRole.SLAVE else "5", Kind.STATE,
                role=role.value, broker_id=broker_id,
                slave_synchronize=self.ctx.has_timer(SYNC_TIMER),
                schedule=self.message_store.schedule_message_service.started,
                transaction_check=self.transactional_message_check_service.started,
                text=f"broker {self.broker_config.broker_name} is {role.value} with brokerId {broker_id}",
            )  # fmt: skip
        self.register_broker_all(True)

    def handle_slave_synchronize(self, role: BrokerRole) -> None:
        """``BrokerController#handleSlaveSynchronize``: a SLAVE (re)arms ``syncAll`` (first in
        3 s, then every 10 s); any other role cancels it. Either way the master address is
        forgotten until the next registration reply (mechanisms.md "SlaveSynchronize" step 2).
        A chain already waiting for the master goes on, as Java's ``cancel(false)`` lets a
        running task finish; its next syncs find no master address and skip."""
        self.ctx.cancel_timer(SYNC_TIMER)
        self.slave_synchronize.set_master_addr(None)
        if role == BrokerRole.SLAVE:
            self.ctx.set_timer(
                SYNC_TIMER, SYNC_ALL_FIRST_DELAY_MS, self.slave_synchronize.sync_all,
                period_ms=SYNC_ALL_PERIOD_MS, daemon=True,
            )  # fmt: skip

    def handle_schedule_message_service(self, role: BrokerRole) -> None:
        """``DefaultMessageStore#handleScheduleMessageService``: a SLAVE delivers no delayed
        messages (its master does, and the slave gets them by replication), so its
        ``ScheduleMessageService`` stops; any other role starts it (nothing if started)."""
        sms = self.message_store.schedule_message_service
        ctx = self.ctx
        if role == BrokerRole.SLAVE:
            if sms.started:
                sms.shutdown()
                for level in sms.delay_level_table:
                    ctx.cancel_timer(SCHEDULE_TIMER, key=f"level {level}")
                ctx.cancel_timer("ScheduleMessageService.persist")
                self._schedule_sleeping.clear()
            return
        for level, delay in sms.start(ctx.now_ms):
            ctx.set_timer(
                SCHEDULE_TIMER, delay, lambda lv=level: self._deliver_delayed(lv),
                key=f"level {level}", daemon=True,
            )  # fmt: skip
        if not ctx.has_timer("ScheduleMessageService.persist"):
            # ScheduleMessageService#start: scheduleAtFixedRate(persist, 10000, flushDelayOffsetInterval)
            ctx.set_timer(
                "ScheduleMessageService.persist", 10_000, sms.persist,
                period_ms=self.message_store_config.flush_delay_offset_interval, daemon=True,
            )  # fmt: skip

    def start_processor_by_ha(self, role: BrokerRole) -> None:
        """``BrokerController#startProcessorByHa``: a master runs the transaction check."""
        if role != BrokerRole.SLAVE:
            self.transactional_message_check_service.start()

    def shutdown_processor_by_ha(self) -> None:
        """``BrokerController#shutdownProcessorByHa``: the transaction check stops."""
        self.transactional_message_check_service.shutdown()

    def register_broker_all(
        self, check_order_config: bool = True, on_done: Callable[[], None] | None = None
    ) -> None:
        """``registerBrokerAll``: REGISTER_BROKER with every topic config to the name server.

        With ``check_order_config`` (start, the 30 s task, UPDATE_AND_CREATE_TOPIC), the
        first successful reply's ORDER_TOPIC_CONFIG KV table sets which topics are ordered
        (``doRegisterBrokerAll`` → ``TopicConfigManager#updateOrderTopicConfig``); a reply
        without a table changes nothing. ``on_done``: called once every name server has
        answered or failed (``BrokerOuterAPI#registerBrokerAll``'s CountDownLatch, which
        UPDATE_AND_CREATE_TOPIC waits on before it answers); at once without a name server.
        """
        cfg = self.broker_config
        if not cfg.name_server_addr:
            if on_done is not None:
                on_done()
            return
        data_version, table = self.topic_config_manager.build_topic_config_serialize_wrapper()
        perm = cfg.broker_permission
        if not PermName.is_writeable(perm) or not PermName.is_readable(perm):
            # A broker that is not read+write registers every topic with its own
            # permission: new TopicConfig(name, readQueueNums, writeQueueNums, brokerPermission)
            # (the other fields at their defaults); its own table is left as it is.
            table = {
                name: TopicConfig(name, tc.read_queue_nums, tc.write_queue_nums, perm)
                for name, tc in table.items()
            }
        request = build_register_broker_request(
            cluster_name=cfg.broker_cluster_name, broker_addr=self.broker_addr,
            broker_name=cfg.broker_name, broker_id=cfg.broker_id,
            ha_server_addr=self.ha_server_addr,
            topic_config_table=table, data_version=data_version,
            filter_server_list=self.filter_server_manager.build_new_filter_server_list(),
        )  # fmt: skip
        self.register_count += 1
        if self.tracer.enabled:
            self.tracer.emit(C + ".registerBrokerAll", "register", topics=len(table),
                             text=f"register {len(table)} topic(s) with {cfg.name_server_addr}")  # fmt: skip
        results: list[RegisterBrokerResult] = []  # registerBrokerResultList of this round
        addrs = cfg.name_server_addr.split(";")
        waiting = [len(addrs)]  # the CountDownLatch

        def registered(response: RemotingCommand | None, error: Exception | None) -> None:
            try:
                _registered_one(response, error)
            finally:
                waiting[0] -= 1
                if waiting[0] == 0 and on_done is not None:
                    on_done()

        def _registered_one(response: RemotingCommand | None, error: Exception | None) -> None:
            if error is None and response is not None:
                try:
                    result = parse_register_broker_response(response, self.broker_addr)
                except (MQBrokerException, RemotingCommandException) as e:
                    error = e
                else:
                    results.append(result)
                    if len(results) == 1:  # registerBrokerResultList.get(0)
                        self._registered(result, check_order_config)
            if error is not None and self.tracer.enabled:
                self.tracer.emit(C + ".registerBrokerAll", "failed", Kind.ERROR, error=str(error))

        for addr in addrs:
            self.ctx.invoke_async(addr, request, cfg.register_broker_timeout_mills, registered)

    def _registered(self, result: RegisterBrokerResult, check_order_config: bool) -> None:
        """``doRegisterBrokerAll`` on the first reply: the master's addresses, the order topics.

        mechanisms.md "The slave as a broker" step 2: a slave learns its master's HA address
        (to the store, which replicates from it) and broker address (to SlaveSynchronize); a
        master's reply carries neither, and Java sets SlaveSynchronize's address to null then.
        """
        if self.update_master_ha_server_addr_periodically and result.ha_server_addr is not None:
            self.message_store.update_ha_master_address(result.ha_server_addr)
        self.slave_synchronize.set_master_addr(result.master_addr)
        if self.is_slave and self.tracer.enabled:
            self.tracer.emit(
                C + ".registerBrokerAll", "2", master_addr=result.master_addr,
                ha_server_addr=result.ha_server_addr,
                text=f"registered as slave {self.broker_config.broker_id}: master "
                f"{result.master_addr}, HA {result.ha_server_addr}",
            )  # fmt: skip
        if check_order_config:
            self.topic_config_manager.update_order_topic_config(result.kv_table, self.ctx.now_ms)

    # -- consumers --------------------------------------------------------------------------------------
    def _consumer_ids_changed(self, event: str, group: str, *args: Any) -> None:
        """``DefaultConsumerIdsChangeListener#handle``."""
        if event == "CHANGE":
            channels = args[0] if args else []
            if not self.broker_config.notify_consumer_ids_changed_enable:
                return
            for channel in channels:
                req = RemotingCommand.create_request(
                    RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
                    NotifyConsumerIdsChangedRequestHeader(consumer_group=group).to_ext_fields(),
                )
                self.ctx.send_request_oneway(channel, req)
            if self.tracer.enabled and channels:
                self.tracer.emit(
                    "DefaultConsumerIdsChangeListener", "notify", group=group,
                    channels=len(channels),
                    text=f"NOTIFY_CONSUMER_IDS_CHANGED to {len(channels)} consumer(s) of {group}",
                )  # fmt: skip
        elif event == "UNREGISTER":
            self.consumer_filter_manager.unregister(group)
        elif event == "REGISTER":
            self.consumer_filter_manager.register_group(group, args[0] if args else [])

    def _scan_exception_channel(self) -> None:
        now = self.ctx.now_ms
        # Expired channels are closed; the close event then finds nothing left to remove.
        for channel in self.consumer_manager.scan_not_active_channel(now):
            self.ctx.close_channel(channel)
        for channel in self.producer_manager.scan_not_active_channel(now):
            self.ctx.close_channel(channel)
        for channel in self.filter_server_manager.scan_not_active_channel(now):
            self.ctx.close_channel(channel)

    def system_topic_extras(self) -> list[str]:
        cfg = self.broker_config
        return [cfg.broker_cluster_name, cfg.broker_name, get_reply_topic(cfg.broker_cluster_name)]

    # -- inspection ---------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"BrokerController({self.name!r}, {self.broker_addr})"
