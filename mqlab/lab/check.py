"""Exercise checking: "predict, then run", with a per-learner seed and a hint.

A lesson registers exercises; a notebook cell calls ``check("04.1", answer)`` and gets a
clear pass or fail with a hint. The expected answer is *computed* by running the
mechanism (usually a small ``Lab`` with the learner's seed), never typed in, so it stays
right when the code changes, and two learners with different seeds get different
numbers to predict.

.. code-block:: python

    from mqlab.lab.check import check, learner_seed
    seed = learner_seed("ada")            # the same name always gives the same seed
    check("04.1", 20001, seed=seed)       # ✔ / ✘ with a hint

Checking never raises into the notebook: a wrong type or an unknown exercise id gives a
failed ``CheckResult`` whose message says why.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Exercise", "CheckResult", "check", "exercise", "learner_seed", "EXERCISES", "expected"]


@dataclass(frozen=True, slots=True)
class Exercise:
    """One exercise: how to compute the answer for a seed, how to compare, what to hint."""

    id: str
    question: str
    solve: Callable[[int], Any]
    hint: str
    compare: Callable[[Any, Any], bool] | None = None
    #: ``diagnose(answer, seed)``: a hint for a typical wrong answer, or None (the plain hint).
    diagnose: Callable[[Any, int], str | None] | None = None


@dataclass(slots=True)
class CheckResult:
    """The outcome of one check; shows itself as one line in a notebook."""

    exercise_id: str
    passed: bool
    message: str
    expected: Any = field(default=None, repr=False)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        mark = "✔ correct" if self.passed else "✘ not yet"
        return f"[{self.exercise_id}] {mark}: {self.message}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b42318"
        return f'<div style="color:{colour};font-family:monospace">{self}</div>'


#: Every registered exercise by id ("04.1" = lesson 04, exercise 1). Filled by the lesson
#: modules when they are imported (see ``mqlab.lab.lessons``).
EXERCISES: dict[str, Exercise] = {}


def exercise(
    id: str,
    question: str,
    hint: str,
    compare: Callable[[Any, Any], bool] | None = None,
    diagnose: Callable[[Any, int], str | None] | None = None,
):
    """Decorator: register ``solve(seed) -> answer`` as exercise ``id``.

    ``diagnose(answer, seed)`` may name the misconception behind a typical wrong answer; its
    text replaces the plain ``hint`` for that answer.
    """

    def register(solve: Callable[[int], Any]) -> Callable[[int], Any]:
        if id in EXERCISES and EXERCISES[id].solve is not solve:
            raise ValueError(f"exercise id {id!r} is registered twice")
        EXERCISES[id] = Exercise(id, question, solve, hint, compare, diagnose)
        return solve

    return register


def learner_seed(name: str) -> int:
    """A stable seed from a learner's name (SHA-256, not Python's randomised ``hash``)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("learner_seed needs a non-empty name, e.g. learner_seed('ada')")
    return (
        int.from_bytes(hashlib.sha256(name.strip().lower().encode()).digest()[:4], "big") % 100_000
    )


def _load_lessons() -> None:
    from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)


def expected(exercise_id: str, seed: int = 0) -> Any:
    """The computed answer (for solution notebooks and tests)."""
    _load_lessons()
    return EXERCISES[exercise_id].solve(seed)


def _same(answer: Any, want: Any) -> bool:
    if isinstance(want, bool) or isinstance(answer, bool):
        return answer is want or answer == want
    if isinstance(want, int | float) and isinstance(answer, int | float):
        return answer == want
    if isinstance(want, list | tuple) and isinstance(answer, list | tuple):
        return len(want) == len(answer) and all(
            _same(a, w) for a, w in zip(answer, want, strict=True)
        )
    if isinstance(want, dict) and isinstance(answer, dict):
        return want.keys() == answer.keys() and all(_same(answer[k], want[k]) for k in want)
    return answer == want


def check(exercise_id: str, answer: Any, *, seed: int = 0) -> CheckResult:
    """Compare a learner's answer with the computed one; never raises.

    Args:
        exercise_id: e.g. "04.1".
        answer: the learner's prediction (a number, a string, a list, ...).
        seed: the learner's seed (``learner_seed(name)``); the same one the lesson used.
    """
    _load_lessons()
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        known = ", ".join(sorted(EXERCISES)) or "none"
        return CheckResult(exercise_id, False, f"no exercise {exercise_id!r}; known: {known}")
    if answer is Ellipsis or answer is None:
        return CheckResult(
            exercise_id, False, "replace the ... with your prediction, then run the cell"
        )
    try:
        want = ex.solve(seed)
    except Exception as e:  # a broken exercise must not look like a wrong answer
        return CheckResult(
            exercise_id, False, f"the exercise itself failed: {type(e).__name__}: {e}"
        )
    try:
        ok = ex.compare(answer, want) if ex.compare is not None else _same(answer, want)
    except Exception as e:
        return CheckResult(
            exercise_id, False, f"could not compare {answer!r}: {e}. Hint: {ex.hint}"
        )
    if ok:
        return CheckResult(exercise_id, True, f"{answer!r} is right.", want)
    kind = type(want).__name__
    hint = ex.hint
    if ex.diagnose is not None:
        try:
            hint = ex.diagnose(answer, seed) or ex.hint
        except Exception:  # noqa: BLE001 — a diagnosis is a courtesy; the plain hint stands
            hint = ex.hint
    if type(answer) is not type(want) and not (
        isinstance(answer, int | float) and isinstance(want, int | float)
    ):
        return CheckResult(
            exercise_id,
            False,
            f"expected a {kind}, got {type(answer).__name__} {answer!r}. Hint: {hint}",
            want,
        )
    return CheckResult(exercise_id, False, f"{answer!r} is not it. Hint: {hint}", want)
