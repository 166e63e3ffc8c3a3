"""The store's counters that GET_BROKER_RUNTIME_INFO (28) reports.

Mirrors the counting half of ``StoreStatsService`` (store, RocketMQ 4.9.3): messages and
bytes put per topic (``putMessageTopicTimesTotal`` / ``putMessageTopicSizeTotal``, added
by ``CommitLog#asyncPutMessage(s)`` after a successful append), failed puts
(``putMessageFailedTimes``, added by ``DefaultMessageStore`` when a put is not OK) and
messages handed to pullers (``getMessageTransferedMsgCount``, added by
``DefaultMessageStore#getMessage`` when it finds messages).

Left out: the sampling half. Java's service thread snapshots the counters every second
and prints the TPS over 10/60/600 s, and a minute's put-latency histogram; mqlab runs on a
simulated clock with no service threads, and a simulated put takes 0 ms, so the runtime
info reports those values as a 4.9.3 broker does during its first 10 seconds (empty TPS
strings, no histogram; see ``AdminBrokerProcessor.prepare_runtime_info``).
"""

from __future__ import annotations

__all__ = ["StoreStatsService"]


class StoreStatsService:
    """Counters of one store. Mirrors ``StoreStatsService`` (its counters only).

    Args:
        boot_timestamp: ``messageStoreBootTimestamp`` (Java: the clock at construction).
    """

    __slots__ = (
        "message_store_boot_timestamp",
        "put_message_topic_times_total",
        "put_message_topic_size_total",
        "put_message_failed_times",
        "get_message_transfered_msg_count",
    )

    def __init__(self, boot_timestamp: int = 0) -> None:
        self.message_store_boot_timestamp = boot_timestamp
        self.put_message_topic_times_total: dict[str, int] = {}
        self.put_message_topic_size_total: dict[str, int] = {}
        self.put_message_failed_times = 0
        self.get_message_transfered_msg_count = 0

    def on_put(self, topic: str, msg_num: int, wrote_bytes: int) -> None:
        """``getSinglePutMessageTopicTimesTotal(topic).add(n)`` and the size counter."""
        times = self.put_message_topic_times_total
        times[topic] = times.get(topic, 0) + msg_num
        sizes = self.put_message_topic_size_total
        sizes[topic] = sizes.get(topic, 0) + wrote_bytes

    def get_put_message_times_total(self) -> int:
        """Mirrors ``#getPutMessageTimesTotal``: the sum over topics."""
        return sum(self.put_message_topic_times_total.values())

    def get_put_message_size_total(self) -> int:
        """Mirrors ``#getPutMessageSizeTotal``: the sum over topics."""
        return sum(self.put_message_topic_size_total.values())
