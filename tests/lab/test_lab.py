"""The Lab facade: construction, requests, inspectors, faults, fork and diff."""

import pytest

from mqlab import Lab, Message, MessageQueue

SEND = {"a": "PG", "b": "TopicTest", "c": "TBW102", "d": 4, "e": 0, "f": 0, "g": 0, "h": 0}


def send(lab, body=b"x", queue_id=0, tags="TagA", broker="broker-a"):
    return lab.request(
        broker, "SEND_MESSAGE_V2", {**SEND, "e": queue_id, "i": f"TAGS\x01{tags}"}, body
    )


def test_public_entry_points():
    """docs/design.md §5: `from mqlab import Lab, Message, MessageQueue`."""
    m = Message("TopicTest", "hi", tags="TagA", keys=["k1", "k2"])
    assert (m.body, m.tags, m.keys, m.properties["WAIT"]) == (b"hi", "TagA", "k1 k2", "true")
    assert (
        str(MessageQueue("T", "broker-a", 3))
        == "MessageQueue [topic=T, brokerName=broker-a, queueId=3]"
    )
    assert sorted([MessageQueue("T", "b", 1), MessageQueue("T", "a", 2)])[0].broker_name == "a"


def test_brokers_and_inspectors():
    """Two brokers register; inspectors show topics, queues, CQ units and commit-log entries."""
    with Lab(seed=1, brokers=2) as lab:
        assert [b.broker_addr for b in lab.brokers] == ["127.0.0.1:10911", "127.0.0.1:10921"]
        assert send(lab, b"hello").code == 0
        t = lab.topics()
        assert t[["broker", "topic", "read_queue_nums", "perm_str"]].values.tolist() == [
            ["broker-a", "TopicTest", 4, "RW-"]
        ]
        assert lab.queues("TopicTest")["max_offset"].tolist() == [1, 0, 0, 0]
        cq = lab.consume_queue("TopicTest", 0)
        assert cq.values.tolist() == [[0, 0, 137, 2598919]]
        log = lab.commit_log(raw=True)
        assert (log["size"][0], log["topic"][0], log["body"][0]) == (137, "TopicTest", b"hello")
        assert len(log["raw"][0]) == 137


def test_index_inspectors():
    """index_files() / index_entries(): one file, one entry per key (UNIQ_KEY, then KEYS)."""
    from mqlab.common.message import Message
    from mqlab.store.index import index_key_hash

    with Lab(seed=1) as lab:
        msg = Message("TopicTest", b"x", keys=["k1", "k2"])
        lab.producer().send(msg)
        lab.advance(1000)
        files = lab.index_files()
        assert files[["hash_slot_count", "index_count"]].values.tolist() == [[3, 4]]
        entries = lab.index_entries()
        uniq = msg.properties["UNIQ_KEY"]
        hashes = [index_key_hash(f"TopicTest#{k}") for k in (uniq, "k1", "k2")]
        assert entries["key_hash"].tolist() == hashes
        assert entries["slot"].tolist() == [h % 5000 for h in hashes]
        assert entries["phy_offset"].tolist() == [0, 0, 0]
        assert entries["prev_index"].tolist() == [0, 0, 0]


def test_held_pull_and_timers():
    """A parked pull shows in held_pulls() and its deadline in timers()."""
    lab = Lab(seed=1)
    send(lab)
    pull = {
        "consumerGroup": "CG",
        "topic": "TopicTest",
        "queueId": 1,
        "queueOffset": 0,
        "maxMsgNums": 32,
        "sysFlag": 6,
        "commitOffset": 0,
        "suspendTimeoutMillis": 15000,
        "subscription": "*",
        "subVersion": 0,
    }
    call = lab.request("broker-a", "PULL_MESSAGE", pull)
    held = lab.held_pulls()
    assert held[["key", "pull_from_this_offset", "timeout_millis"]].values.tolist() == [
        ["TopicTest@1", 0, 15000]
    ]
    labels = lab.timers()["label"].tolist()
    assert any(lbl.startswith("suspended pull timeout broker-a TopicTest@1") for lbl in labels)
    lab.advance(20_000)
    assert call.code == 19 and lab.held_pulls().empty


def test_bad_arguments_say_why():
    """Nonsense arguments raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="brokers"):
        Lab(brokers=0)
    with pytest.raises(ValueError, match="trace_level"):
        Lab(trace_level="loud")
    with pytest.raises(ValueError, match="unknown broker or store setting"):
        Lab(broker={"no_such_field": 1})
    lab = Lab()
    with pytest.raises(ValueError, match="advance"):
        lab.advance(-5)
    with pytest.raises(ValueError, match="no broker named"):
        lab.broker("broker-z")
    with pytest.raises(ValueError, match="unknown request code"):
        lab.request("broker-a", "NOPE")
    with pytest.raises(ValueError, match="drop_rate"):
        lab.set_link(lab.raw.name, "broker-a", drop_rate=2)


def test_broker_overrides_and_restart():
    """Broker settings apply to every broker; a restart recovers from the store directory."""
    lab = Lab(seed=2, broker={"auto_create_topic_enable": False})
    assert send(lab).code == 17
    lab = Lab(seed=2)
    for i in range(3):
        send(lab, f"m{i}".encode())
    lab.restart_broker("broker-a", graceful=False)
    lab.run_until_idle()
    assert lab.queues("TopicTest")["max_offset"].tolist()[0] == 3


@pytest.mark.parametrize("graceful", [True, False])
def test_a_killed_broker_restarts_abnormally_and_forgets_unpersisted_delay_offsets(graceful):
    """A delay-level-1 message reaches TopicTest at ~1 s; the broker restarts at 2.5 s, before
    the 10 s delayOffset.json persist. Graceful: BrokerController#shutdown persists the delay
    offsets and removes the abort file. Kill: nothing is persisted, the abort file stays, the
    load is abnormal, and the schedule service delivers the message to TopicTest again."""
    lab = Lab(seed=2)
    lab.send("TopicTest", "later", delay_level=1)
    lab.advance(2500)
    assert lab.queues("TopicTest")["max_offset"].sum() == 1
    lab.restart_broker("broker-a", graceful=graceful)
    lab.advance(5000)
    load = lab.events(component="DefaultMessageStore.load")["fields"].tolist()[-1]
    assert f'"last_shutdown_normal":{str(graceful).lower()}' in load
    assert lab.queues("TopicTest")["max_offset"].sum() == (1 if graceful else 2)


def test_fork_replays_to_a_step_and_diff_finds_divergence():
    """fork(step) rebuilds the same state; diff shows where two runs part."""
    lab = Lab(seed=5)
    send(lab, b"one")
    cp = lab.checkpoint()
    send(lab, b"two")
    lab.advance(1000)
    f = lab.fork(cp)
    assert f.events_run == cp
    assert f.queues("TopicTest")["max_offset"].tolist()[0] == 1
    same = lab.fork()
    assert lab.diff(same).attrs["diverges_at"] is None
    send(f, b"different", tags="TagB")
    d = lab.diff(f)
    first = d.attrs["diverges_at"]
    assert first is not None and not d.set_index("seq").loc[first, "same"]
    with pytest.raises(ValueError, match="step must be between"):
        lab.fork(10**9)


def test_same_seed_same_trace():
    """Two labs with the same seed and calls produce byte-identical traces."""

    def run():
        lab = Lab(seed=9, trace_level="frames")
        for i in range(4):
            send(lab, f"m{i}".encode(), queue_id=i % 4)
        lab.advance(12_000)
        return lab.trace.to_jsonl()

    assert run() == run()


def test_notebook_tables_show_trace_text_whole(monkeypatch):
    """In IPython, pandas' 50-character cell cut is lifted (trace text is longer); a width the
    learner chose is kept; outside IPython nothing changes."""
    import IPython
    import pandas as pd

    import mqlab.lab as lab_pkg

    with pd.option_context("display.max_colwidth", 50):
        monkeypatch.setattr(IPython, "get_ipython", lambda: None)
        lab_pkg._full_text_in_notebook_tables()
        assert pd.get_option("display.max_colwidth") == 50
        monkeypatch.setattr(IPython, "get_ipython", lambda: object())
        lab_pkg._full_text_in_notebook_tables()
        assert pd.get_option("display.max_colwidth") == 400
    with pd.option_context("display.max_colwidth", 80):
        lab_pkg._full_text_in_notebook_tables()
        assert pd.get_option("display.max_colwidth") == 80
