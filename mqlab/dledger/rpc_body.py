"""DLedger messages as JSON bodies of remoting frames, under 0.2.3's field names.

Stands in for ``JSON.toJSONBytes(request)`` / ``JSON.parseObject(body, VoteResponse.class)``
in ``DLedgerRpcNettyService`` (DLedger 0.2.3), so the simulation driver carries DLedger's
messages through the same codec and frames as every other request. Keys are 0.2.3's field
names (``ledgerEndIndex``, ``voteResult``, ``commitIndex``), sorted; null fields are left
out; enums travel by name and byte arrays as base64, as fastjson writes them.

fastjson serializes through getters, so a ``PushEntryRequest`` also carries its batch getters
(``batch`` false, ``batchEntry`` [], ``count`` 0, ``firstEntryIndex``, ``lastEntryIndex``,
``totalSize`` 0); they are written here too. Every body kind was checked byte for byte
against DLedger 0.2.3's own classes serialized by fastjson 1.2.76, the version RocketMQ
4.9.3's pom pins (tests/dledger/test_dledger_protocol.py holds those bodies). A batch push
(``isEnableBatchPush``) is not modelled. A client's METADATA and GET answers were checked
against a real 4.9.3 node's (docs/dledger.md §3): ``peers`` is the one map, and fastjson
writes a map's keys in the order its ``HashMap`` iterates them, not sorted.

Raises ``ValueError`` on a body that is not a JSON object of the expected shape.
"""

from __future__ import annotations

import base64
import functools
import json
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any, TypeVar

from mqlab.common.java_hash_map import hash_map_order
from mqlab.dledger import protocol as p
from mqlab.dledger.dledger_entry import DLedgerEntry

__all__ = ["to_body", "from_body"]

_T = TypeVar("_T")

_ENUMS: dict[str, type[Enum]] = {
    "vote_result": p.VoteResult,
    "type": p.PushEntryType,
}


_SEPARATORS = (",", ":")
#: fields whose JSON value is an object or an array: ``MetadataResponse#peers``,
#: ``GetEntriesRequest#indexList``
_STRUCTURED: dict[str, type] = {"peers": dict, "index_list": list}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(x[:1].upper() + x[1:] for x in rest)


@functools.cache
def _keys(cls: type) -> tuple[tuple[str, str], ...]:
    """``cls``'s fields as (field name, JSON key) pairs, in declaration order.

    NOTE: performance: built once per class. ``dataclasses.fields`` and the name conversion
    on every message were a visible share of a DLedger group's loop time in ``serve``
    (``bench real --group dledger``: a push, its response and a heartbeat per entry and
    follower).
    """
    return tuple((f.name, _camel(f.name)) for f in fields(cls))


def _plain(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key in _keys(type(obj)):
        v = getattr(obj, name)
        if v is None:
            continue
        if isinstance(v, Enum):
            v = v.value
        elif isinstance(v, bytes | bytearray):
            v = base64.b64encode(bytes(v)).decode("ascii")
        elif is_dataclass(v):
            v = _plain(v)
        elif isinstance(v, tuple):  # GetEntriesResponse#entries
            v = [_plain(x) for x in v]
        elif isinstance(v, int):
            v = int(v)
        out[key] = v
    return out


def to_body(msg: Any) -> bytes:
    """The JSON body of a message (sorted keys, no spaces), as fastjson writes it."""
    plain = _plain(msg)
    if isinstance(msg, p.PushEntryRequest):  # PushEntryRequest's batch getters
        plain.update(
            batch=False, batchEntry=[], count=0, totalSize=0,
            firstEntryIndex=msg.get_first_entry_index(), lastEntryIndex=msg.get_last_entry_index(),
        )  # fmt: skip
    if isinstance(msg, p.MetadataResponse) and msg.peers is not None:
        # a bean's fields are sorted (fastjson's SortField) but a map's keys are not: the
        # peers come in the order MemberState's HashMap iterates them
        return _sorted_but(plain, "peers", {k: msg.peers[k] for k in hash_map_order(msg.peers)})
    return json.dumps(plain, sort_keys=True, separators=_SEPARATORS).encode("utf-8")


def _sorted_but(plain: dict[str, Any], key: str, value: dict[str, Any]) -> bytes:
    """``plain`` as JSON with sorted keys, but ``key``'s object ``value`` in its own order."""
    parts = [
        json.dumps(k) + ":" + json.dumps(value if k == key else v, sort_keys=k != key,
                                         separators=_SEPARATORS)
        for k, v in sorted(plain.items())
    ]  # fmt: skip
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def _build(cls: type[_T], data: dict[str, Any]) -> _T:
    kwargs: dict[str, Any] = {}
    for name, key in _keys(cls):
        v = data.get(key)
        if v is None:
            continue
        if name in _ENUMS:
            v = _ENUMS[name](v)
        elif name == "body":
            v = base64.b64decode(v)
        elif name == "entry":
            v = _build(DLedgerEntry, v)
        elif name == "entries":
            v = tuple(_build(DLedgerEntry, x) for x in v)
        elif name in _STRUCTURED and not isinstance(v, _STRUCTURED[name]):
            raise TypeError(f"{key} is not a JSON {_STRUCTURED[name].__name__}")
        elif name == "begin_index":  # a Long: fastjson also reads a string of digits
            if isinstance(v, str) and v.lstrip("-").isdigit():
                v = int(v)
            elif type(v) is not int:
                raise TypeError(f"{key} is not a number: {v!r}")
        kwargs[name] = v
    return cls(**kwargs)


def from_body(cls: type[_T], body: bytes | None) -> _T:
    """Parse a body into ``cls`` (unknown keys are ignored, as fastjson does).

    Raises:
        ValueError: not JSON, not an object, or a value of the wrong kind.
    """
    if not body:
        raise ValueError(f"{cls.__name__}: empty body")
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{cls.__name__}: body is not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: body is not a JSON object")
    try:
        return _build(cls, data)
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise ValueError(f"{cls.__name__}: bad body ({e})") from None
