"""The name server's namespaced key/value store.

Mirrors ``KVConfigManager`` (namesrv/kvconfig, RocketMQ 4.9.3) and the ``KVTable`` /
``KVConfigSerializeWrapper`` bodies it writes; docs/reference.md §2.1 (codes 100–102, 219) and §11
(``DefaultRequestProcessorTest``: a missing key answers QUERY_NOT_FOUND "No config
item, Namespace: namespace Key: key").

What it owns: ``config_table`` (namespace → key → value). The one namespace RocketMQ
itself uses is ``ORDER_TOPIC_CONFIG`` (``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``):
topic → ``"brokerName:queueNums;…"``; a REGISTER_BROKER reply carries that namespace as a
KVTable, and GET_ROUTEINFO_BY_TOPIC copies it into ``orderTopicConf`` when
``orderMessageEnable`` is on.

What it must not know: requests, clocks, channels. Java persists every change to
``~/namesrv/kvConfig.json``; mqlab persists only when a path is given (a simulation
keeps the table in memory). Tables are written with keys sorted, where Java's HashMap
order is arbitrary.
"""

from __future__ import annotations

from typing import Any

from mqlab.common.mix_all_files import file2string, string2file
from mqlab.remoting.fastjson import dumps, loads
from mqlab.trace.events import Kind

__all__ = ["KVConfigManager", "NAMESPACE_ORDER_TOPIC_CONFIG", "encode_kv_table"]

#: ``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``.
NAMESPACE_ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"


def encode_kv_table(table: dict[str, str]) -> bytes:
    """``KVTable#encode``: ``{"table":{"k":"v",…}}`` (keys sorted), UTF-8.

    fastjson leaves out map entries whose value is null, so a ``None`` value is skipped.
    """
    items = {k: table[k] for k in sorted(table) if table[k] is not None}
    return dumps({"table": items}).encode("utf-8")


class KVConfigManager:
    """Namespace → key → value, optionally persisted as ``{"configTable":{…}}``.

    Mirrors ``KVConfigManager`` (namesrv/kvconfig, RocketMQ 4.9.3).

    Args:
        kv_config_path: the JSON file to load from and persist to (``kvConfigPath``);
            ``None`` keeps the table in memory only.
        tracer: a ``NodeTracer`` (or None): put and delete emit one event each.
    """

    def __init__(self, kv_config_path: str | None = None, tracer: Any = None) -> None:
        self.kv_config_path = kv_config_path
        self.tracer = tracer
        self.config_table: dict[str, dict[str, str]] = {}

    def _emit(self, method: str, **fields: Any) -> None:
        if self.tracer is not None and self.tracer.enabled:
            self.tracer.emit(f"KVConfigManager.{method}", method, Kind.STEP, **fields)

    def load(self) -> None:
        """Read ``kv_config_path`` if it exists. Mirrors ``KVConfigManager#load``.

        Raises:
            ValueError: the file is not a KVConfigSerializeWrapper JSON text.
        """
        if self.kv_config_path is None:
            return
        content = file2string(self.kv_config_path)
        if not content:
            return
        wrapper = loads(content)
        if not isinstance(wrapper, dict):
            raise ValueError(f"{self.kv_config_path}: expected a JSON object")
        for namespace, table in (wrapper.get("configTable") or {}).items():
            self.config_table[str(namespace)] = {str(k): str(v) for k, v in table.items()}

    def persist(self) -> None:
        """Write the table (``KVConfigSerializeWrapper`` JSON) if a path is set.

        Mirrors ``KVConfigManager#persist`` (``MixAll#string2File``: temp file, previous
        content to ``.bak``, rename).
        """
        if self.kv_config_path is None:
            return
        string2file(dumps({"configTable": self.snapshot()}), self.kv_config_path)

    def put_kv_config(self, namespace: str, key: str, value: str | None) -> None:
        """Create or overwrite one item, then persist. Mirrors ``#putKVConfig``."""
        kv_table = self.config_table.setdefault(namespace, {})
        prev = kv_table.get(key)
        kv_table[key] = value  # type: ignore[assignment]  # Java keeps a null value too
        self._emit(
            "putKVConfig", namespace=namespace, key=key, value=value, update=prev is not None
        )
        self.persist()

    def delete_kv_config(self, namespace: str, key: str) -> None:
        """Remove one item (the namespace stays, even when empty). Mirrors ``#deleteKVConfig``."""
        kv_table = self.config_table.get(namespace)
        if kv_table is not None:
            value = kv_table.pop(key, None)
            self._emit("deleteKVConfig", namespace=namespace, key=key, value=value)
        self.persist()

    def get_kv_config(self, namespace: str, key: str) -> str | None:
        """One value, or None. Mirrors ``#getKVConfig``."""
        kv_table = self.config_table.get(namespace)
        return None if kv_table is None else kv_table.get(key)

    def get_kv_list_by_namespace(self, namespace: str) -> bytes | None:
        """The namespace as a KVTable body, or None when the namespace was never created.

        Mirrors ``#getKVListByNamespace``.
        """
        kv_table = self.config_table.get(namespace)
        return None if kv_table is None else encode_kv_table(kv_table)

    def snapshot(self) -> dict[str, dict[str, str]]:
        """A sorted deep copy of ``config_table`` (for the Lab and for persisting)."""
        return {
            ns: {k: self.config_table[ns][k] for k in sorted(self.config_table[ns])}
            for ns in sorted(self.config_table)
        }
