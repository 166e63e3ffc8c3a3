"""Codec shortcuts give the same results as the plain definitions.

docs/reference.md §4.5 (offset message ids), §4.6 (batch body), §10.6 "Batch" (comma-joined ids).
"""

from __future__ import annotations

import struct

import pytest

from mqlab.common.message import Message
from mqlab.common.message_decoder import (
    MessageDecodeError,
    create_message_id,
    create_message_ids,
    decode_batch_body_raw,
    encode_batch_body,
)

HOSTS = ["127.0.0.1:10911", "100.81.0.250:10911", "[::1]:10911", "[fe80::1]:1"]
OFFSETS = [0, 1, 0x489A3AA09E, 2**63 - 1, -1, -(2**63)]


def test_batch_ids_equal_one_id_per_message():
    """create_message_ids gives create_message_id of every (host, offset), hosts changing
    between runs, IPv4 and IPv6, int64 edges: 100.81.0.250:10911 @ 0x489A3AA09E →
    645100FA00002A9F000000489A3AA09E (docs/reference.md §4.5)."""
    pairs = [(h, o) for o in OFFSETS for h in HOSTS] + [(HOSTS[0], o) for o in OFFSETS]
    assert create_message_ids(pairs) == [create_message_id(h, o) for h, o in pairs]
    assert create_message_ids([(HOSTS[1], 0x489A3AA09E)]) == ["645100FA00002A9F000000489A3AA09E"]


@pytest.mark.parametrize("offset", [2**63, -(2**63) - 1])
def test_batch_ids_reject_offsets_outside_int64_like_the_single_id(offset):
    """An offset outside int64 raises struct.error from both functions (docs/reference.md §4.5)."""
    with pytest.raises(struct.error):
        create_message_id(HOSTS[0], offset)
    with pytest.raises(struct.error):
        create_message_ids([(HOSTS[0], offset)])


def _batch() -> bytes:
    msgs = [
        Message("T", b"", tags="TagA"),
        Message("T", "ünïcode".encode(), keys=["k1", "k2"], flag=7),
        Message("T", b"x" * 300, properties={"a": "b"}, wait_store_msg_ok=False),
    ]
    return encode_batch_body(msgs)


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_batch_body_walk_is_the_same_for_bytes_bytearray_and_memoryview(kind):
    """decode_batch_body_raw reads FLAG, BODY and the properties string of each message
    the same way whatever buffer type holds the body (docs/reference.md §4.6)."""
    body = _batch()
    got = decode_batch_body_raw(kind(body))
    assert got == [
        (0, b"", "WAIT\x01true\x02TAGS\x01TagA"),  # HashMap order, as a Java client's
        (7, "ünïcode".encode(), "KEYS\x01k1 k2\x02WAIT\x01true"),
        (0, b"x" * 300, "a\x01b\x02WAIT\x01false"),
    ]
    assert all(type(b) is bytes for _, b, _ in got)


@pytest.mark.parametrize("cut", [5, 19, 25, 26, 60])
def test_truncated_batch_body_raises(cut):
    """A batch body cut anywhere inside an entry raises MessageDecodeError (docs/reference.md §4.6)."""
    with pytest.raises(MessageDecodeError):
        decode_batch_body_raw(_batch()[:cut])
