"""A static HTML report of a results directory: opens from disk in any browser, no server.

:func:`write_report` writes ``<results>/index.html`` (success rates overall, per category,
per domain and by feasibility, charts, and a sortable, filterable table with one row per
task) and ``report.html`` in every task folder (the instruction, each step's screenshot
beside its actions, the agent's thought and response, errors, the evaluator's per-metric
outcomes and inputs, time per phase, the recording). Screenshots are linked, not inlined,
so the report stays small.

The pages come from the Jinja2 templates in ``report/templates/`` with autoescaping on:
task ids, instructions, reasons, agent output and file names are shown as text, never as
markup. This module gathers the data; :mod:`.plots` and :mod:`.svg` draw the charts.

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
from urllib.parse import quote

import jinja2

from pytest_osworld.report.model import (
    CATEGORY_ORDER,
    OUTCOMES,
    TaskView,
    count_groups,
    load_tasks,
    number,
)
from pytest_osworld.report.plots import index_plots, repeat_summary, task_plots
from pytest_osworld.report.stats import RepeatSummary

INDEX_NAME = "index.html"
TASK_PAGE_NAME = "report.html"
#: Longest text shown of one response, thought or value (the rest is cut, with a note).
MAX_TEXT = 20_000

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
    write_if_changed(index, render("index.html", **index_context(tasks, heading)))
    return index


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


def href(relative: str) -> str:
    """A relative link to a file, each path part percent-encoded (the template escapes the rest)."""
    return "/".join(quote(part) for part in relative.split("/"))


def clip(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how much was left out."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def duration(seconds: float) -> str:
    """Seconds as ``12.5s``, ``3m04s`` or ``1h02m``; ``-`` for none."""
    if seconds <= 0:
        return "-"
    minutes, secs = divmod(round(seconds), 60)
    if minutes >= 60:
        hours, minutes = divmod(minutes, 60)
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


def score_text(value: float | None) -> str:
    """A score with two decimals, ``-`` for none."""
    return "-" if value is None else f"{value:.2f}"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal, ``-`` for none."""
    return "-" if value is None else f"{100 * value:.1f}%"


def dicts(value: Any) -> list[dict[str, Any]]:
    """The objects of a list read from JSON (anything else in it, or a non-list, is left out)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def json_text(value: Any) -> str:
    """A value as readable text: strings as they are, the rest as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


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
    """Agent, model, provider and plugin version(s), from the results' provenance."""
    seen: dict[str, set[str]] = {"agent": set(), "model": set(), "provider": set(), "plugin_version": set()}
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
    repeats = repeat_summary(tasks)
    order = list(OUTCOMES)
    ordered = sorted(tasks, key=lambda t: (t.config, t.domain, t.task_id, t.repeat))
    context.update(
        card_items=cards,
        repeats=repeats,
        repeat_cards=_repeat_cards(repeats) if repeats else [],
        sections=groups.sections(),
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


# --------------------------------------------------------------------------- task page


def task_context(task: TaskView, index: Path) -> dict[str, Any]:
    """Everything a task's ``report.html`` shows."""
    result = task.result or {}
    rescore = None
    if task.rescored and isinstance(task.rescored.get("rescore"), dict):
        info = task.rescored["rescore"]
        rescore = {
            "status": info.get("status"),
            "score": number(task.rescored.get("score")),
            "outcome": task.rescored.get("outcome"),
            "reason": info.get("reason"),
        }
    steps, final, first = _steps(task)
    return {
        "page_title": f"{task.domain}/{task.task_id} — {OUTCOMES.get(task.outcome, task.outcome)}",
        "task": task,
        "back": href(Path(os.path.relpath(index, task.folder)).as_posix()),
        "rescore": rescore,
        "threshold": number(result.get("threshold")),
        "reason": str(result.get("reason") or "") if task.result is not None else "",
        "metrics": [_metric(m) for m in dicts(result.get("metrics"))],
        "inputs": [_inputs(task.folder, i) for i in dicts(result.get("evaluator_inputs"))],
        "plots": task_plots(task),
        "recording": (task.folder / "recording.mp4").is_file(),
        "steps": steps,
        "final": final,
        "first": first,
        "details": _details(result),
        "files": _files(task.folder),
    }


def _metric(metric: dict[str, Any]) -> dict[str, Any]:
    status = str(metric.get("status", ""))
    value = number(metric.get("value"))
    css = "o-skipped" if value is None else "o-passed" if value >= 1.0 else "o-failed"
    return {
        "func": metric.get("func", ""),
        "status": status.replace("_", " "),
        "css": "o-eval_error" if status == "error" else css,
        "value": value,
        "result": metric.get("result", ""),
        "expected": metric.get("expected", ""),
        "reason": str(metric.get("reason", "")),
    }


def _inputs(folder: Path, item: dict[str, Any]) -> dict[str, Any]:
    """One evaluator's saved inputs: options and, per side, values or links to files."""
    sides = [(key, _values(folder, item[key]) if key in item else None) for key in ("result", "expected")]
    return {
        "func": item.get("func", ""),
        "options": json_text(item["options"]) if item.get("options") else "",
        "sides": sides,
    }


def _values(folder: Path, value: Any) -> list[dict[str, Any]]:
    """A saved getter value: links for files under ``eval_inputs/``, else the value itself."""
    if isinstance(value, list) and value and all(isinstance(v, dict) and set(v) == {"file"} for v in value):
        return [entry for v in value for entry in _values(folder, v)]
    if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
        name = value["file"]
        base = (folder / "eval_inputs").resolve()
        path = (base / name).resolve()
        if path.is_relative_to(base) and path.is_file():
            link = href("eval_inputs/" + Path(name).as_posix())
            return [{"kind": "file", "name": name, "link": link, "size": path.stat().st_size}]
        return [{"kind": "missing", "name": name}]
    return [{"kind": "value", "text": json_text(value)}]


def _screenshot(folder: Path, name: str | None, caption: str) -> dict[str, str]:
    if name and "/" not in name and (folder / name).is_file():
        return {"link": href(name), "name": name, "caption": caption}
    return {"link": "", "name": "", "caption": caption}


def _steps(task: TaskView) -> tuple[list[dict[str, Any]], dict[str, str] | None, dict[str, str] | None]:
    """Each step with the screen before it; the final screen; or the first screen alone."""
    out = []
    previous: str | None = "step_0.png"
    for step in task.steps:
        step_number = step.get("step_num", "?")
        meta = []
        if number(step.get("duration_s")) is not None:
            meta.append(duration(float(step["duration_s"])))
        usage = step.get("usage")
        if isinstance(usage, dict) and (usage.get("input_tokens") or usage.get("output_tokens")):
            tokens_in, tokens_out = (
                round(number(usage.get(k)) or 0) for k in ("input_tokens", "output_tokens")
            )
            meta.append(f"{tokens_in:,} in / {tokens_out:,} out tokens")
        if step.get("action_timestamp"):
            meta.append(str(step["action_timestamp"]))
        actions = step.get("actions")
        errors = step.get("action_errors")
        out.append(
            {
                "number": step_number,
                "anchor": f"step-{step_number}" if isinstance(step_number, int) else "",
                "meta": " · ".join(meta),
                "thought": str(step.get("thought") or ""),
                "actions": [json_text(a) for a in actions] if isinstance(actions, list) else [],
                "parse_error": str(step.get("parse_error") or ""),
                "action_errors": [str(e) for e in errors] if isinstance(errors, list) else [],
                "response": str(step.get("response") or ""),
                "shot": _screenshot(task.folder, previous, "the screen the agent saw"),
            }
        )
        after = step.get("screenshot_file")
        previous = str(after) if isinstance(after, str) else None
    if task.steps:
        final = _screenshot(task.folder, previous, "the screen after the last step")
        final["note"] = f"end: {task.end_reason}" if task.end_reason else "no result yet"
        return out, final, None
    if (task.folder / "step_0.png").is_file():
        return out, None, _screenshot(task.folder, "step_0.png", "the screen before the first step")
    return out, None, None


def _details(result: dict[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    provenance = result.get("provenance")
    if isinstance(provenance, dict):
        rows += [(str(k), v) for k, v in provenance.items()]
    usage = result.get("usage")
    if isinstance(usage, dict):
        rows += [(f"usage: {k}", v) for k, v in usage.items()]
    timings = result.get("timings")
    if isinstance(timings, dict) and number(timings.get("fixed_overhead")) is not None:
        rows.append(
            ("fixed overhead", f"{float(timings['fixed_overhead']):.2f} s (total - agent - setup sleeps)")
        )
    if result.get("nodeid"):
        rows.append(("pytest node id", result["nodeid"]))
    return rows


def _files(folder: Path) -> list[tuple[str, str]]:
    names = ("traj.jsonl", "result.json", "result.txt", "result.rescored.json")
    files = [(name, href(name)) for name in names if (folder / name).is_file()]
    if (folder / "eval_inputs").is_dir():
        files.append(("eval_inputs/", "eval_inputs/"))
    return files
