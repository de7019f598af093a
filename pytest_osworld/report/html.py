"""A static HTML report of a results directory: opens from disk in any browser, no server.

:func:`write_report` writes ``<results>/index.html`` (success rates overall, per category,
per domain and by feasibility, charts, and a sortable, filterable table with one row per
task) and ``report.html`` in every task folder (the instruction, each step's screenshot
beside its actions, the agent's thought and response, errors, the evaluator's per-metric
outcomes and inputs, time per phase, the recording). Screenshots are linked, not inlined,
so the report stays small.

The pages come from the Jinja2 templates in ``report/templates/`` with autoescaping on:
task ids, instructions, reasons, agent output and file names are shown as text, never as
markup. This module writes the pages and gathers the index's data; :mod:`.task_page` gathers a
task page's, :mod:`.plots` and :mod:`.svg` draw the charts.

It can be called again and again while a run goes on: every page is written to a
temporary file and moved into place, and pages whose content did not change are not
rewritten. A task folder with a ``traj.jsonl`` but no ``result.json`` (a crash mid-task,
an error before scoring, or a task still running) is shown as *incomplete*.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import jinja2

from pytest_osworld.report.model import CATEGORY_ORDER, OUTCOMES, TaskView, count_groups, load_tasks, number
from pytest_osworld.report.omniact_figures import blocks_of, deciding_text, html_rows
from pytest_osworld.report.plots import index_plots, repeat_summary, task_budget_rows
from pytest_osworld.report.stats import RepeatSummary
from pytest_osworld.report.task_page import task_context
from pytest_osworld.report.text import MAX_TEXT, clip, duration, href, pct, score_text

INDEX_NAME = "index.html"
#: The live views of a run in progress (``--live``), by worker; removed when the run ends.
LIVE_NAME = "live.json"
TASK_PAGE_NAME = "report.html"

__all__ = [
    "CATEGORY_ORDER",
    "INDEX_NAME",
    "MAX_TEXT",
    "OUTCOMES",
    "TASK_PAGE_NAME",
    "render",
    "write_if_changed",
    "write_report",
]


def write_report(results_dir: Path, title: str | None = None) -> Path:
    """Write the static report of ``results_dir``; return the path of its ``index.html``.

    Safe to call repeatedly (for example after every task): pages are replaced
    atomically and unchanged pages are left alone.
    """
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    tasks = load_tasks(results_dir)
    index = results_dir / INDEX_NAME
    for task in tasks:
        page = task.folder / TASK_PAGE_NAME
        signature = source_signature(task, index)
        if _rendered.get(page) == signature and page.is_file():
            continue  # nothing it shows changed since this process wrote it
        write_if_changed(page, render("task.html", **task_context(task, index)))
        _rendered[page] = signature
    heading = title or f"OSWorld results: {results_dir.resolve().name}"
    context = index_context(tasks, heading)
    context["live_views"] = live_views(results_dir)
    if context["omniact"] is not None:
        names = sorted(p.name for p in results_dir.glob("omniact_*.json"))
        context["omniact"]["files"] = [(name, href(name)) for name in names]
    write_if_changed(index, render("index.html", **context))
    return index


def live_views(results_dir: Path) -> list[dict[str, str]]:
    """The live views of a run still going (``live.json``: worker and address, no secret)."""
    try:
        data = json.loads((results_dir / LIVE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    return [{"worker": str(k), "address": str(v)} for k, v in sorted(data.items()) if isinstance(v, str)]


#: Each task page this process wrote, with the :func:`source_signature` it was written from.
_rendered: dict[Path, tuple[object, ...]] = {}


def source_signature(task: TaskView, index: Path) -> tuple[object, ...]:
    """What a task page is made from: the name, size and change time of every file in the
    task folder and in its ``eval_inputs/``, of the task file, and where the index is.

    A page whose signature did not change is not rendered again (a run refreshes the
    report every 30 s; most pages are of tasks long finished).
    """
    entries: list[object] = [str(index)]
    try:
        with os.scandir(task.folder) as listing:
            for entry in listing:
                if entry.name != TASK_PAGE_NAME and not entry.name.startswith("."):
                    info = entry.stat()
                    entries.append((entry.name, info.st_size, info.st_mtime_ns))
    except OSError:
        entries.append(None)
    for parent, _, names in os.walk(task.folder / "eval_inputs"):
        for name in names:
            try:
                info = os.stat(os.path.join(parent, name))
            except OSError:
                continue
            entries.append((os.path.join(parent, name), info.st_size, info.st_mtime_ns))
    provenance = task.result.get("provenance") if task.result else None
    task_file = provenance.get("task_file") if isinstance(provenance, dict) else None
    if isinstance(task_file, str) and task_file:
        try:
            info = os.stat(task_file)
            entries.append((task_file, info.st_size, info.st_mtime_ns))
        except OSError:
            entries.append((task_file, None))
    return tuple(sorted(entries, key=repr))


# --------------------------------------------------------------------------- rendering


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment: package templates, autoescape on, strict undefined."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_osworld.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # package templates do not change while a run goes on
    )
    env.filters.update(clip=clip, duration=duration, score=score_text, pct=pct)
    env.globals["outcomes"] = OUTCOMES
    return env


def render(template: str, **context: Any) -> str:
    """Render one of the report's templates."""
    return environment().get_template(template).render(**context)


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, unless the file already holds exactly that."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- index


def run_line(tasks: list[TaskView]) -> str:
    """Agent, model, provider, plugin version(s) and shard(s), from the results' provenance."""
    seen: dict[str, set[str]] = {
        "agent": set(),
        "model": set(),
        "provider": set(),
        "plugin_version": set(),
        "shard": set(),
    }
    for task in tasks:
        provenance = (task.result or {}).get("provenance")
        if isinstance(provenance, dict):
            for key, values in seen.items():
                if provenance.get(key):
                    values.add(str(provenance[key]))
    shown = [
        f"{key.replace('_', ' ')}: {', '.join(sorted(values))}" for key, values in seen.items() if values
    ]
    return " · ".join(shown) if shown else "no finished task yet"


def index_context(tasks: list[TaskView], title: str) -> dict[str, Any]:
    """Everything ``index.html`` shows."""
    groups = count_groups(tasks)
    overall = groups.overall
    context: dict[str, Any] = {
        "page_title": title,
        "title": title,
        "run_line": run_line(tasks),
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "rows": [],
        "omniact": None,
    }
    if not tasks:
        return context
    tokens_in = round(sum(number(t.usage.get("input_tokens")) or 0 for t in tasks))
    tokens_out = round(sum(number(t.usage.get("output_tokens")) or 0 for t in tasks))
    cost = sum(number(t.usage.get("cost_usd")) or 0.0 for t in tasks)
    cards = [
        ("success rate", pct(overall.rate)),
        ("passed / ran", f"{overall.passed} / {overall.ran}"),
        ("mean score", score_text(overall.mean)),
        ("tasks", str(overall.total)),
    ]
    if overall.total and overall.ran != overall.total:
        cards.insert(2, ("rate over all tasks", pct(overall.passed / overall.total)))
    cards += [(OUTCOMES[o], str(overall.counts[o])) for o in OUTCOMES if o != "passed" and overall.counts[o]]
    cards.append(("agent time", duration(sum(t.duration for t in tasks))))
    if tokens_in or tokens_out:
        cards.append(("tokens in / out", f"{tokens_in:,} / {tokens_out:,}"))
    if cost:
        cards.append(("cost", f"${cost:,.2f}"))
    blocks = blocks_of(t.result.get("omniact") for t in tasks if t.result)
    if blocks:
        group = groups.domains.get("omniact")
        context["omniact"] = {
            "rows": html_rows(blocks),
            "decides": deciding_text(blocks),
            "passed": group.passed if group else 0,
            "ran": group.ran if group else 0,
            "rate": group.rate if group else None,
            "files": [],
        }
    repeats = repeat_summary(tasks)
    order = list(OUTCOMES)
    ordered = sorted(tasks, key=lambda t: (t.config, t.domain, t.task_id, t.repeat))
    context.update(
        card_items=cards,
        repeats=repeats,
        repeat_cards=_repeat_cards(repeats) if repeats else [],
        sections=groups.sections(),
        budgets=task_budget_rows(tasks),
        plots=index_plots(tasks, groups),
        show_config=len(groups.configs) > 1,
        shown_outcomes=[o for o in OUTCOMES if overall.counts[o]],
        rows=[
            {
                "task": t,
                "link": href(f"{t.rel}/{TASK_PAGE_NAME}"),
                "outcome_order": order.index(t.outcome),
                "repeat": t.repeat if repeats else 0,
            }
            for t in ordered
        ],
    )
    return context


def _repeat_cards(summary: RepeatSummary) -> list[tuple[str, str]]:
    low, high = summary.pass1_ci
    cards = [
        ("pass@1", pct(summary.pass1)),
        ("pass@1 95% interval", f"{pct(low)} to {pct(high)}"),
        ("runs passed", f"{summary.successes} / {summary.trials}"),
    ]
    cards += [(f"pass@{k}", pct(v)) for k, v in sorted(summary.pass_at.items()) if k > 1]
    cards += [("passed at least once", pct(summary.pass_any)), ("passed every time", pct(summary.pass_all))]
    return cards
