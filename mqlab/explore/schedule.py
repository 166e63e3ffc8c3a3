"""Schedules: the compact, printable list of choices that replays one explored run.

Mirrors no RocketMQ class. A run under ``mqlab.explore`` meets *choice points* in a fixed
order (the run is deterministic given its choices). A schedule says what to pick at each
one, in order:

- ``o<i>``: run the i-th of the events enabled together (0 = the seed's own order);
- ``l<i>``: give the frame being sent the i-th latency of the latency set (0 = default);
- ``L<i>``: the same, and every later frame or chunk between the same two nodes, both
  ways: the connection stays slow (congested). Its later frames are no choice points:
  one move delays a whole exchange (``Bounds.sticky``);
- ``F:<fault>``: inject a fault (``kill(broker-a)``, ``power_cut(broker-a)``, ``join``,
  ``leave(consumer-2)`` …) here, then decide this point again;
- ``d<n>``: the next n choice points take their default (``o0`` / ``l0``), so long runs
  of defaults stay short.

Choice points after the last token take their defaults. ``Schedule.parse(str(s)) == s``.
``sort_key`` orders schedules: fewest faults, then fewest non-default choices ("events
moved"), then fewest choice points, then fewest links kept slow (``L<i>``), then the text:
the total order that picks one shortest schedule per outcome, whichever runner or task found it first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT", "Choice", "Schedule", "ScheduleError"]

_TOKEN = re.compile(r"^(?:o(\d+)|l(\d+)|L([1-9]\d*)|d(\d+)|F:([a-z_]+(?:\([A-Za-z0-9_.%,-]+\))?))$")


class ScheduleError(ValueError):
    """A schedule that cannot be parsed, or does not fit the run it is replayed on."""


@dataclass(frozen=True, slots=True, order=True)
class Choice:
    """One choice: ``kind`` "o" (order), "l" (latency), "L" (the link's latency from here
    on) or "F" (fault); ``value`` an index or a fault name."""

    kind: str
    value: int | str

    def __str__(self) -> str:
        return f"F:{self.value}" if self.kind == "F" else f"{self.kind}{self.value}"

    @property
    def is_default(self) -> bool:
        return self.kind == "d"


#: The default choice at any point (``o0`` / ``l0``; printed in runs as ``d<n>``).
DEFAULT = Choice("d", 0)


@dataclass(frozen=True, slots=True)
class Schedule:
    """An ordered tuple of choices (defaults after the end)."""

    choices: tuple[Choice, ...] = ()

    @classmethod
    def parse(cls, text: str | Schedule) -> Schedule:
        """``"d3 o2 l1 F:kill(broker-a) o0"`` → a Schedule; a bad token raises ScheduleError."""
        if isinstance(text, Schedule):
            return text
        if not isinstance(text, str):
            raise ScheduleError(f"a schedule is a string, got {type(text).__name__}")
        out: list[Choice] = []
        for tok in text.split():
            if tok == "(default)":  # how an all-default schedule prints
                continue
            m = _TOKEN.match(tok)
            if m is None:
                raise ScheduleError(
                    f"bad schedule token {tok!r}: expected o<i>, l<i>, L<i>, d<n> or F:<fault>"
                )
            o, lat, slow, d, f = m.groups()
            if o is not None:
                out.append(Choice("o", int(o)) if int(o) else DEFAULT)
            elif lat is not None:
                out.append(Choice("l", int(lat)) if int(lat) else DEFAULT)
            elif slow is not None:
                out.append(Choice("L", int(slow)))
            elif d is not None:
                out.extend(DEFAULT for _ in range(int(d)))
            else:
                out.append(Choice("F", f))
        return cls(tuple(out))

    def __str__(self) -> str:
        toks: list[str] = []
        run = 0
        for c in self.trimmed().choices:
            if c.is_default:
                run += 1
                continue
            if run:
                toks.append(f"d{run}")
                run = 0
            toks.append(str(c))
        return " ".join(toks) if toks else "(default)"

    def trimmed(self) -> Schedule:
        """Without trailing defaults (they change nothing)."""
        ch = list(self.choices)
        while ch and ch[-1].is_default:
            ch.pop()
        return Schedule(tuple(ch))

    def __len__(self) -> int:
        return len(self.choices)

    @property
    def faults(self) -> int:
        return sum(c.kind == "F" for c in self.choices)

    @property
    def moves(self) -> int:
        """Non-default order and latency choices (a link kept slow, ``L<i>``, is one)."""
        return sum(c.kind != "F" and not c.is_default for c in self.choices)

    @property
    def depth(self) -> int:
        """Choice points up to the last non-default one (faults included)."""
        return len(self.trimmed().choices)

    def sort_key(self) -> tuple:
        t = self.trimmed()
        slow = sum(c.kind == "L" for c in t.choices)
        return (t.faults, t.moves, len(t.choices), slow, str(t))
