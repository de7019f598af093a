"""pass@k, the Wilson interval and the repeats summary, against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from pytest_osworld.report.stats import StatsError, pass1_confidence_interval, pass_at_k, summarize_repeats


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, 1 - 3 / 5),  # 1 - C(3,1)/C(5,1)
        (2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (3, 1 - 1 / 10),  # 1 - C(3,3)/C(5,3)
        (4, 1.0),  # fewer than 4 failures: some draw of 4 always passes
        (5, 1.0),
    ],
)
def test_pass_at_k_n5_c2(k: int, expected: float) -> None:
    assert pass_at_k(5, 2, k) == pytest.approx(expected)


def test_pass_at_k_edges() -> None:
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    for bad in ((5, 6, 1), (5, 2, 0), (5, 2, 6), (0, 0, 1), (5, -1, 1)):
        with pytest.raises(StatsError):
            pass_at_k(*bad)


def test_wilson_interval_7_of_10() -> None:
    # by hand: z = 1.959964, p = 0.7, n = 10
    # centre = (0.7 + z^2/20) / (1 + z^2/10) = 0.892073 / 1.384146 = 0.644493
    # half = z / 1.384146 * sqrt(0.021 + z^2/400) = 0.247711
    low, high = pass1_confidence_interval(7, 10)
    assert low == pytest.approx(0.3968, abs=1e-4)
    assert high == pytest.approx(0.8922, abs=1e-4)


def test_wilson_interval_edges_and_levels() -> None:
    low, high = pass1_confidence_interval(0, 10)
    assert low == 0.0 and 0.0 < high < 0.35
    low, high = pass1_confidence_interval(10, 10)
    assert high == 1.0 and low > 0.65
    narrow, wide = pass1_confidence_interval(7, 10, 0.80), pass1_confidence_interval(7, 10, 0.99)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]
    for args in ((11, 10), (1, 0), (-1, 10)):
        with pytest.raises(StatsError):
            pass1_confidence_interval(*args)
    with pytest.raises(StatsError):
        pass1_confidence_interval(5, 10, 1.0)


def test_summarize_repeats() -> None:
    records = [
        ("a", True),
        ("a", False),
        ("a", True),
        ("b", False),
        ("b", False),
        ("b", False),
        ("c", True),
        ("c", True),
        ("c", True),
        ("c", True),
    ]
    summary = summarize_repeats(iter(records))
    assert (summary.tasks, summary.trials, summary.successes) == (3, 10, 6)
    assert summary.pass1 == pytest.approx(0.6)
    assert summary.pass1_ci == pass1_confidence_interval(6, 10)
    assert (summary.min_trials, summary.max_trials) == (3, 4)
    # pass@1 per task: a 2/3, b 0, c 1; pass@3: a 1, b 0, c 1
    assert summary.pass_at[1] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert summary.pass_at[2] == pytest.approx((1 + 0 + 1) / 3)  # a: 1 - C(1,2)/C(3,2) = 1
    assert set(summary.pass_at) == {1, 2, 3}
    assert summary.pass_any == pytest.approx(2 / 3) and summary.pass_all == pytest.approx(1 / 3)
    assert [(t.task_id, t.trials, t.passed) for t in summary.per_task] == [
        ("a", 3, 2),
        ("b", 3, 0),
        ("c", 4, 4),
    ]
    text = "\n".join(summary.lines())
    assert "pass@1 60.0% (6/10)" in text and "95% CI" in text
    assert math.isclose(summary.level, 0.95)
    with pytest.raises(StatsError):
        summarize_repeats([])
