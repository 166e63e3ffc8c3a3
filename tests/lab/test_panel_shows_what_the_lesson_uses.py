"""Each lesson's control panel shows only the toggles and inspector tables the lesson uses.

Mirrors no RocketMQ class: this guards the lessons' panels (issue 28, "Small mismatches
between prose and screen": lesson 01's panel showed the allocation and listener toggles,
lesson 10's panel empty tables the lesson never uses). The walk of lessons 01–10 found the
same in lessons 01, 03, 04, 05 and 07: toggles the text never names (*allocate* and
*listener* in lesson 03's pull panel) and tables no click of the panel can fill (allocation
and process queues under a panel without consumers).

Rules, for every ``control_panel(...)`` call in lessons 01–10 (lesson 00 is the tour of the
whole panel):

- each toggle shown is named in the lesson's text by its label;
- each inspector table shown can get rows from the panel's own sections: allocation and
  process queues need *consumers*; held pulls need *consumers* or *pull*; consumer offsets
  need *consumers*, or the lesson's own cells commit offsets (``consumer_offsets()``).

Owns: reading the calls (``ast``, literal arguments). Must not know: the panel's widgets.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from mqlab.lab.panel_views import DEFAULT_VIEWS
from mqlab.lab.widgets import TOGGLES

ROOT = Path(__file__).resolve().parents[2]
STEMS = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md") if p.stem[:2] != "00")
#: Each toggle's label, as the lesson's text names it.
LABELS = {"long_polling": "longPollingEnable", "auto_create_topic": "autoCreateTopicEnable",
          "strategy": "*allocate*", "listener": "*listener*"}  # fmt: skip
#: The sections that can put rows in each table (None: any panel).
FILLED_BY = {"allocation": {"consumers"}, "process_queues": {"consumers"},
             "held_pulls": {"consumers", "pull"}, "consumer_offsets": {"consumers"}}  # fmt: skip
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def panel_calls(stem: str) -> tuple[str, str, list[dict]]:
    """The lesson's text outside code cells, its code, and the keyword arguments of each
    ``control_panel`` call (literals only; absent ones at their defaults)."""
    text = (ROOT / "lessons" / f"{stem}.md").read_text(encoding="utf-8")
    code = "\n".join(CELL.findall(text))
    prose = CELL.sub("", text)
    calls = []
    for cell in CELL.findall(text):
        lines = [ln for ln in cell.splitlines() if not ln.startswith((":", "%", "!"))]
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "control_panel":
                kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords
                      if k.arg in ("sections", "toggles", "views")}  # fmt: skip
                calls.append({"sections": None, "toggles": TOGGLES, "views": DEFAULT_VIEWS, **kw})
    return prose, code, calls


@pytest.mark.parametrize("stem", STEMS)
def test_the_panel_shows_only_what_the_lesson_uses(stem):
    prose, code, calls = panel_calls(stem)
    for call in calls:
        sections = call["sections"]
        assert sections is not None, f"{stem}: a lesson's panel names its sections"
        unused = []
        if "toggles" in sections:
            unused += [LABELS[t] for t in call["toggles"] if LABELS[t] not in prose]
        if "inspect" in sections:
            for view in call["views"]:
                can_fill = FILLED_BY.get(view)
                if can_fill is None or can_fill & set(sections):
                    continue
                if view == "consumer_offsets" and "consumer_offsets()" in code:
                    continue
                unused.append(view)
        assert not unused, f"{stem}: the panel shows {unused}, which the lesson never uses"


def test_the_rules_see_lesson_01s_old_panel():
    """The toggles and tables lesson 01's panel showed before issue 28 break the rules."""
    prose, _, _ = panel_calls("01_send_path")
    assert [LABELS[t] for t in TOGGLES if LABELS[t] not in prose] == [
        "longPollingEnable", "*allocate*", "*listener*"]  # fmt: skip
