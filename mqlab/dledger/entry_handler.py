"""The follower's side of the push: order the leader's requests and apply them one by one.

Mirrors ``DLedgerEntryPusher.EntryHandler`` (DLedger 0.2.3): ``handlePush``,
``handleDoAppend``, ``handleDoCompare``, ``handleDoTruncate``, ``handleDoCommit``,
``checkAbnormalFuture`` and ``checkAppendFuture``; mechanisms.md "DLedger replication"
steps 4, 6, 8 and 11.

What it owns: ``write_request_map`` (APPEND requests by index, each with the future of its
answer) and ``compare_or_truncate_requests`` (COMPARE, TRUNCATE and COMMIT, in arrival
order). A COMPARE or TRUNCATE clears the APPENDs waiting. The thread (timer
``"DLedgerEntryPusher.EntryHandler"``) works only on a follower: queued requests first, then
the APPEND for ``ledgerEndIndex + 1``; nothing to do, it looks once a second for APPENDs it
can answer anyway (an index it already has: SUCCESS if the entry is equal, a request stuck
ahead of a gap for more than 1000 ms: INCONSISTENT_STATE, which sends the leader back to
COMPARE). The answer to a push goes out when its future completes, so a push that reaches a
node that is not (yet) a follower waits there, and the leader's call times out after 3 s.

Every APPEND, TRUNCATE and COMMIT also moves the follower's committed index to the leader's
``commitIndex`` (bounded by its own ledger end; ``updateCommittedIndex``).

Java's handler takes one request per turn and waits 1 ms when idle; here a turn takes every
request it can, and it waits 10 ms when idle (a push wakes it). Java's queue holds 100 and
its ``put`` blocks when full; here it is unbounded.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from mqlab.common import mutants
from mqlab.dledger.exception import DLedgerException, check
from mqlab.dledger.protocol import (
    DLedgerResponseCode,
    PushEntryRequest,
    PushEntryResponse,
    PushEntryType,
)
from mqlab.dledger.service_thread import ServiceThread, TimeoutFuture

if TYPE_CHECKING:
    from mqlab.dledger.dledger_entry_pusher import DLedgerEntryPusher

__all__ = ["EntryHandler"]

C = "DLedgerEntryPusher.EntryHandler"
R = DLedgerResponseCode
T = PushEntryType
IDLE_WAIT_MS = 10
#: ``new TimeoutFuture<>(1000)`` in ``handlePush``
PUSH_FUTURE_TIMEOUT_MS = 1000


class EntryHandler(ServiceThread):
    """Mirrors ``DLedgerEntryPusher.EntryHandler`` (DLedger 0.2.3). See the module essay."""

    def __init__(self, pusher: DLedgerEntryPusher) -> None:
        super().__init__(pusher.server, "DLedgerEntryPusher.EntryHandler")
        self.pusher = pusher
        self.last_check_fast_forward_time_ms = pusher.now
        self.write_request_map: dict[int, tuple[PushEntryRequest, TimeoutFuture]] = {}
        self.compare_or_truncate_requests: deque[tuple[PushEntryRequest, TimeoutFuture]] = deque()

    @property
    def store(self):
        return self.pusher.store

    def _emit(self, step: str, **fields) -> None:
        self.server.ctx.tracer.emit(C, step, **fields)

    def handle_push(self, request: PushEntryRequest) -> TimeoutFuture:
        """Queue a push; its answer comes when the thread has handled it.

        Raises:
            DLedgerException: UNEXPECTED_ARGUMENT for an APPEND, COMPARE or TRUNCATE without
                an entry (``DLedgerServer`` answers it).
        """
        future: TimeoutFuture = TimeoutFuture(self.pusher.now, PUSH_FUTURE_TIMEOUT_MS)
        if request.type == T.APPEND:
            check(request.entry is not None, R.UNEXPECTED_ARGUMENT)
            index = request.get_first_entry_index()
            if index in self.write_request_map:
                future.complete(self._build_response(request, R.REPEATED_PUSH))
            else:
                self.write_request_map[index] = (request, future)
        elif request.type == T.COMMIT:
            self.compare_or_truncate_requests.append((request, future))
        else:  # COMPARE, TRUNCATE
            check(request.entry is not None, R.UNEXPECTED_ARGUMENT)
            self.write_request_map.clear()
            self.compare_or_truncate_requests.append((request, future))
        self.wakeup()
        return future

    def _build_response(self, request: PushEntryRequest, code: R) -> PushEntryResponse:
        """``EntryHandler#buildResponse``: the follower's begin and end index go back."""
        return PushEntryResponse(
            group=request.group, code=code, term=request.term,
            index=None if request.type == T.COMMIT else request.entry.index,  # type: ignore[union-attr]
            begin_index=self.store.ledger_begin_index, end_index=self.store.ledger_end_index,
        )  # fmt: skip

    # -- the thread -------------------------------------------------------------------------------
    def do_work(self) -> None:
        """``EntryHandler#doWork``, every request it can take in one turn."""
        if not self.pusher.member_state.is_follower():
            self.park()
            return
        while True:
            if self.compare_or_truncate_requests:
                request, future = self.compare_or_truncate_requests.popleft()
                if request.type == T.TRUNCATE:
                    self.handle_do_truncate(request.entry.index, request, future)  # type: ignore[union-attr]
                elif request.type == T.COMPARE:
                    self.handle_do_compare(request.entry.index, request, future)  # type: ignore[union-attr]
                elif request.type == T.COMMIT:
                    self.handle_do_commit(request.commit_index, request, future)
                continue
            next_index = self.store.ledger_end_index + 1
            pair = self.write_request_map.pop(next_index, None)
            if pair is None:
                self.check_abnormal_future(self.store.ledger_end_index)
                break
            self.handle_do_append(next_index, pair[0], pair[1])
        self.wait_for_running(IDLE_WAIT_MS)

    def handle_do_append(
        self, write_index: int, request: PushEntryRequest, future: TimeoutFuture
    ) -> None:
        """Append the leader's entry and take its committed index (step 6's follower side)."""
        store = self.store
        try:
            check(write_index == request.entry.index, R.INCONSISTENT_STATE)  # type: ignore[union-attr]
            entry = store.append_as_follower(request.entry, request.term, request.leader_id)  # type: ignore[arg-type]
            check(entry.index == write_index, R.INCONSISTENT_STATE)
            future.complete(self._build_response(request, R.SUCCESS))
            store.update_committed_index(request.term, request.commit_index)
            self._emit("8", type="APPEND", index=write_index, code="SUCCESS",
                       committed_index=store.committed_index)  # fmt: skip
        except DLedgerException as e:
            self._emit(
                "8", type="APPEND", index=write_index, code="INCONSISTENT_STATE", cause=e.code.name
            )
            future.complete(self._build_response(request, R.INCONSISTENT_STATE))

    def handle_do_compare(
        self, compare_index: int, request: PushEntryRequest, future: TimeoutFuture
    ) -> None:
        """Is the leader's entry the one here? SUCCESS or INCONSISTENT_STATE (step 4)."""
        try:
            check(compare_index == request.entry.index, R.UNKNOWN)  # type: ignore[union-attr]
            local = self.store.get(compare_index)
            check(request.entry == local, R.INCONSISTENT_STATE)
            code = R.SUCCESS
        except DLedgerException:
            code = R.INCONSISTENT_STATE
        response = self._build_response(request, code)
        self._emit("4", type="COMPARE", index=compare_index, code=code.name,
                   begin_index=response.begin_index, end_index=response.end_index)  # fmt: skip
        future.complete(response)

    def handle_do_commit(
        self, committed_index: int, request: PushEntryRequest, future: TimeoutFuture
    ) -> None:
        """Take the leader's committed index (step 11's follower side)."""
        try:
            self.store.update_committed_index(request.term, committed_index)
            code = R.SUCCESS
        except DLedgerException:
            code = R.UNKNOWN
        self._emit("11", type="COMMIT", commit_index=committed_index,
                   committed_index=self.store.committed_index)  # fmt: skip
        future.complete(self._build_response(request, code))

    def handle_do_truncate(
        self, truncate_index: int, request: PushEntryRequest, future: TimeoutFuture
    ) -> None:
        """Cut the log after the leader's entry (step 6's follower side)."""
        store = self.store
        before = store.ledger_end_index
        try:
            check(truncate_index == request.entry.index, R.UNKNOWN)  # type: ignore[union-attr]
            if "dledger_truncate_skipped" in mutants.ACTIVE and before >= truncate_index:
                # planted bug: the entries from truncate_index on stay
                index = truncate_index
            else:
                index = store.truncate(request.entry, request.term, request.leader_id)  # type: ignore[arg-type]
            check(index == truncate_index, R.INCONSISTENT_STATE)
            future.complete(self._build_response(request, R.SUCCESS))
            store.update_committed_index(request.term, request.commit_index)
            code = "SUCCESS"
        except DLedgerException:
            future.complete(self._build_response(request, R.INCONSISTENT_STATE))
            code = "INCONSISTENT_STATE"
        self._emit("6", type="TRUNCATE", index=truncate_index, code=code, end_before=before,
                   end_after=store.ledger_end_index)  # fmt: skip

    # -- stuck appends ------------------------------------------------------------------------------
    def check_abnormal_future(self, end_index: int) -> None:
        """``checkAbnormalFuture``: at most once a second, look at the waiting APPENDs."""
        now = self.pusher.now
        if now - self.last_check_fast_forward_time_ms < 1000:
            return
        self.last_check_fast_forward_time_ms = now
        if self.write_request_map:
            self.check_append_future(end_index)

    def check_append_future(self, end_index: int) -> None:
        """``checkAppendFuture``: answer APPENDs at or below the end (the ack was lost), and
        fail the oldest timed-out one ahead of a gap, so the leader compares again."""
        now = self.pusher.now
        min_fast_forward_index: int | None = None
        for index in sorted(self.write_request_map):
            request, future = self.write_request_map[index]
            if index <= end_index:
                try:
                    check(request.entry == self.store.get(index), R.INCONSISTENT_STATE)
                    future.complete(self._build_response(request, R.SUCCESS))
                except DLedgerException:
                    future.complete(self._build_response(request, R.INCONSISTENT_STATE))
                del self.write_request_map[index]
                continue
            if index == end_index + 1:
                return
            if not future.is_time_out(now):
                continue
            if min_fast_forward_index is None or index < min_fast_forward_index:
                min_fast_forward_index = index
        if min_fast_forward_index is None:
            return
        request, future = self.write_request_map[min_fast_forward_index]
        self._emit("8", event="PushFastForward", end_index=end_index, index=min_fast_forward_index)
        future.complete(self._build_response(request, R.INCONSISTENT_STATE))
