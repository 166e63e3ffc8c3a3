"""One level of a search, run by workers on this machine: items claimed in order, records
back as files, read in order as they land.

Mirrors no RocketMQ class. The pool's workers and a local Spark session's Python workers
(``mqlab.explore.runners``) run a level the same way. The driver makes a ``Spool``: a
directory with a FIFO in it. Every worker runs ``claim``: it takes the next item nobody has
taken (it creates ``<i>.claim`` with ``O_EXCL``: exactly one creator succeeds), runs it,
leaves its record as ``<i>.rec`` (written under another name, then renamed: a reader never
sees half a record), writes a byte into the FIFO, and takes the next, until every item is
taken or the driver has left ``stop``. The driver reads ``0.rec``, ``1.rec``, … in order,
sleeping in ``select`` on the FIFO while the next one is not there.

So items start in order, as ``imap`` handed them out, but the driver pays no round trip
per item (no pickled task, no task- and result-handler threads to wake): at consumer_join
depth 12 (653 runs) on a pool of one worker, the driver's CPU went from 0.66-0.70 s with
``imap`` to 0.37-0.40 s, its imports and first level included.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator

from mqlab.explore.tmpdirs import owner_tag

__all__ = ["Spool", "claim", "serve_levels"]

_FIFO = "ready"
_STOP = "stop"


class Spool:
    """The driver's side of one level (module docstring)."""

    def __init__(self, directory: str | None = None) -> None:
        self.path = tempfile.mkdtemp(prefix=f"mqlab-explore-spool-{owner_tag()}-", dir=directory)
        self._rfd = self._wfd = -1
        fifo = os.path.join(self.path, _FIFO)
        try:
            os.mkfifo(fifo)
            self._rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            # our own writer: with none, a FIFO reads as at its end, and select never sleeps
            self._wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except (AttributeError, OSError):  # no FIFOs here: poll every ms instead
            self._close_fds()

    def records(
        self, count: int, running: Callable[[], bool], error: Callable[[], BaseException | None]
    ) -> Iterator[bytes]:
        """The ``count`` records in item order, each as soon as it is there. ``running``:
        whether the workers may still write one; ``error``: why they stopped, if they failed."""
        for i in range(count):
            rec = os.path.join(self.path, f"{i}.rec")
            while True:
                try:
                    with open(rec, "rb") as f:
                        data = f.read()
                    break
                except FileNotFoundError:
                    pass
                if not running() and not os.path.exists(rec):
                    err = error()
                    if err is not None:
                        raise err
                    raise RuntimeError(
                        f"explore: the level's workers ended without item {i}'s record"
                    )
                self._wait()
            yield data

    def _wait(self) -> None:
        if self._rfd < 0:
            time.sleep(0.001)
            return
        ready, _, _ = select.select([self._rfd], [], [], 0.05)
        if ready:
            with contextlib.suppress(BlockingIOError):
                os.read(self._rfd, 65536)

    def stop(self) -> None:
        """Workers take no more items (those running finish theirs)."""
        with open(os.path.join(self.path, _STOP), "w"):
            pass

    def _close_fds(self) -> None:
        for fd in (self._rfd, self._wfd):
            if fd >= 0:
                os.close(fd)
        self._rfd = self._wfd = -1

    def close(self) -> None:
        """Stop the workers, then remove the spool under a name no worker knows.

        A worker may still be between its ``stop`` check and its next ``O_EXCL`` create
        (it checked before ``stop`` was there). Had ``rmtree`` worked on ``path`` itself,
        that create could land between its unlinks and its ``rmdir``: the directory stayed,
        and the worker ran an item twice (CI, at load 13). Renamed first, ``path`` is gone
        at once, and every later create or rename under it fails with
        ``FileNotFoundError``, which ``claim`` takes as the level's end. A file a worker
        still had open may keep the renamed directory; its name keeps the owner tag, so
        ``tmpdirs.sweep`` removes it once this process is gone."""
        self.stop()
        self._close_fds()
        gone = f"{self.path}-closed"
        try:
            os.rename(self.path, gone)
        except FileNotFoundError:
            return
        shutil.rmtree(gone, ignore_errors=True)


def claim(path: str, count: int, run: Callable[[int], bytes]) -> int:
    """A worker's side (module docstring): run the items of spool ``path`` it claims first,
    ``run(i)`` giving item ``i``'s record; how many it ran."""
    stop = os.path.join(path, _STOP)
    try:
        note = os.open(os.path.join(path, _FIFO), os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # no FIFO (the driver polls), or the driver is gone
        note = -1
    done = 0
    try:
        for i in range(count):
            if os.path.exists(stop):
                break
            try:
                os.close(os.open(os.path.join(path, f"{i}.claim"), os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                continue
            except FileNotFoundError:  # the driver closed the spool: the level is over
                break
            data = run(i)
            part = os.path.join(path, f"{i}.part")
            try:
                with open(part, "wb") as f:
                    f.write(data)
                os.rename(part, os.path.join(path, f"{i}.rec"))
            except FileNotFoundError:  # closed while this item ran
                break
            done += 1
            if note >= 0:
                try:
                    os.write(note, b".")
                except BlockingIOError:  # the FIFO is full: the driver has wake-ups to read
                    pass
                except BrokenPipeError:  # the driver read this record and closed the level
                    os.close(note)
                    note = -1
    finally:
        if note >= 0:
            os.close(note)
    return done


def serve_levels(path: str, work: Callable[[bytes], None]) -> int:
    """A long-lived worker (a Spark task that lasts the whole search): wait for level ``n``
    (the driver writes ``<n>.level`` in ``path``, renamed into place), ``work(its bytes)``,
    then level ``n + 1``, until the driver leaves ``done``; how many levels it served."""
    n = 0
    done = os.path.join(path, "done")
    while True:
        level = os.path.join(path, f"{n}.level")
        while not os.path.exists(level):
            if os.path.exists(done) or not os.path.isdir(path):
                return n
            time.sleep(0.001)
        with open(level, "rb") as f:
            work(f.read())
        n += 1
