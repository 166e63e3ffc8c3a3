"""A broker restarted on its store directory recovers topics, offsets and messages."""

import os
from pathlib import Path

from mqlab.broker.broker_controller import BrokerController
from mqlab.common.message_decoder import decodes
from mqlab.remoting.codes import RequestCode, ResponseCode


def restart(c, *, graceful):
    old = c.broker
    if graceful:
        c.d.stop_node(old.name)
    c.d.remove_node(old.name)
    new = BrokerController(old.broker_config, old.message_store_config)
    c.d.add_node(new)
    c.brokers[0] = new
    c.d.run_until_idle()
    return new


def test_graceful_restart_keeps_topics_offsets_and_messages(cluster):
    """Stop + start on the same dir: topics.json, consumerOffset.json and the commit log reload."""
    c = cluster()
    for i in range(10):
        c.send("TopicTest", f"m{i}".encode(), queue_id=i % 2)
    c.call(
        c.broker.broker_addr,
        RequestCode.UPDATE_CONSUMER_OFFSET,
        {"consumerGroup": "CG", "topic": "TopicTest", "queueId": "0", "commitOffset": "3"},
    )
    b = restart(c, graceful=True)
    tc = b.topic_config_manager.select_topic_config("TopicTest")
    assert (tc.read_queue_nums, tc.perm) == (4, 6)
    assert b.consumer_offset_manager.query_offset("CG", "TopicTest", 0) == 3
    assert [b.message_store.get_max_offset_in_queue("TopicTest", q) for q in range(4)] == [
        5,
        5,
        0,
        0,
    ]
    p = c.pull("TopicTest", queue_id=1, sys_flag=4)
    assert [m.body for m in decodes(p.response.body)] == [f"m{i}".encode() for i in range(1, 10, 2)]
    # Queue offsets go on from where they were.
    r = c.send("TopicTest", b"after", queue_id=1)
    assert r.ext("queueOffset") == "5"


def test_kill_with_torn_tail_keeps_every_complete_message(cluster):
    """Kill, tear the last entry in half, restart: the 9 complete messages survive, the torn one is cut."""
    c = cluster()
    for i in range(10):
        c.send("TopicTest", f"message-{i}".encode() * 5)
    store_dir = Path(c.broker.message_store_config.store_path_root_dir)
    c.d.stop_node(c.broker.name, graceful=False)
    c.broker.message_store.flush()  # the OS page cache survives a process kill
    [seg] = sorted((store_dir / "commitlog").iterdir())
    size = c.broker.message_store.get_max_phy_offset()
    last_entry = size - c.broker.message_store.look_message_by_offset(0).store_size  # equal sizes
    with open(seg, "r+b") as f:
        f.truncate(last_entry + 30)  # half of the 10th entry
    assert os.path.getsize(seg) == last_entry + 30
    b = restart(c, graceful=False)
    assert b.message_store.get_max_offset_in_queue("TopicTest", 0) == 9
    assert b.message_store.get_max_phy_offset() == last_entry
    p = c.pull("TopicTest", sys_flag=4)
    assert [m.body for m in decodes(p.response.body)] == [
        f"message-{i}".encode() * 5 for i in range(9)
    ]
    assert c.send("TopicTest", b"next").ext("queueOffset") == "9"
    assert c.send("TopicTest", b"next").code == ResponseCode.SUCCESS


def test_restart_rebuilds_deleted_consume_queues(cluster):
    """Delete consumequeue/ while stopped: the restart's reput rebuilds every unit."""
    import shutil

    c = cluster()
    for i in range(6):
        c.send("TopicTest", f"m{i}".encode(), queue_id=i % 2)
    store_dir = Path(c.broker.message_store_config.store_path_root_dir)
    c.d.stop_node(c.broker.name)
    shutil.rmtree(store_dir / "consumequeue")
    b = restart(c, graceful=False)
    assert [b.message_store.get_max_offset_in_queue("TopicTest", q) for q in range(2)] == [3, 3]
    p = c.pull("TopicTest", queue_id=1, sys_flag=4)
    assert [m.body for m in decodes(p.response.body)] == [b"m1", b"m3", b"m5"]


def test_delay_offset_persist_runs_first_at_10000_ms_then_every_interval(tmp_path):
    """ScheduleMessageService#start: scheduleAtFixedRate(persist, 10000, flushDelayOffsetInterval)
    — the first persist is at a fixed 10 s whatever the interval (docs/reference.md §8)."""
    from mqlab.broker.config import BrokerConfig
    from mqlab.runtime.sim import SimDriver
    from mqlab.store.config import MessageStoreConfig

    d = SimDriver(seed=1)
    store = MessageStoreConfig(store_path_root_dir=str(tmp_path), flush_delay_offset_interval=3000)
    d.add_node(BrokerController(BrokerConfig(), store))

    def due():
        return [t.due_ms for t in d.next_timers() if t.name == "ScheduleMessageService.persist"]

    start = d.now
    assert due() == [start + 10_000]
    d.advance(10_000)
    assert due() == [start + 13_000]
