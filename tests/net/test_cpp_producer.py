"""The official C++ producer (PyPI rocketmq 0.4.4) against ``mqlab serve``.

docs/cpp-client.md §2 (send paths), §4.1 (properties, compression), §4.3 (batches); docs/reference.md
§1.8 (send response fields).
"""

import zlib

import pytest
from cpp_harness import CPP_CLIENT, run_client, stored

pytestmark = [pytest.mark.slow, CPP_CLIENT]


def test_send_sync_oneway_orderly_batch_and_compressed_body(live, tmp_path):
    """send_sync/oneway/orderly/batch and a 6000-byte body: SEND_OK, offsets = stored queue offsets."""
    server = live()
    ops = [
        {"op": "sync", "topic": "TopicTest", "tags": "TagA", "keys": "K0",
         "props": {"myprop": "v1"}, "body": "hello 0"},
        {"op": "sync", "topic": "TopicTest", "tags": "TagB", "keys": "K1", "body": "hello 1"},
        {"op": "sync", "topic": "TopicTest", "tags": "TagA", "keys": "K2", "body": "hello 2"},
        {"op": "sync", "topic": "TopicTest", "tags": "TagA", "keys": "K3", "body": "hello 3"},
        {"op": "sync", "topic": "TopicTest", "tags": "TagA", "keys": "K4", "body": "hello 4"},
        {"op": "oneway", "topic": "TopicTest", "tags": "TagC", "body": "oneway 0"},
        {"op": "orderly", "topic": "TopicTest", "tags": "TagO", "body": "order 7", "arg": 7},
        {"op": "orderly", "topic": "TopicTest", "tags": "TagO", "body": "order 9", "arg": 9},
        {"op": "batch", "messages": [
            {"topic": "TopicTest", "tags": "TagB", "keys": f"B{i}", "body": f"batch {i}"}
            for i in range(3)]},
        {"op": "sync", "topic": "TopicTest", "tags": "TagZ", "body": "z" * 6000},
    ]  # fmt: skip
    res = run_client(tmp_path, "produce", {"ns": server.namesrv_addr, "ops": ops})["results"]
    msgs = stored(server, "TopicTest")
    assert len(msgs) == 12  # 6 sync (one big) + 1 oneway + 2 orderly + 3 in the batch
    sync = [r for r, op in zip(res, ops, strict=True) if op["op"] == "sync"]
    assert [r["status"] for r in sync] == [0] * 6
    for r in sync + [res[6], res[7]]:
        assert r["offset"] == msgs[r["msg_id"]]["queue_offset"]
    # Round robin over the 4 queues the client asked for (defaultTopicQueueNums 4).
    assert [msgs[r["msg_id"]]["queue_id"] for r in sync[:5]] == [0, 1, 2, 3, 0]
    first = msgs[sync[0]["msg_id"]]
    assert first["body"] == b"hello 0"
    assert first["properties"]["TAGS"] == "TagA"
    assert first["properties"]["KEYS"] == "K0"
    assert first["properties"]["myprop"] == "v1"
    assert "WAIT" not in first["properties"]  # 4.9.3 does not store WAIT=true
    # send_orderly: the stock selector picks arg % 4.
    assert [msgs[res[i]["msg_id"]]["queue_id"] for i in (6, 7)] == [7 % 4, 9 % 4]
    # The oneway send was stored (the C++ client never sets the oneway bit; the reply is dropped).
    assert [m["body"] for m in msgs.values() if m["properties"].get("TAGS") == "TagC"] == [
        b"oneway 0"
    ]
    # send_batch: SEND_MESSAGE with batch:"1" → consecutive offsets in one queue; msg_id "".
    batch = sorted(
        (m for m in msgs.values() if m["body"].startswith(b"batch")), key=lambda m: m["body"]
    )
    assert res[8]["msg_id"] == ""
    assert len({m["queue_id"] for m in batch}) == 1
    offs = [m["queue_offset"] for m in batch]
    assert offs == list(range(offs[0], offs[0] + 3)) and res[8]["offset"] == offs[0]
    assert [m["properties"]["KEYS"] for m in batch] == ["B0", "B1", "B2"]
    # >4 KiB body: zlib-compressed by the client, stored as sent with sysFlag bit 0.
    big = msgs[sync[5]["msg_id"]]
    assert big["sys_flag"] & 1 == 1
    assert len(big["body"]) < 6000
    assert zlib.decompress(big["body"]) == b"z" * 6000
