"""A cluster at its arm point, built once per search and forked for every run.

Mirrors no RocketMQ class. Every run of a search builds the same cluster and plays the
same timeline up to ``arm_ms`` (about two thirds of a run's CPU, ``python -m mqlab bench
explore``); only then do schedules differ. ``Snapshots`` builds that prefix once and runs
each schedule in a child (``os.fork``): the child has the whole cluster as it was at the
arm point, copy-on-write, runs the rest, and sends its ``RunRecord`` back through a pipe.

The store is the part fork does not copy: its files are ``MAP_SHARED`` maps
(``mqlab.store.mapped_file``) and its config files are on disk, so a child writes into the
very files of the snapshot. Children therefore run one at a time, and after each the
parent puts the store directory back as it was at the arm point, *in place*:

1. at the arm point, every file's inode, size and data extents (``SEEK_DATA`` /
   ``SEEK_HOLE``: files are sparse) are read once;
2. after a child: files and directories it created are removed; every snapshot file has
   its whole length punched back to a hole (``fallocate(PUNCH_HOLE)``) and its data
   extents written again. The parent's maps share those pages, so they see the arm-point
   bytes again, and the file is as sparse as it was (a reload computes the same
   ``dirty_end``);
3. a file the child replaced (a config file written to a temporary name and renamed) or
   removed is written again at its path; but if it was a file the parent maps
   (``/proc/self/maps``), its maps no longer see the path's file: the snapshot is
   dropped, and the next run builds a new one.

What it costs (``python -m mqlab bench explore``, consumer_join, at load 5): building and
playing the cluster to the arm point takes about 20 ms of a 30 ms run (CPU). A fork costs
the parent its page tables: ~2 ms when the process held ~130 MB with pandas loaded, ~1 ms
at the ~40 MB a search holds since it loads neither pandas nor plotly. The child then
copies every page whose objects the run touches (their reference counts are written):
~2 300 page faults, at ~5 us each on this machine (2 000 pages written in a child:
9-10 ms), and its exit frees them. Together that is about what the build saves: a forked
replay gives x1.0 to x1.3 the schedules per CPU second of a built one (x1.13 with pandas
loaded, x1.21 without, interleaved runs), with the imports frozen (``gc.freeze``, as
``mqlab.explore.engine`` does after a process's first run) or not, so the search builds by
default (``exhaustive(..., snapshot=True)`` forks). A copy inside the process is not
possible at all: the cluster's tasks are suspended generators (``mqlab.runtime.task``),
which neither ``pickle`` nor ``copy.deepcopy`` can copy.

Where fork is unavailable (Windows, ``MQLAB_EXPLORE_FORK=0``, a process with other
threads running, such as a Jupyter kernel, where forking is unsafe) or ``fallocate``
cannot punch holes, ``run`` returns None and the caller builds the cluster as before. The
records are the same either way (``tests/explore/test_snapshot.py`` compares them for
every ready-made scenario and mutant).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import pickle
import shutil
import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mqlab.explore.engine import Bounds, RunRecord, _Prefix
    from mqlab.explore.scenarios import ExploreScenario
    from mqlab.explore.schedule import Schedule

__all__ = ["Snapshots", "fork_available"]

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02
_libc: Any = None


def _punch(fd: int, length: int) -> bool:
    """Make ``[0, length)`` of ``fd`` a hole (Linux ``fallocate``); False where it cannot."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            _libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                                        ctypes.c_longlong]  # fmt: skip
        except (OSError, AttributeError):
            _libc = False
    if not _libc or length == 0:
        return bool(_libc)
    mode = _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE
    return _libc.fallocate(fd, mode, 0, length) == 0


def _extents(fd: int, length: int) -> list[tuple[int, int]]:
    """The data extents ``(start, end)`` of a file (the whole file where the OS cannot say)."""
    seek_data = getattr(os, "SEEK_DATA", None)
    seek_hole = getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        return [(0, length)] if length else []
    out = []
    offset = 0
    while offset < length:
        try:
            start = os.lseek(fd, offset, seek_data)
        except OSError as e:
            if e.errno == errno.ENXIO:
                break
            return [(0, length)] if length else []
        offset = min(os.lseek(fd, start, seek_hole), length)
        out.append((start, offset))
    return out


def fork_available() -> bool:
    """Whether runs may fork from a snapshot here (see the module docstring)."""
    return (
        hasattr(os, "fork")
        and os.environ.get("MQLAB_EXPLORE_FORK", "1") != "0"
        and threading.active_count() == 1
        and os.path.exists("/proc/self/maps")
        and _punch(-1, 0)
    )


class _Files:
    """A store directory's files at the arm point (inode, size, data extents' bytes)."""

    def __init__(self, root: str) -> None:
        self.root = root = os.path.realpath(root)
        self.dirs: set[str] = set()
        self.files: dict[str, tuple[int, int, list[tuple[int, bytes]]]] = {}
        self.mapped = _mapped(root)
        for d, dirs, files in os.walk(root):
            self.dirs.update(os.path.join(d, x) for x in dirs)
            for f in files:
                path = os.path.join(d, f)
                fd = os.open(path, os.O_RDONLY)
                try:
                    st = os.fstat(fd)
                    data = [(a, os.pread(fd, b - a, a)) for a, b in _extents(fd, st.st_size)]
                finally:
                    os.close(fd)
                self.files[path] = (st.st_ino, st.st_size, data)

    def restore(self) -> bool:
        """Put the directory back (module docstring, step 2); False: a snapshot file was
        replaced or removed (step 3)."""
        for d, dirs, files in os.walk(self.root, topdown=False):
            for f in files:
                path = os.path.join(d, f)
                if path not in self.files:
                    os.unlink(path)
            for x in dirs:
                path = os.path.join(d, x)
                if path not in self.dirs:
                    shutil.rmtree(path, ignore_errors=True)
        ok = True
        for path, (ino, size, data) in self.files.items():
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:
                ok = False
                continue
            try:
                st = os.fstat(fd)
                if st.st_ino != ino and path in self.mapped:
                    ok = False
                if st.st_size != size:
                    os.ftruncate(fd, size)
                if not _punch(fd, max(size, st.st_size)):
                    ok = False
                for offset, chunk in data:
                    os.pwrite(fd, chunk, offset)
            finally:
                os.close(fd)
        return ok


def _mapped(root: str) -> set[str]:
    """The files under ``root`` this process has mapped (``/proc/self/maps``)."""
    prefix = os.path.join(os.path.realpath(root), "")
    out = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith(prefix):
                out.add(parts[5].rstrip("\n"))
    return out


def _drop(pre: _Prefix | None, pid: int) -> None:
    """Close a snapshot's cluster and remove its store (only in the process that built it:
    a forked worker inherits the object, not the files)."""
    if pre is not None and os.getpid() == pid:
        pre.lab.close()
        shutil.rmtree(pre.tmp, ignore_errors=True)


class Snapshots:
    """One search's snapshot at the arm point (of one scenario with the mutants on as it
    was built); ``run`` forks a run from it. ``close`` (or ``with``) removes it."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._pre: _Prefix | None = None
        self._files: _Files | None = None
        self._pid = os.getpid()
        self.builds = 0
        self.forks = 0
        self._fin = weakref.finalize(self, _drop, None, self._pid)

    def __enter__(self) -> Snapshots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._fin.detach()
        _drop(self._pre, self._pid)
        self._key = self._pre = self._files = None

    def _prefix(self, xs: ExploreScenario) -> _Prefix:
        from mqlab.explore.engine import _build_to_arm
        from mqlab.explore.mutants import active

        key = (id(xs), xs, frozenset(active()))
        if os.getpid() != self._pid:  # inherited by a forked worker: build our own
            self._pid, self._key, self._pre, self._files = os.getpid(), None, None, None
        if self._key != key or self._pre is None:
            self.close()
            self._pid = os.getpid()
            self._pre = _build_to_arm(xs)
            self._files = _Files(self._pre.tmp)
            self._key = key
            self._fin = weakref.finalize(self, _drop, self._pre, self._pid)
            self.builds += 1
        return self._pre

    def run(
        self, xs: ExploreScenario, sched: Schedule, bounds: Bounds, kw: dict
    ) -> RunRecord | None:
        """The run of ``sched`` forked from the snapshot; None where fork is unavailable, and
        for a scenario that builds its own run (``mqlab.explore.dledger``: a group with no
        store directory, cheap to build)."""
        if not fork_available() or hasattr(xs, "build_to_arm"):
            return None
        from mqlab.explore.engine import _run_from_arm

        pre = self._prefix(xs)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run, send the record, exit without cleaning up
            code = 0
            try:
                os.close(r)
                try:
                    payload: tuple = ("ok", _run_from_arm(xs, pre, sched, bounds, **kw))
                except BaseException as e:  # noqa: BLE001 (re-raised in the parent)
                    payload = ("err", e)
                try:
                    data = pickle.dumps(payload)
                except Exception:  # noqa: BLE001
                    data = pickle.dumps(("err", RuntimeError(repr(payload[1]))))
                with os.fdopen(w, "wb") as f:
                    f.write(data)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        try:
            with os.fdopen(r, "rb") as f:
                data = f.read()
        finally:
            os.waitpid(pid, 0)
            assert self._files is not None
            if not self._files.restore():
                self.close()
        self.forks += 1
        if not data:
            raise RuntimeError("an explore run's forked child died without a record")
        status, value = pickle.loads(data)
        if status == "err":
            raise value
        cache = kw.get("outcome_cache")
        if cache is not None and value.outcome is not None:
            cache.setdefault(value.final_digest, (value.outcome, value.counts))
        return value
