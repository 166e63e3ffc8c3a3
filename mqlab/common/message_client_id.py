"""The producer-side message id (``UNIQ_KEY``): ip, pid, class-loader hash, time, counter.

Mirrors ``org.apache.rocketmq.common.message.MessageClientIDSetter`` (common/message,
RocketMQ 4.9.3); docs/reference.md §4.5 and §11 (``MessageClientIDSetterTest``).

Layout, as uppercase hex (32 chars for IPv4, 56 for IPv6)::

    ip (4 or 16 bytes) | pid int16 | classLoader hashCode int32 |
    ms since the start of the current month int32 | counter int16

What this module owns: the generator state (the fixed prefix, the month window, the
counter) and the parsers. What it must not know: the wall clock, the host's IP or
the process id. Java reads all three in a static initialiser; mqlab takes them as
constructor arguments and ``now_ms`` per call, so every client in a simulation gets
its own deterministic generator. Months are computed in UTC (Java: default zone).
"""

from __future__ import annotations

import ipaddress

from mqlab.common import message_const as mc
from mqlab.common.message import Message
from mqlab.common.util_all import ip_to_ipv4_str, ip_to_ipv6_str, start_of_month_millis

__all__ = [
    "MessageClientIDSetter",
    "get_ip_from_uniq_id",
    "get_ip_str_from_uniq_id",
    "get_pid_from_uniq_id",
    "get_near_time_from_id",
]


def _id_bytes(msg_id: str) -> bytes:
    try:
        return bytes.fromhex(msg_id)
    except ValueError:
        raise ValueError(f"msg_id must be a hex UNIQ_KEY, got {msg_id!r}") from None


def get_ip_from_uniq_id(msg_id: str) -> bytes:
    """The 4 (or, for a 28-byte id, 16) IP bytes. Mirrors ``#getIPFromID``."""
    b = _id_bytes(msg_id)
    return b[: 16 if len(b) == 28 else 4]


def get_ip_str_from_uniq_id(msg_id: str) -> str:
    """The IP as text (IPv6 uncompressed, ``UtilAll#ipToIPv6Str``). Mirrors ``#getIPStrFromID``."""
    ip = get_ip_from_uniq_id(msg_id)
    text = ip_to_ipv6_str(ip) if len(ip) == 16 else ip_to_ipv4_str(ip)
    assert text is not None, "IP slice is 4 or 16 bytes"
    return text


def get_pid_from_uniq_id(msg_id: str) -> int:
    """The pid's low 16 bits, unsigned. Mirrors ``#getPidFromID``."""
    b = _id_bytes(msg_id)
    p = len(b) - 2 - 4 - 4 - 2
    return int.from_bytes(b[p : p + 2], "big")


def get_near_time_from_id(msg_id: str, now_ms: int) -> int:
    """Epoch ms when the id was made, assuming it is from this month or the last one.

    Mirrors ``MessageClientIDSetter#getNearlyTimeFromID`` (common/message, RocketMQ
    4.9.3): if ``monthStart + span >= now`` the id is taken to be from the previous
    month (Java's comparison, kept as is).
    """
    b = _id_bytes(msg_id)
    ip_len = 16 if len(b) == 28 else 4
    span = int.from_bytes(b[ip_len + 6 : ip_len + 10], "big")
    month_start = start_of_month_millis(now_ms)
    if month_start + span >= now_ms:
        month_start = start_of_month_millis(now_ms, months_ahead=-1)
    return month_start + span


class MessageClientIDSetter:
    """A deterministic ``UNIQ_KEY`` generator for one client.

    Mirrors ``MessageClientIDSetter`` (common/message, RocketMQ 4.9.3).

    Args:
        ip: the client's IP, IPv4 dotted quad or IPv6 text.
        pid: the process id (only the low 16 bits are kept, as Java's ``(short)`` cast).
        class_loader_hash: Java's ``ClassLoader#hashCode`` (low 32 bits kept).
        start_time_ms: any instant of the month to start in; the generator rounds it
            down to 00:00 UTC of day 1 (Java's ``setStartTime``).

    Raises:
        ValueError: ``ip`` is not an IP address.
    """

    __slots__ = ("_fix_string", "_start_time", "_next_start_time", "_counter")

    def __init__(self, ip: str, pid: int, class_loader_hash: int, start_time_ms: int) -> None:
        try:
            ip_bytes = ipaddress.ip_address(ip).packed
        except ValueError:
            raise ValueError(f"ip must be an IPv4 or IPv6 address, got {ip!r}") from None
        self._fix_string = (
            ip_bytes.hex().upper() + f"{pid & 0xFFFF:04X}" + f"{class_loader_hash & 0xFFFFFFFF:08X}"
        )
        self._counter = 0
        self._set_start_time(start_time_ms)

    def _set_start_time(self, millis: int) -> None:
        """Mirrors ``MessageClientIDSetter#setStartTime``: this month's and next month's start."""
        self._start_time = start_of_month_millis(millis)
        self._next_start_time = start_of_month_millis(millis, months_ahead=1)

    @property
    def start_time(self) -> int:
        """Epoch ms of the start of the month the time field counts from."""
        return self._start_time

    def create_uniq_id(self, now_ms: int) -> str:
        """The next ``UNIQ_KEY``.

        Mirrors ``MessageClientIDSetter#createUniqID`` (common/message, RocketMQ 4.9.3):
        roll the month window forward when ``now_ms`` reaches next month, write
        ``now - startTime`` as an int32 (a small negative difference, > −1 000 000 ms,
        becomes 0: "may be caused by NTP"), then the counter's low 16 bits, then add 1
        to the counter.
        """
        if now_ms >= self._next_start_time:
            self._set_start_time(now_ms)
        diff = (now_ms - self._start_time) & 0xFFFFFFFF
        if diff & 0x80000000:
            diff -= 0x1_0000_0000
        if -1_000_000 < diff < 0:
            diff = 0
        counter = self._counter
        self._counter = (counter + 1) & 0xFFFF
        return f"{self._fix_string}{diff & 0xFFFFFFFF:08X}{counter:04X}"

    def set_uniq_id(self, msg: Message, now_ms: int) -> None:
        """Put ``UNIQ_KEY`` on ``msg`` unless it already has one. Mirrors ``#setUniqID``."""
        if msg.get_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) is None:
            msg.put_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, self.create_uniq_id(now_ms))

    # Java exposes the parsers as static methods of the class; so does mqlab.
    get_ip_from_uniq_id = staticmethod(get_ip_from_uniq_id)
    get_ip_str_from_uniq_id = staticmethod(get_ip_str_from_uniq_id)
    get_pid_from_uniq_id = staticmethod(get_pid_from_uniq_id)
    get_near_time_from_id = staticmethod(get_near_time_from_id)
