"""Network benchmark: the official C++ client against ``mqlab serve`` and an echo floor.

``python -m mqlab.bench.net [--messages N] [--body BYTES] [--producers 4] [--latency N]``
(also ``python -m mqlab bench net``) prints, on loopback:

1. ``send_sync`` messages/s of the real client (PyPI ``rocketmq`` 0.4.4) with one producer
   process, and with ``--producers`` processes in parallel, against:

   * ``floor``: an asyncio server that frames and answers the same requests with no broker
     logic (a fixed route for GET_ROUTEINFO_BY_TOPIC, SUCCESS with ``msgId``/``queueId``/
     ``queueOffset`` for SEND_MESSAGE, SUCCESS for the rest) — transport + client cost;
   ``server us/msg`` is the server thread's CPU time per message in the 1-producer run,
   the figure least disturbed by other load on the machine;
   * ``mqlab``: ``mqlab serve`` (name server + broker-a, tracing off) and
     ``mqlab+trace`` (tracing at the ``serve`` default, ``steps``);

2. end-to-end delivery latency p50/p99 (producer ``send_sync`` → push consumer listener,
   long polling; one message every 5 ms, the send time stamped in the body; both processes
   read the same clock).

Servers run on an event-loop thread of this process; clients run in subprocesses (each
runs this module with ``--client ...``). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

__all__ = ["bench_net", "main"]

TOPIC = "BenchTopic"
LATENCY_TOPIC = "BenchLatency"


# -- the floor: frames in, canned answers out ------------------------------------------------
def _echo_handler(port: int):
    from mqlab.remoting.command import RemotingCommand

    route = json.dumps({
        "orderTopicConf": None,
        "queueDatas": [{"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4,
                        "perm": 6, "topicSynFlag": 0}],
        "brokerDatas": [{"cluster": "DefaultCluster", "brokerName": "broker-a",
                         "brokerAddrs": {"0": f"127.0.0.1:{port}"}}],
        "filterServerTable": {},
    }).encode()  # fmt: skip
    counter = [0]

    def answer(cmd: RemotingCommand) -> RemotingCommand:
        if cmd.code == 105:  # GET_ROUTEINFO_BY_TOPIC
            return RemotingCommand.create_response(0, None, {}, route)
        if cmd.code in (10, 310):  # SEND_MESSAGE(_V2)
            counter[0] += 1
            q = (cmd.ext_fields or {}).get("queueId", "0")
            return RemotingCommand.create_response(
                0, None, {"msgId": f"{counter[0]:032X}", "queueId": q,
                          "queueOffset": str(counter[0])},
            )  # fmt: skip
        return RemotingCommand.create_response(0, None, {})

    return answer


async def _start_echo():
    """An asyncio server answering frames with ``_echo_handler`` (no broker logic)."""
    import asyncio

    from mqlab.remoting.command import RemotingCommand
    from mqlab.runtime.net import bind_socket

    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    answer = _echo_handler(port)

    class Echo(asyncio.Protocol):
        def connection_made(self, transport):
            self.t = transport
            self.buf = bytearray()

        def data_received(self, data):
            buf = self.buf
            buf += data
            pos = 0
            while len(buf) - pos >= 4:
                n = int.from_bytes(buf[pos : pos + 4], "big")
                if len(buf) - pos - 4 < n:
                    break
                cmd = RemotingCommand.decode_payload(bytes(buf[pos + 4 : pos + 4 + n]))
                pos += 4 + n
                if not cmd.is_response:
                    resp = answer(cmd)
                    resp.opaque = cmd.opaque
                    self.t.write(resp.encode())
            del buf[:pos]

    server = await asyncio.get_running_loop().create_server(Echo, sock=sock)
    return server, f"127.0.0.1:{port}"


# -- client side (runs in subprocesses) ---------------------------------------------------------
def _client_send(p: dict[str, Any]) -> dict[str, Any]:
    from rocketmq.client import Message, Producer

    producer = Producer(f"PID-bench-{os.getpid()}")
    producer.set_namesrv_addr(p["ns"])
    producer.start()
    body = "x" * p["body"]

    failed: list[str] = []

    def send() -> int:
        m = Message(p.get("topic", TOPIC))
        m.set_tags("TagA")
        m.set_body(body)
        try:
            producer.send_sync(m)
        except Exception as e:  # counted and reported, not fatal
            failed.append(str(e)[:160])
            return 0
        return 1

    for _ in range(p["warmup"]):
        send()
    while time.time() < p["start_at"]:
        time.sleep(0.001)
    t0 = time.perf_counter()
    ok = sum(send() for _ in range(p["n"]))
    elapsed = time.perf_counter() - t0
    producer.shutdown()
    return {"n": ok, "elapsed": elapsed, "failed": failed[:5], "failures": len(failed)}


def _client_consume(p: dict[str, Any]) -> dict[str, Any]:
    from rocketmq.client import PushConsumer

    lat: list[int] = []

    def on_message(msg) -> None:
        now = time.time_ns()
        stamp, sep, _ = msg.body.partition(b"|")
        if sep:  # the unstamped message that created the topic is skipped
            lat.append(now - int(stamp))

    consumer = PushConsumer("CID-bench-latency")
    consumer.set_namesrv_addr(p["ns"])
    consumer.subscribe(LATENCY_TOPIC, on_message, "*")
    consumer.start()
    print(json.dumps({"started": True}), flush=True)
    deadline = time.time() + p["max_seconds"]
    while len(lat) < p["n"] and time.time() < deadline:
        time.sleep(0.01)
    consumer.shutdown()
    return {"latency_ns": lat}


def _client_pace(p: dict[str, Any]) -> dict[str, Any]:
    from rocketmq.client import Message, Producer

    producer = Producer("PID-bench-latency")
    producer.set_namesrv_addr(p["ns"])
    producer.start()
    for _ in range(p["n"]):
        m = Message(LATENCY_TOPIC)
        m.set_tags("TagA")
        m.set_body(f"{time.time_ns()}|{'x' * p['body']}")
        producer.send_sync(m)
        time.sleep(p["interval"])
    producer.shutdown()
    return {}


_CLIENTS = {"send": _client_send, "consume": _client_consume, "pace": _client_pace}


def _spawn(kind: str, params: dict[str, Any]) -> subprocess.Popen:
    env = dict(os.environ, HOME=params.pop("home"))
    return subprocess.Popen(
        [sys.executable, "-m", "mqlab.bench.net", "--client", kind, json.dumps(params)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _result(proc: subprocess.Popen, timeout: float) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise RuntimeError("a benchmark client hung") from None
    if proc.returncode != 0:
        raise RuntimeError(f"a benchmark client failed: {err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


# -- orchestration ---------------------------------------------------------------------------------
def _send_rate(ns: str, n: int, body: int, procs: int, home: str) -> float:
    """Messages/s of ``procs`` producer processes doing ``n`` send_sync calls each."""
    start_at = time.time() + 2.0 + 0.3 * procs
    ps = [
        _spawn("send", {"ns": ns, "n": n, "body": body, "warmup": 50, "start_at": start_at,
                        "home": home})
        for _ in range(procs)
    ]  # fmt: skip
    results = [_result(p, 300) for p in ps]
    failures = sum(r["failures"] for r in results)
    if failures:
        print(f"  ({failures} send_sync failures, e.g. {results[0]['failed'][:1]})", flush=True)
    return sum(r["n"] for r in results) / max(r["elapsed"] for r in results)


def _latency(ns: str, n: int, body: int, home: str) -> tuple[float, float]:
    create = {"ns": ns, "n": 1, "body": 1, "warmup": 0, "start_at": 0, "topic": LATENCY_TOPIC}
    _result(_spawn("send", {**create, "home": home}), 60)  # the topic exists before the consumer
    consumer = _spawn("consume", {"ns": ns, "n": n, "max_seconds": 120, "home": home})
    line = consumer.stdout.readline()
    if "started" not in line:
        raise RuntimeError(f"latency consumer did not start: {line!r}")
    time.sleep(1.5)  # rebalance, then every queue's pull is held
    pacer = _spawn("pace", {"ns": ns, "n": n, "body": body, "interval": 0.005, "home": home})
    _result(pacer, 300)
    lat = sorted(_result(consumer, 180)["latency_ns"])
    if not lat:
        raise RuntimeError("no message reached the latency consumer")
    return lat[len(lat) // 2] / 1e6, lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1e6


def bench_net(
    n: int = 2000, body: int = 100, producers: int = 4, latency_n: int = 1000
) -> dict[str, Any]:
    """Run every measurement; returns ``{target: {...figures}}``."""
    from mqlab.runtime.net import LoopThread
    from mqlab.serve import ServeConfig, ServerThread

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mqlab-bench-net-") as d:
        home = os.path.join(d, "home")
        os.makedirs(home)
        loop = LoopThread("bench-echo")
        try:
            server, addr = loop.submit(_start_echo())
            cpu0 = loop.call(time.thread_time)
            out["floor"] = {"send_sync_1": _send_rate(addr, n, body, 1, home)}
            out["floor"]["server_us_per_msg"] = (loop.call(time.thread_time) - cpu0) / n * 1e6
            out["floor"][f"send_sync_{producers}"] = _send_rate(addr, n, body, producers, home)
            loop.call(server.close)
        finally:
            loop.close()
        for target, level in (("mqlab", "off"), ("mqlab+trace", "steps")):
            cfg = ServeConfig(
                namesrv_port=0, broker_port=0, store=os.path.join(d, target), trace_level=level
            )
            with ServerThread(cfg) as srv:
                cpu0 = srv.call(lambda s: time.thread_time())
                r = out[target] = {"send_sync_1": _send_rate(srv.namesrv_addr, n, body, 1, home)}
                r["server_us_per_msg"] = (srv.call(lambda s: time.thread_time()) - cpu0) / n * 1e6
                r[f"send_sync_{producers}"] = _send_rate(srv.namesrv_addr, n, body, producers, home)
                p50, p99 = _latency(srv.namesrv_addr, latency_n, body, home)
                out[target]["latency_p50_ms"] = p50
                out[target]["latency_p99_ms"] = p99
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--client"]:
        result = _CLIENTS[argv[1]](json.loads(argv[2]))
        print(json.dumps(result), flush=True)
        os._exit(0)  # the client library's threads may outlive shutdown()
    ap = argparse.ArgumentParser(
        prog="python -m mqlab bench net", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--messages", type=int, default=2000, help="send_sync calls per producer")
    ap.add_argument("--body", type=int, default=100, help="body size in bytes")
    ap.add_argument("--producers", type=int, default=4, help="parallel producer processes")
    ap.add_argument("--latency", type=int, default=1000, help="messages for the latency run")
    args = ap.parse_args(argv)
    try:
        import rocketmq.client  # noqa: F401
    except (ImportError, OSError) as e:
        print(f"bench net needs the rocketmq package (pip install rocketmq==0.4.4): {e}")
        return 2
    res = bench_net(args.messages, args.body, args.producers, args.latency)
    k = f"send_sync_{args.producers}"
    print(f"mqlab net benchmark: C++ client (rocketmq 0.4.4), {args.body}-byte bodies, loopback")
    print(f"{'target':<14}{'1 producer msg/s':>18}{f'{args.producers} producers msg/s':>20}"
          f"{'x floor (1/N)':>16}{'server us/msg':>15}{'p50 ms':>9}{'p99 ms':>9}")  # fmt: skip
    floor = res["floor"]
    for target, r in res.items():
        ratio = f"{r['send_sync_1'] / floor['send_sync_1']:.2f}/{r[k] / floor[k]:.2f}"
        p50 = f"{r['latency_p50_ms']:.2f}" if "latency_p50_ms" in r else "-"
        p99 = f"{r['latency_p99_ms']:.2f}" if "latency_p99_ms" in r else "-"
        cpu = f"{r['server_us_per_msg']:.0f}"
        print(f"{target:<14}{r['send_sync_1']:>18,.0f}{r[k]:>20,.0f}{ratio:>16}{cpu:>15}"
              f"{p50:>9}{p99:>9}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
