"""Hints by misconception: a typical wrong answer gets the hint that names its wrong idea.

Mirrors no RocketMQ class: this guards the exercise checker (issue 20, "hints are fixed per
exercise"). Each row is one known misconception of one exercise, the wrong answer it leads to
for a fixed seed (worked out by hand from the seed's parameters), and the start of its hint.
Owns: ``Exercise.misconceptions`` and the check message that names them. Must not know: how an
exercise computes its right answer.
"""

from __future__ import annotations

import pytest

from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)
from mqlab.lab.check import EXERCISES, Exercise, Misconception, check, exercise, wrong_answer

CASES = [
    # 00.1, seed 9: N = 14 over 4 queues → max_offset 4; 3 is N // 4 (issue 28: it was called
    # an off-by-one in offsets, which it equals by coincidence); seed 11: N = 16 → 4, and 3 is
    # the off-by-one
    ("00.1", 9, 3, "rounding N / 4 down", "N // 4 drops the remainder: the producer deals"),
    ("00.1", 11, 3, "an off-by-one in offsets", "max_offset is the offset the *next* message"),
    ("00.1", 9, 2, "the queue count before auto-creation", "TBW102 has 8 queues, but the"),
    ("00.1", 9, 14, "all messages on one queue", "the producer takes the next queue"),
    # 00.2, seed 1: idle at 31 ms, D = 101 → consumed at 134
    ("00.2", 1, 103, "counting D from time 0", "you advance D ms from the moment"),
    ("00.2", 1, 133, "forgetting the network hops", "each hop takes 1 ms"),
    ("00.2", 1, 5001, "waiting for a hold-service check", "a new message wakes the parked pull"),
    # 00.3, seed 1: K = 3 → [2, 1, 1]
    ("00.3", 1, [1, 1, 1], "forgetting the remainder", "AllocateMessageQueueAveragely gives"),
    # 01.1: seed 1 k = 2 → [2, 6]; seed 11 k = 12 → [8, 6]
    ("01.1", 1, [2, 7], "keeping PERM_INHERIT", "TBW102's perm 7 includes PERM_INHERIT"),
    ("01.1", 11, [12, 6], "taking the producer's queue count as is", "createTopicInSend"),
    ("01.1", 1, [8, 6], "taking TBW102's queue count", "TBW102's 8 queues are only the cap"),
    # 01.3, seed 1: read 6, write 4, queue id 4 → [17, 0]
    ("01.3", 1, [0, 0], "expecting auto-creation", "with autoCreateTopicEnable off"),
    ("01.3", 1, [17, 1], "checking the queue id against writeQueueNums only", "step 5 rejects"),
    # 01.4, seed 1: N = 11 → [12, 0]
    ("01.4", 1, [6, 6], "expecting the messages to spread over both brokers", "after the route"),
    # 02.1, seed 1: 138 = 91 + 6 + 9 + 32
    ("02.1", 1, 106, "leaving out the properties", "the entry stores the properties too"),
    ("02.1", 1, 115, "counting only the TAGS property", "the broker adds CLUSTER"),
    # 03.1: seed 10 = 3 messages, offset 3 → [19, 3]; seed 20 = 3 messages, offset 4 → [21, 0];
    # seed 1 = 4 messages, offset 3 → [0, 4]
    ("03.1", 10, [0, 3], "an off-by-one in offsets", "the queue's max offset is one past"),
    ("03.1", 20, [21, 4], "keeping the requested offset after OFFSET_OVERFLOW_BADLY", "an offset"),
    ("03.1", 1, [0, 4], None, None),  # the right answer: no misconception
    # 03.4: seed 1 asks offset 2 → 21; seed 2 asks offset 0 → 19 (issue 28's walk: 21 for
    # offset 0 was called "taking every empty queue for PULL_NOT_FOUND", and so was 22, a code
    # no empty queue gets)
    ("03.4", 1, [19, "NO_MESSAGE_IN_QUEUE"], "taking every empty queue for PULL_NOT_FOUND", "NO_"),
    (
        "03.4",
        2,
        [21, "NO_MESSAGE_IN_QUEUE"],
        "taking every empty queue for PULL_OFFSET_MOVED",
        "NO_",
    ),
    # 04.1, seed 1: parked at 1002 → 20001
    ("04.1", 1, 16_003, "a timer per parked pull", "nothing fires at parked + 15 000"),
    # 04.3, seed 1: parked at 1002, message at 4002 → 4003
    ("04.3", 1, 5_001, "waiting for the next hold-service check", "a matching message wakes"),
    # 05.1 / 05.2, seed 1: 6 queues, 2 consumers → AVG [3, 4, 5], BY_CIRCLE [1, 3, 5]
    ("05.1", 1, [1, 3, 5], "dealing the queues out like cards", "that is AllocateMessageQueueAv"),
    ("05.2", 1, [3, 4, 5], "a contiguous block", "that is AllocateMessageQueueAveragely (exer"),
    # 07.1, seed 1: F = 2 → levels 3, 4 = 10 s + 30 s (+ 0.1 s each) → 40; levels 1, 2 → 6
    ("07.1", 1, 6, "starting the retries at delay level 1", "the first send-back uses delay"),
    # 06.1, seed 1: batch 9, threshold 40 → 45
    ("06.1", 1, 40, "a cache that stops exactly at the threshold", "the cache grows by whole"),
    ("06.1", 1, 36, "deferring at or before the threshold", "a batch that takes the count past"),
    # 06.2, seed 1: S = 110 → 127
    ("06.2", 1, 128, "an off-by-one in offsets", "the span is last offset − first offset"),
    # 07.2, seed 1: R = 1 → [2, [2]]
    ("07.2", 1, [1, [2]], "counting only the retries", "the first delivery is not a retry"),
    ("07.2", 1, [2, [3]], "taking the delay level for the queue id", "a message at delay level"),
    # 08.1, seed 1: 6 old + 1 new, CONSUME_FROM_LAST_OFFSET → 7
    ("08.1", 1, 1, "letting consumeFromWhere decide", "consumeFromWhere only applies"),
    # 08.2, seed 1: 6 old + 1 new, 2 consumers, LAST → [2, 0]
    ("08.2", 1, [2, 2], "expecting broadcasting offsets on the broker", "a BROADCASTING consumer"),
    ("08.2", 1, [1, 0], "sharing the messages among the consumers", "BROADCASTING delivers every"),
    # 09.1: seed 1 is 1 msg/s → 2.7; seed 2 is 10 msg/s → 0.5
    ("09.1", 2, 10.7, "the idle case", "the tenfold gap is the idle case"),
    ("09.1", 1, 10, "the idle case", "the tenfold gap is the idle case"),
    ("09.1", 2, 2.1, "an upside-down ratio", "divide short polling's mean"),
    ("09.1", 1, 0.4, "an upside-down ratio", "divide short polling's mean"),
    # 09.4, seed 1: 32 minus 1 → -92.0; the sign flipped (1 minus 32) had only the generic hint
    ("09.4", 1, 92.0, "subtracting the other way round", "the difference is batch 32's"),
    ("09.4", 1, 92, "subtracting the other way round", "the difference is batch 32's"),
    # 10.1, seed 7: interval 5000, timeout 7000, send at 50 → 10002
    ("10.1", 7, 5002, "forgetting transactionTimeOut", "that is the first check round"),
    ("10.1", 7, 7052, "expecting a check the moment the timeout ends", "nothing checks at"),
    ("10.1", 7, 10000, "forgetting the two 1 ms hops", "the round at that time sends"),
    # 10.2, seed 7: interval 3000, check_max 4 → [4, 21000, TRANS_CHECK_MAX_TIME_TOPIC]
    (
        "10.2",
        7,
        [5, 24000, "TRANS_CHECK_MAX_TIME_TOPIC"],
        "counting the first check as 0",
        "the first check-back carries TRANSACTION_CHECK_TIMES 1",
    ),
    (
        "10.2",
        7,
        [4, 21000, "Orders"],
        "thinking the message is delivered or dropped",
        "a message checked too often",
    ),
    (
        "10.2",
        7,
        [4, 15000, "TRANS_CHECK_MAX_TIME_TOPIC"],
        "forgetting transactionTimeOut",
        "the first check-back waits",
    ),
    # 10.3, seed 7: restart at 9500 → [11002, 5]
    ("10.3", 7, [11002, 1], "not counting the rounds that had no producer", "the rounds with"),
    ("10.3", 7, [10002, 5], "forgetting the new producer's first heartbeat", "the broker knows"),
    ("10.3", 7, [10502, 5], "thinking the heartbeat triggers a check", "the heartbeat does not"),
    # 12.1, seed 1: ASYNC_MASTER lost after 37 answers → 7 acknowledged not on the slave
    ("12.1", 1, 0, "believing SEND_OK means the slave has the message", "an ASYNC_MASTER answers"),
    (
        "12.1",
        1,
        37,
        "believing a lost master loses everything it acknowledged",
        "the slave keeps what the master pushed",
    ),
    # 12.2, seed 1: SYNC_MASTER lost after 44 → [0, 8.0]
    (
        "12.2",
        1,
        [7, 8],
        "believing SYNC_MASTER loses what ASYNC_MASTER loses",
        "a SYNC_MASTER answers only once",
    ),
    ("12.2", 1, [0, 2], "forgetting the round trip to the slave", "each SYNC_MASTER send waits"),
    # 12.3, seed 1: 8 messages during the outage → consumed again 8
    (
        "12.3",
        1,
        0,
        "believing offsets committed to the slave are kept",
        "they never reach the master",
    ),
    # 12.4, seed 1: the push at 1 ms, the heal at 9000 → retransmitted at 12 801, appended
    # at 12 802
    (
        "12.4",
        1,
        9001,
        "believing the bytes go across the moment the link is back",
        "nothing tells the master's",
    ),
    (
        "12.4",
        1,
        9201,
        "believing the retransmission timer starts again at the heal",
        "the timer runs from",
    ),
    # 12.5, seed 1: the power cut at 47 000; the registration read at 40 001 → dropped at
    # 160 001
    ("12.5", 1, 47_001, "believing the name server learns of it at once", "that is a kill"),
    ("12.5", 1, 167_000, "starting the 120 s at the power cut", "the name server cannot"),
    ("12.5", 1, 165_000, "waiting for scanNotActiveBroker", "the scan (every 10 s)"),
    # 13.1, seed 1: body order-1 → FfXXNk4hc0zxn3WnaP6rz7CGTTI=; the header and AccessKey
    # alone, the fields unsorted (AccessKey last), the right bytes' digest in hex
    ("13.1", 1, "YkV7KYtcL7fze2ENdUB5DMzbLjg=", "signing the header only", "the body is part"),
    (
        "13.1",
        1,
        "gvF14EMEcybT6hDHMjXzQF0UZZE=",
        "signing the fields in the order they were added",
        "the hook puts the fields in a TreeMap",
    ),
    (
        "13.1",
        1,
        "15f5d7364e21734cf19f75a768feabcfb0864d32",
        "giving the digest in hex",
        "AclSigner#calSignature encodes",
    ),
    # 13.2, seed 1: default PUB → Orders, Metrics, Payments; seed 0: default DENY → Orders,
    # Metrics
    (
        "13.2",
        1,
        ["Orders", "Invoices", "Metrics", "Payments"],
        "believing SUB lets an account send",
        "a send needs PUB on the topic",
    ),
    (
        "13.2",
        1,
        ["Orders", "Invoices", "Audit", "Metrics", "Payments"],
        "believing a listed perm falls back to the default",
        "a topic listed in topicPerms",
    ),
    (
        "13.2",
        0,
        [],
        "believing the default perm applies to every topic",
        "defaultTopicPerm applies only",
    ),
    # 13.3, seed 1: saved at 2600 ms → reloaded at 5000 ms, 2400 ms later
    ("13.3", 1, 0, "believing the broker reads the file on every request", "the broker reads"),
    ("13.3", 1, 5000, "believing the 5 s start at the save", "the watcher's turns are every"),
    # 14.1 seed 0: n1 wins term 2; 14.2: SEND_OK after 4 ms, the slow link 30 ms; 14.3 seed 0:
    # 2 committed before, [3, 1]
    ("14.1", 0, ["n0", 2], "believing the first node to stand wins", "the node cut off during"),
    (
        "14.1",
        0,
        ["n1", 1],
        "believing a new leader keeps the old leader's term",
        "every node voted",
    ),
    ("14.2", 0, 34, "believing SEND_OK waits for every follower", "the leader's QuorumAckChecker"),
    ("14.3", 0, [3, 3], "believing the old leader's entries survive the heal", "after the heal"),
    ("14.3", 0, [2, 1], "believing one send makes one entry", "the producer tried twice"),
    # 11.5: the 20 walks find 3 classes, 1 of them not in the depth-8 table
    ("11.5", 0, 0, "believing a saturated table is complete", "0 takes 'saturated' for"),
    ("11.5", 0, 3, "counting every class the walks find", "that counts every class the walks"),
    # 11.6, seed 1: dup:rebalance=2 overlap=1 at L1 d3 L1 → [2, 5]; seed 0: dup:rebalance=1
    # at d4 L1 → [1, 5], at depth 8 d5 l1 → [1, 6]
    ("11.6", 1, [5, 5], "counting default choices as moves", "d<n> is n default choices"),
    ("11.6", 1, [3, 5], "counting tokens as moves", "a d<n> token is no move"),
    ("11.6", 1, [2, 4], "taking the last move's point for the depth", "choice points count from"),
    ("11.6", 0, [1, 6], "reading the depth-8 table's schedule", "that is the shortest schedule"),
    # 11.7: seed 1 found at run 76 of 1 040; seed 0 at run 6, its level ends at 69; seed 3
    # (overlap=1) at run 151, and walk 6 found it
    ("11.7", 1, 1040, "taking the search's last run", "that is the search's last run"),
    ("11.7", 0, 69, "taking the end of the class's level", "that is the run that closed"),
    ("11.7", 3, 6, "taking the walk that found the class", "that is the random walk that"),
]


@pytest.mark.parametrize(("ex_id", "seed", "answer", "name", "hint"), CASES)
def test_a_typical_wrong_answer_gets_its_misconceptions_hint(ex_id, seed, answer, name, hint):
    r = check(ex_id, answer, seed=seed)
    if name is None:
        assert r.passed and r.misconception is None
        return
    assert not r.passed
    assert r.misconception == name
    assert f"it looks like {name}. Hint: {hint}" in r.message
    assert EXERCISES[ex_id].hint not in r.message  # the specific hint, not the general one


def test_a_code_no_empty_queue_gets_is_no_known_misconception():
    """Issue 28's walk: 03.4's [22, 'NO_MESSAGE_IN_QUEUE'] (right: 21) was said to look like
    taking every empty queue for PULL_NOT_FOUND (19)."""
    r = check("03.4", [22, "NO_MESSAGE_IN_QUEUE"], seed=1)
    assert r.misconception is None
    assert r.message == f"[22, 'NO_MESSAGE_IN_QUEUE'] is not it. Hint: {EXERCISES['03.4'].hint}"


def test_other_wrong_answers_get_the_exercises_hint():
    """A wrong answer no misconception explains gets the exercise's own hint, as before."""
    r = check("00.1", 9, seed=9)  # right is 4; 9 is none of the known wrong ideas
    assert r.misconception is None
    assert r.message == f"9 is not it. Hint: {EXERCISES['00.1'].hint}"


def test_at_least_six_exercises_name_misconceptions():
    named = sorted(k for k, e in EXERCISES.items() if e.misconceptions)
    assert len(named) >= 6
    assert {c[0] for c in CASES} == set(named)  # every misconception exercise is tested here
    tested = {(c[0], c[3]) for c in CASES}
    assert tested >= {(k, m.name) for k in named for m in EXERCISES[k].misconceptions}


def test_a_misconception_predicate_that_raises_does_not_match():
    """The checker never raises: a predicate that cannot read the answer is no match."""
    m = Misconception("x", "y", lambda answer, want, seed: answer[5] == 1)
    assert m.matches(3, 4, 0) is False
    w = wrong_answer("z", "w", lambda want, seed: want + 1)
    assert w.matches(5, 4, 0) and not w.matches(6, 4, 0)


def test_exercise_registers_misconceptions():
    try:

        @exercise(
            "98.1", "q", hint="general", misconceptions=(wrong_answer("two", "h2", lambda w, s: 2),)
        )
        def _solve(seed):
            return 1

        ex = EXERCISES["98.1"]
        assert isinstance(ex, Exercise) and [m.name for m in ex.misconceptions] == ["two"]
        assert check("98.1", 2).message == "2 is not it: it looks like two. Hint: h2"
        assert check("98.1", 3).message == "3 is not it. Hint: general"
        assert check("98.1", 1).passed
    finally:
        EXERCISES.pop("98.1", None)
