"""The terminal summary: success rate and mean score overall, per domain and per category.

Every task that ran counts in the denominator of its group; errors and skips are shown
apart and count as 0 in the success rate (a crash is never a silent absence).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_osworld.report.budget_figures import TaskKind, budget_lines
from pytest_osworld.report.omniact_figures import blocks_of, figure_lines
from pytest_osworld.report.stats import summarize_repeats

if TYPE_CHECKING:
    import pytest

#: The paper's categories by domain.
CATEGORIES: dict[str, str] = {
    "os": "OS",
    "libreoffice_calc": "Office",
    "libreoffice_impress": "Office",
    "libreoffice_writer": "Office",
    "chrome": "Daily",
    "vlc": "Daily",
    "thunderbird": "Daily",
    "vs_code": "Professional",
    "gimp": "Professional",
    "multi_apps": "Workflow",
}


#: The heading of the summary section (the terminal's, and a merge's ``summary.txt``).
SUMMARY_TITLE = "OSWorld summary"

#: The pytest verdict a ``result.json`` outcome stands for, unless the result says otherwise
#: in ``pytest_outcome`` (an xfail, a strict xpass, an error in teardown).
RESULT_VERDICTS: dict[str, str] = {
    "passed": "passed",
    "failed": "failed",
    "eval_error": "failed",
    "error": "error",
    "skipped": "skipped",
}


@dataclass(frozen=True)
class TaskRecord:
    """One task's final state, as the summary needs it."""

    nodeid: str
    domain: str
    outcome: str  # passed | failed | error | skipped | xfailed | xpassed
    score: float | None
    infeasible: bool
    #: The task id, which the repeats' statistics group by ("" means: the node id).
    task_id: str = ""
    #: An OmniACT item's ``omniact`` object (both scorings' figures, its prediction), else None.
    omniact: dict[str, Any] | None = field(default=None, compare=False)
    #: With ``--budgets``: the task's score at each step budget (``result.json``'s ``scores_at``).
    scores_at: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def budget_kind(self) -> TaskKind:
        """How the task enters the per-budget figures (:func:`~.budget_figures.budget_rows`)."""
        if self.outcome in ("passed", "failed"):
            return "scored"
        return "broken" if self.outcome == "error" else "not_run"


def verdict_of(report: pytest.TestReport) -> str | None:
    """The summary's outcome of one report: passed, failed, error, skipped, xfailed, xpassed;
    None for a passing setup or teardown (they say nothing about the task)."""
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    if report.skipped:
        return "skipped"
    if report.failed:
        return "error" if report.when != "call" else "failed"
    if report.when == "call":
        return "passed"
    return None


def result_verdict(result: dict[str, Any]) -> str:
    """The pytest verdict of a ``result.json``: its ``pytest_outcome``, else its outcome's."""
    kept = result.get("pytest_outcome")
    if isinstance(kept, str) and kept:
        return kept
    return RESULT_VERDICTS.get(str(result.get("outcome")), "error")


def record_of_result(result: dict[str, Any]) -> TaskRecord:
    """The summary's record of one ``result.json`` (what its run's terminal summary counted)."""
    score = result.get("score")
    task_id = str(result.get("task_id", ""))
    return TaskRecord(
        nodeid=str(result.get("nodeid") or task_id),
        domain=str(result.get("domain", "")),
        outcome=result_verdict(result),
        score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
        infeasible=bool(result.get("infeasible")),
        task_id=task_id,
        omniact=result["omniact"] if isinstance(result.get("omniact"), dict) else None,
        scores_at=result["scores_at"] if isinstance(result.get("scores_at"), dict) else None,
    )


@dataclass
class Group:
    """Counts for one row of the summary."""

    name: str
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0
    score_sum: float = 0.0
    scored: int = 0
    members: list[str] = field(default_factory=list)

    def add(self, record: TaskRecord) -> None:
        """Count ``record`` in this group."""
        self.total += 1
        if record.outcome == "passed":
            self.passed += 1
        elif record.outcome == "failed":
            self.failed += 1
        elif record.outcome == "error":
            self.errors += 1
        elif record.outcome == "skipped":
            self.skipped += 1
        elif record.outcome in ("xfailed", "xpassed"):
            self.xfailed += 1
        if record.outcome in ("passed", "failed", "error"):
            self.scored += 1
            self.score_sum += record.score or 0.0

    @property
    def ran(self) -> int:
        """Tasks that ran to a verdict or broke (skips and known-broken excluded)."""
        return self.passed + self.failed + self.errors

    def collected_row(self) -> str:
        """The rate over every collected task, skipped and known-broken ones scoring 0.

        The figure comparable with a paper's, which divides by the whole benchmark.
        """
        rate = f"{100.0 * self.passed / self.total:5.1f}%" if self.total else "    -"
        mean = f"{self.score_sum / self.total:.3f}" if self.total else "  -  "
        name = f"all {self.total} collected"
        return (
            f"  {name:<22} {rate}  mean {mean}  "
            f"({self.passed}/{self.total} passed; skipped and xfail tasks count as 0)"
        )

    def row(self) -> str:
        """One formatted line."""
        rate = f"{100.0 * self.passed / self.ran:5.1f}%" if self.ran else "    -"
        mean = f"{self.score_sum / self.scored:.3f}" if self.scored else "  -  "
        return (
            f"  {self.name:<22} {rate}  mean {mean}  "
            f"({self.passed}/{self.ran} passed, {self.failed} failed, {self.errors} errors, "
            f"{self.skipped} skipped{f', {self.xfailed} xfail' if self.xfailed else ''})"
        )


#: Domains of other benchmarks, summarised on their own rows and never in OSWorld's overall.
SEPARATE_BENCHMARKS = {"omniact": "OmniACT (action score)"}


def summarize(records: Iterable[TaskRecord]) -> list[str]:
    """The summary lines for a set of task records.

    OSWorld tasks are summarised overall, by category, domain and feasibility; other
    benchmarks (OmniACT) get their own lines and never enter OSWorld's figures.
    """
    records = list(records)
    if not records:
        return []
    lines: list[str] = []
    osworld = [r for r in records if r.domain not in SEPARATE_BENCHMARKS]
    if osworld:
        lines += _osworld_lines(osworld)
    for domain, title in SEPARATE_BENCHMARKS.items():
        group = Group(title)
        for record in records:
            if record.domain == domain:
                group.add(record)
        if group.total:
            lines += [f"{title.split(' ')[0]}, separately:", group.row()]
            if domain == "omniact":
                lines += figure_lines(blocks_of(r.omniact for r in records if r.domain == domain))
    return lines


def summary_lines(records: Iterable[TaskRecord], repeat: int = 1) -> list[str]:
    """What the terminal's "OSWorld summary" section prints above the results folder:
    :func:`summarize`, then with ``repeat`` > 1 pass@1, its interval and pass@k."""
    records = list(records)
    lines = summarize(records)
    if not lines or repeat <= 1:
        return lines
    trials = [
        (record.task_id or record.nodeid, record.outcome == "passed")
        for record in records
        if record.outcome in ("passed", "failed", "error")
    ]
    if trials:
        lines.append(f"repeats ({repeat} runs of each task):")
        lines += [f"  {line}" for line in summarize_repeats(trials).lines()]
    return lines


def _osworld_lines(records: list[TaskRecord]) -> list[str]:
    overall = Group("overall")
    domains: dict[str, Group] = {}
    categories: dict[str, Group] = {}
    feasibility = {"feasible": Group("feasible"), "infeasible": Group("infeasible")}
    for record in records:
        overall.add(record)
        domains.setdefault(record.domain, Group(record.domain)).add(record)
        category = CATEGORIES.get(record.domain, "Other")
        categories.setdefault(category, Group(category)).add(record)
        feasibility["infeasible" if record.infeasible else "feasible"].add(record)
    lines = ["success rate (passed / ran; errors count as failures) and mean score:", overall.row()]
    if overall.skipped or overall.xfailed:
        lines.append(overall.collected_row())
    lines.append("by category:")
    order = ["OS", "Office", "Daily", "Professional", "Workflow", "Other"]
    lines += [categories[c].row() for c in order if c in categories]
    lines.append("by domain:")
    lines += [domains[d].row() for d in sorted(domains)]
    lines.append("by feasibility:")
    lines += [g.row() for g in feasibility.values() if g.total]
    lines += budget_lines((r.budget_kind, r.scores_at) for r in records)
    return lines
