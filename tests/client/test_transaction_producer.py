"""mqlab's TransactionMQProducer on the simulation driver: what it sends and how it answers.

Mirrors ``DefaultMQProducerImpl#sendMessageInTransaction`` / ``#endTransaction`` /
``#checkTransactionState`` and ``ClientRemotingProcessor#checkTransactionState`` (client,
rocketmq-all-4.9.3). The END_TRANSACTION requests are read from the broker's trace
(``EndTransactionProcessor.processRequest`` step 2 records the header it decoded).
"""

from __future__ import annotations

import json

import pytest

from mqlab import Lab
from mqlab.client.exception import MQClientException
from mqlab.client.producer import (
    LocalTransactionState,
    TransactionListener,
    TransactionMQProducer,
    TransactionSendResult,
)
from mqlab.common.message import Message

S = LocalTransactionState


class Listener(TransactionListener):
    def __init__(self, first=S.COMMIT_MESSAGE, check=S.COMMIT_MESSAGE, boom=None):
        self.first, self.check, self.boom = first, check, boom
        self.executed: list[tuple[Message, object]] = []

    def execute_local_transaction(self, msg, arg):
        self.executed.append((msg, arg))
        if self.boom is not None:
            raise self.boom
        return self.first

    def check_local_transaction(self, msg):
        if self.boom is not None:
            raise self.boom
        return self.check


def _end_requests(lab: Lab) -> list[dict]:
    ev = lab.events()
    ev = ev[(ev.component == "EndTransactionProcessor.processRequest") & (ev.step == "2")]
    return [json.loads(f) for f in ev.fields]


def test_send_in_transaction_sends_a_prepared_message_then_end_transaction():
    lab = Lab(seed=1)
    listener = Listener()
    p = lab.transaction_producer("TPG", listener)
    msg = Message("TopicTx", b"order-1", tags="A")
    msg.delay_time_level = 3  # dropped: a transactional message is never delayed
    f = p.send_message_in_transaction(msg, {"order": 1})
    lab.run_until_idle()
    r = f.get()
    assert isinstance(r, TransactionSendResult)
    assert (r.send_status.name, r.local_transaction_state, r.queue_offset) == (
        "SEND_OK", S.COMMIT_MESSAGE, 0,
    )  # fmt: skip
    (executed, arg) = listener.executed[0]
    assert arg == {"order": 1}
    assert executed.get_property("TRAN_MSG") == "true"
    assert executed.get_property("PGROUP") == "TPG"
    assert executed.get_property("DELAY") is None
    assert executed.transaction_id == r.msg_id  # the UNIQ_KEY
    half = lab.commit_log().iloc[0]
    (end,) = _end_requests(lab)
    assert end == {
        "state": "COMMIT", "from_transaction_check": False, "group": "TPG", "msg_id": r.msg_id,
        "commit_log_offset": int(half.commit_log_offset), "tran_state_table_offset": 0,
        "remark": None, "text": end["text"],
    }  # fmt: skip


def test_listener_exception_is_unknown_with_a_remark_and_no_answer():
    lab = Lab(seed=1)
    p = lab.transaction_producer("TPG", Listener(boom=RuntimeError("db down")))
    f = p.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.run_until_idle()
    assert f.get().local_transaction_state is S.UNKNOW
    (end,) = _end_requests(lab)
    assert end["state"] == "UNKNOW"
    assert end["remark"] == "executeLocalTransactionBranch exception: RuntimeError('db down')"


@pytest.mark.parametrize(
    ("check", "state", "delivered"),
    [(S.COMMIT_MESSAGE, "COMMIT", 1), (S.ROLLBACK_MESSAGE, "ROLLBACK", 0), (S.UNKNOW, "UNKNOW", 0)],
)
def test_check_back_answer_is_end_transaction_from_check(check, state, delivered):
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    p = lab.transaction_producer("TPG", Listener(first=S.UNKNOW, check=check))
    f = p.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.run_until_idle()
    lab.advance(7_500)
    first, answer = _end_requests(lab)
    assert (first["state"], first["from_transaction_check"]) == ("UNKNOW", False)
    assert (answer["state"], answer["from_transaction_check"]) == (state, True)
    # The check names the half message's newest copy: half offset 1.
    assert answer["tran_state_table_offset"] == 1
    assert answer["msg_id"] == f.get().msg_id
    log = lab.commit_log()
    assert (log.topic == "TopicTx").sum() == delivered


def test_check_for_a_group_without_producer_on_that_client_is_ignored():
    lab = Lab(seed=1, broker={"transaction_check_interval": 1000})
    p = lab.transaction_producer("TPG", Listener(first=S.UNKNOW))
    p.send_message_in_transaction(Message("TopicTx", b"x"), None)
    lab.run_until_idle()
    p.shutdown()  # unregistered: the broker has no channel of TPG any more
    lab.advance(8_000)
    assert len(_end_requests(lab)) == 1
    assert lab.broker().transactional_message_check_listener.checks_sent == 0


def test_bad_listeners_are_refused():
    lab = Lab(seed=1)
    with pytest.raises(TypeError, match="execute_local_transaction"):
        lab.transaction_producer("TPG", object())
    inst = lab._instance("producer", None)
    p = TransactionMQProducer("TPG2", inst)
    p.start()
    with pytest.raises(MQClientException, match="TransactionListener is null"):
        p.send_message_in_transaction(Message("TopicTx", b"x"))
    with pytest.raises(TypeError, match="mqlab Message"):
        lab.transaction_producer("TPG3", Listener()).send_message_in_transaction("nope")
