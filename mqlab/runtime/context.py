"""The seam between the sans-IO core and its drivers.

A *node* (name server, broker, producer, consumer) is a plain object that reacts to
requests, responses and timers. It never sleeps, opens sockets or reads a clock. It
reaches the outside world only through its ``NodeContext``, which a driver provides:

- the simulation driver (``mqlab.runtime.sim``): virtual clock, in-process transport
  that carries encoded frames with a latency, seeded RNG streams;
- the asyncio network driver (``mqlab.runtime.net``): real sockets and real time.

So the same ``PullMessageProcessor`` code answers a pull in a notebook simulation and a
pull from the official C++ client over TCP.

The context is Netty's ``ChannelHandlerContext`` + ``NettyRemotingAbstract``'s
``invokeAsync`` / ``invokeOneway`` + a ``ScheduledExecutorService``, reduced to what
the mechanisms use. Errors delivered to ``invoke_async`` callbacks are
``RemotingTimeoutException`` / ``RemotingConnectException`` /
``RemotingSendRequestException`` as in RocketMQ.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from mqlab.remoting.command import RemotingCommand
from mqlab.trace.recorder import NodeTracer

__all__ = [
    "Channel",
    "Node",
    "NodeContext",
    "InvokeCallback",
    "RemotingException",
    "RemotingTimeoutException",
    "RemotingConnectException",
    "RemotingSendRequestException",
]


class RemotingException(Exception):
    """Base of the transport errors an ``invoke_async`` callback can receive."""


class RemotingTimeoutException(RemotingException):
    """No response within the timeout (``NettyRemotingAbstract#scanResponseTable``)."""


class RemotingConnectException(RemotingException):
    """Nothing listens at that address, or the connection broke."""


class RemotingSendRequestException(RemotingException):
    """The frame could not be written (the channel closed while sending)."""


#: ``callback(response, error)``: exactly one of them is not None.
InvokeCallback = Callable[[RemotingCommand | None, Exception | None], None]


class Channel:
    """One end of a connection, as seen by the node that holds it.

    ``remote_address`` is the peer's ``ip:port`` (for a broker: the client's ephemeral
    address, which RocketMQ logs and uses as the channel key). ``id`` is unique within
    a driver and stable across runs with the same seed.
    """

    __slots__ = ("id", "local_address", "remote_address", "remote_node", "closed", "attrs")

    def __init__(self, id: int, local_address: str, remote_address: str, remote_node: str) -> None:
        self.id = id
        self.local_address = local_address
        self.remote_address = remote_address
        self.remote_node = remote_node
        self.closed = False
        self.attrs: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Channel#{self.id}({self.local_address} -> {self.remote_address})"

    def __hash__(self) -> int:
        return self.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Channel) and other.id == self.id


class NodeContext(ABC):
    """What a node may do. Implemented by each driver."""

    node_name: str
    tracer: NodeTracer

    @property
    @abstractmethod
    def now_ms(self) -> int:
        """Current time in ms (virtual in simulation, wall clock on the network driver)."""

    @abstractmethod
    def rng(self, purpose: str) -> random.Random:
        """A seeded RNG stream for one purpose (e.g. "send queue choice")."""

    # -- timers --------------------------------------------------------------------------
    @abstractmethod
    def set_timer(
        self,
        name: str,
        delay_ms: int,
        callback: Callable[[], None],
        *,
        key: str | None = None,
        period_ms: int | None = None,
        daemon: bool = False,
    ) -> None:
        """Arm (or re-arm, replacing) the timer ``(this node, name, key)``."""

    @abstractmethod
    def cancel_timer(self, name: str, key: str | None = None) -> bool: ...

    @abstractmethod
    def has_timer(self, name: str, key: str | None = None) -> bool: ...

    @abstractmethod
    def wakeup_timer(self, name: str, key: str | None = None) -> bool:
        """Fire a pending timer now (``ServiceThread#wakeup``)."""

    # -- remoting ----------------------------------------------------------------------------
    @abstractmethod
    def invoke_async(
        self, addr: str, request: RemotingCommand, timeout_ms: int, callback: InvokeCallback
    ) -> None:
        """Send a request to ``addr`` and call ``callback`` with the response or an error.

        The callback never runs before this call returns.
        """

    @abstractmethod
    def invoke_oneway(self, addr: str, request: RemotingCommand) -> None:
        """Write a request that gets no response (``NettyRemotingClient#invokeOneway``).

        Raises:
            RemotingConnectException: no connection to ``addr`` can be had, as in Java.
        """

    @abstractmethod
    def send_response(self, channel: Channel, response: RemotingCommand) -> None:
        """Write a response whose opaque and response flag are already set."""

    @abstractmethod
    def send_request_oneway(self, channel: Channel, request: RemotingCommand) -> None:
        """Server → client oneway request on an existing channel (NOTIFY_CONSUMER_IDS_CHANGED)."""

    @abstractmethod
    def invoke_channel(
        self, channel: Channel, request: RemotingCommand, timeout_ms: int, callback: InvokeCallback
    ) -> None:
        """Server → client request on an existing channel, answered through ``callback``.

        ``NettyRemotingServer#invokeSync(channel, ...)`` as ``Broker2Client#callClient``
        uses it (GET_CONSUMER_RUNNING_INFO, PUSH_REPLY_MESSAGE_TO_CLIENT); the broker
        answers its own caller from the callback. A closed channel fails with
        ``RemotingSendRequestException``; no answer in time with
        ``RemotingTimeoutException``. The callback never runs before this call returns.
        """

    @abstractmethod
    def close_channel(self, channel: Channel) -> None: ...


class Node:
    """Base class of every core node. Subclasses override the ``on_*`` hooks.

    Attributes:
        name: unique node name within a run ("namesrv", "broker-a", "consumer-1").
        address: ``ip:port`` the node listens on; clients may have one too (unused).
        ctx: set by the driver before ``on_start``.
    """

    ctx: NodeContext

    def __init__(self, name: str, address: str) -> None:
        self.name = name
        self.address = address
        self.running = False

    @property
    def tracer(self) -> NodeTracer:
        return self.ctx.tracer

    def on_start(self) -> None:
        """Schedule periodic services; called once the context is attached."""

    def on_stop(self) -> None:
        """Graceful shutdown: flush and persist (a kill skips this)."""

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """Handle a request; return the response, or None for "no response now"."""
        from mqlab.remoting.codes import ResponseCode

        return RemotingCommand.create_response(
            ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            f" request type {request.code} not supported",
        )

    def channel_inactive(self, channel: Channel) -> None:
        """The connection on ``channel`` closed."""
