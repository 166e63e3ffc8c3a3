"""RemotingCommand frame codec (RemotingCommandTest, RocketMQSerializableTest; docs/reference.md §1, §11)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqlab.remoting import (
    CURRENT_VERSION,
    RPC_ONEWAY,
    RPC_TYPE,
    RemotingCommand,
    RemotingCommandException,
    SerializeType,
    split_frames,
)
from mqlab.remoting.command import MAX_FRAME_LENGTH


def json_frame(header: str, body: bytes = b"") -> bytes:
    """A JSON frame around a literal header: length, type 0 + header length, header, body."""
    h = header.encode("utf-8")
    return struct.pack(">II", 4 + len(h) + len(body), len(h)) + h + body


def rocketmq_frame(header_hex: str) -> bytes:
    h = bytes.fromhex(header_hex)
    return struct.pack(">II", 4 + len(h), (1 << 24) | len(h)) + h


# One golden table drives both the encode and the decode tests (docs/design.md §6.13).
# (id, RemotingCommand kwargs, frame bytes)
GOLDEN_FRAMES: list[tuple[str, dict[str, object], bytes]] = [
    (
        # docs/reference.md §1.2, captured Java request
        "json_get_routeinfo_request",
        {"code": 105, "ext_fields": {"topic": "TBW102"}, "opaque": 1, "version": 401},
        json_frame(
            '{"code":105,"extFields":{"topic":"TBW102"},"flag":0,"language":"JAVA",'
            '"opaque":1,"serializeTypeCurrentRPC":"JSON","version":401}'
        ),
    ),
    (
        # docs/reference.md §1.2 captured response, plus the extFields {} every reply carries (cpp doc §1)
        "json_success_response",
        {"code": 0, "flag": RPC_TYPE, "opaque": 0, "version": 403, "ext_fields": {}},
        json_frame(
            '{"code":0,"extFields":{},"flag":1,"language":"JAVA","opaque":0,'
            '"serializeTypeCurrentRPC":"JSON","version":403}'
        ),
    ),
    (
        # docs/reference.md §1.2: oneway UPDATE_CONSUMER_OFFSET, HashMap key order kept as sent
        "json_oneway_update_consumer_offset",
        {
            "code": 15,
            "ext_fields": {
                "topic": "%RETRY%g",
                "queueId": "0",
                "consumerGroup": "g",
                "commitOffset": "18",
            },
            "flag": RPC_ONEWAY,
            "opaque": 7,
            "version": 399,
        },
        json_frame(
            '{"code":15,"extFields":{"topic":"%RETRY%g","queueId":"0","consumerGroup":"g",'
            '"commitOffset":"18"},"flag":2,"language":"JAVA","opaque":7,'
            '"serializeTypeCurrentRPC":"JSON","version":399}'
        ),
    ),
    (
        # RemotingCommandTest#testEncodeAndDecode_FilledBody: body [0,1,2,3,4]
        "json_register_broker_with_body",
        {"code": 103, "opaque": 5, "version": 2333, "body": b"\x00\x01\x02\x03\x04", "remark": "r"},
        json_frame(
            '{"code":103,"flag":0,"language":"JAVA","opaque":5,"remark":"r",'
            '"serializeTypeCurrentRPC":"JSON","version":2333}',
            b"\x00\x01\x02\x03\x04",
        ),
    ),
    (
        # RocketMQSerializableTest: no remark, no extFields → 21-byte header
        "rocketmq_bare_21",
        {"code": 103, "opaque": 1, "version": 2333, "serialize_type": SerializeType.ROCKETMQ},
        rocketmq_frame("0067 00 091d 00000001 00000000 00000000 00000000"),
    ),
    (
        # RocketMQSerializableTest: remark "Sample Remark" → 34 bytes
        "rocketmq_remark_34",
        {
            "code": 103,
            "opaque": 1,
            "version": 2333,
            "remark": "Sample Remark",
            "serialize_type": SerializeType.ROCKETMQ,
        },
        rocketmq_frame(
            "0067 00 091d 00000001 00000000 0000000d" + b"Sample Remark".hex() + "00000000"
        ),
    ),
    (
        # RocketMQSerializableTest: extFields {"key":"value"} → 35 bytes
        "rocketmq_ext_35",
        {
            "code": 103,
            "opaque": 1,
            "version": 2333,
            "ext_fields": {"key": "value"},
            "serialize_type": SerializeType.ROCKETMQ,
        },
        rocketmq_frame(
            "0067 00 091d 00000001 00000000 00000000 0000000e 0003"
            + b"key".hex()
            + "00000005"
            + b"value".hex()
        ),
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "frame"), [c[1:] for c in GOLDEN_FRAMES], ids=[c[0] for c in GOLDEN_FRAMES]
)
def test_encode_golden_frames(kwargs: dict[str, object], frame: bytes) -> None:
    """encode() writes each golden frame byte for byte (docs/reference.md §1.1, §1.2, §1.5)."""
    kw = dict(kwargs)
    code = kw.pop("code")
    assert RemotingCommand(code, **kw).encode() == frame  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "frame"), [c[1:] for c in GOLDEN_FRAMES], ids=[c[0] for c in GOLDEN_FRAMES]
)
def test_decode_golden_frames(kwargs: dict[str, object], frame: bytes) -> None:
    """decode() reads each golden frame back into the same fields (docs/reference.md §1.1, §1.2, §1.5)."""
    cmd = RemotingCommand.decode(frame)
    assert cmd.code == kwargs["code"]
    assert cmd.ext_fields == kwargs.get("ext_fields")
    assert cmd.flag == kwargs.get("flag", 0)
    assert cmd.opaque == kwargs["opaque"]
    assert cmd.version == kwargs["version"]
    assert cmd.language == "JAVA"
    assert cmd.remark == kwargs.get("remark")
    assert cmd.body == kwargs.get("body")
    assert cmd.serialize_type == kwargs.get("serialize_type", SerializeType.JSON)


# -- §1.1 protocol-type word ----------------------------------------------------------------


def test_mark_protocol_type_json_261() -> None:
    """A 261-byte JSON header gives the type/length word 00 00 01 05 (RemotingCommandTest)."""
    probe = RemotingCommand(105, ext_fields={"k": ""}).encode_header()
    pad = 261 - len(probe)
    frame = RemotingCommand(105, ext_fields={"k": "x" * pad}).encode()
    assert frame[4:8] == bytes([0x00, 0x00, 0x01, 0x05])
    assert struct.unpack(">i", frame[:4])[0] == 4 + 261


def test_mark_protocol_type_rocketmq_16777215() -> None:
    """A 16,777,215-byte ROCKETMQ header gives the word 01 FF FF FF (RemotingCommandTest)."""
    remark = "r" * (16_777_215 - 21)
    frame = RemotingCommand(103, remark=remark, serialize_type=SerializeType.ROCKETMQ).encode()
    assert frame[4:8] == bytes([0x01, 0xFF, 0xFF, 0xFF])


def test_header_over_24_bits_rejected() -> None:
    """A header of 16,777,216 bytes does not fit the 3-byte length (docs/reference.md §1.1)."""
    remark = "r" * (16_777_216 - 21)
    with pytest.raises(RemotingCommandException, match="header too long"):
        RemotingCommand(103, remark=remark, serialize_type=SerializeType.ROCKETMQ).encode()


# -- §1.5 binary header offsets --------------------------------------------------------------


@pytest.mark.parametrize(
    ("remark", "ext", "size", "remark_len", "ext_len_at", "ext_len"),
    [
        (None, None, 21, 0, 17, 0),
        ("Sample Remark", None, 34, 13, 30, 0),
        (None, {"key": "value"}, 35, 0, 17, 14),
    ],
)
def test_rocketmq_header_sizes_and_offsets(
    remark: str | None,
    ext: dict[str, str] | None,
    size: int,
    remark_len: int,
    ext_len_at: int,
    ext_len: int,
) -> None:
    """Binary header is 21/34/35 bytes; code@0 language@2 version@3 opaque@5 flag@9 remarkLen@13."""
    cmd = RemotingCommand(
        103,
        remark=remark,
        ext_fields=ext,
        opaque=77,
        version=2333,
        serialize_type=SerializeType.ROCKETMQ,
    )
    h = cmd.encode_header()
    assert len(h) == size
    assert struct.unpack_from(">h", h, 0)[0] == 103
    assert h[2] == 0  # LanguageCode.JAVA
    assert struct.unpack_from(">h", h, 3)[0] == 2333
    assert struct.unpack_from(">i", h, 5)[0] == 77
    assert struct.unpack_from(">i", h, 9)[0] == 0
    assert struct.unpack_from(">i", h, 13)[0] == remark_len
    assert struct.unpack_from(">i", h, ext_len_at)[0] == ext_len
    if remark:
        assert h[17:30] == b"Sample Remark"


def test_rocketmq_empty_remark_and_ext_decode_as_null() -> None:
    """Remark/extFields length 0 decode as null, as rocketMQProtocolDecode does (docs/reference.md §1.5)."""
    cmd = RemotingCommand.decode(rocketmq_frame("0067 00 091d 00000001 00000000 00000000 00000000"))
    assert cmd.remark is None and cmd.ext_fields is None


def test_rocketmq_language_byte_cpp() -> None:
    """The language byte is LanguageCode's number: CPP = 1 (docs/reference.md §1.2)."""
    cmd = RemotingCommand(34, language="CPP", serialize_type=SerializeType.ROCKETMQ)
    assert cmd.encode_header()[2] == 1
    assert RemotingCommand.decode(cmd.encode()).language == "CPP"


# -- round trips -------------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@pytest.mark.parametrize("stype", [SerializeType.JSON, SerializeType.ROCKETMQ])
@given(
    code=st.integers(0, 32767),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.sampled_from([0, RPC_TYPE, RPC_ONEWAY]),
    remark=st.one_of(st.none(), _text.filter(bool)),
    ext=st.one_of(st.none(), st.dictionaries(_text.filter(bool), _text, min_size=1, max_size=5)),
    body=st.one_of(st.none(), st.binary(min_size=1, max_size=64)),
)
def test_round_trip_both_serialize_types(
    stype: int,
    code: int,
    opaque: int,
    flag: int,
    remark: str | None,
    ext: dict[str, str] | None,
    body: bytes | None,
) -> None:
    """decode(encode(cmd)) keeps code, opaque, flag, remark, extFields and body in JSON and ROCKETMQ."""
    cmd = RemotingCommand(
        code,
        ext_fields=ext,
        body=body,
        remark=remark,
        opaque=opaque,
        flag=flag,
        serialize_type=stype,
    )
    back = RemotingCommand.decode(cmd.encode())
    assert (back.code, back.opaque, back.flag, back.remark, back.body) == (
        code,
        opaque,
        flag,
        remark,
        body,
    )
    expected_ext = ext if ext is not None else ({} if flag & RPC_TYPE and stype == 0 else None)
    assert back.ext_fields == expected_ext
    assert back.serialize_type == stype
    assert back.version == CURRENT_VERSION


def test_request_and_response_flags() -> None:
    """Requests have flag&1 = 0, responses flag&1 = 1, oneway sets bit 1 (RemotingCommandTest, §1.3)."""
    req = RemotingCommand.create_request(105, {"topic": "T"})
    resp = RemotingCommand.create_response(0)
    assert (req.flag & RPC_TYPE, req.is_response) == (0, False)
    assert (resp.flag & RPC_TYPE, resp.is_response) == (1, True)
    req.mark_oneway_rpc()
    assert req.flag == 2 and req.is_oneway
    assert req.version == resp.version == 399


# -- real captured headers (docs/reference.md §1.2, cpp doc §1) ----------------------------------------------

CPP_FIRST_FRAME = bytes.fromhex("000000c1000000bd") + (
    b'{"code":105,"extFields":{"AccessKey":"","OnsChannel":"ALIYUN",'
    b'"Signature":"N/YT7X6tJe5UfutmW+uNwTTJ7Fc=","topic":"TopicTest"},"flag":0,'
    b'"language":"CPP","opaque":0,"remark":"","version":63}\n'
)


def test_cpp_client_first_frame_byte_for_byte() -> None:
    """The C++ client's GET_ROUTEINFO_BY_TOPIC: 0xc1 total, 0xbd header incl. trailing \\n (cpp doc §1)."""
    assert len(CPP_FIRST_FRAME) == 4 + 0xC1
    assert CPP_FIRST_FRAME.endswith(b"}\n")
    cmd = RemotingCommand.decode(CPP_FIRST_FRAME)
    assert cmd.code == 105
    assert cmd.ext_fields == {
        "AccessKey": "",
        "OnsChannel": "ALIYUN",
        "Signature": "N/YT7X6tJe5UfutmW+uNwTTJ7Fc=",
        "topic": "TopicTest",
    }
    assert (cmd.flag, cmd.language, cmd.opaque, cmd.remark, cmd.version) == (0, "CPP", 0, "", 63)
    assert cmd.serialize_type == SerializeType.JSON and cmd.body is None
    buf = bytearray(CPP_FIRST_FRAME)
    assert split_frames(buf) == [CPP_FIRST_FRAME[4:]] and buf == b""


def test_cpp_numeric_ext_values_become_strings() -> None:
    """The C++ client sends queueId/sysFlag as JSON numbers; extFields holds "0" (cpp doc §1)."""
    cmd = RemotingCommand.decode(
        json_frame(
            '{"code":10,"extFields":{"queueId":0,"sysFlag":0,"defaultTopicQueueNums":4,'
            '"bornTimestamp":"1795254357706"},"flag":0,"language":"CPP","opaque":2,"remark":"",'
            '"version":63}\n'
        )
    )
    assert cmd.ext_fields == {
        "queueId": "0",
        "sysFlag": "0",
        "defaultTopicQueueNums": "4",
        "bornTimestamp": "1795254357706",
    }


def test_send_message_v2_captured_header_control_char_escapes() -> None:
    """SEND_MESSAGE_V2's "i" with \\u0001/\\u0002 escapes decodes to U+0001/U+0002 (docs/reference.md §1.2)."""
    header = (
        '{"code":310,"extFields":{"a":"yyzGroup2","b":"yyztest2","c":"TBW102","d":"4","e":"0",'
        '"f":"0","g":"1491978653614","h":"0",'
        '"i":"TAGS\\u0001TAG\\u0002WAIT\\u0001true\\u0002KEYS\\u0001ffff","j":"0","k":"false"},'
        '"flag":0,"language":"JAVA","opaque":9,"serializeTypeCurrentRPC":"JSON","version":213}'
    )
    cmd = RemotingCommand.decode(json_frame(header, b"hello"))
    assert cmd.code == 310 and cmd.body == b"hello"
    assert cmd.ext_fields is not None
    assert cmd.ext_fields["i"] == "TAGS\x01TAG\x02WAIT\x01true\x02KEYS\x01ffff"
    assert cmd.ext_fields["g"] == "1491978653614"
    assert b"TAGS\\u0001TAG\\u0002" in cmd.encode()  # written back with the same escapes


def test_header_with_fastjson_unquoted_keys() -> None:
    """A header with fastjson's unquoted keys still decodes (docs/reference.md §1.7: fastjson is lenient)."""
    cmd = RemotingCommand.decode(
        json_frame(
            '{code:105,extFields:{topic:"T",0:"x"},flag:0,language:"JAVA",opaque:4,version:399}'
        )
    )
    assert (cmd.code, cmd.opaque, cmd.ext_fields) == (105, 4, {"topic": "T", "0": "x"})


def test_encode_writes_fastjson_escapes() -> None:
    """Header strings are escaped as fastjson does: \\u0001, \\u001F, \\u007F upper-case (docs/reference.md §1.7)."""
    text = RemotingCommand(10, ext_fields={"i": "a\x01b\x1fc\x7fd\u00e9"}).encode_header().decode()
    assert '"i":"a\\u0001b\\u001Fc\\u007Fd\u00e9"' in text


def test_header_without_code_reads_as_code_0() -> None:
    """fastjson leaves a missing ``code`` at Java's int default 0 (RemotingCommand.java:72)."""
    header = b'{"opaque":7,"flag":0}'
    frame = (4 + len(header)).to_bytes(4, "big") + len(header).to_bytes(4, "big") + header
    cmd = RemotingCommand.decode(frame)
    assert (cmd.code, cmd.opaque, cmd.is_response) == (0, 7, False)


def test_encode_writes_upper_case_hex_for_u000e_and_u000f() -> None:
    """fastjson's escape table writes U+000E/U+000F as \\u000E/\\u000F (upper-case hex)."""
    text = RemotingCommand(10, remark="a\x0eb\x0fc").encode_header().decode()
    assert '"remark":"a\\u000Eb\\u000Fc"' in text


def test_encode_escapes_the_line_and_paragraph_separators() -> None:
    """fastjson 1.2.76 writes U+2028 / U+2029 as \\u2028 / \\u2029 in names and values alike."""
    cmd = RemotingCommand(10, ext_fields={"k\u2028": "v\u2029"}, remark="r\u2028")
    text = cmd.encode_header().decode()
    assert '"k\\u2028":"v\\u2029"' in text and '"remark":"r\\u2028"' in text
    assert RemotingCommand.decode(cmd.encode()).ext_fields == {"k\u2028": "v\u2029"}


# -- replies the C++ client can read (cpp doc §1 "Response header rules") -----------------------


def test_reply_without_header_still_has_ext_fields() -> None:
    """Every reply carries "extFields":{} so the C++ client does not crash (cpp doc §1)."""
    assert b'"extFields":{}' in RemotingCommand.create_response(0).encode()
    assert b"extFields" not in RemotingCommand.create_request(34).encode()


def test_reply_ext_values_are_json_strings() -> None:
    """Non-string extFields values are written as JSON strings ("5", "true") (cpp doc §1)."""
    resp = RemotingCommand.create_response(0, ext_fields={"offset": 5, "flag": True})  # type: ignore[dict-item]
    assert b'"extFields":{"offset":"5","flag":"true"}' in resp.encode()


# -- split_frames (LengthFieldBasedFrameDecoder) -------------------------------------------------


def test_split_frames_partial_frames() -> None:
    """Complete frames are cut off; a partial one waits in the buffer (docs/reference.md §1.1)."""
    f1 = RemotingCommand(105, ext_fields={"topic": "A"}, opaque=1).encode()
    f2 = RemotingCommand(34, body=b"{}", opaque=2).encode()
    buf = bytearray(f1 + f2[:10])
    assert split_frames(buf) == [f1[4:]]
    assert bytes(buf) == f2[:10]
    buf += f2[10:]
    assert split_frames(buf) == [f2[4:]] and buf == b""


def test_split_frames_byte_by_byte() -> None:
    """Feeding a frame one byte at a time yields it exactly once, at the last byte."""
    frame = RemotingCommand(11, ext_fields={"topic": "T"}, opaque=3).encode()
    buf = bytearray()
    out: list[bytes] = []
    for b in frame:
        buf.append(b)
        out += split_frames(buf)
    assert out == [frame[4:]]
    assert RemotingCommand.decode_payload(out[0]).opaque == 3


def test_split_frames_too_long() -> None:
    """length + 4 over 16,777,216 raises, as Netty's TooLongFrameException (docs/reference.md §1.1)."""
    ok = bytearray(struct.pack(">i", MAX_FRAME_LENGTH - 4))
    assert split_frames(ok) == [] and len(ok) == 4  # fits: waits for the rest
    with pytest.raises(RemotingCommandException, match="bad frame length"):
        split_frames(bytearray(struct.pack(">i", MAX_FRAME_LENGTH - 3)))


@pytest.mark.parametrize("length", [-1, 0, 3])
def test_split_frames_bad_length(length: int) -> None:
    """A negative length or one with no room for the header-length word raises."""
    with pytest.raises(RemotingCommandException):
        split_frames(bytearray(struct.pack(">i", length) + b"\x00" * 8))


# -- malformed frames ----------------------------------------------------------------------------

MALFORMED = [
    ("length_mismatch", struct.pack(">II", 99, 2) + b"{}"),
    ("too_short", b"\x00\x00\x00\x01\x00"),
    ("header_length_past_end", struct.pack(">II", 8, 50) + b"{}\x00\x00"),
    ("header_not_json", json_frame("{nope")),
    ("header_not_utf8", struct.pack(">II", 6, 2) + b"\xff\xfe"),
    ("header_json_array", json_frame("[1,2]")),
    ("ext_fields_not_object", json_frame('{"code":1,"extFields":[1]}')),
    ("serialize_type_7", struct.pack(">II", 6, (7 << 24) | 2) + b"{}"),
    ("binary_truncated", rocketmq_frame("0067 00 091d 0000")),
    ("binary_remark_past_end", rocketmq_frame("0067 00 091d 00000001 00000000 000000ff 00000000")),
    ("binary_ext_past_end", rocketmq_frame("0067 00 091d 00000001 00000000 00000000 000000ff")),
    (
        "binary_negative_key_length",
        rocketmq_frame("0067 00 091d 00000001 00000000 00000000 00000006 fffe 00000000"),
    ),
    (
        "binary_value_past_ext",
        rocketmq_frame("0067 00 091d 00000001 00000000 00000000 00000007 0001 6b 00000009"),
    ),
]


@pytest.mark.parametrize("frame", [m[1] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_frames_raise(frame: bytes) -> None:
    """Malformed bytes raise RemotingCommandException (docs/design.md §6.10; NettyDecoder closes the channel)."""
    with pytest.raises(RemotingCommandException):
        RemotingCommand.decode(frame)


def test_unknown_serialize_type_message() -> None:
    """Serialize type byte 7 is named in the error."""
    with pytest.raises(RemotingCommandException, match="unknown serialize type 7"):
        RemotingCommand.decode(struct.pack(">II", 6, (7 << 24) | 2) + b"{}")


def test_null_ext_values_are_absent() -> None:
    """A null extFields value is left out on encode and reads as absent on decode (fastjson, mapSerialize)."""
    cmd = RemotingCommand.decode(json_frame('{"code":14,"extFields":{"topic":null,"queueId":"1"}}'))
    assert cmd.ext_fields == {"queueId": "1"}
    for stype in (SerializeType.JSON, SerializeType.ROCKETMQ):
        out = RemotingCommand(14, ext_fields={"topic": None, "queueId": "1"}, serialize_type=stype)  # type: ignore[dict-item]
        assert RemotingCommand.decode(out.encode()).ext_fields == {"queueId": "1"}
