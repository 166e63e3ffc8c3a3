"""What a request asks for, and what an account owns: 4.9.3's ``PlainAccessResource``.

Mirrors ``PlainAccessResource`` (acl/plain) and ``PlainAccessValidator#parse`` (acl/plain,
RocketMQ 4.9.3).

One class holds both sides, as in Java. Parsed from a request (``parse``), it carries the
client's IP (the remote address without its port), the request code, the ``AccessKey``,
``Signature`` and ``SecurityToken`` ext fields, the resources the code needs with the perm
it needs on each, and the bytes the signature covers. Built from an account of
``plain_acl.yml`` (``PlainPermissionManager#buildPlainAccessResource``), it carries the
secret key, the admin flag, the default perms, the owned perm per resource and the
account's address strategy.

Which resources a request needs is a table of code (``RESOURCES_BY_CODE`` documents it;
``parse`` is the switch of ``PlainAccessValidator#parse``). A group is checked as its retry
topic ``%RETRY%group``, so one map holds topics and groups; ``is_retry_topic`` tells them
apart again when the perm is checked. Codes outside the table need no resource: only the
white lists, the account and the signature apply (and the admin flag for
``Permission.ADMIN_CODE``). Among them are SEND_BATCH_MESSAGE (320) and the reply sends
(324, 325): 4.9.3 checks no topic perm for them.

The content the signature covers: the ext fields without ``Signature`` and
``_UNIQUE_KEY_QUERY``, sorted by key, values concatenated, then the body
(``AclUtils#combineRequestContent``, see ``mqlab.acl.signature``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mqlab.acl.acl_utils import PLAIN, AclException, frame
from mqlab.acl.permission import PUB, SUB
from mqlab.acl.remote_address_strategy import RemoteAddressStrategy
from mqlab.acl.signature import ACCESS_KEY, SECURITY_TOKEN, SIGNATURE, combine_request_content
from mqlab.common.mix_all import RETRY_GROUP_TOPIC_PREFIX, UNIQUE_MSG_QUERY_FLAG, get_retry_topic
from mqlab.remoting.codes import RequestCode
from mqlab.remoting.command import RemotingCommand
from mqlab.remoting.fastjson import loads_json_body

__all__ = [
    "RESOURCES_BY_CODE",
    "PlainAccessResource",
    "get_group_from_retry_topic",
    "is_retry_topic",
    "parse",
    "print_str",
]

#: ``PlainAccessValidator#parse``'s switch, as a learner reads it: code → (ext field or
#: body part, what it names, the perm needed). ``group`` entries are checked as
#: ``%RETRY%<group>``.
RESOURCES_BY_CODE: dict[int, tuple[tuple[str, str, int], ...]] = {
    RequestCode.SEND_MESSAGE: (("topic", "topic", PUB),),
    RequestCode.SEND_MESSAGE_V2: (("b", "topic", PUB),),
    RequestCode.CONSUMER_SEND_MSG_BACK: (("originTopic", "topic", PUB), ("group", "group", SUB)),
    RequestCode.PULL_MESSAGE: (("topic", "topic", SUB), ("consumerGroup", "group", SUB)),
    RequestCode.QUERY_MESSAGE: (("topic", "topic", SUB),),
    RequestCode.HEART_BEAT: (
        ("body consumerDataSet[].groupName", "group", SUB),
        ("body consumerDataSet[].subscriptionDataSet[].topic", "topic", SUB),
    ),
    RequestCode.UNREGISTER_CLIENT: (("consumerGroup", "group", SUB),),
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: (("consumerGroup", "group", SUB),),
    RequestCode.UPDATE_CONSUMER_OFFSET: (("consumerGroup", "group", SUB), ("topic", "topic", SUB)),
}

_PARSE_AT = frame(PLAIN + "PlainAccessValidator", "parse", 124)


def is_retry_topic(topic: str | None) -> bool:
    """``PlainAccessResource#isRetryTopic``: the resource is a group's retry topic."""
    return topic is not None and topic.startswith(RETRY_GROUP_TOPIC_PREFIX)


def get_group_from_retry_topic(retry_topic: str) -> str:
    """``PlainAccessResource#getGroupFromRetryTopic``."""
    return retry_topic[len(RETRY_GROUP_TOPIC_PREFIX) :]


def print_str(resource: str, is_group: bool) -> str:
    """``PlainAccessResource#printStr``: ``group:g`` or ``topic:t``, as refusals name them."""
    if is_group:
        return f"group:{get_group_from_retry_topic(resource)}"
    return f"topic:{resource}"


@dataclass
class PlainAccessResource:
    """``PlainAccessResource``: a request's needs, or an account's grants.

    ``default_topic_perm`` / ``default_group_perm`` start at 1 (DENY), Java's field
    defaults; an account's come from its YAML (absent: DENY too).
    """

    access_key: str | None = None
    secret_key: str | None = None
    white_remote_address: str | None = None
    admin: bool = False
    default_topic_perm: int = 1
    default_group_perm: int = 1
    resource_perm_map: dict[str, int] | None = None
    remote_address_strategy: RemoteAddressStrategy | None = None
    request_code: int = 0
    content: bytes | None = None
    signature: str | None = None
    secret_token: str | None = None

    def add_resource_and_perm(self, resource: str | None, perm: int) -> None:
        """``#addResourceAndPerm``: a null resource is skipped; a later perm replaces."""
        if resource is None:
            return
        if self.resource_perm_map is None:
            self.resource_perm_map = {}
        self.resource_perm_map[resource] = perm


def _retry(group: str | None) -> str | None:
    return None if group is None else get_retry_topic(group)


def parse(request: RemotingCommand, remote_addr: str | None) -> PlainAccessResource:
    """The needs of one request, as the broker's ACL hook reads them.

    Mirrors ``PlainAccessValidator#parse``:

    1. the client's IP: the remote address up to its last ``:``;
    2. no ext fields at all: stop here (only a white list can let such a request in);
    3. ``AccessKey``, ``Signature``, ``SecurityToken`` from the ext fields;
    4. the resources the code needs (``RESOURCES_BY_CODE``); a body that does not decode
       fails as an ``AclException`` (Java wraps whatever the decoder threw);
    5. the content the signature covers.

    Raises:
        AclException: step 4 failed.
    """
    resource = PlainAccessResource()
    # step 1
    if remote_addr is not None and ":" in remote_addr:
        resource.white_remote_address = remote_addr[: remote_addr.rfind(":")]
    else:
        resource.white_remote_address = remote_addr
    resource.request_code = request.code
    # step 2
    ext = request.ext_fields
    if ext is None:
        return resource
    # step 3
    resource.access_key = ext.get(ACCESS_KEY)
    resource.signature = ext.get(SIGNATURE)
    resource.secret_token = ext.get(SECURITY_TOKEN)
    # step 4
    code = request.code
    add = resource.add_resource_and_perm
    if code == RequestCode.SEND_MESSAGE:
        add(ext.get("topic"), PUB)
    elif code == RequestCode.SEND_MESSAGE_V2:
        add(ext.get("b"), PUB)
    elif code == RequestCode.CONSUMER_SEND_MSG_BACK:
        add(ext.get("originTopic"), PUB)
        add(_retry(ext.get("group")), SUB)
    elif code == RequestCode.PULL_MESSAGE:
        add(ext.get("topic"), SUB)
        add(_retry(ext.get("consumerGroup")), SUB)
    elif code == RequestCode.QUERY_MESSAGE:
        add(ext.get("topic"), SUB)
    elif code == RequestCode.HEART_BEAT:
        for group, topics in _heartbeat_consumers(request.body):
            add(_retry(group), SUB)
            for topic in topics:
                add(topic, SUB)
    elif code in (RequestCode.UNREGISTER_CLIENT, RequestCode.GET_CONSUMER_LIST_BY_GROUP):
        add(_retry(ext.get("consumerGroup")), SUB)
    elif code == RequestCode.UPDATE_CONSUMER_OFFSET:
        add(_retry(ext.get("consumerGroup")), SUB)
        add(ext.get("topic"), SUB)
    # step 5
    fields = {
        k: ("null" if v is None else v)
        for k, v in ext.items()
        if k != SIGNATURE and k != UNIQUE_MSG_QUERY_FLAG
    }
    resource.content = combine_request_content(fields, request.body)
    return resource


def _heartbeat_consumers(body: bytes | None) -> list[tuple[str | None, list[str | None]]]:
    """``HeartbeatData.decode(body)``'s consumer groups and their subscribed topics.

    Raises:
        AclException: the body is missing or not a heartbeat (Java: whatever fastjson or
            ``new String(null)`` threw, wrapped; mqlab names what it found instead).
    """
    if body is None:
        # RemotingSerializable#decode: new String(null, UTF_8), as JDK 17 words it
        raise AclException('Cannot read the array length because "bytes" is null', _PARSE_AT)
    try:
        data = loads_json_body(body)
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        out = []
        for consumer in data.get("consumerDataSet") or ():
            topics = [s.get("topic") for s in consumer.get("subscriptionDataSet") or ()]
            out.append((consumer.get("groupName"), topics))
        return out
    except (ValueError, TypeError, AttributeError) as e:
        raise AclException(f"bad HeartbeatData body: {e}", _PARSE_AT) from None
