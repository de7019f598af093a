"""How the metrics of one task combine into its score (OSWORLD-CONTRACT.md section 2.1).

- ``and``: 0 at the first metric that scores exactly 0, else the mean of all values.
- ``or``: 1 at the first metric that scores exactly 1, else the maximum.
Metrics after a short-circuit are recorded as "not evaluated".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["evaluated", "error", "not_evaluated"]


@dataclass(frozen=True)
class MetricOutcome:
    """What became of one metric: its value and reason, an error, or not evaluated."""

    func: str
    status: Status
    value: float | None
    reason: str
    result_desc: str = ""
    expected_desc: str = ""

    def to_json(self) -> dict[str, object]:
        """Plain data for reports and result.json."""
        return {
            "func": self.func,
            "status": self.status,
            "value": self.value,
            "reason": self.reason,
            "result": self.result_desc,
            "expected": self.expected_desc,
        }


def combine(
    conj: Literal["and", "or"],
    funcs: Sequence[str],
    run_metric: Callable[[int], MetricOutcome],
) -> tuple[float, list[MetricOutcome]]:
    """Run metrics lazily in order, short-circuiting as OSWorld does; return score and outcomes.

    ``run_metric(i)`` evaluates metric ``i``; an outcome with status ``error`` counts as 0.
    """
    outcomes: list[MetricOutcome] = []
    values: list[float] = []
    for index, func in enumerate(funcs):
        outcome = run_metric(index)
        outcomes.append(outcome)
        value = outcome.value if outcome.value is not None else 0.0
        values.append(value)
        short = (conj == "and" and value == 0.0) or (conj == "or" and value == 1.0)
        if short:
            outcomes.extend(
                MetricOutcome(name, "not_evaluated", None, f"not evaluated: '{conj}' decided at {func}")
                for name in funcs[index + 1 :]
            )
            return (0.0 if conj == "and" else 1.0), outcomes
    if not values:
        return 0.0, outcomes
    score = sum(values) / len(values) if conj == "and" else max(values)
    return score, outcomes
