"""How the values of the ``osworld`` options are read: each converter takes the raw value (a
command-line string, an ini value) and returns it typed, or raises ``ValueError``.

:mod:`pytest_osworld.plugin.settings` turns a ``ValueError`` into one ``pytest.UsageError``
naming the option, the value, where it came from and what is accepted; a converter whose
problem depends on the value (:func:`budgets`) raises :class:`ValueProblem`, whose message is
that problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_SHARD_RE = re.compile(r"^\s*([0-9]+)\s*/\s*([0-9]+)\s*$")

#: ``--budgets`` is not a list of positive whole numbers.
BUDGETS_PROBLEM = "expected step budgets as whole numbers separated by commas, such as 15,50"
#: A ``--budgets`` value at or above ``--max-steps``.
BUDGET_NOT_BELOW = (
    "budget {budget} is not below --max-steps {max_steps} ({source}): the score at --max-steps is "
    "the run's own, so every budget must be smaller (raise --max-steps, or drop {budget})"
)
#: A ``--budgets`` value given twice.
BUDGET_TWICE = "budget {budget} is given twice"


class ValueProblem(ValueError):
    """A value that parses but is not accepted; the message says why."""


def positive_int(value: Any) -> int:
    """A whole number of at least 1."""
    number = int(value)
    if number < 1:
        raise ValueError
    return number


def positive_float(value: Any) -> float:
    """A number above 0."""
    number = float(value)
    if not number > 0:
        raise ValueError
    return number


def threshold(value: Any) -> float:
    """A number between 0 and 1, both included."""
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError
    return number


def choice(choices: tuple[str, ...]) -> Callable[[Any], str]:
    """A converter that accepts one of ``choices``."""

    def convert(value: Any) -> str:
        if value not in choices:
            raise ValueError
        return str(value)

    return convert


def shard(value: Any) -> tuple[int, int]:
    """``K/N`` with ``1 <= K <= N``, as ``(K, N)``."""
    match = _SHARD_RE.match(str(value))
    if match is None:
        raise ValueError
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ValueError
    return index, count


def pairs(value: Any) -> dict[str, str]:
    """``key=value`` items as a dict (a later key wins)."""
    found: dict[str, str] = {}
    for item in value:
        key, sep, val = str(item).partition("=")
        if not sep or not key.strip():
            raise ValueError
        found[key.strip()] = val
    return found


def budgets(value: Any, max_steps: int, max_steps_source: str) -> tuple[int, ...]:
    """``--budgets 15,50``: distinct positive whole numbers, each below ``max_steps``, in
    ascending order; an empty value is no budget. :class:`ValueProblem` names a budget that
    is too large or given twice."""
    if value is None:
        return ()
    text = ",".join(value) if isinstance(value, list) else str(value)
    items = [item.strip() for item in text.replace(" ", ",").split(",") if item.strip()]
    found: list[int] = []
    for item in items:
        if not item.isdigit() or int(item) < 1:
            raise ValueProblem(BUDGETS_PROBLEM)
        budget = int(item)
        if budget in found:
            raise ValueProblem(BUDGET_TWICE.format(budget=budget))
        if budget >= max_steps:
            raise ValueProblem(
                BUDGET_NOT_BELOW.format(budget=budget, max_steps=max_steps, source=max_steps_source)
            )
        found.append(budget)
    return tuple(sorted(found))
