"""The name server's live settings: what GET_NAMESRV_CONFIG shows, UPDATE_NAMESRV_CONFIG edits.

Mirrors ``Configuration`` (common), the ``MixAll`` helpers it uses (``properties2String``,
``string2Properties``, ``object2Properties``, ``properties2Object``) and the listen-side
``NettyServerConfig`` (remoting/netty), RocketMQ 4.9.3; facts §2.1 (codes 318/319).

What it owns: ``all_configs``, the merged ``key → value`` text of every registered config
object (``NamesrvController`` registers its ``NamesrvConfig`` and ``NettyServerConfig``).
Keys are the Java field names (``orderMessageEnable``), values their ``toString``; a
field whose value is null (None) is left out, as ``object2Properties`` does.

The text format is ``key=value\\n`` per entry, nothing escaped (``properties2String``);
updates are read with ``java.util.Properties#load`` rules, and Java feeds that loader the
UTF-8 bytes as ISO-8859-1, so a non-ASCII value comes back as mojibake ("é" → "Ã©").
An update changes only keys that exist (``mergeIfExist``) and fields that have a setter;
a value that does not parse (``Integer.parseInt``) is skipped silently by Java's
``properties2Object``, so the field and what GET shows keep the old value.

Where mqlab differs from Java, on purpose:

* Java's ``Properties`` is a Hashtable, so GET lists entries in hash order (which also
  depends on the JDK); mqlab sorts the keys;
* Java writes the whole text to ``configStorePath`` after every update, and its
  ``KVConfigManager`` persists to the current ``kvConfigPath``. 4.9.3 lets an update set
  both paths (later releases refuse these two keys: it was a remote file-write hole), so
  mqlab, which also serves real sockets, changes the fields (GET shows them) but writes
  no file from a request.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Configuration",
    "NettyServerConfig",
    "object_to_properties",
    "properties_to_object",
    "properties_to_string",
    "string_to_properties",
]

_INT32 = re.compile(r"[+-]?[0-9]+")
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_WHITESPACE = " \t\f"  # Properties#load's whitespace; a natural line ends at \n, \r or \r\n


@dataclass(slots=True)
class NettyServerConfig:
    """The name server's listen-side settings. Mirrors ``NettyServerConfig`` (remoting/netty).

    Java defaults, with ``listenPort`` 9876 as ``NamesrvStartup`` sets it (the class says
    8888); ``NamesrvController`` takes the port from its address. The socket buffer,
    backlog and water-mark defaults are ``NettySystemConfig``'s (no -D overrides). mqlab's
    drivers read none of these; they are here for GET/UPDATE_NAMESRV_CONFIG.
    """

    listen_port: int = 9876
    server_worker_threads: int = 8
    server_callback_executor_threads: int = 0
    server_selector_threads: int = 3
    server_oneway_semaphore_value: int = 256
    server_async_semaphore_value: int = 64
    server_channel_max_idle_time_seconds: int = 120
    server_socket_snd_buf_size: int = 0
    server_socket_rcv_buf_size: int = 0
    write_buffer_high_water_mark: int = 0
    write_buffer_low_water_mark: int = 0
    server_socket_backlog: int = 1024
    server_pooled_byte_buf_allocator_enable: bool = True
    use_epoll_native_selector: bool = False


def _java_name(field_name: str) -> str:
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
            out[_java_name(f.name)] = _to_string(value)
    return out


def properties_to_object(properties: Mapping[str, str], obj: Any) -> None:
    """Set each field of ``obj`` whose Java name is in ``properties``.

    Mirrors ``MixAll#properties2Object``: ints by ``Integer.parseInt`` (a bad or
    out-of-range number is skipped: Java catches and ignores the exception), booleans by
    ``Boolean.parseBoolean`` (anything but "true", any case, is false), strings as given.
    """
    for f in dataclasses.fields(obj):
        text = properties.get(_java_name(f.name))
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


def string_to_properties(text: str) -> dict[str, str] | None:
    """Read properties text; None when it does not load (a malformed ``\\uXXXX``).

    Mirrors ``MixAll#string2Properties``: ``Properties#load`` over ``text``'s UTF-8 bytes,
    which that method reads as ISO-8859-1, so non-ASCII text turns into mojibake. A later
    duplicate key wins. Checked against JDK 17's ``Properties#load`` on 40,000 random texts
    of separators, escapes, comments and line ends.
    """
    latin1 = text.encode("utf-8").decode("latin-1")
    try:
        return dict(_split_key_value(line) for line in _logical_lines(latin1))
    except ValueError:
        return None


class Configuration:
    """Registered config objects plus ``all_configs``, their merged text.

    Mirrors ``Configuration`` (common, RocketMQ 4.9.3), without the store path and the
    persist step (see the module notes).

    Args:
        *config_objects: config dataclasses, registered in this order.
    """

    def __init__(self, *config_objects: Any) -> None:
        self.config_objects: list[Any] = []
        self.all_configs: dict[str, str] = {}
        for obj in config_objects:
            self.register_config(obj)

    def register_config(self, obj: Any) -> None:
        """Add an object and merge its fields into ``all_configs``. Mirrors ``#registerConfig``."""
        self.all_configs.update(object_to_properties(obj))
        self.config_objects.append(obj)

    def update(self, properties: Mapping[str, str]) -> None:
        """UPDATE_NAMESRV_CONFIG. Mirrors ``Configuration#update``: ``all_configs`` takes
        only keys it already has (``mergeIfExist``); every object takes every key it has a
        field for (``properties2Object``), even one whose value was null so far."""
        for key, value in properties.items():
            if key in self.all_configs:
                self.all_configs[key] = value
        for obj in self.config_objects:
            properties_to_object(properties, obj)

    def get_all_configs_format_string(self) -> str:
        """GET_NAMESRV_CONFIG's text. Mirrors ``#getAllConfigsFormatString``: the objects'
        current fields are merged in first, so a skipped (unparsable) update shows the
        field's real value again."""
        for obj in self.config_objects:
            self.all_configs.update(object_to_properties(obj))
        return properties_to_string(self.all_configs)
