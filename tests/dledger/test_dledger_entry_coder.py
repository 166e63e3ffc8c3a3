"""DLedgerEntryCoder: an entry's bytes and its index record (entry, DLedger 0.2.3)."""

from __future__ import annotations

import pytest

from mqlab.dledger import dledger_entry_coder as coder
from mqlab.dledger.dledger_entry import BODY_OFFSET, HEADER_SIZE, POS_OFFSET, DLedgerEntry


def test_layout_constants():
    """POS_OFFSET 24, HEADER_SIZE 44, BODY_OFFSET 48, as DLedgerEntry declares them."""
    assert (POS_OFFSET, HEADER_SIZE, BODY_OFFSET) == (24, 44, 48)


def test_encode_exact_bytes():
    """magic, size, index, term, pos, channel, chainCrc, bodyCrc, bodySize, body; big-endian.
    The same bytes as 0.2.3's DLedgerEntryCoder#encode gives (run in jshell on dledger-0.2.3.jar)."""
    e = DLedgerEntry(magic=1, index=3, term=2, pos=159, body=b"hello")
    assert coder.encode(e).hex() == (
        "00000001"  # magic
        "00000035"  # size 53 = 48 + 5
        "0000000000000003"  # index
        "0000000000000002"  # term
        "000000000000009f"  # pos 159
        "00000000"  # channel
        "00000000"  # chainCrc
        "00000000"  # bodyCrc
        "00000005"  # body size
        "68656c6c6f"
    )


def test_encode_index_exact_bytes():
    """An index record is magic, pos, size, index, term: 32 bytes (as 0.2.3's encodeIndex gives)."""
    record = coder.encode_index(pos=159, size=53, magic=1, index=3, term=2)
    assert record.hex() == ("00000001000000000000009f0000003500000000000000030000000000000002")
    assert coder.decode_index(record) == (1, 159, 53, 3, 2)


def test_decode_round_trip_and_equality_ignores_crcs():
    """decode(encode(e)) equals e with its size set; equals skips chainCrc and bodyCrc."""
    e = DLedgerEntry(magic=1, index=7, term=4, pos=1000, channel=0, body=b"\x00\xff")
    d = coder.decode(coder.encode(e))
    assert (d.size, d.index, d.term, d.pos, d.body) == (50, 7, 4, 1000, b"\x00\xff")
    assert d == e.with_(size=50)
    assert d == d.with_(chain_crc=9, body_crc=9)
    assert d != d.with_(pos=1001)
    assert d != d.with_(body=b"\x00\xfe")
    assert coder.decode(coder.encode(e), read_body=False).body is None


def test_decode_rejects_short_bytes():
    """Fewer than 48 bytes, or a body cut short, is a ValueError."""
    data = coder.encode(DLedgerEntry(magic=1, body=b"abcdef"))
    with pytest.raises(ValueError, match="needs 48 header bytes, got 47"):
        coder.decode(data[:47])
    with pytest.raises(ValueError, match="bodySize 6 but 3 bytes"):
        coder.decode(data[:51])
