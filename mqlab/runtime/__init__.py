"""Drivers that run the sans-IO core: the simulation driver (and the network driver)."""

from mqlab.runtime.context import Channel, Node, NodeContext
from mqlab.runtime.scheduler import PendingTimer, Scheduler
from mqlab.runtime.sim import LinkConfig, SimDriver

__all__ = ["Channel", "LinkConfig", "Node", "NodeContext", "PendingTimer", "Scheduler", "SimDriver"]
