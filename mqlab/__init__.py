"""mqlab: a teaching workbench for Apache RocketMQ 4.9 internals.

Public entry points (DESIGN §5): ``Message`` and ``MessageQueue`` here; the broker, name
server, store and remoting layers under their packages.
"""

from mqlab.common.message import Message, MessageQueue

__all__ = ["Message", "MessageQueue"]
__version__ = "0.1.0"
