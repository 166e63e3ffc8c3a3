"""Tests for mqlab.broker.subscription_group_manager (mechanisms.md "Pull processing" step 2; docs/reference.md §7.3 pre-created
groups, §7.4 subscriptionGroup.json, §8.3 defaults and the auto-create rule)."""

from __future__ import annotations

from mqlab.broker.config import BrokerConfig, SubscriptionGroupConfig
from mqlab.broker.subscription_group_manager import SubscriptionGroupManager


class Tracer:
    enabled = True

    def __init__(self):
        self.events = []

    def emit(self, component, step, kind="step", **fields):
        self.events.append((component, step, kind, fields))


def test_pre_created_groups():
    """Seven groups exist from the start, all with default settings (docs/reference.md §7.3)."""
    sgm = SubscriptionGroupManager(BrokerConfig(), None)
    assert list(sgm.subscription_group_table) == [
        "TOOLS_CONSUMER",
        "FILTERSRV_CONSUMER",
        "SELF_TEST_C_GROUP",
        "CID_ONS-HTTP-PROXY",
        "CID_ONSAPI_PULL",
        "CID_ONSAPI_PERMISSION",
        "CID_ONSAPI_OWNER",
    ]
    for name, cfg in sgm.subscription_group_table.items():
        assert cfg == SubscriptionGroupConfig(group_name=name)
    assert sgm.data_version.counter == 0


def test_find_auto_creates_with_defaults(tmp_path):
    """Unknown group + autoCreateSubscriptionGroup: created with defaults, version bumped,
    file persisted, trace event (docs/reference.md §8.3)."""
    tracer = Tracer()
    sgm = SubscriptionGroupManager(BrokerConfig(), tmp_path, tracer=tracer)
    cfg = sgm.find_subscription_group_config("group1", 1234)
    assert cfg == SubscriptionGroupConfig(group_name="group1")
    assert sgm.find_subscription_group_config("group1", 9999) is cfg
    assert (sgm.data_version.counter, sgm.data_version.timestamp) == (1, 1234)
    assert '"group1":{' in (tmp_path / "subscriptionGroup.json").read_text()
    assert tracer.events == [
        (
            "SubscriptionGroupManager.findSubscriptionGroupConfig",
            "autoCreate",
            "state",
            {"group": "group1", "data_version": 1},
        )
    ]


def test_find_without_auto_create_returns_none():
    """autoCreateSubscriptionGroup=false: an unknown group is None and nothing changes."""
    sgm = SubscriptionGroupManager(BrokerConfig(auto_create_subscription_group=False), None)
    assert sgm.find_subscription_group_config("group1") is None
    assert "group1" not in sgm.subscription_group_table
    assert sgm.data_version.counter == 0


def test_sys_group_is_created_even_without_auto_create():
    """A CID_RMQ_SYS_ group is auto-created even when autoCreateSubscriptionGroup is off (docs/reference.md §8.3)."""
    sgm = SubscriptionGroupManager(BrokerConfig(auto_create_subscription_group=False), None)
    cfg = sgm.find_subscription_group_config("CID_RMQ_SYS_TRANS", 5)
    assert cfg is not None and cfg.group_name == "CID_RMQ_SYS_TRANS"
    assert sgm.data_version.counter == 1


def test_update_disable_delete():
    """update replaces and bumps; disableConsume clears consume_enable and bumps; delete removes."""
    sgm = SubscriptionGroupManager(BrokerConfig(), None)
    sgm.update_subscription_group_config(SubscriptionGroupConfig("g", retry_max_times=3), 1)
    assert sgm.subscription_group_table["g"].retry_max_times == 3
    sgm.disable_consume("g", 2)
    assert sgm.subscription_group_table["g"].consume_enable is False
    assert sgm.delete_subscription_group_config("g", 3)
    assert not sgm.delete_subscription_group_config("g", 4)
    assert sgm.data_version.counter == 3


EXPECTED_GROUP1 = (
    '\t\t"group1":{\n'
    '\t\t\t"brokerId":0,\n'
    '\t\t\t"consumeBroadcastEnable":true,\n'
    '\t\t\t"consumeEnable":true,\n'
    '\t\t\t"consumeFromMinEnable":true,\n'
    '\t\t\t"groupName":"group1",\n'
    '\t\t\t"notifyConsumerIdsChangedEnable":true,\n'
    '\t\t\t"retryMaxTimes":16,\n'
    '\t\t\t"retryQueueNums":1,\n'
    '\t\t\t"whichBrokerWhenConsumeSlowly":1\n'
    "\t\t}"
)


def test_subscription_group_json_shape(tmp_path):
    """subscriptionGroup.json: {"dataVersion":…,"subscriptionGroupTable":{…}} pretty, groups
    sorted, each config with docs/reference.md §7.4's sorted keys."""
    sgm = SubscriptionGroupManager(BrokerConfig(), tmp_path)
    sgm.find_subscription_group_config("group1", 77)
    text = (tmp_path / "subscriptionGroup.json").read_text()
    assert text.startswith(
        '{\n\t"dataVersion":{\n\t\t"counter":1,\n\t\t"timestamp":77\n\t},\n'
        '\t"subscriptionGroupTable":{\n\t\t"CID_ONS-HTTP-PROXY":{\n'
    )
    assert EXPECTED_GROUP1 in text
    assert text.endswith("\t\t}\n\t}\n}")


def test_persist_load_round_trip(tmp_path):
    """A fresh manager loading subscriptionGroup.json gets the same table and data version."""
    a = SubscriptionGroupManager(BrokerConfig(), tmp_path)
    a.find_subscription_group_config("group1", 10)
    a.update_subscription_group_config(SubscriptionGroupConfig("g2", retry_queue_nums=0), 20)
    b = SubscriptionGroupManager(BrokerConfig(), tmp_path)
    assert b.load()
    assert b.subscription_group_table == a.subscription_group_table
    assert b.data_version == a.data_version


def test_load_falls_back_to_bak(tmp_path):
    """A corrupt subscriptionGroup.json is replaced by the .bak written on the previous persist."""
    a = SubscriptionGroupManager(BrokerConfig(), tmp_path)
    a.find_subscription_group_config("group1", 10)
    a.find_subscription_group_config("group2", 20)
    (tmp_path / "subscriptionGroup.json").write_text("")
    b = SubscriptionGroupManager(BrokerConfig(), tmp_path)
    assert b.load()
    assert "group1" in b.subscription_group_table and "group2" not in b.subscription_group_table
    assert b.data_version.counter == 1
