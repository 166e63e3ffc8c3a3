"""Tests for mqlab.common.message_decoder (MessageDecoderTest, MessageEncodeDecodeTest; docs/reference.md §4)."""

from __future__ import annotations

import struct
import zlib

import pytest

from mqlab.common.message import Message, MessageExt, MessageExtBrokerInner
from mqlab.common.message_decoder import (
    BLANK_MAGIC_CODE,
    MESSAGE_MAGIC_CODE,
    MessageDecodeError,
    bytes_to_socket_address,
    calc_msg_length,
    create_message_id,
    decode_batch_body,
    decode_batch_body_raw,
    decode_message_id,
    decode_stored_message,
    decodes,
    encode_batch_body,
    encode_stored_message,
    join_batch_properties,
    message_properties_to_string,
    read_entry_header,
    socket_address_to_bytes,
    string_to_message_properties,
)
from mqlab.common.sysflag import MessageSysFlag

S1 = "\u0001"
S2 = "\u0002"


def _inner(**kw: object) -> MessageExtBrokerInner:
    """The MessageDecoderTest message: topic abc, body hello!q!, queue 1, offset 123456."""
    fields: dict[str, object] = dict(
        topic="abc",
        body=b"hello!q!",
        queue_id=1,
        queue_offset=123,
        commit_log_offset=123456,
        born_timestamp=1_650_000_000_000,
        store_timestamp=1_650_000_000_005,
        born_host="127.0.0.1:0",
        store_host="10.0.0.1:10911",
        properties_string=message_properties_to_string({"a": "123", "b": "hello", "c": "3.14"}),
    )
    fields.update(kw)
    return MessageExtBrokerInner(**fields)  # type: ignore[arg-type]


# -- constants and lengths ------------------------------------------------------------------


def test_magic_codes():
    """MESSAGE magic is 0xDAA320A7 and BLANK magic 0xCBD43194 as signed ints (docs/reference.md §4.1)."""
    assert MESSAGE_MAGIC_CODE == -626843481 == struct.unpack(">i", bytes.fromhex("DAA320A7"))[0]
    assert BLANK_MAGIC_CODE == -875286124 == struct.unpack(">i", bytes.fromhex("CBD43194"))[0]


def test_calc_msg_length_ipv4_and_ipv6():
    """Total length is 91 + body + topic + props, +12 per IPv6 host (CommitLog#calMsgLength, §4.1)."""
    assert calc_msg_length(0, 8, 3, 0) == 102
    assert calc_msg_length(0, 10, 9, 20) == 130
    assert calc_msg_length(MessageSysFlag.BORNHOST_V6_FLAG, 10, 9, 20) == 142
    assert calc_msg_length(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG, 10, 9, 20) == 142
    assert calc_msg_length(48, 10, 9, 20) == 154
    assert calc_msg_length(0, -1, 0, -5) == 91  # negative lengths count as 0, as in Java


def test_body_crc_vector():
    """BODYCRC of UTF-8 "Hello RocketMQ" is 1774740973 (docs/reference.md §4.1, computed vector)."""
    msg = _inner(body=b"Hello RocketMQ")
    data = encode_stored_message(msg)
    assert struct.unpack_from(">i", data, 8)[0] == 1774740973
    assert msg.body_crc == 1774740973


# -- properties -----------------------------------------------------------------------------


def test_message_properties_to_string_order_and_nulls():
    """None values are skipped, no trailing \\u0002, empty gives "" (§4.4)."""
    s = message_properties_to_string({"a": "123", "NullValueKey": None, "b": "hello"})
    assert s == f"a{S1}123{S2}b{S1}hello"
    assert message_properties_to_string({}) == ""
    assert message_properties_to_string(None) == ""


_K8 = {f"k{i}": f"v{i}" for i in range(1, 9)}
_PRODUCER = {"TAGS": "TagA", "WAIT": "true", "UNIQ_KEY": "7F0000010F2C18B4AAC2066E8AE80000"}
_MANY = {"TAGS": "TagA", "KEYS": "order-1", "UNIQ_KEY": "U", **_K8}
# Key orders printed by a JVM (Java 17) running messageProperties2String's loop over
# java.util.HashMaps filled in the dict's order (/tmp/audit/props/PropsOrder.java).
HASHMAP_ORDER = [
    # a 4.9.3 broker stores TAGS + CLUSTER as CLUSTER (bucket 12) before TAGS (14)
    ({"TAGS": "TagA", "CLUSTER": "DefaultCluster"}, "CLUSTER TAGS"),
    # a Java client's SEND header: TAGS, WAIT from the constructor, then UNIQ_KEY
    (_PRODUCER, "UNIQ_KEY WAIT TAGS"),
    # UNIQ_KEY and CLUSTER share bucket 12: insertion order breaks the tie
    ({"UNIQ_KEY": "U", "CLUSTER": "C"}, "UNIQ_KEY CLUSTER"),
    ({"CLUSTER": "C", "UNIQ_KEY": "U"}, "CLUSTER UNIQ_KEY"),
    # 12 keys: a table of 16 buckets; 13 keys: resized to 32, which reorders them
    (
        {**_MANY, "CLUSTER": "DefaultCluster"},
        "k1 KEYS k2 k3 k4 k5 k6 UNIQ_KEY k7 CLUSTER k8 TAGS",
    ),
    (
        {**_MANY, "WAIT": "true", "CLUSTER": "DefaultCluster"},
        "k1 k2 k3 k4 k5 k6 k7 k8 KEYS UNIQ_KEY CLUSTER WAIT TAGS",
    ),
    # String#hashCode over UTF-16 units (😀 is a surrogate pair)
    ({"中文": "v", "😀": "x", "é": "y", "TAGS": "TagA"}, "中文 😀 é TAGS"),
]


@pytest.mark.parametrize(("props", "order"), HASHMAP_ORDER)
def test_message_properties_to_string_iterates_like_a_java_hash_map(props, order):
    """Pairs come in HashMap bucket order, (h ^ h >>> 16) & (capacity - 1), ties in
    insertion order, capacity 16 doubled past 0.75 full (MessageDecoder#messageProperties2String)."""
    expected = S2.join(f"{k}{S1}{props[k]}" for k in order.split())
    assert message_properties_to_string(props) == expected
    # the string parses back (in its own order) to a map that serializes the same way
    assert message_properties_to_string(string_to_message_properties(expected)) == expected


STRING2PROPS = [
    (f"k1{S1}v1", {"k1": "v1"}),
    ("", {}),
    (" ", {}),
    ("aaa", {}),
    (f"k1{S1}", {}),
    (f"{S1}v1", {}),
    (f"k1{S1}v1{S2}", {"k1": "v1"}),
    (f"k1{S1}v1{S2}k2{S1}v2", {"k1": "v1", "k2": "v2"}),
    (f"k1{S1}v1{S2}{S1}v2", {"k1": "v1"}),
    (f"k1{S1}v1{S2}k2{S1}", {"k1": "v1"}),
    (f"{S1}v1{S2}k2{S1}v2", {"k2": "v2"}),
    (f"k1{S1}{S2}k2{S1}v2", {"k2": "v2"}),
    (f"1{S1}1{S2}2{S1}2", {"1": "1", "2": "2"}),
    (f"1{S1}{S2}2{S1}2", {"2": "2"}),
    (f"{S1}1{S2}2{S1}2", {"2": "2"}),
    (f"1{S1}1{S2}2{S1}", {"1": "1"}),
    (f"1{S1}1{S2}{S1}2", {"1": "1"}),
]


@pytest.mark.parametrize(("text", "expected"), STRING2PROPS)
def test_string2message_properties(text: str, expected: dict[str, str]):
    """Every MessageDecoderTest#testString2messageProperties vector (docs/reference.md §11)."""
    assert string_to_message_properties(text) == expected


def test_string2message_properties_value_keeps_later_separators():
    """The first \\u0001 splits name/value; a later one stays in the value (§4.4)."""
    assert string_to_message_properties(f"k{S1}v{S1}w") == {"k": f"v{S1}w"}


# -- stored entry layout --------------------------------------------------------------------


def test_encode_field_offsets_ipv4():
    """Each field sits at the offset of docs/reference.md §4.1's table for IPv4 hosts."""
    msg = _inner(flag=7, sys_flag=0, reconsume_times=2, prepared_transaction_offset=99)
    data = encode_stored_message(msg)
    props = f"a{S1}123{S2}b{S1}hello{S2}c{S1}3.14".encode()
    assert len(data) == 91 + 8 + 3 + len(props) == msg.store_size
    assert struct.unpack_from(">i", data, 0)[0] == len(data)
    assert data[4:8] == bytes.fromhex("DAA320A7")
    assert struct.unpack_from(">i", data, 8)[0] == zlib.crc32(b"hello!q!") & 0x7FFFFFFF
    assert struct.unpack_from(">i", data, 12)[0] == 1
    assert struct.unpack_from(">i", data, 16)[0] == 7
    assert struct.unpack_from(">q", data, 20)[0] == 123
    assert struct.unpack_from(">q", data, 28)[0] == 123456
    assert struct.unpack_from(">i", data, 36)[0] == 0
    assert struct.unpack_from(">q", data, 40)[0] == 1_650_000_000_000
    assert data[48:56] == bytes([127, 0, 0, 1]) + struct.pack(">i", 0)
    assert struct.unpack_from(">q", data, 56)[0] == 1_650_000_000_005
    assert data[64:72] == bytes([10, 0, 0, 1]) + struct.pack(">i", 10911)
    assert struct.unpack_from(">i", data, 72)[0] == 2
    assert struct.unpack_from(">q", data, 76)[0] == 99
    assert struct.unpack_from(">i", data, 84)[0] == 8
    assert data[88:96] == b"hello!q!"
    assert data[96] == 3 and data[97:100] == b"abc"
    assert struct.unpack_from(">h", data, 100)[0] == len(props)
    assert data[102:] == props


def test_encode_and_decode_round_trip_ipv4():
    """queueId 1, commitLogOffset 123456, body, topic and properties survive (testEncodeAndDecode)."""
    msg = _inner()
    decoded = decode_stored_message(encode_stored_message(msg), check_crc=True)
    assert decoded.queue_id == 1
    assert decoded.commit_log_offset == 123456
    assert decoded.queue_offset == 123
    assert decoded.body == b"hello!q!"
    assert decoded.topic == "abc"
    assert decoded.properties == {"a": "123", "b": "hello", "c": "3.14"}
    assert decoded.born_host == "127.0.0.1:0"
    assert decoded.store_host == "10.0.0.1:10911"
    assert decoded.born_timestamp == 1_650_000_000_000
    assert decoded.store_timestamp == 1_650_000_000_005
    assert decoded.store_size == msg.store_size == 91 + 8 + 3 + 20
    assert decoded.body_crc == msg.body_crc
    assert decoded.msg_id == create_message_id("10.0.0.1:10911", 123456)
    assert decoded.msg_id == "0A00000100002A9F000000000001E240"


def test_encode_and_decode_ipv6_sets_sys_flag_48():
    """IPv6 born and store hosts give sysFlag 48 and a 56-char msg id (testEncodeAndDecodeOnIPv6Host)."""
    msg = _inner(born_host="[1050:0000:0000:0000:0005:0600:300c:326b]:0", store_host="[::1]:0")
    data = encode_stored_message(msg)
    assert len(data) == 91 + 24 + 8 + 3 + 20
    decoded = decode_stored_message(data)
    assert decoded.sys_flag == 48
    assert msg.sys_flag == 48
    assert decoded.queue_id == 1 and decoded.commit_log_offset == 123456
    assert decoded.body == b"hello!q!" and decoded.topic == "abc"
    assert decoded.properties == {"a": "123", "b": "hello", "c": "3.14"}
    assert decoded.born_host == "[1050::5:600:300c:326b]:0"
    assert decoded.store_host == "[::1]:0"
    assert len(decoded.msg_id) == 56
    assert decoded.msg_id == "0" * 31 + "1" + "00000000" + f"{123456:016X}"


def test_encode_mixed_hosts_set_one_v6_bit_each():
    """Only the IPv6 host's bit is set: born v6 → 0x10, store v6 → 0x20 (docs/reference.md §4.2)."""
    m1 = _inner(born_host="[::1]:5")
    assert decode_stored_message(encode_stored_message(m1)).sys_flag == 0x10
    m2 = _inner(store_host="[::1]:5", sys_flag=0x10)  # stale v6 bit is cleared for an IPv4 host
    d2 = decode_stored_message(encode_stored_message(m2))
    assert d2.sys_flag == 0x20
    assert d2.born_host == "127.0.0.1:0" and d2.store_host == "[::1]:5"


def test_encode_keeps_other_sys_flag_bits():
    """Compressed / transaction bits pass through unchanged (docs/reference.md §4.3)."""
    msg = _inner(sys_flag=MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.TRANSACTION_PREPARED_TYPE)
    assert decode_stored_message(encode_stored_message(msg)).sys_flag == 0x5


def test_encode_plain_message_ext_uses_properties_dict():
    """A MessageExt (no properties_string) is encoded from its dict, like MessageDecoder#encode."""
    ext = MessageExt(
        topic="x",
        body=b"x",
        properties={"NullValueKey": None, "k": "v"},  # type: ignore[dict-item]
        born_host="127.0.0.1:9000",
        store_host="127.0.0.1:9000",
    )
    decoded = decode_stored_message(encode_stored_message(ext))
    assert decoded.get_property("NullValueKey") is None
    assert decoded.properties == {"k": "v"}


def test_encode_empty_body_and_properties():
    """Empty body and properties still make a 91 + topic byte entry (docs/reference.md §4.1)."""
    msg = _inner(body=b"", properties_string="", topic="T")
    data = encode_stored_message(msg)
    assert len(data) == 92
    decoded = decode_stored_message(data, check_crc=True)
    assert decoded.body == b"" and decoded.properties == {} and decoded.body_crc == 0


def test_encode_rejects_long_topic_and_properties():
    """Topic > 127 bytes or properties > 32767 bytes raise ValueError (store guards, §4.1)."""
    encode_stored_message(_inner(topic="t" * 127))
    with pytest.raises(ValueError, match="topic"):
        encode_stored_message(_inner(topic="t" * 128))
    encode_stored_message(_inner(properties_string="p" * 32767))
    with pytest.raises(ValueError, match="properties"):
        encode_stored_message(_inner(properties_string="p" * 32768))


def test_encode_rejects_bad_host():
    """A host that is not 'ip:port' raises ValueError naming the value."""
    with pytest.raises(ValueError, match="localhost"):
        encode_stored_message(_inner(born_host="localhost:10911"))
    with pytest.raises(ValueError):
        encode_stored_message(_inner(store_host="10.0.0.1"))


def test_decode_at_position_and_read_body_false():
    """Decoding at an offset works; read_body=False leaves the body empty (Java: null)."""
    data = b"\x00" * 13 + encode_stored_message(_inner())
    decoded = decode_stored_message(data, 13, read_body=False)
    assert decoded.body == b""
    assert decoded.topic == "abc" and decoded.store_size == len(data) - 13


def test_decode_inflates_compressed_body_only_when_asked():
    """COMPRESSED bodies are stored deflated and inflated by the client decode (docs/reference.md §4.3, §4.6)."""
    raw = b"payload " * 100
    msg = _inner(body=zlib.compress(raw, 5), sys_flag=MessageSysFlag.COMPRESSED_FLAG)
    data = encode_stored_message(msg)
    assert decode_stored_message(data).body == zlib.compress(raw, 5)
    assert decode_stored_message(data, inflate=True).body == raw
    assert decodes(data)[0].body == raw


# -- corrupt entries ------------------------------------------------------------------------


def test_truncated_entry_raises():
    """Any truncation of an entry raises MessageDecodeError (docs/reference.md §4.1 recovery checks)."""
    data = encode_stored_message(_inner())
    for cut in (0, 4, 7, 8, 40, 87, 88, 95, len(data) - 1):
        with pytest.raises(MessageDecodeError):
            decode_stored_message(data[:cut])


def test_bad_magic_raises():
    """A wrong magic code raises MessageDecodeError naming it."""
    data = bytearray(encode_stored_message(_inner()))
    data[4:8] = b"\x00\x00\x00\x00"
    with pytest.raises(MessageDecodeError, match="magic"):
        decode_stored_message(bytes(data))


def test_blank_magic_raises_and_read_entry_header_reports_it():
    """The 8-byte end-of-file filler is not a message; read_entry_header exposes its magic."""
    blank = struct.pack(">ii", 1000, BLANK_MAGIC_CODE)
    assert read_entry_header(blank) == (1000, BLANK_MAGIC_CODE)
    with pytest.raises(MessageDecodeError, match="blank"):
        decode_stored_message(blank)
    with pytest.raises(MessageDecodeError):
        read_entry_header(blank[:7])


def test_total_size_mismatch_raises():
    """TOTALSIZE different from the recomputed length raises (checkMessageAndReturnSize)."""
    data = bytearray(encode_stored_message(_inner()) + b"\x00\x00")
    struct.pack_into(">i", data, 0, len(data))
    with pytest.raises(MessageDecodeError, match="total size"):
        decode_stored_message(bytes(data))


def test_crc_mismatch_raises_only_when_checked():
    """A flipped body byte fails check_crc=True and passes check_crc=False (docs/reference.md §4.1)."""
    data = bytearray(encode_stored_message(_inner()))
    data[88] ^= 0xFF
    decode_stored_message(bytes(data))
    with pytest.raises(MessageDecodeError, match="CRC"):
        decode_stored_message(bytes(data), check_crc=True)


def test_corrupt_compressed_body_raises_on_inflate():
    """A COMPRESSED body that is not zlib raises when inflated."""
    data = encode_stored_message(_inner(sys_flag=MessageSysFlag.COMPRESSED_FLAG))
    with pytest.raises(MessageDecodeError, match="inflate"):
        decode_stored_message(data, inflate=True)


def test_decodes_concatenated_and_stops_at_first_failure():
    """A pull body is entries end to end; decoding stops at the first bad one (docs/reference.md §4.6).
    mqlab-stricter (module essay): a wrong magic or TOTALSIZE stops it too, where Java's
    MessageDecoder#decode reads on."""
    entries = [
        encode_stored_message(_inner(queue_offset=i, commit_log_offset=1000 + 200 * i))
        for i in range(3)
    ]
    good = b"".join(entries)
    msgs = decodes(good)
    assert [m.queue_offset for m in msgs] == [0, 1, 2]
    assert [m.msg_id for m in msgs] == [
        create_message_id("10.0.0.1:10911", 1000 + 200 * i) for i in range(3)
    ]
    assert [m.queue_offset for m in decodes(good + b"\x00\x00\x00\x10garbage!")] == [0, 1, 2]
    broken = bytearray(good)
    broken[len(entries[0]) + 4] = 0  # second entry's magic
    assert [m.queue_offset for m in decodes(bytes(broken))] == [0]
    broken = bytearray(good)
    broken[len(entries[0]) + 3] ^= 1  # second entry's TOTALSIZE off by one
    assert [m.queue_offset for m in decodes(bytes(broken))] == [0]
    assert decodes(b"") == []


def test_decode_accepts_memoryview_and_bytearray():
    """The decoder reads bytes, bytearray and memoryview alike (mapped files, pull bodies)."""
    data = encode_stored_message(_inner())
    for buf in (bytearray(data), memoryview(data)):
        assert decode_stored_message(buf).properties == {"a": "123", "b": "hello", "c": "3.14"}


# -- ids and hosts --------------------------------------------------------------------------


def test_offset_msg_id_vector():
    """645100FA00002A9F000000489A3AA09E = 100.81.0.250:10911 @ 0x489A3AA09E (docs/reference.md §4.5)."""
    assert create_message_id("100.81.0.250:10911", 0x489A3AA09E) == (
        "645100FA00002A9F000000489A3AA09E"
    )
    assert decode_message_id("645100FA00002A9F000000489A3AA09E") == (
        "100.81.0.250:10911",
        0x489A3AA09E,
    )


def test_offset_msg_id_ipv6_round_trip():
    """An IPv6 store host gives a 56-char id that decodes back (docs/reference.md §4.5)."""
    mid = "24084004018081003FAA1DDE2B3F898A00002A9F0000000000000CA0"
    host, offset = decode_message_id(mid)
    assert host == "[2408:4004:180:8100:3faa:1dde:2b3f:898a]:10911"
    assert offset == 0xCA0
    assert create_message_id(host, offset) == mid


def test_decode_message_id_rejects_bad_length():
    """Ids that are neither 32 nor 56 hex chars raise ValueError."""
    with pytest.raises(ValueError):
        decode_message_id("ABCD")
    with pytest.raises(ValueError):
        decode_message_id("XX" * 16)


def test_socket_address_bytes_round_trip():
    """IPv4 hosts are 4+4 bytes, IPv6 16+4, port as int32 (docs/reference.md §4.2)."""
    b4 = socket_address_to_bytes("10.0.0.1:10911")
    assert b4 == bytes([10, 0, 0, 1, 0, 0, 0x2A, 0x9F])
    assert bytes_to_socket_address(b4) == "10.0.0.1:10911"
    b6 = socket_address_to_bytes("[::1]:9876")
    assert len(b6) == 20 and b6[15] == 1 and b6[16:] == struct.pack(">i", 9876)
    assert bytes_to_socket_address(b6) == "[::1]:9876"
    with pytest.raises(ValueError):
        bytes_to_socket_address(b"\x00" * 7)


# -- batch body -----------------------------------------------------------------------------


def test_batch_body_golden_bytes():
    """One batch entry is TOTALSIZE, MAGIC 0, CRC 0, FLAG, BODYLEN, BODY, PROPLEN, PROPS (§4.6)."""
    m = Message("topic", b"body", flag=12, properties={"key": "value"})
    props = f"WAIT{S1}true{S2}key{S1}value".encode()  # HashMap order: WAIT in bucket 13, key in 14
    expected = struct.pack(">iiiii", 20 + 4 + 2 + len(props), 0, 0, 12, 4) + b"body"
    expected += struct.pack(">h", len(props)) + props
    assert encode_batch_body([m]) == expected
    assert decode_batch_body(expected) == [(12, b"body", {"key": "value", "WAIT": "true"})]


def test_batch_body_round_trip_100_messages():
    """100 messages keep flag, body and properties (MessageEncodeDecodeTest#testEncodeDecodeList)."""
    msgs = [
        Message("topic", f"body{i}".encode(), flag=i, properties={"key": f"value{i}"})
        for i in range(100)
    ]
    decoded = decode_batch_body(encode_batch_body(msgs))
    assert len(decoded) == 100
    for i, (flag, body, props) in enumerate(decoded):
        assert (flag, body, props["key"]) == (i, f"body{i}".encode(), f"value{i}")
    raw = decode_batch_body_raw(encode_batch_body(msgs[:1]))
    assert raw == [(0, b"body0", f"WAIT{S1}true{S2}key{S1}value0")]


def test_batch_body_truncated_raises():
    """A truncated batch body raises MessageDecodeError."""
    data = encode_batch_body([Message("t", b"abc")])
    with pytest.raises(MessageDecodeError):
        decode_batch_body(data[:-1])
    with pytest.raises(MessageDecodeError):
        decode_batch_body(data[:10])


def test_batch_body_rejects_oversized_properties():
    """Properties over 32767 bytes raise ValueError (MessageDecoder#encodeMessage)."""
    with pytest.raises(ValueError, match="Properties size"):
        encode_batch_body([Message("t", b"x", properties={"k": "v" * 32767})])


def test_join_batch_properties():
    """A \\u0002 goes between message and batch props only if both exist and none ends it (§4.6)."""
    assert join_batch_properties(f"a{S1}1", f"CLUSTER{S1}c") == f"a{S1}1{S2}CLUSTER{S1}c"
    assert join_batch_properties(f"a{S1}1{S2}", f"CLUSTER{S1}c") == f"a{S1}1{S2}CLUSTER{S1}c"
    assert join_batch_properties("", f"CLUSTER{S1}c") == f"CLUSTER{S1}c"
    assert join_batch_properties(f"a{S1}1", "") == f"a{S1}1"
