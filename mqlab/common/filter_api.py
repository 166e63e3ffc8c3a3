"""Subscriptions: tag expressions, their hash codes, and the heartbeat JSON shape.

Mirrors ``FilterAPI``, ``ExpressionType`` (common/filter) and ``SubscriptionData``
(common/protocol/heartbeat), plus ``MessageExtBrokerInner#tagsString2tagsCode``
(common/message), RocketMQ 4.9.3; docs/reference.md §2.3 (HeartbeatData), §6 (tags code), §11
(``FilterAPITest``); mechanisms.md "Rebalancing" (``subscribe`` → ``FilterAPI.buildSubscriptionData``).

What this module owns: how ``"TagA || TagB"`` becomes a tag list plus Java
``String.hashCode`` codes, and the ``SubscriptionData`` bean. What it must not know:
clocks (``sub_version`` is passed in; Java stamps ``System.currentTimeMillis()``) and
matching (the broker's message filter and the client's re-filter use ``code_set`` /
``tags_set`` from here).

Java keeps ``tagsSet``/``codeSet`` in ``HashSet``s, whose order is not defined. mqlab
keeps insertion-ordered, de-duplicated lists, so traces and JSON are deterministic;
equality compares them as sets, as Java does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from mqlab.common.util_all import java_trim

__all__ = [
    "ascii_hash",
    "java_string_hash",
    "string_hash_code",
    "tags_string_to_tags_code",
    "ExpressionType",
    "SubscriptionData",
    "FilterAPI",
]


#: A byte ``b`` as two base-31 digits, ``b = 31 * q + r`` (any byte: 255 < 31**2): the
#: digit characters ``int(..., 31)`` reads for ``r`` and for ``q``.
_DIGITS = b"0123456789abcdefghijklmnopqrstu"
_LOW_DIGIT = bytes(_DIGITS[b % 31] for b in range(256))
_HIGH_DIGIT = bytes(_DIGITS[b // 31] for b in range(256))
#: Longer keys take the loop: ``int`` refuses to parse more than 4,300 digits by default.
_ASCII_HASH_MAX = 4000


def ascii_hash(data: bytes) -> int:
    """``String#hashCode`` of ASCII ``data`` (at most 4,000 bytes) as an unsigned 32-bit
    int: ``sum(c * 31**k)``.

    NOTE: performance. That sum is ``data`` read as a number in base 31 whose "digits"
    are the bytes. A byte is split into two true base-31 digits (``b = 31 q + r``), so the
    sum is ``int(r-digits, 31) + 31 * int(q-digits, 31)``: two ``bytes.translate`` and two
    ``int`` parses, all in C (0.7 µs for a 49-byte key, against 3.3 µs for a C-level
    ``sum(map(mul, data, powers))``, whose products are multi-digit ints, and ~4 µs for
    the per-char loop).
    """
    if not data:
        return 0
    low = int(data.translate(_LOW_DIGIT), 31)
    return (low + 31 * int(data.translate(_HIGH_DIGIT), 31)) & 0xFFFF_FFFF


def string_hash_code(s: str) -> int:
    """Java ``String#hashCode``: ``h = 31*h + c`` over UTF-16 code units, signed 32-bit.

    docs/reference.md §0 and §6: "TagA" 2598919, "*" 42, "中文" 646394. Chars outside the BMP count
    as two surrogate units, as in Java. ASCII text takes :func:`ascii_hash`. Not memoised:
    for strings hashed once each (index keys); :func:`java_string_hash` is.
    """
    if s.isascii():
        units: Any = s.encode("ascii")
        if len(units) <= _ASCII_HASH_MAX:
            h = ascii_hash(units)
            return h - 0x1_0000_0000 if h & 0x8000_0000 else h
    else:
        raw = s.encode("utf-16-be")
        units = struct.unpack(f">{len(raw) // 2}H", raw)
    h = 0
    for c in units:
        h = (31 * h + c) & 0xFFFFFFFF
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


#: :func:`string_hash_code`, memoised. NOTE: performance — ~700 calls per small run, few
#: distinct strings.
java_string_hash = lru_cache(maxsize=8192)(string_hash_code)


@lru_cache(maxsize=4096)
def tags_string_to_tags_code(tags: str | None) -> int:
    """The consume-queue tags code: ``hashCode`` of TAGS, 0 when absent or empty.

    Mirrors ``MessageExtBrokerInner#tagsString2tagsCode`` (the filter type argument is
    ignored in 4.9.3) and the ``tags != null && tags.length() > 0`` guard around it in
    ``CommitLog#checkMessageAndReturnSize``; docs/reference.md §6.

    NOTE: performance: memoised. The broker computes this for every message it stores
    and a broker sees few distinct tags; the pure-Python hash costs ~0.4 µs for "TagA",
    a cache hit ~0.06 µs. The cache holds results of a pure function only.
    """
    if not tags:
        return 0
    return java_string_hash(tags)


class ExpressionType:
    """Subscription expression kinds. Mirrors ``ExpressionType`` (common/filter)."""

    SQL92 = "SQL92"
    TAG = "TAG"

    @staticmethod
    def is_tag_type(type_: str | None) -> bool:
        """True for ``None``, ``""`` and ``"TAG"``. Mirrors ``ExpressionType#isTagType``."""
        return type_ is None or type_ == "" or type_ == ExpressionType.TAG


@dataclass(slots=True, eq=False)
class SubscriptionData:
    """One topic subscription of a consumer group, as sent in heartbeats.

    Mirrors ``SubscriptionData`` (common/protocol/heartbeat, RocketMQ 4.9.3); docs/reference.md §2.3.
    ``filterClassSource`` is not modelled (fastjson does not serialise it).
    """

    SUB_ALL = "*"

    topic: str
    sub_string: str | None = None
    tags_set: list[str] = field(default_factory=list)
    code_set: list[int] = field(default_factory=list)
    sub_version: int = 0
    expression_type: str = ExpressionType.TAG
    class_filter_mode: bool = False

    def __eq__(self, other: object) -> bool:
        """Mirrors ``SubscriptionData#equals``: every field, tags/codes compared as sets."""
        if not isinstance(other, SubscriptionData):
            return NotImplemented
        return (
            self.class_filter_mode == other.class_filter_mode
            and set(self.code_set) == set(other.code_set)
            and self.sub_string == other.sub_string
            and self.sub_version == other.sub_version
            and set(self.tags_set) == set(other.tags_set)
            and self.topic == other.topic
            and self.expression_type == other.expression_type
        )

    __hash__ = None  # type: ignore[assignment]  # mutable: sub_version is bumped in place

    def __lt__(self, other: SubscriptionData) -> bool:
        """Mirrors ``SubscriptionData#compareTo``: order by ``topic@subString``."""
        return f"{self.topic}@{self.sub_string}" < f"{other.topic}@{other.sub_string}"

    def to_json_dict(self) -> dict[str, Any]:
        """The fastjson bean, keys sorted, ``None`` fields left out; docs/reference.md §2.3::

        {"classFilterMode":false,"codeSet":[2598919],"expressionType":"TAG",
         "subString":"TagA","subVersion":1650000000000,"tagsSet":["TagA"],"topic":"T"}
        """
        d: dict[str, Any] = {
            "classFilterMode": self.class_filter_mode,
            "codeSet": list(self.code_set),
        }
        if self.expression_type is not None:
            d["expressionType"] = self.expression_type
        if self.sub_string is not None:
            d["subString"] = self.sub_string
        d["subVersion"] = self.sub_version
        d["tagsSet"] = list(self.tags_set)
        d["topic"] = self.topic
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> SubscriptionData:
        """Read the bean; absent keys keep Java's defaults, unknown keys are ignored.

        Raises:
            ValueError: ``topic`` is missing.
        """
        topic = d.get("topic")
        if topic is None:
            raise ValueError(f"topic missing in SubscriptionData JSON: {d!r}")
        tags = _dedup([str(t) for t in d.get("tagsSet") or ()])
        codes = _dedup([int(c) for c in d.get("codeSet") or ()])
        sub_string = d.get("subString")
        return cls(
            topic=str(topic),
            sub_string=None if sub_string is None else str(sub_string),
            tags_set=tags,
            code_set=codes,
            sub_version=int(d.get("subVersion", 0)),
            expression_type=d.get("expressionType", ExpressionType.TAG),
            class_filter_mode=bool(d.get("classFilterMode", False)),
        )


def _dedup(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


class FilterAPI:
    """Builds :class:`SubscriptionData`. Mirrors ``FilterAPI`` (common/filter, RocketMQ 4.9.3)."""

    @staticmethod
    def build_subscription_data(
        topic: str,
        sub_string: str | None,
        expression_type: str | None = None,
        sub_version: int = 0,
    ) -> SubscriptionData:
        """Parse a subscription expression.

        Mirrors ``FilterAPI#build`` and ``FilterAPI#buildSubscriptionData`` (common/filter,
        RocketMQ 4.9.3); mechanisms.md "Rebalancing" (subscribe); docs/reference.md §11 (``FilterAPITest``).

        TAG (``expression_type`` ``None`` or ``"TAG"``): ``None``, ``""`` or ``"*"`` →
        sub string ``"*"`` and no tags; otherwise split on ``||``, ``String#trim`` each
        part, skip empty parts, and record each tag and its Java hash code (duplicates
        once, in first-seen order). Any other type (SQL92): keep the expression as the
        sub string with no tags.

        Args:
            topic: the subscribed topic.
            sub_string: the expression, e.g. ``"TagA || TagB"`` or ``"a > 5"``.
            expression_type: ``None``/``"TAG"`` or ``"SQL92"``.
            sub_version: the version stamp (Java: ``System.currentTimeMillis()``).

        Raises:
            ValueError: a non-TAG expression is ``None`` or empty ("Expression can't be
                null! SQL92", Java's IllegalArgumentException), or a TAG expression has
                only ``||`` separators ("subString split error").
        """
        if expression_type is None or expression_type == ExpressionType.TAG:
            return FilterAPI._build_tag(topic, sub_string, sub_version)
        if not sub_string:
            raise ValueError(f"Expression can't be null! {expression_type}")
        return SubscriptionData(
            topic=topic,
            sub_string=sub_string,
            sub_version=sub_version,
            expression_type=expression_type,
        )

    @staticmethod
    def _build_tag(topic: str, sub_string: str | None, sub_version: int) -> SubscriptionData:
        sd = SubscriptionData(topic=topic, sub_string=sub_string, sub_version=sub_version)
        if sub_string is None or sub_string == SubscriptionData.SUB_ALL or sub_string == "":
            sd.sub_string = SubscriptionData.SUB_ALL
            return sd
        parts = sub_string.split("||")
        # Java's String#split drops trailing empty strings; "||" leaves nothing at all.
        while parts and parts[-1] == "":
            parts.pop()
        if not parts:
            raise ValueError("subString split error")
        tags: dict[str, None] = {}
        codes: dict[int, None] = {}
        for part in parts:
            tag = java_trim(part)
            if tag:
                tags[tag] = None
                codes[java_string_hash(tag)] = None
        sd.tags_set = list(tags)
        sd.code_set = list(codes)
        return sd
