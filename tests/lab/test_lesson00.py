"""Lesson 00 (tour): exercise answers for fixed seeds, helpers, and the notebooks of lessons 00–04."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from mqlab.lab.check import EXERCISES, check, expected
from mqlab.lab.lessons import lesson00 as L

ROOT = Path(__file__).resolve().parents[2]
STEMS = ["00_tour", "01_send_path", "02_store", "03_pull_processing", "04_long_polling"]


@pytest.mark.parametrize(
    ("ex_id", "seed", "answer"),
    [
        ("00.1", 0, 2),  # N = 5: queues hold 2, 1, 1, 1
        ("00.1", 50381, 3),  # N = 10: 3, 3, 2, 2
        ("00.2", 20521, 854),  # idle at 31, D = 821, +2 ms
        ("00.2", 50381, 1014),  # D = 981
        ("00.3", 0, [2, 2]),
        ("00.3", 3, [1, 1, 1, 1, 0]),
    ],
)
def test_exercise_answers(ex_id, seed, answer):
    """The computed answers for two seeds each (round robin over 4 queues; 1 ms hops; averagely)."""
    assert expected(ex_id, seed) == answer
    assert check(ex_id, answer, seed=seed)


def test_exercises_registered_with_hints():
    """Lesson 00 registers 00.1–00.3, each with a question and a hint."""
    for ex_id in ("00.1", "00.2", "00.3"):
        assert EXERCISES[ex_id].question and EXERCISES[ex_id].hint


def test_params_in_range():
    """Seeds pick N in 5..16, D in 100..999 ms and K in 2..5."""
    assert [L.params_00_1(s) for s in (0, 11, 12)] == [5, 16, 5]
    assert [L.params_00_2(s) for s in (0, 899, 900)] == [100, 999, 100]
    assert [L.params_00_3(s) for s in (0, 3, 4)] == [2, 5, 2]


def test_tour_lab_parks_one_pull_per_queue_and_retry_queue():
    """After the tour, 5 pulls are parked: TopicTest@0..3 and %RETRY%CG@0 (mechanisms.md "Long polling" suspend)."""
    with L.tour_lab(1) as lab:
        assert len(lab.deliveries()) == L.params_00_1(1)
        assert sorted(lab.held_pulls()["key"]) == [
            "%RETRY%CG@0", "TopicTest@0", "TopicTest@1", "TopicTest@2", "TopicTest@3",
        ]  # fmt: skip
        assert L.queues_held(lab) == {"consumer-1": 4}


def test_round_trip_and_upcoming():
    """round_trip keeps send/store/pull/consume events; upcoming hides the 18 delay timers."""
    with L.tour_lab(1) as lab:
        rt = L.round_trip(lab, 0)
        assert set(rt["component"]) >= {
            "DefaultMQProducerImpl.sendKernelImpl",
            "SendMessageProcessor.asyncSendMessage",
            "PullMessageProcessor.processRequest",
            "ConsumeMessageConcurrentlyService.ConsumeRequest.run",
        }
        assert set(rt.loc[rt["component"] == "PullMessageProcessor.processRequest", "step"]) == {
            "9"
        }
        up = L.upcoming(lab, 8)
        assert len(up) == 8
        assert not up["name"].str.startswith("ScheduleMessageService").any()
        assert "PullRequestHoldService.run" in set(up["name"])


def test_lesson_map_lists_every_lesson():
    """The map has lessons 00–14 with their RocketMQ classes (04 ↔ PullRequestHoldService)."""
    m = L.lesson_map()
    assert list(m.index) == [f"{i:02d}" for i in range(15)] and m.index.name == "lesson"
    assert list(m.columns) == ["mechanism", "RocketMQ classes"]  # no second, 0-based number
    assert m.loc["04", "RocketMQ classes"] == "PullRequestHoldService"


# -- the notebooks of lessons 00–04 (built from lessons/*.md: tests/lab/test_lesson_sources.py) --
def _built(stem):
    name = "build_lessons"
    if name not in sys.modules:  # dataclasses need the module registered while it loads
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    b = sys.modules[name]
    lesson = b.read_lesson(ROOT / "lessons" / f"{stem}.md")
    return b.build(lesson, solutions=False), b.build(lesson, solutions=True)


@pytest.mark.parametrize("stem", STEMS)
def test_notebook_rules(stem):
    """First code cell imports from mqlab only and builds the lab; exercises follow the contract."""
    learner, solution = _built(stem)
    first = next(c for c in learner.cells if c.cell_type == "code").source.splitlines()
    imports = [ln for ln in first if ln.startswith(("import ", "from "))]
    assert imports and all(ln.startswith("from mqlab") for ln in imports)
    assert 'LEARNER = "your-name"' in first and "SEED = learner_seed(LEARNER)" in first
    assert any(ln.startswith("lab = Lab(seed=SEED") for ln in first)
    for c in learner.cells:
        if c.cell_type == "code":
            assert len(c.source.splitlines()) <= 8, c.source
            assert "import" not in c.source or c is learner.cells[1]
    ids = [c.source.split()[2] for c in learner.cells if c.source.startswith("### Exercise")]
    assert 2 <= len(ids) <= 4
    for ex_id in ids:
        assert f'answer = ...  # your prediction\ncheck("{ex_id}", answer, seed=SEED)' in [
            c.source for c in learner.cells
        ]
        assert f'assert check("{ex_id}", answer, seed=SEED)' in [c.source for c in solution.cells]
    assert sum(
        c.source.startswith("answer = ...  # your prediction\n") for c in learner.cells
    ) == len(ids)
    assert any("control_panel(lab" in c.source for c in learner.cells)
    assert any("figure" in c.source for c in learner.cells if c.cell_type == "code")


def test_zoom_on_the_late_message_is_zoomed():
    """The lesson's zoom (late message sent at idle_at + D) draws [send − 5, send + 5] ms.

    Before, consumer-1's pulls parked since the start stretched the axis to 0–1014 ms."""
    from mqlab.lab import figures

    with L.tour_lab(1) as lab:
        idle_at, d = lab.now, L.params_00_2(1)
        lab.advance(d)
        lab.send("TopicTest", b"late", tags="TagA")
        sent = idle_at + d
        fig = figures.sequence_timeline(
            lab, nodes=["lab-producer", "broker-a", "consumer-1"], start_ms=sent - 5,
            end_ms=sent + 5,
        )  # fmt: skip
        assert list(fig.layout.xaxis.range) == [sent - 6, sent + 6]  # 1 ms margin each side
        for bar in (t for t in fig.data if t.type == "bar"):
            assert min(bar.base) >= sent - 5
            assert max(b + x for b, x in zip(bar.base, bar.x, strict=True)) <= sent + 5
        assert int(lab.deliveries()["t_ms"].iloc[-1]) == sent + 2 == expected("00.2", 1)
