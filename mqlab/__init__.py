"""mqlab: a teaching workbench for Apache RocketMQ 4.9 internals.

Public entry points (docs/design.md §5): ``Lab``, ``Message`` and ``MessageQueue``; the broker,
name server, store and remoting layers under their packages.
"""

from typing import Any

from mqlab.common.message import Message, MessageQueue

__all__ = ["Lab", "Message", "MessageQueue"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The Lab pulls in pandas and the whole broker; import it only when asked for.
    if name == "Lab":
        from mqlab.lab.lab import Lab

        return Lab
    raise AttributeError(f"module 'mqlab' has no attribute {name!r}")
