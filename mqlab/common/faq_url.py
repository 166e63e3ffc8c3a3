"""FAQ links appended to error remarks.

Mirrors ``org.apache.rocketmq.common.help.FAQUrl`` (common/help, RocketMQ 4.9.3). The
URL is RocketMQ 4.9.3's own, kept verbatim so remarks match a Java broker's byte for byte.
"""

#: In 4.9.3 every FAQ constant points at the same page.
_FAQ = "http://rocketmq.apache.org/docs/faq/"

APPLY_TOPIC_URL = _FAQ
NAME_SERVER_ADDR_NOT_EXIST_URL = _FAQ
GROUP_NAME_DUPLICATE_URL = _FAQ
CLIENT_PARAMETER_CHECK_URL = _FAQ
SUBSCRIPTION_GROUP_NOT_EXIST = _FAQ
CLIENT_SERVICE_NOT_OK = _FAQ
NO_TOPIC_ROUTE_INFO = _FAQ
SAME_GROUP_DIFFERENT_TOPIC = _FAQ
MQLIST_NOT_EXIST = _FAQ
SEND_MSG_FAILED = _FAQ
LOAD_JSON_EXCEPTION = _FAQ
UNEXPECTED_EXCEPTION_URL = _FAQ
UNKNOWN_HOST_EXCEPTION = _FAQ


def suggest_todo(url: str) -> str:
    """``FAQUrl#suggestTodo``: ``"\\nSee <url> for further details."``."""
    return f"\nSee {url} for further details."


def attach_default_url(error_message: str | None) -> str | None:
    """``FAQUrl#attachDefaultURL``: append the FAQ line unless the text has a ``"\\nSee "`` tip.

    Every ``MQClientException`` / ``MQBrokerException`` text goes through it.
    """
    if error_message is not None and "\nSee " not in error_message:
        return f"{error_message}\nFor more information, please visit the url, {UNEXPECTED_EXCEPTION_URL}"
    return error_message
