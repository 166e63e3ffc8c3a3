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


def _rows(frame: pd.DataFrame, cols: list[str]) -> list[tuple]:
    return [tuple(int(v) if isinstance(v, int | float) else v for v in r)
            for r in frame[cols].itertuples(index=False)]  # fmt: skip


DELIVERED = ["t_ms", "consumer", "queue_id", "queue_offset"]


def test_consumer_join_duplicate_depends_on_timing():
    """Section 8: the default schedule gives dup:rebalance=1 overlap=1 (queue 1's offset 0
    again at 2 026 ms, the broker's offset read as 0 at 2 024 ms); `l1 d1 l1 l1 d2 l1`
    (four frames at 5 ms) gives ok: offset 1 persisted at 2 032, read as 1 at 2 036 ms."""
    run = L.replay_schedule("consumer_join", "(default)")
    assert run.outcome == "dup:rebalance=1 overlap=1"
    assert _rows(run.deliveries, DELIVERED) == [
        (2010, "consumer-1", 1, 0), (2026, "consumer-2", 1, 0), (2030, "consumer-1", 0, 0),
        (2046, "consumer-2", 1, 1), (2050, "consumer-1", 0, 1),
    ]  # fmt: skip
    assert list(run.duplicates["cause"]) == ["rebalance overlap"]
    ev = run.events
    reads = ev[
        (ev["component"] == "RemoteBrokerOffsetStore.readOffset") & (ev["node"] == "consumer-2")
    ]
    assert [(int(t), txt.endswith(": 0")) for t, txt in zip(reads["t_ms"], reads["text"], strict=True)
            if "queueId=1" in txt] == [(2024, True)]  # fmt: skip

    slow = L.replay_schedule("consumer_join", "l1 d1 l1 l1 d2 l1")
    assert slow.outcome == "ok"
    assert _rows(slow.deliveries, DELIVERED) == [
        (2010, "consumer-1", 1, 0), (2030, "consumer-1", 0, 0), (2038, "consumer-2", 1, 1),
        (2050, "consumer-1", 0, 1),
    ]  # fmt: skip
    assert slow.duplicates.empty
    ev = slow.events
    persist = ev[(ev["component"] == "RemoteBrokerOffsetStore.persist") & (ev["t_ms"] < 2100)]
    assert [(int(t), txt) for t, txt in zip(persist["t_ms"], persist["text"], strict=True)] == [
        (2032, "commit offset 1 of MessageQueue [topic=TopicTest, brokerName=broker-a, "
               "queueId=1] (oneway)")
    ]  # fmt: skip
    reads = ev[
        (ev["component"] == "RemoteBrokerOffsetStore.readOffset") & (ev["node"] == "consumer-2")
    ]
    assert [(int(t), txt[-3:]) for t, txt in zip(reads["t_ms"], reads["text"], strict=True)
            if "queueId=1" in txt] == [(2036, ": 1")]  # fmt: skip


def test_orderly_join_waits_for_the_lock_and_still_duplicates():
    """Section 9: orderly_join is dup:rebalance=1 overlap=1; consumer-2's lock fails at 2 024,
    2 030, 22 026 ms, consumer-1 unlocks at 42 024, consumer-2 consumes offset 0 again at
    43 032 and offset 1 at 43 052 ms; ended at 20 s drain the class is pending=1 overlap=1."""
    run = L.replay_schedule("orderly_join")
    assert run.outcome == "dup:rebalance=1 overlap=1"
    assert _rows(run.deliveries, DELIVERED) == [
        (2010, "consumer-1", 1, 0), (2030, "consumer-1", 0, 0), (2050, "consumer-1", 0, 1),
        (43032, "consumer-2", 1, 0), (43052, "consumer-2", 1, 1),
    ]  # fmt: skip
    ev = run.events
    c2 = ev[ev["node"] == "consumer-2"]
    failed = c2[c2["text"].str.contains("lock Failed")]
    assert list(failed["t_ms"]) == [2024, 2030, 22026]
    c1 = ev[ev["node"] == "consumer-1"]
    assert list(c1[c1["text"].str.contains("can not unlock")]["t_ms"]) == [2024]
    persisted = c1[c1["text"].str.contains("commit offset") & (c1["t_ms"] >= 2000)]
    assert [(int(t), x) for t, x in zip(persisted["t_ms"], persisted["text"], strict=True)] == [
        (2024, "commit offset 0 of MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=1] (oneway)")
    ]  # fmt: skip
    assert list(
        c1[c1["text"].str.contains("remove unnecessary mq TopicTest/broker-a/1")]["t_ms"]
    ) == [22024]
    assert list(
        c1[c1["text"].str.contains("unlock messageQueue TopicTest/broker-a/1")]["t_ms"]
    ) == [42024]
    assert list(c2[c2["text"].str.contains("lock OK: TopicTest/broker-a/1")]["t_ms"]) == [42026]
    assert L.replay_schedule("orderly_join", drain_ms=20_000).outcome == "pending=1 overlap=1"


def test_orderly_lock_expiry_waits_past_the_60s_lock():
    """Section 9: consumer-1 consumes queue 0's offset 0 at 3 029 ms and freezes; consumer-2
    consumes queue 1 at 64 062/082/102 ms, consumer-1 the rest at 93 068/088: overlap=1."""
    run = L.replay_schedule("orderly_lock_expiry")
    assert run.outcome == "overlap=1"
    assert _rows(run.deliveries, DELIVERED) == [
        (3029, "consumer-1", 0, 0), (64062, "consumer-2", 1, 0), (64082, "consumer-2", 1, 1),
        (64102, "consumer-2", 1, 2), (93068, "consumer-1", 0, 1), (93088, "consumer-1", 0, 2),
    ]  # fmt: skip
    assert run.duplicates.empty
    ev = run.events
    c1, c2 = ev[ev["node"] == "consumer-1"], ev[ev["node"] == "consumer-2"]
    assert list(c1[c1["component"] == "RebalancePushImpl.lockAll"]["t_ms"])[:2] == [3013, 93048]
    assert int(c2["t_ms"].min()) == 3046  # consumer-2 joins (its first event)
    assert list(c2[c2["text"].str.contains("lock Failed")]["t_ms"]) == [3054, 3060, 23056, 43056]
    assert list(c2[c2["text"].str.contains("lock OK")]["t_ms"]) == [63056]
    broker = ev[(ev["node"] == "broker-a") & ev["text"].str.contains("consumer-1 locks")]
    assert int(broker[broker["t_ms"] < 90_000]["t_ms"].max()) == 3012  # last renewal
    granted = ev[(ev["node"] == "broker-a") & ev["text"].str.contains("consumer-2 locks 1/1")]
    assert (
        int(granted["t_ms"].min()) == 63055 > 3012 + 60_000
    )  # the client logs "lock OK" at 63 056


def test_replay_schedule_refuses_bad_input():
    """An unknown scenario, a negative drain and a schedule that does not fit are refused."""
    with pytest.raises(ValueError, match="no explore scenario 'nope'"):
        L.replay_schedule("nope")
    with pytest.raises(ValueError, match="drain_ms"):
        L.replay_schedule("consumer_join", drain_ms=-1)
    with pytest.raises(ValueError, match="choice 0: l5 but the latency set has 2 values"):
        L.replay_schedule("consumer_join", "l5")
