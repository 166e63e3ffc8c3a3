"""Typed custom headers ↔ extFields (RemotingCommandTest, AbstractSendMessageProcessorTest; docs/reference.md §1.4, §2.2)."""

from __future__ import annotations

import struct
from dataclasses import FrozenInstanceError, dataclass

import pytest

from mqlab.remoting import RemotingCommand, RemotingCommandException, RequestCode
from mqlab.remoting.headers import (
    REQUEST_HEADER_BY_CODE,
    CommandCustomHeader,
    ConsumerSendMsgBackRequestHeader,
    CreateTopicRequestHeader,
    EndTransactionRequestHeader,
    GetConsumerListByGroupRequestHeader,
    GetMaxOffsetResponseHeader,
    GetRouteInfoRequestHeader,
    Integer,
    Long,
    PullMessageRequestHeader,
    PullMessageResponseHeader,
    QueryConsumerOffsetRequestHeader,
    RegisterBrokerRequestHeader,
    SendMessageRequestHeader,
    SendMessageResponseHeader,
    UnregisterClientRequestHeader,
    UpdateConsumerOffsetRequestHeader,
    UpdateConsumerOffsetResponseHeader,
    decode_send_message_header_v2,
    send_message_header_v2_to_ext_fields,
    wire_header,
)


@wire_header
@dataclass(frozen=True, slots=True, kw_only=True)
class ExtFieldsHeader(CommandCustomHeader):
    """RemotingCommandTest's ExtFieldsHeader: one field of each supported Java type."""

    string_value: str | None = "bilibili"
    int_value: Integer | None = 2333
    long_value: Long | None = 23333333
    boolean_value: bool = True
    double_value: float | None = 0.618


def test_ext_fields_header_vector() -> None:
    """("bilibili", 2333, 23333333, true, 0.618) ↔ their String.valueOf forms (docs/reference.md §1.4)."""
    ext = {
        "stringValue": "bilibili",
        "intValue": "2333",
        "longValue": "23333333",
        "booleanValue": "true",
        "doubleValue": "0.618",
    }
    assert ExtFieldsHeader().to_ext_fields() == ext
    back = ExtFieldsHeader.from_ext_fields({**ext, "key": "value"})
    assert back == ExtFieldsHeader()
    assert (
        back.string_value,
        back.int_value,
        back.long_value,
        back.boolean_value,
        back.double_value,
    ) == (
        "bilibili",
        2333,
        23333333,
        True,
        0.618,
    )


def test_ext_fields_header_through_a_frame() -> None:
    """Header → extFields → JSON frame → decode → header keeps every value (RemotingCommandTest)."""
    cmd = RemotingCommand.create_request(103, ExtFieldsHeader().to_ext_fields())
    cmd.ext_fields["key"] = "value"  # type: ignore[index]
    back = RemotingCommand.decode(cmd.encode())
    assert back.ext("intValue") == "2333" and back.ext("key") == "value"
    assert ExtFieldsHeader.from_ext_fields(back.ext_fields) == ExtFieldsHeader()


# One golden table drives both to_ext_fields and from_ext_fields (docs/design.md §6.13).
GOLDEN_HEADERS: list[tuple[str, CommandCustomHeader, dict[str, str]]] = [
    (
        "pull_request_push_consumer",  # docs/reference.md §2.2 push consumer; PullMessageProcessorTest values
        PullMessageRequestHeader(
            consumer_group="FooBarGroup",
            topic="FooBar",
            queue_id=1,
            queue_offset=456,
            max_msg_nums=32,
            sys_flag=3,
            commit_offset=123,
            suspend_timeout_millis=15000,
            sub_version=100,
            expression_type="TAG",
        ),
        {
            "consumerGroup": "FooBarGroup",
            "topic": "FooBar",
            "queueId": "1",
            "queueOffset": "456",
            "maxMsgNums": "32",
            "sysFlag": "3",
            "commitOffset": "123",
            "suspendTimeoutMillis": "15000",
            "subVersion": "100",
            "expressionType": "TAG",
        },
    ),
    (
        "pull_response_found",  # PullMessageProcessorTest: min 100, max 1024, next 516
        PullMessageResponseHeader(
            suggest_which_broker_id=0, next_begin_offset=516, min_offset=100, max_offset=1024
        ),
        {
            "suggestWhichBrokerId": "0",
            "nextBeginOffset": "516",
            "minOffset": "100",
            "maxOffset": "1024",
        },
    ),
    (
        "send_response",  # MQClientAPIImplTest: msgId "123", queueOffset 123, queueId 1
        SendMessageResponseHeader(msg_id="123", queue_id=1, queue_offset=123),
        {"msgId": "123", "queueId": "1", "queueOffset": "123"},
    ),
    (
        "send_request_v1",  # SendMessageProcessorTest: FooBar, queueId 1, flag 124; primitives written
        SendMessageRequestHeader(
            producer_group="FooBarGroup",
            topic="FooBar",
            default_topic="TBW102",
            default_topic_queue_nums=3,
            queue_id=1,
            sys_flag=0,
            born_timestamp=1650000000000,
            flag=124,
            properties="WAIT\x01true\x02",
            reconsume_times=0,
        ),
        {
            "producerGroup": "FooBarGroup",
            "topic": "FooBar",
            "defaultTopic": "TBW102",
            "defaultTopicQueueNums": "3",
            "queueId": "1",
            "sysFlag": "0",
            "bornTimestamp": "1650000000000",
            "flag": "124",
            "properties": "WAIT\x01true\x02",
            "reconsumeTimes": "0",
            "unitMode": "false",
            "batch": "false",
        },
    ),
    (
        "update_consumer_offset",  # docs/reference.md §1.2 captured oneway request
        UpdateConsumerOffsetRequestHeader(
            consumer_group="g", topic="%RETRY%g", queue_id=0, commit_offset=18
        ),
        {"consumerGroup": "g", "topic": "%RETRY%g", "queueId": "0", "commitOffset": "18"},
    ),
    (
        "query_consumer_offset",
        QueryConsumerOffsetRequestHeader(consumer_group="g", topic="T", queue_id=2),
        {"consumerGroup": "g", "topic": "T", "queueId": "2"},
    ),
    (
        "send_msg_back",  # SendMessageProcessorTest: offset 123, delayLevel 4, maxReconsumeTimes 3
        ConsumerSendMsgBackRequestHeader(
            offset=123, group="g", delay_level=4, origin_topic="T", max_reconsume_times=3
        ),
        {
            "offset": "123",
            "group": "g",
            "delayLevel": "4",
            "originTopic": "T",
            "unitMode": "false",
            "maxReconsumeTimes": "3",
        },
    ),
    (
        "unregister_client",  # clientID keeps Java's capital ID (docs/reference.md §2.2)
        UnregisterClientRequestHeader(client_id="10.0.0.5@1234", producer_group="p"),
        {"clientID": "10.0.0.5@1234", "producerGroup": "p"},
    ),
    (
        "register_broker",  # compressed and bodyCrc32 are always written
        RegisterBrokerRequestHeader(
            broker_name="broker-a",
            broker_addr="10.0.0.1:10911",
            cluster_name="DefaultCluster",
            ha_server_addr="10.0.0.1:10912",
            broker_id=0,
        ),
        {
            "brokerName": "broker-a",
            "brokerAddr": "10.0.0.1:10911",
            "clusterName": "DefaultCluster",
            "haServerAddr": "10.0.0.1:10912",
            "brokerId": "0",
            "compressed": "false",
            "bodyCrc32": "0",
        },
    ),
    (
        "create_topic",
        CreateTopicRequestHeader(
            topic="T",
            default_topic="TBW102",
            read_queue_nums=8,
            write_queue_nums=8,
            perm=6,
            topic_filter_type="SINGLE_TAG",
            topic_sys_flag=0,
        ),
        {
            "topic": "T",
            "defaultTopic": "TBW102",
            "readQueueNums": "8",
            "writeQueueNums": "8",
            "perm": "6",
            "topicFilterType": "SINGLE_TAG",
            "topicSysFlag": "0",
            "order": "false",
        },
    ),
    (
        "end_transaction",  # commitOrRollback 8 = commit (docs/reference.md §2.2)
        EndTransactionRequestHeader(
            producer_group="p",
            tran_state_table_offset=7,
            commit_log_offset=4096,
            commit_or_rollback=8,
            msg_id="M",
        ),
        {
            "producerGroup": "p",
            "tranStateTableOffset": "7",
            "commitLogOffset": "4096",
            "commitOrRollback": "8",
            "fromTransactionCheck": "false",
            "msgId": "M",
        },
    ),
    ("get_route_info", GetRouteInfoRequestHeader(topic="TopicTest"), {"topic": "TopicTest"}),
    ("get_max_offset_response", GetMaxOffsetResponseHeader(offset=-1), {"offset": "-1"}),
    ("update_offset_response_empty", UpdateConsumerOffsetResponseHeader(), {}),
]


@pytest.mark.parametrize(
    ("header", "ext"), [c[1:] for c in GOLDEN_HEADERS], ids=[c[0] for c in GOLDEN_HEADERS]
)
def test_to_ext_fields_golden(header: CommandCustomHeader, ext: dict[str, str]) -> None:
    """to_ext_fields writes camelCase names and String.valueOf values, None left out (docs/reference.md §1.4)."""
    assert header.to_ext_fields() == ext


@pytest.mark.parametrize(
    ("header", "ext"), [c[1:] for c in GOLDEN_HEADERS], ids=[c[0] for c in GOLDEN_HEADERS]
)
def test_from_ext_fields_golden(header: CommandCustomHeader, ext: dict[str, str]) -> None:
    """from_ext_fields parses the same extFields back into the same header (docs/reference.md §1.4)."""
    assert type(header).from_ext_fields(ext) == header


def test_missing_not_null_fields_stay_none() -> None:
    """A missing @CFNotNull field is left None, as 4.9.3 only logs it (docs/reference.md §1.4)."""
    h = PullMessageRequestHeader.from_ext_fields({"topic": "T"})
    assert h.topic == "T" and h.queue_id is None and h.consumer_group is None


def test_null_ext_fields_give_default_header() -> None:
    """extFields null → a default-constructed header (docs/reference.md §1.4)."""
    assert SendMessageRequestHeader.from_ext_fields(None) == SendMessageRequestHeader()
    assert RegisterBrokerRequestHeader.from_ext_fields(None).body_crc32 == 0


def test_unknown_keys_ignored() -> None:
    """The C++ client's AccessKey/OnsChannel/Signature are ignored (cpp doc §1)."""
    ext = {"AccessKey": "", "OnsChannel": "ALIYUN", "Signature": "x=", "consumerGroup": "CID-probe"}
    assert GetConsumerListByGroupRequestHeader.from_ext_fields(ext).consumer_group == "CID-probe"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("TRUE", True),
        ("True", True),
        ("false", False),
        ("yes", False),
        ("", False),
        ("1", True),
        ("0", False),
    ],
)
def test_boolean_parse(text: str, value: bool) -> None:
    """Boolean.parseBoolean ("true" any case), plus the C++ client's "1" (docs/reference.md §1.4, cpp doc §4.3)."""
    assert SendMessageRequestHeader.from_ext_fields({"batch": text}).batch is value


@pytest.mark.parametrize(
    "text", ["abc", "1.5", " 5", "1_000", "0x10", "", "2147483648", "-2147483649"]
)
def test_bad_integer_raises(text: str) -> None:
    """A value Integer.parseInt rejects (not digits, out of int32) raises RemotingCommandException."""
    with pytest.raises(RemotingCommandException, match="queueId"):
        PullMessageRequestHeader.from_ext_fields({"queueId": text})


def test_integer_and_long_ranges() -> None:
    """Integer takes ±2^31 bounds and a leading '+'; Long takes int64 bounds (Integer/Long.parseXxx)."""
    h = PullMessageRequestHeader.from_ext_fields(
        {
            "queueId": "+2147483647",
            "maxMsgNums": "-2147483648",
            "queueOffset": "9223372036854775807",
        }
    )
    assert (h.queue_id, h.max_msg_nums, h.queue_offset) == (2**31 - 1, -(2**31), 2**63 - 1)
    with pytest.raises(RemotingCommandException):
        PullMessageRequestHeader.from_ext_fields({"queueOffset": "9223372036854775808"})


def test_headers_are_frozen() -> None:
    """Headers are frozen dataclasses (docs/design.md §6.5)."""
    h = GetRouteInfoRequestHeader(topic="T")
    with pytest.raises(FrozenInstanceError):
        h.topic = "U"  # type: ignore[misc]


def test_request_header_by_code() -> None:
    """The code → header table names RocketMQ's header class for each request (docs/reference.md §2.1)."""
    assert REQUEST_HEADER_BY_CODE[RequestCode.PULL_MESSAGE] is PullMessageRequestHeader
    assert REQUEST_HEADER_BY_CODE[10] is SendMessageRequestHeader
    assert RequestCode.SEND_MESSAGE_V2 not in REQUEST_HEADER_BY_CODE


# -- SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE (docs/reference.md §1.4, §2.2) ------------------------------------

CAPTURED_V2 = {
    "a": "yyzGroup2",
    "b": "yyztest2",
    "c": "TBW102",
    "d": "4",
    "e": "0",
    "f": "0",
    "g": "1491978653614",
    "h": "0",
    "i": "TAGS\x01TAG\x02WAIT\x01true\x02KEYS\x01ffff",
    "j": "0",
    "k": "false",
}
CAPTURED_V2_HEADER = SendMessageRequestHeader(
    producer_group="yyzGroup2",
    topic="yyztest2",
    default_topic="TBW102",
    default_topic_queue_nums=4,
    queue_id=0,
    sys_flag=0,
    born_timestamp=1491978653614,
    flag=0,
    properties="TAGS\x01TAG\x02WAIT\x01true\x02KEYS\x01ffff",
    reconsume_times=0,
    unit_mode=False,
)


def test_decode_v2_captured() -> None:
    """The captured SEND_MESSAGE_V2 extFields decode to the V1 header; absent l, m stay None/false (docs/reference.md §1.2)."""
    h = decode_send_message_header_v2(CAPTURED_V2)
    assert h == CAPTURED_V2_HEADER
    assert h.max_reconsume_times is None and h.batch is False


def test_decode_v2_from_frame() -> None:
    """A SEND_MESSAGE_V2 frame → decode → V2 header, the broker's path (docs/reference.md §1.2)."""
    cmd = RemotingCommand.create_request(RequestCode.SEND_MESSAGE_V2, dict(CAPTURED_V2), b"body")
    back = RemotingCommand.decode(cmd.encode())
    assert decode_send_message_header_v2(back.ext_fields) == CAPTURED_V2_HEADER


def test_v2_to_ext_fields() -> None:
    """V2 short names a..m; k and m (Java primitives) always written; batch → m "true" (docs/reference.md §2.2)."""
    ext = send_message_header_v2_to_ext_fields(CAPTURED_V2_HEADER)
    assert ext == {**CAPTURED_V2, "m": "false"}
    batch = SendMessageRequestHeader(
        **{**_fields(CAPTURED_V2_HEADER), "batch": True, "max_reconsume_times": 16}
    )
    ext = send_message_header_v2_to_ext_fields(batch)
    assert (ext["m"], ext["l"]) == ("true", "16")
    assert decode_send_message_header_v2(ext) == batch


@pytest.mark.parametrize("missing", list("abcdefgh"))
def test_decode_v2_missing_required_field(missing: str) -> None:
    """A missing a..h raises "the custom field <x> is null" (decodeSendMessageHeaderV2, docs/reference.md §1.4)."""
    ext = {k: v for k, v in CAPTURED_V2.items() if k != missing}
    with pytest.raises(RemotingCommandException, match=f"the custom field <{missing}> is null"):
        decode_send_message_header_v2(ext)


def test_decode_v2_null_ext_fields() -> None:
    """Null extFields raise "the ext fields is null" (decodeSendMessageHeaderV2)."""
    with pytest.raises(RemotingCommandException, match="the ext fields is null"):
        decode_send_message_header_v2(None)


def test_decode_v2_bad_number() -> None:
    """A V2 number that does not parse raises (Java: NumberFormatException → SYSTEM_ERROR)."""
    with pytest.raises(RemotingCommandException, match="<g>"):
        decode_send_message_header_v2({**CAPTURED_V2, "g": "soon"})


def test_decode_cpp_send_message_v1() -> None:
    """The C++ client's SEND_MESSAGE (10): numbers as JSON numbers, batch "1"/unitMode "0" (cpp doc §2.1, §4)."""
    header = (
        b'{"code":10,"extFields":{"AccessKey":"","OnsChannel":"ALIYUN","Signature":"s=",'
        b'"batch":"1","bornTimestamp":"1795254357706","defaultTopic":"TBW102",'
        b'"defaultTopicQueueNums":4,"flag":0,"producerGroup":"PID-probe",'
        b'"properties":"WAIT\\u0001true\\u0002","queueId":0,"reconsumeTimes":"0","sysFlag":0,'
        b'"topic":"TopicTest","unitMode":"0"},"flag":0,"language":"CPP","opaque":2,"remark":"",'
        b'"version":63}\n'
    )
    frame = struct.pack(">II", 4 + len(header), len(header)) + header
    cmd = RemotingCommand.decode(frame)
    h = SendMessageRequestHeader.from_ext_fields(cmd.ext_fields)
    assert h == SendMessageRequestHeader(
        producer_group="PID-probe",
        topic="TopicTest",
        default_topic="TBW102",
        default_topic_queue_nums=4,
        queue_id=0,
        sys_flag=0,
        born_timestamp=1795254357706,
        flag=0,
        properties="WAIT\x01true\x02",
        reconsume_times=0,
        unit_mode=False,
        batch=True,
    )


def _fields(h: SendMessageRequestHeader) -> dict[str, object]:
    return {name: getattr(h, name) for name, _, _ in h._SPEC}
