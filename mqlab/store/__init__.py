"""mqlab.store: RocketMQ 4.9.3's message store (commit log, consume queues, reput,
getMessage, recovery, delayed delivery, the message index), in RocketMQ's on-disk layout.

docs/design.md §5: ``mqlab.store`` exposes ``GetMessageStatus`` and the store's
``get_message(group, topic, queue_id, offset, max_msg_nums, message_filter)``.
"""

from mqlab.store.config import BrokerRole, FlushDiskType, MessageStoreConfig
from mqlab.store.default_message_store import DefaultMessageStore
from mqlab.store.message_filter import MessageFilter
from mqlab.store.status import (
    AppendMessageResult,
    AppendMessageStatus,
    GetMessageResult,
    GetMessageStatus,
    PutMessageResult,
    PutMessageStatus,
)

__all__ = [
    "AppendMessageResult",
    "AppendMessageStatus",
    "BrokerRole",
    "DefaultMessageStore",
    "FlushDiskType",
    "GetMessageResult",
    "GetMessageStatus",
    "MessageFilter",
    "MessageStoreConfig",
    "PutMessageResult",
    "PutMessageStatus",
]
