"""The message model: what a producer builds, what the broker stores, what a consumer sees.

Mirrors ``Message``, ``MessageExt``, ``MessageExtBrokerInner`` and ``MessageQueue``
(common/message, RocketMQ 4.9.3); docs/reference.md §4 and §5.

What this module owns: the in-memory shape of a message and the property helpers
(tags, keys, delay level, WAIT) that RocketMQ puts on ``Message``. What it must not
know: bytes on disk or on the wire. ``mqlab.common.message_decoder`` turns these
objects into RocketMQ's stored binary layout and back.

Mutable dataclasses with slots: the store patches queue offset, commit-log offset and
store timestamp in at append time, as ``CommitLog#DefaultAppendMessageCallback`` does.
``MessageQueue`` is frozen, hashable and ordered like RocketMQ's (topic, broker name,
queue id), because rebalancing sorts queues before allocating them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mqlab.common import message_const as mc
from mqlab.common.frozen_init import fast_frozen_init

__all__ = ["Message", "MessageExt", "MessageExtBrokerInner", "MessageQueue"]


@dataclass(slots=True, init=False)
class Message:
    """A message as a producer builds it.

    Mirrors ``Message`` (common/message, RocketMQ 4.9.3). ``tags`` and ``keys`` are
    stored as the ``TAGS`` / ``KEYS`` properties, as in Java; RocketMQ's constructor
    also sets ``WAIT=true`` unless told otherwise.

    Args:
        topic: the topic name.
        body: the payload (``str`` is encoded as UTF-8).
        tags: one tag, e.g. ``"TagA"``.
        keys: a key or a list of keys (joined with a space, ``KEY_SEPARATOR``).
        flag: the user flag (an int the broker stores but never reads).
        properties: extra user properties.
        wait_store_msg_ok: the ``WAIT`` property.
    """

    topic: str
    body: bytes
    flag: int
    properties: dict[str, str]
    transaction_id: str | None

    def __init__(
        self,
        topic: str,
        body: bytes | str = b"",
        tags: str | None = None,
        keys: str | list[str] | tuple[str, ...] | None = None,
        flag: int = 0,
        properties: dict[str, str] | None = None,
        wait_store_msg_ok: bool = True,
    ) -> None:
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, got {type(topic).__name__}")
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif not isinstance(body, bytes | bytearray | memoryview):
            raise TypeError(f"body must be bytes or str, got {type(body).__name__}")
        self.topic = topic
        self.body = bytes(body)
        self.flag = int(flag)
        self.properties = dict(properties) if properties else {}
        self.transaction_id = None
        if tags:
            self.properties[mc.PROPERTY_TAGS] = tags
        if keys:
            if not isinstance(keys, str):
                keys = mc.KEY_SEPARATOR.join(keys)
            self.properties[mc.PROPERTY_KEYS] = keys
        if properties is None or mc.PROPERTY_WAIT_STORE_MSG_OK not in properties:
            self.properties[mc.PROPERTY_WAIT_STORE_MSG_OK] = (
                "true" if wait_store_msg_ok else "false"
            )

    # -- property helpers (Message#getTags, #getKeys, #getDelayTimeLevel, ...) ------------
    @property
    def tags(self) -> str | None:
        return self.properties.get(mc.PROPERTY_TAGS)

    @tags.setter
    def tags(self, value: str | None) -> None:
        self._set(mc.PROPERTY_TAGS, value)

    @property
    def keys(self) -> str | None:
        return self.properties.get(mc.PROPERTY_KEYS)

    @keys.setter
    def keys(self, value: str | None) -> None:
        self._set(mc.PROPERTY_KEYS, value)

    @property
    def delay_time_level(self) -> int:
        """``Message#getDelayTimeLevel``: the ``DELAY`` property, 0 when absent."""
        v = self.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL)
        return int(v) if v else 0

    @delay_time_level.setter
    def delay_time_level(self, level: int) -> None:
        self.properties[mc.PROPERTY_DELAY_TIME_LEVEL] = str(int(level))

    @property
    def wait_store_msg_ok(self) -> bool:
        """``Message#isWaitStoreMsgOK``: true unless ``WAIT`` is present and not "true"."""
        v = self.properties.get(mc.PROPERTY_WAIT_STORE_MSG_OK)
        return v is None or v == "true"

    def get_property(self, name: str) -> str | None:
        return self.properties.get(name)

    def put_property(self, name: str, value: str) -> None:
        self.properties[name] = value

    def clear_property(self, name: str) -> None:
        self.properties.pop(name, None)

    def _set(self, name: str, value: str | None) -> None:
        if value is None:
            self.properties.pop(name, None)
        else:
            self.properties[name] = value


@dataclass(slots=True, kw_only=True)
class MessageExt:
    """A stored message, as decoded from the commit log or a pull response body.

    Mirrors ``MessageExt`` (common/message, RocketMQ 4.9.3). Field order follows the
    stored layout (docs/reference.md §4.1). ``msg_id`` is the broker's offset message id (store host
    + commit-log offset); :meth:`client_msg_id` gives what ``MessageClientExt#getMsgId``
    returns (``UNIQ_KEY`` when present).
    """

    topic: str = ""
    body: bytes = b""
    flag: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    store_size: int = 0
    body_crc: int = 0
    queue_id: int = 0
    queue_offset: int = 0
    commit_log_offset: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: str = "127.0.0.1:0"
    store_timestamp: int = 0
    store_host: str = "127.0.0.1:0"
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    msg_id: str = ""
    broker_name: str = ""

    @property
    def tags(self) -> str | None:
        return self.properties.get(mc.PROPERTY_TAGS)

    @property
    def keys(self) -> str | None:
        return self.properties.get(mc.PROPERTY_KEYS)

    @property
    def delay_time_level(self) -> int:
        v = self.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL)
        return int(v) if v else 0

    def get_property(self, name: str) -> str | None:
        return self.properties.get(name)

    def put_property(self, name: str, value: str) -> None:
        self.properties[name] = value

    def clear_property(self, name: str) -> None:
        self.properties.pop(name, None)

    def client_msg_id(self) -> str:
        """``MessageClientExt#getMsgId``: ``UNIQ_KEY`` if present, else the offset msg id."""
        return self.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or self.msg_id


@dataclass(slots=True, kw_only=True)
class MessageExtBrokerInner(MessageExt):
    """What the broker hands to the store's ``put_message``.

    Mirrors ``MessageExtBrokerInner`` (store, RocketMQ 4.9.3): a ``MessageExt`` plus the
    already-encoded properties string and the tags hash code that goes into the consume
    queue unit (docs/reference.md §6).
    """

    properties_string: str = ""
    tags_code: int = 0


@fast_frozen_init
@dataclass(frozen=True, slots=True, order=True)
class MessageQueue:
    """One queue of a topic on one broker.

    Mirrors ``MessageQueue`` (common/message, RocketMQ 4.9.3). Ordering is
    ``compareTo``'s: topic, then broker name, then queue id. ``str()`` is Java's
    ``toString``, which the consistent-hash allocation hashes (docs/reference.md §10.10).
    """

    topic: str
    broker_name: str
    queue_id: int

    def __str__(self) -> str:
        return (
            f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, "
            f"queueId={self.queue_id}]"
        )

    def to_json_dict(self) -> dict[str, object]:
        """The fastjson bean shape: keys sorted, as in lock bodies and offsets.json."""
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    @classmethod
    def from_json_dict(cls, d: dict[str, object]) -> MessageQueue:
        return cls(str(d["topic"]), str(d["brokerName"]), int(d["queueId"]))  # type: ignore[arg-type]
