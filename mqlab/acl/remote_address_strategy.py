"""Which client addresses a white-list pattern lets in: 4.9.3's five address strategies.

Mirrors ``RemoteAddressStrategyFactory#getRemoteAddressStrategy`` and its nested
``NullRemoteAddressStrategy``, ``BlankRemoteAddressStrategy``,
``MultipleRemoteAddressStrategy``, ``OneRemoteAddressStrategy`` and
``RangeRemoteAddressStrategy`` (acl/plain, RocketMQ 4.9.3).

The factory reads a pattern once (at load, or when an account is updated) and the
strategy then answers ``match(address)`` for each request, the address being the
client's IP without its port. Which strategy a pattern gets is code, checked in this
order:

1. blank (empty, spaces, or no value in the YAML): matches nothing;
2. ``*``, ``*.*.*.*`` or ``*:*:*:*:*:*:*:*``: matches everything;
3. ending in ``}`` (``192.168.0.{1,2}``, ``1::{2,3}``): the listed last groups;
4. a comma (``192.168.0.1,192.168.0.2``): the listed addresses;
5. a ``*`` or a ``-`` (``192.168.0.*``, ``192.168.1-10.*``, ``1:2:3:4:5:6:7:1-ff``): one
   group in a range, the groups before it fixed;
6. anything else: one address, IPv4 or IPv6.

A bad pattern raises ``AclException`` with 4.9.3's message (some of them, as in Java, are
format strings without their ``%s``). The strategies keep 4.9.3's quirks: ``192.168.*``
is refused (a range pattern needs four groups), a range pattern whose range is ``0-0``
never matches, and an IPv6 range compares one group of the expanded address.
"""

from __future__ import annotations

from mqlab.acl.acl_utils import (
    PLAIN,
    AclException,
    JavaException,
    NullPointerException,
    expand_ip,
    frame,
    get_addresses,
    ipv6_address_check,
    is_ipv6_scope_num,
    is_scope_num,
    is_valid_inet4_address,
    is_valid_inet6_address,
    java_split,
    parse_int,
    v6ip_process,
    verify,
)

__all__ = [
    "BlankRemoteAddressStrategy",
    "MultipleRemoteAddressStrategy",
    "NullRemoteAddressStrategy",
    "OneRemoteAddressStrategy",
    "RangeRemoteAddressStrategy",
    "RemoteAddressStrategy",
    "get_remote_address_strategy",
]

_FACTORY = PLAIN + "RemoteAddressStrategyFactory"


class ArrayIndexOutOfBoundsException(JavaException):
    """``java.lang.ArrayIndexOutOfBoundsException``: a range pattern with too few groups."""

    java_class = "java.lang.ArrayIndexOutOfBoundsException"


def _at(items: list[str], i: int) -> str:
    if i >= len(items):
        raise ArrayIndexOutOfBoundsException(f"Index {i} out of bounds for length {len(items)}")
    return items[i]


class RemoteAddressStrategy:
    """``RemoteAddressStrategy``: does ``address`` (an IP, no port) match?"""

    name = "RemoteAddressStrategy"

    def match(self, address: str | None) -> bool:
        raise NotImplementedError


class NullRemoteAddressStrategy(RemoteAddressStrategy):
    """``*``: every address."""

    name = "NullRemoteAddressStrategy"

    def match(self, address: str | None) -> bool:
        return True


class BlankRemoteAddressStrategy(RemoteAddressStrategy):
    """No pattern: no address."""

    name = "BlankRemoteAddressStrategy"

    def match(self, address: str | None) -> bool:
        return False


class MultipleRemoteAddressStrategy(RemoteAddressStrategy):
    """A set of addresses (IPv6 ones kept expanded, upper-case)."""

    name = "MultipleRemoteAddressStrategy"

    def __init__(self, addresses: list[str]) -> None:
        self.multiple_set: set[str] = set()
        for netaddress in addresses:
            if is_valid_inet4_address(netaddress):
                self.multiple_set.add(netaddress)
            elif is_valid_inet6_address(netaddress):
                self.multiple_set.add(expand_ip(netaddress, 8))
            else:
                raise AclException(f"Netaddress examine Exception netaddress is {netaddress}")

    def match(self, address: str | None) -> bool:
        if is_valid_inet6_address(address):
            address = expand_ip(address, 8)
        return address in self.multiple_set


class OneRemoteAddressStrategy(RemoteAddressStrategy):
    """One address, compared expanded and upper-case."""

    name = "OneRemoteAddressStrategy"

    def __init__(self, netaddress: str) -> None:
        self.netaddress = netaddress
        if not (is_valid_inet4_address(netaddress) or is_valid_inet6_address(netaddress)):
            raise AclException(f"Netaddress examine Exception netaddress is {netaddress}")

    def match(self, address: str | None) -> bool:
        return expand_ip(self.netaddress, 8).upper() == expand_ip(address or "", 8).upper()


class RangeRemoteAddressStrategy(RemoteAddressStrategy):
    """One group within ``start..end`` (``*``: the whole group), the groups before it fixed
    (``head``); ``index`` is the ranged group's position."""

    name = "RangeRemoteAddressStrategy"

    def __init__(self, remote_addr: str) -> None:
        self.head: str | None = None
        self.start = 0
        self.end = 0
        self.index = 0
        if ":" in remote_addr:  # IPv6
            ipv6_address_check(remote_addr)
            groups = java_split(remote_addr, ":")
            for i in range(1, len(groups)):
                if self._analysis(groups, i, 16):
                    verify(remote_addr, self.index - 1)
                    pre_address = v6ip_process(remote_addr)
                    self.index = len(java_split(pre_address, ":"))
                    self.head = pre_address
                    break
        else:
            groups = java_split(remote_addr, ".")
            if (
                self._analysis(groups, 1, 10)
                or self._analysis(groups, 2, 10)
                or self._analysis(groups, 3, 10)
            ):
                verify(remote_addr, self.index - 1)
                self.head = "".join(g.strip() + "." for g in groups[: self.index])

    def _analysis(self, groups: list[str], index: int, radix: int) -> bool:
        """``#analysis`` / ``#ipv6Analysis``: is group ``index`` the ranged one? (Its state
        carries over from one call to the next, as in Java.)"""
        value = _at(groups, index).strip()
        self.index = index
        if value == "*":
            self.start, self.end = 0, (255 if radix == 10 else 0xFFFF)
        elif "-" in value:
            if value.startswith("-"):
                raise AclException(
                    f"RangeRemoteAddressStrategy netaddress examine scope Exception value {value} "
                )
            bounds = java_split(value, "-")
            self.start = parse_int(_at(bounds, 0), radix)
            self.end = parse_int(_at(bounds, 1), radix)
            in_scope = is_scope_num if radix == 10 else is_ipv6_scope_num
            if not (in_scope(self.end) and in_scope(self.start) and self.start <= self.end):
                raise AclException(
                    "RangeRemoteAddressStrategy netaddress examine scope Exception "
                    f"start is {self.start} , end is {self.end}"
                )
        return self.end > 0

    def match(self, address: str | None) -> bool:
        """``#match``. A pattern whose range never got past 0 (``1.2.3.0-0``) has no head,
        and Java's ``startsWith(null)`` throws: a NullPointerException here too, its
        remark approximate (JDK 17 names a frame inside ``java.lang.String``)."""
        if is_valid_inet4_address(address):
            if self.head is None:
                raise NullPointerException(None, frame(_FACTORY + "$RangeRemoteAddressStrategy",
                                                       "match", 230, "RemoteAddressStrategyFactory.java"))  # fmt: skip
            if address.startswith(self.head):
                if self.index == 3:
                    value = address[len(self.head) :]
                elif self.index == 2:
                    value = address[len(self.head) : address.rfind(".")]
                else:
                    value = address[len(self.head) : address.rfind(".", 0, address.rfind("."))]
                if self.start <= parse_int(value) <= self.end:
                    return True
        elif is_valid_inet6_address(address):
            expanded = expand_ip(address, 8).upper()
            if self.head is None:
                raise NullPointerException(None, frame(_FACTORY + "$RangeRemoteAddressStrategy",
                                                       "match", 246, "RemoteAddressStrategyFactory.java"))  # fmt: skip
            if expanded.startswith(self.head):
                value = expanded[5 * self.index : 5 * self.index + 4]
                if self.start <= parse_int(value, 16) <= self.end:
                    return True
        return False


NULL_NET_ADDRESS_STRATEGY = NullRemoteAddressStrategy()
BLANK_NET_ADDRESS_STRATEGY = BlankRemoteAddressStrategy()


def get_remote_address_strategy(remote_addr: str | None) -> RemoteAddressStrategy:
    """The strategy for one pattern (steps 1-6 of the module docstring).

    Mirrors ``RemoteAddressStrategyFactory#getRemoteAddressStrategy(String)``.

    Raises:
        AclException: a pattern 4.9.3 refuses, with its message.
    """
    # step 1: blank
    if remote_addr is None or not remote_addr.strip():
        return BLANK_NET_ADDRESS_STRATEGY
    # step 2: every address
    if remote_addr in ("*", "*.*.*.*", "*:*:*:*:*:*:*:*"):
        return NULL_NET_ADDRESS_STRATEGY
    # step 3: {a,b} in the last group
    if remote_addr.endswith("}"):
        if ":" in remote_addr:
            last = java_split(remote_addr, ":")[-1]
        else:
            groups = java_split(remote_addr, ".")
            if len(groups) < 4:
                raise AclException(
                    "MultipleRemoteAddressStrategy has got a/some wrong format IP(s) "
                )
            last = groups[-1]
        if not last.startswith("{"):
            raise AclException(
                "MultipleRemoteAddressStrategy netaddress examine scope Exception netaddress"
            )
        return MultipleRemoteAddressStrategy(get_addresses(remote_addr, last))
    # step 4: a list
    if "," in remote_addr:
        return MultipleRemoteAddressStrategy(java_split(remote_addr, ","))
    # step 5: a range
    if "*" in remote_addr or "-" in remote_addr:
        return RangeRemoteAddressStrategy(remote_addr)
    # step 6: one address
    return OneRemoteAddressStrategy(remote_addr)
