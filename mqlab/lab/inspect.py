"""Inspectors: the state of a running lab as tidy pandas frames.

Each function takes the lab's nodes and returns a ``pandas.DataFrame`` with one row per
thing (topic, queue, consume-queue unit, commit-log entry, parked pull, offset, timer),
so a notebook can show it, filter it and plot it. Nothing here changes state.

Columns use snake_case names of the RocketMQ fields they show (``read_queue_nums``,
``commit_log_offset``, ``pull_from_this_offset``) so a learner can find them in RocketMQ's source.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mqlab.common.message_decoder import MessageDecodeError, decode_stored_message
from mqlab.common.perm_name import PermName

if TYPE_CHECKING:
    import pandas as pd

    from mqlab.broker.broker_controller import BrokerController
    from mqlab.runtime.sim import SimDriver

__all__ = [
    "topics",
    "queues",
    "consume_queue",
    "commit_log",
    "held_pulls",
    "consumer_offsets",
    "timers",
    "commit_log_fields",
    "index_files",
    "index_entries",
]


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


def topics(brokers: Iterable[BrokerController], *, include_system: bool = False) -> pd.DataFrame:
    """One row per (broker, topic): queue numbers, perm ("RW-"), filter type, order."""
    rows = []
    for b in brokers:
        tcm = b.topic_config_manager
        system = set(tcm.system_topic_set) if hasattr(tcm, "system_topic_set") else set()
        for name, tc in sorted(tcm.topic_config_table.items()):
            is_system = name in system or name == "TBW102"
            if is_system and not include_system:
                continue
            rows.append(
                {
                    "broker": b.name,
                    "topic": name,
                    "read_queue_nums": tc.read_queue_nums,
                    "write_queue_nums": tc.write_queue_nums,
                    "perm": tc.perm,
                    "perm_str": PermName.perm2string(tc.perm),
                    "topic_filter_type": str(tc.topic_filter_type),
                    "order": tc.order,
                    "system": is_system,
                }
            )
    cols = ["broker", "topic", "read_queue_nums", "write_queue_nums", "perm", "perm_str",
            "topic_filter_type", "order", "system"]  # fmt: skip
    return _frame(rows, cols)


def queues(brokers: Iterable[BrokerController], topic: str | None = None) -> pd.DataFrame:
    """One row per (broker, topic, queue id): min and max logical offsets."""
    rows = []
    for b in brokers:
        store = b.message_store
        table = b.topic_config_manager.topic_config_table
        names = [topic] if topic is not None else sorted(store.consume_queue_table)
        for t in names:
            tc = table.get(t)
            n = tc.read_queue_nums if tc is not None else 0
            qids = sorted(set(range(n)) | set(store.consume_queue_table.get(t, {})))
            for q in qids:
                rows.append(
                    {
                        "broker": b.name,
                        "topic": t,
                        "queue_id": q,
                        "min_offset": store.get_min_offset_in_queue(t, q),
                        "max_offset": store.get_max_offset_in_queue(t, q),
                    }
                )
    return _frame(rows, ["broker", "topic", "queue_id", "min_offset", "max_offset"])


def consume_queue(broker: BrokerController, topic: str, queue_id: int) -> pd.DataFrame:
    """The 20-byte units of one consume queue: logical offset → (commit-log offset, size, tags code)."""
    rows = [
        {"queue_offset": lo, "commit_log_offset": phy, "size": size, "tags_code": tags}
        for lo, phy, size, tags in broker.message_store.iter_consume_queue_units(topic, queue_id)
    ]
    return _frame(rows, ["queue_offset", "commit_log_offset", "size", "tags_code"])


def commit_log(
    broker: BrokerController, *, raw: bool = False, limit: int | None = None
) -> pd.DataFrame:
    """Commit-log entries in order, decoded; ``raw=True`` adds the stored bytes."""
    rows = []
    for n, (offset, size, data) in enumerate(broker.message_store.iter_commit_log_entries()):
        if limit is not None and n >= limit:
            break
        try:
            m = decode_stored_message(data)
            row = {
                "commit_log_offset": offset,
                "size": size,
                "topic": m.topic,
                "queue_id": m.queue_id,
                "queue_offset": m.queue_offset,
                "store_timestamp": m.store_timestamp,
                "reconsume_times": m.reconsume_times,
                "sys_flag": m.sys_flag,
                "tags": m.properties.get("TAGS"),
                "properties": dict(m.properties),
                "body": m.body[:64],
                "msg_id": m.msg_id,
            }
        except MessageDecodeError as e:
            row = {"commit_log_offset": offset, "size": size, "topic": f"<{e}>"}
        if raw:
            row["raw"] = data
        rows.append(row)
    cols = ["commit_log_offset", "size", "topic", "queue_id", "queue_offset", "store_timestamp",
            "reconsume_times", "sys_flag", "tags", "properties", "body", "msg_id"]  # fmt: skip
    return _frame(rows, cols + (["raw"] if raw else []))


def commit_logs_side_by_side(group: list[BrokerController]) -> pd.DataFrame:
    """The commit logs of one broker name's nodes side by side, the master's entries as rows.

    One column per node (named after it) says what that node's commit log holds at the entry's
    offset: True the same bytes, False other bytes, None nothing (not replicated yet, or the
    store is gone). ``attrs["max_offsets"]``: each node's commit-log end
    (``getMaxPhyOffset``); ``attrs["replicated_offset"]``: the least end among the slaves,
    up to which every slave holds the master's bytes (None without a slave);
    ``attrs["push2_slave_max_offset"]``: what the master believes its slaves hold, the
    largest offset any HA connection reported (``HAService#push2SlaveMaxOffset``; it trusts
    every report, mechanisms.md "HA replication"). A node whose machine was lost for good
    (``Lab.lose``: its store directory is gone) holds nothing: its column is None, its end
    0, and ``attrs["stores_gone"]`` names it.
    """
    master, slaves = group[0], group[1:]
    gone = [b.name for b in group if b.message_store is None or not b.store_dir.exists()]
    rows = []
    entries = [] if master.name in gone else master.message_store.iter_commit_log_entries()
    for offset, size, data in entries:
        try:
            m = decode_stored_message(data)
            row = {"commit_log_offset": offset, "size": size, "topic": m.topic,
                   "queue_id": m.queue_id, "queue_offset": m.queue_offset}  # fmt: skip
        except MessageDecodeError as e:
            row = {"commit_log_offset": offset, "size": size, "topic": f"<{e}>"}
        row[master.name] = True
        for s in slaves:
            held = None if s.name in gone else s.message_store.commit_log.get_message(offset, size)
            row[s.name] = None if held is None else bytes(held) == data
        rows.append(row)
    cols = ["commit_log_offset", "size", "topic", "queue_id", "queue_offset"]
    df = _frame(rows, cols + [b.name for b in group])
    ends = {b.name: 0 if b.name in gone else b.message_store.get_max_phy_offset() for b in group}
    df.attrs["max_offsets"] = ends
    df.attrs["replicated_offset"] = min((ends[s.name] for s in slaves), default=None)
    df.attrs["push2_slave_max_offset"] = (
        0 if master.name in gone else master.message_store.ha_service.push2_slave_max_offset
    )
    df.attrs["stores_gone"] = gone
    return df


def index_files(broker: BrokerController) -> pd.DataFrame:
    """One row per index file (``store/index``): its name and header fields."""
    rows = []
    for f in broker.message_store.index_service.index_file_list:
        h = f.index_header
        rows.append({
            "file": f.file_name.rsplit("/", 1)[-1], "begin_timestamp": h.begin_timestamp,
            "end_timestamp": h.end_timestamp, "begin_phy_offset": h.begin_phy_offset,
            "end_phy_offset": h.end_phy_offset, "hash_slot_count": h.hash_slot_count,
            "index_count": h.index_count,
        })  # fmt: skip
    return _frame(rows, ["file", "begin_timestamp", "end_timestamp", "begin_phy_offset",
                         "end_phy_offset", "hash_slot_count", "index_count"])  # fmt: skip


def index_entries(broker: BrokerController) -> pd.DataFrame:
    """Every 20-byte index entry (number 1 up) of every index file, with its hash slot."""
    rows = []
    for f in broker.message_store.index_service.index_file_list:
        name = f.file_name.rsplit("/", 1)[-1]
        for n in range(1, f.index_header.index_count):
            key_hash, phy, time_diff, prev = f.read_entry(n)
            rows.append({
                "file": name, "index": n, "key_hash": key_hash, "slot": key_hash % f.hash_slot_num,
                "phy_offset": phy, "time_diff": time_diff, "prev_index": prev,
            })  # fmt: skip
    return _frame(rows, ["file", "index", "key_hash", "slot", "phy_offset", "time_diff",
                         "prev_index"])  # fmt: skip


#: (field, offset, size) of the stored layout for IPv4 hosts (``CommitLog#calMsgLength``), for byte maps.
_FIXED = [
    ("TOTALSIZE", 0, 4), ("MAGICCODE", 4, 4), ("BODYCRC", 8, 4), ("QUEUEID", 12, 4),
    ("FLAG", 16, 4), ("QUEUEOFFSET", 20, 8), ("PHYSICALOFFSET", 28, 8), ("SYSFLAG", 36, 4),
    ("BORNTIMESTAMP", 40, 8), ("BORNHOST", 48, 8), ("STORETIMESTAMP", 56, 8),
    ("STOREHOSTADDRESS", 64, 8), ("RECONSUMETIMES", 72, 4), ("PREPAREDTRANSACTIONOFFSET", 76, 8),
]  # fmt: skip


def commit_log_fields(data: bytes) -> pd.DataFrame:
    """The byte map of one stored (IPv4) entry: field, offset, size, hex, value."""
    rows = []
    for name, off, size in _FIXED:
        chunk = data[off : off + size]
        rows.append({"field": name, "offset": off, "size": size, "hex": chunk.hex(" "),
                     "value": int.from_bytes(chunk, "big", signed=True)})  # fmt: skip
    pos = 84
    body_len = int.from_bytes(data[pos : pos + 4], "big")
    rows.append(
        {
            "field": "BODYLENGTH",
            "offset": pos,
            "size": 4,
            "hex": data[pos : pos + 4].hex(" "),
            "value": body_len,
        }
    )
    pos += 4
    rows.append(
        {
            "field": "BODY",
            "offset": pos,
            "size": body_len,
            "hex": data[pos : pos + min(body_len, 16)].hex(" "),
            "value": data[pos : pos + body_len][:32],
        }
    )
    pos += body_len
    tlen = data[pos]
    rows.append(
        {"field": "TOPICLENGTH", "offset": pos, "size": 1, "hex": f"{tlen:02x}", "value": tlen}
    )
    rows.append(
        {
            "field": "TOPIC",
            "offset": pos + 1,
            "size": tlen,
            "hex": data[pos + 1 : pos + 1 + tlen].hex(" "),
            "value": data[pos + 1 : pos + 1 + tlen].decode(),
        }
    )
    pos += 1 + tlen
    plen = int.from_bytes(data[pos : pos + 2], "big")
    rows.append(
        {
            "field": "PROPERTIESLENGTH",
            "offset": pos,
            "size": 2,
            "hex": data[pos : pos + 2].hex(" "),
            "value": plen,
        }
    )
    props = data[pos + 2 : pos + 2 + plen]
    rows.append({"field": "PROPERTIES", "offset": pos + 2, "size": plen, "hex": props[:16].hex(" "),
                 "value": props.decode().replace("\x01", "=").replace("\x02", "; ")})  # fmt: skip
    return _frame(rows, ["field", "offset", "size", "hex", "value"])


def held_pulls(brokers: Iterable[BrokerController]) -> pd.DataFrame:
    """The PullRequestHoldService tables: one row per parked pull."""
    rows = []
    for b in brokers:
        for r in b.pull_request_hold_service.inspect():
            rows.append({"broker": b.name, **r})
    cols = ["broker", "key", "consumer", "opaque", "pull_from_this_offset", "suspend_timestamp",
            "timeout_millis", "deadline"]  # fmt: skip
    return _frame(rows, cols)


def consumer_offsets(brokers: Iterable[BrokerController]) -> pd.DataFrame:
    """Committed offsets on each broker (consumerOffset.json) with the queue's max and the lag."""
    rows = []
    for b in brokers:
        store = b.message_store
        for key, table in sorted(b.consumer_offset_manager.offset_table.items()):
            topic, _, group = key.rpartition("@")
            for q, off in sorted(table.items()):
                mx = store.get_max_offset_in_queue(topic, q)
                rows.append({"broker": b.name, "group": group,
                             "topic": topic, "queue_id": q, "offset": off, "max_offset": mx,
                             "lag": max(0, mx - off)})  # fmt: skip
    return _frame(rows, ["broker", "group", "topic", "queue_id", "offset", "max_offset", "lag"])


def timers(
    driver: SimDriver, *, include_frames: bool = True, limit: int | None = None,
    include_bookkeeping: bool = True,
) -> pd.DataFrame:  # fmt: skip
    """Pending timers (and frames in flight) in firing order, with what they are."""
    now = driver.now
    rows = [
        {
            "due_ms": p.due_ms,
            "in_ms": p.due_ms - now,
            "node": p.node,
            "name": p.name,
            "key": p.key,
            "label": p.label,
            "periodic": p.periodic,
            "daemon": p.daemon,
        }  # fmt: skip
        for p in driver.next_timers(
            limit, include_frames=include_frames, include_bookkeeping=include_bookkeeping
        )
    ]
    return _frame(rows, ["due_ms", "in_ms", "node", "name", "key", "label", "periodic", "daemon"])
