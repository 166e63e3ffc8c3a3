"""Lesson 01 (send path, mechanisms.md "Send"): exercise answers for fixed seeds and the send helpers."""

from __future__ import annotations

import pytest

from mqlab.lab import Lab
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson01 as L


@pytest.mark.parametrize(
    ("ex_id", "seed", "answer"),
    [
        ("01.1", 20521, [2, 6]),  # k = 2 → min(2, 8) queues, perm 7 & ~INHERIT = 6
        ("01.1", 7, [8, 6]),  # k = 8
        ("01.1", 10, [8, 6]),  # k = 11, capped by TBW102's 8 write queues
        ("01.2", 3, 16),  # SCHEDULE_TOPIC_XXXX: msgCheck step 3 NO_PERMISSION
        ("01.2", 20521, 1),  # "order.created": illegal '.', SYSTEM_ERROR
        ("01.2", 7, 0),  # "%RETRY%CG" is a legal name
        ("01.3", 0, [17, 0]),  # read 5, write 4, queue 4 < max(4, 5)
        ("01.3", 4, [17, 1]),  # read 5, write 4, queue 5 >= 5
        ("01.4", 20521, [12, 0]),  # N = 11 later sends + the first, all on one broker
        ("01.4", 7, [18, 0]),
    ],
)
def test_exercise_answers(ex_id, seed, answer):
    """The computed answers for fixed seeds (mechanisms.md "Send")."""
    assert expected(ex_id, seed) == answer
    assert check(ex_id, answer, seed=seed)


def test_params():
    """k in 1..12; queue id always >= writeQueueNums 4; N in 10..29; names cycle through the list."""
    assert [L.params_01_1(s) for s in (0, 11, 12)] == [1, 12, 1]
    assert L.params_01_3(0) == {"read_queue_nums": 5, "write_queue_nums": 4, "queue_id": 4}
    assert L.params_01_3(4) == {"read_queue_nums": 5, "write_queue_nums": 4, "queue_id": 5}
    assert [L.params_01_4(s) for s in (0, 19, 20)] == [10, 29, 10]
    assert L.topic_name(3) == "SCHEDULE_TOPIC_XXXX" and L.topic_name(11) == "SCHEDULE_TOPIC_XXXX"


def test_send_fields_short_names():
    """SEND_MESSAGE_V2 uses docs/reference.md §2.2 short names; properties carry TAGS."""
    f = L.send_fields("T", queue_id=2, tags="TagB", default_topic_queue_nums=6)
    assert f == {"a": "PG", "b": "T", "c": "TBW102", "d": 6, "e": 2, "f": 0, "g": 0, "h": 0,
                 "i": "TAGS\x01TagB"}  # fmt: skip
    assert "i" not in L.send_fields(tags=None)


def test_send_raw_auto_creates_four_queues_perm_6():
    """The first send creates TopicTest from TBW102: 4 queues, perm 6 (docs/reference.md §7.3); offset 0."""
    with Lab(seed=1) as lab:
        out = L.outcome(L.send_raw(lab, "TopicTest", b"hello"))
        assert out == {"code": 0, "code_name": "SUCCESS", "remark": "", "queue_offset": 0}
        t = lab.topics().set_index("topic").loc["TopicTest"]
        assert (t["read_queue_nums"], t["write_queue_nums"], t["perm"]) == (4, 4, 6)
        ev = L.broker_events(lab, L.send_raw(lab, "TopicTest", b"again"))
        assert "AbstractSendMessageProcessor.msgCheck" in set(ev["component"])
        with pytest.raises(TypeError, match="body must be bytes"):
            L.send_raw(lab, "TopicTest", "text")  # type: ignore[arg-type]


def test_topic_name_table_codes_and_remarks():
    """Each name's code and remark (docs/reference.md §7.1 check order)."""
    df = L.topic_name_table(["Topic Test", "SCHEDULE_TOPIC_XXXX", "T" * 128, "ok"])
    assert list(df["code"]) == [1, 16, 1, 0]
    assert df["remark"].iloc[0].startswith("The specified topic contains illegal characters")
    assert df["remark"].iloc[1] == "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."
    assert df["remark"].iloc[2] == "The specified topic is longer than topic max length."
    assert df["topic"].iloc[2] == "TTTTTTTTTTTT… (128 chars)"


def test_auto_create_off_then_admin_create():
    """autoCreateTopicEnable off → TOPIC_NOT_EXIST 17; after UPDATE_AND_CREATE_TOPIC, SUCCESS."""
    with Lab(seed=1, broker={"auto_create_topic_enable": False}) as lab:
        first = L.outcome(L.send_raw(lab, "NewTopic"))
        assert first["code"] == 17
        assert first["remark"] == "topic[NewTopic] not exist, apply first please!"
        assert L.create_topic(lab, "NewTopic", read_queue_nums=8, write_queue_nums=4).code == 0
        assert L.send_raw(lab, "NewTopic", queue_id=7).code == 0  # 7 < max(4, 8)
        assert L.send_raw(lab, "NewTopic", queue_id=8).code == 1


def test_two_broker_pitfall():
    """The first send creates the topic on one broker; later producers all send there."""
    lab, first = L.two_broker_lab(20521, later=5)
    with lab:
        assert first == "broker-a"
        per = L.messages_per_broker(lab).set_index("broker")
        assert per.loc["broker-a", "messages"] == 6 and per.loc["broker-b", "messages"] == 0
        assert bool(per.loc["broker-a", "has_topic"]) and not bool(per.loc["broker-b", "has_topic"])
        sent = L.send_from_new_producer(lab, count=4)
        assert set(sent["broker"]) == {"broker-a"} and len(sent) == 4
        steps = list(L.route_events(lab, end_ms=100)["step"])
        assert steps[:4] == ["route", "route", "default route", "route"]


def test_allowed_chars_match_the_broker():
    """TOPIC_ALLOWED_CHARS agrees with the broker's validateTopic on every printable ASCII char."""
    with Lab(seed=1) as lab:
        for ch in "a.|%-_ Z9:":
            legal = ch in L.TOPIC_ALLOWED_CHARS
            assert (L.send_raw(lab, f"T{ch}").code == 0) == legal, ch
