"""The iteration order of a ``java.util.HashMap``, where RocketMQ lets it show.

Mirrors ``HashMap#hash`` / ``#resize`` (JDK 8+): a map iterates its table bucket by bucket,
each bucket's entries in insertion order (``resize`` splits a bucket keeping relative
order). The bucket is ``(h ^ (h >>> 16)) & (capacity - 1)`` with ``h = key.hashCode()``;
the capacity starts at the initial capacity (16 by default) and doubles while
size > 0.75 * capacity. RocketMQ 4.9.3 lets this order show in stored properties strings
(``MessageDecoder#messageProperties2String``) and in which broker address
``RouteInfoManager#getSystemTopicList`` picks.

Two approximations, both needing unusual maps: the capacity comes from the current size (a
Java map never shrinks, so one that held more keys before a ``remove`` keeps a larger
table), and treeified bins (9+ keys in one bucket of a 64+ table) are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from mqlab.common.filter_api import java_string_hash

__all__ = ["hash_map_order", "java_long_hash"]

K = TypeVar("K")


def java_long_hash(value: int) -> int:
    """``Long#hashCode``: ``(int) (value ^ (value >>> 32))``, as an unsigned 32-bit int."""
    u = value & 0xFFFF_FFFF_FFFF_FFFF
    return (u ^ (u >> 32)) & 0xFFFF_FFFF


def hash_map_order(
    keys: Iterable[K],
    *,
    initial_capacity: int = 16,
    hash_code: Callable[[K], int] = java_string_hash,  # type: ignore[assignment]
) -> list[K]:
    """``keys`` (given in insertion order) in the order a ``HashMap`` iterates them."""
    keys = list(keys)
    capacity = initial_capacity
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(k: K) -> int:
        h = hash_code(k) & 0xFFFF_FFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # sorted() is stable: insertion order within a bucket
