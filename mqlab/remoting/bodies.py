"""JSON bodies of the remoting protocol: heartbeats, locks, routes, cluster info.

Mirrors the ``RemotingSerializable`` bodies of RocketMQ 4.9.3 (common/protocol/heartbeat,
common/protocol/body, common/protocol/route): ``HeartbeatData``, ``ConsumerData``,
``ProducerData``, ``LockBatchRequestBody``, ``LockBatchResponseBody``,
``UnlockBatchRequestBody``, ``TopicRouteData``, ``QueueData``, ``BrokerData``,
``ClusterInfo``, ``RegisterBrokerBody`` and ``GetConsumerListByGroupResponseBody``;
docs/reference.md §2.3–§2.6, docs/cpp-client.md §3.

Each body is a frozen dataclass with ``to_json_dict()`` (the fastjson bean shape: keys
sorted, ``None`` left out), ``encode() -> bytes`` and ``decode(bytes)``. Decoding is as
lenient as fastjson: unknown keys are ignored, quoted or unquoted numeric map keys both
work, the C++ client's enum ordinals (``"consumeType":1``) and string longs
(``"subVersion":"1795…"``) are turned into Java's names and ints, and the old
``topicSynFlag`` key is read like ``topicSysFlag``. A body that still does not fit raises
``RemotingCommandException``, which the broker answers as Java does a failed decode.

Subscriptions stay plain dicts in SubscriptionData's JSON shape (``topic``, ``subString``,
``tagsSet``, ``codeSet``, ``subVersion``, ``expressionType``, ``classFilterMode``):
``mqlab.common.filter_api`` owns the SubscriptionData class and its rules. Message queues
are ``mqlab.common.message.MessageQueue``. The topic configs inside a
``RegisterBrokerBody`` stay dicts in TopicConfig's JSON shape (the broker owns TopicConfig).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mqlab.common.frozen_init import fast_frozen_init
from mqlab.common.message import MessageQueue
from mqlab.remoting.command import RemotingCommandException
from mqlab.remoting.fastjson import dumps, loads_json_body

__all__ = [
    "CONSUME_TYPE_NAMES",
    "MESSAGE_MODEL_NAMES",
    "CONSUME_FROM_WHERE_NAMES",
    "subscription_data_from_json",
    "ProducerData",
    "ConsumerData",
    "HeartbeatData",
    "LockBatchRequestBody",
    "LockBatchResponseBody",
    "UnlockBatchRequestBody",
    "QueueData",
    "BrokerData",
    "TopicRouteData",
    "ClusterInfo",
    "RegisterBrokerBody",
    "GetConsumerListByGroupResponseBody",
]

_B = TypeVar("_B", bound="_JsonBody")

#: Java enum constants in ordinal order; the C++ client writes ordinals (docs/cpp-client.md §3).
CONSUME_TYPE_NAMES = ("CONSUME_ACTIVELY", "CONSUME_PASSIVELY")
MESSAGE_MODEL_NAMES = ("BROADCASTING", "CLUSTERING")
CONSUME_FROM_WHERE_NAMES = (
    "CONSUME_FROM_LAST_OFFSET",
    "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",
    "CONSUME_FROM_MAX_OFFSET",
    "CONSUME_FROM_FIRST_OFFSET",
    "CONSUME_FROM_TIMESTAMP",
)


def _enum_name(v: Any, names: tuple[str, ...]) -> str | None:
    """A Java enum read by fastjson: its name, or (C++ client) its ordinal."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(names):
        return names[v]
    raise ValueError(f"not one of {names}: {v!r}")


def _sorted_bean(d: Mapping[str, Any]) -> dict[str, Any]:
    """fastjson's bean shape: properties sorted by name, nulls omitted."""
    return {k: d[k] for k in sorted(d) if d[k] is not None}


def _id_keys(m: Mapping[Any, Any] | None) -> dict[int, Any]:
    """A ``HashMap<Long, …>`` read back: keys ``0`` and ``"0"`` both become ``0``."""
    return {int(k): v for k, v in (m or {}).items()}


def subscription_data_from_json(d: Mapping[str, Any]) -> dict[str, Any]:
    """One SubscriptionData as a dict in Java's full JSON shape, defaults filled in.

    Mirrors fastjson reading ``SubscriptionData`` (common/protocol/heartbeat, RocketMQ
    4.9.3): missing ``tagsSet``/``codeSet`` → ``[]``, ``expressionType`` → ``"TAG"``,
    ``classFilterMode`` → false; ``subVersion`` as a string (C++ client) → int.
    """
    return {
        "classFilterMode": bool(d.get("classFilterMode", False)),
        "codeSet": [int(c) for c in d.get("codeSet") or ()],
        "expressionType": d.get("expressionType") or "TAG",
        "subString": d.get("subString"),
        "subVersion": int(d.get("subVersion") or 0),
        "tagsSet": [str(t) for t in d.get("tagsSet") or ()],
        "topic": d.get("topic"),
    }


class _JsonBody:
    """``RemotingSerializable``: ``encode`` = fastjson text in UTF-8, ``decode`` the reverse."""

    __slots__ = ()

    def to_json_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json_dict(cls: type[_B], d: Mapping[str, Any]) -> _B:
        raise NotImplementedError

    def encode(self) -> bytes:
        """``RemotingSerializable#encode``: compact fastjson, UTF-8."""
        return dumps(self.to_json_dict()).encode("utf-8")

    @classmethod
    def decode(cls: type[_B], body: bytes | bytearray | memoryview | None) -> _B:
        """``RemotingSerializable#decode``.

        Raises:
            RemotingCommandException: the body is missing, not JSON, or not this shape.
        """
        try:
            d = loads_json_body(body)
            if not isinstance(d, dict):
                raise ValueError(f"expected a JSON object, got {type(d).__name__}")
            return cls.from_json_dict(d)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise RemotingCommandException(f"bad {cls.__name__} body: {e!r}") from None


def _mqs(items: Iterable[Mapping[str, Any]] | None) -> tuple[MessageQueue, ...]:
    return tuple(MessageQueue.from_json_dict(x) for x in items or ())


# -- heartbeat (HEART_BEAT, 34) ------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerData(_JsonBody):
    group_name: str

    def to_json_dict(self) -> dict[str, Any]:
        return {"groupName": self.group_name}

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> ProducerData:
        return cls(group_name=d["groupName"])


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerData(_JsonBody):
    """One consumer group of a client; enum fields hold Java's constant names."""

    group_name: str
    consume_type: str | None = None  # CONSUME_ACTIVELY (pull) / CONSUME_PASSIVELY (push)
    message_model: str | None = None  # BROADCASTING / CLUSTERING
    consume_from_where: str | None = None
    subscription_data_set: tuple[dict[str, Any], ...] = ()
    unit_mode: bool = False

    def to_json_dict(self) -> dict[str, Any]:
        return _sorted_bean(
            {
                "groupName": self.group_name,
                "consumeType": self.consume_type,
                "messageModel": self.message_model,
                "consumeFromWhere": self.consume_from_where,
                "subscriptionDataSet": list(self.subscription_data_set),
                "unitMode": self.unit_mode,
            }
        )

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> ConsumerData:
        return cls(
            group_name=d["groupName"],
            consume_type=_enum_name(d.get("consumeType"), CONSUME_TYPE_NAMES),
            message_model=_enum_name(d.get("messageModel"), MESSAGE_MODEL_NAMES),
            consume_from_where=_enum_name(d.get("consumeFromWhere"), CONSUME_FROM_WHERE_NAMES),
            subscription_data_set=tuple(
                subscription_data_from_json(s) for s in d.get("subscriptionDataSet") or ()
            ),
            unit_mode=bool(d.get("unitMode", False)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatData(_JsonBody):
    """HEART_BEAT body (docs/reference.md §2.3): the client id and the groups it runs."""

    client_id: str
    producer_data_set: tuple[ProducerData, ...] = ()
    consumer_data_set: tuple[ConsumerData, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "clientID": self.client_id,
            "consumerDataSet": [c.to_json_dict() for c in self.consumer_data_set],
            "producerDataSet": [p.to_json_dict() for p in self.producer_data_set],
        }

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> HeartbeatData:
        return cls(
            client_id=d["clientID"],
            producer_data_set=tuple(
                ProducerData.from_json_dict(p) for p in d.get("producerDataSet") or ()
            ),
            consumer_data_set=tuple(
                ConsumerData.from_json_dict(c) for c in d.get("consumerDataSet") or ()
            ),
        )


# -- orderly locks (LOCK_BATCH_MQ 41, UNLOCK_BATCH_MQ 42) ----------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LockBatchRequestBody(_JsonBody):
    consumer_group: str
    client_id: str
    mq_set: tuple[MessageQueue, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "clientId": self.client_id,
            "consumerGroup": self.consumer_group,
            "mqSet": [mq.to_json_dict() for mq in self.mq_set],
        }

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> LockBatchRequestBody:
        return cls(
            consumer_group=d["consumerGroup"], client_id=d["clientId"], mq_set=_mqs(d.get("mqSet"))
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class UnlockBatchRequestBody(LockBatchRequestBody):
    """Same fields as LockBatchRequestBody; the reply is SUCCESS with no body."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LockBatchResponseBody(_JsonBody):
    lock_ok_mq_set: tuple[MessageQueue, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {"lockOKMQSet": [mq.to_json_dict() for mq in self.lock_ok_mq_set]}

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> LockBatchResponseBody:
        return cls(lock_ok_mq_set=_mqs(d.get("lockOKMQSet")))


# -- routes (GET_ROUTEINFO_BY_TOPIC 105, GET_BROKER_CLUSTER_INFO 106) ------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueData(_JsonBody):
    """A topic's queues on one broker; JSON key ``topicSysFlag`` (4.9.0+, docs/reference.md §2.5)."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "brokerName": self.broker_name,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> QueueData:
        return cls(
            broker_name=d["brokerName"],
            read_queue_nums=int(d.get("readQueueNums", 0)),
            write_queue_nums=int(d.get("writeQueueNums", 0)),
            perm=int(d.get("perm", 0)),
            topic_sys_flag=int(d.get("topicSysFlag", d.get("topicSynFlag", 0))),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerData(_JsonBody):
    """A broker group: ``broker_addrs`` maps brokerId (0 = master) to ``ip:port``."""

    cluster: str | None
    broker_name: str
    broker_addrs: dict[int, str] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        # HashMap<Long,String>: unquoted keys; small ids iterate in ascending order in Java.
        addrs = {k: self.broker_addrs[k] for k in sorted(self.broker_addrs)}
        return _sorted_bean(
            {"brokerAddrs": addrs, "brokerName": self.broker_name, "cluster": self.cluster}
        )

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> BrokerData:
        return cls(
            cluster=d.get("cluster"),
            broker_name=d["brokerName"],
            broker_addrs=_id_keys(d.get("brokerAddrs")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicRouteData(_JsonBody):
    """GET_ROUTEINFO_BY_TOPIC reply body (docs/reference.md §2.5)."""

    queue_datas: tuple[QueueData, ...] = ()
    broker_datas: tuple[BrokerData, ...] = ()
    order_topic_conf: str | None = None
    filter_server_table: dict[str, list[str]] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        return _sorted_bean(
            {
                "brokerDatas": [b.to_json_dict() for b in self.broker_datas],
                "filterServerTable": self.filter_server_table,
                "orderTopicConf": self.order_topic_conf,
                "queueDatas": [q.to_json_dict() for q in self.queue_datas],
            }
        )

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> TopicRouteData:
        return cls(
            queue_datas=tuple(QueueData.from_json_dict(q) for q in d.get("queueDatas") or ()),
            broker_datas=tuple(BrokerData.from_json_dict(b) for b in d.get("brokerDatas") or ()),
            order_topic_conf=d.get("orderTopicConf"),
            filter_server_table={
                str(k): list(v or ()) for k, v in (d.get("filterServerTable") or {}).items()
            },
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterInfo(_JsonBody):
    """GET_BROKER_CLUSTER_INFO reply body (docs/reference.md §2.6); cluster members written sorted."""

    broker_addr_table: dict[str, BrokerData] = field(default_factory=dict)
    cluster_addr_table: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "brokerAddrTable": {k: b.to_json_dict() for k, b in self.broker_addr_table.items()},
            "clusterAddrTable": {k: sorted(v) for k, v in self.cluster_addr_table.items()},
        }

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> ClusterInfo:
        return cls(
            broker_addr_table={
                str(k): BrokerData.from_json_dict(b)
                for k, b in (d.get("brokerAddrTable") or {}).items()
            },
            cluster_addr_table={
                str(k): tuple(v or ()) for k, v in (d.get("clusterAddrTable") or {}).items()
            },
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerBody(_JsonBody):
    """REGISTER_BROKER body, uncompressed form (``compressed`` false, the 4.9.3 default).

    ``topic_config_table`` maps topic → TopicConfig JSON dict; ``data_version`` is
    ``{"counter": n, "timestamp": ms}``.
    """

    topic_config_table: dict[str, dict[str, Any]] = field(default_factory=dict)
    data_version: dict[str, int] = field(default_factory=dict)
    filter_server_list: tuple[str, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "filterServerList": list(self.filter_server_list),
            "topicConfigSerializeWrapper": {
                "dataVersion": _sorted_bean(self.data_version),
                "topicConfigTable": {
                    k: _sorted_bean(v) for k, v in self.topic_config_table.items()
                },
            },
        }

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> RegisterBrokerBody:
        wrapper = d.get("topicConfigSerializeWrapper") or {}
        return cls(
            topic_config_table={
                str(k): dict(v) for k, v in (wrapper.get("topicConfigTable") or {}).items()
            },
            data_version=dict(wrapper.get("dataVersion") or {}),
            filter_server_list=tuple(d.get("filterServerList") or ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupResponseBody(_JsonBody):
    """GET_CONSUMER_LIST_BY_GROUP reply: ``{"consumerIdList":[…]}``; a SUCCESS needs it."""

    consumer_id_list: tuple[str, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {"consumerIdList": list(self.consumer_id_list)}

    @classmethod
    def from_json_dict(cls, d: Mapping[str, Any]) -> GetConsumerListByGroupResponseBody:
        return cls(consumer_id_list=tuple(str(c) for c in d.get("consumerIdList") or ()))


def _rewrite_inits(base: type) -> None:
    """``fast_frozen_init`` for every body class of this module (docs: mqlab/common/frozen_init.py)."""
    for cls in base.__subclasses__():
        if cls.__module__ == __name__:
            fast_frozen_init(cls)
        _rewrite_inits(cls)


_rewrite_inits(_JsonBody)
