"""Long polling on the real clock: a parked pull answered after its suspend time, a parked
pull woken by an arriving message, and short polling (``longPollingEnable=false``).

A parked pull times out at the first ``PullRequestHoldService`` check after its suspend
time. The service checks every 5 s with long polling (every ``shortPollingTimeMills``,
1 s, without), counted from each broker's own start, so the two brokers answer at
different moments inside that window: those steps compare their elapsed time with the
window (``timing_window``), not with each other. A pull woken by a message is answered
when the message is dispatched, at the same moment on both: compared within 300 ms.
"""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario, Step
from mqlab.conformance.scenarios.common import SETTLE_MS, broker_config, pull, send_v2

__all__ = ["SCENARIOS"]

#: PullRequestHoldService#run reads longPollingEnable only when it starts a wait: after the
#: switch, the 5 s wait under way still ends first. Only then does it check every 1 s.
SHORT_POLLING_SETTLE_MS = 5500

T = "cf_lp"
G = "cf_lp_group"

SCENARIOS = [
    Scenario(
        "long-polling",
        "parked-pull-times-out",
        [
            send_v2("send", T, 0, b"lp-0", n=800, expect=0),
            pull(
                "pull_at_max",
                G,
                T,
                0,
                1,
                suspend_ms=2000,
                wait_ms=SETTLE_MS,
                timing_window=(2000, 7300),
                note="parked at maxOffset for 2 s, answered at the next hold check",
            ),
        ],
        doc="PULL_MESSAGE with FLAG_SUSPEND at maxOffset: held, then answered PULL_NOT_FOUND "
        "once its suspend time has passed (seed of PullRequestHoldService#checkHoldRequest).",
    ),
    Scenario(
        "long-polling",
        "parked-pull-woken-by-message",
        [
            send_v2("send", T, 1, b"lp-1", n=801, expect=0),
            pull(
                "parked",
                G,
                T,
                1,
                1,
                suspend_ms=15000,
                wait_ms=SETTLE_MS,
                background=True,
                timing=True,
                note="woken about 1 s later by the next message",
            ),
            send_v2("wake", T, 1, b"lp-2", n=802, expect=0, wait_ms=1000),
            Step("after_wake", "GET_MAX_OFFSET", {"topic": T, "queueId": "1"}, after=("parked",)),
        ],
        doc="A pull parked for 15 s is answered FOUND as soon as a message for its queue is "
        "dispatched (NotifyMessageArrivingListener), not at its timeout.",
    ),
    Scenario(
        "long-polling",
        "short-polling",
        [
            broker_config("long_polling_off", longPollingEnable="false"),
            send_v2("send", T, 2, b"lp-3", n=803, expect=0),
            pull(
                "pull_short",
                G,
                T,
                2,
                1,
                suspend_ms=15000,
                wait_ms=SHORT_POLLING_SETTLE_MS,
                timing_window=(1000, 2300),
                note="short polling: held shortPollingTimeMills (1 s), not the 15 s asked; "
                "sent once the hold service's 5 s wait under way at the switch is over",
            ),
            broker_config("long_polling_on", longPollingEnable="true"),
        ],
        doc="With longPollingEnable=false (switched at runtime by UPDATE_BROKER_CONFIG) a "
        "suspended pull is held for shortPollingTimeMills (1000 ms) whatever "
        "suspendTimeoutMillis says, and answered at the next 1 s hold check.",
    ),
]
