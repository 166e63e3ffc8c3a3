"""mqlab.explore.spool: a level's items claimed in order by workers, records read in order."""

from __future__ import annotations

import os
import threading
import time

import pytest

from mqlab.explore.spool import Spool, claim


def test_two_workers_claim_each_item_once_and_records_come_in_order(tmp_path):
    spool = Spool(str(tmp_path))
    ran: dict[int, str] = {}
    # each worker's first item waits for the other's: at load 13 in CI worker "a" ran all
    # 20 before "b" was scheduled, and the test meant to show two workers sharing a level
    both = threading.Barrier(2, timeout=30)

    def worker(name: str) -> None:
        def run(i: int) -> bytes:
            if name not in ran.values():
                both.wait()
            ran[i] = name
            time.sleep(0.002 * (i % 3))  # records land out of order
            return f"record {i}".encode()

        claim(spool.path, 20, run)

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    got = list(spool.records(20, lambda: any(t.is_alive() for t in threads), lambda: None))
    assert got == [f"record {i}".encode() for i in range(20)]
    assert sorted(ran) == list(range(20)) and set(ran.values()) == {"a", "b"}
    spool.close()
    assert not os.path.exists(spool.path)


def test_after_stop_a_worker_takes_no_more_items(tmp_path):
    spool = Spool(str(tmp_path))
    spool.stop()
    assert claim(spool.path, 5, lambda i: b"x") == 0
    spool.close()


def test_workers_that_end_without_a_record_are_an_error_not_a_hang(tmp_path):
    spool = Spool(str(tmp_path))
    assert claim(spool.path, 1, lambda i: b"only item 0") == 1
    reader = spool.records(2, lambda: False, lambda: None)
    assert next(reader) == b"only item 0"
    with pytest.raises(RuntimeError, match="ended without item 1's record"):
        next(reader)
    failed = spool.records(3, lambda: False, lambda: ValueError("a worker failed"))
    next(failed)
    with pytest.raises(ValueError, match="a worker failed"):
        next(failed)
    spool.close()


def test_a_driver_that_closes_the_level_between_a_record_and_its_wake_up_is_no_error(tmp_path):
    # CI, spark group: the driver read the last record as soon as it was renamed into place
    # and closed the FIFO before the worker's wake-up byte; os.write raised BrokenPipeError
    spool = Spool(str(tmp_path))

    def run(i: int) -> bytes:
        spool._close_fds()  # the driver is gone from the FIFO; the directory is still there
        return f"record {i}".encode()

    assert claim(spool.path, 2, run) == 2
    assert [open(os.path.join(spool.path, f"{i}.rec"), "rb").read() for i in (0, 1)] == [
        b"record 0",
        b"record 1",
    ]
    spool.close()


def test_a_worker_late_to_the_stop_cannot_keep_the_closed_spool(tmp_path, monkeypatch):
    # a worker that checked for ``stop`` just before close() wrote it creates its next claim
    # while rmtree runs: at CI's load 13 that create came between rmtree's unlinks and its
    # rmdir, and the spool directory stayed (test above, ``assert not os.path.exists``)
    spool = Spool(str(tmp_path))
    assert claim(spool.path, 2, lambda i: b"x") == 2
    path = spool.path
    late: list[str] = []
    real_rmdir = os.rmdir

    def rmdir(p, *args, **kwargs):
        if not late:
            try:
                os.close(os.open(os.path.join(path, "2.claim"), os.O_CREAT | os.O_EXCL))
                late.append("created")
            except FileNotFoundError:
                late.append("FileNotFoundError")
        return real_rmdir(p, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir)
    spool.close()
    monkeypatch.undo()
    assert late == ["FileNotFoundError"]
    assert not os.path.exists(path)
    assert os.listdir(tmp_path) == []
