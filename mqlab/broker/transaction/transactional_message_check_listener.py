"""What the check does with a half message: ask its producer, or discard it.

Mirrors ``AbstractTransactionalMessageCheckListener`` (broker/transaction) and
``DefaultTransactionalMessageCheckListener`` (broker/transaction/queue), RocketMQ 4.9.3,
in one class.

``send_check_message`` (trace component
``AbstractTransactionalMessageCheckListener.sendCheckMessage``), three steps:

1. the CHECK_TRANSACTION_STATE header: commitLogOffset and offsetMsgId of the half
   message's newest copy, msgId = transactionId = its UNIQ_KEY, tranStateTableOffset =
   that copy's half-queue offset; the message turns back into its real topic and queue;
2. ``ProducerManager#getAvailableChannel(PGROUP)``: one channel of the producer group,
   round-robin; none → no check this time (logged, as in Java);
3. ``Broker2Client#checkProducerTransactionState``: CHECK_TRANSACTION_STATE (39),
   oneway, with the message (``MessageDecoder#encode``) as body.

``resolve_discard_msg``: the half message goes to TRANS_CHECK_MAX_TIME_TOPIC (1 queue,
created on first use) and is never checked again. Java runs ``sendCheckMessage`` on a
thread pool; here it runs at once, inside the check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.common import message_const as mc
from mqlab.common.filter_api import tags_string_to_tags_code
from mqlab.common.message import MessageExt, MessageExtBrokerInner
from mqlab.common.message_decoder import encode_stored_message, message_properties_to_string
from mqlab.common.perm_name import PermName
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.headers import CheckTransactionStateRequestHeader
from mqlab.store.status import PutMessageStatus
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["DefaultTransactionalMessageCheckListener", "TCMT_QUEUE_NUMS"]

#: ``TCMT_QUEUE_NUMS``: queues of TRANS_CHECK_MAX_TIME_TOPIC.
TCMT_QUEUE_NUMS = 1

C_SEND = "AbstractTransactionalMessageCheckListener.sendCheckMessage"
C_DISCARD = "DefaultTransactionalMessageCheckListener.resolveDiscardMsg"


class DefaultTransactionalMessageCheckListener:
    """Check-backs and discards for one broker."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker
        #: CHECK_TRANSACTION_STATE requests sent (for inspection and tests).
        self.checks_sent = 0

    def resolve_half_msg(self, msg_ext: MessageExt) -> None:
        """Mirrors ``#resolveHalfMsg`` (the thread pool is left out: it runs now)."""
        self.send_check_message(msg_ext)

    def send_check_message(self, msg_ext: MessageExt) -> None:
        """Steps 1–3 of the module docstring. Mirrors ``#sendCheckMessage``."""
        broker = self.broker
        tracer = broker.tracer
        # step 1: the header, and the message as its real topic / queue
        uniq = msg_ext.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        header = CheckTransactionStateRequestHeader(
            commit_log_offset=msg_ext.commit_log_offset, offset_msg_id=msg_ext.msg_id,
            msg_id=uniq, transaction_id=uniq, tran_state_table_offset=msg_ext.queue_offset,
        )  # fmt: skip
        msg_ext.topic = msg_ext.properties.get(mc.PROPERTY_REAL_TOPIC) or ""
        msg_ext.queue_id = int(msg_ext.properties.get(mc.PROPERTY_REAL_QUEUE_ID) or 0)
        msg_ext.store_size = 0
        # step 2: one channel of the producer group
        group = msg_ext.properties.get(mc.PROPERTY_PRODUCER_GROUP)
        channel = broker.producer_manager.get_available_channel(group)
        if channel is None:
            if tracer.enabled:
                tracer.emit(C_SEND, "2", Kind.ERROR, group=group, msg_id=uniq,
                            text=f"check transaction failed, channel is null. groupId={group}")  # fmt: skip
            return
        # step 3: CHECK_TRANSACTION_STATE, oneway
        request = RemotingCommand.create_request(
            RequestCode.CHECK_TRANSACTION_STATE, header.to_ext_fields(),
            encode_stored_message(msg_ext),
        )  # fmt: skip
        broker.ctx.send_request_oneway(channel, request)
        self.checks_sent += 1
        if tracer.enabled:
            tracer.emit(
                C_SEND, "3", group=group, msg_id=uniq, to=channel.remote_address,
                commit_log_offset=msg_ext.commit_log_offset,
                tran_state_table_offset=msg_ext.queue_offset,
                check_times=msg_ext.properties.get(mc.PROPERTY_TRANSACTION_CHECK_TIMES),
                text=f"CHECK_TRANSACTION_STATE for {uniq} to {group} at {channel.remote_address}",
            )  # fmt: skip

    def resolve_discard_msg(self, msg_ext: MessageExt) -> None:
        """Move a half message checked too often to TRANS_CHECK_MAX_TIME_TOPIC.

        Mirrors ``DefaultTransactionalMessageCheckListener#resolveDiscardMsg`` and
        ``#toMessageExtBrokerInner``.
        """
        broker = self.broker
        tc = broker.topic_config_manager.create_topic_of_tran_check_max_time(
            TCMT_QUEUE_NUMS, PermName.PERM_READ | PermName.PERM_WRITE, broker.ctx.now_ms
        )
        queue_id = broker.ctx.rng("trans check max time queue").randint(0, 99_999_998) % (
            TCMT_QUEUE_NUMS
        )
        props = dict(msg_ext.properties)
        inner = MessageExtBrokerInner(
            topic=tc.topic_name, body=msg_ext.body, flag=msg_ext.flag, properties=props,
            properties_string=message_properties_to_string(props),
            tags_code=tags_string_to_tags_code(props.get(mc.PROPERTY_TAGS)), queue_id=queue_id,
            sys_flag=msg_ext.sys_flag, born_host=msg_ext.born_host,
            born_timestamp=msg_ext.born_timestamp, store_host=msg_ext.store_host,
            reconsume_times=msg_ext.reconsume_times, msg_id=msg_ext.msg_id,
        )  # fmt: skip
        r = broker.put_message(inner)
        ok = r is not None and r.put_message_status is PutMessageStatus.PUT_OK
        if broker.tracer.enabled:
            broker.tracer.emit(
                C_DISCARD, "discard", Kind.STEP if ok else Kind.ERROR, ok=ok,
                real_topic=props.get(mc.PROPERTY_REAL_TOPIC), queue_offset=msg_ext.queue_offset,
                commit_log_offset=msg_ext.commit_log_offset,
                text=f"half message @{msg_ext.commit_log_offset} checked too many times: "
                f"{'moved' if ok else 'could not move'} to {tc.topic_name}",
            )  # fmt: skip
