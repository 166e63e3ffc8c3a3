"""The interop scenarios: one real client doing one thing a RocketMQ user does.

A scenario is a function ``run(target, workdir) -> observation``. It drives a client
against ``target`` (``mqlab serve`` or the real 4.9.3 broker), checks what the scenario
promises (``expect``: raises ``ScenarioFailed`` with the reason), and returns what a user
can observe, with ports, times and message ids left out, so that the observation on mqlab
can be compared with the one on the real broker.

Adding a scenario: write ``def go_something(t, work) -> dict`` below and register it with
``@scenario("go", "one line saying what it shows")``. Use a topic and group name unique to
the scenario: all scenarios of a run share one cluster per target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mqlab.interop.go_client import go_missing, run_go_client
from mqlab.interop.targets import Target

__all__ = ["Scenario", "ScenarioFailed", "SCENARIOS", "CLIENT_MISSING", "expect", "scenario"]


class ScenarioFailed(AssertionError):
    """A scenario's own check did not hold on a target."""


def expect(cond: bool, why: str) -> None:
    if not cond:
        raise ScenarioFailed(why)


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    client: str
    description: str
    run: Callable[[Target, Path], dict]


SCENARIOS: list[Scenario] = []

#: client -> a function saying why that client cannot run here (None when it can).
CLIENT_MISSING: dict[str, Callable[[], str | None]] = {"go": go_missing}


def scenario(client: str, description: str):
    def register(fn: Callable[[Target, Path], dict]) -> Callable[[Target, Path], dict]:
        name = fn.__name__.removeprefix(f"{client}_").replace("_", "-")
        SCENARIOS.append(Scenario(f"{client}/{name}", client, description, fn))
        return fn

    return register


# --------------------------------------------------------------------------- Go client


def _go_send(t: Target, topic: str, count: int, tags: str = "", group: str = "go_pg") -> list[dict]:
    return run_go_client(
        ["produce", "-n", t.namesrv_addr, "-topic", topic, "-group", group,
         "-count", str(count), "-tags", tags]
    )  # fmt: skip


def _sends(results: list[dict]) -> list[dict]:
    """What a SendResult shows a user, without its ids (built from host, port and time)."""
    return [
        {k: r.get(k) for k in ("i", "status", "broker", "queueId", "queueOffset", "error")}
        for r in results
    ]


@scenario("go", "SEND_MESSAGE (10, long header names) to a new topic: auto-created from TBW102")
def go_send_auto_create(t: Target, work: Path) -> dict:
    sent = _go_send(t, "InteropGoAuto", 8, "TagA,TagB")
    expect(len(sent) == 8, f"8 send results expected, got {len(sent)}")
    expect(all(r.get("status") == 0 for r in sent), f"every send SEND_OK: {sent}")
    return {"sends": _sends(sent)}


@scenario("go", "push consumer with 'TagA || TagB' (clustering, from the first offset)")
def go_push_tag_filter(t: Target, work: Path) -> dict:
    sent = _go_send(t, "InteropGoTag", 9, "TagA,TagB,TagC")
    expect(all(r.get("status") == 0 for r in sent), f"every send SEND_OK: {sent}")
    got = run_go_client(
        ["consume", "-n", t.namesrv_addr, "-topic", "InteropGoTag", "-group", "go_cg_tag",
         "-expr", "TagA || TagB", "-expect", "6", "-timeout", "60s"],
        home=work,
    )  # fmt: skip
    msgs = [m for m in got if m["event"] == "consume"]
    bodies = sorted(m["body"] for m in msgs)
    want = sorted(f"go-{i}" for i in range(9) if i % 3 != 2)
    expect(bodies == want, f"TagA/TagB messages exactly once: got {bodies}, want {want}")
    # Concurrent consumption promises no order, not even per queue (the listener runs on a
    # pool): the observation is the set of deliveries.
    delivered = sorted(
        (m["queueId"], m["queueOffset"], m["tags"], m["body"], m["reconsumeTimes"]) for m in msgs
    )
    return {"sends": _sends(sent), "delivered": [list(d) for d in delivered]}
