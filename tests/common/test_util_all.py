"""Tests for mqlab.common.util_all (UtilAllTest, RocketMQSerializableTest#isBlank; docs/reference.md §4, §6)."""

from __future__ import annotations

from mqlab.common import util_all


def test_offset_to_file_name():
    """File names are 20-digit zero-padded offsets: 1 GiB → 00000000001073741824 (docs/reference.md §6)."""
    assert util_all.offset_to_file_name(0) == "00000000000000000000"
    assert util_all.offset_to_file_name(1073741824) == "00000000001073741824"
    assert util_all.offset_to_file_name(6_000_000) == "00000000000006000000"


def test_crc32_masked():
    """crc32 is CRC-32 & 0x7FFFFFFF: "Hello RocketMQ" → 1774740973 (docs/reference.md §4.1)."""
    assert util_all.crc32(b"Hello RocketMQ") == 1774740973
    assert util_all.crc32(b"") == 0


def test_compress_round_trip_has_zlib_header():
    """compress is zlib-framed deflate (Deflater level 5) and uncompress inverts it (docs/reference.md §4.3)."""
    data = b"RocketMQ " * 1000
    packed = util_all.compress(data)
    assert packed[0] == 0x78 and len(packed) < len(data)
    assert util_all.uncompress(packed) == data


def test_hex_helpers():
    """bytes2string is uppercase hex; string2bytes accepts either case (UtilAll)."""
    assert util_all.bytes2string(bytes([0x64, 0x51, 0x00, 0xFA])) == "645100FA"
    assert util_all.string2bytes("645100fa") == bytes([0x64, 0x51, 0x00, 0xFA])


def test_time_strings_utc():
    """Human time strings are Java's patterns, in UTC."""
    t = 1_645_488_000_123  # 2022-02-22T00:00:00.123Z
    assert util_all.time_millis_to_human_string(t) == "20220222000000123"
    assert util_all.time_millis_to_human_string2(t) == "2022-02-22 00:00:00,123"
    assert util_all.time_millis_to_human_string3(t) == "20220222000000"


def test_start_of_month():
    """Month starts in UTC, including the December → January and January → December edges."""
    assert util_all.start_of_month_millis(1_645_488_000_123) == 1_643_673_600_000
    assert util_all.start_of_month_millis(1_640_995_200_000, -1) == 1_638_316_800_000  # 2021-12
    assert util_all.start_of_month_millis(1_638_316_800_000, 1) == 1_640_995_200_000  # 2022-01


def test_is_blank():
    """None, "" and "  " are blank; "bar" and "  A  " are not (RocketMQSerializableTest)."""
    assert util_all.is_blank(None) and util_all.is_blank("") and util_all.is_blank("  ")
    assert not util_all.is_blank("bar") and not util_all.is_blank("  A  ")
    assert not util_all.is_blank("\u00a0")  # Character#isWhitespace excludes NBSP
    assert util_all.is_blank("\u3000\t")


def test_is_blank_fast_path_agrees_with_the_char_rule():
    """The printable-ASCII shortcut (it looks at the first char only) answers as the
    per-char Character#isWhitespace rule, for every char up to U+3000 (the last Java
    whitespace char) followed by a blank."""
    rule = util_all._java_is_whitespace
    for c in map(chr, range(0x3001)):
        assert util_all.is_blank(c + " ") == rule(c), repr(c)


def test_ip_strings():
    """ipToIPv4Str / ipToIPv6Str (uncompressed, lowercase), None for other lengths."""
    assert util_all.ip_to_ipv4_str(bytes([10, 0, 0, 1])) == "10.0.0.1"
    assert util_all.ip_to_ipv6_str(bytes(15) + b"\x01") == "0000:0000:0000:0000:0000:0000:0000:0001"
    assert util_all.ip_to_ipv4_str(b"\x00") is None
    assert util_all.ip_to_ipv6_str(b"\x00") is None
