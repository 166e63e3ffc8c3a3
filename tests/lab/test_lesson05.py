"""Lesson 05 (rebalancing and allocation strategies): helpers and exact exercise answers."""

from pathlib import Path

import pandas as pd
import pytest

from mqlab.lab import Lab
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson05 as L

ROOT = Path(__file__).resolve().parents[2]


def test_third_consumer_converges_to_2_1_1():
    """mechanisms.md "Rebalancing" §5 table: AVG over 4 queues and 3 sorted consumers gives 2/1/1."""
    with L.group_lab(3, queues=4, consumers=3, topic="TopicTest") as lab:
        assert L.owners(lab, "TopicTest") == {
            0: "consumer-1", 1: "consumer-1", 2: "consumer-2", 3: "consumer-3"
        }  # fmt: skip
        assert L.queues_of(lab, "consumer-1", "TopicTest") == [0, 1]


def test_strategy_table_every_strategy():
    """docs/reference.md §10.10: AVG blocks, AVG_BY_CIRCLE i % C, CONFIG ignores the group, MACHINE_ROOM remainder."""
    t = L.strategy_table(5, 3).set_index("queue_id")
    assert list(t["AVG"]) == ["consumer-1", "consumer-1", "consumer-2", "consumer-2", "consumer-3"]
    assert list(t["AVG_BY_CIRCLE"]) == [
        "consumer-1", "consumer-2", "consumer-3", "consumer-1", "consumer-2"
    ]  # fmt: skip
    assert list(t["CONFIG"]) == ["consumer-1 + consumer-2 + consumer-3", "", "", "", ""]
    assert list(t["MACHINE_ROOM"]) == [
        "consumer-1", "consumer-2", "consumer-3", "consumer-1", "consumer-2"
    ]  # fmt: skip
    assert (t["CONSISTENT_HASH"] != "").all()


def test_join_moves_avg_vs_consistent_hash_on_four_queues():
    """A third consumer on 4 queues: AVG moves 1 queue, the MD5 ring (10 vnodes) moves 2."""
    before, after, moved = L.join_moves(1, queues=4, strategy_name="AVG")
    assert moved == 1 and after[3] == "consumer-3"
    _, after, moved = L.join_moves(1, queues=4, strategy_name="CONSISTENT_HASH")
    assert moved == 2 and sorted(after.values()).count("consumer-1") == 0
    assert L.moved_on_join({0: "a", 1: "b"}, {0: "a", 1: "c", 2: "c"}) == 2


def test_overlap_without_notify_lasts_until_the_20s_round():
    """mechanisms.md "Rebalancing" §5: without NOTIFY_CONSUMER_IDS_CHANGED the old consumer rebalances only every 20 s."""
    for notify, want in ((True, 2), (False, 15_009)):
        with Lab(seed=1, broker={"notify_consumer_ids_changed_enable": notify}) as lab:
            lab.send_many("TopicTest", 4)
            lab.push_consumer("CG", "TopicTest")
            lab.advance(5_000 - lab.now)
            lab.push_consumer("CG", "TopicTest")
            lab.advance(20_000)
            assert L.overlap_ms(lab) == want
            assert L.owners(lab, "TopicTest")[3] == "consumer-2"


def test_mixed_strategies_double_claim_and_orphan():
    """docs/reference.md §10.10: each consumer computes only its own share; mixed strategies overlap and orphan."""
    with L.group_lab(1, queues=4, consumers=3, topic="TopicTest") as lab:
        lab.push_consumer(
            "CG", "TopicTest", allocate_message_queue_strategy=L.strategy("CONSISTENT_HASH")
        )
        lab.advance(2_000)
        assert L.owners(lab, "TopicTest") == {
            0: "consumer-1", 1: "consumer-2 + consumer-4", 2: "consumer-3 + consumer-4"
        }  # fmt: skip
        assert L.queues_of(lab, "consumer-4", "TopicTest") == [1, 2]


def test_strategy_and_group_lab_validate():
    """Unknown strategy names and more than 9 consumers are refused, naming the value."""
    with pytest.raises(ValueError, match="strategy must be one of"):
        L.strategy("ROUND_ROBIN")
    with pytest.raises(ValueError, match="consumers must be 1..9"):
        L.group_lab(0, consumers=10)


def test_print_events_prints_full_text(capsys):
    """print_events writes one untruncated line per event and says how many were left out."""
    df = pd.DataFrame(
        {"t_ms": [5, 6], "node": ["consumer-1", "broker-a"], "component": ["C", "B"],
         "step": ["2.5", ""], "text": ["x" * 120, "second"]}
    )  # fmt: skip
    L.print_events(df, limit=1)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "t=     5  consumer-1  C 2.5: " + "x" * 120
    assert out[1] == "… and 1 more"


@pytest.mark.parametrize(
    ("ex", "seed", "want"),
    [
        ("05.1", 7, [6, 7, 8, 9, 10, 11]),
        ("05.1", 12345, [2, 3]),
        ("05.2", 7, [1, 3, 5, 7, 9, 11]),
        ("05.2", 12345, [1, 4]),
        ("05.3", 7, [5, 2]),
        ("05.3", 12345, [4, 2]),
        ("05.4", 7, 10),
        ("05.4", 12345, 17),
    ],
)
def test_exercise_answers(ex, seed, want):
    """Exercises 05.1–05.4 (mechanisms.md "Rebalancing", docs/reference.md §10.10) have these exact answers for these seeds."""
    assert expected(ex, seed) == want
    assert check(ex, want, seed=seed)
