"""The name server's live settings: what GET_NAMESRV_CONFIG shows, UPDATE_NAMESRV_CONFIG edits.

Mirrors ``Configuration`` (common) and the listen-side ``NettyServerConfig``
(remoting/netty), RocketMQ 4.9.3; docs/reference.md §2.1 (codes 318/319). The ``MixAll`` properties
helpers it uses (``properties2String``, ``string2Properties``, ``object2Properties``,
``properties2Object``) are in ``mqlab.common.properties``.

What it owns: ``all_configs``, the merged ``key → value`` text of every registered config
object (``NamesrvController`` registers its ``NamesrvConfig`` and ``NettyServerConfig``).
Keys are the Java field names (``orderMessageEnable``), values their ``toString``; a
field whose value is null (None) is left out, as ``object2Properties`` does.

The text format is ``key=value\\n`` per entry, nothing escaped (``properties2String``);
updates are read with ``java.util.Properties#load`` rules, and Java feeds that loader the
UTF-8 bytes as ISO-8859-1, so a non-ASCII value comes back as mojibake ("é" → "Ã©").
An update changes only keys that exist (``mergeIfExist``) and fields that have a setter;
a value that does not parse (``Integer.parseInt``) is skipped silently by Java's
``properties2Object``, so the field and what GET shows keep the old value.

GET lists the entries in the order a JDK 17 ``Properties`` iterates them (its internal
``ConcurrentHashMap``, replayed by ``mqlab.common.java_hash_map.JavaProperties``), as the
broker's ``BrokerConfiguration`` does; the conformance row ``namesrv-config/get`` found
the sorted order mqlab wrote before.

Where mqlab differs from Java, on purpose:

* Java writes the whole text to ``configStorePath`` after every update, and its
  ``KVConfigManager`` persists to the current ``kvConfigPath``. 4.9.3 lets an update set
  both paths (later releases refuse these two keys: it was a remote file-write hole), so
  mqlab, which also serves real sockets, changes the fields (GET shows them) but writes
  no file from a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mqlab.common.java_hash_map import JavaProperties
from mqlab.common.properties import object_to_properties, properties_to_object

__all__ = ["Configuration", "NettyServerConfig"]


@dataclass(slots=True)
class NettyServerConfig:
    """The name server's listen-side settings. Mirrors ``NettyServerConfig`` (remoting/netty).

    Java defaults, with ``listenPort`` 9876 as ``NamesrvStartup`` sets it (the class says
    8888); ``NamesrvController`` takes the port from its address. The socket buffer,
    backlog and water-mark defaults are ``NettySystemConfig``'s (no -D overrides). mqlab's
    drivers read only ``server_channel_max_idle_time_seconds`` (the simulator's idle close,
    ``NamesrvController.channel_max_idle_ms``); the rest are here for
    GET/UPDATE_NAMESRV_CONFIG.
    """

    listen_port: int = 9876
    server_worker_threads: int = 8
    server_callback_executor_threads: int = 0
    server_selector_threads: int = 3
    server_oneway_semaphore_value: int = 256
    server_async_semaphore_value: int = 64
    server_channel_max_idle_time_seconds: int = 120
    server_socket_snd_buf_size: int = 0
    server_socket_rcv_buf_size: int = 0
    write_buffer_high_water_mark: int = 0
    write_buffer_low_water_mark: int = 0
    server_socket_backlog: int = 1024
    server_pooled_byte_buf_allocator_enable: bool = True
    use_epoll_native_selector: bool = False


class Configuration:
    """Registered config objects plus ``all_configs``, their merged text.

    Mirrors ``Configuration`` (common, RocketMQ 4.9.3), without the store path and the
    persist step (see the module notes).

    Args:
        *config_objects: config dataclasses, registered in this order.
    """

    def __init__(self, *config_objects: Any) -> None:
        self.config_objects: list[Any] = []
        self.all_configs = JavaProperties()
        for obj in config_objects:
            self.register_config(obj)

    def register_config(self, obj: Any) -> None:
        """Add an object and merge its fields into ``all_configs``. Mirrors ``#registerConfig``."""
        self._merge(obj)
        self.config_objects.append(obj)

    def _merge(self, obj: Any) -> None:
        """``Configuration#merge(MixAll.object2Properties(obj), allConfigs)``: the object's
        non-null fields go into a ``Properties`` in declaration order, then into
        ``allConfigs`` in that ``Properties``' iteration order."""
        props = JavaProperties()
        for key, value in object_to_properties(obj).items():
            props.put(key, value)
        for key, value in props.items():
            self.all_configs.put(key, value)

    def update(self, properties: Mapping[str, str]) -> None:
        """UPDATE_NAMESRV_CONFIG. Mirrors ``Configuration#update``: ``all_configs`` takes
        only keys it already has (``mergeIfExist``); every object takes every key it has a
        field for (``properties2Object``), even one whose value was null so far."""
        for key, value in properties.items():
            if key in self.all_configs:
                self.all_configs.put(key, value)
        for obj in self.config_objects:
            properties_to_object(properties, obj)

    def get_all_configs_format_string(self) -> str:
        """GET_NAMESRV_CONFIG's text. Mirrors ``#getAllConfigsFormatString``: the objects'
        current fields are merged in first, so a skipped (unparsable) update shows the
        field's real value again."""
        for obj in self.config_objects:
            self._merge(obj)
        return "".join(f"{k}={v}\n" for k, v in self.all_configs.items())
