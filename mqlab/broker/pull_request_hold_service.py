"""Long polling: parked pull requests and the service that wakes them.

Mirrors ``PullRequestHoldService``, ``ManyPullRequest`` and the broker's
``longpolling.PullRequest`` (broker/longpolling, RocketMQ 4.9.3); mechanisms.md "Long polling"; docs/reference.md §10.3.

When a pull finds nothing (``PULL_NOT_FOUND``) and the client set the SUSPEND flag, the
pull processor parks the request here instead of answering. Two things wake it:

- the service's own loop (timer ``"PullRequestHoldService.run"``): every 5 000 ms when
  ``longPollingEnable``, else every ``shortPollingTimeMills`` (1 000 ms), it calls
  ``notify_message_arriving`` for every parked key with the queue's current max offset
  and ``tags_code=None`` (which matches everything);
- the store's reput dispatch (``NotifyMessageArrivingListener``): a new message in
  ``topic@queueId`` calls ``notify_message_arriving`` at once with its tags code, so a
  *matching* message answers the parked pull immediately (long polling only).

A parked request is answered when a newer message matches its filter, or at the first
check at or after ``suspendTimestamp + timeoutMillis`` (so a 15 s long poll parked at
t=1 is answered by the check at t=20 000). A learner sees the deadline in
``next_timers()`` as ``"suspended pull timeout <broker> <topic@queueId> ..."``: that
timer only *marks* the deadline (it traces; the answer still waits for a check),
because that is what RocketMQ does.

This module owns the ``pull_request_table``. It must not know how a pull is processed:
it replays the original request through ``PullMessageProcessor.execute_request_when_wakeup``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqlab.remoting.command import RemotingCommand
from mqlab.runtime.context import Channel
from mqlab.trace.events import Kind

if TYPE_CHECKING:
    from mqlab.broker.broker_controller import BrokerController

__all__ = ["PullRequest", "PullRequestHoldService", "TOPIC_QUEUEID_SEPARATOR"]

TOPIC_QUEUEID_SEPARATOR = "@"
COMPONENT = "PullRequestHoldService"
TIMER_RUN = "PullRequestHoldService.run"
TIMER_DEADLINE = "suspended pull timeout"


@dataclass(slots=True, eq=False)
class PullRequest:
    """A parked pull (broker side). Mirrors ``longpolling.PullRequest``."""

    request_command: RemotingCommand
    client_channel: Channel
    timeout_millis: int
    suspend_timestamp: int
    pull_from_this_offset: int
    subscription_data: Any
    message_filter: Any

    @property
    def deadline(self) -> int:
        return self.suspend_timestamp + self.timeout_millis

    @property
    def marker_key(self) -> str:
        return f"#{self.client_channel.id}/opaque={self.request_command.opaque}"


class PullRequestHoldService:
    """The table of parked pulls, ``topic@queueId`` → list (``ManyPullRequest``)."""

    def __init__(self, broker: BrokerController) -> None:
        self.broker = broker
        self.pull_request_table: dict[str, list[PullRequest]] = {}
        self.next_check_at = 0

    @staticmethod
    def build_key(topic: str, queue_id: int) -> str:
        return f"{topic}{TOPIC_QUEUEID_SEPARATOR}{queue_id}"

    # -- the service loop ---------------------------------------------------------------------
    def check_interval(self) -> int:
        """``run()``'s wait: 5 000 ms with long polling, else ``shortPollingTimeMills``."""
        cfg = self.broker.broker_config
        return 5000 if cfg.long_polling_enable else cfg.short_polling_time_mills

    def start(self) -> None:
        self._arm()

    def _arm(self) -> None:
        interval = self.check_interval()
        self.next_check_at = self.broker.ctx.now_ms + interval
        self.broker.ctx.set_timer(TIMER_RUN, interval, self.run, daemon=True)

    def run(self) -> None:
        """One turn of ``PullRequestHoldService#run``: check, then wait again.

        The wait is re-read every turn, as Java's loop does, so switching
        ``long_polling_enable`` takes effect at the next turn.
        """
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(
                COMPONENT + ".run", "check", Kind.TIMER, parked=self.parked_count(),
                text=f"hold-service check: {self.parked_count()} parked pull(s)",
            )  # fmt: skip
        self.check_hold_request()
        self._arm()

    def check_hold_request(self) -> None:
        """``checkHoldRequest``: notify every parked key with the queue's max offset."""
        store = self.broker.message_store
        for key in list(self.pull_request_table):
            topic, _, qid = key.rpartition(TOPIC_QUEUEID_SEPARATOR)
            queue_id = int(qid)
            offset = store.get_max_offset_in_queue(topic, queue_id)
            self.notify_message_arriving(topic, queue_id, offset)

    # -- parking ---------------------------------------------------------------------------------
    def suspend_pull_request(self, topic: str, queue_id: int, pull_request: PullRequest) -> None:
        """``suspendPullRequest``: add to ``ManyPullRequest`` of ``topic@queueId``."""
        key = self.build_key(topic, queue_id)
        self.pull_request_table.setdefault(key, []).append(pull_request)
        ctx = self.broker.ctx
        tracer = self.broker.tracer
        if tracer.enabled:
            tracer.emit(
                COMPONENT + ".suspendPullRequest", "suspend", key=key,
                offset=pull_request.pull_from_this_offset,
                consumer=pull_request.client_channel.remote_address,
                timeout_millis=pull_request.timeout_millis, deadline=pull_request.deadline,
                text=(
                    f"pull held: {key} offset {pull_request.pull_from_this_offset}, "
                    f"suspended {pull_request.timeout_millis} ms"
                ),
            )  # fmt: skip
        ctx.set_timer(
            TIMER_DEADLINE,
            max(0, pull_request.deadline - ctx.now_ms),  # a wall clock may have passed it
            lambda: self._deadline_reached(key, pull_request),
            key=f"{key} {pull_request.marker_key}",
            daemon=True,
        )

    def _deadline_reached(self, key: str, pr: PullRequest) -> None:
        tracer = self.broker.tracer
        if tracer.enabled:
            # Java has no per-request timer: the next turn of the check loop answers it.
            tracer.emit(
                COMPONENT, "deadline", Kind.TIMER, key=key, offset=pr.pull_from_this_offset,
                answered_at=self.next_check_at,
                text=(
                    f"suspend deadline of {key} offset {pr.pull_from_this_offset} reached; the "
                    f"next hold-service check (t={self.next_check_at}) answers it"
                ),
            )  # fmt: skip

    def parked_count(self) -> int:
        return sum(len(v) for v in self.pull_request_table.values())

    # -- waking ----------------------------------------------------------------------------------
    def notify_message_arriving(
        self,
        topic: str,
        queue_id: int,
        max_offset: int,
        tags_code: int | None = None,
        msg_store_time: int = 0,
        filter_bit_map: bytes | None = None,
        properties: dict[str, str] | None = None,
    ) -> None:
        """Wake the parked pulls of ``topic@queueId`` that can now be answered.

        Mirrors ``PullRequestHoldService#notifyMessageArriving`` (broker/longpolling,
        RocketMQ 4.9.3); mechanisms.md "Long polling", steps 1–5.
        """
        if not self.pull_request_table:  # NOTE: performance: nothing parked, nothing to do
            return
        key = self.build_key(topic, queue_id)
        # step 1 (mechanisms.md "Long polling"): take all parked requests of the key and clear the list.
        request_list = self.pull_request_table.pop(key, None)
        if not request_list:
            return
        broker = self.broker
        tracer = broker.tracer
        ctx = broker.ctx
        replay: list[PullRequest] = []
        for request in request_list:
            newest_offset = max_offset
            # step 2: the offset we were told about is not newer → re-read the queue's max.
            if newest_offset <= request.pull_from_this_offset:
                newest_offset = broker.message_store.get_max_offset_in_queue(topic, queue_id)
            # step 3: a newer message → check the filter by tags code, then by properties.
            if newest_offset > request.pull_from_this_offset:
                match = request.message_filter.is_matched_by_consume_queue(tags_code, None)
                if match and properties is not None:
                    match = request.message_filter.is_matched_by_commit_log(None, properties)
                if tracer.enabled:
                    tracer.emit(
                        COMPONENT + ".notifyMessageArriving", "3", key=key,
                        offset=request.pull_from_this_offset, newest_offset=newest_offset,
                        tags_code=tags_code, match=match,
                        text=(
                            f"{key}: max offset {newest_offset} > pull offset "
                            f"{request.pull_from_this_offset}; filter "
                            f"{'matches → wake' if match else 'does not match'}"
                        ),
                    )  # fmt: skip
                if match:
                    ctx.cancel_timer(TIMER_DEADLINE, f"{key} {request.marker_key}")
                    broker.pull_message_processor.execute_request_when_wakeup(
                        request.client_channel, request.request_command
                    )
                    continue
            # step 4: suspended long enough → answer (PULL_NOT_FOUND if still nothing).
            if ctx.now_ms >= request.deadline:
                if tracer.enabled:
                    tracer.emit(
                        COMPONENT + ".notifyMessageArriving", "4", key=key,
                        offset=request.pull_from_this_offset, suspended_ms=ctx.now_ms
                        - request.suspend_timestamp,
                        text=(
                            f"{key} offset {request.pull_from_this_offset}: suspended "
                            f"{ctx.now_ms - request.suspend_timestamp} ms ≥ "
                            f"{request.timeout_millis} ms → answer now"
                        ),
                    )  # fmt: skip
                ctx.cancel_timer(TIMER_DEADLINE, f"{key} {request.marker_key}")
                broker.pull_message_processor.execute_request_when_wakeup(
                    request.client_channel, request.request_command
                )
                continue
            # step 5: neither → keep it parked for the next check.
            replay.append(request)
        if replay:
            self.pull_request_table.setdefault(key, []).extend(replay)
            if tracer.enabled:
                tracer.emit(
                    COMPONENT + ".notifyMessageArriving", "5", key=key, kept=len(replay),
                    text=f"{key}: {len(replay)} pull(s) stay parked",
                )  # fmt: skip

    def channel_closed(self, channel: Channel) -> int:
        """Drop parked pulls of a closed channel (Netty would fail the write). Returns how many."""
        n = 0
        for key in list(self.pull_request_table):
            keep = [pr for pr in self.pull_request_table[key] if pr.client_channel != channel]
            n += len(self.pull_request_table[key]) - len(keep)
            for pr in self.pull_request_table[key]:
                if pr.client_channel == channel:
                    self.broker.ctx.cancel_timer(TIMER_DEADLINE, f"{key} {pr.marker_key}")
                    if self.broker.tracer.enabled:
                        self.broker.tracer.emit(
                            COMPONENT + ".channelClosed", "drop", key=key,
                            offset=pr.pull_from_this_offset,
                            consumer=channel.remote_address,
                            text=f"{key} offset {pr.pull_from_this_offset}: the consumer's "
                            "connection closed; the parked pull is dropped",
                        )  # fmt: skip
            if keep:
                self.pull_request_table[key] = keep
            else:
                del self.pull_request_table[key]
        return n

    def inspect(self) -> list[dict[str, Any]]:
        """The table as rows, for the Lab's inspector."""
        rows = []
        for key, prs in self.pull_request_table.items():
            for pr in prs:
                rows.append(
                    {
                        "key": key,
                        "consumer": pr.client_channel.remote_address,
                        "opaque": pr.request_command.opaque,
                        "pull_from_this_offset": pr.pull_from_this_offset,
                        "suspend_timestamp": pr.suspend_timestamp,
                        "timeout_millis": pr.timeout_millis,
                        "deadline": pr.deadline,
                    }
                )
        return rows
