"""Transactional sends on the client: the listener, the states, the result, the engine.

Mirrors ``LocalTransactionState``, ``TransactionListener`` and ``TransactionSendResult``
(client/producer, RocketMQ 4.9.3), and the transaction
part of ``DefaultMQProducerImpl`` (client/impl/producer) as the mixin
``TransactionProducerImpl``:

``sendMessageInTransaction`` (trace component
``DefaultMQProducerImpl.sendMessageInTransaction``), four steps:

1. the message gets TRAN_MSG=true and PGROUP=<group> (a DELAY level is dropped) and is
   sent synchronously: the broker parks it in RMQ_SYS_TRANS_HALF_TOPIC;
2. on SEND_OK: ``executeLocalTransaction(msg, arg)`` (an exception or None → UNKNOW);
   FLUSH_DISK_TIMEOUT / FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE → ROLLBACK_MESSAGE;
3. ``endTransaction``: END_TRANSACTION (37), oneway, to the master that stored the half
   message: commitLogOffset from the offsetMsgId, tranStateTableOffset = the half-queue
   offset, msgId = the UNIQ_KEY, commitOrRollback 8 / 12 / 0;
4. the ``TransactionSendResult`` (the send result plus the local state).

``checkTransactionState`` answers the broker's CHECK_TRANSACTION_STATE (39):
``checkLocalTransaction(msg)`` and an END_TRANSACTION with ``fromTransactionCheck`` true
to the broker that asked. Java runs both the local transaction and the check on the
caller's / a check thread; here they run inside the producer's task, in no virtual time.
``TransactionMQProducer`` is in ``transaction_mq_producer``.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from mqlab.client.exception import MQClientException
from mqlab.client.producer.send_future import CommunicationMode, SendFuture
from mqlab.client.producer.send_result import SendResult, SendStatus
from mqlab.client.producer.validators import Validators
from mqlab.common import message_const as mc
from mqlab.common.message import Message, MessageExt
from mqlab.common.message_decoder import decode_message_id
from mqlab.common.sysflag import MessageSysFlag
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import CheckTransactionStateRequestHeader, EndTransactionRequestHeader
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.client.mq_client_instance import MQClientInstance
    from mqlab.client.producer.default_mq_producer import DefaultMQProducer

__all__ = [
    "LocalTransactionState",
    "TransactionListener",
    "TransactionSendResult",
    "TransactionProducerImpl",
]

Gen = Generator[Any, Any, Any]
C_SEND = "DefaultMQProducerImpl.sendMessageInTransaction"
C_CHECK = "DefaultMQProducerImpl.checkTransactionState"


class LocalTransactionState(Enum):
    """Mirrors ``LocalTransactionState`` (``UNKNOW`` is Java's spelling)."""

    COMMIT_MESSAGE = "COMMIT_MESSAGE"
    ROLLBACK_MESSAGE = "ROLLBACK_MESSAGE"
    UNKNOW = "UNKNOW"


_STATE_TO_FLAG = {
    LocalTransactionState.COMMIT_MESSAGE: MessageSysFlag.TRANSACTION_COMMIT_TYPE,
    LocalTransactionState.ROLLBACK_MESSAGE: MessageSysFlag.TRANSACTION_ROLLBACK_TYPE,
    LocalTransactionState.UNKNOW: MessageSysFlag.TRANSACTION_NOT_TYPE,
}


class TransactionListener:
    """Mirrors ``TransactionListener``: subclass it, or pass any object with both methods.

    ``execute_local_transaction(msg, arg)`` runs right after the half message is stored;
    ``check_local_transaction(msg)`` answers the broker's check-back. Both return a
    ``LocalTransactionState``.
    """

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        raise NotImplementedError

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionSendResult(SendResult):
    """Mirrors ``TransactionSendResult``: a ``SendResult`` plus the local state."""

    local_transaction_state: LocalTransactionState = LocalTransactionState.UNKNOW

    def __str__(self) -> str:
        return (
            f"{SendResult.__str__(self)[:-1]}, localTransactionState="
            f"{self.local_transaction_state.name}]"
        )


class TransactionProducerImpl:
    """``DefaultMQProducerImpl``'s transaction methods, mixed into it."""

    if TYPE_CHECKING:
        default_mq_producer: DefaultMQProducer
        instance: MQClientInstance

        @property
        def group(self) -> str: ...
        def send_default_impl(self, msg: Message, mode: CommunicationMode, t: int) -> Gen: ...
        def _start(self, gen: Gen, mode: CommunicationMode, cb: Any, what: str) -> SendFuture: ...

    def get_check_listener(self) -> Any:
        """The producer's ``TransactionListener``. Mirrors ``#getCheckListener``."""
        return getattr(self.default_mq_producer, "transaction_listener", None)

    def send_message_in_transaction(self, msg: Message, arg: Any = None) -> SendFuture:
        """Steps 1–4 of the module docstring; the future's result is a
        ``TransactionSendResult``. Mirrors ``#sendMessageInTransaction``.

        Raises:
            MQClientException: no listener ("tranExecutor is null").
        """
        if not isinstance(msg, Message):
            raise TypeError(f"msg must be a mqlab Message, got {type(msg).__name__}")
        if self.get_check_listener() is None:
            raise MQClientException(-1, "tranExecutor is null")
        gen = self._send_message_in_transaction(msg, arg)
        return self._start(gen, CommunicationMode.SYNC, None, "sendMessageInTransaction")

    def _send_message_in_transaction(self, msg: Message, arg: Any) -> Gen:
        producer = self.default_mq_producer
        tracer = self.instance.tracer
        listener = self.get_check_listener()
        # step 1: TRAN_MSG + PGROUP, a synchronous send (to the half topic)
        if msg.delay_time_level != 0:
            msg.clear_property(mc.PROPERTY_DELAY_TIME_LEVEL)
        Validators.check_message(msg, producer.max_message_size)
        msg.put_property(mc.PROPERTY_TRANSACTION_PREPARED, "true")
        msg.put_property(mc.PROPERTY_PRODUCER_GROUP, producer.producer_group)
        try:
            send_result = yield from self.send_default_impl(
                msg, CommunicationMode.SYNC, producer.send_msg_timeout
            )
        except Exception as e:
            raise MQClientException(-1, "send message Exception") from e
        # step 2: the local transaction
        state = LocalTransactionState.UNKNOW
        local_exception: BaseException | None = None
        if send_result.send_status is SendStatus.SEND_OK:
            if send_result.transaction_id is not None:
                msg.put_property("__transactionId__", send_result.transaction_id)
            transaction_id = msg.get_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
            if transaction_id:
                msg.transaction_id = transaction_id
            try:
                state = listener.execute_local_transaction(msg, arg)
                if state is None:
                    state = LocalTransactionState.UNKNOW
            except Exception as e:  # Java catches Throwable
                local_exception = e
        elif send_result.send_status in (
            SendStatus.FLUSH_DISK_TIMEOUT,
            SendStatus.FLUSH_SLAVE_TIMEOUT,
            SendStatus.SLAVE_NOT_AVAILABLE,
        ):
            state = LocalTransactionState.ROLLBACK_MESSAGE
        if tracer.enabled:
            tracer.emit(
                C_SEND, "2", state=state.name, msg_id=send_result.msg_id,
                error=None if local_exception is None else repr(local_exception),
                text=f"local transaction of {send_result.msg_id}: {state.name}"
                + (f" ({local_exception!r})" if local_exception else ""),
            )  # fmt: skip
        # step 3: END_TRANSACTION, oneway
        self.end_transaction(msg, send_result, state, local_exception)
        # step 4: the result
        return TransactionSendResult(
            send_status=send_result.send_status, msg_id=send_result.msg_id,
            message_queue=send_result.message_queue, queue_offset=send_result.queue_offset,
            offset_msg_id=send_result.offset_msg_id, transaction_id=send_result.transaction_id,
            region_id=send_result.region_id, trace_on=send_result.trace_on,
            local_transaction_state=state,
        )  # fmt: skip

    def end_transaction(
        self, msg: Message, send_result: SendResult, state: LocalTransactionState,
        local_exception: BaseException | None,
    ) -> None:  # fmt: skip
        """END_TRANSACTION (37), oneway. Mirrors ``DefaultMQProducerImpl#endTransaction``."""
        inst = self.instance
        _, commit_log_offset = decode_message_id(send_result.offset_msg_id or send_result.msg_id)
        addr = inst.find_broker_address_in_publish(send_result.message_queue.broker_name)
        header = EndTransactionRequestHeader(
            producer_group=self.default_mq_producer.producer_group,
            tran_state_table_offset=send_result.queue_offset, commit_log_offset=commit_log_offset,
            commit_or_rollback=_STATE_TO_FLAG[state], from_transaction_check=False,
            msg_id=send_result.msg_id, transaction_id=send_result.transaction_id,
        )  # fmt: skip
        remark = (
            f"executeLocalTransactionBranch exception: {local_exception!r}"
            if local_exception is not None
            else None
        )
        self._end_transaction_oneway(addr, header, remark, from_check=False)

    def _end_transaction_oneway(
        self, addr: str | None, header: EndTransactionRequestHeader, remark: str | None,
        *, from_check: bool,
    ) -> None:  # fmt: skip
        """``MQClientAPIImpl#endTransactionOneway``."""
        inst = self.instance
        tracer = inst.tracer
        comp = C_CHECK if from_check else C_SEND
        if addr is None:
            if tracer.enabled:
                tracer.emit(
                    comp, "3", Kind.ERROR, text="no broker address: END_TRANSACTION not sent"
                )
            return
        request = RemotingCommand.create_request(
            RequestCode.END_TRANSACTION, header.to_ext_fields(), None
        )
        request.remark = remark
        inst.ctx.invoke_oneway(addr, request)
        if tracer.enabled:
            state = {0: "UNKNOW", 8: "COMMIT", 12: "ROLLBACK"}[header.commit_or_rollback or 0]
            tracer.emit(
                comp, "3", state=state, to=addr, msg_id=header.msg_id,
                commit_log_offset=header.commit_log_offset,
                tran_state_table_offset=header.tran_state_table_offset,
                from_transaction_check=from_check,
                text=f"END_TRANSACTION {state} for {header.msg_id} to {addr} (oneway)",
            )  # fmt: skip

    def check_transaction_state(
        self, addr: str, msg: MessageExt, header: CheckTransactionStateRequestHeader
    ) -> None:
        """Answer a check-back. Mirrors ``DefaultMQProducerImpl#checkTransactionState``
        (the Runnable and its ``processTransactionState``)."""
        listener = self.get_check_listener()
        tracer = self.instance.tracer
        group = self.default_mq_producer.producer_group
        if listener is None:
            if tracer.enabled:
                tracer.emit(C_CHECK, "1", Kind.ERROR, group=group,
                            text=f"pick transactionCheckListener by group[{group}] failed")  # fmt: skip
            return
        state = LocalTransactionState.UNKNOW
        exception: BaseException | None = None
        try:
            state = listener.check_local_transaction(msg)
            if state is None:  # Java's switch would skip a null state: commitOrRollback null
                state = LocalTransactionState.UNKNOW
        except Exception as e:
            exception = e
        unique_key = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or msg.msg_id
        if tracer.enabled:
            tracer.emit(
                C_CHECK, "2", state=state.name, msg_id=unique_key, frm=addr,
                text=f"broker {addr} checks {unique_key}: {state.name}",
            )  # fmt: skip
        end = EndTransactionRequestHeader(
            producer_group=group, tran_state_table_offset=header.tran_state_table_offset,
            commit_log_offset=header.commit_log_offset,
            commit_or_rollback=_STATE_TO_FLAG[state], from_transaction_check=True,
            msg_id=unique_key, transaction_id=header.transaction_id,
        )  # fmt: skip
        remark = (
            f"checkLocalTransactionState Exception: {exception!r}"
            if exception is not None
            else None
        )
        self._end_transaction_oneway(addr, end, remark, from_check=True)
