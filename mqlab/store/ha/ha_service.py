"""The store's HA service: the master's accept side, its connections, and the slave's client.

Mirrors ``HAService`` with its ``AcceptSocketService`` (store, RocketMQ 4.9.3);
mechanisms.md "HA replication" steps 2, 5 and 12 (``isSlaveOK``).

Every store has one, whatever its role, as in 4.9.3 (``DefaultMessageStore`` builds it
unless DLedger is on): a master accepts slaves on ``haListenPort`` and answers
``isSlaveOK``; a slave's ``HAClient`` connects to the address its registration gave it.

What it owns: the connections (``connection_list``; ``connection_count`` counts them as
Java's ``AtomicInteger`` does, up in ``HAConnection``'s constructor, down when it ends),
``push2SlaveMaxOffset`` (the highest offset any slave has *reported*: it never goes
down, and it is whatever a connection said, apache/rocketmq#3015), the
``GroupTransferService`` and the ``HAClient``.

The store sees no time and owns no timer (``default_message_store``); the HA service is
the exception, as in Java it is the store's own set of threads: the broker hands it the
node's context when it starts the store (``start(ctx, listen_addr)``), and it reaches
the network only through that context's byte streams (``listen_stream``,
``open_stream``, ``send_bytes``, ``close_stream``; mqlab/runtime/context.py). A store
that was never started (a bare store in a test) has no connection, so a SYNC_MASTER put
answers SLAVE_NOT_AVAILABLE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqlab.store.ha.group_transfer_service import GroupCommitRequest, GroupTransferService
from mqlab.store.ha.ha_client import HAClient
from mqlab.store.ha.ha_connection import HAConnection

if TYPE_CHECKING:
    from mqlab.runtime.context import NodeContext, StreamChannel
    from mqlab.store.default_message_store import DefaultMessageStore

__all__ = ["HAService"]

C_ACCEPT = "HAService.AcceptSocketService"
C = "HAService"


class HAService:
    """Mirrors ``HAService`` (store, RocketMQ 4.9.3). See the module essay."""

    def __init__(self, store: DefaultMessageStore) -> None:
        self.store = store
        self.config = store.message_store_config
        self.ctx: NodeContext | None = None
        self.listen_addr: str | None = None
        self.connection_count = 0
        self.connection_list: list[HAConnection] = []
        self.push2_slave_max_offset = 0
        self.group_transfer_service = GroupTransferService(self)
        self.ha_client = HAClient(self)

    @property
    def tracer(self) -> Any:
        return self.store.tracer

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, ctx: NodeContext, listen_addr: str) -> None:
        """Listen for slaves on ``listen_addr`` and start the client. Mirrors ``HAService#start``.

        Raises:
            ValueError: the service was already started.
        """
        if self.ctx is not None:
            raise ValueError("HAService.start: already started")
        self.ctx = ctx
        self.listen_addr = listen_addr
        ctx.listen_stream(listen_addr, self.accept)  # AcceptSocketService#beginAccept
        self.ha_client.start()

    def shutdown(self) -> None:
        """Mirrors ``HAService#shutdown``: the client, the accept service, every connection."""
        if self.ctx is None:
            return
        self.ha_client.shutdown()
        if self.listen_addr is not None:
            self.ctx.stop_listening(self.listen_addr)
        self.destroy_connections()

    def destroy_connections(self) -> None:
        """Mirrors ``HAService#destroyConnections``."""
        for conn in list(self.connection_list):
            conn.close("shutdown")
        self.connection_list.clear()

    # -- AcceptSocketService ---------------------------------------------------------------------
    def accept(self, channel: StreamChannel) -> None:
        """A slave connected. Mirrors ``AcceptSocketService#run``; step 2."""
        # step 2: a new HAConnection (connectionCount + 1), its two services started
        conn = HAConnection(self, channel)
        conn.start()
        self.add_connection(conn)
        tracer = self.tracer
        if tracer is not None and tracer.enabled:
            tracer.emit(C_ACCEPT, "2", slave=channel.remote_address,
                        connection_count=self.connection_count,
                        text=f"HA connection from {channel.remote_address}")  # fmt: skip

    def add_connection(self, conn: HAConnection) -> None:
        self.connection_list.append(conn)

    def remove_connection(self, conn: HAConnection) -> None:
        if conn in self.connection_list:
            self.connection_list.remove(conn)

    # -- the master's view of its slaves ----------------------------------------------------------
    def is_slave_ok(self, master_put_where: int) -> bool:
        """A connection exists and the slaves are less than ``haSlaveFallbehindMax`` behind.

        Mirrors ``HAService#isSlaveOK``; step 12.
        """
        # step 12: a connection, and the slaves less than haSlaveFallbehindMax behind
        return (
            self.connection_count > 0
            and master_put_where - self.push2_slave_max_offset < self.config.ha_slave_fallbehind_max
        )

    def notify_transfer_some(self, offset: int) -> None:
        """Raise ``push2SlaveMaxOffset`` and wake the waiting puts. Mirrors
        ``HAService#notifyTransferSome``; step 5."""
        if offset > self.push2_slave_max_offset:
            self.push2_slave_max_offset = offset
            tracer = self.tracer
            if tracer is not None and tracer.enabled:
                tracer.emit(C + ".notifyTransferSome", "5", push2_slave_max_offset=offset,
                            text=f"push2SlaveMaxOffset := {offset}")  # fmt: skip
            self.group_transfer_service.notify_transfer_some()

    def put_request(self, request: GroupCommitRequest) -> None:
        """Mirrors ``HAService#putRequest``."""
        self.group_transfer_service.put_request(request)

    def wakeup_all(self) -> None:
        """``getWaitNotifyObject().wakeupAll()``: every write service looks for data now."""
        for conn in self.connection_list:
            conn.wakeup()

    def notify_appended(self) -> None:
        """The commit log grew (no wakeup): each write service finds it at its next poll."""
        for conn in self.connection_list:
            conn.notify_appended()

    # -- the slave's side --------------------------------------------------------------------------
    def update_master_address(self, new_addr: str | None) -> None:
        """Mirrors ``HAService#updateMasterAddress``."""
        self.ha_client.update_master_address(new_addr)
