"""Compare two answers field by field; only a named normalization rule may mask a field.

A comparison yields :class:`Diff` items (a field path, the real value, mqlab's value).
Each is either masked by one rule of :data:`RULES` or left UNEXPLAINED. A rule names the
fields it may touch and says WHY they may differ; it masks a diff only when the two
values are equal once that one reason is taken away (e.g. each side's broker address
replaced by ``<broker>``), never by ignoring a field outright.

Paths: ``code``, ``remark``, ``ext.<name>``, ``body`` (bytes), ``body.<json path>``,
``msg[i].<field>`` (a stored message, from a pull body or a commit-log file),
``cq[i].<field>`` (a consume-queue unit), ``elapsed_ms`` (timing).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mqlab.common.message_decoder import MessageDecodeError, decode_message_id, decodes
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads

__all__ = ["Diff", "Rule", "RULES", "compare_answers", "compare_values", "classify", "SideEnv"]


@dataclass(slots=True)
class Diff:
    path: str
    real: Any
    mqlab: Any
    rule: str | None = None  # the rule that masks it, or None = unexplained
    #: for a stored message's field: both entries' bornHost (who created the message)
    born_hosts: tuple[str, str] | None = None


@dataclass(slots=True)
class SideEnv:
    """What differs between the two runs by construction: each side's addresses."""

    broker_addr: str
    namesrv_addr: str
    client_addrs: tuple[str, ...] = ()
    #: the slave of broker-a while the ``slave`` group runs ("" otherwise)
    slave_addr: str = ""
    #: the broker with ACL on while the ``acl`` group runs ("" otherwise), and its
    #: ``rocketmq.home.dir`` (each side's own temp dir)
    acl_addr: str = ""
    acl_home: str = ""
    #: a DLedger group's nodes (the ``dledger-failover`` rows): ``(self id, broker address)``
    node_addrs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Rule:
    """A normalization rule: ``name``, the ``fields`` it may mask, and ``why``."""

    name: str
    fields: str
    why: str
    masks: Callable[[Diff, SideEnv, SideEnv], bool]


def _sub_addresses(v: Any, env: SideEnv, which: str) -> Any:
    if not isinstance(v, str):
        return v
    if which == "broker":
        for node, addr in env.node_addrs:  # before broker_addr: it is one of them
            v = v.replace(addr, f"<{node}>")
        v = v.replace(env.broker_addr, "<broker>")
        if env.acl_addr:
            v = v.replace(env.acl_addr, "<acl-broker>")
        return v.replace(env.slave_addr, "<slave>") if env.slave_addr else v
    if which == "namesrv":
        return v.replace(env.namesrv_addr, "<namesrv>")
    for c in env.client_addrs:
        v = v.replace(c, "<client>")
    return v


def _address_rule(which: str) -> Callable[[Diff, SideEnv, SideEnv], bool]:
    def masks(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
        a, b = _sub_addresses(d.real, real, which), _sub_addresses(d.mqlab, mq, which)
        return a != d.real and a == b

    return masks


_PROPERTIES_PATH = re.compile(r"^msg\[\d+\]\.properties$")


def _property_pairs(v: Any) -> Any:
    """A stored properties string (``name\\u0001value\\u0002``...) as ``[[name, value]]``
    in stored order; anything else unchanged."""
    if isinstance(v, str) and "\u0001" in v:
        return [p.split("\u0001", 1) for p in v.split("\u0002") if "\u0001" in p]
    return v


def _offset_msg_id(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if _PROPERTIES_PATH.match(d.path) and isinstance(d.real, str) and isinstance(d.mqlab, str):
        # the raw stored string (stored-bytes rows): the same check on its pairs
        d = Diff(d.path, _property_pairs(d.real), _property_pairs(d.mqlab))
    if _PROPERTIES_PATH.match(d.path) and isinstance(d.real, list) and isinstance(d.mqlab, list):
        # A stored message's properties, e.g. ORIGIN_MESSAGE_ID of a sent-back message
        # (SendMessageProcessor#asyncConsumerSendMsgBack: the stored message's offset id).
        # Same names in the same order; each differing value an offset id of its broker.
        if len(d.real) != len(d.mqlab):
            return False
        differing = [(a, b) for a, b in zip(d.real, d.mqlab, strict=True) if a != b]
        return bool(differing) and all(
            a[0] == b[0] and _same_offset_ids(a[1], b[1], real, mq) for a, b in differing
        )
    return _same_offset_ids(d.real, d.mqlab, real, mq)


def _same_offset_ids(x_real: Any, x_mq: Any, real: SideEnv, mq: SideEnv) -> bool:
    if not (isinstance(x_real, str) and isinstance(x_mq, str)):
        return False
    ids_a, ids_b = x_real.split(","), x_mq.split(",")  # a batch answers with a list
    if len(ids_a) != len(ids_b):
        return False
    for x, y in zip(ids_a, ids_b, strict=True):
        try:
            host_a, off_a = decode_message_id(x)
            host_b, off_b = decode_message_id(y)
        except ValueError:
            return False
        own = (
            (host_a, host_b) == (real.broker_addr, mq.broker_addr)
            or (bool(real.acl_addr) and (host_a, host_b) == (real.acl_addr, mq.acl_addr))
            or _same_node(host_a, host_b, real, mq)
        )
        if not (own and off_a == off_b):
            return False
    return True


def _same_node(addr_a: str, addr_b: str, real: SideEnv, mq: SideEnv) -> bool:
    """Whether the two addresses are the same DLedger node's broker on each side."""
    na = next((n for n, a in real.node_addrs if a == addr_a), None)
    nb = next((n for n, a in mq.node_addrs if a == addr_b), None)
    return na is not None and na == nb


def _acl_file_version(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    """GET_BROKER_CLUSTER_ACL_INFO's allAclFileVersion: ``{path: {counter, timestamp}}``,
    the same files under each side's home, the same counters, timestamps within the store
    clock window."""
    if d.path != "ext.allAclFileVersion" or not (real.acl_home and mq.acl_home):
        return False
    try:
        a, b = loads(d.real), loads(d.mqlab)
    except (TypeError, ValueError):
        return False
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    a = {k.replace(real.acl_home, "<acl-home>"): v for k, v in a.items()}
    b = {k.replace(mq.acl_home, "<acl-home>"): v for k, v in b.items()}
    if sorted(a) != sorted(b) or any("<acl-home>" not in k for k in a):
        return False
    for k, va in a.items():
        vb = b[k]
        if not (isinstance(va, dict) and isinstance(vb, dict)):
            return False
        if va.get("counter") != vb.get("counter") or set(va) != set(vb):
            return False
        ta, tb = va.get("timestamp"), vb.get("timestamp")
        if not (isinstance(ta, int) and isinstance(tb, int)):
            return False
        if abs(ta - tb) > STORE_CLOCK_WINDOW_MS:
            return False
    return True


_TIMESTAMP_PATHS = re.compile(
    r"(msg\[\d+\]\.storeTimestamp|ext\.timestamp|body\.dataVersion\.timestamp"
    r"|body\..*\.dataVersion\.timestamp|body\.offsetTable\..*\.lastUpdateTimestamp"
    r"|ext\.indexLastUpdateTimestamp|body\.offsetTable\..*\.lastTimestamp"
    r"|body\.consumeStatsList\[\d+\]\..*\.offsetTable\..*\.lastTimestamp"
    r"|body\.table\.earliestMessageTimeStamp)$"
)
#: ``Configuration``'s data version as the ``version`` ext field of GET_BROKER_CONFIG: a
#: ``DataVersion#toJson`` text whose timestamp is the broker's clock at start / update.
_VERSION_JSON = re.compile(r'^\{"counter":(\d+),"timestamp":(\d+)\}$')
#: Two brokers started and fed by the same harness store within this of each other.
STORE_CLOCK_WINDOW_MS = 120_000


def _store_timestamp(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if d.path == "ext.version" and isinstance(d.real, str) and isinstance(d.mqlab, str):
        va, vb = _VERSION_JSON.match(d.real), _VERSION_JSON.match(d.mqlab)
        if va is None or vb is None or va.group(1) != vb.group(1):
            return False  # the counters (how many updates) must agree
        return _store_timestamp(Diff("ext.timestamp", va.group(2), vb.group(2)), real, mq)
    if _TIMESTAMP_PATHS.search(d.path) is None:
        return False
    try:
        a, b = int(d.real), int(d.mqlab)
    except (TypeError, ValueError):
        return False
    return a > 0 and b > 0 and abs(a - b) <= STORE_CLOCK_WINDOW_MS


_BORN_TIMESTAMP = re.compile(r"^msg\[\d+\]\.bornTimestamp$")


def _broker_born_timestamp(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if _BORN_TIMESTAMP.match(d.path) is None or d.born_hosts is None:
        return False
    if d.born_hosts != (real.broker_addr, mq.broker_addr):
        return False
    return _store_timestamp(Diff("ext.timestamp", d.real, d.mqlab), real, mq)


_SCHEDULE_TAGS_CODE = re.compile(r"^cq:SCHEDULE_TOPIC_XXXX/\d+\[\d+\]\.tagsCode$")


def _schedule_deliver_time(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if _SCHEDULE_TAGS_CODE.search(d.path) is None:
        return False
    return _store_timestamp(Diff("ext.timestamp", d.real, d.mqlab), real, mq)


RULES: list[Rule] = [
    Rule(
        "broker-address",
        "remarks, ext fields, JSON body strings, storeHost of stored messages",
        "the two brokers listen on different free loopback ports; the broker's "
        "brokerIP1:listenPort is written wherever RocketMQ names the broker (route and "
        "cluster bodies, remarks, the STOREHOST of every stored message); in a DLedger "
        "group's rows each node's broker address becomes <n0>, <n1>, <n2> on both sides",
        _address_rule("broker"),
    ),
    Rule(
        "namesrv-address",
        "remarks, JSON body strings",
        "the two name servers listen on different free loopback ports",
        _address_rule("namesrv"),
    ),
    Rule(
        "client-address",
        "bornHost of stored messages, remarks naming the client",
        "the harness's socket to each broker has its own ephemeral port; the broker "
        "stamps the remote address as BORNHOST",
        _address_rule("client"),
    ),
    Rule(
        "offset-msg-id",
        "msgId / offsetMsgId of send answers and stored messages; property values of "
        "stored messages that are such ids (ORIGIN_MESSAGE_ID of a sent-back message)",
        "an offset message id is hex(storeHost ip, port, commit-log offset) "
        "(MessageDecoder#createMessageId); masked only when both decode to their own "
        "broker's address (in a DLedger group's rows, the same node's) and the SAME "
        "commit-log offset",
        _offset_msg_id,
    ),
    Rule(
        "acl-file-version",
        "GET_BROKER_CLUSTER_ACL_INFO's allAclFileVersion",
        "keyed by each side's plain_acl.yml path, under its own temp rocketmq.home.dir, "
        "with the timestamp each side's write gave the file's dataVersion; masked only "
        "when the same files have the same counters and timestamps within "
        f"{STORE_CLOCK_WINDOW_MS // 1000} s",
        _acl_file_version,
    ),
    Rule(
        "store-timestamp",
        "STORETIMESTAMP of stored messages, GET_EARLIEST_MSG_STORETIME's timestamp, "
        "dataVersion timestamps (GET_BROKER_CONFIG's version ext field too, same counter "
        "required), GET_TOPIC_STATS_INFO's lastUpdateTimestamp (the store time of a queue's "
        "last message), GET_CONSUME_STATS' and GET_BROKER_CONSUME_STATS' lastTimestamp (of the last consumed message), "
        "QUERY_MESSAGE's indexLastUpdateTimestamp (of the last indexed message), the "
        "runtime info's earliestMessageTimeStamp",
        "each broker's wall clock when it stored / changed something; masked only when "
        f"both are set and within {STORE_CLOCK_WINDOW_MS // 1000} s of each other",
        _store_timestamp,
    ),
    Rule(
        "schedule-deliver-time",
        "tags code of SCHEDULE_TOPIC_XXXX consume-queue units",
        "a delayed message's consume-queue unit holds its delivery time (store "
        "timestamp + the level's delay, CommitLog#checkMessageAndReturnSize) instead of "
        "a tags hash code: it follows each broker's clock (both set, within 120 s)",
        _schedule_deliver_time,
    ),
]


def _file_preallocation(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    """Real: the next commit-log file is already there (AllocateMappedFileService); mqlab
    creates it on the first write past the end. Masks only a commit-log file mqlab has not
    created yet; both sides' files are full-size sparse maps, so lengths must agree."""
    if not d.path.startswith("files.commitlog/") or not isinstance(d.real, int):
        return False
    return d.mqlab == "<absent>"


_NOT_A_NUMBER = re.compile(r"^the custom field <\w+> is not a number: '(.*)'$")


#: JDK 14+'s "helpful" NullPointerException message (JEP 358), e.g. 'Cannot invoke
#: "X.compile(String)" because the return value of "Y.get(String)" is null'.
_HELPFUL_NPE = re.compile(
    r"^Cannot (invoke|read field|assign field|load from|store to|read the array length"
    r'|throw exception|enter synchronized block|exit synchronized block) "[^"]*"'
    r"(?: because .* is null)?$"
)


def _jdk_exception_text(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if d.path == "remark" and d.mqlab is None and isinstance(d.real, str):
        # e.getMessage() of a NullPointerException as the whole remark: null on JDK 8
        return _HELPFUL_NPE.match(d.real) is not None
    if d.path != "remark" or not isinstance(d.real, str) or not isinstance(d.mqlab, str):
        return False
    npe = "java.lang.NullPointerException, "
    if d.mqlab.startswith(npe):  # JDK 8's text; JDK 14+ adds a message, same first frame
        frame = d.mqlab[len(npe) :]
        return d.real.startswith("java.lang.NullPointerException: ") and d.real.endswith(
            ", " + frame
        )
    nfe = re.compile(
        r'^(java\.lang\.NumberFormatException: For input string: ".*", )'
        r"(java\.base/)?java\.lang\.NumberFormatException\.forInputString"
        r"\(NumberFormatException\.java:\d+\)$"
    )
    ma, mb = nfe.match(d.real), nfe.match(d.mqlab)
    if ma and mb:  # same text; the frame inside the JDK differs by JDK version
        return ma.group(1) == mb.group(1)
    m = _NOT_A_NUMBER.match(d.mqlab)
    return m is not None and d.real.startswith(
        f'java.lang.NumberFormatException: For input string: "{m.group(1)}", '
    )


RULES.append(
    Rule(
        "broker-born-timestamp",
        "BORNTIMESTAMP of a message the broker creates itself (its bornHost is the broker), "
        "stored or pulled",
        "a message the broker writes on its own (PullMessageProcessor#generateOffsetMovedEvent "
        "after an OFFSET_MOVED answer, the op message of an END_TRANSACTION) is born on the "
        "broker's clock; masked only when both entries' bornHost is their own broker and the "
        "times are within 120 s",
        _broker_born_timestamp,
    )
)

RULES.append(
    Rule(
        "jdk-exception-text",
        "the remark of a SYSTEM_ERROR from a Java exception: a header number that does not "
        "parse, a NullPointerException; a remark that is a NullPointerException's own "
        "message (CHECK_CLIENT_CONFIG with an expression type no filter is registered for)",
        "Java answers RemotingHelper#exceptionSimpleDesc: the exception's text and first "
        "stack frame. A NumberFormatException's frame lies inside the JDK and changes with "
        "it: mqlab writes JDK 8's frame, or for a header field names the field and the "
        "value (masked only when the real remark quotes that same value). A NullPointerException has no text on JDK 8 (4.9.3's "
        "target) and a 'helpful' one on JDK 14+: mqlab writes JDK 8's (masked only when "
        "the first frame, RocketMQ's class, method and line, is the same). Where the "
        "remark is the exception's message alone (ClientManageProcessor#checkClientConfig "
        "answers e.getMessage()), JDK 8's is null: mqlab answers no remark (masked only "
        'when the real remark is a JDK helpful-NPE text, \'Cannot invoke "..." because '
        "... is null')",
        _jdk_exception_text,
    )
)

_TIME_SPAN = re.compile(
    r"^body\.consumeTimeSpanSet\[\d+\]\.(minTimeStamp|maxTimeStamp|consumeTimeStamp|delayTime)"
    r"(Str)?$"
)
_TIME_SPAN_STR = re.compile(r"^(\d{4})-(\d\d)-(\d\d)#(\d\d):(\d\d):(\d\d):(\d{3})$")


def _time_span_ms(v: Any) -> int | None:
    """A QueueTimeSpan time: the number, or its ``yyyy-MM-dd#HH:mm:ss:SSS`` text (read as UTC)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    m = _TIME_SPAN_STR.match(v) if isinstance(v, str) else None
    if m is None:
        return None
    from datetime import UTC, datetime

    y, mo, d, h, mi, sec, ms = (int(g) for g in m.groups())
    return int(datetime(y, mo, d, h, mi, sec, tzinfo=UTC).timestamp() * 1000) + ms


def _consume_time_span(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if _TIME_SPAN.match(d.path) is None:
        return False
    a, b = _time_span_ms(d.real), _time_span_ms(d.mqlab)
    return (
        a is not None and b is not None and a > 0 and b > 0 and abs(a - b) <= STORE_CLOCK_WINDOW_MS
    )


RULES.append(
    Rule(
        "consume-time-span",
        "QUERY_CONSUME_TIME_SPAN's min/max/consume store times, their text forms, delayTime",
        "each QueueTimeSpan holds store times of messages (each broker's own clock), "
        "formatted again as yyyy-MM-dd#HH:mm:ss:SSS, and delayTime = the broker's now "
        "minus the next message's store time; masked only when both are set and within "
        f"{STORE_CLOCK_WINDOW_MS // 1000} s (the text read as UTC: the real broker's JVM "
        "formats in its default time zone, mqlab in UTC)",
        _consume_time_span,
    )
)


def _filter_data_born_time(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if d.path != "body.filterData" or not isinstance(d.real, str) or not isinstance(d.mqlab, str):
        return False
    try:
        a, b = loads(d.real), loads(d.mqlab)
    except ValueError:
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    ta, tb = a.pop("bornTime", None), b.pop("bornTime", None)
    if a != b or not isinstance(ta, int) or not isinstance(tb, int):
        return False
    if d.real.replace(f'"bornTime":{ta},', "") != d.mqlab.replace(f'"bornTime":{tb},', ""):
        return False  # the same text but for the number (pretty-printing included)
    return ta > 0 and tb > 0 and abs(ta - tb) <= STORE_CLOCK_WINDOW_MS


RULES.append(
    Rule(
        "filter-data-born-time",
        "the bornTime inside QUERY_CONSUME_QUEUE's filterData text (a SQL92 group's "
        "ConsumerFilterData, pretty-printed)",
        "ConsumerFilterManager#register stamps bornTime with the broker's clock when the "
        "group's heartbeat arrives; masked only when the texts are equal but for that "
        f"number and the two times are within {STORE_CLOCK_WINDOW_MS // 1000} s",
        _filter_data_born_time,
    )
)

RULES.append(
    Rule(
        "file-preallocation",
        "the pre-created next commit-log file",
        "both brokers map every store file at its full size (a sparse file of "
        "mappedFileSizeCommitLog / mappedFileSizeConsumeQueue bytes), but 4.9.3's "
        "AllocateMappedFileService also creates the next commit-log file ahead of need; "
        "mqlab creates it on the first write past the end. Entries and units are compared "
        "one by one in their own rows",
        _file_preallocation,
    )
)


def parse_properties_body(body: bytes | None) -> list[tuple[str, str]]:
    """A ``MixAll#properties2String`` text (``key=value\n`` per entry, nothing escaped) as
    ``[(key, value)]`` in its order (GET_BROKER_CONFIG's and GET_NAMESRV_CONFIG's bodies)."""
    text = (body or b"").decode("utf-8", "replace").replace("\r\n", "\n")
    return [tuple(line.split("=", 1)) for line in text.split("\n") if "=" in line]  # type: ignore[misc]


def _port(addr: str) -> str:
    return addr.rsplit(":", 1)[-1]


def _listen_port(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if d.path not in ("body.listenPort", "body.haListenPort"):
        return False
    try:
        a, b = int(d.real), int(d.mqlab)
    except (TypeError, ValueError):
        return False
    if d.path == "body.listenPort":  # each side's own broker, slave or name-server port

        def own(env: SideEnv) -> tuple[str, ...]:
            addrs = (
                env.broker_addr,
                env.namesrv_addr,
                *([env.slave_addr] if env.slave_addr else []),
            )
            return tuple(_port(x) for x in addrs)

        return str(a) in own(real) and str(b) in own(mq)
    return 0 < a < 65536 and 0 < b < 65536


_STORE_PATH_KEYS = ("storePathRootDir", "storePathCommitLog", "kvConfigPath", "configStorePath")


def _store_path(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    key = d.path.removeprefix("body.")
    if key not in _STORE_PATH_KEYS or not isinstance(d.real, str) or not isinstance(d.mqlab, str):
        return False
    if not (d.real.startswith("/") and d.mqlab.startswith("/")):
        return False
    # the same file or directory name inside each side's own store directory
    return key == "storePathRootDir" or d.real.rsplit("/", 1)[-1] == d.mqlab.rsplit("/", 1)[-1]


#: BrokerConfig / NettyClientConfig fields 4.9.3 derives from Runtime#availableProcessors.
_CPU_DERIVED: dict[str, Callable[[int], int]] = {
    "sendMessageThreadPoolNums": lambda n: min(n, 4),
    "putMessageFutureThreadPoolNums": lambda n: min(n, 4),
    "pullMessageThreadPoolNums": lambda n: 16 + n * 2,
    "processReplyMessageThreadPoolNums": lambda n: 16 + n * 2,
    "queryMessageThreadPoolNums": lambda n: 8 + n,
    "heartbeatThreadPoolNums": lambda n: min(32, n),
    "endTransactionThreadPoolNums": lambda n: max(8 + n * 2, min(n, 4) * 4),
    "clientCallbackExecutorThreads": lambda n: n,
}
#: mqlab's fixed host (``mqlab.broker.config``: "mqlab fixes the host at 4 CPUs").
MQLAB_CPUS = 4


def _available_processors(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    f = _CPU_DERIVED.get(d.path.removeprefix("body."))
    if f is None or not d.path.startswith("body."):
        return False
    try:
        a, b = int(d.real), int(d.mqlab)
    except (TypeError, ValueError):
        return False
    return b == f(MQLAB_CPUS) and any(f(n) == a for n in range(1, 1025))


#: GET_BROKER_RUNTIME_INFO entries that are measurements of the run: clocks, latencies,
#: sampled rates, thread-pool queues at that instant, the flush and reput backlogs, the disk.
#: dispatchBehindBytes: what the ReputMessageService has not dispatched yet when the request
#: is answered (the real broker's reput thread lagged 362 bytes behind two sends in the acl
#: group once; mqlab's reput runs before the next request).
_RUNTIME_MEASUREMENTS = frozenset({
    "bootTimestamp", "runtime", "putMessageEntireTimeMax", "getMessageEntireTimeMax",
    "putMessageDistributeTime", "pageCacheLockTimeMills", "putTps", "getFoundTps",
    "getMissTps", "getTransferedTps", "getTotalTps", "remainHowManyDataToFlush",
    "dispatchBehindBytes",
    "commitLogDiskRatio", "consumeQueueDiskRatio", "commitLogDirCapacity",
    "sendThreadPoolQueueSize", "pullThreadPoolQueueSize", "queryThreadPoolQueueSize",
    "EndTransactionQueueSize", "sendThreadPoolQueueHeadWaitTimeMills",
    "pullThreadPoolQueueHeadWaitTimeMills", "queryThreadPoolQueueHeadWaitTimeMills",
})  # fmt: skip


def _runtime_measurement(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if not d.path.startswith("body.table."):
        return False
    key = d.path.removeprefix("body.table.")
    if key.startswith("commitLogDiskRatio_/"):  # keyed by each side's own commit-log path
        present = d.real if d.real != "<absent>" else d.mqlab
        return (d.real == "<absent>") != (d.mqlab == "<absent>") and isinstance(present, str)
    return key in _RUNTIME_MEASUREMENTS and "<absent>" not in (d.real, d.mqlab)


RULES += [
    Rule(
        "listen-port",
        "listenPort and haListenPort in GET_BROKER_CONFIG / GET_NAMESRV_CONFIG bodies (a "
        "slave's too)",
        "each broker and name server listens on its own free loopback port (listenPort "
        "masked only when it is that side's own port); the real runner gives the HA service "
        "a free port of its own, mqlab shows its configured haListenPort",
        _listen_port,
    ),
    Rule(
        "store-path",
        "storePathRootDir, storePathCommitLog, kvConfigPath, configStorePath in config bodies",
        "each side keeps its store in its own temporary directory; masked only when both "
        "are absolute paths naming the same file or directory inside it",
        _store_path,
    ),
    Rule(
        "available-processors",
        "GET_BROKER_CONFIG's thread counts 4.9.3 derives from Runtime#availableProcessors "
        "(send/pull/query/reply/heartbeat/end-transaction/put-future pools, "
        "clientCallbackExecutorThreads)",
        f"Java sizes them from this host's CPU count; mqlab fixes the host at {MQLAB_CPUS} "
        "CPUs so that runs do not depend on the machine. Masked only when mqlab's value is "
        f"4.9.3's formula at {MQLAB_CPUS} CPUs and the real value is the same formula at "
        "some CPU count",
        _available_processors,
    ),
    Rule(
        "runtime-measurement",
        "GET_BROKER_RUNTIME_INFO entries that measure the run: bootTimestamp, runtime, "
        "put/get latency maxima and histogram, TPS figures, thread-pool queue sizes and head "
        "wait times, page-cache lock time, flush and reput backlogs, disk ratios and capacity "
        "(commitLogDiskRatio_<path> is keyed by each side's own commit-log path)",
        "each broker measures its own clock, threads, flushes and disk; mqlab has no "
        "sampling threads and a simulated disk (see the README, What the model leaves out). "
        "Every other entry (offsets, counters, capacities, versions) is compared exactly",
        _runtime_measurement,
    ),
]
_DISK_UTIL = re.compile(r"\[CL: +-?[\d.]+ CQ: +-?[\d.]+ INDEX: +-?[\d.]+\]")


def _disk_util(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if d.path != "remark" or not (isinstance(d.real, str) and isinstance(d.mqlab, str)):
        return False
    a, b = _DISK_UTIL.sub("[disk]", d.real), _DISK_UTIL.sub("[disk]", d.mqlab)
    return a != d.real and a == b


RULES.append(
    Rule(
        "disk-util",
        "the [CL: x CQ: y INDEX: z] part of SERVICE_NOT_AVAILABLE's send remark",
        "SendMessageProcessor#diskUtil measures the used fraction of the partitions that "
        "hold the store (this host's disk; -1.00 for a directory not created yet, as a "
        "DLedger follower's index); mqlab's store sits on a simulated disk. The rest "
        "of the remark is compared exactly",
        _disk_util,
    )
)
_SAMPLED_TPS = re.compile(r"^body\.(.*\.)?(tps|consumeTps)$")
_OTHER_GROUP = re.compile(r"^body\.consumeStatsList\[\d+\]\.(?P<group>[^.\[]+)\[\d+\]\.consumeTps$")


def _sampled_tps(d: Diff, real: SideEnv, mq: SideEnv) -> bool:
    if _SAMPLED_TPS.match(d.path) is None:
        return False
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (d.real, d.mqlab)):
        return False
    m = _OTHER_GROUP.match(d.path)
    if m is not None and not m.group("group").startswith("cf_stats"):
        # another scenario's group: its pulls may lie on either side of a minute's window
        return d.real >= 0 and d.mqlab >= 0
    return d.real > 0 and d.mqlab > 0


RULES.append(
    Rule(
        "sampled-tps",
        "tps of VIEW_BROKER_STATS_DATA's minute / hour / day, consumeTps of GET_CONSUME_STATS "
        "and GET_BROKER_CONSUME_STATS",
        "BrokerStatsManager samples its counters every 10 s (10 min, 1 h) from each broker's "
        "own start (StatsItemSet#init); tps = the count between the first and the last "
        "sample kept, divided by the time between them, so it depends on where each "
        "broker's samples fall. Masked only when both are non-zero (the stats group's own "
        "topic and group: its reads wait for a sample), or for another scenario's group in "
        "GET_BROKER_CONSUME_STATS, when both are >= 0 (its pulls may have left the minute "
        "on one side only)",
        _sampled_tps,
    )
)

#: Not a field rule: it looks at the whole exchange (see :func:`missing_header_field`).
MISSING_FIELD_RULE = Rule(
    "missing-header-field",
    "code, remark and ext fields of an answer to a request lacking a @CFNotNull header field",
    "4.9.3's RemotingCommand#decodeCommandCustomHeader throws 'the custom field <x> is "
    "null' inside its own catch (Throwable) and only logs it: the field stays null and the "
    "request fails later with a NullPointerException (remark: the JDK's own text and a "
    "source line), or goes on with null (QUERY_CONSUMER_OFFSET without consumerGroup "
    'answers for group "null"). mqlab refuses such a request up front with SYSTEM_ERROR '
    "and the check's own remark naming the field; masked only when mqlab's answer is "
    "that refusal and the field really is missing from the request",
    lambda d, real, mq: False,
)
RULES.append(MISSING_FIELD_RULE)

#: Not a field rule either: it looks at the request (see :func:`cpp_boolean_1`).
CPP_BOOLEAN_RULE = Rule(
    "cpp-boolean-1",
    'the whole answer to a send whose boolean header field (batch, unitMode) is "1"',
    "the RocketMQ C++ client (rocketmq-client-cpp, the Python client's core) writes "
    'booleans as "1"/"0" and sends a batch as SEND_MESSAGE with batch "1". Java reads '
    'fields with Boolean.parseBoolean, so "1" is false: the real broker stores the whole '
    "batch body as ONE message, and the C++ client's batches are silently broken. mqlab "
    'reads "1" as true, so the C++ client works against it (stores each message)',
    lambda d, real, mq: False,
)
RULES.append(CPP_BOOLEAN_RULE)
_BOOL_FIELDS = {10: ("batch", "unitMode"), 310: ("k", "m"), 320: ("k", "m")}


def cpp_boolean_1(request_code: int, request_ext: dict[str, str]) -> bool:
    """Whether the ``cpp-boolean-1`` rule covers this request (see its ``why``)."""
    return any(request_ext.get(f) == "1" for f in _BOOL_FIELDS.get(request_code, ()))


RULES_BY_NAME = {r.name: r for r in RULES}
_CUSTOM_FIELD_NULL = re.compile(r"^the custom field <(\w+)> is null$")


def missing_header_field(
    request_ext: dict[str, str], a: RemotingCommand | None, b: RemotingCommand | None
) -> bool:
    """Whether the ``missing-header-field`` rule covers this exchange (see its ``why``)."""
    if a is None or b is None or b.code != 1 or b.remark is None:
        return False
    m = _CUSTOM_FIELD_NULL.match(b.remark)
    if m is None or m.group(1) in request_ext:
        return False
    return True


def classify(
    diffs: list[Diff], real: SideEnv, mq: SideEnv, *, whole_answer_rule: str | None = None
) -> list[Diff]:
    """Give each diff the first rule that masks it (``rule`` stays None if none does);
    ``whole_answer_rule`` (decided from the exchange) masks every diff."""
    if whole_answer_rule is not None:
        for d in diffs:
            d.rule = whole_answer_rule
        return diffs
    for d in diffs:
        for r in RULES:
            if r.masks(d, real, mq):
                d.rule = r.name
                break
    return diffs


# -- value comparison --------------------------------------------------------------------------
def _norm_key(k: Any) -> str:
    return str(k)


def compare_values(path: str, a: Any, b: Any, out: list[Diff]) -> None:
    """Structural comparison of parsed JSON: map keys as strings (fastjson writes integer
    keys unquoted), map order ignored (``HashMap`` order), list order kept."""
    if isinstance(a, dict) and isinstance(b, dict):
        na = {_norm_key(k): v for k, v in a.items()}
        nb = {_norm_key(k): v for k, v in b.items()}
        for k in sorted(set(na) | set(nb)):
            p = f"{path}.{k}"
            if k not in na:
                out.append(Diff(p, "<absent>", nb[k]))
            elif k not in nb:
                out.append(Diff(p, na[k], "<absent>"))
            else:
                compare_values(p, na[k], nb[k], out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(Diff(f"{path}.length", len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            compare_values(f"{path}[{i}]", x, y, out)
        return
    if a != b or type(a) is not type(b):
        out.append(Diff(path, a, b))


MESSAGE_FIELDS = (
    ("storeSize", "store_size"), ("bodyCRC", "body_crc"), ("queueId", "queue_id"),
    ("flag", "flag"), ("queueOffset", "queue_offset"), ("commitLogOffset", "commit_log_offset"),
    ("sysFlag", "sys_flag"), ("bornTimestamp", "born_timestamp"), ("bornHost", "born_host"),
    ("storeTimestamp", "store_timestamp"), ("storeHost", "store_host"),
    ("reconsumeTimes", "reconsume_times"),
    ("preparedTransactionOffset", "prepared_transaction_offset"),
    ("body", "body"), ("topic", "topic"), ("msgId", "msg_id"),
)  # fmt: skip


def message_fields(m: Any) -> dict[str, Any]:
    """A decoded stored message as an ordered ``{field: value}`` (properties as a list
    of ``[name, value]`` pairs in stored order)."""
    d = {name: getattr(m, attr) for name, attr in MESSAGE_FIELDS}
    d["properties"] = [list(kv) for kv in m.properties.items()]
    return d


def compare_messages(prefix: str, ma: list[Any], mb: list[Any], out: list[Diff]) -> None:
    if len(ma) != len(mb):
        out.append(Diff(f"{prefix}.count", len(ma), len(mb)))
    for i, (x, y) in enumerate(zip(ma, mb, strict=False)):
        fx, fy = message_fields(x), message_fields(y)
        hosts = (fx.get("bornHost"), fy.get("bornHost"))  # for broker-born-timestamp
        for k in fx:
            if fx[k] != fy[k]:
                out.append(Diff(f"msg[{i}].{k}", fx[k], fy[k], born_hosts=hosts))


def _json_or_none(body: bytes | None) -> Any:
    if not body:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text[:1] not in ("{", "["):
        return None
    try:
        return loads(text)
    except ValueError:
        return None


def compare_bodies(kind: str, request_code: int, a: RemotingCommand, b: RemotingCommand,
                   out: list[Diff]) -> None:  # fmt: skip
    ba, bb = a.body, b.body
    if not ba and not bb:
        return
    if kind == "auto" and request_code == 11 and a.code == 0 and b.code == 0:
        kind = "messages"
    if kind == "properties":
        pa, pb = parse_properties_body(ba), parse_properties_body(bb)
        ka, kb = [k for k, _ in pa], [k for k, _ in pb]
        if ka != kb:
            out.append(Diff("body.keys", ",".join(ka), ",".join(kb)))
        da, db = dict(pa), dict(pb)
        for k in ka + [k for k in kb if k not in da]:
            if da.get(k) != db.get(k):
                out.append(Diff(f"body.{k}", da.get(k, "<absent>"), db.get(k, "<absent>")))
        return
    if kind == "messages":
        try:
            ma, mb = decodes(ba or b""), decodes(bb or b"")
        except MessageDecodeError as e:
            out.append(Diff("body", f"undecodable: {e}", "-"))
            return
        compare_messages("body.messages", ma, mb, out)
        return
    if kind in ("auto", "json"):
        ja, jb = _json_or_none(ba), _json_or_none(bb)
        if ja is not None and jb is not None:
            compare_values("body", ja, jb, out)
            return
    if ba != bb:
        da = ba.decode("utf-8", "replace") if ba else None
        db = bb.decode("utf-8", "replace") if bb else None
        out.append(Diff("body", da, db))


def compare_answers(
    request_code: int, a: RemotingCommand | None, b: RemotingCommand | None,
    err_a: str | None, err_b: str | None, body_kind: str = "auto",
) -> list[Diff]:  # fmt: skip
    """Every difference between the real answer ``a`` and mqlab's ``b``."""
    out: list[Diff] = []
    if a is None or b is None:
        # No answer within the step's timeout on BOTH sides is the same behaviour (the real
        # name server does not answer an unknown code at all). Anything else without an
        # answer (a transport error, one side timing out, a step not sent) is never
        # "identical".
        if a is None and b is None and _timed_out(err_a) and _timed_out(err_b):
            return out
        # Nothing listening at the address on either side (a killed broker's) is the same
        # behaviour too: the connect is refused before any request is written.
        if a is None and b is None and _refused(err_a) and _refused(err_b):
            return out
        out.append(Diff("answer", err_a or _short(a), err_b or _short(b)))
        return out
    if a.code != b.code:
        out.append(Diff("code", a.code, b.code))
    if a.remark != b.remark:
        out.append(Diff("remark", a.remark, b.remark))
    ea, eb = a.ext_fields or {}, b.ext_fields or {}
    for k in sorted(set(ea) | set(eb)):
        if ea.get(k) != eb.get(k):
            out.append(Diff(f"ext.{k}", ea.get(k, "<absent>"), eb.get(k, "<absent>")))
    compare_bodies(body_kind, request_code, a, b, out)
    return out


def _timed_out(err: str | None) -> bool:
    """The raw client's error for a request that got no answer in time (``repr`` of the
    ``TimeoutError`` it raised)."""
    return err is not None and err.startswith("TimeoutError")


def _refused(err: str | None) -> bool:
    """The raw client's error for a request it could not send: the connect was refused."""
    return err is not None and err.startswith("not sent: ConnectionRefusedError")


def _short(c: RemotingCommand | None) -> str:
    if c is None:
        return "<no answer>"
    return f"code={c.code}"
