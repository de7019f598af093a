"""Every metric parity case: the uses OSWorld's tasks make of each metric
(:mod:`parity.metric_cases_tasks`) and one made-up use of each metric no task calls
(:mod:`parity.metric_cases_synthetic`).
"""

from __future__ import annotations

from pathlib import Path

from parity.metric_cases_synthetic import synthetic_uses
from parity.metric_cases_tasks import Case, FilePool, cases_for, read_uses


def build_cases(folder: Path, files: Path) -> list[Case]:
    """All cases for every metric use of the tasks under ``folder``; files go to ``files``."""
    pool = FilePool(files)
    cases: list[Case] = []
    counts: dict[str, int] = {}
    uses = read_uses(folder)
    for use in uses + synthetic_uses({use.metric for use in uses}):
        number = counts.get(use.metric, 0)
        counts[use.metric] = number + 1
        cases.extend(cases_for(use, pool, number))
    return cases
