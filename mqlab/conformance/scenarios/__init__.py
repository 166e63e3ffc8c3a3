"""The scenarios, by group (mechanism). ``ALL`` is the order they run in."""

from __future__ import annotations

from mqlab.conformance.scenario import Scenario
from mqlab.conformance.scenarios import send

__all__ = ["ALL", "GROUPS"]

#: group -> one line for the report.
GROUPS: dict[str, str] = {
    "send": "SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320), msgCheck, "
    "auto-creation, %RETRY%, limits, permissions.",
}

ALL: list[Scenario] = [*send.SCENARIOS]
