"""fastjson-compatible JSON (RemotingSerializableTest; docs/reference.md §1.7, §2.5, §11)."""

from __future__ import annotations

import json
import math
from enum import Enum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqlab.common.message import MessageQueue
from mqlab.remoting.fastjson import FrozenKey, dumps, java_double_to_string, loads, loads_json_body

VOWELS = {"stringList": ["a", "o", "e", "i", "u", "v"]}


def test_to_json_normal_string() -> None:
    """Compact form is {"stringList":["a","o","e","i","u","v"]} (RemotingSerializableTest)."""
    assert dumps(VOWELS) == '{"stringList":["a","o","e","i","u","v"]}'


def test_to_json_pretty_string() -> None:
    """PrettyFormat indents with tabs, no space after ':' (RemotingSerializableTest)."""
    assert dumps(VOWELS, pretty=True) == (
        '{\n\t"stringList":[\n\t\t"a",\n\t\t"o",\n\t\t"e",\n\t\t"i",\n\t\t"u",\n\t\t"v"\n\t]\n}'
    )


def test_pretty_nested_and_empty() -> None:
    """Nested maps indent one tab per level; empty map and list are {} and [] (fastjson PrettyFormat)."""
    obj = {"dataVersion": {"counter": 1, "timestamp": 2}, "topicConfigTable": {}, "l": []}
    assert dumps(obj, pretty=True) == (
        '{\n\t"dataVersion":{\n\t\t"counter":1,\n\t\t"timestamp":2\n\t},\n'
        '\t"topicConfigTable":{},\n\t"l":[]\n}'
    )


# -- fastjson's non-standard map keys (docs/reference.md §1.7) -----------------------------------------------


def test_dumps_long_keys_unquoted() -> None:
    """HashMap<Long,String> is written {0:"10.0.0.1:10911"}; Map<Integer,Long> {0:12,1:13} (docs/reference.md §1.7)."""
    assert dumps({0: "10.0.0.1:10911"}) == '{0:"10.0.0.1:10911"}'
    assert dumps({0: 12, 1: 13}) == "{0:12,1:13}"


def test_loads_unquoted_numeric_keys() -> None:
    """{0:"a",1:"b"} parses with int keys (docs/reference.md §1.7)."""
    assert loads('{0:"a",1:"b"}') == {0: "a", 1: "b"}


def test_dumps_message_queue_keys_as_objects() -> None:
    """A map keyed by MessageQueue writes each key as an object (docs/reference.md §1.7)."""
    text = '{{"brokerName":"b","queueId":0,"topic":"T"}:12}'
    assert dumps({MessageQueue("T", "b", 0): 12}) == text
    key = FrozenKey.from_dict({"topic": "T", "brokerName": "b", "queueId": 0})
    assert dumps({key: 12}) == text


def test_loads_object_keys_become_frozen_keys() -> None:
    """Object keys parse as FrozenKey, equal whatever the field order; to_dict() thaws them (docs/reference.md §1.7)."""
    a = loads(
        '{{"brokerName":"b","queueId":0,"topic":"T"}:12,{"topic":"T","queueId":1,"brokerName":"b"}:13}'
    )
    k0 = FrozenKey.from_dict({"brokerName": "b", "queueId": 0, "topic": "T"})
    k1 = FrozenKey.from_dict({"brokerName": "b", "queueId": 1, "topic": "T"})
    assert a == {k0: 12, k1: 13}
    assert k0 == (("brokerName", "b"), ("queueId", 0), ("topic", "T"))
    assert MessageQueue.from_json_dict(k1.to_dict()) == MessageQueue("T", "b", 1)


def test_frozen_key_nested_values() -> None:
    """Nested objects in a key freeze to FrozenKey, arrays to tuples, and thaw back."""
    d = {"a": {"x": [1, 2]}, "b": [{"y": 1}]}
    k = FrozenKey.from_dict(d)
    assert hash(k) == hash(FrozenKey.from_dict(d))
    assert k.to_dict() == d


def test_loads_route_data_with_unquoted_broker_ids() -> None:
    """TopicRouteData from a Java name server parses; brokerAddrs keys are ints (docs/reference.md §2.5)."""
    text = (
        '{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},'
        '"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},'
        '"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,'
        '"writeQueueNums":4}]}'
    )
    d = loads(text)
    assert d["brokerDatas"][0]["brokerAddrs"] == {0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}
    assert dumps(d) == text


def test_loads_lenient_forms() -> None:
    """Unquoted identifier keys, single quotes, trailing commas, 12L suffixes all parse (fastjson leniency)."""
    assert loads("{topic:'T\\'1',queueId:3L,}") == {"topic": "T'1", "queueId": 3}
    assert loads("['a',\"b\",]") == ["a", "b"]
    assert loads("{'x':{'y':[true,false,null]}}") == {"x": {"y": [True, False, None]}}
    assert loads("{a:-1.5e2}") == {"a": -150.0}
    assert loads("{'u':'\\u00e9\\x41'}") == {"u": "\u00e9A"}


def test_loads_raw_control_characters() -> None:
    """Raw U+0001/U+0002 inside a string are accepted, as fastjson accepts them (docs/reference.md §1.2)."""
    assert loads('{"i":"TAGS\x01a\x02"}') == {"i": "TAGS\x01a\x02"}


def test_loads_standard_json_fast_path() -> None:
    """Standard JSON parses exactly as json.loads does."""
    text = '{"a":[1,2.5,"x",{"b":null}],"c":true}'
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "{",
        "[1,2",
        '{"a":}',
        "tru",
        '{"a":1} x',
        "{'a'",
        "{a b}",
        "{,}",
        "@",
        "'abc",
        "'\\q'",
        "{1x:2}",
    ],
)
def test_loads_garbage_raises_value_error(text: str) -> None:
    """Text that is not JSON even by fastjson's rules raises ValueError."""
    with pytest.raises(ValueError):
        loads(text)


def test_loads_deep_nesting_raises_value_error() -> None:
    """Absurd nesting is a ValueError, not a RecursionError."""
    with pytest.raises(ValueError):
        loads("{a:" * 100_000)


def test_loads_json_body_cpp_trailing_newline() -> None:
    """A C++ client body ends in \\n and still parses (cpp doc §3)."""
    body = b'{"clientID":"16803-127.0.0.1@DEFAULT","producerDataSet":[{"groupName":"PID-probe"}]}\n'
    assert loads_json_body(body) == {
        "clientID": "16803-127.0.0.1@DEFAULT",
        "producerDataSet": [{"groupName": "PID-probe"}],
    }


@pytest.mark.parametrize("body", [None, b"", b"\xff\xfe", b"{x"])
def test_loads_json_body_bad(body: bytes | None) -> None:
    """An empty, non-UTF-8 or non-JSON body raises ValueError."""
    with pytest.raises(ValueError):
        loads_json_body(body)


# -- writing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("\x01", '"\\u0001"'),
        ("\x0b", '"\\u000B"'),
        ("\x1f", '"\\u001F"'),
        ("\x7f", '"\\u007F"'),
        ("\x9f", '"\\u009F"'),
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ('"\\', '"\\"\\\\"'),
        ("/", '"/"'),
        ("中文\u00e9\u00a0", '"中文\u00e9\u00a0"'),
        ("a\u2028b\u2029", '"a\\u2028b\\u2029"'),  # SerializeWriter escapes both separators
    ],
)
def test_dumps_string_escapes(s: str, expected: str) -> None:
    """Control chars and U+007F..U+009F as \\u00XX upper-case, U+2028/U+2029 as \\u2028/\\u2029,
    short escapes for \\b\\t\\n\\f\\r, other text as is (fastjson 1.2.76 SerializeWriter)."""
    assert dumps(s) == expected
    assert loads(dumps(s)) == s


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0.618, "0.618"),
        (1.0, "1.0"),
        (-2.5, "-2.5"),
        (0.001, "0.001"),
        (9999999.0, "9999999.0"),
        (12345678.0, "1.2345678E7"),
        (1e20, "1.0E20"),
        (1.5e-5, "1.5E-5"),
        (-1e-4, "-1.0E-4"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
    ],
)
def test_java_double_to_string(x: float, expected: str) -> None:
    """Double.toString: plain for 1e-3 <= |x| < 1e7, else d.dddE±n (docs/reference.md §1.4, 0.618 → "0.618")."""
    assert java_double_to_string(x) == expected


def test_dumps_scalars_and_containers() -> None:
    """null/true/false, ints, doubles (NaN → null), sets sorted, enums by name, bytes base64."""

    class Model(Enum):
        CLUSTERING = 1

    obj = {"n": None, "t": True, "f": False, "i": -3, "d": 0.5, "nan": math.nan}
    assert dumps(obj) == '{"n":null,"t":true,"f":false,"i":-3,"d":0.5,"nan":null}'
    assert dumps({"s": {"b", "a"}, "e": Model.CLUSTERING, "b": b"\x00\x01"}) == (
        '{"s":["a","b"],"e":"CLUSTERING","b":"AAE="}'
    )
    assert dumps({True: 1, None: 2}) == "{true:1,null:2}"


def test_dumps_rejects_unknown_types() -> None:
    """An object fastjson could not write raises TypeError naming the type."""
    with pytest.raises(TypeError, match="object"):
        dumps({"x": object()})
    with pytest.raises(TypeError, match="map key"):
        dumps({(1, 2): 3})


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(-5, 5), children, max_size=4)
    ),
    max_leaves=12,
)


@given(_json_values)
def test_round_trip(value: object) -> None:
    """loads(dumps(x)) == x for JSON values with str or int map keys, compact and pretty."""
    assert loads(dumps(value)) == value
    assert loads(dumps(value, pretty=True)) == value
