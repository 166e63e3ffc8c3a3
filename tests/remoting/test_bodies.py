"""JSON bodies: heartbeat, locks, routes, cluster info (docs/reference.md §2.3–§2.6, cpp doc §2.1, §3)."""

from __future__ import annotations

import pytest

from mqlab.common.message import MessageQueue
from mqlab.remoting import RemotingCommandException
from mqlab.remoting.bodies import (
    BrokerData,
    ClusterInfo,
    ConsumerData,
    GetConsumerListByGroupResponseBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    ProducerData,
    QueueData,
    RegisterBrokerBody,
    TopicRouteData,
    UnlockBatchRequestBody,
)

ROUTE = TopicRouteData(
    queue_datas=(QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4, perm=6),),
    broker_datas=(
        BrokerData(
            cluster="DefaultCluster",
            broker_name="broker-a",
            broker_addrs={1: "10.0.0.2:10911", 0: "10.0.0.1:10911"},
        ),
    ),
)

SUB_TAG_A = {
    "classFilterMode": False,
    "codeSet": [2598919],
    "expressionType": "TAG",
    "subString": "TagA",
    "subVersion": 1650000000000,
    "tagsSet": ["TagA"],
    "topic": "TopicTest",
}
SUB_RETRY = {
    "classFilterMode": False,
    "codeSet": [],
    "expressionType": "TAG",
    "subString": "*",
    "subVersion": 1650000000000,
    "tagsSet": [],
    "topic": "%RETRY%g1",
}
HEARTBEAT = HeartbeatData(
    client_id="10.0.0.5@1234#5678",
    consumer_data_set=(
        ConsumerData(
            group_name="g1",
            consume_type="CONSUME_PASSIVELY",
            message_model="CLUSTERING",
            consume_from_where="CONSUME_FROM_LAST_OFFSET",
            subscription_data_set=(SUB_TAG_A, SUB_RETRY),
        ),
    ),
    producer_data_set=(ProducerData(group_name="CLIENT_INNER_PRODUCER"),),
)

MQ = MessageQueue("TopicTest", "broker-a", 0)

# One golden table drives both encode and decode (docs/design.md §6.13): (id, body object, JSON text).
GOLDEN_BODIES = [
    (
        "topic_route_data",  # docs/reference.md §2.5
        ROUTE,
        '{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a",'
        '"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a",'
        '"perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}',
    ),
    (
        "heartbeat_push_consumer",  # docs/reference.md §2.3 (subVersion filled in)
        HEARTBEAT,
        '{"clientID":"10.0.0.5@1234#5678","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",'
        '"consumeType":"CONSUME_PASSIVELY","groupName":"g1","messageModel":"CLUSTERING",'
        '"subscriptionDataSet":[{"classFilterMode":false,"codeSet":[2598919],"expressionType":"TAG",'
        '"subString":"TagA","subVersion":1650000000000,"tagsSet":["TagA"],"topic":"TopicTest"},'
        '{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*",'
        '"subVersion":1650000000000,"tagsSet":[],"topic":"%RETRY%g1"}],"unitMode":false}],'
        '"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}]}',
    ),
    (
        "lock_batch_request",  # docs/reference.md §2.4
        LockBatchRequestBody(consumer_group="CID-orderly", client_id="c1", mq_set=(MQ,)),
        '{"clientId":"c1","consumerGroup":"CID-orderly","mqSet":[{"brokerName":"broker-a","queueId":0,'
        '"topic":"TopicTest"}]}',
    ),
    (
        "lock_batch_response",  # docs/reference.md §2.4
        LockBatchResponseBody(lock_ok_mq_set=(MQ,)),
        '{"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}]}',
    ),
    (
        "cluster_info",  # docs/reference.md §2.6
        ClusterInfo(
            broker_addr_table={
                "broker-a": BrokerData(
                    cluster="DefaultCluster", broker_name="broker-a", broker_addrs={0: "ip:10911"}
                )
            },
            cluster_addr_table={"DefaultCluster": ("broker-a",)},
        ),
        '{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"ip:10911"},"brokerName":"broker-a",'
        '"cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}',
    ),
    (
        "register_broker_body",  # docs/reference.md §2.6 with one TopicConfig (docs/reference.md §7.4 shape)
        RegisterBrokerBody(
            topic_config_table={
                "TopicTest": {
                    "order": False,
                    "perm": 6,
                    "readQueueNums": 4,
                    "topicFilterType": "SINGLE_TAG",
                    "topicName": "TopicTest",
                    "topicSysFlag": 0,
                    "writeQueueNums": 4,
                }
            },
            data_version={"counter": 3, "timestamp": 1650000000000},
        ),
        '{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,'
        '"timestamp":1650000000000},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,'
        '"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,'
        '"writeQueueNums":4}}}}',
    ),
    (
        "consumer_id_list",  # docs/reference.md §2.2
        GetConsumerListByGroupResponseBody(consumer_id_list=("10.0.0.5@1234#987654321",)),
        '{"consumerIdList":["10.0.0.5@1234#987654321"]}',
    ),
]


@pytest.mark.parametrize(
    ("body", "text"), [c[1:] for c in GOLDEN_BODIES], ids=[c[0] for c in GOLDEN_BODIES]
)
def test_encode_golden_bodies(body: object, text: str) -> None:
    """encode() writes fastjson's bytes: bean keys sorted, Long map keys unquoted (docs/reference.md §1.7, §2.3–§2.6)."""
    assert body.encode() == text.encode()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("body", "text"), [c[1:] for c in GOLDEN_BODIES], ids=[c[0] for c in GOLDEN_BODIES]
)
def test_decode_golden_bodies(body: object, text: str) -> None:
    """decode() reads the same bytes back into an equal object (docs/reference.md §2.3–§2.6)."""
    assert type(body).decode(text.encode()) == body  # type: ignore[attr-defined]


def test_cpp_route_reply_variant() -> None:
    """Quoted "0" broker ids, old "topicSynFlag" and orderTopicConf null decode too (cpp doc §3)."""
    text = (
        b'{"orderTopicConf":null,"queueDatas":[{"brokerName":"broker-a","readQueueNums":4,'
        b'"writeQueueNums":4,"perm":6,"topicSynFlag":2}],"brokerDatas":[{"cluster":"DefaultCluster",'
        b'"brokerName":"broker-a","brokerAddrs":{"0":"127.0.0.1:10911"}}],"filterServerTable":{}}'
    )
    route = TopicRouteData.decode(text)
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:10911"}
    assert route.queue_datas[0].topic_sys_flag == 2
    assert route.order_topic_conf is None


def test_cpp_push_consumer_heartbeat() -> None:
    """C++ enum ordinals and string subVersion become Java names and ints; codeSet [0,0] kept (cpp doc §3)."""
    body = (
        b'{"clientID":"17767-127.0.0.1@DEFAULT","consumerDataSet":[{"consumeFromWhere":0,"consumeType":1,'
        b'"groupName":"CID-probe","messageModel":1,"subscriptionDataSet":['
        b'{"subString":"*","subVersion":"1795254385434","topic":"%RETRY%CID-probe"},'
        b'{"codeSet":[0,0],"subString":"TagA || TagB","subVersion":"1795254385434",'
        b'"tagsSet":["TagA","TagB"],"topic":"TopicTest"}]}]}\n'
    )
    hb = HeartbeatData.decode(body)
    assert hb.client_id == "17767-127.0.0.1@DEFAULT" and hb.producer_data_set == ()
    (cd,) = hb.consumer_data_set
    assert (cd.consume_from_where, cd.consume_type, cd.message_model) == (
        "CONSUME_FROM_LAST_OFFSET",
        "CONSUME_PASSIVELY",
        "CLUSTERING",
    )
    retry, tags = cd.subscription_data_set
    assert retry == {
        "classFilterMode": False,
        "codeSet": [],
        "expressionType": "TAG",
        "subString": "*",
        "subVersion": 1795254385434,
        "tagsSet": [],
        "topic": "%RETRY%CID-probe",
    }
    assert tags["codeSet"] == [0, 0] and tags["tagsSet"] == ["TagA", "TagB"]


def test_cpp_pull_and_broadcast_heartbeat_ordinals() -> None:
    """consumeType 0 = CONSUME_ACTIVELY, messageModel 0 = BROADCASTING; no subscriptions (cpp doc §3)."""
    body = b'{"clientID":"c","consumerDataSet":[{"consumeFromWhere":0,"consumeType":0,"groupName":"g","messageModel":0}]}\n'
    (cd,) = HeartbeatData.decode(body).consumer_data_set
    assert (cd.consume_type, cd.message_model, cd.subscription_data_set) == (
        "CONSUME_ACTIVELY",
        "BROADCASTING",
        (),
    )


def test_cpp_producer_heartbeat() -> None:
    """The C++ producer heartbeat has no consumerDataSet (cpp doc §3)."""
    hb = HeartbeatData.decode(
        b'{"clientID":"16803-127.0.0.1@DEFAULT","producerDataSet":[{"groupName":"PID-probe"}]}\n'
    )
    assert (
        hb.producer_data_set == (ProducerData(group_name="PID-probe"),)
        and hb.consumer_data_set == ()
    )


def test_cpp_lock_and_unlock_bodies() -> None:
    """The C++ orderly consumer's LOCK/UNLOCK body, with its trailing \\n, decodes to MessageQueues (cpp doc §2.1)."""
    body = b'{"clientId":"c","consumerGroup":"CID-orderly","mqSet":[{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}]}\n'
    assert LockBatchRequestBody.decode(body).mq_set == (MQ,)
    unlock = UnlockBatchRequestBody.decode(body)
    assert isinstance(unlock, UnlockBatchRequestBody) and unlock.consumer_group == "CID-orderly"


@pytest.mark.parametrize(
    ("cls", "body"),
    [
        (HeartbeatData, None),
        (HeartbeatData, b"not json"),
        (HeartbeatData, b"[1]"),
        (HeartbeatData, b'{"producerDataSet":[]}'),
        (HeartbeatData, b'{"clientID":"c","consumerDataSet":[{"groupName":"g","consumeType":9}]}'),
        (TopicRouteData, b'{"queueDatas":[{"perm":6}]}'),
        (LockBatchRequestBody, b'{"clientId":"c","consumerGroup":"g","mqSet":[{"topic":"T"}]}'),
    ],
)
def test_malformed_bodies_raise(cls: type, body: bytes | None) -> None:
    """A missing, non-JSON or wrongly shaped body raises RemotingCommandException."""
    with pytest.raises(RemotingCommandException):
        cls.decode(body)
