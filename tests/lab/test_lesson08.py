"""Lesson 08 (offsets and consume-from-where): helpers and exact exercise answers."""

import pytest

from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson08 as L


def test_new_group_starts_at_zero_even_from_last_offset():
    """docs/reference.md §10.4: QUERY_CONSUMER_OFFSET answers 0 for a new group while min offset is 0."""
    with L.start_lab(1, old=12, new=3) as lab:
        assert len(lab.deliveries()) == 15
        assert L.committed_offset(lab, "TopicTest", 0) >= 0
        assert L.committed_offset(lab, "NoSuchTopic", 0) == -1


def test_broadcasting_keeps_offsets_in_a_local_file():
    """mechanisms.md "Offsets" §8: LocalFileOffsetStore; LAST → GET_MAX_OFFSET; the broker stores nothing."""
    with L.start_lab(1, old=10, new=5, consumers=2, group="BG",
                     message_model="BROADCASTING") as lab:  # fmt: skip
        assert len(lab.deliveries()) == 10 and lab.consumer_offsets().empty
        lo = L.local_offsets(lab, "consumer-1")
        assert lo["file"].str.endswith("127.0.0.1@consumer-1/BG/offsets.json").all()
        assert lo["offset"].sum() == 15
    with L.start_lab(1, old=2, new=1) as lab, pytest.raises(ValueError, match="clustering"):
        L.local_offsets(lab, "consumer-1")


def test_crash_between_persists_redelivers_since_the_last_one():
    """docs/reference.md §9: persist every 5 s (first at 10 s); a kill at 13.5 s redelivers what came after 10 s."""
    with L.crash_lab(1, consume_time_ms=500, kill_after_ms=13_500) as lab:
        assert L.crash_duplicates(lab) == 8
    with L.crash_lab(1, consume_time_ms=500, kill_after_ms=13_500, persist_first=True) as lab:
        assert L.crash_duplicates(lab) == 1


def test_piggybacked_commit_offsets_spare_a_fast_consumer():
    """mechanisms.md "Pull processing" step 11: every pull carries the commit offset, so a fast consumer's crash costs 0."""
    with L.steady_crash_lab(1, consume_time_ms=0) as lab:
        assert L.crash_duplicates(lab) == 0
    with L.steady_crash_lab(1, consume_time_ms=300) as lab:
        assert L.crash_duplicates(lab) > 0


@pytest.mark.parametrize(
    ("ex", "seed", "want"),
    [
        ("08.1", 7, 13),
        ("08.1", 12345, 18),
        ("08.2", 7, [2, 0]),
        ("08.2", 300, [40, 0]),
        ("08.3", 7, [6, 1]),
        ("08.3", 12345, [3, 1]),
    ],
)
def test_exercise_answers(ex, seed, want):
    """Exercises 08.1–08.3 (mechanisms.md "Where a new queue starts", mechanisms.md "Offsets", docs/reference.md §10.4, §10.12) have these exact answers."""
    assert expected(ex, seed) == want
    assert check(ex, want, seed=seed)
