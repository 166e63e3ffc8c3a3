"""The broker's live settings: what GET_BROKER_CONFIG (26) shows and UPDATE_BROKER_CONFIG (25) edits.

Mirrors the broker's ``Configuration`` (common, RocketMQ 4.9.3), which ``BrokerController``
builds over four config objects in this order: ``BrokerConfig``, ``NettyServerConfig``,
``NettyClientConfig``, ``MessageStoreConfig``.

How Java writes the text (``Configuration#getAllConfigsFormatString``):

1. ``MixAll#object2Properties`` turns each object into a ``Properties``, one
   ``setProperty`` per non-static, non-null field in declaration order
   (``getDeclaredFields``), the value's ``toString``;
2. ``Configuration#merge`` puts those entries, in that ``Properties``' iteration order,
   into ``allConfigs`` (one more ``Properties``), object by object;
3. ``MixAll#properties2String`` writes ``key=value\\n`` per entry of ``allConfigs`` in its
   iteration order.

A JDK 17 ``Properties`` iterates an internal ``ConcurrentHashMap``, whose order depends on
the keys' hashes and on the insertion history; ``mqlab.common.java_hash_map.JavaProperties``
replays both, so the text comes out in the order a 4.9.3 broker on JDK 17 writes it
(checked against a running 4.9.3 broker: the same 177 keys in the same order, given its
``rocketmqHome``).

Fields mqlab does not model (the HA tuning, the consume-queue ext sizes, the
Netty client settings, ...) are shown with their Java defaults (``bitMapLengthConsumeQueueExt``
with the value ``ConsumerFilterManager`` gives it: 112 for the default bloom settings), so
the key set is Java's;
an update to one is kept and shown, and changes nothing else. Values that depend on the
host in Java are mqlab's own (``brokerIP1``, ``brokerName``, ``storePathRootDir``, the
thread counts Java derives from the CPU count: mqlab fixes 4 CPUs); a null field is left
out, as Java leaves out ``rocketmqHome`` when ``ROCKETMQ_HOME`` is unset.

``UPDATE_BROKER_CONFIG`` (``Configuration#update``): a key already in ``allConfigs`` takes
the new text (``mergeIfExist``), then every object takes every key it has a setter for
(``MixAll#properties2Object``: ``Integer.parseInt`` / ``Long.parseLong`` /
``Boolean.parseBoolean``; ``brokerRole`` and ``flushDiskType`` through their
``setXxx(String)`` overloads, ``Enum#valueOf``, so a running broker really changes role, as a
4.9.3 broker does; a value that does not parse is skipped silently), and the data version
moves on. The next GET merges the objects' fields in again, so a skipped value shows the
field's real value. Java also
writes the text to ``broker.properties`` under the store's config dir
(``Configuration#persist``); mqlab, which also serves real sockets, writes no file from a
request (as for the name server's UPDATE_NAMESRV_CONFIG).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mqlab.common.java_hash_map import JavaProperties
from mqlab.common.properties import java_name
from mqlab.common.topic_config import DataVersion
from mqlab.store.config import BrokerRole, FlushDiskType

__all__ = ["BrokerConfiguration", "NettyClientConfig"]

# Declared instance fields of the four 4.9.3 classes, in declaration order, with their
# Java types (what ``properties2Object`` parses by).
_BROKER_CONFIG = """rocketmqHome:String namesrvAddr:String brokerIP1:String brokerIP2:String
brokerName:String brokerClusterName:String brokerId:long brokerPermission:int
defaultTopicQueueNums:int autoCreateTopicEnable:boolean clusterTopicEnable:boolean
brokerTopicEnable:boolean autoCreateSubscriptionGroup:boolean messageStorePlugIn:String
msgTraceTopicName:String traceTopicEnable:boolean sendMessageThreadPoolNums:int
putMessageFutureThreadPoolNums:int pullMessageThreadPoolNums:int
processReplyMessageThreadPoolNums:int queryMessageThreadPoolNums:int
adminBrokerThreadPoolNums:int clientManageThreadPoolNums:int consumerManageThreadPoolNums:int
heartbeatThreadPoolNums:int endTransactionThreadPoolNums:int flushConsumerOffsetInterval:int
flushConsumerOffsetHistoryInterval:int rejectTransactionMessage:boolean
fetchNamesrvAddrByAddressServer:boolean sendThreadPoolQueueCapacity:int
putThreadPoolQueueCapacity:int pullThreadPoolQueueCapacity:int replyThreadPoolQueueCapacity:int
queryThreadPoolQueueCapacity:int clientManagerThreadPoolQueueCapacity:int
consumerManagerThreadPoolQueueCapacity:int heartbeatThreadPoolQueueCapacity:int
endTransactionPoolQueueCapacity:int filterServerNums:int longPollingEnable:boolean
shortPollingTimeMills:long notifyConsumerIdsChangedEnable:boolean highSpeedMode:boolean
commercialEnable:boolean commercialTimerCount:int commercialTransCount:int
commercialBigCount:int commercialBaseCount:int transferMsgByHeap:boolean maxDelayTime:int
regionId:String registerBrokerTimeoutMills:int slaveReadEnable:boolean
disableConsumeIfConsumerReadSlowly:boolean consumerFallbehindThreshold:long
brokerFastFailureEnable:boolean waitTimeMillsInSendQueue:long waitTimeMillsInPullQueue:long
waitTimeMillsInHeartbeatQueue:long waitTimeMillsInTransactionQueue:long
startAcceptSendRequestTimeStamp:long traceOn:boolean enableCalcFilterBitMap:boolean
expectConsumerNumUseFilter:int maxErrorRateOfBloomFilter:int filterDataCleanTimeSpan:long
filterSupportRetry:boolean enablePropertyFilter:boolean compressedRegister:boolean
forceRegister:boolean registerNameServerPeriod:int transactionTimeOut:long
transactionCheckMax:int transactionCheckInterval:long aclEnable:boolean
storeReplyMessageEnable:boolean enableDetailStat:boolean autoDeleteUnusedStats:boolean
isolateLogEnable:boolean"""

_NETTY_SERVER_CONFIG = """listenPort:int serverWorkerThreads:int serverCallbackExecutorThreads:int
serverSelectorThreads:int serverOnewaySemaphoreValue:int serverAsyncSemaphoreValue:int
serverChannelMaxIdleTimeSeconds:int serverSocketSndBufSize:int serverSocketRcvBufSize:int
writeBufferHighWaterMark:int writeBufferLowWaterMark:int serverSocketBacklog:int
serverPooledByteBufAllocatorEnable:boolean useEpollNativeSelector:boolean"""

_NETTY_CLIENT_CONFIG = """clientWorkerThreads:int clientCallbackExecutorThreads:int
clientOnewaySemaphoreValue:int clientAsyncSemaphoreValue:int connectTimeoutMillis:int
channelNotActiveInterval:long clientChannelMaxIdleTimeSeconds:int clientSocketSndBufSize:int
clientSocketRcvBufSize:int clientPooledByteBufAllocatorEnable:boolean
clientCloseSocketIfTimeout:boolean useTLS:boolean writeBufferHighWaterMark:int
writeBufferLowWaterMark:int"""

_MESSAGE_STORE_CONFIG = """storePathRootDir:String storePathCommitLog:String
readOnlyCommitLogStorePaths:String mappedFileSizeCommitLog:int mappedFileSizeConsumeQueue:int
enableConsumeQueueExt:boolean mappedFileSizeConsumeQueueExt:int bitMapLengthConsumeQueueExt:int
flushIntervalCommitLog:int commitIntervalCommitLog:int useReentrantLockWhenPutMessage:boolean
flushCommitLogTimed:boolean flushIntervalConsumeQueue:int cleanResourceInterval:int
deleteCommitLogFilesInterval:int deleteConsumeQueueFilesInterval:int
destroyMapedFileIntervalForcibly:int redeleteHangedFileInterval:int deleteWhen:String
diskMaxUsedSpaceRatio:int fileReservedTime:int putMsgIndexHightWater:int maxMessageSize:int
checkCRCOnRecover:boolean flushCommitLogLeastPages:int commitCommitLogLeastPages:int
flushLeastPagesWhenWarmMapedFile:int flushConsumeQueueLeastPages:int
flushCommitLogThoroughInterval:int commitCommitLogThoroughInterval:int
flushConsumeQueueThoroughInterval:int maxTransferBytesOnMessageInMemory:int
maxTransferCountOnMessageInMemory:int maxTransferBytesOnMessageInDisk:int
maxTransferCountOnMessageInDisk:int accessMessageInMemoryMaxRatio:int messageIndexEnable:boolean
maxHashSlotNum:int maxIndexNum:int maxMsgsNumBatch:int messageIndexSafe:boolean haListenPort:int
haSendHeartbeatInterval:int haHousekeepingInterval:int haTransferBatchSize:int
haMasterAddress:String haSlaveFallbehindMax:int brokerRole:BrokerRole
flushDiskType:FlushDiskType syncFlushTimeout:int slaveTimeout:int messageDelayLevel:String
flushDelayOffsetInterval:long cleanFileForciblyEnable:boolean warmMapedFileEnable:boolean
offsetCheckInSlave:boolean debugLockEnable:boolean duplicationEnable:boolean
diskFallRecorded:boolean osPageCacheBusyTimeOutMills:long defaultQueryMaxNum:int
transientStorePoolEnable:boolean transientStorePoolSize:int
fastFailIfNoBufferInStorePool:boolean enableDLegerCommitLog:boolean dLegerGroup:String
dLegerPeers:String dLegerSelfId:String preferredLeaderId:String isEnableBatchPush:boolean
enableScheduleMessageStats:boolean enableLmq:boolean enableMultiDispatch:boolean
maxLmqConsumeQueueNum:int enableScheduleAsyncDeliver:boolean
scheduleAsyncDeliverMaxPendingLimit:int scheduleAsyncDeliverMaxResendNum2Blocked:int"""

#: Java defaults of the MessageStoreConfig fields mqlab's store does not model (None: null).
_UNMODELLED_STORE_DEFAULTS: dict[str, str | None] = {
    "readOnlyCommitLogStorePaths": None,
    "mappedFileSizeConsumeQueueExt": str(48 * 1024 * 1024),
    "bitMapLengthConsumeQueueExt": "64",
    "redeleteHangedFileInterval": str(1000 * 120),
    "putMsgIndexHightWater": "600000",
    "flushLeastPagesWhenWarmMapedFile": str(1024 // 4 * 16),
    "commitCommitLogThoroughInterval": "200",
    "messageIndexSafe": "false",
    "warmMapedFileEnable": "false",
    "debugLockEnable": "false",
    "fastFailIfNoBufferInStorePool": "false",
    "enableScheduleMessageStats": "true",
    "enableLmq": "false",
    "enableMultiDispatch": "false",
    "maxLmqConsumeQueueNum": "20000",
    "scheduleAsyncDeliverMaxResendNum2Blocked": "3",
}

#: Java names that ``java_name`` of mqlab's snake_case field does not give.
_ALIASES = {
    "namesrvAddr": "name_server_addr",
    "brokerIP1": "broker_ip1",
    "brokerIP2": "broker_ip2",
    "checkCRCOnRecover": "check_crc_on_recover",
    "useTLS": "use_tls",
}

_INT = re.compile(r"[+-]?[0-9]+")


def _fields(spec: str) -> list[tuple[str, str]]:
    return [tuple(item.split(":")) for item in spec.split()]  # type: ignore[misc]


@dataclass(slots=True)
class NettyClientConfig:
    """The broker's client-side Netty settings (to the name server). Mirrors
    ``NettyClientConfig`` (remoting/netty, RocketMQ 4.9.3) with ``NettySystemConfig``'s
    defaults (no -D overrides); ``clientCallbackExecutorThreads`` is the CPU count
    (mqlab: 4). mqlab reads none of these; they are here for GET/UPDATE_BROKER_CONFIG."""

    client_worker_threads: int = 4
    client_callback_executor_threads: int = 4
    client_oneway_semaphore_value: int = 65535
    client_async_semaphore_value: int = 65535
    connect_timeout_millis: int = 3000
    channel_not_active_interval: int = 1000 * 60
    client_channel_max_idle_time_seconds: int = 120
    client_socket_snd_buf_size: int = 0
    client_socket_rcv_buf_size: int = 0
    client_pooled_byte_buf_allocator_enable: bool = False
    client_close_socket_if_timeout: bool = True
    use_tls: bool = False
    write_buffer_high_water_mark: int = 0
    write_buffer_low_water_mark: int = 0


def bloom_filter_bits(f: int, n: int) -> int:
    """``BloomFilter.createByFn(f, n).getM()`` (filter/util, RocketMQ 4.9.3): the bits for
    ``n`` elements at an ``f`` % error rate, rounded up to whole bytes (20 %, 32 → 112)."""
    error_rate = f / 100.0
    m = math.ceil(n * (math.log(1 / error_rate) / math.log(2)) * (math.log(math.e) / math.log(2)))
    return 8 * math.ceil(m / 8.0)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.name)
    return str(value)


def _parse(java_type: str, text: str) -> Any:
    """``MixAll#properties2Object``'s parse of one value; raises ValueError to skip it."""
    if java_type in ("int", "long"):
        limit = 2**31 if java_type == "int" else 2**63
        if not _INT.fullmatch(text) or not -limit <= int(text) < limit:
            raise ValueError(text)
        return int(text)
    if java_type == "boolean":
        return text.lower() == "true"
    if java_type == "String":
        return text
    # MessageStoreConfig#setBrokerRole(String) / #setFlushDiskType(String): Enum#valueOf
    enum_type = {"BrokerRole": BrokerRole, "FlushDiskType": FlushDiskType}[java_type]
    if text not in enum_type.__members__:
        raise ValueError(text)  # IllegalArgumentException, ignored by properties2Object
    return enum_type[text]


_JAVA_NAMES: dict[type, dict[str, str]] = {}


class BrokerConfiguration:
    """``Configuration`` over a broker's four config objects.

    Args:
        broker_config: the broker's ``BrokerConfig``.
        netty_server_config: ``NettyServerConfig`` (its ``listenPort`` is the broker's port).
        netty_client_config: ``NettyClientConfig``.
        message_store_config: the store's ``MessageStoreConfig``.
        now_ms: the data version's creation time (Java: ``System.currentTimeMillis()``).
    """

    def __init__(
        self,
        broker_config: Any,
        netty_server_config: Any,
        netty_client_config: Any,
        message_store_config: Any,
        now_ms: int = 0,
    ) -> None:
        self.sections: list[tuple[Any, list[tuple[str, str]]]] = [
            (broker_config, _fields(_BROKER_CONFIG)),
            (netty_server_config, _fields(_NETTY_SERVER_CONFIG)),
            (netty_client_config, _fields(_NETTY_CLIENT_CONFIG)),
            (message_store_config, _fields(_MESSAGE_STORE_CONFIG)),
        ]
        #: Values of Java fields mqlab does not model (Java defaults, then updates).
        self.unmodelled: dict[str, str | None] = dict(_UNMODELLED_STORE_DEFAULTS)
        # ConsumerFilterManager's constructor sets it to its bloom filter's bit count
        self.unmodelled["bitMapLengthConsumeQueueExt"] = str(
            bloom_filter_bits(
                broker_config.max_error_rate_of_bloom_filter,
                broker_config.expect_consumer_num_use_filter,
            )
        )
        self.data_version = DataVersion(timestamp=now_ms)
        # Configuration#registerConfig, in order: each object's values are read now (Java
        # reads them at registration): a shallow copy of each object (its fields are plain
        # values) and of the unmodelled ones; the merged ``Properties`` is built from them
        # when first read.
        # NOTE: performance — building it took ~6 % of an explored run (mqlab.explore),
        # which never reads it; then reading the values as text at registration ~160 µs a
        # broker, the copies ~20 µs.
        self._registered: tuple[list[tuple[Any, list[tuple[str, str]]]], dict] | None = (
            [(copy.copy(obj), fields) for obj, fields in self.sections],
            dict(self.unmodelled),
        )
        self._all_configs: JavaProperties | None = None

    @property
    def all_configs(self) -> JavaProperties:
        """``Configuration#allConfigs``: every registered object's properties, merged."""
        if self._all_configs is None:
            self._all_configs = JavaProperties()
            assert self._registered is not None
            registered, unmodelled = self._registered
            self._registered = None
            now = self.unmodelled
            self.unmodelled = unmodelled  # the values as they were at registration
            try:
                for obj, fields in registered:
                    self._merge(self._properties(self._object_to_pairs(obj, fields)))
            finally:
                self.unmodelled = now
        return self._all_configs

    @staticmethod
    def _attr(obj: Any, name: str) -> str | None:
        attr = _ALIASES.get(name)
        if attr is None:
            # NOTE: performance — the Java-name table per config class, built once (it was
            # rebuilt for every property: ~40 % of building a broker, see mqlab.explore).
            names = _JAVA_NAMES.get(type(obj))
            if names is None:
                names = _JAVA_NAMES[type(obj)] = {
                    java_name(f.name): f.name for f in dataclasses.fields(obj)
                }
            attr = names.get(name)
        return attr if attr is not None and hasattr(obj, attr) else None

    def _value(self, obj: Any, name: str) -> str | None:
        attr = self._attr(obj, name)
        if attr is None:
            return self.unmodelled.get(name)
        if name == "storePathCommitLog" and getattr(obj, attr) is None:
            return obj.get_store_path_commit_log()  # mqlab's default: <root>/commitlog
        value = getattr(obj, attr)
        return None if value is None else _text(value)

    def _object_to_pairs(self, obj: Any, fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """``MixAll#object2Properties``' setProperty calls: one per non-null field, in
        declared order."""
        out = []
        for name, _ in fields:
            value = self._value(obj, name)
            if value is not None:
                out.append((name, value))
        return out

    @staticmethod
    def _properties(pairs: list[tuple[str, str]]) -> JavaProperties:
        """The ``Properties`` ``MixAll#object2Properties`` returns for those calls."""
        props = JavaProperties()
        for name, value in pairs:
            props.put(name, value)
        return props

    def _merge(self, props: JavaProperties) -> None:
        for key, value in props.items():  # Configuration#merge: from.entrySet() order
            self.all_configs.put(key, value)

    def update(self, properties: Mapping[str, str], now_ms: int) -> None:
        """UPDATE_BROKER_CONFIG's ``Configuration#update`` (see the module notes)."""
        for key, value in properties.items():  # mergeIfExist
            if key in self.all_configs:
                self.all_configs.put(key, value)
        for obj, fields in self.sections:  # properties2Object, per object
            for name, java_type in fields:
                setter_key = "enableBatchPush" if name == "isEnableBatchPush" else name
                text = properties.get(setter_key)
                if text is None:
                    continue
                try:
                    value = _parse(java_type, text)
                except ValueError:
                    continue
                attr = self._attr(obj, name)
                if attr is None:
                    self.unmodelled[name] = _text(value)
                else:
                    setattr(obj, attr, value)
        self.data_version.next_version(now_ms)

    def get_all_configs_format_string(self) -> str:
        """GET_BROKER_CONFIG's body text. Mirrors ``#getAllConfigsFormatString``."""
        for obj, fields in self.sections:
            self._merge(self._properties(self._object_to_pairs(obj, fields)))
        return "".join(f"{k}={v}\n" for k, v in self.all_configs.items() if v is not None)

    def get_data_version_json(self) -> str:
        """The ``version`` ext field: ``DataVersion#toJson`` (fastjson, fields sorted)."""
        v = self.data_version
        return f'{{"counter":{v.counter},"timestamp":{v.timestamp}}}'
