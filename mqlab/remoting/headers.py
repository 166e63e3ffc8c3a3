"""Typed custom headers: the ``extFields`` of each request and response, as dataclasses.

Mirrors the ``CommandCustomHeader`` classes (common/protocol/header, RocketMQ 4.9.3) and
``RemotingCommand#makeCustomHeaderToNet`` / ``#decodeCommandCustomHeader`` (encode and
decode), plus ``AbstractSendMessageProcessor#decodeSendMessageHeaderV2``; docs/reference.md §1.4, §2.2.

One frozen dataclass per Java header class, snake_case fields. The wire name of a field
is its camelCase form (``queue_offset`` → ``queueOffset``) unless the field's metadata
says otherwise (``clientID``). The annotation names the Java type: ``Integer`` (32-bit),
``Long`` (64-bit), ``bool``, ``float`` (Java double) or ``str``; ``wire_header`` reads the
annotations once per class into ``_SPEC``, so encode and decode are one loop each.

Decoding follows Java 4.9.3: missing fields stay ``None`` even when ``@CFNotNull`` (the
Java check only logs; marked "(N)" below), unknown keys (the C++ client's ``AccessKey``,
``OnsChannel``, ``Signature``) are ignored, booleans use ``Boolean.parseBoolean`` —
extended to take ``"1"`` as true because the C++ client sends ``batch:"1"`` and
``unitMode:"0"`` (docs/cpp-client.md §4.3). Where Java logs a bad number and leaves the
field null (so the processor fails with an NPE → SYSTEM_ERROR), we raise
``RemotingCommandException`` at once; the dispatcher answers SYSTEM_ERROR either way.

This module knows field names and types, not what any processor does with them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, TypeAlias, TypeVar

from mqlab.common.frozen_init import fast_frozen_init
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommandException
from mqlab.remoting.fastjson import java_double_to_string

__all__ = [
    "CommandCustomHeader",
    "wire_header",
    "Integer",
    "Long",
    "java_string_value_of",
    "SEND_MESSAGE_V2_FIELDS",
    "send_message_header_v2_to_ext_fields",
    "decode_send_message_header_v2",
    "REQUEST_HEADER_BY_CODE",
    "SendMessageRequestHeader",
    "SendMessageResponseHeader",
    "PullMessageRequestHeader",
    "PullMessageResponseHeader",
    "QueryMessageRequestHeader",
    "QueryMessageResponseHeader",
    "ViewMessageRequestHeader",
    "QueryConsumerOffsetRequestHeader",
    "QueryConsumerOffsetResponseHeader",
    "UpdateConsumerOffsetRequestHeader",
    "UpdateConsumerOffsetResponseHeader",
    "SearchOffsetRequestHeader",
    "SearchOffsetResponseHeader",
    "GetMaxOffsetRequestHeader",
    "GetMaxOffsetResponseHeader",
    "GetMinOffsetRequestHeader",
    "GetMinOffsetResponseHeader",
    "GetEarliestMsgStoretimeRequestHeader",
    "GetEarliestMsgStoretimeResponseHeader",
    "UnregisterClientRequestHeader",
    "ConsumerSendMsgBackRequestHeader",
    "GetConsumerListByGroupRequestHeader",
    "NotifyConsumerIdsChangedRequestHeader",
    "GetConsumerRunningInfoRequestHeader",
    "ConsumeMessageDirectlyResultRequestHeader",
    "GetConsumerStatusRequestHeader",
    "ReplyMessageRequestHeader",
    "EndTransactionRequestHeader",
    "CheckTransactionStateRequestHeader",
    "CreateTopicRequestHeader",
    "GetRouteInfoRequestHeader",
    "RegisterBrokerRequestHeader",
    "RegisterBrokerResponseHeader",
    "UnRegisterBrokerRequestHeader",
    "PutKVConfigRequestHeader",
    "GetKVConfigRequestHeader",
    "GetKVConfigResponseHeader",
    "DeleteKVConfigRequestHeader",
]

Integer: TypeAlias = int  # Java Integer / int: 32-bit signed
Long: TypeAlias = int  # Java Long / long: 64-bit signed

_H = TypeVar("_H", bound="CommandCustomHeader")
_DIGITS = re.compile(r"[+-]?[0-9]+")


def _parse_int(v: Any, name: str, bits: int) -> int:
    """``Integer.parseInt`` / ``Long.parseLong``: ASCII digits, optional sign, in range."""
    if type(v) is str and (v.isdigit() and v.isascii() or _DIGITS.fullmatch(v)):
        n = int(v)  # NOTE: performance: isdigit() skips the regex for the common case
    elif isinstance(v, int) and not isinstance(v, bool):
        n = v
    else:
        raise RemotingCommandException(f"the custom field <{name}> is not a number: {v!r}")
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise RemotingCommandException(f"the custom field <{name}> is out of range: {v!r}")
    return n


def _parse_bool(v: Any, name: str) -> bool:
    """``Boolean.parseBoolean`` ("true", any case) plus the C++ client's ``"1"``."""
    if isinstance(v, bool):
        return v
    s = str(v)
    return s == "1" or s.lower() == "true"


def _parse_double(v: Any, name: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        raise RemotingCommandException(
            f"the custom field <{name}> is not a number: {v!r}"
        ) from None


def _parse_str(v: Any, name: str) -> str:
    return v if isinstance(v, str) else str(v)


def _parse_integer(v: Any, name: str) -> int:
    """``Integer.parseInt`` (see ``_parse_int``)."""
    # NOTE: performance: the usual value, plain ASCII digits within range, is converted
    # here; anything else takes the full check. ~0.3 µs less per number field.
    if type(v) is str and v.isdigit() and v.isascii():
        n = int(v)
        if n <= 0x7FFF_FFFF:
            return n
    return _parse_int(v, name, 32)


def _parse_long(v: Any, name: str) -> int:
    """``Long.parseLong`` (see ``_parse_int``)."""
    if type(v) is str and v.isdigit() and v.isascii():  # NOTE: performance: as above
        n = int(v)
        if n <= 0x7FFF_FFFF_FFFF_FFFF:
            return n
    return _parse_int(v, name, 64)


_PARSERS: Mapping[str, Callable[[Any, str], Any]] = MappingProxyType(
    {
        "str": _parse_str,
        "Integer": _parse_integer,
        "Long": _parse_long,
        "bool": _parse_bool,
        "float": _parse_double,
    }
)


def java_string_value_of(v: Any) -> str:
    """``String.valueOf`` for header values: ``true``/``false``, decimal ints, Java doubles."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double_to_string(v)
    return str(int(v))


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class CommandCustomHeader:
    """Base of every typed header: ``to_ext_fields`` / ``from_ext_fields``."""

    __slots__ = ()
    #: (python field, extFields name, parser) for each field, built by ``wire_header``.
    _SPEC: ClassVar[tuple[tuple[str, str, Callable[[Any, str], Any]], ...]] = ()

    def to_ext_fields(self) -> dict[str, str]:
        """The header as extFields: every non-None field as ``String.valueOf``.

        Mirrors ``RemotingCommand#makeCustomHeaderToNet`` (remoting/protocol, RocketMQ 4.9.3).
        """
        out: dict[str, str] = {}
        for name, java, _ in self._SPEC:
            v = getattr(self, name)
            if v is not None:
                out[java] = java_string_value_of(v)
        return out

    @classmethod
    def from_ext_fields(cls: type[_H], ext: Mapping[str, Any] | None) -> _H:
        """Build the header from a frame's extFields (``None`` → all defaults).

        Mirrors ``RemotingCommand#decodeCommandCustomHeader`` (remoting/protocol, RocketMQ
        4.9.3); docs/reference.md §1.4.

        Raises:
            RemotingCommandException: a number field does not parse as a Java int/long.
        """
        if ext is None:
            return cls()
        kw: dict[str, Any] = {}
        for name, java, parse in cls._SPEC:
            v = ext.get(java)
            if v is not None:
                kw[name] = parse(v, java)
        return cls(**kw)


def wire_header(cls: type[_H]) -> type[_H]:
    """Class decorator (above ``@dataclass``): read the fields' Java types and wire names.

    Fills ``cls._SPEC`` from the annotations (``str``, ``Integer``, ``Long``, ``bool``,
    ``float``, each optionally ``| None``) and ``field(metadata={"java": name})``, and
    gives the class its own ``to_ext_fields`` / ``from_ext_fields`` written out from that
    spec (``_unrolled``), unless the class defines them itself.
    """
    spec = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        kind = next(t for t in str(f.type).replace(" ", "").split("|") if t != "None")
        spec.append((f.name, f.metadata.get("java", _camel(f.name)), _PARSERS[kind]))
    cls._SPEC = tuple(spec)
    to_ext, from_ext = _unrolled(cls)
    if "to_ext_fields" not in cls.__dict__:
        cls.to_ext_fields = to_ext  # type: ignore[method-assign]
    if "from_ext_fields" not in cls.__dict__:
        cls.from_ext_fields = classmethod(from_ext)  # type: ignore[assignment, method-assign]
    return fast_frozen_init(cls)


def _unrolled(cls: type) -> tuple[Callable[..., dict[str, str]], Callable[..., Any]]:
    """``to_ext_fields`` and ``from_ext_fields`` for ``cls``, one statement per field.

    NOTE: performance: the same steps as ``CommandCustomHeader``'s loops over ``_SPEC``
    (which stay the reference; tests/remoting/test_headers_fast_paths.py compares them on
    every header class), written out per class as ``dataclasses`` writes ``__init__``: no
    loop, no ``getattr``, no kwargs dict, and the usual value (a str, or an int for an int
    field) converted inline. Measured side by side (timeit, best of 5, load ~6 on 2 cores):
    a PULL_MESSAGE header's 11 fields decoded 7.6-11.3 -> 6.4-6.8 µs (the frozen
    dataclass's own ``__init__`` is most of what is left), PullMessageResponseHeader
    encoded 2.1-2.9 -> 0.55-0.84 µs, SendMessageResponseHeader 1.4-1.6 -> 0.40-0.65 µs.
    """
    names = {p: f"_p{i}" for i, p in enumerate(dict.fromkeys(p for _, _, p in cls._SPEC))}
    env: dict[str, Any] = {v: k for k, v in names.items()}
    env.update(cls=cls, java_string_value_of=java_string_value_of, _parse_str=_parse_str)
    enc = ["def to_ext_fields(self):", "    out = {}"]
    dec = ["def from_ext_fields(cls_, ext):", "    if ext is None:", "        return cls_()",
           "    get = ext.get"]  # fmt: skip
    args = []
    for name, java, parse in cls._SPEC:
        enc.append(f"    v = self.{name}")
        enc.append("    if v is not None:")
        if parse is _parse_str:
            conv = "v if type(v) is str else java_string_value_of(v)"
        elif parse in (_parse_integer, _parse_long):
            conv = "str(v) if type(v) is int else java_string_value_of(v)"
        else:
            conv = "java_string_value_of(v)"
        enc.append(f"        out[{java!r}] = {conv}")
        dec.append(f"    v = get({java!r})")
        if parse is _parse_str:
            dec.append(f"    {name} = None if v is None else v if type(v) is str else str(v)")
        else:
            # NOTE: performance: short unsigned ASCII digits (the usual number) are read
            # inline, as _parse_integer / _parse_long would read them; the rest calls them.
            limit = {_parse_integer: 10, _parse_long: 19}.get(parse)
            if limit is not None:
                dec.append(
                    f"    {name} = None if v is None else int(v) if (type(v) is str and "
                    f"v.isdigit() and v.isascii() and len(v) < {limit}) "
                    f"else {names[parse]}(v, {java!r})"
                )
            else:
                dec.append(f"    {name} = None if v is None else {names[parse]}(v, {java!r})")
        args.append(f"{name}={name}")
    enc.append("    return out")
    # a field left None is passed as the dataclass default (bool fields default to False)
    defaults = {
        f.name: f.default
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING and f.default is not None
    }
    for name, default in defaults.items():
        env[f"_d_{name}"] = default
        dec.append(f"    if {name} is None:")
        dec.append(f"        {name} = _d_{name}")
    dec.append("    return cls_(" + ", ".join(args) + ")")
    exec("\n".join(enc) + "\n\n" + "\n".join(dec), env)  # noqa: S102
    to_ext, from_ext = env["to_ext_fields"], env["from_ext_fields"]
    to_ext.__qualname__ = f"{cls.__name__}.to_ext_fields"
    from_ext.__qualname__ = f"{cls.__name__}.from_ext_fields"
    to_ext.__doc__ = CommandCustomHeader.to_ext_fields.__doc__
    from_ext.__doc__ = CommandCustomHeader.from_ext_fields.__doc__
    return to_ext, from_ext


# -- send (codes 10, 310, 320) ----------------------------------------------------------------


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeader(CommandCustomHeader):
    """SEND_MESSAGE (10) header with its long names; V2 (310/320) maps onto it. (N) a..h."""

    producer_group: str | None = None  # a (N)
    topic: str | None = None  # b (N)
    default_topic: str | None = None  # c (N); clients send TBW102
    default_topic_queue_nums: Integer | None = None  # d (N)
    queue_id: Integer | None = None  # e (N); < 0 → broker picks one
    sys_flag: Integer | None = None  # f (N); MessageSysFlag
    born_timestamp: Long | None = None  # g (N)
    flag: Integer | None = None  # h (N); the user flag
    properties: str | None = None  # i
    reconsume_times: Integer | None = None  # j
    unit_mode: bool = False  # k (primitive: always written)
    max_reconsume_times: Integer | None = None  # l
    batch: bool = False  # m (primitive: always written)


#: SendMessageRequestHeaderV2's one-letter names → SendMessageRequestHeader fields (docs/reference.md §2.2).
SEND_MESSAGE_V2_FIELDS: tuple[tuple[str, str], ...] = (
    ("a", "producer_group"), ("b", "topic"), ("c", "default_topic"),
    ("d", "default_topic_queue_nums"), ("e", "queue_id"), ("f", "sys_flag"),
    ("g", "born_timestamp"), ("h", "flag"), ("i", "properties"), ("j", "reconsume_times"),
    ("k", "unit_mode"), ("l", "max_reconsume_times"), ("m", "batch"),
)  # fmt: skip


def send_message_header_v2_to_ext_fields(h: SendMessageRequestHeader) -> dict[str, str]:
    """extFields of SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE: the short names ``a``..``m``.

    Mirrors ``SendMessageRequestHeaderV2#createSendMessageRequestHeaderV2`` followed by
    ``makeCustomHeaderToNet`` (common/protocol/header, RocketMQ 4.9.3).
    """
    out: dict[str, str] = {}
    for short, name in SEND_MESSAGE_V2_FIELDS:
        v = getattr(h, name)
        if v is not None:
            out[short] = java_string_value_of(v)
    return out


def decode_send_message_header_v2(ext: Mapping[str, Any] | None) -> SendMessageRequestHeader:
    """Decode the V2 short names into a ``SendMessageRequestHeader``.

    Mirrors ``AbstractSendMessageProcessor#decodeSendMessageHeaderV2`` and
    ``SendMessageRequestHeaderV2#createSendMessageRequestHeaderV1`` (broker/processor,
    RocketMQ 4.9.3); docs/reference.md §1.4.

    Raises:
        RemotingCommandException: ``ext`` is None ("the ext fields is null"), one of
            ``a``..``h`` is missing ("the custom field <a> is null"), or a number does not
            parse (Java: NumberFormatException; either way the broker answers SYSTEM_ERROR).
    """
    if ext is None:
        raise RemotingCommandException("the ext fields is null")
    # NOTE: performance: the header every Java and C++ send carries (a-c strings; d, f, h
    # short unsigned numbers; e a queue id; g a 13-digit time), read without a call per
    # field: ~1.5 µs of ~4 per send (timeit). Anything else (a field missing or not a
    # str, a sign, a longer number) takes the checked path below, which answers the same
    # for these and names the first bad field in order.
    get = ext.get
    a, b, c, d = get("a"), get("b"), get("c"), get("d")
    e, f, g, h = get("e"), get("f"), get("g"), get("h")
    if (
        type(a) is str and type(b) is str and type(c) is str
        and type(d) is str and d.isdigit() and d.isascii() and len(d) < 10
        and type(e) is str and e.isdigit() and e.isascii() and len(e) < 10
        and type(f) is str and f.isdigit() and f.isascii() and len(f) < 10
        and type(g) is str and g.isdigit() and g.isascii() and len(g) < 19
        and type(h) is str and h.isdigit() and h.isascii() and len(h) < 10
    ):  # fmt: skip
        # fewer than 10 (19) ASCII digits: within Integer (Long), no sign, as parseInt reads
        i, j, k, l, m = get("i"), get("j"), get("k"), get("l"), get("m")  # noqa: E741
        return SendMessageRequestHeader(
            producer_group=a, topic=b, default_topic=c, default_topic_queue_nums=int(d),
            queue_id=int(e), sys_flag=int(f), born_timestamp=int(g), flag=int(h),
            properties=None if i is None else _parse_str(i, "i"),
            reconsume_times=None if j is None else _parse_integer(j, "j"),
            unit_mode=False if k is None else _parse_bool(k, "k"),
            max_reconsume_times=None if l is None else _parse_integer(l, "l"),
            batch=False if m is None else _parse_bool(m, "m"),
        )  # fmt: skip
    # Field by field, in order, as Java writes this method (its own fast path past
    # reflection). Types: a–c, i str; d–f, h, j, l Integer; g Long; k, m bool.
    a = _parse_str(_checked(ext, "a"), "a")
    b = _parse_str(_checked(ext, "b"), "b")
    c = _parse_str(_checked(ext, "c"), "c")
    d = _parse_integer(_checked(ext, "d"), "d")
    e = _parse_integer(_checked(ext, "e"), "e")
    f = _parse_integer(_checked(ext, "f"), "f")
    g = _parse_long(_checked(ext, "g"), "g")
    h = _parse_integer(_checked(ext, "h"), "h")
    i, j, k, l, m = ext.get("i"), ext.get("j"), ext.get("k"), ext.get("l"), ext.get("m")  # noqa: E741
    return SendMessageRequestHeader(
        producer_group=a,
        topic=b,
        default_topic=c,
        default_topic_queue_nums=d,
        queue_id=e,
        sys_flag=f,
        born_timestamp=g,
        flag=h,
        properties=None if i is None else _parse_str(i, "i"),
        reconsume_times=None if j is None else _parse_integer(j, "j"),
        unit_mode=False if k is None else _parse_bool(k, "k"),
        max_reconsume_times=None if l is None else _parse_integer(l, "l"),
        batch=False if m is None else _parse_bool(m, "m"),
    )


def _checked(ext: Mapping[str, Any], short: str) -> Any:
    """``checkNotNull(fields.get(short), "the custom field <short> is null")``."""
    v = ext.get(short)
    if v is None:
        raise RemotingCommandException(f"the custom field <{short}> is null")
    return v


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageResponseHeader(CommandCustomHeader):
    """Reply to a send: msgId is the offsetMsgId (batch: comma-joined). (N) all but txn id."""

    msg_id: str | None = None
    queue_id: Integer | None = None
    queue_offset: Long | None = None
    transaction_id: str | None = None


# -- pull and query (11, 12) --------------------------------------------------------------


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageRequestHeader(CommandCustomHeader):
    """PULL_MESSAGE (11). (N) all but subscription and expressionType."""

    consumer_group: str | None = None
    topic: str | None = None
    queue_id: Integer | None = None
    queue_offset: Long | None = None
    max_msg_nums: Integer | None = None
    sys_flag: Integer | None = None  # PullSysFlag bits
    commit_offset: Long | None = None
    suspend_timeout_millis: Long | None = None
    subscription: str | None = None
    sub_version: Long | None = None
    expression_type: str | None = None  # "TAG" / "SQL92"


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageResponseHeader(CommandCustomHeader):
    """Reply to a pull; all four (N), and every reply needs them (docs/reference.md §1.8)."""

    suggest_which_broker_id: Long | None = None
    next_begin_offset: Long | None = None
    min_offset: Long | None = None
    max_offset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageRequestHeader(CommandCustomHeader):
    """QUERY_MESSAGE (12); extra extField ``_UNIQUE_KEY_QUERY`` is read by hand. (N) all."""

    topic: str | None = None
    key: str | None = None
    max_num: Integer | None = None
    begin_timestamp: Long | None = None
    end_timestamp: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageResponseHeader(CommandCustomHeader):
    index_last_update_timestamp: Long | None = None
    index_last_update_phyoffset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class ViewMessageRequestHeader(CommandCustomHeader):
    """VIEW_MESSAGE_BY_ID (33): ``offset`` is a commit-log offset. (N)"""

    offset: Long | None = None


# -- consumer offsets (14, 15, 29–32) -------------------------------------------------------


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetRequestHeader(CommandCustomHeader):
    consumer_group: str | None = None
    topic: str | None = None
    queue_id: Integer | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetResponseHeader(CommandCustomHeader):
    offset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetRequestHeader(CommandCustomHeader):
    consumer_group: str | None = None
    topic: str | None = None
    queue_id: Integer | None = None
    commit_offset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetResponseHeader(CommandCustomHeader):
    """Empty, as in Java; its extFields is ``{}``."""


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetRequestHeader(CommandCustomHeader):
    topic: str | None = None
    queue_id: Integer | None = None
    timestamp: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetResponseHeader(CommandCustomHeader):
    offset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetRequestHeader(CommandCustomHeader):
    topic: str | None = None
    queue_id: Integer | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetResponseHeader(CommandCustomHeader):
    offset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetRequestHeader(CommandCustomHeader):
    topic: str | None = None
    queue_id: Integer | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetResponseHeader(CommandCustomHeader):
    offset: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeRequestHeader(CommandCustomHeader):
    topic: str | None = None
    queue_id: Integer | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeResponseHeader(CommandCustomHeader):
    timestamp: Long | None = None


# -- clients and consumer groups (35, 36, 38, 40, 307) --------------------------------------


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterClientRequestHeader(CommandCustomHeader):
    """UNREGISTER_CLIENT (35): ``clientID`` (N); the unused group is absent (C++: "")."""

    client_id: str | None = field(default=None, metadata={"java": "clientID"})
    producer_group: str | None = None
    consumer_group: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerSendMsgBackRequestHeader(CommandCustomHeader):
    """CONSUMER_SEND_MSG_BACK (36): ``offset`` is the message's commit-log offset."""

    offset: Long | None = None  # (N)
    group: str | None = None  # (N)
    delay_level: Integer | None = None  # (N)
    origin_msg_id: str | None = None
    origin_topic: str | None = None
    unit_mode: bool = False
    max_reconsume_times: Integer | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupRequestHeader(CommandCustomHeader):
    consumer_group: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyConsumerIdsChangedRequestHeader(CommandCustomHeader):
    consumer_group: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerRunningInfoRequestHeader(CommandCustomHeader):
    """GET_CONSUMER_RUNNING_INFO (307), broker → client."""

    consumer_group: str | None = None
    client_id: str | None = None
    jstack_enable: bool = False


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeMessageDirectlyResultRequestHeader(CommandCustomHeader):
    """CONSUME_MESSAGE_DIRECTLY (309), admin → broker → client; the broker adds brokerName."""

    consumer_group: str | None = None  # (N)
    client_id: str | None = None
    msg_id: str | None = None
    broker_name: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerStatusRequestHeader(CommandCustomHeader):
    """INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223) and GET_CONSUMER_STATUS_FROM_CLIENT (221)."""

    topic: str | None = None  # (N)
    group: str | None = None  # (N)
    client_addr: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyMessageRequestHeader(CommandCustomHeader):
    """PUSH_REPLY_MESSAGE_TO_CLIENT (326), broker → requesting client. (N) all but
    properties, reconsumeTimes and unitMode; the hosts as ``InetSocketAddress#toString``."""

    producer_group: str | None = None
    topic: str | None = None
    default_topic: str | None = None
    default_topic_queue_nums: Integer | None = None
    queue_id: Integer | None = None
    sys_flag: Integer | None = None
    born_timestamp: Long | None = None
    flag: Integer | None = None
    properties: str | None = None
    reconsume_times: Integer | None = None
    unit_mode: bool = False
    born_host: str | None = None
    store_host: str | None = None
    store_timestamp: Long | None = None


# -- transactions (37, 39) ------------------------------------------------------------------


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class EndTransactionRequestHeader(CommandCustomHeader):
    """END_TRANSACTION (37); commitOrRollback 0 = unknown, 8 = commit, 12 = rollback."""

    producer_group: str | None = None
    tran_state_table_offset: Long | None = None
    commit_log_offset: Long | None = None
    commit_or_rollback: Integer | None = None
    from_transaction_check: bool = False
    msg_id: str | None = None
    transaction_id: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class CheckTransactionStateRequestHeader(CommandCustomHeader):
    tran_state_table_offset: Long | None = None
    commit_log_offset: Long | None = None
    msg_id: str | None = None
    transaction_id: str | None = None
    offset_msg_id: str | None = None


# -- topics and name server (17, 100–105) ----------------------------------------------------


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTopicRequestHeader(CommandCustomHeader):
    """UPDATE_AND_CREATE_TOPIC (17); topicFilterType "SINGLE_TAG" / "MULTI_TAG"."""

    topic: str | None = None
    default_topic: str | None = None
    read_queue_nums: Integer | None = None
    write_queue_nums: Integer | None = None
    perm: Integer | None = None
    topic_filter_type: str | None = None
    topic_sys_flag: Integer | None = None
    order: bool = False


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetRouteInfoRequestHeader(CommandCustomHeader):
    topic: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerRequestHeader(CommandCustomHeader):
    """REGISTER_BROKER (103); body is RegisterBrokerBody (``bodies``)."""

    broker_name: str | None = None
    broker_addr: str | None = None
    cluster_name: str | None = None
    ha_server_addr: str | None = None
    broker_id: Long | None = None
    compressed: bool = False
    body_crc32: Integer | None = 0


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerResponseHeader(CommandCustomHeader):
    ha_server_addr: str | None = None
    master_addr: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class UnRegisterBrokerRequestHeader(CommandCustomHeader):
    broker_name: str | None = None
    broker_addr: str | None = None
    cluster_name: str | None = None
    broker_id: Long | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class PutKVConfigRequestHeader(CommandCustomHeader):
    namespace: str | None = None
    key: str | None = None
    value: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigRequestHeader(CommandCustomHeader):
    namespace: str | None = None
    key: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigResponseHeader(CommandCustomHeader):
    value: str | None = None


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteKVConfigRequestHeader(CommandCustomHeader):
    namespace: str | None = None
    key: str | None = None


#: The request header class of each request code that has one (SEND_MESSAGE_V2 and
#: SEND_BATCH_MESSAGE decode with ``decode_send_message_header_v2`` instead).
REQUEST_HEADER_BY_CODE: Mapping[int, type[CommandCustomHeader]] = MappingProxyType(
    {
        RequestCode.SEND_MESSAGE: SendMessageRequestHeader,
        RequestCode.PULL_MESSAGE: PullMessageRequestHeader,
        RequestCode.QUERY_MESSAGE: QueryMessageRequestHeader,
        RequestCode.QUERY_CONSUMER_OFFSET: QueryConsumerOffsetRequestHeader,
        RequestCode.UPDATE_CONSUMER_OFFSET: UpdateConsumerOffsetRequestHeader,
        RequestCode.UPDATE_AND_CREATE_TOPIC: CreateTopicRequestHeader,
        RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: SearchOffsetRequestHeader,
        RequestCode.GET_MAX_OFFSET: GetMaxOffsetRequestHeader,
        RequestCode.GET_MIN_OFFSET: GetMinOffsetRequestHeader,
        RequestCode.GET_EARLIEST_MSG_STORETIME: GetEarliestMsgStoretimeRequestHeader,
        RequestCode.VIEW_MESSAGE_BY_ID: ViewMessageRequestHeader,
        RequestCode.UNREGISTER_CLIENT: UnregisterClientRequestHeader,
        RequestCode.CONSUMER_SEND_MSG_BACK: ConsumerSendMsgBackRequestHeader,
        RequestCode.END_TRANSACTION: EndTransactionRequestHeader,
        RequestCode.GET_CONSUMER_LIST_BY_GROUP: GetConsumerListByGroupRequestHeader,
        RequestCode.CHECK_TRANSACTION_STATE: CheckTransactionStateRequestHeader,
        RequestCode.NOTIFY_CONSUMER_IDS_CHANGED: NotifyConsumerIdsChangedRequestHeader,
        RequestCode.PUT_KV_CONFIG: PutKVConfigRequestHeader,
        RequestCode.GET_KV_CONFIG: GetKVConfigRequestHeader,
        RequestCode.DELETE_KV_CONFIG: DeleteKVConfigRequestHeader,
        RequestCode.REGISTER_BROKER: RegisterBrokerRequestHeader,
        RequestCode.UNREGISTER_BROKER: UnRegisterBrokerRequestHeader,
        RequestCode.GET_ROUTEINFO_BY_TOPIC: GetRouteInfoRequestHeader,
        RequestCode.GET_CONSUMER_RUNNING_INFO: GetConsumerRunningInfoRequestHeader,
        RequestCode.CONSUME_MESSAGE_DIRECTLY: ConsumeMessageDirectlyResultRequestHeader,
        RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: GetConsumerStatusRequestHeader,
        RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT: GetConsumerStatusRequestHeader,
        RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT: ReplyMessageRequestHeader,
    }
)
