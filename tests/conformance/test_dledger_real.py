"""The real 4.9.3 DLedger group: election, a send through the leader, a leader cut off and a
leader killed, and every DLedger frame between the real nodes decoded with mqlab's codec.

Mirrors no RocketMQ class: it checks ``mqlab.conformance.dledger_group`` (three brokers with
``enableDLegerCommitLog=true``, one JVM each, and a name server) and the frames its relay
(``mqlab.conformance.dledger_capture``) records between them. What the frames carry is
DLedger 0.2.3's RPC as 4.9.3's store runs it: ``DLedgerRpcNettyService`` wraps each request
(``VoteRequest``, ``HeartBeatRequest``, ``PushEntryRequest``...) as a fastjson body of a
``RemotingCommand`` with a ``DLedgerRequestCode``; docs/dledger.md.

One group for the module, its tests in order (each leaves the group as the next expects).
Nothing is timed: waits poll the name server until it says what the step needs.
"""

from __future__ import annotations

import base64
import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqlab.common.message_decoder import decode_message_id, decodes
from mqlab.conformance.dledger_capture import frame_record, write_frames
from mqlab.conformance.dledger_group import RealDLedgerGroup
from mqlab.conformance.real_cluster import RealClusterError
from mqlab.conformance.wire import call_sync, send_v2, wait_until
from mqlab.dledger.dledger_entry import BODY_OFFSET
from mqlab.dledger.protocol import DLedgerRequestCode, DLedgerResponseCode, PushEntryType
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import CreateTopicRequestHeader, PullMessageRequestHeader

pytestmark = pytest.mark.conformance

#: ``DLedgerRequestCode`` and ``DLedgerResponseCode`` (DLedger 0.2.3), as mqlab.dledger has them
Q = DLedgerRequestCode
R = DLedgerResponseCode
#: ``DLedgerResponseCode.SUCCESS``: every DLedger response frame's own code
#: (``DLedgerRpcNettyService#handleResponse``); the answer's code is in its body
DLEDGER_SUCCESS = R.SUCCESS
#: ``DLedgerEntry.BODY_OFFSET`` (48): an entry's header before the message it carries
ENTRY_HEADER = BODY_OFFSET
TOPIC = "DLedgerTopic"
QUEUES = 4


@pytest.fixture(scope="module")
def group(
    java_runner: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealDLedgerGroup]:
    g = RealDLedgerGroup(tmp_path_factory.mktemp("dledger"), capture=True)
    try:
        g.start()
    except RealClusterError as e:
        pytest.fail(str(e))
    try:
        yield g
    finally:
        g.stop()
        dump = os.environ.get("MQLAB_DLEDGER_DUMP")
        if dump and g.capture is not None:  # every frame of the run, for reading it after
            write_frames(Path(dump), _records(g))


def _records(group: RealDLedgerGroup) -> list[dict]:
    assert group.capture is not None
    return [frame_record(f) for f in group.capture.frames()]


def _answers(records: list[dict]) -> dict[tuple[str, str, int], dict]:
    """Each response by (its sender, its receiver, opaque): requests pair with them."""
    return {(r["src"], r["dst"], r["opaque"]): r for r in records if r["kind"] == "response"}


def _pushes(records: list[dict], type_: str) -> list[dict]:
    return [r for r in records if r["code"] == Q.PUSH and r["body"]["type"] == type_]


def _create_topic(addr: str) -> None:
    header = CreateTopicRequestHeader(
        topic=TOPIC, default_topic="TBW102", read_queue_nums=QUEUES, write_queue_nums=QUEUES,
        perm=6, topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False,
    )  # fmt: skip
    req = RemotingCommand.create_request(
        RequestCode.UPDATE_AND_CREATE_TOPIC, header.to_ext_fields()
    )
    assert call_sync(addr, req).code == 0


_SEQ = itertools.count()


def _send(addr: str, body: bytes, timeout: float = 15) -> RemotingCommand:
    return send_v2(addr, TOPIC, body, group="dledger_producer", queue_id=next(_SEQ) % QUEUES,
                   timeout=timeout)  # fmt: skip


def _consume_all(
    addr: str, answers: list[tuple[int, int, str | None]] | None = None
) -> list[bytes]:
    """Every message in the topic's queues on ``addr``, pulled from offset 0 (PullSysFlag 4:
    FLAG_SUBSCRIPTION, no FLAG_SUSPEND, so no long poll);
    each pull's (queue, code, remark) goes to ``answers``."""
    bodies: list[bytes] = []
    for q in range(QUEUES):
        offset = 0
        while True:
            pull = PullMessageRequestHeader(
                consumer_group="dledger_consumer", topic=TOPIC, queue_id=q, queue_offset=offset,
                max_msg_nums=32, sys_flag=4, commit_offset=0, suspend_timeout_millis=0,
                subscription="*", sub_version=0, expression_type="TAG",
            )  # fmt: skip
            resp = call_sync(
                addr, RemotingCommand.create_request(RequestCode.PULL_MESSAGE, pull.to_ext_fields())
            )
            if answers is not None:
                answers.append((q, resp.code, resp.remark))
            if resp.code != 0:  # 19 PULL_NOT_FOUND, 20 PULL_RETRY_IMMEDIATELY (offset moved)
                break
            bodies += [m.body for m in decodes(resp.body)]
            offset = int(resp.ext("nextBeginOffset"))
    return bodies


def _wait_consumed(
    addr: str, want: list[bytes], timeout_s: float = 60, *, maybe: frozenset[bytes] = frozenset()
) -> None:
    """Pull everything from ``addr`` until it is ``want`` (in any order), besides any of
    ``maybe`` (sent, not acknowledged: a send may be stored although its answer was not
    SEND_OK): the consume queues are built from committed entries by the reput thread, a
    little after the commit."""
    last: list[object] = []

    def done() -> bool:
        answers: list[tuple[int, int, str | None]] = []
        got = _consume_all(addr, answers)
        last[:] = [got, answers]
        return sorted(b for b in got if b not in maybe or b in want) == sorted(want)

    try:
        wait_until(done, timeout_s, f"{len(want)} messages consumable from {addr}", pause_s=0.5)
    except TimeoutError as e:
        raise AssertionError(f"{e}; last pulls: {last}") from None


def _send_until_ok(addr: str, prefix: bytes, timeout_s: float = 60) -> tuple[bytes, list[bytes]]:
    """Send ``prefix try N`` (N = 0, 1...) until one is SEND_OK (a new master can refuse its
    first sends); the acknowledged body and the bodies sent before it."""
    bodies: list[bytes] = []

    def ok() -> bool:
        bodies.append(prefix + b" try %d" % len(bodies))
        try:
            return _send(addr, bodies[-1]).code == 0
        except (OSError, TimeoutError):
            return False

    wait_until(ok, timeout_s, f"a SEND_OK from {addr}", pause_s=0.2)
    return bodies[-1], bodies[:-1]


# -- 1. the election -------------------------------------------------------------------


def test_group_elects_one_leader_listed_as_broker_id_0(group: RealDLedgerGroup) -> None:
    """The name server lists the leader at brokerId 0 and follower ``n<i>`` at ``i + 1``
    (``DLedgerCommitLog``'s id), each at its own broker port; the leader won its term with
    VOTE requests one peer ACCEPTed, and every HEART_BEAT of that term comes from it."""
    table = group.wait_registered()
    leader = group.leader()
    assert leader is not None
    want = {0: group.nodes[leader].broker_addr}
    want |= {int(i[1:]) + 1: n.broker_addr for i, n in group.nodes.items() if i != leader}
    assert table == want

    # a node registers as a SLAVE already as a candidate (DLedgerRoleChangeHandler), before
    # the leader's first heartbeat reaches it: wait for one to each follower
    followers = set(group.ids) - {leader}
    wait_until(lambda: {r["dst"] for r in _records(group) if r["code"] == Q.HEART_BEAT} >= followers,
               30, "a HEART_BEAT to each follower")  # fmt: skip
    records = _records(group)
    answers = _answers(records)
    votes = [r for r in records if r["kind"] == "request" and r["code"] == Q.VOTE]
    won = [
        v for v in votes
        if v["src"] == leader
        and answers.get((v["dst"], v["src"], v["opaque"]), {}).get("body", {}).get("voteResult")
        == "ACCEPT"
    ]  # fmt: skip
    assert won, "no VOTE request of the leader was accepted"
    term = max(v["body"]["term"] for v in won)
    beats = [r for r in records if r["code"] == Q.HEART_BEAT and r["body"]["term"] == term]
    assert beats
    assert {(b["src"], b["body"]["leaderId"], b["body"]["localId"]) for b in beats} == {
        (leader, leader, leader)
    }
    assert {b["dst"] for b in beats} == followers


# -- 2. one message through the leader ---------------------------------------------------


def test_send_to_leader_is_send_ok_compared_truncated_committed_and_consumable(
    group: RealDLedgerGroup,
) -> None:
    """SEND_MESSAGE_V2 to the brokerId-0 address: SEND_OK at queue offset 0, its msgId's
    commit-log offset 48 (the message sits after entry 0's 48-byte header). The leader's
    pusher for each follower starts in COMPARE state (``DLedgerEntryPusher``): it PUSHes a
    COMPARE of entry 0, answered 406 INCONSISTENT_STATE with the follower's endIndex -1, then a
    TRUNCATE carrying entry 0 (the message's bytes as its body), answered 200 with beginIndex
    and endIndex 0, then COMMITs with commitIndex 0. A pull from the leader returns the body."""
    leader = group.leader()
    assert leader is not None
    for node in group.nodes.values():
        _create_topic(node.broker_addr)
    resp = _send(group.nodes[leader].broker_addr, b"first through the leader")
    assert (resp.code, resp.remark) == (0, None)
    assert resp.ext("queueOffset") == "0"
    assert decode_message_id(resp.ext("msgId")) == (group.nodes[leader].broker_addr, ENTRY_HEADER)
    followers = set(group.ids) - {leader}

    def committed() -> bool:
        """A COMMIT of index 0 to each follower, and the answers to the pushes up to it (the
        relay records an answer when it passes, after the next request may have)."""
        records = _records(group)
        commits = [c for c in _pushes(records, "COMMIT") if c["body"]["commitIndex"] == 0]
        if {c["dst"] for c in commits} != followers:
            return False
        answers = _answers(records)
        return all(
            (p["dst"], leader, p["opaque"]) in answers
            for f in followers
            for p in [r for r in records if r["code"] == Q.PUSH and r["dst"] == f][:3]
        )

    wait_until(committed, 30, "a COMMIT of index 0 to each follower, and the answers")
    records = _records(group)
    answers = _answers(records)
    for f in sorted(followers):
        pushes = [r for r in records if r["code"] == Q.PUSH and r["dst"] == f]
        assert [p["body"]["type"] for p in pushes[:3]] == ["COMPARE", "TRUNCATE", "COMMIT"]
        compare, truncate, commit = pushes[:3]
        assert compare["body"]["entry"]["index"] == truncate["body"]["entry"]["index"] == 0
        assert compare["body"]["commitIndex"] == -1 and commit["body"]["commitIndex"] == 0
        said = [answers[(f, leader, p["opaque"])]["body"] for p in pushes[:3]]
        assert [(a["code"], a["beginIndex"], a["endIndex"]) for a in said] == [
            (R.INCONSISTENT_STATE, -1, -1), (DLEDGER_SUCCESS, 0, 0), (DLEDGER_SUCCESS, 0, 0),
        ]  # fmt: skip
    entry = truncate["body"]["entry"]
    message = base64.b64decode(entry["body"])
    assert (entry["magic"], entry["pos"], entry["size"]) == (1, 0, ENTRY_HEADER + len(message))
    (msg,) = decodes(message)
    assert (msg.topic, msg.body, msg.commit_log_offset) == (
        TOPIC, b"first through the leader", ENTRY_HEADER,
    )  # fmt: skip
    _wait_consumed(group.nodes[leader].broker_addr, [b"first through the leader"])


# -- 3. the leader cut off: its uncommitted entry truncated -------------------------------


def test_leader_cut_off_loses_its_uncommitted_entry_to_a_truncate(group: RealDLedgerGroup) -> None:
    """The leader cut off from both peers by a silent partition (no packet crosses either
    way; the connections stay open, so nothing tells any node): a send to it answers
    SYSTEM_ERROR "broker busy" (no quorum ack within 2.5 s). It goes on sending heartbeats on
    its open connections, which nothing answers. The followers stand in its term, are
    refused, and each round waits out its vote latch (2000 ms and more) for the old leader's
    answer, which never comes: the new leader's first two VOTEs to it are 2 s apart or more,
    as mqlab's simulator has it (LinkConfig.silent). After the heal the new leader COMPAREs
    and then TRUNCATEs the old leader's log back to the committed entry 0, and the
    unacknowledged message is never consumed. The relay held what was sent into the cut, as
    the senders' kernels would, and lets it go at TCP's first retransmission after the heal:
    each peer answers every stale heartbeat of the old leader EXPIRED_TERM with its new
    term, as lesson 14's simulated nodes do."""
    old = group.leader()
    assert old is not None and group.capture is not None
    peers = sorted(set(group.ids) - {old})
    term = [r for r in _records(group) if r["code"] == Q.HEART_BEAT and r["src"] == old][-1][
        "body"
    ]["term"]
    for peer in peers:
        group.capture.block(old, peer, silent=True)
        group.capture.block(peer, old, silent=True)
    try:
        resp = _send(group.nodes[old].broker_addr, b"never acknowledged", timeout=30)
        # DLedger's WAIT_QUORUM_ACK_TIMEOUT (maxWaitAckTimeMs 2500) is OS_PAGECACHE_BUSY in
        # DLedgerCommitLog#asyncPutMessage, which SendMessageProcessor answers SYSTEM_ERROR
        assert (resp.code, resp.remark) == (
            1, "[PC_SYNCHRONIZED]broker busy, start flow control for a while",
        )  # fmt: skip
        new = group.wait_leader(other_than=old)
        lost = [frame_record(f) for f in group.capture.held()]
    finally:
        for peer in peers:
            group.capture.unblock(old, peer)
            group.capture.unblock(peer, old)
    beats = [r for r in lost if r["code"] == Q.HEART_BEAT and r["src"] == old]
    assert {p: sum(r["dst"] == p for r in beats) >= 2 for p in peers} == dict.fromkeys(peers, True)
    votes = [r for r in lost if r["code"] == Q.VOTE and (r["src"], r["dst"]) == (new, old)]
    assert [r["body"]["term"] for r in votes[:2]] == [term, term + 1]
    # the relay's clock reads the frames a little late or early: 100 ms of slack
    assert votes[1]["t_ms"] - votes[0]["t_ms"] >= 1900

    def truncated() -> bool:  # the TRUNCATE from the new leader and its answer
        records = _records(group)
        answers = _answers(records)
        return any(
            (t["src"], t["dst"]) == (new, old) and (old, new, t["opaque"]) in answers
            for t in _pushes(records, "TRUNCATE")
        )

    wait_until(truncated, 60, f"a TRUNCATE from {new} to {old}")
    records = _records(group)
    trunc = next(t for t in _pushes(records, "TRUNCATE") if (t["src"], t["dst"]) == (new, old))
    assert trunc["body"]["entry"]["index"] == 0
    answers = _answers(records)
    compared = [
        answers[(old, new, c["opaque"])]["body"]
        for c in _pushes(records, "COMPARE")
        if (c["src"], c["dst"]) == (new, old) and c["seq"] < trunc["seq"]
        and (old, new, c["opaque"]) in answers
    ]  # fmt: skip
    # the old leader has entry 0 as the new one has, and one more: SUCCESS, its log 0..1
    assert {(a["code"], a["beginIndex"], a["endIndex"]) for a in compared} == {
        (DLEDGER_SUCCESS, 0, 1)
    }
    answer = answers[(old, new, trunc["opaque"])]
    assert (answer["body"]["code"], answer["body"]["endIndex"]) == (DLEDGER_SUCCESS, 0)

    def stale_answers() -> list[tuple[str, int, int]] | None:
        """The peers' answers to the old leader's held heartbeats, once each peer has
        answered one (a connection the cut let open but never answered is closed at the
        heal, and what it held goes nowhere)."""
        answers = _answers(_records(group))
        got = [answers[k] for b in beats if (k := (b["dst"], old, b["opaque"])) in answers]
        if {a["src"] for a in got} != set(peers):
            return None
        return [(a["src"], a["body"]["code"], a["body"]["term"]) for a in got]

    found: list = []
    wait_until(lambda: bool(found.append(stale_answers()) or found[-1]), 60,
               "the peers' answers to the old leader's heartbeats held by the cut")  # fmt: skip
    new_term = [r for r in _records(group) if r["code"] == Q.HEART_BEAT and r["src"] == new][-1][
        "body"
    ]["term"]
    assert {(code, t) for _, code, t in found[-1]} == {(DLedgerResponseCode.EXPIRED_TERM, new_term)}
    group.wait_registered()
    _wait_consumed(group.leader_addr(), [b"first through the leader"])


# -- 4. the leader killed --------------------------------------------------------------


def test_leader_killed_a_new_broker_id_0_takes_sends_and_nothing_acknowledged_is_lost(
    group: RealDLedgerGroup,
) -> None:
    """kill -9 of the leader: another node is listed at brokerId 0, a send to it is SEND_OK,
    and every message acknowledged before and after the kill is consumed from it."""
    leader = group.leader()
    assert leader is not None
    acked = [b"first through the leader"]
    for i in range(8):
        resp = _send(group.nodes[leader].broker_addr, b"before-%d" % i)
        assert resp.code == 0
        acked.append(b"before-%d" % i)
    group.kill(leader)
    new = group.wait_leader(other_than=leader)
    assert new != leader
    addr = group.nodes[new].broker_addr
    first, refused = _send_until_ok(addr, b"after-0")
    acked.append(first)
    for i in range(1, 8):
        assert _send(addr, b"after-%d" % i).code == 0
        acked.append(b"after-%d" % i)
    _wait_consumed(addr, acked, maybe=frozenset(refused))


def test_killed_node_restarts_on_its_store_and_rejoins_as_follower(group: RealDLedgerGroup) -> None:
    """The killed node restarted on its store: registered again as a follower (brokerId
    ``i + 1``); the leader COMPAREs with it and then APPENDs from where the logs agree."""
    dead = [i for i, n in group.nodes.items() if not n.running]
    assert len(dead) == 1
    (node,) = dead
    assert group.capture is not None
    before = len(group.capture.frames())
    group.restart(node)
    table = group.wait_registered()
    leader = group.leader()
    assert leader is not None and leader != node
    assert table[int(node[1:]) + 1] == group.nodes[node].broker_addr

    def to_node(type_: str) -> list[dict]:
        return [
            r for r in _pushes(_records(group)[before:], type_)
            if (r["src"], r["dst"]) == (leader, node)
        ]  # fmt: skip

    wait_until(lambda: bool(to_node("COMPARE")) and bool(to_node("APPEND")), 60,
               f"a COMPARE, then an APPEND, from {leader} to {node}")  # fmt: skip
    assert to_node("COMPARE")[0]["seq"] < to_node("APPEND")[0]["seq"]


# -- 5. the frames, decoded ------------------------------------------------------------


def test_every_recorded_frame_decodes_and_its_codes_are_dledgers(group: RealDLedgerGroup) -> None:
    """Each frame between real nodes decodes with mqlab's codec (JSON header, version 399,
    language JAVA, no extFields, a fastjson body); requests carry DLedgerRequestCode VOTE,
    HEART_BEAT or PUSH, responses the code 200 and the request's opaque; PUSH bodies were of
    the four types APPEND, COMMIT, COMPARE and TRUNCATE."""
    assert group.capture is not None and group.capture.errors == []
    records = _records(group)
    assert records
    for r in records:
        cmd = RemotingCommand.decode(base64.b64decode(r["frame"]))
        assert (cmd.serialize_type, cmd.version, cmd.language) == (0, 399, "JAVA")
        assert cmd.ext_fields is None and cmd.remark is None
        assert r["body"] is not None
    requests = [r for r in records if r["kind"] == "request"]
    assert {r["code"] for r in requests} == {Q.VOTE, Q.HEART_BEAT, Q.PUSH}
    assert {r["flag"] for r in requests} == {0}
    responses = [r for r in records if r["kind"] == "response"]
    assert {(r["code"], r["flag"]) for r in responses} == {(DLEDGER_SUCCESS, 1)}
    opaques = {(r["src"], r["dst"], r["opaque"]) for r in requests}
    assert all((r["dst"], r["src"], r["opaque"]) in opaques for r in responses)
    assert {r["body"]["type"] for r in requests if r["code"] == Q.PUSH} == {
        t.value for t in PushEntryType
    }
