"""Tests for mqlab.broker.producer_manager (docs/reference.md §10.5 producer registration, §9 expiry 120 s)."""

from __future__ import annotations

from mqlab.broker.consumer_manager import ClientChannelInfo
from mqlab.broker.producer_manager import ProducerManager
from mqlab.runtime.context import Channel


def chan(i: int) -> Channel:
    return Channel(i, "127.0.0.1:10911", f"10.0.0.{i}:6{i:04d}", f"producer-{i}")


def info(i: int) -> ClientChannelInfo:
    return ClientChannelInfo(chan(i), f"10.0.0.{i}@{i}", "JAVA", 401, 0)


def test_register_and_refresh():
    """New channel is added and indexed by client id; a repeat heartbeat refreshes its timestamp."""
    pm = ProducerManager()
    assert pm.register_producer("pg", info(1), 100) is True
    assert pm.register_producer("pg", info(1), 30100) is False
    assert pm.get_group_channel_table()["pg"][chan(1)].last_update_timestamp == 30100
    assert pm.find_channel("10.0.0.1@1") == chan(1)


def test_unregister_last_removes_group():
    """UNREGISTER_CLIENT of the last producer removes the group (ClientManageProcessorTest)."""
    pm = ProducerManager()
    pm.register_producer("pg", info(1), 0)
    pm.register_producer("pg", info(2), 0)
    pm.unregister_producer("pg", info(1))
    assert list(pm.group_channel_table["pg"]) == [chan(2)]
    pm.unregister_producer("pg", info(2))
    assert "pg" not in pm.group_channel_table
    assert pm.find_channel("10.0.0.2@2") is None


def test_scan_expires_after_120s():
    """Silent for 120 000 ms stays; 120 001 is removed and returned; the empty group remains (Java)."""
    pm = ProducerManager()
    pm.register_producer("pg", info(1), 0)
    assert pm.scan_not_active_channel(120000) == []
    assert pm.scan_not_active_channel(120001) == [chan(1)]
    assert pm.group_channel_table == {"pg": {}}
    assert pm.find_channel("10.0.0.1@1") is None


def test_channel_close_event():
    """A closed channel is removed from every producer group."""
    pm = ProducerManager()
    pm.register_producer("pg1", info(1), 0)
    pm.register_producer("pg2", info(1), 0)
    pm.do_channel_close_event(chan(1).remote_address, chan(1))
    assert pm.group_channel_table == {"pg1": {}, "pg2": {}}


def test_get_available_channel_round_robin_skips_closed():
    """Round-robin from counter+1; closed channels are skipped; None for unknown groups."""
    pm = ProducerManager()
    for i in (1, 2, 3):
        pm.register_producer("pg", info(i), 0)
    assert [pm.get_available_channel("pg") for _ in range(3)] == [chan(2), chan(3), chan(1)]
    table = pm.group_channel_table["pg"]
    next(iter(table)).closed = True  # chan(1)
    assert pm.get_available_channel("pg") == chan(2)
    assert pm.get_available_channel("nope") is None
    assert pm.get_available_channel(None) is None
