"""The interop scenarios: one real client doing one thing a RocketMQ user does.

A scenario is a function ``run(target, workdir) -> observation``. It drives a client
against ``target`` (``mqlab serve`` or the real 4.9.3 broker), checks what the scenario
promises (``expect``: raises ``ScenarioFailed`` with the reason), and returns what a user
can observe, with ports, times and message ids left out, so that the observation on mqlab
can be compared with the one on the real broker.

Adding a scenario: write ``def go_something(t, work) -> dict`` below and register it with
``@scenario("go", "one line saying what it shows")``. Use a topic and group name unique to
the scenario: all scenarios of a run share one cluster per target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mqlab.interop.go_client import go_missing, run_go_client
from mqlab.interop.targets import Target

__all__ = [
    "Scenario", "ScenarioFailed", "SCENARIOS", "CLIENT_MISSING", "NOTES_KEY", "expect", "scenario",
]  # fmt: skip

#: An observation's entry kept out of the comparison (``Outcome.notes``): what a scenario
#: records and the report states per target, but timing decides (not a broker's rules).
NOTES_KEY = "_notes"


class ScenarioFailed(AssertionError):
    """A scenario's own check did not hold on a target."""


def expect(cond: bool, why: str) -> None:
    if not cond:
        raise ScenarioFailed(why)


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    client: str
    description: str
    run: Callable[[Target, Path], dict]
    #: runs after every other scenario: it leaves the cluster changed for good
    last: bool = False
    #: mqlab differs from 4.9.3 here on purpose; the reason (also in the README's "What the
    #: model leaves out"). A mismatch is then reported as explained, not counted.
    known_difference: str | None = None
    #: uses the target's broker with ACL on (``Target.acl()``): runs after every other
    #: scenario, the ``last`` ones too, since that broker, registered with the target's name
    #: server, would show in what they list and draw their auto-created topics (``TBW102``)
    acl: bool = False


SCENARIOS: list[Scenario] = []

#: client -> a function saying why that client cannot run here (None when it can).
CLIENT_MISSING: dict[str, Callable[[], str | None]] = {"go": go_missing}


def scenario(
    client: str,
    description: str,
    *,
    last: bool = False,
    known_difference: str | None = None,
    acl: bool = False,
):
    def register(fn: Callable[[Target, Path], dict]) -> Callable[[Target, Path], dict]:
        name = fn.__name__.removeprefix(f"{client}_").replace("_", "-")
        SCENARIOS.append(
            Scenario(f"{client}/{name}", client, description, fn, last, known_difference, acl)
        )
        return fn

    return register


def ordered(scenarios: list[Scenario]) -> list[Scenario]:
    """The run order: as registered, those marked ``last`` at the end, and after them
    those marked ``acl``."""
    return sorted(scenarios, key=lambda s: (s.last or s.acl, s.acl))


# --------------------------------------------------------------------------- Go client


def _go_send(t: Target, topic: str, count: int, tags: str = "", group: str = "go_pg") -> list[dict]:
    return run_go_client(
        ["produce", "-n", t.namesrv_addr, "-topic", topic, "-group", group,
         "-count", str(count), "-tags", tags]
    )  # fmt: skip


def _sends(results: list[dict]) -> list[dict]:
    """What a SendResult shows a user, without its ids (built from host, port and time)."""
    return [
        {k: r.get(k) for k in ("i", "status", "broker", "queueId", "queueOffset", "error")}
        for r in results
    ]


@scenario("go", "SEND_MESSAGE (10, long header names) to a new topic: auto-created from TBW102")
def go_send_auto_create(t: Target, work: Path) -> dict:
    sent = _go_send(t, "InteropGoAuto", 8, "TagA,TagB")
    expect(len(sent) == 8, f"8 send results expected, got {len(sent)}")
    expect(all(r.get("status") == 0 for r in sent), f"every send SEND_OK: {sent}")
    return {"sends": _sends(sent)}


@scenario("go", "push consumer with 'TagA || TagB' (clustering, from the first offset)")
def go_push_tag_filter(t: Target, work: Path) -> dict:
    sent = _go_send(t, "InteropGoTag", 9, "TagA,TagB,TagC")
    expect(all(r.get("status") == 0 for r in sent), f"every send SEND_OK: {sent}")
    got = run_go_client(
        ["consume", "-n", t.namesrv_addr, "-topic", "InteropGoTag", "-group", "go_cg_tag",
         "-expr", "TagA || TagB", "-expect", "6", "-timeout", "60s"],
        home=work,
    )  # fmt: skip
    msgs = [m for m in got if m["event"] == "consume"]
    bodies = sorted(m["body"] for m in msgs)
    want = sorted(f"go-{i}" for i in range(9) if i % 3 != 2)
    expect(bodies == want, f"TagA/TagB messages exactly once: got {bodies}, want {want}")
    # Concurrent consumption promises no order, not even per queue (the listener runs on a
    # pool): the observation is the set of deliveries.
    delivered = sorted(
        (m["queueId"], m["queueOffset"], m["tags"], m["body"], m["reconsumeTimes"]) for m in msgs
    )
    return {"sends": _sends(sent), "delivered": [list(d) for d in delivered]}


def _go_transact(t: Target, work: Path, topic: str, group: str, *args: str) -> dict:
    """One transactional message with the Go client's NewTransactionProducer, then a push
    consumer for its topic: the send, the check-backs, the delivered message."""
    out = run_go_client(
        ["transact", "-n", t.namesrv_addr, "-topic", topic, "-group", group, *args], home=work
    )
    (send,) = [e for e in out if e["event"] == "send"]
    expect(send.get("status") == 0, f"half message SEND_OK: {send}")
    checks = [e for e in out if e["event"] == "check"]
    got = run_go_client(
        ["consume", "-n", t.namesrv_addr, "-topic", topic, "-group", f"{group}_cg",
         "-expect", "1", "-timeout", "60s", "-linger", "1s"],
        home=work,
    )  # fmt: skip
    delivered = [m for m in got if m["event"] == "consume"]
    expect(
        [(m["body"], m["queueId"], m["queueOffset"]) for m in delivered]
        == [("go-tx", send["queueId"], 0)],
        f"delivered once, on the queue it was sent to: {delivered}",
    )
    for c in checks:
        expect(c["queueId"] == send["queueId"], f"checked as its real queue: {c}")
        del c["queueId"]
    send.pop("queueId")
    for m in delivered:
        del m["queueId"]
    return {"send": send, "checks": checks, "delivered": delivered}


@scenario("go", "NewTransactionProducer: CommitMessageState → delivered once")
def go_transaction_commit(t: Target, work: Path) -> dict:
    r = _go_transact(t, work, "InteropGoTxCommit", "go_tx_commit", "-state", "commit")
    expect(r["send"]["state"] == 1 and r["checks"] == [], f"committed, not checked: {r}")
    return r


@scenario("go", "NewTransactionProducer: UnknownState → check-back → commit → delivered")
def go_transaction_check_back(t: Target, work: Path) -> dict:
    r = _go_transact(t, work, "InteropGoTxCheck", "go_tx_check", "-state", "unknown",
                     "-check", "commit", "-checks", "1")  # fmt: skip
    expect(r["send"]["state"] == 3, f"UnknownState: {r['send']}")
    expect(
        [(c["topic"], c["checkTimes"], c["realTopic"]) for c in r["checks"]]
        == [("InteropGoTxCheck", "1", "InteropGoTxCheck")],
        f"one check-back, as the real topic: {r['checks']}",
    )
    return r


# --------------------------------------------------------------------------- C++ client
# The official C++ client through its Python binding (PyPI ``rocketmq`` 0.4.4, Linux
# x86_64), driven by the script the network tests use, in its own process.


def _cpp_missing() -> str | None:
    import platform
    import sys

    if not (sys.platform == "linux" and platform.machine() == "x86_64"):
        return "the official C++ client wheel (rocketmq 0.4.4) is manylinux x86_64 only"
    if not _CPP_SCRIPT.is_file():
        return f"the C++ client script is not here ({_CPP_SCRIPT}): run from a source checkout"
    try:
        import rocketmq.client  # noqa: F401
    except Exception as e:  # ImportError, or the bundled librocketmq failing to load
        return f"the C++ client does not load: {e} (pip install rocketmq==0.4.4)"
    return None


_CPP_SCRIPT = Path(__file__).resolve().parents[2] / "tests" / "net" / "cpp_client_script.py"
CLIENT_MISSING["cpp"] = _cpp_missing


def _cpp(scenario_name: str, params: dict, work: Path, timeout_s: float = 90) -> dict:
    import json
    import os
    import subprocess
    import sys

    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)  # the client logs under $HOME/logs
    proc = subprocess.run(
        [sys.executable, str(_CPP_SCRIPT), scenario_name, json.dumps(params)],
        env=dict(os.environ, HOME=str(home)), capture_output=True, text=True,
        timeout=timeout_s, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(
            f"C++ client {scenario_name} exited {proc.returncode}: {proc.stderr[-1500:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cpp_push(t: Target, work: Path, topic: str, group: str, expression: str, want: int,
              **extra) -> list[dict]:  # fmt: skip
    import json
    import os
    import subprocess
    import sys
    import time

    out, stop = work / f"{group}.jsonl", work / f"{group}.stop"
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    params = {"ns": t.namesrv_addr, "topic": topic, "group": group, "expression": expression,
              "out": str(out), "stop": str(stop), "max_seconds": 60, **extra}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, str(_CPP_SCRIPT), "push", json.dumps(params)],
        env=dict(os.environ, HOME=str(home)), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        got: list[dict] = []
        while time.monotonic() < deadline:
            if out.exists():
                got = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
                if len(got) >= want:
                    time.sleep(1.0)  # anything more (a duplicate) would show now
                    got = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
                    break
            time.sleep(0.1)
        return got
    finally:
        stop.touch()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _cpp_sends(r: dict) -> list[dict]:
    return [{"status": x["status"], "body": x["body"]} for x in r["results"] if x is not None]


@scenario(
    "cpp", "C++ producer: sync sends to a new topic (auto-created), then a pull of every queue"
)
def cpp_send_and_pull(t: Target, work: Path) -> dict:
    ops = [{"op": "sync", "topic": "InteropCppSend", "tags": "TagA", "keys": f"k{i}",
            "body": f"cpp-{i}"} for i in range(6)]  # fmt: skip
    r = _cpp("produce", {"ns": t.namesrv_addr, "group": "cpp_pg", "ops": ops}, work)
    sends = _cpp_sends(r)
    expect([s["status"] for s in sends] == [0] * 6, f"SEND_OK x6: {sends}")
    pulled = _cpp(
        "pull", {"ns": t.namesrv_addr, "topic": "InteropCppSend", "group": "cpp_pull"}, work
    )
    bodies = sorted(m["body"] for m in pulled["messages"])
    expect(bodies == [f"cpp-{i}" for i in range(6)], f"pulled: {bodies}")
    return {"sends": sends, "pulled": bodies}


@scenario("cpp", "C++ push consumer, 'TagA || TagB', clustering")
def cpp_push_tag_filter(t: Target, work: Path) -> dict:
    tags = ("TagA", "TagB", "TagC")
    ops = [{"op": "sync", "topic": "InteropCppTag", "tags": tags[i % 3], "body": f"ct-{i}"}
           for i in range(9)]  # fmt: skip
    _cpp("produce", {"ns": t.namesrv_addr, "group": "cpp_pg", "ops": ops}, work)
    got = _cpp_push(t, work, "InteropCppTag", "cpp_cg_tag", "TagA || TagB", 6)
    bodies = sorted(m["body"] for m in got)
    expect(bodies == sorted(f"ct-{i}" for i in range(9) if i % 3 != 2), f"delivered: {bodies}")
    return {"delivered": sorted((m["body"], m["tags"], m["reconsume_times"]) for m in got)}


@scenario("cpp", "C++ orderly sends (selector arg -> queue) and an orderly push consumer")
def cpp_orderly(t: Target, work: Path) -> dict:
    ops = [{"op": "orderly", "topic": "InteropCppOrder", "arg": i % 2, "body": f"co-{i % 2}-{i}"}
           for i in range(10)]  # fmt: skip
    r = _cpp("produce", {"ns": t.namesrv_addr, "group": "cpp_pg_order", "ops": ops}, work)
    expect([s["status"] for s in _cpp_sends(r)] == [0] * 10, f"sends: {r}")
    got = _cpp_push(t, work, "InteropCppOrder", "cpp_cg_order", "*", 10, orderly=True)
    per_queue: dict[str, list[str]] = {}
    for m in got:
        per_queue.setdefault(str(m["queue_id"]), []).append(m["body"])
    for q, bodies in per_queue.items():
        expect(bodies == sorted(bodies, key=lambda b: int(b.rsplit("-", 1)[1])), f"q{q}: {bodies}")
    return {"perQueue": dict(sorted(per_queue.items()))}


#: The C++ client marks a batch with the header ``batch: "1"``; Java's Boolean.parseBoolean reads
#: that as false, so a real 4.9.3 broker stores the whole batch as one message whose body is
#: the encoded batch (rocketmq-client-cpp issue #363). mqlab reads "1" as true and stores the
#: four messages, so that a learner's C++ batches work.
CPP_BATCH_ONE = (
    'batch: "1" from the C++ client is a batch in mqlab; 4.9.3 reads it as false and stores '
    "the batch as one message (rocketmq-client-cpp #363)"
)


@scenario("cpp", "C++ batch send of 4, consumed by a push consumer", known_difference=CPP_BATCH_ONE)
def cpp_batch(t: Target, work: Path) -> dict:
    msgs = [{"topic": "InteropCppBatch", "tags": "TagA", "body": f"cb-{i}"} for i in range(4)]
    first = {"op": "sync", "topic": "InteropCppBatch", "tags": "TagA", "body": "cb-first"}
    r = _cpp("produce", {"ns": t.namesrv_addr, "group": "cpp_pg_batch",
                         "ops": [first, {"op": "batch", "messages": msgs}]}, work)  # fmt: skip
    # 4.9.3 stored the batch as one message (CPP_BATCH_ONE): 2 deliveries there, not 5; the
    # push then stops at 2 instead of waiting out its 60 s for 3 that never come (and a 1 s
    # look after either count shows anything more)
    got = _cpp_push(t, work, "InteropCppBatch", "cpp_cg_batch", "*", 2 if t.kind == "real" else 5)
    bodies = sorted(m["body"] for m in got)
    return {"statuses": [x["status"] for x in r["results"]], "delivered": bodies}


# --------------------------------------------------------------------------- Node.js client
# ali-ons (npm), pinned in interop/node/package-lock.json and installed there with `npm ci`.
# It does not fall back to TBW102: a user creates the topic first with mqadmin, and so do
# these scenarios.

_NODE_DIR = Path(__file__).resolve().parents[2] / "interop" / "node"


def _node_missing() -> str | None:
    import shutil

    if not (_NODE_DIR / "package-lock.json").is_file():
        return f"the Node.js client sources are not here ({_NODE_DIR}): run from a source checkout"
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not on PATH (Debian: apt-get install nodejs npm)"
    return None


CLIENT_MISSING["node"] = _node_missing


def _npm_ci() -> None:
    """``npm ci`` in interop/node once: concurrent callers (the matrix's two targets) wait on a
    lock, and the second finds the modules installed.

    Installed means our marker, written once ``npm ci`` has succeeded, names this
    ``package-lock.json``. ``ali-ons``'s own directory is not enough: it appears while ``npm
    ci`` still unpacks its dependencies, and a target that saw it then ran the client into
    missing modules (dry run BQ: both node scenarios exited 1 on the real broker, once the two
    targets reached them at the same moment)."""
    import fcntl
    import hashlib
    import subprocess
    import tempfile

    lock_hash = hashlib.sha256((_NODE_DIR / "package-lock.json").read_bytes()).hexdigest()
    marker = _NODE_DIR / "node_modules" / ".mqlab-npm-ci"

    def installed() -> bool:
        try:
            return marker.read_text() == lock_hash
        except OSError:
            return False

    if installed():
        return
    key = hashlib.sha256(str(_NODE_DIR).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"mqlab-npm-ci-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed():
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund"], cwd=_NODE_DIR, check=True,
                capture_output=True, timeout=600,
            )  # fmt: skip
            marker.write_text(lock_hash)


def _node(args: list[str], timeout_s: float = 90) -> list[dict]:
    import json
    import subprocess

    _npm_ci()
    proc = subprocess.run(
        ["node", "client.js", *args], cwd=_NODE_DIR, capture_output=True, text=True,
        timeout=timeout_s, check=False,
    )  # fmt: skip
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0:
        raise RuntimeError(f"node client.js {args[0]} exited {proc.returncode}: {lines[-3:]}")
    return lines


def _create_topic(t: Target, topic: str) -> None:
    from mqlab.conformance.real_cluster import mqadmin_session

    proc = mqadmin_session(t.namesrv_addr).run(
        ["updateTopic", "-b", t.broker_addr, "-t", topic, "-r", "4", "-w", "4"]
    )
    expect(proc.returncode == 0 and "success" in proc.stdout, f"updateTopic: {proc.stdout}")


@scenario("node", "ali-ons producer to a topic made with mqadmin updateTopic (no TBW102 fallback)")
def node_send(t: Target, work: Path) -> dict:
    _create_topic(t, "InteropNodeSend")
    sent = _node(["produce", t.namesrv_addr, "InteropNodeSend", "node_pg", "8", "TagA,TagB"])
    expect([s.get("status") for s in sent] == ["SEND_OK"] * 8, f"sends: {sent}")
    offsets = sorted((s["queueId"], s["queueOffset"]) for s in sent)
    return {"queueOffsets": [list(x) for x in offsets]}


@scenario("node", "ali-ons push consumer with 'TagA || TagB'")
def node_push_tag_filter(t: Target, work: Path) -> dict:
    _create_topic(t, "InteropNodeTag")
    sent = _node(["produce", t.namesrv_addr, "InteropNodeTag", "node_pg", "9", "TagA,TagB,TagC"])
    expect(all(s.get("status") == "SEND_OK" for s in sent), f"sends: {sent}")
    got = _node(["consume", t.namesrv_addr, "InteropNodeTag", "node_cg_tag", "TagA || TagB", "6"])
    msgs = [m for m in got if m["event"] == "consume"]
    bodies = sorted(m["body"] for m in msgs)
    expect(bodies == sorted(f"node-{i}" for i in range(9) if i % 3 != 2), f"delivered: {bodies}")
    return {"delivered": sorted((m["body"], m["tags"], m["reconsumeTimes"]) for m in msgs)}
