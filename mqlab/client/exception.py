"""The errors a RocketMQ client API raises: client-side failures and broker refusals.

Mirrors ``MQClientException`` and ``MQBrokerException`` (client/exception) and
``ClientErrorCode`` (client/common), RocketMQ 4.9.3; docs/design.md §6.10 ("client facades raise
MQClientException / MQBrokerException, carrying a response code and a message").

* ``MQBrokerException(code, message, broker_addr)``: a broker (or name server) answered
  with a response code the caller does not accept, e.g. a send answered SYSTEM_ERROR, or
  QUERY_CONSUMER_OFFSET answered QUERY_NOT_FOUND.
* ``MQClientException(code, message)``: the client itself gave up: no route for the topic,
  every send attempt failed, a message failed validation. ``code`` is a response code
  (e.g. TOPIC_NOT_EXIST from the name server), or −1 for Java's
  ``MQClientException(String, Throwable)`` constructor, whose text has no "CODE:" prefix
  even when ``set_response_code`` then gives it a ``ClientErrorCode`` or the last
  broker's code.

Transport failures stay the ``RemotingException`` subclasses of ``mqlab.runtime.context``
(plus ``RemotingTooMuchRequestException``, a time budget used up before sending). This
module knows nothing else.
"""

from __future__ import annotations

from mqlab.common.faq_url import attach_default_url
from mqlab.runtime.context import RemotingException

__all__ = [
    "ClientErrorCode",
    "MQClientException",
    "MQBrokerException",
    "RemotingTooMuchRequestException",
    "response_code2_string",
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


def response_code2_string(code: int) -> str:
    """``UtilAll#responseCode2String``: the code as a decimal string."""
    return str(int(code))


def _coded_text(code: int, message: str | None) -> str:
    # Java string concatenation: a null remark reads "null".
    return f"CODE: {response_code2_string(code)}  DESC: {'null' if message is None else message}"


class MQClientException(Exception):
    """The client gave up. ``response_code`` is −1 when no code applies.

    Mirrors ``MQClientException`` (client/exception, RocketMQ 4.9.3). ``code`` −1 stands
    for Java's ``MQClientException(String, Throwable)``: the text is the message; a code
    set afterwards with ``set_response_code`` (Java's ``setResponseCode``) does not change
    it ("Send [3] times, still failed, ..." carries 10001 but no prefix). Any other code
    is ``MQClientException(int, String)``: ``"CODE: <code>  DESC: <message>"``. Both texts
    go through ``FAQUrl#attachDefaultURL``.
    """

    def __init__(self, code: int, message: str | None) -> None:
        self.response_code = int(code)
        self.error_message = message
        text = message if code == -1 else _coded_text(code, message)
        text = attach_default_url(text)
        super().__init__(*(() if text is None else (text,)))

    def set_response_code(self, code: int) -> MQClientException:
        """Set the code, keep the text. Mirrors ``MQClientException#setResponseCode``."""
        self.response_code = int(code)
        return self


class MQBrokerException(Exception):
    """A broker answered with a code the client does not accept.

    Mirrors ``MQBrokerException`` (client/exception, RocketMQ 4.9.3): text
    ``"CODE: <code>  DESC: <remark> BROKER: <addr>"`` through ``FAQUrl#attachDefaultURL``.
    """

    def __init__(self, code: int, message: str | None, broker_addr: str | None = None) -> None:
        self.response_code = int(code)
        self.error_message = message
        self.broker_addr = broker_addr
        text = _coded_text(code, message)
        if broker_addr is not None:
            text += f" BROKER: {broker_addr}"
        super().__init__(attach_default_url(text))


class RemotingTooMuchRequestException(RemotingException):
    """The call's time budget ran out before the request could be sent.

    Mirrors ``RemotingTooMuchRequestException`` (remoting/exception, RocketMQ 4.9.3), e.g.
    "sendDefaultImpl call timeout".
    """
