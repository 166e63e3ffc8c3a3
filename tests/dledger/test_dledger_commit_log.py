"""``DLedgerCommitLog`` (RocketMQ 4.9.3) on a 3-node ``DLedgerGroup``: each node's store puts
messages as DLedger entries, answers PUT_OK once a majority has them, and builds consume
queues from committed entries only. The first message is compared byte for byte with the
entry real 4.9.3 DLedger nodes pushed (tests/fixtures/dledger/first-entry.jsonl, docs/dledger.md).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mqlab.broker.dledger_role_change_handler import DLedgerRoleChangeHandler
from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import (
    create_message_id,
    decode_stored_message,
    message_properties_to_string,
)
from mqlab.dledger.group import DLedgerGroup
from mqlab.dledger.protocol import DLedgerResponseCode
from mqlab.store.config import BrokerRole, MessageStoreConfig
from mqlab.store.default_message_store import DefaultMessageStore
from mqlab.store.dledger_commit_log import DLedgerCommitLog, status_of
from mqlab.store.status import PutMessageStatus

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dledger" / "first-entry.jsonl"
STORE_HOST = "127.0.0.1:47423"


def _recorded_first_entry() -> dict:
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["seq"] == 87:  # the leader's TRUNCATE carrying entry 0
            return json.loads(rec["bodyText"])["entry"]
    raise AssertionError("no seq 87")


def _stores(group: DLedgerGroup, tmp_path: Path) -> dict[str, DefaultMessageStore]:
    out = {}
    for node_id in group.ids:
        cfg = MessageStoreConfig(
            store_path_root_dir=str(tmp_path / node_id), enable_d_leger_commit_log=True,
            d_leger_group="default", d_leger_peers=group.peers, d_leger_self_id=node_id,
        )  # fmt: skip
        store = DefaultMessageStore(
            cfg, store_host=STORE_HOST, dledger_server=group.server(node_id)
        )
        assert store.load()
        assert isinstance(store.commit_log, DLedgerCommitLog)
        out[node_id] = store
    return out


def _msg(body: bytes, topic: str = "DLedgerTopic", queue_id: int = 0) -> MessageExtBrokerInner:
    props = {"CLUSTER": "RaftCluster"}
    return MessageExtBrokerInner(
        topic=topic, body=body, queue_id=queue_id, properties=props,
        properties_string=message_properties_to_string(props),
        born_timestamp=1, born_host="127.0.0.1:54714", store_host=STORE_HOST,
    )  # fmt: skip


@pytest.fixture
def cluster(tmp_path):
    group = DLedgerGroup(3, seed=5)
    stores = _stores(group, tmp_path)
    group.run_until(lambda: group.leader() is not None, 10_000)
    return group, stores


def test_the_first_message_is_the_recorded_entry_body_at_pos_0_offset_48(cluster) -> None:
    """The recorded entry 0 (pos 0, 181 bytes) carries a 133-byte message whose
    PHYSICALOFFSET is 0x30. The same message put through the leader's store becomes the same
    entry, body byte for byte, and the put answers wroteOffset 48 and the msgId of 48."""
    group, stores = cluster
    rec = _recorded_first_entry()
    recorded = base64.b64decode(rec["body"])
    m = decode_stored_message(recorded)
    assert (rec["pos"], rec["size"], m.commit_log_offset, m.queue_offset) == (0, 181, 0x30, 0)
    leader = group.leader()
    msg = MessageExtBrokerInner(
        topic=m.topic, body=m.body, queue_id=m.queue_id, flag=m.flag, properties=dict(m.properties),
        properties_string=recorded[-19:].decode(), born_timestamp=m.born_timestamp,
        born_host=m.born_host, store_host=m.store_host, sys_flag=m.sys_flag,
    )  # fmt: skip
    result = stores[leader].put_message(msg, m.store_timestamp)
    amr = result.append_message_result
    assert (amr.wrote_offset, amr.wrote_bytes, amr.logics_offset) == (48, 133, 0)
    assert amr.msg_id == create_message_id(m.store_host, 48)
    entry = group.server(leader).store.get(0)
    assert (entry.index, entry.pos, entry.size, entry.body) == (0, 0, 181, recorded)


def test_put_ok_only_once_a_majority_has_the_entry(cluster) -> None:
    """The leader's put waits for the quorum (``replica_request``): with both followers cut
    off it times out after maxWaitAckTimeMs 2500 ms as OS_PAGECACHE_BUSY; with them there it
    is PUT_OK once the entry is committed, and then the consume queue of every node holds
    the message at 48."""
    group, stores = cluster
    leader = group.leader()
    followers = [i for i in group.ids if i != leader]
    result = stores[leader].put_message(_msg(b"m0"), group.now)
    wait = result.replica_request
    assert wait is not None and not wait.done
    statuses: list[PutMessageStatus] = []
    wait.on_done(statuses.append)
    # nothing committed yet: the consume queues are empty on every node
    for s in stores.values():
        assert s.do_reput() == 0
        assert s.get_max_offset_in_queue("DLedgerTopic", 0) == 0
    group.run_until(lambda: wait.done, 5_000, slice_ms=1)
    assert statuses == [PutMessageStatus.PUT_OK]
    assert group.server(leader).store.committed_index == 0
    # a follower's consume queue gets it once the follower learns the commit
    group.run_until(
        lambda: all(group.server(f).store.committed_index == 0 for f in followers), 5_000
    )
    for node_id, s in stores.items():
        assert s.do_reput() == 1, node_id
        assert s.get_commit_log_offset_in_queue("DLedgerTopic", 0, 0) == 48
        got = s.look_message_by_offset(48)
        assert got is not None and got.body == b"m0" and got.commit_log_offset == 48
    # the leader cut off from both followers: WAIT_QUORUM_ACK_TIMEOUT → OS_PAGECACHE_BUSY
    group.partition([leader])
    cut = stores[leader].put_message(_msg(b"m1"), group.now)
    # entry 1 right after entry 0 (48 + 124 bytes): its message at 172 + 48
    assert (result.append_message_result.wrote_bytes, cut.append_message_result.wrote_offset) == (
        124,
        220,
    )
    t0 = group.now
    group.run_until(lambda: cut.replica_request.done, 5_000, slice_ms=1)
    assert cut.replica_request.status is PutMessageStatus.OS_PAGECACHE_BUSY
    assert group.now - t0 >= 2500
    # the statistics: the acknowledged put counted by topic, the timed-out one not at all
    # (its AppendMessageResult is PUT_OK, so not a failed put either, as in 4.9.3)
    stats = stores[leader].store_stats_service
    assert (stats.put_message_topic_times_total, stats.put_message_failed_times) == (
        {"DLedgerTopic": 1}, 0)  # fmt: skip
    assert stores[leader].do_reput() == 0  # never committed, never dispatched


def test_a_put_to_a_follower_answers_os_pagecache_busy(cluster) -> None:
    """On a follower ``handleAppend`` answers NOT_LEADER with pos -1: 4.9.3's
    DLedgerCommitLog returns OS_PAGECACHE_BUSY at once (the broker's "[PC_SYNCHRONIZED]broker
    busy" SYSTEM_ERROR); nothing is appended, the queue offset does not move."""
    group, stores = cluster
    follower = next(i for i in group.ids if i != group.leader())
    result = stores[follower].put_message(_msg(b"x"), group.now)
    assert result.put_message_status is PutMessageStatus.OS_PAGECACHE_BUSY
    assert result.replica_request is None
    assert group.server(follower).store.ledger_end_index == -1
    assert stores[follower].commit_log.topic_queue_table.get("DLedgerTopic-0") == 0
    stats = stores[follower].store_stats_service
    assert (stats.put_message_topic_times_total, stats.put_message_failed_times) == ({}, 1)


def test_response_codes_map_as_4_9_3() -> None:
    R = DLedgerResponseCode
    assert status_of(R.SUCCESS) is PutMessageStatus.PUT_OK
    for code in (R.INCONSISTENT_LEADER, R.NOT_LEADER, R.LEADER_NOT_READY, R.DISK_FULL):
        assert status_of(code) is PutMessageStatus.SERVICE_NOT_AVAILABLE
    for code in (R.WAIT_QUORUM_ACK_TIMEOUT, R.LEADER_PENDING_FULL):
        assert status_of(code) is PutMessageStatus.OS_PAGECACHE_BUSY
    assert status_of(R.UNKNOWN) is PutMessageStatus.UNKNOWN_ERROR


def test_leader_killed_a_new_leader_appends_after_the_committed_entries(cluster) -> None:
    """Three acknowledged messages, the leader killed: one of the others leads, a put there
    lands after them (pos of entry 3), and every acknowledged message is readable on it by
    its offset and from its consume queue."""
    group, stores = cluster
    old = group.leader()
    acked: list[tuple[bytes, int]] = []
    for i in range(3):
        r = stores[old].put_message(_msg(b"msg-%d" % i), group.now)
        group.run_until(lambda r=r: r.replica_request.done, 5_000, slice_ms=1)
        assert r.replica_request.status is PutMessageStatus.PUT_OK
        acked.append((b"msg-%d" % i, r.append_message_result.wrote_offset))
    # each message is 127 bytes, each entry 48 + 127
    assert r.append_message_result.wrote_bytes == 127
    assert [o for _, o in acked] == [48, 175 + 48, 2 * 175 + 48]
    group.kill(old)
    group.run_until(lambda: group.leader() not in (None, old), 20_000)
    new = group.leader()
    store = stores[new]
    # DLedgerRoleChangeHandler#changeToMaster's steps before serving: dispatch all, then
    # recoverTopicQueueTable (the handler itself is not modelled yet)
    group.run_until(lambda: group.server(new).store.committed_index == 2, 5_000)
    store.do_reput()
    store.recover_topic_queue_table()
    r = store.put_message(_msg(b"after"), group.now)
    group.run_until(lambda: r.replica_request.done, 5_000, slice_ms=1)
    assert r.replica_request.status is PutMessageStatus.PUT_OK
    amr = r.append_message_result
    entry3 = group.server(new).store.get(3)
    assert (entry3.pos, amr.wrote_offset, amr.logics_offset) == (3 * 175, 3 * 175 + 48, 3)
    store.do_reput()
    # a pull (DefaultMessageStore#getMessage) of the queue: the 4 messages, each read at
    # its entry's pos + 48 from the data file
    got = store.get_message("G", "DLedgerTopic", 0, 0, 32, None)
    assert (got.status.name, got.message_count, got.next_begin_offset) == ("FOUND", 4, 4)
    bodies = [decode_stored_message(bytes(b)).body for b in got.message_buffers]
    assert bodies == [b"msg-0", b"msg-1", b"msg-2", b"after"]
    for q, (body, offset) in enumerate([*acked, (b"after", amr.wrote_offset)]):
        assert store.get_commit_log_offset_in_queue("DLedgerTopic", 0, q) == offset
        got = store.look_message_by_offset(offset)
        assert got is not None and got.body == body and got.queue_offset == q


def test_enable_d_leger_commit_log_needs_group_peers_and_self_id(tmp_path) -> None:
    cfg = MessageStoreConfig(store_path_root_dir=str(tmp_path), enable_d_leger_commit_log=True)
    with pytest.raises(ValueError, match="dLegerGroup, dLegerPeers, dLegerSelfId"):
        DefaultMessageStore(cfg)
    cfg = MessageStoreConfig(
        store_path_root_dir=str(tmp_path), enable_d_leger_commit_log=True, d_leger_group="g",
        d_leger_peers="n0-127.0.0.1:40911;n1-127.0.0.1:40912", d_leger_self_id="n1",
        mapped_file_size_commit_log=1 << 20,
    )  # fmt: skip
    store = DefaultMessageStore(cfg)
    assert store.load()
    with pytest.raises(RuntimeError, match="DLedger node n1 is not running on a driver"):
        store.put_message(_msg(b"x"), 0)
    cl = store.commit_log
    assert isinstance(cl, DLedgerCommitLog)
    assert (cl.id, cl.dledger_config.group, cl.dledger_config.self_id) == (2, "g", "n1")
    assert cl.dledger_config.mapped_file_size_for_entry_data == 1 << 20


def test_the_broker_config_keys_and_4_9_3_defaults() -> None:
    cfg = MessageStoreConfig()
    assert (cfg.enable_d_leger_commit_log, cfg.d_leger_group, cfg.d_leger_peers,
            cfg.d_leger_self_id, cfg.preferred_leader_id, cfg.is_enable_batch_push) == (
        False, None, None, None, None, False)  # fmt: skip


def test_a_commit_wakes_every_nodes_reput(cluster) -> None:
    """With ``reput_wakeup`` set (the broker sets its reput timer), each node's consume
    queue gets the message when that node learns the commit, without a put on it."""
    group, stores = cluster
    dispatched: dict[str, list[int]] = {i: [] for i in group.ids}
    for node_id, s in stores.items():
        s.reput_wakeup = lambda node_id=node_id, s=s: dispatched[node_id].append(s.do_reput())
    leader = group.leader()
    r = stores[leader].put_message(_msg(b"m0"), group.now)
    assert all(v == [] for v in dispatched.values())  # appended, not committed
    group.run_until(lambda: all(1 in v for v in dispatched.values()), 5_000, slice_ms=1)
    assert r.replica_request.status is PutMessageStatus.PUT_OK
    for s in stores.values():
        assert s.get_commit_log_offset_in_queue("DLedgerTopic", 0, 0) == 48


@pytest.fixture
def brokers(tmp_path):
    """The 3 stores with their reput woken by commits and a role change handler each,
    registered before the nodes start (as ``BrokerController#initialize`` does)."""
    group = DLedgerGroup(3, seed=5)
    stores = _stores(group, tmp_path)
    changes: list[tuple[str, str, int]] = []
    handlers = {}
    for node_id, s in stores.items():
        s.reput_wakeup = s.do_reput
        handlers[node_id] = DLedgerRoleChangeHandler(
            s, lambda role, bid, node_id=node_id: changes.append((node_id, role.value, bid))
        )
    group.run_until(lambda: group.leader() is not None, 10_000)
    return group, stores, handlers, changes


def test_the_leader_becomes_master_0_and_followers_slaves(brokers) -> None:
    """Every node is a SLAVE as a candidate (id = selfId's number + 1); the leader of an
    empty log becomes SYNC_MASTER with broker id 0; a put to a follower's store now answers
    SERVICE_NOT_AVAILABLE (DefaultMessageStore#checkStoreStatus, SLAVE)."""
    group, stores, handlers, changes = brokers
    group.advance(300)
    leader = group.leader()
    assert leader == "n1"  # seed 5, as in tests/dledger/test_dledger_wire.py
    roles = {
        i: (stores[i].message_store_config.broker_role, handlers[i].broker_id) for i in group.ids
    }
    assert roles == {
        "n0": (BrokerRole.SLAVE, 1), "n1": (BrokerRole.SYNC_MASTER, 0), "n2": (BrokerRole.SLAVE, 3),
    }  # fmt: skip
    assert changes[-1] == ("n1", "SYNC_MASTER", 0) or ("n1", "SYNC_MASTER", 0) in changes
    r = stores["n0"].put_message(_msg(b"x"), group.now)
    assert r.put_message_status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    r = stores["n1"].put_message(_msg(b"y"), group.now)
    group.run_until(lambda: r.replica_request.done, 5_000, slice_ms=1)
    assert r.replica_request.status is PutMessageStatus.PUT_OK


def test_a_new_leader_is_master_only_once_it_has_applied_its_log(brokers) -> None:
    """After the leader's kill the new leader stays SLAVE until its log is committed and
    dispatched, then turns SYNC_MASTER (id 0) with the queue offsets recovered from its
    consume queues: the next put gets queue offset 3 after the 3 acknowledged ones."""
    group, stores, handlers, changes = brokers
    group.advance(300)
    old = group.leader()
    for i in range(3):
        r = stores[old].put_message(_msg(b"msg-%d" % i), group.now)
        group.run_until(lambda r=r: r.replica_request.done, 5_000, slice_ms=1)
        assert r.replica_request.status is PutMessageStatus.PUT_OK
    group.kill(old)
    group.run_until(lambda: group.leader() not in (None, old), 20_000, slice_ms=1)
    new = group.leader()
    became_leader = group.now
    dstore = group.server(new).store
    # leader with entry 2 not yet committed here: still SLAVE (id 3), the handler waits
    assert (new, dstore.committed_index, dstore.ledger_end_index, handlers[new].broker_id) == (
        "n2", 1, 2, 3)  # fmt: skip
    group.run_until(lambda: handlers[new].broker_id == 0, 5_000, slice_ms=1)
    assert group.now - became_leader == 100  # one Thread.sleep(100) later
    assert (dstore.ledger_end_index, dstore.committed_index) == (2, 2)
    assert stores[new].dispatch_behind_bytes() == 0
    assert stores[new].message_store_config.broker_role is BrokerRole.SYNC_MASTER
    r = stores[new].put_message(_msg(b"after"), group.now)
    group.run_until(lambda: r.replica_request.done, 5_000, slice_ms=1)
    assert r.replica_request.status is PutMessageStatus.PUT_OK
    assert (r.append_message_result.logics_offset, r.append_message_result.wrote_offset) == (
        3, 3 * 175 + 48)  # fmt: skip


@pytest.mark.parametrize(
    ("length", "remark"),
    [
        (13, "java.lang.IllegalArgumentException: newPosition > limit: (76 > 61), "
             "java.base/java.nio.Buffer.createPositionException(Buffer.java:341)"),
        (30, "java.nio.BufferOverflowException, java.base/java.nio.Buffer.nextPutIndex"
             "(Buffer.java:730)"),
    ],
)  # fmt: skip
def test_a_client_append_too_short_for_a_message_is_refused_as_4_9_3s_hook_throws(
    brokers, length, remark
) -> None:
    """A DLedger client's APPEND to a broker's leader: the append hook moves the buffer to
    the message's PHYSICALOFFSET (body offset 48 + 28) and puts a long there; a shorter body
    makes it throw, nothing is stored, and 4.9.3's remoting answers SYSTEM_ERROR with the
    exception (the remarks a real 4.9.3 node gave, JDK 17, 2026-11-30)."""
    from mqlab.remoting.command import RemotingCommand

    group, stores, _handlers, _changes = brokers
    group.advance(300)
    server = group.server("n1")
    end = server.store.ledger_end_index
    body = json.dumps({"body": base64.b64encode(b"z" * length).decode(), "group": "default",
                       "remoteId": "n1"}).encode()  # fmt: skip
    answer = server.process_request(object(), RemotingCommand.create_request(50001, body=body))
    assert answer is not None
    assert (answer.code, answer.remark, answer.body) == (1, remark, None)
    assert b"extFields" not in answer.encode()[8:]
    assert server.store.ledger_end_index == end


def test_a_client_append_long_enough_is_stored_and_the_dispatch_skips_it(brokers) -> None:
    """40 bytes pass the hook: the entry is stored (as on a real node: index 1 after one
    message, 88 bytes at position 170 there), and the dispatch passes over it, so the next
    message takes queue offset 1."""
    group, stores, _handlers, _changes = brokers
    group.advance(300)
    leader = stores["n1"]
    first = leader.put_message(_msg(b"a"), group.now)
    group.run_until(lambda: first.replica_request.done, 5_000, slice_ms=1)
    future = group.server("n1").append(b"y" * 40)
    group.run_until(lambda: future.done, 5_000, slice_ms=1)
    assert future.value.code == DLedgerResponseCode.SUCCESS and future.value.index == 1
    second = leader.put_message(_msg(b"b"), group.now)
    group.run_until(lambda: second.replica_request.done, 5_000, slice_ms=1)
    group.advance(100)
    assert [e.index for e in group.server("n1").store.entries()] == [0, 1, 2]
    assert group.server("n1").store.get(1).size == 88
    assert leader.get_max_offset_in_queue("DLedgerTopic", 0) == 2


# -- batches (DLedgerCommitLog#asyncPutMessages) ---------------------------------------------
BATCH_PROPS = {"WAIT": "true", "CLUSTER": "RaftCluster"}


def _batch(bodies: list[bytes], queue_id: int = 1) -> tuple[list[MessageExtBrokerInner], list[str]]:
    """Messages as the send processor decodes a batch: each with its own properties and,
    in ``properties_string``, the batch's appended (what ``CommitLog`` stores)."""
    own = [message_properties_to_string({"UNIQ_KEY": f"K{i}", "TAGS": "T"}) for i in
           range(len(bodies))]  # fmt: skip
    batch_str = message_properties_to_string(BATCH_PROPS)
    msgs = []
    for body, props in zip(bodies, own, strict=True):
        stored = props + "\u0002" + batch_str
        msgs.append(MessageExtBrokerInner(
            topic="DLedgerTopic", body=body, queue_id=queue_id, properties={},
            properties_string=stored, born_timestamp=1, born_host="127.0.0.1:54714",
            store_host=STORE_HOST,
        ))  # fmt: skip
    return msgs, own


def test_a_batch_is_an_entry_a_message_acknowledged_with_the_last(cluster) -> None:
    """Three messages: three consecutive entries (0, 1, 2), each with its own queue offset
    and PHYSICALOFFSET pos + 48, and one pending append (the last entry's) for the quorum.
    The result: wroteOffset 48, wroteBytes the total, msgNum 3, the three msgIds
    comma-joined, PUT_OK once entry 2 is committed. Each stored message has its own
    properties only: no CLUSTER, no WAIT (``MessageSerializer`` does not append the
    batch's). The next single put takes queue offset 3."""
    group, stores = cluster
    leader = group.leader()
    server = group.server(leader)
    msgs, own = _batch([b"b0", b"b11", b"b222"])
    store = stores[leader]
    result = store.put_messages(msgs, group.now, batch_properties=BATCH_PROPS,
                                own_properties=own)  # fmt: skip
    amr = result.append_message_result
    wait = result.replica_request
    assert wait is not None and not wait.done
    entries = [server.store.get(i) for i in range(3)]
    sizes = [e.size - 48 for e in entries]
    assert [e.pos for e in entries] == [0, sizes[0] + 48, sizes[0] + sizes[1] + 96]
    assert sizes == [123, 124, 125]  # 88 fixed + body + 1 + 12 (topic) + 2 + 18 (properties)
    assert (amr.wrote_offset, amr.wrote_bytes, amr.msg_num, amr.logics_offset) == (48, 372, 3, 0)
    assert amr.msg_id == ",".join(create_message_id(STORE_HOST, e.pos + 48) for e in entries)
    pending = server.pusher.pending_append_responses_by_term[server.member_state.curr_term]
    assert list(pending) == [2]
    group.run_until(lambda: wait.done, 5_000, slice_ms=1)
    assert wait.status is PutMessageStatus.PUT_OK
    for i, e in enumerate(entries):
        m = decode_stored_message(e.body)
        assert (m.queue_offset, m.commit_log_offset, m.body) == (i, e.pos + 48, msgs[i].body)
        assert m.properties == {"UNIQ_KEY": f"K{i}", "TAGS": "T"}
    assert store.do_reput() == 3
    assert [store.get_commit_log_offset_in_queue("DLedgerTopic", 1, i) for i in range(3)] == [
        e.pos + 48 for e in entries
    ]
    stats = store.store_stats_service
    assert stats.put_message_topic_times_total == {"DLedgerTopic": 3}
    nxt = store.put_message(_msg(b"after", queue_id=1), group.now)
    assert nxt.append_message_result.logics_offset == 3


def test_a_batch_refused_before_any_append(cluster) -> None:
    """A DELAY among the batch's properties or a transactional flag: MESSAGE_ILLEGAL with no
    append result. A message whose stored form is over maxMessageSize (here 300 bytes), or a
    running total over it, throws the serializer's RuntimeException, line 908 or 914 of
    4.9.3's DLedgerCommitLog.java. On a follower: OS_PAGECACHE_BUSY (NOT_LEADER, pos -1).
    Nothing is appended, and no queue offset moves."""
    from mqlab.store.commit_log import StoreRuntimeException

    group, stores = cluster
    leader = group.leader()
    store = stores[leader]
    msgs, own = _batch([b"x"])
    r = store.put_messages(msgs, group.now, batch_properties={"DELAY": "2"}, own_properties=own)
    assert (r.put_message_status, r.append_message_result) == (
        PutMessageStatus.MESSAGE_ILLEGAL, None)  # fmt: skip
    msgs, own = _batch([b"x"])
    msgs[0].sys_flag = 0x04  # TRANSACTION_PREPARED_TYPE
    r = store.put_messages(msgs, group.now, own_properties=own)
    assert r.put_message_status is PutMessageStatus.MESSAGE_ILLEGAL
    store.message_store_config.max_message_size = 300
    # the batch bodies (20 + body + 2 + 18 bytes a message) pass checkMessages' 300
    msgs, own = _batch([b"y" * 200])  # stored: 88 + 200 + 13 + 2 + 18 = 321
    with pytest.raises(StoreRuntimeException) as e:
        store.put_messages(msgs, group.now, own_properties=own, body_length=240)
    assert str(e.value) == (
        "java.lang.RuntimeException: message size exceeded, org.apache.rocketmq.store.dledger."
        "DLedgerCommitLog$MessageSerializer.serialize(DLedgerCommitLog.java:908)"
    )
    msgs, own = _batch([b"y" * 100, b"z" * 100])  # 221 each, 442 in all
    with pytest.raises(StoreRuntimeException, match=r"DLedgerCommitLog\.java:914\)$"):
        store.put_messages(msgs, group.now, own_properties=own, body_length=280)
    follower = next(i for i in group.ids if i != leader)
    msgs, own = _batch([b"f0", b"f1"])
    r = stores[follower].put_messages(msgs, group.now, own_properties=own)
    assert r.put_message_status is PutMessageStatus.OS_PAGECACHE_BUSY
    for node in group.ids:
        assert group.server(node).store.ledger_end_index == -1
    # the leader's refusals came before getQueueOffsetByKey; the follower's after it
    assert "DLedgerTopic-1" not in store.commit_log.topic_queue_table
    assert stores[follower].commit_log.topic_queue_table["DLedgerTopic-1"] == 0


#: the commit-log (and so DLedger data) file size of the upgrade tests
UPGRADE_FILE_SIZE = 4096


def _upgraded(tmp_path: Path, bodies: list[bytes], copies: tuple[str, ...]):
    """A plain store at ``n0`` that took ``bodies`` (their offsets returned) and stopped; its
    directory copied to ``copies``; then a 3-node group's stores on ``n0``..``n2`` with
    ``enableDLegerCommitLog`` (4.9.3's upgrade path), loaded."""
    import shutil

    size = UPGRADE_FILE_SIZE
    old = MessageStoreConfig(store_path_root_dir=str(tmp_path / "n0"),
                             mapped_file_size_commit_log=size)  # fmt: skip
    plain = DefaultMessageStore(old, store_host=STORE_HOST)
    assert plain.load()
    offsets = [plain.put_message(_msg(b), 1).append_message_result.wrote_offset for b in bodies]
    assert plain.do_reput() == len(bodies)
    plain.shutdown()
    for node_id in copies:
        shutil.copytree(tmp_path / "n0", tmp_path / node_id)
    group = DLedgerGroup(3, seed=5, mapped_file_size_for_entry_data=size)
    stores = {}
    for node_id in group.ids:
        cfg = MessageStoreConfig(
            store_path_root_dir=str(tmp_path / node_id), mapped_file_size_commit_log=size,
            enable_d_leger_commit_log=True, d_leger_group="default", d_leger_peers=group.peers,
            d_leger_self_id=node_id,
        )  # fmt: skip
        stores[node_id] = DefaultMessageStore(cfg, store_host=STORE_HOST,
                                              dledger_server=group.server(node_id))  # fmt: skip
        assert stores[node_id].load()
    return group, stores, offsets


def test_a_group_over_an_old_commit_log_appends_after_its_last_file(tmp_path) -> None:
    """4.9.3's upgrade path (docs/en/dledger/deploy_guide.md "Upgrade old cluster"): a
    broker's store copied to three nodes that start with ``enableDLegerCommitLog``.
    ``DLedgerCommitLog#recover`` ends the old log with a blank at its write position, and
    DLedger's first data file starts where that file ends (``dividedCommitlogOffset``,
    4096 here): the old messages keep their offsets and queue offsets, the first entry is
    at 4096 and its message at 4096 + 48, queue offset 3; a restart finds the divide again
    from the data file's name."""
    import struct

    size = UPGRADE_FILE_SIZE
    bodies = [b"old-%d" % i for i in range(3)]
    group, stores, offsets = _upgraded(tmp_path, bodies, ("n1", "n2"))
    assert offsets == [0, 127, 254]
    for node_id, s in stores.items():
        cl = s.commit_log
        assert (cl.divided_commitlog_offset, s.get_min_phy_offset(), s.get_max_phy_offset()) == (
            size, 0, size), node_id  # fmt: skip
        old_file = (tmp_path / node_id / "commitlog" / f"{0:020d}").read_bytes()
        assert struct.unpack_from(">ii", old_file, 381) == (size - 381, -875286124)
        files = group.server(node_id).store.files()
        assert [(k, v) for k, v in files.items() if k.startswith("data/")] == [
            (f"data/{size:020d}", b"")]  # fmt: skip
        assert s.get_max_offset_in_queue("DLedgerTopic", 0) == 3
        got = s.look_message_by_offset(127)
        assert got is not None and got.body == b"old-1" and got.queue_offset == 1
    group.run_until(lambda: group.leader() is not None, 10_000)
    leader = group.leader()
    r = stores[leader].put_message(_msg(b"new-0"), group.now)
    group.run_until(lambda: r.replica_request.done, 5_000, slice_ms=1)
    amr = r.append_message_result
    assert r.replica_request.status is PutMessageStatus.PUT_OK
    assert (amr.wrote_offset, amr.logics_offset) == (size + 48, 3)
    assert group.server(leader).store.get(0).pos == size
    group.run_until(
        lambda: all(group.server(i).store.committed_index == 0 for i in group.ids), 5_000
    )
    for node_id, s in stores.items():
        assert s.do_reput() == 1, node_id
        assert [s.get_commit_log_offset_in_queue("DLedgerTopic", 0, q) for q in range(4)] == [
            0, 127, 254, size + 48]  # fmt: skip
        assert s.look_message_by_offset(size + 48).body == b"new-0"
        assert s.get_max_phy_offset() == size + 175
    # a restart on the same node: the divide is the first data file's start
    follower = next(i for i in group.ids if i != leader)
    stores[follower].shutdown()
    again = DefaultMessageStore(stores[follower].message_store_config, store_host=STORE_HOST,
                                dledger_server=group.server(follower))  # fmt: skip
    assert again.load()
    assert again.commit_log.divided_commitlog_offset == size
    assert [again.look_message_by_offset(o).body for o in (0, size + 48)] == [b"old-0", b"new-0"]


def test_a_node_without_the_old_log_follows_from_the_divide_without_the_old_messages(
    tmp_path,
) -> None:
    """The deploy guide asks for the same old commit log on every node. n2 starts without
    it, so its log has no data file; the leader's first entry is at 4096. The leader's
    TRUNCATE there finds n2's data ending at 0, not 4096, and rebuilds its data files at
    4096 (``DLedgerMmapFileStore#truncate``, ``MmapFileList#rebuildWithPos``): n2 then holds
    every entry at the leader's positions, but none of the old messages."""
    size = UPGRADE_FILE_SIZE
    group, stores, _ = _upgraded(tmp_path, [b"old"], ("n1",))
    assert [stores[i].commit_log.divided_commitlog_offset for i in group.ids] == [size, size, -1]
    group.run_until(lambda: group.leader() in ("n0", "n1"), 20_000)
    r = stores[group.leader()].put_message(_msg(b"new"), group.now)
    group.run_until(lambda: r.replica_request.done, 5_000, slice_ms=1)
    assert r.replica_request.status is PutMessageStatus.PUT_OK
    assert r.append_message_result.wrote_offset == size + 48
    group.run_until(
        lambda: all(group.server(i).store.committed_index == 0 for i in group.ids), 5_000
    )
    n2 = group.server("n2").store
    assert (n2.ledger_end_index, n2.data_start, n2.get(0).pos) == (0, size, size)
    assert [stores[i].do_reput() for i in group.ids] == [1, 1, 1]
    assert [stores[i].get_max_offset_in_queue("DLedgerTopic", 0) for i in group.ids] == [2, 2, 2]
    assert stores["n2"].get_commit_log_offset_in_queue("DLedgerTopic", 0, 1) == size + 48
    assert stores["n1"].look_message_by_offset(0).body == b"old"
    assert stores["n2"].look_message_by_offset(0) is None
