"""Coverage as a number (``mqlab.conformance.coverage``) and a report page that does not
change with the run's timing (``mqlab.conformance.report``). No Java needed."""

from __future__ import annotations

from pathlib import Path

from mqlab.broker.admin_broker_processor import AdminBrokerProcessor
from mqlab.conformance import coverage
from mqlab.conformance.compare import SideEnv
from mqlab.conformance.coverage import (
    DISPATCHED,
    LEFT_OUT,
    coverage_table,
    mqlab_handlers,
    summary_line,
    uncovered,
)
from mqlab.conformance.engine import Row, Run, _request_row
from mqlab.conformance.raw_tcp import Answer
from mqlab.conformance.report import render_report
from mqlab.conformance.scenario import Scenario, Step
from mqlab.namesrv.namesrv_controller import NamesrvController
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand

README = Path(__file__).resolve().parents[2] / "README.md"

#: BrokerController#registerProcessor (rocketmq-all-4.9.3): 16 codes.
GOLDEN_REGISTERED = {10, 310, 320, 36, 11, 324, 325, 12, 33, 34, 35, 46, 38, 15, 14, 37}
#: AdminBrokerProcessor#processRequest's 42 case labels (rocketmq-all-4.9.3), source order.
GOLDEN_ADMIN = [
    17, 215, 21, 25, 26, 29, 30, 31, 32, 28, 41, 42, 200, 201, 207, 202, 203, 204, 208, 43,
    45, 222, 223, 300, 301, 303, 305, 306, 316, 307, 308, 309, 314, 315, 317, 321, 50, 51,
    52, 53, 323, 54,
]  # fmt: skip
#: The name server's DefaultRequestProcessor#processRequest, 20 case labels (4.9.3);
#: ClusterTestRequestProcessor overrides getRouteInfoByTopic only and adds none.
GOLDEN_NAMESRV = [
    100, 101, 102, 322, 103, 104, 105, 106, 205, 327, 206, 216, 219, 224, 304, 311, 312, 313,
    318, 319,
]  # fmt: skip

#: The ratchet: dispatched codes no conformance row sends yet and not left out on purpose.
#: A merge that covers a code removes it here; this set must never grow.
KNOWN_GAPS: set[int] = set()


def test_dispatched_codes_are_exactly_4_9_3s():
    broker = [d.code for d in DISPATCHED if d.side == "broker"]
    namesrv = [d.code for d in DISPATCHED if d.side == "namesrv"]
    assert set(broker[:16]) == GOLDEN_REGISTERED and broker[16:] == GOLDEN_ADMIN
    assert namesrv == GOLDEN_NAMESRV
    assert (len(DISPATCHED), len(set(broker)), len(set(namesrv))) == (78, 58, 20)
    assert {d.processor for d in DISPATCHED if d.code in (324, 325)} == {"ReplyMessageProcessor"}
    assert {d.processor for d in DISPATCHED if d.code in GOLDEN_ADMIN} == {"AdminBrokerProcessor"}


def test_handled_comes_from_mqlabs_own_dispatch(monkeypatch):
    handlers = mqlab_handlers()
    assert handlers[("broker", 10)] == "SendMessageProcessor"
    assert handlers[("broker", 30)] == "AdminBrokerProcessor"  # GET_MAX_OFFSET
    assert handlers[("namesrv", 105)] == "NamesrvController.get_route_info_by_topic"

    # The admin processor's default branch for GET_MAX_OFFSET (30): now "not handled".
    original = AdminBrokerProcessor.process_request

    def without_30(self, channel, request):
        if request.code == 30:
            return RemotingCommand.create_response(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED, " request type 30 not supported", {}
            )
        return original(self, channel, request)

    monkeypatch.setattr(AdminBrokerProcessor, "process_request", without_30)
    init = NamesrvController.__init__

    def init_without_105(self, *a, **kw):
        init(self, *a, **kw)
        del self._processors[105]

    monkeypatch.setattr(NamesrvController, "__init__", init_without_105)
    handlers = mqlab_handlers()
    assert handlers[("broker", 30)] is None and handlers[("namesrv", 105)] is None
    assert handlers[("broker", 31)] == "AdminBrokerProcessor"


def _scenario(*steps: Step) -> Scenario:
    return Scenario("g", "sc", list(steps))


def test_rows_covered_and_the_summary_line():
    handlers = {(d.side, d.code): None for d in DISPATCHED}
    scenarios = [
        _scenario(Step("send", "SEND_MESSAGE_V2"), Step("route", 105, to="namesrv")),
        # the wrong side: 105 sent to the broker does not cover the name server's 105
        Scenario("g", "sc2", [Step("route_on_broker", 105), Step("route2", 105, to="namesrv")]),
    ]
    table = coverage_table(scenarios, handlers)
    by_code = {(r.side, r.code): r for r in table}
    assert by_code[("broker", 310)].rows == ["sc/send"]
    assert by_code[("namesrv", 105)].rows == ["sc/route", "sc2/route2"]
    assert summary_line(table) == (
        "codes: 78 dispatched by 4.9.3, 2 covered by conformance rows, 0 left out on purpose"
    )
    assert len(uncovered(table)) == 76


def test_ratchet_uncovered_codes_are_the_known_gaps():
    """Every code not covered by a row nor left out on purpose is in KNOWN_GAPS, and
    nothing else is: covering a code means removing it from KNOWN_GAPS."""
    table = coverage_table()
    gaps = {r.code for r in uncovered(table)}
    assert gaps == KNOWN_GAPS
    t, c, x = coverage.tally(table)
    assert (t, c + x + len(gaps)) == (78, 78)


def test_left_out_codes_are_dispatched_and_explained_in_the_readme():
    section = README.read_text(encoding="utf-8").split("### What the model leaves out", 1)[1]
    section = section.split("\n### ", 1)[0]
    codes = {d.code for d in DISPATCHED}
    for code, reason in LEFT_OUT.items():
        assert code in codes and reason
        assert reason in section, f"code {code}: its reason is not in the README"
    if not LEFT_OUT:  # the section says so, and where the table is
        assert "is left out on purpose" in section and "conformance --codes" in section


# -- a report that only the behaviour changes ------------------------------------------------
REAL = SideEnv("127.0.0.1:10911", "127.0.0.1:9876", ("127.0.0.1:50001",))
MQ = SideEnv("127.0.0.1:20911", "127.0.0.1:19876", ("127.0.0.1:50002",))


def _answer(ext: dict[str, str], elapsed: float) -> Answer:
    return Answer(RemotingCommand.create_response(0, None, ext), elapsed)


def _run(store_ms: tuple[int, int], elapsed: tuple[float, float], seconds: float) -> Run:
    """Two requests: GET_EARLIEST_MSG_STORETIME (each broker's clock) and a timed one."""
    sc = _scenario(
        Step("earliest", "GET_EARLIEST_MSG_STORETIME", {"topic": "t", "queueId": "0"}),
        Step("max", "GET_MAX_OFFSET", {"topic": "t", "queueId": "0"}, timing=True),
    )
    rows = [
        _request_row(sc, sc.steps[0], _answer({"timestamp": str(store_ms[0])}, 3.0),
                     _answer({"timestamp": str(store_ms[1])}, 4.0), (REAL, MQ)),
        _request_row(sc, sc.steps[1], _answer({"offset": "3"}, elapsed[0]),
                     _answer({"offset": "3"}, elapsed[1]), (REAL, MQ)),
    ]  # fmt: skip
    return Run(rows, seconds)


def test_report_is_the_same_bytes_when_only_timing_differs():
    """One run where both brokers stored in the same millisecond and the timed step took
    120 / 130 ms in 41 s; another with different clocks, 150 / 90 ms, 39 s: same page."""
    a = _run((1764150000123, 1764150000123), (120.0, 130.0), 41.2)
    b = _run((1764150000123, 1764150000456), (150.0, 90.0), 38.7)
    assert [r.verdict for r in a.rows] == [r.verdict for r in b.rows]
    assert a.rows[0].verdict == "explained: store-timestamp"
    assert (a.rows[1].timing, b.rows[1].timing) == ("120 / 130 ms", "150 / 90 ms")
    codes = coverage_table([], {(d.side, d.code): None for d in DISPATCHED})
    page_a = render_report(a, real_label="x", groups_doc={"g": "doc"}, codes=codes)
    page_b = render_report(b, real_label="x", groups_doc={"g": "doc"}, codes=codes)
    assert page_a == page_b
    assert "41 s" not in page_a and "39 s" not in page_b  # no duration
    assert "120 / 130" not in page_a and "150 / 90" not in page_b  # no elapsed times
    assert page_a.rstrip().endswith(
        "conformance: 2 requests, 1 identical, 1 explained, 0 unexplained\n"
        "codes: 78 dispatched by 4.9.3, 0 covered by conformance rows, 0 left out on purpose"
    )


def test_unequal_clocks_outside_the_window_stay_unexplained():
    """The clock rule still needs both values set and within 120 s."""
    far = _run((1764150000123, 1764150000123 + 200_000), (1.0, 1.0), 1.0)
    assert far.rows[0].verdict == "UNEXPLAINED"
    row: Row = far.rows[1]
    assert row.verdict == "identical" and row.what.endswith("[timed]")


def test_equal_clock_fields_of_stored_entries_count_as_explained():
    """A commit-log entry stored in the same millisecond on both sides, and an
    OFFSET_MOVED_EVENT the brokers wrote themselves in the same millisecond: explained by
    their clock rules all the same (engine.CHANCE_RULES)."""
    from mqlab.conformance.engine import _clock_diffs, _entry_leaves
    from mqlab.conformance.stored import LAYOUT

    base = dict.fromkeys(LAYOUT, 0)
    a = {**base, "bornHost": REAL.broker_addr, "storeHost": REAL.broker_addr,
         "storeTimestamp": 1764150000123, "bornTimestamp": 1764150000120}  # fmt: skip
    b = {**a, "bornHost": MQ.broker_addr, "storeHost": MQ.broker_addr}
    diffs = _clock_diffs(_entry_leaves(3, a, b), (REAL, MQ))
    assert [(d.path, d.real, d.mqlab, d.rule) for d in diffs] == [
        ("msg[3].bornTimestamp", 1764150000120, 1764150000120, "broker-born-timestamp"),
        ("msg[3].storeTimestamp", 1764150000123, 1764150000123, "store-timestamp"),
    ]
    # born on the harness (a client's bornHost): the born time is the scenario's, compared
    client = {**a, "bornHost": "127.0.0.1:50001"}
    diffs = _clock_diffs(_entry_leaves(0, client, {**client, "bornHost": "127.0.0.1:50002"}),
                         (REAL, MQ))  # fmt: skip
    assert [d.path for d in diffs] == ["msg[0].storeTimestamp"]


def test_equal_sampled_tps_counts_as_explained():
    """Two brokers whose 10 s samples hold the same figure by chance: the tps stays explained
    by sampled-tps (engine.CHANCE_RULES), so the report does not move between runs."""
    from mqlab.conformance.engine import _clock_diffs

    path = "body.consumeStatsList[5].cf_stats_cg[0].consumeTps"
    diffs = _clock_diffs([(path, 0.15, None)], (REAL, MQ))
    assert [(d.path, d.rule) for d in diffs] == [(path, "sampled-tps")]
    assert _clock_diffs([(path, 0.0, None)], (REAL, MQ)) == []  # 0 on both: compared as is
