"""An entry's bytes and its 32-byte index record.

Mirrors ``DLedgerEntryCoder#encode``, ``#encodeIndex`` and ``#decode`` (entry, DLedger 0.2.3).
The layout is in ``dledger_entry``'s essay. An index record, one per entry at
``index * 32`` in the index files: magic (int), pos (long), size (int), index (long),
term (long).

``encode`` computes the size from the body as ``computeSizeInBytes`` does, so an entry
handed in with a stale ``size`` is written with the right one. ``decode`` reads the body
only when its length is below ``size`` (Java's check), and raises ``ValueError`` on bytes
too short for what the header says.
"""

from __future__ import annotations

import struct

from mqlab.dledger.dledger_entry import BODY_OFFSET, DLedgerEntry

__all__ = ["encode", "encode_index", "decode", "decode_index", "INDEX_UNIT_SIZE"]

INDEX_UNIT_SIZE = 32
_HEADER = struct.Struct(">iiqqqiiii")  # magic size index term pos channel chainCrc bodyCrc bodySize
_INDEX = struct.Struct(">iqiqq")  # magic pos size index term


def encode(entry: DLedgerEntry) -> bytes:
    """The entry's bytes (``DLedgerEntryCoder#encode``)."""
    size = entry.compute_size_in_bytes()
    assert entry.body is not None
    return (
        _HEADER.pack(
            entry.magic,
            size,
            entry.index,
            entry.term,
            entry.pos,
            entry.channel,
            entry.chain_crc,
            entry.body_crc,
            len(entry.body),
        )  # fmt: skip
        + entry.body
    )


def encode_index(pos: int, size: int, magic: int, index: int, term: int) -> bytes:
    """One 32-byte index record (``DLedgerEntryCoder#encodeIndex``)."""
    return _INDEX.pack(magic, pos, size, index, term)


def decode(data: bytes | bytearray | memoryview, read_body: bool = True) -> DLedgerEntry:
    """An entry from its bytes (``DLedgerEntryCoder#decode``).

    Raises:
        ValueError: fewer than 48 header bytes, or fewer body bytes than ``bodySize``.
    """
    if len(data) < BODY_OFFSET:
        raise ValueError(f"a DLedger entry needs {BODY_OFFSET} header bytes, got {len(data)}")
    magic, size, index, term, pos, channel, chain_crc, body_crc, body_size = _HEADER.unpack_from(
        data, 0
    )
    body = None
    if read_body and body_size < size:
        if len(data) < BODY_OFFSET + body_size:
            raise ValueError(
                f"entry index={index}: bodySize {body_size} but {len(data) - BODY_OFFSET} bytes"
            )
        body = bytes(data[BODY_OFFSET : BODY_OFFSET + body_size])
    return DLedgerEntry(magic, size, index, term, pos, channel, chain_crc, body_crc, body)


def decode_index(data: bytes | bytearray | memoryview) -> tuple[int, int, int, int, int]:
    """``(magic, pos, size, index, term)`` of one index record."""
    if len(data) < INDEX_UNIT_SIZE:
        raise ValueError(f"an index record is {INDEX_UNIT_SIZE} bytes, got {len(data)}")
    return _INDEX.unpack_from(data, 0)
