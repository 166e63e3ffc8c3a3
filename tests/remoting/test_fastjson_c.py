"""orjson's shortcuts (``fastjson.loads_c`` / ``dumps_c``) read and write what fastjson.py does.

docs/reference.md §1.7: fastjson's escapes, its lenient reader and unquoted integer keys. The
reference for reading is ``fastjson.loads`` of the UTF-8 text, for writing ``fastjson.dumps``;
a shortcut either gives exactly their value (types included: ``1`` is not ``1.0``) or steps
aside (None).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlab.remoting import fastjson
from mqlab.remoting.command import RemotingCommand


def _typed(v):
    """A value with its types spelled out, so that 1, 1.0 and True differ, and NaN equals NaN."""
    if isinstance(v, dict):
        return ("dict", [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_typed(x) for x in v])
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else repr(v))
    return (type(v).__name__, v)


def _reference(data: bytes):
    try:
        return ("ok", _typed(fastjson.loads(data.decode("utf-8"))))
    except (ValueError, UnicodeDecodeError) as e:
        return ("error", type(e).__name__)


def _check_read(data: bytes) -> bool:
    """loads_c gives the reference's value or steps aside; True if it answered."""
    fast = fastjson.loads_c(data)
    if fast is None:
        return False
    assert ("ok", _typed(fast)) == _reference(data)
    return True


#: A SEND_MESSAGE_V2 header as the Java client 4.9.3 writes it (bench real): its UNIQ_KEY
#: holds a run of 30 zeros inside a string.
_JAVA_SEND_V2 = (
    b'{"code":310,"extFields":{"a":"bench_pg","b":"BenchT4","c":"TBW102","d":"4","e":"1",'
    b'"f":"0","g":"1796052217714","h":"0","i":"UNIQ_KEY\\u0001FD0000000000000000000000000000'
    b'026AAF4E0E2F2A98A607720000\\u0002WAIT\\u0001true\\u0002TAGS\\u0001W","j":"0",'
    b'"k":"false","m":"false"},"flag":0,"language":"JAVA","opaque":8,'
    b'"serializeTypeCurrentRPC":"JSON","version":399}'
)

READ_CASES = [
    b'{"code":310,"extFields":{"a":"PG","b":"T"},"flag":0,"language":"JAVA","opaque":7}',
    b'{"a":1,"a":2,"b":3}', b'{"a":1,"b":2,"\\u0061":3}', b'{"a":-0}', b'{"a":-0.0}',
    b'{"a":1E2}', b'{"a":0.1}',
    b'{"a":4.9e-324}', b'{"a":2.4703282292062328e-324}', b'{"a":1.7976931348623157e308}',
    b'{"a":9223372036854775807}', b'{"a":-9223372036854775808}',
    b'{"a":18446744073709551615}', b'{"a":18446744073709551616}',
    b'{"a":123456789012345678901234567890}', b'{"a":-9223372036854775809}',
    b'{"a":1e400}', b'{"a":NaN}', b'{"a":-Infinity}', b'{"a":"x\x01y"}', b'{"a":"\\ud800"}',
    b'{"a":"\\u0000"}', b'{"a":1} ', b'{"a":1}\n', b' {"a":1}', b'{"a":1} x', b"\xef\xbb\xbf{}",
    b'{"a":"\xff"}', b"{0:1}", b'{"brokerAddrs":{0:"127.0.0.1:10911"}}', b"{'a':1}",
    b'{"a":[1,2,]}', b"null", b"[]", b'"s"', b"{" * 300 + b"}" * 300, b"[" * 257 + b"]" * 257,
    '{"k":"中文 é \u2028"}'.encode(), b'{"a":{"b":[true,false,null,{"c":""}]}}',
    _JAVA_SEND_V2, b'{"a":"x:12345678901234567890"}', b'{"a":[12345678901234567890123]}',
    b'{"a":1.12345678901234567890123}', b'{"a":1e12345678901234567890}',
    b'{"a": 12345678901234567890123}', b'{"a":-12345678901234567890123}',
    b'12345678901234567890123', b'{"a":"D12345678901234567890123","b":7}',
]  # fmt: skip


@pytest.mark.parametrize("data", READ_CASES, ids=repr)
def test_loads_c_reads_the_reference_value_or_steps_aside(data):
    """Big integers (orjson would give floats), NaN, raw control characters, lone
    surrogates, bad UTF-8, unquoted integer keys and fastjson's lenient dialect are left to
    ``fastjson.loads``; everything orjson reads equals its value, types included."""
    _check_read(data)


def test_loads_c_answers_the_usual_header_and_leaves_the_rest():
    """The shortcut does the work for what the wire carries, and steps aside where orjson
    would read differently (docs/reference.md §1.7)."""
    assert _check_read(READ_CASES[0])
    assert _check_read(b'{"a":922337203685477580,"b":-1.5e300}')  # 18 digits: an int64
    for data in (b'{"a":18446744073709551616}', b'{"a":NaN}', b'{"a":"x\x01y"}', b"{0:1}",
                 b"[" * 257 + b"]" * 257):  # fmt: skip
        assert fastjson.loads_c(data) is None, data


def test_loads_c_reads_a_long_digit_run_inside_a_string():
    """A run of 19+ digits is left to ``loads`` only where it can be a number: not the
    Java client's UNIQ_KEY (every SEND_MESSAGE_V2 header), nor a run after a letter."""
    assert _check_read(_JAVA_SEND_V2)
    assert _check_read(b'{"a":"D12345678901234567890123","b":7}')
    for data in (b'{"a":[12345678901234567890123]}', b'{"a": 12345678901234567890123}',
                 b'{"a":-12345678901234567890123}', b"12345678901234567890123",
                 b'{"a":"x:12345678901234567890"}'):  # fmt: skip
        assert fastjson.loads_c(data) is None, data


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8") | st.sampled_from("\x00\x01\x0b\x1f\x7f\x80\x9f\u2028"),
    max_size=8,
)
_ATOM = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), _TEXT,
    st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip


def _json_values():
    return st.recursive(
        _ATOM,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)
        ),
        max_leaves=12,
    )


@settings(max_examples=400, deadline=None)
@given(_json_values(), st.booleans())
def test_loads_c_reads_generated_json_as_the_reference(value, ascii_only):
    """Any JSON ``json`` writes (escaped or raw UTF-8; floats at any magnitude; integers
    past 64 bits) reads through the shortcut as through ``fastjson.loads``."""
    _check_read(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))


_HEADER_VALUES = st.one_of(_TEXT, st.integers(-(2**70), 2**70), st.booleans(), st.none())


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_TEXT, st.one_of(_HEADER_VALUES, st.dictionaries(_TEXT, _TEXT))))
def test_dumps_c_writes_what_fastjson_writes_or_steps_aside(d):
    """A header-shaped dict (str keys; str, int, bool, None values; a nested str map) is
    written byte for byte as ``fastjson.dumps`` writes it, or left to the caller."""
    fast = fastjson.dumps_c(d)
    if fast is None:
        return
    assert fast == fastjson.dumps(d).encode("utf-8")


@pytest.mark.parametrize(
    "value", ["\x0b", "\x1a", "\x7f", "\x80", "\x9f", "\u2028", "\u2029", "\ud800", 2**64]
)
def test_dumps_c_steps_aside_where_fastjson_differs(value):
    """fastjson's upper-case escapes, its escaped U+007F..U+009F and line separators, a lone
    surrogate and an integer past 64 bits: the caller's own writer takes these."""
    assert fastjson.dumps_c({"k": value}) is None


def test_header_bytes_are_the_same_with_and_without_the_shortcut(monkeypatch):
    """A frame encodes and decodes to the same bytes and fields either way."""
    cmd = RemotingCommand(
        310, ext_fields={"a": "PG", "b": "中文", "i": "KEYS\x01k\x02"}, opaque=2**31 - 1,
        remark="é",
    )  # fmt: skip
    fast = cmd.encode()
    monkeypatch.setattr(fastjson, "dumps_c", lambda d: None)
    monkeypatch.setattr(fastjson, "loads_c", lambda data: None)
    assert cmd.encode() == fast
    slow = RemotingCommand.decode(fast)
    monkeypatch.undo()
    quick = RemotingCommand.decode(fast)
    fields = ("code", "opaque", "flag", "remark", "ext_fields", "version", "language")
    assert [getattr(quick, f) for f in fields] == [getattr(slow, f) for f in fields]


def test_without_orjson_the_shortcuts_step_aside(monkeypatch):
    """A Python without orjson (a Spark executor: mqlab ships as sources) reads and writes
    through fastjson.py's own paths, to the same values and bytes."""
    cmd = RemotingCommand(11, ext_fields={"k": "v"}, opaque=9)
    frame = cmd.encode()
    monkeypatch.setattr(fastjson, "orjson", None)
    assert fastjson.loads_c(b'{"a":1}') is None
    assert fastjson.dumps_c({"a": 1}) is None
    assert cmd.encode() == frame
    assert RemotingCommand.decode(frame).ext_fields == {"k": "v"}
    assert fastjson.loads_json_body(b'{"a":[1,2]}') == {"a": [1, 2]}
