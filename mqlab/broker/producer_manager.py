"""Which producers are connected, per producer group.

Mirrors ``ProducerManager`` (broker/client, RocketMQ 4.9.3); mechanisms.md "Rebalancing" (heartbeats list
the client's producer groups, including ``CLIENT_INNER_PRODUCER``); docs/reference.md §9 (channel
expiry 120 s, scanned every 10 s), §10.5 (producers are registered per group).

What this module owns: ``group_channel_table`` (group → {channel: ClientChannelInfo})
and ``client_channel_table`` (client id → channel). What it must not know: sockets and
clocks; expired channels are returned for the caller to close, and time arrives as
``now_ms``. The broker uses this table to pick a producer channel for transaction
check-backs (``get_available_channel``). As in Java, a group emptied by the expiry scan
or a channel close stays in the table with no channels; only ``unregister_producer``
removes an emptied group.
"""

from __future__ import annotations

from typing import Any

from mqlab.broker.consumer_manager import CHANNEL_EXPIRED_TIMEOUT, ClientChannelInfo
from mqlab.runtime.context import Channel
from mqlab.trace.events import Kind

__all__ = ["ProducerManager", "GET_AVAILABLE_CHANNEL_RETRY_COUNT"]

#: ``ProducerManager.GET_AVAILABLE_CHANNEL_RETRY_COUNT``.
GET_AVAILABLE_CHANNEL_RETRY_COUNT = 3

_COMPONENT = "ProducerManager"


class ProducerManager:
    """All producer groups connected to one broker.

    Attributes:
        group_channel_table: group → {channel → ClientChannelInfo}, registration order.
        client_channel_table: client id → its (last registered) channel.
    """

    __slots__ = ("group_channel_table", "client_channel_table", "_counter", "_tracer")

    def __init__(self, *, tracer: Any = None) -> None:
        self.group_channel_table: dict[str, dict[Channel, ClientChannelInfo]] = {}
        self.client_channel_table: dict[str, Channel] = {}
        self._counter = 0  # Java's PositiveAtomicCounter
        self._tracer = tracer

    def get_group_channel_table(self) -> dict[str, dict[Channel, ClientChannelInfo]]:
        """Mirrors ``ProducerManager#getGroupChannelTable`` (the live table)."""
        return self.group_channel_table

    def register_producer(
        self, group: str, client_channel_info: ClientChannelInfo, now_ms: int
    ) -> bool:
        """Record a heartbeat's producer group on this channel.

        Mirrors ``ProducerManager#registerProducer`` (broker/client, RocketMQ 4.9.3): a
        new channel is added (and indexed by client id); a known one has its
        ``last_update_timestamp`` refreshed.

        Returns:
            True if the channel was new to the group.
        """
        table = self.group_channel_table.setdefault(group, {})
        found = table.get(client_channel_info.channel)
        if found is not None:
            found.last_update_timestamp = now_ms
            return False
        client_channel_info.last_update_timestamp = now_ms
        table[client_channel_info.channel] = client_channel_info
        self.client_channel_table[client_channel_info.client_id] = client_channel_info.channel
        self._emit(
            "registerProducer",
            "registered",
            group=group,
            client_id=client_channel_info.client_id,
            remote_addr=client_channel_info.channel.remote_address,
        )
        return True

    def unregister_producer(self, group: str, client_channel_info: ClientChannelInfo) -> None:
        """Remove the producer on that channel; drop the group when it becomes empty.

        Mirrors ``ProducerManager#unregisterProducer`` (UNREGISTER_CLIENT).
        """
        table = self.group_channel_table.get(group)
        if not table:
            return
        old = table.pop(client_channel_info.channel, None)
        self.client_channel_table.pop(client_channel_info.client_id, None)
        if not table:
            del self.group_channel_table[group]
        if old is not None:
            self._emit(
                "unregisterProducer",
                "unregister",
                group=group,
                client_id=client_channel_info.client_id,
                group_removed=not table,
            )

    def scan_not_active_channel(self, now_ms: int) -> list[Channel]:
        """Drop producers silent for more than 120 s.

        Mirrors ``ProducerManager#scanNotActiveChannel`` (broker/client, RocketMQ 4.9.3);
        docs/reference.md §9. Java closes each expired channel; here the caller closes the returned
        ones.

        Returns:
            The expired channels, in scan order.
        """
        expired: list[Channel] = []
        for group, table in self.group_channel_table.items():
            for channel, info in list(table.items()):
                idle = now_ms - info.last_update_timestamp
                if idle > CHANNEL_EXPIRED_TIMEOUT:
                    del table[channel]
                    self.client_channel_table.pop(info.client_id, None)
                    expired.append(channel)
                    self._emit(
                        "scanNotActiveChannel",
                        "expired",
                        group=group,
                        client_id=info.client_id,
                        remote_addr=channel.remote_address,
                        idle_ms=idle,
                    )
        return expired

    def do_channel_close_event(self, remote_addr: str, channel: Channel | None) -> None:
        """Forget a closed connection in every producer group.

        Mirrors ``ProducerManager#doChannelCloseEvent``.
        """
        if channel is None:
            return
        for group, table in self.group_channel_table.items():
            info = table.pop(channel, None)
            if info is not None:
                self.client_channel_table.pop(info.client_id, None)
                self._emit(
                    "doChannelCloseEvent",
                    "channelClosed",
                    group=group,
                    client_id=info.client_id,
                    remote_addr=remote_addr,
                )

    def find_channel(self, client_id: str) -> Channel | None:
        """Mirrors ``ProducerManager#findChannel``."""
        return self.client_channel_table.get(client_id)

    def get_available_channel(self, group_id: str | None) -> Channel | None:
        """Pick an open channel of the group, round-robin (transaction check-back).

        Mirrors ``ProducerManager#getAvailableChannel`` (broker/client, RocketMQ 4.9.3):
        start at ``counter % size`` (counter incremented first), try up to 3
        channels in turn; "active and writable" is ``not channel.closed`` here.
        """
        if group_id is None:
            return None
        table = self.group_channel_table.get(group_id)
        if not table:
            return None
        channels = list(table)
        size = len(channels)
        self._counter = (self._counter + 1) & 0x7FFFFFFF
        index = self._counter % size
        for _ in range(GET_AVAILABLE_CHANNEL_RETRY_COUNT):
            channel = channels[index]
            if not channel.closed:
                return channel
            index = (index + 1) % size
        # Java falls back to an active-but-unwritable channel; mqlab channels are either
        # open (active and writable) or closed, so there is none.
        return None

    def _emit(self, method: str, step: str, **fields: Any) -> None:
        if self._tracer is not None and self._tracer.enabled:
            self._tracer.emit(f"{_COMPONENT}.{method}", step, Kind.STATE, **fields)
