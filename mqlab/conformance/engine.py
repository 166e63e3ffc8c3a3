"""Replay scenarios to both sides, compare, and tally rows.

Per scenario, each side runs the steps in its own thread (so the two brokers see the
requests at the same moments, and timing comparisons are fair); a :class:`StoredCheck`
is a meeting point: both sides finish the steps before it, then the stores are read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from mqlab.common.message_decoder import MessageDecodeError, decodes
from mqlab.conformance.compare import (
    CPP_BOOLEAN_RULE,
    MISSING_FIELD_RULE,
    RULES_BY_NAME,
    Diff,
    SideEnv,
    classify,
    compare_answers,
    compare_values,
    cpp_boolean_1,
    message_fields,
    missing_header_field,
    parse_properties_body,
)
from mqlab.conformance.raw_tcp import Answer, RawTcpClient
from mqlab.conformance.scenario import (
    TIMING_TOLERANCE_MS,
    Scenario,
    SideAction,
    Step,
    StoredCheck,
    code_of,
    resolve,
)
from mqlab.conformance.sides import Side
from mqlab.conformance.stored import LAYOUT, read_commit_log, read_consume_queue, store_files
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.fastjson import loads

__all__ = ["Row", "Run", "run_scenarios", "run_side"]


@dataclass(slots=True)
class Row:
    """One compared request (or stored entry): what was asked, both answers, the verdict."""

    group: str
    scenario: str
    step: str
    what: str
    diffs: list[Diff] = field(default_factory=list)
    real: str = ""
    mqlab: str = ""
    note: str = ""
    is_request: bool = True
    #: run-dependent figures (elapsed ms of a timed step): the console and the run file
    #: show them, the tracked report does not
    timing: str = ""

    @property
    def unexplained(self) -> list[Diff]:
        return [d for d in self.diffs if d.rule is None]

    @property
    def verdict(self) -> str:
        if not self.diffs:
            return "identical"
        if self.unexplained:
            return "UNEXPLAINED"
        rules = sorted({d.rule for d in self.diffs if d.rule})
        return "explained: " + ", ".join(rules)


@dataclass(slots=True)
class Run:
    rows: list[Row] = field(default_factory=list)
    seconds: float = 0.0
    #: the ``replication:`` summary line (None when the check did not run) and what differed
    replication_line: str | None = None
    replication_problems: list[str] = field(default_factory=list)
    #: the ``dledger:`` line of the mixed group (None when it did not run) and what differed
    dledger_line: str | None = None
    dledger_problems: list[str] = field(default_factory=list)

    def tally(self) -> tuple[int, int, int, int]:
        n = len(self.rows)
        i = sum(1 for r in self.rows if r.verdict == "identical")
        u = sum(1 for r in self.rows if r.verdict == "UNEXPLAINED")
        return n, i, n - i - u, u

    def summary(self) -> str:
        n, i, e, u = self.tally()
        return f"conformance: {n} requests, {i} identical, {e} explained, {u} unexplained"


def _code_name(code: int) -> str:
    try:
        return f"{RequestCode(code).name} ({code})"
    except ValueError:
        return f"code {code}"


def describe(ans: Answer | None) -> str:
    """One answer as text for the report: code, remark, extFields, body (cut)."""
    if ans is None:
        return "<not sent>"
    if ans.command is None:
        return f"<no answer: {ans.error}>" if ans.error else "<oneway>"
    c = ans.command
    parts = [f"code={c.code}"]
    if c.remark is not None:
        parts.append(f"remark={c.remark!r}")
    if c.ext_fields:
        parts.append("ext={" + ", ".join(f"{k}={v}" for k, v in sorted(c.ext_fields.items())) + "}")
    if c.body:
        b = c.body
        txt = b.decode("utf-8", "replace") if b[:1] in (b"{", b"[") else b[:48].hex()
        parts.append(f"body[{len(b)}]={txt[:400]}")
    parts.append(f"{ans.elapsed_ms:.0f} ms")
    return " ".join(parts)


#: The rules for values that agree between the two sides only by chance: each broker's
#: own clock (two brokers store in the same millisecond now and then), the run's
#: measurements, the host's CPU count (equal on a 4-CPU host), the statistics sampled on each
#: broker's clock, the consume time spans and filter data born times. A field one of these
#: rules covers counts as explained whenever both sides carry it, equal or not, so that a
#: row's verdict does not depend on the run's timing.
CHANCE_RULES = (
    "store-timestamp", "schedule-deliver-time", "broker-born-timestamp",
    "runtime-measurement", "available-processors", "sampled-tps", "consume-time-span",
    "filter-data-born-time",
)  # fmt: skip

Leaf = tuple[str, Any, "tuple[str, str] | None"]


def _equal_leaves(path: str, a: Any, b: Any) -> Iterable[tuple[str, Any]]:
    """The paths (``compare_values``' scheme) whose values are the same on both sides."""
    if isinstance(a, dict) and isinstance(b, dict):
        na, nb = {str(k): v for k, v in a.items()}, {str(k): v for k, v in b.items()}
        for k in sorted(set(na) & set(nb)):
            yield from _equal_leaves(f"{path}.{k}", na[k], nb[k])
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from _equal_leaves(f"{path}[{i}]", x, y)
    elif a == b and type(a) is type(b):
        yield path, a


def _clock_diffs(leaves: Iterable[Leaf], envs: tuple[SideEnv, SideEnv]) -> list[Diff]:
    """A masked :class:`Diff` (real == mqlab) for each equal leaf a clock rule covers."""
    rules = [RULES_BY_NAME[n] for n in CHANCE_RULES if n in RULES_BY_NAME]
    out: list[Diff] = []
    for path, v, hosts in leaves:
        d = Diff(path, v, v, born_hosts=hosts)
        for r in rules:
            if r.masks(d, *envs):
                d.rule = r.name
                out.append(d)
                break
    return out


def _answer_leaves(code: int, a: Answer | None, b: Answer | None, body_kind: str) -> list[Leaf]:
    """The equal leaves of two answers, walked as ``compare_answers`` compares them."""
    if a is None or b is None or a.command is None or b.command is None:
        return []
    ca, cb = a.command, b.command
    leaves: list[Leaf] = []
    ea, eb = ca.ext_fields or {}, cb.ext_fields or {}
    leaves += [(f"ext.{k}", ea[k], None) for k in sorted(set(ea) & set(eb)) if ea[k] == eb[k]]
    if not ca.body or not cb.body:
        return leaves
    kind = body_kind
    if kind == "auto" and code == 11 and ca.code == 0 and cb.code == 0:
        kind = "messages"
    if kind == "properties":
        pa, pb = dict(parse_properties_body(ca.body)), dict(parse_properties_body(cb.body))
        return leaves + [(f"body.{k}", v, None) for k, v in pa.items() if pb.get(k) == v]
    if kind == "messages":
        try:
            ma, mb = decodes(ca.body), decodes(cb.body)
        except MessageDecodeError:
            return leaves
        for i, (x, y) in enumerate(zip(ma, mb, strict=False)):
            fx, fy = message_fields(x), message_fields(y)
            leaves += [(f"msg[{i}].{k}", fx[k], None) for k in fx if fx[k] == fy[k]]
        return leaves
    ja, jb = _json(ca.body), _json(cb.body)
    if kind in ("auto", "json") and ja is not None and jb is not None:
        leaves += [(p, v, None) for p, v in _equal_leaves("body", ja, jb)]
    return leaves


def _json(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
        return loads(text) if text[:1] in ("{", "[") else None
    except ValueError:  # UnicodeDecodeError is one
        return None


def _entry_leaves(i: int, a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[Leaf]:
    if a is None or b is None:
        return []
    hosts = (a["bornHost"], b["bornHost"])
    return [(f"msg[{i}].{k}", a[k], hosts) for k in LAYOUT if a[k] == b[k]]


def _leaves(path: str, a: Any, b: Any) -> list[Leaf]:
    return [(p, v, None) for p, v in _equal_leaves(path, a, b)]


class _SideRunner:
    """One side's state while a scenario runs: its answers and parked requests."""

    def __init__(self, side: Side, client: RawTcpClient) -> None:
        self.side = side
        self.client = client
        self.answers: dict[str, Answer] = {}
        self.pending: dict[str, Future] = {}

    def _addr(self, step: Step) -> str:
        if step.to == "acl":
            if not getattr(self.side, "acl_addr", ""):
                raise OSError(f"{self.side.name}: no ACL broker running for step {step.name}")
            return self.side.acl_addr
        if step.to == "vip":  # broker-a's VIP channel, listenPort - 2
            if not getattr(self.side, "broker_vip_addr", ""):
                raise OSError(f"{self.side.name}: no VIP channel for step {step.name}")
            return self.side.broker_vip_addr
        if step.to == "slave":
            if not getattr(self.side, "slave_addr", ""):
                raise OSError(f"{self.side.name}: no slave running for step {step.name}")
            return self.side.slave_addr
        nodes = getattr(self.side, "node_addrs", {})
        if step.to in nodes:  # a DLedger group's node (mqlab/conformance/dledger_rows.py)
            return nodes[step.to]
        return self.side.namesrv_addr if step.to == "namesrv" else self.side.broker_addr

    def run(self, steps: Iterable[Step | SideAction]) -> None:
        for st in steps:
            if isinstance(st, SideAction):
                getattr(self.side, st.method)(*st.args)
                for to in st.reconnect:
                    self.client.close_connection(self._addr(Step(st.name, 0, to=to)))
                continue
            for dep in st.after:
                if dep in self.pending:
                    self.answers[dep] = self.pending.pop(dep).result()
            if st.wait_ms:
                time.sleep(st.wait_ms / 1000)
            addr = self._addr(st)
            try:
                env = {
                    "now": lambda: int(time.time() * 1000),
                    "client": self.client.local_addr(addr),
                }
                header = {
                    k: resolve(str(v), self.answers, env)
                    for k, v in st.header.items()
                    if v is not None  # None: the field is left out of the request
                }
                body = st.body(self.answers) if callable(st.body) else st.body
                if isinstance(body, str):
                    body = body.encode()
            except (KeyError, OSError) as e:
                self.answers[st.name] = Answer(None, 0.0, f"not sent: {e!r}")
                continue
            try:
                hook = None
                if st.credentials is not None:
                    from mqlab.acl.acl_client_rpc_hook import AclClientRPCHook

                    hook = AclClientRPCHook(st.credentials)
                fut = self.client.start(addr, code_of(st.code), header or None, body,
                                        timeout_s=st.timeout_s, version=st.version,
                                        rpc_hook=hook)  # fmt: skip
            except OSError as e:  # cannot connect / send: this side's answer is the error
                self.answers[st.name] = Answer(None, 0.0, f"not sent: {e!r}")
                continue
            if st.background:
                self.pending[st.name] = fut
            else:
                self.answers[st.name] = fut.result()

    def finish(self) -> None:
        for name, fut in list(self.pending.items()):
            self.answers[name] = fut.result()
        self.pending.clear()


def _segments(steps: Sequence[Step | StoredCheck]) -> list[list[Step] | StoredCheck]:
    out: list[list[Step] | StoredCheck] = []
    cur: list[Step] = []
    for st in steps:
        if isinstance(st, StoredCheck):
            out.append(cur)
            out.append(st)
            cur = []
        else:
            cur.append(st)
    out.append(cur)
    return out


def _envs(real: Side, mq: Side, clients: tuple[RawTcpClient, RawTcpClient]):
    def env(side: Side, c: RawTcpClient) -> SideEnv:
        # closed ones too: a DLedger row's connection to a node killed since (the bornHost
        # of the messages sent on it)
        addrs = tuple(conn.local_addr for conn in [*c._conns.values(), *c.closed_conns])
        acl_addr = getattr(side, "acl_addr", "")
        return SideEnv(
            side.broker_addr, side.namesrv_addr, addrs, getattr(side, "slave_addr", ""),
            acl_addr, str(getattr(side, "acl_home", "")) if acl_addr else "",
            tuple(sorted(getattr(side, "node_addrs", {}).items())),
        )  # fmt: skip

    return env(real, clients[0]), env(mq, clients[1])


def _stored_rows(sc: Scenario, chk: StoredCheck, real: Side, mq: Side,
                 envs: tuple[SideEnv, SideEnv]) -> list[Row]:  # fmt: skip
    if chk.wait_ms:
        time.sleep(chk.wait_ms / 1000)
    real.flush()
    mq.flush()
    topics = set(chk.topics) or None
    ea, eb = read_commit_log(real.store_dir, topics), read_commit_log(mq.store_dir, topics)
    rows: list[Row] = []
    if chk.one_row:
        return _whole_store_rows(sc, chk, real, mq, envs, ea, eb)
    for i in range(max(len(ea), len(eb))):
        a = ea[i] if i < len(ea) else None
        b = eb[i] if i < len(eb) else None
        what = f"commit-log entry {i}"
        e = a or b
        if e is not None:
            what += f" ({e['topic']} q{e['queueId']} #{e['queueOffset']})"
        diffs: list[Diff] = []
        if a is None or b is None:
            diffs.append(Diff("entry", "<absent>" if a is None else "present",
                              "<absent>" if b is None else "present"))  # fmt: skip
        else:
            diffs = [Diff("msg[0]." + d.path.split(".", 1)[1], d.real, d.mqlab,
                          born_hosts=d.born_hosts) for d in _entry_diffs(0, a, b)]  # fmt: skip
        diffs = classify(diffs, *envs) + _clock_diffs(_entry_leaves(0, a, b), envs)
        rows.append(Row(sc.group, sc.name, chk.name, what, diffs,
                        _entry_text(a), _entry_text(b), chk.note, is_request=False))  # fmt: skip
    for topic in chk.topics:
        qa, qb = read_consume_queue(real.store_dir, topic), read_consume_queue(mq.store_dir, topic)
        for qid in sorted(set(qa) | set(qb)):
            diffs = []
            ua, ub = _units(qa.get(qid)), _units(qb.get(qid))
            compare_values(f"cq:{topic}/{qid}", ua, ub, diffs)
            diffs = classify(diffs, *envs) + _clock_diffs(
                _leaves(f"cq:{topic}/{qid}", ua, ub), envs
            )
            rows.append(Row(
                sc.group, sc.name, chk.name, f"consume queue {topic}/{qid} "
                f"({len(qa.get(qid, []))} units)", diffs,
                str(qa.get(qid)), str(qb.get(qid)), chk.note, is_request=False,
            ))  # fmt: skip
    fa, fb = store_files(real.store_dir, chk.topics), store_files(mq.store_dir, chk.topics)
    diffs = []
    compare_values("files", fa, fb, diffs)
    rows.append(Row(sc.group, sc.name, chk.name, f"store files ({len(fa)} / {len(fb)})",
                    classify(diffs, *envs), str(fa), str(fb), chk.note, is_request=False))  # fmt: skip
    ta, tb = _topics_json(real.store_dir), _topics_json(mq.store_dir)
    diffs = []
    compare_values("body", ta, tb, diffs)
    diffs = classify(diffs, *envs) + _clock_diffs(_leaves("body", ta, tb), envs)
    rows.append(Row(sc.group, sc.name, chk.name, "config/topics.json", diffs,
                    _cut_json(ta), _cut_json(tb), chk.note, is_request=False))  # fmt: skip
    return rows


def _entry_diffs(i: int, a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[Diff]:
    if a is None or b is None:
        return [Diff(f"msg[{i}]", "<absent>" if a is None else f"{a['topic']} #{a['queueOffset']}",
                     "<absent>" if b is None else f"{b['topic']} #{b['queueOffset']}")]  # fmt: skip
    hosts = (a["bornHost"], b["bornHost"])
    return [Diff(f"msg[{i}].{k}", a[k], b[k], born_hosts=hosts) for k in LAYOUT if a[k] != b[k]]


def _all_topics(*store_dirs) -> list[str]:
    names: set[str] = set()
    for d in store_dirs:
        base = d / "consumequeue"
        if base.is_dir():
            names.update(p.name for p in base.iterdir() if p.is_dir())
    return sorted(names)


def _whole_store_rows(sc: Scenario, chk: StoredCheck, real: Side, mq: Side,
                      envs: tuple[SideEnv, SideEnv], ea: list, eb: list) -> list[Row]:  # fmt: skip
    """Two rows: every commit-log entry, every consume-queue unit of every topic."""
    diffs: list[Diff] = []
    leaves: list[Leaf] = []
    for i in range(max(len(ea), len(eb))):
        a, b = ea[i] if i < len(ea) else None, eb[i] if i < len(eb) else None
        diffs += _entry_diffs(i, a, b)
        leaves += _entry_leaves(i, a, b)
    diffs = classify(diffs, *envs) + _clock_diffs(leaves, envs)
    rows = [Row(sc.group, sc.name, chk.name,
                f"whole commit log ({len(ea)} / {len(eb)} entries)", diffs,
                f"{len(ea)} entries", f"{len(eb)} entries", chk.note, is_request=False)]  # fmt: skip
    diffs = []
    leaves = []
    units = 0
    for topic in _all_topics(real.store_dir, mq.store_dir):
        qa, qb = read_consume_queue(real.store_dir, topic), read_consume_queue(mq.store_dir, topic)
        for qid in sorted(set(qa) | set(qb)):
            units += len(qa.get(qid, []))
            ua, ub = _units(qa.get(qid)), _units(qb.get(qid))
            compare_values(f"cq:{topic}/{qid}", ua, ub, diffs)
            leaves += _leaves(f"cq:{topic}/{qid}", ua, ub)
    diffs = classify(diffs, *envs) + _clock_diffs(leaves, envs)
    rows.append(Row(sc.group, sc.name, chk.name, f"every consume queue ({units} units)",
                    diffs, f"{units} units", "", chk.note, is_request=False))  # fmt: skip
    ta, tb = _topics_json(real.store_dir), _topics_json(mq.store_dir)
    diffs = []
    compare_values("body", ta, tb, diffs)
    diffs = classify(diffs, *envs) + _clock_diffs(_leaves("body", ta, tb), envs)
    rows.append(Row(sc.group, sc.name, chk.name, "config/topics.json", diffs,
                    _cut_json(ta), _cut_json(tb), chk.note, is_request=False))  # fmt: skip
    return rows


def _topics_json(store_dir) -> Any:
    p = store_dir / "config" / "topics.json"
    try:
        return loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return f"<unreadable: {e}>"


def _cut_json(v: Any) -> str:
    s = repr(v)
    return s if len(s) < 600 else s[:600] + "…"


def _units(units: list[tuple[int, int, int]] | None) -> list[dict[str, int]]:
    return [{"offset": o, "size": n, "tagsCode": t} for o, n, t in units or ()]


def _entry_text(e: dict[str, Any] | None) -> str:
    if e is None:
        return "<absent>"
    return " ".join(f"{k}={e[k]!r}" for k in LAYOUT)


def run_scenarios(scenarios: Sequence[Scenario], real: Side, mq: Side,
                  log=None) -> Run:  # fmt: skip
    """Run every scenario on both sides; one :class:`Row` per request / stored unit."""
    run = Run()
    t0 = time.monotonic()
    clients = (RawTcpClient(), RawTcpClient())
    pool = ThreadPoolExecutor(2, thread_name_prefix="conformance-side")
    slaves = False
    acl = False
    try:
        for sc in scenarios:
            # the acl group: a broker with ACL on, on each side, while it runs
            wants_acl = any(isinstance(s, Step) and s.to == "acl" for s in sc.steps)
            if wants_acl != acl:
                action = "start_acl_broker" if wants_acl else "stop_acl_broker"
                for f in [pool.submit(getattr(side, action)) for side in (real, mq)]:
                    f.result()
                acl = wants_acl
            # the slave group: a slave of broker-a on each side while it runs (both at once)
            wants = any(isinstance(s, Step) and s.to == "slave" for s in sc.steps)
            if wants != slaves:
                action = "start_slave" if wants else "stop_slave"
                for f in [pool.submit(getattr(side, action)) for side in (real, mq)]:
                    f.result()
                slaves = wants
            runners = (_SideRunner(real, clients[0]), _SideRunner(mq, clients[1]))
            steps = [s for s in sc.steps if isinstance(s, Step)]
            for seg in _segments(sc.steps):
                if isinstance(seg, StoredCheck):
                    for r in runners:
                        r.finish()
                    rows = _stored_rows(sc, seg, real, mq, _envs(real, mq, clients))
                    run.rows.extend(rows)
                    if log:
                        for row in rows:
                            log(row)
                    continue
                futs = [pool.submit(r.run, seg) for r in runners]
                for f in futs:
                    f.result()
            for r in runners:
                r.finish()
            envs = _envs(real, mq, clients)
            for st in steps:
                a, b = runners[0].answers.get(st.name), runners[1].answers.get(st.name)
                row = _request_row(sc, st, a, b, envs)
                run.rows.append(row)
                if log:
                    log(row)
        if slaves:
            for f in [pool.submit(side.stop_slave) for side in (real, mq)]:
                f.result()
        if acl:
            for f in [pool.submit(side.stop_acl_broker) for side in (real, mq)]:
                f.result()
    finally:
        pool.shutdown()
        for c in clients:
            c.close()
    run.seconds = time.monotonic() - t0
    return run


def run_side(scenarios: Sequence[Scenario], side: Side) -> dict[str, dict[str, Answer]]:
    """Run ``scenarios`` on ONE side (the real broker alone, e.g. while mqlab cannot answer
    a group yet): ``{scenario name: {step name: Answer}}``. Slaves and the ACL broker are
    started and stopped as :func:`run_scenarios` does; stored checks are skipped."""
    client = RawTcpClient()
    state = {"start_slave": False, "start_acl_broker": False}
    out: dict[str, dict[str, Answer]] = {}
    try:
        for sc in scenarios:
            for start, stop, to in (("start_slave", "stop_slave", "slave"),
                                    ("start_acl_broker", "stop_acl_broker", "acl")):  # fmt: skip
                wants = any(isinstance(s, Step) and s.to == to for s in sc.steps)
                if wants != state[start]:
                    getattr(side, start if wants else stop)()
                    state[start] = wants
            runner = _SideRunner(side, client)
            runner.run([s for s in sc.steps if not isinstance(s, StoredCheck)])
            runner.finish()
            out[sc.name] = runner.answers
        if state["start_slave"]:
            side.stop_slave()
        if state["start_acl_broker"]:
            side.stop_acl_broker()
    finally:
        client.close()
    return out


def _request_row(sc: Scenario, st: Step, a: Answer | None, b: Answer | None,
                 envs: tuple[SideEnv, SideEnv]) -> Row:  # fmt: skip
    code = code_of(st.code)
    diffs = compare_answers(
        code, a.command if a else None, b.command if b else None,
        a.error if a else "<not sent>", b.error if b else "<not sent>", st.body_kind,
    )  # fmt: skip
    if st.expect is not None and (a is None or a.command is None or a.command.code != st.expect):
        got = a.command.code if a and a.command else None
        diffs.append(Diff("scenario.expect", f"code {got} (scenario expects {st.expect})", "-"))
    if st.timing and a and b and a.command is not None and b.command is not None:
        if abs(a.elapsed_ms - b.elapsed_ms) > TIMING_TOLERANCE_MS:
            diffs.append(Diff("elapsed_ms", round(a.elapsed_ms), round(b.elapsed_ms)))
    if st.timing_window and a and b:
        lo, hi = st.timing_window
        for side, ans in (("real", a), ("mqlab", b)):
            if ans.command is not None and not lo <= ans.elapsed_ms <= hi:
                diffs.append(
                    Diff(f"elapsed_ms.{side}", f"{ans.elapsed_ms:.0f} not in [{lo}, {hi}]", "-")
                )
    what = f"{_code_name(code)} -> {st.to}"
    timing = ""
    if (st.timing or st.timing_window) and a and b:
        what += " [timed]"
        timing = f"{a.elapsed_ms:.0f} / {b.elapsed_ms:.0f} ms"
    whole = None
    if a and b and missing_header_field(_sent_header(st), a.command, b.command):
        whole = MISSING_FIELD_RULE.name
    elif cpp_boolean_1(code, _sent_header(st)):
        whole = CPP_BOOLEAN_RULE.name
    diffs = classify(diffs, *envs, whole_answer_rule=whole)
    if whole is None:
        diffs += _clock_diffs(_answer_leaves(code, a, b, st.body_kind), envs)
    return Row(sc.group, sc.name, st.name, what, diffs, describe(a), describe(b), st.note,
               timing=timing)  # fmt: skip


def _sent_header(st: Step) -> dict[str, str]:
    return {k: v for k, v in st.header.items() if v is not None}
