"""FileSyncer: the thread ``mqlab serve``'s stores hand their periodic forces to
(mqlab/runtime/file_sync.py)."""

import mmap
import os

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
