"""java.util.HashMap's iteration order, where RocketMQ 4.9.3 lets it show (JDK 17 checked)."""

from mqlab.common.java_hash_map import hash_map_order, java_long_hash


def test_broker_properties_order_is_bucket_order():
    """TAGS (bucket 14) after CLUSTER (12) in a 16-slot table: a 4.9.3 broker stores
    CLUSTER first; UNIQ_KEY shares bucket 12 with CLUSTER and keeps insertion order."""
    assert hash_map_order(["TAGS", "CLUSTER"]) == ["CLUSTER", "TAGS"]
    assert hash_map_order(["TAGS", "UNIQ_KEY", "CLUSTER"]) == ["UNIQ_KEY", "CLUSTER", "TAGS"]
    assert hash_map_order(["TAGS", "CLUSTER", "UNIQ_KEY"]) == ["CLUSTER", "UNIQ_KEY", "TAGS"]


def test_long_keys_use_long_hash_code():
    """Long#hashCode is value ^ (value >>> 32): broker ids 1 and 16 in a 16-slot table land
    in buckets 1 and 0, so 16 comes first (getSystemTopicList's pick)."""
    assert java_long_hash(1) == 1 and java_long_hash(-1) == 0
    assert hash_map_order([1, 16], hash_code=java_long_hash) == [16, 1]
