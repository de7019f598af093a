"""The figures per step budget (``--budgets``): success rate, mean score and Wilson interval at
each budget, from the tasks' ``scores_at`` (:mod:`pytest_osworld.episode.budgets`).

Counted as the main figure is: a task that ran is in the denominator of every budget, and one
that broke (an ERROR, an incomplete task) counts as not passed, with score 0, at each. A task's
score at a budget whose replay parted from the run (``diverged``) or could not run (``error``)
is no score: that task is left out of that budget's denominator, and the row says how many were.
The terminal summary, ``pytest-osworld merge`` and the HTML report all count with
:func:`budget_rows`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pytest_osworld.report.stats import pass1_confidence_interval

#: How a task enters the budget figures: ``scored`` (it has a score, and ``scores_at`` when the
#: run had budgets), ``broken`` (it ran and broke: not passed at every budget), ``not_run``.
TaskKind = Literal["scored", "broken", "not_run"]
#: The ends of a ``scores_at`` entry that are scores.
SCORED_ENDS = frozenset({"ended_before", "cut"})
#: The heading of the budget lines in the terminal summary.
BUDGETS_HEADING = (
    "by step budget (one run, cut at each budget; a replay that parted from the run is no score):"
)


@dataclass
class BudgetRow:
    """The figures of one step budget."""

    budget: int
    #: Whether this is the run's own ``--max-steps`` (the largest budget).
    own: bool = False
    passed: int = 0
    ran: int = 0
    score_sum: float = 0.0
    #: Tasks whose replay parted from the run at this budget (not in ``ran``).
    diverged: int = 0
    #: Tasks with no score at this budget for another reason (a replay that broke, a result
    #: without this budget); not in ``ran``.
    unscored: int = 0

    @property
    def label(self) -> str:
        """``15 steps``, or ``100 steps (max)`` for the run's own budget."""
        return f"{self.budget} step{'' if self.budget == 1 else 's'}" + (" (max)" if self.own else "")

    @property
    def rate(self) -> float | None:
        """passed / ran, or None when no task has a score here."""
        return self.passed / self.ran if self.ran else None

    @property
    def mean(self) -> float | None:
        """The mean score of the tasks counted here, or None."""
        return self.score_sum / self.ran if self.ran else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The Wilson 95% interval of the success rate, or None."""
        return pass1_confidence_interval(self.passed, self.ran) if self.ran else None

    @property
    def not_counted(self) -> str:
        """``1 diverged, 2 not scored``, or '' when every task is counted."""
        parts = [f"{self.diverged} diverged"] if self.diverged else []
        parts += [f"{self.unscored} not scored"] if self.unscored else []
        return ", ".join(parts)

    def line(self) -> str:
        """The row as the terminal summary prints it."""
        if not self.ran:
            rate, mean, figures = "    -", "  -  ", "no score"
        else:
            low, high = self.interval or (0.0, 0.0)
            rate, mean = f"{100.0 * (self.rate or 0.0):5.1f}%", f"{self.mean or 0.0:.3f}"
            figures = f"{self.passed}/{self.ran} passed, 95% CI [{100 * low:.1f}%, {100 * high:.1f}%]"
        extra = f"; {self.not_counted}" if self.not_counted else ""
        return f"  {self.label:<22} {rate}  mean {mean}  ({figures}{extra})"


def budget_keys(scores_at: Any) -> list[int]:
    """The budgets of one ``scores_at`` object, ascending (none when it is not one)."""
    if not isinstance(scores_at, dict):
        return []
    return sorted(int(key) for key in scores_at if str(key).isdigit())


def budget_rows(tasks: Iterable[tuple[TaskKind, Any]]) -> list[BudgetRow]:
    """One row per budget found in the tasks' ``scores_at`` (``(kind, scores_at)`` pairs),
    ascending; empty when no task has budgets."""
    tasks = list(tasks)
    budgets = sorted({k for _, scores_at in tasks for k in budget_keys(scores_at)})
    if not budgets:
        return []
    rows = {k: BudgetRow(k, own=k == budgets[-1]) for k in budgets}
    for kind, scores_at in tasks:
        if kind == "not_run":
            continue
        for budget, row in rows.items():
            entry = scores_at.get(str(budget)) if isinstance(scores_at, dict) else None
            if kind == "broken" and not isinstance(entry, dict):
                row.ran += 1
            elif not isinstance(entry, dict):
                row.unscored += 1
            elif entry.get("end") in SCORED_ENDS and _number(entry.get("score")) is not None:
                row.ran += 1
                row.passed += bool(entry.get("passed"))
                row.score_sum += _number(entry.get("score")) or 0.0
            elif entry.get("end") == "diverged":
                row.diverged += 1
            else:
                row.unscored += 1
    return [rows[k] for k in budgets]


def summary_scores(scores_at: Any) -> dict[str, dict[str, Any]]:
    """``scores_at`` cut down to what the figures need (score, passed, end per budget): the
    plain data a task's report carries to the xdist controller."""
    if not isinstance(scores_at, dict):
        return {}
    kept = {}
    for key, entry in scores_at.items():
        if isinstance(entry, dict):
            kept[str(key)] = {name: entry.get(name) for name in ("score", "passed", "end")}
    return kept


def budget_lines(tasks: Iterable[tuple[TaskKind, Any]]) -> list[str]:
    """The terminal summary's lines per budget (none without budgets)."""
    rows = budget_rows(tasks)
    if not rows:
        return []
    return [BUDGETS_HEADING, *(row.line() for row in rows)]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
