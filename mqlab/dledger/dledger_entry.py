"""One entry of DLedger's log.

Mirrors ``DLedgerEntry`` (entry, DLedger 0.2.3). Its bytes, in ``DLedgerEntryCoder``'s order
(big-endian, as a Java ``ByteBuffer``)::

    magic     int   4   1 (DLedgerMmapFileStore.MAGIC_1) once stored
    size      int   4   HEADER_SIZE + 4 + len(body) = 48 + len(body)
    index     long  8
    term      long  8
    pos       long  8   the entry's offset in the data files (POS_OFFSET = 24)
    channel   int   4   reserved, 0
    chainCrc  int   4   0: 0.2.3 never computes it
    bodyCrc   int   4   0: 0.2.3 never computes it
    bodySize  int   4   (BODY_OFFSET = 48)
    body      bytes

``equals`` in 0.2.3 compares size, magic, index, term, channel, pos and the body, not the
two CRCs; ``__eq__`` here does the same, and the follower's COMPARE relies on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["DLedgerEntry", "POS_OFFSET", "HEADER_SIZE", "BODY_OFFSET"]

POS_OFFSET = 4 + 4 + 8 + 8
HEADER_SIZE = POS_OFFSET + 8 + 4 + 4 + 4
BODY_OFFSET = HEADER_SIZE + 4


@dataclass(frozen=True, eq=False)
class DLedgerEntry:
    """Mirrors ``DLedgerEntry`` (DLedger 0.2.3). ``size`` is set by :meth:`compute_size_in_bytes`."""

    magic: int = 0
    size: int = 0
    index: int = 0
    term: int = 0
    pos: int = 0
    channel: int = 0
    chain_crc: int = 0
    body_crc: int = 0
    body: bytes | None = None

    def compute_size_in_bytes(self) -> int:
        """``DLedgerEntry#computeSizeInBytes``: ``HEADER_SIZE + 4 + body.length``."""
        if self.body is None:
            raise ValueError("an entry without a body has no size (computeSizeInBytes)")
        return HEADER_SIZE + 4 + len(self.body)

    def with_(self, **changes) -> DLedgerEntry:
        return replace(self, **changes)

    def __eq__(self, other: object) -> bool:  # DLedgerEntry#equals: no CRCs
        if not isinstance(other, DLedgerEntry):
            return False
        return (
            self.size == other.size
            and self.magic == other.magic
            and self.index == other.index
            and self.term == other.term
            and self.channel == other.channel
            and self.pos == other.pos
            and self.body == other.body
        )

    def __hash__(self) -> int:
        return hash(
            (self.size, self.magic, self.index, self.term, self.channel, self.pos, self.body)
        )
