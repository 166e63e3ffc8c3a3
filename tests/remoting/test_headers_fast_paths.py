"""Header decoding shortcuts answer exactly like the table-driven, fully checked decode.

docs/reference.md §1.4 (extFields are strings; numbers parse as Java int / long).
"""

from __future__ import annotations

import pytest

from mqlab.remoting.command import RemotingCommandException
from mqlab.remoting.headers import (
    SEND_MESSAGE_V2_FIELDS,
    SendMessageRequestHeader,
    _parse_int,
    _parse_integer,
    _parse_long,
    decode_send_message_header_v2,
)

VALUES = [
    "0", "7", "007", "2147483647", "2147483648", "-2147483648", "-2147483649", "+5", "-0",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "", " 1", "1 ",
    "1.0", "x", "٣", "１", 5, -5, True, 2**40, None, 1.5,
]  # fmt: skip


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except RemotingCommandException as e:
        return ("error", str(e))


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_integer_and_long_fast_paths_match_the_full_parse(value):
    """For digits, signs, range edges (2147483647 / 2^63 − 1), spaces, non-ASCII digits and
    non-strings, the fast parsers give the full parse's value or error text (docs/reference.md §1.4)."""
    assert _outcome(_parse_integer, value, "q") == _outcome(_parse_int, value, "q", 32)
    assert _outcome(_parse_long, value, "q") == _outcome(_parse_int, value, "q", 64)


def test_v2_decode_reports_the_first_bad_field_in_order():
    """decodeSendMessageHeaderV2 walks a..m in order: the first missing required field or
    bad number is the one reported (docs/reference.md §1.4)."""
    ext = {"a": "PG", "b": "T", "c": "TBW102", "d": "4", "e": "x", "f": "0", "g": "soon"}
    with pytest.raises(RemotingCommandException, match="<e> is not a number"):
        decode_send_message_header_v2(ext)
    del ext["e"]
    with pytest.raises(RemotingCommandException, match="<e> is null"):
        decode_send_message_header_v2(ext)


def _reference_v2(ext):
    """The table-driven decode: SEND_MESSAGE_V2_FIELDS in order, a..h required."""
    if ext is None:
        raise RemotingCommandException("the ext fields is null")
    parsers = {name: parse for name, _, parse in SendMessageRequestHeader._SPEC}
    kw = {}
    for short, name in SEND_MESSAGE_V2_FIELDS:
        v = ext.get(short)
        if v is None:
            if short in "abcdefgh":
                raise RemotingCommandException(f"the custom field <{short}> is null")
            continue
        kw[name] = parsers[name](v, short)
    return SendMessageRequestHeader(**kw)


_FULL = {
    "a": "PG", "b": "T", "c": "TBW102", "d": "4", "e": "-1", "f": "0", "g": "1650000000000",
    "h": "0", "i": "TAGS\x01A", "j": "3", "k": "1", "l": "16", "m": "TRUE",
}  # fmt: skip


def _variants():
    yield None
    yield dict(_FULL)
    for key in _FULL:
        yield {k: v for k, v in _FULL.items() if k != key}  # one field missing
        yield {**_FULL, key: "x"}  # one field not a number (or any text)
        yield {**_FULL, key: None}  # a JSON null
    yield {**_FULL, "d": "x", "g": "y"}  # two bad numbers: d is reported
    yield {**_FULL, "e": "2147483648"}
    yield {**_FULL, "j": "x", "l": "y"}
    yield {**_FULL, "unknown": "1", "k": "false", "m": "0"}


@pytest.mark.parametrize("ext", list(_variants()))
def test_v2_decode_matches_the_table_driven_decode(ext):
    """decodeSendMessageHeaderV2 written field by field gives the table-driven decode's
    header or its error, for missing, null, bad and out-of-range fields (docs/reference.md §1.4)."""
    assert _outcome(decode_send_message_header_v2, ext) == _outcome(_reference_v2, ext)


def _header_classes():
    import mqlab.remoting.headers as h

    return sorted(
        (c for c in vars(h).values()
         if isinstance(c, type) and issubclass(c, h.CommandCustomHeader) and c._SPEC),
        key=lambda c: c.__name__,
    )  # fmt: skip


def _sample(parse, i):
    """A value of the field's Java type (``i`` varies it), as a header holds it."""
    from mqlab.remoting import headers as h

    return {h._parse_str: f"s{i}", h._parse_integer: -i, h._parse_long: 2**40 + i,
            h._parse_bool: i % 2 == 0, h._parse_double: i + 0.5}[parse]  # fmt: skip


@pytest.mark.parametrize("cls", _header_classes(), ids=lambda c: c.__name__)
def test_unrolled_header_codec_matches_the_spec_loops(cls):
    """Each header class's own to_ext_fields / from_ext_fields (written out per class) give
    what CommandCustomHeader's loops over _SPEC give: same extFields, same header, same error
    text, for an empty header, a full one, wire strings, non-strings, bad numbers, unknown
    keys and None."""
    from mqlab.remoting.headers import CommandCustomHeader

    loop_to = CommandCustomHeader.to_ext_fields
    loop_from = CommandCustomHeader.from_ext_fields.__func__
    assert cls.to_ext_fields is not loop_to
    full = cls(**{name: _sample(parse, i) for i, (name, _, parse) in enumerate(cls._SPEC)})
    for header in (cls(), full):
        assert header.to_ext_fields() == loop_to(header)
        assert list(header.to_ext_fields()) == list(loop_to(header))  # same key order
    wire = loop_to(full)
    cases = [None, {}, wire, {**wire, "AccessKey": "ak", "Signature": "sig"}]
    cases += [{java: v} for v in ("12", 7, True, "true", "1", "x", "", "9" * 20, None, 1.5)
              for _, java, _ in cls._SPEC[:4]]  # fmt: skip
    for ext in cases:
        assert _outcome(cls.from_ext_fields, ext) == _outcome(loop_from, cls, ext), ext
