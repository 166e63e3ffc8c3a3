"""Where a search's scratch files go, named by their owner, and the sweep of dead owners'.

Mirrors no RocketMQ class. A search makes scratch files on ``/dev/shm`` (tmpfs, when
writable; else the system's temporary directory; ``MQLAB_EXPLORE_TMP`` overrides both):
each run's store (``store``), the search's journal of visited states (``journal``,
``mqlab.explore.journal``), each level's spool (``spool``, ``mqlab.explore.spool``) and a
Spark session's level files (``levels``). Each process removes its own when it is done; a
process killed with SIGKILL cannot, and on tmpfs they hold memory until the next boot.

So every name says who made it: ``mqlab-explore-<kind>-p<pid>t<start>-<random>``, with
the process id and the process's start time (clock ticks since boot, ``/proc/<pid>/stat``
field 22; 0 where there is no ``/proc``). ``sweep`` removes the entries whose owner is
provably dead: no process has that id, or the process that has it started at another
time (the id was reused). A live owner's entries, and names of another form (an older
mqlab's, which say nothing of their owner), are left alone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

__all__ = ["scratch_dir", "make_dir", "make_file", "owner_tag", "sweep", "KINDS"]

KINDS = ("store", "journal", "spool", "levels")
_NAME = re.compile(r"^mqlab-explore-(?:store|journal|spool|levels)-p(\d+)t(\d+)-")
_tags: dict[int, str] = {}


def scratch_dir() -> str | None:
    """``MQLAB_EXPLORE_TMP``, else ``/dev/shm`` when writable (a run's store is created and
    removed in ~4 ms there instead of ~50-100 ms on disk: ``python -m mqlab bench
    explore``), else None (the system's temporary directory)."""
    env = os.environ.get("MQLAB_EXPLORE_TMP")
    if env:
        return env
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def _start_ticks(pid: int) -> int | None:
    """Process ``pid``'s start time in clock ticks since boot; 0 without ``/proc``; None if
    there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None
    except OSError:
        return 0
    else:  # the command name (field 2) may hold spaces and parentheses: split after it
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    try:  # no /proc here: the pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return 0


def owner_tag() -> str:
    """``p<pid>t<start>`` of this process (computed again after a fork)."""
    pid = os.getpid()
    tag = _tags.get(pid)
    if tag is None:
        tag = _tags[pid] = f"p{pid}t{_start_ticks(pid) or 0}"
    return tag


def make_dir(kind: str) -> str:
    """A new scratch directory of ``kind`` (``KINDS``), named by this process."""
    return tempfile.mkdtemp(prefix=f"mqlab-explore-{kind}-{owner_tag()}-", dir=scratch_dir())


def make_file(kind: str) -> str:
    """A new empty scratch file of ``kind``, named by this process (closed)."""
    fd, path = tempfile.mkstemp(prefix=f"mqlab-explore-{kind}-{owner_tag()}-", dir=scratch_dir())
    os.close(fd)
    return path


def _dead(pid: int, start: int) -> bool:
    now = _start_ticks(pid)
    return now is None or (start != 0 and now != 0 and now != start)


def sweep(directory: str | None = None) -> list[str]:
    """Remove the scratch entries of dead owners in ``directory`` (default: ``scratch_dir``
    or the system's temporary directory); the names removed, sorted."""
    where = directory or scratch_dir() or tempfile.gettempdir()
    try:
        names = os.listdir(where)
    except OSError:
        return []
    removed = []
    for name in sorted(names):
        m = _NAME.match(name)
        if m is None or not _dead(int(m.group(1)), int(m.group(2))):
            continue
        path = os.path.join(where, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        if not os.path.lexists(path):
            removed.append(name)
    return removed
