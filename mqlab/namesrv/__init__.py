"""mqlab.namesrv: the name server (route tables, KV config, request dispatch)."""

from mqlab.namesrv.configuration import Configuration, NettyServerConfig
from mqlab.namesrv.kv_config_manager import KVConfigManager
from mqlab.namesrv.namesrv_controller import NamesrvConfig, NamesrvController
from mqlab.namesrv.route_info_manager import RouteInfoManager

__all__ = [
    "Configuration",
    "KVConfigManager",
    "NamesrvConfig",
    "NamesrvController",
    "NettyServerConfig",
    "RouteInfoManager",
]
