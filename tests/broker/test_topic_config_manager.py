"""Tests for mqlab.broker.topic_config_manager (mechanisms.md "msgCheck" msgCheck / createTopicInSendMessageMethod;
docs/reference.md §7.3 built-in and auto-created topics, §7.4 topics.json)."""

from __future__ import annotations

import json

import pytest

from mqlab.broker.config import BrokerConfig
from mqlab.broker.topic_config_manager import TopicConfigManager
from mqlab.common.topic_config import TopicConfig, TopicFilterType


class Tracer:
    enabled = True

    def __init__(self):
        self.events = []

    def emit(self, component, step, kind="step", **fields):
        self.events.append((component, step, kind, fields))


def table_summary(tcm):
    return {
        name: (tc.read_queue_nums, tc.write_queue_nums, tc.perm)
        for name, tc in tcm.topic_config_table.items()
    }


def test_built_in_topics():
    """Constructor creates docs/reference.md §7.3's topics with their queue counts and perms, in Java's order."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    assert list(tcm.topic_config_table) == [
        "SELF_TEST_TOPIC",
        "TBW102",
        "BenchmarkTest",
        "DefaultCluster",
        "broker-a",
        "OFFSET_MOVED_EVENT",
        "SCHEDULE_TOPIC_XXXX",
        "DefaultCluster_REPLY_TOPIC",
    ]
    assert table_summary(tcm) == {
        "SELF_TEST_TOPIC": (1, 1, 6),
        "TBW102": (8, 8, 7),
        "BenchmarkTest": (1024, 1024, 6),
        "DefaultCluster": (16, 16, 7),
        "broker-a": (1, 1, 7),
        "OFFSET_MOVED_EVENT": (1, 1, 6),
        "SCHEDULE_TOPIC_XXXX": (18, 18, 6),
        "DefaultCluster_REPLY_TOPIC": (1, 1, 6),
    }
    assert tcm.data_version.counter == 0


def test_built_in_topics_follow_switches():
    """No TBW102 without autoCreateTopicEnable; cluster/broker topics perm 1 (INHERIT only) when
    their switches are off; trace topic 1/1 perm 6 with traceTopicEnable (docs/reference.md §7.3)."""
    bc = BrokerConfig(
        auto_create_topic_enable=False,
        cluster_topic_enable=False,
        broker_topic_enable=False,
        trace_topic_enable=True,
    )
    summary = table_summary(TopicConfigManager(bc, None))
    assert "TBW102" not in summary
    assert summary["DefaultCluster"] == (16, 16, 1)
    assert summary["broker-a"] == (1, 1, 1)
    assert summary["RMQ_SYS_TRACE_TOPIC"] == (1, 1, 6)


def test_system_topic_list():
    """Static system topics plus this broker's cluster name, broker name and reply topic are
    system topics; an ordinary topic is not (docs/reference.md §7.1)."""
    tcm = TopicConfigManager(BrokerConfig(broker_name="broker-x", broker_cluster_name="C1"), None)
    assert tcm.system_topic_set == {
        "SELF_TEST_TOPIC",
        "TBW102",
        "BenchmarkTest",
        "C1",
        "broker-x",
        "OFFSET_MOVED_EVENT",
        "SCHEDULE_TOPIC_XXXX",
        "C1_REPLY_TOPIC",
    }
    for t in ("C1", "broker-x", "C1_REPLY_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC", "rmq_sys_foo"):
        assert tcm.is_system_topic(t), t
    assert not tcm.is_system_topic("TopicTest")


def test_create_topic_in_send_message_method_from_tbw102():
    """Auto-create from TBW102 (8/8 perm 7) with client nums 4: 4/4 queues, perm 6, filter type
    copied, sys flag kept, version bumped, hook called (mechanisms.md "msgCheck", docs/reference.md §7.3)."""
    tracer = Tracer()
    tcm = TopicConfigManager(BrokerConfig(), None, tracer=tracer, now_ms=100)
    tcm.topic_config_table["TBW102"].topic_filter_type = TopicFilterType.MULTI_TAG
    created = []
    tcm.on_topic_created = created.append
    tc = tcm.create_topic_in_send_message_method(
        "TopicTest", "TBW102", "10.0.0.5:51000", 4, 1, 2000
    )
    assert tc == TopicConfig("TopicTest", 4, 4, 6, TopicFilterType.MULTI_TAG, 1, False)
    assert tcm.select_topic_config("TopicTest") is tc
    assert (tcm.data_version.counter, tcm.data_version.timestamp) == (1, 2000)
    assert created == [tc]
    assert tcm.topic_config_table["TBW102"].perm == 7  # template untouched
    (component, step, kind, fields) = tracer.events[-1]
    assert (component, step, kind) == (
        "TopicConfigManager.createTopicInSendMessageMethod",
        "5",
        "state",
    )
    assert fields["created"] is True and fields["perm"] == 6 and fields["write_queue_nums"] == 4


def test_create_topic_queue_nums_capped_by_template():
    """Queue count = min(client defaultTopicQueueNums 16, TBW102 writeQueueNums 8) = 8."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    tc = tcm.create_topic_in_send_message_method("T16", "TBW102", "c", 16, 0, 1)
    assert (tc.read_queue_nums, tc.write_queue_nums) == (8, 8)


def test_create_topic_existing_returns_it_without_bump():
    """An existing topic is returned as is; the data version does not move (step 1)."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    first = tcm.create_topic_in_send_message_method("T", "TBW102", "c", 4, 0, 1)
    again = tcm.create_topic_in_send_message_method("T", "TBW102", "c", 3, 0, 2)
    assert again is first
    assert tcm.data_version.counter == 1


def test_data_version_counts_each_creation():
    """Each creation bumps dataVersion.counter by one and stamps now_ms."""
    tcm = TopicConfigManager(BrokerConfig(), None, now_ms=5)
    assert (tcm.data_version.counter, tcm.data_version.timestamp) == (0, 5)
    tcm.create_topic_in_send_message_method("A", "TBW102", "c", 4, 0, 10)
    tcm.create_topic_in_send_message_back_method("%RETRY%g", 1, 6, 0, 20)
    tcm.create_topic_of_tran_check_max_time(1, 6, 30)
    assert (tcm.data_version.counter, tcm.data_version.timestamp) == (3, 30)


def test_auto_create_off_creation_fails():
    """autoCreateTopicEnable=false: no TBW102, creation returns None, version unchanged (mechanisms.md "msgCheck")."""
    tracer = Tracer()
    tcm = TopicConfigManager(BrokerConfig(auto_create_topic_enable=False), None, tracer=tracer)
    assert tcm.create_topic_in_send_message_method("TopicTest", "TBW102", "c", 4, 0, 1) is None
    assert "TopicTest" not in tcm.topic_config_table
    assert tcm.data_version.counter == 0
    assert tracer.events[-1][1] == "2"
    assert tracer.events[-1][3]["reason"] == "default topic not exist"


def test_auto_create_off_with_persisted_tbw102_forces_rw(tmp_path):
    """A TBW102 loaded from topics.json with auto create off is treated as RW (6): no inherit,
    creation fails, and the template's perm is rewritten in place as Java does (mechanisms.md "msgCheck" step 3)."""
    TopicConfigManager(BrokerConfig(), tmp_path).persist()
    tracer = Tracer()
    tcm = TopicConfigManager(BrokerConfig(auto_create_topic_enable=False), tmp_path, tracer=tracer)
    assert tcm.load()
    assert tcm.topic_config_table["TBW102"].perm == 7
    assert tcm.create_topic_in_send_message_method("TopicTest", "TBW102", "c", 4, 0, 1) is None
    assert tcm.topic_config_table["TBW102"].perm == 6
    assert [e[1] for e in tracer.events] == ["3", "4"]


def test_default_topic_without_inherit_fails():
    """A template without PERM_INHERIT (e.g. SELF_TEST_TOPIC, perm 6) cannot seed a topic."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    assert tcm.create_topic_in_send_message_method("T", "SELF_TEST_TOPIC", "c", 4, 0, 1) is None


def test_cluster_topic_can_be_a_template():
    """The cluster-name topic carries INHERIT (perm 7, 16 queues), so it works as createTopicKey."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    tc = tcm.create_topic_in_send_message_method("T", "DefaultCluster", "c", 4, 0, 1)
    assert (tc.write_queue_nums, tc.perm) == (4, 6)


def test_retry_topic_creation():
    """msgCheck's retry fallback / heartbeat: %RETRY%<group> with 1 queue, perm RW 6 (mechanisms.md "msgCheck")."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    created = []
    tcm.on_topic_created = created.append
    tc = tcm.create_topic_in_send_message_back_method("%RETRY%group1", 1, 6, 0, 7)
    assert tc == TopicConfig("%RETRY%group1", 1, 1, 6, TopicFilterType.SINGLE_TAG, 0, False)
    assert created == [tc]
    assert tcm.create_topic_in_send_message_back_method("%RETRY%group1", 3, 2, 0, 8) is tc
    assert tcm.data_version.counter == 1


def test_dlq_topic_via_send_back_method():
    """DLQ topic: %DLQ%<group>, 1 queue (DLQ_NUMS_PER_GROUP), perm 6, sys flag 0 (docs/reference.md §7.3)."""
    tcm = TopicConfigManager(BrokerConfig(auto_create_topic_enable=False), None)
    tc = tcm.create_topic_in_send_message_back_method("%DLQ%group1", 1, 6, 0, 9)
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm, tc.topic_sys_flag) == (1, 1, 6, 0)


def test_update_delete_and_order_topics():
    """update/delete bump the version; updateOrderTopicConfig marks exactly the listed topics."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    tcm.update_topic_config(TopicConfig("A", 2, 2), 1)
    tcm.update_topic_config(TopicConfig("B", 2, 2), 2)
    assert tcm.data_version.counter == 2
    assert tcm.update_order_topic_config(["A"], 3)
    assert tcm.is_order_topic("A") and not tcm.is_order_topic("B")
    assert not tcm.is_order_topic("missing")
    assert not tcm.update_order_topic_config(["A"], 4)  # nothing changed, no bump
    assert tcm.data_version.counter == 3
    assert tcm.update_order_topic_config([], 5)
    assert not tcm.is_order_topic("A")
    assert tcm.delete_topic_config("B", 6)
    assert not tcm.delete_topic_config("B", 7)
    assert tcm.data_version.counter == 5


EXPECTED_HEAD = (
    '{\n\t"dataVersion":{\n\t\t"counter":1,\n\t\t"timestamp":2000\n\t},\n\t"topicConfigTable":{\n'
)
EXPECTED_TOPIC_TEST = (
    '\t\t"TopicTest":{\n'
    '\t\t\t"order":false,\n'
    '\t\t\t"perm":6,\n'
    '\t\t\t"readQueueNums":4,\n'
    '\t\t\t"topicFilterType":"SINGLE_TAG",\n'
    '\t\t\t"topicName":"TopicTest",\n'
    '\t\t\t"topicSysFlag":0,\n'
    '\t\t\t"writeQueueNums":4\n'
    "\t\t}"
)


def test_topics_json_pretty_shape(tmp_path):
    """topics.json is fastjson pretty (tabs, no spaces), keys sorted: dataVersion then
    topicConfigTable with each TopicConfig bean (docs/reference.md §7.4)."""
    tcm = TopicConfigManager(BrokerConfig(), tmp_path, now_ms=1)
    tcm.create_topic_in_send_message_method("TopicTest", "TBW102", "c", 4, 0, 2000)
    text = (tmp_path / "topics.json").read_text()
    assert text == tcm.encode(True)
    assert text.startswith(EXPECTED_HEAD)
    assert EXPECTED_TOPIC_TEST in text
    assert text.endswith("\t\t}\n\t}\n}")
    names = list(json.loads(text)["topicConfigTable"])
    assert names == sorted(names) and len(names) == 9
    assert tcm.encode().startswith(
        '{"dataVersion":{"counter":1,"timestamp":2000},"topicConfigTable":'
    )


def test_topics_json_round_trip(tmp_path):
    """A fresh manager loading topics.json gets the same table and data version."""
    a = TopicConfigManager(BrokerConfig(), tmp_path)
    a.create_topic_in_send_message_method("TopicTest", "TBW102", "c", 4, 0, 2000)
    a.update_topic_config(TopicConfig("Ordered", 2, 3, 6, order=True), 3000)
    b = TopicConfigManager(BrokerConfig(), tmp_path)
    assert b.load()
    assert b.topic_config_table == a.topic_config_table
    assert b.data_version == a.data_version
    assert b.encode(True) == a.encode(True)


def test_topics_json_bak_keeps_previous_version(tmp_path):
    """Persisting again moves the previous content to topics.json.bak (MixAll#string2File)."""
    tcm = TopicConfigManager(BrokerConfig(), tmp_path)
    tcm.create_topic_in_send_message_method("A", "TBW102", "c", 4, 0, 1)
    first = (tmp_path / "topics.json").read_text()
    tcm.create_topic_in_send_message_method("B", "TBW102", "c", 4, 0, 2)
    assert (tmp_path / "topics.json.bak").read_text() == first
    (tmp_path / "topics.json").write_text("{ not json")
    c = TopicConfigManager(BrokerConfig(), tmp_path)
    assert c.load()
    assert "A" in c.topic_config_table and "B" not in c.topic_config_table
    assert c.data_version.counter == 1


def test_build_topic_config_serialize_wrapper_is_live():
    """The wrapper returns the live data version and table (the registration body)."""
    tcm = TopicConfigManager(BrokerConfig(), None)
    dv, table = tcm.build_topic_config_serialize_wrapper()
    assert dv is tcm.data_version and table is tcm.topic_config_table


@pytest.mark.parametrize("text", ["", "[]", "{ not json"])
def test_load_bad_file_without_bak_keeps_built_ins(tmp_path, text):
    """An empty or malformed topics.json with no .bak loads nothing and reports success
    (ConfigManager#loadBak returns true when the .bak is absent)."""
    (tmp_path / "topics.json").write_text(text)
    tcm = TopicConfigManager(BrokerConfig(), tmp_path)
    assert tcm.load() is True
    assert len(tcm.topic_config_table) == 8


def test_load_fails_when_main_and_bak_are_corrupt(tmp_path):
    """Malformed topics.json and malformed topics.json.bak: load() is False."""
    (tmp_path / "topics.json").write_text("{ not json")
    (tmp_path / "topics.json.bak").write_text('{"topicConfigTable":{"T":{"perm":6}}}')
    assert TopicConfigManager(BrokerConfig(), tmp_path).load() is False
