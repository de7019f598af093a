"""What a task's page (``<task folder>/report.html``) shows, gathered from its folder.

:func:`task_context` turns a :class:`~pytest_osworld.report.model.TaskView` into the plain
data ``templates/task.html`` renders: the evaluator's metrics and saved inputs (with links
to the fetched files), each step with the screen the agent saw, the final screen, the run
details and the folder's files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_osworld.report.model import OUTCOMES, TaskView, number
from pytest_osworld.report.plots import task_plots
from pytest_osworld.report.text import dicts, duration, href, json_text


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
        "budgets": _budgets(task),
        "details": _details(result),
        "files": _files(task.folder),
    }


#: How each end of a ``scores_at`` entry reads on the task page.
BUDGET_ENDS = {
    "ended_before": "the episode had ended",
    "cut": "replayed and cut here",
    "diverged": "diverged",
    "error": "replay failed",
}


def _budgets(task: TaskView) -> list[dict[str, Any]]:
    """The task's score at each step budget (``--budgets``), with the replay's parted screen."""
    rows = []
    scores = task.scores_at or {}
    for budget in sorted((k for k in scores if str(k).isdigit()), key=int):
        entry = scores[budget] if isinstance(scores[budget], dict) else {}
        end = str(entry.get("end", ""))
        if end == "cut" and not entry.get("replayed"):
            how = "the run's own" if budget == str(task.max_steps) else "decided by the last action"
        else:
            how = BUDGET_ENDS.get(end, end)
        screen = entry.get("screen")
        at = entry.get("diverged_at")
        rows.append(
            {
                "budget": budget,
                "score": number(entry.get("score")),
                "passed": entry.get("passed"),
                "end": how,
                "css": "o-error" if end in ("diverged", "error") else "",
                "steps": entry.get("steps", ""),
                "diverged_at": at if isinstance(at, int) else None,
                "reason": str(entry.get("reason") or ""),
                "screen": _screenshot(task.folder, screen, "the replay's screen")
                if isinstance(screen, str)
                else None,
                "original": _screenshot(task.folder, f"step_{at}.png", "the run's")
                if isinstance(at, int)
                else None,
            }
        )
    return rows


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


def omniact_details(block: dict[str, Any]) -> list[tuple[str, Any]]:
    """An OmniACT item's rows of its page: which scoring decided, both scorings, the sample."""
    rows: list[tuple[str, Any]] = [("OmniACT: decided by", f"the {block.get('decided_by')} scoring")]
    for name in ("official", "paper"):
        scores = block.get(name)
        if isinstance(scores, dict):
            sequence, action = number(scores.get("sequence_score")), number(scores.get("action_score"))
            rows.append(
                (
                    f"OmniACT: {name} scoring",
                    f"sequence {sequence or 0.0:.4f}, action {action or 0.0:.4f}: {scores.get('reason', '')}",
                )
            )
        elif name == "official":
            rows.append(("OmniACT: official scoring", f"not scored: {block.get('official_problem')}"))
    if block.get("layout") == "release":
        rows.append(("OmniACT: sample", f"key {block.get('key')} of {block.get('split_file')}"))
    rows.append(("OmniACT: prediction", block.get("prediction", "")))
    return rows


def _details(result: dict[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    block = result.get("omniact")
    if isinstance(block, dict):
        rows += omniact_details(block)
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
