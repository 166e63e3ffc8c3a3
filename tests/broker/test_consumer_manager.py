"""Tests for mqlab.broker.consumer_manager (mechanisms.md "Consumption" heartbeats / consumer ids; docs/reference.md §10.5
register and notify rules, §9 channel expiry 120 s)."""

from __future__ import annotations

from mqlab.broker.consumer_manager import (
    CHANNEL_EXPIRED_TIMEOUT,
    ClientChannelInfo,
    ConsumerGroupEvent,
    ConsumerManager,
)
from mqlab.common.filter_api import FilterAPI
from mqlab.runtime.context import Channel

PUSH, CLUSTERING, LAST = "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET"


class Tracer:
    enabled = True

    def __init__(self):
        self.events = []

    def emit(self, component, step, kind="step", **fields):
        self.events.append((component, step, kind, fields))


class Listener:
    def __init__(self):
        self.calls = []

    def __call__(self, event, group, args):
        self.calls.append((event, group, list(args)))

    def changes(self):
        return [(g, a) for e, g, a in self.calls if e == "CHANGE"]


def chan(i: int) -> Channel:
    return Channel(i, "127.0.0.1:10911", f"10.0.0.{i}:5{i:04d}", f"consumer-{i}")


def info(i: int, now: int = 0) -> ClientChannelInfo:
    return ClientChannelInfo(chan(i), f"10.0.0.{i}@{i}", "JAVA", 401, now)


def sub(topic: str, version: int, expr: str = "*"):
    return FilterAPI.build_subscription_data(topic, expr, sub_version=version)


def register(cm, i, subs, now, notify=True):
    return cm.register_consumer("g1", info(i, now), PUSH, CLUSTERING, LAST, subs, notify, now)


def test_constants():
    """Channel expiry is 120 000 ms (docs/reference.md §9); events carry Java's names."""
    assert CHANNEL_EXPIRED_TIMEOUT == 120000
    assert [e.value for e in ConsumerGroupEvent] == ["CHANGE", "UNREGISTER", "REGISTER"]


def test_new_channel_is_a_change_and_notifies():
    """First heartbeat: changed, CHANGE with the group's channels, then REGISTER with the subs."""
    listener, tracer = Listener(), Tracer()
    cm = ConsumerManager(listener, tracer=tracer)
    subs = [sub("TopicTest", 1), sub("%RETRY%g1", 1)]
    assert register(cm, 1, subs, 1000) is True
    assert listener.calls == [("CHANGE", "g1", [chan(1)]), ("REGISTER", "g1", subs)]
    group = cm.get_consumer_group_info("g1")
    assert (group.consume_type, group.message_model, group.consume_from_where) == (
        PUSH,
        CLUSTERING,
        LAST,
    )
    assert group.get_all_client_id() == ["10.0.0.1@1"]
    assert list(group.subscription_table) == ["TopicTest", "%RETRY%g1"]
    assert tracer.events[-1][0:3] == ("ConsumerManager.registerConsumer", "changed", "state")
    assert tracer.events[-1][3]["new_channel"] is True


def test_second_consumer_notifies_all_channels_in_registration_order():
    """A second member is a change; CHANGE lists both channels, first-registered first."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 2, [sub("T", 1)], 0)
    register(cm, 1, [sub("T", 1)], 10)
    assert listener.changes()[-1] == ("g1", [chan(2), chan(1)])
    assert cm.get_consumer_group_info("g1").get_all_client_id() == ["10.0.0.2@2", "10.0.0.1@1"]
    assert cm.find_channel("g1", "10.0.0.1@1").channel == chan(1)
    assert cm.find_channel("g1", "nobody") is None


def test_same_channel_heartbeat_is_not_a_change():
    """Repeat heartbeat on the same channel: not changed, no CHANGE, timestamp refreshed."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 1, [sub("T", 1)], 0)
    listener.calls.clear()
    assert register(cm, 1, [sub("T", 1)], 30000) is False
    assert [c[0] for c in listener.calls] == ["REGISTER"]
    cci = cm.get_consumer_group_info("g1").channel_info_table[chan(1)]
    assert cci.last_update_timestamp == 30000


def test_larger_sub_version_replaces_without_change():
    """Same topic with a larger subVersion replaces the subscription but is no change; a
    smaller one is ignored (docs/reference.md §10.5)."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 1, [sub("T", 100, "TagA")], 0)
    newer = sub("T", 200, "TagB")
    assert register(cm, 1, [newer], 1) is False
    assert cm.find_subscription_data("g1", "T") is newer
    assert register(cm, 1, [sub("T", 150, "TagC")], 2) is False
    assert cm.find_subscription_data("g1", "T") is newer
    assert listener.changes() == [("g1", [chan(1)])]


def test_added_and_removed_topics_are_changes():
    """A new topic is a change; a topic missing from the heartbeat is removed, a change."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 1, [sub("A", 1)], 0)
    assert register(cm, 1, [sub("A", 1), sub("B", 1)], 1) is True
    assert register(cm, 1, [sub("B", 1)], 2) is True
    assert cm.find_subscription_data("g1", "A") is None
    assert cm.find_subscription_data_count("g1") == 1
    assert len(listener.changes()) == 3


def test_notify_disabled_for_group_suppresses_change():
    """Group notifyConsumerIdsChangedEnable=false: changed but no CHANGE event; REGISTER still."""
    listener = Listener()
    cm = ConsumerManager(listener)
    assert register(cm, 1, [sub("T", 1)], 0, notify=False) is True
    assert [c[0] for c in listener.calls] == ["REGISTER"]


def test_same_channel_new_client_id_replaces_entry_without_change():
    """Java's [BUG] path: same channel, different client id → entry replaced, not a change."""
    cm = ConsumerManager()
    register(cm, 1, [sub("T", 1)], 0)
    other = ClientChannelInfo(chan(1), "other@9", "JAVA", 401, 5)
    assert (
        cm.register_consumer("g1", other, PUSH, CLUSTERING, LAST, [sub("T", 1)], True, 5) is False
    )
    assert cm.get_consumer_group_info("g1").get_all_client_id() == ["other@9"]


def test_expiry_after_120s_is_scanned():
    """A member silent for exactly 120 000 ms stays; at 120 001 the scan removes it, drops the
    emptied group, returns the channel to close, and notifies nobody (docs/reference.md §9)."""
    listener, tracer = Listener(), Tracer()
    cm = ConsumerManager(listener, tracer=tracer)
    register(cm, 1, [sub("T", 1)], 1000)
    register(cm, 2, [sub("T", 1)], 50000)
    listener.calls.clear()
    assert cm.scan_not_active_channel(1000 + 120000) == []
    assert cm.scan_not_active_channel(1000 + 120001) == [chan(1)]
    assert cm.get_consumer_group_info("g1").get_all_client_id() == ["10.0.0.2@2"]
    assert cm.scan_not_active_channel(50000 + 120001) == [chan(2)]
    assert cm.get_consumer_group_info("g1") is None
    assert listener.calls == []
    assert [e[1] for e in tracer.events[-3:]] == ["expired", "expired", "groupRemoved"]
    assert tracer.events[-2][3]["idle_ms"] == 120001


def test_unregister_last_consumer_removes_group_and_notifies():
    """UNREGISTER_CLIENT of the last member: group removed, UNREGISTER then CHANGE (no channels)."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 1, [sub("T", 1)], 0)
    register(cm, 2, [sub("T", 1)], 0)
    listener.calls.clear()
    cm.unregister_consumer("g1", info(1), True)
    assert listener.calls == [("CHANGE", "g1", [chan(2)])]
    cm.unregister_consumer("g1", info(2), True)
    assert listener.calls[1:] == [("UNREGISTER", "g1", []), ("CHANGE", "g1", [])]
    assert cm.get_consumer_group_info("g1") is None
    cm.unregister_consumer("g1", info(2), True)  # unknown group: nothing
    assert len(listener.calls) == 3


def test_unregister_without_notify():
    """Group notify flag off: the member is removed, no CHANGE."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 1, [sub("T", 1)], 0)
    register(cm, 2, [sub("T", 1)], 0)
    listener.calls.clear()
    cm.unregister_consumer("g1", info(1), False)
    assert listener.calls == []


def test_channel_close_event_removes_from_every_group():
    """A closed channel leaves every group it was in; each gets CHANGE with its remaining channels."""
    listener = Listener()
    cm = ConsumerManager(listener)
    register(cm, 1, [sub("T", 1)], 0)
    register(cm, 2, [sub("T", 1)], 0)
    cm.register_consumer("g2", info(1), PUSH, CLUSTERING, LAST, [sub("T", 1)], True, 0)
    listener.calls.clear()
    cm.do_channel_close_event(chan(1).remote_address, chan(1))
    assert listener.calls == [
        ("CHANGE", "g1", [chan(2)]),
        ("UNREGISTER", "g2", []),
        ("CHANGE", "g2", []),
    ]
    assert cm.get_consumer_group_info("g2") is None


def test_query_topic_consume_by_who():
    """Groups subscribed to a topic, sorted."""
    cm = ConsumerManager()
    cm.register_consumer("gB", info(1), PUSH, CLUSTERING, LAST, [sub("T", 1)], True, 0)
    cm.register_consumer("gA", info(2), PUSH, CLUSTERING, LAST, [sub("T", 1), sub("U", 1)], True, 0)
    assert cm.query_topic_consume_by_who("T") == ["gA", "gB"]
    assert cm.query_topic_consume_by_who("U") == ["gA"]
    assert cm.query_topic_consume_by_who("V") == []


def test_client_channel_info_equality_by_channel():
    """ClientChannelInfo equals another on the same channel whatever the client id (Java equals)."""
    assert info(1) == ClientChannelInfo(chan(1), "x", "CPP", 0, 99)
    assert info(1) != info(2)
    assert len({info(1), ClientChannelInfo(chan(1), "y")}) == 1
