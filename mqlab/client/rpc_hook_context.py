"""A client's RPC hooks, run on every request its client instance sends.

Mirrors the hook part of ``NettyRemotingClient`` / ``NettyRemotingAbstract`` (remoting,
RocketMQ 4.9.3): ``registerRPCHook``, and ``doBeforeRpcHooks`` / ``doAfterRpcHooks`` around
``invokeSync``, ``invokeAsync`` and ``invokeOneway``. ``MQClientAPIImpl``'s constructor
registers the client's hook (``AclClientRPCHook`` for ACL) on its one remoting client, and
that client sends to the name servers as well as to the brokers: every request of a client
instance passes the hooks, route queries included.

In mqlab a client instance sends through its node context (``invoke_async`` for requests
with a response, ``invoke_oneway`` for the rest). :class:`RpcHookContext` stands in front of
that context: it runs each hook's ``do_before_request(addr, request)`` just before the request
is handed to the driver (so on the request's final ext fields), and ``do_after_response``
when the response arrives, and passes everything else through unchanged. An instance without
hooks keeps the driver's context itself: nothing changes for it.

What it must not know: what a hook does (signing is ``mqlab.acl``'s business).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mqlab.remoting.command import RemotingCommand

__all__ = ["RpcHookContext"]


class RpcHookContext:
    """A client node's context with its RPC hooks in front of every request it sends.

    Args:
        ctx: the driver's context for the node.
        hooks: the registered hooks, in registration order (Java runs them in that order).
    """

    __slots__ = ("_ctx", "_hooks")

    def __init__(self, ctx: Any, hooks: Sequence[Any]) -> None:
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_hooks", tuple(hooks))

    @property
    def inner(self) -> Any:
        """The driver's context."""
        return self._ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # state other code keeps on the context (a task counter) lives on the real one
        setattr(self._ctx, name, value)

    def _before(self, addr: str, request: RemotingCommand) -> None:
        """``NettyRemotingAbstract#doBeforeRpcHooks``."""
        for hook in self._hooks:
            hook.do_before_request(addr, request)

    def invoke_async(self, addr: str, request: RemotingCommand, timeout_ms: int, callback) -> None:
        """``invokeSync`` / ``invokeAsync``: the hooks, then the send; ``doAfterRpcHooks``
        on the response."""
        self._before(addr, request)
        hooks = self._hooks

        def after(response: RemotingCommand | None, error: Exception | None) -> None:
            if error is None:
                for hook in hooks:
                    hook.do_after_response(addr, request, response)
            callback(response, error)

        self._ctx.invoke_async(addr, request, timeout_ms, after)

    def invoke_oneway(self, addr: str, request: RemotingCommand) -> None:
        """``invokeOneway``: the hooks, then the write."""
        self._before(addr, request)
        self._ctx.invoke_oneway(addr, request)
