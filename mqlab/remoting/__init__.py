"""The RocketMQ 4.x remoting protocol: frames, codes, headers and JSON bodies.

``RemotingCommand`` is one frame (``encode() -> bytes`` / ``decode(bytes)``);
``RequestCode`` and ``ResponseCode`` are IntEnums with RocketMQ 4.9.3's numbers (docs/design.md §5).
Typed headers live in ``mqlab.remoting.headers``, JSON bodies in ``mqlab.remoting.bodies``,
fastjson-compatible JSON in ``mqlab.remoting.fastjson``.
"""

from mqlab.remoting.codes import RequestCode, ResponseCode
from mqlab.remoting.command import (
    CURRENT_VERSION,
    RPC_ONEWAY,
    RPC_TYPE,
    LanguageCode,
    RemotingCommand,
    RemotingCommandException,
    SerializeType,
    split_frames,
)

__all__ = [
    "CURRENT_VERSION",
    "RPC_ONEWAY",
    "RPC_TYPE",
    "LanguageCode",
    "RemotingCommand",
    "RemotingCommandException",
    "RequestCode",
    "ResponseCode",
    "SerializeType",
    "split_frames",
]
