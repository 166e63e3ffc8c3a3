"""The broker's side of name server registration: the requests it builds, the replies it reads.

Mirrors the request-building and reply-reading halves of ``BrokerOuterAPI``
(broker/out, RocketMQ 4.9.3): ``registerBrokerAll`` / ``registerBroker``,
``unregisterBroker`` and ``needRegister``; plus ``RegisterBrokerBody#encode(boolean)``
(common/protocol/body) for the compressed form. docs/reference.md §2.2 (RegisterBrokerRequestHeader,
``bodyCrc32``), §2.6 (RegisterBrokerBody), §7.4 (TopicConfig, DataVersion), §10.17.

Pure functions: no sockets, no timers, no clock. The BrokerController decides when to
register (every 30 s, first after 10 s, and at once after a topic is created — mechanisms.md "Send",
``createTopicInSendMessageMethod`` → ``registerBrokerAll``), sends what these functions
build with ``ctx.invoke_async`` to every name server, and hands each reply back here.

``MQBrokerException`` lives here for now because ``mqlab.client`` (where Java keeps it)
sits above the broker in mqlab's layers.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping

from mqlab.common.topic_config import DataVersion, TopicConfig
from mqlab.common.util_all import crc32
from mqlab.namesrv.route_info_manager import RegisterBrokerResult
from mqlab.remoting.bodies import RegisterBrokerBody
from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.fastjson import dumps, loads_json_body
from mqlab.remoting.headers import (
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    UnRegisterBrokerRequestHeader,
)

__all__ = [
    "MQBrokerException",
    "encode_register_broker_body",
    "build_register_broker_request",
    "parse_register_broker_response",
    "build_unregister_broker_request",
    "parse_unregister_broker_response",
    "build_query_data_version_request",
    "parse_query_data_version_response",
]

#: ``FAQUrl.UNEXPECTED_EXCEPTION_URL`` (RocketMQ 4.9.3).
_UNEXPECTED_EXCEPTION_URL = "http://rocketmq.apache.org/docs/faq/"
_INT = struct.Struct(">i")


class MQBrokerException(Exception):
    """A name server or broker answered with an error code.

    Mirrors ``MQBrokerException`` (client/exception, RocketMQ 4.9.3): the message is
    ``"CODE: <code>  DESC: <remark> BROKER: <addr>"`` plus ``FAQUrl.attachDefaultURL``'s
    line.
    """

    def __init__(
        self, response_code: int, error_message: str | None, broker_addr: str | None = None
    ):
        text = f"CODE: {int(response_code)}  DESC: {error_message}"
        if broker_addr is not None:
            text += f" BROKER: {broker_addr}"
        if "\nSee " not in text:
            text += f"\nFor more information, please visit the url, {_UNEXPECTED_EXCEPTION_URL}"
        super().__init__(text)
        self.response_code = int(response_code)
        self.error_message = error_message
        self.broker_addr = broker_addr


def _check_topic_table(topic_config_table: Mapping[str, TopicConfig]) -> None:
    for name, tc in topic_config_table.items():
        if not isinstance(tc, TopicConfig):
            raise TypeError(
                f"topic_config_table[{name!r}] must be a TopicConfig, got {type(tc).__name__}"
            )


def encode_register_broker_body(
    topic_config_table: Mapping[str, TopicConfig],
    data_version: DataVersion,
    filter_server_list: Iterable[str] = (),
    compressed: bool = False,
) -> bytes:
    """The REGISTER_BROKER body, topics in name order.

    Mirrors ``RegisterBrokerBody#encode(boolean)`` (common/protocol/body, RocketMQ 4.9.3).
    Uncompressed (the default, ``compressedRegister=false``):
    ``{"filterServerList":[…],"topicConfigSerializeWrapper":{"dataVersion":{…},
    "topicConfigTable":{…}}}``. Compressed: a zlib stream (level 9) of
    ``int len + DataVersion JSON``, ``int count``, ``count × (int len + TopicConfig#encode
    text)``, ``int len + filter server list JSON``.
    """
    _check_topic_table(topic_config_table)
    names = sorted(topic_config_table)
    servers = [str(s) for s in filter_server_list]
    if not compressed:
        body = RegisterBrokerBody(
            topic_config_table={n: topic_config_table[n].to_json_dict() for n in names},
            data_version=data_version.to_json_dict(),
            filter_server_list=tuple(servers),
        )
        return body.encode()

    def chunk(data: bytes) -> bytes:
        return _INT.pack(len(data)) + data

    parts = [chunk(dumps(data_version.to_json_dict()).encode("utf-8")), _INT.pack(len(names))]
    parts += [chunk(topic_config_table[n].encode().encode("utf-8")) for n in names]
    parts.append(chunk(dumps(servers).encode("utf-8")))
    return zlib.compress(b"".join(parts), 9)


def build_register_broker_request(
    *,
    cluster_name: str,
    broker_addr: str,
    broker_name: str,
    broker_id: int,
    ha_server_addr: str | None,
    topic_config_table: Mapping[str, TopicConfig],
    data_version: DataVersion,
    filter_server_list: Iterable[str] = (),
    compressed: bool = False,
) -> RemotingCommand:
    """A REGISTER_BROKER (103) request for one name server.

    Mirrors ``BrokerOuterAPI#registerBrokerAll`` (broker/out, RocketMQ 4.9.3): header
    brokerAddr, brokerId, brokerName, clusterName, haServerAddr, compressed, and
    ``bodyCrc32 = UtilAll.crc32(body)`` (CRC32 masked to 31 bits); docs/reference.md §2.2.

    Raises:
    ``broker_id`` -1 is what a DLedger broker sends before its first role change
    (``BrokerStartup`` sets it; the periodic ``registerBrokerAll`` still runs): the name
    server lists it under -1, as a broker that is not the master.

    Raises:
        ValueError: ``broker_id`` is below -1.
        TypeError: a ``topic_config_table`` value is not a TopicConfig.
    """
    if broker_id < -1:
        raise ValueError(
            f"broker_id must be >= -1 (0 = master, -1 = a DLedger broker before its first "
            f"role change), got {broker_id}"
        )
    body = encode_register_broker_body(
        topic_config_table, data_version, filter_server_list, compressed
    )
    header = RegisterBrokerRequestHeader(
        broker_name=broker_name,
        broker_addr=broker_addr,
        cluster_name=cluster_name,
        ha_server_addr=ha_server_addr,
        broker_id=broker_id,
        compressed=compressed,
        body_crc32=crc32(body),
    )
    return RemotingCommand.create_request(RequestCode.REGISTER_BROKER, header.to_ext_fields(), body)


def parse_register_broker_response(
    response: RemotingCommand, broker_addr: str | None = None
) -> RegisterBrokerResult:
    """Read a REGISTER_BROKER reply. Mirrors ``BrokerOuterAPI#registerBroker``.

    Returns:
        The master and HA addresses (a slave's) and the ORDER_TOPIC_CONFIG KVTable.

    Raises:
        MQBrokerException: the reply code is not SUCCESS (e.g. SYSTEM_ERROR "crc32 not match").
        RemotingCommandException: the reply header or KVTable body does not decode.
    """
    if response.code != ResponseCode.SUCCESS:
        raise MQBrokerException(response.code, response.remark, broker_addr)
    h = RegisterBrokerResponseHeader.from_ext_fields(response.ext_fields)
    kv_table = None
    if response.body is not None:
        try:
            table = loads_json_body(response.body).get("table") or {}
        except (ValueError, AttributeError) as e:
            raise RemotingCommandException(f"bad KVTable body: {e}") from None
        kv_table = {str(k): str(v) for k, v in table.items()}
    return RegisterBrokerResult(h.ha_server_addr, h.master_addr, kv_table)


def build_unregister_broker_request(
    *, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int
) -> RemotingCommand:
    """An UNREGISTER_BROKER (104) request. Mirrors ``BrokerOuterAPI#unregisterBroker``."""
    header = UnRegisterBrokerRequestHeader(
        broker_name=broker_name, broker_addr=broker_addr, cluster_name=cluster_name,
        broker_id=broker_id,
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.UNREGISTER_BROKER, header.to_ext_fields())


def parse_unregister_broker_response(
    response: RemotingCommand, broker_addr: str | None = None
) -> None:
    """Raise ``MQBrokerException`` unless the reply is SUCCESS (``#unregisterBroker``)."""
    if response.code != ResponseCode.SUCCESS:
        raise MQBrokerException(response.code, response.remark, broker_addr)


def build_query_data_version_request(
    *,
    cluster_name: str,
    broker_addr: str,
    broker_name: str,
    broker_id: int,
    data_version: DataVersion,
) -> RemotingCommand:
    """A QUERY_DATA_VERSION (322) request: body = the broker's DataVersion JSON.

    Mirrors the request half of ``BrokerOuterAPI#needRegister`` (RocketMQ 4.9.3), used
    when ``forceRegister`` is false.
    """
    ext = {
        "brokerName": broker_name,
        "brokerAddr": broker_addr,
        "clusterName": cluster_name,
        "brokerId": str(int(broker_id)),
    }
    body = dumps(data_version.to_json_dict()).encode("utf-8")
    return RemotingCommand.create_request(RequestCode.QUERY_DATA_VERSION, ext, body)


def parse_query_data_version_response(response: RemotingCommand, data_version: DataVersion) -> bool:
    """Does this name server need a new registration?

    Mirrors the reply half of ``BrokerOuterAPI#needRegister``: True when the header says
    ``changed`` (or omits it) or the name server's DataVersion differs from the broker's;
    False for an error reply (Java adds nothing to its list then).
    """
    if response.code != ResponseCode.SUCCESS:
        return False
    changed_text = response.ext("changed")
    changed = changed_text is None or changed_text.lower() == "true"
    if response.body is not None:
        held = DataVersion.from_json_dict(loads_json_body(response.body))
        if held != data_version:
            changed = True
    return changed
