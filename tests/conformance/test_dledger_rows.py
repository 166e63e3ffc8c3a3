"""Conformance rows across a DLedger leader kill (``mqlab.conformance.dledger_rows``): a real
4.9.3 DLedger group of three brokers and ``mqlab serve --dledger-brokers 3``, asked the same
requests before, during and after the leader ``n0`` is killed; no UNEXPLAINED row, and the
real broker's answers pinned with exact codes, offsets and brokerIds.

What 4.9.3 answers (``SendMessageProcessor``, ``DLedgerRoleChangeHandler``,
``RouteInfoManager``, ``SlaveSynchronize``): a follower's broker is a SLAVE and refuses
sends with SERVICE_NOT_AVAILABLE (14), before the kill, while the group elects and after; the
dead leader's address refuses the connection; the name server lists the leader at brokerId
0 and follower ``n<i>`` at ``i + 1``, no brokerId 0 between the kill and the new leader's
registration; the new master has the queue offsets and the consumer offset committed on the
old one (copied by its SlaveSynchronize before the kill), and its sends go on at queue offset
1. One group pair for the module (4 JVMs); the compare rules it adds are tested without Java.
"""

from __future__ import annotations

import re

import pytest

from mqlab.conformance.compare import SideEnv, classify, compare_answers
from mqlab.remoting.command import RemotingCommand

# -- the rules, without Java -------------------------------------------------------------------

REAL = SideEnv("127.0.0.1:1000", "127.0.0.1:9000",
               node_addrs=(("n0", "127.0.0.1:1000"), ("n1", "127.0.0.1:1010")))  # fmt: skip
MQ = SideEnv("127.0.0.1:2000", "127.0.0.1:9100",
             node_addrs=(("n0", "127.0.0.1:2000"), ("n1", "127.0.0.1:2010")))  # fmt: skip


def _answer(ext: dict[str, str] | None = None, body: bytes | None = None, remark=None):
    cmd = RemotingCommand.create_response(0, remark)
    cmd.ext_fields = ext
    cmd.body = body
    return cmd


def test_each_nodes_address_is_masked_as_that_node() -> None:
    """``{2: n1}`` on both sides: masked; n1 on one side against n0 on the other: not."""
    same = compare_answers(106, _answer(body=b'{"a":{0:"127.0.0.1:1000",2:"127.0.0.1:1010"}}'),
                           _answer(body=b'{"a":{0:"127.0.0.1:2000",2:"127.0.0.1:2010"}}'),
                           None, None)  # fmt: skip
    assert [d.rule for d in classify(same, REAL, MQ)] == ["broker-address", "broker-address"]
    swapped = compare_answers(106, _answer(body=b'{"a":{2:"127.0.0.1:1010"}}'),
                              _answer(body=b'{"a":{2:"127.0.0.1:2000"}}'), None, None)  # fmt: skip
    assert [d.rule for d in classify(swapped, REAL, MQ)] == [None]


def test_a_message_id_is_masked_when_the_same_node_stored_it_at_the_same_offset() -> None:
    def msg_id(port: int, offset: int) -> str:
        return f"7F000001{port:08X}{offset:016X}"

    def rules(a: str, b: str) -> list[str | None]:
        diffs = compare_answers(310, _answer({"msgId": a}), _answer({"msgId": b}), None, None)
        return [d.rule for d in classify(diffs, REAL, MQ)]

    assert rules(msg_id(1010, 0x30), msg_id(2010, 0x30)) == ["offset-msg-id"]
    assert rules(msg_id(1010, 0x30), msg_id(2000, 0x30)) == [None]  # n1 against n0
    assert rules(msg_id(1010, 0x30), msg_id(2010, 0xE4)) == [None]  # another offset


def test_a_refused_connection_on_both_sides_is_the_same_answer() -> None:
    real = "not sent: ConnectionRefusedError(111, 'Connection refused')"
    mq = "not sent: ConnectionRefusedError(111, 'Connection refused')"
    assert compare_answers(310, None, None, real, mq) == []
    other = compare_answers(310, None, _answer({"queueId": "0"}), real, None)
    assert [d.path for d in other] == ["answer"]


def test_disk_util_masks_a_directory_not_created_yet() -> None:
    """SendMessageProcessor#diskUtil gives -1.00 for a path that does not exist (seen for a
    real follower's index)."""
    text = ("service not available now. It may be caused by one of the following reasons: the "
            "broker's disk is full [CL: {} CQ: {} INDEX: {}], messages are put to the slave, "
            "message store has been shut down, etc.")  # fmt: skip
    real = _answer(remark=text.format(" 0.39", " 0.39", "-1.00"))
    mq = _answer(remark=text.format(" 0.00", " 0.00", " 0.00"))
    assert [d.rule for d in classify(compare_answers(310, real, mq, None, None), REAL, MQ)] == [
        "disk-util"
    ]


# -- the rows, both groups ---------------------------------------------------------------------

#: step -> (the real broker's code, ext fields it must carry); None: no connection
REAL_ANSWERS: dict[str, tuple[int | None, dict[str, str]]] = {
    "create_n0": (0, {}), "create_n1": (0, {}), "create_n2": (0, {}),
    "send_leader_q0": (0, {"queueId": "0", "queueOffset": "0"}),
    "send_leader_q1": (0, {"queueId": "1", "queueOffset": "0"}),
    "send_leader_q2": (0, {"queueId": "2", "queueOffset": "0"}),
    "send_follower": (14, {}),
    "batch_leader_q3": (0, {"queueId": "3", "queueOffset": "0"}),
    "batch_follower": (14, {}),
    "batch_delayed": (13, {}),
    "batch_too_big": (1, {}),
    "pull_batch_leader": (0, {"nextBeginOffset": "3", "maxOffset": "3", "suggestWhichBrokerId": "0"}),
    "cluster_before": (0, {}), "route_before": (0, {}),
    "commit_offset": (0, {}), "offset_leader": (0, {"offset": "1"}),
    "max_offset_follower": (0, {"offset": "1"}), "offset_follower": (0, {"offset": "1"}),
    "pull_follower": (0, {"nextBeginOffset": "1", "maxOffset": "1", "suggestWhichBrokerId": "0"}),
    "send_dead_leader": (None, {}),
    "cluster_no_master": (0, {}), "route_no_master": (0, {}),
    "send_follower_no_master": (14, {}),
    "max_offset_new_leader": (0, {"offset": "1"}), "offset_new_leader": (0, {"offset": "1"}),
    "pull_new_leader": (0, {"nextBeginOffset": "1", "maxOffset": "1", "suggestWhichBrokerId": "0"}),
    "pull_batch_new_leader": (0, {"nextBeginOffset": "3", "maxOffset": "3",
                                  "suggestWhichBrokerId": "0"}),
    "send_new_leader_q0": (0, {"queueId": "0", "queueOffset": "1"}),
    "send_new_leader_q1": (0, {"queueId": "1", "queueOffset": "1"}),
    "send_new_leader_q3": (0, {"queueId": "3", "queueOffset": "3"}),
    "batch_new_leader_q2": (0, {"queueId": "2", "queueOffset": "1"}),
    "send_survivor": (14, {}),
    "max_offset_after": (0, {"offset": "2"}),
    "cluster_after": (0, {}), "route_after": (0, {}),
    "send_dead_again": (None, {}),
}  # fmt: skip
SLAVE_REMARK = re.compile(
    r'remark="service not available now\. It may be caused by one of the following reasons: '
    r"the broker's disk is full \[CL: +-?[\d.]+ CQ: +-?[\d.]+ INDEX: +-?[\d.]+\], messages "
    r'are put to the slave, message store has been shut down, etc\."'
)


@pytest.fixture(scope="module")
def rows(java_runner, tmp_path_factory):
    """Both groups, the rows asked; the groups stay up (n0 dead, n1 leading) for the module."""
    from mqlab.conformance.dledger_rows import dledger_sides, run_rows

    lines: list[str] = []
    with dledger_sides(tmp_path_factory.mktemp("dledger-rows"), lines.append) as (real, mq):
        result, notes = run_rows(real, mq)
        yield {r.step: r for r in result.rows}, result, notes, lines, real, mq


def _code(text: str) -> int | None:
    m = re.match(r"code=(-?\d+)", text)
    return None if m is None else int(m.group(1))


def _ext(text: str) -> dict[str, str]:
    m = re.search(r" ext=\{([^}]*)\}", text)
    return {} if m is None else dict(kv.split("=", 1) for kv in m.group(1).split(", "))


def _ids(text: str) -> list[int]:
    """The brokerIds of the first ``brokerAddrs`` in a described body."""
    m = re.search(r'"brokerAddrs":\{([^}]*)\}', text)
    assert m is not None, text
    return sorted(int(k) for k in re.findall(r'"?(\d+)"?:"', m.group(1)))


def check_rows(by_step, result, notes: list[str], lines: list[str], steps) -> None:
    """No UNEXPLAINED row, no wait that gave up, and a row for each of ``steps`` in order
    (also for tests/conformance/test_dledger_upgrade.py)."""
    bad = [f"{r.step}: {[(d.path, d.real, d.mqlab) for d in r.unexplained]}"
           for r in result.rows if r.unexplained]  # fmt: skip
    assert bad == [] and notes == [], "\n".join(bad + notes + lines)
    assert list(by_step) == list(steps)


@pytest.mark.conformance
def test_no_unexplained_row_and_no_wait_gave_up(rows) -> None:
    by_step, result, notes, lines, _, _ = rows
    check_rows(by_step, result, notes, lines, REAL_ANSWERS)


@pytest.mark.conformance
def test_the_real_groups_answers_code_by_code(rows) -> None:
    by_step = rows[0]
    for step, (code, ext) in REAL_ANSWERS.items():
        text = by_step[step].real
        if code is None:
            assert text.startswith("<no answer: not sent: ConnectionRefusedError"), (step, text)
            continue
        assert _code(text) == code, (step, text)
        got = _ext(text)
        assert {k: got.get(k) for k in ext} == ext, (step, text)
        if code == 14:  # the remark as repr() wrote it: in double quotes (it has a ')
            assert SLAVE_REMARK.search(text), (step, text)


@pytest.mark.conformance
def test_broker_ids_before_during_and_after_the_change(rows) -> None:
    """The leader at 0 and follower n<i> at i + 1; no 0 while the group elects; n1 at 0 after
    (the cluster info and the topic's route agree)."""
    by_step = rows[0]
    for when, ids in (("before", [0, 2, 3]), ("no_master", [2, 3]), ("after", [0, 3])):
        assert _ids(by_step[f"cluster_{when}"].real) == ids
        assert _ids(by_step[f"route_{when}"].real) == ids
        assert _ids(by_step[f"cluster_{when}"].mqlab) == ids


@pytest.mark.conformance
@pytest.mark.slow
def test_bench_smoke_on_both_groups_after_the_change(rows, tmp_path) -> None:
    """``bench real --group dledger``'s load in miniature, on the groups the rows left (n1
    leading, n2 following, n0 dead: a majority of three): ``JavaBench`` (the Java 4.9.3
    client) sends 200 warm-up and 20 measured messages from one thread; every one SEND_OK
    and consumed. Nothing timed."""
    from mqlab.bench.real import run_java_bench, send_ok_problems

    *_, real, mq = rows
    for side in (real, mq):
        cpu0 = side.cpu_seconds()
        r = run_java_bench(side.namesrv_addr, "BenchTiny", 1, 20, tmp_path / side.name)
        assert (r["warmup"], r["sent"], r["failed"], r["consumed"]) == (200, 20, 0, 20)
        assert send_ok_problems(r, 20) == []
        assert side.cpu_seconds() > cpu0


@pytest.mark.conformance
def test_a_batch_is_an_entry_a_message_with_its_own_properties_only(rows) -> None:
    """``DLedgerCommitLog#asyncPutMessages``, on both groups: a msgId for each message. The
    group's data files are 1 KiB: the batch's first message is at 0x2F4 (its entry ends at
    922), the second does not fit in the 102 bytes left with 8 to spare, so file 0 ends in
    a blank and the entry starts file 1024 (its message at 0x430), the third follows 214
    bytes on (a 166-byte message and DLedger's 48-byte entry header). The pull reads 3 × 166
    bytes across the two files, so no message stored the batch's CLUSTER or WAIT (24 and 10
    bytes more each, as ``CommitLog`` stores them). A stored message over maxMessageSize
    (951 of 900 bytes) whose batch body is under it (863): the serializer's
    RuntimeException."""
    by_step = rows[0]
    for side in ("real", "mqlab"):
        for step, want in (("batch_leader_q3", [0x2F4, 0x430, 0x506]),
                           ("batch_new_leader_q2", [0x91C, 0x9F2])):  # fmt: skip
            ids = _ext(getattr(by_step[step], side))["msgId"].split(",")
            assert [int(i[-16:], 16) for i in ids] == want, (step, side)
        for step in ("pull_batch_leader", "pull_batch_new_leader"):
            assert " body[498]=" in getattr(by_step[step], side), (step, side)
        assert getattr(by_step["batch_too_big"], side).startswith(
            "code=1 remark='java.lang.RuntimeException: message size exceeded, org.apache."
            "rocketmq.store.dledger.DLedgerCommitLog$MessageSerializer.serialize("
            "DLedgerCommitLog.java:908)'"
        ), side
