"""The broker's consumer-group table: pre-created groups, auto-creation, subscriptionGroup.json.

Mirrors ``SubscriptionGroupManager`` (broker/subscription, RocketMQ 4.9.3); mechanisms.md "Pull processing"
step 2 (``findSubscriptionGroupConfig`` on every pull) and step 3 (``consumeEnable``);
docs/reference.md §7.3 (pre-created groups), §7.4 (subscriptionGroup.json), §8.3 (defaults and the
auto-create rule).

What this module owns: ``subscription_group_table`` (group → SubscriptionGroupConfig),
its ``data_version`` and ``<config_dir>/subscriptionGroup.json``. What it must not know:
which clients are connected (that is the consumer manager) or what the processors do
with ``consume_enable`` / ``retry_max_times``. A lookup of an unknown group creates it
with the defaults when the broker allows it; this happens on heartbeats, pulls, send-backs
and sends to ``%RETRY%`` topics alike. Groups are written sorted by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mqlab.broker.config import BrokerConfig, ConfigManager, SubscriptionGroupConfig
from mqlab.common.mix_all import (
    CID_ONSAPI_OWNER_GROUP,
    CID_ONSAPI_PERMISSION_GROUP,
    CID_ONSAPI_PULL_GROUP,
    FILTERSRV_CONSUMER_GROUP,
    ONS_HTTP_PROXY_GROUP,
    SELF_TEST_CONSUMER_GROUP,
    TOOLS_CONSUMER_GROUP,
    is_sys_consumer_group,
)
from mqlab.common.topic_config import DataVersion
from mqlab.remoting import fastjson
from mqlab.trace.events import Kind

__all__ = ["SubscriptionGroupManager", "PRE_CREATED_GROUPS", "SUBSCRIPTION_GROUP_JSON"]

#: Groups ``SubscriptionGroupManager#init`` puts in the table, in Java's order (docs/reference.md §7.3).
PRE_CREATED_GROUPS: tuple[str, ...] = (
    TOOLS_CONSUMER_GROUP,
    FILTERSRV_CONSUMER_GROUP,
    SELF_TEST_CONSUMER_GROUP,
    ONS_HTTP_PROXY_GROUP,
    CID_ONSAPI_PULL_GROUP,
    CID_ONSAPI_PERMISSION_GROUP,
    CID_ONSAPI_OWNER_GROUP,
)
#: File name under the broker's config directory.
SUBSCRIPTION_GROUP_JSON = "subscriptionGroup.json"

_COMPONENT = "SubscriptionGroupManager"


class SubscriptionGroupManager(ConfigManager):
    """Consumer-group settings of one broker.

    Attributes:
        subscription_group_table: group name → config, in creation order.
        data_version: bumped on every change.
    """

    __slots__ = (
        "broker_config",
        "config_dir",
        "subscription_group_table",
        "data_version",
        "_tracer",
    )

    def __init__(
        self,
        broker_config: BrokerConfig,
        config_dir: Path | None,
        *,
        tracer: Any = None,
        now_ms: int = 0,
    ) -> None:
        """Pre-create the built-in groups with default settings.

        Mirrors ``SubscriptionGroupManager#init`` (broker/subscription, RocketMQ 4.9.3);
        docs/reference.md §7.3. (Java sets ``consumeBroadcastEnable`` on the ONS groups, which is
        already the default.)
        """
        self.broker_config = broker_config
        self.config_dir = config_dir
        self.data_version = DataVersion(timestamp=now_ms)
        self._tracer = tracer
        self.subscription_group_table: dict[str, SubscriptionGroupConfig] = {
            g: SubscriptionGroupConfig(group_name=g) for g in PRE_CREATED_GROUPS
        }

    def find_subscription_group_config(
        self, group: str, now_ms: int = 0
    ) -> SubscriptionGroupConfig | None:
        """The group's config; an unknown group is auto-created when allowed.

        Mirrors ``SubscriptionGroupManager#findSubscriptionGroupConfig`` (broker/
        subscription, RocketMQ 4.9.3); mechanisms.md "Pull processing" step 2; docs/reference.md §8.3: created with the
        defaults when ``autoCreateSubscriptionGroup`` is on or the group starts with
        ``CID_RMQ_SYS_``; then the data version is bumped and the file persisted.

        Returns:
            The config, or ``None`` (the caller answers SUBSCRIPTION_GROUP_NOT_EXIST).
        """
        config = self.subscription_group_table.get(group)
        if config is not None:
            return config
        if not (self.broker_config.auto_create_subscription_group or is_sys_consumer_group(group)):
            return None
        config = SubscriptionGroupConfig(group_name=group)
        self.subscription_group_table[group] = config
        self.data_version.next_version(now_ms)
        self.persist()
        self._emit(
            "findSubscriptionGroupConfig",
            "autoCreate",
            group=group,
            data_version=self.data_version.counter,
        )
        return config

    def update_subscription_group_config(
        self, config: SubscriptionGroupConfig, now_ms: int = 0
    ) -> None:
        """Create or replace a group (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP), bump, persist.

        Mirrors ``SubscriptionGroupManager#updateSubscriptionGroupConfig``.

        Raises:
            ValueError: ``config.group_name`` is ``None`` or empty.
        """
        if not config.group_name:
            raise ValueError(f"config.group_name must be set, got {config.group_name!r}")
        created = config.group_name not in self.subscription_group_table
        self.subscription_group_table[config.group_name] = config
        self.data_version.next_version(now_ms)
        self.persist()
        self._emit(
            "updateSubscriptionGroupConfig",
            "update",
            group=config.group_name,
            created=created,
            data_version=self.data_version.counter,
        )

    def disable_consume(self, group_name: str, now_ms: int = 0) -> None:
        """Set ``consume_enable`` false and bump the version (no persist, as in Java).

        Mirrors ``SubscriptionGroupManager#disableConsume``.
        """
        config = self.subscription_group_table.get(group_name)
        if config is None:
            return
        config.consume_enable = False
        self.data_version.next_version(now_ms)
        self._emit(
            "disableConsume", "disable", group=group_name, data_version=self.data_version.counter
        )

    def delete_subscription_group_config(self, group_name: str, now_ms: int = 0) -> bool:
        """Remove a group; bump and persist if it existed.

        Mirrors ``SubscriptionGroupManager#deleteSubscriptionGroupConfig``.
        """
        if self.subscription_group_table.pop(group_name, None) is None:
            return False
        self.data_version.next_version(now_ms)
        self.persist()
        self._emit(
            "deleteSubscriptionGroupConfig",
            "delete",
            group=group_name,
            data_version=self.data_version.counter,
        )
        return True

    # -- serialisation -----------------------------------------------------------------------

    def to_json_dict(self) -> dict[str, Any]:
        """``{"dataVersion":…,"subscriptionGroupTable":{group: config}}``, groups sorted;
        docs/reference.md §7.4."""
        return {
            "dataVersion": self.data_version.to_json_dict(),
            "subscriptionGroupTable": {
                g: self.subscription_group_table[g].to_json_dict()
                for g in sorted(self.subscription_group_table)
            },
        }

    def encode(self, pretty_format: bool = False) -> str:
        """Mirrors ``SubscriptionGroupManager#encode(boolean)``."""
        return fastjson.dumps(self.to_json_dict(), pretty=pretty_format)

    def decode(self, json_string: str) -> None:
        """Merge a subscriptionGroup.json into the table and adopt its data version.

        Mirrors ``SubscriptionGroupManager#decode``.

        Raises:
            ValueError: the text is not a SubscriptionGroupManager object.
        """
        loaded, version = self.decode_versioned_table(
            json_string, "subscriptionGroupTable", SubscriptionGroupConfig.from_json_dict,
            "subscriptionGroup.json",
        )  # fmt: skip
        self.subscription_group_table.update(loaded)
        self.data_version.assign_new_one(version)

    def config_file_path(self) -> Path | None:
        """``<config_dir>/subscriptionGroup.json``."""
        return None if self.config_dir is None else self.config_dir / SUBSCRIPTION_GROUP_JSON

    def _emit(self, method: str, step: str, **fields: Any) -> None:
        if self._tracer is not None and self._tracer.enabled:
            self._tracer.emit(f"{_COMPONENT}.{method}", step, Kind.STATE, **fields)
