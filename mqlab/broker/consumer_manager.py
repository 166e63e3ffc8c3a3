"""Which consumers are connected, per group: channels, subscriptions, change notices.

Mirrors ``ClientChannelInfo``, ``ConsumerGroupInfo``, ``ConsumerManager``,
``ConsumerGroupEvent`` and the ``ConsumerIdsChangeListener`` contract (broker/client,
RocketMQ 4.9.3); mechanisms.md "Rebalancing" (heartbeats keep the broker's view of a group current; a
change makes the broker send NOTIFY_CONSUMER_IDS_CHANGED so clients rebalance at once);
mechanisms.md "Pull processing" step 6 (the pull path reads the group's subscription); docs/reference.md §9 (channel expiry
120 s, scanned every 10 s), §10.5 (register/unregister rules).

What this module owns: ``consumer_table`` (group → ConsumerGroupInfo), each group's
channel table (insertion order = order of first registration) and subscription table
(topic → SubscriptionData). What it must not know: sockets and clocks. It reports events
to a listener (the broker controller sends the NOTIFY requests, checking the broker-wide
``notifyConsumerIdsChangedEnable`` as ``DefaultConsumerIdsChangeListener`` does) and
returns expired channels for the caller to close. Time arrives as ``now_ms``.

Listener calls, as Java makes them: ``("CHANGE", group, channels)`` with the group's
remaining channels; ``("UNREGISTER", group, [])`` when a group loses its last channel;
``("REGISTER", group, subscriptions)`` after every registration, with the heartbeat's
SubscriptionData list (Java feeds it to the ConsumerFilterManager).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mqlab.common.filter_api import SubscriptionData
from mqlab.runtime.context import Channel
from mqlab.trace.events import Kind

__all__ = [
    "CHANNEL_EXPIRED_TIMEOUT",
    "ClientChannelInfo",
    "ConsumerGroupEvent",
    "ConsumerGroupInfo",
    "ConsumerIdsChangeListener",
    "ConsumerManager",
]

#: ``ConsumerManager.CHANNEL_EXPIRED_TIMEOUT`` (and ProducerManager's): 120 s without a
#: heartbeat (docs/reference.md §9). A channel expires when ``now − last update > 120 000``.
CHANNEL_EXPIRED_TIMEOUT = 1000 * 120

_COMPONENT = "ConsumerManager"


class ConsumerGroupEvent(StrEnum):
    """Mirrors ``ConsumerGroupEvent`` (broker/client). A ``str``: equals ``"CHANGE"`` etc."""

    CHANGE = "CHANGE"
    UNREGISTER = "UNREGISTER"
    REGISTER = "REGISTER"


#: ``ConsumerIdsChangeListener#handle(event, group, args)``; see the module docstring.
ConsumerIdsChangeListener = Callable[[str, str, list[Any]], None]


@dataclass(slots=True, eq=False)
class ClientChannelInfo:
    """One client connection as a broker knows it.

    Mirrors ``ClientChannelInfo`` (broker/client, RocketMQ 4.9.3). Java stamps
    ``lastUpdateTimestamp`` with the clock at construction; pass ``now_ms`` instead.
    Equality is by channel only, as in Java.
    """

    channel: Channel
    client_id: str
    language: str = "JAVA"
    version: int = 0
    last_update_timestamp: int = 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClientChannelInfo):
            return NotImplemented
        return self.channel == other.channel

    def __hash__(self) -> int:
        return hash(self.channel)

    def __str__(self) -> str:
        """Mirrors ``ClientChannelInfo#toString``."""
        return (
            f"ClientChannelInfo [channel={self.channel!r}, clientId={self.client_id}, "
            f"language={self.language}, version={self.version}, "
            f"lastUpdateTimestamp={self.last_update_timestamp}]"
        )


class ConsumerGroupInfo:
    """The connected members of one consumer group and what they subscribe to.

    Mirrors ``ConsumerGroupInfo`` (broker/client, RocketMQ 4.9.3). ``consume_type``,
    ``message_model`` and ``consume_from_where`` are the enum names from the heartbeat
    (``"CONSUME_PASSIVELY"``, ``"CLUSTERING"``, ``"CONSUME_FROM_LAST_OFFSET"`` ...); the
    last heartbeat wins.
    """

    __slots__ = (
        "group_name",
        "consume_type",
        "message_model",
        "consume_from_where",
        "channel_info_table",
        "subscription_table",
        "last_update_timestamp",
    )

    def __init__(
        self,
        group_name: str,
        consume_type: str,
        message_model: str,
        consume_from_where: str,
        now_ms: int = 0,
    ) -> None:
        self.group_name = group_name
        self.consume_type = consume_type
        self.message_model = message_model
        self.consume_from_where = consume_from_where
        self.channel_info_table: dict[Channel, ClientChannelInfo] = {}
        self.subscription_table: dict[str, SubscriptionData] = {}
        self.last_update_timestamp = now_ms

    def find_channel(self, client_id: str) -> ClientChannelInfo | None:
        """The member with that client id. Mirrors ``ConsumerGroupInfo#findChannel``."""
        for info in self.channel_info_table.values():
            if info.client_id == client_id:
                return info
        return None

    def get_all_channel(self) -> list[Channel]:
        """Channels in registration order. Mirrors ``ConsumerGroupInfo#getAllChannel``."""
        return list(self.channel_info_table)

    def get_all_client_id(self) -> list[str]:
        """Client ids in registration order (GET_CONSUMER_LIST_BY_GROUP; the client sorts).

        Mirrors ``ConsumerGroupInfo#getAllClientId``; docs/reference.md §10.4.
        """
        return [info.client_id for info in self.channel_info_table.values()]

    def get_subscribe_topics(self) -> list[str]:
        """Subscribed topics. Mirrors ``ConsumerGroupInfo#getSubscribeTopics``."""
        return list(self.subscription_table)

    def find_subscription_data(self, topic: str) -> SubscriptionData | None:
        """Mirrors ``ConsumerGroupInfo#findSubscriptionData``; mechanisms.md "Pull processing" step 6."""
        return self.subscription_table.get(topic)

    def unregister_channel(self, client_channel_info: ClientChannelInfo) -> bool:
        """Remove the member on that channel. Mirrors ``ConsumerGroupInfo#unregisterChannel``.

        Returns:
            True if it was there.
        """
        return self.channel_info_table.pop(client_channel_info.channel, None) is not None

    def do_channel_close_event(self, remote_addr: str, channel: Channel) -> bool:
        """Remove a closed channel. Mirrors ``ConsumerGroupInfo#doChannelCloseEvent``.

        Returns:
            True if the channel belonged to this group.
        """
        return self.channel_info_table.pop(channel, None) is not None

    def update_channel(
        self,
        info_new: ClientChannelInfo,
        consume_type: str,
        message_model: str,
        consume_from_where: str,
        now_ms: int,
    ) -> bool:
        """Record a heartbeat from ``info_new``'s channel.

        Mirrors ``ConsumerGroupInfo#updateChannel`` (broker/client, RocketMQ 4.9.3);
        docs/reference.md §10.5: a new channel is a change; a known channel only has its
        ``last_update_timestamp`` refreshed (if its client id differs, Java logs a
        ``[BUG]`` and replaces the entry, still without reporting a change).

        Returns:
            True if the channel is new to the group.
        """
        self.consume_type = consume_type
        self.message_model = message_model
        self.consume_from_where = consume_from_where
        updated = False
        info_old = self.channel_info_table.get(info_new.channel)
        if info_old is None:
            self.channel_info_table[info_new.channel] = info_new
            updated = True
            info_old = info_new
        elif info_old.client_id != info_new.client_id:
            self.channel_info_table[info_new.channel] = info_new
            info_new.last_update_timestamp = now_ms
        self.last_update_timestamp = now_ms
        info_old.last_update_timestamp = now_ms
        return updated

    def update_subscription(self, sub_list: Iterable[SubscriptionData], now_ms: int) -> bool:
        """Merge the heartbeat's subscriptions into the table.

        Mirrors ``ConsumerGroupInfo#updateSubscription`` (broker/client, RocketMQ 4.9.3);
        docs/reference.md §10.5: a new topic is a change; a known topic with a larger ``subVersion``
        is replaced silently (not a change); a topic missing from the heartbeat is
        removed (a change).

        Returns:
            True if a topic was added or removed.
        """
        subs = list(sub_list)
        updated = False
        for sub in subs:
            old = self.subscription_table.get(sub.topic)
            if old is None:
                self.subscription_table[sub.topic] = sub
                updated = True
            elif sub.sub_version > old.sub_version:
                self.subscription_table[sub.topic] = sub
        present = {sub.topic for sub in subs}
        for topic in [t for t in self.subscription_table if t not in present]:
            del self.subscription_table[topic]
            updated = True
        self.last_update_timestamp = now_ms
        return updated


class ConsumerManager:
    """All consumer groups connected to one broker.

    Attributes:
        consumer_table: group → ConsumerGroupInfo, in order of first registration.
    """

    __slots__ = ("consumer_table", "listener", "_tracer")

    def __init__(
        self, listener: ConsumerIdsChangeListener | None = None, *, tracer: Any = None
    ) -> None:
        self.consumer_table: dict[str, ConsumerGroupInfo] = {}
        self.listener = listener
        self._tracer = tracer

    # -- lookups -----------------------------------------------------------------------------

    def get_consumer_group_info(self, group: str) -> ConsumerGroupInfo | None:
        """Mirrors ``ConsumerManager#getConsumerGroupInfo``; mechanisms.md "Pull processing" step 6."""
        return self.consumer_table.get(group)

    def find_channel(self, group: str, client_id: str) -> ClientChannelInfo | None:
        """Mirrors ``ConsumerManager#findChannel``."""
        info = self.consumer_table.get(group)
        return None if info is None else info.find_channel(client_id)

    def find_subscription_data(self, group: str, topic: str) -> SubscriptionData | None:
        """Mirrors ``ConsumerManager#findSubscriptionData``; mechanisms.md "Pull processing" step 6."""
        info = self.consumer_table.get(group)
        return None if info is None else info.find_subscription_data(topic)

    def find_subscription_data_count(self, group: str) -> int:
        """Mirrors ``ConsumerManager#findSubscriptionDataCount``."""
        info = self.consumer_table.get(group)
        return 0 if info is None else len(info.subscription_table)

    def query_topic_consume_by_who(self, topic: str) -> list[str]:
        """Groups subscribed to ``topic``, sorted (Java: a HashSet).

        Mirrors ``ConsumerManager#queryTopicConsumeByWho``.
        """
        return sorted(
            g for g, info in self.consumer_table.items() if topic in info.subscription_table
        )

    # -- registration ------------------------------------------------------------------------

    def register_consumer(
        self,
        group: str,
        client_channel_info: ClientChannelInfo,
        consume_type: str,
        message_model: str,
        consume_from_where: str,
        sub_list: Iterable[SubscriptionData],
        is_notify_consumer_ids_changed_enable: bool,
        now_ms: int,
    ) -> bool:
        """Register (or refresh) a consumer from its heartbeat.

        Mirrors ``ConsumerManager#registerConsumer`` (broker/client, RocketMQ 4.9.3);
        mechanisms.md "Rebalancing" (heartbeat); docs/reference.md §10.5. If the channel is new or the topic set
        changed and the group's ``notifyConsumerIdsChangedEnable`` is on
        (``is_notify_consumer_ids_changed_enable``), the listener gets CHANGE with all
        the group's channels; then, always, REGISTER with the subscriptions.

        Returns:
            True if something changed.
        """
        subs = list(sub_list)
        info = self.consumer_table.get(group)
        if info is None:
            info = ConsumerGroupInfo(group, consume_type, message_model, consume_from_where, now_ms)
            self.consumer_table[group] = info
        r1 = info.update_channel(
            client_channel_info, consume_type, message_model, consume_from_where, now_ms
        )
        r2 = info.update_subscription(subs, now_ms)
        changed = r1 or r2
        if changed:
            self._emit(
                "registerConsumer",
                "changed",
                group=group,
                client_id=client_channel_info.client_id,
                new_channel=r1,
                subscription_changed=r2,
                topics=list(info.subscription_table),
                client_ids=info.get_all_client_id(),
                notify=is_notify_consumer_ids_changed_enable,
            )
            if is_notify_consumer_ids_changed_enable:
                self._fire(ConsumerGroupEvent.CHANGE, group, info.get_all_channel())
        self._fire(ConsumerGroupEvent.REGISTER, group, subs)
        return changed

    def unregister_consumer(
        self,
        group: str,
        client_channel_info: ClientChannelInfo,
        is_notify_consumer_ids_changed_enable: bool,
    ) -> None:
        """Remove a consumer (UNREGISTER_CLIENT); drop the group when it becomes empty.

        Mirrors ``ConsumerManager#unregisterConsumer`` (broker/client, RocketMQ 4.9.3);
        docs/reference.md §10.5: an emptied group is removed (UNREGISTER); then CHANGE with the
        remaining channels if notification is enabled for the group.
        """
        info = self.consumer_table.get(group)
        if info is None:
            return
        info.unregister_channel(client_channel_info)
        removed_group = not info.channel_info_table
        if removed_group:
            del self.consumer_table[group]
            self._fire(ConsumerGroupEvent.UNREGISTER, group, [])
        self._emit(
            "unregisterConsumer",
            "unregister",
            group=group,
            client_id=client_channel_info.client_id,
            group_removed=removed_group,
            client_ids=info.get_all_client_id(),
            notify=is_notify_consumer_ids_changed_enable,
        )
        if is_notify_consumer_ids_changed_enable:
            self._fire(ConsumerGroupEvent.CHANGE, group, info.get_all_channel())

    def do_channel_close_event(self, remote_addr: str, channel: Channel) -> None:
        """Forget a closed connection in every group.

        Mirrors ``ConsumerManager#doChannelCloseEvent`` (broker/client, RocketMQ 4.9.3);
        docs/reference.md §10.5. Each group that held the channel gets CHANGE (Java does not check
        the group's notify flag here; the listener checks the broker's), after
        UNREGISTER if it became empty.
        """
        for group, info in list(self.consumer_table.items()):
            if not info.do_channel_close_event(remote_addr, channel):
                continue
            removed_group = not info.channel_info_table
            if removed_group:
                del self.consumer_table[group]
                self._fire(ConsumerGroupEvent.UNREGISTER, group, [])
            self._emit(
                "doChannelCloseEvent",
                "channelClosed",
                group=group,
                remote_addr=remote_addr,
                group_removed=removed_group,
                client_ids=info.get_all_client_id(),
            )
            self._fire(ConsumerGroupEvent.CHANGE, group, info.get_all_channel())

    def scan_not_active_channel(self, now_ms: int) -> list[Channel]:
        """Drop members silent for more than 120 s, and groups left empty.

        Mirrors ``ConsumerManager#scanNotActiveChannel`` (broker/client, RocketMQ 4.9.3),
        run every 10 s by ``ClientHousekeepingService``; docs/reference.md §9. Java closes each
        expired channel and notifies nobody (the close event then finds the channel
        already gone); here the caller closes the returned channels.

        Returns:
            The expired channels, in scan order.
        """
        expired: list[Channel] = []
        for group, info in list(self.consumer_table.items()):
            for channel, cci in list(info.channel_info_table.items()):
                idle = now_ms - cci.last_update_timestamp
                if idle > CHANNEL_EXPIRED_TIMEOUT:
                    del info.channel_info_table[channel]
                    expired.append(channel)
                    self._emit(
                        "scanNotActiveChannel",
                        "expired",
                        group=group,
                        client_id=cci.client_id,
                        remote_addr=channel.remote_address,
                        idle_ms=idle,
                    )
            if not info.channel_info_table:
                del self.consumer_table[group]
                self._emit("scanNotActiveChannel", "groupRemoved", group=group)
        return expired

    def _fire(self, event: ConsumerGroupEvent, group: str, args: list[Any]) -> None:
        if self.listener is not None:
            self.listener(event, group, args)

    def _emit(self, method: str, step: str, **fields: Any) -> None:
        if self._tracer is not None and self._tracer.enabled:
            self._tracer.emit(f"{_COMPONENT}.{method}", step, Kind.STATE, **fields)
