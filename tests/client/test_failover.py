"""Clients across a master's outage, on a Lab with slaves.

Producers build queues only from broker names with a master
(``MQClientInstance#topicRouteData2TopicPublishInfo``); consumers pull where
``MQClientInstance#findBrokerAddressInSubscribe`` points and write offsets where
``RemoteBrokerOffsetStore#updateConsumeOffsetToBroker`` finds a node (mechanisms.md
"The slave as a broker").
"""

from __future__ import annotations

import pytest

from mqlab import Lab
from mqlab.client.exception import MQClientException
from mqlab.common.message import Message


def queues(producer, topic: str = "TopicTest") -> list[tuple[str, int]]:
    info = producer.default_mq_producer_impl.topic_publish_info_table[topic]
    return [(mq.broker_name, mq.queue_id) for mq in info.message_queue_list]


def test_producer_skips_a_broker_name_whose_master_is_gone(tmp_path):
    """broker-a's master killed: after the 30 s route refresh broker-a (slave only) has no
    queues, and every send goes to broker-b."""
    with Lab(seed=7, brokers=2, slaves=1, store_dir=tmp_path) as lab:
        for broker in ("broker-a", "broker-b"):
            ext = {"topic": "TopicTest", "defaultTopic": "TBW102", "readQueueNums": 4,
                   "writeQueueNums": 4, "perm": 6, "topicFilterType": "SINGLE_TAG"}  # fmt: skip
            assert lab.request(broker, "UPDATE_AND_CREATE_TOPIC", ext).response.code == 0
        p = lab.producer("PG", name="p1")
        p.send(Message("TopicTest", b"x"))
        lab.run_until_idle()
        assert queues(p) == [("broker-a", q) for q in range(4)] + [
            ("broker-b", q) for q in range(4)
        ]
        lab.kill("broker-a")
        lab.advance(30_000)
        route = p.default_mq_producer_impl.topic_publish_info_table["TopicTest"].topic_route_data
        assert {bd.broker_name: bd.broker_addrs for bd in route.broker_datas} == {
            "broker-a": {1: "127.0.0.1:11911"},
            "broker-b": {0: "127.0.0.1:10921", 1: "127.0.0.1:11921"},
        }
        assert queues(p) == [("broker-b", q) for q in range(4)]
        futures = [p.send(Message("TopicTest", f"m{i}".encode())) for i in range(4)]
        lab.run_until_idle()
        assert [f.get().message_queue.broker_name for f in futures] == ["broker-b"] * 4


def test_producer_without_any_master_has_no_route(tmp_path):
    """One broker name, its master gone: no queue to send to ("No route info of this topic")."""
    with Lab(seed=7, slaves=1, store_dir=tmp_path) as lab:
        p = lab.producer("PG", name="p1")
        p.send(Message("TopicTest", b"x"))
        lab.run_until_idle()
        lab.kill("broker-a")
        lab.advance(30_000)
        assert queues(p) == []
        f = p.send(Message("TopicTest", b"y"))
        lab.run_until_idle()
        with pytest.raises(MQClientException) as e:
            f.get()
        assert str(e.value) == (
            "No route info of this topic: TopicTest\n"
            "See http://rocketmq.apache.org/docs/faq/ for further details."
        )


def test_consumer_reads_the_slave_and_commits_offsets_there_until_the_master_returns(
    tmp_path, replicate
):
    """A running consumer: pulls go to the slave once its route lacks the master (t 30 009),
    its offsets to the slave; once the master is back, to the master again."""
    with Lab(seed=7, slaves=1, store_dir=tmp_path) as lab:
        master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
        lab.send_many("TopicTest", 4)
        c1 = lab.push_consumer("G", "TopicTest", name="c1",
                               consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
        lab.advance(12_000)
        assert master.consumer_offset_manager.offset_table["TopicTest@G"] == {
            q: 1 for q in range(4)
        }
        lab.pause_consumer("c1")
        lab.send_many("TopicTest", 8)  # queue offsets 1 and 2 of each queue
        replicate(lab, master, slave)  # the 8 new ones (1 352 bytes) over HA
        assert slave.message_store.get_max_phy_offset() == 2_028  # 12 x 169
        lab.kill("broker-a")
        assert lab.now == 12_102
        lab.resume_consumer("c1")
        lab.advance(40_000)
        # Pulls to the master fail until the route refresh at 30 009; the next goes to the slave.
        assert [(r.mq.queue_id, r.queue_offset, r.t_ms) for r in c1.consumed[4:]] == [
            (3, 1, 12_011), (0, 1, 12_011), (1, 1, 12_011), (2, 1, 12_011),
            (3, 2, 31_013), (0, 2, 31_013), (1, 2, 31_013), (2, 2, 31_013),
        ]  # fmt: skip
        # the slave commits no pull offset, but takes the consumer's UPDATE_CONSUMER_OFFSET
        slave_pulls = lab.trace.select(component="PullMessageProcessor.processRequest", step="11",
                                       node="broker-a-s1")  # fmt: skip
        assert slave_pulls and not any(e.fields["committed"] for e in slave_pulls)
        assert slave.consumer_offset_manager.offset_table["TopicTest@G"] == {q: 3 for q in range(4)}
        assert master.consumer_offset_manager.offset_table["TopicTest@G"] == {
            q: 1 for q in range(4)
        }
        # The master comes back: the running consumer's offsets (3) go to it, nothing repeats.
        back = lab.restart_broker("broker-a")
        lab.advance(40_000)
        assert back.consumer_offset_manager.offset_table["TopicTest@G"] == {q: 3 for q in range(4)}
        assert len(c1.consumed) == 12


def test_consumer_follows_the_masters_suggestion_to_read_from_the_slave(tmp_path, replicate):
    """slaveReadEnable with 2 000 bytes of simulated memory (800 in the 40 % window): the
    master answers the first pull with suggestWhichBrokerId 1, the consumer pulls from the
    slave until the slave, near the end, suggests the master (the group's brokerId 0) again
    (PullAPIWrapper#updatePullFromWhichNode)."""
    with Lab(seed=7, slaves=1, store_dir=tmp_path, broker={"slave_read_enable": True},
             store={"total_physical_memory_size": 2000}) as lab:  # fmt: skip
        ext = {"topic": "TopicTest", "defaultTopic": "TBW102", "readQueueNums": 1,
               "writeQueueNums": 1, "perm": 6, "topicFilterType": "SINGLE_TAG"}  # fmt: skip
        assert lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC", ext).response.code == 0
        lab.send_many("TopicTest", 40)
        replicate(lab, lab.broker("broker-a"), lab.broker("broker-a-s1"))
        assert lab.broker("broker-a-s1").message_store.get_max_phy_offset() == 6_790
        lab.advance(3_000)  # the slave's syncAll brings the topic
        c = lab.push_consumer("G", "TopicTest", name="c1", pull_batch_size=8,
                              consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
        lab.advance(3_000)
        assert [r.queue_offset for r in c.consumed] == list(range(40))
        served = [
            (e.t_ms, e.node, e.fields["next_begin_offset"])
            for e in lab.trace.select(component="PullMessageProcessor.processRequest", step="9")
            if e.fields["max_offset"] == 40
        ]
        assert served == [
            (14_011, "broker-a", 8), (14_013, "broker-a-s1", 16), (14_015, "broker-a-s1", 24),
            (14_017, "broker-a-s1", 32), (14_019, "broker-a-s1", 40), (14_021, "broker-a", 40),
        ]  # fmt: skip


def _consumer_on_the_slave(lab, replicate):
    """c1 has consumed queue offsets 0-2 of 4 queues; the master died at 12 102, and c1's
    route has had no master since its refresh at 30 009 (as in the test above)."""
    master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
    lab.send_many("TopicTest", 4)
    c1 = lab.push_consumer("G", "TopicTest", name="c1",
                           consume_from_where="CONSUME_FROM_FIRST_OFFSET")  # fmt: skip
    lab.advance(12_000)
    lab.pause_consumer("c1")
    lab.send_many("TopicTest", 8)
    replicate(lab, master, slave)
    lab.kill("broker-a")
    lab.resume_consumer("c1")
    lab.advance(19_400)
    assert lab.now == 31_502
    assert [(r.mq.queue_id, r.queue_offset) for r in c1.consumed[-4:]] == [
        (3, 2), (0, 2), (1, 2), (2, 2)
    ]  # fmt: skip
    inst = c1.default_mq_push_consumer_impl.mq_client_factory
    assert inst.broker_addr_table == {"broker-a": {1: "127.0.0.1:11911"}}
    # SlaveSynchronize copied the master's 1s before the kill; c1's 5 s persists since then
    # went to the dead master (at 30 002 its route still had it), so the slave has 1s.
    assert slave.consumer_offset_manager.offset_table == {"TopicTest@G": {q: 1 for q in range(4)}}
    return c1


def _stop_events(lab):
    return [
        (e.t_ms, e.component, e.step)
        for e in lab.trace.select(node="c1")
        if e.t_ms >= 31_502 and e.component in (
            "SimDriver", "RemoteBrokerOffsetStore.persistAll", "MQClientInstance.unregisterClient",
            "MQClientInstance.updateTopicRouteInfoFromNameServer",
        )
    ]  # fmt: skip


def test_consumer_shut_down_without_a_master_commits_its_offsets_to_the_slave(tmp_path, replicate):
    """Stopping c1 with no master in its route: as 4.9.3's blocking ``shutdown`` →
    ``RemoteBrokerOffsetStore#persistAll``, each of its 5 queues in turn finds no master,
    refreshes the route (2 ms a round trip) and commits to the slave; the node stops after
    the fifth and its two UNREGISTER_CLIENTs' answers, and the slave holds offsets 3. Before, the stop did not wait for the route
    refresh and the slave kept 1s: three messages a queue to consume again."""
    with Lab(seed=7, slaves=1, store_dir=tmp_path) as lab:
        _consumer_on_the_slave(lab, replicate)
        slave = lab.broker("broker-a-s1")
        lab.stop("c1")
        assert lab.driver.node("c1").running  # its shutdown waits for the name server
        lab.advance(100)
        assert not lab.driver.node("c1").running
        assert slave.consumer_offset_manager.offset_table == {
            "TopicTest@G": {q: 3 for q in range(4)}, "%RETRY%G@G": {0: 0},
        }  # fmt: skip
        commits = [
            (e.t_ms, e.fields["topic"], e.fields["queue_id"], e.fields["offset"])
            for e in lab.trace.select(component="ConsumerManageProcessor.updateConsumerOffset",
                                      node="broker-a-s1")
            if e.t_ms >= 31_502
        ]  # fmt: skip
        assert commits == [
            (31_505, "%RETRY%G", 0, 0), (31_507, "TopicTest", 0, 3), (31_509, "TopicTest", 1, 3),
            (31_511, "TopicTest", 2, 3), (31_513, "TopicTest", 3, 3),
        ]  # fmt: skip
        route = "MQClientInstance.updateTopicRouteInfoFromNameServer"
        assert _stop_events(lab) == [
            (31_502, "SimDriver", "stopping"),
            *[(t, route, "route") for t in (31_504, 31_506, 31_508, 31_510, 31_512)],
            (31_512, "RemoteBrokerOffsetStore.persistAll", "persist"),
            (31_512, "MQClientInstance.unregisterClient", "unregister"),  # group G
            # the next unregister waits for the slave's answer (invokeSync), the stop for its own
            (31_514, "MQClientInstance.unregisterClient", "unregister"),  # CLIENT_INNER_PRODUCER
            (31_516, "SimDriver", "stop"),
        ]  # fmt: skip
        persist = lab.trace.select(component="RemoteBrokerOffsetStore.persistAll", node="c1")
        assert persist[-1].fields["sent"] == ["%RETRY%G@broker-a:0=0 (slave)"] + [
            f"TopicTest@broker-a:{q}=3 (slave)" for q in range(4)
        ]


def test_consumer_shut_down_with_no_node_of_its_broker_logs_each_queue_and_stops(
    tmp_path, replicate
):
    """The slave dies too: each queue's route refresh gets TOPIC_NOT_EXIST, the route keeps
    the dead slave, and the oneway commit to it fails ("updateConsumeOffsetToBroker
    exception", as Java logs it); the next queue is tried, and the node stops after the
    fifth. The slave's offsets stay as they were."""
    with Lab(seed=7, slaves=1, store_dir=tmp_path) as lab:
        _consumer_on_the_slave(lab, replicate)
        lab.kill("broker-a-s1")
        lab.advance(1)
        lab.stop("c1")
        lab.advance(100)
        assert not lab.driver.node("c1").running
        errors = lab.trace.select(component="RemoteBrokerOffsetStore.persistAll", step="exception")
        assert [(e.t_ms, e.fields["mq"], e.fields["offset"], e.fields["error"]) for e in errors] == [
            (31_505, "MessageQueue [topic=%RETRY%G, brokerName=broker-a, queueId=0]", 0,
             "connect to 127.0.0.1:11911 failed"),
            *[(31_507 + 2 * q, f"MessageQueue [topic=TopicTest, brokerName=broker-a, queueId={q}]",
               3, "connect to 127.0.0.1:11911 failed") for q in range(4)],
        ]  # fmt: skip
        assert lab.trace.select(node="c1", component="SimDriver")[-1].t_ms == 31_513
        slave = lab.broker("broker-a-s1")
        assert slave.consumer_offset_manager.offset_table == {
            "TopicTest@G": {q: 1 for q in range(4)}
        }
