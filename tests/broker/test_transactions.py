"""Transactional messages on the simulation driver: half message, END_TRANSACTION, the
check service, discards, RESUME_CHECK_HALF_MESSAGE and restart recovery.

Mirrors ``EndTransactionProcessor``, ``TransactionalMessageBridge``,
``TransactionalMessageServiceImpl#check`` and ``TransactionalMessageCheckService``
(broker, rocketmq-all-4.9.3); every number below is what those do.
"""

from __future__ import annotations

import pytest

from mqlab import Lab
from mqlab.client.producer import LocalTransactionState, TransactionListener
from mqlab.common.message import Message
from mqlab.common.message_decoder import create_message_id
from mqlab.remoting.codes import ResponseCode

HALF = "RMQ_SYS_TRANS_HALF_TOPIC"
OP = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
MAX_TIME = "TRANS_CHECK_MAX_TIME_TOPIC"
UNIQ = "7F00000100002A9F0000000000000001"
COMMIT, ROLLBACK, UNKNOWN = 8, 12, 0


def _props(group: str = "PG", uniq: str = UNIQ) -> str:
    kv = {"TRAN_MSG": "true", "PGROUP": group, "UNIQ_KEY": uniq, "WAIT": "true", "TAGS": "TagA"}
    return "".join(f"{k}\x01{v}\x02" for k, v in kv.items())


def _prepared(lab: Lab, topic: str = "TopicTx", queue_id: int = 1, group: str = "PG"):
    """A prepared SEND_MESSAGE_V2 as the Java client sends it (sysFlag 4 = PREPARED)."""
    call = lab.request(
        "broker-a", "SEND_MESSAGE_V2",
        {"a": group, "b": topic, "c": "TBW102", "d": 4, "e": queue_id, "f": 4,
         "g": 1764150000000, "h": 0, "i": _props(group)},
        b"order-1",
    )  # fmt: skip
    assert call.code == ResponseCode.SUCCESS
    return call.response.ext_fields


def _end(lab: Lab, sent: dict, state: int, *, group: str = "PG", offset: int | None = None,
         table_offset: str | None = None, from_check: bool = False):  # fmt: skip
    off = int(sent["msgId"][-16:], 16) if offset is None else offset
    return lab.request("broker-a", "END_TRANSACTION", {
        "producerGroup": group, "tranStateTableOffset": table_offset or sent["queueOffset"],
        "commitLogOffset": off, "commitOrRollback": state,
        "fromTransactionCheck": "true" if from_check else "false", "msgId": UNIQ,
    })  # fmt: skip


def _entries(lab: Lab, topic: str):
    log = lab.commit_log()
    return log[log.topic == topic].reset_index(drop=True)


def _max(lab: Lab, topic: str, queue_id: int) -> int:
    return lab.broker().message_store.get_max_offset_in_queue(topic, queue_id)


def test_half_message_parked_in_half_topic_with_real_topic_and_queue():
    lab = Lab(seed=1)
    sent = _prepared(lab)
    # The response names the real queue, the offset is the half queue's.
    assert (sent["queueId"], sent["queueOffset"]) == ("1", "0")
    half = _entries(lab, HALF)
    assert len(half) == 1
    row = half.iloc[0]
    assert (row.queue_id, row.queue_offset, row.sys_flag) == (0, 0, 0)  # NOT_TYPE, not 4
    assert row.properties["REAL_TOPIC"] == "TopicTx"
    assert row.properties["REAL_QID"] == "1"
    assert row.properties["WAIT"] == "true"  # stored again: the map is re-encoded
    # Invisible on the real topic: nothing in its consume queue.
    assert _max(lab, "TopicTx", 1) == 0
    assert _max(lab, HALF, 0) == 1


def test_reject_transaction_message():
    lab = Lab(seed=1, broker={"reject_transaction_message": True})
    call = lab.request(
        "broker-a", "SEND_MESSAGE_V2",
        {"a": "PG", "b": "TopicTx", "c": "TBW102", "d": 4, "e": 0, "f": 4, "g": 0, "h": 0,
         "i": _props()},
        b"x",
    )  # fmt: skip
    assert call.code == ResponseCode.NO_PERMISSION
    assert call.response.remark == "the broker[127.0.0.1] sending transaction message is forbidden"
    assert _max(lab, HALF, 0) == 0


def test_commit_restores_the_message_and_writes_op_d():
    lab = Lab(seed=1)
    _prepared(lab, queue_id=2)  # half offset 0 (another transaction)
    sent = _prepared(lab, queue_id=1)  # half offset 1
    half_offset = int(sent["msgId"][-16:], 16)
    call = _end(lab, sent, COMMIT)
    assert call.code == ResponseCode.SUCCESS and call.response.remark is None
    real = _entries(lab, "TopicTx")
    assert len(real) == 1
    row = real.iloc[0]
    assert (row.queue_id, row.queue_offset, row.sys_flag) == (1, 0, COMMIT)
    assert row.body == b"order-1"
    # The stored properties are the half message's (REAL_TOPIC, REAL_QID, TRAN_MSG kept).
    assert row.properties["REAL_TOPIC"] == "TopicTx" and row.properties["TRAN_MSG"] == "true"
    msg = lab.broker().message_store.look_message_by_offset(int(row.commit_log_offset))
    assert msg.prepared_transaction_offset == half_offset
    assert _max(lab, "TopicTx", 1) == 1
    op = _entries(lab, OP)
    assert len(op) == 1
    assert (op.iloc[0].queue_id, op.iloc[0].queue_offset, op.iloc[0].tags) == (0, 0, "d")
    assert op.iloc[0].body == b"1"  # the half message's queue offset
    assert op.iloc[0].properties == {"TAGS": "d", "WAIT": "true"}


def test_rollback_never_delivers_but_writes_op():
    lab = Lab(seed=1)
    sent = _prepared(lab)
    call = _end(lab, sent, ROLLBACK)
    # checkPrepareMessage's createResponseCommand(null) remark is kept (the real broker's too)
    assert (call.code, call.response.remark) == (ResponseCode.SUCCESS, "not set any response code")
    assert _entries(lab, "TopicTx").empty
    assert _max(lab, "TopicTx", 1) == 0
    op = _entries(lab, OP)
    assert len(op) == 1 and op.iloc[0].body == b"0"


def test_unknown_state_gets_no_response_and_changes_nothing():
    lab = Lab(seed=1)
    sent = _prepared(lab)
    before = len(lab.commit_log())
    call = _end(lab, sent, UNKNOWN)
    assert call.response is None  # EndTransactionProcessor returns null: nothing is written back
    assert len(lab.commit_log()) == before


@pytest.mark.parametrize(
    ("kw", "remark"),
    [
        ({"offset": 123_456_789}, "Find prepared transaction message failed"),
        ({"group": "other"}, "The producer group wrong"),
        ({"table_offset": "7"}, "The transaction state table offset wrong"),
    ],
)
def test_end_transaction_refusals(kw, remark):
    lab = Lab(seed=1)
    sent = _prepared(lab)
    call = _end(lab, sent, COMMIT, **kw)
    assert (call.code, call.response.remark) == (ResponseCode.SYSTEM_ERROR, remark)
    assert _entries(lab, "TopicTx").empty and _entries(lab, OP).empty


def test_end_transaction_for_a_normal_message_or_a_bad_state():
    lab = Lab(seed=1)
    plain = lab.request(
        "broker-a", "SEND_MESSAGE_V2",
        {"a": "PG", "b": "TopicTx", "c": "TBW102", "d": 4, "e": 0, "f": 0, "g": 0, "h": 0,
         "i": "TAGS\x01A\x02"},
        b"plain",
    ).response.ext_fields  # fmt: skip
    call = _end(lab, plain, COMMIT)
    assert call.code == ResponseCode.SYSTEM_ERROR
    assert call.response.remark == (
        "java.lang.NullPointerException, org.apache.rocketmq.broker.processor."
        "EndTransactionProcessor.checkPrepareMessage(EndTransactionProcessor.java:169)"
    )
    bad = _end(lab, _prepared(lab), 5)
    assert bad.code == ResponseCode.SYSTEM_ERROR
    assert bad.response.remark.startswith(
        "org.apache.rocketmq.remoting.exception.RemotingCommandException: commitOrRollback "
        "field wrong, "
    )
    assert list(_entries(lab, "TopicTx").body) == [b"plain"] and _entries(lab, OP).empty


def test_missing_offset_fields_are_refused_up_front_others_go_through():
    lab = Lab(seed=1)
    sent = _prepared(lab)
    off = int(sent["msgId"][-16:], 16)
    base = {"producerGroup": "PG", "tranStateTableOffset": 0, "commitLogOffset": off,
            "commitOrRollback": COMMIT, "msgId": UNIQ}  # fmt: skip
    for field in ("tranStateTableOffset", "commitLogOffset", "commitOrRollback"):
        ext = {k: v for k, v in base.items() if k != field}
        call = lab.request("broker-a", "END_TRANSACTION", ext)
        assert (call.code, call.response.remark) == (
            ResponseCode.SYSTEM_ERROR, f"the custom field <{field}> is null",
        )  # fmt: skip
    no_group = {k: v for k, v in base.items() if k != "producerGroup"}
    call = lab.request("broker-a", "END_TRANSACTION", no_group)
    assert call.response.remark == "The producer group wrong"
    no_msg_id = {k: v for k, v in base.items() if k != "msgId"}
    assert lab.request("broker-a", "END_TRANSACTION", no_msg_id).code == ResponseCode.SUCCESS
    assert len(_entries(lab, "TopicTx")) == 1


def test_half_message_exactly_transaction_timeout_old_is_checked_and_the_scan_ends():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    lab.request(
        "broker-a", "SEND_MESSAGE_V2",
        {"a": "PG", "b": "TopicTx", "c": "TBW102", "d": 4, "e": 0, "f": 4, "g": 1000, "h": 0,
         "i": _props()},
        b"x",
    )  # fmt: skip
    lab.advance(7_000 - lab.now)  # the check at 7000: age 6000 == transactionTimeOut
    half = _entries(lab, HALF)
    assert list(half.store_timestamp) == [half.store_timestamp[0], 7000]
    assert half.iloc[1].properties["TRANSACTION_CHECK_TIMES"] == "1"


def test_second_commit_of_the_same_half_message_delivers_it_again():
    """4.9.3 keeps no per-transaction state: the half message is still there."""
    lab = Lab(seed=1)
    sent = _prepared(lab)
    assert _end(lab, sent, COMMIT).code == ResponseCode.SUCCESS
    assert _end(lab, sent, COMMIT).code == ResponseCode.SUCCESS
    assert list(_entries(lab, "TopicTx").queue_offset) == [0, 1]
    assert list(_entries(lab, OP).body) == [b"0", b"0"]


def test_slave_refuses_end_transaction():
    lab = Lab(seed=1, store={"broker_role": "SLAVE"})
    call = _end(lab, {"msgId": "0" * 32, "queueOffset": "0"}, COMMIT)
    assert (call.code, call.response.remark) == (ResponseCode.SLAVE_NOT_AVAILABLE, None)


# -- the producer and the check service -------------------------------------------------------
class Listener(TransactionListener):
    def __init__(self, first, check=LocalTransactionState.COMMIT_MESSAGE):
        self.first, self.check, self.checked_at, self.checked = first, check, [], []
        self.lab: Lab | None = None

    def execute_local_transaction(self, msg, arg):
        return self.first

    def check_local_transaction(self, msg):
        self.checked_at.append(self.lab.now)
        self.checked.append(msg)
        return self.check


def _producer(lab: Lab, listener: Listener, group: str = "TPG", name: str | None = None):
    listener.lab = lab
    return lab.transaction_producer(group, listener, name=name)


def test_producer_commit_rollback_and_unknown_results():
    lab = Lab(seed=1)
    results = {}
    for state in LocalTransactionState:
        p = _producer(lab, Listener(state), group=f"G_{state.name}")
        f = p.send_message_in_transaction(Message("TopicTx", b"x", tags="A"), None)
        lab.run_until_idle()
        results[state] = f.get()
    assert {s: r.local_transaction_state for s, r in results.items()} == {
        s: s for s in LocalTransactionState
    }
    assert len(_entries(lab, "TopicTx")) == 1  # only the committed one
    assert len(_entries(lab, OP)) == 2  # commit + rollback
    assert len(_entries(lab, HALF)) == 3
    half = _entries(lab, HALF)
    assert set(half.properties.map(lambda p: p["PGROUP"])) == {
        "G_COMMIT_MESSAGE", "G_ROLLBACK_MESSAGE", "G_UNKNOW",
    }  # fmt: skip


def test_unknown_is_checked_after_timeout_at_the_interval_then_committed():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    listener = Listener(LocalTransactionState.UNKNOW)
    p = _producer(lab, listener)
    f = p.send_message_in_transaction(Message("TopicTx", b"x", tags="A"), None)
    lab.run_until_idle()
    born = _entries(lab, HALF).iloc[0].store_timestamp
    assert f.get().local_transaction_state is LocalTransactionState.UNKNOW
    lab.advance(20_000)
    # Check runs every 1000 ms from the broker start (t=0); the first one where the half
    # message is older than transactionTimeOut (6000 ms) asks the producer once.
    first = (born + 6000) // 1000 * 1000 + 1000
    assert listener.checked_at == [first + 1]  # one hop of 1 ms
    checked = listener.checked[0]
    assert (checked.topic, checked.properties["TRANSACTION_CHECK_TIMES"]) == ("TopicTx", "1")
    real = _entries(lab, "TopicTx")
    assert len(real) == 1 and real.iloc[0].sys_flag == COMMIT
    # The half message was written again (check count 1) before the check; the op message
    # names that copy's half offset (1).
    half = _entries(lab, HALF)
    assert list(half.queue_offset) == [0, 1]
    assert half.iloc[1].properties["TRANSACTION_CHECK_TIMES"] == "1"
    # renewHalfMessageInner shares the map: the copy stores WAIT=true, the check body says false
    assert half.iloc[1].properties["WAIT"] == "true"
    assert checked.properties["WAIT"] == "false"
    assert list(_entries(lab, OP).body) == [b"1"]
    # CID_RMQ_SYS_TRANS moved past both half offsets and the op offset.
    offsets = lab.broker().consumer_offset_manager
    assert offsets.query_offset("CID_RMQ_SYS_TRANS", HALF, 0) == 2
    assert offsets.query_offset("CID_RMQ_SYS_TRANS", OP, 0) == 1


def test_default_interval_checks_at_60_s():
    lab = Lab(seed=1)
    listener = Listener(LocalTransactionState.UNKNOW)
    p = _producer(lab, listener)
    p.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.advance(59_000)
    assert listener.checked_at == []
    lab.advance(2_000)
    assert listener.checked_at == [60_001]
    assert len(_entries(lab, "TopicTx")) == 1


def test_check_max_exceeded_goes_to_trans_check_max_time_topic_and_resume():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000, "transaction_check_max": 3})
    listener = Listener(LocalTransactionState.UNKNOW, check=LocalTransactionState.UNKNOW)
    p = _producer(lab, listener)
    p.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.advance(30_000)
    assert len(listener.checked_at) == 3
    assert [m.properties["TRANSACTION_CHECK_TIMES"] for m in listener.checked] == ["1", "2", "3"]
    gaps = [b - a for a, b in zip(listener.checked_at[:-1], listener.checked_at[1:], strict=True)]
    assert gaps == [1000, 1000]
    dead = _entries(lab, MAX_TIME)
    assert len(dead) == 1
    assert (dead.iloc[0].queue_id, dead.iloc[0].properties["TRANSACTION_CHECK_TIMES"]) == (0, "3")
    assert dead.iloc[0].properties["REAL_TOPIC"] == "TopicTx"
    assert lab.topics(include_system=True).set_index("topic").loc[MAX_TIME, "read_queue_nums"] == 1
    assert _entries(lab, "TopicTx").empty
    # mqadmin resumeCheckHalfMessage: back to the half topic with check times 0, checked again.
    listener.check = LocalTransactionState.COMMIT_MESSAGE
    offset_msg_id = create_message_id("127.0.0.1:10911", int(dead.iloc[0].commit_log_offset))
    call = lab.request("broker-a", "RESUME_CHECK_HALF_MESSAGE", {"msgId": offset_msg_id})
    assert (call.code, call.response.remark) == (ResponseCode.SUCCESS, None)
    assert _entries(lab, HALF).iloc[-1].properties["TRANSACTION_CHECK_TIMES"] == "0"
    lab.advance(2_000)
    assert len(listener.checked_at) == 4
    assert listener.checked[-1].properties["TRANSACTION_CHECK_TIMES"] == "1"
    assert len(_entries(lab, "TopicTx")) == 1
    bad = lab.request("broker-a", "RESUME_CHECK_HALF_MESSAGE", {"msgId": "nothex"})
    assert (bad.code, bad.response.remark) == (
        ResponseCode.SYSTEM_ERROR,
        "Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC.",
    )


def test_producer_crash_before_commit_check_goes_to_another_producer_of_the_group():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    crashed = Listener(LocalTransactionState.UNKNOW)
    survivor = Listener(LocalTransactionState.UNKNOW, check=LocalTransactionState.COMMIT_MESSAGE)
    p1 = _producer(lab, crashed, name="producer-1")
    _producer(lab, survivor, name="producer-2")
    p1.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.run_until_idle()
    lab.kill("producer-1")  # before its local transaction ended
    lab.advance(10_000)
    assert crashed.checked_at == []
    assert len(survivor.checked_at) == 1
    assert len(_entries(lab, "TopicTx")) == 1


def test_no_producer_of_the_group_no_check_but_retried_later():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    listener = Listener(LocalTransactionState.UNKNOW)
    p = _producer(lab, listener)
    p.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.run_until_idle()
    lab.kill("producer-1")
    lab.advance(9_000)
    assert lab.broker().transactional_message_check_listener.checks_sent == 0
    # Each run re-writes the half message and counts one more check, producer or not.
    checks = _entries(lab, HALF).properties.map(lambda p: p.get("TRANSACTION_CHECK_TIMES"))
    assert list(checks) == [None, "1", "2", "3"]


def test_restart_recovers_half_and_op_queues_from_the_store():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    listener = Listener(LocalTransactionState.UNKNOW)
    p = _producer(lab, listener)
    p.send_message_in_transaction(Message("TopicTx", b"committed"), None)
    p.send_message_in_transaction(Message("TopicTx", b"pending"), None)
    lab.run_until_idle()
    # Commit the first by hand now; the second stays pending.
    first = _entries(lab, HALF).iloc[0]
    lab.request("broker-a", "END_TRANSACTION", {
        "producerGroup": "TPG", "tranStateTableOffset": 0,
        "commitLogOffset": int(first.commit_log_offset), "commitOrRollback": COMMIT,
        "fromTransactionCheck": "false", "msgId": first.properties["UNIQ_KEY"],
    })  # fmt: skip
    lab.restart_broker("broker-a", graceful=False)
    lab.advance(40_000)  # the producer's heartbeat (every 30 s) registers it again
    # Only the pending one is checked (the op queue says the first is done), once.
    assert [m.body for m in listener.checked] == [b"pending"]
    assert sorted(_entries(lab, "TopicTx").body) == [b"committed", b"pending"]


def test_readme_transactions_example_runs_as_it_says():
    """The README's Transactions snippet: checked at 7 s, committed, op message written."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = text.split("**Transactions.**", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    env: dict = {}
    exec(compile(block, "README.md", "exec"), env)
    log = env["lab"].commit_log()
    assert list(zip(log.topic, log.queue_offset, log.sys_flag, log.store_timestamp, strict=True)) == [
        (HALF, 0, 0, 7), (HALF, 1, 0, 7000), ("TopicTest", 0, COMMIT, 7002), (OP, 0, 0, 7002),
    ]  # fmt: skip


def test_check_immunity_time_property_shortens_the_wait_and_counts_each_run():
    """CHECK_IMMUNITY_TIME_IN_SECONDS=3: while younger, each run writes an immunity copy
    (TRAN_PREPARED_QUEUE_OFFSET = the first offset) and counts one check (needDiscard runs
    first); at 4 s the producer is asked, the fourth count."""
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    listener = Listener(LocalTransactionState.UNKNOW)
    p = _producer(lab, listener)
    msg = Message("TopicTx", b"x")
    msg.put_property("CHECK_IMMUNITY_TIME_IN_SECONDS", "3")
    p.send_message_in_transaction(msg, None)
    lab.advance(8_000)
    assert listener.checked_at == [4_001]
    assert listener.checked[0].properties["TRANSACTION_CHECK_TIMES"] == "4"
    half = _entries(lab, HALF)
    assert list(half.store_timestamp)[1:] == [1000, 2000, 3000, 4000]
    assert [p.get("TRAN_PREPARED_QUEUE_OFFSET") for p in half.properties] == [None] + ["0"] * 4
    assert len(_entries(lab, "TopicTx")) == 1
    assert list(_entries(lab, OP).body) == [b"4"]
