"""Drive the official C++ client (PyPI ``rocketmq`` 0.4.4) in its own process.

Run by the tests as ``python cpp_client_script.py <scenario> '<json params>'`` with a
timeout, so a hang or a crash of the client fails a test instead of hanging CI. Prints
one JSON line: the scenario's result. Consumers also append one JSON line per received
message to ``params["out"]`` (flushed at once, so the test can watch progress) and stop
when the file ``params["stop"]`` appears or after ``params["max_seconds"]``.

Scenarios: ``produce`` (send_sync / send_oneway / send_orderly / send_batch),
``push`` (push consumer, clustering or broadcasting, concurrent or orderly, optionally
raising on chosen bodies), ``pull`` (the stock ``PullConsumer.pull`` loop).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time


def _message(spec):
    from rocketmq.client import Message

    m = Message(spec["topic"])
    if spec.get("tags"):
        m.set_tags(spec["tags"])
    if spec.get("keys"):
        m.set_keys(spec["keys"])
    for k, v in sorted((spec.get("props") or {}).items()):
        m.set_property(k, v)
    if spec.get("delay_level"):
        m.set_delay_time_level(spec["delay_level"])
    body = spec.get("body")
    if body is None:
        body = "x" * int(spec.get("body_size", 0))
    if spec.get("stamp"):
        body = f"{time.time_ns()}|{body}"
    m.set_body(body)
    return m


def produce(p):
    from rocketmq.client import Producer

    producer = Producer(p.get("group", "PID-test"))
    producer.set_namesrv_addr(p["ns"])
    producer.start()
    results = []
    try:
        for op in p["ops"]:
            if p.get("tolerate"):
                try:
                    results.append(_send(producer, op))
                except Exception as e:  # the server is down: record and go on
                    results.append({"error": str(e)[:200]})
            else:
                results.append(_send_once_more_on_the_clients_own_route_failure(producer, op))
            if op.get("sleep"):
                time.sleep(op["sleep"])
    finally:
        producer.shutdown()
    return {"results": results}


def _send_once_more_on_the_clients_own_route_failure(producer, op):
    """A send, tried once more after 0.5 s if the C++ client failed it on its own, before any
    request: under load its heartbeat thread holds the transport table's lock while it
    connects to a broker the route names, and the sending thread gives up on that lock after
    3 ms, three times in a row ("send failed of times:1, 3, 5" and "could not find property
    mq" in its log, the connect completing 11 ms later), which it reports as "No route info of
    this topic". Seen on both dry runs' mqlab side on a first send (cpp/orderly, cpp/batch).
    The same message came on a later send with two brokers (tests/net/test_serve.py, dry run
    BI and a loaded run of session 31), when the client would connect to the second broker;
    read as the same lock, not confirmed (the client's log was not kept). A second failure is
    real and raised."""
    try:
        return _send(producer, op)
    except Exception as e:  # noqa: BLE001 — only the client's own route failure is retried
        if "No route info of this topic" not in str(e):
            raise
        time.sleep(0.5)
        return _send(producer, op)


def _send(producer, op):
    kind = op["op"]
    if kind == "sync":
        r = producer.send_sync(_message(op))
    elif kind == "oneway":
        producer.send_oneway(_message(op))
        return None
    elif kind == "orderly":
        r = producer.send_orderly(_message(op), op["arg"])
    elif kind == "batch":
        r = producer.send_batch([_message(m) for m in op["messages"]])
    else:
        raise ValueError(f"unknown op {kind!r}")
    return {"status": int(r.status), "msg_id": r.msg_id, "offset": r.offset, "body": op.get("body")}


def _record(msg):
    return {
        "topic": msg.topic,
        "tags": (msg.tags or b"").decode(),
        "keys": (msg.keys or b"").decode(),
        "body": msg.body.decode("utf-8", "replace"),
        "body_len": len(msg.body),
        "id": msg.id,
        "queue_id": msg.queue_id,
        "queue_offset": msg.queue_offset,
        "commit_log_offset": msg.commit_log_offset,
        "reconsume_times": msg.reconsume_times,
        "retry_topic": (msg.get_property("RETRY_TOPIC") or b"").decode(),
        "myprop": (msg.get_property("myprop") or b"").decode(),
        "store_timestamp": msg.store_timestamp,
        "t_ns": time.time_ns(),
        "thread": threading.get_ident(),
    }


def push(p):
    from rocketmq.client import MessageModel, PushConsumer

    model = MessageModel.BROADCASTING if p.get("model") == "broadcasting" else None
    if model is None:
        consumer = PushConsumer(p["group"], orderly=bool(p.get("orderly")))
    else:
        consumer = PushConsumer(p["group"], orderly=bool(p.get("orderly")), message_model=model)
    consumer.set_namesrv_addr(p["ns"])
    if p.get("threads"):
        consumer.set_thread_count(p["threads"])
    fail = set(p.get("fail_bodies") or [])
    failed_once = set()
    lock = threading.Lock()
    out = open(p["out"], "a", encoding="utf-8")  # noqa: SIM115

    def on_message(msg):
        rec = _record(msg)
        with lock:
            rec["raised"] = rec["body"] in fail and rec["body"] not in failed_once
            out.write(json.dumps(rec) + "\n")
            out.flush()
            if rec["raised"]:
                failed_once.add(rec["body"])
        if rec["raised"]:
            raise RuntimeError(f"listener fails once on {rec['body']!r}")

    consumer.subscribe(p["topic"], on_message, p.get("expression", "*"))
    consumer.start()
    print(json.dumps({"started": True}), flush=True)
    deadline = time.time() + p.get("max_seconds", 60)
    while time.time() < deadline and not os.path.exists(p["stop"]):
        time.sleep(0.02)
    # Said before shutdown(), which the 1.2.x client sometimes aborts (cpp_harness.stop).
    print(json.dumps({"shutting_down": True}), flush=True)
    consumer.shutdown()
    out.close()
    return {"stopped": True}


def pull(p):
    from rocketmq.client import PullConsumer

    consumer = PullConsumer(p.get("group", "CID-pull"))
    consumer.set_namesrv_addr(p["ns"])
    consumer.start()
    got = []
    try:
        for msg in consumer.pull(p["topic"], p.get("expression", "*")):
            got.append(_record(msg))
    finally:
        consumer.shutdown()
    return {"messages": got}


def main() -> None:
    scenario, params = sys.argv[1], json.loads(sys.argv[2])
    fn = {"produce": produce, "push": push, "pull": pull}[scenario]
    result = fn(params)
    print(json.dumps(result), flush=True)
    sys.stdout.flush()
    # The client library's threads sometimes outlive shutdown(); do not wait for them.
    os._exit(0)


if __name__ == "__main__":
    main()
