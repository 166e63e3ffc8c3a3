"""Malformed frames against a live broker while well-behaved clients keep being served.

Issue 6 "Bad input"; docs/reference.md §1.1 (framing, 16 MiB limit), §1.6 (dispatch, unknown codes);
docs/design.md §6.10 (malformed bytes close that connection only).
"""

import json
import socket
import struct
import subprocess
import sys
import time

import pytest
from cpp_harness import CPP_CLIENT, SCRIPT, GoodClient, client_env, start_server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqlab.remoting.command import MAX_FRAME_LENGTH

pytestmark = [pytest.mark.slow, CPP_CLIENT]

CODES = [10, 11, 14, 15, 30, 31, 34, 35, 36, 38, 41, 42, 105, 310, 320, 9999]
EXT_KEYS = [
    "topic", "queueId", "consumerGroup", "queueOffset", "maxMsgNums", "sysFlag", "offset",
    "commitOffset", "subscription", "suspendTimeoutMillis", "batch", "a", "b", "d", "e",
    "producerGroup", "defaultTopic", "properties", "group", "delayLevel", "clientID",
]  # fmt: skip
json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.text(max_size=12),
    st.sampled_from(["0", "-1", "4", "99999999999999999999", "TopicTest", "*", "1", "true"]),
)  # fmt: skip
json_value = st.recursive(
    json_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6,
)  # fmt: skip


def frame(word: int, header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">iI", 4 + len(header) + len(body), word & 0xFFFFFFFF) + header + body


@st.composite
def json_frames(draw):
    """Well-framed JSON headers with odd codes, flags and extFields (numbers, nulls, nesting)."""
    header = {
        "code": draw(st.sampled_from(CODES) | st.integers(-5, 70000) | json_scalar),
        "flag": draw(st.sampled_from([0, 0, 0, 2, 1]) | st.integers(-(2**31), 2**31)),
        "opaque": draw(st.integers(0, 2**31 - 1)),
        "language": "CPP",
        "version": 63,
    }
    if draw(st.booleans()):
        header["extFields"] = draw(
            st.dictionaries(st.sampled_from(EXT_KEYS) | st.text(max_size=6), json_value, max_size=8)
            | json_value
        )
    text = json.dumps(header).encode()
    body = draw(st.binary(max_size=64) | st.sampled_from([b"{}", b'{"clientID":"x"}', b"null"]))
    return frame(len(text), text, body)


bad_length = st.integers(-(2**31), 3) | st.integers(MAX_FRAME_LENGTH - 3, 2**31 - 1)
malformed = st.one_of(
    st.binary(min_size=1, max_size=80),
    st.builds(lambda n, tail: struct.pack(">i", n) + tail, bad_length, st.binary(max_size=16)),
    st.builds(  # header length past the frame, unknown serialize types, non-JSON headers
        lambda stype, hlen, header: frame((stype << 24) | hlen, header),
        st.integers(0, 255), st.integers(0, 0xFFFFFF), st.binary(max_size=40),
    ),
    st.builds(lambda h: frame(len(h), h), st.sampled_from([b"{", b"[]", b"null", b'{"code":"x"}'])),
    st.builds(lambda h: frame((1 << 24) | len(h), h), st.binary(min_size=0, max_size=40)),
    json_frames(),
)  # fmt: skip


@pytest.fixture
def fuzz_server(tmp_path):
    """A server whose handler errors the fuzz test tolerates (see the known-bug test below)."""
    server = start_server(tmp_path)
    yield server
    server.stop()


def test_malformed_frames_close_only_their_connection(fuzz_server, tmp_path):
    """Random, over-long, mis-typed and non-JSON frames: the broker never crashes, answers the
    good client every time, and a C++ producer sending meanwhile gets all 60 sends acked.

    Requests that decode but lack mandatory fields may raise in a processor; the driver
    turns that into SYSTEM_ERROR (docs/reference.md §1.6 step 4) and serves on, which is what this
    test checks; what such requests do to the broker's tables is the next test.
    """
    server = fuzz_server
    addr = server.call(lambda srv: srv.broker().broker_addr)
    host, port = addr.rsplit(":", 1)
    good = GoodClient(addr)
    producer = subprocess.Popen(
        [sys.executable, str(SCRIPT), "produce", json.dumps({"ns": server.namesrv_addr, "ops": [
            {"op": "sync", "topic": "FuzzTopic", "tags": "TagA", "body": f"f{i}", "sleep": 0.02}
            for i in range(60)]})],
        env=client_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    seen = {"closed": 0}

    @settings(
        max_examples=250, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )  # fmt: skip
    @given(data=malformed)
    def throw(data):
        with socket.create_connection((host, int(port)), timeout=2) as s:
            s.sendall(data)
            s.settimeout(0.02)
            try:
                while s.recv(65536):
                    pass
                seen["closed"] += 1  # the broker closed it
            except (TimeoutError, ConnectionResetError):
                pass
        resp = good.call(30, {"topic": "TBW102", "queueId": "0"})  # GET_MAX_OFFSET
        assert (resp.code, resp.ext("offset")) == (0, "0")

    throw()
    out, err = producer.communicate(timeout=90)
    assert producer.returncode == 0, err[-2000:]
    results = json.loads(out.strip().splitlines()[-1])["results"]
    assert [r["status"] for r in results] == [0] * 60
    unknown = good.call(9999, {})
    assert unknown.code == 3  # REQUEST_CODE_NOT_SUPPORTED
    assert unknown.remark == " request type 9999 not supported"
    decode_errors = server.call(lambda srv: len(srv.driver.decode_errors))
    assert decode_errors >= 50 and seen["closed"] >= 50
    time.sleep(0.1)


def test_requests_missing_mandatory_fields_leave_broker_tables_clean(live):
    """PULL_MESSAGE without extFields and GET_MAX_OFFSET without a topic are answered
    SYSTEM_ERROR and leave no ``None`` group or topic behind (Java's ConcurrentHashMap
    refuses null keys), so the flush timer and the shutdown persist keep working."""
    server = live()
    good = GoodClient(server.call(lambda srv: srv.broker().broker_addr))
    assert good.call(11, None).code == 1  # SYSTEM_ERROR
    assert good.call(30, {}).code == 1
    time.sleep(0.7)  # one FlushRealTimeService.run (500 ms)

    def tables(srv):
        b = srv.broker()
        return (
            None in b.subscription_group_manager.subscription_group_table,
            None in b.message_store.consume_queue_table,
        )

    assert server.call(tables) == (False, False)
