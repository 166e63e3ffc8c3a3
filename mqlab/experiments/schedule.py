"""The timeline of a scenario: every send and fault, with its time, in run order.

Mirrors no RocketMQ class. This module owns turning a ``Scenario``'s schedule (rates,
bursts, Poisson arrivals, fault times with jitter) into a sorted list of ``Action``s. It is
pure: randomness comes from ``random.Random`` instances seeded with strings built from the
scenario seed and a purpose (``"<seed>|producer|0"``), so adding a fault never moves a send,
and the same seed gives the same timeline in every process. It must not know the Lab.

Order at one ms: faults first (in scenario order), then delayed consumer starts, then
sends (producer order).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mqlab.experiments.scenario import FaultSpec, ProducerSpec, Scenario

__all__ = ["Action", "timeline", "send_times", "fault_time"]


@dataclass(frozen=True, slots=True)
class Action:
    """One thing to do at scenario time ``t_ms``: a send or a fault."""

    t_ms: int
    kind: str  # "fault", "start" (a consumer spec with start_ms > 0) or "send"
    index: int  # fault, consumer-spec or producer index in the scenario
    number: int = 0  # message number of that producer (sends), consumer number (starts)
    fault: FaultSpec | None = None

    def sort_key(self) -> tuple[int, int, int, int]:
        return (self.t_ms, _KIND_ORDER[self.kind], self.index, self.number)


_KIND_ORDER = {"fault": 0, "start": 1, "send": 2}


def _rng(seed: int, *purpose: object) -> random.Random:
    return random.Random("|".join(str(p) for p in (seed, *purpose)))


def send_times(spec: ProducerSpec, index: int, seed: int, duration_ms: int) -> list[int]:
    """When producer ``index`` sends, in order (bursts merged in)."""
    stop = duration_ms if spec.stop_ms is None else min(spec.stop_ms, duration_ms)
    times: list[int] = []
    if spec.rate_per_s > 0:
        if spec.arrival == "uniform":
            interval = 1000.0 / spec.rate_per_s
            k = 0
            while (t := spec.start_ms + int(k * interval)) < stop:
                times.append(t)
                k += 1
        else:  # poisson
            rng = _rng(seed, "producer", index)
            t_f = float(spec.start_ms)
            while True:
                t_f += rng.expovariate(spec.rate_per_s / 1000.0)
                if int(t_f) >= stop:
                    break
                times.append(int(t_f))
    for burst in spec.bursts:
        if 0 <= burst.at_ms < duration_ms:
            times.extend([burst.at_ms] * burst.count)
    times.sort()
    return times


def fault_time(fault: FaultSpec, index: int, seed: int) -> int:
    """``at_ms`` plus a seeded delay in 0..``jitter_ms``."""
    if fault.jitter_ms <= 0:
        return fault.at_ms
    return fault.at_ms + _rng(seed, "fault", index).randint(0, fault.jitter_ms)


def timeline(scenario: Scenario) -> list[Action]:
    """Every send, fault and delayed consumer start, sorted by (time, kind, index)."""
    actions: list[Action] = []
    for i, c in enumerate(scenario.consumers):
        if c.start_ms > 0:
            actions.extend(Action(c.start_ms, "start", i, n) for n in range(c.count))
    for i, p in enumerate(scenario.producers):
        for n, t in enumerate(send_times(p, i, scenario.seed, scenario.duration_ms)):
            actions.append(Action(t, "send", i, n))
    for i, f in enumerate(scenario.faults):
        t = fault_time(f, i, scenario.seed)
        if t < scenario.end_ms:
            actions.append(Action(t, "fault", i, 0, f))
    actions.sort(key=Action.sort_key)
    return actions
