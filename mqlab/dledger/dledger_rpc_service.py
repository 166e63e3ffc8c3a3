"""DLedger's RPCs between nodes, as remoting frames of the driver.

Mirrors the client half of ``DLedgerRpcNettyService`` (DLedger 0.2.3): ``vote``,
``heartBeat``, ``push``, ``append`` and ``leadershipTransfer`` wrap the message in a request frame with its
``DLedgerRequestCode`` and a JSON body (``rpc_body``), send it to the peer's address from
``MemberState``'s peer map with a 3000 ms timeout, and hand the answer to a callback. A
frame with no answer (timeout, no connection, a cut link) becomes 0.2.3's stand-in:
``VoteResponse()`` (result UNKNOWN) for a vote, a NETWORK_ERROR response for the others
(``push`` and ``append`` copy the request's base info into it, ``heartBeat`` does not).

Answers that arrive after the node was stopped or restarted are dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mqlab.dledger.protocol import (
    AppendEntryRequest,
    AppendEntryResponse,
    DLedgerRequestCode,
    DLedgerResponseCode,
    HeartBeatRequest,
    HeartBeatResponse,
    LeadershipTransferRequest,
    LeadershipTransferResponse,
    PushEntryRequest,
    PushEntryResponse,
    VoteRequest,
    VoteResponse,
)
from mqlab.dledger.rpc_body import from_body, to_body
from mqlab.remoting.command import RemotingCommand

if TYPE_CHECKING:
    from mqlab.dledger.dledger_server import DLedgerServer

__all__ = ["DLedgerRpcService", "RPC_TIMEOUT_MS"]

#: ``remotingClient.invokeAsync(addr, request, 3000, ...)``
RPC_TIMEOUT_MS = 3000
R = DLedgerResponseCode


class DLedgerRpcService:
    """Mirrors the sending side of ``DLedgerRpcNettyService`` (DLedger 0.2.3)."""

    def __init__(self, server: DLedgerServer) -> None:
        self.server = server

    def _invoke(
        self,
        code: DLedgerRequestCode,
        request: Any,
        response_cls: type,
        on_fail: Callable[[], Any],
        callback: Callable[[Any], None],
    ) -> None:
        server = self.server
        epoch = server.epoch
        addr = server.member_state.get_peer_addr(request.remote_id)
        if addr is None:
            raise ValueError(f"{code.name}: remoteId {request.remote_id!r} is not a peer")
        cmd = RemotingCommand.create_request(int(code), body=to_body(request))

        def on_answer(resp: RemotingCommand | None, err: Exception | None) -> None:
            if not server.running or server.epoch != epoch:
                return
            if resp is None:
                callback(on_fail())
                return
            try:
                callback(from_body(response_cls, resp.body))
            except ValueError:
                callback(on_fail())

        server.ctx.invoke_async(addr, cmd, RPC_TIMEOUT_MS, on_answer)

    def vote(self, request: VoteRequest, callback: Callable[[VoteResponse], None]) -> None:
        self._invoke(DLedgerRequestCode.VOTE, request, VoteResponse, VoteResponse, callback)

    def heart_beat(
        self, request: HeartBeatRequest, callback: Callable[[HeartBeatResponse], None]
    ) -> None:
        self._invoke(
            DLedgerRequestCode.HEART_BEAT, request, HeartBeatResponse,
            lambda: HeartBeatResponse(code=R.NETWORK_ERROR), callback,
        )  # fmt: skip

    def push(
        self, request: PushEntryRequest, callback: Callable[[PushEntryResponse], None]
    ) -> None:
        self._invoke(
            DLedgerRequestCode.PUSH, request, PushEntryResponse,
            lambda: PushEntryResponse.of(request, code=R.NETWORK_ERROR), callback,
        )  # fmt: skip

    def append(
        self, request: AppendEntryRequest, callback: Callable[[AppendEntryResponse], None]
    ) -> None:
        self._invoke(
            DLedgerRequestCode.APPEND, request, AppendEntryResponse,
            lambda: AppendEntryResponse.of(request, code=R.NETWORK_ERROR), callback,
        )  # fmt: skip

    def leadership_transfer(
        self,
        request: LeadershipTransferRequest,
        callback: Callable[[LeadershipTransferResponse], None],
    ) -> None:
        self._invoke(
            DLedgerRequestCode.LEADERSHIP_TRANSFER, request, LeadershipTransferResponse,
            lambda: LeadershipTransferResponse.of(request, code=R.NETWORK_ERROR), callback,
        )  # fmt: skip
