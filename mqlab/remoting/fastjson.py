"""fastjson-compatible JSON: what RocketMQ 4.9.3 writes and reads in headers and bodies.

Mirrors what ``RemotingSerializable`` (remoting/protocol, RocketMQ 4.9.3) gets from
fastjson 1.2.76's ``JSON.toJSONString`` / ``JSON.parseObject``; docs/reference.md §1.7, §11
(RemotingSerializableTest).

fastjson is not standard JSON in three ways that matter on the wire:

* map keys that are not strings are written **unquoted**: ``{0:"10.0.0.1:10911"}`` for a
  ``HashMap<Long,String>``, and a map keyed by ``MessageQueue`` writes each key as an
  object: ``{{"brokerName":"b","queueId":0,"topic":"T"}:12}``;
* its parser is lenient: unquoted identifier keys, single-quoted strings, raw control
  characters inside strings (``loads`` also takes trailing commas and Java number
  suffixes such as ``12L``);
* its writer escapes U+0000–U+001F (``\\b \\t \\n \\f \\r`` short, the rest ``\\u00XX`` with
  upper-case hex), ``"``, ``\\``, U+007F–U+009F and the line/paragraph separators U+2028 and
  U+2029 (``\\u2028``, ``\\u2029``); other non-ASCII is written as is. (Read from 1.2.76's
  ``SerializeWriter#writeStringWithDoubleQuote`` and ``IOUtils.specicalFlags_doubleQuotes``;
  field names go through the same method.)

Parsing choice: an object used as a map key becomes a :class:`FrozenKey`, a hashable
tuple of ``(name, value)`` pairs sorted by name (nested objects are FrozenKeys, nested
arrays tuples); ``FrozenKey.to_dict()`` turns it back into a dict (e.g. for
``MessageQueue.from_json_dict``). Numeric keys become Python ``int`` (or ``float``).

Writing choice: ``dumps`` keeps dict insertion order (Java's ``HashMap`` order is
arbitrary anyway); code that writes a Java *bean* builds its dict with keys sorted, as
fastjson sorts bean properties. Sets are written sorted so runs are reproducible.

This module knows JSON text only: no frames, no RocketMQ classes. It keeps no state.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from enum import Enum
from json.decoder import scanstring
from typing import Any

try:
    import orjson
except ImportError:  # a Spark executor's Python: mqlab.experiments.ship sends sources only
    orjson = None  # the shortcuts step aside; every value and byte is the same without it

__all__ = [
    "FrozenKey",
    "dumps",
    "dumps_c",
    "loads",
    "loads_c",
    "loads_json_body",
    "java_double_to_string",
]


class FrozenKey(tuple):  # type: ignore[type-arg]
    """A JSON object used as a map key: ``(("brokerName", "b"), ("queueId", 0), ...)``.

    Pairs are sorted by name, so two keys with the same fields compare and hash equal
    whatever order the text had. ``dumps`` writes it back as an object.
    """

    __slots__ = ()

    @classmethod
    def from_dict(cls, d: dict[Any, Any]) -> FrozenKey:
        """Freeze a parsed object (nested objects → FrozenKey, arrays → tuple)."""
        return cls(sorted(((k, _freeze(v)) for k, v in d.items()), key=lambda kv: str(kv[0])))

    def to_dict(self) -> dict[Any, Any]:
        """Thaw back into a plain dict (nested FrozenKey → dict, tuple → list)."""
        return {k: _thaw(v) for k, v in self}

    def __repr__(self) -> str:
        return f"FrozenKey({self.to_dict()!r})"


def _freeze(v: Any) -> Any:
    if isinstance(v, dict):
        return FrozenKey.from_dict(v)
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, FrozenKey):
        return v.to_dict()
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------


def loads(text: str) -> Any:
    """Parse JSON text as fastjson would.

    Standard JSON goes through ``json.loads`` (raw control characters inside strings
    allowed, as fastjson allows them), and so does standard JSON with integer map keys
    once they are quoted (``_loads_int_keys``); only text both reject is re-read by the
    tolerant parser, so the common cases cost nothing extra.

    Raises:
        ValueError: the text is not JSON even by fastjson's lenient rules.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if _INT_KEY.search(text) is not None:
        fast = _loads_int_keys(text)
        if fast is not _NOT_FAST:
            return fast
    try:
        # NOTE: performance: the C scanner handles every header and most bodies; the
        # decoder is built once (``json.loads(text, strict=False)`` builds one per call,
        # ~1.5 µs).
        return _DECODER.decode(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    try:
        return _Parser(text).parse()
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_DECODER = json.JSONDecoder(strict=False)
#: An unquoted integer map key, e.g. the ``0`` of ``"brokerAddrs":{0:"127.0.0.1:10911"}``:
#: after ``{`` or ``,``, before ``:`` (JSON whitespace around it).
_INT_KEY = re.compile(r"([{,][ \t\n\r]*)(-?[0-9]+)(?=[ \t\n\r]*:)")
_INT_KEY_MARK = "\x00"  # prefixes a quoted integer key; texts that hold it take the slow path
_MARKED_INT_KEY = r'\1"' + _INT_KEY_MARK + r'\2"'
_NOT_FAST = object()
#: Texts with more containers than this take the slow path: they could nest deeper than
#: the tolerant parser's recursion allows, and it must be the one that fails then.
_FAST_MAX_CONTAINERS = 256


def _int_keys_object(pairs: list[tuple[str, Any]]) -> dict[Any, Any]:
    mark = _INT_KEY_MARK
    return {(int(k[1:]) if k[:1] == mark else k): v for k, v in pairs}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # the tolerant parser rejects NaN / Infinity


_INT_KEYS_DECODER = json.JSONDecoder(
    strict=False, object_pairs_hook=_int_keys_object, parse_constant=_reject_constant
)


def _loads_int_keys(text: str) -> Any:
    """Standard JSON but for unquoted integer map keys (a route's ``brokerAddrs``).

    NOTE: performance — the tolerant parser (``_Parser``) takes ~30 µs for a one-broker
    route body; quoting each integer key with a marker, parsing in C and turning marked
    keys back into ints takes ~10 µs. The result is the one ``_Parser`` gives (same string
    scanner, int/float rules and duplicate-key rule). A "key" found inside a string is
    quoted too, but that always breaks the text (a ``"`` then a NUL outside any string),
    so the C parser refuses it. Whatever it refuses, or what could behave differently
    (NaN, the marker character, deep nesting), returns ``_NOT_FAST`` for the usual path.
    """
    if (
        _INT_KEY_MARK in text
        or "\\u0000" in text  # a key could decode to a marked one
        or text.count("{") + text.count("[") > _FAST_MAX_CONTAINERS
    ):
        return _NOT_FAST
    try:
        return _INT_KEYS_DECODER.decode(_INT_KEY.sub(_MARKED_INT_KEY, text))
    except (ValueError, RecursionError):
        return _NOT_FAST


#: ``loads_c`` leaves to ``loads`` a text with a run of 19 digits where a number can start: it
#: could be an integer past 64 bits, which orjson reads as a float (json, and fastjson, as an
#: integer). Found with one ``bytes.translate`` (digits to "0", the characters a number, its
#: fraction or its exponent can follow to "1", the rest to " ") and a substring search: ~5x
#: fewer instructions than a regex (callgrind). A run inside a string after a letter (the
#: Java client's ``UNIQ_KEY``, ``FD000000…``, in every SEND_MESSAGE_V2 header) is no number,
#: and orjson reads such a text as ``loads`` does; a run after one of those characters inside
#: a string still goes to ``loads`` (conservative).
_NUMBER_START = b" \t\n\r\x0b\x0c:,[+-.eE"
_DIGITS_AND_STARTS = bytes(
    48 if 48 <= b <= 57 else 49 if b in _NUMBER_START else 32 for b in range(256)
)
_LONG_NUMBER = b"0" * 19
_LONG_NUMBER_AFTER_START = b"1" + _LONG_NUMBER


def _long_number(data: bytes) -> bool:
    """Whether ``data`` may hold a number of 19 digits or more (see above)."""
    t = data.translate(_DIGITS_AND_STARTS)
    return _LONG_NUMBER_AFTER_START in t or t.startswith(_LONG_NUMBER)


def loads_c(data: bytes) -> Any:
    """``loads(data.decode("utf-8"))`` where orjson gives the same value; else None (then
    ``loads`` must read it; a JSON ``null`` is None either way).

    NOTE: performance — orjson reads a 300-byte request header in ~2.6 µs where
    ``json``'s scanner takes ~5.4 µs with the UTF-8 decode (``python -m mqlab bench
    real``: one header read per request). orjson refuses all that ``json`` (with
    ``strict=False``) or the tolerant parser would read differently: raw control
    characters in strings, NaN and Infinity, floats past the double range, lone surrogate
    escapes, invalid UTF-8, anything after the value, fastjson's dialect (unquoted integer
    keys, single quotes); those, and what orjson would read otherwise (integers past 64
    bits become floats in orjson; more containers than ``_FAST_MAX_CONTAINERS``, so no
    deeper nesting than ``loads`` reads) go to ``loads``.
    ``tests/remoting/test_fastjson_c.py`` compares the two.
    """
    if orjson is None:
        return None
    if (
        len(data) > 2 * _FAST_MAX_CONTAINERS  # shorter texts cannot hold that many
        and data.count(b"{") + data.count(b"[") > _FAST_MAX_CONTAINERS
    ) or _long_number(data):
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


#: What ``dumps_c`` leaves to the caller's own writer: the escapes fastjson writes
#: differently from orjson (and ``json``): upper-case hex for U+000B, U+000E, U+000F and
#: U+001A..U+001F, and U+007F..U+009F, U+2028, U+2029 escaped rather than raw (UTF-8 here).
_NOT_FASTJSON_BYTES = re.compile(
    rb"\\u00(?:0b|0e|0f|1[a-f])|\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]"
)
#: The first of those alone, for ASCII text that holds a ``\u00`` escape (properties do:
#: their separators U+0001 and U+0002).
_LOWER_HEX_ESCAPE = re.compile(rb"\\u00(?:0b|0e|0f|1[a-f])")


def dumps_c(d: dict[str, Any]) -> bytes | None:
    """The UTF-8 of ``dumps(d)`` by orjson, for a dict of str keys whose values are str,
    int, bool, None or such a dict; None where fastjson's text would differ.

    NOTE: performance — a response header in ~0.4 µs instead of ~5 µs (``json``'s encoder
    and the UTF-8 encode). The caller guarantees the value types (floats, enums, sets and
    beans are written by fastjson's own rules, so they stay with ``dumps``); orjson refuses
    non-str keys, integers past 64 bits and lone surrogates, and the text is checked for
    the escapes fastjson writes differently.
    """
    if orjson is None:
        return None
    try:
        out = orjson.dumps(d)
    except TypeError:  # orjson.JSONEncodeError
        return None
    if out.isascii():  # the usual case, checked without the regex (~0.2 µs, not ~3)
        if b"\x7f" in out or (b"\\u00" in out and _LOWER_HEX_ESCAPE.search(out) is not None):
            return None
    elif _NOT_FASTJSON_BYTES.search(out) is not None:
        return None
    return out


def loads_json_body(body: bytes | bytearray | memoryview | None) -> Any:
    """Parse a frame body (UTF-8 fastjson text, perhaps with the C++ client's ``\\n``).

    Mirrors ``RemotingSerializable.decode`` (remoting/protocol, RocketMQ 4.9.3).

    Raises:
        ValueError: no body, not UTF-8, or not JSON.
    """
    if not body:
        raise ValueError("body is empty, expected JSON")
    data = bytes(body)
    fast = loads_c(data)
    if fast is not None:
        return fast
    return loads(data.decode("utf-8"))


_WS = re.compile(r"[ \t\n\r\f\v\ufeff]*")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?([LSBFDlsbfd])?")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SQ_ESCAPES = {
    "'": "'", '"': '"', "\\": "\\", "/": "/",
    "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0",
}  # fmt: skip
_LITERALS = {"true": True, "false": False, "null": None}


class _Parser:
    """Recursive-descent reader for fastjson's lenient dialect (the slow path)."""

    __slots__ = ("s", "i")

    def __init__(self, s: str) -> None:
        self.s = s
        self.i = 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at char {self.i}: {self.s[self.i : self.i + 20]!r}")

    def ws(self) -> None:
        self.i = _WS.match(self.s, self.i).end()  # type: ignore[union-attr]

    def parse(self) -> Any:
        self.ws()
        if self.i >= len(self.s):
            raise self.fail("empty JSON text")
        v = self.value()
        self.ws()
        if self.i != len(self.s):
            raise self.fail("extra data after JSON value")
        return v

    def value(self) -> Any:
        s, i = self.s, self.i
        if i >= len(s):
            raise self.fail("unexpected end of JSON")
        c = s[i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            v, self.i = scanstring(s, i + 1, False)
            return v
        if c == "'":
            return self.single_quoted()
        m = _NUMBER.match(s, i)
        if m:
            return self.number(m)
        m = _IDENT.match(s, i)
        if m and m.group() in _LITERALS:
            self.i = m.end()
            return _LITERALS[m.group()]
        raise self.fail("unexpected character")

    def number(self, m: re.Match[str]) -> int | float:
        self.i = m.end()
        text = m.group()
        if m.group(1):
            text = text[:-1]
        try:
            if "." in text or "e" in text or "E" in text:
                return float(text)
            return int(text)
        except ValueError:
            raise self.fail("bad number") from None

    def key(self) -> Any:
        c = self.s[self.i]
        if c in "{[":
            return _freeze(self.value())
        if c in "\"'":
            return self.value()
        m = _IDENT.match(self.s, self.i)
        if m and m.group() not in _LITERALS:
            self.i = m.end()
            return m.group()  # unquoted identifier key
        return self.value()  # number key (fastjson's Map<Long,...>) or true/false/null

    def obj(self) -> dict[Any, Any]:
        self.i += 1
        out: dict[Any, Any] = {}
        while True:
            self.ws()
            if self.i >= len(self.s):
                raise self.fail("unterminated object")
            if self.s[self.i] == "}":
                self.i += 1
                return out
            k = self.key()
            self.ws()
            if self.s[self.i : self.i + 1] != ":":
                raise self.fail("expected ':'")
            self.i += 1
            self.ws()
            out[k] = self.value()
            self.ws()
            c = self.s[self.i : self.i + 1]
            if c == ",":
                self.i += 1
            elif c == "}":
                self.i += 1
                return out
            else:
                raise self.fail("expected ',' or '}'")

    def arr(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            self.ws()
            if self.i >= len(self.s):
                raise self.fail("unterminated array")
            if self.s[self.i] == "]":
                self.i += 1
                return out
            out.append(self.value())
            self.ws()
            c = self.s[self.i : self.i + 1]
            if c == ",":
                self.i += 1
            elif c == "]":
                self.i += 1
                return out
            else:
                raise self.fail("expected ',' or ']'")

    def single_quoted(self) -> str:
        s, i = self.s, self.i + 1
        parts: list[str] = []
        while True:
            j = i
            while j < len(s) and s[j] not in "'\\":
                j += 1
            parts.append(s[i:j])
            if j >= len(s):
                self.i = j
                raise self.fail("unterminated string")
            if s[j] == "'":
                self.i = j + 1
                return "".join(parts)
            esc = s[j + 1 : j + 2]
            if esc == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", s[j + 2 : j + 6]):
                parts.append(chr(int(s[j + 2 : j + 6], 16)))
                i = j + 6
            elif esc == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", s[j + 2 : j + 4]):
                parts.append(chr(int(s[j + 2 : j + 4], 16)))
                i = j + 4
            elif esc in _SQ_ESCAPES:
                parts.append(_SQ_ESCAPES[esc])
                i = j + 2
            else:
                self.i = j
                raise self.fail("bad escape")


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------

_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\\x7f-\x9f\u2028\u2029]')
_SHORT_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r",
}  # fmt: skip


def _escape_one(m: re.Match[str]) -> str:
    c = m.group()
    return _SHORT_ESCAPES.get(c) or f"\\u{ord(c):04X}"


def _quote(s: str) -> str:
    if _NEEDS_ESCAPE.search(s) is None:
        return '"' + s + '"'
    return '"' + _NEEDS_ESCAPE.sub(_escape_one, s) + '"'


def java_double_to_string(x: float) -> str:
    """Java's ``Double.toString``: ``0.618``, ``1.0``, ``1.0E20``, ``1.5E-5``.

    Plain notation for 10^-3 <= |x| < 10^7, computerized scientific notation otherwise
    (the shortest digits that round-trip, which is what Java prints in practice).
    """
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    r = repr(float(x))
    if 1e-3 <= abs(x) < 1e7:
        return r
    sign, digits, exp = Decimal(r).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e10 = len(digits) + int(exp) - 1
    return f"{'-' if sign else ''}{ds[0]}.{ds[1:] or '0'}E{e10}"


def dumps(obj: Any, *, pretty: bool = False) -> str:
    """Write ``obj`` as fastjson's ``toJSONString`` (``pretty``: ``PrettyFormat``).

    Types: dict (str keys quoted; int/float/bool/None keys unquoted; FrozenKey or
    objects with ``to_json_dict()`` as keys written as objects), list/tuple, set and
    frozenset (sorted), str, int, float (Java ``Double.toString``; NaN/Infinity → null),
    bool, None, Enum (its name, as fastjson's WriteEnumUsingName), bytes (base64, as
    fastjson writes ``byte[]``), FrozenKey and objects with ``to_json_dict()``.

    Raises:
        TypeError: a value or key of another type.
    """
    out: list[str] = []
    if pretty:
        _write(obj, out.append, "\n")
    else:
        _compact(obj, out.append)
    return "".join(out)


#: What ``_write`` writes by a rule of its own before ``to_json_dict`` (its order).
_NOT_BEANS = (str, Enum, int, float, dict, FrozenKey, list, tuple, set, frozenset, bytes,
              bytearray)  # fmt: skip


def _compact(obj: Any, w: Callable[[str], None]) -> None:
    """``_write(obj, w, None)``, the same text, faster. NOTE: performance — the compact
    writer is the one every body takes (``RemotingSerializable#encode``): a heartbeat, a
    route, a broker's registration, each config file; py-spy put the plain writer at ~4 %
    of a search's run (``mqlab.explore``), and a run's bodies went from 1.9-2.6 to
    1.35-1.5 ms. Exact built-in types are dispatched by ``type`` and
    written here; everything else (subclasses, enums, sets, floats, bytes, keys that are
    not strings) by ``_write``'s own rules. ``tests/remoting/test_fastjson_fast_paths.py``
    compares the two."""
    t = type(obj)
    if t is str:
        w(_quote(obj))
    elif t is dict:
        _compact_object(obj, w)
    elif t is int:
        w(str(obj))
    elif obj is None:
        w("null")
    elif t is bool:
        w("true" if obj else "false")
    elif t is list or t is tuple:
        w("[")
        first = True
        for v in obj:
            if first:
                first = False
            else:
                w(",")
            _compact(v, w)
        w("]")
    elif not isinstance(obj, _NOT_BEANS) and hasattr(obj, "to_json_dict"):
        _compact_object(obj.to_json_dict(), w)
    else:
        _write(obj, w, None)


def _compact_object(d: Any, w: Callable[[str], None]) -> None:
    w("{")
    first = True
    for k, v in d.items():
        if first:
            first = False
        else:
            w(",")
        if type(k) is str:
            w(_quote(k))
        else:
            _write_key(k, w, None)
        w(":")
        _compact(v, w)
    w("}")


def _write(obj: Any, w: Callable[[str], None], nl: str | None) -> None:
    """Append the JSON of ``obj``; ``nl`` is the current newline+indent, None if compact."""
    if obj is None:
        w("null")
    elif obj is True:
        w("true")
    elif obj is False:
        w("false")
    elif isinstance(obj, str):
        w(_quote(obj))
    elif isinstance(obj, Enum):
        w(_quote(obj.name))
    elif isinstance(obj, int):
        w(str(int(obj)))
    elif isinstance(obj, float):
        w("null" if math.isnan(obj) or math.isinf(obj) else java_double_to_string(obj))
    elif isinstance(obj, dict):
        _write_object(obj.items(), w, nl)
    elif isinstance(obj, FrozenKey):
        _write_object(obj, w, nl)
    elif isinstance(obj, list | tuple):
        _write_array(obj, w, nl)
    elif isinstance(obj, set | frozenset):
        _write_array(_sorted_set(obj), w, nl)
    elif isinstance(obj, bytes | bytearray):
        w('"' + base64.b64encode(obj).decode("ascii") + '"')
    elif hasattr(obj, "to_json_dict"):
        _write_object(obj.to_json_dict().items(), w, nl)
    else:
        raise TypeError(f"cannot write {type(obj).__name__} as fastjson: {obj!r}")


def _write_key(k: Any, w: Callable[[str], None], nl: str | None) -> None:
    if isinstance(k, str):
        w(_quote(k))
    elif isinstance(k, Enum):
        w(_quote(k.name))
    elif k is None or isinstance(k, bool | int | float) or hasattr(k, "to_json_dict"):
        _write(k, w, nl)  # fastjson writes non-String keys unquoted (docs/reference.md §1.7)
    elif isinstance(k, FrozenKey):
        _write_object(k, w, nl)
    else:
        raise TypeError(f"cannot write map key of type {type(k).__name__}: {k!r}")


def _write_object(
    items: Iterable[tuple[Any, Any]], w: Callable[[str], None], nl: str | None
) -> None:
    w("{")
    inner = None if nl is None else nl + "\t"
    first = True
    for k, v in items:
        if not first:
            w(",")
        first = False
        if inner is not None and isinstance(k, str):
            # fastjson's MapSerializer breaks the line only before String keys; a map with
            # int or object keys stays on one line, e.g. {0:250,1:250\n\t\t} (docs/reference.md §7.4).
            w(inner)
        _write_key(k, w, inner)
        w(":")
        _write(v, w, inner)
    if not first and nl is not None:
        w(nl)
    w("}")


def _write_array(items: Iterable[Any], w: Callable[[str], None], nl: str | None) -> None:
    w("[")
    inner = None if nl is None else nl + "\t"
    first = True
    for v in items:
        if not first:
            w(",")
        first = False
        if inner is not None:
            w(inner)
        _write(v, w, inner)
    if not first and nl is not None:
        w(nl)
    w("]")


def _sorted_set(s: set[Any] | frozenset[Any]) -> list[Any]:
    try:
        return sorted(s)
    except TypeError:  # mixed types: order by their JSON text instead
        return sorted(s, key=dumps)
