"""The committed index a group's water marks give: the quorum rule, alone.

Mirrors the quorum computation of ``DLedgerEntryPusher.QuorumAckChecker#doWork`` (DLedger
0.2.3); mechanisms.md "DLedger replication" step 4. Every peer's water mark (the highest
index it has acknowledged in this term, -1 for none; the leader's own is its ledger end) is
sorted from high to low, and the one at position ``size / 2`` is the quorum index: the
highest index that a majority (``size / 2 + 1`` peers, ``MemberState#isQuorum``) holds.

    3 peers, marks [7, 5, -1]      -> sorted [7, 5, -1], position 1 -> 5
    5 peers, marks [9, 9, 4, 3, 0] -> position 2 -> 4

Only marks of the leader's current term count (``peerWaterMarksByTerm``); the caller passes
those. This is the rule a planted mutant breaks when it counts a minority as a quorum.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["quorum_index", "is_quorum"]


def is_quorum(num: int, peer_size: int) -> bool:
    """``MemberState#isQuorum``: ``num >= peerSize / 2 + 1`` (integer division)."""
    return num >= peer_size // 2 + 1


def quorum_index(water_marks: Iterable[int]) -> int:
    """The index a majority holds: the ``len // 2``-th largest water mark.

    Raises:
        ValueError: no water marks.
    """
    marks = sorted(water_marks, reverse=True)
    if not marks:
        raise ValueError("quorum_index needs at least one water mark")
    return marks[len(marks) // 2]
