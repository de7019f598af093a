"""Statistics for repeated runs: pass@k, a confidence interval for pass@1, and a summary.

- :func:`pass_at_k` is the unbiased estimator of Chen et al. (2021), "Evaluating Large
  Language Models Trained on Code": with ``n`` trials of which ``c`` passed, the chance
  that at least one of ``k`` trials drawn without replacement passed,
  ``1 - C(n-c, k) / C(n, k)``.
- :func:`pass1_confidence_interval` is the Wilson score interval, which behaves at 0 and
  at ``trials`` successes (unlike the normal approximation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import NormalDist


class StatsError(ValueError):
    """Arguments that describe no possible set of trials (for example more passes than trials)."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``n`` trials of which ``c`` passed.

    Needs ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if n < 1 or not 0 <= c <= n:
        raise StatsError(f"pass@k needs 0 <= c <= n and n >= 1, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise StatsError(f"pass@k needs 1 <= k <= n, got k={k} with n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass1_confidence_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a success rate of ``successes`` out of ``trials``.

    ``level`` is the two-sided confidence level, in (0, 1). Returns ``(low, high)``,
    both within [0, 1].
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise StatsError(f"needs 0 <= successes <= trials and trials >= 1, got {successes}/{trials}")
    if not 0.0 < level < 1.0:
        raise StatsError(f"the confidence level must be in (0, 1), got {level}")
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / trials + z * z / (4.0 * trials * trials))
    # At 0 and at ``trials`` successes the bounds are exactly 0 and 1 (not rounding noise).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class TaskRepeats:
    """The trials of one task: how many ran and how many passed."""

    task_id: str
    trials: int
    passed: int


@dataclass(frozen=True)
class RepeatSummary:
    """Repeated runs of a set of tasks, summarised.

    ``pass1`` is the share of all trials that passed, with its Wilson interval
    ``pass1_ci`` (trials treated as independent). ``pass_at`` maps ``k`` to the mean
    over tasks of the unbiased pass@k, for every ``k`` up to the smallest number of
    trials any task had. ``pass_any`` (pass@N) is the share of tasks that passed at least
    once, ``pass_all`` the share that passed every time.
    """

    tasks: int
    trials: int
    successes: int
    pass1: float
    pass1_ci: tuple[float, float]
    level: float
    pass_at: dict[int, float]
    pass_any: float
    pass_all: float
    min_trials: int
    max_trials: int
    per_task: list[TaskRepeats] = field(default_factory=list)

    def lines(self) -> list[str]:
        """A few human-readable lines, for a terminal summary."""
        low, high = self.pass1_ci
        text = [
            f"{self.tasks} tasks, {self.trials} trials ({self.min_trials}-{self.max_trials} per task)",
            f"pass@1 {100 * self.pass1:.1f}% ({self.successes}/{self.trials}), "
            f"{100 * self.level:.0f}% CI [{100 * low:.1f}%, {100 * high:.1f}%]",
        ]
        if self.pass_at:
            text.append("  ".join(f"pass@{k} {100 * v:.1f}%" for k, v in sorted(self.pass_at.items())))
        text.append(f"passed at least once {100 * self.pass_any:.1f}%, every time {100 * self.pass_all:.1f}%")
        return text


def summarize_repeats(records: Iterable[tuple[str, bool]], level: float = 0.95) -> RepeatSummary:
    """Summarise ``(task_id, passed)`` records, one per trial, over repeated runs.

    Raises :class:`StatsError` when there are no records.
    """
    counts: dict[str, list[int]] = {}
    for task_id, passed in records:
        entry = counts.setdefault(task_id, [0, 0])
        entry[0] += 1
        entry[1] += 1 if passed else 0
    if not counts:
        raise StatsError("no trials to summarise")
    per_task = [TaskRepeats(task_id, n, c) for task_id, (n, c) in sorted(counts.items())]
    trials = sum(t.trials for t in per_task)
    successes = sum(t.passed for t in per_task)
    min_trials = min(t.trials for t in per_task)
    pass_at = {
        k: sum(pass_at_k(t.trials, t.passed, k) for t in per_task) / len(per_task)
        for k in range(1, min_trials + 1)
    }
    return RepeatSummary(
        tasks=len(per_task),
        trials=trials,
        successes=successes,
        pass1=successes / trials,
        pass1_ci=pass1_confidence_interval(successes, trials, level),
        level=level,
        pass_at=pass_at,
        pass_any=sum(1 for t in per_task if t.passed > 0) / len(per_task),
        pass_all=sum(1 for t in per_task if t.passed == t.trials) / len(per_task),
        min_trials=min_trials,
        max_trials=max(t.trials for t in per_task),
        per_task=per_task,
    )
