"""A batch of messages sent in one SEND_BATCH_MESSAGE request.

Mirrors ``MessageBatch`` (common/message, RocketMQ 4.9.3); docs/reference.md §4.6 (batch body) and
§10.6 (batches may not carry delayed messages or ``%RETRY%`` topics; one topic, one
``WAIT`` value). The batch is itself a ``Message``: its topic is the messages' topic, its
only property is ``WAIT`` (what the producer sends as header ``i``), and its body is
``encode()`` of the inner messages, which each keep their own properties (incl. UNIQ_KEY).

Lives with the producer because only the producer builds batches; the codec is
``mqlab.common.message_decoder.encode_batch_body``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mqlab.common import message_const as mc
from mqlab.common.message import Message
from mqlab.common.message_decoder import encode_batch_body
from mqlab.common.mix_all import RETRY_GROUP_TOPIC_PREFIX

__all__ = ["MessageBatch"]


class MessageBatch(Message):
    """Several messages of one topic, sent as one request.

    Mirrors ``MessageBatch`` (common/message, RocketMQ 4.9.3). Build it with
    :meth:`generate_from_list`.
    """

    __slots__ = ("messages",)

    def __init__(self, messages: list[Message]) -> None:
        first = messages[0]
        super().__init__(first.topic, b"", wait_store_msg_ok=first.wait_store_msg_ok)
        self.messages = messages

    @classmethod
    def generate_from_list(cls, messages: Iterable[Message]) -> MessageBatch:
        """Check and wrap ``messages``.

        Mirrors ``MessageBatch#generateFromList`` (common/message, RocketMQ 4.9.3).

        Raises:
            ValueError: empty; a delayed message ("TimeDelayLevel is not supported for
                batching"); a ``%RETRY%`` topic ("Retry Group is not supported for
                batching"); mixed topics or mixed ``WAIT`` values (Java:
                ``UnsupportedOperationException`` with the same texts).
        """
        msgs = list(messages)
        if not msgs:
            raise ValueError("messages must not be empty")
        first: Message | None = None
        for m in msgs:
            if not isinstance(m, Message):
                raise TypeError(f"messages must be Message objects, got {type(m).__name__}")
            if m.delay_time_level > 0:
                raise ValueError("TimeDelayLevel is not supported for batching")
            if m.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                raise ValueError("Retry Group is not supported for batching")
            if first is None:
                first = m
            else:
                if first.topic != m.topic:
                    raise ValueError("The topic of the messages in one batch should be the same")
                if first.wait_store_msg_ok != m.wait_store_msg_ok:
                    raise ValueError(
                        "The waitStoreMsgOK of the messages in one batch should the same"
                    )
        return cls(msgs)

    def encode(self) -> bytes:
        """The SEND_BATCH_MESSAGE body. Mirrors ``MessageBatch#encode``."""
        return encode_batch_body(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def uniq_ids(self) -> list[str | None]:
        """Each message's ``UNIQ_KEY`` (what ``processSendResponse`` comma-joins)."""
        return [m.get_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) for m in self.messages]
