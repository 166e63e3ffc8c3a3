"""Counters sampled on the clock: the TPS figures of statsAll, consumerProgress, brokerConsumeStats.

Mirrors ``StatsItem``, ``StatsItemSet`` and ``StatsSnapshot`` (common/stats, RocketMQ 4.9.3).
A ``StatsItem`` counts a value and a number of times (two ``LongAdder``); three lists of
``CallSnapshot`` (time, times, value) sample them:

1. ``samplingInSeconds`` every 10 s keeps the last 7 samples (a minute);
2. ``samplingInMinutes`` every 10 min keeps the last 7 (an hour);
3. ``samplingInHour`` every hour keeps the last 25 (a day).

The first sample of a list is preceded by a zero sample one period earlier, so an item
counted for the first time at second 3 and sampled at second 10 shows its whole count over
10 s. ``computeStatsData`` reads a list: ``sum`` = last value - first value, ``tps`` =
sum * 1000 / (last time - first time), ``avgpt`` = sum / (last times - first times).

The sampling runs on the owner's clock: ``BrokerStatsManager`` arms the timers on the
broker's context (the simulated clock in the simulation driver, the real one in ``serve``)
and passes ``now_ms`` in.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["CallSnapshot", "StatsItem", "StatsItemSet", "StatsSnapshot"]


@dataclass(frozen=True, slots=True)
class CallSnapshot:
    """Mirrors ``CallSnapshot``: the counters at one sampling time."""

    timestamp: int
    times: int
    value: int


@dataclass(slots=True)
class StatsSnapshot:
    """Mirrors ``StatsSnapshot``: what one sample list says (0 when it is empty)."""

    sum: int = 0
    tps: float = 0.0
    avgpt: float = 0.0
    times: int = 0


def compute_stats_data(cs_list: deque[CallSnapshot]) -> StatsSnapshot:
    """Mirrors ``StatsItem#computeStatsData``: first and last sample of the list."""
    ss = StatsSnapshot()
    if cs_list:
        first, last = cs_list[0], cs_list[-1]
        ss.sum = last.value - first.value
        span = last.timestamp - first.timestamp
        # Java divides doubles: a zero span gives NaN or Infinity; sampling never gives one
        ss.tps = (ss.sum * 1000.0) / span if span else 0.0
        ss.times = last.times - first.times
        if ss.times > 0:
            ss.avgpt = ss.sum / ss.times
    return ss


class StatsItem:
    """Mirrors ``StatsItem``: one key's value and times, and its three sample lists."""

    __slots__ = ("stats_name", "stats_key", "value", "times", "cs_minute", "cs_hour", "cs_day")

    def __init__(self, stats_name: str, stats_key: str) -> None:
        self.stats_name = stats_name
        self.stats_key = stats_key
        self.value = 0
        self.times = 0
        self.cs_minute: deque[CallSnapshot] = deque()
        self.cs_hour: deque[CallSnapshot] = deque()
        self.cs_day: deque[CallSnapshot] = deque()

    def _sample(self, cs: deque[CallSnapshot], now_ms: int, period_ms: int, keep: int) -> None:
        if not cs:
            cs.append(CallSnapshot(now_ms - period_ms, 0, 0))
        cs.append(CallSnapshot(now_ms, self.times, self.value))
        if len(cs) > keep:
            cs.popleft()

    def sampling_in_seconds(self, now_ms: int) -> None:
        """``samplingInSeconds``: every 10 s, the last 7 kept."""
        self._sample(self.cs_minute, now_ms, 10_000, 7)

    def sampling_in_minutes(self, now_ms: int) -> None:
        """``samplingInMinutes``: every 10 min, the last 7 kept."""
        self._sample(self.cs_hour, now_ms, 600_000, 7)

    def sampling_in_hour(self, now_ms: int) -> None:
        """``samplingInHour``: every hour, the last 25 kept."""
        self._sample(self.cs_day, now_ms, 3_600_000, 25)

    def get_stats_data_in_minute(self) -> StatsSnapshot:
        return compute_stats_data(self.cs_minute)

    def get_stats_data_in_hour(self) -> StatsSnapshot:
        return compute_stats_data(self.cs_hour)

    def get_stats_data_in_day(self) -> StatsSnapshot:
        return compute_stats_data(self.cs_day)


class StatsItemSet:
    """Mirrors ``StatsItemSet``: the items of one stats name, by key (created on first use)."""

    __slots__ = ("stats_name", "stats_item_table")

    def __init__(self, stats_name: str) -> None:
        self.stats_name = stats_name
        self.stats_item_table: dict[str, StatsItem] = {}

    def get_and_create_stats_item(self, stats_key: str) -> StatsItem:
        item = self.stats_item_table.get(stats_key)
        if item is None:
            item = self.stats_item_table[stats_key] = StatsItem(self.stats_name, stats_key)
        return item

    def add_value(self, stats_key: str, inc_value: int, inc_times: int) -> None:
        item = self.get_and_create_stats_item(stats_key)
        item.value += inc_value
        item.times += inc_times

    def get_stats_item(self, stats_key: str) -> StatsItem | None:
        return self.stats_item_table.get(stats_key)

    def get_stats_data_in_minute(self, stats_key: str) -> StatsSnapshot:
        item = self.stats_item_table.get(stats_key)
        return item.get_stats_data_in_minute() if item is not None else StatsSnapshot()

    def sampling_in_seconds(self, now_ms: int) -> None:
        for item in list(self.stats_item_table.values()):
            item.sampling_in_seconds(now_ms)

    def sampling_in_minutes(self, now_ms: int) -> None:
        for item in list(self.stats_item_table.values()):
            item.sampling_in_minutes(now_ms)

    def sampling_in_hour(self, now_ms: int) -> None:
        for item in list(self.stats_item_table.values()):
            item.sampling_in_hour(now_ms)

    def del_value(self, stats_key: str) -> None:
        self.stats_item_table.pop(stats_key, None)

    def del_value_by_prefix_key(self, stats_key: str, separator: str) -> None:
        for k in [k for k in self.stats_item_table if k.startswith(stats_key + separator)]:
            del self.stats_item_table[k]

    def del_value_by_infix_key(self, stats_key: str, separator: str) -> None:
        infix = separator + stats_key + separator
        for k in [k for k in self.stats_item_table if infix in k]:
            del self.stats_item_table[k]

    def del_value_by_suffix_key(self, stats_key: str, separator: str) -> None:
        for k in [k for k in self.stats_item_table if k.endswith(separator + stats_key)]:
            del self.stats_item_table[k]
