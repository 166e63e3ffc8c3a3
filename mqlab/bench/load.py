"""Load benchmark with a fault: real clients, one broker SIGKILL + restart in the middle.

``python -m mqlab.bench.load [--seconds 60] [--producers 8] [--rate 25] [--json]`` runs,
on loopback:

* ``python -m mqlab serve`` (name server + broker-a) in its own process group, on a
  fresh store (``--flush-disk-type`` ASYNC_FLUSH, the default, or SYNC_FLUSH);
* ``--producers`` producer processes of the official C++ client (PyPI ``rocketmq``
  0.4.4), each sending ``send_sync`` in a paced loop (``--rate`` sends/s each, tags
  TagA, TagB, TagC in turn) and recording every send: key, tag, status, start and end;
* 4 push consumers in 2 groups (clustering): ``BenchLoadAll`` subscribes ``*``,
  ``BenchLoadAB`` subscribes ``TagA || TagB``; each records every delivery;
* halfway, ``SIGKILL`` to the serve process group, then ``serve`` again on the same
  ports and store (``MappedFile`` data in the OS page cache survives a process kill).

It prints: sent, acknowledged (``SEND_OK``), lost (an acknowledged message a group that
subscribes to it never received: must be 0), duplicates by cause, p50/p99 send latency
of acknowledged sends before the kill and after the restart, and the broker's RSS.

Duplicates (a group receiving a key more than once) are attributed, in this order:

* ``offset_not_persisted``: first delivered before the kill, again after the restart, at
  a queue offset at or after the group's offset in ``consumerOffset.json`` as the kill
  left it (the broker commits consumer offsets in memory and persists them every
  ``flushConsumerOffsetInterval``, 5 s; a consumer that takes the queue after the
  restart starts from the persisted one);
* ``rebalance``: delivered again to another consumer of the group (the queue moved and
  the new owner started from the last committed offset), or to the same consumer after
  it took the queue again in a rebalance (its client log shows ``add mq`` for that queue
  between the two deliveries: it dropped the queue and re-read the committed offset);
* ``unexplained``: anything else. RocketMQ allows none; the test fails on any.

A producer's own retry that stores one message twice (a send that timed out, retried
by the client) would show as two stored copies; it is counted as ``send_retry`` and
reported, since it is a duplicate RocketMQ documents for producers.

Client processes run this module with ``--client producer|consumer '<json>'``; their
``HOME`` points into the run directory (the C++ client writes its logs there).
Figures are printed, never asserted here (``tests/net/test_load_fault.py`` asserts
lost == 0 and that every duplicate has an allowed cause).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LoadConfig", "run_load", "analyse", "serve_rss_kib", "main"]

TOPIC = "BenchLoad"
TAGS = ("TagA", "TagB", "TagC")
#: (group, subscription expression, the tags it receives)
GROUPS = (("BenchLoadAll", "*", TAGS), ("BenchLoadAB", "TagA || TagB", ("TagA", "TagB")))
CONSUMERS_PER_GROUP = 2
ALLOWED_CAUSES = ("offset_not_persisted", "rebalance", "send_retry")


@dataclass(slots=True)
class LoadConfig:
    """One run's knobs (``python -m mqlab.bench.load --help`` names them)."""

    seconds: float = 60.0
    producers: int = 8
    #: sends per second per producer (each producer's sync loop is paced to this)
    rate: float = 25.0
    body: int = 100
    flush_disk_type: str = "ASYNC_FLUSH"
    #: after the producers stop, wait at most this long for the consumers to catch up
    drain_seconds: float = 60.0
    #: push consumer listener threads (``PushConsumer.set_thread_count``)
    consumer_threads: int = 2
    workdir: str | None = None
    keep: bool = False


# -- client processes ---------------------------------------------------------------------
def _producer(p: dict[str, Any]) -> dict[str, Any]:
    """Sync sends in a paced loop until ``stop`` exists; one JSON line per send in ``out``.

    A line is ``{"k": key, "tag": tag, "s": status (-1: raised), "t0": ns, "t1": ns}``,
    written and flushed once ``send_sync`` returned (so an acknowledged key is on disk
    before the next send starts).
    """
    from rocketmq.client import Message, Producer

    producer = Producer(p["group"], timeout=p.get("timeout_ms", 3000))
    producer.set_namesrv_addr(p["ns"])
    producer.start()
    tags = p.get("tags") or list(TAGS)
    interval = 1.0 / p["rate"] if p.get("rate") else 0.0
    body_pad = "x" * int(p.get("body", 0))
    n = sent = acked = 0
    deadline = time.monotonic() + p.get("max_seconds", 600)
    next_at = time.monotonic()
    with open(p["out"], "a", encoding="utf-8") as out:
        while not os.path.exists(p["stop"]) and time.monotonic() < deadline:
            if p.get("count") is not None and n >= p["count"]:
                break
            key = f"{p['prefix']}-{n}"
            tag = tags[n % len(tags)]
            msg = Message(p["topic"])
            msg.set_tags(tag)
            msg.set_keys(key)
            msg.set_body(f"{key}|{body_pad}")
            t0 = time.time_ns()
            try:
                status = int(producer.send_sync(msg).status)
            except Exception:  # the broker is down: record and go on
                status = -1
            t1 = time.time_ns()
            out.write(json.dumps({"k": key, "tag": tag, "s": status, "t0": t0, "t1": t1}) + "\n")
            out.flush()
            n += 1
            sent += 1
            acked += status == 0
            if interval:
                next_at += interval
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                else:
                    next_at = time.monotonic()
    _shutdown_begins()
    producer.shutdown()
    return {"sent": sent, "acked": acked}


def _consumer(p: dict[str, Any]) -> dict[str, Any]:
    """A push consumer recording ``{"k", "tag", "q", "o", "t"}`` per delivery in ``out``."""
    from rocketmq.client import PushConsumer

    consumer = PushConsumer(p["group"])
    consumer.set_namesrv_addr(p["ns"])
    consumer.set_thread_count(p.get("threads", 2))
    lock = threading.Lock()
    out = open(p["out"], "a", encoding="utf-8")  # noqa: SIM115

    def on_message(msg) -> None:
        rec = {
            "k": (msg.keys or b"").decode(),
            "tag": (msg.tags or b"").decode(),
            "q": msg.queue_id,
            "o": msg.queue_offset,
            "t": time.time_ns(),
        }
        with lock:
            out.write(json.dumps(rec) + "\n")
            out.flush()

    consumer.subscribe(p["topic"], on_message, p.get("expression", "*"))
    consumer.start()
    print(json.dumps({"started": True}), flush=True)
    deadline = time.monotonic() + p.get("max_seconds", 600)
    while time.monotonic() < deadline and not os.path.exists(p["stop"]):
        time.sleep(0.05)
    _shutdown_begins()
    consumer.shutdown()
    with lock:
        out.close()
    return {"stopped": True}


#: the line a client prints just before it calls the C++ library's ``shutdown()``
SHUTDOWN_BEGINS = '{"shutdown": "called"}'


def _shutdown_begins() -> None:
    """Say that whatever follows happens inside the C++ library's ``shutdown()``: its known
    teardown crashes (apache/rocketmq-client-cpp#335, #286) are told apart from a client
    that never got there."""
    print(SHUTDOWN_BEGINS, flush=True)


def _client_main(role: str, params: str) -> int:
    fn = {"producer": _producer, "consumer": _consumer}[role]
    print(json.dumps(fn(json.loads(params))), flush=True)
    # The client library's threads sometimes outlive shutdown(); do not wait for them.
    os._exit(0)


# -- processes of the run -----------------------------------------------------------------
def free_ports(n: int) -> list[int]:
    """``n`` loopback ports that were free a moment ago, each with its next port free too (a
    broker listening on p serves HA on p + 1, mechanisms.md "HA replication"), and no
    port the next of another."""
    socks: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < n:
            if len(socks) > 100 * n:
                raise OSError(f"no {n} loopback ports with their next ports free")
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            port = s.getsockname()[1]
            if port + 1 > 65535 or port in ports or any(port == p + 1 for p in ports):
                continue
            nxt = socket.socket()
            try:
                nxt.bind(("127.0.0.1", port + 1))
            except OSError:
                nxt.close()
                continue
            socks.append(nxt)
            ports.append(port)
        return ports
    finally:
        for s in socks:
            s.close()


def serve_rss_kib(pid: int) -> int | None:
    """``VmRSS`` of a process in KiB (Linux ``/proc``), None when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class _Serve:
    """``python -m mqlab serve`` in its own process group (session)."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, timeout: float = 30):
        self.log = open(log, "a", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mqlab", "serve", *args],
            env=env, stdout=subprocess.PIPE, stderr=self.log, text=True,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "ready" in line:
                return
        self.kill()
        raise RuntimeError(f"mqlab serve did not start: {lines}; see {log}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL to the whole process group (a crash: nothing runs on the way out)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(10)
        self.proc.stdout.close()
        self.log.close()

    def terminate(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        rc = self.proc.returncode
        self.kill()
        return -9 if rc is None else rc


class _Client:
    def __init__(self, role: str, name: str, params: dict[str, Any], env: dict, run: Path):
        self.name = name
        self.out = run / f"{name}.jsonl"
        self.stop_file = run / f"{name}.stop"
        self.err = open(run / f"{name}.err", "w", encoding="utf-8")  # noqa: SIM115
        params = dict(params, out=str(self.out), stop=str(self.stop_file))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mqlab.bench.load", "--client", role, json.dumps(params)],
            env=env, stdout=subprocess.PIPE, stderr=self.err, text=True,
            start_new_session=True,
        )  # fmt: skip

    def wait_started(self, timeout: float = 30) -> None:
        line = _readline(self.proc, timeout)
        if '"started"' not in line:
            raise RuntimeError(f"{self.name} did not start: {line!r}")

    def records(self) -> list[dict]:
        if not self.out.exists():
            return []
        text = self.out.read_text(encoding="utf-8")
        return [json.loads(ln) for ln in text.splitlines() if ln.endswith("}")]

    def stop(self, data: RunData, timeout: float = 40) -> None:
        """Ask it to stop; how long it took goes to ``data.stop_seconds``, and why it did not
        exit 0 in time (with its stderr's end) to ``data.library_shutdown_failures`` when its
        last line said the C++ library's ``shutdown()`` had been called, else to
        ``data.unclean_stops``."""
        self.stop_file.touch()
        t0 = time.monotonic()
        try:
            self.proc.wait(timeout)
            rc = self.proc.returncode
            why = None if rc == 0 else f"exit {rc}"
        except subprocess.TimeoutExpired:
            why = f"still running {timeout:g} s after the stop file; killed"
        self.kill(keep_stdout=True)
        said = self.proc.stdout.read().splitlines()
        self.proc.stdout.close()
        data.stop_seconds[self.name] = round(time.monotonic() - t0, 2)
        if why is not None:
            tail = Path(self.err.name).read_text(encoding="utf-8", errors="replace")[-400:]
            line = f"{self.name}: {why}; its stderr ends {tail!r}"
            # its last word was that shutdown() had been called: it ended inside the library
            inside = said[-1:] == [SHUTDOWN_BEGINS]
            (data.library_shutdown_failures if inside else data.unclean_stops).append(line)

    def kill(self, keep_stdout: bool = False) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        if not keep_stdout:
            self.proc.stdout.close()
        self.err.close()


def _readline(proc: subprocess.Popen, timeout: float) -> str:
    result: list[str] = []
    t = threading.Thread(target=lambda: result.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    return result[0] if result else ""


def _client_env(run: Path) -> dict[str, str]:
    home = run / "home"
    home.mkdir(exist_ok=True)
    root = str(Path(__file__).absolute().parents[1])
    env = dict(os.environ, HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _read_offsets(path: Path) -> dict[str, dict[int, int]]:
    from mqlab.remoting import fastjson

    if not path.exists():
        return {}
    raw = fastjson.loads(path.read_text(encoding="utf-8")).get("offsetTable") or {}
    return {k: {int(q): int(o) for q, o in v.items()} for k, v in raw.items()}


@dataclass(slots=True)
class RunData:
    """Everything ``analyse`` needs, as the run left it."""

    sends: list[dict] = field(default_factory=list)
    #: group -> consumer name -> deliveries
    deliveries: dict[str, dict[str, list[dict]]] = field(default_factory=dict)
    #: ``topic@group`` -> queue id -> offset, from consumerOffset.json right after the kill
    persisted_at_kill: dict[str, dict[int, int]] = field(default_factory=dict)
    #: group -> consumer name -> [(time ns, queue id)] of the client's "add mq" log lines
    queue_adds: dict[str, dict[str, list[tuple[int, int]]]] = field(default_factory=dict)
    t_kill_ns: int = 0
    t_ready_ns: int = 0
    rss_kib: dict[str, int | None] = field(default_factory=dict)
    #: connections serve closed for a write buffer over the high-water mark (its log)
    overflow_closes: int = 0
    #: one line per client process that did not exit 0 within its stop timeout
    unclean_stops: list[str] = field(default_factory=list)
    #: the same for a client that ended inside the C++ library's ``shutdown()`` (a crash or a
    #: hang there: upstream's, see ``_shutdown_begins``)
    library_shutdown_failures: list[str] = field(default_factory=list)
    #: client name -> seconds from its stop file to its exit
    stop_seconds: dict[str, float] = field(default_factory=dict)


def run_load(cfg: LoadConfig) -> RunData:
    """Run the whole scenario; every process it starts is stopped before it returns."""
    run = Path(cfg.workdir or tempfile.mkdtemp(prefix="mqlab-bench-load-"))
    run.mkdir(parents=True, exist_ok=True)
    env = _client_env(run)
    ns_port, broker_port = free_ports(2)
    ns = f"127.0.0.1:{ns_port}"
    conf = run / "broker.properties"
    conf.write_text(f"flushDiskType={cfg.flush_disk_type}\n", encoding="utf-8")
    args = ["--namesrv-port", str(ns_port), "--broker-port", str(broker_port),
            "--store", str(run / "store"), "--config", str(conf), "--trace-level", "off"]  # fmt: skip
    data = RunData()
    clients: list[_Client] = []
    serve = _Serve(args, env, run / "serve.log")
    try:
        # The topic exists (auto-created, 4 queues) before the consumers subscribe.
        warm = _Client("producer", "warmup", {
            "ns": ns, "group": "PID-bench-warmup", "topic": TOPIC, "prefix": "warmup",
            "count": 1, "tags": ["TagA"], "body": cfg.body}, env, run)  # fmt: skip
        clients.append(warm)
        warm.proc.wait(60)
        warm.kill()
        if [r["s"] for r in warm.records()] != [0]:
            raise RuntimeError(f"warm-up send failed: {warm.records()}")
        consumers: dict[str, list[_Client]] = {}
        for group, expression, _ in GROUPS:
            for i in range(CONSUMERS_PER_GROUP):
                c = _Client("consumer", f"{group}-{i}", {
                    "ns": ns, "group": group, "topic": TOPIC, "expression": expression,
                    "threads": cfg.consumer_threads}, env, run)  # fmt: skip
                clients.append(c)
                consumers.setdefault(group, []).append(c)
        for cs in consumers.values():
            for c in cs:
                c.wait_started()
        # Each group has taken the warm-up message: subscriptions and routes are in place.
        _wait(lambda: all(any(c.records() for c in cs) for cs in consumers.values()), 60,
              "the consumers to receive the warm-up message")  # fmt: skip
        data.rss_kib["start"] = serve_rss_kib(serve.pid)
        producers = [
            _Client("producer", f"producer-{i}", {
                "ns": ns, "group": f"PID-bench-load-{i}", "topic": TOPIC, "prefix": f"p{i}",
                "rate": cfg.rate, "body": cfg.body, "max_seconds": cfg.seconds + 120}, env, run)
            for i in range(cfg.producers)
        ]  # fmt: skip
        clients += producers
        time.sleep(cfg.seconds / 2)
        data.rss_kib["before_kill"] = serve_rss_kib(serve.pid)
        data.t_kill_ns = time.time_ns()
        serve.kill()
        data.persisted_at_kill = _read_offsets(
            run / "store" / "broker-a" / "config" / "consumerOffset.json"
        )
        serve = _Serve(args, env, run / "serve.log")
        data.t_ready_ns = time.time_ns()
        data.rss_kib["after_restart"] = serve_rss_kib(serve.pid)
        time.sleep(cfg.seconds / 2)
        for p in producers:
            p.stop_file.touch()
        for p in producers:
            p.stop(data, 60)
        data.sends = [r for p in [warm, *producers] for r in p.records()]
        acked = {r["k"]: r["tag"] for r in data.sends if r["s"] == 0}

        def caught_up() -> bool:
            for group, _, tags in GROUPS:
                got = {r["k"] for c in consumers[group] for r in c.records()}
                if any(k not in got for k, tag in acked.items() if tag in tags):
                    return False
            return True

        deadline = time.monotonic() + cfg.drain_seconds
        while time.monotonic() < deadline and not caught_up():
            time.sleep(0.5)
        time.sleep(1.0)  # a late duplicate has a moment to show
        data.rss_kib["end"] = serve_rss_kib(serve.pid)
        for cs in consumers.values():
            for c in cs:
                c.stop(data, 60)
        data.deliveries = {g: {c.name: c.records() for c in cs} for g, cs in consumers.items()}
        serve_log = (run / "serve.log").read_text(encoding="utf-8", errors="replace")
        data.overflow_closes = serve_log.count("over the high-water mark")
        logs = run / "home" / "logs" / "rocketmq-cpp"
        data.queue_adds = {
            g: {c.name: _queue_adds(logs, c.proc.pid) for c in cs} for g, cs in consumers.items()
        }
    finally:
        for c in clients:
            c.kill()
        serve.terminate()
        if not cfg.keep and cfg.workdir is None:
            shutil.rmtree(run, ignore_errors=True)
    return data


_ADD_MQ = re.compile(
    r"^\[(\d{4}-\w{3}-\d{2} \d{2}:\d{2}:\d{2}\.\d+)\]\(info\):add mq:MessageQueue "
    rf"\[topic={TOPIC}, brokerName=[^,]+, queueId=(\d+)\]"
)


def _queue_adds(logs: Path, pid: int) -> list[tuple[int, int]]:
    """When the C++ client of process ``pid`` took a queue of the topic in a rebalance.

    Its log (``$HOME/logs/rocketmq-cpp/<pid>_rocketmq-cpp.log.N``) has one ``add mq``
    line per queue taken (``RebalanceImpl#updateRequestTableInRebalance``), stamped in
    local time.
    """
    out = []
    for f in sorted(logs.glob(f"{pid}_rocketmq-cpp.log*")):
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _ADD_MQ.match(line)
            if m:
                when = datetime.datetime.strptime(m.group(1), "%Y-%b-%d %H:%M:%S.%f")
                out.append((int(when.timestamp() * 1e9), int(m.group(2))))
    return sorted(out)


def _wait(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


# -- analysis -----------------------------------------------------------------------------
def _percentile(values: list[float], pct: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(pct / 100 * len(s) + 0.5) - 1))]


def analyse(data: RunData) -> dict[str, Any]:
    """The report: counts, losses, duplicates by cause, latencies, RSS."""
    acked = {r["k"]: r["tag"] for r in data.sends if r["s"] == 0}
    lost: dict[str, list[str]] = {}
    filter_violations: dict[str, int] = {}
    dup_causes: dict[str, dict[str, int]] = {}
    unexplained: list[dict] = []
    delivered: dict[str, int] = {}
    for group, _, tags in GROUPS:
        by_key: dict[str, list[dict]] = {}
        for name, recs in data.deliveries.get(group, {}).items():
            for r in recs:
                by_key.setdefault(r["k"], []).append(dict(r, c=name))
        delivered[group] = sum(len(v) for v in by_key.values())
        lost[group] = sorted(k for k, tag in acked.items() if tag in tags and k not in by_key)
        filter_violations[group] = sum(
            1 for v in by_key.values() for r in v if r["tag"] not in tags
        )
        persisted = data.persisted_at_kill.get(f"{TOPIC}@{group}", {})
        causes = dup_causes[group] = dict.fromkeys((*ALLOWED_CAUSES, "unexplained"), 0)
        for recs in by_key.values():
            recs.sort(key=lambda r: r["t"])
            first = recs[0]
            for again in recs[1:]:
                adds = data.queue_adds.get(group, {}).get(first["c"], [])
                cause = _dup_cause(first, again, data, persisted, adds)
                causes[cause] += 1
                if cause == "unexplained":
                    unexplained.append({"group": group, "first": first, "again": again})
    all_lost = sorted({k for v in lost.values() for k in v})
    before = [
        (r["t1"] - r["t0"]) / 1e6 for r in data.sends if r["s"] == 0 and r["t1"] < data.t_kill_ns
    ]
    after = [
        (r["t1"] - r["t0"]) / 1e6 for r in data.sends if r["s"] == 0 and r["t0"] >= data.t_ready_ns
    ]
    return {
        "sent": len(data.sends),
        "acknowledged": len(acked),
        "failed_sends": len(data.sends) - len(acked),
        "lost": len(all_lost),
        "lost_by_group": {g: len(v) for g, v in lost.items()},
        "lost_keys": all_lost[:20],
        "delivered_by_group": delivered,
        "filter_violations": filter_violations,
        "duplicates_by_group": dup_causes,
        "duplicates": {
            c: sum(d[c] for d in dup_causes.values()) for c in (*ALLOWED_CAUSES, "unexplained")
        },
        "unexplained_examples": unexplained[:5],
        "queues_taken_by_group": {
            g: sum(len(v) for v in by_c.values()) for g, by_c in data.queue_adds.items()
        },
        "send_latency_ms": {
            "before_kill": {
                "n": len(before),
                "p50": _percentile(before, 50),
                "p99": _percentile(before, 99),
            },
            "after_restart": {
                "n": len(after),
                "p50": _percentile(after, 50),
                "p99": _percentile(after, 99),
            },
        },
        "broker_rss_kib": data.rss_kib,
        "persisted_offsets_at_kill": {k: v for k, v in data.persisted_at_kill.items()},
        "unclean_stops": data.unclean_stops,
        "library_shutdown_failures": data.library_shutdown_failures,
        "stop_seconds": data.stop_seconds,
        "overflow_closes": data.overflow_closes,
    }


def _dup_cause(
    first: dict, again: dict, data: RunData, persisted: dict, adds: list[tuple[int, int]]
) -> str:
    """Why ``again`` re-delivered ``first``'s message (see the module docstring)."""
    if (first["q"], first["o"]) != (again["q"], again["o"]):
        return "send_retry"  # the same key stored twice: the producer sent it again
    straddles = first["t"] < data.t_kill_ns <= again["t"]
    if straddles and again["o"] >= persisted.get(again["q"], 0):
        return "offset_not_persisted"
    if again["c"] != first["c"]:
        return "rebalance"
    retaken = any(q == first["q"] and first["t"] < t < again["t"] for t, q in adds)
    return "rebalance" if retaken else "unexplained"


def format_report(cfg: LoadConfig, rep: dict[str, Any]) -> str:
    lat = rep["send_latency_ms"]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

    lines = [
        f"mqlab bench load: {cfg.seconds:g} s, {cfg.producers} producers x {cfg.rate:g}/s "
        f"(send_sync), 4 push consumers in 2 groups, {cfg.flush_disk_type}, "
        "SIGKILL + restart at half time",
        f"  sent {rep['sent']}  acknowledged {rep['acknowledged']}  "
        f"failed {rep['failed_sends']}  lost {rep['lost']}",
        f"  delivered {rep['delivered_by_group']}  filter violations {rep['filter_violations']}",
        "  duplicates: "
        + ", ".join(f"{k} {v}" for k, v in rep["duplicates"].items())
        + f"  (queues taken in rebalances: {rep['queues_taken_by_group']})",
        f"  send latency ms p50/p99: before kill {ms(lat['before_kill']['p50'])}/"
        f"{ms(lat['before_kill']['p99'])} (n={lat['before_kill']['n']}), after restart "
        f"{ms(lat['after_restart']['p50'])}/{ms(lat['after_restart']['p99'])} "
        f"(n={lat['after_restart']['n']})",
        "  broker RSS KiB: " + ", ".join(f"{k} {v}" for k, v in rep["broker_rss_kib"].items()),
    ]
    if rep["stop_seconds"]:
        slowest = max(rep["stop_seconds"], key=rep["stop_seconds"].get)
        lines.append(f"  client stops: slowest {slowest} {rep['stop_seconds'][slowest]:.1f} s, "
                     f"not clean {len(rep['unclean_stops'])}, inside the C++ library's "
                     f"shutdown() {len(rep['library_shutdown_failures'])}")  # fmt: skip
    lines += [f"    {why}" for why in rep["unclean_stops"] + rep["library_shutdown_failures"]]
    if rep["lost_keys"]:
        lines.append(f"  lost keys (first 20): {rep['lost_keys']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mqlab.bench.load", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--seconds", type=float, default=60.0, help="run time (60)")
    ap.add_argument("--producers", type=int, default=8, help="producer processes (8)")
    ap.add_argument("--rate", type=float, default=25.0, help="sends/s per producer (25)")
    ap.add_argument("--body", type=int, default=100, help="body padding bytes (100)")
    ap.add_argument("--flush-disk-type", default="ASYNC_FLUSH",
                    choices=["ASYNC_FLUSH", "SYNC_FLUSH"])  # fmt: skip
    ap.add_argument("--drain-seconds", type=float, default=60.0,
                    help="wait at most this long for consumers to catch up (60)")  # fmt: skip
    ap.add_argument("--workdir", default=None, help="run directory (default: temp, removed)")
    ap.add_argument("--json", action="store_true", help="print the report as one JSON line")
    ap.add_argument("--client", nargs=2, metavar=("ROLE", "JSON"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.client:
        return _client_main(*args.client)
    cfg = LoadConfig(
        seconds=args.seconds, producers=args.producers, rate=args.rate, body=args.body,
        flush_disk_type=args.flush_disk_type, drain_seconds=args.drain_seconds,
        workdir=args.workdir,
    )  # fmt: skip
    rep = analyse(run_load(cfg))
    if args.json:
        print(json.dumps({"config": asdict(cfg), **rep}))
    else:
        print(format_report(cfg, rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
