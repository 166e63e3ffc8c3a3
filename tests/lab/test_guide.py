"""The workshop guide is tested like the lessons: every number and name it states about a lesson
is checked against what the lesson's code produces (issue 28).

``notebooks/README.md`` has a table with one row per lesson ("what it teaches") and a table of
the lessons that take longer headless. Each fact below is one phrase of a row, rendered from
what the code computes (a default the lesson shows, a step count of mechanisms.md, lesson 11's
searches); the row must contain that exact phrase. After the facts are taken out, a row must
hold no digit: a number the guide states without a fact here fails the test, and so does a
lesson whose output changed. A name in backticks must be a fact, or occur in the lesson's source
(``lessons/NN_*.md``) or scaffolding (``mqlab/lab/lessons/lessonNN.py``).

Mirrors no RocketMQ class: test of documentation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from mqlab.acl.acl_file_watch_service import WATCH_INTERVAL
from mqlab.broker.config import BrokerConfig
from mqlab.client.allocate import AllocateMessageQueueAveragely
from mqlab.client.client_config import ClientConfig
from mqlab.client.consumer import default_mq_push_consumer_pull as pull_loop
from mqlab.client.consumer.default_mq_push_consumer import DefaultMQPushConsumer
from mqlab.client.consumer.default_mq_push_consumer_consume import DEFAULT_MAX_RECONSUME_TIMES
from mqlab.client.consumer.rebalance_service import WAIT_INTERVAL
from mqlab.client.producer.default_mq_producer import DefaultMQProducer
from mqlab.common.message import MessageQueue
from mqlab.common.message_decoder import calc_msg_length
from mqlab.common.perm_name import PermName
from mqlab.remoting.codes import ResponseCode
from mqlab.store import commit_log
from mqlab.store.config import MessageStoreConfig

pytestmark = pytest.mark.slow  # lesson 11's facts come from its two searches

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "notebooks" / "README.md"
MECHANISMS = ROOT / "notebooks" / "mechanisms.md"


# -- reading the guide --------------------------------------------------------------------------
def _table_rows(text: str, first_header: str) -> dict[str, list[str]]:
    """The rows of the Markdown table whose header starts with ``| first_header |``, by their
    first cell."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


@cache
def lesson_rows() -> dict[str, str]:
    """Each lesson's "what it teaches" cell, by lesson number ("00" … "13")."""
    return {k: cells[2] for k, cells in _table_rows(GUIDE.read_text(), "#").items()}


@cache
def headless_rows() -> dict[str, list[str]]:
    """The lessons that take longer headless: number → [time, why]."""
    return _table_rows(GUIDE.read_text(), "lesson")


def mechanism_steps(heading: str) -> list[int]:
    """The step numbers of the first table under ``heading`` in mechanisms.md."""
    text = MECHANISMS.read_text()
    part = text[text.index(heading) + len(heading) :]
    steps: list[int] = []
    for line in part.splitlines()[1:]:
        if line.startswith("#"):
            break
        m = re.match(r"\| (\d+) \|", line)
        if m:
            steps.append(int(m.group(1)))
    return steps


def lesson_source(n: str) -> str:
    (src,) = (ROOT / "lessons").glob(f"{n}_*.md")
    return src.read_text() + (ROOT / "mqlab" / "lab" / "lessons" / f"lesson{n}.py").read_text()


# -- lesson 11: what its searches find -------------------------------------------------------------
def _l11_facts() -> list[str]:
    from mqlab.lab.lessons import lesson11 as L

    xs, result, at_persist = L.scenario(), L.search(), L.search(L.AT_PERSIST)
    rows = result.rows

    def keys(outcome: str) -> set[str]:
        return set() if outcome == "ok" else {p.split("=")[0] for p in outcome.split()}

    no_overlap = next(r for r in rows if keys(r.outcome) == {"dup:rebalance"})
    ((_, label),) = L.one_choice(str(no_overlap.schedule))  # 'consumer-2->broker-a 5 ms'
    ok = next(r for r in rows if r.outcome == "ok")
    dup2 = next(r for r in at_persist.rows if "dup:" in r.outcome)
    dups = int(next(p for p in dup2.outcome.split() if p.startswith("dup:")).split("=")[1])
    walks, missed, deep = L.walks(), L.missed(), L.deep_search()
    ov = next(r for r in deep.rows if r.outcome == missed[0])
    return [
        f"the depth-{L.bounds().depth} table is saturated, yet {walks.runs} random walks of depth "
        f"{L.WALK_DEPTH} (loaded from their record) find {len(missed)} "
        f"class{'es' * (len(missed) != 1)} it lacks (" + ", ".join(f"`{o}`" for o in missed) + ")",
        f"the search bounded by moves (`{L.DEEP_BOUNDS}`, {deep.runs} runs, loaded from its "
        f"record) finds {len(deep.rows)} classes, each within {deep.bounds.deviations} moves "
        f"(`{ov.outcome}` at `{ov.schedule}`)",
        f"depth {L.bounds().depth}",
        "latencies " + "/".join(map(str, xs.latencies)) + " ms",
        f"{len(rows)} outcome classes (" + ", ".join(f"`{r.outcome}`" for r in rows) + ")",
        f"{sum(any(k.startswith('dup:') for k in keys(r.outcome)) for r in rows)} with a duplicate",
        f"the one {label.split()[-2]} ms frame (`{no_overlap.schedule}`) that removes the overlap",
        f"the {len(L.one_choice(str(ok.schedule)))} slow frames (`{ok.schedule}`)",
        f"the one order choice (`{dup2.schedule}`: the offset query before the update) that "
        f"causes {dups} duplicates",
    ]


@cache
def _l14_search():
    from mqlab.lab.lessons import lesson14 as L

    return L.explore_partition()


@cache  # three tests of row 14 read them; the search runs once
def _l14_facts() -> list[str]:
    from mqlab.dledger.dledger_config import DLedgerConfig

    res = _l14_search()
    cut = next(r for r in res.rows if "truncated" in r.outcome)
    wait = DLedgerConfig.__dataclass_fields__["max_wait_ack_time_ms"].default
    return [
        f"`broker busy` after {wait} ms",
        f"({res.runs} runs, {len(res.rows)} classes)",
        f"the shortest schedule of `{cut.outcome}` replayed",
    ]


#: Per lesson, the phrases its row states, each rendered from what the code says.
FACTS: dict[str, Callable[[], list[str]]] = {
    "01": lambda: [
        f"`msgCheck` steps {min(s := mechanism_steps('### `msgCheck`'))}–{max(s)}",
        f"min({DefaultMQProducer('PG', None).default_topic_queue_nums}, "
        f"{BrokerConfig().default_topic_queue_nums}) queues",
        f"perm {(p := PermName.PERM_READ | PermName.PERM_WRITE | PermName.PERM_INHERIT)} → "
        f"{p & ~PermName.PERM_INHERIT}",
        f"TOPIC_NOT_EXIST ({ResponseCode.TOPIC_NOT_EXIST})",
    ],
    "02": lambda: [
        f"The {calc_msg_length(0, 0, 0, 0)} + body + topic + properties layout",
        _cq_unit(),
        f"the {commit_log.END_FILE_MIN_BLANK_LENGTH}-byte blank marker",
    ],
    "03": lambda: [
        f"the offset commit at step {max(mechanism_steps('## Pull processing'))}",
        f"OVERFLOW_ONE → {ResponseCode.PULL_NOT_FOUND}",
        f"OVERFLOW_BADLY → {ResponseCode.PULL_OFFSET_MOVED}",
    ],
    "04": lambda: [
        f"the {(c := _hold_check_ms(True)) // 1000} s check and the "
        f"{(s := pull_loop.BROKER_SUSPEND_MAX_TIME_MILLIS) // 1000} s suspend (answered "
        f"{s // 1000}–{(s + c) // 1000} s after parking)",
        f"gets {ResponseCode.PULL_RETRY_IMMEDIATELY}",
        f"short polling ({_hold_check_ms(False) // 1000} s)",
    ],
    "05": lambda: [
        f"every {WAIT_INTERVAL // 1000} s",
        f"a third consumer joining converges to {_third_consumer()}",
    ],
    "06": lambda: [
        f"the {(c := DefaultMQPushConsumer('CG', None)).pull_threshold_for_queue}-message / "
        f"{c.pull_threshold_size_for_queue} MiB / span-{c.consume_concurrently_max_span} "
        f"thresholds and the {pull_loop.PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL} ms retry",
    ],
    "07": lambda: [
        "delay levels 3, 4, 5 … = " + ", ".join(_delays()[2:5]) + " …",
        f"after {DEFAULT_MAX_RECONSUME_TIMES} retries",
    ],
    "08": lambda: [f"persist every {ClientConfig().persist_consumer_offset_interval // 1000} s"],
    "11": _l11_facts,
    "13": lambda: [
        f"steps {min(s := mechanism_steps('[PlainPermissionManager#validate]'))}–{max(s)}",
        f"looks every {WATCH_INTERVAL // 1000} s",
    ],
    "14": _l14_facts,
}


def _cq_unit() -> str:
    from mqlab.store import config

    return f"the {config._CQ_STORE_UNIT_SIZE}-byte consume-queue unit"


def _hold_check_ms(long_polling: bool) -> int:
    cfg = BrokerConfig()
    return 5000 if long_polling else cfg.short_polling_time_mills


def _third_consumer() -> str:
    n = DefaultMQProducer("PG", None).default_topic_queue_nums
    mqs = [MessageQueue("TopicTest", "broker-a", q) for q in range(n)]
    ids = ["c1", "c2", "c3"]
    strategy = AllocateMessageQueueAveragely()
    return "/".join(str(len(strategy.allocate("CG", c, mqs, ids))) for c in ids)


def _delays() -> list[str]:
    """The delay levels as the guide writes them: '10 s', '1 min', …"""
    unit = {"s": "s", "m": "min", "h": "h"}
    return [f"{d[:-1]} {unit[d[-1]]}" for d in MessageStoreConfig().message_delay_level.split()]


#: Names the guide writes with a placeholder ("group" for the consumer group's name).
PLACEHOLDERS = {"%RETRY%group": r"%RETRY%\w+", "%DLQ%group": r"%DLQ%\w+"}


# -- the tests -----------------------------------------------------------------------------------
def test_every_lesson_has_a_row():
    sources = sorted(p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md"))
    assert sorted(lesson_rows()) == sources


@pytest.mark.parametrize("n", sorted(FACTS))
def test_each_fact_the_guide_states_is_what_the_lesson_computes(n):
    row = lesson_rows()[n]
    for phrase in FACTS[n]():
        assert phrase in row, f"lesson {n}: the guide should say {phrase!r}; its row: {row}"


def _rest(n: str) -> str:
    """The row without its facts and its links' targets."""
    row = re.sub(r"\]\([^)]*\)", "]", lesson_rows()[n])
    for phrase in FACTS[n]() if n in FACTS else []:
        row = row.replace(phrase, " ")
    return row


@pytest.mark.parametrize("n", [f"{i:02d}" for i in range(15)])
def test_no_number_in_a_row_goes_unchecked(n):
    rest = _rest(n)
    numbers = re.findall(r"(?<![\w.])\d+(?:[.,]\d+)*(?!\w)", rest)  # not SEND_MESSAGE_V2's 2
    assert not numbers, f"lesson {n}: numbers no fact checks ({numbers}): {rest}"


@pytest.mark.parametrize("n", [f"{i:02d}" for i in range(15)])
def test_every_name_in_a_row_is_the_lessons(n):
    src = lesson_source(n)
    missing = [name for name in re.findall(r"`([^`]+)`", _rest(n))
               if not re.search(PLACEHOLDERS.get(name, re.escape(name)), src)]  # fmt: skip
    assert not missing, f"lesson {n}: the guide names {missing}, which the lesson never does"


def test_the_slow_lessons_are_the_ones_whose_code_runs_spark_or_a_search():
    """The headless table names exactly the lessons that start Spark or run an exhaustive
    search, with what the code says about them (lesson 11: its searches and their runs)."""
    from mqlab.lab.lessons import lesson11 as L

    heavy = set()
    for src in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.md")):
        text = src.read_text()
        if any(call in text for call in ("L.spark_session()", "L.search(", "L.explore_partition(")):
            heavy.add(src.name[:2])
    rows = headless_rows()
    assert set(rows) == heavy == {"09", "11", "14"}
    replays = lesson_source("14").count("L.replay(")
    assert rows["14"][1] == (
        "it builds a DLedger lab for each walk and exercise, each electing its first leader, "
        f"runs the partition search ({_l14_search().runs} runs) and replays {replays} of its "
        "schedules"
    )
    assert "it starts Spark" in rows["09"][1]
    searched = sorted(set(re.findall(r"L\.search\(([^)]*)\)", lesson_source("11"))))
    names = {L.SCENARIO if not a.strip() else getattr(L, a.strip().removeprefix("L.")) for a in
             searched}  # fmt: skip
    runs = " and ".join(str(L.search(name).runs) for name in (L.SCENARIO, L.AT_PERSIST))
    assert names == {L.SCENARIO, L.AT_PERSIST}
    assert rows["11"][1] == f"it runs {len(names)} exhaustive schedule searches ({runs} runs)"
    for t in (rows["09"][0], rows["11"][0], rows["14"][0]):
        assert re.fullmatch(r"about \d+ s", t)
