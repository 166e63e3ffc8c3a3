"""DefaultMQPullConsumer: fetch queues, pull at an offset, manage offsets by hand.

mechanisms.md "The consumer's pull loop" (PullAPIWrapper#pullKernelImpl, status mapping), mechanisms.md "Rebalancing" (RebalancePullImpl);
docs/reference.md §2.2 (PullSysFlag), §10.12 (offset stores), §10.4 (QUERY/UPDATE_CONSUMER_OFFSET).
"""

from __future__ import annotations

import pytest
from test_push_consumer import ConsumerCluster

from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer.default_mq_pull_consumer import DefaultMQPullConsumer
from mqlab.client.consumer.default_mq_push_consumer import MessageSelector
from mqlab.client.consumer.pull_api_wrapper import PullStatus
from mqlab.client.exception import MQBrokerException, MQClientException
from mqlab.client.mq_client_instance import MQClientInstance
from mqlab.common.message import MessageQueue
from mqlab.common.sysflag import PullSysFlag

Q0 = MessageQueue("T", "broker-a", 0)


def pull_consumer(cl, name="puller", group="PCG", start=True, **settings):
    inst = MQClientInstance(ClientConfig(), name=name)
    cl.d.add_node(inst)
    c = DefaultMQPullConsumer(group, inst, **settings)
    if start:
        c.start()
    return c


def wait(cl, fut, ms=100):
    cl.d.advance(ms)
    return fut.get()


def test_fetch_subscribe_message_queues(tmp_path):
    """The readable queues from the name server: 4 queues of T on broker-a."""
    cl = ConsumerCluster(tmp_path)
    c = pull_consumer(cl)
    mqs = wait(cl, c.fetch_subscribe_message_queues("T"))
    assert sorted(mqs) == [MessageQueue("T", "broker-a", i) for i in range(4)]
    with pytest.raises(MQClientException, match="Can not find Message Queue for this topic, NOPE"):
        wait(cl, c.fetch_subscribe_message_queues("NOPE"))


def test_fetch_subscribe_message_queues_of_a_write_only_topic(tmp_path):
    """A route with no readable queue: MQAdminImpl's "Namesrv return empty" is thrown inside
    its try, so the caller gets the outer text with the FAQ tip (the inner one is the cause)."""
    from mqlab.common.topic_config import TopicConfig

    cl = ConsumerCluster(tmp_path)
    cl.broker.topic_config_manager.update_topic_config(TopicConfig("W", perm=2), cl.d.now)
    cl.broker.register_broker_all()
    cl.d.advance(10)
    c = pull_consumer(cl)
    with pytest.raises(MQClientException) as e:
        wait(cl, c.fetch_subscribe_message_queues("W"))
    assert e.value.error_message == (
        "Can not find Message Queue for this topic, W"
        "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
    )
    assert e.value.__cause__.error_message == (
        "Can not find Message Queue for this topic, W Namesrv return empty"
    )


def test_pull_at_an_offset_then_past_the_end(tmp_path):
    """pull(mq, "*", 0, 32) → FOUND 5, next 5; pull at 5 → NO_NEW_MSG (no long polling)."""
    cl = ConsumerCluster(tmp_path)
    for i in range(5):
        cl.send_and_wait(body=f"p{i}".encode(), queue_id=0)
    c = pull_consumer(cl)
    r = wait(cl, c.pull(Q0, "*", 0, 32))
    assert r.pull_status is PullStatus.FOUND
    assert [m.body for m in r.msg_found_list] == [b"p0", b"p1", b"p2", b"p3", b"p4"]
    assert (r.next_begin_offset, r.min_offset, r.max_offset) == (5, 0, 5)
    r = wait(cl, c.pull(Q0, "*", 2, 2))
    assert [m.queue_offset for m in r.msg_found_list] == [2, 3] and r.next_begin_offset == 4
    fut = c.pull(Q0, "*", 5, 32)
    r = wait(cl, fut)
    assert r.pull_status is PullStatus.NO_NEW_MSG and r.next_begin_offset == 5
    (e,) = [e for e in cl.events(node="puller", component="PullAPIWrapper.pullKernelImpl")
            if e.fields["offset"] == 5]  # fmt: skip
    assert e.fields["sys_flag"] == PullSysFlag.SUBSCRIPTION  # no SUSPEND, no COMMIT_OFFSET


def test_pull_with_tags_and_illegal_offset(tmp_path):
    """ "TagA" returns only TagA; nothing matching → NO_MATCHED_MSG; offset 100 → OFFSET_ILLEGAL."""
    cl = ConsumerCluster(tmp_path)
    for tag in ["TagA", "TagB", "TagA"]:
        cl.send_and_wait(body=tag.encode(), tags=tag, queue_id=0)
    c = pull_consumer(cl)
    r = wait(cl, c.pull(Q0, "TagA", 0, 32))
    assert [m.tags for m in r.msg_found_list] == ["TagA", "TagA"]
    r = wait(cl, c.pull(Q0, "TagC", 0, 32))
    assert r.pull_status is PullStatus.NO_MATCHED_MSG and r.next_begin_offset == 3
    r = wait(cl, c.pull(Q0, "*", 100, 32))
    assert r.pull_status is PullStatus.OFFSET_ILLEGAL


def test_pull_block_if_not_found_waits_for_the_message(tmp_path):
    """pullBlockIfNotFound parks at the broker (SUSPEND) and returns when a message arrives."""
    cl = ConsumerCluster(tmp_path)
    c = pull_consumer(cl)
    fut = c.pull_block_if_not_found(Q0, "*", 0, 32)
    cl.d.advance(3000)
    assert not fut.done
    cl.send(body=b"late", queue_id=0)
    cl.d.advance(50)
    r = fut.get()
    assert r.pull_status is PullStatus.FOUND and [m.body for m in r.msg_found_list] == [b"late"]


def test_offsets_are_managed_by_hand_and_persisted_for_allocated_queues(tmp_path):
    """updateConsumeOffset + register_topics: persisted every 5 s, read back from the broker."""
    cl = ConsumerCluster(tmp_path)
    changes = []
    c = pull_consumer(cl, start=False)
    c.register_message_queue_listener("T", lambda t, mq_all, mine: changes.append(sorted(mine)))
    c.start()
    cl.d.advance(2000)
    assert c.fetch_message_queues_in_balance("T") == {
        MessageQueue("T", "broker-a", i) for i in range(4)
    }
    assert changes[-1] == sorted(MessageQueue("T", "broker-a", i) for i in range(4))
    c.update_consume_offset(Q0, 5)
    assert wait(cl, c.fetch_consume_offset(Q0, from_store=False)) == 5
    cl.d.advance(15_000)  # persistAllConsumerOffset
    assert cl.broker.consumer_offset_manager.query_offset("PCG", "T", 0) == 5
    other = pull_consumer(cl, name="puller-2")
    assert wait(cl, other.fetch_consume_offset(Q0, from_store=True)) == 5


def test_two_pull_consumers_share_registered_topic(tmp_path):
    """RebalancePullImpl: two consumers of a group split the 4 queues 2/2."""
    cl = ConsumerCluster(tmp_path)
    a = pull_consumer(cl, name="pa", register_topics={"T"})
    b = pull_consumer(cl, name="pb", register_topics={"T"})
    cl.d.advance(25_000)
    qa = sorted(mq.queue_id for mq in a.fetch_message_queues_in_balance("T"))
    qb = sorted(mq.queue_id for mq in b.fetch_message_queues_in_balance("T"))
    assert (qa, qb) == ([0, 1], [2, 3])


def test_sql92_pull_is_refused_by_a_default_broker(tmp_path):
    """A SQL92 pull: SYSTEM_ERROR "does not support ... SQL92" unless enablePropertyFilter."""
    cl = ConsumerCluster(tmp_path)
    cl.send_and_wait(body=b"x", queue_id=0, props={"a": "7"})
    c = pull_consumer(cl)
    # before any heartbeat the broker's version is unknown (0 < V4_1_0_SNAPSHOT): refused locally
    fut = c.pull(Q0, MessageSelector.by_sql("a > 5"), 0, 32)
    cl.d.advance(100)
    assert isinstance(fut.error, MQClientException)
    assert "does not upgrade to support for filter message by SQL92" in str(fut.error)
    cl.d.advance(1000)  # the first heartbeat (1 s after start) records the broker's version
    fut = c.pull(Q0, MessageSelector.by_sql("a > 5"), 0, 32)
    cl.d.advance(100)
    assert isinstance(fut.error, MQBrokerException) and fut.error.response_code == 1
    assert "does not support consumer to filter message by SQL92" in str(fut.error)
    # a string expression is always a tag expression: "a > 5" is a tag nobody sends
    r = wait(cl, c.pull(Q0, "a > 5", 0, 32))
    assert r.pull_status is PullStatus.NO_MATCHED_MSG


def test_sql92_pull_with_property_filter(tmp_path):
    """enablePropertyFilter=true: the SQL92 selector filters by property (4.9.3 MessageSelector)."""
    cl = ConsumerCluster(tmp_path, broker_kw={"enable_property_filter": True})
    for a in ["7", "1", "9"]:
        cl.send_and_wait(body=a.encode(), queue_id=0, props={"a": a})
    c = pull_consumer(cl)
    wait(cl, c.pull(Q0, "*", 0, 1))  # learns the route; the heartbeat at 1 s learns the version
    cl.d.advance(1000)
    r = wait(cl, c.pull(Q0, MessageSelector.by_sql("a > 5"), 0, 32))
    assert [m.body for m in r.msg_found_list] == [b"7", b"9"]


def test_argument_and_state_errors(tmp_path):
    """Java's checks before any I/O: not running, offset < 0, maxNums <= 0, mq is null."""
    cl = ConsumerCluster(tmp_path)
    c = pull_consumer(cl, start=False)
    with pytest.raises(
        MQClientException, match="The consumer is not in running status, CREATE_JUST"
    ):
        c.pull(Q0, "*", 0, 1)
    c.start()
    with pytest.raises(MQClientException, match="offset < 0"):
        c.pull(Q0, "*", -1, 1)
    with pytest.raises(MQClientException, match="maxNums <= 0"):
        c.pull(Q0, "*", 0, 0)
    with pytest.raises(MQClientException, match="mq is null"):
        c.pull(None, "*", 0, 1)
    with pytest.raises(MQClientException, match="maybe started once"):
        c.start()
    bad = pull_consumer(cl, name="bad", start=False, consumer_timeout_millis_when_suspend=1000)
    with pytest.raises(MQClientException, match="consumerTimeoutMillisWhenSuspend must greater"):
        bad.start()


def test_pull_callback_gets_the_result(tmp_path):
    """An async pull's PullCallback: ``callback(result, None)``."""
    cl = ConsumerCluster(tmp_path)
    cl.send_and_wait(body=b"cb", queue_id=0)
    c = pull_consumer(cl)
    got = []
    c.pull(Q0, "*", 0, 4, callback=lambda r, e: got.append((r.pull_status, e)))
    cl.d.advance(100)
    assert got == [(PullStatus.FOUND, None)]


def test_send_message_back_goes_to_the_retry_topic(tmp_path):
    """A pulled message sent back (level 1, 1 s) comes back on %RETRY%PCG with reconsumeTimes 1."""
    cl = ConsumerCluster(tmp_path)
    cl.send_and_wait(body=b"again", queue_id=0)
    c = pull_consumer(cl)
    (msg,) = wait(cl, c.pull(Q0, "*", 0, 1)).msg_found_list
    wait(cl, c.send_message_back(msg, 1, "broker-a"))
    cl.d.advance(2000)
    retry = MessageQueue("%RETRY%PCG", "broker-a", 0)
    r = wait(cl, c.pull(retry, "*", 0, 1))
    (back,) = r.msg_found_list
    assert (back.body, back.reconsume_times) == (b"again", 1)
    assert back.properties["RETRY_TOPIC"] == "T"
