"""fastjson.loads's shortcuts read exactly what the plain definition reads.

docs/reference.md §1.7 (fastjson writes ``Map<Long,…>`` keys unquoted, e.g. a route's
``"brokerAddrs":{0:"127.0.0.1:10911"}``) and §11 (RemotingSerializableTest). The plain
definition: ``json.loads(text, strict=False)``, and the tolerant parser for what it refuses.
"""

from __future__ import annotations

import enum
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlab.remoting import fastjson

ROUTE = (
    '{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},'
    '"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},'
    '"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,'
    '"writeQueueNums":8}]}'
)


def _reference(text: str):
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    try:
        return fastjson._Parser(text).parse()
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _outcome(fn, text: str):
    try:
        value = fn(text)
    except Exception as e:  # noqa: BLE001 — the kind of failure is compared
        return ("error", type(e).__name__)
    return ("ok", repr(value), _key_types(value))


def _key_types(v):
    if isinstance(v, dict):
        return [(type(k).__name__, _key_types(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [_key_types(x) for x in v]
    return None


CASES = [
    ROUTE, '{"\\u00005":1, 0:2}', '{0:1,"0":2,0:3}', '{ 1 : {2:[{3:4}]}, "a,5:b":"c,6:d"}',
    "{-0:1}", "{007:1}", "{1:NaN}", '{"a":NaN}', "{1:1e400}", "{1:01}", '{"x\\"y,3:":{4:5}}',
    "{1:2}x", "\ufeff{1:2}", "{1:2}\f", "{1L:2}", "{+1:2}", "{1.5:2}", "[{1:2},{3:[4,{5:6}]}]",
    '{"a":"\\\n,1:"}', '{1:"\x01"}', "{1:2,}", "{1:'a'}", "{a:1, 2:3}", '{"a\\u0000":1,2:3}',
    "{1:true,2:false,3:null}", "{1:-Infinity}", "{12345678901234567890:1}", "[1,2:3]",
    '{"s":"a,1:b",2:3}', '{1:{"x":"{2:3}"}}', "{1:2}\x00", '{"\x00":1,2:3}', "{1\f:2}",
    "{\n1\t:\r2}", "{1:[1,2,]}", "{1:.5}", '{"k":1}', "", "{", "{1:" * 300 + "1" + "}" * 300,
]  # fmt: skip


@pytest.mark.parametrize("text", CASES, ids=repr)
def test_loads_matches_the_plain_definition(text):
    """Integer map keys come back as ints, strings stay strings, and anything the C parser
    would not take unchanged (NaN, Java suffixes, single quotes, trailing commas, a NUL
    marker, deep nesting) reads and fails exactly as before (docs/reference.md §1.7)."""
    assert _outcome(fastjson.loads, text) == _outcome(_reference, text)


def test_route_body_integer_keys():
    """A route's brokerAddrs keeps Long keys as ints (docs/reference.md §1.7)."""
    route = fastjson.loads(ROUTE)
    assert route["brokerDatas"][0]["brokerAddrs"] == {0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}


_KEYS = st.sampled_from(["0", "12", "-3", '"k"', '"0"', " 7 ", '"x,1:"', "id", "1L", "\n5\t"])
_ATOMS = st.sampled_from(
    ["1", "-0", '"s"', '"a,1:b"', "true", "null", "2.5", '"\\"q,2:"', "NaN", "01", "'sq'"]
)


def _json_texts():
    return st.recursive(
        _ATOMS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
            st.lists(st.tuples(_KEYS, inner), max_size=3).map(
                lambda kvs: "{" + ",".join(f"{k}:{v}" for k, v in kvs) + "}"
            ),
        ),
        max_leaves=12,
    )


@settings(max_examples=300, deadline=None)
@given(_json_texts())
def test_loads_matches_the_plain_definition_on_generated_text(text):
    """Generated fastjson-ish text (integer, quoted and identifier keys; strings holding
    ",1:"; lenient values) reads the same through the shortcut and the plain definition."""
    assert _outcome(fastjson.loads, text) == _outcome(_reference, text)


class _Color(enum.Enum):
    RED = 1


class _Level(enum.IntEnum):
    LOW = 3


class _Bean:
    def __init__(self, d):
        self.d = d

    def to_json_dict(self):
        return self.d


class _Text(str):
    pass


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=6),
    st.sampled_from(["a,1:b", '"q"', "\\", "\x01\u2028", "é", "\x7f"]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([_Color.RED, _Level.LOW]),
    st.binary(max_size=4), st.sampled_from([_Text("sub"), True, 0]),
)  # fmt: skip
_MAP_KEYS = st.one_of(
    st.text(max_size=4), st.integers(-5, 5), st.sampled_from([None, True, 1.5, _Color.RED]),
    st.sampled_from([fastjson.FrozenKey((("brokerName", "b"), ("queueId", 0)))]),
)  # fmt: skip


def _values():
    return st.recursive(
        _VALUES,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(_MAP_KEYS, inner, max_size=3),
            st.dictionaries(st.text(max_size=3), inner, max_size=3).map(_Bean),
            st.frozensets(st.integers(0, 9), max_size=3),
            st.sets(st.text(max_size=2), max_size=3),
        ),
        max_leaves=12,
    )


def _plain_dumps(obj) -> str:
    out: list[str] = []
    fastjson._write(obj, out.append, None)
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(_values())
def test_compact_dumps_writes_what_the_plain_writer_writes(value):
    """``dumps``'s compact shortcut (exact built-in types dispatched by type) writes the
    same text as the plain writer, for subclasses, enums, sets, floats, bytes, beans and
    keys that are not strings too; and fails the same way on what neither can write."""
    assert _outcome(fastjson.dumps, value) == _outcome(_plain_dumps, value)


def test_compact_dumps_refuses_what_the_plain_writer_refuses():
    for bad in (object(), {"k": object()}, [1, {2: [object()]}], {object(): 1}):
        with pytest.raises(TypeError):
            fastjson.dumps(bad)
        with pytest.raises(TypeError):
            _plain_dumps(bad)
