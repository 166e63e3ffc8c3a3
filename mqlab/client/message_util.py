"""The replier's helper: turn a request message into its reply.

Mirrors ``MessageUtil`` (client/utils, RocketMQ 4.9.3). A consumer that receives a
request (a message sent with ``DefaultMQProducer.request``) answers it with
``create_reply_message(request_msg, body)`` and sends the result with any producer: the
MSG_TYPE "reply" property makes the producer use SEND_REPLY_MESSAGE(_V2) (324/325), and
the broker pushes it to the client named in REPLY_TO_CLIENT.
"""

from __future__ import annotations

from mqlab.client.exception import ClientErrorCode, MQClientException
from mqlab.common import message_const as mc
from mqlab.common.message import Message, MessageExt
from mqlab.common.mix_all import REPLY_MESSAGE_FLAG, get_reply_topic

__all__ = ["create_reply_message", "get_reply_to_client"]


def create_reply_message(
    request_message: Message | MessageExt | None, body: bytes | str
) -> Message:
    """Mirrors ``MessageUtil#createReplyMessage``.

    The reply's topic is ``<cluster>_REPLY_TOPIC`` of the CLUSTER property the broker
    stamped on the stored request; it carries MSG_TYPE "reply" and the request's
    CORRELATION_ID, REPLY_TO_CLIENT and TTL (Java's ``new Message()``: no WAIT property).

    Raises:
        MQClientException: 10007, the request is None or has no CLUSTER property.
    """
    if request_message is None:
        raise MQClientException(
            ClientErrorCode.CREATE_REPLY_MESSAGE_EXCEPTION,
            "create reply message fail, requestMessage cannot be null.",
        )
    cluster = request_message.get_property(mc.PROPERTY_CLUSTER)
    if cluster is None:
        raise MQClientException(
            ClientErrorCode.CREATE_REPLY_MESSAGE_EXCEPTION,
            f"create reply message fail, requestMessage error, property[{mc.PROPERTY_CLUSTER}] "
            "is null.",
        )
    reply = Message(get_reply_topic(cluster), body)
    reply.properties.clear()  # Java's new Message(): no WAIT
    for name, value in (
        (mc.PROPERTY_MESSAGE_TYPE, REPLY_MESSAGE_FLAG),
        (mc.PROPERTY_CORRELATION_ID, request_message.get_property(mc.PROPERTY_CORRELATION_ID)),
        (mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT,
         request_message.get_property(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT)),
        (mc.PROPERTY_MESSAGE_TTL, request_message.get_property(mc.PROPERTY_MESSAGE_TTL)),
    ):  # fmt: skip
        if value is not None:  # MessageAccessor.putProperty: a null value is not stored
            reply.put_property(name, value)
    return reply


def get_reply_to_client(msg: Message | MessageExt) -> str | None:
    """Mirrors ``MessageUtil#getReplyToClient``."""
    return msg.get_property(mc.PROPERTY_MESSAGE_REPLY_TO_CLIENT)
