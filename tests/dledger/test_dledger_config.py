"""DLedgerConfig: 0.2.3's defaults and property names (DLedgerConfig, DLedger 0.2.3)."""

from __future__ import annotations

import pytest

from mqlab.dledger.dledger_config import PROPERTY_KEYS, DLedgerConfig, parse_peers


def test_defaults_are_0_2_3s():
    """Every timing default is DLedgerConfig's field initializer in 0.2.3."""
    c = DLedgerConfig()
    assert (c.group, c.self_id, c.peers) == ("default", "n0", "n0-localhost:20911")
    assert c.store_base_dir == "/tmp/dledgerstore"
    assert c.heart_beat_time_interval_ms == 2000
    assert c.max_heart_beat_leak == 3
    assert (c.min_vote_interval_ms, c.max_vote_interval_ms) == (300, 1000)
    assert (c.max_wait_ack_time_ms, c.max_push_time_out_ms) == (2500, 1000)
    assert c.max_pending_requests_num == 10000
    assert c.mapped_file_size_for_entry_data == 1073741824
    assert c.mapped_file_size_for_entry_index == 32 * 5 * 1024 * 1024
    assert (c.min_take_leadership_vote_interval_ms, c.max_take_leadership_vote_interval_ms) == (
        30,
        100,
    )
    assert c.max_leadership_transfer_wait_index == 1000
    assert (c.is_enable_batch_push, c.max_batch_push_size) == (False, 4096)
    assert c.check_point_interval == 3000 and c.flush_file_interval == 10
    assert c.store_type == "FILE" and c.enable_leader_elector is True


def test_paths_follow_store_base_dir_and_self_id():
    """getDefaultPath is storeBaseDir/dledger-<selfId>, with data/ and index/ under it."""
    c = DLedgerConfig(store_base_dir="/s", self_id="n1", peers="n0-a:1;n1-b:2")
    assert c.get_default_path() == "/s/dledger-n1"
    assert c.get_data_store_path() == "/s/dledger-n1/data"
    assert c.get_index_store_path() == "/s/dledger-n1/index"


def test_from_properties_uses_java_names():
    """Keys are the Java property names; enableBatchPush sets is_enable_batch_push."""
    c = DLedgerConfig.from_properties(
        {
            "group": "g1",
            "selfId": "n1",
            "peers": "n0-127.0.0.1:40911;n1-127.0.0.1:40912",
            "heartBeatTimeIntervalMs": "500",
            "maxHeartBeatLeak": "4",
            "enableBatchPush": "true",
            "diskSpaceRatioToForceClean": "0.9",
        }
    )
    assert (c.group, c.self_id, c.heart_beat_time_interval_ms, c.max_heart_beat_leak) == (
        "g1",
        "n1",
        500,
        4,
    )
    assert c.is_enable_batch_push is True and c.disk_space_ratio_to_force_clean == 0.9
    assert PROPERTY_KEYS["minVoteIntervalMs"] == "min_vote_interval_ms"
    assert PROPERTY_KEYS["preferredLeaderIds"] == "preferred_leader_ids"


@pytest.mark.parametrize(
    "props, message",
    [
        ({"heartbeatIntervalMs": "1"}, "unknown DLedgerConfig property 'heartbeatIntervalMs'"),
        ({"maxHeartBeatLeak": "three"}, "'maxHeartBeatLeak': expected an integer"),
        ({"enableLeaderElector": "yes"}, "'enableLeaderElector': expected true/false"),
    ],
)
def test_from_properties_rejects_bad_input(props, message):
    """An unknown key or a value of the wrong type is a ValueError naming the key."""
    with pytest.raises(ValueError, match=message):
        DLedgerConfig.from_properties(props)


def test_peers_parse_as_member_state_does():
    """The id ends at the first '-'; the address keeps the rest, in the order given."""
    assert parse_peers("n0-127.0.0.1:40911;n1-host-b:40912") == {
        "n0": "127.0.0.1:40911",
        "n1": "host-b:40912",
    }
    with pytest.raises(ValueError, match="peers entry 'n0' is not id-address"):
        parse_peers("n0")
    with pytest.raises(ValueError, match="selfId 'n3' is not among peers"):
        DLedgerConfig(self_id="n3", peers="n0-a:1")
    with pytest.raises(ValueError, match="maxVoteIntervalMs"):
        DLedgerConfig(min_vote_interval_ms=500, max_vote_interval_ms=500)
