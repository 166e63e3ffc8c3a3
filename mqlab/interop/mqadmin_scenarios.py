"""Interop scenarios for ``mqadmin`` (``MQAdminStartup`` from rocketmq-tools 4.9.3).

Each scenario runs one or a few mqadmin commands against a target, the way an operator
types them, and returns their output *normalized*: what differs between any two brokers
on any two machines is replaced by a placeholder (``_RULES``: addresses, wall-clock times,
epoch milliseconds, message ids, file paths, machine-dependent figures), runs of blanks
are folded (column widths follow the values), and Java stack frames are dropped (the
exception's own line is kept). The real broker's output must then be the same, line for
line.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from mqlab.interop.go_client import GoClientProcess, run_go_client
from mqlab.interop.scenarios import CLIENT_MISSING, expect, scenario
from mqlab.interop.targets import Target

CLIENT_MISSING["mqadmin"] = lambda: __import__(
    "mqlab.interop.java_client", fromlist=["java_missing"]
).java_missing()

PREFIX = "IA_"

#: (pattern, placeholder, why): each masks something that names the machine or the moment.
_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}:\d+\b"), "<addr>", "ports are free ports"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[,.]\d{3})?"), "<time>", "wall clock"),
    (re.compile(r"\b[0-9A-Fa-f]{32}\b"), "<msgid>", "message ids carry host, port, time"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}@[\w#@.-]+"), "<clientId>", "ip@pid of the client"),
    (re.compile(r"(CommitLog Offset:)\s*\d+"), r"\1 <offset>", "depends on all stored before"),
    (re.compile(r"\b1\d{12}\b"), "<epoch-ms>", "wall clock in ms"),
    (re.compile(r"(?:/[\w.@%+-]+){2,}/?"), "<path>", "temp directories"),
    (re.compile(r"\b\d+@\d+#\d+\b|\b\d+#\d+\b"), "<instance>", "client instance = pid#nanos"),
    # consumerProgress's "Consume TPS" is BrokerStatsManager#tpsGroupGetNums: the pulled-message
    # count between two of its 10 s samples (StatsItem#samplingInSeconds, timed from the
    # group's first pull); mqlab keeps no such samples and answers 0.00
    (re.compile(r"(Consume TPS: )\d+\.\d+"), r"\1<sampled>", "10 s samples of the wall clock"),
]


def normalize(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("at ") or re.match(r"^\.\.\. \d+ more$", s):
            continue
        for pattern, placeholder, _why in _RULES:
            s = pattern.sub(placeholder, s)
        out.append(re.sub(r"\s+", " ", s))
    return out


def _run(t: Target, *args: str):
    """``mqadmin <args>`` in the target's batch JVM (one JVM runs every command of a run)."""
    from mqlab.conformance.real_cluster import mqadmin_session

    return mqadmin_session(t.namesrv_addr).run(list(args), timeout_s=90)


def _admin(t: Target, *args: str) -> list[str]:
    proc = _run(t, *args)
    expect(proc.returncode == 0, f"mqadmin {' '.join(args)} exited {proc.returncode}")
    return normalize(proc.stdout)


def _admin_both(t: Target, *args: str) -> list[str]:
    """stdout, then the exception's own lines from stderr (MQAdminStartup#main0 prints a
    failed command's SubCommandException and its cause there)."""
    proc = _run(t, *args)
    expect(proc.returncode == 0, f"mqadmin {' '.join(args)} exited {proc.returncode}")
    err = [x for x in normalize(proc.stderr) if not x.startswith("WARNING:")]
    return normalize(proc.stdout) + err


def _admin_until(t: Target, done, *args: str, timeout_s: float = 30) -> list[str]:
    """``_admin`` again every 0.2 s until ``done(lines)`` holds (or ``timeout_s`` passed): a
    user waits for what they look at, e.g. a client's first heartbeat."""
    deadline = time.monotonic() + timeout_s
    lines = _admin(t, *args)
    while not done(lines) and time.monotonic() < deadline:
        time.sleep(0.2)
        lines = _admin(t, *args)
    return lines


def _send(t: Target, topic: str, count: int, group: str = "ia_pg") -> list[dict]:
    sent = run_go_client(
        ["produce", "-n", t.namesrv_addr, "-topic", topic, "-group", PREFIX + group,
         "-count", str(count), "-tags", "TagA,TagB"]
    )  # fmt: skip
    expect(all(s.get("status") == 0 for s in sent), f"sends: {sent}")
    return sent


def _consume_then_rejoin(t: Target, work: Path, topic: str, group: str, count: int) -> None:
    """A Go push consumer of a new ``group`` takes ``count`` messages; the group then rejoins.

    Whether a consumer's ``%RETRY%<group>`` queue gets an offset (a ``%RETRY%<group> broker-a 0
    0 0 0`` row in consumerProgress) is decided by a race inside the client, against either
    broker: its first heartbeat creates the retry topic, and only a route update that runs after
    it, followed by a rebalance, gives the client that queue (``QUERY_CONSUMER_OFFSET`` answers
    0 for the empty queue, and ``persist`` commits that 0). The start-up route update runs
    before the first heartbeat; the client's 10 ms route task and its immediate rebalance race
    with it. On the second start the retry topic already has a route, so its first rebalance
    takes the queue on both brokers, every time.
    """
    run_go_client(
        ["consume", "-n", t.namesrv_addr, "-topic", topic, "-group", group,
         "-expect", str(count), "-timeout", "60s", "-linger", "6s"],
        home=work,
    )  # fmt: skip
    run_go_client(
        ["consume", "-n", t.namesrv_addr, "-topic", topic, "-group", group,
         "-expect", "0", "-timeout", "3s"],
        home=work,
    )  # fmt: skip


@scenario("mqadmin", "updateTopic -b (8 queues by default) then topicRoute")
def mqadmin_update_topic(t: Target, work: Path) -> dict:
    created = _admin(t, "updateTopic", "-b", t.broker_addr, "-t", PREFIX + "T1")
    route = _admin(t, "topicRoute", "-t", PREFIX + "T1")
    expect(any("success" in line for line in created), f"created: {created}")
    return {"updateTopic": created, "topicRoute": route}


@scenario("mqadmin", "updateTopic -c (every master of the cluster), -r 2 -w 2 -p 6")
def mqadmin_update_topic_cluster(t: Target, work: Path) -> dict:
    created = _admin(t, "updateTopic", "-c", "DefaultCluster", "-t", PREFIX + "T2",
                     "-r", "2", "-w", "2", "-p", "6")  # fmt: skip
    return {"updateTopic": created, "topicRoute": _admin(t, "topicRoute", "-t", PREFIX + "T2")}


@scenario("mqadmin", "topicList: the system topics a broker registers, and ours")
def mqadmin_topic_list(t: Target, work: Path) -> dict:
    # RMQ_SYS_TRANS_HALF_TOPIC appears when TransactionalMessageCheckService first runs
    # (transactionCheckInterval, 60 s after start), and a C++ pull consumer's group gets its
    # %RETRY% topic only if its first heartbeat beats its shutdown: both are a matter of time.
    timed = {"RMQ_SYS_TRANS_HALF_TOPIC", "%RETRY%cpp_pull"}
    names = sorted(x for x in _admin(t, "topicList") if x not in timed)
    expect(PREFIX + "T1" in names, f"the topic made by updateTopic is listed: {names}")
    return {"topicList": names}


@scenario("mqadmin", "topicRoute of TBW102, the auto-creation template")
def mqadmin_topic_route_tbw102(t: Target, work: Path) -> dict:
    return {"topicRoute": _admin(t, "topicRoute", "-t", "TBW102")}


@scenario("mqadmin", "topicStatus after 6 sends")
def mqadmin_topic_status(t: Target, work: Path) -> dict:
    _send(t, PREFIX + "Status", 6)
    return {"topicStatus": _admin(t, "topicStatus", "-t", PREFIX + "Status")}


@scenario("mqadmin", "clusterList")
def mqadmin_cluster_list(t: Target, work: Path) -> dict:
    lines = _admin(t, "clusterList")
    # #InTPS / #OutTPS / #PCWait / #Hour / #SPACE are this machine's load and disk
    masked = [re.sub(r"(V\d_\d_\d) .*$", r"\1 <load and disk>", x) for x in lines]
    return {"clusterList": masked}


@scenario("mqadmin", "updateSubGroup then consumerProgress of a group with no consumer")
def mqadmin_update_sub_group(t: Target, work: Path) -> dict:
    created = _admin(t, "updateSubGroup", "-b", t.broker_addr, "-g", PREFIX + "G1")
    return {"updateSubGroup": created}


@scenario("mqadmin", "consumerProgress after a Go consumer took 4 messages")
def mqadmin_consumer_progress(t: Target, work: Path) -> dict:
    topic = PREFIX + "Progress"
    _send(t, topic, 4)
    _consume_then_rejoin(t, work, topic, PREFIX + "progress", 4)
    lines = _admin(t, "consumerProgress", "-g", PREFIX + "progress")
    return {"consumerProgress": lines}


@scenario("mqadmin", "consumerConnection of a live Go push consumer")
def mqadmin_consumer_connection(t: Target, work: Path) -> dict:
    topic = PREFIX + "Conn"
    _send(t, topic, 1)
    with GoClientProcess(
        ["consume", "-n", t.namesrv_addr, "-topic", topic, "-group", PREFIX + "conn",
         "-expr", "TagA", "-expect", "1", "-linger", "60s"],
        home=work,
    ) as c:  # fmt: skip
        c.wait_lingering()
        lines = _admin_until(
            t, lambda x: any("<clientId>" in y for y in x),
            "consumerConnection", "-g", PREFIX + "conn",
        )  # fmt: skip
    return {"consumerConnection": lines}


@scenario("mqadmin", "producerConnection of a live Go producer")
def mqadmin_producer_connection(t: Target, work: Path) -> dict:
    topic = PREFIX + "ProdConn"
    with GoClientProcess(
        ["produce", "-n", t.namesrv_addr, "-topic", topic, "-group", PREFIX + "prodconn",
         "-count", "1", "-linger", "60s"],
        home=work,
    ) as p:  # fmt: skip
        p.wait_lingering()
        # a producer is known to a broker by its heartbeat: the Go client's first one goes
        # 1 s after it starts (internal/client.go), not with the first send: poll, bounded
        lines = _admin_until(
            t, lambda x: any("<clientId>" in y for y in x),
            "producerConnection", "-g", PREFIX + "prodconn", "-t", topic,
        )  # fmt: skip
    return {"producerConnection": lines}


@scenario("mqadmin", "brokerStatus: the runtime info keys (values are this machine's)")
def mqadmin_broker_status(t: Target, work: Path) -> dict:
    lines = _admin(t, "brokerStatus", "-b", t.broker_addr)
    # StoreStatsService adds these once it has a minute's samples; mqlab has no sampling thread
    # and answers as a 4.9.3 broker in its first seconds (README, "What the model leaves out")
    sampled = {"getFoundTps", "getMissTps", "getTransferedTps", "putTps"}
    keys = sorted(
        k for line in lines if " : " in line if (k := line.split(" : ")[0].strip()) not in sampled
    )
    expect("brokerVersionDesc" in keys, f"keys: {keys}")
    version = next(x for x in lines if x.startswith("brokerVersionDesc"))
    return {"keys": keys, "version": version}


#: getBrokerConfig values that name this run's files, ports and sizes (set by each cluster).
_RUN_SPECIFIC_CONFIG = {
    "storePathRootDir",
    "storePathCommitLog",
    "namesrvAddr",
    "brokerIP1",
    "brokerIP2",
    "listenPort",
    "haListenPort",
    "rocketmqHome",
    "mappedFileSizeCommitLog",
    "mappedFileSizeConsumeQueue",
    "maxIndexNum",
    "maxHashSlotNum",
    "messageDelayLevel",
    "storePathIndex",
    "storeCheckpoint",
    "abortFile",
    "diskMaxUsedSpaceRatio",
    "waitTimeMillsInSendQueue",
    "osPageCacheBusyTimeOutMills",
    "brokerName",
}

#: getBrokerConfig values 4.9.3 derives from Runtime#availableProcessors (BrokerConfig,
#: NettyClientConfig); mqlab fixes the host at 4 CPUs, the real broker counts this machine's.
_CPU_DERIVED_CONFIG = {
    "sendMessageThreadPoolNums",  # min(cpus, 4)
    "putMessageFutureThreadPoolNums",  # min(cpus, 4)
    "pullMessageThreadPoolNums",  # 16 + 2 * cpus
    "processReplyMessageThreadPoolNums",  # 16 + 2 * cpus
    "queryMessageThreadPoolNums",  # 8 + cpus
    "heartbeatThreadPoolNums",  # min(32, cpus)
    "endTransactionThreadPoolNums",  # max(8 + 2 * cpus, 4 * sendMessageThreadPoolNums)
    "clientCallbackExecutorThreads",  # cpus
}


@scenario("mqadmin", "getBrokerConfig: every key and its default")
def mqadmin_get_broker_config(t: Target, work: Path) -> dict:
    lines = _admin(t, "getBrokerConfig", "-b", t.broker_addr)
    config = {}
    for line in lines:
        if " = " in line:
            k, _, v = line.partition(" = ")
            k, v = k.strip(), v.strip()
            if k in _RUN_SPECIFIC_CONFIG:
                v = "<run-specific>"
            elif k in _CPU_DERIVED_CONFIG:
                v = "<cpu-derived>"
            config[k] = v
    expect(len(config) > 50, f"a full configuration: {len(config)} keys")
    return {"config": dict(sorted(config.items()))}


@scenario("mqadmin", "updateBrokerConfig maxMessageSize, read back with getBrokerConfig")
def mqadmin_update_broker_config(t: Target, work: Path) -> dict:
    out = _admin(t, "updateBrokerConfig", "-b", t.broker_addr, "-k", "maxMessageSize",
                 "-v", "2097152")  # fmt: skip
    lines = _admin(t, "getBrokerConfig", "-b", t.broker_addr)
    value = [x for x in lines if x.startswith("maxMessageSize ")]
    _admin(t, "updateBrokerConfig", "-b", t.broker_addr, "-k", "maxMessageSize", "-v", "4194304")
    expect(value == ["maxMessageSize = 2097152"], f"read back: {value}")
    return {"updateBrokerConfig": out, "readBack": value}


@scenario("mqadmin", "queryMsgByOffset, queryMsgById and queryMsgByKey of one message")
def mqadmin_query_msg(t: Target, work: Path) -> dict:
    topic = PREFIX + "Query"
    sent = _send(t, topic, 3)
    first = sent[0]
    by_offset = _admin(t, "queryMsgByOffset", "-t", topic, "-b", "broker-a",
                       "-i", str(first["queueId"]), "-o", str(first["queueOffset"]))  # fmt: skip
    by_id = _admin(t, "queryMsgById", "-i", first["offsetMsgId"])
    by_key = _admin(t, "queryMsgByKey", "-t", topic, "-k", "key-0")
    # the queue the producer picked first is random-free here, but its id is shown: relative
    return {"byOffset": by_offset, "byId": by_id, "byKey": by_key}


@scenario("mqadmin", "resetOffsetByTime of a group without a live consumer")
def mqadmin_reset_offset_by_time(t: Target, work: Path) -> dict:
    topic = PREFIX + "Reset"
    _send(t, topic, 4)
    _consume_then_rejoin(t, work, topic, PREFIX + "reset", 4)
    out = _admin(t, "resetOffsetByTime", "-g", PREFIX + "reset", "-t", topic, "-s", "0")
    progress = _admin(t, "consumerProgress", "-g", PREFIX + "reset")
    return {"resetOffsetByTime": out, "consumerProgress": progress}


@scenario("mqadmin", "deleteTopic -c, then its route is gone")
def mqadmin_delete_topic(t: Target, work: Path) -> dict:
    _admin(t, "updateTopic", "-b", t.broker_addr, "-t", PREFIX + "Gone")
    out = _admin(t, "deleteTopic", "-c", "DefaultCluster", "-t", PREFIX + "Gone")
    route = _admin(t, "topicRoute", "-t", PREFIX + "Gone")
    return {"deleteTopic": out, "topicRouteAfter": route}
