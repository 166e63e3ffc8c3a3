"""FileSyncer: the thread ``mqlab serve``'s stores hand their periodic forces to
(mqlab/runtime/file_sync.py)."""

import mmap
import os
import threading

from mqlab.runtime.file_sync import FileSyncer


def test_syncs_each_submitted_file_skips_a_deleted_one_and_close_finishes_the_queue(tmp_path):
    """Two files written through a mapping and one that no longer exists: close() returns
    after both were synced; the missing one is skipped without an error."""
    paths = []
    for name in ("a", "b"):
        path = tmp_path / name
        path.write_bytes(b"\0" * 4096)
        with open(path, "r+b") as f, mmap.mmap(f.fileno(), 4096) as mm:
            mm[:5] = b"hello"
        paths.append(str(path))
    syncer = FileSyncer()
    syncer.submit(str(tmp_path / "gone"))
    for p in paths:
        syncer.submit(p)
    syncer.close()
    assert syncer.synced == 2
    assert syncer.errors == []
    assert not syncer._thread.is_alive()
    assert [open(p, "rb").read(5) for p in paths] == [b"hello", b"hello"]
    syncer.close()  # idempotent
    assert os.path.exists(paths[0])


def test_done_is_posted_after_a_sync_that_started_after_the_submission(tmp_path, monkeypatch):
    """A file submitted while its sync runs is synced once more, and its callbacks (two
    submissions, merged) are posted after that second sync, not the first; a file that is
    gone posts nothing."""
    from mqlab.runtime import file_sync

    started, release = threading.Event(), threading.Event()
    real_sync = file_sync._SYNC

    def slow_sync(fd):
        started.set()
        assert release.wait(10)
        real_sync(fd)

    monkeypatch.setattr(file_sync, "_SYNC", slow_sync)
    path = tmp_path / "f"
    path.write_bytes(b"\0" * 4096)
    posted = []
    syncer = FileSyncer(post=lambda fn: posted.append((fn(), syncer.synced)))
    syncer.submit(str(tmp_path / "gone"), lambda: "gone")
    syncer.submit(str(path), lambda: "first")
    assert started.wait(10)  # the first sync of f is running
    syncer.submit(str(path), lambda: "second")
    syncer.submit(str(path), lambda: "third")
    release.set()
    syncer.close()
    assert posted == [("first", 1), ("second", 2), ("third", 2)]
