"""ScheduleMessageService: delay levels, parking in SCHEDULE_TOPIC_XXXX, timed delivery.

docs/reference.md §10.8, §10.9, §7.4 (delayOffset.json), §11 (ScheduleMessageServiceTest).
"""

from __future__ import annotations

import pytest
from store_helpers import STORE_HOST, RecordingTracer, make_msg

from mqlab.common.message_decoder import decodes
from mqlab.remoting.fastjson import loads
from mqlab.store import (
    DefaultMessageStore,
    GetMessageStatus,
    MessageStoreConfig,
    PutMessageStatus,
)

SCHEDULE = "SCHEDULE_TOPIC_XXXX"


def test_default_delay_levels(new_store):
    """18 levels from "1s 5s 10s 30s 1m … 2h": level 1 = 1000, 3 = 10,000, 5 = 60,000,
    18 = 7,200,000 ms (docs/reference.md §8.2, §10.8)."""
    sms = new_store().schedule_message_service
    assert sms.max_delay_level == 18
    table = sms.delay_level_table
    assert (table[1], table[3], table[5], table[18]) == (1000, 10_000, 60_000, 7_200_000)


def test_parse_delay_level_units_and_errors(new_store):
    """Units s / m / h / d; an unknown unit makes parseDelayLevel fail."""
    store = new_store(message_delay_level="2s 1d")
    sms = store.schedule_message_service
    assert sms.delay_level_table == {1: 2000, 2: 86_400_000}
    store.message_store_config.message_delay_level = "1s 5x"
    assert sms.parse_delay_level() is False


def test_parse_delay_level_splits_like_java_string_split(new_store):
    """String.split(" ") drops trailing empty strings only: "1s 5s 10s " loads 3 levels,
    a doubled or leading space leaves an empty entry that fails (Java: substring(-1)),
    and " " alone is no level at all (checked against 4.9.3's parseDelayLevel on a JVM)."""
    store = new_store(message_delay_level="1s 5s 10s  ")
    sms = store.schedule_message_service
    assert (sms.max_delay_level, sms.delay_level_table) == (3, {1: 1000, 2: 5000, 3: 10_000})
    cfg = store.message_store_config
    for level_string, ok, max_level, table in [
        ("1s  5s", False, 1, {1: 1000}),
        (" 1s", False, 0, {}),
        ("", False, 0, {}),
        (" ", True, 0, {}),
        ("1s 5x 2s", False, 2, {1: 1000}),  # the unit is looked up before maxDelayLevel
        ("1s 1_0s", False, 2, {1: 1000}),  # Long.parseLong: no "_" ...
        ("1s \t5s", False, 2, {1: 1000}),  # ... no whitespace
        ("1s 99999999999999999999s", False, 2, {1: 1000}),  # ... within 64 bits
        ("1s +5s -5s", True, 3, {1: 1000, 2: 5000, 3: -5000}),
        ("1s 9223372036854775807d", True, 2, {1: 1000, 2: -86_400_000}),  # long wraps
    ]:
        cfg.message_delay_level = level_string
        assert sms.parse_delay_level() is ok, level_string
        assert (sms.max_delay_level, sms.delay_level_table) == (max_level, table), level_string


def test_a_bad_delay_level_string_fails_the_store_load(tmp_path):
    """parseDelayLevel false → ScheduleMessageService#load false → the store does not
    load (DefaultMessageStore#load)."""
    cfg = MessageStoreConfig(store_path_root_dir=str(tmp_path), message_delay_level="1s  5s")
    store = DefaultMessageStore(cfg, store_host=STORE_HOST)
    assert store.load() is False
    assert store.is_shutdown


def test_level_queue_mapping_and_deliver_timestamp(new_store):
    """queueId = level − 1, level = queueId + 1; deliver = store + delay, unknown level →
    store + 1000 (ScheduleMessageServiceTest)."""
    sms = new_store(message_delay_level="5s 8s").schedule_message_service
    assert sms.delay_level_to_queue_id(2) == 1
    assert sms.queue_id_to_delay_level(1) == 2
    assert sms.compute_deliver_timestamp(2, 10_000) == 18_000
    assert sms.compute_deliver_timestamp(7, 10_000) == 11_000


def test_delayed_put_is_parked_in_schedule_topic(new_store):
    """DELAY=3: stored in SCHEDULE_TOPIC_XXXX queue 2 with REAL_TOPIC / REAL_QID; its unit's
    tags code is store time + 10,000; the real queue stays empty (docs/reference.md §10.8)."""
    store = new_store()
    msg = make_msg(queue_id=1, properties={"DELAY": "3"})
    r = store.put_message(msg, 50_000)
    assert r.put_message_status is PutMessageStatus.PUT_OK
    assert (msg.topic, msg.queue_id) == (SCHEDULE, 2)
    store.do_reput()
    assert list(store.iter_consume_queue_units(SCHEDULE, 2)) == [
        (0, 0, r.append_message_result.wrote_bytes, 60_000)
    ]
    parked = store.look_message_by_offset(0)
    assert parked.topic == SCHEDULE
    assert parked.properties["REAL_TOPIC"] == "TopicTest"
    assert parked.properties["REAL_QID"] == "1"
    assert parked.properties["DELAY"] == "3"
    real = store.get_message("g", "TopicTest", 1, 0, 32, None)
    assert real.status is GetMessageStatus.NO_MESSAGE_IN_QUEUE


def test_delay_level_above_the_max_is_capped(new_store):
    """DELAY=20 with 18 levels → DELAY rewritten to 18, queue 17, tags code + 7,200,000."""
    store = new_store()
    msg = make_msg(properties={"DELAY": "20"})
    store.put_message(msg, 0)
    store.do_reput()
    assert (msg.queue_id, msg.properties["DELAY"]) == (17, "18")
    assert next(store.iter_consume_queue_units(SCHEDULE, 17))[3] == 7_200_000


def test_schedule_message_service_delivers_on_time(new_store):
    """ScheduleMessageServiceTest with "5s 8s", level 2: nothing before the 8 s are up
    (100 ms reschedule), then FOUND in the real queue with the original body; the stored
    copy keeps DELAY / REAL_TOPIC / REAL_QID (4.9.3 statement order) (docs/reference.md §10.9, §11)."""
    tracer = RecordingTracer()
    store = new_store(message_delay_level="5s 8s", tracer=tracer)
    sms = store.schedule_message_service
    store.put_message(make_msg(queue_id=0, body=b"delayed body", properties={"DELAY": "2"}), 1000)
    store.do_reput()
    assert store.get_message("g", "TopicTest", 0, 0, 32, None).status is (
        GetMessageStatus.NO_MESSAGE_IN_QUEUE
    )
    assert sms.start(1000) == [(1, 1000), (2, 1000)]
    assert sms.execute_on_time_up(2, 2000) == 100
    assert sms.execute_on_time_up(2, 8999) == 100
    store.do_reput()
    assert store.get_max_offset_in_queue("TopicTest", 0) == 0
    assert sms.offset_table == {}
    assert sms.execute_on_time_up(2, 9000) == 100
    assert sms.offset_table == {2: 1}
    assert sms.task_offset_table[2] == 1
    store.do_reput()
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.status is GetMessageStatus.FOUND
    (delivered,) = decodes(r.body())
    assert delivered.body == b"delayed body"
    assert delivered.store_timestamp == 9000
    assert delivered.properties["DELAY"] == "2"
    assert (delivered.properties["REAL_TOPIC"], delivered.properties["REAL_QID"]) == (
        "TopicTest",
        "0",
    )
    assert "WAIT" not in delivered.properties
    assert sms.execute_on_time_up(2, 9100) == 100  # nothing new
    assert sms.execute_on_time_up(1, 9100) == 100  # level 1 has no messages
    steps = [
        (e["step"], e.get("text"))
        for e in tracer.of("ScheduleMessageService.DeliverDelayedMessageTimerTask")
        if e["level"] == 2
    ]
    assert steps[0] == ("2", "not due for 7000 ms")
    assert ("2", "delivered") in steps


def test_only_due_messages_are_delivered_in_queue_order(new_store):
    """The pass stops at the first unit not yet due; the chain resumes there."""
    store = new_store(message_delay_level="5s")
    sms = store.schedule_message_service
    for t in (0, 1000, 2000):
        store.put_message(make_msg(body=b"at %d" % t, properties={"DELAY": "1"}), t)
    store.do_reput()
    sms.start(0)
    assert sms.execute_on_time_up(1, 6500) == 100
    assert (sms.offset_table, sms.task_offset_table) == ({1: 2}, {1: 2})
    store.do_reput()
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert [m.body for m in decodes(r.body())] == [b"at 0", b"at 1000"]


def test_delay_offsets_persist_with_unquoted_int_keys(new_store, tmp_path):
    """delayOffset.json is fastjson's {"offsetTable":{1:…}} with unquoted int keys, and a
    restart resumes from it (docs/reference.md §7.4)."""
    store = new_store(message_delay_level="1s 2s")
    sms = store.schedule_message_service
    store.put_message(make_msg(properties={"DELAY": "2"}), 0)
    store.do_reput()
    sms.start(0)
    sms.execute_on_time_up(2, 5000)
    sms.persist()
    path = tmp_path / "store" / "config" / "delayOffset.json"
    text = path.read_text()
    assert "2:1" in text and '"2"' not in text
    assert loads(text) == {"offsetTable": {2: 1}}
    store.shutdown()
    again = new_store(message_delay_level="1s 2s")
    assert again.schedule_message_service.offset_table == {2: 1}
    assert again.schedule_message_service.start(0) == [(1, 1000), (2, 1000)]
    assert again.schedule_message_service.task_offset_table == {1: 0, 2: 1}


def test_correct_delay_offset_clamps_into_the_queue_range(new_store, tmp_path):
    """correctDelayOffset: a stored offset beyond an empty queue becomes 0 (docs/reference.md §11)."""
    store = new_store()
    store.shutdown()
    path = tmp_path / "store" / "config" / "delayOffset.json"
    path.parent.mkdir()
    path.write_text('{"offsetTable":{1:99,3:0}}')
    again = new_store()
    assert again.schedule_message_service.offset_table == {1: 0, 3: 0}


def test_start_reloads_the_file_over_the_corrected_offsets(new_store, tmp_path):
    """ScheduleMessageService.java:130: start() runs ConfigManager#load again, so the
    chain starts at the file's 99, the first run (1000 ms) moves it to the empty queue's
    max 0, and the table / next persist keep 99 until the level delivers."""
    new_store().shutdown()
    path = tmp_path / "store" / "config" / "delayOffset.json"
    path.parent.mkdir()
    path.write_text('{"offsetTable":{1:99,3:0}}')
    sms = new_store(message_delay_level="1s 5s 10s").schedule_message_service
    assert sms.offset_table == {1: 0, 3: 0}  # load(): correctDelayOffset
    assert sms.start(0) == [(1, 1000), (2, 1000), (3, 1000)]
    assert sms.offset_table == {1: 99, 3: 0}
    assert sms.task_offset_table == {1: 99, 2: 0, 3: 0}
    assert sms.execute_on_time_up(1, 1000) == 100
    assert (sms.offset_table[1], sms.task_offset_table[1]) == (99, 0)
    sms.persist()
    assert loads(path.read_text()) == {"offsetTable": {1: 99, 3: 0}}


def test_a_stored_offset_past_the_end_skips_what_arrives_before_the_first_run(new_store, tmp_path):
    """4.9.3's first delivery round after a restart with delayOffset {1:3} over an empty
    queue: a message parked at offset 0 before the first run is skipped (the chain jumps
    from 3 to the max, 1), and the level never delivers it."""
    new_store().shutdown()
    path = tmp_path / "store" / "config" / "delayOffset.json"
    path.parent.mkdir()
    path.write_text('{"offsetTable":{1:3}}')
    store = new_store(message_delay_level="1s")
    sms = store.schedule_message_service
    sms.start(0)
    store.put_message(make_msg(properties={"DELAY": "1"}), 500)
    store.do_reput()
    assert sms.execute_on_time_up(1, 1000) == 100
    assert sms.task_offset_table[1] == 1
    assert sms.execute_on_time_up(1, 5000) == 100
    store.do_reput()
    assert store.get_message("g", "TopicTest", 0, 0, 32, None).status is (
        GetMessageStatus.NO_MESSAGE_IN_QUEUE
    )
    assert sms.offset_table == {1: 3}


def test_execute_before_start_or_for_unknown_level(new_store):
    """A task of a stopped service does nothing (None: no reschedule); an unknown level is
    API misuse."""
    sms = new_store().schedule_message_service
    assert sms.execute_on_time_up(1, 0) is None
    with pytest.raises(ValueError, match="level"):
        sms.execute_on_time_up(19, 0)


def test_real_topic_of_transaction_half_messages_is_dropped(new_store):
    """A parked message whose REAL_TOPIC is RMQ_SYS_TRANS_HALF_TOPIC is discarded."""
    store = new_store(message_delay_level="1s")
    sms = store.schedule_message_service
    store.put_message(make_msg(topic="RMQ_SYS_TRANS_HALF_TOPIC", properties={"DELAY": "1"}), 0)
    store.do_reput()
    sms.start(0)
    assert sms.execute_on_time_up(1, 5000) == 100
    assert sms.task_offset_table[1] == 1
    assert store.do_reput() == 0
