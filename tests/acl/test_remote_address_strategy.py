"""mqlab.acl.remote_address_strategy: which strategy each pattern gets, what it matches, and
the AclException message of each bad pattern, as rocketmq-acl-4.9.3.jar gives them.

Every expected value below came from the jar (with commons-validator 1.7): for each
pattern, ``new RemoteAddressStrategyFactory().getRemoteAddressStrategy(p)``'s class (or the
exception); for each pair, ``strategy.match(resource)`` with the resource's
``whiteRemoteAddress`` set to the address; and ``AclUtils.expandIP(a, 8)``.
"""

from __future__ import annotations

import pytest

from mqlab.acl.acl_utils import (
    AclException,
    JavaException,
    expand_ip,
    is_valid_inet4_address,
    is_valid_inet6_address,
)
from mqlab.acl.remote_address_strategy import get_remote_address_strategy

PATTERNS = [
    ("", "BlankRemoteAddressStrategy"),
    (" ", "BlankRemoteAddressStrategy"),
    ("*", "NullRemoteAddressStrategy"),
    ("*.*.*.*", "NullRemoteAddressStrategy"),
    ("*:*:*:*:*:*:*:*", "NullRemoteAddressStrategy"),
    ("192.168.0.1", "OneRemoteAddressStrategy"),
    ("192.168.0.{1,2}", "MultipleRemoteAddressStrategy"),
    (
        "192.168.{1,2}",
        "AclException: MultipleRemoteAddressStrategy has got a/some wrong format IP(s) ",
    ),
    ("192.168.0.1,192.168.0.2", "MultipleRemoteAddressStrategy"),
    ("192.168.0.1,bad", "AclException: Netaddress examine Exception netaddress is bad"),
    ("192.168.0.*", "RangeRemoteAddressStrategy"),
    ("192.168.*", "AclException: Netaddress examine scope Exception netaddress is 192.168.*"),
    ("192.168.*.*", "RangeRemoteAddressStrategy"),
    ("192.168.1-10.*", "RangeRemoteAddressStrategy"),
    ("192.168.0.1-10", "RangeRemoteAddressStrategy"),
    (
        "192.168.0.-10",
        "AclException: RangeRemoteAddressStrategy netaddress examine scope Exception value -10 ",
    ),
    (
        "192.168.0.10-1",
        "AclException: RangeRemoteAddressStrategy netaddress examine scope Exception start is 10 , end is 1",
    ),
    (
        "192.168.0.1-300",
        "AclException: RangeRemoteAddressStrategy netaddress examine scope Exception start is 1 , end is 300",
    ),
    (
        "192.168.0.*.1",
        "AclException: Netaddress examine scope Exception netaddress is 192.168.0.*.1",
    ),
    ("192.*.0.1", "RangeRemoteAddressStrategy"),
    ("256.1.1.1", "AclException: Netaddress examine Exception netaddress is 256.1.1.1"),
    ("1.2.3", "AclException: Netaddress examine Exception netaddress is 1.2.3"),
    ("01.2.3.4", "AclException: Netaddress examine Exception netaddress is 01.2.3.4"),
    ("abc", "AclException: Netaddress examine Exception netaddress is abc"),
    ("1:2:3:4:5:6:7:8", "OneRemoteAddressStrategy"),
    ("::1", "OneRemoteAddressStrategy"),
    ("1::{2,3}", "MultipleRemoteAddressStrategy"),
    ("1:2:{3,4}", "AclException: Netaddress examine Exception netaddress is 1:2:3"),
    ("1::*", "RangeRemoteAddressStrategy"),
    ("1:2:3:4:5:6:7:*", "RangeRemoteAddressStrategy"),
    ("1:2:3:4:5:6:7:1-ff", "RangeRemoteAddressStrategy"),
    ("1:2:3:4:5:6:1-ff:*", "RangeRemoteAddressStrategy"),
    ("1:*:3", "AclException: Netaddress examine scope Exception netaddress is 1:*:3"),
    (
        "1::-ff",
        "AclException: RangeRemoteAddressStrategy netaddress examine scope Exception value -ff ",
    ),
    (
        "1:2:3:4:5:6:7:ff-1",
        "AclException: RangeRemoteAddressStrategy netaddress examine scope Exception start is 255 , end is 1",
    ),
    ("192.168.0.{a,b}", "AclException: Netaddress examine Exception netaddress is 192.168.0.a"),
    (
        "1.2.3.4{1}",
        "AclException: MultipleRemoteAddressStrategy netaddress examine scope Exception netaddress",
    ),
    ("{1,2}", "AclException: MultipleRemoteAddressStrategy has got a/some wrong format IP(s) "),
    ("192.168.0.1-2-3", "RangeRemoteAddressStrategy"),
    ("0.0.0.0", "OneRemoteAddressStrategy"),
]
MATCHES = [
    ("192.168.0.*", "192.168.0.5", "true"),
    ("192.168.0.*", "192.168.1.5", "false"),
    (
        "192.168.*",
        "192.168.7.5",
        "AclException: Netaddress examine scope Exception netaddress is 192.168.*",
    ),
    ("192.168.1-10.*", "192.168.5.9", "true"),
    ("192.168.1-10.*", "192.168.11.9", "false"),
    ("192.168.0.1-10", "192.168.0.10", "true"),
    ("192.168.0.1-10", "192.168.0.11", "false"),
    ("192.168.0.{1,2}", "192.168.0.2", "true"),
    ("192.168.0.{1,2}", "192.168.0.3", "false"),
    ("1::{2,3}", "1::3", "true"),
    ("1::{2,3}", "1:0:0:0:0:0:0:3", "true"),
    ("1:2:3:4:5:6:7:*", "1:2:3:4:5:6:7:9", "true"),
    ("1:2:3:4:5:6:7:1-ff", "1:2:3:4:5:6:7:100", "false"),
    ("1:2:3:4:5:6:7:1-ff", "1:2:3:4:5:6:7:fe", "true"),
    ("1:2:3:4:5:6:1-ff:*", "1:2:3:4:5:6:a:b", "true"),
    ("::1", "0:0:0:0:0:0:0:1", "true"),
    ("192.168.0.1", "192.168.0.1", "true"),
    ("192.168.0.1", "192.168.0.2", "false"),
    ("*", "1.2.3.4", "true"),
    ("", "1.2.3.4", "false"),
    ("192.168.0.*", "1:2:3:4:5:6:7:8", "false"),
    ("192.168.0.1,192.168.0.2", "192.168.0.2", "true"),
    ("1::*", "1::5", "true"),
    ("192.168.*.*", "192.168.3.4", "true"),
    ("127.0.0.1", "127.0.0.1", "true"),
]
EXPANDED = [
    ("1::", "0001:0000:0000:0000:0000:0000:0000:0000"),
    ("::", "0000:0000:0000:0000:0000:0000:0000:0000"),
    ("1:2::3:4", "0001:0002:0000:0000:0000:0000:0003:0004"),
    ("fe80::1", "FE80:0000:0000:0000:0000:0000:0000:0001"),
    ("::ffff:1.2.3.4", "0000:0000:0000:0000:0000:0000:FFFF:1.2.3.4"),
    ("1:2:3:4:5:6:7:8", "0001:0002:0003:0004:0005:0006:0007:0008"),
]


def _outcome(call) -> str:
    try:
        return call()
    except AclException as e:
        return f"AclException: {e.message}"
    except JavaException as e:  # pragma: no cover - a wrong class would show here
        return e.to_string()


@pytest.mark.parametrize(("pattern", "expected"), PATTERNS)
def test_get_remote_address_strategy(pattern, expected):
    """The pattern gets 4.9.3's strategy, or 4.9.3's AclException message."""
    assert _outcome(lambda: get_remote_address_strategy(pattern).name) == expected


@pytest.mark.parametrize(("pattern", "address", "expected"), MATCHES)
def test_match(pattern, address, expected):
    """The strategy admits exactly the addresses 4.9.3's admits."""
    got = _outcome(lambda: str(get_remote_address_strategy(pattern).match(address)).lower())
    assert got == expected


@pytest.mark.parametrize(("address", "expected"), EXPANDED)
def test_expand_ip(address, expected):
    """``AclUtils#expandIP``: eight groups of four upper-case hex digits."""
    assert expand_ip(address, 8) == expected


def test_inet_address_validator():
    """commons-validator's checks: no leading zero in IPv4, one ``::`` in IPv6."""
    assert is_valid_inet4_address("10.0.0.1")
    assert not is_valid_inet4_address("010.0.0.1")
    assert not is_valid_inet4_address("10.0.0.256")
    assert not is_valid_inet4_address(None)
    assert is_valid_inet6_address("::1")
    assert is_valid_inet6_address("fe80::1%eth0")
    assert is_valid_inet6_address("::ffff:1.2.3.4")
    assert not is_valid_inet6_address("1::2::3")
    assert not is_valid_inet6_address("1:2:3:4:5:6:7:8:9")
    assert not is_valid_inet6_address("12345::")
