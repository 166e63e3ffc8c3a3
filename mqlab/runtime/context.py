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

Besides remoting frames, a node may open a plain byte stream (``StreamChannel``): the
HA connection between a master and its slaves (``HAService``, ``HAClient``) is a TCP
connection that carries no remoting frames, only its own 8- and 12-byte headers. The
context listens (``listen_stream``), connects (``open_stream``), writes
(``send_bytes``) and closes (``close_stream``); bytes arrive through the channel's
``on_bytes`` and the end through its ``on_close``, never before the call that caused
them returns. A stream keeps its bytes in order but not their chunking, as TCP does.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mqlab.remoting.command import RemotingCommand
from mqlab.trace.recorder import NodeTracer

if TYPE_CHECKING:
    from mqlab.runtime.task import Task

__all__ = [
    "CHANNEL_MAX_IDLE_MILLIS",
    "CONNECT_TIMEOUT_MILLIS",
    "Channel",
    "StreamChannel",
    "Node",
    "NodeContext",
    "InvokeCallback",
    "RemotingException",
    "RemotingTimeoutException",
    "RemotingConnectException",
    "RemotingSendRequestException",
]


#: ``NettyClientConfig#connectTimeoutMillis`` (RocketMQ 4.9.3): how long a connect waits for
#: the peer before it fails, on either driver (the network's own, the simulator's across a
#: silent partition).
CONNECT_TIMEOUT_MILLIS = 3000

#: ``NettyServerConfig#serverChannelMaxIdleTimeSeconds`` and
#: ``NettyClientConfig#clientChannelMaxIdleTimeSeconds`` (both 120 s in 4.9.3): Netty's
#: ``IdleStateHandler(0, 0, 120)`` in every remoting pipeline fires ALL_IDLE on a channel with
#: no read and no write for that long, and ``NettyConnectManageHandler#userEventTriggered``
#: closes it.
CHANNEL_MAX_IDLE_MILLIS = 120_000


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


class StreamChannel:
    """One end of a byte stream (a TCP connection without remoting frames).

    The owner sets ``on_bytes(data)`` (bytes arrived, in order) and ``on_close(reason)``
    (the stream ended: closed by either side, the peer died, the link was cut, or the
    connect failed). ``opened`` says whether the connection was ever established, so an
    owner tells a failed connect (Java: ``RemotingUtil#connect`` returned null) from a
    closed connection. ``id`` is unique within a driver and stable across runs.
    """

    __slots__ = ("id", "local_address", "remote_address", "remote_node", "closed", "opened",
                 "on_bytes", "on_close", "attrs")  # fmt: skip

    def __init__(self, id: int, local_address: str, remote_address: str, remote_node: str) -> None:
        self.id = id
        self.local_address = local_address
        self.remote_address = remote_address
        self.remote_node = remote_node
        self.closed = False
        self.opened = False
        self.on_bytes: Callable[[bytes], None] | None = None
        self.on_close: Callable[[str], None] | None = None
        self.attrs: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"StreamChannel#{self.id}({self.local_address} -> {self.remote_address})"


#: ``on_accept(channel)``: a new inbound stream; set its ``on_bytes`` / ``on_close``.
AcceptCallback = Callable[[StreamChannel], None]


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

    # -- byte streams (HA replication) -------------------------------------------------------
    def listen_stream(self, addr: str, on_accept: AcceptCallback) -> None:
        """Accept byte streams on ``addr`` (``ServerSocketChannel#bind``), calling
        ``on_accept`` with each new one (``AcceptSocketService``).

        Raises:
            ValueError: ``addr`` is already listened on.
        """
        raise NotImplementedError(f"{type(self).__name__} has no byte streams")

    def stop_listening(self, addr: str) -> None:
        """Stop accepting on ``addr``; streams already accepted stay open."""
        raise NotImplementedError(f"{type(self).__name__} has no byte streams")

    def open_stream(
        self,
        addr: str,
        on_bytes: Callable[[bytes], None],
        on_close: Callable[[str], None],
    ) -> StreamChannel:
        """Connect a byte stream to ``addr``. A failed connect ends in ``on_close`` (with
        ``opened`` still False), called after this returns. Bytes written before the
        connection is up are sent once it is."""
        raise NotImplementedError(f"{type(self).__name__} has no byte streams")

    def send_bytes(self, channel: StreamChannel, data: bytes) -> None:
        """Write ``data`` on ``channel``; on a closed channel it goes nowhere."""
        raise NotImplementedError(f"{type(self).__name__} has no byte streams")

    def close_stream(self, channel: StreamChannel) -> None:
        """Close ``channel``: the peer's ``on_close`` runs after the bytes already sent;
        this end's ``on_close`` does not run (the owner knows)."""
        raise NotImplementedError(f"{type(self).__name__} has no byte streams")


class Node:
    """Base class of every core node. Subclasses override the ``on_*`` hooks.

    Attributes:
        name: unique node name within a run ("namesrv", "broker-a", "consumer-1").
        address: ``ip:port`` the node listens on; clients may have one too (unused).
        ctx: set by the driver before ``on_start``.
        remoting_codes: the ``(request codes, response codes)`` enums of the protocol this
            node speaks, for the names the drivers give frames in traces and the explorer's
            choices; None: RocketMQ's ``RequestCode``/``ResponseCode``. A DLedger node
            speaks DLedger's (its SUCCESS is 200, which RocketMQ names
            TRANSACTION_SHOULD_COMMIT).
        extra_addresses: more ``ip:port`` addresses the node serves requests on (a broker's
            VIP channel); a server channel's ``local_address`` says which one a request came
            in on.
    """

    ctx: NodeContext
    remoting_codes: tuple[type, type] | None = None
    extra_addresses: tuple[str, ...] = ()

    def __init__(self, name: str, address: str) -> None:
        self.name = name
        self.address = address
        self.running = False

    @property
    def tracer(self) -> NodeTracer:
        return self.ctx.tracer

    def channel_max_idle_ms(self, *, server_side: bool) -> int:
        """How long this node's channels may go without a read or a write before Netty's
        ``IdleStateHandler`` closes them: ``serverChannelMaxIdleTimeSeconds`` on the
        channels it accepted, ``clientChannelMaxIdleTimeSeconds`` on those it opened (both
        ``CHANNEL_MAX_IDLE_MILLIS`` by default)."""
        return CHANNEL_MAX_IDLE_MILLIS

    def on_start(self) -> None:
        """Schedule periodic services; called once the context is attached."""

    def on_stop(self) -> Task | None:
        """Graceful shutdown: flush and persist (a kill skips this).

        A node whose shutdown waits on RPCs, as Java's blocking ``shutdown`` does (a
        client's last offset commit), returns that ``Task``: the driver stops the node
        when it ends. None: the stop is complete.
        """

    def process_request(self, channel: Channel, request: RemotingCommand) -> RemotingCommand | None:
        """Handle a request; return the response, or None for "no response now"."""
        from mqlab.remoting.codes import ResponseCode

        return RemotingCommand.create_response(
            ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            f" request type {request.code} not supported",
        )

    def channel_inactive(self, channel: Channel) -> None:
        """The connection on ``channel`` closed."""
