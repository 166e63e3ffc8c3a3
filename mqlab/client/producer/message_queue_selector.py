"""Choosing the queue of an orderly send: a selector maps (queues, message, arg) to a queue.

Mirrors ``MessageQueueSelector``, ``SelectMessageQueueByHash`` and
``SelectMessageQueueByRandom`` (client/producer[/selector], RocketMQ 4.9.3). Orderly
messaging works because every message with the same ``arg`` (an order id) lands in the
same queue, and a queue is consumed in order.

``SelectMessageQueueByHash`` uses Java's ``arg.hashCode()``, never Python's ``hash``
(which is salted per process for strings): ``String#hashCode`` for ``str``, the value for
an ``int`` that fits in 32 bits, ``Long#hashCode`` (``(int)(v ^ (v >>> 32))``) for larger
ints, ``Boolean#hashCode`` (1231 / 1237) for ``bool``. Then ``hashCode % n`` with Java's
sign rule, made non-negative with ``Math.abs``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from mqlab.common.filter_api import java_string_hash
from mqlab.common.message import Message, MessageQueue

__all__ = [
    "MessageQueueSelector",
    "SelectMessageQueueByHash",
    "SelectMessageQueueByRandom",
    "java_hash_code",
]


class MessageQueueSelector(Protocol):
    """Mirrors ``MessageQueueSelector#select(List<MessageQueue>, Message, Object)``."""

    def select(self, mqs: Sequence[MessageQueue], msg: Message, arg: Any) -> MessageQueue: ...


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def java_hash_code(arg: Any) -> int:
    """``arg.hashCode()`` for the argument types Java callers use as order keys.

    Raises:
        TypeError: ``arg`` is not a str, bool or int (Python's ``hash`` would not be
            reproducible across processes).
    """
    if isinstance(arg, str):
        return java_string_hash(arg)
    if isinstance(arg, bool):
        return 1231 if arg else 1237
    if isinstance(arg, int):
        if -(1 << 31) <= arg < (1 << 31):
            return arg
        v = arg & 0xFFFFFFFFFFFFFFFF
        return _int32(v ^ (v >> 32))
    raise TypeError(f"arg must be a str, bool or int to hash like Java, got {type(arg).__name__}")


class SelectMessageQueueByHash:
    """``Math.abs(arg.hashCode() % mqs.size())``. Mirrors ``SelectMessageQueueByHash``."""

    __slots__ = ()

    def select(self, mqs: Sequence[MessageQueue], msg: Message, arg: Any) -> MessageQueue:
        if not mqs:
            raise ValueError("mqs must not be empty")
        h = java_hash_code(arg)
        value = abs(h) % len(mqs)  # Java: h % n keeps h's sign, then Math.abs
        return mqs[value]


class SelectMessageQueueByRandom:
    """A random queue. Mirrors ``SelectMessageQueueByRandom`` (its RNG is handed in)."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def select(self, mqs: Sequence[MessageQueue], msg: Message, arg: Any) -> MessageQueue:
        if not mqs:
            raise ValueError("mqs must not be empty")
        return mqs[self.rng.randrange(len(mqs))]
