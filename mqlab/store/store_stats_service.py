"""The store's counters that GET_BROKER_RUNTIME_INFO (28) reports.

Mirrors the counting half of ``StoreStatsService`` (store, RocketMQ 4.9.3): messages and
bytes put per topic (``putMessageTopicTimesTotal`` / ``putMessageTopicSizeTotal``, added
by ``CommitLog#asyncPutMessage(s)`` after a successful append), failed puts
(``putMessageFailedTimes``, added by ``DefaultMessageStore`` when a put is not OK) and
messages handed to pullers (``getMessageTransferedMsgCount``, added by
``DefaultMessageStore#getMessage`` when it finds messages).

The sampling half runs on the store owner's clock: ``sampling`` (``StoreStatsService#run``:
wait 1 s, then sample) snapshots four counters (messages put, gets that found / missed,
messages transferred) into lists of at most 601 entries, and the runtime info's ``putTps``,
``getFoundTps``, ``getMissTps``, ``getTotalTps`` and ``getTransferedTps`` read them over the
last 10, 60 and 600 samples (``CallSnapshot#getTPS``; an empty string while a list holds no
more samples than that, "0.0" for getTotalTps). Left out: the put-latency histogram and
``putMessageEntireTimeMax`` (a simulated put takes 0 ms).
"""

from __future__ import annotations

from collections import deque

from mqlab.remoting.fastjson import java_double_to_string

__all__ = ["StoreStatsService"]

#: StoreStatsService.FREQUENCY_OF_SAMPLING (ms) and MAX_RECORDS_OF_SAMPLING
FREQUENCY_OF_SAMPLING = 1000
MAX_RECORDS_OF_SAMPLING = 600


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
        "get_message_times_total_found",
        "get_message_times_total_miss",
        "put_times_list",
        "get_times_found_list",
        "get_times_miss_list",
        "transfered_msg_count_list",
    )

    def __init__(self, boot_timestamp: int = 0) -> None:
        self.message_store_boot_timestamp = boot_timestamp
        self.put_message_topic_times_total: dict[str, int] = {}
        self.put_message_topic_size_total: dict[str, int] = {}
        self.put_message_failed_times = 0
        self.get_message_transfered_msg_count = 0
        self.get_message_times_total_found = 0
        self.get_message_times_total_miss = 0
        # CallSnapshot(timestamp, callTimesTotal) lists, oldest first
        self.put_times_list: deque[tuple[int, int]] = deque()
        self.get_times_found_list: deque[tuple[int, int]] = deque()
        self.get_times_miss_list: deque[tuple[int, int]] = deque()
        self.transfered_msg_count_list: deque[tuple[int, int]] = deque()

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

    # -- sampling (StoreStatsService#run, every FREQUENCY_OF_SAMPLING ms) -----------------------
    def sampling(self, now_ms: int) -> None:
        """Mirrors ``#sampling``: one snapshot of each counter, the oldest dropped past 601."""
        for cs, total in (
            (self.put_times_list, self.get_put_message_times_total()),
            (self.get_times_found_list, self.get_message_times_total_found),
            (self.get_times_miss_list, self.get_message_times_total_miss),
            (self.transfered_msg_count_list, self.get_message_transfered_msg_count),
        ):
            cs.append((now_ms, total))
            if len(cs) > MAX_RECORDS_OF_SAMPLING + 1:
                cs.popleft()

    @staticmethod
    def _tps(cs: deque[tuple[int, int]], time: int) -> float | None:
        """``CallSnapshot#getTPS(lastBefore, last)`` over ``time`` samples; None if too few."""
        if len(cs) <= time:
            return None
        (t0, v0), (t1, v1) = cs[-(time + 1)], cs[-1]
        span = t1 - t0
        return (v1 - v0) / span * 1000 if span else 0.0

    def _tps_string(self, cs: deque[tuple[int, int]]) -> str:
        """``getPutTps()`` and its siblings: the 10, 60 and 600 sample TPS, space separated."""
        parts = []
        for time in (10, 60, 600):
            tps = self._tps(cs, time)
            parts.append("" if tps is None else java_double_to_string(tps))
        return " ".join(parts)

    def sampled_runtime_info(self) -> dict[str, str]:
        """The TPS entries of ``#getRuntimeInfo``."""
        total = []
        for time in (10, 60, 600):  # getGetTotalTps(time): found + miss, 0.0 when too few
            found = self._tps(self.get_times_found_list, time) or 0.0
            miss = self._tps(self.get_times_miss_list, time) or 0.0
            total.append(java_double_to_string(found + miss))
        return {
            "putTps": self._tps_string(self.put_times_list),
            "getFoundTps": self._tps_string(self.get_times_found_list),
            "getMissTps": self._tps_string(self.get_times_miss_list),
            "getTotalTps": " ".join(total),
            "getTransferedTps": self._tps_string(self.transfered_msg_count_list),
        }
