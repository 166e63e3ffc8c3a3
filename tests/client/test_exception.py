"""MQClientException / MQBrokerException texts (client/exception, common/help/FAQUrl, RocketMQ 4.9.3)."""

from mqlab.client.exception import (
    ClientErrorCode,
    MQBrokerException,
    MQClientException,
    response_code2_string,
)
from mqlab.common.faq_url import attach_default_url, suggest_todo

FAQ_LINE = "\nFor more information, please visit the url, http://rocketmq.apache.org/docs/faq/"
SEE = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


def test_coded_constructor_prefixes_code_and_attaches_the_default_url():
    """MQClientException(int, String): "CODE: 13  DESC: ..." + attachDefaultURL (Validators#checkMessage)."""
    e = MQClientException(13, "the message body length is zero")
    assert str(e) == "CODE: 13  DESC: the message body length is zero" + FAQ_LINE
    assert (e.response_code, e.error_message) == (13, "the message body length is zero")


def test_uncoded_constructor_with_set_response_code_keeps_the_plain_text():
    """MQClientException(String, Throwable).setResponseCode(10005): no prefix; a "\\nSee " tip stops the FAQ line."""
    msg = "No route info of this topic: T" + SEE
    e = MQClientException(-1, msg).set_response_code(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION)
    assert str(e) == msg and e.response_code == 10005 and e.error_message == msg
    e = MQClientException(-1, "select message queue return null.")
    assert str(e) == "select message queue return null." + FAQ_LINE and e.response_code == -1


def test_broker_exception_text_null_remark_and_address():
    """MQBrokerException(code, remark, addr): a null remark reads "null"; no address, no " BROKER:"."""
    e = MQBrokerException(1, None, "127.0.0.1:10911")
    assert str(e) == "CODE: 1  DESC: null BROKER: 127.0.0.1:10911" + FAQ_LINE
    assert e.error_message is None
    assert str(MQBrokerException(22, "Not found")) == "CODE: 22  DESC: Not found" + FAQ_LINE
    assert str(MQClientException(17, None)) == "CODE: 17  DESC: null" + FAQ_LINE


def test_attach_default_url_and_response_code2_string():
    """FAQUrl#attachDefaultURL looks for "\\nSee " anywhere; null stays null; responseCode2String is decimal."""
    assert (
        attach_default_url("x" + suggest_todo("u") + " tail")
        == "x\nSee u for further details. tail"
    )
    assert attach_default_url("See no newline") == "See no newline" + FAQ_LINE
    assert attach_default_url(None) is None
    assert str(MQClientException(-1, None)) == ""
    assert response_code2_string(-1) == "-1"
