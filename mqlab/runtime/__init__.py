"""Drivers that run the sans-IO core: the simulation driver (and the network driver)."""

from mqlab.runtime.context import Channel, Node, NodeContext
from mqlab.runtime.scheduler import PendingTimer, Scheduler
from mqlab.runtime.sim import LinkConfig, SimDriver

__all__ = [
    "Channel", "LinkConfig", "NetDriver", "Node", "NodeContext", "PendingTimer", "Scheduler",
    "SimDriver",
]  # fmt: skip


def __getattr__(name: str):
    if name == "NetDriver":  # asyncio is only imported when the network driver is used
        from mqlab.runtime.net import NetDriver

        return NetDriver
    raise AttributeError(f"module 'mqlab.runtime' has no attribute {name!r}")
