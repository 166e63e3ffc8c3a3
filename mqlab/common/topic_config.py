"""A topic's configuration and the version stamp of a config table.

Mirrors ``TopicConfig``, ``TopicFilterType`` and ``DataVersion`` (common, RocketMQ
4.9.3); docs/reference.md §7.3 (defaults) and §7.4 (persisted JSON shapes).

What this module owns: the fields, their defaults, ``toString``/``encode`` text forms
and the fastjson bean dicts (keys sorted alphabetically, as fastjson writes beans).
What it must not know: files or clocks. ``DataVersion.next_version`` takes ``now_ms``;
the topic config manager decides when to bump it and where topics.json lives.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import MessageSysFlag

__all__ = ["TopicFilterType", "TopicConfig", "DataVersion", "parse_topic_filter_type"]


class TopicFilterType(StrEnum):
    """Mirrors ``TopicFilterType`` (common, RocketMQ 4.9.3). A ``str``, so it compares
    equal to ``"SINGLE_TAG"`` and serialises as its name, as fastjson writes enums."""

    SINGLE_TAG = "SINGLE_TAG"
    MULTI_TAG = "MULTI_TAG"


def parse_topic_filter_type(sys_flag: int) -> TopicFilterType:
    """MULTI_TAG if the message sys flag has MULTI_TAGS_FLAG, else SINGLE_TAG.

    Mirrors ``MessageExt#parseTopicFilterType`` (common/message, RocketMQ 4.9.3).
    """
    if sys_flag & MessageSysFlag.MULTI_TAGS_FLAG:
        return TopicFilterType.MULTI_TAG
    return TopicFilterType.SINGLE_TAG


@dataclass(slots=True)
class TopicConfig:
    """One topic on one broker.

    Mirrors ``TopicConfig`` (common, RocketMQ 4.9.3); docs/reference.md §7.3: 16 read and 16 write
    queues, perm 6 (RW), SINGLE_TAG, sys flag 0, not ordered. Mutable, because the
    broker edits perms and queue counts in place (UPDATE_AND_CREATE_TOPIC, wipe write
    perm).
    """

    topic_name: str
    read_queue_nums: int = 16
    write_queue_nums: int = 16
    perm: int = PermName.PERM_READ | PermName.PERM_WRITE
    topic_filter_type: TopicFilterType = TopicFilterType.SINGLE_TAG
    topic_sys_flag: int = 0
    order: bool = False

    def __post_init__(self) -> None:
        self.topic_filter_type = TopicFilterType(self.topic_filter_type)

    def to_json_dict(self) -> dict[str, Any]:
        """The fastjson bean: ``{"order","perm","readQueueNums","topicFilterType",
        "topicName","topicSysFlag","writeQueueNums"}`` in that (sorted) order; docs/reference.md §7.4."""
        return {
            "order": self.order,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicFilterType": str(self.topic_filter_type),
            "topicName": self.topic_name,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> TopicConfig:
        """Read the fastjson bean; absent keys keep their defaults, unknown keys are
        ignored (fastjson's behaviour, docs/reference.md §1.7).

        Raises:
            ValueError: ``topicName`` is missing or ``topicFilterType`` is unknown.
        """
        name = d.get("topicName")
        if name is None:
            raise ValueError(f"topicName missing in TopicConfig JSON: {d!r}")
        return cls(
            topic_name=str(name),
            read_queue_nums=int(d.get("readQueueNums", 16)),
            write_queue_nums=int(d.get("writeQueueNums", 16)),
            perm=int(d.get("perm", PermName.PERM_READ | PermName.PERM_WRITE)),
            topic_filter_type=TopicFilterType(d.get("topicFilterType", "SINGLE_TAG")),
            topic_sys_flag=int(d.get("topicSysFlag", 0)),
            order=bool(d.get("order", False)),
        )

    def encode(self) -> str:
        """``"<name> <read> <write> <perm> <filterType>"``. Mirrors ``TopicConfig#encode``."""
        return (
            f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} "
            f"{self.perm} {self.topic_filter_type}"
        )

    @classmethod
    def decode(cls, text: str) -> TopicConfig | None:
        """Inverse of :meth:`encode`; ``None`` unless there are exactly 5 fields.

        Mirrors ``TopicConfig#decode`` (which returns false instead of ``None``).
        """
        parts = text.split(" ")
        if len(parts) != 5:
            return None
        return cls(parts[0], int(parts[1]), int(parts[2]), int(parts[3]), TopicFilterType(parts[4]))

    def __str__(self) -> str:
        """Mirrors ``TopicConfig#toString`` (perm rendered as ``RW-``)."""
        return (
            f"TopicConfig [topicName={self.topic_name}, readQueueNums={self.read_queue_nums}, "
            f"writeQueueNums={self.write_queue_nums}, perm={PermName.perm2string(self.perm)}, "
            f"topicFilterType={self.topic_filter_type}, topicSysFlag={self.topic_sys_flag}, "
            f"order={'true' if self.order else 'false'}]"
        )


@dataclass(slots=True)
class DataVersion:
    """Version stamp of a config table: creation/bump time plus a counter.

    Mirrors ``DataVersion`` (common, RocketMQ 4.9.3); docs/reference.md §7.4. Java stamps
    ``System.currentTimeMillis()`` at construction; mqlab takes the time as an argument
    (default 0). Equality compares both fields (``DataVersionTest``).
    """

    timestamp: int = 0
    counter: int = 0

    def next_version(self, now_ms: int) -> None:
        """Stamp ``now_ms`` and add one to the counter. Mirrors ``DataVersion#nextVersion``."""
        self.timestamp = now_ms
        self.counter += 1

    def assign_new_one(self, other: DataVersion) -> None:
        """Copy ``other``'s fields. Mirrors ``DataVersion#assignNewOne``."""
        self.timestamp = other.timestamp
        self.counter = other.counter

    def to_json_dict(self) -> dict[str, int]:
        """``{"counter": n, "timestamp": ms}`` (fastjson writes the AtomicLong as a number)."""
        return {"counter": self.counter, "timestamp": self.timestamp}

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> DataVersion:
        return cls(timestamp=int(d.get("timestamp", 0)), counter=int(d.get("counter", 0)))

    def __str__(self) -> str:
        """Mirrors ``DataVersion#toString``."""
        return f"DataVersion[timestamp={self.timestamp}, counter={self.counter}]"
