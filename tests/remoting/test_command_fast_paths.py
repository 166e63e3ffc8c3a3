"""The JSON header shortcuts write and read exactly what the plain definitions do.

docs/reference.md §1.1 (frame), §1.7 (fastjson's escapes), docs/cpp-client.md §1 (the C++ client's
trailing ``\\n``).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqlab.remoting import fastjson
from mqlab.remoting.command import RemotingCommand, RemotingCommandException

_NOT_FASTJSON = re.compile(r"\\u00(?:0b|0e|0f|1[a-f])|[\x7f-\x9f\u2028\u2029]")


def _reference_header(cmd: RemotingCommand) -> bytes:
    """encode_header as first written: json.dumps, then fastjson when one regex matches."""
    d = cmd.header_dict()
    text = json.dumps(d, separators=(",", ":"), ensure_ascii=False)
    if _NOT_FASTJSON.search(text) is not None:
        text = fastjson.dumps(d)
    return text.encode()


SPECIAL = [
    "", "plain", "TAGS\x01TagA\x02WAIT\x01true", "\x0b", "\x1a", "\x1f", "\x1e\x01", "\x7f",
    "\x80", "\x9f", "\xa0", "中文", "é\x9f", "\\u000b", '"quoted"', "\n\t\r\x08\x0c", "\x00",
    "\u2028", "a\u2029b", "\x0e", "a\x0fb",
]  # fmt: skip


@pytest.mark.parametrize("value", SPECIAL, ids=repr)
def test_header_text_is_the_same_as_the_reference_encoder(value):
    """U+000B, U+000E, U+000F, U+001A..U+001F, U+007F..U+009F and U+2028/U+2029 switch to
    fastjson's escapes, anything else is json.dumps text — byte for byte (docs/reference.md §1.7)."""
    cmd = RemotingCommand(310, ext_fields={"i": value}, remark=value or None, opaque=3)
    assert cmd.encode_header() == _reference_header(cmd)


@given(st.text(max_size=30))
def test_header_text_matches_the_reference_for_any_text(value):
    """Any extFields value and remark: the same header bytes as the reference (docs/reference.md §1.7)."""
    cmd = RemotingCommand(11, ext_fields={"k": value}, remark=value)
    try:
        expected = _reference_header(cmd)
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):
            cmd.encode_header()
        return
    assert cmd.encode_header() == expected


def _frame(header: str, body: bytes = b"") -> bytes:
    h = header.encode()
    return (4 + len(h) + len(body)).to_bytes(4, "big") + len(h).to_bytes(4, "big") + h + body


@pytest.mark.parametrize(
    "header",
    [
        '{"code":11,"extFields":{"a":"1"},"flag":0,"opaque":5}',
        '{"code":11,"extFields":{"a":"1"},"flag":0,"opaque":5}\n',  # the C++ client's newline
        ' \t{"code":11,"opaque":5}',
        "{code:11,'extFields':{'a':1,},opaque:5}",  # fastjson's lenient dialect
        '{"code":11,"extFields":{"a":null,"b":2,"c":true},"opaque":5}',
    ],
)
def test_lenient_and_padded_headers_decode_as_fastjson_reads_them(header):
    """Headers with whitespace around them or in fastjson's lenient dialect decode to the
    fields fastjson.loads gives (docs/cpp-client.md §1, docs/reference.md §1.7)."""
    cmd = RemotingCommand.decode(_frame(header))
    d = fastjson.loads(header)
    assert (cmd.code, cmd.opaque) == (11, 5)
    ext = d.get("extFields")
    expected = None if ext is None else {k: v for k, v in ext.items() if v is not None}
    if expected is not None:
        expected = {k: v if isinstance(v, str) else json.dumps(v) for k, v in expected.items()}
    assert cmd.ext_fields == expected


@pytest.mark.parametrize("header", ['{"code":11} x', "[1]", "{", '{"code":11}{}'])
def test_bad_headers_still_raise(header):
    """Extra text, a non-object or broken JSON raises RemotingCommandException (docs/reference.md §1.1)."""
    with pytest.raises(RemotingCommandException):
        RemotingCommand.decode(_frame(header))
