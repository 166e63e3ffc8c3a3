"""The snapshot tests fork, and a process may fork only while it runs one thread
(``mqlab.explore.snapshot.fork_available``). A whole ``make test`` session has other threads
by then (Spark's, the network driver's), so ``test_snapshot.py`` is collected only in the fresh
interpreter that ``test_snapshot_fresh.py`` starts for it (``MQLAB_SNAPSHOT_TESTS=1``)."""

from __future__ import annotations

import os

collect_ignore = [] if os.environ.get("MQLAB_SNAPSHOT_TESTS") == "1" else ["test_snapshot.py"]
