"""The store's performance shortcuts give exactly the answers of the slow paths they skip.

docs/reference.md §10.3 (reput: parse each entry, build its consume-queue unit), §4.1 (entry layout),
§6 (tags code), §10.1 (getMessage), §10.6 "Batch".
"""

from __future__ import annotations

from collections import deque

import pytest
from store_helpers import STORE_HOST, make_msg

from mqlab.common.message import MessageExtBrokerInner
from mqlab.common.message_decoder import message_properties_to_string
from mqlab.common.sysflag import MessageSysFlag
from mqlab.store.status import DispatchRequest

_FIELDS = DispatchRequest.__slots__


def _as_tuple(req: DispatchRequest) -> tuple:
    return tuple(getattr(req, f) for f in _FIELDS)


def _inner(topic="TopicTest", queue_id=0, props=None, props_string=None, **kw):
    props = dict(props or {})
    return MessageExtBrokerInner(
        topic=topic,
        queue_id=queue_id,
        body=kw.pop("body", b"payload"),
        properties=props,
        properties_string=(
            message_properties_to_string(props) if props_string is None else props_string
        ),
        born_timestamp=7,
        born_host=kw.pop("born_host", "127.0.0.1:5555"),
        store_host=kw.pop("store_host", STORE_HOST),
        **kw,
    )


# Messages whose dispatch facts must come out the same from the append-time record and
# from parsing the bytes: tags / keys / UNIQ_KEY, no properties, a properties string that
# the parse cleans up (empty names and values, duplicates), non-ASCII text, transaction
# types, IPv6 hosts.
CASES = [
    _inner(props={"TAGS": "TagA", "KEYS": "k1 k2", "UNIQ_KEY": "AC1F0001"}),
    _inner(props={}),
    _inner(props={"KEYS": "only-keys"}),
    _inner(props_string="\x01x\x02TAGS\x01TagA\x02y\x01\x02TAGS\x01TagZ\x02\x02"),
    _inner(topic="Topic-中", props={"TAGS": "标签", "a": "ü\x01v"}),
    _inner(props={"TAGS": "TagA"}, sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE),
    _inner(props={"TAGS": "TagA"}, sys_flag=MessageSysFlag.TRANSACTION_COMMIT_TYPE),
    _inner(props={"TAGS": "TagB"}, sys_flag=MessageSysFlag.TRANSACTION_ROLLBACK_TYPE),
    _inner(props={"TAGS": "TagA"}, born_host="[::1]:5555", store_host="[fe80::1]:10911"),
    _inner(queue_id=3, props={"TAGS": ""}, body=b""),
]


def test_reput_record_equals_parsing_the_entry(new_store):
    """For every entry this process appended, the reput's record gives the same
    DispatchRequest, field by field, as CommitLog#checkMessageAndReturnSize on its bytes
    (docs/reference.md §10.3, §4.1)."""
    store = new_store()
    cl = store.commit_log
    for msg in CASES:
        assert store.put_message(msg, 1_000).is_ok()
    assert len(cl.appended) == len(CASES)
    mf = cl.mapped_file_queue.mapped_files[0]
    pos = 0
    for _ in CASES:
        parsed = cl.check_message_and_return_size(mf.mm, pos, False, False)
        recorded = cl.dispatch_request_at(mf.mm, pos, pos)
        assert _as_tuple(recorded) == _as_tuple(parsed)
        pos += parsed.msg_size
    assert not cl.appended


def test_batch_reput_record_equals_parsing(new_store):
    """A batch (putMessages) is recorded entry by entry; each record equals the parse of
    its bytes (docs/reference.md §10.6 "Batch", §10.3)."""
    store = new_store()
    cl = store.commit_log
    msgs = [_inner(queue_id=2, props={"TAGS": f"T{i}", "KEYS": f"k{i}"}) for i in range(5)]
    assert store.put_messages(msgs, 2_000).is_ok()
    mf = cl.mapped_file_queue.mapped_files[0]
    pos = 0
    for m in msgs:
        parsed = cl.check_message_and_return_size(mf.mm, pos, False, False)
        assert parsed.consume_queue_offset == m.queue_offset
        assert _as_tuple(cl.dispatch_request_at(mf.mm, pos, pos)) == _as_tuple(parsed)
        pos += parsed.msg_size


def test_schedule_topic_entries_are_parsed_not_recorded(new_store):
    """DELAY > 0 parks the message in SCHEDULE_TOPIC_XXXX, whose tags code is the delivery
    time (docs/reference.md §10.8); such entries are not recorded, the reput parses them."""
    store = new_store()
    store.put_message(make_msg(properties={"DELAY": "3"}), 5_000)
    assert not store.commit_log.appended
    store.do_reput()
    (unit,) = list(store.iter_consume_queue_units("SCHEDULE_TOPIC_XXXX", 2))
    assert unit[3] == 5_000 + 10_000  # level 3 = 10 s


@pytest.mark.parametrize("bound", [0, 3])
def test_entries_beyond_the_record_bound_are_parsed(new_store, tmp_path, bound):
    """Entries that fell out of the bounded record (or were never recorded) are parsed:
    the consume queue and the arriving-listener calls are the same (docs/reference.md §10.3)."""

    def run(name, record_bound):
        store = new_store(store_path_root_dir=str(tmp_path / name))
        calls = []
        store.message_arriving_listener = lambda *a: calls.append(a)
        if record_bound is not None:
            store.commit_log.appended = deque(maxlen=record_bound)
        for i in range(8):
            store.put_message(make_msg(queue_id=i % 2, tags=f"Tag{i % 3}"), 100 + i)
        assert store.do_reput() == 8
        units = [list(store.iter_consume_queue_units("TopicTest", q)) for q in (0, 1)]
        return calls, units

    assert run("bounded", bound) == run("default", None)


def test_recovery_clears_the_record(new_store, tmp_path):
    """Recovery trusts the bytes on disk only: it clears the append record (docs/reference.md §10.3)."""
    store = new_store()
    store.put_message(make_msg(), 1)
    assert store.commit_log.appended
    store.commit_log.recover_normally(-1)
    assert not store.commit_log.appended


def test_scan_reads_the_same_buffers_as_commit_log_get_message(new_store):
    """getMessage's unit scan returns, for every unit, exactly CommitLog#getMessage(offset,
    size) — across commit-log file boundaries too (docs/reference.md §10.1 step 4f)."""
    store = new_store(mapped_file_size_commit_log=1024)
    for i in range(40):
        store.put_message(make_msg(queue_id=0, body=b"x" * (i * 7 % 60)), i)
    store.do_reput()
    assert len(store.commit_log.mapped_file_queue.mapped_files) > 3
    offset, got = 0, []
    while True:
        r = store.get_message("G", "TopicTest", 0, offset, 32, None)
        if not r.message_count:
            break
        got += zip(r.message_queue_offsets, map(bytes, r.message_buffers), strict=True)
        offset = r.next_begin_offset
    expected = [
        (qo, bytes(store.commit_log.get_message(phy, size)))
        for qo, phy, size, _tags in store.iter_consume_queue_units("TopicTest", 0)
    ]
    assert got == expected and len(got) == 40
