"""The broker's sampled statistics: puts per topic, gets per group, send-backs, latency.

Mirrors ``BrokerStatsManager`` (store/stats, RocketMQ 4.9.3): a table of ``StatsItemSet``
by stats name, the ``inc*`` methods the processors call, the keys they build
(``topic@group``; ``topic@queueId`` and ``queueId@topic@group`` with ``enableQueueStat``),
and ``tpsGroupGetNums`` (consumerProgress's "Consume TPS"). Where 4.9.3 counts:

| stats name | added by | key |
|---|---|---|
| TOPIC_PUT_NUMS, TOPIC_PUT_SIZE, BROKER_PUT_NUMS | ``SendMessageProcessor#handlePutMessageResult`` (and a delayed send-back) | topic / cluster |
| GROUP_GET_NUMS, GROUP_GET_SIZE, BROKER_GET_NUMS, GROUP_GET_LATENCY | ``PullMessageProcessor#processRequest``, SUCCESS | topic@group / cluster |
| SNDBCK_PUT_NUMS | ``SendMessageProcessor#asyncConsumerSendMsgBack``, PUT_OK | topic@group |
| TOPIC_PUT_*, GROUP_GET_*, QUEUE_GET_*, BROKER_PUT_NUMS | ``ScheduleMessageService.PutResultProcess#onSuccess`` (a delayed message delivered) | real topic / SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER |

Java's sets each schedule ``samplingInSeconds`` (every 10 s), ``samplingInMinutes``
(10 min) and ``samplingInHour`` (1 h) at delay 0 on one ``BrokerStatsThread``; here the
broker arms three timers of those periods on its context (:meth:`start`), which sample
every set in table order. The ``print*`` log timers and the commercial sets' own thread
only write logs: left out.
"""

from __future__ import annotations

from collections.abc import Callable

from mqlab.common.stats import StatsItem, StatsItemSet, StatsSnapshot

__all__ = ["BrokerStatsManager"]

QUEUE_PUT_NUMS = "QUEUE_PUT_NUMS"
QUEUE_PUT_SIZE = "QUEUE_PUT_SIZE"
QUEUE_GET_NUMS = "QUEUE_GET_NUMS"
QUEUE_GET_SIZE = "QUEUE_GET_SIZE"
TOPIC_PUT_NUMS = "TOPIC_PUT_NUMS"
TOPIC_PUT_SIZE = "TOPIC_PUT_SIZE"
GROUP_GET_NUMS = "GROUP_GET_NUMS"
GROUP_GET_SIZE = "GROUP_GET_SIZE"
SNDBCK_PUT_NUMS = "SNDBCK_PUT_NUMS"
BROKER_PUT_NUMS = "BROKER_PUT_NUMS"
BROKER_GET_NUMS = "BROKER_GET_NUMS"
GROUP_GET_FROM_DISK_NUMS = "GROUP_GET_FROM_DISK_NUMS"
GROUP_GET_FROM_DISK_SIZE = "GROUP_GET_FROM_DISK_SIZE"
BROKER_GET_FROM_DISK_NUMS = "BROKER_GET_FROM_DISK_NUMS"
BROKER_GET_FROM_DISK_SIZE = "BROKER_GET_FROM_DISK_SIZE"
GROUP_GET_LATENCY = "GROUP_GET_LATENCY"
COMMERCIAL_SETS = (
    "COMMERCIAL_SEND_TIMES",
    "COMMERCIAL_RCV_TIMES",
    "COMMERCIAL_SEND_SIZE",
    "COMMERCIAL_RCV_SIZE",
    "COMMERCIAL_RCV_EPOLLS",
    "COMMERCIAL_SNDBCK_TIMES",
    "COMMERCIAL_PERM_FAILURES",
)

#: (timer name, period ms, StatsItemSet method): StatsItemSet#init's three samplings.
SAMPLINGS: tuple[tuple[str, int, str], ...] = (
    ("StatsItemSet.samplingInSeconds", 10_000, "sampling_in_seconds"),
    ("StatsItemSet.samplingInMinutes", 600_000, "sampling_in_minutes"),
    ("StatsItemSet.samplingInHour", 3_600_000, "sampling_in_hour"),
)


class BrokerStatsManager:
    """Mirrors ``BrokerStatsManager(clusterName, enableQueueStat)``."""

    def __init__(self, cluster_name: str, enable_queue_stat: bool = False) -> None:
        self.cluster_name = cluster_name
        self.enable_queue_stat = enable_queue_stat
        names = [QUEUE_PUT_NUMS, QUEUE_PUT_SIZE, QUEUE_GET_NUMS, QUEUE_GET_SIZE]
        if not enable_queue_stat:
            names = []
        names += [
            TOPIC_PUT_NUMS, TOPIC_PUT_SIZE, GROUP_GET_NUMS, GROUP_GET_SIZE, GROUP_GET_LATENCY,
            SNDBCK_PUT_NUMS, BROKER_PUT_NUMS, BROKER_GET_NUMS, GROUP_GET_FROM_DISK_NUMS,
            GROUP_GET_FROM_DISK_SIZE, BROKER_GET_FROM_DISK_NUMS, BROKER_GET_FROM_DISK_SIZE,
            *COMMERCIAL_SETS,
        ]  # fmt: skip
        self.stats_table: dict[str, StatsItemSet] = {n: StatsItemSet(n) for n in names}
        self.start_ms = 0

    # -- the clock ------------------------------------------------------------------------------
    def start(self, set_timer: Callable[..., None], now: Callable[[], int]) -> None:
        """Arm the three samplings (``StatsItemSet#init``: delay 0, fixed rate)."""
        self.start_ms = now()  # every sampling falls on start_ms + k * period
        for name, period, method in SAMPLINGS:
            set_timer(
                name, 0, lambda m=method: self.sample(m, now()), period_ms=period, daemon=True
            )

    def sample(self, method: str, now_ms: int) -> None:
        """Every set's ``samplingIn*`` at ``now_ms``."""
        for s in self.stats_table.values():
            getattr(s, method)(now_ms)

    # -- reads ----------------------------------------------------------------------------------
    def get_stats_item(self, stats_name: str, stats_key: str) -> StatsItem | None:
        s = self.stats_table.get(stats_name)
        return None if s is None else s.get_stats_item(stats_key)

    def tps_group_get_nums(self, group: str, topic: str) -> float:
        """``tpsGroupGetNums``: GROUP_GET_NUMS of ``topic@group`` over the last minute."""
        return self.stats_table[GROUP_GET_NUMS].get_stats_data_in_minute(f"{topic}@{group}").tps

    def stats_in_minute(self, stats_name: str, stats_key: str) -> StatsSnapshot:
        return self.stats_table[stats_name].get_stats_data_in_minute(stats_key)

    # -- counting -------------------------------------------------------------------------------
    def inc_topic_put_nums(self, topic: str, num: int = 1, times: int = 1) -> None:
        self.stats_table[TOPIC_PUT_NUMS].add_value(topic, num, times)

    def inc_topic_put_size(self, topic: str, size: int) -> None:
        self.stats_table[TOPIC_PUT_SIZE].add_value(topic, size, 1)

    def inc_queue_put_nums(self, topic: str, queue_id: int, num: int = 1, times: int = 1) -> None:
        if self.enable_queue_stat:
            self.stats_table[QUEUE_PUT_NUMS].add_value(f"{topic}@{queue_id}", num, times)

    def inc_queue_put_size(self, topic: str, queue_id: int, size: int) -> None:
        if self.enable_queue_stat:
            self.stats_table[QUEUE_PUT_SIZE].add_value(f"{topic}@{queue_id}", size, 1)

    def inc_queue_get_nums(self, group: str, topic: str, queue_id: int, inc: int) -> None:
        if self.enable_queue_stat:
            self.stats_table[QUEUE_GET_NUMS].add_value(f"{topic}@{queue_id}@{group}", inc, 1)

    def inc_queue_get_size(self, group: str, topic: str, queue_id: int, inc: int) -> None:
        if self.enable_queue_stat:
            self.stats_table[QUEUE_GET_SIZE].add_value(f"{topic}@{queue_id}@{group}", inc, 1)

    def inc_group_get_nums(self, group: str, topic: str, inc: int) -> None:
        self.stats_table[GROUP_GET_NUMS].add_value(f"{topic}@{group}", inc, 1)

    def inc_group_get_size(self, group: str, topic: str, inc: int) -> None:
        self.stats_table[GROUP_GET_SIZE].add_value(f"{topic}@{group}", inc, 1)

    def inc_group_get_latency(self, group: str, topic: str, queue_id: int, inc: int) -> None:
        key = f"{queue_id}@{topic}@{group}" if self.enable_queue_stat else f"{topic}@{group}"
        self.stats_table[GROUP_GET_LATENCY].add_value(key, inc, 1)

    def inc_broker_put_nums(self, inc: int = 1) -> None:
        """Only the value: ``getAndCreateStatsItem(clusterName).getValue().add``."""
        self.stats_table[BROKER_PUT_NUMS].get_and_create_stats_item(self.cluster_name).value += inc

    def inc_broker_get_nums(self, inc: int) -> None:
        self.stats_table[BROKER_GET_NUMS].get_and_create_stats_item(self.cluster_name).value += inc

    def inc_send_back_nums(self, group: str, topic: str) -> None:
        self.stats_table[SNDBCK_PUT_NUMS].add_value(f"{topic}@{group}", 1, 1)

    # -- deletions ------------------------------------------------------------------------------
    def on_topic_deleted(self, topic: str) -> None:
        """``onTopicDeleted`` (DELETE_TOPIC_IN_BROKER)."""
        t = self.stats_table
        t[TOPIC_PUT_NUMS].del_value(topic)
        t[TOPIC_PUT_SIZE].del_value(topic)
        if self.enable_queue_stat:
            t[QUEUE_PUT_NUMS].del_value_by_prefix_key(topic, "@")
            t[QUEUE_PUT_SIZE].del_value_by_prefix_key(topic, "@")
            # 4.9.3 also clears QUEUE_GET_* here without checking enableQueueStat: the
            # sets are missing then and the call throws; mqlab skips them instead
            t[QUEUE_GET_NUMS].del_value_by_prefix_key(topic, "@")
            t[QUEUE_GET_SIZE].del_value_by_prefix_key(topic, "@")
        t[GROUP_GET_NUMS].del_value_by_prefix_key(topic, "@")
        t[GROUP_GET_SIZE].del_value_by_prefix_key(topic, "@")
        t[SNDBCK_PUT_NUMS].del_value_by_prefix_key(topic, "@")
        t[GROUP_GET_LATENCY].del_value_by_infix_key(topic, "@")

    def on_group_deleted(self, group: str) -> None:
        """``onGroupDeleted`` (DELETE_SUBSCRIPTIONGROUP)."""
        t = self.stats_table
        t[GROUP_GET_NUMS].del_value_by_suffix_key(group, "@")
        t[GROUP_GET_SIZE].del_value_by_suffix_key(group, "@")
        if self.enable_queue_stat:
            t[QUEUE_GET_NUMS].del_value_by_suffix_key(group, "@")
            t[QUEUE_GET_SIZE].del_value_by_suffix_key(group, "@")
        t[SNDBCK_PUT_NUMS].del_value_by_suffix_key(group, "@")
        t[GROUP_GET_LATENCY].del_value_by_suffix_key(group, "@")
