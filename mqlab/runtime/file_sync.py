"""A thread that forces files to disk for the network driver's stores.

Stands in for the threads of 4.9.3's flush services (``CommitLog.FlushRealTimeService``,
``DefaultMessageStore.FlushConsumeQueueService``; store, RocketMQ 4.9.3): each forces its
files from its own thread, so no send waits for it. ``mqlab serve`` sets
``DefaultMessageStore.background_sync`` to ``FileSyncer.submit``; the store's periodic flush
passes then hand each file they would force here instead of calling ``mmap.flush`` on the
event loop's thread.

Why a thread and ``fdatasync``: ``mmap.flush`` (``msync``) holds the GIL for the whole call
(4.8 ms a pass on a loaded machine, every 500 ms), so on another thread it would still stop
the loop; ``os.fdatasync`` on a descriptor of the same file releases the GIL and, on Linux,
writes the pages dirtied through the mapping too (one page cache per file). A file deleted
meanwhile (the clean service) is skipped.

A submission may carry a ``done`` callback: it runs once an ``fdatasync`` of that file that
*started after* the submission has returned, posted to the owner's thread (``post``: the
event loop's ``call_soon_threadsafe``). The store moves its flushed positions there, so,
as in 4.9.3 (``MappedFile#flush`` sets ``flushedPosition`` after ``force()``), a flushed
position never covers bytes that are not yet on disk. A failed or skipped sync calls no
callback: the position stays, and the next pass hands the file over again. The simulation
never uses this: its flushes stay inline, in simulated time.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable

__all__ = ["FileSyncer"]

log = logging.getLogger(__name__)

_SYNC = getattr(os, "fdatasync", os.fsync)
_STOP = ""

Done = Callable[[], None]


def _call(fn: Done) -> None:
    fn()


class FileSyncer:
    """One daemon thread syncing files by name, each at most once per pending request.

    Args:
        name: the thread's name.
        post: how a ``done`` callback reaches its owner's thread (for the network driver,
            ``loop.call_soon_threadsafe``); by default it runs on the syncing thread.
    """

    def __init__(
        self, name: str = "mqlab-file-sync", post: Callable[[Done], object] | None = None
    ) -> None:
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        #: path -> the callbacks of its submissions since its sync last started
        self._pending: dict[str, list[Done]] = {}
        self._lock = threading.Lock()
        self._post: Callable[[Done], object] = post or _call
        #: files synced, and failures (other than a file already deleted)
        self.synced = 0
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, path: str, done: Done | None = None) -> None:
        """Sync ``path`` soon (not again if it is still waiting); then post ``done``."""
        with self._lock:
            waiting = self._pending.get(path)
            if waiting is None:
                self._pending[path] = waiting = []
                self._queue.put(path)
            if done is not None:
                waiting.append(done)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            if path == _STOP:
                return
            with self._lock:  # what is submitted from here on waits for the next sync
                callbacks = self._pending.pop(path, [])
            if self._sync(path):
                for done in callbacks:
                    try:
                        self._post(done)
                    except RuntimeError:  # the owner's loop is closed: nobody to tell
                        break

    def _sync(self, path: str) -> bool:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        except OSError as e:
            self._error(path, e)
            return False
        try:
            _SYNC(fd)
            self.synced += 1
            return True
        except OSError as e:
            self._error(path, e)
            return False
        finally:
            os.close(fd)

    def _error(self, path: str, e: OSError) -> None:
        log.warning("background sync of %s failed: %s", path, e)
        self.errors.append(f"{path}: {e}")
        del self.errors[:-100]

    def close(self, timeout: float = 30.0) -> None:
        """Finish what was submitted, then stop the thread."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)
