"""The bloom filter a 4.9.3 broker sizes for SQL92 consumers, and each group's bit positions.

Mirrors ``BloomFilter`` and ``BloomFilterData`` (filter/util, RocketMQ 4.9.3).
``ConsumerFilterManager`` builds one ``BloomFilter.createByFn(maxErrorRateOfBloomFilter,
expectConsumerNumUseFilter)`` (20 %, 32 consumers: 3 hash functions over 112 bits) and gives
each SQL92 group's ``ConsumerFilterData`` the positions of ``"<group>#<topic>"``. The broker
uses them only with ``enableCalcFilterBitMap`` (off by default, not modelled: mqlab keeps no
bit maps); ``mqadmin queryCq`` shows them in a group's filter data.

The positions come from Guava's ``Hashing.murmur3_128()`` (MurmurHash3 x64 128-bit, seed
0) of the UTF-8 bytes, whose first 8 bytes (little-endian) are split into two ints and
combined Kirsch-Mitzenmacher style, in Java's 32-bit arithmetic.
"""

from __future__ import annotations

import math

__all__ = ["BloomFilter", "murmur3_128_as_long"]

_M64 = 0xFFFF_FFFF_FFFF_FFFF
_C1, _C2 = 0x87C3_7B91_1142_53D5, 0x4CF5_AD43_2745_937F


def _rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51_AFD7_ED55_8CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CE_B9FE_1A85_EC53) & _M64
    return k ^ (k >> 33)


def _mix_k1(k1: int) -> int:
    return (_rotl64((k1 * _C1) & _M64, 31) * _C2) & _M64


def _mix_k2(k2: int) -> int:
    return (_rotl64((k2 * _C2) & _M64, 33) * _C1) & _M64


def murmur3_128_as_long(data: bytes) -> int:
    """Guava ``Hashing.murmur3_128().hashBytes(data).asLong()`` as a signed 64-bit int."""
    h1 = h2 = 0
    n = len(data)
    full = n - n % 16
    for i in range(0, full, 16):
        k1 = int.from_bytes(data[i : i + 8], "little")
        k2 = int.from_bytes(data[i + 8 : i + 16], "little")
        h1 ^= _mix_k1(k1)
        h1 = (_rotl64(h1, 27) + h2) & _M64
        h1 = (h1 * 5 + 0x52DC_E729) & _M64
        h2 ^= _mix_k2(k2)
        h2 = (_rotl64(h2, 31) + h1) & _M64
        h2 = (h2 * 5 + 0x3849_5AB5) & _M64
    tail = data[full:]
    if tail:
        k1 = int.from_bytes(tail[:8], "little")
        k2 = int.from_bytes(tail[8:], "little")
        h1 ^= _mix_k1(k1)
        if k2:
            h2 ^= _mix_k2(k2)
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    h1, h2 = _fmix64(h1), _fmix64(h2)
    h1 = (h1 + h2) & _M64
    return h1 - (1 << 64) if h1 >> 63 else h1


def _int32(x: int) -> int:
    x &= 0xFFFF_FFFF
    return x - (1 << 32) if x >> 31 else x


class BloomFilter:
    """``BloomFilter.createByFn(f, n)``: ``f`` % error rate for ``n`` elements.

    Attributes:
        k: number of hash functions, ``ceil(log_0.5(f/100))``.
        m: number of bits, ``n * log2(100/f) * log2(e)`` rounded up to a multiple of 8.
    """

    __slots__ = ("f", "n", "k", "m")

    def __init__(self, f: int, n: int) -> None:
        if f < 1 or f >= 100:
            raise ValueError("f must be greater or equal than 1 and less than 100")
        if n < 1:
            raise ValueError("n must be greater than 0")
        self.f, self.n = f, n
        error_rate = f / 100.0
        self.k = math.ceil(math.log(error_rate) / math.log(0.5))
        m = math.ceil(
            n * (math.log(1 / error_rate) / math.log(2)) * (math.log(math.e) / math.log(2))
        )
        self.m = int(8 * math.ceil(m / 8.0))

    def calc_bit_positions(self, s: str) -> list[int]:
        """Mirrors ``BloomFilter#calcBitPositions``."""
        hash64 = murmur3_128_as_long(s.encode("utf-8"))
        hash1 = _int32(hash64)
        hash2 = _int32(hash64 >> 32)
        out = []
        for i in range(1, self.k + 1):
            combined = _int32(hash1 + i * hash2)
            if combined < 0:
                combined = ~combined
            out.append(combined % self.m)
        return out

    def generate(self, s: str) -> dict[str, object]:
        """``BloomFilter#generate``: a ``BloomFilterData`` bean, ``{"bitNum", "bitPos"}``."""
        return {"bitNum": self.m, "bitPos": self.calc_bit_positions(s)}
