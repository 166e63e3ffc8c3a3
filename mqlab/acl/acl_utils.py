"""The string helpers of 4.9.3's ACL: address checks, IPv6 expansion, and its exceptions.

Mirrors ``AclUtils`` (acl/common: ``expandIP``, ``isScope``, ``verify``, ``getAddresses``,
``IPv6AddressCheck``, ``v6ipProcess``), ``AclException`` (acl/common) and the two checks of
commons-validator 1.7's ``InetAddressValidator`` that ``RemoteAddressStrategyFactory`` calls
(RocketMQ 4.9.3).

An ``AclException`` carries what the broker's answer shows of it: the message, and the
stack frame that threw it (``RemotingHelper#exceptionSimpleDesc`` writes
``e.toString() + ", " + stackTrace[0]`` into the remark). The frames are the lines of
rocketmq-acl-4.9.3.jar, read from its line-number tables, so a refusal's remark is the
real broker's, byte for byte. Java's ``NullPointerException`` and
``NumberFormatException``, which 4.9.3's code lets escape in places, are mirrored the same
way (JDK 17's messages: the real broker runs on Java 17 here).

This module knows strings only: no files, no requests.
"""

from __future__ import annotations

import re

__all__ = [
    "AclException",
    "JavaException",
    "NullPointerException",
    "NumberFormatException",
    "expand_ip",
    "get_addresses",
    "ipv6_address_check",
    "is_valid_inet4_address",
    "is_valid_inet6_address",
    "java_split",
    "parse_int",
    "v6ip_process",
    "verify",
]

PLAIN = "org.apache.rocketmq.acl.plain."
COMMON = "org.apache.rocketmq.acl.common."


class JavaException(Exception):
    """An exception 4.9.3 throws, as ``Throwable#toString`` and its top frame show it."""

    java_class = "java.lang.RuntimeException"

    def __init__(self, message: str | None, frame: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.frame = frame

    def to_string(self) -> str:
        """``Throwable#toString``: the class, then ``": " + message`` when there is one."""
        if self.message is None:
            return self.java_class
        return f"{self.java_class}: {self.message}"

    def simple_desc(self) -> str:
        """``RemotingHelper#exceptionSimpleDesc``: ``toString()`` and the top stack frame."""
        if self.frame is None:
            return self.to_string()
        return f"{self.to_string()}, {self.frame}"

    def __str__(self) -> str:
        return self.to_string()


class AclException(JavaException):
    """``AclException`` (acl/common): what every ACL refusal throws."""

    java_class = COMMON + "AclException"


class NullPointerException(JavaException):
    """``java.lang.NullPointerException`` where 4.9.3's ACL code dereferences a null."""

    java_class = "java.lang.NullPointerException"


class NumberFormatException(JavaException):
    """``java.lang.NumberFormatException`` from ``Integer#parseInt`` on a pattern's range."""

    java_class = "java.lang.NumberFormatException"


def frame(cls: str, method: str, line: int, file: str | None = None) -> str:
    """A ``StackTraceElement#toString`` of rocketmq-acl-4.9.3.jar (a class-path jar: no
    loader or module prefix)."""
    simple = cls.rsplit(".", 1)[-1].split("$")[0]
    return f"{cls}.{method}({file or simple + '.java'}:{line})"


_INT = re.compile(r"[+-]?\d+")
_HEX = re.compile(r"[+-]?[0-9a-fA-F]+")


def parse_int(s: str, radix: int = 10, *, at: str | None = None) -> int:
    """``Integer#parseInt``: digits only (a sign allowed), within 32 bits.

    Raises:
        NumberFormatException: JDK 17's message (``For input string: "x"``, with
            ``under radix 16`` for hex).
    """
    ok = (_INT if radix == 10 else _HEX).fullmatch(s)
    if ok:
        value = int(s, radix)
        if -(2**31) <= value < 2**31:
            return value
    suffix = "" if radix == 10 else f" under radix {radix}"
    raise NumberFormatException(f'For input string: "{s}"{suffix}', at)


def java_split(s: str, separator_chars: str) -> list[str]:
    """commons-lang3 ``StringUtils#split(str, separatorChars)``: empty tokens dropped."""
    return [t for t in re.split("[" + re.escape(separator_chars) + "]", s) if t]


# -- commons-validator 1.7 InetAddressValidator -------------------------------------------------

_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")


def is_valid_inet4_address(address: str | None) -> bool:
    """``InetAddressValidator#isValidInet4Address``: four decimal groups of 0-255, no
    leading zero."""
    if address is None:
        return False
    m = _IPV4.fullmatch(address)
    if m is None:
        return False
    for group in m.groups():
        if int(group) > 255 or (len(group) > 1 and group.startswith("0")):
            return False
    return True


def is_valid_inet6_address(address: str | None) -> bool:
    """``InetAddressValidator#isValidInet6Address``: up to 8 hex groups, one ``::``, an
    IPv4 tail, an optional ``/prefix`` and ``%zone``."""
    if address is None:
        return False
    parts = address.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        if not re.fullmatch(r"\d{1,3}", parts[1]) or int(parts[1]) > 128:
            return False
    parts = parts[0].split("%")
    if len(parts) > 2:
        return False
    if len(parts) == 2 and not re.fullmatch(r"[^\s/%]+", parts[1]):
        return False
    address = parts[0]
    compressed = "::" in address
    if compressed and address.find("::") != address.rfind("::"):
        return False
    if (address.startswith(":") and not address.startswith("::")) or (
        address.endswith(":") and not address.endswith("::")
    ):
        return False
    octets = _java_string_split(address, ":")
    if compressed:
        if address.endswith("::"):
            octets.append("")
        elif address.startswith("::") and octets:
            octets.pop(0)
    if len(octets) > 8:
        return False
    valid = 0
    empty = 0
    for index, octet in enumerate(octets):
        if not octet:
            empty += 1
            if empty > 1:
                return False
        else:
            empty = 0
            if index == len(octets) - 1 and "." in octet:
                if not is_valid_inet4_address(octet):
                    return False
                valid += 2
                continue
            if len(octet) > 4 or not re.fullmatch(r"[+-]?[0-9a-fA-F]+", octet):
                return False
            if not 0 <= int(octet, 16) <= 0xFFFF:
                return False
        valid += 1
    return not (valid > 8 or (valid < 8 and not compressed))


def _java_string_split(s: str, sep: str) -> list[str]:
    """``String#split(regex)`` for a literal: trailing empty strings removed."""
    out = s.split(sep)
    while out and out[-1] == "":
        out.pop()
    return out if out else ([""] if s == "" else [])


# -- AclUtils -----------------------------------------------------------------------------------


def is_scope_num(num: int) -> bool:
    """``AclUtils#isScope(int)``: 0-255."""
    return 0 <= num <= 255


def is_ipv6_scope_num(num: int) -> bool:
    """``AclUtils#isIPv6Scope(int)``: 0-0xffff."""
    return 0 <= num <= 0xFFFF


def is_scope(netaddress: str, index: int) -> bool:
    """``AclUtils#isScope(String, int)``: the first ``index`` groups are in range (an IPv4
    pattern must have four groups)."""
    if ":" in netaddress:
        groups = java_split(expand_ip(netaddress, 8), ":")
        for g in groups[:index]:
            try:
                value = parse_int(g, 16)
            except NumberFormatException:
                return False
            if not is_ipv6_scope_num(value):
                return False
        return True
    groups = java_split(netaddress, ".")
    if len(groups) != 4:
        return False
    return all(is_scope_num(parse_int(g.strip())) for g in groups[:index])


def verify(netaddress: str, index: int) -> None:
    """``AclUtils#verify``: raise unless ``isScope(netaddress, index)``."""
    if not is_scope(netaddress, index):
        raise AclException(
            f"Netaddress examine scope Exception netaddress is {netaddress}",
            frame(COMMON + "AclUtils", "verify", 118),
        )


def expand_ip(netaddress: str, part: int) -> str:
    """``AclUtils#expandIP``: upper-case, ``::`` widened to ``part`` groups, each group
    left-padded to four digits (``1::`` → ``0001:0000:…:0000``)."""
    netaddress = netaddress.upper()
    pad = part - netaddress.count(":")
    if pad > 0:
        netaddress = netaddress.replace("::", ":" * (pad + 1))
    return ":".join(g.rjust(4, "0") if len(g) < 4 else g for g in netaddress.split(":"))


def get_addresses(netaddress: str, partial: str) -> list[str]:
    """``AclUtils#getAddresses``: ``192.168.0.{1,2}`` → ``192.168.0.1``, ``192.168.0.2``."""
    head = netaddress[: netaddress.index("{")]
    return [head + p for p in java_split(partial[1:-1], ",")]


def ipv6_address_check(netaddress: str) -> None:
    """``AclUtils#IPv6AddressCheck``: ``*`` only last; a range in the last group (or the one
    before a final ``*``)."""
    if "*" not in netaddress and "-" not in netaddress:
        return
    asterisk = netaddress.find("*")
    minus = netaddress.find("-")
    message = f"Netaddress examine scope Exception netaddress is {netaddress}"
    if asterisk > -1 and asterisk != len(netaddress) - 1:
        raise AclException(message, frame(COMMON + "AclUtils", "IPv6AddressCheck", 78))
    if minus > -1:
        if asterisk == -1:
            if minus <= netaddress.rfind(":"):
                raise AclException(message, frame(COMMON + "AclUtils", "IPv6AddressCheck", 85))
        elif minus <= netaddress.rfind(":", 0, netaddress.rfind(":")):
            raise AclException(message, frame(COMMON + "AclUtils", "IPv6AddressCheck", 89))


def v6ip_process(netaddress: str) -> str:
    """``AclUtils#v6ipProcess``: the fixed head of an IPv6 range pattern, expanded."""
    asterisk = "*" in netaddress
    minus = "-" in netaddress
    if asterisk and minus:
        part = 6
        last = netaddress.rfind(":")
        sub = netaddress[: netaddress[:last].rfind(":")]
    elif not asterisk and not minus:
        part, sub = 8, netaddress
    else:
        part, sub = 7, netaddress[: netaddress.rfind(":")]
    return expand_ip(sub, part)
