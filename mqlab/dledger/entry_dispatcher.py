"""The leader's push to one follower: COMPARE, TRUNCATE, APPEND, COMMIT.

Mirrors ``DLedgerEntryPusher.EntryDispatcher`` (DLedger 0.2.3): ``checkAndFreshState``,
``doCompare``, ``doTruncate``, ``doAppend``, ``doAppendInner``, ``doCommit``,
``doCheckAppendResponse`` and ``changeState``; mechanisms.md "DLedger replication" steps
2, 3, 5, 6, 7, 9 and 11. 0.2.3's comment draws the states::

    COMPARE ---- TRUNCATE ---- APPEND ---- COMMIT
    ^                             |
    |---<-----<------<-------<----|

A new term starts in COMPARE: the leader sends its last entry, then walks back (to the
follower's end index, then one by one) until the follower holds the same entry at the same
index. A match at the follower's end goes straight to APPEND; a match below it, or no
overlap at all, sends a TRUNCATE of the follower's log to that entry first. APPEND pushes
every entry from ``writeIndex`` on without waiting (at most 1000 in flight), each carrying
the leader's committed index; an answer SUCCESS moves the follower's water mark, and
INCONSISTENT_STATE goes back to COMPARE. Idle, a COMMIT push every second (more than
1000 ms since the last push) carries the committed index; an entry unanswered for
``maxPushTimeOutMs`` (1000 ms) past the water mark is pushed again.

Java's thread blocks on each COMPARE and TRUNCATE answer (``future.get(3, SECONDS)``); here
the dispatcher waits for that answer (``awaiting``) and goes on when it comes. A failed
answer (a code other than SUCCESS / INCONSISTENT_STATE, a timeout, a broken link) is
0.2.3's exception path: back to COMPARE and a 500 ms pause. Java's thread spins when idle;
here it waits 10 ms, and an append wakes it (``DLedgerServer.handle_append``). The timer is
``"DLedgerEntryPusher.EntryDispatcher"`` keyed by the follower's id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqlab.dledger.dledger_entry import DLedgerEntry
from mqlab.dledger.exception import DLedgerException, check
from mqlab.dledger.protocol import (
    DLedgerResponseCode,
    PushEntryRequest,
    PushEntryResponse,
    PushEntryType,
)
from mqlab.dledger.service_thread import ServiceThread, elapsed

if TYPE_CHECKING:
    from mqlab.dledger.dledger_entry_pusher import DLedgerEntryPusher

__all__ = ["EntryDispatcher"]

C = "DLedgerEntryPusher.EntryDispatcher"
R = DLedgerResponseCode
T = PushEntryType
IDLE_WAIT_MS = 10
ERROR_SLEEP_MS = 500


class EntryDispatcher(ServiceThread):
    """Mirrors ``DLedgerEntryPusher.EntryDispatcher`` (DLedger 0.2.3). See the module essay."""

    def __init__(self, pusher: DLedgerEntryPusher, peer_id: str) -> None:
        super().__init__(pusher.server, "DLedgerEntryPusher.EntryDispatcher", key=peer_id)
        self.pusher = pusher
        self.peer_id = peer_id
        self.type = T.COMPARE
        self.last_push_commit_time_ms = -1
        self.compare_index = -1
        self.write_index = -1
        self.max_pending_size = 1000
        self.term = -1
        self.leader_id: str | None = None
        self.last_check_leak_time_ms = pusher.now
        self.pending_map: dict[int, int] = {}
        self.awaiting = False

    @property
    def store(self):
        return self.pusher.store

    @property
    def now(self) -> int:
        return self.pusher.now

    def _emit(self, step: str, **fields) -> None:
        self.server.ctx.tracer.emit(C, step, peer=self.peer_id, **fields)

    # -- the loop -------------------------------------------------------------------------------
    def do_work(self) -> None:
        """``EntryDispatcher#doWork``."""
        if self.awaiting:
            return  # blocked on a COMPARE / TRUNCATE answer
        try:
            if not self.check_and_fresh_state():
                self.park()
                return
            if self.type == T.APPEND:
                self.do_append()
            else:
                self.do_compare()
            if not self.awaiting:
                self.wait_for_running(IDLE_WAIT_MS)
        except DLedgerException as e:
            self._on_error(e)

    def _on_error(self, e: DLedgerException) -> None:
        self._emit("5", event="error", code=e.code.name, write_index=self.write_index,
                   compare_index=self.compare_index)  # fmt: skip
        self.change_state(-1, T.COMPARE)
        self.wait_for_running(ERROR_SLEEP_MS)

    def check_and_fresh_state(self) -> bool:
        """``checkAndFreshState``: a leader only; a new term (or leader) starts in COMPARE (step 2)."""
        ms = self.pusher.member_state
        if not ms.is_leader():
            return False
        if self.term != ms.curr_term or self.leader_id is None or self.leader_id != ms.leader_id:
            check(ms.self_id == ms.leader_id, R.UNKNOWN)
            self.term = ms.curr_term
            self.leader_id = ms.self_id
            self._emit("2", term=self.term)
            self.change_state(-1, T.COMPARE)
        return True

    def build_push_request(
        self, entry: DLedgerEntry | None, target: PushEntryType
    ) -> PushEntryRequest:
        ms = self.pusher.member_state
        return PushEntryRequest(
            group=ms.group, remote_id=self.peer_id, leader_id=self.leader_id, term=self.term,
            entry=entry, type=target, commit_index=self.store.committed_index,
        )  # fmt: skip

    def change_state(self, index: int, target: PushEntryType) -> None:
        """``EntryDispatcher#changeState``."""
        prev = self.type
        if target == T.APPEND:
            self.compare_index = -1
            self.pusher.update_peer_water_mark(self.term, self.peer_id, index)
            self.pusher.quorum_ack_checker.wakeup()
            self.write_index = index + 1
        elif target == T.COMPARE:
            if self.type == T.APPEND:
                self.compare_index = -1
                self.pending_map.clear()
        elif target == T.TRUNCATE:
            self.compare_index = -1
        self.type = target
        if prev != target or index != -1:
            self._emit(
                "5", event="changeState", **{"from": prev.value, "to": target.value, "index": index}
            )

    # -- COMPARE ----------------------------------------------------------------------------------
    def do_compare(self) -> None:
        """Send the entry at ``compareIndex`` (step 3). ``EntryDispatcher#doCompare``, up to the wait."""
        if self.type not in (T.COMPARE, T.TRUNCATE):
            return
        store = self.store
        if self.compare_index == -1 and store.ledger_end_index == -1:
            return
        if self.compare_index == -1:
            self.compare_index = store.ledger_end_index
        elif (
            self.compare_index > store.ledger_end_index
            or self.compare_index < store.ledger_begin_index
        ):
            self.compare_index = store.ledger_end_index
        entry = store.get(self.compare_index)
        request = self.build_push_request(entry, T.COMPARE)
        self._emit(
            "3", type="COMPARE", index=self.compare_index, entry_term=entry.term, term=self.term
        )
        self.awaiting = True
        self.server.rpc.push(request, self._on_compare_response)

    def _on_compare_response(self, response: PushEntryResponse) -> None:
        """The rest of ``doCompare``'s turn: where the logs meet (step 5)."""
        self.awaiting = False
        if not self.server.running:
            return
        try:
            self._after_compare(response)
        except DLedgerException as e:
            self._on_error(e)

    def _after_compare(self, response: PushEntryResponse) -> None:
        store = self.store
        code = R.value_of(response.code)
        check(code in (R.INCONSISTENT_STATE, R.SUCCESS), code, f"compareIndex={self.compare_index}")
        truncate_index = -1
        if code == R.SUCCESS:
            if self.compare_index == response.end_index:
                self._emit("5", result="match_at_end", index=self.compare_index)
                self.change_state(self.compare_index, T.APPEND)
                self.wakeup()
                return
            truncate_index = self.compare_index  # the follower has dirty entries after it
        elif (
            response.end_index < store.ledger_begin_index
            or response.begin_index > store.ledger_end_index
        ):
            truncate_index = store.ledger_begin_index  # no overlap at all
        elif self.compare_index < response.begin_index:
            truncate_index = store.ledger_begin_index
        elif self.compare_index > response.end_index:
            self.compare_index = response.end_index  # the usual case: start at its end
        else:
            self.compare_index -= 1  # a different entry here: one back
        if self.compare_index < store.ledger_begin_index:
            truncate_index = store.ledger_begin_index
        self._emit("5", result=code.name, compare_index=self.compare_index, truncate_index=truncate_index,
                   follower_begin=response.begin_index, follower_end=response.end_index)  # fmt: skip
        if truncate_index != -1:
            self.change_state(truncate_index, T.TRUNCATE)
            self.do_truncate(truncate_index)
            return
        self.wakeup()  # the while loop goes on

    # -- TRUNCATE ----------------------------------------------------------------------------------
    def do_truncate(self, truncate_index: int) -> None:
        """Make the follower's log end at ``truncateIndex`` (step 6). ``EntryDispatcher#doTruncate``."""
        check(self.type == T.TRUNCATE, R.UNKNOWN)
        entry = self.store.get(truncate_index)
        request = self.build_push_request(entry, T.TRUNCATE)
        self._emit("6", type="TRUNCATE", index=truncate_index, pos=entry.pos)
        self.awaiting = True

        def on_response(response: PushEntryResponse) -> None:
            self.awaiting = False
            if not self.server.running:
                return
            try:
                code = R.value_of(response.code)
                check(code == R.SUCCESS, code, f"truncateIndex={truncate_index}")
                self.last_push_commit_time_ms = self.now
                self.change_state(truncate_index, T.APPEND)
                self.wakeup()
            except DLedgerException as e:
                self._on_error(e)

        self.server.rpc.push(request, on_response)

    # -- APPEND and COMMIT -----------------------------------------------------------------------
    def do_append(self) -> None:
        """Push every entry from ``writeIndex`` on (step 7). ``EntryDispatcher#doAppend``."""
        store = self.store
        while True:
            if not self.check_and_fresh_state():
                break
            if self.type != T.APPEND:
                break
            if self.write_index > store.ledger_end_index:
                self.do_commit()
                self.do_check_append_response()
                break
            if (
                len(self.pending_map) >= self.max_pending_size
                or elapsed(self.now, self.last_check_leak_time_ms) > 1000
            ):
                mark = self.pusher.get_peer_water_mark(self.term, self.peer_id)
                for index in [i for i in self.pending_map if i < mark]:
                    del self.pending_map[index]
                self.last_check_leak_time_ms = self.now
            if len(self.pending_map) >= self.max_pending_size:
                self.do_check_append_response()
                break
            self.do_append_inner(self.write_index)
            self.write_index += 1

    def do_append_inner(self, index: int) -> None:
        """``EntryDispatcher#doAppendInner``: one APPEND push; its answer moves the mark (step 9)."""
        try:
            entry = self.store.get(index)
        except DLedgerException as e:
            if e.code == R.INDEX_LESS_THAN_LOCAL_BEGIN:
                self.change_state(-1, T.COMPARE)
                return
            raise
        request = self.build_push_request(entry, T.APPEND)
        self._emit("7", type="APPEND", index=index, commit_index=request.commit_index)
        self.pending_map[index] = self.now

        def on_response(x: PushEntryResponse) -> None:
            code = R.value_of(x.code)
            self._emit("9", index=index, code=code.name)
            if code == R.SUCCESS:
                self.pending_map.pop(x.index, None)
                self.pusher.update_peer_water_mark(x.term, self.peer_id, x.index)
                self.pusher.quorum_ack_checker.wakeup()
            elif code == R.INCONSISTENT_STATE:
                self.change_state(-1, T.COMPARE)

        self.server.rpc.push(request, on_response)
        self.last_push_commit_time_ms = self.now

    def do_commit(self) -> None:
        """A COMMIT push when more than 1000 ms passed since the last push (step 11)."""
        if elapsed(self.now, self.last_push_commit_time_ms) > 1000:
            request = self.build_push_request(None, T.COMMIT)
            self._emit("11", type="COMMIT", commit_index=request.commit_index)
            self.server.rpc.push(request, lambda _r: None)  # the answer is ignored
            self.last_push_commit_time_ms = self.now

    def do_check_append_response(self) -> None:
        """Push again the entry after the water mark, unanswered for ``maxPushTimeOutMs``."""
        mark = self.pusher.get_peer_water_mark(self.term, self.peer_id)
        sent = self.pending_map.get(mark + 1)
        if sent is not None and self.now - sent > self.pusher.config.max_push_time_out_ms:
            self._emit("7", event="retry", index=mark + 1)
            self.do_append_inner(mark + 1)
