"""``MixAll``'s file helpers and ``ConfigManager#load``: how every JSON config file is
written and read back.

Mirrors ``MixAll#string2File`` / ``#string2FileNotSafe`` / ``#file2String`` and
``ConfigManager#load`` / ``#loadBak`` (common, RocketMQ 4.9.3). Used for the broker's
``topics.json``, ``subscriptionGroup.json``, ``consumerOffset.json``,
``consumerFilter.json``, the store's ``delayOffset.json``, the name server's
``kvConfig.json`` and a broadcasting consumer's ``offsets.json``. Kept apart from
``mix_all`` (names and constants, no IO).

``string2file`` writes ``<file>.tmp``, copies the current content (if any) to
``<file>.bak``, then moves the temp file over ``<file>``. A process killed at any point
leaves a loadable file: the old one (tmp not moved yet), or the new one; and
``config_manager_load`` falls back to ``.bak`` when the main file is missing, empty or
unparsable. Deviation, documented: Java deletes ``<file>`` and then renames (a window
with no main file, which the ``.bak`` covers); mqlab renames over it (``os.replace``,
atomic on POSIX and Windows). Neither forces the files to disk: after a power cut a
file system may hold any of them empty, which is what ``.bak`` is for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["config_manager_load", "file2string", "string2file", "bak_path", "tmp_path"]

#: What a config file's ``decode`` may raise on bad content (Java: any Exception).
DECODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OSError)


def tmp_path(path: str | Path) -> Path:
    """``<file>.tmp``."""
    p = Path(path)
    return p.with_name(p.name + ".tmp")


def bak_path(path: str | Path) -> Path:
    """``<file>.bak``."""
    p = Path(path)
    return p.with_name(p.name + ".bak")


def file2string(path: str | Path) -> str | None:
    """The file's UTF-8 text, or ``None`` if it does not exist. Mirrors ``MixAll#file2String``."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _string2file_not_safe(text: str, path: str) -> None:
    """Mirrors ``MixAll#string2FileNotSafe``: create the parent dirs, write the text."""
    # NOTE: performance — plain ``open`` first, the parent dirs only when missing
    # (``pathlib`` and an ``mkdir`` per write were ~40 % of a persist in mqlab.explore)
    try:
        f = open(path, "w", encoding="utf-8")
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        f = open(path, "w", encoding="utf-8")
    with f:
        f.write(text)


def string2file(text: str, path: str | Path) -> None:
    """Replace ``path`` with ``text``, keeping the previous content in ``<path>.bak``.

    Mirrors ``MixAll#string2File`` (common, RocketMQ 4.9.3); see the module essay.

    Raises:
        OSError: a file cannot be written.
    """
    p = os.fspath(path)
    tmp = p + ".tmp"
    _string2file_not_safe(text, tmp)
    prev = file2string(p)
    if prev is not None:
        _string2file_not_safe(prev, p + ".bak")
    os.replace(tmp, p)


def config_manager_load(path: str | Path, decode: Callable[[str], object]) -> bool:
    """Read ``path`` with ``decode``; on a missing, empty or unreadable file read ``.bak``.

    Mirrors ``ConfigManager#load`` / ``#loadBak`` (common, RocketMQ 4.9.3): neither file
    (or an empty ``.bak``) is not an error, the owner keeps its built-in tables.

    Returns:
        False only when the main file failed and the ``.bak`` failed too.
    """
    p = Path(path)
    try:
        text = file2string(p)
        if text:
            decode(text)
            return True
    except DECODE_ERRORS:
        pass
    try:
        text = file2string(bak_path(p))
        if text:
            decode(text)
    except DECODE_ERRORS:
        return False
    return True
