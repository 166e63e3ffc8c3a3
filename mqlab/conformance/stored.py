"""Stored bytes: both stores' commit-log entries and consume-queue units, side by side.

Reads the files under ``<store>/commitlog`` and ``<store>/consumequeue/<topic>/<queueId>``
(mqlab's are written by its flush; the real broker's are memory-mapped, so a reader sees
every put at once) and decodes each entry with mqlab's own decoder
(``mqlab.common.message_decoder``, ``CommitLog#checkMessageAndReturnSize``). The
properties are compared as the raw stored string, so their ORDER counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqlab.common.message_decoder import (
    BLANK_MAGIC_CODE,
    MESSAGE_MAGIC_CODE,
    decode_stored_message,
    read_entry_header,
)
from mqlab.store.consume_queue import CQ_STORE_UNIT_SIZE, CQ_UNIT

__all__ = [
    "StoredEntry", "read_commit_log", "read_consume_queue", "entry_fields", "store_files",
]  # fmt: skip

#: Stored-entry fields in the 4.9.3 layout's order (``CommitLog.MessageExtEncoder``).
LAYOUT = (
    "totalSize", "magicCode", "bodyCRC", "queueId", "flag", "queueOffset",
    "physicalOffset", "sysFlag", "bornTimestamp", "bornHost", "storeTimestamp",
    "storeHost", "reconsumeTimes", "preparedTransactionOffset", "body", "topic",
    "properties",
)  # fmt: skip


@dataclass(slots=True)
class StoredEntry:
    fields: dict[str, Any]


def _files(d: Path) -> list[Path]:
    if not d.is_dir():
        return []
    return sorted((p for p in d.iterdir() if p.is_file() and p.name.isdigit()),
                  key=lambda p: int(p.name))  # fmt: skip


def entry_fields(buf: bytes, pos: int) -> dict[str, Any]:
    m = decode_stored_message(buf, pos, check_crc=True)
    raw_props = _raw_properties(buf, pos, m.store_size, len(m.topic.encode()))
    _, magic = read_entry_header(buf, pos)
    return {
        "totalSize": m.store_size, "magicCode": magic, "bodyCRC": m.body_crc,
        "queueId": m.queue_id, "flag": m.flag, "queueOffset": m.queue_offset,
        "physicalOffset": m.commit_log_offset, "sysFlag": m.sys_flag,
        "bornTimestamp": m.born_timestamp, "bornHost": m.born_host,
        "storeTimestamp": m.store_timestamp, "storeHost": m.store_host,
        "reconsumeTimes": m.reconsume_times,
        "preparedTransactionOffset": m.prepared_transaction_offset,
        "body": m.body, "topic": m.topic, "properties": raw_props,
    }  # fmt: skip


def _raw_properties(buf: bytes, pos: int, total: int, topic_len: int) -> str:
    # walk forward: fixed part (hosts are 8 or 20 bytes), BODYLEN + body, TOPICLEN + topic
    del total
    sys_flag = int.from_bytes(buf[pos + 36 : pos + 40], "big", signed=True)
    born_len = 20 if sys_flag & 0x10 else 8
    store_len = 20 if sys_flag & 0x20 else 8
    p = pos + 48 + born_len + 8 + store_len + 4 + 8
    body_len = int.from_bytes(buf[p : p + 4], "big", signed=True)
    p += 4 + body_len + 1 + topic_len
    props_len = int.from_bytes(buf[p : p + 2], "big", signed=True)
    return bytes(buf[p + 2 : p + 2 + props_len]).decode("utf-8", "replace")


def read_commit_log(store_dir: Path, topics: set[str] | None = None) -> list[dict[str, Any]]:
    """Every message entry of the commit log (all files, in order), optionally only
    those of ``topics``; stops at the first unwritten byte."""
    out: list[dict[str, Any]] = []
    for f in _files(store_dir / "commitlog"):
        buf = f.read_bytes()
        pos = 0
        while pos + 8 <= len(buf):
            total, magic = read_entry_header(buf, pos)
            if magic == BLANK_MAGIC_CODE or total <= 0 or magic != MESSAGE_MAGIC_CODE:
                break
            e = entry_fields(buf, pos)
            if topics is None or e["topic"] in topics:
                out.append(e)
            pos += total
    return out


def read_consume_queue(store_dir: Path, topic: str) -> dict[int, list[tuple[int, int, int]]]:
    """``{queueId: [(commitLogOffset, size, tagsCode), ...]}`` up to the first empty unit."""
    out: dict[int, list[tuple[int, int, int]]] = {}
    base = store_dir / "consumequeue" / topic
    if not base.is_dir():
        return out
    for qdir in sorted(base.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1):
        if not qdir.name.isdigit():
            continue
        units: list[tuple[int, int, int]] = []
        for f in _files(qdir):
            buf = f.read_bytes()
            for i in range(0, len(buf) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
                off, size, tags = CQ_UNIT.unpack_from(buf, i)
                if off == 0 and size == 0 and tags == 0:
                    break
                units.append((off, size, tags))
        out[int(qdir.name)] = units
    return out


def store_files(store_dir: Path, topics: tuple[str, ...]) -> dict[str, int]:
    """``{relative path: length}`` of the commit-log files and of ``topics``' consume-queue
    files (what a reader of the store directory sees)."""
    out: dict[str, int] = {}
    dirs = [store_dir / "commitlog"]
    for t in topics:
        base = store_dir / "consumequeue" / t
        if base.is_dir():
            dirs += sorted(p for p in base.iterdir() if p.is_dir())
    for d in dirs:
        for f in _files(d):
            out[f.relative_to(store_dir).as_posix()] = f.stat().st_size
    return out
