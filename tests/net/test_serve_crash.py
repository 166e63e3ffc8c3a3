"""``python -m mqlab serve`` killed with SIGKILL mid-stream, restarted on its store.

Issue 12 part 3. A killed broker process loses nothing it acknowledged, in either flush
mode: RocketMQ's commit log is a memory-mapped file, so what a send wrote sits in the OS
page cache, which outlives the process (only an OS crash or a power cut loses unflushed
pages). The official C++ client sends synchronously; a key counts as acknowledged once
its ``send_sync`` returned SEND_OK. After the restart a new group pulls the topic from the
first offset of every queue.
"""

import pytest
from cpp_harness import CPP_CLIENT, ProducerLoopProc, ServeProc, free_ports, run_client, wait_until

pytestmark = [pytest.mark.slow, CPP_CLIENT]

TOPIC = "CrashTopic"


@pytest.mark.parametrize("flush_disk_type", ["ASYNC_FLUSH", "SYNC_FLUSH"])
def test_sigkill_mid_stream_loses_no_acknowledged_message(tmp_path, flush_disk_type):
    ns_port, broker_port = free_ports(2)
    store = tmp_path / "store"
    conf = tmp_path / "broker.properties"
    conf.write_text(f"flushDiskType={flush_disk_type}\n", encoding="utf-8")
    args = ["--namesrv-port", str(ns_port), "--broker-port", str(broker_port),
            "--store", str(store), "--config", str(conf), "--trace-level", "off"]  # fmt: skip
    ns = f"127.0.0.1:{ns_port}"
    srv = ServeProc(tmp_path, *args)
    producer = None
    try:
        producer = ProducerLoopProc(
            tmp_path, "crash-producer", ns=ns, group="PID-crash", topic=TOPIC, prefix="k",
            timeout_ms=1000,
        )  # fmt: skip
        # Mid-stream: the loop is sending as fast as send_sync returns.
        wait_until(lambda: len(producer.acked()) >= 300, 60, "300 acknowledged sends")
        srv.kill_group()
        # The loop's first send after the kill fails; wait for it, or the stop file could be
        # seen between two sends and no send would have failed (dry run W, once)
        wait_until(
            lambda: any(r["s"] == -1 for r in producer.records()),
            30,
            "a send failing after the kill",
        )
        sends = producer.stop()
        acked = [r["k"] for r in sends if r["s"] == 0]
        # The kill landed while sends were going on: the ones after it failed.
        assert sends[-1]["s"] == -1, sends[-3:]
        assert len(acked) >= 300
        assert len(set(acked)) == len(acked)

        srv = ServeProc(tmp_path, *args)
        got = run_client(tmp_path, "pull", {"ns": ns, "group": "CID-crash-check", "topic": TOPIC})[
            "messages"
        ]
        consumed = {m["keys"] for m in got}
        lost = [k for k in acked if k not in consumed]
        print(f"{flush_disk_type}: acknowledged {len(acked)}, lost {len(lost)}")
        assert lost == [], f"{len(lost)} of {len(acked)} acknowledged lost: {lost[:20]}"
        # Every message the new group read from the first offset is one the loop sent.
        assert consumed <= {r["k"] for r in sends}
    finally:
        if producer is not None:
            producer.kill()
        srv.kill()
