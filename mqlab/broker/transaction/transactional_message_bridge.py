"""The transaction service's access to the store: half, op and offsets.

Mirrors ``TransactionalMessageBridge`` and ``TransactionalMessageUtil``
(broker/transaction/queue, RocketMQ 4.9.3). A half message is the producer's message
parked in ``RMQ_SYS_TRANS_HALF_TOPIC`` queue 0 with its real topic and queue id in the
properties REAL_TOPIC / REAL_QID (``parse_half_message_inner``). Ending a transaction
(commit or rollback) writes an *op message* to ``RMQ_SYS_TRANS_OP_HALF_TOPIC`` (same
queue id), tag ``"d"``, whose body is the half message's queue offset as text
(``put_op_message``). The check service reads both queues as the consumer group
``CID_RMQ_SYS_TRANS`` and keeps its offsets in ``ConsumerOffsetManager``, so all of it
lives in the store and survives a restart.

What it owns: nothing but the op-queue map. What it must not know: sockets and clocks
(time comes from the broker's context).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.client.consumer.pull_api_wrapper import PullResult, PullStatus
from mqlab.common import message_const as mc
from mqlab.common.filter_api import tags_string_to_tags_code
from mqlab.common.message import MessageExt, MessageExtBrokerInner
from mqlab.common.message_decoder import (
    MessageDecodeError,
    decode_stored_message,
    message_properties_to_string,
)
from mqlab.common.mix_all import CID_SYS_RMQ_TRANS
from mqlab.common.perm_name import PermName
from mqlab.common.sysflag import MessageSysFlag
from mqlab.common.topic_validator import RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC
from mqlab.store.status import GetMessageStatus, PutMessageResult, PutMessageStatus

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = [
    "TransactionalMessageBridge",
    "REMOVETAG",
    "build_half_topic",
    "build_op_topic",
    "build_consumer_group",
]

#: ``TransactionalMessageUtil.REMOVETAG``: the tag of every op message.
REMOVETAG = "d"

C = "TransactionalMessageBridge"

#: ``TransactionalMessageBridge#getMessage``: GetMessageStatus → PullStatus.
_PULL_STATUS = {
    GetMessageStatus.FOUND: PullStatus.FOUND,
    GetMessageStatus.NO_MATCHED_MESSAGE: PullStatus.NO_MATCHED_MSG,
    GetMessageStatus.NO_MESSAGE_IN_QUEUE: PullStatus.NO_NEW_MSG,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: PullStatus.NO_NEW_MSG,
    GetMessageStatus.MESSAGE_WAS_REMOVING: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.NO_MATCHED_LOGIC_QUEUE: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.OFFSET_FOUND_NULL: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.OFFSET_TOO_SMALL: PullStatus.OFFSET_ILLEGAL,
}


def build_half_topic() -> str:
    """``TransactionalMessageUtil#buildHalfTopic``."""
    return RMQ_SYS_TRANS_HALF_TOPIC


def build_op_topic() -> str:
    """``TransactionalMessageUtil#buildOpTopic``."""
    return RMQ_SYS_TRANS_OP_HALF_TOPIC


def build_consumer_group() -> str:
    """``TransactionalMessageUtil#buildConsumerGroup``: CID_RMQ_SYS_TRANS."""
    return CID_SYS_RMQ_TRANS


class TransactionalMessageBridge:
    """Store access for transactions, on one broker."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker
        #: ``storeHost``: brokerIP1 and the listen port (born and store host of op messages).
        self.store_host = broker.broker_addr

    @property
    def store(self):
        return self.broker.message_store

    # -- offsets of CID_RMQ_SYS_TRANS -----------------------------------------------------------
    def fetch_consume_offset(self, topic: str, queue_id: int) -> int:
        """The group's offset, or the queue's min offset. Mirrors ``#fetchConsumeOffset``."""
        offset = self.broker.consumer_offset_manager.query_offset(
            build_consumer_group(), topic, queue_id
        )
        if offset == -1:
            offset = self.store.get_min_offset_in_queue(topic, queue_id)
        return offset

    def fetch_message_queues(self, topic: str) -> list[int]:
        """The topic's queue ids (its config is created, 1 queue RW, when missing).

        Mirrors ``#fetchMessageQueues`` → ``#selectTopicConfig``
        (``createTopicInSendMessageBackMethod(topic, 1, PERM_WRITE | PERM_READ, 0)``).
        """
        tcm = self.broker.topic_config_manager
        tc = tcm.select_topic_config(topic)
        if tc is None:
            tc = tcm.create_topic_in_send_message_back_method(
                topic, 1, PermName.PERM_WRITE | PermName.PERM_READ, 0, self.broker.ctx.now_ms
            )
        if tc is None or tc.read_queue_nums <= 0:
            return []
        return list(range(tc.read_queue_nums))

    def update_consume_offset(self, topic: str, queue_id: int, offset: int) -> None:
        """Mirrors ``#updateConsumeOffset`` (``commitOffset`` as the broker's own host)."""
        self.broker.consumer_offset_manager.commit_offset(
            self.store_host, build_consumer_group(), topic, queue_id, offset
        )

    # -- reading ------------------------------------------------------------------------------------
    def get_half_message(self, queue_id: int, offset: int, nums: int) -> PullResult | None:
        """Mirrors ``#getHalfMessage``."""
        return self._get_message(build_half_topic(), queue_id, offset, nums)

    def get_op_message(self, queue_id: int, offset: int, nums: int) -> PullResult | None:
        """Mirrors ``#getOpMessage``."""
        return self._get_message(build_op_topic(), queue_id, offset, nums)

    def _get_message(self, topic: str, queue_id: int, offset: int, nums: int) -> PullResult | None:
        """``#getMessage``: the store's answer as a client ``PullResult`` (bodies not inflated)."""
        r = self.store.get_message(build_consumer_group(), topic, queue_id, offset, nums, None)
        if r is None:
            return None
        status = _PULL_STATUS.get(r.status, PullStatus.NO_NEW_MSG)
        found: list[MessageExt] | None = None
        if r.status is GetMessageStatus.FOUND:
            found = []
            for buf in r.message_buffers:  # MessageDecoder.decode(bb, true, false)
                try:
                    found.append(decode_stored_message(buf, 0, read_body=True, inflate=False))
                except MessageDecodeError:
                    continue
        result = PullResult(
            pull_status=status, next_begin_offset=r.next_begin_offset,
            min_offset=r.min_offset, max_offset=r.max_offset,
        )  # fmt: skip
        result.msg_found_list = found  # type: ignore[assignment]  # Java's null when not FOUND
        return result

    def look_message_by_offset(self, commit_log_offset: int) -> MessageExt | None:
        """Mirrors ``#lookMessageByOffset``."""
        return self.store.look_message_by_offset(commit_log_offset)

    # -- writing ------------------------------------------------------------------------------------
    @staticmethod
    def parse_half_message_inner(msg: MessageExtBrokerInner) -> MessageExtBrokerInner:
        """Park a prepared message in the half topic.

        Mirrors ``#parseHalfMessageInner``: REAL_TOPIC / REAL_QID ← its topic and queue,
        the transaction bits reset to NOT_TYPE (so the half message is dispatched to a
        consume queue), topic RMQ_SYS_TRANS_HALF_TOPIC, queue 0, properties re-encoded.
        """
        msg.properties[mc.PROPERTY_REAL_TOPIC] = msg.topic
        msg.properties[mc.PROPERTY_REAL_QUEUE_ID] = str(msg.queue_id)
        msg.sys_flag = MessageSysFlag.reset_transaction_value(
            msg.sys_flag, MessageSysFlag.TRANSACTION_NOT_TYPE
        )
        msg.topic = build_half_topic()
        msg.queue_id = 0
        msg.properties_string = message_properties_to_string(msg.properties)
        return msg

    def put_half_message(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Mirrors ``#putHalfMessage``."""
        return self.broker.put_message(self.parse_half_message_inner(msg))

    def put_message_return_result(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Mirrors ``#putMessageReturnResult``."""
        return self.broker.put_message(msg)

    def put_message(self, msg: MessageExtBrokerInner) -> bool:
        """Mirrors ``#putMessage``: True on PUT_OK."""
        r = self.broker.put_message(msg)
        return r is not None and r.put_message_status is PutMessageStatus.PUT_OK

    def put_op_message(self, msg_ext: MessageExt, op_type: str) -> bool:
        """Write the op message for a half message. Mirrors ``#putOpMessage`` →
        ``#addRemoveTagInTransactionOp`` → ``#writeOp``: topic RMQ_SYS_TRANS_OP_HALF_TOPIC,
        the half message's queue id, tag "d", body = its queue offset as text. Always True
        for "d", as in Java (a failed put is only logged there)."""
        if op_type != REMOVETAG:
            return True
        body = str(msg_ext.queue_offset).encode()
        self.put_message(self.make_op_message_inner(body, msg_ext.queue_id))
        return True

    def make_op_message_inner(self, body: bytes, queue_id: int) -> MessageExtBrokerInner:
        """Mirrors ``#makeOpMessageInner`` over ``new Message(opTopic, "d", body)``.

        The stored properties are the new Message's: TAGS=d and WAIT=true (its
        constructor sets both). ``setWaitStoreMsgOK(false)`` and ``setUniqID`` come after
        ``setPropertiesString``, so they change the map only, not what is stored (the
        UNIQ_KEY is left out of the map here: nothing reads it).
        """
        props = {mc.PROPERTY_TAGS: REMOVETAG, mc.PROPERTY_WAIT_STORE_MSG_OK: "true"}
        props_string = message_properties_to_string(props)
        props[mc.PROPERTY_WAIT_STORE_MSG_OK] = "false"
        now = self.broker.ctx.now_ms
        return MessageExtBrokerInner(
            topic=build_op_topic(), body=body, queue_id=queue_id, properties=props,
            properties_string=props_string, tags_code=tags_string_to_tags_code(REMOVETAG),
            sys_flag=0, born_timestamp=now, born_host=self.store_host,
            store_host=self.store_host,
        )  # fmt: skip

    @staticmethod
    def renew_half_message_inner(msg_ext: MessageExt) -> MessageExtBrokerInner:
        """A copy of a half message to write again at the end of the half queue.

        Mirrors ``#renewHalfMessageInner``: topic, body, queue id, sys flag, properties
        (with the check count the scan just set), tags code, born time and host, store
        host. Not copied, as in Java: the flag and reconsume times (both 0).

        The copy shares ``msg_ext``'s properties map, as ``MessageAccessor#setProperties``
        does: ``setWaitStoreMsgOK(false)`` comes after the properties string, so the copy
        is stored with the half message's WAIT but ``msg_ext`` (the body of the
        CHECK_TRANSACTION_STATE that follows) now says WAIT=false.
        """
        props = msg_ext.properties
        inner = MessageExtBrokerInner(
            topic=msg_ext.topic, body=msg_ext.body, queue_id=msg_ext.queue_id,
            msg_id=msg_ext.msg_id, sys_flag=msg_ext.sys_flag,
            tags_code=tags_string_to_tags_code(props.get(mc.PROPERTY_TAGS)),
            properties=props, properties_string=message_properties_to_string(props),
            born_timestamp=msg_ext.born_timestamp, born_host=msg_ext.born_host,
            store_host=msg_ext.store_host,
        )  # fmt: skip
        props[mc.PROPERTY_WAIT_STORE_MSG_OK] = "false"  # setWaitStoreMsgOK(false)
        return inner

    @classmethod
    def renew_immunity_half_message_inner(cls, msg_ext: MessageExt) -> MessageExtBrokerInner:
        """``#renewImmunityHalfMessageInner``: the copy also remembers the first queue
        offset in TRAN_PREPARED_QUEUE_OFFSET (kept if already there); its properties string
        is encoded again, so it stores WAIT=false."""
        inner = cls.renew_half_message_inner(msg_ext)
        first = msg_ext.properties.get(mc.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET)
        inner.properties[mc.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET] = (
            first if first is not None else str(msg_ext.queue_offset)
        )
        inner.properties_string = message_properties_to_string(inner.properties)
        return inner
