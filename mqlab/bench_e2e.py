"""End-to-end simulation benchmark: producer → broker → push consumers.

``python -m mqlab.bench_e2e [--messages N] [--batch B] [--trace] [--repeat R]`` builds a
Lab with one broker, a topic of 8 queues and 4 push consumers in one group, sends N messages
(single sends, or batches of B), runs until every message was handed to a listener, and
prints messages/s of wall time for the whole flow (frames encoded and decoded on every hop),
beside the raw-Python floor of ``mqlab.bench`` (the best of R runs). Issue 3's targets:
≥ 200k msg/s with tracing off (≤ 5× the floor) and ≥ 50k msg/s with full step tracing.
"""

from __future__ import annotations

import argparse
import sys
import time

__all__ = ["bench_e2e", "main"]


def bench_e2e(
    n: int = 20_000, *, batch: int = 1, trace: bool = False, body_size: int = 100
) -> dict:
    from mqlab.common.message import Message
    from mqlab.lab.lab import Lab

    lab = Lab(seed=1, trace_level="steps" if trace else "off")
    lab.request("broker-a", "UPDATE_AND_CREATE_TOPIC", {
        "topic": "BenchTopic", "defaultTopic": "TBW102", "readQueueNums": 8, "writeQueueNums": 8,
        "perm": 6, "topicFilterType": "SINGLE_TAG",
    })  # fmt: skip
    for _ in range(4):
        lab.push_consumer(
            "BenchGroup", "BenchTopic", consume_from_where="CONSUME_FROM_FIRST_OFFSET"
        )
    lab.advance(25_000)  # let the group settle: heartbeats, routes, rebalance (2 queues each)
    producer = lab.producer("BenchProducer")
    lab.run_until_idle()
    body = bytes(body_size)
    t0 = time.perf_counter()
    sent = 0
    while sent < n:
        if batch > 1:
            k = min(batch, n - sent)
            producer.send_batch([Message("BenchTopic", body, tags="TagA") for _ in range(k)])
            sent += k
        else:
            producer.send(Message("BenchTopic", body, tags="TagA"))
            sent += 1
        if sent % 2048 < batch or batch == 1 and sent % 2048 == 0:
            lab.driver.run_until_idle()  # keep the in-flight window bounded, like a real producer
    lab.driver.run_until_idle()
    elapsed = time.perf_counter() - t0
    delivered = sum(len(c.consumed) for c in lab.consumers.values())
    events = lab.driver.events_run
    lab.close()
    return {"messages": n, "delivered": delivered, "seconds": elapsed, "msg_per_s": n / elapsed,
            "events": events}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab.bench_e2e", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument(
        "--batch", type=int, default=1, help="send batches of this many (1 = single sends)"
    )
    ap.add_argument("--trace", action="store_true", help="full step tracing on")
    ap.add_argument("--repeat", type=int, default=1, help="run this many times and report the best")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be >= 1, got {args.repeat}")
    from mqlab.bench import _floor

    floor = _floor(100_000, bytes(100), b"BenchTopic", b"TAGS\x01TagA\x02CLUSTER\x01DefaultCluster")
    runs = [
        bench_e2e(args.messages, batch=args.batch, trace=args.trace) for _ in range(args.repeat)
    ]
    r = max(runs, key=lambda run: run["msg_per_s"])
    if args.repeat > 1:
        print("runs: " + ", ".join(f"{run['msg_per_s']:,.0f}" for run in runs) + " msg/s")
    print(f"mqlab end-to-end: {r['messages']} messages, batch {args.batch}, trace "
          f"{'on' if args.trace else 'off'}, 8 queues, 4 consumers")  # fmt: skip
    print(f"delivered {r['delivered']} in {r['seconds']:.2f} s: {r['msg_per_s']:,.0f} msg/s "
          f"({r['msg_per_s'] / floor:.3f} x floor {floor:,.0f} msg/s); {r['events']} events")  # fmt: skip
    return 0 if all(run["delivered"] >= run["messages"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
