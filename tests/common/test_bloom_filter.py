"""BloomFilter (filter/util, RocketMQ 4.9.3): sizes and a group's bit positions."""

import pytest

from mqlab.common.bloom_filter import BloomFilter, murmur3_128_as_long


def test_broker_default_filter_size():
    """createByFn(20, 32), the broker's defaults: 3 hash functions over 112 bits."""
    b = BloomFilter(20, 32)
    assert (b.k, b.m) == (3, 112)
    assert (BloomFilter(10, 128).k, BloomFilter(10, 128).m) == (4, 616)


def test_bit_positions_as_a_4_9_3_broker_computed_them():
    """queryCq on a 4.9.3 broker showed bitPos [103,54,106] for group SG on topic cfsql."""
    assert BloomFilter(20, 32).generate("SG#cfsql") == {"bitNum": 112, "bitPos": [103, 54, 106]}


def test_murmur3_128_blocks_and_tail():
    """Guava's murmur3_128 asLong: 0 for no bytes; a 16-byte block plus a tail differs from
    the tail alone (both code paths run)."""
    assert murmur3_128_as_long(b"") == 0
    a, b = murmur3_128_as_long(b"0123456789abcdefXY"), murmur3_128_as_long(b"XY")
    assert a != b and -(2**63) <= a < 2**63 and -(2**63) <= b < 2**63


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="less than 100"):
        BloomFilter(100, 32)
    with pytest.raises(ValueError, match="greater than 0"):
        BloomFilter(20, 0)
