"""Exercise checking (mqlab.lab.check) and lesson 04's computed answers."""

from mqlab.lab.check import check, expected, learner_seed
from mqlab.lab.lessons.lesson04 import time_pull


def test_learner_seed_is_stable_and_validated():
    """The same name gives the same seed in every process (SHA-256, not hash())."""
    assert learner_seed("ada") == learner_seed(" Ada ") == 50381
    assert learner_seed("grace") != learner_seed("ada")
    import pytest

    with pytest.raises(ValueError, match="non-empty name"):
        learner_seed("")


def test_check_pass_fail_and_never_raises():
    """Right → passed; wrong → hint; placeholder, wrong type, unknown id → clear messages."""
    ok = check("04.1", 25001, seed=50381)
    assert ok and "right" in ok.message
    bad = check("04.1", 15001, seed=50381)
    assert not bad and "Hint:" in bad.message
    assert "replace the ..." in check("04.1", ..., seed=1).message
    assert "expected an int, got str" in check("04.1", "soon", seed=1).message
    assert "expected a list, got int" in check("03.1", 0, seed=1).message
    assert "no exercise '99.9'" in check("99.9", 1).message
    assert "✘" in str(bad) and "✔" in str(ok) and "color" in ok._repr_html_()


def test_long_poll_answer_times():
    """mechanisms.md "Long polling" timings: long poll answered by the first 5 s check ≥ parked + 15 s; short poll by the 1 s check."""
    t = time_pull(0, park_at=1001)  # a Lab's set-up takes a few ms, so park after it
    assert (t.parked_at, t.answered_at, t.received_at, t.code) == (1001, 20_000, 20_001, 19)
    t = time_pull(0, park_at=3382)
    assert (t.answered_at, t.status) == (20_000, "NO_MESSAGE_IN_QUEUE")
    t = time_pull(0, long_polling=False, park_at=3382)
    assert t.answered_at == 5_000
    t = time_pull(0, park_at=3382, message_at=6382)
    assert (t.code, t.received_at) == (0, 6383)  # woken at arrival, two 1 ms hops
    t = time_pull(0, park_at=3382, message_at=6382, message_tags="TagB", subscription="TagA")
    assert (t.code, t.status, t.answered_at) == (20, "NO_MATCHED_MESSAGE", 10_000)


def test_exercise_answers_depend_on_the_seed():
    """Two learners get different numbers to predict."""
    assert expected("04.1", 50381) == 25001
    assert expected("04.3", 50381) == 10383
    assert expected("04.3", 7) != expected("04.3", 50381)
