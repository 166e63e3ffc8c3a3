"""Small helpers RocketMQ keeps in ``UtilAll``: compression, CRC, hex, file names, time text.

Mirrors ``org.apache.rocketmq.common.UtilAll`` (common, RocketMQ 4.9.3); docs/reference.md §4.1, §4.3,
§4.5 and §6.

What this module owns: pure byte and string helpers that the codec, the store and the
client share. What it must not know: clocks, sockets or the file system. Time helpers
take the instant as an argument and format it in **UTC**, where Java uses the JVM's
default time zone; a simulation run must not depend on the machine it runs on.
"""

from __future__ import annotations

import unicodedata
import zlib
from datetime import UTC, datetime, timedelta

__all__ = [
    "compress",
    "uncompress",
    "crc32",
    "bytes2string",
    "string2bytes",
    "offset_to_file_name",
    "time_millis_to_human_string",
    "time_millis_to_human_string2",
    "time_millis_to_human_string3",
    "format_date_yyyy_mm_dd_hh_mm_ss_sss",
    "start_of_month_millis",
    "ip_to_ipv4_str",
    "ip_to_ipv6_str",
    "is_blank",
    "java_trim",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: ``String#trim`` removes every char whose code is <= U+0020 from both ends.
_JAVA_TRIM_CHARS = "".join(chr(i) for i in range(0x21))

#: ``Character#isWhitespace`` ASCII/Latin-1 members (besides Unicode space separators).
_JAVA_WS_CONTROL = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f")
#: Space separators that ``Character#isWhitespace`` does *not* count (non-breaking).
_JAVA_WS_EXCLUDED = frozenset("\u00a0\u2007\u202f")


def compress(data: bytes, level: int = 5) -> bytes:
    """Deflate with a zlib header, as ``java.util.zip.Deflater(level)`` does.

    Mirrors ``UtilAll#compress`` (common, RocketMQ 4.9.3); docs/reference.md §4.3 (the producer uses
    level 5 above 4096 bytes; batches are never compressed).
    """
    return zlib.compress(data, level)


def uncompress(data: bytes) -> bytes:
    """Inflate a zlib stream. Mirrors ``UtilAll#uncompress``; docs/reference.md §4.3.

    Raises:
        zlib.error: ``data`` is not a zlib stream (Java throws an ``IOException``).
    """
    return zlib.decompress(data)


def crc32(data: bytes | bytearray | memoryview) -> int:
    """``java.util.zip.CRC32`` masked to 31 bits, the stored BODYCRC.

    Mirrors ``UtilAll#crc32`` (common, RocketMQ 4.9.3); docs/reference.md §4.1: "Hello RocketMQ"
    gives 1774740973.
    """
    return zlib.crc32(data) & 0x7FFFFFFF


def bytes2string(src: bytes) -> str:
    """Uppercase hex, two chars per byte. Mirrors ``UtilAll#bytes2string``; docs/reference.md §4.5."""
    return src.hex().upper()


def string2bytes(hex_string: str) -> bytes:
    """Parse hex (either case) back to bytes. Mirrors ``UtilAll#string2bytes``.

    Raises:
        ValueError: ``hex_string`` is not an even-length hex string.
    """
    return bytes.fromhex(hex_string)


def offset_to_file_name(offset: int) -> str:
    """A commit-log / consume-queue file name: the start offset as 20 zero-padded digits.

    Mirrors ``UtilAll#offset2FileName`` (common, RocketMQ 4.9.3); docs/reference.md §6
    (``1073741824`` → ``00000000001073741824``).
    """
    return f"{offset:020d}"


def _utc(t_ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=t_ms)


def time_millis_to_human_string(t_ms: int) -> str:
    """``yyyyMMddHHmmssSSS`` in UTC. Mirrors ``UtilAll#timeMillisToHumanString(long)``."""
    d = _utc(t_ms)
    return (
        f"{d.year:04d}{d.month:02d}{d.day:02d}{d.hour:02d}{d.minute:02d}{d.second:02d}"
        f"{d.microsecond // 1000:03d}"
    )


def time_millis_to_human_string2(t_ms: int) -> str:
    """``yyyy-MM-dd HH:mm:ss,SSS`` in UTC. Mirrors ``UtilAll#timeMillisToHumanString2``."""
    d = _utc(t_ms)
    return (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:{d.second:02d},"
        f"{d.microsecond // 1000:03d}"
    )


def time_millis_to_human_string3(t_ms: int) -> str:
    """``yyyyMMddHHmmss`` in UTC. Mirrors ``UtilAll#timeMillisToHumanString3``."""
    d = _utc(t_ms)
    return f"{d.year:04d}{d.month:02d}{d.day:02d}{d.hour:02d}{d.minute:02d}{d.second:02d}"


def format_date_yyyy_mm_dd_hh_mm_ss_sss(t_ms: int) -> str:
    """``yyyy-MM-dd#HH:mm:ss:SSS`` in UTC. Mirrors ``UtilAll#formatDate(new Date(t),
    UtilAll.YYYY_MM_DD_HH_MM_SS_SSS)`` (``QueueTimeSpan#getMinTimeStampStr`` ...)."""
    d = _utc(t_ms)
    return (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d}#{d.hour:02d}:{d.minute:02d}:{d.second:02d}:"
        f"{d.microsecond // 1000:03d}"
    )


def start_of_month_millis(t_ms: int, months_ahead: int = 0) -> int:
    """Epoch ms of 00:00:00.000 UTC on day 1 of ``t_ms``'s month, plus ``months_ahead``.

    The calendar arithmetic of ``MessageClientIDSetter#setStartTime`` (common/message,
    RocketMQ 4.9.3), done in UTC; docs/reference.md §4.5.
    """
    d = _utc(t_ms)
    month0 = d.month - 1 + months_ahead
    start = datetime(d.year + month0 // 12, month0 % 12 + 1, 1, tzinfo=UTC)
    delta = start - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000


def ip_to_ipv4_str(ip: bytes) -> str | None:
    """Dotted quad, or ``None`` unless ``ip`` has 4 bytes. Mirrors ``UtilAll#ipToIPv4Str``."""
    if len(ip) != 4:
        return None
    return f"{ip[0]}.{ip[1]}.{ip[2]}.{ip[3]}"


def ip_to_ipv6_str(ip: bytes) -> str | None:
    """Eight 4-digit lowercase hex groups, uncompressed, or ``None`` unless 16 bytes.

    Mirrors ``UtilAll#ipToIPv6Str`` (common, RocketMQ 4.9.3): no ``::`` shortening.
    """
    if len(ip) != 16:
        return None
    h = ip.hex()
    return ":".join(h[i : i + 4] for i in range(0, 32, 4))


def _java_is_whitespace(ch: str) -> bool:
    if ch in _JAVA_WS_CONTROL:
        return True
    return unicodedata.category(ch) in ("Zs", "Zl", "Zp") and ch not in _JAVA_WS_EXCLUDED


def is_blank(s: str | None) -> bool:
    """True for ``None``, ``""`` or only ``Character#isWhitespace`` chars.

    Mirrors ``UtilAll#isBlank`` (common, RocketMQ 4.9.3); docs/reference.md §7.1 (a blank topic is
    rejected with "The specified topic is blank.").
    """
    if not s:
        return True
    if "!" <= s[0] <= "~":  # NOTE: performance: a printable ASCII first char is never blank
        return False
    return all(_java_is_whitespace(ch) for ch in s)


def java_trim(s: str) -> str:
    """``String#trim``: strip chars <= U+0020 (not Unicode whitespace) from both ends."""
    return s.strip(_JAVA_TRIM_CHARS)
