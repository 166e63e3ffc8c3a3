"""The filter servers registered with this broker, and the list the broker registers them under.

Mirrors ``FilterServerManager`` (broker/filtersrv, RocketMQ 4.9.3). A filter server (the
class-filter process of RocketMQ 3.x/4.x, ``mqfiltersrv``) announces itself with
REGISTER_FILTER_SERVER (301) on its connection to the broker, and again to stay alive.
The broker keeps one entry per channel, names every registered address in each
REGISTER_BROKER body's ``filterServerList`` (``buildNewFilterServerList``), and the name
server then shows them in the ``filterServerTable`` of the broker's topic routes.

Housekeeping, as in Java: an entry not renewed for ``FILTER_SERVER_MAX_IDLE_TIME_MILLS``
(30 s) is dropped and its channel closed (``scanNotActiveChannel``, run every 10 s by
``ClientHousekeepingService``); a closed channel drops its entry (``doChannelCloseEvent``).
A renewal only refreshes the timestamp: the address first registered on a channel stays.

Left out: ``createFilterServer`` (every 30 s, start ``filterServerNums`` filter-server
processes with ``sh $ROCKETMQ_HOME/bin/startfsrv.sh``): mqlab starts no processes, and
``filterServerNums`` is 0 by default, so Java starts none either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mqlab.runtime.context import Channel
from mqlab.trace.events import Kind

__all__ = ["FilterServerManager", "FilterServerInfo", "FILTER_SERVER_MAX_IDLE_TIME_MILLS"]

#: ``FilterServerManager.FILTER_SERVER_MAX_IDLE_TIME_MILLS``.
FILTER_SERVER_MAX_IDLE_TIME_MILLS = 30_000

_C = "FilterServerManager"


@dataclass(slots=True)
class FilterServerInfo:
    """``FilterServerManager.FilterServerInfo``: the address and the last registration."""

    filter_server_addr: str
    last_update_timestamp: int


class FilterServerManager:
    """channel → :class:`FilterServerInfo`, in registration order."""

    __slots__ = ("filter_server_table", "_tracer")

    def __init__(self, *, tracer: Any = None) -> None:
        self.filter_server_table: dict[Channel, FilterServerInfo] = {}
        self._tracer = tracer

    def register_filter_server(
        self, channel: Channel, filter_server_addr: str, now_ms: int
    ) -> None:
        """Add the channel's filter server, or refresh its timestamp (the address stays).

        Mirrors ``FilterServerManager#registerFilterServer``.
        """
        info = self.filter_server_table.get(channel)
        if info is not None:
            info.last_update_timestamp = now_ms
            self._emit("registerFilterServer", "renew", addr=info.filter_server_addr)
            return
        self.filter_server_table[channel] = FilterServerInfo(filter_server_addr, now_ms)
        self._emit(
            "registerFilterServer", "new", addr=filter_server_addr,
            text=f"Receive a New Filter Server<{filter_server_addr}>",
        )  # fmt: skip

    def scan_not_active_channel(self, now_ms: int) -> list[Channel]:
        """Drop entries idle for more than 30 s; returns their channels (the caller closes them).

        Mirrors ``FilterServerManager#scanNotActiveChannel``.
        """
        expired = [
            ch
            for ch, info in self.filter_server_table.items()
            if now_ms - info.last_update_timestamp > FILTER_SERVER_MAX_IDLE_TIME_MILLS
        ]
        for ch in expired:
            info = self.filter_server_table.pop(ch)
            self._emit("scanNotActiveChannel", "expire", addr=info.filter_server_addr)
        return expired

    def do_channel_close_event(self, remote_addr: str, channel: Channel) -> None:
        """Mirrors ``FilterServerManager#doChannelCloseEvent``."""
        info = self.filter_server_table.pop(channel, None)
        if info is not None:
            self._emit("doChannelCloseEvent", "remove", addr=info.filter_server_addr)

    def build_new_filter_server_list(self) -> list[str]:
        """Every registered address (REGISTER_BROKER's ``filterServerList``).

        Mirrors ``FilterServerManager#buildNewFilterServerList``.
        """
        return [info.filter_server_addr for info in self.filter_server_table.values()]

    def _emit(self, method: str, step: str, **fields: Any) -> None:
        if self._tracer is not None and self._tracer.enabled:
            self._tracer.emit(f"{_C}.{method}", step, Kind.STATE, **fields)
