"""A request signed as the Java client's ACL hook signs it, and checked as the broker checks it.

Mirrors ``AclClientRPCHook#doBeforeRequest`` and ``#parseRequestContent``,
``AclUtils#combineRequestContent`` and ``AclSigner#calSignature`` (acl/common, RocketMQ 4.9.3).

1. Put ``AccessKey`` (and ``SecurityToken``, when there is one) beside the custom header's
   fields that are not null, keyed by field name: the names a header has on the wire.
2. Sort by key (Java's ``TreeMap``; every key is ASCII, so Python's order is the same).
3. Concatenate the values, leaving out ``Signature``; append the body's bytes.
4. HmacSHA1 over those bytes with the secret key (UTF-8), Base64: the ``Signature``.
5. Add ``Signature``, ``AccessKey`` and ``SecurityToken`` to the request's ext fields.

The broker side (``PlainAccessValidator#parse``) runs steps 1-3 over the ext fields as they
arrived, so a field changed in flight, or a body, changes the content the signature covers.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from mqlab.remoting.command import RemotingCommand

__all__ = [
    "ACCESS_KEY",
    "SECRET_KEY",
    "SECURITY_TOKEN",
    "SIGNATURE",
    "SessionCredentials",
    "cal_signature",
    "combine_request_content",
    "sign_request",
]

#: ``SessionCredentials``' ext field names (acl/common, RocketMQ 4.9.3)
ACCESS_KEY = "AccessKey"
SECRET_KEY = "SecretKey"
SIGNATURE = "Signature"
SECURITY_TOKEN = "SecurityToken"


@dataclass(frozen=True)
class SessionCredentials:
    """A client's account: ``SessionCredentials`` (acl/common, RocketMQ 4.9.3)."""

    access_key: str
    secret_key: str
    security_token: str | None = None


def combine_request_content(fields: Mapping[str, str], body: bytes | None) -> bytes:
    """Steps 2-3: the values in key order, ``Signature`` left out, then the body
    (``AclUtils#combineRequestContent``, UTF-8)."""
    head = "".join(v for k, v in sorted(fields.items()) if k != SIGNATURE)
    return head.encode("utf-8") + (body or b"")


def cal_signature(data: bytes, secret_key: str) -> str:
    """Step 4: HmacSHA1 with the secret key, Base64 (``AclSigner#calSignature``)."""
    mac = hmac.new(secret_key.encode("utf-8"), data, hashlib.sha1).digest()
    return base64.b64encode(mac).decode("ascii")


def sign_request(request: RemotingCommand, credentials: SessionCredentials) -> RemotingCommand:
    """Steps 1-5 on ``request`` (its ext fields are the header's non-null fields), in
    place; returns it (``AclClientRPCHook#doBeforeRequest``)."""
    fields = dict(request.ext_fields or {})
    fields.pop(SIGNATURE, None)
    fields[ACCESS_KEY] = credentials.access_key
    if credentials.security_token is not None:
        fields[SECURITY_TOKEN] = credentials.security_token
    signature = cal_signature(combine_request_content(fields, request.body), credentials.secret_key)
    ext = request.ext_fields if request.ext_fields is not None else {}
    ext[SIGNATURE] = signature
    ext[ACCESS_KEY] = credentials.access_key
    if credentials.security_token is not None:
        ext[SECURITY_TOKEN] = credentials.security_token
    request.ext_fields = ext
    return request
