"""The search's visited table, shared with the workers of one machine as it grows.

Mirrors no RocketMQ class. The exhaustive search (``mqlab.explore.search``) reads records in
item order and adds every state it expands to its visited table; a sequential run stops at
a state in that table (the rest of it adds nothing). A worker of the pool or of a local
Spark session runs item ``j`` while the search reads the records before it: with only the
table as the level started, its run goes on past states that items ``< j`` expanded since,
work the search then throws away. How much depends on the scenario: at consumer_join
depth 13 on Spark ``local[2]``, 169 runs stopped early with the live table and 145 with
the level's, 188 226 events run against 189 483 (0.7%); the search's own figures are the
same either way.

``Journal`` is the search's side: an append-only file (on ``/dev/shm`` where there is one),
one frame per record read: a 4-byte length and a pickled list of entries,

- ``("v", digest, (depth left, faults left, sleep key))``: a state expanded;
- ``("o", final digest, (outcome, counts))``: a final state classified.

``LiveVisited`` is a worker's side: the table a run's ``Chooser`` reads, which takes in the
frames written since it last looked at every lookup (an ``fstat``: a microsecond, where a
``multiprocessing.Manager`` round trip per choice point cost more than it saved). Every
entry it reads comes from a record the search has read, hence from an item before the one
running: a run stops only where the sequential run could (it may stop later, having seen
less; the search prunes it at the same point when it reads it). The tables therefore stay
the sequential search's, figures and all.

Where the file cannot be opened (a Spark executor on another machine), the worker keeps the
table it was sent as the level started.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile

from mqlab.explore.tmpdirs import owner_tag

__all__ = ["Journal", "LiveVisited"]

_LEN = 4


class Journal:
    """The search's append-only file of visited states and outcomes (module docstring)."""

    def __init__(self, directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(
            prefix=f"mqlab-explore-journal-{owner_tag()}-", dir=directory
        )
        os.close(fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self.size = 0
        self._pending: list[tuple] = []

    def visited(self, digest: str, entry: tuple) -> None:
        self._pending.append(("v", digest, entry))

    def outcome(self, final_digest: str, hit: tuple) -> None:
        self._pending.append(("o", final_digest, hit))

    def flush(self) -> None:
        """Write what was noted since the last flush as one frame (one ``write``)."""
        if not self._pending:
            return
        data = pickle.dumps(self._pending, protocol=pickle.HIGHEST_PROTOCOL)
        self._pending = []
        frame = len(data).to_bytes(_LEN, "little") + data
        os.write(self._fd, frame)
        self.size += len(frame)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LiveVisited(dict):
    """A worker's visited table: ``base`` (the table it was given) and every frame of the
    journal at ``path`` from ``offset`` on, read at each lookup; ``cache`` gets the
    outcomes. A dict, so a ``Chooser`` reads it as it reads the search's own table."""

    def __init__(self, base: dict, path: str, offset: int, cache: dict | None = None) -> None:
        super().__init__(base)
        self.path = path
        self.cache: dict = {} if cache is None else cache
        self._off = offset
        self._fd = os.open(path, os.O_RDONLY)

    @classmethod
    def open(
        cls, base: dict, path: str, offset: int, cache: dict | None = None
    ) -> LiveVisited | None:
        """The live table, or None where the journal cannot be opened here."""
        try:
            return cls(base, path, offset, cache)
        except OSError:
            return None

    def sync(self) -> None:
        """Take in the complete frames written since the last look."""
        try:
            size = os.fstat(self._fd).st_size
        except OSError:
            return
        if size <= self._off:
            return
        data = os.pread(self._fd, size - self._off, self._off)
        pos = 0
        while pos + _LEN <= len(data):
            n = int.from_bytes(data[pos : pos + _LEN], "little")
            if pos + _LEN + n > len(data):
                break  # a frame still being written: next time
            for kind, key, value in pickle.loads(data[pos + _LEN : pos + _LEN + n]):
                if kind == "v":
                    dict.setdefault(self, key, []).append(value)
                else:
                    self.cache.setdefault(key, value)
            pos += _LEN + n
        self._off += pos

    def get(self, key, default=None):  # type: ignore[override]
        self.sync()
        return dict.get(self, key, default)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
