"""Transactional messages on the broker: half messages, op messages and the check-back.

Mirrors the package ``org.apache.rocketmq.broker.transaction`` (broker, RocketMQ 4.9.3):

- ``transactional_message_bridge``: the store access (RMQ_SYS_TRANS_HALF_TOPIC,
  RMQ_SYS_TRANS_OP_HALF_TOPIC, the CID_RMQ_SYS_TRANS offsets);
- ``transactional_message_service_impl``: commit / rollback lookups, the op message,
  and ``check``, the op-queue scan;
- ``transactional_message_check_listener``: CHECK_TRANSACTION_STATE to a producer of
  the group, and the TRANS_CHECK_MAX_TIME_TOPIC discard;
- ``transactional_message_check_service``: the timer that runs ``check`` every
  ``transactionCheckInterval``.

``EndTransactionProcessor`` (END_TRANSACTION, 37) is ``mqlab.broker.end_transaction_processor``.
"""
