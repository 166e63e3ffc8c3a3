"""Lesson 09 (comparing runs with Spark): helpers on pandas and the exercises' answers."""

from pathlib import Path

import pytest

from mqlab.experiments import datasets
from mqlab.lab import Lab
from mqlab.lab.check import check, expected
from mqlab.lab.lessons import lesson09 as L

ROOT = Path(__file__).resolve().parents[2]


def test_spark_session_is_off_with_skip_flag(monkeypatch, capsys):
    """MQLAB_SKIP_SPARK=1: no session, a note that pandas is used; SQL cells are skipped."""
    monkeypatch.setenv("MQLAB_SKIP_SPARK", "1")
    assert L.spark_session() is None
    assert "pandas" in capsys.readouterr().out
    assert "skipped: Spark SQL needs Spark" in repr(L.sql(None, "SELECT 1"))


def test_idle_pulls_by_hand_long_polling():
    """60 s idle, long polling: 5 queues × 3 answers (20 s apart) = 15 pulls (mechanisms.md "Long polling")."""
    assert L.idle_pulls_by_hand(Lab(seed=3)) == 15


def test_polling_summary_on_the_shipped_dataset():
    """Idle: short polling 160 pulls vs long 15 in 65 s; long-polling p50 latency is 1 ms."""
    s = L.polling_summary(datasets.load_metrics("long_vs_short_polling"))
    idle = s[s["rate_per_s"] == 0].set_index("mode")["mean"]
    assert (idle["short polling"], idle["long polling"]) == (160, 15)
    assert s[s["long_polling"] & (s["rate_per_s"] == 10)]["latency_p50_ms"].item() == 1.0
    assert len(L.polling_figure(s).data) == 4


def test_churn_crash_and_flow_summaries():
    """Each comparison gives its summary and a figure from the shipped data."""
    churn = L.churn_summary(datasets.load_metrics("allocation_under_churn"))
    assert sorted(churn["strategy"].unique()) == list(L.STRATEGIES)
    assert len(L.churn_figure(churn).data) == 3
    crash = datasets.load_metrics("crash_offset_persist")
    cmp = L.crash_comparison(crash)
    assert cmp["pairs"].item() == 20 and cmp["mean_diff"].item() < 0
    fig = L.crash_figure(L.crash_pairs(crash))
    # seeds with the same two results share one line, labelled with their number (issue 28)
    # (kill, persist first) = (2, 0), (2, 1), (2, 2), (3, 1)
    assert [a.text for a in fig.layout.annotations] == ["7 seeds", "9 seeds", "3 seeds", "1 seed"]
    assert len(fig.data) == 4 + 2
    flow = L.flow_summary(datasets.load_metrics("flow_control_thresholds"))
    assert flow[flow["metric"] == "flow_control_episodes"].set_index(
        "pull_threshold_for_queue")["mean"][256] == 0  # fmt: skip


def test_fresh_sweep_runs_without_spark():
    """The fresh sweep: 4 runs (long/short × 2 seeds) as a pandas frame when spark is None."""
    m = L.run_sweep(L.fresh_sweep(11), None)
    assert list(m["run_id"]) == ["fresh-p000-s11", "fresh-p000-s12", "fresh-p001-s11",
                                 "fresh-p001-s12"]  # fmt: skip
    assert (m["pulls_issued"][2:].to_numpy() > m["pulls_issued"][:2].to_numpy()).all()


@pytest.mark.parametrize(("ex", "seed", "want"), [
    ("09.1", 0, 10.7), ("09.1", 1, 2.7), ("09.1", 2, 0.5),
    ("09.2", 0, 13.0), ("09.2", 1, 19.0), ("09.2", 2, 5.0),
    ("09.3", 0, 17),
])  # fmt: skip
def test_exercise_answers(ex, seed, want):
    """Exercise answers computed from the shipped datasets for a few seeds."""
    assert expected(ex, seed) == want
    assert check(ex, want, seed=seed)


def test_exercise_09_4_bigger_batches_fewer_pulls():
    """09.4: on a burst, pull_batch_size 32 needs far fewer pulls than 1 (negative difference)."""
    want = expected("09.4", 5)
    assert want < -50
    assert check("09.4", want, seed=5) and not check("09.4", want + 1, seed=5)


def test_exercise_09_1_asks_a_ratio_that_can_be_below_one():
    """At 10 msg/s short polling sends fewer pulls (ratio 0.5): the question asks short ÷ long,
    says what below 1 means, and the hint and prose are not only about the idle case."""
    from mqlab.lab.check import EXERCISES

    ex = EXERCISES["09.1"]
    assert "how many times more" not in ex.question
    assert "short ÷ long" in ex.question and "below 1, fewer" in ex.question
    assert "at 10 msg/s" in ex.hint
    assert [expected("09.1", s) for s in (0, 1, 2)] == [10.7, 2.7, 0.5]
    prose = Path(__file__).resolve().parents[2] / "lessons" / "09_comparing_runs_with_spark.md"
    text = prose.read_text(encoding="utf-8")
    assert "ten times more requests when\nidle" not in text
    assert "at 10 messages/s the order turns around" in text
