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

__all__ = ["JavaProperties", "hash_map_order", "java_long_hash"]

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


class JavaProperties:
    """A ``java.util.Properties`` whose iteration order is JDK 17's.

    Since JDK 9 a ``Properties`` keeps its entries in an internal
    ``ConcurrentHashMap(8)``: 16 bins at first, doubled when the size reaches 0.75 of the
    table (``addCount`` → ``transfer``). A bin keeps its keys in insertion order until a
    resize splits it; ``ConcurrentHashMap#transfer`` keeps the bin's last run of keys
    that go the same way (``lastRun``) in order and puts the keys before it in front of
    that run in reverse. So the order depends on the insertion history, which this class
    replays. Iteration walks the bins from 0 up (``Traverser#advance``).

    Treeified bins (8+ keys in one bin) are not modelled: ``put`` raises when one would
    form, so a caller cannot get a wrong order silently.
    """

    TREEIFY_THRESHOLD = 8

    def __init__(self) -> None:
        self._n = 16  # ConcurrentHashMap(8): tableSizeFor((long) (1.0 + 8 / 0.75f)) = 16
        self._bins: list[list[str]] = [[] for _ in range(self._n)]
        self._values: dict[str, str] = {}

    @staticmethod
    def _spread(key: str) -> int:
        h = java_string_hash(key) & 0xFFFF_FFFF
        return (h ^ (h >> 16)) & 0x7FFF_FFFF

    def put(self, key: str, value: str) -> None:
        """``Properties#put``: replace in place, or append to the key's bin and maybe grow."""
        if key in self._values:
            self._values[key] = value
            return
        bin_ = self._bins[self._spread(key) & (self._n - 1)]
        bin_.append(key)
        if len(bin_) >= self.TREEIFY_THRESHOLD:
            raise NotImplementedError("a treeified ConcurrentHashMap bin is not modelled")
        self._values[key] = value
        if len(self._values) >= self._n - (self._n >> 2):  # sizeCtl = 0.75 n
            self._transfer()

    def _transfer(self) -> None:
        n = self._n
        new_bins: list[list[str]] = [[] for _ in range(2 * n)]
        for i, keys in enumerate(self._bins):
            if not keys:
                continue
            bits = [self._spread(k) & n for k in keys]
            last_run = len(keys) - 1
            while last_run > 0 and bits[last_run - 1] == bits[-1]:
                last_run -= 1
            lo = keys[last_run:] if bits[-1] == 0 else []
            hi = keys[last_run:] if bits[-1] != 0 else []
            for k, b in zip(keys[:last_run], bits[:last_run], strict=True):
                (hi if b else lo).insert(0, k)  # new Node(ph, pk, pv, ln): prepended
            new_bins[i], new_bins[i + n] = lo, hi
        self._n, self._bins = 2 * n, new_bins

    def get(self, key: str) -> str | None:
        return self._values.get(key)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        """The keys in iteration order (bin 0 first, each bin front to back)."""
        return [k for keys in self._bins for k in keys]

    def items(self) -> list[tuple[str, str]]:
        return [(k, self._values[k]) for k in self.keys()]
