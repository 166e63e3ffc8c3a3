"""A minimal raw remoting client: send one hand-made RemotingCommand, get its response.

Not a RocketMQ class: the "telnet" of the conformance harness, over a real TCP socket, so the
same request goes byte for byte to the real 4.9.3 broker and to ``mqlab serve``. Frames go
through mqlab's own codec (``RemotingCommand.encode`` / ``split_frames`` / ``decode_payload``).
Requests the server sends on the same connection (e.g. NOTIFY_CONSUMER_IDS_CHANGED after a
heartbeat) are kept in ``Connection.server_requests``, not mistaken for the answer.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable

from mqlab.remoting.command import RemotingCommand, split_frames

__all__ = [
    "Connection",
    "NameServerError",
    "broker_addr_table",
    "call",
    "call_sync",
    "registered_addr",
    "send_v2",
    "wait_until",
]

_OPAQUE = itertools.count(1)


def _host_port(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


class Connection:
    """One TCP connection to a name server or broker; ``call`` may be used repeatedly.

    A connection is a channel to the server: what a broker remembers per channel (a client's
    heartbeat, a parked long-poll) lives as long as the connection does.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._buf = bytearray()
        self._early: dict[int, RemotingCommand] = {}
        self.server_requests: list[RemotingCommand] = []

    @classmethod
    async def open(cls, addr: str, timeout: float = 5.0) -> Connection:
        host, port = _host_port(addr)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        return cls(reader, writer)

    async def call(self, cmd: RemotingCommand, timeout: float = 10.0) -> RemotingCommand:
        """Send ``cmd`` (its ``opaque`` is set to a fresh number) and return the response to it.

        Raises:
            TimeoutError: no response within ``timeout`` seconds.
            ConnectionError: the server closed the connection first.
        """
        cmd.opaque = next(_OPAQUE)
        self._writer.write(cmd.encode())
        await self._writer.drain()
        return await asyncio.wait_for(self._response(cmd.opaque), timeout)

    async def oneway(self, cmd: RemotingCommand) -> None:
        """Send ``cmd`` flagged oneway (``RemotingCommand#markOnewayRPC``): no response comes."""
        cmd.opaque = next(_OPAQUE)
        cmd.mark_oneway_rpc()
        self._writer.write(cmd.encode())
        await self._writer.drain()

    async def _response(self, opaque: int) -> RemotingCommand:
        while opaque not in self._early:
            chunk = await self._reader.read(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buf += chunk
            for payload in split_frames(self._buf):
                frame = RemotingCommand.decode_payload(payload)
                if frame.is_response:
                    self._early[frame.opaque] = frame
                else:
                    self.server_requests.append(frame)
        return self._early.pop(opaque)

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def call(addr: str, cmd: RemotingCommand, timeout: float = 10.0) -> RemotingCommand:
    """Open a connection to ``addr`` ("host:port"), send ``cmd``, return its response, close."""
    async with await Connection.open(addr, timeout) as conn:
        return await conn.call(cmd, timeout)


def call_sync(addr: str, cmd: RemotingCommand, timeout: float = 10.0) -> RemotingCommand:
    """:func:`call` for code without an event loop (runs its own with ``asyncio.run``)."""
    return asyncio.run(call(addr, cmd, timeout))


# -- what the harness's group tiers ask a broker or name server, one request each -------------


def send_v2(
    broker_addr: str, topic: str, body: bytes, *, group: str, queue_id: int = 0,
    properties: dict[str, str] | None = None, timeout: float = 10.0,
) -> RemotingCommand:  # fmt: skip
    """One synchronous SEND_MESSAGE_V2 of ``body`` to ``topic``'s queue ``queue_id``
    (auto-created from TBW102 with 4 queues), ``WAIT=true`` beside ``properties``, as the
    Java producer sends it; the broker's response. A SYNC_MASTER answers 11
    SLAVE_NOT_AVAILABLE or 12 FLUSH_SLAVE_TIMEOUT while its slave is not there."""
    from mqlab.common.message_decoder import message_properties_to_string
    from mqlab.remoting.codes import RequestCode
    from mqlab.remoting.headers import (
        SendMessageRequestHeader,
        send_message_header_v2_to_ext_fields,
    )

    header = SendMessageRequestHeader(
        producer_group=group, topic=topic, default_topic="TBW102", default_topic_queue_nums=4,
        queue_id=queue_id, sys_flag=0, born_timestamp=int(time.time() * 1000), flag=0,
        properties=message_properties_to_string({**(properties or {}), "WAIT": "true"}),
        reconsume_times=0, max_reconsume_times=16,
    )  # fmt: skip
    req = RemotingCommand.create_request(
        RequestCode.SEND_MESSAGE_V2, send_message_header_v2_to_ext_fields(header), body
    )
    return call_sync(broker_addr, req, timeout=timeout)


def broker_addr_table(
    namesrv_addr: str, broker_name: str, *, tries: int = 5, pause_s: float = 0.2
) -> dict[int, str]:
    """``broker_name``'s ``brokerAddrs`` in the name server's GET_BROKER_CLUSTER_INFO (106),
    by brokerId; ``{}`` when the name server lists no such broker.

    4.9.3's ``RouteInfoManager#getAllClusterInfo`` serializes ``brokerAddrTable`` without
    taking its lock, so a broker that registers at that moment can make the real name server
    answer 1 SYSTEM_ERROR with no body (the exception in the remark). That answer is asked
    again, up to ``tries`` times; then :class:`NameServerError` names the code and remark.
    """
    from mqlab.remoting.codes import RequestCode, ResponseCode
    from mqlab.remoting.fastjson import loads as fastjson_loads

    for attempt in range(tries):
        resp = call_sync(
            namesrv_addr, RemotingCommand.create_request(RequestCode.GET_BROKER_CLUSTER_INFO)
        )
        if resp.code == ResponseCode.SUCCESS and resp.body is not None:
            info = fastjson_loads(resp.body.decode())
            data = (info.get("brokerAddrTable") or {}).get(broker_name) or {}
            return {int(k): v for k, v in (data.get("brokerAddrs") or {}).items()}
        if attempt + 1 < tries:
            time.sleep(pause_s)
    raise NameServerError(
        f"GET_BROKER_CLUSTER_INFO to {namesrv_addr} answered code {resp.code} "
        f"({resp.remark!r}) {tries} times"
    )


class NameServerError(RuntimeError):
    """The name server kept answering a route request with an error."""


def registered_addr(namesrv_addr: str, broker_name: str, broker_id: int) -> str | None:
    """The address the name server has for ``broker_name``'s ``broker_id``
    (GET_BROKER_CLUSTER_INFO), or None."""
    return broker_addr_table(namesrv_addr, broker_name).get(broker_id)


def wait_until(
    cond: Callable[[], bool], timeout_s: float, what: str, *,
    error: type[Exception] = TimeoutError, pause_s: float = 0.1,
) -> None:  # fmt: skip
    """Poll ``cond`` every ``pause_s`` until it holds; ``error`` naming ``what`` after
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise error(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(pause_s)
