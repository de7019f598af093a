"""How option values are read (``plugin/option_values.py``), ``--budgets`` above all."""

from __future__ import annotations

import pytest

from pytest_osworld.plugin import option_values as values_of
from pytest_osworld.plugin.option_values import (
    BUDGET_NOT_BELOW,
    BUDGET_TWICE,
    BUDGETS_PROBLEM,
    ValueProblem,
)


@pytest.mark.parametrize(
    ("value", "budgets"),
    [
        ("15,50", (15, 50)),
        ("50, 15", (15, 50)),
        (" 7 ", (7,)),
        ("1 2 3", (1, 2, 3)),
        (["5", "10,20"], (5, 10, 20)),
        ("", ()),
        (None, ()),
    ],
)
def test_budgets_are_distinct_whole_numbers_below_max_steps_in_ascending_order(value, budgets) -> None:
    assert values_of.budgets(value, 100, "default") == budgets


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("15,x", BUDGETS_PROBLEM),
        ("0", BUDGETS_PROBLEM),
        ("-5", BUDGETS_PROBLEM),
        ("2.5", BUDGETS_PROBLEM),
        ("15,100", BUDGET_NOT_BELOW.format(budget=100, max_steps=100, source="ini osworld_max_steps")),
        ("150", BUDGET_NOT_BELOW.format(budget=150, max_steps=100, source="ini osworld_max_steps")),
        ("15,15", BUDGET_TWICE.format(budget=15)),
    ],
)
def test_a_bad_budget_says_what_is_wrong_with_it(value, problem) -> None:
    with pytest.raises(ValueProblem) as raised:
        values_of.budgets(value, 100, "ini osworld_max_steps")
    assert str(raised.value) == problem


@pytest.mark.parametrize(
    ("convert", "good", "bad"),
    [
        (values_of.positive_int, [("3", 3)], ["0", "x", "1.5"]),
        (values_of.positive_float, [("0.5", 0.5)], ["0", "-1", "x"]),
        (values_of.threshold, [("0", 0.0), ("1", 1.0)], ["1.1", "-0.1"]),
        (values_of.shard, [("2/4", (2, 4)), (" 1 / 1 ", (1, 1))], ["0/2", "3/2", "1-2"]),
        (values_of.pairs, [(["a=1", " b =2=3"], {"a": "1", "b": "2=3"})], [["a"], ["=1"]]),
        (values_of.choice(("x", "y")), [("y", "y")], ["z"]),
    ],
)
def test_each_converter_reads_good_values_and_refuses_bad_ones(convert, good, bad) -> None:
    for raw, typed in good:
        assert convert(raw) == typed
    for raw in bad:
        with pytest.raises(ValueError):
            convert(raw)
