"""The Lab's journal: every state-changing call is recorded so ``fork`` can replay it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["journaled"]


def journaled(fn: Callable) -> Callable:
    """Record ``(method name, args, kwargs, events run so far)`` unless replaying."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._replaying:
            self._journal.append((fn.__name__, args, kwargs, self.driver.events_run))
        return fn(self, *args, **kwargs)

    return wrapper
