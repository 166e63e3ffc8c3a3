"""A DLedger role change becomes a broker role change: the leader's broker turns master.

Mirrors ``DLedgerRoleChangeHandler#handle`` (broker/dledger, RocketMQ 4.9.3) and the
role and id parts of ``BrokerController#changeToSlave`` / ``#changeToMaster``;
mechanisms.md "DLedger commit log" (second table).

Each ``handle(term, role)`` is a task of a single-thread executor, run in order on the
DLedger node as its timer ``"DLedgerRoleChangeHandler"``:

1. CANDIDATE: unless the store is already SLAVE, ``changeToSlave(id)``;
2. FOLLOWER: ``changeToSlave(id)``;
3. LEADER: wait (every 100 ms, ``Thread.sleep(100)``) until the node is no longer the leader
   (give up) or its log is empty or fully committed (``ledgerEndIndex == committedIndex``)
   and dispatched (``dispatchBehindBytes() == 0``); then ``recoverTopicQueueTable`` (the
   queue offsets go on from the consume queues) and ``changeToMaster(SYNC_MASTER)``.

``changeToSlave(id)``: broker id := ``id`` (``selfId``'s number + 1; 0 would become 1), the
store's role := SLAVE. ``changeToMaster(role)``: broker id := 0, role := ``role``. Both then
re-register with the name servers: the owner's ``on_change(role, broker_id)`` (a broker
passes its registration; the schedule and transaction services' switches are the
owner's too). A DLedger broker starts with broker id -1 (``BrokerStartup``).

A node's kill drops the queue (the executor dies with the JVM); its next start's elector
calls the handler again (``DLedgerServer.role_change_handlers``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from mqlab.dledger.member_state import Role
from mqlab.store.config import BrokerRole

if TYPE_CHECKING:
    from mqlab.store.default_message_store import DefaultMessageStore

__all__ = ["DLedgerRoleChangeHandler", "WAIT_MS"]

C = "DLedgerRoleChangeHandler.handle"
#: ``Thread.sleep(100)`` in the LEADER case
WAIT_MS = 100
TIMER = "DLedgerRoleChangeHandler"


class DLedgerRoleChangeHandler:
    """Mirrors ``DLedgerRoleChangeHandler`` (RocketMQ 4.9.3). See the module essay.

    Args:
        store: a ``DefaultMessageStore`` whose commit log is a ``DLedgerCommitLog``.
        on_change: called as ``on_change(broker_role, broker_id)`` after each change
            (the broker's ``registerBrokerAll``); None: nothing more.
    """

    def __init__(
        self,
        store: DefaultMessageStore,
        on_change: Callable[[BrokerRole, int], None] | None = None,
    ) -> None:
        from mqlab.store.dledger_commit_log import DLedgerCommitLog

        if not isinstance(store.commit_log, DLedgerCommitLog):
            raise ValueError("DLedgerRoleChangeHandler needs enableDLegerCommitLog=true")
        self.store = store
        self.commit_log = store.commit_log
        self.server = store.commit_log.dledger_server
        self.on_change = on_change
        #: ``brokerConfig.brokerId``: -1 until the first change (``BrokerStartup``).
        self.broker_id = -1
        self._tasks: deque[tuple[int, Role, int]] = deque()
        self._running = False
        self._epoch = self.server.epoch
        # a handler made again for the same node (a broker restart) replaces the old one
        handlers = self.server.role_change_handlers
        handlers[:] = [
            h
            for h in handlers
            if not isinstance(getattr(h, "__self__", None), DLedgerRoleChangeHandler)
        ]
        handlers.append(self.handle)
        elector = self.server.elector
        if elector is not None:  # already started: this elector too
            elector.role_change_handlers[:] = [
                h for h in elector.role_change_handlers
                if not isinstance(getattr(h, "__self__", None), DLedgerRoleChangeHandler)
            ]  # fmt: skip
            elector.add_role_change_handler(self.handle)

    @property
    def _ctx(self):
        return self.server.ctx

    def handle(self, term: int, role: Role) -> None:
        """``handle``: queue the task (the executor runs one at a time, in order)."""
        if self._epoch != self.server.epoch:  # a restart: the old executor is gone
            self._epoch = self.server.epoch
            self._tasks.clear()
            self._running = False
        self._tasks.append((term, role, self._ctx.now_ms))
        if not self._running:
            self._running = True
            self._ctx.set_timer(TIMER, 0, self._run)

    def _run(self) -> None:
        if not self._tasks:
            self._running = False
            return
        term, role, start = self._tasks[0]
        cfg = self.store.message_store_config
        if role is Role.CANDIDATE:  # step 1
            if cfg.broker_role != BrokerRole.SLAVE:
                self.change_to_slave(self.commit_log.id)
            self._done(term, role, True, start)
        elif role is Role.FOLLOWER:  # step 2
            self.change_to_slave(self.commit_log.id)
            self._done(term, role, True, start)
        elif role is Role.LEADER:  # step 3
            dstore = self.server.store
            if not self.server.member_state.is_leader():
                self._done(term, role, False, start)
            elif dstore.ledger_end_index == -1 or (
                dstore.ledger_end_index == dstore.committed_index
                and self.store.dispatch_behind_bytes() == 0
            ):
                self.store.recover_topic_queue_table()
                self.change_to_master(BrokerRole.SYNC_MASTER)
                self._done(term, role, True, start)
            else:
                self._ctx.set_timer(TIMER, WAIT_MS, self._run)  # Thread.sleep(100)
                return
        else:
            self._done(term, role, True, start)

    def _done(self, term: int, role: Role, succ: bool, start: int) -> None:
        self._tasks.popleft()
        tracer = self.store.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C, {Role.CANDIDATE: "1", Role.FOLLOWER: "2"}.get(role, "3"),
                        term=term, role=role.value, succ=succ,
                        broker_role=self.store.message_store_config.broker_role.value,
                        broker_id=self.broker_id, cost=self._ctx.now_ms - start)  # fmt: skip
        self._ctx.set_timer(TIMER, 0, self._run)

    def change_to_slave(self, broker_id: int) -> None:
        """``BrokerController#changeToSlave``: id (0 → 1), SLAVE, re-register."""
        self.broker_id = 1 if broker_id == 0 else broker_id
        self.store.message_store_config.broker_role = BrokerRole.SLAVE
        if self.on_change is not None:
            self.on_change(BrokerRole.SLAVE, self.broker_id)

    def change_to_master(self, role: BrokerRole) -> None:
        """``BrokerController#changeToMaster``: id 0, the role, re-register."""
        if role == BrokerRole.SLAVE:
            return
        self.broker_id = 0
        self.store.message_store_config.broker_role = role
        if self.on_change is not None:
            self.on_change(role, 0)
