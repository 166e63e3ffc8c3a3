"""The client's ACL hook: every request its remoting client sends goes out signed.

Mirrors ``AclClientRPCHook`` (acl/common, RocketMQ 4.9.3) and the ``RPCHook`` contract it
implements (remoting, ``RPCHook#doBeforeRequest`` / ``#doAfterResponse``).

Where Java calls it: ``NettyRemotingClient`` runs every registered hook's ``doBeforeRequest``
just before it writes a request, in ``invokeSync``, ``invokeAsync`` and ``invokeOneway``
alike (``NettyRemotingAbstract#doBeforeRpcHooks``). ``MQClientAPIImpl``'s constructor
registers the hook on its one remoting client (``remotingClient.registerRPCHook``), and that
client talks to the name servers and to the brokers: route queries are signed as well as
sends, pulls and heartbeats. The hook reaches ``MQClientAPIImpl`` through
``MQClientManager#getOrCreateMQClientInstance(clientConfig, rpcHook)``, which uses it only
when it CREATES the instance: producers and consumers sharing a client id share the first
one's instance, and a later hook is silently dropped. mqlab makes instances explicitly, so
:meth:`mqlab.client.mq_client_instance.MQClientInstance.register_rpc_hook` refuses a second,
different hook instead of dropping it.

What Java signs (``#parseRequestContent``): ``AccessKey`` (and ``SecurityToken``), plus the
custom header's declared fields that are not null, by field name, as ``toString`` gives them.
Those are exactly the ext fields the header becomes on the wire
(``RemotingCommand#makeCustomHeaderToNet``), which is what an mqlab request already carries in
``ext_fields``: so the signature here is computed over the request's ext fields
(:func:`mqlab.acl.signature.sign_request`), and the tests pin it to the Java hook's output.
"""

from __future__ import annotations

from typing import Protocol

from mqlab.acl.signature import SessionCredentials, sign_request
from mqlab.common.mix_all import UNIQUE_MSG_QUERY_FLAG
from mqlab.remoting.command import RemotingCommand

__all__ = ["AclClientRPCHook", "RPCHook"]


class RPCHook(Protocol):
    """``RPCHook`` (remoting, RocketMQ 4.9.3): called around each request a remoting
    client sends."""

    def do_before_request(self, remote_addr: str, request: RemotingCommand) -> None: ...

    def do_after_response(
        self, remote_addr: str, request: RemotingCommand, response: RemotingCommand | None
    ) -> None: ...


class AclClientRPCHook:
    """Signs each request with one account's keys. Mirrors ``AclClientRPCHook``.

    Args:
        session_credentials: the account (access key, secret key, optional security token).
    """

    __slots__ = ("session_credentials",)

    def __init__(self, session_credentials: SessionCredentials) -> None:
        if not isinstance(session_credentials, SessionCredentials):
            raise TypeError(
                "AclClientRPCHook takes a SessionCredentials(access_key, secret_key), got "
                f"{type(session_credentials).__name__}"
            )
        self.session_credentials = session_credentials

    def __repr__(self) -> str:  # never the secret
        return f"AclClientRPCHook(access_key={self.session_credentials.access_key!r})"

    def do_before_request(self, remote_addr: str, request: RemotingCommand) -> None:
        """Add ``Signature``, ``AccessKey`` (and ``SecurityToken``) to ``request``'s ext
        fields. Mirrors ``AclClientRPCHook#doBeforeRequest``.

        ``_UNIQUE_KEY_QUERY`` is left out of the signed content: Java's client adds it to a
        QUERY_MESSAGE with ``addExtField`` (``MQClientAPIImpl#queryMessage``), not as a header
        field, so its hook never sees it, and the broker leaves it out too
        (``PlainAccessValidator#parse``).
        """
        ext = request.ext_fields
        unique = ext.pop(UNIQUE_MSG_QUERY_FLAG, None) if ext else None
        sign_request(request, self.session_credentials)
        if unique is not None:
            request.ext_fields[UNIQUE_MSG_QUERY_FLAG] = unique

    def do_after_response(
        self, remote_addr: str, request: RemotingCommand, response: RemotingCommand | None
    ) -> None:
        """Nothing, as in Java."""
