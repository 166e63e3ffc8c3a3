"""Benchmarks that print figures (never timed assertions).

``python -m mqlab bench broker [--messages N] [--body BYTES]`` measures messages/s for:

1. ``floor``: raw Python doing the least work with the same bytes — ``struct`` pack of a
   91-byte header + body + topic + properties, append to a bytearray, unpack it again;
2. ``store``: ``DefaultMessageStore.put_message`` + reput dispatch + ``get_message`` in
   batches of 32 (files under a temp dir);
3. ``processors``: SEND_MESSAGE_V2 requests through ``SendMessageProcessor`` and
   PULL_MESSAGE requests (32 per pull) through ``PullMessageProcessor``, tracing off —
   the broker's send + pull path without the transport;
4. ``processors+trace``: the same with full step tracing on;
5. ``processors batch32`` / ``batch32+trace``: sends as SEND_BATCH_MESSAGE of 32
   messages (how a high-throughput producer sends), pulls as above.

Each figure is messages per second over the whole put + get cycle (a message counts
once when it has been stored and read back).
"""

from __future__ import annotations

import argparse
import struct
import sys
import tempfile
import time
import zlib

__all__ = ["bench_broker", "main"]


def _floor(n: int, body: bytes, topic: bytes, props: bytes) -> float:
    # TOTALSIZE MAGIC BODYCRC QUEUEID FLAG QOFFSET PHYOFFSET SYSFLAG BORNTS BORNHOST STORETS
    # STOREHOST RECONSUMETIMES PREPAREDOFFSET: the 84 fixed bytes before the body length.
    hdr = struct.Struct(">iiiiiqqiqqqqiq")
    buf = bytearray()
    t0 = time.perf_counter()
    crc = zlib.crc32(body) & 0x7FFFFFFF
    for i in range(n):
        size = 91 + len(body) + len(topic) + len(props)
        buf += hdr.pack(size, -626843481, crc, 0, 0, i, len(buf), 0, i, 0, i, 0, 0, 0)
        buf += struct.pack(">i", len(body)) + body
        buf += struct.pack(">b", len(topic)) + topic
        buf += struct.pack(">h", len(props)) + props
    pos = 0
    got = 0
    while pos < len(buf):
        fields = hdr.unpack_from(buf, pos)
        pos += fields[0]
        got += 1
    assert got == n
    return n / (time.perf_counter() - t0)


def _store(n: int, body: bytes) -> float:
    from mqlab.common.message import MessageExtBrokerInner
    from mqlab.store.config import MessageStoreConfig
    from mqlab.store.default_message_store import DefaultMessageStore

    class AcceptAll:
        def is_matched_by_consume_queue(self, tags_code, cq_ext_unit=None):
            return True

        def is_matched_by_commit_log(self, msg_buffer, properties):
            return True

    with tempfile.TemporaryDirectory(prefix="mqlab-bench-") as d:
        store = DefaultMessageStore(
            MessageStoreConfig(store_path_root_dir=d, mapped_file_size_commit_log=1 << 30)
        )
        store.load()
        flt = AcceptAll()
        t0 = time.perf_counter()
        for i in range(n):
            msg = MessageExtBrokerInner(
                topic="BenchTopic", queue_id=i & 7, body=body,
                properties_string="TAGS\x01TagA", tags_code=2598919, born_timestamp=i,
                born_host="127.0.0.1:50000", store_host="127.0.0.1:10911",
            )  # fmt: skip
            store.put_message(msg, i)
        store.do_reput()
        got = 0
        for q in range(8):
            off = 0
            while True:
                r = store.get_message("g", "BenchTopic", q, off, 32, flt)
                if r is None or not r.message_count:
                    break
                got += r.message_count
                off = r.next_begin_offset
        elapsed = time.perf_counter() - t0
        store.shutdown()
    assert got == n, (got, n)
    return n / elapsed


def _processors(n: int, body: bytes, trace: bool, batch: int = 1) -> float:
    from mqlab.broker.broker_controller import BrokerController
    from mqlab.broker.config import BrokerConfig
    from mqlab.remoting.codes import RequestCode
    from mqlab.remoting.command import RemotingCommand
    from mqlab.runtime.context import Channel
    from mqlab.runtime.sim import SimDriver
    from mqlab.store.config import MessageStoreConfig
    from mqlab.trace.events import TraceLevel

    with tempfile.TemporaryDirectory(prefix="mqlab-bench-") as d:
        drv = SimDriver(seed=0, trace_level=TraceLevel.STEPS if trace else TraceLevel.OFF)
        broker = BrokerController(
            BrokerConfig(name_server_addr=""),
            MessageStoreConfig(store_path_root_dir=d, mapped_file_size_commit_log=1 << 30),
        )
        drv.add_node(broker)
        ch = Channel(1, broker.broker_addr, "127.0.0.1:50001", "bench")
        props = "WAIT\x01true\x02TAGS\x01TagA"  # a Java client's HashMap order
        batch_body = b""
        if batch > 1:
            from mqlab.common.message import Message
            from mqlab.common.message_decoder import encode_batch_body

            batch_body = encode_batch_body([Message("BenchTopic", body, tags="TagA")] * batch)
        t0 = time.perf_counter()
        i = 0
        while i < n:
            if batch > 1:
                req = RemotingCommand.create_request(
                    RequestCode.SEND_BATCH_MESSAGE,
                    {"a": "PG", "b": "BenchTopic", "c": "TBW102", "d": "8", "e": str((i // batch) & 7),
                     "f": "0", "g": "0", "h": "0", "i": "WAIT\x01true", "m": "true"},
                    batch_body,
                )  # fmt: skip
                i += batch
            else:
                req = RemotingCommand.create_request(
                    RequestCode.SEND_MESSAGE_V2,
                    {"a": "PG", "b": "BenchTopic", "c": "TBW102", "d": "8", "e": str(i & 7),
                     "f": "0", "g": "0", "h": "0", "i": props},
                    body,
                )  # fmt: skip
                i += 1
            resp = broker.process_request(ch, req)
            assert resp.code == 0, resp
        broker.message_store.do_reput()
        got = 0
        for q in range(8):
            off = 0
            while True:
                req = RemotingCommand.create_request(
                    RequestCode.PULL_MESSAGE,
                    {"consumerGroup": "CG", "topic": "BenchTopic", "queueId": str(q),
                     "queueOffset": str(off), "maxMsgNums": "32", "sysFlag": "4",
                     "commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*",
                     "subVersion": "0", "expressionType": "TAG"},
                )  # fmt: skip
                resp = broker.process_request(ch, req)
                nxt = int(resp.ext("nextBeginOffset"))
                if resp.code != 0:
                    break
                got += nxt - off
                off = nxt
        elapsed = time.perf_counter() - t0
        drv.stop_node(broker.name)
    assert got == i, (got, i)
    return i / elapsed


def bench_broker(n: int = 100_000, body_size: int = 100) -> dict[str, float]:
    body = bytes(range(256)) * (body_size // 256) + bytes(body_size % 256)
    topic, props = b"BenchTopic", b"CLUSTER\x01DefaultCluster\x02TAGS\x01TagA"
    return {
        "floor": _floor(n, body, topic, props),
        "store": _store(n, body),
        "processors": _processors(n, body, trace=False),
        "processors+trace": _processors(max(1, n // 4), body, trace=True),
        "processors batch32": _processors(n, body, trace=False, batch=32),
        "batch32+trace": _processors(max(32, n // 4), body, trace=True, batch=32),
    }


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(
        prog="python -m mqlab bench broker", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--body", type=int, default=100, help="body size in bytes")
    args = ap.parse_args(argv)
    res = bench_broker(args.messages, args.body)
    floor = res["floor"]
    print(f"mqlab broker benchmark: {args.messages} messages, {args.body}-byte bodies, 8 queues")
    print(f"{'path':<20}{'msg/s':>12}{'x floor':>10}")
    for k, v in res.items():
        print(f"{k:<20}{v:>12,.0f}{v / floor:>10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
