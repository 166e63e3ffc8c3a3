"""A client node that sends hand-made remoting commands and records the answers.

Not a RocketMQ class: it is the "telnet" of mqlab. Lessons use it to poke one request
at a broker ("pull once on queue 3 at offset 5") and tests use it to check a processor
step by step through the real codec and transport. It also records every request the
server sends it (e.g. NOTIFY_CONSUMER_IDS_CHANGED).
"""

from __future__ import annotations

from dataclasses import dataclass

from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Channel, Node

__all__ = ["RawClient", "Call"]


@dataclass(slots=True)
class Call:
    """One request and, once it came, its response (or the transport error)."""

    request: RemotingCommand
    sent_at: int
    response: RemotingCommand | None = None
    error: Exception | None = None
    done_at: int | None = None

    @property
    def done(self) -> bool:
        return self.done_at is not None

    @property
    def code(self) -> int | None:
        return None if self.response is None else self.response.code

    @property
    def remark(self) -> str | None:
        return None if self.response is None else self.response.remark

    def ext(self, name: str) -> str | None:
        return None if self.response is None else self.response.ext(name)


@dataclass(slots=True)
class _Inbound:
    at: int
    channel: Channel
    request: RemotingCommand


class RawClient(Node):
    """Send raw requests; keep every ``Call`` and every server-initiated request."""

    def __init__(self, name: str = "client", address: str = "") -> None:
        super().__init__(name, address)
        self.calls: list[Call] = []
        self.inbound: list[_Inbound] = []

    def send(
        self,
        addr: str,
        code: int,
        ext_fields: dict[str, str] | None = None,
        body: bytes | None = None,
        *,
        timeout_ms: int = 30_000,
        oneway: bool = False,
        language: str = "JAVA",
        version: int | None = None,
    ) -> Call:
        """Send one request to ``addr``; the returned ``Call`` fills in when the answer comes."""
        req = RemotingCommand.create_request(int(code), ext_fields, body)
        req.language = language
        if version is not None:
            req.version = version
        call = Call(req, self.ctx.now_ms)
        self.calls.append(call)
        if oneway:
            self.ctx.invoke_oneway(addr, req)
            call.done_at = self.ctx.now_ms
            return call

        def done(resp: RemotingCommand | None, err: Exception | None) -> None:
            call.response, call.error, call.done_at = resp, err, self.ctx.now_ms

        self.ctx.invoke_async(addr, req, timeout_ms, done)
        return call

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        self.inbound.append(_Inbound(self.ctx.now_ms, channel, request))
        return None
