"""``python -m mqlab bench real``: its options, its table, its SEND_OK check, and its wait for
a slave on an mqlab group (``--group sync`` / ``async``).

Mirrors no RocketMQ class; the wait relies on ``CommitLog#handleHA`` (4.9.3): a SYNC_MASTER
answers SLAVE_NOT_AVAILABLE (11) while no slave is connected (``HAService#isSlaveOK``) and
FLUSH_SLAVE_TIMEOUT (12) when the slave does not acknowledge within ``syncFlushTimeout``,
after the message is written. The run against the real 4.9.3 group is in
tests/conformance/test_bench_real_group.py. Nothing timed.

Every probe is stored as 133 bytes, on mqlab as on 4.9.3: the 84 fixed bytes of a commit-log
message, body length 4 + "probe00000" 10, topic length 1 + "BenchProbe" 10, properties
length 2 + "CLUSTER\\x01DefaultCluster" 22 (the broker drops WAIT and adds CLUSTER).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mqlab.bench.real import (
    GROUPS,
    BenchError,
    goal_lines,
    median_result,
    parse_args,
    report_lines,
    send_ok_problems,
    wait_for_slave,
)
from mqlab.interop.targets import MqlabTarget, open_target

PROBE_SIZE = 84 + 4 + 10 + 1 + 10 + 2 + 22
RETRY = {"SLAVE_NOT_AVAILABLE", "FLUSH_SLAVE_TIMEOUT"}


# -- options ---------------------------------------------------------------------------------------


def test_default_is_one_master_both_brokers() -> None:
    a = parse_args([])
    assert (a.group, a.broker_role, a.slaves) == ("single", None, 0)
    assert (a.threads, a.kinds, a.messages, a.slave_timeout) == (
        [1, 4],
        ["real", "mqlab"],
        5000,
        90.0,
    )


@pytest.mark.parametrize(("group", "role"), [("sync", "SYNC_MASTER"), ("async", "ASYNC_MASTER")])
def test_group_gives_the_masters_role_and_one_slave(group: str, role: str) -> None:
    a = parse_args(["--group", group, "--messages", "300", "--threads", "2", "--targets", "mqlab"])
    assert (a.broker_role, a.slaves, a.messages, a.threads, a.kinds) == (
        role,
        1,
        300,
        [2],
        ["mqlab"],
    )
    assert GROUPS[group] == (role, 1)


def test_client_session_starts_the_java_client_in_a_session_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """``--client-session`` (off by default) runs JavaBench under ``setsid``
    (``start_new_session``); without it the client stays in the bench's session."""
    import subprocess

    import mqlab.bench.real as real
    import mqlab.conformance.real_cluster as rc

    assert parse_args([]).client_session is False
    assert parse_args(["--client-session"]).client_session is True
    seen: list[bool] = []

    def fake_run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
        seen.append(kw["start_new_session"])
        return subprocess.CompletedProcess(cmd, 0, stdout='{"sent": 7}\n', stderr="")

    monkeypatch.setattr(rc, "runner_classpath", lambda: "cp")
    monkeypatch.setattr(rc, "_java", lambda: "java")
    monkeypatch.setattr(real.subprocess, "run", fake_run)
    assert real.run_java_bench("127.0.0.1:1", "T", 1, 1, tmp_path) == {"sent": 7}
    assert real.run_java_bench("127.0.0.1:1", "T", 1, 1, tmp_path, own_session=True) == {"sent": 7}
    assert seen == [False, True]


def test_targets_run_real_first_whatever_the_order_given() -> None:
    assert parse_args(["--targets", "mqlab,real"]).kinds == ["real", "mqlab"]
    assert parse_args(["--targets", "uvloop,mqlab,real"]).kinds == ["real", "mqlab", "uvloop"]


def test_report_gives_each_mqlab_loop_its_ratio_to_the_real_broker() -> None:
    """With mqlab on asyncio and on uvloop, each row is followed by its own ratio row."""
    results = {
        ("real", 1): result(800.0, 1.0, 4.0, 1000),
        ("mqlab", 1): result(400.0, 2.0, 12.0, 1000),
        ("uvloop", 1): result(1200.0, 0.5, 2.0, 1000),
    }
    lines = report_lines(results, [1], ["real", "mqlab", "uvloop"], 1000)
    assert [line.split()[1] for line in lines[1:]] == ["real", "mqlab", "ratio", "uvloop", "ratio"]
    assert lines[3].split()[2:5] == ["0.50x", "0.50x", "2.00x"]
    assert lines[5].split()[2:5] == ["1.50x", "1.50x", "0.50x"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--group", "SYNC_MASTER"], "invalid choice: 'SYNC_MASTER'"),
        (["--threads", "1,x"], "--threads: comma-separated integers, got '1,x'"),
        (["--threads", "0"], "--threads: each count must be >= 1, got [0]"),
        (["--messages", "0"], "--messages must be >= 1, got 0"),
        (
            ["--targets", "real,rocketmq"],
            "--targets: some of real, mqlab, uvloop, got 'real,rocketmq'",
        ),
        (["--targets", ""], "--targets: some of real, mqlab, uvloop, got ''"),
        (["--rounds", "0"], "--rounds must be >= 1, got 0"),
        (["--rounds", "2", "--profile", "p"], "--profile takes one round: leave --rounds out"),
    ],
)
def test_bad_options_are_refused_with_the_reason(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


# -- the table and the SEND_OK check --------------------------------------------------------------


def result(msg_s: float, p50: float, p99: float, ok: int, **statuses: int) -> dict:
    return {
        "warmup": 200, "sent": ok + sum(statuses.values()), "consumed": ok,
        "sendMsgPerSec": msg_s, "e2eMsgPerSec": msg_s / 2, "sendP50Ms": p50, "sendP99Ms": p99,
        "e2eP50Ms": 2 * p50, "e2eP99Ms": 2 * p99, "cpuUsPerMsg": 100.0,
        "sendStatus": {"SEND_OK": ok, **statuses}, "warmupSendStatus": {"SEND_OK": 200},
    }  # fmt: skip


def test_report_has_each_broker_the_ratio_and_the_send_ok_count() -> None:
    results = {
        ("real", 1): result(800.0, 1.0, 4.0, 1000),
        ("mqlab", 1): result(400.0, 2.0, 12.0, 990, SLAVE_NOT_AVAILABLE=10),
    }
    assert report_lines(results, [1], ["real", "mqlab"], 1000) == [
        "threads broker sendMsgPerSec  e2eMsgPerSec     sendP50Ms     sendP99Ms      e2eP50Ms"
        "      e2eP99Ms   cpuUsPerMsg  consumed/sent  SEND_OK",
        "      1   real         800.0         400.0           1.0           4.0           2.0"
        "           8.0         100.0      1000/1000  1000/1000",
        "      1  mqlab         400.0         200.0           2.0          12.0           4.0"
        "          24.0         100.0       990/1000  990/1000",
        "      1  ratio         0.50x         0.50x         2.00x         3.00x         2.00x"
        "         3.00x         1.00x",
    ]


def test_report_of_one_broker_has_no_ratio() -> None:
    lines = report_lines({("mqlab", 4): result(400.0, 2.0, 12.0, 8)}, [4], ["mqlab"], 2)
    assert len(lines) == 2
    assert lines[1].endswith("         100.0            8/8  8/8")


def test_all_send_ok_is_no_problem() -> None:
    assert send_ok_problems(result(1.0, 1.0, 1.0, 1000), 1000) == []


def test_a_slave_status_or_a_missing_send_is_a_problem() -> None:
    r = result(1.0, 1.0, 1.0, 990, SLAVE_NOT_AVAILABLE=7, FLUSH_SLAVE_TIMEOUT=3)
    r["warmupSendStatus"] = {"SEND_OK": 199, "EXCEPTION": 1}
    assert send_ok_problems(r, 1000) == [
        "measured sends: SEND_OK 990 of 1000, FLUSH_SLAVE_TIMEOUT 3, SLAVE_NOT_AVAILABLE 7",
        "warm-up sends: SEND_OK 199 of 200, EXCEPTION 1",
    ]
    assert send_ok_problems(result(1.0, 1.0, 1.0, 999), 1000) == [
        "measured sends: SEND_OK 999 of 1000"
    ]


def test_a_result_without_statuses_is_a_problem() -> None:
    r = result(1.0, 1.0, 1.0, 10)
    del r["sendStatus"], r["warmupSendStatus"]
    assert send_ok_problems(r, 10) == [
        "no sendStatus in the result (JavaBench too old?)",
        "no warmupSendStatus in the result (JavaBench too old?)",
    ]


# -- the wait for the slave, on mqlab groups -------------------------------------------------------


@pytest.fixture
def group(request: pytest.FixtureRequest, tmp_path) -> Iterator[MqlabTarget]:
    role, slaves = request.param
    target = open_target("mqlab", tmp_path, broker_role=role, slaves=slaves)
    assert isinstance(target, MqlabTarget)
    try:
        yield target
    finally:
        target.close()


@pytest.mark.slow
@pytest.mark.parametrize("group", [("SYNC_MASTER", 1)], indirect=True)
def test_sync_master_answers_send_ok_once_its_slave_reports(group: MqlabTarget) -> None:
    """Refused probes are written too (handleHA runs after the put): the master holds every
    probe, and the slave all of them once it is ready."""
    ready = wait_for_slave(group.broker_addr, group.slave_addr)
    assert group.slave_addr and group.slave_addr != group.broker_addr
    assert ready.answers[-1] == "SEND_OK"
    assert set(ready.answers[:-1]) <= RETRY
    assert ready.master_max_offset == len(ready.answers) * PROBE_SIZE
    assert ready.slave_max_offset == ready.master_max_offset


@pytest.mark.slow
@pytest.mark.parametrize("group", [("ASYNC_MASTER", 1)], indirect=True)
def test_async_master_answers_at_once_and_the_wait_is_for_the_slaves_copy(
    group: MqlabTarget,
) -> None:
    ready = wait_for_slave(group.broker_addr, group.slave_addr)
    assert ready.answers == ("SEND_OK",)
    assert (ready.master_max_offset, ready.slave_max_offset) == (PROBE_SIZE, PROBE_SIZE)


@pytest.mark.parametrize("group", [("SYNC_MASTER", 0)], indirect=True)
def test_sync_master_without_a_slave_is_reported_and_nothing_measured(group: MqlabTarget) -> None:
    assert group.slave_addr == ""
    with pytest.raises(BenchError) as e:
        wait_for_slave(group.broker_addr, "127.0.0.1:1", timeout_s=0.5, pause_s=0.1)
    text = str(e.value)
    assert text.startswith(
        f"the master at {group.broker_addr} never answered SEND_OK within 0.5 s ("
    )
    assert "probe sends: SLAVE_NOT_AVAILABLE x" in text
    assert text.endswith(
        "): its slave at 127.0.0.1:1 is not connected and reporting; nothing measured"
    )


def test_bench_says_so_and_measures_nothing_when_the_slave_never_reports(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--group sync`` on a SYNC_MASTER whose slave never comes (none started): exit 2, the
    reason printed, the group closed, JavaBench never run."""
    import mqlab.bench.real as real

    opened: list[MqlabTarget] = []

    def lone_master(kind: str, workdir, **kw) -> MqlabTarget:
        assert (kind, kw["broker_role"], kw["slaves"]) == ("mqlab", "SYNC_MASTER", 1)
        t = MqlabTarget(tmp_path, broker_role="SYNC_MASTER", slaves=0)
        t.slave_addr = "127.0.0.1:1"
        opened.append(t)
        return t

    def no_java(*a, **kw):
        raise AssertionError("measured without a slave")

    monkeypatch.setattr(real, "open_target", lone_master)
    monkeypatch.setattr(real, "run_java_bench", no_java)
    argv = ["--group", "sync", "--targets", "mqlab", "--slave-timeout", "0.5", "--threads", "1"]
    assert real.main(argv) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"mqlab: the master at {opened[0].broker_addr} never answered SEND_OK")
    assert out.rstrip().endswith(
        "its slave at 127.0.0.1:1 is not connected and reporting; nothing measured"
    )
    assert "threads broker" not in out
    assert opened[0]._server._loop.loop.is_closed()  # closed by main


# -- --group dledger: the plumbing, without a group or a JVM ---------------------------------------


def test_dledger_group_option() -> None:
    a = parse_args(["--group", "dledger", "--threads", "1", "--messages", "50"])
    assert (a.group, a.dledger, a.broker_role, a.slaves, a.kinds) == (
        "dledger", True, None, 0, ["real", "mqlab"],
    )  # fmt: skip
    assert parse_args([]).dledger is False


class FakeDLedger:
    """What ``main`` needs of a DLedger target; records the calls."""

    def __init__(self, kind: str, calls: list[str], ready: bool = True) -> None:
        self.kind, self.calls, self.ready = kind, calls, ready
        self.namesrv_addr = f"127.0.0.1:{1 if kind == 'real' else 2}"
        self.cpu = 0.0

    def wait_ready(self, timeout_s: float) -> str:
        self.calls.append(f"{self.kind} wait_ready {timeout_s:g}")
        if not self.ready:
            from mqlab.bench.real import BenchError

            raise BenchError("never answered SEND_OK")
        return f"{self.kind} ready"

    def cpu_seconds(self) -> float:
        self.cpu += 0.1 * 221  # 100 µs for each of the 221 messages handled
        return self.cpu

    def close(self) -> None:
        self.calls.append(f"{self.kind} close")


def test_dledger_group_runs_both_groups_one_after_the_other_with_ratios(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each side's group is opened, waited for, measured and closed before the next; the
    table has the ratio row; no ``open_target`` (single broker or HA group) is used."""
    import mqlab.bench.real as real

    calls: list[str] = []

    def opener(kind: str, workdir, loop: str) -> FakeDLedger:
        calls.append(f"{kind} open {loop}")
        return FakeDLedger(kind, calls)

    def bench(namesrv: str, topic: str, threads: int, per_thread: int, workdir, **kw) -> dict:
        calls.append(f"bench {namesrv} {topic} {threads}x{per_thread}")
        r = result(800.0 if namesrv.endswith(":1") else 400.0, 1.0, 4.0, 20)
        r["warmup"] = 200
        return r

    def no_target(*a, **kw):
        raise AssertionError("open_target used for --group dledger")

    monkeypatch.setattr(real, "open_dledger", opener)
    monkeypatch.setattr(real, "open_target", no_target)
    monkeypatch.setattr(real, "run_java_bench", bench)
    argv = ["--group", "dledger", "--threads", "1", "--messages", "20", "--slave-timeout", "30"]
    assert real.main(argv) == 0
    assert calls == [
        "real open asyncio", "real wait_ready 30", "bench 127.0.0.1:1 BenchT1 1x20", "real close",
        "mqlab open asyncio", "mqlab wait_ready 30", "bench 127.0.0.1:2 BenchT1 1x20",
        "mqlab close",
    ]  # fmt: skip
    out = capsys.readouterr().out
    assert "real ready\n" in out and "mqlab ready\n" in out
    assert "20 per thread, a DLedger group of 3 brokers (n0 leading); load average" in out
    ratio = next(line for line in out.splitlines() if line.split()[1:2] == ["ratio"])
    assert ratio.split()[2] == "0.50x"


def test_dledger_group_that_never_takes_sends_is_reported_and_closed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mqlab.bench.real as real

    calls: list[str] = []
    monkeypatch.setattr(real, "open_dledger",
                        lambda kind, workdir, loop: FakeDLedger(kind, calls, ready=False))  # fmt: skip
    monkeypatch.setattr(real, "run_java_bench", lambda *a, **kw: pytest.fail("measured"))
    assert real.main(["--group", "dledger", "--targets", "mqlab", "--threads", "1"]) == 2
    assert calls == ["mqlab wait_ready 90", "mqlab close"]
    assert capsys.readouterr().out == "mqlab: never answered SEND_OK\n"


def test_goal_lines_name_each_goal_a_mqlab_row_missed() -> None:
    """msg/s at least the real broker's; send p50, e2e p99 and CPU/msg at most its: at 1
    thread mqlab is slower and its p50 higher; at 4 every goal holds (equal counts); uvloop
    misses nothing. Without the real broker there is nothing to hold a row to."""
    results = {
        ("real", 1): result(800.0, 1.0, 4.0, 1000),
        ("mqlab", 1): result(400.0, 2.0, 3.0, 1000),
        ("uvloop", 1): result(1200.0, 0.5, 2.0, 1000),
        ("real", 4): result(2000.0, 1.0, 4.0, 1000),
        ("mqlab", 4): result(2000.0, 1.0, 4.0, 1000),
        ("uvloop", 4): result(2400.0, 0.9, 4.0, 1000),
    }
    results[("uvloop", 4)]["cpuUsPerMsg"] = 100.5
    assert goal_lines(results, [1, 4], ["real", "mqlab", "uvloop"]) == [
        "goals, against the real broker in this run: msg/s >= 1.0x; send p50, e2e p99 and "
        "CPU/msg <= 1.0x",
        " mqlab   1 thread(s): missed: msg/s 0.50x, send p50 2.00x",
        " mqlab   4 thread(s): met",
        " mqlab: every goal met at 4 of 1, 4 thread(s)",
        "uvloop   1 thread(s): met",
        "uvloop   4 thread(s): missed: CPU/msg 1.005x",
        "uvloop: every goal met at 1 of 1, 4 thread(s)",
    ]
    assert goal_lines(results, [1], ["mqlab"]) == []


def test_rounds_report_each_figure_s_median() -> None:
    """Three rounds: each column is its own median (msg/s 700, p50 0.9), the counts the
    first round's; one round is reported as it is."""
    runs = [result(800.0, 1.0, 4.0, 1000), result(600.0, 0.9, 9.0, 1000),
            result(700.0, 0.8, 5.0, 1000)]  # fmt: skip
    m = median_result(runs)
    assert (m["sendMsgPerSec"], m["sendP50Ms"], m["sendP99Ms"], m["e2eP99Ms"]) == (
        700.0, 0.9, 5.0, 10.0,
    )  # fmt: skip
    assert (m["sent"], m["sendStatus"]) == (1000, {"SEND_OK": 1000})
    assert median_result(runs[:1]) is runs[0]
    assert parse_args([]).rounds == 1
