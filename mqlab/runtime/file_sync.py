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
meanwhile (the clean service) is skipped. The simulation never uses this: its flushes stay
inline, in simulated time.
"""

from __future__ import annotations

import logging
import os
import queue
import threading

__all__ = ["FileSyncer"]

log = logging.getLogger(__name__)

_SYNC = getattr(os, "fdatasync", os.fsync)
_STOP = ""


class FileSyncer:
    """One daemon thread syncing files by name, each at most once per pending request."""

    def __init__(self, name: str = "mqlab-file-sync") -> None:
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        #: files synced, and failures (other than a file already deleted)
        self.synced = 0
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, path: str) -> None:
        """Sync ``path`` soon (not again if it is still waiting)."""
        with self._lock:
            if path in self._pending:
                return
            self._pending.add(path)
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            if path == _STOP:
                return
            with self._lock:
                self._pending.discard(path)
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            except OSError as e:
                self._error(path, e)
                continue
            try:
                _SYNC(fd)
                self.synced += 1
            except OSError as e:
                self._error(path, e)
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
