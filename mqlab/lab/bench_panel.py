"""Click-to-refresh latency of the control panel (issue 4, "Figures to report").

Builds a lab with two push consumers on ``TopicTest`` and 1,000 messages sent and
consumed, shows a ``control_panel`` on it (headless: widgets without a kernel), then
times ``clicks`` clicks of "send" (count 1) and of "advance" (100 ms). Each timing is one
``button.click()``: validate → call the Lab → refresh the inspectors and the timeline →
append the events in words. Target: median ≤ 100 ms.

Run: ``python -m mqlab.lab.bench_panel [--clicks 50] [--messages 1000] [--plot-mode live]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from mqlab.lab.lab import Lab
from mqlab.lab.widgets import control_panel

__all__ = ["build_lab", "time_clicks", "main"]


def build_lab(messages: int = 1000, consumers: int = 2, seed: int = 7) -> Lab:
    """A lab with ``consumers`` push consumers of group CG that consumed ``messages``."""
    lab = Lab(seed=seed)
    for _ in range(consumers):
        lab.push_consumer("CG", "TopicTest")
    lab.send_many("TopicTest", messages)
    lab.advance(25_000)  # rebalance rounds, consumption, an offset persist
    return lab


def time_clicks(button, clicks: int) -> list[float]:
    """Milliseconds per ``button.click()``."""
    out = []
    for _ in range(clicks):
        t0 = time.perf_counter()
        button.click()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _summary(name: str, ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=10)
    return (
        f"{name:<18} n={len(ms):<3} median {statistics.median(ms):6.1f} ms   "
        f"p90 {q[-1]:6.1f} ms   max {max(ms):6.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mqlab.lab.bench_panel", description=__doc__)
    ap.add_argument("--clicks", type=int, default=50)
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--consumers", type=int, default=2)
    ap.add_argument("--plot-mode", choices=["live", "static"], default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    lab = build_lab(args.messages, args.consumers)
    build_s = time.perf_counter() - t0
    panel = control_panel(lab, plot_mode=args.plot_mode)
    consumed = sum(len(c.consumed) for c in lab.consumers.values())
    print(
        f"lab: {args.messages} messages, {args.consumers} consumers, {consumed} consumed, "
        f"{len(lab.trace)} trace events, built in {build_s:.1f} s; plot mode {panel.timeline.mode}"
    )
    panel.inputs["count"].value = "1"
    panel.inputs["advance_ms"].value = "100"
    send = time_clicks(panel.buttons["send"], args.clicks)
    adv = time_clicks(panel.buttons["advance"], args.clicks)
    refresh = time_clicks(panel.buttons["refresh"], args.clicks)
    for name, ms in (("send 1", send), ("advance 100 ms", adv), ("refresh only", refresh)):
        print(_summary(name, ms))
    worst = max(statistics.median(send), statistics.median(adv))
    print(f"target: median <= 100 ms -> {'met' if worst <= 100 else 'NOT met'} ({worst:.1f} ms)")
    errors = [m for m in panel.messages if m.startswith(("✗", "⚠"))]
    if errors:
        print("panel errors:", *errors[:5], sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
