"""Lesson 02 (the store, docs/reference.md §4 and §6): exercise answers for fixed seeds and the store helpers."""

from __future__ import annotations

import pytest

from mqlab.lab import Lab
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson02 as L


@pytest.mark.parametrize(
    ("ex_id", "seed", "answer"),
    [
        ("02.1", 20521, 158),  # 91 + 26 + 9 + 32
        ("02.1", 50381, 168),  # 91 + 36 + 9 + 32
        ("02.2", 20521, 2598926),  # "TagH"
        ("02.2", 50381, 2598938),  # "TagT"
        ("02.3", 20521, [1024, 1789]),  # 153-byte entries, 6 per file: file 1, slot 5
        ("02.3", 50381, [2048, 2221]),  # 173-byte entries, 5 per file: file 2, slot 1
        ("02.4", 20521, 6),  # 7 × 162 bytes, 160 torn off → 6 whole
        ("02.4", 50381, 6),  # 156 torn off → 6 whole
        ("02.4", 1, 6),  # 40 torn off: past the properties into the lengths → 6 whole
        ("02.4", 19, 14),  # 15 entries, 166 torn off: the last gone, the 14th torn in its props
        ("02.4", 45, 9),  # 11 entries, 348 torn off: two gone, the 9th torn in its props
    ],
)
def test_exercise_answers(ex_id, seed, answer):
    """The computed answers for two seeds each (docs/reference.md §4.1 sizes, §6 tags code, roll-over, recovery)."""
    assert expected(ex_id, seed) == answer
    assert check(ex_id, answer, seed=seed)


def test_entry_size_and_tags_code_vectors():
    """91 + body + topic + properties (docs/reference.md §4.1); tags code vectors of docs/reference.md §6."""
    assert L.entry_size(5) == 137
    assert L.entry_size(0, "T", "") == 92
    assert len(L.PROPS_TAGA) == 32
    assert [L.tags_code(t) for t in ("TagA", "TagB", "*", "中文")] == [2598919, 2598920, 42, 646394]


def test_entry_fields_and_consume_queue_bytes():
    """The stored entry's fields and the 20-byte CQ unit of a known message."""
    with Lab(seed=1) as lab:
        L.send_raw(lab, body=b"hello")
        L.send_raw(lab, body=b"hello")
        f = L.entry_fields(lab, 1).set_index("field")
        assert f.loc["TOTALSIZE", "value"] == 137
        assert f.loc["MAGICCODE", "hex"] == "da a3 20 a7"
        assert f.loc["PHYSICALOFFSET", "value"] == 137
        assert f.loc["QUEUEOFFSET", "value"] == 1
        assert (f.loc["TOPIC", "offset"], f.loc["PROPERTIES", "size"]) == (94, 32)
        # HashMap order: CLUSTER (bucket 12) before TAGS (bucket 14), as a 4.9.3 broker writes
        assert f.loc["PROPERTIES", "value"] == "CLUSTER=DefaultCluster; TAGS=TagA"
        assert L.PROPS_TAGA == "CLUSTER\x01DefaultCluster\x02TAGS\x01TagA"
        cq = L.consume_queue_bytes(lab, "TopicTest", 0)
        assert list(cq["commit_log_offset"]) == [0, 137]
        assert cq["bytes"].iloc[1] == (
            "00 00 00 00 00 00 00 89 00 00 00 89 00 00 00 00 00 27 a8 07"
        )  # offset 137, size 137, tags code 2598919 = 0x27A807
        with pytest.raises(ValueError, match="past the 2 entries"):
            L.entry_fields(lab, 2)


def test_commit_log_files_roll_over():
    """With 1024-byte files, 153-byte entries: 6 per file, blank marker, next file named 1024."""
    with Lab(seed=1, store={"mapped_file_size_commit_log": L.ROLL_FILE_SIZE}) as lab:
        for _ in range(7):
            L.send_raw(lab, body=b"x" * 21)
        files = L.commit_log_files(lab)
        assert list(files["file"]) == ["00000000000000000000", "00000000000000001024"]
        assert list(files["wrote_position"]) == [1024, 153]
        assert list(lab.commit_log()["commit_log_offset"])[-2:] == [765, 1024]


def test_tear_tail_cuts_the_torn_entry():
    """A power cut with 40 of 5 × 162 unflushed bytes not written back: 4 entries survive,
    the consume queue (its 100 unflushed bytes lost) is rebuilt to 4, offsets continue at 4."""
    with Lab(seed=1) as lab:
        for _ in range(5):
            L.send_raw(lab, body=b"x" * 30)
        info = L.tear_tail(lab, 40)
        assert info == {"file": "00000000000000000000", "max_phy_offset_before": 810,
                        "flushed": 0, "kept": 770, "max_phy_offset_after": 648}  # fmt: skip
        assert lab.queues("TopicTest").set_index("queue_id").loc[0, "max_offset"] == 4
        ev = L.recovery_events(lab)
        assert list(ev["step"]) == ["power_cut", "power_cut", "restart", "truncate", "reput"]
        assert list(ev["component"])[:2] == ["SimDriver", "DefaultMessageStore.powerCut"]
        assert "keeps 770 of 810 bytes written (0 flushed)" in ev["text"].iloc[1]
        assert "consume queues lose 100 bytes" in ev["text"].iloc[1]
        assert (
            "torn entry at 648: declares 162 bytes, only zeros from byte 122 on"
            in (ev["text"].iloc[3])
        )
        assert "rebuilt_units=4" in ev["text"].iloc[4]
        # the client's connection from before the cut: the restarted machine resets it
        reset = L.send_raw(lab, body=b"next")
        assert (reset.sent_at, reset.done_at) == (15, 17)
        assert L.outcome(reset) == {
            "code": None, "code_name": "RemotingSendRequestException",
            "remark": "send request to <127.0.0.1:10911> failed: Connection reset by peer",
            "queue_offset": None}  # fmt: skip
        assert L.outcome(L.send_raw(lab, body=b"next"))["queue_offset"] == 4
        with pytest.raises(ValueError, match="cut_bytes"):
            L.tear_tail(lab, 0)


def test_a_kill_loses_nothing_and_a_power_cut_loses_what_was_not_flushed():
    """The two faults on the same 5 unflushed entries: a kill keeps all 810 bytes (the page
    cache outlives the process); a power cut without write-back keeps none of them."""
    with Lab(seed=1) as lab:
        for _ in range(5):
            L.send_raw(lab, body=b"x" * 30)
        assert lab.broker().message_store.commit_log.mapped_file_queue.flushed_where == 0
        new = lab.restart_broker(graceful=False)
        lab.run_until_idle()
        assert new.message_store.last_shutdown_normal is False
        assert new.message_store.get_max_phy_offset() == 810
        assert lab.queues("TopicTest").set_index("queue_id").loc[0, "max_offset"] == 5
        new = lab.restart_broker(power_cut=True)
        lab.run_until_idle()
        # the restarted store treats what it loaded as on disk: its positions were forced
        assert new.message_store.get_max_phy_offset() == 810
        L.send_raw(lab, body=b"x" * 30)
        lab.power_cut("broker-a")
        new = lab.restart_broker(graceful=False)
        lab.run_until_idle()
        assert new.message_store.get_max_phy_offset() == 810
        assert lab.queues("TopicTest").set_index("queue_id").loc[0, "max_offset"] == 5
        with pytest.raises(ValueError, match="graceful"):
            lab.restart_broker(graceful=True, power_cut=True)


def test_params():
    """Body lengths, tags and cuts come from the seed."""
    assert [L.params_02_1(s) for s in (0, 49, 50)] == [5, 54, 5]
    assert [L.params_02_2(s) for s in (0, 25, 26)] == ["TagA", "TagZ", "TagA"]
    assert L.params_02_3(0) == {"mapped_file_size_commit_log": 1024, "messages": 12, "body_len": 20}
    assert L.params_02_4(1) == {"messages": 7, "body_len": 30, "cut_bytes": 40}
    assert min(L.params_02_4(s)["cut_bytes"] for s in range(400)) == 33  # past the properties


@pytest.mark.parametrize(
    ("name", "outcome", "bytes_kept", "delivered"),
    [
        ("async_flush_power_cut", "lost=1", "keeps 0 of 206 bytes written (0 flushed)", 0),
        ("sync_flush_power_cut", "ok", "keeps 206 of 206 bytes written (206 flushed)", 1),
    ],
)
def test_power_cut_after_send_ok_loses_it_only_with_async_flush(
    name, outcome, bytes_kept, delivered
):
    """ "An acknowledged message lost": schedule `d3 F:power_cut(broker-a)` cuts the power at
    2 009 ms, the producer reads SEND_OK (queue 1, offset 0) at 2 010 ms; ASYNC_FLUSH keeps
    0 bytes (lost=1), SYNC_FLUSH all 206 (ok, delivered once)."""
    from mqlab.lab.lessons.lesson05 import replay_schedule

    run = replay_schedule(name, "d3 F:power_cut(broker-a)")
    assert run.outcome == outcome
    assert len(run.deliveries) == delivered
    ev = run.events
    cut = ev[ev["component"] == "DefaultMessageStore.powerCut"]
    assert list(cut["t_ms"]) == [2009]
    assert bytes_kept in cut["text"].iloc[0]
    sent = ev[ev["component"] == "DefaultMQProducerImpl.send"]
    assert [(int(t), x) for t, x in zip(sent["t_ms"], sent["text"], strict=True)] == [
        (2010, "send: SEND_OK to broker-a queue 1 at offset 0")
    ]


def test_print_power_cut_prints_what_the_lesson_shows(capsys):
    """The cell of "An acknowledged message lost": outcome, deliveries, the cut, the SEND_OK."""
    L.print_power_cut("async_flush_power_cut", "d3 F:power_cut(broker-a)")
    assert capsys.readouterr().out.splitlines() == [
        "async_flush_power_cut → lost=1 (0 delivered)",
        "  t=2009  broker-a: power cut: the page cache is lost; the commit log keeps 0 of 206 "
        "bytes written (0 flushed), the consume queues lose 0 bytes",
        "  t=2010  producer-1: send: SEND_OK to broker-a queue 1 at offset 0",
    ]


@pytest.mark.parametrize("seed", [1, 19, 20, 23, 24, 42, 46, 47, 20521, 50381])
def test_the_worked_answer_of_02_4_holds_for_every_kind_of_cut(seed):
    """The solutions notebook's 02.4 cell, run for seeds whose cut leaves the last entry torn
    in its properties, takes it and 32 bytes or fewer of the one before (19-23, 42-46: about
    one seed in six), or cuts deeper (1, 24, 47, ...): it gives the exercise's answer."""
    from tests.lab.test_worked_answers import worked_answers

    source = worked_answers("02_store")["02.4"]
    scope = {"L": L, "p24": L.params_02_4(seed)}
    exec(compile(source, "02.4 worked answer", "exec"), scope)
    assert scope["answer"] == expected("02.4", seed)
