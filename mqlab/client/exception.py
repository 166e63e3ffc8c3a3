"""The errors a RocketMQ client API raises: client-side failures and broker refusals.

Mirrors ``MQClientException`` and ``MQBrokerException`` (client/exception) and
``ClientErrorCode`` (client/common), RocketMQ 4.9.3; STYLE §6.10 ("client facades raise
MQClientException / MQBrokerException, carrying a response code and a message").

* ``MQBrokerException(code, message, broker_addr)``: a broker (or name server) answered
  with a response code the caller does not accept, e.g. a send answered SYSTEM_ERROR, or
  QUERY_CONSUMER_OFFSET answered QUERY_NOT_FOUND.
* ``MQClientException(code, message)``: the client itself gave up: no route for the topic,
  every send attempt failed, a message failed validation. ``code`` is a response code
  (the last broker's, or TOPIC_NOT_EXIST from the name server), a ``ClientErrorCode``, or
  −1 (Java's ``MQClientException(String, Throwable)`` constructor) when there is none.

Transport failures stay the ``RemotingException`` subclasses of ``mqlab.runtime.context``
(plus ``RemotingTooMuchRequestException``, a time budget used up before sending). This
module knows nothing else.
"""

from __future__ import annotations

from mqlab.runtime.context import RemotingException

__all__ = [
    "ClientErrorCode",
    "MQClientException",
    "MQBrokerException",
    "RemotingTooMuchRequestException",
]


class ClientErrorCode:
    """Client-side error codes put on ``MQClientException``. Mirrors ``ClientErrorCode``."""

    CONNECT_BROKER_EXCEPTION = 10001
    ACCESS_BROKER_TIMEOUT = 10002
    BROKER_NOT_EXIST_EXCEPTION = 10003
    NO_NAME_SERVER_EXCEPTION = 10004
    NOT_FOUND_TOPIC_EXCEPTION = 10005
    REQUEST_TIMEOUT_EXCEPTION = 10006
    CREATE_REPLY_MESSAGE_EXCEPTION = 10007


class MQClientException(Exception):
    """The client gave up. ``response_code`` is −1 when no code applies.

    Mirrors ``MQClientException`` (client/exception, RocketMQ 4.9.3): the coded form's
    text is ``"CODE: <code>  DESC: <message>"``, the uncoded form's is the message.
    """

    def __init__(self, code: int, message: str) -> None:
        self.response_code = int(code)
        self.error_message = message
        text = message if code == -1 else f"CODE: {int(code)}  DESC: {message}"
        super().__init__(text)


class MQBrokerException(Exception):
    """A broker answered with a code the client does not accept.

    Mirrors ``MQBrokerException`` (client/exception, RocketMQ 4.9.3): text
    ``"CODE: <code>  DESC: <remark> BROKER: <addr>"``.
    """

    def __init__(self, code: int, message: str | None, broker_addr: str | None = None) -> None:
        self.response_code = int(code)
        self.error_message = message
        self.broker_addr = broker_addr
        text = f"CODE: {int(code)}  DESC: {message}"
        if broker_addr is not None:
            text += f" BROKER: {broker_addr}"
        super().__init__(text)


class RemotingTooMuchRequestException(RemotingException):
    """The call's time budget ran out before the request could be sent.

    Mirrors ``RemotingTooMuchRequestException`` (remoting/exception, RocketMQ 4.9.3), e.g.
    "sendDefaultImpl call timeout".
    """
