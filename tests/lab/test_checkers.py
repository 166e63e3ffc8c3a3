"""Delivery checkers on runs that do and do not violate their promise."""

from mqlab import Lab
from mqlab.client.consumer.listener import ConsumeConcurrentlyStatus
from mqlab.lab.checkers import (
    check_at_least_once,
    check_queue_order,
    check_retry_timing,
    delay_table_ms,
    find_duplicates,
)


def test_clean_run_has_no_loss_and_no_duplicates():
    """No faults: every stored message delivered once; order per queue holds."""
    lab = Lab(seed=3)
    lab.push_consumer("CG", "TopicTest", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    lab.send_many("TopicTest", 40)
    lab.advance(5000)
    assert check_at_least_once(lab, "TopicTest", "CG").ok
    dup = find_duplicates(lab, "CG")
    assert dup.ok and dup.findings.empty
    assert check_queue_order(lab).ok
    assert len(lab.deliveries()) == 40


def test_lost_messages_are_reported():
    """A group that never consumed: every stored message is reported lost."""
    lab = Lab(seed=3)
    lab.send_many("TopicTest", 5)
    r = check_at_least_once(lab, "TopicTest", "nobody")
    assert not r.ok and len(r.findings) == 5 and "5 of 5" in r.summary


def test_messages_in_flight_are_not_lost():
    """8 messages, one consume thread, 1 000 ms each: after 2 500 ms three were handed to the
    listener and five wait in the ProcessQueue — in flight, not lost; later all eight."""
    lab = Lab(seed=3)
    lab.send_many("TopicTest", 8)
    lab.push_consumer(
        "CG", "TopicTest", consume_time_ms=1000, consume_thread_min=1, consume_thread_max=1
    )
    lab.advance(2500)
    r = check_at_least_once(lab, "TopicTest", "CG")
    assert r.ok
    assert r.summary == (
        "3 of 8 expected message(s) delivered, 5 still in flight (cached in a ProcessQueue), "
        "none lost"
    )
    assert list(r.findings["state"]) == ["in flight"] * 5
    lab.advance(10_000)
    r = check_at_least_once(lab, "TopicTest", "CG")
    assert r.ok and r.summary == "all 8 expected message(s) were delivered" and r.findings.empty


def test_a_killed_consumers_cache_is_lost_until_a_successor_reads_it():
    """Cached messages of a killed consumer are no longer in flight: reported lost."""
    lab = Lab(seed=3)
    lab.send_many("TopicTest", 8)
    lab.push_consumer(
        "CG", "TopicTest", consume_time_ms=1000, consume_thread_min=1, consume_thread_max=1
    )
    lab.advance(2500)
    lab.kill_consumer("consumer-1")
    r = check_at_least_once(lab, "TopicTest", "CG")
    assert not r.ok and r.summary == "5 of 8 expected message(s) never reached a listener of CG"
    assert list(r.findings["state"]) == ["lost"] * 5


def test_messages_the_subscription_filters_out_are_not_expected():
    """A TagA group is not expected to get TagB messages (TAG and SQL92 subscriptions)."""
    lab = Lab(seed=3, broker={"enable_property_filter": True})
    for i in range(6):
        lab.send("TopicTest", f"m{i}", tags="TagA" if i % 2 else "TagB")
    lab.push_consumer("CG", "TopicTest", "TagA")
    lab.push_consumer("SG", "TopicTest", "TAGS = 'TagB'", expression_type="SQL92")
    lab.advance(5000)
    for group in ("CG", "SG"):
        r = check_at_least_once(lab, "TopicTest", group)
        assert r.ok and r.findings.empty
        assert r.summary == (
            "all 3 expected message(s) were delivered; 3 not selected by the subscription"
        )


def test_crash_before_offset_persist_causes_duplicates():
    """Kill a consumer between offset persists: its successor re-reads from the last commit.

    The listener takes 100 ms, so the next pull (which piggybacks the commit offset, mechanisms.md "Pull processing"
    step 11) leaves before consumption finishes and commits the old offset.
    """
    lab = Lab(seed=4)
    lab.push_consumer(
        "CG", "TopicTest", consume_from_where="CONSUME_FROM_FIRST_OFFSET", consume_time_ms=100
    )
    lab.send_many("TopicTest", 8)
    lab.advance(12_000)  # consumed, and offsets persisted at the 10 s tick
    lab.send_many("TopicTest", 8)
    lab.advance(500)  # consumed, not yet persisted (next persist at 15 s)
    lab.kill_consumer("consumer-1")
    lab.push_consumer("CG", "TopicTest", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    lab.advance(30_000)
    assert check_at_least_once(lab, "TopicTest", "CG").ok
    dup = find_duplicates(lab, "CG")
    assert not dup.ok
    causes = set(dup.findings["cause"])
    assert causes == {"crash before offset persist"}
    assert len(dup.findings) == 8
    assert dup.findings["seq"].notna().all()


def test_persisting_before_the_kill_avoids_duplicates():
    """The same crash right after an offset persist loses nothing and repeats nothing."""
    lab = Lab(seed=4)
    lab.push_consumer(
        "CG", "TopicTest", consume_from_where="CONSUME_FROM_FIRST_OFFSET", consume_time_ms=100
    )
    lab.send_many("TopicTest", 8)
    lab.advance(12_000)
    lab.send_many("TopicTest", 8)
    lab.advance(500)
    lab.kill_consumer("consumer-1", persist_first=True)
    lab.advance(10)  # the oneway offset updates land
    lab.push_consumer("CG", "TopicTest", consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    lab.advance(30_000)
    assert check_at_least_once(lab, "TopicTest", "CG").ok
    assert find_duplicates(lab, "CG").ok


def test_retry_timing_follows_the_delay_table():
    """A listener failing 3 times: redeliveries ~10 s, 30 s, 60 s later, reconsumeTimes 1,2,3."""
    fails = {"left": 3}

    def flaky(msgs, ctx):
        if fails["left"]:
            fails["left"] -= 1
            return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    lab = Lab(seed=5)
    lab.push_consumer(
        "CG", "TopicTest", listener=flaky, consume_from_where="CONSUME_FROM_FIRST_OFFSET"
    )
    # Warm up: a new group learns its %RETRY% topic's route (created by its first heartbeat)
    # on a later route refresh; until then retries wait, exactly as with a Java consumer.
    lab.advance(40_000)
    lab.send("TopicTest", "once")
    lab.advance(150_000)
    r = check_retry_timing(lab, "CG")
    assert r.ok, r.findings
    assert r.findings["reconsume_times"].tolist() == [1, 2, 3]
    assert r.findings["expected_ms"].tolist() == [10_000, 30_000, 60_000]
    dup = find_duplicates(lab, "CG")
    assert dup.ok and set(dup.findings["cause"]) == {"retry"}


def test_delay_table_parsing():
    """messageDelayLevel parsed as RocketMQ does: 1s 5s 10s 30s 1m … 2h."""
    t = delay_table_ms()
    assert (t[1], t[3], t[5], t[18], len(t)) == (1000, 10_000, 60_000, 7_200_000, 18)
