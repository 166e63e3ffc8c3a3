"""Client-side checks of group names, topics and messages, before anything is sent.

Mirrors ``Validators`` (client/Validators.java, RocketMQ 4.9.3); docs/reference.md §7.1 ("Client-side
(Validators): group blank / > 255 chars / illegal chars rejected; topic ≤ 127; message
body non-null, non-empty, ≤ maxMessageSize (4 MiB)"). Failures raise
``MQClientException`` with Java's texts (code −1, or MESSAGE_ILLEGAL (13) for the
message checks, as Java sets it).
"""

from __future__ import annotations

from mqlab.client.exception import MQClientException
from mqlab.common.message import Message
from mqlab.common.topic_validator import is_not_allowed_send_topic, is_topic_or_group_illegal
from mqlab.common.util_all import is_blank
from mqlab.remoting.codes import ResponseCode

__all__ = ["CHARACTER_MAX_LENGTH", "TOPIC_MAX_LENGTH", "Validators"]

CHARACTER_MAX_LENGTH = 255
TOPIC_MAX_LENGTH = 127
_VALID_PATTERN = "^[%|a-zA-Z0-9_-]+$"


class Validators:
    """Mirrors ``Validators`` (client, RocketMQ 4.9.3)."""

    @staticmethod
    def check_group(group: str | None) -> None:
        """Mirrors ``Validators#checkGroup``."""
        if group is None or is_blank(group):
            raise MQClientException(-1, "the specified group is blank")
        if len(group) > CHARACTER_MAX_LENGTH:
            raise MQClientException(-1, "the specified group is longer than group max length 255.")
        if is_topic_or_group_illegal(group):
            raise MQClientException(
                -1,
                f"the specified group[{group}] contains illegal characters, allowing only "
                f"{_VALID_PATTERN}",
            )

    @staticmethod
    def check_topic(topic: str | None) -> None:
        """Mirrors ``Validators#checkTopic``."""
        if topic is None or is_blank(topic):
            raise MQClientException(-1, "The specified topic is blank")
        if len(topic) > TOPIC_MAX_LENGTH:
            raise MQClientException(
                -1, f"The specified topic is longer than topic max length {TOPIC_MAX_LENGTH}."
            )
        if is_topic_or_group_illegal(topic):
            raise MQClientException(
                -1,
                f"The specified topic[{topic}] contains illegal characters, allowing only "
                f"{_VALID_PATTERN}",
            )

    @staticmethod
    def check_message(msg: Message | None, max_message_size: int) -> None:
        """Topic rules, not-allowed-send topics, then the body.

        Mirrors ``Validators#checkMessage`` (client, RocketMQ 4.9.3).
        """
        if msg is None:
            raise MQClientException(ResponseCode.MESSAGE_ILLEGAL, "the message is null")
        Validators.check_topic(msg.topic)
        if is_not_allowed_send_topic(msg.topic):
            raise MQClientException(-1, f"Sending message to topic[{msg.topic}] is forbidden.")
        Validators.check_message_body(msg, max_message_size)

    @staticmethod
    def check_message_body(msg: Message, max_message_size: int) -> None:
        """The body half of ``check_message`` (a batch checks its one topic once)."""
        if msg.body is None:
            raise MQClientException(ResponseCode.MESSAGE_ILLEGAL, "the message body is null")
        if len(msg.body) == 0:
            raise MQClientException(ResponseCode.MESSAGE_ILLEGAL, "the message body length is zero")
        if len(msg.body) > max_message_size:
            raise MQClientException(
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message body size over max value, MAX: {max_message_size}",
            )
