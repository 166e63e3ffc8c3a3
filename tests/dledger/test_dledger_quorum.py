"""The quorum rule of QuorumAckChecker#doWork and MemberState#isQuorum (DLedger 0.2.3)."""

from __future__ import annotations

import pytest

from mqlab.dledger.quorum import is_quorum, quorum_index


@pytest.mark.parametrize(
    "marks, expected",
    [
        ([7, 5, -1], 5),
        ([-1, -1, 3], -1),
        ([4, 4, 4], 4),
        ([9, 9, 4, 3, 0], 4),
        ([9, 0, 0, 0, 9], 0),
        ([2], 2),
        ([5, 3], 3),
    ],
)
def test_quorum_index_is_what_a_majority_holds(marks, expected):
    """The (size/2)-th largest mark: 3 of 5, 2 of 3, 2 of 2 peers hold it."""
    assert quorum_index(marks) == expected


def test_quorum_index_needs_marks():
    """No marks: ValueError."""
    with pytest.raises(ValueError, match="at least one water mark"):
        quorum_index([])


def test_is_quorum_counts_a_strict_majority():
    """isQuorum(num) is num >= peerSize/2 + 1: 2 of 3, 3 of 5, 2 of 2 (not 1)."""
    assert [is_quorum(k, 3) for k in range(4)] == [False, False, True, True]
    assert [is_quorum(k, 5) for k in range(6)] == [False, False, False, True, True, True]
    assert [is_quorum(k, 2) for k in range(3)] == [False, False, True]
