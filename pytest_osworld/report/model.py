"""What the HTML report knows about a results directory: its task folders, read into plain data.

:func:`load_tasks` reads every task folder (``result.json``, ``traj.jsonl``, the task file's
instruction, a rescored result); :class:`TaskView` answers the questions the pages ask
(outcome, score, steps, time, category); :class:`Group` counts a set of tasks the way the
index's rate table does. Nothing here writes HTML.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.report.resume import read_result, task_folders
from pytest_osworld.report.summary import CATEGORIES
from pytest_osworld.task.timings import PHASES

#: Outcomes in display order, with their labels.
OUTCOMES: dict[str, str] = {
    "passed": "passed",
    "failed": "failed",
    "eval_error": "eval error",
    "error": "error",
    "incomplete": "incomplete",
    "skipped": "skipped",
}
#: The paper's categories in display order (``Other`` for domains outside OSWorld's ten).
CATEGORY_ORDER = ["OS", "Office", "Daily", "Professional", "Workflow", "Other"]


def number(value: Any) -> float | None:
    """``value`` as a float when it is a real number (not a bool), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class TaskView:
    """One task folder as the report sees it."""

    folder: Path
    rel: str
    config: str
    domain: str
    task_id: str
    result: dict[str, Any] | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    traj_errors: list[str] = field(default_factory=list)
    instruction: str | None = None
    instruction_note: str = ""
    rescored: dict[str, Any] | None = None

    @property
    def outcome(self) -> str:
        """One of :data:`OUTCOMES`; ``incomplete`` without a result, ``error`` if unknown."""
        if self.result is None:
            return "incomplete"
        outcome = str(self.result.get("outcome", ""))
        return outcome if outcome in OUTCOMES else "error"

    @property
    def passed(self) -> bool:
        """Whether the task passed."""
        return self.outcome == "passed"

    @property
    def score(self) -> float | None:
        """The score in ``result.json``, if any."""
        return number(self.result.get("score")) if self.result else None

    @property
    def infeasible(self) -> bool | None:
        """Whether the task is infeasible; None while it has no result."""
        return bool(self.result.get("infeasible")) if self.result else None

    @property
    def repeat(self) -> int:
        """Which run of the task this is, with ``--repeat`` (1-based)."""
        value = self.result.get("repeat") if self.result else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        name = self.folder.name
        head, _, tail = name.rpartition(".repeat-")
        return int(tail) if head and tail.isdigit() else 1

    @property
    def duration(self) -> float:
        """Seconds of the whole task (from the result, else the sum of its steps)."""
        if self.result and number(self.result.get("duration_s")) is not None:
            return float(self.result["duration_s"])
        return sum(float(s.get("duration_s") or 0.0) for s in self.steps)

    @property
    def step_count(self) -> int:
        """Steps the agent took."""
        if self.result and isinstance(self.result.get("steps"), int):
            return int(self.result["steps"])
        return len(self.steps)

    @property
    def max_steps(self) -> int | None:
        """The step budget, if known."""
        value = self.result.get("max_steps") if self.result else None
        return value if isinstance(value, int) else None

    @property
    def steps_text(self) -> str:
        """``used/budget`` steps, or just the used steps."""
        return f"{self.step_count}/{self.max_steps}" if self.max_steps else str(self.step_count)

    @property
    def end_reason(self) -> str:
        """Why the episode ended (done, fail, max_steps, ...), or empty."""
        if self.result is None:
            return ""
        return str(self.result.get("end_reason") or "")

    @property
    def reason(self) -> str:
        """The first reason to show: the result's, else the last trajectory error."""
        if self.result is not None:
            return str(self.result.get("reason") or "")
        if self.traj_errors:
            return self.traj_errors[-1]
        return "no result.json: crashed, errored before scoring, or still running"

    @property
    def category(self) -> str:
        """The paper's category of the task's domain."""
        return CATEGORIES.get(self.domain, "Other")

    @property
    def usage(self) -> dict[str, Any]:
        """The token and cost usage in ``result.json`` (empty if none)."""
        usage = self.result.get("usage") if self.result else None
        return usage if isinstance(usage, dict) else {}

    @property
    def phases(self) -> dict[str, float] | None:
        """Seconds per phase from ``result.json``'s ``timings``; None for older results."""
        timings = self.result.get("timings") if self.result else None
        phases = timings.get("phases") if isinstance(timings, dict) else None
        if not isinstance(phases, dict):
            return None
        return {name: max(0.0, number(phases.get(name)) or 0.0) for name in PHASES}

    @property
    def scores_at(self) -> dict[str, Any] | None:
        """The score at each step budget (``--budgets``), or None."""
        scores = self.result.get("scores_at") if self.result else None
        return scores if isinstance(scores, dict) else None

    @property
    def budget_kind(self) -> str:
        """How the task enters the per-budget figures: it was scored, it broke (an error, an
        incomplete task: not passed at every budget) or it did not run (skipped)."""
        if self.outcome in ("passed", "failed", "eval_error"):
            return "scored"
        return "not_run" if self.outcome == "skipped" else "broken"

    @property
    def timings(self) -> dict[str, Any]:
        """The whole ``timings`` object (empty for older results)."""
        timings = self.result.get("timings") if self.result else None
        return timings if isinstance(timings, dict) else {}


@dataclass
class Group:
    """Counts of one row of the rate table (overall, a category, a domain, ...)."""

    name: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    score_sum: float = 0.0
    scored: int = 0

    def add(self, task: TaskView) -> None:
        """Count ``task`` in this group."""
        self.counts[task.outcome] += 1
        if task.outcome not in ("skipped", "incomplete"):
            self.scored += 1
            self.score_sum += task.score or 0.0

    @property
    def total(self) -> int:
        """Every task in the group."""
        return sum(self.counts.values())

    @property
    def passed(self) -> int:
        """Tasks that passed."""
        return self.counts["passed"]

    @property
    def ran(self) -> int:
        """Everything but skips: errors and incomplete tasks count as not passed."""
        return self.total - self.counts["skipped"]

    @property
    def rate(self) -> float | None:
        """passed / ran, or None when nothing ran."""
        return self.passed / self.ran if self.ran else None

    @property
    def mean(self) -> float | None:
        """Mean score over tasks with a verdict or an error."""
        return self.score_sum / self.scored if self.scored else None


@dataclass
class Groups:
    """A set of tasks counted overall and by configuration, category, feasibility and domain."""

    overall: Group
    configs: dict[str, Group]
    categories: dict[str, Group]
    feasibility: dict[str, Group]
    domains: dict[str, Group]

    def sections(self) -> list[tuple[str, list[Group]]]:
        """The rate table's sections in display order (the first, overall, has no label)."""
        sections: list[tuple[str, list[Group]]] = [("", [self.overall])]
        if len(self.configs) > 1:
            sections.append(("by configuration", [self.configs[c] for c in sorted(self.configs)]))
        sections.append(("by category", self.ordered_categories()))
        sections.append(("by feasibility", [self.feasibility[k] for k in sorted(self.feasibility)]))
        sections.append(("by domain", [self.domains[d] for d in sorted(self.domains)]))
        return sections

    def ordered_categories(self) -> list[Group]:
        """The categories present, in the paper's order."""
        return [self.categories[c] for c in CATEGORY_ORDER if c in self.categories]


def count_groups(tasks: list[TaskView]) -> Groups:
    """Count ``tasks`` into :class:`Groups`."""
    groups = Groups(Group("overall"), {}, {}, {}, {})
    for task in tasks:
        groups.overall.add(task)
        groups.domains.setdefault(task.domain, Group(task.domain)).add(task)
        groups.categories.setdefault(task.category, Group(task.category)).add(task)
        kind = {True: "infeasible", False: "feasible", None: "unknown (incomplete)"}[task.infeasible]
        groups.feasibility.setdefault(kind, Group(kind)).add(task)
        groups.configs.setdefault(task.config, Group(task.config)).add(task)
    return groups


# --------------------------------------------------------------------------- loading


def load_tasks(results_dir: Path) -> list[TaskView]:
    """Every task folder of ``results_dir``, read (sorted by folder)."""
    return [load_task(results_dir, folder) for folder in task_folders(results_dir)]


def load_task(results_dir: Path, folder: Path) -> TaskView:
    """One task folder: its result, trajectory, instruction and rescored result."""
    rel_parts = folder.relative_to(results_dir).parts
    result = read_result(folder)
    domain = str(result.get("domain")) if result and result.get("domain") else rel_parts[-2]
    task_id = str(result.get("task_id")) if result and result.get("task_id") else rel_parts[-1]
    task = TaskView(
        folder=folder,
        rel="/".join(rel_parts),
        config=" / ".join(rel_parts[:-2]),
        domain=domain,
        task_id=task_id,
        result=result,
    )
    _load_traj(task)
    _load_instruction(task)
    rescored = folder / "result.rescored.json"
    if rescored.is_file():
        try:
            data = json.loads(rescored.read_text(encoding="utf-8"))
            task.rescored = data if isinstance(data, dict) else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            task.rescored = None
    return task


def _load_traj(task: TaskView) -> None:
    try:
        text = (task.folder / "traj.jsonl").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            task.traj_errors.append(
                f"traj.jsonl line {line_number} is not valid JSON (cut short by a crash?)"
            )
            continue
        if not isinstance(entry, dict):
            task.traj_errors.append(f"traj.jsonl line {line_number} is not an object")
        elif "Error" in entry and "step_num" not in entry:
            task.traj_errors.append(str(entry["Error"]))
        else:
            task.steps.append(entry)


def _load_instruction(task: TaskView) -> None:
    provenance = task.result.get("provenance") if task.result else None
    name = provenance.get("task_file") if isinstance(provenance, dict) else None
    if isinstance(name, str) and name:
        try:
            data = json.loads(Path(name).read_bytes())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("instruction"), str):
            task.instruction = data["instruction"]
            task.instruction_note = f"from {name}"
            return
    kept = task.result.get("instruction") if task.result else None
    if isinstance(kept, str) and kept:
        task.instruction = kept
        task.instruction_note = "from result.json"
