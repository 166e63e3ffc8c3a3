"""The state digest covers a producer's retry state (``mqlab.explore.state``): a send in
flight is told apart by its attempt, the brokers it tried and its time budget used, and a
producer by each topic's queue cursor. Without them, two states that differ only there
hashed the same, though the next failure retries in one and gives up in the other."""

from __future__ import annotations

from mqlab.explore.state import digest, state_tuple
from mqlab.lab.lab import Lab


def test_a_send_in_flight_is_known_by_its_attempt_and_each_topic_by_its_cursor(tmp_path):
    lab = Lab(seed=0, brokers=2, store_dir=tmp_path)
    warm = lab.send("T", b"warm")
    assert str(warm.result.message_queue.broker_name) == "broker-a"
    assert state_tuple(lab, [("T", warm)])[2] == ((True, True, ()),)
    assert state_tuple(lab, [("T", warm)])[4] == (
        ("lab-producer", "T", 44558473), ("lab-producer", "TBW102", None)
    )  # fmt: skip
    lab.set_link("lab-producer", "broker-a", down=True)  # every attempt on broker-a fails at once
    f1 = lab.send("T", b"x", run=False)
    f2 = lab.send("T", b"y", run=False)
    seen = []
    while not (f1.done and f2.done):
        lab.driver.step()
        sent = state_tuple(lab, [("T", f1), ("T", f2)])[2]
        if not seen or seen[-1][0] != sent:
            seen.append((sent, digest(lab, [("T", f1), ("T", f2)])))
    a_b = ("broker-a", "broker-b")
    assert [s for s, _ in seen] == [
        # f1's first attempt (broker-a) failed, its second (broker-b) is in flight; f2 has
        # begun on broker-a: the same frames in flight, another retry state
        ((False, True, (1, a_b, 0)), (False, True, (0, ("broker-a",), 0))),
        ((False, True, (1, a_b, 0)), (False, True, (1, a_b, 0))),
        ((False, True, (1, a_b, 1)), (False, True, (1, a_b, 1))),  # 1 ms of the budget used
        ((False, True, (1, a_b, 2)), (False, True, (1, a_b, 2))),
        ((True, True, ()), (False, True, (1, a_b, 2))),
        ((True, True, ()), (True, True, ())),
    ]
    assert len({d for _, d in seen}) == len(seen)
    assert f1.result.message_queue.broker_name == f2.result.message_queue.broker_name == "broker-b"
