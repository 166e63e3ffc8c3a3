"""Lesson 04 in a real browser: JupyterLab on 127.0.0.1, Debian's Chromium driven by Playwright.

Mirrors no RocketMQ class: this is the workbench's browser tier (issue 4, "Tests": open lesson 04,
run all, click the pull and advance-time buttons, assert the panel's text changed, save a
screenshot). The panel's words come from the trace of seed 001 (`PullRequestHoldService`
suspends a pull that finds nothing; a later hold-service check answers it).
Owns: the browser scenario. Must not know: the panel's internals beyond its visible button texts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: Run All of the whole lesson (imports, Lab, figures, panel) must finish within this bound.
RUN_ALL_TIMEOUT_MS = 120_000
#: A click's round trip (comm message, kernel runs the core, widget state back) within this bound.
CLICK_TIMEOUT_MS = 15_000

#: The panel's buttons, by their visible labels (mqlab/lab/widgets.py, ControlPanel.buttons).
SEND, PULL, LONG_POLL_TIMEOUT = "send", "pull once", "let long poll time out"

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "e2e"


def _parked(text: str) -> int:
    """The panel's "N parked pull(s)" count (its held-pulls inspector, refreshed on every click)."""
    m = re.search(r"(\d+) parked pull\(s\)", text)
    assert m is not None, f"no parked-pull count in the panel:\n{text[:2000]}"
    return int(m.group(1))


def _lesson04() -> Path:
    found = sorted((ROOT / "notebooks").glob("04_*.ipynb"))
    if not found:
        pytest.fail("notebooks/04_*.ipynb (lesson 04) does not exist")
    return found[0]


def drive_panel(page: Page) -> tuple[Locator, list[str]]:
    """Click send, pull once, let long poll time out on the first panel that has all three;
    return the panel's output locator and its text before and after each click."""
    from playwright.sync_api import expect

    def button(name: str) -> Locator:
        return page.get_by_role("button", name=name, exact=True)

    panel = (
        page.locator(".jp-OutputArea-output")
        .filter(has=button(PULL))
        .filter(has=button(LONG_POLL_TIMEOUT))
        .first
    )
    expect(panel).to_be_visible(timeout=CLICK_TIMEOUT_MS)
    panel.scroll_into_view_if_needed()
    texts = [panel.inner_text()]

    # A message first, so the topic exists whatever the lesson did before (seed 002 auto-create).
    panel.get_by_role("button", name=SEND, exact=True).click()
    expect(panel).to_contain_text("→ sent 1/1: SEND_OK", timeout=CLICK_TIMEOUT_MS)
    texts.append(panel.inner_text())

    # Pull at the max offset: nothing to return, so PullRequestHoldService parks it (seed 001).
    panel.get_by_role("button", name=PULL, exact=True).click()
    expect(panel).to_contain_text("the pull is parked", timeout=CLICK_TIMEOUT_MS)
    texts.append(panel.inner_text())

    # Advance virtual time to the hold-service check after the deadline: answered PULL_NOT_FOUND.
    panel.get_by_role("button", name=LONG_POLL_TIMEOUT, exact=True).click()
    expect(panel).to_contain_text("answered the parked pull", timeout=CLICK_TIMEOUT_MS)
    texts.append(panel.inner_text())
    return panel, texts


def test_lesson04_panel_pull_then_long_poll_timeout_changes_panel_text(
    run_all_in_lab: Callable[..., dict[str, float]], page: Page
) -> None:
    """Run All on lesson 04; clicking pull once parks the pull ("pull held: … suspended 15000 ms",
    PullRequestHoldService#suspendPullRequest, seed 001), and "let long poll time out" advances
    to the hold-service check after the deadline, which answers PULL_NOT_FOUND (19) (facts §10.3)."""
    t0 = time.monotonic()
    timings = run_all_in_lab(_lesson04(), RUN_ALL_TIMEOUT_MS)
    t_clicks = time.monotonic()
    panel, (before, after_send, after_pull, after_timeout) = drive_panel(page)

    def last_click(text: str) -> str:  # what the newest click added to the panel's log
        return text.rsplit("▶", 1)[-1]

    assert after_send != before
    assert "pull held" not in last_click(after_send)
    assert after_pull != after_send
    assert "pull held: " in last_click(after_pull)
    assert re.search(r"suspended \d+ ms", last_click(after_pull))
    assert _parked(after_pull) == _parked(after_send) + 1
    assert after_timeout != after_pull
    assert "PULL_NOT_FOUND (19)" in last_click(after_timeout)
    assert _parked(after_timeout) < _parked(after_pull)

    # Show the newest log lines in the screenshot (the log box scrolls; it opens at the top).
    panel.locator("pre").last.evaluate("e => { e.scrollTop = e.scrollHeight; }")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(ARTIFACTS / "lesson04.png"))
    t_end = time.monotonic()
    timings |= {"clicks": t_end - t_clicks, "total": t_end - t0}
    print("e2e lesson04 timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
