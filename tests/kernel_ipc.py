"""A pytest plugin: the kernels a test process starts talk to it over ipc, not tcp.

Mirrors no RocketMQ class: it guards the notebook tiers (nbclient in
``tests/lab/test_worked_answers.py``, ``start_new_kernel`` in
``tests/lab/test_name_error_hint.py``, nbmake in the notebooks group).

For tcp, jupyter_client picks a kernel's five ports by binding port 0 and closing the socket
(``write_connection_file``); the kernel binds them once it has started, a second or so later.
Any process on the machine may take one of them meanwhile, to listen or as the local port of
an outgoing connection, and the groups run side by side with the Java tiers, which open many.
The kernel then dies with ``Address already in use`` and nbclient raises ``Kernel died before
replying to kernel_info``: dry run AF of session 21, lesson 14's worked answers, port 32949.
Over ipc the kernel binds Unix sockets at paths this process names under a directory of its
own: there is no port to lose. Every ``KernelManager`` made in the process gets transport
``ipc`` and an ``ip`` (the sockets' path prefix) of its own.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from typing import Any

from jupyter_client.manager import KernelManager

_dir: str | None = None
_kernels = itertools.count()


def ipc_prefix() -> str:
    """A fresh socket path prefix (``<prefix>-<port>`` are the kernel's five sockets), under a
    directory made once per process and removed at its exit."""
    global _dir
    if _dir is None:
        _dir = tempfile.mkdtemp(prefix="mqlab-kernel-ipc-")
        atexit.register(shutil.rmtree, _dir, True)
    return os.path.join(_dir, f"k{next(_kernels)}")


_init = KernelManager.__init__


def _ipc_init(self: KernelManager, *args: Any, **kwargs: Any) -> None:
    _init(self, *args, **kwargs)
    self.transport = "ipc"
    self.ip = ipc_prefix()


KernelManager.__init__ = _ipc_init  # type: ignore[method-assign]
