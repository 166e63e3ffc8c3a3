"""The name server node: request dispatch, broker expiry timer, channel housekeeping.

Mirrors ``NamesrvController`` (namesrv), ``DefaultRequestProcessor`` (namesrv/processor)
and ``BrokerHousekeepingService`` (namesrv/routeinfo), RocketMQ 4.9.3, with
``NamesrvConfig`` (common/namesrv); docs/reference.md §2.1 (codes 100–106, 205/206, 216, 219, 224,
304, 311–313, 318/319, 322, 327), §2.2, §2.5, §2.6, §9 and §10.17.

What it owns: the mapping from request codes to ``RouteInfoManager`` /
``KVConfigManager`` / ``Configuration`` calls, the reply shapes, and one timer,
``RouteInfoManager.scanNotActiveBroker`` (first after 5 s, then every 10 s, as
``NamesrvController#initialize`` schedules it). A closed connection goes to
``RouteInfoManager#onChannelDestroy`` (Java: BrokerHousekeepingService).

Every reply carries an ``extFields`` object, ``{}`` at least: the official C++ client
crashes on a reply without one (docs/cpp-client.md, "Response header rules").
An unknown request code gets no reply at all, as in Java (``DefaultRequestProcessor``
returns null for it): the caller times out.

Where mqlab differs from Java, on purpose:

* a header or body that does not decode is answered SYSTEM_ERROR with the decoder's
  message (Java gets there through an exception caught by NettyRemotingAbstract);
* the KV table is persisted only when ``NamesrvConfig.kv_config_path`` is set at start;
  UPDATE_NAMESRV_CONFIG changes the config fields (GET_NAMESRV_CONFIG shows them) but
  writes no file and does not move the KV file (``mqlab.namesrv.configuration``).

GET_UNIT_TOPIC_LIST and its two siblings list topics by the ``topicSysFlag`` (TopicSysFlag
FLAG_UNIT / FLAG_UNIT_SUB, set by unit-mode clients) of each topic's first QueueData.

The namesrv headers that ``mqlab.remoting.headers`` does not define (wipe/add write perm,
QUERY_DATA_VERSION, GET_TOPICS_BY_CLUSTER, GET_KVLIST_BY_NAMESPACE,
DELETE_TOPIC_IN_NAMESRV) are only string fields and are read straight from extFields.
"""

from __future__ import annotations

import dataclasses
import io
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mqlab.common.faq_url import suggest_todo
from mqlab.common.properties import string_to_properties
from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.common.util_all import crc32
from mqlab.namesrv.configuration import Configuration, NettyServerConfig
from mqlab.namesrv.kv_config_manager import NAMESPACE_ORDER_TOPIC_CONFIG, KVConfigManager
from mqlab.namesrv.route_info_manager import (
    RouteInfoManager,
    TopicConfigSerializeWrapper,
    encode_topic_list,
)
from mqlab.remoting.bodies import RegisterBrokerBody
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.fastjson import dumps, loads, loads_json_body
from mqlab.remoting.headers import (
    DeleteKVConfigRequestHeader,
    GetKVConfigRequestHeader,
    GetKVConfigResponseHeader,
    GetRouteInfoRequestHeader,
    PutKVConfigRequestHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    UnRegisterBrokerRequestHeader,
)
from mqlab.runtime.context import Channel, Node
from mqlab.trace.events import Kind

__all__ = [
    "NamesrvConfig",
    "NamesrvController",
    "SCAN_NOT_ACTIVE_BROKER_TIMER",
    "decode_register_broker_body",
    "topic_not_exist_remark",
]

#: Timer name of ``NamesrvController#initialize``'s first scheduled task.
SCAN_NOT_ACTIVE_BROKER_TIMER = "RouteInfoManager.scanNotActiveBroker"
#: ``scheduleAtFixedRate(scanNotActiveBroker, 5, 10, TimeUnit.SECONDS)``.
SCAN_NOT_ACTIVE_BROKER_INITIAL_DELAY_MS = 5_000
SCAN_NOT_ACTIVE_BROKER_PERIOD_MS = 10_000
#: ``MQVersion.Version.V3_0_11.ordinal()``: brokers from this version on send a
#: RegisterBrokerBody (topics + filter servers) rather than a bare topic wrapper.
V3_0_11 = 37
#: ``FAQUrl.APPLY_TOPIC_URL`` in RocketMQ 4.9.3 (every FAQUrl constant is this page there).
APPLY_TOPIC_URL = "http://rocketmq.apache.org/docs/faq/"


def _s(value: str | None) -> str:
    """Java's string concatenation of a possibly-null String: ``null`` prints as "null"."""
    return "null" if value is None else value


def topic_not_exist_remark(topic: str | None) -> str:
    """The GET_ROUTEINFO_BY_TOPIC miss remark, ``FAQUrl.suggestTodo`` suffix included."""
    return (
        "No topic route info in name server for the topic: "
        + _s(topic)
        + suggest_todo(APPLY_TOPIC_URL)
    )


@dataclass(slots=True)
class NamesrvConfig:
    """Name server settings. Mirrors ``NamesrvConfig`` (common/namesrv, RocketMQ 4.9.3).

    ``kv_config_path`` defaults to None (in memory) where Java uses
    ``~/namesrv/kvConfig.json``; ``config_store_path`` (Java: ``~/namesrv/namesrv.properties``)
    is only shown and set by GET/UPDATE_NAMESRV_CONFIG, as is ``rocketmq_home`` (Java: the
    ROCKETMQ_HOME it cannot start without). A None field is left out of GET_NAMESRV_CONFIG.
    """

    rocketmq_home: str | None = None
    kv_config_path: str | None = None
    config_store_path: str | None = None
    product_env_name: str = "center"
    cluster_test: bool = False
    order_message_enable: bool = False


def _read_int(stream: io.BytesIO) -> int:
    raw = stream.read(4)
    if len(raw) != 4:
        raise ValueError("End of compressed data has reached")
    return struct.unpack(">i", raw)[0]


def _read_text(stream: io.BytesIO) -> str:
    n = _read_int(stream)
    raw = stream.read(n)
    if n < 0 or len(raw) != n:
        raise ValueError("End of compressed data has reached")
    return raw.decode("utf-8")


def decode_register_broker_body(
    data: bytes, compressed: bool
) -> tuple[TopicConfigSerializeWrapper, list[str]]:
    """Read a REGISTER_BROKER body into (topic wrapper, filter server list).

    Mirrors ``RegisterBrokerBody#decode(byte[], boolean)`` (common/protocol/body, RocketMQ
    4.9.3). Uncompressed: the fastjson bean. Compressed: a zlib stream of
    ``int len + DataVersion JSON``, ``int count``, ``count × (int len + TopicConfig#encode
    text)``, ``int len + filter server list JSON`` (topicSysFlag and order are not carried).

    Raises:
        RemotingCommandException: the body does not decode.
    """
    try:
        if not compressed:
            body = RegisterBrokerBody.decode(data)
            wrapper = TopicConfigSerializeWrapper.from_json_dict(
                {"dataVersion": body.data_version, "topicConfigTable": body.topic_config_table}
            )
            return wrapper, list(body.filter_server_list)
        stream = io.BytesIO(zlib.decompress(data))
        data_version = DataVersion.from_json_dict(loads(_read_text(stream)))
        table: dict[str, TopicConfig] = {}
        for _ in range(_read_int(stream)):
            text = _read_text(stream)
            tc = TopicConfig.decode(text)
            if tc is None:
                raise ValueError(f"bad TopicConfig text {text!r}")
            table[tc.topic_name] = tc
        filter_servers = loads(_read_text(stream)) or []
        return TopicConfigSerializeWrapper(table, data_version), [str(s) for s in filter_servers]
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error) as e:
        raise RemotingCommandException(f"Failed to decode RegisterBrokerBody: {e}") from None


def _require(header: Any, *names: str) -> None:
    """Refuse a header whose mandatory (``@CFNotNull``) fields are missing.

    Java 4.9.3 only logs ``checkFields``' exception and goes on with nulls; mqlab answers
    SYSTEM_ERROR with that exception's text instead of letting a null key into a table.
    """
    for name in names:
        if getattr(header, name) is None:
            java = name.split("_")[0] + "".join(p.title() for p in name.split("_")[1:])
            raise RemotingCommandException(f"the custom field <{java}> is null")


def _response(
    code: int,
    remark: str | None = None,
    ext_fields: dict[str, str] | None = None,
    body: bytes | None = None,
) -> RemotingCommand:
    """A reply that always has an extFields object (docs/cpp-client.md, response header rules)."""
    return RemotingCommand.create_response(code, remark, dict(ext_fields or {}), body)


class NamesrvController(Node):
    """The name server: a ``RouteInfoManager``, a ``KVConfigManager`` and their dispatcher.

    Mirrors ``NamesrvController`` + ``DefaultRequestProcessor`` (namesrv, RocketMQ 4.9.3).

    Args:
        namesrv_config: settings (defaults: ``NamesrvConfig()``).
        name: node name (``"namesrv"``).
        address: listen address (``"127.0.0.1:9876"``).
        netty_server_config: listen-side settings (defaults: ``NettyServerConfig`` with the
            address's port as ``listenPort``).
    """

    def __init__(
        self,
        namesrv_config: NamesrvConfig | None = None,
        *,
        name: str = "namesrv",
        address: str = "127.0.0.1:9876",
        netty_server_config: NettyServerConfig | None = None,
    ) -> None:
        super().__init__(name, address)
        self.namesrv_config = namesrv_config if namesrv_config is not None else NamesrvConfig()
        if netty_server_config is None:
            netty_server_config = NettyServerConfig(listen_port=int(address.rsplit(":", 1)[1]))
        self.netty_server_config = netty_server_config
        #: ``new Configuration(log, namesrvConfig, nettyServerConfig)`` (NamesrvController).
        self.configuration = Configuration(self.namesrv_config, self.netty_server_config)
        self.route_info_manager = RouteInfoManager()
        self.kv_config_manager = KVConfigManager(self.namesrv_config.kv_config_path)
        self._processors: dict[int, Callable[[Channel, RemotingCommand], RemotingCommand]] = {
            RequestCode.PUT_KV_CONFIG: self.put_kv_config,
            RequestCode.GET_KV_CONFIG: self.get_kv_config,
            RequestCode.DELETE_KV_CONFIG: self.delete_kv_config,
            RequestCode.QUERY_DATA_VERSION: self.query_broker_topic_config,
            RequestCode.REGISTER_BROKER: self.register_broker,
            RequestCode.UNREGISTER_BROKER: self.unregister_broker,
            RequestCode.GET_ROUTEINFO_BY_TOPIC: self.get_route_info_by_topic,
            RequestCode.GET_BROKER_CLUSTER_INFO: self.get_broker_cluster_info,
            RequestCode.WIPE_WRITE_PERM_OF_BROKER: self.wipe_write_perm_of_broker,
            RequestCode.ADD_WRITE_PERM_OF_BROKER: self.add_write_perm_of_broker,
            RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: self.get_all_topic_list_from_nameserver,
            RequestCode.DELETE_TOPIC_IN_NAMESRV: self.delete_topic_in_namesrv,
            RequestCode.GET_KVLIST_BY_NAMESPACE: self.get_kv_list_by_namespace,
            RequestCode.GET_TOPICS_BY_CLUSTER: self.get_topics_by_cluster,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS: self.get_system_topic_list_from_ns,
            RequestCode.GET_UNIT_TOPIC_LIST: self.get_unit_topic_list,
            RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST: self.get_has_unit_sub_topic_list,
            RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: self.get_has_unit_sub_un_unit_topic_list,
            RequestCode.UPDATE_NAMESRV_CONFIG: self.update_config,
            RequestCode.GET_NAMESRV_CONFIG: self.get_config,
        }

    # -- lifecycle ------------------------------------------------------------------------
    def channel_max_idle_ms(self, *, server_side: bool) -> int:
        """``NettyServerConfig#serverChannelMaxIdleTimeSeconds`` on the channels it accepted
        (the name server opens none)."""
        if server_side:
            return self.netty_server_config.server_channel_max_idle_time_seconds * 1000
        return super().channel_max_idle_ms(server_side=False)

    def on_start(self) -> None:
        """Load the KV table and schedule the broker expiry scan.

        Mirrors ``NamesrvController#initialize``: ``scanNotActiveBroker`` at a fixed rate,
        first after 5 s, then every 10 s (docs/reference.md §9).
        """
        self.route_info_manager.tracer = self.ctx.tracer
        self.kv_config_manager.tracer = self.ctx.tracer
        self.kv_config_manager.load()
        self.ctx.set_timer(
            SCAN_NOT_ACTIVE_BROKER_TIMER,
            SCAN_NOT_ACTIVE_BROKER_INITIAL_DELAY_MS,
            self.scan_not_active_broker,
            period_ms=SCAN_NOT_ACTIVE_BROKER_PERIOD_MS,
            daemon=True,
        )

    def on_stop(self) -> None:
        self.ctx.cancel_timer(SCAN_NOT_ACTIVE_BROKER_TIMER)

    def scan_not_active_broker(self) -> None:
        """Timer body: expire silent brokers and close their channels (docs/reference.md §9)."""
        expired = self.route_info_manager.scan_not_active_broker(self.ctx.now_ms)
        if self.ctx.tracer.enabled:
            self.ctx.tracer.emit(
                SCAN_NOT_ACTIVE_BROKER_TIMER, "scan", Kind.TIMER,
                live=len(self.route_info_manager.broker_live_table),
                expired=[addr for addr, _ in expired],
            )  # fmt: skip
        for _, channel in expired:
            if channel is not None and not channel.closed:
                self.ctx.close_channel(channel)

    def channel_inactive(self, channel: Channel) -> None:
        """Mirrors ``BrokerHousekeepingService#onChannelClose`` → ``onChannelDestroy``."""
        self.route_info_manager.on_channel_destroy(channel.remote_address, channel)

    def inspect_routes(self) -> dict[str, Any]:
        """The routing tables and the KV table as plain sorted dicts (for the Lab)."""
        snap = self.route_info_manager.snapshot()
        snap["kv_config_table"] = self.kv_config_manager.snapshot()
        return snap

    # -- dispatch -------------------------------------------------------------------------
    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """Answer one request. Mirrors ``DefaultRequestProcessor#processRequest``.

        A header or body that fails to decode is answered SYSTEM_ERROR with the message.
        """
        processor = self._processors.get(request.code)
        if processor is None:
            # switch ``default: break;`` then ``return null``: NettyRemotingAbstract writes
            # no response for null, so the caller waits until its own timeout.
            if self.ctx.tracer.enabled:
                self.ctx.tracer.emit(
                    "DefaultRequestProcessor.processRequest", f"code {request.code}",
                    Kind.STEP, code="no response", frm=channel.remote_address,
                )  # fmt: skip
            return None
        try:
            response = processor(channel, request)
        except RemotingCommandException as e:
            response = _response(ResponseCode.SYSTEM_ERROR, str(e))
        if self.ctx.tracer.enabled:
            self.ctx.tracer.emit(
                "DefaultRequestProcessor.processRequest", RequestCode(request.code).name,
                Kind.STEP, code=ResponseCode(response.code).name,
                frm=channel.remote_address,
            )  # fmt: skip
        return response

    # -- KV config (100, 101, 102, 219) ---------------------------------------------------
    def put_kv_config(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#putKVConfig``."""
        h = PutKVConfigRequestHeader.from_ext_fields(request.ext_fields)
        if h.namespace is None or h.key is None:
            return _response(ResponseCode.SYSTEM_ERROR, "namespace or key is null")
        self.kv_config_manager.put_kv_config(h.namespace, h.key, h.value)
        return _response(ResponseCode.SUCCESS)

    def get_kv_config(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getKVConfig``; docs/reference.md §11 (QUERY_NOT_FOUND remark)."""
        h = GetKVConfigRequestHeader.from_ext_fields(request.ext_fields)
        value = self.kv_config_manager.get_kv_config(h.namespace, h.key)  # type: ignore[arg-type]
        if value is not None:
            ext = GetKVConfigResponseHeader(value=value).to_ext_fields()
            return _response(ResponseCode.SUCCESS, ext_fields=ext)
        return _response(
            ResponseCode.QUERY_NOT_FOUND,
            f"No config item, Namespace: {_s(h.namespace)} Key: {_s(h.key)}",
        )

    def delete_kv_config(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#deleteKVConfig``."""
        h = DeleteKVConfigRequestHeader.from_ext_fields(request.ext_fields)
        self.kv_config_manager.delete_kv_config(h.namespace, h.key)  # type: ignore[arg-type]
        return _response(ResponseCode.SUCCESS)

    def get_kv_list_by_namespace(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getKVListByNamespace`` (KVTable body)."""
        namespace = request.ext("namespace")
        body = self.kv_config_manager.get_kv_list_by_namespace(namespace)  # type: ignore[arg-type]
        if body is not None:
            return _response(ResponseCode.SUCCESS, body=body)
        return _response(
            ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {_s(namespace)}"
        )

    # -- broker registration (103, 104, 322) ----------------------------------------------
    def register_broker(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#registerBrokerWithFilterServer`` (and
        ``#registerBroker`` for brokers older than V3_0_11); docs/reference.md §2.2, §10.17.

        A non-zero ``bodyCrc32`` must equal ``UtilAll.crc32(body)`` or the reply is
        SYSTEM_ERROR "crc32 not match". The reply header holds the master's
        ``haServerAddr``/``masterAddr`` (slaves only); the body is the ORDER_TOPIC_CONFIG
        namespace as a KVTable, or none.
        """
        h = RegisterBrokerRequestHeader.from_ext_fields(request.ext_fields)
        _require(h, "broker_name", "broker_addr", "cluster_name", "broker_id")
        if h.body_crc32 and crc32(request.body or b"") != h.body_crc32:
            return _response(ResponseCode.SYSTEM_ERROR, "crc32 not match")

        filter_server_list: list[str] | None
        if request.body is None:
            wrapper = TopicConfigSerializeWrapper()  # DataVersion counter 0, timestamp 0
            filter_server_list = []
        elif request.version >= V3_0_11:
            wrapper, filter_server_list = decode_register_broker_body(request.body, h.compressed)
        else:
            try:
                wrapper = TopicConfigSerializeWrapper.from_json_dict(loads_json_body(request.body))
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise RemotingCommandException(f"bad TopicConfigSerializeWrapper: {e}") from None
            filter_server_list = None

        result = self.route_info_manager.register_broker(
            h.cluster_name,  # type: ignore[arg-type]
            h.broker_addr,  # type: ignore[arg-type]
            h.broker_name,  # type: ignore[arg-type]
            h.broker_id,  # type: ignore[arg-type]
            h.ha_server_addr,
            wrapper,
            filter_server_list,
            channel,
            self.ctx.now_ms,
        )
        ext = RegisterBrokerResponseHeader(
            ha_server_addr=result.ha_server_addr, master_addr=result.master_addr
        ).to_ext_fields()
        body = self.kv_config_manager.get_kv_list_by_namespace(NAMESPACE_ORDER_TOPIC_CONFIG)
        return _response(ResponseCode.SUCCESS, ext_fields=ext, body=body)

    def unregister_broker(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#unregisterBroker``."""
        h = UnRegisterBrokerRequestHeader.from_ext_fields(request.ext_fields)
        _require(h, "broker_name", "broker_addr", "cluster_name", "broker_id")
        self.route_info_manager.unregister_broker(
            h.cluster_name,  # type: ignore[arg-type]
            h.broker_addr,  # type: ignore[arg-type]
            h.broker_name,  # type: ignore[arg-type]
            h.broker_id,  # type: ignore[arg-type]
        )
        return _response(ResponseCode.SUCCESS)

    def query_broker_topic_config(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """QUERY_DATA_VERSION: has the broker's topic table changed since it registered?

        Mirrors ``DefaultRequestProcessor#queryBrokerTopicConfig`` (RocketMQ 4.9.3): an
        unchanged broker is kept alive (its timestamp refreshed); the reply header says
        ``changed`` and the body is the DataVersion the name server holds, if any.
        """
        broker_addr = request.ext("brokerAddr")
        try:
            data_version = DataVersion.from_json_dict(loads_json_body(request.body))
        except (ValueError, TypeError, AttributeError) as e:
            raise RemotingCommandException(f"bad DataVersion body: {e}") from None
        rim = self.route_info_manager
        changed = rim.is_broker_topic_config_changed(broker_addr, data_version)  # type: ignore[arg-type]
        if not changed:
            rim.update_broker_info_update_timestamp(broker_addr, self.ctx.now_ms)  # type: ignore[arg-type]
        held = rim.query_broker_topic_config(broker_addr)  # type: ignore[arg-type]
        body = None
        if held is not None:
            body = dumps(held.to_json_dict()).encode("utf-8")
        ext = {"changed": "true" if changed else "false"}
        return _response(ResponseCode.SUCCESS, ext_fields=ext, body=body)

    # -- routes and topic lists (105, 106, 206, 216, 224, 304, 311-313) -----------------------
    def get_route_info_by_topic(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getRouteInfoByTopic``; docs/reference.md §2.5.

        SUCCESS with the TopicRouteData body, else TOPIC_NOT_EXIST (17) with the remark
        "No topic route info in name server for the topic: <topic>" + FAQ suffix.
        """
        h = GetRouteInfoRequestHeader.from_ext_fields(request.ext_fields)
        route = (
            self.route_info_manager.pickup_topic_route_data(h.topic)
            if h.topic is not None
            else None
        )
        if route is None:
            return _response(ResponseCode.TOPIC_NOT_EXIST, topic_not_exist_remark(h.topic))
        if self.namesrv_config.order_message_enable:
            conf = self.kv_config_manager.get_kv_config(NAMESPACE_ORDER_TOPIC_CONFIG, h.topic)  # type: ignore[arg-type]
            route = dataclasses.replace(route, order_topic_conf=conf)
        return _response(ResponseCode.SUCCESS, body=route.encode())

    def get_broker_cluster_info(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getBrokerClusterInfo`` (ClusterInfo body)."""
        return _response(
            ResponseCode.SUCCESS, body=self.route_info_manager.get_all_cluster_info().encode()
        )

    def get_all_topic_list_from_nameserver(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``#getAllTopicListFromNameserver`` (TopicList body)."""
        body = encode_topic_list(self.route_info_manager.get_all_topic_list())
        return _response(ResponseCode.SUCCESS, body=body)

    def delete_topic_in_namesrv(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#deleteTopicInNamesrv``."""
        self.route_info_manager.delete_topic(request.ext("topic"))  # type: ignore[arg-type]
        return _response(ResponseCode.SUCCESS)

    def get_topics_by_cluster(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getTopicsByCluster`` (TopicList body)."""
        topics = self.route_info_manager.get_topics_by_cluster(request.ext("cluster"))  # type: ignore[arg-type]
        return _response(ResponseCode.SUCCESS, body=encode_topic_list(topics))

    def get_system_topic_list_from_ns(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``#getSystemTopicListFromNs``: TopicList of cluster and broker names with
        one ``brokerAddr`` (``RouteInfoManager#getSystemTopicList``)."""
        topics, broker_addr = self.route_info_manager.get_system_topic_list()
        return _response(ResponseCode.SUCCESS, body=encode_topic_list(topics, broker_addr))

    def get_unit_topic_list(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getUnitTopicList`` (TopicList body)."""
        topics = self.route_info_manager.get_unit_topics()
        return _response(ResponseCode.SUCCESS, body=encode_topic_list(topics))

    def get_has_unit_sub_topic_list(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getHasUnitSubTopicList`` (TopicList body)."""
        topics = self.route_info_manager.get_has_unit_sub_topic_list()
        return _response(ResponseCode.SUCCESS, body=encode_topic_list(topics))

    def get_has_unit_sub_un_unit_topic_list(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#getHasUnitSubUnUnitTopicList`` (TopicList body)."""
        topics = self.route_info_manager.get_has_unit_sub_un_unit_topic_list()
        return _response(ResponseCode.SUCCESS, body=encode_topic_list(topics))

    # -- write permission (205, 327) ------------------------------------------------------
    def wipe_write_perm_of_broker(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#wipeWritePermOfBroker``: header ``wipeTopicCount``."""
        count = self.route_info_manager.wipe_write_perm_of_broker_by_lock(request.ext("brokerName"))  # type: ignore[arg-type]
        return _response(ResponseCode.SUCCESS, ext_fields={"wipeTopicCount": str(count)})

    def add_write_perm_of_broker(
        self, channel: Channel, request: RemotingCommand
    ) -> RemotingCommand:
        """Mirrors ``DefaultRequestProcessor#addWritePermOfBroker``: header ``addTopicCount``."""
        count = self.route_info_manager.add_write_perm_of_broker_by_lock(request.ext("brokerName"))  # type: ignore[arg-type]
        return _response(ResponseCode.SUCCESS, ext_fields={"addTopicCount": str(count)})

    # -- configuration (318, 319) ---------------------------------------------------------
    def update_config(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """UPDATE_NAMESRV_CONFIG: ``key=value`` lines in the body.

        Mirrors ``DefaultRequestProcessor#updateConfig`` (RocketMQ 4.9.3): no body → SUCCESS
        and nothing changes; a body that ``MixAll#string2Properties`` cannot load (a
        malformed ``\\uXXXX``) → SYSTEM_ERROR "string2Properties error"; else
        ``Configuration#update`` and SUCCESS. 4.9.3 refuses no key: ``kvConfigPath`` and
        ``configStorePath`` are accepted too (mqlab writes no file, see
        ``mqlab.namesrv.configuration``).
        """
        if request.body is not None:
            # new String(body, "UTF-8"): undecodable bytes become U+FFFD.
            properties = string_to_properties(request.body.decode("utf-8", errors="replace"))
            if properties is None:
                return _response(ResponseCode.SYSTEM_ERROR, "string2Properties error")
            self.configuration.update(properties)
        return _response(ResponseCode.SUCCESS)

    def get_config(self, channel: Channel, request: RemotingCommand) -> RemotingCommand:
        """GET_NAMESRV_CONFIG: the ``key=value\\n`` text of ``NamesrvConfig`` and
        ``NettyServerConfig`` as the body. Mirrors ``DefaultRequestProcessor#getConfig``."""
        content = self.configuration.get_all_configs_format_string()
        return _response(ResponseCode.SUCCESS, body=content.encode("utf-8") if content else None)
