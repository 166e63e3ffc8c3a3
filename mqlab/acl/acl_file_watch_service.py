"""Hot reload: the ACL files looked at every 5 s, and reloaded when they change.

Mirrors ``AclFileWatchService`` (srvutil, RocketMQ 4.9.3), which
``PlainPermissionManager#watch`` starts after the first load. (4.9.3 has a second watcher,
``FileWatchService``, every 500 ms by MD5; the broker uses it for TLS files only. The ACL
files have their own, by modification time.)

Each run of ``run_once`` is one turn of the service's loop, after its
``waitForRunning(5000)``:

1. list the files again: every ``.yml``/``.yaml`` under ``<home>/conf/acl`` (leaving out
   ``<home>/conf/acl/tools.yml``), then ``<home>/conf/plain_acl.yml`` if it exists;
2. a different number of files: note every file's modification time and reload
   everything (``onFileNumChanged`` → ``PlainPermissionManager#load()``);
3. else each file whose modification time (milliseconds, as ``File#lastModified``) is not
   the one noted: note it and reload that file (``onFileChanged`` →
   ``PlainPermissionManager#load(String)``).

One deliberate difference: a file whose bytes changed is reloaded even if its
modification time did not. On the simulation driver 5 s of virtual time can pass within
the same real millisecond, and Linux stamps files with a clock that moves every few
milliseconds, so a write, a watcher turn and a second write can share one time stamp; by
time alone the second write would be missed, or not, depending on how fast the machine
runs. The digest (SHA-1 of the bytes; Java's deprecated ``hash`` was MD5) makes the run
depend only on what was written. A file touched without a change still reloads, as in
4.9.3.

A reload that throws is logged and the loop goes on (Java catches it in ``run``); the next
change tries again. The service knows no clock: the broker arms it as the timer
``AclFileWatchService.run`` every ``WATCH_INTERVAL`` ms on the driver's clock, so the
simulation driver reloads in virtual time (the file's modification time is only compared,
never read as a time). Steps: mechanisms.md "Plain ACL", the watcher's table.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

from mqlab.acl.plain_permission_manager import _walk

__all__ = ["WATCH_INTERVAL", "AclFileWatchService", "last_modified"]

#: ``AclFileWatchService.WATCH_INTERVAL`` (ms)
WATCH_INTERVAL = 5000


def last_modified(path: str) -> int:
    """``File#lastModified``: milliseconds, 0 for a missing file."""
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        return 0


def stamp(path: str) -> tuple[int, str]:
    """What a turn compares: the modification time and the bytes' digest."""
    try:
        with open(path, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()
    except OSError:
        digest = ""
    return last_modified(path), digest


class AclFileWatchService:
    """The files' modification times, and the two listeners.

    Args:
        acl_path: ``<home>/conf/acl``.
        default_acl_file: ``<home>/conf/plain_acl.yml``.
        on_file_changed: ``Listener#onFileChanged(path)``.
        on_file_num_changed: ``Listener#onFileNumChanged(aclPath)``.
    """

    def __init__(
        self,
        acl_path: str,
        default_acl_file: str,
        on_file_changed: Callable[[str], None],
        on_file_num_changed: Callable[[str], None],
    ) -> None:
        self.acl_path = acl_path
        self.default_acl_file = default_acl_file
        self.on_file_changed = on_file_changed
        self.on_file_num_changed = on_file_num_changed
        self.file_list = self._list()
        self.acl_files_num = len(self.file_list)
        self.file_last_modified_time = {p: stamp(p) for p in self.file_list}

    def _list(self) -> list[str]:
        files = _walk(self.acl_path, os.path.join(os.path.abspath(self.acl_path), "tools.yml"))
        if os.path.exists(self.default_acl_file) and self.default_acl_file not in files:
            files.append(self.default_acl_file)
        return files

    def run_once(self) -> list[tuple[str, str]]:
        """One turn of ``AclFileWatchService#run`` (steps 1-3). Returns what it reloaded:
        ``("all", acl_path)`` or ``("file", path)`` per reload."""
        # step 1
        self.file_list = self._list()
        real = len(self.file_list)
        done: list[tuple[str, str]] = []
        # step 2
        if self.acl_files_num != real:
            self.acl_files_num = real
            self.file_last_modified_time = {p: stamp(p) for p in self.file_list}
            done.append(("all", self.acl_path))
            self.on_file_num_changed(self.acl_path)
            return done
        # step 3
        for path in self.file_list:
            modified = stamp(path)
            if modified != self.file_last_modified_time.get(path):
                self.file_last_modified_time[path] = modified
                done.append(("file", path))
                self.on_file_changed(path)
        return done
