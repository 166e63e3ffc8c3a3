"""mqlab.client.producer: DefaultMQProducer, its engine, queue choice and send results.

Mirrors client/producer and client/impl/producer of RocketMQ 4.9.3. Nothing here imports
the client instance at import time (the instance imports this package).
"""

from mqlab.client.producer.default_mq_producer import (
    DEFAULT_RETRY_RESPONSE_CODES,
    DefaultMQProducer,
)
from mqlab.client.producer.default_mq_producer_impl import (
    CommunicationMode,
    DefaultMQProducerImpl,
    SendCallback,
    SendFuture,
    ServiceState,
)
from mqlab.client.producer.message_batch import MessageBatch
from mqlab.client.producer.message_queue_selector import (
    MessageQueueSelector,
    SelectMessageQueueByHash,
    SelectMessageQueueByRandom,
)
from mqlab.client.producer.send_result import SendResult, SendStatus
from mqlab.client.producer.topic_publish_info import ThreadLocalIndex, TopicPublishInfo
from mqlab.client.producer.transaction_listener import (
    LocalTransactionState,
    TransactionListener,
    TransactionSendResult,
)
from mqlab.client.producer.transaction_mq_producer import TransactionMQProducer

__all__ = [
    "CommunicationMode",
    "DEFAULT_RETRY_RESPONSE_CODES",
    "DefaultMQProducer",
    "DefaultMQProducerImpl",
    "LocalTransactionState",
    "MessageBatch",
    "MessageQueueSelector",
    "SelectMessageQueueByHash",
    "SelectMessageQueueByRandom",
    "SendCallback",
    "SendFuture",
    "SendResult",
    "SendStatus",
    "ServiceState",
    "ThreadLocalIndex",
    "TopicPublishInfo",
    "TransactionListener",
    "TransactionMQProducer",
    "TransactionSendResult",
]
