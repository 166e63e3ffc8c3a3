"""mqlab.explore.journal: the search's visited table as its workers read it, live."""

from __future__ import annotations

import os

from mqlab.explore.journal import Journal, LiveVisited


def test_a_worker_sees_each_record_read_at_its_next_lookup(tmp_path):
    with Journal(str(tmp_path)) as j:
        live = LiveVisited({"a": [(3, 0, frozenset())]}, j.path, j.size, {})
        assert live.get("b") is None
        j.visited("b", (5, 1, frozenset({("consumer-1", "pull", 0, 20)})))
        j.outcome("f1", ("ok", {"lost": 0}))
        assert live.get("b") is None  # noted, not yet written: a record is one frame
        j.flush()
        assert live.get("b") == [(5, 1, frozenset({("consumer-1", "pull", 0, 20)}))]
        assert live.cache == {"f1": ("ok", {"lost": 0})}
        j.visited("a", (2, 0, frozenset()))
        j.flush()
        assert live.get("a") == [(3, 0, frozenset()), (2, 0, frozenset())]
        assert j.size == os.path.getsize(j.path)
        live.close()
    assert not os.path.exists(j.path)


def test_a_frame_half_written_is_read_when_complete(tmp_path):
    with Journal(str(tmp_path)) as j:
        j.visited("x", (1, 0, frozenset()))
        j.flush()
        frame = open(j.path, "rb").read()
    path = tmp_path / "copy"
    path.write_bytes(frame[:-3])
    live = LiveVisited({}, str(path), 0)
    assert live.get("x") is None
    with open(path, "ab") as f:
        f.write(frame[-3:] + frame)
    assert live.get("x") == [(1, 0, frozenset()), (1, 0, frozenset())]
    live.close()


def test_a_journal_this_machine_cannot_open_gives_none(tmp_path):
    assert LiveVisited.open({}, str(tmp_path / "elsewhere"), 0) is None
