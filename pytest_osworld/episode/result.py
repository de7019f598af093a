"""The result of one task, as plain data: what ``result.json`` holds and every report reads.

The task's path (:mod:`pytest_osworld.episode.task_run`) makes it; the results folder
(:class:`pytest_osworld.report.results.TaskRecorder`) writes it; the terminal summary, JUnit,
the HTML report, merge and rescore read it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TaskResult:
    """Everything known about one task's run, as plain data."""

    task_id: str
    domain: str
    nodeid: str
    outcome: str  # passed | failed | eval_error | error | skipped
    score: float | None
    threshold: float
    end_reason: str | None
    steps: int
    max_steps: int
    duration_s: float
    infeasible: bool
    reason: str = ""
    metrics: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    evaluator_inputs: list[dict[str, Any]] = field(default_factory=list)
    instruction: str = ""
    conj: str = "and"
    repeat: int = 1
    #: Per-phase seconds (:meth:`pytest_osworld.task.timings.TaskTimings.to_json`); None when
    #: the task's clock never started (then ``result.json`` has no ``timings`` key).
    timings: dict[str, Any] | None = None
    #: With ``--budgets``: the score at each step budget, by budget as a string ("15", ...,
    #: the run's own ``max_steps`` last; :mod:`pytest_osworld.episode.budgets`); else None
    #: (then ``result.json`` has no ``scores_at`` key).
    scores_at: dict[str, dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict (without ``timings`` or ``scores_at`` when there are none)."""
        data = dict(self.__dict__)
        for key in ("timings", "scores_at"):
            if data[key] is None:
                del data[key]
        return data
