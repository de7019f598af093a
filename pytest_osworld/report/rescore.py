"""Re-run only the metrics of finished tasks on their saved evaluator inputs.

For every ``result.json`` under a results directory, the metrics are run again (with
:func:`~pytest_osworld.evaluators.evaluate.score_metric`) on the getter values the run
saved in ``evaluator_inputs`` (files under the task folder's ``eval_inputs/``), combined
with the task's ``conj``, and the outcome is written to ``result.rescored.json`` beside
the original, which is never touched. Nothing runs in a desktop: getters and postconfig
are not repeated. Typical use: a metric was fixed, and old runs should be scored again.

Tasks whose score did not come from metrics keep it: infeasible tasks (decided by the
agent's last action), a FAIL on a feasible task, and tasks that errored before scoring.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_osworld import __version__
from pytest_osworld.episode.loop import EndReason
from pytest_osworld.errors import OSWorldError
from pytest_osworld.evaluators.combine import MetricOutcome, combine
from pytest_osworld.evaluators.evaluate import Evaluation, score_metric
from pytest_osworld.report.resume import task_folders

RESCORED_NAME = "result.rescored.json"

#: ``rescored``: the metrics ran again; ``kept``: the score did not come from metrics and
#: stands; ``missing_inputs``: some input the metrics need was not saved or is gone, the
#: old score stands; ``error``: the metrics cannot run (an unknown metric, or how they
#: combine is unknown), the old score stands; ``unreadable``: result.json cannot be read.
RescoreStatus = Literal["rescored", "kept", "missing_inputs", "error", "unreadable"]


class MissingInputError(OSWorldError):
    """A saved evaluator input cannot be used: never saved, or its file is gone."""


@dataclass(frozen=True)
class RescoredTask:
    """One task, scored again: old and new score, and why it is what it is."""

    folder: Path
    task_id: str
    domain: str
    status: RescoreStatus
    old_score: float | None
    #: None unless ``status`` is ``rescored`` or ``kept``.
    new_score: float | None
    old_outcome: str
    new_outcome: str
    #: Why the task was kept, what input is missing, or notes such as a changed task file.
    reason: str = ""
    #: True if the task file's sha256 differs from the one recorded; None if it is gone.
    task_file_changed: bool | None = None
    metrics: list[MetricOutcome] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether rescoring changed the score or the outcome."""
        return self.status == "rescored" and (
            self.new_score != self.old_score or self.new_outcome != self.old_outcome
        )


def rescore(results_dir: Path) -> list[RescoredTask]:
    """Rescore every task under ``results_dir`` that has a ``result.json``; see the module doc.

    Writes ``result.rescored.json`` beside each readable ``result.json`` (the original
    with new ``score``, ``outcome``, ``reason`` and ``metrics`` when rescored, plus a
    ``rescore`` block saying what was done) and returns one :class:`RescoredTask` per task.
    """
    rescored: list[RescoredTask] = []
    for folder in task_folders(results_dir):
        if (folder / "result.json").is_file():
            rescored.append(rescore_task(folder))
    return rescored


def rescore_task(folder: Path) -> RescoredTask:
    """Rescore the task whose ``result.json`` is in ``folder`` and write ``result.rescored.json``."""
    try:
        data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return RescoredTask(
            folder, folder.name, folder.parent.name, "unreadable", None, None, "", "",
            f"cannot read result.json: {exc}",
        )  # fmt: skip
    task = _rescore_data(folder, data)
    _write_rescored(folder, data, task)
    return task


def _rescore_data(folder: Path, data: dict[str, Any]) -> RescoredTask:
    task_id, domain = str(data.get("task_id", folder.name)), str(data.get("domain", folder.parent.name))
    old_score = _as_float(data.get("score"))
    old_outcome = str(data.get("outcome", ""))
    raw_provenance = data.get("provenance")
    provenance: dict[str, Any] = raw_provenance if isinstance(raw_provenance, dict) else {}
    task_file_data, file_changed, notes = _task_file(provenance)

    def make(
        status: RescoreStatus,
        reason: str,
        new: float | None = None,
        outcome: str = "",
        metrics: list[MetricOutcome] | None = None,
    ) -> RescoredTask:
        full = "; ".join(part for part in [reason, *notes] if part)
        return RescoredTask(
            folder, task_id, domain, status, old_score, new, old_outcome, outcome or old_outcome,
            full, file_changed, metrics or [],
        )  # fmt: skip

    if old_score is None or old_outcome not in ("passed", "failed", "eval_error"):
        return make("kept", f"outcome {old_outcome or 'unknown'}: no score to recompute", None)
    if data.get("infeasible"):
        return make("kept", "infeasible task: scored by the agent's last action, no metrics", old_score)
    if data.get("end_reason") == EndReason.FAIL.value:
        return make("kept", "the agent said FAIL on a feasible task: no metrics ran", old_score)
    metrics = [m for m in data.get("metrics", []) if isinstance(m, dict)]
    inputs = [i for i in data.get("evaluator_inputs", []) if isinstance(i, dict)]
    if not metrics:
        why = str(data.get("reason") or "no metric ran")
        return make("missing_inputs", f"no metric outcomes were saved ({why})")
    funcs = [str(m.get("func", "")) for m in metrics]
    conj, conj_note = _conj(task_file_data, funcs, metrics, old_score)
    if conj is None:
        return make("error", conj_note)
    specs = _task_metric_specs(task_file_data, funcs)
    missing: list[str] = []

    def run_metric(index: int) -> MetricOutcome:
        func = funcs[index]
        descs = str(metrics[index].get("result", "")), str(metrics[index].get("expected", ""))
        try:
            saved = _saved_input(inputs, index, func, metrics[index])
            if "result" not in saved:
                # The getter failed during the run: that stays an error.
                reason = str(metrics[index].get("reason") or "the getter failed during the run")
                return MetricOutcome(func, "error", 0.0, reason, *descs)
            result = _restore(saved.get("result"), folder)
            expected = _restore(saved.get("expected"), folder)
        except MissingInputError as exc:
            missing.append(str(exc))
            return MetricOutcome(func, "error", 0.0, str(exc), *descs)
        options = saved.get("options")
        options = dict(options) if isinstance(options, dict) else dict(specs[index][1]) if specs else {}
        has_expected = specs[index][0] if specs else bool(descs[1]) or saved.get("expected") is not None
        return score_metric(func, result, expected, options, has_expected=has_expected, descs=descs)

    try:
        score, outcomes = combine(conj, funcs, run_metric)
    except OSWorldError as exc:  # an unknown metric name, for instance
        return make("error", f"cannot run the metrics: {exc}")
    if missing:
        return make("missing_inputs", f"cannot rescore: {missing[0]}", metrics=outcomes)
    errors = [o.reason for o in outcomes if o.status == "error"]
    evaluation = Evaluation(score, outcomes, error=errors[0] if errors and score < 1.0 else None)
    threshold = _as_float(data.get("threshold"))
    passed = score >= (threshold if threshold is not None else 1.0)
    outcome = "passed" if passed else ("eval_error" if evaluation.error else "failed")
    return make("rescored", conj_note, score, outcome, metrics=outcomes)


def _as_float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _task_file(provenance: dict[str, Any]) -> tuple[dict[str, Any] | None, bool | None, list[str]]:
    """The task file's JSON (if it still exists), whether it changed, and notes to report."""
    name = provenance.get("task_file")
    if not isinstance(name, str) or not name:
        return None, None, ["no task file recorded"]
    path = Path(name)
    try:
        blob = path.read_bytes()
    except OSError:
        return None, None, [f"task file {name} is gone"]
    changed = hashlib.sha256(blob).hexdigest() != provenance.get("task_sha256")
    notes = [f"task file {name} changed since the run (sha256 differs)"] if changed else []
    try:
        parsed = json.loads(blob)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, changed, [*notes, f"task file {name} is not valid JSON"]
    return (parsed if isinstance(parsed, dict) else None), changed, notes


def _conj(
    task: dict[str, Any] | None, funcs: list[str], metrics: list[dict[str, Any]], old_score: float
) -> tuple[Literal["and", "or"] | None, str]:
    """How the metrics combine: from the task file, else inferred from the saved outcomes."""
    evaluator = task.get("evaluator") if task else None
    if isinstance(evaluator, dict):
        conj = evaluator.get("conj", "and")
        if conj in ("and", "or"):
            return conj, ""
    if len(funcs) == 1:
        return "and", ""
    for metric in metrics:
        reason = str(metric.get("reason", ""))
        if metric.get("status") == "not_evaluated" and "'or' decided" in reason:
            return "or", "conj 'or' inferred from the saved outcomes"
        if metric.get("status") == "not_evaluated" and "'and' decided" in reason:
            return "and", "conj 'and' inferred from the saved outcomes"
    values = [_as_float(m.get("value")) or 0.0 for m in metrics]
    mean, top = sum(values) / len(values), max(values)
    if abs(mean - old_score) < 1e-9 and abs(top - old_score) > 1e-9:
        return "and", "conj 'and' inferred from the saved score"
    if abs(top - old_score) < 1e-9 and abs(mean - old_score) > 1e-9:
        return "or", "conj 'or' inferred from the saved score"
    return None, "cannot tell how the metrics combine: the task file is gone and the saved score fits both"


def _task_metric_specs(task: dict[str, Any] | None, funcs: list[str]) -> list[tuple[bool, dict[str, Any]]]:
    """``(has_expected, options)`` per metric from the task file, if its funcs match the saved ones."""
    evaluator = task.get("evaluator") if task else None
    if not isinstance(evaluator, dict):
        return []
    func = evaluator.get("func")
    names = func if isinstance(func, list) else [func]
    if names != funcs:
        return []

    def pick(key: str, index: int) -> Any:
        value = evaluator.get(key)
        return value[index] if isinstance(value, list) and len(names) > 1 else value

    specs = []
    for index in range(len(names)):
        options = pick("options", index)
        specs.append((pick("expected", index) is not None, options if isinstance(options, dict) else {}))
    return specs


def _saved_input(
    inputs: list[dict[str, Any]], index: int, func: str, metric: dict[str, Any]
) -> dict[str, Any]:
    if index >= len(inputs):
        status = metric.get("status")
        why = "it was not evaluated in the run" if status == "not_evaluated" else "they were not saved"
        raise MissingInputError(f"no saved inputs for metric {index + 1} ({func}): {why}")
    saved = inputs[index]
    if saved.get("func") != func:
        raise MissingInputError(
            f"saved inputs for metric {index + 1} are for {saved.get('func')!r}, not {func!r}"
        )
    return saved


def _restore(value: Any, folder: Path) -> Any:
    """A saved getter value with ``{"file": name}`` turned back into a path under ``eval_inputs/``."""
    if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
        base = (folder / "eval_inputs").resolve()
        path = (base / value["file"]).resolve()
        if not path.is_relative_to(base) and not Path(value["file"]).is_absolute():
            raise MissingInputError(f"saved input {value['file']!r} points outside eval_inputs/")
        if not path.exists():
            shown = value["file"] if Path(value["file"]).is_absolute() else f"eval_inputs/{value['file']}"
            raise MissingInputError(f"saved input file {shown} is missing")
        return str(path)
    if isinstance(value, list):
        return [_restore(v, folder) for v in value]
    if isinstance(value, dict):
        return {k: _restore(v, folder) for k, v in value.items()}
    return value


def rescored_budgets(folder: Path, data: dict[str, Any], task: RescoredTask) -> dict[str, Any] | None:
    """``scores_at`` rescored (None when the result has none): a replayed budget's metrics run
    again on the inputs its replay saved; a budget whose score is the run's own (the episode
    ended before it, or it is ``max_steps``) takes the task's new score. Each rescored entry
    says what was done in its ``rescore`` status."""
    scores_at = data.get("scores_at")
    if not isinstance(scores_at, dict):
        return None
    own_budget = str(data.get("max_steps", ""))
    threshold = _as_float(data.get("threshold"))
    out: dict[str, Any] = {}
    for budget, entry in scores_at.items():
        if not isinstance(entry, dict):
            out[budget] = entry
            continue
        entry = dict(entry)
        own = budget == own_budget or entry.get("end") == "ended_before"
        if own and task.status == "rescored" and task.new_score is not None:
            entry.update(score=task.new_score, outcome=task.new_outcome, passed=task.new_outcome == "passed")
            entry["rescore"] = "rescored"
        elif not own and entry.get("end") == "cut" and entry.get("replayed") and entry.get("metrics"):
            again = _rescore_data(folder, {**data, **entry, "end_reason": None, "threshold": threshold})
            if again.status == "rescored" and again.new_score is not None:
                evaluation = Evaluation(again.new_score, again.metrics)
                entry.update(
                    score=again.new_score,
                    outcome=again.new_outcome,
                    passed=again.new_outcome == "passed",
                    reason=evaluation.first_reason(),
                    metrics=[o.to_json() for o in again.metrics],
                )
            entry["rescore"] = again.status
        out[budget] = entry
    return out


def _write_rescored(folder: Path, data: dict[str, Any], task: RescoredTask) -> None:
    out = dict(data)
    if task.status == "rescored":
        evaluation = Evaluation(task.new_score or 0.0, task.metrics)
        errors = [o.reason for o in task.metrics if o.status == "error"]
        evaluation.error = errors[0] if errors and (task.new_score or 0.0) < 1.0 else None
        out.update(
            score=task.new_score,
            outcome=task.new_outcome,
            reason=evaluation.first_reason(),
            metrics=[o.to_json() for o in task.metrics],
        )
    scores_at = rescored_budgets(folder, data, task)
    if scores_at is not None:
        out["scores_at"] = scores_at
    out["rescore"] = {
        "status": task.status,
        "reason": task.reason,
        "old_score": task.old_score,
        "old_outcome": task.old_outcome,
        "task_file_changed": task.task_file_changed,
        "plugin_version": __version__,
        "rescored_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    handle, tmp = tempfile.mkstemp(dir=folder, prefix=".result.rescored.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(out, stream, indent=2, default=str)
        os.replace(tmp, folder / RESCORED_NAME)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
