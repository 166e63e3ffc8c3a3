"""The ``checkpoint`` file of a simulated DLedger node, and a restart that reads it back.

0.2.3's ``DLedgerMmapFileStore.FlushDataService`` runs a pass every ``flushFileInterval``
(10 ms) and writes ``committedIndex`` and ``endIndex`` to ``checkpoint`` at the first pass
after more than ``checkPointInterval`` (3 000 ms) since the last write (``#persistCheckPoint``),
so every 3 010 ms from the node's start; ``#shutdown`` writes it too. ``#recover`` reads the
committed index back through ``#updateCommittedIndex`` (at most the ledger end).
"""

from __future__ import annotations

from mqlab.dledger.dledger_config import DLedgerConfig
from mqlab.dledger.dledger_server import check_point_period_ms
from mqlab.dledger.group import DLedgerGroup


def checkpoint(g: DLedgerGroup, node_id: str) -> str | None:
    s = g.server(node_id)
    return s.disk.get(s.store.check_point_path)


def committed(g: DLedgerGroup) -> dict[str, tuple[int, int]]:
    """Each node's (ledger end index, committed index)."""
    return {i: (s["ledger_end_index"], s["committed_index"]) for i, s in g.state().items()}


def five_entries_two_after_the_checkpoint() -> DLedgerGroup:
    """Seed 1 elects n2 at 342 ms; 3 entries appended at 370 ms (the followers learn the
    commit from n2's COMMIT push at 1 385), the checkpoints at 3 010 ms, then 2 more entries,
    committed on every node by 5 000 ms (indexes 0-4); the next checkpoints are at 6 020."""
    g = DLedgerGroup(3, seed=1)
    g.run_until(lambda: g.leader() == "n2", 20_000)
    g.advance(20)
    for i in range(3):
        g.append(b"before-%d" % i)
    g.advance(2_000 - g.now)
    assert committed(g) == {i: (2, 2) for i in g.ids}
    assert all(checkpoint(g, i) is None for i in g.ids)
    g.advance(3_010 - g.now)
    assert {i: checkpoint(g, i) for i in g.ids} == {
        i: "committedIndex=2\nendIndex=2\n" for i in g.ids
    }
    for i in range(2):
        g.append(b"after-%d" % i)
    g.advance(5_000 - g.now)
    assert committed(g) == {i: (4, 4) for i in g.ids}
    assert checkpoint(g, "n0") == "committedIndex=2\nendIndex=2\n"
    return g


def test_the_checkpoint_period_is_the_first_flush_pass_after_3_s():
    """3 000 ms and 10 ms passes: 3 010; a 1 000 ms interval with 300 ms passes: 1 200."""
    assert check_point_period_ms(DLedgerConfig()) == 3_010
    cfg = DLedgerConfig(check_point_interval=1_000, flush_file_interval=300)
    assert check_point_period_ms(cfg) == 1_200


def test_a_killed_follower_restarts_with_the_committed_index_of_its_last_checkpoint():
    """n0, killed at 5 000 ms with entries 0-4 committed in its memory, restarts at 5 010
    with ledger end 4 and committed index 2 (its checkpoint of 3 010), not -1 as before and
    not 4; n2's COMMIT push brings it back to 4, and its next checkpoint, 3 010 ms after its
    restart, says so."""
    g = five_entries_two_after_the_checkpoint()
    g.kill("n0")
    g.advance(10)
    g.restart("n0")
    assert committed(g)["n0"] == (4, 2)
    [startup] = [e for e in g.trace.select(component="DLedgerServer", step="startup", node="n0")
                 if e.t_ms == 5_010]  # fmt: skip
    assert (startup.fields["ledger_end_index"], startup.fields["committed_index"]) == (4, 2)
    g.advance(8_019 - g.now)
    assert committed(g)["n0"] == (4, 4)
    assert checkpoint(g, "n0") == "committedIndex=2\nendIndex=2\n"  # not written since
    g.advance(1)
    assert checkpoint(g, "n0") == "committedIndex=4\nendIndex=4\n"


def test_a_node_killed_before_its_first_checkpoint_restarts_with_no_committed_index():
    """Killed at 2 000 ms (its first checkpoint would be at 3 010) with entry 0 committed
    in its memory: no ``checkpoint`` file, so it restarts with committed index -1."""
    g = DLedgerGroup(3, seed=1)
    g.run_until(lambda: g.leader() == "n2", 20_000)
    g.advance(20)
    g.append(b"one")
    g.advance(2_000 - g.now)
    assert committed(g)["n0"] == (0, 0)
    g.kill("n0")
    g.restart("n0")
    assert checkpoint(g, "n0") is None
    assert committed(g)["n0"] == (0, -1)


def test_a_graceful_stop_writes_the_checkpoint():
    """``DLedgerMmapFileStore#shutdown`` persists the checkpoint: n0 stopped gracefully at
    5 000 ms restarts with committed index 4."""
    g = five_entries_two_after_the_checkpoint()
    g.driver.stop_node("n0", graceful=True)
    assert checkpoint(g, "n0") == "committedIndex=4\nendIndex=4\n"
    g.restart("n0")
    assert committed(g)["n0"] == (4, 4)
