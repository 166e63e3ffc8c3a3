"""SlaveSynchronize: a slave copies its master's metadata 3 s after start, then every 10 s.

Mirrors ``SlaveSynchronize#syncAll`` and ``BrokerController#handleSlaveSynchronize``
(RocketMQ 4.9.3); mechanisms.md "SlaveSynchronize".
"""

from __future__ import annotations

import json

import pytest

from mqlab import Lab
from mqlab.remoting.codes import ResponseCode

SYNCED = [
    ("GET_ALL_TOPIC_CONFIG", "same"),
    ("GET_ALL_CONSUMER_OFFSET", "updated"),
    ("GET_ALL_DELAY_OFFSET", "updated"),
    ("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", "same"),
]


@pytest.fixture
def lab(tmp_path):
    with Lab(seed=5, slaves=1, store_dir=tmp_path) as lab:
        yield lab


def update_offset(lab: Lab, broker: str, group: str, queue_id: int, offset: int) -> None:
    ext = {"consumerGroup": group, "topic": "TopicTest", "queueId": queue_id,
           "commitOffset": offset}  # fmt: skip
    call = lab.request(broker, "UPDATE_CONSUMER_OFFSET", ext)
    assert call.response.code == ResponseCode.SUCCESS


def test_sync_all_runs_3_s_after_start_then_every_10_s(lab):
    """The timer's first run is at 3 000 ms, then 13 000, 23 000; the four requests go in order."""
    slave = lab.broker("broker-a-s1")
    lab.advance(23_100)
    runs = [e.t_ms for e in lab.trace.select(component="SlaveSynchronize.syncAll")]
    assert runs == [3_000, 13_000, 23_000]
    steps = [(e.t_ms, e.step) for e in lab.trace.select(node="broker-a-s1")
             if e.component.startswith("SlaveSynchronize.sync") and e.t_ms < 4_000]  # fmt: skip
    # one round trip (2 ms) per request, one request after the other
    assert steps == [(3_000, "2"), (3_002, "3"), (3_004, "4"), (3_006, "5"), (3_008, "6")]
    assert slave.slave_synchronize.last_run == SYNCED
    # the master runs no SlaveSynchronize
    assert not lab.trace.select(component="SlaveSynchronize.syncAll", node="broker-a")


def test_topic_created_on_the_master_reaches_the_slave(lab):
    """A topic the master creates (new DataVersion) replaces the slave's table at the next sync."""
    master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
    ext = {"topic": "NewTopic", "defaultTopic": "TBW102", "readQueueNums": 2,
           "writeQueueNums": 2, "perm": 6, "topicFilterType": "SINGLE_TAG"}  # fmt: skip
    assert lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC", ext).response.code == 0
    assert slave.topic_config_manager.select_topic_config("NewTopic") is None
    lab.advance(3_000)
    tc = slave.topic_config_manager.select_topic_config("NewTopic")
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (2, 2, 6)
    assert slave.topic_config_manager.data_version == master.topic_config_manager.data_version
    assert slave.slave_synchronize.last_run[0] == ("GET_ALL_TOPIC_CONFIG", "updated")
    on_disk = json.loads((slave.store_dir / "config" / "topics.json").read_text())
    assert on_disk["topicConfigTable"]["NewTopic"]["readQueueNums"] == 2


def test_master_offsets_overwrite_the_slaves_key_by_key(lab):
    """putAll: the master's topic@group entries replace the slave's; entries only the slave
    has stay (apache/rocketmq#1094 is the first half of this)."""
    slave = lab.broker("broker-a-s1")
    update_offset(lab, "broker-a", "G1", 0, 3)
    update_offset(lab, "broker-a-s1", "G1", 0, 7)
    update_offset(lab, "broker-a-s1", "G1", 1, 5)
    update_offset(lab, "broker-a-s1", "G2", 0, 9)
    assert slave.consumer_offset_manager.offset_table == {
        "TopicTest@G1": {0: 7, 1: 5}, "TopicTest@G2": {0: 9},
    }  # fmt: skip
    lab.advance(3_010)
    # the whole per-queue map of TopicTest@G1 is the master's: queue 1 is gone with it
    assert slave.consumer_offset_manager.offset_table == {
        "TopicTest@G1": {0: 3}, "TopicTest@G2": {0: 9},
    }  # fmt: skip
    [ev] = lab.trace.select(component="SlaveSynchronize.syncConsumerOffset")
    assert (ev.t_ms, ev.fields["overwritten"]) == (3_004, ["TopicTest@G1"])
    persisted = (slave.store_dir / "config" / "consumerOffset.json").read_text()
    assert '"TopicTest@G1":{0:3' in persisted.replace("\n", "").replace("\t", "")


def test_delay_offsets_go_to_the_file_only(lab):
    """syncDelayOffset writes delayOffset.json; the slave's running table is not reloaded."""
    master, slave = lab.broker("broker-a"), lab.broker("broker-a-s1")
    master.message_store.schedule_message_service.offset_table[3] = 12
    lab.advance(3_010)
    path = slave.store_dir / "config" / "delayOffset.json"
    assert path.read_text() == '{"offsetTable":{3:12}}'  # the master's text, as it came
    assert slave.message_store.schedule_message_service.offset_table.get(3) is None


def test_subscription_groups_replace_when_the_version_differs(lab):
    """A group created on the master (its DataVersion moves) appears on the slave; a group
    only the slave had is gone (clear + putAll)."""
    slave = lab.broker("broker-a-s1")
    body = json.dumps({"groupName": "GM", "retryQueueNums": 3}).encode()
    assert (
        lab.request("broker-a", "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", {}, body).response.code == 0
    )
    body = json.dumps({"groupName": "GS"}).encode()
    assert (
        lab.request("broker-a-s1", "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", {}, body).response.code
        == 0
    )
    lab.advance(3_010)
    table = slave.subscription_group_manager.subscription_group_table
    assert "GS" not in table
    assert table["GM"].retry_queue_nums == 3
    assert slave.slave_synchronize.last_run[3] == ("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", "updated")


def test_without_a_master_each_sync_fails_then_is_skipped(lab):
    """Master killed: syncs fail to connect until the slave's next registration (every 30 s,
    first at 10 s) says the name server knows no master; then each of the four is skipped."""
    slave = lab.broker("broker-a-s1")
    lab.advance(12_000)  # registered at 10 000 with the master known
    lab.kill("broker-a")
    lab.advance(1_100)  # t = 13 100: the run at 13 000
    assert slave.slave_synchronize.last_run == [
        ("GET_ALL_TOPIC_CONFIG", "failed"), ("GET_ALL_CONSUMER_OFFSET", "failed"),
        ("GET_ALL_DELAY_OFFSET", "failed"), ("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", "failed"),
    ]  # fmt: skip
    [err, *_] = lab.trace.select(component="SlaveSynchronize.syncTopicConfig", kind="error")
    # GET_ALL_TOPIC_CONFIG goes to the master's VIP channel (BrokerOuterAPI#getAllTopicConfig)
    assert (err.t_ms, err.fields["error"]) == (13_000, "connect to 127.0.0.1:10909 failed")
    assert slave.slave_synchronize.master_addr == "127.0.0.1:10911"
    lab.advance(30_000)  # t = 43 100: registered at 40 000 without a master, run at 43 000
    assert slave.slave_synchronize.master_addr is None
    assert [outcome for _, outcome in slave.slave_synchronize.last_run] == ["skipped"] * 4
