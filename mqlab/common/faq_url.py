"""FAQ links appended to error remarks.

Mirrors ``org.apache.rocketmq.common.help.FAQUrl`` (common/help, RocketMQ 4.9.3). The
URLs are RocketMQ's own, kept verbatim so remarks match a Java broker's byte for byte.
"""

APPLY_TOPIC_URL = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&topic_not_exist"
NAME_SERVER_ADDR_NOT_EXIST_URL = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&namesrv_not_exist"
GROUP_NAME_DUPLICATE_URL = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&group_duplicate"
CLIENT_PARAMETER_CHECK_URL = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&parameter_check_failed"
SUBSCRIPTION_GROUP_NOT_EXIST = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&subGroup_not_exist"
CLIENT_SERVICE_NOT_OK = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&service_not_ok"
NO_TOPIC_ROUTE_INFO = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&topic_not_exist"
SAME_GROUP_DIFFERENT_TOPIC = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&subscription_exception"
MQLIST_NOT_EXIST = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&queue_not_exist"
SEND_MSG_FAILED = "http://docs.aliyun.com/cn#/pub/ons/faq/exceptions&send_msg_failed"


def suggest_todo(url: str) -> str:
    """``FAQUrl#suggestTodo``: ``"\\nSee <url> for further details."``."""
    return f"\nSee {url} for further details."
