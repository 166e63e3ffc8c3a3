"""Coverage as a number: every request code RocketMQ 4.9.3 dispatches, against mqlab and the rows.

One :class:`CodeRow` per request code that the 4.9.3 name server or broker dispatches to a
handler. The lists come from the source at tag ``rocketmq-all-4.9.3``:

* broker, registered processors: ``BrokerController#registerProcessor``
  (broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java): SendMessageProcessor
  (10, 310, 320, 36), PullMessageProcessor (11), ReplyMessageProcessor (324, 325),
  QueryMessageProcessor (12, 33), ClientManageProcessor (34, 35, 46), ConsumerManageProcessor
  (38, 15, 14), EndTransactionProcessor (37); the same codes on the fast (VIP) port;
* broker, the default processor: every ``case RequestCode.X`` of
  ``AdminBrokerProcessor#processRequest``
  (broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java,
  42 cases; ``default`` answers REQUEST_CODE_NOT_SUPPORTED " request type N not supported");
* name server: every ``case RequestCode.X`` of ``DefaultRequestProcessor#processRequest``
  (namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java,
  20 cases; ``default`` answers nothing at all). ``NamesrvController#registerProcessor``
  installs ``ClusterTestRequestProcessor`` instead when ``clusterTest`` is on: it extends
  DefaultRequestProcessor and only overrides ``getRouteInfoByTopic`` (105), so it adds no code.

For each code the table says whether mqlab handles it, computed from mqlab's own dispatch
(the broker's ``processor_table`` and its default ``AdminBrokerProcessor``, the name server's
processor table; see :func:`mqlab_handlers`), and which conformance rows send it (computed
from the scenarios' steps, :func:`exercising_rows`). A code is *covered* when at least one
row sends it to its side. :data:`LEFT_OUT` holds the codes left out on purpose, each with its
reason (the same reason is in the README's "What the model leaves out"). The harness prints
``codes: T dispatched by 4.9.3, C covered by conformance rows, X left out on purpose``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mqlab.remoting.codes import RequestCode

__all__ = [
    "BROKER_REGISTERED",
    "ADMIN_BROKER_CASES",
    "NAMESRV_CASES",
    "DISPATCHED",
    "LEFT_OUT",
    "CodeRow",
    "mqlab_handlers",
    "exercising_rows",
    "coverage_table",
    "tally",
    "summary_line",
    "markdown_table",
    "text_table",
]

RC = RequestCode

#: ``BrokerController#registerProcessor`` (rocketmq-all-4.9.3): code -> Java processor.
BROKER_REGISTERED: dict[int, str] = {
    RC.SEND_MESSAGE: "SendMessageProcessor",
    RC.SEND_MESSAGE_V2: "SendMessageProcessor",
    RC.SEND_BATCH_MESSAGE: "SendMessageProcessor",
    RC.CONSUMER_SEND_MSG_BACK: "SendMessageProcessor",
    RC.PULL_MESSAGE: "PullMessageProcessor",
    RC.SEND_REPLY_MESSAGE: "ReplyMessageProcessor",
    RC.SEND_REPLY_MESSAGE_V2: "ReplyMessageProcessor",
    RC.QUERY_MESSAGE: "QueryMessageProcessor",
    RC.VIEW_MESSAGE_BY_ID: "QueryMessageProcessor",
    RC.HEART_BEAT: "ClientManageProcessor",
    RC.UNREGISTER_CLIENT: "ClientManageProcessor",
    RC.CHECK_CLIENT_CONFIG: "ClientManageProcessor",
    RC.GET_CONSUMER_LIST_BY_GROUP: "ConsumerManageProcessor",
    RC.UPDATE_CONSUMER_OFFSET: "ConsumerManageProcessor",
    RC.QUERY_CONSUMER_OFFSET: "ConsumerManageProcessor",
    RC.END_TRANSACTION: "EndTransactionProcessor",
}

#: The ``case`` labels of ``AdminBrokerProcessor#processRequest`` (rocketmq-all-4.9.3), in
#: source order; AdminBrokerProcessor is the broker's default processor.
ADMIN_BROKER_CASES: tuple[int, ...] = (
    RC.UPDATE_AND_CREATE_TOPIC, RC.DELETE_TOPIC_IN_BROKER, RC.GET_ALL_TOPIC_CONFIG,
    RC.UPDATE_BROKER_CONFIG, RC.GET_BROKER_CONFIG, RC.SEARCH_OFFSET_BY_TIMESTAMP,
    RC.GET_MAX_OFFSET, RC.GET_MIN_OFFSET, RC.GET_EARLIEST_MSG_STORETIME,
    RC.GET_BROKER_RUNTIME_INFO, RC.LOCK_BATCH_MQ, RC.UNLOCK_BATCH_MQ,
    RC.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, RC.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
    RC.DELETE_SUBSCRIPTIONGROUP, RC.GET_TOPIC_STATS_INFO, RC.GET_CONSUMER_CONNECTION_LIST,
    RC.GET_PRODUCER_CONNECTION_LIST, RC.GET_CONSUME_STATS, RC.GET_ALL_CONSUMER_OFFSET,
    RC.GET_ALL_DELAY_OFFSET, RC.INVOKE_BROKER_TO_RESET_OFFSET,
    RC.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, RC.QUERY_TOPIC_CONSUME_BY_WHO,
    RC.REGISTER_FILTER_SERVER, RC.QUERY_CONSUME_TIME_SPAN, RC.GET_SYSTEM_TOPIC_LIST_FROM_BROKER,
    RC.CLEAN_EXPIRED_CONSUMEQUEUE, RC.CLEAN_UNUSED_TOPIC, RC.GET_CONSUMER_RUNNING_INFO,
    RC.QUERY_CORRECTION_OFFSET, RC.CONSUME_MESSAGE_DIRECTLY, RC.CLONE_GROUP_OFFSET,
    RC.VIEW_BROKER_STATS_DATA, RC.GET_BROKER_CONSUME_STATS, RC.QUERY_CONSUME_QUEUE,
    RC.UPDATE_AND_CREATE_ACL_CONFIG, RC.DELETE_ACL_CONFIG, RC.GET_BROKER_CLUSTER_ACL_INFO,
    RC.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, RC.RESUME_CHECK_HALF_MESSAGE,
    RC.GET_BROKER_CLUSTER_ACL_CONFIG,
)  # fmt: skip

#: The ``case`` labels of the name server's ``DefaultRequestProcessor#processRequest``
#: (rocketmq-all-4.9.3), in source order.
NAMESRV_CASES: tuple[int, ...] = (
    RC.PUT_KV_CONFIG, RC.GET_KV_CONFIG, RC.DELETE_KV_CONFIG, RC.QUERY_DATA_VERSION,
    RC.REGISTER_BROKER, RC.UNREGISTER_BROKER, RC.GET_ROUTEINFO_BY_TOPIC,
    RC.GET_BROKER_CLUSTER_INFO, RC.WIPE_WRITE_PERM_OF_BROKER, RC.ADD_WRITE_PERM_OF_BROKER,
    RC.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, RC.DELETE_TOPIC_IN_NAMESRV,
    RC.GET_KVLIST_BY_NAMESPACE, RC.GET_TOPICS_BY_CLUSTER, RC.GET_SYSTEM_TOPIC_LIST_FROM_NS,
    RC.GET_UNIT_TOPIC_LIST, RC.GET_HAS_UNIT_SUB_TOPIC_LIST,
    RC.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, RC.UPDATE_NAMESRV_CONFIG, RC.GET_NAMESRV_CONFIG,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Dispatched:
    """One code 4.9.3 dispatches: its number, ``"broker"`` or ``"namesrv"``, the Java processor."""

    code: int
    side: str
    processor: str


#: Every dispatched code: the broker's registered ones, its default processor's, the name
#: server's (a code is on one side only).
DISPATCHED: tuple[Dispatched, ...] = (
    *(Dispatched(int(c), "broker", p) for c, p in BROKER_REGISTERED.items()),
    *(Dispatched(int(c), "broker", "AdminBrokerProcessor") for c in ADMIN_BROKER_CASES),
    *(Dispatched(int(c), "namesrv", "DefaultRequestProcessor") for c in NAMESRV_CASES),
)

#: Codes left out on purpose: code -> why a user cannot notice their absence. Each reason is
#: also in the README's "What the model leaves out".
LEFT_OUT: dict[int, str] = {}


@dataclass(slots=True)
class CodeRow:
    """One dispatched code: what 4.9.3 does with it, what mqlab does, which rows send it."""

    code: int
    name: str
    side: str
    processor: str
    handled_by: str | None  # mqlab's handler (class or method name), None = not handled
    rows: list[str] = field(default_factory=list)  # "scenario/step" of the rows sending it
    reason: str = ""  # why it is left out on purpose ("" = it is not)

    @property
    def covered(self) -> bool:
        return bool(self.rows)

    @property
    def left_out(self) -> bool:
        return bool(self.reason)


def _name(code: int) -> str:
    try:
        return RequestCode(code).name
    except ValueError:
        return f"code {code}"


def mqlab_handlers() -> dict[tuple[str, int], str | None]:
    """``(side, code) -> mqlab's handler name`` (None: not handled), for every dispatched code.

    Computed from mqlab's own dispatch on a throwaway name server and broker on the
    simulation driver: a broker code is handled when the broker's ``processor_table`` holds
    it, or when its default processor (``AdminBrokerProcessor``) answers anything but
    REQUEST_CODE_NOT_SUPPORTED " request type N not supported" to a request of that code
    with only its mandatory header fields (its ``default`` branch, as in 4.9.3); a
    name-server code when the name server's
    processor table holds it (4.9.3 answers nothing for any other code).
    """
    from mqlab.broker.broker_controller import REQUIRED_EXT_FIELDS, BrokerController
    from mqlab.broker.config import BrokerConfig
    from mqlab.namesrv.namesrv_controller import NamesrvController
    from mqlab.remoting.codes import ResponseCode
    from mqlab.runtime.raw_client import RawClient
    from mqlab.runtime.sim import SimDriver
    from mqlab.store.config import MessageStoreConfig

    out: dict[tuple[str, int], str | None] = {}
    with tempfile.TemporaryDirectory(prefix="mqlab-coverage-") as tmp:
        d = SimDriver(seed=1)
        namesrv = NamesrvController()
        d.add_node(namesrv)
        store = MessageStoreConfig(store_path_root_dir=str(Path(tmp) / "store"))
        broker = BrokerController(BrokerConfig(), store)
        d.add_node(broker)
        client = RawClient("coverage-probe")
        d.add_node(client)
        d.run_until_idle()
        try:
            for dc in DISPATCHED:
                key = (dc.side, dc.code)
                if dc.side == "namesrv":
                    fn = namesrv._processors.get(dc.code)
                    out[key] = None if fn is None else f"NamesrvController.{fn.__name__}"
                    continue
                proc = broker.processor_table.get(dc.code)
                if proc is not None:
                    out[key] = type(proc).__name__
                    continue
                # the @CFNotNull fields filled in, so the request reaches the dispatch
                ext = {name: "0" for name in REQUIRED_EXT_FIELDS.get(dc.code, ())}
                call = client.send(broker.broker_addr, dc.code, ext, None, timeout_ms=3000)
                try:
                    d.run_until_idle()
                except Exception:  # a handler was reached and choked on the "0" fields
                    out[key] = type(broker.admin_broker_processor).__name__
                    continue
                not_supported = (
                    call.response is not None
                    and call.response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
                    and call.response.remark == f" request type {dc.code} not supported"
                )
                out[key] = None if not_supported else type(broker.admin_broker_processor).__name__
        finally:
            d.stop_node(broker.name)
    return out


def exercising_rows(scenarios: Iterable) -> dict[tuple[str, int], list[str]]:
    """``(side, code) -> ["scenario/step", ...]``: the request steps of ``scenarios``."""
    from mqlab.conformance.scenario import Step, code_of

    out: dict[tuple[str, int], list[str]] = {}
    for sc in scenarios:
        for st in sc.steps:
            if isinstance(st, Step):
                out.setdefault((st.to, code_of(st.code)), []).append(f"{sc.name}/{st.name}")
    return out


def coverage_table(
    scenarios: Sequence | None = None,
    handlers: dict[tuple[str, int], str | None] | None = None,
) -> list[CodeRow]:
    """One :class:`CodeRow` per dispatched code, in :data:`DISPATCHED` order.

    ``scenarios`` defaults to every scenario (``scenarios.ALL``); ``handlers`` to
    :func:`mqlab_handlers`.
    """
    if scenarios is None:
        from mqlab.conformance.scenarios import ALL

        scenarios = ALL
    if handlers is None:
        handlers = mqlab_handlers()
    rows = exercising_rows(scenarios)
    return [
        CodeRow(
            dc.code,
            _name(dc.code),
            dc.side,
            dc.processor,
            handlers.get((dc.side, dc.code)),
            rows.get((dc.side, dc.code), []),
            LEFT_OUT.get(dc.code, ""),
        )  # fmt: skip
        for dc in DISPATCHED
    ]


def tally(table: Sequence[CodeRow]) -> tuple[int, int, int]:
    """``(T, C, X)``: dispatched, covered by at least one row, left out on purpose."""
    return len(table), sum(1 for r in table if r.covered), sum(1 for r in table if r.left_out)


def summary_line(table: Sequence[CodeRow]) -> str:
    t, c, x = tally(table)
    return (
        f"codes: {t} dispatched by 4.9.3, {c} covered by conformance rows, {x} left out on purpose"
    )


def uncovered(table: Sequence[CodeRow]) -> list[CodeRow]:
    """The gaps: codes neither covered by a row nor left out on purpose."""
    return [r for r in table if not r.covered and not r.left_out]


def _rows_text(rows: list[str], limit: int) -> str:
    if not rows:
        return "—"
    head = ", ".join(rows[:limit])
    return head + (f" (+{len(rows) - limit} more)" if len(rows) > limit else "")


def markdown_table(table: Sequence[CodeRow]) -> list[str]:
    """The report's section: the summary line, then one table row per code."""
    gaps = uncovered(table)
    lines = [
        "## Request codes",
        "",
        "Every request code the RocketMQ 4.9.3 broker and name server dispatch "
        "(`BrokerController#registerProcessor`, `AdminBrokerProcessor#processRequest`, the "
        "name server's `DefaultRequestProcessor#processRequest`; `ClusterTestRequestProcessor` "
        "adds none), whether mqlab handles it (from mqlab's own dispatch tables), and the "
        "conformance rows that send it. A code is covered when at least one row sends it.",
        "",
        f"**{summary_line(table)}**"
        + (f"; not yet covered: {', '.join(f'{r.code}' for r in gaps)}." if gaps else "."),
        "",
        "| code | name | side | 4.9.3 processor | handled by mqlab | rows | left out because |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r.code} | {r.name} | {r.side} | {r.processor} | {r.handled_by or 'no'} | "
            f"{_rows_text(r.rows, 4)} | {r.reason} |"
        )
    return lines


def text_table(table: Sequence[CodeRow]) -> str:
    """The table for the console (``python -m mqlab conformance --codes``)."""
    out = []
    for r in table:
        mark = "covered" if r.covered else ("left out" if r.left_out else "NOT COVERED")
        out.append(
            f"{r.code:>4} {r.name:<36} {r.side:<7} {r.processor:<24} "
            f"mqlab={r.handled_by or 'no':<24} {mark:<11} {_rows_text(r.rows, 2)}"
            + (f"  [{r.reason}]" if r.reason else "")
        )
    gaps = uncovered(table)
    out.append(f"not covered: {' '.join(str(r.code) for r in gaps) or 'none'}")
    out.append(summary_line(table))
    return "\n".join(out)
