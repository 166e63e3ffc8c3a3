"""Every figure the lessons and their panels draw, collected for the figure check (issue 28).

``lesson_figures(stem)`` runs the learner notebook ``notebooks/<stem>.ipynb`` cell by cell as
*Run All* does (``walks``), with Spark off (lesson 09 then aggregates on pandas: the same
numbers, the same figures), and keeps every figure a cell shows. A cell that shows a control
panel, the run explorer or the outcome explorer is driven the way its lesson's walk drives it
(send, pull once, to next timer; the explorer's metrics; the outcome classes), and the
figures it draws are kept after each click.

Mirrors no RocketMQ class: test plumbing.
"""

from __future__ import annotations

from typing import Any

from walks import _run_cell, code_cells

from mqlab.lab.figure_check import figures_of

STEMS = ("00_tour", "01_send_path", "02_store", "03_pull_processing", "04_long_polling",
         "05_rebalancing", "06_pull_loop_flow_control", "07_retry_dlq", "08_offsets",
         "09_comparing_runs_with_spark", "10_transactions", "11_what_can_happen",
         "12_replication_and_failover", "13_who_may_send", "14_raft_in_the_broker")  # fmt: skip
_SHOWN = ("ControlPanel", "TransactionPanel", "RunExplorer", "OutcomeExplorer")


def _drive(obj: Any, name: str) -> list[tuple[str, Any]]:
    """Click through ``obj`` as its walk does; the figures it drew after each click."""
    out = list(figures_of(obj, name))
    kind = type(obj).__name__
    if kind in ("ControlPanel", "TransactionPanel"):
        clicks = ["send", "pull", "next_timer"] if kind == "ControlPanel" else [
            "start_producer", "send_tx", "crash", "step_check"]  # fmt: skip
        for b in clicks:
            obj.buttons[b].click()
            out += figures_of(obj, f"{name} after {b}")
    elif kind == "RunExplorer":
        for metric in list(obj.metric.options)[:4]:
            obj.metric.value = metric
            out += figures_of(obj, f"{name} {metric}")
    elif kind == "OutcomeExplorer":
        for row in obj.result.rows[:1]:  # the bar chart recoloured, a replay on the timeline
            obj.select(row.outcome)
            out += figures_of(obj, f"{name} {row.outcome}")
    return out


def lesson_figures(stem: str, monkeypatch: Any) -> list[tuple[str, Any]]:
    """(name, figure) of every figure lesson ``stem`` draws, named by cell."""
    monkeypatch.setenv("MQLAB_SKIP_SPARK", "1")
    ns: dict[str, Any] = {"__name__": f"figures_{stem}"}
    shown: list[tuple[str, Any]] = []
    for i, src in enumerate(code_cells(stem)):
        value = _run_cell(src, ns, f"<{stem} cell {i}>")
        name = f"{stem} cell {i}"
        if value is not None and (hasattr(value, "to_plotly_json")
                                  or type(value).__name__ in _SHOWN):  # fmt: skip
            shown.append((name, value))
    seen = {id(v) for _, v in shown}
    shown += [(f"{stem} {k}", v) for k, v in ns.items()
              if type(v).__name__ in _SHOWN and id(v) not in seen]  # fmt: skip
    figs: list[tuple[str, Any]] = []
    for name, obj in shown:
        figs += _drive(obj, name)
    return figs
