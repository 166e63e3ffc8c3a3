"""BrokerStatsManager's figures: VIEW_BROKER_STATS_DATA (315), GET_CONSUME_STATS's consumeTps
(208) and GET_BROKER_CONSUME_STATS (317), after sends and a pull of one group.

Every 10 s each broker samples its counters (``StatsItemSet#samplingInSeconds``, timed from
its own start). The reads wait 10.5 s after the sends and the pull, so that at least one
sample lies between on both sides: the minute's ``sum`` is then the same (a new item's first
sample is preceded by a zero one), while its ``tps`` divides by the time between the first
and last sample kept, which depends on each broker's phase (rule ``sampled-tps``: masked
only when both are non-zero). GROUP_GET_LATENCY is not read: it is the milliseconds each
broker took to copy the pulled messages (its own JIT and load), not a figure to compare.
"""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import SETTLE_MS, pull, send_v2

__all__ = ["SCENARIOS", "STATS_PREFIX"]

#: Topic and group names of this group: the ``sampled-tps`` rule wants their tps non-zero.
STATS_PREFIX = "cf_stats"
T = STATS_PREFIX
G = f"{STATS_PREFIX}_cg"
#: one 10 s sampling period and a margin, on the real clock
AFTER_A_SAMPLE_MS = 10_500


def _view(name: str, stats: str, key: str, *, wait_ms: int = 0, note: str = "") -> Step:
    return Step(name, "VIEW_BROKER_STATS_DATA", {"statsName": stats, "statsKey": key},
                wait_ms=wait_ms, note=note)  # fmt: skip


SCENARIOS = [
    Scenario(
        "stats",
        "sampled",
        [
            *[send_v2(f"send_{i}", T, 0, b"stats", n=1200 + i, expect=0) for i in range(5)],
            pull(
                "pull",
                G,
                T,
                0,
                0,
                wait_ms=SETTLE_MS,
                note="5 found: GROUP_GET_NUMS cf_stats@cf_stats_cg += 5",
                expect=0,
            ),  # fmt: skip
            _view(
                "topic_put_nums",
                "TOPIC_PUT_NUMS",
                T,
                wait_ms=AFTER_A_SAMPLE_MS,
                note="sum 5, avgpt 1.0 once a 10 s sample has run",
            ),  # fmt: skip
            _view("topic_put_size", "TOPIC_PUT_SIZE", T, note="the bytes written"),
            _view("group_get_nums", "GROUP_GET_NUMS", f"{T}@{G}", note="one pull of 5"),
            _view("group_get_size", "GROUP_GET_SIZE", f"{T}@{G}"),
            _view(
                "not_counted",
                "TOPIC_PUT_NUMS",
                "cf_stats_never",
                note="SYSTEM_ERROR: The stats <..> <..> not exist",
            ),  # fmt: skip
            _view("no_such_stats", "NO_SUCH_STATS", T),
            Step(
                "consume_stats",
                "GET_CONSUME_STATS",
                {"consumerGroup": G, "topic": T},
                note="consumeTps = tpsGroupGetNums",
            ),  # fmt: skip
            Step(
                "broker_consume_stats_order",
                "GET_BROKER_CONSUME_STATS",
                {"isOrder": "true"},
                note="order topics only: every group, no topics",
            ),  # fmt: skip
            Step(
                "broker_consume_stats",
                "GET_BROKER_CONSUME_STATS",
                {"isOrder": "false"},
                note="every group's ConsumeStats per topic it has offsets on",
            ),  # fmt: skip
        ],
        doc="Sends and a pull counted in BrokerStatsManager, read back after a 10 s sample: "
        "VIEW_BROKER_STATS_DATA (315), GET_CONSUME_STATS (208), GET_BROKER_CONSUME_STATS (317).",
    ),
]
