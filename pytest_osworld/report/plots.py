"""The report's charts, computed from task results (the drawing is :mod:`.svg`'s).

Success rates by domain and by category with Wilson 95% intervals, the score
distribution, steps used per task, time per phase (per task and for the whole run, from
``result.json``'s optional ``timings``), pass@k curves for repeated runs, and one task's
own time per phase and per step.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pytest_osworld.report.budget_figures import BudgetRow, TaskKind, budget_rows
from pytest_osworld.report.model import Group, Groups, TaskView, number
from pytest_osworld.report.stats import RepeatSummary, pass1_confidence_interval, summarize_repeats
from pytest_osworld.report.svg import (
    FAIL,
    PALETTE,
    PASS,
    SERIES,
    Chart,
    Column,
    RateRow,
    bar_chart,
    column_chart,
    line_chart,
    rate_chart,
)
from pytest_osworld.task.timings import PHASES

#: Phase colours, in :data:`~pytest_osworld.task.timings.PHASES` order.
PHASE_COLOURS = dict(zip(PHASES, PALETTE, strict=True))
#: Outcomes a repeated trial counts with (skipped and incomplete runs are not trials).
TRIAL_OUTCOMES = frozenset({"passed", "failed", "eval_error", "error"})
#: Most columns the steps histogram draws before it groups step counts into bins.
MAX_STEP_COLUMNS = 40
#: Most tasks the per-task time chart draws (the longest ones) before it gets unreadable.
MAX_PHASE_COLUMNS = 60


def wilson_table(counts: Iterable[tuple[int, int]]) -> dict[tuple[int, int], tuple[float, float]]:
    """The Wilson 95% interval of every ``(passed, ran)`` with ``ran > 0``."""
    return {(p, n): pass1_confidence_interval(p, n) for p, n in counts if n > 0}


def rate_rows(groups: list[Group]) -> list[RateRow]:
    """One :class:`RateRow` per group (passed of ran)."""
    return [RateRow(g.name, [(g.passed, g.ran)]) for g in groups]


def rate_plot(key: str, title: str, groups: list[Group]) -> Chart:
    """Success rate of each group, with its Wilson interval."""
    rows = rate_rows(groups)
    return rate_chart(key, title, rows, ["success rate"], wilson_table(c for r in rows for c in r.counts))


def score_bins(scores: list[float]) -> list[tuple[str, int]]:
    """Scores counted in twelve bins: exactly 0, ten tenths of (0, 1), and 1 (or more)."""
    bins = [("0", 0)] + [(f"{i / 10:.1f}-{(i + 1) / 10:.1f}", 0) for i in range(10)] + [("1", 0)]
    counts = [0] * len(bins)
    for score in scores:
        if score <= 0:
            counts[0] += 1
        elif score >= 1:
            counts[-1] += 1
        else:
            counts[1 + min(9, math.floor(score * 10))] += 1
    return [(label, count) for (label, _), count in zip(bins, counts, strict=True)]


def score_plot(tasks: list[TaskView]) -> Chart:
    """How many tasks got each score."""
    scores = [t.score for t in tasks if t.score is not None]
    columns = [
        Column(label, [float(count)], f"score {label}: {count} task{'s' if count != 1 else ''}")
        for label, count in score_bins(scores)
    ]
    return column_chart("scores", "Score distribution", columns, [("tasks", SERIES[0])], "tasks")


def step_columns(tasks: list[TaskView]) -> list[Column]:
    """Tasks by steps used, split into passed and not passed (bins when the range is wide)."""
    ran = [t for t in tasks if t.outcome not in ("skipped", "incomplete")]
    if not ran:
        return []
    top = max(max(t.step_count for t in ran), max((t.max_steps or 0) for t in ran))
    width = max(1, math.ceil((top + 1) / MAX_STEP_COLUMNS))
    columns = []
    for start in range(0, top + 1, width):
        end = start + width - 1
        members = [t for t in ran if start <= t.step_count <= end]
        passed = sum(1 for t in members if t.passed)
        label = str(start) if width == 1 else f"{start}-{end}"
        tip = f"{label} steps: {len(members)} tasks, {passed} passed, {len(members) - passed} not passed"
        columns.append(Column(label, [float(passed), float(len(members) - passed)], tip))
    return columns


def steps_plot(tasks: list[TaskView]) -> Chart:
    """How many steps tasks used, passed and not passed apart."""
    segments = [("passed", PASS), ("not passed", FAIL)]
    return column_chart("steps", "Steps used per task", step_columns(tasks), segments, "tasks")


def seconds_text(value: float) -> str:
    """A time for a chart label: ``0 s``, ``44 ms``, ``2.5 s`` or ``12.0 min``."""
    if value <= 0:
        return "0 s"
    if value < 1:
        return f"{1000 * value:.0f} ms"
    return f"{value:.1f} s" if value < 600 else f"{value / 60:.1f} min"


def phase_plot(tasks: list[TaskView], most: int = MAX_PHASE_COLUMNS) -> Chart | None:
    """Each task's time as a column stacked by phase; None when no result has timings.

    With more than ``most`` timed tasks, only the ``most`` longest are drawn (in run order).
    """
    timed = [(t, p) for t in tasks if (p := t.phases) is not None]
    if not timed:
        return None
    title = "Time per task, by phase"
    if len(timed) > most:
        longest = sorted(range(len(timed)), key=lambda i: -sum(timed[i][1].values()))[:most]
        timed = [timed[i] for i in sorted(longest)]
        title += f" (the {most} longest of {len(tasks)} tasks)"
    columns = []
    for task, phases in timed:
        parts = ", ".join(f"{name} {seconds_text(phases[name])}" for name in PHASES if phases[name] > 0)
        tip = f"{task.domain}/{task.task_id}: {seconds_text(sum(phases.values()))} ({parts or 'no time'})"
        columns.append(Column(task.task_id, [round(phases[name], 3) for name in PHASES], tip))
    segments = [(name, PHASE_COLOURS[name]) for name in PHASES]
    return column_chart("phases", title, columns, segments, "seconds", unit=" s", height=300)


def phase_totals(tasks: list[TaskView]) -> dict[str, float] | None:
    """Seconds per phase summed over the tasks with timings; None when none has them."""
    totals = dict.fromkeys(PHASES, 0.0)
    found = False
    for task in tasks:
        phases = task.phases
        if phases is None:
            continue
        found = True
        for name in PHASES:
            totals[name] += phases[name]
    return totals if found else None


def phase_breakdown_plot(tasks: list[TaskView]) -> Chart | None:
    """The whole run's time per phase (sum over tasks), with its share and mean per task."""
    totals = phase_totals(tasks)
    if totals is None:
        return None
    timed = sum(1 for t in tasks if t.phases is not None)
    whole = sum(totals.values()) or 1.0
    rows = [
        (
            name,
            value,
            f"{seconds_text(value)} · {100 * value / whole:.1f}% · {seconds_text(value / timed)} per task",
        )
        for name, value in totals.items()
    ]
    colours = [PHASE_COLOURS[name] for name in PHASES]
    return bar_chart("phase-totals", "Time by phase, whole run", rows, colours)


def trials(tasks: list[TaskView]) -> list[tuple[str, bool]]:
    """``(task key, passed)`` per run that reached a verdict or an error, for pass@k."""
    return [
        (f"{t.config}\x00{t.domain}\x00{t.task_id}", t.passed) for t in tasks if t.outcome in TRIAL_OUTCOMES
    ]


def repeat_summary(tasks: list[TaskView]) -> RepeatSummary | None:
    """pass@k and friends when some task ran more than once, else None."""
    records = trials(tasks)
    if not records:
        return None
    summary = summarize_repeats(records)
    return summary if summary.max_trials > 1 else None


def pass_all_k(summary: RepeatSummary) -> dict[int, float]:
    """pass^k: the chance that ``k`` runs of a task drawn without replacement all passed,
    ``C(c, k) / C(n, k)``, averaged over tasks (how reliably, not how often, tasks pass)."""
    return {
        k: sum(math.comb(t.passed, k) / math.comb(t.trials, k) for t in summary.per_task)
        / len(summary.per_task)
        for k in summary.pass_at
    }


def pass_at_k_plot(summary: RepeatSummary) -> Chart:
    """pass@k (at least one of k runs passed, unbiased estimator) and pass^k (all k passed)
    for k up to the fewest runs of any task."""
    series = [("pass@k", sorted(summary.pass_at.items())), ("pass^k", sorted(pass_all_k(summary).items()))]
    return line_chart("pass-at-k", "pass@k and pass^k", series, "k (runs drawn)", "tasks")


def task_budget_rows(tasks: list[TaskView]) -> list[BudgetRow]:
    """The figures per step budget (``--budgets``) of ``tasks``; empty without budgets."""
    kinds: dict[str, TaskKind] = {"scored": "scored", "broken": "broken", "not_run": "not_run"}
    return budget_rows((kinds[t.budget_kind], t.scores_at) for t in tasks)


def budget_plot(rows: list[BudgetRow]) -> Chart:
    """Success rate at each step budget, with its Wilson interval: the curve of one run cut
    at each budget."""
    rate_rows = [RateRow(row.label, [(row.passed, row.ran)]) for row in rows]
    wilson = wilson_table(c for r in rate_rows for c in r.counts)
    return rate_chart(
        "by-budget", "Success rate by step budget (95% Wilson interval)", rate_rows, ["success rate"], wilson
    )


def index_plots(tasks: list[TaskView], groups: Groups) -> list[Chart]:
    """Every chart of the index page, in display order (charts without data are left out)."""
    charts = [
        rate_plot(
            "by-category", "Success rate by category (95% Wilson interval)", groups.ordered_categories()
        ),
        rate_plot(
            "by-domain",
            "Success rate by domain (95% Wilson interval)",
            [groups.domains[d] for d in sorted(groups.domains)],
        ),
        score_plot(tasks),
        steps_plot(tasks),
    ]
    budgets = task_budget_rows(tasks)
    if budgets:
        charts.insert(2, budget_plot(budgets))
    for extra in (phase_plot(tasks), phase_breakdown_plot(tasks)):
        if extra is not None:
            charts.append(extra)
    summary = repeat_summary(tasks)
    if summary is not None and len(summary.pass_at) > 1:
        charts.append(pass_at_k_plot(summary))
    return charts


def task_plots(task: TaskView) -> list[Chart]:
    """One task's time by phase and, when recorded, each step's time by part."""
    phases = task.phases
    if phases is None:
        return []
    whole = sum(phases.values()) or 1.0
    rows = [
        (name, phases[name], f"{seconds_text(phases[name])} · {100 * phases[name] / whole:.1f}%")
        for name in PHASES
    ]
    charts = [bar_chart("task-phases", "Time by phase", rows, [PHASE_COLOURS[n] for n in PHASES])]
    parts = ("observe", "agent", "actions")
    columns = []
    step_times = task.timings.get("step_times")
    for entry in step_times if isinstance(step_times, list) else []:
        if isinstance(entry, dict):
            values = [max(0.0, number(entry.get(p)) or 0.0) for p in parts]
            columns.append(Column(f"step {entry.get('index', '?')}", [round(v, 3) for v in values]))
    if any(sum(c.values) > 0 for c in columns):
        segments = [(p, PHASE_COLOURS[p]) for p in parts]
        charts.append(column_chart("step-times", "Time per step", columns, segments, "seconds", unit=" s"))
    return charts
