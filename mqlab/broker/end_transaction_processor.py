"""END_TRANSACTION (37): commit or roll back a half message.

Mirrors ``EndTransactionProcessor`` (broker/processor, RocketMQ 4.9.3). The producer
sends it oneway right after its local transaction (``DefaultMQProducerImpl#endTransaction``)
or when it answers a check-back (``fromTransactionCheck``). Steps (trace component
``EndTransactionProcessor.processRequest``):

1. a slave refuses: SLAVE_NOT_AVAILABLE, no remark;
2. the state: NOT_TYPE (0, unknown) → no response at all (the half message waits for the
   check); COMMIT_TYPE (8) or ROLLBACK_TYPE (12) go on;
3. the half message at ``commitLogOffset`` (none: SYSTEM_ERROR "Find prepared
   transaction message failed");
4. ``checkPrepareMessage``: its PGROUP, half-queue offset and commit-log offset must be
   the header's (SYSTEM_ERROR "The producer group wrong" / "The transaction state table
   offset wrong" / "The commit log offset wrong"; no PGROUP at all: Java's
   NullPointerException as the remark);
5. commit only: ``endMessageTransaction`` + ``sendFinalMessage``: the message is written
   to its REAL_TOPIC / REAL_QID with the COMMIT transaction type and
   preparedTransactionOffset = the half message's commit-log offset;
6. ``deletePrepareMessage``: the op message (tag "d", body = the half-queue offset) to
   RMQ_SYS_TRANS_OP_HALF_TOPIC, after a successful commit and after every rollback
   that passed step 4.

The stored properties of a committed message are the half message's, REAL_TOPIC,
REAL_QID and TRAN_MSG included: Java clears them from the map after it has encoded the
properties string (``endMessageTransaction``), so they stay in the stored bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.common import message_const as mc
from mqlab.common.filter_api import tags_string_to_tags_code
from mqlab.common.message import MessageExt, MessageExtBrokerInner
from mqlab.common.message_decoder import message_properties_to_string
from mqlab.common.sysflag import MessageSysFlag
from mqlab.remoting.codes import ResponseCode
from mqlab.remoting.command import RemotingCommand, RemotingCommandException
from mqlab.remoting.headers import EndTransactionRequestHeader
from mqlab.runtime.context import Channel
from mqlab.store.status import PutMessageStatus
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["EndTransactionProcessor", "SEND_FINAL_MESSAGE_STATUS"]

C = "EndTransactionProcessor.processRequest"

_NOT = MessageSysFlag.TRANSACTION_NOT_TYPE
_COMMIT = MessageSysFlag.TRANSACTION_COMMIT_TYPE
_ROLLBACK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
_STATE_NAME = {_NOT: "UNKNOW", _COMMIT: "COMMIT", _ROLLBACK: "ROLLBACK"}

_ILLEGAL = (
    "The message is illegal, maybe msg body or properties length not matched. msg body "
    "length limit 128k, msg properties length limit 32k."
)
#: ``#sendFinalMessage``: PutMessageStatus → (code, remark).
SEND_FINAL_MESSAGE_STATUS: dict[PutMessageStatus, tuple[int, str | None]] = {
    PutMessageStatus.PUT_OK: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_DISK_TIMEOUT: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: (ResponseCode.SUCCESS, None),
    PutMessageStatus.SLAVE_NOT_AVAILABLE: (ResponseCode.SUCCESS, None),
    PutMessageStatus.CREATE_MAPEDFILE_FAILED: (ResponseCode.SYSTEM_ERROR, "Create mapped file failed."),
    PutMessageStatus.MESSAGE_ILLEGAL: (ResponseCode.MESSAGE_ILLEGAL, _ILLEGAL),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (ResponseCode.MESSAGE_ILLEGAL, _ILLEGAL),
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (ResponseCode.SERVICE_NOT_AVAILABLE, "Service not available now."),
    PutMessageStatus.OS_PAGECACHE_BUSY: (ResponseCode.SYSTEM_ERROR, "OS page cache busy, please try another machine"),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
}  # fmt: skip


#: ``RemotingCommand#createResponseCommand(null)``'s remark, kept by a rollback's answer
#: (``checkPrepareMessage`` sets only the code).
NOT_SET_REMARK = "not set any response code"
_BAD_STATE = (
    "org.apache.rocketmq.remoting.exception.RemotingCommandException: commitOrRollback field "
    "wrong, org.apache.rocketmq.common.protocol.header.EndTransactionRequestHeader.checkFields"
    "(EndTransactionRequestHeader.java:60)"
)
#: ``pgroupRead.equals(...)`` with no PGROUP property (the message is no half message), as
#: JDK 8 writes it (JDK 14+ adds a message; the first frame is the same).
_NO_PGROUP = (
    "java.lang.NullPointerException, org.apache.rocketmq.broker.processor."
    "EndTransactionProcessor.checkPrepareMessage(EndTransactionProcessor.java:169)"
)


def _response(code: int, remark: str | None = None) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark, ext_fields={})


class EndTransactionProcessor:
    """END_TRANSACTION (37)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker

    def _emit(self, step: str, kind: str = Kind.STEP, **fields) -> None:
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(C, step, kind, **fields)

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """Steps 1–6 of the module docstring. Mirrors ``EndTransactionProcessor#processRequest``."""
        broker = self.broker
        try:
            h = EndTransactionRequestHeader.from_ext_fields(request.ext_fields)
        except RemotingCommandException as e:
            return _response(ResponseCode.SYSTEM_ERROR, str(e))
        state = h.commit_or_rollback
        if state not in (_NOT, _COMMIT, _ROLLBACK):
            # EndTransactionRequestHeader#checkFields throws; the remoting layer answers
            # with RemotingHelper#exceptionSimpleDesc (the exception and its first frame).
            return _response(ResponseCode.SYSTEM_ERROR, _BAD_STATE)
        # step 1: a slave does not end transactions
        if broker.message_store_config.broker_role == "SLAVE":
            self._emit("1", Kind.ERROR, text="message store is slave mode, so end transaction "
                       "is forbidden")  # fmt: skip
            return _response(ResponseCode.SLAVE_NOT_AVAILABLE)
        # step 2: the state the producer reports
        self._emit(
            "2", state=_STATE_NAME[state], from_transaction_check=h.from_transaction_check,
            group=h.producer_group, msg_id=h.msg_id, commit_log_offset=h.commit_log_offset,
            tran_state_table_offset=h.tran_state_table_offset, remark=request.remark,
            text=f"{h.producer_group} ends {h.msg_id}: {_STATE_NAME[state]}"
            + (" (answer to a check)" if h.from_transaction_check else ""),
        )  # fmt: skip
        if state == _NOT:
            return None  # pending: no response, the check service will ask again
        service = broker.transactional_message_service
        # step 3: the half message
        offset = h.commit_log_offset if h.commit_log_offset is not None else -1
        if state == _COMMIT:
            result = service.commit_message(offset)
        else:
            result = service.rollback_message(offset)
        if result.response_code != ResponseCode.SUCCESS:
            self._emit("3", Kind.ERROR, commit_log_offset=offset, remark=result.response_remark,
                       text=f"no half message at @{offset}: {result.response_remark}")  # fmt: skip
            return _response(result.response_code, result.response_remark)
        half = result.prepare_message
        # step 4: checkPrepareMessage
        res = self.check_prepare_message(half, h)
        if res.code != ResponseCode.SUCCESS:
            self._emit("4", Kind.ERROR, remark=res.remark, text=f"refused: {res.remark}")
            return res
        if state == _COMMIT:
            # step 5: the message back on its real topic
            inner = self.end_message_transaction(half)
            inner.sys_flag = MessageSysFlag.reset_transaction_value(inner.sys_flag, _COMMIT)
            inner.queue_offset = h.tran_state_table_offset or 0
            inner.prepared_transaction_offset = offset
            inner.store_timestamp = half.store_timestamp
            send_result = self.send_final_message(inner)
            self._emit(
                "5", topic=inner.topic, queue_id=inner.queue_id, code=send_result.code,
                text=f"commit: written to {inner.topic} queue {inner.queue_id}"
                if send_result.code == ResponseCode.SUCCESS
                else f"commit failed: {send_result.remark}",
            )  # fmt: skip
            if send_result.code == ResponseCode.SUCCESS:
                self._delete_prepare_message(half)
            return send_result
        # rollback: only the op message
        self._delete_prepare_message(half)
        return res

    def _delete_prepare_message(self, half: MessageExt) -> None:
        # step 6: the op message
        self.broker.transactional_message_service.delete_prepare_message(half)
        self._emit(
            "6", half_queue_offset=half.queue_offset, queue_id=half.queue_id,
            text=f"op message 'd' for half offset {half.queue_offset} → "
            "RMQ_SYS_TRANS_OP_HALF_TOPIC",
        )  # fmt: skip

    @staticmethod
    def check_prepare_message(
        msg_ext: MessageExt | None, h: EndTransactionRequestHeader
    ) -> RemotingCommand:
        """Mirrors ``#checkPrepareMessage``: SUCCESS keeps the "not set any response code"
        remark (what a rollback answers); a message without PGROUP is Java's
        NullPointerException."""
        if msg_ext is None:
            return _response(ResponseCode.SYSTEM_ERROR, "Find prepared transaction message failed")
        pgroup_read = msg_ext.properties.get(mc.PROPERTY_PRODUCER_GROUP)
        if pgroup_read is None:
            return _response(ResponseCode.SYSTEM_ERROR, _NO_PGROUP)
        if pgroup_read != h.producer_group:
            return _response(ResponseCode.SYSTEM_ERROR, "The producer group wrong")
        if msg_ext.queue_offset != h.tran_state_table_offset:
            return _response(ResponseCode.SYSTEM_ERROR, "The transaction state table offset wrong")
        if msg_ext.commit_log_offset != h.commit_log_offset:
            return _response(ResponseCode.SYSTEM_ERROR, "The commit log offset wrong")
        return _response(ResponseCode.SUCCESS, NOT_SET_REMARK)

    @staticmethod
    def end_message_transaction(msg_ext: MessageExt) -> MessageExtBrokerInner:
        """The message for its real topic. Mirrors ``#endMessageTransaction``: the stored
        properties string is the half message's (see the module docstring)."""
        props = dict(msg_ext.properties)
        props_string = message_properties_to_string(props)
        props.pop(mc.PROPERTY_REAL_TOPIC, None)
        props.pop(mc.PROPERTY_REAL_QUEUE_ID, None)
        props.pop(mc.PROPERTY_TRANSACTION_PREPARED, None)
        return MessageExtBrokerInner(
            topic=msg_ext.properties.get(mc.PROPERTY_REAL_TOPIC) or "",
            queue_id=int(msg_ext.properties.get(mc.PROPERTY_REAL_QUEUE_ID) or 0),
            body=msg_ext.body, flag=msg_ext.flag, born_timestamp=msg_ext.born_timestamp,
            born_host=msg_ext.born_host, store_host=msg_ext.store_host,
            reconsume_times=msg_ext.reconsume_times, sys_flag=msg_ext.sys_flag,
            tags_code=tags_string_to_tags_code(props.get(mc.PROPERTY_TAGS)),
            properties=props, properties_string=props_string,
        )  # fmt: skip

    def send_final_message(self, inner: MessageExtBrokerInner) -> RemotingCommand:
        """Mirrors ``#sendFinalMessage``."""
        r = self.broker.put_message(inner)
        if r is None:
            return _response(ResponseCode.SYSTEM_ERROR, "store putMessage return null")
        code, remark = SEND_FINAL_MESSAGE_STATUS.get(
            r.put_message_status, (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR DEFAULT")
        )
        return _response(code, remark)
