"""How ``mqlab.bench.load`` counts losses and attributes duplicates (synthetic runs)."""

from pathlib import Path

from mqlab.bench.load import RunData, _queue_adds, analyse

S = 1_000_000_000  # ns


def send(key: str, tag: str, status: int = 0, t0: int = 0) -> dict:
    return {"k": key, "tag": tag, "s": status, "t0": t0, "t1": t0 + 2_000_000}


def d(key: str, tag: str, q: int, o: int, t: int) -> dict:
    return {"k": key, "tag": tag, "q": q, "o": o, "t": t}


def run_data() -> RunData:
    """Kill at 10 s, ready at 11 s; group All persisted offset 5 on queue 0 at the kill."""
    return RunData(
        sends=[
            send("a", "TagA", t0=1 * S),
            send("b", "TagB", t0=2 * S),
            send("c", "TagC", t0=3 * S),
            send("x", "TagA", status=-1, t0=10 * S),  # failed: not acknowledged
            send("late", "TagA", t0=12 * S),
        ],
        deliveries={
            "BenchLoadAll": {
                "All-0": [
                    d("a", "TagA", 0, 6, 4 * S),
                    d("b", "TagB", 0, 7, 5 * S),
                    d("c", "TagC", 1, 3, 6 * S),
                    d("a", "TagA", 0, 6, 13 * S),  # after the restart, offset 6 >= 5
                    d("c", "TagC", 1, 3, 14 * S),  # same consumer, queue 1 re-taken at 13.5 s
                    d("late", "TagA", 0, 9, 15 * S),
                ],
                "All-1": [d("b", "TagB", 0, 7, 8 * S)],  # before the kill, another consumer
            },
            "BenchLoadAB": {
                "AB-0": [
                    d("a", "TagA", 2, 1, 4 * S),
                    d("a", "TagA", 2, 1, 7 * S),  # same consumer, no re-take: unexplained
                    d("c", "TagC", 3, 0, 5 * S),  # the filter let TagC through
                    d("b", "TagB", 2, 2, 5 * S),
                    d("b", "TagB", 3, 4, 6 * S),  # the key stored twice
                ],
            },
        },
        queue_adds={"BenchLoadAll": {"All-0": [(0, 0), (0, 1), (int(13.5 * S), 1)]}},
        persisted_at_kill={"BenchLoad@BenchLoadAll": {0: 5, 1: 4}},
        t_kill_ns=10 * S,
        t_ready_ns=11 * S,
    )


def test_losses_filter_violations_and_duplicates_by_cause():
    rep = analyse(run_data())
    assert (rep["sent"], rep["acknowledged"], rep["failed_sends"]) == (5, 4, 1)
    # AB never received "late" (TagA, acknowledged); All received everything.
    assert rep["lost_by_group"] == {"BenchLoadAll": 0, "BenchLoadAB": 1}
    assert (rep["lost"], rep["lost_keys"]) == (1, ["late"])
    assert rep["filter_violations"] == {"BenchLoadAll": 0, "BenchLoadAB": 1}
    assert rep["duplicates_by_group"] == {
        "BenchLoadAll": {"offset_not_persisted": 1, "rebalance": 2, "send_retry": 0,
                         "unexplained": 0},
        "BenchLoadAB": {"offset_not_persisted": 0, "rebalance": 0, "send_retry": 1,
                        "unexplained": 1},
    }  # fmt: skip
    assert rep["unexplained_examples"][0]["again"]["t"] == 7 * S
    # latencies: acknowledged sends ended before the kill / started after the restart
    assert rep["send_latency_ms"]["before_kill"] == {"n": 3, "p50": 2.0, "p99": 2.0}
    assert rep["send_latency_ms"]["after_restart"] == {"n": 1, "p50": 2.0, "p99": 2.0}


def test_a_redelivery_before_the_persisted_offset_across_the_kill_is_not_excused():
    data = run_data()
    data.persisted_at_kill = {"BenchLoad@BenchLoadAll": {0: 7, 1: 4}}  # offset 6 < 7
    rep = analyse(data)
    # "a" again on the same consumer, queue 0 not re-taken: nothing explains it.
    assert rep["duplicates_by_group"]["BenchLoadAll"]["unexplained"] == 1
    assert rep["duplicates_by_group"]["BenchLoadAll"]["offset_not_persisted"] == 0


def test_queue_adds_are_read_from_the_cpp_client_log(tmp_path: Path):
    log = tmp_path / "4242_rocketmq-cpp.log.0"
    log.write_text(
        "[2026-Nov-26 11:52:35.598718](info):add mq:MessageQueue [topic=BenchLoad, "
        "brokerName=broker-a, queueId=3], request initiall offset:0[updateRequestTableInRebalance:528]\n"
        "[2026-Nov-26 11:52:35.646710](info):drop mq:MessageQueue [topic=BenchLoad, "
        "brokerName=broker-a, queueId=2][updateRequestTableInRebalance:461]\n"
        "[2026-Nov-26 11:52:36.000001](info):add mq:MessageQueue [topic=%RETRY%G, "
        "brokerName=broker-a, queueId=0], request initiall offset:0[x:1]\n",
        encoding="utf-8",
    )
    adds = _queue_adds(tmp_path, 4242)
    assert [q for _, q in adds] == [3]
    assert _queue_adds(tmp_path, 1) == []


def _fake_client(tmp_path: Path, name: str, script: str):
    """A ``_Client`` whose process is ``python -c script`` (no C++ library needed)."""
    import subprocess
    import sys

    from mqlab.bench import load

    c = load._Client.__new__(load._Client)
    c.name = name
    c.stop_file = tmp_path / f"{name}.stop"
    c.err = open(tmp_path / f"{name}.err", "w", encoding="utf-8")  # noqa: SIM115
    c.proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=c.err, text=True, start_new_session=True)  # fmt: skip
    return c


def test_a_stop_that_ends_inside_the_libraries_shutdown_is_told_apart(tmp_path):
    from mqlab.bench.load import SHUTDOWN_BEGINS

    said = f"print('{{\"started\": true}}', flush=True); print('{SHUTDOWN_BEGINS}', flush=True); "
    data = RunData()
    for name, then, timeout in [
        ("clean", "print('{}')", 20),
        ("segv", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", 20),
        ("hung", "import time; time.sleep(60)", 1),
    ]:
        c = _fake_client(tmp_path, name, said + then)
        c.wait_started()  # as run_load does: its stop comes later
        c.stop(data, timeout)
    _fake_client(tmp_path, "early", "import sys; print('boom', file=sys.stderr); "
                 "sys.exit(3)").stop(data, 20)  # fmt: skip
    assert set(data.stop_seconds) == {"clean", "segv", "hung", "early"}
    assert [w.split(";")[0] for w in data.library_shutdown_failures] == [
        "segv: exit -11", "hung: still running 1 s after the stop file"]  # fmt: skip
    assert data.unclean_stops == ["early: exit 3; its stderr ends 'boom\\n'"]
