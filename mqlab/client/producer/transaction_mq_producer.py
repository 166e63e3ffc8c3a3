"""The producer a user holds for transactional messages.

Mirrors ``TransactionMQProducer`` (client/producer, RocketMQ 4.9.3): a
``DefaultMQProducer`` with a ``TransactionListener``. ``send_message_in_transaction``
runs ``DefaultMQProducerImpl#sendMessageInTransaction`` (``transaction_listener``).

Sans-IO usage (on a simulation driver)::

    producer = TransactionMQProducer("PG", instance, transaction_listener=my_listener)
    producer.start()
    future = producer.send_message_in_transaction(Message("TopicTest", b"order-1"), arg)
    driver.run_until_idle()
    future.get().local_transaction_state      # LocalTransactionState.COMMIT_MESSAGE
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mqlab.client.exception import MQClientException
from mqlab.client.producer.default_mq_producer import DefaultMQProducer
from mqlab.client.producer.send_future import SendFuture
from mqlab.common.message import Message

__all__ = ["TransactionMQProducer"]


@dataclass(slots=True, eq=False)
class TransactionMQProducer(DefaultMQProducer):
    """A producer that sends transactional messages. Mirrors ``TransactionMQProducer``.

    Args:
        producer_group, instance: as ``DefaultMQProducer``.
        transaction_listener: a ``TransactionListener`` (or any object with
            ``execute_local_transaction`` and ``check_local_transaction``).
    """

    transaction_listener: Any = field(default=None)

    def start(self) -> None:
        """Mirrors ``TransactionMQProducer#start`` (``initTransactionEnv`` is a thread pool)."""
        listener = self.transaction_listener
        if listener is not None and not (
            callable(getattr(listener, "execute_local_transaction", None))
            and callable(getattr(listener, "check_local_transaction", None))
        ):
            raise TypeError(
                "transaction_listener must have execute_local_transaction(msg, arg) and "
                f"check_local_transaction(msg), got {listener!r}"
            )
        super(TransactionMQProducer, self).start()

    def send_message_in_transaction(self, msg: Message, arg: Any = None) -> SendFuture:
        """Mirrors ``TransactionMQProducer#sendMessageInTransaction(Message, Object)``.

        Raises:
            MQClientException: no ``transaction_listener`` ("TransactionListener is null").
        """
        if self.transaction_listener is None:
            raise MQClientException(-1, "TransactionListener is null")
        return self.default_mq_producer_impl.send_message_in_transaction(msg, arg)
