"""A broker upgraded to a DLedger group (``mqlab.conformance.dledger_upgrade``): a real 4.9.3
broker and ``mqlab serve`` take seven messages, stop, and their stores start three DLedger
nodes each; both groups are asked the same requests. No UNEXPLAINED row, and the real
group's answers pinned with exact codes, offsets and msgIds.

What 4.9.3 does (``DLedgerCommitLog#recover``, ``#getData``, ``#getMessage``; the deploy
guide's "Upgrade old cluster"): the old messages keep their commit-log offsets (0 to 0x4BB,
in two 1 KiB files) and queue offsets 0 to 6, and the consumer offset stays 2; the first
entry starts at ``dividedCommitlogOffset`` 2048, the end of the old log's second file, so the
first new message's msgId offset is 2048 + 48 and its queue offset 7; one pull reads across
the divide. One pair of sides for the module (a broker's JVM, then four).
"""

from __future__ import annotations

import pytest

from tests.conformance.test_dledger_rows import _code, _ext, check_rows

#: step -> (the real broker's code, ext fields it must carry)
REAL_ANSWERS: dict[str, tuple[int, dict[str, str]]] = {
    "create_old": (0, {}),
    **{f"send_old_{i}": (0, {"queueId": "0", "queueOffset": str(i)}) for i in range(7)},
    "commit_old": (0, {}),
    "min_offset_leader": (0, {"offset": "0"}),
    "max_offset_leader": (0, {"offset": "7"}),
    "offset_leader": (0, {"offset": "2"}),
    "pull_old_leader": (0, {"nextBeginOffset": "7", "maxOffset": "7", "minOffset": "0"}),
    "send_new_q0": (0, {"queueId": "0", "queueOffset": "7"}),
    "send_new_q1": (0, {"queueId": "1", "queueOffset": "0"}),
    "pull_across": (0, {"nextBeginOffset": "8", "maxOffset": "8"}),
    "max_offset_follower": (0, {"offset": "8"}),
    "offset_follower": (0, {"offset": "2"}),
    "pull_old_follower": (0, {"nextBeginOffset": "8", "maxOffset": "8"}),
}  # fmt: skip
#: each message's commit-log offset (its msgId's last 16 hex digits): five 187-byte messages
#: fill file 0 (935 bytes; a sixth would leave less than 8), two more start file 1024, and
#: the new ones follow the divide: 2048 + 48, then 188 + 48 further
OFFSETS = {
    **{f"send_old_{i}": off for i, off in enumerate((0, 0xBB, 0x176, 0x231, 0x2EC, 0x400, 0x4BB))},
    "send_new_q0": 0x830,
    "send_new_q1": 0x91C,
}  # fmt: skip


@pytest.fixture(scope="module")
def rows(java_runner, tmp_path_factory):
    from mqlab.conformance.dledger_upgrade import run_upgrade_rows

    lines: list[str] = []
    result, notes = run_upgrade_rows(lines.append, workdir=tmp_path_factory.mktemp("upgrade"))
    return {r.step: r for r in result.rows}, result, notes, lines


@pytest.mark.conformance
def test_no_unexplained_row_and_no_wait_gave_up(rows) -> None:
    check_rows(*rows, REAL_ANSWERS)


@pytest.mark.conformance
def test_the_real_groups_answers_code_by_code(rows) -> None:
    by_step = rows[0]
    for step, (code, ext) in REAL_ANSWERS.items():
        text = by_step[step].real
        assert _code(text) == code, (step, text)
        got = _ext(text)
        assert {k: got.get(k) for k in ext} == ext, (step, text)


@pytest.mark.conformance
def test_old_messages_keep_their_offsets_and_new_ones_follow_the_divide(rows) -> None:
    """The msgIds' offsets on both sides; the pulls' sizes: seven old messages (1,309 bytes),
    and across the divide two old ones and the new one (187 + 187 + 188)."""
    by_step = rows[0]
    for side in ("real", "mqlab"):
        got = {s: int(_ext(getattr(by_step[s], side))["msgId"][-16:], 16) for s in OFFSETS}
        assert got == OFFSETS, side
        assert " body[1309]=" in getattr(by_step["pull_old_leader"], side), side
        assert " body[562]=" in getattr(by_step["pull_across"], side), side
        assert " body[1497]=" in getattr(by_step["pull_old_follower"], side), side
