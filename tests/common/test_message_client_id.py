"""Tests for mqlab.common.message_client_id (MessageClientIDSetterTest; docs/reference.md §4.5)."""

from __future__ import annotations

import pytest

from mqlab.common.message import Message
from mqlab.common.message_client_id import (
    MessageClientIDSetter,
    get_ip_str_from_uniq_id,
    get_near_time_from_id,
    get_pid_from_uniq_id,
)

FEB_2022 = 1_643_673_600_000  # 2022-02-01T00:00:00Z
FEB_22 = 1_645_488_000_000  # 2022-02-22T00:00:00Z (the 4.9.3 release day)
MAR_2022 = 1_646_092_800_000  # 2022-03-01T00:00:00Z
JAN_2022 = 1_640_995_200_000  # 2022-01-01T00:00:00Z


def _setter() -> MessageClientIDSetter:
    return MessageClientIDSetter("10.0.0.5", 1234, 0x12345678, FEB_22)


def test_start_time_is_start_of_month():
    """The time field counts from 00:00 UTC on day 1 of the given month (setStartTime)."""
    assert _setter().start_time == FEB_2022


def test_create_uniq_id_layout():
    """32 hex chars: ip, pid int16, classloader hash int32, ms since month start, counter (§4.5)."""
    now = FEB_22 + 1234
    uid = _setter().create_uniq_id(now)
    assert len(uid) == 32
    assert uid == "0A000005" + "04D2" + "12345678" + f"{now - FEB_2022:08X}" + "0000"


def test_consecutive_ids_differ_by_counter_plus_one():
    """Two ids in a row differ by +1 in the last 4 hex digits (testGetCountFromID)."""
    s = _setter()
    a, b = s.create_uniq_id(FEB_22), s.create_uniq_id(FEB_22)
    assert int(b[-4:], 16) == int(a[-4:], 16) + 1
    assert a[:-4] == b[:-4]


def test_counter_wraps_at_16_bits():
    """The counter is written as a short, so id 65536 repeats counter 0000."""
    s = _setter()
    ids = [s.create_uniq_id(FEB_22) for _ in range(65537)]
    assert ids[65535][-4:] == "FFFF"
    assert ids[65536][-4:] == "0000"


def test_ip_pid_and_time_extractable():
    """IP, pid and time come back out of the id (testGetIPStrFromID/PidFromID/TimeFromID)."""
    now = FEB_22 + 5000
    uid = _setter().create_uniq_id(now)
    assert get_ip_str_from_uniq_id(uid) == "10.0.0.5"
    assert get_pid_from_uniq_id(uid) == 1234
    assert get_near_time_from_id(uid, now + 20) == now
    assert MessageClientIDSetter.get_pid_from_uniq_id(uid) == 1234


def test_near_time_assumes_previous_month_when_in_future():
    """If monthStart + span >= now the id is read as last month's (getNearlyTimeFromID)."""
    s = MessageClientIDSetter("10.0.0.5", 1, 1, JAN_2022)
    made = JAN_2022 + 20 * 86_400_000  # Jan 21
    uid = s.create_uniq_id(made)
    assert get_near_time_from_id(uid, FEB_2022 + 86_400_000) == made
    # Java's ">=": read at the very instant it was made, the id is taken as Dec 21.
    assert get_near_time_from_id(uid, made) == made - 31 * 86_400_000


def test_month_rollover_resets_time_field():
    """At or after next month's start the window moves, so the time field restarts near 0."""
    s = _setter()
    uid = s.create_uniq_id(MAR_2022 + 7)
    assert s.start_time == MAR_2022
    assert uid[20:28] == "00000007"


def test_small_negative_difference_becomes_zero():
    """A clock slightly before the month start writes 0 ("may be caused by NTP")."""
    s = _setter()
    assert s.create_uniq_id(FEB_2022 - 500)[20:28] == "00000000"
    assert s.create_uniq_id(FEB_2022 - 2_000_000)[20:28] == f"{-2_000_000 & 0xFFFFFFFF:08X}"


def test_pid_and_hash_truncated_like_java_casts():
    """pid keeps its low 16 bits, the classloader hash its low 32 bits (negative → two's complement)."""
    uid = MessageClientIDSetter("10.0.0.5", 70_000, -1, FEB_22).create_uniq_id(FEB_22)
    assert uid[8:12] == f"{70_000 & 0xFFFF:04X}" == "1170"
    assert uid[12:20] == "FFFFFFFF"
    assert get_pid_from_uniq_id(uid) == 4464


def test_ipv6_id_is_56_chars():
    """An IPv6 client makes 28-byte ids; the IP string is uncompressed (UtilAll#ipToIPv6Str)."""
    uid = MessageClientIDSetter("::1", 7, 0, FEB_22).create_uniq_id(FEB_22)
    assert len(uid) == 56
    assert get_ip_str_from_uniq_id(uid) == "0000:0000:0000:0000:0000:0000:0000:0001"
    assert get_pid_from_uniq_id(uid) == 7


def test_set_uniq_id_only_when_absent():
    """setUniqID puts UNIQ_KEY once and never overwrites it (docs/reference.md §4.5)."""
    s = _setter()
    m = Message("T", b"x")
    s.set_uniq_id(m, FEB_22)
    first = m.get_property("UNIQ_KEY")
    s.set_uniq_id(m, FEB_22 + 1)
    assert first is not None and m.get_property("UNIQ_KEY") == first


def test_bad_ip_raises():
    """A non-IP string raises ValueError naming it."""
    with pytest.raises(ValueError, match="localhost"):
        MessageClientIDSetter("localhost", 1, 1, FEB_22)
