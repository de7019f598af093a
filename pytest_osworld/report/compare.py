"""A page comparing two results folders (two agents, or two runs of one): what changed.

:func:`write_comparison` matches tasks by ``(domain, task_id)`` (repeated runs of a task
count together) and shows, per task, the outcome and score on each side and the change
(fail → pass, pass → fail, score up or down, unchanged, only on one side), and per
category and per domain the two success rates with their Wilson intervals and the
difference in points. It reads the folders and writes one HTML file; it changes nothing
in either folder. Run it from the command line as
``python -m pytest_osworld.report compare A B --out compare.html``.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_osworld.report.html import TASK_PAGE_NAME, render, write_if_changed
from pytest_osworld.report.model import Group, Groups, TaskView, count_groups, load_tasks
from pytest_osworld.report.plots import wilson_table
from pytest_osworld.report.svg import Chart, RateRow, rate_chart
from pytest_osworld.report.text import href, pct, score_text

#: The name written when ``out`` is a folder.
COMPARISON_NAME = "compare.html"
#: Kinds of change, in the order the table lists them, with their labels.
CHANGES: dict[str, str] = {
    "fixed": "fail → pass",
    "broken": "pass → fail",
    "score_up": "score up",
    "score_down": "score down",
    "only_a": "only in A",
    "only_b": "only in B",
    "same": "unchanged",
}
#: Scores closer than this are the same score.
SCORE_EPSILON = 1e-9


class ComparisonError(ValueError):
    """A folder to compare is missing or holds no task results."""


@dataclass
class Side:
    """One task's runs in one results folder."""

    group: Group
    tasks: list[TaskView]
    link: str

    @property
    def text(self) -> str:
        """The outcome of a single run, or ``passed/ran`` of repeated runs."""
        if len(self.tasks) == 1:
            return self.tasks[0].outcome.replace("_", " ")
        return f"{self.group.passed}/{self.group.ran} passed"


def change_kind(a: Side | None, b: Side | None) -> str:
    """How task results moved from ``a`` to ``b`` (a key of :data:`CHANGES`)."""
    if a is None or b is None:
        return "only_b" if a is None else "only_a"
    rate_a, rate_b = a.group.rate or 0.0, b.group.rate or 0.0
    if rate_b > rate_a:
        return "fixed"
    if rate_b < rate_a:
        return "broken"
    mean_a, mean_b = a.group.mean or 0.0, b.group.mean or 0.0
    if mean_b > mean_a + SCORE_EPSILON:
        return "score_up"
    if mean_b < mean_a - SCORE_EPSILON:
        return "score_down"
    return "same"


def _link(task: TaskView, out_dir: Path) -> str:
    """A relative link from the comparison page to the task's page (or its result file)."""
    for name in (TASK_PAGE_NAME, "result.json", "traj.jsonl"):
        target = task.folder / name
        if target.is_file():
            return href(Path(os.path.relpath(target.resolve(), out_dir.resolve())).as_posix())
    return ""


def _sides(tasks: list[TaskView], out_dir: Path) -> dict[tuple[str, str], Side]:
    by_key: dict[tuple[str, str], list[TaskView]] = {}
    for task in tasks:
        by_key.setdefault((task.domain, task.task_id), []).append(task)
    sides = {}
    for key, runs in by_key.items():
        runs.sort(key=lambda t: (t.config, t.repeat))
        group = Group(key[1])
        for run in runs:
            group.add(run)
        sides[key] = Side(group, runs, _link(runs[0], out_dir))
    return sides


def _delta(a: Group | None, b: Group | None) -> tuple[str, str]:
    """The difference in points of two rates, and its CSS class."""
    if a is None or b is None or a.rate is None or b.rate is None:
        return "-", ""
    points = 100 * (b.rate - a.rate)
    css = "delta-up" if points > 0 else "delta-down" if points < 0 else ""
    return f"{points:+.1f} pts", css


def _rate_rows(
    groups_a: dict[str, Group], groups_b: dict[str, Group], names: list[str]
) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        a, b = groups_a.get(name), groups_b.get(name)
        delta, css = _delta(a, b)
        rows.append(
            {
                "name": name,
                "a": f"{pct(a.rate)} ({a.passed}/{a.ran})" if a else "-",
                "b": f"{pct(b.rate)} ({b.passed}/{b.ran})" if b else "-",
                "delta": delta,
                "css": css,
            }
        )
    return rows


def _paired_chart(
    key: str, title: str, a: dict[str, Group], b: dict[str, Group], names: list[str], labels: list[str]
) -> Chart:
    rows = [
        RateRow(name, [(g.passed, g.ran) if g else (0, 0) for g in (a.get(name), b.get(name))])
        for name in names
    ]
    return rate_chart(key, title, rows, labels, wilson_table(c for r in rows for c in r.counts))


def comparison_context(a_dir: Path, b_dir: Path, out_dir: Path, labels: tuple[str, str]) -> dict[str, Any]:
    """Everything ``compare.html`` shows."""
    tasks_a, tasks_b = load_tasks(a_dir), load_tasks(b_dir)
    for folder, tasks in ((a_dir, tasks_a), (b_dir, tasks_b)):
        if not tasks:
            raise ComparisonError(
                f"{folder} holds no task results: expected <action_space>/<observation_type>/<model>/"
                "<domain>/<task_id>/result.json below it; give the --results-dir of a run"
            )
    sides_a, sides_b = _sides(tasks_a, out_dir), _sides(tasks_b, out_dir)
    rows: list[dict[str, Any]] = []
    for key in sorted(set(sides_a) | set(sides_b)):
        a, b = sides_a.get(key), sides_b.get(key)
        kind = change_kind(a, b)
        score_delta = (b.group.mean or 0.0) - (a.group.mean or 0.0) if a and b else None
        rows.append({"domain": key[0], "task_id": key[1], "a": a, "b": b, "kind": kind, "delta": score_delta})
    order = list(CHANGES)
    rows.sort(key=lambda r: (order.index(r["kind"]), r["domain"], r["task_id"]))
    counts = {kind: sum(1 for r in rows if r["kind"] == kind) for kind in CHANGES}
    groups_a, groups_b = count_groups(tasks_a), count_groups(tasks_b)
    categories = [g.name for g in _categories(groups_a, groups_b)]
    domains = sorted(set(groups_a.domains) | set(groups_b.domains))
    overall_delta, overall_css = _delta(groups_a.overall, groups_b.overall)
    cards = [
        (
            f"A: {labels[0]}",
            f"{pct(groups_a.overall.rate)} ({groups_a.overall.passed}/{groups_a.overall.ran})",
        ),
        (
            f"B: {labels[1]}",
            f"{pct(groups_b.overall.rate)} ({groups_b.overall.passed}/{groups_b.overall.ran})",
        ),
        ("B \u2212 A", overall_delta),
        ("mean score A → B", f"{score_text(groups_a.overall.mean)} → {score_text(groups_b.overall.mean)}"),
    ]
    cards += [(CHANGES[k], str(counts[k])) for k in CHANGES if k != "same" or counts[k]]
    return {
        "page_title": f"Comparison: {labels[0]} vs {labels[1]}",
        "labels": labels,
        "folders": (str(a_dir.resolve()), str(b_dir.resolve())),
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "card_items": cards,
        "overall_css": overall_css,
        "changes": CHANGES,
        "rows": rows,
        "category_rows": _rate_rows(groups_a.categories, groups_b.categories, categories),
        "domain_rows": _rate_rows(groups_a.domains, groups_b.domains, domains),
        "plots": [
            _paired_chart(
                "cmp-category",
                "Success rate by category, A and B (95% Wilson interval)",
                groups_a.categories,
                groups_b.categories,
                categories,
                list(labels),
            ),
            _paired_chart(
                "cmp-domain",
                "Success rate by domain, A and B (95% Wilson interval)",
                groups_a.domains,
                groups_b.domains,
                domains,
                list(labels),
            ),
        ],
    }


def _categories(a: Groups, b: Groups) -> list[Group]:
    seen = {g.name: g for g in a.ordered_categories() + b.ordered_categories()}
    ordered = [g.name for g in a.ordered_categories()] + [g.name for g in b.ordered_categories()]
    return [seen[name] for name in sorted(set(ordered), key=ordered.index)]


def default_labels(a: Path, b: Path) -> tuple[str, str]:
    """The two folders' names, or their paths when the names are the same."""
    name_a, name_b = a.resolve().name, b.resolve().name
    return (name_a, name_b) if name_a != name_b else (str(a), str(b))


def write_comparison(a: Path, b: Path, out: Path, labels: tuple[str, str] | None = None) -> Path:
    """Write the page comparing results folder ``a`` with ``b``; return its path.

    ``out`` is the HTML file to write, or a folder to write :data:`COMPARISON_NAME` into.
    ``labels`` names the two sides (default: the folders' names). Raises
    :class:`ComparisonError` when a folder is missing or holds no task results.
    """
    a, b, out = Path(a), Path(b), Path(out)
    for folder in (a, b):
        if not folder.is_dir():
            raise ComparisonError(
                f"{folder} is not a results folder (it does not exist or is a file); "
                "give the --results-dir of a run"
            )
    page = out / COMPARISON_NAME if out.is_dir() or not out.suffix else out
    page.parent.mkdir(parents=True, exist_ok=True)
    context = comparison_context(a, b, page.parent, labels or default_labels(a, b))
    write_if_changed(page, render("compare.html", **context))
    return page
