"""``python -m mqlab serve`` (ASYNC_FLUSH) SIGKILLed mid-stream loses no acknowledged message.

RocketMQ's contract: a written message is in the OS page cache (the commit log is a mapped
file) before the send is acknowledged, so a killed process loses nothing, flushed or not.
A raw TCP client (no C++ client needed) sends SEND_MESSAGE_V2 synchronously; the server's
process group is killed with SIGKILL while it sends, then restarted on the same store, and
every acknowledged message is pulled back at its acknowledged queue offset.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from cpp_harness import ROOT, GoodClient, free_ports

from mqlab.common.message_decoder import decodes
from mqlab.remoting.codes import RequestCode

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups"),
]

TOPIC = "TopicTest"
QUEUES = 4


def _serve(tmp_path, ns_port: int, broker_port: int) -> subprocess.Popen:
    """Start serve in its own process group; return once it prints "ready"."""
    props = tmp_path / "broker.properties"
    props.write_text("flushDiskType=ASYNC_FLUSH\n", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mqlab", "serve", "--namesrv-port", str(ns_port),
         "--broker-port", str(broker_port), "--store", str(tmp_path / "store"),
         "--config", str(props), "--trace-level", "off"],
        cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "ready" in line:
            return proc
    _killpg(proc)
    pytest.fail(f"mqlab serve did not start: {lines} {proc.stderr.read()[-2000:]}")


def _killpg(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=20)


def _send_until_stopped(port: int, acked: list[tuple[int, int, str]], stop: threading.Event):
    """Sync sends of "m<i>" to queue i % 4 until the connection dies or ``stop``; keeps
    (queue, queue offset, body) of every SEND_OK."""
    client = GoodClient(f"127.0.0.1:{port}")
    i = 0
    try:
        while not stop.is_set():
            body = f"m{i}"
            resp = client.call(
                RequestCode.SEND_MESSAGE_V2,
                {"a": "PG-kill", "b": TOPIC, "c": "TBW102", "d": str(QUEUES), "e": str(i % QUEUES),
                 "f": "0", "g": str(int(time.time() * 1000)), "h": "0",
                 "i": "WAIT\x01true\x02TAGS\x01TagA"},
                body.encode(),
            )  # fmt: skip
            if resp.code == 0:
                acked.append((int(resp.ext("queueId")), int(resp.ext("queueOffset")), body))
            i += 1
    except OSError:
        pass  # the server was killed mid-request: that send is not acknowledged
    finally:
        client.close()


def _pull_all(port: int) -> dict[tuple[int, int], str]:
    """(queue, queue offset) → body of every message in the topic, from offset 0."""
    client = GoodClient(f"127.0.0.1:{port}")
    got = {}
    try:
        for q in range(QUEUES):
            offset = 0
            while True:
                resp = client.call(
                    RequestCode.PULL_MESSAGE,
                    {"consumerGroup": "CG-kill", "topic": TOPIC, "queueId": str(q),
                     "queueOffset": str(offset), "maxMsgNums": "32", "sysFlag": "4",
                     "commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*",
                     "subVersion": "0", "expressionType": "TAG"},
                )  # fmt: skip
                if resp.code != 0:
                    break
                for m in decodes(resp.body):
                    got[(q, m.queue_offset)] = m.body.decode()
                offset = int(resp.ext("nextBeginOffset"))
    finally:
        client.close()
    return got


def test_sigkill_mid_stream_with_async_flush_loses_no_acknowledged_message(tmp_path):
    """ASYNC_FLUSH, sync sends, SIGKILL of the process group after 300 acknowledgements (the
    flush timer runs every 500 ms, so the last ones are not forced), restart on the same
    store: every acknowledged message is there, at its acknowledged queue offset."""
    ns_port, broker_port = free_ports(2)
    srv = _serve(tmp_path, ns_port, broker_port)
    acked: list[tuple[int, int, str]] = []
    stop = threading.Event()
    sender = threading.Thread(target=_send_until_stopped, args=(broker_port, acked, stop))
    try:
        sender.start()
        deadline = time.monotonic() + 60
        while len(acked) < 300 and time.monotonic() < deadline and sender.is_alive():
            time.sleep(0.001)
        assert len(acked) >= 300, f"only {len(acked)} sends acknowledged"
        os.killpg(srv.pid, signal.SIGKILL)  # mid-stream: the sender is still sending
        sender.join(timeout=20)
        assert not sender.is_alive()
        srv.communicate(timeout=20)
        assert srv.returncode == -signal.SIGKILL
        assert os.path.exists(tmp_path / "store" / "broker-a" / "abort")
        srv = _serve(tmp_path, ns_port, broker_port)
        stored = _pull_all(broker_port)
        lost = [a for a in acked if stored.get((a[0], a[1])) != a[2]]
        assert (len(acked), lost) == (len(acked), [])
        srv.send_signal(signal.SIGTERM)
        srv.communicate(timeout=20)
        assert srv.returncode == 0
    finally:
        stop.set()
        sender.join(timeout=20)
        _killpg(srv)
