from __future__ import annotations

import pytest

from pytest_osworld.evaluators.combine import MetricOutcome, combine


def _runner(values: list[float]):
    calls: list[int] = []

    def run(i: int) -> MetricOutcome:
        calls.append(i)
        return MetricOutcome(f"m{i}", "evaluated", values[i], f"value {values[i]}")

    return run, calls


@pytest.mark.parametrize(
    ("conj", "values", "score", "evaluated"),
    [
        ("and", [1.0, 1.0], 1.0, 2),
        ("and", [1.0, 0.5], 0.75, 2),  # the mean when nothing is zero
        ("and", [0.0, 1.0, 1.0], 0.0, 1),  # zero at the first zero
        ("and", [0.5, 0.0, 1.0], 0.0, 2),
        ("or", [0.0, 1.0, 0.0], 1.0, 2),  # one at the first one
        ("or", [0.2, 0.7, 0.4], 0.7, 3),  # else the max
        ("or", [0.0, 0.0], 0.0, 2),
    ],
)
def test_combination_rules(conj, values, score, evaluated) -> None:
    run, calls = _runner(values)
    got, outcomes = combine(conj, [f"m{i}" for i in range(len(values))], run)
    assert got == pytest.approx(score)
    assert len(calls) == evaluated
    assert len(outcomes) == len(values)
    skipped = [o for o in outcomes if o.status == "not_evaluated"]
    assert len(skipped) == len(values) - evaluated
    assert all(o.value is None and "not evaluated" in o.reason for o in skipped)


def test_error_outcome_counts_as_zero() -> None:
    def run(i: int) -> MetricOutcome:
        return MetricOutcome("m", "error", 0.0, "vm_file: missing")

    score, outcomes = combine("or", ["a", "b"], run)
    assert score == 0.0 and [o.status for o in outcomes] == ["error", "error"]
