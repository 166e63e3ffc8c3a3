"""What the real 4.9.3 broker answers with ACL on, as its clients show it.

Not a RocketMQ class: the answers measured against the real broker (``aclEnable=true``, our
accounts of :mod:`mqlab.conformance.scenarios.acl_accounts`), kept in one place for the tests
that pin them (``tests/conformance/test_acl_vs_real.py``) and the interop scenarios that
check a client against them (``mqlab.interop.acl_scenarios``).

A refusal is code 1 (SYSTEM_ERROR) whose remark is ``RemotingHelper#exceptionSimpleDesc`` of
the ``AclException`` that ``PlainPermissionManager`` threw: the exception, its message and its
first stack frame, with the 4.9.3 jar's LINE NUMBERS (``validate`` 636, 640, 646, 653;
``checkPerm`` 553, 578, 583). mqlab prints the same text.
"""

from __future__ import annotations

__all__ = [
    "GO_CLIENTS",
    "JAVA_CLIENTS",
    "LOST_ACCOUNT",
    "NO_ACCESS_KEY",
    "bad_signature",
    "need_admin",
    "no_acl_config",
    "no_perm",
]

_EXC = "org.apache.rocketmq.acl.common.AclException: "
_AT = ", org.apache.rocketmq.acl.plain.PlainPermissionManager."
#: unsigned: no AccessKey ext field (or no ext fields at all)
NO_ACCESS_KEY = f"{_EXC}No accessKey is configured{_AT}validate(PlainPermissionManager.java:636)"
#: an account the broker knew before its file changed: PlainPermissionManager#load(String)
#: re-reads only keys it did not know, and drops the file's old map (JDK 17's NPE text)
LOST_ACCOUNT = (
    'java.lang.NullPointerException: Cannot invoke "org.apache.rocketmq.acl.plain.'
    'PlainAccessResource.getRemoteAddressStrategy()" because "ownedAccess" is null'
    f"{_AT}validate(PlainPermissionManager.java:646)"
)


def no_acl_config(access_key: str) -> str:
    return f"{_EXC}No acl config for {access_key}{_AT}validate(PlainPermissionManager.java:640)"


def bad_signature(access_key: str) -> str:
    return (
        f"{_EXC}Check signature failed for accessKey={access_key}"
        f"{_AT}validate(PlainPermissionManager.java:653)"
    )


def no_perm(resource: str, line: int) -> str:
    """Line 583: the resource is in the account's perms; 578: its default perm was used."""
    return (
        f"{_EXC}No default permission for {resource}"
        f"{_AT}checkPerm(PlainPermissionManager.java:{line})"
    )


def need_admin(code: int, access_key: str) -> str:
    return (
        f"{_EXC}Need admin permission for request code={code}, but accessKey={access_key} is "
        f"not{_AT}checkPerm(PlainPermissionManager.java:553)"
    )


#: What the 4.9.3 Java client showed (``AclScenarios#clients``, scenario ``acl-clients``): a
#: refused send is retried like any SYSTEM_ERROR (retryTimesWhenSendFailed 2: 3 sends), then
#: MQClientException("Send [3] times, still failed ...") with the broker's MQBrokerException
#: inside; the push consumer (group acl_g_sub) and the lite-pull consumer (acl_g_pubsub) get
#: the 4 messages.
JAVA_CLIENTS = {
    "sent": ["SEND_OK"] * 4,
    "sendNoPub": {
        "exception": "org.apache.rocketmq.client.exception.MQClientException", "sendTimes": "3",
        "brokerCode": 1, "brokerMessage": no_perm("topic:acl_t_sub", 583),
    },
    "sendWrongSecret": {
        "exception": "org.apache.rocketmq.client.exception.MQClientException", "sendTimes": "3",
        "brokerCode": 1, "brokerMessage": bad_signature("mqlabUser"),
    },
    "pushed": ["acl-0", "acl-1", "acl-2", "acl-3"],
    "polled": ["acl-0", "acl-1", "acl-2", "acl-3"],
}  # fmt: skip

#: What the Go client (rocketmq-client-go/v2, ``primitive.Credentials``) showed: its
#: producer retries code 1 (``needRetryCode``: ResError) and then returns
#: ``ProcessSendResponse``'s error, "CODE: 1, DESC: " and the broker's remark.
GO_CLIENTS = {
    "noPub": f"CODE: 1, DESC: {no_perm('topic:acl_t_sub', 583)}",
    "wrongSecret": f"CODE: 1, DESC: {bad_signature('mqlabUser')}",
}
