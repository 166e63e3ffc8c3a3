"""Lesson 02 — the store: commit-log and consume-queue bytes (``CommitLog``, ``ConsumeQueue``, ``DefaultMessageStore#getMessage``).

Every message of every topic is appended to one commit log (``CommitLog``): a 91-byte
fixed part plus body, topic and properties (``CommitLog#calMsgLength``). ``ReputMessageService`` then
writes a 20-byte unit into the topic's ``ConsumeQueue`` (commit-log offset int64, size
int32, tags hash code int64; ``ConsumeQueue#putMessagePositionInfo``), which is what ``DefaultMessageStore#getMessage``
scans. The commit log is a sequence of fixed-size files named by their start
offset; an entry that does not fit (with 8 bytes to spare) leaves an 8-byte blank marker
and goes to the next file. The files are memory-mapped, so a written entry is in the OS
page cache at once: a killed broker loses nothing. A power cut loses what no flush
(``msync``) covered, and may tear the last entry. After either fault the ``abort`` file is
left behind and 4.9.3 runs ``CommitLog#recoverAbnormally`` (mqlab walks the tail as
``recoverNormally`` does, having no checkpoint), cutting at the first torn or invalid entry;
consume-queue units past the cut are dropped.

Helpers: the entry-size formula, the store's files, the raw bytes of consume-queue units,
and ``tear_tail`` — cut a broker's power while the last bytes of its commit log are not on
disk yet (a torn write inside a preallocated file), restart it.
"""

from __future__ import annotations

import json
import os
import struct

import pandas as pd

from mqlab.common.filter_api import java_string_hash
from mqlab.lab.check import exercise, wrong_answer
from mqlab.lab.inspect import commit_log_fields
from mqlab.lab.lab import Lab
from mqlab.lab.lessons.lesson01 import outcome, send_raw

__all__ = [
    "send_raw",
    "outcome",
    "FIXED_PART",
    "PROPS_TAGA",
    "entry_size",
    "entry_fields",
    "tags_code",
    "commit_log_files",
    "consume_queue_bytes",
    "tear_tail",
    "recovery_events",
    "print_power_cut",
    "params_02_1",
    "params_02_2",
    "params_02_3",
    "params_02_4",
    "ROLL_FILE_SIZE",
]

#: The fixed part of a stored entry with IPv4 hosts: 4+4+4+4+4+8+8+4+8+8+8+8+4+8 = 84 bytes
#: of header, plus the 4-byte body length, 1-byte topic length, 2-byte properties length
#: (``CommitLog#calMsgLength``: total = 91 + body + topic + properties).
FIXED_PART = 91
#: The stored properties of ``send_raw(..., tags="TagA")``: CLUSTER (added by the broker; WAIT
#: is not stored), then TAGS, in the broker's ``HashMap`` order (CLUSTER hashes to bucket 12,
#: TAGS to 14; ``MessageDecoder#messageProperties2String``). 32 bytes.
PROPS_TAGA = "CLUSTER\x01DefaultCluster\x02TAGS\x01TagA"
#: The small commit-log file size lesson 02 uses to watch a roll-over.
ROLL_FILE_SIZE = 1024

_CQ_UNIT = struct.Struct(">qiq")


def entry_size(body_len: int, topic: str = "TopicTest", properties: str = PROPS_TAGA) -> int:
    """``calMsgLength`` for IPv4 hosts: 91 + body + topic + properties bytes."""
    return FIXED_PART + body_len + len(topic.encode()) + len(properties.encode())


def entry_fields(lab: Lab, index: int = 0, broker: str = "broker-a") -> pd.DataFrame:
    """The fields of commit-log entry ``index``: name, offset, size, hex, value."""
    log = lab.commit_log(broker, raw=True, limit=index + 1)
    if len(log) <= index:
        raise ValueError(f"index {index} is past the {len(log)} entries of {broker}'s commit log")
    return commit_log_fields(log["raw"].iloc[index])


def tags_code(tag: str) -> int:
    """The consume-queue tags code: Java's ``String.hashCode`` of the tag."""
    return java_string_hash(tag)


def commit_log_files(lab: Lab, broker: str = "broker-a") -> pd.DataFrame:
    """The commit log's files: name (= start offset, 20 digits), start, bytes written."""
    rows = [
        {"file": name, "start_offset": start, "wrote_position": pos}
        for name, start, pos in lab.broker(broker).message_store.commit_log_files()
    ]
    return pd.DataFrame(rows, columns=["file", "start_offset", "wrote_position"])


def consume_queue_bytes(
    lab: Lab, topic: str, queue_id: int, broker: str = "broker-a"
) -> pd.DataFrame:
    """The consume queue's units with their 20 stored bytes in hex (8 + 4 + 8, big-endian)."""
    df = lab.consume_queue(topic, queue_id, broker)
    df["bytes"] = [
        _CQ_UNIT.pack(int(p), int(s), int(t)).hex(" ")
        for p, s, t in zip(df["commit_log_offset"], df["size"], df["tags_code"], strict=True)
    ]
    return df


def tear_tail(lab: Lab, cut_bytes: int, broker: str = "broker-a") -> dict:
    """Cut the power of ``broker``'s machine while the last ``cut_bytes`` of its commit log
    are still only in the page cache, then restart it.

    ``Lab.restart_broker(power_cut=True, lost_tail_bytes=cut_bytes)``: the kernel had
    written back every unflushed byte but the last ``cut_bytes`` (a write the crash tore
    inside a preallocated file: the last entry's head is on disk, its tail is zeros), the
    consume queues lose their unflushed units, and the ``abort`` file stays. The restarted
    broker sees an abnormal exit (4.9.3: ``CommitLog#recoverAbnormally``; mqlab walks the
    files as ``recoverNormally`` does, having no checkpoint). A plain kill would lose
    nothing: the page cache outlives the process.

    Returns:
        ``file`` (the newest commit-log file), the commit log's ``max_phy_offset_before``,
        ``flushed`` (what the last flush covered) and ``kept`` (the bytes that reached the
        disk), and ``max_phy_offset_after`` recovery.

    Raises:
        ValueError: ``cut_bytes`` is not a whole number from 1 to the bytes not flushed yet.
    """
    b = lab.broker(broker)
    store = b.message_store
    mfq = store.commit_log.mapped_file_queue
    if not mfq.mapped_files:
        raise ValueError(f"{broker} has no commit-log file to tear")
    before = store.get_max_phy_offset()
    flushed = min(mfq.flushed_where, before)
    if not isinstance(cut_bytes, int) or not 1 <= cut_bytes <= before - flushed:
        raise ValueError(
            f"cut_bytes must be a whole number from 1 to {before - flushed} (the bytes not "
            f"flushed yet), got {cut_bytes!r}"
        )
    name = os.path.basename(mfq.mapped_files[-1].file_name)
    new = lab.restart_broker(broker, power_cut=True, lost_tail_bytes=cut_bytes)
    lab.run_until_idle()
    return {
        "file": name, "max_phy_offset_before": before, "flushed": flushed,
        "kept": before - cut_bytes, "max_phy_offset_after": new.message_store.get_max_phy_offset(),
    }  # fmt: skip


def recovery_events(lab: Lab) -> pd.DataFrame:
    """From the first kill or power cut on: the fault, the restart and what recovery did,
    in words."""
    ev = lab.events()
    faults = ev.index[ev["step"].isin(["kill", "power_cut"])]
    if len(faults):
        ev = ev.loc[faults[0] :]
    keep = ev["step"].isin(["kill", "power_cut", "restart"]) | ev["component"].str.contains(
        "recover|truncate", case=False
    )
    ev = ev[keep].copy()
    ev["text"] = [
        t or ", ".join(f"{k}={v}" for k, v in sorted(json.loads(f).items())) or f"{n} {s}"
        for t, f, n, s in zip(ev["text"], ev["fields"], ev["node"], ev["step"], strict=True)
    ]
    return ev[["t_ms", "node", "component", "step", "text"]].reset_index(drop=True)


# -- exercises -------------------------------------------------------------------------------
def params_02_1(seed: int) -> int:
    """Exercise 02.1: the body length in bytes (5..54)."""
    return 5 + seed % 50


def params_02_2(seed: int) -> str:
    """Exercise 02.2: the tag ("TagA" … "TagZ")."""
    return "Tag" + chr(ord("A") + seed % 26)


def params_02_3(seed: int) -> dict[str, int]:
    """Exercise 02.3: file size, message count and body length for the roll-over."""
    return {
        "mapped_file_size_commit_log": ROLL_FILE_SIZE,
        "messages": 12,
        "body_len": 20 + seed % 40,
    }


def params_02_4(seed: int) -> dict[str, int]:
    """Exercise 02.4: messages sent (30-byte bodies, queue 0) and bytes torn off the end.

    At least 33 bytes: a cut of 32 or fewer stays inside the last entry's properties, which
    neither the length check nor the body CRC covers, so recovery would keep that entry. The
    same holds for the entry before the last when a cut takes the last entry and up to 32
    bytes more (163-194 or 325-356 bytes): about one seed in six."""
    return {"messages": 6 + seed % 10, "body_len": 30, "cut_bytes": 33 + (seed * 7) % 368}


# fmt: off
_MISC_02_1 = (
    wrong_answer("leaving out the properties",
                 "the entry stores the properties too: CLUSTER\\x01DefaultCluster\\x02TAGS\\x01TagA "
                 "(32 bytes)",
                 lambda want, seed: want - len(PROPS_TAGA)),
    wrong_answer("counting only the TAGS property",
                 "the broker adds CLUSTER\\x01DefaultCluster\\x02 (23 bytes) before TAGS\\x01TagA",
                 lambda want, seed: want - len(PROPS_TAGA) + len("TAGS\x01TagA")),
)
# fmt: on


@exercise("02.1", "send_raw stores one message to TopicTest with tag TagA and a body of your "
          "length. What is its TOTALSIZE (the first 4 bytes of the entry)?",
          hint="91 fixed bytes + body + topic (9 bytes for TopicTest) + properties; the stored "
               "properties are CLUSTER\\x01DefaultCluster\\x02TAGS\\x01TagA (32 bytes)",
          misconceptions=_MISC_02_1)  # fmt: skip
def _ex_02_1(seed: int) -> int:
    with Lab(seed=seed) as lab:
        send_raw(lab, body=b"x" * params_02_1(seed))
        return int(lab.commit_log()["size"].iloc[0])


@exercise("02.2", "A message with your tag is stored in TopicTest queue 0. What tags_code does "
          "its consume-queue unit hold?",
          hint="Java's String.hashCode: h = 31*h + char over the characters, as a signed 32-bit "
               "int; \"TagA\" is 2598919 and only the last character differs")  # fmt: skip
def _ex_02_2(seed: int) -> int:
    with Lab(seed=seed) as lab:
        send_raw(lab, tags=params_02_2(seed))
        return int(lab.consume_queue("TopicTest", 0)["tags_code"].iloc[0])


@exercise("02.3", "With mapped_file_size_commit_log = 1024, send_raw stores 12 messages (your body "
          "length, tag TagA, queue 0). Which file holds the 12th message (its start offset) and "
          "at which commit-log offset does that message start? Answer [file start, offset].",
          hint="each entry is 132 + body bytes; an entry goes into the current file only if it "
               "still leaves 8 bytes for the end-of-file blank marker, otherwise the next file "
               "starts at the next multiple of 1024")  # fmt: skip
def _ex_02_3(seed: int) -> list[int]:
    p = params_02_3(seed)
    with Lab(
        seed=seed, store={"mapped_file_size_commit_log": p["mapped_file_size_commit_log"]}
    ) as lab:
        for _ in range(p["messages"]):
            send_raw(lab, body=b"x" * p["body_len"])
        last = int(lab.commit_log()["commit_log_offset"].iloc[-1])
        size = p["mapped_file_size_commit_log"]
        return [last - last % size, last]


@exercise("02.4", "send_raw stores your number of messages (30-byte bodies, so 162 bytes each) in "
          "TopicTest queue 0. The power fails before the last cut_bytes bytes of the commit log "
          "reach the disk (nothing was flushed yet); the broker restarts. What is queue 0's max "
          "offset after recovery?",
          hint="recovery (recoverAbnormally after the crash) keeps every entry whose length and "
               "body CRC still check out and cuts at the first that fails; the consume-queue "
               "units past the cut are rebuilt or dropped, so max offset = the entries "
               "recovery keeps. The CRC covers the body only: an entry torn only inside its "
               "last 32 bytes (the properties) still passes, as in 4.9.3. That can be the last "
               "entry, or the one before it when the cut takes the last entry and up to 32 "
               "bytes more")  # fmt: skip
def _ex_02_4(seed: int) -> int:
    p = params_02_4(seed)
    with Lab(seed=seed) as lab:
        for _ in range(p["messages"]):
            send_raw(lab, body=b"x" * p["body_len"])
        tear_tail(lab, p["cut_bytes"])
        return int(lab.queues("TopicTest").set_index("queue_id").loc[0, "max_offset"])


def print_power_cut(name: str, schedule: str) -> None:
    """Replay ``schedule`` of explore scenario ``name`` (lesson 05's ``replay_schedule``) and
    print its outcome, the number of deliveries, then the power cut and the producer's send
    result, one per line."""
    from mqlab.lab.lessons.lesson05 import replay_schedule

    run = replay_schedule(name, schedule)
    ev = run.events
    print(name, "→", run.outcome, f"({len(run.deliveries)} delivered)")
    cut = ev[ev["component"].isin(["DefaultMessageStore.powerCut", "DefaultMQProducerImpl.send"])]
    for r in cut.to_dict("records"):
        print(f"  t={r['t_ms']}  {r['node']}: {r['text']}")
