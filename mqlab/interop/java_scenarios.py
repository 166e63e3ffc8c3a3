"""Interop scenarios for the RocketMQ 4.9.3 Java client (``org.mqlab.interop.JavaScenarios``).

Each function runs the Java scenario of the same name, checks what RocketMQ promises, and
returns the observation. The default producer picks its first queue at random
(``ThreadLocalIndex`` starts at a random value) and then goes round-robin: observations
are therefore given *relative to the first queue used* (``_rotate``), so that two runs,
on the same broker or on two, compare equal.
"""

from __future__ import annotations

import re
from pathlib import Path

from mqlab.interop.java_client import java_missing, run_java_scenario
from mqlab.interop.scenarios import CLIENT_MISSING, expect, scenario
from mqlab.interop.targets import Target

CLIENT_MISSING["java"] = java_missing

PREFIX = "IJ_"


def _run(name: str, t: Target, work: Path) -> dict:
    return run_java_scenario(name, t.namesrv_addr, PREFIX, work)


def _rotate(records: list[dict], first_queue: int, queues: int = 4) -> list[dict]:
    """Queue ids relative to ``first_queue``: also REAL_QID, where a delayed or retried
    message keeps the queue it was first sent to."""
    out = []
    for r in records:
        r = dict(r)
        if "queueId" in r:
            r["queueId"] = (r["queueId"] - first_queue) % queues
        props = r.get("properties")
        if props and "REAL_QID" in props and props.get("REAL_TOPIC", "").startswith(PREFIX):
            r["properties"] = props | {
                "REAL_QID": str((int(props["REAL_QID"]) - first_queue) % queues)
            }
        out.append(r)
    return out


def _all_ok(sends: list[dict]) -> None:
    expect(all(s["status"] == "SEND_OK" for s in sends), f"every send SEND_OK: {sends}")


@scenario("java", "DefaultMQProducer sync sends round-robin over 4 auto-created queues")
def java_producer_sync(t: Target, work: Path) -> dict:
    r = _run("producer-sync", t, work)
    _all_ok(r["sends"])
    q0 = r["sends"][0]["queueId"]
    sends = _rotate(r["sends"], q0)
    expect([s["queueId"] for s in sends] == [0, 1, 2, 3, 0, 1], f"round-robin: {sends}")
    expect([s["queueOffset"] for s in sends] == [0, 0, 0, 0, 1, 1], f"offsets: {sends}")
    stored = sorted(_rotate(r["stored"], q0), key=lambda m: m["body"])
    expect([m["body"] for m in stored] == [f"sync-{i}" for i in range(6)], f"stored: {stored}")
    return {"sends": sends, "stored": stored}


@scenario("java", "DefaultMQProducer async sends: every callback SEND_OK, every message stored")
def java_producer_async(t: Target, work: Path) -> dict:
    r = _run("producer-async", t, work)
    expect(r["callbacks"] == [f"SEND_OK {i}" for i in range(6)], f"callbacks: {r['callbacks']}")
    want = sorted([f"async-{i}" for i in range(6)] + ["async-first"])
    expect(r["storedBodies"] == want, f"stored: {r['storedBodies']}")
    return r


@scenario("java", "DefaultMQProducer oneway sends reach the store")
def java_producer_oneway(t: Target, work: Path) -> dict:
    r = _run("producer-oneway", t, work)
    bodies = sorted(m["body"] for m in r["stored"])
    expect(bodies == sorted([f"oneway-{i}" for i in range(4)] + ["oneway-first"]), f"{bodies}")
    first = next(m["queueId"] for m in r["stored"] if m["body"] == "oneway-first")
    return {"stored": sorted(_rotate(r["stored"], first), key=lambda m: m["body"])}


@scenario("java", "DefaultMQProducer batch of 5: one SendResult, 5 consecutive offsets")
def java_producer_batch(t: Target, work: Path) -> dict:
    r = _run("producer-batch", t, work)
    b = r["batch"]
    expect(b["status"] == "SEND_OK" and b["msgIds"] == 5, f"batch result: {b}")
    batch = [
        m for m in r["stored"] if m["body"].startswith("batch-") and m["body"] != "batch-first"
    ]
    expect(len(batch) == 5 and len({m["queueId"] for m in batch}) == 1, f"one queue: {batch}")
    offs = [m["queueOffset"] for m in sorted(batch, key=lambda m: m["body"])]
    expect(offs == list(range(offs[0], offs[0] + 5)), f"consecutive offsets: {offs}")
    return {
        "batch": _rotate([b], b["queueId"])[0],
        "stored": sorted(_rotate(batch, b["queueId"]), key=lambda m: m["body"]),
    }


@scenario("java", "orderly sends with a MessageQueueSelector (orderId % queues)")
def java_producer_orderly(t: Target, work: Path) -> dict:
    r = _run("producer-orderly", t, work)
    _all_ok(r["sends"])
    expect([s["queueId"] for s in r["sends"]] == [i % 3 for i in range(12)], f"{r['sends']}")
    expect([s["queueOffset"] for s in r["sends"]] == [i // 3 for i in range(12)], f"{r['sends']}")
    return r


@scenario("java", "keys, tags, flag and user properties as stored and pulled back")
def java_producer_properties(t: Target, work: Path) -> dict:
    r = _run("producer-properties", t, work)
    (m,) = r["stored"]
    expect(m["keys"] == "k1 k2" and m["tags"] == "TagP" and m["flag"] == 3, f"{m}")
    expect(m["properties"].get("color") == "red" and m["properties"].get("a") == "7", f"{m}")
    return {"stored": _rotate(r["stored"], m["queueId"])}


@scenario("java", "delay level 2 (1 s here): delivered once, after the delay, with its properties")
def java_producer_delay_level(t: Target, work: Path) -> dict:
    r = _run("producer-delay-level", t, work)
    expect(len(r["delivered"]) == 1, f"delivered once: {r['delivered']}")
    expect(r["delayedAtLeastMs"] == 900, f"delivered after the delay: {r['delayedAtLeastMs']} ms")
    # the delayed message comes back on the queue it was sent to: rotate by that one
    return {"delivered": _rotate(r["delivered"], r["send"]["queueId"])}


@scenario("java", "send to a missing topic, autoCreateTopicEnable=true: created from TBW102")
def java_producer_auto_create_on(t: Target, work: Path) -> dict:
    r = _run("producer-auto-create-on", t, work)
    expect(r.get("send", {}).get("status") == "SEND_OK", f"sent: {r}")
    expect(r.get("publishQueues") == [0, 1, 2, 3], f"4 queues: {r}")
    r["send"] = _rotate([r["send"]], r["send"]["queueId"])[0]
    return r


@scenario(
    "java",
    "send to a missing topic after updateBrokerConfig autoCreateTopicEnable=false",
    # createTopicInSendMessageMethod takes INHERIT off TBW102's perm while auto-creation is
    # off, and turning it back on does not give it back: nothing is auto-created afterwards.
    last=True,
)
def java_producer_auto_create_off(t: Target, work: Path) -> dict:
    r = _run("producer-auto-create-off", t, work)
    if "send" in r:
        r["send"] = _rotate([r["send"]], r["send"]["queueId"])[0]
    else:
        expect("exception" in r, f"either a SendResult or an exception: {r}")
        # DefaultMQProducerImpl#sendDefaultImpl names the time its retries took
        r["message"] = re.sub(r"cost \[\d+\]ms", "cost [<ms>]ms", r.get("message", ""))
    return r


@scenario("java", "push consumers, clustering, 'TagA || TagB': rebalance 4 -> 2 + 2 when c2 joins")
def java_push_tags_rebalance(t: Target, work: Path) -> dict:
    r = _run("push-tags-rebalance", t, work)
    expect(r["c1Alone"] == [0, 1, 2, 3], f"c1 alone owns all: {r}")
    expect(r["c1AfterJoin"] == [0, 1] and r["c2AfterJoin"] == [2, 3], f"averagely: {r}")
    want = sorted(
        f"{'c1' if i % 4 < 2 else 'c2'} q{i % 4} rb-{i} {('TagA', 'TagB')[i % 3]}"
        for i in range(12) if i % 3 != 2
    )  # fmt: skip
    expect(r["deliveries"] == want, f"deliveries: {r['deliveries']} want {want}")
    return r


@scenario("java", "push consumer with MessageSelector.bySql('a > 5'), enablePropertyFilter=true")
def java_push_sql92(t: Target, work: Path) -> dict:
    r = _run("push-sql92", t, work)
    expect(r["delivered"] == [f"sql-{i}" for i in (6, 7, 8, 9)], f"{r}")
    return r


@scenario("java", "broadcasting: both consumers get every message")
def java_push_broadcasting(t: Target, work: Path) -> dict:
    r = _run("push-broadcasting", t, work)
    want = sorted(f"{c} bc-{i}" for c in ("b1", "b2") for i in range(4))
    expect(r["deliveries"] == want, f"{r}")
    return r


@scenario("java", "MessageListenerOrderly: per-queue order held across a consumer restart")
def java_push_orderly_restart(t: Target, work: Path) -> dict:
    r = _run("push-orderly-restart", t, work)
    for q in range(4):
        want = [f"o-{q}-{i}" for i in range(24) if i % 4 == q]
        expect(r["perQueue"].get(f"q{q}") == want, f"queue {q}: {r['perQueue'].get(f'q{q}')}")
    return r


@scenario("java", "RECONSUME_LATER: retries via %RETRY%, then %DLQ% after maxReconsumeTimes=2")
def java_push_retry_dlq(t: Target, work: Path) -> dict:
    r = _run("push-retry-dlq", t, work)
    expect(r["reconsumeTimes"] == [0, 1, 2], f"attempts: {r['reconsumeTimes']}")
    expect(len(r["dlq"]) == 1 and r["dlq"][0]["body"] == "fails-always", f"DLQ: {r['dlq']}")
    # the first attempt comes from the queue the producer picked (random start)
    r["attempts"][0]["queueId"] = 0
    return r


@scenario("java", "resetOffsetByTimestamp(0) moves a running push consumer back: 4 messages again")
def java_push_reset_offset(t: Target, work: Path) -> dict:
    r = _run("push-reset-offset", t, work)
    expect(r["resetTo"] == [f"q{q} -> 0" for q in range(4)], f"reset table: {r['resetTo']}")
    want = sorted(f"{i}:0 rs-{i}" for i in range(4) for _ in range(2))
    expect(r["delivered"] == want, f"each message twice: {r['delivered']}")
    return r


def _from_where(kind: str, t: Target, work: Path) -> dict:
    r = _run(f"push-from-{kind}", t, work)
    expect(any(x.endswith(" new-0") for x in r["delivered"]), f"the new message: {r}")
    return r


@scenario("java", "CONSUME_FROM_FIRST_OFFSET for a new group")
def java_push_from_first(t: Target, work: Path) -> dict:
    return _from_where("first", t, work)


@scenario("java", "CONSUME_FROM_LAST_OFFSET for a new group (on a young topic: offset 0)")
def java_push_from_last(t: Target, work: Path) -> dict:
    return _from_where("last", t, work)


@scenario("java", "CONSUME_FROM_TIMESTAMP for a new group")
def java_push_from_timestamp(t: Target, work: Path) -> dict:
    return _from_where("timestamp", t, work)


@scenario("java", "DefaultLitePullConsumer, subscribe mode with a tag")
def java_lite_pull_subscribe(t: Target, work: Path) -> dict:
    r = _run("lite-pull-subscribe", t, work)
    expect(sorted(r["polled"]) == [f"lite-{i}" for i in (0, 2, 4, 6)], f"{r}")
    return r


@scenario("java", "DefaultLitePullConsumer, assign mode: seek(mq, 2), poll, commitSync")
def java_lite_pull_assign_seek(t: Target, work: Path) -> dict:
    r = _run("lite-pull-assign-seek", t, work)
    expect(r["polledFromSeek"] == [f"{i} la-{i}" for i in range(2, 6)], f"{r}")
    expect(r["committed"] == 6, f"committed: {r}")
    return r


@scenario("java", "DefaultMQPullConsumer: explicit offsets, statuses, updateConsumeOffset")
def java_pull_explicit_offsets(t: Target, work: Path) -> dict:
    r = _run("pull-explicit-offsets", t, work)
    expect(r["fetchedFromBroker"] == 3 and r["maxOffset"] == 5, f"{r}")
    statuses = [p["status"] for p in r["pulls"]]
    expect(statuses[0] == "FOUND" and statuses[3] == "NO_NEW_MSG", f"{statuses}")
    return r


@scenario("java", "producer.request(): sync and RequestCallback replies, and a timeout")
def java_request_reply(t: Target, work: Path) -> dict:
    r = _run("request-reply", t, work)
    want_props = {"MSG_TYPE": "reply", "REPLY_TO_CLIENT": "<requester>", "TTL": "10000"}
    for key, body in (("syncReply", "pong:ping-sync"), ("asyncReply", "pong:ping-async")):
        rep = r.get(key, {})
        expect(rep.get("body") == body and rep.get("sameCorrelationId") is True, f"{key}: {rep}")
        expect(rep.get("topic") == "DefaultCluster_REPLY_TOPIC", f"{key} topic: {rep}")
        expect(rep.get("properties") == want_props, f"{key} properties: {rep}")
    expect(
        r.get("timeout") == "RequestTimeoutException: CODE: 10006  DESC: send request message "
        f"to <{PREFIX}RequestSilent> OK, but wait reply message timeout, 1500 ms.",
        f"timeout: {r.get('timeout')}",
    )
    return r


@scenario("java", "enableMsgTrace: Pub, SubBefore and SubAfter records in RMQ_SYS_TRACE_TOPIC")
def java_msg_trace(t: Target, work: Path) -> dict:
    r = _run("msg-trace", t, work)
    types = sorted({x["type"] for x in r["records"]})
    expect(types == ["Pub", "SubAfter", "SubBefore"], f"record types: {types} in {r['records']}")
    pub = next(x for x in r["records"] if x["type"] == "Pub")
    expect(
        (pub["group"], pub["topic"], pub["tags"], pub["keys"], pub["success"])
        == (f"{PREFIX}pg_trace", f"{PREFIX}Traced", "TagT", "trace-key", True),
        f"Pub record: {pub}",
    )
    return r


@scenario("java", "DefaultMQAdminExt to a running consumer: running info (307), consume "
          "directly (309), consume status (223 -> 221)")  # fmt: skip
def java_admin_forwarding(t: Target, work: Path) -> dict:
    r = _run("admin-forwarding", t, work)
    info = r["runningInfo"]
    expect(info["commitOffsets"] == {"q0": 1, "q1": 0, "q2": 0, "q3": 0}, f"running info: {info}")
    expect(info["properties"]["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY", f"{info}")
    expect(
        r["runningInfoOffline"].startswith(
            f"MQClientException: CODE: 1  DESC: The Consumer <{PREFIX}cg_forward> "
            "<127.0.0.1@nobody> not online"
        ),
        f"offline: {r['runningInfoOffline']}",
    )
    expect(r["consumeDirectly"]["result"] == "CR_SUCCESS", f"{r['consumeDirectly']}")
    expect(r["delivered"] == ["fwd-0", "fwd-0"], f"delivered: {r['delivered']}")
    expect(
        r["consumeStatus"] == {"127.0.0.1@fwd-c1": {"q0": 1, "q1": 0, "q2": 0, "q3": 0}},
        f"consume status: {r['consumeStatus']}",
    )


# --------------------------------------------------------------------------- transactions


def _transaction(name: str, t: Target, work: Path) -> dict:
    """TransactionMQProducer#sendMessageInTransaction; queues relative to the send's."""
    r = _run(f"transaction-{name}", t, work)
    q0 = r["send"]["queueId"]
    expect(r["send"]["status"] == "SEND_OK", f"half message stored: {r['send']}")
    expect(r["executed"] == [f"tx-{name} arg-1"], f"local transaction ran once: {r['executed']}")
    r["send"] = _rotate([r["send"]], q0)[0]
    r["checks"] = _rotate(r["checks"], q0)
    r["stored"] = _rotate(r["stored"], q0)
    return r


def _committed(r: dict, body: str) -> None:
    (m,) = r["stored"]
    expect(m["body"] == body and m["queueId"] == 0 and m["queueOffset"] == 0, f"stored: {m}")
    expect(m["sysFlag"] == 8, f"stored with TRANSACTION_COMMIT_TYPE: {m}")
    props = m["properties"]
    expect(props.get("TRAN_MSG") == "true" and props.get("REAL_QID") == "0", f"{props}")


@scenario("java", "TransactionMQProducer: COMMIT_MESSAGE → delivered once on its topic")
def java_transaction_commit(t: Target, work: Path) -> dict:
    r = _transaction("commit", t, work)
    expect(r["send"]["localTransactionState"] == "COMMIT_MESSAGE", f"{r['send']}")
    expect(r["checks"] == [], f"no check-back: {r['checks']}")
    _committed(r, "tx-commit")
    return r


@scenario("java", "TransactionMQProducer: ROLLBACK_MESSAGE → never delivered, never checked")
def java_transaction_rollback(t: Target, work: Path) -> dict:
    r = _transaction("rollback", t, work)
    expect(r["send"]["localTransactionState"] == "ROLLBACK_MESSAGE", f"{r['send']}")
    expect(r["checks"] == [] and r["stored"] == [], f"nothing checked or stored: {r}")
    return r


@scenario("java", "TransactionMQProducer: UNKNOW → CHECK_TRANSACTION_STATE → commit, once")
def java_transaction_check_back(t: Target, work: Path) -> dict:
    r = _transaction("check", t, work)
    expect(r["send"]["localTransactionState"] == "UNKNOW", f"{r['send']}")
    (c,) = r["checks"]
    expect(c["topic"] == f"{PREFIX}Txcheck" and c["queueId"] == 0, f"the real topic: {c}")
    expect(c["properties"].get("TRANSACTION_CHECK_TIMES") == "1", f"first check: {c}")
    _committed(r, "tx-check")
    return r
