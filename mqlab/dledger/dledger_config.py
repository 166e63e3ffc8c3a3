"""DLedger's configuration, with 0.2.3's defaults and property names.

Mirrors ``DLedgerConfig`` (DLedger 0.2.3). Fields are the Java fields in snake case
(``heart_beat_time_interval_ms`` for ``heartBeatTimeIntervalMs``); :data:`PROPERTY_KEYS`
maps each Java property name to its field, and :meth:`DLedgerConfig.from_properties` reads a
``key=value`` mapping with those names, as ``IOUtils#properties2Object`` would.

``peers`` is ``"n0-127.0.0.1:40911;n1-127.0.0.1:40912"``: ``id-address`` pairs separated by
``;``, the id ending at the first ``-`` (``MemberState``'s constructor). The RocketMQ broker
sets ``group``, ``selfId`` and ``peers`` from its own ``dLegerGroup``, ``dLegerSelfId`` and
``dLegerPeers`` (``DLedgerCommitLog``'s constructor, RocketMQ 4.9.3); that wiring belongs to
a later slice.

Left out here because nothing in the sans-IO core reads them yet: none (every field is kept
with its default), but the disk-cleaning and flush fields only matter once the log is on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = ["DLedgerConfig", "PROPERTY_KEYS", "MEMORY", "FILE", "parse_peers"]

MEMORY = "MEMORY"
FILE = "FILE"

#: ``DLedgerMmapFileStore.INDEX_UNIT_SIZE``: one index record is 32 bytes.
INDEX_UNIT_SIZE = 32


@dataclass(frozen=True)
class DLedgerConfig:
    """Mirrors ``DLedgerConfig`` (DLedger 0.2.3): every field with its 0.2.3 default."""

    group: str = "default"
    self_id: str = "n0"
    peers: str = "n0-localhost:20911"
    store_base_dir: str = "/tmp/dledgerstore"
    peer_push_throttle_point: int = 300 * 1024 * 1024
    peer_push_quota: int = 20 * 1024 * 1024
    store_type: str = FILE
    data_store_path: str | None = None
    max_pending_requests_num: int = 10000
    max_wait_ack_time_ms: int = 2500
    max_push_time_out_ms: int = 1000
    enable_leader_elector: bool = True
    heart_beat_time_interval_ms: int = 2000
    max_heart_beat_leak: int = 3
    min_vote_interval_ms: int = 300
    max_vote_interval_ms: int = 1000
    file_reserved_hours: int = 72
    delete_when: str = "04"
    disk_space_ratio_to_check_expired: float = 0.70
    disk_space_ratio_to_force_clean: float = 0.85
    enable_disk_force_clean: bool = True
    flush_file_interval: int = 10
    check_point_interval: int = 3000
    mapped_file_size_for_entry_data: int = 1024 * 1024 * 1024
    mapped_file_size_for_entry_index: int = INDEX_UNIT_SIZE * 5 * 1024 * 1024
    enable_push_to_follower: bool = True
    preferred_leader_ids: str | None = None
    max_leadership_transfer_wait_index: int = 1000
    min_take_leadership_vote_interval_ms: int = 30
    max_take_leadership_vote_interval_ms: int = 100
    is_enable_batch_push: bool = False
    max_batch_push_size: int = 4 * 1024

    def __post_init__(self) -> None:
        parse_peers(self.peers)  # a malformed peers string fails here, naming it
        if self.self_id not in parse_peers(self.peers):
            raise ValueError(f"selfId {self.self_id!r} is not among peers {self.peers!r}")
        if self.max_vote_interval_ms <= self.min_vote_interval_ms:
            # Random#nextInt(max - min) throws for a bound <= 0 (getNextTimeToRequestVote)
            raise ValueError(
                f"maxVoteIntervalMs ({self.max_vote_interval_ms}) must exceed "
                f"minVoteIntervalMs ({self.min_vote_interval_ms})"
            )

    def get_default_path(self) -> str:
        """``storeBaseDir/dledger-<selfId>`` (``DLedgerConfig#getDefaultPath``)."""
        return f"{self.store_base_dir}/dledger-{self.self_id}"

    def get_data_store_path(self) -> str:
        """``DLedgerConfig#getDataStorePath``."""
        return self.data_store_path or f"{self.get_default_path()}/data"

    def get_index_store_path(self) -> str:
        """``DLedgerConfig#getIndexStorePath``."""
        return f"{self.get_default_path()}/index"

    def peer_map(self) -> dict[str, str]:
        """``MemberState#getPeerMap``: id → address, in the order ``peers`` lists them."""
        return parse_peers(self.peers)

    def with_(self, **changes: Any) -> DLedgerConfig:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return replace(self, **changes)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> DLedgerConfig:
        """Build a config from Java property names (``selfId``, ``heartBeatTimeIntervalMs``).

        Raises:
            ValueError: an unknown key, or a value that does not parse as the field's type.
        """
        defaults = {f.name: f.default for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in props.items():
            name = PROPERTY_KEYS.get(key)
            if name is None:
                raise ValueError(f"unknown DLedgerConfig property {key!r}")
            values[name] = _convert(key, str(raw), defaults[name])
        return cls(**values)


def parse_peers(peers: str) -> dict[str, str]:
    """Split ``"n0-host:port;n1-host:port"`` as ``MemberState``'s constructor does.

    Raises:
        ValueError: an entry without ``-`` or with an empty id or address.
    """
    out: dict[str, str] = {}
    for info in peers.split(";"):
        peer_id, sep, addr = info.partition("-")
        if not sep or not peer_id or not addr:
            raise ValueError(f"peers entry {info!r} is not id-address (peers={peers!r})")
        out[peer_id] = addr
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


#: Java property name → field name. ``isEnableBatchPush``'s setter is ``setEnableBatchPush``,
#: so its property is ``enableBatchPush``.
PROPERTY_KEYS: dict[str, str] = {
    ("enableBatchPush" if f.name == "is_enable_batch_push" else _camel(f.name)): f.name
    for f in fields(DLedgerConfig)
}


def _convert(key: str, raw: str, default: Any) -> Any:
    value = raw.strip()
    if isinstance(default, bool):
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ValueError(f"DLedgerConfig property {key!r}: expected true/false, got {raw!r}")
    if isinstance(default, int):
        try:
            return int(value, 10)
        except ValueError:
            raise ValueError(
                f"DLedgerConfig property {key!r}: expected an integer, got {raw!r}"
            ) from None
    if isinstance(default, float):
        try:
            return float(value)
        except ValueError:
            raise ValueError(
                f"DLedgerConfig property {key!r}: expected a number, got {raw!r}"
            ) from None
    return raw
